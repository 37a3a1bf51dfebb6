-- DBCC CHECKIDENT (NORESEED, RESEED, RESEED with a value), TRUNCATE TABLE restarting the
-- identity (and a rolled-back TRUNCATE not), and UPDATE STATISTICS.
CREATE TABLE dbo.ti (id INT IDENTITY(1, 1) PRIMARY KEY, v INT)
INSERT ti (v) VALUES (1), (2), (3)
DBCC CHECKIDENT ('ti')
DBCC CHECKIDENT ('dbo.ti', NORESEED)
GO
DBCC CHECKIDENT ('ti', RESEED, 100)
INSERT ti (v) VALUES (4)
SELECT id FROM ti ORDER BY id
GO
-- RESEED without a value raises the identity to the column's largest.
DBCC CHECKIDENT ('ti', RESEED, 1)
DBCC CHECKIDENT ('ti', RESEED)
INSERT ti (v) VALUES (5)
SELECT MAX(id) AS largest, IDENT_CURRENT('ti') AS current_identity FROM ti
GO
-- TRUNCATE restarts at the seed; a reseed of a fresh table gives the value itself.
TRUNCATE TABLE ti
INSERT ti (v) VALUES (6)
SELECT id FROM ti
TRUNCATE TABLE ti
DBCC CHECKIDENT ('ti', RESEED, 50) WITH NO_INFOMSGS
INSERT ti (v) VALUES (7)
SELECT id FROM ti
GO
-- A rolled-back TRUNCATE keeps the rows and the identity where they were.
BEGIN TRAN
TRUNCATE TABLE ti
ROLLBACK
INSERT ti (v) VALUES (8)
SELECT id, v FROM ti ORDER BY id
GO
DBCC CHECKIDENT ('nothere')
GO
CREATE TABLE dbo.plain (x INT)
DBCC CHECKIDENT ('plain')
GO
UPDATE STATISTICS dbo.ti
UPDATE STATISTICS ti (PK_whatever) WITH FULLSCAN
UPDATE STATISTICS ti WITH SAMPLE 50 PERCENT, NORECOMPUTE
SELECT 'statistics updated' AS done
GO
UPDATE STATISTICS nothere
GO
DROP TABLE dbo.ti, dbo.plain
