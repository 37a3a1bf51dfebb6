//! The worked examples of [MS-TDS] section 4, byte for byte, plus the `SELECT 1 AS x` response
//! documented in `docs/format/tds.md`.

use walden_tds::request::TransactionDescriptor;
use walden_tds::*;

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace().map(|b| u8::from_str_radix(b, 16).unwrap()).collect()
}

fn one_message(wire: &[u8]) -> Message {
    let mut reader = MessageReader::new();
    reader.push(wire);
    let message = reader.next_message().unwrap().unwrap();
    assert_eq!(reader.next_message(), Ok(None));
    message
}

/// [MS-TDS] 4.1 Pre-Login Request.
#[test]
fn spec_4_1_prelogin() {
    let wire = hex("12 01 00 2F 00 00 01 00 00 00 1A 00 06 01 00 20
         00 01 02 00 21 00 01 03 00 22 00 04 04 00 26 00
         01 FF 09 00 00 00 00 00 01 00 B8 0D 00 00 01");
    let message = one_message(&wire);
    assert_eq!(message.ty, PacketType::PreLogin);
    let prelogin = Prelogin::decode(&message.payload).unwrap();
    assert_eq!(
        prelogin,
        Prelogin {
            version: PreloginVersion { major: 9, minor: 0, build: 0, sub_build: 0 },
            encryption: Some(Encryption::On),
            instance: Some(vec![0]),
            thread_id: Some(0x0DB8),
            mars: Some(true),
            ..Prelogin::default()
        }
    );
    assert_eq!(prelogin.encode().unwrap(), message.payload);
    let mut again = Vec::new();
    PacketWriter::default().write_message(
        PacketType::PreLogin,
        PacketStatus::NONE,
        &message.payload,
        &mut again,
    );
    assert_eq!(again, wire);
}

/// [MS-TDS] 4.2 Login Request (TDS 7.2, user "sa" with an empty password).
#[test]
fn spec_4_2_login7() {
    let wire = hex("10 01 00 90 00 00 01 00 88 00 00 00 02 00 09 72
         00 10 00 00 00 00 00 07 00 01 00 00 00 00 00 00
         E0 03 00 00 00 00 00 00 09 04 00 00 5E 00 08 00
         6E 00 02 00 72 00 00 00 72 00 07 00 80 00 00 00
         80 00 00 00 80 00 04 00 88 00 00 00 88 00 00 00
         00 50 8B E2 B7 8F 88 00 00 00 88 00 00 00 88 00
         00 00 00 00 00 00 73 00 6B 00 6F 00 73 00 74 00
         6F 00 76 00 31 00 73 00 61 00 4F 00 53 00 51 00
         4C 00 2D 00 33 00 32 00 4F 00 44 00 42 00 43 00");
    let message = one_message(&wire);
    assert_eq!(message.ty, PacketType::Login7);
    let login = Login7::decode(&message.payload).unwrap();
    assert_eq!(login.tds_version, 0x7209_0002);
    assert_eq!(login.packet_size, 4096);
    assert_eq!(login.client_prog_version, 0x0700_0000);
    assert_eq!(login.client_pid, 0x100);
    assert_eq!(login.option_flags1.0, 0xE0);
    assert_eq!(login.option_flags2.0, 0x03);
    assert!(login.odbc());
    assert_eq!(login.client_lcid, 0x0409);
    assert_eq!(login.hostname, "skostov1");
    assert_eq!(login.username, "sa");
    assert_eq!(login.password, "");
    assert_eq!(login.app_name, "OSQL-32");
    assert_eq!(login.server_name, "");
    assert_eq!(login.library_name, "ODBC");
    assert_eq!(login.database, "");
    assert_eq!(login.client_id, [0x00, 0x50, 0x8B, 0xE2, 0xB7, 0x8F]);
    assert!(login.features.is_empty());
    // Our encoder lays the variable part out exactly as the example does.
    assert_eq!(login.encode().unwrap(), message.payload);
}

/// The password obfuscation applied to a real password, checked by hand against 2.2.6.4:
/// 'a' (0x61 0x00) becomes 0xB3 0xA5.
#[test]
fn login7_password_obfuscation_on_the_wire() {
    let login = Login7 { username: "u".into(), password: "a".into(), ..Login7::default() };
    let bytes = login.encode().unwrap();
    let offset = usize::from(u16::from_le_bytes([bytes[44], bytes[45]]));
    assert_eq!(u16::from_le_bytes([bytes[46], bytes[47]]), 1);
    assert_eq!(&bytes[offset..offset + 2], &[0xB3, 0xA5]);
    assert_eq!(Login7::decode(&bytes).unwrap().password, "a");
}

/// [MS-TDS] 4.8 RPC Client Request: procedure "foo3", one default INTN(2) parameter.
#[test]
fn spec_4_8_rpc() {
    let wire = hex("03 01 00 2F 00 00 01 00 16 00 00 00 12 00 00 00
         02 00 00 00 00 00 00 00 00 01 00 00 00 00 04 00
         66 00 6F 00 6F 00 33 00 00 00 00 02 26 02 00");
    let message = one_message(&wire);
    let rpc = RpcRequest::decode(&message.payload).unwrap();
    assert_eq!(
        rpc.headers.transaction,
        Some(TransactionDescriptor { descriptor: 0x0100_0000_0000_0000, outstanding_requests: 0 })
    );
    assert_eq!(
        rpc.calls,
        vec![RpcCall {
            proc: RpcProc::Name("foo3".into()),
            options: RpcOptions::NONE,
            params: vec![RpcParam {
                name: String::new(),
                status: ParamStatus::DEFAULT,
                ty: TypeInfo::IntN(2),
                value: TdsValue::Null,
            }],
        }]
    );
    assert_eq!(rpc.encode().unwrap(), message.payload);
}

/// The response to `SELECT 1 AS x` (docs/format/tds.md, "Worked example").
#[test]
fn select_1_as_x_response() {
    let columns = vec![Column::new("x", TypeInfo::Int4, false)];
    let tokens = vec![
        Token::ColMetadata(columns),
        Token::Row(vec![TdsValue::Int(1)]),
        Token::Done(Done { status: token::DoneStatus::COUNT, cur_cmd: 0xC1, row_count: 1 }),
    ];
    let payload = encode_tokens(&tokens).unwrap();
    let mut wire = Vec::new();
    PacketWriter::new(4096, 52).unwrap().write_message(
        PacketType::TabularResult,
        PacketStatus::NONE,
        &payload,
        &mut wire,
    );
    assert_eq!(
        wire,
        hex("04 01 00 27 00 34 01 00
             81 01 00 00 00 00 00 00 00 38 01 78 00
             D1 01 00 00 00
             FD 10 00 C1 00 01 00 00 00 00 00 00 00")
    );
    assert_eq!(decode_tokens(&one_message(&wire).payload).unwrap(), tokens);
}

/// A LOGINACK for TDS 7.4 from "Microsoft SQL Server" 16.0.1000, as documented.
#[test]
fn loginack_bytes() {
    let ack = Token::LoginAck(LoginAck {
        interface: 1,
        tds_version: TDS_7_4,
        prog_name: "Microsoft SQL Server".into(),
        major: 16,
        minor: 0,
        build: 1000,
    });
    let mut out = Vec::new();
    ack.encode(&[], &mut out).unwrap();
    let mut expected = hex("AD 32 00 01 74 00 00 04 14");
    expected.extend("Microsoft SQL Server".encode_utf16().flat_map(u16::to_le_bytes));
    expected.extend(hex("10 00 03 E8"));
    assert_eq!(out, expected);
    assert_eq!(decode_tokens(&out).unwrap(), vec![ack]);
}

/// `CAST(42 AS SQL_VARIANT)` in a ROW (docs/format/tds.md, "SQL_VARIANT").
#[test]
fn sql_variant_row_bytes() {
    let columns = vec![Column::new("v", TypeInfo::Variant { max_len: VARIANT_MAX_LEN }, true)];
    let value = TdsValue::Variant { base: TypeInfo::Int4, value: Box::new(TdsValue::Int(42)) };
    let mut bytes = Vec::new();
    encode_row(&columns, std::slice::from_ref(&value), &mut bytes).unwrap();
    assert_eq!(bytes, hex("D1 06 00 00 00 38 00 2A 00 00 00"));
    let doc = include_str!("../../../../docs/format/tds.md");
    assert!(doc.contains("`06 00 00 00 38 00 2A 00 00 00`"));
}
