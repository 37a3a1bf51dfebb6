//! The scalar library against SQL Server's behaviour: types, literals, conversions and their
//! error numbers, operators, comparison, LIKE, text forms and the built-in functions.

// A failed expectation panics with the value or error it got, which is the report a test needs.
#![allow(clippy::unwrap_used)]

use std::cmp::Ordering;

use walden_engine::types::{Date, DateTime, DateTime2, Decimal, Guid, Len, SqlType, Time, Value};

use super::*;
use crate::ast::{BinaryOp, DataType, Ident, Literal, ObjectName, TypeParam, UnaryOp};
use crate::exec::SqlError;

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

// ---------------------------------------------------------------------------------------------
// Types and literals
// ---------------------------------------------------------------------------------------------

#[test]
fn data_types_resolve_with_sql_server_defaults() {
    use TypeParam::{Max, Number};
    assert_eq!(data_type(&ty("INTEGER", &[])).unwrap(), SqlType::Int);
    assert_eq!(data_type(&ty("varchar", &[])).unwrap(), varchar(1));
    assert_eq!(data_type_in_cast(&ty("varchar", &[])).unwrap(), varchar(30));
    assert_eq!(data_type_in_cast(&ty("NCHAR", &[])).unwrap(), SqlType::NChar(30));
    assert_eq!(data_type(&ty("Decimal", &[])).unwrap(), SqlType::DEFAULT_DECIMAL);
    assert_eq!(
        data_type(&ty("numeric", &[Number(10), Number(2)])).unwrap(),
        SqlType::Decimal { precision: 10, scale: 2 }
    );
    assert_eq!(data_type(&ty("float", &[Number(24)])).unwrap(), SqlType::Real);
    assert_eq!(data_type(&ty("float", &[])).unwrap(), SqlType::Float);
    assert_eq!(data_type(&ty("nvarchar", &[Max])).unwrap(), SqlType::NVarChar(Len::Max));
    assert_eq!(data_type(&ty("sysname", &[])).unwrap(), SqlType::NVarChar(Len::N(128)));
    assert_eq!(data_type(&ty("time", &[])).unwrap(), SqlType::Time(7));
    assert_eq!(data_type(&ty("datetime2", &[Number(3)])).unwrap(), SqlType::DateTime2(3));
    let mut qualified = ty("int", &[]);
    qualified.name.schema = Some(Ident::new("sys"));
    assert_eq!(data_type(&qualified).unwrap(), SqlType::Int);
    qualified.name.schema = Some(Ident::new("sales"));
    assert_eq!(data_type(&qualified).unwrap_err().number, 2715);

    let e = data_type(&ty("foo", &[])).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (2715, "Column, parameter, or variable #1: Cannot find data type foo.")
    );
    let e = data_type(&ty("varchar", &[Number(9000)])).unwrap_err();
    assert_eq!(e.number, 131);
    assert_eq!(
        e.message,
        "The size (9000) given to the type 'varchar' exceeds the maximum allowed for any data type (8000)."
    );
    assert_eq!(data_type(&ty("nvarchar", &[Number(4001)])).unwrap_err().number, 131);
    assert_eq!(data_type(&ty("decimal", &[Number(39)])).unwrap_err().number, 2750);
    assert_eq!(data_type(&ty("decimal", &[Number(5), Number(6)])).unwrap_err().number, 183);
    assert_eq!(data_type(&ty("int", &[Number(5)])).unwrap_err().number, 2716);
    assert_eq!(data_type(&ty("time", &[Number(8)])).unwrap_err().number, 1002);
    assert_eq!(data_type(&ty("varchar", &[Number(0)])).unwrap_err().number, 1001);
    assert_eq!(data_type(&ty("float", &[Number(54)])).unwrap_err().number, 2750);
}

#[test]
fn literals_are_typed_like_sql_server_constants() {
    assert_eq!(literal(&Literal::Integer("2147483647".into())).unwrap(), Value::Int(i32::MAX));
    assert_eq!(literal(&Literal::Integer("2147483648".into())).unwrap(), dec("2147483648"));
    let v = literal(&Literal::Decimal("1.50".into())).unwrap();
    assert_eq!(type_of(&v), SqlType::Decimal { precision: 3, scale: 2 });
    assert_eq!(literal(&Literal::Float("1e3".into())).unwrap(), Value::Float(1000.0));
    assert_eq!(literal(&Literal::String { value: "x".into(), national: true }).unwrap(), ns("x"));
    assert_eq!(literal(&Literal::String { value: "x".into(), national: false }).unwrap(), s("x"));
    assert_eq!(literal(&Literal::Binary(vec![1, 2])).unwrap(), Value::Binary(vec![1, 2]));
    assert_eq!(literal(&Literal::Null).unwrap(), Value::Null);
    let forty_digits = "1".repeat(40);
    assert_eq!(literal(&Literal::Integer(forty_digits)).unwrap_err().number, 1007);
}

#[test]
fn values_describe_their_types() {
    assert_eq!(type_of(&s("abc")), varchar(3));
    assert_eq!(type_of(&s("")), varchar(1));
    assert_eq!(type_of(&s(&"x".repeat(9000))), SqlType::VarChar(Len::Max));
    assert_eq!(type_of(&ns("é😀")), SqlType::NVarChar(Len::N(3)));
    assert_eq!(type_of(&dec("0.05")), SqlType::Decimal { precision: 2, scale: 2 });
    assert_eq!(type_of(&dec("-12.5")), SqlType::Decimal { precision: 3, scale: 1 });
    assert_eq!(type_of(&Value::Binary(vec![1; 3])), SqlType::VarBinary(Len::N(3)));
    assert_eq!(type_of(&datetime2("2024-01-01")), SqlType::DateTime2(7));
    assert_eq!(type_of(&time("10:00")), SqlType::Time(7));
    assert_eq!(type_of(&Value::Null), SqlType::Int);
}

#[test]
fn precedence_and_common_types() {
    assert!(precedence(&SqlType::DateTime2(7)) > precedence(&SqlType::DateTime));
    assert!(precedence(&SqlType::Int) > precedence(&varchar(10)));
    assert!(precedence(&SqlType::UniqueIdentifier) > precedence(&SqlType::NVarChar(Len::Max)));
    assert!(precedence(&SqlType::Binary(1)) < precedence(&SqlType::VarBinary(Len::N(1))));
    assert_eq!(
        common_type(SqlType::Int, SqlType::Decimal { precision: 5, scale: 2 }),
        SqlType::Decimal { precision: 12, scale: 2 }
    );
    assert_eq!(common_type(varchar(3), SqlType::NChar(5)), SqlType::NVarChar(Len::N(5)));
    assert_eq!(common_type(SqlType::Char(3), SqlType::NChar(5)), SqlType::NChar(5));
    assert_eq!(common_type(varchar(3), SqlType::Char(5)), varchar(5));
    assert_eq!(common_type(SqlType::Int, varchar(5)), SqlType::Int);
    assert_eq!(
        common_type(SqlType::Decimal { precision: 38, scale: 10 }, SqlType::BigInt),
        SqlType::Decimal { precision: 38, scale: 10 }
    );
}

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

#[test]
fn numbers_convert_with_sql_server_rounding() {
    assert_eq!(convert(dec("2.7"), SqlType::Int, None).unwrap(), Value::Int(2));
    assert_eq!(convert(dec("-2.7"), SqlType::Int, None).unwrap(), Value::Int(-2));
    assert_eq!(convert(Value::Float(2.9), SqlType::Int, None).unwrap(), Value::Int(2));
    assert_eq!(convert(Value::Money(25_000), SqlType::Int, None).unwrap(), Value::Int(3));
    assert_eq!(convert(Value::Money(-25_000), SqlType::Int, None).unwrap(), Value::Int(-3));
    assert_eq!(
        convert(dec("2.5"), SqlType::Decimal { precision: 1, scale: 0 }, None).unwrap(),
        dec("3")
    );
    assert_eq!(
        convert(Value::Float(2.345), SqlType::Decimal { precision: 5, scale: 1 }, None).unwrap(),
        dec("2.3")
    );
    assert_eq!(convert(Value::Int(7), SqlType::Money, None).unwrap(), Value::Money(70_000));
    assert_eq!(convert(dec("1.23456"), SqlType::Money, None).unwrap(), Value::Money(12_346));
    assert_eq!(convert(Value::Int(3), SqlType::Float, None).unwrap(), Value::Float(3.0));
    assert_eq!(convert(Value::Float(0.5), SqlType::Real, None).unwrap(), Value::Real(0.5));
    assert_eq!(convert(Value::Int(5), SqlType::Bit, None).unwrap(), Value::Bit(true));
    assert_eq!(convert(dec("0.0"), SqlType::Bit, None).unwrap(), Value::Bit(false));
    assert_eq!(convert(Value::Int(-5), SqlType::BigInt, None).unwrap(), Value::BigInt(-5));
}

#[test]
fn numeric_overflow_errors() {
    let e = convert(Value::Int(300), SqlType::TinyInt, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (220, "Arithmetic overflow error for data type tinyint, value = 300.")
    );
    assert_eq!(number(convert(Value::BigInt(1 << 40), SqlType::Int, None)), 220);
    let e = convert(Value::Float(3e10), SqlType::Int, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting float to data type int.")
    );
    assert_eq!(number(convert(dec("2147483648"), SqlType::Int, None)), 8115);
    let e =
        convert(Value::Int(12345), SqlType::Decimal { precision: 3, scale: 0 }, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting int to data type numeric.")
    );
    assert_eq!(number(convert(Value::Float(1e300), SqlType::Real, None)), 8115);
    assert_eq!(number(convert(Value::BigInt(i64::MAX), SqlType::Money, None)), 8115);
}

