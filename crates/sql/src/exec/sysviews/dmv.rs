//! Dynamic management views over the engine's counters: performance counters, file I/O,
//! wait statistics and the log's state.

use std::sync::Arc;

use walden_engine::database::CheckpointLsns;
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::Database;
use walden_log::LogStats;

use super::databases::{files_of, FileRow};
use super::sessions::lock_wait_type;
use super::{
    big, format_lsn, int, int_arg, nstr, small, LogSpace, View, ViewContext, Vlf, DESC, PAGE_BYTES,
    SYSNAME,
};
use crate::exec::{RowSet, SqlError};

/// `cntr_type` PERF_COUNTER_BULK_COUNT: a cumulative count, shown per second by tools that
/// sample it twice (every `.../sec` counter).
const BULK_COUNT: i32 = 272_696_576;
/// `cntr_type` PERF_COUNTER_LARGE_RAWCOUNT: a value as it is now.
const RAW_COUNT: i32 = 65_792;

/// One row of `sys.dm_os_performance_counters`.
struct CounterRow {
    object: &'static str,
    counter: &'static str,
    instance: String,
    value: u64,
    kind: i32,
}

/// What `SQLServer:Databases` shows of one database (or of all, for `_Total`).
#[derive(Default, Clone, Copy)]
struct DbCounters {
    data_bytes: u64,
    log_bytes: u64,
    log_used_bytes: u64,
    transactions: u64,
    stats_commits: u64,
    flushes: u64,
    bytes_flushed: u64,
    flush_waits: u64,
    flush_wait_us: u64,
    flush_write_us: u64,
}

impl DbCounters {
    fn of(db: &Database) -> DbCounters {
        let stats = db.log_stats();
        let space = LogSpace::of(db);
        DbCounters {
            data_bytes: u64::from(db.space().pool().file().page_count()) * PAGE_BYTES,
            log_bytes: space.file_bytes,
            log_used_bytes: space.used_bytes(),
            transactions: db.transactions(),
            stats_commits: stats.commits_full + stats.commits_delayed,
            flushes: stats.flushes,
            bytes_flushed: stats.bytes_flushed,
            flush_waits: stats.flush_waits,
            flush_wait_us: stats.flush_wait_time_us,
            flush_write_us: stats.flush_write_time_us,
        }
    }

    fn add(&mut self, o: &DbCounters) {
        self.data_bytes += o.data_bytes;
        self.log_bytes += o.log_bytes;
        self.log_used_bytes += o.log_used_bytes;
        self.transactions += o.transactions;
        self.stats_commits += o.stats_commits;
        self.flushes += o.flushes;
        self.bytes_flushed += o.bytes_flushed;
        self.flush_waits += o.flush_waits;
        self.flush_wait_us += o.flush_wait_us;
        self.flush_write_us += o.flush_write_us;
    }
}

