//! A SELECT streamed: its rows go to the output as the read finds them.
//!
//! `Run::select` collects every row of its FROM clause before it projects them, which a
//! SELECT of ten million rows cannot afford. When a SELECT needs nothing from its rows but
//! each row by itself, it runs here instead: each row the read of its one source keeps
//! (its WHERE clause applied during the read, by the access path the planner chooses) is
//! projected and given to the output before the next is read, so memory stays flat whatever
//! the table's size, the TDS server sends packets as they fill, and `TOP` ends the read.
//!
//! The conditions, checked before anything is read:
//!
//! * one source that is not an inner join (a table, a view, a derived table, an outer join
//!   or APPLY; only a table is read row by row, the others are computed first as they are
//!   everywhere);
//! * no grouping, aggregate, window, DISTINCT, set operator, OFFSET, CTE, FOR JSON/XML, INTO
//!   or variable assignment, and `TOP` without PERCENT or WITH TIES;
//! * every select-list item's type known before its values: a column, a CAST or CONVERT, a
//!   variable (the result's columns are announced before the first row; `Run::select` types
//!   other expressions by all their values);
//! * no subquery in WHERE (the planner may make it a semi-join);
//! * an ORDER BY only of the table's own columns, ascending, in an order its access path
//!   reads (otherwise the rows must be sorted, and the SELECT is collected).
//!
//! An error after rows were sent ends the result set there, and the statement with the
//! error: the client has the rows before it, as SQL Server's clients do.

use walden_engine::types::Value;

use super::{conjuncts, Flat, Input};
use crate::ast::{Expr, ExprKind, JoinKind, Query, QueryBody, SelectItem, TableSource};
use crate::exec::access::{AccessPath, RowFilter, RowSink};
use crate::exec::demand::Demand;
use crate::exec::eval::{find_column, full_text_refusal, Col, Env};
use crate::exec::output::ColumnInfo;
use crate::exec::query::{
    select_aggregates, select_windows, sorts_by_source_column, visit_children,
};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Projects each row it is given and sends it, until `limit` are sent.
struct Streamed<'s> {
    cols: &'s [Col],
    exprs: &'s [Option<&'s Expr>],
    stars: &'s [Option<usize>],
    sent: u64,
    limit: u64,
}

impl RowSink for Streamed<'_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        let out = run.project(self.exprs, self.stars, &Env::new(self.cols, &row, None))?;
        run.out.row(&out);
        self.sent += 1;
        Ok(self.sent < self.limit)
    }
}

/// Whether `e` holds a subquery.
fn has_subquery(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Subquery(_)
        | ExprKind::Exists(_)
        | ExprKind::InSubquery { .. }
        | ExprKind::Quantified { .. } => true,
        _ => {
            let mut found = false;
            visit_children(e, &mut |c| found |= has_subquery(c));
            found
        }
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
        let QueryBody::Select(sel) = &q.body else { return Ok(None) };
        let one_source = match sel.from.as_slice() {
            [TableSource::Join(j)] => !matches!(j.kind, JoinKind::Inner | JoinKind::Cross),
            [_] => true,
            _ => false,
        };
        let typed = sel.items.iter().all(|i| match i {
            SelectItem::Wildcard(_) => true,
            SelectItem::Expr { expr, .. } => {
                matches!(expr.kind, ExprKind::Column(_)) || self.declared_type(expr).is_some()
            }
            SelectItem::Assign { .. } => false,
        });
        let plain = q.ctes.is_empty()
            && q.offset.is_none()
            && q.for_json.is_none()
            && q.for_xml.is_none()
            && sel.into.is_none()
            && !sel.distinct
            && sel.group_by.is_empty()
            && sel.grouping_sets.is_none()
            && sel.having.is_none()
            && sel.top.as_ref().is_none_or(|t| !t.percent && !t.with_ties)
            && !sel.where_clause.as_ref().is_some_and(has_subquery)
            && q.order_by.iter().all(|o| !o.descending && sorts_by_source_column(sel, o));
        let per_row = select_aggregates(sel, &q.order_by).is_empty()
            && select_windows(sel, &q.order_by).is_empty();
        if !(one_source && typed && plain && per_row) {
            return Ok(None);
        }
        let limit = match &sel.top {
            Some(t) => limit.min(self.top_quantity(t)? as usize),
            None => limit,
        } as u64;
        let mut parts = Vec::new();
        if let Some(w) = &sel.where_clause {
            conjuncts(w, &mut parts);
        }
        // As in `plan_pushed`: an outer join may apply these to its preserved side.
        let mut flat = Flat { leaves: Vec::new(), conjuncts: Vec::new() };
        let mut on = Vec::new();
        let demand = Demand::of_select(sel, &q.order_by);
        self.flatten(&sel.from[0], &mut flat, &mut on, &parts, None, demand.as_ref())?;
        let [leaf] = flat.leaves.as_slice() else { return Ok(None) };
        let cols = leaf.cols.clone();
        let list = self.select_list(sel, &cols)?;
        if list.out_cols.iter().any(|c| c.hidden) {
            return Ok(None);
        }
        parts.extend(on);
        for part in &parts {
            full_text_refusal(part, &[&cols])?;
        }
        let path = match &leaf.input {
            Input::Table(t) => {
                let t = super::clone_ref(t);
                let path = self.path(&flat, &t, &parts, 0, 0);
                let order: Option<Vec<usize>> = q
                    .order_by
                    .iter()
                    .map(|o| match &o.expr.kind {
                        ExprKind::Column(parts) => find_column(&cols, parts).ok().flatten(),
                        _ => None,
                    })
                    .collect();
                if !order
                    .is_some_and(|order| order.is_empty() || path.delivers_order(&t.def, &order))
                {
                    return Ok(None);
                }
                Some((t, path))
            }
            _ if !q.order_by.is_empty() => return Ok(None),
            _ => None,
        };
        let columns: Vec<ColumnInfo> = list
            .out_cols
            .iter()
            .map(|c| ColumnInfo { name: c.name.clone(), ty: c.ty, nullable: c.nullable })
            .collect();
        self.out.result_set(&columns);
        let mut sink =
            Streamed { cols: &cols, exprs: &list.exprs, stars: &list.stars, sent: 0, limit };
        let read = if limit == 0 {
            Ok(())
        } else {
            match (path, &mut flat.leaves[0].input) {
                (Some((t, path)), _) => {
                    let keep = Some(RowFilter { cols: &cols, exprs: &parts, outer: None });
                    let env = Env::empty();
                    self.read_path_into(&t, &path, &env, keep, &mut sink).and_then(|sought| {
                        // A probe that does not convert to its key: the scan's comparisons
                        // say what it means.
                        match sought {
                            true => Ok(()),
                            false => self
                                .read_path_into(&t, &AccessPath::scan(), &env, keep, &mut sink)
                                .map(drop),
                        }
                    })
                }
                (None, Input::Rows(rows)) => {
                    let rows = std::mem::take(rows);
                    self.push_rows(rows, &cols, &parts, &mut sink)
                }
                (None, _) => Ok(()),
            }
        };
        self.out.result_end(sink.sent);
        read.map(|()| Some(sink.sent))
    }

    /// Gives `sink` the rows for which every conjunct of `parts` holds, until it says stop.
    fn push_rows(
        &mut self,
        rows: Vec<Vec<Value>>,
        cols: &[Col],
        parts: &[&Expr],
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        for (n, row) in rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            if self.all_hold(parts, cols, &row, None)? && !sink.push(self, row)? {
                break;
            }
        }
        Ok(())
    }
}
