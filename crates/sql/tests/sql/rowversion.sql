-- rowversion / timestamp columns: set by every insert and update from the database's
-- counter (@@DBTS), the optimistic-concurrency pattern ORMs use, OUTPUT of old and new
-- versions, ALTER TABLE ADD, and the errors 272, 273, 2738.
CREATE DATABASE rvdb
GO
USE rvdb
SELECT @@DBTS AS before_any
CREATE TABLE dbo.doc (id INT IDENTITY PRIMARY KEY, title VARCHAR(20) NOT NULL, rv ROWVERSION)
INSERT doc (title) VALUES ('a'), ('b')
INSERT doc VALUES ('c', DEFAULT)
INSERT doc VALUES ('d', NULL)
SELECT id, title, rv FROM doc ORDER BY id
SELECT @@DBTS AS dbts, MIN_ACTIVE_ROWVERSION() AS next_version
GO
-- The update that read the current version wins; the stale one changes nothing.
DECLARE @seen BINARY(8) = (SELECT rv FROM doc WHERE id = 1)
UPDATE doc SET title = 'a2' WHERE id = 1 AND rv = @seen
SELECT @@ROWCOUNT AS first_writer
UPDATE doc SET title = 'a3' WHERE id = 1 AND rv = @seen
SELECT @@ROWCOUNT AS stale_writer
UPDATE doc SET title = title OUTPUT inserted.id, deleted.rv AS old_rv, inserted.rv AS new_rv WHERE id = 2
MERGE doc AS d USING (VALUES (3, 'c2')) AS s (id, title) ON d.id = s.id
WHEN MATCHED THEN UPDATE SET title = s.title;
SELECT id, rv FROM doc WHERE id = 3
GO
UPDATE doc SET rv = 0x01
GO
INSERT doc (title, rv) VALUES ('e', 0x01)
GO
CREATE TABLE dbo.two (a TIMESTAMP, b ROWVERSION)
GO
-- Added to a table with rows, it gives each row a version.
CREATE TABLE dbo.late (id INT PRIMARY KEY)
INSERT late VALUES (1), (2)
ALTER TABLE late ADD ver ROWVERSION
SELECT id, ver FROM late ORDER BY id
GO
SELECT c.name, TYPE_NAME(c.system_type_id) AS type, c.max_length, c.is_nullable
FROM sys.columns AS c WHERE c.object_id = OBJECT_ID('doc') ORDER BY c.column_id
SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'doc' ORDER BY ORDINAL_POSITION
SELECT COUNT(*) AS sequences_listed FROM sys.sequences
DECLARE @v ROWVERSION = @@DBTS
SELECT DATALENGTH(@v) AS variable_bytes
GO
USE master
DROP DATABASE rvdb
