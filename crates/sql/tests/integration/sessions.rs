//! Several sessions on one instance: isolation, lock timeouts (1222), deadlock victims
//! (1205), and a session that goes on after each.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Barrier};
use std::thread;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{restart, run, scalar};

fn setup() -> (tempfile::TempDir, Arc<Instance>) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(
        &mut s,
        "CREATE DATABASE d; USE d; CREATE TABLE dbo.t (id INT PRIMARY KEY, v INT NOT NULL);
         INSERT INTO dbo.t VALUES (1, 10), (2, 20);",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    (dir, instance)
}

#[test]
fn uncommitted_changes_are_invisible_and_block_readers_until_the_timeout() {
    let (_dir, instance) = setup();
    let mut a = Session::new(Arc::clone(&instance));
    let mut b = Session::new(Arc::clone(&instance));
    run(&mut a, "USE d; BEGIN TRAN; UPDATE dbo.t SET v = 11 WHERE id = 1;");
    let out = run(
        &mut b,
        "USE d; SET LOCK_TIMEOUT 100; SELECT v FROM dbo.t WHERE id = 1; SELECT 'went on' AS x",
    );
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert_eq!(numbers, vec![1222], "{:?}", out.messages);
    assert_eq!(out.results.last().unwrap().rows[0][0], Value::Str("went on".into()));
    run(&mut a, "ROLLBACK");
    assert_eq!(scalar(&mut b, "SELECT v FROM dbo.t WHERE id = 1"), Value::Int(10));
}

#[test]
fn a_scan_blocked_by_a_change_that_is_rolled_back_returns_the_committed_rows() {
    // The scan copies its batch of rows (the uncommitted 11 among them), waits for the row's
    // lock, and must not return the copy once the change is undone.
    let (_dir, instance) = setup();
    let mut a = Session::new(Arc::clone(&instance));
    run(&mut a, "USE d; BEGIN TRAN; UPDATE dbo.t SET v = 11 WHERE id = 1;");
    let reader = {
        let instance = Arc::clone(&instance);
        thread::spawn(move || {
            let mut b = Session::new(instance);
            scalar(&mut b, "USE d; SELECT SUM(v) FROM dbo.t")
        })
    };
    let mut watcher = Session::new(Arc::clone(&instance));
    for _ in 0..500 {
        let waiting = scalar(
            &mut watcher,
            "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE request_status = 'WAIT'",
        );
        if waiting != Value::Int(0) {
            break;
        }
        thread::sleep(std::time::Duration::from_millis(10));
    }
    run(&mut a, "ROLLBACK");
    assert_eq!(reader.join().unwrap(), Value::Int(30));
}

#[test]
fn a_deadlock_makes_one_session_the_victim_and_both_go_on() {
    let (_dir, instance) = setup();
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = [(1, 2), (2, 1)]
        .into_iter()
        .map(|(first, second)| {
            let instance = Arc::clone(&instance);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let mut s = Session::new(instance);
                run(&mut s, &format!("USE d; BEGIN TRAN; UPDATE dbo.t SET v = v + 1 WHERE id = {first};"));
                barrier.wait();
                let out = run(
                    &mut s,
                    &format!("UPDATE dbo.t SET v = v + 1 WHERE id = {second}; IF @@TRANCOUNT > 0 COMMIT;"),
                );
                let errors: Vec<i32> = out.errors().map(|e| e.number).collect();
                let after = scalar(&mut s, "SELECT @@TRANCOUNT");
                (errors, after)
            })
        })
        .collect();
    let results: Vec<(Vec<i32>, Value)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let victims = results.iter().filter(|(e, _)| e == &vec![1205]).count();
    let winners = results.iter().filter(|(e, _)| e.is_empty()).count();
    assert_eq!((victims, winners), (1, 1), "{results:?}");
    // Both sessions end with no open transaction: the victim's was rolled back.
    assert!(results.iter().all(|(_, t)| *t == Value::Int(0)), "{results:?}");
    let mut s = Session::new(instance);
    assert_eq!(scalar(&mut s, "USE d; SELECT SUM(v) FROM dbo.t"), Value::Int(32));
}

