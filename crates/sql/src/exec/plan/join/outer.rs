//! Outer joins: LEFT, RIGHT and FULL OUTER JOIN as leaves of their own in a FROM clause's
//! plan. The preserved side's rows that find no match are extended with NULLs; a table on the
//! inner side of a LEFT JOIN that the ON condition can seek is sought once per left row, an
//! equality in the ON condition otherwise makes it a hash join, of the smaller side.
//!
//! A join is planned first, nothing read (`Run::plan_outer_join`): that fixes its columns.
//! Its pairs are made after (`Run::run_outer_join`), as its left side's rows are read
//! (`left.rs`, `pairs.rs`): held as a leaf's rows in a join of several sources, or given to
//! the block's sink as they are made when the join is the block's one source
//! (`stream/source.rs`), so that they are not held. The left rows themselves are held only
//! while they are few: the method is then chosen from their count, and past
//! [`pairs::LEFT_HELD_BYTES`] each row is paired as it comes.

use walden_engine::types::Value;

use super::hash_table::HashMatch;
use super::order::HASH_BUILD_COST;
use super::steps::shorten;
use super::Reduced;
use super::{
    conjuncts, equi_keys, is_key_of, kept_columns, Emitted, Flat, Forward, Input, JoinOutput, Leaf,
};
use crate::ast::{Expr, ExprKind, Join, JoinKind, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::{visit_children, Rows, TableRef};
use crate::exec::execute::row_queue::{QueuedRows, RowQueue};
use crate::exec::plan::access::{AccessPath, RowSink, SEEK_COST};
use crate::exec::session::Run;
use crate::exec::SqlError;
use left::LeftSide;

mod left;
mod pairs;
pub(super) mod preserved_hash;
mod read_inner;
mod spilled;

/// An outer join planned, nothing read yet: what [`Run::run_outer_join`] makes its rows
/// from. A RIGHT JOIN is planned as the LEFT JOIN with its sides swapped.
pub(in crate::exec::plan::join) struct OuterJoin<'e> {
    /// The left side's plan (a RIGHT JOIN's right side).
    left: LeftSide<'e>,
    /// The other side's columns as read, and its table (or no rows, and the rows queued).
    right_cols: Vec<Col>,
    right: Input,
    /// The other side's rows, when it is a join or a derived table: made while planning.
    queued: Option<QueuedRows>,
    /// The ON condition's conjuncts.
    parts: Vec<&'e Expr>,
    /// Leaf 0 the left side, leaf 1 the right.
    both: Flat<'e>,
    /// LEFT, FULL, or an inner join written inside an outer one, as run.
    kind: JoinKind,
    /// The ON condition's equalities a hash can join by: (left side's, right side's).
    keys: Vec<(&'e Expr, &'e Expr)>,
    /// The right side's columns a pair carries on.
    kept: Vec<usize>,
    /// A pair's columns as made: the left side's, then the right's it carries.
    run_cols: Vec<Col>,
    /// The pairs' columns in the FROM clause's order, marked nullable where NULL-extended.
    pub(in crate::exec::plan::join) cols: Vec<Col>,
    /// A RIGHT JOIN run swapped: each pair is put back in the FROM clause's order.
    swapped: bool,
}

/// How the right side is joined.
enum Method<'e> {
    /// Sought per left row by the path (index nested loops).
    Seek(AccessPath<'e>),
    /// The left rows hashed by the equalities and the right table read past them once
    /// (`preserved_hash.rs`).
    PreservedHash,
    /// The right side read, filtered by the ON conjuncts on it alone where it is not
    /// preserved, and matched through a hash of the equalities, or by nested loops.
    Read,
}

