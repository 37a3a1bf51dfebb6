//! Correlated scalar aggregate subqueries, computed once per statement for every
//! correlation value at once.
//!
//! `WHERE l_quantity < (SELECT 0.2 * AVG(l_quantity) FROM lineitem WHERE l_partkey =
//! p_partkey)` run per outer row reads `lineitem` once per row when no index can seek
//! `l_partkey`. When the subquery is
//!
//! * a plain SELECT of one item that aggregates (no GROUP BY, HAVING, TOP, DISTINCT, window,
//!   or subquery in the item), naming only the subquery's own columns, and
//! * filtered by conjuncts on its own columns and by equalities `inner expression = outer
//!   expression` (the outer side naming no column of the subquery's sources),
//!
//! it is *decorrelated*: `SELECT inner keys, item FROM ... WHERE own conjuncts GROUP BY inner
//! keys` runs once, and each outer row looks up its keys' group (by [`group_key`], which
//! equal values of one type family share). A row whose keys find no group, or hold a NULL
//! (which `=` matches with nothing), gets the item over no rows (`COUNT` 0, `AVG` NULL),
//! computed once by the same SELECT over an empty filter. This is the rewrite PostgreSQL
//! leaves to the user and SQL Server's optimizer makes (an aggregate below an apply pulled
//! up into a grouped join).
//!
//! # When it is used
//!
//! The first evaluation always runs the subquery for its row. The rewrite is made at the
//! second, and only where a per-row run reads its whole sources: a subquery with a table
//! whose index the equalities can seek stays per row, as a few seeks cost less than reading
//! the sources once. Where that subquery is one table, without hints, and its item one
//! aggregate call (`(SELECT COUNT(*) FROM orders o WHERE o.customer_id = c.id)`), the
//! per-row run is prepared once instead ([`Decorrelated::Seek`]): each row only chooses the
//! seek (from conjuncts already split), reads its rows and folds the aggregate over them,
//! with none of a query's set-up (name resolution, the FROM clause's plan, grouping and
//! projection), which cost more than the seek of a few rows itself. A `COUNT(*)` whose
//! seek, of a nonclustered index, answers every conjunct exactly counts the entries it finds
//! without reading a row (`Run::count_seek`). A probe whose type family differs from its key's (`int_column =
//! varchar_column`, which converts before comparing) is run per row, as is everything when
//! building the groups fails (a conversion error in a group no outer row asks for must not
//! become the statement's error).

use std::collections::HashMap;

use walden_engine::types::Value;

use super::semi::has_column;
use super::Reduced;
use super::{clone_ref, conjuncts, stable, Flat, Input};
use crate::ast::{
    BinaryOp, Expr, ExprKind, FunctionArgs, Ident, Literal, Query, QueryBody, Select, SelectItem,
    Span, TableSource,
};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{find_column, is_aggregate_call, Col, Env};
use crate::exec::execute::aggregate::aggregate_rows;
use crate::exec::execute::query::TableRef;
use crate::exec::execute::query::{group_key, visit_children};
use crate::exec::execute::recursive::has_aggregate;
use crate::exec::plan::access::{self, RowFilter, TableStats};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A correlated scalar aggregate subquery, computed for every correlation value at once or
/// prepared to seek per row.
#[derive(Debug)]
pub(crate) enum GroupedSubquery {
    Groups(Groups),
    Seek(Decorrelated),
}

/// A correlated scalar aggregate subquery of one table that the correlation seeks, prepared
/// once: per row only the seek is chosen (its probes' values may convert or not), the rows
/// read and the aggregate folded over them.
pub(crate) struct Decorrelated {
    table: TableRef,
    /// The table's columns, as the subquery names them.
    cols: Vec<Col>,
    stats: Option<std::sync::Arc<TableStats>>,
    /// The subquery's WHERE conjuncts (its own and the correlated equalities): the seek's
    /// terms, and checked on each row read.
    conjuncts: Vec<Expr>,
    /// The item: one aggregate call over the table's columns.
    item: Expr,
    /// The item is `COUNT(*)` (false) or `COUNT_BIG(*)` (true): where the seek answers
    /// every conjunct, its entries are counted without reading a row (`Run::count_seek`).
    count_rows: Option<bool>,
}

