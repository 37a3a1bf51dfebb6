//! The FROM clause's plan without reading its tables: what `SET SHOWPLAN_TEXT | ALL` shows.
//!
//! It makes the executor's decisions (`plan_pushed`, `join_leaves`, `outer_join`,
//! `apply_semi_join`) with the same functions, from estimates only: where the executor
//! counts the rows joined so far before choosing the next step, this takes the join order
//! search's estimate of them (`estimate_step`). The plan shown is therefore the plan the
//! executor runs whenever the counts agree with the estimates; for up to
//! [`order::MAX_SEARCHED`] leaves the join order is the same either way.
//!
//! Views, derived tables and CTEs are explained where they are named, as subtrees. What
//! the executor computes up front without a plan of its own is computed here too, to know
//! its columns and size: table-valued functions, VALUES lists, APPLY, system views, and
//! the sources of an EXISTS or IN subquery that `semi_join` flattens (a view there is
//! read). A SELECT has no side effects, so this only costs time.

use super::reduce::Reduced;
use walden_engine::types::SqlType;

use crate::ast::{Expr, ExprKind, JoinKind, Query, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::query::{expr_name, Relation};
use crate::exec::plan::access::AccessPath;
use crate::exec::plan::showplan::PlanNode;
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::probe::distinct_probes;
use super::semi::SemiJoin;
use super::{
    clone_ref, conjuncts, equi_keys, is_key_of, order, reading, table_leaf, Conjunct, Flat, Input,
    Leaf, Step, MAX_LEAVES,
};

/// Rows assumed for a source whose size is unknown before it runs.
const UNKNOWN_ROWS: f64 = 1_000.0;

/// A FROM clause's plan: its root, estimated rows, and the conjuncts of the WHERE clause
/// it does not apply (a Filter above it does).
pub(crate) struct FromPlan {
    pub(crate) node: PlanNode,
    pub(crate) rows: f64,
    pub(crate) residual: Vec<Expr>,
    /// The joined row's columns (in join order: they only resolve names).
    cols: Vec<Col>,
    /// For a FROM clause of one table, the columns (positions in `cols`) in whose order
    /// both its access path and its scan read it: a grouping on integer columns in that
    /// order is run as a stream (`Grouping::take_ordered_input`).
    ordered: Vec<usize>,
}

impl FromPlan {
    /// Whether a grouping by `keys` is run as a stream over this plan's rows, as
    /// `Grouping::take_ordered_input` decides: each key a column of an integer type, the
    /// columns (or the same the other way round) the order the rows come in.
    pub(crate) fn groups_in_order(&self, keys: &[&Expr]) -> bool {
        let mut columns = Vec::with_capacity(keys.len());
        for key in keys {
            let ExprKind::Column(parts) = &key.kind else { return false };
            let Ok(Some(at)) = find_column(&self.cols, parts) else { return false };
            let integer = matches!(
                self.cols[at].ty,
                SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt
            );
            if !integer {
                return false;
            }
            columns.push(at);
        }
        let Some(prefix) = self.ordered.get(..columns.len()) else { return false };
        !columns.is_empty() && (columns == prefix || columns.iter().rev().eq(prefix))
    }

    /// The plan with a Filter of its residual conjuncts on top, if it has any.
    pub(crate) fn filtered(self) -> PlanNode {
        if self.residual.is_empty() {
            return self.node;
        }
        let text: Vec<String> = self.residual.iter().map(ToString::to_string).collect();
        let argument = format!("WHERE:({})", text.join(" AND "));
        PlanNode::unary("Filter", "Filter", argument, self.rows, self.node)
    }
}

impl Run<'_> {
    /// The plan of `plan_from(sources, filter, ...)`.
    pub(crate) fn explain_from(
        &mut self,
        sources: &[TableSource],
        filter: Option<&Expr>,
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
    ) -> Result<FromPlan, SqlError> {
        self.explain_pushed(sources, filter, &[], outer, demand)
    }

    /// The plan of `plan_pushed(sources, filter, pushed, ...)`: `explain_from` with the
    /// conjuncts of an enclosing WHERE clause that name only these sources.
    pub(super) fn explain_pushed(
        &mut self,
        sources: &[TableSource],
        filter: Option<&Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
    ) -> Result<FromPlan, SqlError> {
        self.explain_pushed_sized(sources, filter, pushed, outer, demand, false)
    }

    /// [`Run::explain_pushed`]; with `sized`, a single table with only its clustered index
    /// is estimated from its statistics, which `place` loads for no such table (its key's
    /// seek beats a scan whatever the sizes). An outer join's left side is explained so:
    /// its rows decide whether the inner table is sought per row (`outer_seek_path`), as
    /// the execution decides from the rows it holds.
    fn explain_pushed_sized(
        &mut self,
        sources: &[TableSource],
        filter: Option<&Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        sized: bool,
    ) -> Result<FromPlan, SqlError> {
        let mut flat = Flat::default();
        let mut subplans: Vec<Option<PlanNode>> = Vec::new();
        let mut on = Vec::new();
        let mut parts = Vec::new();
        if let Some(w) = filter {
            conjuncts(w, &mut parts);
        }
        let mut passed: Vec<&Expr> = parts.clone();
        passed.extend_from_slice(pushed);
        let reduced = self.reduced_outer_joins(sources, &parts, pushed);
        for src in sources {
            let (plans, on) = (&mut subplans, &mut on);
            self.explain_flatten(src, &mut flat, plans, on, &passed, outer, demand, &reduced)?;
        }
        let written = parts.clone();
        let implied = flat.implied(&parts, &on);
        let (mut semis, unplaced) =
            self.place(&mut flat, parts, &implied, on, pushed, outer, false);
        if let ([leaf], true) = (flat.leaves.as_mut_slice(), sized) {
            if let (Input::Table(t), None) = (&leaf.input, &leaf.stats) {
                if t.def.indexes.iter().all(|i| i.id == 1) {
                    leaf.stats = self.table_stats(t);
                }
            }
        }
        let residual = unplaced.into_iter().map(|i| written[i].clone()).collect();
        let ordered = match flat.leaves.as_slice() {
            [Leaf { input: Input::Table(t), .. }] if semis.is_empty() => {
                // The path `explain_leaf` shows: the leaf's own conjuncts choose it.
                let local: Vec<&Expr> = flat
                    .conjuncts
                    .iter()
                    .filter(|c| c.leaves == Some(1) && !c.semi)
                    .map(|c| c.expr)
                    .collect();
                let path = self.path(&flat, t, &local, 0, 0);
                let clustered = t.def.index(1).map_or(&[][..], |i| i.columns.as_slice());
                let n = (0..=clustered.len())
                    .rev()
                    .find(|&n| path.delivers_order(&t.def, &clustered[..n]))
                    .unwrap_or(0);
                clustered[..n].to_vec()
            }
            _ => Vec::new(),
        };
        let (node, rows, cols) = self.explain_leaves(&mut flat, subplans, &mut semis, outer)?;
        Ok(FromPlan { node, rows, residual, cols, ordered })
    }

    /// `flatten`, with each source that the executor computes up front (a view, a derived
    /// table, an outer join, a function) explained instead: its plan goes to `subplans` at
    /// the leaf's position, and the leaf holds only an estimate of its rows.
    #[allow(clippy::too_many_arguments)]
    fn explain_flatten<'e>(
        &mut self,
        src: &'e TableSource,
        flat: &mut Flat<'e>,
        subplans: &mut Vec<Option<PlanNode>>,
        on: &mut Vec<&'e Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        reduced: &Reduced<'_>,
    ) -> Result<(), SqlError> {
        if let crate::ast::TableSource::Join(j) = src {
            if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) || reduced.inner(j) {
                for side in [&j.left, &j.right] {
                    let plans = &mut *subplans;
                    self.explain_flatten(side, flat, plans, on, pushed, outer, demand, reduced)?;
                }
                if let Some(cond) = &j.on {
                    conjuncts(cond, on);
                }
                return Ok(());
            }
        }
        let (leaf, plan) = match src {
            TableSource::Table { name, alias, .. } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                if let Some((node, rows, cte)) = self.explain_cte(name)? {
                    let mut cols = query_cols(&cte.query, &qual);
                    for (c, n) in cols.iter_mut().zip(&cte.columns) {
                        c.name = n.value.clone();
                    }
                    flat.leaves.push(estimated_leaf(cols, rows));
                    subplans.push(Some(node));
                    return Ok(());
                }
                match self.named_rowset(name, &qual)? {
                    Some(rows) => {
                        let n = rows.rows.len() as f64;
                        let node = PlanNode::new(
                            "Constant Scan",
                            "Constant Scan",
                            format!("VALUES:({} rows of {qual})", rows.rows.len()),
                            n,
                        );
                        (estimated_leaf(rows.cols, n), Some(node))
                    }
                    None => match self.resolve_relation(name, &qual)? {
                        Relation::Table(t) => (table_leaf(reading(t, demand)), None),
                        Relation::View(db, view) => {
                            let batch = self.s.parsed(&view.text)?;
                            let query = batch.statements.iter().find_map(|s| match &s.kind {
                                crate::ast::StatementKind::CreateView(v) => Some(v.query.clone()),
                                _ => None,
                            });
                            let Some(query) = query else {
                                return Err(SqlError::new(
                                    50000,
                                    format!("The text of view '{}' does not parse.", view.name),
                                ));
                            };
                            let (node, rows) =
                                self.in_view_scope(db, |r| r.explain_query(&query))?;
                            let cols = query_cols(&query, &qual);
                            (estimated_leaf(cols, rows), Some(node))
                        }
                    },
                }
            }
            TableSource::Variable { name, alias } => {
                let qual = alias.as_ref().map_or(name.clone(), |a| a.value.clone());
                (table_leaf(reading(self.resolve_table_variable(name, &qual)?, demand)), None)
            }
            TableSource::Join(j)
                if j.kind != JoinKind::CrossApply && j.kind != JoinKind::OuterApply =>
            {
                let (node, rows, cols) = self.explain_outer_join(
                    &j.left,
                    &j.right,
                    j.kind,
                    j.on.as_ref(),
                    pushed,
                    outer,
                    demand,
                )?;
                (estimated_leaf(cols, rows), Some(node))
            }
            TableSource::Derived { query, alias, columns } => {
                let (node, rows) = self.explain_query(query)?;
                let mut cols = query_cols(query, &alias.value);
                for (c, name) in cols.iter_mut().zip(columns) {
                    c.name = name.value.clone();
                }
                (estimated_leaf(cols, rows), Some(node))
            }
            other => {
                // A function, VALUES list or APPLY: computed before the join, as it runs.
                let rows = self.source(other, None, outer)?;
                let n = rows.rows.len() as f64;
                let node = PlanNode::new(
                    "Table-valued function",
                    "Table-valued function",
                    format!("{other}"),
                    n,
                );
                (estimated_leaf(rows.cols, n), Some(node))
            }
        };
        flat.leaves.push(leaf);
        subplans.push(plan);
        Ok(())
    }

    /// `join_leaves`, explained: the same order, steps and conjunct placement, with each
    /// step's input rows estimated instead of counted.
    fn explain_leaves(
        &mut self,
        flat: &mut Flat<'_>,
        mut subplans: Vec<Option<PlanNode>>,
        semis: &mut [(usize, SemiJoin<'_>)],
        outer: Option<&Env<'_>>,
    ) -> Result<(PlanNode, f64, Vec<Col>), SqlError> {
        let n = flat.leaves.len();
        let (own, reads) = self.leaf_estimates(flat);
        let mut joined = 0u64;
        let mut acc: Option<(PlanNode, f64)> = None;
        let mut acc_cols: Vec<Col> = Vec::new();
        let mut constant: Vec<&Expr> = Vec::new();
        for c in flat.conjuncts.iter_mut().filter(|c| c.leaves == Some(0)) {
            c.applied = true;
            constant.push(c.expr);
        }
        let planned = (2..=order::MAX_SEARCHED).contains(&n).then(|| self.join_order(flat));
        // The positions of the first leaf's columns its read gives in ascending order.
        let mut ordered: Vec<usize> = Vec::new();
        let mut step_index = 0;
        while step_index < n {
            let (leaf, step) = if n > MAX_LEAVES {
                (step_index, Step::Loops)
            } else {
                let only = planned.as_ref().map(|p| p[step_index]);
                let left_rows = acc.as_ref().map_or(1.0, |a| a.1);
                // No rows to look at: the rows joined so far ascend where the first leaf's
                // read gives them in order (every step keeps its left rows' order). The
                // second step of a planned order hashes rather than merges where the first
                // leaf's rows outnumber the second's, as `probe.rs` then streams them.
                let streamed = step_index == 1
                    && only.is_some_and(|second| left_rows >= self.own_rows(flat, second));
                let ascends = |at: usize| !streamed && ordered.contains(&at);
                self.next_step(flat, joined, left_rows, &acc_cols, &ascends, only)?
            };
            step_index += 1;
            let bit = 1u64 << leaf;
            let mask = if n > MAX_LEAVES { 0 } else { joined | bit };
            let own_bit = if mask == 0 { None } else { Some(bit) };
            let ready = |c: &Conjunct<'_>| {
                !c.applied && !c.semi && c.leaves.is_some_and(|m| m & !mask == 0)
            };
            let checks: Vec<usize> =
                (0..flat.conjuncts.len()).filter(|&i| ready(&flat.conjuncts[i])).collect();
            let local: Vec<&Expr> = checks
                .iter()
                .filter(|&&i| flat.conjuncts[i].leaves == own_bit)
                .map(|&i| flat.conjuncts[i].expr)
                .collect();
            let rest: Vec<&Expr> = checks
                .iter()
                .filter(|&&i| flat.conjuncts[i].leaves != own_bit)
                .map(|&i| flat.conjuncts[i].expr)
                .collect();
            let rows_out = match &acc {
                None => own[leaf],
                Some((_, rows)) => self.estimate_step(flat, joined, *rows, leaf, &own, &reads).1,
            };
            let node = match (acc.take(), step) {
                (None, _) => {
                    let width = flat.leaves[leaf].cols.len();
                    ordered = (0..width)
                        .filter(|&at| self.reads_in_order(flat, leaf, &local, at))
                        .collect();
                    self.explain_leaf(flat, &mut subplans, leaf, &local, own[leaf])
                }
                (Some((left, _)), Step::Merge(key)) => {
                    // Only a table is merged; it is read in its clustered key's order.
                    let Input::Table(t) = &flat.leaves[leaf].input else {
                        return Err(SqlError::new(
                            50000,
                            "Walden's planner merged a source that is not a table.",
                        ));
                    };
                    let t = clone_ref(t);
                    let right = self.path(flat, &t, &local, leaf, 0).plan_in_order(&t, &local);
                    let keys = [(key.joined, key.leaf)];
                    let residual: Vec<&Expr> =
                        rest.iter().copied().filter(|e| !is_key_of(e, &keys)).collect();
                    let residual = if residual.is_empty() {
                        String::new()
                    } else {
                        format!(", RESIDUAL:({})", and(&residual))
                    };
                    let args = format!("MERGE:({})=({}){residual}", key.joined, key.leaf);
                    PlanNode::join("Merge Join", "Inner Join", args, rows_out, left, right)
                }
                (Some((left, _)), Step::IndexLoops(path, _)) => {
                    let Input::Table(t) = &flat.leaves[leaf].input else {
                        return Err(SqlError::new(
                            50000,
                            "Walden's planner sought a source that is not a table.",
                        ));
                    };
                    let mut all = local.clone();
                    all.extend(rest.iter().copied());
                    let inner = path.plan(&clone_ref(t), &all);
                    let refs = outer_references(&path, flat, joined);
                    PlanNode::join("Nested Loops", "Inner Join", refs, rows_out, left, inner)
                }
                (Some((left, left_rows)), Step::Hash(keys)) => {
                    let right = self.explain_leaf(flat, &mut subplans, leaf, &local, own[leaf]);
                    let text = |side: &[&Expr]| {
                        side.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ")
                    };
                    let residual = if rest.is_empty() {
                        String::new()
                    } else {
                        format!(", RESIDUAL:({})", and(&rest))
                    };
                    // As `join_step` runs it: the fewer rows are hashed, and a Hash Match's
                    // first input is the one hashed. The rows so far hashed are probed by
                    // each leaf column once (`distinct_probes`).
                    if left_rows < self.own_rows(flat, leaf) {
                        let keys = distinct_probes(&keys);
                        let joined: Vec<&Expr> = keys.iter().map(|&(j, _)| j).collect();
                        let leaf_side: Vec<&Expr> = keys.iter().map(|&(_, l)| l).collect();
                        let args =
                            format!("HASH:({})=({}){residual}", text(&joined), text(&leaf_side));
                        PlanNode::join("Hash Match", "Inner Join", args, rows_out, left, right)
                    } else {
                        let joined: Vec<&Expr> = keys.iter().map(|&(j, _)| j).collect();
                        let leaf_side: Vec<&Expr> = keys.iter().map(|&(_, l)| l).collect();
                        let args =
                            format!("HASH:({})=({}){residual}", text(&leaf_side), text(&joined));
                        PlanNode::join("Hash Match", "Inner Join", args, rows_out, right, left)
                    }
                }
                (Some((left, _)), Step::Loops) => {
                    let right = self.explain_leaf(flat, &mut subplans, leaf, &local, own[leaf]);
                    let args = if rest.is_empty() {
                        String::new()
                    } else {
                        format!("WHERE:({})", and(&rest))
                    };
                    let logical = if rest.is_empty() { "Cross Join" } else { "Inner Join" };
                    PlanNode::join("Nested Loops", logical, args, rows_out, left, right)
                }
            };
            for i in checks {
                flat.conjuncts[i].applied = true;
            }
            acc_cols.extend(flat.leaves[leaf].cols.iter().cloned());
            joined |= bit;
            let mut current = (node, rows_out);
            for (i, semi) in semis.iter_mut() {
                let c = &flat.conjuncts[*i];
                if !c.applied && c.leaves.is_some_and(|m| m & !joined == 0) {
                    current = self.explain_semi_join(semi, current, outer)?;
                    flat.conjuncts[*i].applied = true;
                }
            }
            acc = Some(current);
        }
        let (mut node, rows) = acc.unwrap_or_else(|| {
            (PlanNode::new("Constant Scan", "Constant Scan", String::new(), 1.0), 1.0)
        });
        let late: Vec<&Expr> =
            flat.conjuncts.iter().filter(|c| c.from_on && !c.applied).map(|c| c.expr).collect();
        if !late.is_empty() {
            node =
                PlanNode::unary("Filter", "Filter", format!("WHERE:({})", and(&late)), rows, node);
        }
        if !constant.is_empty() {
            let args = format!("WHERE:(STARTUP EXPR({}))", and(&constant));
            node = PlanNode::unary("Filter", "Filter", args, rows, node);
        }
        Ok((node, rows, acc_cols))
    }

    /// One leaf read by itself under its own conjuncts `local`.
    fn explain_leaf(
        &mut self,
        flat: &Flat<'_>,
        subplans: &mut [Option<PlanNode>],
        leaf: usize,
        local: &[&Expr],
        rows: f64,
    ) -> PlanNode {
        match (&flat.leaves[leaf].input, subplans[leaf].take()) {
            (Input::Table(t), _) => {
                let t = clone_ref(t);
                let path = self.path(flat, &t, local, leaf, 0);
                path.plan(&t, local)
            }
            (_, Some(node)) if local.is_empty() => node,
            (_, Some(node)) => {
                PlanNode::unary("Filter", "Filter", format!("WHERE:({})", and(local)), rows, node)
            }
            (_, None) => PlanNode::new("Constant Scan", "Constant Scan", String::new(), rows),
        }
    }

    /// `outer_join`, explained: (its plan, estimated rows, its columns). A RIGHT JOIN is
    /// explained as the LEFT JOIN with its sides swapped that `outer_join` runs.
    #[allow(clippy::too_many_arguments)]
    fn explain_outer_join(
        &mut self,
        left: &TableSource,
        right: &TableSource,
        kind: JoinKind,
        on: Option<&Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
    ) -> Result<(PlanNode, f64, Vec<Col>), SqlError> {
        if kind != JoinKind::RightOuter {
            let (node, rows, cols, _) =
                self.explain_outer_join_sides(left, right, kind, on, pushed, outer, demand)?;
            return Ok((node, rows, cols));
        }
        let swapped = self.explain_outer_join_sides(
            right,
            left,
            JoinKind::LeftOuter,
            on,
            pushed,
            outer,
            demand,
        )?;
        // The swapped join's columns are the right side's (`width` of them), then the left's.
        let (node, rows, mut cols, width) = swapped;
        cols.rotate_left(width);
        Ok((node, rows, cols))
    }

    /// [`Run::explain_outer_join`] of a LEFT or FULL OUTER JOIN, and the width of its left
    /// side's columns.
    #[allow(clippy::too_many_arguments)]
    fn explain_outer_join_sides(
        &mut self,
        left: &TableSource,
        right: &TableSource,
        kind: JoinKind,
        on: Option<&Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
    ) -> Result<(PlanNode, f64, Vec<Col>, usize), SqlError> {
        let to_left = if kind == JoinKind::LeftOuter { pushed } else { &[] };
        let left = std::slice::from_ref(left);
        let l = self.explain_pushed_sized(left, None, to_left, outer, demand, true)?;
        let l_cols = l.cols;
        let width = l_cols.len();
        let mut r_flat = Flat::default();
        let mut r_plans = Vec::new();
        let none = Reduced::default();
        let (none_on, plans) = (&mut Vec::new(), &mut r_plans);
        self.explain_flatten(right, &mut r_flat, plans, none_on, &[], outer, demand, &none)?;
        let r_cols: Vec<Col> = r_flat.leaves.iter().flat_map(|l| l.cols.iter().cloned()).collect();
        let Some(on) = on else {
            return Err(SqlError::new(102, "Incorrect syntax near 'JOIN'."));
        };
        let mut parts = Vec::new();
        conjuncts(on, &mut parts);
        let mut both = Flat {
            leaves: vec![
                estimated_leaf(l_cols.clone(), l.rows),
                estimated_leaf(r_cols.clone(), UNKNOWN_ROWS),
            ],
            ..Flat::default()
        };
        // As the nested loops run it: the left input preserved.
        let logical = match kind {
            JoinKind::FullOuter => "Full Outer Join",
            _ => "Left Outer Join",
        };
        let mut cols = l_cols.clone();
        cols.extend(r_cols.iter().cloned());
        let keep_right = matches!(kind, JoinKind::RightOuter | JoinKind::FullOuter);
        let right_table = match (r_flat.leaves.len(), r_flat.leaves.first().map(|l| &l.input)) {
            (1, Some(Input::Table(t))) => Some(clone_ref(t)),
            _ => None,
        };
        if let (Some(t), false) = (&right_table, keep_right) {
            let hashable = !equi_keys(self, &both, &parts, 1, 2, &l_cols, &r_cols).is_empty();
            if let Some(path) = self.outer_seek_path(&mut both, t, &parts, l.rows, hashable) {
                let refs = outer_references(&path, &both, 1);
                let inner = path.plan(t, &parts);
                let node = PlanNode::join("Nested Loops", logical, refs, l.rows, l.node, inner);
                return Ok((node, l.rows, cols, width));
            }
        }
        let right_only: Vec<&Expr> =
            parts.iter().copied().filter(|e| both.leaves_of(e) == Some(2)).collect();
        let pushed_right: &[&Expr] = if keep_right { &[] } else { &right_only };
        let r_node = match (&right_table, r_plans.pop().flatten()) {
            (Some(t), _) => self.path(&both, t, pushed_right, 1, 0).plan(t, pushed_right),
            (None, Some(node)) => node,
            (None, None) => {
                PlanNode::new("Constant Scan", "Constant Scan", String::new(), UNKNOWN_ROWS)
            }
        };
        let keys = equi_keys(self, &both, &parts, 1, 2, &l_cols, &r_cols);
        let node = if keys.is_empty() {
            let args = format!("WHERE:({})", and(&parts));
            PlanNode::join("Nested Loops", logical, args, l.rows, l.node, r_node)
        } else {
            let left_keys: Vec<String> = keys.iter().map(|(a, _)| a.to_string()).collect();
            let right_keys: Vec<String> = keys.iter().map(|(_, b)| b.to_string()).collect();
            let hash = |build: &[String], probe: &[String]| {
                format!(
                    "HASH:({})=({}), RESIDUAL:({})",
                    build.join(", "),
                    probe.join(", "),
                    and(&parts)
                )
            };
            // A Hash Match's first input is the one hashed; its logical operator names the
            // preserved input by place: a LEFT JOIN that hashes its preserved side is a
            // Left Outer Join, one that hashes the inner side a Right Outer Join.
            let preserved_hashed = !keep_right
                && right_table
                    .as_ref()
                    .is_some_and(|t| self.hash_preserved_side(&both, t, pushed_right, l.rows));
            if preserved_hashed {
                let args = hash(&left_keys, &right_keys);
                PlanNode::join("Hash Match", logical, args, l.rows, l.node, r_node)
            } else {
                let flipped = if keep_right { logical } else { "Right Outer Join" };
                let args = hash(&right_keys, &left_keys);
                PlanNode::join("Hash Match", flipped, args, l.rows, r_node, l.node)
            }
        };
        Ok((node, l.rows, cols, width))
    }
}

