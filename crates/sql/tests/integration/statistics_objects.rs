//! Statistics objects across a restart: what CREATE STATISTICS and CREATE INDEX built is read
//! back from the catalog (DBCC SHOW_STATISTICS shows the same steps), NORECOMPUTE and the
//! database's AUTO_UPDATE_STATISTICS setting are kept, and a rolled-back CREATE STATISTICS
//! leaves nothing behind.

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