/// A counter: its name, `cntr_type` and value.
type CounterDef = (&'static str, i32, fn(&DbCounters) -> u64);

/// The counters of object `SQLServer:Databases`, in the order they are listed.
const DATABASE_COUNTERS: [CounterDef; 11] = [
    ("Data File(s) Size (KB)", RAW_COUNT, |c| c.data_bytes / 1024),
    ("Log File(s) Size (KB)", RAW_COUNT, |c| c.log_bytes / 1024),
    ("Log File(s) Used Size (KB)", RAW_COUNT, |c| c.log_used_bytes / 1024),
    ("Percent Log Used", RAW_COUNT, |c| {
        (c.log_used_bytes * 100).checked_div(c.log_bytes).unwrap_or(0)
    }),
    ("Transactions/sec", BULK_COUNT, |c| c.transactions),
    ("Write Transactions/sec", BULK_COUNT, |c| c.stats_commits),
    ("Log Bytes Flushed/sec", BULK_COUNT, |c| c.bytes_flushed),
    ("Log Flushes/sec", BULK_COUNT, |c| c.flushes),
    ("Log Flush Waits/sec", BULK_COUNT, |c| c.flush_waits),
    ("Log Flush Wait Time", RAW_COUNT, |c| c.flush_wait_us / 1000),
    ("Log Flush Write Time (ms)", RAW_COUNT, |c| c.flush_write_us / 1000),
];

/// `sys.dm_os_performance_counters`: `SQLServer:Databases` per database and `_Total`,
/// `SQLServer:SQL Statistics`, `SQLServer:Locks` and `SQLServer:Buffer Manager`.
pub(super) fn performance_counters(ctx: &ViewContext<'_>) -> RowSet {
    let databases = ctx.instance.databases();
    let mut per_db: Vec<(String, DbCounters)> =
        databases.iter().map(|db| (db.name().to_string(), DbCounters::of(db))).collect();
    let mut total = DbCounters::default();
    for (_, c) in &per_db {
        total.add(c);
    }
    per_db.push(("_Total".to_string(), total));
    let mut rows = Vec::new();
    for (counter, kind, value) in DATABASE_COUNTERS {
        for (instance, c) in &per_db {
            rows.push(CounterRow {
                object: "SQLServer:Databases",
                counter,
                instance: instance.clone(),
                value: value(c),
                kind,
            });
        }
    }
    let server = |object, counter, instance: &str, value, kind| CounterRow {
        object,
        counter,
        instance: instance.to_string(),
        value,
        kind,
    };
    rows.push(server(
        "SQLServer:SQL Statistics",
        "Batch Requests/sec",
        "",
        ctx.counters.batch_requests(),
        BULK_COUNT,
    ));
    let locks = ctx.instance.locks().stats();
    let wait_ms = u64::try_from(locks.wait_time.as_millis()).unwrap_or(u64::MAX);
    for (counter, value) in [
        ("Lock Requests/sec", locks.requests),
        ("Lock Waits/sec", locks.waits),
        ("Lock Timeouts/sec", locks.timeouts),
        ("Number of Deadlocks/sec", locks.deadlocks),
        ("Lock Wait Time (ms)", wait_ms),
    ] {
        rows.push(server("SQLServer:Locks", counter, "_Total", value, BULK_COUNT));
    }
    let (mut reads, mut writes, mut checkpoint_writes, mut cached) = (0, 0, 0, 0);
    for db in &databases {
        let s = db.space().pool().stats();
        reads += s.reads;
        writes += s.writes;
        checkpoint_writes += s.checkpoint_writes;
        cached += s.cached as u64;
    }
    for (counter, value, kind) in [
        ("Page reads/sec", reads, BULK_COUNT),
        ("Page writes/sec", writes, BULK_COUNT),
        ("Checkpoint pages/sec", checkpoint_writes, BULK_COUNT),
        ("Database pages", cached, RAW_COUNT),
    ] {
        rows.push(server("SQLServer:Buffer Manager", counter, "", value, kind));
    }
    // SQL Server's columns are NCHAR(128), blank-padded; unpadded NVARCHAR(128) values
    // compare equal to them, since comparisons ignore trailing blanks.
    View::<CounterRow>::new()
        .col("object_name", SYSNAME, |r| nstr(r.object))
        .col("counter_name", SYSNAME, |r| nstr(r.counter))
        .opt("instance_name", SYSNAME, |r| nstr(r.instance.as_str()))
        .col("cntr_value", SqlType::BigInt, |r| big(r.value))
        .col("cntr_type", SqlType::Int, |r| Value::Int(r.kind))
        .rows(&rows)
}

/// One row of `sys.dm_os_wait_stats`, times in microseconds.
struct WaitRow {
    wait_type: &'static str,
    count: u64,
    total_us: u64,
    max_us: u64,
}

/// `sys.dm_os_wait_stats`: the log's `WRITELOG` and `LOGBUFFER` waits summed over the
/// databases, and the lock manager's `LCK_M_*` waits by requested mode.
pub(super) fn wait_stats(ctx: &ViewContext<'_>) -> RowSet {
    let mut rows: Vec<WaitRow> = ctx
        .instance
        .locks()
        .wait_stats()
        .into_iter()
        .map(|(mode, w)| WaitRow {
            wait_type: lock_wait_type(mode.name()),
            count: w.count,
            total_us: u64::try_from(w.total.as_micros()).unwrap_or(u64::MAX),
            max_us: u64::try_from(w.max.as_micros()).unwrap_or(u64::MAX),
        })
        .collect();
    for (wait_type, pick) in [
        ("LOGBUFFER", (|s: &LogStats| s.logbuffer) as fn(&LogStats) -> walden_log::WaitStat),
        ("WRITELOG", |s: &LogStats| s.writelog),
    ] {
        let mut row = WaitRow { wait_type, count: 0, total_us: 0, max_us: 0 };
        for db in ctx.instance.databases() {
            let w = pick(&db.log_stats());
            row.count += w.count;
            row.total_us = row.total_us.saturating_add(w.total_us);
            row.max_us = row.max_us.max(w.max_us);
        }
        rows.push(row);
    }
    View::<WaitRow>::new()
        .col("wait_type", DESC, |r| nstr(r.wait_type))
        .col("waiting_tasks_count", SqlType::BigInt, |r| big(r.count))
        .col("wait_time_ms", SqlType::BigInt, |r| big(r.total_us / 1000))
        .col("max_wait_time_ms", SqlType::BigInt, |r| big(r.max_us / 1000))
        .col("signal_wait_time_ms", SqlType::BigInt, |_| big(0))
        .rows(&rows)
}

/// `sys.dm_tran_locks`: every granted lock and waiting request in the lock manager, one
/// row each, with the session whose transaction owns it.
pub(super) fn tran_locks(ctx: &ViewContext<'_>) -> RowSet {
    use walden_engine::lock::{owner_session, LockInfo, Resource};
    let mut rows = ctx.instance.locks().snapshot();
    rows.sort_by_key(|r| (owner_session(r.owner), r.owner));
    View::<LockInfo>::new()
        .col("resource_type", DESC, |r| nstr(r.resource.type_name()))
        .col("resource_subtype", DESC, |_| nstr(""))
        .col("resource_database_id", SqlType::Int, |r| int(r.resource.database().into()))
        // SQL Server's KEY description is a 48-bit hash of the key, 12 hex digits in
        // parentheses, `(ffffffffffff)` for the end of an index (which key-range locks lock);
        // Walden shows the low 48 bits of its 64-bit hash. The others are empty for the
        // resources Walden locks.
        .col("resource_description", SqlType::NVarChar(Len::N(256)), |r| match r.resource {
            Resource::Key { hash, .. } => nstr(format!("({:012x})", hash & 0xffff_ffff_ffff)),
            Resource::Other { name, .. } => nstr(name.to_string()),
            Resource::Application { hash, .. } => nstr(format!("0:({hash:016x})")),
            _ => nstr(""),
        })
        // The table for OBJECT and KEY (SQL Server gives a KEY's hobt_id; Walden's index
        // lives in the table's object).
        .col("resource_associated_entity_id", SqlType::BigInt, |r| match r.resource {
            Resource::Object { object, .. } | Resource::Key { object, .. } => big(object.into()),
            _ => big(0),
        })
        .col("resource_lock_partition", SqlType::Int, |_| int(0))
        .col("request_mode", DESC, |r| nstr(r.mode.name()))
        .col("request_type", DESC, |_| nstr("LOCK"))
        .col("request_status", DESC, |r| nstr(r.status.name()))
        .col("request_reference_count", SqlType::SmallInt, |_| small(1))
        .col("request_session_id", SqlType::Int, |r| int(owner_session(r.owner).into()))
        .col("request_owner_type", DESC, |_| nstr("TRANSACTION"))
        .col("request_owner_id", SqlType::BigInt, |r| big(r.owner))
        .rows(&rows)
}

/// `sys.dm_io_virtual_file_stats(database_id, file_id)`: I/O counters of the data and log
/// files; NULL for either argument means all.
pub(super) fn virtual_file_stats(
    ctx: &ViewContext<'_>,
    args: &[Value],
) -> Result<RowSet, SqlError> {
    let db_id = int_arg(&args[0])?;
    let file_id = int_arg(&args[1])?;
    let sample_ms = ctx.counters.uptime_ms();
    let rows: Vec<(FileRow, u64)> = ctx
        .instance
        .databases()
        .iter()
        .filter(|db| db_id.is_none_or(|id| i64::from(db.id()) == id))
        .flat_map(|db| files_of(db))
        .filter(|f| file_id.is_none_or(|id| i64::from(f.file_id) == id))
        .map(|f| (f, sample_ms))
        .collect();
    Ok(View::<(FileRow, u64)>::new()
        .col("database_id", SqlType::SmallInt, |(f, _)| small(i64::from(f.db_id)))
        .col("file_id", SqlType::SmallInt, |(f, _)| small(i64::from(f.file_id)))
        .col("sample_ms", SqlType::BigInt, |(_, ms)| big(*ms))
        .col("num_of_reads", SqlType::BigInt, |(f, _)| big(f.reads))
        .col("num_of_bytes_read", SqlType::BigInt, |(f, _)| big(f.bytes_read))
        .col("io_stall_read_ms", SqlType::BigInt, |_| big(0))
        .col("io_stall_queued_read_ms", SqlType::BigInt, |_| big(0))
        .col("num_of_writes", SqlType::BigInt, |(f, _)| big(f.writes))
        .col("num_of_bytes_written", SqlType::BigInt, |(f, _)| big(f.bytes_written))
        .col("io_stall_write_ms", SqlType::BigInt, |(f, _)| big(f.write_stall_ms))
        .col("io_stall_queued_write_ms", SqlType::BigInt, |_| big(0))
        .col("io_stall", SqlType::BigInt, |(f, _)| big(f.write_stall_ms))
        .col("size_on_disk_bytes", SqlType::BigInt, |(f, _)| big(f.size_bytes))
        .opt("file_handle", SqlType::VarBinary(Len::N(8)), |_| Value::Null)
        .rows(&rows))
}

/// What `sys.dm_db_log_stats` shows of one database.
struct LogStatsRow {
    db: Arc<Database>,
    has_log: bool,
    space: LogSpace,
    stats: LogStats,
    checkpoint: CheckpointLsns,
    last_commit_lsn: u64,
    reuse_wait: &'static str,
}

const MB: f64 = 1024.0 * 1024.0;

fn mb(bytes: u64) -> Value {
    Value::Float(bytes as f64 / MB)
}

/// An LSN column: NULL for tempdb, which has no log.
fn lsn_col(r: &LogStatsRow, lsn: u64) -> Value {
    if r.has_log {
        nstr(format_lsn(lsn))
    } else {
        Value::Null
    }
}

/// `sys.dm_db_log_stats(database_id)`: the log of one database (NULL: the view's database;
/// an id with no database: no row), with Walden's durability columns at the end.
pub(super) fn log_stats(ctx: &ViewContext<'_>, args: &[Value]) -> Result<RowSet, SqlError> {
    let db = match int_arg(&args[0])? {
        None => Some(Arc::clone(ctx.database)),
        Some(id) => ctx.instance.database_by_id(id),
    };
    let rows: Vec<LogStatsRow> = db
        .into_iter()
        .map(|db| {
            let stats = db.log_stats();
            LogStatsRow {
                has_log: db.log().is_some(),
                space: LogSpace::of(&db),
                checkpoint: db.last_checkpoint(),
                // The engine's record survives restarts (recovery finds it); the log's own is
                // updated under its lock, so it is never behind a commit appended concurrently.
                last_commit_lsn: db.last_commit().0.max(stats.last_commit_lsn),
                reuse_wait: db.log_reuse_wait(),
                stats,
                db,
            }
        })
        .collect();
    let lsn = SqlType::NVarChar(Len::N(24));
    Ok(View::<LogStatsRow>::new()
        .col("database_id", SqlType::Int, |r| int(i64::from(r.db.id())))
        .opt("recovery_model", DESC, |r| nstr(r.db.recovery_model().name()))
        .opt("log_min_lsn", lsn, |r| lsn_col(r, r.space.active_start))
        .opt("log_end_lsn", lsn, |r| lsn_col(r, r.space.end))
        // VLF numbers are segment sequences + 1, so that 0 is a slot never used, as in SQL
        // Server (`sys.dm_db_log_info`).
        .opt("current_vlf_sequence_number", SqlType::BigInt, |r| {
            big(r.space.sequence_of(r.space.end) + 1)
        })
        .opt("current_vlf_size_mb", SqlType::Float, |r| mb(r.space.segment_size))
        .opt("total_vlf_count", SqlType::BigInt, |r| big(r.space.segments))
        .opt("total_log_size_mb", SqlType::Float, |r| mb(r.space.file_bytes))
        .opt("active_vlf_count", SqlType::BigInt, |r| {
            big(r.space.segments_spanned(r.space.active_start))
        })
        .opt("active_log_size_mb", SqlType::Float, |r| mb(r.space.used_bytes()))
        .opt("log_truncation_holdup_reason", DESC, |r| nstr(r.reuse_wait))
        .opt("log_backup_time", SqlType::DateTime, |_| Value::Null)
        .opt("log_backup_lsn", lsn, |_| Value::Null)
        .opt("log_since_last_log_backup_mb", SqlType::Float, |_| Value::Null)
        .opt("log_checkpoint_lsn", lsn, |r| lsn_col(r, r.checkpoint.checkpoint_lsn))
        .opt("log_since_last_checkpoint_mb", SqlType::Float, |r| {
            mb(r.space.end.saturating_sub(r.checkpoint.checkpoint_lsn))
        })
        .opt("log_recovery_lsn", lsn, |r| lsn_col(r, r.checkpoint.scan_start))
        .opt("log_recovery_size_mb", SqlType::Float, |r| {
            mb(r.space.end.saturating_sub(r.checkpoint.scan_start))
        })
        .opt("recovery_vlf_count", SqlType::BigInt, |r| {
            big(r.space.segments_spanned(r.checkpoint.scan_start))
        })
        .col("log_hardened_lsn", SqlType::BigInt, |r| big(r.stats.hardened_lsn))
        .col("last_commit_lsn", SqlType::BigInt, |r| big(r.last_commit_lsn))
        .col("unhardened_commit_count", SqlType::BigInt, |r| big(r.stats.unhardened_commits))
        .col("oldest_unhardened_commit_ms", SqlType::BigInt, |r| {
            big(r.stats.oldest_unhardened_us / 1000)
        })
        .col("avg_commits_per_flush", SqlType::Float, |r| {
            Value::Float(r.stats.avg_commits_per_flush())
        })
        .rows(&rows))
}

/// `sys.dm_db_log_space_usage`: the view's database's log file size and the part of it in
/// use (from the truncation point to the end). Walden has no log backups, so
/// `log_space_in_bytes_since_last_backup` is the log in use too. tempdb, which keeps no log,
/// shows zeros.
pub(super) fn log_space_usage(ctx: &ViewContext<'_>) -> RowSet {
    let rows = [(ctx.database.id(), LogSpace::of(ctx.database))];
    View::<(u32, LogSpace)>::new()
        .col("database_id", SqlType::Int, |r| int(i64::from(r.0)))
        .col("total_log_size_in_bytes", SqlType::BigInt, |r| big(r.1.file_bytes))
        .col("used_log_space_in_bytes", SqlType::BigInt, |r| big(r.1.used_bytes()))
        .col("used_log_space_in_percent", SqlType::Real, |r| Value::Real(r.1.used_percent() as f32))
        .col("log_space_in_bytes_since_last_backup", SqlType::BigInt, |r| big(r.1.used_bytes()))
        .rows(&rows)
}

/// `sys.dm_db_log_info(database_id)`: one row per slot of the log file, as SQL Server lists
/// its virtual log files (NULL: the view's database; an id with no database: no rows).
pub(super) fn log_info(ctx: &ViewContext<'_>, args: &[Value]) -> Result<RowSet, SqlError> {
    let db = match int_arg(&args[0])? {
        None => Some(Arc::clone(ctx.database)),
        Some(id) => ctx.instance.database_by_id(id),
    };
    let rows: Vec<(u32, u64, walden_log::SegmentInfo)> = db
        .iter()
        .filter_map(|db| db.log().map(|log| (db.id(), log)))
        .flat_map(|(id, log)| {
            let data = log.segment_size() - walden_log::format::SECTOR;
            log.segments().into_iter().map(move |s| (id, data, s))
        })
        .collect();
    let lsn = SqlType::NVarChar(Len::N(24));
    Ok(View::<(u32, u64, walden_log::SegmentInfo)>::new()
        .col("database_id", SqlType::Int, |r| int(i64::from(r.0)))
        .col("file_id", SqlType::Int, |_| int(2))
        .col("vlf_begin_offset", SqlType::BigInt, |r| big(r.2.file_offset))
        .col("vlf_size_mb", SqlType::Float, |r| mb(r.2.size))
        .col("vlf_sequence_number", SqlType::BigInt, |r| big(Vlf::of(&r.2).number))
        .col("vlf_active", SqlType::Bit, |r| Value::Bit(r.2.active))
        .col("vlf_status", SqlType::Int, |r| int(Vlf::of(&r.2).status.into()))
        .col("vlf_parity", SqlType::TinyInt, |r| Value::TinyInt(Vlf::of(&r.2).parity))
        .col("vlf_first_lsn", lsn, |r| nstr(format_lsn(r.2.sequence.map_or(0, |s| s * r.1))))
        .opt("vlf_create_lsn", lsn, |_| Value::Null)
        .opt("vlf_encryptor_thumbprint", SqlType::VarBinary(Len::N(20)), |_| Value::Null)
        .rows(&rows))
}
