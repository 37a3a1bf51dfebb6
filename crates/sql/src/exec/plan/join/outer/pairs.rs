//! An outer join's pairs, made as its left side's rows are read (`left.rs`).
//!
//! Which method joins the right side depends on how many left rows there are (a seek per
//! row costs more the more rows there are; a hash of the preserved side needs it whole). So
//! the left rows are held while they are few: when the read ends first, the method is
//! chosen from their count, exactly, as it always was. Past [`LEFT_HELD_BYTES`], or past
//! what the operator's memory grant gives, it is chosen for at least the rows held, and
//! from then on every row is paired as it comes, the held ones first: a left side of any
//! size goes through the join with a bounded part of it in memory. When the method chosen
//! then hashes the preserved side (the right side is larger still, and cannot be sought),
//! the left rows are held on, as that hash needs, while the grant has room; past it the
//! right side is hashed instead, and partitioned to disk past its own grant.

use walden_engine::types::Value;

use super::super::{Flat, Input, JoinOutput, Narrowed};
use super::preserved_hash::Sides;
use super::read_inner::ReadInner;
use super::Method;
use crate::ast::{Expr, JoinKind};
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::grant::{row_bytes, HeldBytes};
use crate::exec::execute::query::{Rows, TableRef};
use crate::exec::execute::row_queue::QueuedRows;
use crate::exec::plan::access::{AccessPath, RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The bytes of left rows held before the method is chosen without knowing how many there
/// are. TPC-H Q13's 15,000 customers at scale 0.1, or 150,000 at scale 1 (one key column
/// each), are held and counted.
pub(super) const LEFT_HELD_BYTES: usize = 16 << 20;

/// What the join's plan fixes for pairing a left row.
pub(super) struct Joined<'a, 'e> {
    pub(super) left_cols: &'a [Col],
    /// The right side's columns as read, and the positions of those a pair carries.
    pub(super) right_cols: &'a [Col],
    pub(super) kept: &'a [usize],
    /// A pair's columns.
    pub(super) run_cols: &'a [Col],
    /// The ON condition's conjuncts; those on the right side alone, applied to its read
    /// where it is not preserved; the others, which a pair is checked against; and those
    /// without the equalities, for pairs a hash of exactly equal keys found.
    pub(super) parts: &'a [&'e Expr],
    pub(super) pushed: &'a [&'e Expr],
    pub(super) unpushed: &'a [&'e Expr],
    pub(super) unkeyed: &'a [&'e Expr],
    /// The equalities a hash joins by (left side's, right side's), their left sides, and
    /// those prepared for left rows.
    pub(super) keys: &'a [(&'e Expr, &'e Expr)],
    pub(super) left_keys: &'a [&'e Expr],
    pub(super) probes: &'a [Scalar<'e>],
    pub(super) kind: JoinKind,
    pub(super) outer: Option<&'a Env<'a>>,
}

impl Joined<'_, '_> {
    /// Whether a left row no right row matched is given NULL-extended.
    pub(super) fn keeps_left(&self) -> bool {
        matches!(self.kind, JoinKind::LeftOuter | JoinKind::FullOuter)
    }
}

/// How each left row is paired once the method is chosen.
enum Streaming<'a, 'e> {
    /// Index nested loops: the right table sought by the path with the row's values.
    Seek { t: TableRef, path: AccessPath<'e>, check: Filter<'a> },
    /// The right side read and hashed (or held for nested loops).
    Read { inner: ReadInner, check: Filter<'a> },
}

/// The sink an outer join's left rows are read into.
pub(super) struct Pairs<'a, 'e, 'f> {
    join: Joined<'a, 'e>,
    /// The positions of a left row's values a pair carries; None for all.
    keep: Option<&'a [usize]>,
    /// Leaf 0 the left side, leaf 1 the right: what the method is chosen with.
    both: &'a mut Flat<'e>,
    /// The right side, until a method takes it (and its rows, when they were queued).
    right: Input,
    queued: Option<QueuedRows>,
    out: &'a mut JoinOutput<'f>,
    held: Vec<Vec<Value>>,
    /// What the held rows take of the query memory.
    held_bytes: HeldBytes,
    /// The method chosen past [`LEFT_HELD_BYTES`] hashes the left side: its rows are held
    /// on while the grant has room.
    hold_all: bool,
    streaming: Option<Streaming<'a, 'e>>,
    /// Left rows paired so far.
    paired: usize,
}

impl<'a, 'e, 'f> Pairs<'a, 'e, 'f> {
    pub(super) fn new(
        join: Joined<'a, 'e>,
        keep: Option<&'a [usize]>,
        both: &'a mut Flat<'e>,
        (right, queued): (Input, Option<QueuedRows>),
        out: &'a mut JoinOutput<'f>,
    ) -> Self {
        Pairs {
            join,
            keep,
            both,
            right,
            queued,
            out,
            held: Vec::new(),
            held_bytes: HeldBytes::default(),
            hold_all: false,
            streaming: None,
            paired: 0,
        }
    }

