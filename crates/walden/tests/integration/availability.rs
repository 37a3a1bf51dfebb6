#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! One database cannot take the server down, and the error log says what happened (issue 27,
//! items 4 and 7), through `walden serve`: a database whose log file went missing is
//! RECOVERY_PENDING in `sys.databases` with the reason in the log, the rest of the instance
//! serves, `ALTER DATABASE ... SET ONLINE` brings it back once the file is back, and SIGTERM
//! exits 0 whatever state the database is in.

use std::path::Path;
use std::process::Command;

use walden_tds::*;

use crate::common;

use common::client::Client;
use common::server::{serve_command, Server};

fn ok(c: &mut Client, text: &str) -> Vec<Token> {
    let tokens = c.batch(text);
    assert!(!tokens.iter().any(|t| matches!(t, Token::Error(_))), "{text}: {tokens:?}");
    tokens
}

fn error_number(tokens: &[Token]) -> Option<i32> {
    tokens.iter().find_map(|t| match t {
        Token::Error(m) => Some(m.number),
        _ => None,
    })
}

fn text(v: &TdsValue) -> String {
    match v {
        TdsValue::NVarChar(s) => s.clone(),
        other => panic!("not a string: {other:?}"),
    }
}

/// SIGTERM, and the exit status.
fn terminate(mut server: Server) -> std::process::ExitStatus {
    let pid = server.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    server.child.wait().unwrap()
}

fn start(data: &Path) -> Server {
    Server::spawn(serve_command(data), None)
}

#[test]
fn a_database_that_cannot_open_is_recovery_pending_and_the_rest_serves() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let server = start(&data);
    let mut c = Client::connect(server.port);
    for db in ["good", "bad"] {
        ok(&mut c, &format!("CREATE DATABASE {db}"));
        ok(&mut c, &format!("USE {db}; CREATE TABLE t (k INT PRIMARY KEY); INSERT t VALUES (1)"));
    }
    drop(c);
    assert!(terminate(server).success());

    let log = data.join("bad_log.ldf");
    let aside = data.join("bad_log.ldf.aside");
    std::fs::rename(&log, &aside).unwrap();
    let server = start(&data);
    // The reason is in the log, with a timestamp, at start.
    let line = server
        .startup()
        .into_iter()
        .find(|l| l.contains("database bad is RECOVERY_PENDING"))
        .unwrap_or_else(|| panic!("{:?}", server.log()));
    assert!(line.starts_with("20") && line.contains(" ERROR ") && line.contains("bad_log.ldf"));
    assert!(server.startup().iter().any(|l| l.contains("database good is ONLINE")));

    let mut c = Client::connect(server.port);
    let state = c.scalar("SELECT state_desc FROM sys.databases WHERE name = 'bad'");
    assert_eq!(text(&state), "RECOVERY_PENDING");
    let state = c.scalar("SELECT state_desc FROM sys.databases WHERE name = 'good'");
    assert_eq!(text(&state), "ONLINE");
    ok(&mut c, "USE good; INSERT t VALUES (2)");
    assert_eq!(error_number(&c.batch("USE bad")), Some(945));
    assert_eq!(error_number(&c.batch("ALTER DATABASE bad SET ONLINE")), Some(945));

    std::fs::rename(&aside, &log).unwrap();
    ok(&mut c, "ALTER DATABASE bad SET ONLINE");
    let state = c.scalar("SELECT state_desc FROM sys.databases WHERE name = 'bad'");
    assert_eq!(text(&state), "ONLINE");
    assert!(server.logged("database bad is ONLINE"));
    let n = c.scalar("SELECT COUNT(*) FROM bad.dbo.t");
    assert_eq!(n, TdsValue::Int(1));
    drop(c);
    assert!(terminate(server).success());

    // Pending at shutdown: still a clean shutdown, exit 0.
    std::fs::rename(&log, &aside).unwrap();
    let server = start(&data);
    let mut c = Client::connect(server.port);
    ok(&mut c, "SELECT 1");
    drop(c);
    let status = terminate(server);
    assert!(status.success(), "{status:?}");
}
