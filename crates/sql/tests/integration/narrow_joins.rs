//! Joins of a SELECT carry only the columns the block names (docs/query-processing.md,
//! "Joined rows carry only what the block reads", `Flat::narrow`): aggregates, projections, ORDER BY, HAVING,
//! outer joins and `SELECT *` over joins of three to five tables give what the same
//! query gives over the join's every column, read back from a table that holds them all.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use walden_engine::types::Value;
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{errors, ok, run, session};

/// Five tables whose column names differ (so that `SELECT * INTO` keeps them all), with
/// NULLs in joined and aggregated columns, rows that join nothing, and unread wide text.
const DATA: &str = "
    CREATE DATABASE d; USE d;
    CREATE TABLE dbo.region (r_id INT PRIMARY KEY, r_name VARCHAR(20) NOT NULL,
                             r_note VARCHAR(200) NULL);
    CREATE TABLE dbo.nation (n_id INT PRIMARY KEY, n_name VARCHAR(20) NOT NULL,
                             n_rid INT NULL, n_note VARCHAR(200) NULL);
    CREATE TABLE dbo.cust (c_id INT PRIMARY KEY, c_nid INT NULL, c_name VARCHAR(30) NOT NULL,
                           c_bal DECIMAL(10,2) NULL, c_note VARCHAR(200) NULL);
    CREATE TABLE dbo.ord (o_id INT PRIMARY KEY, o_cid INT NULL, o_total DECIMAL(10,2) NULL,
                          o_day INT NOT NULL, o_note VARCHAR(200) NULL);
    CREATE TABLE dbo.line (l_oid INT NOT NULL, l_no INT NOT NULL, l_qty INT NULL,
                           l_price FLOAT NOT NULL, l_note VARCHAR(200) NULL,
                           PRIMARY KEY (l_oid, l_no));
    INSERT INTO dbo.region VALUES (1, 'EAST', REPLICATE('r', 150)), (2, 'WEST', NULL),
                                  (3, 'NONE', 'no nation');
    WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 12)
    INSERT INTO dbo.nation SELECT i, CONCAT('N', i), CASE WHEN i = 12 THEN NULL ELSE i % 2 + 1 END,
                                  REPLICATE('n', i * 10) FROM n;
    WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 300)
    INSERT INTO dbo.cust SELECT i, CASE WHEN i % 41 = 0 THEN NULL ELSE i % 13 + 1 END,
                                CONCAT('cust ', i), CASE WHEN i % 7 = 0 THEN NULL ELSE i * 1.25 END,
                                REPLICATE('c', i % 150) FROM n OPTION (MAXRECURSION 400);
    WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
    INSERT INTO dbo.ord SELECT i, CASE WHEN i % 53 = 0 THEN NULL ELSE i % 310 + 1 END,
                               CASE WHEN i % 11 = 0 THEN NULL ELSE i % 97 * 3.5 END, i % 30,
                               REPLICATE('o', i % 180) FROM n OPTION (MAXRECURSION 3000);
    WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 4)
    INSERT INTO dbo.line SELECT o_id, i, CASE WHEN (o_id + i) % 17 = 0 THEN NULL ELSE i + o_id % 5 END,
                                o_id % 23 * 1.5 + i, REPLICATE('l', (o_id + i) % 120)
    FROM dbo.ord JOIN n ON i <= o_id % 4 + 1;
";

/// The five tables' inner join, and its outer variants, with every column.
const JOINS: [(&str, &str); 3] = [
    (
        "#inner",
        "dbo.region JOIN dbo.nation ON n_rid = r_id JOIN dbo.cust ON c_nid = n_id
         JOIN dbo.ord ON o_cid = c_id JOIN dbo.line ON l_oid = o_id",
    ),
    (
        "#left",
        "dbo.cust LEFT JOIN dbo.nation ON c_nid = n_id LEFT JOIN dbo.region ON n_rid = r_id
         JOIN dbo.ord ON o_cid = c_id",
    ),
    ("#comma", "dbo.nation, dbo.cust, dbo.ord WHERE c_nid = n_id AND o_cid = c_id"),
];

