//! The ODBC catalog procedures that ODBC, JDBC (mssql-jdbc's `DatabaseMetaData`) and the
//! Python drivers call for their metadata, with SQL Server's parameter names (`@table_name`,
//! `@table_owner`, `@table_qualifier`, `@column_name`, `@ODBCVer`, `@fUsePattern`, LIKE
//! wildcards) and result columns (names, order and types), answered from the current
//! database's catalog: `sp_tables`, `sp_columns` and `sp_columns_100`, `sp_pkeys`,
//! `sp_fkeys`, `sp_statistics` (`_100`), `sp_special_columns` (`_100`), `sp_sproc_columns`
//! (`_100`), `sp_stored_procedures` and `sp_datatype_info` (`_100`); `catalog_privileges`
//! has the rights and the server's attributes. Most are queries over INFORMATION_SCHEMA and
//! the `sys` views, run as the procedure's result. `columns` has `sp_columns` and
//! `sp_sproc_columns`, `datatype_info` has `sp_datatype_info`.

mod columns;
mod datatype_info;

use crate::ast::ExecProcedure;
use crate::exec::procedure::sysprocs::{integer, missing_parameter, quoted, texts};
use crate::exec::session::Run;
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

impl Run<'_> {
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
    pub(super) fn sp_tables(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
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

    /// `sp_statistics @table_name [, @table_owner] [, @table_qualifier] [, @index_name]
    /// [, @is_unique] [, @accuracy]` (also `sp_statistics_100`): ODBC's SQLStatistics, JDBC's
    /// getIndexInfo. The table's row (TYPE 0, its rows as CARDINALITY and its pages as PAGES)
    /// comes first, then each index's key columns in order: TYPE 1 for the clustered index,
    /// 3 for the others, NON_UNIQUE 0 or 1. `@is_unique = 'Y'` keeps the unique indexes.
    pub(super) fn sp_statistics(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
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
    pub(super) fn sp_stored_procedures(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
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

    /// `sp_special_columns @table_name [, @table_owner] [, @qualifier] [, @col_type]
    /// [, @scope] [, @nullable] [, @ODBCVer]`: ODBC's SQLSpecialColumns, JDBC's
    /// getBestRowIdentifier and getVersionColumns. `@col_type = 'R'` (the default): the
    /// columns of the primary key, else of the first unique index; `'V'`: the row-version
    /// (`timestamp`) column, which changes whenever the row does.
    pub(super) fn sp_special_columns(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
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
    pub(super) fn sp_pkeys(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
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
    pub(super) fn sp_fkeys(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
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
