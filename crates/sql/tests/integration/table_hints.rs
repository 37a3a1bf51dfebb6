//! Table hints lock as SQL Server's do: NOLOCK reads uncommitted rows without waiting,
//! UPDLOCK holds update locks to the end of the transaction, HOLDLOCK keeps the range,
//! TABLOCKX takes the table, NOWAIT fails at once, READPAST skips the rows other
//! transactions hold; a hint lasts only for its statement; bad lists are refused with SQL
//! Server's errors (321, 650, 1047, 1065).

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{errors, ok, run, scalar, waits};

/// An instance with database `d` and table `dbo.t` (k INT PRIMARY KEY, v INT) holding
/// keys 1 to 30 with v = 10 * k.
fn setup() -> (tempfile::TempDir, Arc<Instance>) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d; CREATE TABLE dbo.t (k INT PRIMARY KEY, v INT NOT NULL); \
         DECLARE @i INT = 1; WHILE @i <= 30 BEGIN INSERT INTO dbo.t VALUES (@i, @i * 10); \
         SET @i += 1; END",
    );
    (dir, instance)
}

/// A session in database `d` that gives up on a lock after 300 ms (error 1222).
fn session(instance: &Arc<Instance>) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, "USE d; SET LOCK_TIMEOUT 300");
    s
}

fn locks(s: &mut Session) -> Vec<Vec<Value>> {
    ok(
        s,
        "SELECT resource_type, request_mode, COUNT(*) FROM sys.dm_tran_locks \
         WHERE request_session_id = @@SPID AND resource_type IN ('OBJECT', 'KEY') \
         GROUP BY resource_type, request_mode ORDER BY resource_type, request_mode",
    )
    .results[0]
        .rows
        .clone()
}

fn lock_row(kind: &str, mode: &str, n: i32) -> Vec<Value> {
    vec![Value::NStr(kind.into()), Value::NStr(mode.into()), Value::Int(n)]
}

#[test]
fn nolock_and_read_uncommitted_read_an_uncommitted_change_without_waiting() {
    let (_dir, instance) = setup();
    let mut writer = session(&instance);
    ok(&mut writer, "BEGIN TRAN; UPDATE dbo.t SET v = -1 WHERE k = 1");
    let mut reader = session(&instance);
    assert!(waits(&mut reader, "SELECT v FROM dbo.t WHERE k = 1"), "READ COMMITTED waits");
    assert_eq!(
        scalar(&mut reader, "SELECT v FROM dbo.t WITH (NOLOCK) WHERE k = 1"),
        Value::Int(-1)
    );
    assert_eq!(scalar(&mut reader, "SELECT SUM(v) FROM dbo.t (NOLOCK)"), Value::Int(4639));
    ok(&mut reader, "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED");
    assert_eq!(scalar(&mut reader, "SELECT v FROM dbo.t WHERE k = 1"), Value::Int(-1));
    assert_eq!(
        scalar(
            &mut reader,
            "SELECT transaction_isolation_level FROM sys.dm_exec_sessions WHERE session_id = @@SPID"
        ),
        Value::SmallInt(1)
    );
    // A READCOMMITTED hint reads that table at READ COMMITTED again.
    assert!(waits(&mut reader, "SELECT v FROM dbo.t WITH (READCOMMITTED) WHERE k = 1"));
    ok(&mut writer, "ROLLBACK");
    assert_eq!(
        scalar(&mut reader, "SELECT v FROM dbo.t WITH (NOLOCK) WHERE k = 1"),
        Value::Int(10)
    );
}

#[test]
fn updlock_holds_update_locks_to_the_end_of_the_transaction() {
    let (_dir, instance) = setup();
    let mut a = session(&instance);
    ok(&mut a, "BEGIN TRAN; SELECT v FROM dbo.t WITH (UPDLOCK) WHERE k = 5");
    assert!(locks(&mut a).contains(&lock_row("KEY", "U", 1)), "{:?}", locks(&mut a));
    let mut b = session(&instance);
    // U lets readers through and keeps other updaters (and UPDLOCK readers) out.
    assert!(!waits(&mut b, "SELECT v FROM dbo.t WHERE k = 5"));
    assert!(waits(&mut b, "SELECT v FROM dbo.t WITH (UPDLOCK) WHERE k = 5"));
    assert!(waits(&mut b, "UPDATE dbo.t SET v = 0 WHERE k = 5"));
    assert!(!waits(&mut b, "UPDATE dbo.t SET v = 0 WHERE k = 6"), "only the row read");
    ok(&mut a, "UPDATE dbo.t SET v = v + 1 WHERE k = 5; COMMIT");
    assert!(!waits(&mut b, "UPDATE dbo.t SET v = v + 1 WHERE k = 5"));
    assert_eq!(scalar(&mut b, "SELECT v FROM dbo.t WHERE k = 5"), Value::Int(52));
}

