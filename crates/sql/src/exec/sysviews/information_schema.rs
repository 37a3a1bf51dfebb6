//! The ISO views SQL Server keeps in schema `INFORMATION_SCHEMA`, which tools and
//! object-relational mappers read to discover tables, columns, keys and procedures:
//! `TABLES`, `COLUMNS`, `SCHEMATA`, `ROUTINES`, `TABLE_CONSTRAINTS`, `KEY_COLUMN_USAGE`,
//! `REFERENTIAL_CONSTRAINTS` and `VIEWS`.
//! Columns, types and values are SQL Server's (`docs/system-views.md`); each row is computed
//! from the same catalog as the `sys.` views.

use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, Object, TableDef, ViewDef};
use walden_engine::types::{Len, SqlType, Value};

use super::catalog::{max_length, precision, scale, schema_list};
use super::{datetime, int, nstr, small, tiny, RowSet, View, ViewContext, COLLATION, SYSNAME};
use crate::exec::SqlError;

/// `nvarchar(128)`, the type of the `..._CATALOG` and `..._SCHEMA` columns.
const NAME: SqlType = SqlType::NVarChar(Len::N(128));

fn varchar(n: u16) -> SqlType {
    SqlType::VarChar(Len::N(n))
}

fn vstr(s: &str) -> Value {
    Value::Str(s.to_string())
}

/// Evaluates `INFORMATION_SCHEMA.<name>` (any letter case); `None` if there is no such view.
pub fn information_schema_view(
    ctx: &ViewContext<'_>,
    name: &str,
    args: &[Value],
) -> Option<Result<RowSet, SqlError>> {
    let view: fn(&ViewContext<'_>) -> RowSet = match name.to_ascii_uppercase().as_str() {
        "TABLES" => tables,
        "COLUMNS" => columns,
        "SCHEMATA" => schemata,
        "ROUTINES" => routines,
        "TABLE_CONSTRAINTS" => table_constraints,
        "KEY_COLUMN_USAGE" => key_column_usage,
        "REFERENTIAL_CONSTRAINTS" => referential_constraints,
        "VIEWS" => views,
        _ => return None,
    };
    if !args.is_empty() {
        return Some(Err(SqlError::new(
            215,
            format!(
                "Parameters supplied for object 'INFORMATION_SCHEMA.{name}' which is not a \
                 function. If the parameters are intended as a table hint, a WITH keyword is \
                 required."
            ),
        )));
    }
    Some(Ok(view(ctx)))
}

/// The view's database's tables, by object id.
fn table_defs(ctx: &ViewContext<'_>) -> Vec<Arc<TableDef>> {
    let objects = ctx.database.catalog().objects();
    objects
        .iter()
        .filter_map(|o| match &**o {
            Object::Table(t) => Some(Arc::clone(t)),
            _ => None,
        })
        .collect()
}

/// `INFORMATION_SCHEMA.TABLES`: tables and views.
fn tables(ctx: &ViewContext<'_>) -> RowSet {
    let catalog = ctx.database.name().to_string();
    // (catalog, schema, name, TABLE_TYPE)
    let rows: Vec<(String, String, String, &'static str)> = ctx
        .database
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::Table(t) => {
                Some((catalog.clone(), t.schema.clone(), t.name.clone(), "BASE TABLE"))
            }
            Object::View(v) => Some((catalog.clone(), v.schema.clone(), v.name.clone(), "VIEW")),
            _ => None,
        })
        .collect();
    View::<(String, String, String, &'static str)>::new()
        .opt("TABLE_CATALOG", NAME, |r| nstr(r.0.as_str()))
        .opt("TABLE_SCHEMA", NAME, |r| nstr(r.1.as_str()))
        .col("TABLE_NAME", SYSNAME, |r| nstr(r.2.as_str()))
        .opt("TABLE_TYPE", varchar(10), |r| vstr(r.3))
        .rows(&rows)
}

