//! The end-to-end tests of the `walden` program, one module per area, in one test binary: each
//! binary links what the modules use of walden-sql, walden-tds and the client crates
//! statically, so one binary instead of one per file saves most of what building the tests
//! costs. `common` is what the modules share.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod acceptance;
mod acceptance_tds;
mod availability;
mod bcp;
mod bench_queries;
mod bench_seed001;
mod bench_storage;
mod bench_tpcc;
mod drivers;
mod go_mssqldb_suite;
mod kill;
mod login_flood;
mod samples;
mod shell;
mod tds_attention;
mod tds_cursors;
mod tds_hostile;
mod tds_raw;
mod tds_server;
mod tds_system_procedures;
mod tds_tls;
mod tds_workers;
