-- Window functions (LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTILE, distribution functions,
-- aggregates over ordered frames) and recursive common table expressions.
SET NOCOUNT ON
CREATE TABLE dbo.sales (id INT PRIMARY KEY, region VARCHAR(10) NOT NULL, day INT NOT NULL, amount INT NULL)
INSERT INTO dbo.sales VALUES (1, 'east', 1, 10), (2, 'east', 2, 20), (3, 'east', 2, 30), (4, 'east', 3, NULL),
  (5, 'east', 4, 40), (6, 'west', 1, 5), (7, 'west', 1, 15), (8, 'west', 2, 25)
GO
-- LAG and LEAD: offset 1 by default; NULL beyond the partition, or the default when given;
-- offset 0 is the current row.
SELECT id, region, amount,
  LAG(amount) OVER (PARTITION BY region ORDER BY id) AS prev,
  LEAD(amount) OVER (PARTITION BY region ORDER BY id) AS next,
  LAG(amount, 2, -1) OVER (PARTITION BY region ORDER BY id) AS prev2,
  LEAD(id, 0) OVER (ORDER BY id) AS same,
  LEAD(region, 3, 'none') OVER (ORDER BY id) AS third_next
FROM dbo.sales ORDER BY id
GO
-- FIRST_VALUE and LAST_VALUE: with the default frame LAST_VALUE is the current row (no ties
-- here); over the whole partition it is the partition's last row.
SELECT id, region,
  FIRST_VALUE(id) OVER (PARTITION BY region ORDER BY day, id) AS first_id,
  LAST_VALUE(id) OVER (PARTITION BY region ORDER BY day, id) AS last_so_far,
  LAST_VALUE(id) OVER (PARTITION BY region ORDER BY day, id
                       ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS last_id,
  FIRST_VALUE(amount) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS after_me
FROM dbo.sales ORDER BY id
GO
-- Aggregates with ORDER BY: the default frame is RANGE ... CURRENT ROW, so peers (equal
-- days) share the total; ROWS frames count physical rows. NULLs are skipped.
SELECT id, region, day, amount,
  SUM(amount) OVER (PARTITION BY region ORDER BY day) AS range_total,
  SUM(amount) OVER (PARTITION BY region ORDER BY day, id
                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS rows_total,
  SUM(amount) OVER (PARTITION BY region ORDER BY day, id
                    ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS pair,
  COUNT(amount) OVER (PARTITION BY region ORDER BY day) AS cnt,
  COUNT(*) OVER (PARTITION BY region ORDER BY day
                 RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS whole,
  AVG(amount) OVER (PARTITION BY region ORDER BY day, id ROWS UNBOUNDED PRECEDING) AS avg_so_far
FROM dbo.sales ORDER BY id
SELECT id, amount,
  MIN(amount) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS min_rest,
  MAX(amount) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS max_next2,
  SUM(amount) OVER (ORDER BY day RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS from_my_day,
  SUM(amount) OVER (PARTITION BY region) AS region_total
FROM dbo.sales ORDER BY id
GO
-- NTILE (larger tiles first), RANK, DENSE_RANK, PERCENT_RANK and CUME_DIST over tied days.
SELECT id, day,
  NTILE(3) OVER (ORDER BY id) AS tile3,
  NTILE(3) OVER (PARTITION BY region ORDER BY id) AS tile_region,
  NTILE(10) OVER (PARTITION BY region ORDER BY id) AS tile10,
  RANK() OVER (ORDER BY day) AS rnk,
  DENSE_RANK() OVER (ORDER BY day) AS dense,
  PERCENT_RANK() OVER (ORDER BY day) AS pct,
  CUME_DIST() OVER (ORDER BY day) AS cume
FROM dbo.sales ORDER BY id
GO
-- PERCENTILE_CONT interpolates (a FLOAT), PERCENTILE_DISC picks a row's value (its type); both
-- ignore NULLs, order by their WITHIN GROUP, and partition by their OVER.
SELECT DISTINCT g,
  PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY v) OVER (PARTITION BY g) AS median_cont,
  PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY v) OVER (PARTITION BY g) AS median_disc,
  PERCENTILE_CONT(0.25) WITHIN GROUP (ORDER BY v DESC) OVER (PARTITION BY g) AS p25_desc,
  PERCENTILE_DISC(1) WITHIN GROUP (ORDER BY v) OVER (PARTITION BY g) AS highest
FROM (VALUES ('a', 1), ('a', 2), ('a', 3), ('a', 4), ('b', 10), ('b', NULL), ('b', 30)) t(g, v)
ORDER BY g
GO
SELECT PERCENTILE_CONT(1.5) WITHIN GROUP (ORDER BY v) OVER () FROM (VALUES (1)) t(v)
GO
SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY v) OVER (ORDER BY v) FROM (VALUES (1)) t(v)
GO
-- A running total over 100,000 rows (linear: a quadratic one would not finish).
SELECT COUNT(*) AS n, MAX(rt) AS last_total, MAX(rows_rt) AS last_rows FROM (
  SELECT SUM(CAST(value AS BIGINT)) OVER (ORDER BY value) AS rt,
         SUM(CAST(value AS BIGINT)) OVER (ORDER BY value ROWS UNBOUNDED PRECEDING) AS rows_rt
  FROM GENERATE_SERIES(1, 100000)) AS x
GO
-- Error 4112: LAG needs ORDER BY.
SELECT LAG(amount) OVER (PARTITION BY region) AS x FROM dbo.sales
GO
-- Error 4112: so do ranking functions and FIRST_VALUE.
SELECT FIRST_VALUE(amount) OVER (PARTITION BY region) AS x FROM dbo.sales
GO
-- Error 10752: ranking and offset functions take no frame.
SELECT ROW_NUMBER() OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS x FROM dbo.sales
GO
-- Error 10756: a frame needs ORDER BY.
SELECT SUM(amount) OVER (PARTITION BY region ROWS UNBOUNDED PRECEDING) AS x FROM dbo.sales
GO
-- Error 4194: RANGE takes only UNBOUNDED and CURRENT ROW.
SELECT SUM(amount) OVER (ORDER BY id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) AS x FROM dbo.sales
GO
-- Error 8730: a negative offset.
SELECT LAG(amount, -1) OVER (ORDER BY id) AS x FROM dbo.sales
GO
-- Error 4116: NTILE needs a positive count.
SELECT NTILE(0) OVER (ORDER BY id) AS x FROM dbo.sales
GO
-- Error 10759: DISTINCT with OVER.
SELECT COUNT(DISTINCT amount) OVER (PARTITION BY region) AS x FROM dbo.sales
GO
-- Error 102: a frame cannot start at UNBOUNDED FOLLOWING.
SELECT SUM(amount) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) AS x FROM dbo.sales
GO
-- Recursion: 1..100 takes 99 levels, within the default limit of 100.
WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 100)
SELECT COUNT(*) AS cnt, MIN(i) AS lo, MAX(i) AS hi, SUM(i) AS total FROM n
-- 0..100 takes exactly 100 levels.
;WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 100)
SELECT COUNT(*) AS cnt FROM n
GO
-- Error 530: 0..101 needs 101 levels.
WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 101)
SELECT COUNT(*) AS cnt FROM n
GO
-- Error 530 with the statement's own limit.
WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 10)
SELECT i FROM n ORDER BY i OPTION (MAXRECURSION 5)
GO
-- A limit that is enough, and MAXRECURSION 0 (no limit) over 1,000 levels.
WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 6)
SELECT i FROM n ORDER BY i OPTION (MAXRECURSION 5)
;WITH n AS (SELECT 0 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
SELECT COUNT(*) AS cnt, MAX(i) AS hi FROM n OPTION (MAXRECURSION 0)
GO
-- Error 310: the limit is 32767.
WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 3)
SELECT i FROM n OPTION (MAXRECURSION 40000)
GO
-- A column list, several columns (Fibonacci), and a window function over the result.
WITH f (a, b, k) AS (SELECT 0, 1, 1 UNION ALL SELECT b, a + b, k + 1 FROM f WHERE k < 10)
SELECT k, a, SUM(a) OVER (ORDER BY k) AS running FROM f ORDER BY k
GO
-- Two anchor members and two recursive members; each level runs both recursive members
-- on the previous level's rows.
WITH s AS (SELECT 1 AS v UNION ALL SELECT 2
           UNION ALL SELECT v * 10 FROM s WHERE v < 100
           UNION ALL SELECT v + 5 FROM s WHERE v < 10)
