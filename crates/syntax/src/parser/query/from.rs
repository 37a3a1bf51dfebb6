//! The `FROM` clause: table sources and how they combine. Joins (with the nested
//! `a JOIN b JOIN c ON p ON q` form), `APPLY`, `PIVOT`/`UNPIVOT`, derived tables and `VALUES`
//! lists, table-valued functions, `OPENJSON`, `.nodes()`, aliases with their column lists, and
//! table hints in both the `WITH (...)` and the old parenthesized style. A `(` here opens a
//! subquery only when a query follows; otherwise it groups a join.

use super::super::{PResult, Parser};
use crate::ast::{
    Expr, ExprKind, Ident, Join, JoinKind, JsonColumn, Pivot, TableHint, TableSource, Unpivot,
};
use crate::lexer::TokenKind;

impl<'a> Parser<'a> {
    /// A table factor followed by any joins.
    pub(in crate::parser) fn parse_table_source(&mut self) -> PResult<TableSource> {
        self.nested(|p| {
            let mut left = p.parse_table_factor()?;
            while p.at_keyword("PIVOT") || p.at_keyword("UNPIVOT") {
                left = p.parse_pivot(left)?;
            }
            while let Some(kind) = p.parse_join_kind()? {
                left = p.parse_join(left, kind)?;
            }
            Ok(left)
        })
    }

    /// `PIVOT (aggregate FOR column IN (values)) [AS] alias` or `UNPIVOT (value FOR name IN
    /// (columns)) [AS] alias` after `source`.
    fn parse_pivot(&mut self, source: TableSource) -> PResult<TableSource> {
        let pivot = self.eat_keyword("PIVOT");
        if !pivot {
            self.expect_keyword("UNPIVOT")?;
        }
        self.expect(&TokenKind::LParen)?;
        let (aggregate, value) = if pivot {
            (Some(self.parse_expr()?), None)
        } else {
            (None, Some(self.parse_identifier()?))
        };
        self.expect_keyword("FOR")?;
        let mut column = self.parse_identifier()?;
        // `FOR src.col`: the column may be qualified by the source's alias, whose columns
        // are the only ones in scope here, so the name alone identifies it.
        if pivot && self.eat(&TokenKind::Dot) {
            column = self.parse_identifier()?;
        }
        self.expect_keyword("IN")?;
        let list = self.parse_identifier_list()?;
        self.expect(&TokenKind::RParen)?;
        self.eat_keyword("AS");
        let alias = self.parse_identifier()?;
        Ok(match (aggregate, value) {
            (Some(aggregate), _) => TableSource::Pivot(Box::new(Pivot {
                source,
                aggregate,
                pivot_column: column,
                values: list,
                alias,
            })),
            (None, Some(value)) => TableSource::Unpivot(Box::new(Unpivot {
                source,
                value,
                name: column,
                columns: list,
                alias,
            })),
            (None, None) => return Err(self.error()),
        })
    }

    /// The right side of a join whose operator has been read.
    fn parse_join(&mut self, left: TableSource, kind: JoinKind) -> PResult<TableSource> {
        let (right, on) = match kind {
            JoinKind::Cross | JoinKind::CrossApply | JoinKind::OuterApply => {
                (self.parse_table_factor()?, None)
            }
            _ => {
                let right = self.parse_table_source()?;
                self.expect_keyword("ON")?;
                (right, Some(self.parse_expr()?))
            }
        };
        Ok(TableSource::Join(Box::new(Join { left, right, kind, on })))
    }

