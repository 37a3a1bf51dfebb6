//! Statements that return or change rows, a file per statement:
//!
//! * `select`: SELECT as a statement (sent, assigned to variables, or stored by INTO);
//! * `insert`, `update`, `delete` and `merge` (`insert_stream`: an INSERT's source query
//!   streamed into its table);
//! * `cte` and `output`: the WITH and OUTPUT clauses of a change;
//! * `foreign_key`: FOREIGN KEY constraints, checked once per statement;
//! * `bulk`, `bulk_insert` and `data_file`: the bulk load of the TDS protocol, and
//!   `BULK INSERT` and `OPENROWSET(BULK ...)` over the files they read.
//!
//! This file has what they share: a change's target, the rows it qualifies, and a row's
//! values as stored (computed columns, conversion to the column's type, defaults, CHECK
//! constraints).
//!
//! A change is computed first and applied after: UPDATE and DELETE collect the rows they
//! qualify (through a key seek when the WHERE clause fixes the key) and then change them one
//! by one through the engine, which logs each change and maintains every index. The row
//! locators travel in a hidden column of the source rows (see [`ROWID`]).

pub mod bulk;
pub(super) mod bulk_insert;
pub(super) mod cte;
pub(super) mod data_file;
mod delete;
pub(super) mod foreign_key;
mod insert;
mod insert_stream;
pub(super) mod merge;
pub(super) mod output;
mod select;
mod update;

use std::collections::HashSet;
use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, TableDef};
use walden_engine::types::{SqlType, Value};
use walden_engine::EngineError;

use crate::ast::{Expr, Ident, ObjectName, QueryBody, StatementKind, TableSource, TableTarget};
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::{
    bound, outer_joins_pulled_up, table_cols, table_read_cols, Relation, Rows, TableRef, ROWID,
};
use crate::exec::execute::row_queue::{QueuedRows, RowQueue};
use crate::exec::plan::access::RowSink;
use crate::exec::plan::join::FromSink;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;
use crate::parse_batch;

pub(crate) use insert::{
    column_count_mismatch, duplicate_key_ignored, insert_targets, values_count_mismatch,
};

/// The rows an UPDATE or DELETE qualifies, and where the target's row locator is in them.
pub(crate) struct Qualified {
    pub(crate) cols: Vec<Col>,
    pub(crate) rows: QueuedRows,
    pub(crate) rowid: usize,
}

/// The sink an UPDATE's or DELETE's search gives its rows to: each queued (in memory within
/// a grant, in a spill file past it), a row of the target joined to several others once.
struct Qualifying<'q> {
    /// The target's name in the statement.
    qual: &'q str,
    /// The search joins: a target row may come more than once.
    once: bool,
    cols: Vec<Col>,
    /// The position of the target's row locator among `cols`.
    rowid: usize,
    /// The locators of the target rows queued, where `once`.
    seen: HashSet<Vec<u8>>,
    queue: RowQueue,
}

impl RowSink for Qualifying<'_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        // A row joined to several others is changed once, as in SQL Server.
        if let (true, Value::Binary(id)) = (self.once, &row[self.rowid]) {
            if !self.seen.insert(id.clone()) {
                return Ok(true);
            }
        }
        self.queue.push(run, row)?;
        Ok(true)
    }
}

impl FromSink for Qualifying<'_> {
    fn start(&mut self, _: &mut Run<'_>, cols: &[Col]) -> Result<(), SqlError> {
        let qual = self.qual;
        self.rowid = cols
            .iter()
            .position(|c| {
                c.hidden
                    && c.name == ROWID
                    && c.qual.as_deref().is_some_and(|q| q.eq_ignore_ascii_case(qual))
            })
            .ok_or_else(|| SqlError::invalid_object(qual))?;
        self.cols = cols.to_vec();
        Ok(())
    }
}

/// Parses a stored expression (a column's DEFAULT, a CHECK constraint) again. Both are
/// parsed as a WHERE clause: the parser reads values and conditions alike.
fn parse_stored(text: &str) -> Result<Expr, SqlError> {
    let batch = parse_batch(&format!("SELECT 1 WHERE {text}")).map_err(SqlError::from)?;
    match batch.statements.into_iter().next().map(|s| s.kind) {
        Some(StatementKind::Select(s)) => match s.query.body {
            QueryBody::Select(sel) => {
                sel.where_clause.ok_or_else(|| SqlError::new(50000, "empty stored expression"))
            }
            _ => Err(SqlError::new(50000, "bad stored expression")),
        },
        _ => Err(SqlError::new(50000, "bad stored expression")),
    }
}

