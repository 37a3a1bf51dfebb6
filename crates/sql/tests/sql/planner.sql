-- The planner's access paths and joins (docs/query-processing.md): each query's rows must be
-- what a scan and nested loops would give, whichever seek, join order or algorithm runs.
CREATE DATABASE pl
GO
USE pl
GO
CREATE TABLE c (id INT PRIMARY KEY, city VARCHAR(20) NULL, name NVARCHAR(30) NOT NULL)
CREATE INDEX c_city ON c (city)
CREATE TABLE o (oid INT PRIMARY KEY, cid INT NULL, amt DECIMAL(9, 2) NOT NULL)
CREATE INDEX o_cid ON o (cid)
CREATE TABLE ol (oid INT NOT NULL, ln INT NOT NULL, item INT NOT NULL, PRIMARY KEY (oid, ln))
INSERT INTO c VALUES (1, 'Paris', N'Ann'), (2, 'paris', N'Bob'), (3, 'Lyon', N'Cid'), (4, NULL, N'Dee'), (5, 'Pau', N'Eve')
INSERT INTO o VALUES (10, 1, 5.50), (11, 1, 7), (12, 2, 1), (13, 3, 2.25), (14, NULL, 3), (15, 9, 4)
INSERT INTO ol VALUES (10, 1, 100), (10, 2, 101), (11, 1, 100), (12, 1, 102), (12, 2, 100), (12, 3, 103), (13, 1, 104)
GO
-- Seeks: equality on a key prefix, a range after it, IN lists (a value twice, one that is
-- no INT), IS NULL, LIKE with a prefix (case-insensitive), a bound that is no INT.
SELECT ln, item FROM ol WHERE oid = 12 ORDER BY ln
SELECT oid, ln FROM ol WHERE oid = 12 AND ln > 1 AND ln <= 3 ORDER BY ln
SELECT oid FROM o WHERE oid IN (13, 10, 13, 2.5) ORDER BY oid
SELECT id FROM c WHERE city IS NULL
SELECT id FROM c WHERE city LIKE 'pa%' ORDER BY id
SELECT id FROM c WHERE city = 'PARIS' ORDER BY id
SELECT oid FROM o WHERE oid > 12.5 ORDER BY oid
SELECT oid FROM o WHERE cid = NULL
SELECT oid FROM o WHERE oid BETWEEN 11 AND 13 AND cid IN (1, 2) ORDER BY oid
GO
-- A probe that does not convert to the key's type: the error a scan reports.
SELECT oid FROM o WHERE oid = 'x'
GO
-- Joins in both forms, any order of the sources, with the columns in FROM order.
SELECT c.name, o.oid, ol.ln FROM ol, o, c WHERE ol.oid = o.oid AND o.cid = c.id AND c.city = 'paris' ORDER BY o.oid, ol.ln
SELECT c.name, o.oid, ol.ln FROM c JOIN o ON o.cid = c.id JOIN ol ON ol.oid = o.oid WHERE ol.item = 100 ORDER BY o.oid
SELECT * FROM o, c WHERE c.id = o.cid AND o.amt > 5 ORDER BY o.oid
SELECT COUNT(*) AS pairs FROM c CROSS JOIN o
GO
-- Outer joins, a WHERE condition on the preserved side, and unmatched rows.
SELECT c.id, o.oid FROM c LEFT JOIN o ON o.cid = c.id AND o.amt > 2 WHERE c.id <= 4 ORDER BY c.id, o.oid
SELECT c.id, o.oid FROM c RIGHT JOIN o ON o.cid = c.id ORDER BY o.oid
SELECT c.id, o.oid FROM c FULL JOIN o ON o.cid = c.id ORDER BY c.id, o.oid
SELECT c.id FROM c LEFT JOIN o ON o.cid = c.id WHERE o.oid IS NULL ORDER BY c.id
GO
-- Semi- and anti-joins, with NULLs on both sides.
SELECT id FROM c WHERE EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND o.amt < 6) ORDER BY id
SELECT id FROM c WHERE NOT EXISTS (SELECT 1 FROM o WHERE o.cid = c.id) ORDER BY id
SELECT oid FROM o WHERE cid IN (SELECT id FROM c WHERE city LIKE 'p%') ORDER BY oid
SELECT oid FROM o WHERE cid NOT IN (SELECT id FROM c) ORDER BY oid
SELECT oid FROM o WHERE cid NOT IN (SELECT cid FROM o WHERE oid > 13) ORDER BY oid
SELECT id FROM c WHERE id NOT IN (SELECT cid FROM o WHERE oid > 99) ORDER BY id
GO
-- TOP: the first rows of a seek in key order, and of a cross product.
SELECT TOP 2 ln, item FROM ol WHERE oid = 12 ORDER BY ln
SELECT TOP 1 oid FROM ol WHERE oid > 10 ORDER BY oid, ln
SELECT TOP 3 a.id AS x, b.id AS y FROM c a CROSS JOIN c b
SELECT TOP 2 oid, amt FROM o ORDER BY amt DESC, oid DESC
SELECT TOP 2 oid, ln FROM ol ORDER BY item, oid
GO
-- UPDATE and DELETE qualify their rows through the same plan.
UPDATE o SET amt = amt + 1 FROM o JOIN c ON c.id = o.cid WHERE c.city = 'Lyon'
DELETE ol FROM ol JOIN o ON o.oid = ol.oid WHERE o.cid = 2 AND ol.ln >= 2
SELECT oid, amt FROM o WHERE oid = 13
SELECT oid, ln FROM ol WHERE oid = 12
GO
-- Implied equalities: c.id = o.cid and o.cid = ol.ln give c.id = ol.ln, which the planner
-- may join on first; the rows are the same. A DECIMAL column in the chain compares by value.
SELECT c.id, o.oid, ol.oid AS ol_oid, ol.ln FROM c, o, ol WHERE c.id = o.cid AND o.cid = ol.ln ORDER BY c.id, o.oid, ol.oid
SELECT c.id, o.oid FROM c, o, ol WHERE c.id = o.amt AND o.amt = ol.ln AND ol.oid = 12 ORDER BY c.id, o.oid
GO
