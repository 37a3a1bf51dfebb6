//! Semi- and anti-joins: `EXISTS`, `NOT EXISTS` and `IN` with a subquery in the WHERE
//! clause, run once for the whole FROM clause instead of once per row.
//!
//! `WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)` evaluated per
//! customer runs the subquery 10,000 times. When the subquery is a plain SELECT whose WHERE
//! clause is made of
//!
//! * conjuncts on its own columns only (they filter its rows once), and
//! * equalities `inner expression = outer expression`, where the outer side names only
//!   columns of this FROM clause's sources and none of the subquery's,
//!
//! it is *decorrelated*: its rows are computed once, hashed on the inner sides of the
//! equalities, and each row of the FROM clause is kept if some row matches (EXISTS, IN) or
//! if none does (NOT EXISTS). `x IN (SELECT y ...)` adds `y = x` to the equalities. A match
//! is checked by comparing the values, so the hash only narrows the candidates; a NULL key
//! matches nothing, which is what EXISTS's equality gives (NOT EXISTS keeps such a row).
//! Where the key is one integer column on each side, the outer rows' keys may be hashed
//! instead, the subquery's rows streamed past them (`right`). `NOT IN` is rewritten only
//! that way, and only uncorrelated: its NULL rules differ (see `right`); otherwise its
//! uncorrelated form runs once (`subquery`).
//!
//! Any other conjunct of its WHERE clause that names outer columns (`l3.l_suppkey <>
//! l1.l_suppkey`, TPC-H Q21's) is checked on each pair whose keys are equal, with the
//! subquery's names resolved first as they are in the subquery; at least one equality is
//! needed. A subquery with grouping, aggregates, TOP, OFFSET, CTEs or set operators, or a
//! conjunct holding a subquery, is left to be evaluated per row as before.

mod right;
mod seek;

use walden_engine::types::{SqlType, Value};

use super::Reduced;
use super::{
    clone_ref, conjuncts, integer_key, stable, Flat, HashMatch, Input, FILTER_SELECTIVITY,
};
use crate::ast::{BinaryOp, Expr, ExprKind, Query, SelectItem, TableSource, UnaryOp};
use crate::exec::bind::demand::Demand;
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::find_column;
use crate::exec::eval::{compare_collated, label_in, resolve_collation, Col, Env};
use crate::exec::execute::query::{visit_children, Rows, TableRef};
use crate::exec::execute::recursive::has_aggregate;
use crate::exec::plan::access::{self, RowFilter, RowSink};
use crate::exec::plan::showplan::PlanNode;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A subquery's columns, and the keys of its rows one after another (`KeySink`).
type Keys = (Vec<Col>, Vec<Value>);

/// A WHERE conjunct run as a hash semi- or anti-join.
pub(super) struct SemiJoin<'e> {
    /// NOT EXISTS: keep the rows with no match.
    anti: bool,
    /// `x NOT IN (subquery)` as written: an anti-join with NOT IN's NULL rules, run only
    /// as a right hash join (`right`), else by evaluating this conjunct per row.
    not_in: Option<&'e Expr>,
    /// The one key is an integer column on each side (`right` may hash the outer rows).
    int_key: bool,
    /// The subquery's sources.
    from: &'e [TableSource],
    /// Its sources, flattened (to resolve its names, and to seek a table source).
    inner: Flat<'e>,
    /// Its conjuncts on its own columns.
    inner_filter: Vec<&'e Expr>,
    /// The columns of its tables it reads.
    demand: Option<Demand>,
    /// (outer side, inner side) of each equality.
    keys: Vec<(&'e Expr, &'e Expr)>,
    /// The equalities as written (none for IN's member test), for a seek per outer row.
    key_conjuncts: Vec<&'e Expr>,
    /// Its other conjuncts that name outer columns (`l3.l_suppkey <> l1.l_suppkey`), checked
    /// on each pair whose keys are equal, the inner row's names first.
    residual: Vec<&'e Expr>,
    /// Its columns and keys, once read by `stream_semi_keys` for a choice that then did
    /// not use them (`seek_by_semi_join`), for the hash to use rather than read again.
    streamed: Option<Keys>,
}