/// A leaf the executor would compute up front, with its estimated rows.
pub(super) fn estimated_leaf(cols: Vec<Col>, rows: f64) -> Leaf {
    Leaf { cols, input: Input::Estimated(rows), stats: None, narrow: None }
}

/// The columns a query's select list names, qualified by `qual` (for the conjuncts an
/// enclosing FROM places on them); `*` gives none, so conjuncts on those stay unplaced.
fn query_cols(query: &Query, qual: &str) -> Vec<Col> {
    let mut body = &query.body;
    loop {
        match body {
            crate::ast::QueryBody::Select(sel) => {
                return sel
                    .items
                    .iter()
                    .filter_map(|item| match item {
                        crate::ast::SelectItem::Expr { expr, alias } => {
                            let name =
                                alias.as_ref().map_or_else(|| expr_name(expr), |a| a.value.clone());
                            Some(Col::new(Some(qual), &name, walden_engine::types::SqlType::Int))
                        }
                        _ => None,
                    })
                    .collect();
            }
            crate::ast::QueryBody::SetOperation { left, .. } => body = left,
            crate::ast::QueryBody::Parenthesized(q) => body = &q.body,
        }
    }
}

/// `OUTER REFERENCES:(...)`: the probes of a seek that come from the rows joined so far.
fn outer_references(path: &AccessPath<'_>, flat: &Flat<'_>, joined: u64) -> String {
    let mut refs = Vec::new();
    path.any_probe(&mut |e| {
        if flat.leaves_of(e).is_some_and(|m| m & joined != 0) {
            refs.push(e.to_string());
        }
        false
    });
    if refs.is_empty() {
        String::new()
    } else {
        format!("OUTER REFERENCES:({})", refs.join(", "))
    }
}

/// Predicates joined by AND, as the plan shows them.
pub(crate) fn and(exprs: &[&Expr]) -> String {
    exprs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(" AND ")
}
