//! `INSERT ... SELECT` whose source streams into its table (`dml/insert_stream.rs`), and
//! `SELECT DISTINCT` over a join hashed as the join makes its rows: both past a memory
//! workspace far smaller than their source, with every semantic of the collected source
//! kept (widths, constraints and the statement's rollback, OUTPUT, triggers, identity,
//! TOP, ORDER BY) and a source that reads its own target still collected first.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{configure_query_memory, CancelSignal, QueryMemoryConfig, Session};

use crate::support;
use support::{errors, ok, run, scalar};

/// A session of an instance with 16 MB of buffer pool and grants of up to 6 MB, in a
/// database with a numbers table `n` (0 to 99).
fn small_workspace() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = InstanceConfig::default();
    config.database.pool.frames = 2048;
    let instance = Instance::open(dir.path(), config).unwrap();
    configure_query_memory(&instance, QueryMemoryConfig { max_query_memory_bytes: Some(6 << 20) });
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d;
         CREATE TABLE dbo.n (i INT NOT NULL);
         WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
         INSERT INTO dbo.n SELECT i FROM n;",
    );
    (dir, s)
}

/// 100,000 rows of three numbers tables cross joined (the third cut to 10 values): as a
/// collected source, far more than the 6 MB grant holds.
const CROSS: &str = "FROM dbo.n a CROSS JOIN dbo.n b CROSS JOIN dbo.n c WHERE c.i < 10";

/// The brief's statement, over a recursive CTE rather than a table.
const CTE_INSERT: &str = "
    WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
    INSERT INTO dbo.r SELECT a.i * 1000 + b.i * 10 + c.i, c.i
    FROM n a CROSS JOIN n b CROSS JOIN n c WHERE c.i < 10;
    SELECT @@ROWCOUNT;";

