//! Arithmetic and bitwise operators.
//!
//! The operand of lower data type precedence ([`precedence`](super::precedence)) is converted
//! to the other's type, implicitly (so `1 + '1'` is 2 and `1 + 'a'` is Msg 245), and the
//! operation is done in that type: integers in their own width with overflow checks, DECIMAL
//! exactly with SQL Server's result scale ([`num`](super::num)), FLOAT and REAL in IEEE
//! arithmetic, MONEY in ten-thousandths, DATETIME plus or minus a number of days. `+` on two
//! character strings concatenates, on two binary strings too.

use walden_engine::types::{DateTime, Decimal, SqlType, Value, DATETIME_TICKS_PER_DAY};

use super::convert::{coerce, text_to_decimal, to_float, type_clash};
use super::num::{decimal_op, small_decimal_op, Exact};
use super::settings;
use super::text::binary_text;
use super::types::{value_label, value_precedence};
use crate::ast::{BinaryOp, UnaryOp};
use crate::exec::SqlError;

/// The operator's word in SQL Server's messages.
fn op_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Multiply => "multiply",
        BinaryOp::Divide => "divide",
        BinaryOp::Modulo => "modulo",
        BinaryOp::Add => "add",
        BinaryOp::Subtract => "subtract",
        BinaryOp::BitAnd => "'&'",
        BinaryOp::BitOr => "'|'",
        BinaryOp::BitXor => "'^'",
        BinaryOp::Eq => "equal to",
        BinaryOp::NotEq => "not equal to",
        BinaryOp::Lt => "less than",
        BinaryOp::Gt => "greater than",
        BinaryOp::LtEq => "less than or equal to",
        BinaryOp::GtEq => "greater than or equal to",
        BinaryOp::And => "AND",
        BinaryOp::Or => "OR",
    }
}

/// Msg 8117: `Operand data type bit is invalid for add operator.`
fn invalid_operand(label: &str, op: &str) -> SqlError {
    SqlError::new(8117, format!("Operand data type {label} is invalid for {op} operator."))
}

/// Msg 402: `The data types float and int are incompatible in the modulo operator.`
fn incompatible(a: &Value, b: &Value, op: BinaryOp) -> SqlError {
    SqlError::new(
        402,
        format!(
            "The data types {} and {} are incompatible in the {} operator.",
            value_label(a),
            value_label(b),
            op_name(op)
        ),
    )
}

fn not_arithmetic(op: BinaryOp) -> SqlError {
    SqlError::new(
        402,
        format!("The {} operator is not an arithmetic or bitwise operator.", op_name(op)),
    )
}

/// Prefix `-`, `+` and `~`. `-` on TINYINT gives SMALLINT (SQL Server's rule: an unsigned value
/// negates to a signed one); negating the smallest value of a type is Msg 8115. `NOT` is a
/// predicate, not a value operator: an error here.
pub fn unary(op: UnaryOp, v: Value) -> Result<Value, SqlError> {
    if op == UnaryOp::Not {
        return Err(SqlError::new(4145, "NOT is not a value operator."));
    }
    if v.is_null() {
        return Ok(Value::Null);
    }
    let name = match op {
        UnaryOp::Minus => "minus",
        UnaryOp::Plus => "plus",
        _ => "~",
    };
    match op {
        UnaryOp::Plus => match v {
            Value::Date(_)
            | Value::Time(_)
            | Value::DateTime(_)
            | Value::DateTime2(_)
            | Value::DateTimeOffset(_)
            | Value::Guid(_)
            | Value::Binary(_) => Err(invalid_operand(value_label(&v), name)),
            other => Ok(other),
        },
        UnaryOp::Minus => match v {
            Value::TinyInt(x) => Ok(Value::SmallInt(-i16::from(x))),
            Value::SmallInt(x) => {
                x.checked_neg().map(Value::SmallInt).ok_or_else(|| SqlError::overflow("smallint"))
            }
            Value::Int(x) => {
                x.checked_neg().map(Value::Int).ok_or_else(|| SqlError::overflow("int"))
            }
            Value::BigInt(x) => {
                x.checked_neg().map(Value::BigInt).ok_or_else(|| SqlError::overflow("bigint"))
            }
            Value::Decimal(d) => Decimal::new(-d.mantissa(), d.scale())
                .map(Value::Decimal)
                .ok_or_else(|| SqlError::overflow("numeric")),
            Value::Float(x) => Ok(Value::Float(-x)),
            Value::Real(x) => Ok(Value::Real(-x)),
            Value::Money(m) => {
                m.checked_neg().map(Value::Money).ok_or_else(|| SqlError::overflow("money"))
            }
            other => Err(invalid_operand(value_label(&other), name)),
        },
        _ => match v {
            Value::TinyInt(x) => Ok(Value::TinyInt(!x)),
            Value::SmallInt(x) => Ok(Value::SmallInt(!x)),
            Value::Int(x) => Ok(Value::Int(!x)),
            Value::BigInt(x) => Ok(Value::BigInt(!x)),
            Value::Bit(b) => Ok(Value::Bit(!b)),
            other => Err(invalid_operand(value_label(&other), name)),
        },
    }
}

