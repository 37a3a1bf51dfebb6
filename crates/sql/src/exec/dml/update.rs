//! UPDATE: the qualifying rows re-read under their X locks, each changed by its SET
//! assignments and written over exactly that read, with the key checks it needs.

use std::sync::Arc;

use walden_engine::types::Value;

use super::{
    assignable, no_output_with_instead_of, recheck_clause, with_implicit_target, Qualified,
};
use crate::ast::{AssignmentTarget, Expr, ExprKind, TableTarget, TriggerEvent, Update};
use crate::exec::dml::cte::DmlTarget;
use crate::exec::dml::output::Changed;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::{table_cols, TableRef};
use crate::exec::scalar;
use crate::exec::session::{assign_binary, Run};
use crate::exec::SqlError;

impl Run<'_> {
    /// UPDATE; returns the number of rows changed.
    pub(crate) fn update(&mut self, u: &Update) -> Result<u64, SqlError> {
        self.with_ctes(&u.ctes, |r| r.update_in_scope(u))
            .map_err(|e| self.rebind_in_statement(e, &u.target, &u.from))
    }

    fn update_in_scope(&mut self, u: &Update) -> Result<u64, SqlError> {
        if let (Some(Expr { kind: ExprKind::CurrentOf(cursor), .. }), TableTarget::Table(name)) =
            (&u.where_clause, &u.target)
        {
            let set: Vec<String> = u
                .assignments
                .iter()
                .filter_map(|a| match &a.target {
                    AssignmentTarget::Column(parts)
                    | AssignmentTarget::VariableAndColumn { column: parts, .. } => {
                        parts.last().map(|p| p.value.clone())
                    }
                    AssignmentTarget::Variable(_) => None,
                })
                .collect();
            let (predicate, vars) = self.current_of(cursor, name, &set)?;
            let mut positioned = u.clone();
            positioned.where_clause = Some(predicate);
            return self.with_current_of(cursor, vars, |r| r.update_in_scope(&positioned));
        }
        if let Some(target) = self.instead_of(&u.ctes, &u.target, &u.from, TriggerEvent::Update)? {
            no_output_with_instead_of(u.output.is_some())?;
            let set = Some(u.assignments.as_slice());
            return self.change_instead(target, &u.from, u.where_clause.as_ref(), set);
        }
        let limit = self.top_limit(u.top.as_ref())?;
        let (t, Qualified { cols, rows, rowid }, through) =
            match self.dml_target(&u.ctes, &u.target, &u.from)? {
                DmlTarget::Through(t, rows, through) => {
                    (t, self.cte_rows(*rows, u.where_clause.as_ref())?, Some(through))
                }
                DmlTarget::Table(t) => {
                    self.apply_table_hints(&t, &u.table_hints, true)?;
                    let from = with_implicit_target(&u.target, &u.from);
                    let q = self.qualifying_rows(&t, &from, u.where_clause.as_ref(), limit)?;
                    (t, q, None)
                }
            };
        let start = rowid - t.def.columns.len();
        let checks = self.checks(&t.def)?;
        let tcols = if checks.is_empty() { Vec::new() } else { table_cols(&t.def, &t.def.name) };
        // Resolve assignment targets once.
        let mut plan = Vec::with_capacity(u.assignments.len());
        for a in &u.assignments {
            let (var, col) = match &a.target {
                AssignmentTarget::Column(parts) => (None, Some(parts)),
                AssignmentTarget::Variable(v) => (Some(v), None),
                AssignmentTarget::VariableAndColumn { variable, column } => {
                    (Some(variable), Some(column))
                }
            };
            let col = match col {
                Some(parts) => {
                    let name = parts.last().map(|p| p.value.as_str()).unwrap_or_default();
                    // By the name the statement's rows give the target's column: a CTE
                    // target may name the base table's columns otherwise.
                    let named = |c: &Col| !c.hidden && c.name.eq_ignore_ascii_case(name);
                    let Some(c) = cols[start..rowid].iter().position(named) else {
                        // A column of a CTE's rows that is no base column (after the locator).
                        return Err(match &through {
                            Some(through) if cols[rowid..].iter().any(named) => {
                                through.derived_field()
                            }
                            _ => SqlError::invalid_column(name),
                        });
                    };
                    assignable(&t.def, c)?;
                    Some(c)
                }
                None => None,
            };
            plan.push((var, col, a));
        }
        let recheck = recheck_clause(&u.from, u.where_clause.as_ref());
        let mut output = match &u.output {
            Some(clause) => Some(self.output_plan(clause, &t.def, Changed::Both)?),
            None => None,
        };
        if u.output.as_ref().is_some_and(|o| o.into.is_none()) {
            self.output_allowed(&t, false)?;
        }
        let mut changes = self.trigger_changes(&t, TriggerEvent::Update)?;
        if let Some(changes) = changes.as_mut() {
            for c in plan.iter().filter_map(|(_, col, _)| *col) {
                changes.set_column(c);
            }
        }
        // Foreign keys are checked once the statement's rows are changed (see `foreign_key`).
        let keyed = !t.def.foreign_keys.is_empty() || self.is_referenced(&t);
        let mut keyed_changes = Vec::new();
        let mut n = 0u64;
        let (mut rows, mut taken) = (rows, 0);
        while let Some(row) = if taken < limit { rows.next()? } else { None } {
            taken += 1;
            let Some(row) = self.current_row(&t, &cols, row, rowid, recheck)? else { continue };
            let env = Env::new(&cols, &row, None);
            let mut values: Vec<Value> = row[start..rowid].to_vec();
            for (var, col, a) in &plan {
                let v = self.eval(&a.value, &env)?;
                let v = match (col, a.op) {
                    (Some(c), op) if op != crate::ast::AssignOp::Assign => {
                        let bin = assign_binary(op);
                        scalar::binary(bin, row[start + c].clone(), v)?
                    }
                    _ => v,
                };
                if let Some(c) = col {
                    values[*c] = self.store(&t.def, *c, v.clone())?;
                    if let Some(var) = var {
                        self.assign(var, crate::ast::AssignOp::Assign, values[*c].clone())?;
                    }
                } else if let Some(var) = var {
                    self.assign(var, a.op, v)?;
                }
            }
            self.compute_columns(&t.def, &mut values)?;
            self.bump_rowversion(&t, &mut values)?;
            self.check_row(&t.def, &tcols, &checks, &values, "UPDATE")?;
            self.check_view_option(&t, &values)?;
            let Value::Binary(id) = &row[rowid] else { continue };
            let db = Arc::clone(&t.db);
            // current_row read the row under its X lock: it is still as read.
            self.tx()
                .update_read_row(&db, &t.def, id, &row[start..rowid], &values)
                .map_err(|e| self.s.engine_error(e))?;
            if let Some(output) = output.as_mut() {
                self.output_row(output, Some(&row[start..rowid]), Some(&values))?;
            }
            if let Some(changes) = changes.as_mut() {
                changes.row(Some(&row[start..rowid]), Some(&values));
            }
            if keyed {
                keyed_changes.push((row[start..rowid].to_vec(), Some(values)));
            }
            n += 1;
        }
        if keyed {
            self.enforce_update_keys(&t, &keyed_changes, "UPDATE")?;
        }
        if let Some(output) = output {
            self.output_finish(output)?;
        }
        self.s.trigger_changes.extend(changes);
        Ok(n)
    }

    /// The foreign keys an UPDATE (or MERGE) of `t` must satisfy: the rows whose
    /// referencing columns changed must find their keys, and the rows referencing keys it
    /// changed or deleted are looked after (see `foreign_key`).
    pub(crate) fn enforce_update_keys(
        &mut self,
        t: &TableRef,
        changes: &[(Vec<Value>, Option<Vec<Value>>)],
        statement: &str,
    ) -> Result<(), SqlError> {
        let fk_columns: Vec<usize> =
            t.def.foreign_keys.iter().flat_map(|fk| fk.columns.iter().copied()).collect();
        let moved: Vec<Vec<Value>> = changes
            .iter()
            .filter_map(|(old, new)| {
                let new = new.as_ref()?;
                fk_columns.iter().any(|&c| old[c] != new[c]).then(|| new.clone())
            })
            .collect();
        self.check_references(t, &moved, statement)?;
        self.enforce_referenced(t, changes, statement)
    }
}
