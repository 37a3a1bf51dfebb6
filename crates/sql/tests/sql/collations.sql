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
SELECT COLLATIONPROPERTY('Latin1_General_CS_AS', 'CodePage') AS code_page, COLLATIONPROPERTY('Latin1_General_CI_AI', 'ComparisonStyle') AS style,
       COLLATIONPROPERTY('Latin1_General_BIN2', 'ComparisonStyle') AS bin_style, COLLATIONPROPERTY('Latin1_General_100_CI_AS', 'Version') AS version,
       COLLATIONPROPERTY('nonsense', 'CodePage') AS unknown
SELECT COUNT(*) AS system_columns FROM sys.system_columns
GO
-- Columns compare as SQL_Latin1_General_CP1_CI_AS: an equivalent COLLATE is accepted, another refused.
CREATE TABLE col_ci (c VARCHAR(10) COLLATE Latin1_General_CI_AS, d VARCHAR(10) COLLATE SQL_Latin1_General_CP1_CI_AS, e NVARCHAR(10) COLLATE Latin1_General_100_CI_AS_SC)
GO
CREATE TABLE col_cs (c VARCHAR(10) COLLATE Latin1_General_CS_AS)
GO
CREATE TABLE col_bad (c VARCHAR(10) COLLATE Nonsense_CI_AS)
GO
ALTER TABLE col_ci ALTER COLUMN c VARCHAR(10) COLLATE Latin1_General_BIN2
GO
-- A collation that compares otherwise than the default cannot order, group or de-duplicate:
-- those keys go by the default comparison, so it is refused rather than ignored.
SELECT v FROM (VALUES ('b'), ('A'), ('a')) AS t (v) ORDER BY v COLLATE Latin1_General_CS_AS;
GO
SELECT COUNT(*) FROM (VALUES ('a'), ('A')) AS t (v) GROUP BY v COLLATE Latin1_General_BIN2;
GO
SELECT DISTINCT v COLLATE Latin1_General_CS_AS FROM (VALUES ('a'), ('A')) AS t (v);
GO
SELECT v FROM (VALUES ('b'), ('A'), ('a')) AS t (v) ORDER BY v COLLATE Latin1_General_CI_AS, v;
GO
