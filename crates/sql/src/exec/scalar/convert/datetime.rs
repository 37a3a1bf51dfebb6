//! Conversions to the date and time types: from text under a style (including the Hijri
//! styles 130 and 131), from numbers to DATETIME (days since 1900-01-01), and among the
//! temporal types themselves. Text that is no date is Msg 241 and a date out of the target's
//! range Msg 242.

use walden_engine::types::{
    Date, DateTime, DateTime2, DateTimeOffset, ParseError, SqlType, Time, Value,
    DATETIME_TICKS_PER_DAY, MAX_TIME_SCALE,
};

use super::super::temporal::{self, DateOrder, Parsed};
use super::super::types::value_label;
use super::numeric::{to_float, to_int};
use super::type_clash;
use crate::exec::SqlError;

/// Msg 242: `The conversion of a varchar data type to a datetime data type resulted in an
/// out-of-range value.`
pub(super) fn out_of_range(from: &str, to: &str) -> SqlError {
    SqlError::new(
        242,
        format!(
            "The conversion of a {from} data type to a {to} data type resulted in an out-of-range \
             value."
        ),
    )
}

/// Msg 241.
pub(crate) fn date_syntax_error() -> SqlError {
    SqlError::new(241, "Conversion failed when converting date and/or time from character string.")
}

/// Style 131's `d/mm/yyyy [time]` or style 130's `d month yyyy [time]` (the month's Arabic
/// name), the date in the Hijri calendar (`hijri.rs`).
fn parse_hijri_text(s: &str, style: i32) -> Result<Parsed, SqlError> {
    let s = s.trim();
    let (fields, time) = if style == 130 {
        let (day, rest) = s.split_once(char::is_whitespace).ok_or_else(date_syntax_error)?;
        let (month, rest) =
            super::super::hijri::month_prefix(rest.trim_start()).ok_or_else(date_syntax_error)?;
        let rest = rest.trim_start();
        let (year, time) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let number = |t: &str| t.parse::<u32>().map_err(|_| date_syntax_error());
        (vec![number(day)?, month, number(year)?], time)
    } else {
        let (date, time) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
        (date.split('/').filter_map(|f| f.trim().parse().ok()).collect(), time)
    };
    let [day, month, year] = fields.as_slice() else { return Err(date_syntax_error()) };
    let date = super::super::hijri::to_date(*year, *month, *day).ok_or_else(date_syntax_error)?;
    let time = match time.trim() {
        "" => None,
        t => temporal::parse(t, DateOrder::Mdy).map_err(|_| date_syntax_error())?.time,
    };
    Ok(Parsed { date: Some(date), time })
}

/// Parses date/time text for a conversion, with the field order of `style`.
pub(crate) fn parse_temporal_text(s: &str, style: Option<i32>) -> Result<Parsed, SqlError> {
    if let Some(style @ (130 | 131)) = style {
        return parse_hijri_text(s, style);
    }
    temporal::parse(s, DateOrder::of_style(style)).map_err(|_| date_syntax_error())
}

/// A date/time value (or date/time text) as a moment: a DATE at midnight, a TIME on
/// 1900-01-01, a DATETIME exactly (1/300 s to the nearest 100 ns).
pub(super) fn to_moment(
    v: &Value,
    to: &SqlType,
    style: Option<i32>,
) -> Result<DateTime2, SqlError> {
    match v {
        Value::Date(d) => Ok(DateTime2::new(*d, Time::MIDNIGHT)),
        Value::Time(t) => Ok(DateTime2::new(Date::DEFAULT, *t)),
        Value::DateTime(dt) => Ok(dt.to_datetime2()),
        Value::DateTime2(dt) => Ok(*dt),
        // Its local date and time: the offset is dropped, not applied.
        Value::DateTimeOffset(dto) => Ok(dto.local()),
        Value::Str(s) | Value::NStr(s) => parse_temporal_text(s, style).map(Parsed::moment),
        other => Err(type_clash(other, to)),
    }
}

/// A value as a DATETIMEOFFSET: text with an optional trailing offset (`+02:00`, `Z`; none is
/// +00:00), or another date/time kind's moment at +00:00.
pub(super) fn to_datetimeoffset(v: &Value, style: Option<i32>) -> Result<DateTimeOffset, SqlError> {
    let to = SqlType::DateTimeOffset(MAX_TIME_SCALE);
    let (local, offset) = match v {
        Value::DateTimeOffset(dto) => return Ok(*dto),
        Value::Str(s) | Value::NStr(s) => {
            let s = s.trim();
            let (rest, offset) = match DateTimeOffset::split_offset(s) {
                Ok(Some((rest, offset))) => (rest.trim_end(), offset),
                Ok(None) => (s, 0),
                Err(_) => return Err(date_syntax_error()),
            };
            (parse_temporal_text(rest, style)?.moment(), offset)
        }
        other => (to_moment(other, &to, style)?, 0),
    };
    DateTimeOffset::from_local(local, offset)
        .ok_or_else(|| out_of_range(value_label(v), "datetimeoffset"))
}

/// A number as a DATETIME: whole days since 1900-01-01 plus the fraction of a day.
fn number_to_datetime(v: &Value) -> Result<DateTime, SqlError> {
    let overflow = || SqlError::overflow("datetime");
    let (days, ticks) = match v {
        Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::Bit(_) => {
            let days = match to_int(v.clone(), SqlType::Int) {
                Ok(Value::Int(d)) => d,
                _ => return Err(overflow()),
            };
            (days, 0)
        }
        _ => {
            let x = to_float(v)?;
            let days = x.floor();
            let ticks = ((x - days) * f64::from(DATETIME_TICKS_PER_DAY)).round();
            if !days.is_finite() || days.abs() > f64::from(i32::MAX) {
                return Err(overflow());
            }
            // days is integral and within i32; ticks within 0..=DATETIME_TICKS_PER_DAY.
            let (days, ticks) = (days as i32, ticks as u32);
            if ticks >= DATETIME_TICKS_PER_DAY {
                (days.checked_add(1).ok_or_else(overflow)?, ticks - DATETIME_TICKS_PER_DAY)
            } else {
                (days, ticks)
            }
        }
    };
    DateTime::from_parts(days, ticks).ok_or_else(overflow)
}

pub(super) fn to_datetime(v: &Value, style: Option<i32>) -> Result<DateTime, SqlError> {
    let from = value_label(v);
    match v {
        Value::DateTime(dt) => Ok(*dt),
        Value::Str(s) | Value::NStr(s) => {
            let parsed = match style {
                Some(style @ (130 | 131)) => parse_hijri_text(s, style)?,
                _ => temporal::parse(s, DateOrder::of_style(style)).map_err(|e| match e {
                    ParseError::OutOfRange => out_of_range(from, "datetime"),
                    ParseError::Invalid => date_syntax_error(),
                })?,
            };
            if parsed.time.is_some_and(|(_, digits)| digits > 3) {
                return Err(date_syntax_error());
            }
            DateTime::from_datetime2(parsed.moment()).ok_or_else(|| out_of_range(from, "datetime"))
        }
        Value::Date(_) | Value::Time(_) | Value::DateTime2(_) | Value::DateTimeOffset(_) => {
            let moment = to_moment(v, &SqlType::DateTime, style)?;
            DateTime::from_datetime2(moment).ok_or_else(|| out_of_range(from, "datetime"))
        }
        _ => number_to_datetime(v),
    }
}
