-- What the First Responder Kit (sp_Blitz, sp_BlitzFirst, sp_BlitzIndex, sp_BlitzCache,
-- sp_BlitzWho, sp_BlitzLock) needs, one feature at a time.
CREATE TABLE t (k INT PRIMARY KEY, v NVARCHAR(20), doc XML)
INSERT t VALUES (1, 'a', '<r xmlns="urn:x"><i>one</i></r>'), (2, 'b', '<r xmlns="urn:x"><i>two</i></r>')
GO
-- WITH XMLNAMESPACES before INSERT, UPDATE and DELETE: the prefixes reach their expressions.
CREATE TABLE #out (k INT, i NVARCHAR(20))
;WITH XMLNAMESPACES ('urn:x' AS p)
INSERT #out SELECT k, doc.value('(/p:r/p:i)[1]', 'nvarchar(20)') FROM t
;WITH XMLNAMESPACES ('urn:x' AS p)
UPDATE t SET v = doc.value('(/p:r/p:i)[1]', 'nvarchar(20)') WHERE doc.exist('/p:r/p:i[. = "two"]') = 1
;WITH XMLNAMESPACES (DEFAULT 'urn:x'), c AS (SELECT k FROM t WHERE doc.exist('/r/i[. = "one"]') = 1)
DELETE #out WHERE k IN (SELECT k FROM c)
SELECT * FROM #out
SELECT k, v FROM t ORDER BY k
GO
-- DROP SYNONYM: Walden has no synonyms, so none is found.
DROP SYNONYM IF EXISTS dbo.nothing
DROP SYNONYM dbo.nothing
GO
-- UPDATE STATISTICS ... WITH ROWCOUNT, PAGECOUNT is read and ignored.
UPDATE STATISTICS t WITH ROWCOUNT = 9223372036854775807, PAGECOUNT = 9223372036854775807
GO
-- UPDATE and DELETE whose FROM names the target under an alias, or not at all.
UPDATE t SET v = 'x' FROM t AS a WHERE a.k = 1
UPDATE t SET v = y.v + '!' FROM (SELECT k, v FROM t) AS y WHERE t.k = y.k AND y.k = 2
SELECT k, v FROM t ORDER BY k
UPDATE t SET v = 'z' FROM t AS a JOIN t AS b ON b.k = a.k
GO
CREATE TABLE gone (k INT)
INSERT gone VALUES (1), (3)
DELETE t FROM gone WHERE gone.k = t.k
SELECT k, v FROM t
GO
-- CROSS APPLY over no rows still has the right side's columns.
SELECT pa.attribute FROM sys.dm_exec_query_stats AS qs
CROSS APPLY sys.dm_exec_plan_attributes(qs.plan_handle) AS pa WHERE pa.attribute = N'dbid' AND qs.execution_count = 0
GO
-- A USE inside EXEC (string) lasts until it ends.
EXEC ('USE tempdb; SELECT DB_NAME() AS inside')
SELECT DB_NAME() AS after_exec
GO
-- sp_MSforeachdb: each online database, ? replaced by its name.
CREATE TABLE #dbs (name SYSNAME, current_db SYSNAME)
INSERT #dbs EXEC sp_MSforeachdb N'USE [?]; SELECT ''?'', DB_NAME()'
SELECT * FROM #dbs ORDER BY name
EXEC sp_MSforeachdb @command1 = N'SELECT 1', @whereand = N'AND 1 = 1'
EXEC sp_MSforeachdb
GO
-- EXISTS does not evaluate a constant select list.
IF EXISTS (SELECT 1/0 FROM t) PRINT 'exists'
SELECT CASE WHEN EXISTS (SELECT 1/0 FROM t WHERE k = 99) THEN 'yes' ELSE 'no' END AS found
GO
-- fn_my_permissions: sa holds every permission on what exists.
SELECT COUNT(*) AS server_permissions FROM fn_my_permissions(NULL, 'SERVER')
SELECT permission_name FROM sys.fn_my_permissions(NULL, NULL) WHERE permission_name IN (N'VIEW SERVER STATE', N'CONTROL SERVER') ORDER BY 1
SELECT COUNT(*) AS database_permissions FROM fn_my_permissions(N'master', N'DATABASE') WHERE permission_name = N'SELECT'
SELECT entity_name, subentity_name, permission_name FROM fn_my_permissions(N'dbo.t', N'OBJECT') ORDER BY subentity_name, permission_name
SELECT COUNT(*) AS missing_object FROM fn_my_permissions(N'msdb.dbo.sysjobs', N'OBJECT')
SELECT * FROM fn_my_permissions(NULL)
GO
-- The schedulers are the CPUs sys.dm_os_sys_info counts.
SELECT CASE WHEN (SELECT COUNT(*) FROM sys.dm_os_schedulers WHERE status = 'VISIBLE ONLINE' AND is_online = 1)
            = (SELECT scheduler_count FROM sys.dm_os_sys_info) THEN 'same' END AS schedulers,
       CASE WHEN (SELECT SUM(current_tasks_count) FROM sys.dm_os_schedulers) >= 1 THEN 'counted' END AS this_request,
       CASE WHEN (SELECT online_scheduler_count FROM sys.dm_os_nodes) = (SELECT cpu_count FROM sys.dm_os_sys_info) THEN 'same' END AS node
