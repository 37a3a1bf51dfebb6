//! Writing a database's log: the logger a tree operation describes its changes to (one record
//! per row change, carrying its undo, or per structure change, holding the redo-point gate
//! from its first record until its pages are marked dirty: rule W3), and the commit, abort and
//! prepare records that end a transaction. tempdb logs nothing, and each of these then does
//! nothing.

use std::sync::{PoisonError, RwLockReadGuard};

use walden_log::{Durability, LogError, MAX_RECORD_LEN};
use walden_storage::btree::{Change, ChangeKind, TreeError, TreeLog};
use walden_storage::redo::PageOp;
use walden_storage::{Lsn, PageId};

use super::undo::RowUndo;
use super::Database;
use crate::error::EngineError;
use crate::wal::{self, Undo};

impl Database {
    /// A logger for tree operations of transaction `txn` (0: the system).
    pub(crate) fn logger<'d>(&'d self, txn: u64, mode: LogMode<'d>) -> DbLogger<'d> {
        self.owned_logger(txn, 0, mode)
    }

    /// A logger for tree operations of transaction `txn` of lock owner `owner`: the log keeps
    /// the owner with the open transaction, which names its session for `DBCC OPENTRAN`.
    pub(crate) fn owned_logger<'d>(
        &'d self,
        txn: u64,
        owner: u64,
        mode: LogMode<'d>,
    ) -> DbLogger<'d> {
        DbLogger { db: self, txn, owner, mode, gate: None, row: None }
    }

    /// Appends a commit record for a transaction that logged something; returns the receipt
    /// (the caller releases locks afterwards, rule W5).
    pub(crate) fn commit_txn(
        &self,
        txn: u64,
        durability: Durability,
    ) -> Result<walden_log::CommitReceipt, EngineError> {
        let Some(log) = &self.log else {
            // tempdb logs nothing: nothing to harden, and no last commit to record.
            return Ok(walden_log::CommitReceipt { lsn: 0, hardened: true, commit_time_us: 0 });
        };
        Ok(log.append_commit(txn, durability)?)
    }

    /// Commits system transaction `txn` fully durably without waiting: the log starts its
    /// flush at once; [`Database::harden_commit`] waits for it. In tempdb, which logs nothing,
    /// there is nothing to harden.
    pub(crate) fn commit_txn_unwaited(
        &self,
        txn: u64,
    ) -> Result<walden_log::CommitReceipt, EngineError> {
        let Some(log) = &self.log else {
            return Ok(walden_log::CommitReceipt { lsn: 0, hardened: true, commit_time_us: 0 });
        };
        Ok(log.append_commit_unwaited(txn)?)
    }

    /// Commits transaction `txn` fully durably without waiting, and without starting a flush:
    /// [`Database::harden_commit`] flushes and waits for it, once for many such commits
    /// (`deferred_commit.rs`). In tempdb, which logs nothing, there is nothing to harden.
    pub(crate) fn commit_txn_deferred(
        &self,
        txn: u64,
    ) -> Result<walden_log::CommitReceipt, EngineError> {
        let Some(log) = &self.log else {
            return Ok(walden_log::CommitReceipt { lsn: 0, hardened: true, commit_time_us: 0 });
        };
        Ok(log.append_commit_deferred(txn)?)
    }

    /// Returns once the commit at `lsn` is hardened, flushing for it if no flush has yet.
    pub(crate) fn harden_commit(&self, lsn: Lsn) -> Result<(), EngineError> {
        match &self.log {
            Some(log) => Ok(log.harden_commit(lsn)?),
            None => Ok(()),
        }
    }

    /// Forgets a transaction with no change left to commit: one that logged nothing, or
    /// whose changes were all undone within it.
    pub(crate) fn forget_txn(&self, txn: u64) {
        if let Some(log) = &self.log {
            log.forget_txn(txn);
        }
    }

    /// Appends the abort record of a transaction whose changes were all undone.
    pub(crate) fn abort_txn(&self, txn: u64) -> Result<(), EngineError> {
        match &self.log {
            Some(log) => log.append_abort(txn).map(|_| ()).map_err(EngineError::from),
            None => Ok(()),
        }
    }

    /// Hardens the whole log (`sys.sp_flush_log`).
    pub fn flush_log(&self) -> Result<Lsn, EngineError> {
        match &self.log {
            Some(log) => Ok(log.flush_log()?),
            None => Ok(0),
        }
    }

    /// The last commit known: (LSN, commit time in microseconds since the Unix epoch).
    pub fn last_commit(&self) -> (Lsn, u64) {
        self.log.as_ref().map_or((0, 0), |log| log.last_commit())
    }

    /// Phase 1 of a commit spanning databases: logs that `txn` is prepared as part of global
    /// transaction `gtid` and hardens the log.
    pub(crate) fn prepare_txn(&self, txn: u64, gtid: u64) -> Result<(), EngineError> {
        if let Some(log) = &self.log {
            let lsn = log.append_payload(txn, &wal::prepare(gtid))?;
            log.flush_to(lsn)?;
        }
        Ok(())
    }
}

