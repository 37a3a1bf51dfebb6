-- Server-level views and system procedures: sys.dm_os_sys_info, the principals,
-- sys.configurations and sp_configure, sys.sysprocesses, DBCC USEROPTIONS, and the catalog
-- procedures ODBC and JDBC drivers call (sp_databases, sp_tables, sp_columns).
-- Volatile values (times, memory, CPUs, session ids) are checked as predicates.
CREATE DATABASE srv
GO
USE srv
CREATE TABLE dbo.item (id INT IDENTITY(1, 1) PRIMARY KEY, name NVARCHAR(40) NOT NULL,
    price DECIMAL(9, 2) NULL DEFAULT 0, code CHAR(4), note VARCHAR(MAX), added DATETIME,
    day DATE, at TIME(3), stamp DATETIME2, ok BIT NOT NULL, big BIGINT, ratio FLOAT,
    guid UNIQUEIDENTIFIER, blob VARBINARY(16))
CREATE TABLE dbo.item_tag (item_id INT NOT NULL, tag VARCHAR(20) NOT NULL)
EXEC ('CREATE SCHEMA sales')
CREATE TABLE sales.orders (id INT NOT NULL)
GO
-- sys.dm_os_sys_info: one row; the machine's values are plausible, the instance started
-- before now and after the machine, and the fixed descriptions are SQL Server's.
SELECT COUNT(*) AS row_count FROM sys.dm_os_sys_info
SELECT CASE WHEN cpu_count > 0 AND hyperthread_ratio > 0 AND scheduler_count = cpu_count
            AND socket_count > 0 AND cores_per_socket > 0 AND numa_node_count > 0 THEN 'ok' END AS cpus,
       CASE WHEN physical_memory_kb > 0 AND committed_target_kb > 0
            AND committed_kb BETWEEN 0 AND committed_target_kb
            AND visible_target_kb = committed_target_kb THEN 'ok' END AS memory,
       CASE WHEN sqlserver_start_time <= GETDATE() AND sqlserver_start_time_ms_ticks <= ms_ticks
            AND DATEDIFF(minute, sqlserver_start_time, GETDATE()) < 10 THEN 'ok' END AS started,
       CASE WHEN max_workers_count >= 512 THEN 'ok' END AS workers,
       affinity_type_desc, time_source_desc, softnuma_configuration_desc, sql_memory_model_desc,
       CASE WHEN virtual_machine_type_desc IN ('NONE', 'HYPERVISOR') THEN 'ok' END AS vm
FROM sys.dm_os_sys_info
GO
-- Principals: the sa login and the public and sysadmin roles; the fixed database principals.
SELECT name, principal_id, sid, type, type_desc, is_disabled, default_database_name,
       default_language_name, owning_principal_id, is_fixed_role
FROM sys.server_principals ORDER BY principal_id
SELECT name, principal_id, type, type_desc, default_schema_name, owning_principal_id, sid,
       is_fixed_role, authentication_type_desc
FROM sys.database_principals ORDER BY principal_id
SELECT name, principal_id, type_desc, is_policy_checked, is_expiration_checked, password_hash
FROM sys.sql_logins
SELECT CASE WHEN create_date <= GETDATE() THEN 'ok' END AS created FROM sys.server_principals
WHERE name = 'sa'
GO
-- sys.configurations: the fixed list, with SQL Server's ids and flags.
SELECT configuration_id, name, value, minimum, maximum, value_in_use, is_dynamic, is_advanced
FROM sys.configurations WHERE name <> 'max server memory (MB)' ORDER BY configuration_id
SELECT description FROM sys.configurations WHERE configuration_id IN (1539, 1581) ORDER BY 1
-- max server memory is max_server_memory_mb, the one buffer pool's size: a quarter of the
-- machine's memory by default.
SELECT CASE WHEN value = value_in_use AND value >= 128 THEN 'ok' END AS max_memory
FROM sys.configurations WHERE name = 'max server memory (MB)'
GO
-- sp_configure: the options that are not advanced; one by name, exact or partial.
EXEC sp_configure
EXEC sp_configure 'remote access'
EXEC sp_configure @configname = 'show advanced'
EXEC sp_configure 'o'
GO
-- An advanced option is hidden while 'show advanced options' is 0, as in SQL Server.
EXEC sp_configure 'max server memory (MB)'
GO
EXEC sp_configure 'no such option'
GO
-- 'show advanced options' is the one option a client sets (server-wide, at once): it shows
-- the advanced options, as in SQL Server. The others are read-only.
EXEC sp_configure 'show advanced options', 1
RECONFIGURE
EXEC sp_configure 'max degree of parallelism'
EXEC sp_configure 'show advanced options', 0
GO
EXEC sp_configure 'c', 1
GO
EXEC sp_configure @configvalue = 1, @configname = 'clr enabled'
GO
EXEC sp_configure @nosuch = 1
GO
-- RECONFIGURE installs nothing (nothing is pending) and succeeds, as scripts expect after
-- sp_configure.
RECONFIGURE
RECONFIGURE WITH OVERRIDE
SELECT 'ok' AS after_reconfigure
GO
-- sys.sysprocesses, with and without the schema; this session is running, its own command
-- is SELECT, and its columns are padded as SQL Server's NCHAR columns.
SELECT CASE WHEN spid = @@SPID THEN 'self' END AS spid, ecid, blocked, RTRIM(status) AS status, RTRIM(cmd) AS cmd, RTRIM(loginame) AS loginame,
       DB_NAME(dbid) AS db, open_tran, RTRIM(lastwaittype) AS lastwaittype, waittime,
       LEN(program_name) AS program_len, DATALENGTH(hostname) AS hostname_bytes,
       DATALENGTH(sid) AS sid_bytes, RTRIM(net_library) AS net_library
