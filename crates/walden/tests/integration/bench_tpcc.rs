//! `walden bench tpcc` end to end at its smallest setting, against Walden only: it starts
//! its own server, loads a scaled-down warehouse, runs the mix fully durable and delayed for
//! a few seconds each, checks what the runs left, and prints the table.

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn smallest_run_commits_transactions_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_walden"))
        .args(["bench", "tpcc", "--no-postgres", "--warehouses", "1", "--items", "1000"])
        .args(["--customers", "100", "--clients", "2", "--duration-s", "3", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}\nstdout:\n{stdout}\nstderr:\n{stderr}", output.status);

    let header = stdout.lines().find(|l| l.starts_with("engine")).unwrap();
    for column in ["mode", "clients", "tpmC", "tx/s", "NO p50/p95", "retries", "errors"] {
        assert!(header.contains(column), "{column} missing from {header}");
    }
    // engine, mode, clients, tpmC, tx/s, five latency cells, retries, errors, rollbacks.
    let runs: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 13 && w[0] == "Walden")
        .collect();
    let shape: Vec<(&str, &str)> = runs.iter().map(|w| (w[1], w[2])).collect();
    assert_eq!(shape, [("durable", "2"), ("relaxed", "2")], "{stdout}");
    for run in &runs {
        let tpmc: f64 = run[3].parse().unwrap();
        let tx_per_s: f64 = run[4].parse().unwrap();
        assert!(tpmc > 0.0 && tx_per_s > 0.0, "{run:?}\n{stdout}");
        // Deadlock victims are retried and counted apart; nothing else may fail.
        assert_eq!(run[11], "0", "errors in {run:?}\n{stdout}");
    }
    assert!(stdout.contains("load Walden: "), "{stdout}");
    assert!(stdout.contains("Walden server peak RSS: "), "{stdout}");
    // Errors, and an inconsistent database after the runs, are listed here.
    assert!(!stdout.contains("first errors"), "{stdout}");
}
