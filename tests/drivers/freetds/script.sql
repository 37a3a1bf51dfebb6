CREATE DATABASE [@DATABASE@]
go
ALTER DATABASE [@DATABASE@] SET DELAYED_DURABILITY = ALLOWED
go
USE [@DATABASE@]
go
SELECT DB_NAME() AS db
go
SELECT CONVERT(VARCHAR(10), CONVERT(VARBINARY(4), protocol_version), 1) AS tds_version FROM sys.dm_exec_connections WHERE session_id = @@SPID
go
SELECT CAST(42 AS INT) AS i, CAST(9007199254740993 AS BIGINT) AS b, CAST(1 AS BIT) AS f, CAST(12345678.91 AS DECIMAL(10,2)) AS d, CAST(-2.5 AS FLOAT) AS x, CAST('abc' AS VARCHAR(20)) AS v, N'Grüße, 日本語 ✓ 😀' AS n, CAST(0xDEADBEEF00 AS VARBINARY(16)) AS vb, CAST('2024-02-29' AS DATE) AS dt, CAST('2024-02-29 13:45:56.1234567' AS DATETIME2) AS dt2, CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS UNIQUEIDENTIFIER) AS g, CAST(NULL AS INT) AS ni, CAST(NULL AS NVARCHAR(10)) AS nn
go
SELECT LEN(m) AS len, LEFT(m, 14) AS head, RIGHT(m, 8) AS tail, m AS whole FROM (SELECT REPLICATE(CAST(N'walden-' AS NVARCHAR(MAX)), 3000) + N'é' AS m) AS t
go
CREATE TABLE k (id INT NOT NULL CONSTRAINT pk_k PRIMARY KEY, note NVARCHAR(20))
go
INSERT INTO k (id, note) VALUES (1, N'first'), (2, N'zweite ü')
go
CREATE PROCEDURE add_one @a INT, @b INT OUTPUT AS BEGIN SET @b = @a + 1; SELECT @a AS a_in_proc; RETURN @a * 2 END
go
DECLARE @o INT, @r INT; EXEC @r = add_one 41, @o OUTPUT; SELECT @o AS out_param, @r AS return_status
go
BEGIN TRAN
INSERT INTO k (id, note) VALUES (10, N'delayed')
SELECT @@TRANCOUNT AS trancount_in
COMMIT WITH (DELAYED_DURABILITY = ON)
SELECT @@TRANCOUNT AS trancount_after
go
BEGIN TRAN
INSERT INTO k (id, note) VALUES (11, N'rolled back')
ROLLBACK
go
SELECT id, note FROM k ORDER BY id
go
SELECT 1 +
go
SELECT 'after 102' AS still_connected
go
SELECT * FROM no_such_table
go
SELECT 'after 208' AS still_connected
go
SELECT 1 / 0
go
SELECT 'after 8134' AS still_connected
go
INSERT INTO k (id) VALUES (1)
go
SELECT 'after 2627' AS still_connected, COUNT(*) AS rows_in_k FROM k
go
exit
