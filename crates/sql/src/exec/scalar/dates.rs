//! Date and time functions: the clock (GETDATE, SYSDATETIME...), DATEADD, DATEDIFF,
//! DATEDIFF_BIG, DATEPART, DATENAME, YEAR, MONTH, DAY, EOMONTH and DATEFROMPARTS, and the
//! DATETIMEOFFSET ones: SYSDATETIMEOFFSET, TODATETIMEOFFSET, SWITCHOFFSET.
//!
//! A DATETIMEOFFSET's dateparts and DATEADD work on its local date and time, keeping its
//! offset; DATEDIFF measures between UTC moments, so that it counts real time across zones.
//!
//! As in SQL Server, GETDATE, CURRENT_TIMESTAMP and SYSDATETIME read the machine's local time
//! (its system time zone: `TZ`, else `/etc/localtime`), GETUTCDATE and SYSUTCDATETIME read UTC;
//! on a machine set to UTC, as Linux containers usually are, they agree.
//!
//! DATEPART's WEEK and WEEKDAY count from the session's `SET DATEFIRST` (7, Sunday, by
//! default); DATEDIFF counts Sunday-based weeks whatever it is, as SQL Server's does. DATENAME
//! names months and days in the session's language.

use walden_engine::types::{
    offset_text, Date, DateTime, DateTime2, DateTimeOffset, SqlType, Time, Value,
    DATETIME_EPOCH_DAYS, MAX_OFFSET_MINUTES, TICKS_PER_DAY,
};

use super::convert::{convert, parse_temporal_text};
use super::settings;
use super::temporal::{
    add_days, add_months, add_ticks, days_in_month, now_local, now_utc, total_ticks, weekday,
};
use super::types::value_label;
use crate::exec::SqlError;

pub(crate) const DAYS: [&str; 7] =
    ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// 100 ns ticks per hour, minute, second, millisecond, microsecond.
const HOUR: i128 = 36_000_000_000;
const MINUTE: i128 = 600_000_000;
const SECOND: i128 = 10_000_000;
const MILLISECOND: i128 = 10_000;
const MICROSECOND: i128 = 10;

/// A datepart, the first argument of DATEADD, DATEDIFF, DATEPART and DATENAME.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Year,
    Quarter,
    Month,
    DayOfYear,
    Day,
    Week,
    Weekday,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
    Nanosecond,
    IsoWeek,
    /// The offset from UTC in minutes (DATEPART and DATENAME only).
    TzOffset,
}

impl Part {
    /// The datepart named by an identifier, with SQL Server's abbreviations; Msg 155 naming
    /// the function otherwise. ISO_WEEK exists for DATEPART and DATENAME only.
    fn parse(v: &Value, func: &str) -> Result<Part, SqlError> {
        let name = match v {
            Value::Str(s) | Value::NStr(s) => s.clone(),
            other => super::text::to_text(other),
        };
        let part = match name.to_ascii_lowercase().as_str() {
            "year" | "yy" | "yyyy" => Part::Year,
            "quarter" | "qq" | "q" => Part::Quarter,
            "month" | "mm" | "m" => Part::Month,
            "dayofyear" | "dy" | "y" => Part::DayOfYear,
            "day" | "dd" | "d" => Part::Day,
            "week" | "wk" | "ww" => Part::Week,
            "weekday" | "dw" | "w" => Part::Weekday,
            "hour" | "hh" => Part::Hour,
            "minute" | "mi" | "n" => Part::Minute,
            "second" | "ss" | "s" => Part::Second,
            "millisecond" | "ms" => Part::Millisecond,
            "microsecond" | "mcs" => Part::Microsecond,
            "nanosecond" | "ns" => Part::Nanosecond,
            "iso_week" | "isowk" | "isoww" if matches!(func, "datepart" | "datename") => {
                Part::IsoWeek
            }
            "tzoffset" | "tz" if matches!(func, "datepart" | "datename") => Part::TzOffset,
            _ => {
                return Err(SqlError::with_severity(
                    155,
                    15,
                    format!("'{name}' is not a recognized {func} option."),
                ))
            }
        };
        Ok(part)
    }

