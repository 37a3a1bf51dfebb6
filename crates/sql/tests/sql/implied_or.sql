-- An OR across two sources filters each of them before the join by what it implies of
-- that source alone (join.rs, Flat::implied_by_ors): TPC-H Q7's nation pair. The OR is still
-- applied to the joined rows, so the answer is the one without the implied filters.
CREATE TABLE nations (id INT PRIMARY KEY, name VARCHAR(10));
CREATE TABLE trips (id INT PRIMARY KEY, from_id INT, to_id INT, km INT);
INSERT INTO nations VALUES (1, 'FRANCE'), (2, 'GERMANY'), (3, 'SPAIN'), (4, 'ITALY');
INSERT INTO trips SELECT value, value % 4 + 1, value / 4 % 4 + 1, value FROM GENERATE_SERIES(1, 64);
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT a.name, b.name, SUM(t.km) AS km FROM trips t, nations a, nations b
WHERE t.from_id = a.id AND t.to_id = b.id
  AND ((a.name = 'FRANCE' AND b.name = 'GERMANY') OR (a.name = 'GERMANY' AND b.name = 'FRANCE'))
GROUP BY a.name, b.name;
GO
SET SHOWPLAN_TEXT OFF;
GO
SELECT a.name AS from_name, b.name AS to_name, SUM(t.km) AS km FROM trips t, nations a, nations b
WHERE t.from_id = a.id AND t.to_id = b.id
  AND ((a.name = 'FRANCE' AND b.name = 'GERMANY') OR (a.name = 'GERMANY' AND b.name = 'FRANCE'))
GROUP BY a.name, b.name ORDER BY a.name;
-- A branch with nothing of b alone implies nothing of b; a's filter still comes from both.
SELECT COUNT(*) AS n FROM trips t, nations a, nations b
WHERE t.from_id = a.id AND t.to_id = b.id
  AND ((a.name = 'FRANCE' AND b.name = 'GERMANY') OR (a.name = 'SPAIN' AND t.km > 30));
-- The same counted without any OR to imply from.
SELECT (SELECT COUNT(*) FROM trips t JOIN nations a ON t.from_id = a.id JOIN nations b ON t.to_id = b.id
        WHERE a.name = 'FRANCE' AND b.name = 'GERMANY')
     + (SELECT COUNT(*) FROM trips t JOIN nations a ON t.from_id = a.id WHERE a.name = 'SPAIN' AND t.km > 30) AS n;
GO
-- TPC-H Q19's shape: the join key is in every branch of the OR, so it is factored out and
-- the join is a hash join with the OR as its residual; what each branch says of one table
-- filters that table's scan as an OR of its parts (prepared: filter.rs). NULLs in the
-- columns the branches test make a branch UNKNOWN, never TRUE.
CREATE TABLE parts (pk INT PRIMARY KEY, brand VARCHAR(10), size INT);
CREATE TABLE lines (id INT PRIMARY KEY, pk INT, qty INT, mode VARCHAR(10));
INSERT INTO parts SELECT value, CASE value % 4 WHEN 0 THEN 'B12' WHEN 1 THEN 'B23' WHEN 2 THEN NULL ELSE 'B34' END,
    CASE WHEN value % 7 = 0 THEN NULL ELSE value % 15 END FROM GENERATE_SERIES(1, 40);
INSERT INTO lines SELECT value, value % 45, CASE WHEN value % 11 = 0 THEN NULL ELSE value % 31 END,
    CASE value % 3 WHEN 0 THEN 'AIR' WHEN 1 THEN NULL ELSE 'SHIP' END FROM GENERATE_SERIES(1, 400);
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT SUM(l.qty) AS q, COUNT(*) AS n FROM lines l, parts p
WHERE (p.pk = l.pk AND p.brand = 'B12' AND l.qty BETWEEN 1 AND 11 AND p.size <= 5 AND l.mode = 'AIR')
   OR (p.pk = l.pk AND p.brand = 'B23' AND l.qty >= 10 AND l.qty <= 20 AND p.size <= 10)
   OR (p.pk = l.pk AND p.brand = 'B34' AND NOT (l.qty < 20) AND l.qty <= 30 AND l.mode IN ('AIR', 'SHIP'));
