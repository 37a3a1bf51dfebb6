#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! `walden serve` driven with the codec directly, for what tiberius cannot send: an RPC to a
//! procedure by name with an OUTPUT parameter, prepared statements (sp_prepare, sp_execute,
//! sp_prepexec, sp_unprepare), transaction-manager requests, the connection limit, and
//! shutdown on SIGTERM.

use std::io::Write;
use std::process::Command;

use walden_tds::*;

mod common;

use common::client::{error_numbers, int, rows, text, Client};
use common::server::Server;
use common::PASSWORD;

fn errors(tokens: &[Token]) -> Vec<String> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) => Some(m.message.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn named_procedure_rpc_with_output_and_return_status() {
    let mut server = Server::start(&[]);
    let (mut c, login) = Client::login(server.port, PASSWORD);
    assert!(login.iter().any(|t| matches!(t, Token::LoginAck(_))), "{login:?}");
    let created = c.batch(
        "CREATE PROCEDURE add_one @x int, @y int OUTPUT AS BEGIN SET @y = @x + 1; RETURN 7 END",
    );
    assert!(errors(&created).is_empty(), "{created:?}");

    let mut y = RpcParam::input("@y", TdsValue::Null);
    y.ty = TypeInfo::IntN(4);
    y.status = ParamStatus::BY_REF;
    let request = RpcRequest {
        headers: AllHeaders::with_transaction(0),
        calls: vec![RpcCall {
            proc: RpcProc::Name("add_one".into()),
            options: RpcOptions::NONE,
            params: vec![RpcParam::input("@x", TdsValue::Int(41)), y],
        }],
    };
    c.send(PacketType::Rpc, &request.encode().unwrap());
    let tokens = c.tokens();
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    assert!(tokens.contains(&Token::ReturnStatus(7)), "{tokens:?}");
    let value = tokens.iter().find_map(|t| match t {
        Token::ReturnValue(v) => Some((v.name.clone(), v.value.clone())),
        _ => None,
    });
    assert_eq!(value, Some(("@y".to_string(), TdsValue::Int(42))));
    assert!(
        matches!(tokens.last(), Some(Token::DoneProc(d)) if !d.status.contains(DoneStatus::MORE))
    );

    // Transaction-manager requests: BEGIN and ROLLBACK with their ENVCHANGEs.
    let begin = TransMgrRequest {
        headers: AllHeaders::with_transaction(0),
        kind: TransMgrKind::Begin(NewTransaction {
            isolation: IsolationLevel::NoChange,
            name: String::new(),
        }),
    };
    c.send(PacketType::TransMgr, &begin.encode().unwrap());
    let tokens = c.tokens();
    let descriptor = tokens.iter().find_map(|t| match t {
        Token::EnvChange(EnvChange::BeginTransaction { descriptor }) => Some(*descriptor),
        _ => None,
    });
    assert!(descriptor.is_some(), "{tokens:?}");
    // Created inside the transaction: the rollback must undo it (error 208 below).
    let created = c.batch("CREATE TABLE r (id int)");
    assert!(errors(&created).is_empty(), "{created:?}");
    let rollback = TransMgrRequest {
        headers: AllHeaders::with_transaction(descriptor.unwrap()),
        kind: TransMgrKind::Rollback { name: String::new(), then_begin: None },
    };
    c.send(PacketType::TransMgr, &rollback.encode().unwrap());
    let tokens = c.tokens();
    assert!(
        tokens.contains(&Token::EnvChange(EnvChange::RollbackTransaction {
            descriptor: descriptor.unwrap()
        })),
        "{tokens:?}"
    );
    let tokens = c.batch("SELECT * FROM r");
    assert!(tokens.iter().any(|t| matches!(t, Token::Error(m) if m.number == 208)), "{tokens:?}");

    // SIGTERM: the server closes the session, the instance, and exits 0.
    let pid = server.child.id().to_string();
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success());
    assert!(server.child.wait().unwrap().success());
}

#[test]
fn connections_over_the_limit_are_refused() {
    let server = Server::start(&["--max-connections", "1"]);
    let (_first, tokens) = Client::login(server.port, PASSWORD);
    assert!(tokens.iter().any(|t| matches!(t, Token::LoginAck(_))));
    let (_second, tokens) = Client::login(server.port, PASSWORD);
    assert!(tokens.iter().any(|t| matches!(t, Token::Error(m) if m.number == 17809)), "{tokens:?}");
}

/// sp_prepare's and sp_prepexec's first parameter: `@handle INT OUTPUT`, NULL on the way in.
fn handle_out() -> RpcParam {
    let mut p = RpcParam::input("@handle", TdsValue::Null);
    p.ty = TypeInfo::IntN(4);
    p.status = ParamStatus::BY_REF;
    p
}

fn returned_handle(tokens: &[Token]) -> Option<i32> {
    tokens.iter().find_map(|t| match t {
        Token::ReturnValue(ReturnValue { value: TdsValue::Int(h), .. }) => Some(*h),
        _ => None,
    })
}

/// The tokens' kinds, rows and column metadata left out.
fn shape(tokens: &[Token]) -> Vec<&'static str> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::ColMetadata(_) => Some("COLMETADATA"),
            Token::Row(_) => None,
            Token::DoneInProc(_) => Some("DONEINPROC"),
            Token::ReturnStatus(_) => Some("RETURNSTATUS"),
            Token::ReturnValue(_) => Some("RETURNVALUE"),
            Token::DoneProc(_) => Some("DONEPROC"),
            Token::Error(_) => Some("ERROR"),
            _ => Some("other"),
        })
        .collect()
}

