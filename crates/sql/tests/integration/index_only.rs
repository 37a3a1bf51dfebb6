//! Index-only reads: a nonclustered index whose key (with the clustered key its entries
//! point with) holds every column a query reads answers the query without reading the rows.
//! The values must be the rows' own, the plan must say so (no Key Lookup), and the read must
//! see only committed entries, as a read of the rows would.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{errors, ok, run, showplan_text};

/// An instance with database `d` and table `dbo.t`: a clustered key of two columns, a
/// nonclustered index on columns of every type an index-only read can read back, and a
/// text column the index does not hold.
fn setup() -> (tempfile::TempDir, Arc<Instance>) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d; \
         CREATE TABLE dbo.t (a INT NOT NULL, b BIGINT NOT NULL, g INT NULL, \
           amount DECIMAL(12, 2) NULL, day DATE NULL, at DATETIME NULL, \
           id UNIQUEIDENTIFIER NULL, bytes VARBINARY(10) NULL, note VARCHAR(20) NULL, \
           PRIMARY KEY (a, b)); \
         CREATE INDEX ix_t_g ON dbo.t (g, amount, day, at, id, bytes)",
    );
    let mut rows = Vec::new();
    for a in 1..=300 {
        let g = if a % 7 == 0 { "NULL".to_string() } else { (a % 5).to_string() };
        let amount = if a % 11 == 0 {
            "NULL".to_string()
        } else {
            format!("{}.{:02}", a * 3 - 400, a % 100)
        };
        rows.push(format!(
            "({a}, {b}, {g}, {amount}, DATEADD(day, {a}, '2020-02-27'), \
             DATEADD(ms, {a} * 1003, '1900-01-01T23:59:00'), NEWID(), \
             CAST({a} * 256 AS VARBINARY(10)), 'n{a}')",
            b = -(a as i64) * 1_000_000_007,
        ));
    }
    ok(&mut s, &format!("USE d; INSERT INTO dbo.t VALUES {}", rows.join(", ")));
    (dir, instance)
}

fn rows(out: &Collected) -> Vec<Vec<Value>> {
    out.results.last().unwrap().rows.clone()
}

#[test]
fn a_covered_seek_reads_the_rows_values_without_a_key_lookup() {
    let (_dir, instance) = setup();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "USE d");
    let covered = "SELECT g, amount, day, at, id, bytes, a, b FROM dbo.t WHERE g = 3 ORDER BY a";
    // The same rows read from the table: `note` is in no index, so each row is looked up.
    let looked_up =
        "SELECT g, amount, day, at, id, bytes, a, b, note FROM dbo.t WHERE g = 3 ORDER BY a";
    let from_index = rows(&ok(&mut s, covered));
    let from_rows = rows(&ok(&mut s, looked_up));
    assert_eq!(from_index.len(), from_rows.len());
    assert!(from_index.len() > 40);
    for (i, r) in from_index.iter().zip(&from_rows) {
        assert_eq!(i[..], r[..8]);
    }
    // NULLs in the key come back as NULL; a range on the second key column too.
    let nulls = rows(&ok(&mut s, "SELECT a, amount FROM dbo.t WHERE g IS NULL AND amount IS NULL"));
    assert_eq!(
        nulls,
        vec![
            vec![Value::Int(77), Value::Null],
            vec![Value::Int(154), Value::Null],
            vec![Value::Int(231), Value::Null]
        ]
    );
    let counted =
        rows(&ok(&mut s, "SELECT COUNT(*), SUM(b) FROM dbo.t WHERE g = 1 AND amount > 0"));
    let checked = rows(&ok(
        &mut s,
        "SELECT COUNT(*), SUM(b) FROM dbo.t WHERE g = 1 AND amount > 0 AND note IS NOT NULL",
    ));
    assert_eq!(counted, checked);

    let shown = showplan_text(&mut s, covered);
    assert!(shown.contains("Index Seek(OBJECT:([d].[dbo].[t].[ix_t_g]"), "{shown}");
    assert!(!shown.contains("Key Lookup"), "{shown}");
    let shown = showplan_text(&mut s, looked_up);
    assert!(shown.contains("Key Lookup"), "{shown}");
}

/// A session in database `d` that gives up on a lock after 300 ms (error 1222).
fn impatient(instance: &Arc<Instance>) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, "USE d; SET LOCK_TIMEOUT 300");
    s
}