    fn name(self) -> &'static str {
        match self {
            Part::Year => "year",
            Part::Quarter => "quarter",
            Part::Month => "month",
            Part::DayOfYear => "dayofyear",
            Part::Day => "day",
            Part::Week => "week",
            Part::Weekday => "weekday",
            Part::Hour => "hour",
            Part::Minute => "minute",
            Part::Second => "second",
            Part::Millisecond => "millisecond",
            Part::Microsecond => "microsecond",
            Part::Nanosecond => "nanosecond",
            Part::IsoWeek => "iso_week",
            Part::TzOffset => "tzoffset",
        }
    }

    fn is_time(self) -> bool {
        matches!(
            self,
            Part::Hour
                | Part::Minute
                | Part::Second
                | Part::Millisecond
                | Part::Microsecond
                | Part::Nanosecond
        )
    }
}

/// The type of a date argument, which decides DATEADD's result type and which dateparts apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Date,
    Time,
    DateTime,
    DateTime2,
    /// A DATETIMEOFFSET at this offset (minutes); its moment is the local date and time.
    DateTimeOffset(i16),
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::Time => "time",
            Kind::DateTime => "datetime",
            Kind::DateTime2 => "datetime2",
            Kind::DateTimeOffset(_) => "datetimeoffset",
        }
    }

    /// Msg 9810 for a datepart the type does not have (an hour of a DATE, a year of a TIME).
    fn check(self, part: Part, func: &str) -> Result<(), SqlError> {
        let unsupported = match self {
            Kind::Date => part.is_time() || part == Part::TzOffset,
            Kind::Time => !part.is_time(),
            // DATETIME2 has an offset of 0 as far as DATEPART is concerned.
            Kind::DateTime => part == Part::TzOffset,
            _ => false,
        };
        if unsupported {
            return Err(SqlError::new(
                9810,
                format!(
                    "The datepart {} is not supported by date function {func} for data type {}.",
                    part.name(),
                    self.name()
                ),
            ));
        }
        Ok(())
    }
}

/// A DATETIME as a moment with the milliseconds it displays (`.007`, not `.0066667`), so
/// that DATEPART and DATEDIFF agree with what the user sees. Converting back with
/// [`DateTime::from_datetime2`] gives the same DATETIME: the displayed milliseconds are within
/// a third of a tick of the exact value.
pub(crate) fn datetime_moment(dt: DateTime) -> DateTime2 {
    let days = i64::from(dt.days()) + i64::from(DATETIME_EPOCH_DAYS);
    let ms = (u64::from(dt.ticks()) * 10 + 1) / 3;
    let date = u32::try_from(days).ok().and_then(Date::from_days).unwrap_or(Date::DEFAULT);
    DateTime2::new(date, Time::from_ticks(ms * 10_000).unwrap_or(Time::MIDNIGHT))
}

