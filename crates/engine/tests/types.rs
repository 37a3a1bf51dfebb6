//! Tests of `walden_engine::types`: SQL types, values, comparison, the row format (checked
//! against `docs/format/row.md`) and the key encoding (checked against `compare`).

// Tests may unwrap; clippy's test exemption covers `#[test]` functions, not their helpers.
#![allow(clippy::unwrap_used)]

use std::cmp::Ordering;
use std::time::Instant;

use walden_engine::types::*;
use walden_io::SplitMix64;

// ---------------------------------------------------------------------------------------------
// Helpers

fn dec(text: &str) -> Decimal {
    Decimal::parse(text).unwrap()
}

fn date(text: &str) -> Date {
    Date::parse(text).unwrap()
}

fn dt2(text: &str) -> DateTime2 {
    DateTime2::parse(text).unwrap()
}

fn guid(text: &str) -> Guid {
    Guid::parse(text).unwrap()
}

fn encode(columns: &[SqlType], values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_row(columns, values, &mut out).unwrap();
    out
}

fn key(types: &[SqlType], values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_key(types, values, &mut out).unwrap();
    out
}

/// The bytes of the first ```text block after `heading` in `doc`, written as
/// `offset: hex bytes` lines whose offsets follow on.
fn hex_block(doc: &str, heading: &str) -> Vec<u8> {
    let after = &doc[doc.find(heading).expect("heading in the document")..];
    let block = &after[after.find("```text\n").expect("a text block") + 8..];
    let block = &block[..block.find("```").expect("end of the block")];
    let mut bytes = Vec::new();
    for line in block.lines() {
        let (offset, hex) = line.split_once(':').expect("offset: bytes");
        assert_eq!(usize::from_str_radix(offset, 16).unwrap(), bytes.len(), "line {line:?}");
        bytes.extend(hex.split_whitespace().map(|h| u8::from_str_radix(h, 16).unwrap()));
    }
    bytes
}

/// Lexicographic tuple order with NULL first, built from `compare`.
fn cmp_tuples(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => compare(x, y).expect("comparable"),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Every type the generators know, with a spread of parameters.
fn all_types() -> Vec<SqlType> {
    vec![
        SqlType::TinyInt,
        SqlType::SmallInt,
        SqlType::Int,
        SqlType::BigInt,
        SqlType::Bit,
        SqlType::Decimal { precision: 5, scale: 0 },
        SqlType::Decimal { precision: 10, scale: 2 },
        SqlType::Decimal { precision: 20, scale: 4 },
        SqlType::Decimal { precision: 38, scale: 5 },
        SqlType::Float,
        SqlType::Real,
        SqlType::Money,
        SqlType::Char(8),
        SqlType::VarChar(Len::N(20)),
        SqlType::VarChar(Len::Max),
        SqlType::NChar(6),
        SqlType::NVarChar(Len::N(10)),
        SqlType::NVarChar(Len::Max),
        SqlType::Binary(4),
        SqlType::VarBinary(Len::N(10)),
        SqlType::VarBinary(Len::Max),
        SqlType::Date,
        SqlType::Time(0),
        SqlType::Time(3),
        SqlType::Time(7),
        SqlType::DateTime,
        SqlType::DateTime2(2),
        SqlType::DateTime2(7),
        SqlType::DateTimeOffset(0),
        SqlType::DateTimeOffset(7),
        SqlType::UniqueIdentifier,
    ]
}

fn pick<T: Copy>(rng: &mut SplitMix64, items: &[T]) -> T {
    items[rng.below(items.len() as u64) as usize]
}

/// An integer in `lo..=hi`.
fn range(rng: &mut SplitMix64, lo: i128, hi: i128) -> i128 {
    let span = (hi as u128).wrapping_sub(lo as u128) + 1;
    let r = (u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())) % span;
    // Wrapping in u128 is exact: the result is within lo..=hi.
    (lo as u128).wrapping_add(r) as i128
}

/// Mostly small numbers, so that ties are common, sometimes anything in `lo..=hi`.
fn int_in(rng: &mut SplitMix64, lo: i128, hi: i128) -> i128 {
    match rng.below(4) {
        0 => range(rng, lo, hi),
        1 => pick(rng, &[lo, hi, 0.max(lo), (-1).max(lo), 1.min(hi)]),
        _ => range(rng, (-3).max(lo), 3.min(hi)),
    }
}

/// Text with case variants, accents, NULs, spaces (some trailing), and a character whose
/// lower case is two characters.
fn text(rng: &mut SplitMix64, max_bytes: usize) -> String {
    const ALPHABET: [char; 14] =
        ['a', 'A', 'b', 'B', 'z', ' ', ' ', '\0', '\u{1}', 'é', 'É', 'ß', 'İ', '€'];
    let len = rng.below(6) as usize;
    let mut s = String::new();
    for _ in 0..len {
        let c = pick(rng, &ALPHABET);
        if s.len() + c.len_utf8() <= max_bytes {
            s.push(c);
        }
    }
    s
}

fn bytes(rng: &mut SplitMix64, max_len: usize) -> Vec<u8> {
    let len = rng.below(max_len as u64 + 1) as usize;
    (0..len).map(|_| pick(rng, &[0u8, 1, 0x7f, 0xff])).collect()
}

/// A random non-NULL value of `ty`, in the form the row stores it (padded, at the scale).
fn stored_value(rng: &mut SplitMix64, ty: SqlType) -> Value {
    match ty {
        SqlType::TinyInt => Value::TinyInt(int_in(rng, 0, 255) as u8),
        SqlType::SmallInt => Value::SmallInt(int_in(rng, i16::MIN.into(), i16::MAX.into()) as i16),
        SqlType::Int => Value::Int(int_in(rng, i32::MIN.into(), i32::MAX.into()) as i32),
        SqlType::BigInt => Value::BigInt(int_in(rng, i64::MIN.into(), i64::MAX.into()) as i64),
        SqlType::Money => Value::Money(int_in(rng, i64::MIN.into(), i64::MAX.into()) as i64),
        SqlType::Bit => Value::Bit(rng.chance(1, 2)),
        SqlType::Decimal { precision, scale } => {
            let max = 10i128.pow(u32::from(precision)) - 1;
            Value::Decimal(Decimal::new(int_in(rng, -max, max), scale).unwrap())
        }
        SqlType::Float => Value::Float(match rng.below(4) {
            0 => pick(rng, &[0.0, -0.0, 1.0, -1.0, f64::MAX, f64::MIN, f64::MIN_POSITIVE, 1e-300]),
            1 => loop {
                let x = f64::from_bits(rng.next_u64());
                if x.is_finite() {
                    break x;
                }
            },
            _ => int_in(rng, -3, 3) as f64 / 2.0,
        }),
        SqlType::Real => Value::Real(match rng.below(4) {
            0 => pick(rng, &[0.0, -0.0, 1.0, -1.0, f32::MAX, f32::MIN, f32::MIN_POSITIVE]),
            1 => loop {
                let x = f32::from_bits(rng.next_u64() as u32);
                if x.is_finite() {
                    break x;
                }
            },
            _ => int_in(rng, -3, 3) as f32 / 2.0,
        }),
        SqlType::Char(n) => {
            let mut s = text(rng, n.into());
            s.extend(std::iter::repeat_n(' ', usize::from(n) - s.len()));
            Value::Str(s)
        }
        SqlType::VarChar(_) => Value::Str(text(rng, 20)),
        SqlType::NChar(n) => {
            let mut s = text(rng, n.into());
            let units = s.encode_utf16().count();
            s.extend(std::iter::repeat_n(' ', usize::from(n) - units));
            Value::NStr(s)
        }
        SqlType::NVarChar(_) => Value::NStr(text(rng, 30)),
        SqlType::Binary(n) => {
            let mut b = bytes(rng, n.into());
            b.resize(n.into(), 0);
            Value::Binary(b)
        }
        SqlType::VarBinary(_) => Value::Binary(bytes(rng, 10)),
        SqlType::Date => Value::Date(random_date(rng)),
        SqlType::Time(scale) => Value::Time(random_time(rng, scale)),
        SqlType::DateTime => {
            let days = int_in(rng, DATETIME_MIN_DAYS.into(), DATETIME_MAX_DAYS.into()) as i32;
            let ticks = int_in(rng, 0, i128::from(DATETIME_TICKS_PER_DAY) - 1) as u32;
            Value::DateTime(DateTime::from_parts(days, ticks).unwrap())
        }
        SqlType::DateTime2(scale) => {
            Value::DateTime2(DateTime2::new(random_date(rng), random_time(rng, scale)))
        }
        SqlType::DateTimeOffset(scale) => {
            // A day away from either end, so that any offset keeps the local time in range.
            let days = int_in(rng, 1, i128::from(MAX_DATE_DAYS) - 1) as u32;
            let utc = DateTime2::new(Date::from_days(days).unwrap(), random_time(rng, scale));
            let offset = int_in(rng, -840, 840) as i16;
            Value::DateTimeOffset(DateTimeOffset::from_utc(utc, offset).unwrap())
        }
        SqlType::UniqueIdentifier => {
            Value::Guid(Guid(std::array::from_fn(|_| pick(rng, &[0u8, 1, 0xff]))))
        }
        SqlType::Variant => {
            let base = pick(rng, &[SqlType::Int, SqlType::NVarChar(Len::N(10)), SqlType::Date]);
            stored_value(rng, base)
        }
        // The engine stores xml's text as it is; the SQL layer has made it well-formed.
        SqlType::Xml => {
            Value::Xml(walden_engine::types::Xml::new(format!("<a>{}</a>", text(rng, 20))))
        }
    }
}

fn random_date(rng: &mut SplitMix64) -> Date {
    Date::from_days(int_in(rng, 0, MAX_DATE_DAYS.into()) as u32).unwrap()
}

