//! Key-range locks with real sessions on one instance: a SERIALIZABLE seek or range scan
//! locks its keys and the key past its range (RangeS-S), so inserts into the range wait and
//! nothing else does; a repeated read sees no phantom; an equality seek that finds nothing
//! keeps its gap empty; range deadlocks end in 1205; `sys.dm_tran_locks` shows the modes;
//! READ COMMITTED keeps no row locks after the read; escalation still replaces them.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{errors, ok, run, scalar, waits};

/// An instance with database `d` and table `dbo.t` (k INT PRIMARY KEY, v INT) holding the
/// keys `keys`, each with v = 10 * k.
fn setup(keys: &[i32]) -> (tempfile::TempDir, Arc<Instance>) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE d; USE d; CREATE TABLE dbo.t (k INT PRIMARY KEY, v INT NOT NULL)");
    if !keys.is_empty() {
        let rows: Vec<String> = keys.iter().map(|k| format!("({k}, {})", k * 10)).collect();
        ok(&mut s, &format!("INSERT INTO dbo.t VALUES {}", rows.join(", ")));
    }
    (dir, instance)
}

/// A session in database `d` that gives up on a lock after 300 ms (error 1222): what tells
/// a statement that waits from one that does not.
fn writer(instance: &Arc<Instance>) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, "USE d; SET LOCK_TIMEOUT 300");
    s
}

/// A session in database `d` inside a SERIALIZABLE transaction that has run `query`.
fn serializable_reader(instance: &Arc<Instance>, query: &str) -> (Session, Collected) {
    let mut s = Session::new(Arc::clone(instance));
    let out = ok(
        &mut s,
        &format!("USE d; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRAN; {query}"),
    );
    (s, out)
}

#[test]
fn a_serializable_range_keeps_inserts_out_of_it_and_nowhere_else() {
    let (_dir, instance) = setup(&[5, 10, 12, 20, 30, 600]);
    let (mut reader, out) =
        serializable_reader(&instance, "SELECT COUNT(*) FROM dbo.t WHERE k BETWEEN 10 AND 20");
    assert_eq!(out.results[0].rows[0][0], Value::Int(3));
    let mut w = writer(&instance);
    // Into the range, and into the gap up to the next key past it (30).
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (15, 0)"));
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (21, 0)"));
    // Past the next key, and changes of rows outside the range: no wait.
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (500, 0)"));
    assert!(!waits(&mut w, "UPDATE dbo.t SET v = 1 WHERE k = 600"));
    assert!(!waits(&mut w, "UPDATE dbo.t SET v = 1 WHERE k = 5"));
    assert!(!waits(&mut w, "DELETE FROM dbo.t WHERE k = 500"));
    // A row in the range cannot change either.
    assert!(waits(&mut w, "UPDATE dbo.t SET v = 1 WHERE k = 12"));
    ok(&mut reader, "COMMIT");
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (15, 0)"));
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (21, 0)"));
    assert_eq!(scalar(&mut w, "SELECT COUNT(*) FROM dbo.t"), Value::Int(8));
}

#[test]
fn only_the_gap_up_to_the_next_key_is_locked() {
    // The next key past 10..20 is 25: 21 falls in its gap, 26 in the one after it.
    let (_dir, instance) = setup(&[10, 12, 20, 25, 600]);
    let (mut reader, _) =
        serializable_reader(&instance, "SELECT k FROM dbo.t WHERE k BETWEEN 10 AND 20");
    let mut w = writer(&instance);
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (21, 0)"));
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (26, 0)"));
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (700, 0)"), "past the last key");
    ok(&mut reader, "COMMIT");
}

