//! One database: its data file, buffer pool, trees and log, its checkpoints and its recovery.
//!
//! The protocol is written as a numbered recipe in `docs/recovery.md`; the comments here cite
//! its step numbers (R1...) and rules (W1...).
//!
//! # Fixed pages of the data file
//!
//! | page | what |
//! |---|---|
//! | 0 | file header (`walden_storage::file`) |
//! | 1 | allocator record (`walden_storage::btree`) |
//! | 2, 3 | checkpoint pointer, written alternately, never through the buffer pool |
//! | 8 | root of the object catalog, the first tree a new database creates |
//!
//! # Locks
//!
//! * `gate` (RwLock, the redo point): every tree operation that logs holds it shared from its
//!   first log record until its pages are marked dirty; a checkpoint takes it exclusively only
//!   to move the redo point (rule W3). Lock order: tree latch, gate, page latches.
//!
//! The transactions that have logged something and not ended, with their first LSN, and the
//! last commit are the log's to know (`walden_log::manager`, rule 8): they change with the
//! appends that already hold its lock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use walden_io::{FileLock, Vfs};
use walden_log::policy::DatabaseDurability;
use walden_log::{LogConfig, LogManager, LogStats};
use walden_storage::btree::TreeSpace;
use walden_storage::buffer::{BufferPool, NoWal, PoolConfig, WalFlush};
use walden_storage::{DataFile, Lsn, PageId};

use crate::catalog::Catalog;
use crate::error::{EngineError, OfflineCause};
use crate::events::EventLevel;
use crate::files::{FileLayout, MODEL_FILE_BYTES};

use checkpoint::{read_pointer, Pointer};

mod checkpoint;
mod logging;
mod recover;
mod undo;

pub(crate) use logging::{DbLogger, LogMode, RowKind};
pub(crate) use undo::{unreadable_undo, PoppedUndo, RowUndo, UndoLog, UndoRef};

/// The root page of the object catalog in every database.
pub const CATALOG_ROOT: PageId = walden_storage::btree::FIRST_ALLOCATABLE;

/// How a database keeps its log (SQL Server's recovery models).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryModel {
    /// The log is reused once a checkpoint no longer needs it.
    Simple,
    /// The log is kept until it is backed up.
    Full,
}

impl RecoveryModel {
    /// The name `sys.databases.recovery_model_desc` shows.
    pub fn name(self) -> &'static str {
        match self {
            RecoveryModel::Simple => "SIMPLE",
            RecoveryModel::Full => "FULL",
        }
    }
}

/// How a database is set up.
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    /// The buffer pool.
    pub pool: PoolConfig,
    /// The log.
    pub log: LogConfig,
    /// A checkpoint runs by itself once this much log was written since the last one's redo
    /// point (0: only on request). The default, 512 MiB, is about where PostgreSQL's default
    /// `max_wal_size` starts one: every page's first change after a checkpoint is logged
    /// whole (W2), so at 64 MiB a TPC-C load checkpointed every few seconds and logged two
    /// thirds more per transaction.
    pub checkpoint_log_bytes: u64,
    /// Where state changes are reported (the server's log).
    pub events: crate::events::EventLog,
    /// The files' names, sizes and growth: the instance's defaults (SQL Server's `model`),
    /// replaced per database by what CREATE DATABASE said and master keeps.
    pub files: FileLayout,
}

impl DatabaseConfig {
    /// The data file's size at creation, in pages.
    fn initial_data_pages(&self) -> u32 {
        let bytes = self.files.data.size_bytes.unwrap_or(MODEL_FILE_BYTES);
        u32::try_from(bytes.div_ceil(walden_storage::PAGE_SIZE as u64)).unwrap_or(u32::MAX)
    }

