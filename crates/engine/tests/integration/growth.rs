//! Data-file growth under crashes and full disks (issue 27, item 3).
//!
//! Growth is where a data file's length changes, so it is where a crash can leave a length
//! that is not a whole number of pages. The simulated file system here has no `fallocate`, so
//! every growth is glibc's fallback (a byte per 4 KiB block, half a page each), and the power
//! fails at a seeded point of a workload that grows the file again and again. After the crash
//! the instance must open, with every acknowledged commit present. A second test runs out of
//! space in the middle of a growth: the statement fails, the database stays usable, and once
//! space is freed the same work succeeds, across a crash too.
//!
//! The crash test keeps the log small, so that the log file grows during the workload too.
//!
//! `WALDEN_GROWTH_CRASH_SEEDS=n` sets the number of crash points (default 150).

// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::{col, pk, rows};
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{Database, Instance, InstanceConfig, Isolation};
use walden_io::{FileGrowth, GrowthStep, SimFs, SplitMix64, Vfs};
use walden_log::policy::CommitOption;
use walden_storage::PAGE_SIZE;

const DATA: &str = "/data/d.mdf";

/// The crash test's configuration: a small log too, so that the log file grows during the
/// workload as well as the data file.
fn small_log_config() -> InstanceConfig {
    let mut c = config();
    c.database.log.segment_size = 64 << 10;
    c.database.log.initial_segments = 2;
    c.database.files.log.growth = FileGrowth { step: GrowthStep::Bytes(64 << 10), max_bytes: None };
    c
}

fn config() -> InstanceConfig {
    let mut c = InstanceConfig::default();
    c.database.pool.frames = 16;
    c.database.pool.writer_interval_ms = 0;
    // Small growths, so that a short workload grows the file many times.
    c.database.pool.grow_pages = 4;
    c.database.files.data.growth =
        FileGrowth { step: GrowthStep::Bytes(4 * 8192), max_bytes: None };
    c.database.files.data.size_bytes = Some(64 * 8192);
    c.database.log.segment_size = 256 << 10;
    // Room for the whole workload's log, so that the space limit below hits the data file.
    c.database.log.initial_segments = 12;
    c.database.log.buffer_blocks = 8;
    c.database.checkpoint_log_bytes = 0;
    c.checkpoint_poll_ms = 0;
    c
}

