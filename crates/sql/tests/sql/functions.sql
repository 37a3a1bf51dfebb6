-- Scalar user-defined functions: CREATE / ALTER / CREATE OR ALTER / DROP FUNCTION, calls in
-- select lists, WHERE and UPDATE, DEFAULT arguments, recursion, errors at CREATE and at
-- the call, and the catalog views that list them.
CREATE TABLE dbo.t (id INT PRIMARY KEY, price DECIMAL(10,2), qty INT)
INSERT dbo.t VALUES (1, 2.50, 4), (2, 10.00, 1), (3, 1.25, 10)
GO
CREATE FUNCTION dbo.total(@price DECIMAL(10,2), @qty INT = 1)
RETURNS DECIMAL(12,2)
AS
BEGIN
    DECLARE @t DECIMAL(12,2) = @price * @qty
    IF @t > 10 SET @t = @t * 0.9
    RETURN @t
END
GO
SELECT id, dbo.total(price, qty) AS total, dbo.total(price, DEFAULT) AS one FROM dbo.t ORDER BY id
SELECT id FROM dbo.t WHERE dbo.total(price, qty) > 10
GO
-- A function reads tables; an UPDATE that calls it stays one statement.
CREATE FUNCTION dbo.row_count() RETURNS INT AS BEGIN DECLARE @n INT; SELECT @n = COUNT(*) FROM dbo.t; RETURN @n END
GO
UPDATE dbo.t SET qty = dbo.row_count() WHERE id = 2
SELECT id, qty FROM dbo.t WHERE id = 2
GO
-- What a function body may not do: change a table, PRINT (443), return rows (444), end
-- without RETURN (455); a database prefix (166); not first in its batch (111).
CREATE FUNCTION dbo.bad() RETURNS INT AS BEGIN INSERT dbo.t VALUES (9, 1, 1); RETURN 1 END
GO
CREATE FUNCTION dbo.bad() RETURNS INT AS BEGIN PRINT 'x'; RETURN 1 END
GO
CREATE FUNCTION dbo.bad() RETURNS INT AS BEGIN SELECT * FROM dbo.t; RETURN 1 END
GO
CREATE FUNCTION dbo.bad() RETURNS INT AS BEGIN DECLARE @x INT = 1 END
GO
CREATE FUNCTION master.dbo.bad() RETURNS INT AS BEGIN RETURN 1 END
GO
SELECT 1 AS first
CREATE FUNCTION dbo.bad() RETURNS INT AS BEGIN RETURN 1 END
GO
-- A table variable is the function's own: changing it is allowed.
CREATE FUNCTION dbo.sum_to(@n INT) RETURNS INT AS
BEGIN
    DECLARE @v TABLE (x INT)
    DECLARE @i INT = 1
    WHILE @i <= @n BEGIN INSERT @v VALUES (@i); SET @i += 1 END
    RETURN (SELECT SUM(x) FROM @v)
