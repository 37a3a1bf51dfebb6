//! A real process crash: a worker process commits rows from several threads, mixing fully
//! durable and delayed commits, and acknowledges each commit on stdout; the test kills it with
//! SIGKILL, recovers the directory, and checks what survived against the acknowledgements.
//!
//! The worker is this test executable itself, started again with [`WORKER_ENV`] set and
//! filtered to the `kill_worker` test (which does nothing in a normal run): that needs no
//! separate binary and no assumption about where cargo puts one.
//!
//! Each of the three cycles continues on the same directory with new ids, and recovers twice:
//! once in a child that is killed right after recovery (so the second recovery starts from
//! a crash that followed a recovery), once in this process, then once more after a clean
//! shutdown. What must hold:
//!
//! * every acknowledged fully durable commit survived;
//! * per thread, the surviving rows are a prefix of its commits, with at most one commit the
//!   worker did not get to acknowledge;
//! * a commit acknowledged before some thread began a fully durable commit that was
//!   acknowledged survived (the full commit's flush hardened it, rule W5);
//! * rows of earlier cycles are exactly those the earlier checks found;
//! * the trees pass their structural check, and every recovery finds the same rows.

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{col, pk};
use walden_engine::catalog::TableDef;
use walden_engine::database::CATALOG_ROOT;
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{Database, Instance, InstanceConfig, Isolation};
use walden_log::policy::{CommitOption, DatabaseDurability};

/// Set (to the data directory) in a worker process.
const WORKER_ENV: &str = "WALDEN_KILL_WORKER";
/// `work` or `recover`.
const MODE_ENV: &str = "WALDEN_KILL_MODE";
/// The cycle number, part of every id the worker inserts.
const CYCLE_ENV: &str = "WALDEN_KILL_CYCLE";

const THREADS: u64 = 4;
const CYCLES: u64 = 3;
/// How long the parent lets the worker commit after its first acknowledgement.
const RUN_FOR: Duration = Duration::from_millis(1500);
/// The longest a worker runs if nobody kills it (the parent died).
const WORKER_LIFETIME: Duration = Duration::from_secs(60);
/// The longest any step may take before the test fails instead of hanging.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// A small pool, small log segments and frequent checkpoints, so that a crash finds pages
/// written back, log reused and a checkpoint in progress rather than everything in memory.
fn config() -> InstanceConfig {
    let mut c = InstanceConfig::default();
    c.database.pool.frames = 256;
    c.database.log.segment_size = 1 << 20;
    c.database.log.initial_segments = 2;
    // Small files growing a segment or a few pages at a time, as before files had sizes.
    c.database.files = walden_engine::files::FileLayout::small(64 << 10);
    c.database.checkpoint_log_bytes = 512 << 10;
    c.checkpoint_poll_ms = 50;
    c
}

fn id_of(cycle: u64, thread: u64, seq: u64) -> i64 {
    ((cycle << 48) | (thread << 32) | seq) as i64
}

/// (cycle, thread, seq) of an id.
fn parts_of(id: i64) -> (u64, u64, u64) {
    let id = id as u64;
    (id >> 48, (id >> 32) & 0xffff, id & 0xffff_ffff)
}

/// Even commits of a thread are fully durable, odd ones delayed.
fn is_full(seq: u64) -> bool {
    seq.is_multiple_of(2)
}

/// The payload of row `id`: derived from the id, so a torn or misplaced row shows, and of
/// varying length, so that leaves split at different points.
fn payload(id: i64) -> String {
    let len = 20 + (id as u64 % 7919 * 37 % 280) as usize;
    format!("{id:016x}-").repeat(len / 17 + 1)[..len].to_string()
}

/// `dbo.t`: every column NOT NULL.
fn table_def() -> TableDef {
    common::table_def(
        "t",
        vec![
            col("id", SqlType::BigInt, false),
            col("thread", SqlType::Int, false),
            col("seq", SqlType::BigInt, false),
            col("full", SqlType::Bit, false),
            col("payload", SqlType::VarChar(Len::N(300)), false),
        ],
    )
}

fn table(db: &Database) -> TableDef {
    common::table(db, "t")
}