SELECT v FROM s ORDER BY v
GO
-- A recursive CTE after an ordinary one that it reads.
WITH base AS (SELECT 3 AS top_n),
     n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n, base WHERE i < top_n)
SELECT i FROM n ORDER BY i
GO
-- A hierarchy walk: the anchor's CAST gives the path column room to grow.
CREATE TABLE dbo.org (id INT PRIMARY KEY, parent INT NULL, name VARCHAR(10) NOT NULL)
INSERT INTO dbo.org VALUES (1, NULL, 'ceo'), (2, 1, 'cto'), (3, 1, 'cfo'), (4, 2, 'dev1'),
  (5, 2, 'dev2'), (6, 4, 'intern'), (7, NULL, 'board')
;WITH tree AS (
  SELECT id, parent, 0 AS lvl, CAST(name AS VARCHAR(100)) AS path FROM dbo.org WHERE parent IS NULL
  UNION ALL
  SELECT c.id, c.parent, tree.lvl + 1, CAST(tree.path + '/' + c.name AS VARCHAR(100))
  FROM dbo.org c JOIN tree ON c.parent = tree.id)
SELECT id, parent, lvl, path FROM tree ORDER BY path
GO
-- A recursive CTE feeding SELECT INTO, with a limit above the default.
;WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 200)
SELECT i INTO #nums FROM n OPTION (MAXRECURSION 250)
SELECT COUNT(*) AS cnt, SUM(i) AS total FROM #nums
DROP TABLE #nums
GO
-- Error 252: the recursive member must follow UNION ALL.
WITH n AS (SELECT 1 AS i UNION SELECT i + 1 FROM n WHERE i < 3) SELECT i FROM n
GO
-- Error 252: a CTE naming itself without any UNION ALL.
WITH n AS (SELECT i FROM n) SELECT i FROM n
GO
-- Error 246: no anchor member.
WITH n AS (SELECT i FROM n UNION ALL SELECT i + 1 FROM n) SELECT i FROM n
GO
-- Error 460: DISTINCT in the recursive member.
WITH n AS (SELECT 1 AS i UNION ALL SELECT DISTINCT i + 1 FROM n WHERE i < 3) SELECT i FROM n
GO
-- Error 461: TOP in the recursive member.
WITH n AS (SELECT 1 AS i UNION ALL SELECT TOP (1) i + 1 FROM n WHERE i < 3) SELECT i FROM n
GO
-- Error 467: an aggregate in the recursive member.
WITH n AS (SELECT 1 AS i UNION ALL SELECT MAX(i) + 1 FROM n HAVING MAX(i) < 3) SELECT i FROM n
GO
-- Error 462: an outer join in the recursive member.
WITH n AS (SELECT 1 AS i UNION ALL SELECT o.id FROM dbo.org o LEFT JOIN n ON o.parent = n.i) SELECT i FROM n
GO
-- Error 253: two references to the CTE in one recursive member.
WITH n AS (SELECT 1 AS i UNION ALL SELECT a.i + 1 FROM n a JOIN n b ON a.i = b.i WHERE a.i < 3) SELECT i FROM n
GO
-- Error 465: a reference inside a subquery.
WITH n AS (SELECT 1 AS i UNION ALL SELECT id FROM dbo.org WHERE id IN (SELECT i + 1 FROM n)) SELECT i FROM n
GO
DROP TABLE dbo.org
DROP TABLE dbo.sales
GO
-- A window function of a grouped query ordered or partitioned by an aggregate: the aggregate
-- is computed with the groups (was error 147).
CREATE TABLE #grouped (k VARCHAR(5), v INT);
INSERT INTO #grouped VALUES ('a', 1), ('a', 5), ('b', 2), ('c', 10), ('c', 1), ('b', 2);
SELECT k, SUM(v) AS total, RANK() OVER (ORDER BY SUM(v) DESC) AS r,
    ROW_NUMBER() OVER (PARTITION BY COUNT(*) ORDER BY k) AS rn
