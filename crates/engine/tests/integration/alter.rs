//! ALTER TABLE through the engine's API: rebuilds that add, drop and change columns of a
//! table with rows and a secondary index, their rollback, restart after a clean close and
//! after a crash, new identity columns, renames and catalog-only changes. After each step
//! every tree passes its check, each index has one entry per row, and the secondary index
//! finds every row.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use common::{col, pk, rows, table};
use walden_engine::catalog::{CheckDef, ColumnDef, TableDef};
use walden_engine::objects::IndexSpec;
use walden_engine::types::{encode_key, Len, SqlType, Value};
use walden_engine::{Database, EngineError, Instance, InstanceConfig, Isolation, Transaction};
use walden_io::{SimFs, Vfs};
use walden_log::policy::CommitOption;

const ROWS: i32 = 300;

fn config() -> InstanceConfig {
    let mut c = InstanceConfig::default();
    c.database.pool.frames = 32;
    c.database.pool.writer_interval_ms = 0;
    c.database.log.segment_size = 1 << 20;
    c.database.log.initial_segments = 2;
    // Small files growing a segment or a few pages at a time, as before files had sizes.
    c.database.files = walden_engine::files::FileLayout::small(64 << 10);
    c.checkpoint_poll_ms = 0;
    c
}

/// `dbo.t` (k INT primary key, v VARCHAR(40), n INT NULL) with index `ix_n` on n.
fn create(instance: &Instance, db: &Arc<Database>) -> TableDef {
    let def = common::table_def(
        "t",
        vec![
            col("k", SqlType::Int, false),
            col("v", SqlType::VarChar(Len::N(40)), false),
            col("n", SqlType::Int, true),
        ],
    );
    let ix = IndexSpec {
        name: "ix_n".into(),
        columns: vec![2],
        unique: false,
        clustered: false,
        primary_key: false,
        unique_constraint: false,
        ignore_dup_key: false,
    };
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let t = tx.create_table(db, def, &[pk(), ix]).unwrap();
    for k in 0..ROWS {
        let n = if k % 7 == 0 { Value::Null } else { Value::Int(k % 10) };
        let mut row =
            vec![Value::Int(k), Value::Str(format!("value {k:04} {}", "x".repeat(20))), n];
        tx.insert_row(db, &t, &mut row).unwrap();
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    table(db, "t")
}

/// DBCC CHECKTABLE's checks: every tree is sound and has one entry per row, and each
/// nonclustered index holds each row's entry.
fn check_table(instance: &Instance, db: &Arc<Database>, name: &str) {
    let t = table(db, name);
    let mut counts = Vec::new();
    for index in &t.indexes {
        let check = db.space().tree(index.root).check().unwrap();
        counts.push(check.rows);
    }
    assert!(counts.iter().all(|&c| c == counts[0]), "index entry counts differ: {counts:?}");
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut cursor = tx.scan_table(db, &t, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut n = 0;
    while let Some((row_id, values)) = cursor.next_row(&mut tx).unwrap() {
        n += 1;
        for index in t.indexes.iter().filter(|i| i.id != 1) {
            let types: Vec<SqlType> = index.columns.iter().map(|&c| t.columns[c].ty).collect();
            let key: Vec<Value> = index.columns.iter().map(|&c| values[c].clone()).collect();
            let mut entry = Vec::new();
            encode_key(&types, &key, &mut entry).unwrap();
            if !index.unique {
                entry.extend_from_slice(&row_id);
            }
            let found = db.space().tree(index.root).get(&entry).unwrap();
            assert_eq!(
                found.as_deref(),
                Some(&row_id[..]),
                "index {} misses {values:?}",
                index.name
            );
        }
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    assert_eq!(n, counts[0], "the table has {n} rows and index 1 {} entries", counts[0]);
}

/// Rebuilds `t` as `new`, each row converted by `convert`: what ALTER TABLE does through
/// [`Transaction::begin_rebuild`], for conversions that need nothing but the row.
fn rebuild(
    tx: &mut Transaction,
    db: &Arc<Database>,
    t: &TableDef,
    new: TableDef,
    mut convert: impl FnMut(Vec<Value>) -> Result<Vec<Value>, EngineError>,
) -> Result<TableDef, EngineError> {
    let mut cursor = tx.scan_table(db, t, Bound::Unbounded, Bound::Unbounded)?;
    let mut rebuild = tx.begin_rebuild(db, t, new)?;
    while let Some((row_id, values)) = cursor.next_row(tx)? {
        rebuild.insert(tx, &row_id, convert(values)?)?;
    }
    rebuild.finish(tx)
}

/// `t` with a nullable INT column `extra` added at the end: existing rows get NULL.
fn add_extra(tx: &mut walden_engine::Transaction, db: &Arc<Database>, t: &TableDef) -> TableDef {
    let mut new = t.clone();
    new.columns.push(col("extra", SqlType::Int, true));
    rebuild(tx, db, t, new, |mut row| {
        row.push(Value::Null);
        Ok(row)
    })
    .unwrap()
}

/// `t` without column `v` (index column numbers shift down).
fn drop_v(tx: &mut walden_engine::Transaction, db: &Arc<Database>, t: &TableDef) -> TableDef {
    let at = t.column("v").unwrap();
    let mut new = t.clone();
    new.columns.remove(at);
    for index in &mut new.indexes {
        for c in &mut index.columns {
            assert_ne!(*c, at);
            if *c > at {
                *c -= 1;
            }
        }
    }
    rebuild(tx, db, t, new, |mut row| {
        row.remove(at);
        Ok(row)
    })
    .unwrap()
}

#[test]
fn columns_are_added_dropped_and_changed_with_rollback_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let before;
    {
        let instance = Instance::open(dir.path(), config()).unwrap();
        let db = instance.create_database("d", None).unwrap();
        let t = create(&instance, &db);
        let id = t.id;
        before = rows(&instance, &db, "t");

        // ADD: every row gets NULL; the object id is kept.
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        add_extra(&mut tx, &db, &t);
        tx.commit(CommitOption::Unspecified).unwrap();
        let t = table(&db, "t");
        assert_eq!(t.id, id);
        let after = rows(&instance, &db, "t");
        assert_eq!(after.len(), before.len());
        for (a, b) in after.iter().zip(&before) {
            assert_eq!(&a[..3], &b[..]);
            assert_eq!(a[3], Value::Null);
        }
        check_table(&instance, &db, "t");

        // ALTER COLUMN n INT -> BIGINT NOT NULL fails on the NULLs, and changes nothing.
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let mut new = t.clone();
        new.columns[2] = col("n", SqlType::BigInt, false);
        let err = rebuild(&mut tx, &db, &t, new, |mut row| {
            if let Value::Int(n) = row[2] {
                row[2] = Value::BigInt(n.into());
            }
            Ok(row)
        })
        .unwrap_err();
        assert_eq!(err.number(), 515, "{err}");
        tx.rollback().unwrap();
        assert_eq!(table(&db, "t"), t);
        check_table(&instance, &db, "t");

        // ALTER COLUMN n INT -> BIGINT NULL: the indexed column's keys are rebuilt.
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let mut new = t.clone();
        new.columns[2].ty = SqlType::BigInt;
        rebuild(&mut tx, &db, &t, new, |mut row| {
            if let Value::Int(n) = row[2] {
                row[2] = Value::BigInt(n.into());
            }
            Ok(row)
        })
        .unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        let t = table(&db, "t");
        assert_eq!(t.columns[2].ty, SqlType::BigInt);
        assert_eq!(rows(&instance, &db, "t")[1][2], Value::BigInt(1));
        check_table(&instance, &db, "t");

        // DROP COLUMN, rolled back: the old definition and trees are intact.
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let dropped = drop_v(&mut tx, &db, &t);
        assert_eq!(dropped.columns.len(), 3);
        tx.rollback().unwrap();
        assert_eq!(table(&db, "t"), t);
        assert_eq!(rows(&instance, &db, "t").len(), before.len());
        check_table(&instance, &db, "t");

        // DROP COLUMN, committed; then a row inserted in the new shape.
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let t = drop_v(&mut tx, &db, &t);
        let mut row = vec![Value::Int(ROWS), Value::BigInt(3), Value::Int(9)];
        tx.insert_row(&db, &t, &mut row).unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        check_table(&instance, &db, "t");
        instance.close().unwrap();
    }
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.database("d").unwrap();
    let t = table(&db, "t");
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["k", "n", "extra"]);
    assert_eq!(t.index(2).unwrap().columns, vec![1]);
    let after = rows(&instance, &db, "t");
    assert_eq!(after.len(), before.len() + 1);
    for (a, b) in after.iter().zip(&before) {
        assert_eq!(a[0], b[0]);
        let n = match b[2] {
            Value::Int(n) => Value::BigInt(n.into()),
            _ => Value::Null,
        };
        assert_eq!(a[1], n);
    }
    check_table(&instance, &db, "t");
}

#[test]
fn a_committed_rebuild_survives_a_crash_and_an_unfinished_one_is_undone() {
    let fs = SimFs::new(7);
    let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
    let dir = Path::new("/data");
    let before;
    {
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None).unwrap();
        let db = instance.create_database("d", None).unwrap();
        let t = create(&instance, &db);
        before = rows(&instance, &db, "t");
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let t = add_extra(&mut tx, &db, &t);
        tx.commit(CommitOption::Unspecified).unwrap();
        // Uncommitted at the crash, with its changes possibly on disk: undone by recovery.
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        drop_v(&mut tx, &db, &t);
        db.checkpoint().unwrap();
        // The power fails before the transaction ends: its rollback and the shutdown write
        // nothing.
        fs.power_off_after(0);
        drop(tx);
    }
    fs.crash();
    let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None).unwrap();
    let db = instance.database("d").unwrap();
    let t = table(&db, "t");
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["k", "v", "n", "extra"]);
    let after = rows(&instance, &db, "t");
    assert_eq!(after.len(), before.len());
    for (a, b) in after.iter().zip(&before) {
        assert_eq!(&a[..3], &b[..]);
        assert_eq!(a[3], Value::Null);
    }
    check_table(&instance, &db, "t");
}

