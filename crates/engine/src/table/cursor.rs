//! Cursors over a range of one tree's entries: a table's rows ([`RowCursor`]) and a
//! nonclustered index's row ids ([`IndexCursor`]), with the key locks their isolation level
//! asks for, SERIALIZABLE's key-range locks among them (`docs/locking.md`, "Key-range
//! locking").
//!
//! This file is what both cursors read through: [`Entries`], a range's entries copied a batch
//! at a time, and its key locking. The cursors themselves are `cursor/row.rs` and
//! `cursor/index.rs`.

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use walden_storage::btree::{Entry, EntryBatch, LeafHint};
use walden_storage::PageId;

use super::key_or_end;
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::{LockMode, Resource};
use crate::txn::{Isolation, Transaction};

mod index;
mod row;

pub use index::IndexCursor;
pub use row::RowCursor;
pub(super) use row::RowLocking;

/// The entries of one tree in a range of keys, copied a batch at a time into one reused
/// [`EntryBatch`]; no latch is held between calls.
#[derive(Debug)]
pub(super) struct Entries {
    db: Arc<Database>,
    root: PageId,
    /// Where the next batch starts: after the last entry given out ([`Entries::next_locked`])
    /// or after the last entry of the batch copied ([`Entries::next_entry`], which gives out
    /// the whole batch before it copies the next).
    next: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    /// Entries put back, given out before the rest of the batch: under SERIALIZABLE a key
    /// that came into the range, or an entry read again under its lock.
    front: VecDeque<Entry>,
    /// The entry put back that [`Entries::next_entry`] gave out last.
    taken: Entry,
    batch: EntryBatch,
    /// The leaf the last descent of a copy reached: a cursor restarted on a range further on
    /// ([`Entries::restart`]) starts there when the range does (`BTree::copy_range_hinted`).
    hint: LeafHint,
    /// The first entry of `batch` not given out yet.
    pos: usize,
    /// Whether the tree holds nothing in the range past the batch.
    done: bool,
    /// The tree's change count read before the buffered batch was copied; `None` when the
    /// buffer holds entries that must be read again under their lock.
    batch_changes: Option<u64>,
    /// Set when the buffered batch was copied while no other transaction had a change in the
    /// tree, so that every entry in it was committed then or the reader's own
    /// (`lock/writers.rs`): the reader's [`Transaction::own_changes`] at the copy. Only a copy
    /// asked to check ([`Entries::next_entry`] with a transaction) finds out.
    committed: Option<u64>,
    /// Where a locking read's look for deleted keys starts ([`Entries::ghost_before`]): after
    /// the last entry it gave out under its lock, or after the last entry of a batch copied
    /// while no other transaction had a change in the tree (no key of it was deleted then).
    floor: Bound<Vec<u8>>,
}

/// A SERIALIZABLE range's key locks: `mode` (RangeS-S, or RangeS-U for an UPDATE's or
/// DELETE's search) on each key of index `index` of table `table` as it is read, then on the
/// key past the range.
#[derive(Debug)]
pub(super) struct RangeLock {
    table: u32,
    index: u16,
    mode: LockMode,
    /// Whether the key past the range is locked (the range is read to its end).
    end_locked: bool,
}

impl RangeLock {
    pub(super) fn new(table: u32, index: u16, mode: LockMode) -> RangeLock {
        RangeLock { table, index, mode, end_locked: false }
    }
}

/// An entry [`Entries::next_entry`] gives out, its bytes read through [`Entries::get`] (so
/// the batch's are never copied again): one of the batch, or one put back, moved to
/// [`Entries::taken`]. Kept to two words: a larger value returned through the stack cost
/// the scan store-forwarding stalls.
#[derive(Debug, Clone, Copy)]
enum Next {
    Batch(usize),
    Taken,
}

/// What [`Entries::under_row_lock`] finds of an entry's value.
enum Current {
    /// The value as copied: no entry of the tree changed since before the copy.
    Copied,
    /// The tree's value now.
    Now(Vec<u8>),
    /// The entry is gone.
    Gone,
}

/// What [`Entries::next_locked`] gives.
enum Locked {
    /// The next entry, locked.
    Entry(Vec<u8>, Vec<u8>),
    /// The range is read and locked to its end.
    End,
    /// The transaction escalated to a table lock, which covers the rest of the range: read
    /// on without key locks.
    Escalated,
}

impl Entries {
    pub(super) fn new(
        db: &Arc<Database>,
        root: PageId,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
    ) -> Entries {
        Entries {
            db: Arc::clone(db),
            root,
            floor: lower.clone(),
            next: lower,
            upper,
            front: VecDeque::new(),
            taken: Entry::default(),
            batch: EntryBatch::new(),
            hint: LeafHint::default(),
            pos: 0,
            done: false,
            batch_changes: None,
            committed: None,
        }
    }

