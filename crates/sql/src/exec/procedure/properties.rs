//! Extended properties: `sp_addextendedproperty`, `sp_updateextendedproperty`,
//! `sp_dropextendedproperty`, `sys.extended_properties` and `fn_listextendedproperty`.
//!
//! A property names its target with up to three (type, name) levels, as in SQL Server:
//! nothing for the database; `SCHEMA` (or the older `USER`) and a schema; then `TABLE`,
//! `VIEW`, `PROCEDURE`, `FUNCTION` or `SEQUENCE` and an object of that schema; then `COLUMN`,
//! `INDEX` or `TRIGGER` of that object. The engine keeps each property of a database in
//! catalog entries of its own ([`walden_engine::catalog::PropertiesDef`]), changed in the
//! session's transaction like any DDL; the properties of a dropped object, column or index go
//! with it. A value is at most 7,500 bytes (15097), as in SQL Server; their number is not
//! limited.
//!
//! A schema's properties are keyed by a stable id: the fixed schemas' own (`dbo` 1, `guest`
//! 2, `INFORMATION_SCHEMA` 3, `sys` 4), or the object id of the schema's `CREATE SCHEMA`.
//! Walden numbers the other schemas in `sys.schemas` by name order, which another schema may
//! change, so `sys.extended_properties.major_id` shows that number as it is now.

use std::sync::Arc;

use walden_engine::catalog::{ExtendedProperty, Object};
use walden_engine::database::Database;
use walden_engine::types::{SqlType, Value};

use crate::ast::ExecProcedure;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::sysviews::schema_ids;
use crate::exec::{ColumnInfo, RowSet, SqlError};

/// The parameters the three procedures take, in order (`sp_dropextendedproperty` has no
/// `@value`).
const LEVELS: [&str; 6] =
    ["@level0type", "@level0name", "@level1type", "@level1name", "@level2type", "@level2name"];

/// The schemas whose ids do not depend on what else the database holds.
const FIXED_SCHEMAS: [(&str, u32); 4] =
    [("dbo", 1), ("guest", 2), ("INFORMATION_SCHEMA", 3), ("sys", 4)];

/// What the three procedures do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PropertyChange {
    Add,
    Update,
    Drop,
}

impl PropertyChange {
    fn procedure(self) -> &'static str {
        match self {
            PropertyChange::Add => "sp_addextendedproperty",
            PropertyChange::Update => "sp_updateextendedproperty",
            PropertyChange::Drop => "sp_dropextendedproperty",
        }
    }
}

/// A property's target: its class, ids, and the name messages show (`dbo.t.c`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    class: u8,
    major: u32,
    minor: u32,
    shown: String,
}

/// Msg 15600.
fn invalid_parameter(procedure: &str) -> SqlError {
    SqlError::new(
        15600,
        format!("An invalid parameter or option was specified for procedure '{procedure}'."),
    )
}

/// Msg 15135.
fn not_permitted(shown: &str) -> SqlError {
    SqlError::new(
        15135,
        format!(
            "Object is invalid. Extended properties are not permitted on '{shown}', or the \
             object does not exist."
        ),
    )
}

/// The name of the fixed schema with id `id`.
fn fixed_schema_name(id: u32) -> Option<&'static str> {
    FIXED_SCHEMAS.iter().find(|&&(_, i)| i == id).map(|&(n, _)| n)
}

/// The largest value of a property, in bytes (SQL Server's limit).
const MAX_VALUE_BYTES: usize = 7500;

/// The id of a fixed schema named `name`.
fn fixed_schema(name: &str) -> Option<u32> {
    FIXED_SCHEMAS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|&(_, id)| id)
}

/// `class_desc` of a class.
fn class_desc(class: u8) -> &'static str {
    match class {
        0 => "DATABASE",
        1 => "OBJECT_OR_COLUMN",
        3 => "SCHEMA",
        _ => "INDEX",
    }
}

/// Whether `object` is of the level-1 type `ty` (upper case).
fn is_kind(object: &Object, ty: &str) -> bool {
    matches!(
        (ty, object),
        ("TABLE", Object::Table(_))
            | ("VIEW", Object::View(_))
            | ("PROCEDURE", Object::Procedure(_))
            | ("FUNCTION", Object::Function(_))
            | ("SEQUENCE", Object::Sequence(_))
    )
}

/// The (type, name) pairs of the levels, types in upper case; a missing type or name is
/// `None`.
type Levels = [(Option<String>, Option<String>); 3];

