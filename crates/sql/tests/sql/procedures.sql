CREATE TABLE dbo.log_t (id INT IDENTITY PRIMARY KEY, msg VARCHAR(50))
GO
CREATE PROCEDURE dbo.add_msg @msg VARCHAR(50), @times INT = 1, @last INT OUTPUT
AS
BEGIN
  SET NOCOUNT ON
  DECLARE @i INT = 0
  WHILE @i < @times
  BEGIN
    INSERT INTO dbo.log_t (msg) VALUES (@msg)
    SET @i += 1
  END
  SET @last = SCOPE_IDENTITY()
  RETURN @i
END
GO
DECLARE @rc INT, @last INT
EXEC @rc = dbo.add_msg 'hello', 2, @last OUTPUT
SELECT @rc AS rc, @last AS last
EXEC dbo.add_msg @msg = 'named', @last = @last OUTPUT
SELECT @last AS last_named
EXECUTE add_msg 'defaults', DEFAULT, @last OUTPUT
SELECT COUNT(*) AS n FROM dbo.log_t
GO
CREATE PROCEDURE p_no_parens @a INT, @b INT AS SELECT @a + @b AS total
GO
EXEC p_no_parens 2, 3
EXEC p_no_parens 1
EXEC p_no_parens @a = 1, @c = 2
GO
CREATE OR ALTER PROCEDURE p_no_parens @a INT AS SELECT @a * 10 AS times_ten
GO
p_no_parens 4
GO
CREATE PROCEDURE p_temp AS
BEGIN
  CREATE TABLE #inner (x INT)
  INSERT INTO #inner VALUES (1)
  SELECT COUNT(*) AS inner_rows FROM #inner
  SELECT COUNT(*) AS outer_rows FROM #outer
END
GO
CREATE TABLE #outer (y INT)
INSERT INTO #outer VALUES (1), (2)
EXEC p_temp
SELECT * FROM #inner
GO
SELECT name, type, type_desc FROM sys.objects WHERE name IN ('add_msg', 'p_no_parens', 'log_t') ORDER BY name
SELECT name FROM sys.procedures ORDER BY name
DROP PROCEDURE p_temp
DROP PROCEDURE IF EXISTS p_temp
GO
-- sp_executesql from T-SQL: parameters by position and by name, OUTPUT, and a scope of its own.
DECLARE @n INT, @s NVARCHAR(20)
EXEC sp_executesql N'SELECT @a + @b AS total', N'@a INT, @b INT', 2, 3
EXEC sp_executesql @stmt = N'SET @out = @x * 10; SET @t = N''ten''', @params = N'@x INT, @out INT OUTPUT, @t NVARCHAR(20) OUTPUT', @x = 4, @out = @n OUTPUT, @t = @s OUTPUT
SELECT @n AS n, @s AS s
EXEC sp_executesql N'SELECT 1 AS no_params'
EXEC sp_executesql N'SELECT @n'
EXEC sp_executesql N'SELECT @a', N'@a INT'
GO
-- INSERT ... EXEC: every result set of a procedure, dynamic SQL or a DBCC command goes into
-- the table (its messages still reach the client); a set that does not fit is error 213; the
-- rows roll back with the transaction.
CREATE PROCEDURE dbo.two_sets AS BEGIN SELECT 1 AS a, 'x' AS b; PRINT 'between'; SELECT 2, 'y'; END
GO
CREATE TABLE dbo.ie (a INT, b VARCHAR(10))
INSERT dbo.ie EXEC dbo.two_sets
INSERT dbo.ie (b, a) EXEC sp_executesql N'SELECT @p, 3', N'@p varchar(10)', @p = 'z'
SELECT a, b FROM dbo.ie ORDER BY a
CREATE TABLE #logspace (dbname SYSNAME, size_mb REAL, used_pct REAL, status INT)
INSERT INTO #logspace EXEC ('DBCC SQLPERF(LOGSPACE) WITH NO_INFOMSGS')
SELECT COUNT(*) AS logs FROM #logspace WHERE dbname = DB_NAME()
GO
INSERT dbo.ie EXEC ('SELECT 1')
GO
BEGIN TRAN
INSERT dbo.ie EXEC ('SELECT 9, ''r''')
ROLLBACK
SELECT COUNT(*) AS after_rollback FROM dbo.ie
GO
-- INSERT ... EXEC cannot be nested (8164): the inner one fails as a statement, the procedure
-- goes on, and its later result set still goes into the outer INSERT's table.
CREATE PROCEDURE dbo.fills AS BEGIN INSERT dbo.ie EXEC dbo.two_sets; SELECT 5, 'n' END
GO
INSERT dbo.ie EXEC dbo.fills
GO
SELECT COUNT(*) AS rows_now FROM dbo.ie
GO
-- The target is checked before the procedure runs: nothing it would do happens.
CREATE TABLE dbo.side (x INT)
GO
INSERT nosuch EXEC ('INSERT dbo.side VALUES (1); SELECT 1')
GO
SELECT COUNT(*) AS side_rows FROM dbo.side
GO
-- A procedure's table variable of the name its caller's has is its own: the caller's table is
-- hidden for the call, not changed.
CREATE PROCEDURE dbo.inner_t AS BEGIN DECLARE @t TABLE (x INT); INSERT @t VALUES (5); SELECT x FROM @t END
GO
DECLARE @t TABLE (x INT)
INSERT @t VALUES (1)
EXEC dbo.inner_t
SELECT x AS outer_x FROM @t
GO
DROP PROCEDURE dbo.inner_t
GO
-- @@PROCID: the running procedure's, trigger's or function's object id, 0 in a batch (what
-- maintenance procedures pass to OBJECT_NAME and OBJECT_SCHEMA_NAME).
CREATE PROCEDURE dbo.who_am_i AS
SELECT OBJECT_SCHEMA_NAME(@@PROCID) AS s, OBJECT_NAME(@@PROCID) AS n,
       CASE WHEN @@PROCID = OBJECT_ID('dbo.who_am_i') THEN 1 ELSE 0 END AS same
