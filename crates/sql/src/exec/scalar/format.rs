//! `FORMAT(value, format [, culture])`: SQL Server hands the value and the format string to
//! .NET; this is the subset of .NET's format strings that scripts use, for the `en-US`
//! culture (the default, and the only one Walden knows).
//!
//! * Numbers: the standard formats `N`, `F`, `D`, `P`, `C`, `X`, `E` and `G` with an optional
//!   precision (`N0`, `F3`, `D8`), and custom formats of `0`, `#`, `.`, `,` (grouping, or
//!   scaling by 1000 just before the point), `%`, literals (`\x`, `'text'`, `"text"`, any other
//!   character) and up to three `;` sections (positive; negative; zero).
//! * Dates and times (DATE, DATETIME, DATETIME2): the standard formats `d D t T f F g G M Y s
//!   u o` and custom formats of `yyyy yy y MMMM MMM MM M dddd ddd dd d HH H hh h mm m ss s
//!   f..fffffff F..FFFFFFF tt t`, `:` and `/`, and literals as above.
//! * TIME follows .NET's TimeSpan rules: `hh`, `mm`, `ss` and `f`s, and every literal (`:`
//!   included) must be escaped; `c`, `g` and `G` are the standard forms.
//!
//! As in SQL Server, a format that .NET would refuse gives NULL, not an error; a culture other
//! than `en-US` / `en` / the invariant culture (`''`) is error 9818; a value that is not a
//! number or a date/time is error 8116.

use walden_engine::types::{DateTime2, Time, Value};

use super::dates::{datetime_moment, DAYS};
use super::temporal::weekday;
use super::text::{group_thousands, MONTHS};
use super::types::value_label;
use crate::exec::SqlError;

/// `FORMAT(value, format [, culture])`.
pub(crate) fn format(args: Vec<Value>) -> Result<Value, SqlError> {
    let mut args = args.into_iter();
    let (value, pattern, culture) = (args.next().unwrap_or(Value::Null), args.next(), args.next());
    if let Some(culture) = culture.filter(|c| !matches!(c, Value::Null)) {
        let name = super::text::to_text(&culture);
        if !["en-us", "en", ""].contains(&name.to_ascii_lowercase().as_str()) {
            return Err(SqlError::new(
                9818,
                format!("The culture parameter '{name}' provided in the function call is not supported."),
            ));
        }
    }
    let pattern = match pattern {
        None | Some(Value::Null) => return Ok(Value::Null),
        Some(p) => super::text::to_text(&p),
    };
    let text = match &value {
        Value::Null => return Ok(Value::Null),
        Value::Date(d) => format_moment(DateTime2::new(*d, Time::MIDNIGHT), None, &pattern),
        // With the milliseconds a DATETIME displays (`.007`), as DATEPART reads them.
        Value::DateTime(dt) => format_moment(datetime_moment(*dt), None, &pattern),
        Value::DateTime2(m) => format_moment(*m, None, &pattern),
        Value::DateTimeOffset(m) => format_moment(m.local(), Some(m.offset_minutes()), &pattern),
        Value::Time(t) => format_time_span(t.ticks(), &pattern),
        // BIT is not among FORMAT's types, though it is numeric elsewhere.
        v if v.is_numeric() && !matches!(v, Value::Bit(_)) => {
            Number::of(v).and_then(|n| format_number(&n, &pattern))
        }
        other => {
            return Err(SqlError::new(
                8116,
                format!(
                    "Argument data type {} is invalid for argument 1 of format function.",
                    value_label(other)
                ),
            ))
        }
    };
    Ok(text.map_or(Value::Null, Value::NStr))
}

/// A number to format: exact (integers, DECIMAL, MONEY: `mantissa / 10^scale`, a negative
/// scale standing for trailing zeros) or a float; `integer`: an integer type's bits.
#[derive(Debug, Clone, Copy)]
enum Number {
    Exact { mantissa: i128, scale: i32, integer: Option<u32> },
    Float(f64),
}

