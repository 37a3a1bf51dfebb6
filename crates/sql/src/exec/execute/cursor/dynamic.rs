//! DYNAMIC cursors: membership decided at each fetch, as SQL Server's dynamic cursors do.
//!
//! # What a dynamic cursor is
//!
//! A cursor declared `DYNAMIC` (or opened through `sp_cursoropen` with scrollopt DYNAMIC)
//! copies nothing at `OPEN`. Its rows are ordered by their keys (each base table's key
//! columns, table after table, as "Positioned changes" in the parent module finds them, a
//! heap's row locator included), and a fetch runs the cursor's query again for the rows
//! next to the ones it is on, by key: so rows committed by others since appear, rows deleted
//! since are simply not found (no -2 fetch status), and a row whose key changed is met at
//! its new place. `FETCH ABSOLUTE` has no meaning there and is error 16925, as in SQL
//! Server; `@@CURSOR_ROWS` is -1.
//!
//! A query qualifies when its rows have keys (tables joined by inner or cross joins,
//! without DISTINCT, GROUP BY or set operators), it has no ORDER BY, TOP or OFFSET (whose
//! order or cut is not the keys'), and no key column is nullable (a NULL compares to
//! nothing, so the rows after one could not be found). Any other cursor declared DYNAMIC
//! is converted as SQL Server converts a cursor it cannot honour: to a keyed cursor if its
//! rows have keys, else to a static one.
//!
//! # The window
//!
//! An open dynamic cursor holds the rows its last fetch returned and their keys (one row for
//! T-SQL's FETCH, an API fetch buffer's block for `sp_cursorfetch`) in the same places a
//! keyed cursor holds all of its rows, so positioned changes, optimistic checks and
//! `REFRESH` work on it unchanged; its position is the place in the window. An empty window
//! is before the first row (position 0) or after the last (position 1).

use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::types::{Len, SqlType, Value};

use super::{and, keyed_query, not_open, KeyedTable, OpenCursor, RowKeys, Slot, KEY_PREFIX};
use crate::ast::{
    BinaryOp, Expr, ExprKind, Ident, Literal, OrderByItem, QueryBody, SelectStatement, Span, Top,
};
use crate::exec::execute::query::ROWID;
use crate::exec::session::{Frame, Run, Session, Variable};
use crate::exec::{Collected, ColumnInfo, RowSet, SqlError};

/// Where a dynamic cursor's fetch goes, from the window it is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DynamicMove {
    First,
    Last,
    /// The rows after the window's last row.
    Next,
    /// The rows before the window's first row.
    Prior,
    /// The rows from the `n`th after the window's first row (before it when negative; the
    /// first row itself, read again, for 0).
    Relative(i64),
}

/// Error 16925, for a fetch `direction` (as SQL Server names it: `Absolute`) a dynamic cursor
/// cannot make.
pub(crate) fn not_for_dynamic(direction: &str) -> SqlError {
    SqlError::new(16925, format!("The fetch type {direction} cannot be used with dynamic cursors."))
}

/// The keyed tables of `query` when a dynamic cursor can be built for it (see "What a
/// dynamic cursor is"), else `None`.
pub(super) fn dynamic_tables(
    query: &SelectStatement,
    db: &walden_engine::Database,
) -> Option<Vec<KeyedTable>> {
    let QueryBody::Select(select) = &query.query.body else { return None };
    if !query.query.order_by.is_empty() || query.query.offset.is_some() || select.top.is_some() {
        return None;
    }
    let (_, tables) = keyed_query(query, db)?;
    for keyed in &tables {
        let table = match db.object_by_id(keyed.table).as_deref() {
            Some(Object::Table(t)) => Arc::clone(t),
            _ => return None,
        };
        let nullable = keyed.columns.iter().filter(|c| *c != ROWID).any(|column| {
            table.columns.iter().find(|c| &c.name == column).is_none_or(|c| c.nullable)
        });
        if nullable {
            return None;
        }
    }
    Some(tables)
}

/// Where an empty window is: before the first row or after the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edge {
    Before,
    After,
}

/// A block of rows a dynamic scan found, each with its keys, under the cursor's columns.
type Found = (Vec<ColumnInfo>, Vec<(Vec<Value>, Vec<Value>)>);

/// `integer` as a literal expression.
fn integer(n: u64) -> Expr {
    Expr { kind: ExprKind::Literal(Literal::Integer(n.to_string())), span: Span::default() }
}

fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    Expr {
        kind: ExprKind::Binary { op, left: Box::new(left), right: Box::new(right) },
        span: Span::default(),
    }
}

