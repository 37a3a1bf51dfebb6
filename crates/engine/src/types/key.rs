//! Memcomparable index keys.
//!
//! [`encode_key`] turns a tuple of values into bytes whose byte-wise order is the tuple's
//! order under [`compare`](super::compare), column by column, NULL first: the B+tree then
//! compares keys with `memcmp` (the row holds the values). An encoding only has to preserve
//! order, not information: text is stored case-folded, which makes `'abc'` and `'ABC '` the
//! same key, so a unique index rejects the second as a duplicate, as SQL Server's does under
//! a case-insensitive collation. Where an encoding does keep the value ([`key_decodable`]),
//! an index-only read takes it back from the key ([`decode_key_columns`]).
//!
//! Each column is a marker byte, `00` for NULL (nothing follows) or `01`, then:
//!
//! | Type | Bytes |
//! |---|---|
//! | TINYINT, BIT | the byte |
//! | SMALLINT, INT, BIGINT, MONEY | big-endian with the sign bit flipped |
//! | DECIMAL(p,s) | the mantissa at scale s, big-endian in the row's width (4/8/12/16), sign bit flipped |
//! | REAL, FLOAT | IEEE bits big-endian: all bits flipped if negative, else the sign bit set; -0 encoded as +0 |
//! | CHAR, VARCHAR, NCHAR, NVARCHAR | trailing spaces dropped, each char lower-cased, UTF-8, escaped, terminated; under a column collation that compares otherwise, the levels of [`TextOrder::put_key`] |
//! | BINARY(n) | the n bytes (padded with zeros) |
//! | VARBINARY | the bytes, escaped, terminated |
//! | DATE | days big-endian, 3 bytes |
//! | TIME | 100 ns ticks big-endian, 5 bytes |
//! | DATETIME | days big-endian with the sign bit flipped, then 1/300 s ticks big-endian |
//! | DATETIME2 | date as DATE, then time as TIME |
//! | UNIQUEIDENTIFIER | the stored bytes in SQL Server's comparison order |
//!
//! Escaping writes a `00` byte as `00 FF` and ends the string with `00 01`: a string that is a
//! prefix of another then sorts first (its `00 01` is below any continuation, including an
//! escaped `00 FF`), and no string's encoding is a prefix of another's, so the next column's
//! bytes never get compared against string bytes. UTF-8 preserves code point order, so folded
//! text compares as [`compare`](super::compare) compares it.
//!
//! Why fixed widths are enough elsewhere: within one column every value has the same type, so
//! a number's encoding always has the same length, and big-endian with the sign flipped orders
//! two's complement integers as unsigned bytes.

use super::collation::TextOrder;
use super::row::{decimal_mantissa, finite, time_units, RowError};
use super::sql_type::{decimal_len, SqlType};
use super::temporal::{Date, DateTime, DateTime2, Time};
use super::value::{fold, Value};
use super::{Decimal, Guid};

/// Appends the key encoding of `values` (one per type, already of the types, as for
/// [`encode_row`](super::encode_row)) to `out`. On error `out` is left as it was.
pub fn encode_key(types: &[SqlType], values: &[Value], out: &mut Vec<u8>) -> Result<(), RowError> {
    if types.len() != values.len() {
        return Err(RowError::ColumnCount { expected: types.len(), found: values.len() });
    }
    encode_key_columns(types.iter().copied().zip(values), out)
}

/// [`encode_key`] of `(type, value)` pairs taken where they are (an index's columns picked
/// out of a row), so that the caller builds no vectors of types and values per key.
pub fn encode_key_columns<'v>(
    columns: impl IntoIterator<Item = (SqlType, &'v Value)>,
    out: &mut Vec<u8>,
) -> Result<(), RowError> {
    encode_key_columns_ordered(columns.into_iter().map(|(ty, v)| (ty, TextOrder::DEFAULT, v)), out)
}

