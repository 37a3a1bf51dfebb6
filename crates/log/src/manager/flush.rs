//! Flushing and group commit: one flusher at a time writes every sealed block with one
//! vectored write per segment and one sync, then advances `hardened` (rules 3, 4, 7 and 9), and
//! the background writer thread does the flushes nobody waits for and the time bound (rules 5
//! and 10). A failed write or sync is sticky (rule 6): nothing is hardened after it.

use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;
use std::time::{Duration, Instant};

use super::append::seal_open;
use super::space::grow_ahead;
use super::{fresh_random, Block, LogManager, Shared, State, Waiting};
use crate::format::{round_up_to_sector, BlockHeader, BLOCK_HEADER_SIZE};
use crate::stats::{bucket, FlushReason};
use crate::{LogError, Lsn};

impl LogManager {
    /// The write-ahead rule: returns once every byte before `lsn` is hardened, flushing now if
    /// needed.
    pub fn flush_to(&self, lsn: Lsn) -> Result<(), LogError> {
        let st = self.shared.state.lock();
        st.check_usable()?;
        let target = lsn.min(st.end_lsn());
        self.harden(st, target, FlushReason::WalRule)
    }

    /// `sys.sp_flush_log`: hardens everything appended before the call; returns that LSN.
    pub fn flush_log(&self) -> Result<Lsn, LogError> {
        self.flush_all(FlushReason::FlushLog)
    }

    /// Waits, without forcing a flush, until `lsn` is hardened by some trigger (the time bound
    /// at the latest, if it is on).
    pub fn wait_hardened(&self, lsn: Lsn) -> Result<(), LogError> {
        let mut st = self.shared.state.lock();
        let lsn = lsn.min(st.end_lsn());
        let start = Instant::now();
        let waited = st.hardened < lsn;
        while st.hardened < lsn {
            if let Some(e) = &st.failed {
                return Err(e.clone());
            }
            self.shared.flushed.wait(&mut st);
        }
        if waited {
            st.stats.writelog.record(start.elapsed());
        }
        Ok(())
    }
}

impl LogManager {
    pub(super) fn flush_all(&self, reason: FlushReason) -> Result<Lsn, LogError> {
        let st = self.shared.state.lock();
        st.check_usable()?;
        let target = st.end_lsn();
        self.harden(st, target, reason)?;
        Ok(target)
    }
}

impl LogManager {
    /// Returns once `target` is hardened, flushing if nobody else is (rule 4), and records the
    /// wait (`WRITELOG`; for commits also `Log Flush Waits`). A thread that waits is released
    /// by the flusher without retaking the lock; the flusher records its wait for it.
    pub(super) fn harden<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
        target: Lsn,
        reason: FlushReason,
    ) -> Result<(), LogError> {
        if st.hardened >= target {
            return Ok(());
        }
        self.harden_since(st, target, reason, Instant::now())
    }

    /// [`LogManager::harden`] for a wait that began at `start`.
    pub(super) fn harden_since<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        target: Lsn,
        reason: FlushReason,
        start: Instant,
    ) -> Result<(), LogError> {
        loop {
            if let Some(e) = &st.failed {
                return Err(e.clone());
            }
            if st.hardened >= target {
                break;
            }
            if st.flushing {
                // Rule 9: sleep on the flush that will harden `target`.
                let flush_no = st.flushes_begun - u64::from(target <= st.flushing_to);
                let events = &self.shared.events;
                let seen = events.counter(flush_no).load(Ordering::Acquire);
                let key = (target, st.next_waiter_id);
                st.next_waiter_id += 1;
                st.waiters
                    .insert(key, Waiting { since: start, commit: reason == FlushReason::Commit });
                drop(st);
                events.sleep(flush_no, seen);
                if events.hardened.load(Ordering::Acquire) >= target {
                    // The flusher that released this thread recorded its wait.
                    return Ok(());
                }
                st = self.shared.state.lock();
                if st.waiters.remove(&key).is_none() && st.hardened >= target {
                    // Released after the check above; the flusher recorded the wait.
                    return Ok(());
                }
            } else {
                st = flush(&self.shared, st, target, reason)?;
                if st.hardened >= target {
                    hand_waiters_to_writer(&self.shared, &mut st);
                }
            }
        }
        st.stats.record_hardening_wait(reason == FlushReason::Commit, start.elapsed());
        Ok(())
    }
}

