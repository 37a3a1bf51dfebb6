//! The locks a row operation takes (`docs/locking.md`): the table lock first, checking that
//! the definition the caller resolved is still the table's, then X on a written row or S on a
//! read one, RangeI-N on the key after an inserted index key while it goes in, and the
//! escalation to a table lock after [`ESCALATION_THRESHOLD`] key locks on one table. A table
//! lock that covers a row's lock makes taking the row's lock unnecessary.

use std::sync::Arc;

use super::{key_after, key_or_end, ESCALATION_THRESHOLD};
use crate::catalog::{IndexDef, TableDef};
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::{LockMode, Resource};
use crate::txn::{Isolation, Transaction};

impl Transaction {
    /// Takes `mode` on the table, and returns whether row locks are still needed (not when
    /// the transaction holds a table lock that covers them).
    ///
    /// The first lock the transaction takes on the table checks that `table` is still its
    /// definition: the caller resolved it before locking, and a DDL holding the X lock
    /// meanwhile may have replaced it (and its trees) or dropped the table. Any lock held
    /// afterwards keeps such a DDL out, so later calls need no check.
    pub(super) fn lock_table(
        &mut self,
        db: &Database,
        table: &TableDef,
        mode: LockMode,
    ) -> Result<bool, EngineError> {
        let res = Resource::Object { db: db.id(), object: table.id };
        let row_mode = if mode == LockMode::IX { LockMode::X } else { LockMode::S };
        // A TABLOCK or TABLOCKX hint: the whole table, besides what the access asks for.
        let mode = match self.table_hint(db.id(), table.id).and_then(|h| h.table) {
            Some(whole) => mode.join(whole),
            None => mode,
        };
        let held = self.table_lock(db.id(), table.id);
        if let Some(held) = held {
            if held.covers(row_mode) {
                return Ok(false);
            }
            if held.covers(mode) {
                return Ok(true);
            }
        }
        let newly_granted = self.lock(&res, mode)?;
        if held.is_none() && newly_granted {
            self.note_statement_lock(db.id(), table.id, mode);
        }
        // Checked before the lock is noted, so that every later call with the stale
        // definition fails the same way.
        if held.is_none() {
            db.check_current(table)?;
        }
        let now = held.map_or(mode, |h| h.join(mode));
        self.set_table_lock(db.id(), table.id, now);
        Ok(!now.covers(row_mode))
    }

    /// The mode a change of an existing row locks its key in: RangeX-X under SERIALIZABLE
    /// (the key and the range below it, as SQL Server's DELETE and UPDATE take), X otherwise.
    pub(super) fn change_mode(&self, db: u32, table: u32) -> LockMode {
        if self.table_isolation(db, table) == Isolation::Serializable {
            LockMode::RangeXX
        } else {
            LockMode::X
        }
    }

    /// Takes IX on the table and `mode` (X, or RangeX-X) on the row (unless a table lock
    /// covers it), both kept to the end of the transaction: what a change of the row needs
    /// first.
    pub(super) fn lock_row_for_write(
        &mut self,
        db: &Database,
        table: &TableDef,
        row_id: &[u8],
        mode: LockMode,
    ) -> Result<(), EngineError> {
        let hinted = self.table_hint(db.id(), table.id).is_some_and(|h| h.table.is_some());
        if !hinted && self.table_lock(db.id(), table.id).is_none() {
            // The first lock on the table: both at once, as `lock_table` and `lock_row` would
            // take them (no key count can be near escalation yet).
            let key = Resource::key(db.id(), table.id, 1, row_id);
            self.lock_table_and_key((db.id(), table.id), LockMode::IX, &key, mode)?;
            // As in `lock_table`: checked before the lock is noted.
            db.check_current(table)?;
            self.set_table_lock(db.id(), table.id, LockMode::IX);
            return Ok(());
        }
        if self.lock_table(db, table, LockMode::IX)? {
            self.lock_row(db, table.id, row_id, mode)?;
        }
        Ok(())
    }

    /// Locks a row's key, escalating to a table lock once the transaction holds
    /// [`ESCALATION_THRESHOLD`] key locks on the table. Returns the resource when this call
    /// acquired (or strengthened) the row lock and still holds it, `None` when the transaction
    /// already held a covering lock or now holds the table lock instead.
    fn lock_row(
        &mut self,
        db: &Database,
        table: u32,
        row_id: &[u8],
        mode: LockMode,
    ) -> Result<Option<Resource>, EngineError> {
        self.lock_key(db.id(), table, Resource::key(db.id(), table, 1, row_id), mode)
    }

    /// Locks `res`, a key of table `table` in any of its indexes, in `mode`, escalating as
    /// [`Transaction::lock_row`] does (range locks count as key locks). Returns the resource
    /// when this call acquired (or strengthened) the lock and still holds it, `None` when
    /// the transaction already held a covering lock or now holds the table lock instead.
    pub(super) fn lock_key(
        &mut self,
        db: u32,
        table: u32,
        res: Resource,
        mode: LockMode,
    ) -> Result<Option<Resource>, EngineError> {
        // A lock the transaction already held (an UPDATE's X, say) is not this request's to
        // give back: a READ COMMITTED read releases only a lock it took itself. Releasing
        // it would let another transaction change the row before this one commits.
        let newly_granted = self.lock(&res, mode)?;
        Ok(self.after_key_lock(db, table, res, newly_granted, mode))
    }

