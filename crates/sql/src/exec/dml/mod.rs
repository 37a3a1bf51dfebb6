//! Statements that return or change rows: SELECT (with INTO), INSERT, UPDATE, DELETE.
//!
//! A change is computed first and applied after: UPDATE and DELETE collect the rows they
//! qualify (through a key seek when the WHERE clause fixes the key) and then change them one
//! by one through the engine, which logs each change and maintains every index. The row
//! locators travel in a hidden column of the source rows (see [`ROWID`]).

pub mod bulk;
pub(super) mod bulk_insert;
pub(super) mod cte;
pub(super) mod data_file;
pub(super) mod foreign_key;
pub(super) mod merge;
pub(super) mod output;

use std::collections::HashSet;
use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, TableDef};
use walden_engine::types::{SqlType, Value};
use walden_engine::EngineError;

use crate::ast::{
    AssignmentTarget, Delete, Expr, ExprKind, Ident, Insert, InsertSource, ObjectName, QueryBody,
    Select, SelectItem, SelectStatement, StatementKind, TableSource, TableTarget, TriggerEvent,
    Update,
};
use crate::exec::dml::cte::DmlTarget;
use crate::exec::dml::output::{Changed, OutputRows};
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::{table_cols, Relation, Rows, TableRef, ROWID};
use crate::exec::module::trigger::TriggerChanges;
use crate::exec::scalar;
use crate::exec::session::{assign_binary, Run, Step};
use crate::exec::{ColumnInfo, Counted, SqlError};
use crate::parse_batch;

/// The rows an UPDATE or DELETE qualifies, and where the target's row locator is in them.
pub(crate) struct Qualified {
    pub(crate) cols: Vec<Col>,
    pub(crate) rows: Vec<Vec<Value>>,
    pub(crate) rowid: usize,
}

/// `IDENTITY(type, seed, increment) AS name` in a SELECT ... INTO's list.
pub(crate) struct IdentityItem {
    position: usize,
    name: String,
    ty: SqlType,
    seed: i64,
    increment: i64,
}

/// The `IDENTITY(...)` item of a SELECT ... INTO's list, if it has one (one at most: 2744).
fn identity_item(sel: &Select) -> Result<Option<IdentityItem>, SqlError> {
    let mut found = None;
    for (position, item) in sel.items.iter().enumerate() {
        let SelectItem::Expr { expr, alias } = item else { continue };
        let ExprKind::Function(f) = &expr.kind else { continue };
        if f.name.schema.is_some() || !f.name.name.value.eq_ignore_ascii_case("IDENTITY") {
            continue;
        }
        if found.is_some() {
            return Err(SqlError::new(
                2744,
                "Multiple identity columns specified for table. Only one identity column per table is allowed.",
            ));
        }
        let crate::ast::FunctionArgs::List { args, .. } = &f.args else {
            return Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'IDENTITY'."));
        };
        let type_name = match args.first().map(|a| &a.kind) {
            Some(ExprKind::Column(parts)) => parts.last().map(|p| p.value.clone()),
            _ => None,
        };
        let Some(type_name) = type_name else {
            return Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'IDENTITY'."));
        };
        let data_type = crate::ast::DataType {
            name: ObjectName::simple(crate::ast::Ident::new(type_name)),
            params: Vec::new(),
        };
        let ty = scalar::data_type(&data_type)?;
        let number = |i: usize, default: i64| -> Result<i64, SqlError> {
            match args.get(i).map(|a| &a.kind) {
                None => Ok(default),
                Some(ExprKind::Literal(l)) => {
                    match scalar::convert(scalar::literal(l)?, SqlType::BigInt, None)? {
                        Value::BigInt(n) => Ok(n),
                        _ => Ok(default),
                    }
                }
                Some(ExprKind::Unary { op: crate::ast::UnaryOp::Minus, operand }) => match &operand
                    .kind
                {
                    ExprKind::Literal(l) => {
                        match scalar::convert(scalar::literal(l)?, SqlType::BigInt, None)? {
                            Value::BigInt(n) => Ok(-n),
                            _ => Ok(default),
                        }
                    }
                    _ => Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'IDENTITY'.")),
                },
                Some(_) => {
                    Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'IDENTITY'."))
                }
            }
        };
        let (seed, increment) = (number(1, 1)?, number(2, 1)?);
        let Some(alias) = alias else {
            return Err(SqlError::new(
                1038,
                "An object or column name is missing or empty. For SELECT INTO statements, verify each column has a name. For other statements, look for empty alias names. Aliases defined as \"\" or [] are not allowed. Change the alias to a valid name.",
            ));
        };
        found = Some(IdentityItem { position, name: alias.value.clone(), ty, seed, increment });
    }
    Ok(found)
}

