-- A qualified column its source does not have is error 207 wherever the reference is (select
-- list, WHERE, a join's ON, ORDER BY, GROUP BY, HAVING, subqueries, dynamic SQL, UPDATE and
-- DELETE ... FROM); 4104 only when the qualifier names no source.
CREATE TABLE dbo.a (id INT, v INT)
CREATE TABLE dbo.b (id INT, w INT)
INSERT dbo.a VALUES (1,1)
INSERT dbo.b VALUES (1,1)
GO
SELECT a.nosuch FROM dbo.a AS a
GO
SELECT * FROM dbo.a AS a WHERE a.nosuch = 1
GO
SELECT * FROM dbo.a AS a JOIN dbo.b AS b ON a.id = b.nosuch
GO
SELECT * FROM dbo.a AS a LEFT JOIN dbo.b AS b ON b.nosuch = a.id
GO
EXEC ('SELECT a.nosuch FROM dbo.a AS a')
GO
EXEC sp_executesql N'SELECT * FROM dbo.a AS a WHERE a.nosuch = 1'
GO
UPDATE a SET v = 2 FROM dbo.a AS a JOIN dbo.b AS b ON b.id = a.id WHERE b.nosuch = 1
GO
UPDATE a SET v = b.nosuch FROM dbo.a AS a JOIN dbo.b AS b ON b.id = a.id
GO
DELETE a FROM dbo.a AS a JOIN dbo.b AS b ON b.nosuch = a.id
GO
SELECT * FROM dbo.a AS a ORDER BY a.nosuch
GO
SELECT a.id FROM dbo.a AS a GROUP BY a.nosuch
GO
SELECT a.id, COUNT(*) FROM dbo.a AS a GROUP BY a.id HAVING MAX(a.nosuch) > 1
GO
SELECT * FROM dbo.a AS a WHERE EXISTS (SELECT 1 FROM dbo.b AS b WHERE b.nosuch = a.id)
GO
SELECT * FROM dbo.a AS a WHERE a.id IN (SELECT b.nosuch FROM dbo.b AS b)
GO
SELECT * FROM dbo.a AS a WHERE zz.id = 1
GO
SELECT * FROM dbo.a AS a CROSS APPLY (SELECT b.w FROM dbo.b AS b WHERE b.id = a.nosuch) x
GO
UPDATE dbo.a SET v = 1 WHERE a.nosuch = 1
GO
SELECT * FROM dbo.a WHERE dbo.a.nosuch = 1
GO
-- A view's own aliases are not the query's: 4104.
CREATE VIEW dbo.va AS SELECT inner_a.id FROM dbo.a AS inner_a WHERE inner_a.v > 0
GO
SELECT inner_a.id FROM dbo.va
GO
SELECT va.nosuch FROM dbo.va
GO
WITH c AS (SELECT x.id FROM dbo.a AS x) SELECT x.id FROM c
GO
DROP VIEW dbo.va
DROP TABLE dbo.a, dbo.b
