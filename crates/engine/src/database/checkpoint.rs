//! Checkpoints (recipe C1-C6 of `docs/recovery.md`) and the checkpoint pointer they leave on
//! the fixed pages 2 and 3, written alternately and never through the buffer pool: each
//! pointer is written into the slot its sequence number picks and synced, so a torn write
//! leaves the previous one, and a reader takes the newer valid one. Also what the last
//! checkpoint says about the log: when the next is due and why the log cannot be reused.

use std::sync::atomic::Ordering;
use std::sync::PoisonError;

use walden_storage::{DataFile, Lsn, Page, PageId, PageType};

use super::{CheckpointLsns, Database, RecoveryModel};
use crate::error::EngineError;
use crate::wal::{self, CheckpointBody};

const POINTER_PAGES: [PageId; 2] = [2, 3];

/// The checkpoint pointer: where recovery starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Pointer {
    seq: u64,
    checkpoint_lsn: Lsn,
    pub(super) body: CheckpointBodyFields,
    pub(super) last_commit_lsn: Lsn,
    pub(super) last_commit_micros: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct CheckpointBodyFields {
    pub(super) redo_point: Lsn,
    pub(super) scan_start: Lsn,
    pub(super) next_txn: u64,
}

impl Pointer {
    const LEN: usize = 56;

