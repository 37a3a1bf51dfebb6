//! READ COMMITTED with real sessions on one instance, around its lock avoidance (a read
//! skips its row S lock while no other transaction has a change in the tree it reads,
//! `docs/locking.md`): a reader never sees another transaction's uncommitted insert or
//! update and waits for it (1222 under `SET LOCK_TIMEOUT 0`), sees the change once it is
//! committed and the old row once it is rolled back; a reader with no writer about reads
//! without asking for row locks; no row lock outlives its read; and a reader racing writers
//! that only ever roll back their changes never sees one of them.
//!
//! And SERIALIZABLE's update locks: UPDATE and DELETE searching a key range take RangeS-U
//! on the keys they read, so two of them on the same range wait for each other instead of
//! deadlocking.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{errors, ok, read, reads_of, run, scalar};

/// An instance with database `d` and table `dbo.t` (k INT PRIMARY KEY, v INT, w INT with a
/// nonclustered index) holding keys 1..=`rows`, each with v = 10 * k and w = k.
fn setup(rows: i32) -> (tempfile::TempDir, Arc<Instance>) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d; \
         CREATE TABLE dbo.t (k INT PRIMARY KEY, v INT NOT NULL, w INT NOT NULL); \
         CREATE INDEX t_w ON dbo.t (w)",
    );
    ok(
        &mut s,
        &format!(
            "DECLARE @i INT = 1; WHILE @i <= {rows} BEGIN \
             INSERT INTO dbo.t VALUES (@i, 10 * @i, @i); SET @i += 1; END"
        ),
    );
    (dir, instance)
}

/// A session in database `d` that gives up on any lock it would have to wait for (1222).
fn impatient(instance: &Arc<Instance>) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, "USE d; SET TRANSACTION ISOLATION LEVEL READ COMMITTED; SET LOCK_TIMEOUT 0");
    s
}

/// A session in database `d` inside a transaction that has run `sql`.
fn open_writer(instance: &Arc<Instance>, sql: &str) -> Session {
    let mut s = Session::new(Arc::clone(instance));
    ok(&mut s, &format!("USE d; BEGIN TRAN; {sql}"));
    s
}

#[test]
fn an_uncommitted_insert_is_waited_for_and_seen_once_committed() {
    let (_dir, instance) = setup(50);
    let mut reader = impatient(&instance);
    for sql in reads_of(60) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Null), "{sql}");
    }
    let mut w = open_writer(&instance, "INSERT INTO dbo.t VALUES (60, 600, 60)");
    for sql in reads_of(60) {
        assert_eq!(read(&mut reader, &sql), Err(()), "{sql} waits for the insert");
    }
    // A read that does not reach the new row does not wait.
    assert_eq!(read(&mut reader, "SELECT v FROM dbo.t WHERE k = 7"), Ok(Value::Int(70)));
    ok(&mut w, "COMMIT");
    for sql in reads_of(60) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Int(600)), "{sql}");
    }
}

#[test]
fn an_uncommitted_update_is_waited_for_and_never_seen() {
    let (_dir, instance) = setup(50);
    let mut reader = impatient(&instance);
    let mut w = open_writer(&instance, "UPDATE dbo.t SET v = -1 WHERE k = 20");
    for sql in reads_of(20) {
        assert_eq!(read(&mut reader, &sql), Err(()), "{sql} waits for the update");
    }
    ok(&mut w, "ROLLBACK");
    for sql in reads_of(20) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Int(200)), "{sql}: rolled back");
    }
    ok(&mut w, "BEGIN TRAN; UPDATE dbo.t SET v = -2 WHERE k = 20");
    assert_eq!(read(&mut reader, &reads_of(20)[0]), Err(()));
    ok(&mut w, "COMMIT");
    for sql in reads_of(20) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Int(-2)), "{sql}: committed");
    }
}

