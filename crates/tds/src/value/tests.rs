//! The value codec against hand-built wire bytes: byte order and sign forms, temporal ranges
//! and scales, text pointers, PLP chunking, and malformed or invalid input that must error
//! rather than panic.

use super::*;
use crate::types::MAX_LEN_PLP;
use crate::wire::Reader;
use crate::TdsError;

fn round_trip(ty: TypeInfo, v: TdsValue) -> Vec<u8> {
    let mut out = Vec::new();
    encode_value(&ty, &v, &mut out).unwrap();
    let mut r = Reader::new(&out);
    assert_eq!(decode_value(&ty, &mut r).unwrap(), v, "{ty:?}");
    assert!(r.is_empty());
    out
}

#[test]
fn xml_is_a_plp_stream_of_utf16_and_a_leading_mark_is_dropped() {
    let bytes = round_trip(TypeInfo::Xml, TdsValue::NVarChar("<a>é</a>".into()));
    // Total length, one chunk of 16 bytes, the terminator.
    assert_eq!(&bytes[..8], &16u64.to_le_bytes());
    let mut marked = 18u64.to_le_bytes().to_vec();
    marked.extend_from_slice(&18u32.to_le_bytes());
    marked.extend_from_slice(&[0xFF, 0xFE]);
    marked.extend("<a>é</a>".encode_utf16().flat_map(u16::to_le_bytes));
    marked.extend_from_slice(&0u32.to_le_bytes());
    let mut r = Reader::new(&marked);
    assert_eq!(
        decode_value(&TypeInfo::Xml, &mut r).unwrap(),
        TdsValue::NVarChar("<a>é</a>".into())
    );
    let mut null = Vec::new();
    encode_value(&TypeInfo::Xml, &TdsValue::Null, &mut null).unwrap();
    assert_eq!(null, PLP_NULL.to_le_bytes());
}

#[test]
fn xml_type_info_with_a_schema_is_read_as_untyped() {
    let mut info = vec![0xF1, 1, 2];
    info.extend("db".encode_utf16().flat_map(u16::to_le_bytes));
    info.push(3);
    info.extend("dbo".encode_utf16().flat_map(u16::to_le_bytes));
    info.extend_from_slice(&1u16.to_le_bytes());
    info.extend("s".encode_utf16().flat_map(u16::to_le_bytes));
    let mut r = Reader::new(&info);
    assert_eq!(TypeInfo::decode(&mut r).unwrap(), TypeInfo::Xml);
    assert!(r.is_empty());
    let mut out = Vec::new();
    TypeInfo::Xml.encode(&mut out);
    assert_eq!(out, [0xF1, 0]);
}

#[test]
fn money_is_high_word_first() {
    let bytes = round_trip(TypeInfo::Money, TdsValue::Money(-12_345_678_901_234));
    let high = i32::from_le_bytes(bytes[0..4].try_into().unwrap());
    assert_eq!(i64::from(high), -12_345_678_901_234i64 >> 32);
    round_trip(TypeInfo::MoneyN(4), TdsValue::Money(-2_147_483_648));
    let mut out = Vec::new();
    let err = encode_value(&TypeInfo::MoneyN(4), &TdsValue::Money(1 << 40), &mut out);
    assert_eq!(err, Err(TdsError::ValueOutOfRange { what: "SMALLMONEY" }));
}

#[test]
fn decimals_use_sign_and_magnitude() {
    let d = |value, precision, scale| TdsValue::Decimal(Decimal { value, precision, scale });
    let bytes = round_trip(TypeInfo::Decimal { precision: 5, scale: 2 }, d(-12345, 5, 2));
    assert_eq!(bytes, [5, 0, 0x39, 0x30, 0, 0]);
    round_trip(TypeInfo::Numeric { precision: 38, scale: 0 }, d(10i128.pow(38) - 1, 38, 0));
    // Rescaling up is exact; down only when no digit is lost.
    let mut out = Vec::new();
    encode_value(&TypeInfo::Decimal { precision: 10, scale: 4 }, &d(15, 3, 1), &mut out).unwrap();
    // 1.5 is 15000 at scale 4; precision 10 takes 8 magnitude bytes.
    assert_eq!(out, [9, 1, 0x98, 0x3A, 0, 0, 0, 0, 0, 0]);
    let ty = TypeInfo::Decimal { precision: 3, scale: 0 };
    assert!(encode_value(&ty, &d(15, 3, 1), &mut out).is_err());
    assert!(encode_value(&ty, &d(1000, 4, 0), &mut out).is_err());
}

