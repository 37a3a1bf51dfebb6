//! The lock table: a resource's key and its hash, which picks both the shard and the bucket;
//! the shards, each a hash map under its own cache-line-aligned mutex with its share of the
//! counters; and each resource's entry, its granted owners (pairwise compatible, one mode each)
//! and its queue of waiters (conversions first, then new requests, each in arrival order), with
//! the rules that grant from it. Everything here is read and changed under its shard's mutex.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex};
use walden_storage::hash::{fmix64, FastBuild};

use crate::lock::small::SmallList;
use crate::lock::{fast, LockMode, OwnerId, Resource};

/// Shards of the lock table. A power of two; 64 keeps two sessions working on different rows
/// off each other's mutex almost always, for 8 KB of mutexes.
pub(super) const SHARDS: usize = 64;

/// The fewest slots a shard's table is shrunk to (see [`ShardState::shrink_if_sparse`]).
pub(super) const MIN_TABLE: usize = 16;

/// A resource as the lock table keys it, with its table hash: computed once per request, the
/// hash picks both the shard and, passed through by [`KeyHasher`], the bucket.
#[derive(Clone, PartialEq, Eq)]
pub(in crate::lock) struct TableKey {
    hash: u64,
    pub(in crate::lock) res: Resource,
}

impl TableKey {
    pub(in crate::lock) fn of(res: &Resource) -> TableKey {
        TableKey { hash: table_hash(res), res: res.clone() }
    }

    /// The shard: bits 32..38 of the hash. `HashMap` indexes buckets with the low bits and
    /// tags them with the top seven, so a shard chosen by either would leave every resource of
    /// a shard with the same bucket bits or the same tag.
    pub(in crate::lock) fn shard(&self) -> usize {
        ((self.hash >> 32) as usize) & (SHARDS - 1)
    }

    /// The bucket of the key fast path (`fast.rs`): bits 16..32 of the hash, apart from the
    /// shard's and the tag's bits.
    pub(in crate::lock) fn bucket(&self) -> usize {
        ((self.hash >> 16) as usize) & (fast::KEY_BUCKETS - 1)
    }
}

impl Hash for TableKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The table hash of a resource: its ids packed into two words, mixed by one multiply and
/// MurmurHash3's finalizer, which sets every bit the shard, the bucket and the tag are taken
/// from. Every lock request and release computes one, so it is a short chain of multiplies
/// rather than one per field, as the derived `Hash` through `FastHasher` would be. Equal
/// resources hash alike; unequal ones that collide cost a comparison, never correctness.
pub(super) fn table_hash(res: &Resource) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let (kind, ids, extra) = match *res {
        Resource::Database(db) => (0, u64::from(db), 0),
        Resource::Object { db, object } => (1, (u64::from(db) << 32) | u64::from(object), 0),
        // The key hash is FNV-1a of the key bytes: already spread, but not in every bit.
        Resource::Key { db, object, index, hash } => {
            (2, (u64::from(db) << 32) | u64::from(object), hash ^ (u64::from(index) << 56))
        }
        Resource::Other { db, name } => (3, u64::from(db), name),
        // Kind 3 as well, told apart by the top bit of the hash's word.
        Resource::Application { db, hash } => (3, u64::from(db) | 1 << 63, hash),
    };
    fmix64((ids ^ (kind << 62)).wrapping_mul(K) ^ extra)
}

/// The lock table's hasher: a [`TableKey`] carries its hash already, so it passes it through.
#[derive(Default)]
pub(in crate::lock) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }

    /// Not called for a [`TableKey`]; it folds the bytes in, to be a hasher all the same.
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
}

/// One shard of the lock table, aligned so that no two shards' mutexes share a cache line.
#[repr(align(128))]
pub(in crate::lock) struct Shard(pub(in crate::lock) Mutex<ShardState>);