/// Whether an expression names a column (for a probe: of the outer row, not a constant).
pub(super) fn has_column(e: &Expr) -> bool {
    if let ExprKind::Column(_) = &e.kind {
        return true;
    }
    let mut found = false;
    visit_children(e, &mut |c| found |= has_column(c));
    found
}

impl Run<'_> {
    /// `conjunct` of a WHERE clause over `flat` as a semi- or anti-join, if it is one that
    /// can be decorrelated (see the module's documentation); the outer side's leaves too.
    pub(super) fn semi_join<'e>(
        &mut self,
        flat: &Flat<'e>,
        conjunct: &'e Expr,
        outer: Option<&Env<'_>>,
    ) -> Option<(SemiJoin<'e>, u64)> {
        let (query, anti, member) = match &conjunct.kind {
            ExprKind::Exists(q) => (q, false, None),
            ExprKind::Unary { op: UnaryOp::Not, operand } => match &operand.kind {
                ExprKind::Exists(q) => (q, true, None),
                _ => return None,
            },
            ExprKind::InSubquery { expr, negated: false, subquery } => {
                (subquery, false, Some(&**expr))
            }
            ExprKind::InSubquery { expr, negated: true, subquery } => {
                (subquery, true, Some(&**expr))
            }
            _ => return None,
        };
        let not_in = matches!(conjunct.kind, ExprKind::InSubquery { negated: true, .. });
        let sel = plain_select(query)?;
        if sel.from.is_empty() {
            return None;
        }
        // The subquery's sources, to tell its names from the outer ones. Views and derived
        // tables among them are computed here; a failure leaves the conjunct to be
        // evaluated per row, which reports it.
        let mut inner = Flat::default();
        let mut on = Vec::new();
        let demand = Demand::of_semi_join(sel, member.is_some());
        for src in &sel.from {
            self.flatten(
                src,
                &mut inner,
                &mut on,
                &[],
                outer,
                demand.as_ref(),
                &Reduced::default(),
            )
            .ok()?;
        }
        // The subquery's FROM clause is read as written (`plan_pushed`), its ON conditions
        // with it: one that names the enclosing row can only be checked per row.
        if !on.iter().all(|&c| inner.owns_all_columns(c)) {
            return None;
        }
        let mut parts = on;
        if let Some(w) = &sel.where_clause {
            conjuncts(w, &mut parts);
        }
        let mut keys = Vec::new();
        let mut key_conjuncts = Vec::new();
        let mut inner_filter = Vec::new();
        let mut residual = Vec::new();
        let outer_side =
            |e: &Expr| inner.leaves_of(e) == Some(0) && flat.owns_all_columns(e) && stable(e);
        for p in parts {
            if inner.owns_all_columns(p) {
                inner_filter.push(p);
                continue;
            }
            if let ExprKind::Binary { op: BinaryOp::Eq, left, right } = &p.kind {
                if inner.owns_all_columns(left) && outer_side(right) {
                    keys.push((&**right, &**left));
                    key_conjuncts.push(p);
                    continue;
                } else if inner.owns_all_columns(right) && outer_side(left) {
                    keys.push((&**left, &**right));
                    key_conjuncts.push(p);
                    continue;
                }
            }
            // Any other conjunct is checked on the pairs; it needs the outer leaves it may
            // name (a name of both scopes counts for both: only the mask grows).
            if !stable(p) || inner.leaves_of(p).is_none() {
                return None;
            }
            residual.push(p);
        }
        if let Some(x) = member {
            let [SelectItem::Expr { expr: item, .. }] = sel.items.as_slice() else { return None };
            if !inner.owns_all_columns(item) || !flat.owns_all_columns(x) || !stable(x) {
                return None;
            }
            keys.push((x, item));
        }
        if keys.is_empty() {
            return None;
        }
        let integer = |e: &Expr, f: &Flat<'_>| {
            let ExprKind::Column(parts) = &e.kind else { return false };
            let Some(Some(l)) = f.leaf_of(parts) else { return false };
            let cols = &f.leaves[l].cols;
            let Some(c) = find_column(cols, parts).ok().flatten() else { return false };
            matches!(
                cols[c].ty,
                SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt
            )
        };
        let int_key = match keys.as_slice() {
            [(o, i)] => integer(o, flat) && integer(i, &inner),
            _ => false,
        };
        // NOT IN's NULL rules hold for the subquery's rows as a whole: correlated, they
        // would hold per outer row, which the right hash join does not keep apart.
        let one_table =
            matches!(inner.leaves.as_slice(), [l] if matches!(l.input, Input::Table(_)));
        if not_in && !(int_key && one_table && residual.is_empty() && key_conjuncts.is_empty()) {
            return None;
        }
        let mut mask = 0;
        for o in keys.iter().map(|(o, _)| *o).chain(residual.iter().copied()) {
            mask |= flat.leaves_of(o)?;
        }
        let semi = SemiJoin {
            anti,
            not_in: not_in.then_some(conjunct),
            int_key,
            from: &sel.from,
            inner,
            inner_filter,
            demand,
            keys,
            key_conjuncts,
            residual,
            streamed: None,
        };
        Some((semi, mask))
    }

    /// The rows of `rows` (of columns `cols`) that `semi` keeps: by a seek per row where
    /// the subquery is one table that the equalities can seek and that costs less than
    /// reading the table once, else by a hash of the subquery's rows.
    pub(super) fn apply_semi_join(
        &mut self,
        semi: &mut SemiJoin<'_>,
        cols: &[Col],
        rows: Vec<Vec<Value>>,
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        if let Some(keep) = self.seek_semi_keep(semi, cols, &rows, outer, rows.len() as f64)? {
            return Ok(rows.into_iter().zip(keep).filter_map(|(r, k)| k.then_some(r)).collect());
        }
        if let Some(keep) = self.right_semi_join(semi, cols, &rows, outer)? {
            return Ok(rows.into_iter().zip(keep).filter_map(|(r, k)| k.then_some(r)).collect());
        }
        if let Some(conjunct) = semi.not_in {
            return self.filter_rows(cols, rows, &[conjunct], outer);
        }
        let streamed = match semi.streamed.take() {
            Some(s) => Some(s),
            None => self.stream_semi_keys(semi, outer)?,
        };
        let (inner_cols, inner_rows, inner_keys) = match streamed {
            Some((cols, keys)) => (cols, Vec::new(), keys),
            None => {
                let (Rows { cols, rows }, _) = self.plan_pushed(
                    semi.from,
                    None,
                    &semi.inner_filter,
                    outer,
                    None,
                    semi.demand.as_ref(),
                )?;
                let prepared: Vec<Scalar<'_>> =
                    semi.keys.iter().map(|(_, e)| Scalar::prepare(e, &cols)).collect();
                let mut keys = Vec::with_capacity(rows.len() * prepared.len());
                for (n, row) in rows.iter().enumerate() {
                    self.row_interruption_point(n)?;
                    let env = Env::new(&cols, row, outer);
                    for p in &prepared {
                        keys.push(self.eval_prepared(p, &env)?);
                    }
                }
                (cols, rows, keys)
            }
        };
        // Only whether some row matches counts: without residual conjuncts to check on
        // each, one row per integer key will do.
        let width = semi.keys.len();
        let matcher = HashMatch::from_keys(&inner_keys, width, semi.residual.is_empty());
        // Each key's text compares by its sides' collations.
        let mut collations = Vec::with_capacity(semi.keys.len());
        for (o, e) in &semi.keys {
            let (a, b) = (label_in(o, cols)?, label_in(e, &inner_cols)?);
            collations.push(resolve_collation(a, b, "equal to")?);
        }
        let mut kept = Vec::with_capacity(rows.len());
        let mut probe = Vec::with_capacity(semi.keys.len());
        let probes = HashMatch::probes(&semi.keys, cols);
        for (n, row) in rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            let env = Env::new(cols, &row, outer);
            probe.clear();
            for p in &probes {
                probe.push(self.eval_prepared(p, &env)?);
            }
            let mut matched = false;
            for &i in matcher.lookup(&probe)? {
                let mut all = true;
                let key = &inner_keys[i * width..(i + 1) * width];
                for ((w, v), c) in key.iter().zip(&probe).zip(&collations) {
                    if compare_collated(v, w, *c)? != Some(std::cmp::Ordering::Equal) {
                        all = false;
                        break;
                    }
                }
                if all
                    && (semi.residual.is_empty()
                        || self.all_hold_in(
                            &semi.residual,
                            &Env::new(&inner_cols, &inner_rows[i], Some(&env)),
                        )?)
                {
                    matched = true;
                    break;
                }
            }
            if matched != semi.anti {
                kept.push(row);
            }
        }
        Ok(kept)
    }
}