    /// The method for at least `left_rows` left rows.
    fn choose(&mut self, run: &mut Run<'_>, left_rows: usize) -> Method<'e> {
        let j = &self.join;
        let keep_right = j.kind == JoinKind::FullOuter;
        run.outer_method(self.both, &self.right, j.parts, j.keys, keep_right, left_rows as f64)
    }

    /// Sets up `method` (not a hash of the left side) to pair the rows from now on.
    fn start(&mut self, run: &mut Run<'_>, method: Method<'e>) -> Result<(), SqlError> {
        let j = &self.join;
        let right = std::mem::replace(&mut self.right, Input::Estimated(0.0));
        let streaming = match (method, right) {
            (Method::Seek(path), Input::Table(t)) => {
                let check = RowFilter { cols: j.run_cols, exprs: j.unpushed, outer: j.outer };
                Streaming::Seek { t, path, check: Filter::new(check) }
            }
            (_, right) => {
                let inner = run.read_inner(right, self.queued.take(), j, self.both)?;
                let exprs = if inner.exact() { j.unkeyed } else { j.unpushed };
                let check = RowFilter { cols: j.run_cols, exprs, outer: j.outer };
                Streaming::Read { inner, check: Filter::new(check) }
            }
        };
        self.streaming = Some(streaming);
        Ok(())
    }

    /// Pairs the rows held so far, and gives back the memory they held; false once the
    /// output wants no more.
    fn drain(&mut self, run: &mut Run<'_>) -> Result<bool, SqlError> {
        let held = std::mem::take(&mut self.held);
        self.held_bytes.release_all();
        for row in held {
            if !self.pair(run, row)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Holds `row` while the method is not chosen: false when it was held past the
    /// operator's room for held rows (then the method is to be chosen; the row is held,
    /// uncounted).
    fn hold(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> bool {
        let bytes = row_bytes(&row);
        self.held.push(row);
        let room = self.hold_all || self.held_bytes.bytes() + bytes <= LEFT_HELD_BYTES;
        room && self.held_bytes.try_hold(run, bytes)
    }

    /// Gives the output the pairs of left row `lrow`; false once it wants no more.
    fn pair(&mut self, run: &mut Run<'_>, lrow: Vec<Value>) -> Result<bool, SqlError> {
        run.row_interruption_point(self.paired)?;
        self.paired += 1;
        if self.out.full() {
            return Ok(false);
        }
        let j = &self.join;
        match &mut self.streaming {
            Some(Streaming::Seek { t, path, check }) => {
                let env = Env::new(j.left_cols, &lrow, j.outer);
                let keep = Some(RowFilter { cols: j.right_cols, exprs: j.pushed, outer: j.outer });
                let whole = j.kept.len() == j.right_cols.len();
                let mut found = Narrowed { keep: j.kept, whole, rows: Vec::new() };
                run.read_path_or_scan_into(t, path, &env, keep, &mut found)?;
                let rows = found.rows;
                let pair = |k: usize| rows[k].as_slice();
                let emitted = run.emit_each(self.out, lrow, rows.len(), pair, check)?;
                run.keep_unmatched(self.out, emitted, j.keeps_left(), j.kept.len())?;
            }
            Some(Streaming::Read { inner, check }) => {
                run.pair_read(inner, lrow, j, check, self.out)?;
            }
            None => {
                return Err(SqlError::new(50000, "Walden paired an outer join's row unplanned."))
            }
        }
        Ok(!self.out.full())
    }

    /// After the left side's last row: the method chosen from the rows held if none was,
    /// every row held paired, and a FULL JOIN's unmatched right rows added.
    pub(super) fn finish(mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        if self.streaming.is_none() {
            if self.held.is_empty() && self.join.kind != JoinKind::FullOuter {
                // No left row: a LEFT JOIN has no pairs, and the right side is not read.
                return Ok(());
            }
            let method = self.choose(run, self.held.len());
            if let (Method::PreservedHash, Input::Table(t)) = (&method, &self.right) {
                let j = &self.join;
                let left =
                    Rows { cols: j.left_cols.to_vec(), rows: std::mem::take(&mut self.held) };
                let sides =
                    Sides { left, table: t, cols: j.right_cols, kept: j.kept, both: self.both };
                let keep_left = j.keeps_left();
                return run.join_by_preserved_hash(
                    sides, j.keys, j.parts, j.pushed, keep_left, j.run_cols, j.outer, self.out,
                );
            }
            self.start(run, method)?;
            if !self.drain(run)? {
                return Ok(());
            }
        }
        if let Some(Streaming::Read { inner, .. }) = self.streaming {
            run.finish_read(inner, &self.join, self.out)?;
        }
        Ok(())
    }
}

impl RowSink for Pairs<'_, '_, '_> {
    fn push(&mut self, run: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
        if let Some(keep) = self.keep {
            row = keep.iter().map(|&i| std::mem::replace(&mut row[i], Value::Null)).collect();
        }
        if self.streaming.is_some() {
            return self.pair(run, row);
        }
        if !self.hold(run, row) {
            // Past the grant a hash of the left side would have to spill: the inner side is
            // hashed instead, partitioned to disk past its own grant (`read_inner.rs`).
            let method =
                if self.hold_all { Method::Read } else { self.choose(run, self.held.len()) };
            match method {
                Method::PreservedHash if matches!(self.right, Input::Table(_)) => {
                    self.hold_all = true;
                }
                method => {
                    self.start(run, method)?;
                    return self.drain(run);
                }
            }
        }
        Ok(true)
    }
}
