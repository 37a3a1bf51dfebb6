//! Semi- and anti-joins by a seek per outer row, and the order in which several of them
//! ready at the same step are applied.
//!
//! A seek reads the subquery's rows with the outer row's key and stops at the first one its
//! conjuncts keep: EXISTS asks for no more. The conjuncts are prepared once for all the
//! seeks, against a found row put after its outer row (`paired_cols`), unless a name of
//! the subquery's own columns is also one of the outer row's: that pair could not tell
//! them apart, and each seek prepares them against the subquery's columns, with the outer
//! row as its enclosing scope.
//!
//! Semi-joins filter the rows joined so far one after another, each only the rows the ones
//! before it kept, so the order matters as it does for any filters: the one that keeps the
//! fewest rows should go first. TPC-H Q21's `EXISTS (... l2 ...)` keeps almost every order
//! line and its `NOT EXISTS (... l3 ...)` a tenth of them: in the text's order the two cost
//! 35,000 seeks, the other way round 19,000 (PostgreSQL's plan runs the anti-join first).
//! Neither keeps a share a statistic predicts (it depends on the other lines of the same
//! order), so the share is measured: when two or more seeking semi-joins are ready, each is
//! run on the same first [`SAMPLE_ROWS`] rows, and the rest of the rows go through them in
//! the order of the rows they kept there, fewest first. The sampled rows are not sought
//! again: each is kept if every semi-join kept it. A semi-join that reads its subquery
//! whole into a hash pays that read whatever it is given, and goes first, in the text's
//! order. The rows come out in the same order whatever the order of the filters.

use walden_engine::types::Value;

use super::SemiJoin;
use crate::ast::{Expr, ExprKind};
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::filter::{read_by, Filter};
use crate::exec::execute::query::visit_children;
use crate::exec::execute::query::TableRef;
use crate::exec::plan::access::AccessPath;
use crate::exec::plan::access::{RowFilter, RowSink};
use crate::exec::session::{Run, SeekSpare};
use crate::exec::SqlError;

/// The rows each of several seeking semi-joins is tried on to measure what it keeps.
const SAMPLE_ROWS: usize = 128;

/// A seek's read, stopped at the first row the subquery's conjuncts keep.
struct FirstMatch {
    found: bool,
}

impl RowSink for FirstMatch {
    fn borrows(&self) -> bool {
        true
    }

    fn push_borrowed(&mut self, _: &mut Run<'_>, _: &[Value]) -> Result<bool, SqlError> {
        self.found = true;
        Ok(false)
    }

    fn push(&mut self, _: &mut Run<'_>, _: Vec<Value>) -> Result<bool, SqlError> {
        self.found = true;
        Ok(false)
    }
}

/// A seek's read paired with its outer row (in `pair`'s first `outer_len` values), stopped
/// at the first pair the subquery's conjuncts keep.
struct PairedMatch<'f> {
    pair: Vec<Value>,
    outer_len: usize,
    filter: Filter<'f>,
    found: bool,
}

impl RowSink for PairedMatch<'_> {
    fn borrows(&self) -> bool {
        true
    }

    fn push_borrowed(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        self.pair.truncate(self.outer_len);
        self.pair.extend_from_slice(row);
        self.found = run.filter_holds(&mut self.filter, &self.pair)?;
        Ok(!self.found)
    }

    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        self.push_borrowed(run, &row)
    }
}

/// The outer row's columns `cols` then the subquery's `inner`, if every column `exprs`
/// name resolves there as in the subquery's scope: a name of the subquery's columns to
/// none of the outer ones, any other to at most one outer column (or to none: an
/// enclosing query's).
fn paired_cols(cols: &[Col], inner: &[Col], exprs: &[&Expr]) -> Option<Vec<Col>> {
    fn fits(e: &Expr, cols: &[Col], inner: &[Col]) -> bool {
        if let ExprKind::Column(parts) = &e.kind {
            return matches!(
                (find_column(inner, parts), find_column(cols, parts)),
                (Ok(Some(_)), Ok(None)) | (Ok(None), Ok(_))
            );
        }
        let mut all = true;
        visit_children(e, &mut |c| all &= fits(c, cols, inner));
        all
    }
    exprs.iter().all(|e| fits(e, cols, inner)).then(|| cols.iter().chain(inner).cloned().collect())
}

