//! A column's collation is kept in the catalog: after a restart (and a crash recovery) the
//! column still shows it, compares by it, and its index still keys by it, so a unique index
//! on a case-sensitive column keeps holding `'a'` and `'A'` and refusing a second `'a'`.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

mod support;
use support::{ok, run, scalar};

fn errors(out: &Collected) -> Vec<i32> {
    out.errors().map(|e| e.number).collect()
}

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
    drop(s);
    instance.close().unwrap();
    drop(instance);

    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
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
