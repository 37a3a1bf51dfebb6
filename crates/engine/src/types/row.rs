//! The row format: a row of values as the bytes of one page record.
//!
//! The layout follows SQL Server's FixedVar record (the byte tables are in
//! `docs/format/row.md`):
//!
//! ```text
//! | status | column count | var offset | null bitmap | fixed part | end offsets | var data |
//!    1 B        2 B            2 B       ceil(n/8) B    Σ sizes      2 B each
//! ```
//!
//! * The **fixed part** holds the fixed-length columns in column order, each at its
//!   [`SqlType::fixed_len`]; a NULL one keeps its room, zero-filled. A fixed column's offset
//!   therefore depends only on the schema, and [`decode_column`] reads it without looking at
//!   any other column.
//! * The **variable part** is an array of 2-byte *end* offsets (from the start of the row),
//!   one per variable-length column, then the data of those columns back to back. Column `j`
//!   spans from the previous column's end (or the end of the array) to its own end, so lengths
//!   need no field of their own and a NULL or empty column costs only its offset.
//! * Bit 15 of an end offset marks an **off-row** column: its bytes are not the value but a
//!   pointer blob made by the caller's spill hook (an overflow page chain, say). Offsets never
//!   need bit 15 because a row is at most [`MAX_INLINE_ROW`] (4000) bytes. The status byte
//!   repeats "some column is off-row" so that [`off_row_pointers`] answers at once for the
//!   common row.
//! * The **column count** is the number of columns the row was written with. A row may have
//!   fewer columns than the schema it is read with: the missing trailing columns are NULL,
//!   which is what lets a table gain a nullable column without rewriting its rows.
//!
//! Text is stored as UTF-8 for every character type. CHAR(n) is padded with spaces to n
//! bytes, NCHAR(n) to n UTF-16 code units, BINARY(n) with zeros to n bytes. Length limits in
//! characters are the SQL layer's to check; this layer checks only what its layout needs
//! (a fixed-length value fits its room, a byte length fits [`SqlType::max_len_bytes`]).
//!
//! # Invariants
//!
//! * Encoding appends to `out` and, on any error, leaves `out` as it was.
//! * An encoded row is at most [`MAX_INLINE_ROW`] bytes, so two fit on a page.
//! * Spilling happens only once the row is known to fit afterwards (pointers are at most
//!   [`MAX_OFF_ROW_POINTER`] bytes, and the plan assumes that size), and only after every
//!   value has been checked. So once the hook has been called, the only possible errors are
//!   the hook's own and an invalid pointer it returned; the caller owns the chains of the
//!   pointers it made and frees them if it gets an error.
//! * Decoding checks every header field, offset, length and fixed value against the schema
//!   and the buffer, and returns [`RowError::Corrupt`] for any inconsistency: it never panics
//!   and never allocates more than the input's size (plus what the fetch hook returns).

use std::borrow::Cow;
use std::fmt;

use super::decimal::Decimal;
use super::guid::Guid;
use super::sql_type::{decimal_len, time_len, Len, SqlType, MAX_PRECISION};
use super::temporal::{ticks_per_unit, Date, DateTime, DateTime2, DateTimeOffset, Time};
use super::value::Value;

/// The largest encoded row. The B+tree accepts records up to this size so that at least two
/// rows fit on a page; larger rows must move variable-length values off-row.
pub const MAX_INLINE_ROW: usize = 4000;

/// The largest pointer blob a spill hook may return.
pub const MAX_OFF_ROW_POINTER: usize = 64;

/// The most columns a row can have (SQL Server's limit for a table).
pub const MAX_COLUMNS: usize = 1024;

/// The bytes before the null bitmap: status, column count, offset of the end-offset array.
pub const ROW_HEADER_LEN: usize = 5;

/// Status bit: at least one column is off-row. The other bits are zero.
const STATUS_OFF_ROW: u8 = 0x01;
/// End-offset bit: this column's bytes are a pointer to an off-row value.
const OFF_ROW_FLAG: u16 = 0x8000;
/// End-offset bits that hold the offset.
const END_MASK: u16 = 0x7FFF;

