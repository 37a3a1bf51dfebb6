//! SQL Server's collation names for text: the `Latin1_General` Windows collations and the
//! `SQL_Latin1_General_CP1` SQL collations, case-sensitive or not (`_CS_` / `_CI_`),
//! accent-sensitive or not (`_AS` / `_AI`), and the binary ones (`_BIN`, `_BIN2`).
//!
//! The server's and every database's collation is `SQL_Latin1_General_CP1_CI_AS`; a text
//! column may have its own (`ColumnDef::collation`, [`of_column`]). Which collation a
//! comparison, sort or grouping goes by is SQL Server's collation precedence, worked out by
//! `eval::Label`: an explicit `COLLATE` wins, then a column's, then the default; two different
//! explicit collations, or two columns of different ones, meeting is error 468
//! ([`explicit_collation`]).
//!
//! How a collation compares is the engine's `TextOrder` (trailing spaces ignored, then the
//! letters without case and accents, then accents if accent-sensitive, then case, lower
//! first, if case-sensitive; code points for a binary one), which also keys a column's index.
//! Sorting and grouping turn text into that key ([`sort_value`], [`group_key_under`]); hash
//! matching uses a key that no collation tells apart more coarsely ([`coarse_key`]) and then
//! compares under the collation.

use std::cmp::Ordering;

use walden_engine::catalog::ColumnDef;
use walden_engine::types::{strip_accent, SqlType, TextOrder, Value};

use crate::exec::execute::query::group_key;
use crate::exec::SqlError;

/// A collation Walden knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Collation {
    /// The name as SQL Server spells it.
    pub(crate) name: String,
    pub(crate) case_sensitive: bool,
    pub(crate) accent_sensitive: bool,
    /// `_BIN` or `_BIN2`: code point order.
    pub(crate) binary: bool,
    /// A SQL collation (`SQL_...`) rather than a Windows one.
    pub(crate) sql: bool,
}

/// The server's and every database's collation.
pub(crate) const DEFAULT_COLLATION: &str = "SQL_Latin1_General_CP1_CI_AS";

/// The Windows collation families Walden has: `Latin1_General` and its 100 version.
const WINDOWS_FAMILIES: [&str; 2] = ["Latin1_General", "Latin1_General_100"];

/// The SQL collations' suffixes Walden has, as SQL Server lists them for code page 1252.
const SQL_SUFFIXES: [&str; 3] = ["CI_AS", "CS_AS", "CI_AI"];

/// The collation `name` names, case-insensitively (`DATABASE_DEFAULT` is the default); SQL
/// Server's error 448 for any other name.
pub(crate) fn collation(name: &str) -> Result<Collation, SqlError> {
    collation_ref(name).cloned()
}

/// [`collation`], as the one shared description of the name: columns and labels hold
/// references, so that finding a row's collation copies nothing. The names with options
/// (`_KS`, `_WS`, ...) are made once each the first time they are named and kept; there are
/// finitely many.
pub(crate) fn collation_ref(name: &str) -> Result<&'static Collation, SqlError> {
    let invalid = || SqlError::new(448, format!("Invalid collation '{name}'."));
    let target =
        if name.eq_ignore_ascii_case("DATABASE_DEFAULT") { DEFAULT_COLLATION } else { name };
    if let Some(c) = all().iter().find(|c| c.name.eq_ignore_ascii_case(target)) {
        return Ok(c);
    }
    static MADE: std::sync::Mutex<Vec<&'static Collation>> = std::sync::Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(c) = made.iter().find(|c| c.name.eq_ignore_ascii_case(target)) {
        return Ok(c);
    }
    let c: &'static Collation = Box::leak(Box::new(find(target).ok_or_else(invalid)?));
    made.push(c);
    Ok(c)
}

/// The default collation's description.
pub(crate) fn default_collation() -> &'static Collation {
    all().iter().find(|c| c.name == DEFAULT_COLLATION).expect("the default collation is listed")
}

