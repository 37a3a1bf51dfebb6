//! Encoding a row of values into its record: each value checked against its column's type,
//! fixed values at their column's room in the fixed part, variable ones behind their end
//! offsets, and, when the row would be too large, the largest variable values spilled through
//! the caller's hook, largest first, only once every value is checked and the row is known to
//! fit afterwards. On any error `out` is left as it was.

use std::borrow::Cow;

use super::variant::variant_bytes;
use super::{
    min_row_len, MaybeHook, OffRowHook, RowError, MAX_COLUMNS, MAX_INLINE_ROW, MAX_OFF_ROW_POINTER,
    OFF_ROW_FLAG, STATUS_OFF_ROW,
};
use crate::types::decimal::Decimal;
use crate::types::sql_type::{decimal_len, time_len, SqlType};
use crate::types::temporal::{ticks_per_unit, Time};
use crate::types::value::Value;

/// Appends the encoding of `values` (one per column, already of the columns' types) to
/// `out`. A row longer than [`MAX_INLINE_ROW`] is [`RowError::RowTooLarge`]; use
/// [`encode_row_with`] to move large values off-row.
pub fn encode_row(
    columns: &[SqlType],
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<(), RowError> {
    encode(columns, values, out, None)
}

/// [`encode_row`], moving variable-length values off-row when the row would exceed
/// [`MAX_INLINE_ROW`]: the largest first, as few as needed, each by calling `spill` with the
/// value's stored bytes and keeping the pointer blob it returns (1..=[`MAX_OFF_ROW_POINTER`]
/// bytes) in the value's place. Values no longer than a pointer are never spilled.
pub fn encode_row_with(
    columns: &[SqlType],
    values: &[Value],
    out: &mut Vec<u8>,
    spill: &mut OffRowHook<'_>,
) -> Result<(), RowError> {
    encode(columns, values, out, Some(spill))
}

pub(super) fn encode(
    columns: &[SqlType],
    values: &[Value],
    out: &mut Vec<u8>,
    spill: MaybeHook<'_, '_>,
) -> Result<(), RowError> {
    if columns.len() != values.len() {
        return Err(RowError::ColumnCount { expected: columns.len(), found: values.len() });
    }
    if columns.len() > MAX_COLUMNS {
        return Err(RowError::TooManyColumns(columns.len()));
    }
    let start = out.len();
    let result = encode_into(columns, values, out, spill);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Writes the row in two passes over the columns: the header, bitmap and fixed part (sizing
/// the variable part on the way), then, once the row is known to fit (after spilling), the
/// end offsets and variable data.
fn encode_into(
    columns: &[SqlType],
    values: &[Value],
    out: &mut Vec<u8>,
    spill: MaybeHook<'_, '_>,
) -> Result<(), RowError> {
    let start = out.len();
    // Status, column count (at most MAX_COLUMNS, so it fits), var offset (patched below).
    let [count_lo, count_hi] = (columns.len() as u16).to_le_bytes();
    out.extend_from_slice(&[0, count_lo, count_hi, 0, 0]);
    let bitmap_at = out.len();
    out.resize(bitmap_at + columns.len().div_ceil(8), 0);
    // Null bitmap and fixed part; this checks every value, fixed or not.
    let (mut var_count, mut var_bytes) = (0, 0);
    for (i, (ty, v)) in columns.iter().zip(values).enumerate() {
        let null = v.is_null();
        if null {
            out[bitmap_at + i / 8] |= 1 << (i % 8);
        }
        match ty.fixed_len() {
            Some(n) => {
                if null {
                    out.resize(out.len() + n, 0);
                } else {
                    put_fixed(i, *ty, v, out)?;
                }
                // Stop as soon as the fixed part alone is too large, rather than writing all
                // of a schema that can never fit.
                if out.len() - start > MAX_INLINE_ROW {
                    let len = min_row_len(columns);
                    return Err(RowError::RowTooLarge { len, max: MAX_INLINE_ROW });
                }
            }
            None => {
                var_count += 1;
                if !null {
                    var_bytes += var_parts(i, *ty, v)?.len();
                }
            }
        }
    }
    let var_offset = out.len() - start;
    let data_start = var_offset + 2 * var_count;
    if data_start > MAX_INLINE_ROW {
        return Err(RowError::RowTooLarge { len: data_start, max: MAX_INLINE_ROW });
    }
    out[start + 3..start + 5].copy_from_slice(&(var_offset as u16).to_le_bytes());
    let inline_len = data_start + var_bytes;
    let spilled = if inline_len <= MAX_INLINE_ROW {
        Vec::new()
    } else if let Some(spill) = spill {
        spill_largest(columns, values, inline_len, spill)?
    } else {
        return Err(RowError::RowTooLarge { len: inline_len, max: MAX_INLINE_ROW });
    };
    // End offsets and variable data.
    let mut slot = out.len();
    out.reserve(inline_len - var_offset);
    out.resize(slot + 2 * var_count, 0);
    let mut pointers = spilled.iter().peekable();
    for (i, (ty, v)) in columns.iter().zip(values).enumerate() {
        if ty.is_fixed_len() {
            continue;
        }
        let mut flag = 0;
        if let Some((_, pointer)) = pointers.next_if(|(column, _)| *column == i) {
            out.extend_from_slice(pointer);
            flag = OFF_ROW_FLAG;
        } else if !v.is_null() {
            let part = var_parts(i, *ty, v)?;
            out.extend_from_slice(&part.bytes);
            out.resize(out.len() + part.pad, b' ');
        }
        // Below 0x8000: the row was sized to fit MAX_INLINE_ROW above.
        let end = (out.len() - start) as u16;
        out[slot..slot + 2].copy_from_slice(&(end | flag).to_le_bytes());
        slot += 2;
    }
    if !spilled.is_empty() {
        out[start] = STATUS_OFF_ROW;
    }
    Ok(())
}

/// Chooses the values to move off-row (largest first, ties by column order, until the row
/// fits assuming pointers of the largest size), then spills them in that order. Returns the
/// pointers by column.
fn spill_largest(
    columns: &[SqlType],
    values: &[Value],
    inline_len: usize,
    spill: &mut OffRowHook<'_>,
) -> Result<Vec<(usize, Vec<u8>)>, RowError> {
    let mut candidates = Vec::new();
    for (i, (ty, v)) in columns.iter().zip(values).enumerate() {
        if !ty.is_fixed_len() && !v.is_null() {
            let len = var_parts(i, *ty, v)?.len();
            if len > MAX_OFF_ROW_POINTER {
                candidates.push((len, i));
            }
        }
    }
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut len = inline_len;
    let mut chosen = 0;
    for &(value_len, _) in &candidates {
        if len <= MAX_INLINE_ROW {
            break;
        }
        len = len - value_len + MAX_OFF_ROW_POINTER;
        chosen += 1;
    }
    if len > MAX_INLINE_ROW {
        return Err(RowError::RowTooLarge { len, max: MAX_INLINE_ROW });
    }
    let mut pointers = Vec::with_capacity(chosen);
    for &(_, column) in &candidates[..chosen] {
        let part = var_parts(column, columns[column], &values[column])?;
        let pointer = if part.pad == 0 { spill(&part.bytes)? } else { spill(&part.to_vec())? };
        if pointer.is_empty() || pointer.len() > MAX_OFF_ROW_POINTER {
            return Err(RowError::PointerLength { column, len: pointer.len() });
        }
        pointers.push((column, pointer));
    }
    pointers.sort_unstable_by_key(|(column, _)| *column);
    Ok(pointers)
}

fn mismatch(column: usize, ty: SqlType, v: &Value) -> RowError {
    RowError::TypeMismatch { column, expected: ty, found: v.kind_name() }
}

/// The mantissa of `d` at the column's scale, if that is exact and fits the precision.
pub(crate) fn decimal_mantissa(
    column: usize,
    precision: u8,
    scale: u8,
    d: &Decimal,
) -> Result<i128, RowError> {
    d.exact_at(scale).filter(|d| d.fits_precision(precision)).map(Decimal::mantissa).ok_or(
        RowError::InvalidValue {
            column,
            reason: "decimal needs rounding or exceeds the column's precision",
        },
    )
}

/// The time in units of the column's scale, if it has no finer digit.
pub(crate) fn time_units(column: usize, scale: u8, t: Time) -> Result<u64, RowError> {
    if !t.is_at_scale(scale) {
        return Err(RowError::InvalidValue {
            column,
            reason: "time has more fractional digits than the column's scale",
        });
    }
    Ok(t.ticks() / ticks_per_unit(scale))
}

/// Rejects NaN and infinities, which SQL Server's float types do not have.
pub(crate) fn finite(column: usize, x: f64) -> Result<(), RowError> {
    if x.is_finite() {
        Ok(())
    } else {
        Err(RowError::InvalidValue { column, reason: "float is NaN or infinite" })
    }
}

/// Appends `bytes` padded with `fill` to `n` bytes.
fn put_padded(
    column: usize,
    bytes: &[u8],
    n: u16,
    fill: u8,
    out: &mut Vec<u8>,
) -> Result<(), RowError> {
    let n = usize::from(n);
    if bytes.len() > n {
        return Err(RowError::ValueTooLong { column, len: bytes.len(), max: n });
    }
    out.extend_from_slice(bytes);
    out.resize(out.len() + n - bytes.len(), fill);
    Ok(())
}

fn put_time(column: usize, scale: u8, t: Time, out: &mut Vec<u8>) -> Result<(), RowError> {
    let units = time_units(column, scale, t)?;
    out.extend_from_slice(&units.to_le_bytes()[..time_len(scale)]);
    Ok(())
}

/// Appends a non-NULL fixed-length value (little-endian throughout).
pub(super) fn put_fixed(
    column: usize,
    ty: SqlType,
    v: &Value,
    out: &mut Vec<u8>,
) -> Result<(), RowError> {
    match (ty, v) {
        (SqlType::TinyInt, Value::TinyInt(x)) => out.push(*x),
        (SqlType::SmallInt, Value::SmallInt(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (SqlType::Int, Value::Int(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (SqlType::BigInt, Value::BigInt(x)) | (SqlType::Money, Value::Money(x)) => {
            out.extend_from_slice(&x.to_le_bytes())
        }
        (SqlType::Bit, Value::Bit(x)) => out.push(u8::from(*x)),
        (SqlType::Decimal { precision, scale }, Value::Decimal(d)) => {
            // Two's complement truncated to the precision's width, which holds the value.
            let mantissa = decimal_mantissa(column, precision, scale, d)?;
            out.extend_from_slice(&mantissa.to_le_bytes()[..decimal_len(precision)]);
        }
        (SqlType::Float, Value::Float(x)) => {
            finite(column, *x)?;
            out.extend_from_slice(&x.to_le_bytes());
        }
        (SqlType::Real, Value::Real(x)) => {
            finite(column, f64::from(*x))?;
            out.extend_from_slice(&x.to_le_bytes());
        }
        (SqlType::Char(n), Value::Str(s)) => put_padded(column, s.as_bytes(), n, b' ', out)?,
        (SqlType::Binary(n), Value::Binary(b)) => put_padded(column, b, n, 0, out)?,
        (SqlType::Date, Value::Date(d)) => out.extend_from_slice(&d.days().to_le_bytes()[..3]),
        (SqlType::Time(scale), Value::Time(t)) => put_time(column, scale, *t, out)?,
        (SqlType::DateTime, Value::DateTime(d)) => {
            out.extend_from_slice(&d.days().to_le_bytes());
            out.extend_from_slice(&d.ticks().to_le_bytes());
        }
        (SqlType::DateTime2(scale), Value::DateTime2(d)) => {
            put_time(column, scale, d.time, out)?;
            out.extend_from_slice(&d.date.days().to_le_bytes()[..3]);
        }
        (SqlType::DateTimeOffset(scale), Value::DateTimeOffset(d)) => {
            let utc = d.utc();
            put_time(column, scale, utc.time, out)?;
            out.extend_from_slice(&utc.date.days().to_le_bytes()[..3]);
            out.extend_from_slice(&d.offset_minutes().to_le_bytes());
        }
        (SqlType::UniqueIdentifier, Value::Guid(g)) => out.extend_from_slice(&g.0),
        _ => return Err(mismatch(column, ty, v)),
    }
    Ok(())
}

/// The stored form of a variable-length value: its bytes, then `pad` spaces (NCHAR).
pub(super) struct VarBytes<'a> {
    pub(super) bytes: Cow<'a, [u8]>,
    pad: usize,
}

impl VarBytes<'_> {
    fn len(&self) -> usize {
        self.bytes.len() + self.pad
    }

    fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len());
        v.extend_from_slice(&self.bytes);
        v.resize(self.len(), b' ');
        v
    }
}

/// Checks a non-NULL value of a variable-length column and returns its stored form.
pub(super) fn var_parts<'a>(
    column: usize,
    ty: SqlType,
    v: &'a Value,
) -> Result<VarBytes<'a>, RowError> {
    let (bytes, pad) = match (ty, v) {
        (SqlType::VarChar(_), Value::Str(s)) | (SqlType::NVarChar(_), Value::NStr(s)) => {
            (Cow::Borrowed(s.as_bytes()), 0)
        }
        (SqlType::Xml, Value::Xml(x)) => (Cow::Borrowed(x.text().as_bytes()), 0),
        (SqlType::VarBinary(_), Value::Binary(b)) => (Cow::Borrowed(b.as_slice()), 0),
        (SqlType::NChar(n), Value::NStr(s)) => {
            let (units, n) = (s.encode_utf16().count(), usize::from(n));
            if units > n {
                return Err(RowError::ValueTooLong { column, len: units, max: n });
            }
            (Cow::Borrowed(s.as_bytes()), n - units)
        }
        (SqlType::Variant, v) => (Cow::Owned(variant_bytes(column, v)?), 0),
        _ => return Err(mismatch(column, ty, v)),
    };
    let max = ty.max_len_bytes();
    if bytes.len() > max {
        return Err(RowError::ValueTooLong { column, len: bytes.len(), max });
    }
    Ok(VarBytes { bytes, pad })
}