/// The outer join's table, made first: `SELECT * INTO` keeps the NOT NULL of the columns
/// an outer join extends with NULLs (SQL Server makes them nullable).
const LEFT_TABLE: &str = "
    CREATE TABLE #left (c_id INT, c_nid INT, c_name VARCHAR(30), c_bal DECIMAL(10,2),
                        c_note VARCHAR(200), n_id INT, n_name VARCHAR(20), n_rid INT,
                        n_note VARCHAR(200), r_id INT, r_name VARCHAR(20), r_note VARCHAR(200),
                        o_id INT, o_cid INT, o_total DECIMAL(10,2), o_day INT,
                        o_note VARCHAR(200));
";

fn loaded() -> (tempfile::TempDir, Session) {
    let (dir, mut s) = session();
    ok(&mut s, DATA);
    ok(&mut s, LEFT_TABLE);
    for (wide, from) in JOINS {
        let fill =
            if wide == "#left" { "INSERT INTO #left SELECT *" } else { "SELECT * INTO {wide}" };
        ok(&mut s, &format!("{} FROM {from}", fill.replace("{wide}", wide)));
    }
    (dir, s)
}

/// The batch's last result, its column names and its rows as text.
fn result(out: &Collected) -> (Vec<String>, Vec<String>) {
    let rs = out.results.last().unwrap();
    let names = rs.columns.iter().map(|c| c.name.clone()).collect();
    (names, rs.rows.iter().map(|r| format!("{r:?}")).collect())
}

/// Runs `query` over `from` (a join) and over `wide` (the table holding that join's every
/// column): the same columns and rows, in the same order when `ordered`, else as sets.
fn same(s: &mut Session, query: &str, from: &str, wide: &str, ordered: bool) -> usize {
    let joined = result(&ok(s, &query.replace("{from}", from)));
    let whole = result(&ok(s, &query.replace("{from}", wide)));
    assert_eq!(joined.0, whole.0, "{query}");
    let (mut a, mut b) = (joined.1, whole.1);
    if !ordered {
        a.sort();
        b.sort();
    }
    assert_eq!(a, b, "{query}");
    a.len()
}

#[test]
fn aggregates_over_joins_match_the_join_of_every_column() {
    let (_dir, mut s) = loaded();
    let (wide, from) = JOINS[0];
    // COUNT(*), SUM and COUNT over columns of different leaves, NULLs among them.
    let n = same(
        &mut s,
        "SELECT COUNT(*), SUM(l_qty), COUNT(o_total), SUM(c_bal), MIN(r_name), MAX(l_price)
         FROM {from}",
        from,
        wide,
        true,
    );
    assert_eq!(n, 1);
    // Grouped by a column of one leaf, aggregating others, HAVING on an aggregate and
    // ORDER BY a column that is not selected.
    let n = same(
        &mut s,
        "SELECT n_name, COUNT(*) AS lines, SUM(l_price * l_qty) AS value, AVG(c_bal) AS bal
         FROM {from} WHERE o_day < 20
         GROUP BY n_name, n_id HAVING COUNT(DISTINCT o_id) > 5 ORDER BY n_id DESC",
        from,
        wide,
        true,
    );
    assert!(n > 3, "{n} groups");
    // A grouping of several leaves' columns.
    let n = same(
        &mut s,
        "SELECT r_name, o_day, COUNT(*), SUM(o_total) FROM {from}
         GROUP BY r_name, o_day ORDER BY r_name, o_day",
        from,
        wide,
        true,
    );
    assert!(n > 30, "{n} groups");
}

