//! Comparison with implicit conversion, and `LIKE`.

use std::borrow::Cow;
use std::cmp::Ordering;

use walden_engine::types::{self, SqlType, Value};

use super::convert::{coerce, text_to_decimal};
use super::text::{binary_text, to_text};
use super::types::{type_of, value_label, value_precedence};
use crate::exec::SqlError;

/// Kinds of values that [`types::compare`] compares with each other directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Number,
    Text,
    Binary,
    Moment,
    Time,
    Guid,
}

fn family(v: &Value) -> Family {
    match v {
        Value::Str(_) | Value::NStr(_) => Family::Text,
        Value::Binary(_) => Family::Binary,
        Value::Date(_) | Value::DateTime(_) | Value::DateTime2(_) | Value::DateTimeOffset(_) => {
            Family::Moment
        }
        Value::Time(_) => Family::Time,
        Value::Guid(_) => Family::Guid,
        _ => Family::Number,
    }
}

/// The family of every value a column of type `ty` holds; None for a SQL_VARIANT, whose
/// values are of any, and an XML, which compares with nothing.
fn type_family(ty: SqlType) -> Option<Family> {
    Some(match ty {
        SqlType::TinyInt
        | SqlType::SmallInt
        | SqlType::Int
        | SqlType::BigInt
        | SqlType::Bit
        | SqlType::Decimal { .. }
        | SqlType::Float
        | SqlType::Real
        | SqlType::Money => Family::Number,
        SqlType::Char(_) | SqlType::VarChar(_) | SqlType::NChar(_) | SqlType::NVarChar(_) => {
            Family::Text
        }
        SqlType::Binary(_) | SqlType::VarBinary(_) => Family::Binary,
        SqlType::Date | SqlType::DateTime | SqlType::DateTime2(_) | SqlType::DateTimeOffset(_) => {
            Family::Moment
        }
        SqlType::Time(_) => Family::Time,
        SqlType::UniqueIdentifier => Family::Guid,
        SqlType::Variant | SqlType::Xml => return None,
    })
}

/// Whether [`compare`] of any value of a column of type `ty` with `v` compares the two as
/// they are, converting neither, so that it raises no error: they are of one family.
pub(crate) fn compares_directly(ty: SqlType, v: &Value) -> bool {
    !matches!(v, Value::Xml(_)) && type_family(ty) == Some(family(v))
}

/// Whether [`compare`] of values of columns of types `a` and `b` compares them as they
/// are ([`compares_directly`]).
pub(crate) fn types_compare_directly(a: SqlType, b: SqlType) -> bool {
    type_family(a).is_some() && type_family(a) == type_family(b)
}

/// SQL Server's comparison: `None` if either side is NULL; otherwise the side of lower data
/// type precedence is converted to the other's type first (so `1 = '1'` compares numbers and
/// `1 = 'a'` is Msg 245, a date and a string compare as dates), then values compare as
/// [`walden_engine::types::compare`] does: numbers exactly, text case-insensitively ignoring
/// trailing spaces, dates as moments.
pub fn compare(a: &Value, b: &Value) -> Result<Option<Ordering>, SqlError> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => return Ok(Some(x.cmp(y))),
        (Value::BigInt(x), Value::BigInt(y)) => return Ok(Some(x.cmp(y))),
        (Value::Str(_), Value::Str(_)) => return Ok(types::compare(a, b)),
        (Value::Xml(_), _) | (_, Value::Xml(_)) => return Err(super::xml::not_comparable()),
        (Value::Null, _) | (_, Value::Null) => return Ok(None),
        _ => {}
    }
    if family(a) == family(b) {
        return Ok(types::compare(a, b));
    }
    let a_top = value_precedence(a) >= value_precedence(b);
    let (top, low) = if a_top { (a, b) } else { (b, a) };
    let converted = convert_for_compare(low, top)?;
    let order = types::compare(top, &converted);
    Ok(if a_top { order } else { order.map(Ordering::reverse) })
}

