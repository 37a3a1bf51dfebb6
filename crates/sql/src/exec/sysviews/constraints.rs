//! Constraint and module catalog views: `sys.key_constraints`, `sys.default_constraints`,
//! `sys.check_constraints`, `sys.foreign_keys`, `sys.foreign_key_columns`,
//! `sys.identity_columns`, `sys.computed_columns`, `sys.sql_modules`, `sys.views`,
//! `sys.triggers`, `sys.trigger_events` and `sys.trigger_event_types`.
//!
//! In SQL Server every constraint is an object of its own, with an object id. Walden keeps a
//! table's PRIMARY KEY and UNIQUE constraints as its indexes, its CHECK constraints as a list
//! and its defaults as column properties: [`constraint_id`] gives each one a synthetic object
//! id, the same at every query, so that the views can be joined with each other and with
//! `sys.columns.default_object_id` as SQL Server's are; its FOREIGN KEYs get one the same way.

use walden_engine::catalog::{ForeignKeyDef, IndexDef, Object, TableDef, FIRST_OBJECT_ID};
use walden_engine::types::{Len, SqlType, Value};

use super::catalog::{column_columns, column_rows, object_columns, object_rows, ColRow, ObjRow};
use super::{bit, datetime, int, nstr, View, ViewContext, DESC, SYSNAME};
use crate::exec::RowSet;

/// The first synthetic constraint id: above every id the catalog hands out to real objects
/// (they count up from [`FIRST_OBJECT_ID`]), and below 2^31, so still a positive INT.
const SYNTHETIC_BASE: u32 = 0x4000_0000;
/// Bits of a synthetic id that number the table (its id less [`FIRST_OBJECT_ID`]).
const TABLE_BITS: u32 = 18;
/// Bits of a synthetic id that number the constraint within its table and kind.
const SLOT_BITS: u32 = 10;

/// What a synthetic constraint id is the id of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConstraintKind {
    /// A PRIMARY KEY or UNIQUE constraint; its slot is its index's id.
    Key = 0,
    /// A column's DEFAULT; its slot is the column's id.
    Default = 1,
    /// A CHECK constraint; its slot is its place in the table's list, from 1.
    Check = 2,
    /// A FOREIGN KEY; its slot is its place in the table's list, from 1.
    ForeignKey = 3,
}

/// The synthetic object id of a constraint of table `table_id`: [`SYNTHETIC_BASE`], then the
/// table's number (18 bits), the kind (2 bits) and the slot (10 bits). It depends only on the
/// table and the constraint's place in it, so it is the same at every query and after a
/// restart. Ids are unique, and distinct from real object ids, while the table's id is below
/// `FIRST_OBJECT_ID + 2^18` and the slot below 1024 (SQL Server's own limits are 1,024
/// columns and 999 nonclustered indexes); beyond that they wrap and two may coincide.
pub(super) fn constraint_id(table_id: u32, kind: ConstraintKind, slot: usize) -> u32 {
    let table = table_id.wrapping_sub(FIRST_OBJECT_ID) & ((1 << TABLE_BITS) - 1);
    let slot = (slot as u32) & ((1 << SLOT_BITS) - 1);
    SYNTHETIC_BASE | table << (SLOT_BITS + 2) | (kind as u32) << SLOT_BITS | slot
}

/// The name SQL Server would generate for an unnamed DEFAULT: `DF__`, the first 9 characters
/// of the table's name, the first 5 of the column's, and the constraint's object id in 8 hex
/// digits (`DF__orders__statu__40000404`).
pub(super) fn default_name(table: &str, column: &str, id: u32) -> String {
    let table: String = table.trim_start_matches('#').chars().take(9).collect();
    let column: String = column.chars().take(5).collect();
    format!("DF__{table}__{column}__{id:08X}")
}