impl Run<'_> {
    /// A LEFT, RIGHT or FULL OUTER JOIN (or an inner one written inside it): the matched
    /// pairs, and the preserved side's unmatched rows extended with NULLs, all held.
    /// `pushed` are conjuncts of an enclosing WHERE clause (see [`Run::plan_outer_join`]).
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
        let mut implied = Vec::new();
        let join =
            self.plan_outer_join(left, right, kind, on, pushed, outer, demand, &mut implied)?;
        let cols = join.cols.clone();
        let rows = self.run_outer_join(join, outer, None)?;
        Ok(Rows { cols, rows })
    }

    /// Plans an outer join without reading either side: the left side's plan
    /// ([`Run::plan_left`]), the right side's table or rows, the pairs' columns. Which
    /// method joins them is chosen as the left rows come ([`pairs`]).
    /// `pushed` are conjuncts of an enclosing WHERE clause: a LEFT JOIN applies those that
    /// name only its left side's columns to that side before joining (a WHERE condition on
    /// the preserved side keeps the same rows before the join as after it). `implied`
    /// keeps what the left side's plan derives from its conjuncts for as long as it lives.
    ///
    /// `a RIGHT JOIN b` is planned as `b LEFT JOIN a`, so that the preserved side drives
    /// and the other is sought per row where the ON condition allows (SQL Server's plans
    /// show it as a Left Outer Join the same way); its pairs are put back in order.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::exec::plan::join) fn plan_outer_join<'e: 'p, 'p>(
        &mut self,
        left: &'e TableSource,
        right: &'e TableSource,
        kind: JoinKind,
        on: Option<&'e Expr>,
        pushed: &[&'e Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        implied: &'p mut Vec<Expr>,
    ) -> Result<OuterJoin<'p>, SqlError> {
        let swapped = kind == JoinKind::RightOuter;
        let (left, right, kind) =
            if swapped { (right, left, JoinKind::LeftOuter) } else { (left, right, kind) };
        let to_left = if kind == JoinKind::LeftOuter { pushed } else { &[] };
        let left = self.plan_left(left, to_left, outer, demand, implied)?;
        let l_cols = left.cols.clone();
        let (right_cols, right, queued) =
            if matches!(right, TableSource::Table { .. } | TableSource::Variable { .. }) {
                let mut flat = Flat::default();
                self.flatten(
                    right,
                    &mut flat,
                    &mut Vec::new(),
                    &[],
                    outer,
                    demand,
                    &Reduced::default(),
                )?;
                let leaf = flat.leaves.remove(0);
                (leaf.cols, leaf.input, None)
            } else {
                // A join or derived table: its rows are queued as they are made, held within
                // a grant and spilled past it, not held whole against the workspace.
                let right = std::slice::from_ref(right);
                let (cols, queued) =
                    self.plan_from_feeding(right, None, outer, demand, None, |run, cols, feed| {
                        let mut queue = RowQueue::default();
                        feed(run, &mut queue)?;
                        Ok((cols.to_vec(), queue.finish()?))
                    })?;
                (cols, Input::Rows(Vec::new()), Some(queued))
            };
        let Some(on) = on else {
            return Err(SqlError::new(102, "Incorrect syntax near 'JOIN'."));
        };
        let mut parts = Vec::new();
        conjuncts(on, &mut parts);
        let leaf = |cols: &[Col]| Leaf {
            cols: cols.to_vec(),
            input: Input::Rows(Vec::new()),
            stats: None,
            narrow: None,
        };
        let both = Flat { leaves: vec![leaf(&l_cols), leaf(&right_cols)], ..Flat::default() };
        self.check_names(&both, &parts, outer)?;
        let keep_right = kind == JoinKind::FullOuter;
        let keys = equi_keys(self, &both, &parts, 1, 2, &l_cols, &right_cols);
        // Each matched inner row is copied into its pairs: the columns only the conjuncts
        // that filter it read (TPC-H Q13's `o_comment`) are not carried on, each row cut
        // as the read keeps it.
        let kept: Vec<usize> = match demand {
            None => (0..right_cols.len()).collect(),
            Some(d) => {
                let pushed = if keep_right { Vec::new() } else { right_only(&both, &parts) };
                kept_columns(&right_cols, d.without(&pushed).as_ref())
            }
        };
        let mut run_cols = l_cols;
        run_cols.extend(kept.iter().map(|&i| right_cols[i].clone()));
        let width = left.cols.len();
        let mut cols = run_cols.clone();
        null_extended(&mut cols, width, kind);
        if swapped {
            cols.rotate_left(width);
        }
        Ok(OuterJoin {
            left,
            right_cols,
            right,
            queued,
            parts,
            both,
            kind,
            keys,
            kept,
            run_cols,
            cols,
            swapped,
        })
    }

    /// The rows of `join`: given to `sink` as they are made (none returned) until it says
    /// stop, or without one returned, held against the query memory workspace (error 701
    /// past it). The left side's rows are paired as they are read ([`pairs`]).
    pub(in crate::exec::plan::join) fn run_outer_join(
        &mut self,
        join: OuterJoin<'_>,
        outer: Option<&Env<'_>>,
        sink: Option<&mut dyn RowSink>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let OuterJoin {
            left,
            right_cols,
            right,
            queued,
            parts,
            mut both,
            kind,
            keys,
            kept,
            run_cols,
            swapped,
            ..
        } = join;
        let (lw, width) = (left.cols.len(), run_cols.len());
        // A swapped pair's value i is at i + lw (`[T]::rotate_left`).
        let positions: Vec<usize> =
            if swapped { (0..width).map(|i| (i + lw) % width).collect() } else { Vec::new() };
        let forwarding = sink.is_some();
        let mut out = JoinOutput {
            rows: Vec::new(),
            forward: sink.map(|sink| Forward {
                positions: &positions,
                sink: shorten(sink),
                stopped: false,
            }),
            goal: usize::MAX,
            width,
            grant: None,
            pipe: None,
            may_stream: false,
            over: None,
        };
        let keep_right = kind == JoinKind::FullOuter;
        let pushed = if keep_right { Vec::new() } else { right_only(&both, &parts) };
        // What a pair is checked against: the ON conjuncts the right side's read did not
        // apply; without the equalities a hash of exactly equal keys found it by.
        let unpushed: Vec<&Expr> = parts
            .iter()
            .copied()
            .filter(|e| !pushed.iter().any(|p| std::ptr::eq(*p, *e)))
            .collect();
        let unkeyed: Vec<&Expr> =
            unpushed.iter().copied().filter(|e| !is_key_of(e, &keys)).collect();
        let (plan, read_cols, keep, left_cols) = left.into_parts();
        let probes = HashMatch::probes(&keys, &left_cols);
        let left_keys: Vec<&Expr> = keys.iter().map(|k| k.0).collect();
        let join = pairs::Joined {
            left_cols: &left_cols,
            right_cols: &right_cols,
            kept: &kept,
            run_cols: &run_cols,
            parts: &parts,
            pushed: &pushed,
            unpushed: &unpushed,
            unkeyed: &unkeyed,
            keys: &keys,
            left_keys: &left_keys,
            probes: &probes,
            kind,
            outer,
        };
        let mut pairs =
            pairs::Pairs::new(join, keep.as_deref(), &mut both, (right, queued), &mut out);
        self.read_left(plan, &read_cols, outer, &mut pairs)?;
        pairs.finish(self)?;
        let mut rows = out.rows;
        if swapped && !forwarding {
            for row in &mut rows {
                row.rotate_left(lw);
            }
        }
        Ok(rows)
    }

    /// How to join the right side `right` of an outer join (`keep_right`: a FULL JOIN) to
    /// `left_rows` left rows (at least that many, where the left side is still being read).
    #[allow(clippy::too_many_arguments)]
    fn outer_method<'e>(
        &mut self,
        both: &mut Flat<'e>,
        right: &Input,
        parts: &[&'e Expr],
        keys: &[(&'e Expr, &'e Expr)],
        keep_right: bool,
        left_rows: f64,
    ) -> Method<'e> {
        let (Input::Table(t), false) = (right, keep_right) else { return Method::Read };
        let hashable = !keys.is_empty();
        match self.outer_seek_path(both, t, parts, left_rows, hashable) {
            Some(path) => Method::Seek(path),
            None if hashable
                && self.hash_preserved_side(both, t, &right_only(both, parts), left_rows) =>
            {
                Method::PreservedHash
            }
            None => Method::Read,
        }
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
            let right_only = right_only(both, parts);
            let read = self.path(both, t, &right_only, 1, 0);
            let seeks = left_rows * (path.cost + SEEK_COST);
            let hashed = read.cost + HASH_BUILD_COST * read.rows + left_rows;
            if hashed < seeks {
                return None;
            }
        }
        Some(path)
    }

    /// Refuses a name in the ON conjuncts `parts` that is a column of neither side of
    /// `both` nor of an enclosing query (`outer`), or of both sides, with the error its
    /// evaluation gives (207, 4104 for a qualifier of no source, 209): before any pair is made, as SQL Server
    /// refuses it when it compiles the query, not once a block's sink has described its
    /// columns to the client. Only such names are evaluated, against a row of NULLs.
    fn check_names(
        &mut self,
        both: &Flat<'_>,
        parts: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<(), SqlError> {
        let mut unresolved = Vec::new();
        for part in parts {
            unresolved_names(both, part, &mut unresolved);
        }
        if unresolved.is_empty() {
            return Ok(());
        }
        let cols: Vec<Col> = both.leaves.iter().flat_map(|l| l.cols.iter().cloned()).collect();
        let nulls = vec![Value::Null; cols.len()];
        let env = Env::new(&cols, &nulls, outer);
        for name in unresolved {
            self.eval(name, &env)?;
        }
        Ok(())
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

/// The ON conjuncts of `parts` that name only the right side of `both` (leaf 1).
fn right_only<'e>(both: &Flat<'e>, parts: &[&'e Expr]) -> Vec<&'e Expr> {
    parts.iter().copied().filter(|e| both.leaves_of(e) == Some(2)).collect()
}

/// The column names in `e` (not in its subqueries, which have sources of their own) that
/// name no column of `both`'s leaves, or a column of more than one (error 209).
fn unresolved_names<'e>(both: &Flat<'_>, e: &'e Expr, found: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Column(parts) if !matches!(both.leaf_of(parts), Some(Some(_))) => found.push(e),
        _ => visit_children(e, &mut |c| unresolved_names(both, c, found)),
    }
}

/// `src` as an outer join (LEFT, RIGHT or FULL), or None for any other source.
pub(in crate::exec::plan::join) fn outer_join_of(src: &TableSource) -> Option<&Join> {
    match src {
        TableSource::Join(j)
            if matches!(
                j.kind,
                JoinKind::LeftOuter | JoinKind::RightOuter | JoinKind::FullOuter
            ) =>
        {
            Some(j)
        }
        _ => None,
    }
}
