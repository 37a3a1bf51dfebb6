//! `walden sql` as a child process, and the acceptance scripts of `tests/acceptance/`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The acceptance scripts, each with its test from [`crate::common::acceptance_tests`].
pub const SCRIPTS: [&str; 7] = [
    "002_procedures.sql",
    "003_sequence_cache.sql",
    "003_small_vs_big.sql",
    "003_tempdb.sql",
    "004_virtual_file_stats.sql",
    "flush_log.sql",
    "precedence.sql",
];

pub fn acceptance_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/acceptance")
}

/// The scripts in `tests/acceptance/`, sorted: a new one needs a test, or it would never run.
pub fn scripts_found() -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(acceptance_dir())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".sql"))
        .collect();
    found.sort();
    found
}

/// The scripts' sizes N and K: small by default (2000 and 100), or `WALDEN_ACCEPTANCE_N` and
/// `WALDEN_ACCEPTANCE_K`.
pub fn acceptance_sizes() -> (String, String) {
    let size = |var: &str, default: &str| {
        std::env::var(var).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_string())
    };
    (size("WALDEN_ACCEPTANCE_N", "2000"), size("WALDEN_ACCEPTANCE_K", "100"))
}

/// Runs `command` to its end with `stdin` piped in, or nothing on standard input.
pub fn run(mut command: Command, stdin: Option<&str>) -> Output {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = command.spawn().unwrap();
    if let Some(text) = stdin {
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// Runs the embedded shell, `walden sql --data <data> <args>` (`WALDEN_DATA` unset), with
/// `stdin` piped in if given.
pub fn embedded_sql(data: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_walden"));
    command.arg("sql").arg("--data").arg(data).args(args).env_remove("WALDEN_DATA");
    run(command, stdin)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Asserts the exit code, showing both streams when it is not the one expected.
pub fn assert_code(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
