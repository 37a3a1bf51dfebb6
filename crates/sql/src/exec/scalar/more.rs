//! Further built-in scalar functions: GREATEST and LEAST, the date and time constructors
//! DATETIMEFROMPARTS, DATETIME2FROMPARTS, DATETIMEOFFSETFROMPARTS and TIMEFROMPARTS, DATETRUNC, STRING_ESCAPE,
//! SOUNDEX and DIFFERENCE.

use std::cmp::Ordering;

use walden_engine::types::{SqlType, Value};

use super::compare::compare;
use super::convert::convert;
use super::text::to_text;
use super::types::{common_type, type_of};
use crate::exec::SqlError;

/// `GREATEST(a, ...)` / `LEAST(a, ...)`: the largest (smallest) argument, NULLs ignored, in
/// the arguments' common type; NULL when every argument is NULL.
pub(super) fn extreme(args: Vec<Value>, greatest: bool) -> Result<Value, SqlError> {
    let present: Vec<Value> = args.into_iter().filter(|v| !v.is_null()).collect();
    let Some(ty) = present.iter().map(type_of).reduce(common_type) else {
        return Ok(Value::Null);
    };
    let mut best: Option<Value> = None;
    for v in present {
        let v = convert(v, ty, None)?;
        let better = match &best {
            None => true,
            Some(b) => {
                let ord = compare(&v, b)?.unwrap_or(Ordering::Equal);
                if greatest {
                    ord == Ordering::Greater
                } else {
                    ord == Ordering::Less
                }
            }
        };
        if better {
            best = Some(v);
        }
    }
    Ok(best.unwrap_or(Value::Null))
}

/// The integer arguments of a `...FROMPARTS` function; `None` if any is NULL.
fn parts(args: &[Value]) -> Result<Option<Vec<i64>>, SqlError> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        match convert(a.clone(), SqlType::BigInt, None)? {
            Value::BigInt(n) => out.push(n),
            _ => return Ok(None),
        }
    }
    Ok(Some(out))
}

fn cannot_construct(ty: &str) -> SqlError {
    SqlError::new(
        289,
        format!("Cannot construct data type {ty}, some of the arguments have values which are not valid."),
    )
}

/// Builds a value of `ty` from its ISO text, error 289 (naming `label`) when the parts do not
/// make one.
fn from_text(text: String, ty: SqlType, label: &str) -> Result<Value, SqlError> {
    convert(Value::Str(text), ty, None).map_err(|_| cannot_construct(label))
}

/// `DATETIMEFROMPARTS(year, month, day, hour, minute, seconds, milliseconds)`.
pub(super) fn datetimefromparts(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(p) = parts(&args)? else { return Ok(Value::Null) };
    if p.iter().any(|&n| n < 0) || p[6] > 999 {
        return Err(cannot_construct("datetime"));
    }
    let text = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}",
        p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    );
    from_text(text, SqlType::DateTime, "datetime")
}

/// `DATETIME2FROMPARTS(year, month, day, hour, minute, seconds, fractions, precision)`.
pub(super) fn datetime2fromparts(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(p) = parts(&args)? else { return Ok(Value::Null) };
    let (time, precision) = time_text(&p[3..], "datetime2")?;
    let text = format!("{:04}-{:02}-{:02}T{time}", p[0], p[1], p[2]);
    from_text(text, SqlType::DateTime2(precision), "datetime2")
}

/// `DATETIMEOFFSETFROMPARTS(year, month, day, hour, minute, seconds, fractions, hour_offset,
/// minute_offset, precision)`: the offset's minutes take the hours' sign.
pub(super) fn datetimeoffsetfromparts(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(p) = parts(&args)? else { return Ok(Value::Null) };
    let label = "datetimeoffset";
    let time_parts = [p[3], p[4], p[5], p[6], p[9]];
    let (time, precision) = time_text(&time_parts, label)?;
    let (hours, minutes) = (p[7], p[8]);
    if !(-14..=14).contains(&hours) || !(-59..=59).contains(&minutes) || hours * minutes < 0 {
        return Err(cannot_construct(label));
    }
    let sign = if hours < 0 || minutes < 0 { '-' } else { '+' };
    let zone = format!("{sign}{:02}:{:02}", hours.abs(), minutes.abs());
    let text = format!("{:04}-{:02}-{:02}T{time} {zone}", p[0], p[1], p[2]);
    from_text(text, SqlType::DateTimeOffset(precision), label)
}

