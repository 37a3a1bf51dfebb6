//! A SELECT streamed: its rows go to the output, or its grouping, as the read finds them.
//!
//! `Run::select` collects every row of its FROM clause before it projects them, which a
//! SELECT of ten million rows cannot afford. When a SELECT needs nothing from its rows but
//! each row by itself, it runs here instead: each row the read of its one source keeps
//! (its WHERE clause applied during the read, by the access path the planner chooses), or
//! the last step of its join makes, is
//! projected and given to the output before the next is read, so memory stays flat whatever
//! the table's size, the TDS server sends packets as they fill, and `TOP` ends the read.
//!
//! The conditions, checked before anything is read:
//!
//! * one source that is not an inner join (a table, a view, a derived table, an outer join
//!   or APPLY; a table is read row by row, a grouped derived table gives its groups as its
//!   hash aggregate gives them out (`GroupedSource`), the others are computed first as they
//!   are everywhere; views and derived tables over tables are tables by now, `query/inline.rs`),
//!   or a join, whose rows come as its last step makes them (`Run::stream_join`);
//! * no grouping, aggregate, window, DISTINCT, set operator, OFFSET, CTE, FOR JSON/XML, INTO
//!   or variable assignment, and `TOP` without PERCENT or WITH TIES;
//! * every select-list item's type known before its values: a column, a CAST or CONVERT, a
//!   variable (the result's columns are announced before the first row; `Run::select` types
//!   other expressions by all their values);
//! * no subquery in WHERE (the planner may make it a semi-join);
//! * an ORDER BY only of the table's own columns, ascending, in an order its access path
//!   reads; otherwise (and always over a join) the rows go through a sort, or, under a
//!   `TOP (n)` of at most [`STREAMED_TOP_N`] rows, through a top-N sort (`TopN`) that holds
//!   2n rows at most.
//!
//! An error after rows were sent ends the result set there, and the statement with the
//! error: the client has the rows before it, as SQL Server's clients do.
//!
//! A grouped SELECT (one grouping set) streams its FROM clause into the hash aggregate
//! (`aggregate.rs`) instead of collecting it: a block of one source under the first and
//! fourth conditions above as its read finds the rows, any other block through the join's
//! last step (`Run::plan_from_into`).

mod sink;
mod source;

use walden_engine::types::Value;

use sink::{Sorted, Streamed, Typing};
use source::OneRead;
pub(super) use source::{derived_columns, items_stream, OneSource};

