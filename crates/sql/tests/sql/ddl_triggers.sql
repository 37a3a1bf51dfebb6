-- DDL triggers ON DATABASE: the audit idiom, event groups, ROLLBACK, disabled triggers, DDL
-- raised inside procedures and dynamic SQL, the catalog views, and the errors.
CREATE DATABASE ddltrig
GO
USE ddltrig
GO
CREATE TABLE ddl_log (
    id int IDENTITY PRIMARY KEY,
    event_type nvarchar(100),
    schema_name sysname NULL,
    object_name sysname NULL,
    object_type nvarchar(100) NULL,
    target_name sysname NULL,
    new_name sysname NULL,
    database_name sysname NULL,
    login_name sysname NULL,
    command nvarchar(max) NULL)
GO
-- The audit trigger scripts install: every database-level event, read from EVENTDATA().
CREATE TRIGGER audit_ddl ON DATABASE
FOR DDL_DATABASE_LEVEL_EVENTS
AS
SET NOCOUNT ON
DECLARE @e xml = EVENTDATA()
INSERT INTO ddl_log (event_type, schema_name, object_name, object_type, target_name, new_name,
                     database_name, login_name, command)
SELECT @e.value('(/EVENT_INSTANCE/EventType)[1]', 'nvarchar(100)'),
       @e.value('(/EVENT_INSTANCE/SchemaName)[1]', 'sysname'),
       @e.value('(/EVENT_INSTANCE/ObjectName)[1]', 'sysname'),
       @e.value('(/EVENT_INSTANCE/ObjectType)[1]', 'nvarchar(100)'),
       @e.value('(/EVENT_INSTANCE/TargetObjectName)[1]', 'sysname'),
       @e.value('(/EVENT_INSTANCE/NewObjectName)[1]', 'sysname'),
       @e.value('(/EVENT_INSTANCE/DatabaseName)[1]', 'sysname'),
       @e.value('(/EVENT_INSTANCE/LoginName)[1]', 'sysname'),
       @e.value('(/EVENT_INSTANCE/TSQLCommand/CommandText)[1]', 'nvarchar(max)')
GO
CREATE TABLE dbo.orders (id int PRIMARY KEY, qty int)
GO
CREATE INDEX ix_qty ON orders (qty)
GO
ALTER TABLE orders ADD note varchar(20) NULL
GO
CREATE STATISTICS st_note ON orders (note)
GO
UPDATE STATISTICS orders
GO
DROP STATISTICS orders.st_note
GO
CREATE VIEW big_orders AS SELECT id FROM orders WHERE qty > 10
GO
-- CREATE OR ALTER is a CREATE event the first time, an ALTER event after.
CREATE OR ALTER VIEW big_orders AS SELECT id, qty FROM orders WHERE qty > 10
GO
CREATE OR ALTER PROCEDURE order_count AS SELECT COUNT(*) FROM orders
GO
ALTER PROCEDURE order_count AS SELECT COUNT(*) AS n FROM orders
GO
CREATE FUNCTION dbo.twice (@x int) RETURNS int AS BEGIN RETURN 2 * @x END
GO
CREATE TRIGGER orders_ins ON orders AFTER INSERT AS SET NOCOUNT ON
GO
CREATE SCHEMA sales
GO
CREATE TYPE dbo.code FROM varchar(8) NOT NULL
GO
CREATE SEQUENCE dbo.order_no START WITH 1
GO
EXEC sp_rename 'orders.note', 'remark', 'COLUMN'
GO
EXEC sp_rename 'big_orders', 'large_orders'
GO
DROP INDEX ix_qty ON orders
GO
-- DROP ... IF EXISTS of nothing raises no event; temporary tables raise none.
DROP TABLE IF EXISTS no_such_table
CREATE TABLE #scratch (a int)
CREATE INDEX ix_scratch ON #scratch (a)
ALTER TABLE #scratch ADD b int
DROP TABLE #scratch
GO
DROP TRIGGER orders_ins
DROP SEQUENCE dbo.order_no
DROP TYPE dbo.code
DROP SCHEMA sales
DROP FUNCTION dbo.twice
DROP VIEW large_orders
GO
SELECT id, event_type, schema_name, object_name, object_type, target_name, new_name,
       database_name, login_name, command
FROM ddl_log ORDER BY id
GO
-- DDL inside a procedure, inside EXEC('...') and inside sp_executesql fires the triggers too.
TRUNCATE TABLE ddl_log
GO
CREATE PROCEDURE make_table AS
    CREATE TABLE made_by_procedure (a int)
GO
EXEC make_table
EXEC ('CREATE TABLE made_by_exec (a int)')
EXEC sp_executesql N'CREATE VIEW made_by_executesql AS SELECT 1 AS one'
GO
SELECT event_type, object_name, command FROM ddl_log ORDER BY id
GO
-- The whole document, with the moment and the session left out.
CREATE TRIGGER show_event ON DATABASE FOR CREATE_SYNONYM, DROP_TABLE AS
SELECT EVENTDATA().query('/EVENT_INSTANCE/*[local-name() != "PostTime" and local-name() != "SPID"]') AS event
GO
DROP TABLE made_by_exec
GO
DROP TRIGGER show_event ON DATABASE
GO
-- An event group covers the events under it: DDL_TABLE_EVENTS fires for tables, not views.
CREATE TRIGGER table_events ON DATABASE AFTER DDL_TABLE_EVENTS AS
PRINT 'table event: ' + EVENTDATA().value('(/EVENT_INSTANCE/EventType)[1]', 'nvarchar(100)')
GO
CREATE TABLE grouped (a int)
GO
CREATE VIEW grouped_view AS SELECT a FROM grouped
GO
DROP VIEW grouped_view
DROP TABLE grouped
GO
-- A disabled trigger does not fire; ENABLE ... ALL brings it back.
DISABLE TRIGGER table_events ON DATABASE
GO
CREATE TABLE quiet (a int)
GO
SELECT name, is_disabled FROM sys.triggers WHERE parent_class = 0 ORDER BY name
GO
ENABLE TRIGGER ALL ON DATABASE
GO
DROP TABLE quiet
GO
DROP TRIGGER table_events ON DATABASE
GO
-- ROLLBACK in a DDL trigger undoes the statement and ends the batch with 3609.
CREATE TRIGGER no_drops ON DATABASE FOR DROP_TABLE, DROP_VIEW AS
BEGIN
    PRINT 'Tables and views may not be dropped here.'
    ROLLBACK
