//! How text compares under a collation, and the index key of text under it.
//!
//! The SQL layer knows collations by name (`Latin1_General_CS_AS`, ...); a column keeps the
//! name in the catalog and its index keys are encoded by the [`TextOrder`] the name says.
//! Every order ignores trailing spaces, as SQL Server pads. The default,
//! `SQL_Latin1_General_CP1_CI_AS`, and every other case-insensitive, accent-sensitive
//! collation compare as [`compare`](super::compare) compares text (each character
//! lower-cased), and their keys are the plain folded text of [`encode_key`](super::encode_key),
//! so data written before columns had collations keeps its keys.
//!
//! Other orders compare in levels, as SQL Server's Windows collations do: first the letters
//! lower-cased and stripped of their accents; then, if accent-sensitive, the letters with
//! their accents; then, if case-sensitive, which letters are lower case (lower sorts before
//! upper). A binary order compares code points. [`TextOrder::put_key`] writes the levels one
//! after the other so that comparing key bytes is [`TextOrder::compare`]: each level's UTF-8
//! escaped as a key string (`00` as `00 FF`), levels separated by `00 02` (below every byte
//! of a longer level, so a shorter level sorts first), the whole ended by `00 01` as any
//! text key is.

use std::cmp::Ordering;

/// The comparison a collation makes of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOrder {
    /// `_CS_`: `'a'` and `'A'` differ, lower case first.
    pub case_sensitive: bool,
    /// `_AS`: `'e'` and `'é'` differ.
    pub accent_sensitive: bool,
    /// `_BIN` / `_BIN2`: code point order.
    pub binary: bool,
}

impl Default for TextOrder {
    fn default() -> TextOrder {
        TextOrder::DEFAULT
    }
}

impl TextOrder {
    /// `SQL_Latin1_General_CP1_CI_AS`'s: case-insensitive, accent-sensitive.
    pub const DEFAULT: TextOrder =
        TextOrder { case_sensitive: false, accent_sensitive: true, binary: false };

    /// The order of the collation `name`, read from its suffixes (`_BIN`, `_BIN2`, `_CS_`,
    /// `_AI`); names are checked by the SQL layer before they are stored.
    pub fn of_collation(name: &str) -> TextOrder {
        let upper = name.to_ascii_uppercase();
        if upper.contains("_BIN") {
            return TextOrder { case_sensitive: true, accent_sensitive: true, binary: true };
        }
        TextOrder {
            case_sensitive: upper.contains("_CS"),
            accent_sensitive: !upper.contains("_AI"),
            binary: false,
        }
    }

    /// Whether the order is the default one (values and keys as without a collation).
    pub fn is_default(&self) -> bool {
        *self == TextOrder::DEFAULT
    }

    /// Compares two strings in this order.
    pub fn compare(&self, a: &str, b: &str) -> Ordering {
        if self.is_default() {
            return super::value::cmp_text(a, b);
        }
        let (a, b) = (a.trim_end_matches(' '), b.trim_end_matches(' '));
        if self.binary {
            return a.chars().cmp(b.chars());
        }
        base_letters(a)
            .cmp(base_letters(b))
            .then_with(
                || {
                    if self.accent_sensitive {
                        lower(a).cmp(lower(b))
                    } else {
                        Ordering::Equal
                    }
                },
            )
            .then_with(|| {
                if self.case_sensitive {
                    upper_flags(a).cmp(upper_flags(b))
                } else {
                    Ordering::Equal
                }
            })
    }

    /// Appends the key of `s` (see the module documentation): bytes that compare as
    /// [`compare`](Self::compare) compares strings, ended by `00 01`.
    pub fn put_key(&self, s: &str, out: &mut Vec<u8>) {
        if self.is_default() {
            super::key::put_text(s, out);
            return;
        }
        let s = s.trim_end_matches(' ');
        if self.binary {
            put_chars(s.chars(), out);
        } else {
            put_chars(base_letters(s), out);
            if self.accent_sensitive {
                out.extend_from_slice(&[0x00, 0x02]);
                put_chars(lower(s), out);
            }
            if self.case_sensitive {
                out.extend_from_slice(&[0x00, 0x02]);
                out.extend(upper_flags(s).map(|upper| 1 + u8::from(upper)));
            }
        }
        out.extend_from_slice(&[0x00, 0x01]);
    }

