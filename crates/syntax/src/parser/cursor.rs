//! The cursor statements: `DECLARE name CURSOR`, `OPEN`, `FETCH`, `CLOSE` and `DEALLOCATE`.
//!
//! `DECLARE` takes SQL Server's two forms, which cannot be mixed: the ISO one
//! (`DECLARE c [INSENSITIVE] [SCROLL] CURSOR FOR select [FOR READ ONLY | FOR UPDATE [OF ...]]`)
//! and the Transact-SQL one, whose options follow `CURSOR` in a fixed order (scope,
//! direction, type, concurrency, `TYPE_WARNING`) and which ends only with `FOR UPDATE`.
//! `FAST_FORWARD` with `SCROLL` is error 1048 here, as when SQL Server
//! compiles the batch.
//!
//! In `FETCH`, `FROM` may be left out after the direction, and a direction keyword followed
//! by nothing that can name a cursor is the cursor's name (`FETCH next` fetches from `next`).

use super::{PResult, Parser};
use crate::ast::{
    CursorOption, CursorRef, CursorStatement, CursorUpdatability, DeclareCursor, Fetch,
    FetchDirection, SelectStatement, StatementKind,
};
use crate::error::ParseError;
use crate::lexer::TokenKind;

/// The Transact-SQL options of `DECLARE CURSOR` in the groups the grammar orders them in; at
/// most one of each group.
const OPTION_GROUPS: [&[(&str, CursorOption)]; 5] = [
    &[("LOCAL", CursorOption::Local), ("GLOBAL", CursorOption::Global)],
    &[("FORWARD_ONLY", CursorOption::ForwardOnly), ("SCROLL", CursorOption::Scroll)],
    &[
        ("STATIC", CursorOption::Static),
        ("KEYSET", CursorOption::Keyset),
        ("DYNAMIC", CursorOption::Dynamic),
        ("FAST_FORWARD", CursorOption::FastForward),
    ],
    &[
        ("READ_ONLY", CursorOption::ReadOnly),
        ("SCROLL_LOCKS", CursorOption::ScrollLocks),
        ("OPTIMISTIC", CursorOption::Optimistic),
    ],
    &[("TYPE_WARNING", CursorOption::TypeWarning)],
];