/// [`encode_key_columns`] with each column's collation order: a text column's key is
/// [`TextOrder::put_key`]; other types ignore the order.
pub fn encode_key_columns_ordered<'v>(
    columns: impl IntoIterator<Item = (SqlType, TextOrder, &'v Value)>,
    out: &mut Vec<u8>,
) -> Result<(), RowError> {
    let start = out.len();
    for (i, (ty, order, v)) in columns.into_iter().enumerate() {
        if let Err(e) = put_key_column(i, ty, order, v, out) {
            out.truncate(start);
            return Err(e);
        }
    }
    Ok(())
}

fn put_key_column(
    column: usize,
    ty: SqlType,
    order: TextOrder,
    v: &Value,
    out: &mut Vec<u8>,
) -> Result<(), RowError> {
    if v.is_null() {
        out.push(0);
        return Ok(());
    }
    out.push(1);
    match (ty, v) {
        (SqlType::TinyInt, Value::TinyInt(x)) => out.push(*x),
        (SqlType::Bit, Value::Bit(x)) => out.push(u8::from(*x)),
        (SqlType::SmallInt, Value::SmallInt(x)) => {
            out.extend_from_slice(&(x ^ i16::MIN).to_be_bytes())
        }
        (SqlType::Int, Value::Int(x)) => out.extend_from_slice(&(x ^ i32::MIN).to_be_bytes()),
        (SqlType::BigInt, Value::BigInt(x)) | (SqlType::Money, Value::Money(x)) => {
            out.extend_from_slice(&(x ^ i64::MIN).to_be_bytes())
        }
        (SqlType::Decimal { precision, scale }, Value::Decimal(d)) => {
            let mantissa = decimal_mantissa(column, precision, scale, d)?;
            // The low `width` bytes are the value's two's complement at that width, since it
            // fits; flipping their top bit orders them as unsigned bytes.
            let width = decimal_len(precision);
            let be = mantissa.to_be_bytes();
            let at = out.len();
            out.extend_from_slice(&be[16 - width..]);
            out[at] ^= 0x80;
        }
        (SqlType::Float, Value::Float(x)) => {
            finite(column, *x)?;
            // Adding 0.0 turns -0.0 into +0.0, which compare as equal.
            let bits = (x + 0.0).to_bits();
            let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
            out.extend_from_slice(&ordered.to_be_bytes());
        }
        (SqlType::Real, Value::Real(x)) => {
            finite(column, f64::from(*x))?;
            let bits = (x + 0.0).to_bits();
            let ordered = if bits >> 31 == 1 { !bits } else { bits | 1 << 31 };
            out.extend_from_slice(&ordered.to_be_bytes());
        }
        (SqlType::Char(_) | SqlType::VarChar(_), Value::Str(s))
        | (SqlType::NChar(_) | SqlType::NVarChar(_), Value::NStr(s)) => order.put_key(s, out),
        (SqlType::Binary(n), Value::Binary(b)) => {
            let n = usize::from(n);
            if b.len() > n {
                return Err(RowError::ValueTooLong { column, len: b.len(), max: n });
            }
            out.extend_from_slice(b);
            out.resize(out.len() + n - b.len(), 0);
        }
        (SqlType::VarBinary(_), Value::Binary(b)) => put_escaped(b, out),
        (SqlType::Date, Value::Date(d)) => out.extend_from_slice(&d.days().to_be_bytes()[1..]),
        (SqlType::Time(scale), Value::Time(t)) => {
            time_units(column, scale, *t)?;
            out.extend_from_slice(&t.ticks().to_be_bytes()[3..]);
        }
        (SqlType::DateTime, Value::DateTime(d)) => {
            out.extend_from_slice(&(d.days() ^ i32::MIN).to_be_bytes());
            out.extend_from_slice(&d.ticks().to_be_bytes());
        }
        (SqlType::DateTime2(scale), Value::DateTime2(d)) => {
            time_units(column, scale, d.time)?;
            out.extend_from_slice(&d.date.days().to_be_bytes()[1..]);
            out.extend_from_slice(&d.time.ticks().to_be_bytes()[3..]);
        }
        // The UTC moment alone: values at different offsets naming one moment are equal, in
        // a unique index too, as SQL Server compares them.
        (SqlType::DateTimeOffset(scale), Value::DateTimeOffset(d)) => {
            let utc = d.utc();
            time_units(column, scale, utc.time)?;
            out.extend_from_slice(&utc.date.days().to_be_bytes()[1..]);
            out.extend_from_slice(&utc.time.ticks().to_be_bytes()[3..]);
        }
        (SqlType::UniqueIdentifier, Value::Guid(g)) => out.extend_from_slice(&g.sql_order_bytes()),
        _ => {
            return Err(RowError::TypeMismatch { column, expected: ty, found: v.kind_name() });
        }
    }
    Ok(())
}