/// The first SELECT of a query body: where `INTO` is written.
fn first_select(body: &QueryBody) -> Option<&Select> {
    match body {
        QueryBody::Select(s) => Some(s),
        QueryBody::SetOperation { left, .. } => first_select(left),
        QueryBody::Parenthesized(q) => first_select(&q.body),
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
    /// A SELECT statement: sends its rows to the client, or stores them (INTO), or assigns
    /// variables.
    pub(crate) fn select_statement(&mut self, s: &SelectStatement) -> Step<()> {
        let first = first_select(&s.query.body);
        let into = first.and_then(|sel| sel.into.clone());
        let assigns = first
            .is_some_and(|sel| sel.items.iter().any(|i| matches!(i, SelectItem::Assign { .. })));
        // FMTONLY describes a result set without making one: no assignment, no new table.
        if self.s.opts.fmtonly && (assigns || into.is_some()) {
            return Ok(());
        }
        // SELECT IDENTITY(type, seed, increment) AS c, ... INTO: the column is left out of the
        // query and numbers the new table's rows instead.
        let identity = match (&into, first) {
            (Some(_), Some(sel)) => identity_item(sel)?,
            _ => None,
        };
        // Rows for the client go to it as they are read where the query allows (see
        // `join::stream`), so that a large result never sits in memory.
        if into.is_none() && !assigns && !self.s.opts.fmtonly {
            if let Some(n) = self.stream_select(&s.query, self.rowcount_limit())? {
                self.done(Counted::Select, n);
                return Ok(());
            }
        }
        let mut rows = match &identity {
            Some(item) => {
                let mut query = s.query.clone();
                if let QueryBody::Select(sel) = &mut query.body {
                    sel.items.remove(item.position);
                }
                self.query(&query, None)?
            }
            None => self.query(&s.query, None)?,
        };
        rows.rows.truncate(self.rowcount_limit());
        if self.s.opts.fmtonly {
            rows.rows.clear();
        }
        if assigns {
            // SQL Server counts an assignment's rows as a SELECT's: its DONE carries the
            // count (a client reads it as a result without columns), NOCOUNT aside.
            self.done(Counted::Select, rows.rows.len() as u64);
            return Ok(());
        }
        if let Some(into) = into {
            let n = self.select_into(&into, rows, identity)?;
            self.done(Counted::SelectInto, n);
            return Ok(());
        }
        let visible = rows.visible();
        let cols: Vec<ColumnInfo> = visible
            .iter()
            .map(|&i| &rows.cols[i])
            .map(crate::exec::execute::query::column_info)
            .collect();
        self.out.result_set(&cols);
        let n = rows.rows.len() as u64;
        let all_visible = visible.len() == rows.cols.len();
        for r in &rows.rows {
            if all_visible {
                self.out.row(r);
            } else {
                let v: Vec<Value> = visible.iter().map(|&i| r[i].clone()).collect();
                self.out.row(&v);
            }
        }
        self.out.result_end(n);
        self.done(Counted::Select, n);
        Ok(())
    }

    /// SELECT ... INTO: a new heap with the query's columns, filled with its rows; with an
    /// `identity` item, an identity column at its place numbers them in their order.
    fn select_into(
        &mut self,
        name: &ObjectName,
        rows: Rows,
        identity: Option<IdentityItem>,
    ) -> Result<u64, SqlError> {
        let mut columns = Vec::new();
        let mut seen = HashSet::new();
        for c in rows.cols.iter().filter(|c| !c.hidden) {
            if c.name.is_empty() {
                return Err(SqlError::new(
                    1038,
                    "An object or column name is missing or empty. For SELECT INTO statements, verify each column has a name. For other statements, look for empty alias names. Aliases defined as \"\" or [] are not allowed. Change the alias to a valid name.",
                ));
            }
            if !seen.insert(c.name.to_ascii_lowercase()) {
                return Err(SqlError::new(
                    2705,
                    format!("Column names in each table must be unique. Column name '{}' in table '{}' is specified more than once.", c.name, name.name.value),
                ));
            }
            columns.push(ColumnDef {
                name: c.name.clone(),
                ty: c.ty,
                nullable: c.nullable,
                identity: None,
                default: None,
                computed: None,
                rowversion: false,
                collation: crate::exec::scalar::collation::stored(c.collation, c.ty),
                declared: c.declared,
            });
        }
        if let Some(item) = &identity {
            if columns.iter().any(|c| c.name.eq_ignore_ascii_case(&item.name)) {
                return Err(SqlError::new(
                    2705,
                    format!("Column names in each table must be unique. Column name '{}' in table '{}' is specified more than once.", item.name, name.name.value),
                ));
            }
            let at = item.position.min(columns.len());
            columns.insert(
                at,
                ColumnDef {
                    name: item.name.clone(),
                    ty: item.ty,
                    nullable: false,
                    identity: Some((item.seed, item.increment)),
                    default: None,
                    computed: None,
                    rowversion: false,
                    collation: None,
                    declared: None,
                },
            );
        }
        let t = self.create_table_def(name, columns, Vec::new(), &[])?;
        let visible = rows.visible();
        let mut n = 0u64;
        for r in rows.rows {
            let mut values: Vec<Value> = visible.iter().map(|&i| r[i].clone()).collect();
            if let Some(item) = &identity {
                // NULL: the insert hands out the next identity value.
                values.insert(item.position.min(values.len()), Value::Null);
            }
            for (v, c) in values.iter_mut().zip(&t.def.columns) {
                let x = std::mem::replace(v, Value::Null);
                *v = scalar::coerce(x, c.ty, true)?;
            }
            let db = Arc::clone(&t.db);
            self.tx().insert_row(&db, &t.def, &mut values).map_err(|e| self.s.engine_error(e))?;
            n += 1;
        }
        Ok(n)
    }

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
        // The search for the rows to change: under SERIALIZABLE its seeks of the target take
        // update locks (RangeS-U, U), as SQL Server's do.
        self.tx().set_update_target(Some((t.db.id(), t.def.id)));
        let found = if from.is_empty() && limit < usize::MAX {
            // TOP (n) of one table: the read checks the WHERE and stops at the n-th row, so
            // it locks no more rows than it changes (a queue's `DELETE TOP (1) ... READPAST`).
            self.table_rows_upto(t, where_clause, Some(limit)).map(|rows| (rows, Vec::new()))
        } else if from.is_empty() {
            self.table_rows(t, where_clause).map(|rows| (rows, where_clause.into_iter().collect()))
        } else {
            self.plan_from(from, where_clause, None, None)
        };
        self.tx().set_update_target(None);
        let (rows, residual): (_, Vec<&Expr>) = found?;
        let Rows { cols, rows } = rows;
        let rowid = cols
            .iter()
            .position(|c| {
                c.hidden
                    && c.name == ROWID
                    && c.qual.as_deref().is_some_and(|q| q.eq_ignore_ascii_case(&t.qual))
            })
            .ok_or_else(|| SqlError::invalid_object(&t.qual))?;
        let mut kept = Vec::with_capacity(rows.len());
        let mut seen = HashSet::new();
        for row in rows {
            if !self.all_hold_in(&residual, &Env::new(&cols, &row, None))? {
                continue;
            }
            // A row joined to several others is changed once, as in SQL Server. Without a
            // FROM clause each row comes once already.
            if let (false, Value::Binary(id)) = (from.is_empty(), &row[rowid]) {
                if !seen.insert(id.clone()) {
                    continue;
                }
            }
            kept.push(row);
        }
        Ok(Qualified { cols, rows: kept, rowid })
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
        let source = self.insert_source(i, targets.len())?;
        let limit = self.top_limit(i.top.as_ref())?;
        let n = self.insert_rows(&t, &targets, source, limit, output.as_mut(), changes.as_mut())?;
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
                    return Err(if i.columns.is_empty() {
                        column_count_mismatch()
                    } else {
                        SqlError::new(120, "The select list for the INSERT statement contains fewer items than the insert list. The number of SELECT values must match the number of INSERT columns.")
                    }
                    .into());
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
        mut output: Option<&mut OutputRows<'_>>,
        mut changes: Option<&mut TriggerChanges>,
    ) -> Result<u64, SqlError> {
        let def = &t.def;
        let identity = def.identity_column().map(|(c, _, _)| c);
        // With IDENTITY_INSERT ON the insert list names the identity column (`insert_targets`).
        let explicit_identity = identity.is_some_and(|c| targets.contains(&c));
        let checks = self.checks(def)?;
        let cols = if checks.is_empty() { Vec::new() } else { table_cols(def, &def.name) };
        // Foreign keys are checked once the statement's rows are in (see `foreign_key`).
        let referencing = def.foreign_keys.iter().any(|fk| !fk.disabled);
        let computed = def.columns.iter().any(|c| c.computed.is_some());
        let rowversion = def.columns.iter().position(|c| c.rowversion);
        let mut inserted = Vec::new();
        let mut n = 0u64;
        let mut ignored = false;
        for row in source.into_iter().take(limit) {
            let mut values = self.insert_values(def, targets, row, identity)?;
            if let Some(c) = rowversion {
                if !values[c].is_null() {
                    return Err(SqlError::new(273, "Cannot insert an explicit value into a timestamp column. Use INSERT with a column list to exclude the timestamp column, or insert a DEFAULT into the timestamp column."));
                }
                values[c] = self.next_rowversion(&t.db)?;
            }
            if let Some(c) = identity.filter(|&c| computed && values[c].is_null()) {
                // A computed column may use the identity: take the value now rather than
                // leave it to the engine, which would take it after the row was computed.
                let v = t.db.next_identity(def).map_err(|e| self.s.engine_error(e))?;
                values[c] = scalar::coerce(Value::BigInt(v), def.columns[c].ty, false)?;
                self.compute_columns(def, &mut values)?;
            }
            if explicit_identity && identity.is_some_and(|c| values[c].is_null()) {
                return Err(SqlError::new(
                    339,
                    "DEFAULT or NULL are not allowed as explicit identity values.",
                ));
            }
            self.check_row(def, &cols, &checks, &values, "INSERT")?;
            self.check_view_option(t, &values)?;
            let db = Arc::clone(&t.db);
            if !self.insert_unless_ignored(&db, def, &mut values, &mut ignored)? {
                continue;
            }
            if let Some(c) = identity {
                if let Some(v) = walden_engine::objects::identity_integer(&values[c]) {
                    self.note_identity(v);
                }
            }
            if let Some(output) = output.as_deref_mut() {
                self.output_row(output, None, Some(&values))?;
            }
            if let Some(changes) = changes.as_deref_mut() {
                changes.row(None, Some(&values));
            }
            if referencing {
                inserted.push(values);
            }
            n += 1;
        }
        self.check_references(t, &inserted, "INSERT")?;
        if ignored {
            self.report(duplicate_key_ignored());
        }
        Ok(n)
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

    /// UPDATE; returns the number of rows changed.
    pub(crate) fn update(&mut self, u: &Update) -> Result<u64, SqlError> {
        self.with_ctes(&u.ctes, |r| r.update_in_scope(u))
            .map_err(|e| rebind_in_statement(e, &u.target, &u.from))
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
                    (t, self.cte_rows(rows, u.where_clause.as_ref())?, Some(through))
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
        for row in rows.into_iter().take(limit) {
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

    /// DELETE; returns the number of rows deleted.
    pub(crate) fn delete(&mut self, d: &Delete) -> Result<u64, SqlError> {
        self.with_ctes(&d.ctes, |r| r.delete_in_scope(d))
            .map_err(|e| rebind_in_statement(e, &d.target, &d.from))
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
            DmlTarget::Through(t, rows, _) => (t, self.cte_rows(rows, d.where_clause.as_ref())?),
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
        for row in rows.into_iter().take(limit) {
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
            if self.s.temp_tables.contains_key(&user.to_ascii_lowercase()) {
                return Err(EngineError::ObjectExists(user).into());
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

/// An UPDATE's or DELETE's error 4104 for a column of its target or of a FROM source: 207
/// (see [`crate::exec::eval::rebind_unknown_column`]).
fn rebind_in_statement(err: SqlError, target: &TableTarget, from: &[TableSource]) -> SqlError {
    let err = crate::exec::eval::rebind_unknown_column(err, from);
    match target {
        TableTarget::Table(name) if err.number == 4104 => {
            let source = TableSource::Table { name: name.clone(), alias: None, hints: Vec::new() };
            crate::exec::eval::rebind_unknown_column(err, std::slice::from_ref(&source))
        }
        _ => err,
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

pub(crate) fn column_count_mismatch() -> SqlError {
    SqlError::new(213, "Column name or number of supplied values does not match table definition.")
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
