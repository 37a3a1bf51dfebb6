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