/// A database `d` with `dbo.t (k INT PRIMARY KEY, v VARCHAR(6000))`.
fn setup(vfs: &Arc<dyn Vfs>, config: InstanceConfig) -> (Arc<Instance>, Arc<Database>) {
    let instance = Instance::open_with(Arc::clone(vfs), Path::new("/data"), config, None).unwrap();
    let db = instance.create_database("d", None).unwrap();
    let def = common::table_def(
        "t",
        vec![col("k", SqlType::Int, false), col("v", SqlType::VarChar(Len::N(6000)), false)],
    );
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.create_table(&db, def, &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    (instance, db)
}

fn value(k: i32) -> String {
    format!("{k:06}-{}", "x".repeat(5000))
}

/// Inserts rows `first..first + n` in one fully durable transaction.
fn insert(instance: &Instance, db: &Arc<Database>, first: i32, n: i32) -> Result<(), String> {
    let t = common::table(db, "t");
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    for k in first..first + n {
        let mut row = vec![Value::Int(k), Value::Str(value(k))];
        if let Err(e) = tx.insert_row(db, &t, &mut row) {
            let _ = tx.rollback();
            return Err(format!("{} {e}", e.number()));
        }
    }
    tx.commit(CommitOption::Off).map(|_| ()).map_err(|e| format!("{} {e}", e.number()))
}

fn keys(instance: &Instance, db: &Arc<Database>) -> Vec<i32> {
    rows(instance, db, "t")
        .iter()
        .map(|r| match (&r[0], &r[1]) {
            (Value::Int(k), Value::Str(v)) => {
                assert_eq!(v, &value(*k));
                *k
            }
            other => panic!("{other:?}"),
        })
        .collect()
}

/// Runs the workload with the power failing after `budget` operations; returns the keys
/// acknowledged, and whether the crash left the data file at a partial page.
fn crash_during_growth(seed: u64, budget: u64) -> (Vec<i32>, bool) {
    let fs = SimFs::new(seed);
    fs.without_fallocate(4096);
    let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
    let mut acknowledged = Vec::new();
    {
        let (instance, db) = setup(&vfs, small_log_config());
        fs.power_off_after(budget);
        for i in 0..40 {
            if insert(&instance, &db, i * 3, 3).is_err() {
                break;
            }
            acknowledged.extend(i * 3..i * 3 + 3);
        }
        // Abandoned, not closed: the power is off.
    }
    fs.crash();
    let len = fs.durable_image(Path::new(DATA)).map_or(0, |i| i.len());
    let partial = !len.is_multiple_of(PAGE_SIZE);
    let instance =
        Instance::open_with(Arc::clone(&vfs), Path::new("/data"), small_log_config(), None)
            .unwrap_or_else(|e| {
                panic!("seed {seed} budget {budget}: the instance did not open: {e}")
            });
    let db = instance.database("d").unwrap();
    let found = keys(&instance, &db);
    // Every acknowledged commit is there; at most the one cut mid-commit is there besides.
    for k in &acknowledged {
        assert!(found.contains(k), "seed {seed} budget {budget}: acknowledged key {k} lost");
    }
    assert!(found.len() <= acknowledged.len() + 3, "seed {seed}: phantom rows {found:?}");
    // And it goes on growing and committing.
    insert(&instance, &db, 1000, 3).unwrap();
    (acknowledged, partial)
}

#[test]
fn a_crash_during_growth_without_fallocate_leaves_an_instance_that_opens() {
    // How many operations the whole workload takes, to spread the crash points over it.
    let total = {
        let fs = SimFs::new(0);
        fs.without_fallocate(4096);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let (instance, db) = setup(&vfs, small_log_config());
        let before = fs.ops();
        for i in 0..40 {
            insert(&instance, &db, i * 3, 3).unwrap();
        }
        let grown = fs.durable_image(Path::new(DATA)).unwrap().len() / PAGE_SIZE;
        assert!(grown > 64 + 8, "the workload must grow the file: {grown} pages");
        let log = fs.durable_image(Path::new("/data/d_log.ldf")).unwrap().len();
        assert!(log > 2 * (64 << 10), "the workload must grow the log too: {log} bytes");
        fs.ops() - before
    };
    let seeds: u64 =
        std::env::var("WALDEN_GROWTH_CRASH_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(150);
    let mut rng = SplitMix64::new(27);
    let (mut partial, mut lost_power_mid_workload) = (0, 0);
    for seed in 0..seeds {
        let budget = rng.below(total);
        let (acknowledged, was_partial) = crash_during_growth(seed, budget);
        partial += u64::from(was_partial);
        lost_power_mid_workload += u64::from(acknowledged.len() < 120);
    }
    println!("{seeds} crash points in {total} operations: {partial} left a partial page");
    assert!(partial > 0, "no crash point interrupted a growth");
    assert!(lost_power_mid_workload > seeds / 2);
}

#[test]
fn running_out_of_space_during_growth_fails_the_statement_and_not_the_database() {
    for seed in 0..6u64 {
        let fs = SimFs::new(seed);
        fs.without_fallocate(4096);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let (instance, db) = setup(&vfs, config());
        insert(&instance, &db, 0, 3).unwrap();
        // Room for a few more pages only; some growth runs out part way.
        let used: u64 = fs
            .file_names()
            .iter()
            .map(|p| vfs.open(p, walden_io::OpenMode::Existing).unwrap().len().unwrap())
            .sum();
        fs.set_space_limit(Some(used + (seed + 1) * 6144));
        let mut acknowledged = vec![0, 1, 2];
        let mut failure = None;
        for i in 1..60 {
            match insert(&instance, &db, i * 3, 3) {
                Ok(()) => acknowledged.extend(i * 3..i * 3 + 3),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let failure = failure.expect("the space limit was never reached");
        assert!(failure.starts_with("1105 "), "seed {seed}: {failure}");
        // The database is still usable: reads work, and writes work once space is freed.
        assert_eq!(keys(&instance, &db), acknowledged);
        fs.set_space_limit(None);
        insert(&instance, &db, 500, 3).unwrap();
        acknowledged.extend(500..503);
        // No partial page is left behind, and a crash now loses nothing acknowledged.
        fs.crash();
        drop((db, instance));
        let len = fs.durable_image(Path::new(DATA)).unwrap().len();
        let instance = Instance::open_with(Arc::clone(&vfs), Path::new("/data"), config(), None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e} (data file {len} bytes)"));
        let db = instance.database("d").unwrap();
        assert_eq!(keys(&instance, &db), acknowledged, "seed {seed}");
    }
}

/// Growth ahead of need: the instance's background thread grows the data file by its
/// FILEGROWTH steps while free pages run low, so that the transactions that fill it find the
/// room made and none waits for a zero-fill.
#[test]
fn the_background_thread_grows_the_data_file_ahead_of_the_transactions() {
    let fs = SimFs::new(7);
    let vfs: Arc<dyn Vfs> = Arc::new(fs);
    let mut c = config();
    c.checkpoint_poll_ms = 5;
    c.database.pool.grow_pages = 1;
    c.database.files.data.size_bytes = Some(64 * 8192);
    c.database.files.data.growth =
        FileGrowth { step: GrowthStep::Bytes(32 * 8192), max_bytes: None };
    let (instance, db) = setup(&vfs, c);
    let file = Arc::clone(db.space().pool().file());
    let wait_for_spare = || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let (next_unused, _) = db.space().allocation().unwrap();
            if file.page_count() - next_unused >= 128 {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "the file never grew ahead");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    };
    wait_for_spare();
    let before = file.growth_counts();
    // Each batch takes far fewer pages than the spare the thread keeps; between batches it
    // catches up.
    for batch in 0..20 {
        insert(&instance, &db, batch * 10, 10).unwrap();
        wait_for_spare();
    }
    let (on_demand, ahead) = file.growth_counts();
    assert_eq!(on_demand, before.0, "no transaction waited for a growth");
    assert!(ahead > before.1, "the thread grew the file as it filled");
    assert_eq!(keys(&instance, &db).len(), 200);
}

/// A load that takes pages faster than the background thread's quarter step per look (a bulk
/// copy) is met by a larger spare: twice the pages taken since the last look, so that its
/// inserts find the room made instead of growing the file themselves.
#[test]
fn growth_ahead_keeps_up_with_a_fast_load() {
    let fs = SimFs::new(11);
    let vfs: Arc<dyn Vfs> = Arc::new(fs);
    let mut c = config();
    c.database.pool.grow_pages = 1;
    c.database.files.data.growth =
        FileGrowth { step: GrowthStep::Bytes(32 * 8192), max_bytes: None };
    let (instance, db) = setup(&vfs, c);
    let file = Arc::clone(db.space().pool().file());
    // The first look only marks where the file is.
    db.grow_data_ahead().unwrap();
    let (start, _) = db.space().allocation().unwrap();
    // Rows of 5,000 bytes: a page each.
    insert(&instance, &db, 0, 300).unwrap();
    let (next_unused, _) = db.space().allocation().unwrap();
    let taken = next_unused - start;
    assert!(taken >= 300, "{taken} pages for 300 rows");
    assert!(db.grow_data_ahead().unwrap(), "a fast load makes the thread grow the file");
    assert!(
        file.page_count() - next_unused >= 2 * taken,
        "{} spare pages after {taken} were taken",
        file.page_count() - next_unused
    );
    // A look with nothing taken since keeps the spare it has and grows no further.
    assert!(!db.grow_data_ahead().unwrap());
    assert_eq!(keys(&instance, &db).len(), 300);
}
