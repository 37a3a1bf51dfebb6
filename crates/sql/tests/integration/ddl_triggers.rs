//! DDL triggers survive a restart (they are catalog entries, disabled ones stay disabled) and
//! fire for DDL of other sessions; a schema and a DDL trigger of the same name do not meet
//! (DDL triggers are not schema-scoped and have no entry in the catalog's names).

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{ok, restart, scalar};

#[test]
fn ddl_triggers_survive_a_restart_and_fire_for_every_session() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d; CREATE TABLE log (event nvarchar(100), obj sysname)");
    ok(
        &mut s,
        "USE d; EXEC ('CREATE TRIGGER audit ON DATABASE FOR DDL_TABLE_EVENTS AS
             INSERT INTO log SELECT EVENTDATA().value(''(/EVENT_INSTANCE/EventType)[1]'', ''nvarchar(100)''),
                                    EVENTDATA().value(''(/EVENT_INSTANCE/ObjectName)[1]'', ''sysname'')')",
    );
    ok(&mut s, "USE d; EXEC ('CREATE TRIGGER quiet ON DATABASE FOR CREATE_VIEW AS ROLLBACK')");
    ok(&mut s, "USE d; DISABLE TRIGGER quiet ON DATABASE");
    // A schema named like a DDL trigger: both stay findable.
    ok(&mut s, "USE d; EXEC ('CREATE SCHEMA audit')");
    ok(&mut s, "USE d; CREATE TABLE audit.t (a int)");

    let (instance, mut other) = restart(dir.path(), s, instance);
    ok(&mut other, "USE d; CREATE TABLE after_restart (a int)");
    ok(&mut other, "USE d; EXEC ('CREATE VIEW v AS SELECT 1 AS one')");
    let count = "USE d; SELECT COUNT(*) FROM log WHERE obj IN ('after_restart', 't')";
    assert_eq!(scalar(&mut other, count), Value::Int(2));
    let disabled = "USE d; SELECT is_disabled FROM sys.triggers WHERE name = 'quiet'";
    assert_eq!(scalar(&mut other, disabled), Value::Bit(true));
    assert!(!scalar(&mut other, "USE d; SELECT SCHEMA_ID('audit')").is_null());
    ok(&mut other, "USE d; DROP TRIGGER audit ON DATABASE");
    ok(&mut other, "USE d; DROP TABLE audit.t; DROP SCHEMA audit");
    let left = "USE d; SELECT COUNT(*) FROM sys.triggers WHERE parent_class = 0";
    assert_eq!(scalar(&mut other, left), Value::Int(1));
    other.close();
    drop(other);
    instance.close().unwrap();
}