#[test]
fn hibernates_pessimistic_lock_serializes_two_read_then_write_transactions() {
    let (_dir, instance) = setup();
    let read = "SELECT v FROM dbo.t WITH (UPDLOCK, HOLDLOCK, ROWLOCK) WHERE k = 7";
    let mut a = session(&instance);
    let mut b = session(&instance);
    ok(&mut a, &format!("BEGIN TRAN; {read}"));
    ok(&mut b, "BEGIN TRAN");
    assert!(waits(&mut b, read), "the second reader waits for the first's transaction");
    ok(&mut a, "UPDATE dbo.t SET v = v + 1 WHERE k = 7; COMMIT");
    assert_eq!(scalar(&mut b, read), Value::Int(71));
    ok(&mut b, "COMMIT");
}

#[test]
fn holdlock_keeps_its_range_and_ends_with_its_statement() {
    let (_dir, instance) = setup();
    ok(&mut Session::new(Arc::clone(&instance)), "USE d; DELETE FROM dbo.t WHERE k = 15");
    let mut a = session(&instance);
    ok(
        &mut a,
        "BEGIN TRAN; SELECT COUNT(*) FROM dbo.t WITH (HOLDLOCK) WHERE k BETWEEN 10 AND 20; \
         SELECT v FROM dbo.t WHERE k = 25",
    );
    let mut b = session(&instance);
    assert!(waits(&mut b, "INSERT INTO dbo.t VALUES (15, 0)"), "no phantom in the range");
    assert!(waits(&mut b, "UPDATE dbo.t SET v = 0 WHERE k = 12"), "its rows stay S-locked");
    // The next statement read without the hint: READ COMMITTED kept no lock.
    assert!(!waits(&mut b, "UPDATE dbo.t SET v = 0 WHERE k = 25"));
    ok(&mut a, "COMMIT");
    assert!(!waits(&mut b, "INSERT INTO dbo.t VALUES (15, 0)"));
}

#[test]
fn tablockx_takes_the_table_and_nowait_does_not_wait() {
    let (_dir, instance) = setup();
    let mut a = session(&instance);
    ok(&mut a, "BEGIN TRAN; SELECT COUNT(*) FROM dbo.t WITH (TABLOCKX)");
    assert_eq!(locks(&mut a), vec![lock_row("OBJECT", "X", 1)]);
    let mut b = Session::new(Arc::clone(&instance));
    ok(&mut b, "USE d");
    // No lock timeout in b: only NOWAIT keeps it from waiting.
    let out = run(&mut b, "SELECT COUNT(*) FROM dbo.t WITH (NOWAIT)");
    assert_eq!(errors(&out), vec![1222]);
    ok(&mut a, "COMMIT");
    assert_eq!(scalar(&mut b, "SELECT COUNT(*) FROM dbo.t WITH (NOWAIT)"), Value::Int(30));
}

#[test]
fn a_merge_with_holdlock_is_an_upsert_two_sessions_cannot_both_insert() {
    let (_dir, instance) = setup();
    let upsert = "MERGE dbo.t WITH (HOLDLOCK) AS t USING (VALUES (100, 1)) AS s (k, v) \
                  ON t.k = s.k WHEN MATCHED THEN UPDATE SET v = t.v + s.v \
                  WHEN NOT MATCHED THEN INSERT (k, v) VALUES (s.k, s.v);";
    let mut a = session(&instance);
    let mut b = session(&instance);
    ok(&mut a, &format!("BEGIN TRAN; {upsert}"));
    assert!(waits(&mut b, upsert), "the key's gap is held until a commits");
    ok(&mut a, "COMMIT");
    ok(&mut b, upsert);
    assert_eq!(scalar(&mut b, "SELECT v FROM dbo.t WHERE k = 100"), Value::Int(2));
}

#[test]
fn bad_hint_lists_get_sql_servers_errors_and_the_rest_are_accepted() {
    let (_dir, instance) = setup();
    let mut s = session(&instance);
    let error = |s: &mut Session, sql: &str| errors(&run(s, sql));
    assert_eq!(error(&mut s, "SELECT * FROM dbo.t WITH (NOLOCK, HOLDLOCK)"), vec![1047]);
    assert_eq!(error(&mut s, "SELECT * FROM dbo.t WITH (READUNCOMMITTED, UPDLOCK)"), vec![1047]);
    assert_eq!(error(&mut s, "UPDATE dbo.t WITH (NOLOCK) SET v = 0 WHERE k = 1"), vec![1065]);
    assert_eq!(error(&mut s, "DELETE dbo.t WITH (READUNCOMMITTED) WHERE k = 1"), vec![1065]);
    assert_eq!(error(&mut s, "SELECT * FROM dbo.t WITH (FASTEST)"), vec![321]);
    assert_eq!(error(&mut s, "SELECT * FROM dbo.t WITH (NOLOCK, READPAST)"), vec![1047]);
    assert_eq!(error(&mut s, "SELECT * FROM dbo.t WITH (HOLDLOCK, READPAST)"), vec![650]);
    let out = ok(
        &mut s,
        "SELECT COUNT(*) FROM dbo.t WITH (ROWLOCK, PAGLOCK, READPAST, INDEX(1), FORCESEEK) \
         WHERE k > 20",
    );
    assert_eq!(out.results[0].rows[0][0], Value::Int(10));
    ok(&mut s, "INSERT INTO dbo.t WITH (TABLOCK) VALUES (31, 310)");
    ok(&mut s, "UPDATE dbo.t WITH (ROWLOCK, UPDLOCK) SET v = 0 WHERE k = 31");
}

