//! A streamed SELECT's rows on their way to its destination: projected, held back until
//! their value-typed columns have types, sorted (externally, or by a top-N sort under a
//! `TOP`) when the read does not deliver the ORDER BY, and cut at the row limit.

use std::cmp::Ordering;

use walden_engine::types::{SqlType, Value};

use super::{desc_of, Destination};
use crate::ast::{Expr, ExprKind, OrderByItem};
use crate::exec::bind::prepared::Projection;
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::external_sort::ExternalSort;
use crate::exec::execute::query::{
    compare_keys, compare_row_keys, sort_by_keys, unify_value, KeySources, ValueType, TOP_N_ROUND,
};
use crate::exec::output::ColumnInfo;
use crate::exec::plan::access::RowSink;
use crate::exec::scalar::collation::{sort_value, Collation};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Projects each row it is given and gives it to its destination, until `limit` are given;
/// or, with an ORDER BY its read does not deliver, gives it to an external sort with its
/// sort keys, or to a top-N sort under a TOP.
pub(super) struct Streamed<'s> {
    pub(super) dest: &'s mut dyn Destination,
    pub(super) cols: &'s [Col],
    pub(super) exprs: &'s [Option<&'s Expr>],
    /// The select list prepared once for the read (columns by position, expressions bound).
    pub(super) projection: Projection<'s>,
    pub(super) sent: u64,
    /// Rows given to the sink, for its interruption points: a join whose leaves are each
    /// shorter than `query::ROWS_PER_INTERRUPTION_POINT` asks for the client's cancel nowhere else.
    pub(super) seen: usize,
    pub(super) limit: u64,
    pub(super) sort: Option<Sorted<'s>>,
    pub(super) top: Option<TopN>,
    /// The output columns, announced once their types are known.
    pub(super) columns: Vec<ColumnInfo>,
    pub(super) typing: Typing,
}

/// The types of a streamed SELECT's columns that only their values tell (an expression
/// that is no column, CAST or variable: `query::infer_type`). Unsorted rows are held back
/// until each such column has a value whose type no later value can change; then the result
/// set is announced, and every row is made its columns' types on its way
/// (`query::unify_value`), as the collected SELECT makes its rows. A column whose type can
/// still widen (VARCHAR, DECIMAL...) holds back every row, as the collected SELECT does.
pub(super) struct Typing {
    /// The value-typed output columns and their types so far.
    pub(super) columns: Vec<(usize, ValueType)>,
    /// Rows held back while a type is unknown.
    pub(super) held: Vec<Vec<Value>>,
    /// Whether the result set was announced with the final types.
    pub(super) announced: bool,
}

impl Typing {
    fn see(&mut self, row: &[Value]) {
        for (i, ty) in &mut self.columns {
            ty.see(&row[*i]);
        }
    }

    fn unify(&self, row: &mut [Value], columns: &[ColumnInfo]) -> Result<(), SqlError> {
        for (i, _) in &self.columns {
            unify_value(&mut row[*i], columns[*i].ty)?;
        }
        Ok(())
    }
}

/// A streamed SELECT's rows on their way through a sort.
pub(super) struct Sorted<'s> {
    pub(super) sorter: ExternalSort,
    pub(super) order_by: &'s [OrderByItem],
    pub(super) out_cols: &'s [Col],
    /// Each key's collation (`query::order_collations`).
    pub(super) collations: Vec<Option<&'static Collation>>,
}

/// A streamed `TOP (n) ... ORDER BY` whose read does not deliver the order: the first n
/// rows in it, kept as the collected SELECT keeps them (`Run::select`). Rows gather until
/// there are 2n (at least `TOP_N_ROUND`), are sorted stably and cut to n, and the keys of
/// the n-th become the cutoff: a later row that does not sort before it cannot be among the
/// first n (one that sorts equal comes after it in a stable sort), so it is dropped. When
/// every key is a source column sorted by its own value (`source_keys`), a row is compared
/// with the cutoff in place, before it is projected or any of its values copied: most rows
/// of a large input cost one comparison.
pub(super) struct TopN {
    n: usize,
    desc: Vec<bool>,
    source_keys: Option<Vec<usize>>,
    kept: Vec<(Vec<Value>, Vec<Value>)>,
    cutoff: Option<Vec<Value>>,
}

impl TopN {
    /// Adds a row that sorts before the cutoff, cutting the rows kept to n when they are
    /// 2n.
    fn keep(&mut self, keys: Vec<Value>, out: Vec<Value>) -> Result<(), SqlError> {
        self.kept.push((keys, out));
        if self.kept.len() >= 2 * self.n.max(TOP_N_ROUND) {
            self.cut()?;
        }
        Ok(())
    }

    fn cut(&mut self) -> Result<(), SqlError> {
        sort_by_keys(&mut self.kept, &self.desc)?;
        self.kept.truncate(self.n);
        self.cutoff =
            self.kept.last().filter(|_| self.kept.len() == self.n).map(|(keys, _)| keys.clone());
        Ok(())
    }

    /// Whether the row `row` of the source cannot be among the first n, told from its key
    /// columns in place; false when that cannot be told without its keys.
    fn passes_over(&self, row: &[Value]) -> Result<bool, SqlError> {
        match (&self.cutoff, &self.source_keys) {
            (Some(cutoff), Some(keys)) => {
                Ok(compare_row_keys(row, keys, cutoff, &self.desc)? != Ordering::Less)
            }
            _ => Ok(false),
        }
    }
}