    /// The log configuration with this database's growth policy and, for a log created with
    /// a SIZE, segments cut to it ([`crate::files::log_segments`]); the segment settings
    /// only matter to a new file.
    fn new_log_config(&self) -> LogConfig {
        let mut log = self.log.clone();
        log.growth = self.files.log.growth;
        if let Some(bytes) = self.files.log.size_bytes {
            (log.segment_size, log.initial_segments) =
                crate::files::log_segments(bytes, self.log.segment_size);
        }
        log
    }
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            // The pool asks the data file for the pages it needs and no more: the file's
            // FILEGROWTH decides the step, so that MAXSIZE is reached exactly.
            pool: PoolConfig { grow_pages: 1, ..PoolConfig::default() },
            log: LogConfig::default(),
            checkpoint_log_bytes: 512 << 20,
            events: crate::events::EventLog::default(),
            files: FileLayout::default(),
        }
    }
}

/// Where a database's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseFiles {
    /// The data file (`.mdf`).
    pub data: PathBuf,
    /// The log file (`.ldf`).
    pub log: PathBuf,
}

/// What recovery did when a database was opened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Log records read.
    pub records_scanned: u64,
    /// Page changes replayed.
    pub pages_redone: u64,
    /// Transactions rolled back because their commit record was not in the log.
    pub transactions_undone: u64,
    /// Prepared transactions committed because the coordinator had recorded their commit.
    pub in_doubt_committed: u64,
    /// Row changes those transactions had made and recovery undid.
    pub rows_undone: u64,
    /// The LSN of the last commit recovered (0 if none is known).
    pub last_commit_lsn: Lsn,
    /// Its commit time, microseconds since the Unix epoch.
    pub last_commit_unix_micros: u64,
    /// The end of the log found.
    pub log_end_lsn: Lsn,
    /// How long recovery took.
    pub elapsed: Duration,
}

/// Where the last checkpoint left the log (`sys.dm_db_log_stats`); all 0 in tempdb, which
/// has no log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CheckpointLsns {
    /// The checkpoint record's LSN.
    pub checkpoint_lsn: Lsn,
    /// Every change logged at or before this LSN was on disk when the checkpoint ended.
    pub redo_point: Lsn,
    /// Where recovery would start reading the log.
    pub scan_start: Lsn,
}

/// Whether a database can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseState {
    /// In use.
    Online,
    /// Taken offline by an I/O failure; a restart recovers it.
    Offline(String),
}

/// Takes the exclusive lock of each file; a file another process holds fails the open with
/// its name and the holder's pid.
fn lock_files(vfs: &dyn Vfs, paths: &[&PathBuf]) -> Result<Vec<FileLock>, EngineError> {
    paths
        .iter()
        .map(|p| vfs.lock_exclusive(p).map_err(|e| EngineError::Io(e.to_string())))
        .collect()
}

/// The write-ahead rule, for the buffer pool: harden the log up to a page's LSN.
#[derive(Debug)]
struct LogWal(Arc<LogManager>);

impl WalFlush for LogWal {
    fn flush_to(&self, lsn: Lsn) -> Result<(), String> {
        self.0.flush_to(lsn).map_err(|e| e.to_string())
    }
}