#[test]
fn strings_convert_to_numbers_or_fail_like_sql_server() {
    assert_eq!(convert(s(" 12 "), SqlType::Int, None).unwrap(), Value::Int(12));
    assert_eq!(convert(s("-12"), SqlType::SmallInt, None).unwrap(), Value::SmallInt(-12));
    assert_eq!(convert(s(""), SqlType::Int, None).unwrap(), Value::Int(0));
    let e = convert(s("12a"), SqlType::Int, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (245, "Conversion failed when converting the varchar value '12a' to data type int.")
    );
    assert_eq!(number(convert(s("1.5"), SqlType::Int, None)), 245);
    assert_eq!(number(convert(ns("x"), SqlType::BigInt, None)), 245);
    assert_eq!(number(convert(s("3000000000"), SqlType::Int, None)), 248);
    assert_eq!(number(convert(s("300"), SqlType::TinyInt, None)), 244);
    assert_eq!(number(convert(s("99999999999999999999"), SqlType::BigInt, None)), 8114);
    assert_eq!(
        convert(s("1.5"), SqlType::Decimal { precision: 5, scale: 2 }, None).unwrap(),
        dec("1.50")
    );
    let e = convert(s("abc"), SqlType::DEFAULT_DECIMAL, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8114, "Error converting data type varchar to numeric.")
    );
    assert_eq!(
        number(convert(s("12345"), SqlType::Decimal { precision: 3, scale: 0 }, None)),
        8115
    );
    let e = convert(s("abc"), SqlType::Float, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8114, "Error converting data type varchar to float.")
    );
    assert_eq!(convert(s("1e3"), SqlType::Float, None).unwrap(), Value::Float(1000.0));
    assert_eq!(convert(s(" -.5 "), SqlType::Float, None).unwrap(), Value::Float(-0.5));
    assert_eq!(number(convert(s("inf"), SqlType::Float, None)), 8114);
    assert_eq!(convert(s("$1,234.56"), SqlType::Money, None).unwrap(), Value::Money(12_345_600));
    assert_eq!(convert(s("-$0.00005"), SqlType::Money, None).unwrap(), Value::Money(-1));
    assert_eq!(number(convert(s("1.2.3"), SqlType::Money, None)), 235);
    assert_eq!(convert(s("TRUE"), SqlType::Bit, None).unwrap(), Value::Bit(true));
    assert_eq!(convert(s(" false"), SqlType::Bit, None).unwrap(), Value::Bit(false));
    assert_eq!(convert(s("0"), SqlType::Bit, None).unwrap(), Value::Bit(false));
    assert_eq!(number(convert(s("yes"), SqlType::Bit, None)), 245);
}

#[test]
fn values_convert_to_strings() {
    assert_eq!(convert(Value::Int(12345), varchar(10), None).unwrap(), s("12345"));
    assert_eq!(convert(Value::Int(123456), varchar(3), None).unwrap(), s("*"));
    assert_eq!(convert(Value::Int(123456), SqlType::Char(3), None).unwrap(), s("*  "));
    assert_eq!(number(convert(Value::Int(123456), SqlType::NVarChar(Len::N(3)), None)), 8115);
    let e = convert(dec("123.45"), varchar(3), None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting numeric to data type varchar.")
    );
    assert_eq!(convert(s("abcdef"), varchar(3), None).unwrap(), s("abc"));
    assert_eq!(convert(s("ab"), SqlType::Char(5), None).unwrap(), s("ab   "));
    assert_eq!(convert(s("ab"), SqlType::NChar(3), None).unwrap(), ns("ab "));
    assert_eq!(convert(ns("😀x"), SqlType::NVarChar(Len::N(2)), None).unwrap(), ns("😀"));
    assert_eq!(convert(s("héllo"), varchar(2), None).unwrap(), s("h"));
    assert_eq!(convert(Value::Float(1234567.0), varchar(30), None).unwrap(), s("1.23457e+006"));
    assert_eq!(
        convert(Value::Float(1234567.0), varchar(30), Some(1)).unwrap(),
        s("1.2345670e+006")
    );
    assert_eq!(convert(Value::Float(0.1), varchar(30), Some(3)).unwrap(), s("0.10000000000000001"));
    assert_eq!(
        convert(Value::Money(12_345_678_910), varchar(30), Some(1)).unwrap(),
        s("1,234,567.89")
    );
    assert_eq!(convert(Value::Money(125_000), varchar(30), Some(2)).unwrap(), s("12.5000"));
    let g = Guid::parse("6f9619ff-8b86-d011-b42d-00c04fc964ff").unwrap();
    assert_eq!(
        convert(Value::Guid(g), SqlType::NVarChar(Len::N(36)), None).unwrap(),
        ns("6F9619FF-8B86-D011-B42D-00C04FC964FF")
    );
    assert_eq!(number(convert(Value::Guid(g), varchar(10), None)), 8170);
}

#[test]
fn strings_convert_to_dates_and_times() {
    let expected = Value::Date(Date::from_ymd(2024, 1, 31).unwrap());
    for form in [
        "2024-01-31",
        "20240131",
        "01/31/2024",
        "1/31/24",
        "Jan 31 2024",
        "31 January 2024",
        "January 31, 2024",
        "31-Jan-2024",
        " 2024-01-31 10:00 ",
    ] {
        assert_eq!(convert(s(form), SqlType::Date, None).unwrap(), expected, "{form}");
    }
    assert_eq!(convert(s("31/01/2024"), SqlType::Date, Some(103)).unwrap(), expected);
    assert_eq!(convert(s("31.01.2024"), SqlType::Date, Some(104)).unwrap(), expected);
    let dt2 = convert(s("2024-01-31T10:20:30.1234567"), SqlType::DateTime2(7), None).unwrap();
    assert_eq!(text(dt2), "2024-01-31 10:20:30.1234567");
    assert_eq!(
        convert(s("10:30PM"), SqlType::Time(0), None).unwrap(),
        Value::Time(Time::from_hms(22, 30, 0, 0).unwrap())
    );
    assert_eq!(
        convert(s("12:05 am"), SqlType::Time(0), None).unwrap(),
        Value::Time(Time::from_hms(0, 5, 0, 0).unwrap())
    );
    assert_eq!(text(datetime("2024-01-31 10:20:30:5")), "Jan 31 2024 10:20AM");
    assert_eq!(text(datetime("")), "Jan  1 1900 12:00AM");
    let e = convert(s("2024-02-30"), SqlType::Date, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (241, "Conversion failed when converting date and/or time from character string.")
    );
    assert_eq!(number(convert(s("not a date"), SqlType::DateTime2(7), None)), 241);
    assert_eq!(number(convert(s("2024-01-31 25:00"), SqlType::Time(7), None)), 241);
    let e = convert(s("1500-01-01"), SqlType::DateTime, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (242, "The conversion of a varchar data type to a datetime data type resulted in an out-of-range value.")
    );
    assert_eq!(number(convert(s("2024-01-01 10:00:00.1234"), SqlType::DateTime, None)), 241);
    // DATETIME rounds to 1/300 s: .999 is the next day.
    assert_eq!(text(datetime("2024-01-01 23:59:59.999")), "Jan  2 2024 12:00AM");
    assert_eq!(
        convert(s("2024-01-01 10:00:00.9999999"), SqlType::DateTime2(0), None).unwrap(),
        datetime2("2024-01-01 10:00:01")
    );
}

#[test]
fn date_and_time_show_only_their_part_in_date_and_time_styles() {
    let date = Value::Date(Date::from_ymd(2006, 1, 2).unwrap());
    let time = Value::Time(Time::from_hms(22, 4, 5, 0).unwrap());
    let style = |v: &Value, st: i32| convert(v.clone(), varchar(40), Some(st)).unwrap();
    assert_eq!(style(&date, 121), s("2006-01-02"));
    assert_eq!(style(&date, 120), s("2006-01-02"));
    assert_eq!(style(&date, 100), s("Jan  2 2006"));
    assert_eq!(style(&date, 113), s("02 Jan 2006"));
    assert_eq!(style(&date, 126), s("2006-01-02"));
    assert_eq!(style(&date, 101), s("01/02/2006"));
    assert_eq!(style(&time, 121), s("22:04:05.0000000"));
    assert_eq!(style(&time, 120), s("22:04:05"));
    assert_eq!(style(&time, 100), s("10:04PM"));
    assert_eq!(style(&time, 126), s("22:04:05"));
    assert_eq!(style(&time, 108), s("22:04:05"));
}

#[test]
fn dates_convert_to_strings_with_styles() {
    let v = datetime("2024-01-05 09:05:07.123");
    let style = |st: i32| convert(v.clone(), varchar(40), Some(st)).unwrap();
    assert_eq!(convert(v.clone(), varchar(30), None).unwrap(), s("Jan  5 2024  9:05AM"));
    assert_eq!(style(0), s("Jan  5 2024  9:05AM"));
    assert_eq!(style(100), s("Jan  5 2024  9:05AM"));
    assert_eq!(style(1), s("01/05/24"));
    assert_eq!(style(101), s("01/05/2024"));
    assert_eq!(style(103), s("05/01/2024"));
    assert_eq!(style(104), s("05.01.2024"));
    assert_eq!(style(106), s("05 Jan 2024"));
    assert_eq!(style(107), s("Jan 05, 2024"));
    assert_eq!(style(108), s("09:05:07"));
    assert_eq!(style(109), s("Jan  5 2024  9:05:07:123AM"));
    assert_eq!(style(112), s("20240105"));
    assert_eq!(style(113), s("05 Jan 2024 09:05:07:123"));
    assert_eq!(style(120), s("2024-01-05 09:05:07"));
    assert_eq!(style(121), s("2024-01-05 09:05:07.123"));
    assert_eq!(style(126), s("2024-01-05T09:05:07.123"));
    assert_eq!(style(23), s("2024-01-05"));
    assert_eq!(
        convert(datetime("2024-01-05 13:00"), varchar(30), Some(126)).unwrap(),
        s("2024-01-05T13:00:00")
    );
    assert_eq!(
        convert(datetime("2024-01-05 13:00"), varchar(30), None).unwrap(),
        s("Jan  5 2024  1:00PM")
    );
    assert_eq!(convert(v.clone(), varchar(11), None).unwrap(), s("Jan  5 2024"));
    let e = convert(v, varchar(30), Some(999)).unwrap_err();
    assert_eq!(e.number, 281);
    assert_eq!(
        convert(datetime2("2024-01-05 09:05"), varchar(30), None).unwrap(),
        s("2024-01-05 09:05:00.0000000")
    );
    assert_eq!(convert(date("2024-01-05"), varchar(30), None).unwrap(), s("2024-01-05"));
    assert_eq!(convert(date("2024-01-05"), varchar(30), Some(101)).unwrap(), s("01/05/2024"));
    assert_eq!(convert(time("09:05"), varchar(30), None).unwrap(), s("09:05:00.0000000"));
    // A TIME shows its time of day alone (the `CONVERT(varchar(15), t, 100)` idiom for AM/PM).
    assert_eq!(convert(time("13:05"), varchar(30), Some(100)).unwrap(), s("1:05PM"));
}

