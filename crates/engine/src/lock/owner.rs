//! A lock owner's own record of what it holds.

use std::sync::Arc;

use super::small::SmallList;
use super::{BeforeLockWait, Interrupt, OwnerId, Resource};

/// Lock-table locks an owner keeps inline before its list spills to the heap. A small
/// transaction's table and row locks are usually on the fast paths, so this is room for the
/// few that are not: two. A bigger transaction's keys spill anyway.
const HELD_INLINE: usize = 2;

/// A lock owner (a transaction), kept by the owner's own thread and passed to every call the
/// [`LockManager`](super::LockManager) makes for it: its id, its deadlock priority and every
/// lock it holds.
///
/// The manager records each grant here, so commit finds the owner's locks by walking this
/// list and escalation counts key locks here, without touching anything shared with other
/// sessions. Only the owner's thread changes it, so it needs no mutex.
///
/// Dropping an owner does not release its locks: `release_all` does (a transaction calls it
/// when it ends, however it ends).
///
/// Invariant: `held` lists exactly the resources on which the lock table grants this owner a
/// mode, except for a request granted by another thread while the owner waits, which the
/// owner's thread adds as its wait ends, and except for the tables in `fast` and the keys in
/// `fast_keys`. `keys` counts the KEY resources of `held` and `fast_keys` per table. `fast`
/// lists the tables whose intent lock the owner took through the fast path (`fast.rs`), and
/// `fast_keys` the keys it locked there: each is in the owner's slot or, once a strong request
/// has transferred it or a key request has published it, in the lock table; never in `held`
/// as well.
#[derive(Debug)]
pub struct LockOwner {
    id: OwnerId,
    priority: i32,
    /// Every lock granted and not released, oldest first.
    held: SmallList<Resource, HELD_INLINE>,
    /// How many of them are key locks, per table (db, object): what escalation looks at
    /// after every key lock. A list, not a map: a transaction touches few tables, and most
    /// touch one.
    keys: SmallList<((u32, u32), usize), 2>,
    /// The tables (db, object) locked through the fast path, oldest first.
    fast: SmallList<(u32, u32), 2>,
    /// The keys locked through the fast path, oldest first; at most `fast::FAST_KEYS`.
    fast_keys: SmallList<Resource, 1>,
    /// The fast-path slot of this owner, from its id.
    slot: usize,
    /// Ends the owner's lock waits when its client cancels its request.
    interrupt: Option<Arc<dyn Interrupt>>,
    /// What the owner's session gives up before the owner waits.
    before_wait: Option<Arc<dyn BeforeLockWait>>,
    /// Whether the lock manager counts this owner among its range holders (it took or is
    /// taking RangeS-* or RangeX-* locks), until `release_all`.
    range_holder: bool,
}

impl LockOwner {
    /// An owner holding nothing, with id `id` (unique among the owners of a lock manager:
    /// the lock table tells owners apart by id) and the normal deadlock priority.
    pub fn new(id: OwnerId) -> LockOwner {
        LockOwner {
            id,
            priority: 0,
            held: SmallList::default(),
            keys: SmallList::default(),
            fast: SmallList::default(),
            fast_keys: SmallList::default(),
            slot: super::fast::slot_of(id),
            interrupt: None,
            before_wait: None,
            range_holder: false,
        }
    }

    /// Lets `interrupt` end this owner's lock waits: a waiting request fails with
    /// `LockError::Cancelled` once it says so. It lasts as long as the owner.
    pub fn set_interrupt(&mut self, interrupt: Option<Arc<dyn Interrupt>>) {
        self.interrupt = interrupt;
    }

    /// What ends this owner's lock waits early, if anything.
    pub(super) fn interrupt(&self) -> Option<&dyn Interrupt> {
        self.interrupt.as_deref()
    }

    /// Has `hook` give up what the owner's session holds before the owner waits for a lock.
    /// It lasts as long as the owner.
    pub fn set_before_wait(&mut self, hook: Option<Arc<dyn BeforeLockWait>>) {
        self.before_wait = hook;
    }

    /// What the owner's session gives up before the owner waits, if anything.
    pub(super) fn before_wait(&self) -> Option<&dyn BeforeLockWait> {
        self.before_wait.as_deref()
    }

    /// The id.
    pub fn id(&self) -> OwnerId {
        self.id
    }

    /// The deadlock priority, 0 unless set.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// Sets the deadlock priority (`SET DEADLOCK_PRIORITY`: LOW is -5, NORMAL 0, HIGH 5; -10
    /// to 10): in a deadlock, the owner with the lowest is chosen as the victim. It lasts
    /// until [`LockManager::release_all`](super::LockManager::release_all).
    pub fn set_priority(&mut self, priority: i32) {
        self.priority = priority;
    }

    /// How many key locks the owner holds on table `object` of database `db`: the engine
    /// escalates to a table lock at 5,000, as SQL Server does.
    pub fn key_lock_count(&self, db: u32, object: u32) -> usize {
        self.keys.iter().find(|(t, _)| *t == (db, object)).map_or(0, |&(_, n)| n)
    }

    /// Whether the owner holds a lock on `res`.
    pub fn holds(&self, res: &Resource) -> bool {
        match *res {
            Resource::Object { db, object } if self.has_fast(db, object) => true,
            Resource::Key { .. } if self.has_fast_key(res) => true,
            _ => self.in_table(res),
        }
    }

    /// Whether the owner holds a lock on `res` that it took in the lock table.
    pub(super) fn in_table(&self, res: &Resource) -> bool {
        self.held.iter().any(|r| r == res)
    }

