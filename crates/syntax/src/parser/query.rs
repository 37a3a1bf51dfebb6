//! Queries (`WITH`, `SELECT`, set operators, `FROM`, `ORDER BY`, `OFFSET`, `OPTION`) and the
//! data-modification statements `INSERT`, `UPDATE` and `DELETE`.
//!
//! Decisions where T-SQL is ambiguous:
//!
//! * In a select list, `name = expr` (name a non-reserved word, delimited identifier or
//!   string) is an alias, and `@v = expr` an assignment, never a comparison, as in SQL Server.
//! * A `(` followed by `SELECT` or `WITH` opens a subquery; any other `(` groups an
//!   expression (or, in `FROM`, a join).
//! * An alias without `AS` is any non-reserved word except `THROW` (see
//!   `Parser::at_clause_boundary`).
//! * `WITH` after a table name is a table hint only when `(` follows, so a following
//!   `WITH cte AS (...)` statement without a `;` still parses.
//! * The right side of a `JOIN ... ON` is itself a table source, so the nested form
//!   `a JOIN b JOIN c ON p ON q` parses as `a JOIN (b JOIN c ON p) ON q`; `CROSS JOIN` and
//!   `APPLY` take a single table factor.

use super::{PResult, Parser};
use crate::ast::{
    Cte, Expr, ExprKind, ForJson, ForXml, FunctionArgs, FunctionCall, Ident, ObjectName,
    OffsetFetch, OrderByItem, ParsedId, Query, QueryBody, QueryHint, Select, SelectItem,
    SetOperator, TableSource, Top, VarRef, XmlNamespace,
};
use crate::error::ParseError;
use crate::lexer::TokenKind;
use dml::assign_op;

mod dml;
mod from;

impl<'a> Parser<'a> {
    /// Whether the cursor is at a `(` that opens a query.
    pub(super) fn paren_starts_query(&self) -> bool {
        self.at(&TokenKind::LParen)
            && (self.nth_is_keyword(1, "SELECT") || self.nth_is_keyword(1, "WITH"))
    }

    /// `( query )`.
    pub(super) fn parse_parenthesized_query(&mut self) -> PResult<Query> {
        self.expect(&TokenKind::LParen)?;
        let query = self.parse_query()?;
        self.expect(&TokenKind::RParen)?;
        Ok(query)
    }

    /// `[WITH ctes] body [ORDER BY ...] [OFFSET ...]`.
    pub(super) fn parse_query(&mut self) -> PResult<Query> {
        self.nested(|p| {
            let ctes = if p.at_keyword("WITH") { p.parse_ctes()? } else { Vec::new() };
            p.parse_query_with(ctes)
        })
    }

    /// A query whose `WITH` clause, if any, has been read.
    pub(super) fn parse_query_with(&mut self, ctes: Vec<Cte>) -> PResult<Query> {
        let body = self.parse_query_body(1)?;
        let order_by = self.parse_order_by()?;
        let offset = if order_by.is_empty() { None } else { self.parse_offset_fetch()? };
        let for_json = if self.at_keyword("FOR") && self.nth_is_keyword(1, "JSON") {
            self.advance();
            self.advance();
            Some(self.parse_for_json()?)
        } else {
            None
        };
        let for_xml = if self.at_keyword("FOR") && self.nth_is_keyword(1, "XML") {
            self.advance();
            self.advance();
            Some(self.parse_for_xml()?)
        } else {
            None
        };
        Ok(Query { ctes, body, order_by, offset, for_json, for_xml, xml_namespaces: Vec::new() })
    }

    /// An optional `('name')`, as `PATH` and `ROOT` take.
    fn parse_optional_name(&mut self) -> PResult<Option<String>> {
        if !self.eat(&TokenKind::LParen) {
            return Ok(None);
        }
        let name = match self.peek_kind() {
            TokenKind::String { value, .. } => value.clone(),
            _ => return Err(self.error()),
        };
        self.advance();
        self.expect(&TokenKind::RParen)?;
        Ok(Some(name))
    }

    /// The rest of `FOR XML`: `PATH | RAW [('element')]`, then `ROOT [('name')]`, `TYPE` and
    /// (RAW) `ELEMENTS`.
    fn parse_for_xml(&mut self) -> PResult<ForXml> {
        let (raw, auto) = match self.eat_one_of(&["PATH", "RAW", "AUTO"]) {
            Some(mode) => (mode != "PATH", mode == "AUTO"),
            None => return Err(self.error()),
        };
        let element = if auto {
            String::new()
        } else {
            self.parse_optional_name()?.unwrap_or_else(|| "row".to_string())
        };
        let mut xml = ForXml { raw, auto, elements: false, element, root: None, typed: false };
        while self.eat(&TokenKind::Comma) {
            match self.eat_one_of(&["ROOT", "TYPE", "ELEMENTS"]) {
                Some("ROOT") => {
                    xml.root = Some(self.parse_optional_name()?.unwrap_or_else(|| "root".into()));
                }
                Some("ELEMENTS") if raw => xml.elements = true,
                Some("TYPE") => xml.typed = true,
                _ => return Err(self.error()),
            }
        }
        Ok(xml)
    }

