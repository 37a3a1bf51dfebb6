//! Compiling tokens into an [`Expr`]: the prolog's namespace declarations, paths, steps with
//! their axes and node tests, predicates, comparisons and function calls. Whatever the subset
//! does not cover is refused here (2209, 2395 or 9335, as the module docs say), and nesting is
//! bounded by `MAX_NESTING`, so evaluation only meets queries it can answer.

use super::lexer::{tokenize, Tok};
use super::{
    err, unsupported, Axis, Cmp, Expr, External, Func, Namespaces, Query, Step, Test, MAX_NESTING,
};
use crate::exec::SqlError;

struct Compiler<'a> {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
    pub(super) method: &'a str,
    ns: Namespaces,
    pub(super) externals: Vec<External>,
}

/// Compiles `src` for `method` (`value`, `query`, `exist`, `nodes`).
pub(crate) fn compile(src: &str, method: &str, ns: &Namespaces) -> Result<Query, SqlError> {
    let toks = tokenize(src, method)?;
    let mut c = Compiler { toks, pos: 0, depth: 0, method, ns: ns.clone(), externals: Vec::new() };
    c.prolog()?;
    if c.pos == c.toks.len() {
        return Err(err(method, 2209, "Syntax error near '<EOF>'"));
    }
    let expr = c.expr()?;
    if c.pos < c.toks.len() {
        return Err(c.syntax_error());
    }
    Ok(Query { expr, externals: c.externals })
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Slash => "/".into(),
        Tok::SlashSlash => "//".into(),
        Tok::Dot => ".".into(),
        Tok::DotDot => "..".into(),
        Tok::At => "@".into(),
        Tok::Star => "*".into(),
        Tok::LParen => "(".into(),
        Tok::RParen => ")".into(),
        Tok::LBracket => "[".into(),
        Tok::RBracket => "]".into(),
        Tok::Comma => ",".into(),
        Tok::Semicolon => ";".into(),
        Tok::Cmp(c) => match c {
            Cmp::Eq => "=",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
        .into(),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::Num(n) => n.to_string(),
        Tok::Name(n) => n.clone(),
        Tok::Axis(a) => format!("{a}::"),
        Tok::Other(o) => o.clone(),
    }
}

