//! Splitting a query's text into tokens: names (with their prefixes), string and number
//! literals, operators and punctuation, with the entity references of XML decoded in strings.
//! Text that is no token of XQuery is SQL Server's syntax error 2209, reported before anything
//! is compiled.

use super::{err, unsupported, Cmp};
use crate::exec::SqlError;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Slash,
    SlashSlash,
    Dot,
    DotDot,
    At,
    Star,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Semicolon,
    Cmp(Cmp),
    Str(String),
    Num(f64),
    /// A name, `prefix:name` or `axis::`-less word.
    Name(String),
    /// `name::`.
    Axis(String),
    Other(String),
}

pub(super) fn tokenize(src: &str, method: &str) -> Result<Vec<Tok>, SqlError> {
    let cs: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let syntax = |near: &str| err(method, 2209, format!("Syntax error near '{near}'"));
    while i < cs.len() {
        let c = cs[i];
        let next = cs.get(i + 1).copied();
        i += 1;
        let tok = match c {
            c if c.is_whitespace() => continue,
            '(' if next == Some(':') => {
                // An XQuery comment `(: ... :)`.
                let rest: String = cs[i..].iter().collect();
                match rest.find(":)") {
                    Some(n) => {
                        i += rest[..n + 2].chars().count();
                        continue;
                    }
                    None => return Err(syntax("(:")),
                }
            }
            '/' if next == Some('/') => {
                i += 1;
                Tok::SlashSlash
            }
            '/' => Tok::Slash,
            '.' if next == Some('.') => {
                i += 1;
                Tok::DotDot
            }
            '.' if !next.is_some_and(|n| n.is_ascii_digit()) => Tok::Dot,
            '@' => Tok::At,
            '*' => Tok::Star,
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            '[' => Tok::LBracket,
            ']' => Tok::RBracket,
            ',' => Tok::Comma,
            ';' => Tok::Semicolon,
            '=' => Tok::Cmp(Cmp::Eq),
            '!' if next == Some('=') => {
                i += 1;
                Tok::Cmp(Cmp::Ne)
            }
            '<' if next == Some('=') => {
                i += 1;
                Tok::Cmp(Cmp::Le)
            }
            '>' if next == Some('=') => {
                i += 1;
                Tok::Cmp(Cmp::Ge)
            }
            '<' => Tok::Cmp(Cmp::Lt),
            '>' => Tok::Cmp(Cmp::Gt),
            '"' | '\'' => {
                let mut s = String::new();
                loop {
                    match cs.get(i) {
                        None => return Err(syntax(&format!("{c}{s}"))),
                        Some(&q) if q == c => {
                            i += 1;
                            if cs.get(i) == Some(&c) {
                                s.push(c);
                                i += 1;
                            } else {
                                break;
                            }
                        }
                        Some(&ch) => {
                            s.push(ch);
                            i += 1;
                        }
                    }
                }
                Tok::Str(decode_entities(&s))
            }
            c if c.is_ascii_digit() || c == '.' => {
                let start = i - 1;
                while cs.get(i).is_some_and(|d| d.is_ascii_digit() || *d == '.') {
                    i += 1;
                }
                let text: String = cs[start..i].iter().collect();
                if cs.get(i).is_some_and(|d| matches!(d, 'e' | 'E')) {
                    return Err(unsupported(method, &text));
                }
                match text.parse::<f64>() {
                    Ok(n) => Tok::Num(n),
                    Err(_) => return Err(syntax(&text)),
                }
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i - 1;
                while cs.get(i).is_some_and(|d| {
                    d.is_alphanumeric()
                        || matches!(d, '_' | '-' | '.')
                        || (*d == ':'
                            && cs
                                .get(i + 1)
                                .is_some_and(|e| e.is_alphabetic() || *e == '_' || *e == '*'))
                }) {
                    if cs[i] == ':' && cs.get(i + 1) == Some(&'*') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
                let word: String = cs[start..i].iter().collect();
                if cs.get(i) == Some(&':') && cs.get(i + 1) == Some(&':') {
                    i += 2;
                    Tok::Axis(word)
                } else {
                    Tok::Name(word)
                }
            }
            '$' => return Err(unsupported(method, "$")),
            c => Tok::Other(c.to_string()),
        };
        out.push(tok);
    }
    Ok(out)
}

fn decode_entities(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}
