-- BULK INSERT and OPENROWSET(BULK ...) from the data files in tests/data/bulk (paths are
-- relative to the server's working directory, the crate's directory under cargo test).
CREATE TABLE people (id INT PRIMARY KEY, name NVARCHAR(20) NULL, born DATE, amount DECIMAL(9, 2) DEFAULT 1)
GO
-- Tab-separated, CRLF rows, a header skipped with FIRSTROW; an empty field takes the default.
BULK INSERT people FROM 'tests/data/bulk/people.tsv' WITH (FIRSTROW = 2)
SELECT * FROM people ORDER BY id
GO
-- KEEPNULLS: an empty field stays NULL.
DELETE people
BULK INSERT dbo.people FROM 'tests/data/bulk/people.tsv' WITH (FIRSTROW = 2, KEEPNULLS, LASTROW = 3)
SELECT * FROM people ORDER BY id
GO
-- FORMAT = 'CSV': quoted fields hold terminators and doubled quotes; "" is an empty string.
CREATE TABLE notes (id INT, name VARCHAR(20), note VARCHAR(20))
BULK INSERT notes FROM 'tests/data/bulk/people.csv' WITH (FORMAT = 'CSV', FIRSTROW = 2, FIELDTERMINATOR = ',', ROWTERMINATOR = '\n')
SELECT id, REPLACE(name, CHAR(10), '<LF>') AS name, note, CASE WHEN note IS NULL THEN 'null' ELSE 'text' END AS kind FROM notes ORDER BY id
GO
-- Bad rows: each is reported with its row and column and skipped, up to MAXERRORS.
CREATE TABLE measures (id INT, v INT, d DATE)
BULK INSERT measures FROM 'tests/data/bulk/bad.txt' WITH (FIELDTERMINATOR = '|')
SELECT * FROM measures ORDER BY id
GO
-- More bad rows than MAXERRORS allows: 4865, and nothing of the load stays.
DELETE measures
BULK INSERT measures FROM 'tests/data/bulk/bad.txt' WITH (FIELDTERMINATOR = '|', MAXERRORS = 2)
SELECT COUNT(*) AS loaded FROM measures
GO
-- BATCHSIZE: the batches before the failing one stay.
CREATE TABLE words (id INT PRIMARY KEY, w VARCHAR(10))
INSERT words VALUES (5, 'taken')
GO
BULK INSERT words FROM 'tests/data/bulk/pipes.txt' WITH (FIELDTERMINATOR = '|', BATCHSIZE = 2)
GO
SELECT * FROM words ORDER BY id
GO
-- Without BATCHSIZE it is all or nothing; inside a transaction too.
DELETE words WHERE id <> 5
BULK INSERT words FROM 'tests/data/bulk/pipes.txt' WITH (FIELDTERMINATOR = '|')
GO
SELECT COUNT(*) AS n FROM words
GO
BEGIN TRAN
BULK INSERT words FROM 'tests/data/bulk/pipes.txt' WITH (FIELDTERMINATOR = '|', BATCHSIZE = 2, LASTROW = 4)
SELECT @@TRANCOUNT AS trancount, COUNT(*) AS n FROM words
ROLLBACK
SELECT COUNT(*) AS n FROM words
GO
-- Widechar (UTF-16) and code pages.
CREATE TABLE texts (id INT, t NVARCHAR(20))
BULK INSERT texts FROM 'tests/data/bulk/wide.txt' WITH (DATAFILETYPE = 'widechar', FIELDTERMINATOR = ',')
BULK INSERT texts FROM 'tests/data/bulk/latin1.txt' WITH (CODEPAGE = 'ACP', FIELDTERMINATOR = ';')
BULK INSERT texts FROM 'tests/data/bulk/latin1.txt' WITH (CODEPAGE = '65001', FIELDTERMINATOR = ';')
SELECT id, t, UNICODE(SUBSTRING(t, 4, 1)) AS fourth FROM texts ORDER BY id
GO
-- KEEPIDENTITY: the file's values; without it the identity numbers the rows.
CREATE TABLE idents (id INT IDENTITY(1, 1), name VARCHAR(10), n INT DEFAULT 42)
BULK INSERT idents FROM 'tests/data/bulk/ident.txt' WITH (FIELDTERMINATOR = ',')
BULK INSERT idents FROM 'tests/data/bulk/ident.txt' WITH (FIELDTERMINATOR = ',', KEEPIDENTITY)
SELECT * FROM idents ORDER BY id
GO
-- A duplicate key ends the load (2627), not counted as a bad row.
CREATE TABLE keyed (id INT PRIMARY KEY, v VARCHAR(5))
BULK INSERT keyed FROM 'tests/data/bulk/dups.txt' WITH (FIELDTERMINATOR = ',')
GO
SELECT COUNT(*) AS n FROM keyed
GO
-- Errors before anything is read.
BULK INSERT keyed FROM 'tests/data/bulk/no-such-file.txt'
GO
BULK INSERT nosuchtable FROM 'tests/data/bulk/dups.txt'
GO
BULK INSERT keyed FROM 'tests/data/bulk/dups.txt' WITH (CODEPAGE = '437')
GO
BULK INSERT keyed FROM 'tests/data/bulk/dups.txt' WITH (DATAFILETYPE = 'native')
GO
BULK INSERT keyed FROM 'tests/data/bulk/dups.txt' WITH (FORMATFILE = 'x.fmt')
GO
BULK INSERT keyed FROM 'tests/data/bulk/dups.txt' WITH (FIRSTROW = 3, LASTROW = 2)
GO
BULK INSERT keyed FROM 'tests/data/bulk/dups.txt' WITH (FORMAT = 'JSON')
GO
BULK INSERT keyed FROM 'tests/data/bulk/dups.txt' WITH (FIELDTERMINATOR = ',' TABLOCK CHECK_CONSTRAINTS FIRE_TRIGGERS ROWS_PER_BATCH = 10 KILOBYTES_PER_BATCH = 1 ORDER (id ASC) LASTROW = 2)
SELECT * FROM keyed ORDER BY id
GO
-- OPENROWSET(BULK ...): the whole file as one value.
SELECT BulkColumn, DATALENGTH(BulkColumn) AS len FROM OPENROWSET(BULK 'tests/data/bulk/blob.bin', SINGLE_BLOB) AS f
SELECT JSON_VALUE(BulkColumn, '$.name') AS name FROM OPENROWSET(BULK 'tests/data/bulk/clob.txt', SINGLE_CLOB) AS j
SELECT x.c FROM OPENROWSET(BULK 'tests/data/bulk/nclob.txt', SINGLE_NCLOB) AS x (c)
GO
CREATE TABLE docs (id INT IDENTITY, body VARCHAR(MAX))
INSERT docs (body) SELECT BulkColumn FROM OPENROWSET(BULK 'tests/data/bulk/clob.txt', SINGLE_CLOB) AS d
SELECT id, LEN(body) AS len FROM docs
GO
SELECT * FROM OPENROWSET(BULK 'tests/data/bulk/clob.txt', SINGLE_CLOB)
GO
SELECT * FROM OPENROWSET(BULK 'tests/data/bulk/none.txt', SINGLE_BLOB) AS b
GO
SELECT * FROM OPENROWSET(BULK 'tests/data/bulk/blob.bin', SINGLE_NCLOB) AS b
GO
-- Not inside a function (443).
CREATE FUNCTION loads() RETURNS INT AS BEGIN BULK INSERT words FROM 'tests/data/bulk/pipes.txt' RETURN 1 END
GO
