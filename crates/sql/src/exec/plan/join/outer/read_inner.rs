//! An outer join whose inner side is read once and held: filtered by the ON conjuncts on it
//! alone where it is not preserved, cut to the columns the pairs carry, and matched with each
//! left row through a hash of the ON condition's equalities, or by nested loops without one.
//! A FULL JOIN notes which inner rows matched and adds the others, NULL-extended, last.

use walden_engine::types::Value;

use super::super::hash_table::HashMatch;
use super::super::{
    equi_keys, explained_only, is_key_of, Emitted, Flat, Input, JoinOutput, Narrowed,
};
use crate::ast::{Expr, JoinKind};
use crate::exec::eval::{Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::query::Rows;
use crate::exec::plan::access::{AccessPath, RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

impl Run<'_> {
    /// [`Method::Read`] of `join`'s pairs into `out`: the right side read, filtered by
    /// `pushed` (the ON conjuncts on it alone, where it is not preserved), cut to its
    /// `kept` columns, and matched through a hash of the ON condition's equalities, or by
    /// nested loops without one.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn join_read_right(
        &mut self,
        left: Rows,
        right: Input,
        right_cols: &[Col],
        kept: &[usize],
        parts: &[&Expr],
        pushed: &[&Expr],
        both: &Flat<'_>,
        kind: JoinKind,
        run_cols: &[Col],
        outer: Option<&Env<'_>>,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        let keep_left = matches!(kind, JoinKind::LeftOuter | JoinKind::FullOuter);
        let keep_right = kind == JoinKind::FullOuter;
        let lw = left.cols.len();
        let mut narrowed =
            Narrowed { keep: kept, whole: kept.len() == right_cols.len(), rows: Vec::new() };
        match right {
            Input::Rows(rows) => {
                for row in self.filter_rows(right_cols, rows, pushed, outer)? {
                    narrowed.push(self, row)?;
                }
            }
            Input::Estimated(_) => return Err(explained_only()),
            Input::Table(t) => {
                let path = self.path(both, &t, pushed, 1, 0);
                let keep = Some(RowFilter { cols: right_cols, exprs: pushed, outer });
                let env = Env { cols: &[], row: &[], outer, computed: &[] };
                // A probe that does not convert to its key: the scan's comparisons say
                // what it means.
                if !self.read_path_into(&t, &path, &env, keep, &mut narrowed)? {
                    self.read_path_into(&t, &AccessPath::scan(), &env, keep, &mut narrowed)?;
                }
            }
        }
        let right = narrowed.rows;
        let r_cols: Vec<Col> = kept.iter().map(|&i| right_cols[i].clone()).collect();
        let rw = r_cols.len();
        let keys = equi_keys(self, both, parts, 1, 2, &left.cols, &r_cols);
        let matcher = if keys.is_empty() {
            None
        } else {
            Some(HashMatch::build(self, &keys, &r_cols, &right, outer)?)
        };
        // The conjuncts on the inner side alone already filtered it: each is checked on a
        // pair only where they did not (LIKE on every matched row again, TPC-H Q13's); nor
        // is the equality an exact hash found its candidates by (`HashMatch::exact`).
        let exact = matcher.as_ref().is_some_and(HashMatch::exact);
        let checks: Vec<&Expr> = parts
            .iter()
            .copied()
            .filter(|e| !pushed.iter().any(|p| std::ptr::eq(*p, *e)))
            .filter(|e| !(exact && is_key_of(e, &keys)))
            .collect();
        let mut check = Filter::new(RowFilter { cols: run_cols, exprs: &checks, outer });
        let mut right_matched = vec![false; right.len()];
        let probes = HashMatch::probes(&keys, &left.cols);
        let every: Vec<usize> =
            if matcher.is_none() { (0..right.len()).collect() } else { Vec::new() };
        for (n, lrow) in left.rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            if out.full() {
                return Ok(());
            }
            let candidates: &[usize] = match &matcher {
                Some(m) => m.candidates(self, &probes, &Env::new(&left.cols, &lrow, outer))?,
                None => &every,
            };
            if !keep_right {
                let pair = |k: usize| right[candidates[k]].as_slice();
                let emitted = self.emit_each(out, lrow, candidates.len(), pair, &mut check)?;
                self.keep_unmatched(out, emitted, keep_left, rw)?;
                continue;
            }
            // A FULL JOIN also notes which right rows matched.
            let mut matched = false;
            for &ri in candidates {
                let mut row = Vec::with_capacity(lw + rw);
                row.extend_from_slice(&lrow);
                row.extend_from_slice(&right[ri]);
                if self.filter_holds(&mut check, &row)? {
                    matched = true;
                    right_matched[ri] = true;
                    out.push(self, row)?;
                }
            }
            let left = Emitted { full: false, matched, left: Some(lrow) };
            self.keep_unmatched(out, left, keep_left, rw)?;
        }
        if keep_right {
            for (ri, r) in right.iter().enumerate() {
                if out.full() {
                    break;
                }
                if !right_matched[ri] {
                    let mut row: Vec<Value> = vec![Value::Null; lw];
                    row.extend_from_slice(r);
                    out.push(self, row)?;
                }
            }
        }
        Ok(())
    }
}
