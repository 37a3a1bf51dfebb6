-- msdb's backup and restore history tables read by DBA scripts: empty, with SQL Server's
-- columns (sysviews/msdb.rs). Other msdb tables do not exist (208, as any table the
-- database lacks).
SELECT d.name, MAX(b.backup_finish_date) AS last_full_backup
FROM sys.databases d LEFT JOIN msdb.dbo.backupset b ON b.database_name = d.name AND b.type = 'D'
GROUP BY d.name ORDER BY d.name;
SELECT bs.database_name, bmf.physical_device_name
FROM msdb.dbo.backupset bs JOIN msdb..backupmediafamily bmf ON bmf.media_set_id = bs.media_set_id;
SELECT COUNT(*) AS restores FROM msdb.dbo.restorehistory;
SELECT COUNT(*) AS files FROM msdb.dbo.backupfile;
SELECT COUNT(*) AS media_sets FROM msdb.dbo.backupmediaset;
GO
SELECT * FROM msdb.dbo.sysjobs;
GO
-- An msdb table Walden does not have: 208.
SELECT * FROM msdb.dbo.log_shipping_primary_databases;
GO
