//! The xml methods as the interpreter runs them: arguments checked as SQL Server checks them
//! (string literals), `sql:variable()` and `sql:column()` bound from the session and the row,
//! then [`scalar::xml`](crate::exec::scalar::xml) does the work.

use std::cell::RefCell;

use walden_engine::types::{SqlType, Value};

use crate::ast::{Expr, ExprKind, Ident, Literal, XmlNamespace};
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::Rows;
use crate::exec::scalar::xml::{self, Method, Namespaces};
use crate::exec::session::Run;
use crate::exec::SqlError;

thread_local! {
    /// The `WITH XMLNAMESPACES` declarations of the statement running on this thread. A
    /// statement runs on one thread from start to end, and its subqueries see them too.
    static NAMESPACES: RefCell<Namespaces> = RefCell::new(Namespaces::default());
}

/// Puts a statement's `WITH XMLNAMESPACES` in scope until it is dropped.
#[derive(Debug)]
pub(crate) struct NamespaceScope {
    previous: Namespaces,
}

impl Drop for NamespaceScope {
    fn drop(&mut self) {
        let previous = std::mem::take(&mut self.previous);
        NAMESPACES.with(|n| *n.borrow_mut() = previous);
    }
}

/// Brings `declarations` into scope for the methods and FOR XML of the running statement.
pub(crate) fn enter_namespaces(declarations: &[XmlNamespace]) -> NamespaceScope {
    let mut ns = Namespaces::default();
    for d in declarations {
        match &d.prefix {
            Some(p) => ns.prefixes.push((p.value.clone(), d.uri.clone())),
            None => ns.default = Some(d.uri.clone()),
        }
    }
    let previous = NAMESPACES.with(|n| std::mem::replace(&mut *n.borrow_mut(), ns));
    NamespaceScope { previous }
}

/// The namespaces in scope.
pub(crate) fn namespaces() -> Namespaces {
    NAMESPACES.with(|n| n.borrow().clone())
}

/// The `xmlns` attributes FOR XML puts on its top-level elements for the namespaces in scope.
pub(crate) fn namespace_attributes() -> String {
    let ns = namespaces();
    let quote = |u: &str| u.replace('&', "&amp;").replace('<', "&lt;").replace('"', "&quot;");
    let mut out = String::new();
    if let Some(d) = &ns.default {
        out.push_str(&format!(" xmlns=\"{}\"", quote(d)));
    }
    for (p, u) in &ns.prefixes {
        out.push_str(&format!(" xmlns:{p}=\"{}\"", quote(u)));
    }
    out
}

/// Msg 8172: an xml method's argument that is not a string literal.
fn not_literal(method: &str, n: usize) -> SqlError {
    SqlError::new(
        8172,
        format!(
            "The argument {n} of the XML data type method \"{method}\" must be a string literal."
        ),
    )
}

/// The text of argument `n` (1-based) of `method`, which must be a string literal.
fn literal_arg<'e>(method: &str, args: &'e [Expr], n: usize) -> Result<&'e str, SqlError> {
    match args.get(n - 1).map(|a| &a.kind) {
        Some(ExprKind::Literal(Literal::String { value, .. })) => Ok(value),
        _ => Err(not_literal(method, n)),
    }
}

/// Msg 174 for a method given the wrong number of arguments.
fn arity(method: &str, wanted: usize, got: usize) -> Result<(), SqlError> {
    if wanted == got {
        return Ok(());
    }
    Err(SqlError::with_severity(
        174,
        15,
        format!("The {method} function requires {wanted} argument(s)."),
    ))
}

impl Run<'_> {
    /// The values of a method's `sql:variable` / `sql:column` references.
    fn xml_externals(&mut self, m: &Method, env: &Env<'_>) -> Result<Vec<Value>, SqlError> {
        let mut out = Vec::new();
        for (variable, name) in m.externals() {
            out.push(if variable {
                self.variable(name)?.value.clone()
            } else {
                let parts: Vec<Ident> = name.split('.').map(Ident::new).collect();
                env.column(&parts)?
            });
        }
        Ok(out)
    }

    /// `target.method(args)` for `value`, `query`, `exist`; `modify` is refused.
    pub(crate) fn xml_method(
        &mut self,
        target: &Expr,
        method: &str,
        args: &[Expr],
        env: &Env<'_>,
    ) -> Result<Value, SqlError> {
        let ns = namespaces();
        match method {
            "value" => {
                arity(method, 2, args.len())?;
                let m = Method::compile("value", literal_arg(method, args, 1)?, &ns)?;
                let ty = xml::value_type(literal_arg(method, args, 2)?)?;
                let externals = self.xml_externals(&m, env)?;
                let v = self.eval(target, env)?;
                m.value(&v, ty, &externals)
            }
            "query" | "exist" => {
                arity(method, 1, args.len())?;
                let name = if method == "query" { "query" } else { "exist" };
                let m = Method::compile(name, literal_arg(method, args, 1)?, &ns)?;
                let externals = self.xml_externals(&m, env)?;
                let v = self.eval(target, env)?;
                if method == "query" {
                    m.query(&v, &externals)
                } else {
                    m.exist(&v, &externals)
                }
            }
            _ => Err(SqlError::new(
                50000,
                "The xml data type method 'modify()' (XML DML) is not supported by Walden.",
            )),
        }
    }

    /// `target.nodes('xquery') AS alias(column)`: one row per node, evaluated in `env` (the
    /// left row of an APPLY).
    pub(crate) fn xml_nodes(
        &mut self,
        target: &Expr,
        xquery: &Expr,
        alias: &Ident,
        column: &Ident,
        env: &Env<'_>,
    ) -> Result<Rows, SqlError> {
        let text = match &xquery.kind {
            ExprKind::Literal(Literal::String { value, .. }) => value.as_str(),
            _ => return Err(not_literal("nodes", 1)),
        };
        let m = Method::compile("nodes", text, &namespaces())?;
        let externals = self.xml_externals(&m, env)?;
        let v = self.eval(target, env)?;
        let rows = m.nodes(&v, &externals)?.into_iter().map(|n| vec![n]).collect();
        let col = Col::new(Some(&alias.value), &column.value, SqlType::Xml);
        Ok(Rows { cols: vec![col], rows })
    }
}
