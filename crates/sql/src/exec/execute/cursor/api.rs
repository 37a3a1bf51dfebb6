//! What API server cursors need of a T-SQL cursor beyond `DECLARE`, `OPEN`, `CLOSE` and
//! `DEALLOCATE`.
//!
//! The TDS server opens a cursor a client asks for with `sp_cursoropen` as a global T-SQL
//! cursor of a name no batch uses, then drives it through these methods: its shape (the
//! columns and the table they come from, which the client is told so that it can update
//! through the cursor), blocks of rows by position, and the position a positioned change
//! through `sp_cursor` acts on.
//!
//! # Keyed rows are read again
//!
//! A cursor with keys (see "Positioned changes" in the parent module) behaves as SQL Server's
//! KEYSET cursors do: its membership and order are fixed at `OPEN`, but each fetch reads its
//! rows again by key, so a row shows the changes made since (through the cursor or not), and
//! one deleted since is reported missing. Other cursors return the copy `OPEN` made. A
//! dynamic cursor's block is its window (see [`super::dynamic`]), read again the same way.

use std::sync::Arc;

use walden_engine::catalog::{Object, TableDef};
use walden_engine::types::Value;

use super::{base_tables, not_open, position_of, Cursor, Slot};
use crate::ast::{Expr, ExprKind, Ident, QueryBody, SelectItem};
use crate::exec::session::{Run, Session};
use crate::exec::{Collected, ColumnInfo, SqlError};

/// An open cursor as a client describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct CursorShape {
    pub columns: Vec<ColumnInfo>,
    /// How many rows it holds.
    pub rows: usize,
    /// Whether every fetch direction is allowed.
    pub scrollable: bool,
    /// Whether positioned changes go through it: it is updatable and keeps its rows' keys.
    pub keyed: bool,
    /// Whether it is dynamic (see `DynamicMove`): `rows` is then its window's, not its own.
    pub dynamic: bool,
    /// The base tables of its query, as (schema, name), in the order of its FROM clause.
    pub tables: Vec<(String, String)>,
    /// For each column, the table (its place in `tables`) and the table column it is when it
    /// is a plain reference to one.
    pub sources: Vec<Option<(usize, String)>>,
    /// For each column, whether it is one of its table's key columns.
    pub key: Vec<bool>,
}

/// The place in `tables` (each with the name the query knows it by) of the table whose
/// column a select list reference `parts` is, with that column's name: by its qualifier, or
/// the one table that has a column of that name.
fn column_source(tables: &[(String, Arc<TableDef>)], parts: &[Ident]) -> Option<(usize, String)> {
    let (column, qualifier) = match parts {
        [.., q, c] => (c.value.as_str(), Some(q.value.as_str())),
        [c] => (c.value.as_str(), None),
        [] => return None,
    };
    let mut found = None;
    for (i, (name, def)) in tables.iter().enumerate() {
        if qualifier.is_some_and(|q| !q.eq_ignore_ascii_case(name)) {
            continue;
        }
        if let Some(c) = def.columns.iter().find(|c| c.name.eq_ignore_ascii_case(column)) {
            if found.is_some() {
                return None;
            }
            found = Some((i, c.name.clone()));
        }
    }
    found
}

impl Session {
    fn global_cursor(&self, name: &str) -> Result<&Cursor, SqlError> {
        position_of(&self.cursors.global, name)
            .map(|i| &self.cursors.global[i])
            .ok_or_else(|| super::not_found(name))
    }

