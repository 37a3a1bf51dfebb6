//! SQL Server's collation names for text: the `Latin1_General` Windows collations and the
//! `SQL_Latin1_General_CP1` SQL collations, case-sensitive or not (`_CS_` / `_CI_`),
//! accent-sensitive or not (`_AS` / `_AI`), and the binary ones (`_BIN`, `_BIN2`).
//!
//! Walden's own comparison (columns, indexes, `=` between plain expressions) is the server's
//! collation, `SQL_Latin1_General_CP1_CI_AS`. An expression with `COLLATE name` compares by
//! that collation instead, as SQL Server's collation precedence says an explicit collation
//! wins ([`explicit_collation`]); two different explicit collations meeting is error 468.
//!
//! Comparison under a collation: trailing spaces are ignored (as SQL Server pads), then
//! characters compare by their base letter, then by accent (if accent-sensitive), then by
//! case, lower before upper (if case-sensitive). A binary collation compares code points.

use std::cmp::Ordering;

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
    find(name).ok_or_else(|| SqlError::new(448, format!("Invalid collation '{name}'.")))
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
    let base = ["_KS", "_WS", "_SC", "_UTF8", "_VSS"]
        .iter()
        .fold(upper.as_str(), |n, flag| n.strip_suffix(flag).unwrap_or(n));
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
    /// Whether the collation compares as Walden's default, `SQL_Latin1_General_CP1_CI_AS`:
    /// case-insensitive and accent-sensitive.
    pub(crate) fn is_default_like(&self) -> bool {
        !self.binary && !self.case_sensitive && self.accent_sensitive
    }

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

    /// Compares two strings under the collation.
    pub(crate) fn compare(&self, a: &str, b: &str) -> Ordering {
        let (a, b) = (a.trim_end_matches(' '), b.trim_end_matches(' '));
        if self.binary {
            return a.chars().cmp(b.chars());
        }
        let primary = base_letters(a).cmp(base_letters(b));
        if primary != Ordering::Equal {
            return primary;
        }
        if self.accent_sensitive {
            let accented = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<Vec<_>>();
            let order = accented(a).cmp(&accented(b));
            if order != Ordering::Equal {
                return order;
            }
        }
        if self.case_sensitive {
            // Lower case sorts before upper case, character by character.
            for (x, y) in a.chars().zip(b.chars()) {
                if x != y {
                    return if x.is_lowercase() { Ordering::Less } else { Ordering::Greater };
                }
            }
        }
        Ordering::Equal
    }

    /// The character LIKE matches `c` as: itself under a binary collation, else folded to
    /// lower case unless case-sensitive and stripped of its accent unless accent-sensitive.
    pub(crate) fn key(&self, c: char) -> char {
        if self.binary {
            return c;
        }
        let c = if self.case_sensitive { c } else { super::compare::fold(c) };
        if self.accent_sensitive {
            c
        } else {
            strip_accent(c)
        }
    }
}

/// The letters of `s` lower-cased and without accents: what every non-binary collation
/// compares first.
fn base_letters(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().flat_map(char::to_lowercase).map(strip_accent)
}

/// The base letter of an accented Latin letter (lower or upper case stays so); others as
/// they are.
fn strip_accent(c: char) -> char {
    match c {
        'à'..='å' => 'a',
        'À'..='Å' => 'A',
        'ç' => 'c',
        'Ç' => 'C',
        'è'..='ë' => 'e',
        'È'..='Ë' => 'E',
        'ì'..='ï' => 'i',
        'Ì'..='Ï' => 'I',
        'ñ' => 'n',
        'Ñ' => 'N',
        'ò'..='ö' | 'ø' => 'o',
        'Ò'..='Ö' | 'Ø' => 'O',
        'ù'..='ü' => 'u',
        'Ù'..='Ü' => 'U',
        'ý' | 'ÿ' => 'y',
        'Ý' => 'Y',
        other => other,
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