SELECT CASE WHEN total_physical_memory_kb > 0 AND available_physical_memory_kb <= total_physical_memory_kb THEN 'read' END AS memory
FROM sys.dm_os_sys_memory
GO
-- System views are catalog objects: OBJECT_ID, sys.all_objects, sys.all_columns.
SELECT CASE WHEN OBJECT_ID('sys.dm_os_schedulers') < 0 THEN 'system' END AS id, OBJECT_ID('dm_os_schedulers') AS without_sys
SELECT name FROM sys.all_columns WHERE object_id = OBJECT_ID('sys.dm_os_memory_clerks') AND name = 'pages_kb'
SELECT type, type_desc, is_ms_shipped FROM sys.all_objects WHERE name IN ('database_query_store_options', 'dm_exec_sql_text') ORDER BY name
SELECT COUNT(*) AS user_objects_in_system_objects FROM sys.system_objects WHERE is_ms_shipped = 0
GO
-- DMVs of what Walden does not keep: their columns, no rows.
SELECT COUNT(*) AS operational FROM sys.dm_db_index_operational_stats(DB_ID(), NULL, NULL, NULL)
SELECT TOP 0 * FROM sys.dm_server_audit_status
-- Object-like ones start with sys.objects' columns.
SELECT TOP 0 * FROM sys.extended_procedures
SELECT TOP 0 * FROM sys.internal_tables
SELECT TOP 0 name, event_retention_mode_desc FROM sys.server_event_sessions
SELECT queue_id, wait_order FROM sys.dm_exec_query_memory_grants WHERE 1 = 0
SELECT * FROM sys.dm_db_index_operational_stats(DB_ID())
GO
-- DBCC TRACESTATUS and DBCC DBINFO.
DBCC TRACESTATUS(-1) WITH NO_INFOMSGS
DBCC TRACESTATUS(1222, -1)
DBCC DBINFO WITH TABLERESULTS, NO_INFOMSGS
GO
-- Logins and server permissions.
SELECT name, loginname, sysadmin, hasaccess FROM sys.syslogins
SELECT p.permission_name, pr.name FROM sys.server_permissions AS p JOIN sys.server_principals AS pr ON pr.principal_id = p.grantee_principal_id
EXEC sp_validatelogins
GO
-- sp_Blitz: its version check runs each kit procedure with @VersionCheckMode = 1, and
-- sp_DatabaseRestore declares a default written as a bare word, which is a string.
CREATE PROCEDURE dbo.restore_like @Execute CHAR(1) = Y, @Debug INT = 0, @VersionCheckMode BIT = 0, @VersionDate DATETIME = NULL OUTPUT
AS
BEGIN
    SELECT @VersionDate = '20260407';
    IF @VersionCheckMode = 1 RETURN;
    SELECT @Execute AS execute_flag, @Debug AS debug;
END
GO
DECLARE @d DATETIME, @rc INT
EXEC @rc = dbo.restore_like @VersionCheckMode = 1, @VersionDate = @d OUTPUT
SELECT @rc AS rc, @d AS version_date
EXEC dbo.restore_like
EXEC dbo.restore_like @Execute = N
SELECT name, has_default_value FROM sys.parameters WHERE object_id = OBJECT_ID('dbo.restore_like') AND name = '@Execute'
GO
-- sp_Blitz check 86: role members joined to each database's sysusers by uid.
SELECT u.name AS member, g.name AS role_name
FROM (SELECT memberuid = CONVERT(INT, member_principal_id), groupuid = CONVERT(INT, role_principal_id) FROM sys.database_role_members) m
INNER JOIN master.dbo.sysusers u ON m.memberuid = u.uid INNER JOIN sysusers g ON m.groupuid = g.uid
SELECT uid, name, issqluser, issqlrole, hasdbaccess FROM sys.sysusers ORDER BY uid
SELECT COUNT(*) AS msdb_users FROM msdb.dbo.sysusers WHERE name = N'dbo'
GO
-- sp_Blitz as sysadmin: the registry, the drives and Agent's fail-safe operator.
DECLARE @scheme VARCHAR(36), @mhz INT, @rc INT
EXEC xp_regread @rootkey = N'HKEY_LOCAL_MACHINE', @key = N'SOFTWARE\Policies\Microsoft\Power\PowerSettings',
    @value_name = N'ActivePowerScheme', @value = @scheme OUTPUT, @no_output = N'no_output'
