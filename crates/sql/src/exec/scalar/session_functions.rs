//! The built-in functions the session or the catalog answers (the registry's
//! [`Kind::Session`](super::registry::Kind::Session) entries): names and ids of objects,
//! databases, schemas and types, their properties, the caught error, the login, the
//! transaction. Each takes its evaluated arguments, whose count the registry has checked.

use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::types::{Decimal, SqlType, Value};
use walden_engine::{Database, EngineError};

use crate::exec::eval::{parse_object_name, rowversion_bytes, PRODUCT_VERSION};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

type Answer = Result<Value, SqlError>;

/// Argument `i` as text; `None` if it is NULL or missing.
fn text_arg(args: &[Value], i: usize) -> Option<String> {
    args.get(i).filter(|v| !v.is_null()).map(scalar::to_text)
}

/// The error the innermost CATCH block handles.
fn caught(run: &Run<'_>) -> Option<SqlError> {
    run.caught_error().cloned()
}

// int, as SQL Server's DB_ID returns (the DMVs' database_id columns are smallint).
pub(super) fn db_id(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0) {
        None if args.is_empty() => Value::Int(run.s.db.id() as i32),
        None => Value::Null,
        Some(n) => run.s.instance.database(&n).map_or(Value::Null, |d| Value::Int(d.id() as i32)),
    })
}

/// `FORMATMESSAGE(format or msg_number, arguments...)`: the text (a `printf`-style format, or
/// message `msg_number` of `sys.messages` in the session's language) with its placeholders
/// filled in, as RAISERROR fills them; NULL for a number `sys.messages` does not have.
pub(super) fn formatmessage(run: &mut Run<'_>, args: &[Value]) -> Answer {
    let format = match &args[0] {
        Value::Null => return Ok(Value::Null),
        Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_) => {
            let number = crate::exec::session::int_of(args[0].clone())?;
            let found = i32::try_from(number).ok().and_then(|n| {
                crate::exec::procedure::user_messages::find_message(&run.s.instance, n)
            });
            match found {
                Some((text, _)) => text,
                None => return Ok(Value::Null),
            }
        }
        v => scalar::to_text(v),
    };
    Ok(Value::NStr(crate::exec::session::printf(&format, &args[1..])))
}

/// When statistics were last updated, from the catalog.
pub(super) fn stats_date(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(run.stats_date(args))
}

pub(super) fn db_name(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match args.first() {
        None => Value::NStr(run.s.db.name().to_string()),
        Some(Value::Null) => Value::Null,
        Some(v) => {
            let id = match scalar::convert(v.clone(), SqlType::Int, None)? {
                Value::Int(i) => i64::from(i),
                _ => -1,
            };
            run.s
                .instance
                .database_by_id(id)
                .map_or(Value::Null, |d| Value::NStr(d.name().to_string()))
        }
    })
}

/// SQL Server's sql_variant holds an INT here.
pub(super) fn sessionproperty(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0) {
        None => Value::Null,
        Some(option) => run.s.opts.semantics.session_property(&option),
    })
}

pub(super) fn object_id(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0) {
        None => Value::Null,
        Some(n) => match system_object(&n) {
            Some(id) => Value::Int(id),
            None => run.object_id(&n).map_or(Value::Null, |id| Value::Int(id as i32)),
        },
    })
}

/// The id of the system view or function `text` names with the `sys` schema
/// (`sys.dm_os_schedulers`, `master.sys.objects`).
fn system_object(text: &str) -> Option<i32> {
    let name = parse_object_name(text)?;
    let sys = name.schema.as_ref().is_some_and(|s| s.value.eq_ignore_ascii_case("sys"));
    sys.then(|| crate::exec::sysviews::system_objects::system_object_id(&name.name.value))?
}

/// By the ids `sys.schemas` gives, CREATE SCHEMA's schemas included.
pub(super) fn schema_name(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match args.first() {
        None => Value::NStr("dbo".to_string()),
        Some(v) => match scalar::convert(v.clone(), SqlType::BigInt, None)? {
            Value::BigInt(id) => crate::exec::sysviews::schema_ids(&run.s.db)
                .into_iter()
                .find(|(_, i)| *i == id)
                .map_or(Value::Null, |(n, _)| Value::NStr(n)),
            _ => Value::Null,
        },
    })
}