impl std::fmt::Debug for Decorrelated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decorrelated")
            .field("table", &self.table.def.name)
            .field("conjuncts", &self.conjuncts)
            .field("item", &self.item)
            .finish_non_exhaustive()
    }
}

/// A correlated scalar aggregate subquery's value for every correlation value.
#[derive(Debug)]
pub(crate) struct Groups {
    /// The outer side of each equality, evaluated in the enclosing row.
    outer_keys: Vec<Expr>,
    /// The type family of each inner key's values (None while no group has a value).
    families: Vec<Option<u8>>,
    /// The item's value per group, by the [`group_key`] of the inner keys' values.
    values: HashMap<String, Value>,
    /// The item over no rows.
    empty: Value,
}

impl GroupedSubquery {
    /// The subquery's value for the row in `env`; None where it must run for the row.
    pub(crate) fn value(
        &self,
        run: &mut Run<'_>,
        env: &Env<'_>,
    ) -> Result<Option<Value>, SqlError> {
        match self {
            GroupedSubquery::Groups(g) => g.value(run, env),
            GroupedSubquery::Seek(d) => d.value(run, env),
        }
    }
}

impl Decorrelated {
    /// The subquery's value for the row in `env`; None where the conjuncts no longer seek
    /// (a probe that does not convert), left to the per-row run to report.
    fn value(&self, run: &mut Run<'_>, env: &Env<'_>) -> Result<Option<Value>, SqlError> {
        let cols = &self.cols;
        let conjuncts: Vec<&Expr> = self.conjuncts.iter().collect();
        let column = |parts: &[Ident]| find_column(cols, parts).ok().flatten();
        let probe = |e: &Expr| names_none(cols, e);
        let t = &self.table;
        let path = access::choose(
            &t.def,
            t.wanted.as_deref(),
            &conjuncts,
            &column,
            &probe,
            self.stats.as_deref(),
            &|_| None,
        );
        if path.is_scan() {
            return Ok(None);
        }
        if let Some(big) = self.count_rows {
            if let Some(n) = run.count_seek(t, &path, &conjuncts, env)? {
                // As `aggregate::Spec::finish` gives COUNT's value.
                return Ok(Some(if big {
                    Value::BigInt(i64::try_from(n).unwrap_or(i64::MAX))
                } else {
                    Value::Int(i32::try_from(n).unwrap_or(i32::MAX))
                }));
            }
        }
        let keep = RowFilter { cols, exprs: &conjuncts, outer: Some(env) };
        let Some(rows) = run.read_path(t, &path, env, usize::MAX, Some(keep))? else {
            return Ok(None);
        };
        aggregate_rows(run, &self.item, cols, rows.iter().map(Vec::as_slice), Some(env)).map(Some)
    }
}

/// Whether `e` names no column of `cols` (a probe of the enclosing row, or a constant).
fn names_none(cols: &[Col], e: &Expr) -> bool {
    if let ExprKind::Column(parts) = &e.kind {
        return matches!(find_column(cols, parts), Ok(None));
    }
    let mut none = true;
    visit_children(e, &mut |c| none &= names_none(cols, c));
    none
}

impl Groups {
    /// The subquery's value for the row in `env`; None where it must run for the row.
    fn value(&self, run: &mut Run<'_>, env: &Env<'_>) -> Result<Option<Value>, SqlError> {
        let mut probe = Vec::with_capacity(self.outer_keys.len());
        for (e, family) in self.outer_keys.iter().zip(&self.families) {
            let v = run.eval(e, env)?;
            if v.is_null() {
                return Ok(Some(self.empty.clone()));
            }
            if family.is_some_and(|f| f != value_family(&v)) {
                return Ok(None);
            }
            probe.push(v);
        }
        Ok(Some(self.values.get(&group_key(&probe)).unwrap_or(&self.empty).clone()))
    }
}

fn value_family(v: &Value) -> u8 {
    super::family(scalar::type_of(v))
}

