SET NOCOUNT ON
DECLARE @i INT = 0, @s VARCHAR(100) = '', @d DECIMAL(10, 2) = 1.5
WHILE @i < 10
BEGIN
  SET @i += 1
  IF @i % 2 = 0 CONTINUE
  IF @i > 7 BREAK
  SET @s = @s + CAST(@i AS VARCHAR(10)) + ','
END
SELECT @i AS i, @s AS s, @d * 2 AS d2
SET @i -= 3
SET @i *= 2
SET @i /= 4
SELECT @i AS compound
GO
SELECT 1 + 1 AS two, '1' + '1' AS eleven, 1 + '1' AS also_two, 7 / 2 AS int_div, 7 % 3 AS modulo,
       7.0 / 2 AS dec_div, CASE WHEN 1 = 1 THEN 'yes' ELSE 'no' END AS case_when,
       COALESCE(NULL, NULL, 3) AS coalesced, ISNULL(NULL, 'x') AS isnull_x, NULLIF(1, 1) AS nullif_1
GO
SELECT LEN('abc  ') AS len, LEFT('abcdef', 2) AS l, RIGHT('abcdef', 2) AS r, SUBSTRING('abcdef', 2, 3) AS sub,
       UPPER('aBc') AS up, LOWER('aBc') AS low, LTRIM('  x') AS lt, RTRIM('x  ') + '|' AS rt, TRIM('  y  ') AS tr,
       REPLACE('Hello', 'L', 'x') AS rep, CHARINDEX('c', 'abcabc') AS ci, CONCAT('a', NULL, 1) AS cc
GO
SELECT ABS(-5) AS a, ROUND(2.567, 2) AS r, FLOOR(2.7) AS f, CEILING(2.1) AS c,
       CAST(12.5 AS INT) AS cast_int, CONVERT(VARCHAR(10), 12345) AS conv, TRY_CAST('x' AS INT) AS try_cast
GO
SELECT DATEADD(day, 1, CAST('2024-02-28' AS DATE)) AS next_day,
       DATEDIFF(month, CAST('2024-01-31' AS DATE), CAST('2024-03-01' AS DATE)) AS months,
       DATEPART(year, CAST('2024-05-06' AS DATE)) AS y, YEAR(CAST('2024-05-06' AS DATE)) AS y2,
       MONTH(CAST('2024-05-06' AS DATE)) AS m, DAY(CAST('2024-05-06' AS DATE)) AS d
GO
IF 'abc' = 'ABC  ' PRINT 'case-insensitive, trailing spaces ignored'
IF 'abc' LIKE 'A%' PRINT 'like matches'
IF 5 BETWEEN 1 AND 10 PRINT 'between'
IF 3 IN (1, 2, 3) PRINT 'in list'
IF NULL = NULL PRINT 'wrong' ELSE PRINT 'null is not equal to null'
IF NOT EXISTS (SELECT 1 WHERE 1 = 0) PRINT 'not exists'
GO
DECLARE @r INT
EXEC ('SELECT 42 AS dynamic')
GO
SELECT @@SPID - @@SPID AS zero, DB_NAME() AS db, DB_ID('master') AS master_id, SUSER_SNAME() AS login, SCHEMA_NAME() AS schema_name
GO
SELECT SERVERPROPERTY('ProductVersion') AS version, SERVERPROPERTY('productmajorversion') AS major, SERVERPROPERTY('EngineEdition') AS engine_edition, SERVERPROPERTY('Edition') AS edition, SERVERPROPERTY('Collation') AS collation, SERVERPROPERTY('NoSuchProperty') AS unknown, SERVERPROPERTY(NULL) AS null_name
GO
SELECT value FROM GENERATE_SERIES(1, 5) WHERE value % 2 = 1
GO
WAITFOR DELAY '00:00:00.050'
DECLARE @delay VARCHAR(12) = '00:00:00.02', @seconds INT = 0, @none DATETIME
WAITFOR DELAY @delay
WAITFOR DELAY @seconds
WAITFOR DELAY @none
PRINT 'waited'
GO
PRINT 'runs: the time string is checked when WAITFOR runs'
WAITFOR DELAY '2024-01-01 00:00:01'
PRINT 'not reached: error 148 ends the batch'
GO
DECLARE @t NVARCHAR(20) = N'soon'
WAITFOR TIME @t
GO
WAITFOR DELAY 1
GO