#[test]
fn a_new_identity_column_numbers_the_rows_and_continues() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("d", None).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let heap = tx
        .create_table(
            &db,
            common::table_def("h", vec![col("a", SqlType::VarChar(Len::N(5)), true)]),
            &[],
        )
        .unwrap();
    for a in ["x", "y", "z"] {
        tx.insert_row(&db, &heap, &mut [Value::Str(a.into())]).unwrap();
    }
    let mut new = heap.clone();
    new.columns.push(ColumnDef { identity: Some((10, 5)), ..col("id", SqlType::Int, false) });
    let t = rebuild(&mut tx, &db, &heap, new, |mut row| {
        row.push(Value::Null);
        Ok(row)
    })
    .unwrap();
    assert_eq!(t.identity_high, 20);
    let mut row = vec![Value::Str("w".into()), Value::Null];
    tx.insert_row(&db, &t, &mut row).unwrap();
    assert_eq!(row[1], Value::Int(25));
    tx.commit(CommitOption::Unspecified).unwrap();
    let ids: Vec<Value> = rows(&instance, &db, "h").into_iter().map(|r| r[1].clone()).collect();
    assert_eq!(ids, [Value::Int(10), Value::Int(15), Value::Int(20), Value::Int(25)]);
    check_table(&instance, &db, "h");
}

