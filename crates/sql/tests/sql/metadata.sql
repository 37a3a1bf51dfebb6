-- Metadata and small scalar functions scripts use before acting.
CREATE DATABASE meta
GO
USE meta
CREATE TABLE dbo.m (id INT PRIMARY KEY, label VARCHAR(10))
GO
SELECT OBJECT_NAME(OBJECT_ID('dbo.m')) AS by_id, OBJECT_NAME(OBJECT_ID('dbo.m'), DB_ID('meta')) AS in_db,
       OBJECT_NAME(OBJECT_ID('dbo.m'), DB_ID('master')) AS elsewhere, OBJECT_NAME(NULL) AS of_null
SELECT COL_NAME(OBJECT_ID('dbo.m'), 1) AS first_col, COL_NAME(OBJECT_ID('dbo.m'), 2) AS second_col,
       COL_NAME(OBJECT_ID('dbo.m'), 3) AS no_col
SELECT DATABASEPROPERTYEX('meta', 'Recovery') AS recovery, DATABASEPROPERTYEX('meta', 'Status') AS status,
       DATABASEPROPERTYEX('meta', 'Updateability') AS updateability, DATABASEPROPERTYEX('nosuch', 'Status') AS none
GO
ALTER DATABASE meta SET RECOVERY FULL
SELECT DATABASEPROPERTYEX('meta', 'Recovery') AS recovery
GO
SELECT CHOOSE(3, 'a', 'b', 'c') AS c3, CHOOSE(4, 'a', 'b', 'c') AS c4, CHOOSE(NULL, 'a') AS c_null,
       TRANSLATE('2*[3+4]/{7-2}', '[]{}', '()()') AS translated
SELECT @@MAX_CONNECTIONS AS max_connections, HOST_NAME() AS host, APP_NAME() AS app
GO
SELECT TRANSLATE('abc', 'ab', 'x')
GO
-- STRING_SPLIT, with and without ordinals, and applied per row.
SELECT value FROM STRING_SPLIT('a,b,,c', ',')
SELECT value, ordinal FROM STRING_SPLIT(N'x y z', ' ', 1) ORDER BY ordinal DESC
SELECT t.id, s.value FROM (VALUES (1, 'p;q'), (2, 'r')) AS t(id, l) CROSS APPLY STRING_SPLIT(t.l, ';') AS s
SELECT COUNT(*) AS from_null FROM STRING_SPLIT(NULL, ',')
GO
SELECT * FROM STRING_SPLIT('a', ',,')
GO
-- sys.types joined with sys.columns, as tools describe a table.
SELECT c.name, t.name AS type_name, t.system_type_id FROM sys.columns c
JOIN sys.types t ON t.user_type_id = c.user_type_id WHERE c.object_id = OBJECT_ID('dbo.m') ORDER BY c.column_id
SELECT name, max_length, is_nullable FROM sys.types WHERE name IN ('sysname', 'int', 'nvarchar') ORDER BY name
GO
-- fn_dblog resolves without its schema too; the same records either way.
SELECT CASE WHEN (SELECT COUNT(*) FROM fn_dblog(NULL, NULL)) = (SELECT COUNT(*) FROM sys.fn_dblog(NULL, NULL))
    AND (SELECT COUNT(*) FROM fn_dblog(NULL, NULL)) > 0 THEN 'same' ELSE 'different' END AS fn_dblog
GO
-- sys.partitions: rows per index (index 0 for a heap), the usual fast row count; each
-- partition's allocation unit with its pages.
CREATE TABLE dbo.pc (id INT PRIMARY KEY, w INT)
CREATE INDEX pc_w ON dbo.pc (w)
CREATE TABLE dbo.ph (x INT)
INSERT INTO dbo.pc SELECT value, value % 3 FROM GENERATE_SERIES(1, 500)
INSERT INTO dbo.ph VALUES (1), (2)
SELECT OBJECT_NAME(object_id) AS t, index_id, rows, partition_number FROM sys.partitions
WHERE object_id IN (OBJECT_ID('dbo.pc'), OBJECT_ID('dbo.ph')) ORDER BY t, index_id
SELECT SUM(rows) AS fast_count FROM sys.partitions WHERE object_id = OBJECT_ID('dbo.pc') AND index_id IN (0, 1)
SELECT COUNT(*) AS units, MIN(CASE WHEN a.total_pages > 0 THEN 1 ELSE 0 END) AS all_have_pages
FROM sys.partitions p JOIN sys.allocation_units a ON a.container_id = p.partition_id
WHERE p.object_id = OBJECT_ID('dbo.pc')
GO
