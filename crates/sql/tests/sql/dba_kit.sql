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
CROSS APPLY sys.dm_exec_plan_attributes(qs.plan_handle) AS pa WHERE pa.attribute = N'dbid'
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
SELECT COUNT(*) AS query_stats FROM sys.dm_exec_query_stats
SELECT TOP 0 * FROM sys.dm_server_audit_status
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