    /// The rest of `FOR JSON`: `PATH | AUTO`, then its options.
    fn parse_for_json(&mut self) -> PResult<ForJson> {
        let path = match self.eat_one_of(&["PATH", "AUTO"]) {
            Some(mode) => mode == "PATH",
            None => return Err(self.error()),
        };
        let mut json =
            ForJson { path, root: None, include_null_values: false, without_array_wrapper: false };
        while self.eat(&TokenKind::Comma) {
            match self.eat_one_of(&["ROOT", "INCLUDE_NULL_VALUES", "WITHOUT_ARRAY_WRAPPER"]) {
                Some("ROOT") => {
                    json.root = Some(self.parse_optional_name()?.unwrap_or_else(|| "root".into()));
                }
                Some("INCLUDE_NULL_VALUES") => json.include_null_values = true,
                Some(_) => json.without_array_wrapper = true,
                None => return Err(self.error()),
            }
        }
        Ok(json)
    }

    /// `WITH XMLNAMESPACES ('uri' AS prefix | DEFAULT 'uri', ...)`, if the cursor is at it, and
    /// the comma that may follow it before common table expressions (then `more` is true).
    pub(super) fn parse_xml_namespaces(&mut self) -> PResult<(Vec<XmlNamespace>, bool)> {
        if !(self.at_keyword("WITH") && self.nth_is_keyword(1, "XMLNAMESPACES")) {
            return Ok((Vec::new(), false));
        }
        self.advance();
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let namespaces = self.parse_comma_separated(|p| {
            let default = p.eat_keyword("DEFAULT");
            let TokenKind::String { value, .. } = p.peek_kind().clone() else {
                return Err(p.error());
            };
            p.advance();
            let prefix = if default {
                None
            } else {
                p.expect_keyword("AS")?;
                Some(p.parse_identifier()?)
            };
            Ok(XmlNamespace { prefix, uri: value })
        })?;
        self.expect(&TokenKind::RParen)?;
        let more = self.eat(&TokenKind::Comma);
        Ok((namespaces, more))
    }

    /// `WITH name [(columns)] AS (query) [, ...]`.
    pub(super) fn parse_ctes(&mut self) -> PResult<Vec<Cte>> {
        self.expect_keyword("WITH")?;
        self.parse_cte_list()
    }

    /// `name [(columns)] AS (query) [, ...]`.
    pub(super) fn parse_cte_list(&mut self) -> PResult<Vec<Cte>> {
        self.parse_comma_separated(|p| {
            let name = p.parse_identifier()?;
            let columns =
                if p.at(&TokenKind::LParen) { p.parse_identifier_list()? } else { Vec::new() };
            p.expect_keyword("AS")?;
            let query = p.parse_parenthesized_query()?;
            Ok(Cte { name, columns, query, max_recursion: None })
        })
    }

    /// Set operations by precedence: `INTERSECT` (2) binds tighter than `UNION` and `EXCEPT`
    /// (1); all are left-associative.
    fn parse_query_body(&mut self, min_precedence: u8) -> PResult<QueryBody> {
        let mut left = self.parse_query_primary()?;
        while let Some((op, precedence)) = self.peek_set_operator() {
            if precedence < min_precedence {
                break;
            }
            self.advance();
            if op == SetOperator::UnionAll {
                self.advance();
            }
            let right = self.parse_query_body(precedence + 1)?;
            left = QueryBody::SetOperation { op, left: Box::new(left), right: Box::new(right) };
        }
        Ok(left)
    }

    fn peek_set_operator(&self) -> Option<(SetOperator, u8)> {
        if self.at_keyword("UNION") {
            let op = if self.nth_is_keyword(1, "ALL") {
                SetOperator::UnionAll
            } else {
                SetOperator::Union
            };
            Some((op, 1))
        } else if self.at_keyword("EXCEPT") {
            Some((SetOperator::Except, 1))
        } else if self.at_keyword("INTERSECT") {
            Some((SetOperator::Intersect, 2))
        } else {
            None
        }
    }

