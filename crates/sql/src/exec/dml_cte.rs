//! Common table expressions of INSERT, UPDATE, DELETE and MERGE.
//!
//! The statement's CTEs are materialized before it runs and stay in scope (in
//! [`Run::ctes`]) while its sources are read, as a SELECT's are.
//!
//! A CTE may also be the *target* of an UPDATE or DELETE (`WITH c AS (SELECT TOP (10) * FROM
//! t ORDER BY id) DELETE FROM c`), as a view may in SQL Server, when it is a single-table
//! SELECT of plain columns: the statement then changes the rows of the base table the CTE
//! selects. Its rows are computed here with their row locators, so the change goes through
//! the same engine calls (locks, log, indexes) as any UPDATE or DELETE. A view is changed
//! under the same rules (INSERT too, through its column names), in its own database.

use std::sync::Arc;

use walden_engine::catalog::ViewDef;
use walden_engine::Database;

use crate::ast::{
    Cte, Expr, ExprKind, Ident, ObjectName, QueryBody, Select, SelectItem, TableSource, TableTarget,
};
use crate::exec::dml::Qualified;
use crate::exec::eval::{Col, Env};
use crate::exec::query::{sort_by_keys, table_cols, Relation, Rows, TableRef};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;
use walden_engine::types::{SqlType, Value};

/// What an UPDATE or DELETE changes.
pub(crate) enum DmlTarget {
    /// A table, whose rows the statement's own WHERE (and FROM) qualify.
    Table(TableRef),
    /// A CTE or view over one base table: the base table and the rows of it the CTE or view
    /// selects, shaped as the statement needs them: the base table's columns under the
    /// CTE's names (those it does not select are hidden), then the row locator.
    Through(TableRef, Qualified),
}

