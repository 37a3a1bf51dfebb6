//! A bulk load's inserts ([`RowAppender`]): rows whose keys ascend past every key of the
//! table are gathered into a run and appended to the clustered index's rightmost leaf a leaf
//! at a time (`BTree::append_run`: one fetch, one latch and one log record per leaf instead
//! of per row). Everything else goes through [`Transaction::insert_row`]'s path.
//!
//! A run is only gathered while nothing else can change the table or read the rows it
//! holds: the transaction holds the table in X (`TABLOCK`, or its row locks escalated), and
//! the table has no index but its clustered one (or heap), so that a row has one entry. Under
//! that lock the tree's last key changes only through this transaction, so a key above the
//! last one known cannot be a duplicate, and the run's rows need no key locks. A row whose
//! key is not above it ends the run and is inserted the ordinary way (which finds a duplicate
//! and names its key).

use std::sync::Arc;

use walden_storage::btree::AppendRun;

use crate::catalog::TableDef;
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::LockMode;
use crate::txn::Transaction;
use crate::types::Value;

use super::{RowId, ROW_BUF, ROW_BUF_KEEP};

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
}

impl RowAppender {
    /// An appender with nothing gathered.
    pub fn new() -> RowAppender {
        RowAppender::default()
    }
}

impl Transaction {
    /// Whether rows of `table` may be gathered into a run (see the module docs).
    fn may_append(&self, db: &Database, table: &TableDef) -> bool {
        table.indexes.len() == 1
            && self.table_lock(db.id(), table.id).is_some_and(|held| held.covers(LockMode::X))
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
        appender.run.push(&row_id, &appender.row)?;
        appender.last = Some(Some(row_id.clone()));
        if appender.run.bytes() >= RUN_BYTES {
            self.flush_appended(db, table, appender)?;
        }
        Ok(row_id)
    }

    /// Appends the rows `appender` gathered to `table`.
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
        Ok(())
    }
}
