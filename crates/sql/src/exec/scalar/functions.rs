//! Built-in scalar functions: the string, math and NULL functions (date functions are in
//! [`dates`](super::dates); the registry, [`registry`](super::registry), says which name
//! runs which, with how many arguments).
//!
//! Functions take already-evaluated arguments. As in SQL Server, a NULL argument gives NULL
//! (except CONCAT, CONCAT_WS, ISNULL, COALESCE, NULLIF, ISNUMERIC and ISDATE), string
//! functions convert other types to their text first, and text matching (REPLACE, CHARINDEX)
//! is case-insensitive like the default collation.

use std::cell::Cell;
use std::cmp::Ordering;
use std::hash::{BuildHasher, Hasher};

use walden_engine::types::{Decimal, Guid, Len, SqlType, Value, MAX_LOB_LEN};

use super::compare::{compare, fold};
use super::convert::{
    coerce, convert, float_to_decimal, parse_float_text, parse_money_text, to_float,
};
use super::num::pow10;
use super::temporal::{self, DateOrder};
use super::text::to_text;
use super::types::{common_type, type_label, type_of, value_label};
use crate::exec::SqlError;

/// The arguments, padded with NULLs to `N` (the dispatcher has checked the count).
fn take<const N: usize>(args: Vec<Value>) -> [Value; N] {
    let mut it = args.into_iter();
    std::array::from_fn(|_| it.next().unwrap_or(Value::Null))
}

/// A string argument's text and whether it is national; other types as their text; `None`
/// for NULL.
fn text_arg(v: Value) -> Option<(String, bool)> {
    match v {
        Value::Null => None,
        Value::Str(s) => Some((s, false)),
        Value::NStr(s) => Some((s, true)),
        other => Some((to_text(&other), false)),
    }
}

fn text_value(s: String, national: bool) -> Value {
    if national {
        Value::NStr(s)
    } else {
        Value::Str(s)
    }
}

/// An integer argument (decimals truncate, text converts); `None` for NULL.
fn int_arg(v: Value) -> Result<Option<i64>, SqlError> {
    match coerce(v, SqlType::BigInt, true)? {
        Value::BigInt(n) => Ok(Some(n)),
        _ => Ok(None),
    }
}

/// An INT result, or BIGINT beyond INT's range (as SQL Server does for `(max)` strings).
fn count_value(n: usize) -> Value {
    match i32::try_from(n) {
        Ok(n) => Value::Int(n),
        Err(_) => Value::BigInt(i64::try_from(n).unwrap_or(i64::MAX)),
    }
}

pub(super) fn len(args: Vec<Value>) -> Result<Value, SqlError> {
    let [v] = take(args);
    Ok(match v {
        Value::Null => Value::Null,
        Value::Binary(b) => count_value(b.len()),
        other => match text_arg(other) {
            Some((s, _)) => count_value(s.trim_end_matches(' ').chars().count()),
            None => Value::Null,
        },
    })
}

pub(super) fn datalength(args: Vec<Value>) -> Result<Value, SqlError> {
    let [v] = take(args);
    let n = match &v {
        Value::Null => return Ok(Value::Null),
        Value::TinyInt(_) | Value::Bit(_) => 1,
        Value::SmallInt(_) => 2,
        Value::Int(_) | Value::Real(_) => 4,
        Value::BigInt(_) | Value::Float(_) | Value::Money(_) | Value::DateTime(_) => 8,
        Value::DateTime2(_) => 8,
        Value::DateTimeOffset(_) => 10,
        Value::Date(_) => 3,
        Value::Time(_) => 5,
        Value::Guid(_) => 16,
        Value::Decimal(d) => match super::types::decimal_precision(*d) {
            0..=9 => 5,
            10..=19 => 9,
            20..=28 => 13,
            _ => 17,
        },
        Value::Str(s) => s.len(),
        Value::NStr(s) => 2 * s.encode_utf16().count(),
        // SQL Server stores xml in a binary form of its own; its text as UTF-16 is the
        // closest size Walden has.
        Value::Xml(x) => 2 * x.text().encode_utf16().count(),
        Value::Binary(b) => b.len(),
    };
    Ok(count_value(n))
}

pub(super) fn left_right(args: Vec<Value>, right: bool) -> Result<Value, SqlError> {
    let [s, n] = take(args);
    let Some(n) = int_arg(n)? else {
        return Ok(Value::Null);
    };
    let Ok(n) = usize::try_from(n) else {
        let which = if right { "right" } else { "left" };
        return Err(SqlError::new(
            536,
            format!("Invalid length parameter passed to the {which} function."),
        ));
    };
    Ok(match s {
        Value::Null => Value::Null,
        Value::Binary(b) => {
            let keep = n.min(b.len());
            Value::Binary(if right { b[b.len() - keep..].to_vec() } else { b[..keep].to_vec() })
        }
        other => match text_arg(other) {
            Some((s, national)) => {
                let count = s.chars().count();
                let out: String = if right {
                    s.chars().skip(count.saturating_sub(n)).collect()
                } else {
                    s.chars().take(n).collect()
                };
                text_value(out, national)
            }
            None => Value::Null,
        },
    })
}

