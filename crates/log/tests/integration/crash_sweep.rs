//! The crash sweep: seeded workloads of full and delayed commits from several threads, cut by a
//! power failure at a seeded point, then a simulated crash that applies, drops or tears each
//! unsynced write; recovery must keep every acknowledged fully durable commit and every commit
//! at or below an LSN reported hardened, and the surviving commits must be exactly a prefix of
//! the commit order. Reopening twice must give the same log.
//!
//! `WALDEN_CRASH_SEEDS=n` changes the number of crash points (default 10,000);
//! `WALDEN_CRASH_SEED=s` replays one seed. A failure prints its seed.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use common::*;
use walden_io::{FileGrowth, GrowthStep, SimFs, SplitMix64, Vfs};
use walden_log::{Durability, LogConfig, LogManager, RecordKind};

/// What one thread saw acknowledged.
#[derive(Default)]
struct Acks {
    /// txn -> (commit LSN, durability) for every commit whose append returned Ok.
    commits: BTreeMap<u64, (u64, Durability)>,
    /// Transactions whose commit was attempted (acknowledged or not).
    attempted: BTreeSet<u64>,
    /// The highest LSN the log reported hardened.
    hardened: u64,
}

fn payload(txn: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (txn as usize * 31 + i) as u8).collect()
}

fn config(rng: &mut SplitMix64) -> LogConfig {
    let segment_size = [4096, 8192, 65536][rng.below(3) as usize];
    LogConfig {
        buffer_blocks: 2 + rng.below(6) as usize,
        max_delay_ms: [0, 1, 5][rng.below(3) as usize],
        segment_size,
        initial_segments: 1 + rng.below(2) as u32,
        spare_segments: rng.below(2) as u32,
        // Growths of one to three segments, or by half the file.
        growth: FileGrowth {
            step: match rng.below(4) {
                3 => GrowthStep::Percent(50),
                n => GrowthStep::Bytes(segment_size * (n + 1)),
            },
            // Sometimes a maximum the workload passes: nothing here checks for room, so the
            // flushes grow past it a segment at a time, as a rollback outrunning its reserve
            // would.
            max_bytes: (rng.below(3) == 0).then_some(segment_size * 3),
        },
    }
}

fn run_workload(log: &LogManager, seed: u64, thread: u64, acks: &Mutex<Acks>) {
    let mut rng = SplitMix64::new(seed ^ (thread << 32));
    for i in 0..8 {
        let txn = thread * 1000 + i;
        let len = [0, 40, 300, 5000, 70_000][rng.below(5) as usize];
        let durability = if rng.chance(1, 2) { Durability::Full } else { Durability::Delayed };
        let step = (|| {
            log.append_begin(txn)?;
            log.append_payload(txn, &payload(txn, len))?;
            acks.lock().unwrap().attempted.insert(txn);
            let receipt = log.append_commit(txn, durability)?;
            let mut a = acks.lock().unwrap();
            a.commits.insert(txn, (receipt.lsn, durability));
            if receipt.hardened {
                a.hardened = a.hardened.max(receipt.lsn);
            }
            drop(a);
            if rng.chance(1, 8) {
                let h = log.flush_log()?;
                let mut a = acks.lock().unwrap();
                a.hardened = a.hardened.max(h);
            }
            Ok::<(), walden_log::LogError>(())
        })();
        if step.is_err() {
            return;
        }
    }
}

/// Committed transactions in log order, checking each one's payload.
fn recovered_commits(log: &LogManager, seed: u64) -> Vec<(u64, u64)> {
    let mut payloads: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut commits = Vec::new();
    for r in log.scan(0) {
        let r = r.unwrap_or_else(|e| panic!("seed {seed}: scan failed: {e}"));
        match r.kind {
            RecordKind::Payload => {
                payloads.insert(r.txn, r.body);
            }
            RecordKind::Commit => {
                let body = payloads.get(&r.txn);
                let expected = body.map(|b| payload(r.txn, b.len()));
                assert_eq!(body, expected.as_ref(), "seed {seed}: txn {} payload", r.txn);
                assert!(body.is_some(), "seed {seed}: txn {} committed without its payload", r.txn);
                commits.push((r.txn, r.lsn));
            }
            RecordKind::Begin | RecordKind::Abort => {}
        }
    }
    commits
}

/// What one crash point exercised, so the sweep can check it covered the interesting cases.
#[derive(Default, Debug)]
struct Coverage {
    acknowledged: u64,
    delayed_lost: u64,
    torn_tails: u64,
    power_cut_mid_workload: u64,
}

