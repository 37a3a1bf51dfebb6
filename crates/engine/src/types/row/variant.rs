//! SQL_VARIANT's stored form: the base type a value is kept as (its own, variable lengths at
//! the value's length, DECIMAL at the fewest digits that hold it), that type's descriptor, then
//! the value as a column of that type stores it (`docs/format/row.md`).

use super::encode::{put_fixed, var_parts};
use super::RowError;
use crate::types::sql_type::{Len, SqlType, MAX_PRECISION};
use crate::types::value::Value;

/// Whether a SQL_VARIANT can hold values of `ty`: any type but the MAX ones and itself.
pub(super) fn variant_can_hold(ty: SqlType) -> bool {
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
pub(super) fn variant_bytes(column: usize, v: &Value) -> Result<Vec<u8>, RowError> {
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