pub(super) fn substring(args: Vec<Value>) -> Result<Value, SqlError> {
    let [s, start, length] = take(args);
    let (Some(start), Some(length)) = (int_arg(start)?, int_arg(length)?) else {
        return Ok(Value::Null);
    };
    if length < 0 {
        return Err(SqlError::new(
            537,
            "Invalid length parameter passed to the substring function.",
        ));
    }
    // Characters start..start+length (1-based, end excluded), clipped to the string: a start
    // at or before 0 eats into the length.
    let from = start.max(1);
    let to = start.saturating_add(length);
    let (skip, count) = if to <= from {
        (0, 0)
    } else {
        (
            usize::try_from(from - 1).unwrap_or(usize::MAX),
            usize::try_from(to - from).unwrap_or(usize::MAX),
        )
    };
    Ok(match s {
        Value::Null => Value::Null,
        Value::Binary(b) => Value::Binary(b.into_iter().skip(skip).take(count).collect()),
        other => match text_arg(other) {
            Some((s, national)) => text_value(s.chars().skip(skip).take(count).collect(), national),
            None => Value::Null,
        },
    })
}

pub(super) fn trim(args: Vec<Value>, left: bool, right: bool) -> Result<Value, SqlError> {
    let [s, chars] = take(args);
    let Some((s, national)) = text_arg(s) else {
        return Ok(Value::Null);
    };
    let set: Vec<char> = match chars {
        Value::Null => vec![' '],
        other => match text_arg(other) {
            Some((c, _)) => c.chars().collect(),
            None => vec![' '],
        },
    };
    let mut t = s.as_str();
    if left {
        t = t.trim_start_matches(set.as_slice());
    }
    if right {
        t = t.trim_end_matches(set.as_slice());
    }
    Ok(text_value(t.to_string(), national))
}

pub(super) fn map_text(args: Vec<Value>, f: fn(&str) -> String) -> Result<Value, SqlError> {
    let [s] = take(args);
    Ok(match text_arg(s) {
        Some((s, national)) => text_value(f(&s), national),
        None => Value::Null,
    })
}

/// Byte offsets of the case-folded occurrences of `find` in `s`, left to right, not
/// overlapping, starting at character `from`.
fn find_folded(s: &str, find: &str, from: usize, first_only: bool) -> Vec<(usize, usize)> {
    let needle: Vec<char> = find.chars().map(fold).collect();
    let hay: Vec<(usize, char)> = s.char_indices().map(|(i, c)| (i, fold(c))).collect();
    let mut hits = Vec::new();
    if needle.is_empty() {
        return hits;
    }
    let mut i = from;
    while i + needle.len() <= hay.len() {
        if hay[i..i + needle.len()].iter().map(|(_, c)| *c).eq(needle.iter().copied()) {
            let end = hay.get(i + needle.len()).map_or(s.len(), |(b, _)| *b);
            hits.push((hay[i].0, end));
            if first_only {
                break;
            }
            i += needle.len();
        } else {
            i += 1;
        }
    }
    hits
}

pub(super) fn replace(args: Vec<Value>) -> Result<Value, SqlError> {
    let [s, find, with] = take(args);
    let (Some((s, n1)), Some((find, n2)), Some((with, n3))) =
        (text_arg(s), text_arg(find), text_arg(with))
    else {
        return Ok(Value::Null);
    };
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (start, end) in find_folded(&s, &find, 0, false) {
        out.push_str(&s[last..start]);
        out.push_str(&with);
        last = end;
    }
    out.push_str(&s[last..]);
    Ok(text_value(out, n1 || n2 || n3))
}

/// `CHOOSE(index, value, ...)`: the index-th value (from 1), NULL outside the list.
pub(super) fn choose(mut args: Vec<Value>) -> Result<Value, SqlError> {
    let index = int_arg(args.remove(0))?;
    Ok(match index {
        Some(i) if i >= 1 && (i as usize) <= args.len() => args.swap_remove(i as usize - 1),
        _ => Value::Null,
    })
}

