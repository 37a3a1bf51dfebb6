//! The lock manager: SQL Server's lock modes, FIFO grants with conversions first, and deadlock
//! detection with a victim.
//!
//! # The shape
//!
//! Transactions (owners, by transaction id) lock resources (database, table, key) in modes
//! (IS, IX, S, SIX, U, X, and on keys SQL Server's key-range modes RangeS-S, RangeS-U,
//! RangeI-N, RangeX-X and the conversions between them) whose compatibility is SQL Server's
//! matrix ([`LockMode`]). The lock
//! table maps each locked resource to its *entry*: the granted owners with their modes and a
//! queue of waiting requests. It is cut into 64 shards by resource hash, each a mutex over a
//! `HashMap`, so sessions working on different rows rarely meet on a mutex. What each owner
//! holds is listed in its [`LockOwner`], which the owner's thread keeps (a transaction keeps
//! its own) and passes to every call: commit releases its locks by walking that list, and the
//! engine counts key locks per table there for escalation, so a lock costs one trip to one
//! shard and nothing else shared. A request that must wait parks on a condition variable of
//! its own and is woken by whoever grants it, so a grant wakes one thread, not a herd.
//!
//! Intent locks on tables (IS, IX), which nearly every transaction takes and which conflict
//! only with the strong table modes, usually bypass the lock table: they are kept in small
//! per-session slots until a strong request on the table moves them into it (`fast.rs`). So
//! do a transaction's first few key locks while nothing else is locked or wanted in their
//! bucket of keys, until another request on the same key publishes them to the lock table.
//!
//! Waiting is where deadlocks come from. A waiting request registers in the waits map, then
//! searches the waits-for graph for a cycle through its owner. An owner that is not waiting
//! has no edges out, so every cycle is closed by some request starting to wait, and that
//! request's search finds it; the search is repeated every 100 ms of waiting for the rare
//! search that gave up because the graph kept changing under it. The search reads one shard
//! at a time, so what it finds may be stale; before acting, it locks every shard on the cycle
//! at once and checks every edge again. Only a cycle that held at one instant is a deadlock,
//! and then no member of it can move without one of them giving up: that is why there are no
//! false deadlocks.
//!
//! # Invariants
//!
//! 1. Different owners' granted modes on one resource are pairwise compatible, and an owner
//!    holds at most one mode per resource: a conversion replaces it with the join.
//! 2. A lock granted to an owner is listed in its [`LockOwner`], and only while it is granted.
//!    The list is the owner's own: only its thread reads or changes it, outside any mutex. A
//!    grant the owner takes itself is listed as the call returns; one granted by another
//!    thread's grant pass while the owner waits is listed by the owner's thread as its wait
//!    ends, and until then nothing looks at the list, since that thread is the only one that
//!    could.
//! 3. An entry is in the table exactly while it has a granted owner or a waiter.
//! 4. In a queue, waiting conversions come before waiting new requests, each in arrival
//!    order. A new request is granted only if its mode is compatible with every granted mode
//!    and no live request waits ahead of it (FIFO: a stream of S cannot starve an X). A
//!    conversion is granted as soon as the join of its held and wanted modes is compatible
//!    with every other owner's granted mode, whatever waits.
//! 5. A waiter leaves its queue in one of three ways: granted (removed by the granter, who
//!    moves it into the granted list, records it and wakes it), chosen as a deadlock victim
//!    (marked by the detector, removed by its own thread) or timed out (removed by its own
//!    thread). Whoever removes a waiter runs the grant pass, since the requests behind it may
//!    now go.
//! 6. A waiter marked as a victim counts neither as a waiter (for FIFO) nor in the waits-for
//!    graph: it is already leaving.
//! 7. Locks are taken in one order: the waits map, then shards in ascending index. Only the
//!    detector holds more than one shard, and nothing takes the waits map while holding
//!    another lock of this module. A fast-path slot may be held while taking one shard (a
//!    transfer), never the other way round.
//! 8. A deadlock is declared only for a cycle whose every edge the detector has checked
//!    while holding all of the cycle's shards, and it chooses exactly one victim per cycle.
//!
//! Key-range modes need nothing of their own from these rules. Each mode is a (range, key)
//! pair, and its compatibility, "covers" and join are the parts' (`mode.rs`); compatibility
//! stays symmetric and anti-monotone in "covers", which is all that invariants 1 and 4 (a
//! conversion checked owner by owner against the join) and the waits-for graph rely on. The
//! fast path for keys takes a key lock in any mode, so a range lock on a key nobody else
//! wants stays in the owner's slot like any other; the fast path for tables is for IS and IX
//! only, which range modes never are. Two additions serve the engine's key-range protocol
//! (`docs/locking.md`, "Key-range locking"): [`LockManager::range_holders`], a count of the
//! owners that took or are taking RangeS-* or RangeX-* locks, kept by the owner's flag and
//! uncounted by `release_all`, and [`LockManager::lock_fresh`], which says whether a grant
//! is new to its owner so that RangeI-N can be given back after an insert without taking
//! away a lock the owner held before.
//!
//! The algorithm, the victim rule and the intended use (the lock hierarchy, isolation levels,
//! escalation) are in `docs/locking.md`.

