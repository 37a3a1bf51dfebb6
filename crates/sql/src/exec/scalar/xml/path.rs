//! The XQuery subset the xml methods take: path expressions and what scripts put in their
//! predicates.
//!
//! Supported: absolute (`/a/b`), relative (`b/c`) and descendant (`//b`, `a//b`) paths; the
//! steps `name`, `prefix:name`, `*`, `@name`, `@*`, `.`, `..`, `text()`, `node()`,
//! `comment()`, and the axes `child::`, `attribute::`, `self::`, `parent::`, `descendant::`,
//! `descendant-or-self::`; predicates `[n]`, `[last()]`, `[expr]`; `(expr)[n]`; string and
//! number literals; the comparisons `= != < <= > >=` (existential, as XQuery's general
//! comparisons), `and`, `or`; the functions `count`, `string`, `data`, `number`, `sum`,
//! `local-name`, `name`, `contains`, `concat`, `string-length`, `not`, `true`, `false`,
//! `position`, `last`, `sql:variable("@v")`, `sql:column("c")`; a prolog of `declare namespace
//! p = "uri";` and `declare default element namespace "uri";`.
//!
//! Anything else is refused before evaluation: SQL Server's syntax error 2209 for what is not
//! XQuery, its 2395 for an unknown function, and 9335 ("The XQuery syntax '...' is not
//! supported") for XQuery that SQL Server runs but Walden does not (FLWOR, arithmetic, other
//! axes and functions), so that no query gets a wrong answer instead of an error.

use super::doc::{local_name, Doc, Kind};
use crate::exec::SqlError;

