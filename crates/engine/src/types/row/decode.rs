//! Decoding a whole record, or one column of it: [`RowView`] checks the header, the null
//! bitmap's padding and the record's length against the schema once, then each field is read
//! and checked against its column's type (a NULL field zero-filled or empty, a fixed value in
//! its type's domain, variable bounds in order and within the record). Every inconsistency is
//! a [`RowError::Corrupt`]; nothing panics or allocates more than the input's size.

use super::decoder::{decode_one, fixed_value, var_value};
use super::variant::variant_can_hold;
use super::{
    MaybeHook, OffRowHook, RowError, Shape, END_MASK, MAX_INLINE_ROW, MAX_OFF_ROW_POINTER,
    OFF_ROW_FLAG, ROW_HEADER_LEN, STATUS_OFF_ROW,
};
use crate::types::decimal::Decimal;
use crate::types::guid::Guid;
use crate::types::sql_type::{time_len, SqlType};
use crate::types::temporal::{ticks_per_unit, Date, DateTime, DateTime2, DateTimeOffset, Time};
use crate::types::value::Value;

/// Decodes every column of a row. Columns the row was written without are NULL; an off-row
/// column is [`RowError::OffRow`] (use [`decode_row_with`]).
pub fn decode_row(columns: &[SqlType], bytes: &[u8]) -> Result<Vec<Value>, RowError> {
    decode_all(columns, bytes, None, None)
}

/// [`decode_row`], reading off-row values by calling `fetch` with their pointer blobs.
pub fn decode_row_with(
    columns: &[SqlType],
    bytes: &[u8],
    fetch: &mut OffRowHook<'_>,
) -> Result<Vec<Value>, RowError> {
    decode_all(columns, bytes, None, Some(fetch))
}

/// [`decode_row_with`] for a reader that needs only some columns: column `i` is decoded
/// when `wanted[i]` is true (or `wanted` is shorter than `i`), and is NULL otherwise. The
/// row's layout is checked as a whole decode checks it; an unwanted off-row value is not
/// fetched.
pub fn decode_row_some_with(
    columns: &[SqlType],
    bytes: &[u8],
    wanted: &[bool],
    fetch: &mut OffRowHook<'_>,
) -> Result<Vec<Value>, RowError> {
    decode_all(columns, bytes, Some(wanted), Some(fetch))
}

/// Decodes column `index` alone: the header and that column's bytes are checked, the other
/// columns are not read (a fixed-length column costs a few additions over the schema). An
/// off-row column is [`RowError::OffRow`].
pub fn decode_column(columns: &[SqlType], bytes: &[u8], index: usize) -> Result<Value, RowError> {
    decode_one(columns, bytes, index, None)
}

/// [`decode_column`], reading an off-row value through `fetch`.
pub fn decode_column_with(
    columns: &[SqlType],
    bytes: &[u8],
    index: usize,
    fetch: &mut OffRowHook<'_>,
) -> Result<Value, RowError> {
    decode_one(columns, bytes, index, Some(fetch))
}

/// The pointer blobs of a row's off-row values, in column order, so that the caller can free
/// what they point to when the row is deleted or its values replaced.
pub fn off_row_pointers(columns: &[SqlType], bytes: &[u8]) -> Result<Vec<Vec<u8>>, RowError> {
    let row = RowView::new(columns, bytes)?;
    let mut pointers = Vec::new();
    if !row.off_row {
        return Ok(pointers);
    }
    let mut slot_at = row.shape.var_offset();
    let mut start = row.shape.data_start();
    for (i, ty) in columns[..row.shape.count].iter().enumerate() {
        if ty.is_fixed_len() {
            continue;
        }
        let (field, off_row) = row.var_field(i, slot_at, start)?;
        slot_at += 2;
        start += field.len();
        if row.is_null(i) {
            expect_empty_null(i, field, off_row)?;
        } else if off_row {
            pointers.push(check_pointer(i, field)?.to_vec());
        }
    }
    Ok(pointers)
}

pub(super) fn corrupt(detail: String) -> RowError {
    RowError::Corrupt(detail)
}

pub(super) fn le_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// The first `N` bytes of `field` (zero-extended if shorter, which the callers rule out).
pub(super) fn array<const N: usize>(field: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    let n = N.min(field.len());
    a[..n].copy_from_slice(&field[..n]);
    a
}

