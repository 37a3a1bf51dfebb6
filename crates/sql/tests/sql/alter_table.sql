-- ALTER TABLE ADD / DROP COLUMN / ALTER COLUMN / constraints, and sp_rename.
CREATE DATABASE alt
GO
USE alt
GO
CREATE TABLE t (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), qty INT)
CREATE INDEX t_name ON t (name)
INSERT INTO t VALUES (1, 'one', 10), (2, 'two', NULL), (3, 'three', 30)
GO
-- ADD: a nullable column is NULL in existing rows; a NOT NULL one with a DEFAULT gets it;
-- WITH VALUES gives a nullable column its default; several columns at once.
ALTER TABLE t ADD note VARCHAR(10) NULL
ALTER TABLE t ADD flag BIT NOT NULL CONSTRAINT df_flag DEFAULT 1
ALTER TABLE t ADD c1 INT NULL DEFAULT 7 WITH VALUES, c2 INT NULL DEFAULT 8
GO
SELECT * FROM t
SELECT name, column_id, TYPE_NAME(system_type_id) AS type, max_length, is_nullable FROM sys.columns WHERE object_id = OBJECT_ID('t') ORDER BY column_id
INSERT INTO t (id, name) VALUES (4, 'four')
SELECT id, flag, c1, c2 FROM t WHERE id = 4
SELECT name FROM t WHERE name = 'two'
DBCC CHECKTABLE ('t') WITH NO_INFOMSGS
GO
-- ADD errors: NOT NULL without a default on a non-empty table (4901), a name taken (2705),
-- a second identity column (2744), a table that does not exist (4902).
ALTER TABLE t ADD must INT NOT NULL
GO
ALTER TABLE t ADD name INT
GO
CREATE TABLE ident (id INT IDENTITY(1,1), v CHAR(1))
GO
ALTER TABLE ident ADD id2 INT IDENTITY(1,1)
GO
ALTER TABLE nosuch ADD c INT
GO
-- NOT NULL without a default is fine on an empty table; an identity column numbers the rows.
CREATE TABLE e (a INT)
ALTER TABLE e ADD b INT NOT NULL
CREATE TABLE h (v CHAR(1))
INSERT INTO h VALUES ('x'), ('y'), ('z')
ALTER TABLE h ADD id INT IDENTITY(100, 10)
INSERT INTO h (v) VALUES ('w')
SELECT v, id FROM h
SELECT CAST(IDENT_CURRENT('h') AS INT) AS ident_current
GO
-- DROP COLUMN errors: no such column (4924), an index depends on it (5074, 4922), its
-- DEFAULT does (5074, 4922), the only column (4923).
ALTER TABLE t DROP COLUMN nothing_here
GO
ALTER TABLE t DROP COLUMN name
GO
ALTER TABLE t DROP COLUMN c1
GO
ALTER TABLE e DROP COLUMN a, b
GO
-- DROP: DEFAULTs by the names sys.default_constraints shows, then their columns, in one
-- statement; IF EXISTS. The other values stay; the index still finds rows.
DECLARE @d1 SYSNAME = (SELECT d.name FROM sys.default_constraints d JOIN sys.columns c ON c.object_id = d.parent_object_id AND c.column_id = d.parent_column_id WHERE c.object_id = OBJECT_ID('t') AND c.name = 'c1')
DECLARE @d2 SYSNAME = (SELECT d.name FROM sys.default_constraints d JOIN sys.columns c ON c.object_id = d.parent_object_id AND c.column_id = d.parent_column_id WHERE c.object_id = OBJECT_ID('t') AND c.name = 'c2')
DECLARE @d3 SYSNAME = (SELECT d.name FROM sys.default_constraints d JOIN sys.columns c ON c.object_id = d.parent_object_id AND c.column_id = d.parent_column_id WHERE c.object_id = OBJECT_ID('t') AND c.name = 'flag')
EXEC ('ALTER TABLE t DROP CONSTRAINT ' + @d1 + ', ' + @d2 + ', ' + @d3 + ', COLUMN c1, c2, flag')
ALTER TABLE t DROP COLUMN IF EXISTS nothing_here, note
GO
SELECT * FROM t
SELECT name, column_id FROM sys.columns WHERE object_id = OBJECT_ID('t') ORDER BY column_id
SELECT COUNT(*) AS defaults_left FROM sys.default_constraints WHERE parent_object_id = OBJECT_ID('t')
SELECT id FROM t WHERE name = 'three'
DBCC CHECKTABLE ('t') WITH NO_INFOMSGS
GO
-- ALTER COLUMN: values converted; widening an indexed VARCHAR is allowed.
ALTER TABLE t ALTER COLUMN qty BIGINT NULL
ALTER TABLE t ALTER COLUMN name VARCHAR(40) NULL
GO
SELECT name, TYPE_NAME(system_type_id) AS type, max_length, is_nullable FROM sys.columns WHERE object_id = OBJECT_ID('t') ORDER BY column_id
SELECT * FROM t
SELECT id FROM t WHERE name = 'four'
DBCC CHECKTABLE ('t') WITH NO_INFOMSGS
GO
-- ALTER COLUMN errors: NOT NULL over NULLs (515), a failed conversion (245) and truncation
-- (2628) change nothing; an index depends on the column (5074, 4922); no such column (4924).
ALTER TABLE t ALTER COLUMN qty BIGINT NOT NULL
GO
ALTER TABLE t ADD code VARCHAR(5) NULL
GO
UPDATE t SET code = 'abc' WHERE id = 1
GO
ALTER TABLE t ALTER COLUMN code INT
GO
ALTER TABLE t ALTER COLUMN code VARCHAR(2)
GO
ALTER TABLE t ALTER COLUMN name INT
GO
ALTER TABLE t ALTER COLUMN nothing_here INT
GO
SELECT id, code, qty FROM t
SELECT name, TYPE_NAME(system_type_id) AS type, max_length, is_nullable FROM sys.columns WHERE object_id = OBJECT_ID('t') ORDER BY column_id
GO
-- Once no NULL is left, NOT NULL succeeds and holds for new rows.
UPDATE t SET qty = 0 WHERE qty IS NULL
ALTER TABLE t ALTER COLUMN qty BIGINT NOT NULL
GO
INSERT INTO t (id, name) VALUES (5, 'five')
GO
-- CHECK constraints: checked against existing rows (547) unless WITH NOCHECK; dropped by name.
ALTER TABLE t ADD CONSTRAINT ck_qty CHECK (qty < 20)
GO
ALTER TABLE t ADD CONSTRAINT ck_qty CHECK (qty >= 0)
ALTER TABLE t WITH NOCHECK ADD CONSTRAINT ck_id CHECK (id < 4)
SELECT name, definition FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID('t') ORDER BY name
GO
INSERT INTO t (id, name, qty) VALUES (6, 'six', -1)
GO
ALTER TABLE t DROP CONSTRAINT ck_id
ALTER TABLE t DROP CONSTRAINT no_such_constraint
GO
-- DEFAULT ... FOR an existing column.
ALTER TABLE t ADD CONSTRAINT df_code DEFAULT 'zz' FOR code
INSERT INTO t (id, name, qty) VALUES (7, 'seven', 7)
SELECT id, code FROM t WHERE id = 7
GO
ALTER TABLE t ADD DEFAULT 'yy' FOR code
GO
-- Rollback leaves the old table: its columns, constraints and rows.
BEGIN TRAN
ALTER TABLE t ADD extra INT NULL DEFAULT 5 WITH VALUES
ALTER TABLE t ALTER COLUMN name VARCHAR(100)
ALTER TABLE t DROP CONSTRAINT ck_qty
ALTER TABLE t DROP COLUMN qty
SELECT * FROM t
ROLLBACK
SELECT name, TYPE_NAME(system_type_id) AS type, max_length FROM sys.columns WHERE object_id = OBJECT_ID('t') ORDER BY column_id
SELECT name FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID('t')
SELECT * FROM t
DBCC CHECKTABLE ('t') WITH NO_INFOMSGS
GO
-- A CHECK constraint's column cannot be dropped (5074, 4922).
ALTER TABLE t DROP COLUMN qty
GO
-- sp_rename: a table (same object id), a column (its CHECK follows it), an index.
DECLARE @before INT = OBJECT_ID('t')
EXEC sp_rename 'dbo.t', 'items'
SELECT CASE WHEN OBJECT_ID('items') = @before THEN 'same id' ELSE 'new id' END AS id_kept, OBJECT_ID('t') AS old_name
GO
EXEC sp_rename 'items.qty', 'quantity', 'COLUMN'
EXEC sp_rename 'items.t_name', 'items_name', 'INDEX'
SELECT name FROM sys.columns WHERE object_id = OBJECT_ID('items') ORDER BY column_id
SELECT name FROM sys.indexes WHERE object_id = OBJECT_ID('items') ORDER BY index_id
SELECT name, definition FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID('items')
GO
INSERT INTO items (id, name, quantity) VALUES (8, 'eight', -5)
GO
-- sp_rename errors: no such object (15248), a name in use (15335), a bad type (15249).
EXEC sp_rename 'nosuch', 'x'
GO
EXEC sp_rename 'items.nosuch', 'x', 'COLUMN'
GO
EXEC sp_rename 'items', 'ident'
GO
EXEC sp_rename 'items.name', 'code', 'COLUMN'
GO
EXEC sp_rename 'items', 'x', 'TRIGGER'
GO
-- A rename rolls back.
BEGIN TRAN
EXEC sp_rename 'items', 'renamed'
ROLLBACK
SELECT OBJECT_ID('items') - OBJECT_ID('items') AS still_there, OBJECT_ID('renamed') AS gone
GO
-- PRIMARY KEY and UNIQUE constraints: a clustered primary key added to a heap orders it;
-- refused: a second primary key (1779), a nullable key column (8111), duplicate keys (1505),
-- each followed by 1750; dropped: the table is a heap again, its other indexes rebuilt.
CREATE TABLE k (a INT NOT NULL, b INT NULL, c VARCHAR(5))
INSERT INTO k VALUES (3, 1, 'x'), (1, 2, 'y'), (2, 2, 'z')
CREATE INDEX k_c ON k (c)
GO
ALTER TABLE k ADD CONSTRAINT k_pk PRIMARY KEY (a)
ALTER TABLE k ADD CONSTRAINT k_uc UNIQUE (c)
SELECT a, b, c FROM k
SELECT name, index_id, type_desc, is_primary_key, is_unique_constraint FROM sys.indexes WHERE object_id = OBJECT_ID('k') ORDER BY index_id
DBCC CHECKTABLE ('k') WITH NO_INFOMSGS
GO
ALTER TABLE k ADD CONSTRAINT k_pk2 PRIMARY KEY NONCLUSTERED (a)
GO
ALTER TABLE e ADD PRIMARY KEY (a)
GO
ALTER TABLE k ADD CONSTRAINT k_ub UNIQUE (b)
GO
INSERT INTO k VALUES (4, 4, 'x')
GO
ALTER TABLE k DROP CONSTRAINT k_pk, k_uc
INSERT INTO k VALUES (0, 0, 'w'), (0, 0, 'w')
SELECT a, c FROM k
SELECT name, index_id, type_desc FROM sys.indexes WHERE object_id = OBJECT_ID('k') ORDER BY index_id
SELECT a FROM k WHERE c = 'z'
DBCC CHECKTABLE ('k') WITH NO_INFOMSGS
GO
USE master
DROP DATABASE alt
GO
-- A CHECK that calls YEAR() does not depend on a column named year: the column drops, and a
-- rename of another column named like a function leaves the call alone.
CREATE TABLE dbo.yr (id INT PRIMARY KEY, d DATE, [year] INT, CHECK (YEAR(d) > 2000))
INSERT dbo.yr VALUES (1, '2020-01-01', 5)
ALTER TABLE dbo.yr DROP COLUMN [year]
ALTER TABLE dbo.yr ADD [month] INT NULL
EXEC sp_rename 'dbo.yr.month', 'mon', 'COLUMN'
INSERT dbo.yr (id, d) VALUES (2, '2021-06-01')
SELECT id, d FROM dbo.yr ORDER BY id
GO
INSERT dbo.yr (id, d) VALUES (3, '1999-06-01')
GO
-- A rename stays when a later statement of its batch fails.
CREATE TABLE dbo.rn (id INT PRIMARY KEY)
INSERT rn VALUES (1)
GO
EXEC sp_rename 'rn', 'rn2'
INSERT rn2 VALUES (1)
GO
SELECT name FROM sys.tables WHERE name LIKE 'rn%'
DROP TABLE rn2
GO
