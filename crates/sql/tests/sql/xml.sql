-- The xml type: variables, columns, CAST/CONVERT, the canonical text a value keeps, and
-- SQL Server's errors for malformed text and comparisons.
DECLARE @x xml = '<?xml version="1.0"?><root  a = "1"><b>one</b><b>two &amp; three</b>
  <c/></root>'
SELECT @x AS x, CAST(@x AS nvarchar(max)) AS text, CONVERT(varchar(100), @x) AS v
SELECT CAST('<a>x</a><b/>text' AS xml) AS fragment, CAST(N'' AS xml) AS empty, CAST(NULL AS xml) AS nothing
SELECT CONVERT(xml, '<a> <b> </b> </a>', 1) AS preserved, CONVERT(xml, '<a> <b> </b> </a>') AS dropped
GO
SELECT CAST('<a><b></a>' AS xml)
GO
SELECT CAST('<a>' AS xml)
GO
SELECT CAST('<a x=1/>' AS xml)
GO
SELECT CAST('<a>&nbsp;</a>' AS xml)
GO
SELECT CAST(N'<?xml version="1.0" encoding="utf-8"?><a/>' AS xml)
GO
SELECT CAST('<?xml version="1.0" encoding="utf-8"?><a/>' AS xml) AS varchar_input
GO
SELECT CAST('<p:a/>' AS xml)
GO
SELECT CAST('<!DOCTYPE a [<!ENTITY e "x">]><a/>' AS xml)
GO
DECLARE @x xml = '<a/>'
IF @x = '<a/>' PRINT 'equal'
GO
DECLARE @x xml = '<a/>'
DECLARE @s nvarchar(max) = @x
GO
SELECT CAST(1 AS xml)
GO
CREATE TABLE docs (id int PRIMARY KEY, body xml NULL)
INSERT docs VALUES (1, '<order id="10"><line sku="A" qty="2">Apple</line><line sku="B" qty="1">Bread</line></order>'),
                   (2, N'<order id="11"><line sku="C" qty="5">Cheese &amp; crackers</line></order>'),
                   (3, NULL)
SELECT id, body FROM docs ORDER BY id
SELECT name, TYPE_NAME(system_type_id) AS type, max_length FROM sys.columns WHERE object_id = OBJECT_ID('docs') ORDER BY column_id
SELECT COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'docs' ORDER BY ORDINAL_POSITION
SELECT name, system_type_id, max_length FROM sys.types WHERE name = 'xml'
GO
INSERT docs VALUES (4, '<broken>')
GO
SELECT id FROM docs ORDER BY body
GO
SELECT body, COUNT(*) FROM docs GROUP BY body
GO
-- Methods: value(), query(), exist() on variables, columns and expressions.
DECLARE @x xml = '<root><item id="1" kind="a"><name>First</name><price>2.50</price></item><item id="2" kind="b"><name>Second</name><price>10</price></item></root>'
SELECT @x.value('(/root/item/name)[1]', 'nvarchar(20)') AS first_name,
       @x.value('(/root/item/@id)[2]', 'int') AS second_id,
       @x.value('/root[1]/item[2]/price[1]', 'decimal(9,2)') AS price,
       @x.value('count(/root/item)', 'int') AS items,
       @x.value('(//item[@kind="b"]/name/text())[1]', 'varchar(10)') AS by_attribute,
       @x.value('(/root/item[price > 5]/@id)[1]', 'int') AS by_number,
       @x.value('(/root/missing)[1]', 'int') AS missing
SELECT @x.query('/root/item[1]/name') AS q1, @x.query('/root/item/@id') AS nope
GO
DECLARE @x xml = '<root><item id="1"/><item id="2"/></root>'
SELECT @x.query('/root/item[@id="2"]') AS q, @x.query('data(/root/item/@id)') AS atoms,
       @x.exist('/root/item[@id="2"]') AS has2, @x.exist('/root/item[@id="3"]') AS has3,
       @x.exist('/root/item/@id = 9') AS comparison_is_nonempty
DECLARE @id int = 2
SELECT @x.exist('/root/item[@id=sql:variable("@id")]') AS by_variable
DECLARE @n xml
SELECT @n.value('(/a)[1]', 'int') AS null_value, @n.exist('/a') AS null_exist, @n.query('/a') AS null_query
GO
SELECT id, body.value('(/order/@id)[1]', 'int') AS order_id,
       body.value('(/order/line/@sku)[1]', 'char(1)') AS first_sku,
       body.exist('/order/line[@qty > 1]') AS has_big_line
FROM docs ORDER BY id
SELECT d.id, d.body.value('count(/order/line)', 'int') AS lines FROM docs AS d ORDER BY d.id
SELECT CAST('<a><b>5</b></a>' AS xml).value('(/a/b)[1]', 'int') + 1 AS from_cast
GO
-- nodes(): one row per node, with CROSS APPLY and OUTER APPLY, and relative paths from it.
SELECT d.id, l.c.value('@sku', 'char(1)') AS sku, l.c.value('@qty', 'int') AS qty,
       l.c.value('.', 'nvarchar(40)') AS name, l.c.value('../@id', 'int') AS order_id,
       l.c.query('.') AS line
