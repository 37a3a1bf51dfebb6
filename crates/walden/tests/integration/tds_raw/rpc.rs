//! RPCs and their parameters: a procedure called by name with OUTPUT parameters and its
//! return status, parameters left to their declared default, date and time, decimal, money
//! and LOB values in and out, and VARCHAR read in its collation's code page.

use std::process::Command;

use walden_tds::*;

use super::{errors, execute_sql, output, returned};
use crate::common::client::{error_numbers, int, rows, text, Client};
use crate::common::server::Server;
use crate::common::PASSWORD;

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
