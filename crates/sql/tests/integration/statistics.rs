//! `SET STATISTICS IO ON` and `SET STATISTICS TIME ON`: the messages SQL Server sends after
//! each statement, with page reads counted by the buffer pool.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::io_lines;

fn run(s: &mut Session, sql: &str) -> Collected {
    let mut out = Collected::default();
    s.execute_batch(sql, &mut out);
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    out
}

fn setup(dir: &std::path::Path) -> Arc<Instance> {
    let instance = Instance::open(dir, InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    run(
        &mut s,
        "CREATE DATABASE d; USE d;
         CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(200) NOT NULL, w INT);
         INSERT INTO t SELECT value, REPLICATE('x', 150), value % 7 FROM GENERATE_SERIES(1, 3000);
         CREATE TABLE u (id INT PRIMARY KEY, t_id INT NOT NULL);
         INSERT INTO u SELECT value, value * 3 FROM GENERATE_SERIES(1, 10);
         CHECKPOINT;",
    );
    instance
}

#[test]
fn statistics_io_reports_each_table_a_statement_read() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut s = Session::new(Arc::clone(&instance));
    run(&mut s, "USE d; SET STATISTICS IO ON;");

    // A scan reads every leaf page: 3,000 rows of 160 bytes are more than 50 pages.
    let scan = io_lines(&run(&mut s, "SELECT COUNT(*) FROM t WHERE w = 3;"));
    assert_eq!(scan.len(), 1, "{scan:?}");
    assert_eq!((scan[0].0.as_str(), scan[0].1), ("t", 1));
    assert!(scan[0].2 > 50, "{scan:?}");

    // A seek on the key reads one path from the root.
    let seek = io_lines(&run(&mut s, "SELECT v FROM t WHERE id = 1234;"));
    assert_eq!(seek.len(), 1);
    assert!((1..=4).contains(&seek[0].2), "{seek:?}");

    // Index nested loops: the outer table read once, the inner sought once per outer row,
    // each table on its own line in the order first read.
    let join = io_lines(&run(&mut s, "SELECT u.id, t.w FROM u JOIN t ON t.id = u.t_id;"));
    let names: Vec<&str> = join.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(names, ["u", "t"], "{join:?}");
    assert_eq!(join[0].1, 1);
    assert_eq!(join[1].1, 10, "{join:?}");

    // A statement that reads no table sends no line; OFF stops them.
    assert!(io_lines(&run(&mut s, "SELECT 1;")).is_empty());
    run(&mut s, "SET STATISTICS IO OFF;");
    assert!(io_lines(&run(&mut s, "SELECT COUNT(*) FROM t;")).is_empty());
}

#[test]
fn physical_reads_are_the_pages_the_pool_did_not_hold() {
    let dir = tempfile::tempdir().unwrap();
    drop(setup(dir.path()));
    // Opened again, the pool holds none of t's leaf pages: the first scan reads them from
    // the file, the second finds them cached.
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    run(&mut s, "USE d; SET STATISTICS IO ON;");
    let first = io_lines(&run(&mut s, "SELECT COUNT(*) FROM t;"));
    let second = io_lines(&run(&mut s, "SELECT COUNT(*) FROM t;"));
    assert!(first[0].3 > 50, "{first:?}");
    assert_eq!(second[0].3, 0, "{second:?}");
    assert_eq!(first[0].2, second[0].2, "the same pages either way");
}

#[test]
fn statistics_time_reports_each_statement_and_each_batch_parse() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut s = Session::new(Arc::clone(&instance));
    run(&mut s, "USE d; SET STATISTICS TIME ON;");
    let out = run(&mut s, "SELECT COUNT(*) FROM t; SELECT 2;");
    let numbers: Vec<i32> = out.messages.iter().map(|m| m.number).collect();
    assert_eq!(numbers, [3613, 3612, 3612], "{:?}", out.messages);
    let time = &out.messages[1].message;
    assert!(
        time.starts_with(" SQL Server Execution Times:\n   CPU time = ")
            && time.contains(" ms,  elapsed time = ")
            && time.ends_with(" ms."),
        "{time:?}"
    );
    assert!(out.messages[0].message.starts_with("SQL Server parse and compile time: "));
    run(&mut s, "SET STATISTICS TIME OFF;");
    let out = run(&mut s, "SELECT 1;");
    assert!(out.messages.iter().all(|m| m.number != 3612 && m.number != 3613));
}
