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
use walden_storage::{FramePool, PageId};

use crate::database::{Database, DatabaseConfig, DatabaseFiles, LogMode, RowKind, CATALOG_ROOT};
use crate::error::EngineError;
use crate::events::EventLevel;
use crate::lock::LockManager;
use crate::txn::{Coordinator, Isolation, Transaction, TxnServices};
pub use entry::DatabaseEntry;
pub use lifecycle::UnavailableDatabase;

mod entry;
mod lifecycle;

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

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests;
