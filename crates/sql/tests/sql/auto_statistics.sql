-- AUTO_CREATE_STATISTICS: a query whose plan estimates a predicate on a column that no
-- statistics lead first creates single-column statistics on it, named as SQL Server's.
CREATE TABLE dbo.a (id INT NOT NULL PRIMARY KEY, v INT NULL, note VARCHAR(MAX) NULL)
CREATE TABLE dbo.b (id INT NOT NULL PRIMARY KEY, a_id INT NOT NULL, w INT NULL)
GO
SET NOCOUNT ON
DECLARE @i INT = 1
WHILE @i <= 400
BEGIN
    -- v is 1 on 10 rows, 2 on 390: a guess of 30% is far from either.
    INSERT dbo.a VALUES (@i, CASE WHEN @i <= 10 THEN 1 ELSE 2 END, 'x')
    INSERT dbo.b VALUES (@i, (@i % 400) + 1, @i % 20)
    SET @i += 1
END
GO
-- Nothing but the primary keys' statistics yet.
SELECT OBJECT_NAME(object_id) AS tab, name, auto_created, user_created
FROM sys.stats WHERE object_id IN (OBJECT_ID('dbo.a'), OBJECT_ID('dbo.b')) ORDER BY tab, stats_id
GO
-- The join estimates a.v = 1 and b.a_id (a join column no index leads): both get
-- statistics before the plan is made; a.note (varchar(max)) compared with a constant does not.
SELECT COUNT(*) FROM dbo.a a JOIN dbo.b b ON b.a_id = a.id WHERE a.v = 1 AND a.note = 'x'
SELECT OBJECT_NAME(s.object_id) AS tab, COL_NAME(c.object_id, c.column_id) AS col,
       CASE WHEN s.name = '_WA_Sys_' + RIGHT('0000000' + CONVERT(VARCHAR(8), CONVERT(VARBINARY(4), c.column_id), 2), 8)
                 + '_' + CONVERT(VARCHAR(8), CONVERT(VARBINARY(4), s.object_id), 2)
            THEN 'named as SQL Server' ELSE s.name END AS name,
       s.auto_created, s.user_created, p.rows, p.rows_sampled, p.steps,
       CASE WHEN STATS_DATE(s.object_id, s.stats_id) IS NULL THEN 'never' ELSE 'built' END AS built
FROM sys.stats s
JOIN sys.stats_columns c ON c.object_id = s.object_id AND c.stats_id = s.stats_id
CROSS APPLY sys.dm_db_stats_properties(s.object_id, s.stats_id) p
WHERE s.object_id IN (OBJECT_ID('dbo.a'), OBJECT_ID('dbo.b')) AND s.auto_created = 1
ORDER BY tab, col
GO
-- Its histogram, as DBCC SHOW_STATISTICS shows it.
DECLARE @sql NVARCHAR(200) = (SELECT 'DBCC SHOW_STATISTICS (''dbo.a'', ' + name + ') WITH HISTOGRAM'
                              FROM sys.stats WHERE object_id = OBJECT_ID('dbo.a') AND auto_created = 1)