fn find(name: &str) -> Option<Collation> {
    if name.eq_ignore_ascii_case("DATABASE_DEFAULT") {
        return find(DEFAULT_COLLATION);
    }
    if let Some(c) = all().iter().find(|c| c.name.eq_ignore_ascii_case(name)) {
        return Some(c.clone());
    }
    // A Windows collation with kana, width, supplementary-character or UTF-8 options
    // compares Latin text as the collation without them.
    let upper = name.to_ascii_uppercase();
    // The options in any number, last first: `_100_CI_AS_SC_UTF8` is `_100_CI_AS`.
    let mut base = upper.as_str();
    while let Some(shorter) =
        ["_KS", "_WS", "_SC", "_UTF8", "_VSS"].iter().find_map(|flag| base.strip_suffix(flag))
    {
        base = shorter;
    }
    (base.len() < upper.len() && !base.starts_with("SQL_") && !base.contains("_BIN"))
        .then(|| all().iter().find(|c| c.name.eq_ignore_ascii_case(base)))
        .flatten()
        .map(|c| Collation { name: name.to_string(), ..c.clone() })
}

/// Every collation Walden knows, in `fn_helpcollations()`'s order (by name); made once.
pub(crate) fn all() -> &'static [Collation] {
    static ALL: std::sync::OnceLock<Vec<Collation>> = std::sync::OnceLock::new();
    ALL.get_or_init(list)
}

