//! DMVs that DBA scripts (the First Responder Kit's `sp_Blitz*`) read for the server's
//! schedulers, plan cache and index operations: `sys.dm_os_schedulers` from the machine's
//! CPUs and the sessions' running requests, and the views whose information Walden does not
//! keep, with SQL Server's columns and no rows.

use walden_engine::types::{Len, SqlType, Value};

use super::sessions::rows_of;
use super::{big, bit, int, nstr, View, ViewContext, DESC};
use crate::exec::{RowSet, SqlError};

/// One CPU as `sys.dm_os_schedulers` shows a scheduler.
struct Scheduler {
    id: i64,
    /// Running requests counted on this scheduler.
    tasks: i64,
}

/// `sys.dm_os_schedulers`: one `VISIBLE ONLINE` scheduler per CPU Walden may run on (the
/// `scheduler_count` of `sys.dm_os_sys_info`). Walden's threads are scheduled by the
/// operating system, not bound to a CPU, so each running request is counted on scheduler
/// `session_id % cpu_count`: the totals over the view are the server's, the split is not
/// where the work ran. Walden does not count switches, yields or CPU time per CPU (0).
pub(super) fn schedulers(ctx: &ViewContext<'_>) -> RowSet {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as i64);
    let mut rows: Vec<Scheduler> = (0..cpus).map(|id| Scheduler { id, tasks: 0 }).collect();
    for session in rows_of(ctx).iter().filter(|s| s.running()) {
        let slot = i64::from(session.a.spid()) % cpus;
        rows[slot as usize].tasks += 1;
    }
    View::<Scheduler>::new()
        .col("scheduler_address", SqlType::VarBinary(Len::N(8)), |s| {
            Value::Binary((s.id as u64 + 1).to_be_bytes().to_vec())
        })
        .opt("parent_node_id", SqlType::Int, |_| int(0))
        .col("scheduler_id", SqlType::Int, |s| int(s.id))
        .col("cpu_id", SqlType::Int, |s| int(s.id))
        .col("status", DESC, |_| nstr("VISIBLE ONLINE"))
        .col("is_online", SqlType::Bit, |_| bit(true))
        .col("is_idle", SqlType::Bit, |s| bit(s.tasks == 0))
        .col("preemptive_switches_count", SqlType::Int, |_| int(0))
        .col("context_switches_count", SqlType::Int, |_| int(0))
        .col("idle_switches_count", SqlType::Int, |_| int(0))
        .col("current_tasks_count", SqlType::Int, |s| int(s.tasks))
        .col("runnable_tasks_count", SqlType::Int, |_| int(0))
        .col("current_workers_count", SqlType::Int, |s| int(s.tasks))
        .col("active_workers_count", SqlType::Int, |s| int(s.tasks))
        .col("work_queue_count", SqlType::BigInt, |_| big(0))
        .col("pending_disk_io_count", SqlType::Int, |_| int(0))
        .col("load_factor", SqlType::Int, |s| int(s.tasks))
        .col("yield_count", SqlType::Int, |_| int(0))
        .col("last_timer_activity", SqlType::BigInt, |_| big(0))
        .col("failed_to_create_worker", SqlType::Bit, |_| bit(false))
        .opt("active_worker_address", SqlType::VarBinary(Len::N(8)), |_| Value::Null)
        .opt("memory_object_address", SqlType::VarBinary(Len::N(8)), |_| Value::Null)
        .opt("task_memory_object_address", SqlType::VarBinary(Len::N(8)), |_| Value::Null)
        .col("quantum_length_us", SqlType::BigInt, |_| big(4000))
        .col("total_cpu_usage_ms", SqlType::BigInt, |_| big(0))
        .col("total_cpu_idle_capped_ms", SqlType::BigInt, |_| big(0))
        .col("total_scheduler_delay_ms", SqlType::BigInt, |_| big(0))
        .col("ideal_workers_limit", SqlType::Int, |_| int(0))
        .rows(&rows)
}

