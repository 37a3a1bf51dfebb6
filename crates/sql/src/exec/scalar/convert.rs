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

use walden_engine::types::{DeclaredType, Len, SqlType, Value};

use super::types::{type_label, value_label};
use crate::exec::SqlError;

mod character;
mod datetime;
mod numeric;

use character::{to_binary, to_guid, to_string};
pub(crate) use datetime::parse_temporal_text;
use datetime::{out_of_range, to_datetime, to_datetimeoffset, to_moment};
pub(crate) use numeric::{
    float_to_decimal, parse_float_text, parse_money_text, text_to_decimal, to_float,
};
use numeric::{to_bit, to_decimal, to_int, to_money};

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
