//! The T-SQL lexer: turns batch text into [`Token`]s, each with its source text and [`Span`].
//!
//! Lexical rules (SQL Server's, with `QUOTED_IDENTIFIER ON`):
//!
//! * Whitespace and comments separate tokens and produce none. `--` runs to the end of the
//!   line; `/* ... */` nests, so `/* a /* b */ c */` is one comment. An unclosed block comment
//!   is error 113.
//! * Words (`[A-Za-z_#]` or any Unicode letter, then letters, digits, `_ @ # $`) are
//!   identifiers or keywords; the lexer does not tell them apart, the parser compares
//!   case-insensitively. `#temp` and `##global` are words.
//! * `[name]` (with `]]` for `]`) and `"name"` (with `""`) are delimited identifiers. `@name`
//!   is a variable, `@@NAME` a system variable.
//! * `'text'` is a string (`''` is a quote), `N'text'` a Unicode string. An unclosed string or
//!   delimited identifier is error 105.
//! * Numbers: `123` integer, `1.5` / `.5` / `1.` decimal, `1e10` / `1.5E-3` float, `$1.50` money, `0x1F`
//!   binary. A letter right after a number starts a new token (`1024MB` is `1024` `MB`), as in
//!   SQL Server.
//! * Operators: `+ - * / % & | ^ ~ = < > <= >= <> != !< !> += -= *= /= %= &= |= ^= ( ) , . ;
//!   : ::`. Any other character is error 102.

use crate::ast::Span;
use crate::error::ParseError;

/// SQL Server's limit on identifier length, in characters.
const MAX_IDENTIFIER_LEN: usize = 128;

/// One token: its kind, its exact source text and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Token<'a> {
    /// What the token is.
    pub kind: TokenKind,
    /// The token exactly as written (including quotes and prefixes).
    pub text: &'a str,
    /// Where it is.
    pub span: Span,
}

impl Token<'_> {
    /// Whether this is the undelimited word `keyword`, ignoring case.
    pub fn is_keyword(&self, keyword: &str) -> bool {
        self.kind == TokenKind::Word && self.text.eq_ignore_ascii_case(keyword)
    }
}

/// Token kinds. Tokens whose text needs decoding carry the decoded value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenKind {
    /// An undelimited identifier or keyword.
    Word,
    /// `[name]` or `"name"`, decoded.
    QuotedIdent(String),
    /// `@name`
    Variable,
    /// `@@NAME`
    SystemVariable,
    /// `'text'` or `N'text'`, decoded.
    String {
        /// The characters.
        value: String,
        /// `N'...'`.
        national: bool,
    },
    /// `123`
    Integer,
    /// `1.5`
    Decimal,
    /// `1.5e3`
    Float,
    /// `$1.50`: a money constant.
    Money,
    /// `0x1F`
    Binary,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `,`
    Comma,
    /// `.`
    Dot,
    /// `;`
    Semicolon,
    /// `:`
    Colon,
    /// `::`
    DoubleColon,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `&`
    Ampersand,
    /// `|`
    Pipe,
    /// `^`
    Caret,
    /// `~`
    Tilde,
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    LtEq,
    /// `>=`
    GtEq,
    /// `!<`
    NotLt,
    /// `!>`
    NotGt,
    /// `+=`
    PlusEq,
    /// `-=`
    MinusEq,
    /// `*=`
    StarEq,
    /// `/=`
    SlashEq,
    /// `%=`
    PercentEq,
    /// `&=`
    AmpersandEq,
    /// `|=`
    PipeEq,
    /// `^=`
    CaretEq,
    /// The end of the batch; always the last token.
    Eof,
}

/// Splits a whole batch into tokens, ending with [`TokenKind::Eof`].
pub fn tokenize(sql: &str) -> Result<Vec<Token<'_>>, ParseError> {
    Lexer::new(sql).collect()
}

