//! DATE, TIME, DATETIME2, DATETIMEOFFSET and DATETIME values, their calendar arithmetic, parsing and display.
//!
//! Each value is a count in SQL Server's own unit, so that it is stored, compared and sent on
//! the wire without conversion:
//!
//! * [`Date`]: days since 0001-01-01 in the proleptic Gregorian calendar, 0..=3,652,058
//!   (9999-12-31).
//! * [`Time`]: 100 ns ticks since midnight, below 864,000,000,000. A TIME(s) column holds
//!   multiples of 10^(7-s) ticks; the value does not carry the scale, the column type does.
//! * [`DateTime2`]: a `Date` and a `Time`.
//! * [`DateTimeOffset`]: a `DateTime2` in UTC and the offset, in minutes, it was written at.
//! * [`DateTime`]: SQL Server's legacy DATETIME, days since 1900-01-01 (negative back to
//!   1753-01-01) and 1/300 s ticks since midnight. Converting to it rounds to the nearest tick,
//!   which is why DATETIME shows milliseconds ending in 0, 3 or 7.
//!
//! The calendar conversion is the era-based algorithm (400-year eras of 146,097 days, years
//! counted from March so that the leap day ends the year), written for non-negative day
//! numbers only, which is all 0001..9999 needs.
//!
//! Parsing accepts the language-independent forms SQL Server accepts: `YYYY-MM-DD`,
//! `YYYYMMDD`, optionally followed by a space or `T` and `hh:mm[:ss[.fffffff]]`, or a time
//! alone. As in SQL Server, a missing date is 1900-01-01 and a missing time is midnight, and
//! DATETIME takes at most three fractional digits; the other types take more than seven and
//! round them to the 100 ns tick. Display uses SQL Server's default output
//! forms (`2024-01-31`, `12:34:56.1234567`, `2024-01-31 12:34:56.790`).

use std::fmt;

use super::sql_type::MAX_TIME_SCALE;
use super::value::ParseError;

/// Days from 0001-01-01 to 9999-12-31.
pub const MAX_DATE_DAYS: u32 = 3_652_058;
/// 100 ns ticks per second.
pub const TICKS_PER_SECOND: u64 = 10_000_000;
/// 100 ns ticks per day.
pub const TICKS_PER_DAY: u64 = 86_400 * TICKS_PER_SECOND;
/// 1900-01-01, DATETIME's day 0, in days since 0001-01-01.
pub const DATETIME_EPOCH_DAYS: u32 = 693_595;
/// DATETIME's first day, 1753-01-01, in days since 1900-01-01.
pub const DATETIME_MIN_DAYS: i32 = -53_690;
/// DATETIME's last day, 9999-12-31, in days since 1900-01-01.
pub const DATETIME_MAX_DAYS: i32 = 2_958_463;
/// DATETIME ticks (1/300 s) per day.
pub const DATETIME_TICKS_PER_DAY: u32 = 300 * 86_400;

