-- FOR XML PATH: the string-concatenation idiom of older scripts, rows as elements with child
-- elements, attributes and ROOT, escaping, and NULL over no rows.
CREATE TABLE #t (id INT, name VARCHAR(10), note VARCHAR(10))
INSERT #t VALUES (1, 'ann', NULL), (2, 'b&b', 'x<y'), (3, 'cy', 'z')
GO
SELECT STUFF((SELECT ',' + name FROM #t ORDER BY id FOR XML PATH('')), 1, 1, '') AS names
SELECT id AS [@id], name, note AS [detail/note] FROM #t ORDER BY id FOR XML PATH('person'), ROOT('people')
SELECT name FROM #t WHERE id = 1 FOR XML PATH
SELECT id AS [@id] FROM #t WHERE id = 1 FOR XML PATH('empty')
SELECT name FROM #t WHERE id = 99 FOR XML PATH('')
SELECT g.k, STUFF((SELECT ';' + t.name FROM #t AS t WHERE t.id % 2 = g.k ORDER BY t.id
                   FOR XML PATH(''), TYPE).value('.', 'varchar(max)'), 1, 1, '') AS names
FROM (VALUES (0), (1)) AS g (k) ORDER BY g.k
GO
-- FOR XML RAW: each row an element, its columns attributes (child elements with ELEMENTS).
SELECT name, database_id AS id FROM sys.databases WHERE database_id <= 2 ORDER BY database_id FOR XML RAW
SELECT name, database_id AS id FROM sys.databases WHERE database_id <= 2 ORDER BY database_id FOR XML RAW('db'), ROOT('dbs'), ELEMENTS
SELECT 1 AS a, NULL AS b, 'x<y"z' AS c FOR XML RAW
GO
-- FOR XML AUTO over one table: each row's element is the table's alias or name as written.
SELECT d.name, d.database_id FROM sys.databases AS d WHERE database_id = 1 FOR XML AUTO
SELECT name FROM sys.databases WHERE database_id = 2 FOR XML AUTO, ELEMENTS, ROOT('x')
GO
SELECT a.name FROM sys.databases a JOIN sys.databases b ON a.database_id = b.database_id FOR XML AUTO
GO
