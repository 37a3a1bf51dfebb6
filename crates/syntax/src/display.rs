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
mod database;
mod ddl;
mod dml;
mod expr;
mod merge;
mod module;
mod names;
mod query;
mod stmt;

use std::fmt::{self, Display, Formatter};

use crate::ast::*;
use crate::lexer::{tokenize, TokenKind};
use query::OptionClause;

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
            UpdateStatistics(u) => {
                write!(f, "UPDATE STATISTICS {}", u.table)?;
                if !u.names.is_empty() {
                    write!(f, " ({})", Separated(&u.names, ", "))?;
                }
                write!(f, "{}", u.options)
            }
            CreateStatistics { name, table, columns, options } => {
                write!(
                    f,
                    "CREATE STATISTICS {name} ON {table} ({}){options}",
                    Separated(columns, ", ")
                )
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
            AlterSequence(sequence) => {
                write!(f, "ALTER SEQUENCE {}", sequence.name)?;
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

/// `'text'` with quotes doubled.
pub(crate) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The value of a valued `SET` option (and of `BEGIN ATOMIC`'s `LANGUAGE`, `DATEFIRST` and
/// `DATEFORMAT`). The parser keeps a word, number or variable (minus sign included) as written,
/// and a string's or bracketed name's content: a value that is not one such token prints as a
/// string, which parses back to the same value.
struct SetValue<'a>(&'a str);

impl Display for SetValue<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let unsigned = self.0.strip_prefix('-').unwrap_or(self.0);
        let bare = match tokenize(unsigned).as_deref() {
            Ok([token, _eof]) => {
                matches!(token.kind, TokenKind::Word | TokenKind::Integer | TokenKind::Variable)
                    && token.text == unsigned
            }
            _ => false,
        };
        if bare {
            f.write_str(self.0)
        } else {
            write!(f, "N{}", quote(self.0))
        }
    }
}

/// ` WITH ...` of CREATE and UPDATE STATISTICS (nothing without options).
impl Display for StatisticsOptions {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let mut parts: Vec<String> = Vec::new();
        match self.sample {
            Some(StatisticsSample::FullScan) => parts.push("FULLSCAN".into()),
            Some(StatisticsSample::Percent(n)) => parts.push(format!("SAMPLE {n} PERCENT")),
            Some(StatisticsSample::Rows(n)) => parts.push(format!("SAMPLE {n} ROWS")),
            None => {}
        }
        if self.resample {
            parts.push("RESAMPLE".into());
        }
        if self.no_recompute {
            parts.push("NORECOMPUTE".into());
        }
        if let Some(only) = &self.only {
            parts.push(only.clone());
        }
        if parts.is_empty() {
            return Ok(());
        }
        write!(f, " WITH {}", parts.join(", "))
    }
}
