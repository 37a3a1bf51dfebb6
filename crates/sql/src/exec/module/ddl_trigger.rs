//! DDL triggers: `CREATE [OR ALTER] TRIGGER name ON DATABASE [WITH ...] {FOR | AFTER}
//! event_type | event_group, ... AS statements`, `ALTER TRIGGER ... ON DATABASE`, `DROP
//! TRIGGER name ON DATABASE`, `ENABLE | DISABLE TRIGGER {name, ... | ALL} ON DATABASE`, and
//! `EVENTDATA()`.
//!
//! A DDL trigger is a [`TriggerDef`] whose table is
//! [`DATABASE_TRIGGER_PARENT`] (SQL Server's `parent_class` 0, `parent_id` 0): it is not a
//! schema-scoped object, so `OBJECT_ID` and `sys.objects` do not know it, only `sys.triggers`,
//! `sys.trigger_events`, `sys.sql_modules` and `OBJECT_DEFINITION`. Its `FOR` list names event
//! types and groups of SQL Server's hierarchy (`ddl_event_types`); a name outside it is error
//! 1084, a server-level one 1098.
//!
//! Before a statement runs, [`Run::ddl_events`] works out the events it raises, if its
//! database has a DDL trigger at all (one lookup otherwise): the object it creates, alters or
//! drops, from its syntax tree and the catalog as it is then (so `CREATE OR ALTER` is a
//! CREATE or an ALTER event, and `DROP ... IF EXISTS` of nothing raises none). When the
//! statement has succeeded, [`Run::fire_ddl_triggers`] runs each enabled DDL trigger whose
//! list covers an event, once per event, in id order, as DML triggers run: inside the
//! statement's transaction, with XACT_ABORT on, so a `ROLLBACK` there undoes the DDL and ends
//! the batch with 3609. The body reads the event with `EVENTDATA()`, SQL Server's
//! `EVENT_INSTANCE` document. Statements in procedures, triggers and dynamic SQL raise events
//! as the batch's own do; `sp_rename` raises RENAME.

use std::sync::Arc;

use walden_engine::catalog::{Object, TriggerDef, DATABASE_TRIGGER_PARENT};
use walden_engine::types::Value;
use walden_engine::Database;

use crate::ast::{
    CreateMode, CreateTrigger, DropKind, EnableTrigger, Ident, ObjectName, Statement, StatementKind,
};
use crate::exec::module::ddl_event_types::{self, EventType};
use crate::exec::module::trigger::RunningTrigger;
use crate::exec::scalar;
use crate::exec::session::{Run, Step, MAX_NESTING};
use crate::exec::SqlError;

