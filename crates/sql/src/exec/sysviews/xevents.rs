//! The `system_health` Extended Events session, as SQL Server starts it with every instance:
//! its rows in `sys.server_event_sessions`, `sys.server_event_session_targets`,
//! `sys.dm_xe_sessions` and `sys.dm_xe_session_targets`. Walden has no Extended Events
//! engine, so the session records no events: its `event_file` target names a file that
//! `sys.fn_xe_file_target_read_file` reads as empty and its `ring_buffer` target holds no
//! event. A script that reads deadlock or error reports from `system_health` (sp_BlitzLock)
//! finds the session running and nothing in it, as on a server that has had no deadlock.
//! Other sessions cannot be created (`CREATE EVENT SESSION` is not supported), so these are
//! the only rows.

use walden_engine::types::{Guid, Len, SqlType, Value};

use super::{bit, datetime, int, now_micros, nstr, View, ViewContext, DESC, SYSNAME};
use crate::exec::RowSet;

const INT: SqlType = SqlType::Int;
const BIGINT: SqlType = SqlType::BigInt;
const BIT: SqlType = SqlType::Bit;

/// `system_health`'s `event_session_id` in SQL Server.
const SESSION_ID: i64 = 65536;
/// The session's name.
const SESSION: &str = "system_health";
/// The session's memory address, which joins `sys.dm_xe_sessions.address` to
/// `sys.dm_xe_session_targets.event_session_address`; any fixed value does.
const ADDRESS: [u8; 8] = [0, 0, 0, 0, 0, 0, 0x10, 0];
/// The `package0` package's GUID, which owns both targets.
const PACKAGE0: &str = "60AA9FBF-673B-4553-B7ED-71DCA7F5E972";

/// A target: its name, id and `target_data`.
struct Target {
    name: &'static str,
    id: i64,
    data: &'static str,
}

/// The targets SQL Server gives `system_health`, in `target_name` order.
const TARGETS: [Target; 2] = [
    Target {
        name: "event_file",
        id: 1,
        data: "<EventFileTarget truncated=\"0\"><Buffers logged=\"0\" dropped=\"0\" />\
               <File name=\"system_health_0_0.xel\" /></EventFileTarget>",
    },
    Target {
        name: "ring_buffer",
        id: 2,
        data: "<RingBufferTarget truncated=\"0\" processingTime=\"0\" totalEventsProcessed=\"0\" \
               eventCount=\"0\" droppedCount=\"0\" memoryUsed=\"0\"></RingBufferTarget>",
    },
];

/// `sys.server_event_sessions`: the session's definition, started with the server.
pub(super) fn server_event_sessions() -> RowSet {
    View::<()>::new()
        .col("event_session_id", INT, |_| int(SESSION_ID))
        .opt("name", SYSNAME, |_| nstr(SESSION))
        .opt("event_retention_mode", SqlType::NChar(1), |_| nstr("S"))
        .opt("event_retention_mode_desc", DESC, |_| nstr("ALLOW_SINGLE_EVENT_LOSS"))
        .opt("max_dispatch_latency", INT, |_| int(120_000))
        .opt("max_memory", INT, |_| int(4096))
        .opt("max_event_size", INT, |_| int(0))
        .opt("memory_partition_mode", SqlType::NChar(1), |_| nstr("G"))
        .opt("memory_partition_mode_desc", DESC, |_| nstr("NONE"))
        .opt("track_causality", BIT, |_| bit(false))
        .opt("startup_state", BIT, |_| bit(true))
        .rows(&[()])
}

/// `sys.server_event_session_targets`: the session's two targets.
pub(super) fn server_event_session_targets() -> RowSet {
    View::<Target>::new()
        .col("event_session_id", INT, |_| int(SESSION_ID))
        .col("target_id", INT, |t| int(t.id))
        .opt("name", SYSNAME, |t| nstr(t.name))
        .opt("package", SYSNAME, |_| nstr("package0"))
        .opt("module", SYSNAME, |_| nstr(PACKAGE0))
        .rows(&TARGETS)
}

/// `sys.dm_xe_sessions`: the running session, created when the server started.
pub(super) fn dm_xe_sessions(ctx: &ViewContext<'_>) -> RowSet {
    let started = now_micros().saturating_sub(ctx.counters.uptime_ms() * 1000);
    let view = View::<u64>::new()
        .col("address", SqlType::VarBinary(Len::N(8)), |_| Value::Binary(ADDRESS.to_vec()))
        .col("name", SqlType::NVarChar(Len::N(256)), |_| nstr(SESSION))
        .col("pending_buffers", INT, |_| int(0))
        .col("total_regular_buffers", INT, |_| int(0))
        .col("regular_buffer_size", BIGINT, |_| Value::BigInt(0))
        .col("total_large_buffers", INT, |_| int(0))
        .col("large_buffer_size", BIGINT, |_| Value::BigInt(0))
        .col("total_buffer_size", BIGINT, |_| Value::BigInt(0))
        .col("buffer_policy_flags", INT, |_| int(0))
        .col("buffer_policy_desc", SqlType::NVarChar(Len::N(256)), |_| nstr(""))
        .col("flags", INT, |_| int(0))
        .col("flag_desc", SqlType::NVarChar(Len::N(256)), |_| nstr(""))
        .col("dropped_event_count", INT, |_| int(0))
        .col("dropped_buffer_count", INT, |_| int(0))
        .col("blocked_event_fire_time", INT, |_| int(0))
        .col("create_time", SqlType::DateTime, |started| datetime(*started))
        .col("largest_event_dropped_size", INT, |_| int(0))
        .opt("session_source", SqlType::NVarChar(Len::N(256)), |_| nstr("server"));
    view.rows(&[started])
}

/// `sys.dm_xe_session_targets`: each target, with no event processed.
pub(super) fn dm_xe_session_targets() -> RowSet {
    View::<Target>::new()
        .col("event_session_address", SqlType::VarBinary(Len::N(8)), |_| {
            Value::Binary(ADDRESS.to_vec())
        })
        .col("target_name", SqlType::NVarChar(Len::N(60)), |t| nstr(t.name))
        .col("target_package_guid", SqlType::UniqueIdentifier, |_| {
            Guid::parse(PACKAGE0).map_or(Value::Null, Value::Guid)
        })
        .col("execution_count", BIGINT, |_| Value::BigInt(0))
        .col("execution_duration_ms", BIGINT, |_| Value::BigInt(0))
        .opt("target_data", SqlType::NVarChar(Len::Max), |t| nstr(t.data))
        .rows(&TARGETS)
}
