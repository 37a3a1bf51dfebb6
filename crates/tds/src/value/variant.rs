//! `sql_variant` ([MS-TDS] 2.2.5.5.4): a base type's id and properties followed by its
//! value, at most [`VARIANT_MAX_LEN`] bytes. Only base types a variant may hold are encoded or
//! accepted, and the properties must have the length that base type calls for.

use super::decode::decode_value;
use super::encode::encode_value;
use super::TdsValue;
use crate::types::TypeInfo;
use crate::wire::Reader;
use crate::TdsError;

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
pub(super) fn put_variant(
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
pub(super) fn decode_variant(max_len: u32, r: &mut Reader<'_>) -> Result<TdsValue, TdsError> {
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
