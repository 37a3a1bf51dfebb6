-- UPDATE and DELETE through a CTE or derived table whose select list has window functions
-- and other derived columns: the derived values are computed over the rows first and are
-- read-only (4406 for a CTE or view, 4421 for a derived table).
CREATE TABLE dbo.dbs (name VARCHAR(20) PRIMARY KEY, size INT, ord INT)
INSERT dbo.dbs VALUES ('sales', 30, 0), ('hr', 10, 0), ('ops', 20, 0), ('web', 40, 0)
GO
-- Ola Hallengren's ordering of a table variable: the row numbers are those before the update.
DECLARE @t TABLE (DatabaseName SYSNAME, DatabaseSize INT, [Order] INT)
INSERT @t SELECT name, size, 0 FROM dbo.dbs
;WITH tmpDatabases AS (
  SELECT DatabaseName, [Order], ROW_NUMBER() OVER (ORDER BY DatabaseSize DESC) AS RowNumber
  FROM @t tmpDatabases
  WHERE [Order] = 0)
UPDATE tmpDatabases SET tmpDatabases.[Order] = tmpDatabases.RowNumber
SELECT DatabaseName, [Order] FROM @t ORDER BY [Order]
GO
-- A base table, a window over a partition and a computed column read by SET.
WITH c AS (
  SELECT name, ord, RANK() OVER (ORDER BY name) * 10 + 1 AS r FROM dbo.dbs WHERE size > 10)
UPDATE c SET ord = r
SELECT name, ord FROM dbo.dbs ORDER BY name
GO
-- The statement's WHERE reads a window column.
WITH c AS (SELECT ord, SUM(size) OVER (ORDER BY size) AS running FROM dbo.dbs)
UPDATE c SET ord = -1 WHERE running > 50
SELECT name, ord FROM dbo.dbs ORDER BY name
GO
-- A derived table as the only FROM source.
UPDATE d SET ord = n FROM (SELECT ord, NTILE(2) OVER (ORDER BY name) AS n FROM dbo.dbs) AS d
SELECT name, ord FROM dbo.dbs ORDER BY name
GO
-- Removing duplicates: keep the first row of each group.
CREATE TABLE dbo.dup (k INT, v INT)
INSERT dbo.dup VALUES (1, 10), (1, 11), (2, 20), (1, 12), (2, 21), (3, 30)
GO
WITH c AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM dbo.dup)
DELETE FROM c WHERE rn > 1
SELECT k, v FROM dbo.dup ORDER BY k
GO
DELETE d FROM (SELECT v, COUNT(*) OVER () AS n FROM dbo.dup) AS d WHERE v > n * 5
SELECT k, v FROM dbo.dup ORDER BY k
GO
-- Errors: a derived column set (4406, 4421), an aggregate (4403), a nameless column (8155),
-- a column that is not there (207).
WITH c AS (SELECT name, ROW_NUMBER() OVER (ORDER BY name) AS rn FROM dbo.dbs) UPDATE c SET rn = 0
GO
UPDATE d SET rn = 0 FROM (SELECT name, ROW_NUMBER() OVER (ORDER BY name) AS rn FROM dbo.dbs) d
GO
WITH c AS (SELECT COUNT(*) AS n FROM dbo.dbs) DELETE FROM c
GO
WITH c AS (SELECT name, size + 1 FROM dbo.dbs) DELETE FROM c
GO
WITH c AS (SELECT name, size + 1 AS s FROM dbo.dbs) UPDATE c SET nosuch = 1
GO
-- INSERT through a view with a derived column: only the base columns it names.
CREATE VIEW dbo.ranked AS SELECT name, size, DENSE_RANK() OVER (ORDER BY size) AS dr FROM dbo.dbs
GO
INSERT dbo.ranked (name, size) VALUES ('new', 5)
SELECT name, size, dr FROM dbo.ranked ORDER BY dr
GO
INSERT dbo.ranked VALUES ('bad', 1, 1)
GO
INSERT dbo.ranked (name, dr) VALUES ('bad', 1)
GO
DROP VIEW dbo.ranked
DROP TABLE dbo.dbs, dbo.dup
