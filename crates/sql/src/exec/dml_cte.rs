//! Common table expressions of INSERT, UPDATE, DELETE and MERGE.
//!
//! The statement's CTEs are materialized before it runs and stay in scope (in
//! [`Run::ctes`]) while its sources are read, as a SELECT's are.
//!
//! A CTE may also be the *target* of an UPDATE or DELETE (`WITH c AS (SELECT TOP (10) * FROM
//! t ORDER BY id) DELETE FROM c`), as a view may in SQL Server, when it is a single-table
//! SELECT of plain columns: the statement then changes the rows of the base table the CTE
//! selects. Its rows are computed here with their row locators, so the change goes through
//! the same engine calls (locks, log, indexes) as any UPDATE or DELETE.

use crate::ast::{Cte, Expr, ExprKind, QueryBody, SelectItem, TableSource, TableTarget};
use crate::exec::dml::Qualified;
use crate::exec::eval::{Col, Env};
use crate::exec::query::{sort_by_keys, Rows, TableRef};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;
use walden_engine::types::{SqlType, Value};

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

    /// When `target` names one of the statement's `ctes`, the base table it stands for and
    /// the rows of it the CTE selects, shaped as an UPDATE or DELETE over the CTE needs them:
    /// the base table's columns under the CTE's names (those the CTE does not select are
    /// hidden), then the row locator. `None` when `target` is not a CTE.
    pub(crate) fn cte_target(
        &mut self,
        ctes: &[Cte],
        target: &TableTarget,
        from: &[TableSource],
    ) -> Result<Option<(TableRef, Qualified)>, SqlError> {
        let TableTarget::Table(name) = target else { return Ok(None) };
        if name.schema.is_some() || name.database.is_some() {
            return Ok(None);
        }
        let Some(cte) =
            ctes.iter().rev().find(|c| c.name.value.eq_ignore_ascii_case(&name.name.value))
        else {
            return Ok(None);
        };
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
        let QueryBody::Select(sel) = &cte.query.body else { return Err(multiple()) };
        let [TableSource::Table { name: base, alias, .. }] = sel.from.as_slice() else {
            return Err(multiple());
        };
        let names_a_cte = base.schema.is_none()
            && base.database.is_none()
            && (ctes.iter().any(|c| c.name.value.eq_ignore_ascii_case(&base.name.value))
                || self.ctes.iter().any(|(n, _)| n.eq_ignore_ascii_case(&base.name.value)));
        if names_a_cte {
            return Err(multiple());
        }
        if sel.distinct || !sel.group_by.is_empty() || sel.having.is_some() {
            return Err(SqlError::new(
                4403,
                format!("Cannot update the view or function '{cte_name}' because it contains aggregates, or a DISTINCT or GROUP BY clause, or PIVOT or UNPIVOT operator."),
            ));
        }
        let qual = alias.as_ref().unwrap_or(&base.name).value.clone();
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
        let mut order = 0usize;
        for item in &sel.items {
            let picked: Vec<(usize, String)> = match item {
                SelectItem::Wildcard(_) => (0..rowid).map(|i| (i, cols[i].name.clone())).collect(),
                SelectItem::Expr { expr, alias } => {
                    let ExprKind::Column(parts) = &expr.kind else {
                        return Err(derived_field(cte_name));
                    };
                    let Some(i) = crate::exec::eval::find_column(&cols[..rowid], parts)? else {
                        let last = parts.last().map(|p| p.value.as_str()).unwrap_or_default();
                        return Err(SqlError::invalid_column(last));
                    };
                    let name =
                        alias.as_ref().map_or_else(|| cols[i].name.clone(), |a| a.value.clone());
                    vec![(i, name)]
                }
                SelectItem::Assign { .. } => return Err(derived_field(cte_name)),
            };
            for (i, name) in picked {
                let name = cte.columns.get(order).map_or(name, |c| c.value.clone());
                order += 1;
                // One base column under two names cannot be one column of the rows here.
                if exposed[i].replace(name).is_some() {
                    return Err(derived_field(cte_name));
                }
            }
        }
        let mut shaped: Vec<Col> = Vec::with_capacity(cols.len());
        for (c, name) in cols.into_iter().zip(exposed.into_iter().chain(std::iter::once(None))) {
            shaped.push(match name {
                Some(name) => Col { qual: Some(cte_name.to_string()), name, ..c },
                None => Col { hidden: true, ..c },
            });
        }
        Ok(Some((t, Qualified { cols: shaped, rows, rowid })))
    }

    /// The rows of a CTE target (see [`Run::cte_target`]) the statement's WHERE keeps.
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

/// Error 4406: the CTE has a column that is no base table column.
fn derived_field(cte: &str) -> SqlError {
    SqlError::new(
        4406,
        format!("Update or insert of view or function '{cte}' failed because it contains a derived or constant field."),
    )
}
