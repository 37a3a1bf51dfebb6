//! The acceptance scripts of `tests/acceptance/` (see its README), each run as
//! `walden sql -b -i <script> -v N=<n> K=<k>` on a fresh data directory: each must exit 0.
//!
//! The scripts check their own expectations with `THROW`, so `-b` turns a failed check into
//! exit code 1. Sizes are small by default (N=2000, K=100); `WALDEN_ACCEPTANCE_N` and
//! `WALDEN_ACCEPTANCE_K` override them, e.g. the articles' sizes:
//!
//! ```text
//! WALDEN_ACCEPTANCE_N=100000 WALDEN_ACCEPTANCE_K=500 \
//!     cargo test -p walden --release --test integration acceptance:: -- --nocapture
//! ```

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::sql::{acceptance_dir, acceptance_sizes, embedded_sql};

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

common::acceptance_tests!(run_script);