/// `TRANSLATE(text, characters, translations)`: each character of the second argument
/// replaced by the one at the same place in the third (error 9828 if their lengths differ).
pub(super) fn translate(args: Vec<Value>) -> Result<Value, SqlError> {
    let [s, from, to] = take(args);
    let (Some((s, n1)), Some((from, _)), Some((to, _))) =
        (text_arg(s), text_arg(from), text_arg(to))
    else {
        return Ok(Value::Null);
    };
    let from: Vec<char> = from.chars().collect();
    let to: Vec<char> = to.chars().collect();
    if from.len() != to.len() {
        return Err(SqlError::new(
            9828,
            "The second and third arguments of the TRANSLATE built-in function must contain an \
             equal number of characters.",
        ));
    }
    let out = s.chars().map(|c| from.iter().position(|&f| f == c).map_or(c, |i| to[i])).collect();
    Ok(text_value(out, n1))
}

pub(super) fn charindex(args: Vec<Value>) -> Result<Value, SqlError> {
    let [find, s, start] = take(args);
    let (Some((find, _)), Some((s, _))) = (text_arg(find), text_arg(s)) else {
        return Ok(Value::Null);
    };
    let from = match start {
        Value::Null => 0,
        other => match int_arg(other)? {
            Some(n) => usize::try_from(n.max(1) - 1).unwrap_or(usize::MAX),
            None => return Ok(Value::Null),
        },
    };
    let position = find_folded(&s, &find, from, true)
        .first()
        .map_or(0, |(byte, _)| s[..*byte].chars().count() + 1);
    Ok(count_value(position))
}

pub(super) fn concat(args: Vec<Value>) -> Result<Value, SqlError> {
    let national = args.iter().any(|v| matches!(v, Value::NStr(_)));
    let mut out = String::new();
    for v in &args {
        match v {
            Value::Str(s) | Value::NStr(s) => out.push_str(s),
            other => out.push_str(&to_text(other)),
        }
    }
    Ok(text_value(out, national))
}

pub(super) fn concat_ws(args: Vec<Value>) -> Result<Value, SqlError> {
    let national = args.iter().any(|v| matches!(v, Value::NStr(_)));
    let mut it = args.into_iter();
    let Some((sep, _)) = it.next().and_then(text_arg) else {
        return Ok(Value::Null);
    };
    let parts: Vec<String> = it.filter(|v| !v.is_null()).map(|v| to_text(&v)).collect();
    Ok(text_value(parts.join(&sep), national))
}

pub(super) fn replicate(args: Vec<Value>) -> Result<Value, SqlError> {
    let [s, n] = take(args);
    let (Some((s, national)), Some(n)) = (text_arg(s), int_arg(n)?) else {
        return Ok(Value::Null);
    };
    let Ok(n) = usize::try_from(n) else {
        return Ok(Value::Null);
    };
    if s.len().saturating_mul(n) > MAX_LOB_LEN {
        return Err(SqlError::new(
            7119,
            "Attempting to grow LOB beyond maximum allowed size of 2,147,483,647 bytes.",
        ));
    }
    Ok(text_value(s.repeat(n), national))
}

pub(super) fn space(args: Vec<Value>) -> Result<Value, SqlError> {
    let [n] = take(args);
    Ok(match int_arg(n)?.map(usize::try_from) {
        // SPACE returns VARCHAR, at most 8000 characters.
        Some(Ok(n)) => Value::Str(" ".repeat(n.min(8000))),
        _ => Value::Null,
    })
}

/// STR(number [, length [, decimals]]): right-aligned in `length` characters (default 10) with
/// `decimals` decimals (default 0, at most 16), fewer decimals if that is what fits, `*`s if
/// the integral part does not.
pub(super) fn str_fn(args: Vec<Value>) -> Result<Value, SqlError> {
    let [x, length, decimals] = take(args);
    if x.is_null() {
        return Ok(Value::Null);
    }
    let x = to_float(&coerce(x, SqlType::Float, true)?)?;
    let length = if length.is_null() { Some(10) } else { int_arg(length)? };
    let decimals = if decimals.is_null() { Some(0) } else { int_arg(decimals)? };
    let (Some(length), Some(decimals)) = (length, decimals) else {
        return Ok(Value::Null);
    };
    let (Ok(length), Ok(mut decimals)) = (usize::try_from(length), usize::try_from(decimals))
    else {
        return Ok(Value::Null);
    };
    if length == 0 || length > 8000 {
        return Ok(Value::Null);
    }
    decimals = decimals.min(16);
    loop {
        let text = format!("{x:.decimals$}");
        if text.len() <= length {
            return Ok(Value::Str(format!("{text:>length$}")));
        }
        if decimals == 0 {
            return Ok(Value::Str("*".repeat(length)));
        }
        decimals = decimals.saturating_sub(text.len() - length).min(decimals - 1);
    }
}

