//! One `SELECT`: its FROM clause planned and read, `WHERE`, grouping and `HAVING`, window
//! functions, the select list (with `*` and aliases), `DISTINCT`, `ORDER BY` and `TOP`, in
//! that order; a row goal lets a plain `TOP (n)` stop reading early, and a single source may
//! stream to the output.

use std::borrow::Cow;
use std::cmp::Ordering;

use walden_engine::types::{Len, SqlType, Value};

use crate::ast::{Expr, ExprKind, OffsetFetch, OrderByItem, Select, SelectItem};
use crate::exec::bind::demand::Demand;
use crate::exec::bind::prepared::{Condition, Projection};
use crate::exec::bind::static_type::first_refused;
use crate::exec::eval::{find_column, label_in, Col, Env};
use crate::exec::execute::aggregate::Grouping;
use crate::exec::execute::external_sort::ExternalSort;
use crate::exec::scalar;
use crate::exec::scalar::collation;
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::grouping::{
    collect_aggregates, collect_windows, grouped_columns, grouping_sets, select_aggregates,
    select_windows,
};
use super::numbered::numbers_in_arrival_order;
use super::order::{
    compare_keys, order_collations, sort_by_keys, sorts_by_source_column, KeySources,
};
use super::set_operations::{unify_column, ValueType};
use super::Rows;

/// The fewest rows a top-N sort gathers before it sorts and cuts them to N.
pub(crate) const TOP_N_ROUND: usize = 512;

/// A SELECT's output columns (see [`Run::select_list`]).
pub(crate) struct SelectList<'s> {
    pub(crate) out_cols: Vec<Col>,
    /// Each output column's expression; None for a column `*` copies.
    pub(crate) exprs: Vec<Option<&'s Expr>>,
    /// The source column each `*` column copies.
    pub(crate) stars: Vec<Option<usize>>,
    /// Whether the list assigns variables (`SELECT @v = ...`) rather than returning rows.
    pub(crate) assigns: bool,
}

/// Ok if every column reference of a select list's `exprs` (outside their subqueries) names
/// a column of `env`'s scopes; else SQL Server's error for the first that does not (207,
/// 4104, 209).
pub(crate) fn bound(exprs: &[Option<&Expr>], env: &Env<'_>) -> Result<(), SqlError> {
    let refused =
        exprs.iter().flatten().find_map(|e| first_refused(e, &|parts| env.column(parts).err()));
    refused.map_or(Ok(()), Err)
}

pub(crate) fn expr_name(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Column(parts) => parts.last().map(|p| p.value.clone()).unwrap_or_default(),
        _ => String::new(),
    }
}

/// The source column each output column copies, when every one is a `*` column or names a
/// column of the source row: the row is then projected by copying, which is what evaluating
/// each name would do, without finding each name again per row. None otherwise.
fn copied_columns(
    exprs: &[Option<&Expr>],
    stars: &[Option<usize>],
    cols: &[Col],
) -> Option<Vec<usize>> {
    exprs
        .iter()
        .zip(stars)
        .map(|(e, star)| match (e, star) {
            (Some(e), _) => match &e.kind {
                ExprKind::Column(parts) => find_column(cols, parts).ok().flatten(),
                _ => None,
            },
            (None, star) => *star,
        })
        .collect()
}

/// The select list of `sel` as grouping keys, if `sel` is a DISTINCT over a join (sources
/// written with commas, or an inner or cross join) that the hash aggregate can take as its
/// rows come: not grouped, no window, every item an expression (no `*`, no assignment).
fn distinct_keys<'s>(
    sel: &'s Select,
    order_by: &[OrderByItem],
    grouped: bool,
    joins: bool,
) -> Option<Vec<&'s Expr>> {
    if !sel.distinct || grouped || !joins || !select_windows(sel, order_by).is_empty() {
        return None;
    }
    sel.items
        .iter()
        .map(|item| match item {
            SelectItem::Expr { expr, .. } => Some(expr),
            _ => None,
        })
        .collect()
}

