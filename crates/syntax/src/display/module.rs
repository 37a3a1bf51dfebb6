//! Prints procedures, views, functions, triggers and `BEGIN ATOMIC` blocks.

use std::fmt::{Display, Formatter, Result};

use super::{commas, quote, Separated, SetValue, StatementList};
use crate::ast::{
    AtomicBlock, AtomicOption, CreateFunction, CreateMode, CreateProcedure, CreateTrigger,
    CreateView, EnableTrigger, FunctionBody, ProcedureParameter, TriggerEvent,
};

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
            FunctionBody::InlineTable(query) => write!(f, " AS RETURN {query}"),
        }
    }
}

impl Display for CreateTrigger {
    fn fmt(&self, f: &mut Formatter<'_>) -> Result {
        let mode = self.mode;
        let timing = if self.instead_of { "INSTEAD OF" } else { "AFTER" };
        write!(f, "{mode} TRIGGER {} ON ", self.name)?;
        match &self.table {
            Some(table) => write!(f, "{table} {timing} {}", commas(&self.events))?,
            None => write!(f, "DATABASE {timing} {}", commas(&self.ddl_events))?,
        }
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
            write!(f, "{verb} TRIGGER ALL ON ")?;
        } else {
            write!(f, "{verb} TRIGGER {} ON ", commas(&self.names))?;
        }
        match &self.table {
            Some(table) => write!(f, "{table}"),
            None => f.write_str("DATABASE"),
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
            AtomicOption::Language(name) => write!(f, "LANGUAGE = N{}", quote(name)),
            AtomicOption::DateFirst(value) => write!(f, "DATEFIRST = {}", SetValue(value)),
            AtomicOption::DateFormat(value) => write!(f, "DATEFORMAT = {}", SetValue(value)),
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