/// A date argument as its kind and moment. Text reads as DATETIME (SQL Server's type for a
/// string in DATEADD) but keeps all seven fractional digits, or as DATETIMEOFFSET when it ends
/// in an offset; numbers are days since 1900-01-01. `None` for NULL.
fn moment_arg(
    v: &Value,
    func: &str,
    position: usize,
) -> Result<Option<(Kind, DateTime2)>, SqlError> {
    Ok(Some(match v {
        Value::Null => return Ok(None),
        Value::Date(d) => (Kind::Date, DateTime2::new(*d, Time::MIDNIGHT)),
        Value::Time(t) => (Kind::Time, DateTime2::new(Date::DEFAULT, *t)),
        Value::DateTime(dt) => (Kind::DateTime, datetime_moment(*dt)),
        Value::DateTime2(dt) => (Kind::DateTime2, *dt),
        Value::DateTimeOffset(dto) => (Kind::DateTimeOffset(dto.offset_minutes()), dto.local()),
        Value::Str(s) | Value::NStr(s)
            if matches!(DateTimeOffset::split_offset(s.trim()), Ok(Some(_))) =>
        {
            match convert(v.clone(), SqlType::DateTimeOffset(7), None)? {
                Value::DateTimeOffset(dto) => {
                    (Kind::DateTimeOffset(dto.offset_minutes()), dto.local())
                }
                _ => return Ok(None),
            }
        }
        Value::Str(s) | Value::NStr(s) => (Kind::DateTime, parse_temporal_text(s, None)?.moment()),
        n if n.is_numeric() => match convert(v.clone(), SqlType::DateTime, None)? {
            Value::DateTime(dt) => (Kind::DateTime, datetime_moment(dt)),
            _ => return Ok(None),
        },
        other => return Err(invalid_argument(value_label(other), position, func)),
    }))
}

/// Msg 8116: an argument of a type the function does not take.
fn invalid_argument(type_name: &str, position: usize, func: &str) -> SqlError {
    SqlError::new(
        8116,
        format!(
            "Argument data type {type_name} is invalid for argument {position} of {func} function."
        ),
    )
}

/// An integer argument (decimals truncate, text converts); `None` for NULL.
fn int_arg(v: Value) -> Result<Option<i64>, SqlError> {
    match convert(v, SqlType::BigInt, None)? {
        Value::BigInt(n) => Ok(Some(n)),
        _ => Ok(None),
    }
}

fn overflow_adding(kind: Kind) -> SqlError {
    SqlError::new(517, format!("Adding a value to a '{}' column caused an overflow.", kind.name()))
}

/// GETDATE(), CURRENT_TIMESTAMP: local time as DATETIME.
pub(crate) fn getdate(_: Vec<Value>) -> Result<Value, SqlError> {
    as_datetime(now_local())
}

/// GETUTCDATE(): UTC as DATETIME.
pub(crate) fn getutcdate(_: Vec<Value>) -> Result<Value, SqlError> {
    as_datetime(now_utc())
}

fn as_datetime(moment: DateTime2) -> Result<Value, SqlError> {
    DateTime::from_datetime2(moment)
        .map(Value::DateTime)
        .ok_or_else(|| SqlError::overflow("datetime"))
}

/// SYSDATETIME(): local time as DATETIME2(7).
pub(crate) fn sysdatetime(_: Vec<Value>) -> Result<Value, SqlError> {
    Ok(Value::DateTime2(now_local()))
}

/// SYSUTCDATETIME(): UTC as DATETIME2(7).
pub(crate) fn sysutcdatetime(_: Vec<Value>) -> Result<Value, SqlError> {
    Ok(Value::DateTime2(now_utc()))
}

/// SYSDATETIMEOFFSET(): now, as DATETIMEOFFSET(7) at the machine's offset from UTC.
pub(crate) fn sysdatetimeoffset(_: Vec<Value>) -> Result<Value, SqlError> {
    let (utc, local) = (now_utc(), now_local());
    let minutes = (total_ticks(local) - total_ticks(utc)) / MINUTE;
    // A real zone's offset is within ±14:00; anything else (a clock read across a change)
    // falls back to UTC rather than fail the query.
    let offset = i16::try_from(minutes).unwrap_or(0);
    Ok(Value::DateTimeOffset(
        DateTimeOffset::from_utc(utc, offset)
            .or_else(|| DateTimeOffset::from_utc(utc, 0))
            .ok_or_else(|| SqlError::overflow("datetimeoffset"))?,
    ))
}

