//! Which table locks a transaction keeps after a statement, with real sessions on one
//! instance (`docs/locking.md`, "Locks a statement gives back"): a READ COMMITTED or READ
//! UNCOMMITTED statement gives back its IS on the tables it only read, and a `TABLOCK`'s S,
//! as it ends, so another session's DDL on the table need not wait for the transaction
//! (pymssql's own suite drops a table that a connection left in a transaction has read);
//! REPEATABLE READ, SERIALIZABLE, `HOLDLOCK`, `UPDLOCK` and `XLOCK` reads keep theirs to the
//! end, and so does a transaction that read the table and then changed it (IX).

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{errors, ok, run, scalar, waits};

/// An instance with database `d` and tables `dbo.t` (k INT PRIMARY KEY, v INT, w INT with a
/// nonclustered index) holding keys 1..=5, and `dbo.h`, a heap of three rows.
fn setup() -> (tempfile::TempDir, Arc<Instance>) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d; \
         CREATE TABLE dbo.t (k INT PRIMARY KEY, v INT NOT NULL, w INT NOT NULL); \
         CREATE INDEX t_w ON dbo.t (w); \
         INSERT INTO dbo.t VALUES (1, 10, 1), (2, 20, 2), (3, 30, 3), (4, 40, 4), (5, 50, 5); \
         CREATE TABLE dbo.h (a INT); INSERT INTO dbo.h VALUES (1), (2), (3)",
    );
    (dir, instance)
}

/// A session in database `d` that gives up on any lock it would have to wait for (1222).
fn impatient(instance: &Arc<Instance>) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, "USE d; SET LOCK_TIMEOUT 0");
    s
}

/// A session in database `d` inside a transaction that has run `sql`.
fn in_transaction(instance: &Arc<Instance>, sql: &str) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, &format!("USE d; BEGIN TRAN; {sql}"));
    s
}

/// The modes of the table locks `s`'s transaction holds on `table` of the current database,
/// as `sys.dm_tran_locks` lists them.
fn table_locks(s: &mut Session, table: &str) -> Vec<String> {
    let out = ok(
        s,
        &format!(
            "SELECT request_mode FROM sys.dm_tran_locks WHERE request_session_id = @@SPID \
             AND resource_type = 'OBJECT' AND resource_database_id = DB_ID() \
             AND resource_associated_entity_id = OBJECT_ID('{table}')"
        ),
    );
    let rows = &out.results.last().unwrap().rows;
    rows.iter()
        .map(|r| match &r[0] {
            Value::NStr(m) | Value::Str(m) => m.clone(),
            other => panic!("request_mode {other:?}"),
        })
        .collect()
}

/// How many locks of any kind `s`'s transaction holds.
fn lock_count(s: &mut Session) -> Value {
    scalar(s, "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE request_session_id = @@SPID")
}

#[test]
fn a_table_read_in_an_open_transaction_can_be_dropped_by_another_session() {
    // pymssql's TestAutocommit: a connection left in a transaction that only read the table,
    // then another connection's setUp drops it.
    let (_dir, instance) = setup();
    let mut a = in_transaction(&instance, "SELECT * FROM dbo.t; SELECT * FROM dbo.h");
    assert_eq!(table_locks(&mut a, "dbo.t"), Vec::<String>::new());
    assert_eq!(table_locks(&mut a, "dbo.h"), Vec::<String>::new());
    assert_eq!(lock_count(&mut a), Value::Int(0));
    let mut b = impatient(&instance);
    assert!(!waits(&mut b, "DROP TABLE dbo.t"), "the DROP does not wait for the reader");
    assert!(!waits(&mut b, "ALTER TABLE dbo.h ADD b INT"), "nor does an ALTER");
    // The reader's transaction goes on and finds the table gone.
    let out = run(&mut a, "SELECT * FROM dbo.t");
    assert_eq!(errors(&out), [208], "{:?}", out.messages);
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM dbo.h WHERE b IS NULL"), Value::Int(3));
    ok(&mut a, "COMMIT");
}

