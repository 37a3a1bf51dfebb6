-- COLLATE on expressions: SQL Server's collation names, case- and accent-sensitive or not.
SELECT CASE WHEN 'abc' = 'ABC' THEN 'equal' ELSE 'different' END AS default_ci,
       CASE WHEN 'abc' COLLATE Latin1_General_CS_AS = 'ABC' THEN 'equal' ELSE 'different' END AS cs,
       CASE WHEN 'abc' = 'ABC' COLLATE SQL_Latin1_General_CP1_CS_AS THEN 'equal' ELSE 'different' END AS cs_right,
       CASE WHEN 'café' = 'cafe' THEN 'equal' ELSE 'different' END AS default_as,
       CASE WHEN 'café' COLLATE Latin1_General_CI_AI = 'CAFE' THEN 'equal' ELSE 'different' END AS ci_ai,
       CASE WHEN 'abc  ' COLLATE Latin1_General_BIN2 = 'abc' THEN 'equal' ELSE 'different' END AS bin2_pads,
       CASE WHEN 'a' COLLATE Latin1_General_BIN < 'B' THEN 'a first' ELSE 'B first' END AS bin_order,
       CASE WHEN 'a' COLLATE Latin1_General_CS_AS < 'B' THEN 'a first' ELSE 'B first' END AS dictionary_order
GO
CREATE TABLE names (id INT PRIMARY KEY, name VARCHAR(20))
INSERT INTO names VALUES (1, 'Smith'), (2, 'smith'), (3, 'SMITH'), (4, 'Smíth')
SELECT id AS ci FROM names WHERE name = 'smith' ORDER BY id
SELECT id AS cs FROM names WHERE name COLLATE Latin1_General_CS_AS = 'smith' ORDER BY id
SELECT id AS ci_ai FROM names WHERE name COLLATE Latin1_General_CI_AI = 'smith' ORDER BY id
SELECT id AS like_cs FROM names WHERE name COLLATE Latin1_General_CS_AS LIKE 'S%' ORDER BY id
SELECT id AS like_ci FROM names WHERE name LIKE 's%' ORDER BY id
SELECT id AS like_ai FROM names WHERE name COLLATE Latin1_General_CI_AI LIKE '%mi%' ORDER BY id
GO
SELECT 1 WHERE 'a' COLLATE Latin1_General_CS_AS = 'A' COLLATE Latin1_General_CI_AS
GO
SELECT 'a' COLLATE Klingon_CI_AS
GO
SELECT name, description FROM fn_helpcollations() WHERE name LIKE 'SQL%' ORDER BY name
SELECT COUNT(*) AS collations FROM sys.fn_helpcollations()
-- SQL Server 2000's `::` names a system function as `sys.` does.
SELECT COUNT(*) AS old_style FROM ::fn_helpcollations()
SELECT COLLATIONPROPERTY('Latin1_General_CS_AS', 'CodePage') AS code_page, COLLATIONPROPERTY('Latin1_General_CI_AI', 'ComparisonStyle') AS style,
       COLLATIONPROPERTY('Latin1_General_BIN2', 'ComparisonStyle') AS bin_style, COLLATIONPROPERTY('Latin1_General_100_CI_AS', 'Version') AS version,
       COLLATIONPROPERTY('nonsense', 'CodePage') AS unknown
