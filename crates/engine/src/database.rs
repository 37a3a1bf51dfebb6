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

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

use walden_io::{FileLock, Vfs};
use walden_log::policy::DatabaseDurability;
use walden_log::{
    Durability, LogConfig, LogError, LogManager, LogStats, RecordKind, MAX_RECORD_LEN,
};
use walden_storage::btree::{Change, ChangeKind, TreeError, TreeLog, TreeSpace};
use walden_storage::buffer::{BufferError, BufferPool, NoWal, PoolConfig, WalFlush};
use walden_storage::redo::PageOp;
use walden_storage::{DataFile, FileError, Lsn, Page, PageError, PageId, PageType};

use crate::catalog::Catalog;
use crate::error::{EngineError, OfflineCause};
use crate::events::EventLevel;
use crate::files::{FileLayout, MODEL_FILE_BYTES};
use crate::recovery::{redo_action, txn_action, PageOnDisk, RedoAction, TxnAction};
use crate::wal::{self, CheckpointBody, EngineRecord, Undo};

/// The root page of the object catalog in every database.
pub const CATALOG_ROOT: PageId = walden_storage::btree::FIRST_ALLOCATABLE;

const POINTER_PAGES: [PageId; 2] = [2, 3];

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

/// The checkpoint pointer: where recovery starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Pointer {
    seq: u64,
    checkpoint_lsn: Lsn,
    body: CheckpointBodyFields,
    last_commit_lsn: Lsn,
    last_commit_micros: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct CheckpointBodyFields {
    redo_point: Lsn,
    scan_start: Lsn,
    next_txn: u64,
}

impl Pointer {
    const LEN: usize = 56;