fn last_done_proc_failed(tokens: &[Token]) -> bool {
    matches!(tokens.last(), Some(Token::DoneProc(d)) if d.status.contains(DoneStatus::ERROR))
}

#[test]
fn prepared_statements() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let created = c.batch(
        "CREATE TABLE p (id int, name nvarchar(20), amount decimal(10, 2), at datetime2, \
         data varbinary(16))",
    );
    assert!(errors(&created).is_empty(), "{created:?}");

    // sp_prepare: the handle comes back in the OUTPUT parameter, after RETURNSTATUS, before
    // DONEPROC; nothing runs.
    let declared = "@id int, @name nvarchar(20), @amount decimal(10, 2), @at datetime2, \
                    @data varbinary(16)";
    let tokens = c.rpc(
        ProcId::Prepare,
        vec![
            handle_out(),
            text(declared),
            text("INSERT INTO p VALUES (@id, @name, @amount, @at, @data)"),
            int(1),
        ],
    );
    assert_eq!(shape(&tokens), ["RETURNSTATUS", "RETURNVALUE", "DONEPROC"], "{tokens:?}");
    assert!(tokens.contains(&Token::ReturnStatus(0)));
    let Some(Token::ReturnValue(handle)) = tokens.get(1) else { panic!("{tokens:?}") };
    assert_eq!(
        (handle.name.as_str(), handle.ty, &handle.value),
        ("@handle", TypeInfo::IntN(4), &TdsValue::Int(1))
    );
    let insert = 1;
    assert!(!last_done_proc_failed(&tokens));

    // sp_execute twice with different values of several types, NULLs in the second.
    let amount = |value| TdsValue::Decimal(Decimal { value, precision: 10, scale: 2 });
    let at =
        TdsValue::DateTime2 { date: 738_886, time: Time { increments: 123_456_789, scale: 7 } };
    let first = vec![
        TdsValue::Int(1),
        TdsValue::NVarChar("héllo".into()),
        amount(12_345),
        at.clone(),
        TdsValue::Binary(vec![0xDE, 0xAD, 0xBE, 0xEF]),
    ];
    let second = vec![TdsValue::Int(2), TdsValue::Null, amount(-5), TdsValue::Null, TdsValue::Null];
    for values in [&first, &second] {
        let mut params = vec![int(insert)];
        params.extend(values.iter().map(|v| RpcParam::input("", v.clone())));
        let tokens = c.rpc(ProcId::Execute, params);
        assert!(errors(&tokens).is_empty(), "{tokens:?}");
        let counted = tokens.iter().any(
            |t| matches!(t, Token::DoneInProc(d) if d.status.contains(DoneStatus::COUNT) && d.row_count == 1),
        );
        assert!(counted, "{tokens:?}");
        assert!(returned_handle(&tokens).is_none(), "{tokens:?}");
    }

    // sp_unprepare, then the handle is gone: 8179.
    let tokens = c.rpc(ProcId::Unprepare, vec![int(insert)]);
    assert_eq!(shape(&tokens), ["RETURNSTATUS", "DONEPROC"], "{tokens:?}");
    let mut params = vec![int(insert)];
    params.extend(first.iter().map(|v| RpcParam::input("", v.clone())));
    let tokens = c.rpc(ProcId::Execute, params);
    assert_eq!(errors(&tokens), ["Could not find prepared statement with handle 1."]);
    assert_eq!(error_numbers(&tokens), [8179]);
    assert!(last_done_proc_failed(&tokens), "{tokens:?}");
    let tokens = c.rpc(ProcId::Unprepare, vec![int(insert)]);
    assert_eq!(error_numbers(&tokens), [8179]);

    // sp_prepexec (by name, as some drivers send it): the rows, then RETURNSTATUS, then the
    // new handle, then DONEPROC.
    let tokens = c.rpc_with(
        PacketStatus::NONE,
        RpcProc::Name("sp_prepexec".into()),
        vec![
            handle_out(),
            text("@from int"),
            text("SELECT id, name, amount, at, data FROM p WHERE id >= @from ORDER BY id"),
            int(1),
        ],
    );
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    assert_eq!(
        shape(&tokens),
        ["COLMETADATA", "DONEINPROC", "RETURNSTATUS", "RETURNVALUE", "DONEPROC"],
        "{tokens:?}"
    );
    assert_eq!(rows(&tokens), [first.clone(), second.clone()]);
    let select = returned_handle(&tokens).unwrap();
    assert_eq!(select, 2, "handles count up per connection");

    // sp_execute of the sp_prepexec handle, the parameter given by name.
    let tokens =
        c.rpc(ProcId::Execute, vec![int(select), RpcParam::input("@from", TdsValue::Int(2))]);
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    assert_eq!(rows(&tokens), std::slice::from_ref(&second));

    // A missing parameter: 8178, as SQL Server words it.
    let tokens = c.rpc(ProcId::Execute, vec![int(select)]);
    assert_eq!(error_numbers(&tokens), [8178], "{tokens:?}");

    // A syntax error is reported by sp_prepare itself, with no handle; the connection goes on.
    let tokens =
        c.rpc(ProcId::Prepare, vec![handle_out(), text("@x int"), text("SELECT @x FROM WHERE")]);
    assert_eq!(error_numbers(&tokens), [156], "{tokens:?}");
    assert_eq!(errors(&tokens), ["Incorrect syntax near the keyword 'WHERE'."],);
    assert!(returned_handle(&tokens).is_none(), "{tokens:?}");
    assert!(last_done_proc_failed(&tokens), "{tokens:?}");
    let tokens = c.rpc(ProcId::Prepare, vec![handle_out(), text(""), text("SELECT 1 +")]);
    assert_eq!(errors(&tokens), ["Incorrect syntax near '+'."], "{tokens:?}");
    assert_eq!(error_numbers(&tokens), [102]);
    let tokens = c.batch("SELECT COUNT(*) FROM p");
    assert_eq!(rows(&tokens), [vec![TdsValue::Int(2)]]);

    // RESETCONNECTION drops the connection's prepared statements, and keeps the session id.
    let spid = rows(&c.batch("SELECT @@SPID"));
    let tokens = c.rpc(ProcId::Execute, vec![int(select), int(1)]);
    assert_eq!(rows(&tokens).len(), 2, "{tokens:?}");
    let tokens = c.rpc_with(
        PacketStatus::RESET_CONNECTION,
        RpcProc::Id(ProcId::Execute),
        vec![int(select), int(1)],
    );
    assert!(tokens.contains(&Token::EnvChange(EnvChange::ResetConnectionAck)), "{tokens:?}");
    assert_eq!(error_numbers(&tokens), [8179], "{tokens:?}");
    assert_eq!(rows(&c.batch("SELECT @@SPID")), spid, "RESETCONNECTION keeps the session id");

    // Handles are per connection: another connection's first handle is 1 again.
    let mut other = Client::connect(server.port);
    let tokens = other.rpc(ProcId::PrepExec, vec![handle_out(), text(""), text("SELECT 7")]);
    assert_eq!(returned_handle(&tokens), Some(1), "{tokens:?}");
    assert_eq!(rows(&tokens), [vec![TdsValue::Int(7)]]);

    // sp_prepexecrpc is refused with a clear error.
    let tokens = c.rpc(ProcId::PrepExecRpc, vec![handle_out(), text("p")]);
    assert_eq!(errors(&tokens), ["sp_prepexecrpc is not supported by Walden yet"]);
}

