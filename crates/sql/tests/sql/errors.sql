-- Bad input of every kind; after each error the session goes on.
SELECT * FROM
GO
SELECT * FROM dbo.no_such_table
GO
CREATE TABLE dbo.t (id INT NOT NULL PRIMARY KEY, name VARCHAR(10) NOT NULL)
INSERT INTO dbo.t VALUES (1, 'one')
SELECT no_such_column FROM dbo.t
GO
INSERT INTO dbo.t VALUES (2, NULL)
PRINT 'after 515 the batch goes on'
INSERT INTO dbo.t VALUES (1, 'again')
PRINT 'after 2627 the batch goes on'
GO
SELECT 1 / 0 AS x
PRINT 'after 8134 the batch goes on'
GO
SELECT CAST('abc' AS INT)
PRINT 'not printed: 245 aborts the batch'
GO
COMMIT
ROLLBACK
GO
SELECT COUNT(*) AS n FROM dbo.t
GO
INSERT INTO dbo.t VALUES (3, 'a value that is too long')
GO
DECLARE @x INT
SET @y = 1
GO
EXEC dbo.no_such_procedure
GO
THROW 50001, 'thrown', 3
PRINT 'not printed'
GO
RAISERROR('raised %s %d', 16, 2, 'text', 42)
PRINT 'after RAISERROR the batch goes on'
GO
RAISERROR('progress %d%%', 0, 1, 50) WITH NOWAIT
GO
RAISERROR('severity 19 needs WITH LOG', 19, 1)
PRINT 'after 2754 the batch goes on'
GO
BEGIN TRY
  SELECT 1 / 0
END TRY
BEGIN CATCH
  SELECT ERROR_NUMBER() AS number, ERROR_MESSAGE() AS message, ERROR_SEVERITY() AS severity, ERROR_STATE() AS state
END CATCH
GO
BEGIN TRY
  THROW 50002, 'inner', 1
END TRY
BEGIN CATCH
  PRINT 'caught ' + ERROR_MESSAGE()
  BEGIN TRY
    THROW
  END TRY
  BEGIN CATCH
    PRINT 'rethrown ' + CAST(ERROR_NUMBER() AS VARCHAR(10))
  END CATCH
END CATCH
GO
SELECT @@ERROR AS after_success
GO
DROP TABLE dbo.t
DROP TABLE dbo.t
DROP TABLE IF EXISTS dbo.t
GO
-- An identity that outgrows its type: 8115, and the failed value is not handed out.
CREATE TABLE dbo.small_id (id TINYINT IDENTITY(250, 3) PRIMARY KEY, v INT)
INSERT dbo.small_id (v) VALUES (1)
INSERT dbo.small_id (v) VALUES (2)
INSERT dbo.small_id (v) VALUES (3)
INSERT dbo.small_id (v) VALUES (4)
SELECT id, v FROM dbo.small_id
DROP TABLE dbo.small_id
GO
-- A name that does not resolve aborts its scope: inside dynamic SQL or a procedure only that
-- module ends, and its caller goes on with @@ERROR set; a CATCH around the EXEC takes it; at
-- the top of a batch the batch ends.
CREATE TABLE scope_log (step INT)
GO
CREATE PROCEDURE scope_missing AS
BEGIN
    INSERT scope_log VALUES (1)
    SELECT * FROM scope_nosuch
    INSERT scope_log VALUES (2)
END
GO
EXEC ('SELECT * FROM scope_nosuch'); SELECT @@ERROR AS after_dynamic
EXEC sp_executesql N'SELECT nosuch_column FROM scope_log'; SELECT @@ERROR AS after_executesql
EXEC scope_missing; INSERT scope_log VALUES (3)
SELECT step FROM scope_log ORDER BY step
GO
BEGIN TRY EXEC scope_missing END TRY BEGIN CATCH SELECT ERROR_NUMBER() AS caught, ERROR_PROCEDURE() AS in_procedure END CATCH
GO
SELECT * FROM scope_nosuch
SELECT 'not reached' AS top_level
GO
-- A batch cut short: 102 naming its last token, keyword or not; a keyword out of place: 156.
select
GO
SELECT * FROM dbo.t WHERE
GO
SELECT * FROM dbo.t WHERE FROM
GO
-- A CREATE that fails in a transaction ends the batch and rolls the transaction back: the
-- table created earlier in it is gone. Outside a transaction the batch goes on.
BEGIN TRAN
CREATE TABLE dbo.made_in_tran (x INT)
CREATE TABLE dbo.made_in_tran (x INT)
PRINT 'not printed: the failed CREATE ended the batch'
GO
SELECT @@TRANCOUNT AS trancount, OBJECT_ID('dbo.made_in_tran') AS made
GO
CREATE TABLE dbo.made_twice (id INT)
CREATE TABLE dbo.made_twice (id INT)
PRINT 'outside a transaction the batch goes on'
INSERT dbo.made_twice VALUES (1), (2)
GO
-- Binary and VARCHAR convert byte for byte in code page 1252.
SELECT CAST(CAST(0x00819D90FF41E980 AS VARCHAR(20)) AS VARBINARY(10)) AS round_trip,
       CAST('é€' AS VARBINARY(4)) AS bytes, CAST(0xE980 AS VARCHAR(8)) AS text
GO
-- An assignment SELECT counts its rows.
DECLARE @v INT
SELECT @v = id FROM dbo.made_twice
SELECT @@ROWCOUNT AS counted
GO
-- A table in a schema the database does not have: 2760.
CREATE TABLE no_such_schema.t1 (x INT)
GO
-- The select list is bound before any row is read: an unknown column of an empty table, or
-- of a query whose WHERE keeps nothing, is 207 (4104 qualified by an unknown name); a
-- correlated name of the enclosing query still resolves.
CREATE TABLE bind_empty (a INT)
GO
SELECT nosuch FROM bind_empty
GO
SELECT a, nosuch + 1 FROM bind_empty WHERE a = 1
GO
SELECT zz.a FROM bind_empty
GO
SELECT nosuch WHERE 1 = 0
GO
SELECT (SELECT a FROM bind_empty WHERE a = o.x) AS inner_a FROM (VALUES (1)) AS o(x)
GO