/// A column of a table, with its table and position.
struct ColumnRow {
    catalog: String,
    schema: String,
    table: String,
    position: usize,
    column: ColumnDef,
}

impl ColumnRow {
    fn ty(&self) -> SqlType {
        self.column.ty
    }
}

/// The type's name without its parameters, as `DATA_TYPE` shows it.
fn base_type_name(ty: SqlType) -> String {
    let name = ty.name();
    match name.split_once('(') {
        Some((base, _)) => base.to_string(),
        None => name,
    }
}

/// Characters for the character types, bytes for the binary ones, -1 for `(MAX)`.
pub(super) fn character_length(ty: SqlType) -> Value {
    match ty {
        SqlType::NChar(_) | SqlType::NVarChar(Len::N(_)) => int(max_length(ty) / 2),
        SqlType::Char(_)
        | SqlType::VarChar(_)
        | SqlType::NVarChar(Len::Max)
        | SqlType::Binary(_)
        | SqlType::VarBinary(_) => int(max_length(ty)),
        _ => Value::Null,
    }
}

fn octet_length(ty: SqlType) -> Value {
    match character_length(ty) {
        Value::Null => Value::Null,
        _ => int(max_length(ty)),
    }
}

fn is_approximate(ty: SqlType) -> bool {
    matches!(ty, SqlType::Float | SqlType::Real)
}

fn datetime_precision(ty: SqlType) -> Value {
    match ty {
        SqlType::Date => small(0),
        SqlType::DateTime => small(3),
        SqlType::Time(s) | SqlType::DateTime2(s) | SqlType::DateTimeOffset(s) => {
            small(i64::from(s))
        }
        _ => Value::Null,
    }
}

fn character_set(ty: SqlType) -> Value {
    match ty {
        SqlType::Char(_) | SqlType::VarChar(_) => nstr("iso_1"),
        SqlType::NChar(_) | SqlType::NVarChar(_) => nstr("UNICODE"),
        _ => Value::Null,
    }
}

