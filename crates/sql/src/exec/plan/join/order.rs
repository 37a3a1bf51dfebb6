//! Join order: the cheapest left-deep order of a FROM clause's leaves, by estimated cost.
//!
//! Greedy "smallest leaf first" goes wrong where a small leaf fans out: five tables where a
//! 20-row dimension table is the smallest leaf by itself, but joins to thousands of rows of
//! the next, while the selective predicate is on another table. So for up to
//! [`MAX_SEARCHED`] leaves every left-deep order is costed, by dynamic programming over the
//! sets of leaves joined (as System R and PostgreSQL's standard join search do, without
//! bushy plans): `best[set]` is the cheapest way found to join `set`, its estimated rows and
//! its order. Beyond that the executor's greedy choice (`Run::next_step`) decides alone.
//!
//! Estimates per step, joining leaf R to the set S of estimated `rows_s` rows:
//!
//! * R's own rows: its access path's estimate under its own conjuncts, times
//!   [`FILTER_SELECTIVITY`] for each (the same figure the greedy choice uses);
//! * rows out: with an equality between a column of S and a column of R,
//!   `rows_s × own(R) / d`, where `d` is the larger number of distinct values of the two
//!   columns, known for a column that leads an index (table rows ÷ rows per key prefix, from
//!   the sampled statistics) and otherwise estimated from a sample of the table's rows
//!   (`Transaction::sample_columns`); where neither is known (a leaf that is no
//!   table), the larger side is taken to be a key the other references. Without an
//!   equality, `rows_s × own(R)` times the filter selectivity for each conjunct joining them;
//! * cost: the cheapest of index nested loops (`rows_s ×` the seek's cost and
//!   [`SEEK_COST`] for its descent of the index), a hash join
//!   (`read(R)`, twice the smaller of `rows_s` and `own(R)`, which it builds on, and the
//!   larger) and nested loops
//!   (`read(R) + rows_s × own(R)`), where
//!   `read(R)` is the cost of R's access path under its own conjuncts: the rows it reads
//!   (a key lookup counting for several), which a scan pays whatever its filter keeps. So a
//!   join of a few rows of `part` to `lineitem` seeks lineitem's index of `l_partkey` per
//!   row rather than scan all of it for a hash join (TPC-H Q19). The first leaf costs its
//!   read and its rows.
//!
//! A semi- or anti-join whose outer leaves a step completes costs a probe (a seek, or as
//! much) per row of that step's output and keeps [`FILTER_SELECTIVITY`] of them, so that joins that cut rows come
//! before it.
//!
//! A leaf no conjunct connects to the set is only considered when no connected one is left,
//! so cross products come last, as in the greedy choice.

use super::{Flat, Input, FILTER_SELECTIVITY};
use crate::ast::{BinaryOp, Expr, ExprKind};
use crate::exec::eval::find_column;
use crate::exec::plan::access::SEEK_COST;
use crate::exec::scalar;
use crate::exec::session::Run;
use walden_engine::types::Value;

/// Leaves up to which every left-deep order is costed (2^8 sets).
pub(super) const MAX_SEARCHED: usize = 8;

/// What putting a row into a hash join's table costs, relative to probing it with one:
/// the row is copied and its key hashed and kept. The step builds on the smaller side
/// (`steps.rs`: the rows joined so far when they are fewer than the leaf's).
pub(super) const HASH_BUILD_COST: f64 = 2.0;

/// One entry of the search: cost so far, estimated rows, and the order.
type Best = Option<(f64, f64, Vec<usize>)>;

