-- A query block decodes only the columns its references name (exec/demand.rs), and a scan's
-- conjuncts that compare a column with a constant are prepared once (exec/filter.rs). Every
-- answer below must be what reading whole rows gives: each names a column only in a place
-- that is easy to miss (a subquery, ORDER BY, OVER, WITHIN GROUP, APPLY, ON, a view).
CREATE TABLE wide (id INT PRIMARY KEY, a INT, b VARCHAR(10), c DATE, d DECIMAL(9,2),
  e VARCHAR(MAX), f NVARCHAR(20), g INT);
CREATE TABLE other (id INT PRIMARY KEY, wide_id INT, note VARCHAR(10));
INSERT INTO wide SELECT value, value % 5, CONCAT('b', value % 3), DATEADD(day, value, '2024-01-01'),
  value * 1.25, REPLICATE(CAST('x' AS VARCHAR(MAX)), 9000 + value), CONCAT(N'f', value), value % 4
FROM GENERATE_SERIES(1, 40);
INSERT INTO wide VALUES (41, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO other SELECT value, value % 41 + 1, CONCAT('n', value) FROM GENERATE_SERIES(1, 20);
GO
-- ORDER BY a column the list does not name.
SELECT TOP 3 id FROM wide ORDER BY d DESC;
GO
-- A correlated subquery names the outer block's column g.
SELECT id, (SELECT COUNT(*) FROM other o WHERE o.wide_id = w.g) AS n FROM wide w WHERE id <= 4;
GO
-- EXISTS and IN with the outer column inside.
SELECT id FROM wide w WHERE EXISTS (SELECT 1 FROM other o WHERE o.id = w.a + 10) AND id < 8;
SELECT id FROM wide w WHERE w.a IN (SELECT o.id FROM other o WHERE o.note = CONCAT('n', w.g)) ORDER BY id;
GO
-- Window clauses and WITHIN GROUP.
SELECT id, ROW_NUMBER() OVER (PARTITION BY a ORDER BY d DESC) AS rn FROM wide WHERE id <= 6 ORDER BY id;
SELECT STRING_AGG(CAST(id AS VARCHAR(5)), ',') WITHIN GROUP (ORDER BY c DESC) AS ids FROM wide WHERE id <= 5;
GO
-- CROSS APPLY and OUTER APPLY naming the left side's column.
SELECT w.id, x.note FROM wide w CROSS APPLY (SELECT TOP 1 note FROM other o WHERE o.wide_id = w.g ORDER BY o.id) x
WHERE w.id <= 3 ORDER BY w.id;
GO
-- Joins: ON names columns the list does not; an outer join's inner side.
SELECT o.id FROM other o JOIN wide w ON w.id = o.wide_id AND w.f = CONCAT(N'f', o.wide_id) WHERE o.id <= 3 ORDER BY o.id;
SELECT o.id, w.b FROM other o LEFT JOIN wide w ON w.id = o.wide_id + 30 ORDER BY o.id;
GO
-- A view renames its table's columns; the outer query names only the new names.
CREATE VIEW wide_v AS SELECT id AS k, LEN(e) AS e_len, c AS day FROM wide;
GO
SELECT k, e_len FROM wide_v WHERE day = '2024-01-03';
GO
-- * and t.* read every column.
SELECT * FROM wide WHERE id = 41;
SELECT LEN(x.e) AS len_e, x.g FROM (SELECT w.*, o.note FROM wide w JOIN other o ON o.wide_id = w.id WHERE o.id = 1) x;
GO
-- An off-row value decoded only when named, and whole when it is.
SELECT id, LEN(e) AS len_e FROM wide WHERE id IN (1, 40, 41) ORDER BY id;
GO
-- Prepared conjuncts: a date column against text, BETWEEN, IN, a constant on the left,
-- NULLs, a decimal against an integer and text.
SELECT COUNT(*) AS n FROM wide WHERE c >= '2024-01-10' AND c < '2024-01-20';
SELECT COUNT(*) AS n FROM wide WHERE d BETWEEN 10 AND '20.00';
SELECT COUNT(*) AS n FROM wide WHERE d NOT BETWEEN 10 AND 20;
SELECT COUNT(*) AS n FROM wide WHERE a IN (1, 3) AND b NOT IN ('b0', 'B1 ');
SELECT COUNT(*) AS n FROM wide WHERE '2024-01-05' > c;
SELECT COUNT(*) AS n FROM wide WHERE a <> 2;
SELECT COUNT(*) AS n FROM wide WHERE f = N'F7';
SET ANSI_NULLS OFF;
SELECT id FROM wide WHERE a = NULL;
SET ANSI_NULLS ON;
SELECT id FROM wide WHERE a = NULL;
GO
-- A constant that does not convert fails on the first row read, as interpreted; none
-- when no row is read.
SELECT COUNT(*) AS n FROM wide WHERE id > 100 AND c = 'not a date';
SELECT COUNT(*) AS n FROM wide WHERE c = 'not a date';
GO
-- A SELECT that assigns reads what it names.
DECLARE @s DECIMAL(18,2) = 0, @n INT;
SELECT @s = @s + d, @n = g FROM wide WHERE id <= 4;
SELECT @s AS s, @n AS n;
GO
-- TOP n ... ORDER BY drops a row that cannot sort before the n-th kept one (query.rs); over
-- a few thousand rows with ties the first n are those of a full sort, ties in input order.
CREATE TABLE topn (id INT PRIMARY KEY, v INT, w VARCHAR(5));
INSERT INTO topn SELECT value, value * 7919 % 1000, CHAR(65 + value % 26) FROM GENERATE_SERIES(1, 3000);
GO
SELECT TOP 6 id, v FROM topn ORDER BY v DESC;
SELECT TOP 6 id, v, w FROM topn ORDER BY w, v;
SELECT COUNT(*) AS differences FROM (SELECT TOP 40 id FROM topn ORDER BY v, id DESC) t
WHERE id NOT IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY v, id DESC) AS rn FROM topn) r WHERE rn <= 40);
GO
-- A row is decoded a conjunct at a time: each conjunct reads a column the ones before it do
-- not, most rows stop at the first or second, and the columns a later conjunct or the list
-- reads must be the row's own, not those of a row decoded before it (b, f and e are strings,
-- d is NULL in the last row).
SELECT id, b, f, LEN(e) AS e_len, d FROM wide
WHERE g = 1 AND b <> 'b0' AND f LIKE N'f1%' AND d > 5 ORDER BY id;
SELECT id, b, d FROM wide WHERE a = 2 AND c >= '2024-01-10' AND b = 'b1' ORDER BY id;
SELECT COUNT(*) AS n, SUM(d) AS total FROM wide WHERE c < '2024-01-30' AND a <> 0 AND d BETWEEN 2 AND 40;
GO