impl Number {
    fn of(v: &Value) -> Option<Number> {
        let exact = |mantissa: i128, scale: i32, bits: Option<u32>| {
            Some(Number::Exact { mantissa, scale, integer: bits })
        };
        match *v {
            Value::TinyInt(x) => exact(x.into(), 0, Some(8)),
            Value::SmallInt(x) => exact(x.into(), 0, Some(16)),
            Value::Int(x) => exact(x.into(), 0, Some(32)),
            Value::BigInt(x) => exact(x.into(), 0, Some(64)),
            Value::Decimal(d) => exact(d.mantissa(), d.scale().into(), None),
            Value::Money(m) => exact(m.into(), 4, None),
            Value::Float(x) => Some(Number::Float(x)),
            Value::Real(x) => Some(Number::Float(x.into())),
            _ => None,
        }
    }

    fn negative(&self) -> bool {
        match *self {
            Number::Exact { mantissa, .. } => mantissa < 0,
            Number::Float(x) => x < 0.0,
        }
    }

    /// The number times 10^`shift` (negative: divided).
    fn scaled(self, shift: i32) -> Number {
        match self {
            Number::Exact { mantissa, scale, .. } => {
                Number::Exact { mantissa, scale: scale - shift, integer: None }
            }
            Number::Float(x) => Number::Float(x * 10f64.powi(shift)),
        }
    }

    /// The absolute value rounded (half away from zero) to `decimals` places: its integer and
    /// fraction digits. Exact numbers are rounded as digit strings, so nothing overflows.
    fn fixed(self, decimals: u32) -> (String, String) {
        match self {
            Number::Exact { mantissa, scale, .. } => {
                let mut digits = mantissa.unsigned_abs().to_string();
                let scale = if scale < 0 {
                    digits.extend(std::iter::repeat_n('0', scale.unsigned_abs() as usize));
                    0
                } else {
                    scale.unsigned_abs() as usize
                };
                if digits.len() <= scale {
                    digits = format!("{digits:0>width$}", width = scale + 1);
                }
                let (int, frac) = digits.split_at(digits.len() - scale);
                let decimals = decimals as usize;
                if decimals >= frac.len() {
                    return (int.to_string(), format!("{frac:0<decimals$}"));
                }
                let round_up = frac.as_bytes()[decimals] >= b'5';
                let mut kept: Vec<u8> = format!("{int}{}", &frac[..decimals]).into_bytes();
                if round_up {
                    let mut at = kept.len();
                    loop {
                        if at == 0 {
                            kept.insert(0, b'1');
                            break;
                        }
                        at -= 1;
                        if kept[at] == b'9' {
                            kept[at] = b'0';
                        } else {
                            kept[at] += 1;
                            break;
                        }
                    }
                }
                let text = String::from_utf8(kept).unwrap_or_default();
                let (i, f) = text.split_at(text.len() - decimals);
                (i.to_string(), f.to_string())
            }
            Number::Float(x) => {
                let text = format!("{:.*}", decimals as usize, x.abs());
                match text.split_once('.') {
                    Some((i, f)) => (i.to_string(), f.to_string()),
                    None => (text, String::new()),
                }
            }
        }
    }
}

fn is_zero(int: &str, frac: &str) -> bool {
    int.chars().chain(frac.chars()).all(|c| c == '0')
}

