//! The lock table, the owner table, the grant rules and waiting.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::{
    LockError, LockInfo, LockMode, LockStats, LockStatus, LockWaitStat, OwnerId, Resource,
};
use walden_storage::hash::{hash_of, FastBuild};

/// Shards of the lock table and of the owner table. A power of two; 64 keeps two sessions
/// working on different rows off each other's mutex almost always, for 16 KB of mutexes.
const SHARDS: usize = 64;

/// How often a waiting request searches for a deadlock again after its first search.
const DEADLOCK_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// Takes a mutex, recovering it if a thread panicked while holding it: every update in this
/// module leaves the tables consistent at each step that could panic (an allocation), so the
/// data is still good.
pub(super) fn lock_mutex<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The shard of a resource. It takes bits 32..38 of the table hash: `HashMap` indexes buckets
/// with the low bits and tags them with the top seven, so a shard chosen by either would leave
/// every resource of a shard with the same bucket bits or the same tag.
pub(super) fn shard_index(res: &Resource) -> usize {
    ((hash_of(res) >> 32) as usize) & (SHARDS - 1)
}

fn owner_index(owner: OwnerId) -> usize {
    ((hash_of(&owner) >> 32) as usize) & (SHARDS - 1)
}

/// One shard of the lock table, aligned so that no two shards' mutexes share a cache line.
#[repr(align(128))]
pub(super) struct Shard(pub(super) Mutex<ShardState>);

/// A shard's contents, all under the shard's mutex.
#[derive(Default)]
pub(super) struct ShardState {
    /// The entries of the resources of this shard that are locked or waited for (invariant 3).
    pub(super) table: HashMap<Resource, LockEntry, FastBuild>,
    /// The next waiter id; a waiting thread finds its request in the queue by it.
    next_waiter: u64,
    /// This shard's share of [`LockStats`], kept here rather than in shared atomics so that
    /// counting costs no cache-line traffic between threads working on different shards.
    counters: Counters,
}

#[derive(Default, Clone, Copy)]
struct Counters {
    requests: u64,
    waits: u64,
    timeouts: u64,
    deadlocks: u64,
    wait_nanos: u64,
    /// Per requested mode, in [`LockMode::ALL`] order: (waits ended, total and longest
    /// nanoseconds), for the `LCK_M_*` wait types.
    mode_waits: [(u64, u64, u64); 6],
}

impl Counters {
    /// Records a wait for `mode` that ended after `nanos`.
    fn wait_ended(&mut self, mode: LockMode, nanos: u64) {
        self.wait_nanos = self.wait_nanos.saturating_add(nanos);
        let i = LockMode::ALL.iter().position(|&m| m == mode).unwrap_or(0);
        let w = &mut self.mode_waits[i];
        w.0 += 1;
        w.1 = w.1.saturating_add(nanos);
        w.2 = w.2.max(nanos);
    }
}

/// One resource's locks. Under its shard's mutex.
pub(super) struct LockEntry {
    /// Granted owners and their modes: one mode per owner, pairwise compatible (invariant 1).
    /// A list, not a map: nearly every resource has one or two owners.
    granted: Vec<(OwnerId, LockMode)>,
    /// Waiting requests: conversions, then new requests, each in arrival order (invariant 4).
    pub(super) queue: Vec<Waiter>,
}

/// A waiting request. Under its shard's mutex.
pub(super) struct Waiter {
    /// Unique within the shard.
    id: u64,
    /// Who waits.
    pub(super) owner: OwnerId,
    /// The mode asked for; a conversion waits for its join with the held mode.
    mode: LockMode,
    /// The owner held a mode when it asked: it queues ahead of new requests and is granted by
    /// the conversion rule.
    conversion: bool,
    /// Chosen as a deadlock victim and leaving (invariant 6).
    pub(super) victim: bool,
    /// What the waiting thread sleeps on, with the shard's mutex. Whoever grants or marks the
    /// request notifies it.
    pub(super) cv: Arc<Condvar>,
}

