//! Every flush trigger of the durability contract, the receipts, group commit and fail-stop.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use walden_io::{FaultKind, MemFs, SimFs, Vfs};
use walden_log::{Durability, FlushReason, LogConfig, LogError};

/// Begin, a payload, and a commit: one small transaction.
fn txn(log: &walden_log::LogManager, id: u64, d: Durability) -> walden_log::CommitReceipt {
    log.append_begin(id).unwrap();
    log.append_payload(id, &[id as u8; 100]).unwrap();
    log.append_commit(id, d).unwrap()
}

#[test]
fn a_full_commit_hardens_itself_and_every_earlier_delayed_commit() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    let d1 = txn(&log, 1, Durability::Delayed);
    let d2 = txn(&log, 2, Durability::Delayed);
    assert!(!d1.hardened && !d2.hardened, "delayed commits return before the flush");
    assert!(log.hardened_lsn() < d2.lsn);
    let f = txn(&log, 3, Durability::Full);
    assert!(f.hardened);
    assert!(log.hardened_lsn() >= f.lsn && f.lsn > d2.lsn);
    let s = log.stats();
    assert_eq!(s.flushes_for(FlushReason::Commit), 1);
    assert_eq!(s.flushes, 1, "one flush hardened all three");
    assert_eq!(s.unhardened_commits, 0);
    assert_eq!(s.commits_hardened, 3);
    assert_eq!(s.flush_waits, 1);
    assert!(s.bytes_flushed <= 1024, "three small commits in {} bytes", s.bytes_flushed);
}

#[test]
fn a_filled_block_is_flushed_without_anyone_waiting() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    // 60 KB of delayed commits fills the first block; nothing else may trigger a flush.
    let mut id = 0;
    while log.end_lsn() < 61_440 {
        id += 1;
        txn(&log, id, Durability::Delayed);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while log.hardened_lsn() < 61_440 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let s = log.stats();
    assert!(s.hardened_lsn >= 61_440, "the full block was hardened");
    assert!(s.flushes_for(FlushReason::BlockFull) >= 1);
    assert_eq!(s.flushes_for(FlushReason::Commit) + s.flushes_for(FlushReason::TimeBound), 0);
}

#[test]
fn a_full_buffer_makes_appenders_wait_and_flushes() {
    let vfs: Arc<dyn Vfs> =
        Arc::new(SlowFs { inner: MemFs::new(), delay: Duration::from_millis(30) });
    let config = LogConfig { buffer_blocks: 2, ..small_config() };
    let log = open(&vfs, config);
    let payload = vec![7u8; 20_000];
    for id in 0..12 {
        log.append_payload(id, &payload).unwrap();
    }
    let s = log.stats();
    assert!(s.logbuffer.count >= 1, "appenders waited for buffer space: {:?}", s.logbuffer);
    assert!(s.flushes_for(FlushReason::BufferFull) >= 1, "{:?}", s.flushes_by_reason);
    log.close().unwrap();
    let log = open(&vfs, small_config());
    assert_eq!(records(&log).len(), 12);
}

#[test]
fn flush_to_hardens_up_to_the_requested_lsn() {
    let log = open(&mem(), small_config());
    let r = txn(&log, 1, Durability::Delayed);
    assert!(log.hardened_lsn() < r.lsn);
    log.flush_to(r.lsn).unwrap();
    assert!(log.hardened_lsn() >= r.lsn);
    assert_eq!(log.stats().flushes_for(FlushReason::WalRule), 1);
    log.flush_to(r.lsn).unwrap();
    assert_eq!(log.stats().flushes, 1, "an LSN already hardened needs no flush");
}

#[test]
fn flush_log_hardens_everything_appended() {
    let log = open(&mem(), small_config());
    txn(&log, 1, Durability::Delayed);
    log.append_payload(2, b"not committed yet").unwrap();
    let end = log.end_lsn();
    assert_eq!(log.flush_log().unwrap(), end);
    assert!(log.hardened_lsn() >= end);
    let s = log.stats();
    assert_eq!(s.flushes_for(FlushReason::FlushLog), 1);
    assert_eq!(s.unhardened_commits, 0);
}

