//! Values ([MS-TDS] 2.2.5.5; TYPE_VARBYTE and PLP_BODY in 2.2.5.2) and their encoding for a
//! given TYPE_INFO.
//!
//! [`TdsValue`] is the codec's neutral value model: it says what a value *is* (an integer, a
//! date as a day number, a decimal as an unscaled `i128`), not how it is spelled in SQL, so
//! both the server and the `walden sql` client can map it to their own types. Temporal values
//! are kept in the wire's own units (days since 0001-01-01, 10^-scale second increments since
//! midnight, DATETIME's 1/300 s ticks), so decoding and re-encoding is exact.
//!
//! How a value is encoded is decided by the [`TypeInfo`] it is sent under, and the pairing is
//! strict: the value's kind must match the type (a [`TdsValue::NVarChar`] for NVARCHAR/NCHAR/
//! NTEXT, and so on). The only conversions are lossless widenings, which exist because a
//! decoder reports what the bytes hold (an INTN(8) column may carry a 4-byte value) and that
//! must re-encode under the same type: a narrower integer into a wider integer type, REAL
//! into FLOAT, SMALLDATETIME into DATETIME, and a decimal or time value into a type with a
//! larger (or equal) scale, or a smaller one when no digit is lost.
//! The codec never rounds; rounding is SQL semantics and belongs to the engine. NULL is
//! encoded as each type's NULL form; fixed-length types have none (they only appear for NOT
//! NULL columns, or in NBCROW where the null bitmap carries NULL).
//!
//! Decoding checks every length against the type (an INTN value of 3 bytes, a string longer
//! than its declared maximum, a PLP stream whose chunks do not add up to its announced length
//! are all malformed) and every temporal value against its range, so a decoded value always
//! re-encodes. Values longer than the input are reported as truncated before anything is
//! allocated for them.

use crate::tvp::TableValue;
use crate::types::{TypeInfo, MAX_NON_PLP_LEN, MAX_TIME_SCALE};
use crate::wire::utf16_len;

mod decode;
mod encode;
mod row;
mod variant;

pub(crate) use decode::decode_value;
pub(crate) use encode::encode_value;
pub(crate) use row::{decode_row_value, encode_row_value};

/// Days from 0001-01-01 to 9999-12-31, the largest DATE.
pub const MAX_DATE_DAYS: u32 = 3_652_058;
/// DATETIME's smallest day: 1753-01-01, in days from 1900-01-01.
pub const DATETIME_MIN_DAYS: i32 = -53_690;
/// DATETIME's largest day: 9999-12-31, in days from 1900-01-01.
pub const DATETIME_MAX_DAYS: i32 = 2_958_463;
/// DATETIME ticks (1/300 s) in a day.
pub const DATETIME_TICKS_PER_DAY: u32 = 300 * 86_400;
/// The largest time-zone offset of DATETIMEOFFSET, in minutes (14:00).
pub const MAX_OFFSET_MINUTES: i16 = 14 * 60;

/// SQL_VARIANT's maximum length as SQL Server declares it: 8,000 bytes of value and up to
/// 16 of base type and properties.
pub const VARIANT_MAX_LEN: u32 = 8016;

/// PLP_NULL: the total length of a NULL PLP value.
const PLP_NULL: u64 = u64::MAX;
/// UNKNOWN_PLP_LEN: the total length of a PLP value streamed without announcing its size.
const PLP_UNKNOWN_LEN: u64 = u64::MAX - 1;
/// Bytes per PLP chunk written by this encoder. Any split is valid; 8000 keeps chunks the size
/// of a SQL Server page's worth of data.
pub const PLP_CHUNK_LEN: usize = 8000;
// Even, so that a chunk never splits a UTF-16 code unit (see `put_var`).
const _: () = assert!(PLP_CHUNK_LEN.is_multiple_of(2));

