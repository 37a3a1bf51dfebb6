//! The ODBC catalog procedures that ODBC, JDBC (mssql-jdbc's `DatabaseMetaData`) and the
//! Python drivers call for their metadata, with SQL Server's parameter names (`@table_name`,
//! `@table_owner`, `@table_qualifier`, `@column_name`, `@ODBCVer`, `@fUsePattern`, LIKE
//! wildcards) and result columns (names, order and types), answered from the current
//! database's catalog: `sp_tables`, `sp_columns` and `sp_columns_100`, `sp_pkeys`,
//! `sp_fkeys`, `sp_statistics` (`_100`), `sp_special_columns` (`_100`), `sp_sproc_columns`
//! (`_100`), `sp_stored_procedures` and `sp_datatype_info` (`_100`); `catalog_privileges`
//! has the rights and the server's attributes. Most are queries over INFORMATION_SCHEMA and
//! the `sys` views, run as the procedure's result.

use walden_engine::types::Value;

use crate::ast::ExecProcedure;
use crate::exec::procedure::sysprocs::{bad_argument, integer, missing_parameter, quoted, texts};
use crate::exec::session::{Run, Step};
use crate::exec::Counted;
use crate::exec::SqlError;

/// `column LIKE pattern` with `\` as the escape character, as the catalog procedures
/// match their name arguments: ODBC's SQLGetInfo(SQL_SEARCH_PATTERN_ESCAPE), and JDBC's
/// `getSearchStringEscape`, give `\`, so `schema\_demo` names `schema_demo` and no other.
pub(super) fn like(column: &str, pattern: &str) -> String {
    format!("{column} LIKE {} ESCAPE N'\\'", quoted(pattern))
}

/// `column = value`, or [`like`] when the procedure's `@fUsePattern` asks for patterns.
pub(super) fn compare(use_pattern: bool, column: &str, value: &str) -> String {
    if use_pattern {
        like(column, value)
    } else {
        format!("{column} = {}", quoted(value))
    }
}

/// An `@..._owner` argument, `None` when it is not given or empty: an empty owner names no
/// schema, as JDBC's `getImportedKeys(catalog, "", table)` sends it, and finds the table as
/// an omitted one does.
fn owner(text: &Option<String>) -> Option<String> {
    text.clone().filter(|o| !o.is_empty())
}

/// `sp_tables`' columns for the current database's tables (`TABLE_NAME`, `TABLE_SCHEMA` of
/// INFORMATION_SCHEMA.TABLES are what its filters compare).
const SP_TABLES: &str = "SELECT CAST(TABLE_CATALOG AS NVARCHAR(128)) AS TABLE_QUALIFIER, \
     CAST(TABLE_SCHEMA AS NVARCHAR(128)) AS TABLE_OWNER, \
     CAST(TABLE_NAME AS NVARCHAR(128)) AS TABLE_NAME, CAST('TABLE' AS VARCHAR(32)) AS TABLE_TYPE, \
     CAST(NULL AS VARCHAR(254)) AS REMARKS FROM INFORMATION_SCHEMA.TABLES";

/// ODBC's codes for each type (`DATA_TYPE`): (type, ODBC 2, ODBC 3). ODBC 2 has no date,
/// time or datetime2: SQL Server describes them to it as NVARCHAR (-9), as here.
const ODBC_TYPES: [(&str, i32, i32); 23] = [
    ("bit", -7, -7),
    ("tinyint", -6, -6),
    ("smallint", 5, 5),
    ("int", 4, 4),
    ("bigint", -5, -5),
    ("real", 7, 7),
    ("float", 6, 6),
    ("decimal", 3, 3),
    ("numeric", 2, 2),
    ("money", 3, 3),
    ("char", 1, 1),
    ("varchar", 12, 12),
    ("nchar", -8, -8),
    ("nvarchar", -9, -9),
    ("binary", -2, -2),
    ("varbinary", -3, -3),
    ("uniqueidentifier", -11, -11),
    ("datetime", 11, 93),
    ("date", -9, 91),
    ("time", -9, -154),
    ("datetime2", -9, 93),
    ("datetimeoffset", -9, -155),
    ("sql_variant", -150, -150),
];

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

/// SQL Server's legacy type codes (`SS_DATA_TYPE`): (type, NOT NULL column, nullable
/// column); 0 for the types that have none.
const SS_TYPES: [(&str, i32, i32); 16] = [
    ("bit", 50, 50),
    ("tinyint", 48, 38),
    ("smallint", 52, 38),
    ("int", 56, 38),
    ("bigint", 127, 38),
    ("real", 59, 109),
    ("float", 62, 109),
    ("decimal", 55, 106),
    ("numeric", 63, 108),
    ("money", 60, 110),
    ("datetime", 61, 111),
    ("char", 47, 47),
    ("nchar", 47, 47),
    ("varchar", 39, 39),
    ("nvarchar", 39, 39),
    ("binary", 45, 45),
];