    /// Starts over on the range `lower..upper` of the same tree, as a new cursor would, but
    /// with the buffers and the leaf hint kept.
    pub(super) fn restart(&mut self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) {
        self.floor = lower.clone();
        self.next = lower;
        self.upper = upper;
        self.front.clear();
        self.taken = Entry::default();
        self.batch.clear();
        self.pos = 0;
        self.done = false;
        self.batch_changes = None;
        self.committed = None;
    }

    /// Copies the next batch in place of the (used up) one; with `avoid`, the transaction of
    /// a READ COMMITTED read, it also finds out whether the copy is committed.
    fn refill(&mut self, avoid: Option<&Transaction>) -> Result<(), EngineError> {
        self.db.check_online()?;
        let tree = self.db.space().tree(self.root);
        // Both read before copying: a change during the copy makes the change count differ
        // afterwards, and a writer during the copy the writers' word.
        let quiet = avoid.and_then(|tx| tx.writers_quiet(self.db.id(), self.root));
        self.batch_changes = Some(tree.changes());
        self.batch.clear();
        self.pos = 0;
        self.done = tree.copy_range_hinted(
            &self.next,
            &self.upper,
            CURSOR_BATCH,
            &mut self.batch,
            Some(&mut self.hint),
        )?;
        self.committed = match (avoid, quiet) {
            (Some(tx), Some(seen)) if tx.writers_unchanged(seen) => Some(tx.own_changes()),
            _ => None,
        };
        if let (Some(_), Some(last)) = (self.committed, self.batch.last_key()) {
            self.floor = Bound::Excluded(last.to_vec());
        }
        Ok(())
    }

    /// For a read under key locks that meets writers in the tree: an entry to read before
    /// `key` (before the end of the range, for None), if another transaction has deleted a
    /// key since the last entry given out (`floor`) and may put it back — the key with its
    /// row id, to be locked (so waited for) and read again like any entry
    /// (`lock/ghosts.rs`) — or if a key came into that stretch after the batch was copied (a
    /// rollback put a deleted key back after the copy, and took its note away before this
    /// look). `None` if neither: the stretch holds nothing this read must wait for.
    fn ghost_before(
        &self,
        tx: &Transaction,
        key: Option<&[u8]>,
    ) -> Result<Option<Entry>, EngineError> {
        self.ghost_between(tx, &self.floor, key)
    }

    /// [`Entries::ghost_before`] from `lower` rather than the floor.
    fn ghost_between(
        &self,
        tx: &Transaction,
        lower: &Bound<Vec<u8>>,
        key: Option<&[u8]>,
    ) -> Result<Option<Entry>, EngineError> {
        let upper = match key {
            Some(k) => Bound::Excluded(k),
            None => self.upper.as_ref().map(Vec::as_slice),
        };
        let lower_ref = lower.as_ref().map(Vec::as_slice);
        if stretch_is_empty(lower_ref, upper) {
            return Ok(None);
        }
        if let Some(ghost) = tx.ghost_between(self.db.id(), self.root, lower_ref, upper) {
            return Ok(Some(ghost));
        }
        let tree = self.db.space().tree(self.root);
        if self.batch_changes == Some(tree.changes()) {
            return Ok(None);
        }
        let mut between = tree.range(lower.clone(), upper.map(<[u8]>::to_vec));
        Ok(between.next_entry()?)
    }

    /// Notes entry `next` as given out under its lock: later looks for deleted keys start
    /// after it.
    fn pass(&mut self, next: Next) {
        let key = match next {
            Next::Batch(i) => self.batch.get(i).0,
            Next::Taken => &self.taken.0,
        };
        set_floor(&mut self.floor, key);
    }

    /// Notes `key` as read: later looks for deleted keys start after it.
    fn set_floor(&mut self, key: &[u8]) {
        set_floor(&mut self.floor, key);
    }

    /// Puts `entry` in front of entry `next` (given out, put back too) to be read first,
    /// under its lock and from the tree as it is then.
    fn read_first(&mut self, entry: Entry, next: Option<Next>) {
        if let Some(next) = next {
            let current = self.take(next);
            self.front.push_front(current);
        }
        self.front.push_front(entry);
        self.batch_changes = None;
    }

