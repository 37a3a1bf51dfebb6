-- User-defined types: alias types (CREATE TYPE ... FROM, with the nullability their columns
-- default to), table types for table variables, sys.types, TYPE_ID / TYPE_NAME, DROP TYPE, and
-- the errors 219, 218, 2715.
CREATE DATABASE typedb
GO
USE typedb
GO
CREATE TYPE dbo.Phone FROM varchar(20) NOT NULL
CREATE TYPE Money2 FROM decimal(12, 2) NULL
CREATE TYPE dbo.IdList AS TABLE (Id INT PRIMARY KEY, Note NVARCHAR(20) NULL)
GO
CREATE TABLE contact (id INT PRIMARY KEY, phone Phone, fax dbo.Phone NULL, balance Money2)
INSERT contact (id, phone, balance) VALUES (1, '555-0100', 12.345)
SELECT c.name, TYPE_NAME(c.system_type_id) AS type, c.max_length, c.is_nullable FROM sys.columns c WHERE c.object_id = OBJECT_ID('contact') ORDER BY c.column_id
SELECT * FROM contact
GO
INSERT contact (id, balance) VALUES (2, 1)
GO
DECLARE @p Phone = '555-0199', @ids dbo.IdList
INSERT @ids VALUES (1, N'one'), (3, N'three')
SELECT @p AS p, (SELECT COUNT(*) FROM @ids) AS n
SELECT c.id FROM contact c JOIN @ids i ON i.Id = c.id
GO
CREATE PROCEDURE dbo.set_phone @id INT, @phone dbo.Phone AS UPDATE contact SET phone = @phone WHERE id = @id
GO
EXEC dbo.set_phone 1, '555-0111'
SELECT phone FROM contact
SELECT name, system_type_id, user_type_id, max_length, [precision], scale, is_nullable, is_user_defined, is_table_type FROM sys.types WHERE is_user_defined = 1 ORDER BY name
SELECT TYPE_ID('Phone') - TYPE_ID('dbo.Phone') AS same, TYPE_NAME(TYPE_ID('Money2')) AS name
GO
CREATE TYPE dbo.Phone FROM int
GO
CREATE TYPE dbo.Bad FROM dbo.Phone
GO
DECLARE @x NoSuchType
GO
DROP TYPE dbo.NoSuch
GO
-- Table-valued parameters: a READONLY parameter of a table type names the caller's table
-- variable (an empty table when left out); 10700 for a change of it, 352 without READONLY.
GO
CREATE TYPE dbo.IdList2 AS TABLE (Id INT PRIMARY KEY)
GO
CREATE TABLE dbo.item (id INT PRIMARY KEY, name VARCHAR(10))
INSERT item VALUES (1, 'a'), (2, 'b'), (3, 'c')
GO
CREATE PROCEDURE dbo.get_items @ids dbo.IdList2 READONLY, @prefix VARCHAR(5) = '' AS
    SELECT @prefix + i.name AS name FROM dbo.item i JOIN @ids x ON x.Id = i.id ORDER BY i.id
    SELECT COUNT(*) AS passed FROM @ids
GO
DECLARE @wanted dbo.IdList2
INSERT @wanted VALUES (1), (3)
EXEC dbo.get_items @wanted, 'item '
EXEC dbo.get_items @ids = @wanted
SELECT COUNT(*) AS still_mine FROM @wanted
GO
EXEC dbo.get_items
GO
CREATE PROCEDURE dbo.change_ids @ids dbo.IdList2 READONLY AS DELETE FROM @ids
GO
DECLARE @w dbo.IdList2
INSERT @w VALUES (1)
EXEC dbo.change_ids @w
GO
CREATE PROCEDURE dbo.bad_tvp @ids dbo.IdList2 AS SELECT 1
GO
DROP PROCEDURE dbo.get_items, dbo.change_ids
DROP TABLE dbo.item
DROP TYPE dbo.IdList2
GO
-- sys.parameters and sys.all_parameters list a table-valued parameter with its table type
-- (system_type_id 243, READONLY, not nullable) and an alias type's parameter with the alias.
CREATE PROCEDURE dbo.take_ids @ids dbo.IdList READONLY, @phone dbo.Phone, @n INT = 1 AS
    SELECT COUNT(*) AS ids FROM @ids
GO
SELECT p.name, p.parameter_id, p.system_type_id, TYPE_NAME(p.user_type_id) AS user_type,
       p.max_length, p.precision,
       p.scale, p.is_readonly, p.is_nullable, p.has_default_value
FROM sys.parameters AS p WHERE p.object_id = OBJECT_ID('dbo.take_ids') ORDER BY p.parameter_id
SELECT COUNT(*) AS all_parameters FROM sys.all_parameters
WHERE object_id = OBJECT_ID('dbo.take_ids') AND is_readonly = 1 AND system_type_id = 243
DROP PROCEDURE dbo.take_ids
GO
DROP TYPE IF EXISTS dbo.NoSuch
DROP PROCEDURE dbo.set_phone
DROP TABLE contact
DROP TYPE dbo.Phone
DROP TYPE Money2, dbo.IdList
SELECT COUNT(*) AS user_types FROM sys.types WHERE is_user_defined = 1
GO
USE master
DROP DATABASE typedb
GO
