//! How a statement, a procedure and an abandoned message end: the DONE family of tokens.

use std::io::Write;

use walden_tds::*;

use super::{errors, stream};
use crate::common::client::{rows, text, Client};
use crate::common::server::Server;
use crate::common::PASSWORD;

/// [MS-TDS] 2.2.7.6: a DONE for each statement of a batch but variable declarations, all but
/// the last with DONE_MORE, DONE_COUNT only when the count is to be shown. go-sqlcmd and
/// go-mssqldb's message queue tell result sets and messages apart by these DONEs.
#[test]
fn every_statement_ends_with_its_done() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let got = stream(&c.batch("SET NOCOUNT ON; SELECT 1 a, 2 b; SELECT 'x' y"));
    assert_eq!(
        got,
        [
            "DONE(MORE 0x0 0)",
            "COLMETADATA",
            "ROW",
            "DONE(MORE 0xc1 0)",
            "COLMETADATA",
            "ROW",
            "DONE( 0xc1 0)",
        ]
    );
    let got = stream(&c.batch("SET NOCOUNT OFF; SELECT 1 a UNION ALL SELECT 2; PRINT 'p'"));
    assert_eq!(
        got,
        [
            "DONE(MORE 0x0 0)",
            "COLMETADATA",
            "ROW",
            "ROW",
            "DONE(MORE|COUNT 0xc1 2)",
            "INFO",
            "DONE( 0x0 0)"
        ]
    );
    // An assignment SELECT counts its rows as any SELECT does (python-tds' own suite reads
    // that DONE as a result without columns); under NOCOUNT it still ends as a SELECT.
    let got = stream(&c.batch("DECLARE @v int; SELECT @v = 5; PRINT @v; PRINT 'again'"));
    assert_eq!(
        got,
        ["DONE(MORE|COUNT 0xc1 1)", "INFO", "DONE(MORE 0x0 0)", "INFO", "DONE( 0x0 0)"]
    );
    let got = stream(&c.batch(
        "DECLARE @v int; SELECT @v = i FROM (VALUES (1), (2)) t(i) WHERE i > 5; \
         SET NOCOUNT ON; SELECT @v = 1; SET NOCOUNT OFF",
    ));
    assert_eq!(
        got,
        ["DONE(MORE|COUNT 0xc1 0)", "DONE(MORE 0x0 0)", "DONE(MORE 0xc1 0)", "DONE( 0x0 0)"]
    );
    let got = stream(&c.batch(
        "DECLARE c CURSOR FOR SELECT 1 AS x; OPEN c; FETCH NEXT FROM c; CLOSE c; DEALLOCATE c",
    ));
    assert_eq!(
        got,
        [
            "DONE(MORE 0x0 0)",
            "DONE(MORE 0x0 0)",
            "COLMETADATA",
            "ROW",
            "DONE(MORE|COUNT 0xc1 1)",
            "DONE(MORE 0x0 0)",
            "DONE( 0x0 0)",
        ]
    );
    // Each evaluation of a WHILE or IF condition ends with a DONE, as each statement the loop
    // runs does; BREAK sends none. Here: WHILE, SET, IF (false), WHILE, SET, IF (true).
    let got = stream(&c.batch(
        "DECLARE @i int = 0; WHILE @i < 5 BEGIN SET @i += 1; IF @i = 2 BREAK END; PRINT 'x'",
    ));
    let mut expected = vec!["DONE(MORE 0x0 0)"; 6];
    expected.extend(["INFO", "DONE( 0x0 0)"]);
    assert_eq!(got, expected);
    // go-mssqldb's TestSprocWithCursorNoResult: a procedure's cursor loop ends each statement
    // and each evaluation of its WHILE with a DONEINPROC, 12 of them, then its DONEPROC.
    c.batch(
        "CREATE PROCEDURE loop_over_cursor AS BEGIN DECLARE @x int; \
             DECLARE k CURSOR FOR SELECT 1 UNION SELECT 2; OPEN k; FETCH NEXT FROM k INTO @x; \
             WHILE @@FETCH_STATUS = 0 BEGIN PRINT @x; FETCH NEXT FROM k INTO @x; END; \
             CLOSE k; DEALLOCATE k; END",
    );
    let got = stream(&c.batch("EXEC loop_over_cursor"));
    let in_proc = got.iter().filter(|t| t.starts_with("DONEINPROC")).count();
    assert_eq!(in_proc, 12, "{got:?}");
    assert_eq!(got.iter().filter(|t| *t == "INFO").count(), 2, "{got:?}");
    // A failed statement ends with DONE_ERROR; the batch goes on.
    let got = stream(&c.batch("SELECT 1/0; SELECT 2"));
    assert_eq!(
        got,
        ["ERROR 8134", "DONE(MORE|ERROR 0x0 0)", "COLMETADATA", "ROW", "DONE(COUNT 0xc1 1)"]
    );
    // Under NOCOUNT, an INSERT still ends with its DONE, without DONE_COUNT.
    let got = stream(&c.batch(
        "CREATE TABLE t (i int); SET NOCOUNT ON; INSERT t VALUES (1); SET NOCOUNT OFF; \
         INSERT t VALUES (2)",
    ));
    assert_eq!(
        got,
        [
            "DONE(MORE 0x0 0)",
            "DONE(MORE 0x0 0)",
            "DONE(MORE 0xc3 0)",
            "DONE(MORE 0x0 0)",
            "DONE(COUNT 0xc3 1)",
        ]
    );
    // Inside an RPC, every result set ends with a DONEINPROC, NOCOUNT or not.
    let request = RpcRequest {
        headers: AllHeaders::with_transaction(0),
        calls: vec![RpcCall {
            proc: RpcProc::Id(ProcId::ExecuteSql),
            options: RpcOptions::NONE,
            params: vec![text("SET NOCOUNT ON; SELECT 1 a; SELECT 2 b")],
        }],
    };
    c.send(PacketType::Rpc, &request.encode().unwrap());
    let got = stream(&c.tokens());
    assert_eq!(
        got,
        [
            "COLMETADATA",
            "ROW",
            "DONEINPROC(MORE 0xc1 0)",
            "COLMETADATA",
            "ROW",
            "DONEINPROC(MORE 0xc1 0)",
            "RETURNSTATUS",
            "DONEPROC( 0x0 0)",
        ]
    );
}