/// An iterator over the tokens of a batch. It yields [`TokenKind::Eof`] last, or stops after
/// the first error.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    column: u32,
    finished: bool,
    /// `SET QUOTED_IDENTIFIER`: when false, `"..."` is a string literal.
    quoted_identifier: bool,
}

/// A position to come back to for spans and error lines.
#[derive(Debug, Clone, Copy)]
struct Mark {
    pos: usize,
    line: u32,
    column: u32,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Self {
        Self { src, pos: 0, line: 1, column: 1, finished: false, quoted_identifier: true }
    }

    /// The lexer under `SET QUOTED_IDENTIFIER ON` (the default) or OFF, where `"..."` is a
    /// string literal as `'...'` is.
    pub fn quoted_identifier(mut self, on: bool) -> Self {
        self.quoted_identifier = on;
        self
    }

    fn mark(&self) -> Mark {
        Mark { pos: self.pos, line: self.line, column: self.column }
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.src[self.pos..].chars().nth(1)
    }

    fn peek_third(&self) -> Option<char> {
        self.src[self.pos..].chars().nth(2)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn bump_while(&mut self, mut accept: impl FnMut(char) -> bool) {
        while self.peek().is_some_and(&mut accept) {
            self.bump();
        }
    }

    fn scan(&mut self) -> Result<Token<'a>, ParseError> {
        self.skip_trivia()?;
        let start = self.mark();
        let kind = match self.peek() {
            None => TokenKind::Eof,
            Some(c) => self.scan_kind(c, start)?,
        };
        let span = Span { line: start.line, column: start.column, start: start.pos, end: self.pos };
        Ok(Token { kind, text: &self.src[start.pos..self.pos], span })
    }

    fn scan_kind(&mut self, first: char, start: Mark) -> Result<TokenKind, ParseError> {
        match first {
            '\'' => self.string(false, start),
            'N' | 'n' if self.peek_second() == Some('\'') => {
                self.bump();
                self.string(true, start)
            }
            '[' => self.delimited_identifier(']', start),
            '"' if !self.quoted_identifier => {
                let value = self.quoted_body('"', start)?;
                Ok(TokenKind::String { value, national: false })
            }
            '"' => self.delimited_identifier('"', start),
            '@' => self.variable(start),
            '0'..='9' => Ok(self.number()),
            '.' if self.peek_second().is_some_and(|c| c.is_ascii_digit()) => Ok(self.number()),
            // `$action` (MERGE's OUTPUT) and the other `$` pseudo-columns are words.
            '$' if self.peek_second().is_some_and(char::is_alphabetic) => self.word(start),
            '$' if self.peek_second().is_some_and(|c| c.is_ascii_digit() || c == '.') => {
                self.bump();
                self.bump_while(|c| c.is_ascii_digit());
                if self.peek() == Some('.') {
                    self.bump();
                    self.bump_while(|c| c.is_ascii_digit());
                }
                Ok(TokenKind::Money)
            }
            c if is_identifier_start(c) => self.word(start),
            _ => self.operator(first, start),
        }
    }