#[test]
fn dates_convert_among_themselves_and_with_numbers() {
    assert_eq!(
        convert(datetime("2024-01-05 10:00"), SqlType::Date, None).unwrap(),
        date("2024-01-05")
    );
    assert_eq!(
        convert(date("2024-01-05"), SqlType::DateTime, None).unwrap(),
        datetime("2024-01-05")
    );
    assert_eq!(
        convert(datetime("2024-01-05 10:00:00.007"), SqlType::DateTime2(7), None).unwrap(),
        datetime2("2024-01-05 10:00:00.0066667")
    );
    assert_eq!(
        convert(datetime2("2024-01-05 10:30"), SqlType::Time(0), None).unwrap(),
        time("10:30")
    );
    assert_eq!(
        convert(time("10:30"), SqlType::DateTime, None).unwrap(),
        datetime("1900-01-01 10:30")
    );
    assert_eq!(number(convert(date("1700-01-01"), SqlType::DateTime, None)), 242);
    assert_eq!(convert(Value::Int(1), SqlType::DateTime, None).unwrap(), datetime("1900-01-02"));
    assert_eq!(convert(dec("1.5"), SqlType::DateTime, None).unwrap(), datetime("1900-01-02 12:00"));
    assert_eq!(convert(Value::Int(-1), SqlType::DateTime, None).unwrap(), datetime("1899-12-31"));
    assert_eq!(convert(datetime("1900-01-03 12:00"), SqlType::Int, None).unwrap(), Value::Int(3));
    assert_eq!(convert(datetime("1900-01-03 11:59"), SqlType::Int, None).unwrap(), Value::Int(2));
    assert_eq!(
        convert(datetime("1900-01-02 06:00"), SqlType::Float, None).unwrap(),
        Value::Float(1.25)
    );
    let e = convert(Value::Int(1), SqlType::Date, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (529, "Explicit conversion from data type int to date is not allowed.")
    );
    assert_eq!(number(convert(date("2024-01-01"), SqlType::Time(7), None)), 529);
    assert_eq!(number(convert(Value::Int(1), SqlType::UniqueIdentifier, None)), 529);
    assert_eq!(number(convert(datetime2("2024-01-01"), SqlType::Int, None)), 529);
}

#[test]
fn binary_and_guid_conversions() {
    assert_eq!(
        convert(Value::Int(258), SqlType::Binary(2), None).unwrap(),
        Value::Binary(vec![1, 2])
    );
    assert_eq!(
        convert(Value::Int(1), SqlType::Binary(6), None).unwrap(),
        Value::Binary(vec![0, 0, 0, 0, 0, 1])
    );
    assert_eq!(
        convert(Value::Int(-1), SqlType::VarBinary(Len::Max), None).unwrap(),
        Value::Binary(vec![0xFF; 4])
    );
    assert_eq!(convert(Value::Binary(vec![1, 2]), SqlType::Int, None).unwrap(), Value::Int(258));
    assert_eq!(
        convert(Value::Binary(vec![9, 0xFF, 0xFF]), SqlType::SmallInt, None).unwrap(),
        Value::SmallInt(-1)
    );
    assert_eq!(
        convert(s("AB"), SqlType::VarBinary(Len::N(10)), None).unwrap(),
        Value::Binary(vec![0x41, 0x42])
    );
    assert_eq!(
        convert(s("AB"), SqlType::Binary(3), None).unwrap(),
        Value::Binary(vec![0x41, 0x42, 0])
    );
    assert_eq!(
        convert(ns("A"), SqlType::VarBinary(Len::Max), None).unwrap(),
        Value::Binary(vec![0x41, 0])
    );
    assert_eq!(
        convert(Value::Binary(vec![0x41, 0x42]), varchar(10), Some(1)).unwrap(),
        s("0x4142")
    );
    assert_eq!(convert(Value::Binary(vec![0x41, 0x42]), varchar(10), Some(2)).unwrap(), s("4142"));
    assert_eq!(
        convert(Value::Binary(vec![0x41, 0x42, 0x43]), varchar(10), None).unwrap(),
        s("ABC")
    );
    assert_eq!(
        convert(Value::Binary(vec![0x41, 0]), SqlType::NVarChar(Len::N(5)), None).unwrap(),
        ns("A")
    );
    assert_eq!(
        convert(s("0x4142"), SqlType::VarBinary(Len::Max), Some(1)).unwrap(),
        Value::Binary(vec![0x41, 0x42])
    );
    assert_eq!(number(convert(s("0xZZ"), SqlType::VarBinary(Len::Max), Some(1))), 8114);
    let text_form = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
    let g = convert(s(text_form), SqlType::UniqueIdentifier, None).unwrap();
    let bytes = convert(g.clone(), SqlType::VarBinary(Len::Max), None).unwrap();
    assert_eq!(convert(bytes, SqlType::UniqueIdentifier, None).unwrap(), g);
    assert_eq!(text(g), text_form);
    let e = convert(s("nope"), SqlType::UniqueIdentifier, None).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8169, "Conversion failed when converting from a character string to uniqueidentifier.")
    );
}

#[test]
fn try_convert_gives_null_for_values_but_not_for_impossible_conversions() {
    assert_eq!(try_convert(s("12a"), SqlType::Int, None).unwrap(), Value::Null);
    assert_eq!(try_convert(s("12"), SqlType::Int, None).unwrap(), Value::Int(12));
    assert_eq!(try_convert(s("2024-02-30"), SqlType::Date, None).unwrap(), Value::Null);
    assert_eq!(try_convert(Value::Int(300), SqlType::TinyInt, None).unwrap(), Value::Null);
    assert_eq!(number(try_convert(Value::Int(1), SqlType::Date, None)), 529);
    assert_eq!(number(try_convert(datetime("2024-01-01"), varchar(30), Some(999))), 281);
    assert_eq!(try_convert(Value::Null, SqlType::Date, None).unwrap(), Value::Null);
}

#[test]
fn implicit_conversion_into_columns_and_variables() {
    let e = coerce(s("abcdef"), varchar(3), false).unwrap_err();
    assert_eq!((e.number, e.message.as_str()), (8152, "String or binary data would be truncated."));
    assert_eq!(coerce(s("abcdef"), varchar(3), true).unwrap(), s("abc"));
    assert_eq!(coerce(s("abc   "), varchar(3), false).unwrap(), s("abc"));
    assert_eq!(coerce(s("ab"), SqlType::Char(4), false).unwrap(), s("ab  "));
    assert_eq!(number(coerce(ns("ééé"), SqlType::NVarChar(Len::N(2)), false)), 8152);
    assert_eq!(coerce(ns("éé"), SqlType::NVarChar(Len::N(2)), false).unwrap(), ns("éé"));
    assert_eq!(
        number(coerce(Value::Binary(vec![1, 2, 3]), SqlType::VarBinary(Len::N(2)), false)),
        8152
    );
    let e = coerce(Value::Int(1), SqlType::UniqueIdentifier, false).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (206, "Operand type clash: int is incompatible with uniqueidentifier")
    );
    assert_eq!(number(coerce(date("2024-01-01"), SqlType::Int, true)), 206);
    let e = coerce(datetime("2024-01-01"), SqlType::Int, true).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (257, "Implicit conversion from data type datetime to int is not allowed. Use the CONVERT function to run this query.")
    );
    assert_eq!(number(coerce(s("ab"), SqlType::VarBinary(Len::Max), true)), 257);
    assert_eq!(
        coerce(dec("1.555"), SqlType::Decimal { precision: 5, scale: 2 }, false).unwrap(),
        dec("1.56")
    );
    assert_eq!(
        number(coerce(dec("123456.7"), SqlType::Decimal { precision: 5, scale: 1 }, false)),
        8115
    );
    assert_eq!(coerce(Value::Int(5), varchar(10), false).unwrap(), s("5"));
    assert_eq!(coerce(s("42"), SqlType::Int, false).unwrap(), Value::Int(42));
    assert_eq!(coerce(s("2024-01-31"), SqlType::Date, false).unwrap(), date("2024-01-31"));
    assert_eq!(coerce(Value::Int(1), SqlType::DateTime, false).unwrap(), datetime("1900-01-02"));
    assert_eq!(coerce(Value::Null, SqlType::Int, false).unwrap(), Value::Null);
}

// ---------------------------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------------------------

#[test]
fn unary_operators() {
    assert_eq!(unary(UnaryOp::Minus, Value::Int(5)).unwrap(), Value::Int(-5));
    let e = unary(UnaryOp::Minus, Value::Int(i32::MIN)).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting expression to data type int.")
    );
    assert_eq!(unary(UnaryOp::Minus, Value::TinyInt(5)).unwrap(), Value::SmallInt(-5));
    assert_eq!(unary(UnaryOp::Minus, dec("1.50")).unwrap(), dec("-1.50"));
    assert_eq!(unary(UnaryOp::Minus, Value::Money(1)).unwrap(), Value::Money(-1));
    assert_eq!(unary(UnaryOp::Plus, s("a")).unwrap(), s("a"));
    assert_eq!(unary(UnaryOp::BitNot, Value::Int(0)).unwrap(), Value::Int(-1));
    assert_eq!(unary(UnaryOp::BitNot, Value::TinyInt(1)).unwrap(), Value::TinyInt(254));
    assert_eq!(unary(UnaryOp::BitNot, Value::Bit(true)).unwrap(), Value::Bit(false));
    assert_eq!(unary(UnaryOp::Minus, Value::Null).unwrap(), Value::Null);
    let e = unary(UnaryOp::Minus, s("1")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8117, "Operand data type varchar is invalid for minus operator.")
    );
    assert_eq!(number(unary(UnaryOp::BitNot, dec("1.5"))), 8117);
    assert!(unary(UnaryOp::Not, Value::Int(1)).is_err());
}

#[test]
fn precedence_decides_the_operation() {
    assert_eq!(add(Value::Int(1), s("1")).unwrap(), Value::Int(2));
    assert_eq!(add(s("1"), Value::Int(1)).unwrap(), Value::Int(2));
    assert_eq!(add(s("1"), s("1")).unwrap(), s("11"));
    assert_eq!(add(ns("a"), s("b")).unwrap(), ns("ab"));
    assert_eq!(add(s("a"), Value::Binary(b"b".to_vec())).unwrap(), s("ab"));
    assert_eq!(
        add(Value::Binary(vec![1]), Value::Binary(vec![2])).unwrap(),
        Value::Binary(vec![1, 2])
    );
    let e = add(Value::Int(1), s("a")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (245, "Conversion failed when converting the varchar value 'a' to data type int.")
    );
    assert_eq!(add(Value::Int(1), Value::BigInt(2)).unwrap(), Value::BigInt(3));
    assert_eq!(add(Value::SmallInt(1), Value::TinyInt(2)).unwrap(), Value::SmallInt(3));
    assert_eq!(add(Value::Int(1), dec("1.5")).unwrap(), dec("2.5"));
    assert_eq!(add(Value::Int(1), Value::Float(0.5)).unwrap(), Value::Float(1.5));
    assert_eq!(add(Value::Real(0.5), Value::Int(1)).unwrap(), Value::Real(1.5));
    assert_eq!(add(Value::Float(0.5), s("1.5")).unwrap(), Value::Float(2.0));
    assert_eq!(add(dec("1.5"), s("2.25")).unwrap(), dec("3.75"));
    assert_eq!(add(Value::Money(10_000), Value::Int(1)).unwrap(), Value::Money(20_000));
    assert_eq!(add(Value::Bit(true), Value::Int(1)).unwrap(), Value::Int(2));
    let e = add(Value::Bit(true), Value::Bit(true)).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8117, "Operand data type bit is invalid for add operator.")
    );
    let e = binary(BinaryOp::Subtract, s("a"), s("b")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8117, "Operand data type varchar is invalid for subtract operator.")
    );
    assert_eq!(add(Value::Null, Value::Int(1)).unwrap(), Value::Null);
    assert_eq!(add(s("a"), Value::Null).unwrap(), Value::Null);
    assert!(binary(BinaryOp::Eq, Value::Int(1), Value::Int(1)).is_err());
    assert!(binary(BinaryOp::And, s("a"), s("b")).is_err());
}