EXEC @rc = master.sys.xp_regread N'HKEY_LOCAL_MACHINE', N'HARDWARE\DESCRIPTION\System\CentralProcessor\0', N'~MHz', @mhz OUTPUT
SELECT @scheme AS power_scheme, @mhz AS mhz, @rc AS rc
CREATE TABLE #Instances (Instance_Number NVARCHAR(MAX), Instance_Name NVARCHAR(MAX), Data_Field NVARCHAR(MAX))
INSERT INTO #Instances EXEC master.sys.xp_regread @rootkey = 'HKEY_LOCAL_MACHINE', @key = 'SOFTWARE\Microsoft\Microsoft SQL Server', @value_name = 'InstalledInstances'
SELECT COUNT(*) AS instances FROM #Instances
CREATE TABLE #driveInfo (drive NVARCHAR(2), available_MB DECIMAL(18, 0))
INSERT INTO #driveInfo (drive, available_MB) EXEC master..xp_fixeddrives
SELECT COUNT(*) AS drives FROM #driveInfo
CREATE TABLE #AlertInfo (FailSafeOperator NVARCHAR(255), NotificationMethod INT, ForwardingServer NVARCHAR(255),
    ForwardingSeverity INT, PagerToTemplate NVARCHAR(255), PagerCCTemplate NVARCHAR(255),
    PagerSubjectTemplate NVARCHAR(255), PagerSendSubjectOnly NVARCHAR(255), ForwardAlways INT)
INSERT INTO #AlertInfo EXEC [master].[dbo].[sp_MSgetalertinfo] @includeaddresses = 0
SELECT * FROM #AlertInfo
EXEC xp_fixeddrives 1
GO
-- sp_Blitz's AG and plan checks name these columns of views that have no rows, and of
-- the statements' counters, where Walden has no parallelism or grants.
SELECT drs.last_hardened_time, drs.last_commit_time, drs.secondary_lag_seconds FROM sys.dm_hadr_database_replica_states AS drs
SELECT TOP (1) deqs.min_reserved_threads, deqs.max_used_threads, deqs.total_dop, deqs.last_ideal_grant_kb FROM sys.dm_exec_query_stats AS deqs
GO
-- sp_BlitzLock: the system_health session is running, with its two targets, and holds no
-- deadlock report.
SELECT ses.name, ses.startup_state, CASE WHEN dxs.create_time IS NOT NULL THEN 'started' END AS state
FROM sys.server_event_sessions AS ses JOIN sys.dm_xe_sessions AS dxs ON dxs.name = ses.name
WHERE ses.name = N'system_health'
SELECT t.target_name, t.execution_count FROM sys.dm_xe_sessions AS s
JOIN sys.dm_xe_session_targets AS t ON s.address = t.event_session_address
WHERE s.name = N'system_health' ORDER BY t.target_name
SELECT CAST(t.target_data AS XML).value('(/RingBufferTarget/@eventCount)[1]', 'int') AS ring_buffer_events
FROM sys.dm_xe_session_targets AS t WHERE t.target_name = N'ring_buffer'
SELECT st.name, st.package FROM sys.server_event_session_targets AS st ORDER BY st.target_id
SELECT COUNT(*) AS deadlock_reports FROM sys.fn_xe_file_target_read_file(N'system_health*.xel', NULL, NULL, NULL) AS fx
WHERE fx.object_name = N'xml_deadlock_report'
GO
-- sp_BlitzBackups: PIVOT whose FOR names the column through the source's alias, over
-- msdb's (empty) backup history.
SELECT p.DatabaseName, p.[0], p.[-1]
FROM (SELECT b.database_name AS DatabaseName, DATEDIFF(MONTH, GETDATE(), b.backup_start_date) AS MonthsAgo,
             CONVERT(DECIMAL(18, 2), AVG(bf.file_size / 1048576.0)) AS AvgSizeMB
      FROM [msdb].dbo.backupset AS b INNER JOIN [msdb].dbo.backupfile AS bf ON b.backup_set_id = bf.backup_set_id
      GROUP BY b.database_name, DATEDIFF(MONTH, GETDATE(), b.backup_start_date)) AS bckstat
