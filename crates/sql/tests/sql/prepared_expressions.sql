-- A SELECT block's select list, HAVING and ORDER BY are prepared once per execution
-- (prepared.rs): the same values, types and errors, on the same rows, as the interpreter's,
-- under each session option that changes an answer. TOP 100 PERCENT and grouping keep the
-- SELECT out of the streamed path, so the collected SELECT's projection runs.
CREATE TABLE p (id INT PRIMARY KEY, a INT NULL, b INT NULL, name VARCHAR(20) NULL,
    cs VARCHAR(20) COLLATE Latin1_General_CS_AS NULL, d DECIMAL(10, 2) NULL, dt DATETIME2(3) NULL);
INSERT INTO p VALUES
    (1, 1, 2, 'abc', 'abc', 1.50, '2024-02-29 10:11:12.345'),
    (2, 7, 0, 'ABC', 'ABC', -3.25, '2024-03-01 00:00:00'),
    (3, NULL, NULL, NULL, NULL, NULL, NULL),
    (4, 2147483647, -1, '12x', 'Abc', 0, NULL),
    (5, 0, 5, '42', 'a%c', NULL, NULL),
    (6, -5, NULL, '', 'PROMO X', 99.99, NULL);
GO
SELECT TOP 100 PERCENT id,
    CASE WHEN a > b THEN a ELSE b END AS larger,
    CASE a WHEN 1 THEN 'one' WHEN 7 THEN 'seven' ELSE 'other' END AS word,
    CASE WHEN name = 'ABC' THEN 'ci' WHEN cs = 'ABC' THEN 'cs' ELSE '-' END AS matched,
    CASE WHEN cs LIKE 'a%' THEN 1 WHEN name IS NULL THEN 2 WHEN a BETWEEN 0 AND 5 THEN 3 END AS branch,
    IIF(a IN (1, 2) OR b IS NULL, 'yes', 'no') AS iif_in,
    a + b * 2 AS arith, UPPER(name) + '!' AS shout, COALESCE(b, a, 0) AS first_known,
    ISNULL(d, 0) AS d0, CONVERT(VARCHAR(30), dt, 121) AS dt121, CAST(dt AS VARCHAR(40)) AS dt_text
FROM p ORDER BY id;
GO
-- A computed ORDER BY key, prepared too.
SELECT TOP 100 PERCENT id, name FROM p ORDER BY CASE WHEN name IS NULL THEN 1 ELSE 0 END, LEN(name) DESC, id;
GO
-- Errors stop the statement on the row the interpreter stops on.
SELECT TOP 100 PERCENT id, CASE WHEN b = 0 THEN 0 ELSE a / b END AS safe FROM p ORDER BY id;
SELECT TOP 100 PERCENT id, a / b AS q FROM p ORDER BY id;
GO
SELECT TOP 100 PERCENT id, CASE WHEN id < 4 THEN 0 ELSE CAST(name AS INT) END AS n FROM p ORDER BY id;
GO
SELECT TOP 100 PERCENT id, a + 1 AS next FROM p ORDER BY id;
GO
SELECT TOP 100 PERCENT id, CASE WHEN name = cs THEN 1 ELSE 0 END AS same FROM p ORDER BY id;
GO
-- ANSI_NULLS OFF: a NULL written as a literal compares as a value, in CASE too.
SET ANSI_NULLS OFF;
SELECT TOP 100 PERCENT id, CASE WHEN a = NULL THEN 'null' ELSE 'value' END AS eq,
    CASE a WHEN NULL THEN 'null' ELSE 'value' END AS simple,
    CASE WHEN b <> NULL THEN 'known' ELSE 'unknown' END AS ne
FROM p ORDER BY id;
SET ANSI_NULLS ON;
SELECT TOP 100 PERCENT id, CASE WHEN a = NULL THEN 'null' ELSE 'value' END AS eq FROM p ORDER BY id;
GO
-- CONCAT_NULL_YIELDS_NULL OFF: NULL is an empty string to +.
SET CONCAT_NULL_YIELDS_NULL OFF;
SELECT TOP 100 PERCENT id, name + '|' + cs AS joined, CASE WHEN id > 2 THEN name + NULL END AS with_null FROM p ORDER BY id;
SET CONCAT_NULL_YIELDS_NULL ON;
SELECT TOP 100 PERCENT id, name + '|' + cs AS joined FROM p ORDER BY id;
GO
-- ARITHABORT and ANSI_WARNINGS OFF: a division by zero or an overflow is NULL.
SET ARITHABORT OFF;
SET ANSI_WARNINGS OFF;
SELECT TOP 100 PERCENT id, a / b AS q, a + 1 AS next, CAST(a AS TINYINT) AS tiny FROM p ORDER BY id;
SET ARITHABORT ON;
SET ANSI_WARNINGS ON;
GO
-- A grouped block: the select list and HAVING read the aggregates' values.
SELECT CASE WHEN a > 0 THEN 'pos' ELSE 'other' END AS sign, COUNT(*) AS n,
    SUM(CASE WHEN cs LIKE 'a%' THEN 1 ELSE 0 END) AS a_like, MAX(d) * 2 AS twice,
    CASE WHEN COUNT(*) > 2 THEN 'many' ELSE 'few' END AS size
FROM p GROUP BY CASE WHEN a > 0 THEN 'pos' ELSE 'other' END
HAVING COUNT(*) > 1 AND (MIN(id) < 3 OR SUM(b) IS NULL)
ORDER BY SUM(COALESCE(b, 0)) DESC;
GO
SELECT name, COUNT(*) AS n FROM p GROUP BY name HAVING MAX(id) / (MIN(id) - 1) > 0 ORDER BY name;
GO
-- A grouping key of a DATETIME2(3) cast to text shows the column's three fractional digits,
-- as the select list's cast does.
SELECT CAST(dt AS VARCHAR(40)) AS k, COUNT(*) AS n FROM p GROUP BY CAST(dt AS VARCHAR(40)) ORDER BY k;
GO