/// An open database.
#[derive(Debug)]
pub struct Database {
    name: String,
    id: u32,
    files: DatabaseFiles,
    /// Where its transactions' undo logs spill (`database/undo.rs`): the log file's folder.
    undo_spill_dir: Arc<Path>,
    space: TreeSpace,
    /// `None` for tempdb, which logs nothing: it is recreated at every start, and rollback
    /// works from the undo kept in each transaction's memory.
    log: Option<Arc<LogManager>>,
    /// The redo point of the last checkpoint (rule W3).
    gate: RwLock<Lsn>,
    next_txn: AtomicU64,
    /// Transactions counted by [`Database::count_transaction`].
    transactions: AtomicU64,
    /// The last checkpoint's pointer; held for a whole checkpoint, so that checkpoints take
    /// turns.
    checkpoint_lock: Mutex<Pointer>,
    state: Mutex<DatabaseState>,
    /// Set once `state` goes offline, so the common check takes no lock.
    offline: std::sync::atomic::AtomicBool,
    /// What took it offline, once it is.
    offline_cause: Mutex<OfflineCause>,
    /// `ALTER DATABASE ... SET READ_ONLY`: every change is refused (3906).
    read_only: std::sync::atomic::AtomicBool,
    /// Its statistics objects and modification counters (`crate::statistics`).
    pub(crate) statistics: crate::statistics::StatisticsState,
    /// Exclusive locks on its files, held while it is open (released on drop).
    file_locks: Vec<FileLock>,
    config: DatabaseConfig,
    recovery_model: Mutex<RecoveryModel>,
    /// The DELAYED_DURABILITY setting as its `code()`: every commit reads it, so it is an
    /// atomic rather than a mutex.
    delayed_durability: AtomicU8,
    recovery: RecoveryReport,
    /// The decoded catalog (see [`crate::catalog`]).
    pub(crate) catalog: RwLock<Catalog>,
    /// How many times an existing object's catalog entry was replaced or removed (ALTER,
    /// CREATE/DROP INDEX, TRUNCATE, DROP, a rollback reloading the catalog) since the
    /// database opened. While it is 0 every table definition read from the catalog is still
    /// current, so the first lock on a table need not look the definition up again.
    pub(crate) replaced_objects: AtomicU64,
    /// Bumped after every change to the catalog's objects (create, alter, drop, a rollback
    /// reloading it; not the system updates of identity marks and sequence caches), never
    /// before: whoever reads it before resolving names and finds it
    /// unchanged later knows that what it resolved is still what the names mean (the
    /// session's plan cache, `docs/query-processing.md`).
    pub(crate) schema_version: AtomicU64,
    /// Table id -> (last identity value handed out, persisted high-water mark).
    pub(crate) identity: Mutex<HashMap<u32, (i64, i64)>>,
    /// Heap table id -> the next row locator.
    pub(crate) locators: Mutex<HashMap<u32, u64>>,
    /// Sequence id -> its cache.
    pub(crate) sequences: Mutex<HashMap<u32, crate::objects::SequenceCache>>,
    /// The data file's first never-used page when the background grow-ahead last looked
    /// (`Database::grow_data_ahead`): how fast the file is filling.
    pub(crate) grow_ahead_seen: std::sync::atomic::AtomicU32,
}

impl Database {
    /// Creates a database's files, formats them and takes a first checkpoint.
    pub fn create(
        vfs: Arc<dyn Vfs>,
        name: &str,
        id: u32,
        files: DatabaseFiles,
        config: DatabaseConfig,
    ) -> Result<Database, EngineError> {
        for path in [&files.data, &files.log] {
            if vfs.exists(path) {
                return Err(EngineError::FileExists(path.clone()));
            }
            create_parent_dir(&*vfs, path)?;
        }
        let data = DataFile::create(&*vfs, &files.data, id, config.initial_data_pages())?;
        data.set_growth(config.files.data.growth);
        let (log, _) = LogManager::open(Arc::clone(&vfs), &files.log, config.new_log_config())?;
        let log = Arc::new(log);
        let locks = lock_files(&*vfs, &[&files.data, &files.log])?;
        let mut db = Database::assemble(name, id, files, data, Some(log), config)?;
        db.file_locks = locks;
        db.format()?;
        db.checkpoint()?;
        Ok(db)
    }