    fn encode(&self) -> [u8; Pointer::LEN] {
        let mut b = [0; Pointer::LEN];
        for (i, v) in [
            self.seq,
            self.checkpoint_lsn,
            self.body.redo_point,
            self.body.scan_start,
            self.body.next_txn,
            self.last_commit_lsn,
            self.last_commit_micros,
        ]
        .into_iter()
        .enumerate()
        {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn decode(b: &[u8]) -> Option<Pointer> {
        if b.len() != Pointer::LEN {
            return None;
        }
        let w = |i: usize| {
            let mut a = [0; 8];
            a.copy_from_slice(&b[i * 8..i * 8 + 8]);
            u64::from_le_bytes(a)
        };
        Some(Pointer {
            seq: w(0),
            checkpoint_lsn: w(1),
            body: CheckpointBodyFields { redo_point: w(2), scan_start: w(3), next_txn: w(4) },
            last_commit_lsn: w(5),
            last_commit_micros: w(6),
        })
    }
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
        Ok(Database {
            name: name.to_string(),
            id,
            files,
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

    /// A logger for tree operations of transaction `txn` (0: the system).
    pub(crate) fn logger<'d>(&'d self, txn: u64, mode: LogMode<'d>) -> DbLogger<'d> {
        self.owned_logger(txn, 0, mode)
    }

    /// A logger for tree operations of transaction `txn` of lock owner `owner`: the log keeps
    /// the owner with the open transaction, which names its session for `DBCC OPENTRAN`.
    pub(crate) fn owned_logger<'d>(
        &'d self,
        txn: u64,
        owner: u64,
        mode: LogMode<'d>,
    ) -> DbLogger<'d> {
        DbLogger { db: self, txn, owner, mode, gate: None, row: None }
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

    /// Appends a commit record for a transaction that logged something; returns the receipt
    /// (the caller releases locks afterwards, rule W5).
    pub(crate) fn commit_txn(
        &self,
        txn: u64,
        durability: Durability,
    ) -> Result<walden_log::CommitReceipt, EngineError> {
        let Some(log) = &self.log else {
            // tempdb logs nothing: nothing to harden, and no last commit to record.
            return Ok(walden_log::CommitReceipt { lsn: 0, hardened: true, commit_time_us: 0 });
        };
        Ok(log.append_commit(txn, durability)?)
    }

    /// Commits system transaction `txn` fully durably without waiting: the log starts its
    /// flush at once; [`Database::harden_commit`] waits for it. In tempdb, which logs nothing,
    /// there is nothing to harden.
    pub(crate) fn commit_txn_unwaited(
        &self,
        txn: u64,
    ) -> Result<walden_log::CommitReceipt, EngineError> {
        let Some(log) = &self.log else {
            return Ok(walden_log::CommitReceipt { lsn: 0, hardened: true, commit_time_us: 0 });
        };
        Ok(log.append_commit_unwaited(txn)?)
    }

    /// Commits transaction `txn` fully durably without waiting, and without starting a flush:
    /// [`Database::harden_commit`] flushes and waits for it, once for many such commits
    /// (`deferred_commit.rs`). In tempdb, which logs nothing, there is nothing to harden.
    pub(crate) fn commit_txn_deferred(
        &self,
        txn: u64,
    ) -> Result<walden_log::CommitReceipt, EngineError> {
        let Some(log) = &self.log else {
            return Ok(walden_log::CommitReceipt { lsn: 0, hardened: true, commit_time_us: 0 });
        };
        Ok(log.append_commit_deferred(txn)?)
    }

    /// Returns once the commit at `lsn` is hardened, flushing for it if no flush has yet.
    pub(crate) fn harden_commit(&self, lsn: Lsn) -> Result<(), EngineError> {
        match &self.log {
            Some(log) => Ok(log.harden_commit(lsn)?),
            None => Ok(()),
        }
    }

    /// Forgets a transaction with no change left to commit: one that logged nothing, or
    /// whose changes were all undone within it.
    pub(crate) fn forget_txn(&self, txn: u64) {
        if let Some(log) = &self.log {
            log.forget_txn(txn);
        }
    }

    /// Appends the abort record of a transaction whose changes were all undone.
    pub(crate) fn abort_txn(&self, txn: u64) -> Result<(), EngineError> {
        match &self.log {
            Some(log) => log.append_abort(txn).map(|_| ()).map_err(EngineError::from),
            None => Ok(()),
        }
    }

    /// Hardens the whole log (`sys.sp_flush_log`).
    pub fn flush_log(&self) -> Result<Lsn, EngineError> {
        match &self.log {
            Some(log) => Ok(log.flush_log()?),
            None => Ok(0),
        }
    }

    /// Takes a checkpoint (recipe C1-C6); returns the redo point.
    pub fn checkpoint(&self) -> Result<Lsn, EngineError> {
        self.check_online()?;
        let Some(log) = &self.log else {
            self.space.pool().flush_all()?;
            return Ok(0);
        };
        let mut pointer = self.checkpoint_lock.lock().unwrap_or_else(PoisonError::into_inner);
        // C1: move the redo point; every operation that logged before it has marked its pages
        // dirty, because it held the gate until then (W3).
        let redo_point = {
            let mut gate = self.gate.write().unwrap_or_else(PoisonError::into_inner);
            *gate = log.end_lsn();
            *gate
        };
        // C2: write every dirty page (the pool hardens the log first: W1) and sync the file.
        self.space.pool().flush_all()?;
        // C3: the oldest log still needed by an open transaction.
        let scan_start = log.oldest_open_txn().map_or(redo_point, |first| first.min(redo_point));
        let body = CheckpointBody {
            redo_point,
            scan_start,
            next_txn: self.next_txn.load(Ordering::Relaxed),
        };
        // C4: log the checkpoint and harden everything before it.
        let checkpoint_lsn = log.append_payload(0, &wal::checkpoint(&body))?;
        log.flush_to(checkpoint_lsn)?;
        let (last_commit_lsn, last_commit_micros) = {
            let last = log.last_commit();
            if last.0 == 0 {
                (pointer.last_commit_lsn, pointer.last_commit_micros)
            } else {
                last
            }
        };
        // C5: the pointer, in the older of the two slots, then sync.
        let next = Pointer {
            seq: pointer.seq + 1,
            checkpoint_lsn,
            body: CheckpointBodyFields { redo_point, scan_start, next_txn: body.next_txn },
            last_commit_lsn,
            last_commit_micros,
        };
        write_pointer(self.space.pool().file(), &next)?;
        *pointer = next;
        // C6: in SIMPLE recovery, the log before the scan start may be reused.
        if self.recovery_model() == RecoveryModel::Simple {
            log.set_truncation_lsn(scan_start);
        }
        Ok(redo_point)
    }

    /// Whether enough log was written since the last checkpoint to take another.
    pub fn checkpoint_due(&self) -> bool {
        let Some(log) = &self.log else { return false };
        let every = self.config.checkpoint_log_bytes;
        let redo_point = *self.gate.read().unwrap_or_else(PoisonError::into_inner);
        let end = log.end_lsn();
        // Under SIMPLE recovery a log that may not grow without bound is checkpointed once 70%
        // of what it may hold is used, as SQL Server does, so that it truncates before new
        // work meets error 9002 (under FULL only a log backup would truncate it).
        let (truncation, limit) = (log.truncation_lsn(), log.room_limit());
        let nearly_full = limit != u64::MAX
            && self.recovery_model() == RecoveryModel::Simple
            && end.saturating_sub(truncation) >= limit.saturating_sub(truncation) / 10 * 7
            && end > redo_point;
        (every > 0 && end.saturating_sub(redo_point) >= every) || nearly_full
    }

    /// Why the log cannot be truncated further, as `sys.databases.log_reuse_wait_desc`.
    pub fn log_reuse_wait(&self) -> &'static str {
        if self.log.is_none() {
            return "NOTHING";
        }
        if self.recovery_model() == RecoveryModel::Full {
            return "LOG_BACKUP";
        }
        let pointer = *self.checkpoint_lock.lock().unwrap_or_else(PoisonError::into_inner);
        if pointer.body.scan_start < pointer.body.redo_point {
            return "ACTIVE_TRANSACTION";
        }
        if self.log.as_ref().is_some_and(|log| log.oldest_open_txn().is_some()) {
            "ACTIVE_TRANSACTION"
        } else if self.checkpoint_due() {
            "CHECKPOINT"
        } else {
            "NOTHING"
        }
    }

    /// The LSNs the last checkpoint recorded.
    pub fn last_checkpoint(&self) -> CheckpointLsns {
        let pointer = *self.checkpoint_lock.lock().unwrap_or_else(PoisonError::into_inner);
        CheckpointLsns {
            checkpoint_lsn: pointer.checkpoint_lsn,
            redo_point: pointer.body.redo_point,
            scan_start: pointer.body.scan_start,
        }
    }

    /// The last commit known: (LSN, commit time in microseconds since the Unix epoch).
    pub fn last_commit(&self) -> (Lsn, u64) {
        self.log.as_ref().map_or((0, 0), |log| log.last_commit())
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

    /// Recovery: analysis and redo in one forward pass from the scan start, then undo of the
    /// transactions without a commit or abort record (R3-R7).
    fn recover(
        &mut self,
        pointer: &Pointer,
        resolver: &dyn Fn(u64) -> bool,
    ) -> Result<RecoveryReport, EngineError> {
        let Some(log) = self.log.clone() else {
            return Ok(RecoveryReport::default());
        };
        let mut report = RecoveryReport {
            last_commit_lsn: pointer.last_commit_lsn,
            last_commit_unix_micros: pointer.last_commit_micros,
            ..RecoveryReport::default()
        };
        let redo_point = pointer.body.redo_point;
        let mut next_txn = pointer.body.next_txn.max(1);
        // Transaction -> (first LSN seen, undo entries still to undo).
        let mut txns: BTreeMap<u64, LoserState> = BTreeMap::new();
        let mut prev_end = pointer.body.scan_start;
        for record in log.scan(pointer.body.scan_start) {
            let record = record?;
            report.records_scanned += 1;
            if record.txn != 0 {
                next_txn = next_txn.max(record.txn + 1);
            }
            match record.kind {
                RecordKind::Commit => {
                    txns.remove(&record.txn);
                    if let Some(body) = record.commit() {
                        report.last_commit_lsn = record.lsn;
                        report.last_commit_unix_micros = body.commit_time_us;
                    }
                }
                RecordKind::Abort => {
                    txns.remove(&record.txn);
                }
                RecordKind::Begin => {
                    txns.entry(record.txn).or_insert_with(|| LoserState::new(prev_end));
                }
                RecordKind::Payload => {
                    let rec = EngineRecord::decode(&record.body)
                        .map_err(|e| EngineError::Corrupt(format!("at LSN {}: {e}", record.lsn)))?;
                    // R4: redo what the last checkpoint did not already put on disk.
                    if record.lsn > redo_point {
                        for change in rec.changes() {
                            report.pages_redone += u64::from(self.redo(record.lsn, change)?);
                        }
                    }
                    match rec {
                        EngineRecord::Row { root, key, undo, .. } => {
                            let state =
                                txns.entry(record.txn).or_insert_with(|| LoserState::new(prev_end));
                            state.undo.push(RowUndo { lsn: record.lsn, root, key, undo });
                        }
                        EngineRecord::Rows { root, keys, .. } => {
                            let state =
                                txns.entry(record.txn).or_insert_with(|| LoserState::new(prev_end));
                            for key in keys {
                                state.undo.push(RowUndo {
                                    lsn: record.lsn,
                                    root,
                                    key,
                                    undo: Undo::Delete,
                                });
                            }
                        }
                        EngineRecord::Compensation { undo_next, .. } => {
                            if let Some(state) = txns.get_mut(&record.txn) {
                                state.undo.pop_after(undo_next);
                            }
                        }
                        EngineRecord::Prepare { gtid } => {
                            txns.entry(record.txn)
                                .or_insert_with(|| LoserState::new(prev_end))
                                .prepared = Some(gtid);
                        }
                        EngineRecord::Checkpoint(body) => next_txn = next_txn.max(body.next_txn),
                        EngineRecord::Structure { .. } => {}
                    }
                }
            }
            prev_end = record.lsn;
        }
        self.next_txn.store(next_txn, Ordering::Relaxed);
        // R5: undo the losers, newest change first, logging compensation records; R6: abort.
        for (txn, state) in txns {
            log.reopen_txn(txn, state.first);
            let committed = state.prepared.is_some_and(resolver);
            match txn_action(false, false, state.prepared.is_some(), committed) {
                TxnAction::CommitInDoubt => {
                    self.commit_txn(txn, Durability::Full)?;
                    (report.last_commit_lsn, report.last_commit_unix_micros) = self.last_commit();
                    report.in_doubt_committed += 1;
                }
                TxnAction::Undo | TxnAction::UndoInDoubt => {
                    report.transactions_undone += 1;
                    report.rows_undone += state.undo.len() as u64;
                    crate::txn::undo_entries(self, txn, &state.undo, 0)?;
                    self.abort_txn(txn)?;
                }
                TxnAction::Committed | TxnAction::Aborted => {}
            }
        }
        log.set_recovered_commit(report.last_commit_lsn, report.last_commit_unix_micros);
        // R7: harden the aborts and checkpoint, so the next recovery starts here.
        log.flush_log()?;
        self.checkpoint()?;
        Ok(report)
    }

    /// Replays one page change of the record at `lsn` as the redo table says (R4); returns
    /// whether it changed the page.
    fn redo(&self, lsn: Lsn, change: &wal::PageChange<'_>) -> Result<bool, EngineError> {
        let pool = self.space.pool();
        let fetched = match pool.fetch(change.page) {
            Ok(p) => Some(p),
            Err(BufferError::File(
                FileError::Page(PageError::NeverWritten { .. } | PageError::Corrupt { .. })
                | FileError::PageOutOfRange { .. },
            )) => None,
            Err(e) => return Err(e.into()),
        };
        let on_disk = match &fetched {
            None => PageOnDisk::Unreadable,
            Some(p) if p.read().page_lsn() >= lsn => PageOnDisk::Newer,
            Some(_) => PageOnDisk::Older,
        };
        let pinned = match (redo_action(true, on_disk, change.image), fetched) {
            (RedoAction::SkipCheckpointed | RedoAction::SkipNewer, _) => return Ok(false),
            (RedoAction::Apply, Some(p)) => p,
            (RedoAction::Rebuild, _) => pool.fetch_new(change.page, PageType::Free)?,
            (RedoAction::Fail | RedoAction::Apply, _) => {
                return Err(EngineError::Corrupt(format!(
                    "page {} is damaged and the change at LSN {lsn} cannot rebuild it",
                    change.page
                )))
            }
        };
        let mut page = pinned.write();
        for op in change.ops().map_err(|e| EngineError::Corrupt(e.to_string()))? {
            op.apply(&mut page).map_err(|e| {
                EngineError::Corrupt(format!("redo of LSN {lsn} on page {}: {e}", change.page))
            })?;
        }
        page.mark_dirty(lsn);
        Ok(true)
    }

    /// Phase 1 of a commit spanning databases: logs that `txn` is prepared as part of global
    /// transaction `gtid` and hardens the log.
    pub(crate) fn prepare_txn(&self, txn: u64, gtid: u64) -> Result<(), EngineError> {
        if let Some(log) = &self.log {
            let lsn = log.append_payload(txn, &wal::prepare(gtid))?;
            log.flush_to(lsn)?;
        }
        Ok(())
    }
}

/// Creates the directory a database file goes in, if the path names one.
fn create_parent_dir(vfs: &dyn Vfs, path: &Path) -> Result<(), EngineError> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => vfs.create_dir_all(dir).map_err(|e| EngineError::Io(e.to_string())),
        None => Ok(()),
    }
}

/// Reads the newer valid checkpoint pointer.
fn read_pointer(data: &DataFile) -> Result<Pointer, EngineError> {
    let mut best: Option<Pointer> = None;
    for id in POINTER_PAGES {
        let Ok(page) = data.read_page(id) else { continue };
        let Some(p) = page.get(0).ok().and_then(Pointer::decode) else { continue };
        if best.is_none_or(|b| p.seq > b.seq) {
            best = Some(p);
        }
    }
    best.ok_or_else(|| {
        EngineError::Corrupt(format!(
            "{}: neither checkpoint pointer page is valid",
            data.path().display()
        ))
    })
}

/// Writes a checkpoint pointer into the slot its sequence number picks and syncs the file.
/// The other slot keeps the previous pointer, so a torn write loses nothing.
fn write_pointer(data: &DataFile, pointer: &Pointer) -> Result<(), EngineError> {
    let id = POINTER_PAGES[(pointer.seq % 2) as usize];
    let mut page = Page::new(id, PageType::Boot);
    page.push(&pointer.encode())?;
    page.set_page_lsn(pointer.checkpoint_lsn);
    data.write_page(&mut page)?;
    data.sync()?;
    Ok(())
}

/// What analysis knows of a transaction without a commit or abort record.
#[derive(Debug)]
struct LoserState {
    first: Lsn,
    undo: UndoLog,
    prepared: Option<u64>,
}

impl LoserState {
    fn new(first: Lsn) -> LoserState {
        LoserState { first, undo: UndoLog::default(), prepared: None }
    }
}

/// One row change a transaction may have to undo, as the logger hands it over.
#[derive(Debug, Clone)]
pub(crate) struct RowUndo<'k> {
    /// The row record's LSN (0 in tempdb).
    pub lsn: Lsn,
    /// The tree.
    pub root: PageId,
    /// The key.
    pub key: &'k [u8],
    /// The inverse.
    pub undo: Undo,
}

