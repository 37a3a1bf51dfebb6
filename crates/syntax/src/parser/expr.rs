//! Expressions, parsed by precedence climbing with SQL Server's operator precedence (tightest
//! first):
//!
//! 1. prefix `~`, `+`, `-`
//! 2. `*` `/` `%`
//! 3. binary `+` `-` `&` `^` `|`
//! 4. comparisons `= <> != < > <= >= !< !>` and the predicates `[NOT] BETWEEN`, `[NOT] IN`,
//!    `[NOT] LIKE`, `IS [NOT] NULL`, `op ALL|ANY|SOME (subquery)`
//! 5. `NOT`
//! 6. `AND`
//! 7. `OR`
//!
//! SQL Server's documentation lists unary `+`/`-` on the level of binary `+`/`-`; binding them
//! tightest gives the same values (`-a * b` equals `-(a * b)` for every type) and lets
//! `a * -b` parse, as SQL Server accepts it. Predicates do not chain (`a = b = c` is a syntax
//! error, as in SQL Server), and `NOT` is accepted only where a search condition may start
//! (`a = NOT b` is an error).

use super::{PResult, Parser};
use crate::ast::{
    BinaryOp, Case, Cast, Convert, Expr, ExprKind, FrameBound, FrameUnits, FunctionArgs,
    FunctionCall, Ident, Literal, NextValueFor, ObjectName, Quantifier, QueryBody, SelectItem,
    Span, UnaryOp, WhenClause, WindowFrame, WindowSpec,
};
use crate::keywords::is_reserved;
use crate::lexer::{Token, TokenKind};

/// Binding powers, loosest first. An operator is parsed when its power is at least the
/// caller's minimum; the right operand of a binary operator needs one more (left
/// associativity).
const OR: u8 = 1;
const AND: u8 = 2;
const NOT: u8 = 3;
const PREDICATE: u8 = 4;
const ADDITIVE: u8 = 5;
const MULTIPLICATIVE: u8 = 6;
const PREFIX: u8 = 7;
/// The power of a primary expression: any operator may follow it.
const PRIMARY: u8 = u8::MAX;

/// Reserved keywords that begin expressions.
const EXPRESSION_KEYWORDS: [&str; 15] = [
    "CASE",
    "COALESCE",
    "CONVERT",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "EXISTS",
    "LEFT",
    "NOT",
    "NULL",
    "NULLIF",
    "RIGHT",
    "SESSION_USER",
    "SYSTEM_USER",
    "TRY_CONVERT",
    "USER",
];

/// Reserved keywords that are ordinary functions when a `(` follows.
pub(crate) const FUNCTION_KEYWORDS: [&str; 6] =
    ["COALESCE", "IDENTITY", "LEFT", "NULLIF", "RIGHT", "UPDATE"];

/// Reserved keywords that are functions called without parentheses.
pub(crate) const NILADIC_FUNCTIONS: [&str; 5] =
    ["CURRENT_TIMESTAMP", "CURRENT_USER", "SESSION_USER", "SYSTEM_USER", "USER"];

/// An operator that continues an expression.
#[derive(Debug, Clone, Copy)]
enum Infix {
    Binary(BinaryOp),
    Between { negated: bool },
    In { negated: bool },
    Like { negated: bool },
    Is,
}

impl Infix {
    fn binding_power(self) -> u8 {
        match self {
            Infix::Binary(op) => binding_power(op),
            _ => PREDICATE,
        }
    }
}

fn binding_power(op: BinaryOp) -> u8 {
    use BinaryOp::*;
    match op {
        Or => OR,
        And => AND,
        Eq | NotEq | Lt | Gt | LtEq | GtEq => PREDICATE,
        Add | Subtract | BitAnd | BitOr | BitXor => ADDITIVE,
        Multiply | Divide | Modulo => MULTIPLICATIVE,
    }
}

impl<'a> Parser<'a> {
    /// A full expression (search conditions included).
    pub(super) fn parse_expr(&mut self) -> PResult<Expr> {
        self.parse_expr_bp(OR)
    }

    /// An expression, or the keyword `DEFAULT` where a value may be defaulted.
    pub(super) fn parse_expr_or_default(&mut self) -> PResult<Expr> {
        if self.at_keyword("DEFAULT") {
            let span = self.advance();
            return Ok(Expr { kind: ExprKind::Default, span });
        }
        self.parse_expr()
    }

