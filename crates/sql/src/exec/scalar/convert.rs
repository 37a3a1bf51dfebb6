//! Conversions: `CAST`/`CONVERT`, `TRY_CAST`/`TRY_CONVERT`, and the implicit conversion of a
//! value stored into a column or variable.
//!
//! # Which conversions exist
//!
//! SQL Server's conversion chart, restricted to Walden's types: numbers convert among
//! themselves and to DATETIME; character strings to and from everything (to binary only
//! explicitly); integers and BIT to and from binary strings; binary strings to and from
//! UNIQUEIDENTIFIER; the date/time types among themselves except DATE and TIME with each other;
//! DATETIME to numbers explicitly. Anything else is Msg 529 explicitly and Msg 206 ("Operand type
//! clash") implicitly; an explicit-only conversion done implicitly is Msg 257.
//!
//! SQL Server also converts DECIMAL, FLOAT and MONEY to binary strings and back, and binary
//! strings to DATETIME, by exposing its internal byte layouts; Walden does not (Msg 529).
//!
//! # Rounding and truncation
//!
//! As in SQL Server: DECIMAL and FLOAT to an integer truncate, MONEY to an integer and anything to
//! DECIMAL or MONEY round half away from zero, DATETIME to an integer rounds to the nearest day.
//! Integers that do not fit a shorter CHAR/VARCHAR become `*`; decimals, floats and money that do
//! not fit are Msg 8115, as are integers into a too-short NCHAR/NVARCHAR. Strings, binary strings
//! and dates are cut to the target length.

use walden_engine::types::{
    encode_cp1252, Date, DateTime, DateTime2, DateTimeOffset, Decimal, DeclaredType, Guid, Len,
    ParseError, SqlType, Time, Value, DATETIME_TICKS_PER_DAY, MAX_TIME_SCALE,
};

use super::temporal::{self, DateOrder, Parsed};
use super::text::{binary_text, float_text, money_text, temporal_text};
use super::types::{type_label, value_label};
use crate::exec::SqlError;

/// Kinds of values, for the conversion chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Int,
    Bit,
    Decimal,
    Float,
    Money,
    Text,
    Binary,
    Date,
    Time,
    DateTime,
    DateTime2,
    DateTimeOffset,
    Guid,
    /// SQL_VARIANT, as a target only: a value always has its own base type.
    Variant,
    Xml,
}

/// How SQL Server allows a conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Allowed {
    Implicit,
    Explicit,
    No,
}

fn value_family(v: &Value) -> Option<Family> {
    Some(match v {
        Value::Null => return None,
        Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_) => Family::Int,
        Value::Bit(_) => Family::Bit,
        Value::Decimal(_) => Family::Decimal,
        Value::Float(_) | Value::Real(_) => Family::Float,
        Value::Money(_) => Family::Money,
        Value::Str(_) | Value::NStr(_) => Family::Text,
        Value::Binary(_) => Family::Binary,
        Value::Date(_) => Family::Date,
        Value::Time(_) => Family::Time,
        Value::DateTime(_) => Family::DateTime,
        Value::DateTime2(_) => Family::DateTime2,
        Value::DateTimeOffset(_) => Family::DateTimeOffset,
        Value::Guid(_) => Family::Guid,
        Value::Xml(_) => Family::Xml,
    })
}

fn type_family(t: &SqlType) -> Family {
    match t {
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt => Family::Int,
        SqlType::Bit => Family::Bit,
        SqlType::Decimal { .. } => Family::Decimal,
        SqlType::Float | SqlType::Real => Family::Float,
        SqlType::Money => Family::Money,
        SqlType::Char(_) | SqlType::VarChar(_) | SqlType::NChar(_) | SqlType::NVarChar(_) => {
            Family::Text
        }
        SqlType::Binary(_) | SqlType::VarBinary(_) => Family::Binary,
        SqlType::Date => Family::Date,
        SqlType::Time(_) => Family::Time,
        SqlType::DateTime => Family::DateTime,
        SqlType::DateTime2(_) => Family::DateTime2,
        SqlType::DateTimeOffset(_) => Family::DateTimeOffset,
        SqlType::UniqueIdentifier => Family::Guid,
        SqlType::Variant => Family::Variant,
        SqlType::Xml => Family::Xml,
    }
}

