#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! Attention (cancel) against `walden serve`, driven with the codec over a raw socket as a
//! driver's query timeout does it: the request is sent, then an Attention packet while it
//! runs; the server must stop the request, end its response normally (EOM), acknowledge
//! with DONE_ATTN, and keep the connection usable.

use std::io::Read;
use std::time::{Duration, Instant};

use walden_tds::*;

use crate::common;

use common::client::Client;
use common::server::Server;

/// How long a cancelled request may take to be acknowledged.
const ACK_WITHIN: Duration = Duration::from_secs(3);

// Cancelling, on the shared raw client.
impl Client {
    fn attention(&mut self) {
        self.send(PacketType::Attention, &[]);
    }

    /// Sends `text`, an attention `after` later, and reads until the acknowledgement;
    /// returns the responses (each a well-formed message) and how long the cancel took.
    fn cancel(&mut self, text: &str, after: Duration) -> (Vec<Vec<Token>>, Duration) {
        self.send_batch(text);
        std::thread::sleep(after);
        let sent = Instant::now();
        self.attention();
        let mut responses = Vec::new();
        loop {
            let tokens = self.tokens();
            let acknowledged = tokens.iter().any(|t| is_done_with(t, DoneStatus::ATTN));
            responses.push(tokens);
            if acknowledged {
                return (responses, sent.elapsed());
            }
            assert!(responses.len() < 3, "no attention acknowledgement: {responses:?}");
        }
    }
}

fn is_done_with(token: &Token, status: DoneStatus) -> bool {
    matches!(token, Token::Done(d) if d.status.contains(status))
}

fn errors(tokens: &[Token]) -> Vec<&ServerMessage> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) => Some(m),
            _ => None,
        })
        .collect()
}

/// The responses to a cancelled request: the request's own response, ended by a final DONE
/// (no DONE_MORE) in a message of its own, then the acknowledgement alone.
fn assert_cancelled(responses: &[Vec<Token>], took: Duration) {
    assert!(took < ACK_WITHIN, "the cancel took {took:?}");
    assert_eq!(responses.len(), 2, "{responses:?}");
    let (response, ack) = (&responses[0], &responses[1]);
    assert!(errors(response).is_empty(), "{response:?}");
    match response.last() {
        Some(Token::Done(d)) => {
            assert!(!d.status.contains(DoneStatus::MORE) && !d.status.contains(DoneStatus::ATTN))
        }
        other => panic!("the cancelled response ends with {other:?}"),
    }
    assert!(
        matches!(ack.as_slice(), [Token::Done(d)] if d.status.contains(DoneStatus::ATTN)),
        "{ack:?}"
    );
}

#[test]
fn an_attention_cancels_waitfor_and_the_connection_goes_on() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let (responses, took) = c.cancel("WAITFOR DELAY '00:00:30'", Duration::from_millis(200));
    assert_cancelled(&responses, took);
    assert_eq!(c.scalar("SELECT 1"), TdsValue::Int(1));

    // Statements before the cancel ran and reported; the rest of the batch did not run.
    let (responses, took) = c.cancel(
        "SELECT 7 AS before_wait WAITFOR DELAY '00:00:30' SELECT 8 AS after_wait",
        Duration::from_millis(200),
    );
    assert_cancelled(&responses, took);
    let rows: Vec<&Token> = responses[0].iter().filter(|t| matches!(t, Token::Row(_))).collect();
    assert_eq!(rows, [&Token::Row(vec![TdsValue::Int(7)])], "{responses:?}");
    assert_eq!(c.scalar("SELECT 2"), TdsValue::Int(2));
}

#[test]
fn an_attention_cancels_an_endless_while_loop() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let (responses, took) = c.cancel(
        "SET NOCOUNT ON DECLARE @i BIGINT = 0 WHILE 1 = 1 SET @i += 1",
        Duration::from_millis(300),
    );
    assert_cancelled(&responses, took);
    assert_eq!(c.scalar("SELECT 3"), TdsValue::Int(3));
}

#[test]
fn an_attention_ends_a_statement_waiting_for_a_lock() {
    let server = Server::start(&[]);
    let mut holder = Client::connect(server.port);
    let held = holder.batch(
        "CREATE TABLE dbo.t (id INT PRIMARY KEY, v INT) INSERT dbo.t VALUES (1, 0) \
         BEGIN TRAN UPDATE dbo.t SET v = 1 WHERE id = 1",
    );
    assert!(errors(&held).is_empty(), "{held:?}");

    // With no lock timeout the SELECT would wait as long as the holder's transaction lasts:
    // a driver's query timeout is what ends it.
    let mut c = Client::connect(server.port);
    let (responses, took) =
        c.cancel("SELECT v FROM dbo.t WHERE id = 1", Duration::from_millis(300));
    assert_cancelled(&responses, took);
    assert_eq!(c.scalar("SELECT @@TRANCOUNT"), TdsValue::Int(0));

    let done = holder.batch("COMMIT");
    assert!(errors(&done).is_empty(), "{done:?}");
    assert_eq!(c.scalar("SELECT v FROM dbo.t WHERE id = 1"), TdsValue::Int(1));
}