FROM #grouped GROUP BY k ORDER BY r;
SELECT k, SUM(v) * 100 / SUM(SUM(v)) OVER () AS pct FROM #grouped GROUP BY k ORDER BY k;
SELECT ROW_NUMBER() OVER (ORDER BY SUM(v)) AS only_row FROM #grouped;
GO
-- A list split by a recursive CTE over an NVARCHAR(MAX) variable (Ola Hallengren's
-- IndexOptimize does this): SUBSTRING of a MAX value is MAX, so the later, longer items fit.
DECLARE @F nvarchar(max) = N'INDEX_REORGANIZE,INDEX_REBUILD_ONLINE,INDEX_REBUILD_OFFLINE', @D nvarchar(max) = N',';
WITH F (S, E, A) AS (
  SELECT 1, ISNULL(NULLIF(CHARINDEX(@D, @F, 1), 0), LEN(@F) + 1), SUBSTRING(@F, 1, ISNULL(NULLIF(CHARINDEX(@D, @F, 1), 0), LEN(@F) + 1) - 1)
  UNION ALL
  SELECT CAST(E AS int) + 1, ISNULL(NULLIF(CHARINDEX(@D, @F, E + 1), 0), LEN(@F) + 1), SUBSTRING(@F, E + 1, ISNULL(NULLIF(CHARINDEX(@D, @F, E + 1), 0), LEN(@F) + 1) - E - 1)
  FROM F WHERE E < LEN(@F) + 1)
SELECT S, E, A FROM F
GO