END
GO
DROP TABLE orders
PRINT 'not reached'
GO
SELECT COUNT(*) AS orders_still_there FROM sys.tables WHERE name = 'orders'
SELECT TOP 1 event_type, object_name FROM ddl_log ORDER BY id DESC
GO
BEGIN TRAN
CREATE TABLE in_transaction (a int)
DROP VIEW made_by_executesql
GO
SELECT @@TRANCOUNT AS trancount, OBJECT_ID('in_transaction') AS created_table
GO
BEGIN TRY
    DROP TABLE made_by_procedure
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS number, ERROR_MESSAGE() AS message, @@TRANCOUNT AS trancount
END CATCH
GO
DROP TRIGGER no_drops ON DATABASE
GO
-- The catalog: sys.triggers (parent_class 0), sys.trigger_events, sys.sql_modules,
-- OBJECT_DEFINITION; a DDL trigger is no schema-scoped object (OBJECT_ID, sys.objects).
CREATE TRIGGER views_only ON DATABASE FOR DDL_VIEW_EVENTS, CREATE_PROCEDURE AS PRINT 'v'
GO
SELECT name, parent_class, parent_class_desc, parent_id, type, type_desc, is_disabled,
       is_instead_of_trigger
FROM sys.triggers ORDER BY parent_class, name
SELECT t.name, e.type, e.type_desc, e.event_group_type, e.event_group_type_desc, e.is_trigger_event
FROM sys.trigger_events e JOIN sys.triggers t ON t.object_id = e.object_id
WHERE t.name = 'views_only' ORDER BY e.type
SELECT OBJECT_ID('views_only') AS object_id_of_ddl_trigger,
       (SELECT COUNT(*) FROM sys.objects WHERE name = 'views_only') AS in_sys_objects
SELECT OBJECT_DEFINITION(t.object_id) AS definition FROM sys.triggers t WHERE t.name = 'views_only'
SELECT m.definition FROM sys.sql_modules m JOIN sys.triggers t ON t.object_id = m.object_id
WHERE t.name = 'audit_ddl'
SELECT type, type_name, parent_type FROM sys.trigger_event_types
WHERE type_name IN ('DDL_EVENTS', 'DDL_DATABASE_LEVEL_EVENTS', 'DDL_TABLE_VIEW_EVENTS', 'CREATE_TABLE', 'RENAME', 'CREATE_DATABASE')
ORDER BY type
GO
-- ALTER TRIGGER ... ON DATABASE replaces the list and the body.
ALTER TRIGGER views_only ON DATABASE FOR CREATE_VIEW AS
PRINT 'altered: ' + EVENTDATA().value('(/EVENT_INSTANCE/ObjectName)[1]', 'sysname')
GO
CREATE VIEW after_alter AS SELECT 1 AS one
GO
SELECT e.type_desc FROM sys.trigger_events e JOIN sys.triggers t ON t.object_id = e.object_id
WHERE t.name = 'views_only'
GO
-- EVENTDATA() outside a DDL trigger is NULL.
SELECT EVENTDATA() AS outside
GO
-- Errors.
CREATE TRIGGER bad_event ON DATABASE FOR CREATE_NOTHING AS PRINT 1
GO
CREATE TRIGGER server_event ON DATABASE FOR CREATE_DATABASE AS PRINT 1
GO
CREATE TRIGGER views_only ON DATABASE FOR CREATE_VIEW AS PRINT 1
GO
ALTER TRIGGER no_such_trigger ON DATABASE FOR CREATE_VIEW AS PRINT 1
GO
DROP TRIGGER no_such_trigger ON DATABASE
GO
DROP TRIGGER IF EXISTS no_such_trigger ON DATABASE
GO
DROP TRIGGER views_only
GO
DISABLE TRIGGER no_such_trigger ON DATABASE
GO
CREATE TRIGGER instead ON DATABASE INSTEAD OF CREATE_TABLE AS PRINT 1
GO
CREATE TRIGGER server_wide ON ALL SERVER FOR CREATE_DATABASE AS PRINT 1
GO
-- Server-level triggers are refused, so none exists: the views scripts read to drop theirs
-- are empty, and DROP ... IF EXISTS does nothing.
SELECT COUNT(*) AS server_triggers FROM sys.server_triggers;
SELECT COUNT(*) AS server_trigger_events FROM sys.server_trigger_events;
IF EXISTS (SELECT * FROM sys.server_triggers WHERE name = 'server_wide')
    DROP TRIGGER server_wide ON ALL SERVER
DROP TRIGGER IF EXISTS server_wide ON ALL SERVER
GO
DROP TRIGGER server_wide ON ALL SERVER
GO
DROP TRIGGER views_only ON DATABASE
DROP TRIGGER audit_ddl ON DATABASE
GO
SELECT COUNT(*) AS ddl_triggers_left FROM sys.triggers WHERE parent_class = 0
GO
USE master
GO
DROP DATABASE ddltrig
GO
