//! System procedures, written as queries over the system views with SQL Server's result
//! columns: `sp_who`, `sp_who2` and `sp_lock` (who is connected and what blocks what, over
//! `sys.dm_exec_sessions`, `sys.dm_exec_requests` and `sys.dm_tran_locks`), `sp_help` (the
//! objects of a database, or one object's columns and indexes) and `sp_helptext` (a
//! procedure's text), `sp_spaceused` (rows and pages of a table or a whole database,
//! counted by walking its trees) and `sp_helpdb` (databases, and one database's files);
//! `sp_configure` (the read-only server options of `sys.configurations`); `sp_databases`.
//! The ODBC catalog procedures drivers call for their metadata (`sp_tables`, `sp_columns`...)
//! are in `catalog_procs`.

use walden_engine::database::DatabaseState;
use walden_engine::types::Value;

use crate::ast::{ExecProcedure, ExprKind};
use crate::exec::scalar;
use crate::exec::session::{Frame, Run, Step};
use crate::exec::sysviews::{CONFIGURATIONS, PAGE_BYTES};
use crate::exec::SqlError;

/// `sp_who`'s and `sp_who2`'s sessions joined with their running requests.
const SESSIONS: &str = "FROM sys.dm_exec_sessions s \
     LEFT JOIN sys.dm_exec_requests r ON r.session_id = s.session_id";

/// `sp_who`: SQL Server's columns and types.
const SP_WHO: &str = "SELECT CAST(s.session_id AS SMALLINT) AS spid, CAST(0 AS SMALLINT) AS ecid, \
     CAST(CASE WHEN r.session_id IS NULL THEN 'sleeping' WHEN r.status = 'suspended' \
     THEN 'suspended' ELSE 'runnable' END AS NCHAR(30)) AS status, \
     CAST(s.login_name AS NCHAR(128)) AS loginame, CAST(s.host_name AS NCHAR(128)) AS hostname, \
     CAST(ISNULL(r.blocking_session_id, 0) AS CHAR(5)) AS blk, \
     CAST(DB_NAME(s.database_id) AS NVARCHAR(128)) AS dbname, \
     CAST(ISNULL(r.command, 'AWAITING COMMAND') AS NCHAR(16)) AS cmd, \
     ISNULL(r.request_id, 0) AS request_id ";

/// `sp_who2`: its text columns (CPU and disk I/O are not kept per session: NULL).
const SP_WHO2: &str = "SELECT CAST(s.session_id AS CHAR(5)) AS SPID, \
     CASE WHEN r.session_id IS NULL THEN 'sleeping' WHEN r.status = 'suspended' \
     THEN 'SUSPENDED' ELSE 'RUNNABLE' END AS Status, \
     s.login_name AS Login, ISNULL(NULLIF(s.host_name, ''), '  .') AS HostName, \
     CASE WHEN ISNULL(r.blocking_session_id, 0) = 0 THEN '  .' \
     ELSE CAST(r.blocking_session_id AS CHAR(5)) END AS BlkBy, \
     DB_NAME(s.database_id) AS DBName, ISNULL(r.command, 'AWAITING COMMAND') AS Command, \
     CAST(NULL AS INT) AS CPUTime, CAST(NULL AS INT) AS DiskIO, \
     LEFT(CONVERT(VARCHAR(10), s.last_request_start_time, 101), 5) + ' ' + \
     CONVERT(VARCHAR(8), s.last_request_start_time, 108) AS LastBatch, \
     s.program_name AS ProgramName, CAST(s.session_id AS CHAR(5)) AS SPID, \
     ISNULL(r.request_id, 0) AS REQUESTID ";

/// `sp_lock`: one row per lock, from `sys.dm_tran_locks`.
const SP_LOCK: &str = "SELECT CAST(request_session_id AS SMALLINT) AS spid, \
     CAST(resource_database_id AS SMALLINT) AS dbid, \
     CAST(CASE WHEN resource_type = 'DATABASE' THEN 0 \
     ELSE resource_associated_entity_id END AS INT) AS ObjId, \
     CAST(CASE WHEN resource_type = 'KEY' THEN 1 ELSE 0 END AS SMALLINT) AS IndId, \
     CAST(CASE resource_type WHEN 'OBJECT' THEN 'TAB' WHEN 'DATABASE' THEN 'DB' \
     ELSE resource_type END AS NCHAR(4)) AS Type, \
     CAST(resource_description AS NCHAR(32)) AS Resource, \
     CAST(request_mode AS NVARCHAR(8)) AS Mode, CAST(request_status AS NVARCHAR(5)) AS Status \
     FROM sys.dm_tran_locks";

