-- JSON: ISJSON, JSON_VALUE and JSON_QUERY (lax and strict paths), JSON_MODIFY, OPENJSON and
-- FOR JSON PATH / AUTO with their options, and the errors for bad text and bad paths.
DECLARE @doc NVARCHAR(MAX) = N'{"id": 7, "name": "ann", "tags": ["a", "b"],
  "address": {"city": "Oslo", "zip": null}, "active": true, "score": 1.50}'
SELECT ISJSON(@doc) AS is_json, ISJSON(N'{"a":') AS broken, ISJSON(NULL) AS null_text
SELECT JSON_VALUE(@doc, '$.name') AS name, JSON_VALUE(@doc, '$.tags[1]') AS tag,
       JSON_VALUE(@doc, '$.address.city') AS city, JSON_VALUE(@doc, '$.active') AS active,
       JSON_VALUE(@doc, '$.score') AS score, JSON_VALUE(@doc, '$.address') AS not_scalar,
       JSON_VALUE(@doc, '$.missing') AS missing
SELECT JSON_QUERY(@doc, '$.tags') AS tags, JSON_QUERY(@doc, '$.address') AS address,
       JSON_QUERY(@doc, '$.name') AS not_object
SELECT JSON_MODIFY(@doc, '$.name', 'bob') AS renamed
SELECT JSON_MODIFY(JSON_MODIFY(N'{"tags":["a"]}', 'append $.tags', 'c'), '$.n', 3) AS modified
SELECT [key], [value], [type] FROM OPENJSON(@doc)
SELECT CONVERT(INT, [key]) AS i, [value] FROM OPENJSON(@doc, '$.tags') ORDER BY i
GO
SELECT JSON_VALUE(N'{"a":{}}', 'strict $.a')
GO
SELECT JSON_VALUE(N'{"a":1}', 'strict $.b')
GO
SELECT JSON_VALUE(N'{"a":1}', '$.a[x]')
GO
SELECT JSON_VALUE(N'{"a":', '$.a')
GO
CREATE TABLE #people (id INT, name VARCHAR(10), city VARCHAR(10), note VARCHAR(10))
INSERT #people VALUES (1, 'ann', 'Oslo', NULL), (2, 'bob', 'Rome', 'x')
GO
SELECT id, name AS [who.name], city AS [who.city], note FROM #people ORDER BY id FOR JSON PATH
SELECT id, note FROM #people ORDER BY id FOR JSON AUTO, INCLUDE_NULL_VALUES
SELECT id, name FROM #people WHERE id = 1 FOR JSON PATH, WITHOUT_ARRAY_WRAPPER
SELECT id FROM #people ORDER BY id FOR JSON PATH, ROOT('people')
SELECT id FROM #people WHERE id = 99 FOR JSON PATH
-- As a scalar subquery, and read back with OPENJSON.
DECLARE @j NVARCHAR(MAX) = (SELECT id, name FROM #people ORDER BY id FOR JSON PATH)
SELECT JSON_VALUE(@j, '$[1].name') AS second_name, (SELECT COUNT(*) FROM OPENJSON(@j)) AS items
GO
SELECT id + 1 FROM #people FOR JSON PATH
GO
-- OPENJSON with a WITH schema: typed columns at their paths, AS JSON for nested parts, and
-- CROSS APPLY over a table's JSON column.
DECLARE @orders NVARCHAR(MAX) = N'[
  {"id": 1, "customer": {"name": "ann"}, "total": 12.50, "items": [{"sku": "a"}, {"sku": "b"}]},
  {"id": 2, "customer": {"name": "bob"}, "total": 3, "placed": "2026-11-27"}]'
SELECT o.id, o.customer, o.total, o.placed, o.items
FROM OPENJSON(@orders) WITH (id INT, customer NVARCHAR(20) '$.customer.name',
    total DECIMAL(10,2), placed DATE, items NVARCHAR(MAX) AS JSON) AS o
ORDER BY o.id
SELECT o.id, i.sku
FROM OPENJSON(@orders) WITH (id INT, items NVARCHAR(MAX) AS JSON) AS o
CROSS APPLY OPENJSON(o.items) WITH (sku CHAR(1)) AS i
ORDER BY o.id, i.sku
GO
SELECT * FROM OPENJSON(N'[{"a":1}]') WITH (a INT 'strict $.b')
GO
SELECT * FROM OPENJSON(N'[{"a":1}]') WITH (a INT AS JSON)
GO
-- SQL Server 2022's constructors: JSON_OBJECT keeps NULL members unless ABSENT ON NULL,
-- JSON_ARRAY leaves NULL elements out unless NULL ON NULL; a nested constructor or JSON_QUERY
-- is JSON, other text a string.
SELECT JSON_OBJECT() AS empty_object, JSON_ARRAY() AS empty_array
SELECT JSON_OBJECT('name':'value', 'type':1) AS o1,
       JSON_OBJECT('name':'value', 'type':NULL ABSENT ON NULL) AS o2,
       JSON_OBJECT('a':NULL) AS o3
SELECT JSON_OBJECT('name':'value', 'type':JSON_ARRAY(1, 2)) AS nested,
       JSON_ARRAY('a', 1, NULL, 2.5, CAST(1 AS BIT)) AS a1,
       JSON_ARRAY(1, NULL NULL ON NULL) AS a2
SELECT JSON_OBJECT('q':'he said "hi"', 'o':JSON_OBJECT('x':1), 'j':JSON_QUERY('{"k":[1]}'),
                   's':'{"not":"json"}') AS escaped
SELECT JSON_OBJECT('id':id, 'name':name) AS row_json
FROM (VALUES (1, N'a'), (2, NULL)) v(id, name) ORDER BY id
GO
SELECT JSON_OBJECT(NULL:1)
GO
-- JSON_PATH_EXISTS and ISJSON's type constraint (SQL Server 2022).
SELECT JSON_PATH_EXISTS('{"a":{"b":null}}', '$.a.b') AS null_member,
       JSON_PATH_EXISTS('{"a":1}', '$.c') AS missing,
       JSON_PATH_EXISTS(NULL, '$.a') AS null_text,
       ISJSON('[1]', ARRAY) AS is_array, ISJSON('[1]', OBJECT) AS is_object,
       ISJSON('5', SCALAR) AS is_scalar, ISJSON('"x"', VALUE) AS is_value,
       ISJSON('nope', VALUE) AS not_json
GO
SELECT JSON_PATH_EXISTS('{"a":1}', 'a')
GO
