//! Inserting, updating and deleting rows: each change locks its table and row, checks NOT NULL
//! and the unique indexes, encodes the row, and keeps every nonclustered index's entries in
//! step with index 1's tree, identity values and heap row locators included. An index entry
//! goes in only after its key's insert lock is held (see `locks.rs`).

use std::sync::Arc;

use super::{
    check_not_null, clustered_row_id, decode_table_row, duplicate, index_key, RowId, ROW_BUF,
    ROW_BUF_KEEP,
};
use crate::catalog::{IndexDef, TableDef};
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::{LockMode, Resource};
use crate::objects::{identity_integer, integer_value};
use crate::txn::{Isolation, Transaction};
use crate::types::Value;

impl Transaction {
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
    pub(super) fn new_row_id(
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
    pub(super) fn insert_encoded(
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
    pub(super) fn insert_index_entries<'t>(
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
}