/// `INFORMATION_SCHEMA.COLUMNS`.
fn columns(ctx: &ViewContext<'_>) -> RowSet {
    let catalog = ctx.database.name().to_string();
    let mut rows: Vec<ColumnRow> = table_defs(ctx)
        .iter()
        .flat_map(|t| {
            t.columns.iter().enumerate().map(|(i, c)| ColumnRow {
                catalog: catalog.clone(),
                schema: t.schema.clone(),
                table: t.name.clone(),
                position: i + 1,
                column: c.clone(),
            })
        })
        .collect();
    let db_catalog = ctx.database.catalog();
    for (view, columns) in ctx.view_columns {
        let Some(object) = db_catalog.get(*view) else { continue };
        let (schema, name) = object.name();
        rows.extend(columns.iter().enumerate().map(|(i, c)| ColumnRow {
            catalog: catalog.clone(),
            schema: schema.to_string(),
            table: name.to_string(),
            position: i + 1,
            column: c.clone(),
        }));
    }
    View::<ColumnRow>::new()
        .opt("TABLE_CATALOG", NAME, |r| nstr(r.catalog.as_str()))
        .opt("TABLE_SCHEMA", NAME, |r| nstr(r.schema.as_str()))
        .col("TABLE_NAME", SYSNAME, |r| nstr(r.table.as_str()))
        .opt("COLUMN_NAME", SYSNAME, |r| nstr(r.column.name.as_str()))
        .opt("ORDINAL_POSITION", SqlType::Int, |r| int(r.position as i64))
        .opt("COLUMN_DEFAULT", SqlType::NVarChar(Len::N(4000)), |r| {
            r.column.default.as_ref().map_or(Value::Null, |d| nstr(format!("({d})")))
        })
        .opt("IS_NULLABLE", varchar(3), |r| vstr(if r.column.nullable { "YES" } else { "NO" }))
        .opt("DATA_TYPE", NAME, |r| {
            if r.column.rowversion {
                nstr("timestamp")
            } else if let Some(declared) = r.column.declared {
                nstr(declared.name())
            } else {
                nstr(base_type_name(r.ty()))
            }
        })
        .opt("CHARACTER_MAXIMUM_LENGTH", SqlType::Int, |r| character_length(r.ty()))
        .opt("CHARACTER_OCTET_LENGTH", SqlType::Int, |r| octet_length(r.ty()))
        .opt("NUMERIC_PRECISION", SqlType::TinyInt, |r| {
            if r.ty().is_numeric() {
                tiny(precision(r.ty()))
            } else {
                Value::Null
            }
        })
        .opt("NUMERIC_PRECISION_RADIX", SqlType::SmallInt, |r| match r.ty() {
            t if is_approximate(t) => small(2),
            t if t.is_numeric() => small(10),
            _ => Value::Null,
        })
        .opt("NUMERIC_SCALE", SqlType::Int, |r| match r.ty() {
            SqlType::Money => int(4),
            t if t.is_numeric() && !is_approximate(t) => int(i64::from(scale(t))),
            _ => Value::Null,
        })
        .opt("DATETIME_PRECISION", SqlType::SmallInt, |r| datetime_precision(r.ty()))
        .opt("CHARACTER_SET_CATALOG", SYSNAME, |_| Value::Null)
        .opt("CHARACTER_SET_SCHEMA", SYSNAME, |_| Value::Null)
        .opt("CHARACTER_SET_NAME", SYSNAME, |r| character_set(r.ty()))
        .opt("COLLATION_CATALOG", SYSNAME, |_| Value::Null)
        .opt("COLLATION_SCHEMA", SYSNAME, |_| Value::Null)
        .opt("COLLATION_NAME", SYSNAME, |r| {
            if r.ty().is_text() {
                nstr(r.column.collation.as_deref().unwrap_or(COLLATION))
            } else {
                Value::Null
            }
        })
        .opt("DOMAIN_CATALOG", SYSNAME, |_| Value::Null)
        .opt("DOMAIN_SCHEMA", SYSNAME, |_| Value::Null)
        .opt("DOMAIN_NAME", SYSNAME, |_| Value::Null)
        .rows(&rows)
}

/// `INFORMATION_SCHEMA.SCHEMATA`: every schema of the view's database.
fn schemata(ctx: &ViewContext<'_>) -> RowSet {
    let catalog = ctx.database.name().to_string();
    let rows: Vec<(String, String)> = schema_list(&ctx.database.catalog().objects())
        .into_iter()
        .map(|(name, _, _)| (catalog.clone(), name))
        .collect();
    View::<(String, String)>::new()
        .col("CATALOG_NAME", SYSNAME, |r| nstr(r.0.as_str()))
        .col("SCHEMA_NAME", SYSNAME, |r| nstr(r.1.as_str()))
        // Walden's own schemas belong to dbo; SQL Server's fixed ones to themselves.
        .col("SCHEMA_OWNER", SYSNAME, |r| {
            let fixed = ["dbo", "guest", "INFORMATION_SCHEMA", "sys"];
            match fixed.iter().find(|f| f.eq_ignore_ascii_case(&r.1)) {
                Some(owner) => nstr(*owner),
                None if r.1.starts_with("db_") => nstr(r.1.as_str()),
                None => nstr("dbo"),
            }
        })
        .opt("DEFAULT_CHARACTER_SET_CATALOG", SYSNAME, |_| Value::Null)
        .opt("DEFAULT_CHARACTER_SET_SCHEMA", SYSNAME, |_| Value::Null)
        .opt("DEFAULT_CHARACTER_SET_NAME", SYSNAME, |_| nstr("iso_1"))
        .rows(&rows)
}

/// A procedure of the view's database, with the database's name and creation time (Walden
/// does not record a procedure's own).
struct RoutineRow {
    catalog: String,
    schema: String,
    name: String,
    text: String,
    created_us: u64,
    /// `PROCEDURE` or `FUNCTION`.
    kind: &'static str,
}

