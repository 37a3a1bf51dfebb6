//! Modules and tables whose definitions are larger than one catalog entry (a tree value is at
//! most 4,096 bytes): real procedures (a DBA's maintenance procedures run to hundreds of
//! kilobytes), views, functions, triggers and wide tables are created, altered larger and
//! smaller, rolled back, dropped, and survive a restart.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{ok, restart, run, scalar};

/// A comment of `n` bytes, so a module's text is as long as wanted.
fn filler(n: usize) -> String {
    format!("/* {} */", "x".repeat(n))
}

/// `CREATE`s a procedure of about `size` bytes of text returning `tag`.
fn procedure(verb: &str, size: usize, tag: i32) -> String {
    format!("{verb} PROCEDURE dbo.big_proc AS\n{}\nSELECT {tag} AS tag", filler(size))
}

/// The definitions' lengths and what each object returns: the state a restart must keep.
fn state(s: &mut Session) -> Vec<Vec<Value>> {
    let mut rows = ok(
        s,
        "USE d; SELECT o.name, LEN(m.definition) FROM sys.sql_modules m \
         JOIN sys.objects o ON o.object_id = m.object_id ORDER BY o.name",
    )
    .results
    .last()
    .unwrap()
    .rows
    .clone();
    rows.push(vec![scalar(s, "USE d; EXEC dbo.big_proc")]);
    rows.push(vec![scalar(s, "USE d; SELECT v FROM dbo.big_view")]);
    rows.push(vec![scalar(s, "USE d; SELECT dbo.big_fn(2)")]);
    rows.push(vec![scalar(
        s,
        "USE d; SELECT COUNT(*) FROM sys.columns WHERE object_id = OBJECT_ID('dbo.wide')",
    )]);
    rows
}

#[test]
fn definitions_larger_than_a_catalog_entry_work_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(&mut s, &procedure("CREATE", 12_000, 1));
    assert_eq!(scalar(&mut s, "EXEC dbo.big_proc"), Value::Int(1));
    // Larger, then smaller than one entry, then larger again: the entries it no longer
    // needs go, the ones it needs come.
    ok(&mut s, &procedure("ALTER", 300_000, 2));
    assert_eq!(scalar(&mut s, "EXEC dbo.big_proc"), Value::Int(2));
    ok(&mut s, &procedure("ALTER", 10, 3));
    assert_eq!(scalar(&mut s, "EXEC dbo.big_proc"), Value::Int(3));
    ok(&mut s, &procedure("ALTER", 9_000, 4));
    // A rolled-back ALTER gives back the whole old definition.
    ok(&mut s, &format!("BEGIN TRAN; EXEC('{}'); ROLLBACK", procedure("ALTER", 50_000, 5)));
    assert_eq!(scalar(&mut s, "EXEC dbo.big_proc"), Value::Int(4));
    ok(&mut s, &format!("CREATE VIEW dbo.big_view AS SELECT 7 AS v {}", filler(8_000)));
    ok(
        &mut s,
        &format!(
            "CREATE FUNCTION dbo.big_fn (@x INT) RETURNS INT AS BEGIN {} RETURN @x * 21 END",
            filler(20_000)
        ),
    );
    // A table of many columns, with a trigger larger than an entry.
    let columns: Vec<String> =
        (1..=400).map(|i| format!("a_rather_long_column_name_{i} INT NULL")).collect();
    ok(&mut s, &format!("CREATE TABLE dbo.wide (id INT PRIMARY KEY, {})", columns.join(", ")));
    ok(
        &mut s,
        &format!(
            "CREATE TRIGGER dbo.wide_audit ON dbo.wide AFTER INSERT AS {} \
             UPDATE w SET a_rather_long_column_name_400 = 400 FROM dbo.wide w \
             JOIN inserted i ON i.id = w.id",
            filler(6_000)
        ),
    );
    ok(&mut s, "INSERT INTO dbo.wide (id) VALUES (1)");
    assert_eq!(
        scalar(&mut s, "SELECT a_rather_long_column_name_400 FROM dbo.wide WHERE id = 1"),
        Value::Int(400)
    );
    // A dropped large object leaves nothing behind: a new one of the same name is created.
    ok(&mut s, &format!("CREATE PROCEDURE dbo.gone AS {} SELECT 1", filler(30_000)));
    ok(&mut s, "DROP PROCEDURE dbo.gone");
    ok(&mut s, &format!("CREATE PROCEDURE dbo.gone AS {} SELECT 2", filler(5_000)));
    ok(&mut s, "DROP PROCEDURE dbo.gone");
    let before = state(&mut s);
    assert_eq!(
        before[before.len() - 4..],
        [vec![Value::Int(4)], vec![Value::Int(7)], vec![Value::Int(42)], vec![Value::Int(401)],]
    );

    let (_instance, mut s) = restart(dir.path(), s, instance);
    assert_eq!(state(&mut s), before);
    ok(&mut s, "USE d; INSERT INTO dbo.wide (id) VALUES (2)");
    assert_eq!(
        scalar(&mut s, "SELECT a_rather_long_column_name_400 FROM dbo.wide WHERE id = 2"),
        Value::Int(400)
    );
    ok(&mut s, "DROP TABLE dbo.wide");
    assert_eq!(run(&mut s, "SELECT * FROM dbo.wide").errors().next().unwrap().number, 208);
}

/// A table whose definition spans several catalog entries keeps its identity high-water mark
/// across a restart: the mark's system update rewrites only the entries whose bytes changed.
#[test]
fn a_wide_tables_identity_mark_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let columns: Vec<String> =
        (1..=400).map(|i| format!("a_rather_long_column_name_{i} INT NULL")).collect();
    ok(
        &mut s,
        &format!("CREATE TABLE dbo.wide (id INT IDENTITY PRIMARY KEY, {})", columns.join(", ")),
    );
    ok(
        &mut s,
        "INSERT dbo.wide (a_rather_long_column_name_1) SELECT value FROM GENERATE_SERIES(1, 2500)",
    );
    assert_eq!(scalar(&mut s, "SELECT MAX(id) FROM dbo.wide"), Value::Int(2500));

    let (_instance, mut s) = restart(dir.path(), s, instance);
    ok(&mut s, "INSERT dbo.wide (a_rather_long_column_name_1) VALUES (0)");
    let Value::Int(next) = scalar(&mut s, "SELECT MAX(id) FROM dbo.wide") else { panic!() };
    assert!(next > 2500, "an identity value was handed out again: {next}");
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM dbo.wide"), Value::Int(2501));
}
