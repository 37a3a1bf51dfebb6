//! What the `walden serve` tests share: starting the real binary on port 0.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The `sa` password the test servers run with.
pub const PASSWORD: &str = "Walden-test-1";

/// Starts `walden serve --port 0` on a fresh data directory with `extra` flags, and returns
/// the process, the port it reports on stderr, and the directory (removed when dropped).
pub fn start_server(extra: &[&str]) -> (Child, u16, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_walden"))
        .args(["serve", "--port", "0", "--data"])
        .arg(data.path().join("data"))
        .args(extra)
        .env("WALDEN_SA_PASSWORD", PASSWORD)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let port = loop {
        let line = lines.next().expect("server exited before listening").unwrap();
        if let Some(addr) = line.split_once("listening on ").map(|(_, addr)| addr) {
            break addr.rsplit(':').next().unwrap().parse().unwrap();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, port, data)
}