    fn parse_query_primary(&mut self) -> PResult<QueryBody> {
        if self.at(&TokenKind::LParen) {
            self.parse_parenthesized_query_body()
        } else if self.at_keyword("SELECT") {
            self.parse_select()
        } else {
            Err(self.error())
        }
    }

    fn parse_parenthesized_query_body(&mut self) -> PResult<QueryBody> {
        Ok(QueryBody::Parenthesized(Box::new(self.parse_parenthesized_query()?)))
    }

    /// A `SELECT`, built in place in its box: these frames sit on the recursion path of
    /// subqueries, so they avoid moving the large `Select` around.
    fn parse_select(&mut self) -> PResult<QueryBody> {
        let mut select = Box::new(Select {
            distinct: false,
            top: None,
            items: Vec::new(),
            into: None,
            from: Vec::new(),
            where_clause: None,
            group_by: Vec::new(),
            grouping_sets: None,
            having: None,
            parsed: ParsedId::fresh(),
        });
        self.parse_select_list(&mut select)?;
        self.parse_select_clauses(&mut select)?;
        Ok(QueryBody::Select(select))
    }

    /// `SELECT [ALL | DISTINCT] [TOP ...] items`. Mixing variable assignments with returned
    /// columns is error 141.
    fn parse_select_list(&mut self, select: &mut Select) -> PResult<()> {
        let line = self.advance().line;
        select.distinct = self.eat_keyword("DISTINCT");
        if !select.distinct {
            self.eat_keyword("ALL");
        }
        select.top = self.parse_top()?;
        select.items = self.parse_comma_separated(Self::parse_select_item)?;
        let assigns = |item: &SelectItem| matches!(item, SelectItem::Assign { .. });
        if select.items.iter().any(assigns) && !select.items.iter().all(assigns) {
            return Err(ParseError::mixed_assignment(line));
        }
        Ok(())
    }

    /// `[INTO t] [FROM ...] [WHERE ...] [GROUP BY ...] [HAVING ...]`.
    fn parse_select_clauses(&mut self, select: &mut Select) -> PResult<()> {
        if self.eat_keyword("INTO") {
            select.into = Some(self.parse_object_name()?);
        }
        select.from = self.parse_from()?;
        select.where_clause = self.parse_where()?;
        if self.eat_keyword("GROUP") {
            self.expect_keyword("BY")?;
            if self.at_keyword("GROUPING") && self.nth_is_keyword(1, "SETS") {
                self.advance();
                self.advance();
                self.expect(&TokenKind::LParen)?;
                let sets = self.parse_comma_separated(Self::parse_grouping_set)?;
                self.expect(&TokenKind::RParen)?;
                select.group_by = sets.iter().flatten().cloned().collect();
                select.grouping_sets = Some(sets);
            } else {
                let start = self.peek().span;
                select.group_by = self.parse_comma_separated(Self::parse_expr)?;
                // `GROUP BY a, b WITH ROLLUP | WITH CUBE`, the older form of `GROUP BY
                // ROLLUP(a, b)`: read as that. `WITH rollup AS (...)` after the list would be
                // the next statement's common table expression, so it is left alone.
                let suffix = self.at_keyword("WITH")
                    && (self.nth_is_keyword(1, "ROLLUP") || self.nth_is_keyword(1, "CUBE"))
                    && !self.nth_is_keyword(2, "AS")
                    && self.peek_nth(2).kind != TokenKind::LParen;
                if suffix {
                    self.advance();
                    let function = self.advance_text().to_ascii_uppercase();
                    let args = std::mem::take(&mut select.group_by);
                    let span = self.span_from(start);
                    select.group_by = vec![Expr {
                        kind: ExprKind::Function(Box::new(FunctionCall {
                            name: ObjectName::simple(Ident::new(function)),
                            args: FunctionArgs::List { distinct: false, args },
                            over: None,
                            within_group: Vec::new(),
                        })),
                        span,
                    }];
                }
            }
        }
        if self.eat_keyword("HAVING") {
            select.having = Some(self.parse_expr()?);
        }
        Ok(())
    }

    /// One set of `GROUPING SETS (...)`: `(item, ...)`, `()` or a single item.
    fn parse_grouping_set(&mut self) -> PResult<Vec<Expr>> {
        if self.at(&TokenKind::LParen) && self.peek_nth(1).kind == TokenKind::RParen {
            self.advance();
            self.advance();
            return Ok(Vec::new());
        }
        if self.at(&TokenKind::LParen) {
            // `(a, b)` is a set; `(a)` one item, whichever way it is read.
            let start = self.pos;
            self.advance();
            let items = self.parse_comma_separated(Self::parse_expr)?;
            if self.eat(&TokenKind::RParen)
                && (self.at(&TokenKind::Comma) || self.at(&TokenKind::RParen))
            {
                return Ok(items);
            }
            self.pos = start;
        }
        Ok(vec![self.parse_expr()?])
    }

