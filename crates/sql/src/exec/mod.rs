//! The executor: sessions that run batches of T-SQL against the engine.
//!
//! * [`session`](Session): a connection's state and the interpreter of statements and
//!   control flow, with SQL Server's error and transaction rules;
//! * `eval`: expressions and predicates;
//! * `query`: SELECT, from sources and joins to ORDER BY;
//! * `dml` and `ddl`: statements that change rows and objects;
//! * [`scalar`]: types, conversions, operators and built-in functions;
//! * [`sysviews`]: the system views and dynamic management views.

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