/// STUFF(s, start, length, insert): `length` characters from `start` replaced; NULL for a start
/// outside the string or a negative length.
pub(super) fn stuff(args: Vec<Value>) -> Result<Value, SqlError> {
    let [s, start, length, insert] = take(args);
    let (Some((s, national)), Some(start), Some(length)) =
        (text_arg(s), int_arg(start)?, int_arg(length)?)
    else {
        return Ok(Value::Null);
    };
    let chars: Vec<char> = s.chars().collect();
    let (Ok(start), Ok(length)) = (usize::try_from(start), usize::try_from(length)) else {
        return Ok(Value::Null);
    };
    if start == 0 || start > chars.len() {
        return Ok(Value::Null);
    }
    let (insert, n2) = text_arg(insert).unwrap_or_default();
    let end = (start - 1).saturating_add(length).min(chars.len());
    let mut out: String = chars[..start - 1].iter().collect();
    out.push_str(&insert);
    out.extend(&chars[end..]);
    Ok(text_value(out, national || n2))
}

pub(super) fn first_char_code(args: Vec<Value>, unicode: bool) -> Result<Value, SqlError> {
    let [s] = take(args);
    Ok(match text_arg(s).and_then(|(s, _)| s.chars().next()) {
        // ASCII gives the code of a single-byte character; beyond Latin-1 there is none.
        Some(c) if unicode || u32::from(c) < 256 => Value::Int(u32::from(c) as i32),
        Some(_) => Value::Int(63),
        None => Value::Null,
    })
}

pub(super) fn char_of(args: Vec<Value>, national: bool) -> Result<Value, SqlError> {
    let [n] = take(args);
    let limit = if national { 0x10FFFF } else { 255 };
    Ok(match int_arg(n)? {
        Some(code) if (0..=limit).contains(&code) => {
            match u32::try_from(code).ok().and_then(char::from_u32) {
                Some(c) => text_value(c.to_string(), national),
                None => Value::Null,
            }
        }
        _ => Value::Null,
    })
}

pub(super) fn quotename(args: Vec<Value>) -> Result<Value, SqlError> {
    let [s, quote] = take(args);
    let Some((s, _)) = text_arg(s) else {
        return Ok(Value::Null);
    };
    let quote = match text_arg(quote) {
        None => '[',
        Some((q, _)) => q.chars().next().unwrap_or('['),
    };
    let (open, close) = match quote {
        '[' | ']' => ('[', ']'),
        '"' => ('"', '"'),
        '\'' => ('\'', '\''),
        '(' | ')' => ('(', ')'),
        '<' | '>' => ('<', '>'),
        '{' | '}' => ('{', '}'),
        '`' => ('`', '`'),
        _ => return Ok(Value::Null),
    };
    if s.chars().count() > 128 {
        return Ok(Value::Null);
    }
    let escaped = s.replace(close, &format!("{close}{close}"));
    Ok(Value::NStr(format!("{open}{escaped}{close}")))
}

/// `PARSENAME(name, piece)`: part `piece` of a name of up to four dot-separated parts (1 the
/// object, 2 the schema, 3 the database, 4 the server), without its `[...]` or `"..."`
/// delimiters; NULL for a piece outside 1-4, a part the name lacks or leaves empty, or a
/// text that is not such a name (five parts, an unclosed delimiter).
pub(super) fn parsename(args: Vec<Value>) -> Result<Value, SqlError> {
    let [name, piece] = take(args);
    let (Some((name, _)), Some(piece)) = (text_arg(name), int_arg(piece)?) else {
        return Ok(Value::Null);
    };
    let Some(parts) = name_parts(&name) else { return Ok(Value::Null) };
    let Some(index) = usize::try_from(piece).ok().filter(|p| (1..=4).contains(p)) else {
        return Ok(Value::Null);
    };
    Ok(match parts.len().checked_sub(index).and_then(|i| parts.get(i)) {
        Some(part) if !part.is_empty() => Value::NStr(part.clone()),
        _ => Value::Null,
    })
}

/// The parts of a multi-part name, delimiters removed (`]]` inside `[...]` and `""` inside
/// `"..."` are one character); None if it is not a name of at most four parts.
fn name_parts(name: &str) -> Option<Vec<String>> {
    let mut parts = vec![String::new()];
    let mut chars = name.chars().peekable();
    let mut fresh = true;
    while let Some(c) = chars.next() {
        let close = match c {
            '.' => {
                parts.push(String::new());
                fresh = true;
                continue;
            }
            '[' if fresh => ']',
            '"' if fresh => '"',
            _ => {
                parts.last_mut()?.push(c);
                fresh = false;
                continue;
            }
        };
        // A delimited part: up to its closing delimiter, which must end the part.
        let part = parts.last_mut()?;
        loop {
            match chars.next()? {
                d if d == close && chars.peek() == Some(&close) => {
                    chars.next();
                    part.push(d);
                }
                d if d == close => break,
                d => part.push(d),
            }
        }
        if chars.peek().is_some_and(|&n| n != '.') {
            return None;
        }
        fresh = false;
    }
    (parts.len() <= 4).then_some(parts)
}

