-- What the planner's costs choose (docs/query-processing.md, "Access paths" and "Join order"):
-- a range through a nonclustered index costs a key lookup per row, so a range the statistics
-- say is wide is scanned and a narrow one sought; a statement's parameters and variables are
-- known values to the estimate and to a read's filter; a join of a few rows seeks the other
-- table's index per row rather than read it whole. Each query's rows are the same either way.
CREATE DATABASE pc
GO
USE pc
GO
CREATE TABLE item (id INT PRIMARY KEY, grp INT NOT NULL, shipped DATE NOT NULL, qty INT NOT NULL, note VARCHAR(20) NULL)
CREATE INDEX item_shipped ON item (shipped)
CREATE INDEX item_grp ON item (grp)
CREATE TABLE grp (id INT PRIMARY KEY, brand VARCHAR(10) NOT NULL, size INT NOT NULL)
GO
SET NOCOUNT ON
DECLARE @i INT = 1
WHILE @i <= 20000
BEGIN
    INSERT INTO item VALUES (@i, @i % 1000, DATEADD(day, @i % 2000, '2020-01-01'), @i % 50, CASE WHEN @i % 7 = 0 THEN NULL ELSE 'n' END)
    SET @i += 1
END
SET @i = 0
WHILE @i < 1000
BEGIN
    INSERT INTO grp VALUES (@i, CONCAT('B', @i % 25), @i % 50)
    SET @i += 1
