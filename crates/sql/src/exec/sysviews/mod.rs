//! System views and dynamic management views: `sys.databases`, `sys.objects`,
//! `sys.dm_os_performance_counters`, `sys.dm_io_virtual_file_stats(...)`, `sys.fn_dblog(...)`
//! and the others, evaluated on demand against the engine's state.
//!
//! Every view is materialized whole when it is referenced: its rows are a snapshot of counters
//! and catalogs taken at that moment, as SQL Server's DMVs are. Column names, order, types
//! and values follow SQL Server's where Walden has the information; `docs/system-views.md`
//! lists every column, where its value comes from and what differs from SQL Server.
//!
//! * `databases`: `sys.databases`, `sys.master_files`, `sys.database_files`,
//!   `sys.filegroups`.
//! * `catalog`: `sys.schemas`, `sys.objects`, `sys.tables`, `sys.procedures`,
//!   `sys.parameters`, `sys.sequences`, `sys.columns`, `sys.types`, `sys.table_types`.
//! * `indexes`: `sys.indexes`, `sys.index_columns`, `sys.partitions`,
//!   `sys.allocation_units`, `sys.dm_db_partition_stats`, and the empty partitioning views.
//! * `dmv`: `sys.dm_os_performance_counters`, `sys.dm_io_virtual_file_stats`,
//!   `sys.dm_os_wait_stats`, `sys.dm_db_log_stats`.
//! * `dblog`: `sys.fn_dblog`.
//! * `stats`: `sys.stats`, `sys.stats_columns`, `sys.dm_db_stats_properties`.
//! * `memory`: `sys.dm_os_buffer_descriptors`, `sys.dm_os_memory_clerks`,
//!   `sys.dm_os_process_memory`.
//! * `server`: `sys.dm_os_sys_info`, `sys.server_principals`, `sys.database_principals`,
//!   `sys.sql_logins`, `sys.configurations`, `sys.sysprocesses`.
//! * `constraints`: `sys.key_constraints`, `sys.default_constraints`, `sys.check_constraints`,
//!   `sys.foreign_keys`, `sys.foreign_key_columns`, `sys.identity_columns`,
//!   `sys.computed_columns`, `sys.sql_modules`, `sys.views`, `sys.triggers`,
//!   `sys.trigger_events`, `sys.trigger_event_types`, and the empty `sys.server_triggers` and
//!   `sys.server_trigger_events`.
//! * `os`: `sys.dm_os_schedulers`, and the plan-cache, missing-index and index-operation
//!   DMVs Walden has no information for (no rows).
//! * `xevents`: the `system_health` Extended Events session, which records nothing.
//! * `absent`: the views of features Walden does not have (auditing, Extended Events,
//!   columnstore, Availability Groups, ...): SQL Server's columns, no rows.
//! * `compat`: `sys.sysobjects`, `sys.syscolumns`, `sys.sysdatabases`, `sys.systypes`, `sys.syslanguages`, `sys.fn_helpcollations()`, `sys.all_objects`, `sys.system_objects`, `sys.system_columns`.
//!
//! The counters SQL Server keeps above the storage engine are kept by the SQL layer: batches
//! in a [`ServerCounters`] shared by every session, transactions on each database
//! (`Database::count_transaction`), which every transaction reaches without a shared lock.

mod absent;
pub(crate) mod catalog;
mod compat;
mod constraints;
mod databases;
mod dblog;
mod dmv;
mod indexes;
mod information_schema;
mod memory;
pub(crate) mod msdb;
mod os;
pub(crate) mod query_stats;
mod server;
mod sessions;
mod stats;
pub(crate) mod system_objects;
#[cfg(test)]
mod tests;
mod transactions;
mod xevents;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use walden_engine::catalog::ColumnDef;
use walden_engine::types::{Date, DateTime, DateTime2, Len, SqlType, Time, Value};
use walden_engine::{Database, Instance};

use crate::exec::{ColumnInfo, RowSet, SqlError};

