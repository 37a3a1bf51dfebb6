-- SELECT IDENTITY(type, seed, increment) AS c, ... INTO: numbers the new table's rows in
-- the query's order; the column is an identity column of the new table.
CREATE TABLE #src (name VARCHAR(10))
INSERT #src VALUES ('cy'), ('ann'), ('bob')
GO
SELECT IDENTITY(INT, 10, 5) AS rn, name INTO #numbered FROM #src ORDER BY name
SELECT rn, name FROM #numbered ORDER BY rn
INSERT #numbered (name) VALUES ('dee')
SELECT MAX(rn) AS next_after_insert FROM #numbered
SELECT name, IDENTITY(BIGINT) AS id INTO #n2 FROM #src WHERE name = 'ann'
SELECT * FROM #n2
GO
SELECT IDENTITY(INT, 1, 1) AS rn, name FROM #src
GO
SELECT IDENTITY(INT, 1, 1) AS a, IDENTITY(INT, 1, 1) AS b INTO #bad FROM #src
GO
-- The side an outer join or OUTER APPLY fills with NULLs makes nullable columns, whatever
-- its table says; the preserved side keeps NOT NULL.
CREATE TABLE oa (id INT NOT NULL PRIMARY KEY, x INT NOT NULL);
CREATE TABLE ob (id INT NOT NULL PRIMARY KEY, y INT NOT NULL);
INSERT oa VALUES (1, 10), (2, 20); INSERT ob VALUES (1, 100), (3, 300);
SELECT oa.id, oa.x, ob.id AS bid, ob.y INTO #ol FROM oa LEFT JOIN ob ON ob.id = oa.id;
SELECT ob.y, oa.x INTO #or FROM ob RIGHT JOIN oa ON ob.id = oa.id;
SELECT oa.x, ob.y INTO #of FROM oa FULL JOIN ob ON ob.id = oa.id;
SELECT oa.x, o.y INTO #oo FROM oa OUTER APPLY (SELECT y FROM ob WHERE ob.id = oa.id) o;
SELECT oa.x, o.y INTO #oc FROM oa CROSS APPLY (SELECT y FROM ob WHERE ob.id = oa.id) o;
SELECT CASE object_id WHEN OBJECT_ID('tempdb..#ol') THEN 'left' WHEN OBJECT_ID('tempdb..#or') THEN 'right'
    WHEN OBJECT_ID('tempdb..#of') THEN 'full' WHEN OBJECT_ID('tempdb..#oo') THEN 'outer apply'
    ELSE 'cross apply' END AS t, name, is_nullable FROM tempdb.sys.columns
WHERE object_id IN (OBJECT_ID('tempdb..#ol'), OBJECT_ID('tempdb..#or'), OBJECT_ID('tempdb..#of'),
    OBJECT_ID('tempdb..#oo'), OBJECT_ID('tempdb..#oc'))
ORDER BY t, column_id;
SELECT * FROM #ol ORDER BY id;
SELECT * FROM #of ORDER BY x;
GO
