//! The bulk load: `INSERT BULK` names the table, the columns and the options; the rows follow
//! in the client's next message (a TDS Bulk Load message, decoded by the server), which
//! [`Session::bulk_load`] inserts.
//!
//! The rows go through the insert path every INSERT takes (conversion to the column's type,
//! defaults, identity, computed and `rowversion` columns, unique keys, indexes), in one
//! statement: inside the session's transaction if one is open, else in an autocommit
//! transaction of their own, so a bulk load is all or nothing. Each row is logged like any
//! insert's (Walden has no minimally logged operations). The options change what SQL Server's
//! change:
//!
//! * without `CHECK_CONSTRAINTS`, CHECK and FOREIGN KEY constraints are not checked;
//! * without `FIRE_TRIGGERS`, the table's triggers do not fire;
//! * without `KEEP_NULLS`, a NULL takes the column's default (NULL if it has none);
//! * without `KEEP_IDENTITY`, values sent for the identity column are ignored and the column
//!   numbers the rows itself;
//! * `ORDER (...)` naming the clustered key is a promise: a row out of that order is error
//!   4819; any other `ORDER` is ignored, as SQL Server ignores it;
//! * `TABLOCK` holds the table in X for the load; without it the row locks of a large load
//!   escalate to a table lock as any statement's do. Once the load holds the table, rows
//!   ascending past its last key are appended a leaf at a time (`RowAppender`);
//! * `ROWS_PER_BATCH` and `KILOBYTES_PER_BATCH` are hints Walden accepts and needs not.

use std::sync::Arc;

use walden_engine::catalog::TableDef;
use walden_engine::lock::LockMode;
use walden_engine::table::key_text;
use walden_engine::types::{DeclaredType, Len, SqlType, Value};
use walden_engine::{RowAppender, TableHint};

use crate::ast::{BulkOptions, Expr, ExprKind, InsertBulk, TableTarget, TriggerEvent};
use crate::exec::eval::Col;
use crate::exec::execute::query::{
    compare_keys, has_subquery, table_cols, visit_children, TableRef,
};
use crate::exec::scalar::{coerce, declared_conversion_error, fit_declared};
use crate::exec::session::{Frame, Halt, Run, Step, CANCELLED};
use crate::exec::{Counted, Output, Session, SqlError};

/// An `INSERT BULK` waiting for its rows.
#[derive(Debug, Clone)]
pub struct BulkPlan {
    statement: InsertBulk,
}

/// Why a bulk load's row source stopped before its end.
#[derive(Debug)]
pub enum BulkStop {
    /// The client cancelled (an attention): the load is undone without an error message.
    Cancelled,
    /// The rows could not be read (a malformed message): the load is undone with this error.
    Error(SqlError),
}

/// Where the rows of a bulk load come from: the server decodes them from the Bulk Load
/// message as its packets arrive, so a load of any size holds one row at a time.
pub trait BulkRows {
    /// Puts the next row into `row` (empty when called), one value per `INSERT BULK` column
    /// in order; `false` after the last. The load hands the same vector back for every row,
    /// so that a row costs no allocation of its own.
    fn next_row(&mut self, row: &mut Vec<Value>) -> Result<bool, BulkStop>;

    /// The messages about rows the source rejected since the last call (`BULK INSERT`'s
    /// bad rows, which `MAXERRORS` lets it skip), for the client, in order.
    fn take_messages(&mut self) -> Vec<SqlError> {
        Vec::new()
    }
}

/// How many rows are inserted between two checks of their foreign keys: the check is per
/// group rather than per row (one lookup of many keys), and the group bounds the memory.
const FOREIGN_KEY_GROUP: usize = 1000;

impl Session {
    /// Whether an `INSERT BULK` is waiting for its rows (the last batch ended with one).
    pub fn bulk_pending(&self) -> bool {
        self.pending_bulk.is_some()
    }