pub(crate) use catalog::{
    declared_parameters, max_length, precision, scale, schema_list, spt_values, type_id, type_name,
};
pub(crate) use constraints::default_constraint_name;
pub use information_schema::information_schema_view;
pub(crate) use server::CONFIGURATIONS;
pub(crate) use sessions::{
    input_buffer_rows, now_micros, EndState, PublishedOptions, SessionRegistry, UserTransaction,
};
pub use sessions::{ClientInfo, Command, ConnectionInfo, SessionActivity};
pub(crate) use transactions::open_transactions;

/// Server-wide counters the SQL layer bumps (thread-safe; shared by all sessions via Arc).
#[derive(Debug, Default)]
pub struct ServerCounters {
    /// When the server started: `sample_ms` of `sys.dm_io_virtual_file_stats` counts from it.
    started: StartTime,
    /// `Batch Requests/sec`.
    batches: AtomicU64,
    /// The connected sessions, for `sys.dm_exec_sessions` and `sys.dm_exec_requests`.
    pub(crate) sessions: SessionRegistry,
    /// `sys.dm_exec_query_stats` and `sys.dm_exec_procedure_stats`.
    pub(crate) query_stats: query_stats::QueryStats,
    /// `sp_configure 'show advanced options'`: the one option a client may set, since it
    /// changes only what `sp_configure` lists.
    show_advanced: AtomicBool,
}

/// The moment the counters were created; its own type so that [`ServerCounters`] can derive
/// `Default`.
#[derive(Debug)]
struct StartTime(Instant);

impl Default for StartTime {
    fn default() -> Self {
        StartTime(Instant::now())
    }
}

impl ServerCounters {
    /// Counts a batch (`Batch Requests/sec`).
    pub fn record_batch(&self) {
        self.batches.fetch_add(1, Ordering::Relaxed);
    }

    /// Batches counted so far.
    pub fn batch_requests(&self) -> u64 {
        self.batches.load(Ordering::Relaxed)
    }

    /// Whether `sp_configure` lists and finds the advanced options.
    pub(crate) fn show_advanced(&self) -> bool {
        self.show_advanced.load(Ordering::Relaxed)
    }

    /// Sets 'show advanced options'; returns the value it had.
    pub(crate) fn set_show_advanced(&self, show: bool) -> bool {
        self.show_advanced.swap(show, Ordering::Relaxed)
    }

