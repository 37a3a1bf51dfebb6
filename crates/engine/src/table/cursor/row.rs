//! [`RowCursor`]: a table's rows in key order, decoded a row at a time (some columns
//! deferred to the rows a reader keeps), under the locks its [`RowLocking`] says.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::{Current, Entries, Locked, Next, RangeLock};
use crate::database::Database;
use crate::error::EngineError;
use crate::table::RowId;
use crate::txn::{Isolation, Transaction};
use crate::types::{DayRange, DayTest, RowDecoder, RowError, Value};

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
    /// The later steps of a row's decoding, where [`RowCursor::stage`] split it.
    pub(in crate::table) staged: Option<Stages>,
    /// Whether [`RowCursor::next_row_into`] ends a row with its id (else with NULL).
    pub(in crate::table) locators: bool,
    /// Rows to pass over, by their DATE columns, before decoding ([`RowCursor::reject_days`]).
    pub(in crate::table) day_tests: Vec<DayTest>,
}

/// How many rows in a row [`RowCursor::reject_days`]'s tests may pass over before one is
/// given to the reader anyway (its filter rejects it): the reader checks for cancellation
/// per row it is given, so a scan that passes over every row still stops within this many.
const MAX_PASSED_OVER: u32 = 1024;

/// What one read of [`RowCursor::next_values`] found.
enum Step {
    /// A row, written out.
    Row,
    /// A row [`RowCursor::reject_days`]'s tests reject, not decoded.
    PassedOver,
    /// The end of the range.
    End,
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
        let decoder = self.staged.as_ref().map_or(&self.decoder, |s| &s.whole);
        Arc::ptr_eq(&self.entries.db, db)
            && self.entries.root == primary.root
            && self.table_id == table.id
            && decoder.is_made_of(table.columns.iter().map(|c| c.ty), wanted)
    }

    /// Undoes [`RowCursor::stage`]: every wanted column is decoded by
    /// [`RowCursor::next_row_into`] again.
    pub fn unstage(&mut self) {
        if let Some(stages) = self.staged.take() {
            self.decoder = stages.whole;
        }
    }

    /// Passes over, undecoded, each row whose DATE column of a range in `ranges` is NULL or
    /// outside it, for a reader whose filter would reject such rows anyway (its conjuncts
    /// `d >= x`, `d < y`: TPC-H Q6 keeps one year of seven). A range on a column that is not
    /// a DATE is not tested. The rows passed over are read, and locked as the cursor's
    /// locking says, like the others; only their decoding and the reader's filter are
    /// spared. [`Transaction::reseek_table_only`] clears the ranges.
    pub fn reject_days(&mut self, ranges: &[DayRange]) {
        self.day_tests = ranges.iter().filter_map(|&r| self.decoder.day_test(r)).collect();
    }

    /// Ends each row [`RowCursor::next_row_into`] gives with NULL instead of its id, for a
    /// reader that never reads the ids (a SELECT's): the row keeps its width, and no id is
    /// copied out for it.
    pub fn without_locators(&mut self) {
        self.locators = false;
    }

    /// Splits the decoding of each row into steps, so that a reader whose filter rejects
    /// most rows decodes, for a rejected row, only the columns the conjuncts it ran read.
    /// [`RowCursor::next_row_into`] decodes the wanted columns `steps[0]` marks;
    /// [`RowCursor::decode_step`]`(k)` those `steps[k]` marks (after the steps before it);
    /// [`RowCursor::finish_row`] every wanted column no step marks, for the rows the reader
    /// keeps. A column marked by two steps is decoded by the first. TPC-H Q6 tests
    /// `l_shipdate` first and keeps 15% of the rows; the rest are never decoded further.
    /// Nothing is staged where the first step decodes every wanted column. A cursor made
    /// again for another range ([`Transaction::reseek_table_only`], a join's seek per outer
    /// row) keeps its steps, and staging it with the same steps again costs nothing.
    pub fn stage(&mut self, steps: &[Vec<bool>]) {
        if self.staged.as_ref().is_some_and(|s| s.steps == steps) {
            return;
        }
        self.unstage();
        let wanted = self.decoder.wanted();
        let mut taken = vec![false; wanted.len()];
        let mut take = |marks: Option<&Vec<bool>>| -> Vec<bool> {
            (0..wanted.len())
                .map(|i| {
                    let take = wanted[i]
                        && !taken[i]
                        && marks.is_none_or(|m| m.get(i).copied().unwrap_or(false));
                    taken[i] |= take;
                    take
                })
                .collect()
        };
        let first = take(Some(steps.first().unwrap_or(&Vec::new())));
        let mut later: Vec<Vec<bool>> = steps.iter().skip(1).map(|m| take(Some(m))).collect();
        later.push(take(None));
        if later.iter().all(|m| !m.contains(&true)) {
            return;
        }
        let columns = self.decoder.columns().to_vec();
        let step = |m: &Vec<bool>| m.contains(&true).then(|| RowDecoder::new(&columns, Some(m)));
        let first = RowDecoder::new(&columns, Some(&first)).leaving(&taken_later(&later));
        let later = later.iter().map(step).collect();
        let whole = std::mem::replace(&mut self.decoder, first);
        self.staged = Some(Stages {
            steps: steps.to_vec(),
            whole,
            later,
            done: Cell::new(0),
            at: Cell::new(None),
            bytes: RefCell::default(),
        });
    }

    /// Decodes into `row`, the row [`RowCursor::next_row_into`] wrote last, the columns of
    /// step `k` of [`RowCursor::stage`] and of the steps before it not decoded yet.
    pub fn decode_step(&self, k: usize, row: &mut [Value]) -> Result<(), EngineError> {
        match &self.staged {
            Some(stages) => self.decode_later(stages, k.min(stages.later.len() - 1), row),
            None => Ok(()),
        }
    }

    /// Decodes into `row`, the row [`RowCursor::next_row_into`] wrote last, every wanted
    /// column that [`RowCursor::stage`] left to later steps and that is not decoded yet.
    pub fn finish_row(&self, row: &mut [Value]) -> Result<(), EngineError> {
        match &self.staged {
            Some(stages) => self.decode_later(stages, stages.later.len(), row),
            None => Ok(()),
        }
    }

    /// Decodes the later steps up to step `k` (counting the first as 0) that the current
    /// row has not had decoded.
    fn decode_later(
        &self,
        stages: &Stages,
        k: usize,
        row: &mut [Value],
    ) -> Result<(), EngineError> {
        let db = &self.entries.db;
        let copied = stages.bytes.borrow();
        let bytes = match stages.at.get() {
            Some(next) => self.entries.get(next).1,
            None => copied.as_slice(),
        };
        while stages.done.get() < k {
            let step = stages.done.get();
            stages.done.set(step + 1);
            let Some(decoder) = &stages.later[step] else { continue };
            decoder
                .decode_more_into(
                    bytes,
                    &mut |pointer| {
                        db.space().read_blob(pointer).map_err(|e| RowError::Storage(e.to_string()))
                    },
                    row,
                )
                .map_err(|e| {
                    EngineError::Corrupt(format!("a row of object {}: {e}", self.table_id))
                })?;
        }
        Ok(())
    }

    /// Decodes the next row's values into `row` (as [`RowDecoder::decode_into`] does) and
    /// puts its id where `id` says; false at the end of the range. Rows the day tests
    /// reject are passed over, up to [`MAX_PASSED_OVER`] in a row.
    fn next_values(
        &mut self,
        tx: &mut Transaction,
        row: &mut Vec<Value>,
        id: &mut IdTo<'_>,
    ) -> Result<bool, EngineError> {
        let mut passed = 0;
        loop {
            let test = !self.day_tests.is_empty() && passed < MAX_PASSED_OVER;
            match self.read_next(tx, row, id, test)? {
                Step::Row => return Ok(true),
                Step::End => return Ok(false),
                Step::PassedOver => passed += 1,
            }
        }
    }

    /// One row of [`RowCursor::next_values`], tested first by the day tests if `test`.
    fn read_next(
        &mut self,
        tx: &mut Transaction,
        row: &mut Vec<Value>,
        id: &mut IdTo<'_>,
        test: bool,
    ) -> Result<Step, EngineError> {
        if let RowLocking::Range(lock) = &mut self.locking {
            match self.entries.next_locked(tx, lock)? {
                Locked::Entry(key, bytes) => return self.decode(&key, &bytes, None, row, id, test),
                Locked::End => return Ok(Step::End),
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
                return Ok(Step::End);
            };
            if !matches!(self.locking, RowLocking::Rows) {
                let (key, bytes) = self.entries.get(next);
                return self.decode(key, bytes, Some(next), row, id, test);
            }
            // Lock avoidance: the S lock would only wait for a change that is not committed,
            // and the batch holds none of another transaction, so READ COMMITTED reads the
            // row as copied (its lock would be given back at once anyway). Unless the reader
            // changed rows since the copy: then the copy may not show its own change, and the
            // path below reads the row again.
            if read_committed && self.entries.committed == Some(tx.own_changes()) {
                let (key, bytes) = self.entries.get(next);
                return self.decode(key, bytes, Some(next), row, id, test);
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
                Current::Copied => return self.decode(key, bytes, Some(next), row, id, test),
                Current::Now(b) => return self.decode(key, &b, None, row, id, test),
                Current::Gone => continue,
            }
        }
    }

    /// Decodes row `key` from `bytes` into `row`, its id where `id` says: a
    /// [`Step::Row`]; a [`Step::PassedOver`], nothing decoded, if `test` and the day tests
    /// reject the row. `at` is the
    /// entry of [`RowCursor::entries`] the bytes are, if they are one: the later steps read
    /// them there, where they stay until the cursor moves on; other bytes (read again under
    /// a lock) are copied for them.
    fn decode(
        &self,
        key: &[u8],
        bytes: &[u8],
        at: Option<Next>,
        row: &mut Vec<Value>,
        id: &mut IdTo<'_>,
        test: bool,
    ) -> Result<Step, EngineError> {
        if test && self.decoder.days_outside(bytes, &self.day_tests) {
            return Ok(Step::PassedOver);
        }
        let db = &self.entries.db;
        if let Some(stages) = &self.staged {
            stages.at.set(at);
            if at.is_none() {
                let mut current = stages.bytes.borrow_mut();
                current.clear();
                current.extend_from_slice(bytes);
            }
            stages.done.set(0);
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
                // Not pushed: a NULL pushed is its tag written alone to a stack temporary,
                // then copied whole into the row, and that load of a partly written
                // temporary stalled every row.
                let n = self.decoder.columns().len();
                if !(row.len() == n + 1 && row[n].is_null()) {
                    row.truncate(n);
                    row.resize_with(n + 1, || Value::Null);
                }
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
        Ok(Step::Row)
    }
}

