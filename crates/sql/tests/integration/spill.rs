//! Memory grants and spilling: with a grant so small that a 10,000-row sort spills, every
//! sort, grouping, DISTINCT and hash join gives the rows the in-memory path gives; the spill
//! files are gone after success, error and cancel; and what cannot spill fails with 701
//! while the session goes on.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{
    configure_query_memory, spilled_bytes, CancelSignal, ColumnInfo, Message, Output,
    QueryMemoryConfig, Session,
};

use crate::support;
use support::run;

/// The tests count the process's open spill files, so they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn ok(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    support::rows_text(s, sql)
}

const DATA: &str = support::TEN_THOUSAND_ROWS;

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

/// Whether `target`, a file this process has open, is a spill file of the instance in `dir`
/// (canonical, as `/proc` shows `target`). Other tests of this binary spill too, each under
/// its own data directory, so a spill file is told apart by its path.
fn is_spill_file_of(dir: &Path, target: &Path) -> bool {
    target.starts_with(dir) && target.to_string_lossy().contains("/spill/spill-")
}

/// Spill files of the instance in `dir` this process has open (they are unlinked at creation,
/// so they show only here) plus those left in the data directory's spill folder.
fn spill_files(dir: &Path) -> usize {
    let canonical = dir.canonicalize().unwrap();
    let open = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|target| is_spill_file_of(&canonical, &target))
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
const UNORDERED: [&str; 13] = [
    "SELECT k, COUNT(*), SUM(f), MIN(s), MAX(id) FROM dbo.t GROUP BY k",
    // Integer keys (NULL among them) found by their integers, and an integer column's
    // widening CAST summed in place, while the groups past the grant spill.
    "SELECT k, COUNT(*), SUM(CAST(id AS BIGINT)), SUM(id) FROM dbo.t GROUP BY k",
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
    // Two sides of one size, both computed (TOP keeps them from being inlined): the leaf
    // is hashed, and partitioned by its text and integer key, 'Alpha ' meeting 'alpha'.
    "SELECT a.id, b.s FROM (SELECT TOP (100000) id, s FROM dbo.t) a
     JOIN (SELECT TOP (100000) id, s FROM dbo.t) b ON a.s = b.s AND a.id = b.id + 1",
    // Outer joins whose inner side is read and hashed: past the grant it is partitioned,
    // and so are the left rows, NULL keys kept apart (a FULL JOIN gives both sides' last).
    "SELECT a.id, b.id, b.s FROM dbo.t a LEFT JOIN dbo.t b ON a.k = b.k AND b.id < 2000",
    "SELECT a.id, b.id FROM dbo.t a FULL JOIN dbo.t b ON a.k = b.k + 1 AND a.id < b.id",
    "SELECT a.id, b.id, a.s FROM dbo.t a RIGHT JOIN dbo.t b
     ON a.s = b.s AND a.k = b.k AND a.id < 3000 WHERE b.id % 7 <> 1",
    // The smaller preserved side is hashed where the grant holds it (the in-memory path);
    // past the grant the inner side is hashed, and partitioned, instead.
    "SELECT a.id, b.id FROM dbo.t a LEFT JOIN dbo.t b ON a.k = b.k + 2 WHERE a.id < 3000",
];

/// Of `UNORDERED`, the one that no longer spills: the 200 rows of `a` are hashed, not all
/// of `b` (the smaller side is the build side), and `b`'s read probes them.
const HASHES_THE_SMALLER_SIDE: &str =
    "SELECT a.id, b.s FROM dbo.t a JOIN dbo.t b ON a.s = b.s WHERE a.id % 50 = 0";

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
        let spilled = spilled_bytes(&spilling) > before;
        assert_eq!(spilled, sql != HASHES_THE_SMALLER_SIDE, "{sql}: spilled {spilled}");
    }
    assert_eq!(spill_files(dir.path()), 0);
    assert_eq!(spilled_bytes(&memory), 0, "the default grant holds these in memory");
}

