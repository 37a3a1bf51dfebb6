-- AND and OR in three-valued logic, and their short circuit: the right side is evaluated
-- (and its error raised) only when the left side does not decide. The WHERE clauses run
-- through the prepared conditions (Run::eval_condition), the CASE conditions through
-- Run::predicate.
CREATE TABLE truth (id INT PRIMARY KEY, a BIT NULL, b BIT NULL, d INT)
INSERT INTO truth VALUES (1, 1, 1, 1), (2, 1, 0, 1), (3, 1, NULL, 1), (4, 0, 1, 0),
    (5, 0, 0, 0), (6, 0, NULL, 0), (7, NULL, 1, 1), (8, NULL, 0, 1), (9, NULL, NULL, 1)
GO
SELECT id,
    CASE WHEN a = 1 AND b = 1 THEN 'T' WHEN NOT (a = 1 AND b = 1) THEN 'F' ELSE 'U' END AS a_and_b,
    CASE WHEN a = 1 OR b = 1 THEN 'T' WHEN NOT (a = 1 OR b = 1) THEN 'F' ELSE 'U' END AS a_or_b
FROM truth ORDER BY id
SELECT id FROM truth WHERE a = 1 AND b = 1 ORDER BY id
SELECT id FROM truth WHERE NOT (a = 1 AND b = 1) ORDER BY id
SELECT id FROM truth WHERE a = 1 OR b = 1 ORDER BY id
SELECT id FROM truth WHERE NOT (a = 1 OR b = 1) ORDER BY id
GO
-- d is 0 exactly where a is 0: a FALSE left side of AND, or a TRUE one of OR, spares the
-- division.
SELECT id FROM truth WHERE a = 1 AND 10 / d = 10 ORDER BY id
SELECT id FROM truth WHERE a = 0 OR 10 / d = 10 ORDER BY id
SELECT id, CASE WHEN a = 1 AND 10 / d = 10 THEN 'T' ELSE 'not T' END AS spared FROM truth
WHERE a IS NOT NULL ORDER BY id
GO
-- A left side that does not decide (TRUE for AND, FALSE for OR) lets the right side run,
-- and its error is raised at the first such row.
SELECT id FROM truth WHERE a IS NULL AND b IS NULL OR 10 / d = 10 ORDER BY id
GO
SELECT id FROM truth WHERE b = 1 AND 10 / d = 10 ORDER BY id
GO
-- NULLIF(a, a) = 1 is UNKNOWN for every row. A WHERE's top-level conjuncts are checked
-- one by one and a row is out at the first that is not TRUE, so there an UNKNOWN left side
-- spares the right one; inside OR, and in a CASE condition, UNKNOWN decides nothing.
SELECT id FROM truth WHERE NULLIF(a, a) = 1 AND 10 / (d * 0) = 1
GO
SELECT id FROM truth WHERE NULLIF(a, a) = 1 OR 10 / (d * 0) = 1
GO
SELECT CASE WHEN NULLIF(1, 1) = 1 AND 10 / 0 = 1 THEN 'T' ELSE 'not T' END AS unknown_and