END
GO
SELECT dbo.sum_to(10) AS fifty_five
GO
-- A temporary table is not for functions (4508).
CREATE TABLE #scratch (x INT)
GO
CREATE FUNCTION dbo.scratch_rows() RETURNS INT AS BEGIN RETURN (SELECT COUNT(*) FROM #scratch) END
GO
SELECT dbo.scratch_rows()
GO
DROP FUNCTION dbo.scratch_rows
DROP TABLE #scratch
GO
-- Calls: every argument is needed (313, DEFAULT for a default), no more (8144), and the
-- function must exist (4121).
SELECT dbo.total(1)
GO
SELECT dbo.total(1, 2, 3)
GO
SELECT dbo.nothing_here(1)
GO
-- An error in the body fails the calling statement, which a CATCH block sees.
CREATE FUNCTION dbo.div(@a INT, @b INT) RETURNS INT AS BEGIN RETURN @a / @b END
GO
SELECT dbo.div(10, 2) AS five
SELECT dbo.div(1, 0) AS boom
SELECT 'after' AS next_statement
GO
BEGIN TRY
    SELECT dbo.div(1, 0)
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS number, ERROR_PROCEDURE() AS in_function
END CATCH
GO
-- Recursion, to SQL Server's nesting limit of 32 (217).
CREATE FUNCTION dbo.fact(@n INT) RETURNS BIGINT AS BEGIN IF @n <= 1 RETURN 1; RETURN @n * dbo.fact(@n - 1) END
GO
SELECT dbo.fact(10) AS f10
SELECT dbo.fact(40) AS too_deep
GO
SELECT name, type, type_desc FROM sys.objects WHERE type = 'FN' ORDER BY name
SELECT COUNT(*) AS modules FROM sys.sql_modules WHERE object_id = OBJECT_ID('dbo.div')
GO
CREATE OR ALTER FUNCTION dbo.div(@a INT, @b INT) RETURNS INT AS BEGIN RETURN CASE WHEN @b = 0 THEN NULL ELSE @a / @b END END
GO
SELECT dbo.div(1, 0) AS null_now
GO
ALTER FUNCTION dbo.nope() RETURNS INT AS BEGIN RETURN 1 END
GO
DROP FUNCTION dbo.div, dbo.fact
DROP FUNCTION IF EXISTS dbo.div
GO
DROP FUNCTION dbo.div
GO
-- Inline table-valued functions: a parameterized view, in FROM and CROSS APPLY.
CREATE FUNCTION dbo.cheaper_than(@limit DECIMAL(10,2))
RETURNS TABLE
AS
RETURN (SELECT id, price FROM dbo.t WHERE price < @limit)
GO
SELECT id, price FROM dbo.cheaper_than(5) ORDER BY id
SELECT c.id FROM cheaper_than(2) AS c
SELECT t.id, c.price FROM dbo.t CROSS APPLY dbo.cheaper_than(t.price + 0.01) AS c WHERE c.id = t.id ORDER BY t.id
GO
CREATE FUNCTION dbo.bad_table() RETURNS TABLE AS RETURN SELECT id, id FROM dbo.t
GO
SELECT dbo.cheaper_than(5)
GO
SELECT * FROM dbo.cheaper_than()
GO
-- Multi-statement table-valued functions: the body fills the returned table variable, in a
-- scope of its own (a caller's @t is another table), and may loop, branch and update it.
CREATE FUNCTION dbo.price_bands(@step DECIMAL(10,2))
RETURNS @t TABLE (band INT PRIMARY KEY, items INT NOT NULL, label VARCHAR(20))
AS
BEGIN
    DECLARE @band INT = 0
    WHILE @band < 3
    BEGIN
        INSERT @t (band, items)
        SELECT @band, COUNT(*) FROM dbo.t
        WHERE price >= @band * @step AND price < (@band + 1) * @step
        SET @band += 1
    END
    UPDATE @t SET label = CASE WHEN items = 0 THEN 'empty' ELSE 'band ' + CONVERT(VARCHAR(5), band) END
    DELETE @t WHERE band = 2 AND items = 0
    RETURN
END
GO
DECLARE @t TABLE (band INT)
INSERT @t VALUES (99)
SELECT b.band, b.items, b.label FROM dbo.price_bands(2) AS b ORDER BY b.band
SELECT t.id, b.label FROM dbo.t CROSS APPLY dbo.price_bands(t.price) AS b WHERE b.band = 1 ORDER BY t.id
SELECT band AS callers_band FROM @t
GO
-- Its body must end with a bare RETURN (455, 178), and may change only table variables (443).
CREATE FUNCTION dbo.bad_multi() RETURNS @t TABLE (a INT) AS BEGIN INSERT @t VALUES (1) END
GO
CREATE FUNCTION dbo.bad_multi() RETURNS @t TABLE (a INT) AS BEGIN RETURN 1 END
GO
CREATE FUNCTION dbo.bad_multi() RETURNS @t TABLE (a INT) AS BEGIN DELETE dbo.t RETURN END
GO
SELECT name, type, type_desc FROM sys.objects WHERE type IN ('IF', 'FN', 'TF') ORDER BY name
SELECT ROUTINE_NAME, ROUTINE_TYPE FROM INFORMATION_SCHEMA.ROUTINES ORDER BY ROUTINE_NAME
GO
DROP FUNCTION dbo.total, dbo.row_count, dbo.sum_to, dbo.cheaper_than, dbo.price_bands
DROP TABLE dbo.t
GO