/// Msg 8116 for an argument of a type a math function does not take.
fn invalid_argument(v: &Value, func: &str) -> SqlError {
    SqlError::new(
        8116,
        format!(
            "Argument data type {} is invalid for argument 1 of {func} function.",
            value_label(v)
        ),
    )
}

fn invalid_float_operation() -> SqlError {
    SqlError::new(3623, "An invalid floating point operation occurred.")
}

/// A float result: NaN (a domain error) is Msg 3623, infinity Msg 8115.
fn float_result(x: f64) -> Result<Value, SqlError> {
    if x.is_nan() {
        Err(invalid_float_operation())
    } else if x.is_infinite() {
        Err(SqlError::overflow("float"))
    } else {
        Ok(Value::Float(x))
    }
}

pub(super) fn float_fn(args: Vec<Value>, f: fn(f64) -> f64) -> Result<Value, SqlError> {
    let [x] = take(args);
    if x.is_null() {
        return Ok(Value::Null);
    }
    float_result(f(to_float(&coerce(x, SqlType::Float, true)?)?))
}

pub(super) fn log(args: Vec<Value>) -> Result<Value, SqlError> {
    let [x, base] = take(args);
    if x.is_null() {
        return Ok(Value::Null);
    }
    let x = to_float(&coerce(x, SqlType::Float, true)?)?;
    if x <= 0.0 {
        return Err(invalid_float_operation());
    }
    match base {
        Value::Null => float_result(x.ln()),
        base => {
            let b = to_float(&coerce(base, SqlType::Float, true)?)?;
            if b <= 0.0 || b == 1.0 {
                return Err(invalid_float_operation());
            }
            float_result(x.ln() / b.ln())
        }
    }
}

pub(super) fn atn2(args: Vec<Value>) -> Result<Value, SqlError> {
    let [y, x] = take(args);
    if y.is_null() || x.is_null() {
        return Ok(Value::Null);
    }
    let y = to_float(&coerce(y, SqlType::Float, true)?)?;
    let x = to_float(&coerce(x, SqlType::Float, true)?)?;
    float_result(y.atan2(x))
}

/// Numeric arguments of the math functions that keep their argument's type: text becomes FLOAT,
/// as SQL Server converts it.
fn numeric_arg(v: Value, func: &str) -> Result<Value, SqlError> {
    match v {
        Value::Str(_) | Value::NStr(_) => coerce(v, SqlType::Float, true),
        Value::Null => Ok(v),
        ref n if n.is_numeric() => Ok(v),
        other => Err(invalid_argument(&other, func)),
    }
}

pub(super) fn abs(args: Vec<Value>) -> Result<Value, SqlError> {
    let [x] = take(args);
    Ok(match numeric_arg(x, "abs")? {
        Value::SmallInt(v) => {
            Value::SmallInt(v.checked_abs().ok_or_else(|| SqlError::overflow("smallint"))?)
        }
        Value::Int(v) => Value::Int(v.checked_abs().ok_or_else(|| SqlError::overflow("int"))?),
        Value::BigInt(v) => {
            Value::BigInt(v.checked_abs().ok_or_else(|| SqlError::overflow("bigint"))?)
        }
        Value::Decimal(d) => {
            Value::Decimal(Decimal::new(d.mantissa().abs(), d.scale()).unwrap_or(d))
        }
        Value::Float(v) => Value::Float(v.abs()),
        Value::Real(v) => Value::Real(v.abs()),
        Value::Money(m) => {
            Value::Money(m.checked_abs().ok_or_else(|| SqlError::overflow("money"))?)
        }
        other => other,
    })
}

/// `m / 10^scale` rounded (or truncated) to `places` decimals, still at `scale`; `None` if the
/// result has more than 38 digits.
fn round_exact(m: i128, scale: u8, places: i64, truncate: bool) -> Option<i128> {
    let drop = i64::from(scale) - places;
    if drop <= 0 {
        return Some(m);
    }
    if drop > 38 {
        return Some(0);
    }
    // 1 <= drop <= 38.
    let divisor = pow10(drop as u8);
    let (q, r) = (m / divisor, m % divisor);
    let q = if !truncate && r.unsigned_abs() * 2 >= divisor.unsigned_abs() {
        q + m.signum()
    } else {
        q
    };
    q.checked_mul(divisor)
}

