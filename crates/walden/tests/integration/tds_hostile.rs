#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! `walden serve` against hostile clients: malformed framing before login, a LOGIN7 whose
//! offsets point outside it, oversized messages, wrong passwords in a loop, a flood of
//! connections that never log in, connections past `--max-connections`, and a client that
//! vanishes in the middle of a large result inside an open transaction. After each, the server
//! must still serve a normal login and `SELECT 1`, and the hostile connection must have ended
//! with an ERROR token or a closed socket, never a hang: every socket here has a read timeout,
//! and a timeout fails the test.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use walden_tds::packet::DEFAULT_MAX_MESSAGE_SIZE;
use walden_tds::*;

use crate::common;

use common::client::{frame, is_timeout, login7, prelogin, rows, sql_batch, Client, PATIENCE};
use common::server::Server;
use common::PASSWORD;

/// A new connection; every socket here has [`PATIENCE`] timeouts, so a hang fails the test.
fn connect(port: u16) -> TcpStream {
    common::client::connect(port).unwrap()
}

fn errors(tokens: &[Token]) -> Vec<(i32, String)> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) => Some((m.number, m.message.clone())),
            _ => None,
        })
        .collect()
}

/// A normal client: logs in and runs `SELECT 1`.
fn assert_serves(port: u16) {
    let (mut c, login) = Client::login(port, PASSWORD);
    assert!(login.iter().any(|t| matches!(t, Token::LoginAck(_))), "{login:?}");
    let tokens = c.batch("SELECT 1 AS one");
    assert_eq!(rows(&tokens), vec![vec![TdsValue::Int(1)]], "{tokens:?}");
}

/// Reads until the server closes `stream`; returns what it sent first. Fails on a timeout.
fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if is_timeout(&e) => {
                panic!("the server kept the connection open for {PATIENCE:?}")
            }
            // Reset: the server closed with our bytes unread.
            Err(_) => return got,
        }
    }
}

/// Sends `bytes` on a new connection (optionally after a valid PRELOGIN), and checks that
/// the server closes it without logging it in.
fn refused(port: u16, with_prelogin: bool, bytes: &[u8], then_close: bool) {
    let mut stream = connect(port);
    if with_prelogin {
        stream.write_all(&frame(PacketType::PreLogin, PacketStatus::NONE, &prelogin())).unwrap();
    }
    // The server may close before every byte is written; that is an answer too.
    let _ = stream.write_all(bytes);
    if then_close {
        let _ = stream.shutdown(Shutdown::Write);
    }
    let answer = until_closed(&mut stream);
    let mut reader = MessageReader::new();
    reader.push(&answer);
    while let Ok(Some(m)) = reader.next_message() {
        if let Ok(tokens) = decode_tokens(&m.payload) {
            assert!(!tokens.iter().any(|t| matches!(t, Token::LoginAck(_))), "{tokens:?}");
        }
    }
}

#[test]
fn malformed_input_before_login_closes_only_that_connection() {
    let server = Server::start(&[]);
    let port = server.port;

    // Not TDS at all.
    refused(port, false, b"GET / HTTP/1.1\r\nHost: walden\r\n\r\n", false);
    assert_serves(port);
    // A PRELOGIN packet whose payload is garbage.
    let mut garbage = vec![0x12, 0x01, 0x00, 0x28, 0, 0, 1, 0];
    garbage.extend((0..32u8).map(|i| i.wrapping_mul(97)));
    refused(port, false, &garbage, false);
    assert_serves(port);
    // A header claiming 65535 bytes (more than any packet may have), then the client leaves.
    refused(port, false, &[0x12, 0x01, 0xFF, 0xFF, 0, 0, 1, 0], true);
    assert_serves(port);
    // A header whose length does not even cover the header.
    refused(port, false, &[0x12, 0x01, 0x00, 0x04, 0, 0, 1, 0], false);
    assert_serves(port);
    // A packet type that does not exist.
    refused(port, false, &[0x55, 0x01, 0x00, 0x08, 0, 0, 1, 0], false);
    assert_serves(port);

    // LOGIN7 whose HostName offset and length point past the record.
    let mut login = login7(PASSWORD, "");
    login[36..38].copy_from_slice(&0xFFF0u16.to_le_bytes());
    login[38..40].copy_from_slice(&40u16.to_le_bytes());
    refused(port, true, &frame(PacketType::Login7, PacketStatus::NONE, &login), false);
    assert_serves(port);
    // LOGIN7 whose Length claims more than the message holds.
    let mut login = login7(PASSWORD, "");
    login[0..4].copy_from_slice(&0x00FF_FFFFu32.to_le_bytes());
    refused(port, true, &frame(PacketType::Login7, PacketStatus::NONE, &login), false);
    assert_serves(port);
    // A SQL batch where LOGIN7 belongs.
    refused(
        port,
        true,
        &frame(PacketType::SqlBatch, PacketStatus::NONE, &sql_batch("SELECT 1")),
        false,
    );
    assert_serves(port);
    // A PRELOGIN of 2 MiB: more than the server buffers for a client that has not logged in.
    let chunk = [&[0x12u8, 0x00, 0x10, 0x00, 0, 0, 1, 0][..], &[0u8; 4088]].concat();
    let big: Vec<u8> = chunk.iter().copied().cycle().take(chunk.len() * 520).collect();
    refused(port, false, &big, false);
    assert_serves(port);
}