/// 100 ns ticks in one unit of a TIME(scale) column: 10^(7 - scale).
pub(crate) fn ticks_per_unit(scale: u8) -> u64 {
    10u64.pow(u32::from(MAX_TIME_SCALE - scale.min(MAX_TIME_SCALE)))
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days from 0001-01-01 to a valid date (year >= 1).
fn days_from_civil(year: u32, month: u32, day: u32) -> u32 {
    // Years start on March 1st, so January and February belong to the previous year; year 1's
    // January then falls in year 0, hence the 306-day shift (March 1st of year 0 to January
    // 1st of year 1) at the end.
    let y = if month <= 2 { year - 1 } else { year };
    let (era, year_of_era) = (y / 400, y % 400);
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 306
}

/// The date `days` after 0001-01-01, as (year, month, day).
fn civil_from_days(days: u32) -> (u32, u32, u32) {
    let z = days + 306;
    let (era, day_of_era) = (z / 146_097, z % 146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = era * 400 + year_of_era + u32::from(month <= 2);
    (year, month, day)
}

/// A DATE: days since 0001-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    days: u32,
}

impl Date {
    /// 0001-01-01.
    pub const MIN: Date = Date { days: 0 };
    /// 9999-12-31.
    pub const MAX: Date = Date { days: MAX_DATE_DAYS };
    /// 1900-01-01, the default date of SQL Server's conversions.
    pub const DEFAULT: Date = Date { days: DATETIME_EPOCH_DAYS };

    /// The date `days` after 0001-01-01, if at most 9999-12-31.
    pub fn from_days(days: u32) -> Option<Date> {
        (days <= MAX_DATE_DAYS).then_some(Date { days })
    }

    /// Days since 0001-01-01.
    pub fn days(self) -> u32 {
        self.days
    }

    /// The date, if it exists in 0001-01-01..=9999-12-31.
    pub fn from_ymd(year: u16, month: u8, day: u8) -> Option<Date> {
        let (y, m, d) = (u32::from(year), u32::from(month), u32::from(day));
        ((1..=9999).contains(&y) && d >= 1 && d <= days_in_month(y, m))
            .then(|| Date { days: days_from_civil(y, m, d) })
    }

    /// (year, month, day).
    pub fn ymd(self) -> (u16, u8, u8) {
        let (y, m, d) = civil_from_days(self.days);
        // In range by the invariant: year <= 9999, month <= 12, day <= 31.
        (y as u16, m as u8, d as u8)
    }

    /// Parses a date, or a date and time whose time is ignored (`'2024-01-31 12:00'` is
    /// 2024-01-31, as in SQL Server); a time alone or an empty string is 1900-01-01.
    pub fn parse(text: &str) -> Result<Date, ParseError> {
        Ok(parse_temporal(text)?.date.unwrap_or(Date::DEFAULT))
    }
}

impl fmt::Display for Date {
    /// `YYYY-MM-DD`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

/// A TIME: 100 ns ticks since midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    ticks: u64,
}

impl Time {
    /// 00:00:00.
    pub const MIDNIGHT: Time = Time { ticks: 0 };

    /// The time `ticks` × 100 ns after midnight, if before the next midnight.
    pub fn from_ticks(ticks: u64) -> Option<Time> {
        (ticks < TICKS_PER_DAY).then_some(Time { ticks })
    }

    /// `hour:minute:second` plus `fraction` 100 ns ticks (below 10^7), if valid.
    pub fn from_hms(hour: u8, minute: u8, second: u8, fraction: u32) -> Option<Time> {
        (hour < 24 && minute < 60 && second < 60 && u64::from(fraction) < TICKS_PER_SECOND).then(
            || Time {
                ticks: (u64::from(hour) * 3600 + u64::from(minute) * 60 + u64::from(second))
                    * TICKS_PER_SECOND
                    + u64::from(fraction),
            },
        )
    }

    /// 100 ns ticks since midnight.
    pub fn ticks(self) -> u64 {
        self.ticks
    }

    /// (hour, minute, second, 100 ns ticks into the second).
    pub fn hms(self) -> (u8, u8, u8, u32) {
        let seconds = self.ticks / TICKS_PER_SECOND;
        // In range by the invariant: seconds < 86,400.
        (
            (seconds / 3600) as u8,
            (seconds / 60 % 60) as u8,
            (seconds % 60) as u8,
            (self.ticks % TICKS_PER_SECOND) as u32,
        )
    }

    /// Whether the value has no digit beyond `scale` fractional-second digits, i.e. fits a
    /// TIME(scale) column as it is.
    pub fn is_at_scale(self, scale: u8) -> bool {
        self.ticks.is_multiple_of(ticks_per_unit(scale))
    }

    /// The time rounded (half up) to `scale` fractional-second digits, and whether rounding
    /// went past midnight (the time then wraps to the next day's start, as SQL Server's
    /// conversion to TIME does; DATETIME2 carries the day instead).
    pub fn round_to_scale(self, scale: u8) -> (Time, bool) {
        let unit = ticks_per_unit(scale);
        let rounded = (self.ticks + unit / 2) / unit * unit;
        if rounded >= TICKS_PER_DAY {
            (Time { ticks: rounded - TICKS_PER_DAY }, true)
        } else {
            (Time { ticks: rounded }, false)
        }
    }

    /// Parses a time, or a date and time whose date is ignored; a date alone or an empty
    /// string is midnight. Seven fractional digits are kept exactly, more round to seven (round with
    /// [`Time::round_to_scale`] for a column of smaller scale).
    pub fn parse(text: &str) -> Result<Time, ParseError> {
        Ok(parse_temporal(text)?.time.map_or(Time::MIDNIGHT, |(time, _)| time))
    }

    /// Displays with `scale` fractional digits (`hh:mm:ss` for 0); digits beyond the scale
    /// are cut, so round first if the value is not at the scale.
    pub fn display(self, scale: u8) -> TimeDisplay {
        TimeDisplay { time: self, scale: scale.min(MAX_TIME_SCALE) }
    }
}

impl fmt::Display for Time {
    /// `hh:mm:ss.fffffff`, SQL Server's form for TIME(7).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.display(MAX_TIME_SCALE).fmt(f)
    }
}