/// What went wrong encoding or decoding a row or a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowError {
    /// As many values as columns are needed.
    ColumnCount {
        /// Columns in the schema.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// More than [`MAX_COLUMNS`] columns.
    TooManyColumns(usize),
    /// [`decode_column`] was asked for a column the schema does not have.
    NoSuchColumn(usize),
    /// A value's kind does not match its column's type.
    TypeMismatch {
        /// The column.
        column: usize,
        /// The column's type.
        expected: SqlType,
        /// The value's kind ([`Value::kind_name`]).
        found: &'static str,
    },
    /// A value is longer than its column allows.
    ValueTooLong {
        /// The column.
        column: usize,
        /// The value's length: bytes, or UTF-16 code units for NCHAR.
        len: usize,
        /// The limit, in the same unit.
        max: usize,
    },
    /// A value of the right kind that the column cannot hold as it is: a decimal that needs
    /// rounding or exceeds the precision, a time with more fractional digits than the scale, a
    /// NaN or infinite float.
    InvalidValue {
        /// The column.
        column: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// The row does not fit in [`MAX_INLINE_ROW`] bytes, even with every variable-length value
    /// that could move off-row moved (or with none moved, when no spill hook was given).
    RowTooLarge {
        /// The smallest length the row could have.
        len: usize,
        /// [`MAX_INLINE_ROW`].
        max: usize,
    },
    /// The spill hook returned an empty pointer or one longer than [`MAX_OFF_ROW_POINTER`].
    PointerLength {
        /// The column spilled.
        column: usize,
        /// The pointer's length.
        len: usize,
    },
    /// A column is off-row and no fetch hook was given ([`decode_row_with`] reads it).
    OffRow {
        /// The column.
        column: usize,
    },
    /// The spill or fetch hook failed (the caller's storage error, as text).
    Storage(String),
    /// The bytes are not a valid row (or key) for the schema.
    Corrupt(String),
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowError::ColumnCount { expected, found } => {
                write!(f, "{found} values for {expected} columns")
            }
            RowError::TooManyColumns(n) => write!(f, "{n} columns, more than {MAX_COLUMNS}"),
            RowError::NoSuchColumn(i) => write!(f, "no column {i}"),
            RowError::TypeMismatch { column, expected, found } => {
                write!(f, "column {column}: a {found} value for a {expected} column")
            }
            RowError::ValueTooLong { column, len, max } => {
                write!(f, "column {column}: value of length {len}, more than {max}")
            }
            RowError::InvalidValue { column, reason } => write!(f, "column {column}: {reason}"),
            RowError::RowTooLarge { len, max } => {
                write!(f, "row of {len} bytes, more than the {max} allowed")
            }
            RowError::PointerLength { column, len } => write!(
                f,
                "column {column}: off-row pointer of {len} bytes, not 1..={MAX_OFF_ROW_POINTER}"
            ),
            RowError::OffRow { column } => write!(f, "column {column} is stored off-row"),
            RowError::Storage(detail) => write!(f, "off-row storage: {detail}"),
            RowError::Corrupt(detail) => write!(f, "corrupt row: {detail}"),
        }
    }
}

impl std::error::Error for RowError {}

/// A caller's off-row storage hook. As a spill hook ([`encode_row_with`]) it takes a value's
/// stored bytes, writes them somewhere and returns a pointer blob of
/// 1..=[`MAX_OFF_ROW_POINTER`] bytes; as a fetch hook ([`decode_row_with`]) it takes a pointer
/// blob and returns the value's bytes.
pub type OffRowHook<'a> = dyn FnMut(&[u8]) -> Result<Vec<u8>, RowError> + 'a;

/// An optional hook, for the code shared by the variants with and without one.
type MaybeHook<'a, 'h> = Option<&'a mut OffRowHook<'h>>;

/// The parts of a row that depend only on the columns it was written with.
#[derive(Debug, Clone, Copy)]
struct Shape {
    count: usize,
    fixed_len: usize,
    var_count: usize,
}