impl LockEntry {
    fn granted_to(owner: OwnerId, mode: LockMode) -> LockEntry {
        LockEntry { granted: vec![(owner, mode)], queue: Vec::new() }
    }

    fn mode_of(&self, owner: OwnerId) -> Option<LockMode> {
        self.granted.iter().find(|g| g.0 == owner).map(|g| g.1)
    }

    /// The mode `owner` would hold if `mode` were granted to it.
    fn target(&self, owner: OwnerId, mode: LockMode) -> LockMode {
        self.mode_of(owner).map_or(mode, |held| held.join(mode))
    }

    fn compatible_with_others(&self, owner: OwnerId, mode: LockMode) -> bool {
        self.granted.iter().all(|&(o, m)| o == owner || mode.compatible(m))
    }

    /// Whether a request that is not leaving waits here: what FIFO makes a new request wait
    /// behind.
    fn has_live_waiters(&self) -> bool {
        self.queue.iter().any(|w| !w.victim)
    }

    fn is_unused(&self) -> bool {
        self.granted.is_empty() && self.queue.is_empty()
    }

    /// Grants `mode` to `owner` (joined with what it holds) if that is compatible with every
    /// other owner's mode. `Some(true)` if the owner is a new holder, `Some(false)` if it
    /// converted, `None` if it must wait.
    fn try_grant(&mut self, owner: OwnerId, mode: LockMode) -> Option<bool> {
        let target = self.target(owner, mode);
        if !self.compatible_with_others(owner, target) {
            return None;
        }
        match self.granted.iter_mut().find(|g| g.0 == owner) {
            Some(held) => {
                held.1 = target;
                Some(false)
            }
            None => {
                self.granted.push((owner, target));
                Some(true)
            }
        }
    }

    /// Queues a request in its place (invariant 4).
    fn enqueue(&mut self, waiter: Waiter) {
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
    pub(super) fn blockers(&self, at: usize) -> Vec<OwnerId> {
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

/// One shard of the owner table, aligned like [`Shard`].
#[repr(align(128))]
struct OwnerShard(Mutex<HashMap<OwnerId, OwnerLocks, FastBuild>>);

/// One table's key locks of one owner, as (index, key hash).
type KeySet = HashSet<(u32, u64), FastBuild>;

/// What one owner holds. Under its owner shard's mutex. The entry lives from the owner's first
/// lock or `set_priority` until `release_all`.
#[derive(Default)]
struct OwnerLocks {
    /// `DEADLOCK_PRIORITY`: the lowest in a cycle is chosen as the victim.
    priority: i32,
    /// Key locks by (db, object), as (index, key hash): a set per table, so that escalation
    /// counts and releases one table's keys without looking at the others. A list of tables,
    /// not a map: a transaction touches few tables, and most touch one, for which a map would
    /// cost an allocation and a hash per transaction.
    keys: Vec<((u32, u32), KeySet)>,
    /// Every other resource held. A transaction holds few (its database, the tables it
    /// touched), so a list is the quickest.
    others: Vec<Resource>,
}

impl OwnerLocks {
    /// The key set of table `(db, object)`, created empty if the owner holds no key there.
    fn table_keys_or_new(&mut self, table: (u32, u32)) -> &mut KeySet {
        let at = match self.keys.iter().position(|(t, _)| *t == table) {
            Some(at) => at,
            None => {
                self.keys.push((table, KeySet::default()));
                self.keys.len() - 1
            }
        };
        &mut self.keys[at].1
    }
}

/// Who waits on what, for the deadlock detector. Under `LockManager::waits`.
pub(super) type Waits = HashMap<OwnerId, Vec<Resource>, FastBuild>;

/// The lock manager of an instance, shared by all its sessions. See the module doc.
pub struct LockManager {
    /// The lock table, by [`shard_index`]; each shard under its own mutex.
    pub(super) shards: Box<[Shard]>,
    /// What each owner holds and its deadlock priority, by owner; each shard under its own
    /// mutex, taken after any lock-table shard (invariant 7).
    owners: Box<[OwnerShard]>,
    /// The waits map, under this mutex, which the deadlock detector holds for a whole search so
    /// that of two requests closing one cycle at once, the later search sees both.
    pub(super) waits: Mutex<Waits>,
}

impl Default for LockManager {
    fn default() -> Self {
        LockManager::new()
    }
}

impl fmt::Debug for LockManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockManager").field("shards", &self.shards.len()).finish_non_exhaustive()
    }
}

impl LockManager {
    /// An empty lock manager.
    pub fn new() -> LockManager {
        LockManager {
            shards: (0..SHARDS).map(|_| Shard(Mutex::default())).collect(),
            owners: (0..SHARDS).map(|_| OwnerShard(Mutex::default())).collect(),
            waits: Mutex::default(),
        }
    }

