//! Values as they stand in a ROW or NBCROW token, which differ from parameters only for
//! the legacy LOB types (TEXT, NTEXT, IMAGE): each non-NULL value is preceded by a text pointer
//! and a timestamp, which a reader must skip and a writer must supply.

use super::decode::decode_value;
use super::encode::encode_value;
use super::TdsValue;
use crate::types::TypeInfo;
use crate::wire::Reader;
use crate::TdsError;

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
