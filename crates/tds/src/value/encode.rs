//! Encoding a [`TdsValue`] under the [`TypeInfo`] it is sent with: fixed-length types,
//! byte-length (`TYPE_VARBYTE`) and long types, PLP streams in chunks, and each type's NULL
//! form. The value's kind must match the type; the only conversions are the lossless widenings
//! the module docs list, and a value that does not fit its type is an error, never rounded.

use super::variant::put_variant;
use super::{
    Decimal, TdsValue, Time, DATETIME_MAX_DAYS, DATETIME_MIN_DAYS, DATETIME_TICKS_PER_DAY,
    MAX_DATE_DAYS, MAX_OFFSET_MINUTES, PLP_CHUNK_LEN, PLP_NULL,
};
use crate::tvp::encode_table;
use crate::types::{decimal_len, time_len, TypeInfo, MAX_LEN_PLP, MAX_PRECISION};
use crate::wire::utf16_len;
use crate::TdsError;

/// Encodes `value` as TYPE_VARBYTE for `ty` (the form used in ROW, RETURNVALUE and RPC
/// parameters; legacy LOBs in their RPC-parameter form).
pub(crate) fn encode_value(
    ty: &TypeInfo,
    value: &TdsValue,
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    use TdsValue as V;
    use TypeInfo as T;
    let mismatch = || TdsError::TypeMismatch { ty: ty.name(), value: value.kind() };
    let range = |what| TdsError::ValueOutOfRange { what };
    match (*ty, value) {
        (T::Null, V::Null) => {}
        (_, V::Null) if ty.is_fixed_len() => return Err(mismatch()),
        (T::Variant { .. }, V::Null) => out.extend_from_slice(&0u32.to_le_bytes()),
        (T::Variant { max_len }, V::Variant { base, value }) => {
            put_variant(base, value, max_len, out)?
        }
        (T::Tvp, V::Table(table)) => encode_table(table, out)?,
        (_, V::Null) => encode_null(ty, out),
        (T::Int1 | T::Int2 | T::Int4 | T::Int8, v) => {
            let width = fixed_int_width(ty);
            let n = integer(v, width).ok_or_else(mismatch)?;
            out.extend_from_slice(&n.to_le_bytes()[..width]);
        }
        (T::IntN(width), v) => {
            if !matches!(width, 1 | 2 | 4 | 8) {
                return Err(TdsError::Malformed { what: "INTN length" });
            }
            let n = integer(v, usize::from(width)).ok_or_else(mismatch)?;
            out.push(width);
            out.extend_from_slice(&n.to_le_bytes()[..usize::from(width)]);
        }
        (T::Bit, V::Bit(b)) => out.push(u8::from(*b)),
        (T::BitN, V::Bit(b)) => out.extend_from_slice(&[1, u8::from(*b)]),
        (T::Flt4, V::Real(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (T::FltN(4), V::Real(f)) => {
            out.push(4);
            out.extend_from_slice(&f.to_le_bytes());
        }
        (T::Flt8 | T::FltN(8), V::Real(f)) => put_f64(ty, f64::from(*f), out),
        (T::Flt8 | T::FltN(8), V::Float(f)) => put_f64(ty, *f, out),
        (T::Money | T::MoneyN(8), V::Money(m)) => {
            if matches!(ty, T::MoneyN(_)) {
                out.push(8);
            }
            // MONEY is the high 32 bits, then the low 32 bits (2.2.5.5).
            out.extend_from_slice(&((*m >> 32) as i32).to_le_bytes());
            out.extend_from_slice(&(*m as u32).to_le_bytes());
        }
        (T::Money4 | T::MoneyN(4), V::Money(m)) => {
            let m = i32::try_from(*m).map_err(|_| range("SMALLMONEY"))?;
            if matches!(ty, T::MoneyN(_)) {
                out.push(4);
            }
            out.extend_from_slice(&m.to_le_bytes());
        }
        (T::DateTime | T::DateTimeN(8), V::DateTime { days, ticks }) => {
            if !valid_datetime(*days, *ticks) {
                return Err(range("DATETIME"));
            }
            if matches!(ty, T::DateTimeN(_)) {
                out.push(8);
            }
            out.extend_from_slice(&days.to_le_bytes());
            out.extend_from_slice(&ticks.to_le_bytes());
        }
        (T::DateTime | T::DateTimeN(8), V::SmallDateTime { days, minutes }) => {
            // Lossless widening: both count days from 1900-01-01.
            let widened =
                V::DateTime { days: i32::from(*days), ticks: u32::from(*minutes) * 60 * 300 };
            return encode_value(ty, &widened, out);
        }
        (T::DateTime4 | T::DateTimeN(4), V::DateTime { days, ticks }) => {
            // A DATETIME into a SMALLDATETIME: rounded to the nearest minute, half a minute
            // (9,000 ticks of 1/300 s) up, as SQL Server converts, then range checked
            // (1900-01-01 through 2079-06-06 23:59).
            if !valid_datetime(*days, *ticks) {
                return Err(range("DATETIME"));
            }
            let minutes = (ticks + 30 * 300) / (60 * 300);
            let (days, minutes) = if minutes >= 24 * 60 {
                (i64::from(*days) + 1, minutes - 24 * 60)
            } else {
                (i64::from(*days), minutes)
            };
            let days = u16::try_from(days).map_err(|_| range("SMALLDATETIME"))?;
            // minutes < 1440 here.
            let rounded = V::SmallDateTime { days, minutes: minutes as u16 };
            return encode_value(ty, &rounded, out);
        }
        (T::DateTime4 | T::DateTimeN(4), V::SmallDateTime { days, minutes }) => {
            if *minutes >= 24 * 60 {
                return Err(range("SMALLDATETIME"));
            }
            if matches!(ty, T::DateTimeN(_)) {
                out.push(4);
            }
            out.extend_from_slice(&days.to_le_bytes());
            out.extend_from_slice(&minutes.to_le_bytes());
        }
        (T::Guid, V::Guid(g)) => {
            out.push(16);
            out.extend_from_slice(g);
        }
        (T::Decimal { precision, scale } | T::Numeric { precision, scale }, V::Decimal(d)) => {
            let v = rescale(*d, precision, scale).ok_or(range("DECIMAL"))?;
            let len = decimal_len(precision);
            out.push(len);
            out.push(u8::from(v >= 0));
            out.extend_from_slice(&v.unsigned_abs().to_le_bytes()[..usize::from(len) - 1]);
        }
        (T::Date, V::Date(days)) => {
            out.push(3);
            put_date(*days, out)?;
        }
        (T::Time { scale }, V::Time(t)) => {
            out.push(time_len(scale) as u8);
            put_time(*t, scale, out)?;
        }
        (T::DateTime2 { scale }, V::DateTime2 { date, time }) => {
            out.push(time_len(scale) as u8 + 3);
            put_time(*time, scale, out)?;
            put_date(*date, out)?;
        }
        (T::DateTimeOffset { scale }, V::DateTimeOffset { date, time, offset_minutes }) => {
            if offset_minutes.unsigned_abs() > MAX_OFFSET_MINUTES.unsigned_abs() {
                return Err(range("DATETIMEOFFSET offset"));
            }
            out.push(time_len(scale) as u8 + 5);
            put_time(*time, scale, out)?;
            put_date(*date, out)?;
            out.extend_from_slice(&offset_minutes.to_le_bytes());
        }
        (T::BigVarChar { max_len, .. } | T::BigChar { len: max_len, .. }, V::VarChar(b))
        | (T::BigVarBinary { max_len } | T::BigBinary { len: max_len }, V::Binary(b)) => {
            put_var(ty, b.len(), max_len, out, bytes(b))?
        }
        (T::NVarChar { max_len, .. } | T::NChar { len: max_len, .. }, V::NVarChar(s)) => {
            put_var(ty, utf16_len(s) * 2, max_len, out, utf16(s))?
        }
        (T::Text { max_len, .. }, V::VarChar(b)) | (T::Image { max_len }, V::Binary(b)) => {
            put_lob(ty, b.len(), max_len, out, bytes(b))?
        }
        (T::Xml, V::NVarChar(s)) => put_var(ty, utf16_len(s) * 2, MAX_LEN_PLP, out, utf16(s))?,
        (T::NText { max_len, .. }, V::NVarChar(s)) => {
            put_lob(ty, utf16_len(s) * 2, max_len, out, utf16(s))?
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

fn encode_null(ty: &TypeInfo, out: &mut Vec<u8>) {
    if ty.is_plp() {
        out.extend_from_slice(&PLP_NULL.to_le_bytes());
    } else if ty.is_legacy_lob() {
        out.extend_from_slice(&u32::MAX.to_le_bytes());
    } else if matches!(
        ty,
        TypeInfo::BigVarChar { .. }
            | TypeInfo::BigChar { .. }
            | TypeInfo::NVarChar { .. }
            | TypeInfo::NChar { .. }
            | TypeInfo::BigVarBinary { .. }
            | TypeInfo::BigBinary { .. }
    ) {
        // CHARBIN_NULL.
        out.extend_from_slice(&u16::MAX.to_le_bytes());
    } else {
        // GEN_NULL: a zero length byte.
        out.push(0);
    }
}

/// A FLOAT under FLT8 or FLTN(8).
fn put_f64(ty: &TypeInfo, f: f64, out: &mut Vec<u8>) {
    if matches!(ty, TypeInfo::FltN(_)) {
        out.push(8);
    }
    out.extend_from_slice(&f.to_le_bytes());
}

fn fixed_int_width(ty: &TypeInfo) -> usize {
    match ty {
        TypeInfo::Int1 => 1,
        TypeInfo::Int2 => 2,
        TypeInfo::Int4 => 4,
        _ => 8,
    }
}

/// An integer value as i64, if its width fits `width` bytes.
pub(super) fn integer(v: &TdsValue, width: usize) -> Option<i64> {
    let (w, n) = match *v {
        TdsValue::TinyInt(n) => (1, i64::from(n)),
        TdsValue::SmallInt(n) => (2, i64::from(n)),
        TdsValue::Int(n) => (4, i64::from(n)),
        TdsValue::BigInt(n) => (8, n),
        _ => return None,
    };
    (w <= width).then_some(n)
}

pub(super) fn valid_datetime(days: i32, ticks: u32) -> bool {
    (DATETIME_MIN_DAYS..=DATETIME_MAX_DAYS).contains(&days) && ticks < DATETIME_TICKS_PER_DAY
}

/// `d` as an unscaled value of the given precision and scale, if no digit is lost.
fn rescale(d: Decimal, precision: u8, scale: u8) -> Option<i128> {
    // Bounding every exponent by 38 keeps the powers of ten below in range of i128/u128.
    if d.scale > MAX_PRECISION || !(1..=MAX_PRECISION).contains(&precision) || scale > precision {
        return None;
    }
    let v = if scale >= d.scale {
        d.value.checked_mul(10i128.pow(u32::from(scale - d.scale)))?
    } else {
        let factor = 10i128.pow(u32::from(d.scale - scale));
        (d.value % factor == 0).then_some(d.value / factor)?
    };
    (v.unsigned_abs() < 10u128.pow(u32::from(precision))).then_some(v)
}

fn put_date(days: u32, out: &mut Vec<u8>) -> Result<(), TdsError> {
    if days > MAX_DATE_DAYS {
        return Err(TdsError::ValueOutOfRange { what: "DATE" });
    }
    out.extend_from_slice(&days.to_le_bytes()[..3]);
    Ok(())
}

fn put_time(t: Time, scale: u8, out: &mut Vec<u8>) -> Result<(), TdsError> {
    let units = t.at_scale(scale).ok_or(TdsError::ValueOutOfRange { what: "TIME" })?;
    out.extend_from_slice(&units.to_le_bytes()[..time_len(scale)]);
    Ok(())
}

// `put_var` and `put_lob` take a value's data as a writer that appends its next `n` bytes to
// the output; `n` is always even, so a string's UTF-16 code units are never split between two
// calls.

/// The data of a character or binary value, `b`.
pub(super) fn bytes(mut b: &[u8]) -> impl FnMut(&mut Vec<u8>, usize) + '_ {
    move |out, n| {
        let (head, rest) = b.split_at(n.min(b.len()));
        out.extend_from_slice(head);
        b = rest;
    }
}

/// The data of a Unicode value: `s` in UTF-16LE, written straight into the output rather than
/// through a scratch buffer (which every NVARCHAR value of every row would otherwise cost).
fn utf16(s: &str) -> impl FnMut(&mut Vec<u8>, usize) + '_ {
    let mut units = s.encode_utf16();
    move |out, n| units.by_ref().take(n / 2).for_each(|u| out.extend_from_slice(&u.to_le_bytes()))
}

/// A USHORTLEN or PLP value of `len` bytes, which `write` appends.
pub(super) fn put_var(
    ty: &TypeInfo,
    len: usize,
    max_len: u16,
    out: &mut Vec<u8>,
    mut write: impl FnMut(&mut Vec<u8>, usize),
) -> Result<(), TdsError> {
    if ty.is_plp() {
        out.extend_from_slice(&(len as u64).to_le_bytes());
        let mut left = len;
        while left > 0 {
            // At most PLP_CHUNK_LEN bytes, far below u32::MAX; even, as `write` needs.
            let chunk = left.min(PLP_CHUNK_LEN);
            out.extend_from_slice(&(chunk as u32).to_le_bytes());
            write(out, chunk);
            left -= chunk;
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        return Ok(());
    }
    if len > usize::from(max_len) || max_len == MAX_LEN_PLP {
        return Err(TdsError::TooLong { what: ty.name(), len, max: max_len.into() });
    }
    out.extend_from_slice(&(len as u16).to_le_bytes());
    write(out, len);
    Ok(())
}

/// A legacy LOB value of `len` bytes in its RPC-parameter form: a four-byte length and the
/// data, which `write` appends.
fn put_lob(
    ty: &TypeInfo,
    len: usize,
    max_len: u32,
    out: &mut Vec<u8>,
    mut write: impl FnMut(&mut Vec<u8>, usize),
) -> Result<(), TdsError> {
    let len32 = u32::try_from(len)
        .ok()
        .filter(|&l| l <= max_len && l != u32::MAX)
        .ok_or(TdsError::TooLong { what: ty.name(), len, max: max_len as usize })?;
    out.extend_from_slice(&len32.to_le_bytes());
    write(out, len);
    Ok(())
}
