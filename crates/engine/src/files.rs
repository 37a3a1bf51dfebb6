//! How big a database's two files are and how they grow: SQL Server's `SIZE`, `FILEGROWTH` and
//! `MAXSIZE` of `CREATE DATABASE ... ON (...) LOG ON (...)`, their defaults (SQL Server's
//! `model`: 8 MB of data and 8 MB of log, growing by 64 MB without a cap), and their record
//! in master.
//!
//! The sizes are the files' own (a file's length is its size); the logical names and the
//! growth policies are not in the files, so master keeps them with the database's entry
//! (`docs/format/catalog.md`) and every open hands them back to the data file and the log.

pub use walden_io::{FileGrowth, GrowthStep};
use walden_log::Lsn;
use walden_storage::PageId;
pub use walden_storage::PAGE_SIZE;

use crate::catalog::Object;
use crate::database::Database;
use crate::error::EngineError;

/// Log room every change must leave besides its transaction's rollback: more than the largest
/// record one change writes (a split's page images).
const ROOM_PER_CHANGE: u64 = 256 << 10;

/// The data file grows ahead of need once fewer free pages than this remain, or a quarter of
/// its next growth or of its size, whichever is less, if that is more. Relative to the size,
/// so that a new, empty database is not grown by a whole step at once.
const SPARE_DATA_PAGES: u32 = 128;

/// SQL Server's `model` size of each file.
pub const MODEL_FILE_BYTES: u64 = 8 << 20;

/// One file of a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpec {
    /// The logical name (`NAME =`); empty means the default: the database's name for the data
    /// file, the name with `_log` for the log.
    pub name: String,
    /// The size to create it with (`SIZE =`); `None` is the default (8 MB for the data file,
    /// the log configuration's segments for the log).
    pub size_bytes: Option<u64>,
    /// `FILEGROWTH` and `MAXSIZE`.
    pub growth: FileGrowth,
}

impl Default for FileSpec {
    fn default() -> Self {
        FileSpec { name: String::new(), size_bytes: None, growth: FileGrowth::MODEL }
    }
}

/// Both files of a database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLayout {
    /// The data file (file id 1, `ROWS`).
    pub data: FileSpec,
    /// The log (file id 2, `LOG`).
    pub log: FileSpec,
}

/// Which of a database's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// The data file, file id 1.
    Data,
    /// The log file, file id 2.
    Log,
}

impl FileKind {
    /// SQL Server's file id.
    pub fn file_id(self) -> u8 {
        match self {
            FileKind::Data => 1,
            FileKind::Log => 2,
        }
    }
}

/// What `ALTER DATABASE ... MODIFY FILE` changes; `None` leaves a setting as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileChange {
    /// `SIZE =`: grow the file now to this size.
    pub size_bytes: Option<u64>,
    /// `MAXSIZE =`: `Some(None)` is `UNLIMITED`.
    pub max_bytes: Option<Option<u64>>,
    /// `FILEGROWTH =`.
    pub step: Option<GrowthStep>,
}

impl FileLayout {
    /// Small files for tests and small embedded uses: a 512 KB data file, the log
    /// configuration's segments, each growing by `step` bytes, no maximum.
    pub fn small(step: u64) -> FileLayout {
        let growth = FileGrowth { step: GrowthStep::Bytes(step), max_bytes: None };
        FileLayout {
            data: FileSpec { size_bytes: Some(512 << 10), growth, ..FileSpec::default() },
            log: FileSpec { growth, ..FileSpec::default() },
        }
    }

    /// The logical names of the data file and the log of database `db` with id `id`, the
    /// defaults filled in (the system databases' are SQL Server's).
    pub fn names(&self, db: &str, id: u32) -> (String, String) {
        let (data, log) = match id {
            crate::instance::MASTER_ID => ("master".to_string(), "mastlog".to_string()),
            crate::instance::TEMPDB_ID => ("tempdev".to_string(), "templog".to_string()),
            crate::instance::MODEL_ID => ("modeldev".to_string(), "modellog".to_string()),
            crate::instance::MSDB_ID => ("MSDBData".to_string(), "MSDBLog".to_string()),
            _ => (db.to_string(), format!("{db}_log")),
        };
        let pick = |given: &str, default: String| {
            if given.is_empty() {
                default
            } else {
                given.to_string()
            }
        };
        (pick(&self.data.name, data), pick(&self.log.name, log))
    }

