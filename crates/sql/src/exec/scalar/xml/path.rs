//! The XQuery subset the xml methods take: path expressions and what scripts put in their
//! predicates.
//!
//! Supported: absolute (`/a/b`), relative (`b/c`) and descendant (`//b`, `a//b`) paths; the
//! steps `name`, `prefix:name`, `*`, `@name`, `@*`, `.`, `..`, `text()`, `node()`,
//! `comment()`, and the axes `child::`, `attribute::`, `self::`, `parent::`, `descendant::`,
//! `descendant-or-self::`; predicates `[n]`, `[last()]`, `[expr]`; `(expr)[n]`; string and
//! number literals; the comparisons `= != < <= > >=` (existential, as XQuery's general
//! comparisons), `and`, `or`; the functions `count`, `string`, `data`, `number`, `sum`, `min`, `max`, `avg`,
//! `local-name`, `name`, `contains`, `concat`, `string-length`, `not`, `true`, `false`,
//! `position`, `last`, `sql:variable("@v")`, `sql:column("c")`; a prolog of `declare namespace
//! p = "uri";` and `declare default element namespace "uri";`.
//!
//! Anything else is refused before evaluation: SQL Server's syntax error 2209 for what is not
//! XQuery, its 2395 for an unknown function, and 9335 ("The XQuery syntax '...' is not
//! supported") for XQuery that SQL Server runs but Walden does not (FLWOR, arithmetic, other
//! axes and functions), so that no query gets a wrong answer instead of an error.

use crate::exec::SqlError;

mod compile;
mod eval;
mod lexer;

pub(crate) use compile::{compile, is_singleton};
pub(crate) use eval::Eval;

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
    /// `min`, `max` and `avg` over untyped values, read as numbers (`xs:double`).
    Min,
    Max,
    Avg,
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

    /// sp_BlitzCache reads `max(//p:RelOp/@Parallel)` of a plan.
    #[test]
    fn min_max_and_avg_read_values_as_numbers() {
        let x = "<r><a n=\"4\"/><a n=\"1.5\"/><a n=\"8\"/></r>";
        assert_eq!(run(x, "max(//a/@n)"), ["8"]);
        assert_eq!(run(x, "min(/r/a/@n)"), ["1.5"]);
        assert_eq!(run(x, "avg(//@n)"), ["4.5"]);
        assert!(run(x, "max(//b/@n)").is_empty());
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