/// A table clustered on nullable integer columns `(a, b)`, and a heap with the same rows.
const CLUSTERED_AND_HEAP: &str = "
    CREATE TABLE dbo.c (a INT NULL, b SMALLINT NOT NULL, v INT NOT NULL);
    CREATE CLUSTERED INDEX cx ON dbo.c (a, b);
    CREATE TABLE dbo.h (a INT NULL, b SMALLINT NOT NULL, v INT NOT NULL);
    INSERT INTO dbo.c SELECT k, id % 13, id FROM dbo.t;
    INSERT INTO dbo.h SELECT a, b, v FROM dbo.c;";

#[test]
fn a_grouping_read_in_its_keys_order_gives_the_groups_of_a_hash_spilled_or_not() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (_d1, memory) = instance(None);
    let (_d2, spilling) = instance(Some(64 << 10));
    for instance in [memory, spilling] {
        let mut s = Session::new(Arc::clone(&instance));
        ok(&mut s, "USE d");
        ok(&mut s, CLUSTERED_AND_HEAP);
        // The clustered table is read in the order of (a, b), so its groups come one after
        // another (NULL's first); the heap's rows come in no such order and are hashed.
        for keys in ["a", "a, b", "b, a"] {
            let grouped = |table: &str| {
                format!(
                    "SELECT {keys}, COUNT(*), SUM(v), MIN(v) FROM dbo.{table} GROUP BY {keys} \
                     HAVING COUNT(*) > 0 ORDER BY {keys}"
                )
            };
            let expected = ok(&mut s, &grouped("h"));
            assert!(expected.len() > 1000, "{keys}: {} groups", expected.len());
            assert_eq!(ok(&mut s, &grouped("c")), expected, "GROUP BY {keys}");
        }
        // Grouped by b alone, which the clustered order does not keep together.
        let by_b = |table: &str| {
            format!("SELECT b, COUNT(*), SUM(v) FROM dbo.{table} GROUP BY b ORDER BY b")
        };
        assert_eq!(ok(&mut s, &by_b("c")), ok(&mut s, &by_b("h")));
    }
}

/// A cancel signal that fires once the process has a spill file of the instance in `dir`
/// (canonical) open: the query is then in the middle of spilling.
#[derive(Debug)]
struct CancelWhileSpilling {
    dir: PathBuf,
    fired: AtomicBool,
}

impl CancelSignal for CancelWhileSpilling {
    fn cancelled(&self) -> bool {
        if !self.fired.load(Ordering::Relaxed) {
            let spilling = std::fs::read_dir("/proc/self/fd").unwrap().flatten().any(|e| {
                std::fs::read_link(e.path()).is_ok_and(|t| is_spill_file_of(&self.dir, &t))
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

    let signal = Arc::new(CancelWhileSpilling {
        dir: dir.path().canonicalize().unwrap(),
        fired: AtomicBool::new(false),
    });
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
    // A cross product of 10,000 x 10,000 rows, made DISTINCT: a join step's output, which
    // cannot spill.
    let out = run(
        &mut s,
        "SELECT DISTINCT a.id, b.id FROM dbo.t a CROSS JOIN dbo.t b WHERE a.f <> b.f + 0.5",
    );
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
            "scheduler_id",
            "dop",
            "request_time",
            "grant_time",
            "requested_memory_kb",
            "granted_memory_kb",
            "required_memory_kb",
            "used_memory_kb",
            "max_used_memory_kb",
            "query_cost",
            "timeout_sec",
            "resource_semaphore_id",
            "queue_id",
            "wait_order",
            "is_next_candidate",
            "wait_time_ms",
            "plan_handle",
            "sql_handle",
            "group_id",
            "pool_id",
            "is_small",
            "ideal_memory_kb"
        ]
    );
    assert!(out.results[0].rows.is_empty(), "no query holds a grant");
    // The select list's subquery (correlated, so it runs for each row as the row is
    // projected) is read while the statement's ORDER BY holds its grant (DESC: the
    // clustered index does not read in that order, so the rows are sorted).
    let rows = ok(
        &mut s,
        "SELECT t.id, (SELECT CONCAT(COUNT(*), ' ', MAX(granted_memory_kb))
                       FROM sys.dm_exec_query_memory_grants WHERE session_id = @@SPID + t.id - t.id)
         FROM dbo.t AS t WHERE t.id < 3 ORDER BY t.id DESC",
    );
    let shown: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(shown, ["Str(\"1 64\")"; 3]);
}

/// 10,000 rows of about 420 bytes: more pages than a 4 MB buffer pool holds.
const PADDING: &str = "
    CREATE TABLE dbo.pad (id INT PRIMARY KEY, p CHAR(400) NOT NULL);
    WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 99)
    INSERT INTO dbo.pad SELECT a.i * 100 + b.i, CONCAT('pad ', a.i * 100 + b.i)
    FROM n a CROSS JOIN n b
    OPTION (MAXRECURSION 200);";