SELECT COUNT(*) AS system_columns FROM sys.system_columns
GO
-- ORDER BY, GROUP BY and DISTINCT of a COLLATE expression go by that collation.
SELECT v FROM (VALUES ('b'), ('A'), ('a'), ('B')) AS t (v) ORDER BY v COLLATE Latin1_General_CS_AS;
SELECT v FROM (VALUES ('b'), ('A'), ('a'), ('B')) AS t (v) ORDER BY v COLLATE Latin1_General_BIN2 DESC;
SELECT COUNT(*) AS n FROM (VALUES ('a'), ('A'), ('a ')) AS t (v) GROUP BY v COLLATE Latin1_General_BIN2 ORDER BY n;
SELECT DISTINCT v COLLATE Latin1_General_CS_AS AS v FROM (VALUES ('a'), ('A'), ('a')) AS t (v) ORDER BY v;
SELECT COUNT(DISTINCT v) AS ci, COUNT(*) AS all_rows FROM (VALUES ('café'), ('CAFE'), ('cafe')) AS t (v);
SELECT v FROM (VALUES ('b'), ('A'), ('a')) AS t (v) ORDER BY v COLLATE Latin1_General_CI_AS, v;
SELECT STRING_AGG(v, ',') WITHIN GROUP (ORDER BY v COLLATE Latin1_General_CS_AS) AS cs_agg FROM (VALUES ('b'), ('A'), ('a')) AS t (v);
GO
-- A column keeps its collation: comparisons, LIKE, sorting, grouping, DISTINCT, MIN/MAX,
-- set operations and index keys follow it.
CREATE TABLE col_cs (id INT PRIMARY KEY, c VARCHAR(10) COLLATE Latin1_General_CS_AS, d VARCHAR(10), a NVARCHAR(10) COLLATE SQL_Latin1_General_CP1_CI_AI)
INSERT INTO col_cs VALUES (1, 'a', 'a', N'café'), (2, 'A', 'A', N'CAFE'), (3, 'b', 'b', N'cafe'), (4, 'B', 'B', N'Cafè')
SELECT id AS cs_eq FROM col_cs WHERE c = 'a'
SELECT id AS cs_in FROM col_cs WHERE c IN ('A', 'B') ORDER BY id
SELECT id AS cs_like FROM col_cs WHERE c LIKE 'A%' ORDER BY id
SELECT id AS cs_between FROM col_cs WHERE c BETWEEN 'a' AND 'b' ORDER BY id
SELECT id AS ci_override FROM col_cs WHERE c = 'a' COLLATE Latin1_General_CI_AS ORDER BY id
SELECT id AS ai_eq FROM col_cs WHERE a = 'CAFE' ORDER BY id
SELECT c FROM col_cs ORDER BY c
SELECT c, COUNT(*) AS n FROM col_cs GROUP BY c ORDER BY c
SELECT DISTINCT c FROM col_cs ORDER BY c
SELECT COUNT(DISTINCT c) AS cs, COUNT(DISTINCT d) AS ci, COUNT(DISTINCT a) AS ai FROM col_cs
SELECT MIN(c) AS min_cs, MAX(c) AS max_cs FROM col_cs
SELECT c FROM col_cs WHERE id IN (1, 2) UNION SELECT c FROM col_cs WHERE id IN (1, 2) ORDER BY c
SELECT x.id, y.id AS matched FROM col_cs AS x JOIN col_cs AS y ON x.a = y.a WHERE x.id = 1 ORDER BY y.id
SELECT id AS in_subquery FROM col_cs WHERE c IN (SELECT c FROM col_cs WHERE id = 2)
SELECT id AS semi_join FROM col_cs AS o WHERE EXISTS (SELECT 1 FROM col_cs AS i WHERE i.c = o.c AND i.id IN (1, 4)) ORDER BY id
SELECT id, (SELECT COUNT(*) FROM col_cs AS i WHERE i.c = o.c) AS same_c FROM col_cs AS o ORDER BY id
SELECT id, ROW_NUMBER() OVER (PARTITION BY c ORDER BY id) AS rn, RANK() OVER (ORDER BY c) AS rk FROM col_cs ORDER BY id
GO
SELECT id FROM col_cs WHERE c = d
GO
SELECT id FROM col_cs WHERE c IN (SELECT d FROM col_cs)
GO
SELECT name, collation_name FROM sys.columns WHERE object_id = OBJECT_ID('col_cs') ORDER BY column_id
SELECT COLUMN_NAME, COLLATION_NAME FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'col_cs' ORDER BY ORDINAL_POSITION
SELECT COLLATIONPROPERTY(collation_name, 'ComparisonStyle') AS style FROM sys.columns WHERE object_id = OBJECT_ID('col_cs') AND name = 'c'
GO
-- A unique index on a case-sensitive column holds 'x' and 'X'; a seek finds by the column's collation.
CREATE TABLE codes (code VARCHAR(10) COLLATE Latin1_General_CS_AS PRIMARY KEY, n INT)
INSERT INTO codes VALUES ('x', 1), ('X', 2), ('y', 3)
SELECT n FROM codes WHERE code = 'X'
SELECT n FROM codes WHERE code >= 'x' ORDER BY code
SELECT code FROM codes ORDER BY code DESC
GO
INSERT INTO codes VALUES ('x', 4)
GO
CREATE TABLE ci_codes (code VARCHAR(10) PRIMARY KEY)
INSERT INTO ci_codes VALUES ('x')
GO
INSERT INTO ci_codes VALUES ('X')
GO
-- ALTER TABLE: ADD keeps a collation; ALTER COLUMN without COLLATE takes the default; an
-- indexed column's collation cannot change (5074, 4922).
ALTER TABLE ci_codes ADD tag VARCHAR(10) COLLATE Latin1_General_BIN2 NULL
UPDATE ci_codes SET tag = 'Tag'
SELECT COUNT(*) AS bin_matches FROM ci_codes WHERE tag = 'tag'
ALTER TABLE ci_codes ALTER COLUMN tag VARCHAR(10) NULL
SELECT COUNT(*) AS default_matches FROM ci_codes WHERE tag = 'tag'
SELECT name, collation_name FROM sys.columns WHERE object_id = OBJECT_ID('ci_codes') ORDER BY column_id
GO
ALTER TABLE codes ALTER COLUMN code VARCHAR(10) COLLATE Latin1_General_CI_AS NOT NULL
GO
-- Table variables and #temp tables keep their columns' collations; SELECT INTO copies them.
DECLARE @t TABLE (v VARCHAR(5) COLLATE Latin1_General_CS_AS UNIQUE)
INSERT INTO @t VALUES ('q'), ('Q')
SELECT COUNT(*) AS table_variable FROM @t WHERE v = 'q'
CREATE TABLE #tmp (v VARCHAR(5) COLLATE Latin1_General_CS_AS)
INSERT INTO #tmp VALUES ('q'), ('Q')
SELECT COUNT(*) AS temp_table FROM #tmp WHERE v = 'Q'
SELECT * INTO copied FROM col_cs
SELECT name, collation_name FROM sys.columns WHERE object_id = OBJECT_ID('copied') ORDER BY column_id
GO
-- A foreign key to a case-sensitive key finds its row by that collation.
CREATE TABLE fk_child (code VARCHAR(10) COLLATE Latin1_General_CS_AS REFERENCES codes (code))
INSERT INTO fk_child VALUES ('X')
GO
INSERT INTO fk_child VALUES ('Y')
GO
DELETE FROM codes WHERE code = 'x'
SELECT code FROM codes ORDER BY code
GO
DELETE FROM codes WHERE code = 'X'
GO
CREATE TABLE fk_other (code VARCHAR(10) REFERENCES codes (code))
GO
CREATE TABLE col_bad (c VARCHAR(10) COLLATE Nonsense_CI_AS)
GO
CREATE TABLE col_int (i INT COLLATE Latin1_General_CS_AS)
GO
-- A database has the server's collation: COLLATE names it or is refused.
CREATE DATABASE collated COLLATE SQL_Latin1_General_CP1_CI_AS
SELECT DATABASEPROPERTYEX('collated', 'Collation') AS collation
ALTER DATABASE collated COLLATE SQL_Latin1_General_CP1_CI_AS
DROP DATABASE collated
GO
CREATE DATABASE cs_db COLLATE Latin1_General_CS_AS
GO
ALTER DATABASE CURRENT COLLATE Latin1_General_BIN2
GO
ALTER DATABASE CURRENT COLLATE Klingon_CI_AS
GO
SELECT DB_ID('cs_db') AS not_created
GO
-- A view, a derived table and a CTE pass the column's collation on.
CREATE VIEW col_cs_view AS SELECT id, c FROM col_cs
GO
SELECT COUNT(*) AS view_matches FROM col_cs_view WHERE c = 'a'
SELECT COUNT(*) AS derived_matches FROM (SELECT c FROM col_cs) AS d WHERE c = 'a'
WITH w AS (SELECT c FROM col_cs) SELECT COUNT(*) AS cte_matches FROM w WHERE c = 'a'
GO