#[test]
fn the_time_bound_hardens_a_delayed_commit_within_max_delay() {
    let config = LogConfig { max_delay_ms: 40, ..small_config() };
    let log = open(&mem(), config);
    let start = Instant::now();
    let r = txn(&log, 1, Durability::Delayed);
    assert!(!r.hardened);
    log.wait_hardened(r.lsn).unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_millis(40), "hardened after {took:?}");
    let s = log.stats();
    assert_eq!(s.flushes_for(FlushReason::TimeBound), 1);
    assert_eq!(s.max_delay_exceeded, 0);
}

#[test]
fn the_time_bound_holds_for_delayed_commits_among_full_ones() {
    // Full commits flush for themselves and leave the writer thread asleep; a delayed commit
    // appended during or after their flushes must still arm the writer's deadline.
    let config = LogConfig { max_delay_ms: 40, ..small_config() };
    let log = Arc::new(open(&mem(), config));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for i in 0..200u64 {
                    let d = if i % 2 == 0 { Durability::Full } else { Durability::Delayed };
                    txn(&log, t * 1000 + i + 1, d);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let start = Instant::now();
    let r = txn(&log, 9999, Durability::Delayed);
    log.wait_hardened(r.lsn).unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_millis(40), "hardened after {took:?}");
    assert_eq!(log.stats().max_delay_exceeded, 0);
}

#[test]
fn an_unwaited_full_commit_is_flushed_at_once_by_the_writer() {
    // No time bound: only the flush the commit asked for can harden it.
    let log = open(&mem(), small_config());
    log.append_payload(1, &[1; 100]).unwrap();
    let r = log.append_commit_unwaited(1).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while log.hardened_lsn() < r.lsn {
        assert!(Instant::now() < deadline, "the writer did not flush the forced commit");
        std::thread::sleep(Duration::from_millis(1));
    }
    log.harden_commit(r.lsn).unwrap();
    let s = log.stats();
    assert_eq!(s.commits_full, 1);
    assert_eq!(s.flushes_for(FlushReason::Commit), 1);
    assert_eq!(s.unhardened_commits, 0);
}

#[test]
fn without_a_time_bound_a_delayed_commit_waits_for_another_trigger() {
    let log = open(&mem(), small_config());
    let r = txn(&log, 1, Durability::Delayed);
    std::thread::sleep(Duration::from_millis(150));
    assert!(log.hardened_lsn() < r.lsn, "max_delay_ms = 0 means no time bound");
    let s = log.stats();
    assert_eq!(s.unhardened_commits, 1);
    assert!(s.oldest_unhardened_us >= 150_000);
}

#[test]
fn a_clean_shutdown_loses_no_delayed_commit() {
    let vfs = mem();
    let log = open(&vfs, small_config());
    for id in 1..=50 {
        txn(&log, id, Durability::Delayed);
    }
    log.close().unwrap();
    assert_eq!(log.stats().flushes_for(FlushReason::Shutdown), 1);
    assert!(matches!(log.append_begin(99), Err(LogError::Closed)));
    let log = open(&vfs, small_config());
    assert_eq!(committed(&log), (1..=50).collect::<Vec<_>>());
}

#[test]
fn dropping_the_manager_is_a_clean_shutdown_too() {
    let vfs = mem();
    {
        let log = open(&vfs, small_config());
        txn(&log, 1, Durability::Delayed);
    }
    assert_eq!(committed(&open(&vfs, small_config())), vec![1]);
}

#[test]
fn group_commit_hardens_many_commits_per_flush() {
    let vfs: Arc<dyn Vfs> =
        Arc::new(SlowFs { inner: MemFs::new(), delay: Duration::from_millis(2) });
    let log = Arc::new(open(&vfs, LogConfig { segment_size: 1 << 20, ..small_config() }));
    let threads = 16;
    let per_thread = 20;
    std::thread::scope(|s| {
        for t in 0..threads {
            let log = Arc::clone(&log);
            s.spawn(move || {
                for i in 0..per_thread {
                    let r = txn(&log, t * 1000 + i, Durability::Full);
                    assert!(r.hardened && log.hardened_lsn() >= r.lsn);
                }
            });
        }
    });
    let s = log.stats();
    let commits = threads * per_thread;
    assert_eq!(s.commits_full, commits);
    assert!(s.flushes * 3 < commits, "{} flushes for {commits} commits", s.flushes);
    assert!(s.avg_commits_per_flush() > 3.0);
    assert_eq!(s.writelog.count, s.flush_waits);
}

