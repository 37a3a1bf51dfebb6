//! Expressions: values and predicates, evaluated against a row of a query (or no row) in the
//! scope of the running batch.
//!
//! Predicates are three-valued: `Ok(None)` is UNKNOWN (a comparison with NULL), which
//! `WHERE`, `IF` and `WHILE` treat as false. Column names resolve against the innermost row
//! first and then outwards (correlated subqueries). Aggregates and window functions are
//! computed before the expressions that contain them are evaluated; their results sit in
//! extra columns of the row, found through [`Env::computed`] by the address of the call's
//! node in the syntax tree (the tree does not move while a statement runs).

use std::cmp::Ordering;

use walden_engine::catalog::Object;
use walden_engine::types::{Decimal, DeclaredType, SqlType, Value};

use crate::ast::{
    BinaryOp, Expr, ExprKind, FunctionArgs, FunctionCall, Ident, Quantifier, TableSource, UnaryOp,
};
use crate::exec::execute::filter::{between, truth_and, truth_or};
use crate::exec::execute::query::ROWID;
use crate::exec::scalar;
use crate::exec::scalar::collation::{explicit_collation, Collation};
use crate::exec::scalar::registry::{self, Builtin, Form, Kind};
use crate::exec::scalar::sequential_guid;
use crate::exec::session::Run;
use crate::exec::SqlError;

mod arithmetic;
mod call;

use arithmetic::is_arithmetic;

pub(crate) use call::{
    bare_word, in_values, in_values_collated, parse_object_name, rowversion_bytes,
};

/// The version string of `@@VERSION`.
pub(crate) const VERSION: &str = concat!(
    "Walden ",
    env!("CARGO_PKG_VERSION"),
    " - a T-SQL engine with SQL Server's write-ahead log and delayed durability"
);

/// The product version Walden announces (TDS PRELOGIN and LOGINACK, `SERVERPROPERTY`):
/// SQL Server 2022's major version, so that drivers and tools enable the features of a
/// current server. Major, minor, build.
pub const PRODUCT_VERSION: (u8, u8, u16) = (16, 0, 1000);

/// A column of an intermediate row: where it came from (for `t.col` names), its name and type.
#[derive(Debug, Clone)]
pub(crate) struct Col {
    /// The table name or alias that qualifies it, if any.
    pub(crate) qual: Option<String>,
    pub(crate) name: String,
    pub(crate) ty: SqlType,
    pub(crate) nullable: bool,
    /// Internal columns (row locators, computed aggregates): never matched by name or `*`.
    pub(crate) hidden: bool,
    /// A table column's collation (its implicit collation in SQL Server's precedence), or a
    /// select list item's when it names one; None where Walden does not track it (computed
    /// values, derived tables), which then compare as the default.
    pub(crate) collation: Option<&'static Collation>,
    /// The type a table column was declared with, or a select list item cast to, when
    /// Walden holds it as `ty` (SMALLDATETIME as DATETIME, ...): what a client is told the
    /// column is. None where Walden does not track it (other expressions).
    pub(crate) declared: Option<DeclaredType>,
}

impl Col {
    pub(crate) fn new(qual: Option<&str>, name: &str, ty: SqlType) -> Col {
        Col {
            qual: qual.map(str::to_string),
            name: name.to_string(),
            ty,
            nullable: true,
            hidden: false,
            collation: None,
            declared: None,
        }
    }

    pub(crate) fn hidden(name: &str, ty: SqlType) -> Col {
        Col { hidden: true, ..Col::new(None, name, ty) }
    }
}

/// A row in scope, with the rows of the enclosing queries behind it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Env<'a> {
    pub(crate) cols: &'a [Col],
    pub(crate) row: &'a [Value],
    pub(crate) outer: Option<&'a Env<'a>>,
    /// (address of an aggregate or window call's node, index of its value in `row`).
    pub(crate) computed: &'a [(usize, usize)],
}

