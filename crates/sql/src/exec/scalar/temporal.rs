//! Dates and times: the character forms SQL Server reads as dates, the calendar arithmetic the
//! date functions need, and the clock.
//!
//! # Accepted forms
//!
//! Besides the ISO forms (`2024-01-31`, `20240131`, `2024-01-31T10:00:00.1234567`), SQL Server
//! with its default language (us_english, `DATEFORMAT mdy`) reads numeric dates with `/`, `-`
//! or `.` in month-day-year order (`01/31/2024`, `1-31-24`), a date whose month is written out
//! (`Jan 31 2024`, `31 January 2024`, `January 31, 2024`), a time with `AM`/`PM`
//! (`10:30PM`, `10 PM`) and the `hh:mi:ss:mmm` form whose last field counts milliseconds. A
//! four-digit first field is always the year. Two-digit years follow the default "two digit
//! year cutoff" of 2049 (`49` is 2049, `50` is 1950). A `CONVERT` style can ask for day-month-
//! year or year-month-day order instead ([`DateOrder::of_style`]).

use std::time::{SystemTime, UNIX_EPOCH};

use walden_engine::types::{Date, DateTime2, ParseError, Time, TICKS_PER_DAY, TICKS_PER_SECOND};

use super::text::MONTHS;

/// The order of the fields of a numeric date such as `01/02/2024`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DateOrder {
    /// Month, day, year: us_english's default.
    Mdy,
    /// Day, month, year.
    Dmy,
    /// Year, month, day.
    Ymd,
    /// Year, day, month.
    Ydm,
    /// Month, year, day.
    Myd,
    /// Day, year, month.
    Dym,
}

impl DateOrder {
    /// The order a `CONVERT` style implies for input: the British/French, German and Italian
    /// styles are day-month-year, ANSI and Japan year-month-day, the U.S. ones month-day-year;
    /// no style (or 0 / 100, the default) reads as the session's `SET DATEFORMAT` says.
    pub(crate) fn of_style(style: Option<i32>) -> DateOrder {
        match style {
            Some(3 | 103 | 4 | 104 | 5 | 105 | 6 | 106 | 13 | 113) => DateOrder::Dmy,
            Some(2 | 102 | 11 | 111) => DateOrder::Ymd,
            None | Some(0 | 100) => super::settings::current().date_order,
            _ => DateOrder::Mdy,
        }
    }

    /// The order `SET DATEFORMAT` names (`mdy`, `dmy`, ...), case-insensitively.
    pub(crate) fn named(name: &str) -> Option<DateOrder> {
        Some(match name.to_ascii_lowercase().as_str() {
            "mdy" => DateOrder::Mdy,
            "dmy" => DateOrder::Dmy,
            "ymd" => DateOrder::Ymd,
            "ydm" => DateOrder::Ydm,
            "myd" => DateOrder::Myd,
            "dym" => DateOrder::Dym,
            _ => return None,
        })
    }

    /// The order's name, as `DBCC USEROPTIONS` and `sys.dm_exec_sessions` show it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            DateOrder::Mdy => "mdy",
            DateOrder::Dmy => "dmy",
            DateOrder::Ymd => "ymd",
            DateOrder::Ydm => "ydm",
            DateOrder::Myd => "myd",
            DateOrder::Dym => "dym",
        }
    }
}

/// What a temporal string held.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parsed {
    /// The date, if one was written.
    pub date: Option<Date>,
    /// The time, if one was written, and how many fractional-second digits it had (DATETIME
    /// refuses more than three).
    pub time: Option<(Time, usize)>,
}

impl Parsed {
    /// The moment, with SQL Server's defaults for what was not written: 1900-01-01, midnight.
    pub(crate) fn moment(self) -> DateTime2 {
        DateTime2::new(
            self.date.unwrap_or(Date::DEFAULT),
            self.time.map_or(Time::MIDNIGHT, |(t, _)| t),
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Num(&'a str),
    Word(&'a str),
    Sep(u8),
}

/// A byte of a word: an ASCII letter, or any byte of a non-ASCII character (month names such
/// as `März`). A run of them starts and ends on character boundaries.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphabetic() || b >= 0x80
}

fn tokenize(text: &str) -> Result<Vec<Tok<'_>>, ParseError> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let b = bytes[i];
        if b.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            toks.push(Tok::Num(&text[start..i]));
        } else if is_word_byte(b) {
            while i < bytes.len() && is_word_byte(bytes[i]) {
                i += 1;
            }
            toks.push(Tok::Word(&text[start..i]));
        } else if b.is_ascii_whitespace() {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            toks.push(Tok::Sep(b' '));
        } else if matches!(b, b'/' | b'-' | b'.' | b':' | b',') {
            i += 1;
            toks.push(Tok::Sep(b));
        } else {
            return Err(ParseError::Invalid);
        }
    }
    Ok(toks)
}

