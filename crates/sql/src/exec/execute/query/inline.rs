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
use walden_engine::Database;

use crate::ast::{
    BinaryOp, Cast, Expr, ExprKind, FunctionArgs, FunctionBody, Ident, JoinKind, ObjectName,
    OrderByItem, ParsedId, Query, QueryBody, Select, SelectItem, StatementKind, TableSource,
};
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::grouping::{select_aggregates, select_windows};

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

fn column(parts: Vec<Ident>, span: crate::ast::Span) -> Expr {
    Expr { kind: ExprKind::Column(parts), span }
}

fn and(left: Expr, right: Expr) -> Expr {
    let span = left.span;
    Expr {
        kind: ExprKind::Binary { op: BinaryOp::And, left: Box::new(left), right: Box::new(right) },
        span,
    }
}

/// Whether `e` holds a subquery anywhere (in a window's or WITHIN GROUP's clauses too).
pub(crate) fn has_subquery(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Subquery(_)
        | ExprKind::Exists(_)
        | ExprKind::InSubquery { .. }
        | ExprKind::Quantified { .. } => true,
        _ => {
            let mut found = false;
            super::visit_children(e, &mut |c| found |= has_subquery(c));
            if let ExprKind::Function(f) = &e.kind {
                if let Some(w) = &f.over {
                    found |= w.partition_by.iter().any(has_subquery);
                    found |= w.order_by.iter().any(|o| has_subquery(&o.expr));
                }
                found |= f.within_group.iter().any(|o| has_subquery(&o.expr));
            }
            found
        }
    }
}

/// Calls `f` on every direct operand of `e` that may hold a column reference, the window
/// and `WITHIN GROUP` clauses of a call included; false if `f` was false for one. A
/// subquery's query is not entered (the caller decides about it).
fn children_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr) -> bool) -> bool {
    match &mut e.kind {
        ExprKind::Unary { operand, .. } => f(operand),
        ExprKind::Binary { left, right, .. } | ExprKind::IsDistinctFrom { left, right, .. } => {
            f(left) && f(right)
        }
        ExprKind::Between { expr, low, high, .. } => f(expr) && f(low) && f(high),
        ExprKind::InList { expr, list, .. } => f(expr) && list.iter_mut().all(f),
        ExprKind::InSubquery { expr, .. } => f(expr),
        ExprKind::Like { expr, pattern, escape, .. } => {
            f(expr) && f(pattern) && escape.as_mut().is_none_or(|x| f(x))
        }
        ExprKind::IsNull { expr, .. } | ExprKind::Collate { expr, .. } => f(expr),
        ExprKind::AtTimeZone { expr, zone } => f(expr) && f(zone),
        ExprKind::XmlMethod { target, args, .. } => f(target) && args.iter_mut().all(f),
        ExprKind::JsonObject { pairs, .. } => pairs.iter_mut().all(|(k, v)| f(k) && f(v)),
        ExprKind::JsonArray { values, .. } => values.iter_mut().all(f),
        ExprKind::Quantified { left, .. } => f(left),
        ExprKind::Case(c) => {
            c.operand.as_mut().is_none_or(&mut *f)
                && c.branches.iter_mut().all(|w| f(&mut w.condition) && f(&mut w.result))
                && c.else_result.as_mut().is_none_or(&mut *f)
        }
        ExprKind::Cast(c) => f(&mut c.expr),
        ExprKind::Convert(c) => f(&mut c.expr) && c.style.as_mut().is_none_or(&mut *f),
        ExprKind::Function(call) => {
            let args = match &mut call.args {
                FunctionArgs::List { args, .. } => args.iter_mut().all(&mut *f),
                _ => true,
            };
            let over = call.over.as_mut().is_none_or(|w| {
                w.partition_by.iter_mut().all(&mut *f)
                    && w.order_by.iter_mut().all(|o| f(&mut o.expr))
            });
            args && over && call.within_group.iter_mut().all(|o| f(&mut o.expr))
        }
        ExprKind::Literal(_)
        | ExprKind::Variable(_)
        | ExprKind::SystemVariable(_)
        | ExprKind::Column(_)
        | ExprKind::Default
        | ExprKind::Exists(_)
        | ExprKind::Subquery(_) => true,
        // Anything else (a cursor's CURRENT OF, NEXT VALUE FOR) is not rewritten.
        _ => false,
    }
}

