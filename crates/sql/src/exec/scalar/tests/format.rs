//! FORMAT of numbers, dates and times, under its cultures, with any pattern.

use super::*;

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
