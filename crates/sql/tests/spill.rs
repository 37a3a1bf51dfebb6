//! Memory grants and spilling: with a grant so small that a 10,000-row sort spills, every
//! sort, grouping, DISTINCT and hash join gives the rows the in-memory path gives; the spill
//! files are gone after success, error and cancel; and what cannot spill fails with 701
//! while the session goes on.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{
    configure_query_memory, spilled_bytes, CancelSignal, QueryMemoryConfig, Session,
};

mod support;
use support::run;

/// The tests count the process's open spill files, so they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn ok(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    let out = run(s, sql);
    assert!(out.errors().next().is_none(), "{sql}: {:?}", out.messages);
    let Some(rs) = out.results.last() else { return Vec::new() };
    rs.rows.iter().map(|r| r.iter().map(|v| format!("{v:?}")).collect()).collect()
}

const DATA: &str = "
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

/// An instance with `grant` bytes per query (None: the default), loaded with 10,000 rows.
fn instance(grant: Option<usize>) -> (tempfile::TempDir, Arc<Instance>) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    configure_query_memory(&instance, QueryMemoryConfig { max_query_memory_bytes: grant });
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(&mut s, DATA);
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    (dir, instance)
}

/// Spill files this process has open (they are unlinked at creation, so they show only
/// here) plus those left in the data directory's spill folder.
fn spill_files(dir: &std::path::Path) -> usize {
    let open = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path())
                .is_ok_and(|target| target.to_string_lossy().contains("/spill/spill-"))
        })
        .count();
    let left = std::fs::read_dir(dir.join("spill")).map_or(0, |d| d.count());
    open + left
}

const ORDERED: [&str; 6] = [
    // Ties on k keep the scan's order (the sort is stable), NULLs first.
    "SELECT k, id FROM dbo.t ORDER BY k",
    "SELECT id, s, f FROM dbo.t ORDER BY s DESC, f",
    "SELECT TOP (50) PERCENT id, k FROM dbo.t ORDER BY k DESC, id",
    "SELECT DISTINCT k, s FROM dbo.t ORDER BY s, k",
    "SELECT k FROM dbo.t WHERE id < 6000 UNION ALL SELECT k FROM dbo.t ORDER BY 1",
    "SELECT id, k FROM dbo.t ORDER BY k OFFSET 100 ROWS FETCH NEXT 5000 ROWS ONLY",
];

/// Queries whose rows come in no defined order: compared sorted.
const UNORDERED: [&str; 7] = [
    "SELECT k, COUNT(*), SUM(f), MIN(s), MAX(id) FROM dbo.t GROUP BY k",
    // The aggregates that keep their values rather than fold them.
    "SELECT k, COUNT(DISTINCT s), STDEV(f), AVG(f),
            STRING_AGG(CAST(id AS VARCHAR(10)), ',') WITHIN GROUP (ORDER BY id DESC)
     FROM dbo.t GROUP BY k",
    // Grouped as a join makes its rows (a FLOAT sum would depend on the order they come).
    "SELECT a.k, COUNT(*), SUM(b.id), MAX(b.s) FROM dbo.t a JOIN dbo.t b ON a.id = b.id GROUP BY a.k",
    "SELECT s, COUNT(*) FROM dbo.t GROUP BY s HAVING COUNT(*) >= 1",
    "SELECT DISTINCT s, k % 10 FROM dbo.t",
    "SELECT a.id, b.id FROM dbo.t a JOIN dbo.t b ON a.k = b.k AND a.id < b.id",
    "SELECT a.id, b.s FROM dbo.t a JOIN dbo.t b ON a.s = b.s WHERE a.id % 50 = 0",
];

#[test]
fn a_tiny_grant_spills_and_gives_the_rows_of_the_in_memory_path() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (_d1, memory) = instance(None);
    let (dir, spilling) = instance(Some(64 << 10));
    let mut m = Session::new(Arc::clone(&memory));
    let mut s = Session::new(Arc::clone(&spilling));
    ok(&mut m, "USE d");
    ok(&mut s, "USE d");
    for sql in ORDERED {
        let before = spilled_bytes(&spilling);
        let expected = ok(&mut m, sql);
        assert!(expected.len() > 1000, "{sql}: {} rows", expected.len());
        assert_eq!(ok(&mut s, sql), expected, "{sql}");
        assert!(spilled_bytes(&spilling) > before, "{sql} did not spill");
    }
    for sql in UNORDERED {
        let before = spilled_bytes(&spilling);
        let mut expected = ok(&mut m, sql);
        let mut got = ok(&mut s, sql);
        expected.sort();
        got.sort();
        assert!(expected.len() > 10, "{sql}: {} rows", expected.len());
        assert_eq!(got, expected, "{sql}");
        assert!(spilled_bytes(&spilling) > before, "{sql} did not spill");
    }
    assert_eq!(spill_files(dir.path()), 0);
    assert_eq!(spilled_bytes(&memory), 0, "the default grant holds these in memory");
}

