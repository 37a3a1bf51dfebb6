//! Catalog views of one database: its schemas, objects, tables, procedures and their
//! parameters, sequences, columns, types and table types (`databases` has the databases and
//! their files, `indexes` the indexes and partitions).

use std::sync::Arc;

use walden_engine::catalog::{ColumnDef, Object, SequenceDef, TableDef};
use walden_engine::types::{Decimal, Len, SqlType, Value};
use walden_engine::Database;

use super::constraints::{constraint_id, ConstraintKind};
use super::{bit, datetime, int, nstr, small, tiny, View, ViewContext, COLLATION, DESC, SYSNAME};
use crate::ast::{FunctionBody, StatementKind};
use crate::exec::RowSet;

/// When the database's data file was created (tempdb's is recreated at every start, so its
/// date is the server's start, as in SQL Server).
pub(super) fn created_micros(db: &Database) -> u64 {
    db.space().pool().file().header().created_unix_micros
}

/// SQL Server's fixed schemas of every database: (name, schema_id, principal_id).
const FIXED_SCHEMAS: [(&str, i64, i64); 13] = [
    ("dbo", 1, 1),
    ("guest", 2, 2),
    ("INFORMATION_SCHEMA", 3, 3),
    ("sys", 4, 4),
    ("db_owner", 16384, 16384),
    ("db_accessadmin", 16385, 16385),
    ("db_securityadmin", 16386, 16386),
    ("db_ddladmin", 16387, 16387),
    ("db_backupoperator", 16389, 16389),
    ("db_datareader", 16390, 16390),
    ("db_datawriter", 16391, 16391),
    ("db_denydatareader", 16392, 16392),
    ("db_denydatawriter", 16393, 16393),
];

/// The schemas of a database: the fixed ones, then any other schema name its objects use,
/// numbered from 5 in name order (Walden records a schema only as its objects' schema name).
pub(crate) fn schema_list(objects: &[Arc<Object>]) -> Vec<(String, i64, i64)> {
    let mut list: Vec<(String, i64, i64)> =
        FIXED_SCHEMAS.iter().map(|&(n, id, p)| (n.to_string(), id, p)).collect();
    // A schema object (CREATE SCHEMA) names itself; every other object names its schema.
    let mut extra: Vec<String> = objects
        .iter()
        .map(|o| match &**o {
            Object::Schema(s) => s.name.clone(),
            other => other.name().0.to_string(),
        })
        .filter(|s| !list.iter().any(|(n, _, _)| n.eq_ignore_ascii_case(s)))
        .collect();
    extra.sort_by_key(|s| s.to_lowercase());
    extra.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    for (i, name) in extra.into_iter().enumerate() {
        list.push((name, 5 + i as i64, 1));
    }
    list
}

/// `sys.schemas`.
pub(super) fn schemas(ctx: &ViewContext<'_>) -> RowSet {
    let rows = schema_list(&ctx.database.catalog().objects());
    View::<(String, i64, i64)>::new()
        .col("name", SYSNAME, |s| nstr(s.0.as_str()))
        .col("schema_id", SqlType::Int, |s| int(s.1))
        .opt("principal_id", SqlType::Int, |s| int(s.2))
        .rows(&rows)
}

/// A catalog object with what its views show beside its definition.
pub(super) struct ObjRow {
    pub(super) object: Arc<Object>,
    pub(super) schema_id: i64,
    /// Creation time: the table's own; the database's for sequences, procedures and views, whose
    /// creation time Walden does not record.
    pub(super) created_us: u64,
    /// For a sequence: the last value handed out.
    seq_current: Option<i128>,
}

impl ObjRow {
    fn table(&self) -> Option<&TableDef> {
        match &*self.object {
            Object::Table(t) => Some(t),
            _ => None,
        }
    }

    fn sequence(&self) -> Option<&SequenceDef> {
        match &*self.object {
            Object::Sequence(s) => Some(s),
            _ => None,
        }
    }
}

/// The view's database's schema-scoped objects, by object id, keeping those `keep` accepts.
/// DDL triggers are not schema-scoped (SQL Server's `sys.objects` does not list them).
pub(super) fn object_rows(ctx: &ViewContext<'_>, keep: fn(&Object) -> bool) -> Vec<ObjRow> {
    module_rows(ctx, |o| !matches!(o, Object::Trigger(t) if t.on_database()) && keep(o))
}

