//! `sys.databases`, `sys.master_files`, `sys.database_files` and `sys.filegroups`: each
//! database's options and state, and its one data file and one log file.

use walden_engine::database::DatabaseState;
use walden_engine::files::{FileKind, GrowthStep};
use walden_engine::instance::{MASTER_ID, MSDB_ID, TEMPDB_ID};
use walden_engine::types::{Len, SqlType, Value};
use walden_engine::{Database, RecoveryModel};

use super::catalog::created_micros;
use super::{
    bit, datetime, int, nstr, tiny, LogSpace, View, ViewContext, COLLATION, DESC, PAGE_BYTES,
    SYSNAME,
};
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
