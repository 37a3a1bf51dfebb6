//! `ALTER TABLE` printed back as T-SQL.

use std::fmt::{Display, Formatter, Result};

use super::commas;
use crate::ast::{AlterAdd, AlterDrop, AlterTable, AlterTableAction};

impl Display for AlterTable {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "ALTER TABLE {} ", self.table)?;
        match &self.action {
            AlterTableAction::Add { nocheck, items } => {
                if *nocheck {
                    f.write_str("WITH NOCHECK ")?;
                }
                write!(f, "ADD {}", commas(items))
            }
            AlterTableAction::AlterColumn { column, data_type, collation, nullable } => {
                write!(f, "ALTER COLUMN {column} {data_type}")?;
                if let Some(collation) = collation {
                    write!(f, " COLLATE {collation}")?;
                }
                match nullable {
                    Some(true) => f.write_str(" NULL"),
                    Some(false) => f.write_str(" NOT NULL"),
                    None => Ok(()),
                }
            }
            AlterTableAction::Drop(items) => write!(f, "DROP {}", commas(items)),
            AlterTableAction::CheckConstraints { with_check, enable, names } => {
                if *with_check {
                    f.write_str("WITH CHECK ")?;
                }
                f.write_str(if *enable { "CHECK" } else { "NOCHECK" })?;
                match names {
                    Some(names) => write!(f, " CONSTRAINT {}", commas(names)),
                    None => f.write_str(" CONSTRAINT ALL"),
                }
            }
        }
    }
}

impl Display for AlterAdd {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let with_values = match self {
            AlterAdd::Element { element, with_values } => {
                write!(f, "{element}")?;
                *with_values
            }
            AlterAdd::DefaultFor { name, value, column, with_values } => {
                if let Some(name) = name {
                    write!(f, "CONSTRAINT {name} ")?;
                }
                write!(f, "DEFAULT {value} FOR {column}")?;
                *with_values
            }
        };
        if with_values {
            f.write_str(" WITH VALUES")?;
        }
        Ok(())
    }
}

impl Display for AlterDrop {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        f.write_str(if self.column { "COLUMN " } else { "CONSTRAINT " })?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        write!(f, "{}", self.name)
    }
}
