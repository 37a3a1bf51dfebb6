//! Merge join: the rows joined so far, already in the order of an integer key, matched
//! against a leaf read in the order of its clustered key.
//!
//! The step applies where an equality joins a column of the rows joined so far to the
//! leading key column of the leaf's clustered index, both of integer types, and the rows
//! joined so far ascend on their column (NULLs first, as an ascending index gives them).
//! The leaf is read once, in key order, from the joined rows' first key to their last; each
//! row it reads is matched by moving forward through the joined rows ([`MergeProbe`]).
//! Nothing is hashed and nothing is sought, and a leaf row whose key no joined row has is
//! turned away before its other columns are decoded (the read asks the walk first, as it
//! asks a hash probe, `probe.rs`). So it takes the place of a hash join wherever it
//! applies, but where a hash join would let the first leaf's read stream past the second
//! leaf's hash (`probe.rs` asks without merges), which a merge would hold whole; index
//! nested loops stay cheaper where the joined rows are few against the leaf (their seeks,
//! each from the last one's cursor, skip what a merge would read).
//!
//! The joined rows are held (every join step holds its left side), so the merge is
//! one-sided: the leaf streams, the joined rows are walked. Its pairs are given in the
//! joined rows' order, each one's matches in the leaf's order, as index nested loops or
//! a hash join would give them (`probe.rs` puts them in that order).

use std::ops::Range;

use walden_engine::types::{SqlType, Value};

use super::pipeline::Streaming;
use super::{clone_ref, integer_key, is_key_of, Flat, Input, JoinOutput, Shape};
use crate::ast::{Expr, ExprKind};
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::query::Rows;
use crate::exec::plan::access::{RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The equality a merge join matches on: `joined` (a column of the rows joined so far, at
/// position `at` among their columns) equals `leaf`, the leading key column of the leaf's
/// clustered index.
#[derive(Debug, Clone, Copy)]
pub(super) struct MergeKey<'e> {
    pub(super) joined: &'e Expr,
    pub(super) leaf: &'e Expr,
    pub(super) at: usize,
}

/// Whether the integer values at position `at` of `rows` ascend, NULLs first: the order
/// in which a merge join can walk them.
pub(super) fn ascending(rows: &[Vec<Value>], at: usize) -> bool {
    let mut last: Option<i64> = None;
    for row in rows {
        match row.get(at) {
            Some(Value::Null) if last.is_none() => {}
            Some(v) => match integer_key(v) {
                Some(k) if last.is_none_or(|l| l <= k) => last = Some(k),
                _ => return false,
            },
            None => return false,
        }
    }
    true
}

fn is_integer(ty: SqlType) -> bool {
    matches!(ty, SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt)
}

impl Run<'_> {
    /// The equality among `keys` (joined side, leaf side; see `equi_keys`) on which leaf
    /// `leaf` can be merged with the rows joined so far, whose columns are `left_cols` and
    /// which ascend on the positions `ascends` accepts: the leaf is a table, the leaf side
    /// is the leading column of its clustered key, both sides are integer columns, and the
    /// leaf's own conjuncts `local` would scan it whole (a merge reads it in key order
    /// between the joined rows' first and last keys instead; a leaf its conjuncts seek is
    /// left to the other methods).
    pub(super) fn merge_key<'e>(
        &self,
        flat: &Flat<'e>,
        leaf: usize,
        keys: &[(&'e Expr, &'e Expr)],
        local: &[&'e Expr],
        left_cols: &[Col],
        ascends: &dyn Fn(usize) -> bool,
    ) -> Option<MergeKey<'e>> {
        let Input::Table(t) = &flat.leaves[leaf].input else { return None };
        let index = t.def.index(1)?;
        let &leading = index.columns.first()?;
        if !is_integer(t.def.columns[leading].ty) {
            return None;
        }
        let read_cols = flat.leaves[leaf].read_cols();
        let key = keys.iter().find_map(|&(joined, leaf_side)| {
            let (ExprKind::Column(j), ExprKind::Column(l)) = (&joined.kind, &leaf_side.kind) else {
                return None;
            };
            let at = find_column(left_cols, j).ok()??;
            let on = find_column(read_cols, l).ok()??;
            (on == leading && is_integer(left_cols[at].ty) && ascends(at)).then_some(MergeKey {
                joined,
                leaf: leaf_side,
                at,
            })
        })?;
        self.path(flat, t, local, leaf, 0).is_scan().then_some(key)
    }

    /// Whether table leaf `leaf`, read under its own conjuncts `local`, gives its rows in
    /// ascending order of its column at position `at` among its joined columns: SHOWPLAN's
    /// guess at what `ascending` finds in rows it does not have.
    pub(super) fn reads_in_order(
        &self,
        flat: &Flat<'_>,
        leaf: usize,
        local: &[&Expr],
        at: usize,
    ) -> bool {
        let Input::Table(t) = &flat.leaves[leaf].input else { return false };
        let column = match &flat.leaves[leaf].narrow {
            Some(n) => n.keep.get(at).copied(),
            None => Some(at),
        };
        column.is_some_and(|c| {
            c < t.def.columns.len()
                && self.path(flat, t, local, leaf, 0).delivers_order(&t.def, &[c])
        })
    }
}