    fn encode(&self) -> [u8; Pointer::LEN] {
        let mut b = [0; Pointer::LEN];
        for (i, v) in [
            self.seq,
            self.checkpoint_lsn,
            self.body.redo_point,
            self.body.scan_start,
            self.body.next_txn,
            self.last_commit_lsn,
            self.last_commit_micros,
        ]
        .into_iter()
        .enumerate()
        {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn decode(b: &[u8]) -> Option<Pointer> {
        if b.len() != Pointer::LEN {
            return None;
        }
        let w = |i: usize| {
            let mut a = [0; 8];
            a.copy_from_slice(&b[i * 8..i * 8 + 8]);
            u64::from_le_bytes(a)
        };
        Some(Pointer {
            seq: w(0),
            checkpoint_lsn: w(1),
            body: CheckpointBodyFields { redo_point: w(2), scan_start: w(3), next_txn: w(4) },
            last_commit_lsn: w(5),
            last_commit_micros: w(6),
        })
    }
}

impl Database {
    /// Takes a checkpoint (recipe C1-C6); returns the redo point.
    pub fn checkpoint(&self) -> Result<Lsn, EngineError> {
        self.check_online()?;
        let Some(log) = &self.log else {
            self.space.pool().flush_all()?;
            return Ok(0);
        };
        let mut pointer = self.checkpoint_lock.lock().unwrap_or_else(PoisonError::into_inner);
        // C1: move the redo point; every operation that logged before it has marked its pages
        // dirty, because it held the gate until then (W3).
        let redo_point = {
            let mut gate = self.gate.write().unwrap_or_else(PoisonError::into_inner);
            *gate = log.end_lsn();
            *gate
        };
        // C2: write every dirty page (the pool hardens the log first: W1) and sync the file.
        self.space.pool().flush_all()?;
        // C3: the oldest log still needed by an open transaction.
        let scan_start = log.oldest_open_txn().map_or(redo_point, |first| first.min(redo_point));
        let body = CheckpointBody {
            redo_point,
            scan_start,
            next_txn: self.next_txn.load(Ordering::Relaxed),
        };
        // C4: log the checkpoint and harden everything before it.
        let checkpoint_lsn = log.append_payload(0, &wal::checkpoint(&body))?;
        log.flush_to(checkpoint_lsn)?;
        let (last_commit_lsn, last_commit_micros) = {
            let last = log.last_commit();
            if last.0 == 0 {
                (pointer.last_commit_lsn, pointer.last_commit_micros)
            } else {
                last
            }
        };
        // C5: the pointer, in the older of the two slots, then sync.
        let next = Pointer {
            seq: pointer.seq + 1,
            checkpoint_lsn,
            body: CheckpointBodyFields { redo_point, scan_start, next_txn: body.next_txn },
            last_commit_lsn,
            last_commit_micros,
        };
        write_pointer(self.space.pool().file(), &next)?;
        *pointer = next;
        // C6: in SIMPLE recovery, the log before the scan start may be reused.
        if self.recovery_model() == RecoveryModel::Simple {
            log.set_truncation_lsn(scan_start);
        }
        Ok(redo_point)
    }

    /// Whether enough log was written since the last checkpoint to take another.
    pub fn checkpoint_due(&self) -> bool {
        let Some(log) = &self.log else { return false };
        let every = self.config.checkpoint_log_bytes;
        let redo_point = *self.gate.read().unwrap_or_else(PoisonError::into_inner);
        let end = log.end_lsn();
        // Under SIMPLE recovery a log that may not grow without bound is checkpointed once 70%
        // of what it may hold is used, as SQL Server does, so that it truncates before new
        // work meets error 9002 (under FULL only a log backup would truncate it).
        let (truncation, limit) = (log.truncation_lsn(), log.room_limit());
        let nearly_full = limit != u64::MAX
            && self.recovery_model() == RecoveryModel::Simple
            && end.saturating_sub(truncation) >= limit.saturating_sub(truncation) / 10 * 7
            && end > redo_point;
        (every > 0 && end.saturating_sub(redo_point) >= every) || nearly_full
    }

    /// Why the log cannot be truncated further, as `sys.databases.log_reuse_wait_desc`.
    pub fn log_reuse_wait(&self) -> &'static str {
        if self.log.is_none() {
            return "NOTHING";
        }
        if self.recovery_model() == RecoveryModel::Full {
            return "LOG_BACKUP";
        }
        let pointer = *self.checkpoint_lock.lock().unwrap_or_else(PoisonError::into_inner);
        if pointer.body.scan_start < pointer.body.redo_point {
            return "ACTIVE_TRANSACTION";
        }
        if self.log.as_ref().is_some_and(|log| log.oldest_open_txn().is_some()) {
            "ACTIVE_TRANSACTION"
        } else if self.checkpoint_due() {
            "CHECKPOINT"
        } else {
            "NOTHING"
        }
    }

    /// The LSNs the last checkpoint recorded.
    pub fn last_checkpoint(&self) -> CheckpointLsns {
        let pointer = *self.checkpoint_lock.lock().unwrap_or_else(PoisonError::into_inner);
        CheckpointLsns {
            checkpoint_lsn: pointer.checkpoint_lsn,
            redo_point: pointer.body.redo_point,
            scan_start: pointer.body.scan_start,
        }
    }
}

/// Reads the newer valid checkpoint pointer.
pub(super) fn read_pointer(data: &DataFile) -> Result<Pointer, EngineError> {
    let mut best: Option<Pointer> = None;
    for id in POINTER_PAGES {
        let Ok(page) = data.read_page(id) else { continue };
        let Some(p) = page.get(0).ok().and_then(Pointer::decode) else { continue };
        if best.is_none_or(|b| p.seq > b.seq) {
            best = Some(p);
        }
    }
    best.ok_or_else(|| {
        EngineError::Corrupt(format!(
            "{}: neither checkpoint pointer page is valid",
            data.path().display()
        ))
    })
}

/// Writes a checkpoint pointer into the slot its sequence number picks and syncs the file.
/// The other slot keeps the previous pointer, so a torn write loses nothing.
fn write_pointer(data: &DataFile, pointer: &Pointer) -> Result<(), EngineError> {
    let id = POINTER_PAGES[(pointer.seq % 2) as usize];
    let mut page = Page::new(id, PageType::Boot);
    page.push(&pointer.encode())?;
    page.set_page_lsn(pointer.checkpoint_lsn);
    data.write_page(&mut page)?;
    data.sync()?;
    Ok(())
}