fn format_number(n: &Number, pattern: &str) -> Option<String> {
    let mut chars = pattern.chars();
    let first = chars.next()?;
    let precision: Option<u32> = match chars.as_str() {
        "" => None,
        digits if digits.len() <= 2 && digits.chars().all(|c| c.is_ascii_digit()) => {
            digits.parse().ok()
        }
        _ => return custom_number(n, pattern),
    };
    if !first.is_ascii_alphabetic() {
        return custom_number(n, pattern);
    }
    let sign = |text: String, int: &str, frac: &str| {
        if n.negative() && !is_zero(int, frac) {
            format!("-{text}")
        } else {
            text
        }
    };
    let with_point = |int: String, frac: &str| {
        if frac.is_empty() {
            int
        } else {
            format!("{int}.{frac}")
        }
    };
    Some(match first.to_ascii_uppercase() {
        'N' => {
            let (i, f) = n.fixed(precision.unwrap_or(2));
            sign(with_point(group_thousands(&i), &f), &i, &f)
        }
        'F' => {
            let (i, f) = n.fixed(precision.unwrap_or(2));
            sign(with_point(i.clone(), &f), &i, &f)
        }
        'P' => {
            let (i, f) = n.scaled(2).fixed(precision.unwrap_or(2));
            sign(format!("{} %", with_point(group_thousands(&i), &f)), &i, &f)
        }
        'C' => {
            let (i, f) = n.fixed(precision.unwrap_or(2));
            let text = format!("${}", with_point(group_thousands(&i), &f));
            if n.negative() && !is_zero(&i, &f) {
                format!("({text})")
            } else {
                text
            }
        }
        'D' => {
            let Number::Exact { mantissa, integer: Some(_), .. } = *n else { return None };
            let digits = format!(
                "{:0width$}",
                mantissa.unsigned_abs(),
                width = precision.unwrap_or(0) as usize
            );
            if mantissa < 0 {
                format!("-{digits}")
            } else {
                digits
            }
        }
        'X' => {
            let Number::Exact { mantissa, integer: Some(bits), .. } = *n else { return None };
            // Two's complement in the type's width, as .NET formats a negative integer.
            let value = (mantissa as u128) & (u128::MAX >> (128 - bits));
            let width = precision.unwrap_or(0) as usize;
            if first == 'x' {
                format!("{value:0width$x}")
            } else {
                format!("{value:0width$X}")
            }
        }
        'E' => {
            let x = match *n {
                Number::Exact { mantissa, scale, .. } => mantissa as f64 / 10f64.powi(scale),
                Number::Float(x) => x,
            };
            let text = format!("{:.*e}", precision.unwrap_or(6) as usize, x);
            let (mantissa, exponent) = text.split_once('e')?;
            let exponent: i32 = exponent.parse().ok()?;
            let e = if first == 'e' { 'e' } else { 'E' };
            let sign = if exponent < 0 { '-' } else { '+' };
            format!("{mantissa}{e}{sign}{:03}", exponent.abs())
        }
        'G' => match *n {
            // .NET's decimal keeps its scale: 12.50 is "12.50".
            Number::Exact { mantissa, scale, .. } => {
                let (i, f) = n.fixed(scale.max(0).unsigned_abs());
                let text = with_point(i.clone(), &f);
                if mantissa < 0 && !is_zero(&i, &f) {
                    format!("-{text}")
                } else {
                    text
                }
            }
            Number::Float(x) => {
                let text = x.to_string();
                if text.contains('e') {
                    format!("{x:E}")
                } else {
                    text
                }
            }
        },
        _ => return None,
    })
}

/// One piece of a custom format.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Zero,
    Hash,
    Point,
    Comma,
    Percent,
    Literal(String),
}

/// Splits a custom format into `;` sections of pieces; quotes and `\` make literals.
fn pieces(pattern: &str) -> Option<Vec<Vec<Piece>>> {
    let mut sections = vec![Vec::new()];
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let piece = match c {
            '0' => Piece::Zero,
            '#' => Piece::Hash,
            '.' => Piece::Point,
            ',' => Piece::Comma,
            '%' => Piece::Percent,
            ';' => {
                sections.push(Vec::new());
                continue;
            }
            '\\' => Piece::Literal(chars.next()?.to_string()),
            '\'' | '"' => {
                let mut text = String::new();
                loop {
                    match chars.next()? {
                        q if q == c => break,
                        other => text.push(other),
                    }
                }
                Piece::Literal(text)
            }
            other => Piece::Literal(other.to_string()),
        };
        sections.last_mut()?.push(piece);
    }
    (sections.len() <= 3).then_some(sections)
}