/// `INFORMATION_SCHEMA.ROUTINES`: the view's database's procedures and scalar functions.
/// SQL Server's columns about function results and external routines are left out.
fn routines(ctx: &ViewContext<'_>) -> RowSet {
    let db = ctx.database;
    let catalog = db.name().to_string();
    let created_us = super::catalog::created_micros(db);
    let rows: Vec<RoutineRow> = db
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::Procedure(p) => Some(RoutineRow {
                catalog: catalog.clone(),
                schema: p.schema.clone(),
                name: p.name.clone(),
                text: p.text.clone(),
                created_us,
                kind: "PROCEDURE",
            }),
            Object::Function(f) => Some(RoutineRow {
                catalog: catalog.clone(),
                schema: f.schema.clone(),
                name: f.name.clone(),
                text: f.text.clone(),
                created_us,
                kind: "FUNCTION",
            }),
            _ => None,
        })
        .collect();
    View::<RoutineRow>::new()
        .opt("SPECIFIC_CATALOG", NAME, |r| nstr(r.catalog.as_str()))
        .opt("SPECIFIC_SCHEMA", NAME, |r| nstr(r.schema.as_str()))
        .col("SPECIFIC_NAME", SYSNAME, |r| nstr(r.name.as_str()))
        .opt("ROUTINE_CATALOG", NAME, |r| nstr(r.catalog.as_str()))
        .opt("ROUTINE_SCHEMA", NAME, |r| nstr(r.schema.as_str()))
        .col("ROUTINE_NAME", SYSNAME, |r| nstr(r.name.as_str()))
        .opt("ROUTINE_TYPE", SqlType::NVarChar(Len::N(20)), |r| nstr(r.kind))
        .opt("DATA_TYPE", SYSNAME, |_| Value::Null)
        .opt("ROUTINE_BODY", SqlType::NVarChar(Len::N(30)), |_| nstr("SQL"))
        // The first 4,000 characters, as SQL Server shows them.
        .opt("ROUTINE_DEFINITION", SqlType::NVarChar(Len::N(4000)), |r| {
            nstr(r.text.chars().take(4000).collect::<String>())
        })
        .opt("IS_DETERMINISTIC", SqlType::NVarChar(Len::N(10)), |_| nstr("NO"))
        .opt("SQL_DATA_ACCESS", SqlType::NVarChar(Len::N(30)), |_| nstr("MODIFIES"))
        .opt("IS_NULL_CALL", SqlType::NVarChar(Len::N(10)), |_| Value::Null)
        .opt("SCHEMA_LEVEL_ROUTINE", SqlType::NVarChar(Len::N(10)), |_| nstr("YES"))
        .opt("MAX_DYNAMIC_RESULT_SETS", SqlType::SmallInt, |_| small(-1))
        .opt("IS_USER_DEFINED_CAST", SqlType::NVarChar(Len::N(10)), |_| nstr("NO"))
        .opt("IS_IMPLICITLY_INVOCABLE", SqlType::NVarChar(Len::N(10)), |_| nstr("NO"))
        .col("CREATED", SqlType::DateTime, |r| datetime(r.created_us))
        .col("LAST_ALTERED", SqlType::DateTime, |r| datetime(r.created_us))
        .rows(&rows)
}

/// A constraint: its table and name, its type and its key columns (none for CHECK).
struct ConstraintRow {
    catalog: String,
    schema: String,
    table: String,
    name: String,
    kind: &'static str,
    columns: Vec<String>,
}

