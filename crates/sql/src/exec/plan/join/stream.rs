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

use std::cmp::Ordering;

use walden_engine::types::{SqlType, Value};

use super::windowed::WindowedSource;
use super::{conjuncts, Flat, FromSink, Input};
use crate::ast::{
    Expr, ExprKind, JoinKind, OrderByItem, Query, QueryBody, SelectItem, TableSource,
};
use crate::exec::bind::demand::Demand;
use crate::exec::bind::prepared::Projection;
use crate::exec::eval::{find_column, full_text_refusal, Col, Env};
use crate::exec::execute::aggregate::Grouping;
use crate::exec::execute::external_sort::ExternalSort;
use crate::exec::execute::query::{
    compare_keys, compare_row_keys, grouped_columns, grouping_sets, order_collations,
    select_aggregates, select_windows, sort_by_keys, sorts_by_source_column, unify_value,
    KeySources, ValueType, TOP_N_ROUND,
};
use crate::exec::output::ColumnInfo;
use crate::exec::plan::access::{AccessPath, RowFilter, RowSink};
use crate::exec::scalar::collation::{sort_value, Collation};
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

/// Projects each row it is given and gives it to its destination, until `limit` are given;
/// or, with an ORDER BY its read does not deliver, gives it to an external sort with its
/// sort keys, or to a top-N sort under a TOP.
struct Streamed<'s> {
    dest: &'s mut dyn Destination,
    cols: &'s [Col],
    exprs: &'s [Option<&'s Expr>],
    /// The select list prepared once for the read (columns by position, expressions bound).
    projection: Projection<'s>,
    sent: u64,
    /// Rows given to the sink, for its interruption points: a join whose leaves are each
    /// shorter than `query::ROWS_PER_INTERRUPTION_POINT` asks for the client's cancel nowhere else.
    seen: usize,
    limit: u64,
    sort: Option<Sorted<'s>>,
    top: Option<TopN>,
    /// The output columns, announced once their types are known.
    columns: Vec<ColumnInfo>,
    typing: Typing,
}

/// The types of a streamed SELECT's columns that only their values tell (an expression
/// that is no column, CAST or variable: `query::infer_type`). Unsorted rows are held back
/// until each such column has a value whose type no later value can change; then the result
/// set is announced, and every row is made its columns' types on its way
/// (`query::unify_value`), as the collected SELECT makes its rows. A column whose type can
/// still widen (VARCHAR, DECIMAL...) holds back every row, as the collected SELECT does.
struct Typing {
    /// The value-typed output columns and their types so far.
    columns: Vec<(usize, ValueType)>,
    /// Rows held back while a type is unknown.
    held: Vec<Vec<Value>>,
    /// Whether the result set was announced with the final types.
    announced: bool,
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
struct Sorted<'s> {
    sorter: ExternalSort,
    order_by: &'s [OrderByItem],
    out_cols: &'s [Col],
    /// Each key's collation (`query::order_collations`).
    collations: Vec<Option<&'static Collation>>,
}

/// A streamed `TOP (n) ... ORDER BY` whose read does not deliver the order: the first n
/// rows in it, kept as the collected SELECT keeps them (`Run::select`). Rows gather until
/// there are 2n (at least `TOP_N_ROUND`), are sorted stably and cut to n, and the keys of
/// the n-th become the cutoff: a later row that does not sort before it cannot be among the
/// first n (one that sorts equal comes after it in a stable sort), so it is dropped. When
/// every key is a source column sorted by its own value (`source_keys`), a row is compared
/// with the cutoff in place, before it is projected or any of its values copied: most rows
/// of a large input cost one comparison.
struct TopN {
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
    fn announce(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
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
    fn send(&mut self, run: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
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
    fn send_top(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
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
    fn release(&mut self, run: &mut Run<'_>) -> Result<bool, SqlError> {
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

/// The one source of a SELECT block, ready to give its rows one at a time.
pub(super) struct OneSource<'e> {
    pub(super) cols: Vec<Col>,
    /// The WHERE clause's conjuncts, every one applied as the rows are read.
    pub(super) parts: Vec<&'e Expr>,
    pub(super) read: OneRead<'e>,
}

/// How a [`OneSource`]'s rows are had.
pub(super) enum OneRead<'e> {
    /// A table, by the access path the planner chose.
    Table(crate::exec::execute::query::TableRef, AccessPath<'e>),
    /// Rows computed up front (a view, a derived table, an outer join).
    Rows(Vec<Vec<Value>>),
    /// A grouped derived table's groups, made but not yet given out.
    Groups(Box<GroupedSource<'e>>),
    /// A derived table of window calls, its rows gone into its windows (`windowed.rs`).
    Windows(Box<WindowedSource<'e>>),
    /// None: the plan is only being explained.
    Nothing,
}

/// Gives each row to a hash aggregate, made when the rows' columns are known.
struct Grouped<'s, 'a, 'o> {
    keys: &'s [&'a Expr],
    aggs: &'s [&'a Expr],
    grouping: Option<Grouping<'a>>,
    outer: Option<&'o Env<'o>>,
}

impl RowSink for Grouped<'_, '_, '_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        self.push_borrowed(run, &row)
    }

    /// A group copies its first row; no other row is kept.
    fn borrows(&self) -> bool {
        true
    }

    fn push_borrowed(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        match &mut self.grouping {
            Some(grouping) => grouping.push(run, row, self.outer)?,
            None => return Err(SqlError::new(50000, "Walden grouped rows of unknown columns.")),
        }
        Ok(true)
    }
}

impl FromSink for Grouped<'_, '_, '_> {
    fn start(&mut self, run: &mut Run<'_>, cols: &[Col]) -> Result<(), SqlError> {
        self.grouping = Some(Grouping::new(run, cols, self.keys, self.aggs, true)?);
        Ok(())
    }
}

