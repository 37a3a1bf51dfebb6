-- SET IDENTITY_INSERT: explicit values for one table's identity column per session, the
-- errors SQL Server gives around it, and generated values continuing past explicit ones.
CREATE TABLE dbo.ii (id INT IDENTITY(1,1) PRIMARY KEY, v VARCHAR(10))
CREATE TABLE dbo.down (id INT IDENTITY(100,-1), v VARCHAR(10))
CREATE TABLE dbo.plain (v INT)
INSERT dbo.ii (v) VALUES ('a')
GO
-- Off: an explicit value is error 544.
INSERT dbo.ii (id, v) VALUES (10, 'b')
GO
SET IDENTITY_INSERT dbo.ii ON
INSERT dbo.ii (id, v) VALUES (10, 'b')
SELECT @@IDENTITY AS at_identity, SCOPE_IDENTITY() AS scope, IDENT_CURRENT('dbo.ii') AS current_value
GO
-- On: the insert list must be there (8101) and must name the identity column (545).
INSERT dbo.ii VALUES (11, 'x')
GO
INSERT dbo.ii (v) VALUES ('y')
GO
-- Neither NULL nor DEFAULT is an explicit value (339).
INSERT dbo.ii (id, v) VALUES (NULL, 'z')
GO
INSERT dbo.ii (id, v) VALUES (DEFAULT, 'z')
GO
-- A value below the current one is inserted and leaves the identity where it was.
INSERT dbo.ii (id, v) SELECT 5, 'low'
SELECT IDENT_CURRENT('dbo.ii') AS still_10
GO
-- One table per session (8107); a table without an identity (8106); a missing one (1088).
SET IDENTITY_INSERT dbo.down ON
GO
SET IDENTITY_INSERT dbo.plain ON
GO
SET IDENTITY_INSERT dbo.nothing_here ON
GO
-- OFF for a table that is not ON is no error; generated values continue past 10.
SET IDENTITY_INSERT dbo.down OFF
SET IDENTITY_INSERT dbo.ii OFF
INSERT dbo.ii (v) VALUES ('c')
SELECT id, v FROM dbo.ii ORDER BY id
GO
-- A descending identity moves down past an explicit value.
SET IDENTITY_INSERT dbo.down ON
INSERT dbo.down (id, v) VALUES (50, 'm')
SET IDENTITY_INSERT dbo.down OFF
INSERT dbo.down (v) VALUES ('next')
SELECT id, v FROM dbo.down ORDER BY id DESC
GO
-- Temporary tables too.
CREATE TABLE #t (id INT IDENTITY, v INT)
SET IDENTITY_INSERT #t ON
INSERT #t (id, v) VALUES (7, 1)
SET IDENTITY_INSERT #t OFF
INSERT #t (v) VALUES (2)
SELECT id, v FROM #t ORDER BY id
GO
-- OUTPUT ... INTO a table with IDENTITY_INSERT ON gives its identity column a value.
SET IDENTITY_INSERT dbo.ii ON
INSERT #t (v) OUTPUT INSERTED.id + 100, CAST(INSERTED.v AS VARCHAR(10)) INTO dbo.ii (id, v) VALUES (3)
SET IDENTITY_INSERT dbo.ii OFF
SELECT id, v FROM dbo.ii WHERE id > 100
GO
-- Error 544 names a temporary table as the session does.
INSERT #t (id, v) VALUES (1, 1)
GO
DROP TABLE dbo.ii
DROP TABLE dbo.down
DROP TABLE dbo.plain
GO
