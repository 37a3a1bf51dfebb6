//! The storage layer's integration tests, one module per area, in one test binary (one link
//! instead of one per file).

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod btree;
mod buffer;
