//! DECIMAL: exact parsing and display, rescaling, overflow for a precision.

use super::*;

#[test]
fn decimal_parses_exactly_and_displays() {
    let d = dec("123.45");
    assert_eq!((d.mantissa(), d.scale()), (12345, 2));
    let d = dec("-0.5");
    assert_eq!((d.mantissa(), d.scale()), (-5, 1));
    assert_eq!(d.to_string(), "-0.5");
    for (text, shown) in [
        ("123.45", "123.45"),
        ("-0.50", "-0.50"),
        ("0", "0"),
        ("-0", "0"),
        (".5", "0.5"),
        ("5.", "5"),
        ("+7", "7"),
        (" 12.340 ", "12.340"),
        ("00012", "12"),
        ("-12345678901234567890.123456789012345678", "-12345678901234567890.123456789012345678"),
    ] {
        assert_eq!(dec(text).to_string(), shown, "{text}");
    }
    let nines = "9".repeat(38);
    assert_eq!(dec(&nines).to_string(), nines);
    let tiny = format!("0.{}1", "0".repeat(37));
    assert_eq!((dec(&tiny).mantissa(), dec(&tiny).scale()), (1, 38));
    assert_eq!(dec(&tiny).to_string(), tiny);
    for bad in ["", ".", "-", "1e5", "1.2.3", "- 1", "12a", "0x10", "1,5", "--1"] {
        assert_eq!(Decimal::parse(bad), Err(ParseError::Invalid), "{bad:?}");
    }
    for big in [format!("1{}", "0".repeat(38)), format!("0.{}1", "0".repeat(38))] {
        assert_eq!(Decimal::parse(&big), Err(ParseError::OutOfRange), "{big}");
    }
    assert_eq!(dec(&format!("{}1", "0".repeat(50))).mantissa(), 1, "leading zeros are free");
    assert_eq!(dec("12.34").digits(), 4);
    assert_eq!(dec("0").digits(), 1);
    assert_eq!(Decimal::new(10i128.pow(38), 0), None);
    assert_eq!(Decimal::new(1, 39), None);
    assert_eq!(Decimal::from_i64(-42).to_string(), "-42");
    assert_eq!(dec("1.25").to_f64(), 1.25);
}

#[test]
fn decimal_rescale_rounds_half_away_from_zero() {
    let r = |text: &str, scale| dec(text).rescale(scale).map(|d| d.to_string());
    assert_eq!(r("2.5", 0).as_deref(), Some("3"));
    assert_eq!(r("-2.5", 0).as_deref(), Some("-3"));
    assert_eq!(r("2.49", 0).as_deref(), Some("2"));
    assert_eq!(r("-2.45", 1).as_deref(), Some("-2.5"));
    assert_eq!(r("1.005", 2).as_deref(), Some("1.01"));
    assert_eq!(r("1.004999", 2).as_deref(), Some("1.00"));
    assert_eq!(r("0.4", 0).as_deref(), Some("0"));
    assert_eq!(r("-0.4", 0).as_deref(), Some("0"));
    assert_eq!(r("1.5", 3).as_deref(), Some("1.500"));
    assert_eq!(r("12.34", 2).as_deref(), Some("12.34"));
    assert_eq!(r("1", 38), None, "39 digits");
    assert_eq!(r("0.5", 38), Some(format!("0.5{}", "0".repeat(37))));
    assert_eq!(r("1", 39), None);
    // Rounding up can add a digit.
    assert_eq!(r("99.95", 1).as_deref(), Some("100.0"));
    let big = Decimal::new(10i128.pow(38) - 1, 1).unwrap();
    assert_eq!(big.rescale(0).map(|d| d.to_string()), Some(format!("1{}", "0".repeat(37))));
}

#[test]
fn decimal_overflow_for_a_precision() {
    assert!(dec("12345678.91").fits_precision(10));
    assert!(!dec("123456789.10").fits_precision(10));
    assert_eq!(
        dec("12345678.905").to_type(10, 2).map(|d| d.to_string()).as_deref(),
        Some("12345678.91")
    );
    assert_eq!(dec("99999999.995").to_type(10, 2), None, "rounds to 100000000.00");
    assert_eq!(dec("123456789").to_type(10, 2), None);
    assert_eq!(dec("0.5").to_type(1, 0).map(|d| d.to_string()).as_deref(), Some("1"));
    assert_eq!(dec("1").to_type(5, 6), None, "scale above precision");
    assert_eq!(dec("1.5").cmp_value(&dec("1.50")), Ordering::Equal);
    assert_eq!(dec("-1.5").cmp_value(&dec("-1.49")), Ordering::Less);
}
