//! The append path: records copied into the open block under the state lock (rule 1), the
//! open-transaction table kept as begin, commit and abort records pass (rule 8), and the commit
//! variants that decide whether the caller waits for the flush. A record reserves every block it
//! needs before its first byte is written, so it is never interleaved with another record and
//! never waits half-written; a block is sealed here when it fills or a flush needs it (rule 2).

use std::sync::atomic::Ordering;

use parking_lot::MutexGuard;
use std::time::Instant;

use super::{Block, CommitReceipt, LogManager, OpenTransaction, State, MAX_RECORD_LEN};
use crate::format::{
    round_up_to_sector, CommitBody, Durability, Fragment, RecordKind, BLOCK_HEADER_SIZE,
    MAX_BLOCK_SIZE, RECORD_HEADER_SIZE,
};
use crate::segment::SegmentMap;
use crate::stats::FlushReason;
use crate::{LogError, Lsn};

impl LogManager {
    /// Appends a transaction-begin record.
    pub fn append_begin(&self, txn: u64) -> Result<Lsn, LogError> {
        self.append_opening(RecordKind::Begin, txn, 0, &[])
    }

    /// Appends a record for the layers above. A nonzero `txn` is open from its first one until
    /// its commit or abort record (rule 8).
    pub fn append_payload(&self, txn: u64, body: &[u8]) -> Result<Lsn, LogError> {
        self.append_opening(RecordKind::Payload, txn, 0, body)
    }

    /// [`LogManager::append_payload`] with a tag for [`LogManager::open_transactions`], kept
    /// if the record opens `txn`: who the transaction works for, in the terms of the layers
    /// above (Walden's engine passes its lock owner, which names the session). Not logged.
    pub fn append_tagged_payload(&self, txn: u64, tag: u64, body: &[u8]) -> Result<Lsn, LogError> {
        self.append_opening(RecordKind::Payload, txn, tag, body)
    }

    /// Appends a record that opens `txn` if it is its first (rule 8). It is registered only
    /// once appended, still under the state lock, so a failed append leaves nothing open; the
    /// start is the end of the log before the append, at or before the record.
    fn append_opening(
        &self,
        kind: RecordKind,
        txn: u64,
        tag: u64,
        body: &[u8],
    ) -> Result<Lsn, LogError> {
        let st = self.shared.state.lock();
        let start = st.end_lsn();
        let (mut st, lsn) = self.append_record(st, kind, txn, body)?;
        st.note_open(txn, start, tag);
        self.unlock(st);
        Ok(lsn)
    }

    /// Releases the state lock, then wakes the writer if an append asked for it.
    ///
    /// Why after: parking_lot moves a thread woken while the notifier holds the mutex onto the
    /// mutex's queue, and its unlock may then hand the mutex over to that thread while it is
    /// still waking up. An appender coming back for the lock a moment later then waits out the
    /// writer's whole wake-up (tens of microseconds on a virtual machine) instead of its
    /// microsecond of work. Measured with a delayed single-row workload: every block flush
    /// made the appender sleep, about 60 ns per commit on average; after, about 12.
    pub(super) fn unlock(&self, mut st: MutexGuard<'_, State>) {
        let wake = std::mem::take(&mut st.wake_pending);
        drop(st);
        if wake {
            self.shared.wake_writer.notify_one();
        }
    }

    /// Appends an abort record: the transaction is no longer open.
    pub fn append_abort(&self, txn: u64) -> Result<Lsn, LogError> {
        let st = self.shared.state.lock();
        let (mut st, lsn) = self.append_record(st, RecordKind::Abort, txn, &[])?;
        st.note_closed(txn);
        self.unlock(st);
        Ok(lsn)
    }

    /// Forgets an open transaction without logging anything: for one whose changes were all
    /// undone within it (rolled back to a savepoint) and that ends with nothing to commit. Its
    /// records stay in the log; recovery finds them compensated.
    pub fn forget_txn(&self, txn: u64) {
        self.shared.state.lock().note_closed(txn);
    }

    /// Registers `txn` as open since `first`: for recovery, which finds the transactions to
    /// undo in the log and appends their compensation records, so that a checkpoint taken
    /// meanwhile keeps their log.
    pub fn reopen_txn(&self, txn: u64, first: Lsn) {
        let mut st = self.shared.state.lock();
        st.open_txns.close(txn);
        st.open_txns.open(txn, (first, 0));
    }

