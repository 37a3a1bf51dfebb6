//! How a transaction ends, or part of it is undone: savepoints and rollback to one (or to a
//! statement's mark), commit (two-phase when it wrote to several logged databases), rollback,
//! the drop of an abandoned transaction (which rolls it back), and the reuse of its buffers by
//! the thread's next transaction. Locks are released only after the commit record is appended
//! (rule W5). Undo is [`undo_entries`], which recovery runs too: it walks the undo log newest
//! first and logs a compensation record for each entry.

use std::sync::Arc;

use walden_log::policy::{resolve, CommitOption, Override};
use walden_log::Durability;

use super::{
    fail, CommitOutcome, Participant, Transaction, Unwaited, SPARE_PARTS, SPARE_PART_LIST,
};
use crate::database::{unreadable_undo, Database, LogMode, PoppedUndo, UndoLog, UndoRef};
use crate::deferred_commit::DeferredCommits;
use crate::error::EngineError;

impl Transaction {
    /// A mark of the undo position in every database, for statement-level rollback.
    pub fn undo_mark(&self) -> Vec<usize> {
        self.parts.iter().map(|p| p.undo.len()).collect()
    }

    /// Undoes everything after `mark` (a failed statement), keeping the locks.
    pub fn rollback_to_mark(&mut self, mark: &[usize]) -> Result<(), EngineError> {
        for (p, part) in self.parts.iter_mut().enumerate() {
            let keep = mark.get(p).copied().unwrap_or(0);
            if keep < part.undo.len() {
                self.own_changes += 1;
                undo_entries(&part.db, part.txn, &mut part.undo, keep)?;
                if part.ddl {
                    part.db.reload_catalog_after_rollback()?;
                }
                restore_identities(part, keep);
            }
        }
        Ok(())
    }

    /// Sets a savepoint (SAVE TRANSACTION); a name used twice refers to the newer one.
    pub fn save(&mut self, name: &str) {
        let marks = self.parts.iter().map(|p| p.undo.len()).collect();
        self.savepoints.push((name.to_string(), marks));
    }

