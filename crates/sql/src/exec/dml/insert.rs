//! INSERT: its target columns, its source (VALUES, a query, `EXEC`, DEFAULT VALUES), and the
//! loop that stores each row through the engine, with `IGNORE_DUP_KEY`'s warning.

use std::sync::Arc;

use walden_engine::catalog::TableDef;
use walden_engine::types::Value;

use super::{no_output_with_instead_of, not_modifiable};
use crate::ast::{ExprKind, Insert, InsertSource, TriggerEvent};
use crate::exec::dml::output::{Changed, OutputRows};
use crate::exec::execute::query::{table_cols, Relation, TableRef};
use crate::exec::module::trigger::TriggerChanges;
use crate::exec::scalar;
use crate::exec::session::{Run, Step};
use crate::exec::SqlError;

/// The columns an INSERT's column list names (all but the identity column when it is
/// empty), as indexes into the table's columns. `identity_insert`: the session has
/// `SET IDENTITY_INSERT` ON for the table, so the list must name the identity column
/// (errors 8101 and 545) rather than must not (544).
pub(crate) fn insert_targets(
    t: &TableRef,
    columns: &[crate::ast::Ident],
    identity_insert: bool,
) -> Result<Vec<usize>, SqlError> {
    let def = &t.def;
    let identity = def.identity_column().map(|(c, _, _)| c);
    if columns.is_empty() {
        if identity_insert {
            return Err(SqlError::new(
                8101,
                format!("An explicit value for the identity column in table '{}' can only be specified when a column list is used and IDENTITY_INSERT is ON.", t.qual),
            ));
        }
        return Ok((0..def.columns.len())
            .filter(|&c| Some(c) != identity && def.columns[c].computed.is_none())
            .collect());
    }
    let mut v = Vec::with_capacity(columns.len());
    for c in columns {
        let at = def.column(&c.value).ok_or_else(|| SqlError::invalid_column(&c.value))?;
        if def.columns[at].computed.is_some() {
            return Err(not_modifiable(&def.columns[at].name));
        }
        if Some(at) == identity && !identity_insert {
            return Err(SqlError::new(
                544,
                format!("Cannot insert explicit value for identity column in table '{}' when IDENTITY_INSERT is set to OFF.", t.qual),
            ));
        }
        v.push(at);
    }
    if identity_insert && identity.is_some_and(|c| !v.contains(&c)) {
        return Err(SqlError::new(
            545,
            format!("Explicit value must be specified for identity column in table '{}' either when IDENTITY_INSERT is set to ON or when a replication user is inserting into a NOT FOR REPLICATION identity column.", t.qual),
        ));
    }
    Ok(v)
}

pub(crate) fn column_count_mismatch() -> SqlError {
    SqlError::new(213, "Column name or number of supplied values does not match table definition.")
}

/// The error for a source query whose select list does not fit the insert list: 213
/// without a column list, else 120.
pub(crate) fn select_count_mismatch(no_list: bool) -> SqlError {
    if no_list {
        column_count_mismatch()
    } else {
        SqlError::new(120, "The select list for the INSERT statement contains fewer items than the insert list. The number of SELECT values must match the number of INSERT columns.")
    }
}