#[test]
fn a_failed_sync_fails_stop_and_is_never_retried() {
    for kind in [FaultKind::Eio, FaultKind::Enospc] {
        let fs = SimFs::new(1);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let log = open(&vfs, small_config());
        txn(&log, 1, Durability::Full);
        fs.fail_nth_sync(1, kind);
        let d = txn(&log, 2, Durability::Delayed);
        let err = log.append_commit(3, Durability::Full).unwrap_err();
        let code = if kind == FaultKind::Eio { libc_eio() } else { libc_enospc() };
        assert!(matches!(err, LogError::Io { os_code: Some(c), .. } if c == code), "{err}");
        let syncs = fs.syncs();
        assert!(log.append_begin(4).is_err(), "nothing is accepted after the failure");
        assert!(log.flush_log().is_err());
        assert!(log.flush_to(d.lsn).is_err());
        assert!(log.wait_hardened(d.lsn).is_err());
        assert!(log.failure().is_some());
        assert!(log.hardened_lsn() < d.lsn, "nothing hardened after the failure");
        assert!(log.close().is_err());
        assert_eq!(fs.syncs(), syncs, "the failed sync was not retried");
        drop(log);
        fs.crash();
        let log = open(&vfs, small_config());
        let c = committed(&log);
        assert_eq!(&c[..1], &[1], "the commit acknowledged before the failure survives");
    }
}