pub(super) fn round(args: Vec<Value>) -> Result<Value, SqlError> {
    let [x, places, function] = take(args);
    let x = numeric_arg(x, "round")?;
    let Some(places) = int_arg(places)? else {
        return Ok(Value::Null);
    };
    let truncate = int_arg(function)?.unwrap_or(0) != 0;
    let int = |v: i64, ty: SqlType| -> Result<Value, SqlError> {
        let r = round_exact(i128::from(v), 0, places, truncate)
            .ok_or_else(|| SqlError::overflow(type_label(&ty)))?;
        let back = i64::try_from(r).map_err(|_| SqlError::overflow(type_label(&ty)))?;
        convert(Value::BigInt(back), ty, None).map_err(|_| SqlError::overflow(type_label(&ty)))
    };
    let float = |v: f64| -> f64 {
        let shift = |y: f64| if truncate { y.trunc() } else { y.round() };
        let p = 10f64.powi(i32::try_from(places.unsigned_abs()).unwrap_or(i32::MAX));
        if !p.is_finite() {
            return if places > 0 { v } else { 0.0 };
        }
        if places >= 0 {
            shift(v * p) / p
        } else {
            shift(v / p) * p
        }
    };
    Ok(match x {
        Value::Null => Value::Null,
        Value::TinyInt(v) => int(i64::from(v), SqlType::TinyInt)?,
        Value::SmallInt(v) => int(i64::from(v), SqlType::SmallInt)?,
        Value::Int(v) => int(i64::from(v), SqlType::Int)?,
        Value::BigInt(v) => int(v, SqlType::BigInt)?,
        Value::Decimal(d) => {
            let m = round_exact(d.mantissa(), d.scale(), places, truncate)
                .ok_or_else(|| SqlError::overflow("numeric"))?;
            Value::Decimal(Decimal::new(m, d.scale()).ok_or_else(|| SqlError::overflow("numeric"))?)
        }
        Value::Money(m) => {
            let r = round_exact(i128::from(m), 4, places, truncate)
                .and_then(|r| i64::try_from(r).ok())
                .ok_or_else(|| SqlError::overflow("money"))?;
            Value::Money(r)
        }
        Value::Float(v) => Value::Float(float(v)),
        Value::Real(v) => Value::Real(float(f64::from(v)) as f32),
        other => other,
    })
}

pub(super) fn floor_ceiling(args: Vec<Value>, ceiling: bool) -> Result<Value, SqlError> {
    let [x] = take(args);
    let func = if ceiling { "ceiling" } else { "floor" };
    Ok(match numeric_arg(x, func)? {
        Value::Decimal(d) => {
            let unit = pow10(d.scale());
            let (q, r) = (d.mantissa() / unit, d.mantissa() % unit);
            let q = if ceiling && r > 0 {
                q + 1
            } else if !ceiling && r < 0 {
                q - 1
            } else {
                q
            };
            Value::Decimal(Decimal::new(q, 0).ok_or_else(|| SqlError::overflow("numeric"))?)
        }
        Value::Float(v) => Value::Float(if ceiling { v.ceil() } else { v.floor() }),
        Value::Real(v) => Value::Real(if ceiling { v.ceil() } else { v.floor() }),
        Value::Money(m) => {
            let whole = if ceiling {
                m.div_euclid(10_000) + i64::from(m.rem_euclid(10_000) != 0)
            } else {
                m.div_euclid(10_000)
            };
            Value::Money(whole.checked_mul(10_000).ok_or_else(|| SqlError::overflow("money"))?)
        }
        other => other,
    })
}

/// POWER(x, y): the type of x (INT for the narrower integers, DECIMAL at x's scale), computed
/// exactly for integers raised to a whole power and in floating point otherwise.
pub(super) fn power(args: Vec<Value>) -> Result<Value, SqlError> {
    let [x, y] = take(args);
    let x = numeric_arg(x, "power")?;
    if x.is_null() || y.is_null() {
        return Ok(Value::Null);
    }
    let y = to_float(&coerce(y, SqlType::Float, true)?)?;
    let real = || -> Result<f64, SqlError> {
        let r = to_float(&x)?.powf(y);
        if r.is_nan() {
            Err(invalid_float_operation())
        } else if r.is_infinite() {
            Err(SqlError::overflow("float"))
        } else {
            Ok(r)
        }
    };
    match &x {
        Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::Bit(_)
        | Value::BigInt(_) => {
            let ty = if matches!(x, Value::BigInt(_)) { SqlType::BigInt } else { SqlType::Int };
            let overflow = || SqlError::overflow(type_label(&ty));
            let base = match coerce(x.clone(), SqlType::BigInt, true)? {
                Value::BigInt(b) => b,
                _ => 0,
            };
            let r = if y >= 0.0 && y.fract() == 0.0 && y <= f64::from(u32::MAX) {
                base.checked_pow(y as u32).ok_or_else(overflow)?
            } else {
                let r = real()?.trunc();
                if r < i64::MIN as f64 || r >= i64::MAX as f64 {
                    return Err(overflow());
                }
                r as i64
            };
            convert(Value::BigInt(r), ty, None).map_err(|_| overflow())
        }
        Value::Decimal(d) => float_to_decimal(real()?, d.scale())
            .map(Value::Decimal)
            .ok_or_else(|| SqlError::overflow("numeric")),
        Value::Money(_) => coerce(Value::Float(real()?), SqlType::Money, true),
        _ => Ok(Value::Float(real()?)),
    }
}