/// One event a DDL statement raised: what `EVENTDATA()` describes.
#[derive(Debug)]
pub(crate) struct DdlEvent {
    /// The database it happened in (whose DDL triggers it fires).
    db: Arc<Database>,
    /// The event type (`CREATE_TABLE`) and its number in `sys.trigger_event_types`.
    event: (&'static str, u16),
    /// `ObjectType`: `TABLE`, `VIEW`, `PROCEDURE`, ...
    object_type: &'static str,
    /// `SchemaName`, for schema-scoped objects.
    schema: Option<String>,
    /// `ObjectName`.
    object: String,
    /// `TargetObjectName` and `TargetObjectType`: an index's, statistics' or DML trigger's
    /// table.
    target: Option<(String, &'static str)>,
    /// `NewObjectName`: RENAME's new name.
    new_name: Option<String>,
    /// `CommandText`: the statement as written.
    command: String,
    /// The event is a DDL trigger's own creation or change (`ObjectName` names it), which
    /// does not fire that trigger.
    own_trigger: bool,
}

impl Run<'_> {
    /// `CREATE [OR ALTER] TRIGGER ... ON DATABASE` / `ALTER TRIGGER ... ON DATABASE`: checks
    /// the event list and stores the text.
    pub(crate) fn create_database_trigger(&mut self, t: &CreateTrigger) -> Result<(), SqlError> {
        crate::exec::module::view::no_database_prefix(&t.name, t.mode, "TRIGGER")?;
        for named in &t.ddl_events {
            let Some((ty, _, _)) = ddl_event_types::find(&named.value) else {
                return Err(SqlError::with_severity(
                    1084,
                    15,
                    format!("'{}' is an invalid event type.", named.value),
                ));
            };
            if !ddl_event_types::is_database_level(ty) {
                return Err(SqlError::with_severity(
                    1098,
                    15,
                    "The specified event type(s) is/are not valid on the specified target object.",
                ));
            }
        }
        let db = Arc::clone(&self.s.db);
        let name = &t.name.name.value;
        if t.mode == CreateMode::Alter && find_database_trigger(&db, name).is_none() {
            return Err(SqlError::invalid_object(name));
        }
        let def = TriggerDef {
            id: 0,
            schema: String::new(),
            name: name.clone(),
            table: DATABASE_TRIGGER_PARENT,
            disabled: false,
            text: t.definition.clone(),
        };
        let or_alter = t.mode != CreateMode::Create;
        self.tx().put_trigger(&db, def, or_alter).map_err(|e| self.s.engine_error(e))
    }

    /// `DROP TRIGGER [IF EXISTS] name ON DATABASE`.
    pub(crate) fn drop_database_trigger(
        &mut self,
        name: &ObjectName,
        if_exists: bool,
    ) -> Result<(), SqlError> {
        let db = Arc::clone(&self.s.db);
        let found =
            name.schema.is_none().then(|| find_database_trigger(&db, &name.name.value)).flatten();
        match found {
            Some(t) => self.tx().drop_object(&db, t.id).map_err(|e| self.s.engine_error(e)),
            None if if_exists => Ok(()),
            None => Err(crate::exec::module::trigger::no_trigger_to_drop(name)),
        }
    }

    /// `ENABLE | DISABLE TRIGGER {name, ... | ALL} ON DATABASE`.
    pub(crate) fn enable_database_trigger(&mut self, e: &EnableTrigger) -> Result<(), SqlError> {
        let db = Arc::clone(&self.s.db);
        let all = db.triggers_on(DATABASE_TRIGGER_PARENT);
        let chosen = crate::exec::module::trigger::triggers_named(&all, &e.names, false)?;
        for trigger in chosen {
            self.tx()
                .set_trigger_disabled(&db, &trigger, !e.enable)
                .map_err(|e| self.s.engine_error(e))?;
        }
        Ok(())
    }

    /// The DDL events statement `st` will raise if it succeeds, worked out before it runs;
    /// none (at the cost of a match and a lookup) when it is not DDL or its database has no
    /// DDL trigger.
    pub(crate) fn ddl_events(&mut self, st: &Statement) -> Vec<DdlEvent> {
        let mut events = Vec::new();
        let mode_event = |mode: CreateMode, existed: bool, create, alter| match mode {
            CreateMode::Create => create,
            CreateMode::Alter => alter,
            CreateMode::CreateOrAlter if existed => alter,
            CreateMode::CreateOrAlter => create,
        };
        match &st.kind {
            StatementKind::CreateTable(c) => {
                self.push_event(&mut events, st, "CREATE_TABLE", "TABLE", &c.name, None);
            }
            StatementKind::AlterTable(a) => {
                self.push_event(&mut events, st, "ALTER_TABLE", "TABLE", &a.table, None);
            }
            StatementKind::CreateIndex(c) => {
                let index = ObjectName { name: c.name.clone(), ..c.table.clone() };
                let target = Some((c.table.name.value.clone(), "TABLE"));
                self.push_event(&mut events, st, "CREATE_INDEX", "INDEX", &index, target);
            }
            StatementKind::AlterIndex { index, table, .. } => {
                let name = index.clone().unwrap_or_else(|| Ident::new("ALL"));
                let index = ObjectName { name, ..table.clone() };
                let target = Some((table.name.value.clone(), "TABLE"));
                self.push_event(&mut events, st, "ALTER_INDEX", "INDEX", &index, target);
            }
            StatementKind::DropIndex(d) => {
                for i in &d.indexes {
                    let index = ObjectName { name: i.name.clone(), ..i.table.clone() };
                    let target = Some((i.table.name.value.clone(), "TABLE"));
                    self.push_event(&mut events, st, "DROP_INDEX", "INDEX", &index, target);
                }
            }
            StatementKind::CreateStatistics { name, table, .. } => {
                let stats = ObjectName { name: name.clone(), ..table.clone() };
                let target = Some((table.name.value.clone(), "TABLE"));
                self.push_event(&mut events, st, "CREATE_STATISTICS", "STATISTICS", &stats, target);
            }
            StatementKind::UpdateStatistics(u) => {
                self.push_event(&mut events, st, "UPDATE_STATISTICS", "TABLE", &u.table, None);
            }
            StatementKind::CreateView(v) => {
                let existed = self.object_exists(&v.name);
                let event = mode_event(v.mode, existed, "CREATE_VIEW", "ALTER_VIEW");
                self.push_event(&mut events, st, event, "VIEW", &v.name, None);
            }
            StatementKind::CreateProcedure(p) => {
                let existed = self.object_exists(&p.name);
                let event = mode_event(p.mode, existed, "CREATE_PROCEDURE", "ALTER_PROCEDURE");
                self.push_event(&mut events, st, event, "PROCEDURE", &p.name, None);
            }
            StatementKind::CreateFunction(f) => {
                let existed = self.object_exists(&f.name);
                let event = mode_event(f.mode, existed, "CREATE_FUNCTION", "ALTER_FUNCTION");
                self.push_event(&mut events, st, event, "FUNCTION", &f.name, None);
            }
            StatementKind::CreateTrigger(t) => {
                let (existed, target, name) = match &t.table {
                    Some(table) => {
                        let target_type = match self.resolve_relation_object(table) {
                            Ok((_, o)) if matches!(*o, Object::View(_)) => "VIEW",
                            _ => "TABLE",
                        };
                        let schema = t.name.schema.clone().or_else(|| table.schema.clone());
                        let name = ObjectName { schema, ..t.name.clone() };
                        let target = Some((table.name.value.clone(), target_type));
                        (self.object_exists(&name), target, name)
                    }
                    None => {
                        let existed =
                            find_database_trigger(&self.s.db, &t.name.name.value).is_some();
                        (existed, None, ObjectName::simple(t.name.name.clone()))
                    }
                };
                let event = mode_event(t.mode, existed, "CREATE_TRIGGER", "ALTER_TRIGGER");
                let pushed = self.push_event(&mut events, st, event, "TRIGGER", &name, target);
                if let Some(e) = pushed.filter(|_| t.table.is_none()) {
                    e.schema = None;
                    e.own_trigger = true;
                }
            }
            StatementKind::CreateType(c) => {
                self.push_event(&mut events, st, "CREATE_TYPE", "TYPE", &c.name, None);
            }
            StatementKind::CreateSequence(c) => {
                self.push_event(&mut events, st, "CREATE_SEQUENCE", "SEQUENCE", &c.name, None);
            }
            StatementKind::AlterSequence(c) => {
                self.push_event(&mut events, st, "ALTER_SEQUENCE", "SEQUENCE", &c.name, None);
            }
            StatementKind::CreateSchema { name, .. } => {
                let schema = ObjectName::simple(name.clone());
                let pushed =
                    self.push_event(&mut events, st, "CREATE_SCHEMA", "SCHEMA", &schema, None);
                if let Some(e) = pushed {
                    e.schema = None;
                }
            }
            StatementKind::Drop(d) => {
                for name in &d.names {
                    self.drop_event(&mut events, st, d.kind, name);
                }
            }
            _ => {}
        }
        events
    }

    /// The event of dropping `name` (a `kind`), if it exists: `DROP ... IF EXISTS` of
    /// nothing raises none.
    fn drop_event(
        &mut self,
        events: &mut Vec<DdlEvent>,
        st: &Statement,
        kind: DropKind,
        name: &ObjectName,
    ) {
        let (event, object_type) = match kind {
            DropKind::Table => ("DROP_TABLE", "TABLE"),
            DropKind::View => ("DROP_VIEW", "VIEW"),
            DropKind::Procedure => ("DROP_PROCEDURE", "PROCEDURE"),
            DropKind::Function => ("DROP_FUNCTION", "FUNCTION"),
            DropKind::Sequence => ("DROP_SEQUENCE", "SEQUENCE"),
            DropKind::Type => ("DROP_TYPE", "TYPE"),
            DropKind::Trigger => ("DROP_TRIGGER", "TRIGGER"),
            DropKind::DatabaseTrigger => {
                if find_database_trigger(&self.s.db, &name.name.value).is_some() {
                    let pushed = self.push_event(events, st, "DROP_TRIGGER", "TRIGGER", name, None);
                    if let Some(e) = pushed {
                        e.schema = None;
                    }
                }
                return;
            }
            DropKind::Schema => {
                if self.s.db.find_object("", &name.name.value).is_some() {
                    let pushed = self.push_event(events, st, "DROP_SCHEMA", "SCHEMA", name, None);
                    if let Some(e) = pushed {
                        e.schema = None;
                    }
                }
                return;
            }
            DropKind::Statistics => {
                // `table.statistics`: the statistics' name is the last part.
                let Some(table) = name.schema.clone() else { return };
                let table_name = ObjectName {
                    server: None,
                    database: None,
                    schema: name.database.clone(),
                    name: table.clone(),
                };
                let stats = ObjectName { name: name.name.clone(), ..table_name };
                let target = Some((table.value, "TABLE"));
                self.push_event(events, st, "DROP_STATISTICS", "STATISTICS", &stats, target);
                return;
            }
            // Server-level: no database trigger sees it. No synonym exists to drop.
            DropKind::Database | DropKind::ServerTrigger | DropKind::Synonym => return,
        };
        if !self.object_exists(name) {
            return;
        }
        // A DML trigger's event names its table (or view).
        let target = if kind == DropKind::Trigger { self.trigger_parent(name) } else { None };
        self.push_event(events, st, event, object_type, name, target);
    }

    /// The name and kind (`TABLE` or `VIEW`) of the object the DML trigger `name` is on.
    fn trigger_parent(&mut self, name: &ObjectName) -> Option<(String, &'static str)> {
        let db = self.database_of(name.database.as_ref()).ok()?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        let Some(Object::Trigger(t)) = db.find_object(schema, &name.name.value).as_deref().cloned()
        else {
            return None;
        };
        let parent = db.catalog().get(t.table)?;
        let kind = if matches!(*parent, Object::View(_)) { "VIEW" } else { "TABLE" };
        Some((parent.name().1.to_string(), kind))
    }

    /// Whether the schema-scoped object `name` exists now.
    fn object_exists(&mut self, name: &ObjectName) -> bool {
        let Ok(db) = self.database_of(name.database.as_ref()) else { return false };
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        db.find_object(schema, &name.name.value).is_some()
    }

    /// Adds the event `event` on `name` (of `object_type`) if its database has a DDL trigger,
    /// and returns it for the caller to adjust (a schema's or DDL trigger's has no
    /// `SchemaName`). Temporary objects (`#t`, and an index or statistics on one) raise none:
    /// they are tempdb's.
    fn push_event<'e>(
        &mut self,
        events: &'e mut Vec<DdlEvent>,
        st: &Statement,
        event: &'static str,
        object_type: &'static str,
        name: &ObjectName,
        target: Option<(String, &'static str)>,
    ) -> Option<&'e mut DdlEvent> {
        let temporary = |n: &str| n.starts_with('#');
        if temporary(&name.name.value) || target.as_ref().is_some_and(|(t, _)| temporary(t)) {
            return None;
        }
        let db = self.database_of(name.database.as_ref()).ok()?;
        if db.is_temp() || !db.has_database_triggers() {
            return None;
        }
        let (ty, _, _) = ddl_event_types::find(event)?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str()).to_string();
        events.push(DdlEvent {
            db,
            event: (event, ty),
            object_type,
            schema: Some(schema),
            object: name.name.value.clone(),
            target,
            new_name: None,
            command: self.statement_text(st),
            own_trigger: false,
        });
        events.last_mut()
    }

    /// The statement as written, from the text its frame was parsed from; as Walden prints
    /// it where that text is not known.
    fn statement_text(&self, st: &Statement) -> String {
        let source = self.s.frames.last().and_then(|f| f.source.as_deref());
        source
            .and_then(|text| text.get(st.span.start..st.span.end))
            .map_or_else(|| st.kind.to_string(), str::to_string)
    }

    /// RENAME, raised by `sp_rename` (run as `command`) of `object` (of `object_type`, in
    /// `schema`) to `new_name`, for the database's DDL triggers; `target` is a column's or
    /// index's table.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rename_event(
        &mut self,
        db: &Arc<Database>,
        object_type: &'static str,
        schema: &str,
        object: &str,
        target: Option<(String, &'static str)>,
        new_name: &str,
        command: String,
    ) -> Step<()> {
        if db.is_temp() || !db.has_database_triggers() {
            return Ok(());
        }
        let Some((ty, _, _)) = ddl_event_types::find("RENAME") else { return Ok(()) };
        let event = DdlEvent {
            db: Arc::clone(db),
            event: ("RENAME", ty),
            object_type,
            schema: Some(schema.to_string()),
            object: object.to_string(),
            target,
            new_name: Some(new_name.to_string()),
            command,
            own_trigger: false,
        };
        self.fire_ddl_triggers(vec![event])
    }

    /// Runs the DDL triggers `events` fire (see the module doc).
    pub(crate) fn fire_ddl_triggers(&mut self, events: Vec<DdlEvent>) -> Step<()> {
        for event in events {
            let running = self.s.running_triggers.last().map(|r| r.id);
            let mut fired = Vec::new();
            for def in event.db.triggers_on(DATABASE_TRIGGER_PARENT) {
                // Not itself directly, as a DML trigger does not (RECURSIVE_TRIGGERS off).
                let own = event.own_trigger && def.name.eq_ignore_ascii_case(&event.object);
                if def.disabled || Some(def.id) == running || own {
                    continue;
                }
                let batch = self.s.parsed(&def.text)?;
                let Some(trigger) = database_trigger(&batch) else { continue };
                let covers = trigger.ddl_events.iter().any(|named| {
                    ddl_event_types::find(&named.value)
                        .is_some_and(|(ty, _, _)| ddl_event_types::covers(ty, event.event.1))
                });
                if covers {
                    fired.push((def, batch));
                }
            }
            if fired.is_empty() {
                continue;
            }
            if self.s.running_triggers.len() >= MAX_NESTING {
                return Err(SqlError::new(
                    217,
                    "Maximum stored procedure, function, trigger, or view nesting level exceeded (limit 32).",
                )
                .into());
            }
            let data = self.event_data(&event)?;
            for (def, batch) in &fired {
                let Some(trigger) = database_trigger(batch) else { continue };
                let running = RunningTrigger {
                    id: def.id,
                    columns: Vec::new(),
                    updated: Vec::new(),
                    event_data: Some(data.clone()),
                };
                self.run_trigger_body(running, def, &trigger.body, &event.db, 0)?;
            }
        }
        Ok(())
    }

    /// `EVENTDATA()` of `event`: SQL Server's `EVENT_INSTANCE` document, as an xml value.
    fn event_data(&self, event: &DdlEvent) -> Result<Value, SqlError> {
        let mut xml = String::with_capacity(512 + event.command.len());
        let mut element = |name: &str, value: &str| {
            xml.push('<');
            xml.push_str(name);
            xml.push('>');
            escape_into(&mut xml, value);
            xml.push_str("</");
            xml.push_str(name);
            xml.push('>');
        };
        element("EventType", event.event.0);
        element("PostTime", &post_time());
        element("SPID", &self.s.spid.to_string());
        element("ServerName", "walden");
        element("LoginName", "sa");
        element("UserName", "dbo");
        element("DatabaseName", event.db.name());
        if let Some(schema) = &event.schema {
            element("SchemaName", schema);
        }
        element("ObjectName", &event.object);
        element("ObjectType", event.object_type);
        if let Some(new_name) = &event.new_name {
            element("NewObjectName", new_name);
        }
        if let Some((target, target_type)) = &event.target {
            element("TargetObjectName", target);
            element("TargetObjectType", target_type);
        }
        let on_off = |on: bool| if on { "ON" } else { "OFF" };
        let semantics = &self.s.opts.semantics;
        let options = format!(
            "<SetOptions ANSI_NULLS=\"{}\" ANSI_NULL_DEFAULT=\"{}\" ANSI_PADDING=\"{}\" QUOTED_IDENTIFIER=\"{}\" ENCRYPTED=\"FALSE\" />",
            on_off(semantics.ansi_nulls),
            on_off(semantics.ansi_null_dflt_on),
            on_off(semantics.ansi_padding),
            on_off(semantics.quoted_identifier),
        );
        let mut command = String::new();
        escape_into(&mut command, &event.command);
        let text = format!(
            "<EVENT_INSTANCE>{xml}<TSQLCommand>{options}<CommandText>{command}</CommandText></TSQLCommand></EVENT_INSTANCE>"
        );
        scalar::xml::typed(text)
    }
}

