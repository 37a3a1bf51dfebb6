//! Encoder -> decoder round trips for every message, token, type and value.

use crate::cases::*;
use walden_tds::packet::{HEADER_LEN, MAX_PACKET_SIZE, MIN_PACKET_SIZE};
use walden_tds::token::{encode_nbc_row, encode_row};
use walden_tds::*;

#[test]
fn prelogin_round_trips() {
    for p in [sample_prelogin(), Prelogin::default()] {
        assert_eq!(Prelogin::decode(&p.encode().unwrap()).unwrap(), p);
    }
    let other = Prelogin { encryption: Some(Encryption::Other(0x81)), ..Prelogin::default() };
    assert_eq!(Prelogin::decode(&other.encode().unwrap()).unwrap(), other);
}

#[test]
fn login7_round_trips() {
    let login = sample_login();
    let bytes = login.encode().unwrap();
    let back = Login7::decode(&bytes).unwrap();
    // The encoder sets fExtension because features are present.
    assert!(back.option_flags3.contains(login::OptionFlags3::EXTENSION));
    assert_eq!(back, Login7 { option_flags3: back.option_flags3, ..login.clone() });
    assert!(back.odbc() && back.read_only_intent() && !back.integrated_security());
    // Obfuscated on the wire: the clear password does not appear.
    let clear: Vec<u8> = "pässwörd".encode_utf16().flat_map(u16::to_le_bytes).collect();
    assert!(!bytes.windows(clear.len()).any(|w| w == clear));

    let minimal = Login7::default();
    assert_eq!(Login7::decode(&minimal.encode().unwrap()).unwrap(), minimal);

    let big_sspi = Login7 { sspi: vec![7; 70_000], ..Login7::default() };
    assert_eq!(Login7::decode(&big_sspi.encode().unwrap()).unwrap(), big_sspi);
}

#[test]
fn sql_batch_round_trips() {
    for batch in [sample_batch(), SqlBatch::default()] {
        assert_eq!(SqlBatch::decode(&batch.encode().unwrap()).unwrap(), batch);
    }
    let mut headers = full_headers();
    headers.query_notification.as_mut().unwrap().timeout_ms = None;
    let batch = SqlBatch { headers, text: String::new() };
    assert_eq!(SqlBatch::decode(&batch.encode().unwrap()).unwrap(), batch);
}

#[test]
fn rpc_round_trips_every_parameter_type() {
    let rpc = sample_rpc();
    let bytes = rpc.encode().unwrap();
    assert_eq!(RpcRequest::decode(&bytes).unwrap(), rpc);

    // A trailing BatchFlag is allowed.
    let mut trailing = bytes.clone();
    trailing.push(0xFF);
    assert_eq!(RpcRequest::decode(&trailing).unwrap(), rpc);
    // The NoExecFlag is refused.
    let mut no_exec = bytes;
    no_exec.push(0xFE);
    assert!(matches!(RpcRequest::decode(&no_exec), Err(TdsError::Unsupported { .. })));
}

/// mssql-jdbc declares a NULL UNIQUEIDENTIFIER parameter with maximum length 0; it reads as
/// a NULL GUID, and any other length but 16 is still refused.
#[test]
fn rpc_null_guid_with_zero_maximum_length() {
    let rpc = RpcRequest {
        headers: Default::default(),
        calls: vec![RpcCall {
            proc: RpcProc::Name("p".into()),
            options: RpcOptions::NONE,
            params: vec![RpcParam {
                name: "@g".into(),
                status: ParamStatus::NONE,
                ty: TypeInfo::Guid,
                value: TdsValue::Null,
            }],
        }],
    };
    let bytes = rpc.encode().unwrap();
    // TYPE_INFO (0x24, maximum length 16) and the value's length 0 end the message.
    assert_eq!(bytes[bytes.len() - 3..], [0x24, 0x10, 0x00]);
    let mut zero = bytes.clone();
    let at = zero.len() - 2;
    zero[at] = 0;
    assert_eq!(RpcRequest::decode(&zero).unwrap(), rpc);
    let mut eight = bytes;
    eight[at] = 8;
    assert!(RpcRequest::decode(&eight).is_err());
}

