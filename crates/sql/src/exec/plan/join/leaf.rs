//! A leaf's own rows: read by its access path under its own conjuncts and cut to what a
//! joined row carries, and the table reads and row filters the rest of the executor
//! shares.

use walden_engine::types::Value;

use super::{conjuncts, explained_only, Flat, FromSink, Input, Leaf, RowGoal, Shape};
use crate::ast::{Expr, ExprKind};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::query::{table_read_cols, Rows, TableRef, ROWID};
use crate::exec::plan::access::{AccessPath, RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

impl Run<'_> {
    /// A leaf's rows that satisfy its own conjuncts `local`: with a `goal`, the first of
    /// them (in its order, when the leaf is read in that order), at least as many as it
    /// asks. Each is cut to its part of a joined row ([`Flat::shape`]).
    pub(super) fn leaf_rows(
        &mut self,
        flat: &mut Flat<'_>,
        leaf: usize,
        local: &[&Expr],
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let shape = flat.shape(leaf);
        let mut rows = self.leaf_rows_read(flat, leaf, local, outer, goal)?;
        if !matches!(shape, Shape::Whole) {
            rows.iter_mut().for_each(|r| shape.apply(r));
        }
        Ok(rows)
    }

    /// [`Run::leaf_rows`] as the leaf's read gives them, with the table's columns.
    pub(super) fn leaf_rows_read(
        &mut self,
        flat: &mut Flat<'_>,
        leaf: usize,
        local: &[&Expr],
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let cols = flat.leaves[leaf].read_cols().to_vec();
        let t = match &mut flat.leaves[leaf].input {
            Input::Rows(rows) => {
                let mut rows = std::mem::take(rows);
                if let Some(g) = goal.filter(|g| g.order.is_empty() && local.is_empty()) {
                    rows.truncate(g.rows);
                }
                return self.filter_rows(&cols, rows, local, outer);
            }
            Input::Table(t) => clone_ref(t),
            Input::Estimated(_) => return Err(explained_only()),
        };
        let path = self.path(flat, &t, local, leaf, 0);
        let ordered = |g: &RowGoal<'_>| {
            g.order.is_empty() || {
                let columns: Option<Vec<usize>> = g
                    .order
                    .iter()
                    .map(|o| match &o.expr.kind {
                        ExprKind::Column(parts) if !o.descending => (flat.leaf_of(parts)
                            == Some(Some(leaf)))
                        .then(|| find_column(&cols, parts).ok().flatten())
                        .flatten(),
                        _ => None,
                    })
                    .collect();
                columns.is_some_and(|c| path.delivers_order(&t.def, &c))
            }
        };
        // With an ordered goal the read stops at the goal's count of rows that pass.
        let limit = goal.filter(|g| ordered(g)).map_or(usize::MAX, |g| g.rows);
        let keep = RowFilter { cols: &cols, exprs: local, outer };
        self.read_leaf(&t, &path, outer, limit, Some(keep))
    }

    /// A table's rows, each followed by its hidden row locator: those `filter` may accept,
    /// read by the cheapest access path for it (the caller still applies `filter`).
    pub(crate) fn table_rows(
        &mut self,
        t: &TableRef,
        filter: Option<&Expr>,
    ) -> Result<Rows, SqlError> {
        self.table_rows_upto(t, filter, None)
    }

    /// [`Run::table_rows`], or with `limit` the first `limit` rows, in the access path's
    /// order, that `filter` accepts, checked as they are read: the search of an `UPDATE TOP
    /// (n)` or `DELETE TOP (n)`, which stops at its n-th row instead of reading (and, under
    /// its update locks, holding) every row the filter accepts.
    pub(crate) fn table_rows_upto(
        &mut self,
        t: &TableRef,
        filter: Option<&Expr>,
        limit: Option<usize>,
    ) -> Result<Rows, SqlError> {
        let (cols, parts, path) = self.table_search(t, filter);
        let rows = match limit {
            Some(limit) => {
                let keep = RowFilter { cols: &cols, exprs: &parts, outer: None };
                self.read_leaf(t, &path, None, limit, Some(keep))?
            }
            None => self.read_leaf(t, &path, None, usize::MAX, None)?,
        };
        Ok(Rows { cols, rows })
    }

    /// What a search of `t` under `filter` reads with: the table's columns (its row
    /// locator last), `filter`'s conjuncts, and the cheapest access path for them.
    fn table_search<'e>(
        &mut self,
        t: &TableRef,
        filter: Option<&'e Expr>,
    ) -> (Vec<Col>, Vec<&'e Expr>, AccessPath<'e>) {
        let leaf = table_leaf(clone_ref(t));
        let cols = leaf.cols.clone();
        let mut flat = Flat { leaves: vec![leaf], ..Flat::default() };
        let mut parts = Vec::new();
        if let Some(f) = filter {
            conjuncts(f, &mut parts);
        }
        self.gather_estimates(&mut flat, &parts);
        let path = self.path(&flat, t, &parts, 0, 0);
        (cols, parts, path)
    }

    /// The rows of `t` that `filter` accepts, each followed by its hidden row locator, given
    /// to `sink` as they are read (after their columns), by the cheapest access path for
    /// `filter`: an UPDATE's or DELETE's search, which queues them rather than hold them.
    pub(crate) fn table_rows_into(
        &mut self,
        t: &TableRef,
        filter: Option<&Expr>,
        sink: &mut dyn FromSink,
    ) -> Result<(), SqlError> {
        let (cols, parts, path) = self.table_search(t, filter);
        sink.start(self, &cols)?;
        let keep = Some(RowFilter { cols: &cols, exprs: &parts, outer: None });
        let env = Env { cols: &[], row: &[], outer: None, computed: &[] };
        self.read_path_or_scan_into(t, &path, &env, keep, sink)?;
        Ok(())
    }

    /// A table's rows read by `path` that `keep` accepts (at most `limit`), its probes
    /// evaluated outside any row of this FROM.
    pub(crate) fn read_leaf(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        outer: Option<&Env<'_>>,
        limit: usize,
        keep: Option<RowFilter<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        match self.read_path(t, path, &env, limit, keep)? {
            Some(rows) => Ok(rows),
            None => {
                Ok(self.read_path(t, &AccessPath::scan(), &env, limit, keep)?.unwrap_or_default())
            }
        }
    }

    /// The rows for which every predicate of `exprs` holds.
    pub(crate) fn filter_rows(
        &mut self,
        cols: &[Col],
        rows: Vec<Vec<Value>>,
        exprs: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        if exprs.is_empty() {
            return Ok(rows);
        }
        let mut kept = Vec::with_capacity(rows.len());
        for (n, row) in rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            if self.all_hold(exprs, cols, &row, outer)? {
                kept.push(row);
            }
        }
        Ok(kept)
    }

    pub(super) fn all_hold(
        &mut self,
        exprs: &[&Expr],
        cols: &[Col],
        row: &[Value],
        outer: Option<&Env<'_>>,
    ) -> Result<bool, SqlError> {
        self.all_hold_in(exprs, &Env::new(cols, row, outer))
    }

    /// Whether every predicate of `exprs` holds (is TRUE, not UNKNOWN) in `env`.
    pub(crate) fn all_hold_in(&mut self, exprs: &[&Expr], env: &Env<'_>) -> Result<bool, SqlError> {
        for e in exprs {
            if self.predicate(e, env)? != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The positions of `cols` a join of a SELECT carries on, leaving out what nothing after
/// it reads, so that it is not copied into each joined row: the row locators (only a
/// change reads them, and a change has no demand), and, with `after` (the names the block
/// reads after the join), the columns whose names it does not use. Leaving those out
/// changes no result: every reference the block makes is by a name its demand holds, so
/// none could resolve to them (nor be made ambiguous by them), and a block that reads
/// columns by position (`*`) has no demand.
pub(super) fn kept_columns(cols: &[Col], after: Option<&Demand>) -> Vec<usize> {
    (0..cols.len())
        .filter(|&i| {
            let c = &cols[i];
            if c.hidden {
                c.name != ROWID
            } else {
                after.is_none_or(|d| d.reads(&c.name))
            }
        })
        .collect()
}

/// Collects the rows it is given, cut to the columns at `keep` (see [`kept_columns`])
/// unless it keeps them `whole`.
pub(super) struct Narrowed<'k> {
    pub(super) keep: &'k [usize],
    pub(super) whole: bool,
    pub(super) rows: Vec<Vec<Value>>,
}

impl RowSink for Narrowed<'_> {
    fn push(&mut self, _: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
        if self.whole {
            self.rows.push(row);
        } else {
            let cut = self.keep.iter().map(|&i| std::mem::replace(&mut row[i], Value::Null));
            self.rows.push(cut.collect());
        }
        Ok(true)
    }
}

