//! [`RowCursor`]: a table's rows in key order, decoded a row at a time (some columns
//! deferred to the rows a reader keeps), under the locks its [`RowLocking`] says.

use std::sync::Arc;

use super::{Current, Entries, Locked, RangeLock};
use crate::database::Database;
use crate::error::EngineError;
use crate::table::RowId;
use crate::txn::{Isolation, Transaction};
use crate::types::{RowDecoder, RowError, Value};

/// Which key locks a [`RowCursor`] takes.
#[derive(Debug)]
pub(in crate::table) enum RowLocking {
    /// None: a table lock covers the rows.
    Table,
    /// S on each row while it is read, given back at once under READ COMMITTED, where it
    /// is skipped for rows copied while no other transaction had a change in the tree.
    Rows,
    /// RangeS-S on each key and on the key past the range, held (SERIALIZABLE).
    Range(RangeLock),
}

/// A cursor over a table's rows. It holds no latch between calls; under READ COMMITTED each
/// row is S-locked while it is read and released at once, unless its batch was copied while
/// no other transaction had a change in the tree (lock avoidance, `lock/writers.rs`).
#[derive(Debug)]
pub struct RowCursor {
    pub(in crate::table) entries: Entries,
    pub(in crate::table) table_id: u32,
    pub(in crate::table) locking: RowLocking,
    /// Decodes the rows: the columns to decode (all, unless
    /// [`Transaction::scan_table_only`] says otherwise), worked out once for every row.
    pub(in crate::table) decoder: RowDecoder,
    /// The columns [`RowCursor::defer`] left to [`RowCursor::finish_row`], and the bytes of
    /// the row decoded last, to decode them from (kept only while some are deferred).
    pub(in crate::table) deferred: Option<RowDecoder>,
    pub(in crate::table) current: std::cell::RefCell<Vec<u8>>,
    /// Whether [`RowCursor::next_row_into`] ends a row with its id (else with NULL).
    pub(in crate::table) locators: bool,
}

impl RowCursor {
    /// The next row: its id and values.
    pub fn next_row(
        &mut self,
        tx: &mut Transaction,
    ) -> Result<Option<(RowId, Vec<Value>)>, EngineError> {
        // Room for the row locator a reader appends.
        let mut row = Vec::with_capacity(self.decoder.columns().len() + 1);
        let mut id = Vec::new();
        Ok(self.next_values(tx, &mut row, &mut IdTo::Buffer(&mut id))?.then_some((id, row)))
    }

    /// Writes the next row into `row`: its values, then its row id as a `Value::Binary`
    /// (the row locator the SQL layer reads rows with). `row` should be empty or the row
    /// this cursor wrote last: then its allocations (the row's, its strings', its id's) are
    /// used again, which a scan whose filter rejects most rows gains most from. False at
    /// the end of the range; on an error `row` may hold anything.
    pub fn next_row_into(
        &mut self,
        tx: &mut Transaction,
        row: &mut Vec<Value>,
    ) -> Result<bool, EngineError> {
        self.next_values(tx, row, &mut IdTo::Row)
    }

    /// Whether this cursor reads `table` of `db` (the tree it was made for) with the
    /// decoder a new one for `wanted` would have: [`Transaction::reseek_table_only`] may
    /// then use it again.
    pub(in crate::table) fn fits(
        &self,
        db: &Arc<Database>,
        table: &crate::catalog::TableDef,
        wanted: Option<&[bool]>,
    ) -> bool {
        let Ok(primary) = table.primary() else { return false };
        Arc::ptr_eq(&self.entries.db, db)
            && self.entries.root == primary.root
            && self.table_id == table.id
            && self.deferred.is_none()
            && self.decoder.is_made_of(table.columns.iter().map(|c| c.ty), wanted)
    }

    /// Ends each row [`RowCursor::next_row_into`] gives with NULL instead of its id, for a
    /// reader that never reads the ids (a SELECT's): the row keeps its width, and no id is
    /// copied out for it.
    pub fn without_locators(&mut self) {
        self.locators = false;
    }

    /// Leaves the columns `later` marks (of those the cursor decodes) out of what
    /// [`RowCursor::next_row_into`] decodes: [`RowCursor::finish_row`] decodes them, for the
    /// rows the reader keeps. A scan whose filter reads few of the columns it wants decodes
    /// the rest only for the rows that pass (TPC-H Q19 keeps 2% of `lineitem`). Nothing is
    /// deferred where `later` marks none of them, or all.
    pub fn defer(&mut self, later: &[bool]) {
        let wanted = self.decoder.wanted();
        let is_later = |i: usize| later.get(i).copied().unwrap_or(false);
        let now: Vec<bool> = wanted.iter().enumerate().map(|(i, &w)| w && !is_later(i)).collect();
        let rest: Vec<bool> = wanted.iter().enumerate().map(|(i, &w)| w && is_later(i)).collect();
        if !now.contains(&true) || !rest.contains(&true) {
            return;
        }
        let columns = self.decoder.columns().to_vec();
        self.decoder = RowDecoder::new(&columns, Some(&now));
        self.deferred = Some(RowDecoder::new(&columns, Some(&rest)));
    }