impl<'a> Env<'a> {
    /// No row: a batch-level expression.
    pub(crate) fn empty() -> Env<'static> {
        Env { cols: &[], row: &[], outer: None, computed: &[] }
    }

    pub(crate) fn new(cols: &'a [Col], row: &'a [Value], outer: Option<&'a Env<'a>>) -> Env<'a> {
        Env { cols, row, outer, computed: &[] }
    }

    /// The value of a column reference, or the error SQL Server gives.
    pub(crate) fn column(&self, parts: &[Ident]) -> Result<Value, SqlError> {
        let mut env = Some(self);
        while let Some(e) = env {
            if let Some(i) = find_column(e.cols, parts)? {
                return Ok(e.row.get(i).cloned().unwrap_or(Value::Null));
            }
            env = e.outer;
        }
        let mut scope = Vec::new();
        let mut env = Some(self);
        while let Some(e) = env {
            scope.push(e.cols);
            env = e.outer;
        }
        Err(unbound(scope, parts))
    }

    fn computed_value(&self, e: &Expr) -> Option<Value> {
        let key = e as *const Expr as usize;
        self.computed
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, i)| self.row.get(*i).cloned().unwrap_or(Value::Null))
    }
}

/// The error for a column reference that resolves to none of the columns of `scope` (the
/// sources in scope, innermost first): 207 for a bare name, and for a qualified one whose
/// qualifier names a source in scope (`t.nope`: the table is there, its column is not, as
/// SQL Server reports it); else 4104.
pub(crate) fn unbound<'c>(scope: impl IntoIterator<Item = &'c [Col]>, parts: &[Ident]) -> SqlError {
    if let [column] = parts {
        return SqlError::invalid_column(&column.value);
    }
    if let [.., qualifier, column] = parts {
        let known = scope
            .into_iter()
            .flatten()
            .any(|c| c.qual.as_deref().is_some_and(|q| q.eq_ignore_ascii_case(&qualifier.value)));
        if known {
            return SqlError::invalid_column(&column.value);
        }
    }
    let text: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
    SqlError::new(
        4104,
        format!("The multi-part identifier \"{}\" could not be bound.", text.join(".")),
    )
}

/// Error 4104 for `q.c` (see [`unbound`]) raised where the planner had not the source `q` in
/// scope (a join's ON condition checked against one side, a conjunct taken for a constant):
/// when `q` is a source of `from` (its alias, or its name without one) that has no column
/// `c` (`has_column` tells), SQL Server reports the column, 207. One that has it was out of
/// the ON condition's scope (`FROM c, a JOIN b ON b.id = c.id`), which SQL Server reports as
/// 4104. Any other error as it is.
pub(crate) fn rebind_unknown_column(
    err: SqlError,
    from: &[TableSource],
    has_column: &dyn Fn(&TableSource, &str) -> bool,
) -> SqlError {
    if err.number != 4104 {
        return err;
    }
    let named = err
        .message
        .strip_prefix("The multi-part identifier \"")
        .and_then(|m| m.strip_suffix("\" could not be bound."))
        .and_then(|m| m.rsplit_once('.'));
    let Some((qualifier, column)) = named else { return err };
    let last = qualifier.rsplit_once('.').map_or(qualifier, |(_, q)| q);
    match from.iter().find_map(|s| exposing(s, last)) {
        Some(source) if has_column(source, column) => err,
        Some(_) => SqlError::invalid_column(column),
        None => err,
    }
}

/// The source `source` (through its joins) exposes as `name`, if any.
fn exposing<'s>(source: &'s TableSource, name: &str) -> Option<&'s TableSource> {
    let is = |i: &Ident| i.value.eq_ignore_ascii_case(name);
    let named = match source {
        TableSource::Table { name: table, alias, .. } => alias.as_ref().map_or(is(&table.name), is),
        TableSource::Variable { name: v, alias } => {
            alias.as_ref().map_or(v.eq_ignore_ascii_case(name), is)
        }
        TableSource::Function { alias: Some(a), .. }
        | TableSource::OpenJson { alias: Some(a), .. } => is(a),
        TableSource::Derived { alias, .. }
        | TableSource::Values { alias, .. }
        | TableSource::XmlNodes { alias, .. } => is(alias),
        TableSource::Join(j) => {
            return exposing(&j.left, name).or_else(|| exposing(&j.right, name))
        }
        _ => false,
    };
    named.then_some(source)
}