/// A [`Time`] displayed at a scale: see [`Time::display`].
#[derive(Debug, Clone, Copy)]
pub struct TimeDisplay {
    time: Time,
    scale: u8,
}

impl fmt::Display for TimeDisplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (h, m, s, fraction) = self.time.hms();
        write!(f, "{h:02}:{m:02}:{s:02}")?;
        if self.scale > 0 {
            let digits = u64::from(fraction) / ticks_per_unit(self.scale);
            write!(f, ".{digits:0width$}", width = usize::from(self.scale))?;
        }
        Ok(())
    }
}

/// A DATETIME2: a date and a time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime2 {
    /// The day.
    pub date: Date,
    /// The time of day.
    pub time: Time,
}

impl DateTime2 {
    /// The moment `time` into `date`.
    pub fn new(date: Date, time: Time) -> DateTime2 {
        DateTime2 { date, time }
    }

    /// Rounded (half up) to `scale` fractional digits, carrying into the next day; `None` if
    /// that passes 9999-12-31.
    pub fn round_to_scale(self, scale: u8) -> Option<DateTime2> {
        let (time, next_day) = self.time.round_to_scale(scale);
        let date = if next_day { Date::from_days(self.date.days + 1)? } else { self.date };
        Some(DateTime2 { date, time })
    }

    /// Parses a date and time; a missing date is 1900-01-01 and a missing time midnight.
    pub fn parse(text: &str) -> Result<DateTime2, ParseError> {
        let parsed = parse_temporal(text)?;
        Ok(DateTime2 {
            date: parsed.date.unwrap_or(Date::DEFAULT),
            time: parsed.time.map_or(Time::MIDNIGHT, |(time, _)| time),
        })
    }

    /// Displays as `YYYY-MM-DD hh:mm:ss[.f…]` with `scale` fractional digits.
    pub fn display(self, scale: u8) -> DateTime2Display {
        DateTime2Display { value: self, scale: scale.min(MAX_TIME_SCALE) }
    }
}

impl fmt::Display for DateTime2 {
    /// `YYYY-MM-DD hh:mm:ss.fffffff`, SQL Server's form for DATETIME2(7).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.display(MAX_TIME_SCALE).fmt(f)
    }
}

/// A [`DateTime2`] displayed at a scale: see [`DateTime2::display`].
#[derive(Debug, Clone, Copy)]
pub struct DateTime2Display {
    value: DateTime2,
    scale: u8,
}

impl fmt::Display for DateTime2Display {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.value.date, self.value.time.display(self.scale))
    }
}

/// The largest time zone offset of a DATETIMEOFFSET, in minutes: ±14:00.
pub const MAX_OFFSET_MINUTES: i16 = 14 * 60;

/// A DATETIMEOFFSET: a moment, kept in UTC, and the offset from UTC in minutes of the zone it
/// was written in (−840..=840). As in SQL Server, values compare, sort and index by their UTC
/// moment alone, so `12:00 +02:00` equals `10:00 +00:00`; the offset only changes how the
/// value displays and what its local parts (DATEPART, a conversion to DATETIME2) are.
///
/// Invariant: both the UTC moment and the local one (UTC + offset) are within
/// 0001-01-01..=9999-12-31.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTimeOffset {
    utc: DateTime2,
    offset: i16,
}

/// `moment` moved by `minutes`; `None` if that leaves 0001-01-01..=9999-12-31.
fn shift_minutes(moment: DateTime2, minutes: i64) -> Option<DateTime2> {
    let per_day = TICKS_PER_DAY as i128;
    let total = i128::from(moment.date.days) * per_day
        + i128::from(moment.time.ticks)
        + i128::from(minutes) * 60 * i128::from(TICKS_PER_SECOND);
    if total < 0 {
        return None;
    }
    let date = Date::from_days(u32::try_from(total / per_day).ok()?)?;
    // The remainder is below a day's ticks, which fit a u64.
    Some(DateTime2 { date, time: Time { ticks: (total % per_day) as u64 } })
}

