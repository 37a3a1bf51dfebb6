//! Text forms: what SQL Server produces when it converts a value to a character string, with
//! the default style or a `CONVERT` style.

use walden_engine::types::{decode_cp1252, Date, Value, DATETIME_EPOCH_DAYS};

use crate::exec::SqlError;

/// Month names, as DATENAME and the `mon` styles spell them (us_english).
pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The text SQL Server produces when converting a value to VARCHAR with the default style
/// (PRINT, CONCAT, `+` with a string, RAISERROR's `%s`):
///
/// * integers as digits, BIT as `1`/`0`, decimals with every digit of their scale (`1.50`);
/// * FLOAT and REAL with at most six significant digits, in scientific notation when the
///   exponent is below -4 or above 5, with SQL Server's three-digit exponent
///   (`1.23457e+006`, `0.1`, `1e-005`);
/// * MONEY rounded to two decimals (`12.50`);
/// * DATETIME as `Jan  1 2024 10:00AM`, DATE as `2024-01-01`, TIME as `10:00:00.0000000`,
///   DATETIME2 as `2024-01-01 10:00:00.0000000` (the value does not know its column's scale, so
///   seven digits);
/// * UNIQUEIDENTIFIER in upper case, binary strings byte for byte (each byte the character it
///   is in code page 1252, the default collation's);
/// * NULL as the empty string (callers that care handle NULL themselves).
pub fn to_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::TinyInt(x) => x.to_string(),
        Value::SmallInt(x) => x.to_string(),
        Value::Int(x) => x.to_string(),
        Value::BigInt(x) => x.to_string(),
        Value::Bit(b) => if *b { "1" } else { "0" }.to_string(),
        Value::Decimal(d) => d.to_string(),
        Value::Float(x) => float_text(*x, 0),
        Value::Real(x) => float_text(f64::from(*x), 0),
        Value::Money(m) => money_text(*m, 0),
        Value::Str(s) | Value::NStr(s) => s.clone(),
        Value::Xml(x) => super::xml::text_of(x),
        Value::Binary(bytes) => decode_cp1252(bytes),
        Value::Guid(g) => g.to_string(),
        Value::Date(_)
        | Value::Time(_)
        | Value::DateTime(_)
        | Value::DateTime2(_)
        | Value::DateTimeOffset(_) => {
            // The default style exists for every temporal kind.
            temporal_text(v, None, None).unwrap_or_default()
        }
    }
}

/// FLOAT/REAL text for a `CONVERT` style: 0 (and any unknown style) at most 6 significant
/// digits, 1 always 8 digits in scientific notation, 2 always 16, 3 (and the legacy 126, 128,
/// 129) 17 digits, enough to tell every value apart.
pub(crate) fn float_text(x: f64, style: i32) -> String {
    match style {
        1 => scientific(x, 8),
        2 => scientific(x, 16),
        3 | 126 | 128 | 129 => general(x, 17),
        _ => general(x, 6),
    }
}

/// C's `%.{digits}g`, with SQL Server's exponent of at least three digits.
fn general(x: f64, digits: usize) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let sci = format!("{:.*e}", digits - 1, x);
    let exponent = exponent_of(&sci);
    if exponent < -4 || exponent >= digits as i32 {
        let (mantissa, _) = sci.split_once('e').unwrap_or((&sci, ""));
        format!("{}{}", trim_fraction(mantissa), exponent_text(exponent))
    } else {
        // 0 <= digits - 1 - exponent <= digits + 3 in this branch.
        let decimals = (digits as i32 - 1 - exponent) as usize;
        trim_fraction(&format!("{x:.decimals$}")).to_string()
    }
}

fn scientific(x: f64, digits: usize) -> String {
    let sci = format!("{:.*e}", digits - 1, x);
    let exponent = exponent_of(&sci);
    let (mantissa, _) = sci.split_once('e').unwrap_or((&sci, ""));
    format!("{mantissa}{}", exponent_text(exponent))
}

/// The exponent of Rust's `{:e}` output (`1.5e-7` → -7).
fn exponent_of(sci: &str) -> i32 {
    sci.split_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0)
}

fn exponent_text(exponent: i32) -> String {
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("e{sign}{:03}", exponent.unsigned_abs())
}

/// `1.500` → `1.5`, `2.000` → `2`; text without a point is left alone.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// MONEY text for a `CONVERT` style: 0 (default) two decimals, 1 two decimals with thousands
/// separators, 2 four decimals. Rounding is half away from zero.
pub(crate) fn money_text(m: i64, style: i32) -> String {
    let sign = if m < 0 { "-" } else { "" };
    let magnitude = m.unsigned_abs();
    if style == 2 {
        return format!("{sign}{}.{:04}", magnitude / 10_000, magnitude % 10_000);
    }
    let cents = (u128::from(magnitude) + 50) / 100;
    let (units, cents) = (cents / 100, cents % 100);
    let units = if style == 1 { group_thousands(&units.to_string()) } else { units.to_string() };
    format!("{sign}{units}.{cents:02}")
}

