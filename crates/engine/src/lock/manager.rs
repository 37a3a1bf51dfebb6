//! The lock table, the grant rules and waiting.

use std::collections::hash_map::Entry;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::fast::{self, FastKey, FastLock, FastPath};
use super::owner::LockOwner;
use super::{
    BeforeLockWait, Interrupt, LockError, LockInfo, LockMode, LockStats, LockStatus, LockWaitStat,
    OwnerId, Resource, INTERRUPT_POLL,
};

use table::{Counters, LockEntry, Shard, Waiter, SHARDS};
pub(super) use table::{ShardState, TableKey, Waits};

mod table;

/// How often a waiting request searches for a deadlock again after its first search.
const DEADLOCK_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// Takes a mutex. The lock manager's mutexes are `parking_lot`'s: one atomic operation to
/// take and one to give back, and no poisoning, which `std`'s checks on both (every update in
/// this module leaves the tables consistent at each step that could panic, an allocation, so
/// a panicking holder would leave nothing to recover from anyway).
pub(super) fn lock_mutex<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock()
}

/// What bounds a lock wait: the lock timeout (`None`: none) and the owner's interrupt.
#[derive(Clone, Copy)]
struct WaitLimits<'a> {
    timeout: Option<Duration>,
    interrupt: Option<&'a dyn Interrupt>,
    before_wait: Option<&'a dyn BeforeLockWait>,
}

/// What a request got, as [`LockManager::acquire`] returns it.
enum Grant {
    /// The owner already held a mode covering the one asked for: nothing changed.
    Covered,
    /// The owner held a weaker mode (this one), and now holds the join.
    Converted(LockMode),
    /// The owner held nothing, and now holds the mode asked for.
    New,
}

