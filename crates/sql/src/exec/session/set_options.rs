//! `SET`: the session's options (the ON/OFF ones, the valued ones such as `TEXTSIZE` and
//! `DATEFORMAT`, `LOCK_TIMEOUT`, `TRANSACTION ISOLATION LEVEL`, `IDENTITY_INSERT`), `SET
//! @variable`, and how the options are shown: `@@OPTIONS` and `sys.dm_exec_sessions`.
//!
//! The options that change what expressions compute live in `exec::options`
//! ([`Semantics`](crate::exec::options::Semantics)); this file runs the statements and keeps
//! the rest of [`Options`](super::Options).

use std::time::Duration;

use walden_engine::types::{SqlType, Value};
use walden_engine::Isolation;

use crate::ast::{IsolationLevel, ObjectName, SetStatement};
use crate::exec::execute::query::TableRef;
use crate::exec::plan::showplan::Showplan;
use crate::exec::scalar;
use crate::exec::sysviews::PublishedOptions;
use crate::exec::SqlError;

use super::{IdentityInsert, Run, Session};

/// `SET TEXTSIZE 0`'s value: SQL Server's default of 4 KB.
const DEFAULT_TEXTSIZE: i64 = 4096;

impl Session {
    /// `@@OPTIONS`: SQL Server's bits of the session's SET options.
    pub(crate) fn options_bits(&self) -> i32 {
        let bit = |on: bool, value: i32| if on { value } else { 0 };
        self.opts.semantics.bits()
            | bit(self.opts.implicit_transactions, 2)
            | bit(self.opts.nocount, 512)
            | bit(self.opts.xact_abort, 16384)
    }

    /// Shows the session's options to other sessions (`sys.dm_exec_sessions`).
    pub(crate) fn publish_options(&self) {
        let o = &self.opts;
        self.activity.options_changed(&PublishedOptions {
            bits: self.options_bits(),
            ansi_defaults: o.semantics.ansi_defaults(o.implicit_transactions),
            date_format: o.semantics.date_order.name(),
            date_first: o.semantics.date_first,
            language: o.semantics.language.name,
            text_size: o.textsize,
        });
    }
}