/// The name `sys.default_constraints` shows for the DEFAULT of column `column` (0-based) of
/// `table`: what `ALTER TABLE ... DROP CONSTRAINT` finds a default by.
pub(crate) fn default_constraint_name(table: &TableDef, column: usize) -> String {
    let id = constraint_id(table.id, ConstraintKind::Default, column + 1);
    default_name(&table.name, &table.columns[column].name, id)
}

/// Whether a constraint's name is one Walden generated (`PK__table__<16 hex digits>`, see
/// `ddl::generated_name`) rather than one the user wrote: `is_system_named`. A user name of
/// exactly that shape would be taken for a generated one.
fn is_generated_name(prefix: &str, name: &str) -> bool {
    let Some(rest) = name.strip_prefix(prefix).and_then(|r| r.strip_prefix("__")) else {
        return false;
    };
    let Some((_, hex)) = rest.rsplit_once("__") else { return false };
    hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
}

/// What a constraint is, with what its own view shows of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Constraint {
    PrimaryKey { index_id: u16 },
    Unique { index_id: u16 },
    Default { column_id: usize, definition: String },
    Check { definition: String },
    ForeignKey(ForeignKeyDef),
}

impl Constraint {
    /// `sys.objects.type`, blank-padded to CHAR(2) as SQL Server's is.
    pub(super) fn type_code(&self) -> &'static str {
        match self {
            Constraint::PrimaryKey { .. } => "PK",
            Constraint::Unique { .. } => "UQ",
            Constraint::Default { .. } => "D ",
            Constraint::Check { .. } => "C ",
            Constraint::ForeignKey(_) => "F ",
        }
    }

    fn type_desc(&self) -> &'static str {
        match self {
            Constraint::PrimaryKey { .. } => "PRIMARY_KEY_CONSTRAINT",
            Constraint::Unique { .. } => "UNIQUE_CONSTRAINT",
            Constraint::Default { .. } => "DEFAULT_CONSTRAINT",
            Constraint::Check { .. } => "CHECK_CONSTRAINT",
            Constraint::ForeignKey(_) => "FOREIGN_KEY_CONSTRAINT",
        }
    }

    fn index_id(&self) -> Option<u16> {
        match self {
            Constraint::PrimaryKey { index_id } | Constraint::Unique { index_id } => {
                Some(*index_id)
            }
            _ => None,
        }
    }

    fn definition(&self) -> Option<&str> {
        match self {
            Constraint::Default { definition, .. } | Constraint::Check { definition } => {
                Some(definition)
            }
            _ => None,
        }
    }
}

/// A constraint of a table, as the constraint views and `sys.sysobjects` show it.
pub(super) struct ConstraintRow {
    pub(super) name: String,
    pub(super) id: u32,
    /// Its table's schema (constraints are in their table's schema).
    pub(super) schema_id: i64,
    pub(super) table_id: u32,
    /// The table's creation time: Walden does not record when a constraint was added.
    pub(super) created_us: u64,
    pub(super) system_named: bool,
    pub(super) kind: Constraint,
}

/// A key constraint's row, for an index that enforces one.
fn key_constraint(t: &ObjRow, table_id: u32, index: &IndexDef) -> Option<ConstraintRow> {
    let (kind, prefix) = if index.primary_key {
        (Constraint::PrimaryKey { index_id: index.id }, "PK")
    } else if index.unique_constraint {
        (Constraint::Unique { index_id: index.id }, "UQ")
    } else {
        return None;
    };
    Some(ConstraintRow {
        name: index.name.clone(),
        id: constraint_id(table_id, ConstraintKind::Key, usize::from(index.id)),
        schema_id: t.schema_id,
        table_id,
        created_us: t.created_us,
        system_named: is_generated_name(prefix, &index.name),
        kind,
    })
}