    /// `TOP (expr) | TOP number`, then `[PERCENT] [WITH TIES]`.
    pub(super) fn parse_top(&mut self) -> PResult<Option<Top>> {
        if !self.eat_keyword("TOP") {
            return Ok(None);
        }
        let quantity = if self.eat(&TokenKind::LParen) {
            let quantity = self.parse_expr()?;
            self.expect(&TokenKind::RParen)?;
            quantity
        } else {
            self.parse_signed_number()?
        };
        let percent = self.eat_keyword("PERCENT");
        let with_ties = self.at_keyword("WITH") && self.nth_is_keyword(1, "TIES");
        if with_ties {
            self.advance();
            self.advance();
        }
        Ok(Some(Top { quantity, percent, with_ties }))
    }

    fn parse_select_item(&mut self) -> PResult<SelectItem> {
        if self.eat(&TokenKind::Star) {
            return Ok(SelectItem::Wildcard(None));
        }
        if self.at(&TokenKind::Variable) && assign_op(&self.peek_nth(1).kind).is_some() {
            let variable = VarRef::new(self.advance_text().to_owned());
            let op = self.parse_assign_op()?;
            let value = self.parse_expr()?;
            return Ok(SelectItem::Assign { variable, op, value });
        }
        let names_column =
            self.at_identifier() || matches!(self.peek_kind(), TokenKind::String { .. });
        if names_column && self.peek_nth(1).kind == TokenKind::Eq {
            let alias = self.parse_alias_name()?;
            self.advance();
            let expr = self.parse_expr()?;
            return Ok(SelectItem::Expr { expr, alias: Some(alias) });
        }
        if self.qualified_wildcard_ahead() {
            let mut qualifier = Vec::new();
            while !self.eat(&TokenKind::Star) {
                qualifier.push(self.parse_identifier()?);
                self.expect(&TokenKind::Dot)?;
            }
            return Ok(SelectItem::Wildcard(Some(qualifier)));
        }
        let expr = self.parse_expr()?;
        let alias = self.parse_column_alias()?;
        Ok(SelectItem::Expr { expr, alias })
    }

    /// Whether `name.[name.]*` follows.
    fn qualified_wildcard_ahead(&self) -> bool {
        let mut n = 0;
        while super::is_identifier_token(self.peek_nth(n))
            && self.peek_nth(n + 1).kind == TokenKind::Dot
        {
            if self.peek_nth(n + 2).kind == TokenKind::Star {
                return true;
            }
            n += 2;
        }
        false
    }

    /// `[AS] alias` after a select-list expression; strings are allowed as aliases.
    fn parse_column_alias(&mut self) -> PResult<Option<Ident>> {
        if self.eat_keyword("AS") {
            return self.parse_alias_name().map(Some);
        }
        let possible = self.at_identifier() || matches!(self.peek_kind(), TokenKind::String { .. });
        if !possible || self.at_clause_boundary() {
            return Ok(None);
        }
        self.parse_alias_name().map(Some)
    }

    /// An identifier or a string used as a name (`AS 'total'`, `NAME = 'db_data'`).
    pub(super) fn parse_alias_name(&mut self) -> PResult<Ident> {
        let TokenKind::String { value, .. } = self.peek_kind() else {
            return self.parse_identifier();
        };
        if value.is_empty() {
            return Err(ParseError::empty_name(self.peek().span.line));
        }
        let name = Ident::new(value.clone());
        self.advance();
        Ok(name)
    }

    fn parse_from(&mut self) -> PResult<Vec<TableSource>> {
        if self.eat_keyword("FROM") {
            self.parse_comma_separated(Self::parse_table_source)
        } else {
            Ok(Vec::new())
        }
    }

    fn parse_where(&mut self) -> PResult<Option<Expr>> {
        if self.eat_keyword("WHERE") {
            self.parse_expr().map(Some)
        } else {
            Ok(None)
        }
    }

    /// The WHERE of an UPDATE or DELETE, which may also be `WHERE CURRENT OF [GLOBAL] cursor`.
    fn parse_change_where(&mut self) -> PResult<Option<Expr>> {
        if self.at_keyword("WHERE")
            && self.nth_is_keyword(1, "CURRENT")
            && self.nth_is_keyword(2, "OF")
        {
            let start = self.peek().span;
            for _ in 0..3 {
                self.advance();
            }
            let cursor = self.parse_cursor_ref()?;
            let kind = crate::ast::ExprKind::CurrentOf(cursor);
            return Ok(Some(Expr { kind, span: self.span_from(start) }));
        }
        self.parse_where()
    }