impl DateTimeOffset {
    /// The moment `utc` shown at `offset` minutes from UTC; `None` if the offset is beyond
    /// ±14:00 or the local time falls outside the date range.
    pub fn from_utc(utc: DateTime2, offset: i16) -> Option<DateTimeOffset> {
        (offset.abs() <= MAX_OFFSET_MINUTES && shift_minutes(utc, i64::from(offset)).is_some())
            .then_some(DateTimeOffset { utc, offset })
    }

    /// The local time `local` at `offset` minutes from UTC; `None` if the offset is beyond
    /// ±14:00 or the UTC moment falls outside the date range.
    pub fn from_local(local: DateTime2, offset: i16) -> Option<DateTimeOffset> {
        if offset.abs() > MAX_OFFSET_MINUTES {
            return None;
        }
        Some(DateTimeOffset { utc: shift_minutes(local, -i64::from(offset))?, offset })
    }

    /// The moment in UTC.
    pub fn utc(self) -> DateTime2 {
        self.utc
    }

    /// The offset from UTC, in minutes (east positive).
    pub fn offset_minutes(self) -> i16 {
        self.offset
    }

    /// The local date and time: the UTC moment plus the offset.
    pub fn local(self) -> DateTime2 {
        // In range by the invariant.
        shift_minutes(self.utc, i64::from(self.offset)).unwrap_or(self.utc)
    }

    /// Rounded (half up) to `scale` fractional digits; `None` if that passes the range.
    /// Offsets are whole minutes, so rounding the UTC moment rounds the local one alike.
    pub fn round_to_scale(self, scale: u8) -> Option<DateTimeOffset> {
        DateTimeOffset::from_utc(self.utc.round_to_scale(scale)?, self.offset)
    }

    /// Parses a date and time followed by an optional offset: ` +hh:mm`, `-hh:mm` or `Z`
    /// (ISO 8601's UTC). Without one the offset is +00:00; a missing date is 1900-01-01.
    pub fn parse(text: &str) -> Result<DateTimeOffset, ParseError> {
        let text = text.trim();
        let (moment, offset) = match DateTimeOffset::split_offset(text)? {
            Some((rest, offset)) => (rest.trim_end(), offset),
            None => (text, 0),
        };
        let local = DateTime2::parse(moment)?;
        DateTimeOffset::from_local(local, offset).ok_or(ParseError::OutOfRange)
    }

    /// Displays as `YYYY-MM-DD hh:mm:ss[.f…] ±hh:mm`, local time, with `scale` fractional
    /// digits.
    pub fn display(self, scale: u8) -> DateTimeOffsetDisplay {
        DateTimeOffsetDisplay { value: self, scale: scale.min(MAX_TIME_SCALE) }
    }
}

impl DateTimeOffset {
    /// Splits a trailing time zone offset (`Z`, `+hh:mm`, `-hh:mm`, hours of one or two
    /// digits) off `text`: the rest and the offset in minutes, `None` if there is none, an
    /// error if it is beyond ±14:00.
    pub fn split_offset(text: &str) -> Result<Option<(&str, i16)>, ParseError> {
        if let Some(rest) = text.strip_suffix(['Z', 'z']) {
            return Ok(Some((rest, 0)));
        }
        let bytes = text.as_bytes();
        let n = bytes.len();
        let digit =
            |i: usize| bytes.get(i).filter(|b| b.is_ascii_digit()).map(|b| i16::from(b - b'0'));
        if n < 5 || bytes[n - 3] != b':' {
            return Ok(None);
        }
        let (Some(m1), Some(m2)) = (digit(n - 2), digit(n - 1)) else {
            return Ok(None);
        };
        let Some(h2) = digit(n - 4) else {
            return Ok(None);
        };
        let (hours, sign_at) = match digit(n - 5) {
            Some(h1) => (h1 * 10 + h2, n.checked_sub(6)),
            None => (h2, Some(n - 5)),
        };
        let Some(sign_at) = sign_at else {
            return Ok(None);
        };
        let sign = match bytes[sign_at] {
            b'+' => 1,
            b'-' => -1,
            _ => return Ok(None),
        };
        let minutes = m1 * 10 + m2;
        if minutes >= 60 || hours * 60 + minutes > MAX_OFFSET_MINUTES {
            return Err(ParseError::OutOfRange);
        }
        Ok(Some((&text[..sign_at], sign * (hours * 60 + minutes))))
    }
}