/// The position of the column `parts` names among `cols`: Ok(None) if none, error 209 if
/// more than one matches an unqualified name.
pub(crate) fn find_column(cols: &[Col], parts: &[Ident]) -> Result<Option<usize>, SqlError> {
    let Some(name) = parts.last() else { return Ok(None) };
    let qual = if parts.len() >= 2 { Some(parts[parts.len() - 2].value.as_str()) } else { None };
    let mut found = None;
    for (i, c) in cols.iter().enumerate() {
        // A hidden column is matched only by the row locator's own name, which a cursor's
        // keyed query and positioned changes use (`cursor.rs`).
        let hidden = c.hidden && !(c.name == ROWID && name.value == ROWID);
        if hidden || !c.name.eq_ignore_ascii_case(&name.value) {
            continue;
        }
        if let Some(q) = qual {
            if !c.qual.as_deref().is_some_and(|cq| cq.eq_ignore_ascii_case(q)) {
                continue;
            }
        }
        if found.is_some() {
            return Err(SqlError::new(209, format!("Ambiguous column name '{}'.", name.value)));
        }
        found = Some(i);
    }
    Ok(found)
}

/// Whether `name` is an aggregate function.
pub(crate) fn is_aggregate(name: &str) -> bool {
    registry::lookup(name).is_some_and(|b| matches!(b.kind, Kind::Aggregate))
}

/// Whether `f` is an aggregate call (not a window function).
pub(crate) fn is_aggregate_call(f: &FunctionCall) -> bool {
    f.over.is_none() && f.name.schema.is_none() && is_aggregate(&f.name.name.value)
}

pub(crate) fn cmp_matches(op: BinaryOp, ord: Ordering) -> bool {
    match op {
        BinaryOp::Eq => ord == Ordering::Equal,
        BinaryOp::NotEq => ord != Ordering::Equal,
        BinaryOp::Lt => ord == Ordering::Less,
        BinaryOp::Gt => ord == Ordering::Greater,
        BinaryOp::LtEq => ord != Ordering::Greater,
        BinaryOp::GtEq => ord != Ordering::Less,
        _ => false,
    }
}

pub(crate) fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq
            | BinaryOp::NotEq
            | BinaryOp::Lt
            | BinaryOp::Gt
            | BinaryOp::LtEq
            | BinaryOp::GtEq
    )
}

/// Where a text expression's collation comes from, in SQL Server's collation precedence:
/// `COLLATE` is explicit, a column's collation implicit; anything else (literals, variables,
/// other expressions) takes the default and yields to either.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Label {
    Explicit(&'static Collation),
    Implicit(&'static Collation),
    Default,
}

impl Label {
    /// The collation an expression has when it is sorted or grouped alone.
    pub(crate) fn collation(self) -> Option<&'static Collation> {
        match self {
            Label::Explicit(c) | Label::Implicit(c) => Some(c),
            Label::Default => None,
        }
    }
}

/// The label of `e` against the columns `cols` (a column is looked up there only, not in
/// outer rows); error 448 for an unknown collation name.
pub(crate) fn label_in(e: &Expr, cols: &[Col]) -> Result<Label, SqlError> {
    Ok(match &e.kind {
        ExprKind::Collate { collation, .. } => {
            Label::Explicit(scalar::collation::collation_ref(&collation.value)?)
        }
        ExprKind::Column(parts) => match find_column(cols, parts).ok().flatten() {
            Some(i) => cols[i].collation.map_or(Label::Default, Label::Implicit),
            None => Label::Default,
        },
        _ => Label::Default,
    })
}

/// The label of `e` in `env`, whose outer rows a column may belong to.
fn label(e: &Expr, env: &Env<'_>) -> Result<Label, SqlError> {
    if let ExprKind::Column(parts) = &e.kind {
        let mut at = Some(env);
        while let Some(x) = at {
            if let Some(i) = find_column(x.cols, parts).ok().flatten() {
                return Ok(x.cols[i].collation.map_or(Label::Default, Label::Implicit));
            }
            at = x.outer;
        }
        return Ok(Label::Default);
    }
    label_in(e, &[])
}

/// The collation a comparison or LIKE of two text expressions goes by, by SQL Server's
/// precedence (see [`resolve_collation`]); None for Walden's default comparison.
fn comparison_collation(
    left: &Expr,
    right: &Expr,
    env: &Env<'_>,
    operation: &str,
) -> Result<Option<&'static Collation>, SqlError> {
    resolve_collation(label(left, env)?, label(right, env)?, operation)
}