/// [MS-TDS] 2.2.7.7: a procedure a batch's EXEC runs ends like an RPC's, its statements with
/// DONEINPROC, then RETURNSTATUS and DONEPROC.
#[test]
fn a_batch_exec_ends_with_return_status_and_doneproc() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    for create in [
        "CREATE PROCEDURE three AS BEGIN SELECT 1 AS a; RETURN 3 END",
        "CREATE PROCEDURE outer_p AS BEGIN EXEC three; PRINT 'x' END",
    ] {
        let tokens = c.batch(create);
        assert!(errors(&tokens).is_empty(), "{tokens:?}");
    }
    let tokens = c.batch("EXEC three");
    assert!(tokens.contains(&Token::ReturnStatus(3)), "{tokens:?}");
    assert_eq!(
        stream(&tokens),
        ["COLMETADATA", "ROW", "DONEINPROC(MORE|COUNT 0xc1 1)", "RETURNSTATUS", "DONEPROC( 0x0 0)"]
    );
    assert_eq!(
        stream(&c.batch("EXEC three; SELECT 2 AS b")),
        [
            "COLMETADATA",
            "ROW",
            "DONEINPROC(MORE|COUNT 0xc1 1)",
            "RETURNSTATUS",
            "DONEPROC(MORE 0x0 0)",
            "COLMETADATA",
            "ROW",
            "DONE(COUNT 0xc1 1)",
        ]
    );
    // A nested call is part of the outer procedure: one RETURNSTATUS, the outer one's.
    let tokens = c.batch("EXEC outer_p");
    assert!(tokens.contains(&Token::ReturnStatus(0)), "{tokens:?}");
    assert_eq!(
        stream(&tokens),
        [
            "COLMETADATA",
            "ROW",
            "DONEINPROC(MORE|COUNT 0xc1 1)",
            "INFO",
            "DONEINPROC(MORE 0x0 0)",
            "RETURNSTATUS",
            "DONEPROC( 0x0 0)",
        ]
    );
    // A procedure that does not exist: the error and the batch's DONE.
    assert_eq!(stream(&c.batch("EXEC nosuch")), ["ERROR 2812", "DONE(ERROR 0x0 0)"]);
}

/// A message the client abandons with IGNORE (tedious' cancel of a request it is still
/// sending) runs nothing and is answered as an attention, with DONE_ATTN, so that the client
/// does not wait forever; the connection goes on.
#[test]
fn an_ignored_message_is_answered_with_done_attn() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let batch = SqlBatch {
        headers: AllHeaders::with_transaction(0),
        text: "CREATE TABLE ignored (i int)".into(),
    }
    .encode()
    .unwrap();
    // Half the batch in a first packet, the rest in a last one with EOM and IGNORE.
    let (first, last) = batch.split_at(batch.len() / 2);
    let ignore = PacketStatus(PacketStatus::EOM.0 | PacketStatus::IGNORE.0);
    for (id, (part, status)) in
        [(first, PacketStatus::NONE), (last, ignore)].into_iter().enumerate()
    {
        let header = packet::PacketHeader {
            ty: PacketType::SqlBatch,
            status,
            length: u16::try_from(part.len() + packet::HEADER_LEN).unwrap(),
            spid: 0,
            packet_id: u8::try_from(id + 1).unwrap(),
            window: 0,
        };
        c.stream.write_all(&header.encode()).unwrap();
        c.stream.write_all(part).unwrap();
    }
    let got = stream(&c.tokens());
    assert_eq!(got, ["DONE(ATTN 0x0 0)"]);
    // Nothing ran, and the connection serves the next request.
    let tokens = c.batch("SELECT OBJECT_ID('ignored')");
    assert_eq!(rows(&tokens), [vec![TdsValue::Null]], "{tokens:?}");
}
