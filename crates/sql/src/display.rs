//! Prints the AST back as canonical T-SQL.
//!
//! The output parses to the same tree (spans aside), which the tests check for every script.
//! It is canonical rather than faithful: keywords are upper case, every binary operation and
//! predicate is parenthesised (so precedence is visible), optional keywords are spelled out
//! (`INSERT INTO`, `AS` before aliases, `TRANSACTION`, `EXECUTE`), identifiers are bracketed
//! only when they must be, and statements end with `;`.

mod alter;
mod bulk;
mod cursor;

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;
use crate::keywords::is_reserved;
use crate::parser::{FUNCTION_KEYWORDS, NILADIC_FUNCTIONS};

type Result = fmt::Result;

/// Items joined by a separator.
struct Separated<'a, T>(&'a [T], &'static str);

impl<T: Display> Display for Separated<'_, T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(self.1)?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

fn commas<T>(items: &[T]) -> Separated<'_, T> {
    Separated(items, ", ")
}

/// Statements, each followed by `"; "`.
struct StatementList<'a>(&'a [Statement]);

impl Display for StatementList<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        self.0.iter().try_for_each(|statement| write!(f, "{statement}; "))
    }
}

/// `(a, b)` when the list is not empty.
struct ColumnList<'a>(&'a [Ident]);

impl Display for ColumnList<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, " ({})", commas(self.0))
        }
    }
}

/// ` WITH (IGNORE_DUP_KEY = ON)` when it is on.
struct IgnoreDupKey(bool);

impl Display for IgnoreDupKey {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0 {
            f.write_str(" WITH (IGNORE_DUP_KEY = ON)")
        } else {
            Ok(())
        }
    }
}

/// ` AS alias` when there is one.
struct Alias<'a>(Option<&'a Ident>);

impl Display for Alias<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self.0 {
            Some(alias) => write!(f, " AS {alias}"),
            None => Ok(()),
        }
    }
}

impl Display for Batch {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        self.statements.iter().try_for_each(|statement| writeln!(f, "{statement};"))
    }
}

impl Display for Ident {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if is_regular_identifier(&self.value) {
            return f.write_str(&self.value);
        }
        write!(f, "[{}]", self.value.replace(']', "]]"))
    }
}

/// Whether a name can be written without brackets: it lexes as one word, is not reserved, and
/// is not `THROW` (which the parser reads as a statement where an optional name may end).
fn is_regular_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '#');
    starts_well
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$'))
        && !is_reserved(name)
        && !name.eq_ignore_ascii_case("THROW")
}

impl Display for ObjectName {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let prefixes = [&self.server, &self.database, &self.schema];
        let first = prefixes.iter().position(|prefix| prefix.is_some());
        for prefix in &prefixes[first.unwrap_or(prefixes.len())..] {
            if let Some(prefix) = prefix {
                write!(f, "{prefix}")?;
            }
            f.write_char('.')?;
        }
        write!(f, "{}", self.name)
    }
}

impl Display for DataType {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", self.name)?;
        if self.params.is_empty() {
            Ok(())
        } else {
            write!(f, "({})", commas(&self.params))
        }
    }
}

impl Display for TypeParam {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TypeParam::Number(n) => write!(f, "{n}"),
            TypeParam::Max => f.write_str("MAX"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", self.kind)
    }
}

impl Display for StatementKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        use StatementKind::*;
        match self {
            Select(select) => write!(f, "{}{}", select.query, OptionClause(&select.hints)),
            Insert(insert) => write!(f, "{insert}"),
            InsertBulk(insert) => write!(f, "{insert}"),
            BulkInsert(insert) => write!(f, "{insert}"),
            Update(update) => write!(f, "{update}"),
            Delete(delete) => write!(f, "{delete}"),
            Merge(merge) => write!(f, "{merge}"),
            Declare(declarations) => write!(f, "DECLARE {}", commas(declarations)),
            Cursor(statement) => write!(f, "{statement}"),
            Set(set) => write!(f, "{set}"),
            If(statement) => {
                write!(f, "IF {} {}", statement.condition, statement.then_branch)?;
                match &statement.else_branch {
                    Some(otherwise) => write!(f, " ELSE {otherwise}"),
                    None => Ok(()),
                }
            }
            While(statement) => write!(f, "WHILE {} {}", statement.condition, statement.body),
            Block(statements) => write!(f, "BEGIN {}END", StatementList(statements)),
            TryCatch(block) => write!(
                f,
                "BEGIN TRY {}END TRY BEGIN CATCH {}END CATCH",
                StatementList(&block.try_block),
                StatementList(&block.catch_block)
            ),
            Atomic(block) => write!(f, "{block}"),
            Break => f.write_str("BREAK"),
            Label(label) => write!(f, "{label}:"),
            Goto(label) => write!(f, "GOTO {label}"),
            Continue => f.write_str("CONTINUE"),
            Return(None) => f.write_str("RETURN"),
            Return(Some(value)) => write!(f, "RETURN {value}"),
            Print(value) => write!(f, "PRINT {value}"),
            Throw(None) => f.write_str("THROW"),
            Throw(Some(args)) => {
                write!(f, "THROW {}, {}, {}", args.number, args.message, args.state)
            }
            Raiserror(raiserror) => write!(f, "{raiserror}"),
            Use(database) => write!(f, "USE {database}"),
            Transaction(statement) => write!(f, "{statement}"),
            Execute(execute) => write!(f, "{execute}"),
            Checkpoint(None) => f.write_str("CHECKPOINT"),
            UpdateStatistics(u) => write!(f, "UPDATE STATISTICS {}", u.table),
            CreateStatistics { name, table, columns, .. } => {
                write!(f, "CREATE STATISTICS {name} ON {table} (")?;
                for (i, c) in columns.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str(")")
            }
            AlterIndex { index, table, action } => match index {
                Some(index) => write!(f, "ALTER INDEX {index} ON {table} {action}"),
                None => write!(f, "ALTER INDEX ALL ON {table} {action}"),
            },
            Reconfigure { with_override: false } => f.write_str("RECONFIGURE"),
            Reconfigure { with_override: true } => f.write_str("RECONFIGURE WITH OVERRIDE"),
            Checkpoint(Some(duration)) => write!(f, "CHECKPOINT {duration}"),
            Kill(session) => write!(f, "KILL {session}"),
            Dbcc(dbcc) => {
                write!(f, "DBCC {}", dbcc.command)?;
                if !dbcc.arguments.is_empty() {
                    write!(f, " ({})", commas(&dbcc.arguments))?;
                }
                if !dbcc.options.is_empty() {
                    write!(f, " WITH {}", commas(&dbcc.options))?;
                }
                Ok(())
            }
            Waitfor(waitfor) => {
                let kind = match waitfor.kind {
                    WaitforKind::Delay => "DELAY",
                    WaitforKind::Time => "TIME",
                };
                write!(f, "WAITFOR {kind} {}", waitfor.value)
            }
            CreateDatabase(database) => write!(f, "{database}"),
            AlterDatabase(alter) => write!(f, "{alter}"),
            CreateTable(table) => {
                write!(f, "CREATE TABLE {} ({})", table.name, commas(&table.elements))?;
                if !table.options.is_empty() {
                    write!(f, " WITH ({})", commas(&table.options))?;
                }
                Ok(())
            }
            TruncateTable(name) => write!(f, "TRUNCATE TABLE {name}"),
            CreateIndex(index) => write!(f, "{index}"),
            CreateSequence(sequence) => {
                write!(f, "CREATE SEQUENCE {}", sequence.name)?;
                sequence.options.iter().try_for_each(|option| write!(f, " {option}"))
            }
            CreateProcedure(procedure) => write!(f, "{procedure}"),
            CreateView(view) => write!(f, "{view}"),
            CreateFunction(function) => write!(f, "{function}"),
            CreateTrigger(trigger) => write!(f, "{trigger}"),
            CreateType(t) => match &t.definition {
                TypeDefinition::Alias { data_type, nullable } => {
                    write!(f, "CREATE TYPE {} FROM {data_type}", t.name)?;
                    match nullable {
                        Some(true) => write!(f, " NULL"),
                        Some(false) => write!(f, " NOT NULL"),
                        None => Ok(()),
                    }
                }
                TypeDefinition::Table(elements) => {
                    write!(f, "CREATE TYPE {} AS TABLE ({})", t.name, commas(elements))
                }
            },
            CreateSchema { name, authorization } => {
                write!(f, "CREATE SCHEMA {name}")?;
                match authorization {
                    Some(owner) => write!(f, " AUTHORIZATION {owner}"),
                    None => Ok(()),
                }
            }
            EnableTrigger(e) => write!(f, "{e}"),
            Drop(drop) => write!(f, "{drop}"),
            DropIndex(drop) => {
                write!(f, "DROP INDEX {}{}", IfExists(drop.if_exists), commas(&drop.indexes))
            }
            AlterTable(alter) => write!(f, "{alter}"),
        }
    }
}

