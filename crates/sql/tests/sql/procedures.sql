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