/// A derived table `(SELECT keys..., COUNT(*) ... FROM ... GROUP BY keys) AS d` that is the
/// one source of its block: its hash aggregate has taken its rows, and each group, once
/// through HAVING and the select list, goes to the block as the aggregate gives it out
/// (`Grouping::finish_into`), so the block's rows are never held as a second copy of the
/// groups (which spill past the grant, `aggregate.rs`).
pub(super) struct GroupedSource<'e> {
    grouping: Grouping<'e>,
    keys: Vec<&'e Expr>,
    /// The grouped rows' columns, and where each aggregate is in them.
    cols: Vec<Col>,
    computed: Vec<(usize, usize)>,
    having: Option<&'e Expr>,
    /// The derived table's select list over the grouped rows.
    exprs: Vec<Option<&'e Expr>>,
    stars: Vec<Option<usize>>,
}

/// The type of a select-list item of a grouped derived table that streams: known before
/// its values (a column, CAST, CONVERT, variable) or a count; None for anything typed by
/// its values, which the collected derived table would type by all of them.
fn count_type(e: &Expr) -> Option<walden_engine::types::SqlType> {
    use walden_engine::types::SqlType;
    match &e.kind {
        ExprKind::Function(f) if f.over.is_none() && f.name.schema.is_none() => {
            let name = &f.name.name.value;
            if name.eq_ignore_ascii_case("COUNT") {
                Some(SqlType::Int)
            } else if name.eq_ignore_ascii_case("COUNT_BIG") {
                Some(SqlType::BigInt)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The grouped SELECT of a derived table that can feed its block group by group: one
/// GROUP BY (no grouping sets), no DISTINCT, TOP, ORDER BY, window, CTE, set operator, `*`
/// or FOR JSON/XML, and select-list items that name their columns (or the table's column
/// list does) and are columns, CASTs, CONVERTs or counts.
fn groupable<'q>(q: &'q Query, columns: &[crate::ast::Ident]) -> Option<&'q crate::ast::Select> {
    let sel = crate::exec::execute::query::bare_select(q)?;
    let plain = !sel.group_by.is_empty()
        && !sel.from.is_empty()
        && select_windows(sel, &[]).is_empty()
        && (columns.is_empty() || columns.len() == sel.items.len());
    if !plain {
        return None;
    }
    for (i, item) in sel.items.iter().enumerate() {
        let SelectItem::Expr { expr, alias } = item else { return None };
        let named =
            alias.is_some() || columns.get(i).is_some() || matches!(expr.kind, ExprKind::Column(_));
        let typed = matches!(
            expr.kind,
            ExprKind::Column(_) | ExprKind::Cast(_) | ExprKind::Convert(_) | ExprKind::Variable(_)
        ) || count_type(expr).is_some();
        if !named || !typed {
            return None;
        }
    }
    Some(sel)
}

impl Run<'_> {
    /// The one source of `sel`, if its FROM clause is one source that is not an inner join
    /// and its WHERE clause has no subquery (which the planner may make a semi-join), with
    /// the access path chosen for its conjuncts: nothing is read yet.
    pub(super) fn one_source<'e>(
        &mut self,
        sel: &'e crate::ast::Select,
        order_by: &'e [crate::ast::OrderByItem],
        outer: Option<&Env<'_>>,
    ) -> Result<Option<OneSource<'e>>, SqlError> {
        if sel.from.is_empty()
            || joins(sel)
            || sel.where_clause.as_ref().is_some_and(crate::exec::execute::query::has_subquery)
        {
            return Ok(None);
        }
        let mut parts = Vec::new();
        if let Some(w) = &sel.where_clause {
            conjuncts(w, &mut parts);
        }
        // A kept plan (`exec::plan_cache`) replaces all of the planning below.
        if let Some(plan) = self.block_plan_of(sel, order_by) {
            let (cols, parts, read) = self.bind_block_plan(plan, &parts, outer)?;
            let read = read.map_or(OneRead::Nothing, |(t, path)| OneRead::Table(t, path));
            return Ok(Some(OneSource { cols, parts, read }));
        }
        let versions = (self.s.db.schema_version(), self.s.instance.tempdb().schema_version());
        if let Some((cols, grouped)) = self.grouped_source(&sel.from[0], outer)? {
            for part in &parts {
                full_text_refusal(part, &[&cols])?;
            }
            let read = OneRead::Groups(Box::new(grouped));
            return Ok(Some(OneSource { cols, parts, read }));
        }
        if let Some((cols, windowed)) = self.windowed_source(&sel.from[0], outer)? {
            for part in &parts {
                full_text_refusal(part, &[&cols])?;
            }
            let read = OneRead::Windows(Box::new(windowed));
            return Ok(Some(OneSource { cols, parts, read }));
        }
        // As in `plan_pushed`: an outer join may apply these to its preserved side.
        let mut flat = Flat::default();
        let mut on = Vec::new();
        let demand = Demand::of_select(sel, order_by);
        self.flatten(&sel.from[0], &mut flat, &mut on, &parts, outer, demand.as_ref())?;
        if flat.leaves.len() != 1 {
            return Ok(None);
        }
        parts.extend(on);
        let cols = flat.leaves[0].cols.clone();
        for part in &parts {
            full_text_refusal(part, &[&cols])?;
        }
        // Conjuncts of no column of the source (constants, the enclosing query's columns)
        // are checked once, as `join_leaves` does: one that does not hold reads nothing.
        let outer_env = Env { cols: &[], row: &[], outer, computed: &[] };
        for &part in &parts {
            if flat.leaves_of(part) == Some(0) && self.predicate(part, &outer_env)? != Some(true) {
                return Ok(Some(OneSource { cols, parts, read: OneRead::Nothing }));
            }
        }
        self.gather_estimates(&mut flat, &parts);
        if self.may_cache_block(sel) {
            if let Some(plan) = self.block_plan(sel, order_by, &flat, versions) {
                self.s.plans.insert(sel, std::sync::Arc::new(plan));
            }
        }
        let read = match std::mem::replace(&mut flat.leaves[0].input, Input::Estimated(0.0)) {
            Input::Table(t) => {
                let path = self.path(&flat, &t, &parts, 0, 0);
                OneRead::Table(t, path)
            }
            Input::Rows(rows) => OneRead::Rows(rows),
            Input::Estimated(_) => OneRead::Nothing,
        };
        Ok(Some(OneSource { cols, parts, read }))
    }

    /// Gives `sink` the rows of `read` that satisfy `parts`, until it says stop.
    pub(super) fn read_one_source(
        &mut self,
        read: OneRead<'_>,
        cols: &[Col],
        parts: &[&Expr],
        outer: Option<&Env<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        match read {
            OneRead::Table(t, path) => {
                let keep = Some(RowFilter { cols, exprs: parts, outer });
                let env = Env { cols: &[], row: &[], outer, computed: &[] };
                // A probe that does not convert to its key: the scan's comparisons say
                // what it means.
                if !self.read_path_into(&t, &path, &env, keep, sink)? {
                    self.read_path_into(&t, &AccessPath::scan(), &env, keep, sink)?;
                }
                Ok(())
            }
            OneRead::Rows(rows) => self.push_rows(rows, cols, parts, outer, sink),
            OneRead::Groups(g) => {
                let GroupedSource { grouping, keys, cols: gcols, computed, having, exprs, stars } =
                    *g;
                let mut n = 0;
                grouping.finish_into(self, &keys, outer, &mut |run, row| {
                    run.row_interruption_point(n)?;
                    n += 1;
                    let env = Env { cols: &gcols, row: &row, outer, computed: &computed };
                    if let Some(h) = having {
                        if run.predicate(h, &env)? != Some(true) {
                            return Ok(true);
                        }
                    }
                    let out = run.project(&exprs, &stars, &env)?;
                    if !run.all_hold(parts, cols, &out, outer)? {
                        return Ok(true);
                    }
                    sink.push(run, out)
                })?;
                Ok(())
            }
            OneRead::Windows(w) => self.read_windowed(*w, cols, parts, outer, sink),
            OneRead::Nothing => Ok(()),
        }
    }

    /// GROUP BY (one grouping set, `keys`) and the aggregates `aggs` of a SELECT block,
    /// hashed as the rows come (`aggregate.rs`): those of a block of one source as its read
    /// finds them, those of a join as its last step makes them where the plan allows
    /// (`Run::plan_from_into`), so that the block's rows are not held. The grouped rows,
    /// their columns and where each aggregate is.
    #[allow(clippy::type_complexity)]
    pub(crate) fn group_from(
        &mut self,
        sel: &crate::ast::Select,
        order_by: &[crate::ast::OrderByItem],
        keys: &[&Expr],
        aggs: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<(Vec<Col>, Vec<Vec<Value>>, Vec<(usize, usize)>), SqlError> {
        let grouping = self.group_into(sel, order_by, keys, aggs, outer)?;
        let cols = grouping.cols().to_vec();
        let rows = grouping.finish(self, keys, outer)?;
        let (gcols, computed) = grouped_columns(&cols, aggs);
        Ok((gcols, rows, computed))
    }

    /// [`Run::group_from`]'s hash aggregate, every row of the block given to it, not yet
    /// finished.
    fn group_into<'a>(
        &mut self,
        sel: &crate::ast::Select,
        order_by: &[crate::ast::OrderByItem],
        keys: &[&'a Expr],
        aggs: &[&'a Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Grouping<'a>, SqlError> {
        let mut sink = Grouped { keys, aggs, grouping: None, outer };
        match self.one_source(sel, order_by, outer)? {
            Some(OneSource { cols, parts, read }) => {
                sink.start(self, &cols)?;
                self.read_one_source(read, &cols, &parts, outer, &mut sink)?;
            }
            None => {
                let demand = Demand::of_select(sel, order_by);
                let filter = sel.where_clause.as_ref();
                self.plan_from_into(&sel.from, filter, outer, demand.as_ref(), &mut sink)?;
            }
        }
        sink.grouping.ok_or_else(|| SqlError::new(50000, "Walden grouped rows of unknown columns."))
    }

    /// `src` as a [`GroupedSource`] with its columns (qualified by its alias), if it is a
    /// derived table that can feed its block group by group (`groupable`): its rows are
    /// grouped now.
    fn grouped_source<'e>(
        &mut self,
        src: &'e TableSource,
        outer: Option<&Env<'_>>,
    ) -> Result<Option<(Vec<Col>, GroupedSource<'e>)>, SqlError> {
        let TableSource::Derived { query, alias, columns } = src else { return Ok(None) };
        let Some(dsel) = groupable(query, columns) else { return Ok(None) };
        let (_, sets) = grouping_sets(&dsel.group_by, None)?;
        let Ok([keys]) = <[Vec<&Expr>; 1]>::try_from(sets) else { return Ok(None) };
        if keys.is_empty() {
            return Ok(None);
        }
        let aggs = select_aggregates(dsel, &[]);
        // The same grouping the derived table's own SELECT would make.
        let grouping = self.group_into(dsel, &[], &keys, &aggs, outer)?;
        let (gcols, computed) = grouped_columns(grouping.cols(), &aggs);
        let list = self.select_list(dsel, &gcols)?;
        let mut cols = Vec::with_capacity(list.out_cols.len());
        for (i, (mut c, e)) in list.out_cols.into_iter().zip(&list.exprs).enumerate() {
            if c.hidden {
                c.ty = e.and_then(count_type).unwrap_or(c.ty);
                c.hidden = false;
            }
            c.qual = Some(alias.value.clone());
            if let Some(n) = columns.get(i) {
                c.name = n.value.clone();
            }
            cols.push(c);
        }
        let grouped = GroupedSource {
            grouping,
            keys,
            cols: gcols,
            computed,
            having: dsel.having.as_ref(),
            exprs: list.exprs,
            stars: list.stars,
        };
        Ok(Some((cols, grouped)))
    }

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
            QueryBody::Select(sel) => crate::exec::eval::rebind_unknown_column(e, &sel.from),
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
        if joins(sel) {
            return self.stream_join(q, sel, limit, dest);
        }
        let Some(OneSource { cols, parts, read }) = self.one_source(sel, &q.order_by, None)? else {
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

    /// The top-N sort of the `n` first rows by `order_by` (sorted as `sort` says), over
    /// the output columns `exprs` and `stars` of the rows of `cols`.
    fn top_n(
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

    /// Gives `sink` the rows for which every conjunct of `parts` holds, until it says stop.
    fn push_rows(
        &mut self,
        rows: Vec<Vec<Value>>,
        cols: &[Col],
        parts: &[&Expr],
        outer: Option<&Env<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        for (n, row) in rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            if self.all_hold(parts, cols, &row, outer)? && !sink.push(self, row)? {
                break;
            }
        }
        Ok(())
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
