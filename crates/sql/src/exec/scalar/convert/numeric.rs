//! Conversions to the numeric types: the integers and BIT, DECIMAL, FLOAT/REAL and MONEY,
//! with the text forms each accepts. DECIMAL and FLOAT truncate into an integer, MONEY into an
//! integer and anything into DECIMAL or MONEY round half away from zero, and a value that does
//! not fit is Msg 8115 (or Msg 220 for an integer type), as the module docs say.

use walden_engine::types::{Decimal, ParseError, SqlType, Value, DATETIME_TICKS_PER_DAY};

use super::super::types::{type_label, value_label};
use super::{error_converting, overflow_converting, type_clash};
use crate::exec::SqlError;

fn int_range(to: SqlType) -> (i64, i64) {
    match to {
        SqlType::TinyInt => (0, 255),
        SqlType::SmallInt => (i64::from(i16::MIN), i64::from(i16::MAX)),
        SqlType::Int => (i64::from(i32::MIN), i64::from(i32::MAX)),
        _ => (i64::MIN, i64::MAX),
    }
}

/// An integer value of an integer type, known to be in its range.
fn make_int(to: SqlType, n: i64) -> Value {
    match to {
        SqlType::TinyInt => Value::TinyInt(n as u8),
        SqlType::SmallInt => Value::SmallInt(n as i16),
        SqlType::Int => Value::Int(n as i32),
        _ => Value::BigInt(n),
    }
}

/// SQL Server's string to integer: surrounding spaces ignored, an optional sign, then digits
/// only; an empty string or a lone sign is 0. `None` if the text is not such an integer.
/// Magnitudes beyond any integer type saturate, so the caller's range check fails.
pub(crate) fn parse_int_text(s: &str) -> Option<i128> {
    let t = s.trim_matches(' ');
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits
        .bytes()
        .fold(0i128, |acc, b| (acc * 10 + i128::from(b - b'0')).min(i128::from(u64::MAX)));
    Some(if negative { -magnitude } else { magnitude })
}

pub(super) fn to_int(v: Value, to: SqlType) -> Result<Value, SqlError> {
    let (min, max) = int_range(to);
    let label = type_label(&to);
    let in_range = |n: i128| i64::try_from(n).ok().filter(|n| (min..=max).contains(n));
    let n: i64 = match &v {
        Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_) => {
            let n = match v {
                Value::TinyInt(x) => i64::from(x),
                Value::SmallInt(x) => i64::from(x),
                Value::Int(x) => i64::from(x),
                Value::BigInt(x) => x,
                _ => 0,
            };
            if !(min..=max).contains(&n) {
                return Err(SqlError::new(
                    220,
                    format!("Arithmetic overflow error for data type {label}, value = {n}."),
                ));
            }
            n
        }
        Value::Bit(b) => i64::from(*b),
        Value::Decimal(d) => {
            let truncated = d.mantissa() / super::super::num::pow10(d.scale());
            in_range(truncated).ok_or_else(|| overflow_converting("numeric", label))?
        }
        Value::Float(_) | Value::Real(_) => {
            let x = match v {
                Value::Real(r) => f64::from(r),
                Value::Float(x) => x,
                _ => 0.0,
            };
            let t = x.trunc();
            // The narrower bounds are exact in f64; BIGINT's maximum rounds up to 2^63, which
            // is exactly the first value out of range, so `>= max + 1` rejects it too.
            if !t.is_finite() || t < min as f64 || t >= (max as f64) + 1.0 {
                return Err(overflow_converting(value_label(&v), label));
            }
            (t as i64).clamp(min, max)
        }
        Value::Money(m) => {
            let rounded = (i128::from(*m) + 5000 * i128::from(m.signum())) / 10_000;
            in_range(rounded).ok_or_else(|| overflow_converting("money", label))?
        }
        Value::Str(s) | Value::NStr(s) => {
            let from = value_label(&v);
            let n = parse_int_text(s).ok_or_else(|| SqlError::conversion(from, s, label))?;
            in_range(n).ok_or_else(|| match to {
                SqlType::TinyInt | SqlType::SmallInt => SqlError::new(
                    244,
                    format!(
                        "The conversion of the {from} value '{s}' overflowed an {} column. Use a \
                         larger integer column.",
                        if to == SqlType::TinyInt { "INT1" } else { "INT2" }
                    ),
                ),
                SqlType::Int => SqlError::new(
                    248,
                    format!(
                        "The conversion of the {from} value '{s}' overflowed an int column. Use \
                         a larger integer column."
                    ),
                ),
                _ => error_converting(from, label),
            })?
        }
        Value::Binary(bytes) => {
            // The rightmost bytes, big-endian, sign-extended from the type's width.
            let width = match to {
                SqlType::TinyInt => 1,
                SqlType::SmallInt => 2,
                SqlType::Int => 4,
                _ => 8,
            };
            let tail = &bytes[bytes.len().saturating_sub(width)..];
            let mut buf = [0u8; 8];
            buf[8 - tail.len()..].copy_from_slice(tail);
            let raw = u64::from_be_bytes(buf);
            match width {
                1 => i64::from(raw as u8),
                2 => i64::from(raw as u16 as i16),
                4 => i64::from(raw as u32 as i32),
                _ => raw as i64,
            }
        }
        Value::DateTime(dt) => {
            // Rounds to the nearest day: noon and later count as the next day.
            let n = i64::from(dt.days()) + i64::from(dt.ticks() >= DATETIME_TICKS_PER_DAY / 2);
            in_range(i128::from(n)).ok_or_else(|| overflow_converting("datetime", label))?
        }
        _ => return Err(type_clash(&v, &to)),
    };
    Ok(make_int(to, n))
}

