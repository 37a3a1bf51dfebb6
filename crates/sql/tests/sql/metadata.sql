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
-- Reserved words are names after a dot, as tools' catalog queries write them.
SELECT c.name, c.precision, c.scale, TYPE_NAME(c.user_type_id) AS type_name
FROM sys.columns AS c WHERE c.object_id = OBJECT_ID('dbo.pc') ORDER BY c.column_id
SELECT TYPE_NAME(56) AS t56, TYPE_NAME(231) AS t231, TYPE_ID('NVarChar') AS nvarchar_id,
       TYPE_ID('sysname') AS sysname_id, TYPE_NAME(999) AS unknown, TYPE_NAME(NULL) AS of_null
GO
SELECT TYPE_NAME()
GO
-- master..spt_values, the numbers table scripts borrow from SQL Server.
SELECT COUNT(*) AS p_rows, MIN(number) AS lo, MAX(number) AS hi FROM master..spt_values WHERE type = N'P'
SELECT TOP (3) number FROM master.dbo.spt_values WHERE type = 'P' ORDER BY number DESC
GO
SELECT COUNT(*) FROM spt_values
GO
-- SELECT ... INTO over no rows types its computed columns by their expressions.
SELECT test = 1, start_time = GETDATE(), precise = SYSDATETIME(), g = NEWID(), s = 'abc',
       n = N'xy', d = 1.50, big = CAST(1 AS BIGINT), db = DB_NAME(), later = DATEADD(MINUTE, 1, GETDATE()),
       total = 2 + 2.5, untyped = NULL, *
INTO #typed FROM dbo.pc WHERE 1 = 0
SELECT c.name, t.name AS type, c.max_length, c.precision, c.scale FROM tempdb.sys.columns AS c
JOIN sys.types AS t ON t.user_type_id = c.user_type_id
WHERE c.object_id = OBJECT_ID('tempdb..#typed') ORDER BY c.column_id
INSERT #typed SELECT 1, GETDATE(), SYSDATETIME(), NEWID(), 'abc', N'xy', 1.5, 1, DB_NAME(), GETDATE(), 4.5, NULL, id, w
FROM dbo.pc WHERE id = 1
SELECT COUNT(*) AS inserted FROM #typed
GO
-- SET LANGUAGE: us_english (alias English) is the one language; the checks tools make of
-- the login's rights: sa is sysadmin and dbo.
SET LANGUAGE us_english
SET LANGUAGE N'English'
SELECT @@LANGUAGE AS language, @@LANGID AS langid, @@MICROSOFTVERSION / 0x01000000 AS major_version
GO
SET LANGUAGE Klingon
GO
SET DATEFORMAT xyz
GO
SET DATEFIRST 9
GO
SELECT IS_SRVROLEMEMBER('sysadmin') AS sysadmin, IS_SRVROLEMEMBER('dbcreator') AS dbcreator,
       IS_SRVROLEMEMBER('nosuchrole') AS no_role, IS_MEMBER('db_owner') AS db_owner,
       IS_ROLEMEMBER('db_datareader') AS datareader, HAS_DBACCESS('master') AS master_access,
       HAS_DBACCESS('nosuchdb') AS no_db, HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') AS view_state
GO
-- HASHBYTES over the input's bytes (UTF-16LE for nvarchar); MD2/MD4 and unknown names are NULL.
SELECT HASHBYTES('SHA2_256', 'abc') AS sha2_256, HASHBYTES('MD5', 'abc') AS md5,
       HASHBYTES('SHA1', N'abc') AS sha1_nvarchar, HASHBYTES('MD4', 'abc') AS md4,
       HASHBYTES('SHA2_256', NULL) AS of_null, DATALENGTH(HASHBYTES('SHA2_512', 0x00)) AS sha2_512_bytes
GO
SELECT HASHBYTES('SHA2_256')
GO
-- OBJECT_DEFINITION: a procedure's text; NULL for objects without one.
CREATE PROCEDURE dbo.defined AS SELECT 1 AS one
GO
SELECT OBJECT_DEFINITION(OBJECT_ID('dbo.defined')) AS definition, OBJECT_DEFINITION(OBJECT_ID('dbo.pc')) AS of_table
GO
