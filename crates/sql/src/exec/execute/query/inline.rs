//! Views, derived tables and inline table-valued functions inlined into the SELECT block
//! that reads them.
//!
//! A view or derived table whose query is a plain `SELECT ... FROM ... WHERE` over tables
//! (inner and cross joins allowed; no grouping, aggregate, window, DISTINCT, TOP, set
//! operator, subquery, CTE, ORDER BY or FOR JSON/XML) is not computed as a source of its
//! own: the block is rewritten so that its tables are sources of the block, its WHERE clause
//! is ANDed before the block's, and every reference of the block to one of its columns is
//! replaced by the expression that computes the column. The planner then sees the tables
//! themselves (`join.rs`): a filter on a view's column seeks the view's table's index, and
//! joins are ordered across the view. SQL Server's optimizer does the same ("view
//! expansion"), and SHOWPLAN likewise shows the view's tables rather than the view.
//! An inline table-valued function called with constants and variables is a view whose
//! parameters are replaced by its arguments, each cast to its parameter's type, as SQL
//! Server expands it too.
//!
//! Name scoping is kept by construction. Each inlined table gets an alias no one can write
//! (its own alias, [`HIDDEN_MARK`] and a number), and every reference inside the inlined
//! query is rewritten to it, so the block cannot name a view's inner tables and a view's
//! inner names cannot capture the block's. The block's own references are resolved here
//! as the executor would resolve them; wherever that is not certain (an ambiguous name, a
//! name the view's tables also have while a source's columns are unknown, a subquery that
//! mentions one of the names involved), nothing is inlined and the query runs as before,
//! computing the view, so that its errors (207, 209, 4104, 8155, 4502, 217, ...) are the
//! ones it always gave. The rewrite is of one block: a nested subquery is rewritten when it
//! runs, as a block of its own.

use std::collections::HashSet;
use std::sync::Arc;

use walden_engine::catalog::Object;

use crate::ast::{
    Expr, ExprKind, Ident, JoinKind, ObjectName, OrderByItem, ParsedId, Query, QueryBody, Select,
    SelectItem, TableSource,
};
use crate::exec::session::Run;

use super::grouping::{select_aggregates, select_windows};
use super::numbered::numbering_select;

mod pull_up;
mod rewrite;
mod sources;

pub(crate) use pull_up::outer_joins_pulled_up;
pub(crate) use rewrite::has_subquery;
use rewrite::{and, count_word, cte_as_derived_in};

/// Starts the part of an inlined table's alias that makes it unique and unwritable; SHOWPLAN
/// shows the alias without it ([`shown_alias`]).
pub(crate) const HIDDEN_MARK: char = '\u{1}';

/// Views inlined within views, at most: SQL Server's nesting limit (error 217 beyond, which
/// the computed view then raises).
const MAX_DEPTH: usize = 32;

