//! Sample values and messages shared by the round-trip and robustness tests.

use walden_tds::login::{OptionFlags2, OptionFlags3, TypeFlags};
use walden_tds::prelogin::TraceId;
use walden_tds::request::{QueryNotification, TraceActivity, TransactionDescriptor};
use walden_tds::types::MAX_LEN_PLP;
use walden_tds::value::{
    DATETIME_MAX_DAYS, DATETIME_MIN_DAYS, DATETIME_TICKS_PER_DAY, MAX_DATE_DAYS,
};
use walden_tds::*;

fn dec(value: i128, precision: u8, scale: u8) -> TdsValue {
    TdsValue::Decimal(Decimal { value, precision, scale })
}

fn time(increments: u64, scale: u8) -> Time {
    Time { increments, scale }
}

/// A string of `units` UTF-16 code units mixing ASCII, Latin-1 and surrogate pairs.
pub fn mixed_text(units: usize) -> String {
    let mut s = String::new();
    let mut n = 0;
    for i in 0.. {
        let c = ['a', 'é', '\u{1F600}', 'Z', '中'][i % 5];
        if n + c.len_utf16() > units {
            break;
        }
        n += c.len_utf16();
        s.push(c);
    }
    s
}

/// Every type this codec carries in result sets, with edge values and NULLs. Values carry the
/// type's own precision and scale, so they decode back identical.
pub fn value_cases() -> Vec<(TypeInfo, TdsValue)> {
    use TdsValue as V;
    use TypeInfo as T;
    let p10_19 = 10i128.pow(19) - 1;
    let p10_38 = 10i128.pow(38) - 1;
    let guid = [
        0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0, 0xC0, 0x4F, 0xC9, 0x64, 0xFF,
    ];
    let c = Collation::default();
    vec![
        (T::Int1, V::TinyInt(255)),
        (T::Bit, V::Bit(true)),
        (T::Int2, V::SmallInt(i16::MIN)),
        (T::Int4, V::Int(i32::MAX)),
        (T::Int8, V::BigInt(i64::MIN)),
        (T::Flt4, V::Real(1.5)),
        (T::Flt8, V::Float(-2.25e300)),
        (T::Money, V::Money(i64::MIN)),
        (T::Money4, V::Money(-1)),
        (T::DateTime, V::DateTime { days: DATETIME_MIN_DAYS, ticks: 0 }),
        (T::DateTime4, V::SmallDateTime { days: u16::MAX, minutes: 1439 }),
        (T::IntN(1), V::TinyInt(0)),
        (T::IntN(2), V::SmallInt(-1)),
        (T::IntN(4), V::Int(-123_456)),
        (T::IntN(8), V::BigInt(i64::MAX)),
        (T::IntN(4), V::Null),
        (T::BitN, V::Bit(false)),
        (T::BitN, V::Null),
        (T::FltN(4), V::Real(-0.0)),
        (T::FltN(8), V::Float(f64::MAX)),
        (T::FltN(8), V::Null),
        (T::MoneyN(8), V::Money(i64::MAX)),
        (T::MoneyN(4), V::Money(i64::from(i32::MIN))),
        (T::MoneyN(8), V::Null),
        (
            T::DateTimeN(8),
            V::DateTime { days: DATETIME_MAX_DAYS, ticks: DATETIME_TICKS_PER_DAY - 1 },
        ),
        (T::DateTimeN(4), V::SmallDateTime { days: 0, minutes: 0 }),
        (T::DateTimeN(4), V::Null),
        (T::Guid, V::Guid(guid)),
        (T::Guid, V::Null),
        (T::Decimal { precision: 1, scale: 0 }, dec(-9, 1, 0)),
        (T::Decimal { precision: 9, scale: 2 }, dec(-999_999_999, 9, 2)),
        (T::Numeric { precision: 19, scale: 4 }, dec(-p10_19, 19, 4)),
        (T::Decimal { precision: 28, scale: 10 }, dec(10i128.pow(28) - 1, 28, 10)),
        (T::Decimal { precision: 38, scale: 38 }, dec(p10_38, 38, 38)),
        (T::Numeric { precision: 38, scale: 0 }, dec(-p10_38, 38, 0)),
        (T::Decimal { precision: 18, scale: 2 }, dec(0, 18, 2)),
        (T::Decimal { precision: 18, scale: 2 }, V::Null),
        (T::Date, V::Date(0)),
        (T::Date, V::Date(MAX_DATE_DAYS)),
        (T::Date, V::Null),
        (T::Time { scale: 0 }, V::Time(time(86_399, 0))),
        (T::Time { scale: 3 }, V::Time(time(45_296_789, 3))),
        (T::Time { scale: 7 }, V::Time(time(863_999_999_999, 7))),
        (T::Time { scale: 5 }, V::Null),
        (T::DateTime2 { scale: 7 }, V::DateTime2 { date: 738_000, time: time(1, 7) }),
        (T::DateTime2 { scale: 0 }, V::DateTime2 { date: MAX_DATE_DAYS, time: time(0, 0) }),
        (T::DateTime2 { scale: 3 }, V::Null),
        (
            T::DateTimeOffset { scale: 7 },
            V::DateTimeOffset { date: 1, time: time(123, 7), offset_minutes: -840 },
        ),
        (
            T::DateTimeOffset { scale: 2 },
            V::DateTimeOffset { date: 0, time: time(8_639_999, 2), offset_minutes: 840 },
        ),
        (T::DateTimeOffset { scale: 0 }, V::Null),
        (T::BigVarChar { max_len: 8000, collation: c }, V::VarChar(vec![b'a'; 8000])),
        (T::BigVarChar { max_len: 10, collation: c }, V::VarChar(Vec::new())),
        (T::BigVarChar { max_len: 10, collation: c }, V::Null),
        (T::BigChar { len: 5, collation: c }, V::VarChar(b"abcde".to_vec())),
        (T::BigChar { len: 5, collation: c }, V::Null),
        (T::NVarChar { max_len: 8000, collation: c }, V::NVarChar(mixed_text(4000))),
        (T::NVarChar { max_len: 20, collation: c }, V::NVarChar(String::new())),
        (T::NVarChar { max_len: 20, collation: c }, V::Null),
        (T::NChar { len: 6, collation: c }, V::NVarChar("abc".into())),
        (T::BigVarBinary { max_len: 8000 }, V::Binary((0..8000).map(|i| i as u8).collect())),
        (T::BigVarBinary { max_len: 1 }, V::Binary(Vec::new())),
        (T::BigBinary { len: 4 }, V::Binary(vec![1, 2, 3, 4])),
        (T::BigBinary { len: 4 }, V::Null),
        // (MAX) types: PLP, several chunks, empty and NULL.
        (T::varchar(None), V::VarChar(vec![b'x'; 20_000])),
        (T::varchar(None), V::VarChar(Vec::new())),
        (T::nvarchar(None), V::NVarChar(mixed_text(15_001))),
        (T::nvarchar(None), V::NVarChar(String::new())),
        (T::nvarchar(None), V::Null),
        (T::BigVarBinary { max_len: MAX_LEN_PLP }, V::Binary(vec![0xAB; 16_001])),
        (T::varbinary(None), V::Null),
        // SQL_VARIANT: fixed, BYTELEN and USHORTLEN base types, and NULL.
        (T::Variant { max_len: 8016 }, V::Variant { base: T::Int4, value: Box::new(V::Int(-7)) }),
        (
            T::Variant { max_len: 8016 },
            V::Variant { base: T::Flt8, value: Box::new(V::Float(2.5)) },
        ),
        (
            T::Variant { max_len: 8016 },
            V::Variant { base: T::Guid, value: Box::new(V::Guid([7; 16])) },
        ),
        (
            T::Variant { max_len: 8016 },
            V::Variant {
                base: T::Decimal { precision: 10, scale: 2 },
                value: Box::new(dec(-12345, 10, 2)),
            },
        ),
        (
            T::Variant { max_len: 8016 },
            V::Variant {
                base: T::DateTimeOffset { scale: 7 },
                value: Box::new(V::DateTimeOffset {
                    date: 9,
                    time: time(5, 7),
                    offset_minutes: 60,
                }),
            },
        ),
        (
            T::Variant { max_len: 8016 },
            V::Variant {
                base: T::NVarChar { max_len: 6, collation: c },
                value: Box::new(V::NVarChar("abc".into())),
            },
        ),
        (
            T::Variant { max_len: 8016 },
            V::Variant {
                base: T::BigVarBinary { max_len: 8000 },
                value: Box::new(V::Binary(vec![0xCD; 8000])),
            },
        ),
        (T::Variant { max_len: 8016 }, V::Null),
    ]
}

