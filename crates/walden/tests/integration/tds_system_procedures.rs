#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! The token streams of system procedures run from a batch, read with the codec: each
//! result set `sp_help` returns ends with its DONEINPROC, without DONE_COUNT under
//! `SET NOCOUNT ON`, as SQL Server's do (go-sqlcmd and go-mssqldb's message queue walk the
//! result sets by these tokens).

use walden_tds::*;

use crate::common;

use common::client::Client;
use common::server::Server;
use common::PASSWORD;

fn stream(tokens: &[Token]) -> Vec<String> {
    let done = |kind: &str, d: &Done| {
        let mut bits = Vec::new();
        for (bit, name) in
            [(DoneStatus::MORE, "MORE"), (DoneStatus::ERROR, "ERROR"), (DoneStatus::COUNT, "COUNT")]
        {
            if d.status.contains(bit) {
                bits.push(name);
            }
        }
        format!("{kind}({})", bits.join("|"))
    };
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::ColMetadata(_) => Some("COLMETADATA".to_string()),
            Token::Row(_) => None,
            Token::Info(_) => Some("INFO".to_string()),
            Token::Error(m) => Some(format!("ERROR {}", m.number)),
            Token::Done(d) => Some(done("DONE", d)),
            Token::DoneInProc(d) => Some(done("DONEINPROC", d)),
            Token::DoneProc(d) => Some(done("DONEPROC", d)),
            Token::ReturnStatus(_) => Some("RETURNSTATUS".to_string()),
            _ => None,
        })
        .collect()
}

/// Every result set is followed by its DONEINPROC (without DONE_COUNT) before anything else
/// starts, and the procedure ends with RETURNSTATUS and DONEPROC.
fn assert_each_set_ends_with_doneinproc(got: &[String]) {
    let sets = got.iter().filter(|t| *t == "COLMETADATA").count();
    assert!(sets >= 1, "{got:?}");
    for (i, _) in got.iter().enumerate().filter(|(_, t)| *t == "COLMETADATA") {
        assert_eq!(got.get(i + 1).map(String::as_str), Some("DONEINPROC(MORE)"), "{got:?}");
    }
    assert!(got.iter().all(|t| !t.contains("COUNT")), "{got:?}");
    assert_eq!(got[got.len() - 2..], ["RETURNSTATUS", "DONEPROC()"], "{got:?}");
}

#[test]
fn sp_help_ends_each_result_set_with_its_doneinproc() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    c.batch(
        "CREATE TABLE dbo.t (id INT PRIMARY KEY, name NVARCHAR(20) NULL); \
         CREATE TABLE dbo.heap (x INT)",
    );
    for sql in [
        "SET NOCOUNT ON; EXEC sp_help 't'",
        "SET NOCOUNT ON; EXEC sp_help",
        "SET NOCOUNT ON; EXEC sp_help 'heap'",
    ] {
        let got = stream(&c.batch(sql));
        assert_eq!(got[0], "DONE(MORE)", "{sql}: {got:?}");
        assert_each_set_ends_with_doneinproc(&got[1..]);
    }
    // A table: its description, columns, identity, RowGuidCol and so on, one set each.
    let got = stream(&c.batch("SET NOCOUNT ON; EXEC sp_help 't'"));
    assert!(got.iter().filter(|t| *t == "COLMETADATA").count() >= 3, "{got:?}");
}
