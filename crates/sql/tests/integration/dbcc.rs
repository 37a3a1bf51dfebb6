//! `DBCC CHECKTABLE` / `CHECKDB` on a real data file, healthy and damaged, and
//! `DBCC SQLPERF(LOGSPACE)`, `LOGINFO` and `DROPCLEANBUFFERS`.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::run;

fn numbers(out: &Collected) -> Vec<i32> {
    out.messages.iter().map(|m| m.number).collect()
}

/// An instance with database `d` holding `dbo.t` (300 rows, a primary key and a second index),
/// checkpointed so that its pages are on disk.
fn setup(dir: &std::path::Path) -> Arc<Instance> {
    let instance = Instance::open(dir, InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(
        &mut s,
        "CREATE DATABASE d; USE d;
         CREATE TABLE dbo.t (id INT PRIMARY KEY, v VARCHAR(200) NOT NULL, w INT);
         CREATE INDEX t_w ON dbo.t (w);
         INSERT INTO dbo.t SELECT value, REPLICATE('x', 150), value % 7 FROM GENERATE_SERIES(1, 300);
         CHECKPOINT;",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    instance
}

#[test]
fn a_healthy_table_and_database_pass_with_sql_servers_messages() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(&mut s, "USE d; DBCC CHECKTABLE ('dbo.t');");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let texts: Vec<&str> = out.messages.iter().map(|m| m.message.as_str()).collect();
    assert!(texts.contains(&"DBCC results for 't'."), "{texts:?}");
    assert!(texts.iter().any(|t| t.starts_with("There are 300 rows in ")), "{texts:?}");
    assert_eq!(numbers(&out).last(), Some(&2528));

    let out = run(&mut s, "DBCC CHECKDB (d);");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert!(out.messages.iter().any(|m| m.number == 8989
        && m.message
            == "CHECKDB found 0 allocation errors and 0 consistency errors in database 'd'."));

    let out = run(&mut s, "DBCC CHECKDB WITH NO_INFOMSGS; DBCC CHECKTABLE (t) WITH NO_INFOMSGS;");
    assert!(out.messages.is_empty(), "NO_INFOMSGS: {:?}", out.messages);

    let out = run(&mut s, "DBCC CHECKTABLE ('dbo.nosuch'); DBCC CHECKDB (nosuch); DBCC NOSUCH;");
    assert_eq!(numbers(&out), vec![2501, 2520, 2526]);
    s.close();
    instance.close().unwrap();
}

#[test]
fn a_damaged_page_is_reported_as_a_consistency_error_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let db = instance.database("d").unwrap();
    let Some(object) = db.find_object("dbo", "t") else { panic!("no table t") };
    let Object::Table(def) = &*object else { panic!("t is not a table") };
    // The primary key's root page (an internal page: 300 rows of 150 bytes fill several leaves).
    let root = def.indexes[0].root;
    drop(db);
    instance.close().unwrap();
    drop(instance);

    // Flip bytes in the middle of the root page: its checksum no longer matches.
    let mut file =
        std::fs::OpenOptions::new().read(true).write(true).open(dir.path().join("d.mdf")).unwrap();
    let at = u64::from(root) * 8192 + 4000;
    let mut byte = [0u8; 16];
    file.seek(SeekFrom::Start(at)).unwrap();
    file.read_exact(&mut byte).unwrap();
    for b in &mut byte {
        *b ^= 0x5a;
    }
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(&byte).unwrap();
    file.sync_all().unwrap();
    drop(file);

    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(&mut s, "USE d; DBCC CHECKTABLE ('dbo.t');");
    let found = numbers(&out);
    assert!(found.contains(&8939), "{:?}", out.messages);
    assert!(found.contains(&8990), "{:?}", out.messages);
    let out = run(&mut s, "DBCC CHECKDB WITH NO_INFOMSGS;");
    assert!(numbers(&out).contains(&8989), "the summary still comes: {:?}", out.messages);
    let out = run(&mut s, "SELECT 1;");
    assert!(out.errors().next().is_none(), "the session goes on: {:?}", out.messages);
    s.close();
    let _ = instance.close();
}