fn custom_number(n: &Number, pattern: &str) -> Option<String> {
    let sections = pieces(pattern)?;
    let negative = n.negative();
    let (section, signed) = match (negative, sections.get(1)) {
        (true, Some(s)) if !s.is_empty() => (s, false),
        _ => (&sections[0], negative),
    };
    let (text, zero) = custom_section(n, section)?;
    if zero {
        if let Some(z) = sections.get(2).filter(|s| !s.is_empty()) {
            return custom_section(n, z).map(|(t, _)| t);
        }
    }
    Some(if signed && !zero { format!("-{text}") } else { text })
}

/// Formats `n`'s absolute value with one section; also says whether it rounded to zero.
fn custom_section(n: &Number, section: &[Piece]) -> Option<(String, bool)> {
    let point = section.iter().position(|p| *p == Piece::Point);
    let (int_part, frac_part) = match point {
        Some(at) => (&section[..at], &section[at + 1..]),
        None => (section, &[][..]),
    };
    let is_digit = |p: &Piece| matches!(p, Piece::Zero | Piece::Hash);
    // Commas right after the last integer placeholder scale by 1000 each; others group.
    let last_digit = int_part.iter().rposition(is_digit);
    let scaling = last_digit
        .map_or(0, |at| int_part[at + 1..].iter().take_while(|p| **p == Piece::Comma).count());
    let grouping = last_digit.is_some_and(|at| int_part[..at].contains(&Piece::Comma));
    let percent = section.iter().filter(|p| **p == Piece::Percent).count();
    let shift = 2 * percent as i32 - 3 * scaling as i32;
    let frac_slots: Vec<&Piece> = frac_part.iter().filter(|p| is_digit(p)).collect();
    let decimals = frac_slots.len() as u32;
    let min_decimals = frac_slots.iter().rposition(|p| **p == Piece::Zero).map_or(0, |i| i + 1);
    let (int_digits, frac_digits) = n.scaled(shift).fixed(decimals);
    let zero = is_zero(&int_digits, &frac_digits);
    let min_int = int_part
        .iter()
        .position(|p| *p == Piece::Zero)
        .map_or(0, |first| int_part[first..].iter().filter(|p| is_digit(p)).count());
    let trimmed = int_digits.trim_start_matches('0');
    let int_digits = format!("{trimmed:0>min_int$}");

    // The integer part: placeholders take digits from the right; digits left over go to the
    // leftmost placeholder; literals stay where they are.
    let mut out_int: Vec<String> = Vec::new();
    let mut digits: Vec<char> = int_digits.chars().collect();
    let digit_slots = int_part.iter().filter(|p| is_digit(p)).count();
    let mut seen_slots = 0;
    for piece in int_part.iter().rev() {
        match piece {
            Piece::Zero | Piece::Hash => {
                seen_slots += 1;
                if seen_slots == digit_slots {
                    out_int.push(digits.drain(..).collect());
                } else if let Some(d) = digits.pop() {
                    out_int.push(d.to_string());
                }
            }
            Piece::Literal(text) => out_int.push(text.clone()),
            Piece::Percent => out_int.push("%".into()),
            Piece::Comma | Piece::Point => {}
        }
    }
    out_int.reverse();
    let mut int_text: String = out_int.concat();
    if grouping {
        // Group the digits; literals around them keep their places.
        let start = int_text.find(|c: char| c.is_ascii_digit());
        let end = int_text.rfind(|c: char| c.is_ascii_digit());
        if let (Some(s), Some(e)) = (start, end) {
            let grouped = group_thousands(&int_text[s..=e]);
            int_text = format!("{}{}{}", &int_text[..s], grouped, &int_text[e + 1..]);
        }
    }

    let keep = frac_digits.trim_end_matches('0').len().max(min_decimals);
    let mut frac_chars = frac_digits.chars().take(keep);
    let mut frac_text = String::new();
    for piece in frac_part {
        match piece {
            Piece::Zero | Piece::Hash => {
                if let Some(d) = frac_chars.next() {
                    frac_text.push(d);
                }
            }
            Piece::Literal(text) => frac_text.push_str(text),
            Piece::Percent => frac_text.push('%'),
            Piece::Comma | Piece::Point => {}
        }
    }
    let text =
        if keep > 0 { format!("{int_text}.{frac_text}") } else { format!("{int_text}{frac_text}") };
    Some((text, zero))
}