/// Resolves a target from its levels, every name given (the procedures' rule); `procedure`
/// names the caller in 15600.
fn resolve(db: &Database, levels: &Levels, procedure: &str) -> Result<Target, SqlError> {
    let given = levels.iter().take_while(|(ty, _)| ty.is_some()).count();
    if levels[given..].iter().any(|(ty, name)| ty.is_some() || name.is_some())
        || levels[..given].iter().any(|(_, name)| name.is_none())
    {
        return Err(invalid_parameter(procedure));
    }
    let name = |i: usize| levels[i].1.clone().unwrap_or_default();
    let ty = |i: usize| levels[i].0.clone().unwrap_or_default();
    if given == 0 {
        return Ok(Target { class: 0, major: 0, minor: 0, shown: db.name().to_string() });
    }
    if !matches!(ty(0).as_str(), "SCHEMA" | "USER") {
        return Err(invalid_parameter(procedure));
    }
    let schema = name(0);
    if given == 1 {
        let id = fixed_schema(&schema)
            .or_else(|| {
                db.find_object("", &schema)
                    .filter(|o| matches!(**o, Object::Schema(_)))
                    .map(|o| o.id())
            })
            .ok_or_else(|| not_permitted(&schema))?;
        return Ok(Target { class: 3, major: id, minor: 0, shown: schema });
    }
    if !matches!(ty(1).as_str(), "TABLE" | "VIEW" | "PROCEDURE" | "FUNCTION" | "SEQUENCE") {
        return Err(invalid_parameter(procedure));
    }
    let object_shown = format!("{schema}.{}", name(1));
    let object = db
        .find_object(&schema, &name(1))
        .filter(|o| is_kind(o, &ty(1)))
        .ok_or_else(|| not_permitted(&object_shown))?;
    if given == 2 {
        return Ok(Target { class: 1, major: object.id(), minor: 0, shown: object_shown });
    }
    let shown = format!("{object_shown}.{}", name(2));
    let child = name(2);
    match (ty(2).as_str(), &*object) {
        ("COLUMN", Object::Table(t)) => t
            .columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(&child))
            .map(|c| Target { class: 1, major: t.id, minor: c as u32 + 1, shown: shown.clone() }),
        ("INDEX", Object::Table(t)) => {
            t.indexes.iter().find(|i| !i.is_heap() && i.name.eq_ignore_ascii_case(&child)).map(
                |i| Target { class: 7, major: t.id, minor: u32::from(i.id), shown: shown.clone() },
            )
        }
        ("TRIGGER", Object::Table(t)) => db
            .triggers_on(t.id)
            .into_iter()
            .find(|tr| tr.name.eq_ignore_ascii_case(&child))
            .map(|tr| Target { class: 1, major: tr.id, minor: 0, shown: shown.clone() }),
        ("COLUMN" | "INDEX" | "TRIGGER", _) => None,
        _ => return Err(invalid_parameter(procedure)),
    }
    .ok_or_else(|| not_permitted(&shown))
}