impl Run<'_> {
    /// Runs the catalog procedure `name` (lower case) if it is one; `None` otherwise.
    pub(super) fn catalog_procedure(&mut self, name: &str, p: &ExecProcedure) -> Option<Step<()>> {
        let query = match name {
            "sp_tables" => self.sp_tables(p),
            "sp_columns" => self.sp_columns(p, false),
            "sp_columns_100" => self.sp_columns(p, true),
            "sp_sproc_columns" => return Some(self.sp_sproc_columns(p, false).map_err(Into::into)),
            "sp_sproc_columns_100" => {
                return Some(self.sp_sproc_columns(p, true).map_err(Into::into));
            }
            "sp_statistics" | "sp_statistics_100" => self.sp_statistics(p),
            "sp_stored_procedures" => self.sp_stored_procedures(p),
            "sp_datatype_info" | "sp_datatype_info_100" => self.sp_datatype_info(p),
            "sp_special_columns" | "sp_special_columns_100" => self.sp_special_columns(p),
            "sp_pkeys" => self.sp_pkeys(p),
            "sp_fkeys" => self.sp_fkeys(p),
            "sp_table_privileges" => self.sp_table_privileges(p),
            "sp_column_privileges" => self.sp_column_privileges(p),
            "sp_server_info" => self.sp_server_info(p),
            _ => return None,
        };
        Some(match query {
            Ok(query) => self.run_system_query(&query),
            Err(e) => Err(e.into()),
        })
    }

    /// Error 15250 unless `qualifier` (an `@table_qualifier`) names the current database.
    pub(super) fn check_qualifier(&self, qualifier: Option<&str>) -> Result<(), SqlError> {
        match qualifier {
            Some(q) if !q.eq_ignore_ascii_case(self.s.db.name()) => Err(SqlError::new(
                15250,
                "The database name component of the object qualifier must be the name of the \
                 current database.",
            )),
            _ => Ok(()),
        }
    }

    /// `sp_tables [@table_name] [, @table_owner] [, @table_qualifier] [, @table_type]
    /// [, @fUsePattern]`: the current database's tables (type 'TABLE'), by LIKE patterns on
    /// name and owner. ODBC's enumerations are answered too: qualifier '%' with owner and name
    /// '' lists the databases, owner '%' with qualifier and name '' the schemas, and type '%'
    /// with the others '' the table types.
    fn sp_tables(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let args = self.procedure_arguments(
            "sp_tables",
            p,
            &["@table_name", "@table_owner", "@table_qualifier", "@table_type", "@fUsePattern"],
        )?;
        let text = texts(&args);
        let is = |i: usize, v: &str| text[i].as_deref() == Some(v);
        let null = |ty: &str| format!("CAST(NULL AS {ty})");
        let (name, owner, qualifier) =
            (null("NVARCHAR(128)"), null("NVARCHAR(128)"), null("NVARCHAR(128)"));
        let (table_type, remarks) = (null("VARCHAR(32)"), null("VARCHAR(254)"));
        if is(2, "%") && is(1, "") && is(0, "") {
            return Ok(format!(
                "SELECT CAST(name AS NVARCHAR(128)) AS TABLE_QUALIFIER, {owner} AS TABLE_OWNER, \
                 {name} AS TABLE_NAME, {table_type} AS TABLE_TYPE, {remarks} AS REMARKS \
                 FROM sys.databases ORDER BY name"
            ));
        }
        if is(1, "%") && is(2, "") && is(0, "") {
            return Ok(format!(
                "SELECT {qualifier} AS TABLE_QUALIFIER, CAST(name AS NVARCHAR(128)) AS TABLE_OWNER, \
                 {name} AS TABLE_NAME, {table_type} AS TABLE_TYPE, {remarks} AS REMARKS \
                 FROM sys.schemas ORDER BY name"
            ));
        }
        if is(3, "%") && is(0, "") && is(1, "") && is(2, "") {
            return Ok(format!(
                "SELECT {qualifier} AS TABLE_QUALIFIER, {owner} AS TABLE_OWNER, {name} AS \
                 TABLE_NAME, CAST(t AS VARCHAR(32)) AS TABLE_TYPE, {remarks} AS REMARKS \
                 FROM (VALUES ('SYSTEM TABLE'), ('TABLE'), ('VIEW')) AS v(t) ORDER BY t"
            ));
        }
        self.check_qualifier(text[2].as_deref())?;
        let use_pattern = match &args[4] {
            None => true,
            Some(v) => integer(v).is_none_or(|n| n != 0),
        };
        let mut filter = String::new();
        if let Some(name) = &text[0] {
            filter.push_str(&format!(" AND {}", compare(use_pattern, "TABLE_NAME", name)));
        }
        if let Some(owner) = &text[1] {
            filter.push_str(&format!(" AND {}", compare(use_pattern, "TABLE_SCHEMA", owner)));
        }
        // A list of quoted types, as ODBC sends it: "'TABLE','VIEW'". Walden has only tables.
        if let Some(types) = &text[3] {
            let has_tables = types
                .split(',')
                .any(|t| t.trim().trim_matches('\'').trim().eq_ignore_ascii_case("TABLE"));
            if !has_tables {
                filter.push_str(" AND 1 = 0");
            }
        }
        Ok(format!(
            "{SP_TABLES} WHERE 1 = 1{filter} ORDER BY TABLE_TYPE, TABLE_QUALIFIER, TABLE_OWNER, \
             TABLE_NAME"
        ))
    }

    /// `sp_columns @table_name [, @table_owner] [, @table_qualifier] [, @column_name]
    /// [, @ODBCVer]`: the columns of the current database's tables whose names match the
    /// LIKE patterns, in SQL Server's 19 columns; ODBC version 2 (the default) or 3 decides
    /// the codes of the date and time types.
    ///
    /// `sp_columns_100` (`hundred`), which mssql-jdbc's `getColumns` runs, takes
    /// `@NameScope` (sparse columns, which Walden has none of) before `@ODBCVer`, and
    /// `@fUsePattern` (0: the names are compared as they are, not as patterns) after it; its
    /// result has SQL Server 2008's ten columns more (sparse, computed, identity, the UDT and
    /// XML schema collection names) between IS_NULLABLE and SS_DATA_TYPE.
    fn sp_columns(&mut self, p: &ExecProcedure, hundred: bool) -> Result<String, SqlError> {
        let procedure = if hundred { "sp_columns_100" } else { "sp_columns" };
        let mut names =
            vec!["@table_name", "@table_owner", "@table_qualifier", "@column_name", "@ODBCVer"];
        if hundred {
            names.insert(4, "@NameScope");
            names.push("@fUsePattern");
        }
        let args = self.procedure_arguments(procedure, p, &names)?;
        let text = texts(&args);
        let Some(table) = &text[0] else {
            return Err(missing_parameter(procedure, "@table_name"));
        };
        self.check_qualifier(text[2].as_deref())?;
        let odbc_version = &args[if hundred { 5 } else { 4 }];
        let odbc3 = match odbc_version {
            None => false,
            Some(v) => integer(v).ok_or_else(|| bad_argument(procedure, v))? >= 3,
        };
        let use_pattern = match args.get(6).and_then(Option::as_ref) {
            None => true,
            Some(v) => integer(v).ok_or_else(|| bad_argument(procedure, v))? != 0,
        };
        let mut filter = compare(use_pattern, "ic.TABLE_NAME", table);
        for (column, value) in [("ic.TABLE_SCHEMA", &text[1]), ("ic.COLUMN_NAME", &text[3])] {
            if let Some(v) = value {
                filter.push_str(&format!(" AND {}", compare(use_pattern, column, v)));
            }
        }
        Ok(format!(
            "{} WHERE {filter} ORDER BY ic.TABLE_SCHEMA, ic.TABLE_NAME, ic.ORDINAL_POSITION",
            sp_columns_select(odbc3, hundred)
        ))
    }

    /// `sp_sproc_columns @procedure_name [, @procedure_owner] [, @procedure_qualifier]
    /// [, @column_name] [, @ODBCVer] [, @fUsePattern]`: the return value (`@RETURN_VALUE`,
    /// first) and parameters in order of each procedure whose name, owner (dbo if omitted)
    /// and parameter name match the LIKE patterns (`\` escapes; compared as they are with
    /// `@fUsePattern = 0`), as ODBC's SQLProcedureColumns reads them; JDBC finds a
    /// CallableStatement's parameters by name through it, and `getProcedureColumns` sends
    /// patterns. COLUMN_TYPE is 5 for the return value, 1 for an input parameter and 2 for
    /// an OUTPUT one. A procedure that does not exist gives no rows, as in SQL Server.
    ///
    /// `sp_sproc_columns_100` (`hundred`) adds SQL Server 2008's eight columns after
    /// SS_DATA_TYPE, the catalog and schema of a parameter's type, UDT and XML schema
    /// collection: NULL here, as for the built-in types (mssql-jdbc's ParameterMetaData
    /// reads SS_TYPE_SCHEMA_NAME).
    fn sp_sproc_columns(&mut self, p: &ExecProcedure, hundred: bool) -> Result<(), SqlError> {
        use walden_engine::catalog::Object;
        use walden_engine::types::{Len, SqlType};
        let args = self.procedure_arguments(
            "sp_sproc_columns",
            p,
            &[
                "@procedure_name",
                "@procedure_owner",
                "@procedure_qualifier",
                "@column_name",
                "@ODBCVer",
                "@fUsePattern",
            ],
        )?;
        let text = texts(&args);
        let Some(name) = &text[0] else {
            return Err(missing_parameter("sp_sproc_columns", "@procedure_name"));
        };
        self.check_qualifier(text[2].as_deref())?;
        let odbc3 = args[4].as_ref().and_then(integer).is_some_and(|v| v >= 3);
        let use_pattern = match &args[5] {
            None => true,
            Some(v) => integer(v).is_none_or(|n| n != 0),
        };
        let matches = |value: &str, pattern: &str| -> Result<bool, SqlError> {
            if !use_pattern {
                return Ok(value.eq_ignore_ascii_case(pattern));
            }
            let escape = Value::NStr("\\".into());
            let found = crate::exec::scalar::like(
                &Value::NStr(value.into()),
                &Value::NStr(pattern.into()),
                Some(&escape),
            )?;
            Ok(found == Some(true))
        };
        // A name may carry its group number (`add_one;1`), as ODBC writes it.
        let name = name.split(';').next().unwrap_or_default().to_string();
        // Without an owner the name resolves in the session's default schema, dbo.
        let schema = owner(&text[1]).unwrap_or_else(|| "dbo".to_string());
        let db = std::sync::Arc::clone(&self.s.db);
        let mut procedures: Vec<(String, String, String)> = Vec::new();
        for object in db.catalog().objects() {
            if let Object::Procedure(def) = &*object {
                if matches(&def.name, &name)? && matches(&def.schema, &schema)? {
                    procedures.push((def.schema.clone(), def.name.clone(), def.text.clone()));
                }
            }
        }
        // Ordered by owner and name ignoring case, as the default collation orders them
        // (which also puts '_' before letters).
        procedures.sort_by_cached_key(|(s, n, _)| (s.to_lowercase(), n.to_lowercase()));
        // (schema, procedure, ordinal, (name, COLUMN_TYPE, type)): each parameter keeps its
        // ordinal when a column name picks it out.
        type Param = (String, String, usize, (String, i16, SqlType));
        let mut params: Vec<Param> = Vec::new();
        for (schema, procedure, text) in procedures {
            let batch = self.s.parsed(&text)?;
            if let Some(module) = crate::exec::sysviews::declared_parameters(&batch, &|_| None) {
                let at = |ordinal, param| (schema.clone(), procedure.clone(), ordinal, param);
                params.push(at(0, ("@RETURN_VALUE".into(), 5, SqlType::Int)));
                params.extend(
                    module
                        .parameters
                        .into_iter()
                        .map(|p| at(p.position, (p.name, if p.output { 2 } else { 1 }, p.ty))),
                );
            }
        }
        if let Some(column) = &text[3] {
            let mut kept = Vec::with_capacity(params.len());
            for param in params {
                if matches(&param.3 .0, column)? {
                    kept.push(param);
                }
            }
            params = kept;
        }
        let sysname = SqlType::NVarChar(Len::N(128));
        let small = SqlType::SmallInt;
        let mut columns: Vec<crate::exec::ColumnInfo> = [
            ("PROCEDURE_QUALIFIER", sysname),
            ("PROCEDURE_OWNER", sysname),
            ("PROCEDURE_NAME", SqlType::NVarChar(Len::N(134))),
            ("COLUMN_NAME", sysname),
            ("COLUMN_TYPE", small),
            ("DATA_TYPE", small),
            ("TYPE_NAME", sysname),
            ("PRECISION", SqlType::Int),
            ("LENGTH", SqlType::Int),
            ("SCALE", small),
            ("RADIX", small),
            ("NULLABLE", small),
            ("REMARKS", SqlType::VarChar(Len::N(254))),
            ("COLUMN_DEF", SqlType::NVarChar(Len::N(4000))),
            ("SQL_DATA_TYPE", small),
            ("SQL_DATETIME_SUB", small),
            ("CHAR_OCTET_LENGTH", SqlType::Int),
            ("ORDINAL_POSITION", SqlType::Int),
            ("IS_NULLABLE", SqlType::VarChar(Len::N(254))),
            ("SS_DATA_TYPE", SqlType::TinyInt),
        ]
        .into_iter()
        .map(|(n, ty)| crate::exec::ColumnInfo::new(n, ty))
        .collect();
        let hundred_columns: &[(&str, SqlType)] = if hundred {
            &[
                ("SS_TYPE_CATALOG_NAME", sysname),
                ("SS_TYPE_SCHEMA_NAME", sysname),
                ("SS_UDT_CATALOG_NAME", sysname),
                ("SS_UDT_SCHEMA_NAME", sysname),
                ("SS_UDT_ASSEMBLY_TYPE_NAME", SqlType::NVarChar(Len::Max)),
                ("SS_XML_SCHEMACOLLECTION_CATALOG_NAME", sysname),
                ("SS_XML_SCHEMACOLLECTION_SCHEMA_NAME", sysname),
                ("SS_XML_SCHEMACOLLECTION_NAME", sysname),
            ]
        } else {
            &[]
        };
        columns.extend(hundred_columns.iter().map(|&(n, ty)| crate::exec::ColumnInfo::new(n, ty)));
        self.out.result_set(&columns);
        let n = params.len() as u64;
        for (schema, procedure, ordinal, (param, kind, ty)) in params {
            let type_name = ty.name().split('(').next().unwrap_or_default().to_string();
            let odbc = ODBC_TYPES
                .iter()
                .find(|(t, _, _)| t.eq_ignore_ascii_case(&type_name))
                .map_or(-9, |&(_, v2, v3)| if odbc3 { v3 } else { v2 });
            let (precision, length, scale) = odbc_sizes(ty);
            let int_or_null = |v: Option<i32>| v.map_or(Value::Null, Value::Int);
            self.out.row(
                &[
                    Value::NStr(db.name().to_string()),
                    Value::NStr(schema),
                    Value::NStr(format!("{procedure};1")),
                    Value::NStr(param),
                    Value::SmallInt(kind),
                    Value::SmallInt(odbc as i16),
                    Value::NStr(type_name),
                    int_or_null(precision),
                    int_or_null(length),
                    scale.map_or(Value::Null, Value::SmallInt),
                    if scale.is_some() { Value::SmallInt(10) } else { Value::Null },
                    Value::SmallInt(1),
                    Value::Null,
                    Value::Null,
                    Value::SmallInt(odbc as i16),
                    Value::Null,
                    if ty.is_text() { int_or_null(length) } else { Value::Null },
                    Value::Int(ordinal as i32),
                    Value::Str("YES".into()),
                    Value::TinyInt(0),
                ]
                .into_iter()
                .chain(hundred_columns.iter().map(|_| Value::Null))
                .collect::<Vec<_>>(),
            );
        }
        self.out.result_end(n);
        // The result ends as a SELECT's does, with its DONEINPROC: mssql-jdbc runs its
        // cached getProcedureColumns call again through sp_prepexec, whose handle
        // (RETURNVALUE) would otherwise follow the rows with no DONE between.
        self.done(Counted::Select, n);
        Ok(())
    }

    /// `sp_statistics @table_name [, @table_owner] [, @table_qualifier] [, @index_name]
    /// [, @is_unique] [, @accuracy]` (also `sp_statistics_100`): ODBC's SQLStatistics, JDBC's
    /// getIndexInfo. The table's row (TYPE 0, its rows as CARDINALITY and its pages as PAGES)
    /// comes first, then each index's key columns in order: TYPE 1 for the clustered index,
    /// 3 for the others, NON_UNIQUE 0 or 1. `@is_unique = 'Y'` keeps the unique indexes.
    fn sp_statistics(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let args = self.procedure_arguments(
            "sp_statistics",
            p,
            &[
                "@table_name",
                "@table_owner",
                "@table_qualifier",
                "@index_name",
                "@is_unique",
                "@accuracy",
            ],
        )?;
        let text = texts(&args);
        let Some(table) = &text[0] else {
            return Err(missing_parameter("sp_statistics", "@table_name"));
        };
        self.check_qualifier(text[2].as_deref())?;
        let owner = text[1].clone().unwrap_or_else(|| "dbo".to_string());
        let mut filter =
            format!("t.name = {} AND SCHEMA_NAME(t.schema_id) = {}", quoted(table), quoted(&owner));
        let counts = self.table_counts(&owner, table);
        let mut index_filter = String::new();
        if let Some(index) = &text[3] {
            index_filter.push_str(&format!(" AND {}", like("i.name", index)));
        }
        if text[4].as_deref().is_some_and(|u| u.eq_ignore_ascii_case("Y")) {
            index_filter.push_str(" AND i.is_unique = 1");
        }
        if counts.is_none() {
            filter.push_str(" AND 1 = 0");
        }
        let (cardinality, pages) = counts.unwrap_or_else(|| ("NULL".into(), "NULL".into()));
        Ok(format!(
            "SELECT CAST(DB_NAME() AS sysname) AS TABLE_QUALIFIER, \
             CAST(SCHEMA_NAME(t.schema_id) AS sysname) AS TABLE_OWNER, t.name AS TABLE_NAME, \
             CAST(NULL AS SMALLINT) AS NON_UNIQUE, CAST(NULL AS sysname) AS INDEX_QUALIFIER, \
             CAST(NULL AS sysname) AS INDEX_NAME, CAST(0 AS SMALLINT) AS TYPE, \
             CAST(NULL AS SMALLINT) AS SEQ_IN_INDEX, CAST(NULL AS sysname) AS COLUMN_NAME, \
             CAST(NULL AS CHAR(1)) AS COLLATION, CAST({cardinality} AS INT) AS CARDINALITY, \
             CAST({pages} AS INT) AS PAGES, CAST(NULL AS VARCHAR(128)) AS FILTER_CONDITION \
             FROM sys.tables t WHERE {filter} \
             UNION ALL \
             SELECT CAST(DB_NAME() AS sysname), CAST(SCHEMA_NAME(t.schema_id) AS sysname), t.name, \
             CAST(1 - i.is_unique AS SMALLINT), t.name, i.name, \
             CAST(CASE WHEN i.index_id = 1 THEN 1 ELSE 3 END AS SMALLINT), \
             CAST(ic.key_ordinal AS SMALLINT), c.name, CAST('A' AS CHAR(1)), CAST(NULL AS INT), \
             CAST(NULL AS INT), CAST(NULL AS VARCHAR(128)) \
             FROM sys.tables t JOIN sys.indexes i ON i.object_id = t.object_id AND i.index_id > 0 \
             JOIN sys.index_columns ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id \
             AND ic.key_ordinal > 0 \
             JOIN sys.columns c ON c.object_id = ic.object_id AND c.column_id = ic.column_id \
             WHERE {filter}{index_filter} \
             ORDER BY NON_UNIQUE, TYPE, INDEX_NAME, SEQ_IN_INDEX"
        ))
    }

    /// The rows and pages of table `schema.name` of the current database as SQL text, as its
    /// clustered index (or heap) tree holds them now (`NULL` if the tree is damaged: a page
    /// fails its checksum, which `DBCC CHECKTABLE` reports); `None` if there is no such
    /// table. Like SQL
    /// Server's, whose answer comes from its metadata, the count takes no lock (only the
    /// tree's latch, shared, while its pages are counted), so it includes changes not yet
    /// committed: a driver's getIndexInfo never waits for, or blocks, a writer.
    fn table_counts(&self, schema: &str, name: &str) -> Option<(String, String)> {
        use walden_engine::catalog::Object;
        let object = self.s.db.find_object(schema, name)?;
        let Object::Table(def) = &*object else { return None };
        let counted = def.primary().ok().and_then(|i| self.s.db.space().tree(i.root).count().ok());
        Some(match counted {
            Some(c) => (c.rows.to_string(), c.pages.to_string()),
            None => ("NULL".into(), "NULL".into()),
        })
    }

    /// `sp_stored_procedures [@sp_name] [, @sp_owner] [, @sp_qualifier] [, @fUsePattern]`:
    /// ODBC's SQLProcedures, JDBC's getProcedures: the procedures and functions, named
    /// `name;1`, their parameter and result-set counts unknown (-1), as SQL Server reports.
    fn sp_stored_procedures(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let args = self.procedure_arguments(
            "sp_stored_procedures",
            p,
            &["@sp_name", "@sp_owner", "@sp_qualifier", "@fUsePattern"],
        )?;
        let text = texts(&args);
        self.check_qualifier(text[2].as_deref())?;
        let mut filter = String::from("o.type IN ('P', 'FN', 'IF', 'TF')");
        if let Some(name) = &text[0] {
            let name = name.split(';').next().unwrap_or_default();
            filter.push_str(&format!(" AND {}", like("o.name", name)));
        }
        if let Some(owner) = &text[1] {
            filter.push_str(&format!(" AND {}", like("SCHEMA_NAME(o.schema_id)", owner)));
        }
        Ok(format!(
            "SELECT CAST(DB_NAME() AS sysname) AS PROCEDURE_QUALIFIER, \
             CAST(SCHEMA_NAME(o.schema_id) AS sysname) AS PROCEDURE_OWNER, \
             CAST(o.name + N';1' AS NVARCHAR(134)) AS PROCEDURE_NAME, \
             -1 AS NUM_INPUT_PARAMS, -1 AS NUM_OUTPUT_PARAMS, -1 AS NUM_RESULT_SETS, \
             CAST(NULL AS VARCHAR(254)) AS REMARKS, CAST(2 AS SMALLINT) AS PROCEDURE_TYPE \
             FROM sys.objects o WHERE {filter} \
             ORDER BY PROCEDURE_QUALIFIER, PROCEDURE_OWNER, PROCEDURE_NAME"
        ))
    }

    /// `sp_datatype_info [@data_type] [, @ODBCVer]`: ODBC's SQLGetTypeInfo, JDBC's
    /// getTypeInfo: one row per type (and per identity variant of the integer types), ordered
    /// by ODBC type code, or those of one code.
    fn sp_datatype_info(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
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

    /// `sp_special_columns @table_name [, @table_owner] [, @qualifier] [, @col_type]
    /// [, @scope] [, @nullable] [, @ODBCVer]`: ODBC's SQLSpecialColumns, JDBC's
    /// getBestRowIdentifier and getVersionColumns. `@col_type = 'R'` (the default): the
    /// columns of the primary key, else of the first unique index; `'V'`: the row-version
    /// (`timestamp`) column, which changes whenever the row does.
    fn sp_special_columns(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let args = self.procedure_arguments(
            "sp_special_columns",
            p,
            &[
                "@table_name",
                "@table_owner",
                "@qualifier",
                "@col_type",
                "@scope",
                "@nullable",
                "@ODBCVer",
            ],
        )?;
        let text = texts(&args);
        let Some(table) = &text[0] else {
            return Err(missing_parameter("sp_special_columns", "@table_name"));
        };
        self.check_qualifier(text[2].as_deref())?;
        let mut filter = format!("t.name = {}", quoted(table));
        if let Some(owner) = owner(&text[1]) {
            filter.push_str(&format!(" AND SCHEMA_NAME(t.schema_id) = {}", quoted(&owner)));
        }
        let mut data_type = String::from("CASE TYPE_NAME(c.system_type_id)");
        for (name, _, v3) in ODBC_TYPES {
            data_type.push_str(&format!(" WHEN '{name}' THEN {v3}"));
        }
        data_type.push_str(" WHEN 'timestamp' THEN -2 END");
        let columns = format!(
            "SELECT CAST(1 AS SMALLINT) AS SCOPE, c.name AS COLUMN_NAME, \
             CAST({data_type} AS SMALLINT) AS DATA_TYPE, \
             CAST(TYPE_NAME(c.system_type_id) AS sysname) AS TYPE_NAME, \
             CAST(CASE WHEN c.[precision] > 0 THEN c.[precision] \
             WHEN TYPE_NAME(c.system_type_id) IN ('nchar', 'nvarchar') THEN c.max_length / 2 \
             ELSE c.max_length END AS INT) AS [PRECISION], \
             CAST(c.max_length AS INT) AS [LENGTH], CAST(c.scale AS SMALLINT) AS SCALE, \
             CAST(1 AS SMALLINT) AS PSEUDO_COLUMN \
             FROM sys.tables t JOIN sys.columns c ON c.object_id = t.object_id"
        );
        let version = text[3].as_deref().is_some_and(|t| t.eq_ignore_ascii_case("V"));
        Ok(if version {
            format!("{columns} WHERE {filter} AND TYPE_NAME(c.system_type_id) = 'timestamp'")
        } else {
            format!(
                "{columns} JOIN sys.index_columns ic ON ic.object_id = c.object_id \
                 AND ic.column_id = c.column_id WHERE {filter} AND ic.index_id = \
                 (SELECT TOP (1) i.index_id FROM sys.indexes i WHERE i.object_id = t.object_id \
                 AND i.is_unique = 1 ORDER BY i.is_primary_key DESC, i.index_id) \
                 ORDER BY ic.key_ordinal"
            )
        })
    }

    /// `sp_pkeys @table_name [, @table_owner] [, @table_qualifier]`: the table's primary key
    /// columns in key order, as ODBC's SQLPrimaryKeys (JDBC's getPrimaryKeys) reads them.
    fn sp_pkeys(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let args = self.procedure_arguments(
            "sp_pkeys",
            p,
            &["@table_name", "@table_owner", "@table_qualifier"],
        )?;
        let text = texts(&args);
        let Some(table) = &text[0] else {
            return Err(missing_parameter("sp_pkeys", "@table_name"));
        };
        self.check_qualifier(text[2].as_deref())?;
        let mut filter = format!("t.name = {}", quoted(table));
        if let Some(owner) = owner(&text[1]) {
            filter.push_str(&format!(" AND SCHEMA_NAME(t.schema_id) = {}", quoted(&owner)));
        }
        Ok(format!(
            "SELECT CAST(DB_NAME() AS sysname) AS TABLE_QUALIFIER, \
             CAST(SCHEMA_NAME(t.schema_id) AS sysname) AS TABLE_OWNER, t.name AS TABLE_NAME, \
             c.name AS COLUMN_NAME, CAST(ic.key_ordinal AS SMALLINT) AS KEY_SEQ, i.name AS PK_NAME \
             FROM sys.tables t JOIN sys.indexes i ON i.object_id = t.object_id AND i.is_primary_key = 1 \
             JOIN sys.index_columns ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id \
             JOIN sys.columns c ON c.object_id = ic.object_id AND c.column_id = ic.column_id \
             WHERE {filter} ORDER BY TABLE_QUALIFIER, TABLE_OWNER, TABLE_NAME, KEY_SEQ"
        ))
    }

    /// `sp_fkeys [@pktable_name] [, @pktable_owner] [, @pktable_qualifier] [, @fktable_name]
    /// [, @fktable_owner] [, @fktable_qualifier]`: the foreign keys referencing the first
    /// table, or those of the second, one row per column pair, as ODBC's SQLForeignKeys
    /// (JDBC's getImportedKeys / getExportedKeys) reads them. Rules: 0 CASCADE, 1 NO ACTION,
    /// 2 SET NULL, 3 SET DEFAULT.
    fn sp_fkeys(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let args = self.procedure_arguments(
            "sp_fkeys",
            p,
            &[
                "@pktable_name",
                "@pktable_owner",
                "@pktable_qualifier",
                "@fktable_name",
                "@fktable_owner",
                "@fktable_qualifier",
            ],
        )?;
        let text = texts(&args);
        if text[0].is_none() && text[3].is_none() {
            return Err(SqlError::new(
                15252,
                "The primary key or foreign key table name must be given.",
            ));
        }
        self.check_qualifier(text[2].as_deref())?;
        self.check_qualifier(text[5].as_deref())?;
        let mut filter = String::from("1 = 1");
        for (column, value) in [
            ("pt.name", &text[0]),
            ("SCHEMA_NAME(pt.schema_id)", &owner(&text[1])),
            ("ft.name", &text[3]),
            ("SCHEMA_NAME(ft.schema_id)", &owner(&text[4])),
        ] {
            if let Some(v) = value {
                filter.push_str(&format!(" AND {column} = {}", quoted(v)));
            }
        }
        let rule = |column: &str| {
            format!(
                "CAST(CASE f.{column} WHEN 1 THEN 0 WHEN 2 THEN 2 WHEN 3 THEN 3 ELSE 1 END AS SMALLINT)"
            )
        };
        Ok(format!(
            "SELECT CAST(DB_NAME() AS sysname) AS PKTABLE_QUALIFIER, \
             CAST(SCHEMA_NAME(pt.schema_id) AS sysname) AS PKTABLE_OWNER, pt.name AS PKTABLE_NAME, \
             pc.name AS PKCOLUMN_NAME, CAST(DB_NAME() AS sysname) AS FKTABLE_QUALIFIER, \
             CAST(SCHEMA_NAME(ft.schema_id) AS sysname) AS FKTABLE_OWNER, ft.name AS FKTABLE_NAME, \
             fc.name AS FKCOLUMN_NAME, CAST(k.constraint_column_id AS SMALLINT) AS KEY_SEQ, \
             {} AS UPDATE_RULE, {} AS DELETE_RULE, f.name AS FK_NAME, i.name AS PK_NAME, \
             CAST(7 AS SMALLINT) AS DEFERRABILITY \
             FROM sys.foreign_keys f \
             JOIN sys.foreign_key_columns k ON k.constraint_object_id = f.object_id \
             JOIN sys.tables pt ON pt.object_id = f.referenced_object_id \
             JOIN sys.tables ft ON ft.object_id = f.parent_object_id \
             JOIN sys.columns pc ON pc.object_id = k.referenced_object_id AND pc.column_id = k.referenced_column_id \
             JOIN sys.columns fc ON fc.object_id = k.parent_object_id AND fc.column_id = k.parent_column_id \
             LEFT JOIN sys.indexes i ON i.object_id = f.referenced_object_id AND i.index_id = f.key_index_id \
             WHERE {filter} ORDER BY FKTABLE_QUALIFIER, FKTABLE_OWNER, FKTABLE_NAME, KEY_SEQ",
            rule("update_referential_action"),
            rule("delete_referential_action")
        ))
    }
}

