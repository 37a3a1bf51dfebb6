//! Dates and times: the calendar, parsing and display, rounding to a scale, offsets compared
//! in UTC.

use super::*;

#[test]
fn calendar_known_points() {
    let points = [
        ((1, 1, 1), 0),
        ((1, 12, 31), 364),
        ((4, 2, 29), 365 * 3 + 31 + 28),
        ((1582, 10, 10), 577_730),
        ((1753, 1, 1), 639_905),
        ((1900, 1, 1), 693_595),
        ((1970, 1, 1), 719_162),
        ((2000, 1, 1), 730_119),
        ((2000, 2, 29), 730_178),
        ((2024, 1, 31), 738_915),
        ((9999, 12, 31), 3_652_058),
    ];
    for ((y, m, d), days) in points {
        let date = Date::from_ymd(y, m, d).unwrap();
        assert_eq!(date.days(), days, "{y}-{m}-{d}");
        assert_eq!(date.ymd(), (y, m, d));
    }
    assert_eq!(Date::from_days(DATETIME_EPOCH_DAYS).unwrap().ymd(), (1900, 1, 1));
    assert_eq!(
        Date::from_days(DATETIME_EPOCH_DAYS - 53_690).unwrap().ymd(),
        (1753, 1, 1),
        "DATETIME_MIN_DAYS"
    );
    assert_eq!(
        i64::from(Date::MAX.days()) - i64::from(DATETIME_EPOCH_DAYS),
        i64::from(DATETIME_MAX_DAYS)
    );
    for (y, m, d) in [
        (2023, 2, 29),
        (1900, 2, 29),
        (2100, 2, 29),
        (0, 1, 1),
        (10000, 1, 1),
        (2024, 13, 1),
        (2024, 0, 1),
        (2024, 4, 31),
        (2024, 1, 0),
    ] {
        assert_eq!(Date::from_ymd(y, m, d), None, "{y}-{m}-{d}");
    }
    assert_eq!(Date::from_days(MAX_DATE_DAYS + 1), None);
}

#[test]
fn calendar_round_trips_every_day() {
    // An independent statement of the calendar: month lengths and the leap rule.
    let leap = |y: u16| y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
    let month_len = |y: u16, m: u8| match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    // The day before 0001-01-01, in a year 0 that only serves as a predecessor.
    let mut previous = (0u16, 12u8, 31u8);
    for days in 0..=MAX_DATE_DAYS {
        let (y, m, d) = Date::from_days(days).unwrap().ymd();
        assert_eq!(Date::from_ymd(y, m, d).map(Date::days), Some(days), "{y}-{m}-{d}");
        // Each day follows the previous one in the calendar.
        let next = if d > 1 {
            previous == (y, m, d - 1)
        } else {
            let before = if m == 1 { (y - 1, 12) } else { (y, m - 1) };
            (previous.0, previous.1) == before && previous.2 == month_len(before.0, before.1)
        };
        assert!(next, "{previous:?} then {y}-{m}-{d}");
        previous = (y, m, d);
    }
    assert_eq!(previous, (9999, 12, 31));
}

