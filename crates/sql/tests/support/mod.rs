//! What the session tests share: running a batch and reading its answer. Each test file
//! uses some of these (`mod support;`), so the others are unused there.
#![allow(dead_code)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

/// A session of a new instance in a temporary directory (kept while the guard lives).
pub fn session() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    (dir, Session::new(Arc::clone(&instance)))
}

/// Runs `sql` as one batch and returns everything it sent.
pub fn run(s: &mut Session, sql: &str) -> Collected {
    let mut out = Collected::default();
    s.execute_batch(sql, &mut out);
    out
}

/// [`run`], failing the test if the batch raised an error.
pub fn ok(s: &mut Session, sql: &str) -> Collected {
    let out = run(s, sql);
    assert!(out.errors().next().is_none(), "{sql}: {:?}", out.messages);
    out
}

/// The first value of the batch's last result, which must have raised no error.
pub fn scalar(s: &mut Session, sql: &str) -> Value {
    ok(s, sql).results.last().unwrap().rows[0][0].clone()
}
