CREATE DATABASE txdb
GO
USE txdb
ALTER DATABASE txdb SET DELAYED_DURABILITY = ALLOWED
CREATE TABLE dbo.t (id INT PRIMARY KEY, v VARCHAR(20))
GO
SELECT @@TRANCOUNT AS before
BEGIN TRAN
BEGIN TRANSACTION inner_tx
SELECT @@TRANCOUNT AS nested
INSERT INTO dbo.t VALUES (1, 'one')
COMMIT
SELECT @@TRANCOUNT AS after_inner_commit
COMMIT WITH (DELAYED_DURABILITY = ON)
SELECT @@TRANCOUNT AS after_commit
GO
BEGIN TRAN
INSERT INTO dbo.t VALUES (2, 'two')
SAVE TRAN sp1
INSERT INTO dbo.t VALUES (3, 'three')
ROLLBACK TRAN sp1
SELECT @@TRANCOUNT AS after_savepoint_rollback
COMMIT WORK
SELECT id, v FROM dbo.t ORDER BY id
GO
BEGIN TRAN
INSERT INTO dbo.t VALUES (4, 'four')
ROLLBACK
SELECT COUNT(*) AS rows_after_rollback FROM dbo.t
GO
-- Statement atomicity inside a transaction: the failing multi-row insert leaves nothing.
BEGIN TRAN
INSERT INTO dbo.t VALUES (5, 'five'), (1, 'duplicate')
SELECT @@TRANCOUNT AS still_open
COMMIT
SELECT id FROM dbo.t ORDER BY id
GO
SET XACT_ABORT ON
BEGIN TRAN
INSERT INTO dbo.t VALUES (6, 'six')
INSERT INTO dbo.t VALUES (6, 'six again')
PRINT 'not reached'
GO
SELECT @@TRANCOUNT AS after_xact_abort, COUNT(*) AS n FROM dbo.t
SET XACT_ABORT OFF
GO
EXEC sys.sp_flush_log
EXEC sp_flush_log
CHECKPOINT
GO
USE master
DROP DATABASE txdb
SELECT name FROM sys.databases WHERE name = 'txdb'
GO
-- SET IMPLICIT_TRANSACTIONS ON (what mssql-jdbc sends for setAutoCommit(false)): a statement
-- that reads or changes a table opens a transaction that stays open until COMMIT/ROLLBACK.
CREATE TABLE it (k INT)
SET IMPLICIT_TRANSACTIONS ON
SELECT @@TRANCOUNT AS before_any, @@OPTIONS & 2 AS implicit_bit
INSERT INTO it VALUES (1)
SELECT @@TRANCOUNT AS after_insert
ROLLBACK
SELECT COUNT(*) AS rolled_back FROM it
SELECT @@TRANCOUNT AS after_select
COMMIT
BEGIN TRAN
SELECT @@TRANCOUNT AS begin_makes_two
COMMIT
COMMIT
INSERT INTO it VALUES (2)
COMMIT WITH (DELAYED_DURABILITY = ON)
SET IMPLICIT_TRANSACTIONS OFF
SELECT k FROM it
SELECT @@TRANCOUNT AS autocommit_again
DROP TABLE it
GO
-- Options drivers send at login: accepted at their defaults.
SET TEXTSIZE 2147483647
SET DATEFORMAT mdy
SET DATEFIRST 7
SET DEADLOCK_PRIORITY LOW
SELECT @@TEXTSIZE AS text_size
SET TEXTSIZE 0
SELECT @@TEXTSIZE AS text_size_default
SET DATEFORMAT dmy
GO
-- @@OPTIONS: SQL Server's bits for the options Walden always has on (5496), and NOCOUNT (512)
-- and XACT_ABORT (16384) as the session sets them.
SELECT @@OPTIONS AS defaults
SET NOCOUNT ON
SET XACT_ABORT ON
SELECT @@OPTIONS & 512 AS nocount_bit, @@OPTIONS & 16384 AS xact_abort_bit
SET NOCOUNT OFF
SET XACT_ABORT OFF
SELECT @@OPTIONS AS defaults_again
GO
-- SET NOEXEC ON (and PARSEONLY): later batches are parsed, syntax errors reported, but nothing
-- runs until SET NOEXEC OFF, as deployment scripts rely on after a failed step.
CREATE TABLE noexec_guard (k INT)
SET NOEXEC ON
GO
INSERT INTO noexec_guard VALUES (1)
DROP TABLE noexec_guard
PRINT 'not printed'
GO
SELECT 1 +
GO
SET NOEXEC OFF
GO
SELECT COUNT(*) AS rows_in_guard FROM noexec_guard
SET PARSEONLY ON
SELECT 'not run' AS x
SET PARSEONLY OFF
DROP TABLE noexec_guard
GO
-- SET FMTONLY ON (how mssql-jdbc asks for a prepared statement's columns): a SELECT sends its
-- columns without rows, and nothing else runs.
CREATE TABLE fmt_t (k INT, note NVARCHAR(10))
INSERT INTO fmt_t VALUES (1, N'one')
SET FMTONLY ON
SELECT k, note FROM fmt_t WHERE k = 1
INSERT INTO fmt_t VALUES (2, N'two')
DECLARE @n INT = 5
SELECT @n = COUNT(*) FROM fmt_t
SET FMTONLY OFF
SELECT COUNT(*) AS still_one, @n AS n_unchanged FROM fmt_t
DROP TABLE fmt_t
GO
-- SHOWPLAN_XML describes the batches after it (showplan_xml.sql) until a SHOWPLAN option
-- is set OFF; this one describes nothing.
SET SHOWPLAN_XML ON
GO
SET SHOWPLAN_TEXT OFF
GO
