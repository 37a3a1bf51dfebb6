-- Correlated scalar aggregate subqueries computed once for every correlation value
-- (join/correlated.rs): each result must equal the per-row one. `TOP 1` keeps the second
-- form of each query per row, so every pair below is the same query run both ways.
CREATE TABLE parts (id INT PRIMARY KEY, name VARCHAR(20), grp INT);
CREATE TABLE sales (id INT PRIMARY KEY, part_id INT, qty DECIMAL(9,2), region VARCHAR(10));
INSERT INTO parts SELECT value, CONCAT('part', value), value % 7 FROM GENERATE_SERIES(1, 60);
INSERT INTO parts VALUES (61, NULL, NULL), (62, 'nosales', 3);
INSERT INTO sales SELECT value, value % 59 + 1, value % 13 + 0.5, CASE value % 3 WHEN 0 THEN 'north' WHEN 1 THEN 'South ' ELSE NULL END
FROM GENERATE_SERIES(1, 3000);
INSERT INTO sales VALUES (3001, NULL, 5, 'north');
GO
-- COUNT over no rows is 0, AVG NULL; a part without sales, a NULL key.
SELECT p.id, (SELECT COUNT(*) FROM sales s WHERE s.part_id = p.id) AS n,
       (SELECT AVG(s.qty) FROM sales s WHERE s.part_id = p.id) AS avg_qty
FROM parts p WHERE p.id IN (1, 2, 59, 60, 61, 62) ORDER BY p.id;
GO
-- The same, per row: no difference.
SELECT COUNT(*) AS differences FROM parts p
WHERE (SELECT COUNT(*) FROM sales s WHERE s.part_id = p.id)
   <> (SELECT TOP 1 COUNT(*) FROM sales s WHERE s.part_id = p.id)
   OR ISNULL((SELECT AVG(s.qty) FROM sales s WHERE s.part_id = p.id), -1)
   <> ISNULL((SELECT TOP 1 AVG(s.qty) FROM sales s WHERE s.part_id = p.id), -1);
GO
-- In WHERE, with an expression over the aggregate and a filter of the subquery's own.
SELECT COUNT(*) AS kept, SUM(s.qty) AS qty FROM sales s, parts p
WHERE p.id = s.part_id AND p.grp = 2
  AND s.qty < (SELECT 0.9 * AVG(s2.qty) FROM sales s2 WHERE s2.part_id = p.id AND s2.region = 'north');
SELECT COUNT(*) AS kept, SUM(s.qty) AS qty FROM sales s, parts p
WHERE p.id = s.part_id AND p.grp = 2
  AND s.qty < (SELECT TOP 1 0.9 * AVG(s2.qty) FROM sales s2 WHERE s2.part_id = p.id AND s2.region = 'north');
GO
-- Two keys; string keys compare as the collation does (case, trailing spaces).
SELECT r.region, r.part_id,
       (SELECT SUM(s.qty) FROM sales s WHERE s.region = r.region AND s.part_id = r.part_id) AS total,
       (SELECT TOP 1 SUM(s.qty) FROM sales s WHERE s.region = r.region AND s.part_id = r.part_id) AS per_row
FROM (VALUES ('NORTH', 3), ('south', 3), ('south  ', 4), (NULL, 4), ('east', 5)) AS r (region, part_id)
ORDER BY r.part_id, r.region;
GO
-- A probe of another type family converts as `=` does: the varchar '7' finds part 7.
SELECT k.v, (SELECT COUNT(*) FROM sales s WHERE s.part_id = k.v) AS n,
       (SELECT TOP 1 COUNT(*) FROM sales s WHERE s.part_id = k.v) AS per_row
FROM (VALUES ('7'), ('8'), ('x9')) AS k (v) WHERE k.v <> 'x9';
GO
-- A conversion error in a group no row asks for is no error; one a row asks for is.
CREATE TABLE texts (k INT, t VARCHAR(10));
INSERT INTO texts VALUES (1, '10'), (1, '20'), (2, 'abc');
SELECT k.k, (SELECT SUM(CAST(t.t AS INT)) FROM texts t WHERE t.k = k.k) AS total
FROM (VALUES (1), (1), (3)) AS k (k);
SELECT k.k, (SELECT SUM(CAST(t.t AS INT)) FROM texts t WHERE t.k = k.k) AS total
FROM (VALUES (1), (1), (2)) AS k (k);
GO
-- A WHERE conjunct the join cannot place (an uncorrelated scalar subquery) is applied
-- after it, and the anti-join beside it is not run again per row.
SET STATISTICS IO ON;
SELECT COUNT(*) AS unsold FROM parts p
WHERE p.grp >= (SELECT MIN(grp) FROM parts) AND NOT EXISTS (SELECT 1 FROM sales s WHERE s.part_id = p.id);
SET STATISTICS IO OFF;
GO
-- An inner join whose first input is empty does not read the others.
SET STATISTICS IO ON;
SELECT COUNT(*) AS none FROM parts p JOIN sales s ON s.part_id = p.id WHERE p.name = 'no such part';
SET STATISTICS IO OFF;
GO
-- A conjunct of no column that does not hold reads nothing, grouped or streamed; the
-- aggregate over no rows still gives its one row.
SET STATISTICS IO ON;
SELECT COUNT(*) AS none, SUM(p.grp) AS total FROM parts p WHERE 1 = 0;
SELECT p.id FROM parts p WHERE 1 = 0 ORDER BY p.name;
SET STATISTICS IO OFF;
GO