#[test]
fn temporal_parse_and_display() {
    assert_eq!(date("2024-01-31").to_string(), "2024-01-31");
    assert_eq!(date("20240131"), date("2024-01-31"));
    assert_eq!(date("2024-1-5").to_string(), "2024-01-05");
    assert_eq!(date(" 2024-01-31 12:34 ").to_string(), "2024-01-31");
    assert_eq!(date("12:34").to_string(), "1900-01-01");
    assert_eq!(date("").to_string(), "1900-01-01");
    assert_eq!(date("0001-01-01").days(), 0);
    assert_eq!(Date::parse("2024-02-30"), Err(ParseError::OutOfRange));
    assert_eq!(Date::parse("2024-13-01"), Err(ParseError::OutOfRange));
    for bad in
        ["2024/01/31", "2024-01", "24-01-31", "2024-01-31x", "2024013", "hello", "2024-01-31 12"]
    {
        assert_eq!(Date::parse(bad), Err(ParseError::Invalid), "{bad}");
    }

    let t = Time::parse("12:34:56.1234567").unwrap();
    assert_eq!(t.to_string(), "12:34:56.1234567");
    assert_eq!(t.ticks(), (12 * 3600 + 34 * 60 + 56) * TICKS_PER_SECOND + 1_234_567);
    assert_eq!(t.hms(), (12, 34, 56, 1_234_567));
    assert_eq!(t.display(0).to_string(), "12:34:56");
    assert_eq!(t.display(3).to_string(), "12:34:56.123");
    assert_eq!(Time::parse("1:2").unwrap().to_string(), "01:02:00.0000000");
    assert_eq!(Time::parse("23:59:59.5").unwrap().display(1).to_string(), "23:59:59.5");
    assert_eq!(Time::parse("2024-01-31T08:00:00").unwrap().display(0).to_string(), "08:00:00");
    assert_eq!(Time::parse("2024-01-31").unwrap(), Time::MIDNIGHT);
    assert_eq!(Time::parse("24:00:00"), Err(ParseError::OutOfRange));
    assert_eq!(Time::parse("12:60"), Err(ParseError::OutOfRange));
    // Digits past the seventh round to the 100 ns tick, as SQL Server reads the nine that
    // mssql-jdbc sends.
    assert_eq!(
        Time::parse("12:34:56.12345678").unwrap().display(7).to_string(),
        "12:34:56.1234568"
    );
    assert_eq!(Time::parse("12:34:56."), Err(ParseError::Invalid));
    assert_eq!(Time::parse("12"), Err(ParseError::Invalid));
    assert_eq!(Time::from_hms(23, 59, 59, 9_999_999).unwrap().ticks(), TICKS_PER_DAY - 1);
    assert_eq!(Time::from_hms(24, 0, 0, 0), None);
    assert_eq!(Time::from_ticks(TICKS_PER_DAY), None);

    let v = dt2("2024-01-31T12:34:56.1234567");
    assert_eq!(v.to_string(), "2024-01-31 12:34:56.1234567");
    assert_eq!(v.display(2).to_string(), "2024-01-31 12:34:56.12");
    assert_eq!(v.display(0).to_string(), "2024-01-31 12:34:56");
    assert_eq!(dt2("2024-01-31 12:34:56.789"), dt2("2024-01-31T12:34:56.7890000"));
    assert_eq!(dt2("20240131 12:34").to_string(), "2024-01-31 12:34:00.0000000");
    assert_eq!(dt2("2024-01-31").time, Time::MIDNIGHT);
    assert_eq!(dt2("12:00").date, Date::DEFAULT);
    assert_eq!(DateTime2::parse("2024-01-31X12:00"), Err(ParseError::Invalid));
}

#[test]
fn datetimeoffset_parses_displays_and_compares_in_utc() {
    let dto = |text: &str| DateTimeOffset::parse(text).unwrap();
    let v = dto("2024-01-31 12:34:56.1234567 +02:00");
    assert_eq!(v.to_string(), "2024-01-31 12:34:56.1234567 +02:00");
    assert_eq!(v.utc(), dt2("2024-01-31 10:34:56.1234567"));
    assert_eq!(v.local(), dt2("2024-01-31 12:34:56.1234567"));
    assert_eq!(v.offset_minutes(), 120);
    assert_eq!(v.display(0).to_string(), "2024-01-31 12:34:56 +02:00");
    assert_eq!(dto("2024-01-31T12:34:56Z").to_string(), "2024-01-31 12:34:56.0000000 +00:00");
    assert_eq!(dto("2024-01-31 01:00-05:30").utc(), dt2("2024-01-31 06:30"));
    assert_eq!(dto("2024-01-31 01:00 -5:30").offset_minutes(), -330);
    assert_eq!(dto("2024-01-31").to_string(), "2024-01-31 00:00:00.0000000 +00:00");
    assert_eq!(dto("2024-01-01 00:30 +01:00").utc(), dt2("2023-12-31 23:30"));
    assert_eq!(DateTimeOffset::parse("2024-01-31 12:00 +14:01"), Err(ParseError::OutOfRange));
    assert_eq!(DateTimeOffset::parse("2024-01-31 12:00 +15:00"), Err(ParseError::OutOfRange));
    assert_eq!(DateTimeOffset::parse("0001-01-01 00:00 +01:00"), Err(ParseError::OutOfRange));
    assert!(DateTimeOffset::from_utc(dt2("9999-12-31 23:00"), 120).is_none());
    // One moment at two offsets: equal as SQL Server compares, and in a key.
    let (a, b) = (dto("2024-01-31 12:00 +02:00"), dto("2024-01-31 10:00 +00:00"));
    assert_eq!(
        compare(&Value::DateTimeOffset(a), &Value::DateTimeOffset(b)),
        Some(Ordering::Equal)
    );
    let ty = [SqlType::DateTimeOffset(7)];
    assert_eq!(key(&ty, &[Value::DateTimeOffset(a)]), key(&ty, &[Value::DateTimeOffset(b)]));
    // Against a DATETIME2, the DATETIME2 is taken as UTC.
    let later = Value::DateTime2(dt2("2024-01-31 11:00"));
    assert_eq!(compare(&Value::DateTimeOffset(a), &later), Some(Ordering::Less));
}

