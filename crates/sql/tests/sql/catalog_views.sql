-- Constraint, module and compatibility catalog views: sys.key_constraints,
-- sys.default_constraints, sys.check_constraints, sys.foreign_keys, sys.foreign_key_columns,
-- sys.identity_columns, sys.sql_modules, sys.views, sys.triggers, sys.all_objects,
-- sys.system_objects, sysobjects and syscolumns.
CREATE DATABASE cv
GO
USE cv
CREATE TABLE dbo.orders (
    id INT IDENTITY(100, 5) CONSTRAINT pk_orders PRIMARY KEY,
    code VARCHAR(10) NOT NULL UNIQUE,
    qty INT NOT NULL DEFAULT 0 CHECK (qty >= 0),
    status NVARCHAR(20) NULL DEFAULT N'new',
    placed DATETIME NOT NULL DEFAULT GETDATE(),
    price DECIMAL(9, 2) NULL,
    CONSTRAINT ck_orders_price CHECK (price > 0 OR price IS NULL)
)
CREATE TABLE dbo.plain (x INT NULL, y BIGINT IDENTITY NOT NULL, z CHAR(3) NOT NULL)
CREATE SEQUENCE dbo.order_seq AS INT START WITH 1
GO
CREATE PROCEDURE dbo.count_orders AS SELECT COUNT(*) AS n FROM dbo.orders
GO
-- PRIMARY KEY and UNIQUE constraints: the index that enforces each, generated names flagged.
SELECT k.name, OBJECT_NAME(k.parent_object_id) AS tbl, k.type, k.type_desc, k.unique_index_id,
       k.is_system_named, i.name AS index_name, i.is_primary_key, i.is_unique_constraint,
       SCHEMA_NAME(k.schema_id) AS sch, k.principal_id, k.is_ms_shipped
FROM sys.key_constraints k JOIN sys.indexes i
  ON i.object_id = k.parent_object_id AND i.index_id = k.unique_index_id
ORDER BY k.type, k.name
GO
-- Defaults: one per column with a DEFAULT, its expression in parentheses, joined to its column
-- by parent_column_id and by sys.columns.default_object_id.
SELECT c.name AS col, d.parent_column_id, d.definition, d.type, d.type_desc, d.is_system_named,
       d.name,
       CASE WHEN c.default_object_id = d.object_id THEN 'same' ELSE 'different' END AS default_id
FROM sys.default_constraints d
JOIN sys.columns c ON c.object_id = d.parent_object_id AND c.column_id = d.parent_column_id
WHERE d.parent_object_id = OBJECT_ID('dbo.orders')
ORDER BY d.parent_column_id
SELECT name, default_object_id FROM sys.columns
WHERE object_id = OBJECT_ID('dbo.plain') ORDER BY column_id
GO
-- CHECK constraints: table-level (parent_column_id 0), the definition as stored.
SELECT name, OBJECT_NAME(parent_object_id) AS tbl, type, type_desc, parent_column_id,
       definition, is_disabled, is_not_trusted, is_system_named
FROM sys.check_constraints ORDER BY name
GO
-- Walden has no foreign keys, views or triggers: the views exist, empty.
SELECT COUNT(*) AS fks FROM sys.foreign_keys
SELECT COUNT(*) AS fk_cols FROM sys.foreign_key_columns
SELECT COUNT(*) AS views FROM sys.views
SELECT COUNT(*) AS triggers FROM sys.triggers
SELECT name, referenced_object_id, delete_referential_action_desc FROM sys.foreign_keys
SELECT constraint_object_id, parent_column_id, referenced_column_id FROM sys.foreign_key_columns
SELECT name, with_check_option FROM sys.views
SELECT name, parent_id, is_instead_of_trigger FROM sys.triggers
GO
-- Identity columns: seed and increment; last_value NULL until a value is handed out.
SELECT OBJECT_NAME(object_id) AS tbl, name, column_id, is_identity, seed_value, increment_value,
       last_value, is_not_for_replication
FROM sys.identity_columns ORDER BY tbl
INSERT INTO dbo.orders (code) VALUES ('a'), ('b')
SELECT OBJECT_NAME(object_id) AS tbl, last_value, IDENT_CURRENT(OBJECT_NAME(object_id)) AS ident_current
FROM sys.identity_columns ORDER BY tbl
GO
-- Procedures' text and flags.
SELECT OBJECT_NAME(m.object_id) AS proc_name, m.definition, m.uses_ansi_nulls,
       m.uses_quoted_identifier, m.is_schema_bound, m.is_recompiled, m.execute_as_principal_id,
       o.type
