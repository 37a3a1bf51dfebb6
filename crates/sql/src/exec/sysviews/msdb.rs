//! msdb's backup and restore history tables, which DBA scripts read (`SELECT MAX(
//! backup_finish_date) FROM msdb.dbo.backupset WHERE database_name = ...`). Walden has no
//! msdb database and takes no SQL Server backups, so each is an empty table with SQL Server's
//! columns: such a script runs and finds no history, as on a server never backed up.

use walden_engine::types::{Len, SqlType};

use crate::exec::output::{ColumnInfo, RowSet};

const INT: SqlType = SqlType::Int;
const TINY: SqlType = SqlType::TinyInt;
const SMALL: SqlType = SqlType::SmallInt;
const BIT: SqlType = SqlType::Bit;
const DATETIME: SqlType = SqlType::DateTime;
const GUID: SqlType = SqlType::UniqueIdentifier;
const LSN: SqlType = SqlType::Decimal { precision: 25, scale: 0 };
const SIZE: SqlType = SqlType::Decimal { precision: 20, scale: 0 };
const COUNT: SqlType = SqlType::Decimal { precision: 10, scale: 0 };
const SYSNAME: SqlType = SqlType::NVarChar(Len::N(128));
const PATH: SqlType = SqlType::NVarChar(Len::N(260));
const CODE: SqlType = SqlType::Char(1);

fn nvarchar(n: u16) -> SqlType {
    SqlType::NVarChar(Len::N(n))
}

/// The empty history table `name` of msdb's `dbo` schema, if it is one.
pub(crate) fn history_table(name: &str) -> Option<RowSet> {
    let columns: Vec<(&str, SqlType)> = match name.to_ascii_lowercase().as_str() {
        "backupset" => vec![
            ("backup_set_id", INT),
            ("backup_set_uuid", GUID),
            ("media_set_id", INT),
            ("first_family_number", TINY),
            ("first_media_number", SMALL),
            ("last_family_number", TINY),
            ("last_media_number", SMALL),
            ("catalog_family_number", TINY),
            ("catalog_media_number", SMALL),
            ("position", INT),
            ("expiration_date", DATETIME),
            ("software_vendor_id", INT),
            ("name", SYSNAME),
            ("description", nvarchar(255)),
            ("user_name", SYSNAME),
            ("software_major_version", TINY),
            ("software_minor_version", TINY),
            ("software_build_version", SMALL),
            ("time_zone", SMALL),
            ("mtf_minor_version", TINY),
            ("first_lsn", LSN),
            ("last_lsn", LSN),
            ("checkpoint_lsn", LSN),
            ("database_backup_lsn", LSN),
            ("database_creation_date", DATETIME),
            ("backup_start_date", DATETIME),
            ("backup_finish_date", DATETIME),
            ("type", CODE),
            ("sort_order", SMALL),
            ("code_page", SMALL),
            ("compatibility_level", TINY),
            ("database_version", INT),
            ("backup_size", SIZE),
            ("database_name", SYSNAME),
            ("server_name", SYSNAME),
            ("machine_name", SYSNAME),
            ("flags", INT),
            ("unicode_locale", INT),
            ("unicode_compare_style", INT),
            ("collation_name", SYSNAME),
            ("is_password_protected", BIT),
            ("recovery_model", nvarchar(60)),
            ("has_bulk_logged_data", BIT),
            ("is_snapshot", BIT),
            ("is_readonly", BIT),
            ("is_single_user", BIT),
            ("has_backup_checksums", BIT),
            ("is_damaged", BIT),
            ("begins_log_chain", BIT),
            ("has_incomplete_metadata", BIT),
            ("is_force_offline", BIT),
            ("is_copy_only", BIT),
            ("first_recovery_fork_guid", GUID),
            ("last_recovery_fork_guid", GUID),
            ("fork_point_lsn", LSN),
            ("database_guid", GUID),
            ("family_guid", GUID),
            ("differential_base_lsn", LSN),
            ("differential_base_guid", GUID),
            ("compressed_backup_size", SIZE),
            ("key_algorithm", nvarchar(32)),
            ("encryptor_thumbprint", SqlType::VarBinary(Len::N(20))),
            ("encryptor_type", nvarchar(32)),
        ],
        "backupmediafamily" => vec![
            ("media_set_id", INT),
            ("family_sequence_number", TINY),
            ("media_family_id", GUID),
            ("media_count", INT),
            ("logical_device_name", SYSNAME),
            ("physical_device_name", PATH),
            ("device_type", TINY),
            ("physical_block_size", INT),
            ("mirror", TINY),
        ],
        "backupmediaset" => vec![
            ("media_set_id", INT),
            ("media_uuid", GUID),
            ("media_family_count", TINY),
            ("name", SYSNAME),
            ("description", nvarchar(255)),
            ("software_name", SYSNAME),
            ("software_vendor_id", INT),
            ("MTF_major_version", TINY),
            ("mirror_count", TINY),
            ("is_password_protected", BIT),
            ("is_compressed", BIT),
            ("is_encrypted", BIT),
        ],
        "backupfile" => vec![
            ("backup_set_id", INT),
            ("first_family_number", TINY),
            ("first_media_number", SMALL),
            ("filegroup_name", SYSNAME),
            ("page_size", INT),
            ("file_number", COUNT),
            ("backed_up_page_count", COUNT),
            ("file_type", CODE),
            ("source_file_block_size", COUNT),
            ("file_size", SIZE),
            ("logical_name", SYSNAME),
            ("physical_drive", PATH),
            ("physical_name", PATH),
            ("state", TINY),
            ("state_desc", nvarchar(64)),
            ("create_lsn", LSN),
            ("drop_lsn", LSN),
            ("file_guid", GUID),
            ("read_only_lsn", LSN),
            ("read_write_lsn", LSN),
            ("differential_base_lsn", LSN),
            ("differential_base_guid", GUID),
            ("backup_size", SIZE),
            ("filegroup_guid", GUID),
            ("is_readonly", BIT),
            ("is_present", BIT),
        ],
        "restorehistory" => vec![
            ("restore_history_id", INT),
            ("restore_date", DATETIME),
            ("destination_database_name", SYSNAME),
            ("user_name", SYSNAME),
            ("backup_set_id", INT),
            ("restore_type", CODE),
            ("replace", BIT),
            ("recovery", BIT),
            ("restart", BIT),
            ("stop_at", DATETIME),
            ("device_count", TINY),
            ("stop_at_mark_name", SYSNAME),
            ("stop_before", BIT),
        ],
        _ => return None,
    };
    Some(RowSet {
        columns: columns.into_iter().map(|(n, ty)| ColumnInfo::new(n, ty)).collect(),
        rows: Vec::new(),
    })
}