/// A scan that reads every page of the padding through the buffer pool.
const FILL_POOL: &str = "SELECT COUNT(*) FROM dbo.pad WHERE p LIKE 'pad%'";

/// An instance whose whole memory budget is 4 MB (512 frames, of which 3 MB may be lent to
/// query memory), with `grant` bytes per query (None: 768 KB), and a session in `d` loaded
/// with `DATA` and `PADDING`.
fn small_budget(grant: Option<usize>) -> (tempfile::TempDir, Arc<Instance>, Session) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = InstanceConfig::default();
    config.database.pool.frames = 512;
    let instance = Instance::open(dir.path(), config).unwrap();
    configure_query_memory(&instance, QueryMemoryConfig { max_query_memory_bytes: grant });
    let mut s = Session::new(Arc::clone(&instance));
    for batch in [DATA, PADDING] {
        let out = run(&mut s, batch);
        assert!(out.errors().next().is_none(), "{:?}", out.messages);
    }
    (dir, instance, s)
}

/// A `BigInt(n)` as `ok` shows it.
fn kb(shown: &str) -> i64 {
    let digits = shown.strip_prefix("BigInt(").and_then(|s| s.strip_suffix(')'));
    digits.unwrap_or_else(|| panic!("not a bigint: {shown}")).parse().unwrap()
}

/// What `sys.dm_os_memory_clerks` says the buffer pool holds and has lent to query memory,
/// in KB. (Without ORDER BY: a sort would take a grant of its own.)
fn clerks(s: &mut Session) -> (i64, i64) {
    let mut clerk = |name: &str| {
        let sql = format!("SELECT pages_kb FROM sys.dm_os_memory_clerks WHERE type = '{name}'");
        kb(&ok(s, &sql)[0][0])
    };
    (clerk("MEMORYCLERK_SQLBUFFERPOOL"), clerk("MEMORYCLERK_SQLQERESERVATIONS"))
}

#[test]
fn a_grant_held_shrinks_the_buffer_pool_within_one_budget_and_the_pool_grows_back() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (_dir, instance, mut s) = small_budget(None);
    let expected = ok(&mut s, "SELECT id FROM dbo.t ORDER BY s, id");
    // The scan fills the pool to the whole budget.
    ok(&mut s, FILL_POOL);
    assert_eq!(clerks(&mut s), (4096, 0));
    // Each row's subqueries read the clerks while the ORDER BY holds its grant (correlated,
    // so that they run as each row is projected into the sort).
    let before = spilled_bytes(&instance);
    let rows = ok(
        &mut s,
        "SELECT t.id,
                (SELECT SUM(pages_kb) FROM sys.dm_os_memory_clerks
                 WHERE memory_node_id = t.id - t.id),
                (SELECT pages_kb FROM sys.dm_os_memory_clerks
                 WHERE type = 'MEMORYCLERK_SQLQERESERVATIONS' AND memory_node_id = t.id - t.id)
         FROM dbo.t AS t ORDER BY t.s, t.id",
    );
    assert!(spilled_bytes(&instance) > before, "the sort spilled past its grant");
    let ids: Vec<Vec<String>> = rows.iter().map(|r| vec![r[0].clone()]).collect();
    assert_eq!(ids, expected, "the rows of the same sort with the pool to itself");
    // Pages and grants together stay within the budget at every row...
    let most = rows.iter().map(|r| kb(&r[1])).max().unwrap();
    assert!(most <= 4096, "pool and grants held {most} KB of a 4,096 KB budget");
    // ...because the pool gave the grant's memory back: the grant held its 768 KB.
    let lent = rows.iter().map(|r| kb(&r[2])).max().unwrap();
    assert!(lent >= 512, "the grant was lent {lent} KB at most");
    // Released with the statement; the pool takes its frames back as the scan needs them.
    assert_eq!(clerks(&mut s).1, 0);
    ok(&mut s, FILL_POOL);
    assert_eq!(clerks(&mut s), (4096, 0));
    let memory = instance.frame_pool().memory();
    assert_eq!((memory.allocated_frames, memory.released_frames), (512, 0), "{memory:?}");
}

