-- A DECLARE inside a loop declares its variable once: met again, it keeps the variable (a
-- table variable keeps its rows), and only its "= value" runs again, as in SQL Server.
DECLARE @i int = 0;
WHILE @i < 3
BEGIN
  DECLARE @kept int;
  DECLARE @reset int = 100;
  DECLARE @t TABLE (n int);
  SET @kept = ISNULL(@kept, 0) + 10;
  SET @reset += @i;
  INSERT @t VALUES (@i);
  SET @i += 1;
END
SELECT @kept AS kept, @reset AS reset, (SELECT COUNT(*) FROM @t) AS rows_in_t;
GO
-- The usual cursor loop, with its working variables declared inside it.
CREATE TABLE dbo.names (id int PRIMARY KEY, name varchar(20));
INSERT dbo.names VALUES (1, 'ada'), (2, 'grace'), (3, 'edsger');
DECLARE @id int;
DECLARE c CURSOR LOCAL FAST_FORWARD FOR SELECT id FROM dbo.names ORDER BY id;
OPEN c;
FETCH NEXT FROM c INTO @id;
WHILE @@FETCH_STATUS = 0
BEGIN
  DECLARE @name varchar(20) = (SELECT name FROM dbo.names WHERE id = @id);
  DECLARE @line varchar(40);
  SET @line = CONCAT(@id, ': ', UPPER(@name));
  PRINT @line;
  FETCH NEXT FROM c INTO @id;
END
CLOSE c;
DEALLOCATE c;
GO
-- In a procedure, each call has its own variables.
CREATE PROCEDURE dbo.count_up @n int AS
BEGIN
  DECLARE @k int = 0;
  WHILE @k < @n
  BEGIN
    DECLARE @sum int;
    SET @sum = ISNULL(@sum, 0) + @k;
    SET @k += 1;
  END
  SELECT @sum AS total;
END
GO
EXEC dbo.count_up 4;
EXEC dbo.count_up 3;
GO
-- Variables are declared when the batch is compiled: one whose DECLARE is in a branch not
-- taken exists (NULL, without its "= value") after it.
IF 1 = 0
BEGIN
  DECLARE @late int = 7;
END
SET @late = ISNULL(@late, 0) + 5;
SELECT @late AS late;
GO
-- Two DECLAREs of one name are a compile error: nothing of the batch runs.
SELECT 'not run' AS never;
DECLARE @a int;
DECLARE @a int;
GO
-- So is a DECLARE of a parameter's name, found when the procedure is created.
CREATE PROCEDURE dbo.shadow @x int AS
BEGIN
  DECLARE @x int;
  SELECT @x;
END
GO
SELECT OBJECT_ID('dbo.shadow') AS not_created;
GO
DROP PROCEDURE dbo.count_up;
DROP TABLE dbo.names;
GO
-- UPDATE and DELETE through a table variable's alias in FROM, as maintenance scripts write.
DECLARE @dbs TABLE (id INT IDENTITY, name SYSNAME, selected BIT DEFAULT 0)
DECLARE @wanted TABLE (pattern SYSNAME)
INSERT @dbs (name) VALUES ('master'), ('shop'), ('shop_archive'), ('tempdb')
INSERT @wanted VALUES ('shop%')
UPDATE tmp SET tmp.selected = 1 FROM @dbs tmp JOIN @wanted w ON tmp.name LIKE w.pattern
UPDATE tmp SET selected = CASE WHEN EXISTS (SELECT * FROM @wanted WHERE tmp.name = 'tempdb') THEN 1 ELSE selected END
FROM @dbs tmp
DELETE d FROM @dbs d WHERE d.name = 'master'
SELECT id, name, selected, PARSENAME(QUOTENAME(name) + '.dbo.t', 3) AS db FROM @dbs ORDER BY id
GO
-- @@ROWCOUNT after statements that read no table: a simple assignment counts one row;
-- PRINT and a transaction statement none; a SET option leaves the count before it.
DECLARE @v INT, @r1 INT, @r2 INT, @r3 INT, @r4 INT;
SELECT TOP 0 1 AS nothing;
SET @v = 5;
SET @r1 = @@ROWCOUNT;
SELECT 1 AS a UNION ALL SELECT 2;
PRINT 'x';
SET @r2 = @@ROWCOUNT;
SELECT 1 AS a UNION ALL SELECT 2;
SET NOCOUNT ON;
SET @r3 = @@ROWCOUNT;
SELECT 1 AS a UNION ALL SELECT 2;
BEGIN TRAN; COMMIT;
SET @r4 = @@ROWCOUNT;
SET NOCOUNT OFF;
SELECT @r1 AS after_set_variable, @r2 AS after_print, @r3 AS after_set_option, @r4 AS after_transaction;
GO