impl Run<'_> {
    /// One SELECT: FROM, WHERE, GROUP BY, HAVING, windows, the list, DISTINCT, ORDER BY, TOP.
    pub(crate) fn select(
        &mut self,
        sel: &Select,
        order_by: &[OrderByItem],
        offset: Option<&OffsetFetch>,
        outer: Option<&Env<'_>>,
    ) -> Result<Rows, SqlError> {
        if let Some(sel) = self.numbered_source_cut(sel, order_by, offset) {
            return self.select(&sel, order_by, offset, outer);
        }
        self.select_block(sel, order_by, offset, outer)
            .map_err(|e| self.rebind_unknown_column(e, &sel.from))
    }

    /// [`Run::select`], whose errors name unknown columns as the planner met them.
    fn select_block(
        &mut self,
        sel: &Select,
        order_by: &[OrderByItem],
        offset: Option<&OffsetFetch>,
        outer: Option<&Env<'_>>,
    ) -> Result<Rows, SqlError> {
        let aggs = select_aggregates(sel, order_by);
        let grouped = !aggs.is_empty() || !sel.group_by.is_empty();
        // A block with a valid kept plan has nothing to inline: its plan was made for it, at
        // the same schema version, after inlining found nothing to do (its one source named
        // a table), so the catalog is not asked again. A grouped block looks for its plan
        // where it reads its rows (`group_from`), or below.
        let looked = !grouped && !sel.from.is_empty() && self.s.explain_ctes.is_empty();
        let kept = if looked { self.block_plan_of(sel, order_by) } else { None };
        if kept.is_none() {
            if let Some((sel, order_by)) = self.inline_select(sel, order_by) {
                return self.select_block(&sel, &order_by, offset, outer);
            }
        }
        let (_, sets) = grouping_sets(&sel.group_by, sel.grouping_sets.as_deref())?;
        // One grouping set: hashed as the FROM clause's rows come. A DISTINCT over a join is
        // grouped by its select list the same way, so the join's rows are not held before
        // the DISTINCT takes them: each group's first row gives the list its values, which
        // are those of every row of the group (so the DISTINCT below has nothing left to do).
        let distinct_keys = distinct_keys(sel, order_by, grouped, self.joins_reduced(sel));
        // Window calls over a block's rows take them as the FROM clause's read finds them,
        // into the first window stage's sort, which spills past its grant.
        let windows = select_windows(sel, order_by);
        // A row goal (`TOP (n)` over numbering in arrival order) stops the read instead.
        let windowed = !grouped
            && !windows.is_empty()
            && !sel.from.is_empty()
            && self.row_goal(sel, order_by, offset)?.is_none();
        let streamed = match (sets.as_slice(), &distinct_keys) {
            ([keys], _) if grouped && !sel.from.is_empty() => {
                Some(self.group_from(sel, order_by, keys, &aggs, outer)?)
            }
            (_, Some(keys)) => Some(self.group_from(sel, order_by, keys, &[], outer)?),
            _ if windowed => {
                let fed = self.window_from(sel, order_by, &windows, outer)?;
                let (cols, computed) = (fed.cols.clone(), fed.computed.clone());
                let mut rows = Vec::new();
                fed.finish(self, outer, &mut |_, row| {
                    rows.push(row);
                    Ok(())
                })?;
                Some((cols, rows, computed))
            }
            _ => None,
        };
        let kept = match kept {
            None if !looked && streamed.is_none() && !sel.from.is_empty() => {
                self.block_plan_of(sel, order_by)
            }
            kept => kept,
        };
        // A kept plan's rows are read under its own columns, borrowed rather than copied at
        // each execution.
        let (mut cols, mut rows, mut computed): (Cow<'_, [Col]>, _, _) = match streamed {
            Some((cols, rows, computed)) => (Cow::Owned(cols), rows, computed),
            None => {
                let (cols, rows, residual) = if sel.from.is_empty() {
                    let where_clause = sel.where_clause.as_ref();
                    (Cow::Owned(Vec::new()), vec![Vec::new()], where_clause.into_iter().collect())
                } else if let Some((plan, table)) = &kept {
                    let mut parts = Vec::new();
                    if let Some(w) = &sel.where_clause {
                        crate::exec::plan::join::conjuncts(w, &mut parts);
                    }
                    let rows = self.run_block_plan_rows(plan, table, &parts, outer)?;
                    (Cow::Borrowed(plan.cols()), rows, Vec::new())
                } else {
                    let goal = self
                        .row_goal(sel, order_by, offset)?
                        .map(|rows| crate::exec::plan::join::RowGoal { rows, order: order_by });
                    let demand = Demand::of_select(sel, order_by);
                    let (Rows { cols, rows }, residual) =
                        if goal.is_none() && self.may_cache_block(sel) {
                            self.plan_from_caching(sel, order_by, outer, demand.as_ref())?
                        } else {
                            let filter = sel.where_clause.as_ref();
                            self.plan_from_reading(&sel.from, filter, outer, goal, demand.as_ref())?
                        };
                    (Cow::Owned(cols), rows, residual)
                };
                // What of WHERE the plan did not apply.
                let rows = self.filter_rows(&cols, rows, &residual, outer)?;
                match sets.as_slice() {
                    _ if !grouped => (cols, rows, Vec::new()),
                    [keys] => {
                        let mut grouping = Grouping::new(self, &cols, keys, &aggs, true)?;
                        for row in &rows {
                            grouping.push(self, row, outer)?;
                        }
                        drop(rows);
                        let grows = grouping.finish(self, keys, outer)?;
                        let (gcols, computed) = grouped_columns(&cols, &aggs);
                        (Cow::Owned(gcols), grows, computed)
                    }
                    _ => {
                        let sets = sel.grouping_sets.as_deref();
                        let (gcols, grows, computed) =
                            self.group(&cols, rows, &sel.group_by, sets, &aggs, outer)?;
                        (Cow::Owned(gcols), grows, computed)
                    }
                }
            }
        };
        if grouped {
            if let Some(h) = &sel.having {
                let having = Condition::prepare(h, &cols, &computed);
                let mut kept = Vec::with_capacity(rows.len());
                for row in rows {
                    let env = Env { cols: &cols, row: &row, outer, computed: &computed };
                    if self.eval_condition(&having, &env)? == Some(true) {
                        kept.push(row);
                    }
                }
                rows = kept;
            }
        }
        if !windows.is_empty() && !windowed {
            rows = self.windows(cols.to_mut(), rows, &mut computed, &windows, outer)?;
        }
        // The select list.
        let SelectList { mut out_cols, exprs, stars, assigns } = self.select_list(sel, &cols)?;
        // SQL Server binds the select list before it reads a row: with no row to evaluate it
        // on, a name that no source in scope has is still 207 (4104 when qualified).
        if rows.is_empty() && !grouped && windows.is_empty() {
            bound(&exprs, &Env { cols: &cols, row: &[], outer, computed: &computed })?;
        }
        // Sort keys come from the source row (or the output, for aliases and ordinals).
        let desc: Vec<bool> = order_by.iter().map(|o| o.descending).collect();
        let key_collations = order_collations(order_by, &out_cols, &cols)?;
        let top = match &sel.top {
            Some(t) => Some((self.top_quantity(t)?, t.percent)),
            None => None,
        };
        // How many of `len` rows TOP keeps.
        let top_limit = |len: usize| match top {
            Some((n, true)) => ((len as f64) * n / 100.0).ceil() as usize,
            Some((n, false)) => n as usize,
            None => len,
        };
        if assigns {
            // SELECT @v = ...: assign row by row, so each row sees the previous assignment.
            let mut order: Vec<usize> = (0..rows.len()).collect();
            if !order_by.is_empty() {
                let mut keyed = Vec::with_capacity(rows.len());
                for (i, row) in rows.iter().enumerate() {
                    let env = Env { cols: &cols, row, outer, computed: &computed };
                    let mut keys = Vec::new();
                    for o in order_by {
                        keys.push(self.eval(&o.expr, &env)?);
                    }
                    keyed.push((keys, i));
                }
                sort_by_keys(&mut keyed, &desc)?;
                order = keyed.into_iter().map(|(_, i)| i).collect();
            }
            // SET ROWCOUNT stops an assignment after its n-th row, as it stops a result.
            order.truncate(top_limit(order.len()).min(self.rowcount_limit()));
            let n = order.len();
            for i in order {
                let row = &rows[i];
                for item in &sel.items {
                    if let SelectItem::Assign { variable, op, value } = item {
                        let env = Env { cols: &cols, row, outer, computed: &computed };
                        let v = self.eval(value, &env)?;
                        self.assign_to(variable, *op, v)?;
                    }
                }
            }
            return Ok(Rows { cols: Vec::new(), rows: vec![Vec::new(); n] });
        }
        // Without ORDER BY or DISTINCT, TOP keeps the first rows: project no others.
        let projected_rows = if order_by.is_empty() && !sel.distinct && offset.is_none() {
            top_limit(rows.len())
        } else {
            rows.len()
        };
        // `TOP (n) ... ORDER BY` needs only the first n rows in that order: sorting each time
        // n more rows have come and keeping n holds 2n rows at most, whatever the input. The
        // sort is stable, so equal rows keep the order of a single sort of all of them.
        let with_ties = sel.top.as_ref().is_some_and(|t| t.with_ties);
        if with_ties && order_by.is_empty() {
            return Err(SqlError::with_severity(
                1062,
                15,
                "The TOP N WITH TIES clause is not allowed without a corresponding ORDER BY \
                 clause.",
            ));
        }
        let bounded = match top {
            Some((n, false)) if !order_by.is_empty() && !sel.distinct && offset.is_none() => {
                Some(n as usize).filter(|_| !with_ties)
            }
            _ => None,
        };
        // DISTINCT of a column whose collation tells apart other values than the default:
        // rows are told apart as they are projected, by each column's collation, and not
        // again below (which would go by the default).
        // A DISTINCT grouped by its select list (`distinct_keys`) has one row per distinct
        // row already, told apart by the same collations: nothing to do again.
        let dedup = sel.distinct && distinct_keys.is_none();
        let out_collations: Vec<_> = out_cols.iter().map(|c| c.collation).collect();
        let mut collated_distinct = (dedup
            && out_collations.iter().flatten().any(|c| !c.order().is_default()))
        .then(std::collections::HashSet::new);
        let distinct = dedup && collated_distinct.is_none();
        // A full ORDER BY sorts within the memory grant, spilling sorted runs beyond it.
        let mut sorter = (bounded.is_none() && !order_by.is_empty())
            .then(|| ExternalSort::new(self.memory_grant(), &desc, distinct));
        let mut keyed: Vec<(Vec<Value>, Vec<Value>)> = Vec::with_capacity(match &sorter {
            Some(_) => 0,
            None => bounded.map_or(projected_rows, |k| projected_rows.min(2 * k)),
        });
        // Once n rows are kept, the keys of the last: a later row that does not sort before
        // them cannot be among the first n (one that sorts equal comes after it in a stable
        // sort), so it is dropped with one comparison instead of joining the next sort.
        let mut cutoff: Option<Vec<Value>> = None;
        let key_sources = KeySources::computed(order_by, &out_cols, &cols, &computed)?;
        let copies = copied_columns(&exprs, &stars, &cols);
        let projection = Projection::new(&exprs, &stars, &cols, &computed);
        // Each source row is dropped once projected, so the source and the output are not
        // both held whole.
        for (i, row) in rows.into_iter().take(projected_rows).enumerate() {
            self.row_interruption_point(i)?;
            let env = Env { cols: &cols, row: &row, outer, computed: &computed };
            let out = match &copies {
                Some(copies) => copies.iter().map(|&c| row[c].clone()).collect(),
                None => self.project_prepared(&projection, &env)?,
            };
            if let Some(seen) = &mut collated_distinct {
                if !seen.insert(collation::group_key_under(&out, &out_collations)) {
                    continue;
                }
            }
            let mut keys = Vec::with_capacity(order_by.len());
            for (k, (o, c)) in order_by.iter().zip(&key_collations).enumerate() {
                let key = self.order_key_of(&key_sources, k, o, &out, &env)?;
                keys.push(collation::sort_value(key, *c));
            }
            if let Some(sorter) = &mut sorter {
                sorter.push(self, keys, out)?;
                continue;
            }
            if let Some(last) = &cutoff {
                if compare_keys(&keys, last, &desc)? != Ordering::Less {
                    continue;
                }
            }
            keyed.push((keys, out));
            if let Some(k) = bounded.filter(|&k| keyed.len() >= 2 * k.max(TOP_N_ROUND)) {
                sort_by_keys(&mut keyed, &desc)?;
                keyed.truncate(k);
                cutoff = keyed.last().filter(|_| keyed.len() == k).map(|(keys, _)| keys.clone());
            }
        }
        let mut out_rows: Vec<Vec<Value>> = match sorter {
            Some(sorter) if with_ties => self.sorted_with_ties(sorter, &desc, top_limit)?,
            Some(sorter) => self.sorted_rows(sorter)?,
            None => {
                if distinct {
                    keyed = self.distinct_within_grant(keyed)?;
                }
                if !order_by.is_empty() {
                    sort_by_keys(&mut keyed, &desc)?;
                }
                keyed.into_iter().map(|(_, r)| r).collect()
            }
        };
        if let Some(off) = offset {
            out_rows = self.apply_offset(out_rows, off)?;
        }
        if !with_ties {
            out_rows.truncate(top_limit(out_rows.len()));
        }
        for (i, c) in out_cols.iter_mut().enumerate() {
            if c.hidden {
                let mut seen = ValueType::default();
                for r in &out_rows {
                    seen.see(&r[i]);
                }
                c.ty = self.type_by_values(seen, exprs[i], &cols);
                c.hidden = false;
                unify_column(&mut out_rows, i, c.ty)?;
            }
        }
        Ok(Rows { cols: out_cols, rows: out_rows })
    }

    /// A SELECT's output columns over the rows of `cols`: each with its expression, or the
    /// source column a `*` copies. An expression with no type to declare (not a column,
    /// CAST or variable) gets a hidden column, typed by its values once they are known.
    pub(crate) fn select_list<'s>(
        &self,
        sel: &'s Select,
        cols: &[Col],
    ) -> Result<SelectList<'s>, SqlError> {
        let mut out_cols: Vec<Col> = Vec::new();
        let mut exprs: Vec<Option<&Expr>> = Vec::new();
        let mut stars: Vec<Option<usize>> = Vec::new();
        let mut assigns = false;
        for item in &sel.items {
            match item {
                SelectItem::Wildcard(qual) => {
                    let mut any = false;
                    for (i, c) in cols.iter().enumerate() {
                        if c.hidden {
                            continue;
                        }
                        if let Some(q) = qual {
                            let Some(last) = q.last() else { continue };
                            if !c
                                .qual
                                .as_deref()
                                .is_some_and(|cq| cq.eq_ignore_ascii_case(&last.value))
                            {
                                continue;
                            }
                        }
                        any = true;
                        out_cols.push(Col { qual: None, ..c.clone() });
                        exprs.push(None);
                        stars.push(Some(i));
                    }
                    if !any && qual.is_some() {
                        let parts = qual.clone().unwrap_or_default();
                        return Err(SqlError::new(
                            4104,
                            format!(
                                "The multi-part identifier \"{}\" could not be bound.",
                                parts
                                    .iter()
                                    .map(|p| p.value.as_str())
                                    .collect::<Vec<_>>()
                                    .join(".")
                            ),
                        ));
                    }
                    if sel.from.is_empty() {
                        return Err(SqlError::new(263, "Must specify table to select from."));
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let name = alias.as_ref().map_or_else(|| expr_name(expr), |a| a.value.clone());
                    let (ty, nullable, declared) = match &expr.kind {
                        ExprKind::Column(parts) => match find_column(cols, parts)? {
                            Some(i) => (Some(cols[i].ty), cols[i].nullable, cols[i].declared),
                            None => (None, true, None),
                        },
                        ExprKind::Cast(c) => (
                            self.declared_type(expr),
                            true,
                            crate::exec::ddl::user_types::declared_as(&c.data_type),
                        ),
                        ExprKind::Convert(c) => (
                            self.declared_type(expr),
                            true,
                            crate::exec::ddl::user_types::declared_as(&c.data_type),
                        ),
                        ExprKind::Variable(v) => (
                            self.declared_type(expr),
                            true,
                            self.variable_at(v).ok().and_then(|v| v.declared),
                        ),
                        // A scalar subquery, MIN or MAX of a column...: the type the
                        // expression says, rather than its values' (a DECIMAL's precision, a
                        // VARCHAR's length).
                        _ => (
                            self.declared_type(expr).or_else(|| self.exact_type(expr, cols)),
                            true,
                            self.declared_type_of(expr, cols),
                        ),
                    };
                    out_cols.push(Col {
                        qual: None,
                        name,
                        ty: ty.unwrap_or(SqlType::Int),
                        nullable,
                        hidden: ty.is_none(),
                        collation: label_in(expr, cols)?.collation(),
                        declared,
                    });
                    exprs.push(Some(expr));
                    stars.push(None);
                }
                SelectItem::Assign { .. } => assigns = true,
            }
        }
        Ok(SelectList { out_cols, exprs, stars, assigns })
    }

    /// The output row of a select list's `exprs` and `stars` (see [`SelectList`]) for the
    /// row of `env`.
    pub(crate) fn project(
        &mut self,
        exprs: &[Option<&Expr>],
        stars: &[Option<usize>],
        env: &Env<'_>,
    ) -> Result<Vec<Value>, SqlError> {
        // Every NEXT VALUE FOR of one sequence in one row gets the same value, as in SQL
        // Server; the row's values are forgotten when it is done, error or not.
        let saved = self.row_sequences.replace(Vec::new());
        let projected = (|| {
            let mut out = Vec::with_capacity(exprs.len());
            for (e, star) in exprs.iter().zip(stars) {
                out.push(match (e, star) {
                    (Some(e), _) => self.eval(e, env)?,
                    (None, Some(i)) => env.row[*i].clone(),
                    (None, None) => Value::Null,
                });
            }
            Ok::<_, SqlError>(out)
        })();
        self.row_sequences = saved;
        projected
    }

    /// How many rows of the FROM clause a SELECT can use, when a plain `TOP (n)` is all that
    /// limits them: no DISTINCT, grouping, aggregate or window, which would need every row,
    /// except windows that number the rows as they arrive ([`numbers_in_arrival_order`]):
    /// those give the first n rows the same values whether the rows after them are read or
    /// not. With an ORDER BY the plan keeps the goal only if it reads in that order; an ORDER
    /// BY name that is also a select-list alias (which SQL Server sorts by first) gives none.
    pub(crate) fn row_goal(
        &mut self,
        sel: &Select,
        order_by: &[OrderByItem],
        offset: Option<&OffsetFetch>,
    ) -> Result<Option<usize>, SqlError> {
        let Some(top) = sel.top.as_ref().filter(|t| !t.percent && !t.with_ties) else {
            return Ok(None);
        };
        if order_by.iter().any(|o| !sorts_by_source_column(sel, o))
            || offset.is_some()
            || sel.distinct
            || !sel.group_by.is_empty()
            || sel.having.is_some()
        {
            return Ok(None);
        }
        let mut aggregates = Vec::new();
        let mut windows = Vec::new();
        for item in &sel.items {
            match item {
                SelectItem::Expr { expr: e, .. } | SelectItem::Assign { value: e, .. } => {
                    collect_aggregates(e, &mut aggregates);
                    collect_windows(e, &mut windows);
                }
                SelectItem::Wildcard(_) => {}
            }
        }
        if !aggregates.is_empty() || !windows.iter().all(|w| numbers_in_arrival_order(w)) {
            return Ok(None);
        }
        let n = self.value(&top.quantity)?;
        Ok(match scalar::convert(n, SqlType::BigInt, None) {
            Ok(Value::BigInt(n)) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
            _ => None,
        })
    }

    /// The type an expression declares by itself: a CAST's or CONVERT's target, a
    /// variable's or a user-defined function's declared type. Other expressions take the
    /// type of their values.
    pub(crate) fn declared_type(&self, e: &Expr) -> Option<SqlType> {
        match &e.kind {
            ExprKind::Cast(c) => scalar::data_type_in_cast(&c.data_type).ok(),
            ExprKind::Convert(c) => scalar::data_type_in_cast(&c.data_type).ok(),
            ExprKind::Variable(v) => self.variable_at(v).ok().map(|v| v.ty),
            ExprKind::Function(f) if f.name.schema.is_some() => self.user_function_type(f),
            _ => None,
        }
    }
}