#[test]
fn a_range_to_the_end_of_the_index_locks_the_end() {
    let (_dir, instance) = setup(&[10, 20, 30]);
    let (mut reader, out) =
        serializable_reader(&instance, "SELECT COUNT(*) FROM dbo.t WHERE k >= 20");
    assert_eq!(out.results[0].rows[0][0], Value::Int(2));
    let mut w = writer(&instance);
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (1000, 0)"));
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (5, 0)"), "below the range");
    let ends = scalar(
        &mut w,
        "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE resource_type = 'KEY' \
         AND request_mode = 'RangeS-S' AND resource_description = '(ffffffffffff)'",
    );
    assert_eq!(ends, Value::Int(1), "the end of the index is locked");
    ok(&mut reader, "COMMIT");
}

#[test]
fn a_repeated_serializable_read_sees_no_phantom() {
    let (_dir, instance) = setup(&[5, 10, 12, 20, 30]);
    let query = "SELECT COUNT(*) FROM dbo.t WHERE k BETWEEN 10 AND 20";
    let (mut reader, out) = serializable_reader(&instance, query);
    assert_eq!(out.results[0].rows[0][0], Value::Int(3));
    let inserter = {
        let instance = Arc::clone(&instance);
        thread::spawn(move || {
            let mut s = Session::new(instance);
            let out = run(&mut s, "USE d; INSERT INTO dbo.t VALUES (15, 0)");
            errors(&out)
        })
    };
    let mut watcher = Session::new(Arc::clone(&instance));
    let mut waiting = Value::Int(0);
    for _ in 0..500 {
        waiting = scalar(
            &mut watcher,
            "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE request_status = 'WAIT' \
             AND request_mode = 'RangeI-N'",
        );
        if waiting != Value::Int(0) {
            break;
        }
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(waiting, Value::Int(1), "the insert waits on RangeI-N");
    assert_eq!(scalar(&mut reader, query), Value::Int(3), "no phantom");
    assert_eq!(
        scalar(&mut reader, "SELECT COUNT(*) FROM dbo.t WHERE k > 10 AND k < 20"),
        Value::Int(1)
    );
    ok(&mut reader, "COMMIT");
    assert_eq!(inserter.join().unwrap(), Vec::<i32>::new());
    assert_eq!(scalar(&mut reader, query), Value::Int(4));
}

#[test]
fn an_equality_seek_that_finds_nothing_keeps_its_gap_empty() {
    let (_dir, instance) = setup(&[10, 20, 30]);
    let (mut reader, out) = serializable_reader(&instance, "SELECT v FROM dbo.t WHERE k = 15");
    assert!(out.results[0].rows.is_empty());
    let mut w = writer(&instance);
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (15, 0)"));
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (11, 0)"), "the gap is (10, 20]");
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (25, 0)"));
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (5, 0)"));
    // The same for a seek past the last key: the end of the index.
    ok(&mut reader, "SELECT v FROM dbo.t WHERE k = 99");
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (100, 0)"));
    assert!(
        scalar(&mut reader, "SELECT COUNT(*) FROM dbo.t WHERE k = 15") == Value::Int(0),
        "still nothing"
    );
    ok(&mut reader, "COMMIT");
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (15, 0)"));
}

#[test]
fn a_nonclustered_range_locks_its_index_keys() {
    let (_dir, instance) = setup(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "USE d; CREATE INDEX ix_v ON dbo.t (v)");
    let (mut reader, out) =
        serializable_reader(&instance, "SELECT COUNT(*) FROM dbo.t WHERE v BETWEEN 20 AND 40");
    assert_eq!(out.results[0].rows[0][0], Value::Int(3));
    let mut w = writer(&instance);
    // A new row whose v falls in the range waits, whatever its clustered key.
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (100, 35)"));
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (101, 1000)"));
    // So does an update that moves a row's v into the range.
    assert!(waits(&mut w, "UPDATE dbo.t SET v = 25 WHERE k = 8"));
    assert!(!waits(&mut w, "UPDATE dbo.t SET v = 900 WHERE k = 8"));
    let range_keys = scalar(
        &mut w,
        "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE resource_type = 'KEY' \
         AND request_mode = 'RangeS-S'",
    );
    // v = 20, 30, 40 and the next key, 50.
    assert_eq!(range_keys, Value::Int(4));
    ok(&mut reader, "COMMIT");
}

#[test]
fn deadlocked_range_readers_end_in_1205_and_one_goes_on() {
    let (_dir, instance) = setup(&[10, 12, 20, 590, 600]);
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = [("10 AND 12", 595), ("590 AND 600", 11)]
        .into_iter()
        .map(|(range, insert)| {
            let instance = Arc::clone(&instance);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let mut s = Session::new(instance);
                ok(
                    &mut s,
                    &format!(
                        "USE d; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRAN; \
                         SELECT COUNT(*) FROM dbo.t WHERE k BETWEEN {range}"
                    ),
                );
                barrier.wait();
                let out = run(
                    &mut s,
                    &format!("INSERT INTO dbo.t VALUES ({insert}, 0); IF @@TRANCOUNT > 0 COMMIT"),
                );
                (errors(&out), scalar(&mut s, "SELECT @@TRANCOUNT"))
            })
        })
        .collect();
    let results: Vec<(Vec<i32>, Value)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let victims = results.iter().filter(|(e, _)| e == &vec![1205]).count();
    let winners = results.iter().filter(|(e, _)| e.is_empty()).count();
    assert_eq!((victims, winners), (1, 1), "{results:?}");
    assert!(results.iter().all(|(_, t)| *t == Value::Int(0)), "{results:?}");
    let mut s = Session::new(instance);
    assert_eq!(scalar(&mut s, "USE d; SELECT COUNT(*) FROM dbo.t"), Value::Int(6));
}