fn random_time(rng: &mut SplitMix64, scale: u8) -> Time {
    let unit = 10i128.pow(u32::from(7 - scale));
    let units = int_in(rng, 0, i128::from(TICKS_PER_DAY) / unit - 1);
    Time::from_ticks((units * unit) as u64).unwrap()
}

/// A value of `ty` or, one time in eight, NULL.
fn value_or_null(rng: &mut SplitMix64, ty: SqlType) -> Value {
    if rng.chance(1, 8) {
        Value::Null
    } else {
        stored_value(rng, ty)
    }
}

// ---------------------------------------------------------------------------------------------
// SqlType

#[test]
fn type_names_render_like_sql_server() {
    let cases = [
        (SqlType::Int, "int"),
        (SqlType::Decimal { precision: 10, scale: 2 }, "decimal(10,2)"),
        (SqlType::VarChar(Len::Max), "varchar(max)"),
        (SqlType::NVarChar(Len::N(50)), "nvarchar(50)"),
        (SqlType::DateTime2(7), "datetime2(7)"),
        (SqlType::Time(3), "time(3)"),
        (SqlType::Char(10), "char(10)"),
        (SqlType::Binary(16), "binary(16)"),
        (SqlType::VarBinary(Len::Max), "varbinary(max)"),
        (SqlType::Float, "float"),
        (SqlType::Real, "real"),
        (SqlType::UniqueIdentifier, "uniqueidentifier"),
        (SqlType::Money, "money"),
    ];
    for (ty, name) in cases {
        assert_eq!(ty.name(), name);
        assert_eq!(ty.to_string(), name);
    }
}

#[test]
fn type_parse_reads_names_synonyms_and_defaults() {
    for ty in all_types() {
        assert_eq!(SqlType::parse(&ty.name()), Some(ty), "{ty}");
        assert_eq!(SqlType::parse(&ty.name().to_uppercase()), Some(ty), "{ty}");
    }
    let cases = [
        ("NUMERIC", SqlType::DEFAULT_DECIMAL),
        ("decimal", SqlType::Decimal { precision: 18, scale: 0 }),
        ("dec(7)", SqlType::Decimal { precision: 7, scale: 0 }),
        ("numeric ( 10 , 3 )", SqlType::Decimal { precision: 10, scale: 3 }),
        ("float", SqlType::Float),
        ("float(53)", SqlType::Float),
        ("float(25)", SqlType::Float),
        ("float(24)", SqlType::Real),
        ("float(1)", SqlType::Real),
        ("double precision", SqlType::Float),
        ("integer", SqlType::Int),
        ("char", SqlType::Char(1)),
        ("character(5)", SqlType::Char(5)),
        ("varchar", SqlType::VarChar(Len::N(1))),
        ("nvarchar(MAX)", SqlType::NVarChar(Len::Max)),
        ("time", SqlType::Time(7)),
        ("datetime2", SqlType::DateTime2(7)),
        ("datetime2(0)", SqlType::DateTime2(0)),
        ("varchar(8000)", SqlType::VarChar(Len::N(8000))),
        ("nchar(4000)", SqlType::NChar(4000)),
    ];
    for (text, ty) in cases {
        assert_eq!(SqlType::parse(text), Some(ty), "{text}");
    }
    for bad in [
        "decimal(39)",
        "decimal(5,6)",
        "decimal(0)",
        "varchar(8001)",
        "nvarchar(4001)",
        "varchar(0)",
        "char(max)",
        "time(8)",
        "float(54)",
        "float(0)",
        "int(4)",
        "varchar(-1)",
        "varchar(+5)",
        "text",
        "varchar(10",
        "",
    ] {
        assert_eq!(SqlType::parse(bad), None, "{bad}");
    }
}

#[test]
fn type_sizes() {
    let fixed = [
        (SqlType::TinyInt, 1),
        (SqlType::SmallInt, 2),
        (SqlType::Int, 4),
        (SqlType::BigInt, 8),
        (SqlType::Bit, 1),
        (SqlType::Decimal { precision: 9, scale: 0 }, 4),
        (SqlType::Decimal { precision: 10, scale: 2 }, 8),
        (SqlType::Decimal { precision: 18, scale: 2 }, 8),
        (SqlType::Decimal { precision: 28, scale: 2 }, 12),
        (SqlType::Decimal { precision: 29, scale: 2 }, 16),
        (SqlType::Float, 8),
        (SqlType::Real, 4),
        (SqlType::Money, 8),
        (SqlType::Char(10), 10),
        (SqlType::Binary(3), 3),
        (SqlType::Date, 3),
        (SqlType::Time(0), 3),
        (SqlType::Time(2), 3),
        (SqlType::Time(3), 4),
        (SqlType::Time(4), 4),
        (SqlType::Time(7), 5),
        (SqlType::DateTime, 8),
        (SqlType::DateTime2(0), 6),
        (SqlType::DateTimeOffset(0), 8),
        (SqlType::DateTimeOffset(7), 10),
        (SqlType::DateTime2(7), 8),
        (SqlType::UniqueIdentifier, 16),
    ];
    for (ty, len) in fixed {
        assert!(ty.is_fixed_len(), "{ty}");
        assert_eq!(ty.fixed_len(), Some(len), "{ty}");
        assert_eq!(ty.max_len_bytes(), len, "{ty}");
    }
    let var = [
        (SqlType::VarChar(Len::N(20)), 20),
        (SqlType::VarBinary(Len::N(7)), 7),
        (SqlType::NVarChar(Len::N(50)), 150),
        (SqlType::NChar(10), 30),
        (SqlType::VarChar(Len::Max), MAX_LOB_LEN),
        (SqlType::NVarChar(Len::Max), MAX_LOB_LEN),
        (SqlType::VarBinary(Len::Max), (1 << 31) - 1),
    ];
    for (ty, max) in var {
        assert!(!ty.is_fixed_len(), "{ty}");
        assert_eq!(ty.fixed_len(), None, "{ty}");
        assert_eq!(ty.max_len_bytes(), max, "{ty}");
    }
    assert!(SqlType::NChar(3).is_national() && SqlType::NVarChar(Len::Max).is_national());
    assert!(!SqlType::Char(3).is_national() && SqlType::Char(3).is_text());
}