/// One entry of an [`UndoLog`]; its key and old value are `bytes[chunk][start..]` of the
/// log, key first.
#[derive(Debug, Clone, Copy)]
struct UndoHead {
    lsn: Lsn,
    chunk: u32,
    start: u32,
    root: PageId,
    value_len: u32,
    /// Keys are at most `MAX_KEY_LEN` (900) bytes.
    key_len: u16,
    kind: UndoKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UndoKind {
    Delete,
    Insert,
    Restore,
}

/// What an entry of an [`UndoLog`] undoes, borrowed from the log.
#[derive(Debug, Clone, Copy)]
pub(crate) enum UndoRef<'a> {
    /// Undo an insert: delete the key.
    Delete,
    /// Undo a delete: insert the key with this value.
    Insert(&'a [u8]),
    /// Undo an update: put this value back.
    Restore(&'a [u8]),
}

/// The row changes a transaction may have to undo in one database, oldest first. Keys and
/// old values share one byte buffer instead of a vector each, so a transaction inserting a
/// million rows allocates nothing per row and keeps a third of the memory. The entries are
/// kept in chunks of [`UNDO_CHUNK`], and their bytes in chunks of [`UNDO_BYTES_CHUNK`], so
/// that a large transaction's log grows without copying (and faulting in) all of it again at
/// every doubling.
#[derive(Debug, Clone, Default)]
pub(crate) struct UndoLog {
    /// Entry `i` is `chunks[i / UNDO_CHUNK][i % UNDO_CHUNK]`; every chunk but the last is
    /// full.
    chunks: Vec<Vec<UndoHead>>,
    len: usize,
    /// Every entry's key and old value, in entry order; an entry's bytes are in one chunk.
    /// Every chunk but the last holds at least [`UNDO_BYTES_CHUNK`] bytes of room.
    bytes: Vec<Vec<u8>>,
}

/// Bytes of room a full chunk of an [`UndoLog`]'s keys and values has (1 MiB). The first
/// chunk grows by doubling up to this, so a small transaction allocates little.
const UNDO_BYTES_CHUNK: usize = 1 << 20;

/// Entries per chunk of an [`UndoLog`] (128 KiB of them). The first chunk grows by doubling
/// up to this, so a small transaction allocates little.
const UNDO_CHUNK: usize = 4096;

/// Entries an [`UndoLog`] may have room for and still be kept for reuse (see
/// [`UndoLog::recycle`]): a small transaction's log is kept, a big one's memory given back.
const SPARE_UNDO_ENTRIES: usize = 64;
/// Bytes of keys and old values an [`UndoLog`] may have room for and still be kept for reuse.
const SPARE_UNDO_BYTES: usize = 16 << 10;

thread_local! {
    /// An emptied undo log that each thread keeps for the next transaction it starts, so that
    /// a small transaction's undo allocates nothing.
    static SPARE_UNDO: std::cell::Cell<Option<UndoLog>> = const { std::cell::Cell::new(None) };
}

impl UndoLog {
    /// An empty log, on the memory of one that a finished transaction of this thread gave
    /// back, if there is one.
    pub(crate) fn reused() -> UndoLog {
        SPARE_UNDO.try_with(std::cell::Cell::take).ok().flatten().unwrap_or_default()
    }

    /// Empties the log and keeps its memory for this thread's next transaction, unless it
    /// grew past a small transaction's needs.
    pub(crate) fn recycle(mut self) {
        let entries = self.chunks.first().map_or(0, Vec::capacity);
        if self.chunks.len() > 1
            || entries > SPARE_UNDO_ENTRIES
            || self.bytes.len() > 1
            || self.bytes.first().map_or(0, Vec::capacity) > SPARE_UNDO_BYTES
        {
            return;
        }
        // One empty chunk is a valid log: every chunk but the last is full.
        if let Some(chunk) = self.chunks.first_mut() {
            chunk.clear();
        }
        self.len = 0;
        if let Some(bytes) = self.bytes.first_mut() {
            bytes.clear();
        }
        // The thread may be exiting, its spare gone already: then the memory just goes.
        let _ = SPARE_UNDO.try_with(|spare| spare.set(Some(self)));
    }

    /// Appends a row change.
    pub(crate) fn push(&mut self, row: RowUndo<'_>) {
        let (kind, value): (UndoKind, &[u8]) = match &row.undo {
            Undo::Delete => (UndoKind::Delete, &[]),
            Undo::Insert(v) => (UndoKind::Insert, v),
            Undo::Restore(v) => (UndoKind::Restore, v),
        };
        let need = row.key.len() + value.len();
        let full = |b: &Vec<u8>| b.len() + need > b.capacity() && b.capacity() >= UNDO_BYTES_CHUNK;
        if self.bytes.last().is_none_or(full) {
            let capacity = if self.bytes.is_empty() { 0 } else { UNDO_BYTES_CHUNK.max(need) };
            self.bytes.push(Vec::with_capacity(capacity));
        }
        let byte_chunk = self.bytes.len() - 1;
        let Some(bytes) = self.bytes.last_mut() else { return };
        // A chunk holds at most about twice UNDO_BYTES_CHUNK, and a chunk index is below
        // the entry count, which a u32 holds (a transaction's log of 4 billion rows aside).
        let start = bytes.len() as u32;
        bytes.extend_from_slice(row.key);
        bytes.extend_from_slice(value);
        if self.chunks.last().is_none_or(|c| c.len() == UNDO_CHUNK) {
            let capacity = if self.chunks.is_empty() { 0 } else { UNDO_CHUNK };
            self.chunks.push(Vec::with_capacity(capacity));
        }
        let Some(chunk) = self.chunks.last_mut() else { return };
        self.len += 1;
        chunk.push(UndoHead {
            lsn: row.lsn,
            chunk: byte_chunk as u32,
            start,
            root: row.root,
            // A tree refuses keys over MAX_KEY_LEN and values over MAX_VALUE_LEN before it
            // logs, so both fit.
            value_len: value.len() as u32,
            key_len: row.key.len() as u16,
            kind,
        });
    }

    /// Entries in the log.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn head(&self, i: usize) -> &UndoHead {
        &self.chunks[i / UNDO_CHUNK][i % UNDO_CHUNK]
    }

    /// The LSN of entry `i`.
    pub(crate) fn lsn(&self, i: usize) -> Lsn {
        self.head(i).lsn
    }

    /// Entry `i`: its tree, key and inverse.
    pub(crate) fn entry(&self, i: usize) -> (PageId, &[u8], UndoRef<'_>) {
        let h = self.head(i);
        let bytes = &self.bytes[h.chunk as usize];
        let start = h.start as usize;
        let key_end = start + usize::from(h.key_len);
        let key = &bytes[start..key_end];
        let value = &bytes[key_end..key_end + h.value_len as usize];
        let undo = match h.kind {
            UndoKind::Delete => UndoRef::Delete,
            UndoKind::Insert => UndoRef::Insert(value),
            UndoKind::Restore => UndoRef::Restore(value),
        };
        (h.root, key, undo)
    }

    /// Keeps the first `keep` entries.
    pub(crate) fn truncate(&mut self, keep: usize) {
        if keep >= self.len {
            return;
        }
        let (chunk, start) = (self.head(keep).chunk as usize, self.head(keep).start as usize);
        self.bytes.truncate(chunk + 1);
        if let Some(bytes) = self.bytes.last_mut() {
            bytes.truncate(start);
        }
        self.chunks.truncate(keep.div_ceil(UNDO_CHUNK));
        if let Some(last) = self.chunks.last_mut() {
            last.truncate(keep - (keep - 1) / UNDO_CHUNK * UNDO_CHUNK);
        }
        self.len = keep;
    }

    /// Drops entries from the end while their LSN is above `lsn` (what a compensation record
    /// says was undone already).
    pub(crate) fn pop_after(&mut self, lsn: Lsn) {
        let mut keep = self.len;
        while keep > 0 && self.lsn(keep - 1) > lsn {
            keep -= 1;
        }
        self.truncate(keep);
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        self.chunks.clear();
        self.len = 0;
        self.bytes.clear();
    }
}

/// What a [`DbLogger`] logs a row change as.
#[derive(Debug, Clone)]
pub(crate) enum LogMode<'k> {
    /// Only structure changes are expected.
    Structure,
    /// A transaction's row change; its undo follows from the kind and the old value the tree
    /// hands the logger.
    Row { root: PageId, key: &'k [u8], kind: RowKind },
    /// A transaction's run of inserts of new keys into one leaf (`BTree::append_run`): each
    /// undone by deleting its key.
    Rows { root: PageId },
    /// The undo of a row change.
    Compensation { undo_next: Lsn },
}

/// What a row change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowKind {
    /// A new key: undone by deleting it.
    Insert,
    /// A new value for a key: undone by putting the old value back.
    Update,
    /// A key removed: undone by inserting it with its old value.
    Delete,
}

