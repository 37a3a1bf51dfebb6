//! Conversions to character strings, binary strings and UNIQUEIDENTIFIER. Strings and binary
//! strings are cut to the target length; an integer that does not fit a shorter CHAR/VARCHAR
//! becomes `*`, and one that does not fit an NCHAR/NVARCHAR is Msg 8115. Styles choose the text
//! form of dates, money, floats and binary, as in SQL Server.

use walden_engine::types::{encode_cp1252, Guid, Len, SqlType, Value};

use super::super::text::{binary_text, float_text, money_text, temporal_text};
use super::super::types::{type_label, value_label};
use super::{error_converting, overflow_converting, type_clash};
use crate::exec::SqlError;

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
pub(super) fn to_string(
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
        Value::Xml(x) => super::super::xml::text_of(&x),
        Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Bit(_) => {
            let s = super::super::text::to_text(&v);
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
                other => super::super::text::to_text(other),
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

pub(super) fn to_binary(v: Value, to: SqlType, style: Option<i32>) -> Result<Value, SqlError> {
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

pub(super) fn to_guid(v: Value) -> Result<Value, SqlError> {
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