/// The lock manager of an instance, shared by all its sessions. See the module doc.
pub struct LockManager {
    /// The lock table, by [`TableKey::shard`]; each shard under its own mutex.
    pub(super) shards: Box<[Shard]>,
    /// The waits map, under this mutex, which the deadlock detector holds for a whole search so
    /// that of two requests closing one cycle at once, the later search sees both.
    pub(super) waits: Mutex<Waits>,
    /// The fast path for intent locks on tables.
    fast: FastPath,
    /// Owners that hold or are taking key-range locks that keep keys out of a range
    /// (RangeS-*, RangeX-*): while it is 0, no insert needs to test its range (see
    /// [`LockManager::range_holders`]).
    range_holders: AtomicUsize,
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
            waits: Mutex::default(),
            fast: FastPath::default(),
            range_holders: AtomicUsize::new(0),
        }
    }

    /// Notes that `owner` is about to take key-range locks that keep keys out of ranges (a
    /// SERIALIZABLE seek or range scan): from now until its `release_all`,
    /// [`LockManager::range_holders`] counts it. The reader calls this before it reads the
    /// first key of its range, so that an insert that finds the count 0 after putting its
    /// key in the tree knows that every such reader will find that key there.
    pub fn note_range_holder(&self, owner: &mut LockOwner) {
        if owner.mark_range_holder() {
            self.range_holders.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// How many owners hold (or are taking) key-range locks that keep keys out of ranges.
    /// An insert reads it before and after it puts its key in the tree; if both readings
    /// are 0, no range can have been locked across the new key, and the insert need not test
    /// its range with RangeI-N (see `docs/locking.md`).
    pub fn range_holders(&self) -> usize {
        self.range_holders.load(Ordering::SeqCst)
    }

    pub(super) fn shard(&self, key: &TableKey) -> &Mutex<ShardState> {
        &self.shards[key.shard()].0
    }

    /// Acquires `mode` on `res` for `owner`, converting a lock the owner already holds there
    /// to the join of both modes, and records a new lock in `owner`.
    ///
    /// `timeout`: `None` waits as long as it takes (`SET LOCK_TIMEOUT -1`), `Some(ZERO)` fails
    /// at once rather than wait, `Some(d)` waits at most `d`. A waiting request also fails if
    /// it is chosen as a deadlock victim. `Ok(true)` if a lock or a conversion was granted,
    /// `Ok(false)` if the owner already held a mode covering `mode`.
    pub fn lock(
        &self,
        owner: &mut LockOwner,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<bool, LockError> {
        if mode.is_range() && mode != LockMode::RangeIN {
            self.note_range_holder(owner);
        }
        match *res {
            Resource::Object { db, object } => {
                if !fast::is_intent(mode) {
                    return self.lock_strong(owner, res, mode, timeout, (db, object));
                }
                if !owner.in_table(res) {
                    if let Some(granted) = self.fast.lock(owner, db, object, mode) {
                        return Ok(granted);
                    }
                }
            }
            Resource::Key { .. } => return self.lock_key(owner, res, mode, timeout),
            _ => {}
        }
        self.lock_in_table(owner, res, mode, timeout).map(|grant| !matches!(grant, Grant::Covered))
    }

    /// A key request: through the fast path if the owner can have the key's bucket to itself,
    /// else in the lock table, announced to the fast path, which publishes any fast lock on
    /// the key first (see `fast.rs`). The announcement lasts while the owner holds the grant
    /// it brings.
    fn lock_key(
        &self,
        owner: &mut LockOwner,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<bool, LockError> {
        let bucket = TableKey::of(res).bucket();
        // No look at the owner's lock-table list first (a big transaction's runs to thousands
        // of keys): a lock-table grant of the key is counted in its bucket's word, which keeps
        // the fast path from granting it again.
        if let Some(granted) = self.fast.lock_key(owner, res, bucket, mode) {
            return Ok(granted);
        }
        self.lock_key_in_table(owner, res, bucket, mode, timeout)
    }

    /// A key request in the lock table, `bucket` being the key's.
    fn lock_key_in_table(
        &self,
        owner: &mut LockOwner,
        res: &Resource,
        bucket: usize,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<bool, LockError> {
        self.fast.key_request_begun(res, bucket, |moved| self.add_moved_key(moved));
        let outcome = self.lock_in_table(owner, res, mode, timeout);
        if !matches!(outcome, Ok(Grant::New)) {
            self.fast.key_request_ended(bucket);
        }
        outcome.map(|grant| !matches!(grant, Grant::Covered))
    }

    /// Acquires `mode` on key `res` for `owner` as [`LockManager::lock`] does, and answers
    /// whether the grant is *fresh*: the owner held no lock on the key before, so giving it
    /// back with [`LockManager::unlock`] takes nothing else away. That is how the engine
    /// holds RangeI-N only while it inserts a key, as SQL Server does: a lock the owner held
    /// on the key (its own RangeS-S, or X on a row it inserted) is converted to the join
    /// (RangeX-S, RangeI-X) and kept to the end of the transaction.
    pub fn lock_fresh(
        &self,
        owner: &mut LockOwner,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<bool, LockError> {
        let bucket = TableKey::of(res).bucket();
        let held_fast = owner.has_fast_key(res);
        if mode.is_range() && mode != LockMode::RangeIN {
            self.note_range_holder(owner);
        }
        if self.fast.lock_key(owner, res, bucket, mode).is_some() {
            return Ok(!held_fast);
        }
        self.fast.key_request_begun(res, bucket, |moved| self.add_moved_key(moved));
        let outcome = self.lock_in_table(owner, res, mode, timeout);
        if !matches!(outcome, Ok(Grant::New)) {
            self.fast.key_request_ended(bucket);
        }
        Ok(matches!(outcome?, Grant::New))
    }

    /// Takes intent mode `intent` on table (db, object), then `mode` on `key`, a key of that
    /// table: what a transaction's first change of a row in a table asks for. The same as the
    /// two [`LockManager::lock`] calls, and returns what they would, but when both locks can be
    /// taken on the fast paths it takes them in one critical section of the owner's slot.
    pub fn lock_table_and_key(
        &self,
        owner: &mut LockOwner,
        (db, object): (u32, u32),
        intent: LockMode,
        key: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<(bool, bool), LockError> {
        let table = Resource::Object { db, object };
        // The key needs no look at the owner's lock-table list, as in `lock_key`; the table
        // does (an owner never holds a table both ways), but this is a transaction's first
        // write in the table, once.
        let fresh = fast::is_intent(intent)
            && matches!(key, Resource::Key { .. })
            && (owner.holds_nothing() || !owner.holds(&table));
        if fresh {
            let bucket = TableKey::of(key).bucket();
            match self.fast.lock_table_and_key(owner, (db, object), intent, key, bucket, mode) {
                Some(true) => return Ok((true, true)),
                Some(false) => {
                    return Ok((true, self.lock_key_in_table(owner, key, bucket, mode, timeout)?));
                }
                None => {}
            }
        }
        let table_granted = self.lock(owner, &table, intent, timeout)?;
        Ok((table_granted, self.lock(owner, key, mode, timeout)?))
    }

    /// A request through the lock table; records a new lock in `owner`.
    fn lock_in_table(
        &self,
        owner: &mut LockOwner,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<Grant, LockError> {
        let wait =
            WaitLimits { timeout, interrupt: owner.interrupt(), before_wait: owner.before_wait() };
        let grant = self.acquire(owner.id(), owner.priority(), res, mode, wait)?;
        if let Grant::New = grant {
            // Outside the shard's mutex: the list is the owner's own (invariant 2).
            owner.record(res);
        }
        Ok(grant)
    }

    /// A strong mode on table `table` (`res`): announced to the fast path, which moves the
    /// table's intent locks into the lock table first, then requested there. The
    /// announcement lasts while the owner holds a strong mode on the table (see `fast.rs`).
    fn lock_strong(
        &self,
        owner: &mut LockOwner,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
        (db, object): (u32, u32),
    ) -> Result<bool, LockError> {
        self.fast.strong_begun(db, object, |moved| self.add_moved(moved));
        let outcome = self.lock_in_table(owner, res, mode, timeout);
        let new_strong_holder = match outcome {
            Ok(Grant::New) => true,
            Ok(Grant::Converted(from)) => fast::is_intent(from),
            Ok(Grant::Covered) | Err(_) => false,
        };
        if !new_strong_holder {
            self.fast.strong_ended(db, object);
        }
        outcome.map(|grant| !matches!(grant, Grant::Covered))
    }

    /// Grants a fast-path lock, moved by a strong request, in the lock table.
    fn add_moved(&self, moved: &FastLock) {
        let res = Resource::Object { db: moved.db, object: moved.object };
        self.grant_moved(&res, moved.owner, moved.mode);
    }

    /// Grants a fast-path key lock, published by a key request, in the lock table.
    fn add_moved_key(&self, moved: &FastKey) {
        self.grant_moved(&moved.res, moved.owner, moved.mode);
    }

    fn grant_moved(&self, res: &Resource, owner: OwnerId, mode: LockMode) {
        let key = TableKey::of(res);
        let mut guard = lock_mutex(self.shard(&key));
        match guard.table.entry(key) {
            Entry::Occupied(entry) => entry.into_mut().add_moved(owner, mode),
            Entry::Vacant(slot) => {
                slot.insert(LockEntry::granted_to(owner, mode));
            }
        }
    }

    /// Grants `mode` on `res` to `owner` in the lock table, waiting if it must: the grant
    /// rules, one shard lookup for a request granted at once.
    fn acquire(
        &self,
        owner: OwnerId,
        priority: i32,
        res: &Resource,
        mode: LockMode,
        wait: WaitLimits<'_>,
    ) -> Result<Grant, LockError> {
        let key = TableKey::of(res);
        let mut guard = lock_mutex(self.shard(&key));
        let state = &mut *guard;
        state.requests += 1;
        // One probe of the table whether the resource is locked already or not.
        let entry = match state.table.entry(key) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(slot) => {
                slot.insert(LockEntry::granted_to(owner, mode));
                return Ok(Grant::New);
            }
        };
        let held = entry.mode_of(owner);
        if held.is_some_and(|h| h.covers(mode)) {
            return Ok(Grant::Covered);
        }
        let conversion = held.is_some();
        // Conversions skip the queue (invariant 4); a new request may not pass a waiter.
        if (conversion || !entry.has_live_waiters()) && entry.try_grant(owner, mode) {
            return Ok(held.map_or(Grant::New, Grant::Converted));
        }
        // The conflict may be with the session's own deferred commits (whose locks it would
        // have given back had it waited for their flush): it gives them up and asks again,
        // before it may fail at once (NOWAIT) or wait, and so never waits holding them.
        if let Some(hook) = wait.before_wait.filter(|h| h.holds_deferred()) {
            drop(guard);
            hook.give_up_deferred();
            return self.acquire(owner, priority, res, mode, wait);
        }
        if wait.timeout == Some(Duration::ZERO) {
            state.counters.timeouts += 1;
            return Err(LockError::Timeout { resource: res.clone(), mode });
        }
        let id = state.next_waiter;
        state.next_waiter = state.next_waiter.wrapping_add(1);
        let cv = Arc::new(Condvar::new());
        let waiter = Waiter {
            id,
            owner,
            mode,
            conversion,
            victim: false,
            priority,
            cv: Arc::clone(&cv),
            since: Instant::now(),
        };
        entry.enqueue(waiter);
        state.counters.waits += 1;
        drop(guard);
        self.wait(owner, res, mode, id, &cv, wait)?;
        Ok(held.map_or(Grant::New, Grant::Converted))
    }

    /// Waits for the queued request `id` to be granted, to time out, to be chosen as a
    /// deadlock victim or to be cancelled through the owner's interrupt, searching for
    /// deadlocks at once and then every `DEADLOCK_CHECK_INTERVAL`, and asking the interrupt
    /// every `INTERRUPT_POLL`.
    fn wait(
        &self,
        owner: OwnerId,
        res: &Resource,
        mode: LockMode,
        id: u64,
        cv: &Condvar,
        limits: WaitLimits<'_>,
    ) -> Result<(), LockError> {
        let started = Instant::now();
        // A timeout too long to represent waits forever, as it would in practice.
        let deadline = limits.timeout.and_then(|t| started.checked_add(t));
        // Registered only after the request is queued, so that a search finding the owner
        // in the waits map also finds its request.
        lock_mutex(&self.waits).entry(owner).or_default().push(res.clone());
        let key = TableKey::of(res);
        let shard = self.shard(&key);
        let mut next_check = started;
        let mut guard = lock_mutex(shard);
        let outcome = loop {
            let now = Instant::now();
            let state = &mut *guard;
            let found = state.table.get_mut(&key).and_then(|entry| {
                let at = entry.queue.iter().position(|w| w.id == id)?;
                Some((entry, at))
            });
            let waited = u64::try_from(now.saturating_duration_since(started).as_nanos())
                .unwrap_or(u64::MAX);
            // Gone from the queue: only a granter removes another thread's request.
            let Some((entry, at)) = found else {
                state.counters.wait_ended(mode, waited);
                break Ok(());
            };
            let failure = if entry.queue[at].victim {
                state.counters.deadlocks += 1;
                Some(LockError::Deadlock { resource: res.clone(), mode })
            } else if deadline.is_some_and(|d| now >= d) {
                state.counters.timeouts += 1;
                Some(LockError::Timeout { resource: res.clone(), mode })
            } else if limits.interrupt.is_some_and(|i| i.interrupted()) {
                Some(LockError::Cancelled { resource: res.clone(), mode })
            } else {
                None
            };
            if let Some(error) = failure {
                entry.queue.remove(at);
                self.grant_waiters(entry);
                if entry.is_unused() {
                    state.table.remove(&key);
                    state.shrink_if_sparse();
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
            let mut wake = deadline.map_or(next_check, |d| d.min(next_check));
            if limits.interrupt.is_some() {
                wake = wake.min(now + INTERRUPT_POLL);
            }
            cv.wait_for(&mut guard, wake.saturating_duration_since(now));
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
    fn grant_waiters(&self, entry: &mut LockEntry) {
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
            if entry.try_grant(owner, mode) {
                // The waiting thread records a new lock in its owner as it wakes (invariant 2).
                entry.queue.remove(at).cv.notify_one();
            } else if conversion {
                conversion_waits = true;
                at += 1;
            } else {
                break;
            }
        }
    }

    /// Drops `owner`'s grant on `res`, if any, and runs the grant pass.
    fn release_grant(&self, owner: OwnerId, res: &Resource) {
        self.release_grant_of(owner, res, None);
    }

    /// Drops `owner`'s grant on `res` if it has one, in mode `only` if that is given, and
    /// runs the grant pass; whether it did.
    fn release_grant_of(&self, owner: OwnerId, res: &Resource, only: Option<LockMode>) -> bool {
        let key = TableKey::of(res);
        let bucket = key.bucket();
        let mut guard = lock_mutex(self.shard(&key));
        let state = &mut *guard;
        // One probe of the table to find the entry and, once unused, remove it.
        let Entry::Occupied(mut slot) = state.table.entry(key) else {
            return false;
        };
        let entry = slot.get_mut();
        let found =
            entry.granted.iter().position(|g| g.0 == owner && only.is_none_or(|m| g.1 == m));
        let Some(at) = found else {
            return false;
        };
        let released = entry.granted.swap_remove(at);
        if !entry.queue.is_empty() {
            self.grant_waiters(entry);
        }
        if entry.is_unused() {
            slot.remove();
            state.shrink_if_sparse();
        }
        drop(guard);
        match (res, released) {
            (Resource::Object { db, object }, Some((_, mode))) if !fast::is_intent(mode) => {
                self.fast.strong_ended(*db, *object);
            }
            (Resource::Key { .. }, Some(_)) => self.fast.key_request_ended(bucket),
            _ => {}
        }
        true
    }

    /// Releases `owner`'s lock on `res` entirely, whatever its mode (READ COMMITTED releases a
    /// row's S lock once the row is read). Nothing happens if the owner holds none.
    pub fn unlock(&self, owner: &mut LockOwner, res: &Resource) {
        let released_fast = match *res {
            Resource::Object { db, object } if owner.forget_fast(db, object) => {
                Some(self.fast.unlock(owner, db, object))
            }
            Resource::Key { .. } if owner.forget_fast_key(res) => {
                Some(self.fast.unlock_key(owner, res))
            }
            _ => None,
        };
        if let Some(in_slot) = released_fast {
            if !in_slot {
                self.release_grant(owner.id(), res);
            }
            return;
        }
        if owner.forget(res) {
            self.release_grant(owner.id(), res);
        }
    }

    /// Releases `owner`'s lock on table `res` if `mode` is exactly what it holds there;
    /// whether it did. What a READ COMMITTED statement gives back as it ends (its IS, or the S
    /// of a `TABLOCK`), unless the transaction has since taken more on the table (a write's
    /// IX, a DDL's X), which is then kept to the end of the transaction. Only the owner's own
    /// thread changes its modes, so the mode cannot change between the look and the release;
    /// a strong request may move a fast-path entry into the lock table meanwhile, and the look
    /// in the lock table finds it there.
    pub fn unlock_table_in(&self, owner: &mut LockOwner, res: &Resource, mode: LockMode) -> bool {
        let Resource::Object { db, object } = *res else {
            return false;
        };
        let released = if owner.has_fast(db, object) {
            match self.fast.unlock_in(owner, db, object, mode) {
                Some(released) => released,
                None => self.release_grant_of(owner.id(), res, Some(mode)),
            }
        } else {
            return owner.in_table(res)
                && self.release_grant_of(owner.id(), res, Some(mode))
                && owner.forget(res);
        };
        released && owner.forget_fast(db, object)
    }

    /// Releases every lock of `owner` (commit, rollback), waking the waiters that can now be
    /// granted, and forgets its deadlock priority. It walks the owner's own list: nothing
    /// shared is looked at but the shards of the locks released.
    pub fn release_all(&self, owner: &mut LockOwner) {
        // Newest first: rows before their tables, the order they were taken in reversed.
        for res in owner.held_newest_first() {
            self.release_grant(owner.id(), res);
        }
        if owner.fast_table_count() > 0 || owner.fast_key_count() > 0 {
            self.fast.release_owner(owner, |res| self.release_grant(owner.id(), &res));
        }
        if owner.is_range_holder() {
            self.range_holders.fetch_sub(1, Ordering::SeqCst);
        }
        owner.clear();
    }

    /// Releases `owner`'s key locks on table `object` of database `db`: after lock escalation
    /// has given it a lock on the whole table.
    pub fn release_keys(&self, owner: &mut LockOwner, db: u32, object: u32) {
        let (in_table, fast) = owner.take_keys(db, object);
        for res in in_table {
            self.release_grant(owner.id(), &res);
        }
        for res in fast {
            if !self.fast.unlock_key(owner, &res) {
                self.release_grant(owner.id(), &res);
            }
        }
    }

    /// Every granted lock and waiting request, for `sys.dm_tran_locks`. Each shard is read
    /// under its own mutex, one after another, so the rows of different shards may be from
    /// slightly different moments. Requests of deadlock victims, already failing, are left out.
    pub fn snapshot(&self) -> Vec<LockInfo> {
        let mut rows = Vec::new();
        self.fast.snapshot(&mut rows);
        for shard in self.shards.iter() {
            let guard = lock_mutex(&shard.0);
            for (TableKey { res, .. }, entry) in &guard.table {
                for &(owner, mode) in entry.granted.iter() {
                    rows.push(LockInfo {
                        resource: res.clone(),
                        mode,
                        owner,
                        status: LockStatus::Granted,
                        waited: Duration::ZERO,
                    });
                }
                for w in entry.queue.iter().filter(|w| !w.victim) {
                    let (mode, status) = if w.conversion {
                        (entry.target(w.owner, w.mode), LockStatus::Converting)
                    } else {
                        (w.mode, LockStatus::Waiting)
                    };
                    rows.push(LockInfo {
                        resource: res.clone(),
                        mode,
                        owner: w.owner,
                        status,
                        waited: w.since.elapsed(),
                    });
                }
            }
        }
        rows
    }

    /// The counters, summed over the shards.
    pub fn stats(&self) -> LockStats {
        let mut sum = Counters::default();
        let mut requests = 0;
        for shard in self.shards.iter() {
            let state = lock_mutex(&shard.0);
            let c = *state.counters;
            requests += state.requests;
            sum.waits += c.waits;
            sum.timeouts += c.timeouts;
            sum.deadlocks += c.deadlocks;
            sum.wait_nanos = sum.wait_nanos.saturating_add(c.wait_nanos);
        }
        LockStats {
            requests: requests + self.fast.requests(),
            waits: sum.waits,
            timeouts: sum.timeouts,
            deadlocks: sum.deadlocks,
            wait_time: Duration::from_nanos(sum.wait_nanos),
        }
    }

    /// The waits that ended, by requested mode (`sys.dm_os_wait_stats`'s `LCK_M_*` rows),
    /// summed over the shards, in [`LockMode::ALL`] order.
    pub fn wait_stats(&self) -> [(LockMode, LockWaitStat); LockMode::ALL.len()] {
        let mut sum = [(0u64, 0u64, 0u64); LockMode::ALL.len()];
        for shard in self.shards.iter() {
            let c = *lock_mutex(&shard.0).counters;
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

#[cfg(test)]
mod tests {
    use super::table::{table_hash, MIN_TABLE};
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn a_shards_hot_fields_fit_one_cache_line() {
        assert!(std::mem::size_of::<Mutex<ShardState>>() <= 64);
    }

    #[test]
    fn a_table_left_sparse_shrinks_and_stays_usable() {
        let m = LockManager::new();
        let mut owner = LockOwner::new(1);
        let keys: Vec<Resource> =
            (0..20_000).map(|n| Resource::key(1, 2, 1, &[n as u8, (n >> 8) as u8])).collect();
        for k in &keys {
            m.lock(&mut owner, k, LockMode::X, None).unwrap();
        }
        let big = m.shards.iter().map(|s| lock_mutex(&s.0).table.capacity()).max().unwrap();
        m.release_all(&mut owner);
        let after = m.shards.iter().map(|s| lock_mutex(&s.0).table.capacity()).max().unwrap();
        assert!(big > 4 * MIN_TABLE && after <= 4 * MIN_TABLE, "{big} slots, then {after}");
        m.lock(&mut owner, &keys[0], LockMode::X, None).unwrap();
        assert_eq!(m.snapshot().len(), 1);
    }

    #[test]
    fn table_hashes_spread_over_shards_buckets_and_tags() {
        let objects = (0..4096).map(|object| Resource::Object { db: 5, object });
        let keys = (0..4096).map(|n: u32| Resource::key(5, 7, 1, &n.to_be_bytes()));
        for resources in [objects.collect::<Vec<_>>(), keys.collect()] {
            let hashes: Vec<u64> = resources.iter().map(table_hash).collect();
            let shards: HashSet<usize> =
                resources.iter().map(|r| TableKey::of(r).shard()).collect();
            let low: HashSet<u64> = hashes.iter().map(|h| h & 0xfff).collect();
            let tags: HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
            assert_eq!(shards.len(), SHARDS);
            assert!(low.len() > 2048, "only {} distinct low 12-bit patterns", low.len());
            assert_eq!(tags.len(), 128, "tag bits do not vary");
        }
        let kinds = [
            Resource::Database(5),
            Resource::Object { db: 5, object: 0 },
            Resource::Key { db: 5, object: 0, index: 0, hash: 0 },
            Resource::Other { db: 5, name: 0 },
        ];
        let distinct: HashSet<u64> = kinds.iter().map(table_hash).collect();
        assert_eq!(distinct.len(), 4, "resources of different kinds with the same ids");
    }
}