/// A view of the given columns (each nullable, of its type) with no rows: information Walden
/// does not keep.
fn empty(columns: &[(&'static str, SqlType)]) -> RowSet {
    let mut view = View::<()>::new();
    for (name, ty) in columns {
        view = view.opt(name, *ty, |_| Value::Null);
    }
    view.rows(&[])
}

const BIGINT: SqlType = SqlType::BigInt;
const INT: SqlType = SqlType::Int;

/// `sys.dm_db_index_operational_stats(database_id, object_id, index_id, partition_number)`:
/// Walden does not count leaf operations, latch or lock waits per index, so no rows. The
/// arguments are checked as INT (245 or 206).
pub(super) fn index_operational_stats(
    _ctx: &ViewContext<'_>,
    args: &[Value],
) -> Result<RowSet, SqlError> {
    for a in args {
        super::int_arg(a)?;
    }
    let mut columns = vec![
        ("database_id", SqlType::SmallInt),
        ("object_id", INT),
        ("index_id", INT),
        ("partition_number", INT),
        ("hobt_id", BIGINT),
    ];
    for counter in [
        "leaf_insert_count",
        "leaf_delete_count",
        "leaf_update_count",
        "leaf_ghost_count",
        "nonleaf_insert_count",
        "nonleaf_delete_count",
        "nonleaf_update_count",
        "leaf_allocation_count",
        "nonleaf_allocation_count",
        "leaf_page_merge_count",
        "nonleaf_page_merge_count",
        "range_scan_count",
        "singleton_lookup_count",
        "forwarded_fetch_count",
        "lob_fetch_in_pages",
        "lob_fetch_in_bytes",
        "lob_orphan_create_count",
        "lob_orphan_insert_count",
        "row_overflow_fetch_in_pages",
        "row_overflow_fetch_in_bytes",
        "column_value_push_off_row_count",
        "column_value_pull_in_row_count",
        "row_lock_count",
        "row_lock_wait_count",
        "row_lock_wait_in_ms",
        "page_lock_count",
        "page_lock_wait_count",
        "page_lock_wait_in_ms",
        "index_lock_promotion_attempt_count",
        "index_lock_promotion_count",
        "page_latch_wait_count",
        "page_latch_wait_in_ms",
        "page_io_latch_wait_count",
        "page_io_latch_wait_in_ms",
        "tree_page_latch_wait_count",
        "tree_page_latch_wait_in_ms",
        "tree_page_io_latch_wait_count",
        "tree_page_io_latch_wait_in_ms",
        "page_compression_attempt_count",
        "page_compression_success_count",
        "version_generated_inrow",
        "version_generated_offrow",
        "ghost_version_inrow",
        "ghost_version_offrow",
        "insert_over_ghost_version_inrow",
        "insert_over_ghost_version_offrow",
    ] {
        columns.push((counter, BIGINT));
    }
    Ok(empty(&columns))
}

/// `sys.dm_exec_query_plan(plan_handle)` and `sys.dm_exec_text_query_plan(plan_handle,
/// start, end)`: a row for the plan handle of a statement or procedure
/// `sys.dm_exec_query_stats` or `sys.dm_exec_procedure_stats` counts, its plan NULL (see
/// `query_stats::query_plan`); no row for any other handle.
pub(super) fn query_plan(ctx: &ViewContext<'_>, args: &[Value]) -> Result<RowSet, SqlError> {
    let mut plans = empty(&[
        ("dbid", SqlType::SmallInt),
        ("objectid", INT),
        ("number", SqlType::SmallInt),
        ("encrypted", SqlType::Bit),
        ("query_plan", SqlType::Xml),
    ]);
    plans.rows = super::query_stats::query_plan(ctx, args);
    Ok(plans)
}

/// `sys.dm_exec_plan_attributes(plan_handle)`: see `query_stats::plan_attributes`.
pub(super) fn plan_attributes(ctx: &ViewContext<'_>, args: &[Value]) -> Result<RowSet, SqlError> {
    let mut attributes = empty(&[
        ("attribute", SqlType::NVarChar(Len::N(128))),
        ("value", SqlType::Variant),
        ("is_cache_key", SqlType::Bit),
    ]);
    attributes.rows = super::query_stats::plan_attributes(ctx, args);
    Ok(attributes)
}

/// `sys.dm_os_waiting_tasks`: Walden's lock waits are in `sys.dm_exec_requests` and
/// `sys.dm_tran_locks`; this view has no rows.
pub(super) fn waiting_tasks() -> RowSet {
    empty(&[
        ("waiting_task_address", SqlType::VarBinary(Len::N(8))),
        ("session_id", SqlType::SmallInt),
        ("exec_context_id", INT),
        ("wait_duration_ms", BIGINT),
        ("wait_type", DESC),
        ("resource_address", SqlType::VarBinary(Len::N(8))),
        ("blocking_task_address", SqlType::VarBinary(Len::N(8))),
        ("blocking_session_id", SqlType::SmallInt),
        ("blocking_exec_context_id", INT),
        ("resource_description", SqlType::NVarChar(Len::N(3072))),
    ])
}

/// `sys.dm_db_missing_index_details`, `_groups`, `_group_stats`: Walden's planner does not
/// record missing indexes, so no rows.
pub(super) fn missing_index_details() -> RowSet {
    empty(&[
        ("index_handle", INT),
        ("database_id", SqlType::SmallInt),
        ("object_id", INT),
        ("equality_columns", SqlType::NVarChar(Len::N(4000))),
        ("inequality_columns", SqlType::NVarChar(Len::N(4000))),
        ("included_columns", SqlType::NVarChar(Len::N(4000))),
        ("statement", SqlType::NVarChar(Len::N(4000))),
    ])
}

/// `sys.dm_db_missing_index_groups`: no rows (see [`missing_index_details`]).
pub(super) fn missing_index_groups() -> RowSet {
    empty(&[("index_group_handle", INT), ("index_handle", INT)])
}

/// `sys.dm_db_missing_index_group_stats`: no rows (see [`missing_index_details`]).
pub(super) fn missing_index_group_stats() -> RowSet {
    empty(&[
        ("group_handle", INT),
        ("unique_compiles", BIGINT),
        ("user_seeks", BIGINT),
        ("user_scans", BIGINT),
        ("last_user_seek", SqlType::DateTime),
        ("last_user_scan", SqlType::DateTime),
        ("avg_total_user_cost", SqlType::Float),
        ("avg_user_impact", SqlType::Float),
        ("system_seeks", BIGINT),
        ("system_scans", BIGINT),
        ("last_system_seek", SqlType::DateTime),
        ("last_system_scan", SqlType::DateTime),
        ("avg_total_system_cost", SqlType::Float),
        ("avg_system_impact", SqlType::Float),
    ])
}

/// The machine's memory from `/proc/meminfo`, in KB.
#[derive(Default)]
struct SysMemory {
    total: u64,
    available: u64,
    swap_total: u64,
    swap_free: u64,
    cached: u64,
}

impl SysMemory {
    fn read() -> SysMemory {
        let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        SysMemory {
            total: field("MemTotal"),
            available: field("MemAvailable"),
            swap_total: field("SwapTotal"),
            swap_free: field("SwapFree"),
            cached: field("Cached"),
        }
    }

    /// SQL Server on Linux signals low memory under about 5% available.
    fn low(&self) -> bool {
        self.available.saturating_mul(20) < self.total
    }
}

/// `sys.dm_os_sys_memory`: the operating system's memory, one row (`/proc/meminfo`:
/// `MemTotal`, `MemAvailable`, swap as the page file, `Cached` as the system cache; the
/// kernel pool sizes, which Linux does not report, 0).
pub(super) fn sys_memory() -> RowSet {
    View::<SysMemory>::new()
        .col("total_physical_memory_kb", SqlType::BigInt, |m| big(m.total))
        .col("available_physical_memory_kb", SqlType::BigInt, |m| big(m.available))
        .col("total_page_file_kb", SqlType::BigInt, |m| big(m.total + m.swap_total))
        .col("available_page_file_kb", SqlType::BigInt, |m| big(m.available + m.swap_free))
        .col("system_cache_kb", SqlType::BigInt, |m| big(m.cached))
        .col("kernel_paged_pool_kb", SqlType::BigInt, |_| big(0))
        .col("kernel_nonpaged_pool_kb", SqlType::BigInt, |_| big(0))
        .col("system_high_memory_signal_state", SqlType::Bit, |m| bit(!m.low()))
        .col("system_low_memory_signal_state", SqlType::Bit, |m| bit(m.low()))
        .col("system_memory_state_desc", SqlType::NVarChar(Len::N(256)), |m| {
            nstr(if m.low() {
                "Available physical memory is low"
            } else {
                "Available physical memory is high"
            })
        })
        .rows(&[SysMemory::read()])
}

/// `sys.dm_os_nodes`: one `ONLINE` node holding every scheduler of `sys.dm_os_schedulers`
/// (Walden does not place its threads by NUMA node).
pub(super) fn nodes(ctx: &ViewContext<'_>) -> RowSet {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as i64);
    let busy = rows_of(ctx).iter().filter(|s| s.running()).count() as i64;
    let row = (cpus, busy);
    View::<(i64, i64)>::new()
        .col("node_id", SqlType::SmallInt, |_| super::small(0))
        .col("node_state_desc", DESC, |_| nstr("ONLINE"))
        .col("memory_node_id", SqlType::SmallInt, |_| super::small(0))
        .col("cpu_affinity_mask", SqlType::BigInt, |r| Value::BigInt(cpu_mask(r.0)))
        .col("online_scheduler_count", SqlType::SmallInt, |r| super::small(r.0))
        .col("idle_scheduler_count", SqlType::SmallInt, |r| super::small((r.0 - r.1).max(0)))
        .col("active_worker_count", SqlType::Int, |r| int(r.1))
        .col("avg_load_balance", SqlType::Int, |r| int(r.1 / r.0.max(1)))
        .col("online_scheduler_mask", SqlType::BigInt, |r| Value::BigInt(cpu_mask(r.0)))
        .col("processor_group", SqlType::SmallInt, |_| super::small(0))
        .col("cpu_count", SqlType::Int, |r| int(r.0))
        .rows(&[row])
}

/// The affinity mask of `cpus` CPUs: one bit each, all 64 set from 64 CPUs on.
fn cpu_mask(cpus: i64) -> i64 {
    if cpus >= 64 {
        -1
    } else {
        (1i64 << cpus) - 1
    }
}

/// `sys.dm_os_volume_stats(database_id, file_id)`: Walden does not describe the volumes
/// under its files, so no rows.
pub(super) fn volume_stats() -> RowSet {
    empty(&[
        ("database_id", INT),
        ("file_id", INT),
        ("volume_mount_point", SqlType::NVarChar(Len::N(512))),
        ("volume_id", SqlType::NVarChar(Len::N(512))),
        ("logical_volume_name", SqlType::NVarChar(Len::N(512))),
        ("file_system_type", SqlType::NVarChar(Len::N(512))),
        ("total_bytes", BIGINT),
        ("available_bytes", BIGINT),
        ("supports_compression", SqlType::TinyInt),
        ("supports_alternate_streams", SqlType::TinyInt),
        ("supports_sparse_files", SqlType::TinyInt),
        ("is_read_only", SqlType::TinyInt),
        ("is_compressed", SqlType::TinyInt),
    ])
}

/// `sys.fn_trace_gettable(file, files)`: Walden has no SQL Trace files, so no rows.
pub(super) fn trace_gettable() -> RowSet {
    empty(&[
        ("TextData", SqlType::NVarChar(Len::Max)),
        ("DatabaseID", INT),
        ("HostName", SqlType::NVarChar(Len::N(256))),
        ("ApplicationName", SqlType::NVarChar(Len::N(256))),
        ("LoginName", SqlType::NVarChar(Len::N(256))),
        ("SPID", INT),
        ("StartTime", SqlType::DateTime),
        ("EventClass", INT),
        ("DatabaseName", SqlType::NVarChar(Len::N(256))),
    ])
}

/// `sys.fn_xe_file_target_read_file(path, mdpath, initial_file_name, initial_offset)`:
/// Walden has no Extended Events files, so no rows.
pub(super) fn xe_file_target_read_file() -> RowSet {
    empty(&[
        ("module_guid", SqlType::UniqueIdentifier),
        ("package_guid", SqlType::UniqueIdentifier),
        ("object_name", SqlType::NVarChar(Len::N(256))),
        ("event_data", SqlType::NVarChar(Len::Max)),
        ("file_name", SqlType::NVarChar(Len::N(260))),
        ("file_offset", BIGINT),
        ("timestamp_utc", SqlType::DateTime2(7)),
    ])
}