impl Run<'_> {
    /// Which rows of `rows` (of columns `cols`) `semi` keeps, by a seek per row; None where
    /// a seek per row does not cost less for `estimate` rows than reading the subquery's
    /// table once, or a probe's value does not convert to its key's type (the caller then
    /// hashes the subquery, whose per-row form says what such a probe means).
    pub(in crate::exec::plan::join) fn seek_semi_keep(
        &mut self,
        semi: &mut SemiJoin<'_>,
        cols: &[Col],
        rows: &[Vec<Value>],
        outer: Option<&Env<'_>>,
        estimate: f64,
    ) -> Result<Option<Vec<bool>>, SqlError> {
        let Some((t, path, all)) = self.semi_seek(semi, estimate) else {
            return Ok(None);
        };
        let inner_cols = semi.inner.leaves[0].read_cols().to_vec();
        // The seeks keep one cursor from each to the next, so that seeks in key order start
        // in the last one's leaf (`Run::seek_spare`); an enclosing step's spare is set aside
        // meanwhile and given back after.
        let enclosing = self.seek_spare.replace(SeekSpare::default());
        let keep = self.seek_each(&t, &path, &all, &inner_cols, cols, rows, outer, semi.anti);
        self.seek_spare = enclosing;
        keep
    }

    /// [`Run::seek_semi_keep`]'s seeks, one per row of `rows` by `path` into `t`, each
    /// stopped at the first found row for which every conjunct of `all` holds: whether each
    /// row is kept (with `anti`, whether none was found), or None if a probe does not
    /// convert to the key.
    #[allow(clippy::too_many_arguments)]
    fn seek_each(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        all: &[&Expr],
        inner_cols: &[Col],
        cols: &[Col],
        rows: &[Vec<Value>],
        outer: Option<&Env<'_>>,
        anti: bool,
    ) -> Result<Option<Vec<bool>>, SqlError> {
        let mut keep = Vec::with_capacity(rows.len());
        if let Some(pair_cols) = paired_cols(cols, inner_cols, all) {
            let filter = Filter::new(RowFilter { cols: &pair_cols, exprs: all, outer });
            // The outer columns the conjuncts read: only those are copied into the pair, the
            // others left NULL (no conjunct sees them), so a seek does not copy every string
            // of its outer row. None where that is not known: all are copied.
            let read = read_by(all, &pair_cols, cols.len());
            let mut sink =
                PairedMatch { pair: Vec::new(), outer_len: cols.len(), filter, found: false };
            for (n, row) in rows.iter().enumerate() {
                self.row_interruption_point(n)?;
                let env = Env::new(cols, row, outer);
                sink.pair.clear();
                match &read {
                    Some(read) => sink.pair.extend(row.iter().zip(read).map(|(v, &r)| {
                        if r {
                            v.clone()
                        } else {
                            Value::Null
                        }
                    })),
                    None => sink.pair.extend_from_slice(row),
                }
                sink.found = false;
                if !self.read_path_into(t, path, &env, None, &mut sink)? {
                    return Ok(None);
                }
                keep.push(sink.found != anti);
            }
            return Ok(Some(keep));
        }
        for (n, row) in rows.iter().enumerate() {
            self.row_interruption_point(n)?;
            let env = Env::new(cols, row, outer);
            // The subquery's names resolve first among its own columns, then the row's.
            let filter = RowFilter { cols: inner_cols, exprs: all, outer: Some(&env) };
            let mut sink = FirstMatch { found: false };
            if !self.read_path_into(t, path, &env, Some(filter), &mut sink)? {
                return Ok(None);
            }
            keep.push(sink.found != anti);
        }
        Ok(Some(keep))
    }

    /// Applies `semis` to `rows` (of columns `cols`), in the order the module's
    /// documentation gives: the rows every one keeps, in their order.
    pub(in crate::exec::plan::join) fn apply_semi_joins(
        &mut self,
        semis: &mut [&mut SemiJoin<'_>],
        cols: &[Col],
        mut rows: Vec<Vec<Value>>,
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let estimate = rows.len() as f64;
        let mut seeking = Vec::new();
        for (k, semi) in semis.iter_mut().enumerate() {
            if self.semi_seek(semi, estimate).is_some() {
                seeking.push(k);
            } else {
                rows = self.apply_semi_join(semi, cols, rows, outer)?;
            }
        }
        if seeking.len() < 2 || rows.len() < 2 * SAMPLE_ROWS {
            for k in seeking {
                rows = self.apply_semi_join(semis[k], cols, rows, outer)?;
            }
            return Ok(rows);
        }
        let estimate = rows.len() as f64;
        let mut sampled = vec![true; SAMPLE_ROWS];
        let mut kept_by = Vec::with_capacity(seeking.len());
        for &k in &seeking {
            let sample = &rows[..SAMPLE_ROWS];
            let Some(keep) = self.seek_semi_keep(semis[k], cols, sample, outer, estimate)? else {
                // A probe that does not convert: each is applied its own way, in order.
                for k in seeking {
                    rows = self.apply_semi_join(semis[k], cols, rows, outer)?;
                }
                return Ok(rows);
            };
            kept_by.push((keep.iter().filter(|&&k| k).count(), k));
            sampled.iter_mut().zip(keep).for_each(|(s, k)| *s &= k);
        }
        // Stable: semi-joins that keep as many go in the text's order.
        kept_by.sort_by_key(|&(kept, _)| kept);
        let mut rest = rows.split_off(SAMPLE_ROWS);
        for (_, k) in kept_by {
            rest = self.apply_semi_join(semis[k], cols, rest, outer)?;
        }
        let mut out: Vec<Vec<Value>> =
            rows.into_iter().zip(sampled).filter_map(|(r, k)| k.then_some(r)).collect();
        out.append(&mut rest);
        Ok(out)
    }
}
