//! The right hash semi- and anti-join: the outer rows' keys are hashed and the subquery's
//! table is streamed past them.
//!
//! `WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)` hashed the other
//! way (the left hash of `apply_semi_join`) holds a key for each of 100,000 orders and
//! hashes them all before a customer is probed. Hashing the 10,000 customers' keys instead
//! and marking each one an order names, as the orders are read, holds nothing per order and
//! builds the smaller table: PostgreSQL's Hash Right Anti Join, SQL Server's Right Anti Semi
//! Join. It applies where the key is one equality between two integer columns (a key's
//! value is then its `i64`, with no collation or conversion to weigh), the subquery is one
//! table and nothing else is checked on the pairs, whatever the sizes: the outer rows are
//! held already, and one key more for each costs no more than hashing the subquery's rows,
//! which there may be many more of. (Deciding by the sizes would need the outer rows'
//! estimate, which SHOWPLAN has where the executor has the count, and the two could differ.)
//! A semi-join stops reading once every outer key has a match.
//!
//! Where the subquery has no conjunct of its own and its table has a nonclustered index led
//! by the key column, only that index's keys are read (`Run::mark_from_index`): the leading
//! integer decoded from each entry in place, with no row built, and a key equal to the one
//! before it (the entries come in key order) not looked up again.
//!
//! `x NOT IN (SELECT y ...)` of an uncorrelated subquery is an anti-join with NULL rules of
//! its own, and is only run this way: no row is kept if `y` is NULL in some row of the
//! subquery; a NULL `x` is kept only when the subquery has no rows; and every row is kept
//! when it has none.

use std::collections::HashMap;
use std::ops::Bound;

use walden_engine::types::{decode_leading_integer, SqlType, Value};
use walden_storage::hash::FastBuild;

use super::super::{clone_ref, integer_key, Input};
use super::{inner_read, SemiJoin};
use crate::ast::ExprKind;
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::query::TableRef;
use crate::exec::plan::access::{self, RowFilter, RowSink};
use crate::exec::plan::showplan::PlanNode;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The outer keys, each marked once a row of the subquery has it. The keys are a query's
/// data, but hashing them with the engine's unkeyed hasher only lets a user slow their own
/// query, as any unlucky data can.
type Marks = HashMap<i64, bool, FastBuild>;

/// The outer keys marked so far, and what the subquery's keys were.
struct Marked {
    marks: Marks,
    /// Outer keys not marked yet.
    unmarked: usize,
    /// Rows read (for NOT IN: does the subquery have any).
    rows: u64,
    /// Some row's key is NULL (for NOT IN: then nothing is kept).
    null: bool,
    /// Some row's key is no integer: the columns' types said it could not be, so the
    /// caller falls back rather than trust the marks.
    other: bool,
}

impl Marked {
    /// Marks the outer key equal to one row's key `k` (None: NULL); answers whether a later
    /// row can still change what is kept.
    fn mark(&mut self, k: Option<i64>) -> bool {
        self.rows += 1;
        match k {
            Some(k) => {
                if let Some(seen) = self.marks.get_mut(&k) {
                    if !*seen {
                        *seen = true;
                        self.unmarked -= 1;
                    }
                }
            }
            None => self.null = true,
        }
        // Every outer key has a match: no later row can change what is kept (NOT IN drops
        // every row then, whatever NULLs follow).
        self.unmarked > 0
    }
}

/// Marks the outer keys that the rows of the subquery a read gives it have.
struct MarkSink<'a, 'o> {
    key: Scalar<'a>,
    cols: &'a [Col],
    outer: Option<&'o Env<'o>>,
    marked: Marked,
}

impl RowSink for MarkSink<'_, '_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        let env = Env::new(self.cols, &row, self.outer);
        let mut held = None;
        let v = run.value_in(&self.key, &env, &mut held)?;
        match integer_key(v) {
            Some(k) => Ok(self.marked.mark(Some(k))),
            None if v.is_null() => Ok(self.marked.mark(None)),
            None => {
                self.marked.other = true;
                Ok(false)
            }
        }
    }
}

/// A nonclustered index of `t` that leads with the subquery's key column, and that
/// column's type: with nothing else to check on the subquery's rows, its entries' keys are
/// all the right hash join reads (`Run::mark_from_index`).
fn key_index(semi: &SemiJoin<'_>, t: &TableRef, cols: &[Col]) -> Option<(u16, SqlType)> {
    let ExprKind::Column(parts) = &semi.keys[0].1.kind else { return None };
    if !semi.inner_filter.is_empty() {
        return None;
    }
    let c = find_column(cols, parts).ok().flatten()?;
    let ty = t.def.columns.get(c)?.ty;
    let index = t.def.indexes.iter().find(|i| i.id != 1 && i.columns.first() == Some(&c))?;
    Some((index.id, ty))
}

impl SemiJoin<'_> {
    /// Whether it is run as a right hash join (see the module's documentation).
    pub(super) fn right_hashed(&self) -> bool {
        let one_table =
            matches!(self.inner.leaves.as_slice(), [l] if matches!(l.input, Input::Table(_)));
        self.int_key && self.residual.is_empty() && self.streamed.is_none() && one_table
    }
}