mod deadlock;
mod fast;
mod ghosts;
mod manager;
mod mode;
mod owner;
mod resource;
mod small;
mod writers;

use std::error::Error;
use std::fmt;
use std::time::Duration;

pub use ghosts::Ghosts;
pub use manager::LockManager;
pub use mode::LockMode;
pub use owner::LockOwner;
pub use resource::{Resource, END_OF_INDEX};
pub(crate) use small::SmallList;
pub use writers::{TreeWriters, WritersSeen};

/// Who owns a lock: a transaction id. One that [`owner_id`] made carries the session that
/// began the transaction in its low 16 bits, for `sys.dm_tran_locks.request_session_id`, and
/// a sequence number above them, so that ids still order transactions by age (the deadlock
/// victim's tie-break).
pub type OwnerId = u64;

/// The owner id of the `sequence`-th transaction, begun by session `session` (0: the
/// engine's own work).
pub fn owner_id(sequence: u64, session: u16) -> OwnerId {
    sequence << 16 | u64::from(session)
}

/// The session that began owner `owner`'s transaction (0: none, the engine's own work).
pub fn owner_session(owner: OwnerId) -> u16 {
    owner as u16
}

/// Why a lock request failed. The owner keeps the locks it already had; the transaction layer
/// rolls back (for 1205) or fails the statement (for 1222, as SQL Server does) and calls
/// [`LockManager::release_all`] when the transaction ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// The wait outlasted the timeout: SQL Server's error 1222.
    Timeout {
        /// The resource requested.
        resource: Resource,
        /// The mode requested.
        mode: LockMode,
    },
    /// The request closed a cycle of waits and its owner was chosen as the victim: SQL
    /// Server's error 1205.
    Deadlock {
        /// The resource requested.
        resource: Resource,
        /// The mode requested.
        mode: LockMode,
    },
    /// The owner's [`Interrupt`] ended the wait: its client cancelled the request. SQL
    /// Server numbers this 3617 internally and sends the client no message, only the
    /// acknowledgement of its attention.
    Cancelled {
        /// The resource requested.
        resource: Resource,
        /// The mode requested.
        mode: LockMode,
    },
}

/// What ends a lock wait early besides its timeout: the request the owner serves was
/// cancelled by its client (a TDS attention). The waiting thread asks, at most every
/// [`INTERRUPT_POLL`], so asking must be cheap; it never blocks.
pub trait Interrupt: Send + Sync + fmt::Debug {
    /// Whether the owner's request is cancelled.
    fn interrupted(&self) -> bool;
}

/// What a lock owner gives up before it waits: locks its session holds for transactions
/// that are committed but whose commit is not hardened yet (`deferred_commit.rs`). Waiting
/// while holding them could deadlock: whoever waits for them would wait for this owner.
pub trait BeforeLockWait: Send + Sync + fmt::Debug {
    /// Whether there is anything to give up. Asked with a lock-table shard's mutex held, on
    /// every request that cannot be granted at once: it must be cheap and never block.
    fn holds_deferred(&self) -> bool;
    /// Gives it up: hardens the commits and releases their locks. Called with no mutex of
    /// the lock manager held.
    fn give_up_deferred(&self);
}

