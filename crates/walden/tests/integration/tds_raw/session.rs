//! The connection and its session: the connection limit, an error that ends the connection,
//! a pool's reset, transaction-manager requests, and the log flushes of one request's commits.

use walden_tds::*;

use super::{errors, stream};
use crate::common;
use crate::common::client::{error_numbers, int, rows, text, Client};
use crate::common::server::Server;
use crate::common::PASSWORD;

#[test]
fn connections_over_the_limit_are_refused() {
    let server = Server::start(&["--max-connections", "1"]);
    let (_first, tokens) = Client::login(server.port, PASSWORD);
    assert!(tokens.iter().any(|t| matches!(t, Token::LoginAck(_))));
    let (_second, tokens) = Client::login(server.port, PASSWORD);
    assert!(tokens.iter().any(|t| matches!(t, Token::Error(m) if m.number == 17809)), "{tokens:?}");
}

#[test]
fn raiserror_of_severity_20_with_log_ends_the_connection_and_rolls_back() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    c.batch("CREATE TABLE dbo.fatal (id int PRIMARY KEY)");
    let refused = c.batch("RAISERROR('no log', 19, 1); SELECT 1");
    assert!(
        refused.iter().any(|t| matches!(t, Token::Error(m) if m.number == 2754 && m.class == 16)),
        "{refused:?}"
    );
    assert!(refused.iter().any(|t| matches!(t, Token::Row(_))), "the batch goes on: {refused:?}");

    let tokens = c.batch(
        "BEGIN TRAN; INSERT INTO dbo.fatal VALUES (1);
         BEGIN TRY RAISERROR('fatal %d', 20, 1, 7) WITH LOG END TRY
         BEGIN CATCH PRINT 'caught' END CATCH
         SELECT 'not reached'",
    );
    let numbers: Vec<(i32, u8)> = tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) => Some((m.number, m.class)),
            _ => None,
        })
        .collect();
    assert_eq!(numbers, vec![(2745, 16), (50000, 20)], "{tokens:?}");
    assert!(!tokens.iter().any(|t| matches!(t, Token::Info(_) | Token::Row(_))), "{tokens:?}");
    // The batch's last DONE says the error was severe: DONE_ERROR and DONE_SRVERROR.
    assert!(
        matches!(tokens.last(), Some(Token::Done(d))
            if d.status.contains(DoneStatus::ERROR | DoneStatus::SRVERROR)
                && !d.status.contains(DoneStatus::MORE)),
        "{tokens:?}"
    );
    assert!(c.try_batch("SELECT 1").is_err(), "the server closed the connection");

    let mut fresh = Client::connect(server.port);
    assert_eq!(fresh.scalar("SELECT COUNT(*) FROM dbo.fatal"), TdsValue::Int(0));
}

fn begun(tokens: &[Token]) -> Option<u64> {
    tokens.iter().find_map(|t| match t {
        Token::EnvChange(EnvChange::BeginTransaction { descriptor }) => Some(*descriptor),
        _ => None,
    })
}

fn rolled_back(tokens: &[Token]) -> Option<u64> {
    tokens.iter().find_map(|t| match t {
        Token::EnvChange(EnvChange::RollbackTransaction { descriptor }) => Some(*descriptor),
        _ => None,
    })
}

/// What a reset must undo, then the state it leaves: (@@TRANCOUNT, whether #t exists,
/// NOCOUNT, the database).
const RESET_STATE: &str = "SELECT @@TRANCOUNT, CASE WHEN OBJECT_ID('tempdb..#t') IS NULL THEN 0 \
     ELSE 1 END, @@OPTIONS & 512, DB_NAME()";