#[test]
fn transmgr_round_trips() {
    for req in sample_transmgr() {
        assert_eq!(TransMgrRequest::decode(&req.encode().unwrap()).unwrap(), req, "{req:?}");
    }
}

#[test]
fn transaction_names_count_bytes() {
    let req = &sample_transmgr()[0];
    let bytes = req.encode().unwrap();
    // ALL_HEADERS (22) + type (2) + isolation (1), then the name's byte count.
    assert_eq!(&bytes[22..25], &[5, 0, 4]);
    assert_eq!(bytes[25], 10); // "outer" is 5 code units, 10 bytes.
}

#[test]
fn token_stream_round_trips() {
    let tokens = sample_tokens();
    let bytes = encode_tokens(&tokens).unwrap();
    assert_eq!(decode_tokens(&bytes).unwrap(), tokens);

    // The streaming reader sees the same tokens and tracks the metadata.
    let mut reader = TokenReader::new(&bytes);
    let streamed: Vec<Token> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(streamed, tokens);
    assert!(reader.columns().is_empty()); // The last COLMETADATA has no columns.
}

#[test]
fn every_value_round_trips_in_rows_and_params() {
    for (ty, value) in value_cases() {
        let columns = [Column::new("c", ty, true)];
        for nbc in [false, true] {
            let mut bytes = Vec::new();
            Token::ColMetadata(columns.to_vec()).encode(&[], &mut bytes).unwrap();
            let row_at = bytes.len();
            if nbc {
                encode_nbc_row(&columns, std::slice::from_ref(&value), &mut bytes).unwrap();
            } else {
                encode_row(&columns, std::slice::from_ref(&value), &mut bytes).unwrap();
            }
            let tokens = decode_tokens(&bytes).unwrap();
            let expected = if nbc {
                Token::NbcRow(vec![value.clone()])
            } else {
                Token::Row(vec![value.clone()])
            };
            assert_eq!(tokens[1], expected, "{ty:?}");
            if nbc && value == TdsValue::Null {
                assert_eq!(&bytes[row_at..], &[0xD2, 0x01], "a NULL costs one bitmap bit");
            }
        }
    }
}

#[test]
fn plp_values_are_chunked() {
    let columns = [Column::new("c", TypeInfo::varbinary(None), true)];
    let mut bytes = Vec::new();
    encode_row(&columns, &[TdsValue::Binary(vec![1; 20_000])], &mut bytes).unwrap();
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(u64::from_le_bytes(bytes[1..9].try_into().unwrap()), 20_000);
    assert_eq!(u32_at(9), 8000);
    assert_eq!(u32_at(9 + 4 + 8000), 8000);
    assert_eq!(u32_at(9 + 2 * (4 + 8000)), 4000);
    assert_eq!(u32_at(9 + 3 * (4 + 8000) - 4000), 0);
    assert_eq!(bytes.len(), 1 + 8 + 3 * 4 + 20_000 + 4);

    // NULL and empty differ: PLP_NULL versus a zero length and the terminator.
    let mut null = Vec::new();
    encode_row(&columns, &[TdsValue::Null], &mut null).unwrap();
    assert_eq!(&null[1..], &[0xFF; 8]);
    let mut empty = Vec::new();
    encode_row(&columns, &[TdsValue::Binary(Vec::new())], &mut empty).unwrap();
    assert_eq!(&empty[1..], &[0; 12]);
}