/// `sp_help` without an argument: every object of the current database.
const SP_HELP_ALL: &str = "SELECT name AS Name, SCHEMA_NAME(schema_id) AS Owner, \
     CASE type WHEN 'U ' THEN 'user table' WHEN 'P ' THEN 'stored procedure' \
     WHEN 'SO' THEN 'sequence object' END AS Object_type \
     FROM sys.objects ORDER BY Object_type, name";

/// `sp_help object`'s first result set.
const SP_HELP_OBJECT: &str = "SELECT o.name AS Name, SCHEMA_NAME(o.schema_id) AS Owner, \
     CASE o.type WHEN 'U ' THEN 'user table' WHEN 'P ' THEN 'stored procedure' \
     WHEN 'SO' THEN 'sequence object' END AS Type, o.create_date AS Created_datetime \
     FROM sys.objects o";

/// `sp_help type`: the data type (a system type or an alias type) as SQL Server describes
/// it. Prec is the precision of a number and the length in characters (bytes for binary
/// types, -1 for `(max)`) of a string; Scale is NULL for a type without one. Walden has no
/// bound defaults or rules (`sp_bindefault`, `sp_bindrule`): both are `none`.
const SP_HELP_TYPE: &str = "SELECT t.name AS Type_name, \
     CAST(TYPE_NAME(t.system_type_id) AS SYSNAME) AS Storage_type, t.max_length AS Length, \
     CAST(CASE WHEN t.[precision] > 0 THEN t.[precision] WHEN t.max_length = -1 THEN -1 \
     WHEN TYPE_NAME(t.system_type_id) IN ('nchar', 'nvarchar', 'ntext', 'sysname') \
     THEN t.max_length / 2 ELSE t.max_length END AS INT) AS Prec, \
     CAST(CASE WHEN t.[precision] > 0 THEN t.scale END AS INT) AS Scale, \
     CAST(CASE WHEN t.is_nullable = 1 THEN 'yes' ELSE 'no' END AS VARCHAR(35)) AS Nullable, \
     CAST(N'none' AS SYSNAME) AS Default_name, CAST(N'none' AS SYSNAME) AS Rule_name, \
     t.collation_name AS Collation \
     FROM sys.types t";

/// `sp_help table`'s columns.
const SP_HELP_COLUMNS: &str = "SELECT c.name AS Column_name, t.name AS Type, \
     CAST('no' AS VARCHAR(35)) AS Computed, c.max_length AS Length, \
     CASE WHEN t.[precision] > 0 THEN CAST(c.[precision] AS CHAR(5)) ELSE '     ' END AS Prec, \
     CASE WHEN t.[precision] > 0 THEN CAST(c.scale AS CHAR(5)) ELSE '     ' END AS Scale, \
     CASE WHEN c.is_nullable = 1 THEN 'yes' ELSE 'no' END AS Nullable, \
     CASE WHEN t.collation_name IS NULL THEN '(n/a)' ELSE 'no' END AS TrimTrailingBlanks, \
     CASE WHEN t.collation_name IS NULL THEN '(n/a)' ELSE 'no' END AS FixedLenNullInSource, \
     c.collation_name AS Collation \
     FROM sys.columns c JOIN sys.types t ON t.user_type_id = c.user_type_id";

/// `sp_help table`'s indexes: name, description, key columns.
const SP_HELP_INDEXES: &str = "SELECT i.name AS index_name, \
     LOWER(i.type_desc) + CASE WHEN i.is_unique = 1 THEN ', unique' ELSE '' END + \
     CASE WHEN i.is_primary_key = 1 THEN ', primary key' ELSE '' END + ' located on PRIMARY' \
     AS index_description, STRING_AGG(c.name, ', ') AS index_keys \
     FROM sys.indexes i JOIN sys.index_columns ic ON ic.object_id = i.object_id \
     AND ic.index_id = i.index_id \
     JOIN sys.columns c ON c.object_id = ic.object_id AND c.column_id = ic.column_id";

/// `sp_helpdb`'s databases: size of all files, owner, id, creation date, status text.
const SP_HELPDB: &str = "SELECT d.name, \
     CAST(RIGHT(SPACE(13) + CONVERT(VARCHAR(20), CAST(SUM(CAST(f.size AS BIGINT)) * 8 / 1024.0 \
     AS DECIMAL(18, 2))) + ' MB', 13) AS NVARCHAR(13)) AS db_size, \
     CAST(N'sa' AS NVARCHAR(128)) AS owner, CAST(d.database_id AS SMALLINT) AS dbid, \
     CAST(CONVERT(VARCHAR(11), d.create_date, 100) AS NVARCHAR(11)) AS created, \
     CAST(N'Status=' + d.state_desc + N', Updateability=' + \
     CASE d.is_read_only WHEN 1 THEN N'READ_ONLY' ELSE N'READ_WRITE' END + N', UserAccess=' + \
     d.user_access_desc + N', Recovery=' + d.recovery_model_desc + N', Version=957, Collation=' \
     + d.collation_name + N', SQLSortOrder=52, IsAutoCreateStatistics, IsAutoUpdateStatistics' \
     AS NVARCHAR(600)) AS status, d.compatibility_level \
     FROM sys.databases d JOIN sys.master_files f ON f.database_id = d.database_id ";