    /// Inserts the rows of the Bulk Load message that follows an `INSERT BULK`, reporting
    /// the outcome to `out`: a count of the rows inserted, or an error after which nothing
    /// of the load is left. Error 4022 if no `INSERT BULK` came before.
    pub fn bulk_load(&mut self, rows: &mut dyn BulkRows, out: &mut dyn Output) {
        let Some(plan) = self.pending_bulk.take() else {
            out.message(&SqlError::new(
                4022,
                "Bulk load data was expected but not sent. The batch will be terminated.",
            ));
            return;
        };
        let mut run = Run::new(self, out);
        run.s.frames.push(Frame::default());
        // Inside a user transaction a failed load is undone alone, as a failed statement is.
        let mark = run
            .s
            .tx
            .as_ref()
            .filter(|_| run.s.trancount > 0)
            .map(walden_engine::Transaction::undo_mark);
        match run.bulk_rows(&plan.statement, rows) {
            Ok(n) => {
                run.finish_autocommit(true);
                run.done(Counted::Insert, n);
                run.out.statement_end();
            }
            Err(halt) => {
                run.finish_autocommit(false);
                if let Err(undo) = run.undo_statement(mark) {
                    run.report(undo);
                }
                if run.s.opts.xact_abort && run.s.trancount > 0 {
                    run.rollback_all();
                }
                match halt {
                    Halt::Error(e) if e.number == CANCELLED => {}
                    Halt::Error(e) => {
                        if e.number == 1205 && run.s.trancount > 0 {
                            run.rollback_all();
                        }
                        run.report(e);
                    }
                    Halt::Aborted | Halt::Cancelled | Halt::ScopeEnded => {}
                }
            }
        }
        while !run.s.frames.is_empty() {
            run.pop_frame();
        }
        run.finish_autocommit(false);
    }
}