/// `IF EXISTS ` when set.
struct IfExists(bool);

impl Display for IfExists {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0 {
            f.write_str("IF EXISTS ")
        } else {
            Ok(())
        }
    }
}

/// ` OPTION (...)` when there are query hints.
struct OptionClause<'a>(&'a [QueryHint]);

impl Display for OptionClause<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, " OPTION ({})", commas(self.0))
        }
    }
}

impl Display for QueryHint {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(&self.text)
    }
}

impl Display for Declaration {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match &self.kind {
            DeclarationKind::Scalar { data_type, value: None } => {
                write!(f, "{} {data_type}", self.name)
            }
            DeclarationKind::Scalar { data_type, value: Some(value) } => {
                write!(f, "{} {data_type} = {value}", self.name)
            }
            DeclarationKind::Table(elements) => {
                write!(f, "{} TABLE ({})", self.name, commas(elements))
            }
        }
    }
}

impl Display for AssignOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(match self {
            AssignOp::Assign => "=",
            AssignOp::Add => "+=",
            AssignOp::Subtract => "-=",
            AssignOp::Multiply => "*=",
            AssignOp::Divide => "/=",
            AssignOp::Modulo => "%=",
            AssignOp::BitAnd => "&=",
            AssignOp::BitOr => "|=",
            AssignOp::BitXor => "^=",
        })
    }
}

impl Display for SetStatement {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            SetStatement::Variable { name, op, value } => write!(f, "SET {name} {op} {value}"),
            SetStatement::Options { names, on } => {
                write!(f, "SET {} {}", commas(names), if *on { "ON" } else { "OFF" })
            }
            SetStatement::LockTimeout(timeout) => write!(f, "SET LOCK_TIMEOUT {timeout}"),
            SetStatement::IdentityInsert { table, on } => {
                write!(f, "SET IDENTITY_INSERT {table} {}", if *on { "ON" } else { "OFF" })
            }
            SetStatement::IsolationLevel(level) => {
                write!(f, "SET TRANSACTION ISOLATION LEVEL {level}")
            }
            SetStatement::Valued { name, value } => write!(f, "SET {name} {value}"),
        }
    }
}

impl Display for IsolationLevel {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(match self {
            IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE READ",
            IsolationLevel::Snapshot => "SNAPSHOT",
            IsolationLevel::Serializable => "SERIALIZABLE",
        })
    }
}

impl Display for Raiserror {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "RAISERROR ({}, {}, {}", self.message, self.severity, self.state)?;
        self.arguments.iter().try_for_each(|argument| write!(f, ", {argument}"))?;
        f.write_char(')')?;
        if self.options.is_empty() {
            Ok(())
        } else {
            write!(f, " WITH {}", commas(&self.options))
        }
    }
}

impl Display for RaiserrorOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(match self {
            RaiserrorOption::Log => "LOG",
            RaiserrorOption::NoWait => "NOWAIT",
            RaiserrorOption::SetError => "SETERROR",
        })
    }
}

impl Display for TransactionName {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TransactionName::Name(name) => write!(f, "{name}"),
            TransactionName::Variable(variable) => f.write_str(variable),
        }
    }
}

/// ` name` when there is one.
struct OptionalName<'a>(&'a Option<TransactionName>);

impl Display for OptionalName<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self.0 {
            Some(name) => write!(f, " {name}"),
            None => Ok(()),
        }
    }
}

impl Display for TransactionStatement {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TransactionStatement::Begin { name } => {
                write!(f, "BEGIN TRANSACTION{}", OptionalName(name))
            }
            TransactionStatement::Commit { name, delayed_durability } => {
                write!(f, "COMMIT TRANSACTION{}", OptionalName(name))?;
                match delayed_durability {
                    Some(on) => {
                        write!(f, " WITH (DELAYED_DURABILITY = {})", if *on { "ON" } else { "OFF" })
                    }
                    None => Ok(()),
                }
            }
            TransactionStatement::Rollback { name } => {
                write!(f, "ROLLBACK TRANSACTION{}", OptionalName(name))
            }
            TransactionStatement::Save { name } => write!(f, "SAVE TRANSACTION {name}"),
        }
    }
}

