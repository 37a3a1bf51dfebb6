-- CREATE SCHEMA / DROP SCHEMA: a schema exists before its objects, is listed by sys.schemas
-- and SCHEMA_ID, cannot be created twice (2714) or dropped while in use (3729).
CREATE DATABASE schemadb
GO
USE schemadb
GO
CREATE SCHEMA sales AUTHORIZATION dbo
GO
SELECT name FROM sys.schemas WHERE name = 'sales'
SELECT CASE WHEN SCHEMA_ID('sales') IS NOT NULL THEN 'has an id' END AS sales_id
IF NOT EXISTS (SELECT * FROM sys.schemas WHERE name = 'sales') EXEC ('CREATE SCHEMA sales')
CREATE TABLE sales.orders (id INT PRIMARY KEY)
INSERT sales.orders VALUES (1)
SELECT s.name AS schema_name, t.name AS table_name
FROM sys.tables AS t JOIN sys.schemas AS s ON s.schema_id = t.schema_id
SELECT COUNT(*) AS objects_named_sales FROM sys.objects WHERE name = 'sales'
GO
CREATE SCHEMA sales
GO
DROP SCHEMA sales
GO
DROP TABLE sales.orders
DROP SCHEMA sales
DROP SCHEMA IF EXISTS sales
SELECT COUNT(*) AS sales_schemas FROM sys.schemas WHERE name = 'sales'
GO
DROP SCHEMA sales
GO
PRINT 'first'
CREATE SCHEMA late
GO
USE master
DROP DATABASE schemadb
GO
