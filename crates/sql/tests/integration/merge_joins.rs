//! Merge joins give the rows their definition gives (docs/query-processing.md): the rows
//! joined so far, in the order of an integer key, walked by a table read in the order of
//! its clustered key. Each query here is compared with the same query whose key is an
//! expression (`+ 0`), which no merge can use: keys that match once, many times or never,
//! NULL keys, keys on both sides repeated, a filter on either side, a conjunct across
//! both, a row goal, an UPDATE and a DELETE through the join.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use walden_sql::exec::Session;

use crate::support;
use support::{io_lines, ok, rows_text, session, showplan_text};

/// 10,000 orders, their lines (none for every fifth order, one to three for the others,
/// and lines of orders that do not exist), and `m`, clustered on a key that repeats and
/// is sometimes NULL.
const DATA: &str = "
    CREATE DATABASE d; USE d;
    CREATE TABLE dbo.o (id INT PRIMARY KEY, status INT NOT NULL, k INT NULL);
    WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
    INSERT INTO dbo.o
    SELECT a.i * 100 + b.i, (a.i * 100 + b.i) % 7,
           CASE WHEN (a.i + b.i) % 11 = 0 THEN NULL ELSE (a.i * 13 + b.i) % 300 END
    FROM n a CROSS JOIN n b
    OPTION (MAXRECURSION 200);
    CREATE TABLE dbo.l (oid BIGINT NOT NULL, line INT NOT NULL, q INT NOT NULL,
                        PRIMARY KEY (oid, line));
    INSERT INTO dbo.l SELECT o.id, x.line, (o.id * 7 + x.line) % 10
    FROM dbo.o o CROSS JOIN (VALUES (1), (2), (3)) AS x (line)
    WHERE o.id % 5 <> 0 AND x.line <= 1 + o.id % 3;
    INSERT INTO dbo.l SELECT 10000 + id, 1, 4 FROM dbo.o WHERE id < 50;
    CREATE TABLE dbo.m (k INT NULL, v INT NOT NULL);
    CREATE CLUSTERED INDEX cx ON dbo.m (k);
    INSERT INTO dbo.m SELECT k, id FROM dbo.o WHERE id < 3000;";

/// The rows of `query` sorted, the test failing on an error.
fn sorted(s: &mut Session, query: &str) -> Vec<Vec<String>> {
    let mut rows = rows_text(s, query);
    rows.sort();
    rows
}

/// Merged queries, each with `{key}` where the join's key on the merged side goes: a
/// column there lets the merge be planned, `+ 0` does not.
const MERGED: [&str; 5] = [
    "SELECT o.id, l.line, l.q FROM dbo.o o JOIN dbo.l l ON {key} = o.id",
    "SELECT o.id, l.line FROM dbo.o o JOIN dbo.l l ON {key} = o.id WHERE o.status = 1",
    "SELECT o.id, l.line FROM dbo.o o JOIN dbo.l l ON {key} = o.id AND l.q < o.status + 3",
    "SELECT o.id, l.line FROM dbo.o o JOIN dbo.l l ON {key} = o.id WHERE l.q > 2",
    "SELECT COUNT(*), SUM(l.q) FROM dbo.o o, dbo.l l WHERE {key} = o.id AND o.status < 6",
];

#[test]
fn a_merge_join_finds_the_pairs_every_other_join_finds() {
    let (_dir, mut s) = session();
    ok(&mut s, DATA);
    for query in MERGED {
        let merged = query.replace("{key}", "l.oid");
        let shown = showplan_text(&mut s, &merged);
        assert!(shown.contains("Merge Join(Inner Join, MERGE:(o.id)=(l.oid)"), "{shown}");
        // The merged table's read, in its clustered key's order, says so.
        assert!(shown.contains("AS [l]), ORDERED FORWARD"), "{shown}");
        let expected = sorted(&mut s, &query.replace("{key}", "l.oid + 0"));
        assert!(!expected.is_empty(), "{query}");
        assert_eq!(sorted(&mut s, &merged), expected, "{merged}");
    }
}

