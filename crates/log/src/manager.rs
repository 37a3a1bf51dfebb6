//! The log manager: appending, the bounded log buffer, group commit and the flush triggers.
//!
//! # The protocol
//!
//! One mutex (`Shared::state`) guards the append side and the flush bookkeeping; the I/O of a
//! flush happens outside it. The numbered rules:
//!
//! 1. Appenders copy records into the *open block* under the state lock. A record that does not
//!    fit is split into fragments over new blocks; before writing the first byte the appender
//!    reserves every block the record needs, waiting (`LOGBUFFER`) while the buffer is full, so
//!    a record is never interleaved with another and never waits half-written.
//! 2. A block is *sealed* (closed to appends, queued for writing) when it fills, or when a flush
//!    needs the records in it, which a fully durable commit's flush always does: the block is
//!    sealed as that flush starts, so the commits that queue while another flush runs share
//!    sectors, and one record's commit costs one sector on the disk.
//! 3. At most one thread *flushes* at a time (`State::flushing`). It takes every sealed block,
//!    drops the lock, writes them with one vectored write per segment, syncs once, retakes the
//!    lock and advances `hardened` to the end of what it wrote. So one write and one sync
//!    release every waiter at or below the new hardened LSN: group commit, with no delay.
//! 4. Whoever needs the log hardened and finds nobody flushing becomes the flusher itself: a
//!    fully durable committer, `flush_to`, `flush_log`. No hand-off to another thread on the
//!    commit path, so one thread's fully durable commits run at the disk's sync rate.
//! 5. A background writer thread does the flushes nobody waits for: a sealed full block, a
//!    full buffer, and the time bound, which starts a flush when the oldest unhardened commit
//!    is `max_delay_ms / 2` old, leaving the other half for the write. It also grows the file
//!    ahead of need, so a flush rarely has to: by the growth policy's step (`FILEGROWTH`) up to
//!    its maximum (`MAXSIZE`), whenever fewer than `spare_segments` slots are ready. A growth
//!    that runs out of disk is not a failure of the log: the file is taken as unable to grow
//!    (new work gets error 9002) until a later growth succeeds.
//! 6. A failed write or sync is sticky (`State::failed`): every waiter and every later call gets
//!    the error, nothing is hardened or acknowledged afterwards, and the sync is never retried
//!    (after a failed `fsync` the kernel may have dropped the dirty pages: retrying can report
//!    success for data that is gone).
//! 7. `hardened` only grows, and only to the end of blocks that a sync covered. A commit's
//!    receipt says `hardened` only if its LSN is at or below it.
//! 8. The log knows its *open transactions*: a transaction is open from the append of its
//!    first begin or payload record, registered with the end of the log at that moment (at or
//!    before the record's start) with the tag that record carried (who the transaction works
//!    for, in the terms of the layers above), until its commit or abort record has been
//!    appended (the append may wait for buffer space, releasing the lock). Both happen
//!    under the state lock the append holds anyway, so a transaction costs no lock of its own,
//!    and a reader of the oldest open start (a checkpoint) under that lock sees every
//!    transaction whose records precede the current end of the log.
//! 9. A thread that needs the log hardened while another flushes *sleeps on the flush that
//!    will harden its LSN*: the running flush if its LSN lies in what that flush writes, else
//!    the next one. Flush number `n` bumps the counter `done[n % 2]` when it ends and wakes
//!    every thread sleeping on that counter with one system call; the threads that wait for
//!    the following flush sleep on the other counter and are not disturbed. A woken thread
//!    reads the hardened LSN (an atomic copy, stored under the state lock) and returns, or
//!    looks again under the lock (a flush that did not reach it, a failure). The flusher
//!    records the waits of the threads it releases, so they need not retake the lock. A thread
//!    that flushed for itself hands the threads behind it to the writer thread and returns (its
//!    transaction's locks are held until it does), and the writer flushes until none waits: no
//!    waiter is ever left without a flusher.
//! 10. The writer thread is woken only when it has work: a flush nobody else does, or a
//!     deadline to arm because a delayed commit is unhardened while it sleeps without one
//!     (`State::writer_idle`). Waking it after every flush cost a context switch per flush.
//!     An appender wakes it only after releasing the state lock (`State::wake_pending`,
//!     [`LogManager::unlock`]), so that the lock is never handed to a writer still waking up.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use walden_io::{FileGrowth, FileRef, OpenMode, SplitMix64, Vfs};