/// A row whose header has been checked against the schema.
pub(super) struct RowView<'a> {
    bytes: &'a [u8],
    pub(super) shape: Shape,
    pub(super) off_row: bool,
}

impl<'a> RowView<'a> {
    /// Checks the header, the bitmap's padding bits and the row's total length.
    pub(super) fn new(columns: &[SqlType], bytes: &'a [u8]) -> Result<RowView<'a>, RowError> {
        RowView::with_shape(columns, bytes, None)
    }

    /// [`RowView::new`] given the shape of a row written with every column of `columns`
    /// (`full`), which it then need not work out again for such a row.
    pub(super) fn with_shape(
        columns: &[SqlType],
        bytes: &'a [u8],
        full: Option<&Shape>,
    ) -> Result<RowView<'a>, RowError> {
        if bytes.len() < ROW_HEADER_LEN || bytes.len() > MAX_INLINE_ROW {
            return Err(corrupt(format!(
                "row length {} outside 5..={MAX_INLINE_ROW}",
                bytes.len()
            )));
        }
        let status = bytes[0];
        if status & !STATUS_OFF_ROW != 0 {
            return Err(corrupt(format!("unknown status bits {status:#04x}")));
        }
        let count = usize::from(le_u16(bytes, 1));
        let Some(written) = columns.get(..count) else {
            return Err(corrupt(format!("{count} columns, the schema has {}", columns.len())));
        };
        let shape = match full {
            Some(full) if full.count == count => *full,
            _ => Shape::of(written),
        };
        let var_offset = usize::from(le_u16(bytes, 3));
        if var_offset != shape.var_offset() || shape.data_start() > bytes.len() {
            return Err(corrupt(format!(
                "offset array at {var_offset}, expected {} in a row of {} bytes",
                shape.var_offset(),
                bytes.len()
            )));
        }
        if count % 8 != 0 && bytes[ROW_HEADER_LEN + shape.bitmap_len() - 1] >> (count % 8) != 0 {
            return Err(corrupt("null bitmap bits past the last column".to_string()));
        }
        let end = match shape.var_count {
            0 => var_offset,
            _ => usize::from(le_u16(bytes, shape.data_start() - 2) & END_MASK),
        };
        if end != bytes.len() {
            return Err(corrupt(format!("row ends at {end}, but has {} bytes", bytes.len())));
        }
        Ok(RowView { bytes, shape, off_row: status & STATUS_OFF_ROW != 0 })
    }

    pub(super) fn is_null(&self, column: usize) -> bool {
        self.bytes[ROW_HEADER_LEN + column / 8] >> (column % 8) & 1 == 1
    }

    /// The bytes of the variable-length column whose end offset is at `slot_at` and which
    /// starts at `start`, and whether it is off-row.
    pub(super) fn var_field(
        &self,
        column: usize,
        slot_at: usize,
        start: usize,
    ) -> Result<(&'a [u8], bool), RowError> {
        let raw = le_u16(self.bytes, slot_at);
        let end = usize::from(raw & END_MASK);
        if start < self.shape.data_start() || end < start || end > self.bytes.len() {
            return Err(corrupt(format!("column {column}: bytes {start}..{end} out of order")));
        }
        let off_row = raw & OFF_ROW_FLAG != 0;
        if off_row && !self.off_row {
            return Err(corrupt(format!("column {column}: off-row flag, status says none")));
        }
        Ok((&self.bytes[start..end], off_row))
    }
}

pub(super) fn expect_zero(column: usize, field: &[u8]) -> Result<(), RowError> {
    if field.iter().any(|b| *b != 0) {
        return Err(corrupt(format!("column {column}: NULL with non-zero bytes")));
    }
    Ok(())
}

pub(super) fn expect_empty_null(
    column: usize,
    field: &[u8],
    off_row: bool,
) -> Result<(), RowError> {
    if off_row || !field.is_empty() {
        return Err(corrupt(format!("column {column}: NULL with data")));
    }
    Ok(())
}

pub(super) fn check_pointer(column: usize, pointer: &[u8]) -> Result<&[u8], RowError> {
    if pointer.is_empty() || pointer.len() > MAX_OFF_ROW_POINTER {
        return Err(corrupt(format!(
            "column {column}: off-row pointer of {} bytes",
            pointer.len()
        )));
    }
    Ok(pointer)
}