/// [`compare`] of `a` with a constant `b`, for a scan that compares every row's value with
/// the same constant: where `compare` would convert `b` to `a`'s type, the converted value is
/// kept in `memo` and reused for the next `a` of that type. The conversion depends only on
/// `b` and `a`'s type, so the answer (or error) is [`compare`]'s.
pub(crate) fn compare_with_constant(
    a: &Value,
    b: &Value,
    memo: &mut Option<(SqlType, Value)>,
) -> Result<Option<Ordering>, SqlError> {
    match (a, b) {
        (Value::Int(_), Value::Int(_))
        | (Value::BigInt(_), Value::BigInt(_))
        | (Value::Str(_), Value::Str(_))
        | (Value::Xml(_), _)
        | (_, Value::Xml(_))
        | (Value::Null, _)
        | (_, Value::Null) => return compare(a, b),
        _ => {}
    }
    // The last conversion still fits where `a`'s type follows from its kind alone (a DATE,
    // an INT, not a DECIMAL's precision or a string's length) and the converted value is of
    // that kind: then type_of(a) is the memo's type, and the checks below chose conversion
    // for it before.
    if let Some((_, converted)) = memo {
        if kind_is_type(a) && std::mem::discriminant(a) == std::mem::discriminant(converted) {
            return Ok(types::compare(a, converted));
        }
    }
    if family(a) == family(b) || value_precedence(a) < value_precedence(b) {
        return compare(a, b);
    }
    let ty = type_of(a);
    let converted = match memo {
        Some((t, v)) if *t == ty => v,
        _ => &memo.insert((ty, convert_for_compare(b, a)?)).1,
    };
    Ok(types::compare(a, converted))
}

/// The date a DATE column is compared with when [`compare_with_constant`] compares it with
/// `constant`: the constant itself, or what it converts to where the DATE is the higher
/// type (a string literal). None where the comparison is not of two dates (a DATETIME
/// constant, a NULL) or the conversion fails (the comparison then raises the error).
pub(crate) fn date_operand(constant: &Value) -> Option<types::Date> {
    let column = Value::Date(types::Date::from_days(0)?);
    if let Value::Date(d) = constant {
        return Some(*d);
    }
    if matches!(constant, Value::Null | Value::Xml(_))
        || family(&column) == family(constant)
        || value_precedence(&column) < value_precedence(constant)
    {
        return None;
    }
    match convert_for_compare(constant, &column) {
        Ok(Value::Date(d)) => Some(d),
        _ => None,
    }
}

/// Whether every value of `v`'s kind has the type [`type_of`] gives `v`.
fn kind_is_type(v: &Value) -> bool {
    !matches!(
        v,
        Value::Null
            | Value::Decimal(_)
            | Value::Str(_)
            | Value::NStr(_)
            | Value::Binary(_)
            | Value::Xml(_)
    )
}

/// `low` converted to the type of `top` for a comparison. Text meeting a DECIMAL keeps the scale
/// it is written with (so `1.5 = '1.50'` holds whatever the digits), and a binary string meeting
/// text becomes text byte for byte.
fn convert_for_compare(low: &Value, top: &Value) -> Result<Value, SqlError> {
    match (low, top) {
        (Value::Str(s) | Value::NStr(s), Value::Decimal(_)) => {
            text_to_decimal(s, value_label(low)).map(Value::Decimal)
        }
        (Value::Binary(b), Value::Str(_)) => Ok(Value::Str(binary_text(b, 0, false))),
        (Value::Binary(b), Value::NStr(_)) => Ok(Value::NStr(binary_text(b, 0, true))),
        _ => coerce(low.clone(), type_of(top), true),
    }
}

/// One element of a compiled LIKE pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pat {
    /// A literal character, folded to lower case.
    Char(char),
    /// `_`: any one character.
    Any,
    /// `%`: any run of characters, even empty.
    Many,
    /// `[...]` / `[^...]`: one character in (or not in) the ranges, folded to lower case.
    Set { negated: bool, ranges: Vec<(char, char)> },
}