impl Run<'_> {
    /// Which of `rows` (of columns `cols`) `semi` keeps, by a right hash join; None where it
    /// does not apply ([`SemiJoin::right_hashed`]) or a value is not the integer its column's
    /// type promised.
    pub(super) fn right_semi_join(
        &mut self,
        semi: &mut SemiJoin<'_>,
        cols: &[Col],
        rows: &[Vec<Value>],
        outer: Option<&Env<'_>>,
    ) -> Result<Option<Vec<bool>>, SqlError> {
        if !semi.right_hashed() {
            return Ok(None);
        }
        let probe = Scalar::prepare(semi.keys[0].0, cols);
        let mut keys = Vec::with_capacity(rows.len());
        let mut marks = Marks::with_capacity_and_hasher(rows.len(), FastBuild::default());
        for (n, row) in rows.iter().enumerate() {
            self.row_interruption_point(n)?;
            let env = Env::new(cols, row, outer);
            let mut held = None;
            let v = self.value_in(&probe, &env, &mut held)?;
            let k = match integer_key(v) {
                Some(k) => Some(k),
                None if v.is_null() => None,
                None => return Ok(None),
            };
            if let Some(k) = k {
                marks.insert(k, false);
            }
            keys.push(k);
        }
        if rows.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let Input::Table(t) = &semi.inner.leaves[0].input else { return Ok(None) };
        let t = clone_ref(t);
        let inner_cols = semi.inner.leaves[0].cols.clone();
        let marked = Marked { unmarked: marks.len(), marks, rows: 0, null: false, other: false };
        let marked = match key_index(semi, &t, &inner_cols) {
            Some((index, ty)) => self.mark_from_index(&t, index, ty, marked)?,
            None => self.mark_from_rows(semi, &t, &inner_cols, marked, outer)?,
        };
        if marked.other {
            return Ok(None);
        }
        let matched = |k: &Option<i64>| k.is_some_and(|k| marked.marks.get(&k) == Some(&true));
        let kept = match semi.not_in {
            Some(_) if marked.rows == 0 => vec![true; keys.len()],
            Some(_) => keys.iter().map(|k| k.is_some() && !marked.null && !matched(k)).collect(),
            None => keys.iter().map(|k| matched(k) != semi.anti).collect(),
        };
        Ok(Some(kept))
    }

    /// Marks the outer keys the subquery's rows have, reading its table's rows that pass
    /// its own conjuncts.
    fn mark_from_rows(
        &mut self,
        semi: &SemiJoin<'_>,
        t: &TableRef,
        inner_cols: &[Col],
        marked: Marked,
        outer: Option<&Env<'_>>,
    ) -> Result<Marked, SqlError> {
        let path = inner_read(semi, t);
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        let mut sink = MarkSink {
            key: Scalar::prepare(semi.keys[0].1, inner_cols),
            cols: inner_cols,
            outer,
            marked,
        };
        let keep = RowFilter { cols: inner_cols, exprs: &semi.inner_filter, outer };
        if !self.read_path_into(t, &path, &env, Some(keep), &mut sink)? {
            // A probe that does not convert: the table is scanned, as `read_leaf` does.
            let keep = RowFilter { cols: inner_cols, exprs: &semi.inner_filter, outer };
            self.read_path_into(t, &access::AccessPath::scan(), &env, Some(keep), &mut sink)?;
        }
        Ok(sink.marked)
    }

    /// Marks the outer keys the subquery's rows have, reading only the entries of `index`,
    /// which leads with the key column (of integer type `ty`): one row per entry, its key
    /// decoded from the entry's first bytes without building a row. The entries come in key
    /// order, so a key equal to the one before marks nothing new and is not looked up.
    fn mark_from_index(
        &mut self,
        t: &TableRef,
        index: u16,
        ty: SqlType,
        mut marked: Marked,
    ) -> Result<Marked, SqlError> {
        let mut last: Option<Option<i64>> = None;
        self.index_keys(t, index, Bound::Unbounded, Bound::Unbounded, &mut |key| {
            let Some(k) = decode_leading_integer(ty, key) else {
                marked.other = true;
                return false;
            };
            if last == Some(k) {
                marked.rows += 1;
                return true;
            }
            last = Some(k);
            marked.mark(k)
        })?;
        Ok(marked)
    }

    /// The plan of a right hash join of `semi`: the outer rows (`left`) build, the
    /// subquery's table probes.
    pub(super) fn explain_right_semi_join(
        &mut self,
        semi: &SemiJoin<'_>,
        left: PlanNode,
        kept: f64,
        outer: Option<&Env<'_>>,
    ) -> Result<PlanNode, SqlError> {
        let logical = if semi.anti { "Right Anti Semi Join" } else { "Right Semi Join" };
        let inner =
            self.explain_pushed(semi.from, None, &semi.inner_filter, outer, semi.demand.as_ref())?;
        let (o, i) = semi.keys[0];
        let args = format!("HASH:({o})=({i})");
        Ok(PlanNode::join("Hash Match", logical, args, kept, left, inner.node))
    }
}