    /// Appends the names and growth policies (not the sizes: the files hold those) to a master
    /// record.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        for f in [&self.data, &self.log] {
            out.extend_from_slice(&(f.name.len() as u32).to_le_bytes());
            out.extend_from_slice(f.name.as_bytes());
            let (kind, value) = match f.growth.step {
                GrowthStep::Bytes(b) => (0u8, b),
                GrowthStep::Percent(p) => (1, u64::from(p)),
            };
            out.push(kind);
            out.extend_from_slice(&value.to_le_bytes());
            out.extend_from_slice(&f.growth.max_bytes.unwrap_or(u64::MAX).to_le_bytes());
        }
    }

    /// Reads what [`FileLayout::encode`] wrote; an empty `b` (a record from before the file
    /// settings) is the defaults.
    pub(crate) fn decode(b: &[u8]) -> Result<FileLayout, EngineError> {
        if b.is_empty() {
            return Ok(FileLayout::default());
        }
        let bad =
            || EngineError::Corrupt("a malformed file layout in a sys.databases entry".into());
        let mut at = 0;
        let mut take = |n: usize| -> Result<&[u8], EngineError> {
            let s = b.get(at..at + n).ok_or_else(bad)?;
            at += n;
            Ok(s)
        };
        let mut specs = Vec::new();
        for _ in 0..2 {
            let n = u32::from_le_bytes(take(4)?.try_into().map_err(|_| bad())?) as usize;
            let name = String::from_utf8(take(n)?.to_vec()).map_err(|_| bad())?;
            let kind = take(1)?[0];
            let value = u64::from_le_bytes(take(8)?.try_into().map_err(|_| bad())?);
            let max = u64::from_le_bytes(take(8)?.try_into().map_err(|_| bad())?);
            let step = match kind {
                0 => GrowthStep::Bytes(value),
                1 => GrowthStep::Percent(u32::try_from(value).map_err(|_| bad())?),
                _ => return Err(bad()),
            };
            let max_bytes = (max != u64::MAX).then_some(max);
            specs.push(FileSpec { name, size_bytes: None, growth: FileGrowth { step, max_bytes } });
        }
        let log = specs.pop().ok_or_else(bad)?;
        let data = specs.pop().ok_or_else(bad)?;
        Ok(FileLayout { data, log })
    }
}

/// The log's segment size and count for a log created `bytes` long: SQL Server cuts a new log
/// of up to 64 MB into 4 virtual log files, and Walden's segments are its virtual log files,
/// so a segment is a quarter of the size (in whole 64 KB, between 64 KB and `max_segment`).
pub fn log_segments(bytes: u64, max_segment: u64) -> (u64, u32) {
    const UNIT: u64 = 64 << 10;
    let quarter = (bytes / 4) / UNIT * UNIT;
    let segment = quarter.clamp(UNIT, max_segment.max(UNIT));
    let count = bytes.div_ceil(segment).max(1);
    (segment, u32::try_from(count).unwrap_or(u32::MAX))
}

impl Database {
    /// The logical names of the data file and the log.
    pub fn file_names(&self) -> (String, String) {
        self.config().files.names(self.name(), self.id())
    }

    /// A file's growth policy in force.
    pub fn file_growth(&self, kind: FileKind) -> FileGrowth {
        match (kind, self.log()) {
            (FileKind::Log, Some(log)) => log.growth(),
            (FileKind::Log, None) => self.config().files.log.growth,
            (FileKind::Data, _) => self.space().pool().file().growth(),
        }
    }

    /// A file's size in bytes now (0 for tempdb's log, which it does not have).
    pub fn file_bytes(&self, kind: FileKind) -> u64 {
        match (kind, self.log()) {
            (FileKind::Log, Some(log)) => log.file_bytes(),
            (FileKind::Log, None) => 0,
            (FileKind::Data, _) => {
                u64::from(self.space().pool().file().page_count()) * PAGE_SIZE as u64
            }
        }
    }