    /// Where the oldest open transaction's log starts (rule 8), if any is open.
    pub fn oldest_open_txn(&self) -> Option<Lsn> {
        self.shared.state.lock().open_txns.iter().map(|(_, (start, _))| start).min()
    }

    /// Every open transaction (rule 8), oldest start first: what `DBCC OPENTRAN` and
    /// `sys.dm_tran_database_transactions` list.
    pub fn open_transactions(&self) -> Vec<OpenTransaction> {
        let st = self.shared.state.lock();
        let mut open: Vec<OpenTransaction> = st
            .open_txns
            .iter()
            .map(|(txn, (start, tag))| OpenTransaction { txn, start, tag })
            .collect();
        drop(st);
        open.sort_by_key(|t| (t.start, t.txn));
        open
    }

    /// The last commit appended (or recovered): its LSN and commit time in microseconds since
    /// the Unix epoch; (0, 0) if none is known.
    pub fn last_commit(&self) -> (Lsn, u64) {
        let st = self.shared.state.lock();
        (st.stats.last_commit_lsn, st.last_commit_time_us)
    }

    /// Records the last commit recovery found in the log, so that [`LogManager::last_commit`]
    /// reports it until a new commit is appended.
    pub fn set_recovered_commit(&self, lsn: Lsn, commit_time_us: u64) {
        let mut st = self.shared.state.lock();
        if lsn >= st.stats.last_commit_lsn {
            st.stats.last_commit_lsn = lsn;
            st.last_commit_time_us = commit_time_us;
        }
    }

    /// Appends a commit record. A fully durable commit seals its block and returns only once
    /// the record (and all log before it) is hardened; a delayed one returns at once.
    pub fn append_commit(
        &self,
        txn: u64,
        durability: Durability,
    ) -> Result<CommitReceipt, LogError> {
        let (mut st, lsn, appended, commit_time_us) = self.append_commit_record(txn, durability)?;
        match durability {
            Durability::Delayed => {
                st.stats.commits_delayed += 1;
                if st.writer_idle && self.shared.config.max_delay_ms > 0 {
                    // The writer sleeps without a deadline; it computes one from the oldest
                    // unhardened commit.
                    st.writer_idle = false;
                    st.wake_pending = true;
                }
                let receipt = CommitReceipt { lsn, hardened: lsn <= st.hardened, commit_time_us };
                self.unlock(st);
                Ok(receipt)
            }
            Durability::Full => {
                st.stats.commits_full += 1;
                // Not hardened yet: the lock has been held since the append. The block is
                // sealed by the flush that hardens the record (`flush` seals the open block
                // when its target lies in it): at once if this thread flushes, else when the
                // flush after the running one starts, so the commits that queue behind one
                // flush share sectors instead of padding one each.
                self.harden_since(st, lsn, FlushReason::Commit, appended)?;
                Ok(CommitReceipt { lsn, hardened: true, commit_time_us })
            }
        }
    }

    /// Appends a fully durable commit record and has the writer thread flush it at once, but
    /// returns without waiting: for a caller that needs the commit forced to disk promptly
    /// and hardened only before it relies on it, which it waits for with
    /// [`LogManager::harden_commit`]. A sequence's next cache range is persisted this way
    /// while values of the current one are still being handed out.
    pub fn append_commit_unwaited(&self, txn: u64) -> Result<CommitReceipt, LogError> {
        let (mut st, lsn, _, commit_time_us) = self.append_commit_record(txn, Durability::Full)?;
        st.stats.commits_full += 1;
        // A flush already running or about to start for a committer (which seals the open
        // block) may take the record along; the writer flushes only if none has by then.
        if st.flush_wanted.is_none_or(|(wanted, _)| wanted < lsn) {
            st.flush_wanted = Some((lsn, FlushReason::Commit));
        }
        st.writer_idle = false;
        st.wake_pending = true;
        let receipt = CommitReceipt { lsn, hardened: lsn <= st.hardened, commit_time_us };
        self.unlock(st);
        Ok(receipt)
    }

