-- OUTPUT on INSERT, UPDATE and DELETE: as a result set, and INTO a table variable or #temp.
CREATE DATABASE outdb
GO
USE outdb
CREATE TABLE dbo.o (id INT IDENTITY(1,1) PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT DEFAULT 5)
GO
-- INSERTED shows the identity and default values the insert produced.
INSERT INTO dbo.o (name) OUTPUT INSERTED.id, INSERTED.name, INSERTED.qty VALUES ('a'), ('b')
INSERT dbo.o (name, qty) OUTPUT INSERTED.* VALUES ('c', 1)
GO
-- UPDATE has both: the row before and after.
UPDATE dbo.o SET qty = qty * 10 OUTPUT DELETED.qty AS old_qty, INSERTED.qty AS new_qty, INSERTED.id WHERE id <= 2
DELETE FROM dbo.o OUTPUT DELETED.id, DELETED.name + '!' AS gone WHERE name = 'c'
GO
-- OUTPUT ... INTO a table variable and a #temp table, with and without a column list.
DECLARE @log TABLE (id INT, name VARCHAR(20))
INSERT dbo.o (name) OUTPUT INSERTED.id, INSERTED.name INTO @log VALUES ('d'), ('e')
SELECT * FROM @log
CREATE TABLE #audit (old INT, new INT)
UPDATE dbo.o SET qty = 0 OUTPUT DELETED.qty, INSERTED.qty INTO #audit (old, new)
SELECT old, new FROM #audit ORDER BY old
GO
-- Pseudo-tables the statement lacks, unknown columns and qualifiers.
INSERT dbo.o (name) OUTPUT DELETED.id VALUES ('x')
GO
INSERT dbo.o (name) OUTPUT INSERTED.nosuch VALUES ('x')
GO
DELETE dbo.o OUTPUT foo.id WHERE id = 1
GO
DELETE dbo.o OUTPUT nosuch WHERE id = 1
GO
-- A statement that fails is undone and returns no rows.
BEGIN TRY
    INSERT dbo.o (name) OUTPUT INSERTED.id VALUES ('ok'), (NULL)
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS n
END CATCH
SELECT COUNT(*) AS remaining FROM dbo.o
GO
