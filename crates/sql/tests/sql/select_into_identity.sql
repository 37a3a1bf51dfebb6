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
