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
//!
//! # Key locks
//!
//! The slots also hold key locks, in any mode, of owners that have a *bucket* of keys to
//! themselves: [`KEY_BUCKETS`] buckets by table hash, each with one 64-bit word whose low half
//! counts the fast key locks in the bucket and whose high half counts the lock table's key
//! grants and requests under way there.
//!
//! - **A key request** locks its slot and adds 1 to its bucket's word; only if the word was 0
//!   does it add an entry. Otherwise it takes the 1 back and goes to the lock table.
//! - **A lock-table key request** adds 1 to the word's high half and, if the low half was not
//!   0, *publishes*: it locks each slot in turn and moves every entry on its key into the lock
//!   table. A request that ends in a new grant keeps its count until the grant is released;
//!   any other takes it back.
//!
//! Both counts live in one word so that each request reads the other side's count in the same
//! atomic operation that announces its own: of two requests in a bucket, the one whose
//! addition comes second sees the first. A fast key lock is granted only while nothing else is
//! in its bucket; every later request on the same key either sees it and publishes it (locking
//! its slot after the critical section that added it, as a transfer does) or is a fast
//! request, which sees the bucket taken and goes to the lock table, which publishes it first.
//! So two requests on one key always meet in the lock table before either is granted against
//! the other. The protocol and its costs are in `docs/locking.md`.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
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

/// Buckets of keys for the key fast path, by table hash. Enough that two owners' fast key
/// locks rarely share one (the second then goes to the lock table) and a lock-table key
/// request rarely finds its bucket's fast count set and publishes for nothing; few enough
/// that their words (8 KB) stay in a core's first-level cache, since every key request
/// touches one at random (with 16,384 buckets that touch was the costliest instruction of
/// a small transaction's locking).
pub(super) const KEY_BUCKETS: usize = 1 << 10;

/// One lock-table key grant or request in a bucket's word (its high half); a fast key lock is
/// 1 (the low half).
const TABLE_KEY: u64 = 1 << 32;

/// The most key locks an owner holds through the fast path: a small transaction's rows. The
/// rest of a bigger transaction's keys go to the lock table, which keeps the slots, which a
/// publication scans, short.
pub(super) const FAST_KEYS: usize = 4;

/// One fast-path key lock.
#[derive(Debug, Clone)]
pub(super) struct FastKey {
    pub(super) owner: OwnerId,
    /// Always a KEY resource.
    pub(super) res: Resource,
    /// Its bucket, from its table hash.
    pub(super) bucket: usize,
    pub(super) mode: LockMode,
}

/// A slot's contents, under its mutex.
#[derive(Debug, Default)]
pub(super) struct SlotState {
    /// The entries, in no order. A vector: slots live as long as the lock manager, so it
    /// allocates only while it grows to the most entries the slot has had at once.
    pub(super) locks: Vec<FastLock>,
    /// The key entries, in no order; a vector for the same reason.
    pub(super) keys: Vec<FastKey>,
    /// Requests the slot granted, for [`LockStats::requests`](super::LockStats).
    pub(super) requests: u64,
}

/// A slot, aligned so that no two slots' mutexes share a cache line.
#[repr(align(128))]
#[derive(Debug, Default)]
pub(super) struct Slot(pub(super) Mutex<SlotState>);

/// The fast path's shared state: the slots, the strong-lock counts and the key counts.
#[derive(Debug)]
pub(super) struct FastPath {
    slots: Box<[Slot]>,
    strong: Box<[AtomicU32]>,
    /// Per key bucket: the fast key locks held there (low half) and the lock table's key
    /// grants there plus its key requests under way (high half).
    keys: Box<[AtomicU64]>,
}

