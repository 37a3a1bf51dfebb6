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
