//! DML triggers: `CREATE [OR ALTER] TRIGGER name ON table {AFTER | FOR | INSTEAD OF}
//! {INSERT, UPDATE, DELETE} AS statements`, `ALTER TRIGGER`, `DROP TRIGGER`, `ENABLE | DISABLE
//! TRIGGER` (and `ALTER TABLE ... ENABLE | DISABLE TRIGGER`).
//!
//! A trigger is its text in the catalog ([`walden_engine::catalog::TriggerDef`], which also
//! records its table and whether it is disabled). An INSERT, UPDATE, DELETE or MERGE that
//! changes a table with enabled triggers for what it did collects the rows it changed
//! ([`TriggerChanges`]); once the statement has changed every row, and before its row count is
//! sent, each such trigger runs once, in id order, whether or not any row changed, as SQL
//! Server's statement-level triggers do. The body sees the rows as the tables `inserted` (the
//! rows after the change) and `deleted` (before), which are real tables in tempdb for as long
//! as the triggers run, so every query form reads them; `UPDATE(column)` and
//! `COLUMNS_UPDATED()` tell which columns the statement set.
//!
//! The body runs as SQL Server runs it:
//!
//! * inside the statement's transaction, in the table's database, in a frame of its own, with
//!   `@@ROWCOUNT` the statement's row count and `@@TRANCOUNT` at least 1 (an autocommit
//!   statement's transaction counts);
//! * with `XACT_ABORT` on: an error rolls the whole transaction back and ends the batch (a
//!   `CATCH` around the statement still takes it);
//! * a `ROLLBACK` in the body rolls the transaction back; the body goes on, and when it ends,
//!   error 3609 ends the batch;
//! * a trigger does not fire itself again directly (`RECURSIVE_TRIGGERS` is off); triggers that
//!   fire other triggers nest up to 32 levels (error 217);
//! * `inserted` and `deleted` cannot be changed (error 286).
//!
//! An INSTEAD OF trigger (one per event on a table or view, error 2111; the only kind a view
//! may have) replaces the statement: the statement changes nothing, and the trigger runs, as
//! above, with the rows it would have changed ([`Instead`]): for INSERT the values given
//! (each other column its DEFAULT or NULL), for UPDATE and DELETE the rows its FROM and WHERE
//! qualify (and for UPDATE those rows with the SET list applied). A statement inside the
//! trigger that changes the same object does so directly, firing its AFTER triggers.

use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, Object, TableDef, TriggerDef};
use walden_engine::types::Value;
use walden_engine::Database;

use crate::ast::{
    CreateMode, CreateTrigger, EnableTrigger, Expr, ExprKind, ObjectName, StatementKind,
    TriggerEvent,
};
use crate::exec::execute::query::TableRef;
use crate::exec::scalar;
use crate::exec::session::{Frame, Run, Step, MAX_NESTING};
use crate::exec::SqlError;

/// The rows one statement changed in a table, for the triggers that event fires.
#[derive(Debug)]
pub(crate) struct TriggerChanges {
    event: TriggerEvent,
    db: Arc<Database>,
    table: Arc<TableDef>,
    /// Rows after the change (INSERT, UPDATE).
    pub(crate) inserted: Vec<Vec<Value>>,
    /// Rows before it (UPDATE, DELETE).
    pub(crate) deleted: Vec<Vec<Value>>,
    /// The columns the statement set: every column for INSERT, the SET list's for UPDATE, none
    /// for DELETE.
    updated: Vec<bool>,
    /// How many rows the statement changed: `@@ROWCOUNT` as the triggers start.
    rows: u64,
    /// The rows the statement would have changed, for the INSTEAD OF trigger that runs in
    /// its place; AFTER triggers otherwise.
    instead_of: bool,
}

impl TriggerChanges {
    /// Records one changed row: its values before (`deleted`) and after (`inserted`).
    pub(crate) fn row(&mut self, deleted: Option<&[Value]>, inserted: Option<&[Value]>) {
        if let Some(values) = deleted {
            self.deleted.push(values.to_vec());
        }
        if let Some(values) = inserted {
            self.inserted.push(values.to_vec());
        }
        self.rows += 1;
    }

