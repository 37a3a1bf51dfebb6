-- STRING_AGG ... WITHIN GROUP (ORDER BY ...): the values joined in the order asked, per group.
CREATE TABLE #p (team VARCHAR(5), name VARCHAR(10), born INT)
INSERT #p VALUES ('red', 'cy', 1990), ('red', 'ann', 1985), ('blue', 'bob', 2000),
    ('red', 'dee', NULL), ('blue', 'al', 1970)
GO
SELECT team, STRING_AGG(name, ', ') WITHIN GROUP (ORDER BY name) AS by_name,
       STRING_AGG(name, ', ') WITHIN GROUP (ORDER BY born DESC, name) AS youngest_first
FROM #p GROUP BY team ORDER BY team
SELECT STRING_AGG(name, '|') WITHIN GROUP (ORDER BY born) AS all_by_birth FROM #p
GO