    /// Bytes of a file in use: the data file's pages handed out and not free, the log from
    /// its truncation point (or its oldest segment) to its end.
    pub fn file_used_bytes(&self, kind: FileKind) -> u64 {
        match (kind, self.log()) {
            (FileKind::Log, Some(log)) => {
                log.end_lsn().saturating_sub(log.truncation_lsn().max(log.start_lsn()))
            }
            (FileKind::Log, None) => 0,
            (FileKind::Data, _) => self
                .space()
                .allocation()
                .map_or(0, |(next, free)| u64::from(next.saturating_sub(free)) * PAGE_SIZE as u64),
        }
    }

    /// The names and growth policies as master records them.
    pub fn file_layout(&self) -> FileLayout {
        let files = &self.config().files;
        let spec = |f: &FileSpec, kind| FileSpec {
            name: f.name.clone(),
            size_bytes: None,
            growth: self.file_growth(kind),
        };
        FileLayout { data: spec(&files.data, FileKind::Data), log: spec(&files.log, FileKind::Log) }
    }

    /// Which file a logical name (or a file id, as text) names, if any.
    pub fn file_by_name(&self, name: &str) -> Option<FileKind> {
        let (data, log) = self.file_names();
        if name.eq_ignore_ascii_case(&data) || name == "1" {
            Some(FileKind::Data)
        } else if name.eq_ignore_ascii_case(&log) || name == "2" {
            Some(FileKind::Log)
        } else {
            None
        }
    }

    /// The end of the log now, where a transaction's first change will start (0 in tempdb).
    pub(crate) fn log_end_hint(&self) -> Lsn {
        self.log().map_or(0, |log| log.end_hint())
    }

    /// Turns new work away with error 9002 when the log cannot take it: `extra` bytes for
    /// the work, plus room to roll back everything its transaction logged since `since` (the
    /// log's end before its first change), plus a margin for one change's records.
    pub(crate) fn check_log_room(&self, since: Lsn, extra: u64) -> Result<(), EngineError> {
        let Some(log) = self.log() else { return Ok(()) };
        let rollback = log.end_hint().saturating_sub(since);
        let reserve = ROOM_PER_CHANGE.saturating_add(rollback).saturating_add(extra);
        log.check_room(reserve).map_err(|e| match EngineError::from(e) {
            EngineError::LogFull { .. } => EngineError::LogFull {
                database: self.name().to_string(),
                reason: self.log_reuse_wait().to_string(),
            },
            other => other,
        })
    }

    /// Names the database and the object of a 1105 that a change to the tree at `root` met.
    pub(crate) fn name_full_error(&self, e: EngineError, root: Option<PageId>) -> EngineError {
        let EngineError::FilegroupFull { .. } = e else { return e };
        let object = root
            .and_then(|root| {
                let catalog =
                    self.catalog.read().unwrap_or_else(std::sync::PoisonError::into_inner);
                catalog.objects().iter().find_map(|o| match &**o {
                    Object::Table(t) => t.indexes.iter().find(|i| i.root == root).map(|i| {
                        if i.name.is_empty() {
                            format!("{}.{}", t.schema, t.name)
                        } else {
                            format!("{}.{}'.'{}", t.schema, t.name, i.name)
                        }
                    }),
                    _ => None,
                })
            })
            .unwrap_or_else(|| "sys.sysallocunits".to_string());
        EngineError::FilegroupFull { database: self.name().to_string(), object }
    }

