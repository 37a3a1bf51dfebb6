-- Natively compiled procedures and their BEGIN ATOMIC block: the third place, after the
-- database and the COMMIT, where SQL Server lets a transaction ask for delayed durability.
-- Walden has no In-Memory OLTP engine: MEMORY_OPTIMIZED tables are ordinary tables and
-- "natively compiled" procedures are interpreted, with SQL Server's transaction rules.
CREATE DATABASE nativedb
GO
USE nativedb
CREATE TABLE dbo.t1 (c1 INT NOT NULL PRIMARY KEY NONCLUSTERED) WITH (MEMORY_OPTIMIZED = ON)
CREATE TABLE dbo.t2 (
  id INT NOT NULL PRIMARY KEY NONCLUSTERED HASH WITH (BUCKET_COUNT = 1024),
  v NVARCHAR(20) NOT NULL,
  CONSTRAINT uq_t2_v UNIQUE NONCLUSTERED HASH (v) WITH (BUCKET_COUNT = 1024)
) WITH (MEMORY_OPTIMIZED = ON, DURABILITY = SCHEMA_AND_DATA)
GO
CREATE PROCEDURE dbo.usp_t1 @v1 BIGINT NOT NULL, @v2 BIGINT NOT NULL
WITH NATIVE_COMPILATION, SCHEMABINDING, EXECUTE AS OWNER
AS
BEGIN ATOMIC
WITH (TRANSACTION ISOLATION LEVEL = SNAPSHOT, LANGUAGE = N'us_english', DELAYED_DURABILITY = ON)
  INSERT dbo.t1 VALUES (@v1)
  INSERT dbo.t1 VALUES (@v2)
END
GO
-- Without a transaction the block is one: committed at its end, or rolled back whole.
EXEC dbo.usp_t1 1, 2
SELECT @@TRANCOUNT AS trancount_after_call
SELECT c1 FROM dbo.t1 ORDER BY c1
EXEC dbo.usp_t1 3, 4444444444444
SELECT @@TRANCOUNT AS trancount_after_failed_call
SELECT c1 FROM dbo.t1 ORDER BY c1
GO
-- Inside a transaction the block is a savepoint: a failed call undoes only its own rows.
BEGIN TRANSACTION
  EXEC dbo.usp_t1 3, 4
  SELECT @@TRANCOUNT AS trancount_inside
  BEGIN TRY
    EXEC dbo.usp_t1 5, 4444444444444
  END TRY
  BEGIN CATCH
    PRINT N'Error occurred: ' + ERROR_MESSAGE()
  END CATCH
  SELECT @@TRANCOUNT AS trancount_after_catch
  SELECT c1 FROM dbo.t1 ORDER BY c1
COMMIT
SELECT c1 FROM dbo.t1 ORDER BY c1
GO
-- A duplicate key in the block's second statement takes its first statement's row back too.
EXEC dbo.usp_t1 6, 1
SELECT COUNT(*) AS rows_with_6 FROM dbo.t1 WHERE c1 = 6
GO
EXEC dbo.usp_t1 7, NULL
GO
-- The database's setting decides with the block's DELAYED_DURABILITY, as with COMMIT WITH.
CREATE PROCEDURE dbo.put_on @id INT NOT NULL
WITH NATIVE_COMPILATION, SCHEMABINDING
AS BEGIN ATOMIC WITH (TRANSACTION ISOLATION LEVEL = SERIALIZABLE, LANGUAGE = 'english', DELAYED_DURABILITY = ON)
  INSERT dbo.t2 VALUES (@id, CONCAT(N'on ', @id))
END
GO
CREATE PROCEDURE dbo.put_off @id INT NOT NULL
WITH NATIVE_COMPILATION, SCHEMABINDING
AS BEGIN ATOMIC WITH (TRANSACTION ISOLATION LEVEL = REPEATABLE READ, LANGUAGE = N'us_english', DATEFIRST = 7, DATEFORMAT = mdy)
  INSERT dbo.t2 VALUES (@id, CONCAT(N'off ', @id))