#[test]
fn projections_over_joins_match_the_join_of_every_column() {
    let (_dir, mut s) = loaded();
    let (wide, from) = JOINS[0];
    // ORDER BY a column not selected, unique order so that the rows' order is defined.
    let n = same(
        &mut s,
        "SELECT c_name, o_total, l_qty FROM {from} WHERE r_name = 'EAST' AND l_no = 2
         ORDER BY o_id, l_no",
        from,
        wide,
        true,
    );
    assert!(n > 100, "{n} rows");
    // TOP with an ORDER BY, and TOP without one (compared by count: any rows will do).
    same(
        &mut s,
        "SELECT TOP (7) n_name, c_id, o_id, l_no, l_price FROM {from}
         ORDER BY l_price DESC, o_id, l_no",
        from,
        wide,
        true,
    );
    let top = ok(&mut s, &format!("SELECT TOP (5) c_name, l_no FROM {from}"));
    assert_eq!(top.results[0].rows.len(), 5);
    // An expression of several leaves' columns, and a column named by a subquery only.
    same(
        &mut s,
        "SELECT o_id, l_no, CONCAT(n_name, ':', c_name) AS who, l_price * l_qty AS v,
                (SELECT COUNT(*) FROM dbo.line x WHERE x.l_oid = o_id AND x.l_no <= l_no) AS k
         FROM {from} WHERE c_id % 10 = 3",
        from,
        wide,
        false,
    );
    // SELECT * and t.* after a join keep every column, in the FROM clause's order.
    let star = result(&ok(&mut s, &format!("SELECT * FROM {from} WHERE o_id = 40")));
    let kept = result(&ok(&mut s, &format!("SELECT * FROM {wide} WHERE o_id = 40")));
    assert_eq!(star, kept);
    assert_eq!(star.0.len(), 3 + 4 + 5 + 5 + 5);
    let some = result(&ok(
        &mut s,
        "SELECT c.*, l.l_no FROM dbo.cust c JOIN dbo.ord o ON o.o_cid = c.c_id
         JOIN dbo.line l ON l.l_oid = o.o_id WHERE o.o_id = 40 ORDER BY l.l_no",
    ));
    assert_eq!(some.0, ["c_id", "c_nid", "c_name", "c_bal", "c_note", "l_no"]);
    assert_eq!(some.1.len(), 1);
}

#[test]
fn outer_and_comma_joins_match_the_join_of_every_column() {
    let (_dir, mut s) = loaded();
    let (wide, from) = JOINS[1];
    // Customers without a nation, nations without a region: NULL-extended, then grouped.
    let n = same(
        &mut s,
        "SELECT r_name, COUNT(*), COUNT(n_name), SUM(o_total), MAX(c_name) FROM {from}
         GROUP BY r_name",
        from,
        wide,
        false,
    );
    assert_eq!(n, 3, "EAST, WEST and the customers no region reaches");
    same(
        &mut s,
        "SELECT c_id, n_name, r_name, o_id FROM {from} WHERE r_name IS NULL ORDER BY o_id",
        from,
        wide,
        true,
    );
    let (wide, from) = JOINS[2];
    same(
        &mut s,
        "SELECT n_name, SUM(o_total), COUNT(*) FROM {from} GROUP BY n_name
         HAVING SUM(o_total) > 100 ORDER BY n_name",
        &from.replace(" WHERE ", " WHERE o_day > 3 AND "),
        &format!("{wide} WHERE o_day > 3"),
        true,
    );
    // A fourth table joined outer to the comma join's rows.
    let rows = result(&ok(
        &mut s,
        "SELECT n.n_name, COUNT(l.l_no) FROM dbo.nation n, dbo.cust c, dbo.ord o
         LEFT JOIN dbo.line l ON l.l_oid = o.o_id AND l.l_no = 4
         WHERE c.c_nid = n.n_id AND o.o_cid = c.c_id GROUP BY n.n_name ORDER BY n.n_name",
    ));
    let expected = result(&ok(
        &mut s,
        "SELECT n_name, SUM(CASE WHEN o_id % 4 = 3 THEN 1 ELSE 0 END) FROM #comma
         GROUP BY n_name ORDER BY n_name",
    ));
    assert_eq!(rows, expected);
}

#[test]
fn a_name_of_no_column_is_still_an_error_over_a_join() {
    let (_dir, mut s) = loaded();
    let out =
        run(&mut s, "SELECT COUNT(*), SUM(no_such) FROM dbo.cust JOIN dbo.ord ON o_cid = c_id");
    assert_eq!(errors(&out), [207]);
    // A name two leaves have, unqualified: ambiguous, as SQL Server says.
    let out = run(
        &mut s,
        "SELECT COUNT(*) FROM dbo.cust a JOIN dbo.cust b ON a.c_id = b.c_nid WHERE c_bal > 1",
    );
    assert_eq!(errors(&out), [209]);
    let v = ok(
        &mut s,
        "SELECT COUNT(*) FROM dbo.cust a JOIN dbo.cust b ON a.c_id = b.c_nid WHERE b.c_bal > 1",
    );
    assert!(matches!(v.results[0].rows[0][0], Value::Int(n) if n > 100));
}
