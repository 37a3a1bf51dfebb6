//! An outer join whose inner side is read once and held: filtered by the ON conjuncts on it
//! alone where it is not preserved, cut to the columns the pairs carry, and matched with each
//! left row, as it comes, through a hash of the ON condition's equalities, or by nested loops
//! without one. A FULL JOIN notes which inner rows matched and adds the others,
//! NULL-extended, last.

use walden_engine::types::Value;

use super::super::hash_table::HashMatch;
use super::super::{explained_only, Emitted, Flat, Input, JoinOutput, Narrowed};
use super::pairs::Joined;
use crate::ast::JoinKind;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::plan::access::{AccessPath, RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// [`super::Method::Read`]'s inner side, read and hashed.
pub(super) struct ReadInner {
    /// Its rows, cut to the columns the pairs carry.
    rows: Vec<Vec<Value>>,
    /// Its hash by the equalities' inner sides, None where there are none.
    matcher: Option<HashMatch>,
    /// Every row's position: the candidates of each left row without a hash.
    every: Vec<usize>,
    /// A FULL JOIN's note of the inner rows some pair matched; empty otherwise.
    matched: Vec<bool>,
}

impl ReadInner {
    /// Whether a candidate's key always equals its probe's (`HashMatch::exact`): the
    /// equalities then need no check on the pair.
    pub(super) fn exact(&self) -> bool {
        self.matcher.as_ref().is_some_and(HashMatch::exact)
    }
}

impl Run<'_> {
    /// Reads the inner side `right` of `join` (its leaf 1 in `both`) and hashes it.
    pub(super) fn read_inner(
        &mut self,
        right: Input,
        join: &Joined<'_, '_>,
        both: &Flat<'_>,
    ) -> Result<ReadInner, SqlError> {
        let (right_cols, kept, outer) = (join.right_cols, join.kept, join.outer);
        let mut narrowed =
            Narrowed { keep: kept, whole: kept.len() == right_cols.len(), rows: Vec::new() };
        match right {
            Input::Rows(rows) => {
                for row in self.filter_rows(right_cols, rows, join.pushed, outer)? {
                    narrowed.push(self, row)?;
                }
            }
            Input::Estimated(_) => return Err(explained_only()),
            Input::Table(t) => {
                let path = self.path(both, &t, join.pushed, 1, 0);
                let keep = Some(RowFilter { cols: right_cols, exprs: join.pushed, outer });
                let env = Env { cols: &[], row: &[], outer, computed: &[] };
                // A probe that does not convert to its key: the scan's comparisons say
                // what it means.
                if !self.read_path_into(&t, &path, &env, keep, &mut narrowed)? {
                    self.read_path_into(&t, &AccessPath::scan(), &env, keep, &mut narrowed)?;
                }
            }
        }
        let rows = narrowed.rows;
        let r_cols: Vec<Col> = kept.iter().map(|&i| right_cols[i].clone()).collect();
        let matcher = if join.keys.is_empty() {
            None
        } else {
            Some(HashMatch::build(self, join.keys, &r_cols, &rows, outer)?)
        };
        let every = if matcher.is_none() { (0..rows.len()).collect() } else { Vec::new() };
        let full = join.kind == JoinKind::FullOuter;
        let matched = if full { vec![false; rows.len()] } else { Vec::new() };
        Ok(ReadInner { rows, matcher, every, matched })
    }

    /// Pairs the left row `lrow` with the inner rows of `inner` that match it, each pair
    /// given to `out` where `check` holds of it; a row of a LEFT or FULL JOIN that none
    /// matched is given NULL-extended.
    pub(super) fn pair_read(
        &mut self,
        inner: &mut ReadInner,
        lrow: Vec<Value>,
        join: &Joined<'_, '_>,
        check: &mut Filter<'_>,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        let keep_left = matches!(join.kind, JoinKind::LeftOuter | JoinKind::FullOuter);
        let rw = join.kept.len();
        let ReadInner { rows, matcher, every, matched } = inner;
        let candidates: &[usize] = match matcher {
            Some(m) => {
                m.candidates(self, join.probes, &Env::new(join.left_cols, &lrow, join.outer))?
            }
            None => every,
        };
        if join.kind != JoinKind::FullOuter {
            let pair = |k: usize| rows[candidates[k]].as_slice();
            let emitted = self.emit_each(out, lrow, candidates.len(), pair, check)?;
            return self.keep_unmatched(out, emitted, keep_left, rw);
        }
        // A FULL JOIN also notes which right rows matched.
        let mut any = false;
        for &ri in candidates {
            let mut row = Vec::with_capacity(lrow.len() + rw);
            row.extend_from_slice(&lrow);
            row.extend_from_slice(&rows[ri]);
            if self.filter_holds(check, &row)? {
                any = true;
                matched[ri] = true;
                out.push(self, row)?;
            }
        }
        let left = Emitted { full: false, matched: any, left: Some(lrow) };
        self.keep_unmatched(out, left, keep_left, rw)
    }

    /// A FULL JOIN's inner rows that no pair matched, NULL-extended on the left (`lw`
    /// values), given to `out` until it is full; nothing for another join.
    pub(super) fn finish_read(
        &mut self,
        inner: ReadInner,
        lw: usize,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        for (n, (r, matched)) in inner.rows.iter().zip(inner.matched).enumerate() {
            self.row_interruption_point(n)?;
            if out.full() {
                break;
            }
            if !matched {
                let mut row: Vec<Value> = vec![Value::Null; lw];
                row.extend_from_slice(r);
                out.push(self, row)?;
            }
        }
        Ok(())
    }
}
