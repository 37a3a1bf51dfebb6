//! The instance: a data directory with `master`, `tempdb` and user databases, one lock manager,
//! a checkpoint thread, and the Rust API's entry point.
//!
//! # master
//!
//! `master` is a database like the others, plus two trees created with it at fixed pages:
//! `sys.databases` (page 9: key the folded name, value the database's id, files and settings)
//! and `sys.dtc_outcomes` (page 10: the global ids of committed transactions that spanned
//! databases, see `docs/recovery.md`). master is opened and recovered first; each user
//! database's recovery then asks its outcome table about prepared transactions.
//!
//! # tempdb
//!
//! Recreated empty at every start, with no log (rule W8).
//!
//! # model and msdb
//!
//! Ordinary logged databases with SQL Server's ids (3 and 4) and file names, registered in
//! master like a user database. They are created when the instance is, and when an instance
//! whose directory predates them opens without them, so every data directory has all four
//! system databases after its first start with this version. A user database that already
//! took one of the two names keeps it (and its id); the system database is then not made.
//!
//! # The data directory lock
//!
//! On a real file system the instance holds an exclusive lock on `walden.lock` in the data
//! directory for its lifetime, so a second process opening the same directory fails with a
//! clear error instead of corrupting it.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use walden_io::{OsFs, Vfs};
use walden_log::policy::DatabaseDurability;
use walden_storage::{FramePool, PageId};

use crate::database::{
    Database, DatabaseConfig, DatabaseFiles, LogMode, RecoveryModel, RowKind, CATALOG_ROOT,
};
use crate::error::EngineError;
use crate::events::EventLevel;
use crate::files::{FileChange, FileLayout};
use crate::lock::LockManager;
use crate::txn::{Coordinator, Isolation, Transaction, TxnServices};

/// The root of master's `sys.databases` tree.
const DATABASES_ROOT: PageId = CATALOG_ROOT + 1;
/// The root of master's `sys.dtc_outcomes` tree.
const OUTCOMES_ROOT: PageId = CATALOG_ROOT + 2;

/// master's database id.
pub const MASTER_ID: u32 = 1;
/// tempdb's database id.
pub const TEMPDB_ID: u32 = 2;
/// model's database id.
pub const MODEL_ID: u32 = 3;
/// msdb's database id.
pub const MSDB_ID: u32 = 4;
/// The first user database id.
pub const FIRST_USER_DB_ID: u32 = 5;

/// Whether `id` is one of SQL Server's four system databases (master, tempdb, model, msdb),
/// which cannot be dropped, set offline or made read-only.
pub fn is_system_database(id: u32) -> bool {
    id < FIRST_USER_DB_ID
}

/// How an instance is set up.
#[derive(Debug, Clone)]
pub struct InstanceConfig {
    /// Settings for every database (buffer pool, log, checkpoint interval).
    pub database: DatabaseConfig,
    /// How often the checkpoint thread looks for databases that need one (0: never).
    pub checkpoint_poll_ms: u64,
}

impl Default for InstanceConfig {
    fn default() -> Self {
        InstanceConfig { database: DatabaseConfig::default(), checkpoint_poll_ms: 1000 }
    }
}

/// A database's entry in master.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseEntry {
    /// Its id.
    pub id: u32,
    /// Its name as created.
    pub name: String,
    /// Its files.
    pub files: DatabaseFiles,
    /// DELAYED_DURABILITY.
    pub delayed_durability: DatabaseDurability,
    /// The recovery model.
    pub recovery_model: RecoveryModel,
    /// The files' logical names and growth policies (their sizes are the files' own).
    pub layout: FileLayout,
    /// `SET OFFLINE`: not opened until `SET ONLINE`, across restarts.
    pub offline: bool,
    /// `SET READ_ONLY`.
    pub read_only: bool,
}

/// Bit 0 of the flags byte: the data file's path is relative to the data directory.
const DATA_IN_DIR: u8 = 1;
/// Bit 1: the log file's path is relative to the data directory.
const LOG_IN_DIR: u8 = 2;
/// Bit 2: the database was set OFFLINE.
const OFFLINE: u8 = 4;
/// Bit 3: the database is READ_ONLY.
const READ_ONLY: u8 = 8;