#[test]
fn a_hint_in_a_loop_applies_at_every_iteration() {
    let (_dir, instance) = setup();
    let mut a = session(&instance);
    ok(
        &mut a,
        "BEGIN TRAN; DECLARE @i INT = 0, @v INT; WHILE @i < 3 BEGIN \
         SELECT @v = v FROM dbo.t WITH (UPDLOCK) WHERE k = 10 + @i; SET @i += 1; END",
    );
    assert!(locks(&mut a).contains(&lock_row("KEY", "U", 3)), "{:?}", locks(&mut a));
    let mut b = session(&instance);
    assert!(waits(&mut b, "UPDATE dbo.t SET v = 0 WHERE k = 12"), "the last iteration's row");
    ok(&mut a, "COMMIT");
}

#[test]
fn readpast_skips_rows_another_transaction_holds_and_waits_for_nothing() {
    let (_dir, instance) = setup();
    let mut writer = session(&instance);
    ok(
        &mut writer,
        "BEGIN TRAN; UPDATE dbo.t SET v = -1 WHERE k = 2; DELETE dbo.t WHERE k = 4; \
         INSERT INTO dbo.t VALUES (100, 1000)",
    );
    let mut reader = session(&instance);
    assert!(waits(&mut reader, "SELECT COUNT(*) FROM dbo.t"), "READ COMMITTED waits");
    // The updated row and the inserted one are skipped, the deleted one is not there.
    let count = "SELECT COUNT(*), SUM(v) FROM dbo.t WITH (READPAST)";
    let row = &ok(&mut reader, count).results[0].rows[0];
    assert_eq!(row, &vec![Value::Int(28), Value::Int(4650 - 20 - 40)]);
    // A seek of a held key finds nothing; of a free one, its row.
    let seek = "SELECT COUNT(*) FROM dbo.t WITH (READPAST) WHERE k IN (2, 3)";
    assert_eq!(scalar(&mut reader, seek), Value::Int(1));
    // REPEATABLE READ reads past too, and holds what it read.
    ok(&mut reader, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    let level = "SELECT transaction_isolation_level FROM sys.dm_exec_sessions \
                 WHERE session_id = @@SPID";
    assert_eq!(scalar(&mut reader, level), Value::SmallInt(3));
    ok(&mut reader, "BEGIN TRAN");
    let between = "SELECT COUNT(*) FROM dbo.t WITH (READPAST) WHERE k BETWEEN 1 AND 5";
    assert_eq!(scalar(&mut reader, between), Value::Int(3));
    ok(&mut reader, "COMMIT");
    ok(&mut reader, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
    assert_eq!(errors(&run(&mut reader, count)), vec![650]);
    ok(&mut reader, "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED");
    assert_eq!(errors(&run(&mut reader, count)), vec![650]);
    ok(&mut writer, "ROLLBACK");
    ok(&mut reader, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    assert_eq!(scalar(&mut reader, "SELECT COUNT(*) FROM dbo.t WITH (READPAST)"), Value::Int(30));
}

#[test]
fn two_workers_take_different_rows_of_a_queue_with_readpast_and_updlock() {
    let (_dir, instance) = setup();
    let take = "BEGIN TRAN; DELETE TOP (1) dbo.t WITH (ROWLOCK, UPDLOCK, READPAST) \
                OUTPUT deleted.k WHERE k <= 3";
    let mut first = session(&instance);
    let out = ok(&mut first, take);
    assert_eq!(out.results[0].rows, vec![vec![Value::Int(1)]]);
    let mut second = session(&instance);
    let out = ok(&mut second, take);
    assert_eq!(out.results[0].rows, vec![vec![Value::Int(2)]], "the first worker's row is passed");
    // The same in a SELECT ... ORDER BY: the queue's next free row.
    let mut third = session(&instance);
    let next = "SELECT TOP (1) k FROM dbo.t WITH (UPDLOCK, READPAST) ORDER BY k";
    assert_eq!(scalar(&mut third, next), Value::Int(3));
    ok(&mut first, "ROLLBACK");
    ok(&mut second, "COMMIT");
    assert_eq!(scalar(&mut third, next), Value::Int(1));
}