#[test]
fn temporary_tables_belong_to_their_session_and_vanish_with_it() {
    let (_dir, instance) = setup();
    let mut a = Session::new(Arc::clone(&instance));
    let mut b = Session::new(Arc::clone(&instance));
    run(&mut a, "CREATE TABLE #mine (x INT); INSERT INTO #mine VALUES (1)");
    let out = run(&mut b, "SELECT * FROM #mine");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), vec![208]);
    run(&mut b, "CREATE TABLE #mine (y INT)");
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM #mine"), Value::Int(1));
    let before = instance.tempdb().catalog().objects().len();
    a.close();
    assert_eq!(instance.tempdb().catalog().objects().len(), before - 1);
}

#[test]
fn a_dropped_session_rolls_its_transaction_back() {
    let (_dir, instance) = setup();
    {
        let mut a = Session::new(Arc::clone(&instance));
        run(&mut a, "USE d; BEGIN TRAN; INSERT INTO dbo.t VALUES (3, 30)");
    }
    let mut b = Session::new(instance);
    assert_eq!(
        scalar(&mut b, "USE d; SET LOCK_TIMEOUT 1000; SELECT COUNT(*) FROM dbo.t"),
        Value::Int(2)
    );
}

#[test]
fn a_clustered_index_built_on_a_heap_survives_a_restart_and_keeps_equal_keys_apart() {
    let (dir, instance) = setup();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(
        &mut s,
        "USE d; CREATE TABLE dbo.h (k INT, v INT); INSERT INTO dbo.h VALUES (2, 1), (1, 2), (2, 3);
         CREATE CLUSTERED INDEX h_k ON dbo.h (k); INSERT INTO dbo.h VALUES (2, 4);",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);

    let (instance, mut s) = restart(dir.path(), s, instance);
    // After the restart the uniquifier counter starts above every stored one, so more equal
    // keys are new rows rather than duplicate-key errors or overwrites.
    let out = run(&mut s, "USE d; INSERT INTO dbo.h VALUES (2, 5), (2, 6), (1, 7);");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let rows = run(&mut s, "SELECT k, v FROM dbo.h").results.pop().unwrap().rows;
    let got: Vec<(Value, Value)> = rows.into_iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    let keys: Vec<&Value> = got.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            &Value::Int(1),
            &Value::Int(1),
            &Value::Int(2),
            &Value::Int(2),
            &Value::Int(2),
            &Value::Int(2),
            &Value::Int(2)
        ]
    );
    let mut values: Vec<i32> = got
        .iter()
        .map(|(_, v)| match v {
            Value::Int(i) => *i,
            other => panic!("{other:?}"),
        })
        .collect();
    values.sort_unstable();
    assert_eq!(values, [1, 2, 3, 4, 5, 6, 7]);
    s.close();
    instance.close().unwrap();
}