/// A time zone argument of TODATETIMEOFFSET or SWITCHOFFSET: a string `[+|-]hh:mm` or an
/// integer of minutes; Msg 9812 outside ±14:00 or in another form. `None` for NULL.
fn offset_arg(v: &Value, func: &str) -> Result<Option<i16>, SqlError> {
    let invalid = || {
        SqlError::new(9812, format!("The timezone provided to builtin function {func} is invalid."))
    };
    let minutes = match v {
        Value::Null => return Ok(None),
        Value::Str(s) | Value::NStr(s) => {
            let s = s.trim();
            // A bare offset is the suffix of a date and time with an empty date part.
            match DateTimeOffset::split_offset(s) {
                Ok(Some(("", offset))) if !s.ends_with(['Z', 'z']) => i64::from(offset),
                _ => return Err(invalid()),
            }
        }
        n if n.is_exact_numeric() => int_arg(n.clone())?.unwrap_or(0),
        _ => return Err(invalid()),
    };
    match i16::try_from(minutes) {
        Ok(m) if m.abs() <= MAX_OFFSET_MINUTES => Ok(Some(m)),
        _ => Err(invalid()),
    }
}

/// TODATETIMEOFFSET(expression, time_zone): the expression's local date and time (a
/// DATETIMEOFFSET's offset is dropped) at the given offset, as DATETIMEOFFSET(7).
pub(crate) fn todatetimeoffset(args: Vec<Value>) -> Result<Value, SqlError> {
    let (date, zone, _) = three(args);
    let Some((kind, moment)) = moment_arg(&date, "todatetimeoffset", 1)? else {
        return Ok(Value::Null);
    };
    if kind == Kind::Time {
        return Err(invalid_argument(kind.name(), 1, "todatetimeoffset"));
    }
    let Some(offset) = offset_arg(&zone, "todatetimeoffset")? else {
        return Ok(Value::Null);
    };
    DateTimeOffset::from_local(moment, offset)
        .map(Value::DateTimeOffset)
        .ok_or_else(|| SqlError::overflow("datetimeoffset"))
}

/// SWITCHOFFSET(datetimeoffset, time_zone): the same moment shown at another offset.
pub(crate) fn switchoffset(args: Vec<Value>) -> Result<Value, SqlError> {
    let (date, zone, _) = three(args);
    let Some(arg) = moment_arg(&date, "switchoffset", 1)? else {
        return Ok(Value::Null);
    };
    if matches!(arg.0, Kind::Time | Kind::Date) {
        return Err(invalid_argument(arg.0.name(), 1, "switchoffset"));
    }
    let Some(offset) = offset_arg(&zone, "switchoffset")? else {
        return Ok(Value::Null);
    };
    DateTimeOffset::from_utc(utc_of(arg), offset)
        .map(Value::DateTimeOffset)
        .ok_or_else(|| SqlError::overflow("datetimeoffset"))
}

fn three(args: Vec<Value>) -> (Value, Value, Value) {
    let mut it = args.into_iter();
    let mut next = || it.next().unwrap_or(Value::Null);
    (next(), next(), next())
}