impl Parser<'_> {
    /// Whether `DECLARE` starts a cursor declaration: a name rather than a variable follows.
    pub(super) fn at_declare_cursor(&self) -> bool {
        self.peek_nth(1).kind != TokenKind::Variable
    }

    /// `DECLARE name [INSENSITIVE] [SCROLL] CURSOR [options] FOR select [FOR ...]`.
    pub(super) fn parse_declare_cursor(&mut self) -> PResult<StatementKind> {
        self.advance();
        let name = self.parse_identifier()?;
        let insensitive = self.eat_keyword("INSENSITIVE");
        let iso_scroll = self.eat_keyword("SCROLL");
        self.expect_keyword("CURSOR")?;
        let iso = insensitive || iso_scroll;
        let options = if iso { Vec::new() } else { self.parse_cursor_options()? };
        self.expect_keyword("FOR")?;
        let query = self.parse_cursor_query()?;
        let updatability = self.parse_cursor_updatability(options.is_empty())?;
        let declare = DeclareCursor { name, insensitive, iso_scroll, options, query, updatability };
        Ok(StatementKind::Cursor(Box::new(CursorStatement::Declare(Box::new(declare)))))
    }

    /// The Transact-SQL options, at most one of each group, in the grammar's order.
    fn parse_cursor_options(&mut self) -> PResult<Vec<CursorOption>> {
        let line = self.peek().span.line;
        let mut options = Vec::new();
        for group in OPTION_GROUPS {
            if let Some(&(_, option)) = group.iter().find(|(word, _)| self.at_keyword(word)) {
                self.advance();
                options.push(option);
            }
        }
        // Since SQL Server 2005 FAST_FORWARD may go with FORWARD_ONLY, but not with SCROLL.
        let conflict =
            [CursorOption::Scroll, CursorOption::FastForward].iter().all(|o| options.contains(o));
        if conflict {
            return Err(ParseError {
                number: 1048,
                severity: 15,
                state: 1,
                line,
                message: "Conflicting cursor options SCROLL and FAST_FORWARD.".into(),
            });
        }
        Ok(options)
    }

    /// The cursor's query: `[WITH ctes] select [OPTION (...)]`.
    fn parse_cursor_query(&mut self) -> PResult<SelectStatement> {
        let mut query = self.parse_query()?;
        let hints = self.parse_option_clause_for(&mut query.ctes)?;
        Ok(SelectStatement { query, hints })
    }

    /// `FOR READ ONLY` (only when `read_only_allowed`: the ISO form, or no options) or
    /// `FOR UPDATE [OF column, ...]`.
    fn parse_cursor_updatability(
        &mut self,
        read_only_allowed: bool,
    ) -> PResult<Option<CursorUpdatability>> {
        let read_only_next = self.nth_is_keyword(1, "READ") && read_only_allowed;
        if !(self.at_keyword("FOR") && (read_only_next || self.nth_is_keyword(1, "UPDATE"))) {
            return Ok(None);
        }
        self.advance();
        if self.eat_keyword("READ") {
            self.expect_keyword("ONLY")?;
            return Ok(Some(CursorUpdatability::ReadOnly));
        }
        self.expect_keyword("UPDATE")?;
        let columns = if self.eat_keyword("OF") {
            self.parse_comma_separated(Self::parse_identifier)?
        } else {
            Vec::new()
        };
        Ok(Some(CursorUpdatability::Update(columns)))
    }

    /// `OPEN`, `CLOSE` or `DEALLOCATE` and the cursor it names.
    pub(super) fn parse_cursor_command(&mut self) -> PResult<StatementKind> {
        let command = self.advance_text().to_ascii_uppercase();
        let cursor = self.parse_cursor_ref()?;
        let statement = match command.as_str() {
            "OPEN" => CursorStatement::Open(cursor),
            "CLOSE" => CursorStatement::Close(cursor),
            _ => CursorStatement::Deallocate(cursor),
        };
        Ok(StatementKind::Cursor(Box::new(statement)))
    }

    /// `[GLOBAL] name`. `GLOBAL` is not reserved: alone, it is a cursor's name.
    pub(super) fn parse_cursor_ref(&mut self) -> PResult<CursorRef> {
        let global = self.at_keyword("GLOBAL") && super::is_identifier_token(self.peek_nth(1));
        if global {
            self.advance();
        }
        Ok(CursorRef { name: self.parse_identifier()?, global })
    }

    /// `FETCH [[NEXT | PRIOR | FIRST | LAST | ABSOLUTE n | RELATIVE n] [FROM]] cursor
    /// [INTO @v, ...]`; `n` is an integer constant or a variable.
    pub(super) fn parse_fetch(&mut self) -> PResult<StatementKind> {
        self.advance();
        let simple = ["NEXT", "PRIOR", "FIRST", "LAST"];
        let names_cursor = |p: &Self, n: usize| {
            let token = p.peek_nth(n);
            super::is_identifier_token(token) || token.is_keyword("FROM")
        };
        let direction = match self.peek_word_upper().as_deref() {
            Some(word) if simple.contains(&word) && names_cursor(self, 1) => {
                self.advance();
                match word {
                    "NEXT" => FetchDirection::Next,
                    "PRIOR" => FetchDirection::Prior,
                    "FIRST" => FetchDirection::First,
                    _ => FetchDirection::Last,
                }
            }
            Some(word @ ("ABSOLUTE" | "RELATIVE"))
                if matches!(
                    self.peek_nth(1).kind,
                    TokenKind::Integer | TokenKind::Variable | TokenKind::Minus | TokenKind::Plus
                ) =>
            {
                self.advance();
                let n = if self.at(&TokenKind::Variable) {
                    self.parse_primary()?
                } else {
                    self.parse_signed_number()?
                };
                if word == "ABSOLUTE" {
                    FetchDirection::Absolute(n)
                } else {
                    FetchDirection::Relative(n)
                }
            }
            _ => FetchDirection::Next,
        };
        self.eat_keyword("FROM");
        let cursor = self.parse_cursor_ref()?;
        let into = if self.eat_keyword("INTO") {
            self.parse_comma_separated(Self::parse_variable_name)?
        } else {
            Vec::new()
        };
        let fetch = Fetch { direction, cursor, into };
        Ok(StatementKind::Cursor(Box::new(CursorStatement::Fetch(Box::new(fetch)))))
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::{CursorStatement, FetchDirection, StatementKind};
    use crate::parse_batch;

    fn cursor_statement(sql: &str) -> CursorStatement {
        let batch = parse_batch(sql).unwrap();
        match batch.statements.into_iter().next().map(|s| s.kind) {
            Some(StatementKind::Cursor(c)) => *c,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn cursor_statements_print_back_as_they_parse() {
        for sql in [
            "DECLARE c CURSOR FOR SELECT a FROM t",
            "DECLARE c INSENSITIVE SCROLL CURSOR FOR SELECT a FROM t ORDER BY a FOR READ ONLY",
            "DECLARE c CURSOR LOCAL FORWARD_ONLY STATIC READ_ONLY TYPE_WARNING FOR SELECT 1",
            "DECLARE [my cursor] CURSOR GLOBAL FOR WITH x AS (SELECT 1 AS a) SELECT a FROM x \
             OPTION (MAXRECURSION 5) FOR UPDATE OF a, b",
            "OPEN GLOBAL c CLOSE c DEALLOCATE global",
            "FETCH c FETCH NEXT c INTO @a FETCH ABSOLUTE -2 FROM c FETCH RELATIVE @n FROM GLOBAL c",
        ] {
            let printed = parse_batch(sql).unwrap().to_string();
            let again = parse_batch(&printed).unwrap().to_string();
            assert_eq!(printed, again, "{sql}");
        }
    }

    #[test]
    fn a_direction_keyword_alone_is_the_cursor_name() {
        let CursorStatement::Fetch(fetch) = cursor_statement("FETCH next") else { panic!() };
        assert_eq!(fetch.direction, FetchDirection::Next);
        assert_eq!(fetch.cursor.name.value, "next");
        let CursorStatement::Fetch(fetch) = cursor_statement("FETCH LAST c INTO @a, @b") else {
            panic!()
        };
        assert_eq!(fetch.direction, FetchDirection::Last);
        assert_eq!(fetch.into, ["@a", "@b"]);
    }

    #[test]
    fn the_two_forms_do_not_mix_and_fast_forward_does_not_scroll() {
        assert!(parse_batch("DECLARE c SCROLL CURSOR LOCAL FOR SELECT 1").is_err());
        assert!(parse_batch("DECLARE c CURSOR LOCAL FOR SELECT 1 FOR READ ONLY").is_err());
        assert!(parse_batch("DECLARE c CURSOR STATIC LOCAL FOR SELECT 1").is_err());
        let error = parse_batch("DECLARE c CURSOR SCROLL FAST_FORWARD FOR SELECT 1").unwrap_err();
        assert_eq!(error.number, 1048);
        assert!(parse_batch("DECLARE c CURSOR FORWARD_ONLY FAST_FORWARD FOR SELECT 1").is_ok());
    }
}