/// Binary arithmetic (`*`, `/`, `%`, `+`, `-`) and bitwise (`&`, `|`, `^`) operators, with
/// SQL Server's conversions and result types (see the module documentation). NULL in gives
/// NULL out. Division or modulo by zero is Msg 8134, integer overflow Msg 8115 naming the
/// result type. Comparison and logical operators are not value operators: an error here.
///
/// Under `SET ARITHABORT OFF` and `ANSI_WARNINGS OFF` a division by zero or an overflow is
/// NULL instead, and under `CONCAT_NULL_YIELDS_NULL OFF` a string `+` NULL is the string
/// ([`super::settings`]).
pub fn binary(op: BinaryOp, a: Value, b: Value) -> Result<Value, SqlError> {
    match operate(op, a, b) {
        Err(e) if matches!(e.number, 8134 | 8115) => settings::arithmetic_error(e),
        r => r,
    }
}

fn operate(op: BinaryOp, a: Value, b: Value) -> Result<Value, SqlError> {
    let bitwise_op = match op {
        BinaryOp::Multiply
        | BinaryOp::Divide
        | BinaryOp::Modulo
        | BinaryOp::Add
        | BinaryOp::Subtract => false,
        BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => true,
        _ => return Err(not_arithmetic(op)),
    };
    // The hot path: loops count with INT and BIGINT, without allocating or converting.
    match (&a, &b) {
        (Value::Int(x), Value::Int(y)) => {
            return int_arith(op, i64::from(*x), i64::from(*y), SqlType::Int)
        }
        (Value::BigInt(x), Value::BigInt(y)) => return int_arith(op, *x, *y, SqlType::BigInt),
        // INT meets BIGINT as BIGINT (`SET @total += @int`).
        (Value::BigInt(x), Value::Int(y)) => {
            return int_arith(op, *x, i64::from(*y), SqlType::BigInt)
        }
        (Value::Int(x), Value::BigInt(y)) => {
            return int_arith(op, i64::from(*x), *y, SqlType::BigInt)
        }
        _ => {}
    }
    if matches!(a, Value::Xml(_)) || matches!(b, Value::Xml(_)) {
        return Err(incompatible(&a, &b, op));
    }
    if a.is_null() || b.is_null() {
        if op == BinaryOp::Add && !settings::current().concat_null_yields_null {
            return Ok(match (a, b) {
                (s @ (Value::Str(_) | Value::NStr(_)), _)
                | (_, s @ (Value::Str(_) | Value::NStr(_))) => s,
                _ => Value::Null,
            });
        }
        return Ok(Value::Null);
    }
    if bitwise_op {
        return bitwise(op, a, b);
    }
    if op == BinaryOp::Add {
        match (a, b) {
            (Value::Str(x), Value::Str(y)) => return Ok(Value::Str(x + &y)),
            (Value::Str(x) | Value::NStr(x), Value::Str(y) | Value::NStr(y)) => {
                return Ok(Value::NStr(x + &y))
            }
            (Value::Binary(mut x), Value::Binary(y)) => {
                x.extend_from_slice(&y);
                return Ok(Value::Binary(x));
            }
            (Value::Str(x), Value::Binary(y)) => {
                return Ok(Value::Str(x + &binary_text(&y, 0, false)))
            }
            (Value::NStr(x), Value::Binary(y)) => {
                return Ok(Value::NStr(x + &binary_text(&y, 0, true)))
            }
            (Value::Binary(x), Value::Str(y)) => {
                return Ok(Value::Str(binary_text(&x, 0, false) + &y))
            }
            (Value::Binary(x), Value::NStr(y)) => {
                return Ok(Value::NStr(binary_text(&x, 0, true) + &y))
            }
            (a, b) => return arithmetic(op, a, b),
        }
    }
    arithmetic(op, a, b)
}