impl Run<'_> {
    /// `INSERT BULK`: checks the table, its columns and the declared types now (errors 208,
    /// 207, 271, 2715), so that a client learns of them before it sends any row, and keeps
    /// the statement for the Bulk Load message.
    pub(crate) fn insert_bulk(&mut self, statement: &InsertBulk) -> Result<(), SqlError> {
        let t = self.bulk_target(statement)?;
        self.bulk_columns(&t, statement)?;
        for c in &statement.columns {
            self.resolve_type(&c.ty)?;
        }
        for (c, _) in &statement.options.order {
            t.def.column(&c.value).ok_or_else(|| SqlError::invalid_column(&c.value))?;
        }
        self.s.pending_bulk = Some(BulkPlan { statement: statement.clone() });
        Ok(())
    }

    fn bulk_target(&mut self, statement: &InsertBulk) -> Result<TableRef, SqlError> {
        self.target(&TableTarget::Table(statement.table.clone()), &[])
    }

    /// The table column each `INSERT BULK` column goes to.
    fn bulk_columns(&self, t: &TableRef, statement: &InsertBulk) -> Result<Vec<usize>, SqlError> {
        statement
            .columns
            .iter()
            .map(|c| {
                let at = t.def.column(&c.name.value).ok_or_else(|| SqlError::invalid_column(&c.name.value))?;
                if t.def.columns[at].computed.is_some() {
                    return Err(SqlError::new(
                        271,
                        format!("The column \"{}\" cannot be modified because it is either a computed column or is the result of a UNION operator.", t.def.columns[at].name),
                    ));
                }
                Ok(at)
            })
            .collect()
    }

    /// Inserts every row of `rows` into the table of `statement`; the number inserted.
    fn bulk_rows(&mut self, statement: &InsertBulk, rows: &mut dyn BulkRows) -> Step<u64> {
        // The table is looked up again: it may have changed since INSERT BULK.
        let t = self.bulk_target(statement)?;
        let targets = self.bulk_columns(&t, statement)?;
        let order: Vec<(usize, bool)> = statement
            .options
            .order
            .iter()
            .filter_map(|(c, desc)| Some((targets_position(statement, &c.value)?, *desc)))
            .collect();
        self.load_rows(&t, &targets, &statement.options, &order, rows)
    }

    /// Inserts every row of `rows` into `t`: each row has a value per column of `targets`
    /// (positions in the table), `order` the positions in the row of the `ORDER` option's
    /// columns. The number inserted. `BULK INSERT` loads each of its batches this way.
    ///
    /// `TABLOCK` holds the table in X for the load (SQL Server's bulk update lock, which
    /// Walden does not have, also keeps every reader and writer out), so that its rows are
    /// appended without row locks from the first.
    ///
    /// `ORDER` is checked only when it names the clustered index's key, column for column
    /// and ascending as Walden's keys are; otherwise SQL Server ignores it ("If there is no
    /// clustered index on the table or the data is sorted in a different order, the ORDER
    /// hint is ignored"), and so does the load.
    pub(crate) fn load_rows(
        &mut self,
        t: &TableRef,
        targets: &[usize],
        options: &BulkOptions,
        order: &[(usize, bool)],
        rows: &mut dyn BulkRows,
    ) -> Step<u64> {
        let key = t.def.primary().map_or(&[][..], |p| p.columns.as_slice());
        let order = if !key.is_empty()
            && order.len() == key.len()
            && order.iter().zip(key).all(|(&(p, desc), &k)| !desc && targets.get(p) == Some(&k))
        {
            order
        } else {
            &[]
        };
        if !options.tablock {
            return self.load_rows_locked(t, targets, options, order, rows);
        }
        let mark = self.tx().table_hints_mark();
        let hint = TableHint { table: Some(LockMode::X), ..TableHint::default() };
        self.tx().push_table_hint(t.db.id(), t.def.id, hint);
        let loaded = self.load_rows_locked(t, targets, options, order, rows);
        self.tx().truncate_table_hints(mark);
        loaded
    }

    fn load_rows_locked(
        &mut self,
        t: &TableRef,
        targets: &[usize],
        options: &BulkOptions,
        order: &[(usize, bool)],
        rows: &mut dyn BulkRows,
    ) -> Step<u64> {
        let def = Arc::clone(&t.def);
        let identity = def.identity_column().map(|(c, _, _)| c);
        let checks = if options.check_constraints { self.checks(&def)? } else { Vec::new() };
        let cols: Vec<Col> =
            if checks.is_empty() { Vec::new() } else { table_cols(&def, &def.name) };
        let referencing =
            options.check_constraints && def.foreign_keys.iter().any(|fk| !fk.disabled);
        let rowversion = def.columns.iter().position(|c| c.rowversion);
        let computed = def.columns.iter().any(|c| c.computed.is_some());
        let mut changes = if options.fire_triggers {
            self.trigger_changes(t, TriggerEvent::Insert)?
        } else {
            None
        };
        let descending: Vec<bool> = order.iter().map(|&(_, d)| d).collect();
        let mut previous_key: Option<Vec<Value>> = None;
        // The columns' defaults, parsed once for the whole load.
        let defaults = def
            .columns
            .iter()
            .enumerate()
            .map(|(c, col)| match &col.default {
                Some(text) if Some(c) != identity => self.stored_expr(text).map(Some),
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>, SqlError>>()?;
        let db = Arc::clone(&t.db);
        let types: Vec<SqlType> = targets.iter().map(|&c| def.columns[c].ty).collect();
        let declared: Vec<_> = targets.iter().map(|&c| def.columns[c].declared).collect();
        let mut inserted = Vec::new();
        // Reused from row to row: a load allocates per value, not per row.
        let mut row: Vec<Value> = Vec::with_capacity(targets.len());
        let mut values: Vec<Value> = Vec::new();
        let mut given: Vec<bool> = Vec::new();
        let mut n = 0u64;
        let mut ignored = false;
        // Rows appended a leaf at a time while the load holds the table (see `RowAppender`).
        // A run's rows are in no tree until it is flushed: when a default, a computed column
        // or a CHECK constraint calls a user-defined function, which might read the table,
        // the rows before each row are flushed before its values are made.
        let mut appender = RowAppender::new();
        let reads_tables = defaults.iter().flatten().any(|e| may_read_tables(e))
            || checks.iter().any(|(_, e)| may_read_tables(e))
            || self.computed_exprs(&def)?.iter().any(|e| may_read_tables(e));
        loop {
            row.clear();
            let next = rows.next_row(&mut row);
            for m in rows.take_messages() {
                self.report(m);
            }
            match next {
                Ok(true) => {}
                Ok(false) => break,
                Err(BulkStop::Cancelled) => return Err(Halt::Cancelled),
                Err(BulkStop::Error(e)) => return Err(e.into()),
            }
            self.row_interruption_point(usize::try_from(n).unwrap_or(usize::MAX))?;
            if reads_tables {
                self.flush_appender(&db, &def, &mut appender)?;
            }
            if row.len() != targets.len() {
                return Err(SqlError::new(
                    4816,
                    format!(
                        "Invalid column type from bcp client for colid {}.",
                        row.len().min(targets.len()) + 1
                    ),
                )
                .into());
            }
            if !order.is_empty() {
                let key: Vec<Value> = order.iter().map(|&(i, _)| row[i].clone()).collect();
                if let Some(previous) = &previous_key {
                    if compare_keys(previous, &key, &descending)? == std::cmp::Ordering::Greater {
                        return Err(SqlError::new(
                            4819,
                            format!(
                                "Cannot bulk load. The bulk data stream was incorrectly \
                                 specified as sorted or the data violates a uniqueness constraint \
                                 imposed by the target table. Sort order incorrect for the \
                                 following two rows: primary key of first row: {}, primary key \
                                 of second row: {}.",
                                key_text(previous),
                                key_text(&key)
                            ),
                        )
                        .into());
                    }
                }
                previous_key = Some(key);
            }
            values.clear();
            values.resize(def.columns.len(), Value::Null);
            given.clear();
            given.resize(def.columns.len(), false);
            // By index, each value converted where it lies and then swapped into its column:
            // moving values through an iterator's tuples cost more here than converting them.
            for (i, &c) in targets.iter().enumerate() {
                let ignored = Some(c) == identity && !options.keep_identity;
                if ignored || (row[i].is_null() && !options.keep_nulls) {
                    continue;
                }
                given[c] = true;
                fit_column_value(&mut row[i], types[i], declared[i])
                    .map_err(|e| bulk_column_error(e, i))?;
                std::mem::swap(&mut values[c], &mut row[i]);
            }
            // Every other column: its default, else NULL (the identity its next value).
            for (c, default) in defaults.iter().enumerate() {
                if let (false, Some(e)) = (given[c], default) {
                    let v = self.default_value(e)?;
                    values[c] = self.store(&def, c, v)?;
                }
            }
            self.compute_columns(&def, &mut values)?;
            if let Some(c) = rowversion {
                values[c] = self.next_rowversion(&t.db)?;
            }
            if let Some(c) = identity.filter(|&c| computed && values[c].is_null()) {
                // As in INSERT: a computed column may use the identity, so take it now.
                let v = t.db.next_identity(&def).map_err(|e| self.s.engine_error(e))?;
                values[c] = coerce(Value::BigInt(v), def.columns[c].ty, false)?;
                self.compute_columns(&def, &mut values)?;
            }
            self.check_row(&def, &cols, &checks, &values, "BULK INSERT")?;
            if !self.append_unless_ignored(&db, &def, &mut values, &mut appender, &mut ignored)? {
                continue;
            }
            if let Some(c) = identity {
                if let Some(v) = walden_engine::objects::identity_integer(&values[c]) {
                    self.note_identity(v);
                }
            }
            if let Some(changes) = changes.as_mut() {
                changes.row(None, Some(&values));
            }
            if referencing {
                inserted.push(values.clone());
                if inserted.len() >= FOREIGN_KEY_GROUP {
                    // A foreign key may refer to the table itself: its rows must be in it.
                    self.flush_appender(&db, &def, &mut appender)?;
                    self.check_references(t, &inserted, "BULK INSERT")?;
                    inserted.clear();
                }
            }
            n += 1;
        }
        self.flush_appender(&db, &def, &mut appender)?;
        self.check_references(t, &inserted, "BULK INSERT")?;
        if ignored {
            self.report(crate::exec::dml::duplicate_key_ignored());
        }
        if let Some(changes) = changes {
            self.fire_triggers(changes)?;
        }
        Ok(n)
    }
}

impl Run<'_> {
    /// A bulk load's insert of `values` into `def` through `appender`: as
    /// `insert_unless_ignored`, `false` when IGNORE_DUP_KEY dropped the row.
    fn append_unless_ignored(
        &mut self,
        db: &Arc<walden_engine::Database>,
        def: &TableDef,
        values: &mut [Value],
        appender: &mut RowAppender,
        ignored: &mut bool,
    ) -> Result<bool, SqlError> {
        let inserted = self.tx().insert_row_appending(db, def, values, appender).map(|_| ());
        self.unless_ignored(def, inserted, ignored)
    }

    /// Puts the rows `appender` holds into the table.
    fn flush_appender(
        &mut self,
        db: &Arc<walden_engine::Database>,
        def: &TableDef,
        appender: &mut RowAppender,
    ) -> Result<(), SqlError> {
        self.tx().flush_appended(db, def, appender).map_err(|e| self.s.engine_error(e))
    }

    /// The expressions of `def`'s computed columns.
    fn computed_exprs(&mut self, def: &TableDef) -> Result<Vec<Arc<Expr>>, SqlError> {
        def.columns
            .iter()
            .filter_map(|c| c.computed.as_ref())
            .map(|computed| self.stored_expr(&computed.text))
            .collect()
    }
}

