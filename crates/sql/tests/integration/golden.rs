//! Golden tests: each `tests/sql/NAME.sql` runs batch by batch (split at `GO` lines) in one
//! session on a fresh embedded instance, and its output, written in a plain text form, must
//! equal `tests/sql/NAME.out`.
//! `WALDEN_BLESS=1 cargo test -p walden-sql --test integration golden::` rewrites the `.out`
//! files; review the diff before committing it.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::path::Path;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{ColumnInfo, Message, Output, Session};

/// Writes what a batch produces as plain text.
#[derive(Default)]
struct Transcript {
    text: String,
}

impl Output for Transcript {
    fn result_set(&mut self, columns: &[ColumnInfo]) {
        let names: Vec<String> = columns.iter().map(|c| format!("{} {}", c.name, c.ty)).collect();
        let _ = writeln!(self.text, "| {}", names.join(" | "));
    }

    fn row(&mut self, values: &[Value]) {
        let cells: Vec<String> = values.iter().map(Value::to_string).collect();
        let _ = writeln!(self.text, "  {}", cells.join(" | "));
    }

    fn result_end(&mut self, rows: u64) {
        let _ = writeln!(self.text, "({rows} rows)");
    }

    fn message(&mut self, m: &Message) {
        if m.is_info() {
            let _ = writeln!(self.text, "> {}", m.message);
        } else {
            let _ = writeln!(self.text, "{m}");
        }
    }

    fn done(&mut self, rows: Option<u64>) {
        if let Some(n) = rows {
            let _ = writeln!(self.text, "({n} affected)");
        }
    }
}

fn batches(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in script.lines() {
        if line.trim().eq_ignore_ascii_case("GO") {
            out.push(std::mem::take(&mut current));
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

fn run_script(script: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut session = Session::new(instance.clone());
    let mut t = Transcript::default();
    for (i, b) in batches(script).iter().enumerate() {
        let _ = writeln!(t.text, "-- batch {}", i + 1);
        session.execute_batch(b, &mut t);
    }
    session.close();
    drop(session);
    instance.close().unwrap();
    t.text
}

#[test]
fn golden_scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let bless = std::env::var_os("WALDEN_BLESS").is_some();
    let mut failures = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no golden scripts in {}", dir.display());
    for path in names {
        let script = std::fs::read_to_string(&path).unwrap();
        let actual = run_script(&script);
        let expected_path = path.with_extension("out");
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            failures.push(format!(
                "{} differs from {}:\n--- actual ---\n{actual}",
                path.display(),
                expected_path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