#[test]
fn an_attention_ends_a_long_join() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let made = c.batch(
        "SET NOCOUNT ON CREATE TABLE dbo.n (i INT PRIMARY KEY) DECLARE @i INT = 0 \
         WHILE @i < 300 BEGIN INSERT dbo.n VALUES (@i) SET @i += 1 END",
    );
    assert!(errors(&made).is_empty(), "{made:?}");
    // 300^3 = 27 million joined rows, each tested against the ON clause: minutes of work.
    let (responses, took) = c.cancel(
        "SELECT COUNT(*) FROM dbo.n a JOIN dbo.n b ON a.i <> b.i JOIN dbo.n c ON b.i <> c.i",
        Duration::from_millis(300),
    );
    assert_cancelled(&responses, took);
    assert_eq!(c.scalar("SELECT COUNT(*) FROM dbo.n"), TdsValue::Int(300));
}

#[test]
fn a_cancelled_batch_keeps_the_transaction_open_unless_xact_abort() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let created = c.batch("CREATE TABLE dbo.t (id INT PRIMARY KEY)");
    assert!(errors(&created).is_empty(), "{created:?}");

    let (responses, took) = c.cancel(
        "BEGIN TRAN INSERT INTO dbo.t VALUES (1) WAITFOR DELAY '00:00:30'",
        Duration::from_millis(200),
    );
    assert_cancelled(&responses, took);
    // The transaction began in the cancelled batch, so its response announced it.
    assert!(
        responses[0]
            .iter()
            .any(|t| matches!(t, Token::EnvChange(EnvChange::BeginTransaction { .. }))),
        "{responses:?}"
    );
    assert_eq!(c.scalar("SELECT @@TRANCOUNT"), TdsValue::Int(1));
    assert_eq!(c.scalar("SELECT COUNT(*) FROM dbo.t"), TdsValue::Int(1));

    // Under XACT_ABORT an attention rolls the transaction back, and the response says so.
    let (responses, took) = c.cancel(
        "SET XACT_ABORT ON INSERT INTO dbo.t VALUES (2) WAITFOR DELAY '00:00:30'",
        Duration::from_millis(200),
    );
    assert_cancelled(&responses, took);
    assert!(
        responses[0]
            .iter()
            .any(|t| matches!(t, Token::EnvChange(EnvChange::RollbackTransaction { .. }))),
        "{responses:?}"
    );
    assert_eq!(c.scalar("SELECT @@TRANCOUNT"), TdsValue::Int(0));
    assert_eq!(c.scalar("SELECT COUNT(*) FROM dbo.t"), TdsValue::Int(0));
}

#[test]
fn an_attention_after_the_response_is_still_acknowledged() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    assert_eq!(c.scalar("SELECT 4"), TdsValue::Int(4));
    c.attention();
    let ack = c.tokens();
    assert!(
        matches!(ack.as_slice(), [Token::Done(d)] if d.status.contains(DoneStatus::ATTN)),
        "{ack:?}"
    );
    // Many short requests in a row: none is taken for cancelled by the attention probe.
    for i in 0..200 {
        assert_eq!(c.scalar(&format!("SELECT {i}")), TdsValue::Int(i));
    }
}

#[test]
fn raiserror_with_nowait_reaches_the_client_while_the_batch_runs() {
    let server = Server::start(&[]);
    let mut client = Client::connect(server.port);
    client.send_batch(
        "RAISERROR('step 1', 0, 1) WITH NOWAIT; WAITFOR DELAY '00:00:02'; PRINT 'done'",
    );
    // The first packet holds the message and arrives long before the batch ends; it does not
    // end the response.
    let sent = Instant::now();
    let mut header = [0u8; 8];
    client.stream.read_exact(&mut header).unwrap();
    let took = sent.elapsed();
    let length = usize::from(u16::from_be_bytes([header[2], header[3]]));
    let mut payload = vec![0u8; length - 8];
    client.stream.read_exact(&mut payload).unwrap();
    assert!(took < Duration::from_millis(1500), "the NOWAIT message took {took:?}");
    assert_eq!(header[1] & 1, 0, "the early packet must not carry EOM");
    let early = decode_tokens(&payload).unwrap();
    assert!(
        early.iter().any(|t| matches!(t, Token::Info(m) if m.message == "step 1")),
        "{early:?}"
    );
    // The rest of the response follows as usual, and the connection goes on.
    client.reader.push(&header);
    client.reader.push(&payload);
    let tokens = client.tokens();
    assert!(sent.elapsed() >= Duration::from_secs(2), "{tokens:?}");
    assert_eq!(client.scalar("SELECT 7"), TdsValue::Int(7));
}