    /// Consumes a join operator, if one is next.
    fn parse_join_kind(&mut self) -> PResult<Option<JoinKind>> {
        if self.eat_keyword("JOIN") {
            return Ok(Some(JoinKind::Inner));
        }
        if self.at_keyword("CROSS") && self.nth_is_keyword(1, "APPLY") {
            self.advance();
            self.advance();
            return Ok(Some(JoinKind::CrossApply));
        }
        if self.at_keyword("OUTER") && self.nth_is_keyword(1, "APPLY") {
            self.advance();
            self.advance();
            return Ok(Some(JoinKind::OuterApply));
        }
        let kind = match self.eat_one_of(&["INNER", "LEFT", "RIGHT", "FULL", "CROSS"]) {
            Some("INNER") => JoinKind::Inner,
            Some("CROSS") => JoinKind::Cross,
            Some(side) => {
                self.eat_keyword("OUTER");
                match side {
                    "LEFT" => JoinKind::LeftOuter,
                    "RIGHT" => JoinKind::RightOuter,
                    _ => JoinKind::FullOuter,
                }
            }
            None => return Ok(None),
        };
        // A join hint (`INNER HASH JOIN`, `LEFT OUTER LOOP JOIN`) asks SQL Server's optimizer
        // for an algorithm; it never changes the result, and Walden's planner chooses its own.
        if kind != JoinKind::Cross && self.nth_is_keyword(1, "JOIN") {
            self.eat_one_of(&["LOOP", "HASH", "MERGE", "REMOTE"]);
        }
        self.expect_keyword("JOIN")?;
        Ok(Some(kind))
    }

    fn parse_table_factor(&mut self) -> PResult<TableSource> {
        if self.paren_starts_query() || self.parens_wrap_query() {
            self.parse_derived_table()
        } else if self.at(&TokenKind::LParen) && self.nth_is_keyword(1, "VALUES") {
            self.parse_values_table()
        } else if self.at(&TokenKind::LParen) {
            self.parse_parenthesized_table_source()
        } else if self.at(&TokenKind::Variable)
            && self.peek_nth(1).kind == TokenKind::Dot
            && self.peek_nth(2).kind == TokenKind::Word
            && self.peek_nth(2).text == "nodes"
        {
            let start = self.peek().span;
            let name = self.advance_text().to_owned();
            let target =
                Expr { kind: ExprKind::Variable(name.into()), span: self.span_from(start) };
            self.advance();
            self.advance();
            self.parse_xml_nodes(target)
        } else if self.at(&TokenKind::Variable) {
            let name = self.advance_text().to_owned();
            let alias = self.parse_table_alias()?;
            Ok(TableSource::Variable { name, alias })
        } else if self.at(&TokenKind::DoubleColon) && self.peek_nth(1).kind == TokenKind::Word {
            // `::fn_helpcollations()`: SQL Server 2000's way of naming a system table-valued
            // function, still taken (old maintenance scripts use it): the same as `sys.`.
            self.advance();
            let mut source = self.parse_named_table_source()?;
            if let TableSource::Function { name, .. } = &mut source {
                if name.schema.is_none() && name.database.is_none() {
                    name.schema = Some(Ident::new("sys"));
                    return Ok(source);
                }
            }
            Err(self.error())
        } else {
            self.parse_named_table_source()
        }
    }