#[test]
fn dm_tran_locks_shows_range_modes_as_sql_server_does() {
    let (_dir, instance) = setup(&[10, 12, 20, 30]);
    let (mut reader, _) =
        serializable_reader(&instance, "SELECT v FROM dbo.t WHERE k BETWEEN 10 AND 20");
    let spid = scalar(&mut reader, "SELECT @@SPID");
    let Value::SmallInt(spid) = spid else { panic!("@@SPID is {spid:?}") };
    let mut watcher = Session::new(Arc::clone(&instance));
    let out = ok(
        &mut watcher,
        &format!(
            "SELECT resource_type, request_mode, request_status, resource_description \
             FROM sys.dm_tran_locks WHERE request_session_id = {spid} \
             AND resource_type IN ('OBJECT', 'KEY') ORDER BY resource_type DESC"
        ),
    );
    let rows = &out.results[0].rows;
    let text = |s: &str| Value::NStr(s.into());
    assert_eq!(rows[0][..3], [text("OBJECT"), text("IS"), text("GRANT")], "{rows:?}");
    let keys: Vec<&Vec<Value>> = rows.iter().filter(|r| r[0] == text("KEY")).collect();
    assert_eq!(keys.len(), 4, "10, 12, 20 and the next key, 30: {rows:?}");
    for key in keys {
        assert_eq!(key[1..3], [text("RangeS-S"), text("GRANT")], "{rows:?}");
        let Value::NStr(description) = &key[3] else { panic!("{key:?}") };
        assert_eq!(description.len(), 14, "a 48-bit hash in parentheses: {description}");
        assert!(description.starts_with('(') && description.ends_with(')'), "{description}");
    }
    ok(&mut reader, "COMMIT");
    // A SERIALIZABLE delete holds RangeX-X on the key it deletes.
    let mut deleter = Session::new(Arc::clone(&instance));
    ok(
        &mut deleter,
        "USE d; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRAN; \
         DELETE FROM dbo.t WHERE k = 30",
    );
    let held = scalar(
        &mut watcher,
        "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE resource_type = 'KEY' \
         AND request_mode = 'RangeX-X' AND request_status = 'GRANT'",
    );
    assert_eq!(held, Value::Int(1));
    ok(&mut deleter, "ROLLBACK");
}