    /// Skips whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        loop {
            match (self.peek(), self.peek_second()) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                (Some('-'), Some('-')) => self.bump_while(|c| c != '\n'),
                (Some('/'), Some('*')) => self.block_comment()?,
                _ => return Ok(()),
            }
        }
    }

    /// A `/* ... */` comment; comments nest.
    fn block_comment(&mut self) -> Result<(), ParseError> {
        let line = self.line;
        self.bump();
        self.bump();
        let mut depth = 1usize;
        while depth > 0 {
            match (self.bump(), self.peek()) {
                (None, _) => return Err(ParseError::missing_end_comment(line)),
                (Some('/'), Some('*')) => {
                    self.bump();
                    depth += 1;
                }
                (Some('*'), Some('/')) => {
                    self.bump();
                    depth -= 1;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `'...'` after an optional `N` (already consumed); `''` is a quote.
    fn string(&mut self, national: bool, start: Mark) -> Result<TokenKind, ParseError> {
        let value = self.quoted_body('\'', start)?;
        Ok(TokenKind::String { value, national })
    }

    /// `[...]` or `"..."`.
    fn delimited_identifier(&mut self, close: char, start: Mark) -> Result<TokenKind, ParseError> {
        let value = self.quoted_body(close, start)?;
        check_identifier(&value, start.line)?;
        Ok(TokenKind::QuotedIdent(value))
    }

    /// Reads from the opening delimiter to the closing one, where a doubled closing delimiter
    /// stands for itself, and returns the decoded text.
    fn quoted_body(&mut self, close: char, start: Mark) -> Result<String, ParseError> {
        self.bump();
        let body_start = self.pos;
        let mut value = String::new();
        loop {
            match self.bump() {
                None => {
                    let rest = &self.src[body_start..];
                    return Err(ParseError::unclosed_quotation(rest, start.line));
                }
                Some(c) if c == close && self.peek() == Some(close) => {
                    self.bump();
                    value.push(close);
                }
                Some(c) if c == close => return Ok(value),
                Some(c) => value.push(c),
            }
        }
    }

    /// `@name` or `@@NAME`.
    fn variable(&mut self, start: Mark) -> Result<TokenKind, ParseError> {
        self.bump();
        let system = self.peek() == Some('@');
        if system {
            self.bump();
        }
        let name_start = self.pos;
        self.bump_while(is_identifier_part);
        let text = &self.src[start.pos..self.pos];
        if self.pos == name_start {
            return Err(ParseError::syntax(text, false, start.line));
        }
        check_identifier(text, start.line)?;
        Ok(if system { TokenKind::SystemVariable } else { TokenKind::Variable })
    }

    fn number(&mut self) -> TokenKind {
        if self.peek() == Some('0') && matches!(self.peek_second(), Some('x' | 'X')) {
            self.bump();
            self.bump();
            self.bump_while(|c| c.is_ascii_hexdigit());
            return TokenKind::Binary;
        }
        self.bump_while(|c| c.is_ascii_digit());
        let mut kind = TokenKind::Integer;
        if self.peek() == Some('.') {
            self.bump();
            self.bump_while(|c| c.is_ascii_digit());
            kind = TokenKind::Decimal;
        }
        if self.at_exponent() {
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            self.bump_while(|c| c.is_ascii_digit());
            kind = TokenKind::Float;
        }
        kind
    }

    /// Whether an exponent (`e5`, `E+5`, `e-5`) follows; a bare `e` starts a word instead.
    fn at_exponent(&self) -> bool {
        let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
        matches!(self.peek(), Some('e' | 'E'))
            && (digit(self.peek_second())
                || (matches!(self.peek_second(), Some('+' | '-')) && digit(self.peek_third())))
    }

    fn word(&mut self, start: Mark) -> Result<TokenKind, ParseError> {
        self.bump();
        self.bump_while(is_identifier_part);
        check_identifier(&self.src[start.pos..self.pos], start.line)?;
        Ok(TokenKind::Word)
    }

    /// An operator or punctuation; the longest match wins (`<=` over `<`).
    fn operator(&mut self, first: char, start: Mark) -> Result<TokenKind, ParseError> {
        self.bump();
        if let Some(kind) = two_char_operator(first, self.peek()) {
            self.bump();
            return Ok(kind);
        }
        one_char_operator(first)
            .ok_or_else(|| ParseError::syntax(&self.src[start.pos..self.pos], false, start.line))
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Result<Token<'a>, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        let result = self.scan();
        self.finished = !matches!(&result, Ok(token) if token.kind != TokenKind::Eof);
        Some(result)
    }
}

fn two_char_operator(first: char, second: Option<char>) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match (first, second?) {
        ('<', '=') => LtEq,
        ('<', '>') | ('!', '=') => NotEq,
        ('>', '=') => GtEq,
        ('!', '<') => NotLt,
        ('!', '>') => NotGt,
        (':', ':') => DoubleColon,
        ('+', '=') => PlusEq,
        ('-', '=') => MinusEq,
        ('*', '=') => StarEq,
        ('/', '=') => SlashEq,
        ('%', '=') => PercentEq,
        ('&', '=') => AmpersandEq,
        ('|', '=') => PipeEq,
        ('^', '=') => CaretEq,
        _ => return None,
    })
}

fn one_char_operator(c: char) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match c {
        '(' => LParen,
        ')' => RParen,
        ',' => Comma,
        '.' => Dot,
        ';' => Semicolon,
        ':' => Colon,
        '+' => Plus,
        '-' => Minus,
        '*' => Star,
        '/' => Slash,
        '%' => Percent,
        '&' => Ampersand,
        '|' => Pipe,
        '^' => Caret,
        '~' => Tilde,
        '=' => Eq,
        '<' => Lt,
        '>' => Gt,
        _ => return None,
    })
}