/// After a committer's own flush: the threads that queued behind it go to the writer thread,
/// and the committer returns. A committer's transaction holds its locks until its commit
/// returns, so every flush it did for others would lengthen each of those locks and keep its
/// client waiting: under BenchBase's TPC-C (4 terminals, SERIALIZABLE) the thread that had
/// flushed for itself and then served up to 4 more rounds for the queue kept its warehouse and
/// district locks through them, and the transactions waiting for those locks waited with it.
/// The writer thread, like SQL Server's log writer, holds no locks.
fn hand_waiters_to_writer(shared: &Shared, st: &mut State) {
    if st.flushing {
        return;
    }
    if let Some((&(target, _), _)) = st.waiters.last_key_value() {
        if st.flush_wanted.is_none_or(|(lsn, _)| lsn < target) {
            st.flush_wanted = Some((target, FlushReason::Commit));
        }
        shared.wake_writer.notify_one();
    }
}

/// The writer thread's round after a flush: flushes again while threads wait and nobody
/// else flushes, so that no waiter is ever left without a flusher.
fn lead_waiters<'a>(
    shared: &'a Shared,
    mut st: MutexGuard<'a, State>,
) -> Result<MutexGuard<'a, State>, LogError> {
    loop {
        let Some((&(target, _), _)) = st.waiters.last_key_value() else { return Ok(st) };
        if st.flushing {
            return Ok(st);
        }
        st = flush(shared, st, target, FlushReason::Commit)?;
    }
}

/// Rule 6: makes the failure sticky (the first one wins) and releases every waiter to see it.
pub(super) fn fail(shared: &Shared, st: &mut State, e: LogError) {
    st.failed.get_or_insert(e);
    st.waiters.clear();
    shared.events.ended(st.flushes_begun, true);
    shared.events.ended(st.flushes_begun + 1, true);
    shared.flushed.notify_all();
    shared.wake_writer.notify_all();
}

/// The I/O of one flush, done outside the state lock.
struct FlushIo {
    file_writes: u64,
    file_bytes: u64,
    grown_on_path: bool,
    new_cache: Option<(u64, u64, u64)>,
    elapsed: Duration,
}