impl Run<'_> {
    /// The rows of `flat`, a FROM clause of one table, that `semi` keeps, by a seek of the
    /// table per key of the subquery's rows, where that is cheaper than reading the table:
    /// `WHERE i.item_id IN (SELECT l.item_id FROM order_lines l WHERE l.order_id BETWEEN
    /// ...)` reads the few hundred items it names rather than every item, as PostgreSQL's
    /// and SQL Server's plans drive the table's index from the subquery. None where this
    /// does not apply: the semi-join (not an anti-join) must have one key, an integer
    /// column of the subquery's one table equal to the column that leads the table's
    /// clustered index, nothing to check on the pairs, and the table would otherwise be
    /// scanned whole. The keys are sought in ascending order, each once, so the rows come
    /// in the clustered index's order, as the scan would give them.
    pub(super) fn seek_by_semi_join(
        &mut self,
        flat: &Flat<'_>,
        semi: &mut SemiJoin<'_>,
        outer: Option<&Env<'_>>,
    ) -> Result<Option<Vec<Vec<Value>>>, SqlError> {
        let ([(x, item)], false, true, Input::Table(t)) =
            (semi.keys.as_slice(), semi.anti, semi.residual.is_empty(), &flat.leaves[0].input)
        else {
            return Ok(None);
        };
        let (x, item) = (*x, *item);
        let leaf_cols = flat.leaves[0].read_cols();
        let ExprKind::Column(parts) = &x.kind else { return Ok(None) };
        let Some(c) = find_column(leaf_cols, parts).ok().flatten() else { return Ok(None) };
        let leads = t.def.index(1).and_then(|i| i.columns.first()) == Some(&c);
        if !leads || flat.leaves_of(item) != Some(0) {
            return Ok(None);
        }
        let t = clone_ref(t);
        let local: Vec<&Expr> = flat
            .conjuncts
            .iter()
            .filter(|c| !c.semi && c.leaves == Some(1))
            .map(|c| c.expr)
            .collect();
        if !self.path(flat, &t, &local, 0, 0).is_scan() {
            return Ok(None);
        }
        // Reading the subquery's keys must cost less than the scan it replaces, and a seek
        // of the subquery per row of the table (`semi_seek`, TPC-H Q4's) must not be the
        // cheaper way: both by estimate, before anything is read.
        let Input::Table(inner_t) = &semi.inner.leaves[0].input else { return Ok(None) };
        let inner_t = clone_ref(inner_t);
        if semi.inner.leaves[0].stats.is_none() {
            semi.inner.leaves[0].stats = self.table_stats(&inner_t);
        }
        let table_rows = self.table_stats(&t).map_or(access::TABLE_ROWS, |s| s.rows);
        let kept = table_rows * FILTER_SELECTIVITY.powi(local.len() as i32);
        if inner_read(semi, &inner_t).rows >= table_rows || self.semi_seek(semi, kept).is_some() {
            return Ok(None);
        }
        if semi.streamed.is_none() {
            semi.streamed = self.stream_semi_keys(semi, outer)?;
        }
        let Some((inner_cols, keys)) = &semi.streamed else { return Ok(None) };
        // The key's column among the subquery's, to hold each key for the seek's probe.
        let ExprKind::Column(item_parts) = &item.kind else { return Ok(None) };
        let Some(p) = find_column(inner_cols, item_parts).ok().flatten() else { return Ok(None) };
        let ints: Option<Vec<(i64, usize)>> =
            keys.iter().enumerate().map(|(i, v)| integer_key(v).map(|k| (k, i))).collect();
        let Some(mut ints) = ints else { return Ok(None) };
        ints.sort_unstable();
        ints.dedup_by_key(|k| k.0);
        let eq = Expr {
            kind: ExprKind::Binary {
                op: BinaryOp::Eq,
                left: Box::new(x.clone()),
                right: Box::new(item.clone()),
            },
            span: x.span,
        };
        let mut sought = local.clone();
        sought.push(&eq);
        let path = self.path(flat, &t, &sought, 0, 0);
        let by_key = path.any_probe(&mut |e| flat.leaves_of(e) == Some(0) && has_column(e));
        if path.is_scan() || !by_key || ints.len() as f64 * path.cost >= table_rows {
            return Ok(None);
        }
        let mut probe_row = vec![Value::Null; inner_cols.len()];
        let mut rows = Vec::new();
        for (n, &(_, i)) in ints.iter().enumerate() {
            self.row_interruption_point(n)?;
            probe_row[p] = keys[i].clone();
            let env = Env::new(inner_cols, &probe_row, outer);
            let keep = RowFilter { cols: leaf_cols, exprs: &local, outer };
            // A key that does not convert to the column's type: the hash decides instead.
            let Some(found) = self.read_path(&t, &path, &env, usize::MAX, Some(keep))? else {
                return Ok(None);
            };
            // A seek reads a superset: each row's column must equal the key.
            for row in found {
                if scalar::compare(&row[c], &keys[i])? == Some(std::cmp::Ordering::Equal) {
                    rows.push(row);
                }
            }
        }
        Ok(Some(rows))
    }
}