/// An exact decimal: `value / 10^scale`, with at most `precision` digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The unscaled value.
    pub value: i128,
    /// Total digits, 1..=38.
    pub precision: u8,
    /// Digits after the point.
    pub scale: u8,
}

/// A time of day: `increments` units of 10^-`scale` seconds since midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Time {
    /// Units since midnight.
    pub increments: u64,
    /// Fractional-second digits, 0..=7.
    pub scale: u8,
}

impl Time {
    /// The value in units of 10^-`scale` seconds, if that loses no digit and is a valid time.
    fn at_scale(self, scale: u8) -> Option<u64> {
        if self.scale > MAX_TIME_SCALE || scale > MAX_TIME_SCALE {
            return None;
        }
        let increments = if scale >= self.scale {
            self.increments.checked_mul(10u64.pow(u32::from(scale - self.scale)))?
        } else {
            let factor = 10u64.pow(u32::from(self.scale - scale));
            self.increments.is_multiple_of(factor).then_some(self.increments / factor)?
        };
        (increments < units_per_day(scale)).then_some(increments)
    }
}

fn units_per_day(scale: u8) -> u64 {
    86_400 * 10u64.pow(u32::from(scale))
}

/// A value as carried by TDS. See the module documentation for the units.
#[derive(Debug, Clone, PartialEq)]
pub enum TdsValue {
    /// NULL of any type.
    Null,
    /// BIT.
    Bit(bool),
    /// TINYINT (unsigned).
    TinyInt(u8),
    /// SMALLINT.
    SmallInt(i16),
    /// INT.
    Int(i32),
    /// BIGINT.
    BigInt(i64),
    /// REAL.
    Real(f32),
    /// FLOAT.
    Float(f64),
    /// DECIMAL / NUMERIC.
    Decimal(Decimal),
    /// MONEY / SMALLMONEY, in ten-thousandths of the currency unit.
    Money(i64),
    /// CHAR / VARCHAR / TEXT: bytes in the code page of the type's collation (transcoding is
    /// the caller's business, since it needs the collation's code page).
    VarChar(Vec<u8>),
    /// NCHAR / NVARCHAR / NTEXT.
    NVarChar(String),
    /// BINARY / VARBINARY / IMAGE.
    Binary(Vec<u8>),
    /// UNIQUEIDENTIFIER, in wire byte order (the first three groups little-endian).
    Guid([u8; 16]),
    /// DATE: days since 0001-01-01.
    Date(u32),
    /// TIME.
    Time(Time),
    /// DATETIME2.
    DateTime2 {
        /// Days since 0001-01-01.
        date: u32,
        /// Time of day.
        time: Time,
    },
    /// DATETIMEOFFSET: the UTC date and time, and the offset of the local time from UTC.
    DateTimeOffset {
        /// UTC days since 0001-01-01.
        date: u32,
        /// UTC time of day.
        time: Time,
        /// Minutes to add to UTC to get local time, -840..=840.
        offset_minutes: i16,
    },
    /// DATETIME.
    DateTime {
        /// Days since 1900-01-01 (negative back to 1753-01-01).
        days: i32,
        /// 1/300 s ticks since midnight.
        ticks: u32,
    },
    /// SMALLDATETIME.
    SmallDateTime {
        /// Days since 1900-01-01.
        days: u16,
        /// Minutes since midnight.
        minutes: u16,
    },
    /// A SQL_VARIANT's value: a non-NULL value and the type it has (a fixed-length type for
    /// the integers, BIT, floats, MONEY and DATETIME; the nullable or USHORTLEN type, with
    /// its parameters, for the others).
    Variant {
        /// The base type.
        base: TypeInfo,
        /// The value, of the base type.
        value: Box<TdsValue>,
    },
    /// A table-valued parameter's table (RPC parameters only).
    Table(Box<TableValue>),
}