use crate::format::{
    encode_record_header, FileHeader, Fragment, RecordKind, MAX_BLOCK_SIZE, RECORD_HEADER_SIZE,
    SECTOR,
};
use crate::reader::{find_end, LogScanner};
use crate::segment::SegmentMap;
use crate::stats::{FlushReason, LogStats};
use crate::{LogError, Lsn};

mod append;
mod flush;
mod space;

use flush::writer_loop;
use space::{create_file, zero_range};

/// How often new work refused because the disk was full may ask the writer to try growing
/// the log again.
const GROWTH_RETRY_INTERVAL: Duration = Duration::from_secs(1);

/// The largest record body the log accepts. Larger values are split by the layers above (a
/// page image is 8 KB; long values go to overflow pages, each logged on its own).
pub const MAX_RECORD_LEN: usize = 1 << 20;

/// How a log is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// Blocks in the log buffer (each up to 60 KB): 128 by default, 7.5 MB as in SQL Server.
    pub buffer_blocks: usize,
    /// The time bound on delayed commits: none stays unhardened longer than this while the
    /// disk works. 0 turns it off (as in SQL Server, which has no bound).
    pub max_delay_ms: u64,
    /// Bytes per segment, header sector included; a multiple of 512, at least 1 KiB.
    pub segment_size: u64,
    /// Segments a new log file is created with.
    pub initial_segments: u32,
    /// Spare segments the writer keeps allocated ahead of the log's end: when fewer are
    /// ready, it grows the file by one step of `growth`.
    pub spare_segments: u32,
    /// How the file grows (`FILEGROWTH`, `MAXSIZE`); [`LogManager::set_growth`] changes it.
    pub growth: FileGrowth,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            buffer_blocks: 128,
            max_delay_ms: 100,
            // SQL Server's model database: an 8 MB log, 4 virtual log files, 64 MB growths.
            segment_size: 2 << 20,
            initial_segments: 4,
            spare_segments: 1,
            growth: FileGrowth::MODEL,
        }
    }
}

impl LogConfig {
    fn validate(&self) -> Result<(), LogError> {
        let bad = |why: String| Err(LogError::Config(why));
        if self.buffer_blocks < 2 {
            return bad(format!("buffer_blocks must be at least 2, not {}", self.buffer_blocks));
        }
        if self.segment_size < 2 * SECTOR || !self.segment_size.is_multiple_of(SECTOR) {
            return bad(format!(
                "segment_size must be a multiple of {SECTOR} of at least {}, not {}",
                2 * SECTOR,
                self.segment_size
            ));
        }
        if self.initial_segments == 0 {
            return bad("initial_segments must be at least 1".into());
        }
        Ok(())
    }
}

/// An open transaction, as [`LogManager::open_transactions`] lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenTransaction {
    /// The transaction's id in this log.
    pub txn: u64,
    /// The end of the log when its first record was appended: at or before that record.
    pub start: Lsn,
    /// The tag its first record carried ([`LogManager::append_tagged_payload`]), else 0.
    pub tag: u64,
}

/// What `LogManager::append_commit` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitReceipt {
    /// The commit record's LSN.
    pub lsn: Lsn,
    /// Whether it was already hardened when the call returned (always for a full commit).
    pub hardened: bool,
    /// The commit time the record carries, microseconds since the Unix epoch: the one
    /// timestamp of the commit, so that callers need not read the clock again.
    pub commit_time_us: u64,
}

/// What opening the log found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenReport {
    /// The file did not exist and was created.
    pub created: bool,
    /// The oldest position the file still holds.
    pub start_lsn: Lsn,
    /// The end of the log: every byte before it was hardened before the last shutdown or crash.
    pub end_lsn: Lsn,
    /// Valid blocks read to find the end.
    pub blocks_read: u64,
    /// A torn tail that was found after the end and zeroed: `(end, remnants_end)`.
    pub torn_tail_zeroed: Option<(Lsn, Lsn)>,
}

/// A block being filled or waiting to be written.
#[derive(Debug)]
struct Block {
    buf: Vec<u8>,
    lsn: Lsn,
    used: usize,
    capacity: usize,
}

