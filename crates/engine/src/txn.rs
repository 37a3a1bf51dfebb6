//! Transactions: row changes with their undo, commit through the durability policy, rollback
//! with compensation records, savepoints.
//!
//! A [`Transaction`] belongs to one session and may touch several databases; in each it has a
//! local transaction id and a list of the row changes it made there, newest last. That list
//! is the undo: rollback (whole, or to a savepoint) walks it backwards and applies each
//! entry's logical inverse by key, logging a compensation record whose `undo_next` names the
//! next entry still to undo. Recovery rebuilds the same lists from the log (see
//! `docs/recovery.md`), so runtime rollback and crash undo are the same code
//! ([`undo_entries`]).
//!
//! # Commit and locks (rule W5 of `docs/recovery.md`)
//!
//! A commit appends the commit record; the durability policy decides whether it then waits for
//! the flush. Locks are released only after `append_commit` returns: for a delayed commit
//! that is as soon as the record is in the log buffer, for a full one after it is hardened.
//! Either way no other transaction can read the changes before the commit record is in the
//! log, so the log order of commit records is the serialization order, and a crash that loses
//! a delayed commit loses every later commit that could have depended on it.
//!
//! # Several databases
//!
//! A transaction that wrote to two or more logged databases commits with two-phase commit:
//! see [`Transaction::commit`].

use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use walden_log::Lsn;
use walden_storage::btree::{AppendRun, BTree, TreeError};
use walden_storage::PageId;

use crate::database::{Database, DbLogger, LogMode, RowKind, RowUndo, UndoLog};
use crate::error::EngineError;
use crate::lock::{
    Ghosts, LockManager, LockMode, LockOwner, Resource, SmallList, TreeWriters, WritersSeen,
};
use crate::wal::Undo;

mod finish;
mod statement_locks;
pub(crate) use finish::undo_entries;
pub use statement_locks::StatementLocksMark;

/// The participant list kept for reuse (see [`Transaction::recycle`]) holds at most this many.
const SPARE_PARTS: usize = 4;

thread_local! {
    /// The emptied participant list of a transaction that ended on this thread, which the
    /// next transaction the thread begins reuses, so that it allocates none.
    static SPARE_PART_LIST: std::cell::Cell<Vec<Participant>> =
        const { std::cell::Cell::new(Vec::new()) };
}

/// SQL Server's isolation levels that Walden implements with locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Reads take no row locks (IS on the table only), so they see uncommitted changes and
    /// wait for no writer but one holding the whole table; writes lock as under READ
    /// COMMITTED.
    ReadUncommitted,
    /// Row S locks are released as soon as the row is read (the default).
    ReadCommitted,
    /// S locks are held to the end, and scans lock the whole table.
    Serializable,
}

/// What a read of a table means to lock its keys for: to read them, to change them (U,
/// RangeS-U: an UPDATE's search, `UPDLOCK`), or to have them alone (X, RangeX-X: `XLOCK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadIntent {
    /// S and RangeS-S.
    #[default]
    Share,
    /// U and RangeS-U.
    Update,
    /// X and RangeX-X.
    Exclusive,
}

/// A table hint's effect on one statement's reads of one table (`WITH (HOLDLOCK, UPDLOCK,
/// NOLOCK, TABLOCKX, NOWAIT, ...)`), pushed by the statement with
/// [`Transaction::push_table_hint`] and given back when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableHint {
    /// The isolation level the table is read at, if not the transaction's.
    pub isolation: Option<Isolation>,
    /// What the read locks keys for. Update and Exclusive hold their key locks to the end
    /// of the transaction, so they read at SERIALIZABLE when the level would release them.
    pub intent: ReadIntent,
    /// A lock on the whole table that every access of it takes besides (joined with) its
    /// own: S (`TABLOCK`), U (`TABLOCK, UPDLOCK`) or X (`TABLOCKX`).
    pub table: Option<LockMode>,
    /// `NOWAIT`: a lock on the table or its keys that cannot be granted at once is error
    /// 1222 instead of a wait.
    pub nowait: bool,
    /// `READPAST`: a read skips a row (a key) whose lock it cannot take at once, because
    /// another transaction holds an incompatible one, instead of waiting for it. Only key
    /// locks are read past; the table's own lock is waited for as usual.
    pub readpast: bool,
}