impl TdsValue {
    /// The value's kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Null => "NULL",
            Self::Bit(_) => "bit",
            Self::TinyInt(_) => "tinyint",
            Self::SmallInt(_) => "smallint",
            Self::Int(_) => "int",
            Self::BigInt(_) => "bigint",
            Self::Real(_) => "real",
            Self::Float(_) => "float",
            Self::Decimal(_) => "decimal",
            Self::Money(_) => "money",
            Self::VarChar(_) => "varchar",
            Self::NVarChar(_) => "nvarchar",
            Self::Binary(_) => "binary",
            Self::Guid(_) => "uniqueidentifier",
            Self::Date(_) => "date",
            Self::Time(_) => "time",
            Self::DateTime2 { .. } => "datetime2",
            Self::DateTimeOffset { .. } => "datetimeoffset",
            Self::DateTime { .. } => "datetime",
            Self::SmallDateTime { .. } => "smalldatetime",
            Self::Variant { .. } => "sql_variant",
            Self::Table(_) => "table",
        }
    }

    /// The nullable wire type a client would naturally send this value as (for RPC
    /// parameters); `None` for NULL, whose type the caller must choose.
    pub fn natural_type(&self) -> Option<TypeInfo> {
        // Up to 8000 bytes fit the largest non-MAX type; longer values need (MAX).
        let fits = |bytes: usize| bytes <= usize::from(MAX_NON_PLP_LEN);
        Some(match self {
            Self::Null => return None,
            Self::Bit(_) => TypeInfo::BitN,
            Self::TinyInt(_) => TypeInfo::IntN(1),
            Self::SmallInt(_) => TypeInfo::IntN(2),
            Self::Int(_) => TypeInfo::IntN(4),
            Self::BigInt(_) => TypeInfo::IntN(8),
            Self::Real(_) => TypeInfo::FltN(4),
            Self::Float(_) => TypeInfo::FltN(8),
            Self::Decimal(d) => TypeInfo::Decimal { precision: d.precision, scale: d.scale },
            Self::Money(_) => TypeInfo::MoneyN(8),
            Self::VarChar(b) => TypeInfo::varchar(fits(b.len()).then_some(8000)),
            Self::NVarChar(s) => TypeInfo::nvarchar(fits(utf16_len(s) * 2).then_some(4000)),
            Self::Binary(b) => TypeInfo::varbinary(fits(b.len()).then_some(8000)),
            Self::Guid(_) => TypeInfo::Guid,
            Self::Date(_) => TypeInfo::Date,
            Self::Time(t) => TypeInfo::Time { scale: t.scale },
            Self::DateTime2 { time, .. } => TypeInfo::DateTime2 { scale: time.scale },
            Self::DateTimeOffset { time, .. } => TypeInfo::DateTimeOffset { scale: time.scale },
            Self::DateTime { .. } => TypeInfo::DateTimeN(8),
            Self::SmallDateTime { .. } => TypeInfo::DateTimeN(4),
            Self::Variant { .. } => TypeInfo::Variant { max_len: VARIANT_MAX_LEN },
            Self::Table(_) => TypeInfo::Tvp,
        })
    }
}

impl From<bool> for TdsValue {
    fn from(v: bool) -> Self {
        Self::Bit(v)
    }
}

impl From<i32> for TdsValue {
    fn from(v: i32) -> Self {
        Self::Int(v)
    }
}

impl From<i64> for TdsValue {
    fn from(v: i64) -> Self {
        Self::BigInt(v)
    }
}

impl From<f64> for TdsValue {
    fn from(v: f64) -> Self {
        Self::Float(v)
    }
}

impl From<&str> for TdsValue {
    fn from(v: &str) -> Self {
        Self::NVarChar(v.to_owned())
    }
}

impl From<String> for TdsValue {
    fn from(v: String) -> Self {
        Self::NVarChar(v)
    }
}

impl<T: Into<TdsValue>> From<Option<T>> for TdsValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

#[cfg(test)]
mod tests;