/// What `SP_HELPDB` sums its files' sizes by: one row per database.
const SP_HELPDB_GROUP: &str = "GROUP BY d.name, d.database_id, d.create_date, d.state_desc, \
     d.user_access_desc, d.recovery_model_desc, d.collation_name, d.compatibility_level, \
     d.is_read_only";

/// `sp_helpdb database`'s second result set and `sp_helpfile`'s: the files, sizes in KB,
/// growth in KB or percent.
const SP_HELPDB_FILES: &str = "SELECT f.name, CAST(f.file_id AS SMALLINT) AS fileid, \
     CAST(f.physical_name AS NCHAR(260)) AS filename, \
     CAST(CASE WHEN f.type = 0 THEN N'PRIMARY' END AS NVARCHAR(128)) AS filegroup, \
     CAST(CONVERT(VARCHAR(15), CAST(f.size AS BIGINT) * 8) + ' KB' AS NVARCHAR(18)) AS size, \
     CAST(CASE WHEN f.max_size = -1 THEN 'Unlimited' \
     ELSE CONVERT(VARCHAR(15), CAST(f.max_size AS BIGINT) * 8) + ' KB' END AS NVARCHAR(18)) \
     AS maxsize, \
     CAST(CASE WHEN f.is_percent_growth = 1 THEN CONVERT(VARCHAR(15), f.growth) + '%' \
     ELSE CONVERT(VARCHAR(15), CAST(f.growth AS BIGINT) * 8) + ' KB' END AS NVARCHAR(18)) \
     AS growth, \
     CAST(CASE WHEN f.type = 0 THEN 'data only' ELSE 'log only' END AS VARCHAR(9)) AS usage \
     FROM sys.master_files f ";

/// `sp_databases`: each database with the size of its files in KB.
const SP_DATABASES: &str = "SELECT CAST(d.name AS NVARCHAR(128)) AS DATABASE_NAME, \
     CAST(SUM(CAST(f.size AS BIGINT)) * 8 AS INT) AS DATABASE_SIZE, \
     CAST(NULL AS VARCHAR(254)) AS REMARKS \
     FROM sys.databases d JOIN sys.master_files f ON f.database_id = d.database_id \
     GROUP BY d.name ORDER BY d.name";

/// `sp_validatelogins`' result set, with no rows.
const SP_VALIDATELOGINS: &str = "SELECT CAST(NULL AS VARBINARY(85)) AS SID, \
     CAST(NULL AS SYSNAME) AS [NT Login] WHERE 1 = 0";

/// The configuration id of 'show advanced options'.
const SHOW_ADVANCED_OPTIONS: i64 = 518;

/// `sp_configure`'s columns over `sys.configurations`.
const SP_CONFIGURE: &str = "SELECT name, CAST(minimum AS INT) AS minimum, \
     CAST(maximum AS INT) AS maximum, CAST(value AS INT) AS config_value, \
     CAST(value_in_use AS INT) AS run_value FROM sys.configurations";

/// Error 201: a system procedure called without a parameter it needs.
pub(super) fn missing_parameter(procedure: &str, parameter: &str) -> SqlError {
    SqlError::new(
        201,
        format!(
            "Procedure or function '{procedure}' expects parameter '{parameter}', which was not \
             supplied."
        ),
    )
}

/// Each argument's text (`None`: not given, NULL or DEFAULT).
pub(super) fn texts(args: &[Option<Value>]) -> Vec<Option<String>> {
    args.iter().map(|a| a.as_ref().map(scalar::to_text)).collect()
}

/// `text` as a bracketed identifier.
fn bracketed(text: &str) -> String {
    format!("[{}]", text.replace(']', "]]"))
}

/// A string literal for `text`.
pub(super) fn quoted(text: &str) -> String {
    format!("N'{}'", text.replace('\'', "''"))
}