/// A text with every inlined table's alias shown as written (`t` for `t` + [`HIDDEN_MARK`]
/// + a number), for SHOWPLAN.
pub(crate) fn shown_alias(text: &str) -> String {
    if !text.contains(HIDDEN_MARK) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == HIDDEN_MARK {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One source of a block as the block's references see it.
struct Scope {
    /// The name that qualifies its columns (its alias, or its table's name).
    qual: String,
    /// Its columns and what each is in the rewritten block: a column of an inlined table,
    /// or an expression over them; for a source that stays, its own column. None when its
    /// columns are not known here (a function, an outer join, ...).
    cols: Option<Vec<(String, Expr)>>,
    /// Whether it is inlined (its columns are replaced), or stays as written.
    inlined: bool,
    /// Whether `qual.*` is exactly what `*` takes from it.
    starrable: bool,
}

/// What a rewrite collects besides the sources.
#[derive(Default)]
struct Rewrite {
    /// The names of every column of every inlined table (lowercase): a name of the block
    /// that no scope resolves must not be one of them.
    inner_names: HashSet<String>,
    /// The WHERE clauses of the inlined queries, rewritten.
    conjuncts: Vec<Expr>,
    /// The next number for a hidden alias.
    next: usize,
    /// Whether anything was inlined.
    inlined: bool,
    /// While an inline table-valued function's query is inlined (innermost last): each of
    /// its parameters and what replaces it, its argument cast to the parameter's type. A
    /// variable of that query that is not one of them cannot be (the function has no
    /// others), so the rewrite gives up on it.
    params: Vec<Vec<(String, Expr)>>,
}

/// A view's or derived table's query, inlined: the sources that replace it (already
/// rewritten) and its output columns as expressions over them.
struct Inlined {
    sources: Vec<TableSource>,
    outputs: Vec<(String, Expr)>,
}

impl Run<'_> {
    /// `q` with each common table expression that only FROM clauses name (its SELECT's, and
    /// those of the later CTEs that are one SELECT; through inner joins, not in a subquery)
    /// and whose query is a plain SELECT over tables (`plain_select`) written as a derived
    /// table at each place instead, which [`Run::inline_select`] then inlines: a CTE is not
    /// computed before the query, as SQL Server does not compute it either, but expanded
    /// where it is named, as SQL Server expands it. A CTE that numbers its rows
    /// (`numbered.rs`) is written as a derived table too, computed where it is read, so that
    /// the block reading it may cut it to the rows it uses. A chain of CTEs each of which
    /// cross joins the one before (numbers-table scripts' `L1 AS (SELECT 1 AS c FROM L0 AS A
    /// CROSS JOIN L0 AS B)`, up to four billion rows) so becomes one block, read no further
    /// than its row goal. None if there is no such CTE.
    pub(crate) fn inline_ctes(&self, q: &Query) -> Option<Query> {
        if q.ctes.is_empty() || !matches!(q.body, QueryBody::Select(_)) {
            return None;
        }
        let mut out = q.clone();
        for cte in &q.ctes {
            let Some(i) = out.ctes.iter().position(|c| c.name.value == cte.name.value) else {
                continue;
            };
            let cte = out.ctes[i].clone();
            let name = cte.name.value.to_lowercase();
            let placeable =
                plain_select(&cte.query).is_some() || numbering_select(&cte.query).is_some();
            let named_before =
                out.ctes[..i].iter().any(|c| count_word(&c.query.to_string(), &name) > 0);
            if !placeable || named_before || count_word(&cte.query.to_string(), &name) > 0 {
                continue;
            }
            let mut trial = out.clone();
            let QueryBody::Select(tsel) = &mut trial.body else { return None };
            let order_text: Vec<String> = q.order_by.iter().map(|o| o.expr.to_string()).collect();
            let mut named = count_word(&(tsel.to_string() + " " + &order_text.join(" ")), &name);
            let mut replaced = cte_as_derived_in(tsel, &cte);
            for later in &mut trial.ctes[i + 1..] {
                named += count_word(&later.query.to_string(), &name);
                if let QueryBody::Select(lsel) = &mut later.query.body {
                    replaced += cte_as_derived_in(lsel, &cte);
                }
            }
            if replaced == 0 || replaced != named {
                continue;
            }
            trial.ctes.remove(i);
            out = trial;
        }
        (out.ctes.len() < q.ctes.len()).then_some(out)
    }

    /// `sel` with its inlinable views and derived tables inlined (see the module's
    /// documentation), and `order_by` (its query's) rewritten alike, and then a LEFT JOIN
    /// written before inner joins moved after them (`inline/pull_up.rs`); None if there is
    /// nothing to rewrite or the rewrite is not certain to mean the same.
    pub(crate) fn inline_select(
        &mut self,
        sel: &Select,
        order_by: &[OrderByItem],
    ) -> Option<(Select, Vec<OrderByItem>)> {
        match self.inline_sources(sel, order_by) {
            Some((inlined, order_by)) => {
                let moved = pull_up::pull_up_outer_join(&inlined);
                Some((moved.unwrap_or(inlined), order_by))
            }
            None => pull_up::pull_up_outer_join(sel).map(|moved| (moved, order_by.to_vec())),
        }
    }

    /// [`Run::inline_select`]'s views and derived tables inlined, nothing else.
    fn inline_sources(
        &mut self,
        sel: &Select,
        order_by: &[OrderByItem],
    ) -> Option<(Select, Vec<OrderByItem>)> {
        if sel.from.is_empty() || !sel.from.iter().any(|s| self.may_inline(s)) {
            return None;
        }
        let mut rw = Rewrite::default();
        let mut scopes = Vec::new();
        let mut from = Vec::with_capacity(sel.from.len());
        let db = Arc::clone(&self.s.db);
        for src in &sel.from {
            from.extend(self.outer_source(src, &db, &mut rw, &mut scopes)?);
        }
        if !rw.inlined {
            return None;
        }
        let mut out = Select {
            distinct: sel.distinct,
            top: sel.top.clone(),
            items: Vec::with_capacity(sel.items.len()),
            into: sel.into.clone(),
            from,
            where_clause: None,
            group_by: sel.group_by.clone(),
            grouping_sets: sel.grouping_sets.clone(),
            having: sel.having.clone(),
            parsed: ParsedId::NONE,
        };
        for item in &sel.items {
            match item {
                SelectItem::Wildcard(None) => {
                    for s in &scopes {
                        match (&s.cols, s.inlined) {
                            (Some(cols), true) => out.items.extend(cols.iter().map(named_item)),
                            _ if s.starrable => out
                                .items
                                .push(SelectItem::Wildcard(Some(vec![Ident::new(s.qual.clone())]))),
                            _ => return None,
                        }
                    }
                }
                SelectItem::Wildcard(Some(parts)) => {
                    let qual = &parts.last()?.value;
                    let mut matching = scopes.iter().filter(|s| s.qual.eq_ignore_ascii_case(qual));
                    match (matching.next(), matching.next()) {
                        (Some(s), None) if s.inlined => {
                            out.items.extend(s.cols.as_ref()?.iter().map(named_item))
                        }
                        (Some(_), Some(_)) => return None,
                        _ => out.items.push(item.clone()),
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let mut e = expr.clone();
                    if !rw.expr(&mut e, &scopes, false) {
                        return None;
                    }
                    // A column keeps its name when it becomes another column or an expression.
                    let alias = alias.clone().or_else(|| match &expr.kind {
                        ExprKind::Column(parts) if e != *expr => parts.last().cloned(),
                        _ => None,
                    });
                    out.items.push(SelectItem::Expr { expr: e, alias });
                }
                SelectItem::Assign { variable, op, value } => {
                    let mut v = value.clone();
                    if !rw.expr(&mut v, &scopes, false) {
                        return None;
                    }
                    out.items.push(SelectItem::Assign {
                        variable: variable.clone(),
                        op: *op,
                        value: v,
                    });
                }
            }
        }
        let rewrite_all = |es: &mut [Expr]| es.iter_mut().all(|e| rw.expr(e, &scopes, false));
        if !rewrite_all(&mut out.group_by) {
            return None;
        }
        if let Some(sets) = &mut out.grouping_sets {
            if !sets.iter_mut().all(|set| rewrite_all(set)) {
                return None;
            }
        }
        if let Some(h) = &mut out.having {
            if !rw.expr(h, &scopes, false) {
                return None;
            }
        }
        let mut filter: Option<Expr> = None;
        for c in std::mem::take(&mut rw.conjuncts) {
            filter = Some(match filter {
                Some(f) => and(f, c),
                None => c,
            });
        }
        if let Some(w) = &sel.where_clause {
            let mut w = w.clone();
            if !rw.expr(&mut w, &scopes, false) {
                return None;
            }
            filter = Some(match filter {
                Some(f) => and(f, w),
                None => w,
            });
        }
        out.where_clause = filter;
        // ORDER BY names a select list's column first: those names stay.
        let outputs: Vec<String> = out
            .items
            .iter()
            .filter_map(|i| match i {
                SelectItem::Expr { alias: Some(a), .. } => Some(a.value.to_lowercase()),
                SelectItem::Expr { expr, .. } => Some(super::expr_name(expr).to_lowercase()),
                _ => None,
            })
            .collect();
        let mut order = Vec::with_capacity(order_by.len());
        for o in order_by {
            let mut o = o.clone();
            let output = matches!(&o.expr.kind, ExprKind::Column(p)
                if p.len() == 1 && outputs.contains(&p[0].value.to_lowercase()));
            if !output && !rw.expr(&mut o.expr, &scopes, false) {
                return None;
            }
            order.push(o);
        }
        Some((out, order))
    }

    /// Whether `src` is, or joins by inner joins, a derived table or a view.
    fn may_inline(&mut self, src: &TableSource) -> bool {
        match src {
            TableSource::Derived { .. } => true,
            TableSource::Join(j) if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) => {
                self.may_inline(&j.left) || self.may_inline(&j.right)
            }
            TableSource::Table { name, hints, .. } => {
                hints.is_empty()
                    && !self.names_cte(name)
                    && matches!(
                        self.resolve_relation_object(name).as_ref().map(|(_, o)| &**o),
                        Ok(Object::View(_))
                    )
            }
            TableSource::Function { name, .. } => {
                matches!(self.find_table_function(name), Ok(Some(_)))
            }
            _ => false,
        }
    }

    /// Whether an unqualified `name` is a common table expression in scope.
    fn names_cte(&self, name: &ObjectName) -> bool {
        name.schema.is_none()
            && name.database.is_none()
            && (self.ctes.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name.name.value))
                || self
                    .s
                    .explain_ctes
                    .iter()
                    .any(|(c, _)| c.name.value.eq_ignore_ascii_case(&name.name.value)))
    }
}