/// A prepared statement executed many times is parsed once: every execution runs the same
/// parsed statement, so the plan made for it at the first is the one the others use, as SQL
/// Server users see it in `sys.dm_exec_cached_plans` (`usecounts`). `sp_executesql` of the
/// same text is the same. The request shows its text as SQL Server does: `(@params)text`.
#[test]
fn a_prepared_statement_executed_many_times_is_parsed_and_planned_once() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let created = c.batch(
        "CREATE TABLE k (id int PRIMARY KEY, v int NOT NULL); \
         INSERT k SELECT value, value * 2 FROM GENERATE_SERIES(1, 100)",
    );
    assert!(errors(&created).is_empty(), "{created:?}");
    let most_uses = |c: &mut Client| match c
        .scalar("SELECT ISNULL(MAX(usecounts), 0) FROM sys.dm_exec_cached_plans")
    {
        TdsValue::Int(n) => n,
        other => panic!("usecounts: {other:?}"),
    };

    let tokens = c.rpc(
        ProcId::PrepExec,
        vec![handle_out(), text("@id int"), text("SELECT v FROM k WHERE id = @id"), int(1)],
    );
    assert_eq!(rows(&tokens), [[TdsValue::Int(2)]], "{tokens:?}");
    let handle = returned_handle(&tokens).unwrap();
    for id in 2..=60 {
        let tokens = c.rpc(ProcId::Execute, vec![int(handle), int(id)]);
        assert_eq!(rows(&tokens), [[TdsValue::Int(id * 2)]], "{tokens:?}");
    }
    assert_eq!(most_uses(&mut c), 60);

    let statement = "SELECT v + 1 FROM k WHERE id = @id";
    for id in 1..=40 {
        let tokens = c.rpc(ProcId::ExecuteSql, vec![text(statement), text("@id int"), int(id)]);
        assert_eq!(rows(&tokens), [[TdsValue::Int(id * 2 + 1)]], "{tokens:?}");
    }
    let plans = c.batch("SELECT usecounts FROM sys.dm_exec_cached_plans ORDER BY usecounts");
    assert_eq!(rows(&plans), [[TdsValue::Int(40)], [TdsValue::Int(60)]], "{plans:?}");

    let TdsValue::SmallInt(spid) = c.scalar("SELECT @@SPID") else { panic!("@@SPID") };
    let shown = c.rpc(
        ProcId::ExecuteSql,
        vec![
            text(
                "SELECT t.text FROM sys.dm_exec_requests r \
                 CROSS APPLY sys.dm_exec_sql_text(r.sql_handle) t WHERE r.session_id = @spid",
            ),
            text("@spid int"),
            RpcParam::input("", TdsValue::SmallInt(spid)),
        ],
    );
    assert_eq!(
        rows(&shown),
        [[TdsValue::NVarChar(
            "(@spid int)SELECT t.text FROM sys.dm_exec_requests r CROSS APPLY \
             sys.dm_exec_sql_text(r.sql_handle) t WHERE r.session_id = @spid"
                .into()
        )]],
        "{shown:?}"
    );
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

