//! `sys.dm_exec_query_stats` and `sys.dm_exec_procedure_stats`: what DBA scripts ("top
//! queries by CPU", sp_BlitzCache) and BenchBase's monitor read to find the statements that
//! cost the most, server-wide.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::{SqlType, Value};
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::sysviews::ServerCounters;
use walden_sql::exec::{CallArgument, CallTarget, CallValue, Collected, Session};

use crate::support::{ok, rows_text, scalar};

/// Two sessions of one instance reporting to one server's counters, as the server's do.
fn two_sessions() -> (tempfile::TempDir, Session, Session) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let counters = Arc::new(ServerCounters::default());
    let a = Session::with_counters(Arc::clone(&instance), Arc::clone(&counters));
    let b = Session::with_counters(instance, counters);
    (dir, a, b)
}

/// The statement text a row's offsets pick out of its handle's text, as every script
/// reading the view does.
const TOP_STATEMENTS: &str = "
    SELECT SUBSTRING(st.text, (qs.statement_start_offset / 2) + 1,
               ((CASE qs.statement_end_offset WHEN -1 THEN DATALENGTH(st.text)
                 ELSE qs.statement_end_offset END - qs.statement_start_offset) / 2) + 1)
               AS statement_text,
           qs.execution_count, qs.total_rows, qs.last_rows, qs.total_logical_reads,
           qs.total_worker_time, qs.total_elapsed_time, qs.min_elapsed_time, qs.max_elapsed_time
    FROM sys.dm_exec_query_stats AS qs
    CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) AS st
    CROSS APPLY sys.dm_exec_query_plan(qs.plan_handle) AS qp
    WHERE st.text NOT LIKE '%dm_exec_query_stats%'
    ORDER BY statement_text";

fn int(v: &str) -> i64 {
    v.trim_start_matches(|c: char| c.is_alphabetic() || c == '(')
        .trim_end_matches(')')
        .parse()
        .unwrap()
}

#[test]
fn one_text_from_two_sessions_is_one_row_per_statement() {
    let (_dir, mut a, mut b) = two_sessions();
    ok(
        &mut a,
        "CREATE TABLE dbo.t (id INT PRIMARY KEY, v INT);
         INSERT dbo.t SELECT value, value % 10 FROM GENERATE_SERIES(1, 500)",
    );
    let batch = "SELECT COUNT(*) FROM dbo.t WHERE v = 3;\nUPDATE dbo.t SET v = v WHERE id <= 7";
    ok(&mut a, batch);
    ok(&mut b, batch);
    ok(&mut b, batch);
    let rows = rows_text(&mut a, TOP_STATEMENTS);
    let mine: Vec<_> = rows.iter().filter(|r| !r[0].contains("GENERATE_SERIES")).collect();
    assert_eq!(mine.len(), 2, "{rows:?}");
    assert_eq!(mine[0][0], "NStr(\"SELECT COUNT(*) FROM dbo.t WHERE v = 3\")");
    assert_eq!(mine[1][0], "NStr(\"UPDATE dbo.t SET v = v WHERE id <= 7\")");
    for r in &mine {
        assert_eq!(int(&r[1]), 3, "{r:?}");
        // The scan reads pages; the times are microseconds, the least at most the greatest.
        assert!(int(&r[4]) > 0, "{r:?}");
        assert!(int(&r[5]) >= 0 && int(&r[6]) > 0, "{r:?}");
        assert!(int(&r[7]) <= int(&r[8]), "{r:?}");
        // Worker time is CPU time: never more than the elapsed time.
        assert!(int(&r[5]) <= int(&r[6]), "{r:?}");
    }
    // A SELECT's rows are the rows it returned; an UPDATE's the rows it changed.
    assert_eq!((int(&mine[0][2]), int(&mine[0][3])), (3, 1));
    assert_eq!((int(&mine[1][2]), int(&mine[1][3])), (21, 7));
}

#[test]
fn a_parameterized_statement_is_counted_under_its_parameters_and_text() {
    let (_dir, mut a, mut b) = two_sessions();
    ok(
        &mut a,
        "CREATE TABLE dbo.t (id INT PRIMARY KEY, v INT); INSERT dbo.t VALUES (1, 10), (2, 20)",
    );
    // An RPC of a prepared statement, as JDBC sends one, from both sessions...
    for (on_b, id) in [(false, 1), (true, 2), (true, 1)] {
        let s = if on_b { &mut b } else { &mut a };
        let target = CallTarget::Statement {
            params: Arc::from("@P0 int"),
            text: Arc::from("SELECT v FROM dbo.t WHERE id = @P0"),
        };
        let argument = CallArgument {
            name: None,
            variable: "@P0".into(),
            value: CallValue::Value(Value::Int(id)),
            ty: SqlType::Int,
            declared: None,
            output: false,
        };
        let mut out = Collected::default();
        let shown = "(@P0 int)SELECT v FROM dbo.t WHERE id = @P0";
        s.execute_call(shown, &target, vec![argument], &mut out).unwrap();
        assert_eq!(out.results[0].rows.len(), 1);
    }
    // ...and the same statement by EXEC sp_executesql is the same text.
    ok(&mut a, "EXEC sp_executesql N'SELECT v FROM dbo.t WHERE id = @P0', N'@P0 int', 2");
    let rows = rows_text(
        &mut a,
        "SELECT st.text, qs.execution_count, qs.statement_start_offset, qs.statement_end_offset
         FROM sys.dm_exec_query_stats qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) st
         WHERE st.text LIKE '(@P0%'",
    );
    assert_eq!(
        rows,
        vec![vec![
            "NStr(\"(@P0 int)SELECT v FROM dbo.t WHERE id = @P0\")".to_string(),
            "BigInt(4)".into(),
            // Bytes of UTF-16: the statement starts after `(@P0 int)` and its last
            // character is the text's last.
            "Int(18)".into(),
            "Int(84)".into(),
        ]]
    );
}