impl Run<'_> {
    /// The order in which to join `flat`'s leaves, cheapest by estimate first.
    pub(super) fn join_order(&self, flat: &Flat<'_>) -> Vec<usize> {
        let n = flat.leaves.len();
        let (own, reads) = self.leaf_estimates(flat);
        let mut best: Vec<Best> = vec![None; 1 << n];
        // The first leaf costs its read and the rows it keeps, which the next step holds or
        // probes with (so, of two orders that read the same, the one starting from fewer rows
        // wins: an empty first leaf ends the join before the second is read).
        for (i, &rows) in own.iter().enumerate() {
            best[1 << i] = Some((reads[i] + rows, rows, vec![i]));
        }
        for mask in 1..(1usize << n) {
            let Some((cost, rows, order)) = best[mask].clone() else { continue };
            let connected = |r: usize| self.connects(flat, mask as u64, r);
            let any_connected = (0..n).any(|r| mask >> r & 1 == 0 && connected(r));
            for r in 0..n {
                if mask >> r & 1 == 1 || (any_connected && !connected(r)) {
                    continue;
                }
                let (mut step_cost, mut out) =
                    self.estimate_step(flat, mask as u64, rows, r, &own, &reads);
                let next = mask | 1 << r;
                // The semi- and anti-joins (EXISTS, IN) that this step completes the outer
                // leaves of run on its rows: a probe each, which the rows not yet cut by a
                // later join pay too (TPC-H Q21's EXISTS and NOT EXISTS on lineitem run on a
                // 25th of the rows once the nation is joined).
                for c in flat.conjuncts.iter().filter(|c| c.semi) {
                    let m = c.leaves.unwrap_or(0);
                    if m & !(next as u64) == 0 && m & !(mask as u64) != 0 {
                        step_cost += out * SEEK_COST;
                        out = (out * FILTER_SELECTIVITY).max(1.0);
                    }
                }
                let total = cost + step_cost;
                if best[next].as_ref().is_none_or(|b| total < b.0) {
                    let mut o = order.clone();
                    o.push(r);
                    best[next] = Some((total, out, o));
                }
            }
        }
        best[(1 << n) - 1].take().map_or_else(|| (0..n).collect(), |(_, _, order)| order)
    }

    /// A leaf's estimated rows under its own conjuncts.
    pub(super) fn own_rows(&self, flat: &Flat<'_>, i: usize) -> f64 {
        self.own_estimate(flat, i).0
    }

    /// A leaf's estimated rows under its own conjuncts, and the cost of reading them: its
    /// access path's (the rows it reads, a key lookup counting for several), which a scan
    /// pays in full however few rows its conjuncts keep.
    pub(super) fn own_estimate(&self, flat: &Flat<'_>, i: usize) -> (f64, f64) {
        let bit = 1u64 << i;
        let local: Vec<&Expr> =
            flat.conjuncts.iter().filter(|c| c.leaves == Some(bit)).map(|c| c.expr).collect();
        let (rows, read) = match &flat.leaves[i].input {
            Input::Rows(rows) => (rows.len() as f64, rows.len() as f64),
            Input::Estimated(rows) => (*rows, *rows),
            Input::Table(t) => {
                let path = self.path(flat, t, &local, i, 0);
                (path.rows, path.cost)
            }
        };
        let kept: f64 = local.iter().map(|e| self.selectivity(flat, e)).product();
        ((rows * kept).max(1.0), read.max(1.0))
    }

    /// Every leaf's [`Run::own_estimate`]: the rows, then the read costs.
    pub(super) fn leaf_estimates(&self, flat: &Flat<'_>) -> (Vec<f64>, Vec<f64>) {
        (0..flat.leaves.len()).map(|i| self.own_estimate(flat, i)).unzip()
    }

    /// The fraction of a leaf's rows its own conjunct `e` is guessed to keep. Where the
    /// column's distinct values `d` are known (`distinct_values`): `column = constant`
    /// keeps 1/d, `column IN (k constants)` k/d, and `x IN (subquery)` whose rows were
    /// computed (an uncorrelated one, `Run::uncorrelated_filter`) its n rows' n/d, each at
    /// most [`FILTER_SELECTIVITY`]; an OR keeps what either branch keeps (`a + b - ab`), an AND in it the
    /// product of its parts. Anything else keeps [`FILTER_SELECTIVITY`]. So `n_name =
    /// 'FRANCE' OR n_name = 'GERMANY'` keeps 2 of 25 nations rather than 7.5, which decides
    /// whether a plan starts from them. A comparison of a column that no index leads with
    /// constants is estimated first from the histogram of statistics it leads (auto-created
    /// or user-made, `histogram_selectivity`).
    fn selectivity(&self, flat: &Flat<'_>, e: &Expr) -> f64 {
        if let Some(f) = histogram_selectivity(flat, e) {
            return f;
        }
        let of_column = |x: &Expr, k: f64| {
            column_of(flat, x)
                .and_then(|c| self.distinct_values(flat, c))
                .map_or(FILTER_SELECTIVITY, |d| FILTER_SELECTIVITY.min(k / d.max(1.0)))
        };
        let constant = |x: &Expr| flat.leaves_of(x) == Some(0);
        match &e.kind {
            ExprKind::InSubquery { expr, subquery, negated: false } => {
                match self.cached_row_count(subquery) {
                    Some(n) => of_column(expr, n as f64),
                    None => FILTER_SELECTIVITY,
                }
            }
            ExprKind::Binary { op: BinaryOp::Eq, left, right } if constant(right) => {
                of_column(left, 1.0)
            }
            ExprKind::Binary { op: BinaryOp::Eq, left, right } if constant(left) => {
                of_column(right, 1.0)
            }
            ExprKind::InList { expr, negated: false, list } if list.iter().all(constant) => {
                of_column(expr, list.len() as f64)
            }
            ExprKind::Like { expr, negated, pattern, escape: None } => {
                like_selectivity(flat, expr, pattern, *negated).unwrap_or(FILTER_SELECTIVITY)
            }
            ExprKind::Binary { op: BinaryOp::Or, left, right } => {
                let (a, b) = (self.selectivity(flat, left), self.selectivity(flat, right));
                a + b - a * b
            }
            ExprKind::Binary { op: BinaryOp::And, left, right } => {
                self.selectivity(flat, left) * self.selectivity(flat, right)
            }
            _ => FILTER_SELECTIVITY,
        }
    }

    /// Whether a conjunct joins leaf `r` to the leaves `mask`.
    fn connects(&self, flat: &Flat<'_>, mask: u64, r: usize) -> bool {
        let bit = 1u64 << r;
        flat.conjuncts.iter().any(|c| {
            c.leaves.is_some_and(|m| m & bit != 0 && m & mask != 0 && m & !(mask | bit) == 0)
        })
    }

    /// The estimated cost of joining leaf `r` to the leaves `mask` (of `rows_s` rows), and
    /// the rows that come out. `own` and `reads` are [`Run::leaf_estimates`].
    pub(super) fn estimate_step(
        &self,
        flat: &Flat<'_>,
        mask: u64,
        rows_s: f64,
        r: usize,
        own: &[f64],
        reads: &[f64],
    ) -> (f64, f64) {
        let bit = 1u64 << r;
        let joining: Vec<&Expr> = flat
            .conjuncts
            .iter()
            .filter(|c| c.leaves.is_some_and(|m| m & bit != 0 && m & !(mask | bit) == 0))
            .map(|c| c.expr)
            .collect();
        let crossing = joining.iter().filter(|e| flat.leaves_of(e).is_some_and(|m| m & mask != 0));
        let mut distinct: Option<f64> = None;
        let mut others = 0;
        for e in crossing {
            match self.equality_distinct(flat, e, r, own, rows_s) {
                Some(d) => distinct = Some(distinct.map_or(d, |x: f64| x.max(d))),
                None => others += 1,
            }
        }
        let product = rows_s * own[r];
        let out = match distinct {
            Some(d) => product / d.max(1.0),
            None => product,
        } * FILTER_SELECTIVITY.powi(others);
        let mut cost = reads[r] + product;
        if distinct.is_some() {
            let (build, probe) = (rows_s.min(own[r]), rows_s.max(own[r]));
            cost = cost.min(reads[r] + HASH_BUILD_COST * build + probe);
        }
        if let Input::Table(t) = &flat.leaves[r].input {
            let path = self.path(flat, t, &joining, r, mask);
            if path.any_probe(&mut |e| flat.leaves_of(e).is_some_and(|m| m & mask != 0)) {
                cost = cost.min(rows_s * (path.cost + SEEK_COST));
            }
        }
        (cost, out.max(1.0))
    }

    /// For `a = b` between a column of leaf `r` and a column of another leaf: the larger
    /// number of distinct values of the two columns (see the module's documentation).
    fn equality_distinct(
        &self,
        flat: &Flat<'_>,
        e: &Expr,
        r: usize,
        own: &[f64],
        rows_s: f64,
    ) -> Option<f64> {
        let ExprKind::Binary { op: BinaryOp::Eq, left, right } = &e.kind else { return None };
        let (a, b) = (column_of(flat, left)?, column_of(flat, right)?);
        let (mine, theirs) = if a.0 == r {
            (a, b)
        } else if b.0 == r {
            (b, a)
        } else {
            return None;
        };
        let known = [self.distinct_values(flat, mine), self.distinct_values(flat, theirs)];
        Some(match known {
            [Some(x), Some(y)] => x.max(y),
            [Some(x), None] | [None, Some(x)] => x,
            [None, None] => own[r].max(rows_s),
        })
    }

    /// The distinct values of column `c` of leaf `leaf`: from the statistics of an index it
    /// leads, else from the density of other statistics it leads built from every row
    /// (auto-created ones, as a join column gets), else from the sample of the table's
    /// rows; None for a leaf that is no table.
    fn distinct_values(&self, flat: &Flat<'_>, (leaf, c): (usize, usize)) -> Option<f64> {
        let l = &flat.leaves[leaf];
        let (Input::Table(t), Some(stats)) = (&l.input, &l.stats) else { return None };
        t.def
            .indexes
            .iter()
            .filter(|i| i.columns.first() == Some(&c))
            .find_map(|i| stats.rows_per_prefix(i.id, 1))
            .map(|per| stats.rows / per.max(1.0))
            .or_else(|| {
                // A sample's distinct values are only a lower bound of the table's.
                let h = stats.histogram(c).filter(|h| h.rows_sampled >= h.rows)?;
                Some(1.0 / h.density.first()?.max(f64::MIN_POSITIVE))
            })
            .or_else(|| stats.distinct.get(c).copied().flatten())
    }
}