#[test]
fn read_committed_keeps_no_row_lock_after_the_read() {
    let (_dir, instance) = setup(&[10, 12, 20, 30]);
    let mut reader = Session::new(Arc::clone(&instance));
    ok(
        &mut reader,
        "USE d; SET TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN TRAN; \
         SELECT v FROM dbo.t WHERE k BETWEEN 10 AND 20; SELECT v FROM dbo.t WHERE k = 30; \
         SELECT COUNT(*) FROM dbo.t",
    );
    let keys = scalar(
        &mut reader,
        "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE request_session_id = @@SPID \
         AND resource_type = 'KEY'",
    );
    assert_eq!(keys, Value::Int(0), "every row lock was given back after its read");
    let mut w = writer(&instance);
    assert!(!waits(&mut w, "UPDATE dbo.t SET v = 0 WHERE k = 12"));
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (15, 0)"));
    ok(&mut reader, "COMMIT");
}

#[test]
fn a_long_serializable_range_escalates_to_a_table_lock() {
    let (_dir, instance) = setup(&[]);
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "USE d; DECLARE @i INT = 1; WHILE @i <= 6000 BEGIN \
         INSERT INTO dbo.t VALUES (@i, @i); SET @i += 1; END",
    );
    let (mut reader, out) =
        serializable_reader(&instance, "SELECT COUNT(*) FROM dbo.t WHERE k BETWEEN 2 AND 5999");
    assert_eq!(out.results[0].rows[0][0], Value::Int(5998));
    let out = ok(
        &mut reader,
        "SELECT resource_type, request_mode FROM sys.dm_tran_locks \
         WHERE request_session_id = @@SPID AND resource_type IN ('OBJECT', 'KEY')",
    );
    let text = |s: &str| Value::NStr(s.into());
    assert_eq!(out.results[0].rows, vec![vec![text("OBJECT"), text("S")]], "escalated");
    let mut w = writer(&instance);
    assert!(waits(&mut w, "INSERT INTO dbo.t VALUES (7000, 0)"), "the table S keeps it out");
    ok(&mut reader, "COMMIT");
}

#[test]
fn a_serializable_update_search_escalates_to_x_not_s() {
    let (_dir, instance) = setup(&[]);
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "USE d; DECLARE @i INT = 1; WHILE @i <= 6000 BEGIN \
         INSERT INTO dbo.t VALUES (@i, @i); SET @i += 1; END",
    );
    // The search reads its 5,998 rows with RangeS-U before it changes any: the escalation it
    // reaches on the way is to X, which its writes need, not to S.
    let (mut updater, _) =
        serializable_reader(&instance, "UPDATE dbo.t SET v = v + 1 WHERE k BETWEEN 2 AND 5999");
    let out = ok(
        &mut updater,
        "SELECT resource_type, request_mode FROM sys.dm_tran_locks \
         WHERE request_session_id = @@SPID AND resource_type IN ('OBJECT', 'KEY')",
    );
    let text = |s: &str| Value::NStr(s.into());
    assert_eq!(out.results[0].rows, vec![vec![text("OBJECT"), text("X")]], "escalated");
    let mut w = writer(&instance);
    assert!(waits(&mut w, "SELECT COUNT(*) FROM dbo.t WHERE k = 1"), "X keeps readers out");
    ok(&mut updater, "COMMIT");
    assert_eq!(scalar(&mut w, "SELECT v FROM dbo.t WHERE k = 2"), Value::Int(3));
}