FROM sys.sysprocesses WHERE spid = @@SPID
SELECT COUNT(*) AS bare FROM sysprocesses WHERE spid = @@SPID
SELECT COUNT(*) AS dbo FROM master..sysprocesses WHERE spid = @@SPID
SELECT CASE WHEN login_time <= last_batch AND last_batch <= GETDATE() THEN 'ok' END AS times
FROM master.dbo.sysprocesses WHERE spid = @@SPID
GO
-- DBCC USEROPTIONS: SQL Server's defaults, then the session's own settings.
DBCC USEROPTIONS
GO
SET NOCOUNT ON
SET XACT_ABORT ON
SET LOCK_TIMEOUT 1500
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE
SET TEXTSIZE 64512
DBCC USEROPTIONS WITH NO_INFOMSGS
SET NOCOUNT OFF
SET XACT_ABORT OFF
SET LOCK_TIMEOUT -1
SET TRANSACTION ISOLATION LEVEL READ COMMITTED
SET TEXTSIZE 0
GO
DBCC USEROPTIONS (1)
GO
-- The SET options in sys.dm_exec_sessions: TEXTSIZE as set (published when the batch ends),
-- the others as Walden runs.
SET TEXTSIZE 65536
GO
SELECT text_size, language, date_format, date_first, quoted_identifier, arithabort,
    ansi_null_dflt_on, ansi_defaults, ansi_warnings, ansi_padding, ansi_nulls,
    concat_null_yields_null, transaction_isolation_level, lock_timeout, deadlock_priority