fn int(v: Value) -> i64 {
    match v {
        Value::Int(n) => n.into(),
        Value::BigInt(n) => n,
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_insert_of_a_join_past_the_workspace_streams_into_its_table() {
    let (_dir, mut s) = small_workspace();
    ok(&mut s, "CREATE TABLE dbo.r (id INT PRIMARY KEY, c INT NOT NULL);");
    assert_eq!(int(scalar(&mut s, CTE_INSERT)), 100_000);
    let check = "SELECT COUNT(*), SUM(CAST(id AS BIGINT)), COUNT(DISTINCT c), MIN(id), MAX(id),
                        SUM(CASE WHEN id % 10 = c THEN 1 ELSE 0 END) FROM dbo.r";
    let got = ok(&mut s, check).results.last().unwrap().rows[0].clone();
    // Every id a * 1000 + b * 10 + c once: 100 * 100 * 10 distinct values.
    let sum: i64 = (0..100i64)
        .flat_map(|a| (0..100i64).flat_map(move |b| (0..10i64).map(move |c| a * 1000 + b * 10 + c)))
        .sum();
    let want =
        [100_000, sum, 10, 0, 99 * 1000 + 99 * 10 + 9, 100_000].map(|n| int(Value::BigInt(n)));
    assert_eq!(got.into_iter().map(int).collect::<Vec<_>>(), want);
    // A heap, from tables rather than a CTE.
    ok(&mut s, "CREATE TABLE dbo.h (id INT NOT NULL, c INT NOT NULL);");
    let out =
        ok(&mut s, &format!("INSERT INTO dbo.h SELECT a.i * 1000 + b.i * 10 + c.i, c.i {CROSS}"));
    assert_eq!(out.counts.last(), Some(&100_000));
    let same = "SELECT COUNT(*) FROM dbo.h h JOIN dbo.r r ON r.id = h.id AND r.c = h.c";
    assert_eq!(int(scalar(&mut s, same)), 100_000);
}

#[test]
fn a_failing_row_in_the_middle_of_a_streamed_insert_leaves_the_table_as_it_was() {
    let (_dir, mut s) = small_workspace();
    ok(
        &mut s,
        "CREATE TABLE dbo.r (id INT PRIMARY KEY, c INT NOT NULL CHECK (c < 9));
         INSERT INTO dbo.r VALUES (-1, 0), (-2, 1), (-3, 2);",
    );
    // Rows of c = 9 come once thousands of others are in.
    let insert = format!("INSERT INTO dbo.r SELECT a.i * 1000 + b.i * 10 + c.i, c.i {CROSS}");
    assert_eq!(errors(&run(&mut s, &insert)), vec![547]);
    assert_eq!(int(scalar(&mut s, "SELECT COUNT(*) FROM dbo.r")), 3);
    // Inside a transaction: the statement's rows go, the transaction and its rows stay.
    let batch = format!(
        "BEGIN TRAN; INSERT INTO dbo.r VALUES (-4, 3);
         {insert};
         SELECT @@TRANCOUNT, COUNT(*) FROM dbo.r;"
    );
    let out = run(&mut s, &batch);
    assert_eq!(errors(&out), vec![547]);
    let row = &out.results.last().unwrap().rows[0];
    assert_eq!((int(row[0].clone()), int(row[1].clone())), (1, 4));
    ok(&mut s, "COMMIT;");
    // A duplicate key late in the source: the same.
    let dup = "INSERT INTO dbo.r SELECT CASE WHEN a.i = 90 THEN -1 ELSE a.i * 1000 + b.i END, 0
               FROM dbo.n a CROSS JOIN dbo.n b";
    assert_eq!(errors(&run(&mut s, dup)), vec![2627]);
    assert_eq!(int(scalar(&mut s, "SELECT COUNT(*) FROM dbo.r")), 4);
}

#[test]
fn a_streamed_source_of_the_wrong_width_inserts_nothing() {
    let (_dir, mut s) = small_workspace();
    ok(&mut s, "CREATE TABLE dbo.r (id INT NOT NULL, c INT NOT NULL);");
    let narrow = "INSERT INTO dbo.r SELECT a.i FROM dbo.n a CROSS JOIN dbo.n b";
    assert_eq!(errors(&run(&mut s, narrow)), vec![213]);
    let listed = "INSERT INTO dbo.r (id, c) SELECT a.i FROM dbo.n a CROSS JOIN dbo.n b";
    assert_eq!(errors(&run(&mut s, listed)), vec![120]);
    let one = "INSERT INTO dbo.r (id) SELECT a.i, a.i FROM dbo.n a";
    assert_eq!(errors(&run(&mut s, one)), vec![120]);
    assert_eq!(int(scalar(&mut s, "SELECT COUNT(*) FROM dbo.r")), 0);
}

#[test]
fn output_and_a_trigger_see_every_streamed_row() {
    let (_dir, mut s) = small_workspace();
    ok(
        &mut s,
        "CREATE TABLE dbo.r (id INT PRIMARY KEY, c INT NOT NULL);
         CREATE TABLE dbo.log (n INT, total BIGINT);",
    );
    ok(
        &mut s,
        "CREATE TRIGGER dbo.r_ins ON dbo.r AFTER INSERT AS
           INSERT INTO dbo.log SELECT COUNT(*), SUM(CAST(id AS BIGINT)) FROM inserted;",
    );
    let out = ok(
        &mut s,
        "DECLARE @o TABLE (id INT);
         INSERT INTO dbo.r OUTPUT inserted.id INTO @o
         SELECT a.i * 100 + b.i, b.i FROM dbo.n a CROSS JOIN dbo.n b WHERE a.i < 50;
         SELECT COUNT(*), SUM(id) FROM @o;",
    );
    let row = &out.results.last().unwrap().rows[0];
    let total: i64 = (0..5000).sum();
    assert_eq!((int(row[0].clone()), int(row[1].clone())), (5000, total));
    let log = ok(&mut s, "SELECT n, total FROM dbo.log").results.last().unwrap().rows.clone();
    assert_eq!(log, vec![vec![Value::Int(5000), Value::BigInt(total)]]);
    // OUTPUT to the client (which a table with an enabled trigger refuses, 334): one row
    // per inserted row.
    ok(&mut s, "DISABLE TRIGGER dbo.r_ins ON dbo.r;");
    let out = ok(
        &mut s,
        "INSERT INTO dbo.r OUTPUT inserted.c SELECT 10000 + a.i * 100 + b.i, 7
         FROM dbo.n a CROSS JOIN dbo.n b WHERE a.i < 3",
    );
    let rows = &out.results.last().unwrap().rows;
    assert_eq!(rows.len(), 300);
    assert!(rows.iter().all(|r| r[0] == Value::Int(7)));
}

#[test]
fn identity_defaults_top_and_order_by_hold_for_a_streamed_source() {
    let (_dir, mut s) = small_workspace();
    ok(
        &mut s,
        "CREATE TABLE dbo.r (id INT IDENTITY PRIMARY KEY, v INT NOT NULL,
                             tag VARCHAR(10) NOT NULL DEFAULT 'x');",
    );
    let out = ok(
        &mut s,
        "INSERT TOP (500) INTO dbo.r (v) SELECT a.i * 100 + b.i FROM dbo.n a CROSS JOIN dbo.n b;
         SELECT @@ROWCOUNT, SCOPE_IDENTITY();",
    );
    let row = &out.results.last().unwrap().rows[0];
    assert_eq!(int(row[0].clone()), 500);
    assert_eq!(
        format!("{:?}", row[1]),
        format!("{:?}", scalar(&mut s, "SELECT CAST(500 AS NUMERIC(38, 0))"))
    );
    let tags = "SELECT COUNT(*), MIN(id), MAX(id) FROM dbo.r WHERE tag = 'x'";
    let row = ok(&mut s, tags).results.last().unwrap().rows[0].clone();
    assert_eq!(row.into_iter().map(int).collect::<Vec<_>>(), vec![500, 1, 500]);
    // ORDER BY numbers the identity in its order.
    ok(
        &mut s,
        "TRUNCATE TABLE dbo.r;
         INSERT INTO dbo.r (v) SELECT a.i * 100 + b.i FROM dbo.n a CROSS JOIN dbo.n b
         ORDER BY a.i * 100 + b.i DESC;",
    );
    let misordered = "SELECT COUNT(*) FROM dbo.r WHERE v <> 10000 - id";
    assert_eq!(int(scalar(&mut s, misordered)), 0);
    // SET ROWCOUNT stops the read too.
    let out = ok(
        &mut s,
        "SET ROWCOUNT 7; INSERT INTO dbo.r (v) SELECT a.i FROM dbo.n a CROSS JOIN dbo.n b;
         SET ROWCOUNT 0; SELECT COUNT(*) FROM dbo.r;",
    );
    assert_eq!(int(out.results.last().unwrap().rows[0][0].clone()), 10_007);
}

#[test]
fn an_insert_that_reads_its_own_target_is_collected_first() {
    let (_dir, mut s) = small_workspace();
    ok(
        &mut s,
        "CREATE TABLE dbo.h (id INT NOT NULL);
         INSERT INTO dbo.h SELECT a.i * 100 + b.i FROM dbo.n a CROSS JOIN dbo.n b;",
    );
    ok(&mut s, "CREATE VIEW dbo.v AS SELECT id FROM dbo.h;");
    ok(
        &mut s,
        "CREATE FUNCTION dbo.total() RETURNS INT AS BEGIN RETURN (SELECT COUNT(*) FROM dbo.v) END;",
    );
    // Each read sees the table as it was before the statement: its rows double, once.
    ok(&mut s, "INSERT INTO dbo.h SELECT id + 10000 FROM dbo.h;");
    assert_eq!(int(scalar(&mut s, "SELECT COUNT(*) FROM dbo.h")), 20_000);
    ok(
        &mut s,
        "INSERT INTO dbo.h SELECT x.id + 20000 FROM dbo.h x CROSS JOIN dbo.n y WHERE y.i = 0;",
    );
    assert_eq!(int(scalar(&mut s, "SELECT COUNT(*) FROM dbo.h")), 40_000);
    ok(&mut s, "INSERT INTO dbo.h SELECT id + 40000 FROM dbo.v;");
    assert_eq!(int(scalar(&mut s, "SELECT COUNT(*) FROM dbo.h")), 80_000);
    // A function of the select list, through a view, counts the rows before the statement.
    ok(
        &mut s,
        "INSERT INTO dbo.h SELECT dbo.total() FROM dbo.n a CROSS JOIN dbo.n b WHERE a.i < 2;",
    );
    let counted = "SELECT COUNT(*), MIN(id), MAX(id) FROM dbo.h WHERE id = 80000";
    let row = ok(&mut s, counted).results.last().unwrap().rows[0].clone();
    assert_eq!(row.into_iter().map(int).collect::<Vec<_>>(), vec![200, 80_000, 80_000]);
    // A subquery of the select list on the target itself.
    ok(&mut s, "INSERT INTO dbo.h SELECT (SELECT COUNT(*) FROM dbo.h) FROM dbo.n;");
    let counted = "SELECT COUNT(*) FROM dbo.h WHERE id = 80200";
    assert_eq!(int(scalar(&mut s, counted)), 100);
}

#[test]
fn distinct_over_a_join_past_the_workspace_gives_the_right_answer() {
    let (_dir, mut s) = small_workspace();
    ok(
        &mut s,
        "CREATE TABLE dbo.t (id INT PRIMARY KEY, k INT NOT NULL, s VARCHAR(40) NOT NULL);
         INSERT INTO dbo.t SELECT a.i * 100 + b.i, (a.i * 37 + b.i * 11) % 1500,
                                  CONCAT('row number ', a.i * 100 + b.i)
         FROM dbo.n a CROSS JOIN dbo.n b;",
    );
    // The pairs of ids with the same k (about 67,000, each with its text): n * n of them for
    // each k of n rows.
    let want = int(scalar(
        &mut s,
        "SELECT SUM(n * n) FROM (SELECT k, COUNT(*) AS n FROM dbo.t GROUP BY k) x",
    ));
    assert!(want > 60_000, "{want}");
    let distinct = "SELECT COUNT(*) FROM (SELECT DISTINCT a.id, c.s FROM dbo.t a
                    JOIN dbo.t b ON a.k = b.k JOIN dbo.t c ON c.id = b.id) x";
    assert_eq!(int(scalar(&mut s, distinct)), want);
    // Many join rows to few distinct ones, listed and ordered.
    let listed = ok(
        &mut s,
        "SELECT DISTINCT a.k % 3 AS m, b.k % 2 AS p FROM dbo.t a JOIN dbo.t b ON a.k = b.k
         ORDER BY m, p",
    );
    let rows = &listed.results.last().unwrap().rows;
    let got: Vec<(i64, i64)> =
        rows.iter().map(|r| (int(r[0].clone()), int(r[1].clone()))).collect();
    assert_eq!(got, vec![(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]);
}

#[test]
fn one_table_sources_temp_tables_and_table_variables_stream_or_are_kept_apart() {
    let (_dir, mut s) = small_workspace();
    ok(
        &mut s,
        "CREATE TABLE dbo.src (id INT PRIMARY KEY, c INT NOT NULL);
         INSERT INTO dbo.src SELECT a.i * 1000 + b.i * 10 + c.i, c.i FROM dbo.n a
         CROSS JOIN dbo.n b CROSS JOIN dbo.n c WHERE c.i < 10;
         CREATE TABLE dbo.dst (id INT PRIMARY KEY, c INT NOT NULL);",
    );
    // One table read row by row into another, past the workspace.
    let out = ok(&mut s, "INSERT INTO dbo.dst SELECT id, c FROM dbo.src WHERE c <> 3");
    assert_eq!(out.counts.last(), Some(&90_000));
    let same = "SELECT COUNT(*) FROM dbo.dst d JOIN dbo.src s ON s.id = d.id AND s.c = d.c";
    assert_eq!(int(scalar(&mut s, same)), 90_000);
    // A temporary table and a table variable filled from themselves double once.
    let out = ok(
        &mut s,
        "CREATE TABLE #t (id INT NOT NULL);
         INSERT INTO #t SELECT i FROM dbo.n;
         INSERT INTO #t SELECT id + 100 FROM #t;
         DECLARE @v TABLE (id INT NOT NULL);
         INSERT INTO @v SELECT i FROM dbo.n;
         INSERT INTO @v SELECT a.id + 100 FROM @v a CROSS JOIN dbo.n b WHERE b.i = 0;
         SELECT (SELECT COUNT(*) FROM #t), (SELECT COUNT(*) FROM @v);",
    );
    let row = &out.results.last().unwrap().rows[0];
    assert_eq!((int(row[0].clone()), int(row[1].clone())), (200, 200));
}

#[test]
fn statistics_io_counts_a_streamed_sources_reads() {
    let (_dir, mut s) = small_workspace();
    ok(&mut s, "CREATE TABLE dbo.r (id INT NOT NULL); SET STATISTICS IO ON;");
    let reads_of_n = |out: &walden_sql::exec::Collected| -> u64 {
        support::io_lines(out).iter().filter(|(t, ..)| t == "n").map(|(_, _, r, _)| r).sum()
    };
    let count = ok(&mut s, "SELECT COUNT(*) FROM dbo.n a CROSS JOIN dbo.n b");
    let insert = ok(&mut s, "INSERT INTO dbo.r SELECT a.i FROM dbo.n a CROSS JOIN dbo.n b");
    let (counted, inserted) = (reads_of_n(&count), reads_of_n(&insert));
    assert!(counted > 0 && inserted > 0 && inserted <= 2 * counted, "{counted} {inserted}");
}

#[test]
fn distinct_over_a_join_goes_by_its_columns_collation() {
    let (_dir, mut s) = small_workspace();
    ok(
        &mut s,
        "CREATE TABLE dbo.w (id INT PRIMARY KEY, s VARCHAR(10) COLLATE Latin1_General_CI_AS);
         INSERT INTO dbo.w VALUES (1, 'a'), (2, 'A'), (3, 'b'), (4, 'B '), (5, NULL);",
    );
    let q = "SELECT COUNT(*) FROM (SELECT DISTINCT x.s FROM dbo.w x CROSS JOIN dbo.n y) d";
    assert_eq!(int(scalar(&mut s, q)), 3);
    ok(&mut s, "ALTER TABLE dbo.w ALTER COLUMN s VARCHAR(10) COLLATE Latin1_General_CS_AS;");
    assert_eq!(int(scalar(&mut s, q)), 5);
}

/// A cancel that comes at the `at`-th time the batch asks (once per statement, loop
/// iteration and 1,024 rows read).
#[derive(Debug)]
struct CancelAfter {
    asked: AtomicUsize,
    at: usize,
}

impl CancelSignal for CancelAfter {
    fn cancelled(&self) -> bool {
        self.asked.fetch_add(1, Ordering::Relaxed) >= self.at
    }
}

#[test]
fn a_cancel_stops_a_streamed_insert_and_undoes_its_rows() {
    let (_dir, mut s) = small_workspace();
    ok(&mut s, "CREATE TABLE dbo.r (id INT PRIMARY KEY, c INT NOT NULL);");
    // About 30,000 of the 100,000 rows are read (and inserted) before the cancel.
    let signal = Arc::new(CancelAfter { asked: AtomicUsize::new(0), at: 30 });
    s.set_cancel(Arc::clone(&signal) as Arc<dyn CancelSignal>);
    let out =
        run(&mut s, &format!("INSERT INTO dbo.r SELECT a.i * 1000 + b.i * 10 + c.i, c.i {CROSS}"));
    assert!(out.counts.is_empty(), "a cancelled INSERT reported rows: {:?}", out.counts);
    assert!(signal.asked.load(Ordering::Relaxed) > 30);
    s.set_cancel(Arc::new(std::sync::atomic::AtomicBool::new(false)));
    assert_eq!(int(scalar(&mut s, "SELECT COUNT(*) FROM dbo.r")), 0);
}