#[test]
fn integer_arithmetic() {
    let op = |o: BinaryOp, a: i32, b: i32| binary(o, Value::Int(a), Value::Int(b));
    assert_eq!(op(BinaryOp::Divide, 7, 2).unwrap(), Value::Int(3));
    assert_eq!(op(BinaryOp::Divide, -7, 2).unwrap(), Value::Int(-3));
    assert_eq!(op(BinaryOp::Modulo, -7, 2).unwrap(), Value::Int(-1));
    assert_eq!(op(BinaryOp::Modulo, i32::MIN, -1).unwrap(), Value::Int(0));
    assert_eq!(op(BinaryOp::Multiply, 6, 7).unwrap(), Value::Int(42));
    let e = op(BinaryOp::Divide, 1, 0).unwrap_err();
    assert_eq!((e.number, e.message.as_str()), (8134, "Divide by zero error encountered."));
    assert_eq!(number(op(BinaryOp::Modulo, 1, 0)), 8134);
    let e = op(BinaryOp::Add, i32::MAX, 1).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting expression to data type int.")
    );
    assert_eq!(number(op(BinaryOp::Divide, i32::MIN, -1)), 8115);
    let e = binary(BinaryOp::Multiply, Value::BigInt(i64::MAX), Value::BigInt(2)).unwrap_err();
    assert_eq!(e.message, "Arithmetic overflow error converting expression to data type bigint.");
    let e = add(Value::TinyInt(200), Value::TinyInt(100)).unwrap_err();
    assert_eq!(e.message, "Arithmetic overflow error converting expression to data type tinyint.");
    assert_eq!(op(BinaryOp::BitAnd, 5, 3).unwrap(), Value::Int(1));
    assert_eq!(op(BinaryOp::BitOr, 5, 3).unwrap(), Value::Int(7));
    assert_eq!(op(BinaryOp::BitXor, 5, 3).unwrap(), Value::Int(6));
    assert_eq!(
        binary(BinaryOp::BitAnd, Value::Bit(true), Value::Bit(false)).unwrap(),
        Value::Bit(false)
    );
    assert_eq!(
        binary(BinaryOp::BitOr, Value::TinyInt(1), Value::BigInt(2)).unwrap(),
        Value::BigInt(3)
    );
    assert_eq!(binary(BinaryOp::BitOr, Value::Null, Value::Int(2)).unwrap(), Value::Null);
    assert_eq!(number(binary(BinaryOp::BitAnd, dec("1.5"), Value::Int(1))), 402);
    // One binary operand is read as the other operand's integer type.
    assert_eq!(
        binary(BinaryOp::BitAnd, Value::SmallInt(0x24), Value::Binary(vec![0x0f])).unwrap(),
        Value::SmallInt(4)
    );
    assert_eq!(
        binary(BinaryOp::BitOr, Value::Binary(vec![1, 0, 0, 0, 2]), Value::Int(1)).unwrap(),
        Value::Int(3)
    );
    assert_eq!(
        binary(BinaryOp::BitXor, Value::TinyInt(1), Value::Binary(vec![0xff, 0x03])).unwrap(),
        Value::TinyInt(2)
    );
    let e = binary(BinaryOp::BitAnd, Value::Binary(vec![1]), Value::Binary(vec![1])).unwrap_err();
    assert_eq!(
        e.message,
        "The data types varbinary and varbinary are incompatible in the '&' operator."
    );
}

#[test]
fn decimal_arithmetic_follows_sql_server_scales() {
    let op = |o: BinaryOp, a: Value, b: Value| text(binary(o, a, b).unwrap());
    assert_eq!(op(BinaryOp::Multiply, dec("1.50"), Value::Int(2)), "3.00");
    assert_eq!(op(BinaryOp::Multiply, dec("1.5"), dec("1.25")), "1.875");
    assert_eq!(op(BinaryOp::Divide, dec("1.0"), Value::Int(3)), "0.333333");
    assert_eq!(op(BinaryOp::Divide, dec("2.0"), Value::Int(3)), "0.666666");
    assert_eq!(op(BinaryOp::Divide, Value::Int(15), dec("10.0")), "1.500000");
    assert_eq!(op(BinaryOp::Divide, dec("-7.5"), dec("2.5")), "-3.000000");
    assert_eq!(op(BinaryOp::Add, dec("1.5"), dec("2.25")), "3.75");
    assert_eq!(op(BinaryOp::Subtract, dec("1.5"), Value::Int(2)), "-0.5");
    assert_eq!(op(BinaryOp::Modulo, dec("10.5"), Value::Int(3)), "1.5");
    assert_eq!(op(BinaryOp::Modulo, dec("-10.5"), Value::Int(3)), "-1.5");
    assert_eq!(op(BinaryOp::Add, dec("0.1"), Value::Money(10_000)), "1.1000");
    // numeric(28,28) squared is numeric(57,56): one integral digit, so the scale is cut to 37
    // and the exact product rounded there.
    let x = dec("0.1234567890123456789012345678");
    assert_eq!(op(BinaryOp::Multiply, x.clone(), x), "0.0152415787532388367504953515403139768");
    assert_eq!(number(binary(BinaryOp::Divide, dec("1.5"), dec("0.0"))), 8134);
    let big = dec(&format!("99{}", "0".repeat(36)));
    let e = binary(BinaryOp::Multiply, big.clone(), Value::Int(100)).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting expression to data type numeric.")
    );
    assert_eq!(number(binary(BinaryOp::Add, big.clone(), big)), 8115);
}

#[test]
fn float_money_and_datetime_arithmetic() {
    assert_eq!(
        binary(BinaryOp::Divide, Value::Float(1.0), Value::Int(4)).unwrap(),
        Value::Float(0.25)
    );
    assert_eq!(number(binary(BinaryOp::Divide, Value::Float(1.0), Value::Float(0.0))), 8134);
    assert_eq!(number(binary(BinaryOp::Modulo, Value::Float(1.0), Value::Int(2))), 402);
    assert_eq!(number(binary(BinaryOp::Multiply, Value::Float(1e308), Value::Int(10))), 8115);
    assert_eq!(
        binary(BinaryOp::Multiply, Value::Money(25_000), Value::Int(2)).unwrap(),
        Value::Money(50_000)
    );
    assert_eq!(
        binary(BinaryOp::Divide, Value::Money(10_000), Value::Int(3)).unwrap(),
        Value::Money(3_333)
    );
    assert_eq!(
        add(datetime("2024-01-31 10:00"), Value::Int(1)).unwrap(),
        datetime("2024-02-01 10:00")
    );
    assert_eq!(add(datetime("2024-01-31"), dec("0.5")).unwrap(), datetime("2024-01-31 12:00"));
    assert_eq!(
        binary(BinaryOp::Subtract, datetime("2024-01-02 06:00"), datetime("2024-01-01")).unwrap(),
        datetime("1900-01-02 06:00")
    );
    assert_eq!(add(datetime("2024-01-01"), s("1900-01-03")).unwrap(), datetime("2024-01-03"));
    assert_eq!(number(binary(BinaryOp::Multiply, datetime("2024-01-01"), Value::Int(2))), 8117);
    let e = add(date("2024-01-01"), Value::Int(1)).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (206, "Operand type clash: date is incompatible with int")
    );
    assert_eq!(number(add(datetime2("2024-01-01"), Value::Int(1))), 206);
    assert_eq!(number(add(Value::Guid(Guid([0; 16])), s("x"))), 8117);
}

#[test]
fn the_int_fast_path_runs_a_million_times() {
    let mut i = Value::Int(0);
    for _ in 0..1_000_000 {
        i = binary(BinaryOp::Add, i, Value::Int(1)).unwrap();
    }
    assert_eq!(i, Value::Int(1_000_000));
}

// ---------------------------------------------------------------------------------------------
// Comparison and LIKE
// ---------------------------------------------------------------------------------------------

#[test]
fn comparison_converts_by_precedence() {
    assert_eq!(compare(&Value::Int(1), &s("12")).unwrap(), Some(Ordering::Less));
    assert_eq!(compare(&s("12"), &Value::Int(1)).unwrap(), Some(Ordering::Greater));
    assert_eq!(compare(&s("9"), &s("12")).unwrap(), Some(Ordering::Greater));
    assert_eq!(number(compare(&Value::Int(1), &s("a")).map(|_| Value::Null)), 245);
    assert_eq!(compare(&s("abc"), &s("ABC  ")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&s("abc"), &ns("abd")).unwrap(), Some(Ordering::Less));
    assert_eq!(compare(&date("2024-01-01"), &s("2024-01-01")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&s("01/02/2024"), &date("2024-01-01")).unwrap(), Some(Ordering::Greater));
    assert_eq!(
        compare(&datetime("2024-01-01 10:00"), &date("2024-01-01")).unwrap(),
        Some(Ordering::Greater)
    );
    assert_eq!(
        compare(&datetime2("1900-01-01 10:00"), &time("10:00")).unwrap(),
        Some(Ordering::Equal)
    );
    assert_eq!(compare(&dec("1.5"), &s("1.50")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Int(2), &dec("1.99")).unwrap(), Some(Ordering::Greater));
    assert_eq!(compare(&Value::Float(0.5), &s("0.5")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Bit(true), &s("true")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Money(15_000), &dec("1.5")).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::BigInt(5), &Value::BigInt(5)).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Binary(b"abc".to_vec()), &s("ABC")).unwrap(), Some(Ordering::Equal));
    let g = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
    let guid = convert(s(g), SqlType::UniqueIdentifier, None).unwrap();
    assert_eq!(compare(&s(&g.to_lowercase()), &guid).unwrap(), Some(Ordering::Equal));
    assert_eq!(compare(&Value::Null, &Value::Int(1)).unwrap(), None);
    assert_eq!(compare(&s("a"), &Value::Null).unwrap(), None);
    let e = compare(&Value::Int(1), &date("2024-01-01")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (206, "Operand type clash: int is incompatible with date")
    );
    assert_eq!(compare(&time("10:00"), &date("2024-01-01")).unwrap_err().number, 206);
    assert_eq!(compare(&Value::Int(1), &Value::Guid(Guid([0; 16]))).unwrap_err().number, 206);
}

