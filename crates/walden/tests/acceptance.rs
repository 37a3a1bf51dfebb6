//! The acceptance scripts of `tests/acceptance/` (see its README), each run as
//! `walden sql -b -i <script> -v N=<n> K=<k>` on a fresh data directory: each must exit 0.
//!
//! The scripts check their own expectations with `THROW`, so `-b` turns a failed check into
//! exit code 1. Sizes are small by default (N=2000, K=100); `WALDEN_ACCEPTANCE_N` and
//! `WALDEN_ACCEPTANCE_K` override them, e.g. the articles' sizes:
//!
//! ```text
//! WALDEN_ACCEPTANCE_N=100000 WALDEN_ACCEPTANCE_K=500 \
//!     cargo test -p walden --release --test acceptance -- --nocapture
//! ```

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

mod common;

use common::sql::{acceptance_dir, acceptance_sizes, embedded_sql, scripts_found, SCRIPTS};

/// Runs one script and asserts it exits 0; prints its output (the result tables) either way.
fn run_script(name: &str) {
    let script = acceptance_dir().join(name);
    assert!(script.exists(), "{} is missing", script.display());
    let data = tempfile::tempdir().unwrap();
    let (n, k) = acceptance_sizes();
    let output = embedded_sql(
        data.path(),
        &["-b", "-i", script.to_str().unwrap(), "-v", &format!("N={n}"), &format!("K={k}")],
        None,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{name} with N={n} K={k}:\n{stdout}{stderr}");
    assert!(
        output.status.success(),
        "{name} failed ({}) with N={n} K={k}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
}

/// A new script in the directory needs a test here, or it would never run.
#[test]
fn every_script_has_a_test() {
    assert_eq!(scripts_found(), SCRIPTS);
}

#[test]
fn procedures_002() {
    run_script("002_procedures.sql");
}

#[test]
fn sequence_cache_003() {
    run_script("003_sequence_cache.sql");
}

#[test]
fn small_vs_big_003() {
    run_script("003_small_vs_big.sql");
}

#[test]
fn tempdb_003() {
    run_script("003_tempdb.sql");
}

#[test]
fn virtual_file_stats_004() {
    run_script("004_virtual_file_stats.sql");
}

#[test]
fn flush_log() {
    run_script("flush_log.sql");
}

#[test]
fn precedence() {
    run_script("precedence.sql");
}