impl RowKind {
    fn undo(self, old_value: Option<&[u8]>) -> Undo {
        let old = || old_value.unwrap_or_default().to_vec();
        match self {
            RowKind::Insert => Undo::Delete,
            RowKind::Update => Undo::Restore(old()),
            RowKind::Delete => Undo::Insert(old()),
        }
    }
}

/// Logs tree changes for one operation (see the module docs for the gate).
#[derive(Debug)]
pub(crate) struct DbLogger<'d> {
    db: &'d Database,
    txn: u64,
    /// The lock owner, or 0 (the log's tag for the open transaction).
    owner: u64,
    mode: LogMode<'d>,
    gate: Option<RwLockReadGuard<'d, Lsn>>,
    /// The row change logged in `LogMode::Row` or `LogMode::Rows`: its LSN (0 in tempdb)
    /// and undo.
    row: Option<(Lsn, Undo)>,
}

thread_local! {
    /// The buffer log records are built in, one per thread and reused by every record the
    /// thread logs, so that logging a row change allocates nothing. Taken out while in use
    /// (a nested use would simply start a new one).
    static RECORD_BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Capacity of [`RECORD_BUF`] kept after use: enough for any row change and most structure
/// changes; the buffer of a larger record (a blob's pages) is dropped rather than kept by
/// every thread that ever logged one.
const RECORD_BUF_KEEP: usize = 64 << 10;

impl<'d> DbLogger<'d> {
    /// Ends the operation: releases the gate so a checkpoint may proceed, and returns the
    /// transaction's undo entry for the row change it logged, if it logged one.
    pub(crate) fn finish(&mut self) -> Option<RowUndo<'d>> {
        self.gate = None;
        let (lsn, undo) = self.row.take()?;
        match self.mode {
            LogMode::Row { root, key, .. } => Some(RowUndo { lsn, root, key, undo }),
            _ => None,
        }
    }
}