    /// The next entry, without key locks; `avoid` as for [`Entries::refill`].
    #[inline]
    fn next_entry(&mut self, avoid: Option<&Transaction>) -> Result<Option<Next>, EngineError> {
        if let Some(entry) = self.front.pop_front() {
            self.taken = entry;
            return Ok(Some(Next::Taken));
        }
        loop {
            if self.pos < self.batch.len() {
                self.pos += 1;
                return Ok(Some(Next::Batch(self.pos - 1)));
            }
            if self.done {
                return Ok(None);
            }
            self.refill(avoid)?;
            // Every entry of the batch is given out before the next refill (one put back
            // comes from the batch), so the next batch starts after its last key: set once
            // per batch rather than copying each key as it goes.
            if let Some(last) = self.batch.last_key() {
                self.next = Bound::Excluded(last.to_vec());
            }
        }
    }

    /// The key and value of an entry [`Entries::next_entry`] gave out.
    fn get(&self, next: Next) -> (&[u8], &[u8]) {
        match next {
            Next::Batch(i) => self.batch.get(i),
            Next::Taken => (&self.taken.0, &self.taken.1),
        }
    }

    /// [`Entries::get`], copied out (or moved, for one put back).
    fn take(&mut self, next: Next) -> Entry {
        match next {
            Next::Batch(i) => {
                let (key, value) = self.batch.get(i);
                (key.to_vec(), value.to_vec())
            }
            Next::Taken => std::mem::take(&mut self.taken),
        }
    }

    /// The next entry put back or of the batch, copied out of it (for the locking paths,
    /// which may put it back).
    fn pop_owned(&mut self) -> Option<Entry> {
        if let Some(entry) = self.front.pop_front() {
            return Some(entry);
        }
        if self.pos < self.batch.len() {
            let (key, value) = self.batch.get(self.pos);
            self.pos += 1;
            return Some((key.to_vec(), value.to_vec()));
        }
        None
    }

    /// An entry of the current batch as it is under S on its row `row_id` of table `table`
    /// (the lock a READ COMMITTED read takes and gives back at once): the value as copied
    /// if no entry of the tree changed since before the copy, else what the tree holds for
    /// `key` now; and whether the transaction has escalated to a table lock, which covers
    /// the rest of the read.
    ///
    /// Why the copy is then committed: an uncommitted change is made under an X lock its
    /// writer holds until it commits or undoes it (an undo is a change), and the S lock just
    /// granted says no one holds one. READ COMMITTED gives back only a lock this read took:
    /// one the transaction held already (it changed the row) stays to the end.
    fn under_row_lock(
        &self,
        tx: &mut Transaction,
        table: u32,
        row_id: &[u8],
        key: &[u8],
    ) -> Result<(Current, bool), EngineError> {
        let db = self.db.id();
        let res = Resource::key(db, table, 1, row_id);
        let Some(newly_granted) = tx.lock_key_to_read(db, table, res.clone(), LockMode::S)? else {
            // READPAST: another transaction has the row; the read goes on without it.
            return Ok((Current::Gone, false));
        };
        let escalated = newly_granted.is_none() && tx.table_covers_rows(db, table);
        let tree = self.db.space().tree(self.root);
        let current = if self.batch_changes == Some(tree.changes()) {
            Current::Copied
        } else {
            tree.get(key)?.map_or(Current::Gone, Current::Now)
        };
        if newly_granted.is_some() && tx.table_isolation(db, table) == Isolation::ReadCommitted {
            tx.unlock(&res);
        }
        Ok((current, escalated))
    }

    /// Whether `key` is below the range's upper bound.
    fn in_range(&self, key: &[u8]) -> bool {
        match &self.upper {
            Bound::Unbounded => true,
            Bound::Included(u) => key <= u.as_slice(),
            Bound::Excluded(u) => key < u.as_slice(),
        }
    }