impl Run<'_> {
    /// Runs a `SET` statement.
    pub(super) fn set(&mut self, set: &SetStatement) -> Result<(), SqlError> {
        match set {
            SetStatement::Variable { name, op, value } => {
                self.variable_at(name)?;
                let v = self.value(value)?;
                self.assign_to(name, *op, v)
            }
            SetStatement::Options { names, on } => {
                for n in names {
                    match n.to_ascii_uppercase().as_str() {
                        "NOCOUNT" => self.s.opts.nocount = *on,
                        "XACT_ABORT" => self.s.opts.xact_abort = *on,
                        "IMPLICIT_TRANSACTIONS" => self.s.opts.implicit_transactions = *on,
                        "NOEXEC" | "PARSEONLY" => self.s.opts.noexec = *on,
                        "FMTONLY" => self.s.opts.fmtonly = *on,
                        "STATISTICS IO" => self.s.opts.statistics_io = *on,
                        "STATISTICS TIME" => self.s.opts.statistics_time = *on,
                        "SHOWPLAN_TEXT" => {
                            self.s.opts.showplan = on.then_some(Showplan::Text);
                        }
                        "SHOWPLAN_ALL" => self.s.opts.showplan = on.then_some(Showplan::All),
                        "SHOWPLAN_XML" => self.s.opts.showplan = on.then_some(Showplan::Xml),
                        "QUOTED_IDENTIFIER" => {
                            // Batches are parsed under the setting: those cached under the
                            // other one would read `"text"` wrongly.
                            if self.s.opts.semantics.quoted_identifier != *on {
                                self.s.batches.clear();
                                self.s.batch_bytes = 0;
                            }
                            self.s.opts.semantics.quoted_identifier = *on;
                        }
                        "ANSI_DEFAULTS" => {
                            self.s.opts.semantics.set_flag("ANSI_DEFAULTS", *on);
                            self.s.opts.implicit_transactions = *on;
                        }
                        // ANSI_NULLS, ANSI_WARNINGS, ARITHABORT... (`options.rs`); the others
                        // (FORCEPLAN, NO_BROWSETABLE, REMOTE_PROC_TRANSACTIONS...) change
                        // nothing Walden has and are accepted.
                        other => {
                            self.s.opts.semantics.set_flag(other, *on);
                        }
                    }
                }
                self.options_changed();
                Ok(())
            }
            SetStatement::LockTimeout(e) => {
                let v = self.value(e)?;
                let ms = match scalar::convert(v, SqlType::BigInt, None)? {
                    Value::BigInt(ms) => ms,
                    _ => -1,
                };
                self.s.opts.lock_timeout =
                    if ms < 0 { None } else { Some(Duration::from_millis(ms.unsigned_abs())) };
                if let Some(tx) = self.s.tx.as_mut() {
                    tx.set_lock_timeout(self.s.opts.lock_timeout);
                }
                Ok(())
            }
            SetStatement::IsolationLevel(level) => {
                self.s.opts.isolation_level = *level;
                self.s.opts.isolation = match level {
                    IsolationLevel::Serializable | IsolationLevel::RepeatableRead => {
                        Isolation::Serializable
                    }
                    IsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
                    _ => Isolation::ReadCommitted,
                };
                if let Some(tx) = self.s.tx.as_mut() {
                    tx.set_isolation(self.s.opts.isolation);
                }
                Ok(())
            }
            SetStatement::Valued { name, value } => {
                self.set_valued(name, value)?;
                self.options_changed();
                Ok(())
            }
            SetStatement::IdentityInsert { table, on } => self.set_identity_insert(table, *on),
        }
    }

    /// A SET statement changed the session's options.
    fn options_changed(&mut self) {
        self.s.publish_options();
    }

    /// `SET TEXTSIZE | DATEFIRST | DATEFORMAT | DEADLOCK_PRIORITY`: what drivers send at login
    /// is accepted; a value that would change behaviour Walden does not have is refused.
    pub(super) fn set_valued(&mut self, name: &str, value: &str) -> Result<(), SqlError> {
        match name {
            // As in SQL Server: 0 restores the default of 4 KB, and -1 (any negative) means no
            // limit, which `@@TEXTSIZE` reports as -1 and the output reads as unlimited.
            "TEXTSIZE" => {
                let n = self.set_number(value)?;
                self.s.opts.textsize = match n {
                    0 => DEFAULT_TEXTSIZE,
                    n if n < 0 => -1,
                    n => n.min(i64::from(i32::MAX)),
                };
                self.out.text_size(self.s.opts.textsize);
                Ok(())
            }
            // 0 turns the limit off, as in SQL Server.
            "ROWCOUNT" => {
                let n = self.set_number(value)?;
                if n < 0 {
                    return Err(SqlError::new(
                        50000,
                        format!("SET ROWCOUNT takes a count of 0 or more, not {n}."),
                    ));
                }
                self.s.opts.rowcount = usize::try_from(n).unwrap_or(usize::MAX);
                Ok(())
            }
            "DATEFIRST" => {
                let n = self.set_number(value)?;
                self.s.opts.semantics.set_date_first(n)
            }
            "DATEFORMAT" => {
                let text = self.set_text(value)?;
                self.s.opts.semantics.set_date_format(&text)
            }
            // Date names follow the language; messages stay English.
            "LANGUAGE" => {
                let language = self.s.opts.semantics.set_language(&self.set_text(value)?)?;
                let msg = SqlError::with_severity(
                    5703,
                    0,
                    format!("Changed language setting to {}.", language.name),
                );
                self.out.message(&msg);
                Ok(())
            }
            // The victim of a deadlock is always the transaction that closes the cycle.
            "DEADLOCK_PRIORITY" => Ok(()),
            _ => Err(unsupported_setting(name, value)),
        }
    }

    /// The text a valued SET option is given: the word or string, or a variable's value.
    fn set_text(&self, value: &str) -> Result<String, SqlError> {
        if value.starts_with('@') {
            return Ok(scalar::to_text(&self.variable(value)?.value));
        }
        Ok(value.to_string())
    }

    /// The number a valued SET option is given: a literal or a variable's value. Read only by
    /// the options that take a number (`DEADLOCK_PRIORITY @v` may hold `'LOW'`).
    fn set_number(&self, value: &str) -> Result<i64, SqlError> {
        let number = if value.starts_with('@') {
            let v = self.variable(value)?.value.clone();
            match scalar::convert(v, SqlType::BigInt, None)? {
                Value::BigInt(n) => Some(n),
                _ => None,
            }
        } else {
            value.parse::<i64>().ok()
        };
        number.ok_or_else(|| SqlError::new(102, format!("Incorrect syntax near '{value}'.")))
    }

    /// `SET IDENTITY_INSERT table ON | OFF`: explicit values for the identity column of one
    /// table per session, as in SQL Server (errors 1088, 8106 and 8107).
    fn set_identity_insert(&mut self, name: &ObjectName, on: bool) -> Result<(), SqlError> {
        let t = self.resolve_table(name, &name.name.value).map_err(|e| {
            if e.number == 208 {
                SqlError::new(1088, format!("Cannot find the object \"{name}\" because it does not exist or you do not have permissions."))
            } else {
                e
            }
        })?;
        if t.def.identity_column().is_none() {
            return Err(SqlError::new(
                8106,
                format!("Table '{name}' does not have the identity property. Cannot perform SET operation."),
            ));
        }
        let this = IdentityInsert {
            db: t.db.id(),
            table: t.def.id,
            name: format!("{}.{}.{}", t.db.name(), t.def.schema, t.qual),
        };
        match &self.s.identity_insert {
            Some(held) if (held.db, held.table) != (this.db, this.table) => {
                if on {
                    return Err(SqlError::new(
                        8107,
                        format!("IDENTITY_INSERT is already ON for table '{}'. Cannot perform SET operation for table '{name}'.", held.name),
                    ));
                }
            }
            _ => self.s.identity_insert = on.then_some(this),
        }
        Ok(())
    }

    /// Whether `SET IDENTITY_INSERT` is ON for `t` in this session.
    pub(crate) fn identity_insert_on(&self, t: &TableRef) -> bool {
        self.s.identity_insert.as_ref().is_some_and(|h| (h.db, h.table) == (t.db.id(), t.def.id))
    }
}

/// A `SET` option Walden does not know.
fn unsupported_setting(name: &str, value: &str) -> SqlError {
    SqlError::new(
        50000,
        format!("SET {name} {value} is not supported by Walden (only the default is)."),
    )
}