    /// Appends a fully durable commit record and returns without starting a flush: the
    /// committer hardens it later with [`LogManager::harden_commit`], once for many commits
    /// (the commits of one client request, `walden_engine::deferred_commit`, whose records
    /// then share one flush). Until then only a flush for someone else, or a full buffer,
    /// writes it.
    pub fn append_commit_deferred(&self, txn: u64) -> Result<CommitReceipt, LogError> {
        let (mut st, lsn, _, commit_time_us) = self.append_commit_record(txn, Durability::Full)?;
        st.stats.commits_full += 1;
        let receipt = CommitReceipt { lsn, hardened: lsn <= st.hardened, commit_time_us };
        self.unlock(st);
        Ok(receipt)
    }

    /// Returns once the commit at `lsn` is hardened, flushing for it if no flush has yet:
    /// the wait for a commit appended with [`LogManager::append_commit_unwaited`] or
    /// [`LogManager::append_commit_deferred`]. It counts as a commit's flush wait.
    pub fn harden_commit(&self, lsn: Lsn) -> Result<(), LogError> {
        let st = self.shared.state.lock();
        st.check_usable()?;
        let target = lsn.min(st.end_lsn());
        self.harden(st, target, FlushReason::Commit)
    }

    /// Appends a commit record with its bookkeeping; the caller counts it and decides whether
    /// to wait. Returns the locked state, the record's LSN, when it was appended and its
    /// commit time.
    fn append_commit_record(
        &self,
        txn: u64,
        durability: Durability,
    ) -> Result<(MutexGuard<'_, State>, Lsn, Instant, u64), LogError> {
        // One clock read, before the lock (every committer queues behind the lock), of the
        // coarse clock (a fine one costs as much as the rest of the append on a virtual
        // machine): the commit's age for the time bound and the wait statistics starts here,
        // so a LOGBUFFER wait counts towards it (the bound errs early), and the record's
        // wall-clock time is derived from the same reading.
        let (appended, commit_time_us) = match durability {
            Durability::Delayed => self.shared.clock.coarse_now(),
            Durability::Full => self.shared.clock.fine_now(),
        };
        let st = self.shared.state.lock();
        // Delayed commits read a clock a tick behind the fully durable ones': the later of
        // the two keeps commit times in commit order.
        let commit_time_us = commit_time_us.max(st.last_commit_time_us);
        let body = CommitBody { durability, commit_time_us }.encode();
        let (mut st, lsn) = self.append_record(st, RecordKind::Commit, txn, &body)?;
        // Closed only once its record is in the buffer: the append may wait for buffer space
        // (LOGBUFFER), which releases the lock, and a checkpoint meanwhile must still see the
        // transaction open (rule 8).
        st.note_closed(txn);
        st.stats.last_commit_lsn = lsn;
        st.last_commit_time_us = st.last_commit_time_us.max(commit_time_us);
        st.unhardened.push_back((lsn, appended));
        Ok((st, lsn, appended, commit_time_us))
    }
}