    /// Marks column `c` as set by the statement (UPDATE's SET list).
    pub(crate) fn set_column(&mut self, c: usize) {
        if let Some(flag) = self.updated.get_mut(c) {
            *flag = true;
        }
    }
}

/// A trigger running: what `UPDATE()`, `COLUMNS_UPDATED()` and `EVENTDATA()` ask, and what
/// stops it firing itself.
#[derive(Debug)]
pub(crate) struct RunningTrigger {
    pub(crate) id: u32,
    /// A DML trigger's table's columns (none for a DDL trigger).
    pub(crate) columns: Vec<String>,
    /// Which of them the statement set.
    pub(crate) updated: Vec<bool>,
    /// A DDL trigger's event, as `EVENTDATA()` returns it; `None` in a DML trigger.
    pub(crate) event_data: Option<Value>,
}

/// The names `inserted` and `deleted` have in a trigger body (lower-case): their keys in the
/// session's map of temporary tables, which no `#temp` or `@table` name can be.
pub(crate) const PSEUDO_TABLES: [&str; 2] = ["inserted", "deleted"];

/// What the trigger whose stored text is `text` is: INSTEAD OF (rather than AFTER), and the
/// statements that fire it; `None` if the text is not a CREATE TRIGGER. For the catalog
/// views and OBJECTPROPERTY, which read triggers outside a session.
pub(crate) fn trigger_kind(text: &str) -> Option<(bool, Vec<TriggerEvent>)> {
    let batch = crate::parse_batch(text).ok()?;
    parsed_trigger(&batch).map(|t| (t.instead_of, t.events.clone()))
}

/// A trigger's text, parsed: its events and its body.
fn parsed_trigger(batch: &crate::ast::Batch) -> Option<&CreateTrigger> {
    batch.statements.iter().find_map(|s| match &s.kind {
        StatementKind::CreateTrigger(t) => Some(&**t),
        _ => None,
    })
}

