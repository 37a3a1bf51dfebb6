-- Computed columns: `name AS expression [PERSISTED] [NOT NULL]` in CREATE TABLE and ALTER TABLE
-- ADD, computed at every insert and update, typed by their expression, refused as targets
-- (271), dependencies (5074, 4922, 4928, 1759), and the catalog views.
CREATE DATABASE ccdb
GO
USE ccdb
CREATE TABLE dbo.line (
    id INT IDENTITY PRIMARY KEY,
    qty INT NOT NULL,
    price DECIMAL(8, 2) NOT NULL,
    total AS (qty * price) PERSISTED,
    label AS 'line ' + CAST(id AS VARCHAR(10)),
    big AS CASE WHEN qty * price > 10 THEN 1 ELSE 0 END)
GO
INSERT line (qty, price) VALUES (2, 3.50), (5, 1.25)
INSERT line VALUES (1, 9.99)
SELECT id, qty, price, total, label, big FROM line ORDER BY id
GO
-- An update recomputes; MERGE too.
UPDATE line SET qty = 10 WHERE id = 1
MERGE line AS l USING (VALUES (2, 7)) AS s (id, qty) ON l.id = s.id
WHEN MATCHED THEN UPDATE SET qty = s.qty;
SELECT id, qty, total, big FROM line ORDER BY id
GO
-- A computed column takes no value.
INSERT line (qty, price, total) VALUES (1, 1, 1)
GO
UPDATE line SET total = 5
GO
-- Its type is its expression's.
SELECT c.name, TYPE_NAME(c.system_type_id) AS type, c.precision, c.scale, c.is_computed, c.is_nullable
FROM sys.columns AS c WHERE c.object_id = OBJECT_ID('line') ORDER BY c.column_id
SELECT name, definition, is_persisted FROM sys.computed_columns ORDER BY name
SELECT COLUMNPROPERTY(OBJECT_ID('line'), 'total', 'IsComputed') AS total_computed,
       COLUMNPROPERTY(OBJECT_ID('line'), 'qty', 'IsComputed') AS qty_computed
GO
-- Indexes and constraints may use it.
CREATE INDEX ix_line_total ON line (total)
SELECT id FROM line WHERE total > 10 ORDER BY id
GO
-- ALTER TABLE ADD computes the existing rows; dependencies hold.
ALTER TABLE line ADD doubled AS (qty * 2)
SELECT id, doubled FROM line ORDER BY id
GO
ALTER TABLE line DROP COLUMN qty
GO
ALTER TABLE line ALTER COLUMN doubled BIGINT
GO
ALTER TABLE line DROP COLUMN doubled
SELECT name FROM sys.columns WHERE object_id = OBJECT_ID('line') ORDER BY column_id
GO
-- Errors of the definition.
CREATE TABLE bad1 (a INT, b AS (a + 1), c AS (b * 2))
GO
CREATE TABLE bad2 (a INT, b AS (nope + 1))
GO
SELECT name FROM sys.tables ORDER BY name
GO
USE master
DROP DATABASE ccdb