/// DATEADD(part, number, date): the result has the date's type (DATETIME for text). Months
/// and years keep the day, cut to the end of a shorter month; TIME wraps around midnight;
/// leaving 0001..9999 (1753.. for DATETIME) is Msg 517.
pub(crate) fn dateadd(args: Vec<Value>) -> Result<Value, SqlError> {
    let (part, number, date) = three(args);
    let part = Part::parse(&part, "dateadd")?;
    let Some(n) = int_arg(number)? else {
        return Ok(Value::Null);
    };
    let n = i64::from(i32::try_from(n).map_err(|_| SqlError::overflow("int"))?);
    let Some((kind, moment)) = moment_arg(&date, "dateadd", 3)? else {
        return Ok(Value::Null);
    };
    kind.check(part, "dateadd")?;
    let with_date = |d: Option<Date>| d.map(|d| DateTime2::new(d, moment.time));
    let ticks = |unit: i128| -> i128 { i128::from(n) * unit };
    let delta = match part {
        Part::Year => return finish_add(kind, with_date(add_months(moment.date, n * 12))),
        Part::Quarter => return finish_add(kind, with_date(add_months(moment.date, n * 3))),
        Part::Month => return finish_add(kind, with_date(add_months(moment.date, n))),
        Part::DayOfYear | Part::Day | Part::Weekday => {
            return finish_add(kind, with_date(add_days(moment.date, n)))
        }
        Part::Week => return finish_add(kind, with_date(add_days(moment.date, n * 7))),
        Part::Hour => ticks(HOUR),
        Part::Minute => ticks(MINUTE),
        Part::Second => ticks(SECOND),
        Part::Millisecond => ticks(MILLISECOND),
        Part::Microsecond => ticks(MICROSECOND),
        // 100 ns is the finest unit: nanoseconds round to it, half away from zero.
        Part::Nanosecond => (i128::from(n) + 50 * i128::from(n.signum())) / 100,
        // Neither parses for DATEADD.
        Part::IsoWeek | Part::TzOffset => 0,
    };
    if kind == Kind::Time {
        let per_day = i128::from(TICKS_PER_DAY);
        let t = (i128::from(moment.time.ticks()) + delta).rem_euclid(per_day);
        // rem_euclid is within 0..TICKS_PER_DAY.
        return Ok(Value::Time(Time::from_ticks(t as u64).unwrap_or(Time::MIDNIGHT)));
    }
    finish_add(kind, add_ticks(moment, delta))
}

fn finish_add(kind: Kind, moment: Option<DateTime2>) -> Result<Value, SqlError> {
    let moment = moment.ok_or_else(|| overflow_adding(kind))?;
    Ok(match kind {
        Kind::Date => Value::Date(moment.date),
        Kind::Time => Value::Time(moment.time),
        Kind::DateTime2 => Value::DateTime2(moment),
        Kind::DateTimeOffset(offset) => Value::DateTimeOffset(
            DateTimeOffset::from_local(moment, offset).ok_or_else(|| overflow_adding(kind))?,
        ),
        Kind::DateTime => {
            Value::DateTime(DateTime::from_datetime2(moment).ok_or_else(|| overflow_adding(kind))?)
        }
    })
}

/// Sunday-based week number since 0001-01-01 (its first Sunday is day 6).
fn sunday_weeks(date: Date) -> i128 {
    (i128::from(date.days()) + 1).div_euclid(7)
}

/// DATEDIFF(part, start, end) and DATEDIFF_BIG: the number of datepart boundaries crossed
/// from start to end (so one year between 2023-12-31 and 2024-01-01), as INT (Msg 535 when it
/// does not fit) or BIGINT.
pub(crate) fn datediff(args: Vec<Value>, big: bool) -> Result<Value, SqlError> {
    let func = if big { "datediff_big" } else { "datediff" };
    let (part, start, end) = three(args);
    let part = Part::parse(&part, func)?;
    let (Some(a), Some(b)) = (moment_arg(&start, func, 2)?, moment_arg(&end, func, 3)?) else {
        return Ok(Value::Null);
    };
    let (a, b) = (utc_of(a), utc_of(b));
    let (ya, ma, _) = a.date.ymd();
    let (yb, mb, _) = b.date.ymd();
    let (ya, yb) = (i128::from(ya), i128::from(yb));
    let (ma, mb) = (i128::from(ma), i128::from(mb));
    let floor_diff = |unit: i128| total_ticks(b).div_euclid(unit) - total_ticks(a).div_euclid(unit);
    let diff = match part {
        Part::Year => yb - ya,
        Part::Quarter => (yb * 4 + (mb - 1) / 3) - (ya * 4 + (ma - 1) / 3),
        Part::Month => (yb * 12 + mb) - (ya * 12 + ma),
        Part::DayOfYear | Part::Day | Part::Weekday => {
            i128::from(b.date.days()) - i128::from(a.date.days())
        }
        Part::Week => sunday_weeks(b.date) - sunday_weeks(a.date),
        Part::Hour => floor_diff(HOUR),
        Part::Minute => floor_diff(MINUTE),
        Part::Second => floor_diff(SECOND),
        Part::Millisecond => floor_diff(MILLISECOND),
        Part::Microsecond => floor_diff(MICROSECOND),
        Part::Nanosecond | Part::IsoWeek | Part::TzOffset => {
            (total_ticks(b) - total_ticks(a)) * 100
        }
    };
    let overflow = || {
        SqlError::new(
            535,
            format!(
                "The {func} function resulted in an overflow. The number of dateparts separating \
                 two date/time instances is too large. Try to use {func} with a less precise \
                 datepart."
            ),
        )
    };
    if big {
        i64::try_from(diff).map(Value::BigInt).map_err(|_| overflow())
    } else {
        i32::try_from(diff).map(Value::Int).map_err(|_| overflow())
    }
}

