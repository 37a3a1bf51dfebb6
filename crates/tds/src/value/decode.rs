//! Decoding a value under its [`TypeInfo`]: fixed-length types, byte-length types and PLP
//! streams. Every length is checked against the type and every temporal value against its
//! range before anything is built, so a decoded value always re-encodes, and a length longer
//! than the input is reported as truncated before anything is allocated for it.

use super::encode::valid_datetime;
use super::variant::decode_variant;
use super::{
    units_per_day, Decimal, TdsValue, Time, MAX_DATE_DAYS, MAX_OFFSET_MINUTES, PLP_NULL,
    PLP_UNKNOWN_LEN,
};
use crate::tvp::decode_table;
use crate::types::{time_len, TypeInfo, MAX_PRECISION};
use crate::wire::{decode_utf16, Reader};
use crate::TdsError;

/// Decodes a TYPE_VARBYTE of type `ty`.
pub(crate) fn decode_value(ty: &TypeInfo, r: &mut Reader<'_>) -> Result<TdsValue, TdsError> {
    use TdsValue as V;
    use TypeInfo as T;
    const DATA: &str = "value";
    let bad = |what| TdsError::Malformed { what };
    if ty.is_fixed_len() {
        return decode_fixed(ty, r);
    }
    if let T::Variant { max_len } = *ty {
        return decode_variant(max_len, r);
    }
    if let T::Tvp = *ty {
        return Ok(V::Table(Box::new(decode_table(r)?)));
    }
    if ty.is_plp() {
        return Ok(match decode_plp(r)? {
            None => V::Null,
            Some(bytes) => bytes_value(ty, bytes)?,
        });
    }
    match *ty {
        T::BigVarChar { max_len: max, .. }
        | T::BigChar { len: max, .. }
        | T::NVarChar { max_len: max, .. }
        | T::NChar { len: max, .. }
        | T::BigVarBinary { max_len: max }
        | T::BigBinary { len: max } => {
            let len = r.u16_le("value length")?;
            if len == u16::MAX {
                return Ok(V::Null);
            }
            if len > max {
                return Err(bad("value longer than its declared type"));
            }
            bytes_value(ty, r.take(usize::from(len), DATA)?.to_vec())
        }
        T::Text { .. } | T::NText { .. } | T::Image { .. } => {
            let len = r.u32_le("value length")?;
            if len == u32::MAX {
                return Ok(V::Null);
            }
            // The declared maximum is not checked: these types have no length of their own
            // (the maximum is 2^31 - 1), and tedious declares an NTEXT parameter's length in
            // characters, half its bytes. The message size limit bounds the value.
            let len = usize::try_from(len).map_err(|_| TdsError::Truncated { what: DATA })?;
            bytes_value(ty, r.take(len, DATA)?.to_vec())
        }
        _ => decode_bytelen(ty, r),
    }
}

/// The fixed-length types: the value alone, no length and no NULL.
fn decode_fixed(ty: &TypeInfo, r: &mut Reader<'_>) -> Result<TdsValue, TdsError> {
    use TdsValue as V;
    use TypeInfo as T;
    const DATA: &str = "value";
    Ok(match ty {
        T::Int1 => V::TinyInt(r.u8(DATA)?),
        T::Bit => V::Bit(r.u8(DATA)? != 0),
        T::Int2 => V::SmallInt(r.i16_le(DATA)?),
        T::Int4 => V::Int(r.i32_le(DATA)?),
        T::Int8 => V::BigInt(r.i64_le(DATA)?),
        T::Flt4 => V::Real(f32::from_bits(r.u32_le(DATA)?)),
        T::Flt8 => V::Float(f64::from_bits(r.u64_le(DATA)?)),
        T::Money => {
            let high = r.i32_le(DATA)?;
            let low = r.u32_le(DATA)?;
            V::Money((i64::from(high) << 32) | i64::from(low))
        }
        T::Money4 => V::Money(i64::from(r.i32_le(DATA)?)),
        T::DateTime => {
            let (days, ticks) = (r.i32_le(DATA)?, r.u32_le(DATA)?);
            if !valid_datetime(days, ticks) {
                return Err(TdsError::Malformed { what: "DATETIME value" });
            }
            V::DateTime { days, ticks }
        }
        T::DateTime4 => {
            let days = u16::from_le_bytes(r.array(DATA)?);
            let minutes = u16::from_le_bytes(r.array(DATA)?);
            if minutes >= 24 * 60 {
                return Err(TdsError::Malformed { what: "SMALLDATETIME value" });
            }
            V::SmallDateTime { days, minutes }
        }
        // NULLTYPE has no bytes; no other type reaches here (see `is_fixed_len`).
        _ => V::Null,
    })
}

