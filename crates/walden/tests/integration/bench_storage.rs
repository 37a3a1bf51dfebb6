//! `walden bench storage` end to end, with tiny sizes: the JSON it prints has every figure,
//! the tables hold the rows the workloads inserted, and the data directory is removed unless
//! `--keep` is given.

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

/// Runs `walden bench storage --json` with tiny sizes under `dir`; returns its stdout.
fn run(dir: &Path, extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_walden"))
        .args(["bench", "storage", "--rows", "2000", "--full-txns", "50", "--json", "--dir"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "walden failed: {}\n{stderr}", output.status);
    String::from_utf8(output.stdout).unwrap()
}

/// The JSON object that follows `"name": ` in `json` (objects here nest two levels at most,
/// and hold no strings with braces).
fn object<'a>(json: &'a str, name: &str) -> &'a str {
    let key = format!("\"{name}\": {{");
    let start = json.find(&key).unwrap_or_else(|| panic!("no {name} in {json}")) + key.len() - 1;
    let mut depth = 0;
    for (i, c) in json[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &json[start..=start + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced {name} in {json}")
}

/// The number or boolean under `"name": ` at the top level of `object`.
fn field(object: &str, name: &str) -> String {
    let key = format!("\"{name}\": ");
    let start = object.find(&key).unwrap_or_else(|| panic!("no {name} in {object}")) + key.len();
    object[start..].split([',', '}']).next().unwrap().trim().to_string()
}

fn number(object: &str, name: &str) -> f64 {
    let text = field(object, name);
    text.parse().unwrap_or_else(|_| panic!("{name} is not a number: {text}"))
}

#[test]
fn json_has_every_figure_and_the_rows_are_all_there() {
    let dir = tempfile::tempdir().unwrap();
    let json = run(dir.path(), &[]);
    let json = json.trim();
    assert!(json.starts_with('{') && json.ends_with('}'), "{json}");
    assert_eq!(number(json, "rows"), 2000.0);
    assert_eq!(number(json, "full_txns"), 50.0);
    for (phase, rows, txns) in
        [("big", 2000.0, 1.0), ("small_delayed", 2000.0, 2000.0), ("small_full", 50.0, 50.0)]
    {
        let p = object(json, phase);
        assert_eq!(number(p, "rows"), rows, "{phase}: {p}");
        assert_eq!(number(p, "txns"), txns, "{phase}: {p}");
        assert_eq!(number(p, "rows_found"), rows, "{phase}: {p}");
        assert!(number(p, "seconds") > 0.0, "{phase}: {p}");
        assert!(number(p, "micros_per_row") > 0.0, "{phase}: {p}");
        assert!(number(p, "log_flushes") >= 1.0, "{phase}: {p}");
        assert!(number(p, "log_bytes") > 0.0, "{phase}: {p}");
    }
    assert!(number(object(json, "big"), "rows_per_sec") > 0.0);
    assert!(number(object(json, "small_delayed"), "txns_per_sec") > 0.0);
    // Every fully durable commit flushed the log once.
    assert_eq!(number(object(json, "small_full"), "log_flushes"), 50.0);
    let raw = object(json, "raw_fdatasync");
    assert!(number(raw, "syncs") >= 1.0, "{raw}");
    assert!(number(raw, "micros_per_sync") > 0.0, "{raw}");
    let targets = object(json, "targets");
    for target in ["big_rows_per_sec", "delayed_vs_big", "full_vs_fdatasync"] {
        let t = object(targets, target);
        assert!(number(t, "measured") > 0.0, "{target}: {t}");
        assert!(number(t, "target") > 0.0, "{target}: {t}");
        assert!(["true", "false"].contains(&field(t, "pass").as_str()), "{target}: {t}");
    }
    // Without --keep nothing is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn keep_leaves_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), &["--keep"]);
    let kept: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let data = kept[0].join("data");
    // Every round's databases stay with --keep.
    for file in [
        "master.mdf",
        "bench_big_1.mdf",
        "bench_big_3.mdf",
        "bench_delayed_2_log.ldf",
        "bench_full.mdf",
    ] {
        assert!(data.join(file).exists(), "{file} missing in {}", data.display());
    }
    assert!(!kept[0].join("raw.dat").exists(), "the raw fdatasync file is not kept");
}