impl DbLogger<'_> {
    /// The LSN of the row change logged (0 in tempdb), if one was.
    pub(crate) fn row_lsn(&self) -> Option<Lsn> {
        self.row.as_ref().map(|(lsn, _)| *lsn)
    }
}

impl TreeLog for DbLogger<'_> {
    fn log(&mut self, kind: ChangeKind, changes: &[Change<'_>]) -> Result<Lsn, TreeError> {
        let undo = match (&self.mode, kind, changes.first()) {
            (LogMode::Row { kind: row, .. }, ChangeKind::Row, Some(c)) => {
                Some(row.undo(c.old_value))
            }
            (LogMode::Rows { .. }, ChangeKind::Row, Some(_)) => Some(Undo::Delete),
            _ => None,
        };
        let Some(log) = &self.db.log else {
            // tempdb logs nothing; its rollback uses the undo kept in memory (W8).
            if let Some(u) = undo {
                self.row = Some((0, u));
            }
            return Ok(0);
        };
        if self.gate.is_none() {
            self.gate = Some(self.db.gate.read().unwrap_or_else(PoisonError::into_inner));
        }
        let redo_point = self.gate.as_deref().copied().unwrap_or(0);
        let mut buf = RECORD_BUF.take();
        buf.clear();
        let appended =
            self.build(&mut buf, kind, changes, undo.as_ref(), redo_point).and_then(|()| {
                if buf.len() > MAX_RECORD_LEN {
                    return Err(TreeError::Log(format!("a {}-byte log record", buf.len())));
                }
                log.append_tagged_payload(self.txn, self.owner, &buf)
                    .map_err(|e| TreeError::Log(e.to_string()))
            });
        if buf.capacity() <= RECORD_BUF_KEEP {
            RECORD_BUF.set(buf);
        }
        let lsn = appended?;
        // A structure change (a merge after a delete) must not clear the row change's undo.
        if let Some(u) = undo {
            self.row = Some((lsn, u));
        }
        Ok(lsn)
    }
}