pub(super) fn schema_id(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0) {
        None if args.is_empty() => Value::Int(1),
        None => Value::Null,
        Some(name) => crate::exec::sysviews::schema_ids(&run.s.db)
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&name))
            .map_or(Value::Null, |(_, id)| Value::Int(id as i32)),
    })
}

pub(super) fn type_name(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match args.first() {
        Some(Value::Null) | None => Value::Null,
        Some(id) => {
            let id = int_value(id)?;
            match crate::exec::sysviews::type_name(id.into()) {
                Some(n) => Value::NStr(n.to_string()),
                None => match run.s.db.object_by_id(id).as_deref() {
                    Some(Object::Type(t)) => Value::NStr(t.name.clone()),
                    _ => Value::Null,
                },
            }
        }
    })
}

pub(super) fn type_id(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0) {
        None => Value::Null,
        Some(n) => match crate::exec::sysviews::type_id(&n) {
            Some(id) => Value::Int(id as i32),
            None => {
                let (schema, name) = n.split_once('.').unwrap_or(("dbo", n.as_str()));
                let unquote = |s: &str| s.trim_matches(|c| c == '[' || c == ']').to_string();
                match run.s.db.find_object(&unquote(schema), &unquote(name)).as_deref() {
                    Some(Object::Type(t)) => Value::Int(t.id as i32),
                    _ => Value::Null,
                }
            }
        },
    })
}

// Every session is `sa`: a member of sysadmin (and public), mapped to dbo in every database,
// so it holds every permission. A role SQL Server does not have is NULL, as there.

pub(super) fn is_srvrolemember(_: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0).map(|r| r.to_ascii_lowercase()).as_deref() {
        Some("sysadmin" | "public") => Value::Int(1),
        Some(
            "serveradmin" | "securityadmin" | "processadmin" | "setupadmin" | "bulkadmin"
            | "diskadmin" | "dbcreator",
        ) => Value::Int(0),
        _ => Value::Null,
    })
}

/// IS_MEMBER and IS_ROLEMEMBER.
pub(super) fn is_member(_: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0).map(|r| r.to_ascii_lowercase()).as_deref() {
        Some("db_owner" | "public") => Value::Int(1),
        Some(
            "db_accessadmin" | "db_securityadmin" | "db_ddladmin" | "db_backupoperator"
            | "db_datareader" | "db_datawriter" | "db_denydatareader" | "db_denydatawriter",
        ) => Value::Int(0),
        _ => Value::Null,
    })
}

pub(super) fn has_dbaccess(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0) {
        None => Value::Null,
        Some(n) => run.s.instance.database(&n).map_or(Value::Null, |_| Value::Int(1)),
    })
}

pub(super) fn has_perms_by_name(_: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(Value::Int(1))
}

pub(super) fn cursor_status(run: &mut Run<'_>, args: &[Value]) -> Answer {
    run.s.cursor_status(args)
}

/// SUSER_SNAME, SUSER_NAME, ORIGINAL_LOGIN, SYSTEM_USER.
pub(super) fn login_name(_: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(Value::NStr("sa".to_string()))
}

/// USER_NAME(id) names a database principal (those of sys.database_principals); without an
/// id, or for CURRENT_USER, SESSION_USER and USER, the session's user, dbo.
pub(super) fn user_name(_: &mut Run<'_>, args: &[Value]) -> Answer {
    let Some(id) = args.first().filter(|a| !a.is_null()) else {
        return Ok(Value::NStr("dbo".to_string()));
    };
    let principals = [
        (0, "public"),
        (1, "dbo"),
        (2, "guest"),
        (3, "INFORMATION_SCHEMA"),
        (4, "sys"),
        (16384, "db_owner"),
    ];
    let id = int_value(id)?;
    Ok(principals
        .iter()
        .find(|(p, _)| i64::from(*p) == i64::from(id))
        .map_or(Value::Null, |(_, n)| Value::NStr((*n).to_string())))
}

pub(super) fn host_name(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(Value::NStr(run.s.client().host))
}

pub(super) fn app_name(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(Value::NStr(run.s.client().program))
}

pub(super) fn session_context(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(run.session_context(&args[0]))
}

/// No transaction's row versions are tracked apart: the next one to be handed out.
pub(super) fn min_active_rowversion(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(rowversion_bytes(run.s.db.rowversion_current().saturating_add(1)))
}

pub(super) fn applock_mode(run: &mut Run<'_>, args: &[Value]) -> Answer {
    run.applock_mode(args)
}

