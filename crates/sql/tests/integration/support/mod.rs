//! What the session tests share: running a batch and reading its answer.

use std::path::Path;
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

/// Closes session `s` and its `instance` as a clean shutdown does, then opens the instance in
/// `dir` again and returns it with a new session of it: what a restart leaves.
pub fn restart(dir: &Path, mut s: Session, instance: Arc<Instance>) -> (Arc<Instance>, Session) {
    s.close();
    drop(s);
    instance.close().unwrap();
    drop(instance);
    let instance = Instance::open(dir, InstanceConfig::default()).unwrap();
    (Arc::clone(&instance), Session::new(instance))
}

/// Runs `sql` as one batch and returns everything it sent.
pub fn run(s: &mut Session, sql: &str) -> Collected {
    let mut out = Collected::default();
    s.execute_batch(sql, &mut out);
    out
}

/// Database `d` with `dbo.t`, 10,000 rows: `k` has 1,500 values and NULL, `s` four kinds of
/// text ('Alpha ' and 'alpha' equal under the default collation) and NULL, `f` a FLOAT.
pub const TEN_THOUSAND_ROWS: &str = "
    CREATE DATABASE d; USE d;
    CREATE TABLE dbo.t (id INT PRIMARY KEY, k INT NULL, s VARCHAR(40) NULL, f FLOAT NULL);
    WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
    INSERT INTO dbo.t
    SELECT a.i * 100 + b.i,
           CASE WHEN (a.i * 100 + b.i) % 97 = 0 THEN NULL ELSE (a.i * 37 + b.i * 11) % 1500 END,
           CASE (a.i + b.i) % 4 WHEN 0 THEN 'Alpha ' WHEN 1 THEN 'alpha' WHEN 2 THEN NULL
                ELSE CONCAT('row number ', a.i * 100 + b.i) END,
           (a.i * 100 + b.i) / 7.0
    FROM n a CROSS JOIN n b
    OPTION (MAXRECURSION 200);";

/// The rows of the batch's last result as their values' debug text, failing the test if the
/// batch raised an error.
pub fn rows_text(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    let out = run(s, sql);
    assert!(out.errors().next().is_none(), "{sql}: {:?}", out.messages);
    let Some(rs) = out.results.last() else { return Vec::new() };
    rs.rows.iter().map(|r| r.iter().map(|v| format!("{v:?}")).collect()).collect()
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

/// The numbers of the errors a batch raised, in order.
pub fn errors(out: &Collected) -> Vec<i32> {
    out.errors().map(|e| e.number).collect()
}

/// Whether `sql` had to wait for a lock past its session's `LOCK_TIMEOUT` (1222) rather than
/// run without error; any other error fails the test.
pub fn waits(s: &mut Session, sql: &str) -> bool {
    let out = run(s, sql);
    match errors(&out).as_slice() {
        [] => false,
        [1222] => true,
        other => panic!("{sql}: {other:?} {:?}", out.messages),
    }
}

/// Whether `sql` had to wait for a lock (1222 under `SET LOCK_TIMEOUT 0`), else its first
/// value. Any other error fails the test.
pub fn read(s: &mut Session, sql: &str) -> Result<Value, ()> {
    let out = run(s, sql);
    match errors(&out).as_slice() {
        [] => Ok(out.results.last().unwrap().rows[0][0].clone()),
        [1222] => Err(()),
        other => panic!("{sql}: {other:?} {:?}", out.messages),
    }
}

/// Every way a statement reads the row with key `k` of `dbo.t (k PRIMARY KEY, v, w
/// indexed)`: a scan, a clustered seek, a nonclustered seek with its key lookup.
pub fn reads_of(k: i32) -> [String; 3] {
    [
        format!("SELECT SUM(CASE WHEN k = {k} THEN v END) FROM dbo.t"),
        format!("SELECT MAX(v) FROM dbo.t WHERE k BETWEEN {k} AND {k}"),
        format!("SELECT MAX(v) FROM dbo.t WHERE w = {k}"),
    ]
}

/// The (table, scan count, logical reads, physical reads) of each `SET STATISTICS IO`
/// message (3615) of a batch, in order.
pub fn io_lines(out: &Collected) -> Vec<(String, u64, u64, u64)> {
    out.messages
        .iter()
        .filter(|m| m.number == 3615)
        .map(|m| {
            let text = &m.message;
            let name = text.split('\'').nth(1).unwrap().to_string();
            let field = |label: &str| -> u64 {
                let at = text.find(label).unwrap() + label.len();
                text[at..].split(',').next().unwrap().trim().parse().unwrap()
            };
            (name, field("Scan count "), field("logical reads "), field(" physical reads "))
        })
        .collect()
}

/// The SHOWPLAN_TEXT lines of `query`, one string.
pub fn showplan_text(s: &mut Session, query: &str) -> String {
    ok(s, "SET SHOWPLAN_TEXT ON");
    let shown = ok(s, query);
    ok(s, "SET SHOWPLAN_TEXT OFF");
    let lines = shown.results.iter().flat_map(|r| r.rows.iter());
    lines.map(|r| r[0].to_string()).collect::<Vec<_>>().join("\n")
}