#[test]
fn a_merge_seeks_its_target_and_locks_only_the_keys_it_matched() {
    let keys: Vec<i32> = (1..=3000).collect();
    let (_dir, instance) = setup(&keys);
    let (mut merger, out) = serializable_reader(
        &instance,
        "MERGE dbo.t AS t USING (VALUES (10, 1), (20, 2), (5000, 3)) AS s (k, v) ON t.k = s.k \
         WHEN MATCHED THEN UPDATE SET v = s.v \
         WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v); \
         SELECT @@ROWCOUNT;",
    );
    assert_eq!(out.results[0].rows[0][0], Value::Int(3));
    let out = ok(
        &mut merger,
        "SELECT request_mode, COUNT(*) FROM sys.dm_tran_locks \
         WHERE request_session_id = @@SPID AND resource_type = 'OBJECT' GROUP BY request_mode",
    );
    assert_eq!(out.results[0].rows, vec![vec![Value::NStr("IX".into()), Value::Int(1)]]);
    // Rows and ranges the statement did not touch stay free for others.
    let mut w = writer(&instance);
    assert!(!waits(&mut w, "UPDATE dbo.t SET v = 0 WHERE k = 1500"));
    assert!(!waits(&mut w, "INSERT INTO dbo.t VALUES (0, 0)"));
    assert!(waits(&mut w, "UPDATE dbo.t SET v = 0 WHERE k = 10"), "the merged row is X");
    ok(&mut merger, "COMMIT");
    let out = ok(&mut w, "SELECT k, v FROM dbo.t WHERE k IN (10, 20, 5000) ORDER BY k");
    let row = |k: i32, v: i32| vec![Value::Int(k), Value::Int(v)];
    assert_eq!(out.results[0].rows, vec![row(10, 1), row(20, 2), row(5000, 3)]);
}

/// An index nested-loop join seeks its inner table once per outer row, each seek made from
/// the last one's cursor (kept buffers, a leaf hint): under SERIALIZABLE every seek still
/// locks its own range and the key past it, so inserts into any sought range wait (the
/// second seek's too), inserts into the gaps no seek read do not, and the join reads the
/// same rows again.
#[test]
fn a_serializable_join_locks_the_range_of_each_seek_it_makes() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d; \
         CREATE TABLE dbo.o (id INT PRIMARY KEY, s INT NOT NULL); \
         CREATE TABLE dbo.l (oid INT NOT NULL, n INT NOT NULL, PRIMARY KEY (oid, n)); \
         INSERT INTO dbo.o VALUES (1, 0), (2, 1), (3, 0), (4, 0), (5, 1), (6, 0); \
         INSERT INTO dbo.l VALUES (1, 1), (2, 1), (2, 2), (3, 1), (4, 1), (5, 1), (5, 2), (6, 1);          DECLARE @i INT = 100;          WHILE @i < 140 BEGIN INSERT INTO dbo.l VALUES (@i, 1); SET @i += 1; END",
    );
    // Lines of orders that `o` does not hold make `l` large enough that two seeks cost
    // less than reading it whole for a hash join.
    let join = "SELECT COUNT(*) FROM dbo.o JOIN dbo.l ON l.oid = o.id WHERE o.s = 1";
    // The plan this test is about: `l` sought per row of `o`.
    ok(&mut s, "SET SHOWPLAN_TEXT ON");
    let plan = ok(&mut s, join);
    ok(&mut s, "SET SHOWPLAN_TEXT OFF");
    let text = format!("{:?}", plan.results);
    assert!(text.contains("Clustered Index Seek(OBJECT:([d].[dbo].[l]."), "{text}");
    let (mut reader, out) = serializable_reader(&instance, join);
    assert_eq!(out.results[0].rows[0][0], Value::Int(4));
    let mut w = writer(&instance);
    // Into the first seek's range, and into the second's.
    assert!(waits(&mut w, "INSERT INTO dbo.l VALUES (2, 3)"));
    assert!(waits(&mut w, "INSERT INTO dbo.l VALUES (5, 3)"));
    // Past the key after each range: gaps neither seek read.
    assert!(!waits(&mut w, "INSERT INTO dbo.l VALUES (3, 5)"));
    assert!(!waits(&mut w, "INSERT INTO dbo.l VALUES (6, 5)"));
    let again = ok(&mut reader, &format!("{join}; COMMIT"));
    assert_eq!(again.results[0].rows[0][0], Value::Int(4));
    assert!(!waits(&mut w, "INSERT INTO dbo.l VALUES (5, 3)"));
}
