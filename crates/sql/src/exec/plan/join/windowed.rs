//! A block's window calls fed as its FROM clause is read, and a derived table of window
//! calls fed to its block as the windows give out its rows.
//!
//! A block with window calls and no grouping gives each row its read finds (WHERE applied)
//! straight to the first window stage's sort (`execute/window`), which spills past its
//! grant, rather than collect the rows first. A derived table that is such a block and is
//! the one source of its block (`SELECT SUM(rn) FROM (SELECT ROW_NUMBER() OVER (...) AS rn
//! FROM t) AS d`) goes further: each row the last stage gives out is projected by the
//! derived table's select list and handed to the block (its hash aggregate, or the client)
//! at once, so neither the table's rows nor the derived table's are ever held whole.

use walden_engine::types::{SqlType, Value};

use super::stream::{derived_columns, items_stream, OneSource};
use super::FromSink;
use crate::ast::{Expr, ExprKind, OrderByItem, Query, Select, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::bind::prepared::Projection;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::{bare_select, select_aggregates, select_windows};
use crate::exec::execute::window::{RowOut, Scope, WindowInput, WindowPlan};
use crate::exec::plan::access::RowSink;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A block's rows fed to its windows, not yet computed: the rows' columns with the calls'
/// hidden ones, and where each call's value is.
pub(crate) struct WindowedRows<'e> {
    pub(crate) cols: Vec<Col>,
    pub(crate) computed: Vec<(usize, usize)>,
    plan: WindowPlan<'e>,
    input: WindowInput,
}

impl WindowedRows<'_> {
    /// Computes the windows, giving every row, with its calls' values, to `each`.
    pub(crate) fn finish(
        self,
        run: &mut Run<'_>,
        outer: Option<&Env<'_>>,
        each: &mut RowOut<'_>,
    ) -> Result<(), SqlError> {
        let WindowedRows { cols, computed, plan, input } = self;
        let scope = Scope { cols: &cols, computed: &computed, outer };
        input.finish(run, &plan, &scope, each)
    }
}

/// Gives each row to the windows, which are planned when the rows' columns are known.
struct Feed<'w, 'e, 'o> {
    windows: &'w [&'e Expr],
    rows: Option<WindowedRows<'e>>,
    outer: Option<&'o Env<'o>>,
}

impl RowSink for Feed<'_, '_, '_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        let Some(w) = &mut self.rows else {
            return Err(SqlError::new(50000, "Walden windowed rows of unknown columns."));
        };
        let scope = Scope { cols: &w.cols, computed: &w.computed, outer: self.outer };
        w.input.push(run, &w.plan, &scope, row)?;
        Ok(true)
    }

    /// Each row is copied once, into an allocation with room for the window calls'
    /// columns: a scan's own row would be grown to that width, copied again.
    fn borrows(&self) -> bool {
        true
    }

    fn push_borrowed(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        let width = self.rows.as_ref().map_or(row.len(), |w| w.plan.width());
        let mut owned = Vec::with_capacity(width.max(row.len()));
        owned.extend_from_slice(row);
        self.push(run, owned)
    }
}

impl FromSink for Feed<'_, '_, '_> {
    fn start(&mut self, run: &mut Run<'_>, cols: &[Col]) -> Result<(), SqlError> {
        let mut cols = cols.to_vec();
        let mut computed = Vec::new();
        let plan = run.window_plan(&mut cols, &mut computed, self.windows)?;
        let input = WindowInput::new(run, &plan);
        self.rows = Some(WindowedRows { cols, computed, plan, input });
        Ok(())
    }
}

/// The type of a window call that is known before its values: the ranking functions' and
/// the counts'.
fn window_type(e: &Expr) -> Option<SqlType> {
    let ExprKind::Function(f) = &e.kind else { return None };
    if f.over.is_none() || f.name.schema.is_some() {
        return None;
    }
    let name = f.name.name.value.to_ascii_uppercase();
    match name.as_str() {
        "ROW_NUMBER" | "RANK" | "DENSE_RANK" | "NTILE" | "COUNT_BIG" => Some(SqlType::BigInt),
        "COUNT" => Some(SqlType::Int),
        _ => None,
    }
}