/// ISO 8601 week of the year: weeks start on Monday, week 1 holds the year's first Thursday.
fn iso_week(date: Date) -> i64 {
    let monday_based = i64::from((weekday(date) + 6) % 7);
    let thursday = i64::from(date.days()) - monday_based + 3;
    // Thursday of the week of 0001-01-01 (a Monday) is day 3; of 9999-12-31 (a Friday) is
    // before it: always a valid date.
    let thursday = u32::try_from(thursday).ok().and_then(Date::from_days).unwrap_or(date);
    let (year, _, _) = thursday.ymd();
    let jan1 = Date::from_ymd(year, 1, 1).map_or(0, |d| i64::from(d.days()));
    (i64::from(thursday.days()) - jan1) / 7 + 1
}

/// A date argument's moment in UTC: a DATETIMEOFFSET's local time moved back by its offset,
/// any other kind's moment as it is.
fn utc_of((kind, moment): (Kind, DateTime2)) -> DateTime2 {
    match kind {
        Kind::DateTimeOffset(offset) => {
            DateTimeOffset::from_local(moment, offset).map_or(moment, DateTimeOffset::utc)
        }
        _ => moment,
    }
}

/// The offset of a date argument of this kind, in minutes: 0 unless it is a DATETIMEOFFSET.
fn offset_of(kind: Kind) -> i16 {
    match kind {
        Kind::DateTimeOffset(offset) => offset,
        _ => 0,
    }
}

/// The value of a datepart of a moment (TZOFFSET is the caller's).
fn part_value(part: Part, m: DateTime2) -> i64 {
    let (y, mo, d) = m.date.ymd();
    let jan1 = Date::from_ymd(y, 1, 1).map_or(0, |j| i64::from(j.days()));
    let day_of_year = i64::from(m.date.days()) - jan1 + 1;
    let (h, mi, s, fraction) = m.time.hms();
    match part {
        Part::Year => i64::from(y),
        Part::Quarter => i64::from((mo - 1) / 3 + 1),
        Part::Month => i64::from(mo),
        Part::DayOfYear => day_of_year,
        Part::Day => i64::from(d),
        Part::Week => {
            let first = Date::from_ymd(y, 1, 1).map_or(0, days_into_week);
            (day_of_year - 1 + i64::from(first)) / 7 + 1
        }
        Part::Weekday => i64::from(days_into_week(m.date)) + 1,
        Part::Hour => i64::from(h),
        Part::Minute => i64::from(mi),
        Part::Second => i64::from(s),
        Part::Millisecond => i64::from(fraction / 10_000),
        Part::Microsecond => i64::from(fraction / 10),
        Part::Nanosecond => i64::from(fraction) * 100,
        Part::IsoWeek => iso_week(m.date),
        Part::TzOffset => 0,
    }
}

/// How many days `date` is past the first day of its week under `SET DATEFIRST`: 0 to 6.
pub(crate) fn days_into_week(date: Date) -> u32 {
    let first = u32::from(settings::current().date_first) % 7;
    (weekday(date) + 7 - first) % 7
}