/// SIGN(x): -1, 0 or 1 in x's type, except that the narrower integers give INT and REAL
/// gives FLOAT, as SQL Server's result types say.
pub(super) fn sign(args: Vec<Value>) -> Result<Value, SqlError> {
    let [x] = take(args);
    Ok(match numeric_arg(x, "sign")? {
        Value::TinyInt(v) => Value::Int(i32::from(v != 0)),
        Value::SmallInt(v) => Value::Int(i32::from(v.signum())),
        Value::Int(v) => Value::Int(v.signum()),
        Value::BigInt(v) => Value::BigInt(v.signum()),
        Value::Decimal(d) => Value::Decimal(
            Decimal::new(d.mantissa().signum() * pow10(d.scale()), d.scale()).unwrap_or(d),
        ),
        Value::Float(v) => Value::Float(if v == 0.0 { 0.0 } else { v.signum() }),
        Value::Real(v) => Value::Float(if v == 0.0 { 0.0 } else { f64::from(v.signum()) }),
        Value::Money(m) => Value::Money(m.signum() * 10_000),
        other => other,
    })
}

/// SplitMix64: a small, fast, well-distributed generator; statistical quality is all RAND and
/// NEWID need (NEWID's uniqueness rests on 122 random bits from a randomly seeded state).
fn splitmix(state: &Cell<u64>) -> u64 {
    let s = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
    state.set(s);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed nobody can predict: std's hasher keys are random per process and differ per call.
fn random_seed() -> u64 {
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

thread_local! {
    /// RAND's generator; `RAND(seed)` reseeds it, as in SQL Server (per connection there, per
    /// thread here).
    static RAND_STATE: Cell<u64> = Cell::new(random_seed());
    /// NEWID's generator, never reseeded by users.
    static GUID_STATE: Cell<u64> = Cell::new(random_seed());
}

/// RAND([seed]): a FLOAT in [0, 1).
pub(super) fn rand(args: Vec<Value>) -> Result<Value, SqlError> {
    let [seed] = take(args);
    let seed = int_arg(seed)?;
    let x = RAND_STATE.with(|state| {
        if let Some(seed) = seed {
            // Scrambled so that nearby seeds start far apart.
            state.set((seed as u64).wrapping_mul(0xD134_2543_DE82_EF95));
        }
        splitmix(state)
    });
    // 53 random bits make every f64 step in [0, 1) equally likely.
    Ok(Value::Float((x >> 11) as f64 / (1u64 << 53) as f64))
}

/// A random (version 4) GUID.
pub(super) fn new_guid() -> Guid {
    let (a, b) = GUID_STATE.with(|state| (splitmix(state), splitmix(state)));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_le_bytes());
    bytes[8..].copy_from_slice(&b.to_le_bytes());
    // The version nibble leads the third group, whose two bytes are stored swapped (byte 7 is
    // its high byte); the variant bits lead the fourth group, stored in order (byte 8).
    bytes[7] = (bytes[7] & 0x0F) | 0x40;
    bytes[8] = (bytes[8] & 0x3F) | 0x80;
    Guid(bytes)
}

/// ISNULL(a, b): `a` unless it is NULL, then `b`. SQL Server converts `b` to `a`'s declared
/// type; a NULL value carries no type here, so the caller converts when it knows that type.
pub(super) fn isnull(args: Vec<Value>) -> Result<Value, SqlError> {
    let [a, b] = take(args);
    Ok(if a.is_null() { b } else { a })
}

/// COALESCE(...): the first non-NULL argument, converted to the type of highest precedence
/// among the non-NULL arguments (so `COALESCE('a', 1)` is Msg 245, as in SQL Server).
pub(super) fn coalesce(args: Vec<Value>) -> Result<Value, SqlError> {
    let Some(ty) = args.iter().filter(|v| !v.is_null()).map(type_of).reduce(common_type) else {
        return Ok(Value::Null);
    };
    match args.into_iter().find(|v| !v.is_null()) {
        Some(v) => coerce(v, ty, true),
        None => Ok(Value::Null),
    }
}

pub(super) fn nullif(args: Vec<Value>) -> Result<Value, SqlError> {
    let [a, b] = take(args);
    Ok(match compare(&a, &b)? {
        Some(Ordering::Equal) => Value::Null,
        _ => a,
    })
}

/// ISNUMERIC(x): 1 if the value is a number or text that converts to some numeric type
/// (integer, decimal, float or money, so `'$1,000'` and `'1e5'` count), else 0.
pub(super) fn isnumeric(args: Vec<Value>) -> Result<Value, SqlError> {
    let [x] = take(args);
    let numeric = match &x {
        Value::Str(s) | Value::NStr(s) => {
            !s.trim_matches(' ').is_empty()
                && (parse_float_text(s).is_some() || parse_money_text(s).is_some())
        }
        other => other.is_numeric(),
    };
    Ok(Value::Int(i32::from(numeric)))
}

/// SQL_VARIANT_PROPERTY(expression, property): BaseType, Precision, Scale, TotalBytes,
/// Collation or MaxLength of the value's base type (a string's and a binary's length is the
/// value's own); NULL for NULL and for any other property.
pub(super) fn sql_variant_property(args: Vec<Value>) -> Result<Value, SqlError> {
    use crate::exec::sysviews::catalog::{max_length, precision, scale};
    let [v, property] = take(args);
    let Some(base) = walden_engine::types::variant_base_type(&v) else {
        return Ok(Value::Null);
    };
    let property = super::text::to_text(&property);
    let bytes = max_length(base);
    Ok(match property.trim().to_ascii_lowercase().as_str() {
        // The type's name without its parameters: `decimal`, `nvarchar`.
        "basetype" => Value::NStr(base.name().split('(').next().unwrap_or_default().to_string()),
        "precision" => Value::Int(i32::from(precision(base))),
        "scale" => Value::Int(i32::from(scale(base))),
        // The value, its type byte and its property bytes, as SQL Server counts them.
        "totalbytes" => Value::Int(i32::try_from(bytes + 2).unwrap_or(i32::MAX)),
        "maxlength" => Value::Int(i32::try_from(bytes).unwrap_or(i32::MAX)),
        "collation" if base.is_text() => Value::NStr("SQL_Latin1_General_CP1_CI_AS".into()),
        _ => Value::Null,
    })
}

/// ISDATE(x): 1 if the value is a date/time value or text that converts to DATETIME.
pub(super) fn isdate(args: Vec<Value>) -> Result<Value, SqlError> {
    let [x] = take(args);
    let valid = match &x {
        Value::Str(s) | Value::NStr(s) => {
            temporal::parse(s, DateOrder::of_style(None)).is_ok_and(|p| {
                p.time.is_none_or(|(_, digits)| digits <= 3)
                    && walden_engine::types::DateTime::from_datetime2(p.moment()).is_some()
                    && !s.trim().is_empty()
            })
        }
        Value::Date(_) | Value::DateTime(_) | Value::DateTime2(_) | Value::DateTimeOffset(_) => {
            true
        }
        _ => false,
    };
    Ok(Value::Int(i32::from(valid)))
}

/// `HASHBYTES(algorithm, input)`: the digest of the input's bytes (what `CAST(input AS
/// VARBINARY(MAX))` gives: UTF-16LE for nvarchar). MD2 and MD4, which SQL Server still
/// accepts though deprecated, and any other name give NULL.
pub(super) fn hashbytes(args: Vec<Value>) -> Result<Value, SqlError> {
    use md5::Md5;
    use sha1::{Digest, Sha1};
    use sha2::{Sha256, Sha512};
    let mut args = args.into_iter();
    let (Some(algorithm), Some(input)) = (args.next(), args.next()) else {
        return Ok(Value::Null);
    };
    if algorithm.is_null() || input.is_null() {
        return Ok(Value::Null);
    }
    let Value::Binary(bytes) = super::convert(input, SqlType::VarBinary(Len::Max), None)? else {
        return Ok(Value::Null);
    };
    let digest = match to_text(&algorithm).to_ascii_uppercase().as_str() {
        "MD5" => Md5::digest(&bytes).to_vec(),
        "SHA" | "SHA1" => Sha1::digest(&bytes).to_vec(),
        "SHA2_256" => Sha256::digest(&bytes).to_vec(),
        "SHA2_512" => Sha512::digest(&bytes).to_vec(),
        _ => return Ok(Value::Null),
    };
    Ok(Value::Binary(digest))
}