/// Case folding for LIKE: the engine's, which index keys of text fold by too.
pub(crate) use walden_engine::types::fold_char as fold;

fn compile(pattern: &str, escape: Option<char>, fold: &dyn Fn(char) -> char) -> Vec<Pat> {
    let cs: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        i += 1;
        if Some(c) == escape {
            // The escaped character is literal; a trailing escape character stands for itself.
            let literal = cs.get(i).copied().unwrap_or(c);
            i += usize::from(i < cs.len());
            out.push(Pat::Char(fold(literal)));
            continue;
        }
        match c {
            '%' => {
                if out.last() != Some(&Pat::Many) {
                    out.push(Pat::Many);
                }
            }
            '_' => out.push(Pat::Any),
            '[' => match cs[i..].iter().position(|&x| x == ']') {
                Some(len) => {
                    let body = &cs[i..i + len];
                    i += len + 1;
                    let negated = body.len() > 1 && body[0] == '^';
                    let body = if negated { &body[1..] } else { body };
                    let mut ranges = Vec::new();
                    let mut k = 0;
                    while k < body.len() {
                        if k + 2 < body.len() && body[k + 1] == '-' {
                            ranges.push((fold(body[k]), fold(body[k + 2])));
                            k += 3;
                        } else {
                            ranges.push((fold(body[k]), fold(body[k])));
                            k += 1;
                        }
                    }
                    out.push(Pat::Set { negated, ranges });
                }
                None => out.push(Pat::Char('[')),
            },
            other => out.push(Pat::Char(fold(other))),
        }
    }
    out
}

fn matches_one(p: &Pat, c: char) -> bool {
    match p {
        Pat::Char(x) => *x == c,
        Pat::Any => true,
        Pat::Many => false,
        Pat::Set { negated, ranges } => {
            ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
        }
    }
}

/// Wildcard matching with single-step backtracking to the last `%`: every other element
/// matches exactly one character, so retrying from the latest `%` one character further is
/// complete, and the whole match is O(pattern × value).
fn matches(pattern: &[Pat], s: &[char]) -> bool {
    let (mut p, mut i) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if let Some(el) = pattern.get(p) {
            if *el == Pat::Many {
                star = Some((p, i));
                p += 1;
                continue;
            }
            if matches_one(el, s[i]) {
                p += 1;
                i += 1;
                continue;
            }
        }
        match star {
            Some((sp, si)) => {
                p = sp + 1;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|el| *el == Pat::Many)
}

fn text_of(v: &Value) -> Cow<'_, str> {
    match v {
        Value::Str(s) | Value::NStr(s) => Cow::Borrowed(s),
        other => Cow::Owned(to_text(other)),
    }
}

/// `PATINDEX(pattern, value)`: the 1-based position of the first place in `value` where
/// `pattern` (a LIKE pattern; a leading `%` lets the match start anywhere, a trailing one
/// lets it end anywhere) matches, 0 if none; NULL if either is NULL.
pub fn patindex(pattern: &Value, value: &Value) -> Option<i64> {
    if value.is_null() || pattern.is_null() {
        return None;
    }
    let text = text_of(pattern);
    let (anywhere, rest) = match text.strip_prefix('%') {
        Some(rest) => (true, rest),
        None => (false, &*text),
    };
    let compiled = compile(rest, None, &fold);
    let chars: Vec<char> = text_of(value).chars().map(fold).collect();
    let last = if anywhere { chars.len().saturating_sub(1) } else { 0 };
    let found = (0..=last).find(|&i| matches(&compiled, &chars[i.min(chars.len())..]));
    Some(found.map_or(0, |i| i as i64 + 1))
}

