//! Types: resolving a written type name, typing literals and values, and SQL Server's data type
//! precedence, which decides the type of every expression that mixes two types.

use walden_engine::types::{
    Decimal, Len, SqlType, Value, MAX_BYTE_LEN, MAX_NCHAR_LEN, MAX_PRECISION, MAX_TIME_SCALE,
};

use crate::ast::{DataType, Literal, TypeParam};
use crate::exec::SqlError;

/// Resolves a written type (DDL, `DECLARE`): omitted lengths are 1, as in SQL Server.
///
/// Accepted names, case-insensitively and with an optional `sys.` or `dbo.` prefix: `int`,
/// `integer`, `bigint`, `smallint`, `tinyint`, `bit`, `decimal`, `dec`, `numeric`, `float`,
/// `real`, `money`, `char`, `character`, `varchar`, `nchar`, `nvarchar`, `binary`,
/// `varbinary`, `date`, `time`, `datetime`, `datetime2`, `uniqueidentifier`, `sysname`. Walden
/// has no SMALLMONEY, SMALLDATETIME, TEXT, NTEXT or IMAGE type: they resolve to the nearest
/// type it has (MONEY, DATETIME, VARCHAR(MAX), NVARCHAR(MAX), VARBINARY(MAX)), so that scripts
/// written for SQL Server still run.
pub fn data_type(dt: &DataType) -> Result<SqlType, SqlError> {
    resolve(dt, 1)
}

/// [`data_type`] for the target of `CAST`/`CONVERT`, where an omitted length is 30.
pub fn data_type_in_cast(dt: &DataType) -> Result<SqlType, SqlError> {
    resolve(dt, 30)
}

fn resolve(dt: &DataType, default_len: u16) -> Result<SqlType, SqlError> {
    let name = &dt.name;
    let written = match &name.schema {
        Some(schema) => format!("{}.{}", schema.value, name.name.value),
        None => name.name.value.clone(),
    };
    let system_schema = name
        .schema
        .as_ref()
        .is_none_or(|s| s.value.eq_ignore_ascii_case("sys") || s.value.eq_ignore_ascii_case("dbo"));
    if !system_schema || name.database.is_some() || name.server.is_some() {
        return Err(unknown_type(&written));
    }
    let lower = name.name.value.to_ascii_lowercase();
    let params = dt.params.as_slice();
    let bare = |ty: SqlType| {
        if params.is_empty() {
            Ok(ty)
        } else {
            Err(SqlError::new(2716, format!("Cannot specify a column width on data type {lower}.")))
        }
    };
    match lower.as_str() {
        "tinyint" => bare(SqlType::TinyInt),
        "smallint" => bare(SqlType::SmallInt),
        "int" | "integer" => bare(SqlType::Int),
        "bigint" => bare(SqlType::BigInt),
        "bit" => bare(SqlType::Bit),
        "real" => bare(SqlType::Real),
        "money" | "smallmoney" => bare(SqlType::Money),
        "date" => bare(SqlType::Date),
        "datetime" | "smalldatetime" => bare(SqlType::DateTime),
        "uniqueidentifier" => bare(SqlType::UniqueIdentifier),
        "sql_variant" => bare(SqlType::Variant),
        "xml" => bare(SqlType::Xml),
        // A column of these is a row version (the binder marks it); elsewhere it is just
        // its storage, BINARY(8), as in SQL Server.
        "rowversion" | "timestamp" => bare(SqlType::Binary(8)),
        "sysname" => bare(SqlType::NVarChar(Len::N(128))),
        "text" => bare(SqlType::VarChar(Len::Max)),
        "ntext" => bare(SqlType::NVarChar(Len::Max)),
        "image" => bare(SqlType::VarBinary(Len::Max)),
        "decimal" | "dec" | "numeric" => decimal_params(&lower, params),
        "float" => match params {
            [] => Ok(SqlType::Float),
            [TypeParam::Number(0)] => Err(zero_length()),
            [TypeParam::Number(n)] => u8::try_from(*n)
                .ok()
                .and_then(SqlType::float)
                .ok_or_else(|| precision_too_big(*n, 53)),
            _ => Err(no_width(&lower)),
        },
        "time" => time_scale(&lower, params).map(SqlType::Time),
        "datetime2" => time_scale(&lower, params).map(SqlType::DateTime2),
        "datetimeoffset" => time_scale(&lower, params).map(SqlType::DateTimeOffset),
        "char" | "character" => {
            fixed_len(&lower, params, default_len, MAX_BYTE_LEN).map(SqlType::Char)
        }
        "nchar" => fixed_len(&lower, params, default_len, MAX_NCHAR_LEN).map(SqlType::NChar),
        "binary" => fixed_len(&lower, params, default_len, MAX_BYTE_LEN).map(SqlType::Binary),
        "varchar" => var_len(&lower, params, default_len, MAX_BYTE_LEN).map(SqlType::VarChar),
        "nvarchar" => var_len(&lower, params, default_len, MAX_NCHAR_LEN).map(SqlType::NVarChar),
        "varbinary" => var_len(&lower, params, default_len, MAX_BYTE_LEN).map(SqlType::VarBinary),
        _ => Err(unknown_type(&written)),
    }
}

