//! The recursive-descent parser: [`parse_batch`] turns one batch into a [`Batch`].
//!
//! The batch is lexed up front. A lexical error does not stop parsing at once: the tokens
//! before it are parsed, and the error is reported only when the parser reaches it, so the
//! error reported is always the first one in the text, as with SQL Server.
//!
//! Submodules: `stmt` (statement dispatch, control flow, variables, transactions, `EXEC`),
//! `ddl` (`CREATE`/`ALTER`/`DROP`/`TRUNCATE`), `query` (queries and `INSERT`/`UPDATE`/
//! `DELETE`) and `expr` (expressions). This module holds the token cursor and the helpers
//! they share: keyword matching, names, data types and error construction.
//!
//! Nesting (parentheses, subqueries, blocks, joins) is bounded by [`MAX_DEPTH`]; deeper input
//! is error 191 instead of a stack overflow.

mod alter;
mod bulk;
mod cursor;
mod ddl;
mod expr;
mod merge;
mod query;
mod stmt;

pub(crate) use expr::{FUNCTION_KEYWORDS, NILADIC_FUNCTIONS};

use crate::ast::{Batch, DataType, Ident, ObjectName, Span, Statement, StatementKind, TypeParam};
use crate::error::ParseError;
use crate::keywords::is_reserved;
use crate::lexer::{Lexer, Token, TokenKind};

/// How deeply expressions, queries, table sources and statements may nest, counted in
/// recursive descents (a subquery in an expression counts two). Deeper input is error 191.
///
/// 128 is far above what people write (SQL Server itself stops at 32 levels of subqueries)
/// and keeps the worst case within the default 2 MiB stack of a spawned thread: measured
/// with the deepest-recursing constructs (nested `CASE`, `CAST`, subqueries, derived
/// tables), parsing at this limit needs about 1.3 MiB of stack unoptimised and under
/// 0.4 MiB optimised. The recursive functions keep their frames small to stay there.
pub const MAX_DEPTH: usize = 128;

/// Parses one batch: the text between two `GO` lines, after `sqlcmd` variable substitution.
///
/// Statements need no semicolons. On error nothing of the batch is returned, as SQL Server
/// runs no statement of a batch that does not compile.
pub fn parse_batch(sql: &str) -> Result<Batch, ParseError> {
    Parser::new(sql, true).parse_batch()
}

/// [`parse_batch`] under a session's `SET QUOTED_IDENTIFIER`: OFF makes `"text"` a string
/// literal instead of a delimited identifier.
pub fn parse_batch_with(sql: &str, quoted_identifier: bool) -> Result<Batch, ParseError> {
    Parser::new(sql, quoted_identifier).parse_batch()
}

type PResult<T> = Result<T, ParseError>;

/// SQL Server's compile-time checks of `GOTO`: a label declared twice in the batch (or in the
/// module it defines) is error 132, a `GOTO` to a label that is not declared error 133.
fn check_labels(statements: &[Statement]) -> PResult<()> {
    fn walk<'s>(
        st: &'s Statement,
        labels: &mut Vec<&'s Statement>,
        gotos: &mut Vec<&'s Statement>,
    ) {
        let all = |list: &'s [Statement], labels: &mut Vec<_>, gotos: &mut Vec<_>| {
            for s in list {
                walk(s, labels, gotos);
            }
        };
        match &st.kind {
            StatementKind::Label(_) => labels.push(st),
            StatementKind::Goto(_) => gotos.push(st),
            StatementKind::Block(list) => all(list, labels, gotos),
            StatementKind::If(i) => {
                walk(&i.then_branch, labels, gotos);
                if let Some(e) = &i.else_branch {
                    walk(e, labels, gotos);
                }
            }
            StatementKind::While(w) => walk(&w.body, labels, gotos),
            StatementKind::TryCatch(t) => {
                all(&t.try_block, labels, gotos);
                all(&t.catch_block, labels, gotos);
            }
            StatementKind::CreateProcedure(p) => all(&p.body, labels, gotos),
            StatementKind::CreateTrigger(t) => all(&t.body, labels, gotos),
            _ => {}
        }
    }
    let (mut labels, mut gotos) = (Vec::new(), Vec::new());
    for st in statements {
        walk(st, &mut labels, &mut gotos);
    }
    let name = |st: &Statement| match &st.kind {
        StatementKind::Label(l) | StatementKind::Goto(l) => l.value.to_ascii_lowercase(),
        _ => String::new(),
    };
    for (i, label) in labels.iter().enumerate() {
        if labels[..i].iter().any(|l| name(l) == name(label)) {
            let StatementKind::Label(l) = &label.kind else { continue };
            return Err(ParseError::label_declared_twice(&l.value, label.span.line));
        }
    }
    for goto in gotos {
        if !labels.iter().any(|l| name(l) == name(goto)) {
            let StatementKind::Goto(l) = &goto.kind else { continue };
            return Err(ParseError::label_not_declared(&l.value, goto.span.line));
        }
    }
    Ok(())
}