/// The work of one transaction in one database.
#[derive(Debug)]
struct Participant {
    db: Arc<Database>,
    /// The local transaction id in this database's log.
    txn: u64,
    /// Row changes, oldest first.
    undo: UndoLog,
    /// Whether the transaction changed the catalog or a sequence's high-water mark here:
    /// such commits are always fully durable.
    ddl: bool,
    /// The identity cache entries TRUNCATE TABLE reset here, oldest first: the undo position
    /// when it did, the table, and the entry as it was, which a rollback past that position
    /// puts back (the catalog's mark comes back with the catalog's own undo).
    identity_resets: Vec<IdentityReset>,
    /// The end of the log before its first change here (0 until it makes one): the log it
    /// has written since, which its rollback may have to match, is kept free when new work
    /// is checked against a full log.
    first_lsn: Lsn,
}

impl Participant {
    /// Error 9002 if the log cannot take a change of this transaction that may log `extra`
    /// bytes besides one change's records (see [`Database::check_log_room`]).
    fn check_log_room(&mut self, extra: u64) -> Result<(), EngineError> {
        if self.first_lsn == 0 {
            self.first_lsn = self.db.log_end_hint();
        }
        self.db.check_log_room(self.first_lsn, extra)
    }
}

/// See [`Participant::identity_resets`]: (undo position, table id, cache entry as it was).
type IdentityReset = (usize, u32, Option<(i64, i64)>);

/// What a commit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitOutcome {
    /// The commit record's LSN in the last database committed (0 if nothing was logged).
    pub lsn: Lsn,
    /// The id of that database (0 if nothing was logged): where `lsn` is a position.
    pub database: u32,
    /// Whether the commit was hardened when it returned.
    pub hardened: bool,
    /// Whether the commit was delayed (in at least one database).
    pub delayed: bool,
}

/// A transaction. Dropping one that was not committed rolls it back.
#[derive(Debug)]
pub struct Transaction {
    /// The lock owner: the transaction's id and the locks it holds, which commit and
    /// rollback release.
    owner: LockOwner,
    services: Arc<TxnServices>,
    isolation: Isolation,
    lock_timeout: Option<Duration>,
    parts: Vec<Participant>,
    savepoints: Vec<(String, Vec<usize>)>,
    finished: bool,
    /// The table locks held, so repeated row operations skip the lock manager.
    table_locks: TableLocks,
    /// The last identity value this transaction's inserts generated.
    last_identity: Option<i64>,
    /// The partitions of [`TreeWriters`] this transaction entered (each once), which it
    /// leaves when it is over.
    writing: SmallList<u16, 4>,
    /// The keys this transaction noted as deleted in [`Ghosts`] (database, tree, key), which
    /// it takes away when it is over.
    ghosts: Vec<(u32, PageId, Vec<u8>)>,
    /// Counts the changes this transaction made to trees' entries, undo included: equal
    /// readings bracket a time in which it changed nothing.
    own_changes: u64,
    /// The table (database id, object id) an UPDATE or DELETE is searching for the rows it
    /// will change: under SERIALIZABLE its seeks lock keys with RangeS-U and U, not RangeS-S
    /// and S.
    update_target: Option<(u32, u32)>,
    /// The table hints of the statements running, newest last (a later hint on the same
    /// table wins until its statement ends): see [`TableHint`].
    table_hints: Vec<((u32, u32), TableHint)>,
    /// The table locks the running statements took that their ends give back, oldest first
    /// (`txn/statement_locks.rs`).
    statement_locks: TableLocks,
}

