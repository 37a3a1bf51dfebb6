//! A scan whose filter begins with comparisons of a DATE column with constant dates passes
//! over the rows outside their range undecoded (`RowCursor::reject_days`,
//! docs/query-processing.md): the rows kept, and the errors raised, are those of the same
//! conjuncts checked row by row, for every comparison operator, BETWEEN, NULL dates, rows
//! written before the DATE column was added, ranges that keep nothing, and constants that
//! are not dates.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use crate::support;
use support::{errors, ok, rows_text, run, session};

/// `dbo.t`: 3,000 rows; `d` over about two years with NULLs, added after the first 500
/// rows were written (they are shorter, and some of them are given a date afterwards), and
/// `e` a second DATE.
const DATA: &str = "
    CREATE DATABASE d; USE d;
    CREATE TABLE dbo.t (id INT PRIMARY KEY, v INT NOT NULL, note VARCHAR(60) NULL);
    WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 500)
    INSERT INTO dbo.t SELECT i, i % 17, REPLICATE('x', i % 50) FROM n OPTION (MAXRECURSION 600);
    ALTER TABLE dbo.t ADD d DATE NULL, e DATE NULL;
    UPDATE dbo.t SET d = DATEADD(DAY, id % 800, '1993-06-01') WHERE id % 3 = 0;
    WITH n AS (SELECT 501 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
    INSERT INTO dbo.t SELECT i, i % 17, REPLICATE('y', i % 40),
        CASE WHEN i % 37 = 0 THEN NULL ELSE DATEADD(DAY, i % 800, '1993-06-01') END,
        CASE WHEN i % 41 = 0 THEN NULL ELSE DATEADD(DAY, i % 90, '1994-01-01') END
    FROM n OPTION (MAXRECURSION 3000);";

/// Each filter of leading DATE conjuncts, and what follows them.
const FILTERS: &[&str] = &[
    "d >= '1994-01-01' AND d < '1995-01-01' AND v < 9",
    "d > '1994-01-01' AND d <= '1994-02-01'",
    "d = '1994-03-15'",
    "d BETWEEN '1993-12-31' AND '1994-01-02' AND v <> 3",
    "d >= '1994-01-01' AND e < '1994-02-01' AND d < '1994-06-30'",
    "d < '0001-01-01'",
    "d <= '9999-12-31'",
    "d > '1995-08-09'",
    "d >= '1994-01-01' AND d < '1993-01-01'",
    "d >= CAST('1994-01-01T12:00:00' AS DATETIME) AND d < '1994-01-05'",
    "'1994-06-01' > d AND d >= '1994-05-01'",
    "d >= @lo AND d < DATEADD(MONTH, 1, @lo)",
    // Conjuncts that cannot fail before the dates: passed over to them.
    "v IN (1, 2, 3, 16) AND d < e AND d >= '1994-01-01' AND d < '1994-09-01'",
    "note IN ('xx', 'yyyy', 'x') AND v <> 4 AND d BETWEEN '1993-07-01' AND '1995-07-01'",
    "e <> '1994-01-05' AND d > '1994-12-01' AND e > d",
    "d > e AND note > 'xxxx' AND v >= 2 AND d < '1994-03-01' AND LEN(note) > 3",
];

/// The rows of `filter` through the scan, against the same conjuncts behind one that
/// might fail (`id / 1`, a division: it ends the leading run, so every row is decoded and
/// checked).
#[test]
fn leading_date_conjuncts_keep_the_rows_the_conjuncts_keep() {
    let (_dir, mut s) = session();
    ok(&mut s, DATA);
    let mut kept = 0;
    for filter in FILTERS {
        let declare = "DECLARE @lo DATE = '1994-04-01';";
        let fast = rows_text(
            &mut s,
            &format!("{declare} SELECT id, d, e, v FROM dbo.t WHERE {filter} ORDER BY id"),
        );
        let checked = rows_text(
            &mut s,
            &format!(
                "{declare} SELECT id, d, e, v FROM dbo.t WHERE id / 1 > -1 AND {filter} ORDER BY id"
            ),
        );
        assert_eq!(fast, checked, "{filter}");
        kept += fast.len();
    }
    // Boundaries land on rows: the filters keep some rows and drop others.
    assert!(kept > 1000, "{kept}");
    let year = rows_text(
        &mut s,
        "SELECT COUNT(*) FROM dbo.t WHERE d >= '1994-01-01' AND d < '1995-01-01'",
    );
    let by_text =
        rows_text(&mut s, "SELECT COUNT(*) FROM dbo.t WHERE CONVERT(CHAR(4), d, 112) = '1994'");
    assert_eq!(year, by_text);
}

/// A constant that does not convert to a date fails as the conjunct checked row by row
/// does (241), whether or not it leads the filter.
#[test]
fn a_constant_that_is_no_date_fails_as_before() {
    let (_dir, mut s) = session();
    ok(&mut s, DATA);
    for sql in [
        "SELECT COUNT(*) FROM dbo.t WHERE d >= 'not a date'",
        "SELECT COUNT(*) FROM dbo.t WHERE id / 1 > -1 AND d >= 'not a date'",
        "SELECT COUNT(*) FROM dbo.t WHERE v IN (1, 2) AND d >= 'not a date'",
    ] {
        assert_eq!(errors(&run(&mut s, sql)), vec![241], "{sql}");
    }
}

/// A conjunct that can fail ends the run of conjuncts passed over: the rows it fails on
/// are still checked, whatever date the conjuncts after it ask for. One after the dates
/// is never reached for a row they reject, checked row by row or passed over.
#[test]
fn a_conjunct_that_can_fail_is_reached_as_before() {
    let (_dir, mut s) = session();
    ok(&mut s, DATA);
    for prefix in ["", "id / 1 > -1 AND "] {
        let before = format!(
            "SELECT COUNT(*) FROM dbo.t WHERE {prefix}v IN (1, 2) AND CAST(note AS INT) = 1 \
             AND d >= '2100-01-01'"
        );
        assert_eq!(errors(&run(&mut s, &before)), vec![245], "{before}");
        let after = format!(
            "SELECT COUNT(*) FROM dbo.t WHERE {prefix}v IN (1, 2) AND d >= '2100-01-01' \
             AND CAST(note AS INT) = 1"
        );
        assert_eq!(rows_text(&mut s, &after), vec![vec!["Int(0)".to_string()]], "{after}");
    }
}