fn is_meridiem(t: Option<&Tok<'_>>) -> bool {
    matches!(t, Some(Tok::Word(w)) if w.eq_ignore_ascii_case("am") || w.eq_ignore_ascii_case("pm"))
}

/// Parses a date, a time, or both (see the module documentation).
pub(crate) fn parse(text: &str, order: DateOrder) -> Result<Parsed, ParseError> {
    let toks = tokenize(text.trim())?;
    // The time starts at the first number followed by `:` or by AM/PM.
    let time_start = (0..toks.len()).find(|&i| {
        matches!(toks[i], Tok::Num(_))
            && (toks.get(i + 1) == Some(&Tok::Sep(b':'))
                || is_meridiem(toks.get(i + 1))
                || (toks.get(i + 1) == Some(&Tok::Sep(b' ')) && is_meridiem(toks.get(i + 2))))
    });
    let (mut date_toks, time_toks) = match time_start {
        Some(i) => (&toks[..i], &toks[i..]),
        None => (&toks[..], &toks[toks.len()..]),
    };
    // The separator between date and time: spaces, or ISO 8601's `T`.
    while let Some((last, rest)) = date_toks.split_last() {
        match last {
            Tok::Sep(b' ') => date_toks = rest,
            Tok::Word(w) if w.eq_ignore_ascii_case("t") && time_start.is_some() => date_toks = rest,
            _ => break,
        }
    }
    let mut date = if date_toks.is_empty() { None } else { Some(parse_date(date_toks, order)?) };
    let mut time = None;
    if !time_toks.is_empty() {
        let (value, digits, next_day) = parse_time(time_toks)?;
        if next_day {
            let day = date.unwrap_or(Date::DEFAULT).days() + 1;
            date = Some(Date::from_days(day).ok_or(ParseError::OutOfRange)?);
        }
        time = Some((value, digits));
    }
    if date.is_none() && time.is_none() && !toks.is_empty() {
        return Err(ParseError::Invalid);
    }
    Ok(Parsed { date, time })
}

fn number(s: &str, max_len: usize) -> Result<u32, ParseError> {
    if s.is_empty() || s.len() > max_len {
        return Err(ParseError::Invalid);
    }
    s.parse().map_err(|_| ParseError::Invalid)
}

fn year(s: &str) -> Result<u16, ParseError> {
    let value = number(s, 4)?;
    let year = match s.len() {
        1 | 2 if value <= 49 => 2000 + value,
        1 | 2 => 1900 + value,
        4 => value,
        _ => return Err(ParseError::Invalid),
    };
    // At most 9999 here.
    Ok(year as u16)
}

/// The month a word names: an English month name or its first three letters, or a month
/// name or abbreviation of the session's language (`SET LANGUAGE Deutsch` reads `März`).
fn month_of(word: &str) -> Option<u8> {
    let english = MONTHS.iter().position(|m| {
        word.len() >= 3
            && m.len() >= word.len()
            && m[..word.len()].eq_ignore_ascii_case(word)
            && (word.len() == 3 || word.len() == m.len())
    });
    let language = super::settings::current().language;
    let lower = word.to_lowercase();
    let named = || {
        language.months.iter().chain(&language.short_months).position(|m| m.to_lowercase() == lower)
    };
    // At most 24 positions, 12 months each.
    english.or_else(|| named().map(|i| i % 12)).map(|i| i as u8 + 1)
}

fn ymd(y: u16, m: u32, d: u32) -> Result<Date, ParseError> {
    let (m, d) = (u8::try_from(m), u8::try_from(d));
    match (m, d) {
        (Ok(m), Ok(d)) => Date::from_ymd(y, m, d).ok_or(ParseError::OutOfRange),
        _ => Err(ParseError::OutOfRange),
    }
}