/// The tokens as `KIND` or, for the DONE family, `KIND(status bits, CurCmd, count)`: what a
/// client that walks the stream statement by statement relies on.
fn stream(tokens: &[Token]) -> Vec<String> {
    let done = |kind: &str, d: &Done| {
        let mut bits = Vec::new();
        for (bit, name) in [
            (DoneStatus::MORE, "MORE"),
            (DoneStatus::ERROR, "ERROR"),
            (DoneStatus::COUNT, "COUNT"),
            (DoneStatus::ATTN, "ATTN"),
            (DoneStatus::SRVERROR, "SRVERROR"),
        ] {
            if d.status.contains(bit) {
                bits.push(name);
            }
        }
        format!("{kind}({} {:#x} {})", bits.join("|"), d.cur_cmd, d.row_count)
    };
    tokens
        .iter()
        .map(|t| match t {
            Token::ColMetadata(_) => "COLMETADATA".to_string(),
            Token::Row(_) => "ROW".to_string(),
            Token::Info(_) => "INFO".to_string(),
            Token::Error(m) => format!("ERROR {}", m.number),
            Token::Done(d) => done("DONE", d),
            Token::DoneInProc(d) => done("DONEINPROC", d),
            Token::DoneProc(d) => done("DONEPROC", d),
            Token::ReturnStatus(_) => "RETURNSTATUS".to_string(),
            Token::ReturnValue(_) => "RETURNVALUE".to_string(),
            _ => "other".to_string(),
        })
        .collect()
}

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

/// An `sp_executesql` call of `statement` with `params` declared as `declared`.
fn execute_sql(
    c: &mut Client,
    statement: &str,
    declared: &str,
    params: Vec<RpcParam>,
) -> Vec<Token> {
    let mut all = vec![text(statement), text(declared)];
    all.extend(params);
    c.rpc(ProcId::ExecuteSql, all)
}

fn output(name: &str, ty: TypeInfo, value: TdsValue) -> RpcParam {
    RpcParam { name: name.into(), status: ParamStatus::BY_REF, ty, value }
}

fn returned(tokens: &[Token]) -> Vec<(String, TypeInfo, TdsValue)> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::ReturnValue(v) => Some((v.name.clone(), v.ty, v.value.clone())),
            _ => None,
        })
        .collect()
}

/// Every date and time type keeps its value as an RPC parameter, in and out: DATETIME's
/// seconds and 1/300 s ticks (go-mssqldb's DateTime1, tedious' TYPES.DateTime), SMALLDATETIME,
/// DATETIME2 and TIME at their scale, DATETIMEOFFSET with its offset.
#[test]
fn temporal_parameters_keep_their_value() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    // 2024-01-02 (45,291 days after 1900-01-01) 22:04:05 and 23:59:59.997.
    for (ticks, shown) in [
        ((22 * 3600 + 4 * 60 + 5) * 300, "2024-01-02 22:04:05.000"),
        (25_919_999, "2024-01-02 23:59:59.997"),
        (1, "2024-01-02 00:00:00.003"),
    ] {
        let dt = TdsValue::DateTime { days: 45_291, ticks };
        // DATEFORMAT dmy must not change how the parameter is read.
        let tokens = execute_sql(
            &mut c,
            "SET DATEFORMAT mdy; SELECT @d, CONVERT(varchar(23), @d, 121)",
            "@d datetime",
            vec![RpcParam::input("@d", dt.clone())],
        );
        assert_eq!(
            rows(&tokens),
            [vec![dt.clone(), TdsValue::VarChar(shown.as_bytes().to_vec())]],
            "{tokens:?}"
        );
        // Back as an OUTPUT parameter, unchanged.
        let tokens = execute_sql(
            &mut c,
            "SET @d = DATEADD(day, 1, @d)",
            "@d datetime OUTPUT",
            vec![output("@d", TypeInfo::DateTimeN(8), dt)],
        );
        assert_eq!(
            returned(&tokens),
            [("@d".into(), TypeInfo::DateTimeN(8), TdsValue::DateTime { days: 45_292, ticks })],
            "{tokens:?}"
        );
    }
    // SMALLDATETIME in; a DATETIME value in a SMALLDATETIME OUTPUT parameter comes back
    // rounded to the minute.
    let small = TdsValue::SmallDateTime { days: 45_291, minutes: 22 * 60 + 4 };
    let tokens = execute_sql(
        &mut c,
        "SELECT CONVERT(varchar(23), @s, 121); SET @o = CAST('2024-01-02 10:00:40' AS datetime)",
        "@s smalldatetime, @o smalldatetime OUTPUT",
        vec![RpcParam::input("@s", small), output("@o", TypeInfo::DateTimeN(4), TdsValue::Null)],
    );
    assert_eq!(rows(&tokens), [vec![TdsValue::VarChar(b"2024-01-02 22:04:00.000".to_vec())]]);
    assert_eq!(
        returned(&tokens),
        [(
            "@o".into(),
            TypeInfo::DateTimeN(4),
            TdsValue::SmallDateTime { days: 45_291, minutes: 10 * 60 + 1 }
        )],
        "{tokens:?}"
    );
    // DATETIME2(7), TIME(7), DATETIMEOFFSET(7), DATE: exact both ways.
    let time = Time { increments: 863_999_999_999, scale: 7 };
    let values = [
        TdsValue::DateTime2 { date: 738_886, time },
        TdsValue::Time(time),
        TdsValue::DateTimeOffset { date: 738_886, time, offset_minutes: -330 },
        TdsValue::Date(738_886),
    ];
    let params =
        values.iter().enumerate().map(|(i, v)| RpcParam::input(&format!("@p{i}"), v.clone()));
    let tokens = execute_sql(
        &mut c,
        "SELECT @p0, @p1, @p2, @p3",
        "@p0 datetime2(7), @p1 time(7), @p2 datetimeoffset(7), @p3 date",
        params.collect(),
    );
    assert_eq!(rows(&tokens), [values.to_vec()], "{tokens:?}");
}

