-- Names a block's conditions cannot bind fail before anything is read, as SQL Server binds
-- them, so an empty table fails the same as a full one: an unknown column is 207, an
-- ambiguous one 209, a source out of an ON condition's scope 4104 (an inner join's ON
-- sees only its own operands, not the sources before a comma nor an enclosing join's).
CREATE TABLE dbo.a (id INT PRIMARY KEY, v INT)
CREATE TABLE dbo.b (id INT PRIMARY KEY, v INT)
CREATE TABLE dbo.c (id INT PRIMARY KEY, v INT)
GO
SELECT * FROM a, b WHERE a.nosuch = b.id
GO
SELECT * FROM a JOIN b ON b.id = a.nosuch
GO
SELECT * FROM a JOIN b ON b.id = a.id WHERE id = 1
GO
SELECT * FROM c, a JOIN b ON b.id = c.id
GO
SELECT * FROM c, a LEFT JOIN b ON b.id = c.id
GO
SELECT * FROM a JOIN (b JOIN c ON c.id = a.id) ON a.id = b.id
GO
UPDATE a SET v = 1 FROM c, a AS x JOIN b ON b.id = c.id
GO
UPDATE a SET v = 1 FROM a JOIN b ON b.nosuch = a.id
GO
UPDATE a SET v = 1 WHERE nosuch = 1
GO
DELETE TOP (1) FROM a WHERE a.nosuch = 1
GO
DELETE FROM a WHERE z.id = 1
GO
-- ORDER BY: an alias, an ordinal or a source column binds; anything else is 207.
SELECT id AS x FROM a ORDER BY x, 1, v
GO
SELECT * FROM a ORDER BY nosuch
GO
SELECT TOP (1) a.id FROM a JOIN b ON a.id = b.id ORDER BY b.nosuch
GO
-- A grouped block's GROUP BY, select list and HAVING too.
SELECT id FROM a GROUP BY nosuch
GO
SELECT nosuch FROM a GROUP BY id
GO
SELECT COUNT(*) FROM a HAVING MAX(a.nosuch) > 1
GO
SELECT COUNT(*) FROM a JOIN b ON a.id = b.id GROUP BY b.nosuch
GO
SELECT a.id, COUNT(*) AS n FROM a JOIN b ON a.id = b.id GROUP BY a.id HAVING COUNT(*) > 1
GO
-- An ON condition may name the enclosing query's columns: the subquery runs per row.
INSERT a VALUES (1, 1), (2, 2)
INSERT b VALUES (1, 1), (3, 3)
INSERT c VALUES (1, 1), (2, 2)
SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b JOIN c ON c.id = a.id) ORDER BY id
SELECT id FROM a WHERE NOT EXISTS (SELECT 1 FROM b JOIN c ON c.id = a.id AND b.id = c.id)
SELECT id FROM a WHERE a.v IN (SELECT b.v FROM b JOIN c ON c.id = a.id)
SELECT a.id, x.v FROM a CROSS APPLY (SELECT b.v FROM b JOIN c ON c.id = a.id AND b.id = c.id) AS x
GO
DROP TABLE dbo.a, dbo.b, dbo.c
GO
-- A grouped query reads only grouped columns outside its aggregates (8120 in the select
-- list, 8121 in HAVING), checked before any row is read: these tables are empty.
CREATE TABLE g (k INT, v INT, w INT)
GO
SELECT v, COUNT(*) FROM g GROUP BY k
GO
SELECT x.v, COUNT(*) FROM g AS x
GO
SELECT k FROM g GROUP BY k HAVING MAX(v) > 1 AND w > 0
GO
SELECT * FROM g GROUP BY k, v
GO
SELECT v FROM g GROUP BY v + 1
GO
-- Grouped columns, GROUP BY expressions, aggregates, window functions, subqueries and the
-- enclosing query's columns are all allowed.
INSERT g VALUES (1, 2, 3), (1, 2, 4), (2, 5, 6)
SELECT k, v + w AS s, COUNT(*) AS n FROM g GROUP BY k, v + w ORDER BY k, s
SELECT (k + 1) * 2 AS k2, SUM(v) AS total, SUM(SUM(v)) OVER () AS everything FROM g GROUP BY k + 1 ORDER BY k2
SELECT * FROM g GROUP BY k, v, w HAVING COUNT(*) = 1 ORDER BY w
SELECT k, (SELECT COUNT(*) FROM g AS inner_g WHERE inner_g.k = g.k) AS same_k FROM g GROUP BY k ORDER BY k
SELECT o.k, (SELECT MAX(i.v) FROM g AS i GROUP BY i.k HAVING i.k = o.k) AS top_v FROM g AS o ORDER BY o.k, o.w
GO
DROP TABLE dbo.g
GO