impl DbLogger<'_> {
    /// Builds the record of `changes` into `buf`: a row change with its undo (`undo`), a
    /// compensation or a structure change, as the mode and `kind` say.
    fn build(
        &self,
        buf: &mut Vec<u8>,
        kind: ChangeKind,
        changes: &[Change<'_>],
        undo: Option<&Undo>,
        redo_point: Lsn,
    ) -> Result<(), TreeError> {
        // One allocation for the whole record (none once the thread's buffer has grown): its
        // fixed fields (at most 11 bytes before the key and undo value, 9 per change) and the
        // variable parts known here. Only a change logged as an image instead of its ops can
        // outgrow it.
        let undo_len = match undo {
            Some(Undo::Insert(v) | Undo::Restore(v)) => v.len(),
            _ => 0,
        };
        let key_len = match &self.mode {
            LogMode::Row { key, .. } => key.len(),
            _ => 0,
        };
        let ops_len: usize = changes.iter().map(|c| 9 + c.ops.len()).sum();
        buf.reserve(16 + key_len + undo_len + ops_len);
        match (kind, &self.mode) {
            (ChangeKind::Structure, _) | (ChangeKind::Row, LogMode::Structure) => {
                wal::begin_structure(buf, changes.len());
            }
            (ChangeKind::Row, LogMode::Row { root, key, .. }) => {
                let undo =
                    undo.ok_or_else(|| TreeError::Log("a row change without its page".into()))?;
                wal::begin_row(buf, *root, key, undo);
            }
            (ChangeKind::Row, LogMode::Compensation { undo_next }) => {
                wal::begin_compensation(buf, *undo_next);
            }
            (ChangeKind::Row, LogMode::Rows { root }) => {
                let change = changes
                    .first()
                    .ok_or_else(|| TreeError::Log("a rows change without its page".into()))?;
                wal::begin_rows(buf, *root, change.ops)
                    .map_err(|e| TreeError::Log(e.to_string()))?;
            }
        }
        let mut image = Vec::new();
        for change in changes {
            let is_image = PageOp::decode(change.ops).is_ok_and(|(op, _)| op.is_image());
            // W2: the first change of a page after the redo point carries the whole page.
            if !is_image && change.lsn_before <= redo_point {
                image.clear();
                PageOp::image_of(change.after).encode(&mut image);
                wal::push_change(buf, change.after.page_id(), true, &image);
            } else {
                wal::push_change(buf, change.after.page_id(), is_image, change.ops);
            }
        }
        Ok(())
    }
}