impl Display for Execute {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            Execute::Sql(sql) => write!(f, "EXECUTE ({sql})"),
            Execute::Procedure(call) => {
                f.write_str("EXECUTE ")?;
                if let Some(status) = &call.return_status {
                    write!(f, "{status} = ")?;
                }
                match &call.procedure {
                    ProcedureRef::Name(name) => write!(f, "{name}")?,
                    ProcedureRef::Variable(variable) => f.write_str(variable)?,
                }
                if call.arguments.is_empty() {
                    Ok(())
                } else {
                    write!(f, " {}", commas(&call.arguments))
                }
            }
        }
    }
}

impl Display for ExecArgument {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if let Some(name) = &self.name {
            write!(f, "{name} = ")?;
        }
        write!(f, "{}", self.value)?;
        if self.output {
            f.write_str(" OUTPUT")?;
        }
        Ok(())
    }
}

impl Display for CreateDatabase {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "CREATE DATABASE {}", self.name)?;
        if !self.files.is_empty() {
            write!(f, " ON {}", commas(&self.files))?;
        }
        if !self.log_files.is_empty() {
            write!(f, " LOG ON {}", commas(&self.log_files))?;
        }
        Ok(())
    }
}

impl Display for FileSpec {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let mut properties = Vec::new();
        if let Some(name) = &self.logical_name {
            properties.push(format!("NAME = {name}"));
        }
        if let Some(filename) = &self.filename {
            properties.push(format!("FILENAME = {}", quote(filename)));
        }
        if let Some(size) = &self.size {
            properties.push(format!("SIZE = {size}"));
        }
        match &self.max_size {
            Some(MaxSize::Size(size)) => properties.push(format!("MAXSIZE = {size}")),
            Some(MaxSize::Unlimited) => properties.push("MAXSIZE = UNLIMITED".to_owned()),
            None => {}
        }
        match &self.growth {
            Some(FileGrowth::Size(size)) => properties.push(format!("FILEGROWTH = {size}")),
            Some(FileGrowth::Percent(percent)) => {
                properties.push(format!("FILEGROWTH = {percent}%"))
            }
            None => {}
        }
        write!(f, "({})", commas(&properties))
    }
}

impl Display for FileSize {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let unit = match self.unit {
            SizeUnit::Kilobytes => "KB",
            SizeUnit::Megabytes => "MB",
            SizeUnit::Gigabytes => "GB",
            SizeUnit::Terabytes => "TB",
        };
        write!(f, "{}{unit}", self.amount)
    }
}

impl Display for AlterDatabase {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str("ALTER DATABASE ")?;
        match &self.database {
            DatabaseRef::Name(name) => write!(f, "{name}")?,
            DatabaseRef::Current => f.write_str("CURRENT")?,
        }
        match &self.file {
            Some(DatabaseFileChange::Modify(spec)) => return write!(f, " MODIFY FILE {spec}"),
            Some(DatabaseFileChange::Add { log, files }) => {
                let log = if *log { "LOG " } else { "" };
                return write!(f, " ADD {log}FILE {}", commas(files));
            }
            Some(DatabaseFileChange::Remove(name)) => return write!(f, " REMOVE FILE {name}"),
            None => {}
        }
        f.write_str(" SET ")?;
        for (i, option) in self.options.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let text = match option {
                DatabaseOption::DelayedDurability(DelayedDurability::Disabled) => {
                    "DELAYED_DURABILITY = DISABLED"
                }
                DatabaseOption::DelayedDurability(DelayedDurability::Allowed) => {
                    "DELAYED_DURABILITY = ALLOWED"
                }
                DatabaseOption::DelayedDurability(DelayedDurability::Forced) => {
                    "DELAYED_DURABILITY = FORCED"
                }
                DatabaseOption::Recovery(RecoveryModel::Simple) => "RECOVERY SIMPLE",
                DatabaseOption::Recovery(RecoveryModel::Full) => "RECOVERY FULL",
                DatabaseOption::Recovery(RecoveryModel::BulkLogged) => "RECOVERY BULK_LOGGED",
                DatabaseOption::Accepted(text) => text.as_str(),
                DatabaseOption::Online => "ONLINE",
                DatabaseOption::Offline => "OFFLINE",
                DatabaseOption::ReadOnly(true) => "READ_ONLY",
                DatabaseOption::ReadOnly(false) => "READ_WRITE",
            };
            f.write_str(text)?;
        }
        if let Some(termination) = &self.termination {
            write!(f, " WITH {termination}")?;
        }
        Ok(())
    }
}

impl Display for TableElement {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TableElement::Index(index) => write!(
                f,
                "INDEX {}{}{} ({}){}",
                index.name,
                if index.unique { " UNIQUE" } else { "" },
                OptionalClustering(index.clustering),
                commas(&index.columns),
                IgnoreDupKey(index.ignore_dup_key)
            ),
            TableElement::Column(column) => {
                let computed =
                    column.options.iter().any(|o| matches!(o, ColumnOption::Computed { .. }));
                if computed {
                    write!(f, "{}", column.name)?;
                } else {
                    write!(f, "{} {}", column.name, column.data_type)?;
                }
                column.options.iter().try_for_each(|option| write!(f, " {option}"))
            }
            TableElement::Constraint(constraint) => {
                write!(f, "{}", ConstraintName(&constraint.name))?;
                match &constraint.kind {
                    TableConstraintKind::PrimaryKey { clustering, columns, ignore_dup_key } => {
                        write!(
                            f,
                            "PRIMARY KEY{} ({}){}",
                            OptionalClustering(*clustering),
                            commas(columns),
                            IgnoreDupKey(*ignore_dup_key)
                        )
                    }
                    TableConstraintKind::Unique { clustering, columns, ignore_dup_key } => {
                        write!(
                            f,
                            "UNIQUE{} ({}){}",
                            OptionalClustering(*clustering),
                            commas(columns),
                            IgnoreDupKey(*ignore_dup_key)
                        )
                    }
                    TableConstraintKind::Check(condition) => write!(f, "CHECK ({condition})"),
                    TableConstraintKind::ForeignKey { columns, reference } => {
                        write!(f, "FOREIGN KEY ({}) {reference}", commas(columns))
                    }
                }
            }
        }
    }
}