/// DECIMAL parameters of any length (mssql-jdbc's setBigDecimal sends the shortest), MONEY and
/// SMALLMONEY with their four decimals in and out, and the legacy LOB types as parameters.
#[test]
fn decimal_money_and_lob_parameters() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    // 1234.56 as DECIMAL(6, 2) in 4 bytes: sign and a 3-byte magnitude.
    let request = RpcRequest {
        headers: AllHeaders::with_transaction(0),
        calls: vec![RpcCall {
            proc: RpcProc::Id(ProcId::ExecuteSql),
            options: RpcOptions::NONE,
            params: vec![
                text("SELECT @p"),
                text("@p decimal(6, 2)"),
                RpcParam::input(
                    "@p",
                    TdsValue::Decimal(Decimal { value: 123_456, precision: 6, scale: 2 }),
                ),
            ],
        }],
    };
    let mut payload = request.encode().unwrap();
    let long = [0x6A, 5, 6, 2, 5, 1, 0x40, 0xE2, 0x01, 0x00];
    let at = payload.windows(long.len()).position(|w| w == long).expect("the encoded DECIMAL");
    payload.splice(at..at + long.len(), [0x6A, 5, 6, 2, 4, 1, 0x40, 0xE2, 0x01]);
    c.send(PacketType::Rpc, &payload);
    let tokens = c.tokens();
    assert_eq!(
        rows(&tokens),
        [vec![TdsValue::Decimal(Decimal { value: 123_456, precision: 6, scale: 2 })]],
        "{tokens:?}"
    );

    // MONEY and SMALLMONEY keep four decimals, as inputs and as OUTPUT parameters.
    let tokens = execute_sql(
        &mut c,
        "SELECT @m, @s, CONVERT(varchar(30), @m, 2); SET @m = @m * 2; SET @s = @s + $0.0001",
        "@m money OUTPUT, @s smallmoney OUTPUT",
        vec![
            output("@m", TypeInfo::MoneyN(8), TdsValue::Money(-123_456_789)),
            output("@s", TypeInfo::MoneyN(4), TdsValue::Money(12_345)),
        ],
    );
    assert_eq!(
        rows(&tokens),
        [vec![
            TdsValue::Money(-123_456_789),
            TdsValue::Money(12_345),
            TdsValue::VarChar(b"-12345.6789".to_vec())
        ]],
        "{tokens:?}"
    );
    assert_eq!(
        returned(&tokens),
        [
            ("@m".into(), TypeInfo::MoneyN(8), TdsValue::Money(-246_913_578)),
            ("@s".into(), TypeInfo::MoneyN(4), TdsValue::Money(12_346)),
        ],
        "{tokens:?}"
    );

    // TEXT, NTEXT and IMAGE parameters.
    let collation = Collation::SQL_LATIN1_GENERAL_CP1_CI_AS;
    let lob = |name: &str, ty, value| RpcParam {
        name: name.into(),
        status: ParamStatus::NONE,
        ty,
        value,
    };
    let tokens = execute_sql(
        &mut c,
        "SELECT @t, @n, @i",
        "@t text, @n ntext, @i image",
        vec![
            lob(
                "@t",
                TypeInfo::Text { max_len: 0x7FFF_FFFF, collation },
                TdsValue::VarChar(b"abc".to_vec()),
            ),
            lob(
                "@n",
                TypeInfo::NText { max_len: 0x7FFF_FFFF, collation },
                TdsValue::NVarChar("d\u{e9}f".into()),
            ),
            lob("@i", TypeInfo::Image { max_len: 0x7FFF_FFFF }, TdsValue::Binary(vec![1, 2])),
        ],
    );
    assert_eq!(
        rows(&tokens),
        [vec![
            TdsValue::VarChar(b"abc".to_vec()),
            TdsValue::NVarChar("d\u{e9}f".into()),
            TdsValue::Binary(vec![1, 2])
        ]],
        "{tokens:?}"
    );
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

/// COLMETADATA's fNullable follows the column: clear for a NOT NULL table column, set for a
/// nullable one (issue 28, item 4).
#[test]
fn column_metadata_carries_nullability() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    let tokens = c.batch(
        "CREATE TABLE nn (a int NOT NULL, b int NULL, s nvarchar(5) NOT NULL); \
         SELECT a, b, s FROM nn",
    );
    let columns = tokens
        .iter()
        .find_map(|t| match t {
            Token::ColMetadata(cols) => Some(cols.clone()),
            _ => None,
        })
        .expect("a result set");
    let nullable: Vec<(&str, bool)> = columns
        .iter()
        .map(|c| (c.name.as_str(), c.flags.contains(ColumnFlags::NULLABLE)))
        .collect();
    assert_eq!(nullable, [("a", false), ("b", true), ("s", false)]);
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

/// fDefaultValue ([MS-TDS] 2.2.6.6): the procedure's declared default, not NULL.
#[test]
fn a_parameter_sent_as_default_takes_the_declared_default() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let tokens =
        c.batch("CREATE PROCEDURE d @a int, @b int = 5, @c int = 7 AS SELECT @a + @b + @c");
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    let default = |name: &str| {
        let mut p = RpcParam::input(name, TdsValue::Null);
        p.ty = TypeInfo::IntN(4);
        p.status = ParamStatus::DEFAULT;
        p
    };
    let tokens = c.rpc_with(
        PacketStatus::NONE,
        RpcProc::Name("d".into()),
        vec![int(1), default(""), RpcParam::input("@c", TdsValue::Int(100))],
    );
    assert_eq!(rows(&tokens), [vec![TdsValue::Int(106)]], "{tokens:?}");
    let tokens = c.rpc_with(
        PacketStatus::NONE,
        RpcProc::Name("d".into()),
        vec![RpcParam::input("@a", TdsValue::Int(1)), default("@c")],
    );
    assert_eq!(rows(&tokens), [vec![TdsValue::Int(13)]], "{tokens:?}");
    // A parameter without a default still needs a value.
    let tokens = c.rpc_with(PacketStatus::NONE, RpcProc::Name("d".into()), vec![default("@a")]);
    assert_eq!(error_numbers(&tokens), [201], "{tokens:?}");
}