/// How the one table of `semi`'s subquery, `t`, is read for all its rows that pass its
/// own conjuncts.
fn inner_read<'e>(semi: &SemiJoin<'e>, t: &TableRef) -> access::AccessPath<'e> {
    let inner = &semi.inner;
    let cols = inner.leaves[0].read_cols();
    let column = |parts: &[crate::ast::Ident]| match inner.leaf_of(parts) {
        Some(Some(0)) => find_column(cols, parts).ok().flatten(),
        _ => None,
    };
    let probe = |e: &Expr| inner.leaves_of(e) == Some(0);
    access::choose(
        &t.def,
        t.wanted.as_deref(),
        &semi.inner_filter,
        &column,
        &probe,
        inner.leaves[0].stats.as_deref(),
        &|e| inner.constant(e),
    )
}

/// The keys of the rows a read gives it (each row's values of `prepared`), without the
/// rows; a row with a NULL key matches nothing and is dropped.
struct KeySink<'a, 'o> {
    prepared: Vec<Scalar<'a>>,
    cols: &'a [Col],
    outer: Option<&'o Env<'o>>,
    /// The keys one after another, each `prepared.len()` values: one allocation, not
    /// one per row.
    keys: Vec<Value>,
}

impl RowSink for KeySink<'_, '_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        let env = Env::new(self.cols, &row, self.outer);
        let start = self.keys.len();
        for p in &self.prepared {
            let v = run.eval_prepared(p, &env)?;
            if v.is_null() {
                self.keys.truncate(start);
                return Ok(true);
            }
            self.keys.push(v);
        }
        Ok(true)
    }
}