#[test]
fn a_merge_join_reads_its_leaf_once() {
    let (_dir, mut s) = session();
    ok(&mut s, DATA);
    ok(&mut s, "SET STATISTICS IO ON");
    let out = ok(&mut s, &MERGED[1].replace("{key}", "l.oid"));
    let lines = io_lines(&out);
    let l = lines.iter().find(|(t, ..)| t == "l").unwrap();
    assert_eq!(l.1, 1, "{lines:?}");
}

#[test]
fn keys_repeated_on_both_sides_and_null_keys_pair_as_they_should() {
    let (_dir, mut s) = session();
    ok(&mut s, DATA);
    // `m` joined to itself on its clustered key: every key's rows paired with each other.
    let query = "SELECT a.v, b.v FROM dbo.m a JOIN dbo.m b ON {key} = a.k WHERE a.v % 3 = 0";
    let merged = query.replace("{key}", "b.k");
    let shown = showplan_text(&mut s, &merged);
    assert!(shown.contains("Merge Join"), "{shown}");
    let expected = sorted(&mut s, &query.replace("{key}", "b.k + 0"));
    assert!(expected.len() > 1000, "{}", expected.len());
    assert_eq!(sorted(&mut s, &merged), expected);
    // Each joined row's matches come together, in the leaf's key order.
    let rows = rows_text(&mut s, &merged);
    let firsts: Vec<&String> = rows.iter().map(|r| &r[0]).collect();
    let mut runs = firsts.clone();
    runs.dedup();
    let mut distinct = runs.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(runs.len(), distinct.len(), "a joined row's pairs are apart");
}

#[test]
fn a_row_goal_stops_a_merge_join() {
    let (_dir, mut s) = session();
    ok(&mut s, DATA);
    let query = "SELECT TOP (7) o.id, l.line FROM dbo.o o JOIN dbo.l l ON l.oid = o.id";
    let shown = showplan_text(&mut s, query);
    assert!(shown.contains("Merge Join"), "{shown}");
    let rows = rows_text(&mut s, query);
    assert_eq!(rows.len(), 7);
    let all = sorted(&mut s, "SELECT o.id, l.line FROM dbo.o o JOIN dbo.l l ON l.oid + 0 = o.id");
    assert!(rows.iter().all(|r| all.binary_search(r).is_ok()), "{rows:?}");
    // Keys that several joined rows share: their pairs are made together, after the key's
    // last leaf row, and stop at the goal too.
    let repeated =
        "SELECT TOP (7) a.v, b.v FROM dbo.m a JOIN dbo.m b ON b.k = a.k WHERE a.v % 3 = 0";
    let shown = showplan_text(&mut s, repeated);
    assert!(shown.contains("Merge Join"), "{shown}");
    assert_eq!(rows_text(&mut s, repeated).len(), 7);
}

#[test]
fn a_change_through_a_merge_join_changes_the_rows_it_pairs() {
    let (_dir, mut s) = session();
    ok(&mut s, DATA);
    let update = "UPDATE l SET q = q + 100 FROM dbo.o o JOIN dbo.l l ON l.oid = o.id \
                  WHERE o.status = 1";
    let shown = showplan_text(&mut s, update);
    assert!(shown.contains("Merge Join"), "{shown}");
    let expected = rows_text(
        &mut s,
        "SELECT COUNT(*) FROM dbo.l WHERE EXISTS (SELECT 1 FROM dbo.o WHERE o.id = l.oid \
         AND o.status = 1)",
    );
    assert_ne!(expected, [["Int(0)"]]);
    ok(&mut s, update);
    let changed = rows_text(&mut s, "SELECT COUNT(*) FROM dbo.l WHERE q >= 100");
    assert_eq!(changed, expected);
    let delete = "DELETE l FROM dbo.o o JOIN dbo.l l ON l.oid = o.id WHERE o.status = 1";
    ok(&mut s, delete);
    assert_eq!(rows_text(&mut s, "SELECT COUNT(*) FROM dbo.l WHERE q >= 100"), [["Int(0)"]]);
}