#[test]
fn time_and_datetime2_round_to_a_scale() {
    let t = Time::parse("12:34:56.1234567").unwrap();
    assert!(t.is_at_scale(7) && !t.is_at_scale(6));
    assert_eq!(t.round_to_scale(3).0.to_string(), "12:34:56.1230000");
    assert_eq!(t.round_to_scale(4).0.to_string(), "12:34:56.1235000");
    assert_eq!(t.round_to_scale(0), (Time::parse("12:34:56").unwrap(), false));
    assert_eq!(t.round_to_scale(7), (t, false));
    let late = Time::parse("23:59:59.9999999").unwrap();
    assert_eq!(late.round_to_scale(0), (Time::MIDNIGHT, true), "wraps past midnight");
    let v = dt2("2024-12-31 23:59:59.9999999");
    assert_eq!(v.round_to_scale(2).unwrap().to_string(), "2025-01-01 00:00:00.0000000");
    assert_eq!(dt2("9999-12-31 23:59:59.9999999").round_to_scale(6), None);
    assert_eq!(
        dt2("9999-12-31 23:59:59.9999999").round_to_scale(7),
        Some(dt2("9999-12-31 23:59:59.9999999"))
    );
}

#[test]
fn datetime_rounds_to_three_hundredths_like_sql_server() {
    let shown = |text: &str| DateTime::parse(text).unwrap().to_string();
    assert_eq!(shown("2024-01-31 12:34:56.789"), "2024-01-31 12:34:56.790");
    // SQL Server's table: .000-.001 -> .000, .002-.004 -> .003, .005-.008 -> .007, .009 -> .010.
    let expected = ["000", "000", "003", "003", "003", "007", "007", "007", "007", "010"];
    for (ms, want) in expected.iter().enumerate() {
        let text = format!("2024-01-31 00:00:00.00{ms}");
        assert_eq!(shown(&text), format!("2024-01-31 00:00:00.{want}"), "{text}");
    }
    assert_eq!(shown("2024-01-31 23:59:59.999"), "2024-02-01 00:00:00.000");
    assert_eq!(shown("2024-01-31 23:59:59.998"), "2024-01-31 23:59:59.997");
    assert_eq!(shown("2024-01-31"), "2024-01-31 00:00:00.000");
    assert_eq!(shown("20240131"), "2024-01-31 00:00:00.000");
    assert_eq!(shown("12:00"), "1900-01-01 12:00:00.000");
    assert_eq!(shown("1753-01-01"), "1753-01-01 00:00:00.000");
    assert_eq!(shown("9999-12-31 23:59:59.997"), "9999-12-31 23:59:59.997");
    assert_eq!(DateTime::parse("9999-12-31 23:59:59.999"), Err(ParseError::OutOfRange));
    assert_eq!(DateTime::parse("1752-12-31"), Err(ParseError::OutOfRange));
    assert_eq!(DateTime::parse("2024-01-31 12:34:56.1234"), Err(ParseError::Invalid));

    let d = DateTime::parse("1900-01-01 00:00:00.003").unwrap();
    assert_eq!((d.days(), d.ticks()), (0, 1));
    assert_eq!(d.to_datetime2().to_string(), "1900-01-01 00:00:00.0033333");
    assert_eq!(
        DateTime::parse("1900-01-01 00:00:00.007").unwrap().to_datetime2().to_string(),
        "1900-01-01 00:00:00.0066667"
    );
    assert_eq!(DateTime::parse("1899-12-31").unwrap().days(), -1);
    // Every tick survives a trip through DATETIME2.
    for ticks in (0..DATETIME_TICKS_PER_DAY).step_by(997).chain([DATETIME_TICKS_PER_DAY - 1]) {
        let d = DateTime::from_parts(12_345, ticks).unwrap();
        assert_eq!(DateTime::from_datetime2(d.to_datetime2()), Some(d));
    }
    assert_eq!(DateTime::from_parts(DATETIME_MIN_DAYS - 1, 0), None);
    assert_eq!(DateTime::from_parts(0, DATETIME_TICKS_PER_DAY), None);
}
