//! What a batch produces, as a stream of events to an [`Output`]: result sets with their
//! rows, row counts, and messages (`PRINT`, `RAISERROR`, errors). The `walden sql` shell
//! formats them as `sqlcmd` does; the TDS server encodes them as COLMETADATA, ROW, DONE,
//! INFO and ERROR tokens.
//!
//! The order of calls for one batch is any sequence of:
//!
//! * `result_set(columns)`, then `row(values)` zero or more times, then `result_end(count)`;
//! * `message(msg)` for `PRINT`, informational `RAISERROR` and errors, at the moment they
//!   happen (so `RAISERROR ... WITH NOWAIT` reaches the client at once);
//! * `done(count)` when a statement that counts rows finishes (`None` under `SET NOCOUNT ON`
//!   or for statements that count nothing);
//! * `statement_end()` after every statement the client sees as one (all but variable
//!   declarations, labels, compound statements and statements inside functions), whether or
//!   not it called `done`: the TDS server ends each with a DONE token, as [MS-TDS] 2.2.7.6
//!   requires.

use walden_engine::types::{DeclaredType, SqlType, Value};

use crate::exec::SqlError;

/// A result column: its name (empty when unnamed, as `SELECT 1` is), type and nullability.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnInfo {
    /// The name; empty for an expression without an alias.
    pub name: String,
    /// The type of every value in the column (NULLs excepted).
    pub ty: SqlType,
    /// Whether the column may hold NULL.
    pub nullable: bool,
    /// A text column's collation when it is not the default (`SQL_Latin1_General_CP1_CI_AS`),
    /// by its name as SQL Server spells it.
    pub collation: Option<&'static str>,
    /// The type the column was declared with when Walden holds its values as `ty`
    /// (SMALLDATETIME as DATETIME, ...): what a client is told the column is.
    pub declared: Option<DeclaredType>,
}

impl ColumnInfo {
    /// A nullable column.
    pub fn new(name: impl Into<String>, ty: SqlType) -> ColumnInfo {
        ColumnInfo { name: name.into(), ty, nullable: true, collation: None, declared: None }
    }

    /// A column that is never NULL.
    pub fn not_null(name: impl Into<String>, ty: SqlType) -> ColumnInfo {
        ColumnInfo { nullable: false, ..ColumnInfo::new(name, ty) }
    }
}

/// A materialized result: columns and rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowSet {
    /// The columns.
    pub columns: Vec<ColumnInfo>,
    /// The rows; each has one value per column.
    pub rows: Vec<Vec<Value>>,
}

/// A message for the client: `PRINT` text and informational `RAISERROR`s (severity 0-10) are
/// shown as they are, errors as `Msg n, Level l, State s, Line x`.
pub type Message = SqlError;

/// Receives what a batch produces (see the module documentation for the order of calls).
pub trait Output {
    /// A result set starts.
    fn result_set(&mut self, columns: &[ColumnInfo]);
    /// One row of the current result set.
    fn row(&mut self, values: &[Value]);
    /// The current result set ends after `rows` rows.
    fn result_end(&mut self, rows: u64);
    /// A whole result set built beforehand (a procedure's or DBCC's answer).
    fn row_set(&mut self, set: &RowSet) {
        self.result_set(&set.columns);
        for row in &set.rows {
            self.row(row);
        }
        self.result_end(set.rows.len() as u64);
    }
    /// A message or error, at once.
    fn message(&mut self, message: &Message);
    /// A statement finished; `rows` is its row count when the client should see one.
    fn done(&mut self, rows: Option<u64>);
    /// A statement that counted rows finished: what it was, then its count. TDS clients
    /// need the kind (DONE's CurCmd) to tell an update count from a query's row count; other
    /// outputs only want the count.
    fn done_counted(&mut self, kind: Counted, rows: Option<u64>) {
        let _ = kind;
        self.done(rows);
    }
    /// A statement ended (see the module documentation for which): an output that must mark
    /// every statement's end, such as the TDS server's DONE tokens, does it here when `done`
    /// did not already.
    fn statement_end(&mut self) {}
    /// Delivers what was produced so far at once (`RAISERROR ... WITH NOWAIT`): an output
    /// that buffers, such as the TDS server's packets, sends it now.
    fn flush(&mut self) {}
    /// An `EXEC` of a procedure starts; `procedure_end` follows, with any number of nested
    /// pairs between. The TDS server ends a procedure's statements with DONEINPROC.
    fn procedure_start(&mut self) {}
    /// The procedure running returned `status` (its `RETURN` value, 0 without one).
    fn procedure_return(&mut self, _status: i32) {}
    /// The procedure `procedure_start` announced ended: `completed` unless an error ended
    /// it (and is about to be reported). The TDS server sends the outermost one's RETURNSTATUS
    /// and DONEPROC, as [MS-TDS] 2.2.7.7 says for procedures a batch executes.
    fn procedure_end(&mut self, _completed: bool) {}
    /// A trigger's body starts; `trigger_end` follows, with any number of nested pairs
    /// between. The TDS server ends the body's statements with DONEINPROC, as SQL Server
    /// does: a client reading a batch's results must not take them for the batch's own.
    fn trigger_start(&mut self) {}
    /// The trigger body `trigger_start` announced ended (completed or not).
    fn trigger_end(&mut self) {}
    /// `SET TEXTSIZE`: the most bytes of a `varchar(max)`, `nvarchar(max)` or
    /// `varbinary(max)` (text, ntext, image) value to send; the session says it before each
    /// batch and when it changes. The TDS server cuts longer values, as SQL Server does.
    fn text_size(&mut self, _bytes: i64) {}
}

/// The kind of statement whose row count [`Output::done_counted`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// A query that returned a result set.
    Select,
    /// `SELECT ... INTO`.
    SelectInto,
    /// `INSERT`.
    Insert,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `MERGE`: the rows it inserted, updated and deleted.
    Merge,
}

/// An [`Output`] that keeps everything, for tests and for `INSERT ... EXEC`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Collected {
    /// Result sets, in order.
    pub results: Vec<RowSet>,
    /// Messages and errors, in order.
    pub messages: Vec<Message>,
    /// Row counts reported by `done`, in order.
    pub counts: Vec<u64>,
}

impl Collected {
    /// The errors among the messages.
    pub fn errors(&self) -> impl Iterator<Item = &Message> {
        self.messages.iter().filter(|m| !m.is_info())
    }
}

impl Output for Collected {
    fn result_set(&mut self, columns: &[ColumnInfo]) {
        self.results.push(RowSet { columns: columns.to_vec(), rows: Vec::new() });
    }

    fn row(&mut self, values: &[Value]) {
        if let Some(set) = self.results.last_mut() {
            set.rows.push(values.to_vec());
        }
    }

    fn result_end(&mut self, _rows: u64) {}

    fn message(&mut self, message: &Message) {
        self.messages.push(message.clone());
    }

    fn done(&mut self, rows: Option<u64>) {
        if let Some(n) = rows {
            self.counts.push(n);
        }
    }
}