/// The byte length of each leading column of an encoded key: entry k is where column k ends
/// (so `key[..lens[k]]` is the encoding of the first k + 1 columns). Stops early at a key
/// shorter than its types say; reads nothing but the markers, widths and terminators, so
/// statistics can count distinct key prefixes without decoding values.
pub fn key_prefix_lengths(types: &[SqlType], key: &[u8]) -> Vec<usize> {
    let mut lens = Vec::with_capacity(types.len());
    let mut at = 0;
    for ty in types {
        match key.get(at) {
            None => break,
            Some(0) => at += 1,
            Some(_) => {
                at += 1;
                let width = match ty {
                    SqlType::TinyInt | SqlType::Bit => Some(1),
                    SqlType::SmallInt => Some(2),
                    SqlType::Int | SqlType::Real => Some(4),
                    SqlType::BigInt | SqlType::Money | SqlType::Float => Some(8),
                    SqlType::Decimal { precision, .. } => Some(decimal_len(*precision)),
                    SqlType::Binary(n) => Some(usize::from(*n)),
                    SqlType::Date => Some(3),
                    SqlType::Time(_) => Some(5),
                    SqlType::DateTime => Some(8),
                    SqlType::DateTime2(_) | SqlType::DateTimeOffset(_) => Some(8),
                    SqlType::UniqueIdentifier => Some(16),
                    _ => None,
                };
                match width {
                    Some(w) => at += w,
                    // Escaped bytes up to the terminator 00 01 (an escaped zero is 00 FF).
                    None => loop {
                        match (key.get(at), key.get(at + 1)) {
                            (Some(0), Some(1)) => {
                                at += 2;
                                break;
                            }
                            (Some(0), Some(_)) => at += 2,
                            (Some(_), _) => at += 1,
                            (None, _) => return lens,
                        }
                    },
                }
            }
        }
        if at > key.len() {
            break;
        }
        lens.push(at);
    }
    lens
}

/// Whether a value of `ty` can be read back from its key encoding: not text, whose key is
/// folded (or a collation's levels); not DATETIMEOFFSET, whose key drops the offset; not FLOAT
/// or REAL, whose key makes -0 into +0; and not the types no key holds.
pub fn key_decodable(ty: SqlType) -> bool {
    matches!(
        ty,
        SqlType::TinyInt
            | SqlType::Bit
            | SqlType::SmallInt
            | SqlType::Int
            | SqlType::BigInt
            | SqlType::Money
            | SqlType::Decimal { .. }
            | SqlType::Binary(_)
            | SqlType::VarBinary(_)
            | SqlType::Date
            | SqlType::Time(_)
            | SqlType::DateTime
            | SqlType::DateTime2(_)
            | SqlType::UniqueIdentifier
    )
}

