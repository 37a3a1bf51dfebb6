//! `sp_datatype_info` (`_100`): ODBC's SQLGetTypeInfo, JDBC's `getTypeInfo`: one row per
//! type SQL Server has (and per identity variant of the integer types), from a table of
//! their attributes.

use crate::ast::ExecProcedure;
use crate::exec::procedure::sysprocs::{bad_argument, integer, quoted};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A type as `sp_datatype_info` describes it (ODBC's SQLGetTypeInfo columns).
struct TypeInfoRow {
    name: &'static str,
    /// ODBC 3 type code, and the ODBC 2 one where it differs (the newer date types).
    odbc3: i32,
    odbc2: i32,
    precision: i64,
    /// Quote characters of a literal, if it has them.
    literal: Option<(&'static str, &'static str)>,
    create_params: Option<&'static str>,
    case_sensitive: bool,
    /// 3 searchable with any operator, 2 all but LIKE.
    searchable: i32,
    /// `Some(unsigned)` for the numeric types.
    unsigned: Option<bool>,
    money: bool,
    /// Whether an `identity` variant is listed too.
    identity: bool,
    scale: Option<(i32, i32)>,
    /// SQL_DATA_TYPE and SQL_DATETIME_SUB when they differ from the type code.
    datetime_sub: Option<i32>,
    radix: Option<i32>,
    usertype: i32,
}

const fn type_row(name: &'static str, odbc3: i32, odbc2: i32, precision: i64) -> TypeInfoRow {
    TypeInfoRow {
        name,
        odbc3,
        odbc2,
        precision,
        literal: None,
        create_params: None,
        case_sensitive: false,
        searchable: 2,
        unsigned: None,
        money: false,
        identity: false,
        scale: None,
        datetime_sub: None,
        radix: None,
        usertype: 0,
    }
}

const fn numeric(mut t: TypeInfoRow, scale: (i32, i32), identity: bool) -> TypeInfoRow {
    t.unsigned = Some(false);
    t.scale = Some(scale);
    t.identity = identity;
    t.radix = Some(10);
    t
}

/// DECIMAL and NUMERIC: declared with a precision and a scale.
const fn exact(t: TypeInfoRow) -> TypeInfoRow {
    let mut t = numeric(t, (0, 38), true);
    t.create_params = Some("precision,scale");
    t
}

const fn quoted_type(
    mut t: TypeInfoRow,
    prefix: &'static str,
    params: &'static str,
) -> TypeInfoRow {
    t.literal = Some((prefix, "'"));
    if !params.is_empty() {
        t.create_params = Some(params);
    }
    t
}

const fn text_type(t: TypeInfoRow, prefix: &'static str, params: &'static str) -> TypeInfoRow {
    let mut t = quoted_type(t, prefix, params);
    t.searchable = 3;
    t
}

const fn temporal(t: TypeInfoRow, sub: i32, scale: (i32, i32)) -> TypeInfoRow {
    let mut t = quoted_type(t, "'", "");
    t.searchable = 3;
    t.datetime_sub = Some(sub);
    t.scale = Some(scale);
    t
}

/// The types `sp_datatype_info` lists: those of `sys.types`, with SQL Server's ODBC codes.
const DATATYPE_INFO: [TypeInfoRow; 24] = [
    type_row("bit", -7, -7, 1),
    {
        let mut t = numeric(type_row("tinyint", -6, -6, 3), (0, 0), true);
        t.unsigned = Some(true);
        t
    },
    numeric(type_row("bigint", -5, -5, 19), (0, 0), true),
    {
        let mut t = quoted_type(type_row("varbinary", -3, -3, 8000), "0x", "max length");
        t.literal = Some(("0x", ""));
        t
    },
    {
        let mut t = quoted_type(type_row("binary", -2, -2, 8000), "0x", "length");
        t.literal = Some(("0x", ""));
        t
    },
    {
        let mut t = quoted_type(type_row("timestamp", -2, -2, 8), "0x", "");
        t.literal = Some(("0x", ""));
        t.usertype = 80;
        t
    },
    text_type(type_row("char", 1, 1, 8000), "'", "length"),
    exact(type_row("numeric", 2, 2, 38)),
    exact(type_row("decimal", 3, 3, 38)),
    {
        let mut t = numeric(type_row("money", 3, 3, 19), (4, 4), false);
        t.literal = Some(("$", ""));
        t.money = true;
        t
    },
    numeric(type_row("int", 4, 4, 10), (0, 0), true),
    numeric(type_row("smallint", 5, 5, 5), (0, 0), true),
    {
        let mut t = numeric(type_row("float", 6, 6, 53), (0, 0), false);
        t.scale = None;
        t.radix = Some(2);
        t
    },
    {
        let mut t = numeric(type_row("real", 7, 7, 24), (0, 0), false);
        t.scale = None;
        t.radix = Some(2);
        t
    },
    text_type(type_row("varchar", 12, 12, 8000), "'", "max length"),
    temporal(type_row("date", 91, -9, 10), 1, (0, 0)),
    temporal(type_row("datetime", 93, 11, 23), 3, (3, 3)),
    temporal(type_row("datetime2", 93, -9, 27), 3, (0, 7)),
    text_type(type_row("nchar", -8, -8, 4000), "N'", "length"),
    text_type(type_row("nvarchar", -9, -9, 4000), "N'", "max length"),
    quoted_type(type_row("uniqueidentifier", -11, -11, 36), "'", ""),
    temporal(type_row("time", -154, -9, 16), 0, (0, 7)),
    temporal(type_row("datetimeoffset", -155, -9, 34), 0, (0, 7)),
    type_row("sql_variant", -150, -150, 8000),
];

/// One `VALUES` row of `sp_datatype_info` for type `t`, named `name`.
fn datatype_row(t: &TypeInfoRow, name: &str, identity: bool, odbc3: bool) -> String {
    let opt_str = |v: Option<&str>| v.map_or("NULL".to_string(), quoted);
    let opt_int = |v: Option<i32>| v.map_or("NULL".to_string(), |n| n.to_string());
    let code = if odbc3 { t.odbc3 } else { t.odbc2 };
    // ODBC 3 reports the date and time types' SQL_DATA_TYPE as SQL_DATETIME (9).
    let (sql_type, sub) = match t.datetime_sub {
        Some(sub) if odbc3 && matches!(t.odbc3, 91 | 93) => (9, Some(sub)),
        _ => (code, None),
    };
    format!(
        "({}, {code}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {sql_type}, {}, {}, {})",
        quoted(name),
        t.precision,
        opt_str(t.literal.map(|l| l.0)),
        opt_str(t.literal.map(|l| l.1).filter(|s| !s.is_empty())),
        opt_str(if identity { None } else { t.create_params }),
        if identity { 0 } else { 1 },
        i32::from(t.case_sensitive),
        t.searchable,
        opt_int(t.unsigned.map(i32::from)),
        i32::from(t.money),
        opt_int(t.unsigned.map(|_| i32::from(identity))),
        opt_int(t.scale.map(|s| s.0)),
        opt_int(t.scale.map(|s| s.1)),
        opt_int(sub),
        opt_int(t.radix),
        t.usertype,
    )
}

impl Run<'_> {
    /// `sp_datatype_info [@data_type] [, @ODBCVer]`: ODBC's SQLGetTypeInfo, JDBC's
    /// getTypeInfo: one row per type (and per identity variant of the integer types), ordered
    /// by ODBC type code, or those of one code.
    pub(in crate::exec::procedure) fn sp_datatype_info(
        &mut self,
        p: &ExecProcedure,
    ) -> Result<String, SqlError> {
        let args = self.procedure_arguments("sp_datatype_info", p, &["@data_type", "@ODBCVer"])?;
        let odbc3 = match &args[1] {
            None => false,
            Some(v) => integer(v).ok_or_else(|| bad_argument("sp_datatype_info", v))? >= 3,
        };
        let filter = match &args[0] {
            None => String::new(),
            Some(v) => {
                let code = integer(v).ok_or_else(|| bad_argument("sp_datatype_info", v))?;
                format!(" WHERE DATA_TYPE = {code}")
            }
        };
        let rows: Vec<String> = DATATYPE_INFO
            .iter()
            .flat_map(|t| {
                let plain = datatype_row(t, t.name, false, odbc3);
                let identity = t
                    .identity
                    .then(|| datatype_row(t, &format!("{} identity", t.name), true, odbc3));
                std::iter::once(plain).chain(identity)
            })
            .collect();
        Ok(format!(
            "SELECT CAST(TYPE_NAME AS sysname) AS TYPE_NAME, CAST(DATA_TYPE AS SMALLINT) AS DATA_TYPE, \
             CAST([PRECISION] AS INT) AS [PRECISION], \
             CAST(LITERAL_PREFIX AS VARCHAR(32)) AS LITERAL_PREFIX, \
             CAST(LITERAL_SUFFIX AS VARCHAR(32)) AS LITERAL_SUFFIX, \
             CAST(CREATE_PARAMS AS VARCHAR(32)) AS CREATE_PARAMS, \
             CAST(NULLABLE AS SMALLINT) AS NULLABLE, CAST(CASE_SENSITIVE AS SMALLINT) AS CASE_SENSITIVE, \
             CAST(SEARCHABLE AS SMALLINT) AS SEARCHABLE, \
             CAST(UNSIGNED_ATTRIBUTE AS SMALLINT) AS UNSIGNED_ATTRIBUTE, \
             CAST(MONEY AS SMALLINT) AS MONEY, CAST(AUTO_INCREMENT AS SMALLINT) AS AUTO_INCREMENT, \
             CAST(TYPE_NAME AS sysname) AS LOCAL_TYPE_NAME, \
             CAST(MINIMUM_SCALE AS SMALLINT) AS MINIMUM_SCALE, \
             CAST(MAXIMUM_SCALE AS SMALLINT) AS MAXIMUM_SCALE, \
             CAST(SQL_DATA_TYPE AS SMALLINT) AS SQL_DATA_TYPE, \
             CAST(SQL_DATETIME_SUB AS SMALLINT) AS SQL_DATETIME_SUB, \
             CAST(NUM_PREC_RADIX AS INT) AS NUM_PREC_RADIX, \
             CAST(NULL AS SMALLINT) AS INTERVAL_PRECISION, CAST(USERTYPE AS SMALLINT) AS USERTYPE \
             FROM (VALUES {}) AS t(TYPE_NAME, DATA_TYPE, [PRECISION], LITERAL_PREFIX, \
             LITERAL_SUFFIX, CREATE_PARAMS, NULLABLE, CASE_SENSITIVE, SEARCHABLE, \
             UNSIGNED_ATTRIBUTE, MONEY, AUTO_INCREMENT, MINIMUM_SCALE, MAXIMUM_SCALE, \
             SQL_DATA_TYPE, SQL_DATETIME_SUB, NUM_PREC_RADIX, USERTYPE){filter} \
             ORDER BY DATA_TYPE, TYPE_NAME",
            rows.join(", ")
        ))
    }
}
