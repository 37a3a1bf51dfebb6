#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! Connections hold no thread between requests (issue 27, item 6): they wait in the server's
//! poller and their requests run on a bounded pool of workers. With a pool of a few workers,
//! many idle sessions still all get answers, a cancel still stops a running request at once,
//! and a session blocked on a lock does not stop the others.

use std::time::{Duration, Instant};

use walden_tds::*;

use crate::common;

use common::client::Client;
use common::server::Server;

fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap()
}

fn errors(tokens: &[Token]) -> Vec<String> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) => Some(format!("{}: {}", m.number, m.message)),
            _ => None,
        })
        .collect()
}

fn int(value: TdsValue) -> i64 {
    match value {
        TdsValue::Int(v) => i64::from(v),
        TdsValue::BigInt(v) => v,
        TdsValue::SmallInt(v) => i64::from(v),
        other => panic!("expected a number, got {other:?}"),
    }
}

/// A session that has changed row 1 of a new table `dbo.t (id, v)`, from 10 to 11, in a
/// transaction it keeps open: a reader of the row waits for its lock.
fn holding_a_row_lock(port: u16) -> Client {
    let mut holder = Client::connect(port);
    let setup = holder
        .batch("CREATE TABLE dbo.t (id int PRIMARY KEY, v int); INSERT INTO dbo.t VALUES (1, 10);");
    assert!(errors(&setup).is_empty(), "{setup:?}");
    let taken = holder.batch("BEGIN TRAN; UPDATE dbo.t SET v = 11 WHERE id = 1;");
    assert!(errors(&taken).is_empty(), "{taken:?}");
    holder
}

#[test]
fn many_idle_sessions_on_two_workers_all_get_answers() {
    let server = Server::start(&["--max-worker-threads", "2"]);
    let before = threads(server.child.id());
    let mut clients: Vec<Client> = (0..300).map(|_| Client::connect(server.port)).collect();
    // Every session is logged in and idle: the server's threads are its own few, not one
    // per connection.
    let idle = threads(server.child.id());
    assert!(idle < before + 10, "{idle} threads with 300 idle sessions (was {before})");
    // Each session keeps its own state across requests, whichever worker runs them.
    for (i, c) in clients.iter_mut().enumerate() {
        let tokens = c.batch(&format!("SET LOCK_TIMEOUT {}", 1000 + i));
        assert!(errors(&tokens).is_empty(), "{tokens:?}");
    }
    for (i, c) in clients.iter_mut().enumerate().rev() {
        assert_eq!(int(c.scalar("SELECT @@LOCK_TIMEOUT")), 1000 + i as i64);
        assert_eq!(int(c.scalar("SELECT @@SPID")), int(c.scalar("SELECT @@SPID")));
    }
    assert!(server.logged("max_worker_threads = 2"));
}

#[test]
fn a_cancel_stops_a_running_request_while_other_sessions_wait() {
    let server = Server::start(&["--max-worker-threads", "2"]);
    let mut idle: Vec<Client> = (0..50).map(|_| Client::connect(server.port)).collect();
    let mut c = Client::connect(server.port);
    c.send_batch("WAITFOR DELAY '00:00:30'; SELECT 1");
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    c.send(PacketType::Attention, &[]);
    let mut acknowledged = false;
    for _ in 0..3 {
        let tokens = c.tokens();
        if tokens.iter().any(|t| matches!(t, Token::Done(d) if d.status.contains(DoneStatus::ATTN)))
        {
            acknowledged = true;
            break;
        }
    }
    assert!(acknowledged, "no attention acknowledgement");
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(5), "the cancel took {took:?}");
    // The cancelled session and the idle ones go on.
    assert_eq!(int(c.scalar("SELECT 41 + 1")), 42);
    for other in &mut idle {
        assert_eq!(int(other.scalar("SELECT 7")), 7);
    }
}

#[test]
fn a_session_blocked_on_a_lock_does_not_stop_the_others() {
    let server = Server::start(&["--max-worker-threads", "3"]);
    let mut holder = holding_a_row_lock(server.port);
    // Its request waits for the lock, holding a worker.
    let mut blocked = Client::connect(server.port);
    blocked.send_batch("SELECT v FROM dbo.t WHERE id = 1");
    std::thread::sleep(Duration::from_millis(300));
    // Other sessions log in and run meanwhile, on the other workers.
    for _ in 0..20 {
        let mut other = Client::connect(server.port);
        assert_eq!(int(other.scalar("SELECT COUNT(*) FROM sys.objects WHERE 1 = 0")), 0);
    }
    let done = holder.batch("COMMIT");
    assert!(errors(&done).is_empty(), "{done:?}");
    // The blocked request finishes once the lock is released, with the committed value.
    let tokens = blocked.tokens();
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    assert!(
        tokens.iter().any(|t| matches!(t, Token::Row(values) if values == &[TdsValue::Int(11)])),
        "{tokens:?}"
    );
}

#[test]
fn a_connection_its_client_closed_is_not_listed_while_its_session_ends() {
    let server = Server::start(&["--max-worker-threads", "3"]);
    let mut holder = holding_a_row_lock(server.port);
    let listed = "SELECT COUNT(*) FROM sys.dm_exec_connections WHERE session_id = ";
    for _ in 0..20 {
        // A session whose request waits for the lock is on a worker, not with the poller,
        // when its client goes: it ends only when that worker notices.
        let mut leaving = Client::connect(server.port);
        let spid = int(leaving.scalar("SELECT @@SPID"));
        assert_eq!(int(holder.scalar(&format!("{listed}{spid}"))), 1);
        leaving.send_batch("SELECT v FROM dbo.t WHERE id = 1");
        std::thread::sleep(Duration::from_millis(20));
        drop(leaving);
        // The client that closed a connection does not find it in the next count.
        assert_eq!(int(holder.scalar(&format!("{listed}{spid}"))), 0, "session {spid}");
    }
    let done = holder.batch("COMMIT");
    assert!(errors(&done).is_empty(), "{done:?}");
}