/// The values of the leading columns of an encoded key, one per type: the value where
/// `wanted` marks the column (its type must be [`key_decodable`]), NULL where it does not
/// (the column's bytes are stepped over, whatever its type). None if the key is not such a
/// key: shorter than its types say, or a wanted column of a type that cannot be read back.
/// An index-only read takes a row's columns from its index entry with it.
pub fn decode_key_columns(types: &[SqlType], wanted: &[bool], key: &[u8]) -> Option<Vec<Value>> {
    let mut values = vec![Value::Null; types.len()];
    decode_key_columns_into(types, wanted, key, &mut |i, v| values[i] = v)?;
    Some(values)
}

/// [`decode_key_columns`] without building a row: `put(i, value)` receives the value of
/// each column `wanted` marks (NULL included), in key order, so that a read decodes each
/// entry into the row it reuses. None as [`decode_key_columns`] (`put` may have received
/// some columns by then).
pub fn decode_key_columns_into(
    types: &[SqlType],
    wanted: &[bool],
    key: &[u8],
    put: &mut dyn FnMut(usize, Value),
) -> Option<()> {
    let lens = key_prefix_lengths(types, key);
    if lens.len() < types.len() {
        return None;
    }
    let mut start = 0;
    for (i, ((&ty, &end), &want)) in types.iter().zip(&lens).zip(wanted).enumerate() {
        let field = &key[start..end];
        start = end;
        if !want {
            continue;
        }
        let value = if field == [0] { Value::Null } else { decode_key_value(ty, &field[1..])? };
        put(i, value);
    }
    Some(())
}

/// The leading column of an encoded key whose type is an integer one (TINYINT, SMALLINT,
/// INT, BIGINT): `Some(None)` for NULL, `Some(Some(value))` otherwise; None if `ty` is
/// another type or the key is too short. For a read that hashes or compares one integer
/// key column per entry ([`decode_key_columns`] builds a row of values for it).
pub fn decode_leading_integer(ty: SqlType, key: &[u8]) -> Option<Option<i64>> {
    fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
        b.get(..N)?.try_into().ok()
    }
    let (&marker, b) = key.split_first()?;
    if marker == 0 {
        return Some(None);
    }
    Some(Some(match ty {
        SqlType::TinyInt => i64::from(*b.first()?),
        SqlType::SmallInt => i64::from(i16::from_be_bytes(be(b)?) ^ i16::MIN),
        SqlType::Int => i64::from(i32::from_be_bytes(be(b)?) ^ i32::MIN),
        SqlType::BigInt => i64::from_be_bytes(be(b)?) ^ i64::MIN,
        _ => return None,
    }))
}