impl DatabaseEntry {
    /// The record (docs/format/catalog.md, "master only"). Files inside the data directory
    /// `dir` are stored relative to it, so that a copy of a stopped instance's directory opens
    /// its own copies of them, not the original's; others keep the path they were given.
    fn encode(&self, dir: &Path) -> Vec<u8> {
        let mut flags = 0;
        if self.offline {
            flags |= OFFLINE;
        }
        if self.read_only {
            flags |= READ_ONLY;
        }
        let mut stored = |path: &Path, bit: u8| -> String {
            match path.strip_prefix(dir) {
                // Only a path that stays below `dir` (no `..`) moves with a copy of it.
                Ok(inside)
                    if !inside.as_os_str().is_empty()
                        && inside
                            .components()
                            .all(|c| matches!(c, std::path::Component::Normal(_))) =>
                {
                    flags |= bit;
                    inside.to_string_lossy().into_owned()
                }
                _ => path.to_string_lossy().into_owned(),
            }
        };
        let data = stored(&self.files.data, DATA_IN_DIR);
        let log = stored(&self.files.log, LOG_IN_DIR);
        let mut out = Vec::new();
        out.extend_from_slice(&self.id.to_le_bytes());
        for s in [self.name.as_str(), &data, &log] {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out.push(self.delayed_durability.code());
        out.push(match self.recovery_model {
            RecoveryModel::Simple => 3,
            RecoveryModel::Full => 1,
        });
        out.push(flags);
        self.layout.encode(&mut out);
        out
    }

    /// Decodes a record written by `encode`, or by a version before the flags byte (whose
    /// paths are all taken as stored: absolute, or relative to the server's working
    /// directory, as that version used them).
    fn decode(b: &[u8], dir: &Path) -> Result<DatabaseEntry, EngineError> {
        let bad = || EngineError::Corrupt("a malformed sys.databases entry".into());
        let mut at = 0;
        let mut take = |n: usize| -> Result<&[u8], EngineError> {
            let s = b.get(at..at + n).ok_or_else(bad)?;
            at += n;
            Ok(s)
        };
        let word = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let id = word(take(4)?);
        let mut strings = Vec::new();
        for _ in 0..3 {
            let n = word(take(4)?) as usize;
            strings.push(String::from_utf8(take(n)?.to_vec()).map_err(|_| bad())?);
        }
        let durability = DatabaseDurability::from_code(take(1)?[0]).ok_or_else(bad)?;
        let recovery_model =
            if take(1)?[0] == 1 { RecoveryModel::Full } else { RecoveryModel::Simple };
        let flags = take(1).map_or(0, |f| f[0]);
        let layout = FileLayout::decode(b.get(at..).unwrap_or_default())?;
        let resolve = |stored: String, bit: u8| {
            if flags & bit != 0 {
                dir.join(stored)
            } else {
                PathBuf::from(stored)
            }
        };
        let log = resolve(strings.pop().ok_or_else(bad)?, LOG_IN_DIR);
        let data = resolve(strings.pop().ok_or_else(bad)?, DATA_IN_DIR);
        let name = strings.pop().ok_or_else(bad)?;
        Ok(DatabaseEntry {
            id,
            name,
            files: DatabaseFiles { data, log },
            delayed_durability: durability,
            recovery_model,
            layout,
            offline: flags & OFFLINE != 0,
            read_only: flags & READ_ONLY != 0,
        })
    }
}

#[derive(Debug)]
struct MasterCoordinator {
    master: Arc<Database>,
    next_gtid: AtomicU64,
}

impl Coordinator for MasterCoordinator {
    fn new_gtid(&self) -> u64 {
        self.next_gtid.fetch_add(1, Ordering::Relaxed)
    }

    fn record_commit(&self, gtid: u64) -> Result<(), EngineError> {
        let db = &self.master;
        let txn = db.next_txn_id();
        let key = gtid.to_be_bytes();
        let mut logger =
            db.logger(txn, LogMode::Row { root: OUTCOMES_ROOT, key: &key, kind: RowKind::Insert });
        let result = db.space().tree(OUTCOMES_ROOT).insert(&mut logger, &key, &[]);
        logger.finish();
        result?;
        db.commit_txn(txn, walden_log::Durability::Full)?;
        Ok(())
    }
}

/// An open instance.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    vfs: Arc<dyn Vfs>,
    config: InstanceConfig,
    /// The buffer pool's frames, shared by every database (`config.database.pool` names it).
    frames: Arc<FramePool>,
    /// The lock manager and master's coordinator, which every transaction holds.
    services: Arc<TxnServices>,
    master: Arc<Database>,
    tempdb: Arc<Database>,
    /// Folded name -> database (master and tempdb included).
    databases: RwLock<HashMap<String, Arc<Database>>>,
    /// Folded name -> a database registered in master that could not be opened. A name is in
    /// at most one of the two maps; both are changed under `ddl` only (and at open).
    unavailable: RwLock<HashMap<String, UnavailableDatabase>>,
    /// Serializes CREATE / DROP / ALTER DATABASE.
    ddl: Mutex<()>,
    next_owner: AtomicU64,
    checkpointer: Mutex<Option<JoinHandle<()>>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    closed: AtomicBool,
    _dir_lock: Option<File>,
}

fn fold(name: &str) -> String {
    name.to_lowercase()
}

