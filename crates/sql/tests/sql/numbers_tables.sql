-- Numbers-table scripts: windows that number rows as they arrive, and the row goals
-- that reach through them, through derived tables and through chains of CTEs.
CREATE TABLE digits (d INT PRIMARY KEY);
INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
GO
-- TOP over a cross join numbered by a constant order: 1..n, whatever order the rows came in.
SELECT COUNT(*) AS n, MIN(i) AS lo, MAX(i) AS hi, COUNT(DISTINCT i) AS distinct_i
FROM (SELECT TOP (250) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS i
      FROM digits a CROSS JOIN digits b CROSS JOIN digits c) x;
GO
-- RANK and DENSE_RANK over a constant: every row a peer of every other.
SELECT TOP (3) RANK() OVER (ORDER BY @@SPID) AS r, DENSE_RANK() OVER (ORDER BY (SELECT 1)) AS dr,
       ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS rn
FROM digits a CROSS JOIN digits b;
GO
-- A numbers CTE cut by its reader's WHERE: <=, <, BETWEEN, a variable, the bound written first.
WITH nums AS (SELECT ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n FROM digits a CROSS JOIN digits b CROSS JOIN digits c)
SELECT COUNT(*) AS c, MAX(n) AS hi FROM nums WHERE n <= 37;
WITH nums AS (SELECT ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n FROM digits a CROSS JOIN digits b CROSS JOIN digits c)
SELECT COUNT(*) AS c, MAX(n) AS hi FROM nums WHERE n < 37;
DECLARE @hi BIGINT = 8;
WITH nums AS (SELECT ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n FROM digits a CROSS JOIN digits b)
SELECT n FROM nums WHERE n BETWEEN 5 AND @hi ORDER BY n;
WITH nums AS (SELECT ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n FROM digits a CROSS JOIN digits b)
SELECT n FROM nums WHERE 4 >= n AND n % 2 = 0 ORDER BY n;
GO
-- A derived table's column list names the number; TOP in its order, and against it.
SELECT TOP (4) x.k FROM (SELECT ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) FROM digits a CROSS JOIN digits b) AS x(k) ORDER BY x.k;
SELECT TOP (2) x.k FROM (SELECT ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) FROM digits a CROSS JOIN digits b) AS x(k) ORDER BY x.k DESC;
GO
-- Not cut: a filter that is no bound on the number, and a window over every row.
WITH nums AS (SELECT ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n FROM digits a CROSS JOIN digits b)
SELECT TOP (3) n FROM nums WHERE n % 10 = 0 ORDER BY n;
SELECT TOP (2) total FROM (SELECT COUNT(*) OVER () AS total FROM digits a CROSS JOIN digits b) AS t;
GO
-- A chain of CTEs each cross joining the one before: 2^32 rows, of which the first are read.
WITH L0 AS (SELECT c FROM (SELECT 1 UNION ALL SELECT 1) AS D(c)),
L1 AS (SELECT 1 AS c FROM L0 AS A CROSS JOIN L0 AS B),
L2 AS (SELECT 1 AS c FROM L1 AS A CROSS JOIN L1 AS B),
L3 AS (SELECT 1 AS c FROM L2 AS A CROSS JOIN L2 AS B),
L4 AS (SELECT 1 AS c FROM L3 AS A CROSS JOIN L3 AS B),
L5 AS (SELECT 1 AS c FROM L4 AS A CROSS JOIN L4 AS B),
Nums AS (SELECT ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS rownum FROM L5)
SELECT COUNT(*) AS c, MIN(n) AS lo, MAX(n) AS hi
FROM (SELECT TOP (100000) rownum AS n FROM Nums ORDER BY rownum) AS x;
GO
-- A CTE named by two later ones is expanded at each place.
WITH base AS (SELECT d FROM digits WHERE d < 3),
pairs AS (SELECT a.d AS x, b.d AS y FROM base a CROSS JOIN base b),
firsts AS (SELECT d FROM base WHERE d > 0)
SELECT COUNT(*) AS c FROM pairs JOIN firsts ON pairs.x = firsts.d;
GO
