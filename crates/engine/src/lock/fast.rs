//! The fast path for intent locks on tables, after PostgreSQL's fast-path relation locks.
//!
//! Nearly every transaction that touches a table takes IS or IX on it, and intent modes never
//! conflict with each other: only S, U, SIX and X on the table ("strong" modes) conflict with
//! them. So an intent lock needs the shared lock table only when a strong lock on the table is
//! held or wanted. Otherwise it is recorded in one of [`FAST_SLOTS`] small lists, chosen by
//! the owner's id, each under its own mutex: no resource hash, no table probe, no entry made
//! and freed, and sessions on one table do not meet on that table's shard of the lock table.
//!
//! # The protocol
//!
//! `strong[p]` counts, for the tables whose partition is `p`, the owners that hold a strong
//! mode on one of them in the lock table, plus the strong requests under way.
//!
//! - **An intent request** locks its slot, and there upgrades the owner's entry for the table
//!   if it has one, or, if `strong[p]` is 0, adds one. Otherwise it goes to the lock table.
//! - **A strong request** first increments `strong[p]`, then *transfers*: it locks each slot
//!   in turn and moves every entry for its table into the lock table, as a grant to that
//!   entry's owner, before unlocking the slot. Then it asks the lock table as any request
//!   does. When it ends without making its owner a new strong holder (it failed, or the
//!   owner already held a strong mode), it decrements `strong[p]`; otherwise the release of
//!   that strong grant does.
//!
//! Why a strong grant always sees every intent lock on its table: an intent request reads
//! `strong[p]` and adds its entry inside one critical section of its slot, and the strong
//! request increments `strong[p]` before it takes that slot's mutex to transfer. If the
//! intent request's critical section comes first, the transfer finds the entry; if the
//! transfer's comes first, the increment happened before the intent request's read, which
//! sees it and goes to the lock table (or, if it reads 0, the strong request has already
//! ended and released). An entry upgraded in place (IS to IX) is still in its slot, so no
//! strong request has transferred it yet, and the one that will moves the upgraded mode.
//!
//! A transferred entry's owner still lists the table among its fast locks
//! ([`LockOwner`]); it finds the entry gone from its slot when it releases, and releases it in
//! the lock table instead. The move into the lock table happens while the slot is still
//! locked, so the entry is always in exactly one of the two places (lock order: a slot, then
//! a shard; nothing takes a slot while holding a shard).
//!
//! Deadlock detection needs no change: intent locks never wait for each other, and every lock
//! a strong request could wait for is in the lock table by the time it waits.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::manager::lock_mutex;
use super::owner::LockOwner;
use super::{owner_session, LockInfo, LockMode, LockStatus, OwnerId, Resource};
use walden_storage::hash::fmix64;

/// Slots of fast-path entries. Owners share them by session, so that no owner needs one
/// assigned: concurrent sessions rarely share one, and when they do it costs only a wait on
/// its mutex. A strong request locks every slot once, so they are few.
pub(super) const FAST_SLOTS: usize = 64;

/// Partitions of the strong-lock counts. A strong lock on one table sends the intent locks of
/// the other tables of its partition to the lock table too, so there are many.
const PARTITIONS: usize = 1024;

/// One fast-path intent lock.
#[derive(Debug, Clone, Copy)]
pub(super) struct FastLock {
    pub(super) owner: OwnerId,
    pub(super) db: u32,
    pub(super) object: u32,
    /// IS or IX.
    pub(super) mode: LockMode,
}

/// A slot's contents, under its mutex.
#[derive(Debug, Default)]
pub(super) struct SlotState {
    /// The entries, in no order. A vector: slots live as long as the lock manager, so it
    /// allocates only while it grows to the most entries the slot has had at once.
    pub(super) locks: Vec<FastLock>,
    /// Requests the slot granted, for [`LockStats::requests`](super::LockStats).
    pub(super) requests: u64,
}

/// A slot, aligned so that no two slots' mutexes share a cache line.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(super) struct Slot(pub(super) Mutex<SlotState>);

/// The fast path's shared state: the slots and the strong-lock counts.
#[derive(Debug)]
pub(super) struct FastPath {
    slots: Box<[Slot]>,
    strong: Box<[AtomicU32]>,
}

