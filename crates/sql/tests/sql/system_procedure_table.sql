-- One EXEC of each kind of entry in the table of system procedures (procedure::dispatch),
-- with the return status each leaves: a query over the system views, a procedure that
-- commits what it changed, one that keeps the session's state, one with a status of its
-- own, sp_executesql, an Agent procedure, a name that is not there.
DECLARE @r INT = -1
EXEC @r = sp_databases
SELECT @r AS query_status
SET @r = -1
EXEC @r = sp_helptext 'sys.objects'
SELECT @r AS refused_status
SET @r = -1
EXEC @r = sp_set_session_context N'k', 1
SELECT @r AS session_status, SESSION_CONTEXT(N'k') AS k
SET @r = -1
EXEC @r = sp_flush_log
SELECT @r AS flush_status
SET @r = -1
EXEC @r = master.sys.xp_regread 'HKEY_LOCAL_MACHINE', 'Software\X', 'V'
SELECT @r AS regread_status
SET @r = -1
EXEC @r = xp_fixeddrives
SELECT @r AS fixeddrives_status
SET @r = -1
EXEC @r = sp_executesql N'SELECT 1 AS one'
SELECT @r AS executesql_status
SET @r = -1
EXEC @r = sp_add_job @job_name = 'nightly'
SELECT @r AS agent_status
SET @r = -1
EXEC @r = sp_no_such_procedure
SELECT @r AS unknown_status
EXEC SP_WHO2 'no such login'
EXEC Sp_Tables @table_name = 'none'
GO
-- What sp_rename changes commits after it (an EXEC is compound), so a later failing
-- statement of the batch does not take it back; sp_getapplock's status is its own.
CREATE TABLE renamed_before (a INT)
GO
DECLARE @r INT
EXEC @r = sp_rename 'renamed_before', 'renamed_after'
SELECT @r AS rename_status
EXEC @r = sp_getapplock 'x', 'Shared', 'Session'
SELECT @r AS applock_status
EXEC @r = sp_releaseapplock 'x', 'Session'
SELECT @r AS release_status
SELECT 1 / 0 AS fails
GO
SELECT name FROM sys.tables WHERE name LIKE 'renamed%'
