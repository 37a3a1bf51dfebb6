//! Joins whose intermediate result is far larger than the memory workspace: the join steps
//! after a large one stream (docs/query-processing.md, "Join one step at a time"), so a
//! three- or four-table join whose first steps yield hundreds of thousands of rows gives
//! the right answer instead of error 701, `TOP (n)` over it stops early, and
//! `SET STATISTICS IO` counts each table's reads once.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{configure_query_memory, Collected, QueryMemoryConfig, Session};

use crate::support;
use support::{io_lines, ok, run, scalar};

/// 10,000 rows; `k` has 1,500 values (and some NULLs): `a.k = b.k` pairs about 67,000 rows.
const DATA: &str = "
    CREATE DATABASE d; USE d;
    CREATE TABLE dbo.t (id INT PRIMARY KEY, k INT NULL, g INT NOT NULL, f FLOAT NOT NULL,
                        s VARCHAR(40) NULL);
    WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
    INSERT INTO dbo.t
    SELECT a.i * 100 + b.i,
           CASE WHEN (a.i * 100 + b.i) % 97 = 0 THEN NULL ELSE (a.i * 37 + b.i * 11) % 1500 END,
           (a.i + b.i) % 4,
           (a.i * 100 + b.i) / 7.0,
           CONCAT('row number ', a.i * 100 + b.i)
    FROM n a CROSS JOIN n b
    OPTION (MAXRECURSION 200);
";

/// A session of an instance with 16 MB of buffer pool, a workspace of 12 MB, and grants of
/// up to 6 MB: room for a hash of the table (under 4 MB), far less than a join step's
/// output of 67,000 rows (over 30 MB held), loaded with [`DATA`].
fn small_workspace() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = InstanceConfig::default();
    config.database.pool.frames = 2048;
    let instance = Instance::open(dir.path(), config).unwrap();
    let grant = QueryMemoryConfig { max_query_memory_bytes: Some(6 << 20) };
    configure_query_memory(&instance, grant);
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, DATA);
    (dir, s)
}

/// The batch's last result as text, one string per row.
fn rows(out: &Collected) -> Vec<String> {
    let rs = out.results.last().unwrap();
    rs.rows.iter().map(|r| format!("{r:?}")).collect()
}

