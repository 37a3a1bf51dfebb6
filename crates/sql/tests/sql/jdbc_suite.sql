-- What mssql-jdbc's own JUnit suite asks of the server (docs/serve.md, "mssql-jdbc's own
-- tests"): date and time strings with more than seven fractional digits, a table-level key
-- after a column without a comma, the catalog procedures' patterns, empty owners,
-- privileges and server attributes, derived tables in extra parentheses (LimitEscapeTest)
-- and the parameter types sp_describe_undeclared_parameters deduces (PQImpsTest).
CREATE DATABASE jdbcsuite
GO
USE jdbcsuite
GO
-- Digits past the seventh round half up, into the next day if need be; DATETIME still
-- refuses more than three.
SELECT CAST('2018-01-02T11:22:33.123456700+12:34' AS DATETIMEOFFSET) AS nine_digits,
    CAST('2018-01-02 11:22:33.12345674' AS DATETIME2) AS rounded_down,
    CAST('2018-01-02 11:22:33.12345675' AS DATETIME2) AS rounded_up,
    CAST('2018-12-31 23:59:59.99999999' AS DATETIME2) AS next_day,
    CAST('23:59:59.999999951' AS TIME) AS midnight
GO
SELECT CAST('2018-01-02 11:22:33.1234' AS DATETIME)
GO
SELECT CAST('2018-01-02 11:22:33.12345678x' AS DATETIME2)
GO
-- A key with a column list ends the column before it, comma or not.
CREATE TABLE dbo.dated (id INT NOT NULL, d DATE, ts DATETIME2 CONSTRAINT pk_dated PRIMARY KEY (id))
CREATE TABLE dbo.keyed (a INT, b INT UNIQUE NONCLUSTERED (a, b), c INT PRIMARY KEY)
CREATE TABLE dbo.child (id INT PRIMARY KEY,
    dated_id INT FOREIGN KEY REFERENCES dbo.dated (id) ON UPDATE SET NULL,)
GO
SELECT i.name, t.name AS table_name, i.is_primary_key, i.is_unique
FROM sys.indexes i JOIN sys.tables t ON t.object_id = i.object_id
WHERE t.name IN ('dated', 'keyed') ORDER BY t.name, i.name
GO
-- An empty owner finds the table as an omitted one does.
EXEC sp_fkeys @fktable_name = 'child', @fktable_owner = ''
EXEC sp_pkeys 'dated', ''
GO
-- Patterns escape with a backslash, as JDBC's getSearchStringEscape says.
CREATE SCHEMA s_1
GO
CREATE SCHEMA sx1
GO
CREATE PROCEDURE s_1.upd (@id INT, @name VARCHAR(40)) AS SELECT @id
GO
CREATE PROCEDURE sx1.upd (@id INT) AS SELECT @id
GO
EXEC sp_stored_procedures 'upd', 's\_1'
EXEC sp_stored_procedures 'upd', 's_1'
EXEC sp_sproc_columns 'upd', 's\_1'
EXEC sp_sproc_columns 'upd', 's%', NULL, '@i%'
EXEC sp_sproc_columns 'upd', 's\_1', @fUsePattern = 0
EXEC sp_sproc_columns_100 'upd', 's_1', NULL, '@name', @ODBCVer = 3, @fUsePattern = 0
EXEC sp_tables 'dat%', 'db\o'
EXEC sp_columns 'keyed', 'dbo', NULL, '[ab]'
GO
-- The owner's implicit rights: no GRANT exists to add others.
EXEC sp_table_privileges 'dat%'
EXEC sp_column_privileges 'child', NULL, NULL, 'dated%'
EXEC sp_column_privileges 'no_such_table'
EXEC sp_table_privileges
GO
EXEC sp_server_info 1
EXEC sp_server_info 17
EXEC sp_server_info 3
EXEC sp_server_info 'x'
GO
-- A derived table's query may sit in more parentheses; an alias after the innermost `)`
-- makes the parentheses a table source instead.
SELECT TOP ((1)) id FROM (( (SELECT TOP 10 * FROM dbo.dated)) ) t1
SELECT t1.id FROM ((SELECT id FROM dbo.dated) UNION (SELECT 2)) AS t1 ORDER BY t1.id
SELECT a.id FROM ((SELECT 1 AS id) AS a JOIN dbo.dated d ON d.id = a.id)
GO
-- Parameters typed by the columns they meet: declared types as declared, inside IN and
-- EXISTS subqueries (outer columns too), MERGE's actions and INSERT ... SELECT's list.
CREATE TABLE dbo.pq (id INT PRIMARY KEY, at SMALLDATETIME, cash SMALLMONEY, body TEXT,
    nbody NTEXT, label CHAR(30), note VARCHAR(50))
CREATE TABLE dbo.pq2 (id INT, phone BIGINT, plain SMALLINT)
GO
EXEC sp_describe_undeclared_parameters N'SELECT id FROM dbo.pq WHERE at = @a AND cash = @c'
EXEC sp_describe_undeclared_parameters N'INSERT INTO dbo.pq (id, body, nbody) VALUES (1, @b, @n)'
EXEC sp_describe_undeclared_parameters N'SELECT label FROM dbo.pq a WHERE a.id IN
    (SELECT id FROM dbo.pq2 WHERE phone = @p1 AND id = @p2 AND plain = @p3)'
EXEC sp_describe_undeclared_parameters N'SELECT 1 FROM dbo.pq a
    WHERE EXISTS (SELECT 1 FROM dbo.pq2 b WHERE b.id = a.id AND a.note = @note)'
EXEC sp_describe_undeclared_parameters N'MERGE dbo.pq AS T USING dbo.pq2 AS S ON T.id = S.id
    WHEN MATCHED AND S.plain > @min THEN UPDATE SET T.label = @label, T.note = @note
    WHEN NOT MATCHED THEN INSERT (id, cash) VALUES (S.id, @cash);'
EXEC sp_describe_undeclared_parameters N'INSERT INTO dbo.pq2 (plain) SELECT @v
    WHERE NOT EXISTS (SELECT * FROM dbo.pq WHERE label = @label)'
GO
USE master
DROP DATABASE jdbcsuite
GO