/// Two labels combined: an explicit collation wins (two different ones are error 468), then
/// an implicit one (two different ones are error 468 too: two columns of different
/// collations cannot be compared without a `COLLATE`); None when both are the default.
pub(crate) fn resolve_collation(
    a: Label,
    b: Label,
    operation: &str,
) -> Result<Option<&'static Collation>, SqlError> {
    match (a, b) {
        (Label::Explicit(a), Label::Explicit(b)) | (Label::Implicit(a), Label::Implicit(b)) => {
            explicit_collation(Some(a), Some(b), operation)
        }
        (Label::Explicit(c), _) | (_, Label::Explicit(c)) => Ok(Some(c)),
        (Label::Implicit(c), _) | (_, Label::Implicit(c)) => Ok(Some(c)),
        (Label::Default, Label::Default) => Ok(None),
    }
}

/// [`scalar::compare`], but two texts compare under `collation` when there is one.
pub(crate) fn compare_collated(
    a: &Value,
    b: &Value,
    collation: Option<&Collation>,
) -> Result<Option<Ordering>, SqlError> {
    match (a, b, collation) {
        (Value::Str(x) | Value::NStr(x), Value::Str(y) | Value::NStr(y), Some(c)) => {
            Ok(Some(c.compare(x, y)))
        }
        _ => scalar::compare(a, b),
    }
}

/// SQL Server's name of a comparison operator in error 468.
pub(crate) fn operation_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Eq => "equal to",
        BinaryOp::NotEq => "not equal to",
        BinaryOp::Lt => "less than",
        BinaryOp::Gt => "greater than",
        BinaryOp::LtEq => "less than or equal to",
        _ => "greater than or equal to",
    }
}

pub(crate) fn is_text(v: &Value) -> bool {
    matches!(v, Value::Str(_) | Value::NStr(_))
}

/// Whether `e` is a literal or a variable (what `SET ANSI_NULLS OFF` compares as a value when
/// it is NULL).
pub(crate) fn is_literal_or_variable(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Literal(_) | ExprKind::Variable(_))
}

/// A CAST or CONVERT that failed: an overflow (8115, or 220 for a value past a small integer
/// type) is NULL under `SET ARITHABORT OFF` and `ANSI_WARNINGS OFF`, as SQL Server's
/// `CAST(256 AS tinyint)` is; other errors stand.
pub(crate) fn conversion_overflow(e: SqlError) -> Result<Value, SqlError> {
    if matches!(e.number, 8115 | 220) {
        scalar::settings::arithmetic_error(e)
    } else {
        Err(e)
    }
}

fn is_full_text_call(f: &FunctionCall) -> bool {
    f.name.schema.is_none()
        && ["CONTAINS", "FREETEXT"].iter().any(|n| f.name.name.value.eq_ignore_ascii_case(n))
}

/// Error 7601 if `e` holds a `CONTAINS` or `FREETEXT` predicate over the rows of
/// `sources` (each one's columns): checked before a FROM clause is read, as SQL Server
/// refuses the statement when it compiles it, whatever rows there are.
pub(crate) fn full_text_refusal(e: &Expr, sources: &[&[Col]]) -> Result<(), SqlError> {
    if let ExprKind::Function(f) = &e.kind {
        if is_full_text_call(f) {
            return Err(not_full_text_indexed(f, sources));
        }
    }
    let mut found = Ok(());
    crate::exec::execute::query::visit_children(e, &mut |c| {
        if found.is_ok() {
            found = full_text_refusal(c, sources);
        }
    });
    found
}

/// Error 7601 for `CONTAINS` or `FREETEXT` over the table of its first column among
/// `sources` (the first source's for `*`).
fn not_full_text_indexed(f: &FunctionCall, sources: &[&[Col]]) -> SqlError {
    let first = match &f.args {
        FunctionArgs::List { args, .. } => args.first(),
        _ => None,
    };
    let table = match first.map(|a| &a.kind) {
        Some(ExprKind::Column(parts)) if parts.len() > 1 || parts[0].value != "*" => {
            sources.iter().find_map(|cols| {
                find_column(cols, parts).ok().flatten().and_then(|i| cols[i].qual.clone())
            })
        }
        _ => sources.iter().flat_map(|cols| cols.iter()).find_map(|c| c.qual.clone()),
    };
    SqlError::new(
        7601,
        format!(
            "Cannot use a CONTAINS or FREETEXT predicate on table or indexed view '{}' because it is not full-text indexed.",
            table.unwrap_or_default()
        ),
    )
}