/// Every PRIMARY KEY, UNIQUE, CHECK and FOREIGN KEY constraint of the view's database's
/// tables.
fn constraints(ctx: &ViewContext<'_>) -> Vec<ConstraintRow> {
    let catalog = ctx.database.name().to_string();
    let mut rows = Vec::new();
    for t in &table_defs(ctx) {
        let row = |name: &str, kind, columns| ConstraintRow {
            catalog: catalog.clone(),
            schema: t.schema.clone(),
            table: t.name.clone(),
            name: name.to_string(),
            kind,
            columns,
        };
        for index in &t.indexes {
            let kind = match (index.primary_key, index.unique_constraint) {
                (true, _) => "PRIMARY KEY",
                (false, true) => "UNIQUE",
                (false, false) => continue,
            };
            let columns = index.columns.iter().map(|&c| t.columns[c].name.clone()).collect();
            rows.push(row(&index.name, kind, columns));
        }
        for check in &t.checks {
            rows.push(row(&check.name, "CHECK", Vec::new()));
        }
        for fk in &t.foreign_keys {
            let columns = fk.columns.iter().map(|&c| t.columns[c].name.clone()).collect();
            rows.push(row(&fk.name, "FOREIGN KEY", columns));
        }
    }
    rows
}

/// A FOREIGN KEY with the constraint it references, for `REFERENTIAL_CONSTRAINTS`.
struct ReferentialRow {
    catalog: String,
    schema: String,
    name: String,
    unique_schema: String,
    unique_name: String,
    update_rule: &'static str,
    delete_rule: &'static str,
}

/// The rule's name as `INFORMATION_SCHEMA` spells it.
fn rule(a: walden_engine::catalog::ReferentialAction) -> &'static str {
    use walden_engine::catalog::ReferentialAction as A;
    match a {
        A::NoAction => "NO ACTION",
        A::Cascade => "CASCADE",
        A::SetNull => "SET NULL",
        A::SetDefault => "SET DEFAULT",
    }
}

/// `INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS`: each FOREIGN KEY, with the PRIMARY KEY or
/// UNIQUE constraint (or unique index) it references.
fn referential_constraints(ctx: &ViewContext<'_>) -> RowSet {
    let catalog = ctx.database.name().to_string();
    let tables = table_defs(ctx);
    let mut rows = Vec::new();
    for t in &tables {
        for fk in &t.foreign_keys {
            let referenced = tables.iter().find(|p| p.id == fk.ref_table);
            let index = referenced.and_then(|p| p.index(fk.ref_index));
            rows.push(ReferentialRow {
                catalog: catalog.clone(),
                schema: t.schema.clone(),
                name: fk.name.clone(),
                unique_schema: referenced.map_or_else(String::new, |p| p.schema.clone()),
                unique_name: index.map_or_else(String::new, |i| i.name.clone()),
                update_rule: rule(fk.on_update),
                delete_rule: rule(fk.on_delete),
            });
        }
    }
    View::<ReferentialRow>::new()
        .opt("CONSTRAINT_CATALOG", NAME, |r| nstr(r.catalog.as_str()))
        .opt("CONSTRAINT_SCHEMA", NAME, |r| nstr(r.schema.as_str()))
        .col("CONSTRAINT_NAME", SYSNAME, |r| nstr(r.name.as_str()))
        .opt("UNIQUE_CONSTRAINT_CATALOG", NAME, |r| nstr(r.catalog.as_str()))
        .opt("UNIQUE_CONSTRAINT_SCHEMA", NAME, |r| nstr(r.unique_schema.as_str()))
        .opt("UNIQUE_CONSTRAINT_NAME", SYSNAME, |r| nstr(r.unique_name.as_str()))
        .opt("MATCH_OPTION", varchar(7), |_| vstr("SIMPLE"))
        .opt("UPDATE_RULE", varchar(11), |r| vstr(r.update_rule))
        .opt("DELETE_RULE", varchar(11), |r| vstr(r.delete_rule))
        .rows(&rows)
}

