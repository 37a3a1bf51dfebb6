//! The engine through its Rust API: tables, transactions, rollback, restart, identity and
//! sequences, two databases, recovery of uncommitted and lost delayed work.

// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::ops::Bound;
use std::sync::Arc;

use common::{col, pk, rows, sequence, table};
use walden_engine::catalog::{ColumnDef, TableDef};
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{Database, EngineError, Instance, InstanceConfig, Isolation, Transaction};
use walden_log::policy::{CommitOption, DatabaseDurability};

/// `dbo.<name>` (id INT IDENTITY, name VARCHAR(50)).
fn table_def(name: &str) -> TableDef {
    common::table_def(
        name,
        vec![
            ColumnDef { identity: Some((1, 1)), ..col("id", SqlType::Int, false) },
            col("name", SqlType::VarChar(Len::N(50)), true),
        ],
    )
}

fn config() -> InstanceConfig {
    let mut c = InstanceConfig::default();
    c.database.pool.frames = 64;
    c.database.pool.writer_interval_ms = 0;
    c.database.log.segment_size = 1 << 20;
    c.database.log.initial_segments = 2;
    // Small files growing a segment or a few pages at a time, as before files had sizes.
    c.database.files = walden_engine::files::FileLayout::small(64 << 10);
    c.checkpoint_poll_ms = 0;
    c
}

fn insert(tx: &mut Transaction, db: &Arc<Database>, t: &TableDef, name: &str) -> i32 {
    let mut values = vec![Value::Null, Value::Str(name.into())];
    tx.insert_row(db, t, &mut values).unwrap();
    match values[0] {
        Value::Int(v) => v,
        _ => unreachable!(),
    }
}

#[test]
fn tables_survive_a_restart_and_rollbacks_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    {
        let instance = Instance::open(dir.path(), config()).unwrap();
        let db = instance.create_database("shop", None).unwrap();
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.create_table(&db, table_def("t"), &[pk()]).unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        let t = table(&db, "t");
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        for i in 0..2000 {
            assert_eq!(insert(&mut tx, &db, &t, &format!("row {i}")), i + 1);
        }
        tx.commit(CommitOption::Unspecified).unwrap();
        // A rolled-back transaction, and a savepoint.
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        insert(&mut tx, &db, &t, "gone");
        tx.rollback().unwrap();
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        insert(&mut tx, &db, &t, "kept");
        tx.save("s1");
        insert(&mut tx, &db, &t, "undone");
        tx.rollback_to("s1").unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        assert_eq!(rows(&instance, &db, "t").len(), 2001);
        // A duplicate key is error 2627 and changes nothing.
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let err = tx.insert_row(&db, &t, &mut [Value::Int(5), Value::Null]).unwrap_err();
        assert_eq!(err.number(), 2627, "{err}");
        tx.rollback().unwrap();
        instance.close().unwrap();
    }
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.database("SHOP").unwrap();
    let all = rows(&instance, &db, "t");
    assert_eq!(all.len(), 2001);
    assert_eq!(all[2000][1], Value::Str("kept".into()));
    let t = table(&db, "t");
    assert_eq!(db.space().tree(t.primary().unwrap().root).check().unwrap().rows, 2001);
    // The identity continues without a gap after a clean shutdown (2001 was "gone", 2002
    // "kept", 2003 "undone").
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    assert_eq!(insert(&mut tx, &db, &t, "after"), 2004);
    tx.commit(CommitOption::Unspecified).unwrap();
}

#[test]
fn a_second_process_cannot_open_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let _first = Instance::open(dir.path(), config()).unwrap();
    let err = Instance::open(dir.path(), config()).unwrap_err();
    assert!(matches!(err, EngineError::Locked(_)), "{err}");
}

#[test]
fn sequences_cache_and_continue_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let seq = sequence(Some(50));
    {
        let instance = Instance::open(dir.path(), config()).unwrap();
        let db = instance.create_database("d", None).unwrap();
        instance.set_delayed_durability("d", DatabaseDurability::Forced).unwrap();
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        let def = tx.create_sequence(&db, seq.clone()).unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        let flushes = db.log_stats().flushes;
        for i in 1..=120 {
            assert_eq!(db.next_sequence_value(def.id).unwrap(), Value::BigInt(i));
        }
        // 3 ranges of 50: each persisted with a forced flush even though the database is
        // FORCED.
        assert!(db.log_stats().flushes >= flushes + 3);
        instance.close().unwrap();
    }
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.database("d").unwrap();
    let id = db.find_object("dbo", "s").unwrap().id();
    assert_eq!(db.next_sequence_value(id).unwrap(), Value::BigInt(121));
    assert_eq!(db.delayed_durability(), DatabaseDurability::Forced);
}