fn non_boolean(e: &Expr) -> SqlError {
    SqlError::with_severity(
        4145,
        15,
        format!(
            "An expression of non-boolean type specified in a context where a condition is expected, near '{}'.",
            crate::ast::Expr::to_string(e)
        ),
    )
}

impl Run<'_> {
    /// The declared type of `e`, whose value is `v`, when that value is a TIME, DATETIME2 or
    /// DATETIMEOFFSET: its scale decides how many fractional digits its text shows. Looked up
    /// only for those values, so other conversions pay nothing.
    pub(crate) fn fractional_type(&self, e: &Expr, v: &Value, env: &Env<'_>) -> Option<SqlType> {
        match v {
            Value::Time(_) | Value::DateTime2(_) | Value::DateTimeOffset(_) => {
                self.static_type(e, env.cols)
            }
            _ => None,
        }
    }

    /// The value of an expression.
    ///
    /// The kinds a loop's arithmetic is made of (constants, variables, `+ - * / %`) are
    /// taken here, in a function small enough to be cheap to enter; every other kind goes
    /// to [`Run::eval_any`], whose frame holds what all the kinds need. Both compute the
    /// same values and errors for these kinds.
    pub(crate) fn eval(&mut self, e: &Expr, env: &Env<'_>) -> Result<Value, SqlError> {
        match &e.kind {
            ExprKind::Literal(l) => match scalar::short_int_literal(l) {
                Some(v) => Ok(Value::Int(v)),
                None => scalar::literal(l),
            },
            ExprKind::Variable(name) => Ok(self.variable_at(name)?.value.clone()),
            ExprKind::Binary { op, left, right } if is_arithmetic(*op) => {
                // A tree of integers computed in registers (`eval/arithmetic.rs`); else each
                // node, the tree's integer parts not tried again (`Run::arithmetic`).
                match self.quick_int(e) {
                    Some(v) => Ok(v.value()),
                    None => self.arithmetic(*op, left, right, env),
                }
            }
            _ => self.eval_any(e, env),
        }
    }

    /// [`Run::eval`] of the kinds it does not take itself.
    fn eval_any(&mut self, e: &Expr, env: &Env<'_>) -> Result<Value, SqlError> {
        match &e.kind {
            // `eval`'s own: constants, variables and arithmetic.
            ExprKind::Literal(_) | ExprKind::Variable(_) => self.eval(e, env),
            ExprKind::SystemVariable(name) => self.system_variable(name),
            ExprKind::Column(parts) => env.column(parts),
            ExprKind::XmlMethod { target, method, args } => {
                self.xml_method(target, method, args, env)
            }
            ExprKind::Unary { op: UnaryOp::Not, .. } => Err(non_boolean(e)),
            ExprKind::Unary { op, operand } => {
                let v = self.eval(operand, env)?;
                scalar::unary(*op, v)
            }
            // Arithmetic is `eval`'s; a comparison, AND or OR is a condition, no value.
            ExprKind::Binary { op, .. }
                if is_comparison(*op) || matches!(op, BinaryOp::And | BinaryOp::Or) =>
            {
                Err(non_boolean(e))
            }
            ExprKind::Binary { .. } => self.eval(e, env),
            ExprKind::Subquery(q) => self.scalar_subquery(q, env),
            ExprKind::Case(c) => {
                let operand = match &c.operand {
                    Some(o) => Some(self.eval(o, env)?),
                    None => None,
                };
                for w in &c.branches {
                    let hit = match &operand {
                        Some(v) => {
                            let x = self.eval(&w.condition, env)?;
                            match scalar::compare(v, &x)? {
                                Some(o) => o == Ordering::Equal,
                                None => {
                                    let operand = c.operand.as_ref().unwrap_or(&w.condition);
                                    let sides = ((operand, v), (&w.condition, &x));
                                    self.null_comparison(BinaryOp::Eq, sides.0, sides.1)
                                        == Some(true)
                                }
                            }
                        }
                        None => self.predicate(&w.condition, env)? == Some(true),
                    };
                    if hit {
                        return self.eval(&w.result, env);
                    }
                }
                match &c.else_result {
                    Some(x) => self.eval(x, env),
                    None => Ok(Value::Null),
                }
            }
            ExprKind::Cast(c) => {
                let ty = scalar::data_type_in_cast(&c.data_type)?;
                let v = self.eval(&c.expr, env)?;
                let source = v.kind_name();
                let from = self.fractional_type(&c.expr, &v, env);
                let converted = if c.is_try {
                    scalar::try_convert_from(v, from, ty, None)
                } else {
                    scalar::convert_from(v, from, ty, None).or_else(conversion_overflow)
                };
                into_declared(&c.data_type, converted, source, c.is_try)
            }
            ExprKind::Convert(c) => {
                let ty = scalar::data_type_in_cast(&c.data_type)?;
                let v = self.eval(&c.expr, env)?;
                let style = match &c.style {
                    Some(s) => match scalar::convert(self.eval(s, env)?, SqlType::Int, None)? {
                        Value::Int(i) => Some(i),
                        _ => None,
                    },
                    None => None,
                };
                let source = v.kind_name();
                let from = self.fractional_type(&c.expr, &v, env);
                let converted = if c.is_try {
                    scalar::try_convert_from(v, from, ty, style)
                } else {
                    scalar::convert_from(v, from, ty, style).or_else(conversion_overflow)
                };
                into_declared(&c.data_type, converted, source, c.is_try)
            }
            ExprKind::Function(f) => {
                if let Some(v) = env.computed_value(e) {
                    return Ok(v);
                }
                self.function(f, env)
            }
            ExprKind::NextValueFor(n) => {
                let db = self.database_of(n.sequence.database.as_ref())?;
                let schema = n.sequence.schema.as_ref().map_or("dbo", |s| s.value.as_str());
                let o = db
                    .find_object(schema, &n.sequence.name.value)
                    .filter(|o| matches!(**o, Object::Sequence(_)))
                    .ok_or_else(|| SqlError::invalid_object(&n.sequence.name.value))?;
                let key = (db.id(), o.id());
                if let Some(v) = self.row_sequences.as_ref().and_then(|drawn| {
                    drawn.iter().find(|(d, q, _)| (*d, *q) == key).map(|(_, _, v)| v.clone())
                }) {
                    return Ok(v);
                }
                let v = db.next_sequence_value(o.id()).map_err(|e| self.s.engine_error(e))?;
                if let Some(drawn) = self.row_sequences.as_mut() {
                    drawn.push((key.0, key.1, v.clone()));
                }
                Ok(v)
            }
            ExprKind::Default => Err(SqlError::with_severity(
                156,
                15,
                "Incorrect syntax near the keyword 'DEFAULT'.",
            )),
            ExprKind::Collate { expr, collation } => {
                scalar::collation::collation(&collation.value)?;
                self.eval(expr, env)
            }
            // Rewritten into a key predicate before the UPDATE or DELETE runs (`cursor.rs`);
            // anywhere else it is the cursor's position it cannot stand for.
            ExprKind::CurrentOf(_) => Err(SqlError::with_severity(
                156,
                15,
                "Incorrect syntax near the keyword 'CURRENT'.",
            )),
            ExprKind::AtTimeZone { expr, zone } => {
                let value = self.eval(expr, env)?;
                let zone = self.eval(zone, env)?;
                scalar::zones::at_time_zone(value, &zone)
            }
            ExprKind::JsonObject { pairs, absent_on_null } => {
                let mut members = Vec::with_capacity(pairs.len());
                for (key, value) in pairs {
                    let key = match self.eval(key, env)? {
                        Value::Null => {
                            return Err(SqlError::new(50000, "JSON_OBJECT: a key cannot be NULL."))
                        }
                        k => scalar::to_text(&k),
                    };
                    let v = self.eval(value, env)?;
                    if !(v.is_null() && *absent_on_null) {
                        members.push((key, scalar::json::json_member(&v, is_json_text(value))?));
                    }
                }
                Ok(scalar::json::json_object_text(&members))
            }
            ExprKind::JsonArray { values, absent_on_null } => {
                let mut elements = Vec::with_capacity(values.len());
                for value in values {
                    let v = self.eval(value, env)?;
                    if !(v.is_null() && *absent_on_null) {
                        elements.push(scalar::json::json_member(&v, is_json_text(value))?);
                    }
                }
                Ok(scalar::json::json_array_text(&elements))
            }
            ExprKind::Between { .. }
            | ExprKind::InList { .. }
            | ExprKind::InSubquery { .. }
            | ExprKind::Like { .. }
            | ExprKind::IsNull { .. }
            | ExprKind::IsDistinctFrom { .. }
            | ExprKind::Quantified { .. }
            | ExprKind::Exists(_) => Err(non_boolean(e)),
        }
    }

    /// The truth of a condition: Some(true), Some(false) or None (UNKNOWN).
    pub(crate) fn predicate(&mut self, e: &Expr, env: &Env<'_>) -> Result<Option<bool>, SqlError> {
        match &e.kind {
            ExprKind::Binary { op: BinaryOp::And, left, right } => {
                let a = self.predicate(left, env)?;
                truth_and(a, || self.predicate(right, env))
            }
            ExprKind::Binary { op: BinaryOp::Or, left, right } => {
                let a = self.predicate(left, env)?;
                truth_or(a, || self.predicate(right, env))
            }
            ExprKind::Unary { op: UnaryOp::Not, operand } => {
                Ok(self.predicate(operand, env)?.map(|b| !b))
            }
            ExprKind::Binary { op, left, right } if is_comparison(*op) => {
                if let Some(holds) = self.quick_int_comparison(*op, left, right) {
                    return Ok(Some(holds));
                }
                let a = self.eval(left, env)?;
                let b = self.eval(right, env)?;
                // Text compares by the collation SQL Server's precedence gives the sides.
                let c = if is_text(&a) && is_text(&b) {
                    comparison_collation(left, right, env, operation_name(*op))?
                } else {
                    None
                };
                match compare_collated(&a, &b, c)? {
                    Some(o) => Ok(Some(cmp_matches(*op, o))),
                    None => Ok(self.null_comparison(*op, (left, &a), (right, &b))),
                }
            }
            ExprKind::Between { expr, negated, low, high } => {
                let v = self.eval(expr, env)?;
                let lo = self.eval(low, env)?;
                let hi = self.eval(high, env)?;
                let (c_lo, c_hi) = if is_text(&v) {
                    (
                        comparison_collation(expr, low, env, "greater than or equal to")?,
                        comparison_collation(expr, high, env, "less than or equal to")?,
                    )
                } else {
                    (None, None)
                };
                Ok(between(
                    compare_collated(&v, &lo, c_lo)?,
                    compare_collated(&v, &hi, c_hi)?,
                    *negated,
                ))
            }
            ExprKind::InList { expr, negated, list } => {
                let v = self.eval(expr, env)?;
                let mut items = Vec::with_capacity(list.len());
                for x in list {
                    items.push(self.eval(x, env)?);
                }
                let c = if is_text(&v) { label(expr, env)?.collation() } else { None };
                let r = in_values_collated(&v, items.iter(), c)?;
                Ok(if *negated { r.map(|b| !b) } else { r })
            }
            ExprKind::InSubquery { expr, negated, subquery } => {
                let v = self.eval(expr, env)?;
                let label = if is_text(&v) { label(expr, env)? } else { Label::Default };
                let r = self.in_subquery(&v, label, subquery, env)?;
                Ok(if *negated { r.map(|b| !b) } else { r })
            }
            ExprKind::Like { expr, negated, pattern, escape } => {
                let v = self.eval(expr, env)?;
                let p = self.eval(pattern, env)?;
                let esc = match escape {
                    Some(x) => Some(self.eval(x, env)?),
                    None => None,
                };
                // A collation that matches as the default does takes the default's faster
                // case folding.
                let r = match comparison_collation(expr, pattern, env, "like")? {
                    Some(c) if !c.order().is_default() => {
                        scalar::like_collated(&v, &p, esc.as_ref(), c)?
                    }
                    _ => scalar::like(&v, &p, esc.as_ref())?,
                };
                Ok(if *negated { r.map(|b| !b) } else { r })
            }
            ExprKind::IsNull { expr, negated } => {
                let v = self.eval(expr, env)?;
                Ok(Some(v.is_null() != *negated))
            }
            // Never unknown: two NULLs are not distinct, a NULL and a value are.
            ExprKind::IsDistinctFrom { left, right, negated } => {
                let (a, b) = (self.eval(left, env)?, self.eval(right, env)?);
                let distinct = match (a.is_null(), b.is_null()) {
                    (true, true) => false,
                    (true, false) | (false, true) => true,
                    (false, false) => scalar::compare(&a, &b)? != Some(Ordering::Equal),
                };
                Ok(Some(distinct != *negated))
            }
            ExprKind::Exists(q) => {
                let rows = self.subquery_rows(q, env)?;
                Ok(Some(!rows.rows.is_empty()))
            }
            ExprKind::Quantified { left, op, quantifier, subquery } => {
                let v = self.eval(left, env)?;
                let rows = self.subquery_rows(subquery, env)?;
                // Text compares under the collation of the left side and the subquery's
                // column, by the same precedence as a comparison (468 if they clash).
                let collation = if is_text(&v) {
                    let column = rows.cols.first().and_then(|c| c.collation);
                    let right = column.map_or(Label::Default, Label::Implicit);
                    resolve_collation(label(left, env)?, right, operation_name(*op))?
                } else {
                    None
                };
                let mut unknown = false;
                for r in &rows.rows {
                    let x = r.first().cloned().unwrap_or(Value::Null);
                    match compare_collated(&v, &x, collation)?.map(|o| cmp_matches(*op, o)) {
                        Some(true) if *quantifier == Quantifier::Any => return Ok(Some(true)),
                        Some(false) if *quantifier == Quantifier::All => return Ok(Some(false)),
                        None => unknown = true,
                        _ => {}
                    }
                }
                Ok(if unknown { None } else { Some(*quantifier == Quantifier::All) })
            }
            // Walden has no full-text indexes, so every table is one without.
            ExprKind::Function(f) if is_full_text_call(f) => {
                Err(not_full_text_indexed(f, &[env.cols]))
            }
            // A trigger's UPDATE(column) is a condition, as in `IF UPDATE(balance)`.
            ExprKind::Function(f)
                if f.name.schema.is_none() && f.name.name.value.eq_ignore_ascii_case("UPDATE") =>
            {
                Ok(match self.eval(e, env)? {
                    Value::Bit(b) => Some(b),
                    _ => None,
                })
            }
            _ => Err(non_boolean(e)),
        }
    }

    /// A comparison with a NULL side: UNKNOWN, except under `SET ANSI_NULLS OFF`, where `=`
    /// and `<>` compare a NULL that is written as a literal or held by a variable as a value
    /// (`c = NULL` holds for the rows whose `c` is NULL), as SQL Server's does. Columns and
    /// other expressions that are NULL still compare as UNKNOWN.
    pub(crate) fn null_comparison(
        &self,
        op: BinaryOp,
        (left, a): (&Expr, &Value),
        (right, b): (&Expr, &Value),
    ) -> Option<bool> {
        if self.s.opts.semantics.ansi_nulls || !matches!(op, BinaryOp::Eq | BinaryOp::NotEq) {
            return None;
        }
        let written_null = |e: &Expr, v: &Value| v.is_null() && is_literal_or_variable(e);
        if !(written_null(left, a) || written_null(right, b)) {
            return None;
        }
        let equal = a.is_null() == b.is_null();
        Some(if op == BinaryOp::Eq { equal } else { !equal })
    }
}