    /// An optionally signed numeric literal: sequence and identity parameters, `TOP n`,
    /// `SET LOCK_TIMEOUT`.
    pub(super) fn parse_signed_number(&mut self) -> PResult<Expr> {
        let start = self.peek().span;
        let op = match self.peek_kind() {
            TokenKind::Minus => Some(UnaryOp::Minus),
            TokenKind::Plus => Some(UnaryOp::Plus),
            _ => None,
        };
        if op.is_some() {
            self.advance();
        }
        let literal = match numeric_literal(self.peek()) {
            Some(literal) => literal,
            None => return Err(self.error()),
        };
        let number = Expr { kind: ExprKind::Literal(literal), span: self.advance() };
        Ok(match op {
            Some(op) => {
                let kind = ExprKind::Unary { op, operand: Box::new(number) };
                Expr { kind, span: self.span_from(start) }
            }
            None => number,
        })
    }

    /// Whether the current token can begin an expression; decides whether optional values
    /// (`RETURN`, `THROW`, procedure arguments) are present.
    pub(super) fn starts_expression(&self) -> bool {
        let token = self.peek();
        match token.kind {
            TokenKind::Word if is_reserved(token.text) => {
                EXPRESSION_KEYWORDS.iter().any(|keyword| token.text.eq_ignore_ascii_case(keyword))
            }
            TokenKind::Word => !token.is_keyword("THROW"),
            TokenKind::QuotedIdent(_)
            | TokenKind::Variable
            | TokenKind::SystemVariable
            | TokenKind::String { .. }
            | TokenKind::Integer
            | TokenKind::Decimal
            | TokenKind::Float
            | TokenKind::Money
            | TokenKind::Binary
            | TokenKind::LParen
            | TokenKind::Plus
            | TokenKind::Minus
            | TokenKind::Tilde => true,
            _ => false,
        }
    }

    /// An expression whose operators all bind at least as tightly as `min_bp`.
    fn parse_expr_bp(&mut self, min_bp: u8) -> PResult<Expr> {
        self.nested(|p| {
            let start = p.peek().span;
            let (mut lhs, mut lhs_bp) = p.parse_prefix(min_bp)?;
            while let Some((infix, width)) = p.peek_infix() {
                let bp = infix.binding_power();
                // A predicate needs an operand of additive level or tighter: no chaining.
                if bp < min_bp || (bp == PREDICATE && lhs_bp <= PREDICATE) {
                    break;
                }
                for _ in 0..width {
                    p.advance();
                }
                lhs = p.parse_infix(infix, lhs, start)?;
                lhs_bp = bp;
            }
            Ok(lhs)
        })
    }

    /// A prefix operator application or a primary; also returns the binding power of what was
    /// parsed.
    fn parse_prefix(&mut self, min_bp: u8) -> PResult<(Expr, u8)> {
        let start = self.peek().span;
        let op = match self.peek_kind() {
            TokenKind::Minus => UnaryOp::Minus,
            TokenKind::Plus => UnaryOp::Plus,
            TokenKind::Tilde => UnaryOp::BitNot,
            TokenKind::Word if min_bp <= NOT && self.at_keyword("NOT") => UnaryOp::Not,
            _ => {
                let mut primary = self.parse_primary()?;
                // `(...).value(...)`, `@x.query(...)`, `CAST(... AS xml).exist(...)`.
                while self.at(&TokenKind::Dot)
                    && self.nth_is_xml_method(1)
                    && self.peek_nth(2).kind == TokenKind::LParen
                {
                    self.advance();
                    let method = self.advance_text().to_owned();
                    let kind = self.parse_xml_method(primary, method)?;
                    primary = Expr { kind, span: self.span_from(start) };
                }
                // `AT TIME ZONE zone`, as often as it is written.
                while self.at_keyword("AT")
                    && self.nth_is_keyword(1, "TIME")
                    && self.nth_is_keyword(2, "ZONE")
                {
                    for _ in 0..3 {
                        self.advance();
                    }
                    let zone = Box::new(self.parse_primary()?);
                    let kind = ExprKind::AtTimeZone { expr: Box::new(primary), zone };
                    primary = Expr { kind, span: self.span_from(start) };
                }
                if !self.eat_keyword("COLLATE") {
                    return Ok((primary, PRIMARY));
                }
                let collation = self.parse_identifier()?;
                let kind = ExprKind::Collate { expr: Box::new(primary), collation };
                return Ok((Expr { kind, span: self.span_from(start) }, PRIMARY));
            }
        };
        self.advance();
        let bp = if op == UnaryOp::Not { NOT } else { PREFIX };
        let operand = Box::new(self.parse_expr_bp(bp)?);
        Ok((Expr { kind: ExprKind::Unary { op, operand }, span: self.span_from(start) }, bp))
    }

