#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! Half-open sockets cannot lock out real logins (issue 27, item 6, first part): a socket that
//! sends nothing is closed after the short pre-login timeout, connections that have not
//! finished logging in are capped separately (the oldest closed to make room), and they do
//! not count against `--max-connections`, which only logged-in connections use up.

use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use walden_tds::*;

use crate::common;

use common::client::Client;
use common::server::Server;

fn threads(pid: u32) -> Option<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Threads:")).and_then(|n| n.trim().parse().ok())
}

#[test]
fn silent_sockets_never_lock_out_a_real_login() {
    let server = Server::start(&[
        "--max-connections",
        "3",
        "--max-pending-logins",
        "16",
        "--prelogin-timeout",
        "1",
    ]);
    // More silent sockets than both limits together.
    let silent: Vec<TcpStream> =
        (0..300).map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap()).collect();
    // Every real client logs in, quickly, up to the connection limit, while they sit there.
    let mut clients = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let mut c = Client::connect(server.port);
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(1), "login took {waited:?}");
        let tokens = c.batch("SELECT 1");
        assert!(!tokens.iter().any(|t| matches!(t, Token::Error(_))), "{tokens:?}");
        clients.push(c);
    }
    // The limit counts logged-in connections only: the fourth is refused with 17809.
    let (_c, tokens) = Client::login(server.port, common::PASSWORD);
    assert!(tokens.iter().any(|t| matches!(t, Token::Error(m) if m.number == 17809)), "{tokens:?}");
    // Threads stay bounded by the caps, not by the sockets.
    if let Some(n) = threads(server.child.id()) {
        assert!(n < 120, "{n} threads for 300 silent sockets");
    }
    assert!(server.logged("connections are logging in; closing the oldest"));
    drop(silent);

    // A silent socket alone is closed after the pre-login timeout.
    let mut lone = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    lone.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 16];
    let n = lone.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(4), "closed after {waited:?}");
    assert!(server.logged("no PRELOGIN within 1 s"));
}