impl Run<'_> {
    /// `sp_addextendedproperty`, `sp_updateextendedproperty`, `sp_dropextendedproperty`:
    /// `@name`, `@value` (not for a drop), then the levels. 15233 for adding a property the
    /// target has, 15217 for changing one it has not.
    pub(crate) fn change_extended_property(
        &mut self,
        change: PropertyChange,
        p: &ExecProcedure,
    ) -> Result<(), SqlError> {
        let procedure = change.procedure();
        let mut params = vec!["@name"];
        if change != PropertyChange::Drop {
            params.push("@value");
        }
        params.extend(LEVELS);
        let args = self.procedure_arguments(procedure, p, &params)?;
        let text = |v: &Option<Value>| v.as_ref().map(|v| scalar::to_text(v).trim().to_string());
        let Some(name) = text(&args[0]) else {
            return Err(invalid_parameter(procedure));
        };
        let value = match change {
            PropertyChange::Drop => Value::Null,
            _ => match args[1].clone() {
                Some(v) => scalar::convert(v, SqlType::Variant, None)?,
                None => Value::Null,
            },
        };
        let size = match &value {
            Value::Str(s) => s.len(),
            Value::NStr(s) => 2 * s.encode_utf16().count(),
            Value::Binary(b) => b.len(),
            _ => 0,
        };
        if size > MAX_VALUE_BYTES {
            return Err(SqlError::new(
                15097,
                "The size associated with an extended property cannot be more than 7,500 bytes.",
            ));
        }
        let first_level = params.len() - LEVELS.len();
        let level = |i: usize| {
            let ty = text(&args[first_level + 2 * i]).map(|t| t.to_ascii_uppercase());
            (ty, text(&args[first_level + 2 * i + 1]))
        };
        let levels = [level(0), level(1), level(2)];
        let db = Arc::clone(&self.s.db);
        let target = resolve(&db, &levels, procedure)?;
        let mut entries = db.extended_properties();
        let at = entries.iter().position(|e| {
            e.class == target.class
                && e.major_id == target.major
                && e.minor_id == target.minor
                && e.name.eq_ignore_ascii_case(&name)
        });
        match (change, at) {
            (PropertyChange::Add, Some(_)) => {
                return Err(SqlError::new(
                    15233,
                    format!(
                        "Property cannot be added. Property '{name}' already exists for '{}'.",
                        target.shown
                    ),
                ))
            }
            (PropertyChange::Update | PropertyChange::Drop, None) => {
                return Err(SqlError::new(
                    15217,
                    format!(
                        "Property cannot be updated or deleted. Property '{name}' does not \
                         exist for '{}'.",
                        target.shown
                    ),
                ))
            }
            (PropertyChange::Add, None) => entries.push(ExtendedProperty {
                class: target.class,
                major_id: target.major,
                minor_id: target.minor,
                name,
                value,
            }),
            (PropertyChange::Update, Some(at)) => entries[at].value = value,
            (PropertyChange::Drop, Some(at)) => {
                entries.remove(at);
            }
        }
        self.tx().set_extended_properties(&db, entries).map_err(|e| self.s.engine_error(e))
    }

    /// After ALTER TABLE dropped columns of `table` at 1-based positions `dropped` (of the
    /// old definition): their properties go, and later columns' properties follow their
    /// columns' new positions.
    pub(crate) fn columns_dropped(
        &mut self,
        db: &Arc<Database>,
        table: u32,
        dropped: &[u32],
    ) -> Result<(), SqlError> {
        let mut entries = db.extended_properties();
        let count = entries.len();
        let on_column =
            |e: &ExtendedProperty| e.class == 1 && e.major_id == table && e.minor_id > 0;
        entries.retain(|e| !(on_column(e) && dropped.contains(&e.minor_id)));
        let mut changed = entries.len() != count;
        for e in entries.iter_mut().filter(|e| on_column(e)) {
            let shift = dropped.iter().filter(|&&d| d < e.minor_id).count() as u32;
            e.minor_id -= shift;
            changed |= shift > 0;
        }
        if !changed {
            return Ok(());
        }
        self.tx().set_extended_properties(db, entries).map_err(|e| self.s.engine_error(e))
    }

    /// `fn_listextendedproperty(name, level0type, level0name, level1type, level1name,
    /// level2type, level2name)`: the properties (all, for a NULL name) of the targets at the
    /// deepest level given a type, where a NULL name at that level means all of its kind.
    pub(crate) fn list_extended_properties(&self, args: &[Value]) -> Result<RowSet, SqlError> {
        const FUNCTION: &str = "fn_listextendedproperty";
        if args.len() != 7 {
            return Err(SqlError::new(
                216,
                format!("Parameters were not supplied for the function '{FUNCTION}'."),
            ));
        }
        let text = |v: &Value| (!v.is_null()).then(|| scalar::to_text(v).trim().to_string());
        let wanted = text(&args[0]);
        let level = |i: usize| {
            (text(&args[1 + 2 * i]).map(|t| t.to_ascii_uppercase()), text(&args[2 + 2 * i]))
        };
        let levels = [level(0), level(1), level(2)];
        let depth = levels.iter().take_while(|(ty, _)| ty.is_some()).count();
        let db = &self.s.db;
        // The candidate targets: every one at the listed level when its name is NULL.
        // The targets and their names: the one the levels name, or every one of the listed
        // level's type when its name is NULL.
        let objtype = depth.checked_sub(1).and_then(|d| levels[d].0.clone());
        let targets: Vec<(Target, Option<String>)> = match depth.checked_sub(1) {
            None => resolve(db, &levels, FUNCTION).ok().map(|t| (t, None)).into_iter().collect(),
            Some(at) => {
                let names = match &levels[at].1 {
                    Some(name) => vec![name.clone()],
                    None => self.level_names(&levels, at),
                };
                names
                    .into_iter()
                    .filter_map(|name| {
                        let mut named = levels.clone();
                        named[at].1 = Some(name.clone());
                        resolve(db, &named, FUNCTION).ok().map(|t| (t, Some(name)))
                    })
                    .collect()
            }
        };
        let mut rows = Vec::new();
        let entries = db.extended_properties();
        for (target, objname) in targets {
            for e in entries.iter().filter(|e| {
                e.class == target.class
                    && e.major_id == target.major
                    && e.minor_id == target.minor
                    && wanted.as_ref().is_none_or(|w| e.name.eq_ignore_ascii_case(w))
            }) {
                let text = |s: &Option<String>| s.clone().map_or(Value::Null, Value::NStr);
                rows.push(vec![
                    text(&objtype),
                    text(&objname),
                    Value::NStr(e.name.clone()),
                    e.value.clone(),
                ]);
            }
        }
        let sysname = SqlType::NVarChar(walden_engine::types::Len::N(128));
        let columns = vec![
            ColumnInfo::new("objtype", sysname),
            ColumnInfo::new("objname", sysname),
            ColumnInfo::new("name", sysname),
            ColumnInfo::new("value", SqlType::Variant),
        ];
        Ok(RowSet { columns, rows })
    }

    /// The names of every target of the type at level `at`, within the levels above it.
    fn level_names(&self, levels: &Levels, at: usize) -> Vec<String> {
        let db = &self.s.db;
        let ty = levels[at].0.clone().unwrap_or_default();
        let objects = db.catalog().objects();
        match at {
            0 => schema_ids(db).into_iter().map(|(n, _)| n).collect(),
            1 => {
                let schema = levels[0].1.clone().unwrap_or_default();
                objects
                    .iter()
                    .filter(|o| o.name().0.eq_ignore_ascii_case(&schema) && is_kind(o, &ty))
                    .map(|o| o.name().1.to_string())
                    .collect()
            }
            _ => {
                let schema = levels[0].1.clone().unwrap_or_default();
                let object = levels[1].1.clone().unwrap_or_default();
                match db.find_object(&schema, &object).as_deref() {
                    Some(Object::Table(t)) => match ty.as_str() {
                        "COLUMN" => t.columns.iter().map(|c| c.name.clone()).collect(),
                        "INDEX" => t
                            .indexes
                            .iter()
                            .filter(|i| !i.is_heap())
                            .map(|i| i.name.clone())
                            .collect(),
                        "TRIGGER" => {
                            db.triggers_on(t.id).into_iter().map(|tr| tr.name.clone()).collect()
                        }
                        _ => Vec::new(),
                    },
                    _ => Vec::new(),
                }
            }
        }
    }
}