    pub(super) fn shard(&self, res: &Resource) -> &Mutex<ShardState> {
        &self.shards[shard_index(res)].0
    }

    fn owner_shard(&self, owner: OwnerId) -> &Mutex<HashMap<OwnerId, OwnerLocks, FastBuild>> {
        &self.owners[owner_index(owner)].0
    }

    /// Acquires `mode` on `res` for `owner`, converting a lock the owner already holds there
    /// to the join of both modes.
    ///
    /// `timeout`: `None` waits as long as it takes (`SET LOCK_TIMEOUT -1`), `Some(ZERO)` fails
    /// at once rather than wait, `Some(d)` waits at most `d`. A waiting request also fails if
    /// it is chosen as a deadlock victim. `Ok(true)` if a lock or a conversion was granted,
    /// `Ok(false)` if the owner already held a mode covering `mode`.
    pub fn lock(
        &self,
        owner: OwnerId,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<bool, LockError> {
        self.lock_counted(owner, res, mode, timeout).map(|(granted, _)| granted)
    }

    /// [`LockManager::lock`] that also returns how many key locks `owner` holds afterwards
    /// on the table of `res`, a KEY resource (0 for any other): what escalation looks at
    /// after every key lock. A new grant counts under the owner-table lock it takes anyway,
    /// so a row lock costs no second trip to the owner table.
    pub fn lock_key(
        &self,
        owner: OwnerId,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<(bool, usize), LockError> {
        let (granted, count) = self.lock_counted(owner, res, mode, timeout)?;
        let count = match (count, res) {
            (Some(n), _) => n,
            (None, &Resource::Key { db, object, .. }) => self.key_lock_count(owner, db, object),
            (None, _) => 0,
        };
        Ok((granted, count))
    }

    /// [`LockManager::lock`], with the key count of [`LockManager::record`] when this call
    /// recorded a new grant itself (`None` when it held the lock already or waited for it).
    fn lock_counted(
        &self,
        owner: OwnerId,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<(bool, Option<usize>), LockError> {
        let mut guard = lock_mutex(self.shard(res));
        let state = &mut *guard;
        state.counters.requests += 1;
        // One probe of the table whether the resource is locked already or not.
        let entry = match state.table.entry(res.clone()) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(slot) => {
                slot.insert(LockEntry::granted_to(owner, mode));
                return Ok((true, Some(self.record(owner, res))));
            }
        };
        let held = entry.mode_of(owner);
        if held.is_some_and(|h| h.covers(mode)) {
            return Ok((false, None));
        }
        let conversion = held.is_some();
        // Conversions skip the queue (invariant 4); a new request may not pass a waiter.
        if conversion || !entry.has_live_waiters() {
            if let Some(new_holder) = entry.try_grant(owner, mode) {
                let count = new_holder.then(|| self.record(owner, res));
                return Ok((true, count));
            }
        }
        if timeout == Some(Duration::ZERO) {
            state.counters.timeouts += 1;
            return Err(LockError::Timeout { resource: res.clone(), mode });
        }
        let id = state.next_waiter;
        state.next_waiter = state.next_waiter.wrapping_add(1);
        let cv = Arc::new(Condvar::new());
        entry.enqueue(Waiter { id, owner, mode, conversion, victim: false, cv: Arc::clone(&cv) });
        state.counters.waits += 1;
        drop(guard);
        self.wait(owner, res, mode, id, &cv, timeout).map(|granted| (granted, None))
    }

    /// Waits for the queued request `id` to be granted, to time out or to be chosen as a
    /// deadlock victim, searching for deadlocks at once and then every
    /// `DEADLOCK_CHECK_INTERVAL`.
    fn wait(
        &self,
        owner: OwnerId,
        res: &Resource,
        mode: LockMode,
        id: u64,
        cv: &Condvar,
        timeout: Option<Duration>,
    ) -> Result<bool, LockError> {
        let started = Instant::now();
        // A timeout too long to represent waits forever, as it would in practice.
        let deadline = timeout.and_then(|t| started.checked_add(t));
        // Registered only after the request is queued, so that a search finding the owner
        // in the waits map also finds its request.
        lock_mutex(&self.waits).entry(owner).or_default().push(res.clone());
        let shard = self.shard(res);
        let mut next_check = started;
        let mut guard = lock_mutex(shard);
        let outcome = loop {
            let now = Instant::now();
            let state = &mut *guard;
            let found = state.table.get_mut(res).and_then(|entry| {
                let at = entry.queue.iter().position(|w| w.id == id)?;
                Some((entry, at))
            });
            let waited = u64::try_from(now.saturating_duration_since(started).as_nanos())
                .unwrap_or(u64::MAX);
            // Gone from the queue: only a granter removes another thread's request.
            let Some((entry, at)) = found else {
                state.counters.wait_ended(mode, waited);
                break Ok(true);
            };
            let failure = if entry.queue[at].victim {
                state.counters.deadlocks += 1;
                Some(LockError::Deadlock { resource: res.clone(), mode })
            } else if deadline.is_some_and(|d| now >= d) {
                state.counters.timeouts += 1;
                Some(LockError::Timeout { resource: res.clone(), mode })
            } else {
                None
            };
            if let Some(error) = failure {
                entry.queue.remove(at);
                self.grant_waiters(res, entry);
                if entry.is_unused() {
                    state.table.remove(res);
                }
                state.counters.wait_ended(mode, waited);
                break Err(error);
            }
            if now >= next_check {
                drop(guard);
                self.detect(owner);
                next_check = Instant::now() + DEADLOCK_CHECK_INTERVAL;
                guard = lock_mutex(shard);
                continue;
            }
            let wake = deadline.map_or(next_check, |d| d.min(next_check));
            guard = cv
                .wait_timeout(guard, wake.saturating_duration_since(now))
                .map_or_else(|poisoned| poisoned.into_inner().0, |(g, _)| g);
        };
        drop(guard);
        let mut waits = lock_mutex(&self.waits);
        if let Some(list) = waits.get_mut(&owner) {
            if let Some(at) = list.iter().position(|r| r == res) {
                list.swap_remove(at);
            }
            if list.is_empty() {
                waits.remove(&owner);
            }
        }
        outcome
    }

    /// The grant pass, run by whoever removed something from `entry` (invariant 5): grants
    /// each waiting conversion whose join fits, then, if none is left waiting, new requests in
    /// order up to the first that does not fit.
    fn grant_waiters(&self, res: &Resource, entry: &mut LockEntry) {
        let mut at = 0;
        let mut conversion_waits = false;
        while let Some(w) = entry.queue.get(at) {
            if w.victim {
                at += 1;
                continue;
            }
            if !w.conversion && conversion_waits {
                break;
            }
            let (owner, mode, conversion) = (w.owner, w.mode, w.conversion);
            match entry.try_grant(owner, mode) {
                Some(new_holder) => {
                    let granted = entry.queue.remove(at);
                    if new_holder {
                        self.record(owner, res);
                    }
                    granted.cv.notify_one();
                }
                None if conversion => {
                    conversion_waits = true;
                    at += 1;
                }
                None => break,
            }
        }
    }

    /// Records a new grant in the owner table (invariant 2). Called under the shard's mutex.
    /// Returns how many key locks the owner now holds on the table of `res` (0 if `res` is not
    /// a key).
    fn record(&self, owner: OwnerId, res: &Resource) -> usize {
        let mut owners = lock_mutex(self.owner_shard(owner));
        let locks = owners.entry(owner).or_default();
        match *res {
            Resource::Key { db, object, index, hash } => {
                let keys = locks.table_keys_or_new((db, object));
                keys.insert((index, hash));
                keys.len()
            }
            _ => {
                if !locks.others.contains(res) {
                    locks.others.push(res.clone());
                }
                0
            }
        }
    }

    /// Removes a grant from the owner table (invariant 2). Called under the shard's mutex.
    fn forget(&self, owner: OwnerId, res: &Resource) {
        let mut owners = lock_mutex(self.owner_shard(owner));
        let Some(locks) = owners.get_mut(&owner) else {
            return;
        };
        match *res {
            Resource::Key { db, object, index, hash } => {
                if let Some(at) = locks.keys.iter().position(|(t, _)| *t == (db, object)) {
                    let keys = &mut locks.keys[at].1;
                    keys.remove(&(index, hash));
                    if keys.is_empty() {
                        locks.keys.swap_remove(at);
                    }
                }
            }
            _ => locks.others.retain(|r| r != res),
        }
    }

    /// Drops `owner`'s grant on `res`, if any, and runs the grant pass. `forget`: also remove
    /// it from the owner table (callers that took the owner's list out already have).
    fn release_grant(&self, owner: OwnerId, res: &Resource, forget: bool) {
        let mut guard = lock_mutex(self.shard(res));
        let state = &mut *guard;
        // One probe of the table to find the entry and, once unused, remove it.
        let Entry::Occupied(mut slot) = state.table.entry(res.clone()) else {
            return;
        };
        let entry = slot.get_mut();
        let Some(at) = entry.granted.iter().position(|g| g.0 == owner) else {
            return;
        };
        entry.granted.swap_remove(at);
        if forget {
            self.forget(owner, res);
        }
        self.grant_waiters(res, entry);
        if entry.is_unused() {
            slot.remove();
        }
    }

    /// Releases `owner`'s lock on `res` entirely, whatever its mode (READ COMMITTED releases a
    /// row's S lock once the row is read). Nothing happens if the owner holds none.
    pub fn unlock(&self, owner: OwnerId, res: &Resource) {
        self.release_grant(owner, res, true);
    }

    /// Releases every lock of `owner` (commit, rollback), waking the waiters that can now be
    /// granted, and forgets its deadlock priority. Nothing happens for an unknown owner. Called
    /// by the owner's thread: a request of the owner still waiting is not cancelled.
    pub fn release_all(&self, owner: OwnerId) {
        let Some(locks) = lock_mutex(self.owner_shard(owner)).remove(&owner) else {
            return;
        };
        // Rows before tables before the database: the order they were taken in, reversed.
        for &((db, object), ref keys) in &locks.keys {
            for &(index, hash) in keys {
                self.release_grant(owner, &Resource::Key { db, object, index, hash }, false);
            }
        }
        for res in locks.others.iter().rev() {
            self.release_grant(owner, res, false);
        }
    }

    /// Releases `owner`'s key locks on table `object` of database `db`: after lock escalation
    /// has given it a lock on the whole table.
    pub fn release_keys(&self, owner: OwnerId, db: u32, object: u32) {
        let keys = lock_mutex(self.owner_shard(owner)).get_mut(&owner).and_then(|locks| {
            let at = locks.keys.iter().position(|(t, _)| *t == (db, object))?;
            Some(locks.keys.swap_remove(at).1)
        });
        for (index, hash) in keys.into_iter().flatten() {
            self.release_grant(owner, &Resource::Key { db, object, index, hash }, false);
        }
    }

    /// How many key locks `owner` holds on table `object` of database `db`: the engine
    /// escalates to a table lock at 5,000, as SQL Server does.
    pub fn key_lock_count(&self, owner: OwnerId, db: u32, object: u32) -> usize {
        lock_mutex(self.owner_shard(owner))
            .get(&owner)
            .and_then(|locks| locks.keys.iter().find(|(t, _)| *t == (db, object)))
            .map_or(0, |(_, keys)| keys.len())
    }

    /// Sets `owner`'s deadlock priority (`SET DEADLOCK_PRIORITY`: LOW is -5, NORMAL 0, HIGH 5;
    /// -10 to 10): in a deadlock, the owner with the lowest is chosen as the victim. It lasts
    /// until `release_all`.
    pub fn set_priority(&self, owner: OwnerId, priority: i32) {
        lock_mutex(self.owner_shard(owner)).entry(owner).or_default().priority = priority;
    }

    /// `owner`'s deadlock priority, 0 unless set.
    pub(super) fn priority(&self, owner: OwnerId) -> i32 {
        lock_mutex(self.owner_shard(owner)).get(&owner).map_or(0, |locks| locks.priority)
    }

    /// Every granted lock and waiting request, for `sys.dm_tran_locks`. Each shard is read
    /// under its own mutex, one after another, so the rows of different shards may be from
    /// slightly different moments. Requests of deadlock victims, already failing, are left out.
    pub fn snapshot(&self) -> Vec<LockInfo> {
        let mut rows = Vec::new();
        for shard in self.shards.iter() {
            let guard = lock_mutex(&shard.0);
            for (res, entry) in &guard.table {
                for &(owner, mode) in &entry.granted {
                    rows.push(LockInfo {
                        resource: res.clone(),
                        mode,
                        owner,
                        status: LockStatus::Granted,
                    });
                }
                for w in entry.queue.iter().filter(|w| !w.victim) {
                    let (mode, status) = if w.conversion {
                        (entry.target(w.owner, w.mode), LockStatus::Converting)
                    } else {
                        (w.mode, LockStatus::Waiting)
                    };
                    rows.push(LockInfo { resource: res.clone(), mode, owner: w.owner, status });
                }
            }
        }
        rows
    }

    /// The counters, summed over the shards.
    pub fn stats(&self) -> LockStats {
        let mut sum = Counters::default();
        for shard in self.shards.iter() {
            let c = lock_mutex(&shard.0).counters;
            sum.requests += c.requests;
            sum.waits += c.waits;
            sum.timeouts += c.timeouts;
            sum.deadlocks += c.deadlocks;
            sum.wait_nanos = sum.wait_nanos.saturating_add(c.wait_nanos);
        }
        LockStats {
            requests: sum.requests,
            waits: sum.waits,
            timeouts: sum.timeouts,
            deadlocks: sum.deadlocks,
            wait_time: Duration::from_nanos(sum.wait_nanos),
        }
    }

    /// The waits that ended, by requested mode (`sys.dm_os_wait_stats`'s `LCK_M_*` rows),
    /// summed over the shards, in [`LockMode::ALL`] order.
    pub fn wait_stats(&self) -> [(LockMode, LockWaitStat); 6] {
        let mut sum = [(0u64, 0u64, 0u64); 6];
        for shard in self.shards.iter() {
            let c = lock_mutex(&shard.0).counters;
            for (total, w) in sum.iter_mut().zip(c.mode_waits) {
                total.0 += w.0;
                total.1 = total.1.saturating_add(w.1);
                total.2 = total.2.max(w.2);
            }
        }
        std::array::from_fn(|i| {
            let (count, total, max) = sum[i];
            let stat = LockWaitStat {
                count,
                total: Duration::from_nanos(total),
                max: Duration::from_nanos(max),
            };
            (LockMode::ALL[i], stat)
        })
    }
}