/// A shard's contents, all under the shard's mutex. Small enough that the mutex, the table's
/// header and the request counter, which every request touches, share one cache line; the
/// counters that only waits touch are a pointer away.
#[derive(Default)]
pub(in crate::lock) struct ShardState {
    /// The entries of the resources of this shard that are locked or waited for (invariant 3).
    pub(in crate::lock) table: HashMap<TableKey, LockEntry, BuildHasherDefault<KeyHasher>>,
    /// Requests on this shard's resources. This and `counters` are the shard's share of
    /// [`LockStats`], kept here rather than in shared atomics so that counting costs no
    /// cache-line traffic between threads working on different shards.
    ///
    /// [`LockStats`]: crate::lock::LockStats
    pub(super) requests: u64,
    /// The next waiter id; a waiting thread finds its request in the queue by it.
    pub(super) next_waiter: u64,
    pub(super) counters: Box<Counters>,
}

impl ShardState {
    /// Gives back the slots of a table left sparse by a burst of locks (a big transaction's
    /// thousands of keys), so that the buckets later requests probe stay few and in cache.
    /// Only a table of more than `4 * MIN_TABLE` slots shrinks, once under an eighth full, and
    /// to half full but no fewer than `MIN_TABLE` slots: a table does not shrink and grow by
    /// turns, and a shard in steady use keeps its allocation.
    pub(super) fn shrink_if_sparse(&mut self) {
        let capacity = self.table.capacity();
        if capacity > 4 * MIN_TABLE && self.table.len() * 8 < capacity {
            self.table.shrink_to((self.table.len() * 2).max(MIN_TABLE));
        }
    }
}

/// The counters of waits, timeouts and deadlocks of one shard.
#[derive(Default, Clone, Copy)]
pub(super) struct Counters {
    pub(super) waits: u64,
    pub(super) timeouts: u64,
    pub(super) deadlocks: u64,
    pub(super) wait_nanos: u64,
    /// Per requested mode, in [`LockMode::ALL`] order: (waits ended, total and longest
    /// nanoseconds), for the `LCK_M_*` wait types.
    pub(super) mode_waits: [(u64, u64, u64); LockMode::ALL.len()],
}

impl Counters {
    /// Records a wait for `mode` that ended after `nanos`.
    pub(super) fn wait_ended(&mut self, mode: LockMode, nanos: u64) {
        self.wait_nanos = self.wait_nanos.saturating_add(nanos);
        let w = &mut self.mode_waits[mode.index()];
        w.0 += 1;
        w.1 = w.1.saturating_add(nanos);
        w.2 = w.2.max(nanos);
    }
}

/// One resource's locks. Under its shard's mutex.
pub(in crate::lock) struct LockEntry {
    /// Granted owners and their modes: one mode per owner, pairwise compatible (invariant 1).
    /// A list, not a map: nearly every resource has one or two owners, and they fit inline,
    /// so locking a resource nobody holds allocates nothing.
    pub(super) granted: SmallList<(OwnerId, LockMode), 2>,
    /// Waiting requests: conversions, then new requests, each in arrival order (invariant 4).
    pub(in crate::lock) queue: Vec<Waiter>,
}

/// A waiting request. Under its shard's mutex.
pub(in crate::lock) struct Waiter {
    /// Unique within the shard.
    pub(super) id: u64,
    /// Who waits.
    pub(in crate::lock) owner: OwnerId,
    /// The mode asked for; a conversion waits for its join with the held mode.
    pub(super) mode: LockMode,
    /// The owner held a mode when it asked: it queues ahead of new requests and is granted by
    /// the conversion rule.
    pub(super) conversion: bool,
    /// Chosen as a deadlock victim and leaving (invariant 6).
    pub(in crate::lock) victim: bool,
    /// The owner's deadlock priority when it asked. A deadlock's members all wait, so the
    /// detector finds each one's priority here, under the shard locks it holds anyway.
    pub(in crate::lock) priority: i32,
    /// What the waiting thread sleeps on, with the shard's mutex. Whoever grants or marks the
    /// request notifies it.
    pub(in crate::lock) cv: Arc<Condvar>,
    /// When the request began to wait, for `sys.dm_exec_requests.wait_time`.
    pub(super) since: Instant,
}