/// `value LIKE pattern [ESCAPE escape]`: `%`, `_`, `[abc]`, `[a-f]`, `[^x]`, and an optional
/// one-character escape; case-insensitive. Trailing spaces of the value do not prevent a match
/// (`'abc  ' LIKE 'abc'`), those of the pattern must be matched. Other types are compared as
/// their text. NULL anywhere gives `None`; an escape of other than one character is Msg 506.
pub fn like(
    value: &Value,
    pattern: &Value,
    escape: Option<&Value>,
) -> Result<Option<bool>, SqlError> {
    if escape.is_none() {
        if let (Value::Str(v) | Value::NStr(v), Value::Str(p) | Value::NStr(p)) = (value, pattern) {
            if let Some(m) = like_ascii_percents(v.as_bytes(), p.as_bytes()) {
                return Ok(Some(m));
            }
        }
    }
    like_folded(value, pattern, escape, &fold)
}

/// [`like`] without compiling the pattern or copying the value, for the common case it
/// covers: ASCII text and a pattern of literal characters and `%` only (TPC-H Q13's
/// `'%special%requests%'`). None for anything else (`_`, `[`, other characters), which the
/// general matcher takes.
fn like_ascii_percents(value: &[u8], pattern: &[u8]) -> Option<bool> {
    PercentsPattern::new(pattern)?.matches(value)
}

/// A LIKE pattern of literal ASCII characters and `%` only, without ESCAPE, analysed once
/// for all the values it is matched against (a filter's `o_comment NOT LIKE
/// '%special%requests%'`, [`PercentsPattern::like`]). Under [`fold`] an ASCII character
/// matches only its ASCII case twin, so ASCII case-insensitive comparison is the same test.
#[derive(Debug, Clone)]
pub(crate) struct PercentsPattern {
    /// The segment before the first `%`, which must begin the value, and the one after the
    /// last, which must end it; the whole pattern as `first` where it has no `%`.
    first: Vec<u8>,
    last: Vec<u8>,
    percent: bool,
    /// The segments between, each found at its leftmost place after the one before: a
    /// later place leaves less room for the rest and never more, so leftmost is a match if
    /// any place is.
    middles: Vec<Segment>,
}

/// A middle segment of a [`PercentsPattern`] and the byte it is searched by.
#[derive(Debug, Clone)]
struct Segment {
    bytes: Vec<u8>,
    /// The position of its rarest byte in English text, and that byte's two cases: places
    /// where it occurs are the candidates, fewer than where the first byte does (`s` of
    /// `special` is everywhere, `p` is not).
    anchor: usize,
    lower: u8,
    upper: u8,
}

/// ASCII letters from the most frequent in English text to the least: what a segment's
/// anchor byte is chosen by. A byte that is no letter (a digit, punctuation) is rarer than
/// any, but for the space.
const LETTERS_BY_FREQUENCY: &[u8] = b"etaoinshrdlcumwfgypbvkjxqz";

fn rarity(b: u8) -> usize {
    match b {
        b' ' => 0,
        _ => match LETTERS_BY_FREQUENCY.iter().position(|&l| l == b.to_ascii_lowercase()) {
            Some(i) => i + 1,
            None => LETTERS_BY_FREQUENCY.len() + 1,
        },
    }
}

impl Segment {
    fn new(bytes: &[u8]) -> Segment {
        let anchor = (0..bytes.len()).max_by_key(|&i| rarity(bytes[i])).unwrap_or(0);
        let b = bytes.get(anchor).copied().unwrap_or(0);
        Segment {
            bytes: bytes.to_vec(),
            anchor,
            lower: b.to_ascii_lowercase(),
            upper: b.to_ascii_uppercase(),
        }
    }

    /// Where the segment first occurs in `hay`, ignoring ASCII case: each place its anchor
    /// byte (in either case) is found at, by `memchr`'s vectorized search, is checked for
    /// the whole segment.
    fn find(&self, hay: &[u8]) -> Option<usize> {
        let n = self.bytes.len();
        if n == 0 {
            return Some(0);
        }
        let last_start = hay.len().checked_sub(n)?;
        // The anchor's places from the first segment start's to the last's.
        let anchors = &hay[self.anchor..=last_start + self.anchor];
        memchr::memchr2_iter(self.lower, self.upper, anchors)
            .find(|&i| hay[i..i + n].eq_ignore_ascii_case(&self.bytes))
    }
}