    /// The character a LIKE pattern matches `c` as: itself in a binary order, else lower-cased
    /// unless case-sensitive and stripped of its accent unless accent-sensitive.
    pub fn like_char(&self, c: char) -> char {
        if self.binary {
            return c;
        }
        let c = if self.case_sensitive { c } else { fold_char(c) };
        if self.accent_sensitive {
            c
        } else {
            strip_accent(c)
        }
    }
}

/// Lower case when that is a single character (what LIKE folds to).
pub fn fold_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

fn lower(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().flat_map(char::to_lowercase)
}

/// The letters of `s` lower-cased and without accents: what every non-binary order
/// compares first.
fn base_letters(s: &str) -> impl Iterator<Item = char> + '_ {
    lower(s).map(strip_accent)
}

/// Per character of `s` lower-cased, whether it came from a character that is not lower
/// case: the case level, which puts lower case first. A character that lower-cases to
/// several gives its flag for each, so the flags line up with [`lower`].
fn upper_flags(s: &str) -> impl Iterator<Item = bool> + '_ {
    s.chars().flat_map(|c| {
        let upper = !c.is_lowercase();
        c.to_lowercase().map(move |_| upper)
    })
}

/// Characters as UTF-8 (which keeps code point order), `00` escaped as `00 FF`.
fn put_chars(chars: impl Iterator<Item = char>, out: &mut Vec<u8>) {
    let mut utf8 = [0u8; 4];
    for c in chars {
        if c == '\0' {
            out.extend_from_slice(&[0x00, 0xFF]);
        } else {
            out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        }
    }
}

/// The base letter of an accented Latin letter (lower or upper case stays so); others as
/// they are.
pub fn strip_accent(c: char) -> char {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(order: TextOrder, s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        order.put_key(s, &mut out);
        out
    }

    #[test]
    fn keys_compare_as_the_order_compares() {
        let words = [
            "", "a", "A", "a ", "ab", "aB", "Ab", "AB", "b", "B", "é", "É", "e", "E", "f", "ée",
            "eé", "a\0", "a\0b", "résumé", "Résumé", "resume", "zz", "Z",
        ];
        let orders = [
            TextOrder::DEFAULT,
            TextOrder::of_collation("Latin1_General_CS_AS"),
            TextOrder::of_collation("Latin1_General_CI_AI"),
            TextOrder::of_collation("Latin1_General_CS_AI"),
            TextOrder::of_collation("Latin1_General_BIN2"),
        ];
        for order in orders {
            for a in words {
                for b in words {
                    assert_eq!(
                        key(order, a).cmp(&key(order, b)),
                        order.compare(a, b),
                        "{order:?}: {a:?} vs {b:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn case_and_accent_levels() {
        let cs = TextOrder::of_collation("Latin1_General_CS_AS");
        assert_eq!(cs.compare("a", "A"), Ordering::Less);
        assert_eq!(cs.compare("A", "b"), Ordering::Less);
        assert_eq!(cs.compare("abc  ", "abc"), Ordering::Equal);
        let ai = TextOrder::of_collation("SQL_Latin1_General_CP1_CI_AI");
        assert_eq!(ai.compare("résumé", "RESUME"), Ordering::Equal);
        let cs_ai = TextOrder::of_collation("Latin1_General_CS_AI");
        assert_eq!(cs_ai.compare("é", "e"), Ordering::Equal);
        assert_eq!(cs_ai.compare("É", "e"), Ordering::Greater);
        assert!(TextOrder::of_collation("Latin1_General_100_CI_AS").is_default());
        assert!(TextOrder::of_collation("Latin1_General_BIN").binary);
    }
}