/// sp_prepare describes the prepared statement's result set (COLMETADATA, no rows), and
/// leaves the session as it was.
#[test]
fn sp_prepare_returns_the_column_metadata() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let tokens = c.batch("CREATE TABLE described (id int NOT NULL, name nvarchar(20))");
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    let tokens = c.rpc(
        ProcId::Prepare,
        vec![
            handle_out(),
            text("@x int"),
            text("DECLARE @y int = @x; SELECT id, name, @y AS y FROM described WHERE id = @x"),
        ],
    );
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    assert_eq!(
        shape(&tokens),
        ["COLMETADATA", "DONEINPROC", "RETURNSTATUS", "RETURNVALUE", "DONEPROC"]
    );
    let names = tokens.iter().find_map(|t| match t {
        Token::ColMetadata(cols) => Some(cols.iter().map(|c| c.name.clone()).collect::<Vec<_>>()),
        _ => None,
    });
    assert_eq!(names, Some(vec!["id".into(), "name".into(), "y".into()]));
    let handle = returned_handle(&tokens).unwrap();
    let tokens = c.batch("INSERT described VALUES (1, N'one'); SELECT COUNT(*) FROM described");
    assert_eq!(rows(&tokens), [vec![TdsValue::Int(1)]], "FMTONLY is off again");
    let tokens = c.rpc(ProcId::Execute, vec![int(handle), int(1)]);
    assert_eq!(
        rows(&tokens),
        [vec![TdsValue::Int(1), TdsValue::NVarChar("one".into()), TdsValue::Int(1)]]
    );
}

/// Columns declared SMALLDATETIME, SMALLMONEY, TEXT, NTEXT and IMAGE are described as
/// themselves, a text column with its own collation, and a statement's warning (8153) comes
/// before the statement's DONE, as SQL Server sends them.
#[test]
fn declared_types_collations_and_warnings_as_sql_server_sends_them() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let setup = c.batch(
        "CREATE TABLE w (id INT, sd SMALLDATETIME, sm SMALLMONEY, tx TEXT, nt NTEXT, im IMAGE, \
         cs VARCHAR(10) COLLATE Latin1_General_CS_AS); \
         INSERT INTO w VALUES (1, '2024-02-29 13:45:30', -7.5, 'abc', N'd\u{e9}f', 0x01, 'AbC'), \
         (2, NULL, NULL, NULL, NULL, NULL, NULL)",
    );
    assert_eq!(errors(&setup), Vec::<String>::new());
    let got = c.batch("SELECT sd, sm, tx, nt, im, cs FROM w ORDER BY id");
    let Some(Token::ColMetadata(columns)) = got.first() else { panic!("{got:?}") };
    let latin1_cs = Collation { info: 0x00C0_0409, sort_id: 0 };
    let default = Collation::default();
    let types: Vec<TypeInfo> = columns.iter().map(|c| c.ty).collect();
    assert_eq!(
        types,
        [
            TypeInfo::DateTimeN(4),
            TypeInfo::MoneyN(4),
            TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: default },
            TypeInfo::NText { max_len: 0x7FFF_FFFE, collation: default },
            TypeInfo::Image { max_len: 0x7FFF_FFFF },
            TypeInfo::BigVarChar { max_len: 10, collation: latin1_cs },
        ]
    );
    assert_eq!(
        rows(&got),
        [
            vec![
                // 13:45:30 rounds up to 13:46.
                TdsValue::SmallDateTime { days: 45_349, minutes: 13 * 60 + 46 },
                TdsValue::Money(-75_000),
                TdsValue::VarChar(b"abc".to_vec()),
                TdsValue::NVarChar("d\u{e9}f".into()),
                TdsValue::Binary(vec![1]),
                TdsValue::VarChar(b"AbC".to_vec()),
            ],
            vec![TdsValue::Null; 6],
        ]
    );
    let got =
        c.batch("SET NOCOUNT ON; SELECT SUM(x) FROM (VALUES (1), (NULL)) v(x); PRINT 'after'");
    let warning = got.iter().position(|t| matches!(t, Token::Info(m) if m.number == 8153));
    assert_eq!(
        stream(&got),
        [
            "DONE(MORE 0x0 0)",
            "COLMETADATA",
            "ROW",
            "INFO",
            "DONE(MORE 0xc1 0)",
            "INFO",
            "DONE( 0x0 0)"
        ]
    );
    assert_eq!(warning, Some(3), "{got:?}");
}

