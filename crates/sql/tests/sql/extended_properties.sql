-- Extended properties: sp_addextendedproperty / sp_updateextendedproperty /
-- sp_dropextendedproperty, sys.extended_properties, fn_listextendedproperty (DEFAULT arguments
-- too), the errors 15233, 15217, 15135, 15600, and properties going with their columns,
-- indexes and tables. The first batch is what EF Core writes for a table comment.
CREATE TABLE dbo.Blogs (BlogId INT PRIMARY KEY, Url NVARCHAR(200), Rating INT, Extra INT)
CREATE INDEX ix_rating ON dbo.Blogs (Rating)
GO
DECLARE @defaultSchema AS sysname;
SET @defaultSchema = SCHEMA_NAME();
DECLARE @description AS sql_variant;
SET @description = N'Blog table';
EXEC sp_addextendedproperty 'MS_Description', @description, 'SCHEMA', @defaultSchema, 'TABLE', N'Blogs';
SET @description = N'The address';
EXEC sp_addextendedproperty 'MS_Description', @description, 'SCHEMA', @defaultSchema, 'TABLE', N'Blogs', 'COLUMN', N'Url';
EXEC sp_addextendedproperty @name = N'Caption', @value = 'Stars', @level0type = N'SCHEMA', @level0name = N'dbo', @level1type = N'TABLE', @level1name = N'Blogs', @level2type = N'COLUMN', @level2name = N'Rating';
EXEC sp_addextendedproperty N'Purpose', 42, N'SCHEMA', N'dbo', N'TABLE', N'Blogs', N'INDEX', N'ix_rating';
EXEC sp_addextendedproperty N'Owner', N'ops';
GO
SELECT class, class_desc, OBJECT_NAME(major_id) AS obj, minor_id, name, value FROM sys.extended_properties
SELECT objtype, objname, name, value FROM fn_listextendedproperty(NULL, 'schema', 'dbo', 'table', 'Blogs', 'column', default)
SELECT objtype, objname, name, value FROM sys.fn_listextendedproperty('MS_Description', 'schema', 'dbo', 'table', NULL, NULL, NULL)
SELECT objtype, objname, name, value FROM fn_listextendedproperty(default, default, default, default, default, default, default)
GO
EXEC sp_addextendedproperty 'MS_Description', 'again', 'SCHEMA', 'dbo', 'TABLE', 'Blogs'
GO
EXEC sp_updateextendedproperty 'MS_Description', 'Blogs, updated', 'SCHEMA', 'dbo', 'TABLE', 'Blogs'
EXEC sp_dropextendedproperty 'Nothing', 'SCHEMA', 'dbo', 'TABLE', 'Blogs'
GO
EXEC sp_addextendedproperty 'MS_Description', 'x', 'SCHEMA', 'dbo', 'TABLE', 'NoSuch'
GO
EXEC sp_addextendedproperty 'MS_Description', 'x', 'SCHEMA', 'dbo', 'TABLE', 'Blogs', 'COLUMN', 'NoSuch'
GO
ALTER TABLE dbo.Blogs DROP COLUMN Url
SELECT name, minor_id, COL_NAME(major_id, minor_id) AS col, value FROM sys.extended_properties WHERE class = 1 ORDER BY minor_id
DROP INDEX ix_rating ON dbo.Blogs
SELECT COUNT(*) AS index_props FROM sys.extended_properties WHERE class = 7
DROP TABLE dbo.Blogs
SELECT name, value FROM sys.extended_properties
EXEC sp_dropextendedproperty N'Owner'
SELECT COUNT(*) AS left_over FROM sys.extended_properties
GO
EXEC sp_addextendedproperty 'MS_Description', 'x', 'SCHEMA', 'dbo', 'COLUMN', 'c'
GO
EXEC sp_addextendedproperty @value = 'no name'
GO
-- Any number and size (issue 29 item 7): a description on every column of a wide table, each
-- up to 7,500 bytes; 7,501 is 15097.
CREATE TABLE wide (c1 INT, c2 INT, c3 INT, c4 INT, c5 INT, c6 INT, c7 INT, c8 INT, c9 INT, c10 INT)
GO
DECLARE @i INT = 1, @col SYSNAME
WHILE @i <= 10
BEGIN
    SET @col = 'c' + CAST(@i AS VARCHAR(2))
    DECLARE @text NVARCHAR(4000) = REPLICATE(N'd', 3000 + @i)
    EXEC sp_addextendedproperty @name = N'MS_Description', @value = @text,
        @level0type = N'SCHEMA', @level0name = N'dbo', @level1type = N'TABLE', @level1name = N'wide',
        @level2type = N'COLUMN', @level2name = @col
    SET @i += 1
END
DECLARE @big VARCHAR(8000) = REPLICATE('x', 7500)
EXEC sp_addextendedproperty N'Big', @big, N'SCHEMA', N'dbo', N'TABLE', N'wide'
SELECT COUNT(*) AS n, SUM(DATALENGTH(value)) AS bytes FROM sys.extended_properties WHERE major_id = OBJECT_ID('wide')
GO
DECLARE @toobig VARCHAR(8000) = REPLICATE('x', 7501)
EXEC sp_addextendedproperty N'TooBig', @toobig, N'SCHEMA', N'dbo', N'TABLE', N'wide'
GO
EXEC sp_updateextendedproperty N'MS_Description', N'short', N'SCHEMA', N'dbo', N'TABLE', N'wide', N'COLUMN', N'c3'
SELECT CAST(value AS NVARCHAR(20)) AS c3 FROM fn_listextendedproperty(N'MS_Description', N'SCHEMA', N'dbo', N'TABLE', N'wide', N'COLUMN', N'c3')
GO
-- Rolled back with the transaction that added them.
BEGIN TRAN
EXEC sp_addextendedproperty N'Temp', 1, N'SCHEMA', N'dbo', N'TABLE', N'wide', N'COLUMN', N'c1'
EXEC sp_dropextendedproperty N'Big', N'SCHEMA', N'dbo', N'TABLE', N'wide'
ROLLBACK
SELECT name, COUNT(*) AS n FROM sys.extended_properties WHERE major_id = OBJECT_ID('wide') GROUP BY name ORDER BY name
GO
-- On any schema made with CREATE SCHEMA, and on its objects; they go when it is dropped.
CREATE SCHEMA sales
GO
CREATE TABLE sales.orders (id INT)
EXEC sp_addextendedproperty N'MS_Description', N'Sales data', N'SCHEMA', N'sales'
EXEC sp_addextendedproperty N'MS_Description', N'Orders', N'SCHEMA', N'sales', N'TABLE', N'orders'
SELECT class_desc, CASE WHEN major_id = SCHEMA_ID('sales') THEN 'sales' ELSE OBJECT_NAME(major_id) END AS target, name, value
FROM sys.extended_properties WHERE class IN (1, 3) AND minor_id = 0 AND name = 'MS_Description' ORDER BY class, target
SELECT objtype, objname, name, value FROM fn_listextendedproperty(NULL, 'SCHEMA', NULL, NULL, NULL, NULL, NULL)
GO
EXEC sp_addextendedproperty N'MS_Description', N'x', N'SCHEMA', N'nosuchschema'
GO
DROP TABLE sales.orders
DROP SCHEMA sales
SELECT COUNT(*) AS left_over FROM sys.extended_properties WHERE class = 3 AND major_id > 4
GO