/// Digits with a comma between each group of three, from the right (`1234567` -> `1,234,567`).
pub(crate) fn group_thousands(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A binary string as text: style 0 byte for byte (in code page 1252, the default collation's,
/// so that every byte survives the way back to binary; UTF-16LE for a national target), style 1
/// hexadecimal with `0x`, style 2 hexadecimal without.
pub(crate) fn binary_text(bytes: &[u8], style: i32, national: bool) -> String {
    match style {
        1 | 2 => {
            let mut out = String::with_capacity(2 + bytes.len() * 2);
            if style == 1 {
                out.push_str("0x");
            }
            for b in bytes {
                out.push_str(&format!("{b:02X}"));
            }
            out
        }
        _ if national => {
            let units: Vec<u16> = bytes
                .chunks(2)
                .map(|c| u16::from_le_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        _ => decode_cp1252(bytes),
    }
}

/// A date and time broken into fields for formatting.
struct Stamp {
    year: u16,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    /// The fractional second as an integer of `digits` digits.
    fraction: u32,
    /// Fractional digits the kind shows: 3 for DATETIME, 7 for TIME and DATETIME2, 0 for DATE.
    digits: usize,
}

/// `v` broken into fields; `scale` overrides the fractional digits of a TIME, DATETIME2 or
/// DATETIMEOFFSET (the scale its type was declared with; the value is held at that scale, so
/// the digits cut are zeros).
fn stamp(v: &Value, scale: Option<u8>) -> Option<Stamp> {
    let (date, hour, minute, second, fraction, digits) = match v {
        Value::Date(d) => (*d, 0, 0, 0, 0, 0),
        Value::Time(t) => {
            let (h, m, s, f) = t.hms();
            (Date::DEFAULT, h, m, s, f, 7)
        }
        Value::DateTime2(dt) => {
            let (h, m, s, f) = dt.time.hms();
            (dt.date, h, m, s, f, 7)
        }
        Value::DateTimeOffset(dto) => {
            let local = dto.local();
            let (h, m, s, f) = local.time.hms();
            (local.date, h, m, s, f, 7)
        }
        Value::DateTime(dt) => {
            // DATETIME shows milliseconds rounded from its 1/300 s ticks (ending in 0, 3, 7).
            let ms = (u64::from(dt.ticks()) * 10 + 1) / 3;
            let days = i64::from(dt.days()) + i64::from(DATETIME_EPOCH_DAYS);
            let date = Date::from_days(u32::try_from(days).ok()?)?;
            // ms < 86,400,000, so every field fits.
            let (h, m, s) =
                ((ms / 3_600_000) as u8, (ms / 60_000 % 60) as u8, (ms / 1000 % 60) as u8);
            (date, h, m, s, (ms % 1000) as u32, 3)
        }
        _ => return None,
    };
    let (fraction, digits) = match (scale, digits) {
        (Some(s), 7) if s < 7 => (fraction / 10u32.pow(u32::from(7 - s)), usize::from(s)),
        _ => (fraction, digits),
    };
    let (year, month, day) = date.ymd();
    Some(Stamp { year, month, day, hour, minute, second, fraction, digits })
}

/// Date/time text with a `CONVERT` style; `None` is the kind's default (style 0 for DATETIME,
/// ISO forms for the others). `scale` is the fractional digits of the value's declared type
/// (`TIME(3)` shows three), `None` the kind's seven. An unknown style is error 281.
pub(crate) fn temporal_text(
    v: &Value,
    style: Option<i32>,
    scale: Option<u8>,
) -> Result<String, SqlError> {
    let text = moment_text(v, style, scale)?;
    let Value::DateTimeOffset(dto) = v else {
        return Ok(text);
    };
    // The styles that show a time of day show the offset after it, as SQL Server does: ISO
    // 8601's own way (`+02:00`, and `Z` for UTC in style 127) for 126 and 127.
    let offset = dto.offset_minutes();
    let zone = walden_engine::types::offset_text(offset);
    Ok(match style.unwrap_or(0) {
        127 if offset == 0 => format!("{text}Z"),
        126 | 127 => format!("{text}{zone}"),
        0 | 100 | 9 | 109 | 13 | 113 | 20 | 120 | 21 | 25 | 121 => format!("{text} {zone}"),
        _ => text,
    })
}

/// [`temporal_text`] without a DATETIMEOFFSET's offset: its local date and time.
fn moment_text(v: &Value, style: Option<i32>, scale: Option<u8>) -> Result<String, SqlError> {
    let Some(st) = stamp(v, scale) else {
        return Ok(String::new());
    };
    let is_datetime = matches!(v, Value::DateTime(_));
    let style = match style {
        None | Some(0) if !is_datetime => {
            return Ok(match v {
                Value::Date(_) => format_style(&st, 23),
                Value::Time(_) if st.digits == 0 => {
                    Some(format!("{:02}:{:02}:{:02}", st.hour, st.minute, st.second))
                }
                Value::Time(_) => Some(format!(
                    "{:02}:{:02}:{:02}.{:0w$}",
                    st.hour,
                    st.minute,
                    st.second,
                    st.fraction,
                    w = st.digits
                )),
                _ => format_style(&st, 121),
            }
            .unwrap_or_default());
        }
        None => 0,
        Some(s) => s,
    };
    let text = format_style(&st, style).map(|text| match v {
        Value::Date(_) | Value::Time(_) => date_or_time_part(&text, matches!(v, Value::Date(_))),
        _ => text,
    });
    text.ok_or_else(|| {
        SqlError::new(
            281,
            format!(
                "{style} is not a valid style number when converting from {} to a character \
                 string.",
                v.kind_name()
            ),
        )
    })
}

/// A DATE or TIME in a style that shows both a date and a time of day: SQL Server shows the
/// date alone for a DATE (`2006-01-02` in style 121) and the time of day alone for a TIME
/// (`22:04:05.0000000`, `10:04PM` in style 100). The time part starts after the space or `T`
/// before the text's first `:`; a style without a time of day is left whole.
fn date_or_time_part(text: &str, date: bool) -> String {
    let Some(colon) = text.find(':') else {
        return text.to_string();
    };
    let Some(split) = text[..colon].rfind([' ', 'T']) else {
        return text.to_string();
    };
    if date {
        text[..split].trim_end().to_string()
    } else {
        text[split + 1..].to_string()
    }
}

fn format_style(st: &Stamp, style: i32) -> Option<String> {
    let mon = &MONTHS[usize::from(st.month.max(1)) - 1][..3];
    let year =
        if style >= 100 { format!("{:04}", st.year) } else { format!("{:02}", st.year % 100) };
    let (y4, m, d) = (st.year, st.month, st.day);
    let (h, mi, s) = (st.hour, st.minute, st.second);
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let ampm = if h < 12 { "AM" } else { "PM" };
    let fraction = |sep: char| {
        if st.digits == 0 {
            String::new()
        } else {
            format!("{sep}{:0w$}", st.fraction, w = st.digits)
        }
    };
    Some(match style {
        0 | 100 => format!("{mon} {d:>2} {y4:04} {h12:>2}:{mi:02}{ampm}"),
        1 | 101 => format!("{m:02}/{d:02}/{year}"),
        2 | 102 => format!("{year}.{m:02}.{d:02}"),
        3 | 103 => format!("{d:02}/{m:02}/{year}"),
        4 | 104 => format!("{d:02}.{m:02}.{year}"),
        5 | 105 => format!("{d:02}-{m:02}-{year}"),
        6 | 106 => format!("{d:02} {mon} {year}"),
        7 | 107 => format!("{mon} {d:02}, {year}"),
        8 | 24 | 108 => format!("{h:02}:{mi:02}:{s:02}"),
        9 | 109 => format!("{mon} {d:>2} {y4:04} {h12:>2}:{mi:02}:{s:02}{}{ampm}", fraction(':')),
        10 | 110 => format!("{m:02}-{d:02}-{year}"),
        11 | 111 => format!("{year}/{m:02}/{d:02}"),
        12 | 112 => format!("{year}{m:02}{d:02}"),
        13 | 113 => format!("{d:02} {mon} {y4:04} {h:02}:{mi:02}:{s:02}{}", fraction(':')),
        14 | 114 => format!("{h:02}:{mi:02}:{s:02}{}", fraction(':')),
        20 | 120 => format!("{y4:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}"),
        21 | 25 | 121 => format!("{y4:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}{}", fraction('.')),
        22 => format!("{m:02}/{d:02}/{:02} {h12:>2}:{mi:02}:{s:02} {ampm}", y4 % 100),
        23 => format!("{y4:04}-{m:02}-{d:02}"),
        130 | 131 => {
            let date = walden_engine::types::Date::from_ymd(y4, m, d)?;
            let (hy, hm, hd) = super::hijri::from_date(date)?;
            let time = format!("{h12:>2}:{mi:02}:{s:02}{}{ampm}", fraction(':'));
            if style == 130 {
                let month = super::hijri::MONTH_NAMES[hm as usize - 1];
                format!("{hd:>2} {month} {hy:04} {time}")
            } else {
                format!("{hd:>2}/{hm:02}/{hy:04} {time}")
            }
        }
        126 | 127 => {
            let fraction = if st.fraction == 0 { String::new() } else { fraction('.') };
            format!("{y4:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}{fraction}")
        }
        _ => return None,
    })
}