impl Run<'_> {
    /// The type of a select-list column typed by its values (`seen`, [`ValueType`]): theirs,
    /// or with no value to go by, the expression's own type as SQL Server derives it
    /// (`SELECT d = GETDATE() INTO #t WHERE 1 = 0` makes a datetime column), else INT.
    pub(crate) fn type_by_values(
        &self,
        seen: ValueType,
        e: Option<&Expr>,
        cols: &[Col],
    ) -> SqlType {
        let declared = || e.and_then(|e| self.static_type(e, cols));
        match seen.get() {
            // A MAX type stays MAX whatever length its values have, as in SQL Server:
            // `SUBSTRING(@nvarchar_max, ...)` is NVARCHAR(MAX) (a recursive CTE's anchor
            // typed by its first short value would truncate the longer ones after it).
            Some(ty @ (SqlType::VarChar(_) | SqlType::NVarChar(_) | SqlType::VarBinary(_))) => {
                match declared() {
                    Some(d @ SqlType::VarChar(Len::Max)) if matches!(ty, SqlType::VarChar(_)) => d,
                    Some(d @ SqlType::NVarChar(Len::Max)) if matches!(ty, SqlType::NVarChar(_)) => {
                        d
                    }
                    Some(d @ SqlType::VarBinary(Len::Max))
                        if matches!(ty, SqlType::VarBinary(_)) =>
                    {
                        d
                    }
                    _ => ty,
                }
            }
            Some(ty) => ty,
            None => declared().unwrap_or(SqlType::Int),
        }
    }
}