/// Every constraint of the view's database's tables: by table id, then each table's keys (by
/// index id), defaults (by column) and CHECK constraints (in their order).
pub(super) fn constraint_rows(ctx: &ViewContext<'_>) -> Vec<ConstraintRow> {
    let mut rows = Vec::new();
    for t in object_rows(ctx, |o| matches!(o, Object::Table(_))) {
        let Object::Table(table) = &*t.object else { continue };
        let mut indexes: Vec<&IndexDef> = table.indexes.iter().collect();
        indexes.sort_by_key(|i| i.id);
        rows.extend(indexes.into_iter().filter_map(|i| key_constraint(&t, table.id, i)));
        for (i, c) in table.columns.iter().enumerate() {
            let Some(text) = &c.default else { continue };
            let id = constraint_id(table.id, ConstraintKind::Default, i + 1);
            rows.push(ConstraintRow {
                name: default_name(&table.name, &c.name, id),
                id,
                schema_id: t.schema_id,
                table_id: table.id,
                created_us: t.created_us,
                system_named: true,
                // SQL Server shows a default's expression in parentheses: `((0))` for
                // `DEFAULT (0)`, `(getdate())` for `DEFAULT GETDATE()`.
                kind: Constraint::Default { column_id: i + 1, definition: format!("({text})") },
            });
        }
        for (i, check) in table.checks.iter().enumerate() {
            rows.push(ConstraintRow {
                name: check.name.clone(),
                id: constraint_id(table.id, ConstraintKind::Check, i + 1),
                schema_id: t.schema_id,
                table_id: table.id,
                created_us: t.created_us,
                system_named: is_generated_name("CK", &check.name),
                kind: Constraint::Check { definition: check.text.clone() },
            });
        }
        for (i, fk) in table.foreign_keys.iter().enumerate() {
            rows.push(ConstraintRow {
                name: fk.name.clone(),
                id: constraint_id(table.id, ConstraintKind::ForeignKey, i + 1),
                schema_id: t.schema_id,
                table_id: table.id,
                created_us: t.created_us,
                system_named: fk.name.starts_with("FK__"),
                kind: Constraint::ForeignKey(fk.clone()),
            });
        }
    }
    rows
}

/// A constraint row's FOREIGN KEY, if it is one.
fn foreign_key(c: &ConstraintRow) -> Option<&ForeignKeyDef> {
    match &c.kind {
        Constraint::ForeignKey(fk) => Some(fk),
        _ => None,
    }
}

/// `delete_referential_action` / `update_referential_action`: SQL Server's numbers.
fn action_code(a: walden_engine::catalog::ReferentialAction) -> Value {
    Value::TinyInt(a as u8)
}

/// The columns of `sys.objects` for constraints, which the constraint views start with.
fn constraint_columns() -> View<ConstraintRow> {
    let off = |_: &ConstraintRow| bit(false);
    View::<ConstraintRow>::new()
        .col("name", SYSNAME, |c| nstr(c.name.as_str()))
        .col("object_id", SqlType::Int, |c| int(i64::from(c.id)))
        .opt("principal_id", SqlType::Int, |_| Value::Null)
        .col("schema_id", SqlType::Int, |c| int(c.schema_id))
        .col("parent_object_id", SqlType::Int, |c| int(i64::from(c.table_id)))
        .opt("type", SqlType::Char(2), |c| Value::Str(c.kind.type_code().to_string()))
        .opt("type_desc", DESC, |c| nstr(c.kind.type_desc()))
        .col("create_date", SqlType::DateTime, |c| datetime(c.created_us))
        .col("modify_date", SqlType::DateTime, |c| datetime(c.created_us))
        .col("is_ms_shipped", SqlType::Bit, off)
        .col("is_published", SqlType::Bit, off)
        .col("is_schema_published", SqlType::Bit, off)
}

/// `sys.key_constraints`: the PRIMARY KEY and UNIQUE constraints.
pub(super) fn key_constraints(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<ConstraintRow> =
        constraint_rows(ctx).into_iter().filter(|c| c.kind.index_id().is_some()).collect();
    constraint_columns()
        .opt("unique_index_id", SqlType::Int, |c| {
            c.kind.index_id().map_or(Value::Null, |i| int(i64::from(i)))
        })
        .col("is_system_named", SqlType::Bit, |c| bit(c.system_named))
        .rows(&rows)
}

