-- Application locks in one session (two sessions: tests/sessions.rs), the session context,
-- sp_helpindex, OBJECT_SCHEMA_NAME and RADIANS / DEGREES / COT.
DECLARE @r INT
EXEC @r = sp_getapplock @Resource = 'job', @LockMode = 'Exclusive', @LockOwner = 'Session'
SELECT @r AS got, APPLOCK_MODE('public', 'job', 'Session') AS mode,
       APPLOCK_MODE('public', 'JOB', 'Session') AS other_case
SELECT resource_type, request_mode, request_status FROM sys.dm_tran_locks WHERE resource_type = 'APPLICATION'
EXEC @r = sp_releaseapplock @Resource = 'job', @LockOwner = 'Session'
SELECT @r AS released, APPLOCK_MODE('public', 'job', 'Session') AS mode
EXEC @r = sp_releaseapplock @Resource = 'job', @LockOwner = 'Session'
SELECT @r AS not_held
GO
-- A transaction's application lock needs a transaction and goes with it.
DECLARE @r INT
EXEC @r = sp_getapplock 'x', 'Shared'
SELECT @r AS outside_a_transaction
BEGIN TRAN
EXEC @r = sp_getapplock 'x', 'Update'
SELECT @r AS inside, APPLOCK_MODE('public', 'x', 'Transaction') AS mode
COMMIT
SELECT APPLOCK_MODE('public', 'x', 'Session') AS after_commit
EXEC @r = sp_getapplock 'x', 'Bogus', 'Session'
SELECT @r AS bad_mode
GO
EXEC sp_set_session_context @key = N'user_id', @value = 42
EXEC sp_set_session_context N'tenant', N'acme', 1
SELECT SESSION_CONTEXT(N'user_id') AS user_id, SESSION_CONTEXT(N'tenant') AS tenant,
       SESSION_CONTEXT(N'none') AS none
EXEC sp_set_session_context N'tenant', N'other'
GO
SELECT SESSION_CONTEXT(N'tenant') AS still
GO
CREATE TABLE dbo.indexed (id INT PRIMARY KEY, code VARCHAR(10) UNIQUE, note VARCHAR(10))
CREATE INDEX ix_note ON dbo.indexed (note, id)
CREATE TABLE dbo.bare (x INT)
GO
EXEC sp_helpindex 'dbo.indexed'
EXEC sp_helpindex 'bare'
GO
EXEC sp_helpindex 'nothing_here'
GO
SELECT OBJECT_SCHEMA_NAME(OBJECT_ID('dbo.indexed')) AS s, OBJECT_NAME(OBJECT_ID('dbo.indexed')) AS n,
       RADIANS(180.0) AS r, DEGREES(PI()) AS d, ROUND(COT(1.0), 6) AS c
DROP TABLE dbo.indexed, dbo.bare
GO
-- What JDBC asks to call a procedure's parameters by name (sp_sproc_columns).
CREATE PROCEDURE dbo.add_one @a INT, @b NVARCHAR(20) = N'x', @c DECIMAL(9,2) OUTPUT AS SET @c = @a
GO
EXEC sp_sproc_columns @procedure_name = 'add_one', @ODBCVer = 3
EXEC sp_sproc_columns 'add_one', 'dbo', NULL, '@c'
EXEC sp_sproc_columns 'nothing'
DROP PROCEDURE dbo.add_one
GO
-- sys.parameters: procedures' and functions' parameters (a scalar function's return value
-- as parameter 0).
CREATE PROCEDURE dbo.p_params @a INT, @b NVARCHAR(20) = N'x', @c DECIMAL(9,2) OUTPUT AS SET @c = @a
GO
CREATE FUNCTION dbo.f_params(@x INT) RETURNS BIGINT AS BEGIN RETURN @x END
GO
SELECT OBJECT_NAME(p.object_id) AS module, p.name, p.parameter_id, TYPE_NAME(p.user_type_id) AS type,
       p.max_length, p.precision, p.scale, p.is_output, p.has_default_value
FROM sys.parameters AS p WHERE OBJECT_NAME(p.object_id) IN ('p_params', 'f_params')
ORDER BY module, p.parameter_id
DROP PROCEDURE dbo.p_params
DROP FUNCTION dbo.f_params
GO
-- What ODBC's SQLStatistics and SQLProcedures (JDBC's getIndexInfo and getProcedures) call.
CREATE TABLE dbo.stat_t (id INT PRIMARY KEY, code VARCHAR(10) UNIQUE, a INT, b INT)
CREATE INDEX ix_ab ON dbo.stat_t (a, b)
INSERT stat_t VALUES (1, 'x', 1, 1), (2, 'y', 2, 2)
GO
CREATE PROCEDURE dbo.listed_proc AS SELECT 1
GO
EXEC sp_statistics @table_name = 'stat_t'
EXEC sp_statistics_100 'stat_t', 'dbo', NULL, '%', 'Y'
EXEC sp_statistics 'no_such_table'
EXEC sp_stored_procedures 'listed%'
EXEC sp_special_columns 'stat_t'
EXEC sp_special_columns_100 @table_name = 'stat_t', @col_type = 'V', @ODBCVer = 3
EXEC sp_datatype_info 93, @ODBCVer = 3
EXEC sp_datatype_info -155
DROP PROCEDURE dbo.listed_proc
DROP TABLE dbo.stat_t