FROM docs AS d CROSS APPLY d.body.nodes('/order/line') AS l(c) ORDER BY d.id, sku
SELECT d.id, l.c.value('@sku', 'char(1)') AS sku
FROM docs AS d OUTER APPLY d.body.nodes('/order/line[@qty >= 2]') AS l(c) ORDER BY d.id
DECLARE @x xml = '<list><v>3</v><v>1</v><v>2</v></list>'
SELECT t.c.value('(text())[1]', 'int') AS v FROM @x.nodes('/list/v') AS t(c) ORDER BY v
SELECT n.c.value('local-name(.)', 'sysname') AS name FROM @x.nodes('/list/*[position() <= 2]') n(c)
GO
-- XQuery errors.
DECLARE @x xml = '<a><b>1</b><b>2</b></a>'
SELECT @x.value('/a/b', 'int')
GO
DECLARE @x xml = '<a><b>1</b><b>2</b></a>'
SELECT @x.value('/a/b[1]', 'int')
GO
DECLARE @x xml = '<a/>'
SELECT @x.query('for $b in /a return $b')
GO
DECLARE @x xml = '<a/>'
SELECT @x.query('/a/following-sibling::b')
GO
DECLARE @x xml = '<a/>'
SELECT @x.query('bogus(/a)')
GO
DECLARE @x xml = '<a/>'
SELECT @x.query('/a[')
GO
DECLARE @x xml = '<a/>', @p nvarchar(10) = '/a'
SELECT @x.query(@p)
GO
DECLARE @x xml = '<a/>'
SELECT @x.value('(/a)[1]', 'xml')
GO
DECLARE @s nvarchar(20) = '<a/>'
SELECT @s.value('(/a)[1]', 'int')
GO
DECLARE @x xml = '<a/>'
SET @x.modify('insert <b/> into /a[1]')
GO
-- Namespaces declared in the query's prolog.
DECLARE @x xml = '<r xmlns="urn:x" xmlns:p="urn:p"><i>1</i><p:i>2</p:i></r>'
SELECT @x.value('declare default element namespace "urn:x"; (/r/i)[1]', 'int') AS default_ns,
       @x.value('declare namespace q="urn:p"; (//q:i)[1]', 'int') AS prefixed,
       @x.value('(/r/i)[1]', 'int') AS no_namespace
GO
-- FOR XML ..., TYPE: an xml value; .value('.') decodes it; nested TYPE subqueries nest as
-- elements.
CREATE TABLE names (id int, name nvarchar(20))
INSERT names VALUES (1, N'a&b'), (2, N'<c>'), (3, N'd')
SELECT STUFF((SELECT N',' + name FROM names ORDER BY id FOR XML PATH(''), TYPE).value('.', 'nvarchar(max)'), 1, 1, N'') AS joined
SELECT (SELECT id AS [@id], name FROM names WHERE id = 1 FOR XML PATH('n'), TYPE) AS typed
SELECT d.id AS [@id],
       (SELECT l.c.value('@sku', 'char(1)') AS [@sku] FROM d.body.nodes('/order/line') AS l(c) FOR XML PATH('line'), TYPE)
FROM docs AS d WHERE d.id <= 2 ORDER BY d.id FOR XML PATH('order'), ROOT('orders')
SELECT (SELECT 1 AS a FOR XML RAW, TYPE).query('/row') AS raw_typed
GO
-- WITH XMLNAMESPACES: prefixes for the methods' paths and FOR XML's names.
DECLARE @x xml = '<r xmlns="urn:x" xmlns:p="urn:p"><i>1</i><p:i>2</p:i></r>'
;WITH XMLNAMESPACES ('urn:p' AS q, DEFAULT 'urn:x')
SELECT @x.value('(/r/i)[1]', 'int') AS default_ns, @x.value('(/r/q:i)[1]', 'int') AS prefixed,
       (SELECT COUNT(*) FROM @x.nodes('/r/*') AS t(c)) AS children
;WITH XMLNAMESPACES ('urn:p' AS p)
SELECT 1 AS [p:a], 2 AS [@p:b] FOR XML PATH('row')
;WITH XMLNAMESPACES ('urn:p' AS p), n AS (SELECT 1 AS v)
SELECT v AS [p:v] FROM n FOR XML PATH('x'), ROOT('p:all'), TYPE
GO
-- Before a DELETE the prefixes reach its WHERE: no row has a p:b element.
WITH XMLNAMESPACES ('urn:p' AS p)
DELETE FROM names WHERE CAST('<p:a xmlns:p="urn:p"/>' AS xml).exist('/p:b') = 1
GO
-- xml where SQL Server refuses it: string functions, operators, grouping, indexes, schemas.
SELECT STUFF((SELECT ',' + name FROM names ORDER BY id FOR XML PATH(''), TYPE), 1, 1, '')
GO
SELECT CAST('<a/>' AS xml) + 'x'
GO
SELECT d.body, COUNT(*) FROM docs AS d GROUP BY d.body
GO
CREATE PRIMARY XML INDEX px ON docs (body)
GO
CREATE XML SCHEMA COLLECTION s AS '<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema"/>'
GO
SELECT ISNULL(CAST(NULL AS xml), CAST('<z/>' AS xml)) AS isnull_keeps_xml, DATALENGTH(CAST('<z/>' AS xml)) AS bytes
GO
CREATE TABLE xkey (x xml PRIMARY KEY)
GO
CREATE INDEX ix_body ON docs (body)
GO
-- OPENXML and its procedures do not exist.
DECLARE @h int
EXEC sp_xml_preparedocument @h OUTPUT, '<a/>'
GO
SELECT * FROM OPENXML(1, '/a')
GO
UPDATE docs SET body.modify('delete /order/line[1]') WHERE id = 1
GO
-- sql:column() reads the row's column.
SELECT d.id, d.body.value('(/order/line[@qty = sql:column("q.n")]/@sku)[1]', 'char(1)') AS sku
FROM docs AS d CROSS JOIN (VALUES (2), (5)) AS q (n) WHERE d.id <= 2 ORDER BY d.id, q.n
GO