#[test]
fn a_rolled_back_delete_leaves_the_row_and_a_committed_one_removes_it() {
    let (_dir, instance) = setup(50);
    let mut reader = impatient(&instance);
    let mut w = open_writer(&instance, "DELETE FROM dbo.t WHERE k = 30");
    // The deleted key is out of its trees, but noted as a ghost (docs/locking.md,
    // "Uncommitted deletes"): every read that would reach the row waits for the delete,
    // which may yet be rolled back, as SQL Server's readers wait on a ghost record.
    for sql in reads_of(30) {
        assert_eq!(read(&mut reader, &sql), Err(()), "{sql} waits for the delete");
    }
    assert_eq!(read(&mut reader, "SELECT COUNT(*) FROM dbo.t"), Err(()));
    assert_eq!(read(&mut reader, "SELECT COUNT(*) FROM dbo.t WHERE k > 30"), Ok(Value::Int(20)));
    let mut serializable = impatient(&instance);
    ok(&mut serializable, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
    let range = "SELECT COUNT(*) FROM dbo.t WHERE k BETWEEN 25 AND 35";
    assert_eq!(read(&mut serializable, range), Err(()), "a range over the ghost waits");
    let past = "SELECT COUNT(*) FROM dbo.t WITH (READPAST) WHERE k BETWEEN 25 AND 35";
    assert_eq!(read(&mut reader, past), Ok(Value::Int(10)), "READPAST passes it");
    ok(&mut w, "ROLLBACK");
    for sql in reads_of(30) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Int(300)), "{sql}: rolled back");
    }
    assert_eq!(read(&mut reader, "SELECT COUNT(*) FROM dbo.t"), Ok(Value::Int(50)));
    assert_eq!(read(&mut serializable, range), Ok(Value::Int(11)));
    // An update that moves a row's keys leaves ghosts of the old ones.
    ok(&mut w, "BEGIN TRAN; UPDATE dbo.t SET k = 1000, w = 1000 WHERE k = 30");
    for sql in reads_of(30) {
        assert_eq!(read(&mut reader, &sql), Err(()), "{sql} waits for the update");
    }
    ok(&mut w, "ROLLBACK");
    ok(&mut w, "BEGIN TRAN; DELETE FROM dbo.t WHERE k = 30; COMMIT");
    for sql in reads_of(30) {
        assert_eq!(read(&mut reader, &sql), Ok(Value::Null), "{sql}: deleted");
    }
    assert_eq!(read(&mut reader, "SELECT COUNT(*) FROM dbo.t"), Ok(Value::Int(49)));
}

#[test]
fn a_reader_with_no_writer_about_completes_without_row_locks() {
    let (_dir, instance) = setup(2000);
    let mut reader = impatient(&instance);
    let requests = || instance.locks().stats().requests;
    let before = requests();
    assert_eq!(read(&mut reader, "SELECT COUNT(*) FROM dbo.t"), Ok(Value::Int(2000)));
    assert_eq!(
        read(&mut reader, "SELECT SUM(v) FROM dbo.t WHERE k BETWEEN 101 AND 1100"),
        Ok(Value::Int(10 * (101..=1100).sum::<i32>()))
    );
    assert_eq!(
        read(&mut reader, "SELECT SUM(v) FROM dbo.t WHERE w BETWEEN 1 AND 1000"),
        Ok(Value::Int(10 * (1..=1000).sum::<i32>()))
    );
    // 4,000 rows read; what is left is the statements' database and table locks.
    let taken = requests() - before;
    assert!(taken < 100, "{taken} lock requests for 4,000 rows read");
    // A writer on another table does not change that.
    ok(&mut reader, "CREATE TABLE dbo.other (a INT PRIMARY KEY)");
    let _w = open_writer(&instance, "INSERT INTO dbo.other VALUES (1)");
    let before = requests();
    assert_eq!(read(&mut reader, "SELECT COUNT(*) FROM dbo.t"), Ok(Value::Int(2000)));
    let taken = requests() - before;
    assert!(taken < 100, "{taken} lock requests with a writer elsewhere");
}

#[test]
fn no_row_lock_outlives_its_read_with_or_without_a_writer() {
    let (_dir, instance) = setup(100);
    let mut reader = impatient(&instance);
    let key_locks = "SELECT COUNT(*) FROM sys.dm_tran_locks WHERE request_session_id = @@SPID \
                     AND resource_type = 'KEY'";
    ok(&mut reader, "BEGIN TRAN");
    // Without a writer the reads skip their locks; with one in the table they take them.
    for writer in [None, Some("UPDATE dbo.t SET v = 0 WHERE k = 100")] {
        let w = writer.map(|sql| open_writer(&instance, sql));
        for sql in [
            "SELECT COUNT(*) FROM dbo.t WHERE k < 100",
            "SELECT SUM(v) FROM dbo.t WHERE k BETWEEN 10 AND 60",
            "SELECT v FROM dbo.t WHERE k = 5",
            // A few rows of the index on w, sought (half the table would be scanned, and the
            // scan would wait for the writer's row).
            "SELECT SUM(v) FROM dbo.t WHERE w BETWEEN 1 AND 5",
        ] {
            assert!(read(&mut reader, sql).is_ok(), "{sql}");
            assert_eq!(scalar(&mut reader, key_locks), Value::Int(0), "after {sql}");
        }
        drop(w);
    }
    ok(&mut reader, "COMMIT");
}

#[test]
fn a_reader_sees_its_own_changes_under_a_scan() {
    // Its own uncommitted rows are the reader's to see, with or without the avoidance.
    let (_dir, instance) = setup(100);
    let mut s = impatient(&instance);
    ok(&mut s, "BEGIN TRAN; UPDATE dbo.t SET v = 1 WHERE k <= 50; DELETE FROM dbo.t WHERE k > 90");
    assert_eq!(
        read(&mut s, "SELECT SUM(v) FROM dbo.t"),
        Ok(Value::Int(50 + 10 * (51..=90).sum::<i32>()))
    );
    assert_eq!(read(&mut s, "SELECT v FROM dbo.t WHERE w = 3"), Ok(Value::Int(1)));
    ok(&mut s, "ROLLBACK");
    assert_eq!(
        read(&mut s, "SELECT SUM(v) FROM dbo.t"),
        Ok(Value::Int(10 * (1..=100).sum::<i32>()))
    );
}

