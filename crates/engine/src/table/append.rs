//! A bulk load's inserts ([`RowAppender`]): rows whose keys ascend past every key of the
//! table are gathered into a run and appended to the clustered index's rightmost leaf a leaf
//! at a time (`BTree::append_run`: one fetch, one latch and one log record per leaf instead
//! of per row). Everything else goes through [`Transaction::insert_row`]'s path.
//!
//! A run is only gathered while nothing else can change the table or read the rows it
//! holds: the transaction holds the table in X (`TABLOCK`, or its row locks escalated).
//! Under that lock the tree's last key changes only through this transaction, so a key above
//! the last one known cannot be a duplicate, and the run's rows need no key locks. A row
//! whose key is not above it ends the run and is inserted the ordinary way (which finds a
//! duplicate and names its key).
//!
//! A table's nonclustered indexes get a gathered row's entries this way:
//!
//! * a unique index's entry is inserted with the row, before the row joins the run, so that
//!   a duplicate is found (and named, or skipped under IGNORE_DUP_KEY) at that row, and
//!   nothing of a refused row is left;
//! * a non-unique index's entries (whose keys end with the row id, so they are never
//!   duplicates) are gathered beside the run and go in when it is flushed, sorted: those
//!   that ascend past the index's last key appended a leaf at a time as the rows are, the
//!   others inserted one by one in key order.
//!
//! Until the run is flushed, its rows are in no tree, and the index entries gathered with
//! them in none of theirs: the caller flushes before anything of its own reads the table
//! (triggers, foreign-key checks, a function a CHECK constraint calls). Each part is logged
//! and undone as an insert is, so a rolled-back or crashed load is undone whole.

use std::sync::Arc;

use walden_storage::btree::AppendRun;

use crate::catalog::{IndexDef, TableDef};
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::LockMode;
use crate::txn::Transaction;
use crate::types::Value;

use super::{index_key, RowId, ROW_BUF, ROW_BUF_KEEP};

/// Bytes of rows a run gathers before it is appended: a few leaves' worth, so that each
/// append fills leaves whole and the memory held stays small.
const RUN_BYTES: usize = 32 << 10;

/// The rows of a bulk load not yet in the table, and what it knows of the table's keys. Use
/// one per load and table; call [`Transaction::flush_appended`] before anything reads the
/// table and at the end. Dropping it unflushed drops its rows (a load that failed: its
/// statement's undo takes back what was appended).
#[derive(Debug, Default)]
pub struct RowAppender {
    run: AppendRun,
    /// The greatest key in the table, its rows and the run's, once read (`Some(None)`: the
    /// table is empty).
    last: Option<Option<Vec<u8>>>,
    /// A row encoded, reused from row to row.
    row: Vec<u8>,
    /// The entries of the run's rows in the table's non-unique nonclustered indexes, one
    /// list per index in the order of `TableDef::indexes` (skipping the others).
    entries: Vec<IndexEntries>,
    /// The entries of one index, sorted, as the run that appends them: reused.
    sorted: AppendRun,
}

/// Entries of one index gathered with a run, back to back in one buffer.
#[derive(Debug, Default)]
struct IndexEntries {
    bytes: Vec<u8>,
    /// Per entry: where it starts in `bytes`, its key's length, where its value ends.
    spans: Vec<(usize, usize, usize)>,
}

impl IndexEntries {
    fn push(&mut self, key: &[u8], value: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        self.spans.push((start, key.len(), self.bytes.len()));
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
    }
}

impl RowAppender {
    /// An appender with nothing gathered.
    pub fn new() -> RowAppender {
        RowAppender::default()
    }
}

/// The indexes whose entries a run gathers: the non-unique nonclustered ones.
fn gathered(table: &TableDef) -> impl Iterator<Item = &IndexDef> {
    table.indexes.iter().filter(|i| i.id != 1 && !i.unique)
}

impl Transaction {
    /// Whether rows of `table` may be gathered into a run (see the module docs).
    fn may_append(&self, db: &Database, table: &TableDef) -> bool {
        self.table_lock(db.id(), table.id).is_some_and(|held| held.covers(LockMode::X))
    }