fn allowed(from: Family, to: Family) -> Allowed {
    use Family::*;
    match (from, to) {
        (a, b) if a == b => Allowed::Implicit,
        // SQL Server's chart: text and binary strings become xml implicitly, xml becomes them
        // only explicitly, and no other type converts either way (not even to SQL_VARIANT).
        (Text | Binary, Xml) => Allowed::Implicit,
        (Xml, Text | Binary) => Allowed::Explicit,
        (Xml, _) | (_, Xml) => Allowed::No,
        (_, Variant) => Allowed::Implicit,
        (Text, Binary) => Allowed::Explicit,
        (Text, _) | (_, Text) => Allowed::Implicit,
        (Int | Bit | Decimal | Float | Money, Int | Bit | Decimal | Float | Money | DateTime) => {
            Allowed::Implicit
        }
        (Int | Bit, Binary) | (Binary, Int | Bit | Guid) | (Guid, Binary) => Allowed::Implicit,
        (
            Date | DateTime | DateTime2 | DateTimeOffset,
            Date | DateTime | DateTime2 | DateTimeOffset,
        ) => Allowed::Implicit,
        (
            Time | DateTime | DateTime2 | DateTimeOffset,
            Time | DateTime | DateTime2 | DateTimeOffset,
        ) => Allowed::Implicit,
        (DateTime, Int | Bit | Decimal | Float | Money) => Allowed::Explicit,
        _ => Allowed::No,
    }
}

/// Msg 529.
fn explicit_not_allowed(v: &Value, to: &SqlType) -> SqlError {
    SqlError::new(
        529,
        format!(
            "Explicit conversion from data type {} to {} is not allowed.",
            value_label(v),
            type_label(to)
        ),
    )
}

/// Msg 206, for a conversion that does not exist, needed implicitly.
pub(crate) fn type_clash(v: &Value, to: &SqlType) -> SqlError {
    SqlError::new(
        206,
        format!("Operand type clash: {} is incompatible with {}", value_label(v), type_label(to)),
    )
}

/// Msg 8115 for a conversion: `Arithmetic overflow error converting int to data type numeric.`
fn overflow_converting(from: &str, to: &str) -> SqlError {
    SqlError::new(8115, format!("Arithmetic overflow error converting {from} to data type {to}."))
}

/// Msg 8114: `Error converting data type varchar to numeric.`
fn error_converting(from: &str, to: &str) -> SqlError {
    SqlError::new(8114, format!("Error converting data type {from} to {to}."))
}

/// Msg 8152: a string or binary string too long for a column.
fn would_truncate() -> SqlError {
    SqlError::new(8152, "String or binary data would be truncated.")
}

/// Explicit conversion, as `CAST(v AS to)` or `CONVERT(to, v, style)`; `style` `None` is the
/// default style. NULL converts to NULL. See the module documentation for what converts and
/// how; a conversion SQL Server does not allow is Msg 529, a value that does not convert is
/// the error SQL Server raises for it (245, 8114, 241, 8115, 220...).
pub fn convert(v: Value, to: SqlType, style: Option<i32>) -> Result<Value, SqlError> {
    // An INT widened to BIGINT (`SUM(CAST(amount AS BIGINT))`, per row): always exact.
    if let (Value::Int(x), SqlType::BigInt) = (&v, &to) {
        return Ok(Value::BigInt(i64::from(*x)));
    }
    let Some(from) = value_family(&v) else {
        return Ok(Value::Null);
    };
    if allowed(from, type_family(&to)) == Allowed::No {
        return Err(explicit_not_allowed(&v, &to));
    }
    cast(v, to, style)
}

/// [`convert`] of a value whose declared type `from` is known (a column, variable or
/// CAST): a TIME, DATETIME2 or DATETIMEOFFSET of scale `s` becomes text with `s` fractional
/// digits, as SQL Server shows `CAST(CAST('00:00:00.1' AS time(1)) AS varchar)` as
/// `00:00:00.1`; everything else is [`convert`]'s.
pub fn convert_from(
    v: Value,
    from: Option<SqlType>,
    to: SqlType,
    style: Option<i32>,
) -> Result<Value, SqlError> {
    match text_scale(from, &v, to) {
        Some(scale) => to_string(v, to, style, Some(scale)),
        None => convert(v, to, style),
    }
}