    /// Milliseconds since the counters were created.
    fn uptime_ms(&self) -> u64 {
        u64::try_from(self.started.0.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// What a view is evaluated against.
#[derive(Debug)]
pub struct ViewContext<'a> {
    /// The instance.
    pub instance: &'a Arc<Instance>,
    /// The database the view's name was qualified with (`PerformanceV3.sys.objects`), else
    /// the session's current database: catalog views (sys.objects, sys.tables, sys.columns,
    /// sys.procedures, sys.sequences, sys.schemas) list this database's objects.
    pub database: &'a Arc<Database>,
    /// The server-wide counters.
    pub counters: &'a ServerCounters,
    /// The session's id (@@SPID).
    pub session_id: u16,
    /// The columns of the database's views, by view id, for the views that list columns
    /// (`sys.columns`, `syscolumns`, `INFORMATION_SCHEMA.COLUMNS`): a view's columns are
    /// what its query returns, which only the SQL layer can run. Empty for other views.
    pub view_columns: &'a [(u32, Vec<ColumnDef>)],
    /// The id of the transaction the reading statement runs in, for
    /// `sys.dm_tran_current_transaction` (`None` for other views).
    pub current_transaction: Option<u64>,
}

/// `sys.time_zone_info`: the time zones `AT TIME ZONE` knows, by their Windows names, with
/// their offset now and whether daylight saving time is in force.
fn time_zone_info() -> RowSet {
    View::<(String, String, bool)>::new()
        .col("name", SYSNAME, |z| nstr(z.0.as_str()))
        .opt("current_utc_offset", SqlType::NVarChar(Len::N(12)), |z| nstr(z.1.as_str()))
        .col("is_currently_dst", SqlType::Bit, |z| bit(z.2))
        .rows(&crate::exec::scalar::zones::time_zone_info())
}

/// A view's columns without its rows.
fn no_rows(set: RowSet) -> RowSet {
    RowSet { columns: set.columns, rows: Vec::new() }
}

/// The schemas of database `db` as `sys.schemas` lists them: (name, schema_id), for
/// `SCHEMA_ID` and `SCHEMA_NAME`.
pub(crate) fn schema_ids(db: &Database) -> Vec<(String, i64)> {
    catalog::schema_list(&db.catalog().objects()).into_iter().map(|(n, id, _)| (n, id)).collect()
}

/// `COLUMNPROPERTY(..., 'Precision')` and `(..., 'Scale')` of a column of type `ty`: the
/// length of a character or binary type (-1 for MAX) or the digits of a numeric or temporal
/// one, and the scale as `sys.columns` gives it.
pub(crate) fn column_precision_scale(ty: SqlType) -> (Value, Value) {
    let precision = match information_schema::character_length(ty) {
        Value::Null => Value::Int(i32::from(catalog::precision(ty))),
        length => length,
    };
    (precision, Value::Int(i32::from(catalog::scale(ty))))
}

/// Whether system view `name` (`information_schema`: of that schema) lists columns, and so
/// needs [`ViewContext::view_columns`].
pub fn lists_columns(name: &str, information_schema: bool) -> bool {
    if information_schema {
        name.eq_ignore_ascii_case("COLUMNS")
    } else {
        name.eq_ignore_ascii_case("columns") || name.eq_ignore_ascii_case("syscolumns")
    }
}

/// Computes a view's rows from its (already checked) arguments.
type Evaluator = fn(&ViewContext<'_>, &[Value]) -> Result<RowSet, SqlError>;

/// The system views and table-valued functions: each name (lower case, without `sys.`),
/// its number of arguments (`None`: a view, which takes none) and how its rows are computed.
const SYSTEM_VIEWS: &[(&str, Option<usize>, Evaluator)] = &[
    ("databases", None, |c, _| Ok(databases::databases(c))),
    ("master_files", None, |c, _| Ok(databases::master_files(c))),
    ("database_files", None, |c, _| Ok(databases::database_files(c))),
    ("schemas", None, |c, _| Ok(catalog::schemas(c))),
    ("objects", None, |c, _| Ok(catalog::objects(c))),
    ("tables", None, |c, _| Ok(catalog::tables(c))),
    ("procedures", None, |c, _| Ok(catalog::procedures(c))),
    ("parameters", None, |c, _| Ok(catalog::parameters(c))),
    ("all_parameters", None, |c, _| Ok(catalog::parameters(c))),
    ("sequences", None, |c, _| Ok(catalog::sequences(c))),
    ("columns", None, |c, _| Ok(catalog::columns(c))),
    ("types", None, |c, _| Ok(catalog::types(c))),
    ("indexes", None, |c, _| Ok(indexes::indexes(c))),
    ("index_columns", None, |c, _| Ok(indexes::index_columns(c))),
    ("partitions", None, |c, _| Ok(indexes::partitions(c))),
    ("allocation_units", None, |c, _| Ok(indexes::allocation_units(c))),
    ("key_constraints", None, |c, _| Ok(constraints::key_constraints(c))),
    ("default_constraints", None, |c, _| Ok(constraints::default_constraints(c))),
    ("check_constraints", None, |c, _| Ok(constraints::check_constraints(c))),
    ("foreign_keys", None, |c, _| Ok(constraints::foreign_keys(c))),
    ("foreign_key_columns", None, |c, _| Ok(constraints::foreign_key_columns(c))),
    ("identity_columns", None, |c, _| Ok(constraints::identity_columns(c))),
    ("computed_columns", None, |c, _| Ok(constraints::computed_columns(c))),
    ("all_columns", None, |c, _| {
        let mut set = catalog::columns(c);
        set.rows.extend(system_objects::column_rows(c).rows);
        Ok(set)
    }),
    ("all_views", None, |c, _| Ok(constraints::views(c))),
    ("all_sql_modules", None, |c, _| Ok(constraints::sql_modules(c))),
    // Walden lists no system objects: these have their user counterparts' columns.
    ("system_views", None, |c, _| Ok(no_rows(constraints::views(c)))),
    ("system_sql_modules", None, |c, _| Ok(no_rows(constraints::sql_modules(c)))),
    ("synonyms", None, |c, _| Ok(catalog::synonyms(c))),
    ("stats", None, |c, _| Ok(stats::stats(c))),
    ("stats_columns", None, |c, _| Ok(stats::stats_columns(c))),
    ("dm_db_stats_properties", Some(2), stats::stats_properties),
    ("filegroups", None, |c, _| Ok(databases::filegroups(c))),
    ("data_spaces", None, |c, _| Ok(databases::filegroups(c))),
    ("table_types", None, |c, _| Ok(catalog::table_types(c))),
    ("partition_schemes", None, |_, _| Ok(indexes::partition_schemes())),
    ("partition_functions", None, |_, _| Ok(indexes::partition_functions())),
    ("index_resumable_operations", None, |_, _| Ok(indexes::index_resumable_operations())),
    ("dm_db_partition_stats", None, |c, _| Ok(indexes::partition_stats(c))),
    ("dm_db_index_usage_stats", None, |c, _| Ok(server::index_usage_stats(c))),
    ("database_role_members", None, |c, _| Ok(server::database_role_members(c))),
    ("database_permissions", None, |c, _| Ok(server::database_permissions(c))),
    ("server_permissions", None, |c, _| Ok(server::server_permissions(c))),
    ("database_mirroring", None, |c, _| Ok(server::database_mirroring(c))),
    ("dm_os_host_info", None, |c, _| Ok(server::host_info(c))),
    ("dm_broker_activated_tasks", None, |_, _| Ok(server::broker_activated_tasks())),
    ("dm_os_server_diagnostics_log_configurations", None, |c, _| {
        Ok(server::diagnostics_log_configurations(c))
    }),
    ("time_zone_info", None, |_, _| Ok(time_zone_info())),
    ("extended_properties", None, |c, _| {
        Ok(crate::exec::procedure::properties::extended_properties(c.database))
    }),
    ("sql_modules", None, |c, _| Ok(constraints::sql_modules(c))),
    ("views", None, |c, _| Ok(constraints::views(c))),
    ("triggers", None, |c, _| Ok(constraints::triggers(c))),
    ("trigger_events", None, |c, _| Ok(constraints::trigger_events(c))),
    ("trigger_event_types", None, |_, _| Ok(constraints::trigger_event_types())),
    ("server_triggers", None, |_, _| Ok(constraints::server_triggers())),
    ("server_trigger_events", None, |c, _| Ok(no_rows(constraints::trigger_events(c)))),
    ("all_objects", None, |c, _| Ok(compat::all_objects(c))),
    ("system_objects", None, |c, _| Ok(compat::system_objects(c))),
    ("sysobjects", None, |c, _| Ok(compat::sysobjects(c))),
    ("syscolumns", None, |c, _| Ok(compat::syscolumns(c))),
    ("sysdatabases", None, |c, _| Ok(compat::sysdatabases(c))),
    ("systypes", None, |c, _| Ok(compat::systypes(c))),
    ("syslanguages", None, |_, _| Ok(compat::syslanguages())),
    ("fn_helpcollations", None, |_, _| Ok(compat::help_collations())),
    ("system_columns", None, |c, _| Ok(system_objects::column_rows(c))),
    ("dm_os_performance_counters", None, |c, _| Ok(dmv::performance_counters(c))),
    ("dm_os_wait_stats", None, |c, _| Ok(dmv::wait_stats(c))),
    ("dm_os_buffer_descriptors", None, |c, _| Ok(memory::buffer_descriptors(c))),
    ("dm_os_memory_clerks", None, |c, _| Ok(memory::memory_clerks(c))),
    ("dm_os_process_memory", None, |c, _| Ok(memory::process_memory(c))),
    ("dm_exec_query_memory_grants", None, |c, _| Ok(memory::query_memory_grants(c))),
    ("dm_tran_locks", None, |c, _| Ok(dmv::tran_locks(c))),
    ("dm_tran_active_transactions", None, |c, _| Ok(transactions::active_transactions(c))),
    ("dm_tran_session_transactions", None, |c, _| Ok(transactions::session_transactions(c))),
    ("dm_tran_current_transaction", None, |c, _| Ok(transactions::current_transaction(c))),
    ("dm_tran_database_transactions", None, |c, _| Ok(transactions::database_transactions(c))),
    ("dm_exec_sessions", None, |c, _| Ok(sessions::exec_sessions(c))),
    ("dm_exec_requests", None, |c, _| Ok(sessions::exec_requests(c))),
    ("dm_db_task_space_usage", None, |c, _| Ok(sessions::task_space_usage(c))),
    ("dm_db_session_space_usage", None, |c, _| Ok(sessions::session_space_usage(c))),
    ("dm_exec_connections", None, |c, _| Ok(sessions::exec_connections(c))),
    ("dm_exec_sql_text", Some(1), sessions::exec_sql_text),
    ("dm_exec_input_buffer", Some(2), sessions::exec_input_buffer),
    ("dm_os_sys_info", None, |c, _| Ok(server::sys_info(c))),
    ("server_event_sessions", None, |_, _| Ok(xevents::server_event_sessions())),
    ("server_event_session_targets", None, |_, _| Ok(xevents::server_event_session_targets())),
    ("dm_xe_sessions", None, |c, _| Ok(xevents::dm_xe_sessions(c))),
    ("dm_xe_session_targets", None, |_, _| Ok(xevents::dm_xe_session_targets())),
    ("dm_os_schedulers", None, |c, _| Ok(os::schedulers(c))),
    ("dm_os_nodes", None, |c, _| Ok(os::nodes(c))),
    ("dm_os_volume_stats", Some(2), |_, _| Ok(os::volume_stats())),
    ("fn_trace_gettable", Some(2), |_, _| Ok(os::trace_gettable())),
    ("fn_xe_file_target_read_file", Some(4), |_, _| Ok(os::xe_file_target_read_file())),
    ("dm_os_sys_memory", None, |_, _| Ok(os::sys_memory())),
    ("dm_os_waiting_tasks", None, |_, _| Ok(os::waiting_tasks())),
    ("dm_db_index_operational_stats", Some(4), os::index_operational_stats),
    ("dm_exec_query_stats", None, |c, _| Ok(query_stats::query_stats(c))),
    ("dm_exec_procedure_stats", None, |c, _| Ok(query_stats::procedure_stats(c))),
    ("dm_exec_function_stats", None, |_, _| Ok(query_stats::uncounted_modules())),
    ("dm_exec_trigger_stats", None, |_, _| Ok(query_stats::uncounted_modules())),
    ("dm_exec_query_plan", Some(1), os::query_plan),
    ("dm_exec_text_query_plan", Some(3), os::query_plan),
    ("dm_exec_plan_attributes", Some(1), os::plan_attributes),
    ("dm_db_missing_index_details", None, |_, _| Ok(os::missing_index_details())),
    ("dm_db_missing_index_groups", None, |_, _| Ok(os::missing_index_groups())),
    ("dm_db_missing_index_group_stats", None, |_, _| Ok(os::missing_index_group_stats())),
    ("server_principals", None, |c, _| Ok(server::server_principals(c))),
    ("database_principals", None, |c, _| Ok(server::database_principals(c))),
    ("sql_logins", None, |c, _| Ok(server::sql_logins(c))),
    ("syslogins", None, |c, _| Ok(server::syslogins(c))),
    ("sysusers", None, |c, _| Ok(server::sysusers(c))),
    ("configurations", None, |c, _| Ok(server::configurations(c))),
    ("messages", None, |c, _| Ok(crate::exec::procedure::user_messages::messages_view(c.instance))),
    ("sysprocesses", None, |c, _| Ok(server::sysprocesses(c))),
    ("dm_io_virtual_file_stats", Some(2), dmv::virtual_file_stats),
    ("dm_db_log_stats", Some(1), dmv::log_stats),
    ("dm_db_log_info", Some(1), dmv::log_info),
    ("dm_db_log_space_usage", None, |c, _| Ok(dmv::log_space_usage(c))),
    ("fn_dblog", Some(2), dblog::fn_dblog),
];

/// Evaluates `sys.<name>` (name without the `sys.` prefix, any letter case) with the
/// arguments of a table-valued function (empty for views). `None`: there is no such system
/// view or function (the caller raises error 208). Arguments to a view are error 215, a
/// function without arguments 216, too few 313 and too many 8144, as in SQL Server.
pub fn system_view(
    ctx: &ViewContext<'_>,
    name: &str,
    args: &[Value],
) -> Option<Result<RowSet, SqlError>> {
    let lower = name.to_ascii_lowercase();
    let absent = absent::absent_view(&lower);
    let found = SYSTEM_VIEWS.iter().find(|(n, _, _)| *n == lower);
    let (params, eval): (Option<usize>, Evaluator) = match found {
        Some((_, params, eval)) => (*params, *eval),
        // A feature Walden lacks: `absent` holds the view's rows (none).
        None if absent.is_some() => {
            (None, |_, _| Ok(RowSet { columns: Vec::new(), rows: Vec::new() }))
        }
        None => return None,
    };
    let full_name = format!("sys.{name}");
    let checked = match params {
        None if !args.is_empty() => Err(SqlError::new(
            215,
            format!(
                "Parameters supplied for object '{full_name}' which is not a function. If the \
                 parameters are intended as a table hint, a WITH keyword is required."
            ),
        )),
        Some(_) if args.is_empty() => Err(SqlError::new(
            216,
            format!("Parameters were not supplied for the function '{full_name}'."),
        )),
        Some(n) if args.len() < n => Err(SqlError::new(
            313,
            format!(
                "An insufficient number of arguments were supplied for the procedure or \
                 function {full_name}."
            ),
        )),
        Some(n) if args.len() > n => Err(SqlError::new(
            8144,
            format!("Procedure or function {full_name} has too many arguments specified."),
        )),
        _ => Ok(()),
    };
    Some(checked.and_then(|()| match absent {
        Some(set) => Ok(set),
        None => eval(ctx, args),
    }))
}

/// `sysname`.
const SYSNAME: SqlType = SqlType::NVarChar(Len::N(128));
/// The `nvarchar(60)` of SQL Server's `..._desc` columns.
const DESC: SqlType = SqlType::NVarChar(Len::N(60));
/// The collation every Walden database has (see `walden_engine::types::compare`).
pub(crate) const COLLATION: &str = "SQL_Latin1_General_CP1_CI_AS";
/// Bytes per data page, the unit of SQL Server's file sizes.
pub(crate) const PAGE_BYTES: u64 = 8192;

/// One column of a view: SQL Server's name, type and nullability, and how its value is read
/// from the view's row source.
struct Col<R> {
    name: &'static str,
    ty: SqlType,
    nullable: bool,
    get: fn(&R) -> Value,
}

/// A view's columns over row sources of type `R`. Declaring each column next to its value
/// keeps names and values from drifting apart in views of many columns.
struct View<R> {
    cols: Vec<Col<R>>,
}

impl<R> View<R> {
    fn new() -> View<R> {
        View { cols: Vec::new() }
    }

    /// A NOT NULL column.
    fn col(mut self, name: &'static str, ty: SqlType, get: fn(&R) -> Value) -> View<R> {
        self.cols.push(Col { name, ty, nullable: false, get });
        self
    }

    /// A nullable column.
    fn opt(mut self, name: &'static str, ty: SqlType, get: fn(&R) -> Value) -> View<R> {
        self.cols.push(Col { name, ty, nullable: true, get });
        self
    }

    /// The result: one row per source.
    fn rows<'r>(&self, sources: impl IntoIterator<Item = &'r R>) -> RowSet
    where
        R: 'r,
    {
        let columns = self
            .cols
            .iter()
            .map(|c| ColumnInfo {
                name: c.name.to_string(),
                ty: c.ty,
                nullable: c.nullable,
                collation: None,
                declared: None,
            })
            .collect();
        let rows = sources.into_iter().map(|r| self.cols.iter().map(|c| (c.get)(r)).collect());
        RowSet { columns, rows: rows.collect() }
    }
}

fn nstr(s: impl Into<String>) -> Value {
    Value::NStr(s.into())
}

fn bit(b: bool) -> Value {
    Value::Bit(b)
}

fn tiny(v: u8) -> Value {
    Value::TinyInt(v)
}

fn int(v: i64) -> Value {
    Value::Int(i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX }))
}