pub(super) fn decode_all(
    columns: &[SqlType],
    bytes: &[u8],
    wanted: Option<&[bool]>,
    mut fetch: MaybeHook<'_, '_>,
) -> Result<Vec<Value>, RowError> {
    let row = RowView::new(columns, bytes)?;
    // Room for the row locator a reader appends.
    let mut values = Vec::with_capacity(columns.len() + 1);
    let mut fixed_at = row.shape.fixed_start();
    let mut slot_at = row.shape.var_offset();
    let mut start = row.shape.data_start();
    let mut any_off_row = false;
    for (i, ty) in columns[..row.shape.count].iter().enumerate() {
        let null = row.is_null(i);
        let want = wanted.is_none_or(|w| w.get(i).copied().unwrap_or(true));
        let value = match ty.fixed_len() {
            Some(n) => {
                // Within the row: the fixed part ends at var_offset, checked by RowView.
                let field = &bytes[fixed_at..fixed_at + n];
                fixed_at += n;
                if want {
                    fixed_value(i, *ty, null, field)?
                } else {
                    Value::Null
                }
            }
            None => {
                // Every slot is read, wanted or not: the next field starts where this one
                // ends, and the off-row flags are checked against the row's status.
                let (field, off_row) = row.var_field(i, slot_at, start)?;
                slot_at += 2;
                start += field.len();
                any_off_row |= off_row;
                if want {
                    var_value(i, *ty, null, field, off_row, &mut fetch)?
                } else {
                    Value::Null
                }
            }
        };
        values.push(value);
    }
    // var_field refused a flag without the status bit; here the converse.
    if row.off_row && !any_off_row {
        return Err(corrupt("off-row status without an off-row column".to_string()));
    }
    values.resize(columns.len(), Value::Null);
    Ok(values)
}

/// Decodes a non-NULL fixed-length value, checking it is in its type's domain.
fn decode_fixed(column: usize, ty: SqlType, field: &[u8]) -> Result<Value, RowError> {
    let mut value = Value::Null;
    decode_fixed_into(column, ty, field, &mut value)?;
    Ok(value)
}

