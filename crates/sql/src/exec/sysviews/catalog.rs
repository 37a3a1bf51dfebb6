//! Catalog views: databases and their files (server-wide), and one database's schemas,
//! objects, tables, procedures, sequences and columns.

use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, IndexDef, Object, SequenceDef, TableDef};
use walden_engine::database::DatabaseState;
use walden_engine::files::{FileKind, GrowthStep};
use walden_engine::instance::{MASTER_ID, MSDB_ID, TEMPDB_ID};
use walden_engine::types::{Decimal, Len, SqlType, Value};
use walden_engine::{Database, RecoveryModel};

use super::constraints::{constraint_id, ConstraintKind};
use super::{
    big, bit, datetime, int, nstr, small, tiny, LogSpace, View, ViewContext, COLLATION, DESC,
    PAGE_BYTES, SYSNAME,
};
use crate::ast::{FunctionBody, StatementKind};
use crate::exec::RowSet;

/// A database, as `sys.databases` shows it: an open one, or one registered in master that
/// could not be opened (RECOVERY_PENDING or SUSPECT, with no files open to ask).
struct DbRow {
    name: String,
    id: u32,
    /// The data file's creation time; 0 if it could not be opened.
    created: u64,
    recovery_model: RecoveryModel,
    delayed_durability: walden_log::policy::DatabaseDurability,
    /// SQL Server's `state` and `state_desc`.
    state: (u8, &'static str),
    log_reuse_wait: &'static str,
    /// `SET READ_ONLY`.
    read_only: bool,
    /// `AUTO_CREATE_STATISTICS` and `AUTO_UPDATE_STATISTICS`.
    auto_statistics: (bool, bool),
}

/// SQL Server's `log_reuse_wait` code of a `log_reuse_wait_desc`.
fn log_reuse_wait_code(desc: &str) -> u8 {
    match desc {
        "CHECKPOINT" => 1,
        "LOG_BACKUP" => 2,
        "ACTIVE_BACKUP_OR_RESTORE" => 3,
        "ACTIVE_TRANSACTION" => 4,
        "REPLICATION" => 6,
        "OLDEST_PAGE" => 13,
        _ => 0,
    }
}

/// When the database's data file was created (tempdb's is recreated at every start, so its
/// date is the server's start, as in SQL Server).
pub(super) fn created_micros(db: &Database) -> u64 {
    db.space().pool().file().header().created_unix_micros
}

fn recovery_code(model: RecoveryModel) -> u8 {
    match model {
        RecoveryModel::Full => 1,
        RecoveryModel::Simple => 3,
    }
}

/// `sys.databases`: every database of the instance, by id.
pub(super) fn databases(ctx: &ViewContext<'_>) -> RowSet {
    let mut rows: Vec<DbRow> = ctx
        .instance
        .databases()
        .into_iter()
        .map(|db| DbRow {
            name: db.name().to_string(),
            id: db.id(),
            created: created_micros(&db),
            recovery_model: db.recovery_model(),
            delayed_durability: db.delayed_durability(),
            state: if db.state() == DatabaseState::Online { (0, "ONLINE") } else { (6, "OFFLINE") },
            log_reuse_wait: db.log_reuse_wait(),
            read_only: db.is_read_only(),
            auto_statistics: (db.auto_create_statistics(), db.auto_update_statistics()),
        })
        .collect();
    rows.extend(ctx.instance.unavailable_databases().into_iter().map(|u| DbRow {
        state: (u.state(), u.state_desc()),
        name: u.entry.name,
        id: u.entry.id,
        created: 0,
        recovery_model: u.entry.recovery_model,
        delayed_durability: u.entry.delayed_durability,
        log_reuse_wait: "NOTHING",
        read_only: u.entry.read_only,
        auto_statistics: (true, true),
    }));
    rows.sort_by_key(|r| r.id);
    let off = |_: &DbRow| bit(false);
    View::<DbRow>::new()
        .col("name", SYSNAME, |r| nstr(&r.name))
        .col("database_id", SqlType::Int, |r| int(i64::from(r.id)))
        .opt("source_database_id", SqlType::Int, |_| Value::Null)
        .opt("owner_sid", SqlType::VarBinary(Len::N(85)), |_| Value::Binary(vec![1]))
        .col("create_date", SqlType::DateTime, |r| datetime(r.created))
        .opt("compatibility_level", SqlType::TinyInt, |_| tiny(160))
        .opt("collation_name", SYSNAME, |_| nstr(COLLATION))
        .opt("user_access", SqlType::TinyInt, |_| tiny(0))
        .opt("user_access_desc", DESC, |_| nstr("MULTI_USER"))
        .opt("is_read_only", SqlType::Bit, |r| bit(r.read_only))
        .col("is_auto_close_on", SqlType::Bit, off)
        .opt("is_auto_shrink_on", SqlType::Bit, off)
        .opt("state", SqlType::TinyInt, |r| tiny(r.state.0))
        .opt("state_desc", DESC, |r| nstr(r.state.1))
        .opt("is_in_standby", SqlType::Bit, off)
        .opt("is_cleanly_shutdown", SqlType::Bit, off)
        .opt("is_supplemental_logging_enabled", SqlType::Bit, off)
        .opt("snapshot_isolation_state", SqlType::TinyInt, |_| tiny(0))
        .opt("snapshot_isolation_state_desc", DESC, |_| nstr("OFF"))
        .opt("is_read_committed_snapshot_on", SqlType::Bit, off)
        .opt("recovery_model", SqlType::TinyInt, |r| tiny(recovery_code(r.recovery_model)))
        .opt("recovery_model_desc", DESC, |r| nstr(r.recovery_model.name()))
        .opt("page_verify_option", SqlType::TinyInt, |_| tiny(2))
        .opt("page_verify_option_desc", DESC, |_| nstr("CHECKSUM"))
        .opt("is_auto_create_stats_on", SqlType::Bit, |r| bit(r.auto_statistics.0))
        .opt("is_auto_create_stats_incremental_on", SqlType::Bit, off)
        .opt("is_auto_update_stats_on", SqlType::Bit, |r| bit(r.auto_statistics.1))
        .opt("is_auto_update_stats_async_on", SqlType::Bit, off)
        .opt("is_ansi_null_default_on", SqlType::Bit, off)
        .opt("is_ansi_nulls_on", SqlType::Bit, off)
        .opt("is_ansi_padding_on", SqlType::Bit, off)
        .opt("is_ansi_warnings_on", SqlType::Bit, off)
        .opt("is_arithabort_on", SqlType::Bit, off)
        .opt("is_concat_null_yields_null_on", SqlType::Bit, off)
        .opt("is_numeric_roundabort_on", SqlType::Bit, off)
        .opt("is_quoted_identifier_on", SqlType::Bit, off)
        .opt("is_recursive_triggers_on", SqlType::Bit, off)
        .opt("is_cursor_close_on_commit_on", SqlType::Bit, off)
        .opt("is_local_cursor_default", SqlType::Bit, off)
        .opt("is_fulltext_enabled", SqlType::Bit, off)
        .opt("is_trustworthy_on", SqlType::Bit, off)
        .opt("is_db_chaining_on", SqlType::Bit, |r| {
            bit(r.id == MASTER_ID || r.id == TEMPDB_ID || r.id == MSDB_ID)
        })
        .opt("is_parameterization_forced", SqlType::Bit, off)
        .col("is_master_key_encrypted_by_server", SqlType::Bit, off)
        .opt("is_query_store_on", SqlType::Bit, off)
        .opt("is_published", SqlType::Bit, off)
        .opt("is_subscribed", SqlType::Bit, off)
        .opt("is_merge_published", SqlType::Bit, off)
        .opt("is_distributor", SqlType::Bit, off)
        .opt("is_sync_with_backup", SqlType::Bit, off)
        .opt("service_broker_guid", SqlType::UniqueIdentifier, |_| Value::Null)
        .opt("is_broker_enabled", SqlType::Bit, off)
        .opt("log_reuse_wait", SqlType::TinyInt, |r| tiny(log_reuse_wait_code(r.log_reuse_wait)))
        .opt("log_reuse_wait_desc", DESC, |r| nstr(r.log_reuse_wait))
        .opt("is_date_correlation_on", SqlType::Bit, off)
        .opt("is_cdc_enabled", SqlType::Bit, off)
        .opt("is_encrypted", SqlType::Bit, off)
        .opt("is_honor_broker_priority_on", SqlType::Bit, off)
        .opt("replica_id", SqlType::UniqueIdentifier, |_| Value::Null)
        .opt("group_database_id", SqlType::UniqueIdentifier, |_| Value::Null)
        .opt("resource_pool_id", SqlType::Int, |_| Value::Null)
        .opt("default_language_lcid", SqlType::SmallInt, |_| Value::Null)
        .opt("default_language_name", SYSNAME, |_| Value::Null)
        .opt("default_fulltext_language_lcid", SqlType::Int, |_| Value::Null)
        .opt("default_fulltext_language_name", SYSNAME, |_| Value::Null)
        .opt("is_nested_triggers_on", SqlType::Bit, |_| Value::Null)
        .opt("is_transform_noise_words_on", SqlType::Bit, |_| Value::Null)
        .opt("two_digit_year_cutoff", SqlType::SmallInt, |_| Value::Null)
        .opt("containment", SqlType::TinyInt, |_| tiny(0))
        .opt("containment_desc", DESC, |_| nstr("NONE"))
        .opt("target_recovery_time_in_seconds", SqlType::Int, |_| int(0))
        .opt("delayed_durability", SqlType::Int, |r| int(i64::from(r.delayed_durability.code())))
        .opt("delayed_durability_desc", DESC, |r| nstr(r.delayed_durability.description()))
        .opt("is_memory_optimized_elevate_to_snapshot_on", SqlType::Bit, off)
        .opt("is_federation_member", SqlType::Bit, off)
        .opt("is_remote_data_archive_enabled", SqlType::Bit, off)
        .opt("is_mixed_page_allocation_on", SqlType::Bit, off)
        .opt("is_temporal_history_retention_enabled", SqlType::Bit, |_| bit(true))
        .col("catalog_collation_type", SqlType::Int, |_| int(0))
        .opt("catalog_collation_type_desc", DESC, |_| nstr("DATABASE_DEFAULT"))
        .opt("physical_database_name", SYSNAME, |r| nstr(&r.name))
        .opt("is_result_set_caching_on", SqlType::Bit, off)
        .opt("is_accelerated_database_recovery_on", SqlType::Bit, off)
        .opt("is_tempdb_spill_to_remote_store", SqlType::Bit, off)
        .opt("is_stale_page_detection_on", SqlType::Bit, off)
        .opt("is_memory_optimized_enabled", SqlType::Bit, off)
        .opt("is_data_retention_enabled", SqlType::Bit, off)
        .opt("is_ledger_on", SqlType::Bit, off)
        .opt("is_change_feed_enabled", SqlType::Bit, off)
        .rows(&rows)
}

/// One file of a database: what `sys.master_files`, `sys.database_files` and
/// `sys.dm_io_virtual_file_stats` show of it.
pub(super) struct FileRow {
    pub db_id: u32,
    /// 1 for the data file, 2 for the log.
    pub file_id: u8,
    pub logical_name: String,
    pub physical_name: String,
    pub online: bool,
    /// Size in 8-KB pages.
    pub size_pages: u64,
    /// `MAXSIZE` in 8-KB pages, -1 for `UNLIMITED`.
    pub max_size_pages: i64,
    /// Growth increment: 8-KB pages, or a percentage when `is_percent_growth`.
    pub growth: u64,
    pub is_percent_growth: bool,
    pub reads: u64,
    pub bytes_read: u64,
    pub writes: u64,
    pub bytes_written: u64,
    pub write_stall_ms: u64,
    pub size_bytes: u64,
}

impl FileRow {
    fn is_log(&self) -> bool {
        self.file_id == 2
    }
}

/// The data file and the log file of `db`. tempdb has no log file (it logs nothing); its
/// row is kept, with size and counters 0, so that every database has files 1 and 2.
pub(super) fn files_of(db: &Database) -> [FileRow; 2] {
    let (data_name, log_name) = db.file_names();
    let growth_of = |kind: FileKind| {
        let g = db.file_growth(kind);
        let max = g.max_bytes.map_or(-1, |m| i64::try_from(m / PAGE_BYTES).unwrap_or(i64::MAX));
        match g.step {
            GrowthStep::Bytes(b) => (max, b / PAGE_BYTES, false),
            GrowthStep::Percent(p) => (max, u64::from(p), true),
        }
    };
    let online = db.state() == DatabaseState::Online;
    let pool = db.space().pool();
    let pool_stats = pool.stats();
    let data_pages = u64::from(pool.file().page_count());
    let data = FileRow {
        db_id: db.id(),
        file_id: 1,
        logical_name: data_name,
        physical_name: db.files().data.display().to_string(),
        online,
        size_pages: data_pages,
        max_size_pages: growth_of(FileKind::Data).0,
        growth: growth_of(FileKind::Data).1,
        is_percent_growth: growth_of(FileKind::Data).2,
        reads: pool_stats.reads,
        bytes_read: pool_stats.reads * PAGE_BYTES,
        writes: pool_stats.writes,
        bytes_written: pool_stats.writes * PAGE_BYTES,
        write_stall_ms: 0,
        size_bytes: data_pages * PAGE_BYTES,
    };
    let space = LogSpace::of(db);
    let log_stats = db.log_stats();
    let log = FileRow {
        db_id: db.id(),
        file_id: 2,
        logical_name: log_name,
        physical_name: db.files().log.display().to_string(),
        online,
        size_pages: space.file_bytes.div_ceil(PAGE_BYTES),
        max_size_pages: growth_of(FileKind::Log).0,
        growth: growth_of(FileKind::Log).1,
        is_percent_growth: growth_of(FileKind::Log).2,
        reads: 0,
        bytes_read: 0,
        writes: log_stats.file_writes,
        bytes_written: log_stats.file_bytes_written,
        write_stall_ms: log_stats.file_write_stall_us / 1000,
        size_bytes: space.file_bytes,
    };
    [data, log]
}

/// The columns `sys.master_files` and `sys.database_files` share, after `database_id`.
fn file_columns(view: View<FileRow>) -> View<FileRow> {
    view.col("file_id", SqlType::Int, |f| int(i64::from(f.file_id)))
        .opt("file_guid", SqlType::UniqueIdentifier, |_| Value::Null)
        .col("type", SqlType::TinyInt, |f| tiny(u8::from(f.is_log())))
        .opt("type_desc", DESC, |f| nstr(if f.is_log() { "LOG" } else { "ROWS" }))
        .col("data_space_id", SqlType::Int, |f| int(if f.is_log() { 0 } else { 1 }))
        .col("name", SYSNAME, |f| nstr(f.logical_name.as_str()))
        .col("physical_name", SqlType::NVarChar(Len::N(260)), |f| nstr(f.physical_name.as_str()))
        .opt("state", SqlType::TinyInt, |f| tiny(if f.online { 0 } else { 6 }))
        .opt("state_desc", DESC, |f| nstr(if f.online { "ONLINE" } else { "OFFLINE" }))
        .col("size", SqlType::Int, |f| int(i64::try_from(f.size_pages).unwrap_or(i64::MAX)))
        .col("max_size", SqlType::Int, |f| int(f.max_size_pages.min(i64::from(i32::MAX))))
        .col("growth", SqlType::Int, |f| int(i64::try_from(f.growth).unwrap_or(i64::MAX)))
        .col("is_media_read_only", SqlType::Bit, |_| bit(false))
        .col("is_read_only", SqlType::Bit, |_| bit(false))
        .col("is_sparse", SqlType::Bit, |_| bit(false))
        .col("is_percent_growth", SqlType::Bit, |f| bit(f.is_percent_growth))
        .col("is_name_reserved", SqlType::Bit, |_| bit(false))
        .col("is_persistent_log_buffer", SqlType::Bit, |_| bit(false))
}

/// `sys.master_files`: the files of every database.
pub(super) fn master_files(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<FileRow> = ctx.instance.databases().iter().flat_map(|db| files_of(db)).collect();
    file_columns(
        View::<FileRow>::new().col("database_id", SqlType::Int, |f| int(i64::from(f.db_id))),
    )
    .rows(&rows)
}

/// `sys.database_files`: the files of the view's database.
pub(super) fn database_files(ctx: &ViewContext<'_>) -> RowSet {
    file_columns(View::<FileRow>::new()).rows(&files_of(ctx.database))
}

/// SQL Server's fixed schemas of every database: (name, schema_id, principal_id).
const FIXED_SCHEMAS: [(&str, i64, i64); 13] = [
    ("dbo", 1, 1),
    ("guest", 2, 2),
    ("INFORMATION_SCHEMA", 3, 3),
    ("sys", 4, 4),
    ("db_owner", 16384, 16384),
    ("db_accessadmin", 16385, 16385),
    ("db_securityadmin", 16386, 16386),
    ("db_ddladmin", 16387, 16387),
    ("db_backupoperator", 16389, 16389),
    ("db_datareader", 16390, 16390),
    ("db_datawriter", 16391, 16391),
    ("db_denydatareader", 16392, 16392),
    ("db_denydatawriter", 16393, 16393),
];

/// The schemas of a database: the fixed ones, then any other schema name its objects use,
/// numbered from 5 in name order (Walden records a schema only as its objects' schema name).
pub(crate) fn schema_list(objects: &[Arc<Object>]) -> Vec<(String, i64, i64)> {
    let mut list: Vec<(String, i64, i64)> =
        FIXED_SCHEMAS.iter().map(|&(n, id, p)| (n.to_string(), id, p)).collect();
    // A schema object (CREATE SCHEMA) names itself; every other object names its schema.
    let mut extra: Vec<String> = objects
        .iter()
        .map(|o| match &**o {
            Object::Schema(s) => s.name.clone(),
            other => other.name().0.to_string(),
        })
        .filter(|s| !list.iter().any(|(n, _, _)| n.eq_ignore_ascii_case(s)))
        .collect();
    extra.sort_by_key(|s| s.to_lowercase());
    extra.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    for (i, name) in extra.into_iter().enumerate() {
        list.push((name, 5 + i as i64, 1));
    }
    list
}

/// `sys.schemas`.
pub(super) fn schemas(ctx: &ViewContext<'_>) -> RowSet {
    let rows = schema_list(&ctx.database.catalog().objects());
    View::<(String, i64, i64)>::new()
        .col("name", SYSNAME, |s| nstr(s.0.as_str()))
        .col("schema_id", SqlType::Int, |s| int(s.1))
        .opt("principal_id", SqlType::Int, |s| int(s.2))
        .rows(&rows)
}

/// A catalog object with what its views show beside its definition.
pub(super) struct ObjRow {
    pub(super) object: Arc<Object>,
    pub(super) schema_id: i64,
    /// Creation time: the table's own; the database's for sequences, procedures and views, whose
    /// creation time Walden does not record.
    pub(super) created_us: u64,
    /// For a sequence: the last value handed out.
    seq_current: Option<i128>,
}

impl ObjRow {
    fn table(&self) -> Option<&TableDef> {
        match &*self.object {
            Object::Table(t) => Some(t),
            _ => None,
        }
    }