#[test]
fn renames_and_constraints_change_only_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("d", None).unwrap();
    let t = create(&instance, &db);
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut new = t.clone();
    new.columns[1].name = "label".into();
    new.columns[2].default = Some("(0)".into());
    new.indexes[1].name = "ix_renamed".into();
    new.checks.push(CheckDef { name: "ck".into(), text: "k >= 0".into() });
    tx.alter_table_metadata(&db, &t, new.clone()).unwrap();
    tx.rename_object(&db, t.id, "t2").unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    assert!(db.find_object("dbo", "t").is_none());
    let renamed = table(&db, "t2");
    assert_eq!(renamed.id, t.id);
    assert_eq!(renamed.columns, new.columns);
    assert_eq!(renamed.indexes[1].name, "ix_renamed");
    assert_eq!(rows(&instance, &db, "t2").len(), ROWS as usize);
    check_table(&instance, &db, "t2");

    // A change of a column's type is not catalog-only; a taken name is error 2714.
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut bad = renamed.clone();
    bad.columns[0].ty = SqlType::BigInt;
    assert!(tx.alter_table_metadata(&db, &renamed, bad).is_err());
    let mut other = instance.begin(Isolation::ReadCommitted, None);
    other
        .create_table(&db, common::table_def("u", vec![col("a", SqlType::Int, true)]), &[])
        .unwrap();
    other.commit(CommitOption::Unspecified).unwrap();
    assert_eq!(tx.rename_object(&db, renamed.id, "U").unwrap_err().number(), 2714);
    tx.rollback().unwrap();
}