/// [`try_convert`] with [`convert_from`]'s text of a declared scale.
pub fn try_convert_from(
    v: Value,
    from: Option<SqlType>,
    to: SqlType,
    style: Option<i32>,
) -> Result<Value, SqlError> {
    match text_scale(from, &v, to) {
        Some(_) => null_on_failure(convert_from(v, from, to, style)),
        None => try_convert(v, to, style),
    }
}

/// The fractional digits the text of `v` shows when it is converted from declared type
/// `from` to character type `to` (see [`convert_from`]); `None` when the conversion is
/// [`convert`]'s.
fn text_scale(from: Option<SqlType>, v: &Value, to: SqlType) -> Option<u8> {
    match to {
        SqlType::Char(_) | SqlType::VarChar(_) | SqlType::NChar(_) | SqlType::NVarChar(_) => {
            declared_scale(from, v)
        }
        _ => None,
    }
}

/// The fractional digits `from` declares for `v`, when `v` is a value of that type with
/// fewer than the kind's seven.
fn declared_scale(from: Option<SqlType>, v: &Value) -> Option<u8> {
    match (from?, v) {
        (SqlType::Time(s), Value::Time(_))
        | (SqlType::DateTime2(s), Value::DateTime2(_))
        | (SqlType::DateTimeOffset(s), Value::DateTimeOffset(_))
            if s < 7 =>
        {
            Some(s)
        }
        _ => None,
    }
}

/// `TRY_CAST` / `TRY_CONVERT`: NULL where [`convert`] fails on the value, but still Msg 529 for a
/// conversion that does not exist and Msg 281 for an invalid style.
pub fn try_convert(v: Value, to: SqlType, style: Option<i32>) -> Result<Value, SqlError> {
    let Some(from) = value_family(&v) else {
        return Ok(Value::Null);
    };
    if allowed(from, type_family(&to)) == Allowed::No {
        return Err(explicit_not_allowed(&v, &to));
    }
    null_on_failure(cast(v, to, style))
}

/// TRY_CAST's and TRY_CONVERT's outcome of a conversion: NULL where it failed, except for
/// error 281 (a style the conversion does not take), which they raise as SQL Server's do.
fn null_on_failure(converted: Result<Value, SqlError>) -> Result<Value, SqlError> {
    match converted {
        Err(e) if e.number == 281 => Err(e),
        Err(_) => Ok(Value::Null),
        ok => ok,
    }
}

/// `held`, already converted to the type that holds `declared`'s values, as a value of
/// `declared` (a SMALLDATETIME rounded to the minute; see [`DeclaredType::fit`]), with SQL
/// Server's error when it is out of that type's range. `source` is the kind of the value
/// before the conversion (`Value::kind_name`), which the errors name: a DATETIME past
/// SMALLDATETIME's range is 298, any other value 242, and SMALLMONEY's overflow 8115. Every
/// path that makes a value of a declared type (a column's store, a variable, CAST, a bulk
/// load) goes through here, so they round and refuse alike.
pub(crate) fn fit_declared(
    declared: DeclaredType,
    held: Value,
    source: &str,
) -> Result<Value, SqlError> {
    declared.fit(held).ok_or_else(|| match declared {
        DeclaredType::SmallMoney => SqlError::new(
            8115,
            format!(
                "Arithmetic overflow error converting {} to data type smallmoney.",
                if source == "decimal" { "numeric" } else { "expression" }
            ),
        ),
        _ if source == "datetime" => SqlError::new(
            298,
            "The conversion from datetime data type to smalldatetime data type resulted in a \
             smalldatetime overflow error.",
        ),
        _ => SqlError::new(
            242,
            format!(
                "The conversion of a {source} data type to a {} data type resulted in an \
                 out-of-range value.",
                declared.name()
            ),
        ),
    })
}

/// `e`, the error of a conversion to the type that holds `declared`'s values, as SQL Server
/// raises it for `declared` itself: a string that is no date or time is 241 for DATETIME but
/// 295 for SMALLDATETIME, which SQL Server names (a fraction of four digits, say, which
/// DATETIME's and SMALLDATETIME's strings may not have). Every other error is kept.
pub(crate) fn declared_conversion_error(declared: DeclaredType, e: SqlError) -> SqlError {
    match declared {
        DeclaredType::SmallDateTime if e.number == 241 => SqlError::new(
            295,
            "Conversion failed when converting character string to smalldatetime data type.",
        ),
        _ => e,
    }
}