impl Run<'_> {
    /// The table a DML statement changes (MERGE and OUTPUT INTO: no view).
    pub(crate) fn target(
        &mut self,
        target: &TableTarget,
        from: &[TableSource],
    ) -> Result<TableRef, SqlError> {
        match self.target_relation(target, from)? {
            Relation::Table(t) => Ok(t),
            Relation::View(_, view) => Err(SqlError::new(
                50000,
                format!("Walden changes rows through a view with INSERT, UPDATE and DELETE only: '{}' is a view; change the table it reads instead.", view.name),
            )),
        }
    }

    /// The table or view a DML statement changes.
    pub(crate) fn target_relation(
        &mut self,
        target: &TableTarget,
        from: &[TableSource],
    ) -> Result<Relation, SqlError> {
        match target {
            TableTarget::Table(name) => {
                self.refuse_pseudo_table_target(name)?;
                // UPDATE t ... FROM dbo.T AS t: the target may be an alias in FROM.
                // UPDATE t ... FROM @t AS t: likewise a table variable's alias.
                if name.schema.is_none() && name.database.is_none() {
                    match aliased(from, &name.name.value) {
                        Some(TableSource::Variable { name: v, .. }) => {
                            self.refuse_readonly_table(v)?;
                            return self
                                .resolve_table_variable(v, &name.name.value)
                                .map(Relation::Table);
                        }
                        Some(TableSource::Table { name: real, .. }) => {
                            self.refuse_pseudo_table_target(real)?;
                            return self.resolve_table(real, &name.name.value).map(Relation::Table);
                        }
                        _ => {}
                    }
                }
                // UPDATE t ... FROM t AS a: the target named by its table, which FROM names
                // once and only under an alias, is that reference (SQL Server's rule); named
                // twice under aliases it is 8154.
                let mut instances = Vec::new();
                same_table_references(from, name, &mut instances);
                let aliased: Option<Vec<(&ObjectName, &str)>> =
                    instances.into_iter().map(|(n, a)| a.map(|a| (n, a))).collect();
                match aliased.as_deref().unwrap_or_default() {
                    [] => {}
                    [(real, alias)] => {
                        self.refuse_pseudo_table_target(real)?;
                        return self.resolve_table(real, alias).map(Relation::Table);
                    }
                    _ => {
                        return Err(SqlError::new(
                            8154,
                            format!("The table '{}' is ambiguous.", name.name.value),
                        ))
                    }
                }
                self.resolve_relation(name, &name.name.value)
            }
            TableTarget::Variable(v) => {
                self.refuse_readonly_table(v)?;
                self.resolve_table_variable(v, v).map(Relation::Table)
            }
        }
    }

    /// The rows an UPDATE or DELETE qualifies: each joined row, the target's values and its
    /// row locator.
    fn qualifying_rows(
        &mut self,
        t: &TableRef,
        from: &[TableSource],
        where_clause: Option<&Expr>,
        limit: usize,
    ) -> Result<Qualified, SqlError> {
        if from.is_empty() {
            // Bound before any row is read, as SQL Server binds it: an unknown name is an
            // error also when no row would reach it. (With a FROM clause, the join binds.)
            // The row locator is among the names: WHERE CURRENT OF is rewritten into a test
            // of it.
            let cols = table_read_cols(&t.def, &t.qual);
            bound(&[where_clause], &Env { cols: &cols, row: &[], outer: None, computed: &[] })?;
        }
        // The search for the rows to change: under SERIALIZABLE its seeks of the target take
        // update locks (RangeS-U, U), as SQL Server's do.
        self.tx().set_update_target(Some((t.db.id(), t.def.id)));
        let mut found = Qualifying {
            qual: &t.qual,
            once: !from.is_empty(),
            cols: Vec::new(),
            rowid: 0,
            seen: HashSet::new(),
            queue: RowQueue::default(),
        };
        let read = if from.is_empty() && limit < usize::MAX {
            // TOP (n) of one table: the read checks the WHERE and stops at the n-th row, so
            // it locks no more rows than it changes (a queue's `DELETE TOP (1) ... READPAST`).
            self.table_rows_upto(t, where_clause, Some(limit)).and_then(|Rows { cols, rows }| {
                found.start(self, &cols)?;
                rows.into_iter().try_for_each(|row| found.push(self, row).map(|_| ()))
            })
        } else if from.is_empty() {
            self.table_rows_into(t, where_clause, &mut found)
        } else {
            // A LEFT JOIN written before inner joins is joined after them, as in a SELECT
            // (`inline/pull_up.rs`), so that its pairs stream into the queue.
            let moved = outer_joins_pulled_up(from).map(|moved| vec![moved]);
            let from = moved.as_deref().unwrap_or(from);
            self.plan_from_into(from, where_clause, None, None, &mut found)
        };
        self.tx().set_update_target(None);
        read?;
        let Qualifying { cols, rowid, queue, .. } = found;
        Ok(Qualified { cols, rows: queue.finish()?, rowid })
    }

    /// A row the scan qualified for UPDATE or DELETE, brought up to date under the exclusive
    /// row lock: its target-table values (the columns just before `rowid`) are re-read, and
    /// if another transaction changed them since the scan, `recheck` (see [`recheck_clause`])
    /// is checked again: the row may no longer qualify. `None`: the row is gone or no longer
    /// qualifies.
    pub(crate) fn current_row(
        &mut self,
        t: &TableRef,
        cols: &[Col],
        mut row: Vec<Value>,
        rowid: usize,
        recheck: Option<&Expr>,
    ) -> Result<Option<Vec<Value>>, SqlError> {
        let start = rowid - t.def.columns.len();
        // Invariant relied on by UPDATE: a row returned with a row id was read under this
        // transaction's X lock, and `row[start..rowid]` holds its values as read.
        let Value::Binary(id) = &row[rowid] else { return Ok(Some(row)) };
        let db = Arc::clone(&t.db);
        let id = id.clone();
        let Some(fresh) =
            self.tx().read_row_for_update(&db, &t.def, &id).map_err(|e| self.s.engine_error(e))?
        else {
            return Ok(None);
        };
        if fresh[..] == row[start..rowid] {
            return Ok(Some(row));
        }
        row.splice(start..rowid, fresh);
        if let Some(w) = recheck {
            if self.predicate(w, &Env::new(cols, &row, None))? != Some(true) {
                return Ok(None);
            }
        }
        Ok(Some(row))
    }

    /// How many rows a statement may change: its TOP, and `SET ROWCOUNT`'s limit.
    pub(crate) fn top_limit(&mut self, top: Option<&crate::ast::Top>) -> Result<usize, SqlError> {
        let top = top.map_or(Ok(usize::MAX), |t| self.count_value(&t.quantity))?;
        Ok(self.rowcount_limit().min(top))
    }

    /// `SET ROWCOUNT`'s limit, `usize::MAX` when it is off.
    pub(crate) fn rowcount_limit(&self) -> usize {
        match self.s.opts.rowcount {
            0 => usize::MAX,
            n => n,
        }
    }

    /// Calls `visit` with every row of `def` (its row id and values), read under the
    /// session's isolation, in clustered-key order, with the client's cancel honoured as a
    /// long scan honours it.
    pub(crate) fn for_each_row(
        &mut self,
        db: &Arc<walden_engine::Database>,
        def: &TableDef,
        mut visit: impl FnMut(&mut Self, Vec<u8>, Vec<Value>) -> Result<(), SqlError>,
    ) -> Result<(), SqlError> {
        let mut cursor = self
            .tx()
            .scan_table(db, def, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
            .map_err(|e| self.s.engine_error(e))?;
        let mut n = 0;
        while let Some((id, values)) =
            cursor.next_row(self.tx()).map_err(|e| self.s.engine_error(e))?
        {
            self.row_interruption_point(n)?;
            n += 1;
            visit(self, id, values)?;
        }
        Ok(())
    }

    /// The next row version of `db`, as a `rowversion` column stores it.
    pub(crate) fn next_rowversion(
        &mut self,
        db: &walden_engine::Database,
    ) -> Result<Value, SqlError> {
        let v = db.next_rowversion().map_err(|e| self.s.engine_error(e))?;
        Ok(crate::exec::eval::rowversion_bytes(v))
    }

    /// Gives an updated row of `t` its new row version, if the table has a `rowversion`
    /// column.
    pub(crate) fn bump_rowversion(
        &mut self,
        t: &TableRef,
        values: &mut [Value],
    ) -> Result<(), SqlError> {
        if let Some(c) = t.def.columns.iter().position(|c| c.rowversion) {
            values[c] = self.next_rowversion(&t.db)?;
        }
        Ok(())
    }

    /// Sets the computed columns of `values` (one per column of `def`) from the others, as
    /// every insert and update does before it stores the row.
    pub(crate) fn compute_columns(
        &mut self,
        def: &TableDef,
        values: &mut [Value],
    ) -> Result<(), SqlError> {
        if def.columns.iter().all(|c| c.computed.is_none()) {
            return Ok(());
        }
        let cols = table_cols(def, &def.name);
        for c in 0..def.columns.len() {
            let Some(computed) = &def.columns[c].computed else { continue };
            let e = self.stored_expr(&computed.text)?;
            let v = self.eval(&e, &Env::new(&cols, values, None))?;
            values[c] = self.store(def, c, v)?;
        }
        Ok(())
    }

    /// A value converted for column `c`, with SQL Server's truncation message; under
    /// `SET ANSI_WARNINGS OFF` a string too long is cut to the column silently, as there.
    /// A column declared SMALLDATETIME or SMALLMONEY gets a value of that type: rounded to
    /// the minute, or refused outside its range (242, 8115) as SQL Server's conversion does.
    pub(crate) fn store(&mut self, def: &TableDef, c: usize, v: Value) -> Result<Value, SqlError> {
        let Some(declared) = def.columns[c].declared else {
            return self.store_as_held(def, c, v);
        };
        let source = v.kind_name();
        let held = self
            .store_as_held(def, c, v)
            .map_err(|e| scalar::declared_conversion_error(declared, e))?;
        scalar::fit_declared(declared, held, source)
    }

    /// [`Self::store`] into the type that holds the column's values.
    fn store_as_held(&mut self, def: &TableDef, c: usize, v: Value) -> Result<Value, SqlError> {
        let col = &def.columns[c];
        match scalar::coerce(v.clone(), col.ty, false) {
            Ok(v) => Ok(v),
            Err(e)
                if (e.number == 8152 || e.number == 2628)
                    && !self.s.opts.semantics.ansi_warnings =>
            {
                scalar::coerce(v, col.ty, true)
            }
            Err(e) if e.number == 8152 || e.number == 2628 => {
                // SQL Server shows the value as it would have been stored, cut to the column.
                let text = scalar::to_text(&v);
                let limit = match col.ty {
                    SqlType::Char(n) | SqlType::NChar(n) | SqlType::Binary(n) => usize::from(n),
                    SqlType::VarChar(walden_engine::types::Len::N(n))
                    | SqlType::NVarChar(walden_engine::types::Len::N(n))
                    | SqlType::VarBinary(walden_engine::types::Len::N(n)) => usize::from(n),
                    _ => text.len(),
                };
                let shown: String = text.chars().take(limit).collect();
                Err(SqlError::new(
                    2628,
                    format!(
                        "String or binary data would be truncated in table '{}.{}.{}', column '{}'. Truncated value: '{}'.",
                        self.s.db.name(),
                        def.schema,
                        def.name,
                        col.name,
                        shown
                    ),
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// A stored expression, parsed once per session (a WHILE loop of INSERTs would otherwise
    /// parse the table's defaults and checks at every row).
    pub(crate) fn stored_expr(&mut self, text: &str) -> Result<Arc<Expr>, SqlError> {
        if let Some(e) = self.s.stored_exprs.get(text) {
            return Ok(Arc::clone(e));
        }
        let e = Arc::new(parse_stored(text)?);
        self.s.stored_exprs.insert(text.to_string(), Arc::clone(&e));
        Ok(e)
    }

    /// The value of a column's stored DEFAULT expression `e` (the only place
    /// NEWSEQUENTIALID() may run).
    pub(crate) fn default_value(&mut self, e: &Expr) -> Result<Value, SqlError> {
        let outer = std::mem::replace(&mut self.in_default, true);
        let v = self.value(e);
        self.in_default = outer;
        v
    }

    pub(crate) fn checks(&mut self, def: &TableDef) -> Result<Vec<(String, Arc<Expr>)>, SqlError> {
        def.checks.iter().map(|c| Ok((c.name.clone(), self.stored_expr(&c.text)?))).collect()
    }

    /// Error 547 when a CHECK constraint is false for the row (UNKNOWN passes).
    pub(crate) fn check_row(
        &mut self,
        def: &TableDef,
        cols: &[Col],
        checks: &[(String, Arc<Expr>)],
        values: &[Value],
        verb: &str,
    ) -> Result<(), SqlError> {
        for (name, e) in checks {
            if self.predicate(e, &Env::new(cols, values, None))? == Some(false) {
                return Err(SqlError::new(
                    547,
                    format!(
                        "The {verb} statement conflicted with the CHECK constraint \"{name}\". The conflict occurred in database \"{}\", table \"{}.{}\".",
                        self.s.db.name(),
                        def.schema,
                        def.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Error 550 unless a row changed through a view `WITH CHECK OPTION` is still one of
    /// the view's rows.
    fn check_view_option(&mut self, t: &TableRef, values: &[Value]) -> Result<(), SqlError> {
        let Some(w) = &t.view_check else { return Ok(()) };
        let cols = table_cols(&t.def, &t.qual);
        if self.predicate(w, &Env::new(&cols, values, None))? == Some(true) {
            return Ok(());
        }
        Err(SqlError::new(
            550,
            "The attempted insert or update failed because the target view either specifies WITH CHECK OPTION or spans a view that specifies WITH CHECK OPTION and one or more rows resulting from the operation did not qualify under the CHECK OPTION constraint.",
        ))
    }

    /// Creates a table (a `#temp` one in tempdb) in the running statement's transaction.
    pub(crate) fn create_table_def(
        &mut self,
        name: &ObjectName,
        columns: Vec<ColumnDef>,
        checks: Vec<walden_engine::catalog::CheckDef>,
        indexes: &[walden_engine::objects::IndexSpec],
    ) -> Result<TableRef, SqlError> {
        let user = name.name.value.clone();
        let temp = user.starts_with('#');
        let (db, stored_name) = if temp {
            let key = user.to_ascii_lowercase();
            if let Some(outer) = self.s.temp_tables.get(&key).cloned() {
                // A procedure may create a temporary table of a name its caller's holds: its
                // own hides the caller's until it returns, as in SQL Server. Twice in one
                // scope is 2714.
                let frame = self.s.frames.last();
                let in_procedure = self.s.frames.len() > 1
                    && frame.is_some_and(|f| {
                        f.procedure.is_some()
                            && !f.temp_created.contains(&key)
                            && !f.hidden_tables.iter().any(|(n, _, _)| *n == key)
                    });
                if !in_procedure {
                    return Err(EngineError::ObjectExists(user).into());
                }
                self.frame().hidden_tables.push((key, Some(outer), false));
            }
            (Arc::clone(self.s.instance.tempdb()), self.s.temp_internal_name(&user))
        } else {
            (self.database_of(name.database.as_ref())?, user.clone())
        };
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str()).to_string();
        if user.len() > 116 && temp {
            return Err(SqlError::new(193, format!("The object or column name starting with '{user}' is too long. The maximum length is 116 characters.")));
        }
        let def = TableDef {
            id: 0,
            schema,
            name: stored_name.clone(),
            columns,
            indexes: Vec::new(),
            checks,
            foreign_keys: Vec::new(),
            identity_high: 0,
            created_micros: 0,
        };
        let def = self.tx().create_table(&db, def, indexes).map_err(|e| self.s.engine_error(e))?;
        if temp {
            self.s.temp_tables.insert(user.to_ascii_lowercase(), stored_name);
            self.note_temp_created(&user);
        }
        Ok(TableRef { db, def: Arc::new(def), qual: user, view_check: None, wanted: None })
    }
}

/// The WHERE clause an UPDATE or DELETE checks again on a row another transaction changed
/// since the scan: a single-table statement's. With a FROM clause the other tables' rows are
/// not re-read, so the clause is not checked again.
fn recheck_clause<'e>(from: &[TableSource], where_clause: Option<&'e Expr>) -> Option<&'e Expr> {
    where_clause.filter(|_| from.is_empty())
}

/// The table an alias in a FROM clause stands for.
pub(crate) fn find_alias<'a>(from: &'a [TableSource], alias: &str) -> Option<&'a ObjectName> {
    match aliased(from, alias)? {
        TableSource::Table { name, .. } => Some(name),
        _ => None,
    }
}

impl Run<'_> {
    /// An UPDATE's or DELETE's error 4104 for a column of its target or of a FROM source: 207
    /// (see [`crate::exec::eval::rebind_unknown_column`]).
    fn rebind_in_statement(
        &self,
        err: SqlError,
        target: &TableTarget,
        from: &[TableSource],
    ) -> SqlError {
        let err = self.rebind_unknown_column(err, from);
        match target {
            TableTarget::Table(name) if err.number == 4104 => {
                let source =
                    TableSource::Table { name: name.clone(), alias: None, hints: Vec::new() };
                self.rebind_unknown_column(err, std::slice::from_ref(&source))
            }
            _ => err,
        }
    }
}

/// The table or table variable a FROM clause (through its joins) names with `alias`.
fn aliased<'a>(from: &'a [TableSource], alias: &str) -> Option<&'a TableSource> {
    from.iter().find_map(|s| match s {
        TableSource::Table { alias: Some(a), .. }
        | TableSource::Variable { alias: Some(a), .. }
            if a.value.eq_ignore_ascii_case(alias) =>
        {
            Some(s)
        }
        TableSource::Join(j) => aliased(std::slice::from_ref(&j.left), alias)
            .or_else(|| aliased(std::slice::from_ref(&j.right), alias)),
        _ => None,
    })
}

/// The FROM an UPDATE or DELETE reads: its own, and, when that does not name the target
/// table (`UPDATE t SET ... FROM (SELECT ...) AS y WHERE t.k = y.k`), the target first, as
/// SQL Server adds it: joined to the others by the WHERE clause.
fn with_implicit_target(target: &TableTarget, from: &[TableSource]) -> Vec<TableSource> {
    let mut sources = from.to_vec();
    if let TableTarget::Table(name) = target {
        let unqualified = name.schema.is_none() && name.database.is_none();
        let mut references = Vec::new();
        same_table_references(from, name, &mut references);
        let named =
            (unqualified && aliased(from, &name.name.value).is_some()) || !references.is_empty();
        if !from.is_empty() && !named {
            let implicit =
                TableSource::Table { name: name.clone(), alias: None, hints: Vec::new() };
            sources.insert(0, implicit);
        }
    }
    sources
}

/// The references in `from` (joins included) to the table `target` names: each as its name
/// and alias. A part the target leaves out matches any.
fn same_table_references<'a>(
    from: &'a [TableSource],
    target: &ObjectName,
    found: &mut Vec<(&'a ObjectName, Option<&'a str>)>,
) {
    let part = |a: Option<&Ident>, b: Option<&Ident>| match (a, b) {
        (Some(a), Some(b)) => a.value.eq_ignore_ascii_case(&b.value),
        _ => true,
    };
    for s in from {
        match s {
            TableSource::Table { name, alias, .. }
                if name.name.value.eq_ignore_ascii_case(&target.name.value)
                    && part(name.schema.as_ref(), target.schema.as_ref())
                    && part(name.database.as_ref(), target.database.as_ref()) =>
            {
                found.push((name, alias.as_ref().map(|a| a.value.as_str())));
            }
            TableSource::Join(j) => {
                same_table_references(std::slice::from_ref(&j.left), target, found);
                same_table_references(std::slice::from_ref(&j.right), target, found);
            }
            _ => {}
        }
    }
}

/// Error 213: the values of an INSERT without a column list do not fit the table.
/// Walden hands an INSTEAD OF trigger the rows a statement would change, and has no OUTPUT
/// for them.
fn no_output_with_instead_of(output: bool) -> Result<(), SqlError> {
    if output {
        return Err(SqlError::new(
            50000,
            "Walden does not support OUTPUT on a statement that an INSTEAD OF trigger replaces.",
        ));
    }
    Ok(())
}

/// Error 271 if column `c` of `def` is computed, 8102 if it is an identity column: SET may
/// change neither.
pub(crate) fn assignable(def: &TableDef, c: usize) -> Result<(), SqlError> {
    if def.columns[c].computed.is_some() {
        return Err(not_modifiable(&def.columns[c].name));
    }
    if def.columns[c].rowversion {
        return Err(SqlError::new(272, "Cannot update a timestamp column."));
    }
    match def.columns[c].identity {
        Some(_) => Err(SqlError::new(
            8102,
            format!("Cannot update identity column '{}'.", def.columns[c].name),
        )),
        None => Ok(()),
    }
}

/// Error 271: a statement gave a computed column a value.
fn not_modifiable(column: &str) -> SqlError {
    SqlError::new(
        271,
        format!("The column \"{column}\" cannot be modified because it is either a computed column or is the result of a UNION operator."),
    )
}