/// `DROP TRIGGER [IF EXISTS] name ON ALL SERVER`: there are no server-level triggers
/// (creating one is 40514), so the name is never found.
pub(crate) fn drop_server_trigger(name: &ObjectName, if_exists: bool) -> Result<(), SqlError> {
    if if_exists {
        return Ok(());
    }
    Err(SqlError::new(
        3701,
        format!(
            "Cannot drop the trigger '{}', because it does not exist or you do not have permission.",
            crate::exec::execute::query::display_name(name)
        ),
    ))
}

/// The DDL trigger of the current database named `name`, if any.
fn find_database_trigger(db: &Database, name: &str) -> Option<TriggerDef> {
    db.triggers_on(DATABASE_TRIGGER_PARENT).into_iter().find(|t| t.name.eq_ignore_ascii_case(name))
}

/// A DDL trigger's text, parsed: its event list and body.
fn database_trigger(batch: &crate::ast::Batch) -> Option<&CreateTrigger> {
    batch.statements.iter().find_map(|s| match &s.kind {
        StatementKind::CreateTrigger(t) if t.table.is_none() => Some(&**t),
        _ => None,
    })
}

/// The events a DDL trigger's stored text names, each with the group it was named by: each
/// single event its `FOR` list covers, for `sys.trigger_events`.
pub(crate) fn trigger_events(text: &str) -> Vec<(EventType, Option<EventType>)> {
    let Ok(batch) = crate::parse_batch(text) else { return Vec::new() };
    let Some(trigger) = database_trigger(&batch) else { return Vec::new() };
    let mut events = Vec::new();
    for named in &trigger.ddl_events {
        let Some((ty, _, name)) = ddl_event_types::find(&named.value) else { continue };
        let group = (ty >= 10000).then_some((ty, name));
        for event in ddl_event_types::events_under(ty) {
            if !events.iter().any(|(e, _): &(EventType, _)| e.0 == event.0) {
                events.push((event, group));
            }
        }
    }
    events
}

/// The moment now as `PostTime` shows it: `GETDATE()` in ISO 8601 (style 126).
fn post_time() -> String {
    let Some(Ok(now)) = scalar::call("GETDATE", Vec::new()) else { return String::new() };
    let text = walden_engine::types::SqlType::VarChar(walden_engine::types::Len::N(30));
    scalar::convert(now, text, Some(126)).map(|v| scalar::to_text(&v)).unwrap_or_default()
}

/// `text` escaped as xml element content.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
}