/// (database id, object id) -> the table lock a transaction holds. Looked up on every row
/// change; most transactions touch one or two tables, which stay inline (no allocation, no
/// hash), and a list is searched in order.
type TableLocks = SmallList<((u32, u32), LockMode), 2>;

/// A commit appended without waiting for its flush: its database and its commit record's LSN.
type Unwaited = (Arc<Database>, Lsn);

/// What the transactions of an instance share: the lock manager and the coordinator of the
/// transactions that span databases. A transaction holds both through this one `Arc`, so that
/// beginning and ending one costs one reference count, not one per service.
#[derive(Debug)]
pub struct TxnServices {
    locks: LockManager,
    /// The trees with changes not yet committed, for READ COMMITTED's lock avoidance.
    writers: TreeWriters,
    /// The keys deleted by transactions not yet over, which readers wait for.
    ghosts: Ghosts,
    coordinator: Option<Arc<dyn Coordinator>>,
}

impl TxnServices {
    /// A new lock manager, with the coordinator for two-phase commit (master), if any.
    pub fn new(coordinator: Option<Arc<dyn Coordinator>>) -> Arc<TxnServices> {
        Arc::new(TxnServices {
            locks: LockManager::new(),
            writers: TreeWriters::new(),
            ghosts: Ghosts::new(),
            coordinator,
        })
    }

    /// The lock manager.
    pub fn locks(&self) -> &LockManager {
        &self.locks
    }
}

/// Records the outcome of a transaction that spans databases (implemented over master).
pub trait Coordinator: Send + Sync + std::fmt::Debug {
    /// A global transaction id never handed out before.
    fn new_gtid(&self) -> u64;
    /// Durably records that global transaction `gtid` committed: the commit point.
    fn record_commit(&self, gtid: u64) -> Result<(), EngineError>;
}

impl Transaction {
    /// A new transaction with lock-owner id `id` (unique among the transactions of
    /// `services`).
    #[inline]
    pub fn new(
        id: u64,
        services: Arc<TxnServices>,
        isolation: Isolation,
        lock_timeout: Option<Duration>,
    ) -> Transaction {
        Transaction {
            owner: LockOwner::new(id),
            services,
            isolation,
            lock_timeout,
            parts: SPARE_PART_LIST.try_with(std::cell::Cell::take).unwrap_or_default(),
            savepoints: Vec::new(),
            finished: false,
            table_locks: TableLocks::default(),
            last_identity: None,
            writing: SmallList::default(),
            ghosts: Vec::new(),
            own_changes: 0,
            update_target: None,
            table_hints: Vec::new(),
            statement_locks: TableLocks::default(),
        }
    }

    /// The table lock this transaction holds on (db, object), as far as it knows.
    pub(crate) fn table_lock(&self, db: u32, object: u32) -> Option<LockMode> {
        self.table_locks.iter().find(|(t, _)| *t == (db, object)).map(|&(_, mode)| mode)
    }

    pub(crate) fn set_table_lock(&mut self, db: u32, object: u32, mode: LockMode) {
        let at = self.table_locks.iter().position(|(t, _)| *t == (db, object));
        match at.and_then(|at| self.table_locks.get_mut(at)) {
            Some((_, held)) => *held = mode,
            None => self.table_locks.push(((db, object), mode)),
        }
    }

    /// The last identity value generated by this transaction's inserts (`SCOPE_IDENTITY()`
    /// is kept by the SQL layer per scope; this is the raw value).
    pub fn last_identity(&self) -> Option<i64> {
        self.last_identity
    }

    pub(crate) fn set_last_identity(&mut self, v: i64) {
        self.last_identity = Some(v);
    }

    /// The lock-owner id.
    pub fn id(&self) -> u64 {
        self.owner.id()
    }

    /// The isolation level.
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// Changes the isolation level (SET TRANSACTION ISOLATION LEVEL inside a transaction).
    pub fn set_isolation(&mut self, isolation: Isolation) {
        self.isolation = isolation;
    }

