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
//! READ COMMITTED and held under SERIALIZABLE, where scans take S on the whole table instead
//! (so no phantom can appear). Writes take IX on the table and X on the row. After 5,000 key
//! locks on one table a transaction escalates to a table lock (X if it writes, S if it only
//! reads), as SQL Server does, and stops taking key locks there.

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use walden_storage::PageId;

use crate::catalog::{IndexDef, TableDef};
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::{LockMode, Resource};
use crate::objects::{identity_integer, integer_value};
use crate::txn::{Isolation, Transaction};
use crate::types::{
    decode_row_with, encode_key, encode_key_columns, encode_row_with, RowError, SqlType, Value,
};

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
fn key_text(values: &[&Value]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|v| if v.is_null() { "<NULL>".to_string() } else { v.to_string() })
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
    let columns = index.columns.iter().map(|&c| (table.columns[c].ty, &values[c]));
    encode_key_columns(columns, &mut key).map_err(|e| row_error(table, e))?;
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
        let held = self.table_lock(db.id(), table.id);
        if let Some(held) = held {
            if held.covers(row_mode) {
                return Ok(false);
            }
            if held.covers(mode) {
                return Ok(true);
            }
        }
        self.lock(&res, mode)?;
        // Checked before the lock is noted, so that every later call with the stale
        // definition fails the same way.
        if held.is_none() {
            db.check_current(table)?;
        }
        let now = held.map_or(mode, |h| h.join(mode));
        self.set_table_lock(db.id(), table.id, now);
        Ok(!now.covers(row_mode))
    }

    /// Takes IX on the table and X on the row (unless a table lock covers it), both kept to
    /// the end of the transaction: what a change of the row needs first.
    fn lock_row_for_write(
        &mut self,
        db: &Database,
        table: &TableDef,
        row_id: &[u8],
    ) -> Result<(), EngineError> {
        if self.table_lock(db.id(), table.id).is_none() {
            // The first lock on the table: both at once, as `lock_table` and `lock_row` would
            // take them (no key count can be near escalation yet).
            let key = Resource::key(db.id(), table.id, 1, row_id);
            self.lock_table_and_key((db.id(), table.id), LockMode::IX, &key, LockMode::X)?;
            // As in `lock_table`: checked before the lock is noted.
            db.check_current(table)?;
            self.set_table_lock(db.id(), table.id, LockMode::IX);
            return Ok(());
        }
        if self.lock_table(db, table, LockMode::IX)? {
            self.lock_row(db, table.id, row_id, LockMode::X)?;
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
        let res = Resource::key(db.id(), table, 1, row_id);
        // A lock the transaction already held (an UPDATE's X, say) is not this request's to
        // give back: a READ COMMITTED read releases only a lock it took itself. Releasing
        // it would let another transaction change the row before this one commits.
        let newly_granted = self.lock(&res, mode)?;
        if self.key_lock_count(db.id(), table) >= ESCALATION_THRESHOLD {
            // S only if every key lock is S: a transaction whose table lock covers IX has
            // taken X key locks (it writes), and dropping them for a table S (SIX with its
            // IX) would let other sessions read its uncommitted rows.
            let writes = mode == LockMode::X
                || self.table_lock(db.id(), table).is_some_and(|held| held.covers(LockMode::IX));
            let table_mode = if writes { LockMode::X } else { LockMode::S };
            let table_res = Resource::Object { db: db.id(), object: table };
            // Escalation that cannot be granted at once is skipped, as in SQL Server, and
            // retried at the next key lock: the row lock still protects the row.
            if self.lock_at_once(&table_res, table_mode) {
                let now =
                    self.table_lock(db.id(), table).map_or(table_mode, |h| h.join(table_mode));
                self.set_table_lock(db.id(), table, now);
                // The table lock covers the row (X covers X; any join with S covers S), so
                // the row lock just taken goes with the others.
                self.release_keys(db.id(), table);
                return Ok(None);
            }
        }
        Ok(newly_granted.then_some(res))
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
        let row_id = if primary.is_heap() {
            db.next_locator(table.id, primary)?.to_be_bytes().to_vec()
        } else {
            clustered_row_id(db, table, primary, values)?
        };
        let mut row = ROW_BUF.take();
        row.clear();
        let result = self.insert_encoded(db, table, values, &row_id, &mut row);
        if row.capacity() <= ROW_BUF_KEEP {
            ROW_BUF.set(row);
        }
        result.map(|()| row_id)
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
        self.lock_row_for_write(db, table, row_id)?;
        // Only a failed nonclustered index insert rolls back to the mark: a table without
        // such indexes needs none (and an empty vector allocates nothing).
        let mark = if table.indexes.len() > 1 { self.undo_mark() } else { Vec::new() };
        if !self.tree_insert(db, primary.root, row_id, row)? {
            return Err(duplicate(table, primary, values));
        }
        for index in table.indexes.iter().filter(|i| i.id != 1) {
            let key = index_key(table, index, values, row_id)?;
            match self.tree_insert(db, index.root, &key, row_id) {
                Ok(true) => {}
                Ok(false) => {
                    self.rollback_to_mark(&mark)?;
                    return Err(duplicate(table, index, values));
                }
                Err(e) => {
                    self.rollback_to_mark(&mark)?;
                    return Err(e);
                }
            }
        }
        db.count_modification(table.id, 1);
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
        self.lock_row_for_write(db, table, row_id)?;
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
            self.lock_row_for_write(db, table, new_id)?;
            self.tree_delete(db, primary.root, row_id)?;
            if !self.tree_insert(db, primary.root, new_id, row)? {
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
            self.tree_delete(db, index.root, &old_key)?;
            if !self.tree_insert(db, index.root, &new_key, new_id)? {
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
        self.lock_row_for_write(db, table, row_id)?;
        let mark = self.undo_mark();
        let Some(old_bytes) = self.tree_delete(db, primary.root, row_id)? else {
            return Ok(false);
        };
        let result = (|| {
            if table.indexes.len() > 1 {
                let old = decode_table_row(db, table, &old_bytes)?;
                for index in table.indexes.iter().filter(|i| i.id != 1) {
                    let key = index_key(table, index, &old, row_id)?;
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
        db.check_online()?;
        let primary = table.primary()?;
        let lock = if self.lock_table(db, table, LockMode::IS)? {
            self.lock_row(db, table.id, row_id, LockMode::S)?
        } else {
            None
        };
        let bytes = db.space().tree(primary.root).get(row_id)?;
        if let (Some(res), Isolation::ReadCommitted) = (&lock, self.isolation()) {
            self.unlock(res);
        }
        bytes.map(|b| decode_table_row(db, table, &b)).transpose()
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
        self.lock_row_for_write(db, table, row_id)?;
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
        let types: Vec<SqlType> = index.columns.iter().map(|&c| table.columns[c].ty).collect();
        let mut key = Vec::new();
        encode_key(&types, key_values, &mut key).map_err(|e| row_error(table, e))?;
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

    /// A cursor over a table's rows in index 1 order (clustered key, or insertion order for a
    /// heap), optionally limited to a range of row ids.
    pub fn scan_table(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        lower: Bound<RowId>,
        upper: Bound<RowId>,
    ) -> Result<RowCursor, EngineError> {
        db.check_online()?;
        let mode =
            if self.isolation() == Isolation::Serializable { LockMode::S } else { LockMode::IS };
        let row_locks = self.lock_table(db, table, mode)?;
        Ok(RowCursor {
            db: Arc::clone(db),
            table_id: table.id,
            root: table.primary()?.root,
            types: table.types(),
            next: lower,
            upper,
            buffer: VecDeque::new(),
            done: false,
            row_locks,
            batch_changes: 0,
        })
    }
}

impl Transaction {
    /// A cursor over the row ids a nonclustered index holds for keys in `lower..upper`
    /// (bounds on the index key's memcomparable encoding), in key order. It takes the table
    /// lock a scan takes (S under SERIALIZABLE, else IS) and no key locks: the caller reads
    /// each row through [`Transaction::read_row`], which locks the row, and must check the
    /// row against its predicate again, since the row may have changed after the index entry
    /// was read.
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
        let mode =
            if self.isolation() == Isolation::Serializable { LockMode::S } else { LockMode::IS };
        self.lock_table(db, table, mode)?;
        Ok(IndexCursor {
            db: Arc::clone(db),
            root: index.root,
            next: lower,
            upper,
            buffer: VecDeque::new(),
            done: false,
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
}

/// A cursor over a nonclustered index's entries: the row ids, in index key order. Like
/// [`RowCursor`] it copies a batch of entries at a time and holds no latch between calls.
#[derive(Debug)]
pub struct IndexCursor {
    db: Arc<Database>,
    root: PageId,
    next: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    buffer: VecDeque<(Vec<u8>, Vec<u8>)>,
    done: bool,
}

impl IndexCursor {
    /// The row id of the next entry.
    pub fn next_row_id(&mut self) -> Result<Option<RowId>, EngineError> {
        loop {
            if let Some((key, row_id)) = self.buffer.pop_front() {
                self.next = Bound::Excluded(key);
                return Ok(Some(row_id));
            }
            if self.done {
                return Ok(None);
            }
            self.db.check_online()?;
            let tree = self.db.space().tree(self.root);
            self.done = fill_batch(&tree, &self.next, &self.upper, &mut self.buffer)?;
        }
    }
}

/// A cursor over a table's rows. It holds no latch between calls; under READ COMMITTED each
/// row is S-locked while it is read and released at once.
#[derive(Debug)]
pub struct RowCursor {
    db: Arc<Database>,
    table_id: u32,
    root: PageId,
    types: Vec<SqlType>,
    next: Bound<RowId>,
    upper: Bound<RowId>,
    buffer: VecDeque<(RowId, Vec<u8>)>,
    done: bool,
    row_locks: bool,
    /// The tree's change count read before the buffered batch was copied.
    batch_changes: u64,
}

const CURSOR_BATCH: usize = 256;

/// Copies up to [`CURSOR_BATCH`] entries of `tree` in `next..upper` into `buffer`; says
/// whether the range is exhausted.
fn fill_batch(
    tree: &walden_storage::btree::BTree<'_>,
    next: &Bound<Vec<u8>>,
    upper: &Bound<Vec<u8>>,
    buffer: &mut VecDeque<(Vec<u8>, Vec<u8>)>,
) -> Result<bool, EngineError> {
    let mut cursor = tree.range(next.clone(), upper.clone());
    while buffer.len() < CURSOR_BATCH {
        match cursor.next_entry()? {
            Some(entry) => buffer.push_back(entry),
            None => return Ok(true),
        }
    }
    Ok(false)
}

impl RowCursor {
    /// The next row: its id and values.
    pub fn next_row(
        &mut self,
        tx: &mut Transaction,
    ) -> Result<Option<(RowId, Vec<Value>)>, EngineError> {
        loop {
            if let Some((id, bytes)) = self.buffer.pop_front() {
                self.next = Bound::Excluded(id.clone());
                if self.row_locks {
                    let res = Resource::key(self.db.id(), self.table_id, 1, &id);
                    let newly_granted = tx.lock(&res, LockMode::S)?;
                    // Under the lock, the row as it is now: it may have changed or gone since
                    // the batch was copied, and the copy may hold a change that was not
                    // committed then and has been undone since. If no entry of the tree
                    // changed since before the copy, the copy is the row now, and it is
                    // committed: an uncommitted change is made under an X lock its writer
                    // holds until it commits or undoes it (an undo is a change), and the S
                    // lock just granted says no one holds one.
                    let tree = self.db.space().tree(self.root);
                    let current = if tree.changes() == self.batch_changes {
                        Some(bytes)
                    } else {
                        tree.get(&id)?
                    };
                    // READ COMMITTED gives back only a lock this read took: one the
                    // transaction held already (it changed the row) stays to the end.
                    if newly_granted && tx.isolation() == Isolation::ReadCommitted {
                        tx.unlock(&res);
                    }
                    match current {
                        Some(b) => return self.decode(id, &b).map(Some),
                        None => continue,
                    }
                }
                return self.decode(id, &bytes).map(Some);
            }
            if self.done {
                return Ok(None);
            }
            self.refill()?;
        }
    }

    fn decode(&self, id: RowId, bytes: &[u8]) -> Result<(RowId, Vec<Value>), EngineError> {
        let values = decode_stored_row(&self.db, &self.types, bytes)
            .map_err(|e| EngineError::Corrupt(format!("a row of object {}: {e}", self.table_id)))?;
        Ok((id, values))
    }

    fn refill(&mut self) -> Result<(), EngineError> {
        self.db.check_online()?;
        let tree = self.db.space().tree(self.root);
        // Read before copying: a change during the copy makes it differ afterwards.
        self.batch_changes = tree.changes();
        self.done = fill_batch(&tree, &self.next, &self.upper, &mut self.buffer)?;
        Ok(())
    }
}
