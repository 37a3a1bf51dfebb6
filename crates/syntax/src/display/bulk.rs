//! `INSERT BULK` and `BULK INSERT` printed back as T-SQL.

use std::fmt::{Display, Formatter, Result};

use super::{commas, quote};
use crate::ast::{BulkColumn, BulkInsert, BulkOptions, InsertBulk};

impl Display for InsertBulk {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "INSERT BULK {} ({})", self.table, commas(&self.columns))?;
        let options = load_options(&self.options, ["KEEP_NULLS", "KEEP_IDENTITY"]);
        if !options.is_empty() {
            write!(f, " WITH ({})", options.join(", "))?;
        }
        Ok(())
    }
}

impl Display for BulkInsert {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(f, "BULK INSERT {} FROM {}", self.table, quote(&self.file))?;
        let o = &self.options;
        let mut options = load_options(&o.load, ["KEEPNULLS", "KEEPIDENTITY"]);
        let numbers = [
            ("BATCHSIZE", o.batch_size),
            ("FIRSTROW", o.first_row),
            ("LASTROW", o.last_row),
            ("MAXERRORS", o.max_errors),
        ];
        for (name, n) in numbers {
            if let Some(n) = n {
                options.push(format!("{name} = {n}"));
            }
        }
        let texts = [
            ("CODEPAGE", &o.code_page),
            ("DATAFILETYPE", &o.data_file_type),
            ("FIELDTERMINATOR", &o.field_terminator),
            ("ROWTERMINATOR", &o.row_terminator),
            ("ERRORFILE", &o.error_file),
            ("FORMAT", &o.format),
            ("FIELDQUOTE", &o.field_quote),
            ("FORMATFILE", &o.format_file),
        ];
        for (name, text) in texts {
            if let Some(text) = text {
                options.push(format!("{name} = {}", quote(text)));
            }
        }
        if !options.is_empty() {
            write!(f, " WITH ({})", options.join(", "))?;
        }
        Ok(())
    }
}

/// The options the two statements share, `keep` naming KEEP_NULLS and KEEP_IDENTITY as the
/// statement spells them.
fn load_options(o: &BulkOptions, keep: [&str; 2]) -> Vec<String> {
    let mut options = Vec::new();
    let flags = [
        (o.check_constraints, "CHECK_CONSTRAINTS"),
        (o.fire_triggers, "FIRE_TRIGGERS"),
        (o.keep_nulls, keep[0]),
        (o.keep_identity, keep[1]),
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
    options
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
