//! Table hints (`FROM t WITH (UPDLOCK, HOLDLOCK)`, `UPDATE t WITH (TABLOCKX)`, `t (NOLOCK)`):
//! the locking ones change how the statement locks that table, as SQL Server's do (`READPAST`
//! skips the rows other transactions hold); the others are accepted and change nothing.
//!
//! A statement's hints are pushed onto its transaction when the table is resolved
//! ([`Run::apply_table_hints`]) and taken back when the statement ends (`Run::statement`),
//! so they last exactly as long as the statement that wrote them: the engine looks them up
//! by table on each lock it takes (`Transaction::table_isolation`, `key_read_mode`,
//! `range_read_mode`, `lock_table`). `docs/locking.md` lists what each one locks.

use walden_engine::lock::LockMode;
use walden_engine::{Isolation, ReadIntent, TableHint};

use crate::ast::{IsolationLevel, TableHint as Written};
use crate::exec::execute::query::TableRef;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Hints that change nothing in Walden: row and page granularity (Walden locks rows),
/// index and plan choices (the planner's), and the load options of INSERT.
const WITHOUT_EFFECT: &[&str] = &[
    "ROWLOCK",
    "PAGLOCK",
    "INDEX",
    "FORCESEEK",
    "FORCESCAN",
    "NOEXPAND",
    "FASTFIRSTROW",
    "KEEPIDENTITY",
    "KEEPDEFAULTS",
    "IGNORE_CONSTRAINTS",
    "IGNORE_TRIGGERS",
];

/// What a list of hints asks of one table, or SQL Server's error for the list.
pub(crate) fn parse(hints: &[Written], target: bool) -> Result<Option<TableHint>, SqlError> {
    if hints.is_empty() {
        return Ok(None);
    }
    let mut hint = TableHint::default();
    let (mut dirty, mut locking, mut tablock, mut held) = (false, false, false, false);
    for h in hints {
        let name = h.name.value.to_ascii_uppercase();
        match name.as_str() {
            "NOLOCK" | "READUNCOMMITTED" => {
                dirty = true;
                hint.isolation = Some(Isolation::ReadUncommitted);
            }
            "READCOMMITTED" | "READCOMMITTEDLOCK" => {
                hint.isolation = Some(Isolation::ReadCommitted);
            }
            "HOLDLOCK" | "SERIALIZABLE" => {
                locking = true;
                held = true;
                hint.isolation = Some(Isolation::Serializable);
            }
            "REPEATABLEREAD" => {
                locking = true;
                hint.isolation = Some(Isolation::Serializable);
            }
            "UPDLOCK" => {
                locking = true;
                if hint.intent == ReadIntent::Share {
                    hint.intent = ReadIntent::Update;
                }
            }
            "XLOCK" => {
                locking = true;
                hint.intent = ReadIntent::Exclusive;
            }
            "TABLOCK" => tablock = true,
            "TABLOCKX" => {
                locking = true;
                hint.table = Some(LockMode::X);
            }
            "NOWAIT" => hint.nowait = true,
            "READPAST" => {
                locking = true;
                hint.readpast = true;
            }
            n if WITHOUT_EFFECT.contains(&n) => {}
            _ => {
                return Err(SqlError::new(
                    321,
                    format!(
                        "{} is not a recognized table hints option. If it is intended as a parameter to a table-valued function or to the CHANGETABLE function, ensure that your database compatibility mode is set to 90.",
                        h.name.value
                    ),
                ))
            }
        }
    }
    if dirty && locking {
        return Err(SqlError::new(1047, "Conflicting locking hints specified."));
    }
    if hint.readpast && held {
        return Err(readpast_refused());
    }
    if dirty && target {
        return Err(SqlError::new(
            1065,
            "The NOLOCK and READUNCOMMITTED lock hints are not allowed for target tables of INSERT, UPDATE, DELETE or MERGE statements.",
        ));
    }
    if tablock && hint.table.is_none() {
        // TABLOCK takes the table in the mode its rows would be locked in.
        hint.table = Some(match hint.intent {
            ReadIntent::Share => LockMode::S,
            ReadIntent::Update => LockMode::U,
            ReadIntent::Exclusive => LockMode::X,
        });
    }
    Ok(Some(hint))
}

impl Run<'_> {
    /// Applies the hints written on table `t` to the rest of the statement (refusing a bad
    /// list); `target`: the table is the one an INSERT, UPDATE, DELETE or MERGE changes.
    pub(crate) fn apply_table_hints(
        &mut self,
        t: &TableRef,
        hints: &[Written],
        target: bool,
    ) -> Result<(), SqlError> {
        if let Some(hint) = parse(hints, target)? {
            // A level that READPAST cannot read past at: READ UNCOMMITTED reads locked rows
            // anyway, SERIALIZABLE must not skip any (a hint's own level was checked above).
            let level = self.s.opts.isolation_level;
            if hint.readpast
                && hint.isolation.is_none()
                && matches!(level, IsolationLevel::ReadUncommitted | IsolationLevel::Serializable)
            {
                return Err(readpast_refused());
            }
            let (db, object) = (t.db.id(), t.def.id);
            self.tx().push_table_hint(db, object, hint);
        }
        Ok(())
    }
}

/// Error 650: `READPAST` at a level other than READ COMMITTED or REPEATABLE READ.
fn readpast_refused() -> SqlError {
    SqlError::new(
        650,
        "You can only specify the READPAST lock in the READ COMMITTED or REPEATABLE READ isolation levels.",
    )
}
