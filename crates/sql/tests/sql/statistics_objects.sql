-- Statistics objects: index statistics built with the index, CREATE STATISTICS, the three
-- result sets of DBCC SHOW_STATISTICS, sys.stats, automatic updates, 5074.
CREATE TABLE dbo.h (id INT NOT NULL PRIMARY KEY, grp INT NULL, name VARCHAR(20) NULL)
GO
SET NOCOUNT ON
DECLARE @i INT = 1
WHILE @i <= 100
BEGIN
    INSERT dbo.h VALUES (@i, CASE WHEN @i > 90 THEN NULL ELSE @i % 10 END,
                         'n' + CAST(@i % 4 AS VARCHAR(2)))
    SET @i += 1
END
GO
-- Built by CREATE INDEX from every row: a NULL step, then one step per value.
CREATE INDEX ix_grp ON dbo.h (grp)
DBCC SHOW_STATISTICS ('dbo.h', ix_grp) WITH DENSITY_VECTOR, HISTOGRAM
GO
-- Statistics on columns no index leads: read, sorted, then built the same way.
CREATE STATISTICS st_name ON dbo.h (name, grp) WITH FULLSCAN
DBCC SHOW_STATISTICS (h, st_name) WITH HISTOGRAM, DENSITY_VECTOR, NO_INFOMSGS
GO
CREATE STATISTICS st_fixed ON dbo.h (grp) WITH SAMPLE 50 PERCENT, NORECOMPUTE
SELECT name, stats_id, auto_created, user_created, no_recompute, has_filter
FROM sys.stats WHERE object_id = OBJECT_ID('dbo.h') ORDER BY stats_id
SELECT s.name, c.stats_column_id, COL_NAME(c.object_id, c.column_id) AS col
FROM sys.stats s JOIN sys.stats_columns c ON c.object_id = s.object_id AND c.stats_id = s.stats_id
WHERE s.object_id = OBJECT_ID('dbo.h') ORDER BY s.stats_id, c.stats_column_id
GO
-- The primary key's statistics were never built (the table was empty when it was made).
SELECT COUNT(*) AS built FROM sys.dm_db_stats_properties(OBJECT_ID('dbo.h'), 1)
SELECT CASE WHEN STATS_DATE(OBJECT_ID('dbo.h'), 1) IS NULL THEN 'never' ELSE 'built' END
-- A join plans with statistics: the never-built ones are built first.
SELECT COUNT(*) FROM dbo.h a JOIN dbo.h b ON a.id = b.id WHERE a.grp = 3
SELECT rows, rows_sampled, steps, modification_counter
FROM sys.dm_db_stats_properties(OBJECT_ID('dbo.h'), 1)
SELECT CASE WHEN STATS_DATE(OBJECT_ID('dbo.h'), 1) IS NULL THEN 'never' ELSE 'built' END
GO
-- 400 more rows: past MIN(500 + 0.2 * 100, SQRT(1000 * 100)) = 316 modifications.
SET NOCOUNT ON
DECLARE @i INT = 101
WHILE @i <= 500
BEGIN
    INSERT dbo.h VALUES (@i, @i % 7, 'm')
    SET @i += 1
