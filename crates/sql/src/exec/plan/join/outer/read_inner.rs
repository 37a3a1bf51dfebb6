//! An outer join whose inner side is read once: filtered by the ON conjuncts on it alone
//! where it is not preserved, cut to the columns the pairs carry, and matched with each left
//! row, as it comes, through a hash of the ON condition's equalities, or by nested loops
//! without one. A FULL JOIN notes which inner rows matched and adds the others,
//! NULL-extended, last.
//!
//! The inner rows are held against the operator's memory grant. Past it, where there are
//! equalities, they are partitioned to spill files by their key instead, and so is each
//! left row after them: the partitions are then joined one at a time (`spilled.rs`), as
//! the inner join's grace hash join does. Without equalities there is nothing to partition
//! by: the rows are held against the workspace, error 701 past it.

use walden_engine::types::Value;

use super::super::hash_table::HashMatch;
use super::super::{explained_only, Emitted, Flat, Input, JoinOutput};
use super::pairs::Joined;
use super::spilled::{Spilled, Spilling};
use crate::ast::{Expr, JoinKind};
use crate::exec::eval::{Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::grant::{row_bytes, HeldBytes};
use crate::exec::execute::hash_spill::KEY_BYTES;
use crate::exec::execute::row_queue::QueuedRows;
use crate::exec::plan::access::{RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// [`super::Method::Read`]'s inner side, read.
pub(super) struct ReadInner {
    /// The columns its rows carry on.
    cols: Vec<Col>,
    side: Side,
    /// What its rows hold of the query memory.
    _bytes: HeldBytes,
}

/// Where the inner rows are.
enum Side {
    Held(Held),
    Spilled(Spilled),
}

/// Inner rows in memory, and their hash.
pub(super) struct Held {
    rows: Vec<Vec<Value>>,
    /// Their hash by the equalities' inner sides, None where there are none.
    matcher: Option<HashMatch>,
    /// Every row's position: the candidates of each left row without a hash.
    every: Vec<usize>,
    /// A FULL JOIN's note of the inner rows some pair matched; empty otherwise.
    matched: Vec<bool>,
}

impl Held {
    /// Whether a candidate's key always equals its probe's (`HashMatch::exact`).
    pub(super) fn exact(&self) -> bool {
        self.matcher.as_ref().is_some_and(HashMatch::exact)
    }
}

impl ReadInner {
    /// Whether a candidate's key always equals its probe's (`HashMatch::exact`): the
    /// equalities then need no check on the pair. Partitions are hashed later, each its
    /// own way: not for them.
    pub(super) fn exact(&self) -> bool {
        match &self.side {
            Side::Held(held) => held.exact(),
            Side::Spilled(_) => false,
        }
    }
}

/// The sink the inner side is read into: its rows cut to the columns the pairs carry,
/// held within the grant, partitioned to disk past it.
struct InnerRows<'a, 'e> {
    keep: &'a [usize],
    whole: bool,
    rows: Vec<Vec<Value>>,
    /// What `rows` take of the query memory.
    bytes: HeldBytes,
    spilling: Option<Spilling>,
    join: &'a Joined<'a, 'e>,
    /// The cut rows' columns, and the equalities' inner sides over them.
    cols: &'a [Col],
    keys: Vec<&'e Expr>,
}

impl RowSink for InnerRows<'_, '_> {
    fn push(&mut self, run: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
        if !self.whole {
            row = self.keep.iter().map(|&i| std::mem::replace(&mut row[i], Value::Null)).collect();
        }
        if let Some(spilling) = &mut self.spilling {
            spilling.write_inner(run, &self.keys, self.cols, self.join, &row)?;
            return Ok(true);
        }
        let bytes = row_bytes(&row) + KEY_BYTES;
        if self.bytes.try_hold(run, bytes) {
            self.rows.push(row);
            return Ok(true);
        }
        if self.keys.is_empty() {
            // Nothing to partition by: held all the same, against the workspace.
            self.bytes.hold(run, bytes)?;
            self.rows.push(row);
            return Ok(true);
        }
        let mut spilling = Spilling::new(self.bytes.memory(run), self.join.kind)?;
        for held in std::mem::take(&mut self.rows) {
            spilling.write_inner(run, &self.keys, self.cols, self.join, &held)?;
        }
        self.bytes.release_all();
        spilling.write_inner(run, &self.keys, self.cols, self.join, &row)?;
        self.spilling = Some(spilling);
        Ok(true)
    }
}

impl Run<'_> {
    /// Reads the inner side `right` of `join` (its leaf 1 in `both`) and hashes it, or
    /// partitions it past the grant.
    pub(super) fn read_inner(
        &mut self,
        right: Input,
        queued: Option<QueuedRows>,
        join: &Joined<'_, '_>,
        both: &Flat<'_>,
    ) -> Result<ReadInner, SqlError> {
        let (right_cols, kept, outer) = (join.right_cols, join.kept, join.outer);
        let cols: Vec<Col> = kept.iter().map(|&i| right_cols[i].clone()).collect();
        let mut sink = InnerRows {
            keep: kept,
            whole: kept.len() == right_cols.len(),
            rows: Vec::new(),
            bytes: HeldBytes::default(),
            spilling: None,
            join,
            cols: &cols,
            keys: join.keys.iter().map(|k| k.1).collect(),
        };
        match right {
            // Rows made up front: queued (a join's, a derived table's) or held (a view's).
            Input::Rows(rows) => {
                let mut rows = queued.unwrap_or_else(|| QueuedRows::held(rows));
                while let Some(row) = rows.next()? {
                    if self.all_hold(join.pushed, right_cols, &row, outer)? {
                        sink.push(self, row)?;
                    }
                }
            }
            Input::Estimated(_) => return Err(explained_only()),
            Input::Table(t) => {
                let path = self.path(both, &t, join.pushed, 1, 0);
                let keep = Some(RowFilter { cols: right_cols, exprs: join.pushed, outer });
                let env = Env { cols: &[], row: &[], outer, computed: &[] };
                self.read_path_or_scan_into(&t, &path, &env, keep, &mut sink)?;
            }
        }
        let InnerRows { rows, bytes, spilling, .. } = sink;
        let side = match spilling {
            Some(spilling) => Side::Spilled(spilling.inner_done()?),
            None => Side::Held(self.hold_inner(rows, &cols, join)?),
        };
        Ok(ReadInner { cols, side, _bytes: bytes })
    }

    /// Inner rows `rows` (of columns `cols`) hashed by `join`'s equalities.
    pub(super) fn hold_inner(
        &mut self,
        rows: Vec<Vec<Value>>,
        cols: &[Col],
        join: &Joined<'_, '_>,
    ) -> Result<Held, SqlError> {
        let matcher = if join.keys.is_empty() {
            None
        } else {
            Some(HashMatch::build(self, join.keys, cols, &rows, join.outer)?)
        };
        let every = if matcher.is_none() { (0..rows.len()).collect() } else { Vec::new() };
        let full = join.kind == JoinKind::FullOuter;
        let matched = if full { vec![false; rows.len()] } else { Vec::new() };
        Ok(Held { rows, matcher, every, matched })
    }

    /// Pairs the left row `lrow` with the inner rows of `inner` that match it, each pair
    /// given to `out` where `check` holds of it; a row of a LEFT or FULL JOIN that none
    /// matched is given NULL-extended. Past the grant the row is partitioned instead.
    pub(super) fn pair_read(
        &mut self,
        inner: &mut ReadInner,
        lrow: Vec<Value>,
        join: &Joined<'_, '_>,
        check: &mut Filter<'_>,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        match &mut inner.side {
            Side::Held(held) => self.pair_held(held, lrow, join, check, out),
            Side::Spilled(spilled) => spilled.write_left(self, join, lrow, out),
        }
    }

    /// [`Run::pair_read`] of rows held.
    pub(super) fn pair_held(
        &mut self,
        held: &mut Held,
        lrow: Vec<Value>,
        join: &Joined<'_, '_>,
        check: &mut Filter<'_>,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        let keep_left = join.keeps_left();
        let rw = join.kept.len();
        let Held { rows, matcher, every, matched } = held;
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

    /// After the last left row: a spilled join's partitions joined, and a FULL JOIN's inner
    /// rows that no pair matched given NULL-extended, until `out` is full.
    pub(super) fn finish_read(
        &mut self,
        inner: ReadInner,
        join: &Joined<'_, '_>,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        match inner.side {
            Side::Held(held) => self.finish_held(held, join.left_cols.len(), out),
            Side::Spilled(spilled) => spilled.join(self, join, &inner.cols, out),
        }
    }

    /// A FULL JOIN's rows of `held` that no pair matched, NULL-extended on the left (`lw`
    /// values); nothing for another join.
    pub(super) fn finish_held(
        &mut self,
        held: Held,
        lw: usize,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        for (n, (r, matched)) in held.rows.iter().zip(held.matched).enumerate() {
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