    /// The shape of the open global cursor `name`.
    pub fn cursor_shape(&self, name: &str) -> Result<CursorShape, SqlError> {
        let c = self.global_cursor(name)?;
        let open = c.open.as_ref().ok_or_else(not_open)?;
        let width = open.columns.len();
        let mut shape = CursorShape {
            columns: open.columns.clone(),
            rows: open.rows.len(),
            scrollable: c.scrollable,
            keyed: open.keys.is_some() && c.updatable,
            dynamic: open.dynamic,
            tables: Vec::new(),
            sources: vec![None; width],
            key: vec![false; width],
        };
        let QueryBody::Select(select) = &c.query.query.body else { return Ok(shape) };
        let mut from = Vec::new();
        if base_tables(&select.from, &mut from).is_none() {
            return Ok(shape);
        }
        // Each base table under the name the query knows it by.
        let mut tables = Vec::with_capacity(from.len());
        for (name, alias) in from {
            let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
            let Some(object) = c.db.find_object(schema, &name.name.value) else {
                return Ok(shape);
            };
            let Object::Table(table) = &*object else { return Ok(shape) };
            let known = alias.unwrap_or(&name.name).value.clone();
            tables.push((known, Arc::clone(table)));
        }
        let mut sources = Vec::with_capacity(width);
        for item in &select.items {
            match item {
                SelectItem::Wildcard(qualifier) => {
                    let q = qualifier.as_ref().and_then(|q| q.last()).map(|q| q.value.as_str());
                    for (i, (known, def)) in tables.iter().enumerate() {
                        if q.is_some_and(|q| !q.eq_ignore_ascii_case(known)) {
                            continue;
                        }
                        sources.extend(def.columns.iter().map(|c| Some((i, c.name.clone()))));
                    }
                }
                SelectItem::Expr { expr: Expr { kind: ExprKind::Column(parts), .. }, .. } => {
                    sources.push(column_source(&tables, parts));
                }
                _ => sources.push(None),
            }
        }
        // A select list the walk above cannot line up with the columns (`t.*` of a table
        // with hidden columns, say) leaves every column without a source.
        if sources.len() == width {
            if let Some(keys) = &open.keys {
                shape.key = sources
                    .iter()
                    .map(|s| {
                        s.as_ref().is_some_and(|(t, column)| {
                            keys.tables.get(*t).is_some_and(|k| k.columns.contains(column))
                        })
                    })
                    .collect();
            }
            shape.sources = sources;
        }
        shape.tables =
            tables.iter().map(|(_, def)| (def.schema.clone(), def.name.clone())).collect();
        Ok(shape)
    }

    /// The rows at positions `first..first + count` (1-based, clipped to the cursor's rows) of
    /// the open global cursor `name`: keyed rows as they are now, `None` for one deleted
    /// since `OPEN` (see "Keyed rows are read again").
    pub fn cursor_block(
        &mut self,
        name: &str,
        first: usize,
        count: usize,
    ) -> Result<Vec<Option<Vec<Value>>>, SqlError> {
        let index =
            position_of(&self.cursors.global, name).ok_or_else(|| super::not_found(name))?;
        let rows = self.cursors.global[index].open.as_ref().ok_or_else(not_open)?.rows.len();
        let first = first.max(1);
        let last = first.saturating_add(count).min(rows + 1);
        let mut block = Vec::with_capacity(last.saturating_sub(first));
        for position in first..last {
            block.push(self.read_again(index, position - 1)?);
        }
        Ok(block)
    }

    /// Renames the global cursor `name` to `new_name` (`sp_cursoroption`'s CURSOR_NAME), by
    /// which T-SQL then knows it; 16915 if another global cursor has that name.
    pub fn rename_cursor(&mut self, name: &str, new_name: &str) -> Result<(), SqlError> {
        let index =
            position_of(&self.cursors.global, name).ok_or_else(|| super::not_found(name))?;
        if position_of(&self.cursors.global, new_name).is_some_and(|i| i != index) {
            return Err(SqlError::new(
                16915,
                format!("A cursor with the name '{new_name}' already exists."),
            ));
        }
        self.cursors.global[index].name = new_name.to_string();
        Ok(())
    }

    /// Puts the open global cursor `name` on row `position` (1-based), where a positioned
    /// change (`WHERE CURRENT OF`) acts.
    pub fn cursor_seek(&mut self, name: &str, position: usize) -> Result<(), SqlError> {
        let index =
            position_of(&self.cursors.global, name).ok_or_else(|| super::not_found(name))?;
        let open = self.cursors.global[index].open.as_mut().ok_or_else(not_open)?;
        if position == 0 || position > open.rows.len() {
            return Err(SqlError::new(16930, "The requested row is not in the fetch buffer."));
        }
        open.position = position;
        open.fetched = true;
        Ok(())
    }

    /// Row `row` (0-based) of the cursor at `index` of the global ones: read again by its keys
    /// when it has them (and kept as the cursor's copy), else the copy.
    fn read_again(&mut self, index: usize, row: usize) -> Result<Option<Vec<Value>>, SqlError> {
        let mut sink = Collected::default();
        let mut run = Run::new(self, &mut sink);
        let result = run.reread(Slot::Global(index), row);
        run.finish_autocommit(result.is_ok());
        let now = result?;
        if let (Some(values), Some(open)) = (&now, self.cursors.global[index].open.as_mut()) {
            if let Some(kept) = open.rows.get_mut(row) {
                kept.clone_from(values);
            }
        }
        Ok(now)
    }
}