/// `sp_columns`' SELECT over INFORMATION_SCHEMA.COLUMNS (`ic`, for names, defaults and
/// nullability) and sys.columns (`c`, for sizes and identity), for ODBC 3 or 2; with
/// `sp_columns_100`'s columns when `hundred`.
fn sp_columns_select(odbc3: bool, hundred: bool) -> String {
    let pick = |v2: i32, v3: i32| if odbc3 { v3 } else { v2 };
    let mut data_type = String::from("CASE ic.DATA_TYPE");
    for (name, v2, v3) in ODBC_TYPES {
        data_type.push_str(&format!(" WHEN '{name}' THEN {}", pick(v2, v3)));
    }
    data_type.push_str(" END");
    // SQL_DATA_TYPE is DATA_TYPE but for the datetime types, which are 9 (SQL_DATETIME) with
    // their subtype in SQL_DATETIME_SUB: 1 date, 3 timestamp.
    let (sql_type, sub) = if odbc3 {
        (
            format!("CASE WHEN ic.DATA_TYPE IN ('datetime', 'date', 'datetime2') THEN 9 ELSE {data_type} END"),
            "CASE ic.DATA_TYPE WHEN 'date' THEN 1 WHEN 'datetime' THEN 3 WHEN 'datetime2' THEN 3 END",
        )
    } else {
        (
            format!("CASE WHEN ic.DATA_TYPE = 'datetime' THEN 9 ELSE {data_type} END"),
            "CASE ic.DATA_TYPE WHEN 'datetime' THEN 3 END",
        )
    };
    let mut ss_type = String::from("CASE");
    for (name, not_null, nullable) in SS_TYPES {
        ss_type.push_str(&format!(
            " WHEN ic.DATA_TYPE = '{name}' THEN CASE WHEN c.is_nullable = 1 THEN {nullable} \
             ELSE {not_null} END"
        ));
    }
    ss_type.push_str(" WHEN ic.DATA_TYPE = 'varbinary' THEN 37 ELSE 0 END");
    // Characters of the character types (2^31 - 1 bytes for a (MAX) one), digits of the
    // numbers, display width of the temporal types: what sys.columns' precision holds.
    let precision = "CASE WHEN ic.DATA_TYPE IN ('char', 'varchar', 'binary', 'varbinary') THEN \
         CASE WHEN c.max_length = -1 THEN 2147483647 ELSE c.max_length END \
         WHEN ic.DATA_TYPE IN ('nchar', 'nvarchar') THEN \
         CASE WHEN c.max_length = -1 THEN 1073741823 ELSE c.max_length / 2 END \
         WHEN ic.DATA_TYPE = 'uniqueidentifier' THEN 36 ELSE c.[precision] END";
    let (date_length, time_length, datetime2_length, datetimeoffset_length) = if odbc3 {
        ("6", "12", "16", "20")
    } else {
        ("20", "2 * c.[precision]", "2 * c.[precision]", "2 * c.[precision]")
    };
    let length = format!(
        "CASE WHEN ic.DATA_TYPE IN ('nchar', 'nvarchar') THEN \
         CASE WHEN c.max_length = -1 THEN 2147483646 ELSE c.max_length END \
         WHEN ic.DATA_TYPE IN ('char', 'varchar', 'binary', 'varbinary') THEN \
         CASE WHEN c.max_length = -1 THEN 2147483647 ELSE c.max_length END \
         WHEN ic.DATA_TYPE IN ('decimal', 'numeric') THEN c.[precision] + 2 \
         WHEN ic.DATA_TYPE = 'money' THEN 21 WHEN ic.DATA_TYPE = 'datetime' THEN 16 \
         WHEN ic.DATA_TYPE = 'date' THEN {date_length} \
         WHEN ic.DATA_TYPE = 'time' THEN {time_length} \
         WHEN ic.DATA_TYPE = 'datetime2' THEN {datetime2_length} \
         WHEN ic.DATA_TYPE = 'datetimeoffset' THEN {datetimeoffset_length} ELSE c.max_length END"
    );
    let since_2008 = if hundred {
        "CAST(0 AS SMALLINT) AS SS_IS_SPARSE, CAST(0 AS SMALLINT) AS SS_IS_COLUMN_SET, \
         CAST(c.is_computed AS SMALLINT) AS SS_IS_COMPUTED, \
         CAST(c.is_identity AS SMALLINT) AS SS_IS_IDENTITY, \
         CAST(NULL AS NVARCHAR(128)) AS SS_UDT_CATALOG_NAME, \
         CAST(NULL AS NVARCHAR(128)) AS SS_UDT_SCHEMA_NAME, \
         CAST(NULL AS NVARCHAR(MAX)) AS SS_UDT_ASSEMBLY_TYPE_NAME, \
         CAST(NULL AS NVARCHAR(128)) AS SS_XML_SCHEMACOLLECTION_CATALOG_NAME, \
         CAST(NULL AS NVARCHAR(128)) AS SS_XML_SCHEMACOLLECTION_SCHEMA_NAME, \
         CAST(NULL AS NVARCHAR(128)) AS SS_XML_SCHEMACOLLECTION_NAME, "
    } else {
        ""
    };
    let fractional = if odbc3 { ", 'time', 'datetime2', 'datetimeoffset'" } else { "" };
    let scale = format!(
        "CASE WHEN ic.DATA_TYPE = 'money' THEN 4 WHEN ic.DATA_TYPE IN ('tinyint', 'smallint', \
         'int', 'bigint', 'decimal', 'numeric', 'datetime'{fractional}) THEN c.scale END"
    );
    format!(
        "SELECT CAST(ic.TABLE_CATALOG AS NVARCHAR(128)) AS TABLE_QUALIFIER, \
         CAST(ic.TABLE_SCHEMA AS NVARCHAR(128)) AS TABLE_OWNER, \
         CAST(ic.TABLE_NAME AS NVARCHAR(128)) AS TABLE_NAME, \
         CAST(ic.COLUMN_NAME AS NVARCHAR(128)) AS COLUMN_NAME, \
         CAST({data_type} AS SMALLINT) AS DATA_TYPE, \
         CAST(ic.DATA_TYPE + CASE WHEN c.is_identity = 1 THEN ' identity' ELSE '' END \
         AS NVARCHAR(128)) AS TYPE_NAME, \
         CAST({precision} AS INT) AS [PRECISION], CAST({length} AS INT) AS [LENGTH], \
         CAST({scale} AS SMALLINT) AS [SCALE], \
         CAST(CASE WHEN ic.DATA_TYPE IN ('real', 'float') THEN 2 WHEN ic.DATA_TYPE IN \
         ('tinyint', 'smallint', 'int', 'bigint', 'decimal', 'numeric', 'money') THEN 10 END \
         AS SMALLINT) AS RADIX, \
         CAST(CASE WHEN c.is_nullable = 1 THEN 1 ELSE 0 END AS SMALLINT) AS NULLABLE, \
         CAST(NULL AS VARCHAR(254)) AS REMARKS, \
         CAST(ic.COLUMN_DEFAULT AS NVARCHAR(4000)) AS COLUMN_DEF, \
         CAST({sql_type} AS SMALLINT) AS SQL_DATA_TYPE, \
         CAST({sub} AS SMALLINT) AS SQL_DATETIME_SUB, \
         CAST(CASE WHEN ic.DATA_TYPE IN ('char', 'varchar', 'nchar', 'nvarchar', 'binary', \
         'varbinary') THEN {length} END AS INT) AS CHAR_OCTET_LENGTH, \
         CAST(ic.ORDINAL_POSITION AS INT) AS ORDINAL_POSITION, \
         CAST(ic.IS_NULLABLE AS VARCHAR(254)) AS IS_NULLABLE, {since_2008}\
         CAST({ss_type} AS TINYINT) AS SS_DATA_TYPE \
         FROM INFORMATION_SCHEMA.COLUMNS ic \
         JOIN sys.schemas s ON s.name = ic.TABLE_SCHEMA \
         JOIN sys.objects o ON o.name = ic.TABLE_NAME AND o.schema_id = s.schema_id \
         JOIN sys.columns c ON c.object_id = o.object_id AND c.column_id = ic.ORDINAL_POSITION"
    )
}

