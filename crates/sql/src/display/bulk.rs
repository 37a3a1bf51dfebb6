//! `INSERT BULK` printed back as T-SQL.

use std::fmt::{Display, Formatter, Result};

use super::commas;
use crate::ast::{BulkColumn, InsertBulk};

impl Display for InsertBulk {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "INSERT BULK {} ({})", self.table, commas(&self.columns))?;
        let o = &self.options;
        let mut options = Vec::new();
        let flags = [
            (o.check_constraints, "CHECK_CONSTRAINTS"),
            (o.fire_triggers, "FIRE_TRIGGERS"),
            (o.keep_nulls, "KEEP_NULLS"),
            (o.keep_identity, "KEEP_IDENTITY"),
            (o.tablock, "TABLOCK"),
        ];
        options.extend(flags.iter().filter(|(on, _)| *on).map(|(_, name)| name.to_string()));
        if let Some(n) = o.rows_per_batch {
            options.push(format!("ROWS_PER_BATCH = {n}"));
        }
        if let Some(n) = o.kilobytes_per_batch {
            options.push(format!("KILOBYTES_PER_BATCH = {n}"));
        }
        if !o.order.is_empty() {
            let columns: Vec<String> = o
                .order
                .iter()
                .map(|(c, desc)| format!("{c} {}", if *desc { "DESC" } else { "ASC" }))
                .collect();
            options.push(format!("ORDER ({})", columns.join(", ")));
        }
        if !options.is_empty() {
            write!(f, " WITH ({})", options.join(", "))?;
        }
        Ok(())
    }
}

impl Display for BulkColumn {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "{} {}", self.name, self.ty)?;
        if let Some(c) = &self.collation {
            write!(f, " COLLATE {c}")?;
        }
        match self.nullable {
            Some(true) => f.write_str(" NULL"),
            Some(false) => f.write_str(" NOT NULL"),
            None => Ok(()),
        }
    }
}