fn decimal_params(name: &str, params: &[TypeParam]) -> Result<SqlType, SqlError> {
    let (precision, scale) = match params {
        [] => return Ok(SqlType::DEFAULT_DECIMAL),
        [TypeParam::Number(p)] => (*p, 0),
        [TypeParam::Number(p), TypeParam::Number(s)] => (*p, *s),
        _ => return Err(no_width(name)),
    };
    if precision == 0 {
        return Err(zero_length());
    }
    if precision > u32::from(MAX_PRECISION) {
        return Err(precision_too_big(precision, MAX_PRECISION));
    }
    if scale > precision {
        return Err(SqlError::new(
            183,
            format!(
                "The scale ({scale}) for column or parameter #1 must be within the range 0 to \
                 {precision}."
            ),
        ));
    }
    // Both are at most 38 here.
    Ok(SqlType::Decimal { precision: precision as u8, scale: scale as u8 })
}

fn time_scale(name: &str, params: &[TypeParam]) -> Result<u8, SqlError> {
    match params {
        [] => Ok(MAX_TIME_SCALE),
        [TypeParam::Number(s)] => {
            u8::try_from(*s).ok().filter(|s| *s <= MAX_TIME_SCALE).ok_or_else(|| {
                SqlError::with_severity(1002, 15, format!("Specified scale {s} is invalid."))
            })
        }
        _ => Err(no_width(name)),
    }
}

fn length(name: &str, n: u32, max: u16) -> Result<u16, SqlError> {
    if n == 0 {
        return Err(zero_length());
    }
    u16::try_from(n).ok().filter(|n| *n <= max).ok_or_else(|| {
        SqlError::new(
            131,
            format!(
                "The size ({n}) given to the type '{name}' exceeds the maximum allowed for any \
                 data type ({max})."
            ),
        )
    })
}

fn fixed_len(name: &str, params: &[TypeParam], default: u16, max: u16) -> Result<u16, SqlError> {
    match params {
        [] => Ok(default),
        [TypeParam::Number(n)] => length(name, *n, max),
        _ => Err(no_width(name)),
    }
}

fn var_len(name: &str, params: &[TypeParam], default: u16, max: u16) -> Result<Len, SqlError> {
    match params {
        [] => Ok(Len::N(default)),
        [TypeParam::Max] => Ok(Len::Max),
        [TypeParam::Number(n)] => length(name, *n, max).map(Len::N),
        _ => Err(no_width(name)),
    }
}

fn unknown_type(written: &str) -> SqlError {
    SqlError::new(
        2715,
        format!("Column, parameter, or variable #1: Cannot find data type {written}."),
    )
}

fn no_width(name: &str) -> SqlError {
    SqlError::new(2716, format!("Cannot specify a column width on data type {name}."))
}