/// The identifiers of a text, lowercase: what a subquery may name.
fn words(text: &str) -> HashSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$')))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Rewrite {
    fn hidden_alias(&mut self, qual: &str) -> String {
        self.next += 1;
        format!("{qual}{HIDDEN_MARK}{}", self.next)
    }

    /// Whether a subquery of the block leaves every replaced name alone: it names no
    /// inlined source, none of their columns and no column of an inlined table (where a
    /// name is not one word, any subquery is suspect).
    fn subquery_clear(&self, q: &Query, scopes: &[Scope]) -> bool {
        let text = words(&q.to_string());
        let mut names = self.inner_names.iter().map(String::as_str).collect::<Vec<_>>();
        for s in scopes.iter().filter(|s| s.inlined) {
            names.push(&s.qual);
            names.extend(s.cols.iter().flatten().map(|(n, _)| n.as_str()));
        }
        names.iter().all(|n| {
            let n = n.to_lowercase();
            !n.is_empty() && words(&n).len() == 1 && words(&n).contains(&n) && !text.contains(&n)
        })
    }

    /// Rewrites one expression of a block whose sources are `scopes`: each reference to an
    /// inlined source's column becomes its expression, each unqualified reference to a source
    /// that stays is qualified (so an inlined table's column cannot capture it). False where
    /// the meaning is not certain (`inner`: in an inlined query, where every name must be
    /// one of its sources').
    fn expr(&self, e: &mut Expr, scopes: &[Scope], inner: bool) -> bool {
        match &mut e.kind {
            ExprKind::Column(parts) => match self.resolve(parts, scopes, inner) {
                Some(Some(to)) => {
                    let span = e.span;
                    *e = to;
                    e.span = span;
                    true
                }
                Some(None) => true,
                None => false,
            },
            ExprKind::Variable(name) => match self.params.last() {
                None => true,
                Some(params) => match params.iter().find(|(p, _)| p.eq_ignore_ascii_case(name)) {
                    Some((_, to)) => {
                        let span = e.span;
                        *e = to.clone();
                        e.span = span;
                        true
                    }
                    None => false,
                },
            },
            ExprKind::Subquery(q) | ExprKind::Exists(q) => !inner && self.subquery_clear(q, scopes),
            ExprKind::InSubquery { subquery, .. } | ExprKind::Quantified { subquery, .. } => {
                !inner
                    && self.subquery_clear(subquery, scopes)
                    && children_mut(e, &mut |c| self.expr(c, scopes, inner))
            }
            _ => children_mut(e, &mut |c| self.expr(c, scopes, inner)),
        }
    }

    /// What a column reference becomes: Some(Some(e)) replaced by e, Some(None) left as it
    /// is, None uncertain.
    fn resolve(&self, parts: &[Ident], scopes: &[Scope], inner: bool) -> Option<Option<Expr>> {
        let name = parts.last()?.value.as_str();
        let lower = name.to_lowercase();
        let col_of = |s: &Scope| -> Option<Option<Expr>> {
            let cols = s.cols.as_ref()?;
            let mut found = cols.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name));
            let first = found.next().map(|(_, e)| e.clone());
            if found.next().is_some() {
                return None;
            }
            Some(first)
        };
        if parts.len() >= 2 {
            let qual = &parts[parts.len() - 2].value;
            let mut matching = scopes.iter().filter(|s| s.qual.eq_ignore_ascii_case(qual));
            let Some(s) = matching.next() else {
                // The enclosing query's, or an error the computed block reports.
                return (!inner).then_some(None);
            };
            if matching.next().is_some() {
                return None;
            }
            if !s.inlined && !inner {
                return Some(None);
            }
            return col_of(s)?.map(Some);
        }
        let in_inlined = scopes.iter().filter(|s| s.inlined).any(|s| col_of(s) != Some(None));
        if scopes.iter().any(|s| s.cols.is_none()) {
            // A source whose columns are unknown may have the name too: only a name no
            // inlined source or table has is certain, and it stays as written.
            return (!inner && !in_inlined && !self.inner_names.contains(&lower)).then_some(None);
        }
        let mut found: Option<Expr> = None;
        for s in scopes {
            if let Some(e) = col_of(s)? {
                if found.is_some() {
                    // Ambiguous: the computed block reports it (209).
                    return None;
                }
                found = Some(e);
            }
        }
        match found {
            Some(e) => Some(Some(e)),
            None if inner || self.inner_names.contains(&lower) => None,
            None => Some(None),
        }
    }
}