pub(super) fn applock_test(run: &mut Run<'_>, args: &[Value]) -> Answer {
    run.applock_test(args)
}

/// OBJECT_NAME(id [, database id]).
pub(super) fn object_name(run: &mut Run<'_>, args: &[Value]) -> Answer {
    object_name_part(run, args, false)
}

/// OBJECT_SCHEMA_NAME gives the schema of what OBJECT_NAME names.
pub(super) fn object_schema_name(run: &mut Run<'_>, args: &[Value]) -> Answer {
    object_name_part(run, args, true)
}

fn object_name_part(run: &mut Run<'_>, args: &[Value], schema: bool) -> Answer {
    Ok(match args.first() {
        None | Some(Value::Null) => Value::Null,
        Some(id) => {
            let db = match args.get(1) {
                None | Some(Value::Null) => Some(Arc::clone(&run.s.db)),
                Some(db_id) => run.s.instance.database_by_id(int_value(db_id)?.into()),
            };
            let id = int_value(id)?;
            db.and_then(|db| db.object_by_id(id)).map_or(Value::Null, |o| {
                let (s, n) = o.name();
                Value::NStr(if schema { s } else { n }.to_string())
            })
        }
    })
}

/// The running transaction's id, as the `sys.dm_tran_*` views show it.
pub(super) fn current_transaction_id(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(Value::BigInt(i64::try_from(run.tx().id()).unwrap_or(i64::MAX)))
}

/// OBJECTPROPERTY and OBJECTPROPERTYEX.
pub(super) fn objectproperty(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match (args.first(), text_arg(args, 1)) {
        (Some(id), Some(property)) if !id.is_null() => {
            let object = run.s.db.catalog().get(int_value(id)?);
            object.as_deref().map_or(Value::Null, |o| object_property(o, &property))
        }
        _ => Value::Null,
    })
}

pub(super) fn columnproperty(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match (args.first(), text_arg(args, 1), text_arg(args, 2)) {
        (Some(id), Some(column), Some(property)) if !id.is_null() => {
            match run.s.db.catalog().get(int_value(id)?).as_deref() {
                Some(Object::Table(t)) => t
                    .columns
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(&column))
                    .map_or(Value::Null, |c| column_property(t, c, &property)),
                _ => Value::Null,
            }
        }
        _ => Value::Null,
    })
}

/// A module's text as it was created; tables and sequences have none.
pub(super) fn object_definition(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match args.first() {
        None | Some(Value::Null) => Value::Null,
        Some(id) => {
            let object = run.s.db.catalog().get(int_value(id)?);
            object
                .as_deref()
                .and_then(Object::module_text)
                .map_or(Value::Null, |text| Value::NStr(text.to_string()))
        }
    })
}

pub(super) fn col_name(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match (args.first(), args.get(1)) {
        (Some(table), Some(column)) if !table.is_null() && !column.is_null() => {
            let (table, column) = (int_value(table)?, int_value(column)?);
            match run.s.db.catalog().get(table).as_deref() {
                Some(Object::Table(t)) => (column as usize)
                    .checked_sub(1)
                    .and_then(|c| t.columns.get(c))
                    .map_or(Value::Null, |c| Value::NStr(c.name.clone())),
                _ => Value::Null,
            }
        }
        _ => Value::Null,
    })
}

/// SQL Server's sql_variant holds an INT; NULL for an unknown collation or property.
pub(super) fn collationproperty(_: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match (text_arg(args, 0), text_arg(args, 1)) {
        (Some(name), Some(property)) => scalar::collation::collation(&name)
            .ok()
            .and_then(|c| c.property(&property))
            .map_or(Value::Null, Value::Int),
        _ => Value::Null,
    })
}

pub(super) fn databasepropertyex(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match (text_arg(args, 0), text_arg(args, 1)) {
        (Some(db), Some(property)) => match run.s.instance.database(&db) {
            Ok(db) => database_property(&db, &property),
            Err(EngineError::DatabaseSetOffline(_)) if property.eq_ignore_ascii_case("status") => {
                Value::NStr("OFFLINE".into())
            }
            Err(_) => Value::Null,
        },
        _ => Value::Null,
    })
}

pub(super) fn scope_identity(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(run.scope_identity().map_or(Value::Null, |v| Value::Decimal(Decimal::from_i64(v))))
}

pub(super) fn ident_current(run: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0) {
        None => Value::Null,
        Some(n) => {
            run.ident_current(&n).map_or(Value::Null, |v| Value::Decimal(Decimal::from_i64(v)))
        }
    })
}