pub(super) fn to_bit(v: Value) -> Result<Value, SqlError> {
    let b = match &v {
        Value::TinyInt(x) => *x != 0,
        Value::SmallInt(x) => *x != 0,
        Value::Int(x) => *x != 0,
        Value::BigInt(x) => *x != 0,
        Value::Bit(b) => *b,
        Value::Decimal(d) => d.mantissa() != 0,
        Value::Float(x) => *x != 0.0,
        Value::Real(x) => *x != 0.0,
        Value::Money(m) => *m != 0,
        Value::Str(s) | Value::NStr(s) => {
            let t = s.trim_matches(' ');
            if t.eq_ignore_ascii_case("true") {
                true
            } else if t.eq_ignore_ascii_case("false") {
                false
            } else {
                parse_int_text(s).ok_or_else(|| SqlError::conversion(value_label(&v), s, "bit"))?
                    != 0
            }
        }
        Value::Binary(bytes) => bytes.last().is_some_and(|b| *b != 0),
        Value::DateTime(dt) => dt.days() != 0 || dt.ticks() != 0,
        _ => return Err(type_clash(&v, &SqlType::Bit)),
    };
    Ok(Value::Bit(b))
}

/// A float at `scale` decimals, rounded; `None` if not finite or beyond 38 digits.
pub(crate) fn float_to_decimal(x: f64, scale: u8) -> Option<Decimal> {
    if !x.is_finite() {
        return None;
    }
    Decimal::parse(&format!("{:.*}", usize::from(scale), x)).ok()
}

/// Text as a decimal at the scale it was written with: Msg 8114 if it is not a number, 8115
/// if it has more than 38 digits.
pub(crate) fn text_to_decimal(s: &str, from: &str) -> Result<Decimal, SqlError> {
    Decimal::parse(s.trim_matches(' ')).map_err(|e| match e {
        ParseError::Invalid => error_converting(from, "numeric"),
        ParseError::OutOfRange => overflow_converting(from, "numeric"),
    })
}

pub(super) fn to_decimal(v: Value, precision: u8, scale: u8) -> Result<Value, SqlError> {
    let from = value_label(&v);
    let overflow = || overflow_converting(from, "numeric");
    let d = match &v {
        Value::TinyInt(x) => Decimal::from_i64(i64::from(*x)),
        Value::SmallInt(x) => Decimal::from_i64(i64::from(*x)),
        Value::Int(x) => Decimal::from_i64(i64::from(*x)),
        Value::BigInt(x) => Decimal::from_i64(*x),
        Value::Bit(b) => Decimal::from_i64(i64::from(*b)),
        Value::Decimal(d) => *d,
        Value::Float(_) | Value::Real(_) | Value::DateTime(_) => {
            float_to_decimal(to_float(&v)?, scale).ok_or_else(overflow)?
        }
        Value::Money(m) => Decimal::new(i128::from(*m), 4).ok_or_else(overflow)?,
        Value::Str(s) | Value::NStr(s) => text_to_decimal(s, from)?,
        _ => return Err(type_clash(&v, &SqlType::Decimal { precision, scale })),
    };
    let converted = d.to_type(precision, scale).ok_or_else(overflow)?;
    // Under NUMERIC_ROUNDABORT an exact number that loses digits is SQL Server's overflow.
    let exact_source = matches!(v, Value::Decimal(_) | Value::Money(_));
    if exact_source
        && converted.cmp_value(&d).is_ne()
        && super::super::settings::current().numeric_roundabort
    {
        return Err(overflow());
    }
    Ok(Value::Decimal(converted))
}