#[test]
fn a_procedure_is_counted_with_its_statements_under_its_definition() {
    let (_dir, mut a, _b) = two_sessions();
    ok(
        &mut a,
        "CREATE TABLE dbo.t (id INT PRIMARY KEY, v INT);
         INSERT dbo.t VALUES (1, 10), (2, 20)",
    );
    ok(
        &mut a,
        "CREATE PROCEDURE dbo.bump @id INT AS
         BEGIN
             SET NOCOUNT ON;
             UPDATE dbo.t SET v = v + 1 WHERE id = @id;
             SELECT v FROM dbo.t WHERE id = @id;
         END",
    );
    for _ in 0..3 {
        ok(&mut a, "EXEC dbo.bump 1");
    }
    let rows = rows_text(
        &mut a,
        "SELECT OBJECT_NAME(ps.object_id), ps.type, ps.type_desc, ps.execution_count,
                (SELECT t.objectid FROM sys.dm_exec_sql_text(ps.sql_handle) t) - ps.object_id,
                (SELECT COUNT(*) FROM sys.dm_exec_query_plan(ps.plan_handle))
         FROM sys.dm_exec_procedure_stats ps WHERE ps.database_id = DB_ID()",
    );
    assert_eq!(
        rows,
        vec![vec![
            "NStr(\"bump\")".to_string(),
            "Str(\"P \")".into(),
            "NStr(\"SQL_STORED_PROCEDURE\")".into(),
            "BigInt(3)".into(),
            "Int(0)".into(),
            "Int(1)".into(),
        ]]
    );
    let statements = rows_text(
        &mut a,
        "SELECT SUBSTRING(st.text, (qs.statement_start_offset / 2) + 1,
                   ((qs.statement_end_offset - qs.statement_start_offset) / 2) + 1),
               qs.execution_count, OBJECT_NAME(st.objectid, st.dbid)
         FROM sys.dm_exec_query_stats qs CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) st
         WHERE st.objectid IS NOT NULL ORDER BY qs.statement_start_offset",
    );
    assert_eq!(
        statements,
        vec![
            vec![
                "NStr(\"UPDATE dbo.t SET v = v + 1 WHERE id = @id\")".to_string(),
                "BigInt(3)".into(),
                "NStr(\"bump\")".into(),
            ],
            vec![
                "NStr(\"SELECT v FROM dbo.t WHERE id = @id\")".to_string(),
                "BigInt(3)".into(),
                "NStr(\"bump\")".into(),
            ],
        ]
    );
}

#[test]
fn freeproccache_forgets_the_counts_and_the_store_stays_bounded() {
    let (_dir, mut a, mut b) = two_sessions();
    ok(&mut a, "CREATE TABLE dbo.t (id INT PRIMARY KEY)");
    // Six thousand distinct statements: more than the store keeps.
    for i in 0..6_000 {
        ok(&mut b, &format!("SELECT id FROM dbo.t WHERE id = {i}"));
    }
    let counted = scalar(&mut a, "SELECT COUNT(*) FROM sys.dm_exec_query_stats");
    let Value::Int(counted) = counted else { panic!("{counted:?}") };
    assert!((3_000..=5_000).contains(&counted), "{counted}");
    // The most recent are the ones kept.
    let last = scalar(
        &mut a,
        "SELECT COUNT(*) FROM sys.dm_exec_query_stats qs
         CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) st
         WHERE st.text = 'SELECT id FROM dbo.t WHERE id = 5999'",
    );
    assert_eq!(last, Value::Int(1));
    ok(&mut a, "DBCC FREEPROCCACHE WITH NO_INFOMSGS");
    let left = scalar(
        &mut a,
        "SELECT COUNT(*) FROM sys.dm_exec_query_stats qs
         CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) st WHERE st.text LIKE 'SELECT id%'",
    );
    assert_eq!(left, Value::Int(0));
}

/// A request's `sql_handle` names its text, so scripts join the running requests to the
/// statements' counters.
#[test]
fn a_running_requests_handle_is_its_texts_handle_in_the_counters() {
    let (_dir, mut a, _b) = two_sessions();
    ok(&mut a, "CREATE TABLE dbo.t (id INT PRIMARY KEY)");
    let batch = "SELECT COUNT(*) FROM sys.dm_exec_requests r
                 JOIN sys.dm_exec_query_stats qs ON qs.sql_handle = r.sql_handle
                 WHERE r.session_id = @@SPID";
    ok(&mut a, batch);
    assert_eq!(scalar(&mut a, batch), Value::Int(1));
}