#[test]
fn result_streams_refuse_nulltype_and_legacy_lob_return_values() {
    let null = (TypeInfo::Null, TdsValue::Null);
    let token = Token::ColMetadata(vec![Column::new("c", TypeInfo::Null, true)]);
    let mut out = vec![0xAB];
    assert_eq!(token.encode(&[], &mut out), Err(TdsError::UnsupportedType(0x1F)));
    assert_eq!(out, [0xAB], "a failed encode appends nothing");
    let mut forged = vec![0x81, 1, 0, 0, 0, 0, 0, 1, 0];
    forged.extend_from_slice(&param_type_info(TypeInfo::Null));
    assert_eq!(decode_tokens(&forged), Err(TdsError::UnsupportedType(0x1F)));
    // TEXT, NTEXT and IMAGE are result set columns, never OUTPUT parameters.
    for (ty, value) in param_only_cases().into_iter().chain([null]) {
        let token = Token::ReturnValue(ReturnValue {
            ordinal: 1,
            name: "@p".into(),
            status: ReturnValueStatus::OUTPUT_PARAM,
            user_type: 0,
            flags: ColumnFlags::NULLABLE,
            ty,
            value,
        });
        let mut out = vec![0xAB];
        assert_eq!(token.encode(&[], &mut out), Err(TdsError::UnsupportedType(ty.type_id())));
        assert_eq!(out, [0xAB], "a failed encode appends nothing");
        // RETURNVALUE: ordinal (2), name "@p" (1 + 4), status (1), user type (4), flags (2).
        let mut forged = vec![0xAC, 1, 0, 2, b'@', 0, b'p', 0, 1, 0, 0, 0, 0, 1, 0];
        forged.extend_from_slice(&param_type_info(ty));
        assert_eq!(decode_tokens(&forged), Err(TdsError::UnsupportedType(ty.type_id())));
    }
}

/// The TYPE_INFO bytes of `ty` (and what follows), as an RPC parameter carries them.
fn param_type_info(ty: TypeInfo) -> Vec<u8> {
    let param_bytes = RpcRequest {
        headers: AllHeaders::default(),
        calls: vec![RpcCall {
            proc: RpcProc::Id(ProcId::Execute),
            options: RpcOptions::NONE,
            params: vec![RpcParam {
                name: String::new(),
                status: ParamStatus::NONE,
                ty,
                value: TdsValue::Null,
            }],
        }],
    }
    .encode()
    .unwrap();
    // The TYPE_INFO follows ALL_HEADERS (4), ProcID (4), options (2), name (1), status (1).
    param_bytes[12..].to_vec()
}

#[test]
fn legacy_lob_columns_carry_a_table_name_and_text_pointers() {
    let c = Collation::default();
    let mut text = Column::new("t", TypeInfo::Text { max_len: 0x7FFF_FFFF, collation: c }, true);
    text.table_name = vec!["dbo".into(), "docs".into()];
    let columns = vec![
        text,
        Column::new("n", TypeInfo::NText { max_len: 0x7FFF_FFFE, collation: c }, true),
        Column::new("i", TypeInfo::Image { max_len: 0x7FFF_FFFF }, true),
    ];
    let mut bytes = Vec::new();
    Token::ColMetadata(columns.clone()).encode(&[], &mut bytes).unwrap();
    // The first column: user type, flags, TEXTTYPE, max length, collation, then TableName
    // (2 parts: "dbo", "docs") before the column name.
    let mut first = vec![0x81, 3, 0, 0, 0, 0, 0, 1, 0, 0x23, 0xFF, 0xFF, 0xFF, 0x7F];
    first.extend_from_slice(&c.to_bytes());
    first.extend_from_slice(&[2, 3, 0, b'd', 0, b'b', 0, b'o', 0, 4, 0]);
    first.extend_from_slice(&[b'd', 0, b'o', 0, b'c', 0, b's', 0, 1, b't', 0]);
    assert_eq!(&bytes[..first.len()], &first[..]);
    let values = vec![
        TdsValue::VarChar(b"abc".to_vec()),
        TdsValue::NVarChar("\u{e9}".into()),
        TdsValue::Null,
    ];
    let mut row = Vec::new();
    encode_row(&columns, &values, &mut row).unwrap();
    // TEXTPTR (16 bytes), timestamp (8), length (4), data; a NULL is an empty TEXTPTR.
    assert_eq!(row[0], 0xD1);
    assert_eq!(row[1], 16);
    assert_eq!(&row[18..26], &[0; 8]);
    assert_eq!(&row[26..33], &[3, 0, 0, 0, b'a', b'b', b'c']);
    assert_eq!(row[33 + 1 + 16 + 8..33 + 1 + 16 + 8 + 6], [2, 0, 0, 0, 0xE9, 0]);
    assert_eq!(*row.last().unwrap(), 0);
    let mut stream = bytes.clone();
    stream.extend_from_slice(&row);
    encode_nbc_row(&columns, &values, &mut stream).unwrap();
    let tokens = decode_tokens(&stream).unwrap();
    assert_eq!(
        tokens,
        vec![Token::ColMetadata(columns), Token::Row(values.clone()), Token::NbcRow(values)]
    );
}

