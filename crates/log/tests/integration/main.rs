//! The log manager's integration tests, one module per area, in one test binary (one link
//! instead of one per file). `common` is what the modules share.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod crash_sweep;
mod format_edges;
mod growth;
mod open_txns;
mod triggers;
