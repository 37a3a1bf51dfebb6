//! The plan cache (`exec::plan_cache`): a SELECT block over one table is planned once and its
//! plan reused by a loop's iterations and a procedure's calls (`sys.dm_exec_cached_plans`
//! counts the uses), and every change to what the plan used (an index made or dropped, a
//! column added, dropped or renamed, the table dropped and made again with other columns, a
//! temporary table made again with another shape, a view altered, another database) makes
//! it be planned again, so the statement keeps giving the right answer.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use walden_engine::types::Value;
use walden_sql::exec::Session;

use crate::support;
use support::{ok, run, scalar, session};

/// The most uses of any plan the session keeps.
fn most_uses(s: &mut Session) -> i64 {
    match scalar(s, "SELECT ISNULL(MAX(usecounts), 0) FROM sys.dm_exec_cached_plans") {
        Value::Int(n) => i64::from(n),
        other => panic!("usecounts: {other:?}"),
    }
}

/// The value the procedure `get` finds for key `k`.
fn get(s: &mut Session, k: i32) -> Value {
    scalar(s, &format!("DECLARE @v INT; EXEC get {k}, @v OUTPUT; SELECT @v"))
}

#[test]
fn a_loop_plans_its_lookup_once_and_reuses_it() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT NOT NULL)");
    ok(&mut s, "INSERT t SELECT value, value * 3 FROM GENERATE_SERIES(1, 500)");
    let sum = scalar(
        &mut s,
        "DECLARE @i INT = 0, @v INT, @s BIGINT = 0;
         WHILE @i < 300 BEGIN
           SELECT @v = v FROM t WHERE k = @i % 500 + 1;
           SET @s += @v; SET @i += 1;
         END;
         SELECT @s",
    );
    // 3 * (1 + ... + 300)
    assert_eq!(sum, Value::BigInt(3 * 300 * 301 / 2));
    assert!(most_uses(&mut s) >= 300, "{}", most_uses(&mut s));
    // Running the batch again reuses the same plan.
    ok(
        &mut s,
        "DECLARE @i INT = 0, @v INT, @s BIGINT = 0;
         WHILE @i < 300 BEGIN
           SELECT @v = v FROM t WHERE k = @i % 500 + 1;
           SET @s += @v; SET @i += 1;
         END;
         SELECT @s",
    );
    assert!(most_uses(&mut s) >= 600, "{}", most_uses(&mut s));
    ok(&mut s, "DBCC FREEPROCCACHE WITH NO_INFOMSGS");
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM sys.dm_exec_cached_plans"), Value::Int(0));
}

#[test]
fn a_variable_never_declared_is_still_error_137() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    let out = run(&mut s, "DECLARE @v INT; SELECT @v = v FROM t WHERE k = @nope");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), vec![137]);
    ok(&mut s, "INSERT t VALUES (1, 5)");
    let out = run(&mut s, "DECLARE @v INT; SELECT @v = v FROM t WHERE k = @nope");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), vec![137]);
}

#[test]
fn indexes_made_and_dropped_between_calls_keep_the_answer_right() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, c INT, v INT)");
    ok(&mut s, "INSERT t SELECT value, value % 50, value FROM GENERATE_SERIES(1, 400)");
    ok(
        &mut s,
        "CREATE PROCEDURE get @k INT, @v INT OUTPUT AS
         SELECT @v = MAX(v) FROM t WHERE c = @k;
         SELECT @v = v FROM t WHERE c = @k AND v = @v",
    );
    assert_eq!(get(&mut s, 7), Value::Int(357));
    ok(&mut s, "CREATE INDEX ix_c ON t (c)");
    assert_eq!(get(&mut s, 7), Value::Int(357));
    assert_eq!(get(&mut s, 8), Value::Int(358));
    ok(&mut s, "CREATE UNIQUE INDEX ix_v ON t (v) INCLUDE (c)");
    assert_eq!(get(&mut s, 9), Value::Int(359));
    ok(&mut s, "DROP INDEX ix_c ON t; DROP INDEX ix_v ON t");
    assert_eq!(get(&mut s, 9), Value::Int(359));
    ok(&mut s, "UPDATE t SET v = v + 1000 WHERE c = 9");
    assert_eq!(get(&mut s, 9), Value::Int(1359));
}