    fn sequence(&self) -> Option<&SequenceDef> {
        match &*self.object {
            Object::Sequence(s) => Some(s),
            _ => None,
        }
    }
}

/// The view's database's schema-scoped objects, by object id, keeping those `keep` accepts.
/// DDL triggers are not schema-scoped (SQL Server's `sys.objects` does not list them).
pub(super) fn object_rows(ctx: &ViewContext<'_>, keep: fn(&Object) -> bool) -> Vec<ObjRow> {
    module_rows(ctx, |o| !matches!(o, Object::Trigger(t) if t.on_database()) && keep(o))
}

/// [`object_rows`] with the DDL triggers too, for the views that list them
/// (`sys.triggers`, `sys.sql_modules`).
pub(super) fn module_rows(ctx: &ViewContext<'_>, keep: impl Fn(&Object) -> bool) -> Vec<ObjRow> {
    let db = ctx.database;
    let objects = db.catalog().objects();
    let schemas = schema_list(&objects);
    let db_created = created_micros(db);
    objects
        .into_iter()
        // Objects below FIRST_OBJECT_ID are the engine's own (the row-version sequence).
        .filter(|o| {
            // Schemas and types have views of their own (sys.schemas, sys.types).
            !matches!(**o, Object::Schema(_) | Object::Type(_))
                && o.id() >= walden_engine::catalog::FIRST_OBJECT_ID
                && keep(o)
        })
        .map(|object| {
            let schema = object.name().0;
            let schema_id =
                schemas.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(schema)).map_or(1, |s| s.1);
            let (created_us, seq_current) = match &*object {
                Object::Table(t) => (t.created_micros, None),
                Object::Sequence(s) => (db_created, db.sequence_current(s)),
                Object::Procedure(_)
                | Object::View(_)
                | Object::Function(_)
                | Object::Trigger(_)
                | Object::Schema(_)
                | Object::Properties(_)
                | Object::Type(_) => (db_created, None),
            };
            ObjRow { object, schema_id, created_us, seq_current }
        })
        .collect()
}

