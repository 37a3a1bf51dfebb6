-- sp_executesql by parameter name, and modules created through dynamic SQL, the way scripts
-- create them only when they are missing.
EXEC sp_executesql @statement = N'SELECT @x + 1 AS x', @params = N'@x int', @x = 41
GO
EXEC sp_executesql @stmt = N'SELECT @y AS y', @params = N'@y varchar(5)', @y = 'abc'
GO
EXEC sp_executesql N'SELECT 1 AS positional'
GO
IF OBJECT_ID(N'dbo.stub', N'P') IS NULL
    EXEC sp_executesql N'CREATE PROCEDURE dbo.stub AS RETURN 0'
GO
ALTER PROCEDURE dbo.stub @n int AS SELECT @n * 2 AS doubled
GO
EXEC dbo.stub 21
GO
IF OBJECT_ID(N'dbo.v') IS NULL
    EXEC sp_executesql @statement = N'CREATE VIEW dbo.v AS SELECT 1 AS one'
GO
EXEC (N'CREATE FUNCTION dbo.f (@a int) RETURNS int AS BEGIN RETURN @a + 1 END')
GO
SELECT one, dbo.f(one) AS two FROM dbo.v
GO
-- A statement after the CREATE in the same dynamic batch: 111, as in SQL Server.
EXEC sp_executesql N'CREATE VIEW dbo.w AS SELECT 1 AS one; SELECT 2'
GO
EXEC sp_executesql N'SELECT 1; CREATE VIEW dbo.w AS SELECT 1 AS one'
GO
EXEC sp_executesql @params = N'@x int'
GO
-- A procedure may have no statement: the stub scripts create, then ALTER.
CREATE PROCEDURE empty_body AS
GO
DECLARE @r int = -1
EXEC @r = empty_body
SELECT @r AS status
GO
IF NOT EXISTS (SELECT * FROM sys.objects WHERE object_id = OBJECT_ID(N'[dbo].[CommandExecute]') AND type in (N'P', N'PC'))
BEGIN
EXEC dbo.sp_executesql @statement = N'CREATE PROCEDURE [dbo].[CommandExecute] AS'
END
GO
ALTER PROCEDURE [dbo].[CommandExecute] @Command nvarchar(max) AS
BEGIN
  SELECT @Command AS command
END
GO
EXEC dbo.CommandExecute @Command = N'DBCC CHECKDB'
GO
-- A statement that begins with a procedure's bare name calls it, as a batch's first
-- statement does (mssql-jdbc prepares `#proc` and runs it through sp_prepexec).
CREATE PROCEDURE #bare_called @n INT = 1 AS SELECT @n AS n
GO
EXEC sp_executesql N'#bare_called'
EXEC sp_executesql N'/* a comment first */ #bare_called 2'
EXEC sp_executesql N'#bare_called @v', N'@v int', @v = 3
EXEC sp_executesql N'no_such_procedure'
GO
-- A temporary procedure runs in its caller's database: its unqualified names are the caller's.
CREATE DATABASE tempproc_db
GO
USE tempproc_db
CREATE TABLE counter (n INT)
INSERT counter VALUES (1)
GO
CREATE PROCEDURE #bump AS UPDATE counter SET n += 1; SELECT DB_NAME() AS db, n FROM counter
GO
EXEC #bump
EXEC sp_executesql N'#bump'
GO
USE master
DROP DATABASE tempproc_db
GO
