//! Conversions: CAST, CONVERT with its styles, TRY_CONVERT and the implicit conversions into
//! columns and variables, with SQL Server's rounding and error numbers.

use super::*;

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