impl fmt::Display for DateTimeOffset {
    /// `YYYY-MM-DD hh:mm:ss.fffffff ±hh:mm`, SQL Server's form for DATETIMEOFFSET(7).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.display(MAX_TIME_SCALE).fmt(f)
    }
}

/// A [`DateTimeOffset`] displayed at a scale: see [`DateTimeOffset::display`].
#[derive(Debug, Clone, Copy)]
pub struct DateTimeOffsetDisplay {
    value: DateTimeOffset,
    scale: u8,
}

impl fmt::Display for DateTimeOffsetDisplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let zone = offset_text(self.value.offset);
        write!(f, "{} {zone}", self.value.local().display(self.scale))
    }
}

/// An offset from UTC in minutes as SQL Server writes it: `+hh:mm` or `-hh:mm`.
pub fn offset_text(minutes: i16) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    format!("{sign}{:02}:{:02}", minutes.unsigned_abs() / 60, minutes.unsigned_abs() % 60)
}

/// A DATETIME: days since 1900-01-01 and 1/300 s ticks since midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    days: i32,
    ticks: u32,
}

impl DateTime {
    /// `days` after 1900-01-01 (1753-01-01..=9999-12-31) and `ticks` 1/300 s after midnight.
    pub fn from_parts(days: i32, ticks: u32) -> Option<DateTime> {
        ((DATETIME_MIN_DAYS..=DATETIME_MAX_DAYS).contains(&days) && ticks < DATETIME_TICKS_PER_DAY)
            .then_some(DateTime { days, ticks })
    }

    /// Days since 1900-01-01.
    pub fn days(self) -> i32 {
        self.days
    }

    /// 1/300 s ticks since midnight.
    pub fn ticks(self) -> u32 {
        self.ticks
    }

    /// The nearest DATETIME (ties up, so .005 s becomes .007 and .999 s the next second), as
    /// SQL Server converts; `None` outside 1753-01-01..=9999-12-31 23:59:59.997.
    pub fn from_datetime2(value: DateTime2) -> Option<DateTime> {
        // 1/300 s = 100,000 / 3 ticks of 100 ns.
        let mut ticks = (value.time.ticks * 3 + 50_000) / 100_000;
        let mut days = i64::from(value.date.days) - i64::from(DATETIME_EPOCH_DAYS);
        if ticks >= u64::from(DATETIME_TICKS_PER_DAY) {
            ticks -= u64::from(DATETIME_TICKS_PER_DAY);
            days += 1;
        }
        DateTime::from_parts(i32::try_from(days).ok()?, u32::try_from(ticks).ok()?)
    }

    /// The same moment as a DATETIME2, to the nearest 100 ns (1/300 s is not a whole number of
    /// them: one tick is 0.0033333 s).
    pub fn to_datetime2(self) -> DateTime2 {
        // days + epoch is within 0..=MAX_DATE_DAYS and the time below a day by the invariant.
        let days = (i64::from(self.days) + i64::from(DATETIME_EPOCH_DAYS)) as u32;
        let ticks = (u64::from(self.ticks) * 100_000 + 1) / 3;
        DateTime2 { date: Date { days }, time: Time { ticks } }
    }

    /// Parses a date and time with at most three fractional digits (as SQL Server, which
    /// rejects more for DATETIME), rounding to 1/300 s.
    pub fn parse(text: &str) -> Result<DateTime, ParseError> {
        let parsed = parse_temporal(text)?;
        let (time, digits) = parsed.time.unwrap_or((Time::MIDNIGHT, 0));
        if digits > 3 {
            return Err(ParseError::Invalid);
        }
        let value = DateTime2 { date: parsed.date.unwrap_or(Date::DEFAULT), time };
        DateTime::from_datetime2(value).ok_or(ParseError::OutOfRange)
    }
}

impl fmt::Display for DateTime {
    /// `YYYY-MM-DD hh:mm:ss.mmm`, milliseconds rounded from 1/300 s as SQL Server shows them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = (i64::from(self.days) + i64::from(DATETIME_EPOCH_DAYS)) as u32;
        // Tick k is k × 10/3 ms: remainders of 1/3 round down, 2/3 up, so ms end in 0, 3, 7.
        let ms = (u64::from(self.ticks) * 10 + 1) / 3;
        let (h, m, s) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60);
        write!(f, "{} {h:02}:{m:02}:{s:02}.{:03}", Date { days }, ms % 1000)
    }
}