#[test]
fn a_three_table_join_past_the_workspace_streams_its_last_steps() {
    let (_dir, mut s) = small_workspace();
    // The pairs of rows with the same k, the later one's id greater: C(n, 2) for the n
    // rows of each k, counted by a grouping, which holds no pair.
    let expected = scalar(
        &mut s,
        "SELECT SUM(n * (n - 1) / 2) FROM
           (SELECT k, COUNT(*) AS n FROM dbo.t WHERE k IS NOT NULL GROUP BY k) x",
    );
    assert!(matches!(expected, Value::Int(n) if n > 20_000), "{expected:?}");
    // The same pairs through a third table: the first step's output (all pairs of equal
    // k, about 67,000 rows) is far beyond the workspace.
    let three = "SELECT COUNT(*) FROM dbo.t a JOIN dbo.t b ON a.k = b.k
                 JOIN dbo.t c ON c.id = b.id WHERE a.id < c.id";
    assert_eq!(scalar(&mut s, three), expected);
    // Selected rather than counted: the rows the plan returns are the last step's only.
    let listed = ok(
        &mut s,
        "SELECT a.id, c.id FROM dbo.t a JOIN dbo.t b ON a.k = b.k JOIN dbo.t c ON c.id = b.id
         WHERE a.id < c.id AND c.id < 3000",
    );
    let mut got = rows(&listed);
    got.sort();
    let direct = ok(
        &mut s,
        "SELECT a.id, b.id FROM dbo.t a JOIN dbo.t b ON a.k = b.k WHERE a.id < b.id AND b.id < 3000",
    );
    let mut want = rows(&direct);
    want.sort();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[test]
fn a_four_table_join_past_the_workspace_gives_the_right_answer() {
    let (_dir, mut s) = small_workspace();
    // Each id is in n - 1 of the pairs of its k's n rows.
    let expected = scalar(
        &mut s,
        "SELECT SUM((n - 1) * ids) FROM
           (SELECT k, COUNT(*) AS n, SUM(CAST(id AS BIGINT)) AS ids FROM dbo.t
            WHERE k IS NOT NULL GROUP BY k) x",
    );
    let four = "SELECT SUM(CAST(a.id AS BIGINT) + c.id) FROM dbo.t a JOIN dbo.t b ON a.k = b.k
                JOIN dbo.t c ON c.id = b.id JOIN dbo.t d ON d.id = a.id
                WHERE a.id < c.id AND d.f >= 0";
    assert_eq!(scalar(&mut s, four), expected);
}

#[test]
fn top_over_a_large_join_stops_early_through_every_step() {
    let (_dir, mut s) = small_workspace();
    // The pairs of the row with id 9999 divide by zero: the last row of `b` and of `c`.
    let join = "FROM dbo.t a JOIN dbo.t b ON a.k = b.k JOIN dbo.t c ON c.id = b.id
                WHERE a.id < c.id AND 1 / (b.id + c.id - 19998) <> 7";
    let all = run(&mut s, &format!("SELECT COUNT(*) {join}"));
    let errors: Vec<_> = all.errors().map(|e| e.number).collect();
    assert_eq!(errors, vec![8134], "{:?}", all.messages);
    // The first five rows stop every step, the join of `b` and `c` before it reaches them.
    let top = ok(&mut s, &format!("SELECT TOP (5) a.id, a.k, b.k, c.id {join}"));
    let got = &top.results.last().unwrap().rows;
    assert_eq!(got.len(), 5);
    for r in got {
        assert_eq!(r[1], r[2], "{r:?}");
        assert!(matches!((&r[0], &r[3]), (Value::Int(a), Value::Int(c)) if a < c), "{r:?}");
    }
}

#[test]
fn statistics_io_counts_each_read_of_a_streamed_join_once() {
    let (_dir, mut s) = small_workspace();
    ok(&mut s, "SET STATISTICS IO ON;");
    let reads = |out: &Collected| -> u64 { io_lines(out).iter().map(|(_, _, r, _)| r).sum() };
    let scan = reads(&ok(&mut s, "SELECT COUNT(*) FROM dbo.t WHERE s LIKE 'x%'"));
    // The table read three times at most, the later reads made while the first is under
    // way: each counted to its own read, not also to the one around it.
    let join = ok(
        &mut s,
        "SELECT COUNT(*) FROM dbo.t a JOIN dbo.t b ON a.k = b.k JOIN dbo.t c ON c.id = b.id
         WHERE a.id < c.id",
    );
    let whole = reads(&join);
    assert!(whole >= scan && whole <= 3 * scan, "{scan} {:?}", io_lines(&join));
}

#[test]
fn a_window_that_holds_a_large_join_whole_fails_with_701_and_the_session_goes_on() {
    let (_dir, mut s) = small_workspace();
    let join = "FROM dbo.t a JOIN dbo.t b ON a.k = b.k JOIN dbo.t c ON c.id = b.id";
    // NTILE needs its partition's size before its first value: the join's whole output,
    // past the 12 MB workspace, is held before the window is computed.
    let out = run(&mut s, &format!("SELECT a.id, c.id, NTILE(4) OVER (ORDER BY c.s) {join}"));
    let errors: Vec<_> = out.errors().map(|e| e.number).collect();
    assert_eq!(errors, vec![701], "{:?}", out.messages);
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM dbo.t"), Value::Int(10_000));
    // ROW_NUMBER needs no row but the current one: the same join numbered goes through the
    // window's sort, which spills, and every pair is numbered once.
    let Value::Int(count) = scalar(&mut s, &format!("SELECT COUNT(*) {join}")) else { panic!() };
    let numbered = |what: &str| {
        format!(
            "SELECT CAST({what} AS INT) FROM (SELECT ROW_NUMBER() OVER (ORDER BY c.s) AS rn \
             {join}) x"
        )
    };
    assert_eq!(scalar(&mut s, &numbered("MAX(rn)")), Value::Int(count));
    assert_eq!(scalar(&mut s, &numbered("COUNT(DISTINCT rn)")), Value::Int(count));
}

#[test]
fn a_large_join_selected_goes_to_the_client_as_its_last_step_makes_it() {
    let (_dir, mut s) = small_workspace();
    let join = "FROM dbo.t a JOIN dbo.t b ON a.k = b.k JOIN dbo.t c ON c.id = b.id";
    let Value::Int(count) = scalar(&mut s, &format!("SELECT COUNT(*) {join}")) else { panic!() };
    // Over 30 MB if held, past the 12 MB workspace: sent as it is made instead.
    let out = ok(&mut s, &format!("SELECT a.id, c.id {join}"));
    assert_eq!(out.results.last().unwrap().rows.len() as i64, i64::from(count));
    assert!(count > 60_000, "{count}");
}

#[test]
fn an_outer_join_that_is_its_blocks_one_source_gives_its_pairs_as_it_makes_them() {
    let (_dir, mut s) = small_workspace();
    // Each non-NULL k's n rows pair n * n times; each NULL k's row is kept once, unmatched.
    let Value::Int(pairs) = scalar(
        &mut s,
        "SELECT SUM(n * n) FROM (SELECT COUNT(*) AS n FROM dbo.t WHERE k IS NOT NULL GROUP BY k) x",
    ) else {
        panic!()
    };
    let Value::Int(nulls) = scalar(&mut s, "SELECT COUNT(*) FROM dbo.t WHERE k IS NULL") else {
        panic!()
    };
    assert!(pairs > 60_000 && nulls > 0, "{pairs} {nulls}");
    // Over 30 MB if held, past the 12 MB workspace: aggregated, or sent to the client, as
    // the pairs are made, by either side's hash (a LEFT JOIN of two equal tables hashes its
    // preserved side, a FULL JOIN its other side). The counts of all rows, `a.id` and `b.id`.
    let (kept, both) = (pairs + nulls, pairs + 2 * nulls);
    for (join, counts) in [
        ("LEFT JOIN", [kept, kept, pairs]),
        ("RIGHT JOIN", [kept, pairs, kept]),
        ("FULL JOIN", [both, kept, kept]),
    ] {
        let from = format!("FROM dbo.t a {join} dbo.t b ON a.k = b.k");
        let counted = ok(&mut s, &format!("SELECT COUNT(*), COUNT(a.id), COUNT(b.id) {from}"));
        let expected = format!("[Int({}), Int({}), Int({})]", counts[0], counts[1], counts[2]);
        assert_eq!(rows(&counted), vec![expected], "{join}");
        let selected = ok(&mut s, &format!("SELECT a.id, b.id {from}"));
        let sent = selected.results.last().unwrap().rows.len() as i64;
        assert_eq!(sent, i64::from(counts[0]), "{join}");
    }
}

#[test]
fn a_streamed_join_with_a_computed_leaf_and_null_keys_counts_every_pair_once() {
    let (_dir, mut s) = small_workspace();
    // The rows of each k before a row, by id: the `a` of the pairs (a, b) with
    // a.id < b.id; each such pair is joined to the values of `v` up to its g (g + 1 of
    // them). NULL keys pair with nothing.
    let expected = scalar(
        &mut s,
        "SELECT SUM(CAST(rn - 1 AS BIGINT) * (g + 1)) FROM
           (SELECT g, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id) AS rn FROM dbo.t
            WHERE k IS NOT NULL) x",
    );
    assert!(matches!(expected, Value::BigInt(n) if n > 20_000), "{expected:?}");
    // The steps after `a` and `b` (about 67,000 pairs) stream through a seek of `c` and
    // a join to the computed rows of `v`, in batches whatever the step each row comes from.
    let four = "SELECT COUNT_BIG(*) FROM dbo.t a JOIN dbo.t b ON a.k = b.k
                JOIN dbo.t c ON c.id = b.id
                JOIN (VALUES (0), (1), (2), (3)) AS v (g) ON v.g <= c.g
                WHERE a.id < c.id";
    assert_eq!(scalar(&mut s, four), expected);
}