    /// Decodes into `row`, the row [`RowCursor::next_row_into`] wrote last, the columns
    /// [`RowCursor::defer`] left out of it.
    pub fn finish_row(&self, row: &mut [Value]) -> Result<(), EngineError> {
        let Some(deferred) = &self.deferred else { return Ok(()) };
        let db = &self.entries.db;
        let bytes = self.current.borrow();
        deferred
            .decode_more_into(
                &bytes,
                &mut |pointer| {
                    db.space().read_blob(pointer).map_err(|e| RowError::Storage(e.to_string()))
                },
                row,
            )
            .map_err(|e| EngineError::Corrupt(format!("a row of object {}: {e}", self.table_id)))
    }

    /// Decodes the next row's values into `row` (as [`RowDecoder::decode_into`] does) and
    /// puts its id where `id` says; false at the end of the range.
    fn next_values(
        &mut self,
        tx: &mut Transaction,
        row: &mut Vec<Value>,
        id: &mut IdTo<'_>,
    ) -> Result<bool, EngineError> {
        if let RowLocking::Range(lock) = &mut self.locking {
            match self.entries.next_locked(tx, lock)? {
                Locked::Entry(key, bytes) => return self.decode(&key, &bytes, row, id),
                Locked::End => return Ok(false),
                Locked::Escalated => self.locking = RowLocking::Table,
            }
        }
        loop {
            let read_committed = matches!(self.locking, RowLocking::Rows)
                && tx.table_isolation(self.entries.db.id(), self.table_id)
                    == Isolation::ReadCommitted;
            let Some(next) = self.entries.next_entry(read_committed.then_some(&*tx))? else {
                if read_committed && self.entries.committed != Some(tx.own_changes()) {
                    if let Some(ghost) = self.entries.ghost_before(tx, None)? {
                        self.entries.read_first(ghost, None);
                        continue;
                    }
                }
                return Ok(false);
            };
            if !matches!(self.locking, RowLocking::Rows) {
                let (key, bytes) = self.entries.get(next);
                return self.decode(key, bytes, row, id);
            }
            // Lock avoidance: the S lock would only wait for a change that is not committed,
            // and the batch holds none of another transaction, so READ COMMITTED reads the
            // row as copied (its lock would be given back at once anyway). Unless the reader
            // changed rows since the copy: then the copy may not show its own change, and the
            // path below reads the row again.
            if read_committed && self.entries.committed == Some(tx.own_changes()) {
                let (key, bytes) = self.entries.get(next);
                return self.decode(key, bytes, row, id);
            }
            // A row deleted by a transaction not over, before this one: wait for it first.
            if let Some(ghost) = self.entries.ghost_before(tx, Some(self.entries.get(next).0))? {
                self.entries.read_first(ghost, Some(next));
                continue;
            }
            self.entries.pass(next);
            let (key, bytes) = self.entries.get(next);
            let (current, escalated) = self.entries.under_row_lock(tx, self.table_id, key, key)?;
            if escalated {
                // The table lock covers the rest: read again under it.
                self.locking = RowLocking::Table;
            }
            match current {
                Current::Copied => return self.decode(key, bytes, row, id),
                Current::Now(b) => return self.decode(key, &b, row, id),
                Current::Gone => continue,
            }
        }
    }

    /// Decodes row `key` from `bytes` into `row`, its id where `id` says; true.
    fn decode(
        &self,
        key: &[u8],
        bytes: &[u8],
        row: &mut Vec<Value>,
        id: &mut IdTo<'_>,
    ) -> Result<bool, EngineError> {
        let db = &self.entries.db;
        if self.deferred.is_some() {
            let mut current = self.current.borrow_mut();
            current.clear();
            current.extend_from_slice(bytes);
        }
        self.decoder
            .decode_into(
                bytes,
                &mut |pointer| {
                    db.space().read_blob(pointer).map_err(|e| RowError::Storage(e.to_string()))
                },
                row,
            )
            .map_err(|e| EngineError::Corrupt(format!("a row of object {}: {e}", self.table_id)))?;
        match id {
            IdTo::Buffer(buffer) => {
                buffer.clear();
                buffer.extend_from_slice(key);
            }
            IdTo::Row if !self.locators => {
                let n = self.decoder.columns().len();
                row.truncate(n);
                row.push(Value::Null);
            }
            IdTo::Row => {
                // Written in place: a `Value` moved into the row goes through a stack
                // temporary, copied whole, which stalled every row.
                let n = self.decoder.columns().len();
                if !(row.len() == n + 1 && matches!(row[n], Value::Binary(_))) {
                    row.truncate(n);
                    row.push(Value::Binary(Vec::new()));
                }
                if let Some(Value::Binary(locator)) = row.last_mut() {
                    locator.clear();
                    locator.extend_from_slice(key);
                }
            }
        }
        Ok(true)
    }
}

/// Where [`RowCursor::next_values`] puts a row's id.
enum IdTo<'a> {
    /// After the row's values, as a `Value::Binary`, in place of the one there.
    Row,
    /// Into this buffer.
    Buffer(&'a mut Vec<u8>),
}
