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
//!    that flushed for itself flushes a few more times for the threads behind it, then hands
//!    them to the writer thread: no waiter is ever left without a flusher.
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

use parking_lot::{Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use walden_io::{FileGrowth, FileRef, OpenMode, SplitMix64, Vfs};

use crate::format::{
    encode_record_header, round_up_to_sector, BlockHeader, CommitBody, Durability, FileHeader,
    Fragment, RecordKind, BLOCK_HEADER_SIZE, FILE_HEADER_SIZE, MAX_BLOCK_SIZE, RECORD_HEADER_SIZE,
    SECTOR,
};
use crate::reader::{find_end, LogScanner};
use crate::segment::SegmentMap;
use crate::stats::{bucket, FlushReason, LogStats};
use crate::{LogError, Lsn};

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
    fn unlock(&self, mut st: MutexGuard<'_, State>) {
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

    /// Tells the log that the layers above need nothing before `lsn` any more (SIMPLE recovery
    /// after a checkpoint), so segments wholly below it may be reused. Under FULL recovery the
    /// caller passes the oldest LSN a log backup still needs instead.
    pub fn set_truncation_lsn(&self, lsn: Lsn) {
        let hardened = self.hardened_lsn();
        let mut map = self.shared.segments.lock();
        map.truncation_lsn = map.truncation_lsn.max(lsn.min(hardened));
        self.shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
    }

    /// Turns away new work when the log is full: `Err(LogError::Full)` if appending `reserve`
    /// more bytes would take the log past the most it may hold (the maximum size, or the
    /// file as it is when it cannot grow) before a checkpoint or a log backup frees some.
    /// The caller passes, besides what the work itself may log, room for rolling back what
    /// its transaction logged so far: only new work is checked, so rollbacks always find
    /// room. Takes no lock while the log has no limit.
    pub fn check_room(&self, reserve: u64) -> Result<(), LogError> {
        let limit = self.shared.room_limit.load(Ordering::Relaxed);
        if limit == u64::MAX {
            return Ok(());
        }
        let end = self.shared.end_hint.load(Ordering::Relaxed);
        if end.saturating_add(reserve) <= limit {
            return Ok(());
        }
        // A file that could not grow for want of disk may be able to now: ask the writer to
        // try again, at most once a second (each try zero-fills until the disk is full).
        let map = self.shared.segments.lock();
        if map.out_of_disk {
            drop(map);
            let now = Instant::now();
            let mut st = self.shared.state.lock();
            if st.next_growth_retry.is_none_or(|at| now >= at) {
                st.next_growth_retry = Some(now + GROWTH_RETRY_INTERVAL);
                st.grow_wanted = true;
                st.retry_growth = true;
                self.shared.wake_writer.notify_one();
            }
        }
        Err(LogError::Full)
    }

    /// How far the log may run before new work is refused ([`LogManager::check_room`]);
    /// `u64::MAX` when nothing limits it.
    pub fn room_limit(&self) -> Lsn {
        self.shared.room_limit.load(Ordering::Relaxed)
    }

    /// The end of the appended log, read without the lock (it may be a moment old).
    pub fn end_hint(&self) -> Lsn {
        self.shared.end_hint.load(Ordering::Relaxed)
    }

    /// The growth policy in force.
    pub fn growth(&self) -> FileGrowth {
        self.shared.segments.lock().growth
    }

    /// Changes the growth policy (`ALTER DATABASE ... MODIFY FILE`): the maximum, the step,
    /// and a file that could not grow for want of disk tries again.
    pub fn set_growth(&self, growth: FileGrowth) {
        let mut map = self.shared.segments.lock();
        map.growth = growth;
        map.out_of_disk = false;
        self.shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
        let grow = map.spare_slots() < self.shared.config.spare_segments as usize;
        drop(map);
        if grow {
            self.shared.state.lock().grow_wanted = true;
            self.shared.wake_writer.notify_one();
        }
    }

    /// Grows the file now until it is at least `bytes` long (`MODIFY FILE (SIZE = ...)`),
    /// within the maximum; returns the new length.
    pub fn grow_to(&self, bytes: u64) -> Result<u64, LogError> {
        let mut map = self.shared.segments.lock();
        let want = bytes.saturating_sub(FILE_HEADER_SIZE).div_ceil(map.segment_size);
        let want = want.min(map.max_slots());
        if want > u64::from(map.slots) {
            let add = u32::try_from(want - u64::from(map.slots)).unwrap_or(u32::MAX);
            let result = map.grow(&self.shared.file, add);
            if let Err(e) = result {
                self.note_grow_error(&mut map, e.clone());
                return Err(e);
            }
            map.out_of_disk = false;
        }
        self.shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
        let total = u64::from(map.slots);
        let len = map.slot_offset(map.slots);
        drop(map);
        self.shared.state.lock().stats.segments_total = total;
        Ok(len)
    }

    /// `DBCC SHRINKFILE` of the log: frees the segments wholly below the truncation point and
    /// cuts free slots off the file's end down to `target_bytes` (the segment holding the
    /// log's end and everything after the truncation point stay). Returns the new length.
    pub fn shrink(&self, target_bytes: u64) -> Result<u64, LogError> {
        self.shared.state.lock().check_usable()?;
        let mut map = self.shared.segments.lock();
        let target = target_bytes.saturating_sub(FILE_HEADER_SIZE).div_ceil(map.segment_size);
        let slots = map.shrink(&self.shared.file, u32::try_from(target).unwrap_or(u32::MAX))?;
        self.shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
        let (active, len) = (map.active.len() as u64, map.slot_offset(slots));
        drop(map);
        let mut st = self.shared.state.lock();
        st.stats.segments_active = active;
        st.stats.segments_total = u64::from(slots);
        Ok(len)
    }

    /// The file's length now.
    pub fn file_bytes(&self) -> u64 {
        let map = self.shared.segments.lock();
        map.slot_offset(map.slots)
    }

    /// A growth failed: out of disk marks the file unable to grow (new work gets 9002 until a
    /// growth succeeds); anything else fails the log (rule 6).
    fn note_grow_error(&self, map: &mut SegmentMap, e: LogError) {
        note_grow_error(&self.shared, map, e);
    }

    /// Bytes per segment, header sector included, as the file was created with (the
    /// configuration's `segment_size` applies only to new files).
    pub fn segment_size(&self) -> u64 {
        self.shared.data_size + SECTOR
    }

    /// Every slot of the file, by file offset: what `sys.dm_db_log_info` lists as SQL Server
    /// lists its virtual log files.
    pub fn segments(&self) -> Vec<SegmentInfo> {
        let map = self.shared.segments.lock();
        let mut by_slot: Vec<SegmentInfo> = (0..map.slots)
            .map(|slot| SegmentInfo {
                file_offset: map.slot_offset(slot),
                size: map.segment_size,
                sequence: None,
                active: false,
            })
            .collect();
        for (&sequence, slot) in &map.active {
            if let Some(info) = by_slot.get_mut(slot.index as usize) {
                info.sequence = Some(sequence);
                // Still needed: it holds log at or after the truncation point.
                info.active = (sequence + 1) * map.data_size > map.truncation_lsn;
            }
        }
        by_slot
    }

    /// The truncation point set by [`LogManager::set_truncation_lsn`] (0 until one is set):
    /// the log before it is no longer needed and its segments may be reused.
    pub fn truncation_lsn(&self) -> Lsn {
        self.shared.segments.lock().truncation_lsn
    }

    /// The oldest position the file still holds: reading may start there.
    pub fn start_lsn(&self) -> Lsn {
        let map = self.shared.segments.lock();
        map.start_lsn().unwrap_or_else(|| self.end_lsn())
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

    fn flush_all(&self, reason: FlushReason) -> Result<Lsn, LogError> {
        let st = self.shared.state.lock();
        st.check_usable()?;
        let target = st.end_lsn();
        self.harden(st, target, reason)?;
        Ok(target)
    }

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

    /// Returns once `target` is hardened, flushing if nobody else is (rule 4), and records the
    /// wait (`WRITELOG`; for commits also `Log Flush Waits`). A thread that waits is released
    /// by the flusher without retaking the lock; the flusher records its wait for it.
    fn harden<'a>(
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
    fn harden_since<'a>(
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
                    st = lead_waiters(&self.shared, st, MAX_EXTRA_FLUSHES)?;
                }
            }
        }
        st.stats.record_hardening_wait(reason == FlushReason::Commit, start.elapsed());
        Ok(())
    }
}

