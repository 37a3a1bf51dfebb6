//! A bulk load's appended runs (`Transaction::insert_row_appending`, logged as rows records,
//! kind 6 of `docs/format/engine-log.md`): rolled back in place, undone by recovery after a
//! crash at a seeded point (the crash simulator applying, dropping or tearing every unsynced
//! write), kept when committed; the tree passes its check each time, and a key already in
//! the table is still a duplicate.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use common::{col, pk};
use walden_engine::catalog::TableDef;
use walden_engine::lock::LockMode;
use walden_engine::objects::IndexSpec;
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
    let db = common::create_kv_table(&instance);
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
            let db = common::create_kv_table(&instance);
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

/// `t` as [`create`] makes it, with a third column `w` (unique, descending as `k` ascends)
/// and two nonclustered indexes: `ix_v` on `v` (not unique; its keys arrive out of order)
/// and the unique `ux_w` on `w`.
fn create_indexed(instance: &Instance) -> Arc<Database> {
    let db = instance.create_database("d", None).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let def = common::table_def(
        "t",
        vec![
            col("k", SqlType::Int, false),
            col("v", SqlType::VarChar(Len::N(400)), false),
            col("w", SqlType::Int, false),
        ],
    );
    let t = tx.create_table(&db, def, &[pk()]).unwrap();
    let index = |name: &str, column: usize, unique: bool| IndexSpec {
        name: name.into(),
        columns: vec![column],
        unique,
        clustered: false,
        primary_key: false,
        unique_constraint: false,
        ignore_dup_key: false,
    };
    let t = tx.create_index(&db, &t, &index("ix_v", 1, false)).unwrap();
    tx.create_index(&db, &t, &index("ux_w", 2, true)).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    db
}

fn w(k: i32) -> i32 {
    1_000_000 - k
}

/// Appends rows `keys` of the indexed `t` in one transaction holding it in X, then `extra`.
fn append_indexed(
    instance: &Instance,
    db: &Arc<Database>,
    t: &TableDef,
    keys: std::ops::Range<i32>,
    extra: Option<[i32; 2]>,
) -> Result<Transaction, walden_engine::EngineError> {
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.push_table_hint(
        db.id(),
        t.id,
        TableHint { table: Some(LockMode::X), ..TableHint::default() },
    );
    let mut appender = RowAppender::new();
    let rows = keys.map(|k| [k, w(k)]).chain(extra);
    for [k, w] in rows {
        let mut row = vec![Value::Int(k), Value::Str(value(k)), Value::Int(w)];
        tx.insert_row_appending(db, t, &mut row, &mut appender)?;
    }
    tx.flush_appended(db, t, &mut appender)?;
    Ok(tx)
}