pub(super) fn error_number(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(caught(run).map_or(Value::Null, |e| Value::Int(e.number)))
}

pub(super) fn error_message(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(caught(run).map_or(Value::Null, |e| Value::NStr(e.message)))
}

pub(super) fn error_severity(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(caught(run).map_or(Value::Null, |e| Value::Int(e.severity.into())))
}

pub(super) fn error_state(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(caught(run).map_or(Value::Null, |e| Value::Int(e.state.into())))
}

pub(super) fn error_line(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(caught(run).map_or(Value::Null, |e| Value::Int(e.line as i32)))
}

pub(super) fn error_procedure(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(caught(run).and_then(|e| e.procedure).map_or(Value::Null, Value::NStr))
}

pub(super) fn xact_state(run: &mut Run<'_>, _: &[Value]) -> Answer {
    Ok(Value::SmallInt(i16::from(run.s.trancount > 0)))
}

pub(super) fn serverproperty(_: &mut Run<'_>, args: &[Value]) -> Answer {
    Ok(match text_arg(args, 0) {
        None => Value::Null,
        Some(p) => server_property(&p),
    })
}

impl Run<'_> {
    /// OBJECT_ID('[db.][schema.]name'), temporary tables included.
    pub(crate) fn object_id(&mut self, text: &str) -> Option<u32> {
        let name = parse_object_name(text)?;
        if name.name.value.starts_with('#') {
            // A temporary procedure, else a temporary table (`##t` too: the procedures'
            // lookup answers for every `##` name, found or not).
            if let Some((_, Some(found))) = self.temp_procedure(&name.name.value) {
                return Some(found.id());
            }
            let internal = self.s.temp_tables.get(&name.name.value.to_ascii_lowercase())?.clone();
            return self.s.instance.tempdb().find_object("dbo", &internal).map(|o| o.id());
        }
        let db = self.database_of(name.database.as_ref()).ok()?;
        let schema = name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        db.find_object(schema, &name.name.value).map(|o| o.id())
    }

    /// IDENT_CURRENT('name'): the last identity value handed out in the table.
    fn ident_current(&mut self, text: &str) -> Option<i64> {
        let name = parse_object_name(text)?;
        let (db, obj) = self.resolve_table_object(&name).ok()?;
        match &*obj {
            Object::Table(t) => db.identity_current(t),
            _ => None,
        }
    }
}

/// `OBJECTPROPERTY(id, property)` for the properties scripts test objects with; NULL for any
/// other property, as SQL Server gives for one that does not apply.
fn object_property(o: &Object, property: &str) -> Value {
    let yes = |b: bool| Value::Int(i32::from(b));
    let table = match o {
        Object::Table(t) => Some(t),
        _ => None,
    };
    let trigger = match o {
        Object::Trigger(t) => Some(t),
        _ => None,
    };
    let trigger_events =
        || trigger.and_then(|t| crate::exec::module::trigger::trigger_kind(&t.text));
    let fires_on = |event: crate::ast::TriggerEvent| {
        yes(trigger_events().is_some_and(|(_, events)| events.contains(&event)))
    };
    match property.to_ascii_lowercase().as_str() {
        "isusertable" | "istable" => yes(table.is_some()),
        "isview" => yes(matches!(o, Object::View(_))),
        "isprocedure" => yes(matches!(o, Object::Procedure(_))),
        "istrigger" => yes(trigger.is_some()),
        "isscalarfunction" => yes(matches!(o, Object::Function(f) if !f.returns_table)),
        "istablefunction" => yes(matches!(o, Object::Function(f) if f.returns_table)),
        "isinlinefunction" => {
            yes(matches!(o, Object::Function(f) if f.returns_table && !f.multi_statement))
        }
        "issystemtable" | "ismsshipped" => yes(false),
        "ownerid" | "schemaid" => Value::Int(1),
        "tablehasidentity" => yes(table.is_some_and(|t| t.identity_column().is_some())),
        "tablehasprimarykey" => yes(table.is_some_and(|t| t.indexes.iter().any(|i| i.primary_key))),
        "tablehasclustindex" => yes(table.is_some_and(|t| t.primary().is_ok_and(|p| !p.is_heap()))),
        "tablehasindex" => {
            yes(table
                .is_some_and(|t| t.primary().is_ok_and(|p| !p.is_heap()) || t.indexes.len() > 1))
        }
        "execistriggerdisabled" => yes(trigger.is_some_and(|t| t.disabled)),
        "execisaftertrigger" => yes(trigger_events().is_some_and(|(instead, _)| !instead)),
        "execisinsteadoftrigger" => yes(trigger_events().is_some_and(|(instead, _)| instead)),
        "execisinserttrigger" => fires_on(crate::ast::TriggerEvent::Insert),
        "execisupdatetrigger" => fires_on(crate::ast::TriggerEvent::Update),
        "execisdeletetrigger" => fires_on(crate::ast::TriggerEvent::Delete),
        _ => Value::Null,
    }
}