/// `sys.objects.type_desc` of an object.
fn type_desc(object: &Object) -> &'static str {
    match object {
        Object::Table(_) => "USER_TABLE",
        Object::Sequence(_) => "SEQUENCE_OBJECT",
        Object::Procedure(_) => "SQL_STORED_PROCEDURE",
        Object::View(_) => "VIEW",
        Object::Function(f) if f.multi_statement => "SQL_TABLE_VALUED_FUNCTION",
        Object::Function(f) if f.returns_table => "SQL_INLINE_TABLE_VALUED_FUNCTION",
        Object::Function(_) => "SQL_SCALAR_FUNCTION",
        Object::Trigger(_) => "SQL_TRIGGER",
        Object::Schema(_) => "SCHEMA",
        Object::Properties(_) => "",
        Object::Type(_) => "TYPE",
    }
}

/// The columns of `sys.objects`, which `sys.tables`, `sys.procedures` and `sys.sequences`
/// start with.
pub(super) fn object_columns() -> View<ObjRow> {
    View::<ObjRow>::new()
        .col("name", SYSNAME, |o| nstr(o.object.name().1))
        .col("object_id", SqlType::Int, |o| int(i64::from(o.object.id())))
        .opt("principal_id", SqlType::Int, |_| Value::Null)
        .col("schema_id", SqlType::Int, |o| int(o.schema_id))
        .col("parent_object_id", SqlType::Int, |o| match &*o.object {
            Object::Trigger(t) => int(i64::from(t.table)),
            _ => int(0),
        })
        // CHAR(2), blank-padded as SQL Server's `type` is ('U ', 'SO', 'P ').
        .opt("type", SqlType::Char(2), |o| Value::Str(format!("{:<2}", o.object.type_code())))
        .opt("type_desc", DESC, |o| nstr(type_desc(&o.object)))
        .col("create_date", SqlType::DateTime, |o| datetime(o.created_us))
        .col("modify_date", SqlType::DateTime, |o| datetime(o.created_us))
        .col("is_ms_shipped", SqlType::Bit, |_| bit(false))
        .col("is_published", SqlType::Bit, |_| bit(false))
        .col("is_schema_published", SqlType::Bit, |_| bit(false))
}

/// `sys.objects`: the view's database's tables, sequences and procedures.
pub(super) fn objects(ctx: &ViewContext<'_>) -> RowSet {
    object_columns().rows(&object_rows(ctx, |_| true))
}

