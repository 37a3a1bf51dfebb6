//! Restart recovery (R3-R7 of `docs/recovery.md`): one forward pass from the checkpoint's scan
//! start that analyses the log and redoes the page changes the checkpoint did not already put
//! on disk, then the undo of the transactions left without a commit or abort record (in-doubt
//! prepared ones are committed or undone as the resolver says), then a checkpoint so that the
//! next recovery starts after them.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use walden_log::{Durability, RecordKind};
use walden_storage::buffer::BufferError;
use walden_storage::{FileError, Lsn, PageError, PageType};

use super::checkpoint::Pointer;
use super::undo::{unreadable_undo, RowUndo, UndoLog};
use super::{Database, RecoveryReport};
use crate::error::EngineError;
use crate::recovery::{redo_action, txn_action, PageOnDisk, RedoAction, TxnAction};
use crate::wal::{self, EngineRecord, Undo};

impl Database {
    /// Recovery: analysis and redo in one forward pass from the scan start, then undo of the
    /// transactions without a commit or abort record (R3-R7).
    pub(super) fn recover(
        &mut self,
        pointer: &Pointer,
        resolver: &dyn Fn(u64) -> bool,
    ) -> Result<RecoveryReport, EngineError> {
        let Some(log) = self.log.clone() else {
            return Ok(RecoveryReport::default());
        };
        let mut report = RecoveryReport {
            last_commit_lsn: pointer.last_commit_lsn,
            last_commit_unix_micros: pointer.last_commit_micros,
            ..RecoveryReport::default()
        };
        let redo_point = pointer.body.redo_point;
        let mut next_txn = pointer.body.next_txn.max(1);
        // Transaction -> (first LSN seen, undo entries still to undo).
        let mut txns: BTreeMap<u64, LoserState> = BTreeMap::new();
        let mut prev_end = pointer.body.scan_start;
        for record in log.scan(pointer.body.scan_start) {
            let record = record?;
            report.records_scanned += 1;
            if record.txn != 0 {
                next_txn = next_txn.max(record.txn + 1);
            }
            match record.kind {
                RecordKind::Commit => {
                    txns.remove(&record.txn);
                    if let Some(body) = record.commit() {
                        report.last_commit_lsn = record.lsn;
                        report.last_commit_unix_micros = body.commit_time_us;
                    }
                }
                RecordKind::Abort => {
                    txns.remove(&record.txn);
                }
                RecordKind::Begin => {
                    txns.entry(record.txn).or_insert_with(|| LoserState::new(self, prev_end));
                }
                RecordKind::Payload => {
                    let rec = EngineRecord::decode(&record.body)
                        .map_err(|e| EngineError::Corrupt(format!("at LSN {}: {e}", record.lsn)))?;
                    // R4: redo what the last checkpoint did not already put on disk.
                    if record.lsn > redo_point {
                        for change in rec.changes() {
                            report.pages_redone += u64::from(self.redo(record.lsn, change)?);
                        }
                    }
                    match rec {
                        EngineRecord::Row { root, key, undo, .. } => {
                            let state = txns
                                .entry(record.txn)
                                .or_insert_with(|| LoserState::new(self, prev_end));
                            state.undo.push(RowUndo { lsn: record.lsn, root, key, undo });
                        }
                        EngineRecord::Rows { root, keys, .. } => {
                            let state = txns
                                .entry(record.txn)
                                .or_insert_with(|| LoserState::new(self, prev_end));
                            for key in keys {
                                state.undo.push(RowUndo {
                                    lsn: record.lsn,
                                    root,
                                    key,
                                    undo: Undo::Delete,
                                });
                            }
                        }
                        EngineRecord::Compensation { undo_next, .. } => {
                            if let Some(state) = txns.get_mut(&record.txn) {
                                state.undo.pop_after(undo_next).map_err(unreadable_undo)?;
                            }
                        }
                        EngineRecord::Prepare { gtid } => {
                            txns.entry(record.txn)
                                .or_insert_with(|| LoserState::new(self, prev_end))
                                .prepared = Some(gtid);
                        }
                        EngineRecord::Checkpoint(body) => next_txn = next_txn.max(body.next_txn),
                        EngineRecord::Structure { .. } => {}
                    }
                }
            }
            prev_end = record.lsn;
        }
        self.next_txn.store(next_txn, Ordering::Relaxed);
        // R5: undo the losers, newest change first, logging compensation records; R6: abort.
        for (txn, mut state) in txns {
            log.reopen_txn(txn, state.first);
            let committed = state.prepared.is_some_and(resolver);
            match txn_action(false, false, state.prepared.is_some(), committed) {
                TxnAction::CommitInDoubt => {
                    self.commit_txn(txn, Durability::Full)?;
                    (report.last_commit_lsn, report.last_commit_unix_micros) = self.last_commit();
                    report.in_doubt_committed += 1;
                }
                TxnAction::Undo | TxnAction::UndoInDoubt => {
                    report.transactions_undone += 1;
                    report.rows_undone += state.undo.len() as u64;
                    crate::txn::undo_entries(self, txn, &mut state.undo, 0)?;
                    self.abort_txn(txn)?;
                }
                TxnAction::Committed | TxnAction::Aborted => {}
            }
        }
        log.set_recovered_commit(report.last_commit_lsn, report.last_commit_unix_micros);
        // R7: harden the aborts and checkpoint, so the next recovery starts here.
        log.flush_log()?;
        self.checkpoint()?;
        Ok(report)
    }

    /// Replays one page change of the record at `lsn` as the redo table says (R4); returns
    /// whether it changed the page.
    fn redo(&self, lsn: Lsn, change: &wal::PageChange<'_>) -> Result<bool, EngineError> {
        let pool = self.space.pool();
        let fetched = match pool.fetch(change.page) {
            Ok(p) => Some(p),
            Err(BufferError::File(
                FileError::Page(PageError::NeverWritten { .. } | PageError::Corrupt { .. })
                | FileError::PageOutOfRange { .. },
            )) => None,
            Err(e) => return Err(e.into()),
        };
        let on_disk = match &fetched {
            None => PageOnDisk::Unreadable,
            Some(p) if p.read().page_lsn() >= lsn => PageOnDisk::Newer,
            Some(_) => PageOnDisk::Older,
        };
        let pinned = match (redo_action(true, on_disk, change.image), fetched) {
            (RedoAction::SkipCheckpointed | RedoAction::SkipNewer, _) => return Ok(false),
            (RedoAction::Apply, Some(p)) => p,
            (RedoAction::Rebuild, _) => pool.fetch_new(change.page, PageType::Free)?,
            (RedoAction::Fail | RedoAction::Apply, _) => {
                return Err(EngineError::Corrupt(format!(
                    "page {} is damaged and the change at LSN {lsn} cannot rebuild it",
                    change.page
                )))
            }
        };
        let mut page = pinned.write();
        for op in change.ops().map_err(|e| EngineError::Corrupt(e.to_string()))? {
            op.apply(&mut page).map_err(|e| {
                EngineError::Corrupt(format!("redo of LSN {lsn} on page {}: {e}", change.page))
            })?;
        }
        page.mark_dirty(lsn);
        Ok(true)
    }
}

/// What analysis knows of a transaction without a commit or abort record.
#[derive(Debug)]
struct LoserState {
    first: Lsn,
    undo: UndoLog,
    prepared: Option<u64>,
}

impl LoserState {
    fn new(db: &Database, first: Lsn) -> LoserState {
        LoserState { first, undo: db.undo_log(), prepared: None }
    }
}