END
SELECT s.name, p.rows, p.modification_counter
FROM sys.stats s CROSS APPLY sys.dm_db_stats_properties(s.object_id, s.stats_id) p
WHERE s.object_id = OBJECT_ID('dbo.h') ORDER BY s.stats_id
GO
-- The next query that uses them updates the stale ones, except NORECOMPUTE's.
SELECT COUNT(*) FROM dbo.h a JOIN dbo.h b ON a.id = b.id WHERE a.grp = 3
SELECT s.name, p.rows, p.modification_counter
FROM sys.stats s CROSS APPLY sys.dm_db_stats_properties(s.object_id, s.stats_id) p
WHERE s.object_id = OBJECT_ID('dbo.h') ORDER BY s.stats_id
GO
-- AUTO_UPDATE_STATISTICS OFF: stale statistics stay as they are.
ALTER DATABASE CURRENT SET AUTO_UPDATE_STATISTICS OFF
SELECT is_auto_update_stats_on, is_auto_create_stats_on FROM sys.databases WHERE name = DB_NAME()
DELETE dbo.h WHERE id > 100
SELECT COUNT(*) FROM dbo.h a JOIN dbo.h b ON a.id = b.id WHERE a.grp = 3
SELECT rows, modification_counter FROM sys.dm_db_stats_properties(OBJECT_ID('dbo.h'), 2)
ALTER DATABASE CURRENT SET AUTO_UPDATE_STATISTICS ON
GO
-- UPDATE STATISTICS: one, a list, or all; RESAMPLE keeps the last sampling.
UPDATE STATISTICS dbo.h ix_grp WITH FULLSCAN
UPDATE STATISTICS dbo.h (st_fixed, st_name) WITH RESAMPLE
SELECT s.name, s.no_recompute, p.rows, p.modification_counter
FROM sys.stats s CROSS APPLY sys.dm_db_stats_properties(s.object_id, s.stats_id) p
WHERE s.object_id = OBJECT_ID('dbo.h') ORDER BY s.stats_id
UPDATE STATISTICS dbo.h nothing
GO
-- A column under statistics cannot be dropped (5074, then 4922), until they are.
ALTER TABLE dbo.h DROP COLUMN name
GO
DROP STATISTICS dbo.h.st_name
DROP STATISTICS dbo.h.ix_grp
GO
ALTER TABLE dbo.h DROP COLUMN name
SELECT s.name, COL_NAME(c.object_id, c.column_id) AS col
FROM sys.stats s JOIN sys.stats_columns c ON c.object_id = s.object_id AND c.stats_id = s.stats_id
WHERE s.object_id = OBJECT_ID('dbo.h') ORDER BY s.stats_id, c.stats_column_id
DBCC SHOW_STATISTICS ('dbo.h', nothing)
GO
-- Names are shared with the indexes; DROP INDEX drops its statistics.
CREATE STATISTICS ix_grp ON dbo.h (id)
DROP INDEX ix_grp ON dbo.h
SELECT name, stats_id FROM sys.stats WHERE object_id = OBJECT_ID('dbo.h') ORDER BY stats_id
CREATE INDEX ix_id ON dbo.h (id)
SELECT name, stats_id FROM sys.stats WHERE object_id = OBJECT_ID('dbo.h') ORDER BY stats_id
EXEC sp_updatestats
GO
-- sp_createstats: one statistics object per column nothing leads.
CREATE TABLE dbo.c (a INT PRIMARY KEY, b INT, x XML)
INSERT dbo.c VALUES (1, 10, NULL), (2, 20, NULL)
EXEC sp_createstats
SELECT s.name, s.stats_id, s.user_created, COL_NAME(c.object_id, c.column_id) AS col
FROM sys.stats s JOIN sys.stats_columns c ON c.object_id = s.object_id AND c.stats_id = s.stats_id
WHERE s.object_id = OBJECT_ID('dbo.c') ORDER BY s.stats_id
GO
-- Dropping a column no statistics name moves the later columns' positions with it.
CREATE TABLE dbo.m (a INT PRIMARY KEY, b INT, c INT)
INSERT dbo.m VALUES (1, 1, 1), (2, 2, 2)
CREATE STATISTICS st_c ON dbo.m (c)
ALTER TABLE dbo.m DROP COLUMN b
SELECT s.name, COL_NAME(c.object_id, c.column_id) AS col
FROM sys.stats s JOIN sys.stats_columns c ON c.object_id = s.object_id AND c.stats_id = s.stats_id
WHERE s.object_id = OBJECT_ID('dbo.m') ORDER BY s.stats_id
DBCC SHOW_STATISTICS ('dbo.m', st_c) WITH HISTOGRAM, NO_INFOMSGS
GO