impl Block {
    fn room(&self) -> usize {
        self.capacity - self.used
    }

    /// Whether no further record fragment fits: the block must be sealed (rule 2).
    fn is_full(&self) -> bool {
        self.room() <= RECORD_HEADER_SIZE
    }

    /// Copies one record fragment (header and `body`) after the used bytes; returns the LSN
    /// just past it. The caller has checked that it fits.
    fn put(&mut self, kind: RecordKind, fragment: Fragment, txn: u64, body: &[u8]) -> Lsn {
        let at = self.used;
        let end = at + RECORD_HEADER_SIZE + body.len();
        encode_record_header(
            &mut self.buf[at..at + RECORD_HEADER_SIZE],
            body.len() as u32,
            kind,
            fragment,
            txn,
        );
        self.buf[at + RECORD_HEADER_SIZE..end].copy_from_slice(body);
        self.used = end;
        self.lsn + end as u64
    }
}

/// A thread waiting in `harden` while another thread flushes, as the flusher sees it: what it
/// needs to record the wait when its flush releases the thread (rule 9).
#[derive(Debug, Clone, Copy)]
struct Waiting {
    since: Instant,
    commit: bool,
}

/// Where waiting threads sleep (rule 9). A flush-per-commit workload on a small machine spends
/// most of its time waking threads: one system call that wakes a flush's whole group is far
/// cheaper than one per thread, and cheaper than threads waking each other, which on two
/// CPUs keeps preempting the threads that do the waking.
#[derive(Debug)]
struct FlushEvents {
    /// Flushes ended, by the parity of the flush's number.
    done: [AtomicU32; 2],
    /// A copy of `State::hardened`, stored under the state lock.
    hardened: AtomicU64,
}

impl FlushEvents {
    fn counter(&self, flush_no: u64) -> &AtomicU32 {
        &self.done[(flush_no % 2) as usize]
    }

    /// Flush `flush_no` ended: wake the threads sleeping on it. `sleepers`: whether any
    /// thread was registered as waiting when it ended (each sleeper keeps its entry until it
    /// wakes), so that a flush nobody waits for costs no system call.
    fn ended(&self, flush_no: u64, sleepers: bool) {
        let counter = self.counter(flush_no);
        counter.fetch_add(1, Ordering::Release);
        if sleepers {
            atomic_wait::wake_all(counter);
        }
    }

    /// Sleeps until flush `flush_no` ends (or a spurious wake-up: the caller checks), given the
    /// counter's value `seen` read under the state lock before that flush could end.
    fn sleep(&self, flush_no: u64, seen: u32) {
        let counter = self.counter(flush_no);
        while counter.load(Ordering::Acquire) == seen {
            atomic_wait::wait(counter, seen);
        }
    }
}

#[derive(Debug)]
struct State {
    open: Option<Block>,
    sealed: VecDeque<Block>,
    pool: Vec<Vec<u8>>,
    /// Open + sealed + being written; at most `config.buffer_blocks`.
    blocks_in_use: usize,
    /// Where the next block starts when none is open.
    next_block_lsn: Lsn,
    hardened: Lsn,
    flushing: bool,
    /// A flush the writer thread should do.
    flush_wanted: Option<(Lsn, FlushReason)>,
    grow_wanted: bool,
    /// The growth asked for should be tried even if the last one ran out of disk.
    retry_growth: bool,
    /// When a refused request may next ask for such a retry.
    next_growth_retry: Option<Instant>,
    /// The writer sleeps with no time-bound deadline: a commit left unhardened must wake it.
    writer_idle: bool,
    failed: Option<LogError>,
    closed: bool,
    /// Threads waiting for a flush, by the LSN they wait for (and an id, for uniqueness).
    waiters: BTreeMap<(Lsn, u64), Waiting>,
    next_waiter_id: u64,
    /// Flushes begun; the running one, if any, is number `flushes_begun - 1` (rule 9).
    flushes_begun: u64,
    /// Where the running flush ends: what `hardened` becomes when it succeeds.
    flushing_to: Lsn,
    /// Commits appended and not yet hardened, in LSN order, with when they were appended.
    unhardened: VecDeque<(Lsn, Instant)>,
    /// The segment the flusher wrote last: (sequence, file offset of its data, salt), so a
    /// flush inside it needs no lock on the segment map.
    segment_cache: Option<(u64, u64, u64)>,
    /// Open transactions (rule 8).
    open_txns: OpenTxns,
    /// The writer is to be woken by whoever releases this lock next (see
    /// [`LogManager::unlock`]).
    wake_pending: bool,
    /// The commit time of the commit at `stats.last_commit_lsn`.
    last_commit_time_us: u64,
    stats: LogStats,
}