#[test]
fn a_covered_read_committed_read_sees_only_committed_entries() {
    let (_dir, instance) = setup();
    let mut writer = Session::new(Arc::clone(&instance));
    let mut reader = impatient(&instance);
    let count = "SELECT COUNT(*) FROM dbo.t WHERE g = 4";
    let before = rows(&ok(&mut reader, count));
    assert!(!reader_plan_looks_up(&mut reader, count));

    // An uncommitted change of an indexed column: the reader waits for it (1222 here)
    // rather than counting the uncommitted entry or missing the committed one.
    ok(&mut writer, "USE d; BEGIN TRAN; UPDATE dbo.t SET g = 4 WHERE a = 1");
    assert_eq!(errors(&run(&mut reader, count)), vec![1222]);
    ok(&mut writer, "ROLLBACK");
    assert_eq!(rows(&ok(&mut reader, count)), before);

    // An uncommitted insert likewise; once committed, it counts, as a delete does.
    ok(&mut writer, "BEGIN TRAN; INSERT INTO dbo.t (a, b, g) VALUES (1000, 0, 4)");
    assert_eq!(errors(&run(&mut reader, count)), vec![1222]);
    ok(&mut writer, "COMMIT");
    ok(&mut writer, "DELETE FROM dbo.t WHERE a = 4");
    let Value::Int(n) = before[0][0] else { panic!("{before:?}") };
    assert_eq!(rows(&ok(&mut reader, count)), vec![vec![Value::Int(n)]], "one in, one out");

    // The reader kept no row lock.
    let keys = rows(&ok(
        &mut reader,
        "BEGIN TRAN; SELECT COUNT(*) FROM dbo.t WHERE g = 4; \
         SELECT COUNT(*) FROM sys.dm_tran_locks WHERE request_session_id = @@SPID \
         AND resource_type = 'KEY'; COMMIT",
    ));
    assert_eq!(keys, vec![vec![Value::Int(0)]]);
}

fn reader_plan_looks_up(s: &mut Session, query: &str) -> bool {
    showplan_text(s, query).contains("Key Lookup")
}

/// A correlated `COUNT(*)` that counts its seek's entries (`Run::count_seek`) and a NOT
/// EXISTS that reads only an index's keys (`join/semi/right.rs`) read entries without their
/// rows, so they must prove them committed as an index-only read does: an uncommitted
/// change makes them wait (1222 here), and their answers are the per-row forms'.
#[test]
fn counted_seeks_and_key_only_anti_joins_see_only_committed_entries() {
    let (_dir, instance) = setup();
    let mut writer = Session::new(Arc::clone(&instance));
    let mut reader = impatient(&instance);
    ok(
        &mut writer,
        "USE d; CREATE TABLE dbo.k (v INT PRIMARY KEY); \
         INSERT INTO dbo.k SELECT value FROM GENERATE_SERIES(0, 9)",
    );
    let counts = "SELECT k.v, (SELECT COUNT(*) FROM dbo.t WHERE t.g = k.v) FROM dbo.k ORDER BY k.v";
    let per_row =
        "SELECT k.v, (SELECT TOP 1 COUNT(*) FROM dbo.t WHERE t.g = k.v) FROM dbo.k ORDER BY k.v";
    let anti = "SELECT k.v FROM dbo.k WHERE NOT EXISTS (SELECT 1 FROM dbo.t WHERE t.g = k.v) \
                ORDER BY k.v";
    let shown = showplan_text(&mut reader, anti);
    assert!(shown.contains("Right Anti Semi Join"), "{shown}");
    let before = rows(&ok(&mut reader, counts));
    assert_eq!(before, rows(&ok(&mut reader, per_row)));
    let n = |v: i32| -> Value { Value::Int(v) };
    assert_eq!(before[1], vec![n(1), n(52)], "{before:?}");
    assert_eq!(before[9], vec![n(9), n(0)]);
    let kept: Vec<Vec<Value>> = (5..=9).map(|v| vec![n(v)]).collect();
    assert_eq!(rows(&ok(&mut reader, anti)), kept);

    // An uncommitted move of an entry within the counted keys, and out of them.
    ok(&mut writer, "BEGIN TRAN; UPDATE dbo.t SET g = 4 WHERE a = 1");
    assert_eq!(errors(&run(&mut reader, counts)), vec![1222]);
    ok(&mut writer, "ROLLBACK; BEGIN TRAN; UPDATE dbo.t SET g = 7 WHERE a = 1");
    assert_eq!(errors(&run(&mut reader, anti)), vec![1222]);
    ok(&mut writer, "COMMIT");
    let after = rows(&ok(&mut reader, counts));
    assert_eq!(after, rows(&ok(&mut reader, per_row)));
    assert_eq!(after[1], vec![n(1), n(51)]);
    assert_eq!(after[7], vec![n(7), n(1)]);
    let kept: Vec<Vec<Value>> = [5, 6, 8, 9].into_iter().map(|v| vec![n(v)]).collect();
    assert_eq!(rows(&ok(&mut reader, anti)), kept);
}
