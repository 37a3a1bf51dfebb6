//! `walden bench log`: the log manager against the disk it runs on.
//!
//! In one run it measures the disk's raw rate of 4 KiB appends + `fdatasync` into a
//! preallocated file (the ceiling for one thread of fully durable commits), interleaved with
//! one thread and with 64 threads of fully durable commits so the three see the same disk,
//! then commits/s for the other thread counts and durabilities, each on a fresh log file in
//! the same directory. A commit is what the engine writes for a one-row transaction: one
//! payload record of `--record-bytes` and the commit record (the engine writes no begin
//! record; a transaction's first record begins it, for recovery as for `fn_dblog`). Every
//! worker moves the truncation point up to the hardened LSN now and then, as SIMPLE
//! recovery's checkpoints would, so the file reuses its segments instead of growing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use clap::Args;
use walden_io::{OpenMode, OsFs, Vfs};
use walden_log::{Durability, FlushReason, LogConfig, LogManager, LogStats};

/// Options of `walden bench log`.
#[derive(Debug, Args)]
pub struct LogBenchArgs {
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Thread counts to measure.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 4, 16, 64])]
    threads: Vec<u64>,
    /// Payload bytes per transaction.
    #[arg(long, default_value_t = 100)]
    record_bytes: usize,
    /// Directory for the files (default: a temporary directory under the system's temp dir;
    /// it must be on the disk you want to measure, not tmpfs).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The log's time bound on delayed commits, in milliseconds (0 = none).
    #[arg(long, default_value_t = 100)]
    max_delay_ms: u64,
}

/// One measurement.
#[derive(Debug, Clone)]
struct Run {
    threads: u64,
    durability: Durability,
    commits: u64,
    elapsed: Duration,
    flushes: u64,
    bytes_flushed: u64,
    time_bound_flushes: u64,
}

impl Run {
    fn commits_per_sec(&self) -> f64 {
        self.commits as f64 / self.elapsed.as_secs_f64()
    }

    fn commits_per_flush(&self) -> f64 {
        self.commits as f64 / self.flushes.max(1) as f64
    }

    fn bytes_per_flush(&self) -> f64 {
        self.bytes_flushed as f64 / self.flushes.max(1) as f64
    }

    /// A run's figures from the log's counters before and after it.
    fn from_stats(
        threads: u64,
        durability: Durability,
        commits: u64,
        elapsed: Duration,
        before: &LogStats,
        after: &LogStats,
    ) -> Run {
        Run {
            threads,
            durability,
            commits,
            elapsed,
            flushes: after.flushes - before.flushes,
            bytes_flushed: after.bytes_flushed - before.bytes_flushed,
            time_bound_flushes: after.flushes_for(FlushReason::TimeBound)
                - before.flushes_for(FlushReason::TimeBound),
        }
    }

    fn durability_name(&self) -> &'static str {
        match self.durability {
            Durability::Full => "full",
            Durability::Delayed => "delayed",
        }
    }
}

/// Runs the benchmark and prints the table (or JSON).
pub fn run(args: &LogBenchArgs) -> Result<(), String> {
    if args.seconds <= 0.0 || args.threads.is_empty() || args.threads.contains(&0) {
        return Err("--seconds must be positive and --threads non-empty and non-zero".into());
    }
    let tmp = match &args.dir {
        Some(dir) => tempfile::tempdir_in(dir),
        None => tempfile::tempdir(),
    }
    .map_err(|e| format!("cannot create a directory for the benchmark: {e}"))?;
    let per_run = Duration::from_secs_f64(args.seconds);
    progress(
        args,
        &format!(
            "raw fdatasync rate, 1 and {GROUP_THREADS} threads of full commits, interleaved, \
             in {}",
            tmp.path().display()
        ),
    );
    let raw = RawDisk::create(tmp.path())?;
    let (fdatasync_per_sec, full_single, full_group) =
        interleaved_full(tmp.path(), args, &raw, per_run)?;
    let mut runs = Vec::new();
    for durability in [Durability::Full, Durability::Delayed] {
        for &threads in &args.threads {
            if durability == Durability::Full && threads == 1 {
                runs.push(full_single.clone());
                continue;
            }
            if durability == Durability::Full && threads == GROUP_THREADS {
                runs.push(full_group.clone());
                continue;
            }
            progress(args, &format!("{threads} thread(s), {durability:?} commits"));
            runs.push(measure(tmp.path(), args, threads, durability, per_run)?);
        }
    }
    if args.json {
        print_json(fdatasync_per_sec, &runs);
    } else {
        print_table(fdatasync_per_sec, &runs, args);
    }
    Ok(())
}