/// A cancel signal that fires once the process has a spill file open: the query is then in
/// the middle of spilling.
#[derive(Debug)]
struct CancelWhileSpilling {
    fired: AtomicBool,
}

impl CancelSignal for CancelWhileSpilling {
    fn cancelled(&self) -> bool {
        if !self.fired.load(Ordering::Relaxed) {
            let spilling = std::fs::read_dir("/proc/self/fd").unwrap().flatten().any(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|t| t.to_string_lossy().contains("/spill/spill-"))
            });
            self.fired.store(spilling, Ordering::Relaxed);
        }
        self.fired.load(Ordering::Relaxed)
    }
}

#[test]
fn spill_files_are_gone_after_success_error_and_cancel() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (dir, instance) = instance(Some(64 << 10));
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "USE d");
    ok(&mut s, "SELECT id, s FROM dbo.t ORDER BY s, id");
    assert_eq!(spill_files(dir.path()), 0, "after success");

    // A conversion error in a sort key of a late row, after runs were written.
    let out = run(
        &mut s,
        "SELECT id FROM dbo.t ORDER BY CAST(CASE WHEN id = 9990 THEN 'x' ELSE '1' END AS INT)",
    );
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), vec![245]);
    assert_eq!(spill_files(dir.path()), 0, "after an error");

    let signal = Arc::new(CancelWhileSpilling { fired: AtomicBool::new(false) });
    s.set_cancel(Arc::clone(&signal) as Arc<dyn CancelSignal>);
    let out = run(&mut s, "SELECT a.id, b.id FROM dbo.t a JOIN dbo.t b ON a.k = b.k ORDER BY a.s");
    assert!(signal.fired.load(Ordering::Relaxed), "the query never spilled");
    assert!(out.results.is_empty(), "a cancelled query returned rows");
    assert_eq!(spill_files(dir.path()), 0, "after a cancel");

    // The session goes on.
    s.set_cancel(Arc::new(AtomicBool::new(false)));
    assert_eq!(ok(&mut s, "SELECT COUNT(*) FROM dbo.t"), vec![vec!["Int(10000)".to_string()]]);
}

#[test]
fn a_held_join_output_beyond_the_workspace_fails_with_701_and_the_session_goes_on() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let mut config = InstanceConfig::default();
    // 4 MB of buffer pool: a workspace of 3 MB.
    config.database.pool.frames = 512;
    let instance = Instance::open(dir.path(), config).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(&mut s, DATA);
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    // A cross product of 10,000 x 10,000 rows, selected: a join step's output, which cannot
    // spill.
    let out =
        run(&mut s, "SELECT a.id, b.id FROM dbo.t a CROSS JOIN dbo.t b WHERE a.f <> b.f + 0.5");
    let errors: Vec<_> = out.errors().collect();
    assert_eq!(errors.len(), 1, "{:?}", out.messages);
    assert_eq!(errors[0].number, 701);
    assert_eq!(
        errors[0].message,
        "There is insufficient system memory in resource pool 'default' to run this query."
    );
    // Counted, 1,000,000 joined rows (hundreds of megabytes held) go to the aggregate as
    // the last join step makes them, and are not held.
    let counted = ok(
        &mut s,
        "SELECT COUNT(*), SUM(b.id) FROM dbo.t a CROSS JOIN dbo.t b WHERE b.id < 100 AND a.f <> b.f + 0.5",
    );
    assert_eq!(counted, vec![vec!["Int(1000000)".to_string(), "Int(49500000)".to_string()]]);
    // What fits still runs, spilling what it may (the sort of 10,000 rows).
    let rows = ok(&mut s, "SELECT TOP (3) id FROM dbo.t ORDER BY s DESC, id DESC");
    assert_eq!(rows.len(), 3);
    let sorted = ok(&mut s, "SELECT id FROM dbo.t ORDER BY f DESC");
    assert_eq!(sorted.first().unwrap(), &vec!["Int(9999)".to_string()]);
    assert_eq!(spill_files(dir.path()), 0);
}

#[test]
fn the_grants_held_show_in_dm_exec_query_memory_grants() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (_dir, instance) = instance(Some(64 << 10));
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "USE d");
    let out = run(&mut s, "SELECT * FROM sys.dm_exec_query_memory_grants");
    let names: Vec<&str> = out.results[0].columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "session_id",
            "request_id",
            "requested_memory_kb",
            "granted_memory_kb",
            "used_memory_kb",
            "max_used_memory_kb"
        ]
    );
    assert!(out.results[0].rows.is_empty(), "no query holds a grant");
    // The select list's subquery (correlated, so it runs for each row as the row is
    // projected) is read while the statement's ORDER BY holds its grant.
    let rows = ok(
        &mut s,
        "SELECT t.id, (SELECT CONCAT(COUNT(*), ' ', MAX(granted_memory_kb))
                       FROM sys.dm_exec_query_memory_grants WHERE session_id = @@SPID + t.id - t.id)
         FROM dbo.t AS t WHERE t.id < 3 ORDER BY t.id",
    );
    let shown: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(shown, ["Str(\"1 64\")"; 3]);
}