#[test]
fn type_descriptors_round_trip_and_reject_garbage() {
    let mut every: Vec<SqlType> = all_types();
    every.extend([
        SqlType::Decimal { precision: 1, scale: 0 },
        SqlType::Decimal { precision: 38, scale: 38 },
        SqlType::Char(8000),
        SqlType::NChar(4000),
        SqlType::VarChar(Len::N(8000)),
        SqlType::NVarChar(Len::N(4000)),
        SqlType::Binary(1),
        SqlType::Time(1),
        SqlType::DateTime2(0),
    ]);
    for ty in every {
        let d = ty.encode();
        assert_eq!(d[0], ty.system_type_id());
        assert_eq!(SqlType::decode(d), Some(ty), "{ty}");
    }
    assert_eq!(SqlType::Int.encode(), [56, 0, 0, 0]);
    assert_eq!(SqlType::Decimal { precision: 10, scale: 2 }.encode(), [106, 10, 2, 0]);
    assert_eq!(SqlType::VarChar(Len::Max).encode(), [167, 0xff, 0xff, 0]);
    assert_eq!(SqlType::NVarChar(Len::N(300)).encode(), [231, 0x2c, 0x01, 0]);
    assert_eq!(SqlType::DateTime2(3).encode(), [42, 3, 0, 0]);
    assert_eq!(SqlType::DateTimeOffset(7).encode(), [43, 7, 0, 0]);
    for bad in [
        [0, 0, 0, 0],
        [56, 1, 0, 0],
        [56, 0, 0, 1],
        [106, 39, 0, 0],
        [106, 5, 6, 0],
        [106, 0, 0, 0],
        [175, 0, 0, 0],
        [175, 0xff, 0xff, 0],
        [167, 0x41, 0x1f, 0],
        [239, 0xa1, 0x0f, 0],
        [41, 8, 0, 0],
        [42, 7, 1, 0],
    ] {
        assert_eq!(SqlType::decode(bad), None, "{bad:?}");
    }
    // Whatever decodes is canonical: it encodes back to the same bytes.
    let mut rng = SplitMix64::new(11);
    let ids = [36u8, 40, 41, 42, 48, 52, 56, 59, 60, 61, 62, 104, 106, 127, 165, 167, 173, 175];
    for _ in 0..100_000 {
        let mut d = rng.next_u64().to_le_bytes();
        if rng.chance(3, 4) {
            d[0] = pick(&mut rng, &ids);
            d[3] = 0;
            if rng.chance(1, 2) {
                d[2] = rng.below(3) as u8;
            }
        }
        let d = [d[0], d[1], d[2], d[3]];
        if let Some(ty) = SqlType::decode(d) {
            assert!(ty.is_valid());
            assert_eq!(ty.encode(), d, "{ty}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Decimal

#[test]
fn decimal_parses_exactly_and_displays() {
    let d = dec("123.45");
    assert_eq!((d.mantissa(), d.scale()), (12345, 2));
    let d = dec("-0.5");
    assert_eq!((d.mantissa(), d.scale()), (-5, 1));
    assert_eq!(d.to_string(), "-0.5");
    for (text, shown) in [
        ("123.45", "123.45"),
        ("-0.50", "-0.50"),
        ("0", "0"),
        ("-0", "0"),
        (".5", "0.5"),
        ("5.", "5"),
        ("+7", "7"),
        (" 12.340 ", "12.340"),
        ("00012", "12"),
        ("-12345678901234567890.123456789012345678", "-12345678901234567890.123456789012345678"),
    ] {
        assert_eq!(dec(text).to_string(), shown, "{text}");
    }
    let nines = "9".repeat(38);
    assert_eq!(dec(&nines).to_string(), nines);
    let tiny = format!("0.{}1", "0".repeat(37));
    assert_eq!((dec(&tiny).mantissa(), dec(&tiny).scale()), (1, 38));
    assert_eq!(dec(&tiny).to_string(), tiny);
    for bad in ["", ".", "-", "1e5", "1.2.3", "- 1", "12a", "0x10", "1,5", "--1"] {
        assert_eq!(Decimal::parse(bad), Err(ParseError::Invalid), "{bad:?}");
    }
    for big in [format!("1{}", "0".repeat(38)), format!("0.{}1", "0".repeat(38))] {
        assert_eq!(Decimal::parse(&big), Err(ParseError::OutOfRange), "{big}");
    }
    assert_eq!(dec(&format!("{}1", "0".repeat(50))).mantissa(), 1, "leading zeros are free");
    assert_eq!(dec("12.34").digits(), 4);
    assert_eq!(dec("0").digits(), 1);
    assert_eq!(Decimal::new(10i128.pow(38), 0), None);
    assert_eq!(Decimal::new(1, 39), None);
    assert_eq!(Decimal::from_i64(-42).to_string(), "-42");
    assert_eq!(dec("1.25").to_f64(), 1.25);
}

#[test]
fn decimal_rescale_rounds_half_away_from_zero() {
    let r = |text: &str, scale| dec(text).rescale(scale).map(|d| d.to_string());
    assert_eq!(r("2.5", 0).as_deref(), Some("3"));
    assert_eq!(r("-2.5", 0).as_deref(), Some("-3"));
    assert_eq!(r("2.49", 0).as_deref(), Some("2"));
    assert_eq!(r("-2.45", 1).as_deref(), Some("-2.5"));
    assert_eq!(r("1.005", 2).as_deref(), Some("1.01"));
    assert_eq!(r("1.004999", 2).as_deref(), Some("1.00"));
    assert_eq!(r("0.4", 0).as_deref(), Some("0"));
    assert_eq!(r("-0.4", 0).as_deref(), Some("0"));
    assert_eq!(r("1.5", 3).as_deref(), Some("1.500"));
    assert_eq!(r("12.34", 2).as_deref(), Some("12.34"));
    assert_eq!(r("1", 38), None, "39 digits");
    assert_eq!(r("0.5", 38), Some(format!("0.5{}", "0".repeat(37))));
    assert_eq!(r("1", 39), None);
    // Rounding up can add a digit.
    assert_eq!(r("99.95", 1).as_deref(), Some("100.0"));
    let big = Decimal::new(10i128.pow(38) - 1, 1).unwrap();
    assert_eq!(big.rescale(0).map(|d| d.to_string()), Some(format!("1{}", "0".repeat(37))));
}

#[test]
fn decimal_overflow_for_a_precision() {
    assert!(dec("12345678.91").fits_precision(10));
    assert!(!dec("123456789.10").fits_precision(10));
    assert_eq!(
        dec("12345678.905").to_type(10, 2).map(|d| d.to_string()).as_deref(),
        Some("12345678.91")
    );
    assert_eq!(dec("99999999.995").to_type(10, 2), None, "rounds to 100000000.00");
    assert_eq!(dec("123456789").to_type(10, 2), None);
    assert_eq!(dec("0.5").to_type(1, 0).map(|d| d.to_string()).as_deref(), Some("1"));
    assert_eq!(dec("1").to_type(5, 6), None, "scale above precision");
    assert_eq!(dec("1.5").cmp_value(&dec("1.50")), Ordering::Equal);
    assert_eq!(dec("-1.5").cmp_value(&dec("-1.49")), Ordering::Less);
}

// ---------------------------------------------------------------------------------------------
// Dates and times

#[test]
fn calendar_known_points() {
    let points = [
        ((1, 1, 1), 0),
        ((1, 12, 31), 364),
        ((4, 2, 29), 365 * 3 + 31 + 28),
        ((1582, 10, 10), 577_730),
        ((1753, 1, 1), 639_905),
        ((1900, 1, 1), 693_595),
        ((1970, 1, 1), 719_162),
        ((2000, 1, 1), 730_119),
        ((2000, 2, 29), 730_178),
        ((2024, 1, 31), 738_915),
        ((9999, 12, 31), 3_652_058),
    ];
    for ((y, m, d), days) in points {
        let date = Date::from_ymd(y, m, d).unwrap();
        assert_eq!(date.days(), days, "{y}-{m}-{d}");
        assert_eq!(date.ymd(), (y, m, d));
    }
    assert_eq!(Date::from_days(DATETIME_EPOCH_DAYS).unwrap().ymd(), (1900, 1, 1));
    assert_eq!(
        Date::from_days(DATETIME_EPOCH_DAYS - 53_690).unwrap().ymd(),
        (1753, 1, 1),
        "DATETIME_MIN_DAYS"
    );
    assert_eq!(
        i64::from(Date::MAX.days()) - i64::from(DATETIME_EPOCH_DAYS),
        i64::from(DATETIME_MAX_DAYS)
    );
    for (y, m, d) in [
        (2023, 2, 29),
        (1900, 2, 29),
        (2100, 2, 29),
        (0, 1, 1),
        (10000, 1, 1),
        (2024, 13, 1),
        (2024, 0, 1),
        (2024, 4, 31),
        (2024, 1, 0),
    ] {
        assert_eq!(Date::from_ymd(y, m, d), None, "{y}-{m}-{d}");
    }
    assert_eq!(Date::from_days(MAX_DATE_DAYS + 1), None);
}

#[test]
fn calendar_round_trips_every_day() {
    // An independent statement of the calendar: month lengths and the leap rule.
    let leap = |y: u16| y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
    let month_len = |y: u16, m: u8| match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    // The day before 0001-01-01, in a year 0 that only serves as a predecessor.
    let mut previous = (0u16, 12u8, 31u8);
    for days in 0..=MAX_DATE_DAYS {
        let (y, m, d) = Date::from_days(days).unwrap().ymd();
        assert_eq!(Date::from_ymd(y, m, d).map(Date::days), Some(days), "{y}-{m}-{d}");
        // Each day follows the previous one in the calendar.
        let next = if d > 1 {
            previous == (y, m, d - 1)
        } else {
            let before = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
            (previous.0, previous.1) == before && previous.2 == month_len(before.0, before.1)
        };
        assert!(next, "{previous:?} then {y}-{m}-{d}");
        previous = (y, m, d);
    }
    assert_eq!(previous, (9999, 12, 31));
}

#[test]
fn temporal_parse_and_display() {
    assert_eq!(date("2024-01-31").to_string(), "2024-01-31");
    assert_eq!(date("20240131"), date("2024-01-31"));
    assert_eq!(date("2024-1-5").to_string(), "2024-01-05");
    assert_eq!(date(" 2024-01-31 12:34 ").to_string(), "2024-01-31");
    assert_eq!(date("12:34").to_string(), "1900-01-01");
    assert_eq!(date("").to_string(), "1900-01-01");
    assert_eq!(date("0001-01-01").days(), 0);
    assert_eq!(Date::parse("2024-02-30"), Err(ParseError::OutOfRange));
    assert_eq!(Date::parse("2024-13-01"), Err(ParseError::OutOfRange));
    for bad in
        ["2024/01/31", "2024-01", "24-01-31", "2024-01-31x", "2024013", "hello", "2024-01-31 12"]
    {
        assert_eq!(Date::parse(bad), Err(ParseError::Invalid), "{bad}");
    }

    let t = Time::parse("12:34:56.1234567").unwrap();
    assert_eq!(t.to_string(), "12:34:56.1234567");
    assert_eq!(t.ticks(), (12 * 3600 + 34 * 60 + 56) * TICKS_PER_SECOND + 1_234_567);
    assert_eq!(t.hms(), (12, 34, 56, 1_234_567));
    assert_eq!(t.display(0).to_string(), "12:34:56");
    assert_eq!(t.display(3).to_string(), "12:34:56.123");
    assert_eq!(Time::parse("1:2").unwrap().to_string(), "01:02:00.0000000");
    assert_eq!(Time::parse("23:59:59.5").unwrap().display(1).to_string(), "23:59:59.5");
    assert_eq!(Time::parse("2024-01-31T08:00:00").unwrap().display(0).to_string(), "08:00:00");
    assert_eq!(Time::parse("2024-01-31").unwrap(), Time::MIDNIGHT);
    assert_eq!(Time::parse("24:00:00"), Err(ParseError::OutOfRange));
    assert_eq!(Time::parse("12:60"), Err(ParseError::OutOfRange));
    // Digits past the seventh round to the 100 ns tick, as SQL Server reads the nine that
    // mssql-jdbc sends.
    assert_eq!(
        Time::parse("12:34:56.12345678").unwrap().display(7).to_string(),
        "12:34:56.1234568"
    );
    assert_eq!(Time::parse("12:34:56."), Err(ParseError::Invalid));
    assert_eq!(Time::parse("12"), Err(ParseError::Invalid));
    assert_eq!(Time::from_hms(23, 59, 59, 9_999_999).unwrap().ticks(), TICKS_PER_DAY - 1);
    assert_eq!(Time::from_hms(24, 0, 0, 0), None);
    assert_eq!(Time::from_ticks(TICKS_PER_DAY), None);

    let v = dt2("2024-01-31T12:34:56.1234567");
    assert_eq!(v.to_string(), "2024-01-31 12:34:56.1234567");
    assert_eq!(v.display(2).to_string(), "2024-01-31 12:34:56.12");
    assert_eq!(v.display(0).to_string(), "2024-01-31 12:34:56");
    assert_eq!(dt2("2024-01-31 12:34:56.789"), dt2("2024-01-31T12:34:56.7890000"));
    assert_eq!(dt2("20240131 12:34").to_string(), "2024-01-31 12:34:00.0000000");
    assert_eq!(dt2("2024-01-31").time, Time::MIDNIGHT);
    assert_eq!(dt2("12:00").date, Date::DEFAULT);
    assert_eq!(DateTime2::parse("2024-01-31X12:00"), Err(ParseError::Invalid));
}

#[test]
fn datetimeoffset_parses_displays_and_compares_in_utc() {
    let dto = |text: &str| DateTimeOffset::parse(text).unwrap();
    let v = dto("2024-01-31 12:34:56.1234567 +02:00");
    assert_eq!(v.to_string(), "2024-01-31 12:34:56.1234567 +02:00");
    assert_eq!(v.utc(), dt2("2024-01-31 10:34:56.1234567"));
    assert_eq!(v.local(), dt2("2024-01-31 12:34:56.1234567"));
    assert_eq!(v.offset_minutes(), 120);
    assert_eq!(v.display(0).to_string(), "2024-01-31 12:34:56 +02:00");
    assert_eq!(dto("2024-01-31T12:34:56Z").to_string(), "2024-01-31 12:34:56.0000000 +00:00");
    assert_eq!(dto("2024-01-31 01:00-05:30").utc(), dt2("2024-01-31 06:30"));
    assert_eq!(dto("2024-01-31 01:00 -5:30").offset_minutes(), -330);
    assert_eq!(dto("2024-01-31").to_string(), "2024-01-31 00:00:00.0000000 +00:00");
    assert_eq!(dto("2024-01-01 00:30 +01:00").utc(), dt2("2023-12-31 23:30"));
    assert_eq!(DateTimeOffset::parse("2024-01-31 12:00 +14:01"), Err(ParseError::OutOfRange));
    assert_eq!(DateTimeOffset::parse("2024-01-31 12:00 +15:00"), Err(ParseError::OutOfRange));
    assert_eq!(DateTimeOffset::parse("0001-01-01 00:00 +01:00"), Err(ParseError::OutOfRange));
    assert!(DateTimeOffset::from_utc(dt2("9999-12-31 23:00"), 120).is_none());
    // One moment at two offsets: equal as SQL Server compares, and in a key.
    let (a, b) = (dto("2024-01-31 12:00 +02:00"), dto("2024-01-31 10:00 +00:00"));
    assert_eq!(
        compare(&Value::DateTimeOffset(a), &Value::DateTimeOffset(b)),
        Some(Ordering::Equal)
    );
    let ty = [SqlType::DateTimeOffset(7)];
    assert_eq!(key(&ty, &[Value::DateTimeOffset(a)]), key(&ty, &[Value::DateTimeOffset(b)]));
    // Against a DATETIME2, the DATETIME2 is taken as UTC.
    let later = Value::DateTime2(dt2("2024-01-31 11:00"));
    assert_eq!(compare(&Value::DateTimeOffset(a), &later), Some(Ordering::Less));
}

#[test]
fn time_and_datetime2_round_to_a_scale() {
    let t = Time::parse("12:34:56.1234567").unwrap();
    assert!(t.is_at_scale(7) && !t.is_at_scale(6));
    assert_eq!(t.round_to_scale(3).0.to_string(), "12:34:56.1230000");
    assert_eq!(t.round_to_scale(4).0.to_string(), "12:34:56.1235000");
    assert_eq!(t.round_to_scale(0), (Time::parse("12:34:56").unwrap(), false));
    assert_eq!(t.round_to_scale(7), (t, false));
    let late = Time::parse("23:59:59.9999999").unwrap();
    assert_eq!(late.round_to_scale(0), (Time::MIDNIGHT, true), "wraps past midnight");
    let v = dt2("2024-12-31 23:59:59.9999999");
    assert_eq!(v.round_to_scale(2).unwrap().to_string(), "2025-01-01 00:00:00.0000000");
    assert_eq!(dt2("9999-12-31 23:59:59.9999999").round_to_scale(6), None);
    assert_eq!(
        dt2("9999-12-31 23:59:59.9999999").round_to_scale(7),
        Some(dt2("9999-12-31 23:59:59.9999999"))
    );
}

#[test]
fn datetime_rounds_to_three_hundredths_like_sql_server() {
    let shown = |text: &str| DateTime::parse(text).unwrap().to_string();
    assert_eq!(shown("2024-01-31 12:34:56.789"), "2024-01-31 12:34:56.790");
    // SQL Server's table: .000-.001 -> .000, .002-.004 -> .003, .005-.008 -> .007, .009 -> .010.
    let expected = ["000", "000", "003", "003", "003", "007", "007", "007", "007", "010"];
    for (ms, want) in expected.iter().enumerate() {
        let text = format!("2024-01-31 00:00:00.00{ms}");
        assert_eq!(shown(&text), format!("2024-01-31 00:00:00.{want}"), "{text}");
    }
    assert_eq!(shown("2024-01-31 23:59:59.999"), "2024-02-01 00:00:00.000");
    assert_eq!(shown("2024-01-31 23:59:59.998"), "2024-01-31 23:59:59.997");
    assert_eq!(shown("2024-01-31"), "2024-01-31 00:00:00.000");
    assert_eq!(shown("20240131"), "2024-01-31 00:00:00.000");
    assert_eq!(shown("12:00"), "1900-01-01 12:00:00.000");
    assert_eq!(shown("1753-01-01"), "1753-01-01 00:00:00.000");
    assert_eq!(shown("9999-12-31 23:59:59.997"), "9999-12-31 23:59:59.997");
    assert_eq!(DateTime::parse("9999-12-31 23:59:59.999"), Err(ParseError::OutOfRange));
    assert_eq!(DateTime::parse("1752-12-31"), Err(ParseError::OutOfRange));
    assert_eq!(DateTime::parse("2024-01-31 12:34:56.1234"), Err(ParseError::Invalid));

    let d = DateTime::parse("1900-01-01 00:00:00.003").unwrap();
    assert_eq!((d.days(), d.ticks()), (0, 1));
    assert_eq!(d.to_datetime2().to_string(), "1900-01-01 00:00:00.0033333");
    assert_eq!(
        DateTime::parse("1900-01-01 00:00:00.007").unwrap().to_datetime2().to_string(),
        "1900-01-01 00:00:00.0066667"
    );
    assert_eq!(DateTime::parse("1899-12-31").unwrap().days(), -1);
    // Every tick survives a trip through DATETIME2.
    for ticks in (0..DATETIME_TICKS_PER_DAY).step_by(997).chain([DATETIME_TICKS_PER_DAY - 1]) {
        let d = DateTime::from_parts(12_345, ticks).unwrap();
        assert_eq!(DateTime::from_datetime2(d.to_datetime2()), Some(d));
    }
    assert_eq!(DateTime::from_parts(DATETIME_MIN_DAYS - 1, 0), None);
    assert_eq!(DateTime::from_parts(0, DATETIME_TICKS_PER_DAY), None);
}

// ---------------------------------------------------------------------------------------------
// GUID

#[test]
fn guid_text_and_byte_order() {
    let g = guid("00112233-4455-6677-8899-aabbccddeeff");
    assert_eq!(
        g.0,
        [
            0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
            0xee, 0xff
        ]
    );
    assert_eq!(g.to_string(), "00112233-4455-6677-8899-AABBCCDDEEFF");
    assert_eq!(guid("{00112233-4455-6677-8899-AABBCCDDEEFF}"), g);
    assert_eq!(Value::Guid(g).to_string(), "00112233-4455-6677-8899-AABBCCDDEEFF");
    for bad in [
        "00112233-4455-6677-8899-aabbccddeef",
        "00112233-4455-6677-8899-aabbccddeefg",
        "0011223344556677-8899-aabbccddeeff00",
        "00112233_4455_6677_8899_aabbccddeeff",
        "00112233-4455-6677-8899-aabbccddeéf",
        "",
    ] {
        assert_eq!(Guid::parse(bad), Err(ParseError::Invalid), "{bad}");
    }
}

#[test]
fn guid_order_is_sql_servers() {
    // SQL Server's ORDER BY of the sixteen GUIDs with one byte set (as published for SQL
    // Server 2005 and reproduced since): the last group decides first, right to left within
    // the first three groups.
    let ascending = [
        "01000000-0000-0000-0000-000000000000",
        "00010000-0000-0000-0000-000000000000",
        "00000100-0000-0000-0000-000000000000",
        "00000001-0000-0000-0000-000000000000",
        "00000000-0100-0000-0000-000000000000",
        "00000000-0001-0000-0000-000000000000",
        "00000000-0000-0100-0000-000000000000",
        "00000000-0000-0001-0000-000000000000",
        "00000000-0000-0000-0001-000000000000",
        "00000000-0000-0000-0100-000000000000",
        "00000000-0000-0000-0000-000000000001",
        "00000000-0000-0000-0000-000000000100",
        "00000000-0000-0000-0000-000000010000",
        "00000000-0000-0000-0000-000001000000",
        "00000000-0000-0000-0000-000100000000",
        "00000000-0000-0000-0000-010000000000",
    ];
    let types = [SqlType::UniqueIdentifier];
    for pair in ascending.windows(2) {
        let (a, b) = (Value::Guid(guid(pair[0])), Value::Guid(guid(pair[1])));
        assert_eq!(compare(&a, &b), Some(Ordering::Less), "{} < {}", pair[0], pair[1]);
        assert!(key(&types, &[a]) < key(&types, &[b]));
    }
}

// ---------------------------------------------------------------------------------------------
// compare

#[test]
fn compare_numbers_across_types() {
    let c = |a: Value, b: Value| compare(&a, &b);
    use Ordering::*;
    assert_eq!(c(Value::Int(1), Value::Decimal(dec("1.00"))), Some(Equal));
    assert_eq!(c(Value::TinyInt(255), Value::SmallInt(-1)), Some(Greater));
    assert_eq!(
        c(Value::BigInt(i64::MAX), Value::Decimal(dec("9223372036854775807.5"))),
        Some(Less)
    );
    assert_eq!(c(Value::Decimal(dec("1.5")), Value::Decimal(dec("1.49999"))), Some(Greater));
    assert_eq!(c(Value::Decimal(dec("-0.5")), Value::Decimal(dec("0.3"))), Some(Less));
    assert_eq!(c(Value::Decimal(dec("-1.5")), Value::Int(-1)), Some(Less));
    assert_eq!(
        c(
            Value::Decimal(dec("10000000000000000000000000000000000000")),
            Value::Decimal(dec("0.99999999999999999999999999999999999999"))
        ),
        Some(Greater),
        "scales 0 and 38 compare without overflow"
    );
    assert_eq!(c(Value::Money(12_345), Value::Decimal(dec("1.2345"))), Some(Equal));
    assert_eq!(c(Value::Bit(true), Value::Int(1)), Some(Equal));
    assert_eq!(c(Value::Float(1.5), Value::Int(1)), Some(Greater));
    assert_eq!(c(Value::Real(0.5), Value::Decimal(dec("0.5"))), Some(Equal));
    assert_eq!(c(Value::Float(-0.0), Value::Float(0.0)), Some(Equal));
    assert_eq!(c(Value::Float(f64::NAN), Value::Float(0.0)), None);
}

#[test]
fn compare_strings_case_insensitive_trailing_spaces() {
    let s = |x: &str| Value::Str(x.to_string());
    let n = |x: &str| Value::NStr(x.to_string());
    use Ordering::*;
    assert_eq!(compare(&s("abc"), &s("ABC  ")), Some(Equal));
    assert_eq!(compare(&s("abc"), &n("AbC")), Some(Equal));
    assert_eq!(compare(&s("a"), &s("B")), Some(Less));
    assert_eq!(compare(&s("ab"), &s("abc")), Some(Less));
    assert_eq!(compare(&s(""), &s("   ")), Some(Equal));
    assert_eq!(compare(&s(" a"), &s("a")), Some(Less), "leading spaces count");
    assert_ne!(compare(&n("e"), &n("é")), Some(Equal), "accent-sensitive");
    assert_eq!(compare(&n("É"), &n("é")), Some(Equal));
    assert_eq!(compare(&s("a\0"), &s("a")), Some(Greater));
}

#[test]
fn compare_other_families_and_nulls() {
    use Ordering::*;
    let d = Value::Date(date("2024-01-31"));
    let midnight2 = Value::DateTime2(dt2("2024-01-31"));
    let midnight = Value::DateTime(DateTime::parse("2024-01-31").unwrap());
    assert_eq!(compare(&d, &midnight2), Some(Equal));
    assert_eq!(compare(&d, &midnight), Some(Equal));
    let tick = Value::DateTime(DateTime::parse("2024-01-31 00:00:00.003").unwrap());
    assert_eq!(
        compare(&tick, &Value::DateTime2(dt2("2024-01-31 00:00:00.0033333"))),
        Some(Greater)
    );
    assert_eq!(compare(&tick, &Value::DateTime2(dt2("2024-01-31 00:00:00.0033334"))), Some(Less));
    assert_eq!(compare(&Value::Binary(vec![1]), &Value::Binary(vec![1, 0])), Some(Less));
    assert_eq!(compare(&Value::Binary(vec![2]), &Value::Binary(vec![1, 0])), Some(Greater));
    let t = Value::Time(Time::parse("01:00").unwrap());
    assert_eq!(compare(&t, &Value::Time(Time::MIDNIGHT)), Some(Greater));
    assert_eq!(compare(&t, &d), None, "time and date are different families");
    assert_eq!(compare(&Value::Int(1), &Value::Str("1".into())), None);
    assert_eq!(compare(&Value::Null, &Value::Null), None);
    assert_eq!(compare(&Value::Null, &Value::Int(1)), None);
    assert_eq!(compare(&Value::Int(1), &Value::Null), None);
}

#[test]
fn value_display() {
    assert_eq!(Value::Null.to_string(), "NULL");
    assert_eq!(Value::Bit(true).to_string(), "1");
    assert_eq!(Value::Money(-12_345).to_string(), "-1.2345");
    assert_eq!(Value::Money(120_000).to_string(), "12.0000");
    assert_eq!(Value::Binary(vec![0x0a, 0xbc]).to_string(), "0x0ABC");
    assert_eq!(Value::Decimal(dec("-0.50")).to_string(), "-0.50");
    assert_eq!(
        Value::DateTime(DateTime::parse("2024-01-31 12:34:56.789").unwrap()).to_string(),
        "2024-01-31 12:34:56.790"
    );
    assert_eq!(Value::Str("x".into()).kind_name(), "varchar");
    assert_eq!(Value::NStr("x".into()).kind_name(), "nvarchar");
}

// ---------------------------------------------------------------------------------------------
// Rows

/// The columns and values of both worked examples of `docs/format/row.md`.
fn worked_example() -> ([SqlType; 4], [Value; 4]) {
    let columns = [
        SqlType::Int,
        SqlType::VarChar(Len::N(10)),
        SqlType::Date,
        SqlType::Decimal { precision: 10, scale: 2 },
    ];
    let values =
        [Value::Int(42), Value::Str("hi".into()), Value::Null, Value::Decimal(dec("12.34"))];
    (columns, values)
}

#[test]
fn row_worked_example_matches_the_document() {
    let doc = include_str!("../../../docs/format/row.md");
    let expected = hex_block(doc, "## Worked example: a row");
    let (columns, values) = worked_example();
    assert_eq!(encode(&columns, &values), expected);
    assert_eq!(decode_row(&columns, &expected).unwrap(), values);
    assert_eq!(min_row_len(&columns), 23);
}

#[test]
fn key_worked_example_matches_the_document() {
    let doc = include_str!("../../../docs/format/row.md");
    let expected = hex_block(doc, "## Worked example: a key");
    let (types, values) = worked_example();
    assert_eq!(key(&types, &values), expected);
}

#[test]
fn row_round_trips_every_type() {
    let mut rng = SplitMix64::new(1);
    let types = all_types();
    for round in 0..3000 {
        let n = 1 + rng.below(12) as usize;
        let columns: Vec<SqlType> = (0..n).map(|_| pick(&mut rng, &types)).collect();
        let values: Vec<Value> = columns.iter().map(|ty| value_or_null(&mut rng, *ty)).collect();
        let row = encode(&columns, &values);
        assert_eq!(decode_row(&columns, &row).unwrap(), values, "round {round}: {columns:?}");
        for (i, v) in values.iter().enumerate() {
            assert_eq!(&decode_column(&columns, &row, i).unwrap(), v, "round {round} column {i}");
        }
        assert_eq!(off_row_pointers(&columns, &row).unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(decode_column(&columns, &row, n), Err(RowError::NoSuchColumn(n)));
    }
}

#[test]
fn row_pads_fixed_strings_and_converts_exact_scales() {
    let columns = [
        SqlType::Char(5),
        SqlType::NChar(3),
        SqlType::Binary(3),
        SqlType::Decimal { precision: 10, scale: 2 },
        SqlType::Time(3),
    ];
    let values = [
        Value::Str("ab".into()),
        Value::NStr("é".into()),
        Value::Binary(vec![1]),
        Value::Decimal(dec("12.3")),
        Value::Time(Time::parse("01:02:03.45").unwrap()),
    ];
    let row = encode(&columns, &values);
    assert_eq!(
        decode_row(&columns, &row).unwrap(),
        [
            Value::Str("ab   ".into()),
            Value::NStr("é  ".into()),
            Value::Binary(vec![1, 0, 0]),
            Value::Decimal(dec("12.30")),
            Value::Time(Time::parse("01:02:03.450").unwrap()),
        ]
    );
    // NCHAR pads to UTF-16 code units: U+1F600 is two of them.
    let nchar = [SqlType::NChar(3)];
    let row = encode(&nchar, &[Value::NStr("😀".into())]);
    assert_eq!(decode_row(&nchar, &row).unwrap(), [Value::NStr("😀 ".into())]);
}

#[test]
fn row_rejects_values_it_cannot_hold_and_leaves_out_unchanged() {
    let cases: Vec<(SqlType, Value, RowError)> = vec![
        (
            SqlType::Int,
            Value::Str("1".into()),
            RowError::TypeMismatch { column: 1, expected: SqlType::Int, found: "varchar" },
        ),
        (
            SqlType::VarChar(Len::N(5)),
            Value::NStr("x".into()),
            RowError::TypeMismatch {
                column: 1,
                expected: SqlType::VarChar(Len::N(5)),
                found: "nvarchar",
            },
        ),
        (
            SqlType::Char(2),
            Value::Str("abc".into()),
            RowError::ValueTooLong { column: 1, len: 3, max: 2 },
        ),
        (
            SqlType::VarChar(Len::N(2)),
            Value::Str("abc".into()),
            RowError::ValueTooLong { column: 1, len: 3, max: 2 },
        ),
        (
            SqlType::VarChar(Len::N(2)),
            Value::Str("é€".into()),
            RowError::ValueTooLong { column: 1, len: 5, max: 2 },
        ),
        (
            SqlType::NChar(2),
            Value::NStr("abc".into()),
            RowError::ValueTooLong { column: 1, len: 3, max: 2 },
        ),
        (
            SqlType::Binary(1),
            Value::Binary(vec![1, 2]),
            RowError::ValueTooLong { column: 1, len: 2, max: 1 },
        ),
    ];
    let invalid = [
        (SqlType::Decimal { precision: 5, scale: 2 }, Value::Decimal(dec("1234.5"))),
        (SqlType::Decimal { precision: 5, scale: 2 }, Value::Decimal(dec("1.005"))),
        (SqlType::Time(0), Value::Time(Time::parse("12:00:00.5").unwrap())),
        (SqlType::DateTime2(2), Value::DateTime2(dt2("2024-01-31 12:00:00.001"))),
        (SqlType::Float, Value::Float(f64::NAN)),
        (SqlType::Float, Value::Float(f64::INFINITY)),
        (SqlType::Real, Value::Real(f32::NEG_INFINITY)),
    ];
    let mut all = cases;
    for (ty, v) in invalid {
        all.push((ty, v, RowError::InvalidValue { column: 1, reason: "" }));
    }
    for (ty, v, want) in all {
        let columns = [SqlType::Int, ty, SqlType::VarChar(Len::N(10))];
        let values = [Value::Int(1), v.clone(), Value::Str("x".into())];
        let mut out = vec![9, 9, 9];
        let got = encode_row(&columns, &values, &mut out).unwrap_err();
        match (&got, &want) {
            (RowError::InvalidValue { column: 1, .. }, RowError::InvalidValue { .. }) => {}
            _ => assert_eq!(got, want, "{ty} {v:?}"),
        }
        assert_eq!(out, [9, 9, 9], "{ty} {v:?}: out unchanged");
        // Keys check less (lengths are the row's business) but never leave a partial key.
        let mut out = vec![7];
        if let Err(e) = encode_key(&columns, &values, &mut out) {
            assert_eq!(out, [7]);
            assert!(!e.to_string().is_empty());
        }
    }
    let mut out = Vec::new();
    assert_eq!(
        encode_row(&[SqlType::Int], &[], &mut out),
        Err(RowError::ColumnCount { expected: 1, found: 0 })
    );
    assert_eq!(
        encode_key(&[SqlType::Int], &[], &mut out),
        Err(RowError::ColumnCount { expected: 1, found: 0 })
    );
    let many = vec![SqlType::Bit; MAX_COLUMNS + 1];
    let nulls = vec![Value::Null; MAX_COLUMNS + 1];
    assert_eq!(encode_row(&many, &nulls, &mut out), Err(RowError::TooManyColumns(MAX_COLUMNS + 1)));
    assert!(encode_row(&many[1..], &nulls[1..], &mut out).is_ok());
}

#[test]
fn row_written_with_fewer_columns_reads_trailing_nulls() {
    let old = [SqlType::Int, SqlType::VarChar(Len::N(10))];
    let new =
        [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::Date, SqlType::NVarChar(Len::Max)];
    let row = encode(&old, &[Value::Int(5), Value::Str("x".into())]);
    assert_eq!(
        decode_row(&new, &row).unwrap(),
        [Value::Int(5), Value::Str("x".into()), Value::Null, Value::Null]
    );
    assert_eq!(decode_column(&new, &row, 3), Ok(Value::Null));
    assert_eq!(decode_column(&new, &row, 1), Ok(Value::Str("x".into())));
    // More columns than the schema is corruption.
    assert!(matches!(decode_row(&old[..1], &row), Err(RowError::Corrupt(_))));
}

/// A spill hook that keeps values in memory; pointers are 8-byte indexes.
struct Overflow {
    chains: Vec<Vec<u8>>,
}

impl Overflow {
    fn spill(&mut self, bytes: &[u8]) -> Result<Vec<u8>, RowError> {
        self.chains.push(bytes.to_vec());
        Ok((self.chains.len() as u64 - 1).to_le_bytes().to_vec())
    }

    fn fetch(&self, pointer: &[u8]) -> Result<Vec<u8>, RowError> {
        let i = u64::from_le_bytes(
            pointer.try_into().map_err(|_| RowError::Storage("bad pointer".into()))?,
        );
        self.chains
            .get(i as usize)
            .cloned()
            .ok_or_else(|| RowError::Storage("no such chain".into()))
    }
}

#[test]
fn row_spills_largest_values_first_and_reads_them_back() {
    let columns = [
        SqlType::Int,
        SqlType::VarChar(Len::Max),
        SqlType::NVarChar(Len::Max),
        SqlType::VarBinary(Len::Max),
        SqlType::VarChar(Len::N(200)),
        SqlType::NChar(1500),
    ];
    let values = [
        Value::Int(7),
        Value::Str("a".repeat(2000)),
        Value::NStr("é".repeat(1500)),
        Value::Binary(vec![0xab; 1400]),
        Value::Str("b".repeat(150)),
        Value::NStr("c".into()),
    ];
    let mut store = Overflow { chains: Vec::new() };
    let mut out = Vec::new();
    encode_row_with(&columns, &values, &mut out, &mut |b| store.spill(b)).unwrap();
    assert!(out.len() <= MAX_INLINE_ROW);
    // Sizes: 3000 (NVARCHAR, UTF-8 é), 2000, 1500 (NCHAR padded), 1400, 150, plus 20 bytes of
    // header, bitmap, INT and offsets. With the first two replaced by pointers of the largest
    // size the plan reaches 20 + 1500 + 1400 + 150 + 2 × 64 = 3198 bytes, which fits.
    assert_eq!(store.chains.len(), 2);
    assert_eq!(store.chains[0], "é".repeat(1500).as_bytes());
    assert_eq!(store.chains[1], "a".repeat(2000).as_bytes());
    let pointers = off_row_pointers(&columns, &out).unwrap();
    assert_eq!(pointers, [1u64.to_le_bytes().to_vec(), 0u64.to_le_bytes().to_vec()]);
    let mut expected = values.to_vec();
    expected[5] = Value::NStr(format!("c{}", " ".repeat(1499)));
    assert_eq!(decode_row_with(&columns, &out, &mut |p| store.fetch(p)).unwrap(), expected);
    assert_eq!(decode_row(&columns, &out), Err(RowError::OffRow { column: 1 }));
    assert_eq!(decode_column(&columns, &out, 2), Err(RowError::OffRow { column: 2 }));
    assert_eq!(decode_column(&columns, &out, 3).unwrap(), values[3]);
    assert_eq!(decode_column_with(&columns, &out, 1, &mut |p| store.fetch(p)).unwrap(), values[1]);
    // A fetch hook's error comes back as is.
    let failing = decode_row_with(&columns, &out, &mut |_| Err(RowError::Storage("gone".into())));
    assert_eq!(failing, Err(RowError::Storage("gone".into())));

    // NCHAR is spilled padded, and decoded back padded.
    let columns = [SqlType::NChar(3000), SqlType::VarChar(Len::N(3000))];
    let values = [Value::NStr("x".into()), Value::Str("y".repeat(3000))];
    let mut store = Overflow { chains: Vec::new() };
    let mut out = Vec::new();
    encode_row_with(&columns, &values, &mut out, &mut |b| store.spill(b)).unwrap();
    assert_eq!(store.chains.len(), 1, "both are 3000 bytes; the first column goes first");
    assert_eq!(store.chains[0].len(), 3000);
    assert_eq!(
        decode_row_with(&columns, &out, &mut |p| store.fetch(p)).unwrap()[0],
        Value::NStr(format!("x{}", " ".repeat(2999)))
    );
}

#[test]
fn row_too_large_is_refused_before_anything_is_spilled() {
    let mut calls = 0;
    let mut spill = |_: &[u8]| -> Result<Vec<u8>, RowError> {
        calls += 1;
        Ok(vec![1; 8])
    };
    // Seventy 60-byte values: too large, and each is too small to be worth a pointer.
    let columns = vec![SqlType::VarChar(Len::N(60)); 70];
    let values = vec![Value::Str("x".repeat(60)); 70];
    let mut out = vec![1, 2];
    assert!(matches!(
        encode_row_with(&columns, &values, &mut out, &mut spill),
        Err(RowError::RowTooLarge { .. })
    ));
    assert_eq!(out, [1, 2]);
    // A fixed part that cannot fit.
    let columns = [SqlType::Char(4000)];
    assert!(matches!(
        encode_row_with(&columns, &[Value::Null], &mut out, &mut spill),
        Err(RowError::RowTooLarge { len: 4006, max: MAX_INLINE_ROW })
    ));
    // Without a hook a large row is refused.
    let columns = [SqlType::VarChar(Len::Max)];
    let big = [Value::Str("z".repeat(4000))];
    assert!(matches!(
        encode_row(&columns, &big, &mut out),
        Err(RowError::RowTooLarge { len: 4008, .. })
    ));
    assert_eq!(calls, 0);
    // A hook returning an invalid pointer.
    let mut bad_pointer =
        |_: &[u8]| -> Result<Vec<u8>, RowError> { Ok(vec![0; MAX_OFF_ROW_POINTER + 1]) };
    assert_eq!(
        encode_row_with(&columns, &big, &mut out, &mut bad_pointer),
        Err(RowError::PointerLength { column: 0, len: MAX_OFF_ROW_POINTER + 1 })
    );
    assert_eq!(out, [1, 2]);
    // Exactly MAX_INLINE_ROW bytes is allowed.
    let fits = [Value::Str("z".repeat(MAX_INLINE_ROW - 8))];
    encode_row(&columns, &fits, &mut out).unwrap();
    assert_eq!(out.len(), 2 + MAX_INLINE_ROW);
}

#[test]
fn row_decode_detects_corruption() {
    let columns = [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::Bit, SqlType::Date];
    let good =
        encode(&columns, &[Value::Int(1), Value::Str("abc".into()), Value::Bit(true), Value::Null]);
    let corrupt = |mutate: &dyn Fn(&mut Vec<u8>)| {
        let mut row = good.clone();
        mutate(&mut row);
        matches!(decode_row(&columns, &row), Err(RowError::Corrupt(_)))
    };
    assert!(corrupt(&|r| r[0] = 0x02), "unknown status bit");
    assert!(corrupt(&|r| r[0] = 0x01), "off-row status without a flagged column");
    assert!(corrupt(&|r| r[1] = 5), "more columns than the schema");
    assert!(corrupt(&|r| r[3] += 1), "var offset");
    assert!(corrupt(&|r| r[5] |= 0x10), "bitmap bit past the last column");
    assert!(corrupt(&|r| r[10] = 2), "bit neither 0 nor 1");
    assert!(corrupt(&|r| r[11] = 1), "NULL with non-zero bytes");
    assert!(corrupt(&|r| r.push(0)), "trailing byte");
    assert!(
        corrupt(&|r| {
            r.pop();
        }),
        "truncated"
    );
    assert!(corrupt(&|r| *r.last_mut().unwrap() = 0xff), "not UTF-8");
    // The only end offset is bytes 14..16.
    assert!(corrupt(&|r| r[15] |= 0x80), "off-row flag without status");
    assert!(corrupt(&|r| r[5] |= 0x02), "NULL varchar with data");
    assert!(decode_row(&columns, &good).is_ok());
}

#[test]
fn row_decode_never_panics_on_random_bytes() {
    let mut rng = SplitMix64::new(99);
    let types = all_types();
    let store = Overflow { chains: vec![vec![b'x'; 100]; 4] };
    let mut decoded = 0;
    for round in 0..20_000u64 {
        let n = 1 + rng.below(8) as usize;
        let columns: Vec<SqlType> = (0..n).map(|_| pick(&mut rng, &types)).collect();
        let mut row = match rng.below(3) {
            // Pure noise, sometimes with a plausible header.
            0 => {
                let len = rng.below(80) as usize;
                let mut r: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                if r.len() >= 5 && rng.chance(1, 2) {
                    r[0] = 0;
                    r[1..3].copy_from_slice(&(n as u16).to_le_bytes());
                    r[3..5].copy_from_slice(
                        &(min_row_len(&columns) as u16
                            - 2 * columns.iter().filter(|t| !t.is_fixed_len()).count() as u16)
                            .to_le_bytes(),
                    );
                }
                r
            }
            // A valid row, some with spilled values, then damaged.
            _ => {
                let values: Vec<Value> =
                    columns.iter().map(|ty| value_or_null(&mut rng, *ty)).collect();
                let mut r = encode(&columns, &values);
                if rng.chance(1, 4) {
                    // Fake an off-row column: flag a variable column's end offset.
                    let var = columns.iter().filter(|t| !t.is_fixed_len()).count();
                    if var > 0 {
                        let slot = usize::from(u16::from_le_bytes([r[3], r[4]]))
                            + 2 * rng.below(var as u64) as usize;
                        r[slot + 1] |= 0x80;
                        r[0] |= 1;
                    }
                }
                for _ in 0..rng.below(4) {
                    let at = rng.below(r.len() as u64) as usize;
                    r[at] = rng.next_u64() as u8;
                }
                r
            }
        };
        if rng.chance(1, 3) {
            row.truncate(rng.below(row.len() as u64 + 1) as usize);
        }
        // Any outcome but a panic is fine; the results must agree with each other.
        let all = decode_row(&columns, &row);
        let with = decode_row_with(&columns, &row, &mut |p| {
            store.fetch(p).map(|mut v| {
                v.truncate(3);
                v
            })
        });
        let pointers = off_row_pointers(&columns, &row);
        for i in 0..=n {
            let one = decode_column(&columns, &row, i);
            // What a full decode accepts, a single-column decode reads the same.
            if let Ok(values) = &all {
                match values.get(i) {
                    Some(v) => assert_eq!(one.as_ref(), Ok(v), "round {round} column {i}"),
                    None => assert_eq!(one, Err(RowError::NoSuchColumn(n))),
                }
            }
            let _ = decode_column_with(&columns, &row, i, &mut |p| store.fetch(p));
        }
        if all.is_ok() {
            decoded += 1;
            assert_eq!(pointers, Ok(vec![]), "round {round}");
            assert_eq!(with, all, "round {round}");
        }
        // A decoder of every column accepts exactly what a whole decode accepts; one of some
        // columns at least that, and reads the same values.
        let fetch = &mut |p: &[u8]| store.fetch(p);
        let every = RowDecoder::new(&columns, None).decode(&row, fetch);
        assert_eq!(every.ok(), decode_row_with(&columns, &row, fetch).ok(), "round {round}");
        let wanted: Vec<bool> = (0..n).map(|_| rng.chance(1, 2)).collect();
        let some = RowDecoder::new(&columns, Some(&wanted)).decode(&row, fetch);
        if let Ok(values) = decode_row_some_with(&columns, &row, &wanted, fetch) {
            assert_eq!(some, Ok(values), "round {round}");
        }
        // Into a vector holding other values, it accepts and reads the same.
        let mut reused: Vec<Value> = (0..n).map(|i| Value::Str(format!("{i}"))).collect();
        let into = RowDecoder::new(&columns, Some(&wanted)).decode_into(&row, fetch, &mut reused);
        assert_eq!(into.map(|()| reused), some, "round {round}");
    }
    assert!(decoded > 1000, "the damage left some rows valid: {decoded}");
}

#[test]
fn row_decoder_reads_the_wanted_columns_as_a_whole_decode_does() {
    let mut rng = SplitMix64::new(7);
    let types = all_types();
    let mut store = Overflow { chains: Vec::new() };
    for round in 0..3000 {
        let n = 1 + rng.below(16) as usize;
        let columns: Vec<SqlType> = (0..n).map(|_| pick(&mut rng, &types)).collect();
        let values: Vec<Value> = columns.iter().map(|ty| value_or_null(&mut rng, *ty)).collect();
        let mut row = Vec::new();
        encode_row_with(&columns, &values, &mut row, &mut |b| store.spill(b)).unwrap();
        let wanted: Vec<bool> = (0..n).map(|_| rng.chance(1, 2)).collect();
        let expected: Vec<Value> = values
            .iter()
            .zip(&wanted)
            .map(|(v, w)| if *w { v.clone() } else { Value::Null })
            .collect();
        let decoder = RowDecoder::new(&columns, Some(&wanted));
        let got = decoder.decode(&row, &mut |p| store.fetch(p)).unwrap();
        assert_eq!(got, expected, "round {round}: {columns:?}");
        assert!(got.capacity() > n, "room for the row locator");
        let all = RowDecoder::new(&columns, None).decode(&row, &mut |p| store.fetch(p)).unwrap();
        assert_eq!(all, values, "round {round}");
        // Decoded into a vector that holds another row (every column set, then as the
        // decoder left it) and a row locator after the columns: the same values, the
        // skipped columns NULL, the locator kept.
        let others: Vec<Value> = columns.iter().map(|ty| value_or_null(&mut rng, *ty)).collect();
        let mut other_row = Vec::new();
        encode_row_with(&columns, &others, &mut other_row, &mut |b| store.spill(b)).unwrap();
        let locator = Value::Binary(vec![round as u8; 3]);
        let mut reused = others.clone();
        reused.push(locator.clone());
        for bytes in [&row, &other_row, &row] {
            decoder.decode_into(bytes, &mut |p| store.fetch(p), &mut reused).unwrap();
        }
        assert_eq!(reused[..n], expected[..], "round {round}: {columns:?}");
        assert_eq!(reused[n], locator, "round {round}");
        // In two steps (a scan's filter columns, then the rest for the rows it keeps): the
        // first decoder's columns, then the second's put in beside them, are the same row.
        let first: Vec<bool> = wanted.iter().map(|&w| w && rng.chance(1, 2)).collect();
        let rest: Vec<bool> = wanted.iter().zip(&first).map(|(&w, &f)| w && !f).collect();
        let mut staged = others.clone();
        staged.push(locator.clone());
        RowDecoder::new(&columns, Some(&first))
            .decode_into(&row, &mut |p| store.fetch(p), &mut staged)
            .unwrap();
        let partial: Vec<Value> = values
            .iter()
            .zip(&first)
            .map(|(v, f)| if *f { v.clone() } else { Value::Null })
            .collect();
        assert_eq!(staged[..n], partial[..], "round {round}: {columns:?}");
        RowDecoder::new(&columns, Some(&rest))
            .decode_more_into(&row, &mut |p| store.fetch(p), &mut staged)
            .unwrap();
        assert_eq!(staged[..n], expected[..], "round {round}: {columns:?}");
        assert_eq!(staged[n], locator, "round {round}");
    }

    // A row written before two columns were added reads them as NULL.
    let old = [SqlType::Int, SqlType::VarChar(Len::N(10))];
    let new =
        [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::Date, SqlType::NVarChar(Len::Max)];
    let row = encode(&old, &[Value::Int(5), Value::Str("x".into())]);
    let decoder = RowDecoder::new(&new, Some(&[false, true, true, true]));
    assert_eq!(
        decoder.decode(&row, &mut |_| Err(RowError::Storage("none".into()))).unwrap(),
        [Value::Null, Value::Str("x".into()), Value::Null, Value::Null]
    );
    // Into a vector reused from a row of the new shape, its locator kept.
    let mut reused = vec![
        Value::Int(1),
        Value::Str("long text".into()),
        Value::Null,
        Value::NStr("n".into()),
        Value::Binary(vec![9]),
    ];
    decoder.decode_into(&row, &mut |_| Err(RowError::Storage("none".into())), &mut reused).unwrap();
    assert_eq!(
        reused,
        [Value::Null, Value::Str("x".into()), Value::Null, Value::Null, Value::Binary(vec![9])]
    );
    // The second step of a two-step decode of such a row: its columns, the others kept.
    let mut staged = vec![Value::Int(5), Value::Null, Value::Null, Value::Null];
    RowDecoder::new(&new, Some(&[false, true, true, false]))
        .decode_more_into(&row, &mut |_| Err(RowError::Storage("none".into())), &mut staged)
        .unwrap();
    assert_eq!(staged, [Value::Int(5), Value::Str("x".into()), Value::Null, Value::Null]);

    // What it decodes is checked; a variable column it skips is not read.
    let columns =
        [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::Bit, SqlType::VarChar(Len::N(10))];
    let good = encode(
        &columns,
        &[Value::Int(1), Value::Str("abc".into()), Value::Bit(true), Value::Str("de".into())],
    );
    let decode = |row: &[u8], wanted: &[bool]| {
        RowDecoder::new(&columns, Some(wanted))
            .decode(row, &mut |_| Err(RowError::Storage("none".into())))
    };
    let mut bad_text = good.clone();
    // The last column's data is the row's last two bytes.
    let last = bad_text.len() - 1;
    bad_text[last] = 0xff;
    assert!(matches!(decode(&bad_text, &[false, false, false, true]), Err(RowError::Corrupt(_))));
    assert_eq!(
        decode(&bad_text, &[true, true, false, false]).unwrap()[1],
        Value::Str("abc".into())
    );
    let mut bad_bit = good.clone();
    bad_bit[10] = 2;
    assert!(matches!(decode(&bad_bit, &[false, false, true, false]), Err(RowError::Corrupt(_))));
    let mut bad_status = good.clone();
    bad_status[0] = 0x01;
    assert!(matches!(decode(&bad_status, &[true, false, false, false]), Err(RowError::Corrupt(_))));
    let mut truncated = good;
    truncated.pop();
    assert!(matches!(decode(&truncated, &[true, false, false, false]), Err(RowError::Corrupt(_))));
}

// ---------------------------------------------------------------------------------------------
// Keys

#[test]
fn key_order_matches_compare_for_each_type() {
    let mut rng = SplitMix64::new(7);
    for ty in all_types() {
        let types = [ty];
        let values: Vec<Value> = (0..250).map(|_| value_or_null(&mut rng, ty)).collect();
        let keys: Vec<Vec<u8>> =
            values.iter().map(|v| key(&types, std::slice::from_ref(v))).collect();
        for i in 0..values.len() {
            for j in 0..values.len() {
                let want = cmp_tuples(&values[i..=i], &values[j..=j]);
                assert_eq!(keys[i].cmp(&keys[j]), want, "{ty}: {:?} vs {:?}", values[i], values[j]);
            }
        }
    }
}

#[test]
fn key_order_matches_compare_for_tuples() {
    let mut rng = SplitMix64::new(8);
    let all = all_types();
    let mut pairs = 0;
    for _ in 0..60 {
        let n = 1 + rng.below(4) as usize;
        let types: Vec<SqlType> = (0..n).map(|_| pick(&mut rng, &all)).collect();
        let tuples: Vec<Vec<Value>> = (0..80)
            .map(|_| types.iter().map(|ty| value_or_null(&mut rng, *ty)).collect())
            .collect();
        let keys: Vec<Vec<u8>> = tuples.iter().map(|t| key(&types, t)).collect();
        for i in 0..tuples.len() {
            for j in 0..tuples.len() {
                let want = cmp_tuples(&tuples[i], &tuples[j]);
                assert_eq!(
                    keys[i].cmp(&keys[j]),
                    want,
                    "{types:?}: {:?} vs {:?}",
                    tuples[i],
                    tuples[j]
                );
                pairs += 1;
            }
        }
    }
    assert!(pairs > 100_000);
}

#[test]
fn key_applies_the_collation_and_scales() {
    let vc = [SqlType::VarChar(Len::N(10))];
    assert_eq!(key(&vc, &[Value::Str("abc".into())]), key(&vc, &[Value::Str("ABC ".into())]));
    assert_ne!(key(&vc, &[Value::Str("abc".into())]), key(&vc, &[Value::Str(" abc".into())]));
    assert!(key(&vc, &[Value::Str("ab".into())]) < key(&vc, &[Value::Str("ab\0".into())]));
    assert!(key(&vc, &[Value::Null]) < key(&vc, &[Value::Str(String::new())]));
    let two = [SqlType::VarChar(Len::N(10)), SqlType::Int];
    // The terminator keeps the next column's bytes away from the string's.
    assert!(
        key(&two, &[Value::Str("a".into()), Value::Int(i32::MAX)])
            < key(&two, &[Value::Str("a\u{1}".into()), Value::Int(i32::MIN)])
    );
    let d = [SqlType::Decimal { precision: 10, scale: 2 }];
    assert_eq!(key(&d, &[Value::Decimal(dec("1.5"))]), key(&d, &[Value::Decimal(dec("1.50"))]));
    assert!(key(&d, &[Value::Decimal(dec("-0.01"))]) < key(&d, &[Value::Decimal(dec("0"))]));
    let f = [SqlType::Float];
    assert_eq!(key(&f, &[Value::Float(-0.0)]), key(&f, &[Value::Float(0.0)]));
    assert!(key(&f, &[Value::Float(-1e-300)]) < key(&f, &[Value::Float(0.0)]));
    let mut out = Vec::new();
    assert!(matches!(
        encode_key(
            &[SqlType::Decimal { precision: 10, scale: 2 }],
            &[Value::Decimal(dec("0.001"))],
            &mut out
        ),
        Err(RowError::InvalidValue { column: 0, .. })
    ));
    assert!(matches!(
        encode_key(&[SqlType::Int], &[Value::BigInt(1)], &mut out),
        Err(RowError::TypeMismatch { .. })
    ));
    assert!(out.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Speed

/// Run with `cargo test --release -p walden-engine --test types -- --ignored --nocapture`.
#[test]
#[ignore]
fn row_encode_and_decode_column_are_fast() {
    let columns = [SqlType::Int, SqlType::Int, SqlType::VarChar(Len::N(20))];
    let values = [Value::Int(12_345), Value::Int(-7), Value::Str("hello, walden".into())];
    let mut out = Vec::with_capacity(64);
    let n = 2_000_000u32;
    let start = Instant::now();
    for _ in 0..n {
        out.clear();
        encode_row(std::hint::black_box(&columns), std::hint::black_box(&values), &mut out)
            .unwrap();
        std::hint::black_box(&out);
    }
    let encode_ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    let start = Instant::now();
    let mut sum = 0i64;
    for _ in 0..n {
        if let Value::Int(x) =
            decode_column(std::hint::black_box(&columns), std::hint::black_box(&out), 1).unwrap()
        {
            sum += i64::from(x);
        }
    }
    let fixed_ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(
            decode_column(std::hint::black_box(&columns), std::hint::black_box(&out), 2).unwrap(),
        );
    }
    let var_ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    let start = Instant::now();
    let types = [SqlType::Int, SqlType::VarChar(Len::N(20))];
    let kv = [Value::Int(12_345), Value::Str("Hello, Walden".into())];
    for _ in 0..n {
        out.clear();
        encode_key(std::hint::black_box(&types), std::hint::black_box(&kv), &mut out).unwrap();
        std::hint::black_box(&out);
    }
    let key_ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    println!(
        "encode_row {encode_ns:.1} ns, decode_column(INT) {fixed_ns:.1} ns, \
         decode_column(VARCHAR) {var_ns:.1} ns, encode_key(INT, VARCHAR) {key_ns:.1} ns ({sum})"
    );
    assert!(encode_ns < 100.0 && fixed_ns < 100.0, "too slow");
}

#[test]
fn datetimeoffset_row_bytes_match_the_document() {
    let v = Value::DateTimeOffset(DateTimeOffset::parse("2024-03-01 08:30 +02:00").unwrap());
    let row = encode(&[SqlType::DateTimeOffset(0)], &[v]);
    let doc = include_str!("../../../docs/format/row.md");
    assert!(doc.contains("`68 5B 00` (06:30 UTC = 23,400 s) `81 46 0B` (day 738,945) `78 00`"));
    let field = [0x68, 0x5B, 0x00, 0x81, 0x46, 0x0B, 0x78, 0x00];
    assert!(row.windows(field.len()).any(|w| w == field), "{row:02X?}");
}

#[test]
fn sql_variant_rows_keep_the_base_type_and_match_the_document() {
    let columns = [SqlType::Int, SqlType::Variant];
    let doc = include_str!("../../../docs/format/row.md");
    assert!(doc.contains("An INT 42 is `38 00 00 00 2A 00 00 00`; N'ab' is `E7 02 00 00 61 62`"));
    for (value, stored) in [
        (Value::Int(42), vec![0x38, 0, 0, 0, 0x2A, 0, 0, 0]),
        (Value::NStr("ab".into()), vec![0xE7, 0x02, 0x00, 0x00, 0x61, 0x62]),
    ] {
        let row = encode(&columns, &[Value::Int(1), value.clone()]);
        assert!(row.windows(stored.len()).any(|w| w == stored), "{row:02X?}");
        assert_eq!(decode_row(&columns, &row).unwrap(), vec![Value::Int(1), value]);
    }
    for value in [
        Value::Decimal(dec("-12.50")),
        Value::DateTimeOffset(DateTimeOffset::parse("2024-03-01 08:30 +02:00").unwrap()),
        Value::Binary(vec![1, 2, 3]),
        Value::Str(String::new()),
        Value::Guid(guid("6F9619FF-8B86-D011-B42D-00C04FC964FF")),
        Value::Null,
    ] {
        let row = encode(&columns, &[Value::Int(1), value.clone()]);
        assert_eq!(decode_row(&columns, &row).unwrap(), vec![Value::Int(1), value]);
    }
    let too_long = Value::Str("x".repeat(8001));
    let mut out = Vec::new();
    assert!(encode_row(&columns, &[Value::Int(1), too_long], &mut out).is_err());
}
