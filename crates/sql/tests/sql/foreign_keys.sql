-- FOREIGN KEY constraints: column and table forms, the referencing side (547 on INSERT and
-- UPDATE, NULLs pass, keys compared as the collation compares them), the referenced side
-- (NO ACTION, CASCADE, SET NULL, SET DEFAULT on DELETE and UPDATE, chained cascades),
-- statement-level checking (self-references), MERGE, DROP and TRUNCATE of a referenced
-- table, ALTER TABLE ADD / DROP / NOCHECK / CHECK, the catalog views and the errors.
CREATE DATABASE fkdb
GO
USE fkdb
CREATE TABLE dbo.customer (id INT PRIMARY KEY, email NVARCHAR(40) NOT NULL UNIQUE, region CHAR(2) NULL)
CREATE TABLE dbo.orders (
    id INT PRIMARY KEY,
    customer_id INT NOT NULL REFERENCES dbo.customer (id),
    email NVARCHAR(60) NULL,
    CONSTRAINT fk_orders_email FOREIGN KEY (email) REFERENCES customer (email)
        ON UPDATE CASCADE ON DELETE SET NULL)
CREATE TABLE dbo.line (
    order_id INT NOT NULL,
    n INT NOT NULL,
    PRIMARY KEY (order_id, n),
    CONSTRAINT fk_line_orders FOREIGN KEY (order_id) REFERENCES orders ON DELETE CASCADE ON UPDATE CASCADE)
GO
INSERT customer VALUES (1, N'Ann@example.com', 'EU'), (2, N'bob@example.com', 'US'), (3, N'cy@example.com', NULL)
INSERT orders VALUES (10, 1, N'ann@EXAMPLE.com'), (11, 2, N'bob@example.com'), (12, 2, NULL)
INSERT line VALUES (10, 1), (10, 2), (11, 1), (12, 1)
GO
-- The referencing side: a missing key is refused, the whole statement with it.
INSERT orders VALUES (13, 1, NULL), (14, 9, NULL)
SELECT COUNT(*) AS orders_after_refused_insert FROM orders
GO
UPDATE orders SET customer_id = 7 WHERE id = 10
GO
UPDATE orders SET email = N'nobody@example.com' WHERE id = 10
GO
-- Changing a column that no key covers checks nothing.
UPDATE orders SET id = id WHERE id = 12
SELECT id, customer_id, email FROM orders ORDER BY id
GO
-- The referenced side: NO ACTION refuses while a row references the key.
DELETE customer WHERE id = 2
GO
UPDATE customer SET id = 20 WHERE id = 2
GO
-- A customer nobody references goes.
DELETE customer WHERE id = 3
SELECT id FROM customer ORDER BY id
GO
-- ON UPDATE CASCADE follows the new key; ON DELETE SET NULL clears it.
UPDATE customer SET email = N'ann@new.example.com' WHERE id = 1
SELECT id, email FROM orders ORDER BY id
GO
-- Cascades chain: a new order id moves its lines, deleting an order deletes its lines.
UPDATE orders SET id = 100 WHERE id = 10
SELECT order_id, n FROM line ORDER BY order_id, n
DELETE orders WHERE id = 11
SELECT order_id, n FROM line ORDER BY order_id, n
GO
-- ON DELETE SET DEFAULT: the default must itself be a key.
CREATE TABLE dbo.ticket (id INT PRIMARY KEY, customer_id INT NULL DEFAULT 1
    CONSTRAINT fk_ticket_customer REFERENCES customer ON DELETE SET DEFAULT)
INSERT customer VALUES (4, N'dee@example.com', 'EU')
INSERT ticket VALUES (1, 4), (2, NULL)
DELETE customer WHERE id = 4
SELECT id, customer_id FROM ticket ORDER BY id
GO
-- A self-reference is checked once the statement's rows are in or out.
CREATE TABLE dbo.employee (id INT PRIMARY KEY, boss INT NULL REFERENCES employee (id))
INSERT employee VALUES (3, 2), (2, 1), (1, NULL)
SELECT COUNT(*) AS employees FROM employee
DELETE employee WHERE id = 2
GO
DELETE employee
SELECT COUNT(*) AS employees_left FROM employee
GO
-- MERGE is checked like the statements it stands for.
MERGE orders AS o USING (VALUES (12, 9), (15, 1)) AS s (id, customer_id) ON o.id = s.id
WHEN MATCHED THEN UPDATE SET customer_id = s.customer_id
WHEN NOT MATCHED THEN INSERT (id, customer_id) VALUES (s.id, s.customer_id);
GO
MERGE orders AS o USING (VALUES (15, 1)) AS s (id, customer_id) ON o.id = s.id
WHEN NOT MATCHED THEN INSERT (id, customer_id) VALUES (s.id, s.customer_id);
SELECT id, customer_id FROM orders ORDER BY id
GO
-- Inside a transaction the failed statement alone is undone.
BEGIN TRANSACTION
INSERT orders VALUES (16, 1, NULL)
INSERT orders VALUES (17, 8, NULL)
COMMIT
SELECT id FROM orders ORDER BY id
GO
-- A referenced table cannot be dropped or truncated; the referencing one can.
DROP TABLE customer
GO
TRUNCATE TABLE customer
GO
-- ALTER TABLE: a new key is checked against the rows unless WITH NOCHECK.
CREATE TABLE dbo.region (code CHAR(2) PRIMARY KEY)
INSERT region VALUES ('EU')
GO
ALTER TABLE customer ADD CONSTRAINT fk_customer_region FOREIGN KEY (region) REFERENCES region (code)
GO
ALTER TABLE customer WITH NOCHECK ADD CONSTRAINT fk_customer_region FOREIGN KEY (region) REFERENCES region (code)
GO
INSERT customer VALUES (5, N'eve@example.com', 'XX')
GO
ALTER TABLE customer NOCHECK CONSTRAINT fk_customer_region
INSERT customer VALUES (5, N'eve@example.com', 'XX')
SELECT name, is_disabled, is_not_trusted FROM sys.foreign_keys WHERE name = 'fk_customer_region'
GO
ALTER TABLE customer WITH CHECK CHECK CONSTRAINT fk_customer_region
GO
DELETE customer WHERE id = 5
ALTER TABLE customer WITH CHECK CHECK CONSTRAINT ALL
SELECT name, is_disabled FROM sys.foreign_keys WHERE name = 'fk_customer_region'
GO
-- A key column cannot be dropped, nor the key a foreign key references.
ALTER TABLE line DROP COLUMN order_id
GO
ALTER TABLE region DROP CONSTRAINT missing_one
GO
ALTER TABLE customer DROP CONSTRAINT fk_customer_region
ALTER TABLE customer DROP COLUMN region
DROP TABLE region
SELECT name FROM sys.tables ORDER BY name
GO
-- The catalog views.
SELECT f.name, OBJECT_NAME(f.parent_object_id) AS tbl, OBJECT_NAME(f.referenced_object_id) AS referenced,
       f.key_index_id, f.delete_referential_action, f.delete_referential_action_desc,
       f.update_referential_action_desc, f.is_system_named, f.type, f.type_desc
