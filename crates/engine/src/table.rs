//! Rows of tables: inserts, updates, deletes, reads and scans, with their locks, index
//! maintenance, identity values and row locators.
//!
//! # Where a row lives
//!
//! * A table with a clustered index keeps its rows in index 1's tree, keyed by the clustered
//!   key's memcomparable encoding ([`crate::types::encode_key`]).
//! * A heap keeps them in index 1's tree keyed by an 8-byte row locator (big-endian, so
//!   locators sort in insertion order), handed out from a counter that starts after the
//!   largest locator in the tree.
//! * Either way that tree key is the row's [`RowId`]. A nonclustered index maps its key (plus
//!   the row id, if the index is not unique, to keep entries distinct) to the row id.
//!
//! # Locks (see `docs/locking.md`)
//!
//! Reads take IS on the table and S on the row's key, released right after the read under
//! READ COMMITTED (the IS as the statement ends, `txn/statement_locks.rs`) and held under
//! SERIALIZABLE. READ COMMITTED skips the S lock when it reads
//! while no other transaction has a change in the tree (lock avoidance, `lock/writers.rs`).
//! A SERIALIZABLE seek or range scan locks each key it reads with RangeS-S (RangeS-U when an
//! UPDATE or DELETE searches the rows it changes) and then the key past its range (or the end
//! of the index), and an equality seek that finds nothing locks the gap where its key would
//! be, so no phantom can appear; only a scan of the whole table takes S on the table instead.
//! Writes take IX on the table and X on the row (RangeX-X under SERIALIZABLE for a row changed
//! or deleted), and an insert into an index holds RangeI-N on the key after its own while it
//! inserts, so it waits for any range locked across it. After 5,000 key locks on one table
//! (range locks included) a transaction escalates to a table lock (X if it writes or searches
//! for rows to change, S if it only reads), as SQL Server does, and stops taking key locks
//! there.

use std::ops::Bound;
use std::sync::Arc;

use crate::catalog::{IndexDef, TableDef};
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::{LockMode, Resource};
use crate::objects::{identity_integer, integer_value};
use crate::txn::{Isolation, Transaction};
use crate::types::{
    decode_row_some_with, decode_row_with, encode_key_columns_ordered, encode_row_with, RowDecoder,
    RowError, SqlType, Value,
};

mod append;
mod cursor;

pub use append::RowAppender;
use cursor::{Entries, RangeLock, RowLocking};
pub use cursor::{IndexCursor, RowCursor};

/// The key of a row in its table's index 1 tree.
pub type RowId = Vec<u8>;

/// Key locks on one table after which a transaction takes a table lock instead.
pub const ESCALATION_THRESHOLD: usize = 5000;

