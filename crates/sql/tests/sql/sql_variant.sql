-- SQL_VARIANT: variables, parameters and columns holding a value of any other type, which
-- keeps its own; SQL_VARIANT_PROPERTY; what it cannot hold or index.
DECLARE @v SQL_VARIANT = 1
SELECT @v AS v, SQL_VARIANT_PROPERTY(@v, 'BaseType') AS base, SQL_VARIANT_PROPERTY(@v, 'Precision') AS p, SQL_VARIANT_PROPERTY(@v, 'Scale') AS s
SET @v = N'text'
SELECT @v AS v, SQL_VARIANT_PROPERTY(@v, 'BaseType') AS base, SQL_VARIANT_PROPERTY(@v, 'MaxLength') AS max_length, SQL_VARIANT_PROPERTY(@v, 'Collation') AS coll
SET @v = CAST(12.345 AS DECIMAL(9,3))
SELECT SQL_VARIANT_PROPERTY(@v, 'BaseType') AS base, SQL_VARIANT_PROPERTY(@v, 'Scale') AS s, SQL_VARIANT_PROPERTY(@v, 'TotalBytes') AS total, SQL_VARIANT_PROPERTY(@v, 'Nonsense') AS other
SET @v = NULL
SELECT SQL_VARIANT_PROPERTY(@v, 'BaseType') AS null_base
GO
CREATE TABLE dbo.setting (name VARCHAR(20) PRIMARY KEY, value SQL_VARIANT NULL)
INSERT setting VALUES ('retries', 3), ('ratio', 2.5E0), ('owner', N'ops'), ('since', CAST('2024-01-02' AS DATE)), ('unset', NULL), ('price', $4.99)
SELECT name, value, SQL_VARIANT_PROPERTY(value, 'BaseType') AS base FROM setting ORDER BY name
SELECT CAST(value AS INT) + 1 AS next_retries FROM setting WHERE name = 'retries'
UPDATE setting SET value = CAST(value AS INT) * 2 WHERE name = 'retries'
SELECT value FROM setting WHERE name = 'retries'
SELECT c.name, TYPE_NAME(c.system_type_id) AS type, c.max_length FROM sys.columns c WHERE c.object_id = OBJECT_ID('dbo.setting') ORDER BY c.column_id
GO
-- A procedure parameter of the type.
CREATE PROCEDURE dbo.show_kind @x SQL_VARIANT AS SELECT SQL_VARIANT_PROPERTY(@x, 'BaseType') AS kind
GO
EXEC dbo.show_kind 7
EXEC dbo.show_kind 'seven'
EXEC dbo.show_kind @x = NULL
GO
-- Not in an index key, and nothing over 8,000 bytes.
CREATE TABLE dbo.bad_key (v SQL_VARIANT PRIMARY KEY)
GO
CREATE INDEX ix_value ON dbo.setting (value)
GO
DECLARE @big SQL_VARIANT = REPLICATE(CAST('x' AS VARCHAR(MAX)), 9000)
GO
DROP PROCEDURE dbo.show_kind
DROP TABLE dbo.setting
GO