/// A compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    /// `/`, the root of the context node's tree, then steps.
    Root,
    /// The context item.
    Context,
    /// `e/step`: the step from each node of `e`.
    Path(Box<Expr>, Box<Step>),
    /// `e[p]`.
    Filter(Box<Expr>, Box<Expr>),
    Str(String),
    Num(f64),
    Compare(Cmp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
    /// `sql:variable("@v")` / `sql:column("c")`: the value bound before evaluation, by index.
    External(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Func {
    Count,
    String,
    Data,
    Number,
    Sum,
    LocalName,
    Name,
    Contains,
    Concat,
    StringLength,
    Not,
    True,
    False,
    Position,
    Last,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Axis {
    Child,
    Attribute,
    /// `self::` (and `.`).
    Own,
    Parent,
    Descendant,
    DescendantOrSelf,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Test {
    /// A name: its namespace URI (resolved at compile time) and local part; `None` parts are
    /// wildcards.
    Name(Option<String>, Option<String>),
    Text,
    Comment,
    Node,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    pub(crate) axis: Axis,
    pub(crate) test: Test,
    pub(crate) predicates: Vec<Expr>,
}

/// What binds a `sql:variable` or `sql:column` reference.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum External {
    Variable(String),
    Column(String),
}

/// A compiled query: its expression and the outside values it reads.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub(crate) expr: Expr,
    pub(crate) externals: Vec<External>,
}

/// One item of a result sequence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    Node(u32),
    Str(String),
    Num(f64),
    Bool(bool),
}

/// The method a query runs under, for messages (`XQuery [value()]: ...`).
pub(crate) fn err(method: &str, number: i32, what: impl AsRef<str>) -> SqlError {
    SqlError::new(number, format!("XQuery [{method}()]: {}", what.as_ref()))
}

fn unsupported(method: &str, what: &str) -> SqlError {
    err(method, 9335, format!("The XQuery syntax '{what}' is not supported."))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
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

fn tokenize(src: &str, method: &str) -> Result<Vec<Tok>, SqlError> {
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

/// Namespace bindings in scope for a query: `WITH XMLNAMESPACES` and the query's prolog.
#[derive(Debug, Clone, Default)]
pub(crate) struct Namespaces {
    /// (prefix, URI).
    pub(crate) prefixes: Vec<(String, String)>,
    /// The default element namespace, if any.
    pub(crate) default: Option<String>,
}

/// How deeply parentheses, brackets and calls may nest in a query: far beyond what scripts
/// write, and a bound on the compiler's and the evaluator's recursion.
const MAX_NESTING: usize = 64;

struct Compiler<'a> {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
    method: &'a str,
    ns: Namespaces,
    externals: Vec<External>,
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
    fn prolog(&mut self) -> Result<(), SqlError> {
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

    fn expr(&mut self) -> Result<Expr, SqlError> {
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

    fn path(&mut self) -> Result<Expr, SqlError> {
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

    fn call(&mut self, name: &str) -> Result<Expr, SqlError> {
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
            "substring" | "avg" | "min" | "max" | "distinct-values" | "empty" | "round"
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
            Func::Count | Func::Sum | Func::Not => args.len() == 1,
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

    fn step(&mut self) -> Result<Step, SqlError> {
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

/// Evaluation state: the document, the focus and the bound outside values.
pub(crate) struct Eval<'a> {
    pub(crate) doc: &'a Doc,
    pub(crate) externals: &'a [Item],
    pub(crate) method: &'a str,
}

#[derive(Clone, Copy)]
struct Focus<'i> {
    item: &'i Item,
    position: usize,
    size: usize,
}

/// XQuery's number formatting of a double, as `string()` gives it: integers without a
/// fraction, others in the shortest form that reads back.
pub(crate) fn number_text(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "INF" } else { "-INF" }.into()
    } else if n == n.trunc() && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

impl Eval<'_> {
    /// The items of `e` with the context node `context`.
    pub(crate) fn run(&self, e: &Expr, context: u32) -> Result<Vec<Item>, SqlError> {
        let item = Item::Node(context);
        self.eval(e, Focus { item: &item, position: 1, size: 1 })
    }

    pub(crate) fn atomize(&self, item: &Item) -> String {
        match item {
            Item::Node(n) => self.doc.string_value(*n),
            Item::Str(s) => s.clone(),
            Item::Num(n) => number_text(*n),
            Item::Bool(b) => b.to_string(),
        }
    }

    fn number(&self, item: &Item) -> f64 {
        match item {
            Item::Num(n) => *n,
            Item::Bool(b) => f64::from(u8::from(*b)),
            other => self.atomize(other).trim().parse().unwrap_or(f64::NAN),
        }
    }

    fn truth(&self, items: &[Item]) -> Result<bool, SqlError> {
        Ok(match items {
            [] => false,
            [Item::Node(_), ..] => true,
            [Item::Bool(b)] => *b,
            [Item::Str(s)] => !s.is_empty(),
            [Item::Num(n)] => *n != 0.0 && !n.is_nan(),
            _ => {
                return Err(err(
                    self.method,
                    2213,
                    "Cannot atomize/apply data() on expression that contains type 'xs:anyAtomicType' within inferred type",
                ))
            }
        })
    }

    fn eval(&self, e: &Expr, focus: Focus<'_>) -> Result<Vec<Item>, SqlError> {
        Ok(match e {
            Expr::Context => vec![focus.item.clone()],
            Expr::Root => match focus.item {
                Item::Node(_) => vec![Item::Node(0)],
                _ => {
                    return Err(err(
                        self.method,
                        2390,
                        "Top-level attribute nodes are not supported",
                    ))
                }
            },
            Expr::Str(s) => vec![Item::Str(s.clone())],
            Expr::Num(n) => vec![Item::Num(*n)],
            Expr::External(i) => self.externals.get(*i).cloned().into_iter().collect(),
            Expr::Path(from, step) => {
                let sources = self.eval(from, focus)?;
                let mut out: Vec<u32> = Vec::new();
                for s in &sources {
                    let Item::Node(n) = s else {
                        return Err(err(
                            self.method,
                            2373,
                            "'/' requires a node or set of nodes as the context of a path step",
                        ));
                    };
                    let mut found = self.axis(*n, step);
                    for p in &step.predicates {
                        found = self.filter_nodes(found, p)?;
                    }
                    out.extend(found);
                }
                if sources.len() > 1 {
                    out.sort_unstable();
                    out.dedup();
                }
                out.into_iter().map(Item::Node).collect()
            }
            Expr::Filter(inner, p) => {
                let items = self.eval(inner, focus)?;
                let size = items.len();
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let f = Focus { item, position: i + 1, size };
                    if self.predicate_holds(p, f)? {
                        out.push(item.clone());
                    }
                }
                out
            }
            Expr::Compare(op, l, r) => {
                let left = self.eval(l, focus)?;
                let right = self.eval(r, focus)?;
                vec![Item::Bool(self.general_compare(*op, &left, &right))]
            }
            Expr::And(l, r) => {
                let b = self.truth(&self.eval(l, focus)?)? && self.truth(&self.eval(r, focus)?)?;
                vec![Item::Bool(b)]
            }
            Expr::Or(l, r) => {
                let b = self.truth(&self.eval(l, focus)?)? || self.truth(&self.eval(r, focus)?)?;
                vec![Item::Bool(b)]
            }
            Expr::Call(f, args) => self.call(*f, args, focus)?,
        })
    }

    fn predicate_holds(&self, p: &Expr, focus: Focus<'_>) -> Result<bool, SqlError> {
        let v = self.eval(p, focus)?;
        Ok(match v.as_slice() {
            [Item::Num(n)] => *n == focus.position as f64,
            other => self.truth(other)?,
        })
    }

    fn filter_nodes(&self, nodes: Vec<u32>, p: &Expr) -> Result<Vec<u32>, SqlError> {
        let size = nodes.len();
        let mut out = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let item = Item::Node(*n);
            if self.predicate_holds(p, Focus { item: &item, position: i + 1, size })? {
                out.push(*n);
            }
        }
        Ok(out)
    }

    fn matches(&self, id: u32, test: &Test, axis: Axis) -> bool {
        let kind = &self.doc.node(id).kind;
        match test {
            Test::Node => true,
            Test::Text => matches!(kind, Kind::Text(_)),
            Test::Comment => matches!(kind, Kind::Comment(_)),
            Test::Name(uri, local) => {
                let (name, node_uri) = match kind {
                    Kind::Element { name, uri } if axis != Axis::Attribute => (name, uri),
                    Kind::Attribute { name, uri, .. } if axis == Axis::Attribute => (name, uri),
                    _ => return false,
                };
                // Namespace declarations are not attributes in XQuery's data model.
                if axis == Axis::Attribute && (name == "xmlns" || name.starts_with("xmlns:")) {
                    return false;
                }
                local.as_ref().is_none_or(|l| l == local_name(name))
                    && uri.as_ref().is_none_or(|u| u == node_uri)
            }
        }
    }

    fn axis(&self, n: u32, step: &Step) -> Vec<u32> {
        let node = self.doc.node(n);
        let mut out = Vec::new();
        match step.axis {
            Axis::Child => out.extend(node.children.iter().copied()),
            Axis::Attribute => out.extend(node.attributes.iter().copied()),
            Axis::Own => out.push(n),
            Axis::Parent => {
                if n != 0 {
                    out.push(node.parent);
                }
            }
            Axis::Descendant | Axis::DescendantOrSelf => {
                if step.axis == Axis::DescendantOrSelf {
                    out.push(n);
                }
                let mut stack: Vec<u32> = node.children.iter().rev().copied().collect();
                while let Some(c) = stack.pop() {
                    out.push(c);
                    stack.extend(self.doc.node(c).children.iter().rev().copied());
                }
            }
        }
        let kind_default = match step.axis {
            Axis::Attribute => Axis::Attribute,
            _ => Axis::Child,
        };
        out.retain(|&id| {
            // Only the attribute axis reaches attributes; `self::node()` of one keeps it.
            let is_attribute = matches!(self.doc.node(id).kind, Kind::Attribute { .. });
            (is_attribute == (kind_default == Axis::Attribute) || step.axis == Axis::Own)
                && self.matches(
                    id,
                    &step.test,
                    if is_attribute { Axis::Attribute } else { Axis::Child },
                )
        });
        out
    }

    fn general_compare(&self, op: Cmp, left: &[Item], right: &[Item]) -> bool {
        left.iter().any(|a| right.iter().any(|b| self.compare_items(op, a, b)))
    }

    fn compare_items(&self, op: Cmp, a: &Item, b: &Item) -> bool {
        use std::cmp::Ordering;
        let numeric = matches!(a, Item::Num(_)) || matches!(b, Item::Num(_));
        let boolean = matches!(a, Item::Bool(_)) || matches!(b, Item::Bool(_));
        let order = if boolean {
            let t = |i: &Item| match i {
                Item::Bool(x) => *x,
                other => {
                    let s = self.atomize(other);
                    s == "true" || s == "1"
                }
            };
            Some(t(a).cmp(&t(b)))
        } else if numeric {
            self.number(a).partial_cmp(&self.number(b))
        } else {
            Some(self.atomize(a).cmp(&self.atomize(b)))
        };
        let Some(o) = order else { return op == Cmp::Ne };
        match op {
            Cmp::Eq => o == Ordering::Equal,
            Cmp::Ne => o != Ordering::Equal,
            Cmp::Lt => o == Ordering::Less,
            Cmp::Le => o != Ordering::Greater,
            Cmp::Gt => o == Ordering::Greater,
            Cmp::Ge => o != Ordering::Less,
        }
    }

    fn one_string(&self, args: &[Expr], focus: Focus<'_>) -> Result<Option<String>, SqlError> {
        let items = match args.first() {
            Some(a) => self.eval(a, focus)?,
            None => vec![focus.item.clone()],
        };
        match items.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(self.atomize(one))),
            _ => Err(err(
                self.method,
                2374,
                "A node or set of nodes is required for a function that takes a single item",
            )),
        }
    }

    fn call(&self, f: Func, args: &[Expr], focus: Focus<'_>) -> Result<Vec<Item>, SqlError> {
        let name_of = |items: Vec<Item>, local: bool| -> String {
            match items.first() {
                Some(Item::Node(n)) => match &self.doc.node(*n).kind {
                    Kind::Element { name, .. } | Kind::Attribute { name, .. } => {
                        if local { local_name(name) } else { name.as_str() }.to_string()
                    }
                    _ => String::new(),
                },
                _ => String::new(),
            }
        };
        Ok(vec![match f {
            Func::Count => Item::Num(self.eval(&args[0], focus)?.len() as f64),
            Func::Sum => {
                let items = self.eval(&args[0], focus)?;
                Item::Num(items.iter().map(|i| self.number(i)).sum())
            }
            Func::String => Item::Str(self.one_string(args, focus)?.unwrap_or_default()),
            // The typed values of a whole sequence: for untyped xml, each item's text.
            Func::Data => {
                let items = match args.first() {
                    Some(a) => self.eval(a, focus)?,
                    None => vec![focus.item.clone()],
                };
                return Ok(items.iter().map(|i| Item::Str(self.atomize(i))).collect());
            }
            Func::Number => match self.one_string(args, focus)? {
                Some(s) => Item::Num(s.trim().parse().unwrap_or(f64::NAN)),
                None => Item::Num(f64::NAN),
            },
            Func::StringLength => {
                Item::Num(self.one_string(args, focus)?.unwrap_or_default().chars().count() as f64)
            }
            Func::LocalName | Func::Name => {
                let items = match args.first() {
                    Some(a) => self.eval(a, focus)?,
                    None => vec![focus.item.clone()],
                };
                Item::Str(name_of(items, f == Func::LocalName))
            }
            Func::Contains => {
                let hay = self.one_string(&args[..1], focus)?.unwrap_or_default();
                let needle = self.one_string(&args[1..], focus)?.unwrap_or_default();
                Item::Bool(hay.contains(&needle))
            }
            Func::Concat => {
                let mut s = String::new();
                for a in args {
                    s.push_str(
                        &self.one_string(std::slice::from_ref(a), focus)?.unwrap_or_default(),
                    );
                }
                Item::Str(s)
            }
            Func::Not => Item::Bool(!self.truth(&self.eval(&args[0], focus)?)?),
            Func::True => Item::Bool(true),
            Func::False => Item::Bool(false),
            Func::Position => Item::Num(focus.position as f64),
            Func::Last => Item::Num(focus.size as f64),
        }])
    }
}

