//! Crash sweeps with `SimFs` over a tiny checksummed append-only log, the way the layers above
//! are meant to use it: cut the power at every write and sync, crash, recover, and check that
//! everything acknowledged (written and then synced with `Ok`) is still there.

use std::path::{Path, PathBuf};

use walden_io::{FaultKind, OpenMode, SimFs, Vfs};

const HEADER: usize = 12; // payload length (u32 LE), FNV-1a 64 of the payload (u64 LE)

fn dir() -> &'static Path {
    Path::new("/wal")
}

fn log_path() -> PathBuf {
    dir().join("log")
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Record `i`: lengths vary so that records straddle sector boundaries; payload bytes are never
/// zero, so a record cannot be mistaken for preallocated space.
fn payload(i: usize) -> Vec<u8> {
    let len = 40 + (i * 397) % 900;
    (0..len).map(|j| ((i * 7 + j) % 255) as u8 + 1).collect()
}

fn encode(i: usize) -> Vec<u8> {
    let payload = payload(i);
    let mut record = Vec::with_capacity(HEADER + payload.len());
    record.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    record.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    record.extend_from_slice(&payload);
    record
}

/// Appends `records` records, syncing after each, and fails stop at the first error. Returns how
/// many were acknowledged. `retry_failed_sync` makes it do the wrong thing on purpose.
fn run_log(fs: &SimFs, records: usize, retry_failed_sync: bool) -> usize {
    let Ok(f) = fs.open(&log_path(), OpenMode::CreateNew) else { return 0 };
    if f.preallocate(4096).and_then(|()| f.sync_all()).and_then(|()| fs.sync_dir(dir())).is_err() {
        return 0;
    }
    let mut at = 0u64;
    let mut acked = 0;
    for i in 0..records {
        let record = encode(i);
        if f.write_all_at(&record, at).is_err() {
            break;
        }
        at += record.len() as u64;
        let mut synced = f.sync_data();
        if synced.is_err() && retry_failed_sync {
            synced = f.sync_data();
        }
        if synced.is_err() {
            break;
        }
        acked = i + 1;
    }
    acked
}

/// Reads the log back after a crash: the valid records from the start, as indexes.
fn recover(fs: &SimFs) -> usize {
    let Ok(f) = fs.open(&log_path(), OpenMode::Existing) else { return 0 };
    let mut image = vec![0u8; f.len().expect("len of a fresh handle") as usize];
    f.read_exact_at(&mut image, 0).expect("read of the whole file");
    let mut at = 0;
    let mut count = 0;
    while let Some(header) = image.get(at..at + HEADER) {
        let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
        let sum = u64::from_le_bytes(header[4..].try_into().expect("8 bytes"));
        let Some(body) = image.get(at + HEADER..at + HEADER + len) else { break };
        if len == 0 || fnv1a(body) != sum {
            break;
        }
        // A record that checks out must be the one written there.
        assert_eq!(body, payload(count), "record {count} recovered with wrong contents");
        at += HEADER + len;
        count += 1;
    }
    count
}

#[test]
fn power_cut_at_every_operation_keeps_every_acknowledged_record() {
    const RECORDS: usize = 25;
    let clean = SimFs::new(0);
    assert_eq!(run_log(&clean, RECORDS, false), RECORDS);
    let total = clean.ops();
    assert_eq!(total, 2 + 2 * RECORDS as u64);
    let mut torn = 0;
    for cut in 0..=total {
        for seed in 0..4 {
            let fs = SimFs::new(seed * 1_000 + cut);
            fs.power_off_after(cut);
            let acked = run_log(&fs, RECORDS, false);
            assert_eq!(fs.ops(), cut.min(total));
            let report = fs.crash();
            torn += report.writes_torn;
            let recovered = recover(&fs);
            assert!(
                recovered >= acked && recovered <= RECORDS,
                "cut {cut} seed {seed}: acked {acked}, recovered {recovered}, {report:?}"
            );
        }
    }
    // The sweep did exercise torn tails, not only clean cuts.
    assert!(torn > 0);
}

#[test]
fn an_injected_failure_at_every_write_and_sync_keeps_every_acknowledged_record() {
    const RECORDS: usize = 12;
    let clean = SimFs::new(0);
    run_log(&clean, RECORDS, false);
    let (writes, syncs) = (clean.writes(), clean.syncs());
    for kind in [FaultKind::Eio, FaultKind::Enospc] {
        for n in 1..=writes {
            let fs = SimFs::new(n);
            fs.fail_nth_write(n, kind);
            let acked = run_log(&fs, RECORDS, false);
            // Fail-stop: nothing was written after the failed call.
            assert_eq!(fs.writes(), n - 1);
            fs.crash();
            assert!(recover(&fs) >= acked, "write {n} {kind:?}");
        }
        for n in 1..=syncs {
            let fs = SimFs::new(n);
            fs.fail_nth_sync(n, kind);
            let acked = run_log(&fs, RECORDS, false);
            assert_eq!(fs.syncs(), n - 1, "a failed sync must not be retried");
            fs.crash();
            assert!(recover(&fs) >= acked, "sync {n} {kind:?}");
        }
    }
}

#[test]
fn retrying_a_failed_sync_is_caught() {
    // The mistake fsyncgate is about: after a failed fsync the retry "succeeds", the caller
    // acknowledges the record, and a crash loses it. The simulator must expose that.
    let fs = SimFs::new(99);
    fs.fail_nth_sync(4, FaultKind::Eio); // the third record's sync (after the file's first)
    let acked = run_log(&fs, 5, true);
    assert_eq!(acked, 5);
    fs.crash();
    assert_eq!(recover(&fs), 2, "records from the failed sync on are not durable");
}

#[test]
fn same_seed_replays_the_same_crash() {
    let outcome = |seed| {
        let fs = SimFs::new(seed);
        fs.power_off_after(17);
        run_log(&fs, 20, false);
        let report = fs.crash();
        (report, fs.durable_image(&log_path()), recover(&fs))
    };
    for seed in 0..10 {
        assert_eq!(outcome(seed), outcome(seed));
    }
}