#[test]
fn a_streamed_join_gives_the_same_rows_as_the_join_of_its_parts() {
    let (_dir, mut s) = small_workspace();
    // The pairs of each k, more than the workspace can hold (held, they would fail with
    // 701), listed with the third table's text (NULL where `s` is NULL) rather than
    // counted: the last step's rows, a fiftieth of them, are what the plan holds.
    ok(&mut s, "UPDATE dbo.t SET s = NULL WHERE id % 13 = 0");
    let listed = ok(
        &mut s,
        "SELECT a.id, c.id, c.s FROM dbo.t a JOIN dbo.t b ON a.k = b.k
         JOIN dbo.t c ON c.id = b.id WHERE a.id < c.id AND c.id % 50 = 0",
    );
    let direct = ok(
        &mut s,
        "SELECT a.id, b.id, b.s FROM dbo.t a JOIN dbo.t b ON a.k = b.k
         WHERE a.id < b.id AND b.id % 50 = 0",
    );
    let (mut got, mut want) = (rows(&listed), rows(&direct));
    got.sort();
    want.sort();
    assert!(want.len() > 500, "{}", want.len());
    assert!(want.iter().any(|r| r.ends_with("Null]")), "{want:?}");
    assert_eq!(got, want);
}

#[test]
fn a_streamed_step_after_a_probed_hash_seeks_when_the_probes_mostly_miss() {
    let (_dir, mut s) = support::session();
    // p's 100 rows are hashed and q's 10,000 probe them; only a tenth of q's rows find
    // any (k < 10), each ten of p's: 10,000 pairs, so the step after it streams. Expected
    // from the rows q has read, not only those that matched, those pairs are few for
    // r's 100,000 rows: r is sought per pair, not read whole into a hash.
    ok(
        &mut s,
        "CREATE TABLE dbo.p (id INT PRIMARY KEY, k INT NOT NULL);
         CREATE TABLE dbo.q (id INT PRIMARY KEY, k INT NOT NULL);
         CREATE TABLE dbo.r (id INT PRIMARY KEY, v INT NOT NULL);
         WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
         INSERT INTO dbo.p SELECT i, i % 10 FROM n;
         WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
         INSERT INTO dbo.q SELECT a.i * 100 + b.i, b.i FROM n a CROSS JOIN n b;
         WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
         INSERT INTO dbo.r SELECT a.i * 1000 + b.i * 10 + c.i, c.i
         FROM n a CROSS JOIN n b CROSS JOIN n c WHERE c.i < 10;
         SET STATISTICS IO ON;",
    );
    let out = ok(
        &mut s,
        "SELECT COUNT(*), SUM(r.v) FROM dbo.p JOIN dbo.q ON q.k = p.k
         JOIN dbo.r ON r.id = q.id * 10 + q.k % 3",
    );
    // Each pair's r row has v = q.k % 3; the ten k values < 10 appear 100 times in q and
    // 10 times in p: 1,000 pairs each.
    let expected: i64 = (0..10).map(|k| 1000 * (k % 3)).sum();
    assert_eq!(rows(&out), [format!("[Int(10000), Int({expected})]")]);
    let r = io_lines(&out).into_iter().find(|(t, ..)| t == "r").unwrap();
    assert!(r.1 > 1, "r was read whole: {:?}", io_lines(&out));
}