    /// Whether a savepoint of this name exists.
    pub fn has_savepoint(&self, name: &str) -> bool {
        self.savepoints.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// Rolls back to a savepoint; locks are kept, as in SQL Server. Error 6401 if unknown.
    pub fn rollback_to(&mut self, name: &str) -> Result<(), EngineError> {
        let Some(i) = self.savepoints.iter().rposition(|(n, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(EngineError::Invalid(format!(
                "Cannot roll back {name}. No transaction or savepoint of that name was found."
            )));
        };
        let marks = self.savepoints[i].1.clone();
        self.savepoints.truncate(i + 1);
        self.rollback_to_mark(&marks)
    }

    /// Commits. `option` is the COMMIT's DELAYED_DURABILITY option; each database's setting
    /// decides with it (the guide's table), and DDL or a transaction spanning databases is
    /// always fully durable.
    ///
    /// Spanning databases, the commit is two-phase: every participant but the last is first
    /// hardened up to its last change (phase 1: its changes are durable, not yet committed),
    /// then the coordinator durably records the global commit (the commit point), then each
    /// participant appends its commit record. Recovery of a participant whose commit record
    /// is missing consults the coordinator's record before undoing it. Without a coordinator
    /// (a bare engine in a test), the participants are committed fully durably one by one.
    // Inline: see `Instance::begin`.
    #[inline]
    pub fn commit(mut self, option: CommitOption) -> Result<CommitOutcome, EngineError> {
        self.commit_in_place(option)
    }

    /// Commits as [`Transaction::commit`] does, where the transaction lies: it is over
    /// afterwards (whatever the result), and dropping it only frees its memory. A session's
    /// autocommit transaction is several hundred bytes; ending it where it is, rather than
    /// moving it out to `commit` it, saves a copy of it per statement.
    pub fn commit_in_place(&mut self, option: CommitOption) -> Result<CommitOutcome, EngineError> {
        debug_assert!(!self.finished, "a transaction is committed once");
        let result = self.commit_inner(option);
        self.finished = true;
        self.leave_writers();
        self.services.locks.release_all(&mut self.owner);
        result
    }

    /// Commits as [`Transaction::commit`] does, except that a commit that is fully durable in
    /// one database and changed no catalog there does not wait for its log flush: its commit
    /// record is appended (no flush starts for it) and the transaction, still
    /// holding its locks, goes to `deferred`, which ends it once the record is hardened
    /// (`deferred_commit.rs` says why nobody can tell the difference). The outcome then says
    /// the commit is not hardened.
    pub fn commit_deferring(
        mut self,
        option: CommitOption,
        deferred: &DeferredCommits,
    ) -> Result<CommitOutcome, EngineError> {
        let result = self.commit_parts(option, true);
        self.finished = true;
        match result {
            Ok((outcome, Some((db, lsn)))) => {
                deferred.push(self, db, lsn);
                Ok(outcome)
            }
            other => {
                self.leave_writers();
                self.services.locks.release_all(&mut self.owner);
                other.map(|(outcome, _)| outcome)
            }
        }
    }

    /// Ends a transaction [`Transaction::commit_deferring`] deferred, once its commit is
    /// hardened: what `commit` does after the commit record.
    pub(crate) fn end_deferred(mut self) {
        self.leave_writers();
        self.services.locks.release_all(&mut self.owner);
    }

    fn commit_inner(&mut self, option: CommitOption) -> Result<CommitOutcome, EngineError> {
        self.commit_parts(option, false).map(|(outcome, _)| outcome)
    }

    /// Appends the commit records. With `defer`, a commit that is fully durable in a single
    /// database and changed no catalog there is appended without waiting for its flush, and
    /// its database and LSN are returned for the wait.
    fn commit_parts(
        &mut self,
        option: CommitOption,
        defer: bool,
    ) -> Result<(CommitOutcome, Option<Unwaited>), EngineError> {
        let logged = |p: &&Participant| (!p.undo.is_empty() || p.ddl) && !p.db.is_temp();
        let spans = self.parts.iter().filter(logged).count() > 1;
        let mut outcome = CommitOutcome { hardened: true, ..CommitOutcome::default() };
        let mut waits = None;
        if spans {
            if let Some(c) = &self.services.coordinator {
                let gtid = c.new_gtid();
                for part in self.parts.iter().filter(logged) {
                    part.db.prepare_txn(part.txn, gtid)?;
                }
                c.record_commit(gtid)?;
            }
        }
        for part in &self.parts {
            if part.undo.is_empty() && !part.ddl {
                part.db.forget_txn(part.txn);
                continue;
            }
            let over = if part.ddl || spans { Override::AlwaysFull } else { Override::None };
            let durability = if part.db.is_temp() {
                Durability::Delayed
            } else {
                resolve(part.db.delayed_durability(), option, over)
            };
            let unwaited = defer && over == Override::None && durability == Durability::Full;
            let receipt = if unwaited {
                let receipt = part.db.commit_txn_deferred(part.txn)?;
                if !receipt.hardened {
                    waits = Some((Arc::clone(&part.db), receipt.lsn));
                }
                receipt
            } else {
                part.db.commit_txn(part.txn, durability)?
            };
            if durability == Durability::Delayed && !part.db.is_temp() {
                outcome.delayed = true;
            }
            outcome.lsn = receipt.lsn;
            outcome.database = part.db.id();
            outcome.hardened &= receipt.hardened;
        }
        Ok((outcome, waits))
    }

    /// Rolls everything back and releases the locks.
    pub fn rollback(mut self) -> Result<(), EngineError> {
        let result = self.rollback_inner();
        self.finished = true;
        self.leave_writers();
        self.services.locks.release_all(&mut self.owner);
        result
    }

    fn rollback_inner(&mut self) -> Result<(), EngineError> {
        let mut first_err = None;
        for part in &mut self.parts {
            let mut result = undo_entries(&part.db, part.txn, &mut part.undo, 0)
                .and_then(|()| part.db.abort_txn(part.txn));
            if result.is_ok() && part.ddl {
                result = part.db.reload_catalog_after_rollback();
            }
            restore_identities(part, 0);
            part.undo.clear();
            if let Err(e) = result {
                part.db.take_offline(format!("rollback failed: {e}"));
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if !self.finished {
            // A session that went away: roll back; a failure has already taken the database
            // offline, and there is nobody left to tell.
            let _ = self.rollback_inner();
            self.leave_writers();
            self.services.locks.release_all(&mut self.owner);
        }
        self.recycle();
    }
}

impl Transaction {
    /// Leaves the memory of the participant list and of the undo logs to the next
    /// transaction this thread begins, once this one is over. The databases are not kept:
    /// only the emptied buffers are.
    fn recycle(&mut self) {
        let mut parts = std::mem::take(&mut self.parts);
        if parts.capacity() > SPARE_PARTS {
            return;
        }
        // Each undo log is taken out in place: moving whole participants out costs more.
        for part in &mut parts {
            std::mem::take(&mut part.undo).recycle();
        }
        parts.clear();
        // The thread may be exiting, its spare gone already: then the memory just goes.
        let _ = SPARE_PART_LIST.try_with(|spare| spare.set(parts));
    }
}

/// Puts back the identity cache entries of the TRUNCATEs a rollback to undo position `keep`
/// undid, newest first: those recorded past `keep` (a truncate records the position after
/// its own catalog change).
fn restore_identities(part: &mut Participant, keep: usize) {
    while let Some(&(at, table, saved)) = part.identity_resets.last() {
        if at <= keep {
            break;
        }
        part.db.restore_identity(table, saved);
        part.identity_resets.pop();
    }
}

/// Undoes entries `keep..` of `entries`, newest first, logging a compensation record for each,
/// and takes them off the log.
///
/// The keys of one rows record (a bulk load's run) are entries with the same LSN: the
/// compensation of any but the run's first names the run itself as what is left to undo, so
/// recovery after a crash in the middle of the run undoes all of it again. That is harmless:
/// the transaction still holds the table in X (a run is gathered only then), so a key it
/// deleted is still absent, and deleting an absent key changes nothing and logs nothing.
///
/// An entry the log cannot read back (its spill file failed) takes the database offline, as
/// a failed undo does: its restart recovery undoes the transaction from the log instead.
pub(crate) fn undo_entries(
    db: &Database,
    txn: u64,
    entries: &mut UndoLog,
    keep: usize,
) -> Result<(), EngineError> {
    let unreadable = |e: std::io::Error| {
        let err = unreadable_undo(e);
        db.take_offline(err.to_string());
        err
    };
    let mut entry = PoppedUndo::default();
    while entries.len() > keep {
        entries.pop_into(&mut entry).map_err(unreadable)?;
        let undo_next = entries.last_lsn().map_err(unreadable)?.unwrap_or(0);
        let mut logger = db.logger(txn, LogMode::Compensation { undo_next });
        let tree = db.space().tree(entry.root);
        let key = entry.key();
        // A rollback must not fail for want of room its changes had: it may take the data
        // file past MAXSIZE (a re-inserted row can split a page the others filled meanwhile).
        let result = walden_storage::file::past_max_size(|| match entry.undo() {
            UndoRef::Delete => tree.delete(&mut logger, key).map(|_| ()),
            UndoRef::Insert(value) => tree.insert(&mut logger, key, value),
            UndoRef::Restore(value) => tree.update(&mut logger, key, value).map(|_| ()),
        });
        logger.finish();
        result.map_err(|e| fail(db, e))?;
    }
    Ok(())
}
