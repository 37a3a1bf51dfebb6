-- Built-in functions through the registry: conjuncts of a scan that compare function calls
-- (prepared: YEAR, LEN ... BETWEEN, SUBSTRING ... IN, arithmetic) give the interpreter's answers,
-- also beside a case-sensitive column, with NULLs, under ANSI_NULLS OFF and when a row's
-- conversion or division fails; aggregates and grouping keys of calls; the session's
-- functions; argument counts (174, 189), unknown names (195), aggregates out of place (147),
-- xml arguments (8116); PERSISTED computed columns must be deterministic (4936).
CREATE TABLE t (id INT PRIMARY KEY, d DATE NULL, s VARCHAR(20) NULL, cs VARCHAR(20) COLLATE Latin1_General_CS_AS NULL, n INT NULL, x VARCHAR(20) NULL);
INSERT INTO t VALUES (1, '2020-01-05', 'abc', 'abc', 1, '1'), (2, '2021-03-01', 'ABd', 'ABd', 2, '2'), (3, NULL, NULL, NULL, NULL, 'x'), (4, '2020-12-31', 'a', 'a', 0, '4'), (5, '2019-06-30', 'bcd  ', 'Bcd', 10, NULL);
GO
SELECT id FROM t WHERE YEAR(d) = 2020 ORDER BY id;
SELECT id FROM t WHERE LEN(s) BETWEEN 2 AND 3 ORDER BY id;
SELECT id FROM t WHERE NOT LEN(s) BETWEEN 2 AND 3 ORDER BY id;
SELECT id FROM t WHERE SUBSTRING(s, 1, 1) IN ('a', 'B') ORDER BY id;
SELECT id FROM t WHERE SUBSTRING(s, 1, 1) NOT IN ('a') ORDER BY id;
SELECT id FROM t WHERE UPPER(s) = 'ABC' ORDER BY id;
SELECT id FROM t WHERE cs = LOWER(cs) ORDER BY id;
SELECT id FROM t WHERE LOWER(s) = s ORDER BY id;
SELECT id FROM t WHERE 'abd' = LOWER(cs) ORDER BY id;
SELECT id FROM t WHERE DATEADD(day, 1, d) > '2020-12-31' ORDER BY id;
SELECT id FROM t WHERE DATEDIFF(dd, d, '2021-01-01') < 10 ORDER BY id;
SELECT id FROM t WHERE n * 2 + 1 > 3 ORDER BY id;
SELECT id FROM t WHERE ABS(n - 5) <= 4 ORDER BY id;
SELECT id FROM t WHERE ISNULL(s, 'zz') = 'zz' ORDER BY id;
SELECT id FROM t WHERE COALESCE(d, '1900-01-01') < '2000-01-01' ORDER BY id;
SELECT id FROM t WHERE 5 / n > 1 ORDER BY id;
GO
SELECT id FROM t WHERE CAST(x AS INT) = LEN(s) ORDER BY id;
GO
SELECT id FROM t WHERE LEN(s, 1) = 1;
GO
SELECT id FROM t WHERE LEN(s) = 1 AND id > 100;
GO
SET ANSI_NULLS OFF;
SELECT id FROM t WHERE NULLIF(n, 0) = NULL ORDER BY id;
SELECT id FROM t WHERE LEN(s) <> NULL ORDER BY id;
SET ANSI_NULLS ON;
GO
SELECT YEAR(d) AS y, COUNT(*) AS c, SUM(LEN(s)) AS l, MAX(DATEADD(month, 1, d)) AS m FROM t GROUP BY YEAR(d) ORDER BY y;
SELECT SUM(DATEPART(weekday, d)), MIN(DATENAME(month, d)), MAX(ISJSON(s, SCALAR)) FROM t;
SELECT id, IIF(n > 1, 'big', 'small'), DB_NAME(), OBJECT_ID('t'), TYPE_NAME(56), SCHEMA_NAME(1), CURRENT_USER, SYSTEM_USER FROM t ORDER BY id;
GO
SELECT SUM(LEN(x)) FROM t WHERE ISNUMERIC(x) = 1;
GO
SELECT DB_NAME(1, 2);
GO
SELECT OBJECT_ID();
GO
SELECT SESSION_CONTEXT();
GO
SELECT NOSUCH(1);
GO
SELECT dbo.LEN('a');
GO
SELECT LEN();
GO
SELECT SUM(1) FROM t WHERE COUNT(*) > 1;
GO
SELECT ROW_NUMBER();
GO
SELECT IIF(1 = 1, 2);
GO
SELECT LEN(CAST('<a/>' AS XML));
GO
SELECT SUM(CHECKSUM(s)) FROM t;
GO
CREATE TABLE p (id INT PRIMARY KEY, d DATE, twice AS (id * 2) PERSISTED, y AS (YEAR(d)) PERSISTED, age AS (DATEDIFF(day, d, GETDATE())));
INSERT INTO p (id, d) VALUES (1, '2020-05-01');
SELECT id, twice, y FROM p;
GO
CREATE TABLE q (id INT PRIMARY KEY, stamp AS (GETDATE()) PERSISTED);
GO
CREATE TABLE q (id INT PRIMARY KEY, g AS (CAST(NEWID() AS VARCHAR(36))) PERSISTED);
GO
ALTER TABLE p ADD who AS (SUSER_SNAME()) PERSISTED;
GO
ALTER TABLE p ADD who AS (SUSER_SNAME());
SELECT id, who FROM p;
GO
-- NULLIF has its first argument's type, with or without rows to show it.
SELECT NULLIF(CAST('ab' AS NVARCHAR(128)), '') AS n, ISNULL(NULLIF(CAST(NULL AS NVARCHAR(128)), ''), '  .') AS h INTO #nullif_types WHERE 1 = 0;
SELECT name, TYPE_NAME(system_type_id) AS type_name, max_length FROM tempdb.sys.columns WHERE object_id = OBJECT_ID('tempdb..#nullif_types') ORDER BY column_id;
GO