/// A date/time with a standard or custom .NET format.
fn format_moment(m: DateTime2, offset: Option<i16>, pattern: &str) -> Option<String> {
    let custom = match pattern {
        "d" => "M/d/yyyy",
        "D" => "dddd, MMMM d, yyyy",
        "t" => "h:mm tt",
        "T" => "h:mm:ss tt",
        "f" => "dddd, MMMM d, yyyy h:mm tt",
        "F" => "dddd, MMMM d, yyyy h:mm:ss tt",
        "g" => "M/d/yyyy h:mm tt",
        "G" => "M/d/yyyy h:mm:ss tt",
        "M" | "m" => "MMMM d",
        "Y" | "y" => "MMMM yyyy",
        "s" => "yyyy-MM-dd'T'HH:mm:ss",
        "u" => "yyyy-MM-dd HH:mm:ss'Z'",
        // A DATETIMEOFFSET's round-trip form ends in its offset, as .NET's does.
        "O" | "o" if offset.is_some() => "yyyy-MM-dd'T'HH:mm:ss.fffffffzzz",
        "O" | "o" => "yyyy-MM-dd'T'HH:mm:ss.fffffff",
        p if p.chars().count() == 1 => return None,
        p => p.strip_prefix('%').unwrap_or(p),
    };
    let (year, month, day) = m.date.ymd();
    let (hour, minute, second, ticks) = m.time.hms();
    let mut out = String::new();
    let chars: Vec<char> = custom.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        let mut used = run;
        match c {
            'y' => match run {
                1 => out.push_str(&(year % 100).to_string()),
                2 => out.push_str(&format!("{:02}", year % 100)),
                n => out.push_str(&format!("{year:0n$}")),
            },
            'M' => match run {
                1 => out.push_str(&month.to_string()),
                2 => out.push_str(&format!("{month:02}")),
                3 => out.push_str(&MONTHS[usize::from(month) - 1][..3]),
                _ => out.push_str(MONTHS[usize::from(month) - 1]),
            },
            'd' => match run {
                1 => out.push_str(&day.to_string()),
                2 => out.push_str(&format!("{day:02}")),
                3 => out.push_str(&DAYS[weekday(m.date) as usize][..3]),
                _ => out.push_str(DAYS[weekday(m.date) as usize]),
            },
            'H' | 'h' | 'm' | 's' => {
                let v = match c {
                    'H' => hour,
                    'h' if hour % 12 == 0 => 12,
                    'h' => hour % 12,
                    'm' => minute,
                    _ => second,
                };
                used = clock_field(&mut out, v.into(), run);
            }
            'f' | 'F' => fraction(&mut out, c, ticks.into(), run)?,
            // The offset (a DATETIMEOFFSET's; +00:00 for the other types): `z` hours, `zz`
            // two-digit hours, `zzz` (and `K`) hours and minutes.
            'z' | 'K' => {
                let minutes = offset.unwrap_or(0);
                let sign = if minutes < 0 { '-' } else { '+' };
                let (h, mm) = (minutes.unsigned_abs() / 60, minutes.unsigned_abs() % 60);
                match (c, run) {
                    ('z', 1) => out.push_str(&format!("{sign}{h}")),
                    ('z', 2) => out.push_str(&format!("{sign}{h:02}")),
                    ('K', _) if offset.is_none() => used = 1,
                    _ => {
                        out.push_str(&format!("{sign}{h:02}:{mm:02}"));
                        used = if c == 'K' { 1 } else { run.min(3) };
                    }
                }
            }
            't' => {
                used = run.min(2);
                let ampm = if hour < 12 { "AM" } else { "PM" };
                out.push_str(if used == 1 { &ampm[..1] } else { ampm });
            }
            '\\' | '\'' | '"' | '%' => used = literal(&mut out, &chars[i..])?,
            other => {
                out.push(other);
                used = 1;
            }
        }
        i += used;
    }
    Some(out)
}

