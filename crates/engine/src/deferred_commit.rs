//! Fully durable commits of one session that share a log flush: the wait for the flush is
//! deferred until the session's client could learn of them.
//!
//! A client may send many calls in one request: mssql-jdbc's `executeBatch` with autocommit
//! sends its 128 INSERTs as 128 RPCs in one message, each its own transaction, as SQL Server
//! runs them. A fully durable commit waits for its log flush before it returns, so such a
//! request costs one flush per call, one after the other, although the client reads none of
//! their outcomes before the response arrives.
//!
//! [`DeferredCommits`] lets those commits share a flush without weakening what full
//! durability promises anyone:
//!
//! * **The client** learns that a commit succeeded only once its commit record is hardened:
//!   the server hardens a session's deferred commits before any byte of a response leaves
//!   for the client (`walden::serve::output`), so the client reads no DONE of a commit a
//!   crash could still take away.
//! * **Other sessions** cannot read or change what a deferred commit changed until it is
//!   hardened: the transaction is committed in the log, but it keeps its locks, stays a
//!   writer of its trees (so READ COMMITTED readers take their row locks, `lock/writers.rs`)
//!   and keeps its deleted keys as ghosts (`lock/ghosts.rs`) until then. A reader waits for
//!   its rows as for an uncommitted change, and never sees a change that a crash could take
//!   away.
//! * **Recovery** finds the commit record in log order: a crash before the flush loses the
//!   commit as it loses any unhardened one, and nobody had been told of it.
//!
//! **No deadlock.** A session never waits for a lock while it holds deferred commits: before
//! any lock wait of its own the lock manager has it harden them and give their locks back
//! ([`BeforeLockWait`]), so whoever waits for a deferred commit's lock waits for a flush,
//! never for the session. The session also hardens them before it sleeps in `WAITFOR`, and
//! once [`MAX_DEFERRED`] are waiting.
//!
//! Only a commit that is fully durable in one database and changed no catalog is deferred
//! ([`Transaction::commit_deferring`]); any other commit waits as before.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use walden_log::Lsn;

use crate::lock::BeforeLockWait;
use crate::{Database, EngineError, Transaction};

/// The most commits one session keeps deferred: the next one hardens them all. It bounds
/// the memory and the locks they hold, and how long another session can wait for them.
pub const MAX_DEFERRED: usize = 1024;

/// A committed transaction whose commit record may not be hardened yet.
#[derive(Debug)]
struct Deferred {
    /// Still holding its locks, its tree partitions and its ghosts.
    txn: Transaction,
    db: Arc<Database>,
    lsn: Lsn,
}

/// A session's deferred commits (see the module's documentation).
#[derive(Debug, Default)]
pub struct DeferredCommits {
    pending: Mutex<Pending>,
    /// Whether `pending` holds a commit, and whether a flush has failed: asked before every
    /// packet a response sends and before every lock wait, so they must not take the mutex.
    any: AtomicBool,
    failed: AtomicBool,
}

#[derive(Debug, Default)]
struct Pending {
    commits: Vec<Deferred>,
    /// Why a flush failed, once one has: every later [`DeferredCommits::harden`] fails too,
    /// so the failure reaches whoever reports commits to the client, whichever caller of
    /// `harden` met it first.
    failed: Option<String>,
}

impl DeferredCommits {
    pub fn new() -> Arc<DeferredCommits> {
        Arc::new(DeferredCommits::default())
    }

    /// Whether every commit is hardened and no flush failed: [`DeferredCommits::harden`]
    /// has nothing to do or to report.
    pub fn settled(&self) -> bool {
        !self.any.load(Ordering::Acquire) && !self.failed.load(Ordering::Acquire)
    }

    /// Hardens every deferred commit (one flush per database covers all of its commits),
    /// then ends their transactions: their locks, tree partitions and ghosts are given back.
    /// An error means a flush failed: the commits it covered may be lost, and the caller must
    /// not report them to the client as committed.
    pub fn harden(&self) -> Result<(), EngineError> {
        let (commits, failed) = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            self.any.store(false, Ordering::Release);
            (std::mem::take(&mut pending.commits), pending.failed.clone())
        };
        let mut failure = failed;
        let mut hardened: Vec<(u32, Lsn)> = Vec::new();
        for d in commits.iter().rev() {
            let id = d.db.id();
            if hardened.iter().any(|&(db, lsn)| db == id && lsn >= d.lsn) {
                continue;
            }
            // The newest commit of each database comes first (the list is in commit order):
            // its flush hardens every older one of the same log.
            match d.db.harden_commit(d.lsn) {
                Ok(()) => hardened.push((id, d.lsn)),
                Err(e) => {
                    failure.get_or_insert_with(|| e.to_string());
                    hardened.push((id, d.lsn));
                }
            }
        }
        // Given back even after a failed flush: the database is offline then, and nobody
        // must wait for these locks for ever.
        for d in commits {
            d.txn.end_deferred();
        }
        match failure {
            None => Ok(()),
            Some(why) => {
                let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
                pending.failed.get_or_insert_with(|| why.clone());
                self.failed.store(true, Ordering::Release);
                Err(EngineError::Log(why))
            }
        }
    }

    /// Keeps `txn`, committed at `lsn` in `db` and not waited for; hardens all once
    /// [`MAX_DEFERRED`] wait.
    pub(crate) fn push(&self, txn: Transaction, db: Arc<Database>, lsn: Lsn) {
        let full = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            pending.commits.push(Deferred { txn, db, lsn });
            self.any.store(true, Ordering::Release);
            pending.commits.len() >= MAX_DEFERRED
        };
        if full {
            // A failure is kept for the caller that reports to the client.
            let _ = self.harden();
        }
    }
}

impl BeforeLockWait for DeferredCommits {
    fn holds_deferred(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    fn give_up_deferred(&self) {
        // A failure is kept for the caller that reports to the client.
        let _ = self.harden();
    }
}

impl Drop for DeferredCommits {
    /// A session that goes away still hardens what it deferred and gives back its locks.
    fn drop(&mut self) {
        let _ = self.harden();
    }
}