    /// [`Transaction::lock_key`] for a read, which with `READPAST` on the table does not wait
    /// for a key another transaction holds: `None` then, and the read skips the key.
    /// Otherwise what `lock_key` answers.
    pub(crate) fn lock_key_to_read(
        &mut self,
        db: u32,
        table: u32,
        res: Resource,
        mode: LockMode,
    ) -> Result<Option<Option<Resource>>, EngineError> {
        if !self.reads_past(db, table) {
            return self.lock_key(db, table, res, mode).map(Some);
        }
        match self.lock_or_pass(&res, mode)? {
            Some(newly_granted) => {
                Ok(Some(self.after_key_lock(db, table, res, newly_granted, mode)))
            }
            None => Ok(None),
        }
    }

    /// What follows a key lock's grant: escalation to the table past
    /// [`ESCALATION_THRESHOLD`] key locks (then `None`), else the resource if the grant was
    /// new.
    fn after_key_lock(
        &mut self,
        db: u32,
        table: u32,
        res: Resource,
        newly_granted: bool,
        mode: LockMode,
    ) -> Option<Resource> {
        if self.key_lock_count(db, table) >= ESCALATION_THRESHOLD && self.escalate(db, table, mode)
        {
            return None;
        }
        newly_granted.then_some(res)
    }

    /// Tries to trade the transaction's key locks on table `table` for a lock on the table,
    /// as SQL Server does past [`ESCALATION_THRESHOLD`]; `true` if it did. `mode` is the key
    /// lock just taken.
    fn escalate(&mut self, db: u32, table: u32, mode: LockMode) -> bool {
        // S only if every key lock is a shared one: a transaction whose table lock covers IX
        // has taken X key locks (it writes), and dropping them for a table S (SIX with its
        // IX) would let other sessions read its uncommitted rows. An update lock (U,
        // RangeS-U) is an UPDATE's or DELETE's search, which is about to write: it escalates
        // to X, as SQL Server's does, and not to an S that its first write would have to
        // convert to SIX while other readers hold the table.
        let writes = mode.covers(LockMode::U)
            || self.table_lock(db, table).is_some_and(|held| held.covers(LockMode::IX));
        let table_mode = if writes { LockMode::X } else { LockMode::S };
        let table_res = Resource::Object { db, object: table };
        // Escalation that cannot be granted at once is skipped, as in SQL Server, and retried
        // at the next key lock: the key locks still protect the keys and ranges.
        if !self.lock_at_once(&table_res, table_mode) {
            return false;
        }
        let now = self.table_lock(db, table).map_or(table_mode, |h| h.join(table_mode));
        self.set_table_lock(db, table, now);
        // The table lock covers every key and range of the table (a table S keeps every
        // insert out, since an insert needs IX), so the key lock just taken goes with the
        // others.
        self.release_keys(db, table);
        true
    }

    /// Inserts `key` -> `value` into index `index` of `table`; `Ok(false)` if the key is
    /// taken. Unless no range can be locked across the key, it first takes RangeI-N on the
    /// key after it (or the end of the index), so that it waits for a SERIALIZABLE reader
    /// whose range the key would fall into, and holds it while it inserts: a reader that
    /// locks that key afterwards finds the new key in the tree (X-locked by this
    /// transaction). RangeI-N is given back once the key is in, unless the transaction held
    /// the next key already.
    ///
    /// Whether a range can be locked is [`Transaction::ranges_locked`], read before the
    /// insert and again after it: a reader counts itself before it reads its range, so if
    /// both readings are 0, every reader of the range counted itself after the key went in
    /// and will find it. If only the second reading is not 0, the range is tested then.
    pub(super) fn insert_key(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        index: &IndexDef,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool, EngineError> {
        // A heap's locators are no range anyone locks, and a table lock covering X keeps
        // every other transaction's locks off the table.
        let exempt = index.is_heap()
            || self.table_lock(db.id(), table.id).is_some_and(|held| held.covers(LockMode::X));
        if exempt || !self.ranges_locked() {
            let inserted = self.tree_insert(db, index.root, key, value)?;
            if inserted && !exempt && self.ranges_locked() {
                self.test_range(db, table.id, index, key, None)?;
            }
            return Ok(inserted);
        }
        let tree = db.space().tree(index.root);
        let before = tree.changes();
        let next = key_after(db, index, key)?;
        let res = key_or_end(db.id(), table.id, index.id, next.as_deref());
        let fresh = self.lock_fresh(&res, LockMode::RangeIN)?;
        let mut result = self.tree_insert(db, index.root, key, value);
        // Another key may have come in between this one and `next` since `next` was read:
        // then the range the key is in is another's, and is tested now.
        if matches!(result, Ok(true)) && tree.changes() != before + 1 {
            result = self.test_range(db, table.id, index, key, Some(&res)).map(|()| true);
        }
        if fresh {
            self.unlock(&res);
        }
        result
    }

    /// Tests the range key `key`, already in index `index`, is in: waits until RangeI-N on
    /// the key after it can be granted, unless that is `tested`, and gives it back.
    fn test_range(
        &mut self,
        db: &Arc<Database>,
        table: u32,
        index: &IndexDef,
        key: &[u8],
        tested: Option<&Resource>,
    ) -> Result<(), EngineError> {
        let next = key_after(db, index, key)?;
        let res = key_or_end(db.id(), table, index.id, next.as_deref());
        if tested != Some(&res) && self.lock_fresh(&res, LockMode::RangeIN)? {
            self.unlock(&res);
        }
        Ok(())
    }
}
