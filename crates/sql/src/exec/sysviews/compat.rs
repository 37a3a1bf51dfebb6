//! SQL Server 2000's system tables as SQL Server keeps them, compatibility views:
//! `sys.sysobjects` and `sys.syscolumns` (also reachable as `sysobjects`, `dbo.sysobjects`,
//! `syscolumns`...), and `sys.all_objects` / `sys.system_objects`.
//!
//! Old scripts test for an object with `IF EXISTS (SELECT * FROM sysobjects WHERE name = 'x'
//! AND xtype = 'U')` and list a table's columns with `SELECT name FROM syscolumns WHERE id =
//! OBJECT_ID('t')`: those columns have SQL Server's values. The columns SQL Server documents
//! as internal hold constants (0, or NULL where SQL Server's are NULL).
//!
//! The system views and functions are not in a database's catalog: `sys.system_objects` lists
//! them from `system_objects.rs`, and `sys.all_objects` lists them after `sys.objects`' rows.

use walden_engine::catalog::Object;
use walden_engine::types::{Len, SqlType, Value};

use super::catalog::{
    column_rows, created_micros, default_object_id, is_ansi_padded, is_max, max_length,
    object_columns, object_rows, objects, precision, scale, ColRow,
};
use super::constraints::{constraint_rows, Constraint};
use super::databases::files_of;
use super::{datetime, int, nstr, small, tiny, View, ViewContext, COLLATION, SYSNAME};
use crate::exec::RowSet;

/// `collationid` of SQL_Latin1_General_CP1_CI_AS, the collation of every Walden database.
const COLLATION_ID: i64 = 872_468_488;
/// The same collation as TDS sends it (LCID 0x0409, its flags, sort id 52).
const TDS_COLLATION: [u8; 5] = [0x09, 0x04, 0xD0, 0x00, 0x34];

/// An object or a constraint, as `sysobjects` lists it.
struct SysObjectRow {
    name: String,
    id: u32,
    /// `xtype`, blank-padded to CHAR(2).
    xtype: &'static str,
    /// `type`: `xtype`, except `K ` for both PRIMARY KEY and UNIQUE constraints.
    kind: &'static str,
    schema_id: i64,
    parent: u32,
    created_us: u64,
}

/// The view's database's objects and their tables' constraints, by id (so objects first:
/// constraint ids are above every object id).
fn sysobject_rows(ctx: &ViewContext<'_>) -> Vec<SysObjectRow> {
    let mut rows: Vec<SysObjectRow> = object_rows(ctx, |_| true)
        .into_iter()
        .map(|o| {
            let xtype = match &*o.object {
                Object::Table(_) => "U ",
                Object::Procedure(_) => "P ",
                Object::View(_) => "V ",
                Object::Function(f) if f.multi_statement => "TF",
                Object::Function(f) if f.returns_table => "IF",
                Object::Function(_) => "FN",
                Object::Sequence(_) => "SO",
                Object::Trigger(_) => "TR",
                Object::Schema(_) | Object::Properties(_) | Object::Type(_) => "  ",
            };
            let parent = match &*o.object {
                Object::Trigger(t) => t.table,
                _ => 0,
            };
            SysObjectRow {
                name: o.object.name().1.to_string(),
                id: o.object.id(),
                xtype,
                kind: xtype,
                schema_id: o.schema_id,
                parent,
                created_us: o.created_us,
            }
        })
        .collect();
    rows.extend(constraint_rows(ctx).into_iter().map(|c| {
        let xtype = c.kind.type_code();
        let kind = match c.kind {
            Constraint::PrimaryKey { .. } | Constraint::Unique { .. } => "K ",
            _ => xtype,
        };
        SysObjectRow {
            name: c.name,
            id: c.id,
            xtype,
            kind,
            schema_id: c.schema_id,
            parent: c.table_id,
            created_us: c.created_us,
        }
    }));
    rows.sort_by_key(|r| r.id);
    rows
}

/// `sysstat`: its low four bits are the object's kind in SQL Server 2000's numbering, which
/// old scripts test with `sysstat & 0xf = 4` (a procedure), `= 2` (a view) or `= 3` (a user
/// table). Kinds that numbering has no value for (functions, sequences, constraints) are 0.
fn sysstat(xtype: &str) -> i64 {
    match xtype {
        "S " => 1,
        "V " => 2,
        "U " => 3,
        "P " | "X " | "RF" => 4,
        "D " => 6,
        "R " => 7,
        "TR" => 8,
        _ => 0,
    }
}