impl From<LogError> for EngineError {
    fn from(e: LogError) -> Self {
        match e {
            // Filled in by `Database::check_log_room`, the one place that meets it.
            LogError::Full => {
                EngineError::LogFull { database: String::new(), reason: String::new() }
            }
            e => EngineError::Log(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: usize) -> (Vec<u8>, Undo) {
        let undo = match i % 3 {
            0 => Undo::Delete,
            1 => Undo::Insert(vec![i as u8; i % 7]),
            _ => Undo::Restore(vec![!(i as u8); i % 5]),
        };
        ((i as u32).to_be_bytes().to_vec(), undo)
    }

    fn check(log: &UndoLog, n: usize) {
        assert_eq!(log.len(), n);
        for i in 0..n {
            let (key, undo) = row(i);
            let (root, k, u) = log.entry(i);
            assert_eq!((root, k, log.lsn(i)), (i as PageId, &key[..], 10 * i as Lsn));
            let back = match u {
                UndoRef::Delete => Undo::Delete,
                UndoRef::Insert(v) => Undo::Insert(v.to_vec()),
                UndoRef::Restore(v) => Undo::Restore(v.to_vec()),
            };
            assert_eq!(back, undo, "entry {i}");
        }
    }

    fn fill(log: &mut UndoLog, from: usize, to: usize) {
        for i in from..to {
            let (key, undo) = row(i);
            log.push(RowUndo { lsn: 10 * i as Lsn, root: i as PageId, key: &key, undo });
        }
    }

    #[test]
    fn undo_log_keeps_entries_across_chunks_and_truncations() {
        let total = 2 * UNDO_CHUNK + 3;
        let mut log = UndoLog::default();
        fill(&mut log, 0, total);
        check(&log, total);
        for keep in [total, 2 * UNDO_CHUNK + 1, 2 * UNDO_CHUNK, UNDO_CHUNK + 1, UNDO_CHUNK, 7, 0] {
            log.truncate(keep);
            check(&log, keep);
            fill(&mut log, keep, total);
            check(&log, total);
        }
        log.pop_after(10 * UNDO_CHUNK as Lsn);
        check(&log, UNDO_CHUNK + 1);
        log.clear();
        check(&log, 0);
        assert!(log.is_empty());
    }

    #[test]
    fn a_recycled_undo_log_is_empty_and_works_and_a_big_one_is_not_kept() {
        let mut log = UndoLog::reused();
        fill(&mut log, 0, 5);
        let bytes = log.bytes.as_ptr();
        log.recycle();
        let mut log = UndoLog::reused();
        assert_eq!(log.bytes.as_ptr(), bytes, "the memory was reused");
        check(&log, 0);
        fill(&mut log, 0, 9);
        check(&log, 9);
        log.truncate(2);
        check(&log, 2);
        log.recycle();
        // A log past a small transaction's size is dropped, not kept for the next one.
        let mut big = UndoLog::reused();
        fill(&mut big, 0, 2 * SPARE_UNDO_ENTRIES);
        big.recycle();
        assert_eq!(UndoLog::reused().bytes.capacity(), 0);
    }
}