#[test]
fn kill_ends_an_idle_session_that_blocks_another_and_rolls_it_back() {
    let server = Server::start(&[]);
    let mut holder = Client::connect(server.port);
    let held = holder.batch(
        "CREATE TABLE dbo.k (id INT PRIMARY KEY, v INT) INSERT dbo.k VALUES (1, 0) \
         BEGIN TRAN UPDATE dbo.k SET v = 1 WHERE id = 1",
    );
    assert!(errors(&held).is_empty(), "{held:?}");
    let TdsValue::SmallInt(holder_spid) = holder.scalar("SELECT @@SPID") else { panic!("@@SPID") };

    // The waiter queues behind the holder's row lock; the holder's client sits idle.
    let mut waiter = Client::connect(server.port);
    waiter.send_batch("SELECT v FROM dbo.k WHERE id = 1");
    std::thread::sleep(Duration::from_millis(200));

    let mut dba = Client::connect(server.port);
    let TdsValue::SmallInt(own) = dba.scalar("SELECT @@SPID") else { panic!("@@SPID") };
    let killed = dba.batch(&format!("KILL {holder_spid}"));
    assert!(errors(&killed).is_empty(), "{killed:?}");

    // The holder's transaction is rolled back: the waiter reads the value from before it.
    let tokens = waiter.tokens();
    assert!(tokens.contains(&Token::Row(vec![TdsValue::Int(0)])), "{tokens:?}");
    // Its session is gone.
    let gone = Instant::now();
    loop {
        let left = dba.scalar(&format!(
            "SELECT COUNT(*) FROM sys.dm_exec_sessions WHERE session_id = {holder_spid}"
        ));
        if left == TdsValue::Int(0) {
            break;
        }
        assert!(gone.elapsed() < ACK_WITHIN, "session {holder_spid} is still there");
        std::thread::sleep(Duration::from_millis(20));
    }
    // One's own session and an id nobody has: SQL Server's errors; the connection goes on.
    let numbers = |tokens: &[Token]| errors(tokens).iter().map(|m| m.number).collect::<Vec<_>>();
    assert_eq!(numbers(&dba.batch(&format!("KILL {own}"))), [6104]);
    assert_eq!(numbers(&dba.batch("KILL 4242")), [6106]);
    assert_eq!(dba.scalar("SELECT 5"), TdsValue::Int(5));
}

#[test]
fn an_attention_ends_a_bulk_load_waiting_for_its_table_lock() {
    // mssql-jdbc's BatchExecutionWithBCOptionsTest: a bulk copy with TABLOCK while another
    // connection holds the table in TABLOCKX, ended by the driver's query timeout. The whole
    // Bulk Load message has been read when the load waits, so what comes next is an
    // attention.
    let server = Server::start(&[]);
    let mut holder = Client::connect(server.port);
    let held = holder.batch(
        "CREATE TABLE dbo.b (id INT PRIMARY KEY) \
         BEGIN TRAN SELECT * FROM dbo.b WITH (TABLOCKX)",
    );
    assert!(errors(&held).is_empty(), "{held:?}");
    let mut c = Client::connect(server.port);
    // The driver asks for the table's columns first: FMTONLY waits for no lock.
    let described = c.batch("SET FMTONLY ON SELECT * FROM dbo.b SET FMTONLY OFF");
    assert!(errors(&described).is_empty(), "{described:?}");
    let started = c.batch("INSERT BULK dbo.b (id INT) WITH (TABLOCK)");
    assert!(errors(&started).is_empty(), "{started:?}");
    let rows = vec![
        Token::ColMetadata(vec![Column::new("id", TypeInfo::IntN(4), true)]),
        Token::Row(vec![TdsValue::Int(1)]),
        Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 }),
    ];
    c.send(PacketType::BulkLoad, &encode_tokens(&rows).unwrap());
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    c.attention();
    let mut responses = Vec::new();
    loop {
        let tokens = c.tokens();
        let acknowledged = tokens.iter().any(|t| is_done_with(t, DoneStatus::ATTN));
        responses.push(tokens);
        if acknowledged {
            break;
        }
        assert!(responses.len() < 3, "no attention acknowledgement: {responses:?}");
    }
    assert!(sent.elapsed() < ACK_WITHIN, "acknowledged after {:?}", sent.elapsed());
    let done = holder.batch("COMMIT");
    assert!(errors(&done).is_empty(), "{done:?}");
    assert_eq!(c.scalar("SELECT COUNT(*) FROM dbo.b"), TdsValue::Int(0), "nothing loaded");
}