#[test]
fn a_streamed_step_seeks_when_auto_created_statistics_raise_the_probing_estimate() {
    let (_dir, mut s) = support::session();
    // TPC-H Q3's shape: `q.d >= 0` keeps all of q, which its auto-created histogram says
    // (10,000 rows) where the guess said 3,000. The probed hash of p streams past 8,192
    // pairs; counted from every row q read, the stage after it expects about 10,000 pairs,
    // whose seeks into r cost less than reading r's 100,000 rows into a hash. Counted from
    // the matching rows only (ten pairs each) it expected 100,000 and hashed r whole.
    ok(
        &mut s,
        "CREATE TABLE dbo.p (id INT PRIMARY KEY, k INT NOT NULL);
         CREATE TABLE dbo.q (id INT PRIMARY KEY, k INT NOT NULL, d INT NOT NULL);
         CREATE TABLE dbo.r (id INT PRIMARY KEY, v INT NOT NULL);
         WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
         INSERT INTO dbo.p SELECT i, i % 10 FROM n;
         WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
         INSERT INTO dbo.q SELECT a.i * 100 + b.i, b.i, a.i FROM n a CROSS JOIN n b;
         WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
         INSERT INTO dbo.r SELECT a.i * 1000 + b.i * 10 + c.i, c.i
         FROM n a CROSS JOIN n b CROSS JOIN n c WHERE c.i < 10;
         SET STATISTICS IO ON;",
    );
    let out = ok(
        &mut s,
        "SELECT COUNT(*), SUM(r.v) FROM dbo.p JOIN dbo.q ON q.k = p.k
         JOIN dbo.r ON r.id = q.id * 10 + q.k % 3 WHERE q.d >= 0",
    );
    let expected: i64 = (0..10).map(|k| 1000 * (k % 3)).sum();
    assert_eq!(rows(&out), [format!("[Int(10000), Int({expected})]")]);
    let r = io_lines(&out).into_iter().find(|(t, ..)| t == "r").unwrap();
    assert!(r.1 > 1, "r was read whole: {:?}", io_lines(&out));
    // The estimate came from the statistics the query created on q.d.
    let auto = scalar(
        &mut s,
        "SELECT COUNT(*) FROM sys.stats s JOIN sys.stats_columns sc
         ON sc.object_id = s.object_id AND sc.stats_id = s.stats_id
         WHERE s.object_id = OBJECT_ID('dbo.q') AND s.auto_created = 1
         AND s.name LIKE '[_]WA[_]Sys[_]%' AND sc.column_id = 3",
    );
    assert_eq!(auto, Value::Int(1));
}