#[test]
fn like_patterns() {
    let like2 = |v: &str, p: &str| like(&s(v), &s(p), None).unwrap().unwrap();
    assert!(like2("abc", "a%"));
    assert!(like2("abc", "A_C"));
    assert!(like2("abc", "%"));
    assert!(like2("", "%"));
    assert!(!like2("", "_"));
    assert!(like2("abc", "[a-c]bc"));
    assert!(like2("Bbc", "[a-c]bc"));
    assert!(!like2("xbc", "[^x]bc"));
    assert!(like2("ybc", "[^x]bc"));
    assert!(like2("cbc", "[abc]bc"));
    assert!(like2("a_c", "a[_]c"));
    assert!(!like2("abc", "a[_]c"));
    assert!(like2("a[b", "a[b"));
    assert!(like2("aaa", "%a%a%a%"));
    assert!(!like2("ab", "%a%a%"));
    assert!(like2("mississippi", "%iss%ppi"));
    assert!(!like2("abc", "ab"));
    assert!(like2("abc  ", "abc"));
    assert!(like2("abc ", "abc "));
    assert!(!like2("abc", "abc "));
    assert!(like2("ÉCOLE", "éc%"));
    let esc = |v: &str, p: &str, e: &str| like(&s(v), &s(p), Some(&s(e))).unwrap().unwrap();
    assert!(esc("10%", "10!%", "!"));
    assert!(!esc("100", "10!%", "!"));
    assert!(esc("a!b", "a!!b", "!"));
    assert_eq!(like(&Value::Int(123), &s("1%"), None).unwrap(), Some(true));
    assert_eq!(like(&Value::Null, &s("%"), None).unwrap(), None);
    assert_eq!(like(&s("a"), &Value::Null, None).unwrap(), None);
    assert_eq!(like(&s("a"), &s("a"), Some(&s("ab"))).unwrap_err().number, 506);
}

/// Patterns of literal text and `%` only, over ASCII, take a matcher of their own
/// (`like_ascii_percents`): it must agree with the general one on every shape.
#[test]
fn like_patterns_of_percents() {
    let like2 = |v: &str, p: &str| like(&s(v), &s(p), None).unwrap().unwrap();
    let q13 = "%special%requests%";
    assert!(like2("ironic special deposits. requests", q13));
    assert!(like2("SPECIAL REQUESTS", q13));
    assert!(like2("specialrequests", q13));
    assert!(!like2("requests special", q13));
    assert!(!like2("special request", q13));
    assert!(!like2("", q13));
    assert!(like2("special%requests", q13));
    // Prefix and suffix segments may not overlap.
    assert!(!like2("a", "a%a"));
    assert!(like2("aa", "a%a"));
    assert!(like2("abXcd", "ab%cd"));
    assert!(!like2("abcd", "abc%bcd"));
    assert!(like2("abcbcd", "abc%bcd"));
    // Leftmost placement of a middle segment leaves room for the next.
    assert!(like2("xaxbxa", "%a%b%a"));
    assert!(!like2("xbxa", "%a%b%a"));
    assert!(like2("ab", "%%a%%b%%"));
    // Trailing spaces of the value, not of the pattern, are forgiven.
    assert!(like2("x special requests  ", "%requests"));
    assert!(!like2("requests", "%requests "));
    assert!(like2("  ", ""));
    assert!(!like2("a", ""));
    // Not ASCII, `_`, `[]` and ESCAPE go to the general matcher, mixed with `%`.
    assert!(like2("ÉCOLE spéciale", "%éc%SPÉC%"));
    assert!(like2("special requests", "%spec_al%[r]equests%"));
    assert!(!like2("special requests", "%spec_al%[^r]equests%"));
    let esc = |v: &str, p: &str, e: &str| like(&s(v), &s(p), Some(&s(e))).unwrap().unwrap();
    assert!(esc("50% special", "%!%%special", "!"));
    assert!(!esc("50 special", "%!%%special", "!"));
    assert_eq!(like(&Value::NStr("Special Requests".into()), &s(q13), None).unwrap(), Some(true));
}

// ---------------------------------------------------------------------------------------------
// Text forms
// ---------------------------------------------------------------------------------------------

#[test]
fn default_text_of_each_type() {
    assert_eq!(text(Value::Int(-42)), "-42");
    assert_eq!(text(Value::TinyInt(255)), "255");
    assert_eq!(text(Value::SmallInt(-3)), "-3");
    assert_eq!(text(Value::BigInt(1 << 40)), "1099511627776");
    assert_eq!(text(Value::Bit(true)), "1");
    assert_eq!(text(dec("1.50")), "1.50");
    assert_eq!(text(dec("-0.05")), "-0.05");
    assert_eq!(text(Value::Float(1234567.0)), "1.23457e+006");
    assert_eq!(text(Value::Float(123456.0)), "123456");
    assert_eq!(text(Value::Float(0.1)), "0.1");
    assert_eq!(text(Value::Float(0.0001)), "0.0001");
    assert_eq!(text(Value::Float(0.00001)), "1e-005");
    assert_eq!(text(Value::Float(-2.5)), "-2.5");
    assert_eq!(text(Value::Float(0.0)), "0");
    assert_eq!(text(Value::Float(999999.5)), "1e+006");
    assert_eq!(text(Value::Real(0.1)), "0.1");
    assert_eq!(text(Value::Money(125_000)), "12.50");
    assert_eq!(text(Value::Money(-125_050)), "-12.51");
    assert_eq!(text(s("x")), "x");
    assert_eq!(text(ns("é")), "é");
    assert_eq!(text(Value::Binary(b"AB".to_vec())), "AB");
    assert_eq!(text(date("2024-01-05")), "2024-01-05");
    assert_eq!(text(time("10:00:01.5")), "10:00:01.5000000");
    assert_eq!(text(datetime("2024-01-01 10:00")), "Jan  1 2024 10:00AM");
    assert_eq!(text(datetime("2024-12-25 00:30")), "Dec 25 2024 12:30AM");
    assert_eq!(text(datetime2("2024-01-01 10:00")), "2024-01-01 10:00:00.0000000");
    assert_eq!(
        text(Value::Guid(Guid::parse("6f9619ff-8b86-d011-b42d-00c04fc964ff").unwrap())),
        "6F9619FF-8B86-D011-B42D-00C04FC964FF"
    );
    assert_eq!(text(Value::Null), "");
}

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

#[test]
fn dispatch_and_argument_counts() {
    assert!(call("NO_SUCH_FUNCTION", vec![]).is_none());
    assert!(call("STRING_AGG", vec![]).is_none());
    assert_eq!(f("len", vec![s("ab")]).unwrap(), Value::Int(2));
    let e = f("DATEADD", vec![s("day")]).unwrap_err();
    assert_eq!(
        (e.number, e.severity, e.message.as_str()),
        (174, 15, "The dateadd function requires 3 argument(s).")
    );
    let e = f("CONCAT", vec![s("a")]).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (189, "The concat function requires 2 to 254 arguments.")
    );
    assert_eq!(f("CHARINDEX", vec![s("a")]).unwrap_err().number, 189);
}