/// A cursor over the batch's tokens. The token list always ends with [`TokenKind::Eof`].
struct Parser<'a> {
    source: &'a str,
    tokens: Vec<Token<'a>>,
    pos: usize,
    /// The lexical error that cut the token list short, reported when the parser gets there.
    lex_error: Option<ParseError>,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(source: &'a str, quoted_identifier: bool) -> Self {
        let mut tokens = Vec::new();
        let mut lex_error = None;
        for item in Lexer::new(source).quoted_identifier(quoted_identifier) {
            match item {
                Ok(token) => tokens.push(token),
                Err(error) => lex_error = Some(error),
            }
        }
        if lex_error.is_some() {
            let end = tokens.last().map_or(Span { line: 1, column: 1, ..Span::default() }, |t| {
                Span { start: t.span.end, ..t.span }
            });
            tokens.push(Token { kind: TokenKind::Eof, text: "", span: end });
        }
        Self { source, tokens, pos: 0, lex_error, depth: 0 }
    }

    fn parse_batch(mut self) -> PResult<Batch> {
        let mut statements = Vec::new();
        loop {
            self.skip_semicolons();
            if self.at_eof() {
                break;
            }
            let first_in_batch = statements.is_empty();
            statements.push(self.parse_statement(first_in_batch)?);
        }
        match self.lex_error {
            Some(error) => Err(error),
            None => {
                check_labels(&statements)?;
                Ok(Batch { statements })
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Token cursor
    // -----------------------------------------------------------------------------------------

    fn peek(&self) -> &Token<'a> {
        self.peek_nth(0)
    }

    /// The token `n` places ahead (the final `Eof` if that is past the end).
    fn peek_nth(&self, n: usize) -> &Token<'a> {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.pos + n).min(last)]
    }

    fn peek_kind(&self) -> &TokenKind {
        &self.peek().kind
    }

    fn at_eof(&self) -> bool {
        *self.peek_kind() == TokenKind::Eof
    }

    /// Consumes the current token (`Eof` is never consumed) and returns its span. Nothing is
    /// cloned: unoptimised builds give every call site its own stack slot, and small frames
    /// keep deep nesting within the stack (see [`MAX_DEPTH`]).
    fn advance(&mut self) -> Span {
        let span = self.peek().span;
        if !self.at_eof() {
            self.pos += 1;
        }
        span
    }

    /// Consumes the current token and returns its source text.
    fn advance_text(&mut self) -> &'a str {
        let text = self.peek().text;
        self.advance();
        text
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek_kind() == kind
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.at(kind);
        if found {
            self.advance();
        }
        found
    }

    fn expect(&mut self, kind: &TokenKind) -> PResult<()> {
        if self.eat(kind) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn at_keyword(&self, keyword: &str) -> bool {
        self.peek().is_keyword(keyword)
    }

    fn nth_is_keyword(&self, n: usize, keyword: &str) -> bool {
        self.peek_nth(n).is_keyword(keyword)
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        let found = self.at_keyword(keyword);
        if found {
            self.advance();
        }
        found
    }

    /// An optional `NULL` (Some(true)) or `NOT NULL` (Some(false)).
    fn eat_nullability(&mut self) -> Option<bool> {
        if self.eat_keyword("NULL") {
            Some(true)
        } else if self.at_keyword("NOT") && self.nth_is_keyword(1, "NULL") {
            self.advance();
            self.advance();
            Some(false)
        } else {
            None
        }
    }

    fn expect_keyword(&mut self, keyword: &str) -> PResult<()> {
        if self.eat_keyword(keyword) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// Consumes the first of `keywords` that is next and says which one it was.
    fn eat_one_of(&mut self, keywords: &[&'static str]) -> Option<&'static str> {
        let found = keywords.iter().copied().find(|keyword| self.at_keyword(keyword))?;
        self.advance();
        Some(found)
    }

    /// The current word, upper-cased, for `match`ing keywords; `None` for other tokens.
    fn peek_word_upper(&self) -> Option<String> {
        let token = self.peek();
        (token.kind == TokenKind::Word).then(|| token.text.to_ascii_uppercase())
    }

    fn skip_semicolons(&mut self) {
        while self.eat(&TokenKind::Semicolon) {}
    }

    /// A span from `start` to the end of the last consumed token.
    fn span_from(&self, start: Span) -> Span {
        let end = self.pos.checked_sub(1).map_or(start.start, |i| self.tokens[i].span.end);
        Span { end: end.max(start.start), ..start }
    }

    /// Whether the current token ends an optional trailing part of a statement (an alias, a
    /// transaction name, `RETURN`'s value): the end of input, `;`, a reserved keyword, or
    /// `THROW`. `THROW` is not reserved, and SQL Server would take it for an alias in
    /// `SELECT 1 THROW 50000, 'x', 1` and then fail; Walden reads it as the next statement.
    fn at_clause_boundary(&self) -> bool {
        let token = self.peek();
        match token.kind {
            TokenKind::Eof | TokenKind::Semicolon => true,
            TokenKind::Word => is_reserved(token.text) || token.is_keyword("THROW"),
            _ => false,
        }
    }

    /// Runs `parse` one nesting level deeper, failing with error 191 past [`MAX_DEPTH`].
    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_DEPTH {
            return Err(ParseError::nested_too_deeply(self.peek().span.line));
        }
        self.depth += 1;
        let result = parse(self);
        self.depth -= 1;
        result
    }

    // -----------------------------------------------------------------------------------------
    // Errors
    // -----------------------------------------------------------------------------------------

    /// "Incorrect syntax near" the current token.
    fn error(&self) -> ParseError {
        self.error_at(self.pos)
    }

    /// "Incorrect syntax near" token `index`. At the end of input SQL Server names the last
    /// token instead, always as error 102, even when that token is a reserved keyword (a batch
    /// of `SELECT` alone is "Incorrect syntax near 'SELECT'."; 156 is for a keyword that
    /// stands where it does not fit), unless the input ended because of a lexical error, which
    /// wins.
    fn error_at(&self, index: usize) -> ParseError {
        let token = &self.tokens[index];
        if token.kind != TokenKind::Eof {
            return syntax_error_near(token);
        }
        if let Some(error) = &self.lex_error {
            return error.clone();
        }
        let last = &self.tokens[index.saturating_sub(1)];
        ParseError::syntax(near_text(last), false, last.span.line)
    }

    // -----------------------------------------------------------------------------------------
    // Names and types
    // -----------------------------------------------------------------------------------------

    /// Whether the current token can be an identifier: a delimited identifier or a word that
    /// is not reserved.
    fn at_identifier(&self) -> bool {
        is_identifier_token(self.peek())
    }

    fn parse_identifier(&mut self) -> PResult<Ident> {
        if !self.at_identifier() {
            return Err(self.error());
        }
        let name = Ident::new(identifier_value(self.peek()));
        self.advance();
        Ok(name)
    }

    /// `(a, b, ...)`: a parenthesised list of identifiers.
    fn parse_identifier_list(&mut self) -> PResult<Vec<Ident>> {
        self.expect(&TokenKind::LParen)?;
        let names = self.parse_comma_separated(Self::parse_identifier)?;
        self.expect(&TokenKind::RParen)?;
        Ok(names)
    }

    /// One or more items separated by commas.
    fn parse_comma_separated<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut items = vec![item(self)?];
        while self.eat(&TokenKind::Comma) {
            items.push(item(self)?);
        }
        Ok(items)
    }

    /// A name part after a dot. There a reserved word is a name, as in SQL Server:
    /// `c.precision`, `t.key`, `s.user` (nothing else can follow the dot).
    fn parse_identifier_after_dot(&mut self) -> PResult<Ident> {
        if self.peek_kind() == &TokenKind::Word {
            return Ok(Ident::new(self.advance_text()));
        }
        self.parse_identifier()
    }

    /// Dotted name parts; a part but the last may be empty (`master..spt_values`, `..t`: the
    /// current database and the default schema, as go-mssqldb's bulk copy names its table).
    fn parse_name_parts(&mut self) -> PResult<Vec<Option<Ident>>> {
        let first = if self.at(&TokenKind::Dot) { None } else { Some(self.parse_identifier()?) };
        let mut parts = vec![first];
        while self.eat(&TokenKind::Dot) {
            if self.at(&TokenKind::Dot) {
                parts.push(None);
            } else {
                parts.push(Some(self.parse_identifier_after_dot()?));
            }
        }
        Ok(parts)
    }

    /// `[[[server.]database.]schema.]name`.
    fn parse_object_name(&mut self) -> PResult<ObjectName> {
        let start = self.pos;
        let parts = self.parse_name_parts()?;
        self.object_name_from_parts(parts, start)
    }

    /// Builds an [`ObjectName`] from the parts read since token `start`: at most four parts,
    /// the last one present.
    fn object_name_from_parts(
        &self,
        mut parts: Vec<Option<Ident>>,
        start: usize,
    ) -> PResult<ObjectName> {
        self.check_part_count(parts.len(), start)?;
        let Some(Some(name)) = parts.pop() else { return Err(self.error()) };
        let mut prefix = || parts.pop().flatten();
        let schema = prefix();
        let database = prefix();
        let server = prefix();
        Ok(ObjectName { server, database, schema, name })
    }

    /// Error 117 for a name of more than four parts read since token `start`.
    fn check_part_count(&self, count: usize, start: usize) -> PResult<()> {
        if count <= 4 {
            return Ok(());
        }
        let first = self.tokens[start].span;
        let text = &self.source[first.start..self.span_from(first).end];
        Err(ParseError::too_many_prefixes(text, first.line))
    }

    /// `name [(n [, m]) | (MAX)]`.
    fn parse_data_type(&mut self) -> PResult<DataType> {
        // The ISO two-word name, SQL Server's synonym for FLOAT(53).
        if self.at_keyword("DOUBLE") && self.nth_is_keyword(1, "PRECISION") {
            self.advance();
            self.advance();
            let name = ObjectName::simple(Ident::new("float"));
            return Ok(DataType { name, params: Vec::new() });
        }
        let name = self.parse_object_name()?;
        let mut params = Vec::new();
        if self.eat(&TokenKind::LParen) {
            params = self.parse_comma_separated(Self::parse_type_param)?;
            self.expect(&TokenKind::RParen)?;
        }
        Ok(DataType { name, params })
    }

    fn parse_type_param(&mut self) -> PResult<TypeParam> {
        if self.eat_keyword("MAX") {
            return Ok(TypeParam::Max);
        }
        let number = self.parse_unsigned::<u32>()?;
        Ok(TypeParam::Number(number))
    }

    /// An integer literal that fits `T`.
    fn parse_unsigned<T: std::str::FromStr>(&mut self) -> PResult<T> {
        let token = self.peek();
        match (&token.kind, token.text.parse::<T>()) {
            (TokenKind::Integer, Ok(value)) => {
                self.advance();
                Ok(value)
            }
            _ => Err(self.error()),
        }
    }
}

/// Whether `token` can be an identifier: a delimited identifier or a non-reserved word.
/// `PRECISION` is on SQL Server's reserved list (for `DOUBLE PRECISION`), yet SQL Server takes
/// it undelimited as a name: `sys.columns` has a column `precision` that scripts select,
/// declare and alias without brackets.
fn is_identifier_token(token: &Token<'_>) -> bool {
    match token.kind {
        TokenKind::QuotedIdent(_) => true,
        TokenKind::Word => !is_reserved(token.text) || token.text.eq_ignore_ascii_case("PRECISION"),
        _ => false,
    }
}

/// The name an identifier token stands for.
fn identifier_value(token: &Token<'_>) -> String {
    match &token.kind {
        TokenKind::QuotedIdent(value) => value.clone(),
        _ => token.text.to_owned(),
    }
}

/// Error 102 (or 156 for a reserved keyword) naming `token` the way SQL Server does: strings
/// and delimited identifiers by their content, everything else as written.
fn syntax_error_near(token: &Token<'_>) -> ParseError {
    let is_keyword = token.kind == TokenKind::Word && is_reserved(token.text);
    ParseError::syntax(near_text(token), is_keyword, token.span.line)
}

/// How an "Incorrect syntax near" message names `token`.
fn near_text<'t>(token: &'t Token<'_>) -> &'t str {
    match &token.kind {
        TokenKind::String { value, .. } | TokenKind::QuotedIdent(value) => value.as_str(),
        _ => token.text,
    }
}