    /// Names the table (database id, object id) that the reads until the next call search
    /// for rows to change (an UPDATE's or DELETE's search), or none. Under SERIALIZABLE, a
    /// seek of that table locks what it reads with update locks, RangeS-U on the keys of its
    /// range and U on a key it seeks, as SQL Server does: of two transactions searching the
    /// same rows to change them, the second waits at the read instead of both holding shared
    /// locks that neither can convert to RangeX-X while the other holds its own.
    pub fn set_update_target(&mut self, table: Option<(u32, u32)>) {
        self.update_target = table;
    }

    /// Applies `hint` to this transaction's access of table (db, object) until
    /// [`Transaction::truncate_table_hints`] takes it back.
    pub fn push_table_hint(&mut self, db: u32, object: u32, hint: TableHint) {
        self.table_hints.push(((db, object), hint));
    }

    /// How many table hints apply now: what a statement gives back to when it ends.
    pub fn table_hints_mark(&self) -> usize {
        self.table_hints.len()
    }

    /// Ends the table hints pushed since `mark`.
    pub fn truncate_table_hints(&mut self, mark: usize) {
        self.table_hints.truncate(mark);
    }

    /// The newest hint on table (db, object), if any.
    pub(crate) fn table_hint(&self, db: u32, object: u32) -> Option<&TableHint> {
        if self.table_hints.is_empty() {
            return None;
        }
        self.table_hints.iter().rev().find(|(t, _)| *t == (db, object)).map(|(_, h)| h)
    }

    /// Whether reads of table (db, object) pass keys they cannot lock at once (`READPAST`).
    pub(crate) fn reads_past(&self, db: u32, object: u32) -> bool {
        self.table_hint(db, object).is_some_and(|h| h.readpast)
    }

    /// What a read of table (db, object) locks its keys for: an UPDATE's or DELETE's search
    /// ([`Transaction::set_update_target`]) for update, else its hint's intent.
    fn read_intent(&self, db: u32, object: u32) -> ReadIntent {
        match self.table_hint(db, object) {
            Some(h) if h.intent != ReadIntent::Share => h.intent,
            _ if self.update_target == Some((db, object)) => ReadIntent::Update,
            _ => ReadIntent::Share,
        }
    }

    /// The isolation level table (db, object) is read and changed at: its hint's, else the
    /// transaction's; SERIALIZABLE when the read locks keys to change them (U and X are held
    /// to the end, as SQL Server holds an `UPDLOCK`'s).
    pub(crate) fn table_isolation(&self, db: u32, object: u32) -> Isolation {
        let Some(hint) = self.table_hint(db, object) else { return self.isolation };
        match (hint.intent, hint.isolation.unwrap_or(self.isolation)) {
            (ReadIntent::Share, level) => level,
            _ => Isolation::Serializable,
        }
    }

    /// The mode a SERIALIZABLE read of table (db, object) locks its range keys in: RangeS-U
    /// when it searches for rows to change ([`Transaction::set_update_target`]) or reads
    /// with `UPDLOCK`, RangeX-X with `XLOCK`, else RangeS-S.
    pub(crate) fn range_read_mode(&self, db: u32, object: u32) -> LockMode {
        match self.read_intent(db, object) {
            ReadIntent::Share => LockMode::RangeSS,
            ReadIntent::Update => LockMode::RangeSU,
            ReadIntent::Exclusive => LockMode::RangeXX,
        }
    }

    /// The mode a read holding its key lock (SERIALIZABLE) locks a key of table (db, object)
    /// in: U when it searches for rows to change, X for `XLOCK`, else S.
    pub(crate) fn key_read_mode(&self, db: u32, object: u32) -> LockMode {
        match self.read_intent(db, object) {
            ReadIntent::Share => LockMode::S,
            ReadIntent::Update => LockMode::U,
            ReadIntent::Exclusive => LockMode::X,
        }
    }