/// `sys.default_constraints`: one per column with a DEFAULT.
pub(super) fn default_constraints(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<ConstraintRow> = constraint_rows(ctx)
        .into_iter()
        .filter(|c| matches!(c.kind, Constraint::Default { .. }))
        .collect();
    constraint_columns()
        .col("parent_column_id", SqlType::Int, |c| match c.kind {
            Constraint::Default { column_id, .. } => int(column_id as i64),
            _ => int(0),
        })
        .opt("definition", SqlType::NVarChar(Len::Max), |c| {
            c.kind.definition().map_or(Value::Null, nstr)
        })
        .col("is_system_named", SqlType::Bit, |c| bit(c.system_named))
        .rows(&rows)
}

/// `sys.check_constraints`: every CHECK constraint, as a table-level one (Walden keeps a
/// column's CHECK with its table's).
pub(super) fn check_constraints(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<ConstraintRow> = constraint_rows(ctx)
        .into_iter()
        .filter(|c| matches!(c.kind, Constraint::Check { .. }))
        .collect();
    let off = |_: &ConstraintRow| bit(false);
    constraint_columns()
        .col("is_disabled", SqlType::Bit, off)
        .col("is_not_for_replication", SqlType::Bit, off)
        .col("is_not_trusted", SqlType::Bit, off)
        .col("parent_column_id", SqlType::Int, |_| int(0))
        .opt("definition", SqlType::NVarChar(Len::Max), |c| {
            c.kind.definition().map_or(Value::Null, nstr)
        })
        .opt("uses_database_collation", SqlType::Bit, off)
        .col("is_system_named", SqlType::Bit, |c| bit(c.system_named))
        .rows(&rows)
}

/// `sys.foreign_keys`: every FOREIGN KEY constraint.
pub(super) fn foreign_keys(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<ConstraintRow> =
        constraint_rows(ctx).into_iter().filter(|c| foreign_key(c).is_some()).collect();
    let off = |_: &ConstraintRow| bit(false);
    constraint_columns()
        .opt("referenced_object_id", SqlType::Int, |c| {
            foreign_key(c).map_or(Value::Null, |f| int(i64::from(f.ref_table)))
        })
        .opt("key_index_id", SqlType::Int, |c| {
            foreign_key(c).map_or(Value::Null, |f| int(i64::from(f.ref_index)))
        })
        .col("is_disabled", SqlType::Bit, |c| bit(foreign_key(c).is_some_and(|f| f.disabled)))
        .col("is_not_for_replication", SqlType::Bit, off)
        .col("is_not_trusted", SqlType::Bit, |c| bit(foreign_key(c).is_some_and(|f| f.disabled)))
        .opt("delete_referential_action", SqlType::TinyInt, |c| {
            foreign_key(c).map_or(Value::Null, |f| action_code(f.on_delete))
        })
        .opt("delete_referential_action_desc", DESC, |c| {
            foreign_key(c).map_or(Value::Null, |f| nstr(f.on_delete.desc()))
        })
        .opt("update_referential_action", SqlType::TinyInt, |c| {
            foreign_key(c).map_or(Value::Null, |f| action_code(f.on_update))
        })
        .opt("update_referential_action_desc", DESC, |c| {
            foreign_key(c).map_or(Value::Null, |f| nstr(f.on_update.desc()))
        })
        .col("is_system_named", SqlType::Bit, |c| bit(c.system_named))
        .rows(&rows)
}

/// One column pair of a FOREIGN KEY, for `sys.foreign_key_columns`.
struct FkColumn {
    constraint_id: u32,
    /// 1-based.
    ordinal: usize,
    table_id: u32,
    /// 1-based.
    column_id: usize,
    referenced_table_id: u32,
    /// 1-based.
    referenced_column_id: usize,
}