#[test]
fn oversized_message_after_login_closes_the_connection() {
    let server = Server::start(&[]);
    let (mut c, login) = Client::login(server.port, PASSWORD);
    assert!(login.iter().any(|t| matches!(t, Token::LoginAck(_))));
    // SQL batch packets without EOM, past the server's 64 MiB message limit.
    let packet = [&[0x01u8, 0x00, 0x10, 0x00, 0, 0, 1, 0][..], &[b'x'; 4088]].concat();
    let mut sent = 0;
    while sent <= DEFAULT_MAX_MESSAGE_SIZE + packet.len() {
        if c.stream.write_all(&packet).is_err() {
            break; // The server has already closed.
        }
        sent += packet.len() - 8;
    }
    let answer = until_closed(&mut c.stream);
    assert!(answer.len() < 4096, "the server answered an oversized message: {answer:?}");
    assert_serves(server.port);
}

#[test]
fn fifty_wrong_passwords_then_the_right_one() {
    let server = Server::start(&[]);
    let started = Instant::now();
    for attempt in 0..50 {
        let (mut c, tokens) = Client::login(server.port, &format!("wrong-{attempt}"));
        assert_eq!(
            errors(&tokens),
            vec![(18456, "Login failed for user 'sa'.".to_string())],
            "{tokens:?}"
        );
        assert!(!tokens.iter().any(|t| matches!(t, Token::LoginAck(_))));
        until_closed(&mut c.stream);
    }
    assert!(started.elapsed() < PATIENCE, "50 failed logins took {:?}", started.elapsed());
    assert_serves(server.port);
}

#[test]
fn silent_connections_do_not_block_others_and_are_closed_by_the_login_timeout() {
    // A pending-login cap above the 301 sockets, so that the login timeout is what closes
    // them (login_flood.rs covers the cap and the pre-login timeout).
    let server = Server::start_with(
        &["--max-connections", "400", "--max-pending-logins", "400"],
        &[("WALDEN_LOGIN_TIMEOUT", "4")],
    );
    let port = server.port;
    let opened = Instant::now();
    let mut silent: Vec<TcpStream> = (0..300).map(|_| connect(port)).collect();
    // One more that starts a PRELOGIN packet and never finishes it.
    let mut partial = connect(port);
    partial.write_all(&[0x12, 0x01, 0x00, 0x40, 0, 0, 1, 0, 0]).unwrap();

    // A normal client is served while all of them still hold their connections.
    assert_serves(port);
    for stream in [&silent[0], &partial] {
        stream.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        let still_open =
            matches!(stream.peek(&mut byte), Err(e) if e.kind() == ErrorKind::WouldBlock);
        assert!(still_open, "a silent connection was closed before the others were served");
        stream.set_nonblocking(false).unwrap();
    }

    // Every one of them is closed by the server once its login time is up.
    for stream in silent.iter_mut().chain([&mut partial]) {
        assert!(until_closed(stream).is_empty());
    }
    assert!(opened.elapsed() >= Duration::from_secs(4), "closed before the login timeout");
    assert_serves(port);
}