impl LockEntry {
    pub(super) fn granted_to(owner: OwnerId, mode: LockMode) -> LockEntry {
        LockEntry { granted: SmallList::one((owner, mode)), queue: Vec::new() }
    }

    /// Adds `owner`'s fast-path grant of `mode`, moved here by a strong request: a grant
    /// already, so no rule is checked (see `fast.rs` for why it is compatible).
    pub(super) fn add_moved(&mut self, owner: OwnerId, mode: LockMode) {
        let at = self.granted.iter().position(|g| g.0 == owner);
        match at.and_then(|at| self.granted.get_mut(at)) {
            Some(held) => held.1 = held.1.join(mode),
            None => self.granted.push((owner, mode)),
        }
    }

    pub(super) fn mode_of(&self, owner: OwnerId) -> Option<LockMode> {
        self.granted.iter().find(|g| g.0 == owner).map(|g| g.1)
    }

    /// The mode `owner` would hold if `mode` were granted to it.
    pub(super) fn target(&self, owner: OwnerId, mode: LockMode) -> LockMode {
        self.mode_of(owner).map_or(mode, |held| held.join(mode))
    }

    fn compatible_with_others(&self, owner: OwnerId, mode: LockMode) -> bool {
        self.granted.iter().all(|&(o, m)| o == owner || mode.compatible(m))
    }

    /// Whether a request that is not leaving waits here: what FIFO makes a new request wait
    /// behind.
    pub(super) fn has_live_waiters(&self) -> bool {
        self.queue.iter().any(|w| !w.victim)
    }

    pub(super) fn is_unused(&self) -> bool {
        self.granted.is_empty() && self.queue.is_empty()
    }

    /// Grants `mode` to `owner` (joined with what it holds) if that is compatible with every
    /// other owner's mode; `false` if it must wait.
    pub(super) fn try_grant(&mut self, owner: OwnerId, mode: LockMode) -> bool {
        let target = self.target(owner, mode);
        if !self.compatible_with_others(owner, target) {
            return false;
        }
        let at = self.granted.iter().position(|g| g.0 == owner);
        match at.and_then(|at| self.granted.get_mut(at)) {
            Some(held) => held.1 = target,
            None => self.granted.push((owner, target)),
        }
        true
    }

    /// Queues a request in its place (invariant 4).
    pub(super) fn enqueue(&mut self, waiter: Waiter) {
        let at = if waiter.conversion {
            self.queue.iter().position(|w| !w.conversion).unwrap_or(self.queue.len())
        } else {
            self.queue.len()
        };
        self.queue.insert(at, waiter);
    }

    /// The owners the request at `at` in the queue waits for: the owners of granted modes
    /// incompatible with what it asks for and, for a new request, the owners of every live
    /// request ahead of it. Those ahead count whatever their mode: under FIFO a compatible
    /// request ahead still holds this one back until it is granted, so leaving it out would
    /// miss real cycles through it.
    pub(in crate::lock) fn blockers(&self, at: usize) -> Vec<OwnerId> {
        let Some(w) = self.queue.get(at) else {
            return Vec::new();
        };
        let target = self.target(w.owner, w.mode);
        let mut out: Vec<OwnerId> = self
            .granted
            .iter()
            .filter(|&&(o, m)| o != w.owner && !target.compatible(m))
            .map(|g| g.0)
            .collect();
        if !w.conversion {
            for ahead in self.queue.iter().take(at) {
                if !ahead.victim && ahead.owner != w.owner && !out.contains(&ahead.owner) {
                    out.push(ahead.owner);
                }
            }
        }
        out
    }
}

/// Who waits on what, for the deadlock detector. Under `LockManager::waits`.
pub(in crate::lock) type Waits = HashMap<OwnerId, Vec<Resource>, FastBuild>;