impl PercentsPattern {
    /// The pattern analysed, if it is of this kind: ASCII, with no `_` or `[`.
    pub(crate) fn new(pattern: &[u8]) -> Option<PercentsPattern> {
        if !pattern.is_ascii() || pattern.iter().any(|&b| b == b'_' || b == b'[') {
            return None;
        }
        let mut segments: Vec<&[u8]> = pattern.split(|&b| b == b'%').collect();
        let percent = segments.len() > 1;
        let first = segments.remove(0).to_vec();
        let last = if percent { segments.pop().unwrap_or_default().to_vec() } else { Vec::new() };
        let middles = segments.into_iter().filter(|s| !s.is_empty()).map(Segment::new).collect();
        Some(PercentsPattern { first, last, percent, middles })
    }

    /// `value LIKE pattern` for this pattern, or None where `value` is not text of ASCII
    /// characters (the general matcher decides). NULL is UNKNOWN.
    pub(crate) fn like(&self, value: &Value) -> Option<Option<bool>> {
        match value {
            Value::Null => Some(None),
            Value::Str(v) | Value::NStr(v) => self.matches(v.as_bytes()).map(Some),
            _ => None,
        }
    }

    /// Whether `value` matches, or None if it is not ASCII. Trailing spaces of the value do
    /// not prevent a match, as in `like_folded`.
    fn matches(&self, value: &[u8]) -> Option<bool> {
        if !value.is_ascii() {
            return None;
        }
        if self.matches_exactly(value) {
            return Some(true);
        }
        let trimmed = value.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
        Some(trimmed < value.len() && self.matches_exactly(&value[..trimmed]))
    }

    fn matches_exactly(&self, value: &[u8]) -> bool {
        if !self.percent {
            return value.eq_ignore_ascii_case(&self.first);
        }
        let (first, last) = (&self.first, &self.last);
        if value.len() < first.len() + last.len()
            || !value[..first.len()].eq_ignore_ascii_case(first)
            || !value[value.len() - last.len()..].eq_ignore_ascii_case(last)
        {
            return false;
        }
        let mut rest = &value[first.len()..value.len() - last.len()];
        for segment in &self.middles {
            match segment.find(rest) {
                Some(at) => rest = &rest[at + segment.bytes.len()..],
                None => return false,
            }
        }
        true
    }
}

/// [`like`] under an explicit collation (`COLLATE`), whose `key` says which characters match.
pub(crate) fn like_collated(
    value: &Value,
    pattern: &Value,
    escape: Option<&Value>,
    collation: &super::collation::Collation,
) -> Result<Option<bool>, SqlError> {
    // The order once, not per character: it is read from the collation's name.
    let order = collation.order();
    like_folded(value, pattern, escape, &|c| order.like_char(c))
}

fn like_folded(
    value: &Value,
    pattern: &Value,
    escape: Option<&Value>,
    fold: &dyn Fn(char) -> char,
) -> Result<Option<bool>, SqlError> {
    if value.is_null() || pattern.is_null() || escape.is_some_and(Value::is_null) {
        return Ok(None);
    }
    let escape = match escape {
        None => None,
        Some(e) => {
            let text = text_of(e);
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Some(c),
                _ => {
                    return Err(SqlError::new(
                        506,
                        format!(
                            "The invalid escape character \"{text}\" was specified in a LIKE \
                             predicate."
                        ),
                    ))
                }
            }
        }
    };
    let compiled = compile(&text_of(pattern), escape, fold);
    let chars: Vec<char> = text_of(value).chars().map(fold).collect();
    if matches(&compiled, &chars) {
        return Ok(Some(true));
    }
    let trimmed = chars.iter().rposition(|c| *c != ' ').map_or(0, |i| i + 1);
    Ok(Some(trimmed < chars.len() && matches(&compiled, &chars[..trimmed])))
}