/// [`object_rows`] with the DDL triggers too, for the views that list them
/// (`sys.triggers`, `sys.sql_modules`).
pub(super) fn module_rows(ctx: &ViewContext<'_>, keep: impl Fn(&Object) -> bool) -> Vec<ObjRow> {
    let db = ctx.database;
    let objects = db.catalog().objects();
    let schemas = schema_list(&objects);
    let db_created = created_micros(db);
    objects
        .into_iter()
        // Objects below FIRST_OBJECT_ID are the engine's own (the row-version sequence).
        .filter(|o| {
            // Schemas and types have views of their own (sys.schemas, sys.types).
            !matches!(**o, Object::Schema(_) | Object::Type(_))
                && o.id() >= walden_engine::catalog::FIRST_OBJECT_ID
                && keep(o)
        })
        .map(|object| {
            let schema = object.name().0;
            let schema_id =
                schemas.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(schema)).map_or(1, |s| s.1);
            let (created_us, seq_current) = match &*object {
                Object::Table(t) => (t.created_micros, None),
                Object::Sequence(s) => (db_created, db.sequence_current(s)),
                Object::Procedure(_)
                | Object::View(_)
                | Object::Function(_)
                | Object::Trigger(_)
                | Object::Schema(_)
                | Object::Properties(_)
                | Object::Type(_) => (db_created, None),
            };
            ObjRow { object, schema_id, created_us, seq_current }
        })
        .collect()
}

/// `sys.objects.type_desc` of an object.
fn type_desc(object: &Object) -> &'static str {
    match object {
        Object::Table(_) => "USER_TABLE",
        Object::Sequence(_) => "SEQUENCE_OBJECT",
        Object::Procedure(_) => "SQL_STORED_PROCEDURE",
        Object::View(_) => "VIEW",
        Object::Function(f) if f.multi_statement => "SQL_TABLE_VALUED_FUNCTION",
        Object::Function(f) if f.returns_table => "SQL_INLINE_TABLE_VALUED_FUNCTION",
        Object::Function(_) => "SQL_SCALAR_FUNCTION",
        Object::Trigger(_) => "SQL_TRIGGER",
        Object::Schema(_) => "SCHEMA",
        Object::Properties(_) => "",
        Object::Type(_) => "TYPE",
    }
}

/// The columns of `sys.objects`, which `sys.tables`, `sys.procedures` and `sys.sequences`
/// start with.
pub(super) fn object_columns() -> View<ObjRow> {
    View::<ObjRow>::new()
        .col("name", SYSNAME, |o| nstr(o.object.name().1))
        .col("object_id", SqlType::Int, |o| int(i64::from(o.object.id())))
        .opt("principal_id", SqlType::Int, |_| Value::Null)
        .col("schema_id", SqlType::Int, |o| int(o.schema_id))
        .col("parent_object_id", SqlType::Int, |o| match &*o.object {
            Object::Trigger(t) => int(i64::from(t.table)),
            _ => int(0),
        })
        // CHAR(2), blank-padded as SQL Server's `type` is ('U ', 'SO', 'P ').
        .opt("type", SqlType::Char(2), |o| Value::Str(format!("{:<2}", o.object.type_code())))
        .opt("type_desc", DESC, |o| nstr(type_desc(&o.object)))
        .col("create_date", SqlType::DateTime, |o| datetime(o.created_us))
        .col("modify_date", SqlType::DateTime, |o| datetime(o.created_us))
        .col("is_ms_shipped", SqlType::Bit, |_| bit(false))
        .col("is_published", SqlType::Bit, |_| bit(false))
        .col("is_schema_published", SqlType::Bit, |_| bit(false))
}

/// `sys.objects`: the view's database's tables, sequences and procedures.
pub(super) fn objects(ctx: &ViewContext<'_>) -> RowSet {
    object_columns().rows(&object_rows(ctx, |_| true))
}

/// `sys.tables`.
pub(super) fn tables(ctx: &ViewContext<'_>) -> RowSet {
    object_columns()
        .col("lob_data_space_id", SqlType::Int, |o| {
            int(i64::from(o.table().is_some_and(|t| t.columns.iter().any(|c| is_max(c.ty)))))
        })
        .opt("filestream_data_space_id", SqlType::Int, |_| Value::Null)
        .col("max_column_id_used", SqlType::Int, |o| {
            int(o.table().map_or(0, |t| t.columns.len() as i64))
        })
        .col("lock_on_bulk_load", SqlType::Bit, |_| bit(false))
        .opt("uses_ansi_nulls", SqlType::Bit, |_| bit(true))
        .opt("is_replicated", SqlType::Bit, |_| bit(false))
        .opt("has_replication_filter", SqlType::Bit, |_| bit(false))
        .opt("is_merge_published", SqlType::Bit, |_| bit(false))
        .opt("is_sync_tran_subscribed", SqlType::Bit, |_| bit(false))
        .col("has_unchecked_assembly_data", SqlType::Bit, |_| bit(false))
        .opt("text_in_row_limit", SqlType::Int, |_| int(0))
        .opt("large_value_types_out_of_row", SqlType::Bit, |_| bit(false))
        .opt("is_tracked_by_cdc", SqlType::Bit, |_| bit(false))
        .opt("lock_escalation", SqlType::TinyInt, |_| tiny(0))
        .opt("lock_escalation_desc", DESC, |_| nstr("TABLE"))
        .opt("is_filetable", SqlType::Bit, |_| bit(false))
        .opt("is_memory_optimized", SqlType::Bit, |_| bit(false))
        .opt("durability", SqlType::TinyInt, |_| tiny(0))
        .opt("durability_desc", DESC, |_| nstr("SCHEMA_AND_DATA"))
        .opt("temporal_type", SqlType::TinyInt, |_| tiny(0))
        .opt("temporal_type_desc", DESC, |_| nstr("NON_TEMPORAL_TABLE"))
        .opt("history_table_id", SqlType::Int, |_| Value::Null)
        .opt("is_remote_data_archive_enabled", SqlType::Bit, |_| bit(false))
        .col("is_external", SqlType::Bit, |_| bit(false))
        .rows(&object_rows(ctx, |o| matches!(o, Object::Table(_))))
}