    /// The lock timeout for `res`: none at all (error 1222 at once) on a table read with
    /// `NOWAIT` and its keys.
    fn timeout_for(&self, res: &Resource) -> Option<Duration> {
        let table = match *res {
            Resource::Object { db, object } | Resource::Key { db, object, .. } => (db, object),
            _ => return self.lock_timeout,
        };
        match self.table_hint(table.0, table.1) {
            Some(h) if h.nowait => Some(Duration::ZERO),
            _ => self.lock_timeout,
        }
    }

    /// Changes the lock timeout (None: wait forever).
    pub fn set_lock_timeout(&mut self, timeout: Option<Duration>) {
        self.lock_timeout = timeout;
    }

    /// Lets `interrupt` end this transaction's lock waits (its client cancelled the request):
    /// the waiting request fails with `LockError::Cancelled` (error 3617).
    pub fn set_interrupt(&mut self, interrupt: Option<Arc<dyn crate::lock::Interrupt>>) {
        self.owner.set_interrupt(interrupt);
    }

    /// Has `hook` give up what this transaction's session holds (its deferred commits)
    /// before this transaction waits for a lock.
    pub fn set_before_lock_wait(&mut self, hook: Option<Arc<dyn crate::lock::BeforeLockWait>>) {
        self.owner.set_before_wait(hook);
    }

    /// Whether the transaction changed anything.
    pub fn has_writes(&self) -> bool {
        self.parts.iter().any(|p| !p.undo.is_empty() || p.ddl)
    }

    /// Acquires a lock for this transaction (see [`LockManager::lock`]).
    pub fn lock(&mut self, res: &Resource, mode: LockMode) -> Result<bool, EngineError> {
        let timeout = self.timeout_for(res);
        Ok(self.services.locks.lock(&mut self.owner, res, mode, timeout)?)
    }