/// The error for a VALUES row of `values` values for `columns` target columns: 213 without a
/// column list, else 109 (too few values) or 110 (too many).
pub(crate) fn values_count_mismatch(no_list: bool, values: usize, columns: usize) -> SqlError {
    if no_list {
        column_count_mismatch()
    } else if values > columns {
        SqlError::new(110, "There are fewer columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
    } else {
        SqlError::new(109, "There are more columns in the INSERT statement than values specified in the VALUES clause. The number of values in the VALUES clause must match the number of columns specified in the INSERT statement.")
    }
}

/// Message 3604 (severity 10): an INSERT skipped rows under `IGNORE_DUP_KEY = ON`.
pub(crate) fn duplicate_key_ignored() -> SqlError {
    SqlError::with_severity(3604, 10, "Duplicate key was ignored.")
}

impl Run<'_> {
    /// INSERT; returns the number of rows inserted. The target and the insert list are
    /// checked before the source runs: an `INSERT ... EXEC` into a table that is not there
    /// runs nothing.
    pub(crate) fn insert(&mut self, i: &Insert) -> Step<u64> {
        self.with_ctes(&i.ctes, |r| r.insert_in_scope(i))
    }

    fn insert_in_scope(&mut self, i: &Insert) -> Step<u64> {
        if let Some(target) = self.instead_of(&i.ctes, &i.target, &[], TriggerEvent::Insert)? {
            no_output_with_instead_of(i.output.is_some())?;
            return self.insert_instead(i, target);
        }
        let (t, targets) = match self.target_relation(&i.target, &[])? {
            Relation::View(db, view) => {
                let (t, columns) = self.view_insert_target(db, &view, &i.columns)?;
                let targets = insert_targets(&t, &columns, self.identity_insert_on(&t))?;
                (t, targets)
            }
            Relation::Table(t) => {
                self.apply_table_hints(&t, &i.table_hints, true)?;
                let targets = insert_targets(&t, &i.columns, self.identity_insert_on(&t))?;
                (t, targets)
            }
        };
        let mut output = match &i.output {
            Some(clause) => Some(self.output_plan(clause, &t.def, Changed::Inserted)?),
            None => None,
        };
        if i.output.as_ref().is_some_and(|o| o.into.is_none()) {
            self.output_allowed(&t, false)?;
        }
        let mut changes = self.trigger_changes(&t, TriggerEvent::Insert)?;
        let n = match &i.source {
            InsertSource::Query(q) if self.may_stream_into(i, q, &t) => {
                let limit = self.top_limit(i.top.as_ref())?;
                let mut inserter =
                    Inserter::new(self, &t, &targets, output.as_mut(), changes.as_mut())?;
                self.insert_streamed(i, q, limit, &mut inserter)?;
                inserter.finish(self)?
            }
            _ => {
                let source = self.insert_source(i, targets.len())?;
                let limit = self.top_limit(i.top.as_ref())?;
                self.insert_rows(&t, &targets, source, limit, output.as_mut(), changes.as_mut())?
            }
        };
        if let Some(output) = output {
            self.output_finish(output)?;
        }
        self.s.trigger_changes.extend(changes);
        Ok(n)
    }

    /// An INSERT's source rows, each with one value per insert-list position (`None`:
    /// DEFAULT), checked against the list's `width`.
    pub(crate) fn insert_source(
        &mut self,
        i: &Insert,
        width: usize,
    ) -> Step<Vec<Vec<Option<Value>>>> {
        Ok(match &i.source {
            InsertSource::Values(rows) => {
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    if r.len() != width {
                        return Err(
                            values_count_mismatch(i.columns.is_empty(), r.len(), width).into()
                        );
                    }
                    let mut row = Vec::with_capacity(r.len());
                    for e in r {
                        row.push(match e.kind {
                            ExprKind::Default => None,
                            _ => Some(self.value(e)?),
                        });
                    }
                    out.push(row);
                }
                out
            }
            InsertSource::Query(q) => {
                let rows = self.query(q, None)?;
                let visible = rows.visible();
                if visible.len() != width {
                    return Err(select_count_mismatch(i.columns.is_empty()).into());
                }
                rows.rows
                    .into_iter()
                    .map(|r| visible.iter().map(|&c| Some(r[c].clone())).collect())
                    .collect()
            }
            InsertSource::DefaultValues => vec![Vec::new()],
            InsertSource::Execute(e) => {
                // Every result set's rows, each of which must fit the insert list (213).
                let mut out = Vec::new();
                for set in self.execute_captured(e)? {
                    if set.columns.len() != width {
                        return Err(column_count_mismatch().into());
                    }
                    out.extend(set.rows.into_iter().map(|r| r.into_iter().map(Some).collect()));
                }
                out
            }
        })
    }

    /// Inserts up to `limit` rows of `source` into `t`, each value going to the column
    /// `targets` names at its position (`None`: the column's default); every other column
    /// gets its default or identity. Returns the number of rows inserted.
    pub(crate) fn insert_rows(
        &mut self,
        t: &TableRef,
        targets: &[usize],
        source: Vec<Vec<Option<Value>>>,
        limit: usize,
        output: Option<&mut OutputRows<'_>>,
        changes: Option<&mut TriggerChanges>,
    ) -> Result<u64, SqlError> {
        let mut inserter = Inserter::new(self, t, targets, output, changes)?;
        for row in source.into_iter().take(limit) {
            inserter.row(self, row)?;
        }
        inserter.finish(self)
    }

    /// Inserts a row, unless its key is already in a unique index with `IGNORE_DUP_KEY = ON`:
    /// then the row is skipped (false) and `ignored` set, for the statement's one message
    /// 3604. Any other duplicate is the error it always is. The engine undoes whatever part of
    /// the row it had inserted before it met the duplicate.
    pub(crate) fn insert_unless_ignored(
        &mut self,
        db: &Arc<walden_engine::Database>,
        def: &TableDef,
        values: &mut [Value],
        ignored: &mut bool,
    ) -> Result<bool, SqlError> {
        let inserted = self.tx().insert_row(db, def, values).map(|_| ());
        self.unless_ignored(def, inserted, ignored)
    }

    /// What an insert into `def` that `inserted` says: true if the row went in, false (and
    /// `ignored` set) if a unique index with `IGNORE_DUP_KEY = ON` turned it away, else the
    /// error (a duplicate found while the index is built, 1505, is never ignored).
    pub(crate) fn unless_ignored(
        &mut self,
        def: &TableDef,
        inserted: Result<(), walden_engine::EngineError>,
        ignored: &mut bool,
    ) -> Result<bool, SqlError> {
        match inserted {
            Ok(()) => Ok(true),
            Err(walden_engine::EngineError::DuplicateKey { ref constraint, number, .. })
                if number != 1505
                    && def.indexes.iter().any(|i| i.ignore_dup_key && i.name == *constraint) =>
            {
                *ignored = true;
                Ok(false)
            }
            Err(e) => Err(self.s.engine_error(e)),
        }
    }

    /// The values of one inserted row: each of `row`'s values converted for the column
    /// `targets` names at its place, every other column its DEFAULT or NULL (`identity`,
    /// the identity column, NULL).
    pub(crate) fn insert_values(
        &mut self,
        def: &TableDef,
        targets: &[usize],
        row: Vec<Option<Value>>,
        identity: Option<usize>,
    ) -> Result<Vec<Value>, SqlError> {
        let mut values = vec![Value::Null; def.columns.len()];
        let mut given = vec![false; def.columns.len()];
        for (&c, v) in targets.iter().zip(row) {
            if let Some(v) = v {
                values[c] = self.store(def, c, v)?;
                given[c] = true;
            }
        }
        for c in 0..def.columns.len() {
            if given[c] || Some(c) == identity {
                continue;
            }
            if let Some(text) = &def.columns[c].default {
                let e = self.stored_expr(text)?;
                let v = self.default_value(&e)?;
                values[c] = self.store(def, c, v)?;
            }
        }
        self.compute_columns(def, &mut values)?;
        Ok(values)
    }
}