-- A branch without the join key: nothing common to factor, so the pairs are nested loops
-- checked by the whole OR.
SELECT COUNT(*) AS n FROM lines l, parts p
WHERE (p.pk = l.pk AND p.brand = 'B12' AND l.qty <= 11)
   OR (p.brand = 'B23' AND l.qty = 30);
GO
SET SHOWPLAN_TEXT OFF;
GO
SELECT SUM(l.qty) AS q, COUNT(*) AS n FROM lines l, parts p
WHERE (p.pk = l.pk AND p.brand = 'B12' AND l.qty BETWEEN 1 AND 11 AND p.size <= 5 AND l.mode = 'AIR')
   OR (p.pk = l.pk AND p.brand = 'B23' AND l.qty >= 10 AND l.qty <= 20 AND p.size <= 10)
   OR (p.pk = l.pk AND p.brand = 'B34' AND NOT (l.qty < 20) AND l.qty <= 30 AND l.mode IN ('AIR', 'SHIP'));
-- The same rows, each branch counted by itself (the branches exclude each other by brand).
SELECT SUM(q) AS q, SUM(n) AS n FROM (
    SELECT SUM(l.qty) AS q, COUNT(*) AS n FROM lines l JOIN parts p ON p.pk = l.pk
    WHERE p.brand = 'B12' AND l.qty BETWEEN 1 AND 11 AND p.size <= 5 AND l.mode = 'AIR'
    UNION ALL SELECT SUM(l.qty), COUNT(*) FROM lines l JOIN parts p ON p.pk = l.pk
    WHERE p.brand = 'B23' AND l.qty >= 10 AND l.qty <= 20 AND p.size <= 10
    UNION ALL SELECT SUM(l.qty), COUNT(*) FROM lines l JOIN parts p ON p.pk = l.pk
    WHERE p.brand = 'B34' AND l.qty >= 20 AND l.qty <= 30 AND l.mode IN ('AIR', 'SHIP')) AS b;
SELECT COUNT(*) AS n FROM lines l, parts p
WHERE (p.pk = l.pk AND p.brand = 'B12' AND l.qty <= 11)
   OR (p.brand = 'B23' AND l.qty = 30);
SELECT (SELECT COUNT(*) FROM lines l JOIN parts p ON p.pk = l.pk WHERE p.brand = 'B12' AND l.qty <= 11)
     + (SELECT COUNT(*) FROM lines l CROSS JOIN parts p WHERE p.brand = 'B23' AND l.qty = 30) AS n;
-- One table's OR of ANDs with NULLs, NOT and an operand the filter cannot prepare: UNKNOWN
-- rows are dropped, as the interpreter drops them (the CASE form decides row by row).
SELECT COUNT(*) AS n FROM lines
WHERE (qty > 25 AND mode = 'AIR') OR NOT (qty <= 5 OR mode = 'SHIP') OR (LEN(mode) = 3 AND qty IS NULL);
SELECT SUM(CASE WHEN (qty > 25 AND mode = 'AIR') OR NOT (qty <= 5 OR mode = 'SHIP')
    OR (LEN(mode) = 3 AND qty IS NULL) THEN 1 ELSE 0 END) AS n FROM lines;
-- A conversion error in an OR's operand is raised where the interpreter raises it: only
-- when the operands before it leave the answer open.
SELECT COUNT(*) AS n FROM lines WHERE qty >= 0 OR qty IS NULL OR CAST(mode AS INT) = 1;
SELECT COUNT(*) AS n FROM lines WHERE qty < 0 OR CAST(mode AS INT) = 1;
GO