/// `x op y` for an arithmetic `op` on integers, None on overflow of `i64`, for a zero
/// divisor (and `i64::MIN / -1`), and for any other operator. The caller narrows the result
/// to the operands' type.
#[inline]
pub(crate) fn checked_int_op(op: BinaryOp, x: i64, y: i64) -> Option<i64> {
    match op {
        BinaryOp::Add => x.checked_add(y),
        BinaryOp::Subtract => x.checked_sub(y),
        BinaryOp::Multiply => x.checked_mul(y),
        BinaryOp::Divide => x.checked_div(y),
        BinaryOp::Modulo => x.checked_rem(y),
        _ => None,
    }
}

/// [`binary`] where it is one machine operation that cannot fail: `+`, `-` or `*` of two
/// INTs, two BIGINTs or a BIGINT and an INT (within range), or two DECIMALs of ordinary size
/// ([`small_decimal_op`]), and `/` or `%` of those integers by a divisor other than
/// zero (both truncate toward zero, the remainder taking the dividend's sign, as Rust's do),
/// read in place. `None` for anything else, which [`binary`]
/// answers (with its errors and warnings). A caller that holds its operands by reference
/// (a row's columns, a running sum) needs no copy for these.
// Inline: an expression's evaluation then takes the result in registers, not back from the
// memory this function wrote it to (a stall at every operator of a loop's arithmetic).
#[inline]
pub(crate) fn quick_binary(op: BinaryOp, a: &Value, b: &Value) -> Option<Value> {
    let ints = |x: i64, y: i64| checked_int_op(op, x, y);
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            ints(i64::from(*x), i64::from(*y)).and_then(|r| i32::try_from(r).ok()).map(Value::Int)
        }
        (Value::BigInt(x), Value::BigInt(y)) => ints(*x, *y).map(Value::BigInt),
        // INT meeting BIGINT is BIGINT, by type precedence (a running `@sum += @int`).
        (Value::BigInt(x), Value::Int(y)) => ints(*x, i64::from(*y)).map(Value::BigInt),
        (Value::Int(x), Value::BigInt(y)) => ints(i64::from(*x), *y).map(Value::BigInt),
        (Value::Decimal(x), Value::Decimal(y)) => small_decimal_op(op, *x, *y).map(Value::Decimal),
        // An INT meets a DECIMAL as the DECIMAL of its digits at scale 0, as `arithmetic`
        // takes it (`Exact::int`).
        (Value::Decimal(x), Value::Int(y)) => {
            small_decimal_op(op, *x, Decimal::new(i128::from(*y), 0)?).map(Value::Decimal)
        }
        (Value::Int(x), Value::Decimal(y)) => {
            small_decimal_op(op, Decimal::new(i128::from(*x), 0)?, *y).map(Value::Decimal)
        }
        _ => None,
    }
}