#[test]
fn columns_added_dropped_and_renamed_are_seen_at_the_next_call() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, a INT, v INT)");
    ok(&mut s, "INSERT t VALUES (1, 10, 100), (2, 20, 200)");
    ok(&mut s, "CREATE PROCEDURE get @k INT, @v INT OUTPUT AS SELECT @v = v FROM t WHERE k = @k");
    assert_eq!(get(&mut s, 2), Value::Int(200));
    // Dropping the column the plan reads: the call fails as SQL Server's does.
    ok(&mut s, "ALTER TABLE t DROP COLUMN v");
    let out = run(&mut s, "DECLARE @v INT; EXEC get 2, @v OUTPUT");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), vec![207]);
    // Added again, at another position, with other values.
    ok(&mut s, "ALTER TABLE t ADD v INT NULL");
    ok(&mut s, "UPDATE t SET v = a * 7");
    assert_eq!(get(&mut s, 2), Value::Int(140));
    // Renamed: `v` is now what `a` was.
    ok(&mut s, "EXEC sp_rename 't.v', 'old_v', 'COLUMN'");
    ok(&mut s, "EXEC sp_rename 't.a', 'v', 'COLUMN'");
    assert_eq!(get(&mut s, 2), Value::Int(20));
    ok(&mut s, "ALTER TABLE t DROP COLUMN old_v");
    assert_eq!(get(&mut s, 1), Value::Int(10));
}

#[test]
fn a_table_dropped_and_made_again_with_other_columns_is_planned_again() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t VALUES (1, 11), (2, 22)");
    ok(&mut s, "CREATE PROCEDURE get @k INT, @v INT OUTPUT AS SELECT @v = v FROM t WHERE k = @k");
    assert_eq!(get(&mut s, 1), Value::Int(11));
    ok(&mut s, "DROP TABLE t");
    ok(&mut s, "CREATE TABLE t (pad VARCHAR(20), v INT, note VARCHAR(10), k INT PRIMARY KEY)");
    ok(&mut s, "INSERT t VALUES ('x', 33, 'a', 1), ('y', 44, 'b', 2)");
    assert_eq!(get(&mut s, 1), Value::Int(33));
    assert_eq!(get(&mut s, 2), Value::Int(44));
    // A table renamed away and another renamed into its name.
    ok(&mut s, "CREATE TABLE t2 (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t2 VALUES (1, 55)");
    ok(&mut s, "EXEC sp_rename 't', 't_old'; EXEC sp_rename 't2', 't'");
    assert_eq!(get(&mut s, 1), Value::Int(55));
}

#[test]
fn a_temporary_table_of_another_shape_at_each_call_is_read_right() {
    let (_dir, mut s) = session();
    // The classic: the procedure reads its caller's #t, made anew with another shape.
    ok(&mut s, "CREATE PROCEDURE get @k INT, @v INT OUTPUT AS SELECT @v = v FROM #t WHERE k = @k");
    ok(&mut s, "CREATE TABLE #t (k INT PRIMARY KEY, v INT); INSERT #t VALUES (1, 10)");
    assert_eq!(get(&mut s, 1), Value::Int(10));
    ok(&mut s, "DROP TABLE #t");
    ok(
        &mut s,
        "CREATE TABLE #t (pad NVARCHAR(30), v INT, k INT PRIMARY KEY); \
         INSERT #t VALUES (N'x', 20, 1)",
    );
    assert_eq!(get(&mut s, 1), Value::Int(20));
    ok(&mut s, "DROP TABLE #t");
    // And procedures that each make their own #u, of their own shape, at each call, and
    // call one reader of it.
    ok(&mut s, "CREATE PROCEDURE read_u @v INT OUTPUT AS SELECT @v = v FROM #u WHERE k = 1");
    ok(
        &mut s,
        "CREATE PROCEDURE narrow @v INT OUTPUT AS
         CREATE TABLE #u (k INT PRIMARY KEY, v INT);
         INSERT #u VALUES (1, 42);
         EXEC read_u @v OUTPUT",
    );
    ok(
        &mut s,
        "CREATE PROCEDURE wide @v INT OUTPUT AS
         CREATE TABLE #u (a NVARCHAR(40), b INT, k INT PRIMARY KEY, v INT);
         INSERT #u (k, v) VALUES (1, 99);
         EXEC read_u @v OUTPUT",
    );
    for (which, want) in
        [("narrow", 42), ("narrow", 42), ("wide", 99), ("narrow", 42), ("wide", 99)]
    {
        let got = scalar(&mut s, &format!("DECLARE @v INT; EXEC {which} @v OUTPUT; SELECT @v"));
        assert_eq!(got, Value::Int(want), "{which}");
    }
}