/// Whether a type is one of the `(MAX)` types.
pub(super) fn is_max(ty: SqlType) -> bool {
    matches!(
        ty,
        SqlType::VarChar(Len::Max) | SqlType::NVarChar(Len::Max) | SqlType::VarBinary(Len::Max)
    )
}

/// `sys.procedures`.
pub(super) fn procedures(ctx: &ViewContext<'_>) -> RowSet {
    object_columns()
        .col("is_auto_executed", SqlType::Bit, |_| bit(false))
        .opt("is_execution_replicated", SqlType::Bit, |_| bit(false))
        .opt("is_repl_serializable_ddl", SqlType::Bit, |_| bit(false))
        .opt("skips_repl_constraints", SqlType::Bit, |_| bit(false))
        .rows(&object_rows(ctx, |o| matches!(o, Object::Procedure(_))))
}

/// One parameter of a procedure or function, for `sys.parameters`.
pub(super) struct ParamRow {
    object_id: u32,
    name: String,
    /// 0 for a scalar function's return value, else the position from 1.
    parameter_id: usize,
    ty: SqlType,
    /// A user-defined type's id (an alias or a table type), else `None`.
    user_type_id: Option<u32>,
    /// A table-valued parameter (of a table type, READONLY).
    table_valued: bool,
    output: bool,
    has_default: bool,
}

/// The parameters of the procedures and functions of the view's database, read from their
/// stored text: by object, then position. Parameters of the database's alias and table types
/// are resolved against its catalog.
fn param_rows(ctx: &ViewContext<'_>) -> Vec<ParamRow> {
    let objects = ctx.database.catalog().objects();
    let user_type = |dt: &crate::ast::DataType| {
        let schema = dt.name.schema.as_ref().map_or("dbo", |s| s.value.as_str());
        objects.iter().find_map(|o| match &**o {
            Object::Type(t)
                if t.name.eq_ignore_ascii_case(&dt.name.name.value)
                    && t.schema.eq_ignore_ascii_case(schema) =>
            {
                Some(UserType { base: t.base, id: t.id, table: t.table.is_some() })
            }
            _ => None,
        })
    };
    let mut rows = Vec::new();
    for o in object_rows(ctx, |o| matches!(o, Object::Procedure(_) | Object::Function(_))) {
        let Some(text) = o.object.module_text() else { continue };
        let Ok(batch) = crate::parse_batch(text) else { continue };
        let Some(module) = declared_parameters(&batch, &user_type) else { continue };
        let id = o.object.id();
        if let Some(ty) = module.returns {
            rows.push(ParamRow {
                object_id: id,
                name: String::new(),
                parameter_id: 0,
                ty,
                user_type_id: None,
                table_valued: false,
                output: true,
                has_default: false,
            });
        }
        for p in module.parameters {
            rows.push(ParamRow {
                object_id: id,
                name: p.name,
                parameter_id: p.position,
                ty: p.ty,
                user_type_id: p.user_type.map(|u| u.id),
                table_valued: p.user_type.is_some_and(|u| u.table),
                output: p.output,
                has_default: p.has_default,
            });
        }
    }
    rows
}

/// A user-defined type a parameter is declared with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserType {
    /// An alias's base type (unused for a table type).
    pub(crate) base: SqlType,
    /// Its `user_type_id`.
    pub(crate) id: u32,
    /// A table type: the parameter is table-valued.
    pub(crate) table: bool,
}

/// A parameter as a procedure's or function's CREATE text declares it.
pub(crate) struct DeclaredParameter {
    pub(crate) name: String,
    /// From 1.
    pub(crate) position: usize,
    /// Its type (an alias's base type; INT, unused, for a table type).
    pub(crate) ty: SqlType,
    /// The user-defined type it is declared with, if any.
    pub(crate) user_type: Option<UserType>,
    pub(crate) output: bool,
    pub(crate) has_default: bool,
}