#[test]
fn every_read_path_at_read_committed_gives_its_table_lock_back() {
    let (_dir, instance) = setup();
    let reads = [
        "SELECT SUM(v) FROM dbo.t",
        "SELECT v FROM dbo.t WHERE k = 3",
        "SELECT v FROM dbo.t WHERE k BETWEEN 2 AND 4",
        "SELECT v FROM dbo.t WHERE w = 2",
        "SELECT COUNT(*) FROM dbo.t WITH (NOLOCK)",
        "SELECT COUNT(*) FROM dbo.t WITH (TABLOCK)",
        "SELECT COUNT(*) FROM dbo.t WITH (READCOMMITTEDLOCK)",
        "IF EXISTS (SELECT * FROM dbo.t WHERE k = 1) PRINT 'found'",
        "DECLARE @v INT; SELECT @v = v FROM dbo.t WHERE k = 1",
        // A search that changes nothing.
        "UPDATE dbo.t SET v = 0 WHERE k = 99",
        "DELETE FROM dbo.t WHERE w = 99",
    ];
    for level in ["READ COMMITTED", "READ UNCOMMITTED"] {
        for sql in reads {
            let mut a = Session::new(Arc::clone(&instance));
            ok(&mut a, &format!("USE d; SET TRANSACTION ISOLATION LEVEL {level}; BEGIN TRAN"));
            ok(&mut a, sql);
            assert_eq!(table_locks(&mut a, "dbo.t"), Vec::<String>::new(), "{level}: {sql}");
            let mut b = impatient(&instance);
            assert!(!waits(&mut b, "BEGIN TRAN; ALTER TABLE dbo.t ADD x INT; ROLLBACK"), "{sql}");
            ok(&mut a, "COMMIT");
        }
    }
}

#[test]
fn reads_that_hold_their_locks_keep_the_table_locked() {
    let (_dir, instance) = setup();
    let holding = [
        ("REPEATABLE READ", "SELECT * FROM dbo.t"),
        ("REPEATABLE READ", "SELECT v FROM dbo.t WHERE k = 3"),
        ("REPEATABLE READ", "SELECT v FROM dbo.t WHERE w = 99"),
        ("SERIALIZABLE", "SELECT * FROM dbo.h"),
        ("SERIALIZABLE", "SELECT v FROM dbo.t WHERE k BETWEEN 2 AND 3"),
        ("READ COMMITTED", "SELECT * FROM dbo.t WITH (HOLDLOCK) WHERE k = 2"),
        ("READ COMMITTED", "SELECT * FROM dbo.t WITH (REPEATABLEREAD)"),
        ("READ COMMITTED", "SELECT * FROM dbo.t WITH (UPDLOCK) WHERE k = 2"),
        ("READ COMMITTED", "SELECT * FROM dbo.t WITH (XLOCK) WHERE k = 2"),
        ("READ COMMITTED", "SELECT * FROM dbo.t WITH (TABLOCK, HOLDLOCK)"),
        // A plain read and a holding one of the same table in one statement.
        ("READ COMMITTED", "SELECT * FROM dbo.t a JOIN dbo.t b WITH (HOLDLOCK) ON b.k = a.k"),
    ];
    for (level, sql) in holding {
        let mut a = Session::new(Arc::clone(&instance));
        ok(&mut a, &format!("USE d; SET TRANSACTION ISOLATION LEVEL {level}; BEGIN TRAN"));
        ok(&mut a, sql);
        let table = if sql.contains("dbo.h") { "dbo.h" } else { "dbo.t" };
        assert_eq!(table_locks(&mut a, table).len(), 1, "{level}: {sql}");
        let mut b = impatient(&instance);
        let drop = format!("DROP TABLE {table}");
        assert!(waits(&mut b, &drop), "{level}: {sql} keeps the DROP out (1222)");
        ok(&mut a, "COMMIT");
        assert_eq!(lock_count(&mut a), Value::Int(0));
        assert!(!waits(&mut b, &format!("BEGIN TRAN; {drop}; ROLLBACK")), "{sql}: after COMMIT");
    }
}