/// Whether every column `e` names, aggregates' arguments included, is one of `flat`'s,
/// and it holds no subquery or window: an item the grouped SELECT can compute.
fn names_only(flat: &Flat<'_>, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Column(parts) => matches!(flat.leaf_of(parts), Some(Some(_))),
        ExprKind::Subquery(_)
        | ExprKind::Exists(_)
        | ExprKind::InSubquery { .. }
        | ExprKind::Quantified { .. }
        | ExprKind::NextValueFor(_) => false,
        ExprKind::Function(f) if f.over.is_some() => false,
        _ => {
            let mut all = true;
            visit_children(e, &mut |c| all &= names_only(flat, c));
            all
        }
    }
}

fn expr(kind: ExprKind) -> Expr {
    Expr { kind, span: Span::default() }
}

/// The conjunction of `parts` (None for none).
fn conjunction(parts: &[&Expr]) -> Option<Expr> {
    parts.iter().map(|&p| p.clone()).reduce(|a, b| {
        expr(ExprKind::Binary { op: BinaryOp::And, left: Box::new(a), right: Box::new(b) })
    })
}

/// `1 = 0`.
fn never() -> Expr {
    let one = expr(ExprKind::Literal(Literal::Integer("1".into())));
    let zero = expr(ExprKind::Literal(Literal::Integer("0".into())));
    expr(ExprKind::Binary { op: BinaryOp::Eq, left: Box::new(one), right: Box::new(zero) })
}

/// The per-row seek of `sel`, a subquery of one table without hints whose item is one
/// aggregate call, prepared from its flattened sources `inner`; None for any other.
fn prepared_seek(
    sel: &Select,
    inner: &Flat<'_>,
    item: &Expr,
    own: &[&Expr],
    keys: &[&Expr],
) -> Option<Decorrelated> {
    let ([TableSource::Table { hints, .. }], [leaf]) =
        (sel.from.as_slice(), inner.leaves.as_slice())
    else {
        return None;
    };
    let (true, ExprKind::Function(f), Input::Table(t)) =
        (hints.is_empty(), &item.kind, &leaf.input)
    else {
        return None;
    };
    if !is_aggregate_call(f) || f.over.is_some() {
        return None;
    }
    let count_rows = match (f.name.name.value.to_ascii_uppercase().as_str(), &f.args) {
        ("COUNT", FunctionArgs::Star) => Some(false),
        ("COUNT_BIG", FunctionArgs::Star) => Some(true),
        _ => None,
    };
    Some(Decorrelated {
        table: clone_ref(t),
        cols: leaf.read_cols().to_vec(),
        stats: leaf.stats.clone(),
        conjuncts: own.iter().chain(keys).map(|&e| e.clone()).collect(),
        item: item.clone(),
        count_rows,
    })
}

/// `q` as a single SELECT with one aggregating item, or None.
fn aggregate_select(q: &Query) -> Option<&Select> {
    let sel = super::lone_select(q)?;
    let [SelectItem::Expr { expr: item, .. }] = sel.items.as_slice() else { return None };
    (has_aggregate(item)
        && !sel.from.is_empty()
        && sel.top.is_none()
        && !sel.distinct
        && sel.into.is_none()
        && sel.group_by.is_empty()
        && sel.grouping_sets.is_none()
        && sel.having.is_none())
    .then_some(sel)
}