/// Implicit conversion of a value stored into a column (`truncate == false`) or a variable
/// (`truncate == true`) of type `to`.
///
/// As [`convert`] with the default style, except that a conversion SQL Server allows only
/// explicitly is Msg 257 and one it does not allow at all Msg 206, and that a string or binary
/// string longer than a column's declared length is Msg 8152 (trailing spaces beyond the length
/// are dropped silently, as SQL Server does), where a variable just keeps what fits.
pub fn coerce(v: Value, to: SqlType, truncate: bool) -> Result<Value, SqlError> {
    let Some(from) = value_family(&v) else {
        return Ok(Value::Null);
    };
    match allowed(from, type_family(&to)) {
        Allowed::Implicit => {}
        Allowed::Explicit => {
            return Err(SqlError::new(
                257,
                format!(
                    "Implicit conversion from data type {} to {} is not allowed. Use the CONVERT \
                     function to run this query.",
                    value_label(&v),
                    type_label(&to)
                ),
            ))
        }
        Allowed::No => return Err(type_clash(&v, &to)),
    }
    if !truncate {
        check_fits(&v, &to)?;
    }
    cast(v, to, None)
}

/// Msg 8152 if a string or binary string is longer than a column's declared length, ignoring
/// trailing spaces of a string.
fn check_fits(v: &Value, to: &SqlType) -> Result<(), SqlError> {
    let limit = match to {
        SqlType::Char(n) | SqlType::NChar(n) | SqlType::Binary(n) => usize::from(*n),
        SqlType::VarChar(Len::N(n))
        | SqlType::NVarChar(Len::N(n))
        | SqlType::VarBinary(Len::N(n)) => usize::from(*n),
        _ => return Ok(()),
    };
    let too_long = match v {
        Value::Str(s) | Value::NStr(s) if to.is_text() => {
            let s = s.trim_end_matches(' ');
            if to.is_national() {
                s.len() > limit && s.encode_utf16().count() > limit
            } else {
                s.len() > limit
            }
        }
        Value::Binary(b) if !to.is_text() => b.len() > limit,
        _ => false,
    };
    if too_long {
        Err(would_truncate())
    } else {
        Ok(())
    }
}

/// The conversion itself, once the chart allows it.
fn cast(v: Value, to: SqlType, style: Option<i32>) -> Result<Value, SqlError> {
    match to {
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt => to_int(v, to),
        SqlType::Bit => to_bit(v),
        SqlType::Decimal { precision, scale } => to_decimal(v, precision, scale),
        SqlType::Float => to_float(&v).map(Value::Float),
        SqlType::Real => {
            let x = to_float(&v)?;
            // Rounding to the nearest f32 is the conversion; only leaving its range fails.
            let r = x as f32;
            if r.is_infinite() {
                return Err(overflow_converting(value_label(&v), "real"));
            }
            Ok(Value::Real(r))
        }
        SqlType::Money => to_money(&v).map(Value::Money),
        SqlType::Char(_) | SqlType::VarChar(_) | SqlType::NChar(_) | SqlType::NVarChar(_) => {
            to_string(v, to, style, None)
        }
        SqlType::Binary(_) | SqlType::VarBinary(_) => to_binary(v, to, style),
        SqlType::UniqueIdentifier => to_guid(v),
        SqlType::Date => to_moment(&v, &to, style).map(|m| Value::Date(m.date)),
        SqlType::Time(scale) => {
            to_moment(&v, &to, style).map(|m| Value::Time(m.time.round_to_scale(scale).0))
        }
        SqlType::DateTime2(scale) => {
            let m = to_moment(&v, &to, style)?;
            m.round_to_scale(scale)
                .map(Value::DateTime2)
                .ok_or_else(|| out_of_range(value_label(&v), "datetime2"))
        }
        SqlType::DateTimeOffset(scale) => to_datetimeoffset(&v, style)?
            .round_to_scale(scale)
            .map(Value::DateTimeOffset)
            .ok_or_else(|| out_of_range(value_label(&v), "datetimeoffset")),
        // The value keeps its type; one no SQL_VARIANT holds (over 8,000 bytes) is refused.
        SqlType::Variant => match walden_engine::types::variant_base_type(&v) {
            Some(_) => Ok(v),
            None => Err(type_clash(&v, &to)),
        },
        SqlType::DateTime => to_datetime(&v, style).map(Value::DateTime),
        SqlType::Xml => super::xml::to_xml(v, style),
    }
}

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