impl LogManager {
    /// Appends one record under the state lock; returns its LSN (the position after it).
    fn append_record<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        kind: RecordKind,
        txn: u64,
        body: &[u8],
    ) -> Result<(MutexGuard<'a, State>, Lsn), LogError> {
        st.check_usable()?;
        let total = RECORD_HEADER_SIZE + body.len();
        // The common case: the whole record fits in the open block.
        if let Some(block) = st.open.as_mut().filter(|b| b.room() >= total) {
            let lsn = block.put(kind, Fragment::Full, txn, body);
            if block.is_full() {
                self.seal_full(&mut st);
            }
            self.shared.end_hint.store(lsn, Ordering::Relaxed);
            return Ok((st, lsn));
        }
        if body.len() > MAX_RECORD_LEN {
            return Err(LogError::RecordTooLarge { len: body.len(), max: MAX_RECORD_LEN });
        }
        let mut st = self.reserve_blocks(st, body.len())?;
        let mut rest = body;
        let mut first = true;
        loop {
            if st.open.is_none() {
                self.open_block(&mut st);
            }
            let Some(block) = st.open.as_mut() else {
                return Err(LogError::io("append", "no open block after reserving one"));
            };
            let room = block.room() - RECORD_HEADER_SIZE;
            let (piece, tail) = rest.split_at(rest.len().min(room));
            let last = tail.is_empty();
            let fragment = match (first, last) {
                (true, true) => Fragment::Full,
                (true, false) => Fragment::First,
                (false, false) => Fragment::Middle,
                (false, true) => Fragment::Last,
            };
            let lsn = block.put(kind, fragment, txn, piece);
            if block.is_full() {
                self.seal_full(&mut st);
            }
            rest = tail;
            first = false;
            if last {
                self.shared.end_hint.store(lsn, Ordering::Relaxed);
                return Ok((st, lsn));
            }
        }
    }

    /// Waits until the buffer has room for every new block a record of `len` body bytes needs.
    fn reserve_blocks<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        len: usize,
    ) -> Result<MutexGuard<'a, State>, LogError> {
        let mut waited_since = None;
        loop {
            st.check_usable()?;
            let needed = blocks_needed(&st, self.shared.data_size, len);
            if needed > self.shared.config.buffer_blocks {
                return Err(LogError::RecordTooLarge {
                    len,
                    max: (self.shared.config.buffer_blocks - 1) * (MAX_BLOCK_SIZE - 64),
                });
            }
            if st.blocks_in_use + needed <= self.shared.config.buffer_blocks {
                if let Some(since) = waited_since {
                    st.stats.logbuffer.record(Instant::elapsed(&since));
                }
                return Ok(st);
            }
            // The buffer is full: have the writer flush everything appended, and wait
            // (LOGBUFFER). Sealing the open block lets its space count as freed too.
            if st.open.as_ref().is_some_and(|b| b.used > BLOCK_HEADER_SIZE) {
                seal_open(&mut st);
            }
            let target = st.end_lsn();
            if st.flush_wanted.is_none_or(|(lsn, _)| lsn < target) {
                st.flush_wanted = Some((target, FlushReason::BufferFull));
            }
            self.shared.wake_writer.notify_one();
            waited_since.get_or_insert_with(Instant::now);
            self.shared.flushed.wait(&mut st);
        }
    }

    fn open_block(&self, st: &mut State) {
        let lsn = st.next_block_lsn;
        let room_in_segment = SegmentMap::room_in_segment(self.shared.data_size, lsn);
        let capacity = (MAX_BLOCK_SIZE as u64).min(room_in_segment) as usize;
        // Buffers keep their full size between uses: records overwrite them front to back and
        // the flusher zeroes the padding, so there is no need to clear 60 KB per block.
        let mut buf = st.pool.pop().unwrap_or_default();
        if buf.len() < MAX_BLOCK_SIZE {
            buf.resize(MAX_BLOCK_SIZE, 0);
        }
        st.blocks_in_use += 1;
        st.open = Some(Block { buf, lsn, used: BLOCK_HEADER_SIZE, capacity });
    }

    /// Seals the open block because it is full, and asks the writer to flush it.
    fn seal_full(&self, st: &mut State) {
        seal_open(st);
        let end = st.next_block_lsn;
        if st.flush_wanted.is_none_or(|(lsn, _)| lsn < end) {
            st.flush_wanted = Some((end, FlushReason::BlockFull));
        }
        st.wake_pending = true;
    }
}

/// Closes the open block to appends and queues it for writing (rule 2).
pub(super) fn seal_open(st: &mut State) {
    if let Some(block) = st.open.take() {
        st.next_block_lsn = block.lsn + round_up_to_sector(block.used as u64);
        st.sealed.push_back(block);
    }
}

/// Blocks a record of `len` body bytes needs beyond the room in the open block.
fn blocks_needed(st: &State, data_size: u64, len: usize) -> usize {
    let (mut room, mut next) = match &st.open {
        Some(b) => (b.room(), b.lsn + b.capacity as u64),
        None => (0, st.next_block_lsn),
    };
    let mut rest = len;
    let mut needed = 0;
    loop {
        if room > RECORD_HEADER_SIZE || (rest == 0 && room >= RECORD_HEADER_SIZE) {
            let fits = room - RECORD_HEADER_SIZE;
            if rest <= fits {
                return needed;
            }
            rest -= fits;
        }
        let capacity = (MAX_BLOCK_SIZE as u64).min(SegmentMap::room_in_segment(data_size, next));
        room = capacity as usize - BLOCK_HEADER_SIZE;
        next += capacity;
        needed += 1;
    }
}