fn small(v: i64) -> Value {
    Value::SmallInt(i16::try_from(v).unwrap_or(if v < 0 { i16::MIN } else { i16::MAX }))
}

fn big(v: u64) -> Value {
    Value::BigInt(i64::try_from(v).unwrap_or(i64::MAX))
}

fn opt_nstr(s: Option<String>) -> Value {
    s.map_or(Value::Null, Value::NStr)
}

/// Days from 0001-01-01 to 1970-01-01.
const UNIX_EPOCH_DAYS: u64 = 719_162;
const MICROS_PER_DAY: u64 = 86_400_000_000;

/// A moment in microseconds since the Unix epoch as a DATETIME2 in local time, as SQL Server
/// shows its catalog's dates (and as GETDATE reads the clock).
fn datetime2_from_unix_micros(us: u64) -> Option<DateTime2> {
    utc_micros_to_datetime2(local_micros(us))
}

/// `us` (since the Unix epoch) moved to local time.
fn local_micros(us: u64) -> u64 {
    let local = crate::exec::scalar::to_local(std::time::Duration::from_micros(us));
    u64::try_from(local.as_micros()).unwrap_or(u64::MAX)
}

/// Microseconds since the Unix epoch as a DATETIME2, without a time zone.
fn utc_micros_to_datetime2(us: u64) -> Option<DateTime2> {
    let days = u32::try_from(UNIX_EPOCH_DAYS + us / MICROS_PER_DAY).ok()?;
    let time = Time::from_ticks(us % MICROS_PER_DAY * 10)?;
    Some(DateTime2::new(Date::from_days(days)?, time))
}