/// How often a waiting owner with an [`Interrupt`] asks it: the longest a cancelled lock
/// wait goes on.
pub const INTERRUPT_POLL: Duration = Duration::from_millis(20);

impl LockError {
    /// SQL Server's error number: 1222, 1205 or 3617 (cancelled).
    pub fn number(&self) -> i32 {
        match self {
            LockError::Timeout { .. } => 1222,
            LockError::Deadlock { .. } => 1205,
            LockError::Cancelled { .. } => 3617,
        }
    }

    /// SQL Server's message text for the session `process_id` (the lock manager knows
    /// transactions, not sessions, so [`Display`](fmt::Display) cannot fill it in).
    pub fn sql_message(&self, process_id: i32) -> String {
        match self {
            LockError::Timeout { .. } => "Lock request time out period exceeded.".to_string(),
            LockError::Deadlock { .. } => format!(
                "Transaction (Process ID {process_id}) was deadlocked on lock resources with \
                 another process and has been chosen as the deadlock victim. Rerun the \
                 transaction."
            ),
            LockError::Cancelled { .. } => {
                "The request was cancelled while it waited for a lock.".to_string()
            }
        }
    }
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Timeout { resource, mode } => write!(
                f,
                "Lock request time out period exceeded. ({mode} on {resource}, error 1222)"
            ),
            LockError::Deadlock { resource, mode } => write!(
                f,
                "Transaction was deadlocked on lock resources with another process and has \
                 been chosen as the deadlock victim. Rerun the transaction. ({mode} on \
                 {resource}, error 1205)"
            ),
            LockError::Cancelled { resource, mode } => write!(
                f,
                "The request was cancelled while it waited for a lock. ({mode} on {resource}, \
                 error 3617)"
            ),
        }
    }
}

impl Error for LockError {}

/// The state of one row of [`LockManager::snapshot`]: `sys.dm_tran_locks.request_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockStatus {
    /// Held.
    Granted,
    /// A new request waiting.
    Waiting,
    /// A conversion waiting; the owner's granted mode is in a `Granted` row of its own.
    Converting,
}

impl LockStatus {
    /// SQL Server's name: GRANT, WAIT or CONVERT.
    pub fn name(self) -> &'static str {
        match self {
            LockStatus::Granted => "GRANT",
            LockStatus::Waiting => "WAIT",
            LockStatus::Converting => "CONVERT",
        }
    }
}

/// One granted lock or waiting request, for `sys.dm_tran_locks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockInfo {
    /// What is locked.
    pub resource: Resource,
    /// The granted mode; for a waiting request, the mode it waits for (for a conversion, the
    /// join it converts to).
    pub mode: LockMode,
    /// The transaction.
    pub owner: OwnerId,
    /// Granted, waiting or converting.
    pub status: LockStatus,
    /// How long a waiting or converting request has waited so far (zero when granted).
    pub waited: Duration,
}

/// What the lock manager has done since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockStats {
    /// Calls to [`LockManager::lock`] (SQL Server's "Lock Requests/sec" counter).
    pub requests: u64,
    /// Requests that had to wait ("Lock Waits/sec"); failed zero-timeout requests are not
    /// counted here, since they did not wait.
    pub waits: u64,
    /// Requests that failed with 1222 ("Lock Timeouts/sec"), zero-timeout ones included.
    pub timeouts: u64,
    /// Requests that failed with 1205 ("Number of Deadlocks/sec").
    pub deadlocks: u64,
    /// Time spent waiting, over all waits that ended ("Lock Wait Time (ms)").
    pub wait_time: Duration,
}

/// The waits that ended for one requested mode: a `sys.dm_os_wait_stats` row (`LCK_M_S`,
/// `LCK_M_X`...). A conversion counts under the mode it asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockWaitStat {
    /// Waits that ended (granted, timed out or chosen as deadlock victim).
    pub count: u64,
    /// Their total duration.
    pub total: Duration,
    /// The longest of them.
    pub max: Duration,
}