/// SQL Server's string to float: surrounding spaces ignored, `[sign] digits [. digits]
/// [e [sign] digits]` (either side of the point may be empty, not both); empty is 0.
pub(crate) fn parse_float_text(s: &str) -> Option<f64> {
    let t = s.trim_matches(' ');
    if t.is_empty() {
        return Some(0.0);
    }
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    i += int_digits;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        i += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        i += usize::from(matches!(b.get(i), Some(b'+' | b'-')));
        let exp_digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits == 0 {
            return None;
        }
        i += exp_digits;
    }
    if i != b.len() {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// A value as a float (also the route from DATETIME, as days since 1900-01-01).
pub(crate) fn to_float(v: &Value) -> Result<f64, SqlError> {
    Ok(match v {
        Value::TinyInt(x) => f64::from(*x),
        Value::SmallInt(x) => f64::from(*x),
        Value::Int(x) => f64::from(*x),
        Value::BigInt(x) => *x as f64,
        Value::Bit(b) => f64::from(u8::from(*b)),
        Value::Decimal(d) => d.to_f64(),
        Value::Float(x) => *x,
        Value::Real(x) => f64::from(*x),
        Value::Money(m) => *m as f64 / 10_000.0,
        Value::Str(s) | Value::NStr(s) => {
            parse_float_text(s).ok_or_else(|| error_converting(value_label(v), "float"))?
        }
        Value::DateTime(dt) => {
            f64::from(dt.days()) + f64::from(dt.ticks()) / f64::from(DATETIME_TICKS_PER_DAY)
        }
        _ => return Err(type_clash(v, &SqlType::Float)),
    })
}

/// SQL Server's string to money, in ten-thousandths: surrounding spaces, a sign and a currency
/// symbol (either order), digits with optional thousands commas, up to four decimals (more
/// are rounded). Empty is 0. `None` if the syntax is wrong.
pub(crate) fn parse_money_text(s: &str) -> Option<i128> {
    let mut t = s.trim_matches(' ');
    let mut negative = false;
    let mut signed = false;
    for _ in 0..2 {
        if let Some(rest) = t.strip_prefix('-') {
            (negative, signed, t) = (true, true, rest.trim_start_matches(' '));
        } else if let Some(rest) = t.strip_prefix('+') {
            (signed, t) = (true, rest.trim_start_matches(' '));
        }
        if let Some(rest) = t.strip_prefix(['$', '£', '€', '¥']) {
            t = rest.trim_start_matches(' ');
        }
        if signed {
            break;
        }
    }
    if t.is_empty() {
        return Some(0);
    }
    let (int_part, frac_part) = t.split_once('.').unwrap_or((t, ""));
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit() || b == b',')
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let cap = i128::from(u64::MAX);
    let units = int_part
        .bytes()
        .filter(|b| *b != b',')
        .fold(0i128, |acc, b| (acc * 10 + i128::from(b - b'0')).min(cap));
    let frac = frac_part.bytes().chain(std::iter::repeat(b'0')).take(5).collect::<Vec<_>>();
    let ten_thousandths = frac[..4].iter().fold(0i128, |acc, b| acc * 10 + i128::from(b - b'0'));
    let value = units * 10_000 + ten_thousandths + i128::from(frac[4] >= b'5');
    Some(if negative { -value } else { value })
}

pub(super) fn to_money(v: &Value) -> Result<i64, SqlError> {
    let from = value_label(v);
    let overflow = || overflow_converting(from, "money");
    let fits = |n: i128| i64::try_from(n).map_err(|_| overflow());
    match v {
        Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Bit(_) => {
            let n = match v {
                Value::TinyInt(x) => i128::from(*x),
                Value::SmallInt(x) => i128::from(*x),
                Value::Int(x) => i128::from(*x),
                Value::BigInt(x) => i128::from(*x),
                Value::Bit(b) => i128::from(*b),
                _ => 0,
            };
            fits(n * 10_000)
        }
        Value::Decimal(d) => fits(d.rescale(4).ok_or_else(overflow)?.mantissa()),
        Value::Money(m) => Ok(*m),
        Value::Str(s) | Value::NStr(s) => {
            let n = parse_money_text(s).ok_or_else(|| {
                SqlError::new(
                    235,
                    "Cannot convert a char value to money. The char value has incorrect syntax.",
                )
            })?;
            fits(n)
        }
        Value::Float(_) | Value::Real(_) | Value::DateTime(_) => {
            let x = (to_float(v)? * 10_000.0).round();
            if !x.is_finite() || x < i64::MIN as f64 || x >= i64::MAX as f64 {
                return Err(overflow());
            }
            Ok(x as i64)
        }
        _ => Err(type_clash(v, &SqlType::Money)),
    }
}