/// How many times `word` (lowercase) is an identifier of `text`.
fn count_word(text: &str, word: &str) -> usize {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$')))
        .filter(|w| w.eq_ignore_ascii_case(word))
        .count()
}

/// Replaces each source of `src` (through inner joins) that names common table expression
/// `cte` by the CTE's query as a derived table; how many it replaced.
fn cte_as_derived(src: &mut TableSource, cte: &crate::ast::Cte) -> usize {
    match src {
        TableSource::Join(j) if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) => {
            cte_as_derived(&mut j.left, cte) + cte_as_derived(&mut j.right, cte)
        }
        TableSource::Table { name, alias, hints }
            if hints.is_empty()
                && name.schema.is_none()
                && name.database.is_none()
                && name.name.value.eq_ignore_ascii_case(&cte.name.value) =>
        {
            let alias = alias.clone().unwrap_or_else(|| cte.name.clone());
            *src = TableSource::Derived {
                query: Box::new(cte.query.clone()),
                alias,
                columns: cte.columns.clone(),
            };
            1
        }
        _ => 0,
    }
}

impl Run<'_> {
    /// `q` with each common table expression that only its SELECT's FROM clause names
    /// (through inner joins, not in a subquery or another CTE) and whose query is a plain
    /// SELECT over tables (`plain_select`) written as a derived table there instead, which
    /// [`Run::inline_select`] then inlines: a CTE is not computed before the query, as SQL
    /// Server does not compute it either. None if there is no such CTE.
    pub(crate) fn inline_ctes(&self, q: &Query) -> Option<Query> {
        if q.ctes.is_empty() {
            return None;
        }
        let QueryBody::Select(sel) = &q.body else { return None };
        let body_text = sel.to_string()
            + &q.order_by.iter().map(|o| o.expr.to_string()).collect::<Vec<_>>().join(" ");
        let mut out: Option<Query> = None;
        for (i, cte) in q.ctes.iter().enumerate() {
            let name = cte.name.value.to_lowercase();
            let elsewhere = q
                .ctes
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .any(|(_, c)| count_word(&c.query.to_string(), &name) > 0);
            if elsewhere
                || count_word(&cte.query.to_string(), &name) > 0
                || plain_select(&cte.query).is_none()
            {
                continue;
            }
            let target = out.get_or_insert_with(|| q.clone());
            let QueryBody::Select(tsel) = &mut target.body else { return None };
            let mut replaced = tsel.clone();
            let n: usize = replaced.from.iter_mut().map(|src| cte_as_derived(src, cte)).sum();
            if n == 0 || count_word(&body_text, &name) != n {
                continue;
            }
            *tsel = replaced;
            target.ctes.retain(|c| !c.name.value.eq_ignore_ascii_case(&cte.name.value));
        }
        out.filter(|o| o.ctes.len() < q.ctes.len())
    }

    /// `sel` with its inlinable views and derived tables inlined (see the module's
    /// documentation), and `order_by` (its query's) rewritten alike; None if there is
    /// nothing to inline or the rewrite is not certain to mean the same.
    pub(crate) fn inline_select(
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

    /// A source of the block being rewritten: inlined where it can be, else kept (with what
    /// is known of its columns). The sources that replace it.
    fn outer_source(
        &mut self,
        src: &TableSource,
        db: &Arc<Database>,
        rw: &mut Rewrite,
        scopes: &mut Vec<Scope>,
    ) -> Option<Vec<TableSource>> {
        match src {
            TableSource::Join(j) if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) => {
                let left = self.outer_source(&j.left, db, rw, scopes)?;
                let right = self.outer_source(&j.right, db, rw, scopes)?;
                let mut on = j.on.clone();
                if let Some(on) = &mut on {
                    if !rw.expr(on, scopes, false) {
                        return None;
                    }
                }
                Some(vec![join_all(left, right, j.kind, on)?])
            }
            TableSource::Table { name, alias, hints } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                if hints.is_empty() && !self.names_cte(name) {
                    if let Ok((vdb, o)) = self.resolve_relation_object(name) {
                        match &*o {
                            Object::View(v) => {
                                let kept = rw.conjuncts.len();
                                let inlined = self.inline_view(vdb, v, rw, 1);
                                if inlined.is_none() {
                                    // A view that is not inlined leaves none of its WHERE
                                    // clauses behind.
                                    rw.conjuncts.truncate(kept);
                                }
                                if let Some(inl) = inlined {
                                    rw.inlined = true;
                                    return Some(replaced(scopes, qual, inl));
                                }
                            }
                            Object::Table(def) => {
                                let cols = def
                                    .columns
                                    .iter()
                                    .map(|c| {
                                        let parts = vec![
                                            Ident::new(qual.clone()),
                                            Ident::new(c.name.clone()),
                                        ];
                                        (c.name.clone(), column(parts, Default::default()))
                                    })
                                    .collect();
                                scopes.push(Scope {
                                    qual,
                                    cols: Some(cols),
                                    inlined: false,
                                    starrable: true,
                                });
                                return Some(vec![src.clone()]);
                            }
                            _ => {}
                        }
                    }
                }
                scopes.push(Scope { qual, cols: None, inlined: false, starrable: true });
                Some(vec![src.clone()])
            }
            TableSource::Derived { query, alias, columns } => {
                let kept = rw.conjuncts.len();
                let inlined = self
                    .inline_query(query, db, rw, 0, true)
                    .and_then(|mut inl| named(&mut inl.outputs, columns).then_some(inl));
                if inlined.is_none() {
                    rw.conjuncts.truncate(kept);
                }
                match inlined {
                    Some(inl) => {
                        rw.inlined = true;
                        Some(replaced(scopes, alias.value.clone(), inl))
                    }
                    _ => {
                        scopes.push(Scope {
                            qual: alias.value.clone(),
                            cols: None,
                            inlined: false,
                            starrable: true,
                        });
                        Some(vec![src.clone()])
                    }
                }
            }
            TableSource::Variable { name, alias } => {
                let qual = alias.as_ref().map_or(name.clone(), |a| a.value.clone());
                scopes.push(Scope { qual, cols: None, inlined: false, starrable: false });
                Some(vec![src.clone()])
            }
            TableSource::Function { name, args, alias, columns } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                let kept = rw.conjuncts.len();
                match self.inline_function(name, args, columns, rw, 1) {
                    Some(inl) => {
                        rw.inlined = true;
                        return Some(replaced(scopes, qual, inl));
                    }
                    None => rw.conjuncts.truncate(kept),
                }
                scopes.push(Scope { qual, cols: None, inlined: false, starrable: true });
                Some(vec![src.clone()])
            }
            TableSource::Values { alias, .. } => {
                let qual = alias.value.clone();
                scopes.push(Scope { qual, cols: None, inlined: false, starrable: true });
                Some(vec![src.clone()])
            }
            // An outer join, APPLY, PIVOT...: kept whole, its names unknown here.
            _ => {
                scopes.push(Scope {
                    qual: String::new(),
                    cols: None,
                    inlined: false,
                    starrable: false,
                });
                Some(vec![src.clone()])
            }
        }
    }

    /// View `v` of `vdb` inlined, its columns named as the view names them.
    fn inline_view(
        &mut self,
        vdb: Arc<Database>,
        v: &walden_engine::catalog::ViewDef,
        rw: &mut Rewrite,
        depth: usize,
    ) -> Option<Inlined> {
        if depth + self.s.view_depth > MAX_DEPTH {
            return None;
        }
        let batch = self.s.parsed(&v.text).ok()?;
        let def = batch.statements.iter().find_map(|s| match &s.kind {
            StatementKind::CreateView(v) => Some(&**v),
            _ => None,
        })?;
        let mut inl = self.inline_query(&def.query, &vdb, rw, depth, false)?;
        named(&mut inl.outputs, &def.columns).then_some(())?;
        if !def.columns.is_empty() && def.columns.len() != inl.outputs.len() {
            return None;
        }
        Some(inl)
    }

    /// Inline table-valued function `name` called with `args`, inlined as a view is (SQL
    /// Server expands an inline function into its caller the same way), each parameter
    /// replaced by its argument (or its default, for DEFAULT) cast to the parameter's type,
    /// and the columns named by `columns` where given. None where the call is not certain to
    /// mean the same inlined: a function that is not inline, a wrong number of arguments or
    /// a table-valued parameter (the computed call reports 8144, 313, ...), or an argument
    /// other than constants and variables, which the computed call evaluates once and an
    /// inlined one could evaluate per row.
    fn inline_function(
        &mut self,
        name: &ObjectName,
        args: &[Expr],
        columns: &[Ident],
        rw: &mut Rewrite,
        depth: usize,
    ) -> Option<Inlined> {
        if depth + self.s.view_depth > MAX_DEPTH {
            return None;
        }
        let (fdb, def) = self.find_table_function(name).ok()??;
        let batch = self.s.parsed(&def.text).ok()?;
        let f = batch.statements.iter().find_map(|s| match &s.kind {
            StatementKind::CreateFunction(f) => Some(&**f),
            _ => None,
        })?;
        let FunctionBody::InlineTable(query) = &f.body else { return None };
        if args.len() != f.parameters.len() {
            return None;
        }
        let mut params = Vec::with_capacity(args.len());
        for (p, arg) in f.parameters.iter().zip(args) {
            let mut value = match &arg.kind {
                ExprKind::Default => p.default.clone()?,
                _ => arg.clone(),
            };
            // Within an inlined function, the argument names its parameters: replaced first.
            if p.readonly || !evaluated_once(&value) || !rw.expr(&mut value, &[], true) {
                return None;
            }
            let span = value.span;
            let cast = Cast { expr: value, data_type: p.data_type.clone(), is_try: false };
            params.push((p.name.clone(), Expr { kind: ExprKind::Cast(Box::new(cast)), span }));
        }
        rw.params.push(params);
        let inlined = self.inline_query(query, &fdb, rw, depth, false);
        rw.params.pop();
        let mut inl = inlined?;
        named(&mut inl.outputs, columns).then_some(inl)
    }

    /// A view's or derived table's query inlined (in database `db`; `ctes_visible`: the
    /// statement's CTEs are in scope, as they are for a derived table and not for a view),
    /// or None if it is not a plain SELECT over tables.
    fn inline_query(
        &mut self,
        q: &Query,
        db: &Arc<Database>,
        rw: &mut Rewrite,
        depth: usize,
        ctes_visible: bool,
    ) -> Option<Inlined> {
        let sel = plain_select(q)?;
        let mut scopes = Vec::new();
        let mut sources = Vec::new();
        for src in &sel.from {
            sources.extend(self.inner_source(src, db, rw, &mut scopes, depth, ctes_visible)?);
        }
        if let Some(w) = &sel.where_clause {
            let mut w = w.clone();
            if !rw.expr(&mut w, &scopes, true) {
                return None;
            }
            rw.conjuncts.push(w);
        }
        let mut outputs = Vec::new();
        for item in &sel.items {
            match item {
                SelectItem::Wildcard(None) => {
                    for s in &scopes {
                        outputs.extend(s.cols.as_ref()?.iter().cloned());
                    }
                }
                SelectItem::Wildcard(Some(parts)) => {
                    let qual = &parts.last()?.value;
                    let mut matching = scopes.iter().filter(|s| s.qual.eq_ignore_ascii_case(qual));
                    let (Some(s), None) = (matching.next(), matching.next()) else { return None };
                    outputs.extend(s.cols.as_ref()?.iter().cloned());
                }
                SelectItem::Expr { expr, alias } => {
                    let name =
                        alias.as_ref().map_or_else(|| super::expr_name(expr), |a| a.value.clone());
                    let mut e = expr.clone();
                    if !rw.expr(&mut e, &scopes, true) {
                        return None;
                    }
                    outputs.push((name, e));
                }
                SelectItem::Assign { .. } => return None,
            }
        }
        Some(Inlined { sources, outputs })
    }

    /// A source of an inlined query: a table (given a hidden alias), a view or derived table
    /// (inlined in turn), or an inner join of them; None for anything else.
    fn inner_source(
        &mut self,
        src: &TableSource,
        db: &Arc<Database>,
        rw: &mut Rewrite,
        scopes: &mut Vec<Scope>,
        depth: usize,
        ctes_visible: bool,
    ) -> Option<Vec<TableSource>> {
        match src {
            TableSource::Join(j) if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) => {
                let left = self.inner_source(&j.left, db, rw, scopes, depth, ctes_visible)?;
                let right = self.inner_source(&j.right, db, rw, scopes, depth, ctes_visible)?;
                let mut on = j.on.clone();
                if let Some(on) = &mut on {
                    if !rw.expr(on, scopes, true) {
                        return None;
                    }
                }
                Some(vec![join_all(left, right, j.kind, on)?])
            }
            TableSource::Table { name, alias, hints } => {
                if !hints.is_empty() || (ctes_visible && self.names_cte(name)) {
                    return None;
                }
                if name.name.value.starts_with('#') || name.server.is_some() {
                    return None;
                }
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                let (odb, o) = self
                    .in_view_scope(Arc::clone(db), |r| {
                        if r.pseudo_table(name).is_some() {
                            return Err(SqlError::new(50000, "a trigger's table"));
                        }
                        r.resolve_relation_object(name)
                    })
                    .ok()?;
                match &*o {
                    Object::Table(def) => {
                        let hidden = rw.hidden_alias(&qual);
                        let cols = def
                            .columns
                            .iter()
                            .map(|c| {
                                rw.inner_names.insert(c.name.to_lowercase());
                                let parts =
                                    vec![Ident::new(hidden.clone()), Ident::new(c.name.clone())];
                                (c.name.clone(), column(parts, Default::default()))
                            })
                            .collect();
                        scopes.push(Scope {
                            qual,
                            cols: Some(cols),
                            inlined: true,
                            starrable: false,
                        });
                        let table = ObjectName {
                            server: None,
                            database: Some(Ident::new(odb.name())),
                            schema: Some(Ident::new(def.schema.clone())),
                            name: Ident::new(def.name.clone()),
                        };
                        Some(vec![TableSource::Table {
                            name: table,
                            alias: Some(Ident::new(hidden)),
                            hints: Vec::new(),
                        }])
                    }
                    Object::View(v) => {
                        let inl = self.inline_view(odb, v, rw, depth + 1)?;
                        Some(replaced(scopes, qual, inl))
                    }
                    _ => None,
                }
            }
            TableSource::Function { name, args, alias, columns } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                let inl = self.inline_function(name, args, columns, rw, depth + 1)?;
                Some(replaced(scopes, qual, inl))
            }
            TableSource::Derived { query, alias, columns } => {
                let mut inl = self.inline_query(query, db, rw, depth, ctes_visible)?;
                named(&mut inl.outputs, columns).then_some(())?;
                Some(replaced(scopes, alias.value.clone(), inl))
            }
            _ => None,
        }
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