    /// Creates tempdb: like [`Database::create`], on files that are removed first, and with
    /// no log at all.
    pub fn create_temp(
        vfs: Arc<dyn Vfs>,
        id: u32,
        files: DatabaseFiles,
        config: DatabaseConfig,
    ) -> Result<Database, EngineError> {
        for path in [&files.data, &files.log] {
            if vfs.exists(path) {
                vfs.remove(path).map_err(|e| EngineError::Io(e.to_string()))?;
            }
        }
        create_parent_dir(&*vfs, &files.data)?;
        let data = DataFile::create(&*vfs, &files.data, id, config.initial_data_pages())?;
        data.set_growth(config.files.data.growth);
        let locks = lock_files(&*vfs, &[&files.data])?;
        let mut db = Database::assemble("tempdb", id, files, data, None, config)?;
        db.file_locks = locks;
        db.format()?;
        Ok(db)
    }

    /// Formats a new database's pages: the allocator, then the catalog tree at its fixed root.
    fn format(&self) -> Result<(), EngineError> {
        {
            let mut logger = self.logger(0, LogMode::Structure);
            self.space.format(&mut logger)?;
            let root = self.space.create_tree(&mut logger, 0, 0)?;
            if root != CATALOG_ROOT {
                return Err(EngineError::Internal(format!("catalog root at {root}")));
            }
        }
        self.reload_catalog()
    }

    /// Opens an existing database and recovers it (recipe steps R1-R7). `resolver` says
    /// whether the coordinator recorded the commit of a global transaction id (for
    /// transactions found prepared).
    pub fn open(
        vfs: Arc<dyn Vfs>,
        name: &str,
        id: u32,
        files: DatabaseFiles,
        config: DatabaseConfig,
        resolver: &dyn Fn(u64) -> bool,
    ) -> Result<Database, EngineError> {
        let started = Instant::now();
        // Before anything writes to them (R1 may cut the log's torn tail): the files are this
        // instance's alone while it has them open.
        let locks = lock_files(&*vfs, &[&files.data, &files.log])?;
        // R1: the log finds its end, truncating a torn tail.
        let (log, opened) = LogManager::open(Arc::clone(&vfs), &files.log, config.new_log_config())
            .map_err(|e| EngineError::Log(format!("{}: {e}", files.log.display())))?;
        if opened.created {
            return Err(EngineError::Io(format!("log file {} is missing", files.log.display())));
        }
        let data = DataFile::open(&*vfs, &files.data)?;
        data.set_growth(config.files.data.growth);
        // R2: the newest valid checkpoint pointer says where to start.
        let pointer = read_pointer(&data)?;
        let partial_tail = data.partial_tail();
        let mut db = Database::assemble(name, id, files, data, Some(Arc::new(log)), config)?;
        db.file_locks = locks;
        if partial_tail > 0 {
            db.config.events.emit(
                EventLevel::Warn,
                &format!(
                    "database {name}: {} ended {partial_tail} bytes into a page, the remains of \
                     a growth a crash or a full disk interrupted; cut back to whole pages",
                    db.files.data.display()
                ),
            );
        }
        *db.checkpoint_lock.lock().unwrap_or_else(PoisonError::into_inner) = pointer;
        *db.gate.write().unwrap_or_else(PoisonError::into_inner) = pointer.body.redo_point;
        let mut report = db.recover(&pointer, resolver)?;
        report.log_end_lsn = opened.end_lsn;
        report.elapsed = started.elapsed();
        db.recovery = report;
        db.reload_catalog()?;
        Ok(db)
    }