/// One non-NULL column's value from its key bytes (after the marker).
fn decode_key_value(ty: SqlType, b: &[u8]) -> Option<Value> {
    fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
        b.get(..N)?.try_into().ok()
    }
    let wide = |b: &[u8]| {
        let mut units = [0u8; 8];
        units[8 - b.len()..].copy_from_slice(b);
        u64::from_be_bytes(units)
    };
    let date = |b: &[u8]| Date::from_days(wide(b.get(..3)?) as u32);
    let time = |b: &[u8]| Time::from_ticks(wide(b.get(..5)?));
    Some(match ty {
        SqlType::TinyInt => Value::TinyInt(*b.first()?),
        SqlType::Bit => Value::Bit(*b.first()? != 0),
        SqlType::SmallInt => Value::SmallInt(i16::from_be_bytes(be(b)?) ^ i16::MIN),
        SqlType::Int => Value::Int(i32::from_be_bytes(be(b)?) ^ i32::MIN),
        SqlType::BigInt => Value::BigInt(i64::from_be_bytes(be(b)?) ^ i64::MIN),
        SqlType::Money => Value::Money(i64::from_be_bytes(be(b)?) ^ i64::MIN),
        SqlType::Decimal { precision, scale } => {
            // Undo the flipped top bit, then sign-extend the width to 128 bits.
            let width = decimal_len(precision);
            let mut bytes = b.get(..width)?.to_vec();
            bytes[0] ^= 0x80;
            let fill = if bytes[0] & 0x80 != 0 { 0xFF } else { 0 };
            let mut full = [fill; 16];
            full[16 - width..].copy_from_slice(&bytes);
            Value::Decimal(Decimal::new(i128::from_be_bytes(full), scale)?)
        }
        SqlType::Binary(_) => Value::Binary(b.to_vec()),
        SqlType::VarBinary(_) => {
            // Escaped bytes up to the terminator 00 01.
            let mut out = Vec::with_capacity(b.len());
            let mut i = 0;
            loop {
                match (b.get(i), b.get(i + 1)) {
                    (Some(0), Some(1)) => break,
                    (Some(0), Some(0xFF)) => {
                        out.push(0);
                        i += 2;
                    }
                    (Some(0), _) | (None, _) => return None,
                    (Some(&x), _) => {
                        out.push(x);
                        i += 1;
                    }
                }
            }
            Value::Binary(out)
        }
        SqlType::Date => Value::Date(date(b)?),
        SqlType::Time(_) => Value::Time(time(b)?),
        SqlType::DateTime => {
            let days = i32::from_be_bytes(be(b)?) ^ i32::MIN;
            let ticks = u32::from_be_bytes(be(b.get(4..)?)?);
            Value::DateTime(DateTime::from_parts(days, ticks)?)
        }
        SqlType::DateTime2(_) => Value::DateTime2(DateTime2::new(date(b)?, time(b.get(3..)?)?)),
        SqlType::UniqueIdentifier => Value::Guid(Guid::from_sql_order_bytes(be(b)?)),
        _ => return None,
    })
}