#[cfg(test)]
mod tests {
    use super::super::doc::{parse, ParseOptions};
    use super::*;

    fn run(xml: &str, q: &str) -> Vec<String> {
        let doc = parse(xml, ParseOptions { preserve_space: false, national: false }).unwrap();
        let query = compile(q, "query", &Namespaces::default()).unwrap();
        let e = Eval { doc: &doc, externals: &[], method: "query" };
        e.run(&query.expr, 0).unwrap().iter().map(|i| e.atomize(i)).collect()
    }

    #[test]
    fn paths_and_predicates() {
        let x = "<r><a id=\"1\"><b>x</b></a><a id=\"2\"><b>y</b><b>z</b></a></r>";
        assert_eq!(run(x, "/r/a/b"), ["x", "y", "z"]);
        assert_eq!(run(x, "(/r/a/b)[2]"), ["y"]);
        assert_eq!(run(x, "/r/a/b[1]"), ["x", "y"]);
        assert_eq!(run(x, "//a[@id=2]/b[last()]"), ["z"]);
        assert_eq!(run(x, "/r/a[b='x']/@id"), ["1"]);
        assert_eq!(run(x, "count(//b)"), ["3"]);
        assert_eq!(run(x, "/r/a[1]/b/../@id"), ["1"]);
        assert_eq!(run(x, "/r/*[2]/b/text()"), ["y", "z"]);
    }

    #[test]
    fn singleton_rule() {
        let single =
            |q: &str| is_singleton(&compile(q, "value", &Namespaces::default()).unwrap().expr);
        assert!(single("(/a/b)[1]"));
        assert!(single("/a[1]/b[1]"));
        assert!(single("@id"));
        assert!(single("."));
        assert!(!single("/a/b[1]"));
        assert!(!single("/a/b"));
    }

    #[test]
    fn unsupported_is_an_error() {
        let number = |q: &str| compile(q, "query", &Namespaces::default()).err().map(|e| e.number);
        assert_eq!(number("for $x in /a return $x"), Some(9335));
        assert_eq!(number("following-sibling::a"), Some(9335));
        assert_eq!(number("bogus(1)"), Some(2395));
        assert_eq!(number("/a["), Some(2209));
    }
}
