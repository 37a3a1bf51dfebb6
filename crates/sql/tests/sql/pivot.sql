-- PIVOT and UNPIVOT: values of a column become columns (with an aggregate), and columns
-- become rows; the columns the operator does not name group the rows.
CREATE TABLE #sales (region VARCHAR(10), quarter INT, qty INT)
INSERT #sales VALUES ('east', 1, 5), ('east', 1, 2), ('east', 2, 3), ('west', 1, 7), ('west', 3, 1)
GO
SELECT region, [1] AS q1, [2] AS q2, [3] AS q3, [4] AS q4
FROM #sales PIVOT (SUM(qty) FOR quarter IN ([1], [2], [3], [4])) AS p
ORDER BY region
SELECT p.* FROM (SELECT quarter, qty FROM #sales) AS s
PIVOT (COUNT(qty) FOR quarter IN ([1], [2], [3], [4])) AS p
GO
CREATE TABLE #wide (id INT, jan INT, feb INT, mar INT)
INSERT #wide VALUES (1, 10, NULL, 30), (2, NULL, 5, NULL)
GO
SELECT id, month, amount FROM #wide
UNPIVOT (amount FOR month IN (jan, feb, mar)) AS u
ORDER BY id, month
GO
SELECT * FROM #sales PIVOT (SUM(qty) FOR nope IN ([1])) AS p
GO