/// A moment in microseconds since the Unix epoch as a DATETIME value (local time, rounded to
/// 1/300 s as SQL Server rounds), NULL if out of range.
pub(crate) fn datetime(us: u64) -> Value {
    datetime2_from_unix_micros(us)
        .and_then(DateTime::from_datetime2)
        .map_or(Value::Null, Value::DateTime)
}

/// An LSN as SQL Server shows one (`00000020:00000010:0001`). Walden's LSNs are byte offsets
/// in the log stream: the first two parts are its high and low 32 bits in hex, and the third,
/// SQL Server's slot number, is always 0001 (0000 for LSN 0, "none").
pub fn format_lsn(lsn: u64) -> String {
    let (high, low, slot) = lsn_parts(lsn);
    format!("{high:08x}:{low:08x}:{slot:04x}")
}

/// An LSN's three parts as SQL Server writes them: the high and low 32 bits of the stream
/// position, and the slot, 1 (0 for LSN 0, "none").
pub(crate) fn lsn_parts(lsn: u64) -> (u32, u32, u16) {
    ((lsn >> 32) as u32, (lsn & 0xffff_ffff) as u32, u16::from(lsn != 0))
}

/// A log segment as SQL Server describes a virtual log file, for `sys.dm_db_log_info` and
/// `DBCC LOGINFO`.
pub(crate) struct Vlf {
    /// Segment sequence + 1, so that 0 is a slot never used (or freed), as in SQL Server.
    pub(crate) number: u64,
    /// 2 in use, 0 reusable or never used.
    pub(crate) status: i32,
    /// 64 and 128 alternating with each reuse; 0 before the first use.
    pub(crate) parity: u8,
}