/// A TIME as .NET formats a TimeSpan: standard `c`/`g`/`G`, or custom `hh mm ss f...` with
/// every literal escaped (an unescaped `:` is not a valid TimeSpan format: NULL).
fn format_time_span(ticks: u64, pattern: &str) -> Option<String> {
    let total_seconds = ticks / 10_000_000;
    let (h, m, s) = (total_seconds / 3600, total_seconds / 60 % 60, total_seconds % 60);
    let fraction_ticks = ticks % 10_000_000;
    match pattern {
        "c" | "t" | "T" => {
            let base = format!("{h:02}:{m:02}:{s:02}");
            return Some(if fraction_ticks > 0 {
                format!("{base}.{fraction_ticks:07}")
            } else {
                base
            });
        }
        "g" => {
            let base = format!("{h}:{m:02}:{s:02}");
            let f = format!("{fraction_ticks:07}");
            let f = f.trim_end_matches('0');
            return Some(if f.is_empty() { base } else { format!("{base}.{f}") });
        }
        "G" => return Some(format!("0:{h:02}:{m:02}:{s:02}.{fraction_ticks:07}")),
        _ => {}
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        let used = match c {
            'h' => clock_field(&mut out, h, run),
            'm' => clock_field(&mut out, m, run),
            's' => clock_field(&mut out, s, run),
            'f' | 'F' => {
                fraction(&mut out, c, fraction_ticks, run)?;
                run
            }
            '\\' | '\'' | '"' | '%' => literal(&mut out, &chars[i..])?,
            _ => return None,
        };
        i += used;
    }
    Some(out)
}

/// An hour, minute or second field of a custom format: one digit run gives the value as is,
/// two or more give it in two digits (consuming two). Returns the pattern characters used.
fn clock_field(out: &mut String, value: u64, run: usize) -> usize {
    if run == 1 {
        out.push_str(&value.to_string());
    } else {
        out.push_str(&format!("{value:02}"));
    }
    run.min(2)
}

/// `run` digits (at most 7) of a second's fraction given in 100 ns ticks; `F` drops trailing
/// zeros. `None` for more than 7, which .NET refuses.
fn fraction(out: &mut String, c: char, ticks: u64, run: usize) -> Option<()> {
    if run > 7 {
        return None;
    }
    let digits = format!("{ticks:07}");
    let part = &digits[..run];
    out.push_str(if c == 'F' { part.trim_end_matches('0') } else { part });
    Some(())
}

/// A literal at the start of `chars`: `\x`, `'text'`, `"text"`, or the `%` that marks a
/// one-letter custom format. Returns the pattern characters used; `None` if unterminated.
fn literal(out: &mut String, chars: &[char]) -> Option<usize> {
    match chars.first()? {
        '%' => Some(1),
        '\\' => {
            out.push(*chars.get(1)?);
            Some(2)
        }
        &quote => {
            let end = chars[1..].iter().position(|&x| x == quote)?;
            out.extend(&chars[1..1 + end]);
            Some(end + 2)
        }
    }
}
