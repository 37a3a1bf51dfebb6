//! User-defined messages (`sp_addmessage`) are kept in master and survive a restart, with
//! their languages, severities and WITH_LOG flags; RAISERROR and FORMATMESSAGE find them
//! after it.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{ok, restart};

const LISTED: &str = "SELECT message_id, language_id, severity, is_event_logged, text
                      FROM sys.messages WHERE message_id > 50000
                      ORDER BY message_id, language_id";

#[test]
fn user_messages_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "CREATE DATABASE d");
    ok(
        &mut s,
        "USE d
         EXEC sp_addmessage 50001, 16, N'Order %d of customer %s is late.'
         EXEC sp_addmessage @msgnum = 50001, @severity = 16, @msgtext = N'Bestellung %1! ist spät.',
              @lang = 'Deutsch'
         EXEC sp_addmessage 50002, 10, N'Logged note', @with_log = 'TRUE'
         EXEC sp_addmessage 50003, 11, N'dropped before the restart'
         EXEC sp_dropmessage 50003",
    );
    let before = ok(&mut s, LISTED).results.last().unwrap().rows.clone();
    assert_eq!(before.len(), 3);
    assert_eq!(before[0][1], Value::SmallInt(1031));
    assert_eq!(before[2][3], Value::Bit(true));

    let (_instance, mut s) = restart(dir.path(), s, instance);
    assert_eq!(ok(&mut s, LISTED).results.last().unwrap().rows, before);
    let out = ok(&mut s, "SELECT FORMATMESSAGE(50001, 7, N'Ann')");
    assert_eq!(
        out.results.last().unwrap().rows[0][0],
        Value::NStr("Order 7 of customer Ann is late.".into())
    );
    let mut out = Collected::default();
    s.execute_batch("RAISERROR(50001, -1, 3, 8, N'Bob')", &mut out);
    let e = out.errors().next().unwrap();
    assert_eq!((e.number, e.severity, e.state), (50001, 16, 3));
    assert_eq!(e.message, "Order 8 of customer Bob is late.");
    // Not listed in master's extended properties.
    let out = ok(&mut s, "USE master; SELECT COUNT(*) FROM sys.extended_properties");
    assert_eq!(out.results.last().unwrap().rows[0][0], Value::Int(0));
}