PIVOT (SUM(bckstat.AvgSizeMB) FOR bckstat.MonthsAgo IN ([0], [-1])) AS p
SELECT p.k, p.[1], p.[2]
FROM (SELECT k, k AS c, v FROM (VALUES (1, 10), (2, 20)) AS x (k, v)) AS src
PIVOT (SUM(src.v) FOR src.c IN ([1], [2])) AS p ORDER BY p.k
IF EXISTS (SELECT * FROM sys.databases WHERE name = N'msdb') PRINT 'msdb exists'
GO
-- sp_BlitzCache and sp_Blitz @CheckProcedureCache = 1 read the spill and CLR counters of the
-- plan-cache views: Walden has neither.
SELECT min_spills, max_spills, total_spills, last_num_physical_reads FROM sys.dm_exec_procedure_stats
SELECT TOP (1) total_clr_time, max_clr_time FROM sys.dm_exec_query_stats
SELECT min_spills FROM sys.dm_exec_trigger_stats
GO
-- sp_BlitzCache creates its work tables only where OBJECT_ID does not find them.
CREATE TABLE ##BlitzWork (k INT)
IF OBJECT_ID('tempdb.dbo.##BlitzWork') IS NULL CREATE TABLE ##BlitzWork (k INT)
SELECT CASE WHEN OBJECT_ID('tempdb..##BlitzWork', 'U') IS NOT NULL THEN 'found' END AS global_temp
DROP TABLE ##BlitzWork
GO
-- sp_BlitzCache @SortOrder = 'all' runs itself once per sort, WITH RECOMPILE.
CREATE PROCEDURE dbo.sorted @by NVARCHAR(10) AS SELECT @by AS sorted_by
GO
CREATE TABLE #sorts (by_what NVARCHAR(10))
INSERT #sorts EXEC dbo.sorted @by = N'cpu' WITH RECOMPILE;
EXEC dbo.sorted N'reads' WITH RECOMPILE
SELECT by_what FROM #sorts
GO
-- It reads whether a plan went parallel with max() over the plan's operators.
DECLARE @plan XML = N'<p:ShowPlanXML xmlns:p="http://schemas.microsoft.com/sqlserver/2004/07/showplan"><p:RelOp Parallel="0"/><p:RelOp Parallel="1"/></p:ShowPlanXML>'
SELECT @plan.value('declare namespace p="http://schemas.microsoft.com/sqlserver/2004/07/showplan";max(//p:RelOp/@Parallel)', 'float') AS parallel,
       @plan.value('min(//*/@Parallel)', 'float') AS least, @plan.value('avg(//*/@Parallel)', 'float') AS mean,
       @plan.value('max(//*/@Missing)', 'float') AS none
GO
-- Its statements and procedures, from the server's counters, with their texts, plans
-- (NULL: Walden keeps no plan XML) and attributes.
CREATE TABLE dbo.kept_tally (id INT PRIMARY KEY, v INT)
INSERT dbo.kept_tally VALUES (1, 10), (2, 20)
GO
CREATE PROCEDURE dbo.touch @id INT AS UPDATE dbo.kept_tally SET v = v + 1 WHERE id = @id
GO
EXEC dbo.touch 1
EXEC dbo.touch 2
SELECT v FROM dbo.kept_tally WHERE id = 2
GO
SELECT SUBSTRING(st.text, qs.statement_start_offset / 2 + 1,
           (qs.statement_end_offset - qs.statement_start_offset) / 2 + 1) AS statement_text,
       qs.execution_count, qs.total_rows, OBJECT_NAME(st.objectid) AS in_procedure,
       CONVERT(INT, pa.value) - DB_ID() AS other_db, qp.query_plan
FROM sys.dm_exec_query_stats qs
CROSS APPLY sys.dm_exec_sql_text(qs.sql_handle) st
CROSS APPLY sys.dm_exec_query_plan(qs.plan_handle) qp
CROSS APPLY sys.dm_exec_plan_attributes(qs.plan_handle) pa
WHERE pa.attribute = N'dbid' AND st.text LIKE '%kept_tally%' AND st.text NOT LIKE '%dm_exec%'
ORDER BY statement_text
SELECT OBJECT_NAME(object_id) AS procedure_name, execution_count FROM sys.dm_exec_procedure_stats
WHERE database_id = DB_ID() AND object_id = OBJECT_ID('dbo.touch')
GO