/// The rows of one INSERT going into its table one at a time ([`Inserter::row`]), with what
/// every row needs worked out once, so that a source may give them as it makes them
/// (`insert_stream.rs`) as well as all at once ([`Run::insert_rows`]). Each row is checked
/// and stored before the next comes; an error leaves the earlier rows to the statement's
/// rollback, as for a collected source.
pub(crate) struct Inserter<'a, 'c> {
    t: &'a TableRef,
    /// The column each source value goes to (`insert_targets`).
    targets: &'a [usize],
    identity: Option<usize>,
    /// With IDENTITY_INSERT ON the insert list names the identity column (`insert_targets`).
    explicit_identity: bool,
    checks: Vec<(String, Arc<crate::ast::Expr>)>,
    /// The table's columns for its CHECK constraints (none without any).
    cols: Vec<crate::exec::eval::Col>,
    computed: bool,
    rowversion: Option<usize>,
    /// Foreign keys are checked once the statement's rows are in (see `foreign_key`): the
    /// rows are kept for that when the table has an enabled one, else none is.
    referencing: bool,
    inserted: Vec<Vec<Value>>,
    n: u64,
    /// Whether `IGNORE_DUP_KEY` turned a row away, for the statement's one message 3604.
    ignored: bool,
    output: Option<&'a mut OutputRows<'c>>,
    changes: Option<&'a mut TriggerChanges>,
}