impl Run<'_> {
    /// Opens the dynamic cursor at `slot`, whose query's rows are keyed by `tables`: before
    /// its first row, holding none. The query runs once, so that its errors are OPEN's and
    /// its columns known.
    pub(super) fn open_dynamic(
        &mut self,
        slot: Slot,
        tables: Vec<KeyedTable>,
    ) -> Result<(), SqlError> {
        let c = self.s.cursor_at(slot).ok_or_else(not_open)?;
        let keys = RowKeys { db: Arc::clone(&c.db), tables, rows: Vec::new() };
        c.open = Some(OpenCursor {
            columns: Vec::new(),
            rows: Vec::new(),
            keys: Some(keys),
            dynamic: true,
            position: 0,
            fetched: false,
        });
        let scanned = self.dynamic_scan(slot, None, false, 0, 1);
        let c = self.s.cursor_at(slot).ok_or_else(not_open)?;
        match (scanned, c.open.as_mut()) {
            (Ok((columns, _)), Some(open)) => {
                open.columns = columns;
                let id = c.id;
                self.s.cursors.last_opened = Some(id);
                Ok(())
            }
            (scanned, _) => {
                c.open = None;
                scanned.map(|_| ())
            }
        }
    }

    /// Moves the open dynamic cursor at `slot` by `how`, making its window the (up to)
    /// `count` rows found there, in key order (one at least, so that a move with a count of 0
    /// still has a place to go on from).
    pub(super) fn dynamic_move(
        &mut self,
        slot: Slot,
        how: DynamicMove,
        count: usize,
    ) -> Result<(), SqlError> {
        let c = self.s.cursor_at(slot).ok_or_else(not_open)?;
        let open = c.open.as_ref().ok_or_else(not_open)?;
        let keys = open.keys.as_ref().ok_or_else(not_open)?;
        let first = keys.rows.first().cloned();
        let last = keys.rows.last().cloned();
        let edge = if open.position == 0 { Edge::Before } else { Edge::After };
        let n = u64::try_from(count.max(1)).unwrap_or(u64::MAX);
        let ((_, found), edge) = match (how, first.as_deref(), last.as_deref()) {
            (DynamicMove::First, ..) => (self.dynamic_scan(slot, None, false, 0, n)?, Edge::After),
            (DynamicMove::Last, ..) => (self.dynamic_scan(slot, None, true, 0, n)?, Edge::Before),
            (DynamicMove::Next, _, Some(last)) => {
                (self.dynamic_scan(slot, Some((last, false)), false, 0, n)?, Edge::After)
            }
            (DynamicMove::Next, ..) if edge == Edge::Before => {
                (self.dynamic_scan(slot, None, false, 0, n)?, Edge::After)
            }
            (DynamicMove::Prior, Some(first), _) => {
                (self.dynamic_scan(slot, Some((first, false)), true, 0, n)?, Edge::Before)
            }
            (DynamicMove::Prior, ..) if edge == Edge::After => {
                (self.dynamic_scan(slot, None, true, 0, n)?, Edge::Before)
            }
            (DynamicMove::Relative(0), Some(first), _) => {
                (self.dynamic_scan(slot, Some((first, true)), false, 0, n)?, Edge::After)
            }
            (DynamicMove::Relative(k), first, _)
                if k > 0 && (first.is_some() || edge == Edge::Before) =>
            {
                let from = first.map(|f| (f, false));
                let skip = k.unsigned_abs() - 1;
                (self.dynamic_scan(slot, from, false, skip, n)?, Edge::After)
            }
            (DynamicMove::Relative(k), first, _)
                if k < 0 && (first.is_some() || edge == Edge::After) =>
            {
                // The row `k` back is the new window's first; the window runs forward from it.
                let from = first.map(|f| (f, false));
                let back = self.dynamic_scan(slot, from, true, k.unsigned_abs() - 1, 1)?;
                match back.1.into_iter().next() {
                    Some((_, key)) => {
                        (self.dynamic_scan(slot, Some((&key, true)), false, 0, n)?, Edge::Before)
                    }
                    None => ((Vec::new(), Vec::new()), Edge::Before),
                }
            }
            // Nothing to move to: past an edge, or RELATIVE from the edge it points away
            // from.
            (DynamicMove::Next | DynamicMove::Relative(_), ..) => {
                ((Vec::new(), Vec::new()), Edge::After)
            }
            (DynamicMove::Prior, ..) => ((Vec::new(), Vec::new()), Edge::Before),
        };
        let descending = matches!(how, DynamicMove::Last | DynamicMove::Prior);
        let c = self.s.cursor_at(slot).ok_or_else(not_open)?;
        let open = c.open.as_mut().ok_or_else(not_open)?;
        let keys = open.keys.as_mut().ok_or_else(not_open)?;
        let mut found = found;
        if descending {
            found.reverse();
        }
        open.position = match (found.is_empty(), edge) {
            (false, _) | (true, Edge::After) => 1,
            (true, Edge::Before) => 0,
        };
        (open.rows, keys.rows) = found.into_iter().unzip();
        open.fetched = true;
        Ok(())
    }

    /// Up to `take` rows of the dynamic cursor at `slot` after `skip` rows, in key order
    /// (`descending`: backwards), from the key `from` on (past it, or from it when its flag
    /// says inclusive), as they are now: the cursor's query with a predicate on the keys,
    /// an ORDER BY of the keys and a TOP (the first `skip` rows dropped).
    fn dynamic_scan(
        &mut self,
        slot: Slot,
        from: Option<(&[Value], bool)>,
        descending: bool,
        skip: u64,
        take: u64,
    ) -> Result<Found, SqlError> {
        let c = self.s.cursor_at(slot).ok_or_else(not_open)?;
        let keys = c.open.as_ref().and_then(|o| o.keys.as_ref()).ok_or_else(not_open)?;
        let db = Arc::clone(&keys.db);
        // A table or key column gone since OPEN: so are the rows.
        let Some((mut query, tables)) = keyed_query(&c.query, &db) else {
            return Ok(Found::default());
        };
        // Each key column as the query names it, with its type (for the variables that hold
        // `from`'s values).
        let mut columns = Vec::new();
        for keyed in &tables {
            let table = match db.object_by_id(keyed.table).as_deref() {
                Some(Object::Table(t)) => Arc::clone(t),
                _ => return Ok(Found::default()),
            };
            for column in &keyed.columns {
                let (ty, declared) = if column == ROWID {
                    (SqlType::VarBinary(Len::N(900)), None)
                } else {
                    let Some(def) = table.columns.iter().find(|c| &c.name == column) else {
                        return Ok(Found::default());
                    };
                    (def.ty, def.declared)
                };
                let parts = vec![keyed.qualifier.clone(), Ident::new(column.clone())];
                let expr = Expr { kind: ExprKind::Column(parts), span: Span::default() };
                columns.push((expr, ty, declared));
            }
        }
        let mut vars = c.vars.clone();
        let procedure = c.procedure.clone();
        if let Some((values, inclusive)) = from {
            let mut bound = Vec::with_capacity(columns.len());
            for (i, ((_, ty, declared), value)) in columns.iter().zip(values).enumerate() {
                let name = format!("@{KEY_PREFIX}{i}");
                vars.push(Variable {
                    name: name.clone(),
                    ty: *ty,
                    declared: *declared,
                    value: value.clone(),
                });
                bound.push(Expr { kind: ExprKind::Variable(name.into()), span: Span::default() });
            }
            // (k1, ..., kn) past (v1, ..., vn) in key order: k1 past v1, or k1 = v1 and k2
            // past v2, and so on; and all equal when inclusive.
            let past = if descending { BinaryOp::Lt } else { BinaryOp::Gt };
            let mut after: Option<Expr> = None;
            let mut equal_so_far: Option<Expr> = None;
            for ((column, ..), value) in columns.iter().zip(&bound) {
                let beyond = binary(past, column.clone(), value.clone());
                let term = match &equal_so_far {
                    Some(eq) => binary(BinaryOp::And, eq.clone(), beyond),
                    None => beyond,
                };
                after = Some(match after {
                    Some(a) => binary(BinaryOp::Or, a, term),
                    None => term,
                });
                equal_so_far =
                    Some(and(equal_so_far, binary(BinaryOp::Eq, column.clone(), value.clone())));
            }
            if inclusive {
                if let (Some(a), Some(eq)) = (after.take(), equal_so_far) {
                    after = Some(binary(BinaryOp::Or, a, eq));
                }
            }
            if let (QueryBody::Select(select), Some(after)) = (&mut query.query.body, after) {
                select.where_clause = Some(and(select.where_clause.take(), after));
            }
        }
        query.query.order_by = columns
            .iter()
            .map(|(expr, ..)| OrderByItem { expr: expr.clone(), descending })
            .collect();
        // TOP (skip + take) and the first `skip` rows dropped here, rather than OFFSET ...
        // FETCH: a TOP over a read in key order stops when it has its rows, where OFFSET
        // sorted every row past the key (a fetch near the start of a large table read it all).
        // Only a SELECT without set operators qualifies for a dynamic cursor
        // (`dynamic_tables`), so the body is one.
        if let QueryBody::Select(select) = &mut query.query.body {
            let quantity = integer(skip.saturating_add(take));
            select.top = Some(Top { quantity, percent: false, with_ties: false });
        }
        let frame = Frame { vars, procedure, ..Frame::default() };
        let saved_db = std::mem::replace(&mut self.s.db, db);
        self.s.frames.push(frame);
        let result = self.query(&query.query, None).map(|r| r.into_row_set());
        self.pop_frame();
        self.s.db = saved_db;
        let RowSet { columns: mut out, rows } = result?;
        let width = out.len().saturating_sub(columns.len());
        out.truncate(width);
        let rows = rows
            .into_iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .map(|mut row| {
                let key = row.split_off(width);
                (row, key)
            })
            .collect();
        Ok((out, rows))
    }
}

impl Session {
    /// Moves the open dynamic global cursor `name` by `how` and returns the window it is now
    /// on: up to `count` rows, as they are now (see "The window").
    pub fn cursor_dynamic_fetch(
        &mut self,
        name: &str,
        how: DynamicMove,
        count: usize,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let index =
            super::position_of(&self.cursors.global, name).ok_or_else(|| super::not_found(name))?;
        let mut sink = Collected::default();
        let mut run = Run::new(self, &mut sink);
        let result = run.dynamic_move(Slot::Global(index), how, count);
        run.finish_autocommit(result.is_ok());
        result?;
        let open = self.cursors.global[index].open.as_ref().ok_or_else(not_open)?;
        Ok(open.rows.clone())
    }
}