/// A merge join's walk through the rows joined so far, by their keys: each leaf row's
/// key moves it forward to the joined rows of that key, which are its candidates.
pub(super) struct MergeProbe {
    /// The joined rows' keys, in their order (which ascends, NULLs first).
    keys: Vec<Option<i64>>,
    /// The first joined row whose key is not below the last leaf key asked about.
    next: usize,
    /// The position of the leaf's key among the columns of its rows as read.
    leaf_at: usize,
}

impl MergeProbe {
    /// A walk through `rows`, keyed by their values at `at`, for leaf rows whose key is
    /// at `leaf_at`.
    pub(super) fn new(rows: &[Vec<Value>], at: usize, leaf_at: usize) -> MergeProbe {
        let keys = rows.iter().map(|r| r.get(at).and_then(integer_key)).collect();
        MergeProbe { keys, next: 0, leaf_at }
    }

    /// The first and last keys of the joined rows (not NULL), if any: the range of the
    /// leaf to read.
    pub(super) fn bounds(&self) -> Option<(i64, i64)> {
        let first = self.keys.iter().flatten().next()?;
        let last = self.keys.iter().rev().flatten().next()?;
        Some((*first, *last))
    }

    /// The positions of the joined rows whose key equals the key of `row`, a leaf row as
    /// read. The leaf's rows come in ascending key order, so the walk only moves forward;
    /// a NULL key matches nothing.
    pub(super) fn candidates(&mut self, row: &[Value]) -> Range<usize> {
        let Some(key) = row.get(self.leaf_at).and_then(integer_key) else {
            return self.next..self.next;
        };
        while self.next < self.keys.len() && self.keys[self.next].is_none_or(|k| k < key) {
            self.next += 1;
        }
        let mut end = self.next;
        while end < self.keys.len() && self.keys[end] == Some(key) {
            end += 1;
        }
        self.next..end
    }
}

/// The read of the leaf of a merge join: each row it reads walks the joined rows, and is
/// paired with those of its key.
struct Merging<'s, 'e: 'f, 'f> {
    flat: &'s mut Flat<'e>,
    /// The steps after this one, to stream once it holds too many rows (`pipeline.rs`).
    streaming: Option<Streaming<'f>>,
    out: &'s mut JoinOutput<'f>,
    walk: MergeProbe,
    joined: &'s [Vec<Value>],
    /// The columns of the leaf's rows as read, and its key's column among them.
    leaf_cols: &'s [Col],
    key: [&'s Expr; 1],
    /// What each leaf row is cut to before it is paired (`Flat::shape`).
    shape: Shape,
    /// The step's conjuncts but the key's equality, checked on each pair.
    checks: Filter<'s>,
    /// The candidates `wants` found for the row, when they are the next push's.
    ready: Option<Range<usize>>,
    /// The leaf rows of a key that several joined rows have, held until the key's last
    /// so that each joined row's pairs come together, and those joined rows.
    group: Vec<Vec<Value>>,
    group_of: Range<usize>,
    seen: usize,
}

impl Merging<'_, '_, '_> {
    /// Pairs the held leaf rows of a key with each joined row of that key, in turn.
    fn flush(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        let group = std::mem::take(&mut self.group);
        'pairs: for j in self.group_of.clone() {
            for right in &group {
                if self.out.full()
                    || run.emit(self.out, &self.joined[j], right, &mut self.checks)?
                {
                    break 'pairs;
                }
            }
        }
        Ok(())
    }

    /// Streams the steps after this one once its output holds too many rows.
    fn stream(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        if self.streaming.is_none() {
            return Ok(());
        }
        let walked = (self.walk.next + 1) as f64;
        let expected = self.out.rows.len() as f64 * self.joined.len() as f64 / walked;
        run.stream_rest(self.flat, &mut self.streaming, self.out, expected)
    }
}

impl RowSink for Merging<'_, '_, '_> {
    /// Only the key is needed to know whether a row matches.
    fn unread(&self, n: usize) -> Option<Vec<bool>> {
        crate::exec::execute::filter::unread_by(&self.key, self.leaf_cols, n)
    }

    /// Reading an integer key cannot fail, and the walk only moves forward over keys that
    /// ascend whichever rows are asked.
    fn test_may_go_first(&self) -> bool {
        true
    }

    fn wants(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        run.row_interruption_point(self.seen)?;
        self.seen += 1;
        let found = self.walk.candidates(row);
        let wanted = !found.is_empty();
        self.ready = wanted.then_some(found);
        Ok(wanted)
    }

    fn push(&mut self, run: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
        let found = match self.ready.take() {
            Some(found) => found,
            None => {
                // A read that does not ask `wants` first: the row is counted here.
                run.row_interruption_point(self.seen)?;
                self.seen += 1;
                self.walk.candidates(&row)
            }
        };
        if found.is_empty() {
            return Ok(true);
        }
        if found != self.group_of {
            self.flush(run)?;
        }
        // Found with the row as read; paired as the joined row carries it.
        self.shape.apply(&mut row);
        if found.len() == 1 {
            let left = &self.joined[found.start];
            let mut pair = Vec::with_capacity(left.len() + row.len());
            pair.extend_from_slice(left);
            pair.append(&mut row);
            if run.filter_holds(&mut self.checks, &pair)? {
                self.out.push(run, pair)?;
            }
        } else {
            self.group_of = found;
            self.group.push(row);
        }
        self.stream(run)?;
        Ok(!self.out.full())
    }
}