/// The positions of the row locators among `cols`.
pub(super) fn locator_positions(cols: &[Col]) -> Vec<usize> {
    (0..cols.len()).filter(|&i| cols[i].hidden && cols[i].name == ROWID).collect()
}

/// Sets the values of `row` at `locators` (see [`locator_positions`]) to NULL.
pub(super) fn clear_locators(row: &mut [Value], locators: &[usize]) {
    for &i in locators {
        if let Some(v) = row.get_mut(i) {
            *v = Value::Null;
        }
    }
}

/// `t` read for a query block that reads `demand`'s columns.
pub(super) fn reading(t: TableRef, demand: Option<&Demand>) -> TableRef {
    TableRef { wanted: demand.and_then(|d| d.wanted(&t.def)), ..t }
}

/// A table leaf: its columns and the hidden row locator.
pub(super) fn table_leaf(t: TableRef) -> Leaf {
    Leaf {
        cols: table_read_cols(&t.def, &t.qual),
        input: Input::Table(t),
        stats: None,
        narrow: None,
    }
}

pub(crate) fn clone_ref(t: &TableRef) -> TableRef {
    TableRef {
        db: std::sync::Arc::clone(&t.db),
        def: std::sync::Arc::clone(&t.def),
        qual: t.qual.clone(),
        view_check: None,
        wanted: t.wanted.clone(),
    }
}
