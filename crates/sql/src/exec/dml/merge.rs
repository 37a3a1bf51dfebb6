//! MERGE: inserts, updates and deletes rows of a target table by how they match the rows of
//! a source.
//!
//! The statement runs in two phases, as UPDATE and DELETE do (see `dml`): first the target
//! and source are read and joined on the `ON` condition, and each joined row is given the
//! action of the first `WHEN` clause of its kind whose condition holds; then the actions are
//! applied one row at a time through the same engine calls INSERT, UPDATE and DELETE use (row
//! locks, the log, index maintenance, CHECK constraints). So every condition sees the rows as
//! they were before the statement, and a failure anywhere undoes the whole statement like any
//! other statement failure. A target row that two source rows would both change is error
//! 8672, found in the first phase, before anything changes.

use walden_engine::types::{Len, SqlType, Value};

use std::collections::HashSet;

use crate::ast::{
    AssignOp, Assignment, AssignmentTarget, ExprKind, Join, JoinKind, Merge, MergeAction,
    MergeWhen, TableSource, TableTarget, TriggerEvent,
};
use crate::exec::dml::output::Changed;
use crate::exec::dml::{assignable, insert_targets, values_count_mismatch};
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::{Rows, TableRef, ROWID};
use crate::exec::plan::table_hints;
use crate::exec::scalar;
use crate::exec::session::{assign_binary, Run};
use crate::exec::SqlError;

/// One action the statement will take: clause `clause`'s, on the joined row `row` (the
/// target's columns and row locator, then the source's; either side all NULL when it has
/// no row).
struct Planned {
    clause: usize,
    row: Vec<Value>,
}

/// The source joined to the target ([`Run::merge_join`]).
struct Joined {
    /// The target's columns and row locator, then the source's.
    cols: Vec<Col>,
    /// The joined rows in that layout.
    rows: Vec<Vec<Value>>,
    /// The source's columns.
    source_cols: Vec<Col>,
}

/// An `UPDATE SET` item resolved against the target: the variable and the target column it
/// assigns.
struct SetItem<'a> {
    variable: Option<&'a str>,
    column: Option<usize>,
    assignment: &'a Assignment,
}