/// A pool's reset, as an `sp_reset_connection` RPC (pytds) and as the RESETCONNECTION and
/// RESETCONNECTIONSKIPTRAN bits: the session back to its login state, the transaction it rolls
/// back announced with the rollback ENVCHANGE (type 10), the database change with its own.
#[test]
fn a_reset_returns_the_session_to_its_login_state() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let tokens = c.batch("CREATE DATABASE reset_db");
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    let dirty = "USE reset_db; SET NOCOUNT ON; CREATE TABLE #t (i int); BEGIN TRAN";
    let login_state = vec![
        TdsValue::Int(0),
        TdsValue::Int(0),
        TdsValue::Int(0),
        TdsValue::NVarChar("master".into()),
    ];

    let descriptor = begun(&c.batch(dirty));
    assert!(descriptor.is_some());
    let tokens =
        c.rpc_with(PacketStatus::NONE, RpcProc::Name("sp_reset_connection".into()), Vec::new());
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    assert_eq!(rolled_back(&tokens), descriptor, "{tokens:?}");
    assert!(
        tokens.contains(&Token::EnvChange(EnvChange::Database {
            new: "master".into(),
            old: "reset_db".into()
        })),
        "{tokens:?}"
    );
    assert_eq!(stream(&tokens)[tokens.len() - 2..], ["RETURNSTATUS", "DONEPROC( 0x0 0)"]);
    assert_eq!(rows(&c.batch(RESET_STATE)), std::slice::from_ref(&login_state));
    // Without a transaction to end, no rollback ENVCHANGE; arguments are refused.
    let tokens =
        c.rpc_with(PacketStatus::NONE, RpcProc::Name("sys.sp_reset_connection".into()), Vec::new());
    assert_eq!(rolled_back(&tokens), None, "{tokens:?}");
    let tokens =
        c.rpc_with(PacketStatus::NONE, RpcProc::Name("sp_reset_connection".into()), vec![int(1)]);
    assert_eq!(error_numbers(&tokens), [8144], "{tokens:?}");

    // The RESETCONNECTION bit on the next request.
    let descriptor = begun(&c.batch(dirty));
    c.send_with(
        PacketType::SqlBatch,
        PacketStatus::RESET_CONNECTION,
        &common::client::sql_batch(RESET_STATE),
    );
    let tokens = c.tokens();
    assert_eq!(rolled_back(&tokens), descriptor, "{tokens:?}");
    assert!(tokens.contains(&Token::EnvChange(EnvChange::ResetConnectionAck)), "{tokens:?}");
    assert_eq!(rows(&tokens), [login_state]);

    // RESETCONNECTIONSKIPTRAN keeps the transaction (and its temporary table) open.
    let descriptor = begun(&c.batch(dirty));
    c.send_with(
        PacketType::SqlBatch,
        PacketStatus::RESET_CONNECTION_SKIP_TRAN,
        &common::client::sql_batch(RESET_STATE),
    );
    let tokens = c.tokens();
    assert_eq!(rolled_back(&tokens), None, "{tokens:?}");
    assert_eq!(
        rows(&tokens),
        [vec![
            TdsValue::Int(1),
            TdsValue::Int(1),
            TdsValue::Int(0),
            TdsValue::NVarChar("master".into())
        ]]
    );
    let tokens = c.batch("ROLLBACK");
    assert_eq!(rolled_back(&tokens), descriptor, "{tokens:?}");
}

/// TM_BEGIN_XACT's isolation level applies to the session, as SET TRANSACTION ISOLATION LEVEL
/// does; 0 keeps the session's. (Walden runs REPEATABLE READ as SERIALIZABLE, but
/// `sys.dm_exec_sessions` reports the level the session asked for, 3: docs/COMPAT.md.)
#[test]
fn transaction_manager_begin_applies_its_isolation_level() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let level = "SELECT transaction_isolation_level FROM sys.dm_exec_sessions \
                 WHERE session_id = @@SPID";
    let mut descriptor = 0;
    for (isolation, expected) in [
        (IsolationLevel::Serializable, 4),
        (IsolationLevel::NoChange, 4),
        (IsolationLevel::ReadCommitted, 2),
        (IsolationLevel::RepeatableRead, 3),
        (IsolationLevel::ReadUncommitted, 1),
    ] {
        let begin = TransMgrRequest {
            headers: AllHeaders::with_transaction(0),
            kind: TransMgrKind::Begin(NewTransaction { isolation, name: String::new() }),
        };
        c.send(PacketType::TransMgr, &begin.encode().unwrap());
        let tokens = c.tokens();
        assert!(errors(&tokens).is_empty(), "{tokens:?}");
        // As SQL Server answers a BEGIN: its ENVCHANGE and one DONE, the SET not shown.
        assert_eq!(stream(&tokens), ["other", "DONE( 0x0 0)"], "{tokens:?}");
        descriptor = begun(&tokens).unwrap();
        assert_eq!(rows(&c.batch(level)), [vec![TdsValue::SmallInt(expected)]], "{isolation:?}");
        let commit = TransMgrRequest {
            headers: AllHeaders::with_transaction(descriptor),
            kind: TransMgrKind::Commit { name: String::new(), then_begin: None },
        };
        c.send(PacketType::TransMgr, &commit.encode().unwrap());
        assert!(errors(&c.tokens()).is_empty());
    }
    // COMMIT with fBeginXact begins the next transaction at the level it carries.
    let begin = TransMgrRequest {
        headers: AllHeaders::with_transaction(0),
        kind: TransMgrKind::Begin(NewTransaction {
            isolation: IsolationLevel::NoChange,
            name: String::new(),
        }),
    };
    c.send(PacketType::TransMgr, &begin.encode().unwrap());
    descriptor = begun(&c.tokens()).unwrap_or(descriptor);
    let commit = TransMgrRequest {
        headers: AllHeaders::with_transaction(descriptor),
        kind: TransMgrKind::Commit {
            name: String::new(),
            then_begin: Some(NewTransaction {
                isolation: IsolationLevel::Serializable,
                name: String::new(),
            }),
        },
    };
    c.send(PacketType::TransMgr, &commit.encode().unwrap());
    let tokens = c.tokens();
    assert!(begun(&tokens).is_some(), "{tokens:?}");
    assert_eq!(rows(&c.batch(level)), [vec![TdsValue::SmallInt(4)]]);
    assert_eq!(rows(&c.batch("SELECT @@TRANCOUNT")), [vec![TdsValue::Int(1)]]);
    // TM_PROMOTE_XACT (a distributed transaction) is refused; the transaction goes on.
    let promote = TransMgrRequest {
        headers: AllHeaders::with_transaction(0),
        kind: TransMgrKind::Unsupported { request_type: 6, payload: Vec::new() },
    };
    c.send(PacketType::TransMgr, &promote.encode().unwrap());
    assert_eq!(stream(&c.tokens()), ["ERROR 4002", "DONE(ERROR 0x0 0)"]);
    assert_eq!(rows(&c.batch("SELECT @@TRANCOUNT")), [vec![TdsValue::Int(1)]]);
}