/// TEXT, NTEXT and IMAGE, which only RPC parameters may carry.
pub fn param_only_cases() -> Vec<(TypeInfo, TdsValue)> {
    let c = Collation::default();
    vec![
        (
            TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: c },
            TdsValue::VarChar(b"legacy".to_vec()),
        ),
        (TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: c }, TdsValue::Null),
        (
            TypeInfo::NText { max_len: 0x7FFF_FFFF, collation: c },
            TdsValue::NVarChar(mixed_text(99)),
        ),
        (TypeInfo::Image { max_len: 0x7FFF_FFFF }, TdsValue::Binary(vec![0; 3])),
        (TypeInfo::Image { max_len: 0x7FFF_FFFF }, TdsValue::Null),
    ]
}

pub fn sample_prelogin() -> Prelogin {
    Prelogin {
        version: PreloginVersion { major: 16, minor: 0, build: 1000, sub_build: 6 },
        encryption: Some(Encryption::Required),
        instance: Some(b"MSSQLServer\0".to_vec()),
        thread_id: Some(0xDEAD_BEEF),
        mars: Some(false),
        trace_id: Some(TraceId {
            connection_id: [1; 16],
            activity_id: [2; 16],
            activity_sequence: 7,
        }),
        fed_auth_required: Some(true),
        nonce: Some([9; 32]),
    }
}