impl Run<'_> {
    /// A merge join step: the rows joined so far (`acc`), which ascend on `key`, walked by
    /// each row of leaf `leaf` that its own conjuncts `local` keep, read in key order
    /// between the joined rows' first and last keys; a pair goes to `out` if the step's
    /// other conjuncts `rest` hold (not the key's equality, which integer keys make
    /// exact). With `streaming`, a step holding too many rows streams the steps after it
    /// (`pipeline.rs`) through `out`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn merge_joined_leaf<'e: 'f, 'f>(
        &mut self,
        flat: &mut Flat<'e>,
        leaf: usize,
        local: &[&Expr],
        acc: &Rows,
        key: MergeKey<'_>,
        rest: &[&Expr],
        outer: Option<&Env<'_>>,
        out: &mut JoinOutput<'f>,
        streaming: Option<Streaming<'f>>,
    ) -> Result<(), SqlError> {
        let leaf_cols = flat.leaves[leaf].read_cols().to_vec();
        let (Input::Table(t), ExprKind::Column(parts)) = (&flat.leaves[leaf].input, &key.leaf.kind)
        else {
            return Err(SqlError::new(
                50000,
                "Walden's planner merged a source that is not a table.",
            ));
        };
        let t = clone_ref(t);
        let Ok(Some(leaf_at)) = find_column(&leaf_cols, parts) else {
            return Err(SqlError::new(
                50000,
                "Walden's planner merged on a column it cannot find.",
            ));
        };
        let walk = MergeProbe::new(&acc.rows, key.at, leaf_at);
        // No joined row has a key: an inner join pairs nothing.
        let Some((first, last)) = walk.bounds() else { return Ok(()) };
        let mut cols = acc.cols.clone();
        cols.extend(flat.leaves[leaf].cols.iter().cloned());
        let keys = [(key.joined, key.leaf)];
        let checks: Vec<&Expr> = rest.iter().copied().filter(|e| !is_key_of(e, &keys)).collect();
        out.may_stream = streaming.is_some();
        let shape = flat.shape(leaf);
        let mut sink = Merging {
            flat,
            streaming,
            out,
            walk,
            joined: &acc.rows,
            leaf_cols: &leaf_cols,
            key: [key.leaf],
            shape,
            checks: Filter::new(RowFilter { cols: &cols, exprs: &checks, outer }),
            ready: None,
            group: Vec::new(),
            group_of: 0..0,
            seen: 0,
        };
        let keep = Some(RowFilter { cols: &leaf_cols, exprs: local, outer });
        self.read_leading_between(&t, first, last, keep, &mut sink)?;
        sink.flush(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(keys: &[Option<i64>]) -> Vec<Vec<Value>> {
        keys.iter().map(|k| vec![k.map_or(Value::Null, Value::BigInt)]).collect()
    }

    #[test]
    fn ascending_allows_nulls_first_and_ties() {
        assert!(ascending(&rows(&[None, None, Some(1), Some(1), Some(4)]), 0));
        assert!(ascending(&rows(&[]), 0));
        assert!(!ascending(&rows(&[Some(1), None]), 0));
        assert!(!ascending(&rows(&[Some(2), Some(1)]), 0));
        assert!(!ascending(&[vec![Value::Str("a".into())]], 0));
    }

    #[test]
    fn the_walk_finds_each_keys_joined_rows() {
        let mut probe = MergeProbe::new(&rows(&[None, Some(2), Some(2), Some(5), Some(9)]), 0, 0);
        assert_eq!(probe.bounds(), Some((2, 9)));
        assert!(probe.candidates(&[Value::Int(1)]).is_empty());
        assert_eq!(probe.candidates(&[Value::Int(2)]), 1..3);
        assert_eq!(probe.candidates(&[Value::Int(2)]), 1..3);
        assert!(probe.candidates(&[Value::Null]).is_empty());
        assert!(probe.candidates(&[Value::Int(4)]).is_empty());
        assert_eq!(probe.candidates(&[Value::SmallInt(5)]), 3..4);
        assert!(probe.candidates(&[Value::Int(10)]).is_empty());
        assert_eq!(probe.next, 5);
    }
}