/// What a module's CREATE text declares: its parameters in order and a scalar function's
/// return type.
pub(crate) struct DeclaredModule {
    pub(crate) parameters: Vec<DeclaredParameter>,
    pub(crate) returns: Option<SqlType>,
}

/// The parameters of the CREATE PROCEDURE or CREATE FUNCTION in `batch` (a module's stored
/// text), for `sys.parameters` and `sp_sproc_columns`; `None` if it has neither. A type that
/// is not a system type is looked up with `user_type`; a parameter of a type neither knows is
/// left out, keeping the others' positions.
pub(crate) fn declared_parameters(
    batch: &crate::ast::Batch,
    user_type: &dyn Fn(&crate::ast::DataType) -> Option<UserType>,
) -> Option<DeclaredModule> {
    let (params, returns) = batch.statements.iter().find_map(|st| match &st.kind {
        StatementKind::CreateProcedure(p) => Some((&p.parameters, None)),
        StatementKind::CreateFunction(f) => Some(match &f.body {
            FunctionBody::Scalar { returns, .. } => (&f.parameters, Some(returns)),
            _ => (&f.parameters, None),
        }),
        _ => None,
    })?;
    let parameters = params
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let (ty, user_type) = match crate::exec::scalar::data_type(&p.data_type) {
                Ok(ty) => (ty, None),
                Err(_) => {
                    let u = user_type(&p.data_type)?;
                    (u.base, Some(u))
                }
            };
            Some(DeclaredParameter {
                name: p.name.clone(),
                position: i + 1,
                ty,
                user_type,
                output: p.output,
                has_default: p.default.is_some(),
            })
        })
        .collect();
    let returns = returns.and_then(|r| crate::exec::scalar::data_type(r).ok());
    Some(DeclaredModule { parameters, returns })
}

/// `sys.parameters`: the parameters of procedures and functions (a scalar function's return
/// value as parameter 0, unnamed), as tools that list or call them read them. SQL Server
/// leaves `default_value` NULL for T-SQL modules, as here.
pub(super) fn parameters(ctx: &ViewContext<'_>) -> RowSet {
    let off = |_: &ParamRow| bit(false);
    View::<ParamRow>::new()
        .col("object_id", SqlType::Int, |p| int(i64::from(p.object_id)))
        .opt("name", SYSNAME, |p| nstr(p.name.as_str()))
        .col("parameter_id", SqlType::Int, |p| int(p.parameter_id as i64))
        .col("system_type_id", SqlType::TinyInt, |p| {
            tiny(if p.table_valued { TABLE_TYPE_ID } else { p.ty.system_type_id() })
        })
        .col("user_type_id", SqlType::Int, |p| {
            int(p.user_type_id.map_or(i64::from(p.ty.system_type_id()), i64::from))
        })
        .col("max_length", SqlType::SmallInt, |p| {
            small(if p.table_valued { -1 } else { max_length(p.ty) })
        })
        .col("precision", SqlType::TinyInt, |p| {
            tiny(if p.table_valued { 0 } else { precision(p.ty) })
        })
        .col("scale", SqlType::TinyInt, |p| tiny(if p.table_valued { 0 } else { scale(p.ty) }))
        .col("is_output", SqlType::Bit, |p| bit(p.output))
        .col("is_cursor_ref", SqlType::Bit, off)
        .col("has_default_value", SqlType::Bit, |p| bit(p.has_default))
        .col("is_xml_document", SqlType::Bit, off)
        .opt("default_value", SqlType::NVarChar(Len::N(4000)), |_| Value::Null)
        .col("xml_collection_id", SqlType::Int, |_| int(0))
        // A table-valued parameter is READONLY, and is never NULL (an omitted one is empty).
        .col("is_readonly", SqlType::Bit, |p| bit(p.table_valued))
        .opt("is_nullable", SqlType::Bit, |p| bit(!p.table_valued))
        .rows(&param_rows(ctx))
}

/// SQL Server's `sql_variant` sequence values, as DECIMAL(38,0): wide enough for every
/// sequence type (Walden has no `sql_variant`).
const SEQUENCE_VALUE: SqlType = SqlType::Decimal { precision: 38, scale: 0 };

fn seq_value(v: i128) -> Value {
    Decimal::new(v, 0).map_or(Value::Null, Value::Decimal)
}

/// Whether a sequence without CYCLE has handed out its last value.
fn exhausted(s: &SequenceDef, current: Option<i128>) -> bool {
    !s.cycle
        && current.is_some_and(|v| {
            v.checked_add(s.increment).is_none_or(|next| next > s.max || next < s.min)
        })
}

