-- Column and table options of generated scripts: ROWGUIDCOL, NOT FOR REPLICATION, a comma
-- before the closing parenthesis, unnamed table-level FOREIGN KEY, PRECISION as a name.
CREATE TABLE parent (
    id int IDENTITY(1,1) NOT FOR REPLICATION CONSTRAINT pk_parent PRIMARY KEY,
    guid uniqueidentifier ROWGUIDCOL NOT NULL DEFAULT NEWID(),
    qty int CHECK NOT FOR REPLICATION (qty >= 0),
    CONSTRAINT ck_parent CHECK NOT FOR REPLICATION (qty < 100),
)
GO
INSERT parent (qty) VALUES (1), (2)
SELECT id, qty, CASE WHEN guid IS NULL THEN 0 ELSE 1 END AS has_guid FROM parent
GO
INSERT parent (qty) VALUES (-1)
GO
SELECT name, is_identity FROM sys.columns WHERE object_id = OBJECT_ID('parent') ORDER BY column_id
GO
CREATE TABLE bad_guid (g int ROWGUIDCOL)
GO
CREATE TABLE child (
    id int PRIMARY KEY,
    parent_id int,
    other_id int,
    FOREIGN KEY (parent_id) REFERENCES parent (id),
)
GO
ALTER TABLE child ADD FOREIGN KEY (other_id) REFERENCES parent (id) NOT FOR REPLICATION
GO
SELECT OBJECT_NAME(parent_object_id) AS t, OBJECT_NAME(referenced_object_id) AS r,
       CASE WHEN name LIKE 'FK__child__%' THEN 'generated' ELSE name END AS name
FROM sys.foreign_keys ORDER BY name, t
GO
INSERT child VALUES (1, 1, 2)
INSERT child VALUES (2, 99, 1)
GO
-- PRECISION as a column, a table variable's column and an alias.
CREATE TABLE numbers (precision int, scale int)
INSERT numbers (precision, scale) VALUES (10, 2)
SELECT precision, scale FROM numbers AS precision
GO
DECLARE @t TABLE (precision int, )
INSERT @t (precision) VALUES (5)
SELECT precision FROM @t
GO
SELECT name, precision FROM sys.columns WHERE object_id = OBJECT_ID('numbers') ORDER BY column_id
GO
-- IGNORE_DUP_KEY = ON is kept (ignore_dup_key.sql shows what it does).
CREATE UNIQUE INDEX ix ON numbers (scale) WITH (IGNORE_DUP_KEY = ON)
GO
-- A PRIMARY KEY on a column declared NULL: 8111 then 1750; saying nothing makes it NOT NULL.
CREATE TABLE null_pk (a int NULL PRIMARY KEY)
GO
CREATE TABLE null_pk (a int NULL, b int, CONSTRAINT pk_null PRIMARY KEY (a, b))
GO
CREATE TABLE null_pk (a int PRIMARY KEY, b int NULL UNIQUE)
SELECT name, is_nullable FROM sys.columns WHERE object_id = OBJECT_ID('null_pk') ORDER BY column_id
GO
-- CREATE STATISTICS: Walden keeps no statistics; the table and columns must exist.
CREATE STATISTICS st_qty ON parent (qty, id) WITH FULLSCAN, NORECOMPUTE
GO
CREATE STATISTICS st_pos ON dbo.parent (qty) WHERE qty > 0 WITH SAMPLE 50 PERCENT
GO
CREATE STATISTICS st_bad ON parent (no_such_column)
GO
-- DROP STATISTICS: what CREATE STATISTICS named; a second drop, another name, an index's
-- statistics and a missing table are errors; the name may be given again once dropped.
CREATE STATISTICS st_qty ON parent (qty)
GO
DROP STATISTICS parent.st_qty, dbo.parent.st_pos
GO
DROP STATISTICS parent.st_qty
GO
DROP STATISTICS parent.never_created
GO
DROP STATISTICS no_table.st_qty
GO
DROP STATISTICS parent.pk_parent
GO
CREATE STATISTICS st_qty ON parent (qty)
DROP STATISTICS parent.st_qty
GO
