//! `walden bench seed001` end to end with tiny sizes: it starts its own server, runs the four
//! workloads, checks the rows they left, and prints the table and the three targets.

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn tiny_run_prints_the_table_and_the_targets() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_walden"))
        .args(["bench", "seed001", "--clients", "2", "--transactions", "50"])
        .args(["--high-clients", "4", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}\nstdout:\n{stdout}\nstderr:\n{stderr}", output.status);

    let header = stdout.lines().find(|l| l.trim_start().starts_with("clients")).unwrap();
    for column in ["mode", "tx/s", "log flushes", "flushes/tx", "article tx/s"] {
        assert!(header.contains(column), "{column} missing from {header}");
    }
    // One line per run: clients, mode, transactions (clients x 50), then figures.
    let runs: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 9 && w[0].parse::<u32>().is_ok())
        .collect();
    let shape: Vec<(&str, &str, &str)> = runs.iter().map(|w| (w[0], w[1], w[2])).collect();
    assert_eq!(
        shape,
        [
            ("2", "full", "100"),
            ("2", "delayed", "100"),
            ("4", "full", "200"),
            ("4", "delayed", "200")
        ],
        "{stdout}"
    );
    for run in &runs {
        let tx_per_s: f64 = run[4].parse().unwrap();
        let flushes: i64 = run[5].parse().unwrap();
        assert!(tx_per_s > 0.0, "{run:?}");
        // Every fully durable commit reaches the disk through some flush.
        if run[1] == "full" {
            assert!(flushes > 0, "{run:?}");
        }
    }
    assert_eq!(runs[0][8], "3777.8");
    assert_eq!(runs[1][8], "5818.1");
    assert_eq!(runs[2][8], "-");
    for target in [
        "delayed / full tx/s at 2 clients",
        "full log flushes per transaction at 2 clients",
        "full / delayed tx/s at 4 clients",
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(target))
            .unwrap_or_else(|| panic!("{target} missing:\n{stdout}"));
        assert!(line.ends_with("PASS") || line.ends_with("MISS"), "{line}");
    }
    // The server's data directory was a temporary one under --dir, and is gone.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