/// A derived table of window calls ready to give its block its rows (see the module's
/// comment): its rows have gone into the windows.
pub(super) struct WindowedSource<'e> {
    rows: WindowedRows<'e>,
    /// The derived table's select list over the windowed rows.
    exprs: Vec<Option<&'e Expr>>,
    stars: Vec<Option<usize>>,
}

/// The SELECT of a derived table that can feed its block as its windows give out rows: a
/// bare SELECT with a FROM clause and window calls, no grouping or aggregate, and a select
/// list of names and expressions whose types are known before their values.
fn windowed_select<'q>(q: &'q Query, columns: &[crate::ast::Ident]) -> Option<&'q Select> {
    let sel = bare_select(q)?;
    let plain = !sel.from.is_empty()
        && sel.group_by.is_empty()
        && sel.having.is_none()
        && select_aggregates(sel, &[]).is_empty()
        && !select_windows(sel, &[]).is_empty()
        && (columns.is_empty() || columns.len() == sel.items.len());
    if !plain {
        return None;
    }
    items_stream(sel, columns, window_type).then_some(sel)
}

impl Run<'_> {
    /// The rows of `sel`'s FROM clause (its WHERE applied) given to its window calls
    /// `windows` as the read finds them.
    pub(crate) fn window_from<'e>(
        &mut self,
        sel: &Select,
        order_by: &[OrderByItem],
        windows: &[&'e Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<WindowedRows<'e>, SqlError> {
        let mut feed = Feed { windows, rows: None, outer };
        let mut implied = Vec::new();
        match self.one_source(sel, order_by, outer, &mut implied)? {
            Some(OneSource { cols, parts, read }) => {
                feed.start(self, &cols)?;
                self.read_one_source(read, &cols, &parts, outer, &mut feed)?;
            }
            None => {
                let demand = Demand::of_select(sel, order_by);
                let filter = sel.where_clause.as_ref();
                self.plan_from_into(&sel.from, filter, outer, demand.as_ref(), &mut feed)?;
            }
        }
        feed.rows.ok_or_else(|| SqlError::new(50000, "Walden windowed rows of unknown columns."))
    }

    /// `src` as a [`WindowedSource`] with its columns (qualified by its alias), if it is a
    /// derived table that can feed its block as its windows give out rows
    /// (`windowed_select`): its rows are read into the windows now.
    pub(super) fn windowed_source<'e>(
        &mut self,
        src: &'e TableSource,
        outer: Option<&Env<'_>>,
    ) -> Result<Option<(Vec<Col>, WindowedSource<'e>)>, SqlError> {
        let TableSource::Derived { query, alias, columns } = src else { return Ok(None) };
        let Some(dsel) = windowed_select(query, columns) else { return Ok(None) };
        let windows = select_windows(dsel, &[]);
        let rows = self.window_from(dsel, &[], &windows, outer)?;
        let list = self.select_list(dsel, &rows.cols)?;
        let cols = derived_columns(list.out_cols, &list.exprs, alias, columns, window_type);
        Ok(Some((cols, WindowedSource { rows, exprs: list.exprs, stars: list.stars })))
    }

    /// Gives `sink` the rows of a [`WindowedSource`] that satisfy `parts` (in the derived
    /// table's columns `cols`), as the windows give them out.
    pub(super) fn read_windowed(
        &mut self,
        source: WindowedSource<'_>,
        cols: &[Col],
        parts: &[&Expr],
        outer: Option<&Env<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        let WindowedSource { rows, exprs, stars } = source;
        let WindowedRows { cols: wcols, computed, plan, input } = rows;
        let projection = Projection::new(&exprs, &stars, &wcols, &computed);
        let scope = Scope { cols: &wcols, computed: &computed, outer };
        // A sink that has all it wants (a TOP) takes no more; the rows left are computed
        // but not projected.
        let mut open = true;
        input.finish(self, &plan, &scope, &mut |run, row| {
            if !open {
                return Ok(());
            }
            let env = Env { cols: &wcols, row: &row, outer, computed: &computed };
            let out = run.project_prepared(&projection, &env)?;
            if run.all_hold(parts, cols, &out, outer)? {
                open = sink.push(run, out)?;
            }
            Ok(())
        })
    }
}
