//! A transaction whose undo log outgrows memory (`database/undo.rs`): its older entries go to
//! an unnamed file next to the database's log, and a statement's rollback and the whole
//! transaction's rollback read them back and restore every row.

use crate::common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use walden_engine::catalog::TableDef;
use walden_engine::types::Value;
use walden_engine::{Database, Instance, InstanceConfig, Isolation, Transaction};
use walden_log::policy::CommitOption;

/// Rows of the table: at about 350 bytes of old value each, their undo is several times
/// what an undo log keeps in memory (8 MiB).
const ROWS: i32 = 60_000;

fn value(k: i32, version: &str) -> String {
    format!("{version}{k}-{}", "x".repeat(300 + (k % 7 * 10) as usize))
}

fn create(instance: &Instance) -> (Arc<Database>, TableDef) {
    let db = common::create_kv_table(instance);
    let t = common::table(&db, "t");
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    for k in 0..ROWS {
        tx.insert_row(&db, &t, &mut [Value::Int(k), Value::Str(value(k, "a"))]).unwrap();
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    (db, t)
}

/// Every row, by key, with its id, as `tx` sees them.
fn rows(
    tx: &mut Transaction,
    db: &Arc<Database>,
    t: &TableDef,
) -> BTreeMap<i32, (Vec<u8>, String)> {
    let mut cursor = tx.scan_table(db, t, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut out = BTreeMap::new();
    while let Some((id, values)) = cursor.next_row(tx).unwrap() {
        let (Value::Int(k), Value::Str(v)) = (&values[0], &values[1]) else {
            panic!("unexpected row {values:?}");
        };
        out.insert(*k, (id.to_vec(), v.clone()));
    }
    out
}

fn expect_original(found: &BTreeMap<i32, (Vec<u8>, String)>, what: &str) {
    assert_eq!(found.len(), ROWS as usize, "{what}");
    for (k, (_, v)) in found {
        assert_eq!(v, &value(*k, "a"), "{what}: row {k}");
    }
}

/// Descriptors of this process open on unnamed files in `dir` (an O_TMPFILE file reads as
/// `dir/#<inode> (deleted)`).
fn unnamed_files_in(dir: &Path) -> usize {
    let prefix = dir.canonicalize().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|target| target.to_string_lossy().into_owned())
        .filter(|target| target.starts_with(&prefix) && target.ends_with("(deleted)"))
        .count()
}

#[test]
fn a_transaction_whose_undo_spills_rolls_back_a_statement_and_then_everything() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let (db, t) = create(&instance);
    let db_dir = db.files().log.parent().unwrap().to_path_buf();
    assert_eq!(unnamed_files_in(&db_dir), 0);

    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let before = rows(&mut tx, &db, &t);
    expect_original(&before, "before");
    for (k, (id, _)) in &before {
        let updated = tx.update_row(&db, &t, id, &[Value::Int(*k), Value::Str(value(*k, "b"))]);
        assert!(updated.unwrap().is_some());
    }
    assert_eq!(unnamed_files_in(&db_dir), 1, "the undo log spilled");

    // A statement that deletes and inserts, undone as a failed statement is.
    let mark = tx.undo_mark();
    for (_, (id, _)) in before.iter().filter(|(k, _)| *k % 3 == 0) {
        assert!(tx.delete_row(&db, &t, id).unwrap());
    }
    for k in ROWS..ROWS + 5_000 {
        tx.insert_row(&db, &t, &mut [Value::Int(k), Value::Str(value(k, "c"))]).unwrap();
    }
    tx.rollback_to_mark(&mark).unwrap();
    let updated = rows(&mut tx, &db, &t);
    assert_eq!(updated.len(), ROWS as usize);
    for (k, (_, v)) in &updated {
        assert_eq!(v, &value(*k, "b"), "after the statement's rollback: row {k}");
    }

    tx.rollback().unwrap();
    assert_eq!(unnamed_files_in(&db_dir), 0, "the spill file is closed");
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    expect_original(&rows(&mut tx, &db, &t), "after the rollback");
    tx.commit(CommitOption::Unspecified).unwrap();
    db.space().tree(t.indexes[0].root).check().unwrap();
}