/// `sys.foreign_key_columns`: each FOREIGN KEY's column pairs, in key order.
pub(super) fn foreign_key_columns(ctx: &ViewContext<'_>) -> RowSet {
    let mut rows = Vec::new();
    let tables: Vec<(u32, std::sync::Arc<TableDef>)> =
        object_rows(ctx, |o| matches!(o, Object::Table(_)))
            .into_iter()
            .filter_map(|t| match &*t.object {
                Object::Table(def) => Some((def.id, std::sync::Arc::clone(def))),
                _ => None,
            })
            .collect();
    for c in constraint_rows(ctx) {
        let Some(fk) = foreign_key(&c) else { continue };
        let referenced = tables.iter().find(|(id, _)| *id == fk.ref_table).map(|(_, d)| d);
        let key = referenced.and_then(|d| d.index(fk.ref_index)).map(|i| i.columns.clone());
        for (i, &column) in fk.columns.iter().enumerate() {
            let referenced_column = key.as_ref().and_then(|k| k.get(i)).map_or(0, |&k| k + 1);
            rows.push(FkColumn {
                constraint_id: c.id,
                ordinal: i + 1,
                table_id: c.table_id,
                column_id: column + 1,
                referenced_table_id: fk.ref_table,
                referenced_column_id: referenced_column,
            });
        }
    }
    View::<FkColumn>::new()
        .col("constraint_object_id", SqlType::Int, |r| int(i64::from(r.constraint_id)))
        .col("constraint_column_id", SqlType::Int, |r| int(r.ordinal as i64))
        .col("parent_object_id", SqlType::Int, |r| int(i64::from(r.table_id)))
        .col("parent_column_id", SqlType::Int, |r| int(r.column_id as i64))
        .col("referenced_object_id", SqlType::Int, |r| int(i64::from(r.referenced_table_id)))
        .col("referenced_column_id", SqlType::Int, |r| int(r.referenced_column_id as i64))
        .rows(&rows)
}

/// `seed_value`, `increment_value` and `last_value`: SQL Server's are `sql_variant` of the
/// column's type; Walden's identity values are integers of at most 64 bits, so BIGINT.
const IDENTITY_VALUE: SqlType = SqlType::BigInt;

/// `sys.identity_columns`: the identity columns, with `sys.columns`' columns.
pub(super) fn identity_columns(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<ColRow> =
        column_rows(ctx).into_iter().filter(|c| c.def.identity.is_some()).collect();
    column_columns()
        .opt("seed_value", IDENTITY_VALUE, |c| {
            c.def.identity.map_or(Value::Null, |(seed, _)| Value::BigInt(seed))
        })
        .opt("increment_value", IDENTITY_VALUE, |c| {
            c.def.identity.map_or(Value::Null, |(_, inc)| Value::BigInt(inc))
        })
        // NULL until the first value is handed out, as in SQL Server.
        .opt("last_value", IDENTITY_VALUE, |c| c.identity_last.map_or(Value::Null, Value::BigInt))
        .opt("is_not_for_replication", SqlType::Bit, |_| bit(false))
        .rows(&rows)
}

/// `sys.computed_columns`: the computed columns, with `sys.columns`' columns, then their
/// `definition` (the expression in parentheses, as SQL Server shows it) and `is_persisted`.
pub(super) fn computed_columns(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<ColRow> =
        column_rows(ctx).into_iter().filter(|c| c.def.computed.is_some()).collect();
    column_columns()
        .opt("definition", SqlType::NVarChar(Len::Max), |c| {
            c.def.computed.as_ref().map_or(Value::Null, |k| nstr(parenthesized(&k.text)))
        })
        .col("uses_database_collation", SqlType::Bit, |_| bit(true))
        .col("is_persisted", SqlType::Bit, |c| {
            bit(c.def.computed.as_ref().is_some_and(|k| k.persisted))
        })
        .rows(&rows)
}