/// `sys.tables`.
pub(super) fn tables(ctx: &ViewContext<'_>) -> RowSet {
    object_columns()
        .col("lob_data_space_id", SqlType::Int, |o| {
            int(i64::from(o.table().is_some_and(|t| t.columns.iter().any(|c| is_max(c.ty)))))
        })
        .opt("filestream_data_space_id", SqlType::Int, |_| Value::Null)
        .col("max_column_id_used", SqlType::Int, |o| {
            int(o.table().map_or(0, |t| t.columns.len() as i64))
        })
        .col("lock_on_bulk_load", SqlType::Bit, |_| bit(false))
        .opt("uses_ansi_nulls", SqlType::Bit, |_| bit(true))
        .opt("is_replicated", SqlType::Bit, |_| bit(false))
        .opt("has_replication_filter", SqlType::Bit, |_| bit(false))
        .opt("is_merge_published", SqlType::Bit, |_| bit(false))
        .opt("is_sync_tran_subscribed", SqlType::Bit, |_| bit(false))
        .col("has_unchecked_assembly_data", SqlType::Bit, |_| bit(false))
        .opt("text_in_row_limit", SqlType::Int, |_| int(0))
        .opt("large_value_types_out_of_row", SqlType::Bit, |_| bit(false))
        .opt("is_tracked_by_cdc", SqlType::Bit, |_| bit(false))
        .opt("lock_escalation", SqlType::TinyInt, |_| tiny(0))
        .opt("lock_escalation_desc", DESC, |_| nstr("TABLE"))
        .opt("is_filetable", SqlType::Bit, |_| bit(false))
        .opt("is_memory_optimized", SqlType::Bit, |_| bit(false))
        .opt("durability", SqlType::TinyInt, |_| tiny(0))
        .opt("durability_desc", DESC, |_| nstr("SCHEMA_AND_DATA"))
        .opt("temporal_type", SqlType::TinyInt, |_| tiny(0))
        .opt("temporal_type_desc", DESC, |_| nstr("NON_TEMPORAL_TABLE"))
        .opt("history_table_id", SqlType::Int, |_| Value::Null)
        .opt("is_remote_data_archive_enabled", SqlType::Bit, |_| bit(false))
        .col("is_external", SqlType::Bit, |_| bit(false))
        .rows(&object_rows(ctx, |o| matches!(o, Object::Table(_))))
}

/// Whether a type is one of the `(MAX)` types.
pub(super) fn is_max(ty: SqlType) -> bool {
    matches!(
        ty,
        SqlType::VarChar(Len::Max) | SqlType::NVarChar(Len::Max) | SqlType::VarBinary(Len::Max)
    )
}

/// `sys.procedures`.
pub(super) fn procedures(ctx: &ViewContext<'_>) -> RowSet {
    object_columns()
        .col("is_auto_executed", SqlType::Bit, |_| bit(false))
        .opt("is_execution_replicated", SqlType::Bit, |_| bit(false))
        .opt("is_repl_serializable_ddl", SqlType::Bit, |_| bit(false))
        .opt("skips_repl_constraints", SqlType::Bit, |_| bit(false))
        .rows(&object_rows(ctx, |o| matches!(o, Object::Procedure(_))))
}

/// One parameter of a procedure or function, for `sys.parameters`.
pub(super) struct ParamRow {
    object_id: u32,
    name: String,
    /// 0 for a scalar function's return value, else the position from 1.
    parameter_id: usize,
    ty: SqlType,
    /// A user-defined type's id (an alias or a table type), else `None`.
    user_type_id: Option<u32>,
    /// A table-valued parameter (of a table type, READONLY).
    table_valued: bool,
    output: bool,
    has_default: bool,
}

/// The parameters of the procedures and functions of the view's database, read from their
/// stored text: by object, then position. Parameters of the database's alias and table types
/// are resolved against its catalog.
fn param_rows(ctx: &ViewContext<'_>) -> Vec<ParamRow> {
    let objects = ctx.database.catalog().objects();
    let user_type = |dt: &crate::ast::DataType| {
        let schema = dt.name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        objects.iter().find_map(|o| match &**o {
            Object::Type(t)
                if t.name.eq_ignore_ascii_case(&dt.name.name.value)
                    && t.schema.eq_ignore_ascii_case(schema) =>
            {
                Some(UserType { base: t.base, id: t.id, table: t.table.is_some() })
            }
            _ => None,
        })
    };
    let mut rows = Vec::new();
    for o in object_rows(ctx, |o| matches!(o, Object::Procedure(_) | Object::Function(_))) {
        let Some(text) = o.object.module_text() else { continue };
        let Ok(batch) = crate::parse_batch(text) else { continue };
        let Some(module) = declared_parameters(&batch, &user_type) else { continue };
        let id = o.object.id();
        if let Some(ty) = module.returns {
            rows.push(ParamRow {
                object_id: id,
                name: String::new(),
                parameter_id: 0,
                ty,
                user_type_id: None,
                table_valued: false,
                output: true,
                has_default: false,
            });
        }
        for p in module.parameters {
            rows.push(ParamRow {
                object_id: id,
                name: p.name,
                parameter_id: p.position,
                ty: p.ty,
                user_type_id: p.user_type.map(|u| u.id),
                table_valued: p.user_type.is_some_and(|u| u.table),
                output: p.output,
                has_default: p.has_default,
            });
        }
    }
    rows
}

/// A user-defined type a parameter is declared with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserType {
    /// An alias's base type (unused for a table type).
    pub(crate) base: SqlType,
    /// Its `user_type_id`.
    pub(crate) id: u32,
    /// A table type: the parameter is table-valued.
    pub(crate) table: bool,
}

/// A parameter as a procedure's or function's CREATE text declares it.
pub(crate) struct DeclaredParameter {
    pub(crate) name: String,
    /// From 1.
    pub(crate) position: usize,
    /// Its type (an alias's base type; INT, unused, for a table type).
    pub(crate) ty: SqlType,
    /// The user-defined type it is declared with, if any.
    pub(crate) user_type: Option<UserType>,
    pub(crate) output: bool,
    pub(crate) has_default: bool,
}

/// What a module's CREATE text declares: its parameters in order and a scalar function's
/// return type.
pub(crate) struct DeclaredModule {
    pub(crate) parameters: Vec<DeclaredParameter>,
    pub(crate) returns: Option<SqlType>,
}

/// The parameters of the CREATE PROCEDURE or CREATE FUNCTION in `batch` (a module's stored
/// text), for `sys.parameters` and `sp_sproc_columns`; `None` if it has neither. A type that
/// is not a system type is looked up with `user_type`; a parameter of a type neither knows is
/// left out, keeping the others' positions.
pub(crate) fn declared_parameters(
    batch: &crate::ast::Batch,
    user_type: &dyn Fn(&crate::ast::DataType) -> Option<UserType>,
) -> Option<DeclaredModule> {
    let (params, returns) = batch.statements.iter().find_map(|st| match &st.kind {
        StatementKind::CreateProcedure(p) => Some((&p.parameters, None)),
        StatementKind::CreateFunction(f) => Some(match &f.body {
            FunctionBody::Scalar { returns, .. } => (&f.parameters, Some(returns)),
            _ => (&f.parameters, None),
        }),
        _ => None,
    })?;
    let parameters = params
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let (ty, user_type) = match crate::exec::scalar::data_type(&p.data_type) {
                Ok(ty) => (ty, None),
                Err(_) => {
                    let u = user_type(&p.data_type)?;
                    (u.base, Some(u))
                }
            };
            Some(DeclaredParameter {
                name: p.name.clone(),
                position: i + 1,
                ty,
                user_type,
                output: p.output,
                has_default: p.default.is_some(),
            })
        })
        .collect();
    let returns = returns.and_then(|r| crate::exec::scalar::data_type(r).ok());
    Some(DeclaredModule { parameters, returns })
}

/// `sys.parameters`: the parameters of procedures and functions (a scalar function's return
/// value as parameter 0, unnamed), as tools that list or call them read them. SQL Server
/// leaves `default_value` NULL for T-SQL modules, as here.
pub(super) fn parameters(ctx: &ViewContext<'_>) -> RowSet {
    let off = |_: &ParamRow| bit(false);
    View::<ParamRow>::new()
        .col("object_id", SqlType::Int, |p| int(i64::from(p.object_id)))
        .opt("name", SYSNAME, |p| nstr(p.name.as_str()))
        .col("parameter_id", SqlType::Int, |p| int(p.parameter_id as i64))
        .col("system_type_id", SqlType::TinyInt, |p| {
            tiny(if p.table_valued { TABLE_TYPE_ID } else { p.ty.system_type_id() })
        })
        .col("user_type_id", SqlType::Int, |p| {
            int(p.user_type_id.map_or(i64::from(p.ty.system_type_id()), i64::from))
        })
        .col("max_length", SqlType::SmallInt, |p| {
            small(if p.table_valued { -1 } else { max_length(p.ty) })
        })
        .col("precision", SqlType::TinyInt, |p| {
            tiny(if p.table_valued { 0 } else { precision(p.ty) })
        })
        .col("scale", SqlType::TinyInt, |p| tiny(if p.table_valued { 0 } else { scale(p.ty) }))
        .col("is_output", SqlType::Bit, |p| bit(p.output))
        .col("is_cursor_ref", SqlType::Bit, off)
        .col("has_default_value", SqlType::Bit, |p| bit(p.has_default))
        .col("is_xml_document", SqlType::Bit, off)
        .opt("default_value", SqlType::NVarChar(Len::N(4000)), |_| Value::Null)
        .col("xml_collection_id", SqlType::Int, |_| int(0))
        // A table-valued parameter is READONLY, and is never NULL (an omitted one is empty).
        .col("is_readonly", SqlType::Bit, |p| bit(p.table_valued))
        .opt("is_nullable", SqlType::Bit, |p| bit(!p.table_valued))
        .rows(&param_rows(ctx))
}