#[test]
fn a_transaction_that_read_and_then_wrote_keeps_its_intent_exclusive_lock() {
    let (_dir, instance) = setup();
    // Read in one statement, write in the next: IS given back, then IX taken and kept.
    let mut a = in_transaction(&instance, "SELECT * FROM dbo.t");
    ok(&mut a, "UPDATE dbo.t SET v = v + 1 WHERE k = 1");
    assert_eq!(table_locks(&mut a, "dbo.t"), ["IX"]);
    ok(&mut a, "SELECT * FROM dbo.t");
    assert_eq!(table_locks(&mut a, "dbo.t"), ["IX"], "a later read keeps the IX");
    let mut b = impatient(&instance);
    assert!(waits(&mut b, "DROP TABLE dbo.t"));
    assert!(waits(&mut b, "SELECT v FROM dbo.t WHERE k = 1"), "the changed row stays locked");
    assert_eq!(scalar(&mut b, "SELECT v FROM dbo.t WHERE k = 2"), Value::Int(20));
    ok(&mut a, "ROLLBACK");

    // Read and write in one statement: the IS converts to IX and stays.
    let mut a = in_transaction(
        &instance,
        "UPDATE dbo.t SET v = (SELECT MAX(v) FROM dbo.t) WHERE k = (SELECT MIN(w) FROM dbo.t)",
    );
    assert_eq!(table_locks(&mut a, "dbo.t"), ["IX"]);
    assert!(waits(&mut b, "DROP TABLE dbo.t"));
    ok(&mut a, "COMMIT");
    assert_eq!(scalar(&mut b, "SELECT v FROM dbo.t WHERE k = 1"), Value::Int(50));

    // An insert: IX kept, and the IS of a read of another table given back.
    let mut a = in_transaction(&instance, "INSERT INTO dbo.t SELECT a + 10, a, a FROM dbo.h");
    assert_eq!(table_locks(&mut a, "dbo.t"), ["IX"]);
    assert_eq!(table_locks(&mut a, "dbo.h"), Vec::<String>::new());
    assert!(!waits(&mut b, "BEGIN TRAN; DROP TABLE dbo.h; ROLLBACK"));
    ok(&mut a, "ROLLBACK");
}

#[test]
fn a_failed_statement_gives_its_read_locks_back_and_ddl_keeps_its_own() {
    let (_dir, instance) = setup();
    let mut a = in_transaction(&instance, "");
    let out = run(&mut a, "SELECT 1 / (v - v) FROM dbo.t");
    assert_eq!(errors(&out), [8134], "{:?}", out.messages);
    assert_eq!(lock_count(&mut a), Value::Int(0));
    // A DDL statement that reads the table it changes keeps its X.
    ok(&mut a, "ALTER TABLE dbo.t ADD CONSTRAINT v_positive CHECK (v > 0)");
    assert_eq!(table_locks(&mut a, "dbo.t"), ["X"]);
    ok(&mut a, "SELECT * FROM dbo.t");
    assert_eq!(table_locks(&mut a, "dbo.t"), ["X"]);
    ok(&mut a, "ROLLBACK");
}