fn parse_date(toks: &[Tok<'_>], order: DateOrder) -> Result<Date, ParseError> {
    let has_word = toks.iter().any(|t| matches!(t, Tok::Word(_)));
    if has_word {
        return parse_named_month(toks);
    }
    match toks {
        [Tok::Num(s)] => match s.len() {
            8 => ymd(year(&s[..4])?, number(&s[4..6], 2)?, number(&s[6..], 2)?),
            6 => ymd(year(&s[..2])?, number(&s[2..4], 2)?, number(&s[4..], 2)?),
            4 => ymd(year(s)?, 1, 1),
            _ => Err(ParseError::Invalid),
        },
        [Tok::Num(a), Tok::Sep(x), Tok::Num(b), Tok::Sep(y), Tok::Num(c)]
            if x == y && matches!(x, b'/' | b'-' | b'.') =>
        {
            // A four-digit first field is the year, then month and day, whatever the order.
            let (y, m, d) = match order {
                _ if a.len() == 4 => (a, b, c),
                DateOrder::Ydm => (a, c, b),
                DateOrder::Mdy => (c, a, b),
                DateOrder::Dmy => (c, b, a),
                DateOrder::Ymd => (a, b, c),
                DateOrder::Myd => (b, a, c),
                DateOrder::Dym => (b, c, a),
            };
            ymd(year(y)?, number(m, 2)?, number(d, 2)?)
        }
        _ => Err(ParseError::Invalid),
    }
}

/// `Jan 31 2024`, `January 31, 2024`, `31 Jan 2024`, `31-Jan-2024`, `2024 Jan 31`, `Jan 2024`.
fn parse_named_month(toks: &[Tok<'_>]) -> Result<Date, ParseError> {
    let mut month = None;
    let mut month_at = 0;
    let mut nums = Vec::new();
    for t in toks {
        match t {
            Tok::Word(w) => {
                if month.is_some() {
                    return Err(ParseError::Invalid);
                }
                month = Some(month_of(w).ok_or(ParseError::Invalid)?);
                month_at = nums.len();
            }
            Tok::Num(n) => nums.push(*n),
            Tok::Sep(_) => {}
        }
    }
    let month = u32::from(month.ok_or(ParseError::Invalid)?);
    match (month_at, nums.as_slice()) {
        (0, [y]) if y.len() == 4 => ymd(year(y)?, month, 1),
        (0, [d, y]) => ymd(year(y)?, month, number(d, 2)?),
        (1, [y, d]) if y.len() == 4 => ymd(year(y)?, month, number(d, 2)?),
        (1, [d, y]) => ymd(year(y)?, month, number(d, 2)?),
        _ => Err(ParseError::Invalid),
    }
}

/// The time, its number of fractional digits, and whether rounding carried it into the next
/// day.
fn parse_time(toks: &[Tok<'_>]) -> Result<(Time, usize, bool), ParseError> {
    let mut i = 0;
    let next_num = |i: &mut usize, max_len: usize| -> Result<u32, ParseError> {
        match toks.get(*i) {
            Some(Tok::Num(s)) => {
                *i += 1;
                number(s, max_len)
            }
            _ => Err(ParseError::Invalid),
        }
    };
    let mut hour = next_num(&mut i, 2)?;
    let (mut minute, mut second, mut fraction, mut digits) = (0, 0, 0, 0);
    let mut round_up = false;
    let mut has_minutes = false;
    if toks.get(i) == Some(&Tok::Sep(b':')) {
        i += 1;
        minute = next_num(&mut i, 2)?;
        has_minutes = true;
        if toks.get(i) == Some(&Tok::Sep(b':')) {
            i += 1;
            second = next_num(&mut i, 2)?;
            match toks.get(i) {
                Some(Tok::Sep(b'.')) => {
                    i += 1;
                    let Some(Tok::Num(s)) = toks.get(i) else {
                        return Err(ParseError::Invalid);
                    };
                    i += 1;
                    digits = s.len();
                    // Digits past the seventh (a 100 ns tick) round half up, as SQL Server
                    // reads them: '11:22:33.123456700' is 11:22:33.1234567.
                    let (kept, extra) = s.split_at(s.len().min(7));
                    fraction = number(kept, 7)? * 10u32.pow(7 - kept.len() as u32);
                    if !extra.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(ParseError::Invalid);
                    }
                    round_up = extra.as_bytes().first().is_some_and(|&b| b >= b'5');
                }
                Some(Tok::Sep(b':')) => {
                    // `hh:mi:ss:mmm`: the last field counts milliseconds.
                    i += 1;
                    fraction = next_num(&mut i, 3)? * 10_000;
                    digits = 3;
                }
                _ => {}
            }
        }
    }
    if toks.get(i) == Some(&Tok::Sep(b' ')) && is_meridiem(toks.get(i + 1)) {
        i += 1;
    }
    if is_meridiem(toks.get(i)) {
        let pm = matches!(toks.get(i), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("pm"));
        if hour > 12 {
            return Err(ParseError::Invalid);
        }
        hour = hour % 12 + if pm { 12 } else { 0 };
        i += 1;
    } else if !has_minutes {
        return Err(ParseError::Invalid);
    }
    // ISO 8601's UTC designator, as in style 127.
    if matches!(toks.get(i), Some(Tok::Word(w)) if w.eq_ignore_ascii_case("z")) {
        i += 1;
    }
    if i != toks.len() {
        return Err(ParseError::Invalid);
    }
    let field = |v: u32| u8::try_from(v).map_err(|_| ParseError::OutOfRange);
    let time = Time::from_hms(field(hour)?, field(minute)?, field(second)?, fraction)
        .ok_or(ParseError::OutOfRange)?;
    if !round_up {
        return Ok((time, digits, false));
    }
    // Rounding up the day's last tick gives the next day's midnight.
    Ok(match Time::from_ticks(time.ticks() + 1) {
        Some(later) => (later, digits, false),
        None => (Time::MIDNIGHT, digits, true),
    })
}

fn is_leap(year: u16) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// Days in a month of a year (`month` in 1..=12).
pub(crate) fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 31,
    }
}