    /// Inserts a row of a bulk load as [`Transaction::insert_row`] does (identity, NOT NULL,
    /// duplicate keys, the same errors), gathering it into `appender`'s run when it may: it
    /// is then in the table once the run is flushed, which happens as the run fills.
    pub fn insert_row_appending(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        values: &mut [Value],
        appender: &mut RowAppender,
    ) -> Result<RowId, EngineError> {
        if !self.may_append(db, table) {
            self.flush_appended(db, table, appender)?;
            appender.last = None;
            return self.insert_row(db, table, values);
        }
        let row_id = self.new_row_id(db, table, values)?;
        if appender.last.is_none() {
            let root = table.primary()?.root;
            appender.last = Some(db.space().tree(root).last_key()?);
        }
        let above = appender.last.as_ref().is_some_and(|last| match last {
            Some(last) => row_id.as_slice() > last.as_slice(),
            None => true,
        });
        if !above {
            self.flush_appended(db, table, appender)?;
            let mut row = ROW_BUF.take();
            row.clear();
            let result = self.insert_encoded(db, table, values, &row_id, &mut row);
            if row.capacity() <= ROW_BUF_KEEP {
                ROW_BUF.set(row);
            }
            result?;
            return Ok(row_id);
        }
        appender.row.clear();
        self.encode_stored_row(db, table, values, &mut appender.row)?;
        if table.indexes.len() > 1 {
            self.index_appended(db, table, values, &row_id, appender)?;
        }
        appender.run.push(&row_id, &appender.row)?;
        // The last key's buffer is reused from row to row rather than cloned for each.
        match &mut appender.last {
            Some(Some(last)) => {
                last.clear();
                last.extend_from_slice(&row_id);
            }
            last => *last = Some(Some(row_id.clone())),
        }
        if appender.run.bytes() >= RUN_BYTES {
            self.flush_appended(db, table, appender)?;
        }
        Ok(row_id)
    }

    /// The nonclustered index entries of a row about to join `appender`'s run: the unique
    /// indexes' inserted now, the others gathered (see the module docs). On an error nothing
    /// of the row is left.
    fn index_appended(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        values: &[Value],
        row_id: &[u8],
        appender: &mut RowAppender,
    ) -> Result<(), EngineError> {
        let mark = self.undo_mark();
        let unique = table.indexes.iter().filter(|i| i.id != 1 && i.unique);
        self.insert_index_entries(db, table, unique, values, row_id, &mark)?;
        let count = gathered(table).count();
        appender.entries.resize_with(count, IndexEntries::default);
        for (index, entries) in gathered(table).zip(&mut appender.entries) {
            match index_key(table, index, values, row_id) {
                Ok(key) => entries.push(&key, row_id),
                Err(e) => {
                    self.rollback_to_mark(&mark)?;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Appends the rows `appender` gathered to `table`, then their gathered index entries.
    pub fn flush_appended(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        appender: &mut RowAppender,
    ) -> Result<(), EngineError> {
        if appender.run.is_empty() {
            return Ok(());
        }
        let root = table.primary()?.root;
        let run = &appender.run;
        let mut from = 0;
        while from < run.len() {
            let n = self.tree_append(db, root, run, from)?;
            if n == 0 {
                // The run's keys were above the table's last when gathered, under a lock
                // that keeps every other change out: this would be a bug, not a duplicate.
                return Err(EngineError::Internal(
                    "a bulk load's row is no longer above the table's last key".into(),
                ));
            }
            from += n;
        }
        db.count_modification(table.id, run.len() as u64);
        appender.run.clear();
        for (index, entries) in gathered(table).zip(&mut appender.entries) {
            let bytes = &entries.bytes;
            let key = |&(start, len, _): &(usize, usize, usize)| &bytes[start..start + len];
            entries.spans.sort_unstable_by(|a, b| key(a).cmp(key(b)));
            appender.sorted.clear();
            for &(start, key_len, end) in &entries.spans {
                let key = &entries.bytes[start..start + key_len];
                appender.sorted.push(key, &entries.bytes[start + key_len..end])?;
            }
            entries.clear();
            self.insert_sorted(db, index, &appender.sorted)?;
        }
        Ok(())
    }

    /// Inserts the entries of `sorted` (ascending, none in the index yet) into `index`: those
    /// below its last key one at a time, in key order, and the rest, which ascend past it, a
    /// leaf at a time.
    fn insert_sorted(
        &mut self,
        db: &Arc<Database>,
        index: &IndexDef,
        sorted: &AppendRun,
    ) -> Result<(), EngineError> {
        let last = db.space().tree(index.root).last_key()?;
        let mut from = 0;
        while from < sorted.len() {
            let above = last.as_deref().is_none_or(|last| sorted.key(from) > last);
            if above {
                let n = self.tree_append(db, index.root, sorted, from)?;
                if n > 0 {
                    from += n;
                    continue;
                }
            }
            let record = sorted.record(from);
            let key = sorted.key(from);
            let value = &record[2 + key.len()..];
            if !self.tree_insert(db, index.root, key, value)? {
                // Its key ends with the row's id, which the clustered index just took.
                return Err(EngineError::Internal(format!(
                    "a bulk load's entry is already in index '{}'",
                    index.name
                )));
            }
            from += 1;
        }
        Ok(())
    }
}