#[test]
fn concurrent_increments_are_never_lost() {
    let (_dir, instance) = setup();
    const THREADS: usize = 4;
    const EACH: i32 = 150;
    let start = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (instance, start) = (Arc::clone(&instance), Arc::clone(&start));
            thread::spawn(move || {
                let mut s = Session::new(instance);
                run(&mut s, "USE d");
                start.wait();
                for _ in 0..EACH {
                    // Each UPDATE reads v under its exclusive row lock, so no increment can
                    // overwrite another one committed since the statement's scan.
                    let out = run(&mut s, "UPDATE dbo.t SET v = v + 1 WHERE id = 1");
                    assert!(out.errors().next().is_none(), "{:?}", out.messages);
                }
                s.close();
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut s = Session::new(Arc::clone(&instance));
    run(&mut s, "USE d");
    assert_eq!(
        scalar(&mut s, "SELECT v FROM dbo.t WHERE id = 1"),
        Value::Int(10 + THREADS as i32 * EACH)
    );
    s.close();
}

#[test]
fn reading_a_row_it_changed_keeps_the_transactions_exclusive_lock() {
    let (_dir, instance) = setup();
    let mut writer = Session::new(Arc::clone(&instance));
    let mut reader = Session::new(Arc::clone(&instance));
    run(&mut reader, "USE d; SET LOCK_TIMEOUT 200");
    // A READ COMMITTED read gives back the shared lock it takes, but must not give back the
    // exclusive lock the UPDATE took before it.
    let out = run(
        &mut writer,
        "USE d; BEGIN TRAN; UPDATE dbo.t SET v = 99 WHERE id = 1; \
         SELECT v FROM dbo.t WHERE id = 1; SELECT v FROM dbo.t",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    for query in ["SELECT v FROM dbo.t WHERE id = 1", "SELECT v FROM dbo.t"] {
        let out = run(&mut reader, query);
        let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
        assert_eq!(numbers, [1222], "{query}: the uncommitted 99 must stay invisible");
    }
    run(&mut writer, "ROLLBACK");
    assert_eq!(scalar(&mut reader, "SELECT v FROM dbo.t WHERE id = 1"), Value::Int(10));
    writer.close();
    reader.close();
}

/// Lock escalation never gives up a row's X lock for less: a transaction that changed a row
/// and then reads past the escalation threshold on the same table escalates to a table X
/// lock (SIX would let other sessions read its uncommitted change).
#[test]
fn escalation_after_a_write_keeps_the_change_invisible() {
    let (_dir, instance) = setup();
    let mut a = Session::new(Arc::clone(&instance));
    let mut b = Session::new(Arc::clone(&instance));
    let out = run(
        &mut a,
        "USE d; DECLARE @i INT = 3; WHILE @i <= 6000 BEGIN INSERT INTO dbo.t VALUES (@i, @i); \
         SET @i += 1 END;",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    run(
        &mut a,
        "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRAN; \
         UPDATE dbo.t SET v = 11 WHERE id = 1; DECLARE @i INT = 2, @v INT; \
         WHILE @i <= 6000 BEGIN SELECT @v = v FROM dbo.t WHERE id = @i; SET @i += 1 END;",
    );
    let out = run(&mut b, "USE d; SET LOCK_TIMEOUT 100; SELECT v FROM dbo.t WHERE id = 1");
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert_eq!(numbers, vec![1222], "read {:?}", out.results);
    run(&mut a, "ROLLBACK");
    assert_eq!(scalar(&mut b, "SELECT v FROM dbo.t WHERE id = 1"), Value::Int(10));
}

#[test]
fn dm_tran_locks_shows_who_holds_and_who_waits() {
    let (_dir, instance) = setup();
    let mut a = Session::new(Arc::clone(&instance));
    let out = run(&mut a, "USE d; BEGIN TRAN; UPDATE dbo.t SET v = 11 WHERE id = 1;");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let a_spid = scalar(&mut a, "SELECT @@SPID");
    let waiter = {
        let instance = Arc::clone(&instance);
        thread::spawn(move || {
            let mut b = Session::new(instance);
            let spid = scalar(&mut b, "SELECT @@SPID");
            let v = scalar(&mut b, "USE d; SELECT v FROM dbo.t WHERE id = 1");
            (spid, v)
        })
    };
    let mut watcher = Session::new(Arc::clone(&instance));
    let query = "SELECT request_session_id, resource_type, request_mode, request_status, \
                 resource_database_id, request_owner_type \
                 FROM sys.dm_tran_locks WHERE resource_type IN ('OBJECT', 'KEY') \
                 ORDER BY request_session_id, resource_type DESC";
    // Wait until the reader is queued behind the writer's key lock.
    let mut rows = Vec::new();
    for _ in 0..200 {
        let out = run(&mut watcher, query);
        assert!(out.errors().next().is_none(), "{:?}", out.messages);
        rows = out.results[0].rows.clone();
        if rows.iter().any(|r| r[3] == Value::NStr("WAIT".into())) {
            break;
        }
        thread::sleep(std::time::Duration::from_millis(10));
    }
    let Value::SmallInt(a_spid) = a_spid else { panic!("@@SPID is {a_spid:?}") };
    let a_id = Value::Int(a_spid.into());
    let d_id = scalar(&mut watcher, "SELECT DB_ID('d')");
    let Value::Int(d_id) = d_id else { panic!("DB_ID is {d_id:?}") };
    let text = |s: &str| Value::NStr(s.into());
    let mine: Vec<&Vec<Value>> = rows.iter().filter(|r| r[0] == a_id).collect();
    assert_eq!(mine.len(), 2, "{rows:?}");
    assert_eq!(mine[0][1..4], [text("OBJECT"), text("IX"), text("GRANT")], "{rows:?}");
    assert_eq!(mine[1][1..4], [text("KEY"), text("X"), text("GRANT")], "{rows:?}");
    assert!(mine.iter().all(|r| r[4] == Value::Int(d_id) && r[5] == text("TRANSACTION")));
    let waiting: Vec<&Vec<Value>> = rows.iter().filter(|r| r[3] == text("WAIT")).collect();
    assert_eq!(waiting.len(), 1, "{rows:?}");
    assert_eq!(waiting[0][1..3], [text("KEY"), text("S")], "{rows:?}");

    run(&mut a, "COMMIT");
    let (b_spid, v) = waiter.join().unwrap();
    assert_eq!(v, Value::Int(11));
    let Value::SmallInt(b_spid) = b_spid else { panic!("@@SPID is {b_spid:?}") };
    assert_eq!(waiting[0][0], Value::Int(b_spid.into()));
}

#[test]
fn dm_exec_requests_shows_the_blocked_request_and_its_blocker() {
    let (_dir, instance) = setup();
    let counters = Arc::new(walden_sql::exec::sysviews::ServerCounters::default());
    let session = || Session::with_counters(Arc::clone(&instance), Arc::clone(&counters));
    let mut a = session();
    let out = run(&mut a, "USE d; BEGIN TRAN; UPDATE dbo.t SET v = 12 WHERE id = 1;");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let Value::SmallInt(a_spid) = scalar(&mut a, "SELECT @@SPID") else { panic!("no @@SPID") };
    let mut b = session();
    let Value::SmallInt(b_spid) = scalar(&mut b, "SELECT @@SPID") else { panic!("no @@SPID") };
    let waiter = thread::spawn(move || scalar(&mut b, "USE d; SELECT v FROM dbo.t WHERE id = 1"));

    let mut watcher = session();
    let query = format!(
        "SELECT r.status, r.command, r.blocking_session_id, r.wait_type, r.wait_time, \
         r.wait_resource, DB_NAME(r.database_id) FROM sys.dm_exec_requests r \
         WHERE r.session_id = {b_spid}"
    );
    let mut row = Vec::new();
    for _ in 0..300 {
        let out = run(&mut watcher, &query);
        assert!(out.errors().next().is_none(), "{:?}", out.messages);
        if let Some(r) = out.results[0].rows.first() {
            row = r.clone();
            if row[0] == Value::NStr("suspended".into()) {
                break;
            }
        }
        thread::sleep(std::time::Duration::from_millis(10));
    }
    let text = |s: &str| Value::NStr(s.into());
    assert_eq!(
        row[..4],
        [text("suspended"), text("SELECT"), Value::SmallInt(a_spid), text("LCK_M_S")]
    );
    assert!(matches!(row[4], Value::Int(ms) if ms >= 0), "{row:?}");
    assert!(matches!(&row[5], Value::NStr(s) if s.starts_with("KEY: ")), "{row:?}");
    assert_eq!(row[6], text("d"));

    // The system procedures over the same views.
    let out = run(&mut watcher, &format!("EXEC sp_who {b_spid}"));
    let who = &out.results[0];
    let names: Vec<&str> = who.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["spid", "ecid", "status", "loginame", "hostname", "blk", "dbname", "cmd", "request_id"]
    );
    assert_eq!(who.rows.len(), 1, "{who:?}");
    assert_eq!(who.rows[0][5], Value::Str(format!("{a_spid:<5}")), "blk: {who:?}");
    let out = run(&mut watcher, "EXEC sp_who2");
    let blocked: Vec<&Vec<Value>> =
        out.results[0].rows.iter().filter(|r| r[0] == Value::Str(format!("{b_spid:<5}"))).collect();
    assert_eq!(blocked.len(), 1, "{:?}", out.results);
    assert_eq!(
        blocked[0][1..5],
        [
            Value::Str("SUSPENDED".into()),
            text("sa"),
            text("localhost"),
            Value::Str(format!("{a_spid:<5}"))
        ]
    );
    let out = run(&mut watcher, &format!("EXEC sp_lock {a_spid}"));
    let locks = &out.results[0].rows;
    assert!(
        locks.iter().any(|r| r[4] == text("KEY ") && r[6] == text("X") && r[7] == text("GRANT")),
        "{locks:?}"
    );

    // The sessions view: the holder sleeps with its transaction open; the watcher runs.
    let out = run(
        &mut watcher,
        &format!(
            "SELECT session_id, status, open_transaction_count, login_name, DB_NAME(database_id) \
             FROM sys.dm_exec_sessions WHERE session_id IN ({a_spid}, @@SPID) ORDER BY session_id"
        ),
    );
    let rows = &out.results[0].rows;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0][1..], [text("sleeping"), Value::Int(1), text("sa"), text("d")]);
    assert_eq!(rows[1][1], text("running"));

    run(&mut a, "COMMIT");
    assert_eq!(waiter.join().unwrap(), Value::Int(12));
    drop(a);
    let out = run(
        &mut watcher,
        &format!("SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE session_id = {a_spid}"),
    );
    assert_eq!(out.results[0].rows[0][0], Value::Int(0), "a closed session is gone");
}

#[test]
fn dbcc_opentran_and_the_dm_tran_views_show_user_and_autocommit_transactions() {
    let (_dir, instance) = setup();
    let counters = Arc::new(walden_sql::exec::sysviews::ServerCounters::default());
    let session = || Session::with_counters(Arc::clone(&instance), Arc::clone(&counters));
    let mut watcher = session();
    let out = run(&mut watcher, "DBCC OPENTRAN ('d')");
    assert_eq!(out.messages[0].message, "No active open transactions.", "{:?}", out.messages);

    // A user transaction holds row 2; an autocommit INSERT adds row 3, then waits for key 2
    // with its first row logged (and fails on the duplicate key once it gets it).
    let mut a = session();
    let out = run(&mut a, "USE d; BEGIN TRAN holder; UPDATE dbo.t SET v = 21 WHERE id = 2;");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let Value::SmallInt(a_spid) = scalar(&mut a, "SELECT @@SPID") else { panic!("no @@SPID") };
    let mut b = session();
    let Value::SmallInt(b_spid) = scalar(&mut b, "SELECT @@SPID") else { panic!("no @@SPID") };
    let inserter =
        thread::spawn(move || run(&mut b, "USE d; INSERT INTO dbo.t VALUES (3, 30), (2, 20)"));

    let sessions = "SELECT s.session_id, s.is_user_transaction, a.name, a.transaction_type \
                    FROM sys.dm_tran_session_transactions s \
                    JOIN sys.dm_tran_active_transactions a ON a.transaction_id = s.transaction_id \
                    ORDER BY s.session_id";
    let mut rows = Vec::new();
    for _ in 0..300 {
        rows = run(&mut watcher, sessions).results[0].rows.clone();
        if rows.len() == 2 {
            break;
        }
        thread::sleep(std::time::Duration::from_millis(10));
    }
    let text = |s: &str| Value::NStr(s.into());
    assert_eq!(
        rows,
        vec![
            vec![Value::Int(a_spid.into()), Value::Bit(true), text("holder"), Value::Int(1)],
            vec![Value::Int(b_spid.into()), Value::Bit(false), text("INSERT"), Value::Int(1)],
        ]
    );
    let out = run(
        &mut watcher,
        "SELECT COUNT(*) FROM sys.dm_tran_database_transactions WHERE database_id = DB_ID('d')",
    );
    assert_eq!(out.results[0].rows[0][0], Value::Int(2));

    // The oldest is the user transaction, which logged first.
    let out = run(&mut watcher, "DBCC OPENTRAN ('d') WITH TABLERESULTS, NO_INFOMSGS");
    let props: Vec<(Value, Value)> =
        out.results[0].rows.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    let prop = |name: &str| {
        props.iter().find(|(p, _)| *p == Value::Str(name.into())).map(|(_, v)| v.clone())
    };
    assert_eq!(prop("OLDACT_SPID"), Some(Value::Str(a_spid.to_string())), "{props:?}");
    assert_eq!(prop("OLDACT_NAME"), Some(Value::Str("holder".into())), "{props:?}");

    run(&mut a, "COMMIT");
    let out = inserter.join().unwrap();
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), [2627], "{:?}", out.messages);
    let out = run(&mut watcher, "SELECT COUNT(*) FROM sys.dm_tran_active_transactions");
    assert_eq!(out.results[0].rows[0][0], Value::Int(0));
    let out = run(&mut watcher, "DBCC OPENTRAN ('d')");
    assert_eq!(out.messages[0].message, "No active open transactions.", "{:?}", out.messages);
}

