//! Temporary procedures: `#p` belongs to the session that creates it and vanishes with it;
//! `##p` is found by every session and vanishes with its creator.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{errors, restart, run, scalar};

fn instance() -> (tempfile::TempDir, Arc<Instance>) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    assert!(errors(&run(&mut s, "CREATE DATABASE d")).is_empty());
    (dir, instance)
}

/// The procedures in tempdb whose name starts with `prefix`.
fn in_tempdb(s: &mut Session, prefix: &str) -> Value {
    scalar(
        s,
        &format!(
            "SELECT COUNT(*) FROM tempdb.sys.objects WHERE type = 'P' AND name LIKE '{prefix}%'"
        ),
    )
}

#[test]
fn a_local_temporary_procedure_belongs_to_its_session_and_vanishes_with_it() {
    let (_dir, instance) = instance();
    let mut a = Session::new(Arc::clone(&instance));
    let mut b = Session::new(Arc::clone(&instance));
    let out = run(&mut a, "USE d");
    assert!(errors(&out).is_empty());
    let out = run(&mut a, "CREATE PROCEDURE #answer @x INT AS SELECT @x + 1 AS v");
    assert!(errors(&out).is_empty(), "{:?}", out.messages);
    // Found from any database of the session, and by OBJECT_ID.
    assert_eq!(scalar(&mut a, "EXEC #answer 41"), Value::Int(42));
    assert_eq!(scalar(&mut a, "USE master; EXEC #answer 1"), Value::Int(2));
    assert_eq!(
        scalar(&mut a, "SELECT CASE WHEN OBJECT_ID('tempdb..#answer') IS NULL THEN 0 ELSE 1 END"),
        Value::Int(1)
    );
    assert_eq!(in_tempdb(&mut a, "#answer"), Value::Int(1));
    // Another session neither sees it nor collides with it.
    assert_eq!(errors(&run(&mut b, "EXEC #answer 1")), vec![2812]);
    let out = run(&mut b, "CREATE PROCEDURE #answer AS SELECT 'b' AS v");
    assert!(errors(&out).is_empty(), "{:?}", out.messages);
    assert_eq!(scalar(&mut b, "EXEC #answer"), Value::Str("b".into()));
    assert_eq!(in_tempdb(&mut a, "#answer"), Value::Int(2));
    // ALTER keeps it the session's; CREATE again is 2714.
    let out = run(&mut a, "ALTER PROCEDURE #answer @x INT AS SELECT @x * 2 AS v");
    assert!(errors(&out).is_empty(), "{:?}", out.messages);
    assert_eq!(scalar(&mut a, "EXEC #answer 21"), Value::Int(42));
    assert_eq!(errors(&run(&mut a, "CREATE PROCEDURE #answer AS RETURN")), vec![2714]);

    a.close();
    assert_eq!(in_tempdb(&mut b, "#answer"), Value::Int(1));
    assert_eq!(scalar(&mut b, "EXEC #answer"), Value::Str("b".into()));
    // DROP, and DROP IF EXISTS of one that is gone.
    assert!(errors(&run(&mut b, "DROP PROCEDURE #answer")).is_empty());
    assert!(errors(&run(&mut b, "DROP PROCEDURE IF EXISTS #answer")).is_empty());
    assert_eq!(errors(&run(&mut b, "DROP PROCEDURE #answer")), vec![3701]);
    assert_eq!(in_tempdb(&mut b, "#answer"), Value::Int(0));
}

#[test]
fn a_temporary_procedure_created_in_a_rolled_back_transaction_can_be_created_again() {
    let (_dir, instance) = instance();
    let mut a = Session::new(Arc::clone(&instance));
    let out = run(&mut a, "BEGIN TRAN");
    assert!(errors(&out).is_empty());
    assert!(errors(&run(&mut a, "CREATE PROCEDURE #p AS SELECT 1 AS v")).is_empty());
    assert!(errors(&run(&mut a, "ROLLBACK")).is_empty());
    assert_eq!(errors(&run(&mut a, "EXEC #p")), vec![2812]);
    assert!(errors(&run(&mut a, "CREATE PROCEDURE #p AS SELECT 2 AS v")).is_empty());
    assert_eq!(scalar(&mut a, "EXEC #p"), Value::Int(2));
}

#[test]
fn a_global_temporary_procedure_is_shared_and_vanishes_with_its_creator() {
    let (_dir, instance) = instance();
    let mut a = Session::new(Arc::clone(&instance));
    let mut b = Session::new(Arc::clone(&instance));
    let out = run(&mut a, "CREATE PROCEDURE ##shared AS SELECT 7 AS v");
    assert!(errors(&out).is_empty(), "{:?}", out.messages);
    assert_eq!(scalar(&mut b, "USE d; EXEC ##shared"), Value::Int(7));
    assert_eq!(in_tempdb(&mut b, "##shared"), Value::Int(1));
    assert_eq!(errors(&run(&mut b, "CREATE PROCEDURE ##shared AS RETURN")), vec![2714]);
    a.close();
    assert_eq!(errors(&run(&mut b, "EXEC ##shared")), vec![2812]);
    assert_eq!(in_tempdb(&mut b, "##shared"), Value::Int(0));
}

#[test]
fn temporary_procedures_do_not_outlive_a_restart() {
    let (dir, instance) = instance();
    let mut a = Session::new(Arc::clone(&instance));
    assert!(errors(&run(&mut a, "CREATE PROCEDURE #p AS SELECT 1 AS v")).is_empty());
    assert!(errors(&run(&mut a, "CREATE PROCEDURE ##g AS SELECT 1 AS v")).is_empty());
    let mut other = Session::new(Arc::clone(&instance));
    assert_eq!(in_tempdb(&mut other, "#"), Value::Int(2));
    drop(other);
    let (_instance, mut s) = restart(dir.path(), a, instance);
    assert_eq!(in_tempdb(&mut s, "#"), Value::Int(0));
    assert_eq!(errors(&run(&mut s, "EXEC #p")), vec![2812]);
    assert_eq!(errors(&run(&mut s, "EXEC ##g")), vec![2812]);
}
