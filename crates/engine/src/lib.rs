//! Walden's engine: instance, databases, catalog, transactions, locks, recovery, sequences;
//! the Rust API the T-SQL layer calls.
//!
//! * [`instance`]: the data directory, master, tempdb, user databases; the entry point.
//! * [`database`]: one database's files, buffer pool, log, checkpoints and recovery;
//!   [`files`]: the files' sizes, growth and maximum sizes.
//! * [`txn`]: transactions, rollback with compensation records, savepoints, commit policy.
//! * [`table`]: rows, indexes, locks on rows and tables; [`objects`]: DDL, identity,
//!   sequences; [`catalog`]: object definitions; [`statistics`]: statistics objects.
//! * [`alter`]: ALTER TABLE's table rebuilds, renames and catalog-only table changes.
//! * [`lock`]: the lock manager; [`types`]: SQL types, values, rows and keys;
//!   [`wal`]: the engine's log records; [`recovery`]: the recovery decision tables.
//!
//! The protocol is in `docs/recovery.md`; the formats in `docs/format/`.

pub mod alter;
pub mod catalog;
pub mod database;
pub mod deferred_commit;
pub mod error;
pub mod events;
pub mod files;
pub mod instance;
pub mod lock;
pub mod objects;
pub mod recovery;
pub mod statistics;
pub mod table;
pub mod txn;
pub mod types;
pub mod wal;

pub use database::{Database, DatabaseConfig, DatabaseFiles, RecoveryModel, RecoveryReport};
pub use deferred_commit::DeferredCommits;
pub use error::EngineError;
pub use events::{EventLevel, EventLog};
pub use instance::{Instance, InstanceConfig};
pub use table::{ColumnSample, IndexCursor, IndexSample, RowAppender, RowCursor, RowId};
pub use txn::{CommitOutcome, Isolation, ReadIntent, TableHint, Transaction};
