-- GROUP BY ROLLUP and CUBE: subtotal and total rows, with NULL for the columns a grouping
-- set leaves out and GROUPING() telling that NULL from a NULL in the data.
CREATE TABLE #sales (region VARCHAR(10), product VARCHAR(10), qty INT)
INSERT #sales VALUES ('east', 'nut', 5), ('east', 'bolt', 3), ('west', 'nut', 7),
    ('west', 'nut', 1), (NULL, 'bolt', 2)
GO
SELECT region, product, SUM(qty) AS qty, GROUPING(region) AS g_region,
       GROUPING(product) AS g_product
FROM #sales GROUP BY ROLLUP(region, product)
ORDER BY GROUPING(region), region, GROUPING(product), product
GO
SELECT CASE WHEN GROUPING(region) = 1 THEN 'all regions' ELSE COALESCE(region, '(none)') END AS region,
       COUNT(*) AS n
FROM #sales GROUP BY ROLLUP(region) ORDER BY GROUPING(region), region
GO
SELECT region, product, SUM(qty) AS qty FROM #sales WHERE region IS NOT NULL
GROUP BY CUBE(region, product)
ORDER BY GROUPING(region), region, GROUPING(product), product
GO
-- A plain column beside the ROLLUP stays in every grouping set; HAVING sees the subtotals.
SELECT region, product, SUM(qty) AS qty FROM #sales WHERE region IS NOT NULL
GROUP BY region, ROLLUP(product) HAVING SUM(qty) > 4
ORDER BY region, GROUPING(product), product
GO
-- Over no rows, ROLLUP still has its grand total row.
SELECT SUM(qty) AS total, COUNT(*) AS n FROM #sales WHERE qty > 100 GROUP BY ROLLUP(region)
GO
SELECT region FROM #sales GROUP BY ROLLUP(region), CUBE(product)
GO
SELECT LEN(region) FROM #sales GROUP BY ROLLUP(LEN(region))
GO
-- GROUPING SETS: the sets as listed, () the grand total.
SELECT region, product, SUM(qty) AS qty, GROUPING(region) AS gr, GROUPING(product) AS gp
FROM #sales WHERE region IS NOT NULL
GROUP BY GROUPING SETS ((region, product), (product), ())
ORDER BY GROUPING(product), product, GROUPING(region), region
GO
SELECT region, COUNT(*) AS n FROM #sales GROUP BY GROUPING SETS (region, ()) ORDER BY GROUPING(region), region
GO
-- GROUPING_ID: one bit per argument, the first the most significant, set where the grouping
-- set leaves the column out; in HAVING too.
SELECT region, product, COUNT(*) AS n, GROUPING_ID(region, product) AS gid
FROM #sales WHERE region IS NOT NULL
GROUP BY ROLLUP(region, product) ORDER BY gid, region, product
GO
SELECT region, product, GROUPING_ID(region, product) AS gid FROM #sales WHERE region IS NOT NULL
GROUP BY CUBE(region, product) HAVING GROUPING_ID(region, product) = 2 ORDER BY product
GO
SELECT GROUPING_ID() FROM #sales GROUP BY region
GO
