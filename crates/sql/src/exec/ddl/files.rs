//! Statements on a database's files: the file specifications of `CREATE DATABASE`,
//! `ALTER DATABASE ... MODIFY FILE` (and the `ADD FILE` / `REMOVE FILE` Walden refuses), and
//! `DBCC SHRINKFILE` / `SHRINKDATABASE`. A Walden database has exactly one data file and
//! one log file; their sizes, growth and maximum sizes are the engine's
//! (`walden_engine::files`).

use std::path::PathBuf;
use std::sync::Arc;

use walden_engine::files::{
    FileChange, FileGrowth as Growth, FileKind, FileLayout, FileSpec as EngineFileSpec, GrowthStep,
    PAGE_SIZE,
};
use walden_engine::types::{SqlType, Value};
use walden_engine::{Database, DatabaseFiles};

use crate::ast::{
    CreateDatabase, DatabaseFileChange, DbccArgument, FileGrowth, FileSize, FileSpec, MaxSize,
    SizeUnit,
};
use crate::exec::scalar::convert;
use crate::exec::session::Run;
use crate::exec::{ColumnInfo, SqlError};

/// The smallest file Walden creates: room for the fixed pages and a few trees.
const MIN_FILE_BYTES: u64 = 512 << 10;

/// Error 40514, which SQL Server gives for a statement its edition does not support.
fn not_supported(what: &str) -> SqlError {
    SqlError::new(40514, format!("'{what}' is not supported in this version of SQL Server."))
}

/// Bytes of a `SIZE`/`MAXSIZE`/`FILEGROWTH` amount.
fn bytes(size: &FileSize) -> u64 {
    let shift = match size.unit {
        SizeUnit::Kilobytes => 10,
        SizeUnit::Megabytes => 20,
        SizeUnit::Gigabytes => 30,
        SizeUnit::Terabytes => 40,
    };
    size.amount.saturating_mul(1 << shift)
}

fn step(growth: &FileGrowth) -> Result<GrowthStep, SqlError> {
    match growth {
        FileGrowth::Size(size) => Ok(GrowthStep::Bytes(bytes(size))),
        FileGrowth::Percent(p) => u32::try_from(*p)
            .map(GrowthStep::Percent)
            .map_err(|_| SqlError::new(5040, "MODIFY FILE failed. Size is greater than MAXSIZE.")),
    }
}

/// The engine's view of one file specification of CREATE DATABASE: defaults for what it
/// leaves out.
fn engine_spec(spec: Option<&FileSpec>, what: &str) -> Result<EngineFileSpec, SqlError> {
    let Some(spec) = spec else { return Ok(EngineFileSpec::default()) };
    let size_bytes = spec.size.as_ref().map(bytes);
    if size_bytes.is_some_and(|s| s < MIN_FILE_BYTES) {
        return Err(SqlError::new(
            1803,
            format!(
                "The CREATE DATABASE statement failed. The {what} file must be at least {} KB.",
                MIN_FILE_BYTES >> 10
            ),
        ));
    }
    let mut growth = Growth::MODEL;
    if let Some(g) = &spec.growth {
        growth.step = step(g)?;
    }
    if let Some(MaxSize::Size(max)) = &spec.max_size {
        let max = bytes(max);
        if max < size_bytes.unwrap_or(walden_engine::files::MODEL_FILE_BYTES) {
            return Err(SqlError::new(
                5040,
                "CREATE DATABASE failed. Size is greater than MAXSIZE.".to_string(),
            ));
        }
        growth.max_bytes = Some(max);
    }
    let name = spec.logical_name.as_ref().map(|n| n.value.clone()).unwrap_or_default();
    Ok(EngineFileSpec { name, size_bytes, growth })
}