fn zero_length() -> SqlError {
    SqlError::with_severity(1001, 15, "Length or precision specification 0 is invalid.")
}

fn precision_too_big(precision: u32, max: u8) -> SqlError {
    SqlError::new(
        2750,
        format!(
            "Column or parameter #1: Specified column precision {precision} is greater than the \
             maximum precision of {max}."
        ),
    )
}

/// A literal's value, typed as SQL Server types constants: digits are `int` if they fit and
/// `numeric(p,0)` otherwise, digits with a point are `numeric` with the written scale, a number
/// with an exponent is `float`.
pub fn literal(lit: &Literal) -> Result<Value, SqlError> {
    let out_of_range = |text: &str| {
        SqlError::with_severity(
            1007,
            15,
            format!(
                "The number '{text}' is out of the range for numeric representation (maximum \
                 precision 38)."
            ),
        )
    };
    match lit {
        Literal::Null => Ok(Value::Null),
        Literal::String { value, national: false } => Ok(Value::Str(value.clone())),
        Literal::String { value, national: true } => Ok(Value::NStr(value.clone())),
        Literal::Binary(bytes) => Ok(Value::Binary(bytes.clone())),
        Literal::Integer(text) => match text.parse::<i32>() {
            Ok(v) => Ok(Value::Int(v)),
            Err(_) => Decimal::parse(text).map(Value::Decimal).map_err(|_| out_of_range(text)),
        },
        Literal::Decimal(text) => {
            Decimal::parse(text).map(Value::Decimal).map_err(|_| out_of_range(text))
        }
        Literal::Float(text) => match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Value::Float(v)),
            _ => Err(out_of_range(text)),
        },
        Literal::Money(text) => {
            let digits = if text.starts_with('.') { format!("0{text}") } else { text.clone() };
            let d = Decimal::parse(&digits).map_err(|_| out_of_range(text))?;
            crate::exec::scalar::convert(Value::Decimal(d), SqlType::Money, None)
        }
    }
}

/// The value of an integer literal of at most nine digits, which is always an `int`:
/// [`literal`]'s commonest case without its general parse, as a loop evaluates its
/// constants again at every iteration.
#[inline]
pub(crate) fn short_int_literal(lit: &Literal) -> Option<i32> {
    let Literal::Integer(text) = lit else { return None };
    if text.is_empty() || text.len() > 9 {
        return None;
    }
    text.bytes().try_fold(0i32, |n, b| b.is_ascii_digit().then(|| n * 10 + i32::from(b - b'0')))
}

/// The precision a decimal value is taken to have: its digits, and at least its scale (so that
/// `0.05` is `numeric(2,2)`, as SQL Server types that constant).
pub(crate) fn decimal_precision(d: Decimal) -> u8 {
    super::num::digits(d.mantissa()).max(d.scale()).clamp(1, MAX_PRECISION)
}

/// The type that best describes a value, for result-set metadata and `SELECT INTO`: strings get
/// their own length (at least 1, `MAX` beyond the largest declared length), decimals their own
/// precision and scale, times the full scale 7. A NULL without a type is `int`, as in SQL Server.
pub fn type_of(v: &Value) -> SqlType {
    match v {
        Value::Null | Value::Int(_) => SqlType::Int,
        Value::TinyInt(_) => SqlType::TinyInt,
        Value::SmallInt(_) => SqlType::SmallInt,
        Value::BigInt(_) => SqlType::BigInt,
        Value::Bit(_) => SqlType::Bit,
        Value::Decimal(d) => {
            SqlType::Decimal { precision: decimal_precision(*d), scale: d.scale() }
        }
        Value::Float(_) => SqlType::Float,
        Value::Real(_) => SqlType::Real,
        Value::Money(_) => SqlType::Money,
        Value::Str(s) => SqlType::VarChar(declared_len(s.len(), MAX_BYTE_LEN)),
        Value::NStr(s) => SqlType::NVarChar(declared_len(s.encode_utf16().count(), MAX_NCHAR_LEN)),
        Value::Binary(b) => SqlType::VarBinary(declared_len(b.len(), MAX_BYTE_LEN)),
        Value::Date(_) => SqlType::Date,
        Value::Time(_) => SqlType::Time(MAX_TIME_SCALE),
        Value::DateTime(_) => SqlType::DateTime,
        Value::DateTime2(_) => SqlType::DateTime2(MAX_TIME_SCALE),
        Value::DateTimeOffset(_) => SqlType::DateTimeOffset(MAX_TIME_SCALE),
        Value::Guid(_) => SqlType::UniqueIdentifier,
        Value::Xml(_) => SqlType::Xml,
    }
}

