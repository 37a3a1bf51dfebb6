-- Receipts (the guide's guarantee 6): a session learns the LSN of its last commit and
-- whether it is hardened (sys.sp_last_commit), and waits, without forcing a flush, until a
-- given LSN is hardened (sys.sp_wait_for_hardened). Both are Walden's own.
EXEC sys.sp_last_commit
GO
CREATE DATABASE receiptdb
GO
USE receiptdb
ALTER DATABASE receiptdb SET DELAYED_DURABILITY = FORCED
CREATE TABLE dbo.t (id INT PRIMARY KEY)
CREATE TABLE #r (database_id INT, database_name NVARCHAR(128), commit_lsn BIGINT,
                 is_delayed BIT, is_hardened BIT)
GO
-- A delayed autocommit: its receipt names it, and the wait hardens it without a flush of its own.
INSERT dbo.t VALUES (1)
INSERT #r EXEC sys.sp_last_commit
SELECT database_name, is_delayed, CASE WHEN commit_lsn > 0 THEN 1 ELSE 0 END AS has_lsn,
       CASE WHEN commit_lsn = (SELECT last_commit_lsn FROM sys.dm_db_log_stats(DB_ID())) THEN 1 ELSE 0 END AS is_the_last_commit
FROM #r
DECLARE @lsn BIGINT = (SELECT commit_lsn FROM #r)
EXEC sys.sp_wait_for_hardened @lsn
SELECT CASE WHEN log_hardened_lsn >= @lsn THEN 1 ELSE 0 END AS hardened_after_wait
FROM sys.dm_db_log_stats(DB_ID())
DELETE #r
INSERT #r EXEC sys.sp_last_commit
SELECT is_delayed, is_hardened FROM #r
GO
-- Without an LSN it waits for the session's last commit.
BEGIN TRAN
INSERT dbo.t VALUES (2)
COMMIT
EXEC sys.sp_wait_for_hardened
DELETE #r
INSERT #r EXEC sys.sp_last_commit
SELECT is_delayed, is_hardened FROM #r
GO
-- A fully durable commit is hardened when it returns; a read-only one leaves the receipt alone.
ALTER DATABASE receiptdb SET DELAYED_DURABILITY = DISABLED
DELETE #r
INSERT dbo.t VALUES (3)
INSERT #r EXEC sys.sp_last_commit
DECLARE @before BIGINT = (SELECT commit_lsn FROM #r)
SELECT COUNT(*) AS row_count FROM dbo.t
DELETE #r
INSERT #r EXEC sys.sp_last_commit
SELECT is_delayed, is_hardened, CASE WHEN commit_lsn = @before THEN 1 ELSE 0 END AS unchanged FROM #r
EXEC sys.sp_wait_for_hardened -1
GO
USE master
DROP DATABASE receiptdb
GO