/// `DBCC DROPCLEANBUFFERS` after a CHECKPOINT: the next read of the table goes to its file,
/// as `SET STATISTICS IO` shows; before it, the same read found every page cached.
#[test]
fn dropcleanbuffers_makes_the_next_read_physical() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut s = Session::new(Arc::clone(&instance));
    let read = "SET STATISTICS IO ON; SELECT COUNT(*) FROM dbo.t; SET STATISTICS IO OFF;";
    let physical = |out: &Collected| support::io_lines(out)[0].3;
    run(&mut s, &format!("USE d; {read}"));
    assert_eq!(physical(&run(&mut s, read)), 0, "the table's pages are cached");
    let out = run(&mut s, "CHECKPOINT; DBCC DROPCLEANBUFFERS;");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert_eq!(numbers(&out).last(), Some(&2528));
    assert!(physical(&run(&mut s, read)) > 0, "the dropped pages are read from the file");
    assert_eq!(numbers(&run(&mut s, "DBCC DROPCLEANBUFFERS WITH NO_INFOMSGS;")), Vec::<i32>::new());
    assert_eq!(numbers(&run(&mut s, "DBCC DROPCLEANBUFFERS (nosuch);")), vec![2526]);
    s.close();
    instance.close().unwrap();
}

#[test]
fn sqlperf_logspace_lists_every_database_log() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(&mut s, "DBCC SQLPERF(LOGSPACE);");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let rs = &out.results[0];
    let names: Vec<&str> = rs.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Database Name", "Log Size (MB)", "Log Space Used (%)", "Status"]);
    let row = rs.rows.iter().find(|r| r[0] == Value::NStr("d".into())).unwrap();
    let (Value::Real(size), Value::Real(used)) = (&row[1], &row[2]) else { panic!("{row:?}") };
    assert!(*size > 0.0 && *used > 0.0 && *used <= 100.0, "{row:?}");
    let tempdb = rs.rows.iter().find(|r| r[0] == Value::NStr("tempdb".into())).unwrap();
    assert_eq!(tempdb[1], Value::Real(0.0), "tempdb keeps no log file");
    assert_eq!(numbers(&run(&mut s, "DBCC SQLPERF(NOSUCH);")), vec![2526]);
    s.close();
    instance.close().unwrap();
}

#[test]
fn loginfo_lists_the_same_segments_as_dm_db_log_info() {
    let dir = tempfile::tempdir().unwrap();
    let instance = setup(dir.path());
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(&mut s, "DBCC LOGINFO ('d');");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let rs = &out.results[0];
    let names: Vec<&str> = rs.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "RecoveryUnitId",
            "FileId",
            "FileSize",
            "StartOffset",
            "FSeqNo",
            "Status",
            "Parity",
            "CreateLSN"
        ]
    );
    let out = run(
        &mut s,
        "SELECT vlf_begin_offset, vlf_sequence_number, vlf_status FROM sys.dm_db_log_info(DB_ID('d'))",
    );
    let view: Vec<Vec<Value>> = out.results[0].rows.clone();
    let dbcc: Vec<Vec<Value>> = rs
        .rows
        .iter()
        .map(|r| {
            let Value::Int(seq) = r[4] else { panic!("{r:?}") };
            vec![r[3].clone(), Value::BigInt(seq.into()), r[5].clone()]
        })
        .collect();
    assert_eq!(dbcc, view);
    assert!(rs.rows.iter().any(|r| r[5] == Value::Int(2)), "a segment is in use: {:?}", rs.rows);
    assert_eq!(numbers(&run(&mut s, "DBCC LOGINFO (nosuch);")), vec![2520]);
    s.close();
    instance.close().unwrap();
}