/// Rule 3: takes every sealed block (sealing the open one first if `target` lies in it), writes
/// them, syncs once, and advances `hardened`. The caller checked that nobody else is flushing.
pub(super) fn flush<'a>(
    shared: &'a Shared,
    mut st: MutexGuard<'a, State>,
    target: Lsn,
    reason: FlushReason,
) -> Result<MutexGuard<'a, State>, LogError> {
    debug_assert!(!st.flushing, "two flushers");
    if let Some(e) = st.failed.clone() {
        fail(shared, &mut st, e.clone());
        return Err(e);
    }
    if st.open.as_ref().is_some_and(|b| target > b.lsn && b.used > BLOCK_HEADER_SIZE) {
        seal_open(&mut st);
    }
    if st.sealed.is_empty() {
        return Ok(st);
    }
    let mut blocks: Vec<Block> = st.sealed.drain(..).collect();
    let cache = st.segment_cache;
    st.flushing = true;
    let flush_no = st.flushes_begun;
    st.flushes_begun += 1;
    st.flushing_to =
        blocks.last().map_or(st.hardened, |b| b.lsn + round_up_to_sector(b.used as u64));
    drop(st);

    let io = write_blocks(shared, &mut blocks, cache);

    let mut st = shared.state.lock();
    st.flushing = false;
    let io = match io {
        Ok(io) => io,
        Err(e) => {
            // Rule 6: fail-stop. The blocks are dropped, never retried.
            st.blocks_in_use -= blocks.len();
            fail(shared, &mut st, e.clone());
            return Err(e);
        }
    };
    let Some(last) = blocks.last() else { return Ok(st) };
    let new_hardened = last.lsn + round_up_to_sector(last.used as u64);
    let first_lsn = blocks.first().map_or(new_hardened, |b| b.lsn);
    debug_assert!(first_lsn == st.hardened, "flushes are contiguous");
    st.hardened = new_hardened;
    shared.events.hardened.store(new_hardened, Ordering::Release);
    st.segment_cache = io.new_cache;
    st.blocks_in_use -= blocks.len();
    for block in blocks {
        st.pool.push(block.buf);
    }
    // One clock read for everything this flush released: the commits it hardened (for the
    // time bound) and the waiters it wakes, all hardened at the same moment.
    let now = Instant::now();
    // Under the lock, and a delayed workload hardens hundreds of commits per flush: one
    // comparison each, so that appenders do not queue behind the bookkeeping.
    let late_before = (shared.config.max_delay_ms > 0)
        .then(|| now.checked_sub(Duration::from_millis(shared.config.max_delay_ms)))
        .flatten();
    let hardened = st.unhardened.partition_point(|&(lsn, _)| lsn <= new_hardened);
    let late = late_before.map_or(0, |before| {
        st.unhardened.range(..hardened).filter(|&&(_, at)| at < before).count() as u64
    });
    st.unhardened.drain(..hardened);
    let hardened_commits = hardened as u64;
    let s = &mut st.stats;
    s.flushes += 1;
    s.flushes_by_reason[reason.index()] += 1;
    s.bytes_flushed += new_hardened - first_lsn;
    s.flush_write_time_us += io.elapsed.as_micros() as u64;
    s.file_writes += io.file_writes;
    s.file_bytes_written += io.file_bytes;
    s.file_write_stall_us += io.elapsed.as_micros() as u64;
    s.max_delay_exceeded += late;
    if io.grown_on_path {
        s.growths_on_flush_path += 1;
    }
    if hardened_commits > 0 {
        s.commits_per_flush[bucket(hardened_commits)] += 1;
        s.commits_hardened += hardened_commits;
    }
    let sleepers = !st.waiters.is_empty();
    let still_waiting = st.waiters.split_off(&(new_hardened + 1, 0));
    let released = std::mem::replace(&mut st.waiters, still_waiting);
    for waiter in released.values() {
        st.stats.record_hardening_wait(waiter.commit, now - waiter.since);
    }
    // The writer needs waking only for a flush nobody else does, or to arm the time bound
    // for the commits this flush left unhardened: a writer asleep with a deadline wakes by
    // it, and the deadline of an older commit is never later than theirs. Waking it after
    // every flush of a busy group would cost a context switch per flush.
    let arm_time_bound =
        shared.config.max_delay_ms > 0 && !st.unhardened.is_empty() && st.writer_idle;
    if st.flush_wanted.is_some_and(|(lsn, _)| lsn > st.hardened) || arm_time_bound {
        st.writer_idle = false;
        shared.wake_writer.notify_one();
    }
    // Wake the released threads outside the lock: appenders should not queue behind the
    // system call.
    drop(st);
    shared.events.ended(flush_no, sleepers);
    shared.flushed.notify_all();
    Ok(shared.state.lock())
}

/// Blocks `first..end` of a flush, contiguous in the file from `offset`.
struct Run {
    offset: u64,
    first: usize,
    end: usize,
    bytes: u64,
}