#[test]
fn a_rebuild_cut_by_a_power_failure_leaves_the_old_or_the_new_table() {
    // Seeds that ended with the old table and with the new one: both must occur.
    let (mut old, mut new_shape) = (0, 0);
    for seed in 0..24u64 {
        let fs = SimFs::new(seed);
        let vfs: Arc<dyn Vfs> = Arc::new(fs.clone());
        let dir = Path::new("/data");
        let committed;
        {
            let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None).unwrap();
            let db = instance.create_database("d", None).unwrap();
            let t = create(&instance, &db);
            // The power fails somewhere in the rebuild, its commit, or the checkpoint after.
            fs.power_off_after(seed * 7);
            let mut tx = instance.begin(Isolation::ReadCommitted, None);
            let mut new = t.clone();
            new.columns.push(col("extra", SqlType::Int, true));
            let rebuilt = rebuild(&mut tx, &db, &t, new, |mut row| {
                row.push(Value::Int(1));
                Ok(row)
            });
            committed = rebuilt.is_ok() && tx.commit(CommitOption::Unspecified).is_ok();
            let _ = db.checkpoint();
        }
        fs.crash();
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config(), None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let db = instance.database("d").unwrap();
        let t = table(&db, "t");
        let rows = rows(&instance, &db, "t");
        assert_eq!(rows.len(), ROWS as usize, "seed {seed}");
        match t.columns.len() {
            4 => {
                assert!(rows.iter().all(|r| r[3] == Value::Int(1)), "seed {seed}");
                new_shape += 1;
            }
            3 => {
                assert!(!committed, "seed {seed}: a committed rebuild was lost");
                old += 1;
            }
            n => panic!("seed {seed}: {n} columns"),
        }
        check_table(&instance, &db, "t");
    }
    assert!(old > 0 && new_shape > 0, "old {old}, new {new_shape}");
}

#[test]
fn a_statement_holding_a_definition_from_before_an_alter_stops_instead_of_writing_old_trees() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("d", None).unwrap();
    let stale = create(&instance, &db);
    // Another transaction changes the table's columns and commits: its trees are new.
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    add_extra(&mut tx, &db, &stale);
    tx.commit(CommitOption::Unspecified).unwrap();
    // A statement that resolved the table before that, and locks it only now, must not
    // insert into or read the replaced trees.
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut row = vec![Value::Int(ROWS + 1), Value::Str("late".into()), Value::Null];
    let err = tx.insert_row(&db, &stale, &mut row).unwrap_err();
    assert!(matches!(err, walden_engine::EngineError::DefinitionChanged(_)), "{err}");
    let err = tx.scan_table(&db, &stale, Bound::Unbounded, Bound::Unbounded).err();
    assert!(matches!(err, Some(walden_engine::EngineError::DefinitionChanged(_))), "{err:?}");
    tx.rollback().unwrap();
    assert_eq!(rows(&instance, &db, "t").len(), ROWS as usize);
    check_table(&instance, &db, "t");
}

#[test]
fn identity_values_after_a_rolled_back_rename_stay_below_the_persisted_mark() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("d", None).unwrap();
    let def = common::table_def(
        "idt",
        vec![ColumnDef { identity: Some((1, 1)), ..col("id", SqlType::Int, false) }],
    );
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let t = tx.create_table(&db, def, &[]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    // In one transaction: a rename (a catalog change) and enough inserts to persist a new
    // high-water mark, which the mark's system transaction commits; then the rollback puts
    // back the catalog row from before the rename, with the older mark.
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.rename_object(&db, t.id, "idt2").unwrap();
    for _ in 0..2_500 {
        tx.insert_row(&db, &t, &mut [Value::Null]).unwrap();
    }
    tx.rollback().unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut row = [Value::Null];
    tx.insert_row(&db, &t, &mut row).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    let Value::Int(v) = row[0] else { panic!("identity value {:?}", row[0]) };
    let mark = match db.catalog().get(t.id).as_deref() {
        Some(walden_engine::catalog::Object::Table(t)) => t.identity_high,
        other => panic!("table missing: {other:?}"),
    };
    // After a crash the table continues above the persisted mark: it must cover every
    // value a committed row holds, or the next value would repeat one.
    assert!(i64::from(v) <= mark, "committed identity {v} above the persisted mark {mark}");
}