impl State {
    fn end_lsn(&self) -> Lsn {
        self.open.as_ref().map_or(self.next_block_lsn, |b| b.lsn + b.used as u64)
    }

    /// Registers transaction `txn` as open from `start`, the end of the log before its record
    /// was appended, unless it is open already (rule 8). Transaction 0 is the system's.
    fn note_open(&mut self, txn: u64, start: Lsn, tag: u64) {
        if txn != 0 {
            self.open_txns.open(txn, (start, tag));
        }
    }

    /// Transaction `txn` ended (or never logged anything): it is no longer open.
    fn note_closed(&mut self, txn: u64) {
        self.open_txns.close(txn);
    }

    fn check_usable(&self) -> Result<(), LogError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.closed {
            return Err(LogError::Closed);
        }
        Ok(())
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when `hardened` advances, a flush ends, buffer space frees up or the log fails.
    flushed: Condvar,
    /// Signalled when the writer thread has work.
    wake_writer: Condvar,
    events: FlushEvents,
    segments: Mutex<SegmentMap>,
    file: FileRef,
    path: PathBuf,
    log_id: u64,
    data_size: u64,
    config: LogConfig,
    clock: CommitClock,
    /// [`SegmentMap::room_limit`], stored whenever the map changes it, so that the check of
    /// new work ([`LogManager::check_room`]) takes no lock.
    room_limit: AtomicU64,
    /// The end of the log after the latest append, stored under the state lock.
    end_hint: AtomicU64,
}

/// One slot of a log file and the segment it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentInfo {
    /// Where the slot starts in the file (its header sector).
    pub file_offset: u64,
    /// Bytes, header sector included.
    pub size: u64,
    /// The sequence of the segment it holds; `None` for a slot never used or freed.
    pub sequence: Option<u64>,
    /// The segment holds log the database still needs (at or after the truncation point).
    pub active: bool,
}

/// The transaction log of one database. Cheap to share: all methods take `&self`.
#[derive(Debug)]
pub struct LogManager {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

/// The open transactions of a log (rule 8): id -> (the end of the log when its first record
/// came, the tag its first record carried).
///
/// The newest is kept apart from the map: a transaction alone in its database, as a short
/// one usually is, opens and closes without a map operation, and a transaction's later records
/// find it without a probe. The map holds the others. A transaction found in the map while
/// the newest place is free moves there, so that a long transaction's records skip the probe
/// again once the short ones beside it have ended.
#[derive(Debug, Default)]
struct OpenTxns {
    newest: Option<(u64, (Lsn, u64))>,
    older: HashMap<u64, (Lsn, u64), BuildHasherDefault<TxnIdHasher>>,
}

impl OpenTxns {
    /// Registers `txn` as open with `entry`, unless it is open already.
    fn open(&mut self, txn: u64, entry: (Lsn, u64)) {
        if matches!(self.newest, Some((t, _)) if t == txn) {
            return;
        }
        if !self.older.is_empty() {
            if self.newest.is_some() {
                if self.older.contains_key(&txn) {
                    return;
                }
            } else if let Some(found) = self.older.remove(&txn) {
                self.newest = Some((txn, found));
                return;
            }
        }
        if let Some((t, e)) = self.newest.replace((txn, entry)) {
            self.older.insert(t, e);
        }
    }

    /// Forgets `txn`, if it is open.
    fn close(&mut self, txn: u64) {
        if matches!(self.newest, Some((t, _)) if t == txn) {
            self.newest = None;
        } else if !self.older.is_empty() {
            self.older.remove(&txn);
        }
    }

    /// Every open transaction, in no order.
    fn iter(&self) -> impl Iterator<Item = (u64, (Lsn, u64))> + '_ {
        self.newest.into_iter().chain(self.older.iter().map(|(&t, &e)| (t, e)))
    }
}

