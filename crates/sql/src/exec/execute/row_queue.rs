//! Rows kept in the order they come and given back in that order: held within a memory
//! grant, written to a spill file past it. What a statement that reads all its rows before
//! it acts on any keeps of them: an UPDATE's or DELETE's qualifying rows, read before the
//! first is changed, so that no change is read again (SQL Server's Halloween protection,
//! its eager spool, which spills to tempdb the same way).

use walden_engine::types::Value;

use crate::exec::execute::grant::{row_bytes, MemoryGrant};
use crate::exec::execute::spill::{SpillReader, SpillWriter};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Bytes of held rows a queue asks its grant for at a time: a statement that changes a few
/// rows takes no grant at all (every grant is given 1 MB however full the workspace is).
const RESERVE_BYTES: usize = 256 << 10;

/// Rows being queued.
#[derive(Default)]
pub(crate) struct RowQueue {
    held: Vec<Vec<Value>>,
    /// Bytes of `held` the grant does not cover yet, fewer than [`RESERVE_BYTES`].
    unreserved: usize,
    /// The rows past the grant, after `held`.
    file: Option<SpillWriter>,
    grant: Option<MemoryGrant>,
}

/// The rows of a [`RowQueue`], given back in the order they came.
pub(crate) struct QueuedRows {
    held: std::vec::IntoIter<Vec<Value>>,
    file: Option<SpillReader>,
    /// Holds the held rows' memory until they are all given back.
    _grant: Option<MemoryGrant>,
}

impl RowQueue {
    /// Adds `row` after the others.
    pub(crate) fn push(&mut self, run: &Run<'_>, row: Vec<Value>) -> Result<(), SqlError> {
        if let Some(file) = &mut self.file {
            return file.write(&row);
        }
        self.unreserved += row_bytes(&row);
        if self.unreserved < RESERVE_BYTES {
            self.held.push(row);
            return Ok(());
        }
        let grant = self.grant.get_or_insert_with(|| run.memory_grant());
        if grant.try_reserve(self.unreserved) {
            self.unreserved = 0;
            self.held.push(row);
            return Ok(());
        }
        let mut file = SpillWriter::create(grant.memory())?;
        file.write(&row)?;
        self.file = Some(file);
        Ok(())
    }

    /// The rows queued, to be given back.
    pub(crate) fn finish(self) -> Result<QueuedRows, SqlError> {
        let file = self.file.map(SpillWriter::finish).transpose()?;
        Ok(QueuedRows { held: self.held.into_iter(), file, _grant: self.grant })
    }
}

impl QueuedRows {
    /// Rows already in memory (a CTE's or view's, computed whole), given back as they are.
    pub(crate) fn held(rows: Vec<Vec<Value>>) -> QueuedRows {
        QueuedRows { held: rows.into_iter(), file: None, _grant: None }
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