/// What a temporal string held: a date, and a time with its number of fractional digits.
struct Parsed {
    date: Option<Date>,
    time: Option<(Time, usize)>,
}

/// A cursor over ASCII input.
struct Cursor<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn done(&self) -> bool {
        self.pos == self.text.len()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.text.get(self.pos) == Some(&byte);
        self.pos += usize::from(hit);
        hit
    }

    /// `min..=max` decimal digits, as their value and count.
    fn digits(&mut self, min: usize, max: usize) -> Result<(u32, usize), ParseError> {
        let rest = &self.text[self.pos..];
        let count = rest.iter().take(max).take_while(|b| b.is_ascii_digit()).count();
        if count < min {
            return Err(ParseError::Invalid);
        }
        self.pos += count;
        let value = rest[..count].iter().fold(0u32, |v, b| v * 10 + u32::from(b - b'0'));
        Ok((value, count))
    }
}

/// Parses `[date][(' '+ | 'T') time]` or `time` (see the module documentation).
fn parse_temporal(text: &str) -> Result<Parsed, ParseError> {
    let mut c = Cursor { text: text.trim().as_bytes(), pos: 0 };
    let leading_digits = c.text.iter().take_while(|b| b.is_ascii_digit()).count();
    let mut date = None;
    if leading_digits == 8 || (leading_digits == 4 && c.text.get(4) == Some(&b'-')) {
        let (year, month, day) = if leading_digits == 8 {
            (c.digits(4, 4)?.0, c.digits(2, 2)?.0, c.digits(2, 2)?.0)
        } else {
            let year = c.digits(4, 4)?.0;
            c.eat(b'-');
            let month = c.digits(1, 2)?.0;
            if !c.eat(b'-') {
                return Err(ParseError::Invalid);
            }
            (year, month, c.digits(1, 2)?.0)
        };
        // Each field has at most four digits, so the narrowing cannot truncate.
        date = Some(
            Date::from_ymd(year as u16, month as u8, day as u8).ok_or(ParseError::OutOfRange)?,
        );
        if c.done() {
            return Ok(Parsed { date, time: None });
        }
        let spaces = c.text[c.pos..].iter().take_while(|b| **b == b' ').count();
        c.pos += spaces;
        if spaces == 0 && !c.eat(b'T') {
            return Err(ParseError::Invalid);
        }
    } else if c.done() {
        return Ok(Parsed { date: None, time: None });
    }
    let hour = c.digits(1, 2)?.0;
    if !c.eat(b':') {
        return Err(ParseError::Invalid);
    }
    let minute = c.digits(1, 2)?.0;
    let (mut second, mut fraction, mut digits) = (0, 0, 0);
    // Digits past the seventh (a 100 ns tick) round the value half up, as SQL Server's
    // conversion does: '…33.123456700' is '…33.1234567', '…59.99999995' the next second.
    let mut round_up = false;
    if c.eat(b':') {
        second = c.digits(1, 2)?.0;
        if c.eat(b'.') {
            (fraction, digits) = c.digits(1, usize::from(MAX_TIME_SCALE))?;
            fraction *= 10u32.pow((usize::from(MAX_TIME_SCALE) - digits) as u32);
            let extra = c.text[c.pos..].iter().take_while(|b| b.is_ascii_digit()).count();
            round_up = extra > 0 && c.text[c.pos] >= b'5';
            c.pos += extra;
            digits += extra;
        }
    }
    if !c.done() {
        return Err(ParseError::Invalid);
    }
    // Each field has at most two digits, so the narrowing cannot truncate.
    let mut time = Time::from_hms(hour as u8, minute as u8, second as u8, fraction)
        .ok_or(ParseError::OutOfRange)?;
    if round_up {
        let ticks = time.ticks + 1;
        if ticks < TICKS_PER_DAY {
            time = Time { ticks };
        } else {
            // The last tick of a day rounds to the next day's midnight; a time alone
            // counts from the default date, as a missing date does.
            time = Time::MIDNIGHT;
            let day = date.unwrap_or(Date::DEFAULT).days + 1;
            date = Some(Date::from_days(day).ok_or(ParseError::OutOfRange)?);
        }
    }
    Ok(Parsed { date, time: Some((time, digits)) })
}