/// SQL Server's `sql_variant` sequence values, as DECIMAL(38,0): wide enough for every
/// sequence type (Walden has no `sql_variant`).
const SEQUENCE_VALUE: SqlType = SqlType::Decimal { precision: 38, scale: 0 };

fn seq_value(v: i128) -> Value {
    Decimal::new(v, 0).map_or(Value::Null, Value::Decimal)
}

/// Whether a sequence without CYCLE has handed out its last value.
fn exhausted(s: &SequenceDef, current: Option<i128>) -> bool {
    !s.cycle
        && current.is_some_and(|v| {
            v.checked_add(s.increment).is_none_or(|next| next > s.max || next < s.min)
        })
}

/// `sys.sequences`.
pub(super) fn sequences(ctx: &ViewContext<'_>) -> RowSet {
    object_columns()
        .col("start_value", SEQUENCE_VALUE, |o| seq_field(o, |s| s.start))
        .col("increment", SEQUENCE_VALUE, |o| seq_field(o, |s| s.increment))
        .col("minimum_value", SEQUENCE_VALUE, |o| seq_field(o, |s| s.min))
        .col("maximum_value", SEQUENCE_VALUE, |o| seq_field(o, |s| s.max))
        .opt("is_cycling", SqlType::Bit, |o| bit(o.sequence().is_some_and(|s| s.cycle)))
        .opt("is_cached", SqlType::Bit, |o| bit(o.sequence().is_some_and(|s| s.cache.is_some())))
        .opt("cache_size", SqlType::Int, |o| {
            o.sequence().and_then(|s| s.cache).map_or(Value::Null, |n| int(i64::from(n)))
        })
        .col("system_type_id", SqlType::TinyInt, |o| {
            tiny(o.sequence().map_or(0, |s| s.ty.system_type_id()))
        })
        .col("user_type_id", SqlType::Int, |o| {
            int(o.sequence().map_or(0, |s| i64::from(s.ty.system_type_id())))
        })
        .col("precision", SqlType::TinyInt, |o| tiny(o.sequence().map_or(0, |s| precision(s.ty))))
        .col("scale", SqlType::TinyInt, |_| tiny(0))
        // The last value handed out, or START WITH before the first, as in SQL Server.
        .col("current_value", SEQUENCE_VALUE, |o| {
            o.sequence().map_or(Value::Null, |s| seq_value(o.seq_current.unwrap_or(s.start)))
        })
        .col("is_exhausted", SqlType::Bit, |o| {
            bit(o.sequence().is_some_and(|s| exhausted(s, o.seq_current)))
        })
        .opt("last_used_value", SEQUENCE_VALUE, |o| o.seq_current.map_or(Value::Null, seq_value))
        .rows(&object_rows(ctx, |o| matches!(o, Object::Sequence(_))))
}

fn seq_field(o: &ObjRow, f: fn(&SequenceDef) -> i128) -> Value {
    o.sequence().map_or(Value::Null, |s| seq_value(f(s)))
}

/// `sys.columns.max_length`: bytes, -1 for `(MAX)`, two per character of NCHAR/NVARCHAR.
pub(crate) fn max_length(ty: SqlType) -> i64 {
    match ty {
        SqlType::TinyInt | SqlType::Bit => 1,
        SqlType::SmallInt => 2,
        SqlType::Int | SqlType::Real => 4,
        SqlType::BigInt | SqlType::Float | SqlType::Money | SqlType::DateTime => 8,
        SqlType::Decimal { precision, .. } => match precision {
            0..=9 => 5,
            10..=19 => 9,
            20..=28 => 13,
            _ => 17,
        },
        SqlType::Char(n) | SqlType::Binary(n) => i64::from(n),
        SqlType::NChar(n) => 2 * i64::from(n),
        SqlType::VarChar(Len::N(n)) | SqlType::VarBinary(Len::N(n)) => i64::from(n),
        SqlType::NVarChar(Len::N(n)) => 2 * i64::from(n),
        SqlType::VarChar(Len::Max) | SqlType::NVarChar(Len::Max) | SqlType::VarBinary(Len::Max) => {
            -1
        }
        SqlType::Date => 3,
        SqlType::Time(s) => time_bytes(s),
        SqlType::DateTime2(s) => time_bytes(s) + 3,
        SqlType::DateTimeOffset(s) => time_bytes(s) + 5,
        SqlType::UniqueIdentifier => 16,
        SqlType::Variant => 8016,
        SqlType::Xml => -1,
    }
}

/// Bytes of a TIME(s) value in SQL Server.
fn time_bytes(scale: u8) -> i64 {
    match scale {
        0..=2 => 3,
        3..=4 => 4,
        _ => 5,
    }
}

/// `sys.columns.precision`: digits of numeric types, the display width of temporal ones.
pub(crate) fn precision(ty: SqlType) -> u8 {
    let fraction = |s: u8| if s == 0 { 0 } else { s + 1 };
    match ty {
        SqlType::TinyInt => 3,
        SqlType::SmallInt => 5,
        SqlType::Int => 10,
        SqlType::BigInt | SqlType::Money => 19,
        SqlType::Bit => 1,
        SqlType::Decimal { precision, .. } => precision,
        SqlType::Float => 53,
        SqlType::Real => 24,
        SqlType::Date => 10,
        SqlType::Time(s) => 8 + fraction(s),
        SqlType::DateTime => 23,
        SqlType::DateTime2(s) => 19 + fraction(s),
        SqlType::DateTimeOffset(s) => 26 + fraction(s),
        _ => 0,
    }
}

/// `sys.columns.scale`.
pub(crate) fn scale(ty: SqlType) -> u8 {
    match ty {
        SqlType::Decimal { scale, .. } => scale,
        SqlType::Time(s) | SqlType::DateTime2(s) | SqlType::DateTimeOffset(s) => s,
        SqlType::DateTime => 3,
        SqlType::Money => 4,
        _ => 0,
    }
}

/// A column of a table, as `sys.columns` shows it.
pub(super) struct ColRow {
    pub(super) object_id: u32,
    /// 1-based, as SQL Server numbers columns.
    pub(super) column_id: usize,
    pub(super) def: ColumnDef,
    /// For an identity column: the last value handed out, if any (`IDENT_CURRENT`).
    pub(super) identity_last: Option<i64>,
}

/// The columns of the view's database's tables and views, by object and column id.
pub(super) fn column_rows(ctx: &ViewContext<'_>) -> Vec<ColRow> {
    let db = ctx.database;
    let mut rows: Vec<ColRow> = db
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::Table(t) => Some(t),
            _ => None,
        })
        .flat_map(|t| {
            let identity_last = db.identity_current(t);
            t.columns.iter().enumerate().map(move |(i, c)| ColRow {
                object_id: t.id,
                column_id: i + 1,
                def: c.clone(),
                identity_last: c.identity.and(identity_last),
            })
        })
        .collect();
    for (view, columns) in ctx.view_columns {
        rows.extend(columns.iter().enumerate().map(|(i, c)| ColRow {
            object_id: *view,
            column_id: i + 1,
            def: c.clone(),
            identity_last: None,
        }));
    }
    rows.sort_by_key(|r| (r.object_id, r.column_id));
    rows
}

