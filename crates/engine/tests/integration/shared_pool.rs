//! One buffer pool for the instance (issue 27, item 1): many databases under a pool much
//! smaller than their pages evict each other's pages and still read, write, restart and
//! recover, each under its own log's WAL rule.

// Helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::{col, pk, rows};
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{Database, Instance, InstanceConfig, Isolation};
use walden_io::{SimFs, Vfs};
use walden_log::policy::CommitOption;

/// Frames for the whole instance: master, tempdb and every user database share them.
const FRAMES: usize = 48;

fn config() -> InstanceConfig {
    let mut c = InstanceConfig::default();
    c.database.pool.frames = FRAMES;
    c.database.log.segment_size = 256 << 10;
    c.database.log.initial_segments = 2;
    c.checkpoint_poll_ms = 0;
    c
}

fn value(db: usize, k: i32) -> String {
    let mut v = format!("db{db} row{k} ");
    v.extend(std::iter::repeat_n((b'a' + (k % 26) as u8) as char, 300));
    v
}

fn create_table(instance: &Instance, db: &Arc<Database>) {
    let columns =
        vec![col("k", SqlType::Int, false), col("v", SqlType::VarChar(Len::N(400)), false)];
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.create_table(db, common::table_def("t", columns), &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
}

/// Inserts keys `keys` into database `d`, one fully durable commit each.
fn insert(instance: &Instance, d: usize, keys: std::ops::Range<i32>) {
    let db = instance.database(&format!("d{d}")).unwrap();
    let t = common::table(&db, "t");
    for k in keys {
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.insert_row(&db, &t, &mut [Value::Int(k), Value::Str(value(d, k))]).unwrap();
        tx.commit(CommitOption::Off).unwrap();
    }
}

/// Checks that database `d` holds exactly keys `0..n` with their values.
fn check(instance: &Instance, d: usize, n: i32) {
    let db = instance.database(&format!("d{d}")).unwrap();
    let found = rows(instance, &db, "t");
    assert_eq!(found.len(), n as usize, "database d{d}");
    for (k, row) in (0..n).zip(found) {
        assert_eq!(row, vec![Value::Int(k), Value::Str(value(d, k))], "database d{d}");
    }
}

#[test]
fn many_databases_share_a_small_pool_through_writes_crash_recovery_and_restart() {
    const DBS: usize = 6;
    const ROWS: i32 = 150;
    let fs = SimFs::new(27);
    let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
    let dir = Path::new("/data");
    {
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None).unwrap();
        for d in 0..DBS {
            let db = instance.create_database(&format!("d{d}"), None).unwrap();
            create_table(&instance, &db);
        }
        // Interleaved, so that every database's fetches evict the others' pages.
        for chunk in 0..ROWS / 10 {
            for d in 0..DBS {
                insert(&instance, d, chunk * 10..chunk * 10 + 10);
            }
        }
        for d in 0..DBS {
            check(&instance, d, ROWS);
        }
        let memory = instance.frame_pool().memory();
        assert_eq!((memory.capacity_frames, memory.allocated_frames), (FRAMES, FRAMES));
        let pages: u64 = instance
            .databases()
            .iter()
            .map(|db| u64::from(db.space().pool().file().page_count()))
            .sum();
        assert!(pages > 4 * FRAMES as u64, "the databases fit in the pool: {pages} pages");
        for db in instance.databases() {
            let stats = db.space().pool().stats();
            assert_eq!(stats.frames, FRAMES);
            if db.name().starts_with('d') {
                assert!(stats.evictions > 0 && stats.writes > 0, "{}: {stats:?}", db.name());
            }
        }
        // A crash: nothing written from here on reaches the disk, and what was not synced
        // is decided by the simulator.
        fs.power_off_after(0);
    }
    fs.crash();
    let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None).unwrap();
    for d in 0..DBS {
        check(&instance, d, ROWS);
    }
    for d in 0..DBS {
        insert(&instance, d, ROWS..ROWS + 20);
    }
    instance.close().unwrap();
    drop(instance);
    let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None).unwrap();
    for d in 0..DBS {
        check(&instance, d, ROWS + 20);
    }
}

#[test]
fn databases_written_at_once_evict_each_other_without_deadlock() {
    const DBS: usize = 4;
    const ROWS: i32 = 200;
    let dir = tempfile::tempdir().unwrap();
    let mut c = config();
    c.database.pool.frames = 32;
    let instance = Instance::open(dir.path(), c).unwrap();
    for d in 0..DBS {
        let db = instance.create_database(&format!("d{d}"), None).unwrap();
        create_table(&instance, &db);
    }
    std::thread::scope(|scope| {
        for d in 0..DBS {
            let instance = &instance;
            scope.spawn(move || {
                for chunk in 0..ROWS / 20 {
                    insert(instance, d, chunk * 20..chunk * 20 + 20);
                    // Checkpoints of one database run while the others evict its pages.
                    if chunk % 3 == 0 {
                        instance.database(&format!("d{d}")).unwrap().checkpoint().unwrap();
                    }
                }
            });
        }
    });
    for d in 0..DBS {
        check(&instance, d, ROWS);
    }
    assert!(instance.frame_pool().memory().allocated_frames <= 32);
}

#[test]
fn an_idle_instance_allocates_frames_only_for_the_pages_it_used() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config();
    // The pool may take 1 GiB, but ten empty databases use a few dozen pages each.
    c.database.pool.frames = 131_072;
    let instance = Instance::open(dir.path(), c).unwrap();
    for d in 0..10 {
        instance.create_database(&format!("d{d}"), None).unwrap();
    }
    let memory = instance.frame_pool().memory();
    assert_eq!(memory.capacity_frames, 131_072);
    let cached: usize =
        instance.databases().iter().map(|db| db.space().pool().stats().cached).sum();
    assert_eq!(memory.cached_frames, cached);
    // Frames come 64 at a time, and a dropped database's frames are reused.
    assert!(memory.allocated_frames < cached + 64, "{memory:?}");
    assert!(memory.allocated_bytes() < 16 << 20, "{memory:?}");
    let before = memory.allocated_frames;
    instance.drop_database("d9").unwrap();
    instance.create_database("d9", None).unwrap();
    assert!(instance.frame_pool().memory().allocated_frames <= before + 64);
}