pub fn sample_login() -> Login7 {
    Login7 {
        packet_size: 8000,
        client_prog_version: 0x0700_0000,
        client_pid: 4242,
        option_flags2: OptionFlags2::ODBC | OptionFlags2::INIT_LANG_FATAL,
        type_flags: TypeFlags::READ_ONLY_INTENT,
        option_flags3: OptionFlags3::CHANGE_PASSWORD,
        client_time_zone: -480,
        hostname: "client-host".into(),
        username: "walden_user".into(),
        password: "pässwörd\u{1F511}".into(),
        app_name: "roundtrip".into(),
        server_name: "localhost,1433".into(),
        library_name: "ODBC".into(),
        language: "us_english".into(),
        database: "master".into(),
        client_id: [0, 0x50, 0x8B, 0xE2, 0xB7, 0x8F],
        sspi: vec![0x4E, 0x54, 0x4C, 0x4D],
        attach_db_file: String::new(),
        change_password: "n3w".into(),
        features: vec![
            FeatureExt { id: FeatureExt::SESSION_RECOVERY, data: Vec::new() },
            FeatureExt { id: FeatureExt::UTF8_SUPPORT, data: vec![1] },
        ],
        ..Login7::default()
    }
}

pub fn full_headers() -> AllHeaders {
    AllHeaders {
        query_notification: Some(QueryNotification {
            notify_id: "note".into(),
            ssb_deployment: "service=svc".into(),
            timeout_ms: Some(60_000),
        }),
        transaction: Some(TransactionDescriptor {
            descriptor: 0x0102_0304_0506_0708,
            outstanding_requests: 1,
        }),
        trace_activity: Some(TraceActivity { activity_id: [3; 16], sequence: 99 }),
    }
}

pub fn sample_batch() -> SqlBatch {
    SqlBatch { headers: full_headers(), text: "SELECT N'é' AS x; -- 😀".into() }
}

/// An RPC message with several calls, every parameter type, and the status flags.
pub fn sample_rpc() -> RpcRequest {
    let mut params: Vec<RpcParam> = value_cases()
        .into_iter()
        .chain(param_only_cases())
        .enumerate()
        .map(|(i, (ty, value))| RpcParam {
            name: format!("@p{i}"),
            status: if i % 7 == 0 { ParamStatus::BY_REF } else { ParamStatus::NONE },
            ty,
            value,
        })
        .collect();
    params.push(RpcParam {
        name: String::new(),
        status: ParamStatus::DEFAULT,
        ty: TypeInfo::IntN(4),
        value: TdsValue::Null,
    });
    params.push(RpcParam::input(&format!("@{}", "n".repeat(127)), TdsValue::Int(1)));
    RpcRequest {
        headers: AllHeaders::with_transaction(0),
        calls: vec![
            RpcCall {
                proc: RpcProc::Id(ProcId::ExecuteSql),
                options: RpcOptions::NONE,
                params: vec![
                    RpcParam::input("", "SELECT @a + 1".into()),
                    RpcParam::input("", "@a int".into()),
                    RpcParam::input("@a", TdsValue::Int(41)),
                ],
            },
            RpcCall {
                proc: RpcProc::Name("dbo.every_type".into()),
                options: RpcOptions::WITH_RECOMPILE | RpcOptions::NO_METADATA,
                params,
            },
            RpcCall {
                proc: RpcProc::Id(ProcId::Unprepare),
                options: RpcOptions::REUSE_METADATA,
                params: Vec::new(),
            },
        ],
    }
}

pub fn sample_transmgr() -> Vec<TransMgrRequest> {
    let begin = |isolation, name: &str| NewTransaction { isolation, name: name.into() };
    [
        TransMgrKind::Begin(begin(IsolationLevel::Serializable, "outer")),
        TransMgrKind::Begin(begin(IsolationLevel::NoChange, "")),
        TransMgrKind::Commit { name: String::new(), then_begin: None },
        TransMgrKind::Commit {
            name: "outer".into(),
            then_begin: Some(begin(IsolationLevel::Snapshot, "next")),
        },
        TransMgrKind::Rollback { name: "sp1".into(), then_begin: None },
        TransMgrKind::Rollback {
            name: String::new(),
            then_begin: Some(begin(IsolationLevel::ReadCommitted, "")),
        },
        TransMgrKind::Save { name: "sp1".into() },
        TransMgrKind::Unsupported { request_type: 0, payload: vec![0, 0] },
        TransMgrKind::Unsupported { request_type: 6, payload: Vec::new() },
    ]
    .into_iter()
    .map(|kind| TransMgrRequest { headers: AllHeaders::with_transaction(5), kind })
    .collect()
}