/// `TIMEFROMPARTS(hour, minute, seconds, fractions, precision)`.
pub(super) fn timefromparts(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(p) = parts(&args)? else { return Ok(Value::Null) };
    let (time, precision) = time_text(&p, "time")?;
    from_text(time, SqlType::Time(precision), "time")
}

/// `hh:mm:ss[.fraction]` from (hour, minute, seconds, fractions, precision): the fractions
/// are `precision` digits, so they must be below 10^precision (error 289).
fn time_text(p: &[i64], label: &str) -> Result<(String, u8), SqlError> {
    let [h, mi, s, fraction, precision] = p else { return Err(cannot_construct(label)) };
    let precision = u8::try_from(*precision).ok().filter(|&n| n <= 7).ok_or_else(|| {
        SqlError::new(
            10760,
            format!("Scale argument is not valid. Valid expressions for data type {label} scale argument are integer constants and integer constant expressions."),
        )
    })?;
    if [*h, *mi, *s, *fraction].iter().any(|&n| n < 0)
        || *fraction >= 10i64.pow(u32::from(precision))
    {
        return Err(cannot_construct(label));
    }
    let mut text = format!("{h:02}:{mi:02}:{s:02}");
    if precision > 0 {
        text.push_str(&format!(".{fraction:0width$}", width = usize::from(precision)));
    }
    Ok((text, precision))
}

/// `DATETRUNC(datepart, date)`: the date cut down to the start of its year, quarter, month,
/// week (from the session's DATEFIRST day), day, hour, minute or second, in the date's own type.
pub(super) fn datetrunc(args: Vec<Value>) -> Result<Value, SqlError> {
    let [part, date] = <[Value; 2]>::try_from(args).map_err(|_| cannot_construct("date"))?;
    if date.is_null() {
        return Ok(Value::Null);
    }
    let ty = type_of(&date);
    // A DATETIMEOFFSET is cut in its local time and keeps its offset.
    let zone = match &date {
        Value::DateTimeOffset(d) => {
            format!(" {}", walden_engine::types::offset_text(d.offset_minutes()))
        }
        _ => String::new(),
    };
    let part = to_text(&part).to_ascii_lowercase();
    let stamp = convert(date, SqlType::DateTime2(7), None)?;
    let text = to_text(&stamp);
    // "yyyy-mm-dd hh:mi:ss.fffffff"
    let (day, time) = text.split_once(' ').unwrap_or((text.as_str(), "00:00:00"));
    let mut ymd = day.splitn(3, '-').map(|s| s.parse::<i64>().unwrap_or(1));
    let (y, m, d) = (ymd.next().unwrap_or(1), ymd.next().unwrap_or(1), ymd.next().unwrap_or(1));
    let truncated = match part.as_str() {
        "year" | "yy" | "yyyy" => format!("{y:04}-01-01"),
        "quarter" | "qq" | "q" => format!("{y:04}-{:02}-01", (m - 1) / 3 * 3 + 1),
        "month" | "mm" | "m" => format!("{y:04}-{m:02}-01"),
        "dayofyear" | "dy" | "y" | "day" | "dd" | "d" => format!("{y:04}-{m:02}-{d:02}"),
        "week" | "wk" | "ww" => match convert(Value::Str(day.to_string()), SqlType::Date, None)? {
            Value::Date(date) => {
                let back = i64::from(super::dates::days_into_week(date));
                let start = super::temporal::add_days(date, -back).unwrap_or(date);
                to_text(&Value::Date(start))
            }
            _ => day.to_string(),
        },
        "hour" | "hh" => format!("{day} {}:00:00", &time[..2]),
        "minute" | "mi" | "n" => format!("{day} {}:00", &time[..5]),
        "second" | "ss" | "s" => format!("{day} {}", &time[..8]),
        "millisecond" | "ms" => format!("{day} {}", &time[..time.len().min(12)]),
        "microsecond" | "mcs" => format!("{day} {}", &time[..time.len().min(15)]),
        other => {
            return Err(SqlError::new(
                9810,
                format!("The datepart {other} is not supported by date function datetrunc for data type {}.", super::types::type_label(&ty)),
            ))
        }
    };
    convert(Value::Str(truncated + &zone), ty, None)
}