impl Compiler<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn syntax_error(&self) -> SqlError {
        let near = self.peek().map_or("<EOF>".to_string(), tok_text);
        err(self.method, 2209, format!("Syntax error near '{near}'"))
    }

    fn expect(&mut self, t: &Tok) -> Result<(), SqlError> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(self.syntax_error())
        }
    }

    fn word_is(&self, n: usize, w: &str) -> bool {
        matches!(self.peek_at(n), Some(Tok::Name(x)) if x == w)
    }

    /// `declare namespace p = "uri";` and `declare default element namespace "uri";`.
    pub(super) fn prolog(&mut self) -> Result<(), SqlError> {
        while self.word_is(0, "declare") {
            self.pos += 1;
            if self.word_is(0, "namespace") {
                self.pos += 1;
                let Some(Tok::Name(prefix)) = self.peek().cloned() else {
                    return Err(self.syntax_error());
                };
                self.pos += 1;
                self.expect(&Tok::Cmp(Cmp::Eq))?;
                let Some(Tok::Str(uri)) = self.peek().cloned() else {
                    return Err(self.syntax_error());
                };
                self.pos += 1;
                self.ns.prefixes.retain(|(p, _)| *p != prefix);
                self.ns.prefixes.push((prefix, uri));
            } else if self.word_is(0, "default")
                && self.word_is(1, "element")
                && self.word_is(2, "namespace")
            {
                self.pos += 3;
                let Some(Tok::Str(uri)) = self.peek().cloned() else {
                    return Err(self.syntax_error());
                };
                self.pos += 1;
                self.ns.default = Some(uri);
            } else {
                return Err(unsupported(self.method, "declare"));
            }
            self.expect(&Tok::Semicolon)?;
        }
        Ok(())
    }

    pub(super) fn expr(&mut self) -> Result<Expr, SqlError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(err(
                self.method,
                2209,
                "Syntax error: the expression is nested too deeply",
            ));
        }
        let first = self.or_expr();
        self.depth -= 1;
        let first = first?;
        if self.peek() == Some(&Tok::Comma) {
            return Err(unsupported(self.method, ","));
        }
        Ok(first)
    }

    fn or_expr(&mut self) -> Result<Expr, SqlError> {
        let mut left = self.and_expr()?;
        while self.word_is(0, "or") {
            self.pos += 1;
            let right = self.and_expr()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and_expr(&mut self) -> Result<Expr, SqlError> {
        let mut left = self.comparison()?;
        while self.word_is(0, "and") {
            self.pos += 1;
            let right = self.comparison()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn comparison(&mut self) -> Result<Expr, SqlError> {
        let left = self.path()?;
        if let Some(Tok::Cmp(op)) = self.peek().cloned() {
            self.pos += 1;
            let right = self.path()?;
            return Ok(Expr::Compare(op, Box::new(left), Box::new(right)));
        }
        // Value comparisons, arithmetic and the other XQuery operators SQL Server has.
        for word in ["eq", "ne", "lt", "le", "gt", "ge", "div", "idiv", "mod", "is", "to"] {
            if self.word_is(0, word) {
                return Err(unsupported(self.method, word));
            }
        }
        if let Some(Tok::Other(o)) = self.peek() {
            if o == "+" || o == "-" {
                return Err(unsupported(self.method, &o.clone()));
            }
        }
        if self.peek() == Some(&Tok::Star) {
            return Err(unsupported(self.method, "*"));
        }
        Ok(left)
    }

    pub(super) fn path(&mut self) -> Result<Expr, SqlError> {
        let mut e = match self.peek() {
            Some(Tok::Slash) => {
                self.pos += 1;
                if self.starts_step() {
                    let step = self.step()?;
                    Expr::Path(Box::new(Expr::Root), Box::new(step))
                } else {
                    return Ok(Expr::Root);
                }
            }
            Some(Tok::SlashSlash) => {
                self.pos += 1;
                let any =
                    Step { axis: Axis::DescendantOrSelf, test: Test::Node, predicates: vec![] };
                let root = Expr::Path(Box::new(Expr::Root), Box::new(any));
                let step = self.step()?;
                Expr::Path(Box::new(root), Box::new(step))
            }
            _ => self.step_expr()?,
        };
        loop {
            if self.eat(&Tok::Slash) {
                let step = self.step()?;
                e = Expr::Path(Box::new(e), Box::new(step));
            } else if self.eat(&Tok::SlashSlash) {
                let any =
                    Step { axis: Axis::DescendantOrSelf, test: Test::Node, predicates: vec![] };
                e = Expr::Path(Box::new(e), Box::new(any));
                let step = self.step()?;
                e = Expr::Path(Box::new(e), Box::new(step));
            } else {
                return Ok(e);
            }
        }
    }

    fn starts_step(&self) -> bool {
        matches!(
            self.peek(),
            Some(Tok::Name(_) | Tok::Axis(_) | Tok::At | Tok::Star | Tok::Dot | Tok::DotDot)
        )
    }

    /// The first step of a relative path: an axis step or a primary expression, with
    /// predicates.
    fn step_expr(&mut self) -> Result<Expr, SqlError> {
        let primary = match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Some(Expr::Str(s))
            }
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Some(Expr::Num(n))
            }
            Some(Tok::LParen) => {
                self.pos += 1;
                if self.eat(&Tok::RParen) {
                    return Err(unsupported(self.method, "()"));
                }
                let inner = self.expr()?;
                self.expect(&Tok::RParen)?;
                Some(inner)
            }
            Some(Tok::Name(name))
                if self.peek_at(1) == Some(&Tok::LParen) && !is_kind_test(&name) =>
            {
                self.pos += 2;
                Some(self.call(&name)?)
            }
            Some(Tok::Other(o)) if o == "<" || o == "{" => {
                return Err(unsupported(self.method, &o))
            }
            _ => None,
        };
        match primary {
            Some(mut e) => {
                while self.eat(&Tok::LBracket) {
                    let p = self.expr()?;
                    self.expect(&Tok::RBracket)?;
                    e = Expr::Filter(Box::new(e), Box::new(p));
                }
                Ok(e)
            }
            None => {
                if let Some(Tok::Name(w)) = self.peek() {
                    if matches!(w.as_str(), "for" | "let" | "if" | "some" | "every")
                        && matches!(self.peek_at(1), Some(Tok::LParen) | Some(Tok::Other(_)))
                    {
                        return Err(unsupported(self.method, &w.clone()));
                    }
                }
                let step = self.step()?;
                Ok(Expr::Path(Box::new(Expr::Context), Box::new(step)))
            }
        }
    }

    pub(super) fn call(&mut self, name: &str) -> Result<Expr, SqlError> {
        let mut args = Vec::new();
        if !self.eat(&Tok::RParen) {
            loop {
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(err(
                        self.method,
                        2209,
                        "Syntax error: the expression is nested too deeply",
                    ));
                }
                let arg = self.or_expr();
                self.depth -= 1;
                args.push(arg?);
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(&Tok::Comma)?;
            }
        }
        if name == "sql:variable" || name == "sql:column" {
            let [Expr::Str(target)] = args.as_slice() else {
                return Err(err(self.method, 2225, "A string literal was expected"));
            };
            self.externals.push(if name == "sql:variable" {
                External::Variable(target.clone())
            } else {
                External::Column(target.clone())
            });
            return Ok(Expr::External(self.externals.len() - 1));
        }
        let local = name.strip_prefix("fn:").unwrap_or(name);
        let func = match local {
            "count" => Func::Count,
            "string" => Func::String,
            "data" => Func::Data,
            "number" => Func::Number,
            "sum" => Func::Sum,
            "min" => Func::Min,
            "max" => Func::Max,
            "avg" => Func::Avg,
            "local-name" => Func::LocalName,
            "name" => Func::Name,
            "contains" => Func::Contains,
            "concat" => Func::Concat,
            "string-length" => Func::StringLength,
            "not" => Func::Not,
            "true" => Func::True,
            "false" => Func::False,
            "position" => Func::Position,
            "last" => Func::Last,
            // Functions SQL Server has that Walden does not evaluate.
            "substring" | "distinct-values" | "empty" | "round"
            | "floor" | "ceiling" | "lower-case" | "upper-case" | "id" | "namespace-uri"
            | "boolean" | "expanded-QName" | "local-name-from-QName"
            | "namespace-uri-from-QName" | "string-join" | "xs:string" | "xs:int"
            | "xs:decimal" | "xs:boolean" | "xs:double" | "xs:date" | "xs:dateTime" => {
                return Err(unsupported(self.method, &format!("{name}()")))
            }
            _ => {
                return Err(err(
                    self.method,
                    2395,
                    format!(
                        "There is no function '{{http://www.w3.org/2004/07/xpath-functions}}:{local}()'"
                    ),
                ))
            }
        };
        let arity_ok = match func {
            Func::True | Func::False | Func::Position | Func::Last => args.is_empty(),
            Func::String
            | Func::Data
            | Func::Number
            | Func::LocalName
            | Func::Name
            | Func::StringLength => args.len() <= 1,
            Func::Count | Func::Sum | Func::Min | Func::Max | Func::Avg | Func::Not => {
                args.len() == 1
            }
            Func::Contains => args.len() == 2,
            Func::Concat => args.len() >= 2,
        };
        if !arity_ok {
            return Err(err(
                self.method,
                2395,
                format!(
                    "There is no function '{{http://www.w3.org/2004/07/xpath-functions}}:{local}()' that takes {} arguments",
                    args.len()
                ),
            ));
        }
        Ok(Expr::Call(func, args))
    }

    pub(super) fn step(&mut self) -> Result<Step, SqlError> {
        let (axis, test) = match self.peek().cloned() {
            Some(Tok::Dot) => {
                self.pos += 1;
                (Axis::Own, Test::Node)
            }
            Some(Tok::DotDot) => {
                self.pos += 1;
                (Axis::Parent, Test::Node)
            }
            Some(Tok::At) => {
                self.pos += 1;
                (Axis::Attribute, self.node_test(true)?)
            }
            Some(Tok::Axis(a)) => {
                self.pos += 1;
                let axis = match a.as_str() {
                    "child" => Axis::Child,
                    "attribute" => Axis::Attribute,
                    "self" => Axis::Own,
                    "parent" => Axis::Parent,
                    "descendant" => Axis::Descendant,
                    "descendant-or-self" => Axis::DescendantOrSelf,
                    other => return Err(unsupported(self.method, other)),
                };
                (axis, self.node_test(axis == Axis::Attribute)?)
            }
            Some(Tok::Name(_) | Tok::Star) => (Axis::Child, self.node_test(false)?),
            _ => return Err(self.syntax_error()),
        };
        let mut predicates = Vec::new();
        while self.eat(&Tok::LBracket) {
            predicates.push(self.expr()?);
            self.expect(&Tok::RBracket)?;
        }
        Ok(Step { axis, test, predicates })
    }

    fn node_test(&mut self, attribute: bool) -> Result<Test, SqlError> {
        match self.peek().cloned() {
            Some(Tok::Star) => {
                self.pos += 1;
                Ok(Test::Name(None, None))
            }
            Some(Tok::Name(n)) if is_kind_test(&n) && self.peek_at(1) == Some(&Tok::LParen) => {
                self.pos += 2;
                self.expect(&Tok::RParen)?;
                Ok(match n.as_str() {
                    "text" => Test::Text,
                    "comment" => Test::Comment,
                    "node" => Test::Node,
                    other => return Err(unsupported(self.method, &format!("{other}()"))),
                })
            }
            Some(Tok::Name(n)) => {
                self.pos += 1;
                if self.peek() == Some(&Tok::LParen) {
                    return Err(self.syntax_error());
                }
                let (prefix, local) = match n.split_once(':') {
                    Some((p, l)) => (Some(p.to_string()), l.to_string()),
                    None => (None, n.clone()),
                };
                let uri = match &prefix {
                    Some(p) => Some(self.prefix_uri(p)?),
                    // Unprefixed attributes are in no namespace; elements in the default one.
                    None if attribute => Some(String::new()),
                    None => Some(self.ns.default.clone().unwrap_or_default()),
                };
                let local = if local == "*" { None } else { Some(local) };
                Ok(Test::Name(uri, local))
            }
            _ => Err(self.syntax_error()),
        }
    }

    fn prefix_uri(&self, prefix: &str) -> Result<String, SqlError> {
        if prefix == "xml" {
            return Ok("http://www.w3.org/XML/1998/namespace".into());
        }
        self.ns.prefixes.iter().rev().find(|(p, _)| p == prefix).map(|(_, u)| u.clone()).ok_or_else(
            || {
                err(
                    self.method,
                    2229,
                    format!("The name \"{prefix}\" does not denote a namespace."),
                )
            },
        )
    }
}

fn is_kind_test(name: &str) -> bool {
    matches!(
        name,
        "text"
            | "node"
            | "comment"
            | "processing-instruction"
            | "element"
            | "attribute"
            | "document-node"
    )
}

/// Whether `e` yields at most one item whatever the document, as SQL Server's static typing
/// requires of `value()`'s expression (else error 2389).
pub(crate) fn is_singleton(e: &Expr) -> bool {
    match e {
        Expr::Root | Expr::Context => true,
        Expr::Str(_) | Expr::Num(_) | Expr::Compare(..) | Expr::And(..) | Expr::Or(..) => true,
        Expr::Call(..) | Expr::External(_) => true,
        Expr::Filter(inner, p) => matches!(**p, Expr::Num(_)) || is_singleton(inner),
        Expr::Path(from, step) => {
            let per_node = matches!(step.axis, Axis::Own | Axis::Parent)
                || (step.axis == Axis::Attribute && matches!(step.test, Test::Name(_, Some(_))))
                || step.predicates.iter().any(|p| matches!(p, Expr::Num(_)));
            per_node && is_singleton(from)
        }
    }
}