thread_local! {
    /// The buffer inserted rows are encoded in, one per thread and reused by every insert, so
    /// that encoding a row allocates nothing. Taken out while in use.
    static ROW_BUF: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Capacity of [`ROW_BUF`] kept after use: any in-row row fits; a larger buffer is dropped.
const ROW_BUF_KEEP: usize = 16 << 10;

fn row_error(table: &TableDef, e: RowError) -> EngineError {
    match e {
        RowError::RowTooLarge { .. } | RowError::ValueTooLong { .. } => {
            EngineError::ValueTooLarge(format!("{e} (table '{}')", table.name))
        }
        other => EngineError::Invalid(format!("table '{}': {other}", table.name)),
    }
}

/// Decodes a row, reading off-row values from their overflow pages.
pub fn decode_stored_row(
    db: &Database,
    types: &[SqlType],
    bytes: &[u8],
) -> Result<Vec<Value>, RowError> {
    decode_row_with(types, bytes, &mut |pointer| {
        db.space().read_blob(pointer).map_err(|e| RowError::Storage(e.to_string()))
    })
}

/// [`decode_stored_row`] decoding only the `wanted` columns (all with None); the others are
/// NULL, and their off-row values are not read.
pub fn decode_stored_row_some(
    db: &Database,
    types: &[SqlType],
    bytes: &[u8],
    wanted: Option<&[bool]>,
) -> Result<Vec<Value>, RowError> {
    let Some(wanted) = wanted else { return decode_stored_row(db, types, bytes) };
    decode_row_some_with(types, bytes, wanted, &mut |pointer| {
        db.space().read_blob(pointer).map_err(|e| RowError::Storage(e.to_string()))
    })
}

/// How a read decodes the row it finds.
#[derive(Clone, Copy)]
enum Decoding<'a> {
    /// The `wanted` columns (all with None), the others NULL.
    Wanted(Option<&'a [bool]>),
    /// With a decoder made for the table's columns.
    With(&'a RowDecoder),
}

impl Decoding<'_> {
    fn decode(
        self,
        db: &Database,
        table: &TableDef,
        bytes: &[u8],
    ) -> Result<Vec<Value>, EngineError> {
        match self {
            Decoding::Wanted(wanted) => {
                with_types(table, |types| decode_stored_row_some(db, types, bytes, wanted))
            }
            Decoding::With(decoder) => decoder.decode(bytes, &mut |pointer| {
                db.space().read_blob(pointer).map_err(|e| RowError::Storage(e.to_string()))
            }),
        }
        .map_err(|e| row_error(table, e))
    }
}

/// Decodes a row of `table` as read from its index 1 tree.
fn decode_table_row(
    db: &Database,
    table: &TableDef,
    bytes: &[u8],
) -> Result<Vec<Value>, EngineError> {
    with_types(table, |types| decode_stored_row(db, types, bytes)).map_err(|e| row_error(table, e))
}

/// Calls `f` with the column types of `table`, gathered on the stack for a table of up to 32
/// columns: every row encoded or decoded needs them, and a vector per row would cost an
/// allocation each.
fn with_types<R>(table: &TableDef, f: impl FnOnce(&[SqlType]) -> R) -> R {
    const INLINE: usize = 32;
    let n = table.columns.len();
    if n > INLINE {
        return f(&table.types());
    }
    let mut types = [SqlType::Bit; INLINE];
    for (slot, column) in types.iter_mut().zip(&table.columns) {
        *slot = column.ty;
    }
    f(&types[..n])
}

/// Error 515 for the first NOT NULL column of `table` that `values` leaves NULL.
fn check_not_null(db: &Database, table: &TableDef, values: &[Value]) -> Result<(), EngineError> {
    match table.columns.iter().zip(values).find(|(col, v)| v.is_null() && !col.nullable) {
        Some((col, _)) => Err(EngineError::NullNotAllowed {
            column: col.name.clone(),
            table: format!("{}.{}.{}", db.name(), table.schema, table.name),
        }),
        None => Ok(()),
    }
}

impl Transaction {
    /// Encodes a row, moving values that do not fit in the row to overflow pages.
    pub(crate) fn encode_stored_row(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        values: &[Value],
        out: &mut Vec<u8>,
    ) -> Result<(), EngineError> {
        let mut failure = None;
        let result = with_types(table, |types| {
            encode_row_with(types, values, out, &mut |data| {
                self.write_blob(db, data).map_err(|e| {
                    let text = e.to_string();
                    failure = Some(e);
                    RowError::Storage(text)
                })
            })
        });
        match (result, failure) {
            (Ok(()), _) => Ok(()),
            (Err(_), Some(e)) => Err(e),
            (Err(e), None) => Err(row_error(table, e)),
        }
    }
}

/// Renders key values as SQL Server prints a duplicate key: `(1, abc)`.
pub fn key_text<V: std::borrow::Borrow<Value>>(values: &[V]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|v| {
            let v = v.borrow();
            if v.is_null() {
                "<NULL>".to_string()
            } else {
                v.to_string()
            }
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// The key an index gives a row.
pub(crate) fn index_key(
    table: &TableDef,
    index: &IndexDef,
    values: &[Value],
    row_id: &[u8],
) -> Result<Vec<u8>, EngineError> {
    let mut key = Vec::with_capacity(32);
    let columns = index.columns.iter().map(|&c| {
        let column = &table.columns[c];
        (column.ty, column.text_order(), &values[c])
    });
    encode_key_columns_ordered(columns, &mut key).map_err(|e| row_error(table, e))?;
    if index.id != 1 && !index.unique {
        key.extend_from_slice(row_id);
    }
    Ok(key)
}

/// The row id of a new row in a table with a clustered index: the key, followed for a
/// non-unique clustered index by an 8-byte big-endian uniquifier (SQL Server's uniquifier
/// plays the same part), so that equal keys still give distinct, ordered row ids.
pub(crate) fn clustered_row_id(
    db: &Database,
    table: &TableDef,
    primary: &IndexDef,
    values: &[Value],
) -> Result<Vec<u8>, EngineError> {
    let mut key = index_key(table, primary, values, &[])?;
    if !primary.unique {
        key.extend_from_slice(&db.next_locator(table.id, primary)?.to_be_bytes());
    }
    Ok(key)
}

/// Error `number` for a row whose key in `index` is taken: 1505 while an index is built.
pub(crate) fn duplicate_key(
    table: &TableDef,
    index: &IndexDef,
    values: &[Value],
    number: i32,
) -> EngineError {
    let shown: Vec<&Value> = index.columns.iter().map(|&c| &values[c]).collect();
    EngineError::DuplicateKey {
        constraint: index.name.clone(),
        table: format!("{}.{}", table.schema, table.name),
        key: key_text(&shown),
        number,
        unique_constraint: index.unique_constraint,
    }
}

/// The duplicate key error of a row change: 2627 for a constraint, 2601 for a unique index.
fn duplicate(table: &TableDef, index: &IndexDef, values: &[Value]) -> EngineError {
    let number = if index.primary_key || index.unique_constraint { 2627 } else { 2601 };
    duplicate_key(table, index, values, number)
}

/// The first key of index `index` after `key`, if any: the key whose range (the keys
/// between it and the one before it) `key` is in.
fn key_after(db: &Database, index: &IndexDef, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
    let tree = db.space().tree(index.root);
    let mut cursor = tree.range(Bound::Excluded(key.to_vec()), Bound::Unbounded);
    Ok(cursor.next_entry()?.map(|(k, _)| k))
}

/// The KEY resource of `key` in index `index` of table `table`, or for `None` the end of the
/// index ([`Resource::key_end`]).
fn key_or_end(db: u32, table: u32, index: u16, key: Option<&[u8]>) -> Resource {
    match key {
        Some(key) => Resource::key(db, table, index.into(), key),
        None => Resource::key_end(db, table, index.into()),
    }
}

impl Transaction {
    /// Takes `mode` on the table, and returns whether row locks are still needed (not when
    /// the transaction holds a table lock that covers them).
    ///
    /// The first lock the transaction takes on the table checks that `table` is still its
    /// definition: the caller resolved it before locking, and a DDL holding the X lock
    /// meanwhile may have replaced it (and its trees) or dropped the table. Any lock held
    /// afterwards keeps such a DDL out, so later calls need no check.
    fn lock_table(
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
    fn change_mode(&self, db: u32, table: u32) -> LockMode {
        if self.table_isolation(db, table) == Isolation::Serializable {
            LockMode::RangeXX
        } else {
            LockMode::X
        }
    }

    /// Takes IX on the table and `mode` (X, or RangeX-X) on the row (unless a table lock
    /// covers it), both kept to the end of the transaction: what a change of the row needs
    /// first.
    fn lock_row_for_write(
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
    fn lock_key(
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
    fn insert_key(
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

    /// Inserts a row. `values` holds one value per column, already converted to the column
    /// types; a NULL in an identity column is replaced by the next identity value (the value
    /// used is written back into `values`), and an explicit value there (`SET IDENTITY_INSERT`)
    /// moves the identity past it. Returns the row id.
    pub fn insert_row(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        values: &mut [Value],
    ) -> Result<RowId, EngineError> {
        let row_id = self.new_row_id(db, table, values)?;
        let mut row = ROW_BUF.take();
        row.clear();
        let result = self.insert_encoded(db, table, values, &row_id, &mut row);
        if row.capacity() <= ROW_BUF_KEEP {
            ROW_BUF.set(row);
        }
        result.map(|()| row_id)
    }

    /// What [`Transaction::insert_row`] does before it encodes a row: the identity (taken
    /// or noted), the NOT NULL check, and the row id, which it returns.
    fn new_row_id(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        values: &mut [Value],
    ) -> Result<RowId, EngineError> {
        if values.len() != table.columns.len() {
            return Err(EngineError::Invalid(format!(
                "{} values for the {} columns of '{}'",
                values.len(),
                table.columns.len(),
                table.name
            )));
        }
        if let Some((col, _, _)) = table.identity_column() {
            if values[col].is_null() {
                let v = db.next_identity(table)?;
                values[col] = integer_value(table.columns[col].ty, i128::from(v));
                self.set_last_identity(v);
            } else if let Some(v) = identity_integer(&values[col]) {
                db.note_explicit_identity(table, v)?;
            }
        }
        check_not_null(db, table, values)?;
        let primary = table.primary()?;
        if primary.is_heap() {
            Ok(db.next_locator(table.id, primary)?.to_be_bytes().to_vec())
        } else {
            clustered_row_id(db, table, primary, values)
        }
    }

    /// The rest of [`Transaction::insert_row`] once the row id is known: encodes the row into
    /// `row` (empty), locks it, inserts it and its nonclustered index entries.
    fn insert_encoded(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        values: &[Value],
        row_id: &[u8],
        row: &mut Vec<u8>,
    ) -> Result<(), EngineError> {
        let primary = table.primary()?;
        self.encode_stored_row(db, table, values, row)?;
        self.lock_row_for_write(db, table, row_id, LockMode::X)?;
        // Only a failed nonclustered index insert rolls back to the mark: a table without
        // such indexes needs none (and an empty vector allocates nothing).
        let mark = if table.indexes.len() > 1 { self.undo_mark() } else { Vec::new() };
        if !self.insert_key(db, table, primary, row_id, row)? {
            return Err(duplicate(table, primary, values));
        }
        let nonclustered = table.indexes.iter().filter(|i| i.id != 1);
        self.insert_index_entries(db, table, nonclustered, values, row_id, &mark)?;
        db.count_modification(table.id, 1);
        Ok(())
    }

    /// Inserts row `row_id`'s entries (its `values`) into `indexes`. A duplicate key (error
    /// 2627/2601) or a failed insert rolls the transaction back to `mark`, taken before the
    /// row's first change, so that nothing of the row is left.
    fn insert_index_entries<'t>(
        &mut self,
        db: &Arc<Database>,
        table: &'t TableDef,
        indexes: impl Iterator<Item = &'t IndexDef>,
        values: &[Value],
        row_id: &[u8],
        mark: &[usize],
    ) -> Result<(), EngineError> {
        for index in indexes {
            let key = index_key(table, index, values, row_id)?;
            match self.insert_key(db, table, index, &key, row_id) {
                Ok(true) => {}
                Ok(false) => {
                    self.rollback_to_mark(mark)?;
                    return Err(duplicate(table, index, values));
                }
                Err(e) => {
                    self.rollback_to_mark(mark)?;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Replaces a row's values. A change of the clustered key moves the row (delete and
    /// insert); returns the row's id afterwards. `Ok(None)` if the row is gone.
    pub fn update_row(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
        values: &[Value],
    ) -> Result<Option<RowId>, EngineError> {
        check_not_null(db, table, values)?;
        let primary = table.primary()?;
        self.lock_row_for_write(db, table, row_id, self.change_mode(db.id(), table.id))?;
        let Some(old_bytes) = db.space().tree(primary.root).get(row_id)? else {
            return Ok(None);
        };
        // Only nonclustered indexes need the old values (for their old keys), as in
        // delete_row: a table without them skips the decode and its off-row reads.
        let old = match table.indexes.len() {
            1 => None,
            _ => Some(decode_table_row(db, table, &old_bytes)?),
        };
        self.replace_row(db, table, row_id, old.as_deref(), values).map(Some)
    }

    /// UPDATE's path: replaces the row that [`Transaction::read_row_for_update`] returned as
    /// `old`. Its exclusive lock, taken by that read, is still held, so the row is as read
    /// and need not be fetched and decoded a second time. Returns the row's id afterwards.
    pub fn update_read_row(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
        old: &[Value],
        values: &[Value],
    ) -> Result<RowId, EngineError> {
        check_not_null(db, table, values)?;
        self.replace_row(db, table, row_id, Some(old), values)
    }

    /// Writes `values` over the row `row_id`, locked X by this transaction, whose values are
    /// `old` (needed only when the table has nonclustered indexes).
    fn replace_row(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
        old: Option<&[Value]>,
        values: &[Value],
    ) -> Result<RowId, EngineError> {
        let primary = table.primary()?;
        let mut row = Vec::with_capacity(64);
        self.encode_stored_row(db, table, values, &mut row)?;
        let new_id = if primary.is_heap() {
            row_id.to_vec()
        } else if primary.unique {
            index_key(table, primary, values, &[])?
        } else {
            // A row whose non-unique clustered key is unchanged keeps its uniquifier.
            let key = index_key(table, primary, values, &[])?;
            if row_id.len() == key.len() + 8 && row_id.starts_with(&key) {
                row_id.to_vec()
            } else {
                clustered_row_id(db, table, primary, values)?
            }
        };
        let mark = self.undo_mark();
        let result = self.update_row_inner(db, table, primary, row_id, &new_id, old, values, &row);
        if result.is_err() {
            self.rollback_to_mark(&mark)?;
        } else {
            db.count_modification(table.id, 1);
        }
        result.map(|()| new_id)
    }

    #[allow(clippy::too_many_arguments)]
    fn update_row_inner(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        primary: &IndexDef,
        row_id: &[u8],
        new_id: &[u8],
        old: Option<&[Value]>,
        values: &[Value],
        row: &[u8],
    ) -> Result<(), EngineError> {
        if new_id == row_id {
            self.tree_update(db, primary.root, row_id, row)?;
        } else {
            self.lock_row_for_write(db, table, new_id, LockMode::X)?;
            self.note_ghost(db.id(), table.id, primary.root, row_id, row_id);
            self.tree_delete(db, primary.root, row_id)?;
            if !self.insert_key(db, table, primary, new_id, row)? {
                return Err(duplicate(table, primary, values));
            }
        }
        let Some(old) = old else { return Ok(()) };
        for index in table.indexes.iter().filter(|i| i.id != 1) {
            let old_key = index_key(table, index, old, row_id)?;
            let new_key = index_key(table, index, values, new_id)?;
            if old_key == new_key && row_id == new_id {
                continue;
            }
            if self.table_isolation(db.id(), table.id) == Isolation::Serializable {
                // The old key and the range below it, as SQL Server locks a key it changes.
                let res = Resource::key(db.id(), table.id, index.id.into(), &old_key);
                self.lock_key(db.id(), table.id, res, LockMode::RangeXX)?;
            }
            self.note_ghost(db.id(), table.id, index.root, &old_key, row_id);
            self.tree_delete(db, index.root, &old_key)?;
            if !self.insert_key(db, table, index, &new_key, new_id)? {
                return Err(duplicate(table, index, values));
            }
        }
        Ok(())
    }

    /// Deletes a row; `Ok(false)` if it was already gone.
    pub fn delete_row(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
    ) -> Result<bool, EngineError> {
        let primary = table.primary()?;
        self.lock_row_for_write(db, table, row_id, self.change_mode(db.id(), table.id))?;
        let mark = self.undo_mark();
        self.note_ghost(db.id(), table.id, primary.root, row_id, row_id);
        let Some(old_bytes) = self.tree_delete(db, primary.root, row_id)? else {
            return Ok(false);
        };
        let result = (|| {
            if table.indexes.len() > 1 {
                let old = decode_table_row(db, table, &old_bytes)?;
                for index in table.indexes.iter().filter(|i| i.id != 1) {
                    let key = index_key(table, index, &old, row_id)?;
                    if self.table_isolation(db.id(), table.id) == Isolation::Serializable {
                        let res = Resource::key(db.id(), table.id, index.id.into(), &key);
                        self.lock_key(db.id(), table.id, res, LockMode::RangeXX)?;
                    }
                    self.note_ghost(db.id(), table.id, index.root, &key, row_id);
                    self.tree_delete(db, index.root, &key)?;
                }
            }
            Ok(())
        })();
        if let Err(e) = result {
            self.rollback_to_mark(&mark)?;
            return Err(e);
        }
        db.count_modification(table.id, 1);
        Ok(true)
    }

    /// Reads one row by id.
    pub fn read_row(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
    ) -> Result<Option<Vec<Value>>, EngineError> {
        self.read_row_only(db, table, row_id, None)
    }

    /// [`Transaction::read_row`] decoding only the `wanted` columns (all with None): the
    /// others are NULL. For a query that reads a few columns of a wide row.
    pub fn read_row_only(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
        wanted: Option<&[bool]>,
    ) -> Result<Option<Vec<Value>>, EngineError> {
        self.read_row_decoded(db, table, row_id, Decoding::Wanted(wanted))
    }

    /// [`Transaction::read_row_only`], the row decoded as `decoding` says.
    fn read_row_decoded(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
        decoding: Decoding<'_>,
    ) -> Result<Option<Vec<Value>>, EngineError> {
        db.check_online()?;
        let primary = table.primary()?;
        let decode = |b: Vec<u8>| decoding.decode(db, table, &b);
        let tree = db.space().tree(primary.root);
        let rows_locked = self.lock_table(db, table, LockMode::IS)?;
        let isolation = self.table_isolation(db.id(), table.id);
        if isolation == Isolation::ReadUncommitted {
            return tree.get(row_id)?.map(decode).transpose();
        }
        if rows_locked && isolation == Isolation::ReadCommitted {
            // Lock avoidance (`lock/writers.rs`): read while no other transaction has a
            // change in the tree, and the row read is committed (or this transaction's own);
            // the S lock would have been granted at once and given back.
            if let Some(seen) = self.writers_quiet(db.id(), primary.root) {
                let bytes = tree.get(row_id)?;
                if self.writers_unchanged(seen) {
                    return bytes.map(decode).transpose();
                }
            }
        }
        let mode = match isolation {
            Isolation::Serializable => self.key_read_mode(db.id(), table.id),
            Isolation::ReadCommitted | Isolation::ReadUncommitted => LockMode::S,
        };
        let lock = if rows_locked {
            let res = Resource::key(db.id(), table.id, 1, row_id);
            match self.lock_key_to_read(db.id(), table.id, res, mode)? {
                Some(lock) => lock,
                // READPAST: another transaction has the row.
                None => return Ok(None),
            }
        } else {
            None
        };
        let bytes = tree.get(row_id)?;
        if let (Some(res), Isolation::ReadCommitted) = (&lock, isolation) {
            self.unlock(res);
        }
        bytes.map(decode).transpose()
    }

    /// Reads one row by id for a change: takes the exclusive row lock first (kept to the end
    /// of the transaction, as the change will), so that the values returned are the latest
    /// committed ones and no other transaction can change them before this one writes. An
    /// UPDATE must compute its new row from this read, not from its earlier scan, or it
    /// would overwrite a change committed in between (a lost update).
    pub fn read_row_for_update(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
    ) -> Result<Option<Vec<Value>>, EngineError> {
        db.check_online()?;
        let primary = table.primary()?;
        self.lock_row_for_write(db, table, row_id, self.change_mode(db.id(), table.id))?;
        db.space()
            .tree(primary.root)
            .get(row_id)?
            .map(|b| decode_table_row(db, table, &b))
            .transpose()
    }

    /// The row id of the row whose clustered key (or, for `index` > 1, unique index key) is
    /// `key_values`, if any.
    pub fn seek_row(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        index_id: u16,
        key_values: &[Value],
    ) -> Result<Option<RowId>, EngineError> {
        let index = table.index(index_id).ok_or_else(|| {
            EngineError::Invalid(format!("no index {index_id} on '{}'", table.name))
        })?;
        if key_values.len() != index.columns.len() {
            let (expected, found) = (index.columns.len(), key_values.len());
            return Err(row_error(table, RowError::ColumnCount { expected, found }));
        }
        let columns = index.columns.iter().zip(key_values).map(|(&c, v)| {
            let column = &table.columns[c];
            (column.ty, column.text_order(), v)
        });
        let mut key = Vec::new();
        encode_key_columns_ordered(columns, &mut key).map_err(|e| row_error(table, e))?;
        if index.id == 1 {
            if !index.unique {
                return Err(EngineError::Invalid(format!(
                    "the clustered index of '{}' is not unique: a key names no single row",
                    table.name
                )));
            }
            return Ok(Some(key));
        }
        Ok(db.space().tree(index.root).get(&key)?)
    }

    /// Reads the row whose clustered key is `key` (a unique clustered index's key, which is
    /// the row id), as an equality seek: like [`Transaction::read_row`], and under
    /// SERIALIZABLE, when there is no such row, it also locks the gap where the row would be
    /// (RangeS-S on the next key, or the end of the index), so that no transaction can insert
    /// it before this one ends: the seek finds nothing again if it is repeated. Below
    /// SERIALIZABLE only the `wanted` columns are decoded (all with None), as by
    /// [`Transaction::read_row_only`].
    pub fn seek_key(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        key: &[u8],
        wanted: Option<&[bool]>,
    ) -> Result<Option<Vec<Value>>, EngineError> {
        self.seek_key_decoded(db, table, key, Decoding::Wanted(wanted))
    }

    /// [`Transaction::seek_key`], below SERIALIZABLE decoding the row with `decoder` (made
    /// for `table`'s columns): a loop's repeated lookups work out where the columns they
    /// read are once, not at every row.
    pub fn seek_key_with(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        key: &[u8],
        decoder: &RowDecoder,
    ) -> Result<Option<Vec<Value>>, EngineError> {
        self.seek_key_decoded(db, table, key, Decoding::With(decoder))
    }

    fn seek_key_decoded(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        key: &[u8],
        decoding: Decoding<'_>,
    ) -> Result<Option<Vec<Value>>, EngineError> {
        if self.table_isolation(db.id(), table.id) != Isolation::Serializable {
            return self.read_row_decoded(db, table, key, decoding);
        }
        db.check_online()?;
        let primary = table.primary()?;
        let tree = db.space().tree(primary.root);
        if !self.lock_table(db, table, LockMode::IS)? {
            // A table lock covers the rows and every range.
            return tree.get(key)?.map(|b| decode_table_row(db, table, &b)).transpose();
        }
        self.note_range_holder();
        // S (U for an UPDATE's or DELETE's search) on the key itself, held: an insert of
        // exactly this key needs X on it. READPAST passes a key another transaction has.
        let res = Resource::key(db.id(), table.id, 1, key);
        let mode = self.key_read_mode(db.id(), table.id);
        if self.lock_key_to_read(db.id(), table.id, res, mode)?.is_none() {
            return Ok(None);
        }
        let range_mode = self.range_read_mode(db.id(), table.id);
        let mut locked: Option<Resource> = None;
        loop {
            if let Some(bytes) = tree.get(key)? {
                return decode_table_row(db, table, &bytes).map(Some);
            }
            // No row: lock the range it would be in, then check that nothing came into it
            // before the lock was granted (an insert into it holds RangeI-N on that key while
            // it inserts, so afterwards nothing can).
            let next = key_after(db, primary, key)?;
            let res = key_or_end(db.id(), table.id, 1, next.as_deref());
            if locked.as_ref() != Some(&res) {
                let Some(granted) =
                    self.lock_key_to_read(db.id(), table.id, res.clone(), range_mode)?
                else {
                    // READPAST: the gap is another transaction's; nothing is read in it.
                    return Ok(None);
                };
                if granted.is_none() && self.table_covers_rows(db.id(), table.id) {
                    return tree.get(key)?.map(|b| decode_table_row(db, table, &b)).transpose();
                }
                locked = Some(res);
                continue;
            }
            return Ok(None);
        }
    }

    /// Whether the transaction's table lock on (db, object) covers reading every row, after
    /// an escalation.
    fn table_covers_rows(&self, db: u32, object: u32) -> bool {
        self.table_lock(db, object).is_some_and(|held| held.covers(LockMode::S))
    }

    /// A cursor over a table's rows in index 1 order (clustered key, or insertion order for a
    /// heap), optionally limited to a range of row ids.
    ///
    /// Locks: under SERIALIZABLE, a range of a clustered index (a seek) locks each key it
    /// reads with RangeS-S and then the key past the range, and a scan of the whole table (or
    /// of a heap) takes S on the table; otherwise IS on the table and S on each row while it
    /// is read (READ COMMITTED).
    pub fn scan_table(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        lower: Bound<RowId>,
        upper: Bound<RowId>,
    ) -> Result<RowCursor, EngineError> {
        self.scan_table_only(db, table, lower, upper, None)
    }

    /// [`Transaction::scan_table`] decoding only the `wanted` columns (all with None): the
    /// others are NULL. Its decoder is made once, for the columns wanted (a seek of an
    /// index nested-loop join makes a cursor per outer row).
    pub fn scan_table_only(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        lower: Bound<RowId>,
        upper: Bound<RowId>,
        wanted: Option<&[bool]>,
    ) -> Result<RowCursor, EngineError> {
        db.check_online()?;
        let primary = table.primary()?;
        let locking = self.row_locking(db, table, &lower, &upper)?;
        Ok(RowCursor {
            entries: Entries::new(db, primary.root, lower, upper),
            table_id: table.id,
            locking,
            decoder: RowDecoder::of_columns(table.columns.iter().map(|c| c.ty), wanted),
            deferred: None,
            current: std::cell::RefCell::new(Vec::new()),
            locators: true,
        })
    }

    /// [`Transaction::scan_table_only`], made from `spare`, a cursor this transaction made
    /// for an earlier range, where it reads the same table's tree with the same decoder (no
    /// columns deferred): its buffers and its leaf hint are kept, so a seek in key order
    /// after the last one mostly starts in that one's leaf without a descent, and allocates
    /// nothing. Its locks are taken anew, exactly as a new cursor's are (a SERIALIZABLE
    /// range locks its own keys and the key past it), and its reading state starts over.
    /// A spare that does not fit is dropped and a new cursor made.
    pub fn reseek_table_only(
        &mut self,
        spare: Option<RowCursor>,
        db: &Arc<Database>,
        table: &TableDef,
        lower: Bound<RowId>,
        upper: Bound<RowId>,
        wanted: Option<&[bool]>,
    ) -> Result<RowCursor, EngineError> {
        let Some(mut cursor) = spare.filter(|c| c.fits(db, table, wanted)) else {
            return self.scan_table_only(db, table, lower, upper, wanted);
        };
        db.check_online()?;
        // `row_locking` refuses a table without its primary tree, as `scan_table_only` does.
        cursor.locking = self.row_locking(db, table, &lower, &upper)?;
        cursor.entries.restart(lower, upper);
        cursor.locators = true;
        Ok(cursor)
    }

    /// Takes the table lock a scan of `table` over `lower..upper` takes and says which key
    /// locks its rows need.
    fn row_locking(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        lower: &Bound<RowId>,
        upper: &Bound<RowId>,
    ) -> Result<RowLocking, EngineError> {
        let primary = table.primary()?;
        // READPAST locks the keys of even a whole table's scan, so that it can pass the ones
        // other transactions hold: a table lock could only wait for them.
        let ranged = self.table_isolation(db.id(), table.id) == Isolation::Serializable
            && !primary.is_heap()
            && (self.reads_past(db.id(), table.id)
                || !(matches!(lower, Bound::Unbounded) && matches!(upper, Bound::Unbounded)));
        Ok(match self.scan_locks(db, table, ranged)? {
            ScanLocks::Table => RowLocking::Table,
            ScanLocks::Rows => RowLocking::Rows,
            ScanLocks::Range => {
                let mode = self.range_read_mode(db.id(), table.id);
                RowLocking::Range(RangeLock::new(table.id, 1, mode))
            }
        })
    }

    /// Takes the table lock a scan takes and says which key locks it takes: a SERIALIZABLE
    /// scan locks its range if `ranged`, and otherwise the whole table.
    fn scan_locks(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        ranged: bool,
    ) -> Result<ScanLocks, EngineError> {
        let isolation = self.table_isolation(db.id(), table.id);
        // A SERIALIZABLE scan of the whole table locks the table in its keys' mode (S, or U
        // or X for a read that means to change them).
        let mode = match isolation {
            Isolation::Serializable if !ranged => match self.key_read_mode(db.id(), table.id) {
                LockMode::U => LockMode::U,
                LockMode::X => LockMode::X,
                _ => LockMode::S,
            },
            _ => LockMode::IS,
        };
        if !self.lock_table(db, table, mode)? || isolation == Isolation::ReadUncommitted {
            return Ok(ScanLocks::Table);
        }
        if ranged {
            // Counted before the range's first key is read: see `insert_key`.
            self.note_range_holder();
            return Ok(ScanLocks::Range);
        }
        Ok(ScanLocks::Rows)
    }
}

/// Which locks a scan takes besides its table's.
enum ScanLocks {
    /// None: a table lock covers the rows.
    Table,
    /// S on each row (released at once under READ COMMITTED).
    Rows,
    /// RangeS-S on each key read and on the key past the range (SERIALIZABLE).
    Range,
}

impl Transaction {
    /// A cursor over the row ids a nonclustered index holds for keys in `lower..upper`
    /// (bounds on the index key's memcomparable encoding), in key order. Under SERIALIZABLE
    /// it locks each index key it reads with RangeS-S and then the key past the range (so no
    /// key can come into the range), or S on the table if the range is the whole index;
    /// otherwise it takes IS on the table and no key locks. The caller reads each row through
    /// [`Transaction::read_row`], which locks the row, and must check the row against its
    /// predicate again, since the row may have changed after the index entry was read.
    pub fn scan_index(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        index_id: u16,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
    ) -> Result<IndexCursor, EngineError> {
        db.check_online()?;
        let index = table.index(index_id).filter(|i| i.id != 1).ok_or_else(|| {
            EngineError::Invalid(format!("no nonclustered index {index_id} on '{}'", table.name))
        })?;
        let ranged = self.table_isolation(db.id(), table.id) == Isolation::Serializable
            && (self.reads_past(db.id(), table.id)
                || !(matches!(lower, Bound::Unbounded) && matches!(upper, Bound::Unbounded)));
        let locks = self.scan_locks(db, table, ranged)?;
        let range = match locks {
            ScanLocks::Range => {
                Some(RangeLock::new(table.id, index.id, self.range_read_mode(db.id(), table.id)))
            }
            ScanLocks::Table | ScanLocks::Rows => None,
        };
        Ok(IndexCursor {
            entries: Entries::new(db, index.root, lower, upper),
            range,
            table_id: table.id,
            row_locks: matches!(locks, ScanLocks::Rows),
        })
    }
}

/// What a look at an index's first entries says of its keys: the statistics the planner
/// costs seeks with.
#[derive(Debug, Clone, Default)]
pub struct IndexSample {
    /// The index's entries (for index 1, the table's rows), estimated from one descent.
    pub rows: f64,
    /// Entry k: how many of the sampled entries share a value of the first k + 1 key
    /// columns, on average (1 for a unique key).
    pub rows_per_prefix: Vec<f64>,
}

impl Transaction {
    /// Samples index `index_id` of `table`: its size, and how many entries share each key
    /// prefix among its first `sample` entries. Takes no locks: statistics may be stale or
    /// read uncommitted keys, and only decide how a query reads, never what it returns.
    pub fn sample_index(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        index_id: u16,
        sample: usize,
    ) -> Result<IndexSample, EngineError> {
        db.check_online()?;
        let index = table.index(index_id).ok_or_else(|| {
            EngineError::Invalid(format!("no index {index_id} on '{}'", table.name))
        })?;
        let tree = db.space().tree(index.root);
        let types: Vec<SqlType> = index.columns.iter().map(|&c| table.columns[c].ty).collect();
        let mut cursor = tree.scan();
        let mut sampled = 0usize;
        let mut distinct = vec![0usize; types.len()];
        let mut previous: Option<(Vec<u8>, Vec<usize>)> = None;
        while sampled < sample {
            let Some((key, _)) = cursor.next_entry()? else { break };
            sampled += 1;
            let lens = crate::types::key_prefix_lengths(&types, &key);
            for (k, count) in distinct.iter_mut().enumerate() {
                let same = match (&previous, lens.get(k)) {
                    (Some((p, plens)), Some(&end)) => {
                        plens.get(k) == Some(&end) && p[..end] == key[..end]
                    }
                    _ => false,
                };
                if !same {
                    *count += 1;
                }
            }
            previous = Some((key, lens));
        }
        let rows = tree.estimate_entries()?.max(sampled as f64);
        let truncated = sampled == sample;
        let rows_per_prefix = distinct
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let d = d.max(1) as f64;
                if index.unique && k + 1 == types.len() {
                    1.0
                } else if truncated && d < 4.0 {
                    // A sample of a few long runs says little of the rest: assume those few
                    // values spread over the whole index, the pessimistic reading.
                    rows / d
                } else {
                    sampled as f64 / d
                }
            })
            .collect();
        Ok(IndexSample { rows, rows_per_prefix })
    }
    /// Estimates how many distinct values each column of `table` holds, from its first
    /// `sample` rows (in the clustered index's order): exact where the sample is the whole
    /// table, otherwise scaled up by the values seen once (the Duj1 estimator of Haas and
    /// Stokes: `n d / (n - f1 + f1 n / N)` for `d` distinct values in `n` sampled rows, `f1`
    /// of them seen once, `N` rows). None for a column of a type no key holds (the MAX
    /// types). Values are compared by their key encoding, so under their column's
    /// collation. Takes no locks, as [`Transaction::sample_index`].
    pub fn sample_column_distinct(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        sample: usize,
    ) -> Result<Vec<Option<f64>>, EngineError> {
        db.check_online()?;
        let primary = table.primary()?;
        let tree = db.space().tree(primary.root);
        let types = table.types();
        let keyed: Vec<bool> = types
            .iter()
            .map(|t| !matches!(t, SqlType::Variant | SqlType::Xml) && t.max_len_bytes() <= 8000)
            .collect();
        let mut seen: Vec<std::collections::HashMap<Vec<u8>, u32>> =
            vec![std::collections::HashMap::new(); types.len()];
        let mut cursor = tree.scan();
        let mut sampled = 0usize;
        while sampled < sample {
            let Some((_, bytes)) = cursor.next_entry()? else { break };
            sampled += 1;
            let values = decode_stored_row_some(db, &types, &bytes, Some(&keyed))
                .map_err(|e| row_error(table, e))?;
            for (c, v) in values.iter().enumerate().filter(|(c, _)| keyed[*c]) {
                let column = &table.columns[c];
                let mut key = Vec::new();
                if encode_key_columns_ordered([(column.ty, column.text_order(), v)], &mut key)
                    .is_ok()
                {
                    *seen[c].entry(key).or_insert(0) += 1;
                }
            }
        }
        let rows = tree.estimate_entries()?.max(sampled as f64);
        let n = sampled as f64;
        Ok(seen
            .iter()
            .zip(&keyed)
            .map(|(values, &k)| {
                if !k || sampled == 0 {
                    return None;
                }
                let d = values.len() as f64;
                if sampled < sample {
                    return Some(d.max(1.0));
                }
                let f1 = values.values().filter(|&&count| count == 1).count() as f64;
                Some((n * d / (n - f1 + f1 * n / rows)).clamp(1.0, rows))
            })
            .collect())
    }
}
