//! The date functions (DATEADD, DATEDIFF, DATEPART, DATENAME and the like) and the clock's.

use super::*;

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