fn progress(args: &LogBenchArgs, what: &str) {
    if !args.json {
        eprintln!("walden bench log: {what}...");
    }
}

/// A zero-filled file for the raw rate: 4 KiB writes at consecutive offsets, each followed by
/// `fdatasync`, the best a log flush can do on this disk. `walden bench storage` measures
/// against it too, so both benchmarks compare with the same ceiling.
pub(super) struct RawDisk {
    file: walden_io::FileRef,
    next: std::cell::Cell<u64>,
}

impl RawDisk {
    const WRITE: usize = 4096;
    const LEN: u64 = 256 << 20;

    pub(super) fn create(dir: &Path) -> Result<RawDisk, String> {
        let file = OsFs::new()
            .open(&dir.join("raw.dat"), OpenMode::CreateNew)
            .and_then(|f| {
                f.preallocate(Self::LEN)?;
                f.sync_all()?;
                Ok(f)
            })
            .map_err(|e| format!("raw fdatasync file: {e}"))?;
        Ok(RawDisk { file, next: std::cell::Cell::new(0) })
    }

    /// Appends + syncs for `duration`; returns how many.
    pub(super) fn run(&self, duration: Duration) -> Result<u64, String> {
        let block = vec![0x5au8; Self::WRITE];
        let start = Instant::now();
        let mut n = 0;
        while start.elapsed() < duration {
            let offset = self.next.get();
            self.file.write_all_at(&block, offset).map_err(|e| e.to_string())?;
            self.file.sync_data().map_err(|e| e.to_string())?;
            self.next.set((offset + Self::WRITE as u64) % Self::LEN);
            n += 1;
        }
        Ok(n)
    }
}

/// The thread count of the group-commit target (64 threads at least 20 times one thread).
const GROUP_THREADS: u64 = 64;

/// The raw rate, one thread of fully durable commits and [`GROUP_THREADS`] threads of them,
/// measured in alternating slices so that all three see the same disk: on a shared machine
/// the disk's rate drifts, within a minute, by far more than the 10% and the 20x these
/// comparisons are about. Returns the raw rate and the two runs.
fn interleaved_full(
    dir: &Path,
    args: &LogBenchArgs,
    raw: &RawDisk,
    duration: Duration,
) -> Result<(f64, Run, Run), String> {
    const SLICES: u32 = 8;
    let slice = duration / SLICES;
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new());
    let open = |threads: u64| {
        let path = dir.join(format!("bench-{threads}-full.ldf"));
        LogManager::open(Arc::clone(&vfs), &path, bench_config(args))
            .map(|(log, _)| (log, path))
            .map_err(|e| e.to_string())
    };
    let (single, single_path) = open(1)?;
    let (group, group_path) = open(GROUP_THREADS)?;
    let (single_before, group_before) = (single.stats(), group.stats());
    let payload = vec![0xa5u8; args.record_bytes];
    let (mut syncs, mut raw_time) = (0u64, Duration::ZERO);
    let (mut single_commits, mut single_time) = (0u64, Duration::ZERO);
    let (mut group_commits, mut group_time) = (0u64, Duration::ZERO);
    let mut txn = 0u64;
    for _ in 0..SLICES {
        let start = Instant::now();
        syncs += raw.run(slice)?;
        raw_time += start.elapsed();
        let start = Instant::now();
        while start.elapsed() < slice {
            txn += 1;
            one_transaction(&single, txn, &payload, Durability::Full)?;
            single_commits += 1;
        }
        single_time += start.elapsed();
        let (commits, elapsed) =
            run_threads(&group, GROUP_THREADS, Durability::Full, &payload, slice)?;
        group_commits += commits;
        group_time += elapsed;
    }
    let run = |log: &LogManager, path: &Path, before: LogStats, threads, commits, elapsed| {
        let after = log.stats();
        log.close().map_err(|e| e.to_string())?;
        let _ = vfs.remove(path);
        Ok::<_, String>(Run::from_stats(
            threads,
            Durability::Full,
            commits,
            elapsed,
            &before,
            &after,
        ))
    };
    let single_run = run(&single, &single_path, single_before, 1, single_commits, single_time)?;
    let group_run =
        run(&group, &group_path, group_before, GROUP_THREADS, group_commits, group_time)?;
    Ok((syncs as f64 / raw_time.as_secs_f64(), single_run, group_run))
}

