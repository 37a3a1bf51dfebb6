//! Prints tables, constraints, indexes, sequences and `DROP`.

use std::fmt::{Display, Formatter, Result};

use super::{commas, IfExists, IgnoreDupKey};
use crate::ast::{
    Clustering, ColumnConstraintKind, ColumnOption, CreateIndex, DropKind, DropObjects,
    ForeignKeyReference, Ident, IndexColumn, IndexRef, ReferentialAction, SequenceOption,
    TableConstraintKind, TableElement, TableOption,
};

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
            SequenceOption::Restart(Some(value)) => write!(f, "RESTART WITH {value}"),
            SequenceOption::Restart(None) => f.write_str("RESTART"),
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

impl Display for DropObjects {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let kind = match self.kind {
            DropKind::Database => "DATABASE",
            DropKind::Table => "TABLE",
            DropKind::Sequence => "SEQUENCE",
            DropKind::Procedure => "PROCEDURE",
            DropKind::View => "VIEW",
            DropKind::Function => "FUNCTION",
            DropKind::Trigger | DropKind::DatabaseTrigger | DropKind::ServerTrigger => "TRIGGER",
            DropKind::Schema => "SCHEMA",
            DropKind::Type => "TYPE",
            DropKind::Statistics => "STATISTICS",
            DropKind::Synonym => "SYNONYM",
        };
        write!(f, "DROP {kind} {}{}", IfExists(self.if_exists), commas(&self.names))?;
        match self.kind {
            DropKind::DatabaseTrigger => f.write_str(" ON DATABASE")?,
            DropKind::ServerTrigger => f.write_str(" ON ALL SERVER")?,
            _ => {}
        }
        Ok(())
    }
}

impl Display for IndexRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{} ON {}", self.name, self.table)
    }
}
