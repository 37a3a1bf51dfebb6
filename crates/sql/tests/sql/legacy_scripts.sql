-- What old install scripts (Northwind, pubs) rely on: bitwise operators with one binary
-- operand, sysobjects.sysstat's object kind, sysdatabases, OBJECT_ID of a name with spaces,
-- sp_addtype / sp_droptype, GROUP BY ... WITH ROLLUP / WITH CUBE and AVG of money.
SELECT CAST(0x24 AS smallint) & 0xf AS s, 5 | 0x0102 AS i, CAST(1 AS tinyint) ^ 0xff03 AS t,
       0x01 & CAST(1 AS bigint) AS b
GO
-- Both sides binary: 402, as in SQL Server.
SELECT 0x01 & 0x01
GO
SELECT 1.5 & 0x01
GO
CREATE TABLE [Order Details] (id int)
GO
CREATE VIEW [Order View] AS SELECT id FROM [Order Details]
GO
CREATE PROCEDURE [Order Proc] AS SELECT 1 AS one
GO
-- The drop-if-exists idiom: sysstat & 0xf is 3 for a user table, 2 for a view, 4 for a
-- procedure; OBJECT_ID takes an undelimited name with spaces.
SELECT name, xtype, sysstat & 0xf AS kind FROM sysobjects
WHERE id IN (OBJECT_ID('dbo.Order Details'), OBJECT_ID('Order View'), OBJECT_ID('dbo.[Order Proc]'))
ORDER BY name
GO
if exists (select * from sysobjects where id = object_id('dbo.Order Details') and sysstat & 0xf = 3)
	drop table "dbo"."Order Details"
GO
SELECT OBJECT_ID('dbo.Order Details') AS gone, OBJECT_ID('dbo.Order View.x.y.z') AS too_many
GO
-- sysdatabases, from any database, with or without sys.
SELECT name, dbid, cmptlevel, status & 8 AS trunc_log FROM sysdatabases ORDER BY dbid
GO
SELECT COUNT(*) AS n FROM sys.sysdatabases WHERE name = 'tempdb'
GO
-- sp_addtype: the positional form pubs uses (the name unquoted), then by parameter name.
execute sp_addtype id ,'varchar(11)' ,'NOT NULL'
execute sp_addtype @typename = 'flag', @phystype = 'bit'
GO
-- systypes lists the built-in types and the database's own: old scripts test it first.
if not exists (select * from systypes where name = 'id')
    raiserror('id is missing', 16, 1)
SELECT name, xtype, CASE WHEN xusertype = xtype THEN 'built-in' ELSE 'user' END AS kind,
       length, variable, allownulls, prec
FROM systypes WHERE name IN ('id', 'flag', 'varchar', 'int', 'nvarchar') ORDER BY name
GO
CREATE TABLE authors (au_id id, ok flag)
INSERT authors (ok) VALUES (1)
GO
SELECT c.name, TYPE_NAME(c.system_type_id) AS type, c.max_length, c.is_nullable
FROM sys.columns c WHERE c.object_id = OBJECT_ID('authors') ORDER BY c.column_id
GO
EXEC sp_addtype 'bad', 'varchar(10); DROP TABLE authors'
GO
EXEC sp_addtype 'bad', 'int', 'MAYBE'
GO
EXEC sp_addtype 'bad'
GO
DROP TABLE authors
EXEC sp_droptype 'flag'
EXEC sp_droptype id
SELECT COUNT(*) AS types_left FROM sys.types WHERE is_user_defined = 1
GO
-- GROUP BY ... WITH ROLLUP and WITH CUBE are GROUP BY ROLLUP(...) and CUBE(...).
CREATE TABLE titles (pub_id char(4), type char(12), price money)
INSERT titles VALUES ('0736', 'business', 2.99), ('0736', 'psychology', 10.95),
    ('0877', 'mod_cook', 19.99), ('0877', 'mod_cook', 2.99), ('1389', 'business', 19.99),
    ('1389', 'business', 11.95), ('1389', 'popular', 20.00)
GO
select
	case when grouping(pub_id) = 1 then 'ALL' else pub_id end as pub_id,
	avg(price) as avg_price
from titles
where price is NOT NULL
group by pub_id with rollup
order by pub_id
GO
SELECT pub_id, type, COUNT(*) AS n, GROUPING(pub_id) AS gp, GROUPING(type) AS gt
FROM titles GROUP BY pub_id, type WITH CUBE
ORDER BY GROUPING(pub_id), pub_id, GROUPING(type), type
GO
-- AVG of money is money, rounded to four places.
SELECT AVG(price) AS a, SQL_VARIANT_PROPERTY(AVG(price), 'BaseType') AS t FROM titles
GO
-- Join hints, as DBA scripts (sp_WhoIsActive) write them: accepted, the result unchanged.
SELECT t.pub_id, t2.type, t4.price FROM titles t INNER HASH JOIN titles t2 ON t2.type = t.type
LEFT OUTER LOOP JOIN titles t3 ON t3.type = t.type
RIGHT MERGE JOIN titles t4 ON t4.type = t2.type AND t4.price < 5
WHERE t4.price > 2 ORDER BY t4.price, t.pub_id
OPTION (HASH GROUP, KEEPFIXED PLAN)
GO
-- A qualified column its table lacks is 207, as in SQL Server; an unknown qualifier 4104.
SELECT t.nope FROM titles t
GO
SELECT x.price FROM titles t
GO