#[test]
fn string_functions() {
    assert_eq!(f("LEN", vec![s("abc  ")]).unwrap(), Value::Int(3));
    assert_eq!(f("LEN", vec![s("  abc")]).unwrap(), Value::Int(5));
    assert_eq!(f("LEN", vec![Value::Null]).unwrap(), Value::Null);
    assert_eq!(f("LEN", vec![Value::Int(-123)]).unwrap(), Value::Int(4));
    assert_eq!(f("DATALENGTH", vec![s("abc  ")]).unwrap(), Value::Int(5));
    assert_eq!(f("DATALENGTH", vec![ns("ab")]).unwrap(), Value::Int(4));
    assert_eq!(f("DATALENGTH", vec![Value::Int(1)]).unwrap(), Value::Int(4));
    assert_eq!(f("DATALENGTH", vec![Value::Null]).unwrap(), Value::Null);
    assert_eq!(f("LEFT", vec![s("abc"), Value::Int(2)]).unwrap(), s("ab"));
    assert_eq!(f("LEFT", vec![ns("abc"), Value::Int(10)]).unwrap(), ns("abc"));
    assert_eq!(f("RIGHT", vec![s("abc"), Value::Int(2)]).unwrap(), s("bc"));
    let e = f("LEFT", vec![s("abc"), Value::Int(-1)]).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (536, "Invalid length parameter passed to the left function.")
    );
    assert_eq!(f("RIGHT", vec![s("abc"), Value::Int(-1)]).unwrap_err().number, 536);
    assert_eq!(f("LEFT", vec![Value::Null, Value::Int(1)]).unwrap(), Value::Null);
    let sub = |x: &str, start: i32, len: i32| {
        f("SUBSTRING", vec![s(x), Value::Int(start), Value::Int(len)])
    };
    assert_eq!(sub("abc", 1, 2).unwrap(), s("ab"));
    assert_eq!(sub("abc", 0, 2).unwrap(), s("a"));
    assert_eq!(sub("abc", -1, 3).unwrap(), s("a"));
    assert_eq!(sub("abc", -5, 3).unwrap(), s(""));
    assert_eq!(sub("abc", 2, 10).unwrap(), s("bc"));
    assert_eq!(sub("abc", 5, 1).unwrap(), s(""));
    let e = sub("abc", 1, -1).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (537, "Invalid length parameter passed to the substring function.")
    );
    assert_eq!(
        f("SUBSTRING", vec![Value::Binary(vec![1, 2, 3]), Value::Int(2), Value::Int(1)]).unwrap(),
        Value::Binary(vec![2])
    );
    assert_eq!(f("LTRIM", vec![s("  a  ")]).unwrap(), s("a  "));
    assert_eq!(f("RTRIM", vec![s("  a  ")]).unwrap(), s("  a"));
    assert_eq!(f("TRIM", vec![ns("  a  ")]).unwrap(), ns("a"));
    assert_eq!(f("LTRIM", vec![s("xxa"), s("x")]).unwrap(), s("a"));
    assert_eq!(f("UPPER", vec![s("abé")]).unwrap(), s("ABÉ"));
    assert_eq!(f("LOWER", vec![ns("ABC")]).unwrap(), ns("abc"));
    assert_eq!(f("REVERSE", vec![s("abc")]).unwrap(), s("cba"));
    let replace = |a: &str, b: &str, c: &str| f("REPLACE", vec![s(a), s(b), s(c)]).unwrap();
    assert_eq!(replace("Hello hello HELLO", "hello", "bye"), s("bye bye bye"));
    assert_eq!(replace("aaa", "aa", "b"), s("ba"));
    assert_eq!(replace("abc", "", "x"), s("abc"));
    assert_eq!(replace("ÉTÉ", "é", "e"), s("eTe"));
    assert_eq!(f("REPLACE", vec![s("a"), Value::Null, s("b")]).unwrap(), Value::Null);
    assert_eq!(f("REPLACE", vec![s("a"), s("a"), ns("b")]).unwrap(), ns("b"));
    assert_eq!(f("CHARINDEX", vec![s("B"), s("abcb")]).unwrap(), Value::Int(2));
    assert_eq!(f("CHARINDEX", vec![s("b"), s("abcb"), Value::Int(3)]).unwrap(), Value::Int(4));
    assert_eq!(f("CHARINDEX", vec![s("z"), s("abc")]).unwrap(), Value::Int(0));
    assert_eq!(f("CHARINDEX", vec![s("c"), s("éc")]).unwrap(), Value::Int(2));
    assert_eq!(f("CHARINDEX", vec![Value::Null, s("abc")]).unwrap(), Value::Null);
    assert_eq!(f("CONCAT", vec![s("a"), Value::Null, Value::Int(1)]).unwrap(), s("a1"));
    assert_eq!(f("CONCAT", vec![Value::Null, Value::Null]).unwrap(), s(""));
    assert_eq!(f("CONCAT", vec![ns("a"), dec("1.50")]).unwrap(), ns("a1.50"));
    assert_eq!(f("CONCAT_WS", vec![s(","), s("a"), Value::Null, s("b")]).unwrap(), s("a,b"));
    assert_eq!(f("REPLICATE", vec![s("ab"), Value::Int(3)]).unwrap(), s("ababab"));
    assert_eq!(f("REPLICATE", vec![s("ab"), Value::Int(-1)]).unwrap(), Value::Null);
    assert_eq!(f("SPACE", vec![Value::Int(3)]).unwrap(), s("   "));
    assert_eq!(f("SPACE", vec![Value::Int(-3)]).unwrap(), Value::Null);
    assert_eq!(
        f("STR", vec![Value::Float(123.45), Value::Int(6), Value::Int(1)]).unwrap(),
        s(" 123.5")
    );
    assert_eq!(f("STR", vec![dec("123.45"), Value::Int(5), Value::Int(2)]).unwrap(), s("123.5"));
    assert_eq!(f("STR", vec![Value::Float(1.5)]).unwrap(), s("         2"));
    assert_eq!(f("STR", vec![Value::BigInt(12_345_678_901)]).unwrap(), s("**********"));
    assert_eq!(
        f("STUFF", vec![s("abcdef"), Value::Int(2), Value::Int(3), s("XY")]).unwrap(),
        s("aXYef")
    );
    assert_eq!(
        f("STUFF", vec![s("abc"), Value::Int(5), Value::Int(1), s("x")]).unwrap(),
        Value::Null
    );
    assert_eq!(f("ASCII", vec![s("A")]).unwrap(), Value::Int(65));
    assert_eq!(f("UNICODE", vec![ns("é")]).unwrap(), Value::Int(233));
    assert_eq!(f("CHAR", vec![Value::Int(65)]).unwrap(), s("A"));
    assert_eq!(f("CHAR", vec![Value::Int(300)]).unwrap(), Value::Null);
    assert_eq!(f("NCHAR", vec![Value::Int(233)]).unwrap(), ns("é"));
    assert_eq!(f("QUOTENAME", vec![s("a]b")]).unwrap(), ns("[a]]b]"));
    assert_eq!(f("QUOTENAME", vec![s("a'b"), s("'")]).unwrap(), ns("'a''b'"));
    let parse = |name: &str, piece: i32| f("PARSENAME", vec![s(name), Value::Int(piece)]).unwrap();
    assert_eq!(parse("srv.db.dbo.t", 1), ns("t"));
    assert_eq!(parse("srv.db.dbo.t", 4), ns("srv"));
    assert_eq!(parse("dbo.t", 3), Value::Null);
    assert_eq!(parse("16.0.1000.6", 4), ns("16"));
    assert_eq!(parse("[my db].[a]]b].\"c\"\"d\"", 2), ns("a]b"));
    assert_eq!(parse("[my db].[a]]b].\"c\"\"d\"", 1), ns("c\"d"));
    assert_eq!(parse("[my db].x", 2), ns("my db"));
    assert_eq!(parse("a..t", 2), Value::Null);
    assert_eq!(parse("a..t", 3), ns("a"));
    assert_eq!(parse("a.b.c.d.e", 1), Value::Null);
    assert_eq!(parse("[a", 1), Value::Null);
    assert_eq!(parse("[a]x", 1), Value::Null);
    assert_eq!(parse("a.b", 0), Value::Null);
    assert_eq!(parse("a.b", 5), Value::Null);
}

#[test]
fn math_functions() {
    assert_eq!(f("ABS", vec![Value::Int(-5)]).unwrap(), Value::Int(5));
    assert_eq!(f("ABS", vec![dec("-1.50")]).unwrap(), dec("1.50"));
    assert_eq!(f("ABS", vec![Value::Float(-0.5)]).unwrap(), Value::Float(0.5));
    assert_eq!(f("ABS", vec![Value::Null]).unwrap(), Value::Null);
    let e = f("ABS", vec![Value::Int(i32::MIN)]).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (8115, "Arithmetic overflow error converting expression to data type int.")
    );
    assert_eq!(f("ABS", vec![date("2024-01-01")]).unwrap_err().number, 8116);
    let round = |x: Value, n: i32| f("ROUND", vec![x, Value::Int(n)]).unwrap();
    assert_eq!(round(dec("1.2345"), 2), dec("1.2300"));
    assert_eq!(round(dec("-1.2355"), 3), dec("-1.2360"));
    assert_eq!(round(dec("123.45"), -1), dec("120.00"));
    assert_eq!(round(dec("1.5"), 5), dec("1.5"));
    assert_eq!(round(Value::Int(125), -1), Value::Int(130));
    assert_eq!(round(Value::Int(-125), -1), Value::Int(-130));
    assert_eq!(round(Value::Int(125), -5), Value::Int(0));
    assert_eq!(round(Value::Float(2.5), 0), Value::Float(3.0));
    assert_eq!(round(Value::Float(1234.5678), -2), Value::Float(1200.0));
    assert_eq!(round(Value::Money(12_345), 2), Value::Money(12_300));
    assert_eq!(
        f("ROUND", vec![dec("1.2399"), Value::Int(2), Value::Int(1)]).unwrap(),
        dec("1.2300")
    );
    assert_eq!(f("ROUND", vec![Value::Int(i32::MAX), Value::Int(-1)]).unwrap_err().number, 8115);
    assert_eq!(f("FLOOR", vec![dec("-1.5")]).unwrap(), dec("-2"));
    assert_eq!(f("CEILING", vec![dec("1.2")]).unwrap(), dec("2"));
    assert_eq!(f("CEILING", vec![dec("-1.2")]).unwrap(), dec("-1"));
    assert_eq!(f("FLOOR", vec![Value::Float(-1.5)]).unwrap(), Value::Float(-2.0));
    assert_eq!(f("FLOOR", vec![Value::Int(3)]).unwrap(), Value::Int(3));
    assert_eq!(f("CEILING", vec![Value::Money(10_001)]).unwrap(), Value::Money(20_000));
    assert_eq!(f("POWER", vec![Value::Int(2), Value::Int(10)]).unwrap(), Value::Int(1024));
    assert_eq!(f("POWER", vec![Value::Int(2), dec("0.5")]).unwrap(), Value::Int(1));
    assert_eq!(f("POWER", vec![Value::Int(2), Value::Int(-1)]).unwrap(), Value::Int(0));
    assert_eq!(f("POWER", vec![dec("2.0"), Value::Int(3)]).unwrap(), dec("8.0"));
    assert_eq!(
        f("POWER", vec![Value::Float(2.0), Value::Float(0.5)]).unwrap(),
        Value::Float(2f64.sqrt())
    );
    assert_eq!(
        f("POWER", vec![Value::BigInt(3), Value::Int(39)]).unwrap(),
        Value::BigInt(4_052_555_153_018_976_267)
    );
    assert_eq!(f("POWER", vec![Value::Int(10), Value::Int(10)]).unwrap_err().number, 8115);
    assert_eq!(f("POWER", vec![Value::Float(-8.0), Value::Float(0.5)]).unwrap_err().number, 3623);
    assert_eq!(f("SQRT", vec![Value::Int(16)]).unwrap(), Value::Float(4.0));
    assert_eq!(f("SQRT", vec![s("16")]).unwrap(), Value::Float(4.0));
    assert_eq!(f("SQRT", vec![Value::Int(-1)]).unwrap_err().number, 3623);
    assert_eq!(f("SQUARE", vec![Value::Int(3)]).unwrap(), Value::Float(9.0));
    assert_eq!(f("LOG", vec![Value::Int(0)]).unwrap_err().number, 3623);
    assert_eq!(f("LOG", vec![Value::Int(8), Value::Int(2)]).unwrap(), Value::Float(3.0));
    assert_eq!(f("LOG10", vec![Value::Int(1000)]).unwrap(), Value::Float(3.0));
    assert_eq!(f("SIGN", vec![Value::Int(-5)]).unwrap(), Value::Int(-1));
    assert_eq!(f("SIGN", vec![Value::TinyInt(5)]).unwrap(), Value::Int(1));
    assert_eq!(f("SIGN", vec![Value::BigInt(-5)]).unwrap(), Value::BigInt(-1));
    assert_eq!(f("SIGN", vec![dec("-2.50")]).unwrap(), dec("-1.00"));
    assert_eq!(f("SIGN", vec![Value::Float(0.0)]).unwrap(), Value::Float(0.0));
    assert_eq!(f("PI", vec![]).unwrap(), Value::Float(std::f64::consts::PI));
}