fn to_int(v: Value, to: SqlType) -> Result<Value, SqlError> {
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
            let truncated = d.mantissa() / super::num::pow10(d.scale());
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

fn to_bit(v: Value) -> Result<Value, SqlError> {
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

fn to_decimal(v: Value, precision: u8, scale: u8) -> Result<Value, SqlError> {
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
        && super::settings::current().numeric_roundabort
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

fn to_money(v: &Value) -> Result<i64, SqlError> {
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

/// Cuts text to `limit` (bytes, or UTF-16 code units for a national type) at a character
/// boundary, and pads a fixed-length type with spaces.
fn fit_text(mut s: String, limit: Option<u16>, pad: bool, national: bool) -> String {
    let Some(limit) = limit else {
        return s;
    };
    let limit = usize::from(limit);
    let mut used = 0;
    let mut cut = s.len();
    for (i, c) in s.char_indices() {
        let width = if national { c.len_utf16() } else { c.len_utf8() };
        if used + width > limit {
            cut = i;
            break;
        }
        used += width;
    }
    s.truncate(cut);
    if pad {
        s.extend(std::iter::repeat_n(' ', limit - used));
    }
    s
}

/// `v` as text of the character type `to`; `scale` is the fractional digits of a temporal
/// value's declared type ([`convert_from`]).
fn to_string(
    v: Value,
    to: SqlType,
    style: Option<i32>,
    scale: Option<u8>,
) -> Result<Value, SqlError> {
    let national = to.is_national();
    let (limit, pad) = match to {
        SqlType::Char(n) | SqlType::NChar(n) => (Some(n), true),
        SqlType::VarChar(Len::N(n)) | SqlType::NVarChar(Len::N(n)) => (Some(n), false),
        _ => (None, false),
    };
    let label = type_label(&to);
    let too_long = |s: &str| limit.is_some_and(|n| s.len() > usize::from(n));
    let text = match v {
        Value::Str(s) | Value::NStr(s) => s,
        Value::Xml(x) => super::xml::text_of(&x),
        Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Bit(_) => {
            let s = super::text::to_text(&v);
            if too_long(&s) {
                if national {
                    return Err(SqlError::overflow(label));
                }
                "*".to_string()
            } else {
                s
            }
        }
        Value::Decimal(_) | Value::Float(_) | Value::Real(_) | Value::Money(_) => {
            let s = match &v {
                Value::Float(x) => float_text(*x, style.unwrap_or(0)),
                Value::Real(x) => float_text(f64::from(*x), style.unwrap_or(0)),
                Value::Money(m) => money_text(*m, style.unwrap_or(0)),
                other => super::text::to_text(other),
            };
            if too_long(&s) {
                return Err(overflow_converting(value_label(&v), label));
            }
            s
        }
        Value::Binary(bytes) => binary_text(&bytes, style.unwrap_or(0), national),
        Value::Guid(g) => {
            if limit.is_some_and(|n| n < 36) {
                return Err(SqlError::new(
                    8170,
                    "Insufficient result space to convert uniqueidentifier value to char.",
                ));
            }
            g.to_string()
        }
        Value::Date(_)
        | Value::Time(_)
        | Value::DateTime(_)
        | Value::DateTime2(_)
        | Value::DateTimeOffset(_) => temporal_text(&v, style, scale)?,
        Value::Null => return Ok(Value::Null),
    };
    let text = fit_text(text, limit, pad, national);
    Ok(if national { Value::NStr(text) } else { Value::Str(text) })
}

fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
        .collect()
}

fn to_binary(v: Value, to: SqlType, style: Option<i32>) -> Result<Value, SqlError> {
    let (limit, fixed) = match to {
        SqlType::Binary(n) => (Some(usize::from(n)), true),
        SqlType::VarBinary(Len::N(n)) => (Some(usize::from(n)), false),
        _ => (None, false),
    };
    let from = value_label(&v);
    let hex = |s: &str| {
        let digits = if style == Some(1) {
            s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))
        } else {
            Some(s)
        };
        digits.and_then(parse_hex).ok_or_else(|| error_converting(from, type_label(&to)))
    };
    let (mut bytes, numeric) = match v {
        Value::Binary(b) => (b, false),
        Value::Str(s) | Value::NStr(s) if matches!(style, Some(1 | 2)) => (hex(&s)?, false),
        // A VARCHAR's bytes are its code page's (1252, the default collation's).
        Value::Str(s) => (encode_cp1252(&s), false),
        Value::NStr(s) => (s.encode_utf16().flat_map(u16::to_le_bytes).collect(), false),
        Value::TinyInt(x) => (vec![x], true),
        Value::SmallInt(x) => (x.to_be_bytes().to_vec(), true),
        Value::Int(x) => (x.to_be_bytes().to_vec(), true),
        Value::BigInt(x) => (x.to_be_bytes().to_vec(), true),
        Value::Bit(b) => (vec![u8::from(b)], true),
        Value::Guid(g) => (g.0.to_vec(), false),
        other => return Err(type_clash(&other, &to)),
    };
    if let Some(n) = limit {
        // Numbers keep their low-order (rightmost) bytes and grow on the left; other values
        // keep their first bytes and grow on the right.
        if bytes.len() > n {
            if numeric {
                bytes.drain(..bytes.len() - n);
            } else {
                bytes.truncate(n);
            }
        }
        if fixed && bytes.len() < n {
            if numeric {
                bytes.splice(0..0, std::iter::repeat_n(0, n - bytes.len()));
            } else {
                bytes.resize(n, 0);
            }
        }
    }
    Ok(Value::Binary(bytes))
}

fn to_guid(v: Value) -> Result<Value, SqlError> {
    match v {
        Value::Guid(g) => Ok(Value::Guid(g)),
        Value::Str(s) | Value::NStr(s) => Guid::parse(&s).map(Value::Guid).map_err(|_| {
            SqlError::new(
                8169,
                "Conversion failed when converting from a character string to uniqueidentifier.",
            )
        }),
        Value::Binary(mut b) => {
            b.resize(16, 0);
            let mut bytes = [0u8; 16];
            bytes.copy_from_slice(&b[..16]);
            Ok(Value::Guid(Guid(bytes)))
        }
        other => Err(type_clash(&other, &SqlType::UniqueIdentifier)),
    }
}

/// Msg 242: `The conversion of a varchar data type to a datetime data type resulted in an
/// out-of-range value.`
fn out_of_range(from: &str, to: &str) -> SqlError {
    SqlError::new(
        242,
        format!(
            "The conversion of a {from} data type to a {to} data type resulted in an out-of-range \
             value."
        ),
    )
}

/// Msg 241.
pub(crate) fn date_syntax_error() -> SqlError {
    SqlError::new(241, "Conversion failed when converting date and/or time from character string.")
}

/// Style 131's `d/mm/yyyy [time]` or style 130's `d month yyyy [time]` (the month's Arabic
/// name), the date in the Hijri calendar (`hijri.rs`).
fn parse_hijri_text(s: &str, style: i32) -> Result<Parsed, SqlError> {
    let s = s.trim();
    let (fields, time) = if style == 130 {
        let (day, rest) = s.split_once(char::is_whitespace).ok_or_else(date_syntax_error)?;
        let (month, rest) =
            super::hijri::month_prefix(rest.trim_start()).ok_or_else(date_syntax_error)?;
        let rest = rest.trim_start();
        let (year, time) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let number = |t: &str| t.parse::<u32>().map_err(|_| date_syntax_error());
        (vec![number(day)?, month, number(year)?], time)
    } else {
        let (date, time) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
        (date.split('/').filter_map(|f| f.trim().parse().ok()).collect(), time)
    };
    let [day, month, year] = fields.as_slice() else { return Err(date_syntax_error()) };
    let date = super::hijri::to_date(*year, *month, *day).ok_or_else(date_syntax_error)?;
    let time = match time.trim() {
        "" => None,
        t => temporal::parse(t, DateOrder::Mdy).map_err(|_| date_syntax_error())?.time,
    };
    Ok(Parsed { date: Some(date), time })
}

/// Parses date/time text for a conversion, with the field order of `style`.
pub(crate) fn parse_temporal_text(s: &str, style: Option<i32>) -> Result<Parsed, SqlError> {
    if let Some(style @ (130 | 131)) = style {
        return parse_hijri_text(s, style);
    }
    temporal::parse(s, DateOrder::of_style(style)).map_err(|_| date_syntax_error())
}

/// A date/time value (or date/time text) as a moment: a DATE at midnight, a TIME on
/// 1900-01-01, a DATETIME exactly (1/300 s to the nearest 100 ns).
fn to_moment(v: &Value, to: &SqlType, style: Option<i32>) -> Result<DateTime2, SqlError> {
    match v {
        Value::Date(d) => Ok(DateTime2::new(*d, Time::MIDNIGHT)),
        Value::Time(t) => Ok(DateTime2::new(Date::DEFAULT, *t)),
        Value::DateTime(dt) => Ok(dt.to_datetime2()),
        Value::DateTime2(dt) => Ok(*dt),
        // Its local date and time: the offset is dropped, not applied.
        Value::DateTimeOffset(dto) => Ok(dto.local()),
        Value::Str(s) | Value::NStr(s) => parse_temporal_text(s, style).map(Parsed::moment),
        other => Err(type_clash(other, to)),
    }
}

/// A value as a DATETIMEOFFSET: text with an optional trailing offset (`+02:00`, `Z`; none is
/// +00:00), or another date/time kind's moment at +00:00.
fn to_datetimeoffset(v: &Value, style: Option<i32>) -> Result<DateTimeOffset, SqlError> {
    let to = SqlType::DateTimeOffset(MAX_TIME_SCALE);
    let (local, offset) = match v {
        Value::DateTimeOffset(dto) => return Ok(*dto),
        Value::Str(s) | Value::NStr(s) => {
            let s = s.trim();
            let (rest, offset) = match DateTimeOffset::split_offset(s) {
                Ok(Some((rest, offset))) => (rest.trim_end(), offset),
                Ok(None) => (s, 0),
                Err(_) => return Err(date_syntax_error()),
            };
            (parse_temporal_text(rest, style)?.moment(), offset)
        }
        other => (to_moment(other, &to, style)?, 0),
    };
    DateTimeOffset::from_local(local, offset)
        .ok_or_else(|| out_of_range(value_label(v), "datetimeoffset"))
}

/// A number as a DATETIME: whole days since 1900-01-01 plus the fraction of a day.
fn number_to_datetime(v: &Value) -> Result<DateTime, SqlError> {
    let overflow = || SqlError::overflow("datetime");
    let (days, ticks) = match v {
        Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Bit(_) => {
            let days = match to_int(v.clone(), SqlType::Int) {
                Ok(Value::Int(d)) => d,
                _ => return Err(overflow()),
            };
            (days, 0)
        }
        _ => {
            let x = to_float(v)?;
            let days = x.floor();
            let ticks = ((x - days) * f64::from(DATETIME_TICKS_PER_DAY)).round();
            if !days.is_finite() || days.abs() > f64::from(i32::MAX) {
                return Err(overflow());
            }
            // days is integral and within i32; ticks within 0..=DATETIME_TICKS_PER_DAY.
            let (days, ticks) = (days as i32, ticks as u32);
            if ticks >= DATETIME_TICKS_PER_DAY {
                (days.checked_add(1).ok_or_else(overflow)?, ticks - DATETIME_TICKS_PER_DAY)
            } else {
                (days, ticks)
            }
        }
    };
    DateTime::from_parts(days, ticks).ok_or_else(overflow)
}

fn to_datetime(v: &Value, style: Option<i32>) -> Result<DateTime, SqlError> {
    let from = value_label(v);
    match v {
        Value::DateTime(dt) => Ok(*dt),
        Value::Str(s) | Value::NStr(s) => {
            let parsed = match style {
                Some(style @ (130 | 131)) => parse_hijri_text(s, style)?,
                _ => temporal::parse(s, DateOrder::of_style(style)).map_err(|e| match e {
                    ParseError::OutOfRange => out_of_range(from, "datetime"),
                    ParseError::Invalid => date_syntax_error(),
                })?,
            };
            if parsed.time.is_some_and(|(_, digits)| digits > 3) {
                return Err(date_syntax_error());
            }
            DateTime::from_datetime2(parsed.moment()).ok_or_else(|| out_of_range(from, "datetime"))
        }
        Value::Date(_) | Value::Time(_) | Value::DateTime2(_) | Value::DateTimeOffset(_) => {
            let moment = to_moment(v, &SqlType::DateTime, style)?;
            DateTime::from_datetime2(moment).ok_or_else(|| out_of_range(from, "datetime"))
        }
        _ => number_to_datetime(v),
    }
}