#[test]
fn an_altered_view_gives_its_new_rows() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t VALUES (1, 5), (2, 6)");
    ok(&mut s, "CREATE VIEW w AS SELECT k, v FROM t");
    let read = "DECLARE @v INT; SELECT @v = v FROM w WHERE k = 2; SELECT @v";
    assert_eq!(scalar(&mut s, read), Value::Int(6));
    assert_eq!(scalar(&mut s, read), Value::Int(6));
    ok(&mut s, "ALTER VIEW w AS SELECT k, v * 10 AS v FROM t");
    assert_eq!(scalar(&mut s, read), Value::Int(60));
}

#[test]
fn the_same_text_in_another_database_reads_that_database() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE DATABASE a; CREATE DATABASE b");
    ok(&mut s, "CREATE TABLE a.dbo.t (k INT PRIMARY KEY, v INT); INSERT a.dbo.t VALUES (1, 1)");
    ok(
        &mut s,
        "CREATE TABLE b.dbo.t (x INT, k INT PRIMARY KEY, v INT); INSERT b.dbo.t VALUES (0, 1, 2)",
    );
    let read = "DECLARE @v INT; SELECT @v = v FROM t WHERE k = 1; SELECT @v";
    ok(&mut s, "USE a");
    assert_eq!(scalar(&mut s, read), Value::Int(1));
    assert_eq!(scalar(&mut s, read), Value::Int(1));
    ok(&mut s, "USE b");
    assert_eq!(scalar(&mut s, read), Value::Int(2));
}

#[test]
fn ddl_inside_the_loop_is_seen_by_the_next_iteration() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value FROM GENERATE_SERIES(1, 100)");
    let got = scalar(
        &mut s,
        "DECLARE @i INT = 0, @v INT, @s BIGINT = 0;
         WHILE @i < 6 BEGIN
           SELECT @v = v FROM t WHERE k = 10;
           SET @s = @s * 10 + @v % 10;
           IF @i = 1 CREATE INDEX ix ON t (v);
           IF @i = 2 EXEC ('DROP TABLE t; CREATE TABLE t (z INT, v INT, k INT PRIMARY KEY);
                           INSERT t VALUES (0, 3, 10)');
           IF @i = 4 UPDATE t SET v = 7;
           SET @i += 1;
         END;
         SELECT @s",
    );
    // 0 (10 % 10), 0, 0, 3, 3, 7
    assert_eq!(got, Value::BigInt(337));
}

#[test]
fn rolled_back_ddl_is_undone_for_the_plan_too() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t VALUES (1, 1)");
    ok(&mut s, "CREATE PROCEDURE get @k INT, @v INT OUTPUT AS SELECT @v = v FROM t WHERE k = @k");
    assert_eq!(get(&mut s, 1), Value::Int(1));
    ok(&mut s, "BEGIN TRAN; DROP TABLE t; CREATE TABLE t (x INT, v INT, k INT PRIMARY KEY)");
    ok(&mut s, "INSERT t VALUES (0, 2, 1)");
    assert_eq!(get(&mut s, 1), Value::Int(2));
    ok(&mut s, "ROLLBACK");
    assert_eq!(get(&mut s, 1), Value::Int(1));
}

