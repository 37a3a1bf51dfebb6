//! Statistics objects across a restart: what CREATE STATISTICS and CREATE INDEX built is read
//! back from the catalog (DBCC SHOW_STATISTICS shows the same steps), NORECOMPUTE and the
//! database's AUTO_UPDATE_STATISTICS setting are kept, and a rolled-back CREATE STATISTICS
//! leaves nothing behind; statistics built with the default sampling (CREATE STATISTICS
//! without an option, auto-created ones) read a sample of a large table, FULLSCAN all of it.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{ok, restart};

/// Every row of every result set, as text.
fn rows(out: &Collected) -> Vec<Vec<String>> {
    out.results
        .iter()
        .flat_map(|r| r.rows.iter())
        .map(|r| r.iter().map(Value::to_string).collect())
        .collect()
}

const SHOW: &str = "DBCC SHOW_STATISTICS ('dbo.t', s_v) WITH DENSITY_VECTOR, HISTOGRAM;
    DBCC SHOW_STATISTICS ('dbo.t', ix_k) WITH DENSITY_VECTOR, HISTOGRAM;
    SELECT name, stats_id, user_created, no_recompute FROM sys.stats
    WHERE object_id = OBJECT_ID('dbo.t') ORDER BY stats_id;
    SELECT rows, rows_sampled, steps FROM sys.dm_db_stats_properties(OBJECT_ID('dbo.t'), 3);
    SELECT is_auto_update_stats_on FROM sys.databases WHERE name = 'app'";

#[test]
fn statistics_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE app");
    ok(&mut s, "USE app; CREATE TABLE dbo.t (id INT PRIMARY KEY, k INT, v NVARCHAR(10))");
    // 3,000 rows: k has 30 values of 100 rows each, v has 7.
    ok(
        &mut s,
        "USE app; SET NOCOUNT ON; DECLARE @i INT = 0;
         BEGIN TRAN;
         WHILE @i < 3000 BEGIN
             INSERT dbo.t VALUES (@i, @i % 30, N'v' + CAST(@i % 7 AS NVARCHAR(2)));
             SET @i += 1
         END;
         COMMIT",
    );
    ok(
        &mut s,
        "USE app; CREATE INDEX ix_k ON dbo.t (k);
         CREATE STATISTICS s_v ON dbo.t (v, k) WITH FULLSCAN, NORECOMPUTE;
         ALTER DATABASE app SET AUTO_UPDATE_STATISTICS OFF",
    );
    // Rolled back: no trace of it after the restart either.
    ok(&mut s, "USE app; BEGIN TRAN; CREATE STATISTICS s_gone ON dbo.t (id); ROLLBACK");
    let before = rows(&ok(&mut s, &format!("USE app; {SHOW}")));
    assert_eq!(before.iter().filter(|r| r.len() == 5).count(), 7 + 30, "{before:?}");
    assert!(before.contains(&vec!["3000".into(), "3000".into(), "7".into()]), "{before:?}");

    let (instance, mut s) = restart(dir.path(), s, instance);
    let after = rows(&ok(&mut s, &format!("USE app; {SHOW}")));
    assert_eq!(before, after);
    assert!(after.contains(&vec!["s_v".into(), "3".into(), "1".into(), "1".into()]), "{after:?}");
    assert!(!after.iter().flatten().any(|c| c == "s_gone"), "{after:?}");
    assert!(after.contains(&vec!["0".into()]), "{after:?}");

    // DROP TABLE takes its statistics with it: a new table is not given them.
    ok(
        &mut s,
        "USE app; DROP TABLE dbo.t; CREATE TABLE dbo.t (id INT PRIMARY KEY, k INT, v NVARCHAR(10))",
    );
    let fresh = rows(&ok(
        &mut s,
        "USE app; SELECT COUNT(*) FROM sys.stats WHERE object_id = OBJECT_ID('dbo.t') AND stats_id > 1",
    ));
    assert_eq!(fresh, vec![vec!["0".to_string()]]);
    drop(s);
    instance.close().unwrap();
}

/// `rows` and `rows_sampled` of the statistics named `name` on `dbo.big`.
fn sampled(s: &mut Session, name: &str) -> (i64, i64) {
    let got = rows(&ok(
        s,
        &format!(
            "USE app; SELECT p.rows, p.rows_sampled FROM sys.stats AS st
             CROSS APPLY sys.dm_db_stats_properties(st.object_id, st.stats_id) AS p
             WHERE st.object_id = OBJECT_ID('dbo.big') AND st.name LIKE '{name}'"
        ),
    ));
    assert_eq!(got.len(), 1, "{name}: {got:?}");
    (got[0][0].parse().unwrap(), got[0][1].parse().unwrap())
}

#[test]
fn default_sampling_reads_part_of_a_large_table_and_fullscan_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE app");
    // 40,000 rows of some 230 bytes, a thousand leaves or so: g has 100 values of 400 rows.
    ok(
        &mut s,
        "USE app; CREATE TABLE dbo.big (id INT PRIMARY KEY, g INT, h INT, pad CHAR(220));
         CREATE TABLE dbo.groups (g INT PRIMARY KEY, name VARCHAR(10));
         WITH d AS (SELECT v FROM (VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)) AS x (v))
         INSERT dbo.big
         SELECT n, n % 100, n % 7, 'x'
         FROM (SELECT a.v * 10000 + b.v * 1000 + c.v * 100 + e.v * 10 + f.v AS n
               FROM d AS a, d AS b, d AS c, d AS e, d AS f) AS numbers
         WHERE n < 40000;
         INSERT dbo.groups SELECT DISTINCT g, 'g' FROM dbo.big",
    );
    ok(&mut s, "USE app; CREATE STATISTICS s_default ON dbo.big (g)");
    ok(&mut s, "USE app; CREATE STATISTICS s_full ON dbo.big (h) WITH FULLSCAN");
    let (rows_default, sampled_default) = sampled(&mut s, "s_default");
    assert_eq!(rows_default, 40_000);
    assert!(
        (4_000..20_000).contains(&sampled_default),
        "a default sample of 40,000 rows: {sampled_default}"
    );
    assert_eq!(sampled(&mut s, "s_full"), (40_000, 40_000));
    // The sample's histogram stands for the whole table: its steps add up to its rows.
    let steps =
        rows(&ok(&mut s, "USE app; DBCC SHOW_STATISTICS ('dbo.big', s_default) WITH HISTOGRAM"));
    let total: f64 =
        steps.iter().map(|r| r[1].parse::<f64>().unwrap() + r[2].parse::<f64>().unwrap()).sum();
    assert!((36_000.0..=44_000.0).contains(&total), "the histogram's rows: {total}");

    // The join on big.g, which s_default leads, creates nothing there; the filter on pad,
    // which nothing leads, creates statistics sampled as CREATE STATISTICS' default.
    ok(
        &mut s,
        "USE app; SELECT COUNT(*) FROM dbo.big AS b JOIN dbo.groups AS gr ON gr.g = b.g
         WHERE gr.name = 'g' AND b.pad = 'x'",
    );
    let (rows_auto, sampled_auto) = sampled(&mut s, "[_]WA[_]Sys[_]%");
    assert_eq!(rows_auto, 40_000);
    assert!((4_000..20_000).contains(&sampled_auto), "auto-created: {sampled_auto}");
    drop(s);
    instance.close().unwrap();
}