/// [`decode_fixed`] into `slot`, whose old value it replaces (a CHAR or BINARY value
/// reusing the buffer of a value of its kind there). Each value is written straight into
/// the slot: built elsewhere and moved there, as a `Result<Value, _>` it went through
/// stack temporaries, copied whole, that stalled the decoding of a scan.
pub(super) fn decode_fixed_into(
    column: usize,
    ty: SqlType,
    field: &[u8],
    slot: &mut Value,
) -> Result<(), RowError> {
    let bad = |what: &str| corrupt(format!("column {column} ({ty}): {what}"));
    let time = |scale: u8, field: &[u8]| {
        let mut units = [0u8; 8];
        units[..field.len()].copy_from_slice(field);
        u64::from_le_bytes(units)
            .checked_mul(ticks_per_unit(scale))
            .and_then(Time::from_ticks)
            .ok_or_else(|| bad("time of day out of range"))
    };
    let date = |field: &[u8]| {
        Date::from_days(u32::from_le_bytes([field[0], field[1], field[2], 0]))
            .ok_or_else(|| bad("date out of range"))
    };
    *slot = match ty {
        SqlType::TinyInt => Value::TinyInt(field[0]),
        SqlType::SmallInt => Value::SmallInt(i16::from_le_bytes(array(field))),
        SqlType::Int => Value::Int(i32::from_le_bytes(array(field))),
        SqlType::BigInt => Value::BigInt(i64::from_le_bytes(array(field))),
        SqlType::Money => Value::Money(i64::from_le_bytes(array(field))),
        SqlType::Bit => match field[0] {
            0 => Value::Bit(false),
            1 => Value::Bit(true),
            _ => return Err(bad("bit is neither 0 nor 1")),
        },
        SqlType::Decimal { precision, scale } => {
            // Sign-extend the stored width to 128 bits.
            let negative = field.last().is_some_and(|b| b & 0x80 != 0);
            let mut wide = if negative { [0xFF; 16] } else { [0; 16] };
            wide[..field.len()].copy_from_slice(field);
            let d = Decimal::new(i128::from_le_bytes(wide), scale)
                .filter(|d| scale <= precision && d.fits_precision(precision))
                .ok_or_else(|| bad("decimal exceeds its precision"))?;
            Value::Decimal(d)
        }
        SqlType::Float => {
            let x = f64::from_le_bytes(array(field));
            if !x.is_finite() {
                return Err(bad("float is NaN or infinite"));
            }
            Value::Float(x)
        }
        SqlType::Real => {
            let x = f32::from_le_bytes(array(field));
            if !x.is_finite() {
                return Err(bad("real is NaN or infinite"));
            }
            Value::Real(x)
        }
        SqlType::Char(_) => {
            let text = std::str::from_utf8(field).map_err(|_| bad("text is not UTF-8"))?;
            if let Value::Str(s) = slot {
                s.clear();
                s.push_str(text);
                return Ok(());
            }
            Value::Str(text.to_string())
        }
        SqlType::Binary(_) => {
            if let Value::Binary(b) = slot {
                b.clear();
                b.extend_from_slice(field);
                return Ok(());
            }
            Value::Binary(field.to_vec())
        }
        SqlType::Date => Value::Date(date(field)?),
        SqlType::Time(scale) => Value::Time(time(scale, field)?),
        SqlType::DateTime => {
            let days = i32::from_le_bytes(array(field));
            let ticks = u32::from_le_bytes(array(&field[4..]));
            Value::DateTime(
                DateTime::from_parts(days, ticks).ok_or_else(|| bad("datetime out of range"))?,
            )
        }
        SqlType::DateTime2(scale) => {
            let (t, d) = field.split_at(time_len(scale));
            Value::DateTime2(DateTime2::new(date(d)?, time(scale, t)?))
        }
        SqlType::DateTimeOffset(scale) => {
            let (t, rest) = field.split_at(time_len(scale));
            let (d, offset) = rest.split_at(3);
            let utc = DateTime2::new(date(d)?, time(scale, t)?);
            let offset = i16::from_le_bytes(array(offset));
            Value::DateTimeOffset(
                DateTimeOffset::from_utc(utc, offset)
                    .ok_or_else(|| bad("datetimeoffset out of range"))?,
            )
        }
        SqlType::UniqueIdentifier => Value::Guid(Guid(array(field))),
        SqlType::VarChar(_)
        | SqlType::NChar(_)
        | SqlType::NVarChar(_)
        | SqlType::VarBinary(_)
        | SqlType::Variant
        | SqlType::Xml => return Err(bad("variable-length type in the fixed part")),
    };
    Ok(())
}

/// Decodes a non-NULL variable-length value from its stored bytes.
pub(super) fn decode_var(column: usize, ty: SqlType, data: Vec<u8>) -> Result<Value, RowError> {
    let bad = |what: &str| corrupt(format!("column {column} ({ty}): {what}"));
    if data.len() > ty.max_len_bytes() {
        return Err(bad("value longer than the type allows"));
    }
    let text = |data: Vec<u8>| String::from_utf8(data).map_err(|_| bad("text is not UTF-8"));
    Ok(match ty {
        SqlType::VarChar(_) => Value::Str(text(data)?),
        SqlType::NVarChar(_) => Value::NStr(text(data)?),
        SqlType::Xml => Value::Xml(crate::types::Xml::new(text(data)?)),
        SqlType::NChar(n) => {
            let s = text(data)?;
            if s.encode_utf16().count() != usize::from(n) {
                return Err(bad("nchar not padded to its length"));
            }
            Value::NStr(s)
        }
        SqlType::VarBinary(_) => Value::Binary(data),
        SqlType::Variant => {
            let (descriptor, value) = data
                .split_first_chunk::<4>()
                .ok_or_else(|| bad("sql_variant shorter than its type descriptor"))?;
            let base = SqlType::decode(*descriptor)
                .filter(|t| variant_can_hold(*t))
                .ok_or_else(|| bad("sql_variant of an unknown base type"))?;
            match base.fixed_len() {
                Some(n) if n == value.len() => decode_fixed(column, base, value)?,
                Some(_) => return Err(bad("sql_variant value of the wrong length")),
                None => decode_var(column, base, value.to_vec())?,
            }
        }
        _ => return Err(bad("fixed-length type in the variable part")),
    })
}