/// `sys.sysobjects`: the objects of `sys.objects` and the PRIMARY KEY, UNIQUE, DEFAULT and
/// CHECK constraints of `sys.key_constraints`, `sys.default_constraints` and
/// `sys.check_constraints`, with their ids.
pub(super) fn sysobjects(ctx: &ViewContext<'_>) -> RowSet {
    let zero_small = |_: &SysObjectRow| small(0);
    let zero = |_: &SysObjectRow| int(0);
    View::<SysObjectRow>::new()
        .col("name", SYSNAME, |r| nstr(r.name.as_str()))
        .col("id", SqlType::Int, |r| int(i64::from(r.id)))
        .col("xtype", SqlType::Char(2), |r| Value::Str(r.xtype.to_string()))
        .opt("uid", SqlType::SmallInt, |r| small(r.schema_id))
        .opt("info", SqlType::SmallInt, zero_small)
        .opt("status", SqlType::Int, zero)
        .opt("base_schema_ver", SqlType::Int, zero)
        .opt("replinfo", SqlType::Int, zero)
        .col("parent_obj", SqlType::Int, |r| int(i64::from(r.parent)))
        .col("crdate", SqlType::DateTime, |r| datetime(r.created_us))
        .opt("ftcatid", SqlType::SmallInt, zero_small)
        .opt("schema_ver", SqlType::Int, zero)
        .opt("stats_schema_ver", SqlType::Int, zero)
        .opt("type", SqlType::Char(2), |r| Value::Str(r.kind.to_string()))
        .opt("userstat", SqlType::SmallInt, zero_small)
        .opt("sysstat", SqlType::SmallInt, |r| small(sysstat(r.xtype)))
        .opt("indexdel", SqlType::SmallInt, zero_small)
        .col("refdate", SqlType::DateTime, |r| datetime(r.created_us))
        .opt("version", SqlType::Int, zero)
        .opt("deltrig", SqlType::Int, zero)
        .opt("instrig", SqlType::Int, zero)
        .opt("updtrig", SqlType::Int, zero)
        .opt("seltrig", SqlType::Int, zero)
        .opt("category", SqlType::Int, zero)
        .opt("cache", SqlType::SmallInt, zero_small)
        .rows(&sysobject_rows(ctx))
}

/// `syscolumns.type`: the type in the TDS 4.2 type codes SQL Server 2000 kept, where a
/// nullable integer, float, money, datetime or decimal column has the type's nullable
/// variant (INTN 38, FLTN 109, MONEYN 110, DATETIMN 111, DECIMALN 106). Types newer than
/// those codes keep their `xtype`.
fn legacy_type(c: &ColRow) -> u8 {
    let n = c.def.nullable;
    match c.def.ty {
        SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt if n => 38,
        // SYBBIT: bit has no nullable variant among these codes.
        SqlType::Bit => 50,
        SqlType::Float | SqlType::Real if n => 109,
        SqlType::Money if n => 110,
        SqlType::DateTime if n => 111,
        SqlType::Decimal { .. } if n => 106,
        SqlType::Decimal { .. } => 55,
        SqlType::Char(_) | SqlType::NChar(_) => 47,
        SqlType::VarChar(_) | SqlType::NVarChar(_) => 39,
        SqlType::Binary(_) => 45,
        SqlType::VarBinary(_) => 37,
        ty => ty.system_type_id(),
    }
}

/// `syscolumns.usertype`: SQL Server 2000's user type id of the type, 0 for the types it
/// gave none (nchar, nvarchar, bigint, uniqueidentifier and the newer ones).
fn legacy_usertype(ty: SqlType) -> i64 {
    match ty {
        SqlType::Char(_) => 1,
        SqlType::VarChar(_) => 2,
        SqlType::Binary(_) => 3,
        SqlType::VarBinary(_) => 4,
        SqlType::TinyInt => 5,
        SqlType::SmallInt => 6,
        SqlType::Int => 7,
        SqlType::Float => 8,
        SqlType::Money => 11,
        SqlType::DateTime => 12,
        SqlType::Bit => 16,
        SqlType::Real => 23,
        SqlType::Decimal { .. } => 24,
        _ => 0,
    }
}