/// Folded text, escaped and terminated, folded as [`compare`](super::compare) folds it.
pub(super) fn put_text(s: &str, out: &mut Vec<u8>) {
    let s = s.trim_end_matches(' ');
    if s.is_ascii() {
        // The common case, without per-character iterators: an ASCII character lower-cases
        // to one ASCII character, the same one `char::to_lowercase` gives.
        out.reserve(s.len() + 2);
        for &b in s.as_bytes() {
            if b == 0 {
                out.extend_from_slice(&[0x00, 0xFF]);
            } else {
                out.push(b.to_ascii_lowercase());
            }
        }
    } else {
        let mut utf8 = [0u8; 4];
        for c in fold(s) {
            if c == '\0' {
                out.extend_from_slice(&[0x00, 0xFF]);
            } else {
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// Bytes escaped and terminated.
fn put_escaped(bytes: &[u8], out: &mut Vec<u8>) {
    for &b in bytes {
        if b == 0 {
            out.extend_from_slice(&[0x00, 0xFF]);
        } else {
            out.push(b);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Len;

    #[test]
    fn prefix_lengths_end_where_each_column_ends() {
        let types = [SqlType::Int, SqlType::VarChar(Len::N(10)), SqlType::BigInt, SqlType::Int];
        let values = [Value::Int(7), Value::Str("a\0b".into()), Value::Null, Value::Int(-1)];
        let mut whole = Vec::new();
        encode_key(&types, &values, &mut whole).expect("encodes");
        let mut ends = Vec::new();
        for k in 1..=types.len() {
            let mut part = Vec::new();
            encode_key(&types[..k], &values[..k], &mut part).expect("encodes");
            ends.push(part.len());
        }
        assert_eq!(key_prefix_lengths(&types, &whole), ends);
        // A row id after the columns (a non-unique index's entry) is not a column.
        whole.extend_from_slice(&[9, 9, 9]);
        assert_eq!(key_prefix_lengths(&types, &whole), ends);
    }

    #[test]
    fn decodable_columns_read_back_as_they_were_encoded() {
        let dec = |m: i128, s: u8| Value::Decimal(Decimal::new(m, s).expect("decimal"));
        let cases = [
            (SqlType::TinyInt, Value::TinyInt(200)),
            (SqlType::Bit, Value::Bit(true)),
            (SqlType::SmallInt, Value::SmallInt(-3)),
            (SqlType::Int, Value::Int(i32::MIN)),
            (SqlType::BigInt, Value::BigInt(-1)),
            (SqlType::Money, Value::Money(123_4567)),
            (SqlType::Decimal { precision: 12, scale: 2 }, dec(-123_456, 2)),
            (SqlType::Decimal { precision: 38, scale: 0 }, dec(10i128.pow(37), 0)),
            (SqlType::Binary(3), Value::Binary(vec![0, 1, 2])),
            (SqlType::VarBinary(Len::N(8)), Value::Binary(vec![0, 0xFF, 0, 1])),
            (SqlType::Date, Value::Date(Date::from_days(738_000).expect("date"))),
            (SqlType::Time(7), Value::Time(Time::from_ticks(863_999_999_999).expect("time"))),
            (SqlType::DateTime, Value::DateTime(DateTime::from_parts(-5, 299).expect("dt"))),
            (
                SqlType::DateTime2(3),
                Value::DateTime2(DateTime2::new(
                    Date::from_days(1).expect("date"),
                    Time::from_ticks(10_000).expect("time"),
                )),
            ),
            (SqlType::UniqueIdentifier, Value::Guid(Guid(std::array::from_fn(|i| i as u8)))),
            (SqlType::Int, Value::Null),
        ];
        for (ty, v) in cases {
            assert!(key_decodable(ty), "{ty}");
            // After a text column, which is stepped over, and before a row id's bytes.
            let types = [SqlType::VarChar(Len::N(5)), ty];
            let mut key = Vec::new();
            encode_key(&types, &[Value::Str("Ab".into()), v.clone()], &mut key).expect("encodes");
            key.extend_from_slice(&[7, 7]);
            let back = decode_key_columns(&types, &[false, true], &key).expect("decodes");
            assert_eq!(back, vec![Value::Null, v], "{ty}");
        }
    }

    #[test]
    fn folded_or_lossy_columns_are_not_read_back() {
        for ty in [SqlType::VarChar(Len::N(5)), SqlType::Float, SqlType::DateTimeOffset(7)] {
            assert!(!key_decodable(ty), "{ty}");
        }
        let types = [SqlType::VarChar(Len::N(5))];
        let mut key = Vec::new();
        encode_key(&types, &[Value::Str("Ab".into())], &mut key).expect("encodes");
        assert_eq!(decode_key_columns(&types, &[true], &key), None);
        // A key shorter than its types say is not one.
        assert_eq!(decode_key_columns(&[SqlType::Int, SqlType::Int], &[true, true], &key), None);
    }

    #[test]
    fn leading_integers_read_back_from_a_whole_entry() {
        let cases = [
            (SqlType::TinyInt, Value::TinyInt(200), Some(200)),
            (SqlType::SmallInt, Value::SmallInt(-3), Some(-3)),
            (SqlType::Int, Value::Int(i32::MIN), Some(i64::from(i32::MIN))),
            (SqlType::BigInt, Value::BigInt(i64::MAX), Some(i64::MAX)),
            (SqlType::Int, Value::Null, None),
        ];
        for (ty, v, want) in cases {
            let mut key = Vec::new();
            encode_key(&[ty, SqlType::Int], &[v, Value::Int(5)], &mut key).expect("encodes");
            // The rest of the entry (a second column, a row id) is not read.
            key.extend_from_slice(&[9, 9]);
            assert_eq!(decode_leading_integer(ty, &key), Some(want), "{ty:?}");
        }
        // Too short for its type, or not an integer type.
        assert_eq!(decode_leading_integer(SqlType::Int, &[1, 0]), None);
        assert_eq!(decode_leading_integer(SqlType::Date, &[1, 0, 0, 0]), None);
        assert_eq!(decode_leading_integer(SqlType::Int, &[]), None);
    }
}