FROM sys.foreign_keys AS f WHERE f.name NOT LIKE 'FK[_][_]%' ORDER BY f.name
SELECT OBJECT_NAME(c.parent_object_id) AS tbl, COL_NAME(c.parent_object_id, c.parent_column_id) AS col,
       OBJECT_NAME(c.referenced_object_id) AS referenced,
       COL_NAME(c.referenced_object_id, c.referenced_column_id) AS referenced_col, c.constraint_column_id
FROM sys.foreign_key_columns AS c ORDER BY tbl, col
SELECT CONSTRAINT_NAME, UNIQUE_CONSTRAINT_SCHEMA, MATCH_OPTION, UPDATE_RULE, DELETE_RULE
FROM INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_NAME NOT LIKE 'FK[_][_]%' ORDER BY CONSTRAINT_NAME
SELECT TABLE_NAME, CONSTRAINT_TYPE, COUNT(*) AS n FROM INFORMATION_SCHEMA.TABLE_CONSTRAINTS
GROUP BY TABLE_NAME, CONSTRAINT_TYPE ORDER BY TABLE_NAME, CONSTRAINT_TYPE
SELECT k.TABLE_NAME, k.COLUMN_NAME FROM INFORMATION_SCHEMA.KEY_COLUMN_USAGE AS k
JOIN INFORMATION_SCHEMA.TABLE_CONSTRAINTS AS t ON t.CONSTRAINT_NAME = k.CONSTRAINT_NAME
WHERE t.CONSTRAINT_TYPE = 'FOREIGN KEY' ORDER BY k.TABLE_NAME, k.COLUMN_NAME
GO
-- Errors of the definition.
CREATE TABLE bad1 (x BIGINT REFERENCES customer (id))
GO
CREATE TABLE bad2 (x INT REFERENCES customer (region))
GO
CREATE TABLE bad3 (x INT REFERENCES nowhere (id))
GO
CREATE TABLE bad4 (x INT, CONSTRAINT f FOREIGN KEY (y) REFERENCES customer (id))
GO
CREATE TABLE bad5 (x INT REFERENCES customer (nope))
GO
CREATE TABLE bad6 (x INT REFERENCES employee_view)
GO
CREATE TABLE bad7 (x INT, y INT, CONSTRAINT f FOREIGN KEY (x, y) REFERENCES customer (id))
GO
CREATE TABLE bad8 (x INT NOT NULL REFERENCES customer ON DELETE SET NULL)
GO
CREATE TABLE bad9 (id INT PRIMARY KEY, parent INT REFERENCES bad9 ON DELETE CASCADE)
GO
CREATE TABLE bad10 (x INT REFERENCES otherdb.dbo.customer (id))
GO
CREATE TABLE nokey (x INT)
GO
CREATE TABLE bad11 (x INT REFERENCES nokey)
GO
SELECT name FROM sys.tables WHERE name LIKE 'bad%'
GO
-- A #temporary table skips its foreign keys, with SQL Server's warning.
CREATE TABLE #t (x INT REFERENCES customer (id))
INSERT #t VALUES (12345)
SELECT x FROM #t
GO
USE master
DROP DATABASE fkdb
GO
-- What ODBC's SQLPrimaryKeys and SQLForeignKeys (JDBC's getPrimaryKeys, getImportedKeys)
-- call.
CREATE DATABASE fkmeta
GO
USE fkmeta
CREATE TABLE dbo.parent (a INT NOT NULL, b INT NOT NULL, CONSTRAINT pk_parent PRIMARY KEY (a, b))
CREATE TABLE dbo.child (id INT PRIMARY KEY, pa INT, pb INT,
    CONSTRAINT fk_child_parent FOREIGN KEY (pa, pb) REFERENCES parent (a, b) ON DELETE CASCADE)
EXEC sp_pkeys @table_name = 'parent'
EXEC sp_fkeys @pktable_name = 'parent'
EXEC sp_fkeys @fktable_name = 'child', @fktable_owner = 'dbo'
GO
EXEC sp_fkeys
GO
USE master
DROP DATABASE fkmeta