impl<'a, 'c> Inserter<'a, 'c> {
    pub(crate) fn new(
        run: &mut Run<'_>,
        t: &'a TableRef,
        targets: &'a [usize],
        output: Option<&'a mut OutputRows<'c>>,
        changes: Option<&'a mut TriggerChanges>,
    ) -> Result<Self, SqlError> {
        let def = &t.def;
        let identity = def.identity_column().map(|(c, _, _)| c);
        let checks = run.checks(def)?;
        let cols = if checks.is_empty() { Vec::new() } else { table_cols(def, &def.name) };
        Ok(Inserter {
            t,
            targets,
            identity,
            explicit_identity: identity.is_some_and(|c| targets.contains(&c)),
            checks,
            cols,
            computed: def.columns.iter().any(|c| c.computed.is_some()),
            rowversion: def.columns.iter().position(|c| c.rowversion),
            referencing: def.foreign_keys.iter().any(|fk| !fk.disabled),
            inserted: Vec::new(),
            n: 0,
            ignored: false,
            output,
            changes,
        })
    }

    /// How many values each source row has.
    pub(crate) fn width(&self) -> usize {
        self.targets.len()
    }

    /// Inserts one source row: each value to the column `targets` names at its position
    /// (`None`: the column's default), every other column its default or identity.
    pub(crate) fn row(
        &mut self,
        run: &mut Run<'_>,
        row: Vec<Option<Value>>,
    ) -> Result<(), SqlError> {
        let t = self.t;
        let def = &t.def;
        let identity = self.identity;
        let mut values = run.insert_values(def, self.targets, row, identity)?;
        if let Some(c) = self.rowversion {
            if !values[c].is_null() {
                return Err(SqlError::new(273, "Cannot insert an explicit value into a timestamp column. Use INSERT with a column list to exclude the timestamp column, or insert a DEFAULT into the timestamp column."));
            }
            values[c] = run.next_rowversion(&t.db)?;
        }
        if let Some(c) = identity.filter(|&c| self.computed && values[c].is_null()) {
            // A computed column may use the identity: take the value now rather than
            // leave it to the engine, which would take it after the row was computed.
            let v = t.db.next_identity(def).map_err(|e| run.s.engine_error(e))?;
            values[c] = scalar::coerce(Value::BigInt(v), def.columns[c].ty, false)?;
            run.compute_columns(def, &mut values)?;
        }
        if self.explicit_identity && identity.is_some_and(|c| values[c].is_null()) {
            return Err(SqlError::new(
                339,
                "DEFAULT or NULL are not allowed as explicit identity values.",
            ));
        }
        run.check_row(def, &self.cols, &self.checks, &values, "INSERT")?;
        run.check_view_option(t, &values)?;
        if !run.insert_unless_ignored(&t.db, def, &mut values, &mut self.ignored)? {
            return Ok(());
        }
        if let Some(c) = identity {
            if let Some(v) = walden_engine::objects::identity_integer(&values[c]) {
                run.note_identity(v);
            }
        }
        if let Some(output) = self.output.as_deref_mut() {
            run.output_row(output, None, Some(&values))?;
        }
        if let Some(changes) = self.changes.as_deref_mut() {
            changes.row(None, Some(&values));
        }
        if self.referencing {
            self.inserted.push(values);
        }
        self.n += 1;
        Ok(())
    }

    /// Checks the inserted rows' foreign keys and reports message 3604 if a row was
    /// ignored: the number of rows inserted.
    pub(crate) fn finish(self, run: &mut Run<'_>) -> Result<u64, SqlError> {
        run.check_references(self.t, &self.inserted, "INSERT")?;
        if self.ignored {
            run.report(duplicate_key_ignored());
        }
        Ok(self.n)
    }
}