/// Hashes a transaction id for [`OpenTxns`]: ids are consecutive numbers, which one
/// multiply by an odd constant spreads over every bit the table's buckets and tags use.
#[derive(Default)]
struct TxnIdHasher(u64);

impl Hasher for TxnIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }

    /// Not called for a `u64` key; it folds the bytes in, to be a hasher all the same.
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }
}

fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// Commit timestamps: the wall clock read once, when the log opens, advanced by the monotonic
/// clock. A commit then needs one clock read for both its record's time and its age, and
/// commit times never go backwards within a run, even when the system clock is stepped (they
/// follow the wall clock again at the next open).
///
/// Delayed commits read the coarse clock, which lags the fine one by less than a tick (a few
/// milliseconds): their commit time is their moment truncated to the tick, as a clock of that
/// resolution reads, and their age is taken one tick further back, so that it is never younger
/// than it is: the time bound, computed from it, errs early (flushes sooner), never late.
/// Fully durable commits, which wait for a flush anyway, read the fine clock.
#[derive(Debug)]
struct CommitClock {
    anchor: Instant,
    anchor_coarse: Duration,
    anchor_us: u64,
    tick: Duration,
}

impl CommitClock {
    fn new() -> CommitClock {
        CommitClock {
            anchor: Instant::now(),
            anchor_coarse: walden_io::clock::coarse_monotonic(),
            anchor_us: now_us(),
            tick: walden_io::clock::coarse_resolution(),
        }
    }

    /// Now, for a delayed commit: an instant no later than the true one (for its age), and
    /// microseconds since the Unix epoch (the commit time).
    fn coarse_now(&self) -> (Instant, u64) {
        let since = walden_io::clock::coarse_monotonic().saturating_sub(self.anchor_coarse);
        let at = self.anchor + since;
        (at.checked_sub(self.tick).unwrap_or(at), self.epoch_us(since))
    }

    /// Now, read from the fine clock, for a fully durable commit, which waits for its flush
    /// anyway and whose wait is timed from this instant (`WRITELOG`).
    fn fine_now(&self) -> (Instant, u64) {
        let now = Instant::now();
        (now, self.epoch_us(now.saturating_duration_since(self.anchor)))
    }

    fn epoch_us(&self, since_anchor: Duration) -> u64 {
        let since_us = u64::try_from(since_anchor.as_micros()).unwrap_or(u64::MAX);
        self.anchor_us.saturating_add(since_us)
    }
}

/// A random 64-bit number for log ids and segment nonces: time, a counter and the process id
/// mixed by SplitMix64. Uniqueness, not secrecy, is what matters.
fn fresh_random() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let seed = nanos
        ^ COUNTER.fetch_add(1, Ordering::Relaxed).rotate_left(32)
        ^ u64::from(std::process::id()).rotate_left(48);
    SplitMix64::new(seed).next_u64()
}