impl Vlf {
    pub(crate) fn of(segment: &walden_log::SegmentInfo) -> Vlf {
        Vlf {
            number: segment.sequence.map_or(0, |s| s + 1),
            status: if segment.active { 2 } else { 0 },
            parity: match segment.sequence {
                None => 0,
                Some(s) if s % 2 == 0 => 64,
                Some(_) => 128,
            },
        }
    }
}

/// An INT argument (NULL is `None`), converted as SQL Server converts one: error 245 for a
/// string that is not a number, 206 for a type that does not convert to INT.
fn int_arg(value: &Value) -> Result<Option<i64>, SqlError> {
    Ok(Some(match value {
        Value::Null => return Ok(None),
        Value::TinyInt(v) => i64::from(*v),
        Value::SmallInt(v) => i64::from(*v),
        Value::Int(v) => i64::from(*v),
        Value::BigInt(v) => *v,
        Value::Bit(b) => i64::from(*b),
        Value::Decimal(d) => {
            // Truncated toward zero, as CAST to INT does.
            let whole = d.mantissa() / 10i128.pow(u32::from(d.scale()));
            i64::try_from(whole).map_err(|_| SqlError::overflow("int"))?
        }
        Value::Str(s) | Value::NStr(s) => {
            s.trim().parse().map_err(|_| SqlError::conversion(value.kind_name(), s, "int"))?
        }
        other => {
            return Err(SqlError::new(
                206,
                format!("Operand type clash: {} is incompatible with int", other.kind_name()),
            ))
        }
    }))
}