/// The indexed table's keys after checking each of its trees, and that each nonclustered
/// index has one entry per row, pointing at it.
fn indexed_keys(instance: &Instance, what: &str) -> Vec<i32> {
    let db = instance.database("d").unwrap();
    let t = common::table(&db, "t");
    let mut keys = Vec::new();
    let mut row_ids = std::collections::BTreeSet::new();
    for index in &t.indexes {
        let tree = db.space().tree(index.root);
        tree.check()
            .unwrap_or_else(|e| panic!("{what}: index {} fails its check: {e}", index.name));
        let mut cursor = tree.range(Bound::Unbounded, Bound::Unbounded);
        let mut entries = 0;
        while let Some((key, row_id)) = cursor.next_entry().unwrap() {
            if index.id == 1 {
                row_ids.insert(key);
            } else {
                assert!(row_ids.contains(&row_id), "{what}: {} points at no row", index.name);
            }
            entries += 1;
        }
        assert_eq!(entries, row_ids.len(), "{what}: entries of {}", index.name);
    }
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut cursor = tx.scan_table(&db, &t, Bound::Unbounded, Bound::Unbounded).unwrap();
    while let Some((_, values)) = cursor.next_row(&mut tx).unwrap() {
        let (Value::Int(k), Value::Str(v), Value::Int(wv)) = (&values[0], &values[1], &values[2])
        else {
            panic!("{what}: unexpected row {values:?}");
        };
        assert_eq!((v, *wv), (&value(*k), w(*k)), "{what}: row {k}");
        keys.push(*k);
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    keys
}

#[test]
fn indexed_table_appends_roll_back_and_refuse_a_duplicate_in_a_unique_index() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = create_indexed(&instance);
    let t = common::table(&db, "t");
    let tx = append_indexed(&instance, &db, &t, 0..2000, None).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    assert_eq!(indexed_keys(&instance, "committed"), (0..2000).collect::<Vec<_>>());
    let tx = append_indexed(&instance, &db, &t, 2000..5000, None).unwrap();
    tx.rollback().unwrap();
    assert_eq!(indexed_keys(&instance, "rolled back"), (0..2000).collect::<Vec<_>>());
    // A row above the table's last key whose `w` is taken: 2601, naming the unique index,
    // and nothing of that row in any index.
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.push_table_hint(
        db.id(),
        t.id,
        TableHint { table: Some(LockMode::X), ..TableHint::default() },
    );
    let mut appender = RowAppender::new();
    for k in 2000..2010 {
        let mut row = vec![Value::Int(k), Value::Str(value(k)), Value::Int(w(k))];
        tx.insert_row_appending(&db, &t, &mut row, &mut appender).unwrap();
    }
    let mut taken = vec![Value::Int(9000), Value::Str(value(9000)), Value::Int(w(7))];
    let err = tx.insert_row_appending(&db, &t, &mut taken, &mut appender).unwrap_err();
    assert_eq!(err.number(), 2601, "{err}");
    assert!(err.to_string().contains("ux_w"), "{err}");
    // The load goes on after the refused row, as IGNORE_DUP_KEY's does.
    for k in 2010..2020 {
        let mut row = vec![Value::Int(k), Value::Str(value(k)), Value::Int(w(k))];
        tx.insert_row_appending(&db, &t, &mut row, &mut appender).unwrap();
    }
    tx.flush_appended(&db, &t, &mut appender).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    assert_eq!(indexed_keys(&instance, "after the duplicate"), (0..2020).collect::<Vec<_>>());
    // A key below the last goes the ordinary way and meets the one there.
    let err = append_indexed(&instance, &db, &t, 1999..2001, None).unwrap_err();
    assert_eq!(err.number(), 2627, "{err}");
    let err = append_indexed(&instance, &db, &t, 3000..3100, Some([3100, w(5)])).unwrap_err();
    assert_eq!(err.number(), 2601, "{err}");
    assert_eq!(indexed_keys(&instance, "refused loads"), (0..2020).collect::<Vec<_>>());
}

#[test]
fn recovery_undoes_an_unfinished_indexed_load_and_keeps_a_committed_one() {
    for seed in 0..24u64 {
        let fs = SimFs::new(seed);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let dir = Path::new("/data");
        let mut rng = SplitMix64::new(seed);
        let mut committed = false;
        {
            let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None).unwrap();
            let db = create_indexed(&instance);
            let t = common::table(&db, "t");
            if seed % 2 == 1 {
                fs.power_off_after(20 + rng.below(300));
            }
            if let Ok(tx) = append_indexed(&instance, &db, &t, 0..1500, None) {
                committed = tx.commit(CommitOption::Unspecified).is_ok();
            }
            if committed {
                let open = append_indexed(&instance, &db, &t, 1500..4000, None);
                fs.power_off_after(0);
                drop(open);
            }
        }
        fs.crash();
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let what = format!("seed {seed}");
        let found = indexed_keys(&instance, &what);
        if committed {
            assert_eq!(found, (0..1500).collect::<Vec<_>>(), "{what}");
        } else {
            assert!(found.is_empty() || found.len() == 1500, "{what}: {} rows", found.len());
        }
    }
}