/// Whether evaluating `e` might read a table: it holds a subquery or calls a user-defined
/// function.
fn may_read_tables(e: &Expr) -> bool {
    has_subquery(e) || calls_user_function(e)
}

/// Whether `e` calls a user-defined function (a schema-qualified name: the built-ins, which
/// read no table, have none).
fn calls_user_function(e: &Expr) -> bool {
    if matches!(&e.kind, ExprKind::Function(f) if f.name.schema.is_some()) {
        return true;
    }
    let mut found = false;
    visit_children(e, &mut |c| found |= calls_user_function(c));
    found
}

/// A conversion error of the load's column `i` (from 0) as SQL Server's bulk load reports
/// it: a value too long for its column names the column by its place in the load.
fn bulk_column_error(e: SqlError, i: usize) -> SqlError {
    match e.number {
        2628 | 8152 => SqlError::new(
            4815,
            format!("Received an invalid column length from the bcp client for colid {}.", i + 1),
        ),
        _ => e,
    }
}

/// `v`, in place, as it is stored in a column of type `ty`: what [`coerce`] makes of it,
/// with SQL Server's errors. A bulk load's client sends most columns in their own type (bcp and the drivers'
/// bulk APIs send the table's column types), and such a value that already fits its column
/// is kept or rounded here without the general conversion's dispatch, which is a sizeable
/// part of a load's time per row. Everything else, and every error, is `coerce`'s. A column
/// declared SMALLDATETIME or SMALLMONEY (`declared`) then gets its value fitted to that type
/// as an INSERT's does (rounded to the minute, 242/298/8115 out of range).
fn fit_column_value(
    v: &mut Value,
    ty: SqlType,
    declared: Option<DeclaredType>,
) -> Result<(), SqlError> {
    if let Some(declared) = declared {
        let source = v.kind_name();
        fit_column_value(v, ty, None).map_err(|e| declared_conversion_error(declared, e))?;
        *v = fit_declared(declared, std::mem::replace(v, Value::Null), source)?;
        return Ok(());
    }
    let kept = match (&mut *v, ty) {
        (Value::Int(_), SqlType::Int)
        | (Value::BigInt(_), SqlType::BigInt)
        | (Value::SmallInt(_), SqlType::SmallInt)
        | (Value::TinyInt(_), SqlType::TinyInt)
        | (Value::Bit(_), SqlType::Bit)
        | (Value::Float(_), SqlType::Float)
        | (Value::Real(_), SqlType::Real)
        | (Value::Money(_), SqlType::Money)
        | (Value::Date(_), SqlType::Date)
        | (Value::Guid(_), SqlType::UniqueIdentifier)
        | (Value::NStr(_), SqlType::NVarChar(Len::Max))
        | (Value::Str(_), SqlType::VarChar(Len::Max)) => true,
        // A string's UTF-8 bytes are at least as many as its characters and its UTF-16
        // units, so one no longer in bytes than the column fits whichever it counts.
        (Value::NStr(s), SqlType::NVarChar(Len::N(n)))
        | (Value::Str(s), SqlType::VarChar(Len::N(n))) => s.len() <= usize::from(n),
        // Of the column's scale already: only its precision is to check (else `coerce`
        // rescales, rounding under NUMERIC_ROUNDABORT's rules).
        (Value::Decimal(d), SqlType::Decimal { precision, scale }) if d.scale() == scale => {
            match d.to_type(precision, scale) {
                Some(fitted) => {
                    *d = fitted;
                    true
                }
                None => false,
            }
        }
        (Value::DateTime2(d), SqlType::DateTime2(scale)) => match d.round_to_scale(scale) {
            Some(rounded) => {
                *d = rounded;
                true
            }
            None => false,
        },
        _ => false,
    };
    if !kept {
        *v = coerce(std::mem::replace(v, Value::Null), ty, false)?;
    }
    Ok(())
}

/// The position in the `INSERT BULK` list of the column named `name`.
fn targets_position(statement: &InsertBulk, name: &str) -> Option<usize> {
    statement.columns.iter().position(|c| c.name.value.eq_ignore_ascii_case(name))
}