/// The database and table, created on the first run.
fn setup(instance: &Instance) -> (Arc<Database>, TableDef) {
    if let Ok(db) = instance.database("k") {
        let t = table(&db);
        return (db, t);
    }
    let db = instance.create_database("k", None).unwrap();
    instance.set_delayed_durability("k", DatabaseDurability::Allowed).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let t = tx.create_table(&db, table_def(), &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    (db, t)
}

/// Every row's id, checking each row against what its id says it must hold.
fn read_ids(instance: &Instance, db: &Arc<Database>) -> BTreeSet<i64> {
    let t = table(db);
    // SERIALIZABLE takes one S lock on the table instead of one per row.
    let mut tx = instance.begin(Isolation::Serializable, Some(STEP_TIMEOUT));
    let mut cursor = tx.scan_table(db, &t, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut ids = BTreeSet::new();
    while let Some((_, values)) = cursor.next_row(&mut tx).unwrap() {
        let Value::BigInt(id) = values[0] else { panic!("row {values:?}") };
        let (_, thread, seq) = parts_of(id);
        let expected = vec![
            Value::BigInt(id),
            Value::Int(thread as i32),
            Value::BigInt(seq as i64),
            Value::Bit(is_full(seq)),
            Value::Str(payload(id)),
        ];
        assert_eq!(values, expected, "row {id:#x} does not hold what was inserted");
        ids.insert(id);
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    ids
}

/// A digest of a set of ids, for comparing what two processes read.
fn digest(ids: &BTreeSet<i64>) -> u64 {
    ids.iter().fold(0xcbf2_9ce4_8422_2325, |h, &id| (h ^ id as u64).wrapping_mul(0x100_0000_01b3))
}

/// The worker side. In a normal test run it does nothing.
#[test]
fn kill_worker() {
    let Ok(dir) = std::env::var(WORKER_ENV) else { return };
    let mode = std::env::var(MODE_ENV).unwrap();
    let instance = Instance::open(Path::new(&dir), config()).unwrap();
    if mode == "recover" {
        let db = instance.database("k").unwrap();
        let ids = read_ids(&instance, &db);
        let mut out = std::io::stdout().lock();
        writeln!(out, "\nRECOVERED {} {}", ids.len(), digest(&ids)).unwrap();
        out.flush().unwrap();
        // Wait to be killed: a clean shutdown would spoil the next recovery's starting point.
        std::thread::sleep(WORKER_LIFETIME);
        std::process::exit(1);
    }
    let cycle: u64 = std::env::var(CYCLE_ENV).unwrap().parse().unwrap();
    let (db, t) = setup(&instance);
    let started = Instant::now();
    std::thread::scope(|s| {
        for thread in 0..THREADS {
            let (instance, db, t) = (&instance, &db, &t);
            s.spawn(move || {
                for seq in 0.. {
                    if started.elapsed() > WORKER_LIFETIME {
                        return;
                    }
                    let id = id_of(cycle, thread, seq);
                    let full = is_full(seq);
                    let mut values = [
                        Value::BigInt(id),
                        Value::Int(thread as i32),
                        Value::BigInt(seq as i64),
                        Value::Bit(full),
                        Value::Str(payload(id)),
                    ];
                    let mut tx = instance.begin(Isolation::ReadCommitted, Some(STEP_TIMEOUT));
                    tx.insert_row(db, t, &mut values).unwrap();
                    let option = if full { CommitOption::Off } else { CommitOption::On };
                    let outcome = tx.commit(option).unwrap();
                    assert_eq!(outcome.delayed, !full, "commit {id:#x}: {outcome:?}");
                    assert!(outcome.hardened || !full, "commit {id:#x}: {outcome:?}");
                    let kind = if full { "full" } else { "delayed" };
                    let mut out = std::io::stdout().lock();
                    // The line starts on a fresh line: the test harness may have printed the
                    // test's name without a newline.
                    if writeln!(out, "\nACK {thread} {id} {kind}").is_err() || out.flush().is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
}

/// A child process that is killed and reaped when dropped, whatever the test's outcome.
struct Reaper(Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `kill_worker`'s name as the test harness filters it: its module path without the crate's
/// name, so the filter still matches wherever the module sits in the test binary.
fn worker_test_name() -> String {
    let (_crate, module) = module_path!().split_once("::").unwrap();
    format!("{module}::kill_worker")
}

/// Starts this executable as a worker in `mode`; its stdout lines arrive on the receiver.
fn spawn(dir: &Path, mode: &str, cycle: u64) -> (Reaper, Receiver<String>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &worker_test_name(), "--nocapture", "--test-threads=1"])
        .env(WORKER_ENV, dir)
        .env(MODE_ENV, mode)
        .env(CYCLE_ENV, cycle.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, recv) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if send.send(line).is_err() {
                return;
            }
        }
    });
    (Reaper(child), recv)
}

/// SIGKILLs the child and waits for it.
fn kill(child: &mut Reaper) {
    child.0.kill().unwrap();
    child.0.wait().unwrap();
}

/// The next line starting with `prefix`, or a failure after [`STEP_TIMEOUT`].
fn line_starting(recv: &Receiver<String>, prefix: &str, child: &mut Reaper) -> String {
    let deadline = Instant::now() + STEP_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match recv.recv_timeout(left) {
            Ok(line) if line.starts_with(prefix) => return line,
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => panic!("no {prefix:?} line in {STEP_TIMEOUT:?}"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the worker exited before a {prefix:?} line: {:?}", child.0.wait())
            }
        }
    }
}

/// One acknowledged commit.
#[derive(Debug, Clone, Copy)]
struct Ack {
    thread: u64,
    id: i64,
    full: bool,
}

fn parse_ack(line: &str) -> Ack {
    let fields: Vec<&str> = line.split_whitespace().collect();
    match fields[..] {
        ["ACK", thread, id, kind] => {
            Ack { thread: thread.parse().unwrap(), id: id.parse().unwrap(), full: kind == "full" }
        }
        _ => panic!("a malformed acknowledgement: {line:?}"),
    }
}

/// Runs the worker for [`RUN_FOR`] after its first acknowledgement, kills it, and returns the
/// acknowledgements in the order it printed them.
fn run_and_kill(dir: &Path, cycle: u64) -> Vec<Ack> {
    let (mut child, recv) = spawn(dir, "work", cycle);
    let mut acks = vec![parse_ack(&line_starting(&recv, "ACK ", &mut child))];
    let until = Instant::now() + RUN_FOR;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match recv.recv_timeout(left) {
            Ok(line) if line.starts_with("ACK ") => acks.push(parse_ack(&line)),
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the worker exited by itself: {:?}", child.0.wait())
            }
        }
    }
    assert!(child.0.try_wait().unwrap().is_none(), "the worker exited by itself");
    kill(&mut child);
    // Whatever it wrote before it died is still in the pipe.
    let deadline = Instant::now() + STEP_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match recv.recv_timeout(left) {
            Ok(line) if line.starts_with("ACK ") => acks.push(parse_ack(&line)),
            Ok(_) => {}
            Err(RecvTimeoutError::Disconnected) => return acks,
            Err(RecvTimeoutError::Timeout) => panic!("the worker's stdout stayed open"),
        }
    }
}

/// Recovers in a child process that is killed as soon as it has read the rows; returns
/// (rows, digest) as it saw them.
fn recover_in_child_and_kill(dir: &Path) -> (usize, u64) {
    let (mut child, recv) = spawn(dir, "recover", 0);
    let line = line_starting(&recv, "RECOVERED ", &mut child);
    kill(&mut child);
    let fields: Vec<&str> = line.split_whitespace().collect();
    (fields[1].parse().unwrap(), fields[2].parse().unwrap())
}

/// Runs `f` on another thread; fails if it takes longer than [`STEP_TIMEOUT`].
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, recv) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(f());
    });
    match recv.recv_timeout(STEP_TIMEOUT) {
        Ok(v) => v,
        Err(RecvTimeoutError::Timeout) => panic!("{what} took longer than {STEP_TIMEOUT:?}"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// Opens (recovering) the directory in this process, reads and checks every row and tree,
/// and shuts down cleanly.
fn open_and_read(dir: PathBuf) -> BTreeSet<i64> {
    bounded("recovery", move || {
        let instance = Instance::open(&dir, config()).unwrap();
        let db = instance.database("k").unwrap();
        assert_eq!(db.delayed_durability(), DatabaseDurability::Allowed);
        let ids = read_ids(&instance, &db);
        let t = table(&db);
        let check = db.space().tree(t.primary().unwrap().root).check().unwrap();
        assert_eq!(check.rows, ids.len() as u64, "the tree's check counts other rows");
        db.space().tree(CATALOG_ROOT).check().unwrap();
        instance.close().unwrap();
        ids
    })
}

/// Checks the rows of `cycle` against its acknowledgements.
fn check_cycle(cycle: u64, acks: &[Ack], ids: &BTreeSet<i64>) {
    let mut survived: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for &id in ids {
        let (c, thread, seq) = parts_of(id);
        if c == cycle {
            survived.entry(thread).or_default().push(seq);
        }
    }
    let mut last_acked: BTreeMap<u64, u64> = BTreeMap::new();
    let mut position: BTreeMap<i64, usize> = BTreeMap::new();
    for (i, ack) in acks.iter().enumerate() {
        let (c, thread, seq) = parts_of(ack.id);
        assert_eq!((c, thread), (cycle, ack.thread), "{ack:?}");
        assert_eq!(ack.full, is_full(seq), "{ack:?}");
        let last = last_acked.entry(thread).or_insert(seq);
        *last = (*last).max(seq);
        position.insert(ack.id, i);
        // (a) An acknowledged fully durable commit survives.
        assert!(!ack.full || ids.contains(&ack.id), "acknowledged full commit lost: {ack:?}");
    }
    for thread in 0..THREADS {
        let seqs = survived.get(&thread).cloned().unwrap_or_default();
        // (b) A prefix of the thread's commits: its first n, nothing after a gap.
        let n = seqs.len() as u64;
        assert_eq!(seqs, (0..n).collect::<Vec<_>>(), "thread {thread}: not a prefix");
        // The thread cannot have begun a transaction after the one after its last
        // acknowledgement.
        let limit = last_acked.get(&thread).map_or(1, |&s| s + 2);
        assert!(n <= limit, "thread {thread}: {n} rows survived, but {limit} could commit");
    }
    // A fully durable commit hardens every commit that was in the log before it began. A
    // thread began commit k after it printed the acknowledgement of k - 1, so everything
    // acknowledged up to that line survives.
    let barrier = acks
        .iter()
        .filter(|a| a.full)
        .filter_map(|a| {
            let (c, thread, seq) = parts_of(a.id);
            let previous = seq.checked_sub(1)?;
            position.get(&id_of(c, thread, previous)).copied()
        })
        .max();
    if let Some(barrier) = barrier {
        for ack in &acks[..=barrier] {
            assert!(ids.contains(&ack.id), "lost {ack:?}, acknowledged before a full commit");
        }
    }
    let full = acks.iter().filter(|a| a.full).count();
    let lost: Vec<&Ack> = acks.iter().filter(|a| !ids.contains(&a.id)).collect();
    let unacked =
        ids.iter().filter(|&&id| parts_of(id).0 == cycle).count() - (acks.len() - lost.len());
    eprintln!(
        "cycle {cycle}: {} acknowledged ({full} full, {} delayed), {} delayed lost, {unacked} \
         committed but unacknowledged survived, {} rows in all",
        acks.len(),
        acks.len() - full,
        lost.len(),
        ids.len()
    );
}

#[test]
fn sigkill_loses_no_acknowledged_full_commit_and_recovery_is_repeatable() {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let mut known = BTreeSet::new();
    for cycle in 0..CYCLES {
        let acks = run_and_kill(dir.path(), cycle);
        let (child_rows, child_digest) = recover_in_child_and_kill(dir.path());
        let ids = open_and_read(dir.path().to_path_buf());
        assert_eq!(
            (ids.len(), digest(&ids)),
            (child_rows, child_digest),
            "the recovery after a crashed recovery found other rows"
        );
        let again = open_and_read(dir.path().to_path_buf());
        assert_eq!(again, ids, "a recovery after a clean shutdown found other rows");
        let earlier: BTreeSet<i64> =
            ids.iter().copied().filter(|&id| parts_of(id).0 < cycle).collect();
        assert_eq!(earlier, known, "rows of earlier cycles changed");
        check_cycle(cycle, &acks, &ids);
        known = ids;
    }
    eprintln!("{CYCLES} kill cycles in {:.1} s", started.elapsed().as_secs_f64());
}
