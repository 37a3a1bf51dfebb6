//! A bulk load's appended runs (`Transaction::insert_row_appending`, logged as rows records,
//! kind 6 of `docs/format/engine-log.md`): rolled back in place, undone by recovery after a
//! crash at a seeded point (the crash simulator applying, dropping or tearing every unsynced
//! write), kept when committed; the tree passes its check each time, and a key already in
//! the table is still a duplicate.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use common::{col, pk};
use walden_engine::catalog::TableDef;
use walden_engine::lock::LockMode;
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{
    Database, Instance, InstanceConfig, Isolation, RowAppender, TableHint, Transaction,
};
use walden_io::{SimFs, SplitMix64, Vfs};
use walden_log::policy::CommitOption;

fn config() -> InstanceConfig {
    let mut c = InstanceConfig::default();
    c.database.pool.frames = 16;
    c.database.pool.writer_interval_ms = 0;
    c.database.log.segment_size = 256 << 10;
    c.database.log.initial_segments = 2;
    c.database.files = walden_engine::files::FileLayout::small(64 << 10);
    c.database.checkpoint_log_bytes = 0;
    c.checkpoint_poll_ms = 0;
    c
}

fn create(instance: &Instance) -> Arc<Database> {
    let db = instance.create_database("d", None).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let def = common::table_def(
        "t",
        vec![col("k", SqlType::Int, false), col("v", SqlType::VarChar(Len::N(400)), false)],
    );
    tx.create_table(&db, def, &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    db
}

fn value(k: i32) -> String {
    format!("{k}-{}", "x".repeat((k % 7 * 40) as usize))
}

/// Appends keys `keys` in one transaction holding `t` in X (as TABLOCK does).
fn append(
    instance: &Instance,
    db: &Arc<Database>,
    t: &TableDef,
    keys: std::ops::Range<i32>,
) -> Result<Transaction, walden_engine::EngineError> {
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.push_table_hint(
        db.id(),
        t.id,
        TableHint { table: Some(LockMode::X), ..TableHint::default() },
    );
    let mut appender = RowAppender::new();
    for k in keys {
        let mut row = vec![Value::Int(k), Value::Str(value(k))];
        tx.insert_row_appending(db, t, &mut row, &mut appender)?;
    }
    tx.flush_appended(db, t, &mut appender)?;
    Ok(tx)
}

/// The table's rows after checking its tree.
fn rows(instance: &Instance, what: &str) -> BTreeMap<i32, String> {
    let db = instance.database("d").unwrap();
    let t = common::table(&db, "t");
    let check = db.space().tree(t.indexes[0].root).check();
    check.unwrap_or_else(|e| panic!("{what}: the tree fails its check: {e}"));
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut cursor = tx.scan_table(&db, &t, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut out = BTreeMap::new();
    while let Some((_, values)) = cursor.next_row(&mut tx).unwrap() {
        let (Value::Int(k), Value::Str(v)) = (&values[0], &values[1]) else {
            panic!("{what}: unexpected row {values:?}");
        };
        out.insert(*k, v.clone());
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    out
}

fn expect(rows: &BTreeMap<i32, String>, keys: std::ops::Range<i32>, what: &str) {
    assert_eq!(rows.len(), keys.len(), "{what}: {} rows", rows.len());
    for k in keys {
        assert_eq!(rows.get(&k), Some(&value(k)), "{what}: row {k}");
    }
}

#[test]
fn appended_rows_roll_back_and_a_key_in_the_table_is_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = create(&instance);
    let t = common::table(&db, "t");
    append(&instance, &db, &t, 0..2000).unwrap().commit(CommitOption::Unspecified).unwrap();
    expect(&rows(&instance, "committed"), 0..2000, "committed");
    // Rolled back: gone, whole leaves and the one shared with the committed rows alike.
    let tx = append(&instance, &db, &t, 2000..5000).unwrap();
    tx.rollback().unwrap();
    expect(&rows(&instance, "rolled back"), 0..2000, "rolled back");
    // A key below the last goes the ordinary way and meets the one there.
    let err = append(&instance, &db, &t, 1999..2001).unwrap_err();
    assert_eq!(err.number(), 2627, "{err}");
    expect(&rows(&instance, "duplicate"), 0..2000, "duplicate");
}

#[test]
fn recovery_undoes_an_unfinished_load_and_keeps_a_committed_one() {
    for seed in 0..24u64 {
        let fs = SimFs::new(seed);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let dir = Path::new("/data");
        let mut rng = SplitMix64::new(seed);
        let mut committed = false;
        {
            let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None).unwrap();
            let db = create(&instance);
            let t = common::table(&db, "t");
            if seed % 2 == 1 {
                // Half the seeds lose power somewhere in the committed load or after it.
                fs.power_off_after(20 + rng.below(200));
            }
            if let Ok(tx) = append(&instance, &db, &t, 0..1500) {
                committed = tx.commit(CommitOption::Unspecified).is_ok();
            }
            if committed {
                // Left open at the crash: a loser, some of its runs on disk, some not.
                let open = append(&instance, &db, &t, 1500..4000);
                // The power fails before its rollback can write anything.
                fs.power_off_after(0);
                drop(open);
            }
        }
        fs.crash();
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let what = format!("seed {seed}");
        let found = rows(&instance, &what);
        if committed {
            expect(&found, 0..1500, &what);
        } else {
            // Not acknowledged: all of it or none.
            assert!(found.is_empty() || found.len() == 1500, "{what}: {} rows", found.len());
        }
    }
}