impl Default for FastPath {
    fn default() -> Self {
        FastPath {
            slots: (0..FAST_SLOTS).map(|_| Slot::default()).collect(),
            strong: (0..PARTITIONS).map(|_| AtomicU32::new(0)).collect(),
            keys: (0..KEY_BUCKETS).map(|_| AtomicU64::new(0)).collect(),
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
        if owner.has_fast(db, object) || !self.add_table(&mut slot, id, (db, object), mode) {
            return None;
        }
        drop(slot);
        owner.record_fast(db, object);
        Some(true)
    }

    /// Adds `owner`'s intent entry for table (db, object) to its slot, held locked, unless a
    /// strong lock on the table's partition is held or wanted: the intent request's critical
    /// section of the protocol.
    fn add_table(
        &self,
        slot: &mut SlotState,
        owner: OwnerId,
        (db, object): (u32, u32),
        mode: LockMode,
    ) -> bool {
        if self.strong[partition(db, object)].load(Ordering::SeqCst) != 0 {
            return false;
        }
        slot.locks.push(FastLock { owner, db, object, mode });
        slot.requests += 1;
        true
    }

    /// Adds `owner`'s entry for key `res` of bucket `bucket` to its slot, held locked, if the
    /// bucket is the owner's alone: the key request's critical section of the protocol.
    fn add_key(
        &self,
        slot: &mut SlotState,
        owner: OwnerId,
        res: &Resource,
        bucket: usize,
        mode: LockMode,
    ) -> bool {
        let word = &self.keys[bucket];
        if word.fetch_add(1, Ordering::SeqCst) != 0 {
            word.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        slot.keys.push(FastKey { owner, res: res.clone(), bucket, mode });
        slot.requests += 1;
        true
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

    /// Removes `owner`'s fast entry for table (db, object) from its slot if its mode is
    /// `mode`: `Some(removed)`, or `None` if the entry is not there because a strong request
    /// moved it into the lock table.
    pub(super) fn unlock_in(
        &self,
        owner: &LockOwner,
        db: u32,
        object: u32,
        mode: LockMode,
    ) -> Option<bool> {
        let id = owner.id();
        let mut slot = lock_mutex(&self.slots[owner.slot()].0);
        let at =
            slot.locks.iter().position(|l| l.owner == id && l.db == db && l.object == object)?;
        let held = slot.locks.get(at).is_some_and(|l| l.mode == mode);
        if held {
            slot.locks.swap_remove(at);
        }
        Some(held)
    }

    /// Takes `mode` on key `res`, of bucket `bucket`, for `owner` in its slot, if it can:
    /// `Some(granted)` (`false`: the owner's entry already covered it), or `None` when the
    /// request must go to the lock table (the bucket is not the owner's alone, the owner has
    /// its share of fast keys, or its fast entry for the key has been published).
    pub(super) fn lock_key(
        &self,
        owner: &mut LockOwner,
        res: &Resource,
        bucket: usize,
        mode: LockMode,
    ) -> Option<bool> {
        let id = owner.id();
        let holds = owner.has_fast_key(res);
        if !holds && owner.fast_key_count() >= FAST_KEYS {
            return None;
        }
        let mut slot = lock_mutex(&self.slots[owner.slot()].0);
        if holds {
            let entry = slot.keys.iter_mut().find(|k| k.owner == id && k.res == *res)?;
            let granted = !entry.mode.covers(mode);
            entry.mode = entry.mode.join(mode);
            slot.requests += 1;
            return Some(granted);
        }
        if !self.add_key(&mut slot, id, res, bucket, mode) {
            return None;
        }
        drop(slot);
        owner.record_fast_key(res);
        Some(true)
    }

    /// Takes intent mode `intent` on table (db, object) and then `mode` on its key `key`, of
    /// bucket `bucket`, for `owner`, which holds no lock on the table (a lock it holds on the
    /// key in the lock table is counted in the key's bucket word, which sends the key there
    /// again), in one critical section of its slot:
    /// `None` when the table lock must go to the lock table (then nothing is taken),
    /// `Some(true)` when both were taken, `Some(false)` when only the table lock was and the
    /// key must go to the lock table. Each under the rules of [`FastPath::lock`] and
    /// [`FastPath::lock_key`].
    pub(super) fn lock_table_and_key(
        &self,
        owner: &mut LockOwner,
        (db, object): (u32, u32),
        intent: LockMode,
        key: &Resource,
        bucket: usize,
        mode: LockMode,
    ) -> Option<bool> {
        let id = owner.id();
        let mut slot = lock_mutex(&self.slots[owner.slot()].0);
        if !self.add_table(&mut slot, id, (db, object), intent) {
            return None;
        }
        let key_taken =
            owner.fast_key_count() < FAST_KEYS && self.add_key(&mut slot, id, key, bucket, mode);
        drop(slot);
        owner.record_fast(db, object);
        if key_taken {
            owner.record_fast_key(key);
        }
        Some(key_taken)
    }

    /// Removes `owner`'s fast entry on key `res` from its slot: `false` if it is not there
    /// because a publication moved it into the lock table.
    pub(super) fn unlock_key(&self, owner: &LockOwner, res: &Resource) -> bool {
        let mut slot = lock_mutex(&self.slots[owner.slot()].0);
        self.remove_key(&mut slot, owner.id(), res)
    }

    fn remove_key(&self, slot: &mut SlotState, owner: OwnerId, res: &Resource) -> bool {
        let Some(at) = slot.keys.iter().position(|k| k.owner == owner && k.res == *res) else {
            return false;
        };
        let entry = slot.keys.swap_remove(at);
        self.keys[entry.bucket].fetch_sub(1, Ordering::SeqCst);
        true
    }

    /// Removes every fast entry of `owner`, tables and keys, in one pass over its slot. If
    /// some were not there (a transfer or publication moved them into the lock table), it
    /// calls `in_table` for every fast lock of the owner, to be released there: releasing a
    /// lock the owner does not hold in the lock table does nothing, and that case is rare
    /// enough not to be worth telling the moved ones apart (a shard taken while the slot is
    /// held: the permitted order).
    pub(super) fn release_owner(&self, owner: &LockOwner, mut in_table: impl FnMut(Resource)) {
        let id = owner.id();
        let mut slot = lock_mutex(&self.slots[owner.slot()].0);
        let mut keys_left = owner.fast_key_count();
        slot.keys.retain(|k| {
            let mine = k.owner == id;
            if mine {
                self.keys[k.bucket].fetch_sub(1, Ordering::SeqCst);
                keys_left = keys_left.saturating_sub(1);
            }
            !mine
        });
        let mut tables_left = owner.fast_table_count();
        slot.locks.retain(|l| {
            let mine = l.owner == id;
            tables_left = tables_left.saturating_sub(usize::from(mine));
            !mine
        });
        if keys_left > 0 {
            owner.fast_keys().for_each(|res| in_table(res.clone()));
        }
        if tables_left > 0 {
            owner.fast_tables().for_each(|&(db, object)| in_table(Resource::Object { db, object }));
        }
    }

    /// Announces a lock-table request on key `res`, of bucket `bucket`: from now until
    /// [`FastPath::key_request_ended`] no fast key lock is granted in the bucket. Then, if any
    /// is held there, moves every fast entry on `res` into the lock table through `grant`,
    /// each while its slot is still locked.
    pub(super) fn key_request_begun(
        &self,
        res: &Resource,
        bucket: usize,
        mut grant: impl FnMut(&FastKey),
    ) {
        let word = &self.keys[bucket];
        if word.fetch_add(TABLE_KEY, Ordering::SeqCst) & (TABLE_KEY - 1) == 0 {
            return;
        }
        for slot in self.slots.iter() {
            let mut slot = lock_mutex(&slot.0);
            slot.keys.retain(|k| {
                let moved = k.res == *res;
                if moved {
                    grant(k);
                    // From the fast count to the lock table's in one step (the low half is at
                    // least 1, so nothing borrows), so that the bucket never looks empty.
                    word.fetch_add(TABLE_KEY - 1, Ordering::SeqCst);
                }
                !moved
            });
        }
    }

    /// A lock-table key request of bucket `bucket` ended without a new grant, or a key grant
    /// there was released.
    pub(super) fn key_request_ended(&self, bucket: usize) {
        self.keys[bucket].fetch_sub(TABLE_KEY, Ordering::SeqCst);
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
            rows.extend(slot.keys.iter().map(|k| LockInfo {
                resource: k.res.clone(),
                mode: k.mode,
                owner: k.owner,
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
