//! `sp_columns` (`_100`) and `sp_sproc_columns` (`_100`): a table's or a procedure's columns
//! with their ODBC types and sizes, as ODBC's SQLColumns and SQLProcedureColumns (JDBC's
//! `getColumns` and `getProcedureColumns`) read them.

use walden_engine::types::Value;

use super::{compare, owner, ODBC_TYPES};
use crate::ast::ExecProcedure;
use crate::exec::procedure::sysprocs::{bad_argument, integer, missing_parameter, texts};
use crate::exec::session::Run;
use crate::exec::Counted;
use crate::exec::SqlError;

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

impl Run<'_> {
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
    pub(in crate::exec::procedure) fn sp_columns(
        &mut self,
        p: &ExecProcedure,
        hundred: bool,
    ) -> Result<String, SqlError> {
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
    pub(in crate::exec::procedure) fn sp_sproc_columns(
        &mut self,
        p: &ExecProcedure,
        hundred: bool,
    ) -> Result<(), SqlError> {
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
}