FROM sys.dm_exec_sessions WHERE session_id = @@SPID
SET TEXTSIZE 0
GO
-- sp_databases: every database, with a size in KB.
SELECT name FROM sys.databases ORDER BY name
CREATE TABLE #dbs (DATABASE_NAME SYSNAME, DATABASE_SIZE INT, REMARKS VARCHAR(254))
INSERT INTO #dbs EXEC sp_databases
SELECT DATABASE_NAME, CASE WHEN DATABASE_SIZE > 0 THEN 'ok' END AS size, REMARKS FROM #dbs
DROP TABLE #dbs
GO
-- sp_tables: all tables, by pattern, by owner, by type list, and without patterns.
EXEC sp_tables
EXEC sp_tables 'item%'
EXEC sp_tables @table_name = 'item_tag'
EXEC sp_tables @table_owner = 'sales'
EXEC sp_tables 'item', 'dbo', 'srv', '''TABLE'',''VIEW'''
EXEC sp_tables @table_type = '''VIEW'''
EXEC sp_tables 'item_', @fUsePattern = 0
GO
-- ODBC's enumerations: databases, schemas, table types.
EXEC sp_tables '', '', '%'
EXEC sp_tables @table_name = '', @table_owner = '%', @table_qualifier = ''
EXEC sp_tables '', '', '', '%'
GO
EXEC sp_tables 'item', 'dbo', 'master'
GO
EXEC sp_tables 'item', @table_owner = 'dbo', 'srv'
GO
EXEC sp_tables 'a', 'b', 'c', 'd', 1, 'too many'
GO
-- sp_columns: SQL Server's 19 columns; ODBC 2 codes by default, ODBC 3 on request.
EXEC sp_columns 'item'
GO
EXEC sp_columns @table_name = 'item', @column_name = '%a%', @ODBCVer = 3
EXEC sp_columns 'item_tag', 'dbo', 'srv', 'tag'
EXEC sp_columns 'item%', @column_name = 'id'
EXEC sp_columns 'orders'
EXEC sp_columns 'nosuch'
GO
EXEC sp_columns
GO
EXEC sp_columns 'item', NULL, 'master'
GO
-- sp_columns_100 (mssql-jdbc's getColumns): @NameScope before @ODBCVer, @fUsePattern after,
-- and the ten columns of SQL Server 2008 before SS_DATA_TYPE; into the table variable the
-- driver declares, whose column PRECISION is named as SQL Server allows.
DECLARE @c TABLE (TABLE_QUALIFIER sysname, TABLE_OWNER sysname, TABLE_NAME sysname,
    COLUMN_NAME sysname, DATA_TYPE smallint, TYPE_NAME sysname, PRECISION int, LENGTH int,
    SCALE smallint, RADIX smallint, NULLABLE smallint, REMARKS varchar(254),
    COLUMN_DEF nvarchar(4000), SQL_DATA_TYPE smallint, SQL_DATETIME_SUB smallint,
    CHAR_OCTET_LENGTH int, ORDINAL_POSITION int, IS_NULLABLE varchar(254),
    SS_IS_SPARSE smallint, SS_IS_COLUMN_SET smallint, SS_IS_COMPUTED smallint,
    SS_IS_IDENTITY smallint, SS_UDT_CATALOG_NAME nvarchar(128), SS_UDT_SCHEMA_NAME nvarchar(128),
    SS_UDT_ASSEMBLY_TYPE_NAME nvarchar(max), SS_XML_SCHEMACOLLECTION_CATALOG_NAME nvarchar(128),
    SS_XML_SCHEMACOLLECTION_SCHEMA_NAME nvarchar(128), SS_XML_SCHEMACOLLECTION_NAME nvarchar(128),
    SS_DATA_TYPE tinyint)
INSERT INTO @c EXEC sp_columns_100 'item', 'dbo', NULL, '%', 2, 3
SELECT COLUMN_NAME, DATA_TYPE, TYPE_NAME, PRECISION, SS_IS_COMPUTED, SS_IS_IDENTITY,
    SS_DATA_TYPE FROM @c ORDER BY ORDINAL_POSITION
GO
EXEC sp_columns_100 @table_name = 'item%', @column_name = 'id', @fUsePattern = 0
EXEC sp_columns_100 @table_name = 'item', @column_name = 'id', @fUsePattern = 0
GO
EXEC sp_columns @table = 'item'
GO
-- The running batch's text through its sql_handle, and the last one through the input buffer.
SELECT r.session_id - @@SPID AS this_session, t.text, t.encrypted
FROM sys.dm_exec_requests r CROSS APPLY sys.dm_exec_sql_text(r.sql_handle) t
WHERE r.session_id = @@SPID
GO
SELECT event_type, parameters, event_info FROM sys.dm_exec_input_buffer(@@SPID, NULL)
DBCC INPUTBUFFER(@@SPID) WITH NO_INFOMSGS
SELECT COUNT(*) AS no_text FROM sys.dm_exec_sql_text(NULL)
GO
DBCC INPUTBUFFER(999)
GO
-- No Service Broker: no activated tasks. The diagnostics log directory is the instance's.
SELECT COUNT(*) AS tasks FROM sys.dm_broker_activated_tasks
GO
SELECT is_enabled, CASE WHEN LEN(path) > 0 THEN 1 ELSE 0 END AS has_path FROM sys.dm_os_server_diagnostics_log_configurations
GO
-- No partitioning: no partition schemes or functions.
SELECT (SELECT COUNT(*) FROM sys.partition_schemes) AS schemes, (SELECT COUNT(*) FROM sys.partition_functions) AS functions
GO
-- The running request's task, with no tempdb pages counted.
SELECT COUNT(*) AS tasks, SUM(user_objects_alloc_page_count + internal_objects_alloc_page_count) AS pages
FROM sys.dm_db_task_space_usage WHERE session_id = @@SPID
GO
SELECT COUNT(*) AS sessions FROM sys.dm_db_session_space_usage WHERE session_id = @@SPID
GO
-- No resumable index builds; no index column is part of a columnstore's order.
SELECT (SELECT COUNT(*) FROM sys.index_resumable_operations) AS resumable,
       (SELECT COUNT(*) FROM sys.index_columns WHERE column_store_order_ordinal <> 0) AS ordered
GO
