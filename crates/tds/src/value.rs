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

use crate::tvp::{decode_table, encode_table, TableValue};
use crate::types::{
    decimal_len, time_len, TypeInfo, MAX_LEN_PLP, MAX_NON_PLP_LEN, MAX_PRECISION, MAX_TIME_SCALE,
};
use crate::wire::{decode_utf16, utf16_len, Reader};
use crate::TdsError;

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
fn integer(v: &TdsValue, width: usize) -> Option<i64> {
    let (w, n) = match *v {
        TdsValue::TinyInt(n) => (1, i64::from(n)),
        TdsValue::SmallInt(n) => (2, i64::from(n)),
        TdsValue::Int(n) => (4, i64::from(n)),
        TdsValue::BigInt(n) => (8, n),
        _ => return None,
    };
    (w <= width).then_some(n)
}

fn valid_datetime(days: i32, ticks: u32) -> bool {
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
fn bytes(mut b: &[u8]) -> impl FnMut(&mut Vec<u8>, usize) + '_ {
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
fn put_var(
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

/// The length prefix a base type's value has outside a SQL_VARIANT, which inside one is left
/// out (the variant's own length covers it): 0, 1 (BYTELEN types) or 2 (USHORTLEN) bytes.
/// `None` for a type a variant cannot hold.
fn variant_prefix(base: &TypeInfo) -> Option<usize> {
    use TypeInfo as T;
    match base {
        T::Int1
        | T::Bit
        | T::Int2
        | T::Int4
        | T::Int8
        | T::Flt4
        | T::Flt8
        | T::Money
        | T::Money4
        | T::DateTime
        | T::DateTime4 => Some(0),
        T::Guid
        | T::Date
        | T::Decimal { .. }
        | T::Numeric { .. }
        | T::Time { .. }
        | T::DateTime2 { .. }
        | T::DateTimeOffset { .. } => Some(1),
        _ if base.is_plp() => None,
        T::BigVarChar { .. }
        | T::BigChar { .. }
        | T::NVarChar { .. }
        | T::NChar { .. }
        | T::BigVarBinary { .. }
        | T::BigBinary { .. } => Some(2),
        _ => None,
    }
}

/// Whether a type is one of the character types, whose SQL_VARIANT properties put the
/// collation before the length (their TYPE_INFO has it after).
fn is_character(id: u8) -> bool {
    matches!(id, 0xA7 | 0xAF | 0xE7 | 0xEF)
}

/// Collation (5 bytes) then maximum length (2): the character types' properties.
const CHARACTER_PROPS: usize = 7;

/// A base type's property bytes in a SQL_VARIANT: its TYPE_INFO after the type byte, less the
/// length byte GUID and DECIMALN/NUMERICN have there, and with a character type's collation
/// moved before its length.
fn variant_props(base: &TypeInfo) -> Vec<u8> {
    let mut info = Vec::new();
    base.encode(&mut info);
    let info = &info[1..];
    match base {
        TypeInfo::Guid | TypeInfo::Decimal { .. } | TypeInfo::Numeric { .. } => info[1..].to_vec(),
        _ if is_character(base.type_id()) => [&info[2..], &info[..2]].concat(),
        _ => info.to_vec(),
    }
}

/// A SQL_VARIANT value: its length, the base type, its properties, then the value as the
/// base type encodes it without its length prefix (2.2.5.5.4).
fn put_variant(
    base: &TypeInfo,
    value: &TdsValue,
    max_len: u32,
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    let mismatch = || TdsError::TypeMismatch { ty: "SQL_VARIANT", value: value.kind() };
    let prefix = variant_prefix(base).ok_or_else(mismatch)?;
    if matches!(value, TdsValue::Null | TdsValue::Variant { .. }) {
        return Err(mismatch());
    }
    let mut data = Vec::new();
    encode_value(base, value, &mut data)?;
    let props = variant_props(base);
    let body = &data[prefix.min(data.len())..];
    let len = 2 + props.len() + body.len();
    if len > max_len as usize {
        return Err(TdsError::TooLong { what: "SQL_VARIANT", len, max: max_len as usize });
    }
    // At most max_len, a u32.
    out.extend_from_slice(&(len as u32).to_le_bytes());
    // Properties are at most 7 bytes.
    out.extend_from_slice(&[base.type_id(), props.len() as u8]);
    out.extend_from_slice(&props);
    out.extend_from_slice(body);
    Ok(())
}

/// The base type a SQL_VARIANT names by its type byte and property bytes: the TYPE_INFO
/// [`variant_props`] came from, decoded and checked as any TYPE_INFO is, and one a variant
/// can hold.
fn variant_base(id: u8, props: &[u8]) -> Result<TypeInfo, TdsError> {
    let bad = TdsError::Malformed { what: "SQL_VARIANT base type or properties" };
    let mut info = vec![id];
    match id {
        0x24 => info.push(16),
        0x6A | 0x6C => info.push(0),
        _ => {}
    }
    if is_character(id) && props.len() == CHARACTER_PROPS {
        info.extend_from_slice(&props[5..]);
        info.extend_from_slice(&props[..5]);
    } else {
        info.extend_from_slice(props);
    }
    let mut r = Reader::new(&info);
    let base = TypeInfo::decode(&mut r).map_err(|_| bad.clone())?;
    r.finish("SQL_VARIANT properties").map_err(|_| bad.clone())?;
    variant_prefix(&base).map(|_| base).ok_or(bad)
}

/// Reads a SQL_VARIANT value (after its type's TYPE_INFO): NULL for length 0.
fn decode_variant(max_len: u32, r: &mut Reader<'_>) -> Result<TdsValue, TdsError> {
    let bad = |what| TdsError::Malformed { what };
    let len = r.u32_le("SQL_VARIANT length")?;
    if len == 0 {
        return Ok(TdsValue::Null);
    }
    if len > max_len {
        return Err(bad("SQL_VARIANT longer than its declared type"));
    }
    let len = usize::try_from(len).map_err(|_| TdsError::Truncated { what: "SQL_VARIANT" })?;
    let mut d = r.sub(len, "SQL_VARIANT")?;
    let id = d.u8("SQL_VARIANT base type")?;
    let prop_count = usize::from(d.u8("SQL_VARIANT property length")?);
    let props = d.take(prop_count, "SQL_VARIANT properties")?;
    let base = variant_base(id, props)?;
    let prefix = variant_prefix(&base).ok_or(bad("SQL_VARIANT base type"))?;
    let body = d.rest();
    // Put the length prefix back, and decode as the base type does.
    let mut framed = Vec::with_capacity(prefix + body.len());
    match prefix {
        1 => framed.push(u8::try_from(body.len()).map_err(|_| bad("SQL_VARIANT value length"))?),
        2 => framed.extend_from_slice(
            &u16::try_from(body.len()).map_err(|_| bad("SQL_VARIANT value length"))?.to_le_bytes(),
        ),
        _ => {}
    }
    framed.extend_from_slice(body);
    let mut value_reader = Reader::new(&framed);
    let value = decode_value(&base, &mut value_reader)?;
    value_reader.finish("SQL_VARIANT value")?;
    if value == TdsValue::Null {
        return Err(bad("SQL_VARIANT value"));
    }
    Ok(TdsValue::Variant { base, value: Box::new(value) })
}

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

/// The text pointer a ROW carries before a non-NULL TEXT, NTEXT or IMAGE value (2.2.5.5.2;
/// 16 bytes, TEXTPTR's size): SQL Server's names where the value is stored, for READTEXT,
/// WRITETEXT and UPDATETEXT, which Walden does not have. Walden's names the value itself: a
/// 128-bit FNV-1a hash of its bytes as they go out, so two values in a result have the same
/// pointer only if they are equal, and a value read again unchanged has the same pointer.
/// Clients read its length and skip it (docs/format/tds.md).
fn text_pointer(value: &[u8]) -> [u8; 16] {
    // FNV-1a, 128-bit variant: offset basis and prime from the FNV specification.
    const OFFSET: u128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013B;
    let hash = value.iter().fold(OFFSET, |h, &b| (h ^ u128::from(b)).wrapping_mul(PRIME));
    hash.to_le_bytes()
}

/// The text timestamp after the pointer (8 bytes): SQL Server's changes when the value is
/// written with WRITETEXT/UPDATETEXT, which Walden does not have, so it is always zero.
const TEXT_TIMESTAMP: [u8; 8] = [0; 8];

/// A value of a ROW or NBCROW under `ty`: as [`encode_value`], except that a TEXT, NTEXT or
/// IMAGE value comes in its row form, a text pointer (B_VARBYTE; its length 0 is NULL and
/// nothing follows), an 8-byte timestamp, then the 4-byte length and the data.
pub(crate) fn encode_row_value(
    ty: &TypeInfo,
    value: &TdsValue,
    out: &mut Vec<u8>,
) -> Result<(), TdsError> {
    if !ty.is_legacy_lob() {
        return encode_value(ty, value, out);
    }
    if *value == TdsValue::Null {
        out.push(0);
        return Ok(());
    }
    // The value is encoded first (its 4-byte length, then its bytes) so that the pointer
    // can be made from the bytes as sent; the pointer and timestamp then go in before it.
    let start = out.len();
    if let Err(e) = encode_value(ty, value, out) {
        out.truncate(start);
        return Err(e);
    }
    let pointer = text_pointer(&out[start + 4..]);
    let mut header = Vec::with_capacity(1 + pointer.len() + TEXT_TIMESTAMP.len());
    header.push(pointer.len() as u8);
    header.extend_from_slice(&pointer);
    header.extend_from_slice(&TEXT_TIMESTAMP);
    out.splice(start..start, header);
    Ok(())
}

/// The inverse of [`encode_row_value`].
pub(crate) fn decode_row_value(ty: &TypeInfo, r: &mut Reader<'_>) -> Result<TdsValue, TdsError> {
    if !ty.is_legacy_lob() {
        return decode_value(ty, r);
    }
    if r.b_varbyte("TEXTPTR")?.is_empty() {
        return Ok(TdsValue::Null);
    }
    r.take(8, "text timestamp")?;
    match decode_value(ty, r)? {
        // The NULL form of the length belongs to parameters: a row says NULL by its pointer.
        TdsValue::Null => Err(TdsError::Malformed { what: "text value length" }),
        value => Ok(value),
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

fn date(r: &mut Reader<'_>) -> Result<u32, TdsError> {
    let days = r.uint_le(3, "DATE value")? as u32;
    if days > MAX_DATE_DAYS {
        return Err(TdsError::Malformed { what: "DATE value" });
    }
    Ok(days)
}

fn time(r: &mut Reader<'_>, scale: u8) -> Result<Time, TdsError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(ty: TypeInfo, v: TdsValue) -> Vec<u8> {
        let mut out = Vec::new();
        encode_value(&ty, &v, &mut out).unwrap();
        let mut r = Reader::new(&out);
        assert_eq!(decode_value(&ty, &mut r).unwrap(), v, "{ty:?}");
        assert!(r.is_empty());
        out
    }

    #[test]
    fn xml_is_a_plp_stream_of_utf16_and_a_leading_mark_is_dropped() {
        let bytes = round_trip(TypeInfo::Xml, TdsValue::NVarChar("<a>é</a>".into()));
        // Total length, one chunk of 16 bytes, the terminator.
        assert_eq!(&bytes[..8], &16u64.to_le_bytes());
        let mut marked = 18u64.to_le_bytes().to_vec();
        marked.extend_from_slice(&18u32.to_le_bytes());
        marked.extend_from_slice(&[0xFF, 0xFE]);
        marked.extend("<a>é</a>".encode_utf16().flat_map(u16::to_le_bytes));
        marked.extend_from_slice(&0u32.to_le_bytes());
        let mut r = Reader::new(&marked);
        assert_eq!(
            decode_value(&TypeInfo::Xml, &mut r).unwrap(),
            TdsValue::NVarChar("<a>é</a>".into())
        );
        let mut null = Vec::new();
        encode_value(&TypeInfo::Xml, &TdsValue::Null, &mut null).unwrap();
        assert_eq!(null, PLP_NULL.to_le_bytes());
    }

    #[test]
    fn xml_type_info_with_a_schema_is_read_as_untyped() {
        let mut info = vec![0xF1, 1, 2];
        info.extend("db".encode_utf16().flat_map(u16::to_le_bytes));
        info.push(3);
        info.extend("dbo".encode_utf16().flat_map(u16::to_le_bytes));
        info.extend_from_slice(&1u16.to_le_bytes());
        info.extend("s".encode_utf16().flat_map(u16::to_le_bytes));
        let mut r = Reader::new(&info);
        assert_eq!(TypeInfo::decode(&mut r).unwrap(), TypeInfo::Xml);
        assert!(r.is_empty());
        let mut out = Vec::new();
        TypeInfo::Xml.encode(&mut out);
        assert_eq!(out, [0xF1, 0]);
    }

    #[test]
    fn money_is_high_word_first() {
        let bytes = round_trip(TypeInfo::Money, TdsValue::Money(-12_345_678_901_234));
        let high = i32::from_le_bytes(bytes[0..4].try_into().unwrap());
        assert_eq!(i64::from(high), -12_345_678_901_234i64 >> 32);
        round_trip(TypeInfo::MoneyN(4), TdsValue::Money(-2_147_483_648));
        let mut out = Vec::new();
        let err = encode_value(&TypeInfo::MoneyN(4), &TdsValue::Money(1 << 40), &mut out);
        assert_eq!(err, Err(TdsError::ValueOutOfRange { what: "SMALLMONEY" }));
    }

    #[test]
    fn decimals_use_sign_and_magnitude() {
        let d = |value, precision, scale| TdsValue::Decimal(Decimal { value, precision, scale });
        let bytes = round_trip(TypeInfo::Decimal { precision: 5, scale: 2 }, d(-12345, 5, 2));
        assert_eq!(bytes, [5, 0, 0x39, 0x30, 0, 0]);
        round_trip(TypeInfo::Numeric { precision: 38, scale: 0 }, d(10i128.pow(38) - 1, 38, 0));
        // Rescaling up is exact; down only when no digit is lost.
        let mut out = Vec::new();
        encode_value(&TypeInfo::Decimal { precision: 10, scale: 4 }, &d(15, 3, 1), &mut out)
            .unwrap();
        // 1.5 is 15000 at scale 4; precision 10 takes 8 magnitude bytes.
        assert_eq!(out, [9, 1, 0x98, 0x3A, 0, 0, 0, 0, 0, 0]);
        let ty = TypeInfo::Decimal { precision: 3, scale: 0 };
        assert!(encode_value(&ty, &d(15, 3, 1), &mut out).is_err());
        assert!(encode_value(&ty, &d(1000, 4, 0), &mut out).is_err());
    }

    #[test]
    fn decimals_of_any_length_decode() {
        // 1234.56 as mssql-jdbc sends it: the shortest magnitude (3 bytes), length 4.
        let ty = TypeInfo::Decimal { precision: 6, scale: 2 };
        let mut r = Reader::new(&[4, 1, 0x40, 0xE2, 0x01]);
        let got = decode_value(&ty, &mut r).unwrap();
        assert_eq!(got, TdsValue::Decimal(Decimal { value: 123_456, precision: 6, scale: 2 }));
        // Every length from 2 to 17, negative too.
        for len in 2u8..=17 {
            let mut bytes = vec![len, 0, 7];
            bytes.resize(usize::from(len) + 1, 0);
            let ty = TypeInfo::Numeric { precision: 38, scale: 1 };
            let got = decode_value(&ty, &mut Reader::new(&bytes)).unwrap();
            assert_eq!(got, TdsValue::Decimal(Decimal { value: -7, precision: 38, scale: 1 }));
        }
        // A value beyond the precision is still refused, as is a length of 1 or 18.
        let ty = TypeInfo::Decimal { precision: 2, scale: 0 };
        assert!(decode_value(&ty, &mut Reader::new(&[2, 1, 100])).is_err());
        assert!(decode_value(&ty, &mut Reader::new(&[1, 1])).is_err());
        let mut long = vec![18, 1];
        long.resize(19, 0);
        let ty = TypeInfo::Decimal { precision: 38, scale: 0 };
        assert!(decode_value(&ty, &mut Reader::new(&long)).is_err());
    }

    #[test]
    fn datetime_values_keep_their_ticks_and_round_into_smalldatetime() {
        // 22:04:05 and 23:59:59.997 (tick 25,919,999) keep every tick.
        for ticks in [(22 * 3600 + 4 * 60 + 5) * 300, 25_919_999] {
            round_trip(TypeInfo::DateTimeN(8), TdsValue::DateTime { days: 45_000, ticks });
            round_trip(TypeInfo::DateTime, TdsValue::DateTime { days: -53_690, ticks });
        }
        let small = |days, ticks| {
            let mut out = Vec::new();
            encode_value(&TypeInfo::DateTimeN(4), &TdsValue::DateTime { days, ticks }, &mut out)
                .map(|()| decode_value(&TypeInfo::DateTimeN(4), &mut Reader::new(&out)))
        };
        // 10:00:29.997 rounds down, 10:00:30.000 up; 23:59:30 is the next day's midnight.
        let at = |h: u32, m: u32, s: u32, t: u32| ((h * 60 + m) * 60 + s) * 300 + t;
        assert_eq!(
            small(1, at(10, 0, 29, 299)),
            Ok(Ok(TdsValue::SmallDateTime { days: 1, minutes: 600 }))
        );
        assert_eq!(
            small(1, at(10, 0, 30, 0)),
            Ok(Ok(TdsValue::SmallDateTime { days: 1, minutes: 601 }))
        );
        assert_eq!(
            small(1, at(23, 59, 30, 0)),
            Ok(Ok(TdsValue::SmallDateTime { days: 2, minutes: 0 }))
        );
        // Before 1900 or after 2079-06-06: out of SMALLDATETIME's range.
        assert!(small(-1, 0).is_err());
        assert!(small(65_536, 0).is_err());
        assert!(small(65_535, at(23, 59, 30, 0)).is_err());
    }

    #[test]
    fn a_text_pointer_names_the_value_it_comes_with() {
        let ty = TypeInfo::Image { max_len: 0x7FFF_FFFF };
        let row = |v: &[u8]| {
            let mut out = Vec::new();
            encode_row_value(&ty, &TdsValue::Binary(v.to_vec()), &mut out).unwrap();
            let mut r = Reader::new(&out);
            assert_eq!(decode_row_value(&ty, &mut r).unwrap(), TdsValue::Binary(v.to_vec()));
            assert!(r.is_empty());
            out
        };
        let (a, again, b) = (row(b"abc"), row(b"abc"), row(b"abd"));
        // Length 16, the pointer, a zero timestamp, the 4-byte length, the data.
        assert_eq!(a.len(), 1 + 16 + 8 + 4 + 3);
        assert_eq!(a[0], 16);
        assert_eq!(&a[17..25], &[0; 8]);
        assert_eq!(&a[25..], &[3, 0, 0, 0, b'a', b'b', b'c']);
        assert_eq!(a, again);
        assert_ne!(a[1..17], b[1..17]);
        // NULL: an empty pointer and nothing else.
        let mut out = Vec::new();
        encode_row_value(&ty, &TdsValue::Null, &mut out).unwrap();
        assert_eq!(out, [0]);
    }

    #[test]
    fn legacy_lob_parameters_may_exceed_their_declared_length() {
        // tedious declares NTEXT in characters: 3 declared, 6 bytes sent.
        let collation = crate::Collation::SQL_LATIN1_GENERAL_CP1_CI_AS;
        let ty = TypeInfo::NText { max_len: 3, collation };
        let bytes = [6, 0, 0, 0, b'd', 0, 0xE9, 0, b'f', 0];
        let got = decode_value(&ty, &mut Reader::new(&bytes)).unwrap();
        assert_eq!(got, TdsValue::NVarChar("d\u{e9}f".into()));
        let ty = TypeInfo::Image { max_len: 1 };
        let got = decode_value(&ty, &mut Reader::new(&[2, 0, 0, 0, 1, 2])).unwrap();
        assert_eq!(got, TdsValue::Binary(vec![1, 2]));
        // A length beyond the bytes that follow is still an error.
        assert!(decode_value(&ty, &mut Reader::new(&[9, 0, 0, 0, 1])).is_err());
    }

    #[test]
    fn integers_widen_but_never_narrow() {
        let mut out = Vec::new();
        encode_value(&TypeInfo::IntN(8), &TdsValue::SmallInt(-2), &mut out).unwrap();
        assert_eq!(out, [8, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]);
        let err = encode_value(&TypeInfo::Int2, &TdsValue::Int(1), &mut out);
        assert_eq!(err, Err(TdsError::TypeMismatch { ty: "SMALLINT", value: "int" }));
        assert!(encode_value(&TypeInfo::Int4, &TdsValue::Null, &mut out).is_err());
    }

    #[test]
    fn hand_built_invalid_types_error_instead_of_panicking() {
        let t = Time { increments: 1, scale: 7 };
        let d = TdsValue::Decimal(Decimal { value: 1, precision: 200, scale: 100 });
        let c = crate::Collation::default();
        for (ty, v) in [
            (TypeInfo::IntN(16), TdsValue::BigInt(1)),
            (TypeInfo::IntN(3), TdsValue::TinyInt(1)),
            (TypeInfo::FltN(5), TdsValue::Real(1.0)),
            (TypeInfo::Decimal { precision: 200, scale: 100 }, d.clone()),
            (TypeInfo::Decimal { precision: 10, scale: 2 }, d),
            (TypeInfo::Time { scale: 200 }, TdsValue::Time(t)),
            (TypeInfo::DateTime2 { scale: 9 }, TdsValue::DateTime2 { date: 0, time: t }),
            (TypeInfo::NChar { len: MAX_LEN_PLP, collation: c }, TdsValue::NVarChar("a".into())),
            (TypeInfo::Time { scale: 7 }, TdsValue::Time(Time { increments: 1, scale: 255 })),
        ] {
            assert!(encode_value(&ty, &v, &mut Vec::new()).is_err(), "{ty:?}");
        }
    }

    #[test]
    fn time_scales_and_ranges() {
        let t = Time { increments: 86_399_999, scale: 3 };
        let ty = TypeInfo::Time { scale: 7 };
        let mut out = Vec::new();
        encode_value(&ty, &TdsValue::Time(t), &mut out).unwrap();
        let back = decode_value(&ty, &mut Reader::new(&out)).unwrap();
        assert_eq!(back, TdsValue::Time(Time { increments: 863_999_990_000, scale: 7 }));
        let too_late = TdsValue::Time(Time { increments: 86_400, scale: 0 });
        assert!(encode_value(&TypeInfo::Time { scale: 0 }, &too_late, &mut out).is_err());
        // 24:00:00.0 on the wire is malformed.
        assert!(decode_value(
            &TypeInfo::Time { scale: 0 },
            &mut Reader::new(&[3, 0x80, 0x51, 0x01])
        )
        .is_err());
    }

    #[test]
    fn plp_decoding_handles_chunks_unknown_length_and_lies() {
        let ty = TypeInfo::nvarchar(None);
        // "hé" split across chunks in the middle of a code unit, length unknown.
        let mut wire = PLP_UNKNOWN_LEN.to_le_bytes().to_vec();
        for chunk in [&[0x68u8][..], &[0x00, 0xE9], &[0x00]] {
            wire.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
            wire.extend_from_slice(chunk);
        }
        wire.extend_from_slice(&[0; 4]);
        let v = decode_value(&ty, &mut Reader::new(&wire)).unwrap();
        assert_eq!(v, TdsValue::NVarChar("hé".into()));

        let mut lie = 3u64.to_le_bytes().to_vec();
        lie.extend_from_slice(&[4, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0]);
        assert!(decode_value(&ty, &mut Reader::new(&lie)).is_err());
        let mut huge = (u64::MAX - 2).to_le_bytes().to_vec();
        huge.extend_from_slice(&[0; 4]);
        assert_eq!(
            decode_value(&ty, &mut Reader::new(&huge)),
            Err(TdsError::Truncated { what: "PLP data" })
        );
    }
}