/// The BYTELEN nullable types: a length byte (0 for NULL), then the value.
fn decode_bytelen(ty: &TypeInfo, r: &mut Reader<'_>) -> Result<TdsValue, TdsError> {
    use TdsValue as V;
    use TypeInfo as T;
    const DATA: &str = "value";
    let bad = |what| TdsError::Malformed { what };
    let len = r.u8("value length")?;
    if len == 0 {
        return Ok(V::Null);
    }
    let mut d = r.sub(usize::from(len), DATA)?;
    let value = match (*ty, len) {
        (T::IntN(max), _) if len > max => return Err(bad("INTN value length")),
        (T::IntN(_), 1) => V::TinyInt(d.u8(DATA)?),
        (T::IntN(_), 2) => V::SmallInt(d.i16_le(DATA)?),
        (T::IntN(_), 4) => V::Int(d.i32_le(DATA)?),
        (T::IntN(_), 8) => V::BigInt(d.i64_le(DATA)?),
        (T::BitN, 1) => V::Bit(d.u8(DATA)? != 0),
        (T::FltN(max), _) if len > max => return Err(bad("FLTN value length")),
        (T::FltN(_), 4) => V::Real(f32::from_bits(d.u32_le(DATA)?)),
        (T::FltN(_), 8) => V::Float(f64::from_bits(d.u64_le(DATA)?)),
        (T::MoneyN(max), _) if len > max => return Err(bad("MONEYN value length")),
        (T::MoneyN(_), 4) => decode_value(&T::Money4, &mut d)?,
        (T::MoneyN(_), 8) => decode_value(&T::Money, &mut d)?,
        (T::DateTimeN(max), _) if len > max => return Err(bad("DATETIMN value length")),
        (T::DateTimeN(_), 4) => decode_value(&T::DateTime4, &mut d)?,
        (T::DateTimeN(_), 8) => decode_value(&T::DateTime, &mut d)?,
        (T::Guid, 16) => V::Guid(d.array(DATA)?),
        // Any length from a sign and one magnitude byte up to 17: [MS-TDS] 2.2.5.5.1.4 only
        // bounds it by the precision, and mssql-jdbc sends the shortest that holds the value
        // (the precision check below still refuses what the type cannot hold).
        (T::Decimal { precision, scale } | T::Numeric { precision, scale }, 2..=17) => {
            let positive = match d.u8(DATA)? {
                0 => false,
                1 => true,
                _ => return Err(bad("DECIMAL sign")),
            };
            let mut magnitude = [0u8; 16];
            magnitude[..usize::from(len) - 1].copy_from_slice(d.rest());
            let magnitude = i128::try_from(u128::from_le_bytes(magnitude))
                .map_err(|_| bad("DECIMAL magnitude"))?;
            if magnitude.unsigned_abs() >= 10u128.pow(u32::from(precision.min(MAX_PRECISION))) {
                return Err(bad("DECIMAL value exceeds its precision"));
            }
            let value = if positive { magnitude } else { -magnitude };
            V::Decimal(Decimal { value, precision, scale })
        }
        (T::Date, 3) => V::Date(date(&mut d)?),
        (T::Time { scale }, _) if usize::from(len) == time_len(scale) => {
            V::Time(time(&mut d, scale)?)
        }
        (T::DateTime2 { scale }, _) if usize::from(len) == time_len(scale) + 3 => {
            let time = time(&mut d, scale)?;
            V::DateTime2 { date: date(&mut d)?, time }
        }
        (T::DateTimeOffset { scale }, _) if usize::from(len) == time_len(scale) + 5 => {
            let time = time(&mut d, scale)?;
            let date = date(&mut d)?;
            let offset_minutes = d.i16_le(DATA)?;
            if offset_minutes.unsigned_abs() > MAX_OFFSET_MINUTES.unsigned_abs() {
                return Err(bad("DATETIMEOFFSET offset"));
            }
            V::DateTimeOffset { date, time, offset_minutes }
        }
        _ => return Err(bad("value length for its type")),
    };
    d.finish("value")?;
    Ok(value)
}

