//! The scalar library against SQL Server's behaviour: types, literals, conversions and their
//! error numbers, operators, comparison, LIKE, text forms and the built-in functions.
//!
//! One file per family, named for it; the helpers they share are here.

// A failed expectation panics with the value or error it got, which is the report a test needs.
#![allow(clippy::unwrap_used)]

use std::cmp::Ordering;

use walden_engine::types::{Date, DateTime, DateTime2, Decimal, Guid, Len, SqlType, Time, Value};

use super::*;
use crate::ast::{BinaryOp, DataType, Ident, Literal, ObjectName, TypeParam, UnaryOp};
use crate::exec::SqlError;

mod comparison;
mod conversions;
mod dates;
mod format;
mod functions;
mod operators;
mod types;

fn s(x: &str) -> Value {
    Value::Str(x.to_string())
}

fn ns(x: &str) -> Value {
    Value::NStr(x.to_string())
}

fn dec(x: &str) -> Value {
    Value::Decimal(Decimal::parse(x).unwrap())
}

fn date(x: &str) -> Value {
    convert(s(x), SqlType::Date, None).unwrap()
}

fn datetime(x: &str) -> Value {
    convert(s(x), SqlType::DateTime, None).unwrap()
}

fn datetime2(x: &str) -> Value {
    convert(s(x), SqlType::DateTime2(7), None).unwrap()
}

fn time(x: &str) -> Value {
    convert(s(x), SqlType::Time(7), None).unwrap()
}

fn number(r: Result<Value, SqlError>) -> i32 {
    r.unwrap_err().number
}

fn f(name: &str, args: Vec<Value>) -> Result<Value, SqlError> {
    call(name, args).unwrap()
}

fn text(v: Value) -> String {
    to_text(&v)
}

fn varchar(n: u16) -> SqlType {
    SqlType::VarChar(Len::N(n))
}

fn ty(name: &str, params: &[TypeParam]) -> DataType {
    DataType { name: ObjectName::simple(Ident::new(name)), params: params.to_vec() }
}

fn add(a: Value, b: Value) -> Result<Value, SqlError> {
    binary(BinaryOp::Add, a, b)
}
