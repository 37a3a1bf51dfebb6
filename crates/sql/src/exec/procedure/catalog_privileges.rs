//! The ODBC catalog procedures beside `catalog_procs`' that describe rights and the server
//! rather than objects: `sp_table_privileges` (ODBC's SQLTablePrivileges, JDBC's
//! `getTablePrivileges`), `sp_column_privileges` (SQLColumnPrivileges, `getColumnPrivileges`)
//! and `sp_server_info` (the attributes ODBC reads at connection time).
//!
//! Walden has one login, `sa`, mapped to `dbo` in every database, and no GRANT: the rights
//! these procedures list are the implicit ones an object's owner holds, which SQL Server
//! lists too (grantor and grantee the owner, grantable).

use crate::ast::ExecProcedure;
use crate::exec::procedure::catalog_procs::{compare, like};
use crate::exec::procedure::sysprocs::{bad_argument, integer, missing_parameter, quoted, texts};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// An owner's rights on its tables, in the order SQL Server lists them.
const TABLE_PRIVILEGES: &str = "('DELETE'), ('INSERT'), ('REFERENCES'), ('SELECT'), ('UPDATE')";

/// An owner's rights on its tables' columns.
const COLUMN_PRIVILEGES: &str = "('INSERT'), ('REFERENCES'), ('SELECT'), ('UPDATE')";

/// `sp_server_info`'s attributes: (ATTRIBUTE_ID, ATTRIBUTE_NAME, ATTRIBUTE_VALUE), by id.
/// DBMS_VER (2) and SYS_SPROC_VERSION (500) are the product version, added when answered.
const SERVER_INFO: [(i32, &str, &str); 26] = [
    (1, "DBMS_NAME", "Microsoft SQL Server"),
    (10, "OWNER_TERM", "owner"),
    (11, "TABLE_TERM", "table"),
    (12, "MAX_OWNER_NAME_LENGTH", "128"),
    (13, "TABLE_LENGTH", "128"),
    (14, "MAX_QUAL_LENGTH", "128"),
    (15, "COLUMN_LENGTH", "128"),
    // Identifiers compare under the default case-insensitive collation.
    (16, "IDENTIFIER_CASE", "MIXED"),
    // READ COMMITTED, ODBC's SQL_TXN_READ_COMMITTED.
    (17, "TX_ISOLATION", "2"),
    (18, "COLLATION_SEQ", "charset=iso_1 sort_order=nocase_iso charset_num=1 sort_order_num=52"),
    (19, "SAVEPOINT_SUPPORT", "Y"),
    (20, "MULTI_RESULT_SETS", "Y"),
    (22, "ACCESSIBLE_TABLES", "Y"),
    (100, "USERID_LENGTH", "128"),
    (101, "QUALIFIER_TERM", "database"),
    (102, "NAMED_TRANSACTIONS", "Y"),
    (103, "SPROC_AS_LANGUAGE", "Y"),
    (104, "ACCESSIBLE_SPROC", "Y"),
    (105, "MAX_INDEX_COLS", "16"),
    (106, "RENAME_TABLE", "Y"),
    (107, "RENAME_COLUMN", "Y"),
    (108, "DROP_COLUMN", "Y"),
    (109, "INCREASE_COLUMN_LENGTH", "Y"),
    (110, "DDL_IN_TRANSACTION", "Y"),
    (111, "DESCENDING_INDEXES", "Y"),
    (112, "SP_RENAME", "Y"),
];

