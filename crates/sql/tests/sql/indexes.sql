-- CREATE INDEX forms on existing tables, including a clustered index built on a heap.
CREATE DATABASE ix
GO
USE ix
GO
CREATE TABLE h (id INT NOT NULL, grp INT, name VARCHAR(20))
INSERT INTO h VALUES (3, 1, 'c'), (1, 2, 'a'), (2, 1, 'b'), (2, 2, 'b2')
CREATE NONCLUSTERED INDEX h_name ON h (name)
GO
-- A heap returns rows in insertion order; a clustered index orders them by key.
SELECT id, name FROM h
GO
CREATE CLUSTERED INDEX h_id ON h (id)
GO
SELECT id, name FROM h
SELECT name FROM h WHERE name = 'b2'
SELECT i.name, i.index_id, i.type_desc, i.is_unique FROM sys.indexes i WHERE i.object_id = OBJECT_ID('h') ORDER BY i.index_id
SELECT c.name, ic.index_id, ic.key_ordinal FROM sys.index_columns ic JOIN sys.columns c ON c.object_id = ic.object_id AND c.column_id = ic.column_id WHERE ic.object_id = OBJECT_ID('h')
GO
-- Equal keys stay distinct rows in a non-unique clustered index.
INSERT INTO h VALUES (2, 3, 'b3')
UPDATE h SET grp = 9 WHERE id = 2 AND name = 'b'
UPDATE h SET id = 0 WHERE name = 'b2'
DELETE FROM h WHERE name = 'c'
SELECT id, grp, name FROM h
GO
-- A second clustered index is refused.
CREATE CLUSTERED INDEX h_grp ON h (grp)
GO
-- A unique clustered index on duplicate keys fails with 1505 and leaves the heap intact.
CREATE TABLE d (k INT, v INT)
INSERT INTO d VALUES (1, 1), (2, 2), (1, 3)
GO
CREATE UNIQUE CLUSTERED INDEX d_k ON d (k)
GO
SELECT k, v FROM d
GO
CREATE UNIQUE CLUSTERED INDEX d_kv ON d (k, v)
INSERT INTO d VALUES (1, 1)
GO
SELECT k, v FROM d
GO
-- Rolled back with its transaction.
CREATE TABLE r (k INT)
INSERT INTO r VALUES (2), (1)
BEGIN TRAN
CREATE CLUSTERED INDEX r_k ON r (k)
ROLLBACK
INSERT INTO r VALUES (0)
SELECT k FROM r
GO
-- DROP INDEX: a nonclustered index goes (in both spellings); a rollback brings it back; the
-- indexes that enforce a constraint, and missing ones, are errors.
CREATE TABLE di (k INT PRIMARY KEY, v VARCHAR(10), w INT CONSTRAINT di_w UNIQUE)
CREATE INDEX di_v ON di (v)
INSERT INTO di VALUES (1, 'a', 10), (2, 'b', 20)
BEGIN TRAN
DROP INDEX di_v ON di
ROLLBACK
SELECT name FROM sys.indexes WHERE object_id = OBJECT_ID('di') ORDER BY index_id
DROP INDEX di.di_v
DROP INDEX IF EXISTS di_v ON di
SELECT name FROM sys.indexes WHERE object_id = OBJECT_ID('di') ORDER BY index_id
CREATE INDEX di_v ON di (v, w)
SELECT k FROM di WHERE v = 'b'
GO
DROP INDEX di_v2 ON di
GO
DROP INDEX di_w ON di
GO
DROP INDEX di_v ON nosuch
GO
DBCC CHECKTABLE ('di')
GO
USE master
DROP DATABASE ix
GO
-- Inline indexes (SQL Server 2014+): after a column's type, and at table level with UNIQUE and
-- CLUSTERED / NONCLUSTERED; INCLUDE and WHERE are read and dropped, as CREATE INDEX's are.
CREATE TABLE dbo.inline_ix (id INT PRIMARY KEY, v INT INDEX ix_v, w INT, x INT,
  INDEX ix_wx UNIQUE NONCLUSTERED (w, x DESC) INCLUDE (v) WHERE w > 0)
SELECT name, type_desc, is_unique, is_primary_key, is_unique_constraint
FROM sys.indexes WHERE object_id = OBJECT_ID('dbo.inline_ix') ORDER BY index_id
INSERT dbo.inline_ix VALUES (1, 5, 1, 1)
INSERT dbo.inline_ix VALUES (2, 5, 1, 1)
GO
DECLARE @t TABLE (id INT, name NVARCHAR(20) INDEX ix_name, INDEX ix_id CLUSTERED (id))
INSERT @t VALUES (2, N'b'), (1, N'a')
SELECT * FROM @t
GO
CREATE TABLE dbo.two_clustered (a INT INDEX c1 CLUSTERED, b INT INDEX c2 CLUSTERED)
GO
ALTER TABLE dbo.inline_ix ADD INDEX ix_bad (x)
GO
-- ALTER INDEX: REBUILD, REORGANIZE and SET have nothing to do (the B-trees merge pages as rows
-- go); the index must exist (1088); DISABLE is refused.
ALTER INDEX ix_v ON dbo.inline_ix REBUILD
ALTER INDEX ALL ON dbo.inline_ix REBUILD WITH (FILLFACTOR = 80, ONLINE = ON
  (WAIT_AT_LOW_PRIORITY (MAX_DURATION = 1 MINUTES, ABORT_AFTER_WAIT = SELF)))
ALTER INDEX ix_v ON dbo.inline_ix REORGANIZE WITH (LOB_COMPACTION = ON)
ALTER INDEX ALL ON dbo.inline_ix REBUILD PARTITION = ALL
ALTER INDEX ix_v ON dbo.inline_ix SET (ALLOW_PAGE_LOCKS = ON)
SELECT 'altered' AS result
GO
ALTER INDEX nope ON dbo.inline_ix REBUILD
GO
ALTER INDEX ix_v ON dbo.inline_ix DISABLE
GO
DROP TABLE dbo.inline_ix
GO