pub(crate) fn declared_len(len: usize, max: u16) -> Len {
    match u16::try_from(len.max(1)) {
        Ok(n) if n <= max => Len::N(n),
        _ => Len::Max,
    }
}

/// SQL Server's data type precedence: when an operator combines two types, the one with the
/// lower precedence is converted to the other. Higher is stronger. The order is SQL Server's
/// (datetimeoffset > datetime2 > datetime > date > time > float > real > decimal > money > bigint > int >
/// smallint > tinyint > bit > uniqueidentifier > nvarchar > nchar > varchar > char > varbinary >
/// binary).
pub fn precedence(t: &SqlType) -> u8 {
    match t {
        SqlType::Variant => 23,
        SqlType::Xml => 22,
        SqlType::DateTimeOffset(_) => 21,
        SqlType::DateTime2(_) => 20,
        SqlType::DateTime => 19,
        SqlType::Date => 18,
        SqlType::Time(_) => 17,
        SqlType::Float => 16,
        SqlType::Real => 15,
        SqlType::Decimal { .. } => 14,
        SqlType::Money => 13,
        SqlType::BigInt => 12,
        SqlType::Int => 11,
        SqlType::SmallInt => 10,
        SqlType::TinyInt => 9,
        SqlType::Bit => 8,
        SqlType::UniqueIdentifier => 7,
        SqlType::NVarChar(_) => 6,
        SqlType::NChar(_) => 5,
        SqlType::VarChar(_) => 4,
        SqlType::Char(_) => 3,
        SqlType::VarBinary(_) => 2,
        SqlType::Binary(_) => 1,
    }
}

/// [`precedence`] of a value's kind; NULL is below everything, so the other side decides.
pub(crate) fn value_precedence(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Xml(_) => 22,
        Value::DateTimeOffset(_) => 21,
        Value::DateTime2(_) => 20,
        Value::DateTime(_) => 19,
        Value::Date(_) => 18,
        Value::Time(_) => 17,
        Value::Float(_) => 16,
        Value::Real(_) => 15,
        Value::Decimal(_) => 14,
        Value::Money(_) => 13,
        Value::BigInt(_) => 12,
        Value::Int(_) => 11,
        Value::SmallInt(_) => 10,
        Value::TinyInt(_) => 9,
        Value::Bit(_) => 8,
        Value::Guid(_) => 7,
        Value::NStr(_) => 6,
        Value::Str(_) => 4,
        Value::Binary(_) => 2,
    }
}

