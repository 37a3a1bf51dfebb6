//! [`IndexCursor`]: a nonclustered index's row ids in key order, and its entries read for
//! their keys alone (index-only reads).

use super::{Current, Entries, Locked, Next, RangeLock};
use crate::error::EngineError;
use crate::table::RowId;
use crate::txn::{Isolation, Transaction};

/// A cursor over a nonclustered index's entries: the row ids, in index key order. Like
/// [`RowCursor`](super::RowCursor) it copies a batch of entries at a time and holds no
/// latch between calls.
#[derive(Debug)]
pub struct IndexCursor {
    pub(in crate::table) entries: Entries,
    /// The range's key locks (SERIALIZABLE), if it takes them.
    pub(in crate::table) range: Option<RangeLock>,
    /// The table the index is on.
    pub(in crate::table) table_id: u32,
    /// Whether an entry read for its key alone ([`IndexCursor::next_covered`]) is proven
    /// committed by an S lock on its row (READ COMMITTED): false when a table lock or the
    /// range's key locks cover the entries.
    pub(in crate::table) row_locks: bool,
}

impl IndexCursor {
    /// The row id of the next entry, locking its index key in `tx` under SERIALIZABLE.
    pub fn next_row_id(&mut self, tx: &mut Transaction) -> Result<Option<RowId>, EngineError> {
        if let Some(lock) = &mut self.range {
            match self.entries.next_locked(tx, lock)? {
                Locked::Entry(_, row_id) => return Ok(Some(row_id)),
                Locked::End => return Ok(None),
                Locked::Escalated => self.range = None,
            }
        }
        // The caller's read of the row takes its lock; what this read must add is the rows
        // whose keys other transactions deleted and may put back (`lock/ghosts.rs`): their
        // row ids, so that the read of the row waits for the delete.
        let read_committed = self.row_locks
            && tx.table_isolation(self.entries.db.id(), self.table_id) == Isolation::ReadCommitted;
        let Some(next) = self.entries.next_entry(read_committed.then_some(&*tx))? else {
            if read_committed && self.entries.committed != Some(tx.own_changes()) {
                if let Some((key, row_id)) = self.entries.ghost_before(tx, None)? {
                    self.entries.set_floor(&key);
                    return Ok(Some(row_id));
                }
            }
            return Ok(None);
        };
        if read_committed && self.entries.committed != Some(tx.own_changes()) {
            if let Some((key, row_id)) =
                self.entries.ghost_before(tx, Some(self.entries.get(next).0))?
            {
                let current = self.entries.take(next);
                self.entries.front.push_front(current);
                self.entries.set_floor(&key);
                return Ok(Some(row_id));
            }
            self.entries.pass(next);
        }
        Ok(Some(match next {
            Next::Taken => std::mem::take(&mut self.entries.taken.1),
            Next::Batch(_) => self.entries.get(next).1.to_vec(),
        }))
    }

    /// The next entry, its key and row id, for a read that takes the row's columns from the
    /// key and never reads the row (an index-only read). The row's lock, which the row's
    /// read would take, proves the entry committed instead: a writer changes an index entry
    /// only under the X lock on its row, held until it commits or undoes the change, and an
    /// undo is a change to the index. So once S on the row is granted, the entry as copied is
    /// the committed one if the index's change count is what it was before the copy, and
    /// otherwise the index is asked again (the entry may be gone, or point at another row,
    /// which is then locked in turn). READ COMMITTED gives the lock back at once, as a row
    /// read does, and takes none for a batch copied with no other writer in the index's tree
    /// (lock avoidance, `lock/writers.rs`).
    pub fn next_covered(
        &mut self,
        tx: &mut Transaction,
    ) -> Result<Option<(Vec<u8>, RowId)>, EngineError> {
        Ok(self.next_covered_ref(tx)?.map(|(key, row_id)| (key.to_vec(), row_id.to_vec())))
    }
}

/// An index entry's key and row id as a cursor's batch holds them
/// ([`IndexCursor::next_covered_ref`]).
pub type EntryRef<'a> = (&'a [u8], &'a [u8]);

impl IndexCursor {
    /// The next entry as [`IndexCursor::next_covered`] gives it, without copying it out: its
    /// key and row id as the cursor's batch holds them, valid until the next call. A read that only counts
    /// entries or looks at a key column (an anti join's probe, `COUNT(*)` over a seek) then
    /// allocates nothing per entry. The same locks are taken, and the same entries given.
    pub fn next_covered_ref(
        &mut self,
        tx: &mut Transaction,
    ) -> Result<Option<EntryRef<'_>>, EngineError> {
        if let Some(lock) = &mut self.range {
            match self.entries.next_locked(tx, lock)? {
                Locked::Entry(key, row_id) => {
                    self.entries.taken = (key, row_id);
                    let (key, row_id) = self.entries.get(Next::Taken);
                    return Ok(Some((key, row_id)));
                }
                Locked::End => return Ok(None),
                Locked::Escalated => self.range = None,
            }
        }
        loop {
            let read_committed = self.row_locks
                && tx.table_isolation(self.entries.db.id(), self.table_id)
                    == Isolation::ReadCommitted;
            let Some(next) = self.entries.next_entry(read_committed.then_some(&*tx))? else {
                if read_committed && self.entries.committed != Some(tx.own_changes()) {
                    if let Some(ghost) = self.entries.ghost_before(tx, None)? {
                        self.entries.read_first(ghost, None);
                        continue;
                    }
                }
                return Ok(None);
            };
            // As `next_covered`: no lock where a table lock covers the entries or the batch
            // was copied with no other writer in the tree.
            if !self.row_locks
                || (read_committed && self.entries.committed == Some(tx.own_changes()))
            {
                return Ok(Some(self.entries.get(next)));
            }
            // As `next_covered`: a key deleted before this one is waited for first.
            if let Some(ghost) = self.entries.ghost_before(tx, Some(self.entries.get(next).0))? {
                self.entries.read_first(ghost, Some(next));
                continue;
            }
            self.entries.pass(next);
            let (key, row_id) = self.entries.get(next);
            let (current, escalated) =
                self.entries.under_row_lock(tx, self.table_id, row_id, key)?;
            if escalated {
                self.row_locks = false;
            }
            match current {
                Current::Copied => return Ok(Some(self.entries.get(next))),
                Current::Now(id) if id == self.entries.get(next).1 => {
                    return Ok(Some(self.entries.get(next)))
                }
                // The key now names another row: lock that row and look again.
                Current::Now(id) => {
                    let key = self.entries.get(next).0.to_vec();
                    self.entries.front.push_front((key, id));
                    self.entries.batch_changes = None;
                }
                Current::Gone => {}
            }
        }
    }
}