/// The columns of `sys.columns`, which `sys.identity_columns` starts with.
pub(super) fn column_columns() -> View<ColRow> {
    let off = |_: &ColRow| bit(false);
    View::<ColRow>::new()
        // System objects' ids are negative, kept as their two's complement.
        .col("object_id", SqlType::Int, |c| int(i64::from(c.object_id as i32)))
        .opt("name", SYSNAME, |c| nstr(c.def.name.as_str()))
        .col("column_id", SqlType::Int, |c| int(c.column_id as i64))
        .col("system_type_id", SqlType::TinyInt, |c| tiny(column_type_id(&c.def)))
        .col("user_type_id", SqlType::Int, |c| int(i64::from(column_type_id(&c.def))))
        .col("max_length", SqlType::SmallInt, |c| match c.def.declared {
            Some(d) => small(i64::from(d.max_length())),
            None => small(max_length(c.def.ty)),
        })
        .col("precision", SqlType::TinyInt, |c| match c.def.declared {
            Some(d) => tiny(d.precision_scale().0),
            None => tiny(precision(c.def.ty)),
        })
        .col("scale", SqlType::TinyInt, |c| match c.def.declared {
            Some(d) => tiny(d.precision_scale().1),
            None => tiny(scale(c.def.ty)),
        })
        .opt("collation_name", SYSNAME, |c| {
            if c.def.ty.is_text() {
                nstr(c.def.collation.as_deref().unwrap_or(COLLATION))
            } else {
                Value::Null
            }
        })
        .opt("is_nullable", SqlType::Bit, |c| bit(c.def.nullable))
        .col("is_ansi_padded", SqlType::Bit, |c| bit(is_ansi_padded(c.def.ty)))
        .col("is_rowguidcol", SqlType::Bit, off)
        .col("is_identity", SqlType::Bit, |c| bit(c.def.identity.is_some()))
        .col("is_computed", SqlType::Bit, |c| bit(c.def.computed.is_some()))
        .col("is_filestream", SqlType::Bit, off)
        .opt("is_replicated", SqlType::Bit, off)
        .opt("is_non_sql_subscribed", SqlType::Bit, off)
        .opt("is_merge_published", SqlType::Bit, off)
        .opt("is_dts_replicated", SqlType::Bit, off)
        .col("is_xml_document", SqlType::Bit, off)
        .col("xml_collection_id", SqlType::Int, |_| int(0))
        // The column's DEFAULT, by the id `sys.default_constraints` gives it.
        .col("default_object_id", SqlType::Int, |c| int(i64::from(default_object_id(c))))
        .col("rule_object_id", SqlType::Int, |_| int(0))
        .opt("is_sparse", SqlType::Bit, off)
        .opt("is_column_set", SqlType::Bit, off)
        .opt("generated_always_type", SqlType::TinyInt, |_| tiny(0))
        .opt("generated_always_type_desc", DESC, |_| nstr("NOT_APPLICABLE"))
}

/// The synthetic object id of a column's DEFAULT (see `constraints::constraint_id`), 0 for a
/// column without one.
pub(super) fn default_object_id(c: &ColRow) -> u32 {
    if c.def.default.is_some() {
        constraint_id(c.object_id, ConstraintKind::Default, c.column_id)
    } else {
        0
    }
}

/// Whether SQL Server keeps trailing blanks or zeros of a column's values (ANSI_PADDING ON,
/// always so for the character and binary types).
pub(super) fn is_ansi_padded(ty: SqlType) -> bool {
    ty.is_text() || matches!(ty, SqlType::Binary(_) | SqlType::VarBinary(_))
}

/// `sys.columns`: the columns of the view's database's tables, by object and column id.
pub(super) fn columns(ctx: &ViewContext<'_>) -> RowSet {
    column_columns().rows(&column_rows(ctx))
}

/// One index of a table, for `sys.indexes` and `sys.index_columns`.
struct IndexRow {
    object_id: u32,
    index: IndexDef,
}

fn index_rows(ctx: &ViewContext<'_>) -> Vec<IndexRow> {
    ctx.database
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::Table(t) => Some(t),
            _ => None,
        })
        .flat_map(|t| t.indexes.iter().map(|i| IndexRow { object_id: t.id, index: i.clone() }))
        .collect()
}

/// `sys.indexes`: index 0 is a heap (no name), 1 the clustered index, 2.. nonclustered.
pub(super) fn indexes(ctx: &ViewContext<'_>) -> RowSet {
    let off = |_: &IndexRow| bit(false);
    View::<IndexRow>::new()
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .opt("name", SYSNAME, |r| {
            if r.index.is_heap() {
                Value::Null
            } else {
                nstr(r.index.name.as_str())
            }
        })
        .col("index_id", SqlType::Int, |r| {
            int(if r.index.is_heap() { 0 } else { i64::from(r.index.id) })
        })
        .col("type", SqlType::TinyInt, |r| tiny(index_type(&r.index)))
        .opt("type_desc", DESC, |r| {
            nstr(["HEAP", "CLUSTERED", "NONCLUSTERED"][usize::from(index_type(&r.index))])
        })
        .opt("is_unique", SqlType::Bit, |r| bit(!r.index.is_heap() && r.index.unique))
        .opt("data_space_id", SqlType::Int, |_| int(1))
        .opt("ignore_dup_key", SqlType::Bit, |r| bit(r.index.ignore_dup_key))
        .opt("is_primary_key", SqlType::Bit, |r| bit(r.index.primary_key))
        .opt("is_unique_constraint", SqlType::Bit, |r| bit(r.index.unique_constraint))
        .col("fill_factor", SqlType::TinyInt, |_| tiny(0))
        .opt("is_padded", SqlType::Bit, off)
        .opt("is_disabled", SqlType::Bit, off)
        .opt("is_hypothetical", SqlType::Bit, off)
        .opt("allow_row_locks", SqlType::Bit, |_| bit(true))
        .opt("allow_page_locks", SqlType::Bit, |_| bit(true))
        .opt("has_filter", SqlType::Bit, off)
        .opt("filter_definition", SqlType::NVarChar(Len::Max), |_| Value::Null)
        .rows(&index_rows(ctx))
}

/// An index with what its tree holds now, for `sys.partitions` and `sys.allocation_units`.
struct PartitionRow {
    object_id: u32,
    /// SQL Server's index id: 0 for a heap.
    index_id: u32,
    /// Entries and pages, from a walk of the tree under its shared latch (`None` if a page
    /// failed its checksum: a damaged tree, which `DBCC CHECKTABLE` reports).
    counts: Option<(u64, u64)>,
}

impl PartitionRow {
    /// The partition's (and its heap or B-tree's, and its one allocation unit's) id.
    fn id(&self) -> u64 {
        (u64::from(self.object_id) << 16) | u64::from(self.index_id)
    }
}

/// Every index of every table of the view's database, with its rows and pages. Like SQL
/// Server's metadata, the counts take no locks (only each tree's latch, shared, while its
/// pages are counted): they include changes not yet committed.
fn partition_rows(ctx: &ViewContext<'_>) -> Vec<PartitionRow> {
    index_rows(ctx)
        .into_iter()
        .map(|r| PartitionRow {
            object_id: r.object_id,
            index_id: if r.index.is_heap() { 0 } else { u32::from(r.index.id) },
            counts: ctx.database.space().tree(r.index.root).count().ok().map(|c| (c.rows, c.pages)),
        })
        .collect()
}

/// `sys.partitions`: one partition per index (Walden does not partition tables).
pub(super) fn partitions(ctx: &ViewContext<'_>) -> RowSet {
    View::<PartitionRow>::new()
        .col("partition_id", SqlType::BigInt, |r| big(r.id()))
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("index_id", SqlType::Int, |r| int(i64::from(r.index_id)))
        .col("partition_number", SqlType::Int, |_| int(1))
        .opt("hobt_id", SqlType::BigInt, |r| big(r.id()))
        .opt("rows", SqlType::BigInt, |r| r.counts.map_or(Value::Null, |(rows, _)| big(rows)))
        .col("filestream_filegroup_id", SqlType::SmallInt, |_| small(0))
        .col("data_compression", SqlType::TinyInt, |_| tiny(0))
        .opt("data_compression_desc", DESC, |_| nstr("NONE"))
        .rows(&partition_rows(ctx))
}

