//! Write-back: how a dirty frame reaches the file. A write-out copies the image under a
//! shared latch, hardens the log up to its page LSN first (the WAL rule), checks the page, and
//! marks the frame clean only if no change came in meanwhile (rule 5); a failed write or check
//! fails the database's pool for good and is never retried (rule 8). The background writer
//! thread writes dirty pages ahead of eviction, holding only a weak reference to the pool.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, PoisonError, TryLockError, Weak};
use std::time::Duration;

use super::frames::Desc;

use super::frames::FramePool;
use super::{bump, check_page, lock, BufferError, Member, Shared, WriteBy};
use crate::page::{Corruption, Lsn, PageError, PageId};

impl Desc {
    /// Whether the frame holds page `id` of `member` (loaded or not).
    pub(super) fn holds(&self, member: &Member, id: PageId) -> bool {
        self.page == Some(id) && self.owner.as_ref().is_some_and(|o| o.key == member.key)
    }
}

impl FramePool {
    /// Makes `owner` failed (if it was not already) and hands the error back. Its pages are
    /// discarded: nothing of a failed database is ever written again (invariant 8), so its
    /// frames are better given to the databases that still work.
    pub(super) fn fail(&self, owner: &Member, e: BufferError) -> BufferError {
        if owner.failure.set(e.to_string()).is_ok() {
            self.discard(owner);
        }
        e
    }

    /// Writes frame `f` (holding page `id` of `owner`) out, if dirty. The caller has set
    /// `writing` and taken a pin under the table lock; this releases both. Returns whether
    /// it wrote.
    pub(super) fn write_out(
        &self,
        owner: &Member,
        f: usize,
        id: PageId,
        by: WriteBy,
    ) -> Result<bool, BufferError> {
        let result = self.write_copy(owner, f, id, by);
        {
            let mut state = self.frame(f).dirty();
            if let (Ok(true), Some(copied)) = (&result, state.copied) {
                if state.version == copied {
                    if state.dirty {
                        state.dirty = false;
                        self.count_dirty(owner, false);
                    }
                } else if let Some(lsn) = state.redirtied {
                    state.rec_lsn = lsn;
                }
            }
            state.copied = None;
            state.redirtied = None;
        }
        let mut table = self.table();
        table.descs[f].writing = false;
        self.unpin(&mut table, f);
        self.notify(&table);
        result
    }

    fn write_copy(
        &self,
        owner: &Member,
        f: usize,
        id: PageId,
        by: WriteBy,
    ) -> Result<bool, BufferError> {
        owner.check_failed()?;
        let frame = self.frame(f);
        let mut copy = {
            let image = if matches!(by, WriteBy::Eviction | WriteBy::Writer) {
                // The frame was unpinned when chosen; if someone has since pinned and latched
                // it, waiting could close a cycle with a latch the caller holds (a fetch in
                // the middle of a B-tree descent), so skip it: it is in use, not a victim.
                match frame.latch.try_read() {
                    Ok(image) => image,
                    Err(TryLockError::Poisoned(e)) => e.into_inner(),
                    Err(TryLockError::WouldBlock) => return Ok(false),
                }
            } else {
                frame.read_latch()
            };
            let mut state = frame.dirty();
            if !state.dirty {
                return Ok(false);
            }
            state.copied = Some(state.version);
            image.clone()
        };
        let counters = &owner.counters;
        let lsn = copy.page_lsn();
        if lsn > 0 {
            bump(&counters.wal_flushes);
            owner.wal.flush_to(lsn).map_err(|e| self.fail(owner, BufferError::Wal(e)))?;
        }
        if copy.page_id() != id {
            // Written at its own id, the image would overwrite another page.
            let detail = Corruption::Misdirected { found: copy.page_id() };
            return Err(self.fail(owner, PageError::Corrupt { page_id: id, detail }.into()));
        }
        check_page(&copy).map_err(|e| self.fail(owner, e.into()))?;
        owner.file.write_page(&mut copy).map_err(|e| self.fail(owner, e.into()))?;
        bump(&counters.writes);
        match by {
            WriteBy::Writer => bump(&counters.writer_writes),
            WriteBy::Checkpoint => bump(&counters.checkpoint_writes),
            WriteBy::Eviction | WriteBy::Single => {}
        }
        Ok(true)
    }
}

