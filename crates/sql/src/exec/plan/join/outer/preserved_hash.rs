//! A LEFT JOIN (or an inner one written inside an outer join) whose preserved side is the
//! smaller: its rows are hashed by the ON condition's equalities and the inner table is read
//! once past them, each inner row probing the hash (SQL Server's and PostgreSQL's hash right
//! join). The inner rows are never held: TPC-H Q13 hashes its 15,000 customers and streams
//! 150,000 orders past them, instead of holding and hashing the orders and probing them
//! with each customer. The left rows no inner row matched come out last, NULL-extended.

use walden_engine::types::Value;

use super::super::hash_table::HashMatch;
use super::super::{is_key_of, Flat, JoinOutput};
use crate::ast::Expr;
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::query::{Rows, TableRef};
use crate::exec::plan::access::{RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// How many inner rows, as estimated, a preserved side must be outnumbered by to be the one
/// hashed: the inner side is then neither held nor hashed, and a probe per inner row costs
/// what a probe per left row would.
const INNER_ROWS_PER_LEFT_ROW: f64 = 1.0;

/// The join's two sides as [`Run::outer_join_sides`] has them.
pub(super) struct Sides<'a, 'e> {
    /// The preserved side's rows, read.
    pub(super) left: Rows,
    /// The inner table, its columns as read, and those of them the pairs carry on.
    pub(super) table: &'a TableRef,
    pub(super) cols: &'a [Col],
    pub(super) kept: &'a [usize],
    /// Leaf 0 the left rows, leaf 1 the inner table, its statistics loaded.
    pub(super) both: &'a Flat<'e>,
}

impl Run<'_> {
    /// Whether to hash the preserved side, `left_rows` rows, rather than the inner table `t`
    /// read under `pushed`, the ON conjuncts on it alone; `both` is the join's two leaves,
    /// leaf 1 `t` with its statistics loaded.
    pub(in crate::exec::plan::join) fn hash_preserved_side(
        &self,
        both: &Flat<'_>,
        t: &TableRef,
        pushed: &[&Expr],
        left_rows: f64,
    ) -> bool {
        self.path(both, t, pushed, 1, 0).rows >= left_rows * INNER_ROWS_PER_LEFT_ROW
    }

    /// The join of `sides` by the hash of its left rows on `keys` (left expression, inner
    /// expression), the inner table read under `pushed` and every pair (of columns
    /// `run_cols`) checked against the other conjuncts of `parts`; with `keep_left`, the
    /// unmatched left rows NULL-extended. The rows go to `out`, until it is full.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn join_by_preserved_hash(
        &mut self,
        sides: Sides<'_, '_>,
        keys: &[(&Expr, &Expr)],
        parts: &[&Expr],
        pushed: &[&Expr],
        keep_left: bool,
        run_cols: &[Col],
        outer: Option<&Env<'_>>,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        let Rows { cols: l_cols, rows: left } = sides.left;
        // `HashMatch` builds on a key pair's second expression and probes with its first.
        let swapped: Vec<(&Expr, &Expr)> = keys.iter().map(|&(l, r)| (r, l)).collect();
        let matcher = HashMatch::build(self, &swapped, &l_cols, &left, outer)?;
        let exact = matcher.exact();
        let checks: Vec<&Expr> = parts
            .iter()
            .copied()
            .filter(|e| !pushed.iter().any(|p| std::ptr::eq(*p, *e)))
            .filter(|e| !(exact && is_key_of(e, keys)))
            .collect();
        let mut probe = ProbePreserved {
            left: &left,
            matched: vec![false; left.len()],
            matcher: &matcher,
            probes: HashMatch::probes(&swapped, sides.cols),
            inner_cols: sides.cols,
            kept: sides.kept,
            check: Filter::new(RowFilter { cols: run_cols, exprs: &checks, outer }),
            outer,
            out,
        };
        let path = self.path(sides.both, sides.table, pushed, 1, 0);
        let keep = Some(RowFilter { cols: sides.cols, exprs: pushed, outer });
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        self.read_path_or_scan_into(sides.table, &path, &env, keep, &mut probe)?;
        let matched = probe.matched;
        if keep_left {
            let inner_width = sides.kept.len();
            for (n, (mut row, matched)) in left.into_iter().zip(matched).enumerate() {
                self.row_interruption_point(n)?;
                if out.full() {
                    break;
                }
                if !matched {
                    row.extend(std::iter::repeat_n(Value::Null, inner_width));
                    out.push(self, row)?;
                }
            }
        }
        Ok(())
    }
}

/// The sink the inner table's rows are read into: each probes the preserved side's hash,
/// and each pair that passes the checks goes to `out`, its left row noted as matched.
struct ProbePreserved<'a, 'o, 'f> {
    left: &'a [Vec<Value>],
    matched: Vec<bool>,
    matcher: &'a HashMatch,
    /// The inner expressions of the keys, prepared for rows of `inner_cols`.
    probes: Vec<Scalar<'a>>,
    inner_cols: &'a [Col],
    /// The inner columns a pair carries on.
    kept: &'a [usize],
    check: Filter<'a>,
    outer: Option<&'a Env<'a>>,
    out: &'o mut JoinOutput<'f>,
}

impl RowSink for ProbePreserved<'_, '_, '_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        self.push_borrowed(run, &row)
    }

    /// An inner row is only copied into its pairs, so the scan may lend it.
    fn borrows(&self) -> bool {
        true
    }

    fn push_borrowed(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        let env = Env::new(self.inner_cols, row, self.outer);
        let candidates = self.matcher.candidates(run, &self.probes, &env)?;
        for &li in candidates {
            let left = &self.left[li];
            let mut pair = Vec::with_capacity(left.len() + self.kept.len());
            pair.extend_from_slice(left);
            pair.extend(self.kept.iter().map(|&i| row[i].clone()));
            if run.filter_holds(&mut self.check, &pair)? {
                self.matched[li] = true;
                self.out.push(run, pair)?;
                if self.out.full() {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}
