-- SQL Server's four system databases, with its ids and file names.
SELECT database_id, name, state_desc, is_db_chaining_on FROM sys.databases WHERE database_id <= 4 ORDER BY database_id
SELECT DB_ID('model') AS model_id, DB_ID('msdb') AS msdb_id, DB_NAME(3) AS db3, DB_NAME(4) AS db4
SELECT database_id, file_id, name, RIGHT(physical_name, CHARINDEX('/', REVERSE(physical_name)) - 1) AS physical_file FROM sys.master_files WHERE database_id IN (3, 4) ORDER BY database_id, file_id
GO
-- USE, three-part names and the catalog views of each.
USE msdb
SELECT DB_NAME() AS current_db, COUNT(*) AS user_tables FROM sys.tables
SELECT name FROM sys.database_files ORDER BY file_id
USE model
SELECT DB_NAME() AS current_db
USE master
SELECT COUNT(*) AS model_objects FROM model.sys.objects WHERE is_ms_shipped = 0
GO
-- msdb's history and Agent tables, named in msdb or from it.
USE msdb
SELECT COUNT(*) AS backups FROM backupset
SELECT COUNT(*) AS jobs FROM dbo.sysjobs
SELECT COUNT(*) AS mail FROM sysmail_allitems
USE master
SELECT COUNT(*) AS mail_profiles FROM msdb.dbo.sysmail_profile
SELECT COUNT(*) AS mail_log FROM msdb..sysmail_event_log
GO
-- Outside msdb they are ordinary names.
SELECT * FROM dbo.backupset
GO
-- Objects can be made in msdb and model like in any database.
USE msdb
CREATE TABLE dbo.dba_log (id INT PRIMARY KEY, note NVARCHAR(50))
INSERT dbo.dba_log VALUES (1, N'kept')
SELECT name FROM msdb.sys.tables WHERE is_ms_shipped = 0
DROP TABLE dbo.dba_log
USE master
GO
-- A new database starts empty: model is not yet a template.
CREATE TABLE model.dbo.in_model (k INT)
CREATE DATABASE after_model
SELECT COUNT(*) AS copied_from_model FROM after_model.sys.tables
DROP DATABASE after_model
DROP TABLE model.dbo.in_model
GO
-- System databases cannot be dropped, taken offline or made read-only.
DROP DATABASE msdb
GO
DROP DATABASE model
GO
ALTER DATABASE msdb SET OFFLINE
GO
ALTER DATABASE model SET READ_ONLY
GO
CREATE DATABASE msdb
GO
