-- Semi- and anti-joins run as right hash joins (join/semi/right.rs: the outer rows' keys
-- hashed, the subquery's table streamed past them), uncorrelated NOT IN with its NULL
-- rules, and correlated scalar aggregates prepared once to seek per row
-- (join/correlated.rs). Each query is paired with a form that runs per row or through the
-- uncorrelated subquery's cache (a TOP in the subquery keeps it from being rewritten):
-- their results must be the same.
CREATE TABLE cust (id INT PRIMARY KEY, city VARCHAR(10), ref INT NULL);
CREATE TABLE ord (id INT PRIMARY KEY, cust_id INT NULL, amount INT);
CREATE INDEX ix_ord_cust ON ord (cust_id);
CREATE TABLE empty_t (k INT NULL);
INSERT INTO cust SELECT value, CONCAT('c', value % 5), CASE WHEN value % 11 = 0 THEN NULL ELSE value % 40 END
FROM GENERATE_SERIES(1, 60);
INSERT INTO ord SELECT value, CASE WHEN value % 97 = 0 THEN NULL ELSE value % 45 + 1 END, value % 500
FROM GENERATE_SERIES(1, 900);
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT c.id FROM cust c WHERE NOT EXISTS (SELECT 1 FROM ord o WHERE o.cust_id = c.id);
SELECT c.id FROM cust c WHERE c.id NOT IN (SELECT o.cust_id FROM ord o WHERE o.amount > 10);
SELECT c.id FROM cust c WHERE EXISTS (SELECT 1 FROM ord o WHERE o.cust_id = c.id AND o.amount > 490);
SELECT c.id, (SELECT COUNT(*) FROM ord o WHERE o.cust_id = c.id) FROM cust c WHERE c.city = 'c1';
GO
SET SHOWPLAN_TEXT OFF;
GO
-- NOT EXISTS: customers with no orders (ids 46 to 60), duplicates on the inner side.
SELECT COUNT(*) AS n, MIN(c.id) AS lo, MAX(c.id) AS hi FROM cust c
WHERE NOT EXISTS (SELECT 1 FROM ord o WHERE o.cust_id = c.id);
SELECT COUNT(*) AS n, MIN(c.id) AS lo, MAX(c.id) AS hi FROM cust c
WHERE NOT EXISTS (SELECT TOP 1 1 FROM ord o WHERE o.cust_id = c.id);
GO
-- EXISTS with a filter of the subquery's own, on a nullable outer key (NULL matches nothing).
SELECT COUNT(*) AS n, SUM(c.id) AS ids FROM cust c
WHERE EXISTS (SELECT 1 FROM ord o WHERE o.cust_id = c.ref AND o.amount > 400);
SELECT COUNT(*) AS n, SUM(c.id) AS ids FROM cust c
WHERE EXISTS (SELECT TOP 1 1 FROM ord o WHERE o.cust_id = c.ref AND o.amount > 400);
SELECT COUNT(*) AS n FROM cust c WHERE NOT EXISTS (SELECT 1 FROM ord o WHERE o.cust_id = c.ref);
SELECT COUNT(*) AS n FROM cust c WHERE NOT EXISTS (SELECT TOP 1 1 FROM ord o WHERE o.cust_id = c.ref);
GO
-- IN, and NOT IN whose subquery has no NULL (its NULL cust_ids filtered out).
SELECT COUNT(*) AS n FROM cust c WHERE c.id IN (SELECT o.cust_id FROM ord o WHERE o.amount < 5);
SELECT COUNT(*) AS n FROM cust c WHERE c.id IN (SELECT TOP 100000 o.cust_id FROM ord o WHERE o.amount < 5);
SELECT COUNT(*) AS n FROM cust c
WHERE c.id NOT IN (SELECT o.cust_id FROM ord o WHERE o.cust_id IS NOT NULL AND o.amount < 5);
SELECT COUNT(*) AS n FROM cust c
WHERE c.id NOT IN (SELECT TOP 100000 o.cust_id FROM ord o WHERE o.cust_id IS NOT NULL AND o.amount < 5);
GO
-- NOT IN with a NULL on the inner side keeps nothing.
SELECT COUNT(*) AS n FROM cust c WHERE c.id NOT IN (SELECT o.cust_id FROM ord o);
SELECT COUNT(*) AS n FROM cust c WHERE c.id NOT IN (SELECT TOP 100000 o.cust_id FROM ord o);
GO
-- NOT IN with a NULL on the outer side: unknown, unless the subquery has no rows.
SELECT COUNT(*) AS n FROM cust c
WHERE c.ref NOT IN (SELECT o.cust_id FROM ord o WHERE o.cust_id IS NOT NULL AND o.amount < 3);
SELECT COUNT(*) AS n FROM cust c
WHERE c.ref NOT IN (SELECT TOP 100000 o.cust_id FROM ord o WHERE o.cust_id IS NOT NULL AND o.amount < 3);
GO
-- An empty inner side: NOT IN keeps every row, NULLs too; EXISTS none; NOT EXISTS all.
SELECT COUNT(*) AS n FROM cust c WHERE c.ref NOT IN (SELECT e.k FROM empty_t e);
SELECT COUNT(*) AS n FROM cust c WHERE c.ref NOT IN (SELECT o.cust_id FROM ord o WHERE o.amount > 1000);
SELECT COUNT(*) AS n FROM cust c WHERE EXISTS (SELECT 1 FROM empty_t e WHERE e.k = c.id);
SELECT COUNT(*) AS n FROM cust c WHERE NOT EXISTS (SELECT 1 FROM empty_t e WHERE e.k = c.id);
GO
-- A NULL inner row alone: NOT IN keeps nothing, even for the empty-looking match.
INSERT INTO empty_t VALUES (NULL);
SELECT COUNT(*) AS n FROM cust c WHERE c.id NOT IN (SELECT e.k FROM empty_t e);
SELECT COUNT(*) AS n FROM cust c WHERE c.id NOT IN (SELECT TOP 10 e.k FROM empty_t e);
DELETE FROM empty_t;
GO
-- A residual predicate on the pairs (TPC-H Q21's form) is checked per match: not a right join.
SELECT COUNT(*) AS n FROM ord o1
WHERE EXISTS (SELECT 1 FROM ord o2 WHERE o2.cust_id = o1.cust_id AND o2.amount <> o1.amount)
  AND NOT EXISTS (SELECT 1 FROM ord o3 WHERE o3.cust_id = o1.cust_id AND o3.amount > o1.amount + 400);
SELECT COUNT(*) AS n FROM ord o1
WHERE EXISTS (SELECT TOP 1 1 FROM ord o2 WHERE o2.cust_id = o1.cust_id AND o2.amount <> o1.amount)
  AND NOT EXISTS (SELECT TOP 1 1 FROM ord o3 WHERE o3.cust_id = o1.cust_id AND o3.amount > o1.amount + 400);
GO
-- Correlated scalar aggregates sought per row: COUNT over no rows is 0, SUM and MAX NULL,
-- a NULL key finds nothing. Each pair: prepared seek, then the per-row run (TOP 1).
SELECT c.id, (SELECT COUNT(*) FROM ord o WHERE o.cust_id = c.id) AS n,
       (SELECT SUM(o.amount) FROM ord o WHERE o.cust_id = c.id AND o.amount > 300) AS big,
       (SELECT MAX(o.id) FROM ord o WHERE o.cust_id = c.ref) AS last_by_ref
FROM cust c WHERE c.id IN (1, 11, 22, 45, 46, 55) ORDER BY c.id;
SELECT COUNT(*) AS differences FROM cust c
WHERE (SELECT COUNT(*) FROM ord o WHERE o.cust_id = c.id)
   <> (SELECT TOP 1 COUNT(*) FROM ord o WHERE o.cust_id = c.id)
   OR ISNULL((SELECT AVG(o.amount) FROM ord o WHERE o.cust_id = c.ref), -1)
   <> ISNULL((SELECT TOP 1 AVG(o.amount) FROM ord o WHERE o.cust_id = c.ref), -1);
GO
-- A probe of another type converts as `=` does; one that cannot is error 245, as per row.
SELECT k.v, (SELECT COUNT(*) FROM ord o WHERE o.cust_id = k.v) AS n
FROM (VALUES ('7'), ('8'), ('9')) AS k (v);
SELECT k.v, (SELECT COUNT(*) FROM ord o WHERE o.cust_id = k.v) AS n
FROM (VALUES ('7'), ('8'), ('x')) AS k (v);
GO
-- A scalar subquery of more than one row is error 512, decorrelated or not.
SELECT c.id, (SELECT o.id FROM ord o WHERE o.cust_id = c.id) FROM cust c WHERE c.id IN (46, 47, 1);
GO
-- Read from the entries of an index that leads with the key (the right hash join's keys,
-- a correlated COUNT's seek counted), against the per-row forms: an indexed table that
-- is empty, one of NULL keys only, and keys of SMALLINT and BIGINT with duplicates.
CREATE TABLE ix_empty (id INT PRIMARY KEY, k INT NULL);
CREATE INDEX ix_ix_empty_k ON ix_empty (k);
CREATE TABLE ix_nulls (id INT PRIMARY KEY, k INT NULL);
CREATE INDEX ix_ix_nulls_k ON ix_nulls (k);
INSERT INTO ix_nulls VALUES (1, NULL), (2, NULL);
CREATE TABLE ix_wide (id INT PRIMARY KEY, s SMALLINT NULL, b BIGINT NULL);
CREATE INDEX ix_ix_wide_s ON ix_wide (s);
CREATE INDEX ix_ix_wide_b ON ix_wide (b);
INSERT INTO ix_wide SELECT value, CASE WHEN value % 13 = 0 THEN NULL ELSE value % 30 - 5 END,
  CASE WHEN value % 17 = 0 THEN NULL ELSE (value % 25) * 3000000000 END
FROM GENERATE_SERIES(1, 200);
GO
SELECT COUNT(*) AS n FROM cust c WHERE c.ref NOT IN (SELECT e.k FROM ix_empty e);
SELECT COUNT(*) AS n FROM cust c WHERE c.ref NOT IN (SELECT TOP 10 e.k FROM ix_empty e);
SELECT COUNT(*) AS n FROM cust c WHERE NOT EXISTS (SELECT 1 FROM ix_empty e WHERE e.k = c.ref);
SELECT COUNT(*) AS n FROM cust c WHERE c.id NOT IN (SELECT e.k FROM ix_nulls e);
SELECT COUNT(*) AS n FROM cust c WHERE c.id NOT IN (SELECT TOP 10 e.k FROM ix_nulls e);
SELECT COUNT(*) AS n FROM cust c WHERE NOT EXISTS (SELECT 1 FROM ix_nulls e WHERE e.k = c.id);
GO
SELECT c.id FROM cust c WHERE c.id NOT IN (SELECT w.s FROM ix_wide w WHERE w.s IS NOT NULL) ORDER BY c.id;
SELECT c.id FROM cust c WHERE c.id NOT IN (SELECT TOP 1000 w.s FROM ix_wide w WHERE w.s IS NOT NULL) ORDER BY c.id;
SELECT c.id FROM cust c WHERE NOT EXISTS (SELECT 1 FROM ix_wide w WHERE w.s = c.id) ORDER BY c.id;
SELECT c.id FROM cust c WHERE NOT EXISTS (SELECT TOP 1 1 FROM ix_wide w WHERE w.s = c.id) ORDER BY c.id;
SELECT COUNT(*) AS n FROM cust c WHERE c.id NOT IN (SELECT w.s FROM ix_wide w);
GO
-- COUNT(*) and COUNT_BIG(*) per key: a NULL probe, one out of INT's range, one of another
-- type (converted, then read as rows), and a conjunct the seek does not answer.
SELECT k.v, (SELECT COUNT(*) FROM ix_wide w WHERE w.b = k.v) AS n,
       (SELECT COUNT_BIG(*) FROM ix_wide w WHERE w.b = k.v) AS big,
       (SELECT TOP 1 COUNT(*) FROM ix_wide w WHERE w.b = k.v) AS per_row,
       (SELECT COUNT(*) FROM ix_wide w WHERE w.s = k.v) AS by_s,
       (SELECT COUNT(*) FROM ix_wide w WHERE w.s = k.v AND w.id > 100) AS by_s_late
FROM (VALUES (CAST(0 AS BIGINT)), (3000000000), (72000000000), (NULL), (-1), (4)) AS k (v)
ORDER BY k.v;
SELECT k.v, (SELECT COUNT(*) FROM ix_wide w WHERE w.s = k.v) AS n,
       (SELECT TOP 1 COUNT(*) FROM ix_wide w WHERE w.s = k.v) AS per_row
FROM (VALUES ('4'), ('-5'), (NULL)) AS k (v) ORDER BY k.v;
GO
-- Two seeking semi-joins ready at once (join/semi/seek.rs): each is tried on the first 128
-- rows and the rest go through the one that kept fewer first; the rows are those the
-- per-row forms keep, in the same order. An unqualified name of the subquery's own
-- columns that the outer row also has (`supp`) is the subquery's.
CREATE TABLE li (ok INT NOT NULL, ln INT NOT NULL, supp INT NOT NULL, late BIT NOT NULL,
                 PRIMARY KEY (ok, ln));
INSERT INTO li SELECT value / 4, value % 4, value * 7 % 11, CASE WHEN value % 3 = 0 THEN 1 ELSE 0 END
FROM GENERATE_SERIES(0, 2999);
GO
SELECT COUNT(*) AS n, SUM(l1.ok * 10 + l1.ln) AS keys FROM li l1
WHERE l1.ok < 80
  AND EXISTS (SELECT 1 FROM li l2 WHERE l2.ok = l1.ok AND l2.supp <> l1.supp)
  AND NOT EXISTS (SELECT 1 FROM li l3 WHERE l3.ok = l1.ok AND l3.supp <> l1.supp AND l3.late = 1);
SELECT COUNT(*) AS n, SUM(l1.ok * 10 + l1.ln) AS keys FROM li l1
WHERE l1.ok < 80
  AND EXISTS (SELECT TOP 1 1 FROM li l2 WHERE l2.ok = l1.ok AND l2.supp <> l1.supp)
  AND NOT EXISTS (SELECT TOP 1 1 FROM li l3 WHERE l3.ok = l1.ok AND l3.supp <> l1.supp AND l3.late = 1);
SELECT TOP (5) l1.ok, l1.ln FROM li l1
WHERE l1.ok < 80
  AND EXISTS (SELECT 1 FROM li l2 WHERE l2.ok = l1.ok AND supp <> l1.supp)
  AND NOT EXISTS (SELECT 1 FROM li l3 WHERE l3.ok = l1.ok AND late = 1 AND l3.ln <> l1.ln);
SELECT TOP (5) l1.ok, l1.ln FROM li l1
WHERE l1.ok < 80
  AND EXISTS (SELECT TOP 1 1 FROM li l2 WHERE l2.ok = l1.ok AND supp <> l1.supp)
  AND NOT EXISTS (SELECT TOP 1 1 FROM li l3 WHERE l3.ok = l1.ok AND late = 1 AND l3.ln <> l1.ln);
GO
-- A seek per outer row pairs the found row with the outer row's columns its conjuncts read
-- (join/semi/seek.rs): the outer row's other columns, strings among them, still come out
-- whole, and a text column a residual conjunct reads is compared as written.
CREATE TABLE li_names (ok INT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL,
                       note NVARCHAR(20) NULL);
INSERT INTO li_names SELECT value, CONCAT('n', value % 7), CASE WHEN value % 5 = 0 THEN NULL ELSE CONCAT(N'note ', value) END
FROM GENERATE_SERIES(0, 749);
GO
SELECT TOP (6) n.ok, n.name, n.note, l1.ln FROM li_names n, li l1
WHERE l1.ok = n.ok AND n.ok % 9 = 1
  AND EXISTS (SELECT 1 FROM li l2 WHERE l2.ok = l1.ok AND l2.supp <> l1.supp)
  AND NOT EXISTS (SELECT 1 FROM li l3 WHERE l3.ok = l1.ok AND l3.ln <> l1.ln AND l3.late = 1)
ORDER BY n.ok, l1.ln;
SELECT COUNT(*) AS n, SUM(LEN(n.note)) AS notes FROM li_names n
WHERE EXISTS (SELECT 1 FROM li l WHERE l.ok = n.ok AND CONCAT('n', l.supp % 7) <> n.name)
  AND NOT EXISTS (SELECT 1 FROM li_names m WHERE m.ok = n.ok + 7 AND m.name = n.name AND m.note IS NULL);
SELECT COUNT(*) AS n, SUM(LEN(n.note)) AS notes FROM li_names n
WHERE EXISTS (SELECT TOP 1 1 FROM li l WHERE l.ok = n.ok AND CONCAT('n', l.supp % 7) <> n.name)
  AND NOT EXISTS (SELECT TOP 1 1 FROM li_names m WHERE m.ok = n.ok + 7 AND m.name = n.name AND m.note IS NULL);
GO