impl Run<'_> {
    /// Subquery `q`, evaluated per row in `env`'s scope so far, computed for every
    /// correlation value at once, where the module's conditions hold; None otherwise.
    pub(crate) fn group_correlated(&mut self, q: &Query) -> Option<GroupedSubquery> {
        let sel = aggregate_select(q)?;
        let SelectItem::Expr { expr: item, alias } = &sel.items[0] else { return None };
        // The subquery's sources, to tell its names from the enclosing ones. One that needs
        // the enclosing row (a correlated derived table) fails here and stays per row.
        let mut inner = Flat::default();
        let mut on = Vec::new();
        // Only the columns the subquery names are decoded (an index may cover them).
        let demand = Demand::of_semi_join(sel, true);
        for src in &sel.from {
            self.flatten(src, &mut inner, &mut on, &[], None, demand.as_ref(), &Reduced::default())
                .ok()?;
        }
        if !on.iter().all(|&c| inner.owns_all_columns(c)) || !names_only(&inner, item) {
            return None;
        }
        let mut parts = Vec::new();
        if let Some(w) = &sel.where_clause {
            conjuncts(w, &mut parts);
        }
        let mut own: Vec<&Expr> = Vec::new();
        let mut keys: Vec<(&Expr, &Expr)> = Vec::new();
        let mut key_conjuncts: Vec<&Expr> = Vec::new();
        let outer_side = |e: &Expr| inner.leaves_of(e) == Some(0) && stable(e) && has_column(e);
        for p in parts {
            if inner.owns_all_columns(p) {
                own.push(p);
                continue;
            }
            let ExprKind::Binary { op: BinaryOp::Eq, left, right } = &p.kind else { return None };
            if inner.owns_all_columns(left) && outer_side(right) {
                keys.push((right, left));
            } else if inner.owns_all_columns(right) && outer_side(left) {
                keys.push((left, right));
            } else {
                return None;
            }
            key_conjuncts.push(p);
        }
        if keys.is_empty() {
            return None;
        }
        if self.seeks_per_row(&mut inner, &own, &key_conjuncts) {
            return prepared_seek(sel, &inner, item, &own, &key_conjuncts)
                .map(GroupedSubquery::Seek);
        }
        let mut grouped = sel.clone();
        grouped.items = keys
            .iter()
            .map(|(_, k)| SelectItem::Expr { expr: (*k).clone(), alias: None })
            .chain(std::iter::once(SelectItem::Expr { expr: item.clone(), alias: alias.clone() }))
            .collect();
        grouped.where_clause = conjunction(&own);
        grouped.group_by = keys.iter().map(|(_, k)| (*k).clone()).collect();
        let n_keys = keys.len();
        let mut empty = sel.clone();
        empty.where_clause = Some(never());
        let query = |body: Select| Query { body: QueryBody::Select(Box::new(body)), ..q.clone() };
        let rows = self.query(&query(grouped), None).ok()?;
        // Groups are looked up by `group_key`, which tells apart what the default collation
        // does: a key of another collation is run per row.
        let collated =
            |c: &crate::exec::eval::Col| c.collation.is_some_and(|c| !c.order().is_default());
        if rows.cols.iter().take(n_keys).any(collated) {
            return None;
        }
        let empty = self.query(&query(empty), None).ok()?;
        let empty = empty.rows.first().and_then(|r| r.first()).cloned().unwrap_or(Value::Null);
        let n = keys.len();
        let mut families = vec![None; n];
        let mut values = HashMap::with_capacity(rows.rows.len());
        for row in &rows.rows {
            for (f, v) in families.iter_mut().zip(&row[..n]) {
                if f.is_none() && !v.is_null() {
                    *f = Some(value_family(v));
                }
            }
            values.insert(group_key(&row[..n]), row[n].clone());
        }
        Some(GroupedSubquery::Groups(Groups {
            outer_keys: keys.iter().map(|(o, _)| (*o).clone()).collect(),
            families,
            values,
            empty,
        }))
    }

    /// Whether a per-row run can seek one of the subquery's tables by the key equalities
    /// (with that table's own conjuncts): then few rows are read per outer row.
    fn seeks_per_row(&mut self, inner: &mut Flat<'_>, own: &[&Expr], keys: &[&Expr]) -> bool {
        for i in 0..inner.leaves.len() {
            let Input::Table(t) = &inner.leaves[i].input else { continue };
            let t = super::clone_ref(t);
            if inner.leaves[i].stats.is_none() {
                inner.leaves[i].stats = self.table_stats(&t);
            }
            let bit = 1u64 << i;
            let inner = &*inner;
            let on_leaf = |e: &&&Expr| inner.leaves_of(e).is_some_and(|m| m & bit != 0);
            let all: Vec<&Expr> = own.iter().chain(keys).filter(on_leaf).copied().collect();
            let column = |parts: &[crate::ast::Ident]| match inner.leaf_of(parts) {
                Some(Some(l)) if l == i => {
                    find_column(inner.leaves[i].read_cols(), parts).ok().flatten()
                }
                _ => None,
            };
            let probe = |e: &Expr| inner.leaves_of(e) == Some(0);
            let stats = inner.leaves[i].stats.as_deref();
            let known = |e: &Expr| inner.constant(e);
            let path =
                access::choose(&t.def, t.wanted.as_deref(), &all, &column, &probe, stats, &known);
            if !path.is_scan() && path.any_probe(&mut has_column) {
                return true;
            }
        }
        false
    }
}