    /// The owner's fast-path slot.
    pub(super) fn slot(&self) -> usize {
        self.slot
    }

    /// Whether the owner took its lock on table (db, object) through the fast path.
    pub(super) fn has_fast(&self, db: u32, object: u32) -> bool {
        self.fast.iter().any(|&t| t == (db, object))
    }

    /// Records an intent lock on table (db, object) taken through the fast path.
    pub(super) fn record_fast(&mut self, db: u32, object: u32) {
        self.fast.push((db, object));
    }

    /// Forgets the fast-path lock on table (db, object); `false` if there is none.
    pub(super) fn forget_fast(&mut self, db: u32, object: u32) -> bool {
        let at = self.fast.rposition(|&t| t == (db, object));
        at.and_then(|at| self.fast.remove(at)).is_some()
    }

    /// The tables locked through the fast path.
    pub(super) fn fast_tables(&self) -> impl Iterator<Item = &(u32, u32)> {
        self.fast.iter()
    }

    /// How many tables the owner locked through the fast path.
    pub(super) fn fast_table_count(&self) -> usize {
        self.fast.len()
    }

    /// Whether the owner holds no lock at all.
    pub(super) fn holds_nothing(&self) -> bool {
        self.held.is_empty() && self.fast.is_empty() && self.fast_keys.is_empty()
    }

    /// Whether the owner took its lock on key `res` through the fast path.
    pub(super) fn has_fast_key(&self, res: &Resource) -> bool {
        self.fast_keys.iter().any(|r| r == res)
    }

    /// How many key locks the owner took through the fast path.
    pub(super) fn fast_key_count(&self) -> usize {
        self.fast_keys.len()
    }

    /// The keys locked through the fast path.
    pub(super) fn fast_keys(&self) -> impl Iterator<Item = &Resource> {
        self.fast_keys.iter()
    }

    /// Records a lock on key `res` taken through the fast path.
    pub(super) fn record_fast_key(&mut self, res: &Resource) {
        self.count_key(res, 1);
        self.fast_keys.push(res.clone());
    }

    /// Forgets the fast-path lock on key `res`; `false` if there is none.
    pub(super) fn forget_fast_key(&mut self, res: &Resource) -> bool {
        let found = remove_last(&mut self.fast_keys, res);
        if found {
            self.count_key(res, -1);
        }
        found
    }

    /// Adds `delta` (1 or -1) to the key count of `res`'s table, if `res` is a key.
    fn count_key(&mut self, res: &Resource, delta: isize) {
        let Resource::Key { db, object, .. } = *res else {
            return;
        };
        let at = self.keys.iter().position(|(t, _)| *t == (db, object));
        match at {
            Some(at) => {
                let emptied = self.keys.get_mut(at).is_some_and(|(_, n)| {
                    *n = n.saturating_add_signed(delta);
                    *n == 0
                });
                if emptied {
                    self.keys.swap_remove(at);
                }
            }
            None if delta > 0 => self.keys.push(((db, object), 1)),
            None => {}
        }
    }

    /// Every lock held, newest first: the order `release_all` gives them back in, rows before
    /// their tables.
    pub(super) fn held_newest_first(&self) -> impl Iterator<Item = &Resource> {
        self.held.iter().rev()
    }

    /// Records a new grant of `res`, which the owner did not hold.
    pub(super) fn record(&mut self, res: &Resource) {
        self.count_key(res, 1);
        self.held.push(res.clone());
    }

    /// Forgets `res`, released; `false` if the owner did not hold it.
    pub(super) fn forget(&mut self, res: &Resource) -> bool {
        let found = remove_last(&mut self.held, res);
        if found {
            self.count_key(res, -1);
        }
        found
    }

    /// Takes out the key locks on table `object` of database `db`, oldest first: those in
    /// the lock table, then those taken through the fast path.
    pub(super) fn take_keys(&mut self, db: u32, object: u32) -> (Vec<Resource>, Vec<Resource>) {
        let Some(at) = self.keys.iter().position(|(t, _)| *t == (db, object)) else {
            return (Vec::new(), Vec::new());
        };
        self.keys.swap_remove(at);
        (take_keys_of(&mut self.held, db, object), take_keys_of(&mut self.fast_keys, db, object))
    }

    /// Marks the owner as a range holder; `true` if it was not one yet.
    pub(super) fn mark_range_holder(&mut self) -> bool {
        !std::mem::replace(&mut self.range_holder, true)
    }

    /// Whether the owner is counted among the lock manager's range holders.
    pub(super) fn is_range_holder(&self) -> bool {
        self.range_holder
    }

    /// Forgets everything, released by `release_all`, and the deadlock priority.
    pub(super) fn clear(&mut self) {
        self.range_holder = false;
        self.held.clear();
        self.keys.clear();
        self.fast.clear();
        self.fast_keys.clear();
        self.priority = 0;
    }
}

/// Removes the last occurrence of `res` from `list`; `false` if there is none.
fn remove_last<const N: usize>(list: &mut SmallList<Resource, N>, res: &Resource) -> bool {
    let found = list.rposition(|r| r == res);
    found.and_then(|at| list.remove(at)).is_some()
}

/// Takes the key locks on table `object` of database `db` out of `list`, in order.
fn take_keys_of<const N: usize>(
    list: &mut SmallList<Resource, N>,
    db: u32,
    object: u32,
) -> Vec<Resource> {
    let mut taken = Vec::new();
    for res in list.take_all() {
        match res {
            Resource::Key { db: d, object: o, .. } if (d, o) == (db, object) => taken.push(res),
            _ => list.push(res),
        }
    }
    taken
}