FROM sys.sql_modules m JOIN sys.objects o ON o.object_id = m.object_id
GO
-- sys.all_objects lists what sys.objects lists; sys.system_objects is empty.
SELECT name, type, type_desc FROM sys.all_objects ORDER BY name
SELECT CASE WHEN (SELECT COUNT(*) FROM sys.all_objects) = (SELECT COUNT(*) FROM sys.objects)
    THEN 'same' ELSE 'different' END AS all_objects
SELECT COUNT(*) AS system_objects FROM sys.system_objects
GO
-- sysobjects: objects and their constraints, with SQL Server 2000's type codes.
SELECT name, xtype, type, OBJECT_NAME(parent_obj) AS parent, uid,
       CASE WHEN crdate = refdate THEN 'same' ELSE 'different' END AS refdate
FROM sysobjects WHERE name NOT LIKE 'DF[_][_]%' ORDER BY xtype, name
SELECT xtype, COUNT(*) AS n FROM dbo.sysobjects GROUP BY xtype ORDER BY xtype
SELECT COUNT(*) AS in_sys_schema FROM sys.sysobjects WHERE xtype = 'U'
SELECT id - OBJECT_ID('dbo.orders') AS id_offset FROM sysobjects WHERE name = 'orders'
GO
-- The classic existence test, unqualified and with dbo.
IF EXISTS (SELECT * FROM sysobjects WHERE name = 'plain' AND xtype = 'U') DROP TABLE plain
SELECT COUNT(*) AS plain_left FROM sysobjects WHERE name = 'plain'
IF EXISTS (SELECT * FROM dbo.sysobjects WHERE id = OBJECT_ID('dbo.count_orders') AND xtype = 'P')
    DROP PROCEDURE dbo.count_orders
SELECT COUNT(*) AS procs_left FROM sys.sql_modules
GO
-- syscolumns: a table's columns by OBJECT_ID, with the old type codes.
SELECT name FROM syscolumns WHERE id = OBJECT_ID('orders') ORDER BY colid
SELECT name, colid, xtype, xusertype, length, xprec, xscale, type, usertype, prec, scale,
       isnullable, status, iscomputed, collation, collationid, tdscollation,
       CASE WHEN cdefault = 0 THEN 0 ELSE 1 END AS has_default
FROM dbo.syscolumns WHERE id = OBJECT_ID('dbo.orders') ORDER BY colorder
SELECT COUNT(*) AS cols FROM sys.syscolumns WHERE id = OBJECT_ID('dbo.orders')
GO
-- A three-part name reads another database's catalog.
USE master
SELECT name, xtype FROM cv..sysobjects WHERE xtype IN ('U', 'P', 'SO') ORDER BY name
SELECT name FROM cv.dbo.syscolumns WHERE id = OBJECT_ID('cv.dbo.orders') AND colid = 1
SELECT name, type FROM cv.sys.key_constraints ORDER BY name
SELECT COUNT(*) AS here FROM sys.key_constraints
GO
SELECT * FROM sys.key_constraints(1)
GO
-- The views tools read beside the ones above: statistics (one per index), partition stats,
-- the one filegroup, role membership, and the empty ones with their columns.
USE cv
SELECT OBJECT_NAME(s.object_id) AS tbl, s.name, s.stats_id, sc.stats_column_id, COL_NAME(sc.object_id, sc.column_id) AS col, STATS_DATE(s.object_id, s.stats_id) AS updated
FROM sys.stats s JOIN sys.stats_columns sc ON sc.object_id = s.object_id AND sc.stats_id = s.stats_id
WHERE s.object_id = OBJECT_ID('dbo.orders') ORDER BY s.stats_id, sc.stats_column_id
SELECT OBJECT_NAME(object_id) AS tbl, index_id, row_count, used_page_count FROM sys.dm_db_partition_stats WHERE object_id = OBJECT_ID('dbo.orders') ORDER BY index_id
SELECT name, data_space_id, type, is_default FROM sys.filegroups
SELECT d.name FROM sys.data_spaces d
SELECT USER_NAME(role_principal_id) AS role, USER_NAME(member_principal_id) AS member FROM sys.database_role_members
SELECT COUNT(*) AS all_columns_match FROM sys.all_columns a JOIN sys.columns c ON c.object_id = a.object_id AND c.column_id = a.column_id
SELECT (SELECT COUNT(*) FROM sys.synonyms) + (SELECT COUNT(*) FROM sys.system_views) + (SELECT COUNT(*) FROM sys.system_sql_modules)
     + (SELECT COUNT(*) FROM sys.database_permissions) + (SELECT COUNT(*) FROM sys.dm_db_index_usage_stats) + (SELECT COUNT(*) FROM sys.table_types) AS empty_views
SELECT host_platform FROM sys.dm_os_host_info
SELECT mirroring_guid FROM sys.database_mirroring WHERE database_id = DB_ID()
GO
