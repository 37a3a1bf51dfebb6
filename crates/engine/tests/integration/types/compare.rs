//! Comparison of values across and within type families, NULLs, and display.

use super::*;

#[test]
fn compare_numbers_across_types() {
    let c = |a: Value, b: Value| compare(&a, &b);
    use Ordering::*;
    assert_eq!(c(Value::Int(1), Value::Decimal(dec("1.00"))), Some(Equal));
    assert_eq!(c(Value::TinyInt(255), Value::SmallInt(-1)), Some(Greater));
    assert_eq!(
        c(Value::BigInt(i64::MAX), Value::Decimal(dec("9223372036854775807.5"))),
        Some(Less)
    );
    assert_eq!(c(Value::Decimal(dec("1.5")), Value::Decimal(dec("1.49999"))), Some(Greater));
    assert_eq!(c(Value::Decimal(dec("-0.5")), Value::Decimal(dec("0.3"))), Some(Less));
    assert_eq!(c(Value::Decimal(dec("-1.5")), Value::Int(-1)), Some(Less));
    assert_eq!(
        c(
            Value::Decimal(dec("10000000000000000000000000000000000000")),
            Value::Decimal(dec("0.99999999999999999999999999999999999999"))
        ),
        Some(Greater),
        "scales 0 and 38 compare without overflow"
    );
    assert_eq!(c(Value::Money(12_345), Value::Decimal(dec("1.2345"))), Some(Equal));
    assert_eq!(c(Value::Bit(true), Value::Int(1)), Some(Equal));
    assert_eq!(c(Value::Float(1.5), Value::Int(1)), Some(Greater));
    assert_eq!(c(Value::Real(0.5), Value::Decimal(dec("0.5"))), Some(Equal));
    assert_eq!(c(Value::Float(-0.0), Value::Float(0.0)), Some(Equal));
    assert_eq!(c(Value::Float(f64::NAN), Value::Float(0.0)), None);
}

#[test]
fn compare_strings_case_insensitive_trailing_spaces() {
    let s = |x: &str| Value::Str(x.to_string());
    let n = |x: &str| Value::NStr(x.to_string());
    use Ordering::*;
    assert_eq!(compare(&s("abc"), &s("ABC  ")), Some(Equal));
    assert_eq!(compare(&s("abc"), &n("AbC")), Some(Equal));
    assert_eq!(compare(&s("a"), &s("B")), Some(Less));
    assert_eq!(compare(&s("ab"), &s("abc")), Some(Less));
    assert_eq!(compare(&s(""), &s("   ")), Some(Equal));
    assert_eq!(compare(&s(" a"), &s("a")), Some(Less), "leading spaces count");
    assert_ne!(compare(&n("e"), &n("é")), Some(Equal), "accent-sensitive");
    assert_eq!(compare(&n("É"), &n("é")), Some(Equal));
    assert_eq!(compare(&s("a\0"), &s("a")), Some(Greater));
}

#[test]
fn compare_other_families_and_nulls() {
    use Ordering::*;
    let d = Value::Date(date("2024-01-31"));
    let midnight2 = Value::DateTime2(dt2("2024-01-31"));
    let midnight = Value::DateTime(DateTime::parse("2024-01-31").unwrap());
    assert_eq!(compare(&d, &midnight2), Some(Equal));
    assert_eq!(compare(&d, &midnight), Some(Equal));
    let tick = Value::DateTime(DateTime::parse("2024-01-31 00:00:00.003").unwrap());
    assert_eq!(
        compare(&tick, &Value::DateTime2(dt2("2024-01-31 00:00:00.0033333"))),
        Some(Greater)
    );
    assert_eq!(compare(&tick, &Value::DateTime2(dt2("2024-01-31 00:00:00.0033334"))), Some(Less));
    assert_eq!(compare(&Value::Binary(vec![1]), &Value::Binary(vec![1, 0])), Some(Less));
    assert_eq!(compare(&Value::Binary(vec![2]), &Value::Binary(vec![1, 0])), Some(Greater));
    let t = Value::Time(Time::parse("01:00").unwrap());
    assert_eq!(compare(&t, &Value::Time(Time::MIDNIGHT)), Some(Greater));
    assert_eq!(compare(&t, &d), None, "time and date are different families");
    assert_eq!(compare(&Value::Int(1), &Value::Str("1".into())), None);
    assert_eq!(compare(&Value::Null, &Value::Null), None);
    assert_eq!(compare(&Value::Null, &Value::Int(1)), None);
    assert_eq!(compare(&Value::Int(1), &Value::Null), None);
}

#[test]
fn value_display() {
    assert_eq!(Value::Null.to_string(), "NULL");
    assert_eq!(Value::Bit(true).to_string(), "1");
    assert_eq!(Value::Money(-12_345).to_string(), "-1.2345");
    assert_eq!(Value::Money(120_000).to_string(), "12.0000");
    assert_eq!(Value::Binary(vec![0x0a, 0xbc]).to_string(), "0x0ABC");
    assert_eq!(Value::Decimal(dec("-0.50")).to_string(), "-0.50");
    assert_eq!(
        Value::DateTime(DateTime::parse("2024-01-31 12:34:56.789").unwrap()).to_string(),
        "2024-01-31 12:34:56.790"
    );
    assert_eq!(Value::Str("x".into()).kind_name(), "varchar");
    assert_eq!(Value::NStr("x".into()).kind_name(), "nvarchar");
}
