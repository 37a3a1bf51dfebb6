//! Prepared statements: sp_prepare, sp_execute, sp_prepexec and sp_unprepare, a plan made once
//! for many executions, and the result set sp_prepare describes.

use walden_tds::*;

use super::{errors, execute_sql};
use crate::common::client::{error_numbers, int, rows, text, Client};
use crate::common::server::Server;
use crate::common::PASSWORD;

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
    // The server's counters have one row per text, as SQL Server's query stats do.
    let counted = c.batch(
        "SELECT qs.execution_count, qs.total_rows FROM sys.dm_exec_query_stats qs
         CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) t
         WHERE t.text = '(@id int)SELECT v + 1 FROM k WHERE id = @id'",
    );
    assert_eq!(rows(&counted), [[TdsValue::BigInt(40), TdsValue::BigInt(40)]], "{counted:?}");

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

/// A connection keeps the statements `sp_executesql` ran lately parsed, by text: the same
/// text declared with other parameters is another statement, run with its own.
#[test]
fn one_text_with_other_parameter_declarations_runs_with_its_own() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    for _ in 0..2 {
        let tokens = execute_sql(&mut c, "SELECT @p AS v", "@p int", vec![int(5)]);
        assert_eq!(rows(&tokens), [[TdsValue::Int(5)]], "{tokens:?}");
        let tokens = execute_sql(&mut c, "SELECT @p AS v", "@p nvarchar(10)", vec![text("five")]);
        assert_eq!(rows(&tokens), [[TdsValue::NVarChar("five".into())]], "{tokens:?}");
    }
}