/// `sys.sequences`.
pub(super) fn sequences(ctx: &ViewContext<'_>) -> RowSet {
    object_columns()
        .col("start_value", SEQUENCE_VALUE, |o| seq_field(o, |s| s.start))
        .col("increment", SEQUENCE_VALUE, |o| seq_field(o, |s| s.increment))
        .col("minimum_value", SEQUENCE_VALUE, |o| seq_field(o, |s| s.min))
        .col("maximum_value", SEQUENCE_VALUE, |o| seq_field(o, |s| s.max))
        .opt("is_cycling", SqlType::Bit, |o| bit(o.sequence().is_some_and(|s| s.cycle)))
        .opt("is_cached", SqlType::Bit, |o| bit(o.sequence().is_some_and(|s| s.cache.is_some())))
        .opt("cache_size", SqlType::Int, |o| {
            o.sequence().and_then(|s| s.cache).map_or(Value::Null, |n| int(i64::from(n)))
        })
        .col("system_type_id", SqlType::TinyInt, |o| {
            tiny(o.sequence().map_or(0, |s| s.ty.system_type_id()))
        })
        .col("user_type_id", SqlType::Int, |o| {
            int(o.sequence().map_or(0, |s| i64::from(s.ty.system_type_id())))
        })
        .col("precision", SqlType::TinyInt, |o| tiny(o.sequence().map_or(0, |s| precision(s.ty))))
        .col("scale", SqlType::TinyInt, |_| tiny(0))
        // The last value handed out, or START WITH before the first, as in SQL Server.
        .col("current_value", SEQUENCE_VALUE, |o| {
            o.sequence().map_or(Value::Null, |s| seq_value(o.seq_current.unwrap_or(s.start)))
        })
        .col("is_exhausted", SqlType::Bit, |o| {
            bit(o.sequence().is_some_and(|s| exhausted(s, o.seq_current)))
        })
        .opt("last_used_value", SEQUENCE_VALUE, |o| o.seq_current.map_or(Value::Null, seq_value))
        .rows(&object_rows(ctx, |o| matches!(o, Object::Sequence(_))))
}

fn seq_field(o: &ObjRow, f: fn(&SequenceDef) -> i128) -> Value {
    o.sequence().map_or(Value::Null, |s| seq_value(f(s)))
}

/// `sys.columns.max_length`: bytes, -1 for `(MAX)`, two per character of NCHAR/NVARCHAR.
pub(crate) fn max_length(ty: SqlType) -> i64 {
    match ty {
        SqlType::TinyInt | SqlType::Bit => 1,
        SqlType::SmallInt => 2,
        SqlType::Int | SqlType::Real => 4,
        SqlType::BigInt | SqlType::Float | SqlType::Money | SqlType::DateTime => 8,
        SqlType::Decimal { precision, .. } => match precision {
            0..=9 => 5,
            10..=19 => 9,
            20..=28 => 13,
            _ => 17,
        },
        SqlType::Char(n) | SqlType::Binary(n) => i64::from(n),
        SqlType::NChar(n) => 2 * i64::from(n),
        SqlType::VarChar(Len::N(n)) | SqlType::VarBinary(Len::N(n)) => i64::from(n),
        SqlType::NVarChar(Len::N(n)) => 2 * i64::from(n),
        SqlType::VarChar(Len::Max) | SqlType::NVarChar(Len::Max) | SqlType::VarBinary(Len::Max) => {
            -1
        }
        SqlType::Date => 3,
        SqlType::Time(s) => time_bytes(s),
        SqlType::DateTime2(s) => time_bytes(s) + 3,
        SqlType::DateTimeOffset(s) => time_bytes(s) + 5,
        SqlType::UniqueIdentifier => 16,
        SqlType::Variant => 8016,
        SqlType::Xml => -1,
    }
}

/// Bytes of a TIME(s) value in SQL Server.
fn time_bytes(scale: u8) -> i64 {
    match scale {
        0..=2 => 3,
        3..=4 => 4,
        _ => 5,
    }
}

/// `sys.columns.precision`: digits of numeric types, the display width of temporal ones.
pub(crate) fn precision(ty: SqlType) -> u8 {
    let fraction = |s: u8| if s == 0 { 0 } else { s + 1 };
    match ty {
        SqlType::TinyInt => 3,
        SqlType::SmallInt => 5,
        SqlType::Int => 10,
        SqlType::BigInt | SqlType::Money => 19,
        SqlType::Bit => 1,
        SqlType::Decimal { precision, .. } => precision,
        SqlType::Float => 53,
        SqlType::Real => 24,
        SqlType::Date => 10,
        SqlType::Time(s) => 8 + fraction(s),
        SqlType::DateTime => 23,
        SqlType::DateTime2(s) => 19 + fraction(s),
        SqlType::DateTimeOffset(s) => 26 + fraction(s),
        _ => 0,
    }
}

/// `sys.columns.scale`.
pub(crate) fn scale(ty: SqlType) -> u8 {
    match ty {
        SqlType::Decimal { scale, .. } => scale,
        SqlType::Time(s) | SqlType::DateTime2(s) | SqlType::DateTimeOffset(s) => s,
        SqlType::DateTime => 3,
        SqlType::Money => 4,
        _ => 0,
    }
}

