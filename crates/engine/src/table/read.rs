//! Reading rows: a point read or seek by key, and the cursors of a table scan and an index
//! range scan, each taking the read locks its isolation level asks for (none under READ
//! UNCOMMITTED, S released at once under READ COMMITTED unless no other transaction has a
//! change in the tree, key-range locks under SERIALIZABLE).

use std::ops::Bound;
use std::sync::Arc;

use super::cursor::{Entries, IndexCursor, RangeLock, RowCursor, RowLocking};
use super::{decode_table_row, key_after, key_or_end, row_error, Decoding, RowId};
use crate::catalog::TableDef;
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::{LockMode, Resource};
use crate::txn::{Isolation, Transaction};
use crate::types::{encode_key_columns_ordered, RowDecoder, RowError, Value};

impl Transaction {
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
        self.read_row_by(db, table, row_id, |b| decoding.decode(db, table, b))
    }

    /// What `read` makes of the stored row whose id is `row_id`, read where it lies in its
    /// leaf (see `BTree::get_with`), with the locks the transaction's isolation level asks
    /// for. `read` may run twice: a read that avoided the row lock and found the tree
    /// changed meanwhile reads again under the lock, and only the second answer counts.
    fn read_row_by<R>(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        row_id: &[u8],
        mut read: impl FnMut(&[u8]) -> Result<R, EngineError>,
    ) -> Result<Option<R>, EngineError> {
        db.check_online()?;
        let primary = table.primary()?;
        let tree = db.space().tree(primary.root);
        let rows_locked = self.lock_table(db, table, LockMode::IS)?;
        let isolation = self.table_isolation(db.id(), table.id);
        if isolation == Isolation::ReadUncommitted {
            return tree.get_with(row_id, &mut read)?.transpose();
        }
        if rows_locked && isolation == Isolation::ReadCommitted {
            // Lock avoidance (`lock/writers.rs`): read while no other transaction has a
            // change in the tree, and the row read is committed (or this transaction's own);
            // the S lock would have been granted at once and given back.
            if let Some(seen) = self.writers_quiet(db.id(), primary.root) {
                let read_now = tree.get_with(row_id, &mut read)?;
                if self.writers_unchanged(seen) {
                    return read_now.transpose();
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
        let read_now = tree.get_with(row_id, &mut read)?;
        if let (Some(res), Isolation::ReadCommitted) = (&lock, isolation) {
            self.unlock(res);
        }
        read_now.transpose()
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

    /// [`Transaction::seek_key_with`], the row decoded into `values` (reused as
    /// [`RowDecoder::decode_into`] reuses it) straight from its leaf, not from a copy of its
    /// bytes: true if there is such a row. A row with a value stored off-row is copied out
    /// and decoded after, so that no overflow page is fixed while the leaf is latched.
    pub fn seek_key_into(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        key: &[u8],
        decoder: &RowDecoder,
        values: &mut Vec<Value>,
    ) -> Result<bool, EngineError> {
        if self.table_isolation(db.id(), table.id) == Isolation::Serializable {
            let found = self.seek_key_decoded(db, table, key, Decoding::With(decoder))?;
            return Ok(found.map(|row| *values = row).is_some());
        }
        let mut off_row: Option<Vec<u8>> = None;
        let found = self.read_row_by(db, table, key, |bytes| {
            off_row = None;
            let mut needs_page = false;
            let decoded = decoder.decode_into(
                bytes,
                &mut |_| {
                    needs_page = true;
                    Err(RowError::Storage(String::new()))
                },
                values,
            );
            if needs_page {
                off_row = Some(bytes.to_vec());
                return Ok(());
            }
            decoded.map_err(|e| row_error(table, e))
        })?;
        if let (Some(()), Some(bytes)) = (found, off_row) {
            *values = Decoding::With(decoder).decode(db, table, &bytes)?;
        }
        Ok(found.is_some())
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
    pub(super) fn table_covers_rows(&self, db: u32, object: u32) -> bool {
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
            staged: None,
            locators: true,
            day_tests: Vec::new(),
        })
    }

    /// [`Transaction::scan_table_only`], made from `spare`, a cursor this transaction made
    /// for an earlier range, where it reads the same table's tree with the same decoder (and
    /// the same steps, if it was staged: see `RowCursor::stage`): its buffers and its leaf hint are kept, so a seek in key order
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
        cursor.day_tests.clear();
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
