//! Rewriting the references of a block and of an inlined query: each name is resolved
//! against the scopes the executor would use, and replaced by the hidden alias of its inlined
//! table or by the expression that computes a view's column. A reference this cannot resolve
//! with certainty (ambiguous, or possibly captured by a view's inner names) makes the rewrite
//! give up, so that the block runs un-inlined and keeps its errors.

use std::collections::HashSet;

use crate::ast::{
    BinaryOp, Expr, ExprKind, FunctionArgs, Ident, JoinKind, ParsedId, Query, QueryBody, Select,
    TableSource,
};

use super::{Rewrite, Scope, HIDDEN_MARK};

pub(super) fn column(parts: Vec<Ident>, span: crate::ast::Span) -> Expr {
    Expr { kind: ExprKind::Column(parts), span }
}

pub(super) fn and(left: Expr, right: Expr) -> Expr {
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
            super::super::visit_children(e, &mut |c| found |= has_subquery(c));
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
    pub(super) fn hidden_alias(&mut self, qual: &str) -> String {
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
    pub(super) fn expr(&self, e: &mut Expr, scopes: &[Scope], inner: bool) -> bool {
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
    pub(super) fn resolve(
        &self,
        parts: &[Ident],
        scopes: &[Scope],
        inner: bool,
    ) -> Option<Option<Expr>> {
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
pub(super) fn count_word(text: &str, word: &str) -> usize {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$')))
        .filter(|w| w.eq_ignore_ascii_case(word))
        .count()
}

/// [`cte_as_derived`] over the FROM clause of `sel`, which, changed, is no longer the
/// parsed node it was copied from (no cache may take it for that node).
pub(super) fn cte_as_derived_in(sel: &mut Select, cte: &crate::ast::Cte) -> usize {
    let n: usize = sel.from.iter_mut().map(|s| cte_as_derived(s, cte)).sum();
    if n > 0 {
        sel.parsed = ParsedId::NONE;
    }
    n
}

/// Replaces each source of `src` (through inner joins, and the FROM clauses of derived
/// tables that are one SELECT with no CTE of their own) that names common table expression
/// `cte` by the CTE's query as a derived table; how many it replaced.
fn cte_as_derived(src: &mut TableSource, cte: &crate::ast::Cte) -> usize {
    match src {
        TableSource::Join(j) if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) => {
            cte_as_derived(&mut j.left, cte) + cte_as_derived(&mut j.right, cte)
        }
        TableSource::Derived { query, .. } if query.ctes.is_empty() => match &mut query.body {
            QueryBody::Select(sel) => cte_as_derived_in(sel, cte),
            _ => 0,
        },
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