impl Run<'_> {
    /// For a hash semi-join with no residual conjuncts whose subquery is one table: its
    /// columns and the keys of its rows that pass its own conjuncts (one after another,
    /// as `KeySink` holds them), read straight into
    /// the keys (`KeySink`) so that its rows are never held (`NOT EXISTS` over a
    /// 100,000-row table keeps 100,000 keys, not rows with their locators). None for any
    /// other subquery, which is computed as a FROM clause.
    fn stream_semi_keys(
        &mut self,
        semi: &SemiJoin<'_>,
        outer: Option<&Env<'_>>,
    ) -> Result<Option<Keys>, SqlError> {
        let inner = &semi.inner;
        let (true, 1, Input::Table(t)) =
            (semi.residual.is_empty(), inner.leaves.len(), &inner.leaves[0].input)
        else {
            return Ok(None);
        };
        let t = clone_ref(t);
        let cols = inner.leaves[0].read_cols().to_vec();
        let path = inner_read(semi, &t);
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        let mut sink = KeySink {
            prepared: semi.keys.iter().map(|(_, e)| Scalar::prepare(e, &cols)).collect(),
            cols: &cols,
            outer,
            keys: Vec::new(),
        };
        let keep = RowFilter { cols: &cols, exprs: &semi.inner_filter, outer };
        if !self.read_path_into(&t, &path, &env, Some(keep), &mut sink)? {
            // A probe that does not convert: the table is scanned, as `read_leaf` does.
            let keep = RowFilter { cols: &cols, exprs: &semi.inner_filter, outer };
            self.read_path_into(&t, &access::AccessPath::scan(), &env, Some(keep), &mut sink)?;
        }
        let keys = sink.keys;
        Ok(Some((cols, keys)))
    }

    /// The table, path and conjuncts of a seek per row for `semi` with `rows` rows to keep
    /// or drop, where the subquery is one table whose index the equalities can seek and
    /// seeking costs less than reading the table once; None otherwise.
    fn semi_seek<'e>(
        &mut self,
        semi: &mut SemiJoin<'e>,
        rows: f64,
    ) -> Option<(TableRef, access::AccessPath<'e>, Vec<&'e Expr>)> {
        // IN's member test is no conjunct to check a found row with: IN is hashed.
        let member = semi.keys.len() != semi.key_conjuncts.len();
        let (1, false, false) = (semi.inner.leaves.len(), semi.key_conjuncts.is_empty(), member)
        else {
            return None;
        };
        let Input::Table(t) = &semi.inner.leaves[0].input else { return None };
        let t = clone_ref(t);
        if semi.inner.leaves[0].stats.is_none() {
            semi.inner.leaves[0].stats = self.table_stats(&t);
        }
        let mut all = semi.inner_filter.clone();
        all.extend(semi.key_conjuncts.iter().copied());
        all.extend(semi.residual.iter().copied());
        let inner = &semi.inner;
        let path = {
            let column = |parts: &[crate::ast::Ident]| match inner.leaf_of(parts) {
                Some(Some(0)) => find_column(inner.leaves[0].read_cols(), parts).ok().flatten(),
                _ => None,
            };
            let probe = |e: &Expr| inner.leaves_of(e) == Some(0);
            access::choose(
                &t.def,
                t.wanted.as_deref(),
                &all,
                &column,
                &probe,
                inner.leaves[0].stats.as_deref(),
                &|e| inner.constant(e),
            )
        };
        let table_rows = inner.leaves[0].stats.as_ref().map_or(access::TABLE_ROWS, |s| s.rows);
        let seeks_outer = path.any_probe(&mut has_column);
        (!path.is_scan() && seeks_outer && path.cost * rows <= table_rows).then_some((t, path, all))
    }
}