/// ODBC's PRECISION (digits, or characters), LENGTH (bytes) and SCALE (exact numbers only) of
/// a parameter of type `ty`, as `sp_sproc_columns` reports them; `None` for MAX lengths.
fn odbc_sizes(ty: walden_engine::types::SqlType) -> (Option<i32>, Option<i32>, Option<i16>) {
    use walden_engine::types::{Len, SqlType as T};
    let n = |len: Len| match len {
        Len::N(n) => Some(i32::from(n)),
        Len::Max => None,
    };
    match ty {
        T::Bit => (Some(1), Some(1), Some(0)),
        T::TinyInt => (Some(3), Some(1), Some(0)),
        T::SmallInt => (Some(5), Some(2), Some(0)),
        T::Int => (Some(10), Some(4), Some(0)),
        T::BigInt => (Some(19), Some(8), Some(0)),
        T::Money => (Some(19), Some(21), Some(4)),
        T::Decimal { precision, scale } => {
            (Some(i32::from(precision)), Some(i32::from(precision) + 2), Some(i16::from(scale)))
        }
        T::Real => (Some(24), Some(4), None),
        T::Float => (Some(53), Some(8), None),
        T::Char(l) | T::Binary(l) => (Some(i32::from(l)), Some(i32::from(l)), None),
        T::NChar(l) => (Some(i32::from(l)), Some(i32::from(l) * 2), None),
        T::VarChar(l) | T::VarBinary(l) => (n(l), n(l), None),
        T::NVarChar(l) => (n(l), n(l).map(|c| c * 2), None),
        T::Date => (Some(10), Some(20), None),
        T::Time(s) => (Some(8 + i32::from(s) + i32::from(s > 0)), Some(16), Some(i16::from(s))),
        T::DateTime => (Some(23), Some(16), Some(3)),
        T::DateTime2(s) => {
            (Some(19 + i32::from(s) + i32::from(s > 0)), Some(16), Some(i16::from(s)))
        }
        T::DateTimeOffset(s) => {
            (Some(26 + i32::from(s) + i32::from(s > 0)), Some(20), Some(i16::from(s)))
        }
        T::UniqueIdentifier => (Some(36), Some(16), None),
        T::Variant => (Some(8000), Some(8000), None),
        T::Xml => (None, None, None),
    }
}