/// The one SELECT of a query that has nothing around or on it that a source's rows depend on
/// beyond its FROM, WHERE, grouping and select list: no CTE, ORDER BY, OFFSET, FOR JSON/XML,
/// XML namespaces, set operator, DISTINCT, TOP, INTO or grouping sets. What both inlining
/// and the group-by-group feed of a derived table (`join/stream.rs`) start from.
pub(crate) fn bare_select(q: &Query) -> Option<&Select> {
    let QueryBody::Select(sel) = &q.body else { return None };
    let bare = q.ctes.is_empty()
        && q.order_by.is_empty()
        && q.offset.is_none()
        && q.for_json.is_none()
        && q.for_xml.is_none()
        && q.xml_namespaces.is_empty()
        && !sel.distinct
        && sel.top.is_none()
        && sel.into.is_none()
        && sel.grouping_sets.is_none();
    bare.then_some(&**sel)
}

/// The SELECT of a query that can be inlined, if it is one: a plain SELECT-FROM-WHERE (no
/// grouping, aggregate, window, DISTINCT, TOP, INTO, set operator, CTE, ORDER BY, OFFSET,
/// FOR JSON/XML or variable assignment) with no subquery in its select list or WHERE.
fn plain_select(q: &Query) -> Option<&Select> {
    let sel = bare_select(q)?;
    let plain = sel.group_by.is_empty()
        && sel.having.is_none()
        && !sel.from.is_empty()
        && select_aggregates(sel, &[]).is_empty()
        && select_windows(sel, &[]).is_empty()
        && !sel.where_clause.as_ref().is_some_and(has_subquery)
        && sel.items.iter().all(|i| match i {
            SelectItem::Wildcard(_) => true,
            SelectItem::Expr { expr, .. } => !has_subquery(expr),
            SelectItem::Assign { .. } => false,
        });
    plain.then_some(sel)
}