impl Run<'_> {
    /// MERGE; returns the number of rows inserted, updated and deleted.
    pub(crate) fn merge(&mut self, m: &Merge) -> Result<u64, SqlError> {
        self.with_ctes(&m.ctes, |r| r.merge_in_scope(m))
    }

    fn merge_in_scope(&mut self, m: &Merge) -> Result<u64, SqlError> {
        let t = match &m.target {
            TableTarget::Table(name) => {
                let qual = m.alias.as_ref().unwrap_or(&name.name).value.clone();
                self.resolve_table(name, &qual)?
            }
            TableTarget::Variable(v) => {
                let qual = m.alias.as_ref().map_or_else(|| v.clone(), |a| a.value.clone());
                self.resolve_table_variable(v, &qual)?
            }
        };
        for event in [TriggerEvent::Insert, TriggerEvent::Update, TriggerEvent::Delete] {
            if self.instead_of(&[], &m.target, &[], event)?.is_some() {
                return Err(SqlError::new(
                    50000,
                    format!("Walden does not run MERGE on '{}', which has an INSTEAD OF trigger: use INSERT, UPDATE and DELETE.", t.def.name),
                ));
            }
        }
        let Joined { cols, rows: joined, source_cols } = self.merge_join(m, &t)?;
        let rowid = t.def.columns.len();
        let source_nulls = vec![Value::Null; source_cols.len()];

        // Phase 1: each joined row's action.
        let mut plan = Vec::new();
        // The target rows some source row matched, and those one of them acted on (a second
        // action on one is error 8672).
        let mut matched = HashSet::new();
        let mut acted = HashSet::new();
        for (n, row) in joined.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            let Value::Binary(id) = &row[rowid] else {
                let by_target = MergeWhen::NotMatchedByTarget;
                if let Some(clause) = self.merge_clause(m, by_target, &cols, &row)? {
                    plan.push(Planned { clause, row });
                }
                continue;
            };
            matched.insert(id.clone());
            if let Some(clause) = self.merge_clause(m, MergeWhen::Matched, &cols, &row)? {
                if !acted.insert(id.clone()) {
                    return Err(SqlError::new(
                        8672,
                        "The MERGE statement attempted to UPDATE or DELETE the same row more than once. This happens when a target row matches more than one source row. A MERGE statement cannot UPDATE/DELETE the same row of the target table multiple times. Refine the ON clause to ensure a target row matches at most one source row, or use the GROUP BY clause to group the source rows.",
                    ));
                }
                plan.push(Planned { clause, row });
            }
        }
        if m.clauses.iter().any(|c| c.when == MergeWhen::NotMatchedBySource) {
            // The target rows no source row matched: the whole target is read, as SQL
            // Server's full outer join reads it.
            let target = self.table_rows(&t, None)?;
            for (n, mut row) in target.rows.into_iter().enumerate() {
                self.row_interruption_point(n)?;
                if matches!(&row[rowid], Value::Binary(id) if matched.contains(id)) {
                    continue;
                }
                row.extend_from_slice(&source_nulls);
                let by_source = MergeWhen::NotMatchedBySource;
                if let Some(clause) = self.merge_clause(m, by_source, &cols, &row)? {
                    plan.push(Planned { clause, row });
                }
            }
        }
        // TOP limits the rows acted on, after the join (SQL Server's rule).
        if let Some(top) = &m.top {
            let n = self.count_value(&top.quantity)?;
            let limit = if top.percent {
                (plan.len() as f64 * n.min(100) as f64 / 100.0).ceil() as usize
            } else {
                n
            };
            plan.truncate(limit);
        }

        // Phase 2: the changes.
        let mut sets = Vec::with_capacity(m.clauses.len());
        for clause in &m.clauses {
            sets.push(match &clause.action {
                MergeAction::Update(items) => self.merge_set_items(&t, items)?,
                _ => Vec::new(),
            });
        }
        let mut output = match &m.output {
            Some(clause) => {
                let mut extra = vec![Col {
                    nullable: false,
                    ..Col::new(None, "$action", SqlType::NVarChar(Len::N(10)))
                }];
                extra.extend(source_cols.iter().cloned());
                Some(self.output_plan_with(clause, &t.def, Changed::Both, extra)?)
            }
            None => None,
        };
        if m.output.as_ref().is_some_and(|o| o.into.is_none()) {
            self.output_allowed(&t, false)?;
        }
        let mut inserts = self.trigger_changes(&t, TriggerEvent::Insert)?;
        let mut updates = self.trigger_changes(&t, TriggerEvent::Update)?;
        let mut deletes = self.trigger_changes(&t, TriggerEvent::Delete)?;
        if let Some(updates) = updates.as_mut() {
            for c in sets.iter().flatten().filter_map(|item| item.column) {
                updates.set_column(c);
            }
        }
        let checks = self.checks(&t.def)?;
        let start = rowid + 1;
        // Foreign keys of updated and deleted rows are enforced once the statement's rows are
        // changed (see `foreign_key`); inserted rows are checked as they go in.
        let keyed = !t.def.foreign_keys.is_empty() || self.is_referenced(&t);
        let mut keyed_changes = Vec::new();
        let mut n = 0u64;
        for Planned { clause, row } in plan {
            let action = &m.clauses[clause].action;
            if let Some(output) = output.as_mut() {
                let verb = match action {
                    MergeAction::Update(_) => "UPDATE",
                    MergeAction::Delete => "DELETE",
                    MergeAction::Insert { .. } => "INSERT",
                };
                let mut extra = vec![Value::NStr(verb.into())];
                extra.extend_from_slice(&row[start..]);
                output.set_extra(extra);
            }
            match action {
                MergeAction::Update(_) => {
                    // Re-read under the exclusive row lock; a row another session deleted
                    // meanwhile, or changed so that it no longer matches, is left alone, as
                    // UPDATE leaves a row that no longer qualifies.
                    let Some(row) = self.current_row(&t, &cols, row, rowid, Some(&m.on))? else {
                        continue;
                    };
                    let env = Env::new(&cols, &row, None);
                    let mut values = row[..rowid].to_vec();
                    for item in &sets[clause] {
                        let a = item.assignment;
                        let v = self.eval(&a.value, &env)?;
                        match item.column {
                            Some(c) => {
                                let v = if a.op == AssignOp::Assign {
                                    v
                                } else {
                                    scalar::binary(assign_binary(a.op), row[c].clone(), v)?
                                };
                                values[c] = self.store(&t.def, c, v)?;
                                if let Some(var) = item.variable {
                                    self.assign(var, AssignOp::Assign, values[c].clone())?;
                                }
                            }
                            None => {
                                if let Some(var) = item.variable {
                                    self.assign(var, a.op, v)?;
                                }
                            }
                        }
                    }
                    let tcols = &cols[..rowid];
                    self.compute_columns(&t.def, &mut values)?;
                    self.bump_rowversion(&t, &mut values)?;
                    self.check_row(&t.def, tcols, &checks, &values, "MERGE")?;
                    let Value::Binary(id) = &row[rowid] else { continue };
                    let db = std::sync::Arc::clone(&t.db);
                    self.tx()
                        .update_read_row(&db, &t.def, id, &row[..rowid], &values)
                        .map_err(|e| self.s.engine_error(e))?;
                    if let Some(output) = output.as_mut() {
                        self.output_row(output, Some(&row[..rowid]), Some(&values))?;
                    }
                    if let Some(updates) = updates.as_mut() {
                        updates.row(Some(&row[..rowid]), Some(&values));
                    }
                    if keyed {
                        keyed_changes.push((row[..rowid].to_vec(), Some(values)));
                    }
                    n += 1;
                }
                MergeAction::Delete => {
                    let Some(row) = self.current_row(&t, &cols, row, rowid, Some(&m.on))? else {
                        continue;
                    };
                    let Value::Binary(id) = &row[rowid] else { continue };
                    let db = std::sync::Arc::clone(&t.db);
                    if self.tx().delete_row(&db, &t.def, id).map_err(|e| self.s.engine_error(e))? {
                        if let Some(output) = output.as_mut() {
                            self.output_row(output, Some(&row[..rowid]), None)?;
                        }
                        if let Some(deletes) = deletes.as_mut() {
                            deletes.row(Some(&row[..rowid]), None);
                        }
                        if keyed {
                            keyed_changes.push((row[..rowid].to_vec(), None));
                        }
                        n += 1;
                    }
                }
                MergeAction::Insert { columns, values } => {
                    let targets = match values {
                        Some(_) => insert_targets(&t, columns, self.identity_insert_on(&t))?,
                        None => Vec::new(),
                    };
                    let env = Env::new(&cols, &row, None);
                    let mut given = Vec::with_capacity(targets.len());
                    for e in values.iter().flatten() {
                        given.push(match e.kind {
                            ExprKind::Default => None,
                            _ => Some(self.eval(e, &env)?),
                        });
                    }
                    if given.len() != targets.len() {
                        return Err(values_count_mismatch(
                            columns.is_empty(),
                            given.len(),
                            targets.len(),
                        ));
                    }
                    // SQL Server names the statement, MERGE, in a CHECK violation.
                    let inserted = self.insert_rows(
                        &t,
                        &targets,
                        vec![given],
                        1,
                        output.as_mut(),
                        inserts.as_mut(),
                    );
                    n += inserted.map_err(|mut e| {
                        if e.number == 547 {
                            e.message = e.message.replacen("The INSERT", "The MERGE", 1);
                        }
                        e
                    })?;
                }
            }
        }
        if keyed {
            self.enforce_update_keys(&t, &keyed_changes, "MERGE")?;
        }
        if let Some(output) = output {
            self.output_finish(output)?;
        }
        // As in SQL Server, each action's triggers fire once for the statement: here the
        // insert triggers first, then the update and the delete ones.
        self.s.trigger_changes.extend([inserts, updates, deletes].into_iter().flatten());
        Ok(n)
    }

    /// The source joined to the target on the `ON` condition, as `source LEFT OUTER JOIN
    /// target`, so that the planner seeks the target's indexes with each source row instead
    /// of reading the whole target: the columns (the target's and its row locator, then the
    /// source's), the joined rows in that layout (the target's side NULL for a source row no
    /// target row matches), and the source's columns. The target's seeks are an UPDATE's
    /// search: under SERIALIZABLE they take update locks.
    fn merge_join(&mut self, m: &Merge, t: &TableRef) -> Result<Joined, SqlError> {
        // NOLOCK on the target is refused (1065) before the join applies the hints.
        table_hints::parse(&m.table_hints, true)?;
        let target = match &m.target {
            TableTarget::Table(name) => TableSource::Table {
                name: name.clone(),
                alias: m.alias.clone(),
                hints: m.table_hints.clone(),
            },
            TableTarget::Variable(v) => {
                TableSource::Variable { name: v.clone(), alias: m.alias.clone() }
            }
        };
        let from = TableSource::Join(Box::new(Join {
            left: m.source.clone(),
            right: target,
            kind: JoinKind::LeftOuter,
            on: Some(m.on.clone()),
        }));
        self.tx().set_update_target(Some((t.db.id(), t.def.id)));
        let joined = self.plan_from(std::slice::from_ref(&from), None, None, None);
        self.tx().set_update_target(None);
        let (Rows { cols, rows }, _) = joined?;
        // The target is the join's right input: its columns and locator end the row.
        let width = t.def.columns.len() + 1;
        let split = cols.len().saturating_sub(width);
        let locator = cols.last().filter(|c| {
            c.hidden
                && c.name == ROWID
                && c.qual.as_deref().is_some_and(|q| q.eq_ignore_ascii_case(&t.qual))
        });
        if cols.len() < width || locator.is_none() {
            return Err(SqlError::new(
                50000,
                "Walden's MERGE found no target row locator in its join.",
            ));
        }
        let source_cols = cols[..split].to_vec();
        let mut layout = cols[split..].to_vec();
        layout.extend(source_cols.iter().cloned());
        let rows = rows
            .into_iter()
            .map(|mut row| {
                row.rotate_left(split);
                row
            })
            .collect();
        Ok(Joined { cols: layout, rows, source_cols })
    }

    /// The first clause of kind `when` whose condition holds for the joined `row`.
    fn merge_clause(
        &mut self,
        m: &Merge,
        when: MergeWhen,
        cols: &[Col],
        row: &[Value],
    ) -> Result<Option<usize>, SqlError> {
        for (i, clause) in m.clauses.iter().enumerate().filter(|(_, c)| c.when == when) {
            let holds = match &clause.condition {
                Some(c) => self.predicate(c, &Env::new(cols, row, None))? == Some(true),
                None => true,
            };
            if holds {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// The `UPDATE SET` items of a clause, each column resolved against the target.
    fn merge_set_items<'a>(
        &mut self,
        t: &TableRef,
        items: &'a [Assignment],
    ) -> Result<Vec<SetItem<'a>>, SqlError> {
        let mut out = Vec::with_capacity(items.len());
        for a in items {
            let (variable, parts) = match &a.target {
                AssignmentTarget::Column(parts) => (None, Some(parts)),
                AssignmentTarget::Variable(v) => (Some(v.as_str()), None),
                AssignmentTarget::VariableAndColumn { .. } => {
                    return Err(SqlError::with_severity(10724, 15, "In a MERGE statement, a variable cannot be set to a column and expression in the same assignment in the SET clause of an UPDATE action. Assignments of the form 'SET @variable = column = expression' are not valid in the SET clause of an UPDATE action in a MERGE statement. Modify the SET clause to only specify assignments of the form 'SET @variable = column' or 'SET @variable = expression'."));
                }
            };
            let column = match parts {
                Some(parts) => {
                    let name = parts.last().map(|p| p.value.as_str()).unwrap_or_default();
                    let c = t.def.column(name).ok_or_else(|| SqlError::invalid_column(name))?;
                    assignable(&t.def, c)?;
                    Some(c)
                }
                None => None,
            };
            out.push(SetItem { variable, column, assignment: a });
        }
        Ok(out)
    }
}