/// The date `months` months later (or earlier), the day cut to the end of a shorter month, as
/// DATEADD does (`2024-01-31` plus a month is `2024-02-29`); `None` outside 0001..9999.
pub(crate) fn add_months(date: Date, months: i64) -> Option<Date> {
    let (y, m, d) = date.ymd();
    let total = (i64::from(y) * 12 + i64::from(m) - 1).checked_add(months)?;
    let year = u16::try_from(total.div_euclid(12)).ok()?;
    // rem_euclid(12) is in 0..12.
    let month = total.rem_euclid(12) as u8 + 1;
    if !(1..=9999).contains(&year) {
        return None;
    }
    Date::from_ymd(year, month, d.min(days_in_month(year, month)))
}

/// The date `days` days later (or earlier); `None` outside 0001..9999.
pub(crate) fn add_days(date: Date, days: i64) -> Option<Date> {
    let n = i64::from(date.days()).checked_add(days)?;
    Date::from_days(u32::try_from(n).ok()?)
}

/// A moment moved by `ticks` × 100 ns; `None` outside 0001..9999.
pub(crate) fn add_ticks(moment: DateTime2, ticks: i128) -> Option<DateTime2> {
    let per_day = i128::from(TICKS_PER_DAY);
    let total = i128::from(moment.date.days()) * per_day + i128::from(moment.time.ticks()) + ticks;
    if total < 0 {
        return None;
    }
    let days = u32::try_from(total / per_day).ok()?;
    let time = Time::from_ticks(u64::try_from(total % per_day).ok()?)?;
    Some(DateTime2::new(Date::from_days(days)?, time))
}

/// 100 ns ticks since 0001-01-01 00:00.
pub(crate) fn total_ticks(moment: DateTime2) -> i128 {
    i128::from(moment.date.days()) * i128::from(TICKS_PER_DAY) + i128::from(moment.time.ticks())
}

/// Day of the week, 0 for Sunday (0001-01-01 was a Monday).
pub(crate) fn weekday(date: Date) -> u32 {
    (date.days() + 1) % 7
}

/// Days from 0001-01-01 to 1970-01-01, the Unix epoch.
const UNIX_EPOCH_DAYS: u64 = 719_162;

/// The current UTC time, to 100 ns.
pub(crate) fn now_utc() -> DateTime2 {
    // A clock before 1970 is a broken clock; it reads as the epoch.
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    utc_to_datetime2(since)
}

/// The current local time, to 100 ns: see [`to_local`].
pub(crate) fn now_local() -> DateTime2 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    utc_to_datetime2(to_local(since))
}

/// A moment, `since` the Unix epoch, moved to local time: the system time zone's offset at
/// that moment added (the zone `TZ` names, else `/etc/localtime`; UTC if neither names one),
/// which is what SQL Server's GETDATE and SYSDATETIME read from the machine they run on.
/// Moments that would fall before the epoch read as the epoch.
pub(crate) fn to_local(since: std::time::Duration) -> std::time::Duration {
    let at = i64::try_from(since.as_secs())
        .ok()
        .and_then(|secs| jiff::Timestamp::from_second(secs).ok())
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let offset = jiff::tz::TimeZone::system().to_offset(at).seconds();
    let shift = std::time::Duration::from_secs(u64::from(offset.unsigned_abs()));
    if offset >= 0 {
        since.saturating_add(shift)
    } else {
        since.saturating_sub(shift)
    }
}

/// A time since the Unix epoch as a DATETIME2, to 100 ns.
fn utc_to_datetime2(since: std::time::Duration) -> DateTime2 {
    let ticks = since.as_secs() * TICKS_PER_SECOND + u64::from(since.subsec_nanos() / 100);
    let days = UNIX_EPOCH_DAYS + ticks / TICKS_PER_DAY;
    let date = u32::try_from(days).ok().and_then(Date::from_days).unwrap_or(Date::MAX);
    let time = Time::from_ticks(ticks % TICKS_PER_DAY).unwrap_or(Time::MIDNIGHT);
    DateTime2::new(date, time)
}