/// The SELECT of a subquery that is one plain SELECT: no CTE, set operator, ORDER BY,
/// OFFSET, FOR JSON/XML, TOP, grouping or aggregate (an aggregate makes EXISTS always true).
fn plain_select(q: &Query) -> Option<&crate::ast::Select> {
    let sel = super::lone_select(q)?;
    let aggregates = sel.items.iter().any(|i| match i {
        SelectItem::Expr { expr, .. } => has_aggregate(expr),
        _ => false,
    });
    (sel.top.is_none()
        && sel.group_by.is_empty()
        && sel.having.is_none()
        && sel.into.is_none()
        && !aggregates)
        .then_some(sel)
}

impl Run<'_> {
    /// `apply_semi_join`, explained: a seek per row where the executor would seek with
    /// `rows` estimated rows to keep, a hash of the subquery's rows otherwise.
    pub(super) fn explain_semi_join(
        &mut self,
        semi: &mut SemiJoin<'_>,
        (left, rows): (PlanNode, f64),
        outer: Option<&Env<'_>>,
    ) -> Result<(PlanNode, f64), SqlError> {
        let logical = if semi.anti { "Left Anti Semi Join" } else { "Left Semi Join" };
        // Each outer row is kept or not: a guess of half of them either way.
        let kept = (rows / 2.0).max(1.0);
        if let Some((t, path, all)) = self.semi_seek(semi, rows) {
            let right = path.plan(&t, &all);
            let node = PlanNode::join("Nested Loops", logical, String::new(), kept, left, right);
            return Ok((node, kept));
        }
        if semi.right_hashed() {
            return Ok((self.explain_right_semi_join(semi, left, kept, outer)?, kept));
        }
        let inner =
            self.explain_pushed(semi.from, None, &semi.inner_filter, outer, semi.demand.as_ref())?;
        let probe: Vec<String> = semi.keys.iter().map(|(o, _)| o.to_string()).collect();
        let build: Vec<String> = semi.keys.iter().map(|(_, i)| i.to_string()).collect();
        let args = format!("HASH:({})=({})", build.join(", "), probe.join(", "));
        let node = PlanNode::join("Hash Match", logical, args, kept, inner.node, left);
        Ok((node, kept))
    }
}