/// The fraction of its leaf's rows a conjunct comparing one column of a table leaf with
/// constants keeps, by the histogram of statistics that column leads
/// (`TableStats::filter_fraction`), where no index leads it: an index's column is estimated
/// by its access path and its density already.
fn histogram_selectivity(flat: &Flat<'_>, e: &Expr) -> Option<f64> {
    let mask = flat.leaves_of(e)?;
    if mask.count_ones() != 1 {
        return None;
    }
    let leaf = mask.trailing_zeros() as usize;
    let l = &flat.leaves[leaf];
    let (Input::Table(t), Some(stats)) = (&l.input, &l.stats) else { return None };
    let column = |x: &Expr| {
        let (at, c) = column_of(flat, x)?;
        let led = t.def.indexes.iter().any(|i| !i.is_heap() && i.columns.first() == Some(&c));
        (at == leaf && !led).then_some(c)
    };
    stats.filter_fraction(e, &column, &|x| flat.constant(x))
}

/// The fraction of a leaf's rows `column [NOT] LIKE pattern` keeps, where the pattern is a
/// constant and the leaf's statistics sampled the column's values: the fraction of the
/// sampled values it keeps, at least half a sampled row's worth (none seen is not none
/// there). The sample is the table's first rows, in its key's order. So `p_name LIKE
/// '%green%'` keeps the 5% of parts it does (TPC-H Q9) rather than the 30% any filter is
/// guessed to, which decides whether the parts' lineitems are sought or all of them hashed.
/// Matched as the default collation does, which is close enough for an estimate.
fn like_selectivity(flat: &Flat<'_>, expr: &Expr, pattern: &Expr, negated: bool) -> Option<f64> {
    let (leaf, c) = column_of(flat, expr)?;
    let sampled = flat.leaves[leaf].stats.as_ref()?.text.get(c)?.as_ref()?;
    if sampled.is_empty() {
        return None;
    }
    let pattern = match &pattern.kind {
        ExprKind::Literal(lit) => scalar::literal(lit).ok()?,
        _ => flat.constant(pattern)?,
    };
    if !matches!(pattern, Value::Str(_) | Value::NStr(_)) {
        return None;
    }
    let mut kept = 0usize;
    for v in sampled {
        if scalar::like(v, &pattern, None).ok()?? {
            kept += 1;
        }
    }
    let n = sampled.len() as f64;
    let kept = if negated { n - kept as f64 } else { kept as f64 };
    Some((kept.max(0.5) / n).min(1.0))
}

/// The leaf and column position a plain column reference names.
pub(super) fn column_of(flat: &Flat<'_>, e: &Expr) -> Option<(usize, usize)> {
    let ExprKind::Column(parts) = &e.kind else { return None };
    let leaf = flat.leaf_of(parts)??;
    let c = find_column(flat.leaves[leaf].read_cols(), parts).ok()??;
    Some((leaf, c))
}