#[test]
fn a_sequence_persists_its_next_range_before_the_current_one_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("d", None).unwrap();
    instance.set_delayed_durability("d", DatabaseDurability::Forced).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let def = tx.create_sequence(&db, sequence(Some(50))).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    let high_water = || match &*db.find_object("dbo", "s").unwrap() {
        walden_engine::catalog::Object::Sequence(s) => s.high_water.unwrap(),
        other => panic!("{other:?}"),
    };
    for i in 1..=45 {
        assert_eq!(db.next_sequence_value(def.id).unwrap(), Value::BigInt(i));
    }
    // The mark moved past the first range while values of it were left, and by no more than
    // the cache size beyond the last value handed out (the most a crash may skip).
    let mark = high_water();
    assert!(mark > 50 && mark <= 45 + 50, "high-water mark {mark}");
    // Its commit is forced to disk although nobody waited for it, in a FORCED database.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let stats = db.log_stats();
        if stats.hardened_lsn >= stats.last_commit_lsn {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the mark's commit was not flushed");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    for i in 46..=200 {
        assert_eq!(db.next_sequence_value(def.id).unwrap(), Value::BigInt(i));
    }
    assert!(high_water() <= 200 + 50);
}

#[test]
fn two_databases_commit_together() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let a = instance.create_database("a", None).unwrap();
    let b = instance.create_database("b", None).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.create_table(&a, table_def("t"), &[pk()]).unwrap();
    tx.create_table(&b, table_def("t"), &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    let (ta, tb) = (table(&a, "t"), table(&b, "t"));
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    insert(&mut tx, &a, &ta, "x");
    insert(&mut tx, &b, &tb, "y");
    let outcome = tx.commit(CommitOption::On).unwrap();
    assert!(outcome.hardened && !outcome.delayed, "cross-database commits are fully durable");
    assert_eq!(rows(&instance, &a, "t").len(), 1);
    assert_eq!(rows(&instance, &b, "t").len(), 1);
}