/// Where [`RowCursor::next_values`] puts a row's id.
enum IdTo<'a> {
    /// After the row's values, as a `Value::Binary`, in place of the one there.
    Row,
    /// Into this buffer.
    Buffer(&'a mut Vec<u8>),
}

/// The columns some of the later steps decode.
fn taken_later(later: &[Vec<bool>]) -> Vec<bool> {
    let n = later.first().map_or(0, Vec::len);
    (0..n).map(|i| later.iter().any(|m| m[i])).collect()
}

/// The later steps of a [`RowCursor`]'s decoding ([`RowCursor::stage`]).
#[derive(Debug)]
pub(in crate::table) struct Stages {
    /// The steps as [`RowCursor::stage`] was given them.
    steps: Vec<Vec<bool>>,
    /// The decoder of every wanted column, which [`RowCursor::unstage`] puts back.
    whole: RowDecoder,
    /// The decoders of the steps after the first, in order, the last of the columns no step
    /// marks; None for a step with nothing left to decode.
    later: Vec<Option<RowDecoder>>,
    /// How many of `later` have been decoded into the current row.
    done: Cell<usize>,
    /// The entry of the cursor's [`Entries`] the row decoded last is, which the later steps
    /// decode from: it stays there until the cursor moves on to the next row. None for a
    /// row read again under its lock, whose bytes are in `bytes`.
    at: Cell<Option<Next>>,
    /// The bytes of the row decoded last, where `at` is None.
    bytes: RefCell<Vec<u8>>,
}
