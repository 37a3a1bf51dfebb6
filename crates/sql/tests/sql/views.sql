-- Views: CREATE / ALTER / CREATE OR ALTER / DROP VIEW, a view in FROM (joined, nested, with
-- a column list, over GROUP BY), the catalog views that list them, and SQL Server's errors.
CREATE DATABASE viewdb
GO
USE viewdb
CREATE TABLE dbo.t (id INT PRIMARY KEY, v VARCHAR(10), n INT)
INSERT dbo.t VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)
GO
CREATE VIEW dbo.v1 AS SELECT id, v FROM dbo.t WHERE id > 1
GO
SELECT * FROM v1 ORDER BY id
SELECT x.v, t.n FROM dbo.v1 AS x JOIN dbo.t ON t.id = x.id WHERE t.n = 30
GO
CREATE VIEW v2 (a, total) AS SELECT v, SUM(n) FROM t GROUP BY v
GO
SELECT a, total FROM v2 WHERE total > 10 ORDER BY a
GO
-- A view of a view; rows inserted later show through.
CREATE VIEW v3 AS SELECT a FROM v2 WHERE total >= 20
GO
INSERT dbo.t VALUES (4, 'd', 40)
SELECT a FROM v3 ORDER BY a
GO
-- Errors at CREATE: an unnamed column (4511), a repeated name (4506), ORDER BY without TOP
-- (1033), a column list of the wrong length (8158, 8159), a name in use (2714), a missing
-- table (208), a database prefix (166), not first in its batch (111), not last (156).
CREATE VIEW bad AS SELECT v, SUM(n) FROM t GROUP BY v
GO
CREATE VIEW bad AS SELECT id, id FROM t
GO
CREATE VIEW bad AS SELECT id FROM t ORDER BY id
GO
CREATE VIEW bad (a) AS SELECT id, v FROM t
GO
CREATE VIEW bad (a, b, c) AS SELECT id, v FROM t
GO
CREATE VIEW v1 AS SELECT 1 AS x
GO
CREATE VIEW bad AS SELECT * FROM nothing_here
GO
CREATE VIEW viewdb.dbo.bad AS SELECT 1 AS x
GO
SELECT 1 AS first
CREATE VIEW bad AS SELECT 1 AS x
GO
CREATE VIEW bad AS SELECT 1 AS x
SELECT 2
GO
-- A temporary table is no base for a view (4508).
CREATE TABLE #scratch (x INT)
GO
CREATE VIEW bad AS SELECT x FROM #scratch
GO
DROP TABLE #scratch
GO
-- ORDER BY with TOP is allowed.
CREATE VIEW top2 AS SELECT TOP (2) id FROM t ORDER BY n DESC
GO
SELECT id FROM top2 ORDER BY id
GO
-- ALTER of a missing view (208); CREATE OR ALTER replaces one, keeping its id.
ALTER VIEW nope AS SELECT 1 AS x
GO
DECLARE @before INT = OBJECT_ID('v1')
EXEC ('CREATE OR ALTER VIEW v1 AS SELECT id, v, n FROM t')
SELECT CASE WHEN OBJECT_ID('v1', 'V') = @before THEN 1 ELSE 0 END AS same_id
SELECT id, n FROM v1 WHERE n >= 20 ORDER BY id
GO
-- Catalog views.
CREATE VIEW checked WITH SCHEMABINDING AS SELECT id FROM dbo.t WHERE id < 3 WITH CHECK OPTION
GO
SELECT name, type, type_desc FROM sys.objects WHERE type = 'V' ORDER BY name
SELECT name, with_check_option FROM sys.views ORDER BY name
SELECT TABLE_NAME, TABLE_TYPE FROM INFORMATION_SCHEMA.TABLES ORDER BY TABLE_NAME
SELECT TABLE_NAME, CHECK_OPTION, IS_UPDATABLE FROM INFORMATION_SCHEMA.VIEWS ORDER BY TABLE_NAME
SELECT OBJECT_DEFINITION(OBJECT_ID('v3')) AS definition
SELECT COUNT(*) AS modules FROM sys.sql_modules WHERE object_id = OBJECT_ID('checked')
-- A view's columns are listed as a table's are: what its query returns, with its names.
SELECT c.name, c.column_id, TYPE_NAME(c.system_type_id) AS type, c.max_length, c.is_nullable
FROM sys.columns AS c WHERE c.object_id = OBJECT_ID('v2') ORDER BY c.column_id
SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS
WHERE TABLE_NAME IN ('v1', 'v3') ORDER BY TABLE_NAME, ORDINAL_POSITION
SELECT name FROM syscolumns WHERE id = OBJECT_ID('checked')
GO
-- Changing rows through a view: one base table, plain columns, under the view's names.
CREATE TABLE dbo.items (id INT IDENTITY PRIMARY KEY, label VARCHAR(10), qty INT DEFAULT 5)
INSERT dbo.items (label, qty) VALUES ('a', 10), ('b', 20), ('c', 30)
GO
CREATE VIEW big_items (item, name) AS SELECT id, label FROM dbo.items WHERE qty >= 20
GO
UPDATE big_items SET name = 'B' WHERE item = 2
DELETE FROM big_items WHERE name = 'c'
INSERT big_items (name) VALUES ('new')
INSERT big_items VALUES ('new2')
SELECT id, label, qty FROM dbo.items ORDER BY id
GO
-- An explicit identity value through the view still needs IDENTITY_INSERT (544), and a
-- name the view does not have is error 207.
INSERT big_items (item, name) VALUES (100, 'z')
GO
INSERT big_items (qty) VALUES (1)
GO
-- Not updatable: aggregates (4403), a computed column (4406), a join (4405).
UPDATE v2 SET total = 0
GO
CREATE VIEW doubled AS SELECT id, qty * 2 AS twice FROM dbo.items
GO
UPDATE doubled SET twice = 4
GO
CREATE VIEW joined AS SELECT i.id, t.v FROM dbo.items AS i JOIN dbo.t AS t ON t.id = i.id
GO
DELETE FROM joined
GO
-- WITH CHECK OPTION: a row changed through the view must stay in it (550).
CREATE VIEW positive AS SELECT id, label, qty FROM dbo.items WHERE qty > 0 WITH CHECK OPTION
GO
INSERT positive (label, qty) VALUES ('ok', 3)
GO
INSERT positive (label, qty) VALUES ('neg', -3)
GO
UPDATE positive SET qty = -1 WHERE label = 'ok'
GO
UPDATE positive SET qty = 99 WHERE label = 'ok'
SELECT label, qty FROM dbo.items WHERE label IN ('ok', 'neg')
GO
DROP VIEW big_items, doubled, joined, positive
DROP TABLE dbo.items
GO
-- A view inside a transaction that rolls back goes with it.
BEGIN TRAN
EXEC ('CREATE VIEW vt AS SELECT 1 AS x')
SELECT x FROM vt
ROLLBACK
SELECT OBJECT_ID('vt') AS gone
GO
-- The view's names are its database's, wherever it is used from.
USE master
SELECT COUNT(*) AS rows_seen FROM viewdb.dbo.v1
GO
USE viewdb
GO
-- A cycle made by ALTER VIEW stops at the nesting limit (217).
CREATE VIEW va AS SELECT id FROM t
GO
CREATE VIEW vb AS SELECT id FROM va
GO
ALTER VIEW va AS SELECT id FROM vb
GO
SELECT * FROM vb
GO
DROP VIEW va, vb, v3
DROP VIEW IF EXISTS v3
GO
DROP VIEW v3
GO
USE master
DROP DATABASE viewdb
GO