impl LogManager {
    /// Opens the log at `path`, creating it if it does not exist, finds its end (truncating a
    /// torn tail), and starts the writer thread.
    pub fn open(
        vfs: Arc<dyn Vfs>,
        path: &Path,
        config: LogConfig,
    ) -> Result<(LogManager, OpenReport), LogError> {
        config.validate()?;
        let created = !vfs.exists(path);
        let (file, header) = if created {
            create_file(&*vfs, path, &config)?
        } else {
            let file =
                vfs.open(path, OpenMode::Existing).map_err(|e| LogError::from_io("open", e))?;
            let mut sector = [0u8; SECTOR as usize];
            file.read_exact_at(&mut sector, 0).map_err(|e| LogError::from_io("read", e))?;
            let header = FileHeader::decode(&sector)?;
            (file, header)
        };
        let mut map = SegmentMap::recover(&file, header.segment_size, header.log_id)?;
        let scan = find_end(&file, &map)?;
        let mut torn_tail_zeroed = None;
        if let Some(remnants_end) = scan.remnants_end {
            zero_range(&file, &map, scan.end, remnants_end)?;
            file.sync_data().map_err(|e| LogError::from_io("sync", e))?;
            torn_tail_zeroed = Some((scan.end, remnants_end));
        }
        let report = OpenReport {
            created,
            start_lsn: map.start_lsn().unwrap_or(scan.end),
            end_lsn: scan.end,
            blocks_read: scan.blocks,
            torn_tail_zeroed,
        };
        let stats = LogStats {
            hardened_lsn: scan.end,
            end_lsn: scan.end,
            segments_active: map.active.len() as u64,
            segments_total: u64::from(map.slots),
            ..LogStats::default()
        };
        map.growth = config.growth;
        let grow_wanted = map.spare_slots() < config.spare_segments as usize;
        let room_limit = AtomicU64::new(map.room_limit());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                open: None,
                sealed: VecDeque::new(),
                pool: Vec::new(),
                blocks_in_use: 0,
                next_block_lsn: scan.end,
                hardened: scan.end,
                flushing: false,
                flush_wanted: None,
                grow_wanted,
                retry_growth: false,
                next_growth_retry: None,
                writer_idle: false,
                failed: None,
                closed: false,
                waiters: BTreeMap::new(),
                next_waiter_id: 0,
                flushes_begun: 0,
                flushing_to: scan.end,
                unhardened: VecDeque::new(),
                segment_cache: None,
                open_txns: OpenTxns::default(),
                wake_pending: false,
                last_commit_time_us: 0,
                stats,
            }),
            flushed: Condvar::new(),
            wake_writer: Condvar::new(),
            events: FlushEvents {
                done: [AtomicU32::new(0), AtomicU32::new(0)],
                hardened: AtomicU64::new(scan.end),
            },
            data_size: map.data_size,
            segments: Mutex::new(map),
            file,
            path: path.to_path_buf(),
            log_id: header.log_id,
            config,
            clock: CommitClock::new(),
            room_limit,
            end_hint: AtomicU64::new(scan.end),
        });
        let writer_shared = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("walden-log-writer".into())
            .spawn(move || writer_loop(&writer_shared))
            .map_err(|e| LogError::from_io("spawn", e))?;
        Ok((LogManager { shared, writer: Mutex::new(Some(writer)) }, report))
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The configuration the log runs with.
    pub fn config(&self) -> &LogConfig {
        &self.shared.config
    }

    /// Every byte before this LSN is on disk.
    pub fn hardened_lsn(&self) -> Lsn {
        self.shared.state.lock().hardened
    }

    /// The end of the appended log.
    pub fn end_lsn(&self) -> Lsn {
        self.shared.state.lock().end_lsn()
    }

    /// The sticky failure, if a write or sync failed.
    pub fn failure(&self) -> Option<LogError> {
        self.shared.state.lock().failed.clone()
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> LogStats {
        let st = self.shared.state.lock();
        let mut s = st.stats.clone();
        s.hardened_lsn = st.hardened;
        s.end_lsn = st.end_lsn();
        s.unhardened_commits = st.unhardened.len() as u64;
        s.oldest_unhardened_us =
            st.unhardened.front().map_or(0, |(_, at)| at.elapsed().as_micros() as u64);
        s
    }

    /// Iterates over the hardened records whose LSN is greater than `after`.
    pub fn scan(&self, after: Lsn) -> LogScanner {
        let end = self.hardened_lsn();
        let map = self.shared.segments.lock();
        LogScanner::new(
            Arc::clone(&self.shared.file),
            map.active.clone(),
            map.segment_size,
            after,
            end,
            (MAX_RECORD_LEN + MAX_BLOCK_SIZE) as u64,
        )
    }

    /// Clean shutdown: hardens everything, stops the writer. Later calls fail with
    /// [`LogError::Closed`]. Walden loses no delayed commit on a clean shutdown.
    pub fn close(&self) -> Result<(), LogError> {
        let result = match self.flush_all(FlushReason::Shutdown) {
            Ok(_) | Err(LogError::Closed) => Ok(()),
            Err(e) => Err(e),
        };
        {
            let mut st = self.shared.state.lock();
            st.closed = true;
            self.shared.wake_writer.notify_all();
            self.shared.flushed.notify_all();
        }
        if let Some(handle) = self.writer.lock().take() {
            let _ = handle.join();
        }
        result
    }
}

impl Drop for LogManager {
    fn drop(&mut self) {
        // A clean shutdown if nobody called `close`; errors were already made sticky.
        let _ = self.close();
    }
}