    /// Acquires a lock if it can be granted at once (whether it was new, as
    /// [`Transaction::lock`] says), or `None` if another transaction holds an incompatible
    /// one: what a `READPAST` read asks before it skips a key.
    pub(crate) fn lock_or_pass(
        &mut self,
        res: &Resource,
        mode: LockMode,
    ) -> Result<Option<bool>, EngineError> {
        match self.services.locks.lock(&mut self.owner, res, mode, Some(Duration::ZERO)) {
            Ok(newly_granted) => Ok(Some(newly_granted)),
            Err(crate::lock::LockError::Timeout { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Acquires intent mode `intent` on table (db, object) and then `mode` on `key`, one of its
    /// keys (see [`LockManager::lock_table_and_key`]).
    pub(crate) fn lock_table_and_key(
        &mut self,
        table: (u32, u32),
        intent: LockMode,
        key: &Resource,
        mode: LockMode,
    ) -> Result<(), EngineError> {
        let timeout = self.timeout_for(key);
        let locks = &self.services.locks;
        locks.lock_table_and_key(&mut self.owner, table, intent, key, mode, timeout)?;
        Ok(())
    }

    /// Acquires a lock only if it can be granted at once, whatever the lock timeout: what lock
    /// escalation asks for. `false` if it would have to wait.
    pub(crate) fn lock_at_once(&mut self, res: &Resource, mode: LockMode) -> bool {
        self.services.locks.lock(&mut self.owner, res, mode, Some(Duration::ZERO)).is_ok()
    }

    /// Takes `mode` on key `res`, answering whether the grant is fresh (the transaction held
    /// nothing on the key before, so [`Transaction::unlock`] may give it back): see
    /// [`LockManager::lock_fresh`].
    pub(crate) fn lock_fresh(
        &mut self,
        res: &Resource,
        mode: LockMode,
    ) -> Result<bool, EngineError> {
        let timeout = self.timeout_for(res);
        let locks = &self.services.locks;
        Ok(locks.lock_fresh(&mut self.owner, res, mode, timeout)?)
    }

    /// Notes that this transaction is about to take key-range locks (see
    /// [`LockManager::note_range_holder`]): before a SERIALIZABLE seek reads its first key.
    pub(crate) fn note_range_holder(&mut self) {
        self.services.locks.note_range_holder(&mut self.owner);
    }

    /// Whether any transaction holds or is taking key-range locks that keep keys out of a
    /// range: if not, an insert need not test its range.
    pub(crate) fn ranges_locked(&self) -> bool {
        self.services.locks.range_holders() != 0
    }

    /// How many key locks this transaction holds on table `object` of database `db`.
    pub(crate) fn key_lock_count(&self, db: u32, object: u32) -> usize {
        self.owner.key_lock_count(db, object)
    }

    /// Whether this transaction holds a lock on `res`.
    pub fn holds_lock(&self, res: &Resource) -> bool {
        self.owner.holds(res)
    }

    /// Acquires a lock, waiting at most `timeout` (`None`: as long as it takes) whatever the
    /// transaction's lock timeout: what `sp_getapplock @LockTimeout` asks for.
    pub fn lock_within(
        &mut self,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<bool, crate::lock::LockError> {
        self.services.locks.lock(&mut self.owner, res, mode, timeout)
    }

    /// Counts this transaction in the [`TreeWriters`] partition of tree `root` of database
    /// `db`, unless it is already: before each change of a tree's entries.
    fn enter_writers(&mut self, db: u32, root: PageId) {
        let partition = TreeWriters::partition(db, root);
        if !self.writing.iter().any(|&p| p == partition) {
            self.services.writers.enter(partition);
            self.writing.push(partition);
        }
    }

    /// Leaves every partition this transaction entered: once it is over, committed or rolled
    /// back (after its undo).
    fn leave_writers(&mut self) {
        // A reader entered nothing and noted nothing: its commit skips taking both lists
        // apart.
        if !self.writing.is_empty() {
            for partition in self.writing.take_all() {
                self.services.writers.leave(partition);
            }
        }
        if !self.ghosts.is_empty() {
            let owner = self.owner.id();
            for (db, root, key) in self.ghosts.drain(..) {
                self.services.ghosts.remove(db, root, &key, owner);
            }
        }
    }

    /// Notes, before it takes `key` out of tree `root`, that this transaction deletes it
    /// from table `table` (row `row_id`, which it holds X): readers that meet the gap wait
    /// for the row's lock as they would for the key (`lock/ghosts.rs`). Nothing is noted
    /// while the transaction holds the table in X, which readers wait for first.
    pub(crate) fn note_ghost(
        &mut self,
        db: u32,
        table: u32,
        root: PageId,
        key: &[u8],
        row_id: &[u8],
    ) {
        if self.table_lock(db, table).is_some_and(|held| held.covers(LockMode::X)) {
            return;
        }
        self.services.ghosts.add(db, root, key, row_id, self.owner.id());
        self.ghosts.push((db, root, key.to_vec()));
    }

    /// The first key of `lower..upper` in tree `root` of `db` that another transaction has
    /// deleted and may put back, with its row id (see [`Ghosts::first_between`]).
    pub(crate) fn ghost_between(
        &self,
        db: u32,
        root: PageId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Option<(Vec<u8>, Vec<u8>)> {
        self.services.ghosts.first_between(db, root, lower, upper, self.owner.id())
    }

    /// Before a READ COMMITTED read copies entries of tree `root` of database `db`: what
    /// [`TreeWriters::quiet`] says, `None` if another transaction may have a change there
    /// that is not committed. Give the answer to [`Transaction::writers_unchanged`] after
    /// the copy.
    pub(crate) fn writers_quiet(&self, db: u32, root: PageId) -> Option<(u16, WritersSeen)> {
        let partition = TreeWriters::partition(db, root);
        let own = self.writing.iter().any(|&p| p == partition);
        self.services.writers.quiet(partition, own).map(|seen| (partition, seen))
    }

    /// How many changes of trees' entries this transaction made so far (see `own_changes`).
    pub(crate) fn own_changes(&self) -> u64 {
        self.own_changes
    }

    /// After the copy: whether what it copied holds no change of another transaction that is
    /// not committed, so that its rows need no S lock (see `lock/writers.rs`).
    pub(crate) fn writers_unchanged(&self, (partition, seen): (u16, WritersSeen)) -> bool {
        self.services.writers.unchanged(partition, seen)
    }

    /// Releases one lock early (READ COMMITTED row reads).
    pub fn unlock(&mut self, res: &Resource) {
        self.services.locks.unlock(&mut self.owner, res);
    }

    /// Releases the key locks on table `object` of database `db`, once an escalated table lock
    /// covers them.
    pub(crate) fn release_keys(&mut self, db: u32, object: u32) {
        self.services.locks.release_keys(&mut self.owner, db, object);
    }

    fn part(&mut self, db: &Arc<Database>) -> Result<&mut Participant, EngineError> {
        db.check_online()?;
        // Every change joins its database here first, so this refuses all of them.
        if db.is_read_only() {
            return Err(EngineError::ReadOnlyDatabase(db.name().to_string()));
        }
        if let Some(i) = self.parts.iter().position(|p| Arc::ptr_eq(&p.db, db)) {
            return Ok(&mut self.parts[i]);
        }
        let txn = db.next_txn_id();
        let undo_marks = self.parts.len();
        // A savepoint taken before this database joined covers none of its changes.
        for (_, marks) in &mut self.savepoints {
            if marks.len() == undo_marks {
                marks.push(0);
            }
        }
        self.parts.push(Participant {
            db: Arc::clone(db),
            txn,
            undo: db.undo_log(),
            ddl: false,
            identity_resets: Vec::new(),
            first_lsn: 0,
        });
        self.parts.last_mut().ok_or_else(|| EngineError::Internal("no participant".into()))
    }

    /// Records that TRUNCATE TABLE reset `table`'s identity cache entry in `db`, which was
    /// `saved`: a rollback of the truncate puts it back.
    pub(crate) fn note_identity_reset(
        &mut self,
        db: &Arc<Database>,
        table: u32,
        saved: Option<(i64, i64)>,
    ) -> Result<(), EngineError> {
        let part = self.part(db)?;
        let at = part.undo.len();
        part.identity_resets.push((at, table, saved));
        Ok(())
    }

    /// Marks the transaction as changing `db`'s catalog: its commit will be fully durable.
    pub fn mark_ddl(&mut self, db: &Arc<Database>) -> Result<(), EngineError> {
        self.part(db)?.ddl = true;
        Ok(())
    }

    /// Runs one logged row change on the tree at `root` and records its undo.
    fn row_change<T>(
        &mut self,
        db: &Arc<Database>,
        root: PageId,
        key: &[u8],
        kind: RowKind,
        change: impl FnOnce(&BTree<'_>, &mut DbLogger<'_>) -> Result<T, TreeError>,
    ) -> Result<T, EngineError> {
        // Before the change: the writer's rule of lock avoidance (`lock/writers.rs`).
        self.enter_writers(db.id(), root);
        self.own_changes += 1;
        let owner = self.owner.id();
        let part = self.part(db)?;
        part.check_log_room(0)?;
        let mut logger = db.owned_logger(part.txn, owner, LogMode::Row { root, key, kind });
        let result = change(&db.space().tree(root), &mut logger);
        let undo = logger.finish();
        let value = result.map_err(|e| db.name_full_error(fail(db, e), Some(root)))?;
        if let Some(row) = undo {
            part.undo.push(row);
        }
        Ok(value)
    }

    /// Inserts `key` -> `value` into the tree at `root`; `Ok(false)` if the key exists.
    pub fn tree_insert(
        &mut self,
        db: &Arc<Database>,
        root: PageId,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool, EngineError> {
        self.row_change(db, root, key, RowKind::Insert, |tree, log| {
            match tree.insert(log, key, value) {
                Ok(()) => Ok(true),
                Err(TreeError::DuplicateKey) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    /// Appends entries `from..` of `run` (keys ascending, above every key of the tree) to
    /// the tree at `root`, as many as its rightmost leaf holds, logged as one rows record
    /// with the undo of each (`BTree::append_run`); returns how many. 0: entry `from` is not
    /// known to be above every key, and the caller inserts it with
    /// [`Transaction::tree_insert`].
    pub fn tree_append(
        &mut self,
        db: &Arc<Database>,
        root: PageId,
        run: &AppendRun,
        from: usize,
    ) -> Result<usize, EngineError> {
        self.enter_writers(db.id(), root);
        let owner = self.owner.id();
        let part = self.part(db)?;
        // Room for a whole leaf's record, which may be logged as the leaf's image.
        part.check_log_room(2 * walden_storage::PAGE_SIZE as u64)?;
        let mut logger = db.owned_logger(part.txn, owner, LogMode::Rows { root });
        let result = db.space().tree(root).append_run(&mut logger, run, from);
        let lsn = logger.row_lsn();
        logger.finish();
        let n = result.map_err(|e| db.name_full_error(fail(db, e), Some(root)))?;
        if let Some(lsn) = lsn {
            for i in from..from + n {
                part.undo.push(RowUndo { lsn, root, key: run.key(i), undo: Undo::Delete });
            }
        }
        self.own_changes += n as u64;
        Ok(n)
    }

    /// Replaces the value under `key`; returns the old one (`None`: absent, nothing changed).
    pub fn tree_update(
        &mut self,
        db: &Arc<Database>,
        root: PageId,
        key: &[u8],
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, EngineError> {
        self.row_change(db, root, key, RowKind::Update, |tree, log| tree.update(log, key, value))
    }

    /// Deletes `key`; returns its old value (`None`: absent).
    pub fn tree_delete(
        &mut self,
        db: &Arc<Database>,
        root: PageId,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>, EngineError> {
        self.row_change(db, root, key, RowKind::Delete, |tree, log| tree.delete(log, key))
    }

    /// Stores a large value in overflow pages of `db`; returns its pointer. The pages are not
    /// reclaimed when the row goes away (a documented limit), so a rollback leaves them
    /// unreferenced but never dangling.
    pub fn write_blob(&mut self, db: &Arc<Database>, data: &[u8]) -> Result<Vec<u8>, EngineError> {
        let owner = self.owner.id();
        let part = self.part(db)?;
        // Each overflow page is logged whole.
        part.check_log_room(data.len() as u64 * 2)?;
        let mut logger = db.owned_logger(part.txn, owner, LogMode::Structure);
        let pointer = db
            .space()
            .write_blob(&mut logger, data)
            .map_err(|e| db.name_full_error(fail(db, e), None))?;
        Ok(pointer)
    }

    /// Creates a tree in `db` (DDL); returns its root.
    pub fn create_tree(
        &mut self,
        db: &Arc<Database>,
        object_id: u32,
        index_id: u16,
    ) -> Result<PageId, EngineError> {
        let owner = self.owner.id();
        let part = self.part(db)?;
        part.ddl = true;
        part.check_log_room(0)?;
        let mut logger = db.owned_logger(part.txn, owner, LogMode::Structure);
        let root = db
            .space()
            .create_tree(&mut logger, object_id, index_id)
            .map_err(|e| db.name_full_error(fail(db, e), None))?;
        Ok(root)
    }
}

/// Turns a tree error into an engine error, taking the database offline when the error means
/// the log or the disk failed (the change may be half applied in memory).
fn fail(db: &Database, e: TreeError) -> EngineError {
    let err = EngineError::from(e);
    if matches!(err, EngineError::Log(_) | EngineError::Io(_) | EngineError::Corrupt(_)) {
        db.take_offline(err.to_string());
    }
    err
}