/// A column of a table, as `sys.columns` shows it.
pub(super) struct ColRow {
    pub(super) object_id: u32,
    /// 1-based, as SQL Server numbers columns.
    pub(super) column_id: usize,
    pub(super) def: ColumnDef,
    /// For an identity column: the last value handed out, if any (`IDENT_CURRENT`).
    pub(super) identity_last: Option<i64>,
}

/// The columns of the view's database's tables and views, by object and column id.
pub(super) fn column_rows(ctx: &ViewContext<'_>) -> Vec<ColRow> {
    let db = ctx.database;
    let mut rows: Vec<ColRow> = db
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::Table(t) => Some(t),
            _ => None,
        })
        .flat_map(|t| {
            let identity_last = db.identity_current(t);
            t.columns.iter().enumerate().map(move |(i, c)| ColRow {
                object_id: t.id,
                column_id: i + 1,
                def: c.clone(),
                identity_last: c.identity.and(identity_last),
            })
        })
        .collect();
    for (view, columns) in ctx.view_columns {
        rows.extend(columns.iter().enumerate().map(|(i, c)| ColRow {
            object_id: *view,
            column_id: i + 1,
            def: c.clone(),
            identity_last: None,
        }));
    }
    rows.sort_by_key(|r| (r.object_id, r.column_id));
    rows
}

/// The columns of `sys.columns`, which `sys.identity_columns` starts with.
pub(super) fn column_columns() -> View<ColRow> {
    let off = |_: &ColRow| bit(false);
    View::<ColRow>::new()
        // System objects' ids are negative, kept as their two's complement.
        .col("object_id", SqlType::Int, |c| int(i64::from(c.object_id as i32)))
        .opt("name", SYSNAME, |c| nstr(c.def.name.as_str()))
        .col("column_id", SqlType::Int, |c| int(c.column_id as i64))
        .col("system_type_id", SqlType::TinyInt, |c| tiny(column_type_id(&c.def)))
        .col("user_type_id", SqlType::Int, |c| int(i64::from(column_type_id(&c.def))))
        .col("max_length", SqlType::SmallInt, |c| match c.def.declared {
            Some(d) => small(i64::from(d.max_length())),
            None => small(max_length(c.def.ty)),
        })
        .col("precision", SqlType::TinyInt, |c| match c.def.declared {
            Some(d) => tiny(d.precision_scale().0),
            None => tiny(precision(c.def.ty)),
        })
        .col("scale", SqlType::TinyInt, |c| match c.def.declared {
            Some(d) => tiny(d.precision_scale().1),
            None => tiny(scale(c.def.ty)),
        })
        .opt("collation_name", SYSNAME, |c| {
            if c.def.ty.is_text() {
                nstr(c.def.collation.as_deref().unwrap_or(COLLATION))
            } else {
                Value::Null
            }
        })
        .opt("is_nullable", SqlType::Bit, |c| bit(c.def.nullable))
        .col("is_ansi_padded", SqlType::Bit, |c| bit(is_ansi_padded(c.def.ty)))
        .col("is_rowguidcol", SqlType::Bit, off)
        .col("is_identity", SqlType::Bit, |c| bit(c.def.identity.is_some()))
        .col("is_computed", SqlType::Bit, |c| bit(c.def.computed.is_some()))
        .col("is_filestream", SqlType::Bit, off)
        .opt("is_replicated", SqlType::Bit, off)
        .opt("is_non_sql_subscribed", SqlType::Bit, off)
        .opt("is_merge_published", SqlType::Bit, off)
        .opt("is_dts_replicated", SqlType::Bit, off)
        .col("is_xml_document", SqlType::Bit, off)
        .col("xml_collection_id", SqlType::Int, |_| int(0))
        // The column's DEFAULT, by the id `sys.default_constraints` gives it.
        .col("default_object_id", SqlType::Int, |c| int(i64::from(default_object_id(c))))
        .col("rule_object_id", SqlType::Int, |_| int(0))
        .opt("is_sparse", SqlType::Bit, off)
        .opt("is_column_set", SqlType::Bit, off)
        .opt("generated_always_type", SqlType::TinyInt, |_| tiny(0))
        .opt("generated_always_type_desc", DESC, |_| nstr("NOT_APPLICABLE"))
}

/// The synthetic object id of a column's DEFAULT (see `constraints::constraint_id`), 0 for a
/// column without one.
pub(super) fn default_object_id(c: &ColRow) -> u32 {
    if c.def.default.is_some() {
        constraint_id(c.object_id, ConstraintKind::Default, c.column_id)
    } else {
        0
    }
}

