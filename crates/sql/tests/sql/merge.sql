-- MERGE, and common table expressions in INSERT, UPDATE and DELETE.
CREATE DATABASE mergedb
GO
USE mergedb
CREATE TABLE dbo.stock (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT NOT NULL CHECK (qty >= 0))
INSERT dbo.stock VALUES (1, 'apple', 10), (2, 'pear', 5), (3, 'plum', 0)
GO
-- Upsert from VALUES: one row updated, one inserted; the count is both.
MERGE INTO dbo.stock AS t
USING (VALUES (2, 'pear', 7), (4, 'fig', 3)) AS s (id, name, qty)
ON t.id = s.id
WHEN MATCHED THEN UPDATE SET qty = t.qty + s.qty
WHEN NOT MATCHED THEN INSERT (id, name, qty) VALUES (s.id, s.name, s.qty);
SELECT @@ROWCOUNT AS merged
SELECT id, name, qty FROM dbo.stock ORDER BY id
GO
-- From a table, with every kind of clause and AND conditions: matched rows with qty 0 in
-- the source are deleted, others updated; new rows inserted only when qty > 0; target rows
-- missing from the source are zeroed unless already 0, then deleted.
CREATE TABLE dbo.delivery (id INT, name VARCHAR(20), qty INT)
INSERT dbo.delivery VALUES (1, 'apple', 0), (2, 'pear', 1), (5, 'kiwi', 2), (6, 'lime', 0)
MERGE dbo.stock t
USING dbo.delivery s ON t.id = s.id
WHEN MATCHED AND s.qty = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET t.qty = s.qty, t.name = UPPER(s.name)
WHEN NOT MATCHED BY TARGET AND s.qty > 0 THEN INSERT VALUES (s.id, s.name, s.qty)
WHEN NOT MATCHED BY SOURCE AND t.qty > 0 THEN UPDATE SET qty = 0
WHEN NOT MATCHED BY SOURCE THEN DELETE;
SELECT @@ROWCOUNT AS merged
SELECT id, name, qty FROM dbo.stock ORDER BY id
GO
-- OUTPUT $action with INSERTED and DELETED, into a table variable.
DECLARE @log TABLE (act NVARCHAR(10), old_id INT, new_id INT, new_qty INT)
MERGE dbo.stock AS t
USING (SELECT 2 AS id, 9 AS qty UNION ALL SELECT 7, 1) AS s
ON t.id = s.id
WHEN MATCHED THEN UPDATE SET qty = s.qty
WHEN NOT MATCHED THEN INSERT (id, name, qty) VALUES (s.id, 'new', s.qty)
OUTPUT $action, DELETED.id, INSERTED.id, INSERTED.qty INTO @log;
SELECT act, old_id, new_id, new_qty FROM @log ORDER BY act
GO
-- OUTPUT as a result set, with a source column; DELETE gives NULL INSERTED values.
MERGE dbo.stock AS t
USING (VALUES (7)) AS s (id) ON t.id = s.id
WHEN MATCHED THEN DELETE
OUTPUT $action AS act, s.id AS source_id, DELETED.name, INSERTED.name;
GO
-- A CTE as the source, and DEFAULT VALUES into a table with defaults.
CREATE TABLE dbo.counters (id INT IDENTITY(1,1) PRIMARY KEY, hits INT DEFAULT 0)
;WITH wanted AS (SELECT 1 AS n UNION ALL SELECT 2)
MERGE dbo.counters AS t USING wanted AS s ON t.id = s.n
WHEN NOT MATCHED THEN INSERT DEFAULT VALUES;
SELECT id, hits FROM dbo.counters
GO
-- TOP limits the rows acted on.
MERGE TOP (1) dbo.counters AS t USING (VALUES (1), (2)) AS s (n) ON t.id = s.n
WHEN MATCHED THEN UPDATE SET hits = hits + 1;
SELECT @@ROWCOUNT AS merged
GO
-- Errors: no semicolon (10713), a target row matched twice (8672), two UPDATE actions for
-- matched rows (10714), an action a clause cannot take (10710, 10711).
MERGE dbo.stock AS t USING dbo.delivery AS s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET qty = 1
GO
MERGE dbo.stock AS t USING (VALUES (2, 1), (2, 2)) AS s (id, qty) ON t.id = s.id
WHEN MATCHED THEN UPDATE SET qty = s.qty;
GO
MERGE dbo.stock AS t USING dbo.delivery AS s ON t.id = s.id
WHEN MATCHED AND s.qty > 1 THEN UPDATE SET qty = 1
WHEN MATCHED THEN UPDATE SET qty = 2;
GO
MERGE dbo.stock AS t USING dbo.delivery AS s ON t.id = s.id
WHEN MATCHED THEN DELETE
WHEN MATCHED AND s.qty > 1 THEN UPDATE SET qty = 1;
GO
MERGE dbo.stock AS t USING dbo.delivery AS s ON t.id = s.id
WHEN NOT MATCHED THEN DELETE;
GO
MERGE dbo.stock AS t USING dbo.delivery AS s ON t.id = s.id
WHEN MATCHED THEN INSERT VALUES (1, 'x', 1);
GO
-- A duplicate source row only inserted is no error (nothing is updated twice).
MERGE dbo.delivery AS t USING (VALUES (8), (8)) AS s (id) ON t.id = s.id
WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'dup', 1);
SELECT COUNT(*) AS dups FROM dbo.delivery WHERE id = 8
GO
-- A failure part way (a CHECK constraint) undoes the whole statement.
SELECT COUNT(*) AS before_count, SUM(qty) AS before_qty FROM dbo.stock
MERGE dbo.stock AS t USING (VALUES (2, 5), (9, -1)) AS s (id, qty) ON t.id = s.id
WHEN MATCHED THEN UPDATE SET qty = s.qty
WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'bad', s.qty);
SELECT COUNT(*) AS after_count, SUM(qty) AS after_qty FROM dbo.stock
GO
-- Inside a transaction: ROLLBACK undoes a MERGE.
BEGIN TRANSACTION
MERGE dbo.stock AS t USING (VALUES (2)) AS s (id) ON t.id = s.id
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED BY SOURCE THEN DELETE;
SELECT COUNT(*) AS in_tran FROM dbo.stock
ROLLBACK
SELECT COUNT(*) AS after_rollback FROM dbo.stock
GO
-- CTEs in INSERT, UPDATE and DELETE.
CREATE TABLE dbo.q (id INT PRIMARY KEY, v INT)
;WITH src AS (SELECT 1 AS a, 10 AS b UNION ALL SELECT 2, 20 UNION ALL SELECT 3, 30)
INSERT INTO dbo.q (id, v) SELECT a, b FROM src
;WITH bump AS (SELECT id, v * 2 AS nv FROM dbo.q WHERE id < 3)
UPDATE q SET v = bump.nv FROM dbo.q AS q JOIN bump ON bump.id = q.id
;WITH gone AS (SELECT id FROM dbo.q WHERE v = 30)
DELETE q FROM dbo.q AS q JOIN gone ON gone.id = q.id
SELECT id, v FROM dbo.q ORDER BY id
GO
-- A recursive CTE feeding an INSERT, with MAXRECURSION.
WITH n AS (SELECT 10 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 14)
INSERT dbo.q (id, v) SELECT i, i * i FROM n OPTION (MAXRECURSION 10)
SELECT COUNT(*) AS rows_now FROM dbo.q
GO
-- An updatable CTE: DELETE and UPDATE through a single-table CTE change its base rows.
WITH firsttwo AS (SELECT TOP (2) * FROM dbo.q WHERE id >= 10 ORDER BY id)
DELETE FROM firsttwo;
WITH lastone AS (SELECT TOP (1) id AS k, v AS val FROM dbo.q ORDER BY id DESC)
UPDATE lastone SET val = -1 WHERE k > 0
SELECT id, v FROM dbo.q ORDER BY id
GO
-- A CTE over a join or with GROUP BY is not updatable.
WITH j AS (SELECT q.id FROM dbo.q AS q JOIN dbo.stock AS s ON s.id = q.id)
DELETE FROM j
GO
WITH g AS (SELECT v FROM dbo.q GROUP BY v)
DELETE FROM g
GO
-- Too many values for the column list is 110, too few 109 (as in INSERT).
MERGE dbo.q AS t USING (VALUES (500)) AS s(id) ON t.id = s.id
WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id, 1);
GO
MERGE dbo.q AS t USING (VALUES (500)) AS s(id) ON t.id = s.id
WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id);
GO