impl Default for FastPath {
    fn default() -> Self {
        FastPath {
            slots: (0..FAST_SLOTS).map(|_| Slot::default()).collect(),
            strong: (0..PARTITIONS).map(|_| AtomicU32::new(0)).collect(),
        }
    }
}

/// Whether `mode` conflicts with nothing but strong modes (see the module doc).
pub(super) fn is_intent(mode: LockMode) -> bool {
    matches!(mode, LockMode::IS | LockMode::IX)
}

/// The slot of owner `owner`: by the session that began it, so that a session's
/// transactions keep using one slot, whose cache line stays with the session's CPU.
pub(super) fn slot_of(owner: OwnerId) -> usize {
    (fmix64(u64::from(owner_session(owner))) as usize) & (FAST_SLOTS - 1)
}

fn partition(db: u32, object: u32) -> usize {
    (fmix64(u64::from(db) << 32 | u64::from(object)) as usize) & (PARTITIONS - 1)
}

impl FastPath {
    /// Takes intent mode `mode` on table (db, object) for `owner` in its slot, if it can:
    /// `Some(granted)` (`false`: the owner's entry already covered it), or `None` when the
    /// request must go to the lock table (a strong lock on the partition is held or wanted,
    /// or the owner's fast entry for the table has been transferred there).
    pub(super) fn lock(
        &self,
        owner: &mut LockOwner,
        db: u32,
        object: u32,
        mode: LockMode,
    ) -> Option<bool> {
        let id = owner.id();
        let mut slot = lock_mutex(&self.slots[owner.slot()].0);
        let found =
            slot.locks.iter_mut().find(|l| l.owner == id && l.db == db && l.object == object);
        if let Some(entry) = found {
            let granted = !entry.mode.covers(mode);
            entry.mode = entry.mode.join(mode);
            slot.requests += 1;
            return Some(granted);
        }
        if owner.has_fast(db, object)
            || self.strong[partition(db, object)].load(Ordering::SeqCst) != 0
        {
            return None;
        }
        slot.locks.push(FastLock { owner: id, db, object, mode });
        slot.requests += 1;
        drop(slot);
        owner.record_fast(db, object);
        Some(true)
    }

    /// Removes `owner`'s fast entry for table (db, object) from its slot: `false` if it is
    /// not there because a strong request moved it into the lock table.
    pub(super) fn unlock(&self, owner: &LockOwner, db: u32, object: u32) -> bool {
        let id = owner.id();
        let mut slot = lock_mutex(&self.slots[owner.slot()].0);
        let found =
            slot.locks.iter().position(|l| l.owner == id && l.db == db && l.object == object);
        found.map(|at| slot.locks.swap_remove(at)).is_some()
    }

    /// Announces a strong request on table (db, object): from now until [`FastPath::strong_ended`]
    /// no intent lock on its partition is taken in a slot. Then moves every fast entry for the
    /// table into the lock table through `grant`, each while its slot is still locked.
    pub(super) fn strong_begun(&self, db: u32, object: u32, mut grant: impl FnMut(&FastLock)) {
        self.strong[partition(db, object)].fetch_add(1, Ordering::SeqCst);
        for slot in self.slots.iter() {
            let mut slot = lock_mutex(&slot.0);
            slot.locks.retain(|l| {
                let moved = l.db == db && l.object == object;
                if moved {
                    grant(l);
                }
                !moved
            });
        }
    }

    /// A strong request ended without adding a strong holder, or a strong grant was released.
    pub(super) fn strong_ended(&self, db: u32, object: u32) {
        self.strong[partition(db, object)].fetch_sub(1, Ordering::SeqCst);
    }

    /// Every fast entry, as granted locks for `sys.dm_tran_locks`, and the requests granted.
    pub(super) fn snapshot(&self, rows: &mut Vec<LockInfo>) {
        for slot in self.slots.iter() {
            let slot = lock_mutex(&slot.0);
            rows.extend(slot.locks.iter().map(|l| LockInfo {
                resource: Resource::Object { db: l.db, object: l.object },
                mode: l.mode,
                owner: l.owner,
                status: LockStatus::Granted,
                waited: Duration::ZERO,
            }));
        }
    }

    /// The requests the slots granted.
    pub(super) fn requests(&self) -> u64 {
        self.slots.iter().map(|slot| lock_mutex(&slot.0).requests).sum()
    }
}