END
SET NOCOUNT OFF
UPDATE STATISTICS item
UPDATE STATISTICS grp
GO
-- Nearly every row: scanned. A few days: sought, each row looked up.
SET SHOWPLAN_TEXT ON
GO
SELECT SUM(qty) FROM item WHERE shipped <= '2025-06-01'
SELECT SUM(qty) FROM item WHERE shipped BETWEEN '2020-01-05' AND '2020-01-08'
SELECT SUM(qty) FROM item WHERE shipped <= DATEADD(day, -30, CAST('2025-06-01' AS DATETIME))
GO
-- A few groups of one brand joined to the items: the items' index of grp sought per group.
SELECT SUM(i.qty) FROM item i, grp g WHERE g.id = i.grp AND g.brand = 'B7' AND g.size BETWEEN 1 AND 10
GO
SET SHOWPLAN_TEXT OFF
GO
SELECT SUM(qty), COUNT(*) FROM item WHERE shipped <= '2025-06-01'
SELECT SUM(qty), COUNT(*) FROM item WHERE shipped BETWEEN '2020-01-05' AND '2020-01-08'
SELECT SUM(i.qty), COUNT(*) FROM item i, grp g WHERE g.id = i.grp AND g.brand = 'B7' AND g.size BETWEEN 1 AND 10
GO
-- The same as a driver sends them, its values as parameters: the same rows.
EXEC sp_executesql N'SELECT SUM(qty), COUNT(*) FROM item WHERE shipped <= DATEADD(dd, -1 * @P0, CAST(@P1 AS DATETIME))', N'@P0 INT, @P1 DATE', 30, '2025-06-01'
EXEC sp_executesql N'SELECT SUM(qty), COUNT(*) FROM item WHERE shipped >= @P0 AND shipped < DATEADD(dd, 4, @P0) AND qty < @P1', N'@P0 DATE, @P1 INT', '2020-01-05', 20
EXEC sp_executesql N'SELECT SUM(i.qty), COUNT(*) FROM item i, grp g WHERE g.id = i.grp AND g.brand = @P0 AND g.size BETWEEN @P1 AND @P2 + 9', N'@P0 NVARCHAR(4000), @P1 INT, @P2 INT', N'B7', 1, 1
GO
-- A read's filter takes a variable's value once, and keeps the interpreter's answers: a NULL
-- under ANSI_NULLS OFF, text converted by the column's type, an error only on a row it reaches.
CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10) NULL, c DECIMAL(10, 2) NULL)
INSERT INTO t VALUES (1, 'x', 1.5), (2, 'Y', 2.5), (3, 'z', NULL), (4, NULL, 4.25), (5, 'y', 5)
GO
DECLARE @v INT = 2
SELECT @v = a FROM t WHERE a > @v
SELECT @v AS last_a
GO
DECLARE @w INT = 0, @n INT = 0
SELECT @w = @w + a, @n = @n + 1 FROM t WHERE a > @w
SELECT @w AS total, @n AS counted
GO
DECLARE @s VARCHAR(10) = 'y'
SELECT a FROM t WHERE b = @s ORDER BY a
SELECT a FROM t WHERE b IN (@s, 'X') ORDER BY a
SELECT a FROM t WHERE b LIKE @s + '%' ORDER BY a
GO
DECLARE @d NVARCHAR(10) = N'2.5'
SELECT a FROM t WHERE c BETWEEN @d - 1 AND @d + 0.01 ORDER BY a
GO
DECLARE @d NVARCHAR(10) = N'2.5'
SELECT a FROM t WHERE c BETWEEN @d - 1.0 AND @d + 0.01 ORDER BY a
GO
DECLARE @nul INT = NULL
SELECT a FROM t WHERE a = @nul
SET ANSI_NULLS OFF
SELECT a FROM t WHERE c = @nul
SET ANSI_NULLS ON
GO
DECLARE @bad VARCHAR(10) = 'abc'
SELECT a FROM t WHERE a > 10 AND c > @bad
SELECT a FROM t WHERE a > 3 AND c > @bad
GO
DECLARE @big BIGINT = 3
SELECT a FROM t WHERE a * 2 > @big + 1 ORDER BY a
SELECT a FROM t WHERE DATEADD(day, a, '2020-01-01') > DATEADD(day, @big, CAST('2020-01-01' AS DATETIME)) ORDER BY a
GO
DECLARE @v INT = 2
UPDATE t SET @v = c = c + 1 WHERE a > @v
SELECT @v AS last_c
SELECT * FROM t ORDER BY a
GO
-- A LIKE that is no prefix keeps what it keeps of the sampled values: '%7%' two brands of
-- 25 (80 groups), whose items are sought through item_grp; '%B%' every group, whose items are
-- read once and hashed. The same query with the pattern as a parameter is estimated alike.
SET SHOWPLAN_TEXT ON
GO
SELECT SUM(i.qty) FROM grp g, item i WHERE i.grp = g.id AND g.brand LIKE '%7%'
SELECT SUM(i.qty) FROM grp g, item i WHERE i.grp = g.id AND g.brand LIKE '%B%'
GO
SET SHOWPLAN_TEXT OFF
GO
SELECT SUM(i.qty), COUNT(*) FROM grp g, item i WHERE i.grp = g.id AND g.brand LIKE '%7%'
SELECT SUM(i.qty), COUNT(*) FROM grp g, item i WHERE i.grp = g.id AND g.brand NOT LIKE '%7%'
EXEC sp_executesql N'SELECT SUM(i.qty), COUNT(*) FROM grp g, item i WHERE i.grp = g.id AND g.brand LIKE @P0', N'@P0 NVARCHAR(4000)', N'%7%'
GO
-- A LEFT JOIN seeks its inner table per left row only when that costs less than reading it
-- once: three groups seek their items; all 1,000 groups (20,000 items) hash them.
SET SHOWPLAN_TEXT ON
GO
SELECT g.id, COUNT(i.id) FROM grp g LEFT JOIN item i ON i.grp = g.id AND i.note IS NULL WHERE g.id < 3 GROUP BY g.id
SELECT COUNT(*), COUNT(i.id) FROM grp g LEFT JOIN item i ON i.grp = g.id AND i.note IS NULL
GO
SET SHOWPLAN_TEXT OFF
GO
SELECT g.id, COUNT(i.id) FROM grp g LEFT JOIN item i ON i.grp = g.id AND i.note IS NULL WHERE g.id < 3 GROUP BY g.id ORDER BY g.id
SELECT COUNT(*), COUNT(i.id) FROM grp g LEFT JOIN item i ON i.grp = g.id AND i.note IS NULL
SELECT COUNT(*), COUNT(i.id) FROM grp g LEFT JOIN item i ON i.grp = g.id AND i.note IS NULL AND i.qty > 100
GO
USE master
DROP DATABASE pc
GO