fn list() -> Vec<Collation> {
    let mut out = Vec::new();
    for family in WINDOWS_FAMILIES {
        for bin in ["BIN", "BIN2"] {
            out.push(Collation {
                name: format!("{family}_{bin}"),
                case_sensitive: true,
                accent_sensitive: true,
                binary: true,
                sql: false,
            });
        }
        for (case, cs) in [("CI", false), ("CS", true)] {
            for (accent, as_) in [("AI", false), ("AS", true)] {
                out.push(Collation {
                    name: format!("{family}_{case}_{accent}"),
                    case_sensitive: cs,
                    accent_sensitive: as_,
                    binary: false,
                    sql: false,
                });
            }
        }
    }
    for suffix in SQL_SUFFIXES {
        out.push(Collation {
            name: format!("SQL_Latin1_General_CP1_{suffix}"),
            case_sensitive: suffix.starts_with("CS"),
            accent_sensitive: suffix.ends_with("AS"),
            binary: false,
            sql: true,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

impl Collation {
    /// `fn_helpcollations()`'s description, in SQL Server's words.
    pub(crate) fn description(&self) -> String {
        let sort = if self.binary {
            if self.name.ends_with("BIN2") {
                "binary code point comparison sort".to_string()
            } else {
                "binary sort".to_string()
            }
        } else {
            format!(
                "case-{}, accent-{}, kanatype-insensitive, width-insensitive",
                if self.case_sensitive { "sensitive" } else { "insensitive" },
                if self.accent_sensitive { "sensitive" } else { "insensitive" },
            )
        };
        if self.sql {
            // SQL Server's sort order ids for code page 1252.
            let order = match (self.case_sensitive, self.accent_sensitive) {
                (true, _) => 51,
                (false, true) => 52,
                (false, false) => 54,
            };
            format!(
                "Latin1-General, {sort} for Unicode Data, SQL Server Sort Order {order} on Code \
                 Page 1252 for non-Unicode Data"
            )
        } else {
            let version = if self.name.contains("_100") { "-100" } else { "" };
            format!("Latin1-General{version}, {sort}")
        }
    }

    /// `COLLATIONPROPERTY(name, property)`: CodePage, LCID, ComparisonStyle, Version; NULL
    /// for other properties.
    pub(crate) fn property(&self, property: &str) -> Option<i32> {
        Some(match property.to_ascii_lowercase().as_str() {
            "codepage" => 1252,
            "lcid" => 1033,
            // SQL Server's flags: 1 ignore case, 2 ignore accents, 65536 ignore kana type,
            // 131072 ignore width; binary collations have none.
            "comparisonstyle" if self.binary => 0,
            "comparisonstyle" => {
                i32::from(!self.case_sensitive)
                    | if self.accent_sensitive { 0 } else { 2 }
                    | 65536
                    | 131072
            }
            "version" => i32::from(self.name.contains("_100")),
            _ => return None,
        })
    }

    /// How the collation compares text (and keys it in an index).
    pub(crate) fn order(&self) -> TextOrder {
        TextOrder {
            case_sensitive: self.case_sensitive,
            accent_sensitive: self.accent_sensitive,
            binary: self.binary,
        }
    }

    /// Compares two strings under the collation.
    pub(crate) fn compare(&self, a: &str, b: &str) -> Ordering {
        self.order().compare(a, b)
    }
}

/// The collation of the two sides of a comparison by SQL Server's precedence: an explicit
/// `COLLATE` on either side decides; two different explicit ones are error 468. None when
/// neither side has one (the default collation applies).
pub(crate) fn explicit_collation<'c>(
    left: Option<&'c Collation>,
    right: Option<&'c Collation>,
    operation: &str,
) -> Result<Option<&'c Collation>, SqlError> {
    match (left, right) {
        (Some(a), Some(b)) if a.name != b.name => Err(SqlError::new(
            468,
            format!(
                "Cannot resolve the collation conflict between \"{}\" and \"{}\" in the {operation} operation.",
                a.name, b.name
            ),
        )),
        (Some(a), _) => Ok(Some(a)),
        (None, b) => Ok(b),
    }
}

/// What a value sorts and groups by under `collation`: text under a collation that orders
/// otherwise than the default becomes its key bytes (as BINARY, which compares and groups
/// byte for byte, so equal keys are equal under the collation); anything else is itself.
pub(crate) fn sort_value(v: Value, collation: Option<&Collation>) -> Value {
    match (collation.map(Collation::order).filter(|o| !o.is_default()), v) {
        (Some(order), Value::Str(s) | Value::NStr(s)) => {
            let mut key = Vec::with_capacity(s.len() + 2);
            order.put_key(&s, &mut key);
            Value::Binary(key)
        }
        (_, v) => v,
    }
}

/// The DISTINCT / UNION key of `row` whose column i has the collation `collations[i]`:
/// [`group_key`] of the values [`sort_value`] makes.
pub(crate) fn group_key_under(row: &[Value], collations: &[Option<&'static Collation>]) -> String {
    let plain = |c: &Option<&Collation>| c.is_none_or(|c| c.order().is_default());
    if collations.iter().all(plain) {
        return group_key(row);
    }
    let keyed: Vec<Value> = row
        .iter()
        .enumerate()
        .map(|(i, v)| sort_value(v.clone(), collations.get(i).copied().flatten()))
        .collect();
    group_key(&keyed)
}

/// A hash key that is equal for values any collation may find equal (text by its letters
/// lower-cased and without accents: every collation Walden has tells apart no more than
/// that, so its equal values always share a key). Hash joins and grouping partitions hash by
/// it and compare candidates under the real collation.
pub(crate) fn coarse_key(values: &[Value]) -> String {
    let accented = |v: &Value| matches!(v, Value::Str(s) | Value::NStr(s) if !s.is_ascii());
    if !values.iter().any(accented) {
        // ASCII has no accents, and group_key already lower-cases.
        return group_key(values);
    }
    let letters: Vec<Value> = values
        .iter()
        .map(|v| match v {
            Value::Str(s) | Value::NStr(s) => {
                Value::Str(s.chars().flat_map(char::to_lowercase).map(strip_accent).collect())
            }
            other => other.clone(),
        })
        .collect();
    group_key(&letters)
}

/// The collation of a table's column: its own, or the default for a text column that has
/// none; None for other types.
pub(crate) fn of_column(c: &ColumnDef) -> Option<&'static Collation> {
    if !c.ty.is_text() {
        return None;
    }
    Some(c.collation.as_deref().and_then(|n| collation_ref(n).ok()).unwrap_or(default_collation()))
}

/// What a new column of type `ty` made from a value of collation `c` keeps in the catalog
/// (SELECT INTO, a view's columns): the name, unless it is the default or `ty` is not text.
pub(crate) fn stored(c: Option<&Collation>, ty: SqlType) -> Option<String> {
    c.filter(|c| ty.is_text() && c.name != DEFAULT_COLLATION).map(|c| c.name.clone())
}
