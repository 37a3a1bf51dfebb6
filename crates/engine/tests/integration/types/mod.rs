//! Tests of `walden_engine::types`: SQL types, values, comparison, the row format (checked
//! against `docs/format/row.md`) and the key encoding (checked against `compare`).

// Tests may unwrap; clippy's test exemption covers `#[test]` functions, not their helpers.
#![allow(clippy::unwrap_used)]

use std::cmp::Ordering;
use std::time::Instant;

use walden_engine::types::*;
use walden_io::SplitMix64;

mod compare;
mod decimal;
mod guid;
mod key;
mod row;
mod sql_type;
mod temporal;

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