#[test]
fn connections_past_the_limit_get_17809_until_slots_free_up() {
    let server = Server::start_with(&["--max-connections", "3"], &[("WALDEN_LOGIN_TIMEOUT", "2")]);
    let port = server.port;
    // Only logged-in connections take slots: silent ones do not, these three clients do.
    let _silent: Vec<TcpStream> = (0..3).map(|_| connect(port)).collect();
    let mut holders: Vec<Client> = (0..3).map(|_| Client::connect(port)).collect();
    let (_, tokens) = Client::login(port, PASSWORD);
    let refused = errors(&tokens);
    assert_eq!(refused.len(), 1, "{tokens:?}");
    assert_eq!(refused[0].0, 17809, "{tokens:?}");
    assert!(refused[0].1.contains("maximum number of '3' user connections"), "{}", refused[0].1);
    assert!(tokens.iter().any(|t| matches!(t, Token::Error(m) if m.class == 20)));

    // A client that leaves gives its slot back.
    holders.pop();
    log_in_once_a_slot_frees(port, "slots never freed");
    drop(holders);
}

#[test]
fn a_vanished_client_is_rolled_back_and_releases_its_locks() {
    // Two slots: the client that stays and the one that vanishes. A third login can succeed
    // only once the vanished client's connection thread has ended.
    let server = Server::start(&["--max-connections", "2"]);
    let port = server.port;
    let (mut stays, _) = Client::login(port, PASSWORD);
    let setup = stays.batch(
        "CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL); \
         INSERT INTO accounts VALUES (1, 100), (2, 200); \
         CREATE TABLE audit (id INT PRIMARY KEY)",
    );
    assert!(errors(&setup).is_empty(), "{setup:?}");

    let (mut vanishes, _) = Client::login(port, PASSWORD);
    vanishes.send_batch(
        "BEGIN TRAN; \
         INSERT INTO audit VALUES (1), (2), (3); \
         UPDATE accounts SET balance = 0 WHERE id = 1; \
         SELECT value, REPLICATE('x', 40) AS pad FROM GENERATE_SERIES(1, 200000)",
    );
    // Read the first packet of the response, so the transaction is open and the rows are
    // flowing, then leave without reading the rest (unread data makes the close a reset).
    let mut header = [0u8; 8];
    vanishes.stream.read_exact(&mut header).unwrap();
    let header = packet::PacketHeader::decode(&header).unwrap();
    assert!(!header.status.contains(PacketStatus::EOM), "the response fit one packet");
    let mut payload = vec![0u8; usize::from(header.length) - 8];
    vanishes.stream.read_exact(&mut payload).unwrap();
    // The packet ends mid-token: decode the whole tokens it starts with.
    let first: Vec<Token> = TokenReader::new(&payload).map_while(Result::ok).collect();
    assert!(errors(&first).is_empty(), "{first:?}");
    assert!(first.iter().any(|t| matches!(t, Token::ColMetadata(_))), "{first:?}");
    assert!(rows(&first).len() > 10, "{first:?}");
    drop(vanishes);

    // The rows the vanished transaction inserted are gone, and the row it updated can be
    // updated: its locks were released (a lock it still held would block these statements
    // until the read timeout fails the test).
    let tokens = stays.batch("SELECT COUNT(*) AS n FROM audit");
    assert_eq!(rows(&tokens), vec![vec![TdsValue::Int(0)]], "{tokens:?}");
    let tokens = stays.batch(
        "UPDATE accounts SET balance = balance + 1 WHERE id = 1; \
         SELECT balance FROM accounts WHERE id = 1",
    );
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    assert_eq!(rows(&tokens), vec![vec![TdsValue::Int(101)]], "{tokens:?}");

    // The vanished client's connection thread has ended: its slot is free.
    log_in_once_a_slot_frees(port, "the vanished client's slot stayed taken");
}

/// Logs in as soon as the server has a free connection slot (within [`PATIENCE`]) and runs a
/// query; fails with `what` if no slot frees up in time.
fn log_in_once_a_slot_frees(port: u16, what: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (mut c, tokens) = Client::login(port, PASSWORD);
        if tokens.iter().any(|t| matches!(t, Token::LoginAck(_))) {
            assert_eq!(rows(&c.batch("SELECT 1")), vec![vec![TdsValue::Int(1)]]);
            return;
        }
        assert!(Instant::now() < deadline, "{what}: {tokens:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
