//! Outer joins: LEFT, RIGHT and FULL OUTER JOIN as leaves of their own in a FROM clause's
//! plan. The preserved side's rows that find no match are extended with NULLs; a table on the
//! inner side of a LEFT JOIN that the ON condition can seek is sought once per left row, an
//! equality in the ON condition otherwise makes it a hash join.

use walden_engine::types::Value;

use super::hash_table::HashMatch;
use super::order::HASH_BUILD_COST;
use super::{
    clone_ref, conjuncts, drop_locators, equi_keys, explained_only, is_key_of, kept_columns,
    Emitted, Flat, Input, JoinOutput, Leaf, Narrowed,
};
use crate::ast::{Expr, JoinKind, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::query::{Rows, TableRef};
use crate::exec::plan::access::{AccessPath, RowFilter, RowSink, SEEK_COST};
use crate::exec::session::Run;
use crate::exec::SqlError;
use preserved_hash::Sides;

pub(super) mod preserved_hash;

impl Run<'_> {
    /// A LEFT, RIGHT or FULL OUTER JOIN (or an inner one written inside it): the matched
    /// pairs, and the preserved side's unmatched rows extended with NULLs. A table on the
    /// inner side of a LEFT JOIN that the ON condition can seek is sought once per left row;
    /// otherwise an equality in the ON condition makes it a hash join.
    /// `pushed` are conjuncts of an enclosing WHERE clause: a LEFT JOIN applies those that
    /// name only its left side's columns to that side before joining (a WHERE condition on
    /// the preserved side keeps the same rows before the join as after it).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn outer_join(
        &mut self,
        left: &TableSource,
        right: &TableSource,
        kind: JoinKind,
        on: Option<&Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
    ) -> Result<Rows, SqlError> {
        if kind != JoinKind::RightOuter {
            let (mut rows, width) =
                self.outer_join_sides(left, right, kind, on, pushed, outer, demand)?;
            null_extended(&mut rows.cols, width, kind);
            return Ok(rows);
        }
        // `a RIGHT JOIN b` is `b LEFT JOIN a` with the columns put back in order, so that
        // the preserved side drives and the other is sought per row where the ON condition
        // allows (SQL Server's plans show it as a Left Outer Join the same way). WHERE
        // conjuncts naming only the preserved side filter it first, as a LEFT JOIN's do.
        let (Rows { mut cols, mut rows }, width) =
            self.outer_join_sides(right, left, JoinKind::LeftOuter, on, pushed, outer, demand)?;
        null_extended(&mut cols, width, JoinKind::LeftOuter);
        cols.rotate_left(width);
        for row in &mut rows {
            row.rotate_left(width);
        }
        Ok(Rows { cols, rows })
    }

    /// [`Run::outer_join`] of a LEFT or FULL OUTER JOIN (or an inner one), and the width
    /// of its left side's columns.
    #[allow(clippy::too_many_arguments)]
    fn outer_join_sides(
        &mut self,
        left: &TableSource,
        right: &TableSource,
        kind: JoinKind,
        on: Option<&Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
    ) -> Result<(Rows, usize), SqlError> {
        let to_left = if kind == JoinKind::LeftOuter { pushed } else { &[] };
        let left = std::slice::from_ref(left);
        let (mut l, _) = self.plan_pushed(left, None, to_left, outer, None, demand)?;
        if let Some(d) = demand {
            let kept = kept_columns(&l.cols, Some(d));
            if kept.len() < l.cols.len() {
                let mut left = Narrowed { keep: &kept, whole: false, rows: Vec::new() };
                for row in std::mem::take(&mut l.rows) {
                    left.push(self, row)?;
                }
                l.rows = left.rows;
                l.cols = kept.iter().map(|&i| l.cols[i].clone()).collect();
            }
        }
        let (r_cols, r_input) =
            if matches!(right, TableSource::Table { .. } | TableSource::Variable { .. }) {
                let mut flat = Flat::default();
                self.flatten(right, &mut flat, &mut Vec::new(), &[], outer, demand)?;
                let leaf = flat.leaves.remove(0);
                (leaf.cols, leaf.input)
            } else {
                let right = std::slice::from_ref(right);
                let (rows, _) = self.plan_pushed(right, None, &[], outer, None, demand)?;
                (rows.cols, Input::Rows(rows.rows))
            };
        let Some(on) = on else {
            return Err(SqlError::new(102, "Incorrect syntax near 'JOIN'."));
        };
        // One flattened view of both sides, leaf 0 the left rows and leaf 1 the right.
        let mut parts = Vec::new();
        conjuncts(on, &mut parts);
        let mut both = Flat {
            leaves: vec![
                Leaf {
                    cols: l.cols.clone(),
                    input: Input::Rows(Vec::new()),
                    stats: None,
                    narrow: None,
                },
                Leaf {
                    cols: r_cols.clone(),
                    input: Input::Rows(Vec::new()),
                    stats: None,
                    narrow: None,
                },
            ],
            ..Flat::default()
        };
        let right_only: Vec<&Expr> =
            parts.iter().copied().filter(|e| both.leaves_of(e) == Some(2)).collect();
        let mut cols = l.cols.clone();
        cols.extend(r_cols.iter().cloned());
        let (lw, rw) = (l.cols.len(), r_cols.len());
        let keep_left = matches!(kind, JoinKind::LeftOuter | JoinKind::FullOuter);
        let keep_right = matches!(kind, JoinKind::RightOuter | JoinKind::FullOuter);
        let mut out = JoinOutput {
            rows: Vec::new(),
            forward: None,
            goal: usize::MAX,
            width: cols.len(),
            grant: None,
            pipe: None,
            may_stream: false,
            over: None,
        };
        if let (Input::Table(t), false) = (&r_input, keep_right) {
            let hashable = !equi_keys(self, &both, &parts, 1, 2, &l.cols, &r_cols).is_empty();
            let left_rows = l.rows.len() as f64;
            if let Some(path) = self.outer_seek_path(&mut both, t, &parts, left_rows, hashable) {
                let t = clone_ref(t);
                let mut check = Filter::new(RowFilter { cols: &cols, exprs: &parts, outer });
                for (n, lrow) in l.rows.into_iter().enumerate() {
                    self.row_interruption_point(n)?;
                    let env = Env::new(&l.cols, &lrow, outer);
                    let mut found = match self.read_path(&t, &path, &env, usize::MAX, None)? {
                        Some(found) => found,
                        None => self.read_leaf(&t, &AccessPath::scan(), outer, usize::MAX, None)?,
                    };
                    if demand.is_some() {
                        drop_locators(&mut found, &r_cols);
                    }
                    let pair = |k: usize| found[k].as_slice();
                    let emitted = self.emit_each(&mut out, lrow, found.len(), pair, &mut check)?;
                    self.keep_unmatched(&mut out, emitted, keep_left, rw)?;
                }
                return Ok((Rows { cols, rows: out.rows }, lw));
            }
        }
        // The inner side of a LEFT JOIN may be filtered by the ON condition's conjuncts on it
        // alone before the join; a preserved side may not.
        let pushed: &[&Expr] = if keep_right { &[] } else { &right_only };
        // Each matched inner row is copied into its pairs: the columns only the conjuncts
        // that filter it read (TPC-H Q13's `o_comment`) are not carried on, each row cut
        // as the read keeps it.
        let kept = match demand {
            Some(d) => kept_columns(&r_cols, d.without(pushed).as_ref()),
            None => (0..r_cols.len()).collect(),
        };
        if let (Input::Table(t), false) = (&r_input, keep_right) {
            let keys = equi_keys(self, &both, &parts, 1, 2, &l.cols, &r_cols);
            let sides = Sides { left: l, table: t, cols: &r_cols, kept: &kept, both: &both };
            let left_rows = sides.left.rows.len() as f64;
            if !keys.is_empty() && self.hash_preserved_side(&both, t, pushed, left_rows) {
                let rows = self
                    .join_by_preserved_hash(sides, &keys, &parts, pushed, keep_left, outer, out)?;
                return Ok((rows, lw));
            }
            l = sides.left;
        }
        let mut right =
            Narrowed { keep: &kept, whole: kept.len() == r_cols.len(), rows: Vec::new() };
        match r_input {
            Input::Rows(rows) => {
                for row in self.filter_rows(&r_cols, rows, pushed, outer)? {
                    right.push(self, row)?;
                }
            }
            Input::Estimated(_) => return Err(explained_only()),
            Input::Table(t) => {
                let path = self.path(&both, &t, pushed, 1, 0);
                let keep = Some(RowFilter { cols: &r_cols, exprs: pushed, outer });
                let env = Env { cols: &[], row: &[], outer, computed: &[] };
                // A probe that does not convert to its key: the scan's comparisons say
                // what it means.
                if !self.read_path_into(&t, &path, &env, keep, &mut right)? {
                    self.read_path_into(&t, &AccessPath::scan(), &env, keep, &mut right)?;
                }
            }
        }
        let right = right.rows;
        let r_cols: Vec<Col> = kept.iter().map(|&i| r_cols[i].clone()).collect();
        let mut cols = l.cols.clone();
        cols.extend(r_cols.iter().cloned());
        let rw = r_cols.len();
        out.width = cols.len();
        let keys = equi_keys(self, &both, &parts, 1, 2, &l.cols, &r_cols);
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
        let mut check = Filter::new(RowFilter { cols: &cols, exprs: &checks, outer });
        let mut right_matched = vec![false; right.len()];
        let probes = HashMatch::probes(&keys, &l.cols);
        let every: Vec<usize> =
            if matcher.is_none() { (0..right.len()).collect() } else { Vec::new() };
        for (n, lrow) in l.rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            let candidates: &[usize] = match &matcher {
                Some(m) => m.candidates(self, &probes, &Env::new(&l.cols, &lrow, outer))?,
                None => &every,
            };
            if !keep_right {
                let pair = |k: usize| right[candidates[k]].as_slice();
                let emitted = self.emit_each(&mut out, lrow, candidates.len(), pair, &mut check)?;
                self.keep_unmatched(&mut out, emitted, keep_left, rw)?;
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
            self.keep_unmatched(&mut out, left, keep_left, rw)?;
        }
        if keep_right {
            for (ri, r) in right.iter().enumerate() {
                if !right_matched[ri] {
                    let mut row: Vec<Value> = vec![Value::Null; lw];
                    row.extend_from_slice(r);
                    out.push(self, row)?;
                }
            }
        }
        Ok((Rows { cols, rows: out.rows }, lw))
    }

    /// The access path that seeks the inner table `t` of a LEFT JOIN once per left row
    /// (index nested loops), or None to read it once and match through a hash of the ON
    /// condition's equalities (`hashable`: there are some) or by nested loops. `both` is
    /// the join's two leaves, the left rows (`left_rows` of them) and `t`.
    ///
    /// Seeking costs a descent of the index and the rows the seek reads per left row (key
    /// lookups counted as in `access::choose`); reading once costs `t`'s read under the ON
    /// conjuncts on it alone, each row it keeps put into the hash table, and a probe per
    /// left row: the costs of an inner join's step (`order.rs`). So 15,000 customers LEFT
    /// JOIN their 150,000 orders through the index on `o_custkey` (TPC-H Q13 on BenchBase's
    /// schema), each seek a dozen key lookups, reads the orders once instead; a few left
    /// rows still seek. The table's statistics are loaded for it (`both`'s leaf 1).
    pub(super) fn outer_seek_path<'e>(
        &mut self,
        both: &mut Flat<'e>,
        t: &TableRef,
        parts: &[&'e Expr],
        left_rows: f64,
        hashable: bool,
    ) -> Option<AccessPath<'e>> {
        if both.leaves[1].stats.is_none() {
            both.leaves[1].stats = self.table_stats(t);
        }
        let path = self.path(both, t, parts, 1, 1);
        let probes_left = path.any_probe(&mut |e| both.leaves_of(e).is_some_and(|m| m & 1 != 0));
        if !probes_left || path.is_scan() {
            return None;
        }
        if hashable {
            let right_only: Vec<&Expr> =
                parts.iter().copied().filter(|e| both.leaves_of(e) == Some(2)).collect();
            let read = self.path(both, t, &right_only, 1, 0);
            let seeks = left_rows * (path.cost + SEEK_COST);
            let hashed = read.cost + HASH_BUILD_COST * read.rows + left_rows;
            if hashed < seeks {
                return None;
            }
        }
        Some(path)
    }

    /// The preserved left row of an outer join that no pair matched (`emitted`), extended
    /// with `right_width` NULLs, when the join keeps it (`keep`).
    fn keep_unmatched(
        &mut self,
        out: &mut JoinOutput<'_>,
        emitted: Emitted,
        keep: bool,
        right_width: usize,
    ) -> Result<(), SqlError> {
        match emitted.left {
            Some(mut row) if keep && !emitted.matched => {
                row.extend(std::iter::repeat_n(Value::Null, right_width));
                out.push(self, row)
            }
            _ => Ok(()),
        }
    }
}

/// Marks nullable the columns of the sides an outer join extends with NULLs (`kind` as
/// run, its left side `left_width` columns wide): SQL Server describes them so whatever
/// their tables say, so that `SELECT ... INTO` makes them NULL columns and a client is
/// told a NULL may come.
pub(crate) fn null_extended(cols: &mut [Col], left_width: usize, kind: JoinKind) {
    let (left_null, right_null) = kind.null_extended();
    let (left, right) = cols.split_at_mut(left_width.min(cols.len()));
    for (side, extended) in [(left, left_null), (right, right_null)] {
        if extended {
            side.iter_mut().for_each(|c| c.nullable = true);
        }
    }
}
