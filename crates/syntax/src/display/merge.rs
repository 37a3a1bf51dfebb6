//! Prints `MERGE`.

use std::fmt::{Display, Formatter, Result};

use super::dml::OptionalOutput;
use super::query::{OptionClause, OptionalTop, Row, TableHints, With};
use super::{commas, Alias, ColumnList};
use crate::ast::{Merge, MergeAction, MergeWhen};

impl Display for Merge {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(
            f,
            "{}MERGE {}INTO {}{}{} USING {} ON {}",
            With(&self.xml_namespaces, &self.ctes),
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