EXEC (@sql)
GO
-- The estimate of a.v = 1 is the histogram's 10 rows, not 30% of 400; a.v < 2 too.
SET SHOWPLAN_ALL ON
GO
SELECT a.id, b.w FROM dbo.a a JOIN dbo.b b ON b.a_id = a.id WHERE a.v = 1
GO
SELECT a.id, b.w FROM dbo.a a JOIN dbo.b b ON b.a_id = a.id WHERE a.v < 2
GO
SET SHOWPLAN_ALL OFF
GO
-- A second query creates nothing more.
SELECT COUNT(*) FROM dbo.a a JOIN dbo.b b ON b.a_id = a.id WHERE a.v = 2
SELECT COUNT(*) AS auto_stats FROM sys.stats WHERE object_id IN (OBJECT_ID('dbo.a'), OBJECT_ID('dbo.b')) AND auto_created = 1
GO
-- Made in a transaction of their own: a rollback of the user's keeps them.
BEGIN TRAN
SELECT COUNT(*) FROM dbo.a a JOIN dbo.b b ON b.a_id = a.id WHERE b.w = 3
ROLLBACK
SELECT COL_NAME(c.object_id, c.column_id) AS col
FROM sys.stats s JOIN sys.stats_columns c ON c.object_id = s.object_id AND c.stats_id = s.stats_id
WHERE s.object_id = OBJECT_ID('dbo.b') AND s.auto_created = 1 ORDER BY col
GO
-- ALTER COLUMN and DROP COLUMN drop auto-created statistics silently (user-made ones
-- raise 5074).
ALTER TABLE dbo.b ALTER COLUMN w BIGINT NULL
ALTER TABLE dbo.a DROP COLUMN v
SELECT OBJECT_NAME(s.object_id) AS tab, COL_NAME(c.object_id, c.column_id) AS col
FROM sys.stats s JOIN sys.stats_columns c ON c.object_id = s.object_id AND c.stats_id = s.stats_id
WHERE s.object_id IN (OBJECT_ID('dbo.a'), OBJECT_ID('dbo.b')) AND s.auto_created = 1 ORDER BY tab, col
GO
-- DROP STATISTICS drops one; the next query that estimates the column makes it again.
DECLARE @sql NVARCHAR(200) = (SELECT 'DROP STATISTICS dbo.b.' + name FROM sys.stats
                              WHERE object_id = OBJECT_ID('dbo.b') AND auto_created = 1)
