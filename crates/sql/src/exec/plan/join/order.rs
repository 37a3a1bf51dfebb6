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
//!   (`Transaction::sample_column_distinct`); where neither is known (a leaf that is no
//!   table), the larger side is taken to be a key the other references. Without an
//!   equality, `rows_s × own(R)` times the filter selectivity for each conjunct joining them;
//! * cost: the cheapest of index nested loops (`rows_s ×` the seek's cost), a hash join
//!   (`rows_s + own(R)`) and nested loops (`rows_s × own(R)`).
//!
//! A leaf no conjunct connects to the set is only considered when no connected one is left,
//! so cross products come last, as in the greedy choice.

use super::{Flat, Input, FILTER_SELECTIVITY};
use crate::ast::{BinaryOp, Expr, ExprKind};
use crate::exec::eval::find_column;
use crate::exec::session::Run;

/// Leaves up to which every left-deep order is costed (2^8 sets).
pub(super) const MAX_SEARCHED: usize = 8;

/// One entry of the search: cost so far, estimated rows, and the order.
type Best = Option<(f64, f64, Vec<usize>)>;

impl Run<'_> {
    /// The order in which to join `flat`'s leaves, cheapest by estimate first.
    pub(super) fn join_order(&self, flat: &Flat<'_>) -> Vec<usize> {
        let n = flat.leaves.len();
        let own: Vec<f64> = (0..n).map(|i| self.own_rows(flat, i)).collect();
        let mut best: Vec<Best> = vec![None; 1 << n];
        for (i, &rows) in own.iter().enumerate() {
            best[1 << i] = Some((rows, rows, vec![i]));
        }
        for mask in 1..(1usize << n) {
            let Some((cost, rows, order)) = best[mask].clone() else { continue };
            let connected = |r: usize| self.connects(flat, mask as u64, r);
            let any_connected = (0..n).any(|r| mask >> r & 1 == 0 && connected(r));
            for r in 0..n {
                if mask >> r & 1 == 1 || (any_connected && !connected(r)) {
                    continue;
                }
                let (step_cost, out) = self.estimate_step(flat, mask as u64, rows, r, &own);
                let next = mask | 1 << r;
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
        let bit = 1u64 << i;
        let local: Vec<&Expr> =
            flat.conjuncts.iter().filter(|c| c.leaves == Some(bit)).map(|c| c.expr).collect();
        let rows = match &flat.leaves[i].input {
            Input::Rows(rows) => rows.len() as f64,
            Input::Estimated(rows) => *rows,
            Input::Table(t) => self.path(flat, t, &local, i, 0).rows,
        };
        let kept: f64 = local.iter().map(|e| self.selectivity(flat, e)).product();
        (rows * kept).max(1.0)
    }

    /// The fraction of a leaf's rows its own conjunct `e` is guessed to keep. Where the
    /// column's distinct values `d` are known (`distinct_values`): `column = constant`
    /// keeps 1/d, `column IN (k constants)` k/d, and `x IN (subquery)` whose rows were
    /// computed (an uncorrelated one, `Run::uncorrelated_filter`) its n rows' n/d, each at
    /// most [`FILTER_SELECTIVITY`]; an OR keeps what either branch keeps (`a + b - ab`), an AND in it the
    /// product of its parts. Anything else keeps [`FILTER_SELECTIVITY`]. So `n_name =
    /// 'FRANCE' OR n_name = 'GERMANY'` keeps 2 of 25 nations rather than 7.5, which decides
    /// whether a plan starts from them.
    fn selectivity(&self, flat: &Flat<'_>, e: &Expr) -> f64 {
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
    /// the rows that come out.
    pub(super) fn estimate_step(
        &self,
        flat: &Flat<'_>,
        mask: u64,
        rows_s: f64,
        r: usize,
        own: &[f64],
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
        let mut cost = product;
        if distinct.is_some() {
            cost = cost.min(rows_s + own[r]);
        }
        if let Input::Table(t) = &flat.leaves[r].input {
            let path = self.path(flat, t, &joining, r, mask);
            if path.any_probe(&mut |e| flat.leaves_of(e).is_some_and(|m| m & mask != 0)) {
                cost = cost.min(rows_s * path.cost);
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
    /// leads, else from the sample of the table's rows; None for a leaf that is no table.
    fn distinct_values(&self, flat: &Flat<'_>, (leaf, c): (usize, usize)) -> Option<f64> {
        let l = &flat.leaves[leaf];
        let (Input::Table(t), Some(stats)) = (&l.input, &l.stats) else { return None };
        t.def
            .indexes
            .iter()
            .filter(|i| i.columns.first() == Some(&c))
            .find_map(|i| stats.rows_per_prefix(i.id, 1))
            .map(|per| stats.rows / per.max(1.0))
            .or_else(|| stats.distinct.get(c).copied().flatten())
    }
}

/// The leaf and column position a plain column reference names.
fn column_of(flat: &Flat<'_>, e: &Expr) -> Option<(usize, usize)> {
    let ExprKind::Column(parts) = &e.kind else { return None };
    let leaf = flat.leaf_of(parts)??;
    let c = find_column(flat.leaves[leaf].read_cols(), parts).ok()??;
    Some((leaf, c))
}