    fn assemble(
        name: &str,
        id: u32,
        files: DatabaseFiles,
        data: DataFile,
        log: Option<Arc<LogManager>>,
        config: DatabaseConfig,
    ) -> Result<Database, EngineError> {
        let wal: Arc<dyn WalFlush> = match &log {
            Some(log) => Arc::new(LogWal(Arc::clone(log))),
            None => Arc::new(NoWal),
        };
        let pool = BufferPool::new(Arc::new(data), wal, config.pool.clone())?;
        let undo_spill_dir = Arc::from(
            files
                .log
                .parent()
                .filter(|dir| !dir.as_os_str().is_empty())
                .map_or_else(std::env::temp_dir, Path::to_path_buf),
        );
        Ok(Database {
            name: name.to_string(),
            id,
            files,
            undo_spill_dir,
            space: TreeSpace::new(pool),
            log,
            gate: RwLock::new(0),
            next_txn: AtomicU64::new(1),
            transactions: AtomicU64::new(0),
            checkpoint_lock: Mutex::new(Pointer::default()),
            state: Mutex::new(DatabaseState::Online),
            offline: std::sync::atomic::AtomicBool::new(false),
            offline_cause: Mutex::new(OfflineCause::Other),
            read_only: std::sync::atomic::AtomicBool::new(false),
            statistics: crate::statistics::StatisticsState::default(),
            file_locks: Vec::new(),
            config,
            recovery_model: Mutex::new(RecoveryModel::Simple),
            delayed_durability: AtomicU8::new(DatabaseDurability::Disabled.code()),
            recovery: RecoveryReport::default(),
            catalog: RwLock::new(Catalog::default()),
            identity: Mutex::new(HashMap::new()),
            locators: Mutex::new(HashMap::new()),
            grow_ahead_seen: std::sync::atomic::AtomicU32::new(0),
            replaced_objects: AtomicU64::new(0),
            schema_version: AtomicU64::new(0),
            sequences: Mutex::new(HashMap::new()),
        })
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The database id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Its files.
    /// An empty undo log for a transaction here, spilling next to the log file.
    pub(crate) fn undo_log(&self) -> UndoLog {
        let mut log = UndoLog::reused();
        log.spill_to(&self.undo_spill_dir);
        log
    }

    pub fn files(&self) -> &DatabaseFiles {
        &self.files
    }

    /// Its trees.
    pub fn space(&self) -> &TreeSpace {
        &self.space
    }

    /// Whether this is tempdb (no log).
    pub fn is_temp(&self) -> bool {
        self.log.is_none()
    }

    /// The log manager (`None` for tempdb).
    pub fn log(&self) -> Option<&Arc<LogManager>> {
        self.log.as_ref()
    }

    /// The log's counters (default counters for tempdb).
    pub fn log_stats(&self) -> LogStats {
        self.log.as_ref().map(|l| l.stats()).unwrap_or_default()
    }

    /// What recovery did when the database was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// The configuration it was opened with.
    pub fn config(&self) -> &DatabaseConfig {
        &self.config
    }

    /// Its recovery model.
    pub fn recovery_model(&self) -> RecoveryModel {
        *self.recovery_model.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets its recovery model (the caller persists it in master).
    pub fn set_recovery_model(&self, model: RecoveryModel) {
        *self.recovery_model.lock().unwrap_or_else(PoisonError::into_inner) = model;
    }

    /// Whether it is `READ_ONLY`.
    pub fn is_read_only(&self) -> bool {
        self.read_only.load(Ordering::Acquire)
    }

    /// `SET READ_ONLY` (true) or `READ_WRITE`. The instance persists it in master.
    pub fn set_read_only(&self, read_only: bool) {
        self.read_only.store(read_only, Ordering::Release);
    }

    /// Its DELAYED_DURABILITY setting.
    pub fn delayed_durability(&self) -> DatabaseDurability {
        // Only `set_delayed_durability` stores, always a valid code.
        DatabaseDurability::from_code(self.delayed_durability.load(Ordering::Relaxed))
            .unwrap_or(DatabaseDurability::Disabled)
    }

    /// Sets DELAYED_DURABILITY (the caller persists it in master).
    pub fn set_delayed_durability(&self, setting: DatabaseDurability) {
        self.delayed_durability.store(setting.code(), Ordering::Relaxed);
    }

    /// Online, or offline with the reason. The first call that finds a failure of the log or
    /// the data file records it, and reports it to the server log.
    pub fn state(&self) -> DatabaseState {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if *state == DatabaseState::Online {
            let failure = self
                .log
                .as_ref()
                .and_then(|l| l.failure().map(|e| (e.to_string(), OfflineCause::Log)))
                .or_else(|| self.space.pool().failure().map(|r| (r, OfflineCause::DataFile)));
            if let Some((reason, cause)) = failure {
                self.go_offline(&mut state, reason, cause);
            }
        }
        state.clone()
    }

    /// Records the move to offline and says so in the server log, once.
    fn go_offline(&self, state: &mut DatabaseState, reason: String, cause: OfflineCause) {
        let what = match cause {
            OfflineCause::Log => "its log failed",
            OfflineCause::DataFile => "its data file failed",
            OfflineCause::Other => "a change failed",
        };
        self.config.events.emit(
            EventLevel::Error,
            &format!(
                "database {} is OFFLINE: {what}: {reason}; every request to it fails until the \
                 instance restarts",
                self.name
            ),
        );
        *state = DatabaseState::Offline(reason);
        *self.offline_cause.lock().unwrap_or_else(PoisonError::into_inner) = cause;
        self.offline.store(true, Ordering::Release);
    }

    /// Fails with error 9001 (823 for a data file) if the database was taken offline.
    pub fn check_online(&self) -> Result<(), EngineError> {
        // Fast path: nothing has failed. A failure the flag has not seen yet is caught by the
        // next log append or page write, which fail on their own.
        if !self.offline.load(Ordering::Acquire) && self.space.pool().failure().is_none() {
            return Ok(());
        }
        match self.state() {
            DatabaseState::Online => Ok(()),
            DatabaseState::Offline(reason) => Err(EngineError::DatabaseOffline {
                database: self.name.clone(),
                reason,
                cause: *self.offline_cause.lock().unwrap_or_else(PoisonError::into_inner),
            }),
        }
    }

    /// Takes the database offline after a failure the layers below did not see (if they did,
    /// their failure is the cause recorded).
    pub fn take_offline(&self, reason: String) {
        if self.state() != DatabaseState::Online {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if *state == DatabaseState::Online {
            self.go_offline(&mut state, reason, OfflineCause::Other);
        }
    }

    /// A new transaction id.
    pub fn next_txn_id(&self) -> u64 {
        self.next_txn.fetch_add(1, Ordering::Relaxed)
    }

    /// The transactions open in this database's log, oldest first (none in tempdb, which
    /// has no log): each one's local id, where its log starts, and its lock owner.
    pub fn open_transactions(&self) -> Vec<walden_log::OpenTransaction> {
        self.log.as_ref().map_or_else(Vec::new, |log| log.open_transactions())
    }

    /// Checks the tree of the database's catalog (as `DBCC CHECKDB` does with the system
    /// tables): its invariants and its pages' checksums.
    pub fn check_catalog(&self) -> Result<(), EngineError> {
        self.space.tree(CATALOG_ROOT).check()?;
        Ok(())
    }

    /// Counts a transaction that used this database, for `Transactions/sec`. One relaxed
    /// atomic add: every transaction pays it, so no lock and no table lookup.
    pub fn count_transaction(&self) {
        self.transactions.fetch_add(1, Ordering::Relaxed);
    }

    /// The transactions counted since the database opened.
    pub fn transactions(&self) -> u64 {
        self.transactions.load(Ordering::Relaxed)
    }

    /// A clean shutdown: harden the log, checkpoint, stop the pool's writer, close the log.
    pub fn close(&self) -> Result<(), EngineError> {
        let result =
            if self.check_online().is_ok() { self.checkpoint().map(|_| ()) } else { Ok(()) };
        self.space.pool().shutdown();
        if let Some(log) = &self.log {
            log.close()?;
        }
        result
    }
}

/// Creates the directory a database file goes in, if the path names one.
fn create_parent_dir(vfs: &dyn Vfs, path: &Path) -> Result<(), EngineError> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => vfs.create_dir_all(dir).map_err(|e| EngineError::Io(e.to_string())),
        None => Ok(()),
    }
}