fn is_identifier_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '#'
}

fn is_identifier_part(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$')
}

/// SQL Server rejects empty delimited identifiers (1038) and names over 128 characters (103).
fn check_identifier(name: &str, line: u32) -> Result<(), ParseError> {
    if name.is_empty() {
        return Err(ParseError::empty_name(line));
    }
    if name.chars().count() > MAX_IDENTIFIER_LEN {
        return Err(ParseError::identifier_too_long(name, line));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind::*;

    fn kinds(sql: &str) -> Vec<TokenKind> {
        tokenize(sql).unwrap().into_iter().map(|t| t.kind).collect()
    }

    fn texts(sql: &str) -> Vec<&str> {
        tokenize(sql).unwrap().into_iter().map(|t| t.text).collect()
    }

    fn error(sql: &str) -> ParseError {
        tokenize(sql).unwrap_err()
    }

    #[test]
    fn words_keep_their_text_and_case() {
        assert_eq!(texts("SeLeCt x_1 #t ##g"), ["SeLeCt", "x_1", "#t", "##g", ""]);
        assert_eq!(kinds("select #t"), [Word, Word, Eof]);
        assert!(tokenize("select").unwrap()[0].is_keyword("SELECT"));
    }

    #[test]
    fn unicode_identifiers() {
        assert_eq!(texts("SELECT größe, 名前"), ["SELECT", "größe", ",", "名前", ""]);
    }

    #[test]
    fn delimited_identifiers_unescape() {
        assert_eq!(kinds("[a]]b]"), [QuotedIdent("a]b".into()), Eof]);
        assert_eq!(kinds("\"a\"\"b\""), [QuotedIdent("a\"b".into()), Eof]);
        assert_eq!(kinds("[log flushes]"), [QuotedIdent("log flushes".into()), Eof]);
    }

    #[test]
    fn variables_and_system_variables() {
        assert_eq!(kinds("@x @@ROWCOUNT @a#1$"), [Variable, SystemVariable, Variable, Eof]);
        assert_eq!(texts("@@trancount"), ["@@trancount", ""]);
        assert_eq!(error("SELECT @").number, 102);
    }

    #[test]
    fn strings_unescape_and_track_national() {
        let string = |value: &str, national| String { value: value.into(), national };
        assert_eq!(kinds("'it''s'"), [string("it's", false), Eof]);
        assert_eq!(kinds("N'x' n'y'"), [string("x", true), string("y", true), Eof]);
        assert_eq!(kinds("''"), [string("", false), Eof]);
        assert_eq!(kinds("'a\nb'"), [string("a\nb", false), Eof]);
        // `N` not followed by a quote is a word.
        assert_eq!(kinds("N 'x'"), [Word, string("x", false), Eof]);
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("1 1.5 .5 1. 1e10 1.5E-3 2e+2 0x1F 0x"),
            [Integer, Decimal, Decimal, Decimal, Float, Float, Float, Binary, Binary, Eof]
        );
        assert_eq!(texts("1024MB"), ["1024", "MB", ""]);
        assert_eq!(texts("1e"), ["1", "e", ""]);
        assert_eq!(texts("1x"), ["1", "x", ""]);
        assert_eq!(kinds("$1.50 $2 $.5"), [Money, Money, Money, Eof]);
    }

    #[test]
    fn operators_take_the_longest_match() {
        assert_eq!(
            kinds("+= -= *= /= %= &= |= ^= <> != >= <= !< !> :: : ~"),
            [
                PlusEq,
                MinusEq,
                StarEq,
                SlashEq,
                PercentEq,
                AmpersandEq,
                PipeEq,
                CaretEq,
                NotEq,
                NotEq,
                GtEq,
                LtEq,
                NotLt,
                NotGt,
                DoubleColon,
                Colon,
                Tilde,
                Eof
            ]
        );
        assert_eq!(kinds("a=-1"), [Word, Eq, Minus, Integer, Eof]);
        assert_eq!(kinds("a<b"), [Word, Lt, Word, Eof]);
        assert_eq!(
            kinds("(a,b.c);"),
            [LParen, Word, Comma, Word, Dot, Word, RParen, Semicolon, Eof]
        );
    }

    #[test]
    fn comments_are_skipped_and_nest() {
        assert_eq!(texts("a -- comment\nb"), ["a", "b", ""]);
        assert_eq!(texts("a /* x /* y */ z */ b"), ["a", "b", ""]);
        assert_eq!(texts("a/**/b"), ["a", "b", ""]);
        assert_eq!(texts("a /* -- ' */ b"), ["a", "b", ""]);
        assert_eq!(texts("a--"), ["a", ""]);
        assert_eq!(texts("1-1"), ["1", "-", "1", ""]);
    }

    #[test]
    fn positions_are_line_column_and_byte_offset() {
        let tokens = tokenize("SELECT\n  é, [x]\r\n@v").unwrap();
        let at = |i: usize| (tokens[i].span.line, tokens[i].span.column, tokens[i].span.start);
        assert_eq!(at(0), (1, 1, 0));
        assert_eq!(at(1), (2, 3, 9));
        assert_eq!(at(2), (2, 4, 11));
        assert_eq!(at(3), (2, 6, 13));
        assert_eq!(at(4), (3, 1, 18));
        assert_eq!(tokens[3].span.end, 16);
    }

    #[test]
    fn unterminated_string_is_105() {
        let e = error("SELECT 1\nPRINT 'abc");
        assert_eq!((e.number, e.line), (105, 2));
        assert_eq!(e.message, "Unclosed quotation mark after the character string 'abc'.");
        assert_eq!(
            error("SELECT N'it''s").message.len(),
            "Unclosed quotation mark after the character string 'it''s'.".len()
        );
        assert_eq!(error("SELECT [abc").number, 105);
        assert_eq!(error("SELECT \"abc").number, 105);
    }

    #[test]
    fn unterminated_comment_is_113() {
        let e = error("SELECT 1\n/* a /* b */");
        assert_eq!((e.number, e.line), (113, 2));
        assert_eq!(e.message, "Missing end comment mark '*/'.");
    }

    #[test]
    fn bad_names_and_characters() {
        assert_eq!(error("SELECT []").number, 1038);
        let long = "x".repeat(129);
        assert_eq!(error(&long).number, 103);
        assert!(tokenize(&"x".repeat(128)).is_ok());
        let e = error("SELECT $(N)");
        assert_eq!((e.number, e.message.as_str()), (102, "Incorrect syntax near '$'."));
        assert_eq!(error("a ! b").number, 102);
    }

    #[test]
    fn iterator_stops_after_eof_or_error() {
        assert_eq!(Lexer::new("a").count(), 2);
        assert_eq!(Lexer::new("a 'b").count(), 2);
        assert_eq!(Lexer::new("").count(), 1);
    }
}