/// `COLUMNPROPERTY(id, column, property)` for column `c` of table `t`: AllowsNull,
/// IsIdentity, ColumnId, Precision (a string's length), Scale, IsComputed; NULL otherwise.
fn column_property(t: &walden_engine::catalog::TableDef, c: usize, property: &str) -> Value {
    let column = &t.columns[c];
    let yes = |b: bool| Value::Int(i32::from(b));
    match property.to_ascii_lowercase().as_str() {
        "allowsnull" => yes(column.nullable),
        "isidentity" => yes(column.identity.is_some()),
        "columnid" => Value::Int(c as i32 + 1),
        "iscomputed" => yes(column.computed.is_some()),
        "isrowguidcol" => yes(false),
        "precision" => crate::exec::sysviews::column_precision_scale(column.ty).0,
        "scale" => crate::exec::sysviews::column_precision_scale(column.ty).1,
        _ => Value::Null,
    }
}

/// An object, column or database id argument (-1, which no object has, if it is out of range).
fn int_value(v: &Value) -> Result<u32, SqlError> {
    Ok(match scalar::convert(v.clone(), SqlType::BigInt, None)? {
        Value::BigInt(n) => u32::try_from(n).unwrap_or(u32::MAX),
        _ => u32::MAX,
    })
}

/// `DATABASEPROPERTYEX(database, property)` for the properties scripts check before acting
/// (recovery model, state, collation); NULL for others, as SQL Server answers an unknown one.
fn database_property(db: &Database, property: &str) -> Value {
    let text = |s: &str| Value::NStr(s.to_string());
    match property.to_ascii_lowercase().as_str() {
        "recovery" => text(db.recovery_model().name()),
        "status" => text(if db.check_online().is_ok() { "ONLINE" } else { "OFFLINE" }),
        "updateability" => text(if db.is_read_only() { "READ_ONLY" } else { "READ_WRITE" }),
        "useraccess" => text("MULTI_USER"),
        "collation" => text(crate::exec::sysviews::COLLATION),
        "isautoclose" | "isautoshrink" | "isinstandby" => Value::Int(0),
        _ => Value::Null,
    }
}

/// `SERVERPROPERTY(name)`: the properties tools and drivers ask about, NULL for any other
/// name, as SQL Server answers an unknown one. (SQL Server returns `sql_variant`; here a
/// property is NVARCHAR or INT.)
fn server_property(name: &str) -> Value {
    let (major, minor, build) = PRODUCT_VERSION;
    let text = |s: String| Value::NStr(s);
    match name.to_ascii_lowercase().as_str() {
        "productversion" => text(format!("{major}.{minor}.{build}.0")),
        "productmajorversion" => text(major.to_string()),
        "productminorversion" => text(minor.to_string()),
        "productbuild" => text(build.to_string()),
        "productlevel" => text("RTM".into()),
        "productupdatelevel" | "instancename" => Value::Null,
        // The word size in parentheses, as SQL Server's editions end: tools read it there
        // (sp_Blitz reports a "32-bit SQL Server" for an edition without "64").
        "edition" => text("Walden (64-bit)".into()),
        // 3: a full on-premises engine (Enterprise's number), not Express (4) or Azure (5).
        "engineedition" => Value::Int(3),
        "editionid" => Value::BigInt(0),
        "servername" | "machinename" | "computernamephysicalnetbios" => text("walden".into()),
        "collation" => text(crate::exec::sysviews::COLLATION.into()),
        "processid" => Value::Int(i32::try_from(std::process::id()).unwrap_or(0)),
        "isintegratedsecurityonly"
        | "isclustered"
        | "ishadrenabled"
        | "isfulltextinstalled"
        | "issingleuser"
        | "isxtpsupported"
        | "ispolybaseinstalled" => Value::Int(0),
        _ => Value::Null,
    }
}