impl Run<'_> {
    /// Runs `body` with `ctes` materialized and in scope; they go out of scope after it,
    /// whether it succeeds or not.
    pub(crate) fn with_ctes<T, E: From<SqlError>>(
        &mut self,
        ctes: &[Cte],
        body: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let base = self.ctes.len();
        let result = match self.push_ctes(ctes, None) {
            Ok(()) => body(self),
            Err(e) => Err(e.into()),
        };
        self.ctes.truncate(base);
        result
    }

    /// What an UPDATE or DELETE changes: a table, or, when `target` names one of the
    /// statement's `ctes` or a view, the base table it stands for and the rows of it the CTE
    /// or view selects (see [`DmlTarget::Through`]).
    pub(crate) fn dml_target(
        &mut self,
        ctes: &[Cte],
        target: &TableTarget,
        from: &[TableSource],
    ) -> Result<DmlTarget, SqlError> {
        if let TableTarget::Table(name) = target {
            if name.schema.is_none() && name.database.is_none() {
                let lower = &name.name.value;
                let cte = ctes.iter().rev().find(|c| c.name.value.eq_ignore_ascii_case(lower));
                if let Some(cte) = cte {
                    let (t, rows) = self.updatable_rows(cte, ctes, from)?;
                    return Ok(DmlTarget::Through(t, rows));
                }
            }
        }
        match self.target_relation(target, from)? {
            Relation::Table(t) => Ok(DmlTarget::Table(t)),
            Relation::View(db, view) => {
                let (cte, check) = view_cte(&view)?;
                let (mut t, rows) =
                    self.in_view_scope(db, |r| r.updatable_rows(&cte, &[], from))?;
                t.view_check = check;
                Ok(DmlTarget::Through(t, rows))
            }
        }
    }

    /// The rows of `cte` (a CTE of the statement, or a view as one) an UPDATE or DELETE
    /// changes, under SQL Server's rules for updatable views.
    fn updatable_rows(
        &mut self,
        cte: &Cte,
        ctes: &[Cte],
        from: &[TableSource],
    ) -> Result<(TableRef, Qualified), SqlError> {
        let cte_name = cte.name.value.as_str();
        let multiple = || {
            SqlError::new(
                4405,
                format!("View or function '{cte_name}' is not updatable because the modification affects multiple base tables."),
            )
        };
        // With a FROM clause the CTE would be one source among several: SQL Server's view
        // rules apply to the whole join, which Walden does not resolve.
        if !from.is_empty() {
            return Err(multiple());
        }
        let (sel, base, qual) = self.updatable_select(cte, ctes)?;
        let t = self.resolve_table(base, &qual)?;
        let Rows { cols, rows } = self.table_rows(&t, sel.where_clause.as_ref())?;
        let rowid = t.def.columns.len();

        // The CTE's rows: its WHERE, ORDER BY, OFFSET and TOP over the base table.
        let mut keyed = Vec::with_capacity(rows.len());
        for row in rows {
            let env = Env::new(&cols, &row, None);
            if let Some(w) = &sel.where_clause {
                if self.predicate(w, &env)? != Some(true) {
                    continue;
                }
            }
            let mut keys = Vec::with_capacity(cte.query.order_by.len());
            for o in &cte.query.order_by {
                keys.push(self.eval(&o.expr, &env)?);
            }
            keyed.push((keys, row));
        }
        let desc: Vec<bool> = cte.query.order_by.iter().map(|o| o.descending).collect();
        sort_by_keys(&mut keyed, &desc)?;
        let mut rows: Vec<Vec<Value>> = keyed.into_iter().map(|(_, r)| r).collect();
        if let Some(off) = &cte.query.offset {
            let skip = self.count_value(&off.offset)?;
            rows.drain(..skip.min(rows.len()));
            if let Some(fetch) = &off.fetch {
                let take = self.count_value(fetch)?;
                rows.truncate(take);
            }
        }
        if let Some(top) = &sel.top {
            let limit = if top.percent {
                let v = self.value(&top.quantity)?;
                let pct = match scalar::convert(v, SqlType::Float, None)? {
                    Value::Float(f) if (0.0..=100.0).contains(&f) => f,
                    _ => {
                        return Err(SqlError::new(
                            1031,
                            "Percent values must be between 0 and 100.",
                        ))
                    }
                };
                (rows.len() as f64 * pct / 100.0).ceil() as usize
            } else {
                self.count_value(&top.quantity)?
            };
            rows.truncate(limit);
        }

        // The CTE's columns: each a base column, under the CTE's name for it.
        let mut exposed: Vec<Option<String>> = vec![None; rowid];
        for (i, name) in exposed_columns(cte, sel, &cols[..rowid])? {
            exposed[i] = Some(name);
        }
        let mut shaped: Vec<Col> = Vec::with_capacity(cols.len());
        for (c, name) in cols.into_iter().zip(exposed.into_iter().chain(std::iter::once(None))) {
            shaped.push(match name {
                Some(name) => Col { qual: Some(cte_name.to_string()), name, ..c },
                None => Col { hidden: true, ..c },
            });
        }
        Ok((t, Qualified { cols: shaped, rows, rowid }))
    }

    /// The SELECT of an updatable CTE or view, its one base table and that table's name in
    /// it: errors 4405 (not one base table) and 4403 (aggregates, DISTINCT, GROUP BY).
    fn updatable_select<'q>(
        &mut self,
        cte: &'q Cte,
        ctes: &[Cte],
    ) -> Result<(&'q Select, &'q ObjectName, String), SqlError> {
        let cte_name = cte.name.value.as_str();
        let multiple = || {
            SqlError::new(
                4405,
                format!("View or function '{cte_name}' is not updatable because the modification affects multiple base tables."),
            )
        };
        let QueryBody::Select(sel) = &cte.query.body else { return Err(multiple()) };
        let [TableSource::Table { name: base, alias, .. }] = sel.from.as_slice() else {
            return Err(multiple());
        };
        let names_a_cte = base.schema.is_none()
            && base.database.is_none()
            && (ctes.iter().any(|c| c.name.value.eq_ignore_ascii_case(&base.name.value))
                || self.ctes.iter().any(|(n, _)| n.eq_ignore_ascii_case(&base.name.value)));
        if names_a_cte || self.names_view(base) {
            return Err(multiple());
        }
        if sel.distinct || !sel.group_by.is_empty() || sel.having.is_some() {
            return Err(SqlError::new(
                4403,
                format!("Cannot update the view or function '{cte_name}' because it contains aggregates, or a DISTINCT or GROUP BY clause, or PIVOT or UNPIVOT operator."),
            ));
        }
        let qual = alias.as_ref().unwrap_or(&base.name).value.clone();
        Ok((sel, base, qual))
    }

    /// Whether `name` names a view (of a database that exists).
    fn names_view(&mut self, name: &ObjectName) -> bool {
        matches!(self.resolve_relation(name, ""), Ok(Relation::View(..)))
    }

    /// INSERT into view `view` of database `db`: its base table and the base columns the
    /// insert list (or, without one, every view column but an identity) stands for. The
    /// mapped list then goes through the table's own rules (`insert_targets`).
    pub(crate) fn view_insert_target(
        &mut self,
        db: Arc<Database>,
        view: &ViewDef,
        columns: &[Ident],
    ) -> Result<(TableRef, Vec<Ident>), SqlError> {
        let (cte, check) = view_cte(view)?;
        self.in_view_scope(db, |r| {
            let (sel, base, qual) = r.updatable_select(&cte, &[])?;
            let mut t = r.resolve_table(base, &qual)?;
            t.view_check = check;
            let cols = table_cols(&t.def, &qual);
            let exposed = exposed_columns(&cte, sel, &cols)?;
            let identity = t.def.identity_column().map(|(c, _, _)| c);
            let base_name = |i: usize| Ident::new(t.def.columns[i].name.clone());
            let mapped = if columns.is_empty() {
                exposed
                    .iter()
                    .filter(|(i, _)| Some(*i) != identity)
                    .map(|&(i, _)| base_name(i))
                    .collect()
            } else {
                let mut mapped = Vec::with_capacity(columns.len());
                for c in columns {
                    let Some(&(i, _)) =
                        exposed.iter().find(|(_, n)| n.eq_ignore_ascii_case(&c.value))
                    else {
                        return Err(SqlError::invalid_column(&c.value));
                    };
                    mapped.push(base_name(i));
                }
                mapped
            };
            Ok((t, mapped))
        })
    }

    /// The rows of a CTE or view target (see [`Run::dml_target`]) the statement's WHERE keeps.
    pub(crate) fn cte_rows(
        &mut self,
        q: Qualified,
        where_clause: Option<&Expr>,
    ) -> Result<Qualified, SqlError> {
        let Some(w) = where_clause else { return Ok(q) };
        let Qualified { cols, rows, rowid } = q;
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            if self.predicate(w, &Env::new(&cols, &row, None))? == Some(true) {
                kept.push(row);
            }
        }
        Ok(Qualified { cols, rows: kept, rowid })
    }
}