/// Whether `e` gives JSON text that `JSON_OBJECT` and `JSON_ARRAY` take as JSON rather than as
/// a string: a nested JSON constructor or `JSON_QUERY`, as SQL Server treats them.
fn is_json_text(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::JsonObject { .. } | ExprKind::JsonArray { .. } => true,
        ExprKind::Function(call) => call.name.name.value.eq_ignore_ascii_case("JSON_QUERY"),
        _ => false,
    }
}

/// A CAST's or CONVERT's result, already converted to the type holding its target's values,
/// as a value of the target when that is a type Walden holds as another (`CAST(d AS
/// SMALLDATETIME)` rounds to the minute, `CAST(x AS SMALLMONEY)` checks SMALLMONEY's range,
/// a failed conversion is the target's own error); for TRY_CAST and TRY_CONVERT a value out
/// of range is NULL.
fn into_declared(
    target: &crate::ast::DataType,
    converted: Result<Value, SqlError>,
    source: &str,
    is_try: bool,
) -> Result<Value, SqlError> {
    let Some(declared) = crate::exec::ddl::user_types::declared_as(target) else {
        return converted;
    };
    let v = converted.map_err(|e| scalar::declared_conversion_error(declared, e))?;
    match scalar::fit_declared(declared, v, source) {
        Err(_) if is_try => Ok(Value::Null),
        fitted => fitted,
    }
}