/// What a database's log file holds, for the size and usage columns.
#[derive(Debug, Clone, Copy, Default)]
struct LogSpace {
    /// The file's size in bytes.
    file_bytes: u64,
    /// Bytes per segment (SQL Server's VLF), header sector included.
    segment_size: u64,
    /// Segments in the file.
    segments: u64,
    /// The oldest position still needed: the truncation point, or the oldest position the
    /// file holds if that is later.
    active_start: u64,
    /// The end of the appended log.
    end: u64,
}

/// `DBCC SQLPERF(LOGSPACE)`'s figures for `db`: the log file's size in megabytes and the
/// percentage of it in use (both 0 for tempdb, which has no log).
pub(crate) fn log_space_mb(db: &Database) -> (f64, f64) {
    let space = LogSpace::of(db);
    (space.file_bytes as f64 / (1024.0 * 1024.0), space.used_percent())
}

/// The size of `db`'s log file in bytes (0 for tempdb, which has no log).
pub(crate) fn log_file_bytes(db: &Database) -> u64 {
    LogSpace::of(db).file_bytes
}

impl LogSpace {
    /// The log space of `db`; all zero for tempdb, which has no log.
    fn of(db: &Database) -> LogSpace {
        let Some(log) = db.log() else { return LogSpace::default() };
        let stats = log.stats();
        let segment_size = log.segment_size();
        LogSpace {
            file_bytes: walden_log::format::FILE_HEADER_SIZE
                + stats.segments_total.saturating_mul(segment_size),
            segment_size,
            segments: stats.segments_total,
            active_start: log.truncation_lsn().max(log.start_lsn()).min(stats.end_lsn),
            end: stats.end_lsn,
        }
    }

    /// Bytes of active log.
    fn used_bytes(&self) -> u64 {
        self.end - self.active_start
    }

    /// The active log as a percentage of the file (0 without a file).
    fn used_percent(&self) -> f64 {
        if self.file_bytes == 0 {
            0.0
        } else {
            self.used_bytes() as f64 * 100.0 / self.file_bytes as f64
        }
    }

    /// The segment sequence holding stream position `lsn` (segments hold their size less one
    /// header sector of stream bytes).
    fn sequence_of(&self, lsn: u64) -> u64 {
        let data = self.segment_size.saturating_sub(walden_log::format::SECTOR);
        lsn.checked_div(data).unwrap_or(0)
    }

    /// Segments holding stream positions `from..end`.
    fn segments_spanned(&self, from: u64) -> u64 {
        if self.segment_size == 0 {
            0
        } else {
            self.sequence_of(self.end) - self.sequence_of(from.min(self.end)) + 1
        }
    }
}