#[test]
fn rand_and_newid() {
    let seeded = || f("RAND", vec![Value::Int(42)]).unwrap();
    let first = seeded();
    assert_eq!(seeded(), first);
    let next = f("RAND", vec![]).unwrap();
    assert_ne!(next, first);
    for _ in 0..1000 {
        let Value::Float(x) = f("RAND", vec![]).unwrap() else { panic!("RAND is a float") };
        assert!((0.0..1.0).contains(&x));
    }
    let a = f("NEWID", vec![]).unwrap();
    let b = f("NEWID", vec![]).unwrap();
    assert_ne!(a, b);
    let t = text(a);
    assert_eq!(t.len(), 36);
    assert_eq!(&t[14..15], "4");
    assert!(matches!(&t[19..20], "8" | "9" | "A" | "B"));
}

#[test]
fn null_functions() {
    assert_eq!(f("ISNULL", vec![Value::Null, Value::Int(1)]).unwrap(), Value::Int(1));
    assert_eq!(f("ISNULL", vec![Value::Int(2), Value::Int(1)]).unwrap(), Value::Int(2));
    assert_eq!(
        f("COALESCE", vec![Value::Null, Value::Null, Value::Int(3)]).unwrap(),
        Value::Int(3)
    );
    assert_eq!(f("COALESCE", vec![Value::Null, Value::Int(1), dec("2.5")]).unwrap(), dec("1.0"));
    assert_eq!(f("COALESCE", vec![s("a"), s("bcd")]).unwrap(), s("a"));
    assert_eq!(f("COALESCE", vec![Value::Null]).unwrap(), Value::Null);
    assert_eq!(f("COALESCE", vec![s("a"), Value::Int(1)]).unwrap_err().number, 245);
    assert_eq!(f("NULLIF", vec![Value::Int(1), Value::Int(1)]).unwrap(), Value::Null);
    assert_eq!(f("NULLIF", vec![Value::Int(1), Value::Int(2)]).unwrap(), Value::Int(1));
    assert_eq!(f("NULLIF", vec![s("a"), s("A ")]).unwrap(), Value::Null);
    assert_eq!(f("NULLIF", vec![Value::Null, Value::Int(2)]).unwrap(), Value::Null);
    assert_eq!(f("ISNUMERIC", vec![s("12")]).unwrap(), Value::Int(1));
    assert_eq!(f("ISNUMERIC", vec![s("-1.5e3")]).unwrap(), Value::Int(1));
    assert_eq!(f("ISNUMERIC", vec![s("$1,000")]).unwrap(), Value::Int(1));
    assert_eq!(f("ISNUMERIC", vec![s("abc")]).unwrap(), Value::Int(0));
    assert_eq!(f("ISNUMERIC", vec![s("")]).unwrap(), Value::Int(0));
    assert_eq!(f("ISNUMERIC", vec![Value::Null]).unwrap(), Value::Int(0));
    assert_eq!(f("ISDATE", vec![s("2024-01-31")]).unwrap(), Value::Int(1));
    assert_eq!(f("ISDATE", vec![s("2024-02-30")]).unwrap(), Value::Int(0));
    assert_eq!(f("ISDATE", vec![s("1500-01-01")]).unwrap(), Value::Int(0));
}

#[test]
fn dateadd() {
    let add = |part: &str, n: i32, d: Value| f("DATEADD", vec![s(part), Value::Int(n), d]);
    // A string date gives a DATETIME; the day is cut to the end of a shorter month.
    assert_eq!(add("month", 1, s("2024-01-31")).unwrap(), datetime("2024-02-29"));
    assert_eq!(add("mm", 1, date("2023-01-31")).unwrap(), date("2023-02-28"));
    assert_eq!(add("year", 1, date("2024-02-29")).unwrap(), date("2025-02-28"));
    assert_eq!(add("quarter", -1, date("2024-05-31")).unwrap(), date("2024-02-29"));
    assert_eq!(add("dd", 1, date("2024-12-31")).unwrap(), date("2025-01-01"));
    assert_eq!(add("wk", 2, date("2024-01-01")).unwrap(), date("2024-01-15"));
    assert_eq!(add("hour", 25, time("10:00")).unwrap(), time("11:00"));
    assert_eq!(add("minute", -90, time("00:30")).unwrap(), time("23:00"));
    assert_eq!(add("hh", 1, datetime2("2024-01-01 23:30")).unwrap(), datetime2("2024-01-02 00:30"));
    assert_eq!(
        add("ms", 1, datetime2("2024-01-01")).unwrap(),
        datetime2("2024-01-01 00:00:00.001")
    );
    assert_eq!(
        add("mcs", 1, datetime2("2024-01-01")).unwrap(),
        datetime2("2024-01-01 00:00:00.000001")
    );
    assert_eq!(
        add("ns", 150, datetime2("2024-01-01")).unwrap(),
        datetime2("2024-01-01 00:00:00.0000002")
    );
    assert_eq!(add("ms", 10, datetime("2024-01-01")).unwrap(), datetime("2024-01-01 00:00:00.010"));
    assert_eq!(
        add("second", 1, datetime("2024-01-01 10:00:00.997")).unwrap(),
        datetime("2024-01-01 10:00:01.997")
    );
    assert_eq!(add("day", 1, Value::Null).unwrap(), Value::Null);
    assert_eq!(
        f("DATEADD", vec![s("day"), dec("1.9"), date("2024-01-01")]).unwrap(),
        date("2024-01-02")
    );
    let e = add("hour", 1, date("2024-01-01")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (9810, "The datepart hour is not supported by date function dateadd for data type date.")
    );
    assert_eq!(add("day", 1, time("10:00")).unwrap_err().number, 9810);
    let e = add("year", 10_000, date("2024-01-01")).unwrap_err();
    assert_eq!(
        (e.number, e.message.as_str()),
        (517, "Adding a value to a 'date' column caused an overflow.")
    );
    assert_eq!(add("year", -300, datetime("2024-01-01")).unwrap_err().number, 517);
    let e = add("foo", 1, date("2024-01-01")).unwrap_err();
    assert_eq!(
        (e.number, e.severity, e.message.as_str()),
        (155, 15, "'foo' is not a recognized dateadd option.")
    );
    assert_eq!(add("iso_week", 1, date("2024-01-01")).unwrap_err().number, 155);
    assert_eq!(add("day", 1, s("garbage")).unwrap_err().number, 241);
    assert_eq!(add("day", 1, Value::Guid(Guid([0; 16]))).unwrap_err().number, 8116);
}

#[test]
fn datediff_counts_boundaries() {
    let diff = |part: &str, a: Value, b: Value| f("DATEDIFF", vec![s(part), a, b]).unwrap();
    assert_eq!(diff("year", s("2023-12-31"), s("2024-01-01")), Value::Int(1));
    assert_eq!(diff("year", s("2024-01-01"), s("2024-12-31")), Value::Int(0));
    assert_eq!(diff("quarter", s("2024-03-31"), s("2024-04-01")), Value::Int(1));
    assert_eq!(diff("month", s("2024-01-31"), s("2024-02-01")), Value::Int(1));
    assert_eq!(diff("month", s("2024-03-01"), s("2024-01-31")), Value::Int(-2));
    assert_eq!(diff("day", s("2024-01-01"), s("2024-03-01")), Value::Int(60));
    assert_eq!(diff("day", s("2024-01-01 23:59"), s("2024-01-02 00:01")), Value::Int(1));
    // 2024-01-06 is a Saturday: the next day starts a week.
    assert_eq!(diff("week", s("2024-01-06"), s("2024-01-07")), Value::Int(1));
    assert_eq!(diff("week", s("2024-01-07"), s("2024-01-13")), Value::Int(0));
    assert_eq!(diff("hour", s("2024-01-01 10:59"), s("2024-01-01 11:00")), Value::Int(1));
    assert_eq!(diff("minute", s("2024-01-01 10:00:59"), s("2024-01-01 10:01:00")), Value::Int(1));
    assert_eq!(
        diff("ms", datetime2("2024-01-01 10:00:00.0005"), datetime2("2024-01-01 10:00:01.25")),
        Value::Int(1250)
    );
    assert_eq!(
        diff("ms", datetime("2024-01-01 00:00:00.000"), datetime("2024-01-01 00:00:00.007")),
        Value::Int(7)
    );
    assert_eq!(diff("ns", time("10:00"), time("10:00:00.0000001")), Value::Int(100));
    assert_eq!(diff("day", date("2024-01-01"), datetime2("2024-01-02 10:00")), Value::Int(1));
    assert_eq!(diff("day", Value::Null, date("2024-01-01")), Value::Null);
    let e = f("DATEDIFF", vec![s("second"), s("2000-01-01"), s("2100-01-01")]).unwrap_err();
    assert_eq!(e.number, 535);
    assert!(e.message.starts_with("The datediff function resulted in an overflow."));
    assert_eq!(
        f("DATEDIFF_BIG", vec![s("second"), s("2000-01-01"), s("2100-01-01")]).unwrap(),
        Value::BigInt(3_155_760_000)
    );
    assert_eq!(
        f("DATEDIFF", vec![s("xx"), s("2000-01-01"), s("2000-01-01")]).unwrap_err().number,
        155
    );
}