impl Run<'_> {
    /// CREATE DATABASE: its files' paths (`None`: the defaults in the data directory) and
    /// their names, sizes and growth.
    pub(crate) fn database_files(
        &self,
        c: &CreateDatabase,
    ) -> Result<(Option<DatabaseFiles>, FileLayout), SqlError> {
        if c.files.len() > 1 {
            return Err(not_supported("more than one data file"));
        }
        if c.log_files.len() > 1 {
            return Err(not_supported("more than one log file"));
        }
        let layout = FileLayout {
            data: engine_spec(c.files.first(), "primary")?,
            log: engine_spec(c.log_files.first(), "log")?,
        };
        let files = match (
            c.files.first().and_then(|f| f.filename.clone()),
            c.log_files.first().and_then(|f| f.filename.clone()),
        ) {
            (None, None) => None,
            (data, log) => {
                let dir = self.s.instance.dir().to_path_buf();
                let data =
                    data.map_or_else(|| dir.join(format!("{}.mdf", c.name.value)), PathBuf::from);
                let log = log
                    .map_or_else(|| dir.join(format!("{}_log.ldf", c.name.value)), PathBuf::from);
                Some(DatabaseFiles { data, log })
            }
        };
        Ok((files, layout))
    }

    /// `ALTER DATABASE name MODIFY FILE (...)`; `ADD FILE` and `REMOVE FILE` are refused.
    pub(crate) fn alter_database_file(
        &mut self,
        database: &str,
        change: &DatabaseFileChange,
    ) -> Result<(), SqlError> {
        let spec = match change {
            DatabaseFileChange::Modify(spec) => spec,
            DatabaseFileChange::Add { log: false, .. } => return Err(not_supported("ADD FILE")),
            DatabaseFileChange::Add { log: true, .. } => return Err(not_supported("ADD LOG FILE")),
            DatabaseFileChange::Remove(_) => return Err(not_supported("REMOVE FILE")),
        };
        if spec.filename.is_some() {
            return Err(not_supported("MODIFY FILE ... FILENAME"));
        }
        let Some(name) = &spec.logical_name else {
            return Err(SqlError::new(
                5038,
                "MODIFY FILE failed. The NAME of the file to modify must be given.",
            ));
        };
        let change = FileChange {
            size_bytes: spec.size.as_ref().map(bytes),
            max_bytes: spec.max_size.as_ref().map(|m| match m {
                MaxSize::Unlimited => None,
                MaxSize::Size(s) => Some(bytes(s)),
            }),
            step: spec.growth.as_ref().map(step).transpose()?,
        };
        self.s
            .instance
            .modify_file(database, &name.value, change)
            .map_err(|e| self.s.engine_error(e))
    }

    /// `DBCC SHRINKFILE (file_name | file_id [, target_size_mb])`: cuts the log's unused
    /// tail, down to the target if given.
    pub(crate) fn dbcc_shrinkfile(&mut self, args: &[DbccArgument]) -> Result<(), SqlError> {
        let (file, target) = match args {
            [file] => (file, None),
            [file, target] => (file, Some(target)),
            _ => return Err(crate::exec::procedure::dbcc::incorrect()),
        };
        let db = Arc::clone(&self.s.db);
        let name = match file {
            DbccArgument::Name(n) if n.schema.is_none() => n.name.value.clone(),
            DbccArgument::Name(_) => return Err(crate::exec::procedure::dbcc::incorrect()),
            DbccArgument::Value(e) => match self.value(e)? {
                Value::Str(s) | Value::NStr(s) => s,
                v => match convert(v, SqlType::BigInt, None)? {
                    Value::BigInt(id) => id.to_string(),
                    _ => return Err(crate::exec::procedure::dbcc::incorrect()),
                },
            },
        };
        let kind = db.file_by_name(&name).ok_or_else(|| {
            SqlError::new(
                8985,
                format!(
                    "Could not locate file '{name}' for database '{}' in sys.database_files. \
                     The file either does not exist, or was dropped.",
                    db.name()
                ),
            )
        })?;
        let target_bytes = match target {
            None => None,
            Some(DbccArgument::Value(e)) => match convert(self.value(e)?, SqlType::BigInt, None)? {
                Value::BigInt(mb) if mb >= 0 => Some(u64::try_from(mb).unwrap_or(0) << 20),
                _ => return Err(crate::exec::procedure::dbcc::incorrect()),
            },
            Some(DbccArgument::Name(_)) => return Err(crate::exec::procedure::dbcc::incorrect()),
        };
        db.shrink_file(kind, target_bytes).map_err(|e| self.s.engine_error(e))?;
        self.shrink_results(&db, &[kind]);
        Ok(())
    }

    /// `DBCC SHRINKDATABASE (database | id | 0 [, target_percent])`: shrinks the log as far as
    /// it goes (the percentage of free space to leave is accepted and not kept); reports both
    /// files, as SQL Server does.
    pub(crate) fn dbcc_shrinkdatabase(&mut self, args: &[DbccArgument]) -> Result<(), SqlError> {
        let db = match args {
            [db] | [db, _] => self.dbcc_database(db)?,
            _ => return Err(crate::exec::procedure::dbcc::incorrect()),
        };
        for kind in [FileKind::Data, FileKind::Log] {
            db.shrink_file(kind, None).map_err(|e| self.s.engine_error(e))?;
        }
        self.shrink_results(&db, &[FileKind::Data, FileKind::Log]);
        Ok(())
    }

    /// The result set SQL Server's shrink commands return: one row per file, sizes in pages.
    fn shrink_results(&mut self, db: &Database, kinds: &[FileKind]) {
        let column = |name: &str| ColumnInfo {
            name: name.into(),
            ty: SqlType::Int,
            nullable: false,
            collation: None,
            declared: None,
        };
        let columns = [
            column("DbId"),
            column("FileId"),
            column("CurrentSize"),
            column("MinimumSize"),
            column("UsedPages"),
            column("EstimatedPages"),
        ];
        self.out.result_set(&columns);
        for &kind in kinds {
            let pages = |b: u64| {
                Value::Int(i32::try_from(b.div_ceil(PAGE_SIZE as u64)).unwrap_or(i32::MAX))
            };
            let size = db.file_bytes(kind);
            let used = db.file_used_bytes(kind);
            self.out.row(&[
                Value::Int(i32::try_from(db.id()).unwrap_or(i32::MAX)),
                Value::Int(i32::from(kind.file_id())),
                pages(size),
                pages(used),
                pages(used),
                pages(used),
            ]);
        }
        self.out.result_end(kinds.len() as u64);
    }
}