#[test]
fn readers_racing_writers_never_see_an_uncommitted_change() {
    // Writers change rows to values no committed state has (v < 0, keys past 10,000) and
    // always roll back a few milliseconds later, or commit changes that keep every v >= 0;
    // readers scan, seek and look up over and over, waiting for locks as READ COMMITTED
    // does. (With the writers' check of lock avoidance broken, the readers see their rows.)
    let (_dir, instance) = setup(600);
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|n| {
            let instance = Arc::clone(&instance);
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut s = Session::new(instance);
                ok(&mut s, "USE d");
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    let k = (i * 37 + n * 300) % 600 + 1;
                    let sql = if i % 3 == 0 {
                        format!("BEGIN TRAN; UPDATE dbo.t SET v = v + 1 WHERE k = {k}; COMMIT")
                    } else {
                        format!(
                            "BEGIN TRAN; UPDATE dbo.t SET v = -v - 1 WHERE k = {k}; \
                             INSERT INTO dbo.t VALUES ({}, -5, {k}); \
                             WAITFOR DELAY '00:00:00.003'; ROLLBACK",
                            10_000 + k
                        )
                    };
                    let out = run(&mut s, &sql);
                    // A deadlock victim is the only failure a writer may meet.
                    assert!(errors(&out).iter().all(|&e| e == 1205), "{sql}: {:?}", out.messages);
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|n| {
            let instance = Arc::clone(&instance);
            thread::spawn(move || {
                let mut s = Session::new(instance);
                ok(&mut s, "USE d");
                for i in 0..60 {
                    let k = (i * 53 + n * 7) % 600 + 1;
                    let sql = format!(
                        "SELECT (SELECT COUNT(*) FROM dbo.t WHERE v < 0 OR k > 600), \
                         (SELECT COUNT(*) FROM dbo.t WHERE k BETWEEN {k} AND {k} + 100 \
                          AND (v < 0 OR k > 600)), \
                         (SELECT COUNT(*) FROM dbo.t WHERE w = {k} AND v < 0)"
                    );
                    let out = ok(&mut s, &sql);
                    let zero = vec![Value::Int(0); 3];
                    assert_eq!(out.results[0].rows[0], zero, "{sql}");
                }
            })
        })
        .collect();
    for r in readers {
        r.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
}

#[test]
fn serializable_updaters_of_one_range_take_range_s_u_and_wait_for_each_other() {
    let (_dir, instance) = setup(50);
    let mut a = Session::new(Arc::clone(&instance));
    ok(
        &mut a,
        "USE d; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRAN; \
         UPDATE dbo.t SET v = v + 1 WHERE k BETWEEN 10 AND 20 AND v > 150",
    );
    let out = ok(
        &mut a,
        "SELECT request_mode, COUNT(*) FROM sys.dm_tran_locks \
         WHERE request_session_id = @@SPID AND resource_type = 'KEY' GROUP BY request_mode \
         ORDER BY request_mode",
    );
    let text = |s: &str| Value::NStr(s.into());
    // Keys 10..=15 read and not changed, and the key past the range (21), hold RangeS-U;
    // the five changed hold RangeX-X.
    assert_eq!(
        out.results[0].rows,
        vec![vec![text("RangeS-U"), Value::Int(7)], vec![text("RangeX-X"), Value::Int(5)]]
    );
    // A reader of the range is compatible with RangeS-U but not with the changed keys.
    let mut reader = impatient(&instance);
    assert_eq!(read(&mut reader, "SELECT v FROM dbo.t WHERE k = 12"), Ok(Value::Int(120)));
    assert_eq!(read(&mut reader, "SELECT v FROM dbo.t WHERE k = 17"), Err(()));
    ok(&mut a, "ROLLBACK");

    // Two updaters of one range: each reads the range, then changes it. With shared range
    // locks both would read, and each would wait for the other to convert (a deadlock);
    // with RangeS-U the second waits at its first key until the first commits.
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let instance = Arc::clone(&instance);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let mut s = Session::new(instance);
                ok(&mut s, "USE d; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
                let mut found = Vec::new();
                for round in 0..20 {
                    barrier.wait();
                    let out = run(
                        &mut s,
                        "BEGIN TRAN; \
                         UPDATE dbo.t SET v = v + 1 WHERE k BETWEEN 30 AND 40; \
                         DELETE FROM dbo.t WHERE k BETWEEN 41 AND 42 AND v < 0; \
                         UPDATE dbo.t SET v = v - 1 WHERE k BETWEEN 30 AND 40; \
                         COMMIT",
                    );
                    found.push((round, errors(&out)));
                }
                found
            })
        })
        .collect();
    for h in handles {
        for (round, errs) in h.join().unwrap() {
            assert!(errs.is_empty(), "round {round}: {errs:?}");
        }
    }
    let mut s = Session::new(instance);
    assert_eq!(
        scalar(&mut s, "USE d; SELECT SUM(v) FROM dbo.t WHERE k BETWEEN 30 AND 42"),
        Value::Int(10 * (30..=42).sum::<i32>())
    );
}