    /// `[ORDER BY expr [ASC | DESC], ...]`.
    pub(super) fn parse_order_by(&mut self) -> PResult<Vec<OrderByItem>> {
        if !self.eat_keyword("ORDER") {
            return Ok(Vec::new());
        }
        self.expect_keyword("BY")?;
        self.parse_comma_separated(|p| {
            let expr = p.parse_expr()?;
            let descending = p.eat_one_of(&["ASC", "DESC"]) == Some("DESC");
            Ok(OrderByItem { expr, descending })
        })
    }

    /// `[OFFSET n ROW[S] [FETCH FIRST | NEXT m ROW[S] ONLY]]`.
    fn parse_offset_fetch(&mut self) -> PResult<Option<OffsetFetch>> {
        if !self.eat_keyword("OFFSET") {
            return Ok(None);
        }
        let offset = self.parse_expr()?;
        self.expect_rows()?;
        let mut fetch = None;
        if self.eat_keyword("FETCH") {
            self.eat_one_of(&["FIRST", "NEXT"]).ok_or_else(|| self.error())?;
            fetch = Some(self.parse_expr()?);
            self.expect_rows()?;
            self.expect_keyword("ONLY")?;
        }
        Ok(Some(OffsetFetch { offset, fetch }))
    }

    fn expect_rows(&mut self) -> PResult<()> {
        self.eat_one_of(&["ROW", "ROWS"]).map(|_| ()).ok_or_else(|| self.error())
    }

    /// `[OPTION (hint, ...)]`; each hint is kept as source text.
    pub(super) fn parse_option_clause(&mut self) -> PResult<Vec<QueryHint>> {
        if !self.eat_keyword("OPTION") {
            return Ok(Vec::new());
        }
        self.expect(&TokenKind::LParen)?;
        let hints = self.parse_comma_separated(Self::parse_query_hint)?;
        self.expect(&TokenKind::RParen)?;
        Ok(hints)
    }

    /// The tokens of one hint, up to a `,` or `)` outside parentheses.
    fn parse_query_hint(&mut self) -> PResult<QueryHint> {
        let start = self.peek().span;
        let first = self.pos;
        let mut depth = 0usize;
        loop {
            match self.peek_kind() {
                TokenKind::Eof => return Err(self.error()),
                TokenKind::Comma | TokenKind::RParen if depth == 0 => break,
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => depth -= 1,
                _ => {}
            }
            self.advance();
        }
        if self.pos == first {
            return Err(self.error());
        }
        let span = self.span_from(start);
        Ok(QueryHint { text: self.source[span.start..span.end].to_owned() })
    }

    /// A statement's `OPTION (...)` clause, its MAXRECURSION copied to the statement's `ctes`.
    pub(super) fn parse_option_clause_for(&mut self, ctes: &mut [Cte]) -> PResult<Vec<QueryHint>> {
        let line = self.peek().span.line;
        let hints = self.parse_option_clause()?;
        self.apply_max_recursion(ctes, &hints, line)?;
        Ok(hints)
    }

    /// Copies an `OPTION (MAXRECURSION n)` hint to the statement's CTEs, which it limits.
    /// SQL Server takes 0 (no limit) to 32767 and rejects more with error 310, reported at
    /// `line`, the `OPTION` clause's.
    pub(super) fn apply_max_recursion(
        &self,
        ctes: &mut [Cte],
        hints: &[QueryHint],
        line: u32,
    ) -> PResult<()> {
        for hint in hints {
            let mut words = hint.text.split_whitespace();
            if !words.next().is_some_and(|w| w.eq_ignore_ascii_case("MAXRECURSION")) {
                continue;
            }
            let value = words.next().unwrap_or_default();
            let n: u64 = match (value.parse(), words.next()) {
                (Ok(n), None) => n,
                _ => return Err(ParseError::syntax(value, false, line)),
            };
            let n = u16::try_from(n).ok().filter(|n| *n <= 32767).ok_or_else(|| ParseError {
                number: 310,
                severity: 15,
                state: 1,
                line,
                message: format!(
                    "The value {n} specified for the MAXRECURSION option exceeds the allowed maximum of 32767."
                ),
            })?;
            for cte in ctes.iter_mut() {
                cte.max_recursion = Some(n);
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Table sources
    // -----------------------------------------------------------------------------------------
}
