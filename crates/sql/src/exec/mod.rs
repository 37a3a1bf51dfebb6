//! The executor: sessions that run batches of T-SQL against the engine, laid out by stage.
//!
//! * [`session`](Session): a connection's state and the interpreter of statements and
//!   control flow, with SQL Server's error and transaction rules;
//! * `bind`: what is worked out from a statement's text before rows are read (static types,
//!   the columns a block reads, prepared expressions, `sp_describe_*`);
//! * `plan`: the FROM clause's plan and access paths, statistics, the plan cache, showplan;
//! * `execute`: the operators after planning (`query`: everything after FROM; filters,
//!   aggregates, windows, subqueries, sorts and spills under the memory grant; cursors);
//! * `dml` and `ddl`: the statements that change rows and that define objects;
//! * `module`: views, functions, triggers and temporary procedures, each its CREATE text;
//! * `procedure`: the system procedures (`dispatch::system_procedure` is the table of their
//!   names), DBCC, and the server functions beside them;
//! * [`scalar`]: types, conversions, operators and built-in functions;
//! * [`sysviews`]: the system views and dynamic management views.
//!
//! Beside them, what every stage uses: `eval` (expressions and predicates), `options` (the
//! SET options), `error` and `messages` (SQL Server's errors and their texts) and `output`
//! (what a batch produces).

mod bind;
mod ddl;
mod dml;
mod error;
mod eval;
mod execute;
mod messages;
mod module;
mod options;
mod output;
mod plan;
mod procedure;
pub mod scalar;
mod session;
pub mod sysviews;

pub use dml::bulk;
pub use dml::data_file::terminator as bulk_terminator;
pub use error::SqlError;
pub use eval::PRODUCT_VERSION;
pub use execute::cursor::{CursorShape, DynamicMove};
pub use execute::grant::{configure_query_memory, spilled_bytes, QueryMemoryConfig};
pub use output::{Collected, ColumnInfo, Counted, Message, Output, RowSet};
pub use session::{CallArgument, CallOutcome, CallTarget, CallValue, CancelSignal, Session};
