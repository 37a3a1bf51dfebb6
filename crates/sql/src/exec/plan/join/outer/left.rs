//! An outer join's preserved (left) side: planned when the join is, read when its pairs are
//! made, each row given on as the read finds it rather than collected first.
//!
//! A left side that is itself an outer join (`a LEFT JOIN b LEFT JOIN c`) is planned as one
//! and gives its pairs as it makes them, so that a chain of outer joins holds none of its
//! intermediate results. A left side of one table is read by its access path straight into
//! the pairing; any other is joined by `join_leaves`, whose last step gives its rows on.

use walden_engine::types::Value;

use super::super::explain::estimated_leaf;
use super::super::{kept_columns, Filtered, Flat, FromPlan, Input, Shape};
use super::{outer_join_of, OuterJoin};
use crate::ast::{Expr, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{Col, Env};
use crate::exec::plan::access::{RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// An outer join's left side, planned, not read.
pub(in crate::exec::plan::join) struct LeftSide<'p> {
    plan: LeftPlan<'p>,
    /// The columns of the rows its read gives.
    read_cols: Vec<Col>,
    /// The positions among `read_cols` of the columns a pair carries (`cols`); None where it
    /// carries them all.
    keep: Option<Vec<usize>>,
    /// The columns a pair carries of it.
    pub(super) cols: Vec<Col>,
}

/// Where a left side's rows come from.
pub(super) enum LeftPlan<'p> {
    /// A FROM clause of its own: a table, inner joins, rows computed up front.
    From(FromPlan<'p>),
    /// An outer join, its pairs filtered by the enclosing WHERE conjuncts that name only its
    /// columns.
    Outer(Box<OuterJoin<'p>>, Vec<&'p Expr>),
}

/// What [`Run::run_outer_join`] reads a left side with: its plan, the columns its read
/// gives, the positions of those a pair carries, and those columns.
pub(super) type LeftParts<'p> = (LeftPlan<'p>, Vec<Col>, Option<Vec<usize>>, Vec<Col>);

impl<'p> LeftSide<'p> {
    pub(super) fn into_parts(self) -> LeftParts<'p> {
        (self.plan, self.read_cols, self.keep, self.cols)
    }
}

/// Gives `sink` each row after cutting it to its leaf's part of a joined row.
struct Shaped<'s> {
    shape: Shape,
    sink: &'s mut dyn RowSink,
}

impl RowSink for Shaped<'_> {
    fn push(&mut self, run: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
        self.shape.apply(&mut row);
        self.sink.push(run, row)
    }
}

impl Run<'_> {
    /// Plans the left side `left` of an outer join, applying to it the conjuncts of
    /// `pushed` that name only its columns; a block's `demand` cuts its rows to the columns
    /// the block reads.
    pub(super) fn plan_left<'e: 'p, 'p>(
        &mut self,
        left: &'e TableSource,
        pushed: &[&'e Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        implied: &'p mut Vec<Expr>,
    ) -> Result<LeftSide<'p>, SqlError> {
        // An outer join the pushed conjuncts make inner is planned as the inner join it is.
        let reduced = self.reduced_outer_joins(std::slice::from_ref(left), &[], pushed);
        let outer_join = outer_join_of(left).filter(|j| !reduced.inner(j));
        let (plan, read_cols) = match outer_join {
            Some(j) => {
                let (l, r, on) = (&j.left, &j.right, j.on.as_ref());
                let join =
                    self.plan_outer_join(l, r, j.kind, on, pushed, outer, demand, implied)?;
                let cols = join.cols.clone();
                let one =
                    Flat { leaves: vec![estimated_leaf(cols.clone(), 0.0)], ..Flat::default() };
                // As `place` takes an enclosing query's conjuncts: those whose every column
                // is one of the join's.
                let own: Vec<&Expr> =
                    pushed.iter().copied().filter(|e| one.owns_all_columns(e)).collect();
                (LeftPlan::Outer(Box::new(join), own), cols)
            }
            None => {
                let sources = std::slice::from_ref(left);
                let (plan, _) = self.prepare_from(sources, None, pushed, outer, demand, implied)?;
                let cols: Vec<Col> =
                    plan.flat.leaves.iter().flat_map(|l| l.cols.iter().cloned()).collect();
                (LeftPlan::From(plan), cols)
            }
        };
        let keep = demand
            .map(|d| kept_columns(&read_cols, Some(d)))
            .filter(|keep| keep.len() < read_cols.len());
        let cols = match &keep {
            None => read_cols.clone(),
            Some(keep) => keep.iter().map(|&i| read_cols[i].clone()).collect(),
        };
        Ok(LeftSide { plan, read_cols, keep, cols })
    }

    /// Gives `sink` the rows of a left side planned as `plan` (of columns `cols`), until it
    /// says stop.
    pub(super) fn read_left(
        &mut self,
        plan: LeftPlan<'_>,
        cols: &[Col],
        outer: Option<&Env<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        match plan {
            LeftPlan::Outer(join, own) => {
                let mut filtered = Filtered { cols, exprs: &own, outer, sink };
                self.run_outer_join(*join, outer, Some(&mut filtered))?;
            }
            LeftPlan::From(FromPlan { mut flat, mut semis }) => {
                if semis.is_empty() && self.read_one_table(&mut flat, outer, sink)? {
                    return Ok(());
                }
                let rest = self.join_leaves(&mut flat, &mut semis, outer, None, Some(sink))?;
                for (n, row) in rest.rows.into_iter().enumerate() {
                    self.row_interruption_point(n)?;
                    if !sink.push(self, row)? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads `flat` into `sink` when it is one table whose every conjunct is its own or a
    /// constant's, as `join_leaves` would read it but without collecting the rows; false
    /// (nothing read) for any other plan.
    fn read_one_table(
        &mut self,
        flat: &mut Flat<'_>,
        outer: Option<&Env<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<bool, SqlError> {
        let simple = flat.conjuncts.iter().all(|c| !c.semi && matches!(c.leaves, Some(0 | 1)));
        let t = match flat.leaves.as_slice() {
            [leaf] if simple => match &leaf.input {
                Input::Table(t) => super::super::clone_ref(t),
                _ => return Ok(false),
            },
            _ => return Ok(false),
        };
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        let mut local = Vec::new();
        for c in flat.conjuncts.iter_mut() {
            c.applied = true;
            if c.leaves == Some(0) {
                // Conjuncts of no column go first, as `join_leaves` checks them.
                if self.predicate(c.expr, &env)? != Some(true) {
                    return Ok(true);
                }
            } else {
                local.push(c.expr);
            }
        }
        let cols = flat.leaves[0].read_cols().to_vec();
        let path = self.path(flat, &t, &local, 0, 0);
        let keep = Some(RowFilter { cols: &cols, exprs: &local, outer });
        let mut shaped = Shaped { shape: flat.shape(0), sink };
        self.read_path_or_scan_into(&t, &path, &env, keep, &mut shaped)?;
        Ok(true)
    }
}