END
GO
CREATE PROCEDURE dbo.cell @setting VARCHAR(10), @on BIT, @base INT
AS
BEGIN
  SET NOCOUNT ON
  DECLARE @flushes BIGINT = (SELECT cntr_value FROM sys.dm_os_performance_counters
                             WHERE counter_name = 'Log Flushes/sec' AND instance_name = 'nativedb')
  DECLARE @i INT = 1, @id INT
  WHILE @i <= 200
  BEGIN
    SET @id = @base + @i
    IF @on = 1 EXEC dbo.put_on @id ELSE EXEC dbo.put_off @id
    SET @i += 1
  END
  SET @flushes = (SELECT cntr_value FROM sys.dm_os_performance_counters
                  WHERE counter_name = 'Log Flushes/sec' AND instance_name = 'nativedb') - @flushes
  SELECT @setting AS setting,
         CASE @on WHEN 1 THEN 'ON' ELSE 'OFF' END AS block_option,
         CASE WHEN @flushes >= 200 THEN 'full' WHEN @flushes <= 20 THEN 'delayed' ELSE 'mixed' END AS commits
END
GO
SET NOCOUNT ON
ALTER DATABASE nativedb SET DELAYED_DURABILITY = DISABLED
EXEC dbo.cell 'DISABLED', 0, 0
EXEC dbo.cell 'DISABLED', 1, 1000
ALTER DATABASE nativedb SET DELAYED_DURABILITY = ALLOWED
EXEC dbo.cell 'ALLOWED', 0, 2000
EXEC dbo.cell 'ALLOWED', 1, 3000
ALTER DATABASE nativedb SET DELAYED_DURABILITY = FORCED
EXEC dbo.cell 'FORCED', 0, 4000
EXEC dbo.cell 'FORCED', 1, 5000
ALTER DATABASE nativedb SET DELAYED_DURABILITY = DISABLED
SELECT COUNT(*) AS rows_committed FROM dbo.t2
SET NOCOUNT OFF
GO
-- Errors, as SQL Server words them.
CREATE PROCEDURE dbo.not_atomic WITH NATIVE_COMPILATION, SCHEMABINDING
AS
  INSERT dbo.t1 VALUES (100)
GO
CREATE PROCEDURE dbo.no_language WITH NATIVE_COMPILATION, SCHEMABINDING
AS BEGIN ATOMIC WITH (TRANSACTION ISOLATION LEVEL = SNAPSHOT)
  INSERT dbo.t1 VALUES (100)
END
GO
CREATE PROCEDURE dbo.no_isolation WITH NATIVE_COMPILATION, SCHEMABINDING
AS BEGIN ATOMIC WITH (LANGUAGE = N'us_english')
  INSERT dbo.t1 VALUES (100)
END
GO
CREATE PROCEDURE dbo.commits WITH NATIVE_COMPILATION, SCHEMABINDING
AS BEGIN ATOMIC WITH (TRANSACTION ISOLATION LEVEL = SNAPSHOT, LANGUAGE = N'us_english')
  INSERT dbo.t1 VALUES (100)
  COMMIT
END
GO
BEGIN ATOMIC WITH (TRANSACTION ISOLATION LEVEL = SNAPSHOT, LANGUAGE = N'us_english')
  INSERT dbo.t1 VALUES (100)
END
GO
CREATE PROCEDURE dbo.french WITH NATIVE_COMPILATION, SCHEMABINDING
AS BEGIN ATOMIC WITH (TRANSACTION ISOLATION LEVEL = SNAPSHOT, LANGUAGE = N'Français')
  INSERT dbo.t1 VALUES (100)
END
GO
EXEC dbo.french
GO
CREATE TABLE dbo.scratch (id INT NOT NULL PRIMARY KEY NONCLUSTERED)
  WITH (MEMORY_OPTIMIZED = ON, DURABILITY = SCHEMA_ONLY)
GO
SELECT COUNT(*) AS leftover_rows FROM dbo.t1 WHERE c1 = 100
SELECT OBJECT_ID('dbo.scratch') AS scratch_id
GO
USE master
DROP DATABASE nativedb
GO
-- sp_describe_undeclared_parameters: each undeclared parameter's type, from the column it is
-- inserted into, assigned to or compared with (NVARCHAR(4000) when nothing says).
CREATE TABLE dbo.dup_t (id INT PRIMARY KEY, name NVARCHAR(30), amount DECIMAL(10,2), at DATE)
GO
EXEC sp_describe_undeclared_parameters N'INSERT INTO dbo.dup_t (id, name, amount) VALUES (@P0, @P1, @P2)'
EXEC sp_describe_undeclared_parameters
  @tsql = N'UPDATE dbo.dup_t SET amount = @a WHERE id = @id AND at BETWEEN @from AND @to',
  @params = N'@id INT'
EXEC sp_describe_undeclared_parameters N'SELECT t.name, @x AS x FROM dbo.dup_t t WHERE t.name LIKE @pattern OR t.id IN (@one, @two)'
EXEC sp_describe_undeclared_parameters N'SELECT 1'
GO
DROP TABLE dbo.dup_t
GO