/// Whether SQL Server keeps trailing blanks or zeros of a column's values (ANSI_PADDING ON,
/// always so for the character and binary types).
pub(super) fn is_ansi_padded(ty: SqlType) -> bool {
    ty.is_text() || matches!(ty, SqlType::Binary(_) | SqlType::VarBinary(_))
}

/// `sys.columns`: the columns of the view's database's tables, by object and column id.
pub(super) fn columns(ctx: &ViewContext<'_>) -> RowSet {
    column_columns().rows(&column_rows(ctx))
}

/// A built-in type as `sys.types` lists it: name, system_type_id, user_type_id, max_length,
/// precision, scale, and whether it has a collation.
type TypeRow = (&'static str, u8, i64, i64, u8, u8, bool);

/// The built-in types Walden has, with SQL Server's ids and sizes (`sysname` is the alias of
/// `nvarchar(128)` it is in SQL Server).
const TYPES: [TypeRow; 31] = [
    ("image", 34, 34, 16, 0, 0, false),
    ("text", 35, 35, 16, 0, 0, true),
    ("smalldatetime", 58, 58, 4, 16, 0, false),
    ("ntext", 99, 99, 16, 0, 0, true),
    ("smallmoney", 122, 122, 4, 10, 4, false),
    ("uniqueidentifier", 36, 36, 16, 0, 0, false),
    ("date", 40, 40, 3, 10, 0, false),
    ("time", 41, 41, 5, 16, 7, false),
    ("datetime2", 42, 42, 8, 27, 7, false),
    ("datetimeoffset", 43, 43, 10, 34, 7, false),
    ("tinyint", 48, 48, 1, 3, 0, false),
    ("smallint", 52, 52, 2, 5, 0, false),
    ("int", 56, 56, 4, 10, 0, false),
    ("sql_variant", 98, 98, 8016, 0, 0, false),
    ("xml", 241, 241, -1, 0, 0, false),
    ("real", 59, 59, 4, 24, 0, false),
    ("money", 60, 60, 8, 19, 4, false),
    ("datetime", 61, 61, 8, 23, 3, false),
    ("float", 62, 62, 8, 53, 0, false),
    ("bit", 104, 104, 1, 1, 0, false),
    ("decimal", 106, 106, 17, 38, 38, false),
    ("numeric", 108, 108, 17, 38, 38, false),
    ("bigint", 127, 127, 8, 19, 0, false),
    ("varbinary", 165, 165, 8000, 0, 0, false),
    ("varchar", 167, 167, 8000, 0, 0, true),
    ("binary", 173, 173, 8000, 0, 0, false),
    ("char", 175, 175, 8000, 0, 0, true),
    ("timestamp", 189, 189, 8, 0, 0, false),
    ("nvarchar", 231, 231, 8000, 0, 0, true),
    ("nchar", 239, 239, 8000, 0, 0, true),
    ("sysname", 231, 256, 256, 0, 0, true),
];

/// A column's `system_type_id`: its type's, `timestamp`'s (189) for a row version, which is
/// stored as BINARY(8), or the type it was declared with (SMALLDATETIME, ...).
pub(super) fn column_type_id(c: &ColumnDef) -> u8 {
    match c.declared {
        _ if c.rowversion => 189,
        Some(declared) => declared.system_type_id(),
        None => c.ty.system_type_id(),
    }
}

/// `TYPE_NAME(id)`: the name of the type with user_type_id `id`.
pub(crate) fn type_name(id: i64) -> Option<&'static str> {
    TYPES.iter().find(|t| t.2 == id).map(|t| t.0)
}

/// `TYPE_ID(name)`: the user_type_id of the type named `name` (any case).
pub(crate) fn type_id(name: &str) -> Option<i64> {
    TYPES.iter().find(|t| t.0.eq_ignore_ascii_case(name)).map(|t| t.2)
}

/// `master.dbo.spt_values`, the table SQL Server keeps for its own procedures and that
/// scripts use as a numbers table: Walden has its type `P` rows, the numbers 0 to 2047.
pub(crate) fn spt_values() -> RowSet {
    let numbers: Vec<i64> = (0..=2047).collect();
    View::<i64>::new()
        .opt("name", SqlType::NVarChar(Len::N(35)), |_| Value::Null)
        .col("number", SqlType::Int, |&n| int(n))
        .col("type", SqlType::NChar(3), |_| nstr("P  "))
        .opt("low", SqlType::Int, |_| Value::Null)
        .opt("high", SqlType::Int, |_| Value::Null)
        .opt("status", SqlType::Int, |_| int(0))
        .rows(&numbers)
}

