//! Deferred commits (`walden_engine::deferred_commit`): the autocommit transactions of a
//! session whose server has turned `set_defer_commits` on commit without waiting for their
//! log flush, and keep their locks until the session hardens them. Other sessions wait for
//! such a commit's rows (inserted, updated or deleted) as for an uncommitted change and see
//! them once hardened; the session itself goes on past its own deferred commits (row locks,
//! table locks, DDL) while another session's table lock waits for them; a session that waits
//! for them never deadlocks their owner; and what was hardened survives a restart.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{errors, ok, read, reads_of, run, scalar};

/// Database `d` with table `dbo.t` (k INT PRIMARY KEY, v INT, w INT with a nonclustered
/// index) holding keys 1..=20, v = 10 * k, w = k.
fn setup(path: &std::path::Path) -> Arc<Instance> {
    let instance = Instance::open(path, InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d; \
         CREATE TABLE dbo.t (k INT PRIMARY KEY, v INT NOT NULL, w INT NOT NULL); \
         CREATE INDEX t_w ON dbo.t (w); \
         DECLARE @i INT = 1; WHILE @i <= 20 BEGIN \
         INSERT INTO dbo.t VALUES (@i, 10 * @i, @i); SET @i += 1; END",
    );
    instance
}

/// A session in `d` whose autocommit transactions are deferred.
fn deferring(instance: &Arc<Instance>) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, "USE d");
    s.set_defer_commits(true);
    s
}

/// A session in `d` that gives up on any lock it would have to wait for (1222).
fn impatient(instance: &Arc<Instance>) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, "USE d; SET LOCK_TIMEOUT 0");
    s
}

#[test]
fn other_sessions_wait_for_a_deferred_commit_until_it_is_hardened() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut writer = deferring(&instance);
    ok(&mut writer, "INSERT INTO dbo.t VALUES (60, 600, 60)");
    ok(&mut writer, "UPDATE dbo.t SET v = -1 WHERE k = 5");
    ok(&mut writer, "DELETE FROM dbo.t WHERE k = 7");
    assert_eq!(scalar(&mut writer, "SELECT @@TRANCOUNT"), Value::Int(0));
    let deferred = writer.deferred_commits();
    assert!(!deferred.settled(), "three commits wait for their flush");

    let mut reader = impatient(&instance);
    for k in [60, 5, 7] {
        for sql in reads_of(k) {
            assert_eq!(read(&mut reader, &sql), Err(()), "{sql} waits for the deferred commit");
        }
    }
    // A row no deferred commit touched is read at once.
    assert_eq!(read(&mut reader, "SELECT v FROM dbo.t WHERE k = 3"), Ok(Value::Int(30)));

    deferred.harden().unwrap();
    assert!(deferred.settled());
    for sql in reads_of(60) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Int(600)), "{sql}");
    }
    for sql in reads_of(5) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Int(-1)), "{sql}");
    }
    for sql in reads_of(7) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Null), "{sql}: deleted");
    }
}

#[test]
fn the_session_goes_on_past_its_own_deferred_commits() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut writer = deferring(&instance);
    ok(&mut writer, "SET LOCK_TIMEOUT 0; INSERT INTO dbo.t VALUES (60, 600, 60)");
    // Its own next statements need the locks its deferred commit holds: they are given up
    // (the commit hardened) instead of waited for, so even LOCK_TIMEOUT 0 does not fail.
    ok(&mut writer, "UPDATE dbo.t SET v = 601 WHERE k = 60");
    ok(&mut writer, "SELECT * FROM dbo.t WITH (UPDLOCK, HOLDLOCK) WHERE k = 60");
    assert_eq!(scalar(&mut writer, "SELECT v FROM dbo.t WHERE k = 60"), Value::Int(601));
    writer.deferred_commits().harden().unwrap();
    let mut reader = impatient(&instance);
    assert_eq!(read(&mut reader, "SELECT v FROM dbo.t WHERE k = 60"), Ok(Value::Int(601)));
}

#[test]
fn a_session_waiting_for_a_deferred_commit_does_not_deadlock_its_owner() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut owner = deferring(&instance);
    ok(&mut owner, "SET LOCK_TIMEOUT 20000; UPDATE dbo.t SET v = 1 WHERE k = 1");
    // The other session holds key 2 and then waits for key 1, which the deferred commit
    // holds; the owner then asks for key 2. Had the owner waited with key 1 still held,
    // neither could go on (and nothing would tell the deadlock detector).
    let mut other = Session::new(Arc::clone(&instance));
    ok(&mut other, "USE d; SET LOCK_TIMEOUT 20000; BEGIN TRAN; UPDATE dbo.t SET v = 2 WHERE k = 2");
    let waiter = thread::spawn(move || {
        let out = run(&mut other, "UPDATE dbo.t SET v = 3 WHERE k = 1; COMMIT");
        errors(&out)
    });
    // Let the other session's request for key 1 queue behind the deferred commit.
    thread::sleep(Duration::from_millis(200));
    let out = run(&mut owner, "UPDATE dbo.t SET v = 4 WHERE k = 2");
    assert_eq!(errors(&out), Vec::<i32>::new(), "{:?}", out.messages);
    assert_eq!(waiter.join().unwrap(), Vec::<i32>::new());
    owner.deferred_commits().harden().unwrap();
    let mut reader = impatient(&instance);
    assert_eq!(read(&mut reader, "SELECT v FROM dbo.t WHERE k = 1"), Ok(Value::Int(3)));
    assert_eq!(read(&mut reader, "SELECT v FROM dbo.t WHERE k = 2"), Ok(Value::Int(4)));
}

#[test]
fn hardened_deferred_commits_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let instance = setup(dir.path());
        let mut writer = deferring(&instance);
        for k in 100..150 {
            ok(&mut writer, &format!("INSERT INTO dbo.t VALUES ({k}, {k}, {k})"));
        }
        writer.deferred_commits().harden().unwrap();
    }
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    assert_eq!(scalar(&mut s, "USE d; SELECT COUNT(*) FROM dbo.t WHERE k >= 100"), Value::Int(50));
}

#[test]
fn table_locks_and_ddl_pass_the_sessions_own_deferred_commits_and_wait_for_anothers() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut writer = deferring(&instance);
    ok(&mut writer, "SET LOCK_TIMEOUT 0");
    for k in 100..130 {
        ok(&mut writer, &format!("INSERT INTO dbo.t VALUES ({k}, {k}, {k})"));
    }
    // Another session's table lock waits for the deferred commits' intent locks.
    let mut other = impatient(&instance);
    assert_eq!(read(&mut other, "SELECT COUNT(*) FROM dbo.t WITH (TABLOCKX)"), Err(()));
    // The session's own table lock and DDL give them up instead of waiting.
    assert_eq!(scalar(&mut writer, "SELECT COUNT(*) FROM dbo.t WITH (TABLOCKX)"), Value::Int(50));
    ok(&mut writer, "INSERT INTO dbo.t VALUES (130, 130, 130)");
    ok(&mut writer, "ALTER TABLE dbo.t ADD z INT NULL");
    ok(&mut writer, "INSERT INTO dbo.t (k, v, w) VALUES (131, 131, 131)");
    ok(&mut writer, "TRUNCATE TABLE dbo.t");
    ok(&mut writer, "INSERT INTO dbo.t (k, v, w) VALUES (132, 132, 132)");
    ok(&mut writer, "DROP TABLE dbo.t");
    writer.deferred_commits().harden().unwrap();
    assert_eq!(
        read(&mut other, "SELECT COUNT(*) FROM sys.tables WHERE name = 't'"),
        Ok(Value::Int(0))
    );
}