#[test]
fn a_kept_plan_does_not_keep_its_database_in_use() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE DATABASE c");
    ok(&mut s, "USE c; CREATE TABLE t (k INT PRIMARY KEY, v INT); INSERT t VALUES (1, 1)");
    let read = "DECLARE @v INT; SELECT @v = v FROM t WHERE k = 1; SELECT @v";
    assert_eq!(scalar(&mut s, read), Value::Int(1));
    assert_eq!(scalar(&mut s, read), Value::Int(1));
    ok(&mut s, "USE master; DROP DATABASE c");
    // Made again under the same name, with another table: the old plan is not taken.
    ok(&mut s, "CREATE DATABASE c");
    ok(
        &mut s,
        "USE c; CREATE TABLE t (x INT, k INT PRIMARY KEY, v INT); INSERT t VALUES (0, 1, 2)",
    );
    assert_eq!(scalar(&mut s, read), Value::Int(2));
}

#[test]
fn sp_executesql_and_procedure_calls_reuse_their_plans() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT t SELECT value, value * 2 FROM GENERATE_SERIES(1, 50)");
    for k in 1..=20 {
        let got = scalar(
            &mut s,
            &format!("EXEC sp_executesql N'SELECT v FROM t WHERE k = @k', N'@k INT', @k = {k}"),
        );
        assert_eq!(got, Value::Int(2 * k));
    }
    assert!(most_uses(&mut s) >= 20, "{}", most_uses(&mut s));
    ok(&mut s, "DBCC FREEPROCCACHE WITH NO_INFOMSGS");
    ok(&mut s, "CREATE PROCEDURE get @k INT, @v INT OUTPUT AS SELECT @v = v FROM t WHERE k = @k");
    for k in 1..=20 {
        assert_eq!(get(&mut s, k), Value::Int(2 * k));
    }
    assert!(most_uses(&mut s) >= 20, "{}", most_uses(&mut s));
}

#[test]
fn one_off_batches_whose_trees_are_freed_never_take_each_others_plans() {
    // More distinct texts than the parse cache keeps: their syntax trees are freed and
    // new ones are made, often at the addresses of freed ones, and a plan is keyed by a
    // block's address. Each batch's own constants must still decide what it reads.
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT NOT NULL)");
    ok(&mut s, "INSERT t SELECT value, value * 7 FROM GENERATE_SERIES(1, 400)");
    for k in 1..=400 {
        let got = scalar(
            &mut s,
            &format!("DECLARE @v INT; SELECT @v = v FROM t WHERE k = {k}; SELECT @v"),
        );
        assert_eq!(got, Value::Int(7 * k), "key {k}");
    }
}

#[test]
fn a_block_made_again_by_a_rewrite_at_each_execution_reads_its_current_definition() {
    // A block read through a view is a copy the inlining makes at each execution (no parsed
    // node's identity): its plan is used only while the copy is equal to the one planned.
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE TABLE t (k INT PRIMARY KEY, v INT NOT NULL, w INT NOT NULL)");
    ok(&mut s, "INSERT t SELECT value, value, -value FROM GENERATE_SERIES(1, 100)");
    ok(&mut s, "CREATE VIEW vt AS SELECT k, v AS x FROM t");
    let sum = scalar(
        &mut s,
        "DECLARE @i INT = 1, @x INT, @s BIGINT = 0;
         WHILE @i <= 10 BEGIN
           SELECT @x = x FROM vt WHERE k = @i;
           SET @s += @x;
           IF @i = 5 EXEC ('ALTER VIEW vt AS SELECT k, w AS x FROM t');
           SET @i += 1;
         END;
         SELECT @s",
    );
    // 1 + ... + 5, then -(6 + ... + 10)
    assert_eq!(sum, Value::BigInt(15 - 40));
}