/// What a [`DbLogger`] logs a row change as.
#[derive(Debug, Clone)]
pub(crate) enum LogMode<'k> {
    /// Only structure changes are expected.
    Structure,
    /// A transaction's row change; its undo follows from the kind and the old value the tree
    /// hands the logger.
    Row { root: PageId, key: &'k [u8], kind: RowKind },
    /// A transaction's run of inserts of new keys into one leaf (`BTree::append_run`): each
    /// undone by deleting its key.
    Rows { root: PageId },
    /// The undo of a row change.
    Compensation { undo_next: Lsn },
}

/// What a row change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowKind {
    /// A new key: undone by deleting it.
    Insert,
    /// A new value for a key: undone by putting the old value back.
    Update,
    /// A key removed: undone by inserting it with its old value.
    Delete,
}

impl RowKind {
    fn undo(self, old_value: Option<&[u8]>) -> Undo {
        let old = || old_value.unwrap_or_default().to_vec();
        match self {
            RowKind::Insert => Undo::Delete,
            RowKind::Update => Undo::Restore(old()),
            RowKind::Delete => Undo::Insert(old()),
        }
    }
}

/// Logs tree changes for one operation (see the module docs for the gate).
#[derive(Debug)]
pub(crate) struct DbLogger<'d> {
    db: &'d Database,
    txn: u64,
    /// The lock owner, or 0 (the log's tag for the open transaction).
    owner: u64,
    mode: LogMode<'d>,
    gate: Option<RwLockReadGuard<'d, Lsn>>,
    /// The row change logged in `LogMode::Row` or `LogMode::Rows`: its LSN (0 in tempdb)
    /// and undo.
    row: Option<(Lsn, Undo)>,
}

thread_local! {
    /// The buffer log records are built in, one per thread and reused by every record the
    /// thread logs, so that logging a row change allocates nothing. Taken out while in use
    /// (a nested use would simply start a new one).
    static RECORD_BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Capacity of [`RECORD_BUF`] kept after use: enough for any row change and most structure
/// changes; the buffer of a larger record (a blob's pages) is dropped rather than kept by
/// every thread that ever logged one.
const RECORD_BUF_KEEP: usize = 64 << 10;

impl<'d> DbLogger<'d> {
    /// Ends the operation: releases the gate so a checkpoint may proceed, and returns the
    /// transaction's undo entry for the row change it logged, if it logged one.
    pub(crate) fn finish(&mut self) -> Option<RowUndo<'d>> {
        self.gate = None;
        let (lsn, undo) = self.row.take()?;
        match self.mode {
            LogMode::Row { root, key, .. } => Some(RowUndo { lsn, root, key, undo }),
            _ => None,
        }
    }
}

impl DbLogger<'_> {
    /// The LSN of the row change logged (0 in tempdb), if one was.
    pub(crate) fn row_lsn(&self) -> Option<Lsn> {
        self.row.as_ref().map(|(lsn, _)| *lsn)
    }
}

