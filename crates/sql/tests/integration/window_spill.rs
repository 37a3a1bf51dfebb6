//! Window functions beyond the memory grant: their sorts spill and give the rows of the
//! in-memory path, a window over many partitions or a ROW_NUMBER or running SUM over one
//! huge partition completes in a workspace far smaller than its rows, and what must hold a
//! whole partition past the workspace fails with 701 while the session goes on.

use std::sync::Arc;

use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{configure_query_memory, spilled_bytes, QueryMemoryConfig, Session};

use crate::support::{self, run};

fn ok(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    support::rows_text(s, sql)
}

const DATA: &str = support::TEN_THOUSAND_ROWS;

/// An instance configured by `config` with `grant` bytes per query (None: the default),
/// and a session in `d` loaded with `DATA`.
fn session(
    config: InstanceConfig,
    grant: Option<usize>,
) -> (tempfile::TempDir, Arc<Instance>, Session) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), config).unwrap();
    configure_query_memory(&instance, QueryMemoryConfig { max_query_memory_bytes: grant });
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(&mut s, DATA);
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    (dir, instance, s)
}

/// A session whose instance has 4 MB of buffer pool: a workspace of 3 MB.
fn small_workspace() -> (tempfile::TempDir, Arc<Instance>, Session) {
    let mut config = InstanceConfig::default();
    config.database.pool.frames = 512;
    session(config, None)
}

/// Window queries of every kind of call, several sort orders among them; compared sorted.
const WINDOWS: [&str; 6] = [
    "SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id DESC),
            RANK() OVER (PARTITION BY s ORDER BY k), DENSE_RANK() OVER (ORDER BY s, k)
     FROM dbo.t",
    "SELECT id, SUM(f) OVER (PARTITION BY k ORDER BY id), COUNT(*) OVER (PARTITION BY s),
            AVG(id) OVER (PARTITION BY k ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING),
            MIN(s) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)
     FROM dbo.t",
    "SELECT id, LAG(id, 3, -1) OVER (PARTITION BY s ORDER BY id), LEAD(k) OVER (ORDER BY id),
            LEAD(id, k % 5) OVER (PARTITION BY k % 7 ORDER BY id)
     FROM dbo.t",
    "SELECT id, NTILE(7) OVER (PARTITION BY k % 10 ORDER BY id), CUME_DIST() OVER (ORDER BY k),
            PERCENT_RANK() OVER (PARTITION BY s ORDER BY f)
     FROM dbo.t",
    "SELECT id, FIRST_VALUE(id) OVER (PARTITION BY s ORDER BY k, id),
            LAST_VALUE(id) OVER (PARTITION BY s ORDER BY k RANGE BETWEEN CURRENT ROW AND CURRENT ROW),
            MAX(id) OVER (PARTITION BY k ORDER BY f RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
     FROM dbo.t",
    "SELECT id, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY f) OVER (PARTITION BY k % 10),
            PERCENTILE_DISC(0.25) WITHIN GROUP (ORDER BY id DESC) OVER (PARTITION BY s)
     FROM dbo.t WHERE id % 3 = 0",
];

#[test]
fn windows_past_a_tiny_grant_spill_and_give_the_rows_of_the_in_memory_path() {
    let (_d1, memory, mut m) = session(InstanceConfig::default(), None);
    let (_d2, spilling, mut s) = session(InstanceConfig::default(), Some(64 << 10));
    for sql in WINDOWS {
        let before = spilled_bytes(&spilling);
        let mut expected = ok(&mut m, sql);
        let mut got = ok(&mut s, sql);
        expected.sort();
        got.sort();
        assert!(expected.len() > 3000, "{sql}: {} rows", expected.len());
        assert_eq!(got, expected, "{sql}");
        assert!(spilled_bytes(&spilling) > before, "{sql} did not spill");
    }
    assert_eq!(spilled_bytes(&memory), 0, "the default grant holds these in memory");
}

#[test]
fn numbering_many_partitions_past_the_workspace_counts_every_partition() {
    let (_dir, instance, mut s) = small_workspace();
    // Partition keys of about 1 KB a row: 10 MB of keys, in a workspace of 3 MB.
    let numbered = ok(
        &mut s,
        "SELECT MAX(rn), COUNT(*), SUM(rn) FROM (SELECT ROW_NUMBER() OVER \
         (PARTITION BY REPLICATE(s, 30) ORDER BY id) AS rn FROM dbo.t) x",
    );
    let grouped = ok(
        &mut s,
        "SELECT MAX(c), SUM(c), SUM(c * (c + 1) / 2) FROM \
         (SELECT COUNT_BIG(*) AS c FROM dbo.t GROUP BY REPLICATE(s, 30)) g",
    );
    assert_eq!(numbered[0][0], grouped[0][0]);
    assert_eq!(numbered[0][1], "Int(10000)");
    assert_eq!(numbered[0][2], grouped[0][2]);
    assert!(spilled_bytes(&instance) > 0);
}

#[test]
fn numbering_and_running_sums_over_one_huge_partition_complete_in_a_small_workspace() {
    let (_dir, _instance, mut s) = small_workspace();
    // 200,000 rows of one partition, tens of megabytes held: sorted past the grant, then
    // numbered and summed holding a row at a time.
    let huge = "FROM dbo.t a CROSS JOIN (SELECT TOP (20) id FROM dbo.t ORDER BY id) b";
    let rows = ok(
        &mut s,
        &format!(
            "SELECT COUNT(*), MAX(rn), SUM(rn), MAX(running), MIN(running) FROM \
             (SELECT ROW_NUMBER() OVER (ORDER BY a.id, b.id) AS rn, \
                     CAST(SUM(CAST(b.id AS BIGINT)) OVER (ORDER BY a.id, b.id \
                          ROWS UNBOUNDED PRECEDING) AS BIGINT) AS running, a.s \
              {huge}) x"
        ),
    );
    // 1 + 2 + ... + 200,000; b.id runs 0..19 for each of 10,000 a rows.
    assert_eq!(
        rows,
        vec![vec![
            "Int(200000)".to_string(),
            "BigInt(200000)".to_string(),
            "BigInt(20000100000)".to_string(),
            "BigInt(1900000)".to_string(),
            "BigInt(0)".to_string(),
        ]]
    );
    // NTILE needs the partition's size: the one partition is held, and does not fit.
    let tiled = run(
        &mut s,
        &format!(
            "SELECT MAX(n) FROM (SELECT NTILE(4) OVER (ORDER BY a.id, b.id) AS n, a.s {huge}) x"
        ),
    );
    assert_eq!(tiled.errors().map(|e| e.number).collect::<Vec<_>>(), [701]);
    assert_eq!(
        tiled.errors().next().unwrap().message,
        "There is insufficient system memory in resource pool 'default' to run this query."
    );
    // The session goes on, and the same numbering by a narrow partition fits: the largest
    // partition is the 104 rows whose k is NULL.
    let narrow = ok(
        &mut s,
        "SELECT MAX(rn) FROM (SELECT NTILE(1000) OVER (PARTITION BY k ORDER BY id) AS rn \
         FROM dbo.t) x",
    );
    assert_eq!(narrow, vec![vec!["BigInt(104)".to_string()]]);
}