/// The pairs of `dbo.t a JOIN dbo.t b ON a.k = b.k` (about 67,000, over 30 MB if held),
/// those whose `b` row has `g = 0`, and the rows whose `k` is NULL, counted by groupings
/// that hold no pair.
fn pair_counts(s: &mut Session) -> (i64, i64, i64) {
    let counted = ok(
        s,
        "SELECT SUM(n * n), SUM(n * z) FROM
           (SELECT k, COUNT(*) AS n, SUM(CASE WHEN g = 0 THEN 1 ELSE 0 END) AS z FROM dbo.t
            WHERE k IS NOT NULL GROUP BY k) x",
    );
    let row = &counted.results.last().unwrap().rows[0];
    let (Value::Int(pairs), Value::Int(zeros)) = (&row[0], &row[1]) else { panic!("{row:?}") };
    let Value::Int(nulls) = scalar(s, "SELECT COUNT(*) FROM dbo.t WHERE k IS NULL") else {
        panic!()
    };
    assert!(*pairs > 60_000 && *zeros > 10_000 && nulls > 0, "{pairs} {zeros} {nulls}");
    (i64::from(*pairs), i64::from(*zeros), i64::from(nulls))
}

#[test]
fn an_outer_join_pairs_its_left_rows_as_they_come_when_they_are_many() {
    let (_dir, mut s) = small_workspace();
    let (pairs, zeros, nulls) = pair_counts(&mut s);
    // The left side of each outer join is the inner join's pairs, past the 12 MB
    // workspace: held, they failed with 701. They go through the outer join as they are
    // made, the third table sought by its key, or read and hashed on `s` (no index has
    // it; each `s` is its row's own).
    let inner = "dbo.t a JOIN dbo.t b ON a.k = b.k";
    for on in ["c.id = b.id AND c.g = 0", "c.s = b.s AND c.g = 0"] {
        let q = format!("SELECT COUNT(*), COUNT(c.id) FROM {inner} LEFT JOIN dbo.t c ON {on}");
        let expected = format!("[Int({pairs}), Int({zeros})]");
        assert_eq!(rows(&ok(&mut s, &q)), vec![expected], "{q}");
    }
    // A FULL JOIN adds the rows of `c` no pair matched: every row is paired with itself
    // when its k is not NULL, so those are the rows with a NULL k or g other than 0.
    let Value::Int(paired) =
        scalar(&mut s, "SELECT COUNT(*) FROM dbo.t WHERE g = 0 AND k IS NOT NULL")
    else {
        panic!()
    };
    let unmatched = 10_000 - i64::from(paired);
    let q = format!(
        "SELECT COUNT(*), COUNT(b.id), COUNT(c.id) FROM {inner}
         FULL JOIN dbo.t c ON c.s = b.s AND b.g = 0"
    );
    let expected =
        format!("[Int({}), Int({pairs}), Int({})]", pairs + unmatched, zeros + unmatched);
    assert_eq!(rows(&ok(&mut s, &q)), vec![expected], "{q}");
    // A chain of LEFT JOINs: the first one's pairs (its unmatched NULL keys kept) are the
    // second one's left side, made as it reads them.
    let chain = "SELECT COUNT(*), COUNT(b.id), COUNT(c.id) FROM dbo.t a
                 LEFT JOIN dbo.t b ON a.k = b.k LEFT JOIN dbo.t c ON c.id = b.id AND c.g = 0";
    let expected = format!("[Int({}), Int({pairs}), Int({zeros})]", pairs + nulls);
    assert_eq!(rows(&ok(&mut s, chain)), vec![expected]);
}