fn bench_config(args: &LogBenchArgs) -> LogConfig {
    LogConfig {
        max_delay_ms: args.max_delay_ms,
        segment_size: 64 << 20,
        initial_segments: 4,
        ..LogConfig::default()
    }
}

/// A transaction as the benchmark counts one: one payload record, then the commit.
fn one_transaction(
    log: &LogManager,
    txn: u64,
    payload: &[u8],
    durability: Durability,
) -> Result<(), String> {
    let err = |e: walden_log::LogError| e.to_string();
    log.append_payload(txn, payload).map_err(err)?;
    log.append_commit(txn, durability).map_err(err)?;
    Ok(())
}

fn measure(
    dir: &Path,
    args: &LogBenchArgs,
    threads: u64,
    durability: Durability,
    duration: Duration,
) -> Result<Run, String> {
    let path = dir.join(format!("bench-{threads}-{durability:?}.ldf"));
    let vfs: Arc<dyn Vfs> = Arc::new(OsFs::new());
    let (log, _) =
        LogManager::open(Arc::clone(&vfs), &path, bench_config(args)).map_err(|e| e.to_string())?;
    let before = log.stats();
    let payload = vec![0xa5u8; args.record_bytes];
    let (commits, elapsed) = run_threads(&log, threads, durability, &payload, duration)?;
    let after = log.stats();
    log.close().map_err(|e| e.to_string())?;
    let _ = vfs.remove(&path);
    Ok(Run::from_stats(threads, durability, commits, elapsed, &before, &after))
}

/// `threads` workers committing on `log` for `duration`: the commits and the time taken. The
/// clock runs from the moment every worker is ready to the moment the last one stopped, so
/// that starting threads is not counted, and each worker stops within one commit of the
/// deadline, so that the run does not end with a tail of fewer and fewer threads.
fn run_threads(
    log: &LogManager,
    threads: u64,
    durability: Durability,
    payload: &[u8],
    duration: Duration,
) -> Result<(u64, Duration), String> {
    let stop = AtomicBool::new(false);
    let ready = Barrier::new(threads as usize + 1);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (stop, ready) = (&stop, &ready);
                s.spawn(move || {
                    ready.wait();
                    worker(log, stop, payload, t, durability)
                })
            })
            .collect();
        ready.wait();
        let start = Instant::now();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        let commits = workers
            .into_iter()
            .map(|w| w.join().map_err(|_| "worker panicked".to_string())?)
            .sum::<Result<u64, String>>()?;
        Ok((commits, start.elapsed()))
    })
}

fn worker(
    log: &LogManager,
    stop: &AtomicBool,
    payload: &[u8],
    thread: u64,
    durability: Durability,
) -> Result<u64, String> {
    let mut txn = thread << 40;
    let mut commits = 0u64;
    // A relaxed load of a flag nobody writes until the end stays in this core's cache: it
    // costs next to nothing even beside a delayed commit.
    while !stop.load(Ordering::Relaxed) {
        if commits.is_multiple_of(4096) {
            log.set_truncation_lsn(log.hardened_lsn());
        }
        txn += 1;
        one_transaction(log, txn, payload, durability)?;
        commits += 1;
    }
    Ok(commits)
}

