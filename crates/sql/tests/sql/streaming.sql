-- SELECTs whose rows go to the client as they are read (join/stream.rs): the same results
-- as collected ones, TOP and SET ROWCOUNT stop the read, and an error ends the result set
-- after the rows before it, as in SQL Server.
CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), n INT);
CREATE INDEX ix_n ON t (n);
INSERT INTO t VALUES (1, '10', 30), (2, '20', 20), (3, 'x', 10), (4, '40', NULL);
GO
SELECT * FROM t;
SELECT id, CAST(v AS VARCHAR(5)) AS v5 FROM t WHERE n >= 20;
GO
-- The third row does not convert: two rows, then the error.
SELECT id, CAST(v AS INT) AS v FROM t;
GO
-- TOP ends the read before the row that would fail.
SELECT TOP 2 id, CAST(v AS INT) AS v FROM t;
SET ROWCOUNT 2;
SELECT id, CAST(v AS INT) AS v FROM t;
SET ROWCOUNT 0;
GO
-- An ORDER BY the clustered key reads in is streamed; another is sorted.
SELECT id, n FROM t ORDER BY id;
SELECT id, n FROM t ORDER BY n;
SELECT n AS id, id AS n FROM t ORDER BY id;
GO
-- A nonclustered seek, a view, a table variable, a derived table.
SELECT id FROM t WHERE n = 20;
GO
CREATE VIEW tv AS SELECT id, v FROM t WHERE id > 1;
GO
SELECT * FROM tv WHERE v <> 'x';
DECLARE @t TABLE (a INT);
INSERT INTO @t VALUES (5), (6);
SELECT a FROM @t WHERE a > 5;
SELECT d.id FROM (SELECT id FROM t WHERE n IS NULL) AS d;
GO
