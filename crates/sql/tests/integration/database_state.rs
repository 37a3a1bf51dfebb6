//! `ALTER DATABASE ... SET OFFLINE | READ_ONLY` across restarts and other sessions: both are
//! kept in master, as SQL Server keeps them; the other sessions in the database stop the
//! change (5070) unless it rolls them back.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::sysviews::ServerCounters;
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{errors, restart, run, scalar};

fn ok(s: &mut Session, sql: &str) -> Collected {
    let out = run(s, sql);
    assert!(errors(&out).is_empty(), "{sql}: {:?}", out.messages);
    out
}

#[test]
fn offline_and_read_only_survive_a_restart_until_changed_back() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE a; CREATE DATABASE b");
    ok(&mut s, "CREATE TABLE a.dbo.t (x INT); INSERT a.dbo.t VALUES (1)");
    ok(&mut s, "CREATE TABLE b.dbo.t (x INT); INSERT b.dbo.t VALUES (1)");
    ok(&mut s, "ALTER DATABASE a SET OFFLINE; ALTER DATABASE b SET READ_ONLY");
    let (instance, mut s) = restart(dir.path(), s, instance);
    assert_eq!(
        scalar(&mut s, "SELECT state_desc FROM sys.databases WHERE name = 'a'"),
        Value::NStr("OFFLINE".into())
    );
    assert_eq!(errors(&run(&mut s, "USE a")), vec![942]);
    assert_eq!(errors(&run(&mut s, "INSERT b.dbo.t VALUES (2)")), vec![3906]);
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM b.dbo.t"), Value::Int(1));
    ok(&mut s, "ALTER DATABASE a SET ONLINE; ALTER DATABASE b SET READ_WRITE");
    let (instance, mut s) = restart(dir.path(), s, instance);
    ok(&mut s, "INSERT a.dbo.t VALUES (2); INSERT b.dbo.t VALUES (2)");
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM a.dbo.t"), Value::Int(2));
    assert_eq!(
        scalar(&mut s, "SELECT is_read_only FROM sys.databases WHERE name = 'b'"),
        Value::Bit(false)
    );
    drop(s);
    instance.close().unwrap();
}

#[test]
fn other_sessions_in_the_database_stop_the_change_unless_rolled_back() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    // One server's sessions, which see each other.
    let counters = Arc::new(ServerCounters::default());
    let mut admin = Session::with_counters(Arc::clone(&instance), Arc::clone(&counters));
    ok(&mut admin, "CREATE DATABASE d");
    ok(&mut admin, "CREATE TABLE d.dbo.t (x INT)");
    let mut user = Session::with_counters(Arc::clone(&instance), counters);
    ok(&mut user, "USE d; BEGIN TRAN; INSERT t VALUES (1)");
    assert_eq!(errors(&run(&mut admin, "ALTER DATABASE d SET OFFLINE")), vec![5070]);
    assert_eq!(errors(&run(&mut admin, "ALTER DATABASE d SET READ_ONLY WITH NO_WAIT")), vec![5070]);
    ok(&mut admin, "ALTER DATABASE d SET READ_ONLY WITH ROLLBACK IMMEDIATE");
    // The user's session was ended, its transaction rolled back.
    assert!(!errors(&run(&mut user, "SELECT 1")).is_empty());
    drop(user);
    assert_eq!(scalar(&mut admin, "SELECT COUNT(*) FROM d.dbo.t"), Value::Int(0));
    ok(&mut admin, "ALTER DATABASE d SET READ_WRITE");
    ok(&mut admin, "INSERT d.dbo.t VALUES (3)");
    assert_eq!(scalar(&mut admin, "SELECT COUNT(*) FROM d.dbo.t"), Value::Int(1));
}

/// model and msdb are databases like the others: what is written to them is there after a
/// restart, and a restart neither makes them again nor moves their ids.
#[test]
fn model_and_msdb_keep_their_objects_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "USE msdb; CREATE TABLE dbo.dba_log (id INT PRIMARY KEY, note NVARCHAR(20))");
    ok(&mut s, "INSERT msdb.dbo.dba_log VALUES (1, N'kept'); CREATE TABLE model.dbo.m (k INT)");
    ok(&mut s, "CREATE DATABASE app");
    let (instance, mut s) = restart(dir.path(), s, instance);
    let ids = run(&mut s, "SELECT name, database_id FROM sys.databases ORDER BY database_id");
    let listed: Vec<(Value, Value)> =
        ids.results[0].rows.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    let want: Vec<(Value, Value)> =
        [("master", 1), ("tempdb", 2), ("model", 3), ("msdb", 4), ("app", 5)]
            .iter()
            .map(|(n, id)| (Value::NStr((*n).into()), Value::Int(*id)))
            .collect();
    assert_eq!(listed, want);
    assert_eq!(
        scalar(&mut s, "SELECT note FROM msdb.dbo.dba_log WHERE id = 1"),
        Value::NStr("kept".into())
    );
    assert_eq!(
        scalar(&mut s, "SELECT COUNT(*) FROM model.sys.tables WHERE name = 'm'"),
        Value::Int(1)
    );
    // The history tables are still found beside the user's own.
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM msdb.dbo.backupset"), Value::Int(0));
    drop(s);
    instance.close().unwrap();
}

/// A new database takes model's options, as SQL Server makes it from model: its recovery
/// model, DELAYED_DURABILITY and automatic statistics; one made before a change keeps its own,
/// and both are kept across a restart.
#[test]
fn a_new_database_takes_models_options() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE before_change");
    ok(
        &mut s,
        "ALTER DATABASE model SET RECOVERY FULL;
         ALTER DATABASE model SET DELAYED_DURABILITY = FORCED;
         ALTER DATABASE model SET AUTO_UPDATE_STATISTICS OFF",
    );
    ok(&mut s, "CREATE DATABASE after_change");
    let (instance, mut s) = restart(dir.path(), s, instance);
    let options = |s: &mut Session, name: &str| {
        let out = ok(
            s,
            &format!(
                "SELECT recovery_model_desc, delayed_durability_desc, is_auto_create_stats_on,
                        is_auto_update_stats_on
                 FROM sys.databases WHERE name = '{name}'"
            ),
        );
        out.results[0].rows[0].clone()
    };
    let text = |t: &str| Value::NStr(t.into());
    assert_eq!(
        options(&mut s, "after_change"),
        vec![text("FULL"), text("FORCED"), Value::Bit(true), Value::Bit(false)]
    );
    assert_eq!(
        options(&mut s, "before_change"),
        vec![text("SIMPLE"), text("DISABLED"), Value::Bit(true), Value::Bit(true)]
    );
    // The option is the new database's own: it acts on its commits and can be changed there.
    ok(&mut s, "ALTER DATABASE after_change SET DELAYED_DURABILITY = DISABLED");
    assert_eq!(options(&mut s, "model")[1], text("FORCED"));
    drop(s);
    instance.close().unwrap();
}