#[test]
fn deadlocks_pick_a_victim_with_1205() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("d", None).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.create_table(&db, table_def("t"), &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    let t = table(&db, "t");
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    insert(&mut tx, &db, &t, "1");
    insert(&mut tx, &db, &t, "2");
    tx.commit(CommitOption::Unspecified).unwrap();
    let key = |n: i32| tx_key(&db, &t, n);
    let mut t1 = instance.begin(Isolation::ReadCommitted, None);
    let mut t2 = instance.begin(Isolation::ReadCommitted, None);
    t1.update_row(&db, &t, &key(1), &[Value::Int(1), Value::Str("a".into())]).unwrap();
    t2.update_row(&db, &t, &key(2), &[Value::Int(2), Value::Str("b".into())]).unwrap();
    let (db2, t_2) = (Arc::clone(&db), t.clone());
    let k1 = key(1);
    let other = std::thread::spawn(move || {
        let r = t2.update_row(&db2, &t_2, &k1, &[Value::Int(1), Value::Str("c".into())]);
        // A victim's session rolls back, as a client does on 1205: that releases its locks,
        // and the other transaction goes on. (Either may be chosen: the cycle is found by
        // whichever wait looks first.)
        match r.map(|_| ()) {
            Ok(()) => (Ok(()), Some(t2)),
            Err(e) => {
                t2.rollback().unwrap();
                (Err(e), None)
            }
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mine = t1.update_row(&db, &t, &key(2), &[Value::Int(2), Value::Str("d".into())]);
    let numbers: Vec<i32> = match mine {
        Err(e) => {
            let n = e.number();
            t1.rollback().unwrap();
            let (r, t2) = other.join().unwrap();
            r.unwrap();
            t2.unwrap().commit(CommitOption::Unspecified).unwrap();
            vec![n]
        }
        Ok(_) => {
            let (r, t2) = other.join().unwrap();
            assert!(t2.is_none());
            let n = r.unwrap_err().number();
            t1.commit(CommitOption::Unspecified).unwrap();
            vec![n]
        }
    };
    assert_eq!(numbers, vec![1205]);
}

fn tx_key(db: &Arc<Database>, t: &TableDef, n: i32) -> Vec<u8> {
    let mut tx = Transaction::new(
        u64::MAX,
        walden_engine::txn::TxnServices::new(None),
        Isolation::ReadCommitted,
        None,
    );
    let key = tx.seek_row(db, t, 1, &[Value::Int(n)]).unwrap().unwrap();
    tx.rollback().unwrap();
    key
}

#[test]
fn max_values_live_in_overflow_pages_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let big: String = (0..200_000).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let blob: Vec<u8> = (0..50_000u32).map(|i| (i * 7) as u8).collect();
    let def = common::table_def(
        "docs",
        vec![
            col("id", SqlType::Int, false),
            col("doc", SqlType::VarChar(Len::Max), true),
            col("bin", SqlType::VarBinary(Len::Max), true),
        ],
    );
    {
        let instance = Instance::open(dir.path(), config()).unwrap();
        let db = instance.create_database("d", None).unwrap();
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.create_table(&db, def.clone(), &[pk()]).unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        let t = table(&db, "docs");
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        for id in 0..3 {
            let mut values =
                vec![Value::Int(id), Value::Str(big.clone()), Value::Binary(blob.clone())];
            tx.insert_row(&db, &t, &mut values).unwrap();
        }
        tx.commit(CommitOption::Unspecified).unwrap();
        let pages = db.space().allocation().unwrap().0;
        assert!(pages > 3 * 25, "200 KB values need overflow pages: {pages} pages in use");
    }
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.database("d").unwrap();
    let all = rows(&instance, &db, "docs");
    assert_eq!(all.len(), 3);
    for row in all {
        assert_eq!(row[1], Value::Str(big.clone()));
        assert_eq!(row[2], Value::Binary(blob.clone()));
    }
}

#[test]
fn a_decimal_identity_column_gets_decimal_values() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("d", None).unwrap();
    let ty = SqlType::Decimal { precision: 10, scale: 0 };
    let def = common::table_def(
        "t",
        vec![
            ColumnDef { identity: Some((5, 1)), ..col("id", ty, false) },
            col("name", SqlType::VarChar(Len::N(50)), true),
        ],
    );
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let t = tx.create_table(&db, def, &[pk()]).unwrap();
    let mut values = vec![Value::Null, Value::Str("a".into())];
    tx.insert_row(&db, &t, &mut values).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    let five = walden_engine::types::Decimal::new(5, 0).unwrap();
    assert_eq!(values[0], Value::Decimal(five));
    assert_eq!(rows(&instance, &db, "t"), vec![values]);
}

#[test]
fn sampled_column_distinct_counts_tell_few_values_from_many() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("shop", None).unwrap();
    let columns = vec![
        col("id", SqlType::Int, false),
        col("nation", SqlType::Int, false),
        col("name", SqlType::VarChar(Len::N(20)), true),
        col("notes", SqlType::VarChar(Len::Max), true),
    ];
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.create_table(&db, common::table_def("t", columns), &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    let t = table(&db, "t");
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    for i in 0..5000 {
        // 25 nations; 2,500 names, each written once in upper and once in lower case ('N7'
        // and 'n7' are one value under the default collation), spread over the table.
        let n = (i * 7919) % 2500;
        let name = if i < 2500 { format!("N{n}") } else { format!("n{n}") };
        let mut row =
            vec![Value::Int(i), Value::Int(i % 25), Value::Str(name), Value::Str("x".into())];
        tx.insert_row(&db, &t, &mut row).unwrap();
    }
    tx.commit(CommitOption::Unspecified).unwrap();
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let sample = tx.sample_columns(&db, &t, 512).unwrap();
    let d = &sample.distinct;
    let id = d[0].unwrap();
    assert!(id > 2500.0, "a unique column is estimated to have many values: {id}");
    assert_eq!(d[1], Some(25.0), "every one of few values is seen in the sample");
    let name = d[2].unwrap();
    assert!(name > 1000.0 && name < 10_000.0, "names: {name}");
    assert_eq!(d[3], None, "a MAX column is not sampled");
    let names = sample.text[2].as_ref().expect("a character column's values are kept");
    assert_eq!(names.len(), 512);
    assert!(names.iter().all(|n| n.starts_with('N')), "the first rows' names: {names:?}");
    assert!(sample.text[0].is_none() && sample.text[3].is_none());
    // A table the sample covers whole is counted exactly.
    let small = tx.sample_columns(&db, &t, 10_000).unwrap().distinct;
    assert_eq!(small[0], Some(5000.0));
    assert_eq!(small[2], Some(2500.0));
    tx.commit(CommitOption::Unspecified).unwrap();
}

#[test]
fn a_row_decoded_in_steps_holds_each_step_s_columns_once_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config()).unwrap();
    let db = instance.create_database("shop", None).unwrap();
    let columns = vec![
        col("id", SqlType::Int, false),
        col("day", SqlType::Date, false),
        col("name", SqlType::VarChar(Len::N(20)), true),
        col("qty", SqlType::BigInt, true),
        col("notes", SqlType::VarChar(Len::N(20)), true),
    ];
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    tx.create_table(&db, common::table_def("t", columns), &[pk()]).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();
    let t = table(&db, "t");
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let row = |i: i32| {
        let day = walden_engine::types::Date::from_days(730_000 + i as u32).unwrap();
        let qty = if i % 3 == 0 { Value::Null } else { Value::BigInt(i64::from(i) * 10) };
        vec![Value::Int(i), Value::Date(day), Value::Str(format!("n{i}")), qty, Value::Null]
    };
    for i in 0..50 {
        tx.insert_row(&db, &t, &mut row(i)).unwrap();
    }
    tx.commit(CommitOption::Unspecified).unwrap();

    // `notes` is not wanted; steps: `qty`, then `day` (and `qty` again, decoded already),
    // then the rest (`id`, `name`).
    let wanted = [true, true, true, true, false];
    let mut tx = instance.begin(Isolation::ReadCommitted, None);
    let mut cursor =
        tx.scan_table_only(&db, &t, Bound::Unbounded, Bound::Unbounded, Some(&wanted)).unwrap();
    cursor.stage(&[vec![false, false, false, true, false], vec![false, true, false, true, false]]);
    let mut got = Vec::new();
    let mut i = 0;
    while cursor.next_row_into(&mut tx, &mut got).unwrap() {
        let expected = row(i);
        assert_eq!(got[3], expected[3], "the first step's column, row {i}");
        // Every other row stops after the first step, as a filter's first conjunct would
        // stop it: its other columns are never decoded.
        if i % 2 == 0 {
            cursor.decode_step(1, &mut got).unwrap();
            assert_eq!(got[1], expected[1], "the second step's column, row {i}");
            cursor.finish_row(&mut got).unwrap();
            assert_eq!(&got[..4], &expected[..4], "the whole row, row {i}");
            assert_eq!(got[4], Value::Null, "a column not wanted stays NULL");
        }
        i += 1;
    }
    assert_eq!(i, 50);

    // Made again for another range, the cursor keeps its steps; unstaged, it decodes every
    // wanted column at once.
    let mut cursor = tx
        .reseek_table_only(
            Some(cursor),
            &db,
            &t,
            Bound::Included(Vec::new()),
            Bound::Unbounded,
            Some(&wanted),
        )
        .unwrap();
    assert!(cursor.next_row_into(&mut tx, &mut got).unwrap());
    cursor.finish_row(&mut got).unwrap();
    assert_eq!(&got[..4], &row(0)[..4]);
    cursor.unstage();
    assert!(cursor.next_row_into(&mut tx, &mut got).unwrap());
    assert_eq!(&got[..4], &row(1)[..4]);
    tx.commit(CommitOption::Unspecified).unwrap();

    // Under SERIALIZABLE each row is read again under its key lock, not from the cursor's
    // copied batch: its later steps decode the same row.
    let mut tx = instance.begin(Isolation::Serializable, None);
    let mut cursor =
        tx.scan_table_only(&db, &t, Bound::Unbounded, Bound::Unbounded, Some(&wanted)).unwrap();
    cursor.stage(&[vec![false, false, false, true, false], vec![false, true, false, true, false]]);
    let mut i = 0;
    while cursor.next_row_into(&mut tx, &mut got).unwrap() {
        cursor.decode_step(1, &mut got).unwrap();
        cursor.finish_row(&mut got).unwrap();
        assert_eq!(&got[..4], &row(i)[..4], "the whole row, row {i}");
        i += 1;
    }
    assert_eq!(i, 50);
    tx.commit(CommitOption::Unspecified).unwrap();
}
