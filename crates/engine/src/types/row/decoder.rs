//! [`RowDecoder`]: a decoder for many rows of one schema, which works out once where each
//! wanted column's bytes are, so that a row costs its header's checks and the wanted columns'
//! decoding. It checks what a whole decode checks for the columns it decodes, and hands rows
//! written with fewer columns than the schema to the general path.

use super::decode::{
    array, check_pointer, corrupt, decode_all, decode_fixed_into, decode_var, expect_empty_null,
    expect_zero, le_u16, RowView,
};
use super::{MaybeHook, OffRowHook, RowError, Shape, END_MASK, OFF_ROW_FLAG};
use crate::types::sql_type::SqlType;
use crate::types::temporal::Date;
use crate::types::value::Value;

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
///
/// [`decode_row_some_with`]: super::decode_row_some_with
#[derive(Debug, Clone)]
pub struct RowDecoder {
    columns: Vec<SqlType>,
    shape: Shape,
    /// Each column to decode, in column order, with where it is.
    wanted: Vec<(usize, Place)>,
    /// The columns not to decode, which are NULL in every row it decodes (but those
    /// [`RowDecoder::leaving`] leaves to a later step).
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

    /// This decoder, made to leave as they are, in a row it decodes into again, the columns
    /// `later` marks, rather than set them NULL: for the first step of a row decoded in
    /// steps, whose later steps write those columns before anything reads them (a column
    /// holding a string keeps its buffer for the next row's).
    pub fn leaving(mut self, later: &[bool]) -> RowDecoder {
        self.skipped.retain(|&i| !later.get(i).copied().unwrap_or(false));
        self
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

/// An inclusive range of day numbers that a DATE column of a row must hold for a reader to
/// want the row: a filter's `d >= '1994-01-01' AND d < '1995-01-01'` on a scan, tested on
/// the row's bytes before anything is decoded ([`RowDecoder::days_outside`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayRange {
    /// The column, by ordinal.
    pub column: usize,
    /// The least and the greatest day number wanted (`Date::days`).
    pub low: u32,
    pub high: u32,
}

/// A [`DayRange`] with where its column's bytes are in a row of every column.
#[derive(Debug, Clone, Copy)]
pub struct DayTest {
    range: DayRange,
    /// Bytes from the start of the fixed part.
    at: usize,
}

impl RowDecoder {
    /// `range` made a test of this decoder's rows; None unless its column is a DATE.
    pub fn day_test(&self, range: DayRange) -> Option<DayTest> {
        if self.columns.get(range.column) != Some(&SqlType::Date) {
            return None;
        }
        let at = self.columns[..range.column].iter().filter_map(|ty| ty.fixed_len()).sum();
        Some(DayTest { range, at })
    }

    /// Whether the row `bytes` surely fails one of `tests`: its column is NULL (no
    /// comparison holds) or holds a day outside the range. False when it cannot tell
    /// without the general path (a row written with fewer columns, or a header that does
    /// not check, which the decoding then reports).
    pub fn days_outside(&self, bytes: &[u8], tests: &[DayTest]) -> bool {
        let Ok(row) = RowView::with_shape(&self.columns, bytes, Some(&self.shape)) else {
            return false;
        };
        if row.shape.count != self.shape.count {
            return false;
        }
        let start = self.shape.fixed_start();
        tests.iter().any(|t| {
            if row.is_null(t.range.column) {
                return true;
            }
            // Within the row: the fixed part ends at the offset array, checked by RowView.
            let at = start + t.at;
            let day = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], 0]);
            day < t.range.low || day > t.range.high
        })
    }
}

pub(super) fn decode_one(
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

pub(super) fn fixed_value(
    column: usize,
    ty: SqlType,
    null: bool,
    field: &[u8],
) -> Result<Value, RowError> {
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
    // temporary. A NULL slot (a row decoded into a new list, a key lookup's) has nothing to
    // drop and takes the integer at once.
    match (ty, &mut *slot) {
        (SqlType::Int, Value::Int(x)) => *x = i32::from_le_bytes(array(field)),
        (SqlType::BigInt, Value::BigInt(x)) => *x = i64::from_le_bytes(array(field)),
        (SqlType::Int, Value::Null) => *slot = Value::Int(i32::from_le_bytes(array(field))),
        (SqlType::BigInt, Value::Null) => *slot = Value::BigInt(i64::from_le_bytes(array(field))),
        // Dates likewise (TPC-H's filters compare them in every row); a day number out of
        // the type's range is left to the general path, which reports it.
        (SqlType::Date, Value::Date(_) | Value::Null) => {
            match Date::from_days(u32::from_le_bytes([field[0], field[1], field[2], 0])) {
                Some(date) => *slot = Value::Date(date),
                None => return decode_fixed_into(column, ty, field, slot),
            }
        }
        _ => return decode_fixed_into(column, ty, field, slot),
    }
    Ok(())
}

pub(super) fn var_value(
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
