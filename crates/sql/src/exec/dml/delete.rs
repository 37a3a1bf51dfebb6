//! DELETE: the qualifying rows re-read under their X locks and removed one by one.

use std::sync::Arc;

use walden_engine::types::Value;

use super::{no_output_with_instead_of, recheck_clause, with_implicit_target, Qualified};
use crate::ast::{Delete, Expr, ExprKind, TableTarget, TriggerEvent};
use crate::exec::dml::cte::DmlTarget;
use crate::exec::dml::output::Changed;
use crate::exec::session::Run;
use crate::exec::SqlError;

impl Run<'_> {
    /// DELETE; returns the number of rows deleted.
    pub(crate) fn delete(&mut self, d: &Delete) -> Result<u64, SqlError> {
        self.with_ctes(&d.ctes, |r| r.delete_in_scope(d))
            .map_err(|e| self.rebind_in_statement(e, &d.target, &d.from))
    }

    fn delete_in_scope(&mut self, d: &Delete) -> Result<u64, SqlError> {
        if let (Some(Expr { kind: ExprKind::CurrentOf(cursor), .. }), TableTarget::Table(name)) =
            (&d.where_clause, &d.target)
        {
            let (predicate, vars) = self.current_of(cursor, name, &[])?;
            let mut positioned = d.clone();
            positioned.where_clause = Some(predicate);
            return self.with_current_of(cursor, vars, |r| r.delete_in_scope(&positioned));
        }
        if let Some(target) = self.instead_of(&d.ctes, &d.target, &d.from, TriggerEvent::Delete)? {
            no_output_with_instead_of(d.output.is_some())?;
            return self.change_instead(target, &d.from, d.where_clause.as_ref(), None);
        }
        let limit = self.top_limit(d.top.as_ref())?;
        let (t, Qualified { cols, rows, rowid }) = match self
            .dml_target(&d.ctes, &d.target, &d.from)?
        {
            DmlTarget::Through(t, rows, _) => (t, self.cte_rows(*rows, d.where_clause.as_ref())?),
            DmlTarget::Table(t) => {
                self.apply_table_hints(&t, &d.table_hints, true)?;
                let from = with_implicit_target(&d.target, &d.from);
                let q = self.qualifying_rows(&t, &from, d.where_clause.as_ref(), limit)?;
                (t, q)
            }
        };
        let recheck = recheck_clause(&d.from, d.where_clause.as_ref());
        let mut output = match &d.output {
            Some(clause) => Some(self.output_plan(clause, &t.def, Changed::Deleted)?),
            None => None,
        };
        if d.output.as_ref().is_some_and(|o| o.into.is_none()) {
            self.output_allowed(&t, false)?;
        }
        let mut changes = self.trigger_changes(&t, TriggerEvent::Delete)?;
        // The rows that reference the deleted keys are looked after once the statement's rows
        // are gone (see `foreign_key`).
        let referenced = self.is_referenced(&t);
        let mut deleted = Vec::new();
        let mut n = 0u64;
        let (mut rows, mut taken) = (rows, 0);
        while let Some(row) = if taken < limit { rows.next()? } else { None } {
            taken += 1;
            // Without a WHERE to check again (or an OUTPUT to show them), DELETE needs no fresh
            // values: `delete_row` takes the same exclusive lock and tells a row that is gone.
            let row = if recheck.is_some() || output.is_some() || changes.is_some() || referenced {
                match self.current_row(&t, &cols, row, rowid, recheck)? {
                    Some(row) => row,
                    None => continue,
                }
            } else {
                row
            };
            let Value::Binary(id) = &row[rowid] else { continue };
            let db = Arc::clone(&t.db);
            if self.tx().delete_row(&db, &t.def, id).map_err(|e| self.s.engine_error(e))? {
                let start = rowid - t.def.columns.len();
                if let Some(output) = output.as_mut() {
                    self.output_row(output, Some(&row[start..rowid]), None)?;
                }
                if let Some(changes) = changes.as_mut() {
                    changes.row(Some(&row[start..rowid]), None);
                }
                if referenced {
                    deleted.push((row[start..rowid].to_vec(), None));
                }
                n += 1;
            }
        }
        self.enforce_referenced(&t, &deleted, "DELETE")?;
        if let Some(output) = output {
            self.output_finish(output)?;
        }
        self.s.trigger_changes.extend(changes);
        Ok(n)
    }
}