/// A variable, a parameter, a CAST or CONVERT of SMALLDATETIME, SMALLMONEY, TEXT, NTEXT or
/// IMAGE goes out as that type, as a column does, with its value fitted to it (rounded to
/// the minute, range-checked), and SELECT INTO makes columns of it; an OUTPUT parameter
/// declared SMALLDATETIME comes back rounded.
#[test]
fn variables_and_casts_of_declared_types_go_out_as_themselves() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let got = c.batch(
        "DECLARE @d SMALLDATETIME = '2020-01-01 10:00:40', @m SMALLMONEY = 1.23456, \
         @t TEXT = 'tx', @n NTEXT = N'nt', @i IMAGE = 0x0102; \
         SELECT @d, @m, @t, @n, @i, CAST('2020-01-01 10:00:29' AS SMALLDATETIME), \
         CONVERT(SMALLMONEY, 2.5), CAST('2020-01-01 10:00:29' AS DATETIME)",
    );
    assert_eq!(errors(&got), Vec::<String>::new());
    let Some(Token::ColMetadata(columns)) = got.first() else { panic!("{got:?}") };
    let default = Collation::default();
    let types: Vec<TypeInfo> = columns.iter().map(|c| c.ty).collect();
    assert_eq!(
        types,
        [
            TypeInfo::DateTimeN(4),
            TypeInfo::MoneyN(4),
            TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: default },
            TypeInfo::NText { max_len: 0x7FFF_FFFE, collation: default },
            TypeInfo::Image { max_len: 0x7FFF_FFFF },
            TypeInfo::DateTimeN(4),
            TypeInfo::MoneyN(4),
            TypeInfo::DateTimeN(8),
        ]
    );
    // The text types' TableName has one part, as mssql-jdbc requires (1 to 4).
    let parts: Vec<usize> = columns.iter().map(|c| c.table_name.len()).collect();
    assert_eq!(parts, [0, 0, 1, 1, 1, 0, 0, 0]);
    // 2020-01-01 is day 43,829; 10:00:40 rounds up to 10:01, 10:00:29 down to 10:00.
    assert_eq!(
        rows(&got),
        [vec![
            TdsValue::SmallDateTime { days: 43_829, minutes: 601 },
            TdsValue::Money(12_346),
            TdsValue::VarChar(b"tx".to_vec()),
            TdsValue::NVarChar("nt".into()),
            TdsValue::Binary(vec![1, 2]),
            TdsValue::SmallDateTime { days: 43_829, minutes: 600 },
            TdsValue::Money(25_000),
            TdsValue::DateTime { days: 43_829, ticks: (10 * 3600 + 29) * 300 },
        ]]
    );

    // SELECT INTO keeps the types; the new table's columns are of them.
    let got = c.batch(
        "DECLARE @d SMALLDATETIME = '2020-01-01 10:00:40'; \
         SELECT @d AS d, CAST(1.5 AS SMALLMONEY) AS m INTO #t; SELECT * FROM #t",
    );
    assert_eq!(errors(&got), Vec::<String>::new());
    let Some(columns) = got.iter().find_map(|t| match t {
        Token::ColMetadata(c) => Some(c),
        _ => None,
    }) else {
        panic!("{got:?}")
    };
    let types: Vec<TypeInfo> = columns.iter().map(|c| c.ty).collect();
    assert_eq!(types, [TypeInfo::DateTimeN(4), TypeInfo::MoneyN(4)]);

    // Out of range: SQL Server's errors for the conversion.
    for (sql, number) in [
        ("SELECT CAST(CAST('2080-01-01' AS DATETIME) AS SMALLDATETIME)", 298),
        ("SELECT CAST('2080-01-01' AS SMALLDATETIME)", 242),
        ("DECLARE @m SMALLMONEY = 300000", 8115),
        ("SELECT CONVERT(SMALLMONEY, 300000.5)", 8115),
    ] {
        let got = c.batch(sql);
        let numbers: Vec<i32> = got
            .iter()
            .filter_map(|t| match t {
                Token::Error(m) => Some(m.number),
                _ => None,
            })
            .collect();
        assert_eq!(numbers, [number], "{sql}: {got:?}");
    }
    let got = c.batch("SELECT TRY_CAST(CAST('2080-01-01' AS DATETIME) AS SMALLDATETIME)");
    assert_eq!(rows(&got), [vec![TdsValue::Null]]);

    // An OUTPUT parameter declared SMALLDATETIME, sent as DATETIME: set from a DATETIME with
    // seconds, it comes back on the minute.
    let got = execute_sql(
        &mut c,
        "SET @d = '2020-01-01 10:00:40'",
        "@d SMALLDATETIME OUTPUT",
        vec![output("@d", TypeInfo::DateTimeN(8), TdsValue::Null)],
    );
    assert_eq!(errors(&got), Vec::<String>::new());
    assert_eq!(
        returned(&got),
        [(
            "@d".to_string(),
            TypeInfo::DateTimeN(8),
            TdsValue::DateTime { days: 43_829, ticks: 601 * 60 * 300 }
        )]
    );
}

/// A VARCHAR parameter with the collation `collation` holding `bytes`.
fn varchar_in(name: &str, collation: Collation, bytes: &[u8]) -> RpcParam {
    RpcParam {
        name: name.into(),
        status: ParamStatus::NONE,
        ty: TypeInfo::BigVarChar { max_len: 100, collation },
        value: TdsValue::VarChar(bytes.to_vec()),
    }
}