impl Run<'_> {
    /// `CREATE [OR ALTER] TRIGGER` / `ALTER TRIGGER`: checks the table and stores the text
    /// (a DDL trigger's: `exec::ddl_trigger`).
    pub(crate) fn create_trigger(&mut self, t: &CreateTrigger) -> Result<(), SqlError> {
        let Some(table) = &t.table else { return self.create_database_trigger(t) };
        crate::exec::module::view::no_database_prefix(&t.name, t.mode, "TRIGGER")?;
        let table_name = crate::exec::execute::query::display_name(table);
        let invalid = || {
            SqlError::new(
                8197,
                format!(
                    "The object '{table_name}' does not exist or is invalid for this operation."
                ),
            )
        };
        if table.name.value.starts_with('#') || table.database.is_some() {
            return Err(invalid());
        }
        let db = Arc::clone(&self.s.db);
        let table_schema = table.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        // (object id, schema): a table, or for an INSTEAD OF trigger a view too.
        let table = match db.find_object(table_schema, &table.name.value).as_deref() {
            Some(Object::Table(def)) => (def.id, def.schema.clone()),
            Some(Object::View(v)) if t.instead_of => (v.id, v.schema.clone()),
            _ => return Err(invalid()),
        };
        let schema = t.name.schema.as_ref().map_or(table.1.as_str(), |s| s.value.as_str());
        if !schema.eq_ignore_ascii_case(&table.1) {
            return Err(SqlError::new(
                2108,
                format!(
                    "Cannot create trigger on '{table_name}' as the target is not in the same schema."
                ),
            ));
        }
        let name = &t.name.name.value;
        if t.instead_of {
            self.one_instead_of_per_event(&db, table.0, t)?;
        }
        let existing = db.find_object(&table.1, name);
        if t.mode == CreateMode::Alter && !matches!(existing.as_deref(), Some(Object::Trigger(_))) {
            return Err(SqlError::invalid_object(name));
        }
        let def = TriggerDef {
            id: 0,
            schema: table.1.clone(),
            name: name.clone(),
            table: table.0,
            disabled: false,
            text: t.definition.clone(),
        };
        let or_alter = t.mode != CreateMode::Create;
        self.tx().put_trigger(&db, def, or_alter).map_err(|e| self.s.engine_error(e))
    }

    /// Error 2111 if another trigger on object `object` is INSTEAD OF an event `t` is for:
    /// SQL Server allows one INSTEAD OF trigger per event and object.
    fn one_instead_of_per_event(
        &mut self,
        db: &Database,
        object: u32,
        t: &CreateTrigger,
    ) -> Result<(), SqlError> {
        for other in db.triggers_on(object) {
            if other.name.eq_ignore_ascii_case(&t.name.name.value) {
                continue;
            }
            let batch = self.s.parsed(&other.text)?;
            let Some(other) = parsed_trigger(&batch).filter(|o| o.instead_of) else { continue };
            if let Some(event) = t.events.iter().find(|e| other.events.contains(e)) {
                return Err(SqlError::new(
                    2111,
                    format!(
                        "Cannot CREATE TRIGGER on '{}' because an INSTEAD OF {event} trigger already exists on this object.",
                        t.table.as_ref().map(crate::exec::execute::query::display_name).unwrap_or_default()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `DROP TRIGGER [IF EXISTS] name`.
    pub(crate) fn drop_trigger(
        &mut self,
        name: &ObjectName,
        if_exists: bool,
    ) -> Result<(), SqlError> {
        let db = self.database_of(name.database.as_ref())?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        match db.find_object(schema, &name.name.value).as_deref() {
            Some(Object::Trigger(t)) => {
                self.tx().drop_object(&db, t.id).map_err(|e| self.s.engine_error(e))
            }
            _ if if_exists => Ok(()),
            _ => Err(no_trigger_to_drop(name)),
        }
    }

    /// `ENABLE | DISABLE TRIGGER {name, ... | ALL} ON table` (`ON DATABASE`:
    /// `exec::ddl_trigger`).
    pub(crate) fn enable_trigger(&mut self, e: &EnableTrigger) -> Result<(), SqlError> {
        let Some(table) = &e.table else { return self.enable_database_trigger(e) };
        let table = self.resolve_table(table, &table.name.value)?;
        let on_table = table.db.triggers_on(table.def.id);
        let chosen = triggers_named(&on_table, &e.names, true)?;
        for trigger in chosen {
            self.tx()
                .set_trigger_disabled(&table.db, &trigger, !e.enable)
                .map_err(|e| self.s.engine_error(e))?;
        }
        Ok(())
    }

    /// The collector for a statement about to change `t` by `event`, if the table has enabled
    /// triggers for it; `None` (and nothing to collect) otherwise. Tables in tempdb have none.
    pub(crate) fn trigger_changes(
        &mut self,
        t: &TableRef,
        event: TriggerEvent,
    ) -> Result<Option<TriggerChanges>, SqlError> {
        if !self.fires(t, event)? {
            return Ok(None);
        }
        let width = t.def.columns.len();
        Ok(Some(TriggerChanges {
            event,
            db: Arc::clone(&t.db),
            table: Arc::clone(&t.def),
            inserted: Vec::new(),
            deleted: Vec::new(),
            updated: vec![event == TriggerEvent::Insert; width],
            rows: 0,
            instead_of: false,
        }))
    }

    /// Whether `event` on `t` fires an enabled trigger.
    pub(crate) fn fires(&mut self, t: &TableRef, event: TriggerEvent) -> Result<bool, SqlError> {
        if t.db.is_temp() || !t.db.has_triggers() {
            return Ok(false);
        }
        for def in t.db.triggers_on(t.def.id).iter().filter(|d| !d.disabled) {
            let batch = self.s.parsed(&def.text)?;
            if parsed_trigger(&batch).is_some_and(|p| !p.instead_of && p.events.contains(&event)) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Error 334 or 331: a statement whose OUTPUT goes to the client (`into` false), or whose
    /// OUTPUT INTO goes to `t` (`into` true), may not change a table with enabled triggers.
    pub(crate) fn output_allowed(&mut self, t: &TableRef, into: bool) -> Result<(), SqlError> {
        let any = [TriggerEvent::Insert, TriggerEvent::Update, TriggerEvent::Delete];
        for event in any {
            if self.fires(t, event)? {
                let name = &t.def.name;
                return Err(if into {
                    SqlError::new(331, format!("The target table '{name}' of the OUTPUT INTO clause cannot have any enabled triggers."))
                } else {
                    SqlError::new(334, format!("The target table '{name}' of the DML statement cannot have any enabled triggers if the statement contains an OUTPUT clause without INTO clause."))
                });
            }
        }
        Ok(())
    }

    /// Runs the triggers the statement's changes fire (see the module doc).
    pub(crate) fn fire_triggers(&mut self, changes: TriggerChanges) -> Step<()> {
        let running = self.s.running_triggers.last().map(|r| r.id);
        let mut fired = Vec::new();
        for def in changes.db.triggers_on(changes.table.id) {
            // Not itself directly: RECURSIVE_TRIGGERS is off, as it is by default.
            if def.disabled || Some(def.id) == running {
                continue;
            }
            let batch = self.s.parsed(&def.text)?;
            let fires = parsed_trigger(&batch).is_some_and(|p| {
                p.instead_of == changes.instead_of && p.events.contains(&changes.event)
            });
            if fires {
                fired.push((def, batch));
            }
        }
        if fired.is_empty() {
            return Ok(());
        }
        if self.s.running_triggers.len() >= MAX_NESTING {
            return Err(SqlError::new(
                217,
                "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit 32).",
            )
            .into());
        }
        let outer = self.pseudo_tables(&changes)?;
        let mut result = Ok(());
        for (def, batch) in &fired {
            let Some(trigger) = parsed_trigger(batch) else { continue };
            result = self.run_trigger(def, trigger, &changes);
            if result.is_err() {
                break;
            }
        }
        self.drop_pseudo_tables(outer);
        result
    }

    /// Creates `inserted` and `deleted` in tempdb with the changed rows, in the statement's
    /// transaction, and returns what the names meant before (an outer trigger's tables).
    fn pseudo_tables(&mut self, changes: &TriggerChanges) -> Result<Vec<Option<String>>, SqlError> {
        let tempdb = Arc::clone(self.s.instance.tempdb());
        let columns: Vec<ColumnDef> = changes
            .table
            .columns
            .iter()
            .map(|c| ColumnDef {
                identity: None,
                default: None,
                computed: None,
                rowversion: false,
                ..c.clone()
            })
            .collect();
        let mut outer = Vec::with_capacity(2);
        for (name, rows) in PSEUDO_TABLES.iter().zip([&changes.inserted, &changes.deleted]) {
            let internal = self.s.temp_internal_name(&format!("#{name}"));
            let def = TableDef {
                id: 0,
                schema: "dbo".to_string(),
                name: internal.clone(),
                columns: columns.clone(),
                indexes: Vec::new(),
                checks: Vec::new(),
                foreign_keys: Vec::new(),
                identity_high: 0,
                created_micros: 0,
            };
            let def =
                self.tx().create_table(&tempdb, def, &[]).map_err(|e| self.s.engine_error(e))?;
            outer.push(self.s.temp_tables.insert((*name).to_string(), internal));
            for row in rows {
                let mut values = row.clone();
                self.tx()
                    .insert_row(&tempdb, &def, &mut values)
                    .map_err(|e| self.s.engine_error(e))?;
            }
        }
        Ok(outer)
    }

    /// Drops this firing's `inserted` and `deleted` (unless a rollback in a trigger took them
    /// already) and gives the names back their `outer` meaning.
    fn drop_pseudo_tables(&mut self, outer: Vec<Option<String>>) {
        let tempdb = Arc::clone(self.s.instance.tempdb());
        for (name, before) in PSEUDO_TABLES.iter().zip(outer) {
            let internal = match before {
                Some(before) => self.s.temp_tables.insert((*name).to_string(), before),
                None => self.s.temp_tables.remove(*name),
            };
            let Some(internal) = internal else { continue };
            if self.s.tx.is_none() {
                continue;
            }
            if let Some(o) = tempdb.find_object("dbo", &internal) {
                let id = o.id();
                if let Err(e) = self.tx().drop_object(&tempdb, id) {
                    let e = self.s.engine_error(e);
                    self.report(e);
                }
            }
        }
    }

    /// Runs one trigger's body for `changes` (see the module doc for the rules).
    fn run_trigger(
        &mut self,
        def: &TriggerDef,
        trigger: &CreateTrigger,
        changes: &TriggerChanges,
    ) -> Step<()> {
        let running = RunningTrigger {
            id: def.id,
            columns: changes.table.columns.iter().map(|c| c.name.clone()).collect(),
            updated: changes.updated.clone(),
            event_data: None,
        };
        self.run_trigger_body(running, def, &trigger.body, &changes.db, changes.rows)
    }

    /// Runs trigger `def`'s `body` in database `db` as SQL Server runs a trigger (DML or
    /// DDL; see the module doc for the rules), with `@@ROWCOUNT` starting at `rows`.
    pub(crate) fn run_trigger_body(
        &mut self,
        running: RunningTrigger,
        def: &TriggerDef,
        body: &[crate::ast::Statement],
        db: &Arc<Database>,
        rows: u64,
    ) -> Step<()> {
        // An autocommit statement's transaction counts in the body, as in SQL Server: a
        // ROLLBACK there rolls it back, and no statement of the body commits it.
        let autocommit = self.s.trancount == 0;
        if autocommit {
            self.s.trancount = 1;
        }
        let trancount = self.s.trancount;
        let saved_db = std::mem::replace(&mut self.s.db, Arc::clone(db));
        // SET options the body changes last until it ends, as in SQL Server.
        let opts = self.s.opts.clone();
        self.s.opts.xact_abort = true;
        self.s.rowcount = rows;
        self.s.running_triggers.push(running);
        self.s.frames.push(Frame {
            procedure: Some(def.name.clone()),
            module_id: def.id as i32,
            // Copied only where a DDL trigger may want a statement of it.
            source: db.has_database_triggers().then(|| Arc::from(def.text.as_str())),
            ..Frame::default()
        });
        let caller_module = self.s.activity.enter_module(Some((db.id(), def.id)));
        self.out.trigger_start();
        let result = self.module_body(body);
        self.out.trigger_end();
        self.s.activity.enter_module(caller_module);
        self.pop_frame();
        self.s.running_triggers.pop();
        self.s.opts = opts;
        self.s.db = saved_db;
        let ended = self.s.trancount < trancount;
        if autocommit && self.s.trancount > 0 {
            self.s.trancount -= 1;
        }
        result?;
        if ended {
            return Err(SqlError::new(
                3609,
                "The transaction ended in the trigger. The batch has been aborted.",
            )
            .into());
        }
        Ok(())
    }

    /// Error 286 if `name` is `inserted` or `deleted` in a running trigger: a statement may
    /// read them but not change them.
    pub(crate) fn refuse_pseudo_table_target(&self, name: &ObjectName) -> Result<(), SqlError> {
        if self.pseudo_table(name).is_some() {
            return Err(SqlError::new(
                286,
                "The logical tables INSERTED and DELETED cannot be updated.",
            ));
        }
        Ok(())
    }

    /// The tempdb name of `inserted` or `deleted` if `name` is one of them in a running
    /// trigger.
    pub(crate) fn pseudo_table(&self, name: &ObjectName) -> Option<String> {
        if self.s.running_triggers.is_empty() || name.schema.is_some() || name.database.is_some() {
            return None;
        }
        let lower = name.name.value.to_ascii_lowercase();
        if !PSEUDO_TABLES.contains(&lower.as_str()) {
            return None;
        }
        self.s.temp_tables.get(&lower).cloned()
    }

    /// `UPDATE(column)`, `COLUMNS_UPDATED()`, `TRIGGER_NESTLEVEL()` and `EVENTDATA()`, if
    /// `name` is one of them. The first two only in a trigger (SQL Server refuses them
    /// elsewhere when the trigger is created; here, when they run); the third is 0 outside
    /// one; the last is the running DDL trigger's event, NULL elsewhere.
    pub(crate) fn trigger_function(
        &self,
        name: &str,
        args: &[Expr],
    ) -> Option<Result<Value, SqlError>> {
        let upper = name.to_ascii_uppercase();
        if upper == "TRIGGER_NESTLEVEL" && args.is_empty() {
            return Some(Ok(Value::Int(self.s.running_triggers.len() as i32)));
        }
        if upper == "EVENTDATA" && args.is_empty() {
            let event = self.s.running_triggers.last().and_then(|r| r.event_data.clone());
            return Some(Ok(event.unwrap_or(Value::Null)));
        }
        if upper != "UPDATE" && upper != "COLUMNS_UPDATED" {
            return None;
        }
        let Some(running) = self.s.running_triggers.last() else {
            return Some(Err(SqlError::with_severity(
                156,
                15,
                format!("Incorrect syntax near the keyword '{upper}'."),
            )));
        };
        if upper == "COLUMNS_UPDATED" {
            // Bit (n - 1) % 8 of byte (n - 1) / 8 stands for the n-th column.
            let mut bytes = vec![0u8; running.updated.len().div_ceil(8)];
            for (i, _) in running.updated.iter().enumerate().filter(|(_, &set)| set) {
                bytes[i / 8] |= 1 << (i % 8);
            }
            return Some(Ok(Value::Binary(bytes)));
        }
        let column = match args {
            [Expr { kind: ExprKind::Column(parts), .. }] => parts.last().map(|p| p.value.as_str()),
            _ => None,
        };
        let Some(column) = column else {
            return Some(Err(SqlError::with_severity(102, 15, "Incorrect syntax near 'UPDATE'.")));
        };
        Some(match running.columns.iter().position(|c| c.eq_ignore_ascii_case(column)) {
            Some(i) => Ok(Value::Bit(running.updated[i])),
            None => Err(SqlError::invalid_column(column)),
        })
    }
}

/// A DML statement's target that has an INSTEAD OF trigger for what the statement does: the
/// statement changes nothing, and the trigger runs with the rows it would have changed.
pub(crate) struct Instead {
    db: Arc<Database>,
    /// The table's definition, or for a view one made of the view's columns (id the view's).
    shape: Arc<TableDef>,
    /// The object's name, for reading its rows as a FROM source.
    name: ObjectName,
    /// What the statement calls it: its alias in FROM, or its name.
    qual: String,
}

impl Run<'_> {
    /// The INSTEAD OF trigger target of a statement doing `event` to `target`, if the table or
    /// view it names has one enabled for it that is not running already (inside its own
    /// INSTEAD OF trigger, a statement does what it says to the object, as in SQL Server).
    pub(crate) fn instead_of(
        &mut self,
        ctes: &[crate::ast::Cte],
        target: &crate::ast::TableTarget,
        from: &[crate::ast::TableSource],
        event: TriggerEvent,
    ) -> Result<Option<Instead>, SqlError> {
        let crate::ast::TableTarget::Table(written) = target else { return Ok(None) };
        let bare = written.schema.is_none() && written.database.is_none();
        if bare && ctes.iter().any(|c| c.name.value.eq_ignore_ascii_case(&written.name.value)) {
            return Ok(None);
        }
        let name = match crate::exec::dml::find_alias(from, &written.name.value) {
            Some(real) if bare => real.clone(),
            _ => written.clone(),
        };
        if name.name.value.starts_with('#') || self.pseudo_table(&name).is_some() {
            return Ok(None);
        }
        // Before resolving the name again: most databases have no trigger at all.
        if !self.database_of(name.database.as_ref()).is_ok_and(|db| db.has_triggers()) {
            return Ok(None);
        }
        let Ok((db, object)) = self.resolve_relation_object(&name) else { return Ok(None) };
        let candidates = db.triggers_on(object.id());
        if candidates.is_empty() {
            return Ok(None);
        }
        let mut found = false;
        for def in candidates.iter().filter(|d| !d.disabled) {
            if self.s.running_triggers.iter().any(|r| r.id == def.id) {
                continue;
            }
            let batch = self.s.parsed(&def.text)?;
            if parsed_trigger(&batch).is_some_and(|p| p.instead_of && p.events.contains(&event)) {
                found = true;
            }
        }
        if !found {
            return Ok(None);
        }
        let shape = match object.as_ref() {
            Object::Table(def) => Arc::clone(def),
            Object::View(view) => {
                let columns = self.view_column_defs(Arc::clone(&db), view)?;
                Arc::new(TableDef {
                    id: view.id,
                    schema: view.schema.clone(),
                    name: view.name.clone(),
                    columns,
                    indexes: Vec::new(),
                    checks: Vec::new(),
                    foreign_keys: Vec::new(),
                    identity_high: 0,
                    created_micros: 0,
                })
            }
            _ => return Ok(None),
        };
        Ok(Some(Instead { db, shape, name, qual: written.name.value.clone() }))
    }

    /// INSERT into an INSTEAD OF target: the rows it would insert (the values given, each
    /// other column its DEFAULT or NULL; an identity column NULL) go to the trigger.
    pub(crate) fn insert_instead(&mut self, i: &crate::ast::Insert, target: Instead) -> Step<u64> {
        let t = TableRef {
            db: Arc::clone(&target.db),
            def: Arc::clone(&target.shape),
            qual: target.qual.clone(),
            view_check: None,
            wanted: None,
        };
        let targets =
            crate::exec::dml::insert_targets(&t, &i.columns, self.identity_insert_on(&t))?;
        let source = self.insert_source(i, targets.len())?;
        let limit = self.top_limit(i.top.as_ref())?;
        let def = &target.shape;
        let identity = def.identity_column().map(|(c, _, _)| c);
        let mut rows = Vec::new();
        for given in source.into_iter().take(limit) {
            rows.push(self.insert_values(def, &targets, given, identity)?);
        }
        let n = rows.len() as u64;
        self.instead_changes(target, TriggerEvent::Insert, rows, Vec::new(), None);
        Ok(n)
    }

    /// UPDATE or DELETE of an INSTEAD OF target: the rows its FROM and WHERE qualify go to
    /// the trigger as `deleted` and, for UPDATE, with the SET list applied, as `inserted`.
    pub(crate) fn change_instead(
        &mut self,
        target: Instead,
        from: &[crate::ast::TableSource],
        where_clause: Option<&Expr>,
        assignments: Option<&[crate::ast::Assignment]>,
    ) -> Result<u64, SqlError> {
        let sources = if from.is_empty() {
            vec![crate::ast::TableSource::Table {
                name: target.name.clone(),
                alias: Some(crate::ast::Ident::new(target.qual.clone())),
                hints: Vec::new(),
            }]
        } else {
            from.to_vec()
        };
        let (rows, residual) = self.plan_from(&sources, where_clause, None, None)?;
        let def = Arc::clone(&target.shape);
        let positions: Vec<usize> = def
            .columns
            .iter()
            .map(|column| {
                rows.cols
                    .iter()
                    .position(|c| {
                        !c.hidden
                            && c.name.eq_ignore_ascii_case(&column.name)
                            && c.qual
                                .as_deref()
                                .is_some_and(|q| q.eq_ignore_ascii_case(&target.qual))
                    })
                    .ok_or_else(|| SqlError::invalid_object(&target.qual))
            })
            .collect::<Result<_, _>>()?;
        let mut set = Vec::new();
        for a in assignments.unwrap_or_default() {
            let crate::ast::AssignmentTarget::Column(parts) = &a.target else {
                return Err(SqlError::new(
                    50000,
                    "Walden passes only column assignments to an INSTEAD OF UPDATE trigger.",
                ));
            };
            let name = parts.last().map(|p| p.value.as_str()).unwrap_or_default();
            let c = def
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name))
                .ok_or_else(|| SqlError::invalid_column(name))?;
            set.push((c, a));
        }
        let (mut inserted, mut deleted) = (Vec::new(), Vec::new());
        for row in &rows.rows {
            let env = crate::exec::eval::Env::new(&rows.cols, row, None);
            if !self.all_hold_in(&residual, &env)? {
                continue;
            }
            let old: Vec<Value> = positions.iter().map(|&p| row[p].clone()).collect();
            if assignments.is_some() {
                let mut new = old.clone();
                for (c, a) in &set {
                    let v = self.eval(&a.value, &env)?;
                    let v = match a.op {
                        crate::ast::AssignOp::Assign => v,
                        op => scalar::binary(
                            crate::exec::session::assign_binary(op),
                            old[*c].clone(),
                            v,
                        )?,
                    };
                    new[*c] = self.store(&def, *c, v)?;
                }
                inserted.push(new);
            }
            deleted.push(old);
        }
        let n = deleted.len() as u64;
        let (event, updated) = match assignments {
            Some(_) => {
                (TriggerEvent::Update, Some(set.iter().map(|(c, _)| *c).collect::<Vec<_>>()))
            }
            None => (TriggerEvent::Delete, None),
        };
        self.instead_changes(target, event, inserted, deleted, updated);
        Ok(n)
    }

    /// Queues the INSTEAD OF trigger's firing for the rows a statement would have changed.
    fn instead_changes(
        &mut self,
        target: Instead,
        event: TriggerEvent,
        inserted: Vec<Vec<Value>>,
        deleted: Vec<Vec<Value>>,
        updated_columns: Option<Vec<usize>>,
    ) {
        let width = target.shape.columns.len();
        let mut updated = vec![event == TriggerEvent::Insert; width];
        for c in updated_columns.into_iter().flatten() {
            updated[c] = true;
        }
        let rows = inserted.len().max(deleted.len()) as u64;
        self.s.trigger_changes.push(TriggerChanges {
            event,
            db: target.db,
            table: target.shape,
            inserted,
            deleted,
            updated,
            rows,
            instead_of: true,
        });
    }
}

/// The triggers of `all` that ENABLE or DISABLE TRIGGER names (all of them for `ALL`): error
/// 1088 for a name none has, or one written with a schema where `schema_allowed` is false (a
/// database trigger belongs to no schema).
pub(crate) fn triggers_named(
    all: &[TriggerDef],
    names: &[ObjectName],
    schema_allowed: bool,
) -> Result<Vec<TriggerDef>, SqlError> {
    if names.is_empty() {
        return Ok(all.to_vec());
    }
    let mut chosen = Vec::with_capacity(names.len());
    for name in names {
        let found = all.iter().find(|t| t.name.eq_ignore_ascii_case(&name.name.value));
        let Some(found) = found.filter(|_| schema_allowed || name.schema.is_none()) else {
            return Err(SqlError::new(
                1088,
                format!(
                    "Cannot find the object \"{}\" because it does not exist or you do not have permissions.",
                    name.name.value
                ),
            ));
        };
        chosen.push(found.clone());
    }
    Ok(chosen)
}

/// Error 3701 for `DROP TRIGGER name` of a trigger that does not exist.
pub(crate) fn no_trigger_to_drop(name: &ObjectName) -> SqlError {
    SqlError::new(
        3701,
        format!(
            "Cannot drop the trigger '{}', because it does not exist or you do not have permission.",
            crate::exec::execute::query::display_name(name)
        ),
    )
}