impl Display for ForeignKeyReference {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "REFERENCES {}", self.table)?;
        if !self.columns.is_empty() {
            write!(f, " ({})", commas(&self.columns))?;
        }
        for (clause, action) in [("DELETE", self.on_delete), ("UPDATE", self.on_update)] {
            let action = match action {
                ReferentialAction::NoAction => continue,
                ReferentialAction::Cascade => "CASCADE",
                ReferentialAction::SetNull => "SET NULL",
                ReferentialAction::SetDefault => "SET DEFAULT",
            };
            write!(f, " ON {clause} {action}")?;
        }
        Ok(())
    }
}

/// `CONSTRAINT name ` when named.
struct ConstraintName<'a>(&'a Option<Ident>);

impl Display for ConstraintName<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self.0 {
            Some(name) => write!(f, "CONSTRAINT {name} "),
            None => Ok(()),
        }
    }
}

/// ` CLUSTERED` or ` NONCLUSTERED` when given.
struct OptionalClustering(Option<Clustering>);

impl Display for OptionalClustering {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self.0 {
            Some(Clustering::Clustered) => f.write_str(" CLUSTERED"),
            Some(Clustering::Nonclustered) => f.write_str(" NONCLUSTERED"),
            None => Ok(()),
        }
    }
}

impl Display for ColumnOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            ColumnOption::Null => f.write_str("NULL"),
            ColumnOption::NotNull => f.write_str("NOT NULL"),
            ColumnOption::RowGuidCol => f.write_str("ROWGUIDCOL"),
            ColumnOption::Collate(collation) => write!(f, "COLLATE {collation}"),
            ColumnOption::Identity(None) => f.write_str("IDENTITY"),
            ColumnOption::Index { name, clustering } => {
                write!(f, "INDEX {name}{}", OptionalClustering(*clustering))
            }
            ColumnOption::Computed { expr, persisted } => {
                write!(f, "AS ({expr}){}", if *persisted { " PERSISTED" } else { "" })
            }
            ColumnOption::Identity(Some(spec)) => {
                write!(f, "IDENTITY({}, {})", spec.seed, spec.increment)
            }
            ColumnOption::Constraint(constraint) => {
                write!(f, "{}", ConstraintName(&constraint.name))?;
                match &constraint.kind {
                    ColumnConstraintKind::PrimaryKey { clustering, ignore_dup_key } => write!(
                        f,
                        "PRIMARY KEY{}{}",
                        OptionalClustering(*clustering),
                        IgnoreDupKey(*ignore_dup_key)
                    ),
                    ColumnConstraintKind::Unique { clustering, ignore_dup_key } => write!(
                        f,
                        "UNIQUE{}{}",
                        OptionalClustering(*clustering),
                        IgnoreDupKey(*ignore_dup_key)
                    ),
                    ColumnConstraintKind::Default(value) => write!(f, "DEFAULT {value}"),
                    ColumnConstraintKind::Check(condition) => write!(f, "CHECK ({condition})"),
                    ColumnConstraintKind::References(reference) => write!(f, "{reference}"),
                }
            }
        }
    }
}

impl Display for IndexColumn {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}{}", self.name, if self.descending { " DESC" } else { "" })
    }
}

impl Display for CreateIndex {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str("CREATE")?;
        if self.unique {
            f.write_str(" UNIQUE")?;
        }
        write!(f, "{}", OptionalClustering(self.clustering))?;
        write!(f, " INDEX {} ON {} ({})", self.name, self.table, commas(&self.columns))?;
        if !self.include.is_empty() {
            write!(f, " INCLUDE ({})", commas(&self.include))?;
        }
        if let Some(filter) = &self.filter {
            write!(f, " WHERE {filter}")?;
        }
        match (self.drop_existing, self.ignore_dup_key) {
            (true, true) => f.write_str(" WITH (DROP_EXISTING = ON, IGNORE_DUP_KEY = ON)")?,
            (true, false) => f.write_str(" WITH (DROP_EXISTING = ON)")?,
            (false, true) => f.write_str(" WITH (IGNORE_DUP_KEY = ON)")?,
            (false, false) => {}
        }
        Ok(())
    }
}

impl Display for SequenceOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            SequenceOption::DataType(data_type) => write!(f, "AS {data_type}"),
            SequenceOption::StartWith(value) => write!(f, "START WITH {value}"),
            SequenceOption::IncrementBy(value) => write!(f, "INCREMENT BY {value}"),
            SequenceOption::MinValue(Some(value)) => write!(f, "MINVALUE {value}"),
            SequenceOption::MinValue(None) => f.write_str("NO MINVALUE"),
            SequenceOption::MaxValue(Some(value)) => write!(f, "MAXVALUE {value}"),
            SequenceOption::MaxValue(None) => f.write_str("NO MAXVALUE"),
            SequenceOption::Cycle(true) => f.write_str("CYCLE"),
            SequenceOption::Cycle(false) => f.write_str("NO CYCLE"),
            SequenceOption::Cache(Some(size)) => write!(f, "CACHE {size}"),
            SequenceOption::Cache(None) => f.write_str("CACHE"),
            SequenceOption::NoCache => f.write_str("NO CACHE"),
        }
    }
}

impl Display for CreateProcedure {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let mode = self.mode;
        write!(f, "{mode} PROCEDURE {}", self.name)?;
        if !self.parameters.is_empty() {
            write!(f, " {}", commas(&self.parameters))?;
        }
        let mut options: Vec<String> = self.options.iter().map(ToString::to_string).collect();
        if let Some(who) = &self.execute_as {
            options.push(format!("EXECUTE AS {who}"));
        }
        if !options.is_empty() {
            write!(f, " WITH {}", options.join(", "))?;
        }
        write!(f, " AS {}", Separated(&self.body, "; "))
    }
}

impl Display for CreateView {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let mode = self.mode;
        write!(f, "{mode} VIEW {}", self.name)?;
        if !self.columns.is_empty() {
            write!(f, " ({})", commas(&self.columns))?;
        }
        if !self.options.is_empty() {
            write!(f, " WITH {}", commas(&self.options))?;
        }
        write!(f, " AS {}", self.query)?;
        if self.check_option {
            f.write_str(" WITH CHECK OPTION")?;
        }
        Ok(())
    }
}

impl Display for CreateMode {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(match self {
            CreateMode::Create => "CREATE",
            CreateMode::Alter => "ALTER",
            CreateMode::CreateOrAlter => "CREATE OR ALTER",
        })
    }
}