/// `sys.types`: the built-in types, in SQL Server's columns (Walden has no user-defined types).
pub(super) fn types(ctx: &ViewContext<'_>) -> RowSet {
    // (row, schema_id, user-defined alias nullability, table type): the built-in types, then
    // the database's user-defined ones (CREATE TYPE), whose user_type_id is their object id.
    let objects = ctx.database.catalog().objects();
    let schemas = schema_list(&objects);
    let mut rows: Vec<(TypeRow, i64, Option<bool>, bool, String)> =
        TYPES.iter().map(|t| (*t, 4, None, false, t.0.to_string())).collect();
    for o in &objects {
        if let Object::Type(t) = &**o {
            let system = t.base.system_type_id();
            let schema_id = schemas
                .iter()
                .find(|(n, _, _)| n.eq_ignore_ascii_case(&t.schema))
                .map_or(1, |s| s.1);
            let table = t.table.is_some();
            let (system, length, precision, scale) = if table {
                (243, -1, 0, 0)
            } else {
                (system, max_length(t.base), self::precision(t.base), self::scale(t.base))
            };
            let row: TypeRow =
                ("", system, i64::from(t.id), length, precision, scale, t.base.is_text() && !table);
            rows.push((row, schema_id, Some(t.nullable), table, t.name.clone()));
        }
    }
    View::<(TypeRow, i64, Option<bool>, bool, String)>::new()
        .col("name", SYSNAME, |t| nstr(t.4.as_str()))
        .col("system_type_id", SqlType::TinyInt, |t| tiny(t.0 .1))
        .col("user_type_id", SqlType::Int, |t| int(t.0 .2))
        .col("schema_id", SqlType::Int, |t| int(t.1))
        .opt("principal_id", SqlType::Int, |_| Value::Null)
        .col("max_length", SqlType::SmallInt, |t| small(t.0 .3))
        .col("precision", SqlType::TinyInt, |t| tiny(t.0 .4))
        .col("scale", SqlType::TinyInt, |t| tiny(t.0 .5))
        .opt("collation_name", SYSNAME, |t| if t.0 .6 { nstr(COLLATION) } else { Value::Null })
        .opt("is_nullable", SqlType::Bit, |t| bit(t.2.unwrap_or(t.4 != "sysname")))
        .col("is_user_defined", SqlType::Bit, |t| bit(t.2.is_some()))
        .col("is_assembly_type", SqlType::Bit, |_| bit(false))
        .col("default_object_id", SqlType::Int, |_| int(0))
        .col("rule_object_id", SqlType::Int, |_| int(0))
        .col("is_table_type", SqlType::Bit, |t| bit(t.3))
        .rows(&rows)
}

/// `system_type_id` of a table type and of a table-valued parameter.
const TABLE_TYPE_ID: u8 = 243;

/// `sys.table_types`: the table types (CREATE TYPE ... AS TABLE), with `sys.types`' columns.
pub(super) fn table_types(ctx: &ViewContext<'_>) -> RowSet {
    let objects = ctx.database.catalog().objects();
    let schemas = schema_list(&objects);
    let rows: Vec<(String, i64, i64)> = objects
        .iter()
        .filter_map(|o| match &**o {
            Object::Type(t) if t.table.is_some() => {
                let schema = schemas
                    .iter()
                    .find(|(n, _, _)| n.eq_ignore_ascii_case(&t.schema))
                    .map_or(1, |s| s.1);
                Some((t.name.clone(), i64::from(t.id), schema))
            }
            _ => None,
        })
        .collect();
    let off = |_: &(String, i64, i64)| bit(false);
    View::<(String, i64, i64)>::new()
        .col("name", SYSNAME, |t| nstr(t.0.as_str()))
        .col("system_type_id", SqlType::TinyInt, |_| tiny(TABLE_TYPE_ID))
        .col("user_type_id", SqlType::Int, |t| int(t.1))
        .col("schema_id", SqlType::Int, |t| int(t.2))
        .opt("principal_id", SqlType::Int, |_| Value::Null)
        .col("max_length", SqlType::SmallInt, |_| small(-1))
        .col("precision", SqlType::TinyInt, |_| tiny(0))
        .col("scale", SqlType::TinyInt, |_| tiny(0))
        .opt("collation_name", SYSNAME, |_| Value::Null)
        .opt("is_nullable", SqlType::Bit, off)
        .col("is_user_defined", SqlType::Bit, |_| bit(true))
        .col("is_assembly_type", SqlType::Bit, off)
        .col("default_object_id", SqlType::Int, |_| int(0))
        .col("rule_object_id", SqlType::Int, |_| int(0))
        .col("is_table_type", SqlType::Bit, |_| bit(true))
        .col("type_table_object_id", SqlType::Int, |t| int(t.1))
        .col("is_memory_optimized", SqlType::Bit, off)
        .rows(&rows)
}

/// `sys.synonyms`: `sys.objects`' columns and `base_object_name`; Walden has no synonyms.
pub(super) fn synonyms(_ctx: &ViewContext<'_>) -> RowSet {
    object_columns()
        .opt("base_object_name", SqlType::NVarChar(Len::N(1035)), |_| Value::Null)
        .rows(&[])
}
