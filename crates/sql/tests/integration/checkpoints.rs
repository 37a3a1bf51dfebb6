//! When a database checkpoints by itself: once `checkpoint_log_bytes` (512 MiB by default) of
//! log was written since the last checkpoint's redo point, as PostgreSQL does at its default
//! `max_wal_size`. Every page's first change after a checkpoint is logged as a whole image
//! (docs/recovery.md, rule W2), so checkpoints every few tens of MB made a busy OLTP database
//! log mostly page images.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use walden_engine::types::Value;

use crate::support;
use support::{ok, scalar, session};

fn float(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        other => panic!("not a float: {other:?}"),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::NStr(s) | Value::Str(s) => s.clone(),
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn a_database_does_not_checkpoint_after_only_64_mb_of_log() {
    let (_dir, mut s) = session();
    ok(&mut s, "CREATE DATABASE ck; ALTER DATABASE ck SET RECOVERY SIMPLE");
    ok(&mut s, "USE ck; CHECKPOINT");
    ok(
        &mut s,
        "CREATE TABLE n (i int PRIMARY KEY);
         DECLARE @i int = 0;
         WHILE @i < 1000 BEGIN INSERT n VALUES (@i); SET @i += 1; END;
         CREATE TABLE t (id int IDENTITY PRIMARY KEY, pad char(1000) NOT NULL);",
    );
    // About 80 MB of rows, logged in more than that.
    for _ in 0..8 {
        ok(
            &mut s,
            "INSERT t (pad) SELECT 'x' FROM n a CROSS JOIN (SELECT i FROM n WHERE i < 10) b",
        );
    }
    let since = float(&scalar(
        &mut s,
        "SELECT log_since_last_checkpoint_mb FROM sys.dm_db_log_stats(DB_ID())",
    ));
    assert!(since > 64.0, "{since} MB of log since the last checkpoint");
    let wait =
        text(&scalar(&mut s, "SELECT log_reuse_wait_desc FROM sys.databases WHERE name = 'ck'"));
    assert_eq!(wait, "NOTHING", "no checkpoint is due yet");
    ok(&mut s, "CHECKPOINT");
    let since = float(&scalar(
        &mut s,
        "SELECT log_since_last_checkpoint_mb FROM sys.dm_db_log_stats(DB_ID())",
    ));
    assert!(since < 1.0, "{since} MB of log after CHECKPOINT");
}