#[test]
fn kill_ends_a_lock_wait_of_a_session_without_a_client_cancel_signal() {
    let (_dir, instance) = setup();
    let counters = Arc::new(walden_sql::exec::sysviews::ServerCounters::default());
    let session = || Session::with_counters(Arc::clone(&instance), Arc::clone(&counters));
    let mut holder = session();
    run(&mut holder, "USE d; BEGIN TRAN; UPDATE dbo.t SET v = 13 WHERE id = 1;");
    let mut waiter = session();
    let Value::SmallInt(spid) = scalar(&mut waiter, "SELECT @@SPID") else { panic!("@@SPID") };
    // No lock timeout: only KILL can end this wait.
    let waiting =
        thread::spawn(move || run(&mut waiter, "USE d; SELECT v FROM dbo.t WHERE id = 1"));
    let mut killer = session();
    for _ in 0..300 {
        let out = run(
            &mut killer,
            &format!("SELECT COUNT(*) FROM sys.dm_exec_requests WHERE session_id = {spid} AND status = 'suspended'"),
        );
        if out.results[0].rows[0][0] == Value::Int(1) {
            break;
        }
        thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = run(&mut killer, &format!("KILL {spid}"));
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !waiting.is_finished() && std::time::Instant::now() < deadline {
        thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(waiting.is_finished(), "KILL ended the lock wait");
    let out = waiting.join().unwrap();
    assert!(out.results.iter().all(|r| r.rows.is_empty()), "the SELECT never ran: {out:?}");
    run(&mut holder, "ROLLBACK");
}

#[test]
fn concurrent_sessions_firing_an_audit_trigger_lose_no_audit_row() {
    let (_dir, instance) = setup();
    let mut s = Session::new(Arc::clone(&instance));
    for batch in [
        "USE d; CREATE TABLE dbo.audit (id INT, old_v INT, new_v INT, spid INT)",
        "CREATE TRIGGER t_audit ON dbo.t AFTER INSERT, UPDATE AS SET NOCOUNT ON; \
         INSERT dbo.audit SELECT i.id, d.v, i.v, @@SPID FROM inserted AS i \
         LEFT JOIN deleted AS d ON d.id = i.id",
    ] {
        let out = run(&mut s, batch);
        assert!(out.errors().next().is_none(), "{batch}: {:?}", out.messages);
    }
    const THREADS: usize = 4;
    const EACH: i32 = 40;
    let start = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|n| {
            let (instance, start) = (Arc::clone(&instance), Arc::clone(&start));
            thread::spawn(move || {
                let mut s = Session::new(instance);
                run(&mut s, "USE d");
                start.wait();
                for k in 0..EACH {
                    // Each session inserts rows of its own and bumps the shared row, every
                    // statement firing the trigger, whose inserted/deleted live in tempdb.
                    let id = 1000 + n as i32 * EACH + k;
                    let sql = format!(
                        "INSERT dbo.t VALUES ({id}, 0); UPDATE dbo.t SET v = v + 1 WHERE id = 1"
                    );
                    let out = run(&mut s, &sql);
                    assert!(out.errors().next().is_none(), "{:?}", out.messages);
                }
                s.close();
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let total = THREADS as i32 * EACH;
    assert_eq!(
        scalar(&mut s, "SELECT COUNT(*) FROM dbo.audit WHERE id >= 1000"),
        Value::Int(total)
    );
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM dbo.audit WHERE id = 1"), Value::Int(total));
    // Every increment saw the value the previous one left: the audit rows of row 1 chain.
    assert_eq!(
        scalar(
            &mut s,
            "SELECT COUNT(*) FROM dbo.audit AS a JOIN dbo.audit AS b \
             ON b.id = 1 AND b.old_v = a.new_v WHERE a.id = 1"
        ),
        Value::Int(total - 1)
    );
    assert_eq!(scalar(&mut s, "SELECT v FROM dbo.t WHERE id = 1"), Value::Int(10 + total));
    // No pseudo-table was left behind in tempdb.
    assert_eq!(
        scalar(&mut s, "SELECT COUNT(*) FROM tempdb.sys.objects WHERE name LIKE '#inserted%' OR name LIKE '#deleted%'"),
        Value::Int(0)
    );
    s.close();
}

#[test]
fn application_locks_exclude_other_sessions_until_released_or_the_session_ends() {
    let (_dir, instance) = setup();
    let mut a = Session::new(Arc::clone(&instance));
    let mut b = Session::new(Arc::clone(&instance));
    let take = |s: &mut Session, mode: &str, owner: &str, timeout: i32| {
        scalar(
            s,
            &format!(
                "USE d; DECLARE @r INT; EXEC @r = sp_getapplock @Resource = N'nightly job', \
                 @LockMode = '{mode}', @LockOwner = '{owner}', @LockTimeout = {timeout}; SELECT @r"
            ),
        )
    };
    assert_eq!(take(&mut a, "Exclusive", "Session", 0), Value::Int(0));
    // Another session times out (-1) rather than fails; the name is case-sensitive.
    assert_eq!(take(&mut b, "Shared", "Session", 50), Value::Int(-1));
    assert_eq!(
        scalar(&mut b, "SELECT APPLOCK_TEST('public', N'nightly job', 'Shared', 'Session')"),
        Value::Int(0)
    );
    assert_eq!(
        scalar(
            &mut b,
            "DECLARE @r INT; EXEC @r = sp_getapplock N'Nightly Job', 'Exclusive', 'Session', 0; \
             SELECT @r"
        ),
        Value::Int(0)
    );
    // A waiting session is granted (1) once the holder releases.
    let waiter = {
        let instance = Arc::clone(&instance);
        thread::spawn(move || {
            let mut c = Session::new(instance);
            let r = scalar(
                &mut c,
                "USE d; BEGIN TRAN; DECLARE @r INT; EXEC @r = sp_getapplock N'nightly job', \
                 'Exclusive', 'Transaction', 10000; SELECT @r",
            );
            let mode =
                scalar(&mut c, "SELECT APPLOCK_MODE('public', N'nightly job', 'Transaction')");
            run(&mut c, "COMMIT");
            (r, mode)
        })
    };
    thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(
        scalar(
            &mut a,
            "DECLARE @r INT; EXEC @r = sp_releaseapplock N'nightly job', 'Session'; SELECT @r"
        ),
        Value::Int(0)
    );
    let (r, mode) = waiter.join().unwrap();
    assert_eq!((r, mode), (Value::Int(1), Value::NStr("Exclusive".into())));
    // The transaction's lock went with its commit; a session's goes when the session ends.
    assert_eq!(take(&mut a, "Exclusive", "Session", 0), Value::Int(0));
    drop(a);
    assert_eq!(take(&mut b, "Exclusive", "Session", 0), Value::Int(0));
}

#[test]
fn a_foreign_key_check_waits_for_the_referenced_row_another_session_deletes() {
    let (_dir, instance) = setup();
    let mut a = Session::new(Arc::clone(&instance));
    let mut b = Session::new(Arc::clone(&instance));
    let out = run(
        &mut a,
        "USE d; CREATE TABLE dbo.child (id INT PRIMARY KEY, t_id INT REFERENCES dbo.t (id));",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    // Session a deletes the parent row but has not committed: b's insert must wait for it,
    // then fail, rather than trust a row that is going away.
    run(&mut a, "BEGIN TRAN; DELETE dbo.t WHERE id = 2;");
    let out = run(&mut b, "USE d; SET LOCK_TIMEOUT 100; INSERT dbo.child VALUES (1, 2);");
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert_eq!(numbers, vec![1222], "{:?}", out.messages);
    run(&mut a, "COMMIT");
    let out = run(&mut b, "INSERT dbo.child VALUES (1, 2);");
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert_eq!(numbers, vec![547], "{:?}", out.messages);
    // And a delete of a parent waits for a child another session inserted, then fails.
    run(&mut b, "BEGIN TRAN; INSERT dbo.child VALUES (2, 1);");
    let out = run(&mut a, "SET LOCK_TIMEOUT 100; DELETE dbo.t WHERE id = 1;");
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert_eq!(numbers, vec![1222], "{:?}", out.messages);
    run(&mut b, "COMMIT");
    let out = run(&mut a, "DELETE dbo.t WHERE id = 1;");
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert_eq!(numbers, vec![547], "{:?}", out.messages);
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM dbo.child"), Value::Int(1));
}

#[test]
fn foreign_keys_computed_rowversion_columns_and_properties_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(
        &mut s,
        "CREATE DATABASE r; USE r;
         CREATE TABLE dbo.p (id INT PRIMARY KEY);
         CREATE TABLE dbo.c (id INT PRIMARY KEY, p_id INT REFERENCES dbo.p (id) ON DELETE CASCADE,
             qty INT NOT NULL, twice AS (qty * 2) PERSISTED, rv ROWVERSION);
         INSERT p VALUES (1), (2); INSERT c (id, p_id, qty) VALUES (10, 1, 5), (20, 2, 6);
         EXEC sp_addextendedproperty 'MS_Description', N'children', 'SCHEMA', 'dbo', 'TABLE', 'c', 'COLUMN', 'qty';
         CREATE TABLE dbo.d (dt DATETIMEOFFSET(3) PRIMARY KEY, v SQL_VARIANT);
         INSERT d VALUES ('2024-03-01 08:30:00.125 +02:00', CAST(2.5 AS DECIMAL(4,2)));",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let before = scalar(&mut s, "SELECT @@DBTS");
    let (_instance, mut s) = restart(dir.path(), s, instance);
    run(&mut s, "USE r");
    let out = run(&mut s, "INSERT c (id, p_id, qty) VALUES (30, 9, 1)");
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert_eq!(numbers, vec![547], "{:?}", out.messages);
    run(&mut s, "UPDATE c SET qty = 50 WHERE id = 10");
    assert_eq!(scalar(&mut s, "SELECT twice FROM c WHERE id = 10"), Value::Int(100));
    let (Value::Binary(old), Value::Binary(new)) =
        (before, scalar(&mut s, "SELECT rv FROM c WHERE id = 10"))
    else {
        panic!("row versions are binary")
    };
    assert!(new > old, "a version after the restart, {new:?}, is not above {old:?}");
    run(&mut s, "DELETE p WHERE id = 2");
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM c"), Value::Int(1));
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM sys.foreign_keys"), Value::Int(1));
    assert_eq!(
        scalar(
            &mut s,
            "SELECT CAST(value AS NVARCHAR(20)) FROM sys.extended_properties WHERE minor_id = 3"
        ),
        Value::NStr("children".into())
    );
    assert_eq!(
        scalar(&mut s, "SELECT DATEPART(hour, dt) * 100000 + DATEPART(ms, dt) * 1000 + DATEPART(tz, dt) FROM d"),
        Value::Int(8 * 100000 + 125 * 1000 + 120)
    );
    assert_eq!(
        scalar(&mut s, "SELECT SQL_VARIANT_PROPERTY(v, 'BaseType') FROM d WHERE dt = '2024-03-01T06:30:00.125Z'"),
        Value::NStr("decimal".into())
    );
}