impl TreeLog for DbLogger<'_> {
    fn log(&mut self, kind: ChangeKind, changes: &[Change<'_>]) -> Result<Lsn, TreeError> {
        let undo = match (&self.mode, kind, changes.first()) {
            (LogMode::Row { kind: row, .. }, ChangeKind::Row, Some(c)) => {
                Some(row.undo(c.old_value))
            }
            (LogMode::Rows { .. }, ChangeKind::Row, Some(_)) => Some(Undo::Delete),
            _ => None,
        };
        let Some(log) = &self.db.log else {
            // tempdb logs nothing; its rollback uses the undo kept in memory (W8).
            if let Some(u) = undo {
                self.row = Some((0, u));
            }
            return Ok(0);
        };
        if self.gate.is_none() {
            self.gate = Some(self.db.gate.read().unwrap_or_else(PoisonError::into_inner));
        }
        let redo_point = self.gate.as_deref().copied().unwrap_or(0);
        let mut buf = RECORD_BUF.take();
        buf.clear();
        let appended =
            self.build(&mut buf, kind, changes, undo.as_ref(), redo_point).and_then(|()| {
                if buf.len() > MAX_RECORD_LEN {
                    return Err(TreeError::Log(format!("a {}-byte log record", buf.len())));
                }
                log.append_tagged_payload(self.txn, self.owner, &buf)
                    .map_err(|e| TreeError::Log(e.to_string()))
            });
        if buf.capacity() <= RECORD_BUF_KEEP {
            RECORD_BUF.set(buf);
        }
        let lsn = appended?;
        // A structure change (a merge after a delete) must not clear the row change's undo.
        if let Some(u) = undo {
            self.row = Some((lsn, u));
        }
        Ok(lsn)
    }
}

impl DbLogger<'_> {
    /// Builds the record of `changes` into `buf`: a row change with its undo (`undo`), a
    /// compensation or a structure change, as the mode and `kind` say.
    fn build(
        &self,
        buf: &mut Vec<u8>,
        kind: ChangeKind,
        changes: &[Change<'_>],
        undo: Option<&Undo>,
        redo_point: Lsn,
    ) -> Result<(), TreeError> {
        // One allocation for the whole record (none once the thread's buffer has grown): its
        // fixed fields (at most 11 bytes before the key and undo value, 9 per change) and the
        // variable parts known here. Only a change logged as an image instead of its ops can
        // outgrow it.
        let undo_len = match undo {
            Some(Undo::Insert(v) | Undo::Restore(v)) => v.len(),
            _ => 0,
        };
        let key_len = match &self.mode {
            LogMode::Row { key, .. } => key.len(),
            _ => 0,
        };
        let ops_len: usize = changes.iter().map(|c| 9 + c.ops.len()).sum();
        buf.reserve(16 + key_len + undo_len + ops_len);
        match (kind, &self.mode) {
            (ChangeKind::Structure, _) | (ChangeKind::Row, LogMode::Structure) => {
                wal::begin_structure(buf, changes.len());
            }
            (ChangeKind::Row, LogMode::Row { root, key, .. }) => {
                let undo =
                    undo.ok_or_else(|| TreeError::Log("a row change without its page".into()))?;
                wal::begin_row(buf, *root, key, undo);
            }
            (ChangeKind::Row, LogMode::Compensation { undo_next }) => {
                wal::begin_compensation(buf, *undo_next);
            }
            (ChangeKind::Row, LogMode::Rows { root }) => {
                let change = changes
                    .first()
                    .ok_or_else(|| TreeError::Log("a rows change without its page".into()))?;
                wal::begin_rows(buf, *root, change.ops)
                    .map_err(|e| TreeError::Log(e.to_string()))?;
            }
        }
        let mut image = Vec::new();
        for change in changes {
            let is_image = PageOp::decode(change.ops).is_ok_and(|(op, _)| op.is_image());
            // W2: the first change of a page after the redo point carries the whole page.
            if !is_image && change.lsn_before <= redo_point {
                image.clear();
                PageOp::image_of(change.after).encode(&mut image);
                wal::push_change(buf, change.after.page_id(), true, &image);
            } else {
                wal::push_change(buf, change.after.page_id(), is_image, change.ops);
            }
        }
        Ok(())
    }
}

impl From<LogError> for EngineError {
    fn from(e: LogError) -> Self {
        match e {
            // Filled in by `Database::check_log_room`, the one place that meets it.
            LogError::Full => {
                EngineError::LogFull { database: String::new(), reason: String::new() }
            }
            e => EngineError::Log(e.to_string()),
        }
    }
}