/// `text` in parentheses, unless one pair already encloses all of it.
fn parenthesized(text: &str) -> String {
    let mut depth = 0usize;
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && i + 1 < text.len() {
                    return format!("({text})");
                }
            }
            _ if depth == 0 => return format!("({text})"),
            _ => {}
        }
    }
    text.to_string()
}

/// The options a module runs with: a procedure's own, both ON for the others.
fn module_options(o: &ObjRow) -> walden_engine::catalog::ModuleOptions {
    match &*o.object {
        walden_engine::catalog::Object::Procedure(p) => p.options,
        _ => walden_engine::catalog::ModuleOptions::default(),
    }
}

/// `sys.sql_modules`: the procedures, views, functions and triggers, with the text they were
/// created with. A procedure keeps the ANSI_NULLS and QUOTED_IDENTIFIER it was created under;
/// the other modules run with both on. Walden has no SCHEMABINDING, EXECUTE AS or native
/// compilation.
pub(super) fn sql_modules(ctx: &ViewContext<'_>) -> RowSet {
    let off = |_: &ObjRow| bit(false);
    View::<ObjRow>::new()
        .col("object_id", SqlType::Int, |o| int(i64::from(o.object.id())))
        .opt("definition", SqlType::NVarChar(Len::Max), |o| {
            o.object.module_text().map_or(Value::Null, nstr)
        })
        .opt("uses_ansi_nulls", SqlType::Bit, |o| bit(module_options(o).ansi_nulls))
        .opt("uses_quoted_identifier", SqlType::Bit, |o| bit(module_options(o).quoted_identifier))
        .opt("is_schema_bound", SqlType::Bit, off)
        .opt("uses_database_collation", SqlType::Bit, off)
        .opt("is_recompiled", SqlType::Bit, off)
        .opt("null_on_null_input", SqlType::Bit, off)
        .opt("execute_as_principal_id", SqlType::Int, |_| Value::Null)
        .opt("uses_native_compilation", SqlType::Bit, off)
        .opt("is_inlineable", SqlType::Bit, off)
        .opt("inline_type", SqlType::Bit, off)
        .rows(&super::catalog::module_rows(ctx, |o| o.module_text().is_some()))
}

/// `sys.views`.
pub(super) fn views(ctx: &ViewContext<'_>) -> RowSet {
    let none = |_: &ObjRow| Value::Null;
    let check_option = |o: &ObjRow| match &*o.object {
        Object::View(v) => {
            bit(crate::exec::module::view::parse(&v.text).is_some_and(|v| v.check_option))
        }
        _ => Value::Null,
    };
    object_columns()
        .opt("is_replicated", SqlType::Bit, none)
        .opt("has_replication_filter", SqlType::Bit, none)
        .col("has_opaque_metadata", SqlType::Bit, none)
        .col("has_unchecked_assembly_data", SqlType::Bit, none)
        .col("with_check_option", SqlType::Bit, check_option)
        .col("is_date_correlation_view", SqlType::Bit, none)
        .col("ledger_view_type", SqlType::TinyInt, none)
        .col("ledger_view_type_desc", DESC, none)
        .col("is_dropped_ledger_view", SqlType::Bit, none)
        .rows(&object_rows(ctx, |o| matches!(o, Object::View(_))))
}

/// A trigger's definition, if `o` is one.
fn trigger(o: &ObjRow) -> Option<&walden_engine::catalog::TriggerDef> {
    match &*o.object {
        Object::Trigger(t) => Some(t),
        _ => None,
    }
}

