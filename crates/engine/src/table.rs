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
use crate::lock::Resource;
use crate::txn::Transaction;
use crate::types::{
    decode_row_some_with, decode_row_with, encode_key_columns_ordered, encode_row_with, RowDecoder,
    RowError, SqlType, Value,
};

mod append;
mod cursor;
mod locks;
mod read;
mod sample;
mod write;

pub use append::RowAppender;
pub use cursor::{IndexCursor, RowCursor};
pub use sample::{ColumnSample, IndexSample};

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