/// DATEPART(part, date): an INT. Week and weekday count from the DATEFIRST day.
pub(crate) fn datepart(args: Vec<Value>) -> Result<Value, SqlError> {
    let (part, date, _) = three(args);
    let part = Part::parse(&part, "datepart")?;
    let Some((kind, m)) = moment_arg(&date, "datepart", 2)? else {
        return Ok(Value::Null);
    };
    kind.check(part, "datepart")?;
    if part == Part::TzOffset {
        return Ok(Value::Int(i32::from(offset_of(kind))));
    }
    // Every datepart value is below 10^9.
    Ok(Value::Int(part_value(part, m) as i32))
}

/// DATENAME(part, date): NVARCHAR; month and weekday by name, other parts as numbers.
pub(crate) fn datename(args: Vec<Value>) -> Result<Value, SqlError> {
    let (part, date, _) = three(args);
    let part = Part::parse(&part, "datename")?;
    let Some((kind, m)) = moment_arg(&date, "datename", 2)? else {
        return Ok(Value::Null);
    };
    kind.check(part, "datename")?;
    let text = match part {
        Part::Month => {
            settings::current().language.months[usize::from(m.date.ymd().1) - 1].to_string()
        }
        Part::Weekday => settings::current().language.day_name(weekday(m.date)).to_string(),
        Part::TzOffset => offset_text(offset_of(kind)),
        other => part_value(other, m).to_string(),
    };
    Ok(Value::NStr(text))
}

/// YEAR, MONTH and DAY: DATEPART without the type check (the year of a TIME is 1900).
pub(crate) fn year_month_day(args: Vec<Value>, part: &str) -> Result<Value, SqlError> {
    let (date, _, _) = three(args);
    let (func, part) = match part {
        "YEAR" => ("year", Part::Year),
        "MONTH" => ("month", Part::Month),
        _ => ("day", Part::Day),
    };
    let Some((_, m)) = moment_arg(&date, func, 1)? else {
        return Ok(Value::Null);
    };
    // Year, month and day fit an i32.
    Ok(Value::Int(part_value(part, m) as i32))
}

/// EOMONTH(date [, months]): the DATE of the last day of the month, `months` later.
pub(crate) fn eomonth(args: Vec<Value>) -> Result<Value, SqlError> {
    let (date, months, _) = three(args);
    let Some((kind, m)) = moment_arg(&date, "eomonth", 1)? else {
        return Ok(Value::Null);
    };
    if kind == Kind::Time {
        return Err(invalid_argument(kind.name(), 1, "eomonth"));
    }
    let months = if months.is_null() { 0 } else { int_arg(months)?.unwrap_or(0) };
    let (y, mo, _) = m.date.ymd();
    let first = Date::from_ymd(y, mo, 1).unwrap_or(m.date);
    let moved = add_months(first, months).ok_or_else(|| overflow_adding(Kind::Date))?;
    let (y, mo, _) = moved.ymd();
    Date::from_ymd(y, mo, days_in_month(y, mo))
        .map(Value::Date)
        .ok_or_else(|| overflow_adding(Kind::Date))
}

/// DATEFROMPARTS(year, month, day): a DATE, Msg 289 for an impossible one.
pub(crate) fn datefromparts(args: Vec<Value>) -> Result<Value, SqlError> {
    let (y, m, d) = three(args);
    let (Some(y), Some(m), Some(d)) = (int_arg(y)?, int_arg(m)?, int_arg(d)?) else {
        return Ok(Value::Null);
    };
    let date = match (u16::try_from(y), u8::try_from(m), u8::try_from(d)) {
        (Ok(y), Ok(m), Ok(d)) => Date::from_ymd(y, m, d),
        _ => None,
    };
    date.map(Value::Date).ok_or_else(|| {
        SqlError::new(
            289,
            "Cannot construct data type date, some of the arguments have values which are not \
             valid.",
        )
    })
}