impl Run<'_> {
    /// `sp_table_privileges @table_name [, @table_owner] [, @table_qualifier]
    /// [, @fUsePattern]`: for each table whose name and owner match (LIKE patterns unless
    /// `@fUsePattern = 0`), its owner's DELETE, INSERT, REFERENCES, SELECT and UPDATE.
    pub(super) fn sp_table_privileges(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let procedure = "sp_table_privileges";
        let args = self.procedure_arguments(
            procedure,
            p,
            &["@table_name", "@table_owner", "@table_qualifier", "@fUsePattern"],
        )?;
        let text = texts(&args);
        let Some(table) = &text[0] else {
            return Err(missing_parameter(procedure, "@table_name"));
        };
        self.check_qualifier(text[2].as_deref())?;
        let use_pattern = match &args[3] {
            None => true,
            Some(v) => integer(v).ok_or_else(|| bad_argument(procedure, v))? != 0,
        };
        let mut filter = compare(use_pattern, "t.TABLE_NAME", table);
        if let Some(owner) = &text[1] {
            filter.push_str(&format!(" AND {}", compare(use_pattern, "t.TABLE_SCHEMA", owner)));
        }
        Ok(format!(
            "SELECT CAST(t.TABLE_CATALOG AS sysname) AS TABLE_QUALIFIER, \
             CAST(t.TABLE_SCHEMA AS sysname) AS TABLE_OWNER, CAST(t.TABLE_NAME AS sysname) AS TABLE_NAME, \
             CAST(USER_NAME(s.principal_id) AS sysname) AS GRANTOR, \
             CAST(USER_NAME(s.principal_id) AS sysname) AS GRANTEE, \
             CAST(v.privilege AS VARCHAR(32)) AS PRIVILEGE, CAST('YES' AS VARCHAR(3)) AS IS_GRANTABLE \
             FROM INFORMATION_SCHEMA.TABLES t JOIN sys.schemas s ON s.name = t.TABLE_SCHEMA \
             CROSS JOIN (VALUES {TABLE_PRIVILEGES}) AS v(privilege) WHERE {filter} \
             ORDER BY TABLE_QUALIFIER, TABLE_OWNER, TABLE_NAME, PRIVILEGE"
        ))
    }

    /// `sp_column_privileges @table_name [, @table_owner] [, @table_qualifier]
    /// [, @column_name]`: for each column of the table (named exactly; the owner defaults to
    /// dbo) whose name matches the LIKE pattern, its owner's INSERT, REFERENCES, SELECT and
    /// UPDATE. A table that does not exist gives no rows.
    pub(super) fn sp_column_privileges(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let procedure = "sp_column_privileges";
        let args = self.procedure_arguments(
            procedure,
            p,
            &["@table_name", "@table_owner", "@table_qualifier", "@column_name"],
        )?;
        let text = texts(&args);
        let Some(table) = &text[0] else {
            return Err(missing_parameter(procedure, "@table_name"));
        };
        self.check_qualifier(text[2].as_deref())?;
        let owner = text[1].clone().filter(|o| !o.is_empty()).unwrap_or_else(|| "dbo".into());
        let mut filter =
            format!("c.TABLE_NAME = {} AND c.TABLE_SCHEMA = {}", quoted(table), quoted(&owner));
        if let Some(column) = &text[3] {
            filter.push_str(&format!(" AND {}", like("c.COLUMN_NAME", column)));
        }
        Ok(format!(
            "SELECT CAST(c.TABLE_CATALOG AS sysname) AS TABLE_QUALIFIER, \
             CAST(c.TABLE_SCHEMA AS sysname) AS TABLE_OWNER, CAST(c.TABLE_NAME AS sysname) AS TABLE_NAME, \
             CAST(c.COLUMN_NAME AS sysname) AS COLUMN_NAME, \
             CAST(USER_NAME(s.principal_id) AS sysname) AS GRANTOR, \
             CAST(USER_NAME(s.principal_id) AS sysname) AS GRANTEE, \
             CAST(v.privilege AS VARCHAR(32)) AS PRIVILEGE, CAST('YES' AS VARCHAR(3)) AS IS_GRANTABLE \
             FROM INFORMATION_SCHEMA.COLUMNS c JOIN sys.schemas s ON s.name = c.TABLE_SCHEMA \
             CROSS JOIN (VALUES {COLUMN_PRIVILEGES}) AS v(privilege) WHERE {filter} \
             ORDER BY TABLE_QUALIFIER, TABLE_OWNER, TABLE_NAME, COLUMN_NAME, PRIVILEGE"
        ))
    }

    /// `sp_server_info [@attribute_id]`: the server's attributes, or the one asked for (none
    /// if there is no such attribute).
    pub(super) fn sp_server_info(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let procedure = "sp_server_info";
        let args = self.procedure_arguments(procedure, p, &["@attribute_id"])?;
        let wanted = match &args[0] {
            None => None,
            Some(v) => Some(integer(v).ok_or_else(|| bad_argument(procedure, v))?),
        };
        let version = "CAST(SERVERPROPERTY('ProductVersion') AS VARCHAR(255))";
        let rows: Vec<String> = SERVER_INFO
            .iter()
            .map(|&(id, name, value)| format!("({id}, '{name}', '{value}')"))
            .chain([
                format!("(2, 'DBMS_VER', 'Microsoft SQL Server - ' + {version})"),
                format!("(500, 'SYS_SPROC_VERSION', {version})"),
            ])
            .collect();
        let filter = wanted.map_or_else(String::new, |id| format!(" WHERE id = {id}"));
        Ok(format!(
            "SELECT CAST(id AS INT) AS ATTRIBUTE_ID, CAST(name AS VARCHAR(60)) AS ATTRIBUTE_NAME, \
             CAST(value AS VARCHAR(255)) AS ATTRIBUTE_VALUE FROM (VALUES {}) AS a(id, name, value)\
             {filter} ORDER BY ATTRIBUTE_ID",
            rows.join(", ")
        ))
    }
}