/// `syscolumns.prec`, ODBC's precision: characters (bytes for binary types) of a string
/// type, -1 for a `(MAX)` type, 36 for uniqueidentifier, else `sys.columns.precision`.
fn odbc_precision(ty: SqlType) -> i64 {
    match ty {
        _ if is_max(ty) => -1,
        SqlType::Char(n) | SqlType::NChar(n) | SqlType::Binary(n) => i64::from(n),
        SqlType::VarChar(Len::N(n))
        | SqlType::NVarChar(Len::N(n))
        | SqlType::VarBinary(Len::N(n)) => i64::from(n),
        SqlType::UniqueIdentifier => 36,
        _ => i64::from(precision(ty)),
    }
}

/// `syscolumns.scale`, ODBC's scale: NULL for the types that have none (strings, binary,
/// float, real, date, uniqueidentifier).
fn odbc_scale(ty: SqlType) -> Value {
    match ty {
        SqlType::TinyInt
        | SqlType::SmallInt
        | SqlType::Int
        | SqlType::BigInt
        | SqlType::Bit
        | SqlType::Money
        | SqlType::DateTime
        | SqlType::Decimal { .. }
        | SqlType::Time(_)
        | SqlType::DateTime2(_)
        | SqlType::DateTimeOffset(_) => int(i64::from(scale(ty))),
        _ => Value::Null,
    }
}

/// `syscolumns.status`: 0x08 nullable, 0x10 ANSI padding, 0x80 identity.
fn column_status(c: &ColRow) -> u8 {
    let mut status = 0;
    if c.def.nullable {
        status |= 0x08;
    }
    if is_ansi_padded(c.def.ty) {
        status |= 0x10;
    }
    if c.def.identity.is_some() {
        status |= 0x80;
    }
    status
}

/// `sys.syscolumns`: the columns of `sys.columns` (Walden stores no procedure parameters, so
/// there are no parameter rows).
pub(super) fn syscolumns(ctx: &ViewContext<'_>) -> RowSet {
    View::<ColRow>::new()
        .opt("name", SYSNAME, |c| nstr(c.def.name.as_str()))
        .col("id", SqlType::Int, |c| int(i64::from(c.object_id)))
        .col("xtype", SqlType::TinyInt, |c| tiny(c.def.ty.system_type_id()))
        .opt("typestat", SqlType::TinyInt, |_| tiny(0))
        .opt("xusertype", SqlType::SmallInt, |c| small(i64::from(c.def.ty.system_type_id())))
        .col("length", SqlType::SmallInt, |c| small(max_length(c.def.ty)))
        .col("xprec", SqlType::TinyInt, |c| tiny(precision(c.def.ty)))
        .col("xscale", SqlType::TinyInt, |c| tiny(scale(c.def.ty)))
        .opt("colid", SqlType::SmallInt, |c| small(c.column_id as i64))
        .opt("xoffset", SqlType::SmallInt, |_| small(0))
        .opt("bitpos", SqlType::TinyInt, |_| tiny(0))
        .opt("reserved", SqlType::TinyInt, |_| tiny(0))
        .opt("colstat", SqlType::SmallInt, |_| small(0))
        .col("cdefault", SqlType::Int, |c| int(i64::from(default_object_id(c))))
        .col("domain", SqlType::Int, |_| int(0))
        .opt("number", SqlType::SmallInt, |_| small(0))
        .opt("colorder", SqlType::SmallInt, |c| small(c.column_id as i64))
        .opt("autoval", SqlType::VarBinary(Len::N(8000)), |_| Value::Null)
        .opt("offset", SqlType::SmallInt, |_| small(0))
        .opt("collationid", SqlType::Int, |c| {
            if c.def.ty.is_text() {
                int(COLLATION_ID)
            } else {
                Value::Null
            }
        })
        .opt("language", SqlType::Int, |_| int(0))
        .opt("status", SqlType::TinyInt, |c| tiny(column_status(c)))
        .col("type", SqlType::TinyInt, |c| tiny(legacy_type(c)))
        .opt("usertype", SqlType::SmallInt, |c| small(legacy_usertype(c.def.ty)))
        .opt("printfmt", SqlType::VarChar(Len::N(255)), |_| Value::Null)
        .opt("prec", SqlType::SmallInt, |c| small(odbc_precision(c.def.ty)))
        .opt("scale", SqlType::Int, |c| odbc_scale(c.def.ty))
        .opt("iscomputed", SqlType::Int, |_| int(0))
        .opt("isoutparam", SqlType::Int, |_| int(0))
        .opt("isnullable", SqlType::Int, |c| int(i64::from(c.def.nullable)))
        .opt("collation", SYSNAME, |c| {
            if c.def.ty.is_text() {
                nstr(c.def.collation.as_deref().unwrap_or(COLLATION))
            } else {
                Value::Null
            }
        })
        .opt("tdscollation", SqlType::Binary(5), |c| {
            if c.def.ty.is_text() {
                Value::Binary(TDS_COLLATION.to_vec())
            } else {
                Value::Null
            }
        })
        .rows(&column_rows(ctx))
}

