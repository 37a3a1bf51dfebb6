-- STRING_AGG ... WITHIN GROUP (ORDER BY ...): the values joined in the order asked, per group;
-- and the statistical aggregates VAR, VARP, STDEV, STDEVP.
CREATE TABLE #p (team VARCHAR(5), name VARCHAR(10), born INT)
INSERT #p VALUES ('red', 'cy', 1990), ('red', 'ann', 1985), ('blue', 'bob', 2000),
    ('red', 'dee', NULL), ('blue', 'al', 1970)
GO
SELECT team, STRING_AGG(name, ', ') WITHIN GROUP (ORDER BY name) AS by_name,
       STRING_AGG(name, ', ') WITHIN GROUP (ORDER BY born DESC, name) AS youngest_first
FROM #p GROUP BY team ORDER BY team
SELECT STRING_AGG(name, '|') WITHIN GROUP (ORDER BY born) AS all_by_birth FROM #p
GO
-- Statistical aggregates: sample and population variance and standard deviation.
SELECT VAR(v) AS var, VARP(v) AS varp, STDEV(v) AS stdev, STDEVP(v) AS stdevp,
       STDEV(CASE WHEN v = 2 THEN v END) AS one_value
FROM (VALUES (2), (4), (4), (4), (5), (5), (7), (9), (NULL)) AS x (v)
SELECT g, STDEVP(v) AS sd FROM (VALUES (1, 1.0), (1, 3.0), (2, 10.0)) AS x (g, v) GROUP BY g ORDER BY g
GO