/// The type of an expression that can yield either type (`CASE`, `COALESCE`, `UNION`): the one
/// of higher [`precedence`], widened so that values of the other fit where SQL Server widens
/// them: decimals keep the larger integral part and the larger scale (at most 38 digits), strings
/// and binaries the larger length, times the larger fractional scale.
pub fn common_type(a: SqlType, b: SqlType) -> SqlType {
    let (hi, lo) = if precedence(&a) >= precedence(&b) { (a, b) } else { (b, a) };
    let len = |x: Len, y: Len| match (x, y) {
        (Len::N(m), Len::N(n)) => Len::N(m.max(n)),
        _ => Len::Max,
    };
    let text_len = |t: SqlType| match t {
        SqlType::Char(n) | SqlType::NChar(n) | SqlType::Binary(n) => Some(Len::N(n)),
        SqlType::VarChar(l) | SqlType::NVarChar(l) | SqlType::VarBinary(l) => Some(l),
        _ => None,
    };
    match hi {
        SqlType::Decimal { precision, scale } => {
            let (lo_p, lo_s) = match lo {
                SqlType::Decimal { precision, scale } => (precision, scale),
                SqlType::Money => (19, 4),
                SqlType::BigInt => (19, 0),
                SqlType::Int => (10, 0),
                SqlType::SmallInt => (5, 0),
                SqlType::TinyInt => (3, 0),
                SqlType::Bit => (1, 0),
                _ => (precision, scale),
            };
            let scale = scale.max(lo_s);
            let integral = (precision - scale.min(precision)).max(lo_p - lo_s.min(lo_p));
            let precision = (integral + scale).min(MAX_PRECISION);
            SqlType::Decimal { precision, scale: scale.min(precision) }
        }
        SqlType::Char(n) => match text_len(lo) {
            Some(Len::N(m)) if matches!(lo, SqlType::Char(_)) => SqlType::Char(n.max(m)),
            Some(l) => SqlType::VarChar(len(Len::N(n), l)),
            None => hi,
        },
        SqlType::NChar(n) => match text_len(lo) {
            Some(Len::N(m)) if matches!(lo, SqlType::NChar(_) | SqlType::Char(_)) => {
                SqlType::NChar(n.max(m))
            }
            Some(l) => SqlType::NVarChar(len(Len::N(n), l)),
            None => hi,
        },
        SqlType::VarChar(l) => SqlType::VarChar(text_len(lo).map_or(l, |m| len(l, m))),
        SqlType::NVarChar(l) => SqlType::NVarChar(text_len(lo).map_or(l, |m| len(l, m))),
        SqlType::Binary(n) => match lo {
            SqlType::Binary(m) => SqlType::Binary(n.max(m)),
            _ => hi,
        },
        SqlType::VarBinary(l) => SqlType::VarBinary(text_len(lo).map_or(l, |m| len(l, m))),
        SqlType::Time(s) => match lo {
            SqlType::Time(t) => SqlType::Time(s.max(t)),
            _ => hi,
        },
        SqlType::DateTime2(s) => match lo {
            SqlType::DateTime2(t) | SqlType::Time(t) => SqlType::DateTime2(s.max(t)),
            _ => hi,
        },
        SqlType::DateTimeOffset(s) => match lo {
            SqlType::DateTimeOffset(t) | SqlType::DateTime2(t) | SqlType::Time(t) => {
                SqlType::DateTimeOffset(s.max(t))
            }
            _ => hi,
        },
        _ => hi,
    }
}

/// A type's name as SQL Server's messages spell it: the base name without parameters, and
/// `numeric` for DECIMAL (as in "Error converting data type varchar to numeric.").
pub(crate) fn type_label(t: &SqlType) -> &'static str {
    match t {
        SqlType::TinyInt => "tinyint",
        SqlType::SmallInt => "smallint",
        SqlType::Int => "int",
        SqlType::BigInt => "bigint",
        SqlType::Bit => "bit",
        SqlType::Decimal { .. } => "numeric",
        SqlType::Float => "float",
        SqlType::Real => "real",
        SqlType::Money => "money",
        SqlType::Char(_) => "char",
        SqlType::VarChar(_) => "varchar",
        SqlType::NChar(_) => "nchar",
        SqlType::NVarChar(_) => "nvarchar",
        SqlType::Binary(_) => "binary",
        SqlType::VarBinary(_) => "varbinary",
        SqlType::Date => "date",
        SqlType::Time(_) => "time",
        SqlType::DateTime => "datetime",
        SqlType::DateTime2(_) => "datetime2",
        SqlType::DateTimeOffset(_) => "datetimeoffset",
        SqlType::UniqueIdentifier => "uniqueidentifier",
        SqlType::Variant => "sql_variant",
        SqlType::Xml => "xml",
    }
}

/// [`type_label`] of a value's kind.
pub(crate) fn value_label(v: &Value) -> &'static str {
    match v {
        Value::Decimal(_) => "numeric",
        other => other.kind_name(),
    }
}