/// `sys.allocation_units`: each partition's one in-row data unit, with its tree's pages.
pub(super) fn allocation_units(ctx: &ViewContext<'_>) -> RowSet {
    let pages = |r: &PartitionRow| r.counts.map_or(Value::Null, |(_, pages)| big(pages));
    View::<PartitionRow>::new()
        .col("allocation_unit_id", SqlType::BigInt, |r| big(r.id()))
        .col("type", SqlType::TinyInt, |_| tiny(1))
        .opt("type_desc", DESC, |_| nstr("IN_ROW_DATA"))
        .col("container_id", SqlType::BigInt, |r| big(r.id()))
        .opt("data_space_id", SqlType::Int, |_| int(1))
        .col("total_pages", SqlType::BigInt, pages)
        .col("used_pages", SqlType::BigInt, pages)
        .col("data_pages", SqlType::BigInt, pages)
        .rows(&partition_rows(ctx))
}

/// SQL Server's index type: 0 heap, 1 clustered, 2 nonclustered.
fn index_type(index: &IndexDef) -> u8 {
    match (index.is_heap(), index.id) {
        (true, _) => 0,
        (false, 1) => 1,
        _ => 2,
    }
}

/// One key column of an index, for `sys.index_columns`.
struct IndexColumnRow {
    object_id: u32,
    index_id: u16,
    ordinal: usize,
    column: usize,
}

/// The key columns of the indexes `index_rows` gives, in key order.
fn index_column_rows(indexes: Vec<IndexRow>) -> Vec<IndexColumnRow> {
    indexes
        .into_iter()
        .flat_map(|r| {
            r.index.columns.clone().into_iter().enumerate().map(move |(i, c)| IndexColumnRow {
                object_id: r.object_id,
                index_id: r.index.id,
                ordinal: i + 1,
                column: c,
            })
        })
        .collect()
}

/// `sys.index_columns`: the key columns of every index, in key order (all ascending).
pub(super) fn index_columns(ctx: &ViewContext<'_>) -> RowSet {
    let rows = index_column_rows(index_rows(ctx));
    View::<IndexColumnRow>::new()
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("index_id", SqlType::Int, |r| int(i64::from(r.index_id)))
        .col("index_column_id", SqlType::Int, |r| int(r.ordinal as i64))
        .col("column_id", SqlType::Int, |r| int(r.column as i64 + 1))
        .col("key_ordinal", SqlType::TinyInt, |r| tiny(r.ordinal as u8))
        .col("partition_ordinal", SqlType::TinyInt, |_| tiny(0))
        .opt("is_descending_key", SqlType::Bit, |_| bit(false))
        .opt("is_included_column", SqlType::Bit, |_| bit(false))
        // SQL Server 2022's: no columnstore indexes here, so never part of one's order.
        .col("column_store_order_ordinal", SqlType::TinyInt, |_| tiny(0))
        .rows(&rows)
}

/// A built-in type as `sys.types` lists it: name, system_type_id, user_type_id, max_length,
/// precision, scale, and whether it has a collation.
type TypeRow = (&'static str, u8, i64, i64, u8, u8, bool);

/// The built-in types Walden has, with SQL Server's ids and sizes (`sysname` is the alias of
/// `nvarchar(128)` it is in SQL Server).
const TYPES: [TypeRow; 31] = [
    ("image", 34, 34, 16, 0, 0, false),
    ("text", 35, 35, 16, 0, 0, true),
    ("smalldatetime", 58, 58, 4, 16, 0, false),
    ("ntext", 99, 99, 16, 0, 0, true),
    ("smallmoney", 122, 122, 4, 10, 4, false),
    ("uniqueidentifier", 36, 36, 16, 0, 0, false),
    ("date", 40, 40, 3, 10, 0, false),
    ("time", 41, 41, 5, 16, 7, false),
    ("datetime2", 42, 42, 8, 27, 7, false),
    ("datetimeoffset", 43, 43, 10, 34, 7, false),
    ("tinyint", 48, 48, 1, 3, 0, false),
    ("smallint", 52, 52, 2, 5, 0, false),
    ("int", 56, 56, 4, 10, 0, false),
    ("sql_variant", 98, 98, 8016, 0, 0, false),
    ("xml", 241, 241, -1, 0, 0, false),
    ("real", 59, 59, 4, 24, 0, false),
    ("money", 60, 60, 8, 19, 4, false),
    ("datetime", 61, 61, 8, 23, 3, false),
    ("float", 62, 62, 8, 53, 0, false),
    ("bit", 104, 104, 1, 1, 0, false),
    ("decimal", 106, 106, 17, 38, 38, false),
    ("numeric", 108, 108, 17, 38, 38, false),
    ("bigint", 127, 127, 8, 19, 0, false),
    ("varbinary", 165, 165, 8000, 0, 0, false),
    ("varchar", 167, 167, 8000, 0, 0, true),
    ("binary", 173, 173, 8000, 0, 0, false),
    ("char", 175, 175, 8000, 0, 0, true),
    ("timestamp", 189, 189, 8, 0, 0, false),
    ("nvarchar", 231, 231, 8000, 0, 0, true),
    ("nchar", 239, 239, 8000, 0, 0, true),
    ("sysname", 231, 256, 256, 0, 0, true),
];

/// A column's `system_type_id`: its type's, `timestamp`'s (189) for a row version, which is
/// stored as BINARY(8), or the type it was declared with (SMALLDATETIME, ...).
pub(super) fn column_type_id(c: &ColumnDef) -> u8 {
    match c.declared {
        _ if c.rowversion => 189,
        Some(declared) => declared.system_type_id(),
        None => c.ty.system_type_id(),
    }
}

/// `TYPE_NAME(id)`: the name of the type with user_type_id `id`.
pub(crate) fn type_name(id: i64) -> Option<&'static str> {
    TYPES.iter().find(|t| t.2 == id).map(|t| t.0)
}

/// `TYPE_ID(name)`: the user_type_id of the type named `name` (any case).
pub(crate) fn type_id(name: &str) -> Option<i64> {
    TYPES.iter().find(|t| t.0.eq_ignore_ascii_case(name)).map(|t| t.2)
}

/// `master.dbo.spt_values`, the table SQL Server keeps for its own procedures and that
/// scripts use as a numbers table: Walden has its type `P` rows, the numbers 0 to 2047.
pub(crate) fn spt_values() -> RowSet {
    let numbers: Vec<i64> = (0..=2047).collect();
    View::<i64>::new()
        .opt("name", SqlType::NVarChar(Len::N(35)), |_| Value::Null)
        .col("number", SqlType::Int, |&n| int(n))
        .col("type", SqlType::NChar(3), |_| nstr("P  "))
        .opt("low", SqlType::Int, |_| Value::Null)
        .opt("high", SqlType::Int, |_| Value::Null)
        .opt("status", SqlType::Int, |_| int(0))
        .rows(&numbers)
}

/// `sys.types`: the built-in types, in SQL Server's columns (Walden has no user-defined types).
pub(super) fn types(ctx: &ViewContext<'_>) -> RowSet {
    // (row, schema_id, user-defined alias nullability, table type): the built-in types, then
    // the database's user-defined ones (CREATE TYPE), whose user_type_id is their object id.
    let objects = ctx.database.catalog().objects();
    let schemas = schema_list(&objects);
    let mut rows: Vec<(TypeRow, i64, Option<bool>, bool, String)> =
        TYPES.iter().map(|t| (*t, 4, None, false, t.0.to_string())).collect();
    for o in &objects {
        if let Object::Type(t) = &**o {
            let system = t.base.system_type_id();
            let schema_id = schemas
                .iter()
                .find(|(n, _, _)| n.eq_ignore_ascii_case(&t.schema))
                .map_or(1, |s| s.1);
            let table = t.table.is_some();
            let (system, length, precision, scale) = if table {
                (243, -1, 0, 0)
            } else {
                (system, max_length(t.base), self::precision(t.base), self::scale(t.base))
            };
            let row: TypeRow =
                ("", system, i64::from(t.id), length, precision, scale, t.base.is_text() && !table);
            rows.push((row, schema_id, Some(t.nullable), table, t.name.clone()));
        }
    }
    View::<(TypeRow, i64, Option<bool>, bool, String)>::new()
        .col("name", SYSNAME, |t| nstr(t.4.as_str()))
        .col("system_type_id", SqlType::TinyInt, |t| tiny(t.0 .1))
        .col("user_type_id", SqlType::Int, |t| int(t.0 .2))
        .col("schema_id", SqlType::Int, |t| int(t.1))
        .opt("principal_id", SqlType::Int, |_| Value::Null)
        .col("max_length", SqlType::SmallInt, |t| small(t.0 .3))
        .col("precision", SqlType::TinyInt, |t| tiny(t.0 .4))
        .col("scale", SqlType::TinyInt, |t| tiny(t.0 .5))
        .opt("collation_name", SYSNAME, |t| if t.0 .6 { nstr(COLLATION) } else { Value::Null })
        .opt("is_nullable", SqlType::Bit, |t| bit(t.2.unwrap_or(t.4 != "sysname")))
        .col("is_user_defined", SqlType::Bit, |t| bit(t.2.is_some()))
        .col("is_assembly_type", SqlType::Bit, |_| bit(false))
        .col("default_object_id", SqlType::Int, |_| int(0))
        .col("rule_object_id", SqlType::Int, |_| int(0))
        .col("is_table_type", SqlType::Bit, |t| bit(t.3))
        .rows(&rows)
}