/// Closes the open block to appends and queues it for writing (rule 2).
fn seal_open(st: &mut State) {
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

/// How many more flushes a committer that flushed for itself does for the threads that queued
/// behind it before handing the role on. The running flusher is already on a CPU; waking a
/// parked waiter to flush costs a scheduling delay behind every commit just released, which on
/// a small machine takes longer than the flush. A few rounds keep the disk busy without making
/// the flusher's own commit wait long.
const MAX_EXTRA_FLUSHES: u32 = 4;

/// After a flush: flushes again for the threads waiting (up to `rounds` times), then hands the
/// threads still waiting to the writer thread, so no waiter is ever left without a flusher.
fn lead_waiters<'a>(
    shared: &'a Shared,
    mut st: MutexGuard<'a, State>,
    rounds: u32,
) -> Result<MutexGuard<'a, State>, LogError> {
    for _ in 0..rounds {
        let Some((&(target, _), _)) = st.waiters.last_key_value() else { return Ok(st) };
        if st.flushing {
            return Ok(st);
        }
        st = flush(shared, st, target, FlushReason::Commit)?;
    }
    if !st.flushing {
        if let Some((&(target, _), _)) = st.waiters.last_key_value() {
            if st.flush_wanted.is_none_or(|(lsn, _)| lsn < target) {
                st.flush_wanted = Some((target, FlushReason::Commit));
            }
            shared.wake_writer.notify_one();
        }
    }
    Ok(st)
}

