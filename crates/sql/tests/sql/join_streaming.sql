-- SELECTs over joins whose rows go to the client as the join's last step makes them
-- (join/stream.rs, `Run::stream_join`): the same rows, columns and types as collected ones,
-- TOP and SET ROWCOUNT stop the join, and an error ends the result set after the rows
-- before it, as in SQL Server.
CREATE TABLE a (id INT PRIMARY KEY, g INT, pad VARCHAR(10));
CREATE TABLE b (id INT PRIMARY KEY, g INT, name VARCHAR(12));
CREATE TABLE c (id INT PRIMARY KEY, bid INT, x DECIMAL(5, 2));
INSERT INTO a VALUES (1, 1, 'one'), (2, 0, 'two'), (3, 1, NULL), (4, 0, 'four'), (5, NULL, 'five');
INSERT INTO b VALUES (10, 0, 'ten'), (11, 1, 'eleven'), (12, 1, NULL), (13, 2, 'thirteen');
INSERT INTO c VALUES (100, 10, 1.5), (101, 11, 22.25), (102, 11, NULL), (103, 99, 3);
GO
-- Inner, comma with WHERE, cross; the columns in the FROM clause's order.
SELECT a.id, b.id, a.pad, b.name FROM a JOIN b ON a.g = b.g ORDER BY a.id, b.id;
SELECT * FROM b, a WHERE a.g = b.g AND a.id < 4 ORDER BY b.id DESC, a.id;
SELECT COUNT(*) AS n FROM (SELECT a.id FROM a CROSS JOIN b) AS d;
SELECT a.id, b.id FROM a CROSS JOIN b WHERE a.id = 1 ORDER BY b.id;
SELECT @@ROWCOUNT AS rc;
GO
-- Three tables, written in another order than the plan may join them.
SELECT * FROM c JOIN b ON c.bid = b.id JOIN a ON a.g = b.g ORDER BY c.id, a.id;
SELECT c.x, a.pad FROM a, b, c WHERE a.g = b.g AND c.bid = b.id AND c.x > 2 ORDER BY a.id;
GO
-- An outer join within an inner one; NULLs.
SELECT a.id, b.name, c.x
FROM a LEFT JOIN b ON a.g = b.g JOIN c ON c.bid = b.id OR c.bid = 99
ORDER BY a.id, b.name, c.x;
SELECT a.id, b.id AS bid FROM a JOIN b ON a.g = b.g WHERE a.pad IS NULL OR b.name IS NULL
ORDER BY 1, 2;
GO
-- ORDER BY expressions, of either side, and descending.
SELECT a.id, b.id AS bid FROM a JOIN b ON a.g = b.g ORDER BY a.id * 10 - b.id DESC;
SELECT a.pad, b.name FROM a JOIN b ON a.g = b.g ORDER BY LEN(b.name), a.pad DESC;
GO
-- TOP with and without ORDER BY, SET ROWCOUNT.
SELECT TOP (2) a.id, b.id AS bid FROM a JOIN b ON a.g = b.g ORDER BY b.id DESC, a.id DESC;
SELECT COUNT(*) AS n FROM (SELECT TOP (3) a.id FROM a JOIN b ON a.g = b.g) AS d;
SELECT TOP (0) a.id FROM a JOIN b ON a.g = b.g;
SET ROWCOUNT 3;
SELECT a.id, b.id AS bid FROM a JOIN b ON a.g = b.g ORDER BY a.id, b.id;
SELECT @@ROWCOUNT AS rc;
SET ROWCOUNT 0;
GO
-- Expression columns typed by their values, widened by later ones.
SELECT a.id, b.id AS bid, a.pad + '-' + b.name AS pn, c.x * 2 AS x2, a.id + 0.5 AS h
FROM a JOIN b ON a.g = b.g LEFT JOIN c ON c.bid = b.id ORDER BY a.id, b.id, c.id;
SELECT CASE WHEN a.id = 1 THEN 1 ELSE 1.25 END AS w, b.name + a.pad AS s
FROM a JOIN b ON a.g = b.g WHERE b.id = 11 ORDER BY a.id;
GO
-- Without ORDER BY, in the join's own order: two tables, three, TOP and SET ROWCOUNT.
SELECT a.id, b.id AS bid, b.name FROM a JOIN b ON a.g = b.g;
SELECT * FROM c JOIN b ON c.bid = b.id JOIN a ON a.g = b.g WHERE a.id > 1;
SELECT TOP (4) a.id, b.id AS bid FROM a CROSS JOIN b;
SET ROWCOUNT 2;
SELECT a.pad, b.name FROM b JOIN a ON a.g = b.g;
SET ROWCOUNT 0;
GO
-- An error on the row of a.id = 3: rows before it, in the join's order, then Msg 8134.
SELECT a.id, b.id AS bid, 10 / (a.id - 3) AS q FROM a JOIN b ON a.g = b.g WHERE b.id = 11;
GO
-- The same error under an ORDER BY: no rows, as every row is projected before the first.
SELECT a.id, 10 / (a.id - 3) AS q FROM a JOIN b ON a.g = b.g ORDER BY a.id;
SELECT 'after' AS s;
GO
-- An unknown column is refused before any row, also when none would come.
SELECT a.id, b.nope FROM a JOIN b ON a.g = b.g WHERE 1 = 0;
GO