    /// Grows the data file ahead of need when its free pages run low, off the path of any
    /// transaction (the instance's background thread calls it). Returns whether it grew.
    pub fn grow_data_ahead(&self) -> Result<bool, EngineError> {
        let file = self.space().pool().file();
        let (next_unused, _) = self.space().allocation()?;
        let count = file.page_count();
        let growth = file.growth();
        let current = u64::from(count) * PAGE_SIZE as u64;
        let step_pages = growth
            .target(current, current + 1, PAGE_SIZE as u64)
            .map_or(0, |t| (t - current) / PAGE_SIZE as u64);
        let quarter = (step_pages / 4).min(u64::from(count) / 4);
        // A load filling the file faster than that per poll (a bulk copy fills tens of MB a
        // second) would outrun this thread, and its own inserts would then wait for each
        // growth (the zero-fill and the sync) on demand: while pages are being taken that
        // fast, twice what went since the last look is kept spare too. The first look after
        // an open counts nothing (the mark starts at 0 and the file is not new).
        let seen = self.grow_ahead_seen.swap(next_unused, std::sync::atomic::Ordering::Relaxed);
        let recent = if seen == 0 { 0 } else { next_unused.saturating_sub(seen) };
        let spare = SPARE_DATA_PAGES
            .max(u32::try_from(quarter).unwrap_or(u32::MAX))
            .max(recent.saturating_mul(2));
        // Out of disk is no failure here: the allocation that needs the room reports 1105.
        match file.grow_ahead(next_unused, spare) {
            Ok(grew) => Ok(grew),
            Err(walden_storage::FileError::Io { op: "grow", .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// `ALTER DATABASE ... MODIFY FILE`: applies the new growth policy and grows the file to
    /// a larger SIZE now. The caller records the policy in master.
    pub fn modify_file(&self, kind: FileKind, change: FileChange) -> Result<(), EngineError> {
        let mut growth = self.file_growth(kind);
        if let Some(step) = change.step {
            growth.step = step;
        }
        if let Some(max) = change.max_bytes {
            growth.max_bytes = max;
        }
        let current = self.file_bytes(kind);
        if let Some(size) = change.size_bytes {
            if size <= current {
                return Err(EngineError::FileRefused {
                    number: 5039,
                    message: "MODIFY FILE failed. Specified size is less than or equal to current \
                              size."
                        .into(),
                });
            }
        }
        let too_small = growth.max_bytes.is_some_and(|m| m < change.size_bytes.unwrap_or(current));
        if too_small {
            return Err(EngineError::FileRefused {
                number: 5040,
                message: "MODIFY FILE failed. Size is greater than MAXSIZE.".into(),
            });
        }
        match (kind, self.log()) {
            (FileKind::Data, _) => {
                let file = self.space().pool().file();
                file.set_growth(growth);
                if let Some(size) = change.size_bytes {
                    let pages = u32::try_from(size.div_ceil(PAGE_SIZE as u64))
                        .map_err(|_| EngineError::Invalid("SIZE is too large.".into()))?;
                    let add = pages.saturating_sub(file.page_count());
                    if add > 0 {
                        file.grow(add).map_err(|e| self.name_full_error(e.into(), None))?;
                    }
                }
            }
            (FileKind::Log, Some(log)) => {
                log.set_growth(growth);
                if let Some(size) = change.size_bytes {
                    log.grow_to(size)?;
                }
            }
            (FileKind::Log, None) => {}
        }
        Ok(())
    }

    /// `DBCC SHRINKFILE`: cuts the log's unused tail, down to `target_bytes` at most (`None`:
    /// as far as it goes); the log keeps everything after its truncation point and the
    /// segment holding its end. The data file is left as it is: the pages past its highest
    /// one handed out could be cut, but an allocation between reading that mark and the cut
    /// would lose its page, and nothing orders the two short of stopping every writer.
    /// Returns the file's size in bytes.
    pub fn shrink_file(
        &self,
        kind: FileKind,
        target_bytes: Option<u64>,
    ) -> Result<u64, EngineError> {
        match (kind, self.log()) {
            (FileKind::Log, Some(log)) => Ok(log.shrink(target_bytes.unwrap_or(0))?),
            _ => Ok(self.file_bytes(kind)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_round_trips_and_an_old_record_reads_as_the_defaults() {
        let layout = FileLayout {
            data: FileSpec {
                name: "d_data".into(),
                size_bytes: None,
                growth: FileGrowth { step: GrowthStep::Percent(10), max_bytes: Some(100 << 20) },
            },
            log: FileSpec {
                name: String::new(),
                size_bytes: None,
                growth: FileGrowth { step: GrowthStep::Bytes(0), max_bytes: None },
            },
        };
        let mut b = Vec::new();
        layout.encode(&mut b);
        assert_eq!(FileLayout::decode(&b).unwrap(), layout);
        assert_eq!(FileLayout::decode(&[]).unwrap(), FileLayout::default());
        assert!(FileLayout::decode(&b[..b.len() - 1]).is_err());
        assert_eq!(layout.names("d", 7), ("d_data".to_string(), "d_log".to_string()));
    }

    #[test]
    fn a_log_is_cut_in_quarters() {
        assert_eq!(log_segments(8 << 20, 16 << 20), (2 << 20, 4));
        assert_eq!(log_segments(1 << 30, 16 << 20), (16 << 20, 64));
        assert_eq!(log_segments(100 << 10, 16 << 20), (64 << 10, 2));
    }
}
