//! Values and rows: the SQL types a column can have, the values they hold, how a row of values
//! is laid out in a page record, and how index keys are encoded so that comparing bytes
//! compares values.
//!
//! # The pieces
//!
//! * [`SqlType`] is a column type as SQL Server spells it (`decimal(10,2)`, `nvarchar(max)`,
//!   `datetime2(7)`...), with its storage size and a 4-byte descriptor the catalog stores.
//! * [`Value`] is a typed SQL value. Exact numbers are exact ([`Decimal`] is an `i128` and a
//!   scale), temporal values are counts in SQL Server's own units ([`Date`] in days since
//!   0001-01-01, [`Time`] in 100 ns ticks, [`DateTime`] in 1/300 s ticks since 1900-01-01), and
//!   a [`Guid`] is kept in SQL Server's byte order, so that nothing is lost between the wire,
//!   the row and the key. [`compare`] orders values the way SQL Server's comparison operators
//!   do, with the default collation SQL_Latin1_General_CP1_CI_AS approximated by per-character
//!   lower-casing and ignored trailing spaces.
//! * [`encode_row`] / [`decode_row`] / [`decode_column`] are the row format, modelled on SQL
//!   Server's FixedVar records: a header, a null bitmap, the fixed-length columns at offsets
//!   known from the schema, then an offset array and the variable-length data. Large values
//!   can be moved off-row through a caller's hook ([`encode_row_with`]). The byte layout is
//!   `docs/format/row.md`, and a test rebuilds its worked example byte for byte.
//! * [`encode_key`] is the memcomparable key encoding of index entries; a text column with
//!   a collation that compares otherwise than the default keys its text by that collation's
//!   [`TextOrder`].
//!
//! # Invariants
//!
//! * **A value is always inside its domain.** [`Decimal`], [`Date`], [`Time`], [`DateTime`]
//!   have private fields and checking constructors: at most 38 digits and a scale of at most
//!   38, dates within 0001-01-01..9999-12-31 (DATETIME: 1753-01-01..), times below 24 hours.
//!   The encoders therefore never meet an impossible value, only one of the wrong type.
//! * **Rows and keys hold values already converted to the column's type.** The encoders check
//!   that the value's kind matches the column ([`RowError::TypeMismatch`] otherwise) and refuse
//!   anything that would need a lossy conversion (a decimal or time with more fractional
//!   digits than the column, a string that does not fit a fixed-length column): rounding and
//!   truncation are SQL semantics with SQL Server's error messages, so they belong to the SQL
//!   layer, which uses the rounding helpers here ([`Decimal::rescale`],
//!   [`Time::round_to_scale`], [`DateTime::from_datetime2`]).
//! * **Text is UTF-8**, for CHAR/VARCHAR and NCHAR/NVARCHAR alike. The N types differ only in
//!   how their declared length is counted (UTF-16 code units, as SQL Server counts them) and in
//!   what the TDS layer sends; [`Value::Str`] and [`Value::NStr`] keep that distinction.
//! * **[`compare`] and [`encode_key`] agree**: for two tuples of values of the same column
//!   types, comparing the encoded keys byte-wise gives the lexicographic [`compare`] order with
//!   NULL first. A property test checks it on random tuples of every type.
//! * **Decoding never panics.** Every offset, length and field of a row is checked against the
//!   schema and the buffer; anything inconsistent is [`RowError::Corrupt`]. A fuzz-style test
//!   feeds random bytes and truncations.

mod code_page;
mod collation;
mod decimal;
mod declared;
mod guid;
mod key;
mod row;
mod sql_type;
mod temporal;
mod value;

pub use code_page::{decode_cp1252, encode_cp1252};
pub use collation::{fold_char, strip_accent, TextOrder};
pub use decimal::Decimal;
pub use declared::DeclaredType;
pub use guid::Guid;
pub use key::{
    decode_key_columns, decode_key_columns_into, decode_leading_integer, encode_key,
    encode_key_columns, encode_key_columns_ordered, key_decodable, key_prefix_lengths,
};
pub use row::{
    decode_column, decode_column_with, decode_row, decode_row_some_with, decode_row_with,
    encode_row, encode_row_with, min_row_len, off_row_pointers, variant_base_type, DayRange,
    DayTest, OffRowHook, RowDecoder, RowError, MAX_COLUMNS, MAX_INLINE_ROW, MAX_OFF_ROW_POINTER,
    ROW_HEADER_LEN,
};
pub use sql_type::{
    Len, SqlType, MAX_BYTE_LEN, MAX_LOB_LEN, MAX_NCHAR_LEN, MAX_PRECISION, MAX_TIME_SCALE,
    MAX_VARIANT_LEN,
};
pub use temporal::{
    offset_text, Date, DateTime, DateTime2, DateTime2Display, DateTimeOffset,
    DateTimeOffsetDisplay, Time, TimeDisplay, DATETIME_EPOCH_DAYS, DATETIME_MAX_DAYS,
    DATETIME_MIN_DAYS, DATETIME_TICKS_PER_DAY, MAX_DATE_DAYS, MAX_OFFSET_MINUTES, TICKS_PER_DAY,
    TICKS_PER_SECOND,
};
pub use value::{compare, ParseError, Value, Xml};