impl Instance {
    /// Opens (creating if needed) the instance in `dir` on the real file system.
    pub fn open(dir: &Path, config: InstanceConfig) -> Result<Arc<Instance>, EngineError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| EngineError::Io(format!("{}: {e}", dir.display())))?;
        let lock_path = dir.join("walden.lock");
        let file = File::create(&lock_path)
            .map_err(|e| EngineError::Io(format!("{}: {e}", lock_path.display())))?;
        if file.try_lock().is_err() {
            return Err(EngineError::Locked(dir.to_path_buf()));
        }
        Instance::open_with(Arc::new(OsFs), dir, config, Some(file))
    }

    /// Opens the instance in `dir` on any file system (tests use the crash simulator). No
    /// directory lock is taken unless `dir_lock` is given. Every database caches its pages in
    /// `config.database.pool.frame_pool`, or if that is `None` in one frame pool of
    /// `config.database.pool.frames` frames made for the instance.
    pub fn open_with(
        vfs: Arc<dyn Vfs>,
        dir: &Path,
        config: InstanceConfig,
        dir_lock: Option<File>,
    ) -> Result<Arc<Instance>, EngineError> {
        vfs.create_dir_all(dir).map_err(|e| EngineError::Io(e.to_string()))?;
        // One buffer pool for the instance: every database opened with this config caches
        // its pages in these frames, so memory follows `max_server_memory_mb`, not the
        // number of databases.
        let mut config = config;
        let frames = match &config.database.pool.frame_pool {
            Some(frames) => Arc::clone(frames),
            None => FramePool::new(config.database.pool.frames)?,
        };
        config.database.pool.frame_pool = Some(Arc::clone(&frames));
        let master_files =
            DatabaseFiles { data: dir.join("master.mdf"), log: dir.join("mastlog.ldf") };
        let master = if vfs.exists(&master_files.data) {
            Database::open(
                Arc::clone(&vfs),
                "master",
                MASTER_ID,
                master_files,
                config.database.clone(),
                &|_| false,
            )?
        } else {
            let db = Database::create(
                Arc::clone(&vfs),
                "master",
                MASTER_ID,
                master_files,
                config.database.clone(),
            )?;
            {
                let mut logger = db.logger(0, LogMode::Structure);
                for want in [DATABASES_ROOT, OUTCOMES_ROOT] {
                    let root = db.space().create_tree(&mut logger, 0, 0)?;
                    if root != want {
                        return Err(EngineError::Internal(format!("master tree at page {root}")));
                    }
                }
            }
            db.flush_log()?;
            db.checkpoint()?;
            db
        };
        let master = Arc::new(master);
        let events = config.database.events.clone();
        announce_online(&master);
        let (outcomes, max_gtid) = read_outcomes(&master)?;
        let mut databases = HashMap::new();
        let mut unavailable = HashMap::new();
        databases.insert("master".to_string(), Arc::clone(&master));
        // Entries whose stored form is not what `encode` writes now (records from before the
        // path flags that name files inside this directory by their full path): rewritten
        // once the instance is up, so that copies of this directory made from now on are
        // independent of it.
        let mut outdated = Vec::new();
        for entry in master.space().tree(DATABASES_ROOT).scan() {
            let (_, value) = entry?;
            let e = DatabaseEntry::decode(&value, dir)?;
            if e.encode(dir) != value {
                outdated.push(e.clone());
            }
            // One database that cannot be opened must not keep master, tempdb and the others
            // down: it is left RECOVERY_PENDING (or SUSPECT) with the reason, and ALTER
            // DATABASE ... SET ONLINE tries again.
            if e.offline {
                // SET OFFLINE holds across restarts: the files stay closed until SET ONLINE.
                unavailable.insert(fold(&e.name), UnavailableDatabase::set_offline(e));
                continue;
            }
            match open_entry(&vfs, &e, &config, &outcomes) {
                Ok(db) => {
                    announce_online(&db);
                    databases.insert(fold(&e.name), db);
                }
                Err(error) => {
                    let u = UnavailableDatabase::new(e, &error);
                    u.announce(&events);
                    unavailable.insert(fold(&u.entry.name), u);
                }
            }
        }
        let tempdb = Arc::new(Database::create_temp(
            Arc::clone(&vfs),
            TEMPDB_ID,
            DatabaseFiles { data: dir.join("tempdb.mdf"), log: dir.join("templog.ldf") },
            config.database.clone(),
        )?);
        databases.insert("tempdb".to_string(), Arc::clone(&tempdb));
        let coordinator = Arc::new(MasterCoordinator {
            master: Arc::clone(&master),
            next_gtid: AtomicU64::new(max_gtid + 1),
        });
        let instance = Arc::new(Instance {
            dir: dir.to_path_buf(),
            vfs,
            config,
            frames,
            master,
            tempdb,
            databases: RwLock::new(databases),
            unavailable: RwLock::new(unavailable),
            ddl: Mutex::new(()),
            services: TxnServices::new(Some(coordinator)),
            next_owner: AtomicU64::new(1),
            checkpointer: Mutex::new(None),
            stop: Arc::new((Mutex::new(false), Condvar::new())),
            closed: AtomicBool::new(false),
            _dir_lock: dir_lock,
        });
        instance.add_missing_system_databases();
        for e in outdated {
            // Best effort: the old record reads as well as the new one.
            if let Err(error) = instance.master_put(&e, false) {
                events.emit(
                    EventLevel::Warn,
                    &format!("database {}: could not rewrite its master entry: {error}", e.name),
                );
            }
        }
        instance.start_checkpointer();
        Ok(instance)
    }

    fn start_checkpointer(self: &Arc<Self>) {
        let poll = self.config.checkpoint_poll_ms;
        if poll == 0 {
            return;
        }
        let weak = Arc::downgrade(self);
        let stop = Arc::clone(&self.stop);
        let handle =
            std::thread::Builder::new().name("walden-checkpoint".into()).spawn(move || loop {
                {
                    let (flag, cv) = &*stop;
                    let guard = flag.lock().unwrap_or_else(PoisonError::into_inner);
                    let (guard, _) = cv
                        .wait_timeout(guard, Duration::from_millis(poll))
                        .unwrap_or_else(PoisonError::into_inner);
                    if *guard {
                        return;
                    }
                }
                let Some(instance) = weak.upgrade() else { return };
                for db in instance.databases() {
                    // Looking at the state also reports a database that went offline (a
                    // background page write failed, say) to the server log within a poll.
                    let online = db.state() == crate::database::DatabaseState::Online;
                    if online && db.checkpoint_due() {
                        // A failure takes the database offline; the next user sees why.
                        let _ = db.checkpoint();
                    }
                    if online {
                        // Growth ahead of need, so that no transaction waits for it. A
                        // failure here is reported by the allocation that meets it.
                        let _ = db.grow_data_ahead();
                    }
                }
            });
        if let Ok(h) = handle {
            *self.checkpointer.lock().unwrap_or_else(PoisonError::into_inner) = Some(h);
        }
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The buffer pool's frames, which every database of the instance shares.
    pub fn frame_pool(&self) -> &Arc<FramePool> {
        &self.frames
    }

    /// The lock manager.
    pub fn locks(&self) -> &LockManager {
        self.services.locks()
    }

    /// master.
    pub fn master(&self) -> &Arc<Database> {
        &self.master
    }

    /// tempdb.
    pub fn tempdb(&self) -> &Arc<Database> {
        &self.tempdb
    }

    /// The database named `name` (case-insensitive); error 945 or 926 if it could not be
    /// opened, 911 if there is none.
    pub fn database(&self, name: &str) -> Result<Arc<Database>, EngineError> {
        let key = fold(name);
        if let Some(db) = self.databases.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return Ok(Arc::clone(db));
        }
        match self.unavailable.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            Some(u) => Err(u.error()),
            None => Err(EngineError::NoSuchDatabase(name.to_string())),
        }
    }

    /// The databases registered in master that could not be opened, by id.
    pub fn unavailable_databases(&self) -> Vec<UnavailableDatabase> {
        let mut all: Vec<UnavailableDatabase> = self
            .unavailable
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        all.sort_by_key(|u| u.entry.id);
        all
    }

    /// ALTER DATABASE ... SET ONLINE: opens (and recovers) a database that could not be opened
    /// before. Already online: nothing to do. Offline after an I/O failure: error 5011-like,
    /// as its files are still held by the failed instance of it until a restart.
    pub fn set_online(&self, name: &str) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let key = fold(name);
        let pending =
            self.unavailable.read().unwrap_or_else(PoisonError::into_inner).get(&key).cloned();
        let Some(pending) = pending else {
            let db = self.database(name)?;
            return match db.check_online() {
                Ok(()) => Ok(()),
                Err(e) => Err(EngineError::Invalid(format!(
                    "Database '{}' went offline while open ({e}); restart the instance to \
                     recover it.",
                    db.name()
                ))),
            };
        };
        let events = &self.config.database.events;
        events.emit(
            EventLevel::Info,
            &format!("database {}: SET ONLINE: opening it again", pending.entry.name),
        );
        let (outcomes, _) = read_outcomes(&self.master)?;
        let entry = DatabaseEntry { offline: false, ..pending.entry.clone() };
        match open_entry(&self.vfs, &entry, &self.config, &outcomes) {
            Ok(db) => {
                if pending.offline {
                    // Online again, across restarts too.
                    self.master_put(&entry, false)?;
                }
                announce_online(&db);
                self.unavailable.write().unwrap_or_else(PoisonError::into_inner).remove(&key);
                self.databases.write().unwrap_or_else(PoisonError::into_inner).insert(key, db);
                Ok(())
            }
            Err(error) => {
                let u = UnavailableDatabase::new(pending.entry, &error);
                u.announce(events);
                let err = u.error();
                self.unavailable.write().unwrap_or_else(PoisonError::into_inner).insert(key, u);
                Err(err)
            }
        }
    }

    /// The database with id `id` (`DB_NAME`, `OBJECT_NAME`, the DMVs' database arguments).
    pub fn database_by_id(&self, id: i64) -> Option<Arc<Database>> {
        self.databases
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .find(|d| i64::from(d.id()) == id)
            .cloned()
    }

    /// Every database, by id.
    pub fn databases(&self) -> Vec<Arc<Database>> {
        let mut all: Vec<Arc<Database>> = self
            .databases
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        all.sort_by_key(|d| d.id());
        all
    }

    /// Begins a transaction for the engine's own work (session 0).
    // Inline, as are `begin_in_session`, `Transaction::new` and `Transaction::commit`: in a
    // small transaction the calls and the copies of the few-hundred-byte transaction they add
    // are a measurable part of beginning and ending it (an empty transaction's begin and
    // commit, in a release build: 45 to 59 ns inline, 51 to 68 ns called).
    #[inline]
    pub fn begin(&self, isolation: Isolation, lock_timeout: Option<Duration>) -> Transaction {
        self.begin_in_session(0, isolation, lock_timeout)
    }

    /// Begins a transaction for session `session`, which its locks name
    /// ([`owner_session`](crate::lock::owner_session)).
    #[inline]
    pub fn begin_in_session(
        &self,
        session: u16,
        isolation: Isolation,
        lock_timeout: Option<Duration>,
    ) -> Transaction {
        let sequence = self.next_owner.fetch_add(1, Ordering::Relaxed);
        let owner = crate::lock::owner_id(sequence, session);
        Transaction::new(owner, Arc::clone(&self.services), isolation, lock_timeout)
    }

    /// A lock owner of session `session`'s own, apart from its transactions: what holds the
    /// application locks a session takes with `@LockOwner = 'Session'` until it releases
    /// them or ends. Its id comes from the transactions' sequence, so no transaction has it.
    pub fn session_lock_owner(&self, session: u16) -> crate::lock::LockOwner {
        let sequence = self.next_owner.fetch_add(1, Ordering::Relaxed);
        crate::lock::LockOwner::new(crate::lock::owner_id(sequence, session))
    }

    fn master_put(&self, entry: &DatabaseEntry, new: bool) -> Result<(), EngineError> {
        let mut tx = self.begin(Isolation::ReadCommitted, None);
        tx.mark_ddl(&self.master)?;
        let key = fold(&entry.name).into_bytes();
        if new {
            if !tx.tree_insert(&self.master, DATABASES_ROOT, &key, &entry.encode(&self.dir))? {
                return Err(EngineError::DatabaseExists(entry.name.clone()));
            }
        } else {
            tx.tree_update(&self.master, DATABASES_ROOT, &key, &entry.encode(&self.dir))?;
        }
        tx.commit(walden_log::policy::CommitOption::Unspecified)?;
        Ok(())
    }

    fn entry_of(&self, db: &Database) -> DatabaseEntry {
        DatabaseEntry {
            id: db.id(),
            name: db.name().to_string(),
            files: db.files().clone(),
            delayed_durability: db.delayed_durability(),
            recovery_model: db.recovery_model(),
            layout: db.file_layout(),
            offline: false,
            read_only: db.is_read_only(),
        }
    }

    /// ALTER DATABASE ... SET OFFLINE: checkpoints and closes the database, which then
    /// refuses every use (942) and shows as OFFLINE, recorded in master so that it stays
    /// offline across restarts until SET ONLINE. The caller has ended the sessions using it.
    /// Already offline: nothing to do.
    pub fn set_offline(&self, name: &str) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let key = fold(name);
        if let Some(u) = self.unavailable.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
            return if u.offline { Ok(()) } else { Err(u.error()) };
        }
        let db = self.database(name)?;
        if is_system_database(db.id()) {
            return Err(EngineError::FileRefused {
                number: 5058,
                message: format!("Option 'OFFLINE' cannot be set in database '{}'.", db.name()),
            });
        }
        let entry = DatabaseEntry { offline: true, ..self.entry_of(&db) };
        self.master_put(&entry, false)?;
        self.databases.write().unwrap_or_else(PoisonError::into_inner).remove(&key);
        self.unavailable
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, UnavailableDatabase::set_offline(entry));
        db.persist_caches()?;
        db.close()?;
        self.config
            .database
            .events
            .emit(EventLevel::Info, &format!("database {}: SET OFFLINE", db.name()));
        Ok(())
    }

    /// ALTER DATABASE ... SET READ_ONLY (true) or READ_WRITE, recorded in master.
    pub fn set_read_only(&self, name: &str, read_only: bool) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let db = self.database(name)?;
        if is_system_database(db.id()) {
            let option = if read_only { "READ_ONLY" } else { "READ_WRITE" };
            return Err(EngineError::FileRefused {
                number: 5058,
                message: format!("Option '{option}' cannot be set in database '{}'.", db.name()),
            });
        }
        db.set_read_only(read_only);
        self.master_put(&self.entry_of(&db), false)
    }

    /// CREATE DATABASE; `files` default to `<dir>/<name>.mdf` and `<dir>/<name>_log.ldf`,
    /// their sizes and growth to the instance's (`model`'s).
    pub fn create_database(
        &self,
        name: &str,
        files: Option<DatabaseFiles>,
    ) -> Result<Arc<Database>, EngineError> {
        self.create_database_with(name, files, self.config.database.files.clone())
    }

    /// CREATE DATABASE ... ON (...) LOG ON (...): like [`Instance::create_database`], with
    /// the files' names, sizes, growth and maximum sizes given.
    pub fn create_database_with(
        &self,
        name: &str,
        files: Option<DatabaseFiles>,
        layout: FileLayout,
    ) -> Result<Arc<Database>, EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(self.database(name), Err(EngineError::NoSuchDatabase(_))) {
            return Err(EngineError::DatabaseExists(name.to_string()));
        }
        let files = files.unwrap_or_else(|| DatabaseFiles {
            data: self.dir.join(format!("{name}.mdf")),
            log: self.dir.join(format!("{name}_log.ldf")),
        });
        // Ids of databases that could not be opened stay taken: their files still carry them.
        let id = self
            .databases()
            .iter()
            .map(|d| d.id())
            .chain(self.unavailable_databases().iter().map(|u| u.entry.id))
            .max()
            .unwrap_or(0)
            .max(FIRST_USER_DB_ID - 1)
            + 1;
        let model = self.database("model").ok().filter(|m| m.check_online().is_ok());
        self.create_registered(name, id, files, layout, model.as_deref())
    }

    /// Gives new database `db` the options of `model`, as SQL Server makes each new database
    /// from model: its recovery model, DELAYED_DURABILITY and AUTO_CREATE/AUTO_UPDATE_STATISTICS
    /// (model's objects are not copied; see docs/COMPAT.md). The caller records the first two
    /// in master.
    fn copy_model_options(&self, db: &Arc<Database>, model: &Database) -> Result<(), EngineError> {
        db.set_recovery_model(model.recovery_model());
        db.set_delayed_durability(model.delayed_durability());
        let statistics = (model.auto_create_statistics(), model.auto_update_statistics());
        if statistics != (db.auto_create_statistics(), db.auto_update_statistics()) {
            let mut tx = self.begin(Isolation::ReadCommitted, None);
            tx.set_statistics_options(db, statistics.0, statistics.1)?;
            tx.commit(walden_log::policy::CommitOption::Unspecified)?;
        }
        Ok(())
    }

    /// Creates model and msdb if master does not list them (a new instance, or a data
    /// directory from before they existed). A name already taken, by a user database or by
    /// one that could not be opened, is left as it is.
    fn add_missing_system_databases(&self) {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        for (name, id, data, log) in [
            ("model", MODEL_ID, "model.mdf", "modellog.ldf"),
            ("msdb", MSDB_ID, "MSDBData.mdf", "MSDBLog.ldf"),
        ] {
            if !matches!(self.database(name), Err(EngineError::NoSuchDatabase(_))) {
                continue;
            }
            let files = DatabaseFiles { data: self.dir.join(data), log: self.dir.join(log) };
            let events = &self.config.database.events;
            let layout = self.config.database.files.clone();
            match self.create_registered(name, id, files, layout, None) {
                Ok(_) => events.emit(
                    EventLevel::Info,
                    &format!("database {name}: created (database id {id})"),
                ),
                // Without it the instance still serves master and the user databases; a use
                // of it is error 911 until the cause (files left by an interrupted first
                // start, say, which are never overwritten) is cleared and the server restarts.
                Err(error) => events.emit(
                    EventLevel::Warn,
                    &format!("database {name}: could not be created: {error}"),
                ),
            }
        }
    }

    /// Creates database `name` with id `id` on `files`, with `model`'s options if given, and
    /// records it in master; on failure nothing of it is left. The caller holds `ddl` and has
    /// checked that the name is free.
    fn create_registered(
        &self,
        name: &str,
        id: u32,
        files: DatabaseFiles,
        layout: FileLayout,
        model: Option<&Database>,
    ) -> Result<Arc<Database>, EngineError> {
        let db = Database::create(
            Arc::clone(&self.vfs),
            name,
            id,
            files.clone(),
            DatabaseConfig { files: layout, ..self.config.database.clone() },
        );
        let db = match db {
            Ok(db) => Arc::new(db),
            Err(e) => {
                if !matches!(e, EngineError::FileExists(_)) {
                    let _ = self.vfs.remove(&files.data);
                    let _ = self.vfs.remove(&files.log);
                }
                return Err(e);
            }
        };
        let registered = match model {
            Some(model) => self.copy_model_options(&db, model),
            None => Ok(()),
        }
        .and_then(|()| self.master_put(&self.entry_of(&db), true));
        if let Err(e) = registered {
            let _ = db.close();
            let _ = self.vfs.remove(&files.data);
            let _ = self.vfs.remove(&files.log);
            return Err(e);
        }
        self.databases
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(fold(name), Arc::clone(&db));
        Ok(db)
    }

    /// DROP DATABASE: fails with 3702 while a transaction other than the caller's uses it.
    pub fn drop_database(&self, name: &str) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let key = fold(name);
        if self.unavailable.read().unwrap_or_else(PoisonError::into_inner).contains_key(&key) {
            // Its files are left alone: they could not be opened, may be another instance's,
            // and are what an operator would want to look at.
            let mut tx = self.begin(Isolation::ReadCommitted, None);
            tx.mark_ddl(&self.master)?;
            tx.tree_delete(&self.master, DATABASES_ROOT, key.as_bytes())?;
            tx.commit(walden_log::policy::CommitOption::Unspecified)?;
            if let Some(u) =
                self.unavailable.write().unwrap_or_else(PoisonError::into_inner).remove(&key)
            {
                self.config.database.events.emit(
                    EventLevel::Info,
                    &format!(
                        "database {} dropped while {}; its files {} and {} were left in place",
                        u.entry.name,
                        u.state_desc(),
                        u.entry.files.data.display(),
                        u.entry.files.log.display()
                    ),
                );
            }
            return Ok(());
        }
        let db = self.database(name)?;
        if is_system_database(db.id()) {
            return Err(EngineError::FileRefused {
                number: 3708,
                message: format!(
                    "Cannot drop the database '{name}' because it is a system database."
                ),
            });
        }
        if Arc::strong_count(&db) > 3 {
            return Err(EngineError::InUse(format!(
                "Cannot drop database \"{name}\" because it is currently in use."
            )));
        }
        let mut tx = self.begin(Isolation::ReadCommitted, None);
        tx.mark_ddl(&self.master)?;
        tx.tree_delete(&self.master, DATABASES_ROOT, fold(name).as_bytes())?;
        tx.commit(walden_log::policy::CommitOption::Unspecified)?;
        self.databases.write().unwrap_or_else(PoisonError::into_inner).remove(&fold(name));
        db.space().pool().discard();
        let _ = db.close();
        self.vfs.remove(&db.files().data).map_err(|e| EngineError::Io(e.to_string()))?;
        self.vfs.remove(&db.files().log).map_err(|e| EngineError::Io(e.to_string()))?;
        Ok(())
    }

    /// ALTER DATABASE ... SET DELAYED_DURABILITY.
    pub fn set_delayed_durability(
        &self,
        name: &str,
        setting: DatabaseDurability,
    ) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let db = self.database(name)?;
        db.set_delayed_durability(setting);
        if db.is_temp() || db.id() == MASTER_ID {
            return Ok(());
        }
        self.master_put(&self.entry_of(&db), false)
    }

    /// ALTER DATABASE ... MODIFY FILE (NAME = `file`, SIZE | MAXSIZE | FILEGROWTH = ...):
    /// `file` is a logical name. Error 5041 if the database has no such file.
    pub fn modify_file(
        &self,
        name: &str,
        file: &str,
        change: FileChange,
    ) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let db = self.database(name)?;
        let kind = db.file_by_name(file).ok_or_else(|| EngineError::FileRefused {
            number: 5041,
            message: format!("MODIFY FILE failed. File '{file}' does not exist."),
        })?;
        db.modify_file(kind, change)?;
        if db.is_temp() || db.id() == MASTER_ID {
            return Ok(());
        }
        self.master_put(&self.entry_of(&db), false)
    }

    /// ALTER DATABASE ... SET RECOVERY.
    pub fn set_recovery_model(&self, name: &str, model: RecoveryModel) -> Result<(), EngineError> {
        let _ddl = self.ddl.lock().unwrap_or_else(PoisonError::into_inner);
        let db = self.database(name)?;
        db.set_recovery_model(model);
        if db.is_temp() || db.id() == MASTER_ID {
            return Ok(());
        }
        self.master_put(&self.entry_of(&db), false)
    }

    /// A clean shutdown: persists identity and sequence caches, checkpoints and closes every
    /// database. Also run (ignoring errors) when the last handle is dropped.
    pub fn close(&self) -> Result<(), EngineError> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        {
            let (flag, cv) = &*self.stop;
            *flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
            cv.notify_all();
        }
        if let Some(h) = self.checkpointer.lock().unwrap_or_else(PoisonError::into_inner).take() {
            // The checkpoint thread may itself drop the last handle; it cannot join itself.
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
        // A database that is offline was already given up on when it failed (and reported
        // then): closing what is left of it may fail again, but that is not a failure of the
        // shutdown, whose exit status must not depend on what state a database was in.
        let events = &self.config.database.events;
        let mut first_err = None;
        for db in self.databases() {
            let online = db.check_online().is_ok();
            let result = if online { db.persist_caches() } else { Ok(()) };
            match result.and_then(|()| db.close()) {
                Ok(()) => {}
                Err(e) if !online => events.emit(
                    EventLevel::Warn,
                    &format!("database {} was offline at shutdown; closing it: {e}", db.name()),
                ),
                Err(e) => {
                    events.emit(
                        EventLevel::Error,
                        &format!("database {}: clean shutdown failed: {e}", db.name()),
                    );
                    first_err.get_or_insert(e);
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// What master's outcome table holds: the committed global transaction ids, and the largest.
fn read_outcomes(master: &Database) -> Result<(HashSet<u64>, u64), EngineError> {
    let mut outcomes = HashSet::new();
    let mut max_gtid = 0;
    for entry in master.space().tree(OUTCOMES_ROOT).scan() {
        let (k, _) = entry?;
        if k.len() == 8 {
            let mut a = [0; 8];
            a.copy_from_slice(&k);
            let g = u64::from_be_bytes(a);
            max_gtid = max_gtid.max(g);
            outcomes.insert(g);
        }
    }
    Ok((outcomes, max_gtid))
}

/// Opens and recovers the user database `entry` describes.
fn open_entry(
    vfs: &Arc<dyn Vfs>,
    entry: &DatabaseEntry,
    config: &InstanceConfig,
    outcomes: &HashSet<u64>,
) -> Result<Arc<Database>, EngineError> {
    let db = Database::open(
        Arc::clone(vfs),
        &entry.name,
        entry.id,
        entry.files.clone(),
        DatabaseConfig { files: entry.layout.clone(), ..config.database.clone() },
        &|g| outcomes.contains(&g),
    )?;
    db.set_delayed_durability(entry.delayed_durability);
    db.set_recovery_model(entry.recovery_model);
    db.set_read_only(entry.read_only);
    Ok(Arc::new(db))
}

/// Reports a database that came online, with its recovery's figures.
fn announce_online(db: &Database) {
    let r = db.recovery_report();
    db.config().events.emit(
        EventLevel::Info,
        &format!(
            "database {} is ONLINE: recovery scanned {} log records, redid {} pages, rolled back \
             {} transactions in {} ms",
            db.name(),
            r.records_scanned,
            r.pages_redone,
            r.transactions_undone,
            r.elapsed.as_millis()
        ),
    );
}

/// A database registered in master that could not be opened: SQL Server's RECOVERY_PENDING
/// (its files could not be opened or read) or SUSPECT (recovery ran and found damage).
#[derive(Debug, Clone)]
pub struct UnavailableDatabase {
    /// Its entry in master.
    pub entry: DatabaseEntry,
    /// Recovery found damage (SUSPECT), rather than could not start (RECOVERY_PENDING).
    pub suspect: bool,
    /// Set OFFLINE (`ALTER DATABASE ... SET OFFLINE`): not a failure, nothing to announce.
    pub offline: bool,
    /// Why it could not be opened.
    pub reason: String,
}

impl UnavailableDatabase {
    fn new(entry: DatabaseEntry, error: &EngineError) -> Self {
        UnavailableDatabase {
            entry,
            suspect: matches!(error, EngineError::Corrupt(_)),
            offline: false,
            reason: error.to_string(),
        }
    }

    /// A database set OFFLINE.
    fn set_offline(entry: DatabaseEntry) -> Self {
        UnavailableDatabase {
            entry,
            suspect: false,
            offline: true,
            reason: "set OFFLINE".to_string(),
        }
    }

    /// `sys.databases.state_desc`.
    pub fn state_desc(&self) -> &'static str {
        if self.offline {
            "OFFLINE"
        } else if self.suspect {
            "SUSPECT"
        } else {
            "RECOVERY_PENDING"
        }
    }

    /// `sys.databases.state`: 3 RECOVERY_PENDING, 4 SUSPECT, 6 OFFLINE.
    pub fn state(&self) -> u8 {
        if self.offline {
            6
        } else if self.suspect {
            4
        } else {
            3
        }
    }

    /// The error a request for it gets.
    pub fn error(&self) -> EngineError {
        if self.offline {
            return EngineError::DatabaseSetOffline(self.entry.name.clone());
        }
        EngineError::DatabaseUnavailable {
            database: self.entry.name.clone(),
            reason: self.reason.clone(),
            suspect: self.suspect,
        }
    }

    fn announce(&self, events: &crate::events::EventLog) {
        events.emit(
            EventLevel::Error,
            &format!(
                "database {} is {}: {}; the other databases are not affected. Fix the cause and \
                 run ALTER DATABASE [{}] SET ONLINE",
                self.entry.name,
                self.state_desc(),
                self.reason,
                self.entry.name
            ),
        );
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(data: &str, log: &str) -> DatabaseEntry {
        DatabaseEntry {
            id: 7,
            name: "d".into(),
            files: DatabaseFiles { data: data.into(), log: log.into() },
            delayed_durability: DatabaseDurability::Allowed,
            recovery_model: RecoveryModel::Full,
            layout: FileLayout::default(),
            offline: false,
            read_only: false,
        }
    }

    /// The length of a default file layout, which ends a record.
    fn layout_len() -> usize {
        let mut layout = Vec::new();
        FileLayout::default().encode(&mut layout);
        layout.len()
    }

    /// The flags byte of a record: the one before the file layout.
    fn flags_of(bytes: &[u8]) -> u8 {
        bytes[bytes.len() - layout_len() - 1]
    }

    #[test]
    fn files_inside_the_data_directory_are_stored_relative_to_it() {
        let e = entry("/srv/data/d.mdf", "/other/disk/d_log.ldf");
        let bytes = e.encode(Path::new("/srv/data"));
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("d.mdf") && !text.contains("/srv/data"), "{text}");
        assert!(text.contains("/other/disk/d_log.ldf"));
        assert_eq!(flags_of(&bytes), DATA_IN_DIR);
        // Read back in the same directory, or in a copy of it.
        assert_eq!(DatabaseEntry::decode(&bytes, Path::new("/srv/data")).unwrap(), e);
        let copy = DatabaseEntry::decode(&bytes, Path::new("/backup/data")).unwrap();
        assert_eq!(copy.files.data, Path::new("/backup/data/d.mdf"));
        assert_eq!(copy.files.log, Path::new("/other/disk/d_log.ldf"));
        // A path that only looks inside (`..`) stays as given.
        let sneaky = entry("/srv/data/../elsewhere/d.mdf", "/srv/data/d_log.ldf");
        let bytes = sneaky.encode(Path::new("/srv/data"));
        assert_eq!(flags_of(&bytes), LOG_IN_DIR);
        let back = DatabaseEntry::decode(&bytes, Path::new("/copy")).unwrap();
        assert_eq!(back.files.data, Path::new("/srv/data/../elsewhere/d.mdf"));
        assert_eq!(back.files.log, Path::new("/copy/d_log.ldf"));
    }

    #[test]
    fn records_from_before_the_flags_byte_keep_their_paths() {
        // The old record: no flags byte, every path as stored (absolute, or relative to the
        // server's working directory when the data directory was given relative).
        for (data, log) in
            [("/srv/data/d.mdf", "/srv/data/d_log.ldf"), ("walden-data/d.mdf", "walden-data/l.ldf")]
        {
            let e = entry(data, log);
            let mut bytes = e.encode(Path::new("/unrelated"));
            bytes.truncate(bytes.len() - layout_len());
            assert_eq!(bytes.pop(), Some(0));
            let back = DatabaseEntry::decode(&bytes, Path::new("walden-data")).unwrap();
            assert_eq!(back, e);
        }
    }

    #[test]
    fn old_records_are_rewritten_with_relative_paths_at_open() {
        let vfs: Arc<dyn Vfs> = Arc::new(walden_io::SimFs::new(1));
        let dir = Path::new("/srv/data");
        let config = small_config();
        let stored = |instance: &Instance| -> Vec<u8> {
            let tree = instance.master.space().tree(DATABASES_ROOT);
            tree.get(b"d").unwrap().unwrap()
        };
        {
            let instance =
                Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
            let db = instance.create_database("d", None).unwrap();
            // Write the entry as a version before the path flags did: full paths, no flags.
            let mut old = instance.entry_of(&db).encode(Path::new("/unrelated"));
            old.truncate(old.len() - layout_len());
            assert_eq!(old.pop(), Some(0));
            let mut tx = instance.begin(Isolation::ReadCommitted, None);
            tx.mark_ddl(&instance.master).unwrap();
            tx.tree_update(&instance.master, DATABASES_ROOT, b"d", &old).unwrap();
            tx.commit(walden_log::policy::CommitOption::Unspecified).unwrap();
            assert_eq!(stored(&instance), old);
            instance.close().unwrap();
        }
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config, None).unwrap();
        assert_eq!(instance.database("d").unwrap().files().data, dir.join("d.mdf"));
        let now = stored(&instance);
        assert_eq!(flags_of(&now), DATA_IN_DIR | LOG_IN_DIR);
        assert!(!String::from_utf8_lossy(&now).contains("/srv/data"));
    }

    /// A data directory from before model and msdb existed: master lists only user
    /// databases. Simulated by removing the two from master and their files.
    fn forget_system_databases(instance: &Instance) {
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.mark_ddl(&instance.master).unwrap();
        for name in ["model", "msdb"] {
            tx.tree_delete(&instance.master, DATABASES_ROOT, name.as_bytes()).unwrap();
        }
        tx.commit(walden_log::policy::CommitOption::Unspecified).unwrap();
    }

    fn small_config() -> InstanceConfig {
        let mut config = InstanceConfig::default();
        config.database.pool.frames = 64;
        config.database.log.segment_size = 64 << 10;
        config.database.files = crate::files::FileLayout::small(64 << 10);
        config.database.log.initial_segments = 2;
        config.checkpoint_poll_ms = 0;
        config
    }

    #[test]
    fn model_and_msdb_are_added_to_a_directory_that_predates_them() {
        let vfs: Arc<dyn Vfs> = Arc::new(walden_io::SimFs::new(1));
        let dir = Path::new("/srv/data");
        let config = small_config();
        let ids = |instance: &Instance| -> Vec<(String, u32)> {
            let mut ids: Vec<_> =
                instance.databases().iter().map(|d| (d.name().to_string(), d.id())).collect();
            ids.sort_by_key(|(_, id)| *id);
            ids
        };
        {
            let instance =
                Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
            let names = ["master", "tempdb", "model", "msdb"];
            let want: Vec<_> = names.iter().map(|n| n.to_string()).zip(1..).collect();
            assert_eq!(ids(&instance), want);
            assert_eq!(instance.database("msdb").unwrap().files().data, dir.join("MSDBData.mdf"));
            instance.create_database("sales", None).unwrap();
            forget_system_databases(&instance);
            let (model, msdb) =
                (instance.database("model").unwrap(), instance.database("msdb").unwrap());
            instance.close().unwrap();
            for db in [model, msdb] {
                vfs.remove(&db.files().data).unwrap();
                vfs.remove(&db.files().log).unwrap();
            }
        }
        {
            let instance =
                Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
            let got = ids(&instance);
            assert_eq!(
                got,
                [("master", 1), ("tempdb", 2), ("model", 3), ("msdb", 4), ("sales", 5)]
                    .map(|(n, id)| (n.to_string(), id))
            );
            // Registered in master: the next start opens them (making them again would meet
            // their files and leave them out).
            instance.close().unwrap();
            let again = Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
            assert_eq!(ids(&again), got);
            // System databases cannot be dropped, set offline or made read-only.
            for name in ["model", "msdb"] {
                assert!(again.drop_database(name).is_err());
                assert!(again.set_offline(name).is_err());
                assert!(again.set_read_only(name, true).is_err());
            }
            again.close().unwrap();
        }
    }

    #[test]
    fn leftover_files_of_a_system_database_do_not_keep_the_instance_down() {
        // Files without an entry in master: a first start that stopped between making
        // them and registering them, or an operator's copy. They are left alone.
        let vfs: Arc<dyn Vfs> = Arc::new(walden_io::SimFs::new(1));
        let dir = Path::new("/srv/data");
        let config = small_config();
        {
            let instance =
                Instance::open_with(Arc::clone(&vfs), dir, config.clone(), None).unwrap();
            forget_system_databases(&instance);
            instance.close().unwrap();
        }
        let instance = Instance::open_with(Arc::clone(&vfs), dir, config, None).unwrap();
        assert!(matches!(instance.database("msdb"), Err(EngineError::NoSuchDatabase(_))));
        assert!(vfs.exists(&dir.join("MSDBData.mdf")));
        assert_eq!(instance.database("master").unwrap().id(), MASTER_ID);
    }
}
