//! A column's collation is kept in the catalog: after a restart (and a crash recovery) the
//! column still shows it, compares by it, and its index still keys by it, so a unique index
//! on a case-sensitive column keeps holding `'a'` and `'A'` and refusing a second `'a'`.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{errors, ok, restart, run, scalar};

/// What must hold of `t`, whose codes in their collation's order are `codes`.
fn checks(s: &mut Session, codes: &str) {
    assert_eq!(
        scalar(s, "SELECT collation_name FROM sys.columns WHERE name = 'code'"),
        Value::NStr("Latin1_General_CS_AS".into())
    );
    assert_eq!(
        scalar(s, "SELECT collation_name FROM sys.columns WHERE name = 'plain'"),
        Value::NStr("SQL_Latin1_General_CP1_CI_AS".into())
    );
    // The seek on the primary key finds by case; the plain column ignores it.
    assert_eq!(scalar(s, "SELECT n FROM t WHERE code = 'A'"), Value::Int(2));
    assert_eq!(scalar(s, "SELECT COUNT(*) FROM t WHERE plain = 'X'"), Value::Int(2));
    assert_eq!(errors(&run(s, "INSERT t VALUES ('a', 9, 'z')")), vec![2627]);
    let ordered = "SELECT STRING_AGG(code, ',') WITHIN GROUP (ORDER BY code) FROM t";
    assert_eq!(scalar(s, ordered), Value::Str(codes.into()));
}

#[test]
fn a_column_keeps_its_collation_across_a_restart_and_a_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE TABLE t (code VARCHAR(10) COLLATE Latin1_General_CS_AS PRIMARY KEY, n INT, \
         plain VARCHAR(10)); INSERT t VALUES ('b', 3, 'y'), ('A', 2, 'X'), ('a', 1, 'x')",
    );
    checks(&mut s, "a,A,b");

    let (instance, mut s) = restart(dir.path(), s, instance);
    checks(&mut s, "a,A,b");
    // Not closed: the next open recovers the catalog and the rows from the log.
    ok(&mut s, "INSERT t VALUES ('B', 4, 'w')");
    drop(s);
    drop(instance);

    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    checks(&mut s, "a,A,b,B");
    assert_eq!(scalar(&mut s, "SELECT n FROM t WHERE code = 'B'"), Value::Int(4));
    drop(s);
    instance.close().unwrap();
}

/// MIN and MAX OVER, ANY and ALL, a CTE's columns and the LIKE prefix seek go by a text
/// column's own collation, as comparisons, grouped MIN/MAX and sorts already did: under a
/// binary collation `'A' < 'B' < 'a' < 'b'`, under a case-sensitive one `'A' <> 'a'`.
#[test]
fn window_aggregates_quantified_subqueries_ctes_and_like_seeks_use_the_column_collation() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE TABLE b (code VARCHAR(10) COLLATE Latin1_General_BIN); \
         INSERT b VALUES ('a'), ('B'), ('A'), ('b'); \
         CREATE TABLE cs (code VARCHAR(10) COLLATE Latin1_General_CS_AS); INSERT cs VALUES ('a')",
    );
    // MIN/MAX OVER agree with the grouped MIN/MAX: code point order, not the default's.
    assert_eq!(
        scalar(&mut s, "SELECT TOP 1 MIN(code) OVER () + MAX(code) OVER () FROM b"),
        Value::Str("Ab".into())
    );
    assert_eq!(
        scalar(
            &mut s,
            "SELECT TOP 1 MIN(code) OVER (ORDER BY code ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) \
             FROM b ORDER BY code DESC"
        ),
        Value::Str("a".into())
    );
    assert_eq!(scalar(&mut s, "SELECT MIN(code) + MAX(code) FROM b"), Value::Str("Ab".into()));
    // ANY / ALL compare under the subquery column's collation.
    assert_eq!(
        scalar(&mut s, "SELECT CASE WHEN 'A' = ANY (SELECT code FROM cs) THEN 1 ELSE 0 END"),
        Value::Int(0)
    );
    assert_eq!(
        scalar(&mut s, "SELECT CASE WHEN 'A' <> ALL (SELECT code FROM cs) THEN 1 ELSE 0 END"),
        Value::Int(1)
    );
    assert_eq!(
        scalar(&mut s, "SELECT CASE WHEN 'Z' > ALL (SELECT code FROM b) THEN 1 ELSE 0 END"),
        Value::Int(0)
    );
    // Two columns of different collations meeting in ANY: 468, as in a comparison.
    let clash = run(&mut s, "SELECT 1 FROM b WHERE code = ANY (SELECT code FROM cs)");
    assert_eq!(errors(&clash), vec![468]);
    // A CTE's column keeps the collation of the column it came from.
    assert_eq!(
        scalar(&mut s, "WITH c AS (SELECT code FROM cs) SELECT COUNT(*) FROM c WHERE code = 'A'"),
        Value::Int(0)
    );
    assert_eq!(
        scalar(
            &mut s,
            "WITH c AS (SELECT code FROM b) \
             SELECT STRING_AGG(code, '') WITHIN GROUP (ORDER BY code) FROM c"
        ),
        Value::Str("ABab".into())
    );

    // The LIKE prefix seek, on keys of a binary, a case-sensitive and an accent-insensitive
    // collation: the same rows as the scan.
    for (collation, pattern, expected) in [
        ("Latin1_General_BIN", "a%", "a1,ab,abc"),
        ("Latin1_General_BIN2", "A%", "A2,AB"),
        ("Latin1_General_CS_AS", "ab%", "ab,abc"),
        ("Latin1_General_CI_AI", "eb%", "Éb,eb,éb,EB"),
        ("Latin1_General_100_CI_AS", "AB%", "ab,AB,abc"),
        ("SQL_Latin1_General_CP1_CI_AS", "é%", "éb,Éb"),
    ] {
        ok(
            &mut s,
            &format!(
                "DROP TABLE IF EXISTS k; \
                 CREATE TABLE k (code NVARCHAR(10) COLLATE {collation}, n INT PRIMARY KEY); \
                 CREATE INDEX ix_code ON k (code); \
                 INSERT k VALUES (N'a1', 1), (N'A2', 2), (N'ab', 3), (N'AB', 4), (N'abc', 5), \
                 (N'b', 6), (N'eb', 7), (N'éb', 8), (N'Éb', 9), (N'EB', 10), (N'e', 11)"
            ),
        );
        let seek = format!(
            "SELECT STRING_AGG(code, ',') WITHIN GROUP (ORDER BY n) FROM k WHERE code LIKE N'{pattern}'"
        );
        let scan = format!(
            "SELECT STRING_AGG(code, ',') WITHIN GROUP (ORDER BY n) FROM k \
             WHERE (code + N'') COLLATE {collation} LIKE N'{pattern}'"
        );
        let found = scalar(&mut s, &seek);
        assert_eq!(found, scalar(&mut s, &scan), "{collation}");
        let mut want: Vec<&str> = expected.split(',').collect();
        let Value::NStr(got) = &found else { panic!("{collation}: {found:?}") };
        let mut got: Vec<&str> = got.split(',').collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "{collation}");
        let plan = run(&mut s, &format!("SET SHOWPLAN_TEXT ON; {seek}; SET SHOWPLAN_TEXT OFF"));
        let text = format!("{:?}", plan.results);
        assert!(text.contains("LIKE prefix"), "{collation}: no seek in {text}");
    }
    drop(s);
    instance.close().unwrap();
}