/// The columns an updatable CTE or view exposes, in order: each a column of its base table
/// (`cols`, without the row locator), under the CTE's name for it. Error 4406 for a column
/// that is not a plain base column, or one base column exposed twice.
fn exposed_columns(
    cte: &Cte,
    sel: &Select,
    cols: &[Col],
) -> Result<Vec<(usize, String)>, SqlError> {
    let cte_name = cte.name.value.as_str();
    let mut exposed: Vec<(usize, String)> = Vec::new();
    for item in &sel.items {
        let picked: Vec<(usize, String)> = match item {
            SelectItem::Wildcard(_) => {
                cols.iter().enumerate().map(|(i, c)| (i, c.name.clone())).collect()
            }
            SelectItem::Expr { expr, alias } => {
                let ExprKind::Column(parts) = &expr.kind else {
                    return Err(derived_field(cte_name));
                };
                let Some(i) = crate::exec::eval::find_column(cols, parts)? else {
                    let last = parts.last().map(|p| p.value.as_str()).unwrap_or_default();
                    return Err(SqlError::invalid_column(last));
                };
                let name = alias.as_ref().map_or_else(|| cols[i].name.clone(), |a| a.value.clone());
                vec![(i, name)]
            }
            SelectItem::Assign { .. } => return Err(derived_field(cte_name)),
        };
        for (i, name) in picked {
            let name = cte.columns.get(exposed.len()).map_or(name, |c| c.value.clone());
            // One base column under two names cannot be one column of the rows here.
            if exposed.iter().any(|(j, _)| *j == i) {
                return Err(derived_field(cte_name));
            }
            exposed.push((i, name));
        }
    }
    Ok(exposed)
}

/// A view as the CTE it behaves as when it is the target of a change, with its WHERE when it
/// is `WITH CHECK OPTION` (a view without WHERE lets every row through).
fn view_cte(view: &ViewDef) -> Result<(Cte, Option<Expr>), SqlError> {
    let def =
        crate::exec::view::parse(&view.text).ok_or_else(|| crate::exec::view::unparsable(view))?;
    let check = match &def.query.body {
        QueryBody::Select(sel) if def.check_option => sel.where_clause.clone(),
        _ => None,
    };
    let cte = Cte {
        name: Ident::new(view.name.clone()),
        columns: def.columns,
        query: def.query,
        max_recursion: None,
    };
    Ok((cte, check))
}

/// Error 4406: the CTE has a column that is no base table column.
fn derived_field(cte: &str) -> SqlError {
    SqlError::new(
        4406,
        format!("Update or insert of view or function '{cte}' failed because it contains a derived or constant field."),
    )
}