impl Display for CreateFunction {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let mode = self.mode;
        write!(f, "{mode} FUNCTION {}({}) RETURNS ", self.name, commas(&self.parameters))?;
        match &self.body {
            FunctionBody::Scalar { returns, .. } => write!(f, "{returns}")?,
            FunctionBody::InlineTable(_) => f.write_str("TABLE")?,
            FunctionBody::MultiTable { variable, elements, .. } => {
                write!(f, "{variable} TABLE ({})", commas(elements))?
            }
        }
        if !self.options.is_empty() {
            write!(f, " WITH {}", commas(&self.options))?;
        }
        match &self.body {
            FunctionBody::Scalar { statements, .. }
            | FunctionBody::MultiTable { statements, .. } => {
                write!(f, " AS BEGIN {} END", Separated(statements, "; "))
            }
            FunctionBody::InlineTable(query) => write!(f, " AS RETURN ({query})"),
        }
    }
}

impl Display for CreateTrigger {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let mode = self.mode;
        let timing = if self.instead_of { "INSTEAD OF" } else { "AFTER" };
        write!(
            f,
            "{mode} TRIGGER {} ON {} {timing} {}",
            self.name,
            self.table,
            commas(&self.events)
        )?;
        write!(f, " AS {}", Separated(&self.body, "; "))
    }
}

impl Display for TriggerEvent {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(match self {
            TriggerEvent::Insert => "INSERT",
            TriggerEvent::Update => "UPDATE",
            TriggerEvent::Delete => "DELETE",
        })
    }
}

impl Display for EnableTrigger {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let verb = if self.enable { "ENABLE" } else { "DISABLE" };
        if self.names.is_empty() {
            write!(f, "{verb} TRIGGER ALL ON {}", self.table)
        } else {
            write!(f, "{verb} TRIGGER {} ON {}", commas(&self.names), self.table)
        }
    }
}

impl Display for TableOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TableOption::MemoryOptimized(on) => {
                write!(f, "MEMORY_OPTIMIZED = {}", if *on { "ON" } else { "OFF" })
            }
            TableOption::SchemaAndData(true) => f.write_str("DURABILITY = SCHEMA_AND_DATA"),
            TableOption::SchemaAndData(false) => f.write_str("DURABILITY = SCHEMA_ONLY"),
        }
    }
}

impl Display for AtomicBlock {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "BEGIN ATOMIC WITH ({}) {}END", commas(&self.options), StatementList(&self.body))
    }
}

impl Display for AtomicOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            AtomicOption::IsolationLevel(level) => {
                write!(f, "TRANSACTION ISOLATION LEVEL = {level}")
            }
            AtomicOption::Language(name) => write!(f, "LANGUAGE = N'{}'", name.replace('\'', "''")),
            AtomicOption::DateFirst(value) => write!(f, "DATEFIRST = {value}"),
            AtomicOption::DateFormat(value) => write!(f, "DATEFORMAT = {value}"),
            AtomicOption::DelayedDurability(on) => {
                write!(f, "DELAYED_DURABILITY = {}", if *on { "ON" } else { "OFF" })
            }
        }
    }
}

impl Display for ProcedureParameter {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{} {}", self.name, self.data_type)?;
        if self.not_null {
            f.write_str(" NOT NULL")?;
        }
        if let Some(default) = &self.default {
            write!(f, " = {default}")?;
        }
        if self.output {
            f.write_str(" OUTPUT")?;
        }
        if self.readonly {
            f.write_str(" READONLY")?;
        }
        Ok(())
    }
}

impl Display for DropObjects {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let kind = match self.kind {
            DropKind::Database => "DATABASE",
            DropKind::Table => "TABLE",
            DropKind::Sequence => "SEQUENCE",
            DropKind::Procedure => "PROCEDURE",
            DropKind::View => "VIEW",
            DropKind::Function => "FUNCTION",
            DropKind::Trigger => "TRIGGER",
            DropKind::Schema => "SCHEMA",
            DropKind::Type => "TYPE",
            DropKind::Statistics => "STATISTICS",
        };
        write!(f, "DROP {kind} {}{}", IfExists(self.if_exists), commas(&self.names))
    }
}

impl Display for IndexRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{} ON {}", self.name, self.table)
    }
}

// ---------------------------------------------------------------------------------------------
// Data modification
// ---------------------------------------------------------------------------------------------

/// `WITH ctes ` when there are any.
struct With<'a>(&'a [Cte]);

impl Display for With<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, "WITH {} ", commas(self.0))
        }
    }
}

/// `TOP (...) ` when given.
struct OptionalTop<'a>(&'a Option<Top>);

impl Display for OptionalTop<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let Some(top) = self.0 else { return Ok(()) };
        write!(f, "TOP ({})", top.quantity)?;
        if top.percent {
            f.write_str(" PERCENT")?;
        }
        if top.with_ties {
            f.write_str(" WITH TIES")?;
        }
        f.write_char(' ')
    }
}

/// ` WITH (hints)` when there are any.
struct TableHints<'a>(&'a [TableHint]);

impl Display for TableHints<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, " WITH ({})", commas(self.0))
        }
    }
}

/// ` FROM sources` when there are any.
struct FromClause<'a>(&'a [TableSource]);

impl Display for FromClause<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, " FROM {}", commas(self.0))
        }
    }
}

/// ` WHERE condition` when there is one.
struct WhereClause<'a>(&'a Option<Expr>);

impl Display for WhereClause<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self.0 {
            Some(condition) => write!(f, " WHERE {condition}"),
            None => Ok(()),
        }
    }
}

impl Display for TableTarget {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TableTarget::Table(name) => write!(f, "{name}"),
            TableTarget::Variable(variable) => f.write_str(variable),
        }
    }
}

impl Display for Insert {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(
            f,
            "{}INSERT {}INTO {}{}{} ",
            With(&self.ctes),
            OptionalTop(&self.top),
            self.target,
            TableHints(&self.table_hints),
            ColumnList(&self.columns)
        )?;
        if let Some(output) = &self.output {
            write!(f, "{output} ")?;
        }
        match &self.source {
            InsertSource::Values(rows) => write!(f, "VALUES {}", commas(&rows_of(rows)))?,
            InsertSource::Query(query) => write!(f, "{query}")?,
            InsertSource::Execute(execute) => write!(f, "{execute}")?,
            InsertSource::DefaultValues => f.write_str("DEFAULT VALUES")?,
        }
        write!(f, "{}", OptionClause(&self.hints))
    }
}

/// A `VALUES` row: `(a, b)`.
struct Row<'a>(&'a [Expr]);

impl Display for Row<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "({})", commas(self.0))
    }
}

fn rows_of(rows: &[Vec<Expr>]) -> Vec<Row<'_>> {
    rows.iter().map(|row| Row(row)).collect()
}