/// `sys.all_objects`: the objects of `sys.objects`, then the system views and functions.
pub(super) fn all_objects(ctx: &ViewContext<'_>) -> RowSet {
    let mut set = objects(ctx);
    set.rows.extend(system_objects(ctx).rows);
    set
}

/// `sys.system_objects`: the system views and functions Walden has
/// ([`super::system_objects`]).
pub(super) fn system_objects(ctx: &ViewContext<'_>) -> RowSet {
    let created = super::datetime(super::catalog::created_micros(ctx.instance.master()));
    let mut set = object_columns().rows(&[]);
    set.rows = super::system_objects::object_rows(created);
    set
}

/// A database, as `sysdatabases` lists it.
struct SysDatabaseRow {
    name: String,
    id: u32,
    /// SQL Server 2000's `status` bits that Walden's state can say: 8 (`trunc. log on chkpt.`,
    /// the SIMPLE recovery model), 512 (offline) and 65536 (CHECKSUM page verification, which
    /// every Walden database has).
    status: i64,
    created_us: u64,
    filename: String,
}

/// `sys.sysdatabases` (also `sysdatabases`, `master..sysdatabases`): every database of the
/// instance, by id, with the columns SQL Server 2000's table had. Old install scripts test
/// `IF EXISTS (SELECT * FROM sysdatabases WHERE name = 'pubs')` before dropping a database.
pub(super) fn sysdatabases(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<SysDatabaseRow> = ctx
        .instance
        .databases()
        .into_iter()
        .map(|db| {
            let mut status = 65_536;
            if db.recovery_model() == walden_engine::RecoveryModel::Simple {
                status |= 8;
            }
            if db.state() != walden_engine::database::DatabaseState::Online {
                status |= 512;
            }
            let [data, _log] = files_of(&db);
            SysDatabaseRow {
                name: db.name().to_string(),
                id: db.id(),
                status,
                created_us: created_micros(&db),
                filename: data.physical_name,
            }
        })
        .collect();
    View::<SysDatabaseRow>::new()
        .col("name", SYSNAME, |r| nstr(r.name.as_str()))
        .col("dbid", SqlType::SmallInt, |r| small(i64::from(r.id)))
        .opt("sid", SqlType::VarBinary(Len::N(85)), |_| Value::Binary(vec![1]))
        .opt("mode", SqlType::SmallInt, |_| small(0))
        .opt("status", SqlType::Int, |r| int(r.status))
        .opt("status2", SqlType::Int, |_| int(0))
        .col("crdate", SqlType::DateTime, |r| datetime(r.created_us))
        .col("reserved", SqlType::DateTime, |_| {
            // SQL Server leaves it at the datetime zero, 1900-01-01.
            walden_engine::types::DateTime::from_parts(0, 0).map_or(Value::Null, Value::DateTime)
        })
        .opt("category", SqlType::Int, |_| int(0))
        .opt("cmptlevel", SqlType::TinyInt, |_| tiny(160))
        .opt("filename", SqlType::NVarChar(Len::N(260)), |r| nstr(r.filename.as_str()))
        .opt("version", SqlType::SmallInt, |_| small(957))
        .rows(&rows)
}

/// A TINYINT of `v`, clamped to its range.
fn tiny8(v: i64) -> Value {
    tiny(u8::try_from(v.clamp(0, 255)).unwrap_or(u8::MAX))
}

/// A value of a `sys.types` row read as an integer (0 for NULL or a non-integer).
fn type_int(v: &Value) -> i64 {
    match v {
        Value::TinyInt(x) => i64::from(*x),
        Value::SmallInt(x) => i64::from(*x),
        Value::Int(x) => i64::from(*x),
        Value::BigInt(x) => *x,
        Value::Bit(b) => i64::from(*b),
        _ => 0,
    }
}

