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

use std::fmt;

use super::sql_type::SqlType;

mod decode;
mod decoder;
mod encode;
mod variant;

pub use decode::{
    decode_column, decode_column_with, decode_row, decode_row_some_with, decode_row_with,
    off_row_pointers,
};
pub use decoder::{DayRange, DayTest, RowDecoder};
pub(crate) use encode::{decimal_mantissa, finite, time_units};
pub use encode::{encode_row, encode_row_with};
pub use variant::variant_base_type;

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
        /// The value's kind ([`Value::kind_name`](crate::types::Value::kind_name)).
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