    /// Whether the `(` here opens a derived table's query written in more parentheses, as in
    /// `(((SELECT ...))) AS t`: a run of `(` whose innermost opens a SELECT or WITH, and whose
    /// innermost `)` is followed by another `)` or a set operator. After it an alias instead
    /// means a parenthesized table source starting with a derived table (`((SELECT 1) AS a
    /// JOIN b ON ...)`).
    fn parens_wrap_query(&self) -> bool {
        let mut run = 0;
        while self.peek_nth(run).kind == TokenKind::LParen {
            run += 1;
        }
        if run < 2 || !(self.nth_is_keyword(run, "SELECT") || self.nth_is_keyword(run, "WITH")) {
            return false;
        }
        // The `)` closing the innermost `(`, at depth 0 after it.
        let mut depth = 1usize;
        let mut i = run;
        loop {
            match self.peek_nth(i).kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => depth -= 1,
                TokenKind::Eof => return false,
                _ => {}
            }
            i += 1;
            if depth == 0 {
                break;
            }
        }
        self.peek_nth(i).kind == TokenKind::RParen
            || ["UNION", "EXCEPT", "INTERSECT"].iter().any(|op| self.nth_is_keyword(i, op))
    }

    /// `(query) [AS] alias [(columns)]`.
    fn parse_derived_table(&mut self) -> PResult<TableSource> {
        let query = Box::new(self.parse_parenthesized_query()?);
        let (alias, columns) = self.parse_derived_alias()?;
        Ok(TableSource::Derived { query, alias, columns })
    }

    /// `(VALUES (...), ...) [AS] alias [(columns)]`.
    fn parse_values_table(&mut self) -> PResult<TableSource> {
        self.advance();
        self.advance();
        let rows = self.parse_values_rows()?;
        self.expect(&TokenKind::RParen)?;
        let (alias, columns) = self.parse_derived_alias()?;
        Ok(TableSource::Values { rows, alias, columns })
    }

    /// `(a JOIN b ON ...)`.
    fn parse_parenthesized_table_source(&mut self) -> PResult<TableSource> {
        self.advance();
        let source = self.parse_table_source()?;
        self.expect(&TokenKind::RParen)?;
        Ok(source)
    }

    /// `.nodes('xquery') [AS] alias(column)` after the xml value `target` (`nodes` read).
    fn parse_xml_nodes(&mut self, target: Expr) -> PResult<TableSource> {
        self.expect(&TokenKind::LParen)?;
        let xquery = Box::new(self.parse_expr()?);
        self.expect(&TokenKind::RParen)?;
        let Some(alias) = self.parse_table_alias()? else { return Err(self.error()) };
        self.expect(&TokenKind::LParen)?;
        let column = self.parse_identifier()?;
        self.expect(&TokenKind::RParen)?;
        Ok(TableSource::XmlNodes { target: Box::new(target), xquery, alias, column })
    }

    /// A table, or a table-valued function call.
    fn parse_named_table_source(&mut self) -> PResult<TableSource> {
        // OPENROWSET is reserved: only its BULK form is a table source here.
        if self.at_keyword("OPENROWSET")
            && self.peek_nth(1).kind == TokenKind::LParen
            && self.nth_is_keyword(2, "BULK")
        {
            self.advance();
            self.advance();
            return self.parse_openrowset_bulk();
        }
        let start = self.peek().span;
        let name = self.parse_object_name()?;
        if name.name.value == "nodes" && name.schema.is_some() && self.at(&TokenKind::LParen) {
            // `t.c.nodes(...)`: the column `t.c` (or `c`) of an outer source.
            let parts: Vec<Ident> =
                [name.server, name.database, name.schema].into_iter().flatten().collect();
            let target = Expr { kind: ExprKind::Column(parts), span: self.span_from(start) };
            return self.parse_xml_nodes(target);
        }
        if !self.at_old_style_hints() && self.eat(&TokenKind::LParen) {
            let args = if self.at(&TokenKind::RParen) {
                Vec::new()
            } else {
                self.parse_comma_separated(Self::parse_expr_or_default)?
            };
            self.expect(&TokenKind::RParen)?;
            let openjson =
                name.schema.is_none() && name.name.value.eq_ignore_ascii_case("OPENJSON");
            if openjson && self.at_keyword("WITH") && self.peek_nth(1).kind == TokenKind::LParen {
                self.advance();
                self.advance();
                let schema = self.parse_comma_separated(Self::parse_json_column)?;
                self.expect(&TokenKind::RParen)?;
                let alias = self.parse_table_alias()?;
                return Ok(TableSource::OpenJson { args, schema, alias });
            }
            let alias = self.parse_table_alias()?;
            let columns = if alias.is_some() && self.at(&TokenKind::LParen) {
                self.parse_identifier_list()?
            } else {
                Vec::new()
            };
            return Ok(TableSource::Function { name, args, alias, columns });
        }
        let alias = self.parse_table_alias()?;
        let hints = self.parse_table_hints()?;
        Ok(TableSource::Table { name, alias, hints })
    }

    /// `name type ['path'] [AS JSON]`, a column of `OPENJSON ... WITH (...)`.
    fn parse_json_column(&mut self) -> PResult<JsonColumn> {
        let name = self.parse_identifier()?;
        let data_type = self.parse_data_type()?;
        let path = match self.peek_kind() {
            TokenKind::String { value, .. } => {
                let path = value.clone();
                self.advance();
                Some(path)
            }
            _ => None,
        };
        let as_json = self.at_keyword("AS") && self.nth_is_keyword(1, "JSON");
        if as_json {
            self.advance();
            self.advance();
        }
        Ok(JsonColumn { name, data_type, path, as_json })
    }

    /// `[AS] alias [(columns)]`, required after a derived table.
    fn parse_derived_alias(&mut self) -> PResult<(Ident, Vec<Ident>)> {
        self.eat_keyword("AS");
        let alias = self.parse_identifier()?;
        let columns =
            if self.at(&TokenKind::LParen) { self.parse_identifier_list()? } else { Vec::new() };
        Ok((alias, columns))
    }

    /// `[AS] alias` after a table.
    pub(in crate::parser) fn parse_table_alias(&mut self) -> PResult<Option<Ident>> {
        if self.eat_keyword("AS") {
            return self.parse_identifier().map(Some);
        }
        if self.at_identifier() && !self.at_clause_boundary() {
            self.parse_identifier().map(Some)
        } else {
            Ok(None)
        }
    }

    /// `[WITH (hint, ...)]`. Hint names may be reserved words (`HOLDLOCK`, `INDEX`).
    pub(in crate::parser) fn parse_table_hints(&mut self) -> PResult<Vec<TableHint>> {
        let with = self.at_keyword("WITH") && self.peek_nth(1).kind == TokenKind::LParen;
        if !with && !self.at_old_style_hints() {
            return Ok(Vec::new());
        }
        if with {
            self.advance();
        }
        self.advance();
        let hints = self.parse_comma_separated(|p| {
            if p.peek().kind != TokenKind::Word {
                return Err(p.error());
            }
            let name = Ident::new(p.advance_text());
            let args = if p.eat(&TokenKind::LParen) {
                let args = p.parse_comma_separated(Self::parse_expr)?;
                p.expect(&TokenKind::RParen)?;
                args
            } else if p.eat(&TokenKind::Eq) {
                vec![p.parse_expr()?]
            } else {
                Vec::new()
            };
            Ok(TableHint { name, args })
        })?;
        self.expect(&TokenKind::RParen)?;
        Ok(hints)
    }

    /// Whether `(NOLOCK)`-style table hints, without `WITH`, are next: SQL Server still takes
    /// them after a table name, and older scripts write them so. Only hint names are read so,
    /// so that `name(arguments)` stays a function call.
    fn at_old_style_hints(&self) -> bool {
        const HINTS: [&str; 18] = [
            "NOLOCK",
            "READUNCOMMITTED",
            "READCOMMITTED",
            "READCOMMITTEDLOCK",
            "REPEATABLEREAD",
            "SERIALIZABLE",
            "HOLDLOCK",
            "UPDLOCK",
            "XLOCK",
            "ROWLOCK",
            "PAGLOCK",
            "TABLOCK",
            "TABLOCKX",
            "READPAST",
            "NOWAIT",
            "NOEXPAND",
            "FORCESEEK",
            "FORCESCAN",
        ];
        self.at(&TokenKind::LParen)
            && HINTS.iter().any(|h| self.peek_nth(1).is_keyword(h))
            && matches!(self.peek_nth(2).kind, TokenKind::RParen | TokenKind::Comma)
    }

    /// `(value, ...), (value, ...)` after `VALUES`.
    pub(super) fn parse_values_rows(&mut self) -> PResult<Vec<Vec<Expr>>> {
        self.parse_comma_separated(|p| {
            p.expect(&TokenKind::LParen)?;
            let row = p.parse_comma_separated(Self::parse_expr_or_default)?;
            p.expect(&TokenKind::RParen)?;
            Ok(row)
        })
    }

    // -----------------------------------------------------------------------------------------
    // INSERT, UPDATE, DELETE
    // -----------------------------------------------------------------------------------------
}