EXEC (@sql)
SELECT COUNT(*) AS auto_stats FROM sys.stats WHERE object_id = OBJECT_ID('dbo.b') AND auto_created = 1
SELECT COUNT(*) FROM dbo.a a JOIN dbo.b b ON b.a_id = a.id
SELECT COUNT(*) AS auto_stats FROM sys.stats WHERE object_id = OBJECT_ID('dbo.b') AND auto_created = 1
GO
-- AUTO_CREATE_STATISTICS OFF: none made.
ALTER DATABASE CURRENT SET AUTO_CREATE_STATISTICS OFF
SELECT COUNT(*) FROM dbo.a a JOIN dbo.b b ON b.a_id = a.id WHERE b.w = 4
SELECT COUNT(*) AS auto_stats FROM sys.stats WHERE object_id = OBJECT_ID('dbo.b') AND auto_created = 1
ALTER DATABASE CURRENT SET AUTO_CREATE_STATISTICS ON
GO
-- Temporary tables: none (tempdb's statistics are not kept automatically).
CREATE TABLE #t (id INT PRIMARY KEY, v INT)
INSERT #t VALUES (1, 1), (2, 2)
SELECT COUNT(*) FROM #t t JOIN dbo.a a ON a.id = t.id WHERE t.v = 1
SELECT COUNT(*) AS auto_stats FROM tempdb.sys.stats WHERE object_id = OBJECT_ID('tempdb..#t') AND auto_created = 1
DROP TABLE #t
GO
DROP TABLE dbo.a
DROP TABLE dbo.b
GO
-- A filter on a column no index leads decides the join's plan: 5 of 2,000 customers are
-- 'vip'. Guessed at 30% (AUTO_CREATE_STATISTICS OFF), 600 customers are joined to their
-- orders by a hash of all orders; from the histogram, 5 customers seek their orders.
CREATE TABLE dbo.cust (id INT NOT NULL PRIMARY KEY, kind VARCHAR(10) NOT NULL)
CREATE TABLE dbo.ord (id INT NOT NULL PRIMARY KEY, cust_id INT NOT NULL, amount INT NOT NULL)
CREATE INDEX ix_ord_cust ON dbo.ord (cust_id)
GO
SET NOCOUNT ON
DECLARE @i INT = 1
WHILE @i <= 2000
BEGIN
    INSERT dbo.cust VALUES (@i, CASE WHEN @i % 400 = 0 THEN 'vip' ELSE 'plain' END)
    INSERT dbo.ord VALUES (@i, (@i * 7) % 2000 + 1, @i % 100)
    SET @i += 1
END
GO
ALTER DATABASE CURRENT SET AUTO_CREATE_STATISTICS OFF
SET SHOWPLAN_ALL ON
GO
SELECT c.id, o.amount FROM dbo.cust c JOIN dbo.ord o ON o.cust_id = c.id WHERE c.kind = 'vip'
GO
SET SHOWPLAN_ALL OFF
ALTER DATABASE CURRENT SET AUTO_CREATE_STATISTICS ON
SET SHOWPLAN_ALL ON
GO
SELECT c.id, o.amount FROM dbo.cust c JOIN dbo.ord o ON o.cust_id = c.id WHERE c.kind = 'vip'
GO
SET SHOWPLAN_ALL OFF
GO
SELECT c.id, o.amount FROM dbo.cust c JOIN dbo.ord o ON o.cust_id = c.id WHERE c.kind = 'vip'
ORDER BY c.id
DROP TABLE dbo.cust
DROP TABLE dbo.ord
GO
-- A join of two columns no index leads: their distinct values come from the statistics
-- the join creates on them, built from every row, rather than from the first 512 rows,
-- where g2 = id / 20 shows 26 of its 100 values. 10 values of 100 match, 40,000 pairs:
-- estimated 2,000 x 2,000 / 100, not / 26.
CREATE TABLE dbo.p (id INT NOT NULL PRIMARY KEY, g1 INT NOT NULL)
CREATE TABLE dbo.q (id INT NOT NULL PRIMARY KEY, g2 INT NOT NULL)
GO
SET NOCOUNT ON
DECLARE @i INT = 0
WHILE @i < 2000
BEGIN
    INSERT dbo.p VALUES (@i, @i % 10)
    INSERT dbo.q VALUES (@i, @i / 20)
    SET @i += 1
END
GO
-- With AUTO_CREATE_STATISTICS OFF the sample's 26 values divide.
ALTER DATABASE CURRENT SET AUTO_CREATE_STATISTICS OFF
SET SHOWPLAN_ALL ON
GO
SELECT COUNT(*) FROM dbo.p p JOIN dbo.q q ON q.g2 = p.g1
GO
SET SHOWPLAN_ALL OFF
ALTER DATABASE CURRENT SET AUTO_CREATE_STATISTICS ON
SET SHOWPLAN_ALL ON
GO
SELECT COUNT(*) FROM dbo.p p JOIN dbo.q q ON q.g2 = p.g1
GO
SET SHOWPLAN_ALL OFF
GO
SELECT COUNT(*) FROM dbo.p p JOIN dbo.q q ON q.g2 = p.g1
DROP TABLE dbo.p
DROP TABLE dbo.q
GO
-- In the transaction that creates the table: made and committed on their own, they go
-- with the table when that transaction rolls back.
CREATE TABLE dbo.nums (i INT NOT NULL PRIMARY KEY)
INSERT dbo.nums VALUES (1), (2), (3), (4), (5), (6), (7)
GO
BEGIN TRAN
CREATE TABLE dbo.r (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)
INSERT dbo.r SELECT i, i % 3 FROM dbo.nums
SELECT COUNT(*) FROM dbo.r r JOIN dbo.nums n ON n.i = r.id WHERE r.v = 1
SELECT COUNT(*) AS auto_stats FROM sys.stats WHERE object_id = OBJECT_ID('dbo.r') AND auto_created = 1
ROLLBACK
SELECT OBJECT_ID('dbo.r') AS gone, (SELECT COUNT(*) FROM sys.stats WHERE auto_created = 1) AS auto_stats
DROP TABLE dbo.nums
GO