impl Streamed<'_> {
    /// Fixes the value-typed columns' types from what was seen (a column of NULLs only takes
    /// its expression's own type, else INT, as `Run::select` types it) and announces the
    /// result set, once.
    pub(super) fn announce(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        if self.typing.announced {
            return Ok(());
        }
        for &(i, seen) in &self.typing.columns {
            self.columns[i].ty = run.type_by_values(seen, self.exprs[i], self.cols);
        }
        self.typing.announced = true;
        self.dest.begin(run, &self.columns)
    }

    /// Sends `row`, made its columns' types; says whether more are wanted.
    pub(super) fn send(
        &mut self,
        run: &mut Run<'_>,
        mut row: Vec<Value>,
    ) -> Result<bool, SqlError> {
        if self.sent >= self.limit {
            return Ok(false);
        }
        self.typing.unify(&mut row, &self.columns)?;
        self.dest.row(run, row)?;
        self.sent += 1;
        Ok(self.sent < self.limit)
    }

    /// Sends the rows of the top-N sort in their order, announcing the result set first
    /// (typed by those rows, as the collected SELECT types what TOP keeps).
    pub(super) fn send_top(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        let Some(mut top) = self.top.take() else { return Ok(()) };
        top.cut()?;
        for (_, out) in &top.kept {
            self.typing.see(out);
        }
        self.announce(run)?;
        for (_, out) in top.kept {
            if !self.send(run, out)? {
                break;
            }
        }
        Ok(())
    }

    /// Sends the rows held back for their types, announcing the result set first.
    pub(super) fn release(&mut self, run: &mut Run<'_>) -> Result<bool, SqlError> {
        self.announce(run)?;
        let mut more = true;
        for row in std::mem::take(&mut self.typing.held) {
            more = self.send(run, row)?;
        }
        Ok(more)
    }
}

impl RowSink for Streamed<'_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        self.push_borrowed(run, &row)
    }

    /// What is kept or sent is the row's projection, never the row.
    fn borrows(&self) -> bool {
        true
    }

    fn push_borrowed(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        run.row_interruption_point(self.seen)?;
        self.seen += 1;
        if let Some(top) = &self.top {
            if top.passes_over(row)? {
                return Ok(true);
            }
        }
        let env = Env::new(self.cols, row, None);
        let out = run.project_prepared(&self.projection, &env)?;
        if let Some(sort) = &mut self.sort {
            let mut keys = Vec::with_capacity(sort.order_by.len());
            for (o, c) in sort.order_by.iter().zip(&sort.collations) {
                // Refused before any row is announced (the merge would find it later).
                match run.order_key(o, sort.out_cols, &out, &env)? {
                    Value::Xml(_) => return Err(crate::exec::scalar::xml::not_comparable()),
                    key => keys.push(sort_value(key, *c)),
                }
            }
            if let Some(top) = &mut self.top {
                if let Some(cutoff) = &top.cutoff {
                    if compare_keys(&keys, cutoff, &top.desc)? != Ordering::Less {
                        return Ok(true);
                    }
                }
                top.keep(keys, out)?;
                return Ok(true);
            }
            self.typing.see(&out);
            sort.sorter.push(run, keys, out)?;
            return Ok(true);
        }
        if self.typing.announced {
            return self.send(run, out);
        }
        self.typing.see(&out);
        self.typing.held.push(out);
        if self.typing.columns.iter().all(|(_, ty)| ty.is_final()) {
            return self.release(run);
        }
        Ok((self.typing.held.len() as u64) < self.limit)
    }
}

impl Run<'_> {
    /// The top-N sort of the `n` first rows by `order_by` (sorted as `sort` says), over
    /// the output columns `exprs` and `stars` of the rows of `cols`.
    pub(super) fn top_n(
        &self,
        order_by: &[OrderByItem],
        sort: &Sorted<'_>,
        exprs: &[Option<&Expr>],
        stars: &[Option<usize>],
        cols: &[Col],
        n: u64,
    ) -> Result<TopN, SqlError> {
        // The source column each output column copies, if it does.
        let copies: Vec<Option<usize>> = exprs
            .iter()
            .zip(stars)
            .map(|(e, star)| match e {
                Some(e) => match &e.kind {
                    ExprKind::Column(parts) => find_column(cols, parts).ok().flatten(),
                    _ => None,
                },
                None => *star,
            })
            .collect();
        let sources = KeySources::new(order_by, sort.out_cols, cols)?;
        // A key compares in place when it is its column's own value: sorted by the default
        // order (no collation key to make) and not XML (refused, with the row's keys made).
        let in_place = |(&c, collation): (&usize, &Option<&Collation>)| {
            collation.is_none_or(|c| c.order().is_default()) && cols[c].ty != SqlType::Xml
        };
        let source_keys = sources
            .source_columns(&copies)
            .filter(|keys| keys.iter().zip(&sort.collations).all(in_place));
        Ok(TopN {
            n: n as usize,
            desc: desc_of(order_by),
            source_keys,
            kept: Vec::new(),
            cutoff: None,
        })
    }
}