GO
EXEC dbo.who_am_i
GO
CREATE FUNCTION dbo.fn_procid () RETURNS INT AS BEGIN RETURN @@PROCID END
GO
SELECT @@PROCID AS batch, CASE WHEN dbo.fn_procid() = OBJECT_ID('dbo.fn_procid') THEN 1 ELSE 0 END AS fn
GO
-- A request running a procedure has the procedure's sql_handle: dm_exec_sql_text gives its
-- definition (sp_WhoIsActive reads its own help text this way); a batch's, the batch.
CREATE PROCEDURE dbo.my_text AS
SELECT t.objectid - OBJECT_ID('dbo.my_text') AS same_object, t.dbid - DB_ID() AS same_db,
       LEFT(t.text, 29) AS head
FROM sys.dm_exec_requests r CROSS APPLY sys.dm_exec_sql_text(r.sql_handle) t
WHERE r.session_id = @@SPID
GO
EXEC dbo.my_text
GO
SELECT t.objectid, LEFT(t.text, 9) AS head
FROM sys.dm_exec_requests r CROSS APPLY sys.dm_exec_sql_text(r.sql_handle) t
WHERE r.session_id = @@SPID
GO
-- db.sys.sp_executesql runs its statement in that database, then the caller's comes back.
CREATE DATABASE other_db
GO
EXEC other_db.sys.sp_executesql N'SELECT DB_NAME() AS inside, COUNT(*) AS tables FROM sys.tables'
SELECT DB_NAME() AS after_it
EXEC [other_db].[sys].[sp_executesql] N'CREATE VIEW dbo.v_here AS SELECT 1 AS one'
SELECT (SELECT COUNT(*) FROM other_db.sys.views WHERE name = 'v_here') AS in_other,
       (SELECT COUNT(*) FROM sys.views WHERE name = 'v_here') AS in_caller
GO
EXEC no_such_db.sys.sp_executesql N'SELECT 1'
GO
DROP DATABASE other_db
GO
-- A procedure may create a temporary table of a name its caller holds (sp_BlitzCache
-- @SortOrder = 'all' runs itself so): its own hides the caller's until it returns.
CREATE PROCEDURE dbo.shadow_inner AS
BEGIN
    CREATE TABLE #shadowed (x INT)
    INSERT #shadowed VALUES (2)
    SELECT x AS inner_x FROM #shadowed
END
GO
CREATE PROCEDURE dbo.shadow_outer AS
BEGIN
    CREATE TABLE #shadowed (x INT)
    INSERT #shadowed VALUES (1)
    EXEC dbo.shadow_inner
    SELECT x AS outer_x FROM #shadowed
END
GO
EXEC dbo.shadow_outer
CREATE TABLE #shadowed (y INT)
EXEC dbo.shadow_outer
SELECT y FROM #shadowed
-- Twice in one scope is still 2714.
CREATE TABLE #shadowed (z INT)
GO