/// Records that the source `qual` was inlined as `inl` (its columns are their expressions
/// from now on); the sources that replace it.
fn replaced(scopes: &mut Vec<Scope>, qual: String, inl: Inlined) -> Vec<TableSource> {
    scopes.push(Scope { qual, cols: Some(inl.outputs), inlined: true, starrable: false });
    inl.sources
}

/// Whether `e` is made of constants and variables only (through operators and casts): an
/// argument that gives the same value wherever an inlined function's query evaluates it.
fn evaluated_once(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Variable(_) => true,
        ExprKind::Unary { operand, .. } => evaluated_once(operand),
        ExprKind::Binary { left, right, .. } => evaluated_once(left) && evaluated_once(right),
        ExprKind::Cast(c) => evaluated_once(&c.expr),
        ExprKind::Convert(c) => {
            evaluated_once(&c.expr) && c.style.as_ref().is_none_or(evaluated_once)
        }
        _ => false,
    }
}

/// Names `outputs` by `columns` (a view's or derived table's column list) where given;
/// false if the result is not a set of distinct, non-empty names of the right count (the
/// computed source then reports what is wrong, or, with duplicates, leaves a reference
/// ambiguous as it always did).
fn named(outputs: &mut [(String, Expr)], columns: &[Ident]) -> bool {
    if !columns.is_empty() {
        if columns.len() != outputs.len() {
            return false;
        }
        for ((n, _), c) in outputs.iter_mut().zip(columns) {
            *n = c.value.clone();
        }
    }
    let mut seen = HashSet::new();
    outputs.iter().all(|(n, _)| !n.is_empty() && seen.insert(n.to_lowercase()))
}

/// A select list item that gives `expr` the column name `name`.
fn named_item((name, expr): &(String, Expr)) -> SelectItem {
    SelectItem::Expr { expr: expr.clone(), alias: Some(Ident::new(name.clone())) }
}

/// `left` and `right` (each one source, or an inlined query's several) joined by `kind` on
/// `on`: several sources are cross joined, their WHERE clauses being with the block's.
fn join_all(
    left: Vec<TableSource>,
    right: Vec<TableSource>,
    kind: JoinKind,
    on: Option<Expr>,
) -> Option<TableSource> {
    let cross = |l: TableSource, r: TableSource| {
        TableSource::Join(Box::new(crate::ast::Join {
            left: l,
            right: r,
            kind: JoinKind::Cross,
            on: None,
        }))
    };
    let chain = |v: Vec<TableSource>| v.into_iter().reduce(cross);
    let (left, right) = (chain(left)?, chain(right)?);
    Some(TableSource::Join(Box::new(crate::ast::Join { left, right, kind, on })))
}