/// `DATE_BUCKET(datepart, number, date [, origin])` (SQL Server 2022): the start of the
/// `number`-`datepart` bucket, counted from `origin` (1900-01-01 00:00, a Monday, by default),
/// that holds `date`, in `date`'s type. Weeks are seven-day buckets from the origin.
pub(super) fn date_bucket(args: Vec<Value>) -> Result<Value, SqlError> {
    let mut args = args.into_iter();
    let (part, number, date) = (
        args.next().unwrap_or(Value::Null),
        args.next().unwrap_or(Value::Null),
        args.next().unwrap_or(Value::Null),
    );
    let origin = args.next();
    if date.is_null() || number.is_null() || origin.as_ref().is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    let ty = type_of(&date);
    let label = super::types::type_label(&ty);
    let number = match convert(number, SqlType::BigInt, None)? {
        Value::BigInt(n) if n > 0 => n,
        _ => {
            return Err(SqlError::new(
                9834,
                "Invalid bucket width value passed to date_bucket function. Only positive values are allowed.",
            ))
        }
    };
    let part = to_text(&part).to_ascii_lowercase();
    let (unit, width) = match part.as_str() {
        "year" | "yy" | "yyyy" => ("year", number),
        "quarter" | "qq" | "q" => ("month", number.saturating_mul(3)),
        "month" | "mm" | "m" => ("month", number),
        "week" | "wk" | "ww" => ("day", number.saturating_mul(7)),
        "day" | "dd" | "d" => ("day", number),
        "hour" | "hh" => ("hour", number),
        "minute" | "mi" | "n" => ("minute", number),
        "second" | "ss" | "s" => ("second", number),
        "millisecond" | "ms" => ("millisecond", number),
        other => {
            return Err(SqlError::new(
                9810,
                format!("The datepart {other} is not supported by date function date_bucket for data type {label}."),
            ))
        }
    };
    let time_unit = !matches!(unit, "year" | "month" | "day");
    if time_unit && ty == SqlType::Date {
        return Err(SqlError::new(
            9810,
            format!("The datepart {part} is not supported by date function date_bucket for data type {label}."),
        ));
    }
    let origin = match origin {
        Some(o) => convert(o, ty, None)?,
        None => convert(Value::Str("1900-01-01".into()), ty, None)?,
    };
    let unit_text = || Value::Str(unit.into());
    let add = |n: i64, from: &Value| {
        let n = i32::try_from(n).map_err(|_| {
            SqlError::new(517, format!("Adding a value to a '{label}' column caused an overflow."))
        })?;
        super::dates::dateadd(vec![unit_text(), Value::Int(n), from.clone()])
    };
    // Whole units from the origin: DATEDIFF counts boundaries, one too many when the date's
    // place in its unit is before the origin's.
    let mut whole =
        match super::dates::datediff(vec![unit_text(), origin.clone(), date.clone()], true)? {
            Value::BigInt(n) => n,
            _ => return Ok(Value::Null),
        };
    if compare(&add(whole, &origin)?, &date)? == Some(Ordering::Greater) {
        whole -= 1;
    }
    add(whole.div_euclid(width) * width, &origin)
}

/// `STRING_ESCAPE(text, 'json')`: the text with JSON's special characters escaped.
pub(super) fn string_escape(args: Vec<Value>) -> Result<Value, SqlError> {
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    let kind = to_text(&args[1]);
    if !kind.eq_ignore_ascii_case("json") {
        return Err(SqlError::new(
            13606,
            format!("'{kind}' is not a valid escape type. The only supported type is 'json'."),
        ));
    }
    let quoted = serde_json::Value::String(to_text(&args[0])).to_string();
    Ok(Value::NStr(quoted[1..quoted.len() - 1].to_string()))
}