use crate::ast::{ExprKind, JoinKind, OrderByItem, Query, QueryBody, SelectItem, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::bind::prepared::Projection;
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::external_sort::ExternalSort;
use crate::exec::execute::query::{
    order_collations, select_aggregates, select_windows, sorts_by_source_column, ValueType,
};
use crate::exec::output::ColumnInfo;
use crate::exec::plan::access::RowSink;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The largest `TOP (n)` whose rows a streamed top-N sort holds (2n at most, outside the
/// memory grant, as the collected SELECT's top-N sort does); a larger one is collected.
const STREAMED_TOP_N: u64 = 65_536;

/// Where a streamed SELECT's rows go: the client ([`Client`]), or an INSERT's table
/// (`dml/insert_stream.rs`).
pub(crate) trait Destination {
    /// Whether the rows' columns typed by their values must have their types before the
    /// first row goes: a result set announces its columns' types, a table converts each
    /// value to its own column's type and needs no other.
    fn typed(&self) -> bool;
    /// The rows' columns, before the first row; an error there stops the read.
    fn begin(&mut self, run: &mut Run<'_>, columns: &[ColumnInfo]) -> Result<(), SqlError>;
    /// One row, made its columns' types where [`Destination::typed`].
    fn row(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<(), SqlError>;
    /// The rows are all given (or an error stopped them after [`Destination::begin`]).
    fn end(&mut self, run: &mut Run<'_>, sent: u64);
}

/// The client: a result set.
struct Client;

impl Destination for Client {
    fn typed(&self) -> bool {
        true
    }

    fn begin(&mut self, run: &mut Run<'_>, columns: &[ColumnInfo]) -> Result<(), SqlError> {
        run.out.result_set(columns);
        Ok(())
    }

    fn row(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<(), SqlError> {
        run.out.row(&row);
        Ok(())
    }

    fn end(&mut self, run: &mut Run<'_>, sent: u64) {
        run.out.result_end(sent);
    }
}

impl Run<'_> {
    /// Runs query `q` of a SELECT statement streamed, sending at most `limit` rows, where
    /// the module's conditions allow: its row count, or None when it did not run.
    pub(crate) fn stream_select(
        &mut self,
        q: &Query,
        limit: usize,
    ) -> Result<Option<u64>, SqlError> {
        self.stream_into(q, limit, &mut Client)
    }

    /// [`Run::stream_select`] with its rows given to `dest`: the number given, or None when
    /// the query cannot stream (nothing was read then, and `dest` was not begun).
    pub(crate) fn stream_into(
        &mut self,
        q: &Query,
        limit: usize,
        dest: &mut dyn Destination,
    ) -> Result<Option<u64>, SqlError> {
        self.stream_query(q, limit, dest).map_err(|e| match &q.body {
            QueryBody::Select(sel) => self.rebind_unknown_column(e, &sel.from),
            _ => e,
        })
    }

    /// [`Run::stream_select`], whose errors name unknown columns as the planner met them.
    fn stream_query(
        &mut self,
        q: &Query,
        limit: usize,
        dest: &mut dyn Destination,
    ) -> Result<Option<u64>, SqlError> {
        if let Some(q) = self.inline_ctes(q) {
            return self.stream_query(&q, limit, dest);
        }
        let QueryBody::Select(sel) = &q.body else { return Ok(None) };
        if let Some((sel, order_by)) = self.inline_select(sel, &q.order_by) {
            let q = Query {
                body: QueryBody::Select(Box::new(sel)),
                order_by,
                ctes: q.ctes.clone(),
                offset: q.offset.clone(),
                for_json: q.for_json.clone(),
                for_xml: q.for_xml.clone(),
                xml_namespaces: q.xml_namespaces.clone(),
            };
            return self.stream_query(&q, limit, dest);
        }
        let assigns = sel.items.iter().any(|i| matches!(i, SelectItem::Assign { .. }));
        let plain = q.ctes.is_empty()
            && q.offset.is_none()
            && q.for_json.is_none()
            && q.for_xml.is_none()
            && sel.into.is_none()
            && !sel.distinct
            && sel.group_by.is_empty()
            && sel.grouping_sets.is_none()
            && sel.having.is_none()
            && sel.top.as_ref().is_none_or(|t| !t.percent && !t.with_ties);
        let per_row = select_aggregates(sel, &q.order_by).is_empty()
            && select_windows(sel, &q.order_by).is_empty();
        if assigns || !plain || !per_row {
            return Ok(None);
        }
        let limit = match &sel.top {
            Some(t) => limit.min(self.top_quantity(t)? as usize),
            None => limit,
        } as u64;
        if self.joins_reduced(sel) {
            return self.stream_join(q, sel, limit, dest);
        }
        let mut implied = Vec::new();
        let Some(OneSource { cols, parts, read }) =
            self.one_source(sel, &q.order_by, None, &mut implied)?
        else {
            return Ok(None);
        };
        // The ORDER BY is the read's own order, or the rows go through a sort (but for a
        // TOP, which the collected top-N sort keeps in 2n rows).
        let path_ordered =
            q.order_by.iter().all(|o| !o.descending && sorts_by_source_column(sel, o))
                && match &read {
                    OneRead::Table(t, path) => {
                        let order: Option<Vec<usize>> = q
                            .order_by
                            .iter()
                            .map(|o| match &o.expr.kind {
                                ExprKind::Column(parts) => find_column(&cols, parts).ok().flatten(),
                                _ => None,
                            })
                            .collect();
                        order.is_some_and(|order| {
                            order.is_empty() || path.delivers_order(&t.def, &order)
                        })
                    }
                    _ => q.order_by.is_empty(),
                };
        if !path_ordered && sel.top.is_some() && limit > STREAMED_TOP_N {
            return Ok(None);
        }
        let read = |run: &mut Run<'_>, sink: &mut dyn RowSink| {
            run.read_one_source(read, &cols, &parts, None, sink)
        };
        self.stream_rows(q, sel, limit, &cols, path_ordered, true, dest, read).map(Some)
    }

    /// [`Run::stream_query`] of a block whose FROM clause joins (`joins`): its rows go to
    /// the output as the join's last step makes them (`Run::plan_from_feeding`), a plain
    /// TOP's row goal stopping the join where the collected SELECT's would.
    fn stream_join(
        &mut self,
        q: &Query,
        sel: &crate::ast::Select,
        limit: u64,
        dest: &mut dyn Destination,
    ) -> Result<Option<u64>, SqlError> {
        // The collected SELECT may make a subquery a semi-join its plan applies, and keeps a
        // large TOP's sorted rows; both stay there.
        let subquery =
            sel.where_clause.as_ref().is_some_and(crate::exec::execute::query::has_subquery);
        if subquery || (sel.top.is_some() && !q.order_by.is_empty() && limit > STREAMED_TOP_N) {
            return Ok(None);
        }
        let goal = self
            .row_goal(sel, &q.order_by, None)?
            .map(|rows| super::RowGoal { rows, order: &q.order_by });
        let demand = Demand::of_select(sel, &q.order_by);
        let filter = sel.where_clause.as_ref();
        let ordered = q.order_by.is_empty();
        self.plan_from_feeding(&sel.from, filter, None, demand.as_ref(), goal, |run, cols, feed| {
            run.stream_rows(q, sel, limit, cols, ordered, false, dest, feed)
        })
        .map(Some)
    }

    /// Sends the rows `read` gives a sink, of the columns `cols`, through `sel`'s select
    /// list, `q`'s ORDER BY (unless the rows come `ordered`) and at most `limit` of them
    /// (see the module's documentation): the number sent. Unsorted rows whose types are
    /// known announce the result set before the read when `early`, else with the first row
    /// (or at the end): a join's plan binds its ON and WHERE conjuncts as it runs, and a
    /// name none of its sources has is an error with no result set, as when collected. A
    /// destination that needs no types is begun before the read, whatever the order: an
    /// INSERT checks its select list's width before any row is read.
    #[allow(clippy::too_many_arguments)]
    fn stream_rows(
        &mut self,
        q: &Query,
        sel: &crate::ast::Select,
        limit: u64,
        cols: &[Col],
        ordered: bool,
        early: bool,
        dest: &mut dyn Destination,
        read: impl FnOnce(&mut Run<'_>, &mut dyn RowSink) -> Result<(), SqlError>,
    ) -> Result<u64, SqlError> {
        let list = self.select_list(sel, cols)?;
        // Bound before any row is read, as SQL Server binds it: a name that no column has is
        // 207 also when no row comes (a statement's SELECT: no enclosing query to name).
        crate::exec::execute::query::bound(
            &list.exprs,
            &Env { cols, row: &[], outer: None, computed: &[] },
        )?;
        crate::exec::execute::query::bind_order_by(&q.order_by, &list.out_cols, cols)?;
        let columns: Vec<ColumnInfo> =
            list.out_cols.iter().map(crate::exec::execute::query::column_info).collect();
        let typed = dest.typed();
        let value_typed: Vec<(usize, ValueType)> = list
            .out_cols
            .iter()
            .enumerate()
            .filter(|(_, c)| typed && c.hidden)
            .map(|(i, _)| (i, ValueType::default()))
            .collect();
        let sort = match ordered {
            true => None,
            false => Some(Sorted {
                sorter: ExternalSort::new(self.memory_grant(), &desc_of(&q.order_by), false),
                order_by: &q.order_by,
                out_cols: &list.out_cols,
                collations: order_collations(&q.order_by, &list.out_cols, cols)?,
            }),
        };
        let top = match &sort {
            Some(sort) if sel.top.is_some() => {
                Some(self.top_n(&q.order_by, sort, &list.exprs, &list.stars, cols, limit)?)
            }
            _ => None,
        };
        let mut sink = Streamed {
            dest,
            cols,
            exprs: &list.exprs,
            projection: Projection::new(&list.exprs, &list.stars, cols, &[]),
            sent: 0,
            seen: 0,
            limit,
            sort,
            top,
            columns,
            typing: Typing { columns: value_typed, held: Vec::new(), announced: false },
        };
        if !typed || (early && sink.sort.is_none() && sink.typing.columns.is_empty()) {
            sink.announce(self)?;
        }
        let read = if limit == 0 { Ok(()) } else { read(self, &mut sink) };
        // Sorted rows, and rows held back for their types, are announced once all were
        // read: an error in the read leaves no result set, as when the SELECT is collected.
        let read = match (sink.sort.take(), read) {
            (Some(_), Ok(())) if sink.top.is_some() => sink.send_top(self),
            (Some(sort), Ok(())) => {
                sink.announce(self)?;
                sort.sorter.finish(self, |run, _, row| {
                    sink.send(run, row)?;
                    Ok(())
                })
            }
            (Some(_), Err(e)) => return Err(e),
            (None, Ok(())) if !sink.typing.announced => sink.release(self).map(|_| ()),
            (None, read) => read,
        };
        if !sink.typing.announced {
            // An error before any type was known: nothing was announced, nothing is ended.
            return read.map(|()| 0);
        }
        let sent = sink.sent;
        sink.dest.end(self, sent);
        read.map(|()| sent)
    }
}

/// Whether `sel`'s FROM clause is more than one source: sources written with commas, or
/// an inner or cross join (whose sources the plan orders as it likes).
pub(crate) fn joins(sel: &crate::ast::Select) -> bool {
    match sel.from.as_slice() {
        [TableSource::Join(j)] => matches!(j.kind, JoinKind::Inner | JoinKind::Cross),
        [_] | [] => false,
        _ => true,
    }
}

/// Whether each ORDER BY key sorts descending.
fn desc_of(order_by: &[OrderByItem]) -> Vec<bool> {
    order_by.iter().map(|o| o.descending).collect()
}