#[test]
fn procedures_triggers_and_cursors_give_back_what_their_statements_read() {
    let (_dir, instance) = setup();
    let mut setup_session = Session::new(Arc::clone(&instance));
    ok(
        &mut setup_session,
        "USE d; CREATE TABLE dbo.log (n INT); \
         EXEC ('CREATE PROCEDURE dbo.total AS SELECT SUM(v) FROM dbo.t'); \
         EXEC ('CREATE TRIGGER h_count ON dbo.h AFTER INSERT AS \
                INSERT INTO dbo.log SELECT COUNT(*) FROM dbo.t')",
    );
    let mut b = impatient(&instance);
    let mut a = in_transaction(&instance, "EXEC dbo.total");
    assert_eq!(lock_count(&mut a), Value::Int(0));
    // The trigger reads dbo.t: given back; the inserts keep their IX.
    ok(&mut a, "INSERT INTO dbo.h VALUES (4)");
    assert_eq!(table_locks(&mut a, "dbo.t"), Vec::<String>::new());
    assert_eq!(table_locks(&mut a, "dbo.h"), ["IX"]);
    assert_eq!(table_locks(&mut a, "dbo.log"), ["IX"]);
    assert!(!waits(&mut b, "BEGIN TRAN; ALTER TABLE dbo.t ADD x INT; ROLLBACK"));
    ok(&mut a, "COMMIT");

    // A cursor reads its rows at OPEN (every cursor is STATIC): its fetches and a
    // positioned change in later statements need no lock that OPEN took.
    let mut a =
        in_transaction(&instance, "DECLARE c CURSOR FOR SELECT k, v FROM dbo.t ORDER BY k; OPEN c");
    assert_eq!(lock_count(&mut a), Value::Int(0));
    ok(&mut b, "UPDATE dbo.t SET v = -1 WHERE k = 2");
    let fetched = ok(&mut a, "FETCH NEXT FROM c; FETCH NEXT FROM c");
    assert_eq!(fetched.results[1].rows[0], [Value::Int(2), Value::Int(20)], "as at OPEN");
    ok(&mut a, "UPDATE dbo.t SET v = 200 WHERE CURRENT OF c");
    assert_eq!(table_locks(&mut a, "dbo.t"), ["IX"]);
    assert!(waits(&mut b, "SELECT v FROM dbo.t WHERE k = 2"));
    ok(&mut a, "CLOSE c; DEALLOCATE c; COMMIT");
    assert_eq!(scalar(&mut b, "SELECT v FROM dbo.t WHERE k = 2"), Value::Int(200));
}

#[test]
fn a_dropped_and_recreated_table_is_read_anew_by_the_next_statement() {
    // The table lock no longer keeps the definition for the whole transaction: the next
    // statement takes its lock afresh and reads the table as it is then.
    let (_dir, instance) = setup();
    let mut a = in_transaction(&instance, "SELECT COUNT(*) FROM dbo.t");
    let mut b = impatient(&instance);
    ok(&mut b, "DROP TABLE dbo.t; CREATE TABLE dbo.t (k INT PRIMARY KEY, s VARCHAR(10))");
    ok(&mut b, "INSERT INTO dbo.t VALUES (7, 'seven')");
    assert_eq!(scalar(&mut a, "SELECT s FROM dbo.t WHERE k = 7"), Value::Str("seven".into()));
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM dbo.t"), Value::Int(1));
    ok(&mut a, "COMMIT");
}

#[test]
fn fmtonly_describes_a_table_another_transaction_holds_exclusively() {
    // mssql-jdbc's bulk copy asks for its target's columns with `SET FMTONLY ON SELECT *`,
    // which SQL Server answers without reading a row or waiting for a lock.
    let (_dir, instance) = setup();
    let mut a = in_transaction(&instance, "SELECT * FROM dbo.t WITH (TABLOCKX)");
    assert_eq!(table_locks(&mut a, "dbo.t"), ["X"]);
    let mut b = impatient(&instance);
    let out = ok(&mut b, "SET FMTONLY ON; SELECT * FROM dbo.t; SET FMTONLY OFF");
    let described = &out.results[0];
    let names: Vec<&str> = described.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["k", "v", "w"]);
    assert!(described.rows.is_empty());
    let out = ok(
        &mut b,
        "EXEC sp_executesql N'SET FMTONLY ON SELECT v FROM dbo.t WHERE k = 1 \
         SELECT COUNT(*) FROM dbo.t WHERE w = 2'; SET FMTONLY OFF",
    );
    assert_eq!(out.results.len(), 2);
    assert!(out.results.iter().all(|r| r.rows.is_empty()));
    assert!(waits(&mut b, "SELECT * FROM dbo.t"), "a real read still waits");
    ok(&mut a, "COMMIT");
    assert_eq!(scalar(&mut b, "SELECT COUNT(*) FROM dbo.t"), Value::Int(5));
}