/// `sys.triggers`: the database's triggers, on a table or view (`parent_class` 1) or, DDL
/// triggers, on the database (`parent_class` 0, `parent_id` 0).
pub(super) fn triggers(ctx: &ViewContext<'_>) -> RowSet {
    View::<ObjRow>::new()
        .col("name", SYSNAME, |o| nstr(o.object.name().1))
        .col("object_id", SqlType::Int, |o| int(i64::from(o.object.id())))
        .col("parent_class", SqlType::TinyInt, |o| {
            Value::TinyInt(if trigger(o).is_some_and(|t| t.on_database()) { 0 } else { 1 })
        })
        .opt("parent_class_desc", DESC, |o| {
            let on_database = trigger(o).is_some_and(|t| t.on_database());
            nstr(if on_database { "DATABASE" } else { "OBJECT_OR_COLUMN" })
        })
        .col("parent_id", SqlType::Int, |o| {
            trigger(o).map_or(Value::Null, |t| int(i64::from(t.table)))
        })
        .col("type", SqlType::Char(2), |_| Value::Str("TR".into()))
        .opt("type_desc", DESC, |_| nstr("SQL_TRIGGER"))
        .col("create_date", SqlType::DateTime, |o| datetime(o.created_us))
        .col("modify_date", SqlType::DateTime, |o| datetime(o.created_us))
        .col("is_ms_shipped", SqlType::Bit, |_| bit(false))
        .col("is_disabled", SqlType::Bit, |o| bit(trigger(o).is_some_and(|t| t.disabled)))
        .col("is_not_for_replication", SqlType::Bit, |_| bit(false))
        .col("is_instead_of_trigger", SqlType::Bit, |o| {
            let kind = trigger(o).and_then(|t| crate::exec::module::trigger::trigger_kind(&t.text));
            bit(kind.is_some_and(|(instead_of, _)| instead_of))
        })
        .rows(&super::catalog::module_rows(ctx, |o| matches!(o, Object::Trigger(_))))
}

/// `sys.server_triggers`: empty, with SQL Server's columns. Server-level DDL triggers (`ON ALL
/// SERVER`) are refused (40514), so none exists; scripts that drop theirs when they exist
/// read this first.
pub(super) fn server_triggers() -> RowSet {
    View::<ObjRow>::new()
        .col("name", SYSNAME, |o| nstr(o.object.name().1))
        .col("object_id", SqlType::Int, |o| int(i64::from(o.object.id())))
        .col("parent_class", SqlType::TinyInt, |_| Value::TinyInt(100))
        .col("parent_class_desc", DESC, |_| nstr("SERVER"))
        .col("parent_id", SqlType::Int, |_| int(0))
        .col("type", SqlType::Char(2), |_| Value::Str("TR".into()))
        .col("type_desc", DESC, |_| nstr("SQL_TRIGGER"))
        .col("create_date", SqlType::DateTime, |o| datetime(o.created_us))
        .col("modify_date", SqlType::DateTime, |o| datetime(o.created_us))
        .col("is_ms_shipped", SqlType::Bit, |_| bit(false))
        .col("is_disabled", SqlType::Bit, |_| bit(false))
        .rows(&[])
}

