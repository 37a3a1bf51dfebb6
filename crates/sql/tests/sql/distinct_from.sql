-- IS [NOT] DISTINCT FROM (never unknown), and COLLATE: the default collation's family
-- compares as Walden does anyway; a case-sensitive one compares case-sensitively.
-- DOUBLE PRECISION, and table hints written without WITH.
SELECT CASE WHEN NULL IS DISTINCT FROM NULL THEN 1 ELSE 0 END AS null_null,
       CASE WHEN 1 IS DISTINCT FROM NULL THEN 1 ELSE 0 END AS one_null,
       CASE WHEN 'a' IS NOT DISTINCT FROM 'A' THEN 1 ELSE 0 END AS a_a,
       CASE WHEN 2 IS DISTINCT FROM 3 THEN 1 ELSE 0 END AS two_three
DECLARE @t TABLE (v INT)
INSERT @t VALUES (1), (NULL), (2)
SELECT COUNT(*) AS not_distinct_from_null FROM @t WHERE v IS NOT DISTINCT FROM NULL
SELECT name FROM (VALUES ('b'), ('A'), ('c')) AS x (name)
ORDER BY name COLLATE SQL_Latin1_General_CP1_CI_AS
SELECT CASE WHEN 'abc' = 'ABC' COLLATE Latin1_General_CI_AS THEN 'equal' END AS ci
DECLARE @d DOUBLE PRECISION = 1.5
SELECT @d * 2 AS doubled, CAST(2 AS DOUBLE PRECISION) AS cast_double
GO
SELECT CASE WHEN 'abc' = 'ABC' COLLATE Latin1_General_CS_AS THEN 'equal' END AS cs
GO
-- Old-style table hints, without WITH, as older scripts write them.
CREATE TABLE #h (id INT PRIMARY KEY, v INT)
INSERT #h VALUES (1, 10), (2, 20)
SELECT COUNT(*) AS rows_nolock FROM #h (NOLOCK)
SELECT h.v FROM #h AS h (NOLOCK, ROWLOCK) WHERE h.id = 2
UPDATE #h WITH (ROWLOCK) SET v = 11 WHERE id = 1
SELECT v FROM #h (READUNCOMMITTED) WHERE id = 1
SELECT value FROM GENERATE_SERIES(1, 2)
GO