/// A response stream with every token kind, and result sets covering every result type.
pub fn sample_tokens() -> Vec<Token> {
    let cases = value_cases();
    let columns: Vec<Column> = cases
        .iter()
        .enumerate()
        .map(|(i, (ty, _))| Column::new(&format!("c{i}"), *ty, !ty.is_fixed_len()))
        .collect();
    let row: Vec<TdsValue> = cases.iter().map(|(_, v)| v.clone()).collect();
    let all_null: Vec<TdsValue> = cases.iter().map(|_| TdsValue::Null).collect();
    let message = |number, class, text: &str| ServerMessage {
        number,
        state: 1,
        class,
        message: text.into(),
        server: "walden".into(),
        procedure: "proc".into(),
        line: 7,
    };
    let mut returns: Vec<Token> = cases
        .iter()
        .enumerate()
        .map(|(i, (ty, value))| {
            Token::ReturnValue(ReturnValue {
                ordinal: i as u16,
                name: format!("@o{i}"),
                status: ReturnValueStatus::OUTPUT_PARAM,
                user_type: 0,
                flags: ColumnFlags::NULLABLE,
                ty: *ty,
                value: value.clone(),
            })
        })
        .collect();
    let mut tokens = vec![
        Token::LoginAck(LoginAck {
            interface: 1,
            tds_version: TDS_7_4,
            prog_name: "Microsoft SQL Server".into(),
            major: 16,
            minor: 0,
            build: 1000,
        }),
        Token::FeatureExtAck(vec![(0x0A, vec![1]), (0x04, Vec::new())]),
        Token::EnvChange(EnvChange::Database { new: "master".into(), old: String::new() }),
        Token::EnvChange(EnvChange::Language { new: "us_english".into(), old: String::new() }),
        Token::EnvChange(EnvChange::PacketSize { new: 8000, old: 4096 }),
        Token::EnvChange(EnvChange::SqlCollation { new: Some(Collation::default()), old: None }),
        Token::EnvChange(EnvChange::BeginTransaction { descriptor: 0x1122_3344_5566_7788 }),
        Token::EnvChange(EnvChange::CommitTransaction { descriptor: 1 }),
        Token::EnvChange(EnvChange::RollbackTransaction { descriptor: u64::MAX }),
        Token::EnvChange(EnvChange::ResetConnectionAck),
        Token::EnvChange(EnvChange::Other { ty: 13, data: vec![0, 0] }),
        Token::Info(message(5701, 10, "Changed database context to 'master'.")),
        Token::Error(message(208, 16, &mixed_text(2000))),
        Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 }),
        Token::ColMetadata(columns.clone()),
        Token::Order(vec![1, 3]),
        Token::TabName(vec![vec!["dbo".into(), "t".into()], vec!["x".into()]]),
        Token::ColInfo(vec![
            ColInfo { column: 1, table: 1, status: ColInfoStatus::KEY, base_name: None },
            ColInfo {
                column: 2,
                table: 2,
                status: ColInfoStatus::DIFFERENT_NAME,
                base_name: Some("base".into()),
            },
            ColInfo { column: 3, table: 0, status: ColInfoStatus::HIDDEN, base_name: None },
        ]),
        Token::Row(row.clone()),
        Token::NoMetadata,
        Token::NbcRow(row.clone()),
        Token::NbcRow(all_null),
        Token::DoneInProc(Done {
            status: DoneStatus::COUNT | DoneStatus::MORE,
            cur_cmd: 0xC1,
            row_count: 3,
        }),
        Token::ColMetadata(vec![Column::new("", TypeInfo::Int4, false)]),
        Token::Row(vec![TdsValue::Int(1)]),
        Token::ReturnStatus(-6),
    ];
    tokens.append(&mut returns);
    tokens.push(Token::DoneProc(Done {
        status: DoneStatus::ERROR | DoneStatus::IN_XACT | DoneStatus::ATTN | DoneStatus::SRVERROR,
        cur_cmd: 0xE0,
        row_count: u64::MAX,
    }));
    tokens.push(Token::ColMetadata(Vec::new()));
    tokens.push(Token::Row(Vec::new()));
    tokens.push(Token::Done(Done { status: DoneStatus::COUNT, cur_cmd: 0xC1, row_count: 1 }));
    tokens
}