#[test]
fn encoders_reject_what_the_wire_cannot_hold() {
    let c = Collation::default();
    let too_long = TdsValue::VarChar(vec![0; 11]);
    let columns = [Column::new("c", TypeInfo::BigVarChar { max_len: 10, collation: c }, true)];
    let mut out = Vec::new();
    assert!(matches!(encode_row(&columns, &[too_long], &mut out), Err(TdsError::TooLong { .. })));
    assert!(out.is_empty());
    assert_eq!(
        encode_row(&columns, &[], &mut out),
        Err(TdsError::ColumnCount { expected: 1, found: 0 })
    );
    let name = "x".repeat(256);
    let ack = Token::LoginAck(LoginAck {
        interface: 1,
        tds_version: TDS_7_4,
        prog_name: name,
        major: 1,
        minor: 0,
        build: 0,
    });
    assert!(matches!(ack.encode(&[], &mut out), Err(TdsError::TooLong { .. })));
    let huge = Token::Error(ServerMessage {
        number: 1,
        state: 1,
        class: 16,
        message: "m".repeat(40_000),
        server: String::new(),
        procedure: String::new(),
        line: 1,
    });
    assert!(matches!(huge.encode(&[], &mut out), Err(TdsError::TooLong { .. })));
    assert!(out.is_empty());
    let long_param = RpcParam::input(&"@".repeat(129), TdsValue::Int(1));
    let rpc = RpcRequest {
        headers: AllHeaders::with_transaction(0),
        calls: vec![RpcCall {
            proc: RpcProc::Id(ProcId::Execute),
            options: RpcOptions::NONE,
            params: vec![long_param],
        }],
    };
    assert!(matches!(rpc.encode(), Err(TdsError::TooLong { .. })));
}

#[test]
fn natural_types_encode_their_values() {
    for (_, value) in value_cases() {
        let Some(ty) = value.natural_type() else { continue };
        let columns = [Column::new("c", ty, true)];
        let mut out = Vec::new();
        encode_row(&columns, std::slice::from_ref(&value), &mut out).unwrap();
        let mut stream = Vec::new();
        Token::ColMetadata(columns.to_vec()).encode(&[], &mut stream).unwrap();
        stream.extend_from_slice(&out);
        assert_eq!(decode_tokens(&stream).unwrap()[1], Token::Row(vec![value]));
    }
}

#[test]
fn messages_survive_packetisation_at_every_packet_size() {
    let payload = sample_rpc().encode().unwrap();
    for size in [MIN_PACKET_SIZE, 513, 4096, MAX_PACKET_SIZE] {
        let writer = PacketWriter::new(size, 0).unwrap();
        let mut wire = Vec::new();
        writer.write_message(PacketType::Rpc, PacketStatus::NONE, &payload, &mut wire);
        let packets = payload.len().div_ceil(size - HEADER_LEN);
        assert_eq!(wire.len(), payload.len() + packets * HEADER_LEN);
        let mut reader = MessageReader::with_limits(size, 1 << 24).unwrap();
        // Feed in uneven slices, as a socket would.
        for chunk in wire.chunks(1021) {
            reader.push(chunk);
        }
        let message = reader.next_message().unwrap().unwrap();
        assert_eq!(RpcRequest::decode(&message.payload).unwrap(), sample_rpc());
        assert_eq!(reader.next_message(), Ok(None));
    }
}
