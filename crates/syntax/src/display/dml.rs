//! Prints `INSERT`, `UPDATE`, `DELETE` and `OUTPUT` clauses.

use std::fmt::{Display, Formatter, Result};

use super::query::{rows_of, FromClause, OptionClause, OptionalTop, TableHints, WhereClause, With};
use super::{commas, ColumnList, Separated};
use crate::ast::{
    Assignment, AssignmentTarget, Delete, Insert, InsertSource, OutputClause, TableTarget, Update,
};

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
            With(&self.xml_namespaces, &self.ctes),
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

impl Display for Update {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        write!(
            f,
            "{}UPDATE {}{}{} SET {}{}{}{}{}",
            With(&self.xml_namespaces, &self.ctes),
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
pub(super) struct OptionalOutput<'a>(pub(super) &'a Option<Box<OutputClause>>);

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
            With(&self.xml_namespaces, &self.ctes),
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
