//! Prints variables, control flow, transactions, `EXECUTE` and `DBCC` arguments.

use std::fmt::{self, Display, Formatter, Result, Write};

use super::{commas, SetValue};
use crate::ast::{
    AssignOp, DbccArgument, Declaration, DeclarationKind, ExecArgument, Execute, IsolationLevel,
    ProcedureRef, Raiserror, RaiserrorOption, SetStatement, TransactionName, TransactionStatement,
};

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
            SetStatement::Valued { name, value } => write!(f, "SET {name} {}", SetValue(value)),
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

impl fmt::Display for DbccArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbccArgument::Name(name) => write!(f, "{name}"),
            DbccArgument::Value(value) => write!(f, "{value}"),
        }
    }
}
