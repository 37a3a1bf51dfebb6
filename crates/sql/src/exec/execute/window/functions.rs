//! The arithmetic of window calls: aggregates over a frame ([`Accumulator`]), SUM's and
//! AVG's types, NTILE's tiles and the percentiles.

use std::cmp::Ordering;

use walden_engine::types::{Decimal, SqlType, Value};

use crate::ast::BinaryOp;
use crate::exec::eval::compare_collated;
use crate::exec::scalar;
use crate::exec::scalar::collation::Collation;
use crate::exec::SqlError;

use super::{Agg, Kind};

/// A percentile's fraction, which must be a number from 0 to 1 (error 4124).
pub(super) fn percentile_fraction(v: &Value, kind: Kind) -> Result<f64, SqlError> {
    let name = if kind == Kind::PercentileCont { "PERCENTILE_CONT" } else { "PERCENTILE_DISC" };
    match scalar::convert(v.clone(), SqlType::Float, None) {
        Ok(Value::Float(x)) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(SqlError::new(
            4124,
            format!("The {name} function's first argument must be between 0.0 and 1.0 inclusive."),
        )),
    }
}

/// The `fraction` percentile of `sorted` (no NULLs): PERCENTILE_CONT interpolates between the
/// two rows around position 1 + fraction * (n - 1), as a FLOAT; PERCENTILE_DISC takes the
/// first value whose cumulative distribution reaches the fraction, in its own type.
pub(super) fn percentile(
    sorted: &[Value],
    fraction: f64,
    continuous: bool,
) -> Result<Value, SqlError> {
    let n = sorted.len();
    if n == 0 {
        return Ok(Value::Null);
    }
    if !continuous {
        let at = (0..n).find(|&k| (k + 1) as f64 / n as f64 >= fraction).unwrap_or(n - 1);
        return Ok(sorted[at].clone());
    }
    let float = |k: usize| -> Result<f64, SqlError> {
        match scalar::convert(sorted[k].clone(), SqlType::Float, None)? {
            Value::Float(x) => Ok(x),
            _ => Ok(0.0),
        }
    };
    let position = fraction * (n - 1) as f64;
    let (below, above) = (position.floor() as usize, position.ceil() as usize);
    let low = float(below)?;
    Ok(Value::Float(if below == above {
        low
    } else {
        low + (position - below as f64) * (float(above)? - low)
    }))
}

/// The 1-based tile of position `k` of `n` rows cut into `tiles` tiles whose sizes differ by
/// at most one, the larger ones first.
pub(super) fn ntile(k: usize, n: usize, tiles: usize) -> usize {
    let size = n / tiles;
    let larger = n % tiles;
    let in_larger = larger * (size + 1);
    if k < in_larger {
        k / (size + 1) + 1
    } else {
        larger + (k - in_larger) / size + 1
    }
}

/// An aggregate's state over the non-NULL values added so far.
pub(super) struct Accumulator {
    agg: Agg,
    /// The collation MIN and MAX compare text by.
    collation: Option<&'static Collation>,
    count: i64,
    /// The sum (SUM, AVG) or the best value (MIN, MAX) so far.
    value: Option<Value>,
}

impl Accumulator {
    pub(super) fn new(agg: Agg, collation: Option<&'static Collation>) -> Self {
        Accumulator { agg, collation, count: 0, value: None }
    }

    pub(super) fn add(&mut self, v: &Value) -> Result<(), SqlError> {
        if v.is_null() {
            scalar::settings::null_eliminated();
            return Ok(());
        }
        self.count += 1;
        self.value = match (self.agg, self.value.take()) {
            (Agg::Count | Agg::CountBig, _) => None,
            (Agg::Sum, None) => Some(sum_seed("SUM", v.clone())?),
            (Agg::Avg, None) => Some(sum_seed("AVG", v.clone())?),
            (Agg::Sum | Agg::Avg, Some(sum)) => {
                Some(scalar::binary(BinaryOp::Add, sum, v.clone())?)
            }
            (Agg::Min | Agg::Max, None) => Some(v.clone()),
            (Agg::Min | Agg::Max, Some(best)) => {
                let o = compare_collated(v, &best, self.collation)?.unwrap_or(Ordering::Equal);
                let better =
                    if self.agg == Agg::Min { o == Ordering::Less } else { o == Ordering::Greater };
                Some(if better { v.clone() } else { best })
            }
        };
        Ok(())
    }

    pub(super) fn result(&self) -> Result<Value, SqlError> {
        match (self.agg, &self.value) {
            (Agg::Count, _) => {
                Ok(Value::Int(i32::try_from(self.count).map_err(|_| SqlError::overflow("int"))?))
            }
            (Agg::CountBig, _) => Ok(Value::BigInt(self.count)),
            (_, None) => Ok(Value::Null),
            (Agg::Avg, Some(sum)) => average(sum.clone(), self.count),
            (_, Some(v)) => Ok(v.clone()),
        }
    }
}

/// The running sum SUM and AVG start from, given their first non-NULL value: SQL Server
/// widens tinyint, smallint and bit to int, decimal to decimal(38, s) and real to float,
/// and keeps the other numeric types; character data is error 8117.
pub(crate) fn sum_seed(name: &str, first: Value) -> Result<Value, SqlError> {
    Ok(match first {
        Value::TinyInt(_) | Value::SmallInt(_) | Value::Bit(_) => {
            scalar::convert(first, SqlType::Int, None)?
        }
        Value::Decimal(d) => scalar::convert(
            Value::Decimal(d),
            SqlType::Decimal { precision: 38, scale: d.scale() },
            None,
        )?,
        Value::Real(_) => scalar::convert(first, SqlType::Float, None)?,
        Value::Str(_) | Value::NStr(_) => {
            return Err(SqlError::new(
                8117,
                format!(
                    "Operand data type varchar is invalid for {} operator.",
                    name.to_lowercase()
                ),
            ))
        }
        other => other,
    })
}

/// AVG from the sum of `n` values, in the sum's type (integer division for integers; MONEY
/// stays MONEY, as SQL Server types AVG of the money category, rounded to its four places).
pub(crate) fn average(sum: Value, n: i64) -> Result<Value, SqlError> {
    let divisor = match &sum {
        Value::Money(_) => Value::BigInt(n),
        Value::Decimal(_) => Value::Decimal(Decimal::from_i64(n)),
        Value::Float(_) => Value::Float(n as f64),
        Value::BigInt(_) => Value::BigInt(n),
        _ => Value::Int(i32::try_from(n).unwrap_or(i32::MAX)),
    };
    scalar::binary(BinaryOp::Divide, sum, divisor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntile_puts_the_larger_tiles_first() {
        let tiles = |n, t| (0..n).map(|k| ntile(k, n, t)).collect::<Vec<_>>();
        assert_eq!(tiles(10, 4), [1, 1, 1, 2, 2, 2, 3, 3, 4, 4]);
        assert_eq!(tiles(4, 4), [1, 2, 3, 4]);
        assert_eq!(tiles(2, 5), [1, 2]);
        assert_eq!(tiles(3, 1), [1, 1, 1]);
    }
}