/// An integer operand as `i64` (BIT as 0/1).
fn int_value(v: &Value) -> Option<i64> {
    match v {
        Value::TinyInt(x) => Some(i64::from(*x)),
        Value::SmallInt(x) => Some(i64::from(*x)),
        Value::Int(x) => Some(i64::from(*x)),
        Value::BigInt(x) => Some(*x),
        Value::Bit(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// Integer arithmetic in the type `ty` (TINYINT, SMALLINT, INT or BIGINT), both operands
/// already of that type or narrower, and `op` one of the operators [`binary`] accepts.
/// Operands of INT or narrower cannot overflow `i64`: overflow of `ty` shows as a result
/// outside its range.
fn int_arith(op: BinaryOp, x: i64, y: i64, ty: SqlType) -> Result<Value, SqlError> {
    let r = match op {
        BinaryOp::Add => x.checked_add(y),
        BinaryOp::Subtract => x.checked_sub(y),
        BinaryOp::Multiply => x.checked_mul(y),
        BinaryOp::Divide | BinaryOp::Modulo if y == 0 => return Err(SqlError::divide_by_zero()),
        BinaryOp::Divide => x.checked_div(y),
        BinaryOp::Modulo => Some(x.wrapping_rem(y)),
        BinaryOp::BitAnd => Some(x & y),
        BinaryOp::BitOr => Some(x | y),
        _ => Some(x ^ y),
    };
    let overflow = || SqlError::overflow(super::types::type_label(&ty));
    let r = r.ok_or_else(overflow)?;
    Ok(match ty {
        SqlType::TinyInt => Value::TinyInt(u8::try_from(r).map_err(|_| overflow())?),
        SqlType::SmallInt => Value::SmallInt(i16::try_from(r).map_err(|_| overflow())?),
        SqlType::Int => Value::Int(i32::try_from(r).map_err(|_| overflow())?),
        _ => Value::BigInt(r),
    })
}

/// `& | ^`. One operand (not both) may be BINARY or VARBINARY: it is read as a number of the
/// other operand's integer type, as a conversion of binary to that type reads it (the rightmost
/// bytes, big-endian, zero-extended on the left). This is what `sysstat & 0xf` on the old system
/// tables relies on. BIT against binary works in TINYINT, the type SQL Server gives BIT here.
fn bitwise(op: BinaryOp, a: Value, b: Value) -> Result<Value, SqlError> {
    match (&a, &b) {
        (Value::Binary(bytes), other) | (other, Value::Binary(bytes)) => {
            let Some(y) = int_value(other) else {
                return Err(incompatible(&a, &b, op));
            };
            let ty = match other {
                Value::Bit(_) => SqlType::TinyInt,
                v => int_type(v),
            };
            let x = binary_as_int(bytes, &ty);
            return int_arith(op, x, y, ty);
        }
        _ => {}
    }
    let (Some(x), Some(y)) = (int_value(&a), int_value(&b)) else {
        return Err(incompatible(&a, &b, op));
    };
    if let (Value::Bit(_), Value::Bit(_)) = (&a, &b) {
        return Ok(Value::Bit(
            match op {
                BinaryOp::BitAnd => x & y,
                BinaryOp::BitOr => x | y,
                _ => x ^ y,
            } != 0,
        ));
    }
    let top = if value_precedence(&a) >= value_precedence(&b) { &a } else { &b };
    int_arith(op, x, y, int_type(top))
}

/// Binary bytes read as an integer of type `ty` (TINYINT, SMALLINT, INT or BIGINT): its last
/// 1, 2, 4 or 8 bytes, big-endian, signed in the type's width (TINYINT is unsigned).
fn binary_as_int(bytes: &[u8], ty: &SqlType) -> i64 {
    let width = match ty {
        SqlType::TinyInt => 1,
        SqlType::SmallInt => 2,
        SqlType::BigInt => 8,
        _ => 4,
    };
    let tail = &bytes[bytes.len().saturating_sub(width)..];
    let mut buf = [0u8; 8];
    buf[8 - tail.len()..].copy_from_slice(tail);
    let raw = u64::from_be_bytes(buf);
    match width {
        1 => raw as i64,
        2 => i64::from(raw as u16 as i16),
        4 => i64::from(raw as u32 as i32),
        _ => raw as i64,
    }
}

/// The integer type of an integer value. BIT is the higher-precedence side only when both sides
/// are BIT, which the callers handle first; it falls to INT here.
fn int_type(v: &Value) -> SqlType {
    match v {
        Value::TinyInt(_) => SqlType::TinyInt,
        Value::SmallInt(_) => SqlType::SmallInt,
        Value::BigInt(_) => SqlType::BigInt,
        _ => SqlType::Int,
    }
}

/// `+ - * / %` once NULLs and concatenation are out of the way.
fn arithmetic(op: BinaryOp, a: Value, b: Value) -> Result<Value, SqlError> {
    // DECIMAL with DECIMAL or INT (`l_extendedprice * (1 - l_discount)`), per row of a
    // query over prices: straight to the exact operation. DECIMAL is the top type, so the
    // general path below does the same with the same operands.
    match (&a, &b) {
        (Value::Decimal(x), Value::Decimal(y)) => {
            if let Some(d) = small_decimal_op(op, *x, *y) {
                return Ok(Value::Decimal(d));
            }
            return decimal_op(op, Exact::decimal(*x), Exact::decimal(*y)).map(Value::Decimal);
        }
        (Value::Decimal(x), Value::Int(y)) => {
            let y = Exact::int(i64::from(*y));
            return decimal_op(op, Exact::decimal(*x), y).map(Value::Decimal);
        }
        (Value::Int(x), Value::Decimal(y)) => {
            let x = Exact::int(i64::from(*x));
            return decimal_op(op, x, Exact::decimal(*y)).map(Value::Decimal);
        }
        _ => {}
    }
    let a_top = value_precedence(&a) >= value_precedence(&b);
    let (top, other) = if a_top { (&a, &b) } else { (&b, &a) };
    match top {
        Value::Date(_) | Value::Time(_) | Value::DateTime2(_) | Value::DateTimeOffset(_) => {
            if other.is_numeric() {
                Err(SqlError::new(
                    206,
                    format!(
                        "Operand type clash: {} is incompatible with {}",
                        value_label(top),
                        value_label(other)
                    ),
                ))
            } else {
                Err(invalid_operand(value_label(top), op_name(op)))
            }
        }
        Value::DateTime(_) => datetime_arith(op, &a, &b),
        Value::Float(_) | Value::Real(_) => {
            if op == BinaryOp::Modulo {
                return Err(incompatible(&a, &b, op));
            }
            let real = matches!(top, Value::Real(_));
            let (x, y) = (float_operand(a)?, float_operand(b)?);
            let r = match op {
                BinaryOp::Add => x + y,
                BinaryOp::Subtract => x - y,
                BinaryOp::Multiply => x * y,
                _ => {
                    if y == 0.0 {
                        return Err(SqlError::divide_by_zero());
                    }
                    x / y
                }
            };
            if real {
                // The operation is done in f64 and rounded once to f32.
                let r = r as f32;
                if !r.is_finite() {
                    return Err(SqlError::overflow("real"));
                }
                Ok(Value::Real(r))
            } else if r.is_finite() {
                Ok(Value::Float(r))
            } else {
                Err(SqlError::overflow("float"))
            }
        }
        Value::Decimal(_) => {
            let (x, y) = (exact_operand(a)?, exact_operand(b)?);
            decimal_op(op, x, y).map(Value::Decimal)
        }
        Value::Money(_) => {
            let (x, y) = (money_operand(a)?, money_operand(b)?);
            money_arith(op, x, y)
        }
        Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_) => {
            let ty = int_type(top);
            let x = int_operand(a, ty)?;
            let y = int_operand(b, ty)?;
            int_arith(op, x, y, ty)
        }
        Value::Bit(_) => Err(invalid_operand("bit", op_name(op))),
        _ => Err(invalid_operand(value_label(top), op_name(op))),
    }
}

fn float_operand(v: Value) -> Result<f64, SqlError> {
    match v {
        Value::Str(_) | Value::NStr(_) => to_float(&v),
        Value::Float(x) => Ok(x),
        other => match coerce(other, SqlType::Float, true)? {
            Value::Float(x) => Ok(x),
            _ => Ok(0.0),
        },
    }
}

/// A DECIMAL operand: numbers exactly, strings at the scale they are written with.
fn exact_operand(v: Value) -> Result<Exact, SqlError> {
    match v {
        Value::Decimal(d) => Ok(Exact::decimal(d)),
        Value::Money(m) => Ok(Exact { m: i128::from(m), s: 4, p: 19 }),
        Value::Str(ref s) | Value::NStr(ref s) => {
            text_to_decimal(s, value_label(&v)).map(Exact::decimal)
        }
        other => match int_value(&other) {
            Some(x) => Ok(Exact::int(x)),
            None => Err(type_clash(&other, &SqlType::DEFAULT_DECIMAL)),
        },
    }
}

fn money_operand(v: Value) -> Result<i64, SqlError> {
    match coerce(v, SqlType::Money, true)? {
        Value::Money(m) => Ok(m),
        _ => Ok(0),
    }
}

fn int_operand(v: Value, ty: SqlType) -> Result<i64, SqlError> {
    if let Some(x) = int_value(&v) {
        return Ok(x);
    }
    let converted = coerce(v, ty, true)?;
    Ok(int_value(&converted).unwrap_or(0))
}

/// MONEY arithmetic in ten-thousandths; products and quotients are rounded half away from zero
/// to four decimals.
fn money_arith(op: BinaryOp, x: i64, y: i64) -> Result<Value, SqlError> {
    let (x, y) = (i128::from(x), i128::from(y));
    let round_div = |n: i128, d: i128| {
        let (q, r) = (n / d, n % d);
        if r.abs() * 2 >= d.abs() {
            q + n.signum() * d.signum()
        } else {
            q
        }
    };
    let r = match op {
        BinaryOp::Add => x + y,
        BinaryOp::Subtract => x - y,
        BinaryOp::Multiply => round_div(x * y, 10_000),
        BinaryOp::Divide | BinaryOp::Modulo if y == 0 => return Err(SqlError::divide_by_zero()),
        BinaryOp::Divide => round_div(x * 10_000, y),
        _ => x % y,
    };
    i64::try_from(r).map(Value::Money).map_err(|_| SqlError::overflow("money"))
}

/// DATETIME `+`/`-` another DATETIME or a number of days (fractions are parts of a day), in
/// 1/300 s ticks since 1900-01-01.
fn datetime_arith(op: BinaryOp, a: &Value, b: &Value) -> Result<Value, SqlError> {
    if !matches!(op, BinaryOp::Add | BinaryOp::Subtract) {
        return Err(invalid_operand("datetime", op_name(op)));
    }
    let ticks = |v: &Value| -> Result<i64, SqlError> {
        let dt = match v {
            Value::DateTime(dt) => *dt,
            Value::Date(_) | Value::Time(_) | Value::DateTime2(_) | Value::DateTimeOffset(_) => {
                return Err(incompatible(a, b, op))
            }
            other => match coerce(other.clone(), SqlType::DateTime, true)? {
                Value::DateTime(dt) => dt,
                _ => return Err(incompatible(a, b, op)),
            },
        };
        Ok(i64::from(dt.days()) * i64::from(DATETIME_TICKS_PER_DAY) + i64::from(dt.ticks()))
    };
    let (x, y) = (ticks(a)?, ticks(b)?);
    let total = if op == BinaryOp::Add { x + y } else { x - y };
    let per_day = i64::from(DATETIME_TICKS_PER_DAY);
    let days = i32::try_from(total.div_euclid(per_day)).ok();
    // rem_euclid is in 0..per_day.
    let t = total.rem_euclid(per_day) as u32;
    days.and_then(|d| DateTime::from_parts(d, t)).map(Value::DateTime).ok_or_else(|| {
        SqlError::new(517, "Adding a value to a 'datetime' column caused an overflow.")
    })
}