/// `sys.extended_properties`: every property of the database.
pub(crate) fn extended_properties(db: &Database) -> RowSet {
    let sysname = SqlType::NVarChar(walden_engine::types::Len::N(128));
    let columns = vec![
        ColumnInfo {
            name: "class".into(),
            ty: SqlType::TinyInt,
            nullable: false,
            collation: None,
            declared: None,
        },
        ColumnInfo {
            name: "class_desc".into(),
            ty: SqlType::NVarChar(walden_engine::types::Len::N(60)),
            nullable: true,
            collation: None,
            declared: None,
        },
        ColumnInfo {
            name: "major_id".into(),
            ty: SqlType::Int,
            nullable: false,
            collation: None,
            declared: None,
        },
        ColumnInfo {
            name: "minor_id".into(),
            ty: SqlType::Int,
            nullable: false,
            collation: None,
            declared: None,
        },
        ColumnInfo {
            name: "name".into(),
            ty: sysname,
            nullable: false,
            collation: None,
            declared: None,
        },
        ColumnInfo::new("value", SqlType::Variant),
    ];
    let schemas = schema_ids(db);
    let rows = db
        .extended_properties()
        .into_iter()
        // master's user-defined messages are stored as entries of a class of their own.
        .filter(|e| e.class != crate::exec::procedure::user_messages::MESSAGE_CLASS)
        .map(|e| {
            let mut major = i64::from(e.major_id);
            if e.class == 3 && fixed_schema_name(e.major_id).is_none() {
                // A CREATE SCHEMA's object id: shown as sys.schemas numbers the schema now.
                let name = match db.object_by_id(e.major_id).as_deref() {
                    Some(Object::Schema(s)) => s.name.clone(),
                    _ => String::new(),
                };
                major = schemas
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&name))
                    .map_or(major, |&(_, id)| id);
            }
            vec![
                Value::TinyInt(e.class),
                Value::NStr(class_desc(e.class).into()),
                Value::Int(major as i32),
                Value::Int(e.minor_id as i32),
                Value::NStr(e.name),
                e.value,
            ]
        })
        .collect();
    RowSet { columns, rows }
}