impl Shared {
    /// Waits for any write-out of frame `f` to end, then writes it out if it still holds `id`
    /// and is dirty. Returns whether it wrote.
    pub(super) fn flush_frame(
        &self,
        f: usize,
        id: PageId,
        by: WriteBy,
    ) -> Result<bool, BufferError> {
        let mut table = self.frames.table();
        loop {
            self.member.check_failed()?;
            let desc = &mut table.descs[f];
            // Gone (an eviction wrote it first) or discarded: nothing of it is left to write.
            if !desc.holds(&self.member, id) || desc.loading {
                return Ok(false);
            }
            if desc.writing {
                // The write in flight may have copied the image before changes we must cover.
                table = self.frames.wait(table, None);
                continue;
            }
            desc.writing = true;
            desc.pins += 1;
            break;
        }
        drop(table);
        self.frames.write_out(&self.member, f, id, by)
    }

    /// Every dirty cached frame of this database as `(frame, page, rec_lsn)`, in frame order:
    /// a snapshot taken under the table lock, for the checkpoint and the dirty page table.
    pub(super) fn dirty_frames(&self) -> Vec<(usize, PageId, Lsn)> {
        if self.member.dirty.load(Ordering::Relaxed) == 0 {
            return Vec::new();
        }
        let table = self.frames.table();
        table
            .descs
            .iter()
            .enumerate()
            .filter(|(_, desc)| !desc.loading)
            .filter(|(_, desc)| desc.owner.as_ref().is_some_and(|o| o.key == self.member.key))
            .filter_map(|(f, desc)| {
                let id = desc.page?;
                let state = self.frames.frame(f).dirty();
                state.dirty.then_some((f, id, state.rec_lsn))
            })
            .collect()
    }
}

impl Shared {
    /// One round of the background writer (see [`PoolConfig::dirty_high_percent`]). The
    /// pressure is the whole pool's; the pages written are this database's, oldest first.
    fn writer_round(&self, control: &WriterControl) {
        let (frames, member) = (&*self.frames, &*self.member);
        // The frames the pool may hold now: what it lent to query memory is not cache.
        let capacity = frames.target();
        let dirty = frames.dirty.load(Ordering::Relaxed);
        let high = capacity * usize::from(member.config.dirty_high_percent) / 100;
        // Keep an eighth of the pool clean (or unallocated), so that eviction seldom writes.
        let keep_clean = (capacity / 8).max(1);
        let need = dirty.saturating_sub(high).max(dirty.saturating_sub(capacity - keep_clean));
        if need == 0 || member.dirty.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut candidates = Vec::new();
        {
            let table = frames.table();
            for (f, desc) in table.descs.iter().enumerate() {
                if desc.loading || desc.pins > 0 || desc.writing {
                    continue;
                }
                let Some(id) = desc.page.filter(|&id| desc.holds(member, id)) else {
                    continue;
                };
                let state = frames.frame(f).dirty();
                if state.dirty {
                    candidates.push((state.rec_lsn, f, id));
                }
            }
        }
        // Oldest first: that also advances the minimum rec_lsn, so checkpoints free more log.
        candidates.sort_unstable();
        let mut written = 0;
        for (_, f, id) in candidates {
            if written >= need || control.stopping() || member.failure.get().is_some() {
                return;
            }
            {
                let mut table = frames.table();
                let desc = &mut table.descs[f];
                if !desc.holds(member, id) || desc.loading || desc.writing || desc.pins > 0 {
                    continue;
                }
                desc.writing = true;
                desc.pins += 1;
            }
            match frames.write_out(member, f, id, WriteBy::Writer) {
                Ok(true) => written += 1,
                Ok(false) => {}
                Err(_) => return,
            }
        }
    }
}

/// The background writer's stop switch. It lives apart from the pool so that the writer can
/// sleep on it while holding no reference that keeps the pool alive.
#[derive(Debug, Default)]
pub(super) struct WriterControl {
    pub(super) stop: Mutex<bool>,
    pub(super) wake: Condvar,
}

impl WriterControl {
    fn stopping(&self) -> bool {
        *lock(&self.stop)
    }

    /// Sleeps for `period` or until stopped; returns whether to go on.
    fn sleep(&self, period: Duration) -> bool {
        let stop = lock(&self.stop);
        let (stop, _) = self
            .wake
            .wait_timeout_while(stop, period, |stop| !*stop)
            .unwrap_or_else(PoisonError::into_inner);
        !*stop
    }
}

pub(super) fn writer_main(pool: Weak<Shared>, control: Arc<WriterControl>, period: Duration) {
    while control.sleep(period) {
        let Some(pool) = pool.upgrade() else {
            return;
        };
        if pool.member.failure.get().is_some() {
            return;
        }
        pool.writer_round(&control);
    }
}