/// The database's `Log Flushes/sec` counter (a running count, as SQL Server's).
fn log_flushes(c: &mut Client, database: &str) -> i64 {
    let value = c.scalar(&format!(
        "SELECT cntr_value FROM sys.dm_os_performance_counters \
         WHERE counter_name = 'Log Flushes/sec' AND instance_name = '{database}'"
    ));
    match value {
        TdsValue::BigInt(n) => n,
        other => panic!("cntr_value {other:?}"),
    }
}

/// mssql-jdbc's `executeBatch` with autocommit sends many calls in one request, each its own
/// transaction, as SQL Server runs them. Their commits share the log's flushes, the
/// response (which reports them) leaving only once they are hardened; a call per request
/// flushes once per commit.
#[test]
fn the_autocommit_calls_of_one_request_share_log_flushes() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    assert!(error_numbers(&c.batch("CREATE DATABASE d")).is_empty());
    assert!(error_numbers(&c.batch("USE d; CREATE TABLE t (k INT PRIMARY KEY)")).is_empty());
    let insert = |k: i32| RpcCall {
        proc: RpcProc::Id(ProcId::ExecuteSql),
        options: RpcOptions::NONE,
        params: vec![
            text("INSERT INTO d.dbo.t VALUES (@k)"),
            text("@k int"),
            RpcParam::input("@k", TdsValue::Int(k)),
        ],
    };

    let before = log_flushes(&mut c, "d");
    let request = RpcRequest {
        headers: AllHeaders::with_transaction(0),
        calls: (0..200).map(insert).collect(),
    };
    c.send(PacketType::Rpc, &request.encode().unwrap());
    let tokens = c.tokens();
    assert!(error_numbers(&tokens).is_empty(), "{tokens:?}");
    let procs = tokens.iter().filter(|t| matches!(t, Token::DoneProc(_))).count();
    assert_eq!(procs, 200);
    let shared = log_flushes(&mut c, "d") - before;
    assert!((1..=3).contains(&shared), "200 commits in one request took {shared} flushes");

    let before = log_flushes(&mut c, "d");
    for k in 200..220 {
        let request =
            RpcRequest { headers: AllHeaders::with_transaction(0), calls: vec![insert(k)] };
        c.send(PacketType::Rpc, &request.encode().unwrap());
        assert!(error_numbers(&c.tokens()).is_empty());
    }
    assert_eq!(log_flushes(&mut c, "d") - before, 20, "a request of one call flushes per commit");
    assert_eq!(c.scalar("SELECT COUNT(*) FROM t"), TdsValue::Int(220));

    // Once the response is in, the commits are hardened and their locks given back: another
    // connection reads every row without waiting. So too when the request also resets the
    // connection (a pool's first request after handing it out, back in master).
    let (mut other, _) = Client::login(server.port, PASSWORD);
    assert!(error_numbers(&other.batch("USE d; SET LOCK_TIMEOUT 0")).is_empty());
    for (status, keys) in
        [(PacketStatus::NONE, 300..310), (PacketStatus::RESET_CONNECTION, 310..320)]
    {
        let request = RpcRequest {
            headers: AllHeaders::with_transaction(0),
            calls: keys.map(insert).collect(),
        };
        c.send_with(PacketType::Rpc, status, &request.encode().unwrap());
        assert!(error_numbers(&c.tokens()).is_empty());
        let count = other.batch("SELECT COUNT(*) FROM t WHERE k >= 300");
        assert!(error_numbers(&count).is_empty(), "the rows are still locked: {count:?}");
    }
    assert_eq!(other.scalar("SELECT COUNT(*) FROM t WHERE k >= 300"), TdsValue::Int(20));
}