#[test]
fn a_grant_the_pool_cannot_make_room_for_spills_and_gives_the_same_rows() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // A 3 MB grant: the first 1 MB of it is every grant's minimum, the rest is asked for.
    let (_dir, instance, mut s) = small_budget(Some(3 << 20));
    const SORT: &str = "SELECT id, k FROM dbo.t ORDER BY k, id";
    let before = spilled_bytes(&instance);
    let expected = ok(&mut s, SORT);
    assert_eq!(spilled_bytes(&instance), before, "3 MB sorts these rows in memory");
    // Pin nearly every frame, as queries using those pages would.
    ok(&mut s, FILL_POOL);
    let db = instance.database("d").unwrap();
    let pool = db.space().pool();
    let pins: Vec<_> =
        (0..pool.file().page_count()).filter_map(|id| pool.fetch(id).ok()).take(480).collect();
    assert_eq!(pins.len(), 480);
    // The pool cannot give the grant more than its minimum: the sort spills, and neither it
    // nor its page reads fail.
    assert_eq!(ok(&mut s, SORT), expected);
    assert!(spilled_bytes(&instance) > before, "refused room, the sort spilled");
    let memory = instance.frame_pool().memory();
    assert!(memory.allocated_frames <= 512, "{memory:?}");
    drop(pins);
    let spilled = spilled_bytes(&instance);
    assert_eq!(ok(&mut s, SORT), expected);
    assert_eq!(spilled_bytes(&instance), spilled, "with the pins gone it fits again");
}

/// A client that reads every row and keeps none: the number of rows, the first and last,
/// whether each row's key (its first two INT columns) came in ascending order, and the
/// errors' numbers.
#[derive(Default)]
struct Counter {
    rows: u64,
    first: Option<Vec<Value>>,
    last: Option<Vec<Value>>,
    /// Every row's first two values sorted after the previous row's, descending then
    /// ascending (`ORDER BY a.id DESC, b.id`).
    sorted: bool,
    errors: Vec<i32>,
}

impl Output for Counter {
    fn result_set(&mut self, _: &[ColumnInfo]) {
        self.sorted = true;
    }

    fn row(&mut self, values: &[Value]) {
        if let (Some(last), [Value::Int(a), Value::Int(b), ..]) = (&self.last, values) {
            let [Value::Int(la), Value::Int(lb), ..] = last.as_slice() else { panic!() };
            self.sorted &= (std::cmp::Reverse(*la), *lb) <= (std::cmp::Reverse(*a), *b);
        }
        self.rows += 1;
        if self.first.is_none() {
            self.first = Some(values.to_vec());
        }
        self.last = Some(values.to_vec());
    }

    fn result_end(&mut self, _: u64) {}

    fn message(&mut self, m: &Message) {
        if !m.is_info() {
            self.errors.push(m.number);
        }
    }

    fn done(&mut self, _: Option<u64>) {}
}