impl Display for Update {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(
            f,
            "{}UPDATE {}{}{} SET {}{}{}{}{}",
            With(&self.ctes),
            OptionalTop(&self.top),
            self.target,
            TableHints(&self.table_hints),
            commas(&self.assignments),
            OptionalOutput(&self.output),
            FromClause(&self.from),
            WhereClause(&self.where_clause),
            OptionClause(&self.hints)
        )
    }
}

impl Display for OutputClause {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "OUTPUT {}", commas(&self.items))?;
        if let Some(into) = &self.into {
            write!(f, " INTO {}{}", into.target, ColumnList(&into.columns))?;
        }
        Ok(())
    }
}

/// An OUTPUT clause with a space before it, or nothing.
struct OptionalOutput<'a>(&'a Option<Box<OutputClause>>);

impl Display for OptionalOutput<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self.0 {
            Some(output) => write!(f, " {output}"),
            None => Ok(()),
        }
    }
}

impl Display for Assignment {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match &self.target {
            AssignmentTarget::Column(column) => write!(f, "{}", Separated(column, "."))?,
            AssignmentTarget::Variable(variable) => f.write_str(variable)?,
            AssignmentTarget::VariableAndColumn { variable, column } => {
                write!(f, "{variable} = {}", Separated(column, "."))?
            }
        }
        write!(f, " {} {}", self.op, self.value)
    }
}

impl Display for Delete {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(
            f,
            "{}DELETE {}FROM {}{}{}{}{}{}",
            With(&self.ctes),
            OptionalTop(&self.top),
            self.target,
            TableHints(&self.table_hints),
            OptionalOutput(&self.output),
            FromClause(&self.from),
            WhereClause(&self.where_clause),
            OptionClause(&self.hints)
        )
    }
}

impl Display for Merge {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(
            f,
            "{}MERGE {}INTO {}{}{} USING {} ON {}",
            With(&self.ctes),
            OptionalTop(&self.top),
            self.target,
            TableHints(&self.table_hints),
            Alias(self.alias.as_ref()),
            self.source,
            self.on
        )?;
        for clause in &self.clauses {
            f.write_str(match clause.when {
                MergeWhen::Matched => " WHEN MATCHED",
                MergeWhen::NotMatchedByTarget => " WHEN NOT MATCHED BY TARGET",
                MergeWhen::NotMatchedBySource => " WHEN NOT MATCHED BY SOURCE",
            })?;
            if let Some(condition) = &clause.condition {
                write!(f, " AND {condition}")?;
            }
            match &clause.action {
                MergeAction::Update(assignments) => {
                    write!(f, " THEN UPDATE SET {}", commas(assignments))?
                }
                MergeAction::Delete => f.write_str(" THEN DELETE")?,
                MergeAction::Insert { columns, values: Some(values) } => {
                    write!(f, " THEN INSERT{} VALUES {}", ColumnList(columns), Row(values))?
                }
                MergeAction::Insert { columns, values: None } => {
                    write!(f, " THEN INSERT{} DEFAULT VALUES", ColumnList(columns))?
                }
            }
        }
        write!(f, "{}{}", OptionalOutput(&self.output), OptionClause(&self.hints))
    }
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

impl Display for Query {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if !self.xml_namespaces.is_empty() {
            let items: Vec<String> = self
                .xml_namespaces
                .iter()
                .map(|n| match &n.prefix {
                    Some(p) => format!("'{}' AS {p}", n.uri.replace('\'', "''")),
                    None => format!("DEFAULT '{}'", n.uri.replace('\'', "''")),
                })
                .collect();
            write!(f, "WITH XMLNAMESPACES ({})", items.join(", "))?;
            // The CTEs follow the namespaces under the same WITH.
            if self.ctes.is_empty() {
                f.write_str(" ")?;
            } else {
                write!(f, ", {} ", commas(&self.ctes))?;
            }
            return self.fmt_rest(f);
        }
        write!(f, "{}", With(&self.ctes))?;
        self.fmt_rest(f)
    }
}

impl Query {
    /// The query after its WITH clause.
    fn fmt_rest(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", self.body)?;
        if !self.order_by.is_empty() {
            write!(f, " ORDER BY {}", commas(&self.order_by))?;
        }
        if let Some(offset) = &self.offset {
            write!(f, " OFFSET {} ROWS", offset.offset)?;
            if let Some(fetch) = &offset.fetch {
                write!(f, " FETCH NEXT {fetch} ROWS ONLY")?;
            }
        }
        if let Some(xml) = &self.for_xml {
            if xml.auto {
                f.write_str(" FOR XML AUTO")?;
            } else {
                let mode = if xml.raw { "RAW" } else { "PATH" };
                write!(f, " FOR XML {mode}('{}')", xml.element.replace('\'', "''"))?;
            }
            if xml.elements {
                f.write_str(", ELEMENTS")?;
            }
            if let Some(root) = &xml.root {
                write!(f, ", ROOT('{}')", root.replace('\'', "''"))?;
            }
            if xml.typed {
                f.write_str(", TYPE")?;
            }
        }
        let Some(json) = &self.for_json else { return Ok(()) };
        write!(f, " FOR JSON {}", if json.path { "PATH" } else { "AUTO" })?;
        if let Some(root) = &json.root {
            write!(f, ", ROOT('{}')", root.replace('\'', "''"))?;
        }
        if json.include_null_values {
            f.write_str(", INCLUDE_NULL_VALUES")?;
        }
        if json.without_array_wrapper {
            f.write_str(", WITHOUT_ARRAY_WRAPPER")?;
        }
        Ok(())
    }
}

impl Display for Cte {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}{} AS ({})", self.name, ColumnList(&self.columns), self.query)
    }
}

impl Display for QueryBody {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            QueryBody::Select(select) => write!(f, "{select}"),
            QueryBody::SetOperation { op, left, right } => {
                let op = match op {
                    SetOperator::Union => "UNION",
                    SetOperator::UnionAll => "UNION ALL",
                    SetOperator::Except => "EXCEPT",
                    SetOperator::Intersect => "INTERSECT",
                };
                write!(f, "{left} {op} {right}")
            }
            QueryBody::Parenthesized(query) => write!(f, "({query})"),
        }
    }
}

