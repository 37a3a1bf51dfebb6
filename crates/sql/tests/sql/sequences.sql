-- ALTER SEQUENCE: RESTART with and without a value, new options that keep the last value,
-- the options ALTER may not change, and a rolled-back ALTER. A DEFAULT of NEXT VALUE FOR is
-- shown as SQL Server shows it, which is how BenchBase finds the sequence to restart.
CREATE SEQUENCE dbo.rev_seq START WITH 1 MINVALUE 1 INCREMENT BY 1
CREATE TABLE dbo.rev (id INT NOT NULL DEFAULT NEXT VALUE FOR rev_seq PRIMARY KEY, v INT)
INSERT dbo.rev (v) VALUES (1), (2)
SELECT dc.definition FROM sys.default_constraints AS dc
JOIN sys.columns AS c ON c.default_object_id = dc.object_id WHERE c.name = 'id'
GO
DECLARE @s NVARCHAR(200) = (SELECT REPLACE(REPLACE(dc.definition, '(NEXT VALUE FOR [', ''), '])', '')
    FROM sys.default_constraints AS dc
    JOIN sys.columns AS c ON c.default_object_id = dc.object_id WHERE c.name = 'id')
EXEC ('ALTER SEQUENCE [' + @s + '] RESTART WITH 100')
INSERT dbo.rev (v) VALUES (3)
SELECT id, v FROM dbo.rev ORDER BY id
SELECT name, CAST(start_value AS INT) AS start_value, CAST(current_value AS INT) AS current_value
FROM sys.sequences
GO
-- A new increment goes on from the last value given, not past the cached ones.
ALTER SEQUENCE dbo.rev_seq INCREMENT BY 10 MAXVALUE 1000 NO CACHE
SELECT NEXT VALUE FOR dbo.rev_seq AS next_value
ALTER SEQUENCE dbo.rev_seq RESTART
SELECT NEXT VALUE FOR dbo.rev_seq AS restarted
GO
ALTER SEQUENCE dbo.rev_seq RESTART WITH 5000
GO
ALTER SEQUENCE dbo.rev_seq MINVALUE 1000 MAXVALUE 10
GO
ALTER SEQUENCE dbo.rev_seq AS INT
GO
ALTER SEQUENCE dbo.rev_seq START WITH 3
GO
ALTER SEQUENCE dbo.nosuch RESTART
GO
CREATE SEQUENCE dbo.bad RESTART WITH 4
GO
-- A rolled-back RESTART: the values given in the transaction are never given again.
BEGIN TRAN
ALTER SEQUENCE dbo.rev_seq RESTART WITH 500
SELECT NEXT VALUE FOR dbo.rev_seq AS in_transaction
ROLLBACK
SELECT NEXT VALUE FOR dbo.rev_seq AS after_rollback
SELECT name, CAST(increment AS INT) AS increment, CAST(maximum_value AS INT) AS maximum_value
FROM sys.sequences
GO
-- A sequence a DEFAULT draws from cannot be dropped before the table.
DROP SEQUENCE dbo.rev_seq
GO
DROP TABLE dbo.rev
DROP SEQUENCE dbo.rev_seq
GO