impl Shape {
    fn of(columns: &[SqlType]) -> Shape {
        let mut shape = Shape { count: columns.len(), fixed_len: 0, var_count: 0 };
        for ty in columns {
            match ty.fixed_len() {
                Some(n) => shape.fixed_len += n,
                None => shape.var_count += 1,
            }
        }
        shape
    }

    fn bitmap_len(&self) -> usize {
        self.count.div_ceil(8)
    }

    fn fixed_start(&self) -> usize {
        ROW_HEADER_LEN + self.bitmap_len()
    }

    /// Where the end-offset array starts (the header's "var offset" field).
    fn var_offset(&self) -> usize {
        self.fixed_start() + self.fixed_len
    }

    /// Where the variable data starts: the length of a row with no variable data.
    fn data_start(&self) -> usize {
        self.var_offset() + 2 * self.var_count
    }
}

/// The smallest encoding of a row of these columns: header, bitmap, fixed part and end
/// offsets, with every variable-length value empty. DDL can refuse a table whose
/// `min_row_len` exceeds [`MAX_INLINE_ROW`], as SQL Server refuses one whose fixed part
/// exceeds 8060 bytes.
pub fn min_row_len(columns: &[SqlType]) -> usize {
    Shape::of(columns).data_start()
}

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

fn encode(
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
fn put_fixed(column: usize, ty: SqlType, v: &Value, out: &mut Vec<u8>) -> Result<(), RowError> {
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
struct VarBytes<'a> {
    bytes: Cow<'a, [u8]>,
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
fn var_parts<'a>(column: usize, ty: SqlType, v: &'a Value) -> Result<VarBytes<'a>, RowError> {
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

fn corrupt(detail: String) -> RowError {
    RowError::Corrupt(detail)
}

fn le_u16(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// The first `N` bytes of `field` (zero-extended if shorter, which the callers rule out).
fn array<const N: usize>(field: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    let n = N.min(field.len());
    a[..n].copy_from_slice(&field[..n]);
    a
}

/// A row whose header has been checked against the schema.
struct RowView<'a> {
    bytes: &'a [u8],
    shape: Shape,
    off_row: bool,
}

impl<'a> RowView<'a> {
    /// Checks the header, the bitmap's padding bits and the row's total length.
    fn new(columns: &[SqlType], bytes: &'a [u8]) -> Result<RowView<'a>, RowError> {
        RowView::with_shape(columns, bytes, None)
    }

    /// [`RowView::new`] given the shape of a row written with every column of `columns`
    /// (`full`), which it then need not work out again for such a row.
    fn with_shape(
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

    fn is_null(&self, column: usize) -> bool {
        self.bytes[ROW_HEADER_LEN + column / 8] >> (column % 8) & 1 == 1
    }

    /// The bytes of the variable-length column whose end offset is at `slot_at` and which
    /// starts at `start`, and whether it is off-row.
    fn var_field(
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

fn expect_zero(column: usize, field: &[u8]) -> Result<(), RowError> {
    if field.iter().any(|b| *b != 0) {
        return Err(corrupt(format!("column {column}: NULL with non-zero bytes")));
    }
    Ok(())
}

fn expect_empty_null(column: usize, field: &[u8], off_row: bool) -> Result<(), RowError> {
    if off_row || !field.is_empty() {
        return Err(corrupt(format!("column {column}: NULL with data")));
    }
    Ok(())
}

fn check_pointer(column: usize, pointer: &[u8]) -> Result<&[u8], RowError> {
    if pointer.is_empty() || pointer.len() > MAX_OFF_ROW_POINTER {
        return Err(corrupt(format!(
            "column {column}: off-row pointer of {} bytes",
            pointer.len()
        )));
    }
    Ok(pointer)
}

fn decode_all(
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

/// Where a column's bytes are in a row written with every column of its schema.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// In the fixed part, this many bytes from its start, of the type's length.
    Fixed { at: usize, len: usize },
    /// The `k`-th variable-length column (its end offset is the `k`-th slot).
    Var { k: usize },
}

/// A decoder for many rows of the same columns (a scan's), which works out once what
/// [`decode_row_some_with`] works out per row: the row's shape and where each wanted
/// column's bytes are, so that a row costs its header's checks and the wanted columns'
/// decoding, not a walk over every column.
///
/// What it checks is what a whole decode checks, for the columns it decodes: the header,
/// the bitmap's padding and the row's length ([`RowView::new`]); each decoded fixed field
/// (a NULL one zero-filled, a value in its type's domain); each decoded variable field's
/// bounds (its start, the previous slot's end, within the data and not past its own end)
/// and off-row flag; and, when the status says some column is off-row, that one is. The
/// slots of variable columns it does not decode are not read, so their order is not checked.
/// A row written with fewer columns than the schema (before a column was added) is decoded
/// by the general path.
#[derive(Debug, Clone)]
pub struct RowDecoder {
    columns: Vec<SqlType>,
    shape: Shape,
    /// Each column to decode, in column order, with where it is.
    wanted: Vec<(usize, Place)>,
    /// The columns not to decode, which are NULL in every row it decodes.
    skipped: Vec<usize>,
    /// The `wanted` flags as given, for the general path.
    flags: Option<Vec<bool>>,
}

impl RowDecoder {
    /// A decoder of rows of `columns` that decodes column `i` when `wanted[i]` is true (or
    /// `wanted` is shorter than `i`), every column with None, and gives NULL for the others.
    pub fn new(columns: &[SqlType], wanted: Option<&[bool]>) -> RowDecoder {
        RowDecoder::of_columns(columns.iter().copied(), wanted)
    }

    /// [`RowDecoder::new`] of the columns `columns` yields.
    pub fn of_columns(
        columns: impl IntoIterator<Item = SqlType>,
        wanted: Option<&[bool]>,
    ) -> RowDecoder {
        let columns: Vec<SqlType> = columns.into_iter().collect();
        let shape = Shape::of(&columns);
        let mut places = Vec::new();
        let mut skipped = Vec::new();
        let (mut at, mut k) = (0, 0);
        for (i, ty) in columns.iter().enumerate() {
            let place = match ty.fixed_len() {
                Some(len) => {
                    at += len;
                    Place::Fixed { at: at - len, len }
                }
                None => {
                    k += 1;
                    Place::Var { k: k - 1 }
                }
            };
            if wanted.is_none_or(|w| w.get(i).copied().unwrap_or(true)) {
                places.push((i, place));
            } else {
                skipped.push(i);
            }
        }
        RowDecoder { columns, shape, wanted: places, skipped, flags: wanted.map(<[bool]>::to_vec) }
    }

    /// Whether [`RowDecoder::new`] of `columns` and `wanted` makes this decoder: its columns
    /// and flags are those (what it decodes, and where from, follows from them alone).
    pub fn is_made_of(
        &self,
        columns: impl ExactSizeIterator<Item = SqlType>,
        wanted: Option<&[bool]>,
    ) -> bool {
        self.flags.as_deref() == wanted
            && self.columns.len() == columns.len()
            && self.columns.iter().zip(columns).all(|(a, b)| *a == b)
    }

    /// The columns of the rows it decodes.
    pub fn columns(&self) -> &[SqlType] {
        &self.columns
    }

    /// Decodes a row, reading off-row values through `fetch`. The vector has room for one
    /// more value than the columns, for the row locator a reader appends.
    pub fn decode(&self, bytes: &[u8], fetch: &mut OffRowHook<'_>) -> Result<Vec<Value>, RowError> {
        let mut values = Vec::new();
        self.decode_into(bytes, fetch, &mut values)?;
        Ok(values)
    }

    /// Decodes a row into the first values of `values`, one per column, reading off-row
    /// values through `fetch`. Each decoded value is written straight into its slot, and
    /// `values` is reused: when it holds a value per column already (the row decoded
    /// before, say), its allocation stays, and so do those of its strings and binaries that
    /// a value of the same kind replaces, and any values past the columns (a row locator)
    /// are left as they are. Otherwise it is refilled with a value per column, with room
    /// for one more, for the row locator a reader appends. On an error `values` may hold
    /// anything.
    pub fn decode_into(
        &self,
        bytes: &[u8],
        fetch: &mut OffRowHook<'_>,
        values: &mut Vec<Value>,
    ) -> Result<(), RowError> {
        let row = RowView::with_shape(&self.columns, bytes, Some(&self.shape))?;
        if row.shape.count != self.shape.count {
            let decoded = decode_all(&self.columns, bytes, self.flags.as_deref(), Some(fetch))?;
            if values.len() < decoded.len() {
                *values = decoded;
            } else {
                for (slot, value) in values.iter_mut().zip(decoded) {
                    *slot = value;
                }
            }
            return Ok(());
        }
        if values.len() >= self.columns.len() {
            for &i in &self.skipped {
                if !values[i].is_null() {
                    values[i] = Value::Null;
                }
            }
        } else {
            // NULLs first, each written as its tag alone (a NULL pushed among the decoded
            // values went through a stack temporary, copied whole, which stalled), then the
            // decoded columns put in their places.
            values.clear();
            values.reserve(self.columns.len() + 1);
            values.extend((0..self.columns.len()).map(|_| Value::Null));
        }
        self.write_wanted(&row, bytes, fetch, values)
    }

    /// The columns this decoder decodes, as flags per column.
    pub fn wanted(&self) -> Vec<bool> {
        let mut flags = vec![false; self.columns.len()];
        for &(i, _) in &self.wanted {
            flags[i] = true;
        }
        flags
    }

    /// Decodes this decoder's columns of a row into their slots of `values`, which holds a
    /// value per column already (the same row decoded by another decoder of the same
    /// columns, which left these NULL); the other slots are left as they are. For a read
    /// that decodes a row's columns in two steps: those its filter reads, then, for the
    /// rows the filter keeps, the rest.
    pub fn decode_more_into(
        &self,
        bytes: &[u8],
        fetch: &mut OffRowHook<'_>,
        values: &mut [Value],
    ) -> Result<(), RowError> {
        let row = RowView::with_shape(&self.columns, bytes, Some(&self.shape))?;
        if row.shape.count != self.shape.count || values.len() < self.columns.len() {
            let mut decoded = decode_all(&self.columns, bytes, self.flags.as_deref(), Some(fetch))?;
            for &(i, _) in &self.wanted {
                if let (Some(v), Some(to)) = (decoded.get_mut(i), values.get_mut(i)) {
                    *to = std::mem::replace(v, Value::Null);
                }
            }
            return Ok(());
        }
        self.write_wanted(&row, bytes, fetch, values)
    }

    /// Writes each wanted column of the row `row` views (of the decoder's shape) into its
    /// slot of `values`.
    fn write_wanted(
        &self,
        row: &RowView<'_>,
        bytes: &[u8],
        fetch: &mut OffRowHook<'_>,
        values: &mut [Value],
    ) -> Result<(), RowError> {
        let fixed_start = self.shape.fixed_start();
        let var_offset = self.shape.var_offset();
        let mut fetch = Some(fetch);
        for &(i, place) in &self.wanted {
            let ty = self.columns[i];
            let null = row.is_null(i);
            let slot = &mut values[i];
            match place {
                Place::Fixed { at, len } => {
                    // Within the row: the fixed part ends at var_offset, checked by RowView.
                    let at = fixed_start + at;
                    fixed_into(i, ty, null, &bytes[at..at + len], slot)?;
                }
                Place::Var { k } => {
                    let slot_at = var_offset + 2 * k;
                    let start = match k {
                        0 => self.shape.data_start(),
                        _ => usize::from(le_u16(bytes, slot_at - 2) & END_MASK),
                    };
                    let (field, off_row) = row.var_field(i, slot_at, start)?;
                    var_into(i, ty, null, field, off_row, &mut fetch, slot)?;
                }
            }
        }
        // var_field refuses a flag without the status bit; here the converse.
        if row.off_row {
            let any = (0..self.shape.var_count)
                .any(|k| le_u16(bytes, var_offset + 2 * k) & OFF_ROW_FLAG != 0);
            if !any {
                return Err(corrupt("off-row status without an off-row column".to_string()));
            }
        }
        Ok(())
    }
}

fn decode_one(
    columns: &[SqlType],
    bytes: &[u8],
    index: usize,
    mut fetch: MaybeHook<'_, '_>,
) -> Result<Value, RowError> {
    let Some(ty) = columns.get(index) else {
        return Err(RowError::NoSuchColumn(index));
    };
    let row = RowView::new(columns, bytes)?;
    if index >= row.shape.count {
        return Ok(Value::Null);
    }
    let before = Shape::of(&columns[..index]);
    let null = row.is_null(index);
    match ty.fixed_len() {
        Some(n) => {
            let at = row.shape.fixed_start() + before.fixed_len;
            fixed_value(index, *ty, null, &bytes[at..at + n])
        }
        None => {
            let slot_at = row.shape.var_offset() + 2 * before.var_count;
            let start = match before.var_count {
                0 => row.shape.data_start(),
                _ => usize::from(le_u16(bytes, slot_at - 2) & END_MASK),
            };
            let (field, off_row) = row.var_field(index, slot_at, start)?;
            var_value(index, *ty, null, field, off_row, &mut fetch)
        }
    }
}

fn fixed_value(column: usize, ty: SqlType, null: bool, field: &[u8]) -> Result<Value, RowError> {
    let mut value = Value::Null;
    fixed_into(column, ty, null, field, &mut value)?;
    Ok(value)
}

/// Writes the fixed-length column's value into `slot` (whose old value it replaces).
fn fixed_into(
    column: usize,
    ty: SqlType,
    null: bool,
    field: &[u8],
    slot: &mut Value,
) -> Result<(), RowError> {
    if null {
        expect_zero(column, field)?;
        *slot = Value::Null;
        return Ok(());
    }
    // A slot that holds the last row's integer of the same type is written in place: a row
    // decoded into again and again (a scan's) does this for most of its columns, and the
    // general path below drops the old value and builds the new one through a stack
    // temporary.
    match (ty, &mut *slot) {
        (SqlType::Int, Value::Int(x)) => *x = i32::from_le_bytes(array(field)),
        (SqlType::BigInt, Value::BigInt(x)) => *x = i64::from_le_bytes(array(field)),
        _ => return decode_fixed_into(column, ty, field, slot),
    }
    Ok(())
}

fn var_value(
    column: usize,
    ty: SqlType,
    null: bool,
    field: &[u8],
    off_row: bool,
    fetch: &mut MaybeHook<'_, '_>,
) -> Result<Value, RowError> {
    let mut value = Value::Null;
    var_into(column, ty, null, field, off_row, fetch, &mut value)?;
    Ok(value)
}

/// Writes the variable-length column's value into `slot`; an in-row text or binary value
/// reuses the buffer of a value of its kind that `slot` holds.
fn var_into(
    column: usize,
    ty: SqlType,
    null: bool,
    field: &[u8],
    off_row: bool,
    fetch: &mut MaybeHook<'_, '_>,
    slot: &mut Value,
) -> Result<(), RowError> {
    if null {
        expect_empty_null(column, field, off_row)?;
        *slot = Value::Null;
        return Ok(());
    }
    if !off_row {
        // The checks are decode_var's for these types: the length, then the text.
        if field.len() <= ty.max_len_bytes() {
            match (ty, &mut *slot) {
                (SqlType::VarChar(_), Value::Str(s)) | (SqlType::NVarChar(_), Value::NStr(s)) => {
                    let text = std::str::from_utf8(field).map_err(|_| {
                        corrupt(format!("column {column} ({ty}): text is not UTF-8"))
                    })?;
                    s.clear();
                    s.push_str(text);
                    return Ok(());
                }
                (SqlType::VarBinary(_), Value::Binary(b)) => {
                    b.clear();
                    b.extend_from_slice(field);
                    return Ok(());
                }
                _ => {}
            }
        }
        *slot = decode_var(column, ty, field.to_vec())?;
        return Ok(());
    }
    let pointer = check_pointer(column, field)?;
    *slot = match fetch.as_deref_mut() {
        Some(fetch) => decode_var(column, ty, fetch(pointer)?)?,
        None => return Err(RowError::OffRow { column }),
    };
    Ok(())
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
fn decode_fixed_into(
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
fn decode_var(column: usize, ty: SqlType, data: Vec<u8>) -> Result<Value, RowError> {
    let bad = |what: &str| corrupt(format!("column {column} ({ty}): {what}"));
    if data.len() > ty.max_len_bytes() {
        return Err(bad("value longer than the type allows"));
    }
    let text = |data: Vec<u8>| String::from_utf8(data).map_err(|_| bad("text is not UTF-8"));
    Ok(match ty {
        SqlType::VarChar(_) => Value::Str(text(data)?),
        SqlType::NVarChar(_) => Value::NStr(text(data)?),
        SqlType::Xml => Value::Xml(super::Xml::new(text(data)?)),
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

/// Whether a SQL_VARIANT can hold values of `ty`: any type but the MAX ones and itself.
fn variant_can_hold(ty: SqlType) -> bool {
    !matches!(
        ty,
        SqlType::Variant
            | SqlType::VarChar(Len::Max)
            | SqlType::NVarChar(Len::Max)
            | SqlType::VarBinary(Len::Max)
            | SqlType::Xml
    )
}

/// The type a SQL_VARIANT stores a value as: its own, variable lengths at the value's length
/// (at least 1), DECIMAL at the fewest digits that hold it, fractional seconds at scale 7.
/// `None` for NULL, and for a string or binary value longer than 8,000 bytes, which no
/// SQL_VARIANT holds.
pub fn variant_base_type(v: &Value) -> Option<SqlType> {
    let len =
        |n: usize, max: usize| u16::try_from(n.max(1)).ok().filter(|&n| usize::from(n) <= max);
    Some(match v {
        Value::Null => return None,
        Value::TinyInt(_) => SqlType::TinyInt,
        Value::SmallInt(_) => SqlType::SmallInt,
        Value::Int(_) => SqlType::Int,
        Value::BigInt(_) => SqlType::BigInt,
        Value::Bit(_) => SqlType::Bit,
        Value::Decimal(d) => {
            let scale = d.scale();
            let precision = (scale.max(1)..=MAX_PRECISION)
                .find(|&p| d.fits_precision(p))
                .unwrap_or(MAX_PRECISION);
            SqlType::Decimal { precision, scale }
        }
        Value::Float(_) => SqlType::Float,
        Value::Real(_) => SqlType::Real,
        Value::Money(_) => SqlType::Money,
        Value::Str(s) => SqlType::VarChar(Len::N(len(s.len(), 8000)?)),
        Value::NStr(s) => SqlType::NVarChar(Len::N(len(s.encode_utf16().count(), 4000)?)),
        Value::Binary(b) => SqlType::VarBinary(Len::N(len(b.len(), 8000)?)),
        Value::Date(_) => SqlType::Date,
        Value::Time(_) => SqlType::Time(7),
        Value::DateTime(_) => SqlType::DateTime,
        Value::DateTime2(_) => SqlType::DateTime2(7),
        Value::DateTimeOffset(_) => SqlType::DateTimeOffset(7),
        Value::Guid(_) => SqlType::UniqueIdentifier,
        Value::Xml(_) => return None,
    })
}

/// A SQL_VARIANT's stored form: its base type's descriptor, then the value as a column of
/// that type stores it (`docs/format/row.md`).
fn variant_bytes(column: usize, v: &Value) -> Result<Vec<u8>, RowError> {
    let base = variant_base_type(v).ok_or(RowError::InvalidValue {
        column,
        reason: "sql_variant holds at most 8,000 bytes",
    })?;
    let mut out = base.encode().to_vec();
    if base.is_fixed_len() {
        put_fixed(column, base, v, &mut out)?;
    } else {
        out.extend_from_slice(&var_parts(column, base, v)?.bytes);
    }
    Ok(out)
}