/// Rule 6: makes the failure sticky (the first one wins) and releases every waiter to see it.
fn fail(shared: &Shared, st: &mut State, e: LogError) {
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
fn flush<'a>(
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
fn writer_loop(shared: &Shared) {
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
                st = match flush(shared, st, target, reason)
                    .and_then(|st| lead_waiters(shared, st, u32::MAX))
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

/// Grows the file by the policy's step while fewer than the configured spare segments are
/// ready and the policy allows (`retry`: also if the last growth ran out of disk). A step is
/// zero-filled a slot at a time, each under the segment map's lock: a flush that reaches the
/// end of its segment meanwhile waits for one slot's zero-fill at most, not a whole step's
/// (64 MB by default).
fn grow_ahead(shared: &Shared, retry: bool) {
    let mut map = shared.segments.lock();
    if retry {
        map.out_of_disk = false;
    }
    'steps: while map.spare_slots() < shared.config.spare_segments as usize {
        let add = map.growth_slots();
        if add == 0 {
            break;
        }
        for _ in 0..add {
            if let Err(e) = map.grow(&shared.file, 1) {
                note_grow_error(shared, &mut map, e);
                break 'steps;
            }
            shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
            MutexGuard::unlocked_fair(&mut map, || {});
        }
    }
    shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
    let total = u64::from(map.slots);
    drop(map);
    shared.state.lock().stats.segments_total = total;
}

/// See [`LogManager::note_grow_error`].
fn note_grow_error(shared: &Shared, map: &mut SegmentMap, e: LogError) {
    match &e {
        LogError::Io { op: "grow", os_code: Some(code), .. }
            if std::io::Error::from_raw_os_error(*code).kind()
                == std::io::ErrorKind::StorageFull =>
        {
            map.out_of_disk = true;
            shared.room_limit.store(map.room_limit(), Ordering::Relaxed);
        }
        _ => fail(shared, &mut shared.state.lock(), e),
    }
}

/// Creates a log file: header, zero-filled initial segments, all durable.
fn create_file(
    vfs: &dyn Vfs,
    path: &Path,
    config: &LogConfig,
) -> Result<(FileRef, FileHeader), LogError> {
    let header = FileHeader {
        segment_size: config.segment_size,
        log_id: fresh_random(),
        created_us: now_us(),
    };
    let file = vfs.open(path, OpenMode::CreateNew).map_err(|e| LogError::from_io("create", e))?;
    let len = FILE_HEADER_SIZE + u64::from(config.initial_segments) * config.segment_size;
    file.preallocate(len).map_err(|e| LogError::from_io("grow", e))?;
    file.write_all_at(&header.encode(), 0).map_err(|e| LogError::from_io("write", e))?;
    file.sync_all().map_err(|e| LogError::from_io("sync", e))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        vfs.sync_dir(dir).map_err(|e| LogError::from_io("sync", e))?;
    }
    Ok((file, header))
}

/// Zeroes stream positions `[from, to)` (a torn tail's remnants) in the active segments.
fn zero_range(file: &FileRef, map: &SegmentMap, from: Lsn, to: Lsn) -> Result<(), LogError> {
    let mut p = from;
    while p < to {
        let n = SegmentMap::room_in_segment(map.data_size, p).min(to - p);
        if let Some((offset, _)) = map.locate(p) {
            let zeros = vec![0u8; n as usize];
            file.write_all_at(&zeros, offset).map_err(|e| LogError::from_io("write", e))?;
        }
        p += n;
    }
    Ok(())
}

impl Drop for LogManager {
    fn drop(&mut self) {
        // A clean shutdown if nobody called `close`; errors were already made sticky.
        let _ = self.close();
    }
}
