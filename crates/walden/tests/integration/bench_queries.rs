//! `walden bench queries` end to end at the smallest scale, without PostgreSQL: it completes,
//! Walden and SQLite give the same answer to every query, and the JSON has every query.

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use std::process::Command;

/// Runs `walden bench queries` at the smallest scale with `extra`; returns its stdout.
fn run(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_walden"))
        .args(["bench", "queries", "--scale", "0.0001", "--runs", "1", "--timeout-s", "30"])
        .args(["--no-postgres", "--dir"])
        .arg(dir.path())
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "walden failed: {}\n{stderr}", output.status);
    // The run's directory (Walden's data, SQLite's file) is removed at the end.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn every_query_runs_and_walden_agrees_with_sqlite() {
    let out = run(&[]);
    assert!(!out.contains("MISMATCH"), "{out}");
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("query "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    for name in ["pk_lookup_loop", "join5_comma", "not_in_subquery", "count_star_join"] {
        assert!(table.iter().any(|l| l.starts_with(name)), "no {name} in\n{out}");
    }
    // At this size every query finishes in both engines, so every line is checked.
    for line in &table {
        assert!(line.ends_with(" ok"), "{line}\n{out}");
    }
    assert!(out.contains("Walden RSS after loading: "), "{out}");
}

#[test]
fn json_has_each_selected_query_with_both_engines() {
    let out = run(&["--json", "--only", "join2", "--only", "lookup"]);
    let json = out.trim();
    assert!(json.starts_with('{') && json.ends_with('}'), "{json}");
    for name in ["\"pk_lookup_loop\"", "\"join2_on\"", "\"join2_comma\""] {
        assert!(json.contains(name), "{name} missing: {json}");
    }
    assert!(!json.contains("join3"), "{json}");
    assert_eq!(json.matches("\"match\": true").count(), 3, "{json}");
    assert_eq!(json.matches("\"postgres\": \"-\"").count(), 3, "{json}");
    assert!(json.contains("\"walden_peak_rss_kb\": "), "{json}");
}

#[test]
fn tpch_queries_that_walden_finishes_agree_with_sqlite() {
    // Scale factor 0.01 is the smallest at which the generator's PARTSUPP keys are unique.
    let out = run(&["--tpch", "--tpch-sf", "0.01", "--only", "tpch_q06", "--only", "tpch_q15"]);
    assert!(out.contains("TPC-H at scale factor 0.01"), "{out}");
    for name in ["tpch_q06", "tpch_q15"] {
        let line = out.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{out}"));
        assert!(line.ends_with(" ok"), "{line}\n{out}");
    }
}