    /// The next entry of a SERIALIZABLE range, its key locked with RangeS-S (or the
    /// range's RangeS-U); at the end of the range, the key past it is locked too.
    ///
    /// Why nothing can come into the range unseen: a key locked with RangeS-S keeps new keys
    /// out of the stretch between it and the key before it, since an insert there holds
    /// RangeI-N on it while it inserts. So once the lock is granted, what the tree holds
    /// between the last entry given out and the key is final, and one look at it finds any
    /// key that came in before the grant (then that key is locked and given out first). The
    /// look is skipped while the tree's change count says nothing changed since the batch
    /// was copied.
    fn next_locked(
        &mut self,
        tx: &mut Transaction,
        lock: &mut RangeLock,
    ) -> Result<Locked, EngineError> {
        let db = self.db.id();
        loop {
            if let Some((key, value)) = self.pop_owned() {
                // A key deleted before this one by a transaction not over: lock it first.
                if let Some(ghost) = self.ghost_between(tx, &self.next, Some(&key))? {
                    self.front.push_front((key, value));
                    self.front.push_front(ghost);
                    self.batch_changes = None;
                    continue;
                }
                let res = Resource::key(db, lock.table, lock.index.into(), &key);
                let Some(granted) = tx.lock_key_to_read(db, lock.table, res, lock.mode)? else {
                    // READPAST: another transaction has the key; go on past it.
                    self.next = Bound::Excluded(key);
                    continue;
                };
                if granted.is_none() && tx.table_covers_rows(db, lock.table) {
                    return self.escalated();
                }
                let tree = self.db.space().tree(self.root);
                if self.batch_changes == Some(tree.changes()) {
                    self.next = Bound::Excluded(key.clone());
                    return Ok(Locked::Entry(key, value));
                }
                let mut between = tree.range(self.next.clone(), Bound::Excluded(key.clone()));
                if let Some(first) = between.next_entry()? {
                    // A key came in below this one: lock and give out that one first.
                    self.front.push_front((key, value));
                    self.front.push_front(first);
                    self.batch_changes = None;
                    continue;
                }
                // The entry itself, as it is now (it may have changed or gone).
                match tree.get(&key)? {
                    Some(value) => {
                        self.next = Bound::Excluded(key.clone());
                        return Ok(Locked::Entry(key, value));
                    }
                    // Gone, and locked: nothing comes into the stretch below it now, so the
                    // next look (for deleted keys too) starts past it.
                    None => {
                        self.next = Bound::Excluded(key);
                        continue;
                    }
                }
            }
            if !self.done {
                self.refill(None)?;
                continue;
            }
            if lock.end_locked {
                return Ok(Locked::End);
            }
            if let Some(ghost) = self.ghost_between(tx, &self.next, None)? {
                self.front.push_front(ghost);
                self.batch_changes = None;
                continue;
            }
            // The range is read: lock the key past it, then look again at the stretch from
            // the last entry given out to it.
            let tree = self.db.space().tree(self.root);
            let before = tree.changes();
            let past = match past_range(&self.upper) {
                Some(from) => tree.range(from, Bound::Unbounded).next_entry()?.map(|(k, _)| k),
                None => None,
            };
            let res = key_or_end(db, lock.table, lock.index, past.as_deref());
            let Some(granted) = tx.lock_key_to_read(db, lock.table, res, lock.mode)? else {
                // READPAST: the range ends unlocked, as a read past locked rows gives up
                // keeping keys out of what it read.
                lock.end_locked = true;
                return Ok(Locked::End);
            };
            if granted.is_none() && tx.table_covers_rows(db, lock.table) {
                return self.escalated();
            }
            if self.batch_changes == Some(before) && tree.changes() == before {
                lock.end_locked = true;
                return Ok(Locked::End);
            }
            let upto = past.map_or(Bound::Unbounded, Bound::Excluded);
            match tree.range(self.next.clone(), upto).next_entry()? {
                None => {
                    lock.end_locked = true;
                    return Ok(Locked::End);
                }
                Some(entry) if self.in_range(&entry.0) => {
                    // A key came into the range: go on from it.
                    self.front.push_back(entry);
                    self.batch_changes = None;
                    self.done = false;
                }
                // A key came in past the range, before the one locked: it is the key past
                // the range now, and is locked in the next round.
                Some(_) => self.batch_changes = None,
            }
        }
    }

    /// Ends key locking after an escalation: the buffered entries may be older than the
    /// table lock, so they are read again under it.
    fn escalated(&mut self) -> Result<Locked, EngineError> {
        self.front.clear();
        self.batch.clear();
        self.pos = 0;
        self.done = false;
        Ok(Locked::Escalated)
    }
}

/// The lower bound of what lies past a range whose upper bound is `upper`; `None` if the
/// range runs to the end of the index.
fn past_range(upper: &Bound<Vec<u8>>) -> Option<Bound<Vec<u8>>> {
    match upper {
        Bound::Included(u) => Some(Bound::Excluded(u.clone())),
        Bound::Excluded(u) => Some(Bound::Included(u.clone())),
        Bound::Unbounded => None,
    }
}

/// The entries a batch holds at most.
const CURSOR_BATCH: usize = 256;

/// Whether no key lies between `lower` and `upper`.
fn stretch_is_empty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    match (lower, upper) {
        (Bound::Included(l), Bound::Included(u)) => l > u,
        (Bound::Included(l) | Bound::Excluded(l), Bound::Included(u) | Bound::Excluded(u)) => {
            l >= u
        }
        _ => false,
    }
}

/// Moves `floor` to just past `key`, in place.
fn set_floor(floor: &mut Bound<Vec<u8>>, key: &[u8]) {
    match floor {
        Bound::Excluded(f) => {
            f.clear();
            f.extend_from_slice(key);
        }
        floor => *floor = Bound::Excluded(key.to_vec()),
    }
}