/// `SOUNDEX(text)`: the four-character American Soundex code of the text's first word.
pub(super) fn soundex(args: Vec<Value>) -> Result<Value, SqlError> {
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    Ok(Value::Str(soundex_code(&to_text(&args[0]))))
}

fn soundex_code(text: &str) -> String {
    let digit = |c: char| match c.to_ascii_uppercase() {
        'B' | 'F' | 'P' | 'V' => Some('1'),
        'C' | 'G' | 'J' | 'K' | 'Q' | 'S' | 'X' | 'Z' => Some('2'),
        'D' | 'T' => Some('3'),
        'L' => Some('4'),
        'M' | 'N' => Some('5'),
        'R' => Some('6'),
        _ => None,
    };
    let letters: Vec<char> =
        text.trim_start().chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    let Some(&first) = letters.first() else { return "0000".into() };
    let mut code = String::from(first.to_ascii_uppercase());
    let mut last = digit(first);
    for &c in &letters[1..] {
        let d = digit(c);
        // H and W do not separate letters of the same code; vowels do.
        if matches!(c.to_ascii_uppercase(), 'H' | 'W') {
            continue;
        }
        if let Some(d) = d {
            if Some(d) != last {
                code.push(d);
                if code.len() == 4 {
                    break;
                }
            }
        }
        last = d;
    }
    while code.len() < 4 {
        code.push('0');
    }
    code
}

/// `DIFFERENCE(a, b)`: how many of the four characters of the two SOUNDEX codes agree (0-4).
pub(super) fn difference(args: Vec<Value>) -> Result<Value, SqlError> {
    if args[0].is_null() || args[1].is_null() {
        return Ok(Value::Null);
    }
    let (a, b) = (soundex_code(&to_text(&args[0])), soundex_code(&to_text(&args[1])));
    let same = a.chars().zip(b.chars()).filter(|(x, y)| x == y).count();
    Ok(Value::Int(same as i32))
}

/// `CHECKSUM(value, ...)` and `BINARY_CHECKSUM(value, ...)`: an INT computed from the values,
/// for telling changed rows apart. CHECKSUM folds text as the collation compares it (case and
/// trailing spaces ignored), so values that compare equal get equal checksums;
/// BINARY_CHECKSUM takes the text as it is. SQL Server does not document its algorithm, so the
/// numbers are not SQL Server's; like its, they are stable, and different values may collide.
pub(crate) fn checksum(args: &[Value], binary: bool) -> Value {
    // FNV-1a over each value's bytes, the values mixed in order.
    let mut h: u32 = 0x811c_9dc5;
    for v in args {
        let text = match v {
            Value::Null => {
                h = (h ^ 0xff).wrapping_mul(0x0100_0193);
                continue;
            }
            Value::Binary(b) => {
                for &byte in b {
                    h = (h ^ u32::from(byte)).wrapping_mul(0x0100_0193);
                }
                continue;
            }
            Value::Str(s) | Value::NStr(s) => s.trim_end_matches(' ').to_string(),
            other => to_text(other),
        };
        let text = if binary { text } else { text.to_lowercase() };
        for byte in text.bytes().chain([0]) {
            h = (h ^ u32::from(byte)).wrapping_mul(0x0100_0193);
        }
    }
    Value::Int(h as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soundex_codes_follow_the_american_rules() {
        assert_eq!(soundex_code("Robert"), "R163");
        assert_eq!(soundex_code("Rupert"), "R163");
        assert_eq!(soundex_code("Ashcraft"), "A261");
        assert_eq!(soundex_code("Tymczak"), "T522");
        assert_eq!(soundex_code("Pfister"), "P236");
        assert_eq!(soundex_code("Smith"), "S530");
        assert_eq!(soundex_code(""), "0000");
    }

    #[test]
    fn greatest_and_least_skip_nulls_and_widen() {
        let args = vec![Value::Int(3), Value::Null, Value::Float(4.5), Value::Int(-1)];
        assert_eq!(extreme(args.clone(), true).unwrap(), Value::Float(4.5));
        assert_eq!(extreme(args, false).unwrap(), Value::Float(-1.0));
        assert_eq!(extreme(vec![Value::Null], true).unwrap(), Value::Null);
    }
}
