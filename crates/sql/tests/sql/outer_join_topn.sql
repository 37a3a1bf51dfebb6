-- Outer joins whose inner side is filtered by ON conjuncts on it alone (only the columns
-- read after the join are carried into the pairs), LIKE patterns of several kinds, and
-- TOP (n) ... ORDER BY streamed through a top-N sort (ties, NULLs, keys of every source).
CREATE TABLE cust (id INT PRIMARY KEY, name VARCHAR(20), region INT NULL);
CREATE TABLE ord (id INT PRIMARY KEY, cust INT NULL, note VARCHAR(40) NULL, amount INT NULL);
INSERT INTO cust VALUES (1, 'Ann', 10), (2, 'Bob', NULL), (3, 'Cy', 10), (4, 'Di', 20),
    (5, NULL, 20);
INSERT INTO ord VALUES
    (100, 1, 'ironic special deposits requests', 5),
    (101, 1, 'plain', 7),
    (102, 1, NULL, 9),
    (103, 2, 'SPECIAL REQUESTS', 1),
    (104, 2, 'special note', NULL),
    (105, 3, 'requests special', 3),
    (106, NULL, 'orphan', 4),
    (107, 4, 'special%requests', 2),
    (108, 4, 'x special requests  ', 6);
GO
-- TPC-H Q13's shape: COUNT(col) ignores the NULLs of unmatched customers.
SELECT c_count, COUNT(*) AS custdist
FROM (SELECT c.id, COUNT(o.id) AS c_count
      FROM cust c LEFT OUTER JOIN ord o ON c.id = o.cust AND o.note NOT LIKE '%special%requests%'
      GROUP BY c.id) AS c_orders (c_custkey, c_count)
GROUP BY c_count ORDER BY custdist DESC, c_count DESC;
GO
-- The column only the ON filter reads is still there when the select list reads it too.
SELECT c.id, o.id, o.note
FROM cust c LEFT JOIN ord o ON c.id = o.cust AND o.note LIKE '%special%'
ORDER BY c.id, o.id;
GO
-- An ON filter that rejects every inner row: every customer once, NULL-extended.
SELECT c.id, o.id, o.amount
FROM cust c LEFT JOIN ord o ON c.id = o.cust AND o.note LIKE '%nothing%matches%'
ORDER BY c.id;
GO
SELECT COUNT(o.id), COUNT(*), COUNT(c.region)
FROM cust c LEFT JOIN ord o ON c.id = o.cust AND o.amount > 100;
GO
-- NULL keys never match; RIGHT and FULL joins keep their sides.
SELECT o.id, c.name FROM cust c RIGHT JOIN ord o ON c.id = o.cust AND o.note NOT LIKE '%special%'
ORDER BY o.id;
GO
SELECT c.id, o.id FROM cust c FULL JOIN ord o ON c.id = o.cust AND o.amount < 5
ORDER BY c.id, o.id;
GO
-- A WHERE condition on the inner side after the join, beside the ON filter.
SELECT c.id, o.id FROM cust c LEFT JOIN ord o ON c.id = o.cust AND o.note LIKE '%s%s%'
WHERE o.id IS NULL ORDER BY c.id;
GO
-- The outer join as one leaf of inner joins, a RIGHT JOIN's columns put back in order, a
-- derived inner side, and `*` (which reads every column, locators aside).
SELECT c.name, o.id, x.region
FROM cust c LEFT JOIN ord o ON c.id = o.cust AND o.note LIKE '%s%' JOIN cust x ON x.id = c.id
WHERE x.region IS NOT NULL ORDER BY c.name, o.id;
GO
SELECT o.amount, c.region FROM ord o RIGHT JOIN cust c ON c.id = o.cust AND o.note NOT LIKE 'p%'
ORDER BY c.region, o.amount;
GO
SELECT c.id, d.n FROM cust c LEFT JOIN (SELECT cust, note AS n, amount FROM ord) d
    ON d.cust = c.id AND d.amount > 4 AND d.n LIKE '%a%'
ORDER BY c.id, d.n;
GO
SELECT * FROM cust c LEFT JOIN ord o ON c.id = o.cust AND o.note LIKE '%special%requests%'
ORDER BY c.id, o.id;
GO
SELECT c.id FROM cust c LEFT JOIN ord o ON c.id = o.cust AND o.note LIKE '%x%'
WHERE EXISTS (SELECT 1 FROM ord z WHERE z.cust = c.id AND z.note = o.note) ORDER BY c.id;
GO
-- LIKE: several %, _, [] classes, ESCAPE, trailing spaces, case.
SELECT id, note,
    CASE WHEN note LIKE '%special%requests%' THEN 1 ELSE 0 END AS a,
    CASE WHEN note LIKE 'special%' THEN 1 ELSE 0 END AS b,
    CASE WHEN note LIKE '%requests' THEN 1 ELSE 0 END AS c,
    CASE WHEN note LIKE '%spec_al%[r]equests%' THEN 1 ELSE 0 END AS d,
    CASE WHEN note LIKE '%[^ ]special%' THEN 1 ELSE 0 END AS e,
    CASE WHEN note LIKE '%!%%' ESCAPE '!' THEN 1 ELSE 0 END AS f,
    CASE WHEN note LIKE 'p%a%n' THEN 1 ELSE 0 END AS g
FROM ord ORDER BY id;
GO
-- TOP (n) ... ORDER BY that the scan's order does not give: ties keep the scan's order,
-- NULLs sort first, and the result is the first n rows of the full sort.
SELECT TOP 3 id, amount FROM ord ORDER BY amount DESC, id DESC;
GO
SELECT TOP 3 id, amount FROM ord ORDER BY amount;
GO
SELECT TOP 4 cust, id FROM ord ORDER BY cust DESC;
GO
SELECT TOP 2 WITH TIES cust, id FROM ord ORDER BY cust;
GO
SELECT TOP 2 id, amount * 2 AS doubled FROM ord ORDER BY doubled DESC;
GO
SELECT TOP 3 id FROM ord ORDER BY note;
GO
SELECT TOP 0 id FROM ord ORDER BY amount;
GO
SELECT TOP 25 PERCENT WITH TIES cust, id FROM ord ORDER BY cust DESC;
GO
SELECT TOP 1 WITH TIES id FROM ord;
GO
-- More rows than the top-N sort gathers at once, ties across its rounds.
SET NOCOUNT ON;
CREATE TABLE many (id INT PRIMARY KEY, grp INT, v INT NULL);
DECLARE @i INT = 0;
WHILE @i < 3000
BEGIN
    INSERT INTO many VALUES (@i, @i % 7, CASE WHEN @i % 11 = 0 THEN NULL ELSE (@i * 37) % 101 END);
    SET @i += 1;
END;
SET NOCOUNT OFF;
GO
SELECT TOP 5 id, v FROM many ORDER BY v DESC, id;
GO
SELECT TOP 5 id, v FROM many ORDER BY v;
GO
SELECT TOP 6 id, grp FROM many ORDER BY grp DESC;
GO
SELECT TOP 3 id, grp, v FROM many WHERE grp = 3 ORDER BY v DESC;
GO