impl Display for Select {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str("SELECT ")?;
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        write!(f, "{}{}", OptionalTop(&self.top), commas(&self.items))?;
        if let Some(into) = &self.into {
            write!(f, " INTO {into}")?;
        }
        write!(f, "{}{}", FromClause(&self.from), WhereClause(&self.where_clause))?;
        match &self.grouping_sets {
            Some(sets) => {
                let sets: Vec<String> =
                    sets.iter().map(|set| format!("({})", commas(set))).collect();
                write!(f, " GROUP BY GROUPING SETS ({})", sets.join(", "))?;
            }
            None if !self.group_by.is_empty() => {
                write!(f, " GROUP BY {}", commas(&self.group_by))?;
            }
            None => {}
        }
        match &self.having {
            Some(having) => write!(f, " HAVING {having}"),
            None => Ok(()),
        }
    }
}

impl Display for SelectItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            SelectItem::Wildcard(None) => f.write_char('*'),
            SelectItem::Wildcard(Some(qualifier)) => write!(f, "{}.*", Separated(qualifier, ".")),
            SelectItem::Expr { expr, alias } => write!(f, "{expr}{}", Alias(alias.as_ref())),
            SelectItem::Assign { variable, op, value } => write!(f, "{variable} {op} {value}"),
        }
    }
}

impl Display for OrderByItem {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}{}", self.expr, if self.descending { " DESC" } else { "" })
    }
}

impl Display for JsonColumn {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{} {}", self.name, self.data_type)?;
        if let Some(path) = &self.path {
            write!(f, " '{}'", path.replace('\'', "''"))?;
        }
        if self.as_json {
            f.write_str(" AS JSON")?;
        }
        Ok(())
    }
}

impl Display for TableSource {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            TableSource::Table { name, alias, hints } => {
                write!(f, "{name}{}{}", Alias(alias.as_ref()), TableHints(hints))
            }
            TableSource::Variable { name, alias } => write!(f, "{name}{}", Alias(alias.as_ref())),
            TableSource::XmlNodes { target, xquery, alias, column } => {
                write!(f, "{target}.nodes({xquery}) AS {alias}({column})")
            }
            TableSource::Function { name, args, alias, columns } => write!(
                f,
                "{name}({}){}{}",
                commas(args),
                Alias(alias.as_ref()),
                ColumnList(columns)
            ),
            TableSource::Derived { query, alias, columns } => {
                write!(f, "({query}) AS {alias}{}", ColumnList(columns))
            }
            TableSource::Pivot(p) => write!(
                f,
                "{} PIVOT ({} FOR {} IN ({})) AS {}",
                p.source,
                p.aggregate,
                p.pivot_column,
                commas(&p.values),
                p.alias
            ),
            TableSource::Unpivot(u) => write!(
                f,
                "{} UNPIVOT ({} FOR {} IN ({})) AS {}",
                u.source,
                u.value,
                u.name,
                commas(&u.columns),
                u.alias
            ),
            TableSource::OpenJson { args, schema, alias } => {
                write!(
                    f,
                    "OPENJSON({}) WITH ({}){}",
                    commas(args),
                    commas(schema),
                    Alias(alias.as_ref())
                )
            }
            TableSource::OpenRowsetBulk { file, kind, alias, columns } => {
                let kind = match kind {
                    SingleKind::Blob => "SINGLE_BLOB",
                    SingleKind::Clob => "SINGLE_CLOB",
                    SingleKind::Nclob => "SINGLE_NCLOB",
                };
                write!(
                    f,
                    "OPENROWSET(BULK {}, {kind}){}{}",
                    quote(file),
                    Alias(alias.as_ref()),
                    ColumnList(columns)
                )
            }
            TableSource::Values { rows, alias, columns } => {
                write!(f, "(VALUES {}) AS {alias}{}", commas(&rows_of(rows)), ColumnList(columns))
            }
            TableSource::Join(join) => write!(f, "{join}"),
        }
    }
}

impl Display for Join {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let kind = match self.kind {
            JoinKind::Inner => "INNER JOIN",
            JoinKind::LeftOuter => "LEFT OUTER JOIN",
            JoinKind::RightOuter => "RIGHT OUTER JOIN",
            JoinKind::FullOuter => "FULL OUTER JOIN",
            JoinKind::Cross => "CROSS JOIN",
            JoinKind::CrossApply => "CROSS APPLY",
            JoinKind::OuterApply => "OUTER APPLY",
        };
        write!(f, "{} {kind} ", self.left)?;
        match &self.right {
            TableSource::Join(_) => write!(f, "({})", self.right)?,
            right => write!(f, "{right}")?,
        }
        match &self.on {
            Some(condition) => write!(f, " ON {condition}"),
            None => Ok(()),
        }
    }
}

impl Display for TableHint {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(&self.name.value)?;
        if self.args.is_empty() {
            Ok(())
        } else {
            write!(f, "({})", commas(&self.args))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", self.kind)
    }
}

/// ` NOT` when negated.
fn not(negated: bool) -> &'static str {
    if negated {
        " NOT"
    } else {
        ""
    }
}

