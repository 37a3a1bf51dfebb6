//! The executor: sessions that run batches of T-SQL against the engine.
//!
//! * [`session`](Session): a connection's state and the interpreter of statements and
//!   control flow, with SQL Server's error and transaction rules;
//! * `eval`: expressions and predicates;
//! * `query`: SELECT, from sources and joins to ORDER BY;
//! * `dml` and `ddl`: statements that change rows and objects;
//! * [`scalar`]: types, conversions, operators and built-in functions;
//! * [`sysviews`]: the system views and dynamic management views.

mod access;
mod aggregate;
mod alter;
mod app_state;
pub mod bulk;
mod bulk_insert;
mod catalog_procs;
mod cursor;
mod data_file;
mod database_state;
pub(crate) mod dbcc;
mod ddl;
mod demand;
mod describe;
mod dml;
mod dml_cte;
mod dml_output;
mod error;
mod eval;
mod external_sort;
mod files;
mod filter;
mod foreign_key;
mod function;
mod grant;
mod hash_spill;
pub(crate) mod join;
mod merge;
mod options;
mod output;
mod prepared;
mod properties;
mod query;
mod recursive;
pub mod scalar;
mod session;
mod showplan;
mod showplan_xml;
mod spill;
mod static_type;
mod statistics;
pub(crate) mod statistics_objects;
mod statistics_show;
mod subquery;
mod sysprocs;
pub mod sysviews;
mod temp_procedure;
pub(crate) mod trigger;
mod user_types;
pub(crate) mod view;
mod window;
pub(crate) mod xml_methods;

pub use data_file::terminator as bulk_terminator;
pub use error::SqlError;
pub use eval::PRODUCT_VERSION;
pub use grant::{configure_query_memory, spilled_bytes, QueryMemoryConfig};
pub use output::{Collected, ColumnInfo, Counted, Message, Output, RowSet};
pub use session::{CancelSignal, Session};