#[test]
fn a_failed_sync_releases_every_waiting_committer_with_the_error() {
    // Sixteen threads of fully durable commits on a slow disk, so that most of them are asleep
    // behind a running flush when its sync fails: each must wake with the error, none may hang
    // or be acknowledged.
    let fs = SimFs::new(7);
    let vfs: Arc<dyn Vfs> = Arc::new(SlowFs { inner: fs.clone(), delay: Duration::from_millis(2) });
    let log = Arc::new(open(&vfs, LogConfig { segment_size: 1 << 20, ..small_config() }));
    fs.fail_nth_sync(5, FaultKind::Eio);
    let failed_at = std::thread::scope(|s| {
        let workers: Vec<_> = (0..16u64)
            .map(|t| {
                let log = Arc::clone(&log);
                s.spawn(move || {
                    for i in 0..1000 {
                        let id = t * 10_000 + i + 1;
                        log.append_payload(id, &[1; 100]).unwrap_or_default();
                        if let Err(e) = log.append_commit(id, Durability::Full) {
                            return e;
                        }
                    }
                    panic!("thread {t}: no commit failed");
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect::<Vec<_>>()
    });
    for e in &failed_at {
        assert!(matches!(e, LogError::Io { os_code: Some(5), .. }), "{e}");
    }
    let s = log.stats();
    assert!(s.flushes < 5, "{} flushes succeeded, the fifth sync failed", s.flushes);
    assert!(
        s.commits_hardened < s.commits_full,
        "every commit behind the failure is unacknowledged"
    );
}

fn libc_eio() -> i32 {
    5
}

fn libc_enospc() -> i32 {
    28
}

#[test]
fn segments_are_reused_after_truncation_and_kept_without_it() {
    for truncate in [true, false] {
        let vfs = mem();
        let config = LogConfig { segment_size: 16 * 1024, ..small_config() };
        let log = open(&vfs, config.clone());
        for id in 0..400 {
            txn(&log, id, Durability::Full);
            if truncate {
                log.set_truncation_lsn(log.hardened_lsn());
            }
        }
        let s = log.stats();
        log.close().unwrap();
        if truncate {
            // Two initial slots, plus at most a few the writer grew ahead before the
            // truncation point passed a segment.
            assert!(s.segments_total <= 6, "reused: {} slots", s.segments_total);
        } else {
            // Every sequence the log used still has its own slot.
            let sequences = s.end_lsn / (16 * 1024 - 512) + 1;
            assert!(sequences > 6, "the workload should span several segments");
            assert!(s.segments_total >= sequences, "kept: {} slots", s.segments_total);
        }
        let log = open(&vfs, config);
        let c = committed(&log);
        assert_eq!(c.last(), Some(&399));
        if !truncate {
            assert_eq!(c, (0..400).collect::<Vec<_>>());
        }
    }
}

/// A file system whose `sync_data` calls, once `hold` is called, each wait until `allow`
/// lets that many through: a test decides when each flush of the log ends.
#[derive(Debug, Clone, Default)]
struct Gate(Arc<(std::sync::Mutex<GateState>, std::sync::Condvar)>);

#[derive(Debug, Default)]
struct GateState {
    held: bool,
    started: u64,
    allowed: u64,
}

impl Gate {
    fn hold(&self) {
        let mut g = self.0 .0.lock().unwrap();
        g.held = true;
        g.started = 0;
        g.allowed = 0;
    }
    /// Lets syncs up to number `n` (from 1, counted since `hold`) finish.
    fn allow(&self, n: u64) {
        self.0 .0.lock().unwrap().allowed = n;
        self.0 .1.notify_all();
    }
    fn started(&self) -> u64 {
        self.0 .0.lock().unwrap().started
    }
    fn pass(&self) {
        let mut g = self.0 .0.lock().unwrap();
        if !g.held {
            return;
        }
        g.started += 1;
        let n = g.started;
        while g.allowed < n {
            g = self.0 .1.wait(g).unwrap();
        }
    }
}

#[derive(Debug)]
struct GatedFs {
    inner: MemFs,
    gate: Gate,
}

#[derive(Debug)]
struct GatedFile {
    inner: walden_io::FileRef,
    gate: Gate,
}

impl Vfs for GatedFs {
    fn open(
        &self,
        path: &std::path::Path,
        mode: walden_io::OpenMode,
    ) -> std::io::Result<walden_io::FileRef> {
        Ok(Arc::new(GatedFile { inner: self.inner.open(path, mode)?, gate: self.gate.clone() }))
    }
    fn remove(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.remove(path)
    }
    fn exists(&self, path: &std::path::Path) -> bool {
        self.inner.exists(path)
    }
    fn create_dir_all(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn sync_dir(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn list(&self, dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
        self.inner.list(dir)
    }
}

impl walden_io::File for GatedFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.inner.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> std::io::Result<()> {
        self.gate.pass();
        self.inner.sync_data()
    }
    fn sync_all(&self) -> std::io::Result<()> {
        self.inner.sync_all()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn preallocate(&self, len: u64) -> std::io::Result<()> {
        self.inner.preallocate(len)
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.inner.set_len(len)
    }
    fn path(&self) -> &std::path::Path {
        self.inner.path()
    }
}

/// Waits up to ten seconds for `done`.
fn eventually(done: impl Fn() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    while !done() {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

#[test]
fn a_committer_returns_once_its_own_commit_is_hardened_not_after_flushes_for_later_ones() {
    // A fully durable committer's transaction keeps its locks until its commit returns: it
    // must not also wait for the flushes of commits that queued behind its own flush.
    let gate = Gate::default();
    let vfs: Arc<dyn Vfs> = Arc::new(GatedFs { inner: MemFs::new(), gate: gate.clone() });
    let log = Arc::new(open(&vfs, small_config()));
    // A first commit activates the segment (a sync of its own), so that from here on each
    // flush is one sync.
    txn(&log, 9, Durability::Full);
    gate.hold();
    std::thread::scope(|s| {
        let first = s.spawn(|| txn(&log, 1, Durability::Full));
        assert!(eventually(|| gate.started() == 1), "the first commit's flush reached its sync");
        let end_after_first = log.end_lsn();
        let second = s.spawn(|| txn(&log, 2, Durability::Full));
        assert!(eventually(|| log.end_lsn() > end_after_first), "the second commit appended");
        let end_with_second = log.end_lsn();
        // Let the second committer go to sleep behind the running flush.
        std::thread::sleep(Duration::from_millis(50));
        gate.allow(1);
        let returned = eventually(|| first.is_finished());
        // The second commit's flush cannot have ended: the gate holds every sync after the
        // first.
        let hardened_when_first_returned = log.hardened_lsn();
        // Whatever happened, let every flush through so that the threads end.
        gate.allow(u64::MAX);
        assert!(returned, "the first commit waited for the second one's flush");
        let r1 = first.join().unwrap();
        let r2 = second.join().unwrap();
        assert!(r1.hardened && r2.hardened && r2.lsn > r1.lsn);
        assert!(r1.lsn <= hardened_when_first_returned);
        assert!(hardened_when_first_returned < end_with_second, "the second was not hardened yet");
        assert!(log.hardened_lsn() >= r2.lsn);
    });
    let s = log.stats();
    assert_eq!(s.commits_hardened, 3);
    assert_eq!(s.flushes, 3, "one flush each: the second began after the first's ended");
}