impl Run<'_> {
    /// `sp_who` and `sp_who2` (`two`): the sessions, with their requests, as a query.
    pub(super) fn sp_who(&mut self, p: &ExecProcedure, two: bool) -> Result<String, SqlError> {
        let select = if two { SP_WHO2 } else { SP_WHO };
        let filter = self.sp_who_filter(p)?;
        Ok(format!("{select}{SESSIONS}{filter} ORDER BY s.session_id"))
    }

    /// `sp_help [object]`: the database's objects, or one object's description.
    pub(super) fn sp_help(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        match self.first_argument(p)? {
            None => Ok(SP_HELP_ALL.to_string()),
            Some(v) => self.sp_help_object(&scalar::to_text(&v)),
        }
    }

    /// `sp_droptype @typename`: the `DROP TYPE` statement it stands for.
    pub(super) fn sp_droptype(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let args = self.procedure_arguments("sp_droptype", p, &["@typename"])?;
        match args.first().cloned().flatten() {
            Some(v) => Ok(format!("DROP TYPE {}", bracketed(&scalar::to_text(&v)))),
            None => Err(missing_parameter("sp_droptype", "@typename")),
        }
    }

    /// `sp_helpdb [database]`: every database, or one database and its files (15010 for a
    /// database there is not).
    pub(super) fn sp_helpdb(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let Some(v) = self.first_argument(p)? else {
            return Ok(format!("{SP_HELPDB}{SP_HELPDB_GROUP} ORDER BY d.name"));
        };
        let name = scalar::to_text(&v);
        let Ok(db) = self.s.instance.database(&name) else {
            return Err(SqlError::new(
                15010,
                format!(
                    "The database '{name}' does not exist. Supply a valid database name. To see \
                     available databases, use sys.databases."
                ),
            ));
        };
        let id = db.id();
        Ok(format!(
            "{SP_HELPDB}WHERE d.database_id = {id} {SP_HELPDB_GROUP}; \
             {SP_HELPDB_FILES}WHERE f.database_id = {id} ORDER BY f.file_id"
        ))
    }

    /// `sp_helpfile`: the current database's files.
    pub(super) fn sp_helpfile(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        self.procedure_arguments("sp_helpfile", p, &[])?;
        Ok(format!("{SP_HELPDB_FILES}WHERE f.database_id = {} ORDER BY f.file_id", self.s.db.id()))
    }

    /// `sp_databases`: each database and its size.
    pub(super) fn sp_databases(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        self.procedure_arguments("sp_databases", p, &[])?;
        Ok(SP_DATABASES.to_string())
    }

    /// `sp_validatelogins`: the Windows logins whose accounts no longer exist. Walden has no
    /// Windows logins, so none.
    pub(super) fn sp_validatelogins(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        self.procedure_arguments("sp_validatelogins", p, &[])?;
        Ok(SP_VALIDATELOGINS.to_string())
    }

    /// `sp_lock [spid]`: the locks held and wanted, all or one session's.
    pub(super) fn sp_lock(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        match self.first_argument(p)? {
            None => Ok(format!("{SP_LOCK} ORDER BY spid")),
            Some(v) => match integer(&v) {
                Some(spid) => {
                    Ok(format!("{SP_LOCK} WHERE request_session_id = {spid} ORDER BY spid"))
                }
                None => Err(bad_argument("sp_lock", &v)),
            },
        }
    }

    /// The batch `sp_MSforeachdb @command1 [, @replacechar, @command2, @command3, @whereand,
    /// @precommand, @postcommand]` runs: `@precommand` once, then for each online database in
    /// id order its commands, each as `EXEC (...)` with `@replacechar` (default `?`) replaced
    /// by the database's name, then `@postcommand`. `@whereand` (a filter on SQL Server's
    /// `sysdatabases`) is refused with 50000 rather than ignored.
    pub(super) fn sp_msforeachdb(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        const NAME: &str = "sp_MSforeachdb";
        let args = self.procedure_arguments(
            NAME,
            p,
            &[
                "@command1",
                "@replacechar",
                "@command2",
                "@command3",
                "@whereand",
                "@precommand",
                "@postcommand",
            ],
        )?;
        let args = texts(&args);
        let Some(command1) = args[0].clone() else {
            return Err(missing_parameter(NAME, "@command1"));
        };
        if args[4].as_deref().is_some_and(|w| !w.trim().is_empty()) {
            return Err(SqlError::new(
                50000,
                "Walden's sp_MSforeachdb does not take @whereand: filter in the command instead.",
            ));
        }
        let replace = args[1].clone().filter(|r| !r.is_empty()).unwrap_or_else(|| "?".into());
        let exec = |text: &str| format!("EXEC ({});\n", quoted(text));
        let mut batch = String::new();
        if let Some(pre) = &args[5] {
            batch.push_str(&exec(pre));
        }
        let mut databases = self.s.instance.databases();
        databases.sort_by_key(|db| db.id());
        for db in databases.iter().filter(|db| db.state() == DatabaseState::Online) {
            for command in
                [Some(&command1), args[2].as_ref(), args[3].as_ref()].into_iter().flatten()
            {
                batch.push_str(&exec(&command.replace(&replace, db.name())));
            }
        }
        if let Some(post) = &args[6] {
            batch.push_str(&exec(post));
        }
        Ok(batch)
    }

    /// The query of `sp_helpindex table`: its indexes as `sp_help` lists them (15009 for an
    /// object the database does not have). A table without indexes gets SQL Server's message
    /// and no result (`None`).
    fn helpindex_query(&mut self, name: &str) -> Result<Option<String>, SqlError> {
        let db_name = self.s.db.name().to_string();
        let id = self.object_id(name).ok_or_else(|| no_such_object(name, &db_name))?;
        let indexed = match self.s.db.object_by_id(id).as_deref() {
            Some(walden_engine::catalog::Object::Table(t)) => {
                t.indexes.iter().any(|i| !i.is_heap())
            }
            _ => return Err(no_such_object(name, &db_name)),
        };
        if !indexed {
            self.report(SqlError::with_severity(
                0,
                10,
                format!(
                    "The object '{name}' does not have any indexes, or you do not have \
                     permissions."
                ),
            ));
            return Ok(None);
        }
        Ok(Some(format!(
            "{SP_HELP_INDEXES} WHERE i.object_id = {id} AND i.name IS NOT NULL \
             GROUP BY i.name, i.index_id, i.type_desc, i.is_unique, i.is_primary_key \
             ORDER BY i.name;"
        )))
    }

    /// The queries of `sp_help object`: the object, and for a table its columns and indexes;
    /// for a name no object has, the data type of that name (`sp_help int`, as SQL Server
    /// looks up objects first). A name that is neither is error 15009, as in SQL Server.
    fn sp_help_object(&mut self, name: &str) -> Result<String, SqlError> {
        let db_name = self.s.db.name().to_string();
        let Some(id) = self.object_id(name) else {
            let type_id = self.type_id_of(name).ok_or_else(|| no_such_object(name, &db_name))?;
            return Ok(format!("{SP_HELP_TYPE} WHERE t.user_type_id = {type_id};"));
        };
        let mut query = format!("{SP_HELP_OBJECT} WHERE o.object_id = {id};");
        let is_table = matches!(
            self.s.db.object_by_id(id).as_deref(),
            Some(walden_engine::catalog::Object::Table(_))
        );
        if is_table {
            query.push_str(&format!(
                "{SP_HELP_COLUMNS} WHERE c.object_id = {id} ORDER BY c.column_id;"
            ));
            query.push_str(&format!(
                "{SP_HELP_INDEXES} WHERE i.object_id = {id} AND i.name IS NOT NULL \
                 GROUP BY i.name, i.index_id, i.type_desc, i.is_unique, i.is_primary_key \
                 ORDER BY i.index_id;"
            ));
        }
        Ok(query)
    }

    /// The user_type_id of the system type or the current database's alias type `name`
    /// (`schema.name`, brackets allowed), as `TYPE_ID` finds it.
    fn type_id_of(&mut self, name: &str) -> Option<i64> {
        if let Some(id) = crate::exec::sysviews::type_id(name.trim_matches(['[', ']'])) {
            return Some(id);
        }
        let parsed = crate::exec::eval::parse_object_name(name)?;
        let schema = parsed.schema.map_or_else(|| "dbo".to_string(), |s| s.value);
        match self.s.db.find_object(&schema, &parsed.name.value).as_deref() {
            Some(walden_engine::catalog::Object::Type(t)) => Some(i64::from(t.id)),
            _ => None,
        }
    }

    /// `sp_helpindex table`: its indexes (see `helpindex_query`).
    pub(super) fn sp_helpindex(&mut self, p: &ExecProcedure) -> Step<()> {
        let Some(v) = self.first_argument(p)? else {
            return Err(missing_parameter("sp_helpindex", "@objname").into());
        };
        match self.helpindex_query(&scalar::to_text(&v))? {
            Some(query) => self.run_system_query(&query),
            None => Ok(()),
        }
    }

    /// `sp_helptext procedure | view`: the module's text, one row per line (each with its line
    /// end), in column `Text`, as SQL Server returns it.
    pub(super) fn sp_helptext(&mut self, p: &ExecProcedure) -> Result<(), SqlError> {
        let Some(v) = self.first_argument(p)? else {
            return Err(missing_parameter("sp_helptext", "@objname"));
        };
        let name = &scalar::to_text(&v);
        let db_name = self.s.db.name().to_string();
        let id = self.object_id(name).ok_or_else(|| no_such_object(name, &db_name))?;
        let object = self.s.db.object_by_id(id);
        let Some(text) = object.as_deref().and_then(|o| o.module_text()).map(str::to_string) else {
            return Err(SqlError::new(15197, format!("There is no text for object '{name}'.")));
        };
        let columns = [crate::exec::ColumnInfo::new(
            "Text",
            walden_engine::types::SqlType::NVarChar(walden_engine::types::Len::N(255)),
        )];
        self.out.result_set(&columns);
        let mut n = 0;
        for line in text.split_inclusive('\n') {
            self.out.row(&[Value::NStr(line.to_string())]);
            n += 1;
        }
        self.out.result_end(n);
        Ok(())
    }

    /// `sp_spaceused [table]`: for a table, its rows and the space of its clustered index (or
    /// heap) and other indexes; for the database, its files' size, the space not in any tree,
    /// and the same totals over its tables. Each table's trees are walked under a shared
    /// table lock, so the figures are exact rather than SQL Server's estimates.
    pub(super) fn sp_spaceused(&mut self, p: &ExecProcedure) -> Result<(), SqlError> {
        let table = self.first_argument(p)?;
        use walden_engine::catalog::Object;
        use walden_engine::types::{Len, SqlType};
        let kb = |pages: u64| Value::Str(format!("{} KB", pages * 8));
        let text = |n: u16| SqlType::VarChar(Len::N(n));
        if let Some(name) = table {
            let name = scalar::to_text(&name);
            let db_name = self.s.db.name().to_string();
            let parsed = crate::exec::eval::parse_object_name(&name)
                .ok_or_else(|| no_such_object(&name, &db_name))?;
            let (db, object) =
                self.resolve_table_object(&parsed).map_err(|_| no_such_object(&name, &db_name))?;
            let Object::Table(def) = &*object else { return Err(no_such_object(&name, &db_name)) };
            let (rows, data, index) = self.table_space(&db, def)?;
            let columns = [
                crate::exec::ColumnInfo::new("name", SqlType::NVarChar(Len::N(128))),
                crate::exec::ColumnInfo::new("rows", SqlType::Char(20)),
                crate::exec::ColumnInfo::new("reserved", text(18)),
                crate::exec::ColumnInfo::new("data", text(18)),
                crate::exec::ColumnInfo::new("index_size", text(18)),
                crate::exec::ColumnInfo::new("unused", text(18)),
            ];
            self.out.result_set(&columns);
            self.out.row(&[
                Value::NStr(def.name.clone()),
                Value::Str(format!("{rows:<20}")),
                kb(data + index),
                kb(data),
                kb(index),
                kb(0),
            ]);
            self.out.result_end(1);
            return Ok(());
        }
        let db = std::sync::Arc::clone(&self.s.db);
        let (mut data, mut index) = (0u64, 0u64);
        for object in db.catalog().objects() {
            if let Object::Table(def) = &*object {
                let (_, d, i) = self.table_space(&db, def)?;
                data += d;
                index += i;
            }
        }
        let file_pages = u64::from(db.space().pool().file().page_count());
        let log_bytes = crate::exec::sysviews::log_file_bytes(&db);
        let mb = |bytes: u64| Value::Str(format!("{:.2} MB", bytes as f64 / (1024.0 * 1024.0)));
        self.out.result_set(&[
            crate::exec::ColumnInfo::new("database_name", SqlType::NVarChar(Len::N(128))),
            crate::exec::ColumnInfo::new("database_size", text(18)),
            crate::exec::ColumnInfo::new("unallocated space", text(18)),
        ]);
        self.out.row(&[
            Value::NStr(db.name().to_string()),
            mb(file_pages * PAGE_BYTES + log_bytes),
            mb(file_pages.saturating_sub(data + index) * PAGE_BYTES),
        ]);
        self.out.result_end(1);
        self.out.result_set(&[
            crate::exec::ColumnInfo::new("reserved", text(18)),
            crate::exec::ColumnInfo::new("data", text(18)),
            crate::exec::ColumnInfo::new("index_size", text(18)),
            crate::exec::ColumnInfo::new("unused", text(18)),
        ]);
        self.out.row(&[kb(data + index), kb(data), kb(index), kb(0)]);
        self.out.result_end(1);
        Ok(())
    }

    /// A table's rows, and the pages of its clustered index (or heap) and of its other
    /// indexes, counted by walking them (`check_trees`, under a shared table lock).
    fn table_space(
        &mut self,
        db: &std::sync::Arc<walden_engine::Database>,
        def: &walden_engine::catalog::TableDef,
    ) -> Result<(u64, u64, u64), SqlError> {
        let mut sizes = (0u64, 0u64, 0u64);
        for (index, check) in def.indexes.iter().zip(self.check_trees(db, def)?) {
            let (rows, pages) = check?;
            if index.id == 1 {
                sizes = (rows, pages, sizes.2);
            } else {
                sizes.2 += pages;
            }
        }
        Ok(sizes)
    }

    /// A system procedure's arguments, one per parameter of `params` (`None`: not given, NULL
    /// or DEFAULT), passed by position or as `@name = value`, with SQL Server's errors for a
    /// name the procedure does not have (8145), too many arguments (8144) and a positional
    /// argument after a named one (119).
    pub(crate) fn procedure_arguments(
        &mut self,
        procedure: &str,
        p: &ExecProcedure,
        params: &[&str],
    ) -> Result<Vec<Option<Value>>, SqlError> {
        let mut values = vec![None; params.len()];
        let mut named = false;
        for (i, arg) in p.arguments.iter().enumerate() {
            let index = match &arg.name {
                Some(n) => {
                    named = true;
                    params.iter().position(|q| q.eq_ignore_ascii_case(n)).ok_or_else(|| {
                        SqlError::new(
                            8145,
                            format!("{n} is not a parameter for procedure {procedure}."),
                        )
                    })?
                }
                None if named => {
                    return Err(SqlError::new(
                        119,
                        format!(
                            "Must pass parameter number {} and subsequent parameters as '@name = \
                             value'. After the form '@name = value' has been used, all \
                             subsequent parameters must be passed in the form '@name = value'.",
                            i + 1
                        ),
                    ))
                }
                None if i >= params.len() => {
                    return Err(SqlError::new(
                        8144,
                        format!(
                            "Procedure or function {procedure} has too many arguments specified."
                        ),
                    ))
                }
                None => i,
            };
            if !matches!(arg.value.kind, ExprKind::Default) {
                let v = self.value(&arg.value)?;
                values[index] = if v.is_null() { None } else { Some(v) };
            }
        }
        Ok(values)
    }

    /// `sp_addtype name, 'base type' [, 'NULL' | 'NOT NULL' | 'NONULL' [, 'owner']]`: the
    /// `CREATE TYPE name FROM base type` statement it stands for. A base type that is not a
    /// type name with an optional `(n[, m])` is refused with SQL Server's 15036 before any text
    /// is built from it; a bad null type is 15062.
    pub(super) fn sp_addtype(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        const PROC: &str = "sp_addtype";
        let args =
            self.procedure_arguments(PROC, p, &["@typename", "@phystype", "@nulltype", "@owner"])?;
        let args = texts(&args);
        let name = args[0].clone().ok_or_else(|| missing_parameter(PROC, "@typename"))?;
        let base = args[1].clone().ok_or_else(|| missing_parameter(PROC, "@phystype"))?;
        let base = base.trim();
        let well_formed = !base.is_empty()
            && base.chars().all(|c| c.is_ascii_alphanumeric() || "_(), ".contains(c))
            && base.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if !well_formed {
            return Err(SqlError::new(15036, format!("The data type '{base}' does not exist.")));
        }
        let null = match args[2].as_deref().map(|n| n.trim().to_ascii_uppercase()) {
            None => "NULL",
            Some(n) if n == "NULL" => "NULL",
            Some(n) if n == "NOT NULL" || n == "NONULL" => "NOT NULL",
            Some(_) => {
                return Err(SqlError::new(
                    15062,
                    "The null type is invalid. Specify 'NULL', 'NOT NULL' or 'NONULL'.".to_string(),
                ))
            }
        };
        let owner = args[3].as_deref().map_or(String::new(), |o| format!("{}.", bracketed(o)));
        Ok(format!("CREATE TYPE {owner}{} FROM {base} {null}", bracketed(&name)))
    }

    /// `sp_configure [option [, value]]`: the options of `sys.configurations`, by name. While
    /// 'show advanced options' is 0, only the options that are not advanced are listed or
    /// found (SQL Server's error 15123 for the others); a name matches the options that
    /// contain it unless one is named exactly. 'show advanced options' is the one option that
    /// can be set (0 or 1, for the whole server, at once: RECONFIGURE has nothing to install),
    /// as scripts do before `sp_configure 'max server memory (MB)'`. The others are read-only
    /// (they come from `walden.toml` and the command line): a new value is refused with error
    /// 15247.
    pub(super) fn sp_configure(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        let args = self.procedure_arguments("sp_configure", p, &["@configname", "@configvalue"])?;
        let counters = &self.s.counters;
        let advanced = counters.show_advanced();
        let visible = || CONFIGURATIONS.iter().filter(|o| advanced || !o.is_advanced);
        let Some(name) = args[0].as_ref().map(scalar::to_text) else {
            let filter = if advanced { "" } else { " WHERE is_advanced = 0" };
            return Ok(format!("{SP_CONFIGURE}{filter} ORDER BY name"));
        };
        let wanted = name.trim().to_lowercase();
        let exact: Vec<i64> =
            visible().filter(|o| o.name.eq_ignore_ascii_case(name.trim())).map(|o| o.id).collect();
        let ids = if exact.is_empty() {
            visible().filter(|o| o.name.to_lowercase().contains(&wanted)).map(|o| o.id).collect()
        } else {
            exact
        };
        if ids.is_empty() {
            return Err(SqlError::new(
                15123,
                format!(
                    "The configuration option '{name}' does not exist, or it may be an advanced \
                     option."
                ),
            ));
        }
        if let Some(value) = &args[1] {
            return match ids.as_slice() {
                [SHOW_ADVANCED_OPTIONS] => {
                    let new = match scalar::to_text(value).trim() {
                        "0" => false,
                        "1" => true,
                        other => {
                            return Err(SqlError::new(
                                15129,
                                format!(
                                    "'{other}' is not a valid value for configuration option \
                                     'show advanced options'."
                                ),
                            ))
                        }
                    };
                    let old = counters.set_show_advanced(new);
                    // SQL Server's message 15457, as an informational message.
                    Ok(format!(
                        "PRINT N'Configuration option ''show advanced options'' changed from {} \
                         to {}. Run the RECONFIGURE statement to install.'",
                        u8::from(old),
                        u8::from(new)
                    ))
                }
                [_] => {
                    // SQL Server's text: Walden's options are read-only for everyone (they
                    // come from walden.toml and the command line; docs/serve.md).
                    Err(SqlError::new(
                        15247,
                        "User does not have permission to perform this action.",
                    ))
                }
                _ => Err(SqlError::new(
                    15124,
                    format!("The configuration option '{name}' is not unique."),
                )),
            };
        }
        let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
        Ok(format!("{SP_CONFIGURE} WHERE configuration_id IN ({}) ORDER BY name", ids.join(", ")))
    }

    /// `sp_describe_undeclared_parameters @tsql [, @params]` (see `describe.rs`).
    pub(super) fn sp_describe_undeclared_parameters(
        &mut self,
        p: &ExecProcedure,
    ) -> Result<(), SqlError> {
        const PROC: &str = "sp_describe_undeclared_parameters";
        let args = self.procedure_arguments(PROC, p, &["@tsql", "@params"])?;
        let text = texts(&args);
        let Some(tsql) = &text[0] else {
            return Err(missing_parameter(PROC, "@tsql"));
        };
        let set = self.describe_undeclared_parameters(tsql, text[1].as_deref().unwrap_or(""))?;
        self.out.row_set(&set);
        Ok(())
    }

    /// `sp_describe_first_result_set @tsql [, @params [, @browse_information_mode]]` (see
    /// `first_result_set.rs`).
    pub(super) fn sp_describe_first_result_set(&mut self, p: &ExecProcedure) -> Step<()> {
        const PROC: &str = "sp_describe_first_result_set";
        let args =
            self.procedure_arguments(PROC, p, &["@tsql", "@params", "@browse_information_mode"])?;
        let text = texts(&args);
        let Some(tsql) = &text[0] else {
            return Err(missing_parameter(PROC, "@tsql").into());
        };
        let browse = args.get(2).cloned().flatten().unwrap_or(Value::Null);
        let set = self.describe_first_result_set(tsql, text[1].as_deref(), &browse)?;
        self.out.row_set(&set);
        Ok(())
    }

    /// `sp_who`'s argument: a session id, `'active'` (running sessions only), or a login.
    fn sp_who_filter(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        Ok(match self.first_argument(p)? {
            None => String::new(),
            Some(v) => match integer(&v) {
                Some(spid) => format!(" WHERE s.session_id = {spid}"),
                None => {
                    let text = scalar::to_text(&v);
                    if text.eq_ignore_ascii_case("active") {
                        " WHERE r.session_id IS NOT NULL".to_string()
                    } else {
                        format!(" WHERE s.login_name = {}", quoted(&text))
                    }
                }
            },
        })
    }

    /// The first argument's value; `None` when there is none or it is NULL or DEFAULT.
    fn first_argument(&mut self, p: &ExecProcedure) -> Result<Option<Value>, SqlError> {
        let Some(arg) = p.arguments.first() else { return Ok(None) };
        if matches!(arg.value.kind, ExprKind::Default) {
            return Ok(None);
        }
        let v = self.value(&arg.value)?;
        Ok(if v.is_null() { None } else { Some(v) })
    }

    /// Runs `query` (a system procedure's text) as a module body of its own.
    pub(crate) fn run_system_query(&mut self, query: &str) -> Step<()> {
        let batch = self.s.parsed(query)?;
        self.s.frames.push(Frame::default());
        let r = self.module_body(&batch.statements);
        self.pop_frame();
        r.map(|_| ())
    }
}

/// A whole number given as a number or as digits in a string.
pub(super) fn integer(v: &Value) -> Option<i64> {
    match scalar::convert(v.clone(), walden_engine::types::SqlType::BigInt, None) {
        Ok(Value::BigInt(n)) => Some(n),
        _ => None,
    }
}

/// Error 15009, for an object `sp_help` or `sp_helptext` cannot find.
fn no_such_object(name: &str, database: &str) -> SqlError {
    SqlError::new(
        15009,
        format!(
            "The object '{name}' does not exist in database '{database}' or is invalid for this \
             operation."
        ),
    )
}

/// The error for an argument a procedure cannot use.
pub(super) fn bad_argument(procedure: &str, v: &Value) -> SqlError {
    SqlError::new(
        8114,
        format!("Error converting data type {} to int in {procedure}.", v.kind_name()),
    )
}