#[test]
fn datepart_datename_and_friends() {
    let part = |p: &str, d: Value| f("DATEPART", vec![s(p), d]).unwrap();
    let d = datetime2("2024-05-07 13:14:15.1234567");
    assert_eq!(part("year", d.clone()), Value::Int(2024));
    assert_eq!(part("qq", d.clone()), Value::Int(2));
    assert_eq!(part("m", d.clone()), Value::Int(5));
    assert_eq!(part("dd", d.clone()), Value::Int(7));
    assert_eq!(part("dy", d.clone()), Value::Int(128));
    assert_eq!(part("hh", d.clone()), Value::Int(13));
    assert_eq!(part("mi", d.clone()), Value::Int(14));
    assert_eq!(part("ss", d.clone()), Value::Int(15));
    assert_eq!(part("ms", d.clone()), Value::Int(123));
    assert_eq!(part("mcs", d.clone()), Value::Int(123_456));
    assert_eq!(part("ns", d.clone()), Value::Int(123_456_700));
    assert_eq!(part("dayofyear", date("2024-12-31")), Value::Int(366));
    // 2024-01-01 is a Monday: Sunday the 7th starts week 2 and is weekday 1.
    assert_eq!(part("week", date("2024-01-06")), Value::Int(1));
    assert_eq!(part("week", date("2024-01-07")), Value::Int(2));
    assert_eq!(part("weekday", date("2024-01-07")), Value::Int(1));
    assert_eq!(part("dw", date("2024-01-06")), Value::Int(7));
    assert_eq!(part("iso_week", date("2024-12-30")), Value::Int(1));
    assert_eq!(part("isowk", date("2021-01-03")), Value::Int(53));
    assert_eq!(part("ms", datetime("2024-01-01 10:00:00.007")), Value::Int(7));
    assert_eq!(part("day", Value::Null), Value::Null);
    assert_eq!(f("DATEPART", vec![s("hour"), date("2024-01-01")]).unwrap_err().number, 9810);
    assert_eq!(f("DATEPART", vec![s("year"), time("10:00")]).unwrap_err().number, 9810);
    let name = |p: &str, d: Value| f("DATENAME", vec![s(p), d]).unwrap();
    assert_eq!(name("month", date("2024-01-07")), ns("January"));
    assert_eq!(name("weekday", date("2024-01-07")), ns("Sunday"));
    assert_eq!(name("year", date("2024-01-07")), ns("2024"));
    assert_eq!(f("YEAR", vec![s("2024-05-07")]).unwrap(), Value::Int(2024));
    assert_eq!(f("MONTH", vec![date("2024-05-07")]).unwrap(), Value::Int(5));
    assert_eq!(f("DAY", vec![datetime("2024-05-07")]).unwrap(), Value::Int(7));
    assert_eq!(f("YEAR", vec![Value::Int(0)]).unwrap(), Value::Int(1900));
    assert_eq!(f("YEAR", vec![time("10:00")]).unwrap(), Value::Int(1900));
    assert_eq!(f("EOMONTH", vec![s("2024-02-10")]).unwrap(), date("2024-02-29"));
    assert_eq!(f("EOMONTH", vec![date("2024-01-31"), Value::Int(1)]).unwrap(), date("2024-02-29"));
    assert_eq!(f("EOMONTH", vec![date("2024-03-15"), Value::Int(-1)]).unwrap(), date("2024-02-29"));
    assert_eq!(
        f("DATEFROMPARTS", vec![Value::Int(2024), Value::Int(2), Value::Int(29)]).unwrap(),
        date("2024-02-29")
    );
    assert_eq!(
        f("DATEFROMPARTS", vec![Value::Int(2023), Value::Int(2), Value::Int(29)])
            .unwrap_err()
            .number,
        289
    );
}

#[test]
fn the_clock() {
    let Value::DateTime(now) = f("GETDATE", vec![]).unwrap() else {
        panic!("GETDATE is a datetime")
    };
    let Value::DateTime2(precise) = f("SYSDATETIME", vec![]).unwrap() else {
        panic!("SYSDATETIME is a datetime2")
    };
    assert!(matches!(f("CURRENT_TIMESTAMP", vec![]).unwrap(), Value::DateTime(_)));
    assert!(matches!(f("SYSUTCDATETIME", vec![]).unwrap(), Value::DateTime2(_)));
    let again = DateTime::from_datetime2(precise).unwrap();
    assert!(again.days() - now.days() <= 1);
    assert!(precise.date >= Date::from_ymd(2024, 1, 1).unwrap());
    let _: DateTime2 = precise;
}

#[test]
fn format_numbers_with_standard_and_custom_formats() {
    let fmt = |v: Value, p: &str| f("FORMAT", vec![v, s(p)]).unwrap();
    let cases: Vec<(Value, &str, &str)> = vec![
        (dec("1234567.891"), "N", "1,234,567.89"),
        (dec("1234567.891"), "N0", "1,234,568"),
        (dec("-1234.5"), "N1", "-1,234.5"),
        (dec("-0.001"), "N2", "0.00"),
        (dec("1234.5678"), "F2", "1234.57"),
        (dec("0.5"), "P0", "50 %"),
        (dec("-1234.5"), "C", "($1,234.50)"),
        (Value::Int(42), "D5", "00042"),
        (Value::Int(-1), "X", "FFFFFFFF"),
        (Value::SmallInt(255), "x4", "00ff"),
        (dec("1234.5678"), "E2", "1.23E+003"),
        (dec("12.50"), "G", "12.50"),
        (Value::Float(0.1), "N3", "0.100"),
        (dec("1234567.891"), "#,##0.00", "1,234,567.89"),
        (Value::Int(5), "000", "005"),
        (dec("0.5"), "0.0%", "50.0%"),
        (Value::Int(123_456_789), "###-##-####", "123-45-6789"),
        (Value::Int(1_234_567), "#,##0,K", "1,235K"),
        (Value::Int(-5), "0;(0);zero", "(5)"),
        (Value::Int(0), "0;(0);zero", "zero"),
        (dec("1.5"), "0.###", "1.5"),
        (Value::Int(7), "'#'0", "#7"),
    ];
    for (value, pattern, expected) in cases {
        assert_eq!(fmt(value.clone(), pattern), ns(expected), "FORMAT({value:?}, '{pattern}')");
    }
    // Rounding carries through every digit; a huge precision or value does not overflow.
    assert_eq!(fmt(dec("9.995"), "N2"), ns("10.00"));
    let nines = "9".repeat(38);
    assert_eq!(fmt(dec(&nines), "N0"), ns(&format!("99{}", ",999".repeat(12))));
    assert_eq!(fmt(dec("1"), "F40"), ns(&format!("1.{}", "0".repeat(40))));
    assert_eq!(fmt(dec(&nines), "0%"), ns(&format!("{nines}00%")));
    // A format .NET refuses gives NULL; so does a NULL argument.
    assert_eq!(fmt(Value::Int(1), "Q"), Value::Null);
    assert_eq!(fmt(dec("1.5"), "D"), Value::Null, "D is for integers");
    assert_eq!(fmt(Value::Null, "N"), Value::Null);
    assert_eq!(f("FORMAT", vec![Value::Int(1), Value::Null]).unwrap(), Value::Null);
}

#[test]
fn format_dates_times_cultures_and_bad_arguments() {
    let fmt = |v: Value, p: &str| f("FORMAT", vec![v, s(p)]).unwrap();
    let moment = datetime2("2024-03-05 14:07:09.1234567");
    assert_eq!(fmt(moment.clone(), "yyyy-MM-dd HH:mm:ss.fff"), ns("2024-03-05 14:07:09.123"));
    assert_eq!(fmt(moment.clone(), "dddd, MMMM d, yyyy"), ns("Tuesday, March 5, 2024"));
    assert_eq!(fmt(moment.clone(), "d"), ns("3/5/2024"));
    assert_eq!(fmt(moment.clone(), "G"), ns("3/5/2024 2:07:09 PM"));
    assert_eq!(fmt(moment.clone(), "hh:mm tt"), ns("02:07 PM"));
    assert_eq!(fmt(moment.clone(), "s"), ns("2024-03-05T14:07:09"));
    assert_eq!(fmt(date("2024-03-05"), "MMM yy"), ns("Mar 24"));
    assert_eq!(fmt(date("2024-03-05"), "dd/MM/yyyy"), ns("05/03/2024"));
    // A DATETIME shows the milliseconds it displays, not its 1/300 s ticks' exact value.
    assert_eq!(fmt(datetime("2024-03-05 10:00:00.007"), "HH:mm:ss.fff"), ns("10:00:00.007"));
    // TIME follows TimeSpan's rules: literals escaped, else NULL.
    let t = time("14:07:09.5");
    assert_eq!(fmt(t.clone(), "hh\\:mm\\:ss"), ns("14:07:09"));
    assert_eq!(fmt(t.clone(), "hh:mm"), Value::Null);
    assert_eq!(fmt(t, "c"), ns("14:07:09.5000000"));

    assert_eq!(f("FORMAT", vec![Value::Int(12), s("N"), s("en-US")]).unwrap(), ns("12.00"));
    assert_eq!(f("FORMAT", vec![Value::Int(1), s("N"), s("de-DE")]).unwrap_err().number, 9818);
    assert_eq!(f("FORMAT", vec![s("abc"), s("N")]).unwrap_err().number, 8116);
    assert_eq!(f("FORMAT", vec![Value::Bit(true), s("N")]).unwrap_err().number, 8116);
    assert_eq!(f("FORMAT", vec![Value::Int(1)]).unwrap_err().number, 189);
}

#[test]
fn format_never_panics_on_any_pattern() {
    // Patterns drawn from the characters the format parsers treat specially, over values at
    // the edges of their types: every call returns a value, NULL or an error.
    const ALPHABET: &[u8] = b"0#.,%;'\"\\yMdHhmsfFtTzK:/NnDdPpCcXxEeGgRr9 -";
    let values = vec![
        Value::Int(i32::MIN),
        Value::BigInt(i64::MAX),
        Value::TinyInt(0),
        dec("-99999999999999999999999999999999999999"),
        dec("0.00000000000000000000000000000000000001"),
        Value::Money(i64::MIN),
        Value::Float(f64::MAX),
        Value::Float(-0.0),
        Value::Real(1e-30),
        datetime2("9999-12-31 23:59:59.9999999"),
        date("0001-01-01"),
        time("00:00:00"),
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..4000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (state % 13) as usize;
        let pattern: String = (0..len)
            .map(|i| char::from(ALPHABET[((state >> (i * 5)) % ALPHABET.len() as u64) as usize]))
            .collect();
        for v in &values {
            let result = std::panic::catch_unwind(|| f("FORMAT", vec![v.clone(), s(&pattern)]));
            assert!(result.is_ok(), "FORMAT({v:?}, '{pattern}') panicked");
        }
    }
}

#[test]
fn quick_arithmetic_is_the_general_arithmetic() {
    let values = [
        Value::Int(0),
        Value::Int(-7),
        Value::Int(-1),
        Value::Int(5),
        Value::Int(i32::MAX),
        Value::Int(i32::MIN),
        Value::BigInt(3),
        Value::BigInt(-1),
        Value::BigInt(-10),
        Value::BigInt(i64::MAX),
        Value::BigInt(i64::MIN),
        dec("1.50"),
        dec("-0.07"),
        dec("12345678901234567.5"),
        dec("99999999999999999999999999999999999.99"),
        dec("0.000000000000000000001"),
        Value::Float(1.5),
        Value::Null,
    ];
    let mut quick = 0;
    for a in &values {
        for b in &values {
            let ops = [
                BinaryOp::Add,
                BinaryOp::Subtract,
                BinaryOp::Multiply,
                BinaryOp::Divide,
                BinaryOp::Modulo,
            ];
            for op in ops {
                let general = binary(op, a.clone(), b.clone());
                if let Some(v) = arith::quick_binary(op, a, b) {
                    // The same value of the same type, where the general path succeeds.
                    assert_eq!(
                        general.ok().map(|g| (g.to_string(), type_of(&g))),
                        Some((v.to_string(), type_of(&v))),
                        "{a:?} {op:?} {b:?}"
                    );
                    quick += 1;
                }
            }
        }
    }
    assert!(quick > 20, "{quick}");
}