#[test]
fn a_select_over_a_join_streams_its_rows_beyond_the_workspace() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // A workspace of 3 MB, as above: holding the joined rows would be error 701.
    let (dir, _instance, mut s) = small_budget(None);
    let mut read = |sql: &str| {
        let mut out = Counter::default();
        s.execute_batch(sql, &mut out);
        out
    };
    // 3,000,000 joined rows (hundreds of megabytes if held) go to the client as the last
    // join step makes them.
    let all = read(
        "SELECT a.id, b.id, a.s FROM dbo.t a CROSS JOIN dbo.t b \
         WHERE b.id < 300 AND a.f <> b.f + 0.5",
    );
    assert_eq!(all.errors, Vec::<i32>::new());
    assert_eq!(all.rows, 3_000_000);
    // So do they when the rows sought on one side are hashed and the other side's read
    // probes them: 3,000 x 1,000 pairs.
    let probed = read(
        "SELECT a.id, b.id, a.s FROM dbo.t a JOIN dbo.t b ON a.id % 10 = b.id % 10 \
         WHERE b.id < 3000",
    );
    assert_eq!(probed.errors, Vec::<i32>::new());
    assert_eq!(probed.rows, 3_000_000);
    // Sorted, 300,000 of them spill past the grant and come in order.
    let sorted = read(
        "SELECT a.id, b.id, a.s FROM dbo.t a JOIN dbo.t b ON b.id < 30 \
         WHERE a.f <> b.f + 0.5 ORDER BY a.id DESC, b.id",
    );
    assert_eq!(sorted.errors, Vec::<i32>::new());
    assert_eq!(sorted.rows, 300_000);
    assert!(sorted.sorted);
    assert_eq!(sorted.first.unwrap()[..2], [Value::Int(9999), Value::Int(0)]);
    assert_eq!(sorted.last.unwrap()[..2], [Value::Int(0), Value::Int(29)]);
    // A TOP stops the join.
    let top = read("SELECT TOP (10) a.id, b.id FROM dbo.t a CROSS JOIN dbo.t b");
    assert_eq!((top.errors.len(), top.rows), (0, 10));
    assert_eq!(spill_files(dir.path()), 0);
}

#[test]
fn an_update_or_delete_queues_its_rows_in_a_spill_file_past_the_grant() {
    let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (_d1, memory) = instance(None);
    let (dir, spilling) = instance(Some(64 << 10));
    // Each statement reads all its rows before it changes the first: past the 64 KB grant
    // they wait in a spill file, and come back in the order they were read.
    let changes = [
        "UPDATE dbo.t SET f = f * 2, s = CONCAT(s, '!') WHERE k % 3 = 1",
        // A row of `x` joined to several of `y` is deleted once.
        "DELETE x FROM dbo.t x JOIN dbo.t y ON y.k = x.k WHERE x.id % 5 = 0",
        "UPDATE x SET f = y.f, k = y.id FROM dbo.t x JOIN dbo.t y ON y.id = x.id + 1 WHERE x.id % 2 = 0",
    ];
    let mut outcomes = Vec::new();
    for instance in [&memory, &spilling] {
        let mut s = Session::new(Arc::clone(instance));
        ok(&mut s, "USE d");
        let mut counts = Vec::new();
        for sql in changes {
            let before = spilled_bytes(instance);
            let out = run(&mut s, sql);
            assert!(out.errors().next().is_none(), "{sql}: {:?}", out.messages);
            assert!(out.counts.iter().any(|&n| n > 100), "{sql}: {:?}", out.counts);
            counts.push(out.counts.clone());
            let spilled = spilled_bytes(instance) > before;
            assert_eq!(spilled, Arc::ptr_eq(instance, &spilling), "{sql}: spilled {spilled}");
        }
        outcomes.push((counts, ok(&mut s, "SELECT id, k, s, f FROM dbo.t ORDER BY id")));
    }
    assert_eq!(outcomes[0], outcomes[1]);
    assert_eq!(spill_files(dir.path()), 0);
}