/// One row of `sys.trigger_events`: an event that fires a trigger.
pub(super) struct TriggerEventRow {
    object_id: u32,
    event: (u16, &'static str),
    group: Option<(u16, &'static str)>,
}

/// `sys.trigger_events`: the events that fire each trigger: INSERT (1), UPDATE (2), DELETE
/// (3) for a DML trigger; for a DDL trigger each event its `FOR` list covers, with the group
/// it named (`event_group_type`) when it named one. `is_first` and `is_last` are 0:
/// `sp_settriggerorder` is not supported.
pub(super) fn trigger_events(ctx: &ViewContext<'_>) -> RowSet {
    let mut rows = Vec::new();
    for o in super::catalog::module_rows(ctx, |o| matches!(o, Object::Trigger(_))) {
        let Some(t) = trigger(&o) else { continue };
        if t.on_database() {
            for (event, group) in crate::exec::module::ddl_trigger::trigger_events(&t.text) {
                rows.push(TriggerEventRow { object_id: t.id, event, group });
            }
            continue;
        }
        let events = crate::exec::module::trigger::trigger_kind(&t.text).map(|(_, e)| e);
        for event in events.unwrap_or_default() {
            let event = match event {
                crate::ast::TriggerEvent::Insert => (1, "INSERT"),
                crate::ast::TriggerEvent::Update => (2, "UPDATE"),
                crate::ast::TriggerEvent::Delete => (3, "DELETE"),
            };
            rows.push(TriggerEventRow { object_id: t.id, event, group: None });
        }
    }
    View::<TriggerEventRow>::new()
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("type", SqlType::Int, |r| int(i64::from(r.event.0)))
        .col("type_desc", DESC, |r| nstr(r.event.1))
        .col("is_first", SqlType::Bit, |_| bit(false))
        .col("is_last", SqlType::Bit, |_| bit(false))
        .col("event_group_type", SqlType::Int, |r| {
            r.group.map_or(Value::Null, |(ty, _)| int(i64::from(ty)))
        })
        .col("event_group_type_desc", DESC, |r| r.group.map_or(Value::Null, |(_, n)| nstr(n)))
        .col("is_trigger_event", SqlType::Bit, |_| bit(true))
        .rows(&rows)
}

/// `sys.trigger_event_types`: SQL Server's DDL event types and groups, and how they nest.
pub(super) fn trigger_event_types() -> RowSet {
    View::<(u16, u16, &'static str)>::new()
        .col("type", SqlType::Int, |r| int(i64::from(r.0)))
        .col("type_name", DESC, |r| nstr(r.2))
        .col(
            "parent_type",
            SqlType::Int,
            |r| {
                if r.1 == 0 {
                    Value::Null
                } else {
                    int(i64::from(r.1))
                }
            },
        )
        .rows(crate::exec::module::ddl_event_types::EVENT_TYPES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraint_ids_are_stable_distinct_and_above_object_ids() {
        let a = constraint_id(1000, ConstraintKind::Default, 2);
        assert_eq!(a, constraint_id(1000, ConstraintKind::Default, 2));
        let mut ids = std::collections::HashSet::new();
        for table in [1000, 1001, 1500, 1000 + (1 << TABLE_BITS) - 1] {
            for kind in [ConstraintKind::Key, ConstraintKind::Default, ConstraintKind::Check] {
                for slot in [1, 2, 3, 999, 1023] {
                    let id = constraint_id(table, kind, slot);
                    assert!(ids.insert(id), "{table} {kind:?} {slot} repeats {id}");
                    assert!(id >= SYNTHETIC_BASE && i32::try_from(id).is_ok());
                }
            }
        }
    }

    #[test]
    fn default_names_have_sql_servers_shape() {
        let id = constraint_id(1000, ConstraintKind::Default, 3);
        assert_eq!(
            default_name("Customers_Archive", "CreatedAt", id),
            "DF__Customers__Creat__40000403"
        );
        let other = constraint_id(1000, ConstraintKind::Default, 4);
        assert_ne!(
            default_name("Customers_Archive", "CreatedAt", id),
            default_name("Customers_Archive", "CreatedBy", other)
        );
        assert_eq!(default_name("#t", "x", 0x4000_0001), "DF__t__x__40000001");
    }

    #[test]
    fn generated_names_are_told_from_user_names() {
        assert!(is_generated_name("PK", "PK__orders__0123456789ABCDEF"));
        assert!(is_generated_name("CK", "CK__t__FEDCBA9876543210"));
        assert!(!is_generated_name("PK", "PK_orders"));
        assert!(!is_generated_name("UQ", "PK__orders__0123456789ABCDEF"));
        assert!(!is_generated_name("PK", "PK__orders__0123"));
        assert!(!is_generated_name("PK", "PK__orders__0123456789abcdef"));
    }
}