#[test]
fn decimals_of_any_length_decode() {
    // 1234.56 as mssql-jdbc sends it: the shortest magnitude (3 bytes), length 4.
    let ty = TypeInfo::Decimal { precision: 6, scale: 2 };
    let mut r = Reader::new(&[4, 1, 0x40, 0xE2, 0x01]);
    let got = decode_value(&ty, &mut r).unwrap();
    assert_eq!(got, TdsValue::Decimal(Decimal { value: 123_456, precision: 6, scale: 2 }));
    // Every length from 2 to 17, negative too.
    for len in 2u8..=17 {
        let mut bytes = vec![len, 0, 7];
        bytes.resize(usize::from(len) + 1, 0);
        let ty = TypeInfo::Numeric { precision: 38, scale: 1 };
        let got = decode_value(&ty, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(got, TdsValue::Decimal(Decimal { value: -7, precision: 38, scale: 1 }));
    }
    // A value beyond the precision is still refused, as is a length of 1 or 18.
    let ty = TypeInfo::Decimal { precision: 2, scale: 0 };
    assert!(decode_value(&ty, &mut Reader::new(&[2, 1, 100])).is_err());
    assert!(decode_value(&ty, &mut Reader::new(&[1, 1])).is_err());
    let mut long = vec![18, 1];
    long.resize(19, 0);
    let ty = TypeInfo::Decimal { precision: 38, scale: 0 };
    assert!(decode_value(&ty, &mut Reader::new(&long)).is_err());
}

#[test]
fn datetime_values_keep_their_ticks_and_round_into_smalldatetime() {
    // 22:04:05 and 23:59:59.997 (tick 25,919,999) keep every tick.
    for ticks in [(22 * 3600 + 4 * 60 + 5) * 300, 25_919_999] {
        round_trip(TypeInfo::DateTimeN(8), TdsValue::DateTime { days: 45_000, ticks });
        round_trip(TypeInfo::DateTime, TdsValue::DateTime { days: -53_690, ticks });
    }
    let small = |days, ticks| {
        let mut out = Vec::new();
        encode_value(&TypeInfo::DateTimeN(4), &TdsValue::DateTime { days, ticks }, &mut out)
            .map(|()| decode_value(&TypeInfo::DateTimeN(4), &mut Reader::new(&out)))
    };
    // 10:00:29.997 rounds down, 10:00:30.000 up; 23:59:30 is the next day's midnight.
    let at = |h: u32, m: u32, s: u32, t: u32| ((h * 60 + m) * 60 + s) * 300 + t;
    assert_eq!(
        small(1, at(10, 0, 29, 299)),
        Ok(Ok(TdsValue::SmallDateTime { days: 1, minutes: 600 }))
    );
    assert_eq!(
        small(1, at(10, 0, 30, 0)),
        Ok(Ok(TdsValue::SmallDateTime { days: 1, minutes: 601 }))
    );
    assert_eq!(
        small(1, at(23, 59, 30, 0)),
        Ok(Ok(TdsValue::SmallDateTime { days: 2, minutes: 0 }))
    );
    // Before 1900 or after 2079-06-06: out of SMALLDATETIME's range.
    assert!(small(-1, 0).is_err());
    assert!(small(65_536, 0).is_err());
    assert!(small(65_535, at(23, 59, 30, 0)).is_err());
}

#[test]
fn a_text_pointer_names_the_value_it_comes_with() {
    let ty = TypeInfo::Image { max_len: 0x7FFF_FFFF };
    let row = |v: &[u8]| {
        let mut out = Vec::new();
        encode_row_value(&ty, &TdsValue::Binary(v.to_vec()), &mut out).unwrap();
        let mut r = Reader::new(&out);
        assert_eq!(decode_row_value(&ty, &mut r).unwrap(), TdsValue::Binary(v.to_vec()));
        assert!(r.is_empty());
        out
    };
    let (a, again, b) = (row(b"abc"), row(b"abc"), row(b"abd"));
    // Length 16, the pointer, a zero timestamp, the 4-byte length, the data.
    assert_eq!(a.len(), 1 + 16 + 8 + 4 + 3);
    assert_eq!(a[0], 16);
    assert_eq!(&a[17..25], &[0; 8]);
    assert_eq!(&a[25..], &[3, 0, 0, 0, b'a', b'b', b'c']);
    assert_eq!(a, again);
    assert_ne!(a[1..17], b[1..17]);
    // NULL: an empty pointer and nothing else.
    let mut out = Vec::new();
    encode_row_value(&ty, &TdsValue::Null, &mut out).unwrap();
    assert_eq!(out, [0]);
}

#[test]
fn legacy_lob_parameters_may_exceed_their_declared_length() {
    // tedious declares NTEXT in characters: 3 declared, 6 bytes sent.
    let collation = crate::Collation::SQL_LATIN1_GENERAL_CP1_CI_AS;
    let ty = TypeInfo::NText { max_len: 3, collation };
    let bytes = [6, 0, 0, 0, b'd', 0, 0xE9, 0, b'f', 0];
    let got = decode_value(&ty, &mut Reader::new(&bytes)).unwrap();
    assert_eq!(got, TdsValue::NVarChar("d\u{e9}f".into()));
    let ty = TypeInfo::Image { max_len: 1 };
    let got = decode_value(&ty, &mut Reader::new(&[2, 0, 0, 0, 1, 2])).unwrap();
    assert_eq!(got, TdsValue::Binary(vec![1, 2]));
    // A length beyond the bytes that follow is still an error.
    assert!(decode_value(&ty, &mut Reader::new(&[9, 0, 0, 0, 1])).is_err());
}

#[test]
fn integers_widen_but_never_narrow() {
    let mut out = Vec::new();
    encode_value(&TypeInfo::IntN(8), &TdsValue::SmallInt(-2), &mut out).unwrap();
    assert_eq!(out, [8, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
    let err = encode_value(&TypeInfo::Int2, &TdsValue::Int(1), &mut out);
    assert_eq!(err, Err(TdsError::TypeMismatch { ty: "SMALLINT", value: "int" }));
    assert!(encode_value(&TypeInfo::Int4, &TdsValue::Null, &mut out).is_err());
}

#[test]
fn hand_built_invalid_types_error_instead_of_panicking() {
    let t = Time { increments: 1, scale: 7 };
    let d = TdsValue::Decimal(Decimal { value: 1, precision: 200, scale: 100 });
    let c = crate::Collation::default();
    for (ty, v) in [
        (TypeInfo::IntN(16), TdsValue::BigInt(1)),
        (TypeInfo::IntN(3), TdsValue::TinyInt(1)),
        (TypeInfo::FltN(5), TdsValue::Real(1.0)),
        (TypeInfo::Decimal { precision: 200, scale: 100 }, d.clone()),
        (TypeInfo::Decimal { precision: 10, scale: 2 }, d),
        (TypeInfo::Time { scale: 200 }, TdsValue::Time(t)),
        (TypeInfo::DateTime2 { scale: 9 }, TdsValue::DateTime2 { date: 0, time: t }),
        (TypeInfo::NChar { len: MAX_LEN_PLP, collation: c }, TdsValue::NVarChar("a".into())),
        (TypeInfo::Time { scale: 7 }, TdsValue::Time(Time { increments: 1, scale: 255 })),
    ] {
        assert!(encode_value(&ty, &v, &mut Vec::new()).is_err(), "{ty:?}");
    }
}

#[test]
fn time_scales_and_ranges() {
    let t = Time { increments: 86_399_999, scale: 3 };
    let ty = TypeInfo::Time { scale: 7 };
    let mut out = Vec::new();
    encode_value(&ty, &TdsValue::Time(t), &mut out).unwrap();
    let back = decode_value(&ty, &mut Reader::new(&out)).unwrap();
    assert_eq!(back, TdsValue::Time(Time { increments: 863_999_990_000, scale: 7 }));
    let too_late = TdsValue::Time(Time { increments: 86_400, scale: 0 });
    assert!(encode_value(&TypeInfo::Time { scale: 0 }, &too_late, &mut out).is_err());
    // 24:00:00.0 on the wire is malformed.
    assert!(decode_value(&TypeInfo::Time { scale: 0 }, &mut Reader::new(&[3, 0x80, 0x51, 0x01]))
        .is_err());
}

#[test]
fn plp_decoding_handles_chunks_unknown_length_and_lies() {
    let ty = TypeInfo::nvarchar(None);
    // "hé" split across chunks in the middle of a code unit, length unknown.
    let mut wire = PLP_UNKNOWN_LEN.to_le_bytes().to_vec();
    for chunk in [&[0x68u8][..], &[0x00, 0xE9], &[0x00]] {
        wire.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        wire.extend_from_slice(chunk);
    }
    wire.extend_from_slice(&[0; 4]);
    let v = decode_value(&ty, &mut Reader::new(&wire)).unwrap();
    assert_eq!(v, TdsValue::NVarChar("hé".into()));

    let mut lie = 3u64.to_le_bytes().to_vec();
    lie.extend_from_slice(&[4, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0]);
    assert!(decode_value(&ty, &mut Reader::new(&lie)).is_err());
    let mut huge = (u64::MAX - 2).to_le_bytes().to_vec();
    huge.extend_from_slice(&[0; 4]);
    assert_eq!(
        decode_value(&ty, &mut Reader::new(&huge)),
        Err(TdsError::Truncated { what: "PLP data" })
    );
}
