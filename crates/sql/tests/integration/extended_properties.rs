//! Extended properties survive a restart: each is stored in catalog entries of its own, a
//! value larger than one entry split across several.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{ok, restart};

#[test]
fn many_large_properties_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(&mut s, "CREATE SCHEMA app");
    let mut script = String::from("USE d; CREATE TABLE app.t (");
    script.push_str(&(1..=40).map(|i| format!("c{i} INT")).collect::<Vec<_>>().join(", "));
    script.push(')');
    ok(&mut s, &script);
    ok(
        &mut s,
        "USE d; DECLARE @i INT = 1, @c SYSNAME, @v NVARCHAR(3750)
         WHILE @i <= 40
         BEGIN
             SELECT @c = 'c' + CAST(@i AS VARCHAR(3)), @v = REPLICATE(CAST(@i % 10 AS NCHAR(1)), 3700 + @i)
             EXEC sp_addextendedproperty N'MS_Description', @v, N'SCHEMA', N'app', N'TABLE', N't', N'COLUMN', @c
             SET @i += 1
         END
         EXEC sp_addextendedproperty N'MS_Description', N'the app', N'SCHEMA', N'app'",
    );
    let summary =
        "USE d; SELECT COUNT(*), SUM(DATALENGTH(value)), MIN(CAST(value AS NVARCHAR(4000)))
                   FROM sys.extended_properties";
    let before = ok(&mut s, summary).results.last().unwrap().rows.clone();
    assert_eq!(before[0][0], Value::Int(41));

    let (_instance, mut s) = restart(dir.path(), s, instance);
    let after = ok(&mut s, summary).results.last().unwrap().rows.clone();
    assert_eq!(before, after);
    let out = ok(
        &mut s,
        "USE d; SELECT CAST(value AS NVARCHAR(4000)) FROM fn_listextendedproperty(
             N'MS_Description', N'SCHEMA', N'app', N'TABLE', N't', N'COLUMN', N'c17')",
    );
    assert_eq!(out.results.last().unwrap().rows[0][0], Value::NStr("7".repeat(3717)));
}
