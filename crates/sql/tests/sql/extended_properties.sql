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
