//! Rows kept in the order they come and given back in that order: held within a memory
//! grant, written to a spill file past it. What a statement that reads all its rows before
//! it acts on any keeps of them: an UPDATE's or DELETE's qualifying rows, read before the
//! first is changed, so that no change is read again (SQL Server's Halloween protection,
//! its eager spool, which spills to tempdb the same way); and the rows of an outer join's
//! inner side that is itself a join, made while the outer join is planned.

use walden_engine::types::Value;

use crate::exec::execute::grant::{row_bytes, HeldBytes};
use crate::exec::execute::spill::{SpillReader, SpillWriter};
use crate::exec::plan::access::RowSink;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Rows being queued.
#[derive(Default)]
pub(crate) struct RowQueue {
    held: Vec<Vec<Value>>,
    /// What `held` takes of the query memory.
    bytes: HeldBytes,
    /// The rows past the grant, after `held`.
    file: Option<SpillWriter>,
}

/// The rows of a [`RowQueue`], given back in the order they came.
pub(crate) struct QueuedRows {
    held: std::vec::IntoIter<Vec<Value>>,
    file: Option<SpillReader>,
    /// Holds the held rows' memory until they are all given back.
    _bytes: HeldBytes,
}

impl RowQueue {
    /// Adds `row` after the others.
    pub(crate) fn push(&mut self, run: &Run<'_>, row: Vec<Value>) -> Result<(), SqlError> {
        if self.file.is_none() && self.bytes.try_hold(run, row_bytes(&row)) {
            self.held.push(row);
            return Ok(());
        }
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(SpillWriter::create(self.bytes.memory(run))?),
        };
        file.write(&row)
    }

    /// The rows queued, to be given back.
    pub(crate) fn finish(self) -> Result<QueuedRows, SqlError> {
        let file = self.file.map(SpillWriter::finish).transpose()?;
        Ok(QueuedRows { held: self.held.into_iter(), file, _bytes: self.bytes })
    }
}

/// A read's sink: every row it is given is queued, in the order given.
impl RowSink for RowQueue {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        RowQueue::push(self, run, row)?;
        Ok(true)
    }
}

impl QueuedRows {
    /// Rows already in memory (a CTE's or view's, computed whole), given back as they are.
    pub(crate) fn held(rows: Vec<Vec<Value>>) -> QueuedRows {
        QueuedRows { held: rows.into_iter(), file: None, _bytes: HeldBytes::default() }
    }

    /// The next row, or None after the last.
    pub(crate) fn next(&mut self) -> Result<Option<Vec<Value>>, SqlError> {
        if let Some(row) = self.held.next() {
            return Ok(Some(row));
        }
        match &mut self.file {
            Some(file) => file.next(),
            None => Ok(None),
        }
    }
}
