//! The table locks a READ COMMITTED statement gives back when it ends.
//!
//! SQL Server holds a READ COMMITTED (or READ UNCOMMITTED) statement's intent lock on a table
//! it reads (IS), and the S of its `TABLOCK` hint, only while the statement runs: a
//! transaction that has only read a table keeps nothing on it, so another session's DDL on
//! the table does not wait for the transaction to end. Walden's table lock is also what keeps
//! the table's definition stable while a statement reads it (SQL Server's Sch-S), which ends
//! with the statement as well.
//!
//! `lock_table` notes each such lock that a statement takes *fresh* (the transaction held
//! nothing on the table before) in `statement_locks`; the SQL layer takes a mark of that list
//! before each statement and calls [`Transaction::end_statement_locks`] with it after, which
//! gives back the locks noted since the mark, newest first. Nested statements (a trigger's, a
//! function's, a procedure's) take their own marks, and a lock an outer statement took before
//! an inner one began is before the inner mark, so it outlives the inner statement.
//!
//! A noted lock is kept to the end of the transaction instead when the transaction has since
//! come to need it for something else: it holds it in another mode now (a write converted IS
//! to IX, a DDL took X: `LockManager::unlock_table_in` releases only the mode noted), or it
//! holds key locks on the table (a `HOLDLOCK`, `UPDLOCK` or REPEATABLE READ read of the same
//! table in the statement), which the table's intent lock must cover.

use super::{Isolation, Transaction};
use crate::lock::{LockMode, Resource};

/// A transaction's position in its list of statement locks when a statement began: see
/// [`Transaction::statement_locks_mark`].
#[derive(Debug, Clone, Copy)]
pub struct StatementLocksMark {
    /// The transaction the mark is of: a statement may end another transaction and begin a
    /// new one, all of whose locks it took.
    owner: u64,
    len: usize,
}

impl Transaction {
    /// Where the statement about to run begins in this transaction's statement locks.
    pub fn statement_locks_mark(&self) -> StatementLocksMark {
        StatementLocksMark { owner: self.owner.id(), len: self.statement_locks.len() }
    }

    /// Gives back the table locks noted since `mark` (all of this transaction's, if `mark`
    /// is of none or of another transaction) that nothing else needs: what a statement
    /// does as it ends, whether it succeeded or not.
    pub fn end_statement_locks(&mut self, mark: Option<StatementLocksMark>) {
        let keep = mark.filter(|m| m.owner == self.owner.id()).map_or(0, |m| m.len);
        while self.statement_locks.len() > keep {
            let newest = self.statement_locks.len() - 1;
            let Some(((db, object), mode)) = self.statement_locks.remove(newest) else {
                break;
            };
            if self.owner.key_lock_count(db, object) != 0 {
                continue;
            }
            let res = Resource::Object { db, object };
            if self.services.locks.unlock_table_in(&mut self.owner, &res, mode) {
                self.forget_table_lock(db, object);
            }
        }
    }

    /// Notes that the running statement took `mode` on table (db, object), which the
    /// transaction held nothing on before: given back when the statement ends if the table
    /// is read at READ COMMITTED or below and the lock is its IS, or a `TABLOCK`'s S.
    pub(crate) fn note_statement_lock(&mut self, db: u32, object: u32, mode: LockMode) {
        let read_only_for_the_statement = matches!(mode, LockMode::IS | LockMode::S)
            && self.table_isolation(db, object) != Isolation::Serializable;
        if read_only_for_the_statement {
            self.statement_locks.push(((db, object), mode));
        }
    }

    /// Forgets the table lock on (db, object), given back.
    fn forget_table_lock(&mut self, db: u32, object: u32) {
        let at = self.table_locks.iter().position(|(t, _)| *t == (db, object));
        if let Some(at) = at {
            self.table_locks.remove(at);
        }
    }
}