#[test]
fn an_outer_join_its_conditions_make_inner_is_joined_with_the_other_sources() {
    let (_dir, mut s) = small_workspace();
    let (pairs, zeros, _) = pair_counts(&mut s);
    // The inner join after the LEFT JOIN rejects its NULL-extended rows: as an outer join,
    // one leaf among three, its pairs (over 30 MB) were held and failed with 701; joined as
    // the inner join it is, its steps stream.
    let q = "SELECT COUNT(*) FROM dbo.t a LEFT JOIN dbo.t b ON a.k = b.k
             JOIN dbo.t c ON c.id = b.id AND c.g = 0";
    assert_eq!(scalar(&mut s, q), Value::Int(i32::try_from(zeros).unwrap()));
    let q = "SELECT COUNT(*) FROM dbo.t a LEFT JOIN dbo.t b ON a.k = b.k
             JOIN dbo.t c ON c.id = a.id WHERE b.f >= 0";
    assert_eq!(scalar(&mut s, q), Value::Int(i32::try_from(pairs).unwrap()));
}

#[test]
fn a_left_join_before_an_inner_join_of_its_preserved_side_streams_its_pairs() {
    let (_dir, mut s) = small_workspace();
    let (pairs, _, nulls) = pair_counts(&mut s);
    // `c` joins `a` alone: the LEFT JOIN's pairs (over 30 MB) were one leaf among two,
    // held, and failed with 701; run after the inner join, they are counted as made.
    let q = "SELECT COUNT(*), COUNT(b.id) FROM dbo.t a LEFT JOIN dbo.t b ON a.k = b.k
             JOIN dbo.t c ON c.id = a.id";
    let expected = format!("[Int({}), Int({pairs})]", pairs + nulls);
    assert_eq!(rows(&ok(&mut s, q)), vec![expected]);
}

#[test]
fn an_outer_join_whose_inner_side_is_a_join_queues_its_rows_past_the_grant() {
    let (_dir, mut s) = small_workspace();
    let (pairs, _, nulls) = pair_counts(&mut s);
    // The inner side is the inner join's pairs, past the 12 MB workspace: held whole, they
    // failed with 701. They are queued as they are made, spilled past the grant, then
    // hashed (and partitioned) as a table's rows are. Each pair matches the row of `c`
    // that is its `b`; a `c` with a NULL k matches none.
    for kind in ["LEFT", "FULL"] {
        let q = format!(
            "SELECT COUNT(*), COUNT(a.id) FROM dbo.t c
             {kind} JOIN (dbo.t a JOIN dbo.t b ON a.k = b.k) ON b.s = c.s"
        );
        let expected = format!("[Int({}), Int({pairs})]", pairs + nulls);
        assert_eq!(rows(&ok(&mut s, &q)), vec![expected], "{q}");
    }
}

#[test]
fn an_update_through_a_left_join_before_an_inner_join_streams_its_pairs() {
    let (_dir, mut s) = small_workspace();
    // The LEFT JOIN's pairs (over the 12 MB workspace) were held as one leaf of the search
    // for the rows to change, and failed with 701; joined after the inner join, they stream
    // into the queue of qualifying rows, each row of `a` queued once.
    let q = "BEGIN TRAN;
             UPDATE a SET g = a.g + 1 FROM dbo.t a LEFT JOIN dbo.t b ON a.k = b.k
               JOIN dbo.t c ON c.id = a.id;
             SELECT @@ROWCOUNT;
             ROLLBACK";
    assert_eq!(rows(&ok(&mut s, q)), vec!["[Int(10000)]"]);
    // A grouping over one LEFT JOIN (a SELECT's one source, read as its pairs are made).
    let (pairs, _, _) = pair_counts(&mut s);
    let grouped = "SELECT SUM(n) FROM (SELECT a.g, COUNT(b.id) AS n FROM dbo.t a
                   LEFT JOIN dbo.t b ON a.k = b.k GROUP BY a.g) x";
    assert_eq!(rows(&ok(&mut s, grouped)), vec![format!("[Int({pairs})]")]);
}