fn crash_point(seed: u64) -> Coverage {
    let mut rng = SplitMix64::new(seed);
    let fs = SimFs::new(seed);
    let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
    let config = config(&mut rng);
    let log = LogManager::open(Arc::clone(&vfs), &log_path(), config.clone()).unwrap().0;
    fs.power_off_after(rng.below(60));
    let threads = 1 + rng.below(3);
    let acks = Mutex::new(Acks::default());
    std::thread::scope(|s| {
        for t in 0..threads {
            let (log, acks) = (&log, &acks);
            s.spawn(move || run_workload(log, seed, t, acks));
        }
    });
    let hardened = log.hardened_lsn();
    drop(log);
    fs.crash();
    let acks = acks.into_inner().unwrap();
    let hardened = hardened.max(acks.hardened);

    let (log, report) = LogManager::open(Arc::clone(&vfs), &log_path(), config.clone())
        .unwrap_or_else(|e| panic!("seed {seed}: recovery failed: {e}"));
    let mut coverage = Coverage {
        acknowledged: acks.commits.len() as u64,
        torn_tails: u64::from(report.torn_tail_zeroed.is_some()),
        power_cut_mid_workload: u64::from(acks.attempted.len() < (threads * 8) as usize),
        ..Coverage::default()
    };
    let survived = recovered_commits(&log, seed);
    let survived_set: BTreeSet<u64> = survived.iter().map(|&(t, _)| t).collect();
    let last_survivor = survived.last().map_or(0, |&(_, lsn)| lsn);
    for (&txn, &(lsn, durability)) in &acks.commits {
        if !survived_set.contains(&txn) {
            coverage.delayed_lost += 1;
        }
        if durability == Durability::Full {
            assert!(
                survived_set.contains(&txn),
                "seed {seed}: acknowledged full commit {txn} lost"
            );
        }
        if lsn <= hardened {
            assert!(
                survived_set.contains(&txn),
                "seed {seed}: commit {txn} at {lsn} <= hardened {hardened} lost"
            );
        }
        if lsn <= last_survivor {
            assert!(
                survived_set.contains(&txn),
                "seed {seed}: hole: commit {txn} at {lsn} lost before {last_survivor}"
            );
        }
    }
    for &(txn, lsn) in &survived {
        assert!(acks.attempted.contains(&txn), "seed {seed}: phantom commit {txn}");
        if let Some(&(acked_lsn, _)) = acks.commits.get(&txn) {
            assert_eq!(lsn, acked_lsn, "seed {seed}: commit {txn} moved");
        }
    }
    drop(log);
    let log = LogManager::open(Arc::clone(&vfs), &log_path(), config).unwrap().0;
    assert_eq!(recovered_commits(&log, seed), survived, "seed {seed}: second recovery differs");
    coverage
}

/// A hang is a failure too: if one crash point takes more than 60 s, print its seed and abort.
fn watchdog(current: Arc<std::sync::atomic::AtomicU64>) {
    std::thread::spawn(move || {
        let mut last = u64::MAX;
        loop {
            std::thread::sleep(std::time::Duration::from_secs(60));
            let now = current.load(std::sync::atomic::Ordering::SeqCst);
            if now == last && now != u64::MAX {
                eprintln!("crash point hung; replay with WALDEN_CRASH_SEED={now}");
                std::process::abort();
            }
            last = now;
        }
    });
}

#[test]
fn crash_sweep() {
    if let Some(seed) = std::env::var("WALDEN_CRASH_SEED").ok().and_then(|s| s.parse().ok()) {
        println!("{:?}", crash_point(seed));
        return;
    }
    let seeds: u64 =
        std::env::var("WALDEN_CRASH_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let mut total = Coverage::default();
    let current = Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX));
    watchdog(Arc::clone(&current));
    for seed in 0..seeds {
        current.store(seed, std::sync::atomic::Ordering::SeqCst);
        match std::panic::catch_unwind(|| crash_point(seed)) {
            Ok(c) => {
                total.acknowledged += c.acknowledged;
                total.delayed_lost += c.delayed_lost;
                total.torn_tails += c.torn_tails;
                total.power_cut_mid_workload += c.power_cut_mid_workload;
            }
            Err(_) => panic!("crash point failed; replay with WALDEN_CRASH_SEED={seed}"),
        }
    }
    println!("{seeds} crash points: {total:?}");
    if seeds >= 1000 {
        // The sweep must reach the cases it exists for, not only clean endings.
        assert!(total.power_cut_mid_workload > seeds / 2, "{total:?}");
        assert!(total.delayed_lost > 0, "no crash lost an unhardened delayed commit: {total:?}");
        assert!(total.torn_tails > 0, "no crash left a torn tail to truncate: {total:?}");
    }
}