fn find(runs: &[Run], threads: u64, durability: Durability) -> Option<&Run> {
    runs.iter().find(|r| r.threads == threads && r.durability == durability)
}

fn print_table(fdatasync_per_sec: f64, runs: &[Run], args: &LogBenchArgs) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "raw fdatasync rate (4 KiB appends into a preallocated file, interleaved with the \
         1- and {GROUP_THREADS}-thread full runs): {fdatasync_per_sec:.0}/s\n"
    );
    let _ = writeln!(
        out,
        "{:>7}  {:>10}  {:>14}  {:>10}  {:>17}  {:>15}  {:>12}",
        "threads",
        "durability",
        "commits/s",
        "flushes",
        "commits/flush",
        "bytes/flush",
        "vs fdatasync"
    );
    for r in runs {
        let _ = writeln!(
            out,
            "{:>7}  {:>10}  {:>14.0}  {:>10}  {:>17.1}  {:>15.0}  {:>11.2}x",
            r.threads,
            r.durability_name(),
            r.commits_per_sec(),
            r.flushes,
            r.commits_per_flush(),
            r.bytes_per_flush(),
            r.commits_per_sec() / fdatasync_per_sec
        );
    }
    let _ = writeln!(out, "\ntargets:");
    let mut check = |what: String, ok: bool| {
        let _ = writeln!(out, "  [{}] {what}", if ok { "ok" } else { "MISSED" });
    };
    if let Some(full1) = find(runs, 1, Durability::Full) {
        let ratio = full1.commits_per_sec() / fdatasync_per_sec;
        check(
            format!("1 thread of full commits at {:.0}% of raw fdatasync (>= 90%)", ratio * 100.0),
            ratio >= 0.9,
        );
        let bytes = full1.bytes_flushed as f64 / full1.commits.max(1) as f64;
        check(format!("{bytes:.0} bytes on disk per small full commit (<= 1024)"), bytes <= 1024.0);
        if let Some(group) = find(runs, GROUP_THREADS, Durability::Full) {
            let x = group.commits_per_sec() / full1.commits_per_sec();
            check(
                format!(
                    "{GROUP_THREADS} threads of full commits at {x:.1}x one thread, interleaved \
                     (>= 20x)"
                ),
                x >= 20.0,
            );
        }
    }
    if let Some(d1) = find(runs, 1, Durability::Delayed) {
        check(
            format!(
                "1 thread of delayed {}-byte commits at {:.0}/s (> 1,000,000/s)",
                args.record_bytes,
                d1.commits_per_sec()
            ),
            d1.commits_per_sec() > 1_000_000.0,
        );
    }
    for r in runs.iter().filter(|r| r.durability == Durability::Delayed) {
        let bound = 1.1 * (r.bytes_flushed as f64 / 61_440.0) + r.time_bound_flushes as f64;
        check(
            format!(
                "{} thread(s) delayed: {} flushes <= 1.1 x bytes/60 KB + {} time-bound = {bound:.0}",
                r.threads, r.flushes, r.time_bound_flushes
            ),
            r.flushes as f64 <= bound.max(1.0),
        );
    }
}

fn print_json(fdatasync_per_sec: f64, runs: &[Run]) {
    let runs: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "{{\"threads\": {}, \"durability\": \"{}\", \"commits_per_sec\": {:.1}, \"flushes\": {}, \"commits_per_flush\": {:.3}, \"bytes_per_flush\": {:.1}}}",
                r.threads,
                r.durability_name(),
                r.commits_per_sec(),
                r.flushes,
                r.commits_per_flush(),
                r.bytes_per_flush()
            )
        })
        .collect();
    println!("{{\"fdatasync_per_sec\": {fdatasync_per_sec:.1}, \"runs\": [{}]}}", runs.join(", "));
}
