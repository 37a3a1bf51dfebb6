//! A lock owner's own record of what it holds.

use std::sync::Arc;

use super::small::SmallList;
use super::{Interrupt, OwnerId, Resource};

/// Locks an owner keeps inline before its list spills to the heap: room for a small
/// transaction's database, table and row locks.
const HELD_INLINE: usize = 4;

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
/// owner's thread adds as its wait ends, and except for the tables in `fast`. `keys` counts
/// the KEY resources of `held` per table. `fast` lists the tables whose intent lock the owner
/// took through the fast path (`fast.rs`): each is in the owner's slot or, once a strong
/// request has transferred it, in the lock table; never in `held` as well.
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
    /// The fast-path slot of this owner, from its id.
    slot: usize,
    /// Ends the owner's lock waits when its client cancels its request.
    interrupt: Option<Arc<dyn Interrupt>>,
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
            slot: super::fast::slot_of(id),
            interrupt: None,
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

    /// Every lock held, newest first: the order `release_all` gives them back in, rows before
    /// their tables.
    pub(super) fn held_newest_first(&self) -> impl Iterator<Item = &Resource> {
        self.held.iter().rev()
    }

    /// Records a new grant of `res`, which the owner did not hold.
    pub(super) fn record(&mut self, res: &Resource) {
        if let Resource::Key { db, object, .. } = *res {
            let at = self.keys.iter().position(|(t, _)| *t == (db, object));
            match at.and_then(|at| self.keys.get_mut(at)) {
                Some((_, n)) => *n += 1,
                None => self.keys.push(((db, object), 1)),
            }
        }
        self.held.push(res.clone());
    }

    /// Forgets `res`, released; `false` if the owner did not hold it.
    pub(super) fn forget(&mut self, res: &Resource) -> bool {
        let Some(at) = self.held.rposition(|r| r == res) else {
            return false;
        };
        self.held.remove(at);
        if let Resource::Key { db, object, .. } = *res {
            let at = self.keys.iter().position(|(t, _)| *t == (db, object));
            if let Some(at) = at {
                let emptied = self.keys.get_mut(at).is_some_and(|(_, n)| {
                    *n -= 1;
                    *n == 0
                });
                if emptied {
                    self.keys.swap_remove(at);
                }
            }
        }
        true
    }

    /// Takes out the key locks on table `object` of database `db`, oldest first.
    pub(super) fn take_keys(&mut self, db: u32, object: u32) -> Vec<Resource> {
        let Some(at) = self.keys.iter().position(|(t, _)| *t == (db, object)) else {
            return Vec::new();
        };
        self.keys.swap_remove(at);
        let mut taken = Vec::new();
        for res in self.held.take_all() {
            match res {
                Resource::Key { db: d, object: o, .. } if (d, o) == (db, object) => taken.push(res),
                _ => self.held.push(res),
            }
        }
        taken
    }

    /// Forgets everything, released by `release_all`, and the deadlock priority.
    pub(super) fn clear(&mut self) {
        self.held.clear();
        self.keys.clear();
        self.fast.clear();
        self.priority = 0;
    }
}