/// `INFORMATION_SCHEMA.TABLE_CONSTRAINTS`.
fn table_constraints(ctx: &ViewContext<'_>) -> RowSet {
    View::<ConstraintRow>::new()
        .opt("CONSTRAINT_CATALOG", NAME, |r| nstr(r.catalog.as_str()))
        .opt("CONSTRAINT_SCHEMA", NAME, |r| nstr(r.schema.as_str()))
        .col("CONSTRAINT_NAME", SYSNAME, |r| nstr(r.name.as_str()))
        .opt("TABLE_CATALOG", NAME, |r| nstr(r.catalog.as_str()))
        .opt("TABLE_SCHEMA", NAME, |r| nstr(r.schema.as_str()))
        .col("TABLE_NAME", SYSNAME, |r| nstr(r.table.as_str()))
        .opt("CONSTRAINT_TYPE", varchar(11), |r| vstr(r.kind))
        .opt("IS_DEFERRABLE", varchar(2), |_| vstr("NO"))
        .opt("INITIALLY_DEFERRED", varchar(2), |_| vstr("NO"))
        .rows(&constraints(ctx))
}

/// One column of a key constraint, at its position in the key.
struct KeyColumnRow {
    constraint: Arc<ConstraintRow>,
    column: String,
    position: usize,
}

/// `INFORMATION_SCHEMA.KEY_COLUMN_USAGE`: the columns of PRIMARY KEY, UNIQUE and FOREIGN KEY
/// constraints.
fn key_column_usage(ctx: &ViewContext<'_>) -> RowSet {
    let mut rows = Vec::new();
    for c in constraints(ctx) {
        let columns = c.columns.clone();
        let constraint = Arc::new(c);
        for (i, column) in columns.into_iter().enumerate() {
            rows.push(KeyColumnRow {
                constraint: Arc::clone(&constraint),
                column,
                position: i + 1,
            });
        }
    }
    View::<KeyColumnRow>::new()
        .opt("CONSTRAINT_CATALOG", NAME, |r| nstr(r.constraint.catalog.as_str()))
        .opt("CONSTRAINT_SCHEMA", NAME, |r| nstr(r.constraint.schema.as_str()))
        .col("CONSTRAINT_NAME", SYSNAME, |r| nstr(r.constraint.name.as_str()))
        .opt("TABLE_CATALOG", NAME, |r| nstr(r.constraint.catalog.as_str()))
        .opt("TABLE_SCHEMA", NAME, |r| nstr(r.constraint.schema.as_str()))
        .col("TABLE_NAME", SYSNAME, |r| nstr(r.constraint.table.as_str()))
        .opt("COLUMN_NAME", SYSNAME, |r| nstr(r.column.as_str()))
        .col("ORDINAL_POSITION", SqlType::Int, |r| int(r.position as i64))
        .rows(&rows)
}

/// `INFORMATION_SCHEMA.VIEWS`: the first 4,000 characters of each definition, as in SQL
/// Server, and `IS_UPDATABLE` always `NO`, as SQL Server documents it.
fn views(ctx: &ViewContext<'_>) -> RowSet {
    let catalog = ctx.database.name().to_string();
    let rows: Vec<(String, ViewDef)> = ctx
        .database
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::View(v) => Some((catalog.clone(), v.clone())),
            _ => None,
        })
        .collect();
    View::<(String, ViewDef)>::new()
        .opt("TABLE_CATALOG", NAME, |(c, _)| nstr(c.as_str()))
        .opt("TABLE_SCHEMA", NAME, |(_, v)| nstr(v.schema.as_str()))
        .col("TABLE_NAME", SYSNAME, |(_, v)| nstr(v.name.as_str()))
        .opt("VIEW_DEFINITION", SqlType::NVarChar(Len::N(4000)), |(_, v)| {
            nstr(v.text.chars().take(4000).collect::<String>().as_str())
        })
        .opt("CHECK_OPTION", varchar(7), |(_, v)| {
            let check = crate::exec::module::view::parse(&v.text).is_some_and(|v| v.check_option);
            vstr(if check { "CASCADE" } else { "NONE" })
        })
        .opt("IS_UPDATABLE", varchar(2), |_| vstr("NO"))
        .rows(&rows)
}