pub(super) fn date(r: &mut Reader<'_>) -> Result<u32, TdsError> {
    let days = r.uint_le(3, "DATE value")? as u32;
    if days > MAX_DATE_DAYS {
        return Err(TdsError::Malformed { what: "DATE value" });
    }
    Ok(days)
}

pub(super) fn time(r: &mut Reader<'_>, scale: u8) -> Result<Time, TdsError> {
    let increments = r.uint_le(time_len(scale), "TIME value")?;
    if increments >= units_per_day(scale) {
        return Err(TdsError::Malformed { what: "TIME value" });
    }
    Ok(Time { increments, scale })
}

/// Wraps the bytes of a character or binary value in the value kind its type calls for.
fn bytes_value(ty: &TypeInfo, bytes: Vec<u8>) -> Result<TdsValue, TdsError> {
    Ok(match ty {
        TypeInfo::NVarChar { .. } | TypeInfo::NChar { .. } | TypeInfo::NText { .. } => {
            TdsValue::NVarChar(decode_utf16(&bytes)?)
        }
        // Clients may start an XML value with a byte-order mark.
        TypeInfo::Xml => {
            let bytes = bytes.strip_prefix(&[0xFF, 0xFE]).unwrap_or(&bytes);
            TdsValue::NVarChar(decode_utf16(bytes)?)
        }
        TypeInfo::BigVarChar { .. } | TypeInfo::BigChar { .. } | TypeInfo::Text { .. } => {
            TdsValue::VarChar(bytes)
        }
        _ => TdsValue::Binary(bytes),
    })
}

/// A PLP stream (PLP_BODY, 2.2.5.2): total length (or PLP_NULL / UNKNOWN_PLP_LEN), then chunks each
/// with a four-byte length, ended by a zero-length chunk. `None` is NULL.
fn decode_plp(r: &mut Reader<'_>) -> Result<Option<Vec<u8>>, TdsError> {
    let total = r.u64_le("PLP length")?;
    if total == PLP_NULL {
        return Ok(None);
    }
    let known = (total != PLP_UNKNOWN_LEN).then_some(total);
    if known.is_some_and(|t| t > r.remaining() as u64) {
        return Err(TdsError::Truncated { what: "PLP data" });
    }
    let mut data = Vec::with_capacity(known.map_or(0, |t| t as usize));
    loop {
        let chunk = r.u32_le("PLP chunk length")?;
        if chunk == 0 {
            break;
        }
        let chunk =
            usize::try_from(chunk).map_err(|_| TdsError::Truncated { what: "PLP chunk" })?;
        data.extend_from_slice(r.take(chunk, "PLP chunk")?);
    }
    if known.is_some_and(|t| t != data.len() as u64) {
        return Err(TdsError::Malformed { what: "PLP chunks do not add up to its length" });
    }
    Ok(Some(data))
}
