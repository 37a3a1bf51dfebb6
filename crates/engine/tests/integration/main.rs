//! The engine's integration tests, one module per area, in one test binary: each binary links
//! walden-engine statically, so one binary instead of one per file saves most of what building
//! the tests costs. `common` is what the modules share.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod alter;
mod availability;
mod bulk_append;
mod crash;
mod engine;
mod growth;
mod kill;
mod lock;
mod shared_pool;
mod types;
mod undo_spill;