/// Seals each block's header (with the flush's first LSN and its file offset in the
/// checksum), activates segments as the blocks reach them, writes each run of contiguous
/// blocks with one vectored write, and syncs once.
fn write_blocks(
    shared: &Shared,
    blocks: &mut [Block],
    mut cache: Option<(u64, u64, u64)>,
) -> Result<FlushIo, LogError> {
    let start = Instant::now();
    let flush_lsn = blocks.first().map_or(0, |b| b.lsn);
    let mut io = FlushIo {
        file_writes: 0,
        file_bytes: 0,
        grown_on_path: false,
        new_cache: cache,
        elapsed: Duration::ZERO,
    };
    let mut runs: Vec<Run> = Vec::new();
    for (i, block) in blocks.iter_mut().enumerate() {
        let sequence = block.lsn / shared.data_size;
        let (data_offset, salt) = match cache {
            Some((seq, data_offset, salt)) if seq == sequence => (data_offset, salt),
            _ => {
                let mut map = shared.segments.lock();
                if !map.active.contains_key(&sequence) {
                    let outcome =
                        map.activate(&shared.file, shared.log_id, sequence, fresh_random())?;
                    io.file_writes += 1;
                    io.file_bytes += outcome.header_bytes;
                    io.grown_on_path |= outcome.grown;
                    let grow = map.spare_slots() < shared.config.spare_segments as usize;
                    shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
                    let mut st = shared.state.lock();
                    st.stats.segments_active = map.active.len() as u64;
                    st.stats.segments_total = u64::from(map.slots);
                    if grow {
                        st.grow_wanted = true;
                        shared.wake_writer.notify_one();
                    }
                }
                let (offset, salt) = map
                    .locate(sequence * shared.data_size)
                    .ok_or_else(|| LogError::io("flush", "segment not active after activation"))?;
                cache = Some((sequence, offset, salt));
                (offset, salt)
            }
        };
        let offset = data_offset + block.lsn % shared.data_size;
        let padded = round_up_to_sector(block.used as u64) as usize;
        block.buf[block.used..padded].fill(0);
        BlockHeader { used: block.used as u32, lsn: block.lsn, flush_lsn }.seal(
            &mut block.buf,
            salt,
            offset,
        );
        match runs.last_mut() {
            Some(run) if run.end == i && run.offset + run.bytes == offset => {
                run.end = i + 1;
                run.bytes += padded as u64;
            }
            _ => runs.push(Run { offset, first: i, end: i + 1, bytes: padded as u64 }),
        }
    }
    for run in &runs {
        let bufs: Vec<&[u8]> = blocks[run.first..run.end]
            .iter()
            .map(|b| &b.buf[..round_up_to_sector(b.used as u64) as usize])
            .collect();
        shared
            .file
            .write_vectored_all_at(&bufs, run.offset)
            .map_err(|e| LogError::from_io("write", e))?;
        io.file_writes += 1;
        io.file_bytes += run.bytes;
    }
    shared.file.sync_data().map_err(|e| LogError::from_io("sync", e))?;
    io.new_cache = cache;
    io.elapsed = start.elapsed();
    Ok(io)
}

/// Rule 5: the background writer. Flushes what nobody waits for (a full block, a full buffer,
/// the time bound) and grows the file ahead of need.
pub(super) fn writer_loop(shared: &Shared) {
    let half_delay = Duration::from_millis(shared.config.max_delay_ms) / 2;
    let mut st = shared.state.lock();
    loop {
        if st.closed {
            return;
        }
        if st.failed.is_none() && !st.flushing {
            let now = Instant::now();
            let wanted = st.flush_wanted.filter(|&(lsn, _)| lsn > st.hardened);
            let due = st
                .unhardened
                .front()
                .filter(|_| shared.config.max_delay_ms > 0)
                .is_some_and(|&(_, at)| now.duration_since(at) >= half_delay);
            let job = match wanted {
                Some(job) => Some(job),
                None if due => Some((st.end_lsn(), FlushReason::TimeBound)),
                None => None,
            };
            if let Some((target, reason)) = job {
                st.flush_wanted = None;
                // A failure is recorded in the state by `flush`; the writer just goes on
                // waiting for `close`.
                st = match flush(shared, st, target, reason).and_then(|st| lead_waiters(shared, st))
                {
                    Ok(st) => st,
                    Err(_) => shared.state.lock(),
                };
                continue;
            }
            if st.grow_wanted {
                st.grow_wanted = false;
                let retry = std::mem::take(&mut st.retry_growth);
                drop(st);
                grow_ahead(shared, retry);
                st = shared.state.lock();
                continue;
            }
        }
        let deadline = match st.unhardened.front() {
            Some(&(_, at)) if shared.config.max_delay_ms > 0 && st.failed.is_none() => {
                Some(at + half_delay)
            }
            _ => None,
        };
        st.writer_idle = deadline.is_none();
        let timeout = deadline.map_or(Duration::from_secs(1), |d| {
            d.saturating_duration_since(Instant::now()).max(Duration::from_micros(100))
        });
        // A wake-up asked for by an appender that has not released the lock yet: this writer
        // is awake already, and looks again instead of sleeping through it.
        if std::mem::take(&mut st.wake_pending) {
            continue;
        }
        shared.wake_writer.wait_for(&mut st, timeout);
        st.writer_idle = false;
    }
}