/// A VARCHAR parameter is read in the code page of the collation its TYPE_INFO carries: UTF-8
/// for a `_UTF8` collation, 1251 for a Russian one, 1252 for Walden's own and for none at all
/// (go-mssqldb's `mssql.VarChar`); an OUTPUT VARCHAR goes back in its collation's code page,
/// and a `_UTF8` column stores and returns what a UTF-8 parameter sent.
#[test]
fn varchar_parameters_are_read_in_their_collations_code_page() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    // Latin1_General_100_CI_AS_SC_UTF8 as SQL Server sends it: LCID 1033, fIgnoreCase,
    // fIgnoreKana, fIgnoreWidth, fUTF8, version 1.
    let utf8 = Collation { info: 0x14D0_0409, sort_id: 0 };
    let russian = Collation { info: 0x00D0_0419, sort_id: 0 };
    let none = Collation { info: 0, sort_id: 0 };
    let as_nvarchar = |c: &mut Client, p: RpcParam| {
        let tokens = execute_sql(c, "SELECT CAST(@v AS NVARCHAR(20))", "@v VARCHAR(20)", vec![p]);
        assert!(errors(&tokens).is_empty(), "{tokens:?}");
        rows(&tokens)
    };
    let nvarchar = |s: &str| vec![vec![TdsValue::NVarChar(s.into())]];
    assert_eq!(as_nvarchar(&mut c, varchar_in("@v", utf8, "é€".as_bytes())), nvarchar("é€"));
    assert_eq!(as_nvarchar(&mut c, varchar_in("@v", russian, &[0xC6, 0xE6])), nvarchar("Жж"));
    assert_eq!(
        as_nvarchar(&mut c, varchar_in("@v", Collation::default(), &[0xE9, 0x80])),
        nvarchar("é€")
    );
    assert_eq!(as_nvarchar(&mut c, varchar_in("@v", none, &[0xE9, 0x80])), nvarchar("é€"));

    // A _UTF8 column: the parameter's text, beyond code page 1252 too, stored and sent back
    // as UTF-8 with the column's collation.
    let tokens =
        c.batch("CREATE TABLE u8 (v VARCHAR(40) COLLATE Latin1_General_100_CI_AS_SC_UTF8)");
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    let tokens = execute_sql(
        &mut c,
        "INSERT u8 VALUES (@v)",
        "@v VARCHAR(40)",
        vec![varchar_in("@v", utf8, "ā€😀".as_bytes())],
    );
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    let tokens = c.batch("SELECT v FROM u8");
    assert_eq!(rows(&tokens), [vec![TdsValue::VarChar("ā€😀".as_bytes().to_vec())]]);

    // OUTPUT parameters go back in the code page of the collation they came with.
    let tokens = c.batch("CREATE PROCEDURE greet @o VARCHAR(20) OUTPUT AS SET @o = 'é€' + @o");
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    let call = |c: &mut Client, collation: Collation, bytes: &[u8]| {
        let mut o = varchar_in("@o", collation, bytes);
        o.status = ParamStatus::BY_REF;
        let tokens = c.rpc_with(PacketStatus::NONE, RpcProc::Name("greet".into()), vec![o]);
        assert!(errors(&tokens).is_empty(), "{tokens:?}");
        returned(&tokens).into_iter().map(|(_, _, v)| v).collect::<Vec<_>>()
    };
    assert_eq!(call(&mut c, utf8, b"!"), [TdsValue::VarChar("é€!".as_bytes().to_vec())]);
    assert_eq!(
        call(&mut c, Collation::default(), b"!"),
        [TdsValue::VarChar(vec![0xE9, 0x80, b'!'])]
    );
}

/// Issue 28: a scalar subquery's column goes out as the type of the subquery's column (a
/// SMALLDATETIME, SMALLMONEY, TEXT or IMAGE, a DECIMAL's precision and scale, a VARCHAR's
/// length), not as its values' or the holding type, and so do a CTE's, a derived table's and
/// a UNION's columns over one and SELECT INTO's.
#[test]
fn scalar_subqueries_go_out_as_their_columns_type() {
    let server = Server::start(&[]);
    let (mut c, _) = Client::login(server.port, PASSWORD);
    let got = c.batch(
        "CREATE TABLE h (id INT PRIMARY KEY, d SMALLDATETIME, m SMALLMONEY, tx TEXT, im IMAGE, \
         price DECIMAL(10, 2), name VARCHAR(20)); \
         INSERT h VALUES (1, '2024-01-02 10:00', 1.5, 'a', 0x01, 1.5, 'ab')",
    );
    assert_eq!(errors(&got), Vec::<String>::new());
    let types = |c: &mut Client, sql: &str| {
        let got = c.batch(sql);
        assert_eq!(errors(&got), Vec::<String>::new());
        let columns = got.iter().find_map(|t| match t {
            Token::ColMetadata(c) => Some(c.clone()),
            _ => None,
        });
        columns.unwrap().iter().map(|c| c.ty).collect::<Vec<TypeInfo>>()
    };
    let default = Collation::default();
    assert_eq!(
        types(
            &mut c,
            "SELECT (SELECT MIN(d) FROM h), (SELECT MAX(m) FROM h), (SELECT tx FROM h), \
             (SELECT im FROM h), (SELECT MAX(price) FROM h), (SELECT name FROM h)"
        ),
        [
            TypeInfo::DateTimeN(4),
            TypeInfo::MoneyN(4),
            TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: default },
            TypeInfo::Image { max_len: 0x7FFF_FFFF },
            TypeInfo::Decimal { precision: 10, scale: 2 },
            TypeInfo::BigVarChar { max_len: 20, collation: default },
        ]
    );
    assert_eq!(
        types(
            &mut c,
            "WITH w AS (SELECT (SELECT MIN(d) FROM h) AS x) \
             SELECT x, (SELECT y FROM (SELECT (SELECT MAX(price) FROM h) AS y) s) FROM w \
             UNION ALL SELECT d, price FROM h"
        ),
        [TypeInfo::DateTimeN(4), TypeInfo::Decimal { precision: 10, scale: 2 }]
    );
    assert_eq!(
        types(
            &mut c,
            "SELECT (SELECT MIN(d) FROM h) AS x, (SELECT MAX(price) FROM h) AS y INTO #s; \
             SELECT x, y FROM #s"
        ),
        [TypeInfo::DateTimeN(4), TypeInfo::Decimal { precision: 10, scale: 2 }]
    );
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