/// `sys.systypes` (also `systypes`, `dbo.systypes`): SQL Server 2000's list of types, built
/// from the rows of `sys.types` (the built-in types, then the database's own). Old scripts
/// test `IF NOT EXISTS (SELECT * FROM systypes WHERE name = 'x')` before `sp_addtype`.
///
/// Invariant: `sys.types`' columns are, in order, name, system_type_id, user_type_id,
/// schema_id, principal_id, max_length, precision, scale, collation_name, is_nullable,
/// is_user_defined (see `catalog::types`).
pub(super) fn systypes(ctx: &ViewContext<'_>) -> RowSet {
    let types = super::catalog::types(ctx);
    View::<Vec<Value>>::new()
        .col("name", SYSNAME, |r| r[0].clone())
        .col("xtype", SqlType::TinyInt, |r| tiny8(type_int(&r[1])))
        .col("status", SqlType::TinyInt, |_| tiny(0))
        .col("xusertype", SqlType::SmallInt, |r| small(type_int(&r[2])))
        .col("length", SqlType::SmallInt, |r| small(type_int(&r[5])))
        .col("xprec", SqlType::TinyInt, |r| tiny8(type_int(&r[6])))
        .col("xscale", SqlType::TinyInt, |r| tiny8(type_int(&r[7])))
        .col("tdefault", SqlType::Int, |_| int(0))
        .col("domain", SqlType::Int, |_| int(0))
        .col("uid", SqlType::SmallInt, |r| small(type_int(&r[3])))
        .col("reserved", SqlType::SmallInt, |_| small(0))
        .opt("collationid", SqlType::Int, |r| {
            if !r[8].is_null() {
                int(COLLATION_ID)
            } else {
                Value::Null
            }
        })
        .opt("usertype", SqlType::SmallInt, |r| small(type_int(&r[2])))
        // varbinary, varchar, nvarchar, sql_variant: the types whose values vary in length.
        .col("variable", SqlType::Bit, |r| {
            Value::Bit(matches!(type_int(&r[1]), 165 | 167 | 231 | 98))
        })
        .opt("allownulls", SqlType::Bit, |r| Value::Bit(type_int(&r[9]) != 0))
        .col("type", SqlType::TinyInt, |r| tiny8(type_int(&r[1])))
        .opt("printfmt", SqlType::VarChar(Len::N(255)), |_| Value::Null)
        .opt("prec", SqlType::SmallInt, |r| {
            // Characters for the character types (two bytes each for the national ones),
            // digits for the others.
            match type_int(&r[1]) {
                231 | 239 => small(type_int(&r[5]) / 2),
                _ if !r[8].is_null() => small(type_int(&r[5])),
                _ => small(type_int(&r[6])),
            }
        })
        .opt("scale", SqlType::TinyInt, |r| tiny8(type_int(&r[7])))
        .opt("collation", SYSNAME, |r| r[8].clone())
        .rows(&types.rows)
}

/// `sys.syslanguages`: the languages `SET LANGUAGE` takes, with SQL Server's ids, date orders,
/// first weekdays, month and day names (comma-separated, days from Monday) and locale ids.
pub(super) fn syslanguages() -> RowSet {
    use crate::exec::scalar::settings::{Language, LANGUAGES};
    View::<Language>::new()
        .col("langid", SqlType::SmallInt, |l| small(l.langid.into()))
        .col("dateformat", SqlType::NChar(3), |l| nstr(l.date_order.name()))
        .col("datefirst", SqlType::TinyInt, |l| tiny(l.date_first))
        .col("upgrade", SqlType::Int, |_| int(0))
        .col("name", SYSNAME, |l| nstr(l.name))
        .col("alias", SYSNAME, |l| nstr(l.alias))
        .opt("months", SqlType::NVarChar(Len::N(372)), |l| nstr(l.months.join(",")))
        .opt("shortmonths", SqlType::NVarChar(Len::N(132)), |l| nstr(l.short_months.join(",")))
        .opt("days", SqlType::NVarChar(Len::N(217)), |l| nstr(l.days.join(",")))
        .col("lcid", SqlType::Int, |l| int(l.lcid.into()))
        .col("msglangid", SqlType::SmallInt, |l| small(l.msglangid.into()))
        .rows(LANGUAGES.iter())
}

/// `fn_helpcollations()` / `sys.fn_helpcollations()`: the collations `COLLATE` takes, by
/// name, with SQL Server's descriptions.
pub(super) fn help_collations() -> RowSet {
    use crate::exec::scalar::collation::{all, Collation};
    View::<Collation>::new()
        .col("name", SYSNAME, |c| nstr(c.name.as_str()))
        .col("description", SqlType::NVarChar(Len::N(1000)), |c| nstr(c.description()))
        .rows(all().iter())
}