impl Display for ExprKind {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            ExprKind::Literal(literal) => write!(f, "{literal}"),
            ExprKind::Variable(name) | ExprKind::SystemVariable(name) => f.write_str(name),
            ExprKind::Column(parts) => write!(f, "{}", Separated(parts, ".")),
            ExprKind::Unary { op, operand } => {
                let symbol = match op {
                    UnaryOp::Plus => "+",
                    UnaryOp::Minus => "-",
                    UnaryOp::BitNot => "~",
                    UnaryOp::Not => "NOT ",
                };
                // A space keeps `- -1` from becoming the comment `--1`.
                let nested = matches!(operand.kind, ExprKind::Unary { .. });
                let space = if nested && *op != UnaryOp::Not { " " } else { "" };
                write!(f, "{symbol}{space}{operand}")
            }
            ExprKind::Binary { op, left, right } => write!(f, "({left} {op} {right})"),
            ExprKind::Between { expr, negated, low, high } => {
                write!(f, "({expr}{} BETWEEN {low} AND {high})", not(*negated))
            }
            ExprKind::InList { expr, negated, list } => {
                write!(f, "({expr}{} IN ({}))", not(*negated), commas(list))
            }
            ExprKind::InSubquery { expr, negated, subquery } => {
                write!(f, "({expr}{} IN ({subquery}))", not(*negated))
            }
            ExprKind::Like { expr, negated, pattern, escape } => {
                write!(f, "({expr}{} LIKE {pattern}", not(*negated))?;
                if let Some(escape) = escape {
                    write!(f, " ESCAPE {escape}")?;
                }
                f.write_char(')')
            }
            ExprKind::IsNull { expr, negated } => write!(f, "({expr} IS{} NULL)", not(*negated)),
            ExprKind::IsDistinctFrom { left, right, negated } => {
                write!(f, "({left} IS{} DISTINCT FROM {right})", not(*negated))
            }
            ExprKind::Collate { expr, collation } => write!(f, "{expr} COLLATE {collation}"),
            ExprKind::JsonObject { pairs, absent_on_null } => {
                let members: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                let clause = if *absent_on_null { " ABSENT ON NULL" } else { "" };
                write!(f, "JSON_OBJECT({}{clause})", members.join(", "))
            }
            ExprKind::JsonArray { values, absent_on_null } => {
                let values: Vec<String> = values.iter().map(ToString::to_string).collect();
                let clause = if *absent_on_null { "" } else { " NULL ON NULL" };
                write!(f, "JSON_ARRAY({}{clause})", values.join(", "))
            }
            ExprKind::AtTimeZone { expr, zone } => write!(f, "{expr} AT TIME ZONE {zone}"),
            ExprKind::XmlMethod { target, method, args } => {
                write!(f, "{target}.{method}({})", commas(args))
            }
            ExprKind::CurrentOf(cursor) => write!(f, "CURRENT OF {cursor}"),
            ExprKind::Quantified { left, op, quantifier, subquery } => {
                let quantifier = match quantifier {
                    Quantifier::All => "ALL",
                    Quantifier::Any => "ANY",
                };
                write!(f, "({left} {op} {quantifier} ({subquery}))")
            }
            ExprKind::Exists(query) => write!(f, "EXISTS ({query})"),
            ExprKind::Subquery(query) => write!(f, "({query})"),
            ExprKind::Case(case) => write!(f, "{case}"),
            ExprKind::Cast(cast) => {
                let name = if cast.is_try { "TRY_CAST" } else { "CAST" };
                write!(f, "{name}({} AS {})", cast.expr, cast.data_type)
            }
            ExprKind::Convert(convert) => {
                let name = if convert.is_try { "TRY_CONVERT" } else { "CONVERT" };
                write!(f, "{name}({}, {}", convert.data_type, convert.expr)?;
                if let Some(style) = &convert.style {
                    write!(f, ", {style}")?;
                }
                f.write_char(')')
            }
            ExprKind::Function(call) => write!(f, "{call}"),
            ExprKind::NextValueFor(next) => {
                write!(f, "NEXT VALUE FOR {}", next.sequence)?;
                match &next.over {
                    Some(window) => write!(f, " OVER ({window})"),
                    None => Ok(()),
                }
            }
            ExprKind::Default => f.write_str("DEFAULT"),
        }
    }
}

impl Display for BinaryOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(match self {
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::Modulo => "%",
            BinaryOp::Add => "+",
            BinaryOp::Subtract => "-",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::Gt => ">",
            BinaryOp::LtEq => "<=",
            BinaryOp::GtEq => ">=",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
        })
    }
}

/// `'text'` with quotes doubled.
pub(crate) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            Literal::Null => f.write_str("NULL"),
            Literal::String { value, national } => {
                write!(f, "{}{}", if *national { "N" } else { "" }, quote(value))
            }
            Literal::Integer(text) | Literal::Decimal(text) | Literal::Float(text) => {
                f.write_str(text)
            }
            Literal::Money(text) => write!(f, "${text}"),
            Literal::Binary(bytes) => {
                f.write_str("0x")?;
                bytes.iter().try_for_each(|byte| write!(f, "{byte:02X}"))
            }
        }
    }
}

impl Display for Case {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str("CASE")?;
        if let Some(operand) = &self.operand {
            write!(f, " {operand}")?;
        }
        for branch in &self.branches {
            write!(f, " WHEN {} THEN {}", branch.condition, branch.result)?;
        }
        if let Some(otherwise) = &self.else_result {
            write!(f, " ELSE {otherwise}")?;
        }
        f.write_str(" END")
    }
}

impl Display for FunctionCall {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{}", FunctionName(&self.name))?;
        match &self.args {
            FunctionArgs::None => {}
            FunctionArgs::Star => f.write_str("(*)")?,
            FunctionArgs::List { distinct, args } => {
                write!(f, "({}{})", if *distinct { "DISTINCT " } else { "" }, commas(args))?
            }
        }
        if !self.within_group.is_empty() {
            write!(f, " WITHIN GROUP (ORDER BY {})", commas(&self.within_group))?;
        }
        match &self.over {
            Some(window) => write!(f, " OVER ({window})"),
            None => Ok(()),
        }
    }
}

/// A function's name; the reserved words that are functions (`LEFT`, `COALESCE`,
/// `CURRENT_TIMESTAMP`, ...) stay unbracketed.
struct FunctionName<'a>(&'a ObjectName);

impl Display for FunctionName<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let name = &self.0.name.value;
        let is_keyword_function = FUNCTION_KEYWORDS
            .iter()
            .chain(NILADIC_FUNCTIONS.iter())
            .any(|keyword| name.eq_ignore_ascii_case(keyword));
        let unqualified =
            self.0.schema.is_none() && self.0.database.is_none() && self.0.server.is_none();
        if is_keyword_function && unqualified {
            f.write_str(name)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl Display for WindowSpec {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        if !self.partition_by.is_empty() {
            write!(f, "PARTITION BY {}", commas(&self.partition_by))?;
            if !self.order_by.is_empty() {
                f.write_char(' ')?;
            }
        }
        if !self.order_by.is_empty() {
            write!(f, "ORDER BY {}", commas(&self.order_by))?;
        }
        if let Some(frame) = &self.frame {
            if !self.partition_by.is_empty() || !self.order_by.is_empty() {
                f.write_char(' ')?;
            }
            write!(f, "{frame}")?;
        }
        Ok(())
    }
}

impl Display for WindowFrame {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let units = match self.units {
            FrameUnits::Rows => "ROWS",
            FrameUnits::Range => "RANGE",
        };
        write!(f, "{units} BETWEEN {} AND {}", self.start, self.end)
    }
}

impl Display for FrameBound {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        match self {
            FrameBound::UnboundedPreceding => f.write_str("UNBOUNDED PRECEDING"),
            FrameBound::Preceding(n) => write!(f, "{n} PRECEDING"),
            FrameBound::CurrentRow => f.write_str("CURRENT ROW"),
            FrameBound::Following(n) => write!(f, "{n} FOLLOWING"),
            FrameBound::UnboundedFollowing => f.write_str("UNBOUNDED FOLLOWING"),
        }
    }
}

impl fmt::Display for DbccArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbccArgument::Name(name) => write!(f, "{name}"),
            DbccArgument::Value(value) => write!(f, "{value}"),
        }
    }
}