    /// The operator at the cursor and how many tokens it spans.
    fn peek_infix(&self) -> Option<(Infix, usize)> {
        use BinaryOp::*;
        let binary = |op| Some((Infix::Binary(op), 1));
        match self.peek_kind() {
            TokenKind::Star => binary(Multiply),
            TokenKind::Slash => binary(Divide),
            TokenKind::Percent => binary(Modulo),
            TokenKind::Plus => binary(Add),
            TokenKind::Minus => binary(Subtract),
            TokenKind::Ampersand => binary(BitAnd),
            TokenKind::Pipe => binary(BitOr),
            TokenKind::Caret => binary(BitXor),
            TokenKind::Eq => binary(Eq),
            TokenKind::NotEq => binary(NotEq),
            TokenKind::Lt => binary(Lt),
            TokenKind::Gt => binary(Gt),
            TokenKind::LtEq | TokenKind::NotGt => binary(LtEq),
            TokenKind::GtEq | TokenKind::NotLt => binary(GtEq),
            TokenKind::Word => self.peek_keyword_infix(),
            _ => None,
        }
    }

    fn peek_keyword_infix(&self) -> Option<(Infix, usize)> {
        let (negated, at) = if self.at_keyword("NOT") { (true, 1) } else { (false, 0) };
        let infix = if self.nth_is_keyword(at, "BETWEEN") {
            Infix::Between { negated }
        } else if self.nth_is_keyword(at, "IN") {
            Infix::In { negated }
        } else if self.nth_is_keyword(at, "LIKE") {
            Infix::Like { negated }
        } else if negated {
            return None;
        } else if self.at_keyword("IS") {
            Infix::Is
        } else if self.at_keyword("AND") {
            Infix::Binary(BinaryOp::And)
        } else if self.at_keyword("OR") {
            Infix::Binary(BinaryOp::Or)
        } else {
            return None;
        };
        Some((infix, at + 1))
    }

    /// The rest of an operator application whose operator has been consumed.
    fn parse_infix(&mut self, infix: Infix, lhs: Expr, start: Span) -> PResult<Expr> {
        let expr = Box::new(lhs);
        let kind = match infix {
            Infix::Binary(op) => match self.eat_quantifier(op) {
                Some(quantifier) => self.parse_quantified(expr, op, quantifier)?,
                None => {
                    let right = Box::new(self.parse_expr_bp(binding_power(op) + 1)?);
                    ExprKind::Binary { op, left: expr, right }
                }
            },
            Infix::Between { negated } => self.parse_between(expr, negated)?,
            Infix::In { negated } => self.parse_in(expr, negated)?,
            Infix::Like { negated } => self.parse_like(expr, negated)?,
            Infix::Is => {
                let negated = self.eat_keyword("NOT");
                if self.eat_keyword("DISTINCT") {
                    self.expect_keyword("FROM")?;
                    let right = Box::new(self.parse_expr_bp(PREDICATE + 1)?);
                    ExprKind::IsDistinctFrom { left: expr, right, negated }
                } else {
                    self.expect_keyword("NULL")?;
                    ExprKind::IsNull { expr, negated }
                }
            }
        };
        Ok(Expr { kind, span: self.span_from(start) })
    }

    /// `low AND high`, after `BETWEEN`.
    fn parse_between(&mut self, expr: Box<Expr>, negated: bool) -> PResult<ExprKind> {
        let low = Box::new(self.parse_expr_bp(ADDITIVE)?);
        self.expect_keyword("AND")?;
        let high = Box::new(self.parse_expr_bp(ADDITIVE)?);
        Ok(ExprKind::Between { expr, negated, low, high })
    }

    /// `pattern [ESCAPE c]`, after `LIKE`.
    fn parse_like(&mut self, expr: Box<Expr>, negated: bool) -> PResult<ExprKind> {
        let pattern = Box::new(self.parse_expr_bp(ADDITIVE)?);
        let escape = if self.eat_keyword("ESCAPE") {
            Some(Box::new(self.parse_expr_bp(ADDITIVE)?))
        } else {
            None
        };
        Ok(ExprKind::Like { expr, negated, pattern, escape })
    }