/// `sys.dm_db_partition_stats`: each partition's rows and pages, as `sys.partitions` and
/// `sys.allocation_units` count them (every page is in-row data, used and reserved alike).
pub(super) fn partition_stats(ctx: &ViewContext<'_>) -> RowSet {
    let pages = |r: &PartitionRow| r.counts.map_or(Value::Null, |(_, pages)| big(pages));
    let zero = |_: &PartitionRow| big(0);
    View::<PartitionRow>::new()
        .col("partition_id", SqlType::BigInt, |r| big(r.id()))
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("index_id", SqlType::Int, |r| int(i64::from(r.index_id)))
        .col("partition_number", SqlType::Int, |_| int(1))
        .opt("in_row_data_page_count", SqlType::BigInt, pages)
        .opt("in_row_used_page_count", SqlType::BigInt, pages)
        .opt("in_row_reserved_page_count", SqlType::BigInt, pages)
        .opt("lob_used_page_count", SqlType::BigInt, zero)
        .opt("lob_reserved_page_count", SqlType::BigInt, zero)
        .opt("row_overflow_used_page_count", SqlType::BigInt, zero)
        .opt("row_overflow_reserved_page_count", SqlType::BigInt, zero)
        .opt("used_page_count", SqlType::BigInt, pages)
        .opt("reserved_page_count", SqlType::BigInt, pages)
        .opt("row_count", SqlType::BigInt, |r| r.counts.map_or(Value::Null, |(rows, _)| big(rows)))
        .rows(&partition_rows(ctx))
}

/// `sys.filegroups` and `sys.data_spaces`: the one filegroup, PRIMARY, that every table and
/// index of a Walden database is in.
pub(super) fn filegroups(_ctx: &ViewContext<'_>) -> RowSet {
    let off = |_: &()| bit(false);
    View::<()>::new()
        .col("name", SYSNAME, |_| nstr("PRIMARY"))
        .col("data_space_id", SqlType::Int, |_| int(1))
        .col("type", SqlType::NVarChar(Len::N(2)), |_| nstr("FG"))
        .opt("type_desc", DESC, |_| nstr("ROWS_FILEGROUP"))
        .col("is_default", SqlType::Bit, |_| bit(true))
        .col("is_system", SqlType::Bit, off)
        .opt("filegroup_guid", SqlType::UniqueIdentifier, |_| Value::Null)
        .opt("log_filegroup_id", SqlType::Int, |_| Value::Null)
        .col("is_read_only", SqlType::Bit, off)
        .col("is_autogrow_all_files", SqlType::Bit, off)
        .rows(&[()])
}

/// `sys.partition_schemes` and `sys.partition_functions`: Walden has no partitioning (every
/// table and index is on the one filegroup), so there are none; maintenance scripts join
/// them to tell partitioned indexes apart.
pub(super) fn partition_schemes() -> RowSet {
    let none = |_: &()| Value::Null;
    View::<()>::new()
        .col("name", SYSNAME, none)
        .col("data_space_id", SqlType::Int, none)
        .col("type", SqlType::NVarChar(Len::N(2)), none)
        .opt("type_desc", DESC, none)
        .col("is_default", SqlType::Bit, none)
        .col("is_system", SqlType::Bit, none)
        .col("function_id", SqlType::Int, none)
        .rows(&[])
}

/// `sys.index_resumable_operations`: index builds paused to resume later. Walden's index
/// builds are not resumable, so there are none (IndexOptimize looks for them first).
pub(super) fn index_resumable_operations() -> RowSet {
    let none = |_: &()| Value::Null;
    View::<()>::new()
        .col("object_id", SqlType::Int, none)
        .col("index_id", SqlType::Int, none)
        .col("name", SYSNAME, none)
        .col("sql_text", SqlType::NVarChar(Len::Max), none)
        .col("last_max_dop_used", SqlType::SmallInt, none)
        .col("partition_number", SqlType::Int, none)
        .col("state", SqlType::TinyInt, none)
        .col("state_desc", DESC, none)
        .col("start_time", SqlType::DateTime, none)
        .col("last_pause_time", SqlType::DateTime, none)
        .col("total_execution_time", SqlType::Int, none)
        .col("percent_complete", SqlType::Float, none)
        .col("page_count", SqlType::BigInt, none)
        .rows(&[])
}

/// See [`partition_schemes`].
pub(super) fn partition_functions() -> RowSet {
    let none = |_: &()| Value::Null;
    View::<()>::new()
        .col("name", SYSNAME, none)
        .col("function_id", SqlType::Int, none)
        .col("type", SqlType::NVarChar(Len::N(2)), none)
        .opt("type_desc", DESC, none)
        .col("fanout", SqlType::Int, none)
        .col("boundary_value_on_right", SqlType::Bit, none)
        .col("is_system", SqlType::Bit, none)
        .col("create_date", SqlType::DateTime, none)
        .col("modify_date", SqlType::DateTime, none)
        .rows(&[])
}

/// `system_type_id` of a table type and of a table-valued parameter.
const TABLE_TYPE_ID: u8 = 243;

/// `sys.table_types`: the table types (CREATE TYPE ... AS TABLE), with `sys.types`' columns.
pub(super) fn table_types(ctx: &ViewContext<'_>) -> RowSet {
    let objects = ctx.database.catalog().objects();
    let schemas = schema_list(&objects);
    let rows: Vec<(String, i64, i64)> = objects
        .iter()
        .filter_map(|o| match &**o {
            Object::Type(t) if t.table.is_some() => {
                let schema = schemas
                    .iter()
                    .find(|(n, _, _)| n.eq_ignore_ascii_case(&t.schema))
                    .map_or(1, |s| s.1);
                Some((t.name.clone(), i64::from(t.id), schema))
            }
            _ => None,
        })
        .collect();
    let off = |_: &(String, i64, i64)| bit(false);
    View::<(String, i64, i64)>::new()
        .col("name", SYSNAME, |t| nstr(t.0.as_str()))
        .col("system_type_id", SqlType::TinyInt, |_| tiny(TABLE_TYPE_ID))
        .col("user_type_id", SqlType::Int, |t| int(t.1))
        .col("schema_id", SqlType::Int, |t| int(t.2))
        .opt("principal_id", SqlType::Int, |_| Value::Null)
        .col("max_length", SqlType::SmallInt, |_| small(-1))
        .col("precision", SqlType::TinyInt, |_| tiny(0))
        .col("scale", SqlType::TinyInt, |_| tiny(0))
        .opt("collation_name", SYSNAME, |_| Value::Null)
        .opt("is_nullable", SqlType::Bit, off)
        .col("is_user_defined", SqlType::Bit, |_| bit(true))
        .col("is_assembly_type", SqlType::Bit, off)
        .col("default_object_id", SqlType::Int, |_| int(0))
        .col("rule_object_id", SqlType::Int, |_| int(0))
        .col("is_table_type", SqlType::Bit, |_| bit(true))
        .col("type_table_object_id", SqlType::Int, |t| int(t.1))
        .col("is_memory_optimized", SqlType::Bit, off)
        .rows(&rows)
}

/// `sys.synonyms`: `sys.objects`' columns and `base_object_name`; Walden has no synonyms.
pub(super) fn synonyms(_ctx: &ViewContext<'_>) -> RowSet {
    object_columns()
        .opt("base_object_name", SqlType::NVarChar(Len::N(1035)), |_| Value::Null)
        .rows(&[])
}