    /// `ALL`, `ANY` or `SOME` before a parenthesised subquery, after a comparison.
    fn eat_quantifier(&mut self, op: BinaryOp) -> Option<Quantifier> {
        if binding_power(op) != PREDICATE || self.peek_nth(1).kind != TokenKind::LParen {
            return None;
        }
        let quantifier = match self.eat_one_of(&["ALL", "ANY", "SOME"])? {
            "ALL" => Quantifier::All,
            _ => Quantifier::Any,
        };
        Some(quantifier)
    }

    /// `(subquery)` after `op ALL | ANY | SOME`.
    fn parse_quantified(
        &mut self,
        left: Box<Expr>,
        op: BinaryOp,
        quantifier: Quantifier,
    ) -> PResult<ExprKind> {
        let subquery = Box::new(self.parse_parenthesized_query()?);
        Ok(ExprKind::Quantified { left, op, quantifier, subquery })
    }

    /// `IN (subquery)` or `IN (value, ...)`, after `IN`.
    fn parse_in(&mut self, expr: Box<Expr>, negated: bool) -> PResult<ExprKind> {
        if self.paren_starts_query() {
            let subquery = Box::new(self.parse_parenthesized_query()?);
            return Ok(ExprKind::InSubquery { expr, negated, subquery });
        }
        self.expect(&TokenKind::LParen)?;
        let list = self.parse_comma_separated(Self::parse_expr)?;
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::InList { expr, negated, list })
    }

    pub(super) fn parse_primary(&mut self) -> PResult<Expr> {
        let start = self.peek().span;
        let kind = match self.peek_kind() {
            TokenKind::LParen => return self.parse_parenthesized_expr(),
            TokenKind::Word | TokenKind::QuotedIdent(_) => self.parse_word_expr()?,
            TokenKind::Variable => ExprKind::Variable(self.advance_text().to_owned().into()),
            TokenKind::SystemVariable => ExprKind::SystemVariable(self.advance_text().to_owned()),
            _ => match literal(self.peek()) {
                Some(literal) => {
                    self.advance();
                    ExprKind::Literal(literal)
                }
                None => return Err(self.error()),
            },
        };
        Ok(Expr { kind, span: self.span_from(start) })
    }

    /// `(SELECT ...)` as a scalar subquery, or a parenthesised expression (no node of its own;
    /// its span grows to cover the parentheses).
    fn parse_parenthesized_expr(&mut self) -> PResult<Expr> {
        let start = self.peek().span;
        if self.paren_starts_query() {
            let kind = self.parse_subquery()?;
            return Ok(Expr { kind, span: self.span_from(start) });
        }
        self.advance();
        let inner = self.parse_expr()?;
        self.expect(&TokenKind::RParen)?;
        Ok(Expr { span: self.span_from(start), ..inner })
    }

    fn parse_subquery(&mut self) -> PResult<ExprKind> {
        Ok(ExprKind::Subquery(Box::new(self.parse_parenthesized_query()?)))
    }

    /// Expressions that start with a word: keyword forms, function calls and column names.
    fn parse_word_expr(&mut self) -> PResult<ExprKind> {
        if let Some(kind) = self.parse_keyword_expr()? {
            return Ok(kind);
        }
        let first = self.pos;
        let parts = self.parse_name_parts()?;
        let method = match parts.as_slice() {
            [.., Some(_), Some(m)] if self.at(&TokenKind::LParen) && is_xml_method(&m.value) => {
                Some(m.value.clone())
            }
            _ => None,
        };
        if let Some(method) = method {
            // `t.c.value(...)`: the column the parts before the method name.
            let mut parts = parts;
            parts.pop();
            let target = match parts.into_iter().collect::<Option<Vec<_>>>() {
                Some(parts) => ExprKind::Column(parts),
                None => return Err(self.error_at(first)),
            };
            let target = Expr { kind: target, span: self.span_from(self.tokens[first].span) };
            return self.parse_xml_method(target, method);
        }
        if self.at(&TokenKind::LParen) {
            let name = self.object_name_from_parts(parts, first)?;
            if name.schema.is_none() && name.database.is_none() {
                let word = name.name.value.to_ascii_uppercase();
                if word == "JSON_OBJECT" || word == "JSON_ARRAY" {
                    return self.parse_json_constructor(word == "JSON_OBJECT");
                }
            }
            return self.parse_function_call(name);
        }
        self.check_part_count(parts.len(), first)?;
        match parts.into_iter().collect::<Option<Vec<_>>>() {
            Some(parts) => Ok(ExprKind::Column(parts)),
            None => Err(self.error_at(first)),
        }
    }

    /// Whether token `n` ahead is the name of a scalar xml method.
    fn nth_is_xml_method(&self, n: usize) -> bool {
        let t = self.peek_nth(n);
        t.kind == TokenKind::Word && is_xml_method(t.text)
    }

    /// `(args)` of an xml method called on `target`.
    pub(super) fn parse_xml_method(&mut self, target: Expr, method: String) -> PResult<ExprKind> {
        self.expect(&TokenKind::LParen)?;
        let args = if self.at(&TokenKind::RParen) {
            Vec::new()
        } else {
            self.parse_comma_separated(Self::parse_expr)?
        };
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::XmlMethod { target: Box::new(target), method, args })
    }

    /// Forms introduced by a keyword, or `None` when the word is an ordinary name.
    fn parse_keyword_expr(&mut self) -> PResult<Option<ExprKind>> {
        let Some(word) = self.peek_word_upper() else { return Ok(None) };
        let call = self.peek_nth(1).kind == TokenKind::LParen;
        let kind = match word.as_str() {
            "NULL" => {
                self.advance();
                ExprKind::Literal(Literal::Null)
            }
            "CASE" => self.parse_case()?,
            "CAST" | "TRY_CAST" if call => self.parse_cast()?,
            "PARSE" | "TRY_PARSE" if call => self.parse_parse()?,
            "CONVERT" | "TRY_CONVERT" if call => self.parse_convert()?,
            "EXISTS" => self.parse_exists()?,
            "CONTAINS" | "FREETEXT" if call => self.parse_full_text_predicate()?,
            "TRIM" if call && self.trim_has_from() => self.parse_trim_from()?,
            "NEXT" if self.nth_is_keyword(1, "VALUE") && self.nth_is_keyword(2, "FOR") => {
                self.parse_next_value_for()?
            }
            word if NILADIC_FUNCTIONS.contains(&word) => self.parse_niladic_function(),
            word if call && FUNCTION_KEYWORDS.contains(&word) => {
                let name = ObjectName::simple(Ident::new(self.advance_text()));
                self.parse_function_call(name)?
            }
            _ => return Ok(None),
        };
        Ok(Some(kind))
    }

    /// Whether a `TRIM(` call at the cursor is the `[LEADING | TRAILING | BOTH] [chars] FROM
    /// string` form: a `FROM` inside its parentheses, at their own depth.
    fn trim_has_from(&self) -> bool {
        let mut depth = 0usize;
        for n in 1.. {
            let token = self.peek_nth(n);
            match token.kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return false;
                    }
                }
                TokenKind::Eof => return false,
                _ if depth == 1 && token.is_keyword("FROM") => return true,
                _ => {}
            }
        }
        false
    }

    /// `TRIM([LEADING | TRAILING | BOTH] [chars] FROM string)`: the call `TRIM(string, chars)`,
    /// `LTRIM(string, chars)` or `RTRIM(string, chars)` (blanks when no characters are given).
    fn parse_trim_from(&mut self) -> PResult<ExprKind> {
        let start = self.peek().span;
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let function = match self.eat_one_of(&["LEADING", "TRAILING", "BOTH"]) {
            Some("LEADING") => "LTRIM",
            Some("TRAILING") => "RTRIM",
            _ => "TRIM",
        };
        let chars = if self.at_keyword("FROM") {
            Expr {
                kind: ExprKind::Literal(Literal::String { value: " ".into(), national: false }),
                span: self.span_from(start),
            }
        } else {
            self.parse_expr()?
        };
        self.expect_keyword("FROM")?;
        let string = self.parse_expr()?;
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Function(Box::new(FunctionCall {
            name: ObjectName::simple(Ident::new(function)),
            args: FunctionArgs::List { distinct: false, args: vec![string, chars] },
            over: None,
            within_group: Vec::new(),
        })))
    }

    fn parse_exists(&mut self) -> PResult<ExprKind> {
        self.advance();
        let mut query = self.parse_parenthesized_query()?;
        // EXISTS never evaluates its select list, so `EXISTS (SELECT 1/0 FROM ...)`, an idiom
        // of DBA scripts, raises no divide by zero. A list of constants (no column, function
        // or aggregate, so it cannot change how many rows there are) becomes `1`s.
        if let QueryBody::Select(select) = &mut query.body {
            for item in &mut select.items {
                if let SelectItem::Expr { expr, .. } = item {
                    if is_constant(expr) {
                        expr.kind = ExprKind::Literal(Literal::Integer("1".into()));
                    }
                }
            }
        }
        Ok(ExprKind::Exists(Box::new(query)))
    }

    /// `CONTAINS | FREETEXT ({column | (column, ...) | *}, search [, LANGUAGE term])`, as a
    /// call whose arguments are the columns (`*` as a column of that name) and the search;
    /// the language is read and dropped.
    fn parse_full_text_predicate(&mut self) -> PResult<ExprKind> {
        let name = ObjectName::simple(Ident::new(self.advance_text()));
        self.expect(&TokenKind::LParen)?;
        let star = |p: &mut Self| {
            let span = p.advance();
            Expr { kind: ExprKind::Column(vec![Ident::new("*")]), span }
        };
        let mut args = if self.at(&TokenKind::Star) {
            vec![star(self)]
        } else if self.eat(&TokenKind::LParen) {
            let columns = self.parse_comma_separated(Self::parse_expr)?;
            self.expect(&TokenKind::RParen)?;
            columns
        } else {
            vec![self.parse_expr()?]
        };
        self.expect(&TokenKind::Comma)?;
        args.push(self.parse_expr()?);
        if self.eat(&TokenKind::Comma) {
            if !self.at_keyword("LANGUAGE") {
                return Err(self.error());
            }
            self.advance();
            self.parse_expr()?;
        }
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Function(Box::new(FunctionCall {
            name,
            args: FunctionArgs::List { distinct: false, args },
            over: None,
            within_group: Vec::new(),
        })))
    }

    /// `CURRENT_TIMESTAMP`, `USER`, ...: a call without parentheses.
    fn parse_niladic_function(&mut self) -> ExprKind {
        let name = ObjectName::simple(Ident::new(self.advance_text()));
        ExprKind::Function(Box::new(FunctionCall {
            name,
            args: FunctionArgs::None,
            over: None,
            within_group: Vec::new(),
        }))
    }

    /// `name(...) [OVER (...)]`, the name already read.
    fn parse_function_call(&mut self, name: ObjectName) -> PResult<ExprKind> {
        self.expect(&TokenKind::LParen)?;
        let args = if self.eat(&TokenKind::Star) {
            FunctionArgs::Star
        } else if self.at(&TokenKind::RParen) {
            FunctionArgs::List { distinct: false, args: Vec::new() }
        } else {
            let distinct = self.eat_keyword("DISTINCT");
            if !distinct {
                self.eat_keyword("ALL");
            }
            let args = self.parse_comma_separated(Self::parse_expr_or_default)?;
            FunctionArgs::List { distinct, args }
        };
        self.expect(&TokenKind::RParen)?;
        let mut within_group = Vec::new();
        if self.at_keyword("WITHIN") && self.nth_is_keyword(1, "GROUP") {
            self.advance();
            self.advance();
            self.expect(&TokenKind::LParen)?;
            if !self.at_keyword("ORDER") {
                return Err(self.error());
            }
            within_group = self.parse_order_by()?;
            self.expect(&TokenKind::RParen)?;
        }
        let over = if self.eat_keyword("OVER") { Some(self.parse_window_spec()?) } else { None };
        Ok(ExprKind::Function(Box::new(FunctionCall { name, args, over, within_group })))
    }

    /// The arguments of `JSON_OBJECT` (`key : value` pairs) or `JSON_ARRAY` (values), with
    /// their optional `NULL ON NULL` / `ABSENT ON NULL`, after the name.
    fn parse_json_constructor(&mut self, object: bool) -> PResult<ExprKind> {
        self.expect(&TokenKind::LParen)?;
        let mut pairs = Vec::new();
        let mut values = Vec::new();
        let mut null_clause = None;
        while !self.at(&TokenKind::RParen) {
            if let Some(absent) = self.json_null_clause() {
                null_clause = Some(absent);
                break;
            }
            if !(pairs.is_empty() && values.is_empty()) {
                self.expect(&TokenKind::Comma)?;
            }
            let value = self.parse_expr()?;
            if object {
                self.expect(&TokenKind::Colon)?;
                pairs.push((value, self.parse_expr()?));
            } else {
                values.push(value);
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(if object {
            ExprKind::JsonObject { pairs, absent_on_null: null_clause.unwrap_or(false) }
        } else {
            ExprKind::JsonArray { values, absent_on_null: null_clause.unwrap_or(true) }
        })
    }

    /// `NULL ON NULL` (`Some(false)`) or `ABSENT ON NULL` (`Some(true)`) at the cursor, read.
    fn json_null_clause(&mut self) -> Option<bool> {
        let absent = match self.peek_word_upper()?.as_str() {
            "NULL" => false,
            "ABSENT" => true,
            _ => return None,
        };
        if !(self.nth_is_keyword(1, "ON") && self.nth_is_keyword(2, "NULL")) {
            return None;
        }
        self.advance();
        self.advance();
        self.advance();
        Some(absent)
    }

    /// `([PARTITION BY ...] [ORDER BY ...])`, after `OVER`.
    fn parse_window_spec(&mut self) -> PResult<WindowSpec> {
        self.expect(&TokenKind::LParen)?;
        let mut partition_by = Vec::new();
        if self.eat_keyword("PARTITION") {
            self.expect_keyword("BY")?;
            partition_by = self.parse_comma_separated(Self::parse_expr)?;
        }
        let order_by = self.parse_order_by()?;
        let frame = match self.eat_one_of(&["ROWS", "RANGE"]) {
            Some(units) => Some(self.parse_window_frame(if units == "ROWS" {
                FrameUnits::Rows
            } else {
                FrameUnits::Range
            })?),
            None => None,
        };
        self.expect(&TokenKind::RParen)?;
        Ok(WindowSpec { partition_by, order_by, frame })
    }

    /// `BETWEEN start AND end` or the short form `start` (which ends at the current row),
    /// after `ROWS` or `RANGE`. The short form cannot start after the current row.
    fn parse_window_frame(&mut self, units: FrameUnits) -> PResult<WindowFrame> {
        if self.eat_keyword("BETWEEN") {
            // A frame cannot start after the partition's last row or end before its first.
            let at = self.pos;
            let start = self.parse_frame_bound()?;
            if start == FrameBound::UnboundedFollowing {
                return Err(self.error_at(at + 1));
            }
            self.expect_keyword("AND")?;
            let at = self.pos;
            let end = self.parse_frame_bound()?;
            if end == FrameBound::UnboundedPreceding {
                return Err(self.error_at(at + 1));
            }
            return Ok(WindowFrame { units, start, end });
        }
        let at = self.pos;
        let start = self.parse_frame_bound()?;
        if matches!(start, FrameBound::Following(_) | FrameBound::UnboundedFollowing) {
            return Err(self.error_at(at + 1));
        }
        Ok(WindowFrame { units, start, end: FrameBound::CurrentRow })
    }

    /// `UNBOUNDED PRECEDING | UNBOUNDED FOLLOWING | CURRENT ROW | n PRECEDING | n FOLLOWING`.
    fn parse_frame_bound(&mut self) -> PResult<FrameBound> {
        if self.eat_keyword("UNBOUNDED") {
            return match self.eat_one_of(&["PRECEDING", "FOLLOWING"]) {
                Some("PRECEDING") => Ok(FrameBound::UnboundedPreceding),
                Some(_) => Ok(FrameBound::UnboundedFollowing),
                None => Err(self.error()),
            };
        }
        if self.eat_keyword("CURRENT") {
            self.expect_keyword("ROW")?;
            return Ok(FrameBound::CurrentRow);
        }
        let n = self.parse_unsigned::<u64>()?;
        match self.eat_one_of(&["PRECEDING", "FOLLOWING"]) {
            Some("PRECEDING") => Ok(FrameBound::Preceding(n)),
            Some(_) => Ok(FrameBound::Following(n)),
            None => Err(self.error()),
        }
    }

    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`.
    fn parse_case(&mut self) -> PResult<ExprKind> {
        self.advance();
        let operand = if self.at_keyword("WHEN") { None } else { Some(self.parse_expr()?) };
        let mut branches = Vec::new();
        while self.eat_keyword("WHEN") {
            branches.push(self.parse_when_clause()?);
        }
        if branches.is_empty() {
            return Err(self.error());
        }
        let else_result = if self.eat_keyword("ELSE") { Some(self.parse_expr()?) } else { None };
        self.expect_keyword("END")?;
        Ok(ExprKind::Case(Box::new(Case { operand, branches, else_result })))
    }

    /// `condition THEN result`, after `WHEN`.
    fn parse_when_clause(&mut self) -> PResult<WhenClause> {
        let condition = self.parse_expr()?;
        self.expect_keyword("THEN")?;
        let result = self.parse_expr()?;
        Ok(WhenClause { condition, result })
    }

    /// `CAST(expr AS type)` / `TRY_CAST(...)`.
    fn parse_cast(&mut self) -> PResult<ExprKind> {
        let is_try = self.at_keyword("TRY_CAST");
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let expr = self.parse_expr()?;
        self.expect_keyword("AS")?;
        let data_type = self.parse_data_type()?;
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Cast(Box::new(Cast { expr, data_type, is_try })))
    }

    /// `PARSE(string AS type [USING culture])` / `TRY_PARSE(...)`: a conversion from text,
    /// which Walden makes as CAST does (its conversions follow `en-US`, the culture SQL
    /// Server's PARSE uses by default; a USING culture is read and not used).
    fn parse_parse(&mut self) -> PResult<ExprKind> {
        let is_try = self.at_keyword("TRY_PARSE");
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let expr = self.parse_expr()?;
        self.expect_keyword("AS")?;
        let data_type = self.parse_data_type()?;
        if self.eat_keyword("USING") {
            self.parse_expr()?;
        }
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Cast(Box::new(Cast { expr, data_type, is_try })))
    }

    /// `CONVERT(type, expr [, style])` / `TRY_CONVERT(...)`.
    fn parse_convert(&mut self) -> PResult<ExprKind> {
        let is_try = self.at_keyword("TRY_CONVERT");
        self.advance();
        self.expect(&TokenKind::LParen)?;
        let data_type = self.parse_data_type()?;
        self.expect(&TokenKind::Comma)?;
        let expr = self.parse_expr()?;
        let style = if self.eat(&TokenKind::Comma) { Some(self.parse_expr()?) } else { None };
        self.expect(&TokenKind::RParen)?;
        Ok(ExprKind::Convert(Box::new(Convert { data_type, expr, style, is_try })))
    }

    /// `NEXT VALUE FOR sequence [OVER (ORDER BY ...)]`.
    fn parse_next_value_for(&mut self) -> PResult<ExprKind> {
        for _ in 0..3 {
            self.advance();
        }
        let sequence = self.parse_object_name()?;
        let over = if self.eat_keyword("OVER") { Some(self.parse_window_spec()?) } else { None };
        Ok(ExprKind::NextValueFor(Box::new(NextValueFor { sequence, over })))
    }
}

/// The literal a token stands for, if it is one (`NULL` is handled with the keywords).
/// The xml methods an expression may call. They are case-sensitive in SQL Server: `x.VALUE()`
/// is a call of a function `VALUE` in schema `x`.
pub(super) fn is_xml_method(name: &str) -> bool {
    matches!(name, "value" | "query" | "exist" | "modify")
}

fn literal(token: &Token<'_>) -> Option<Literal> {
    match &token.kind {
        TokenKind::String { value, national } => {
            Some(Literal::String { value: value.clone(), national: *national })
        }
        TokenKind::Binary => Some(Literal::Binary(decode_hex(&token.text[2..]))),
        _ => numeric_literal(token),
    }
}

fn numeric_literal(token: &Token<'_>) -> Option<Literal> {
    let text = token.text.to_owned();
    match token.kind {
        TokenKind::Integer => Some(Literal::Integer(text)),
        TokenKind::Decimal => Some(Literal::Decimal(text)),
        TokenKind::Float => Some(Literal::Float(text)),
        TokenKind::Money => Some(Literal::Money(text[1..].to_owned())),
        _ => None,
    }
}

/// The bytes of a `0x` literal's hex digits; an odd count gets a leading zero, as in SQL
/// Server (`0x123` is `0x0123`).
fn decode_hex(digits: &str) -> Vec<u8> {
    let padded = if digits.len() % 2 == 1 { format!("0{digits}") } else { digits.to_owned() };
    padded
        .as_bytes()
        .chunks(2)
        .map(|pair| std::str::from_utf8(pair).ok().and_then(|hex| u8::from_str_radix(hex, 16).ok()))
        .map(|byte| byte.unwrap_or(0))
        .collect()
}

/// Whether `e` is literals and operators only.
fn is_constant(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(_) => true,
        ExprKind::Unary { operand, .. } => is_constant(operand),
        ExprKind::Binary { left, right, .. } => is_constant(left) && is_constant(right),
        _ => false,
    }
}
