-- ALTER DATABASE ... SET READ_ONLY | READ_WRITE | OFFLINE | ONLINE.
CREATE DATABASE shop
GO
USE shop
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))
INSERT items VALUES (1, 'one')
GO
USE master
ALTER DATABASE shop SET READ_ONLY
SELECT name, is_read_only, DATABASEPROPERTYEX('shop', 'Updateability') AS updateability FROM sys.databases WHERE name = 'shop'
GO
-- Reads work; every change is 3906.
SELECT * FROM shop.dbo.items
INSERT shop.dbo.items VALUES (2, 'two')
GO
UPDATE shop.dbo.items SET name = 'uno'
GO
USE shop
CREATE TABLE more (id INT)
GO
USE master
ALTER DATABASE shop SET READ_WRITE WITH NO_WAIT
INSERT shop.dbo.items VALUES (2, 'two')
SELECT name, is_read_only, DATABASEPROPERTYEX('shop', 'Updateability') AS updateability FROM sys.databases WHERE name = 'shop'
GO
-- OFFLINE: refused with 942, shown OFFLINE; ONLINE again.
ALTER DATABASE shop SET OFFLINE WITH ROLLBACK IMMEDIATE
SELECT name, state, state_desc, DATABASEPROPERTYEX('shop', 'Status') AS status FROM sys.databases WHERE name = 'shop'
GO
USE shop
GO
SELECT * FROM shop.dbo.items
GO
ALTER DATABASE shop SET OFFLINE
GO
ALTER DATABASE shop SET ONLINE
SELECT name, state_desc FROM sys.databases WHERE name = 'shop'
SELECT * FROM shop.dbo.items ORDER BY id
GO
-- The session's own database: it moves to master.
USE shop
ALTER DATABASE CURRENT SET OFFLINE
SELECT DB_NAME() AS db
ALTER DATABASE shop SET ONLINE
GO
-- Not for master or tempdb.
ALTER DATABASE master SET OFFLINE
GO
ALTER DATABASE tempdb SET READ_ONLY
GO
ALTER DATABASE nosuch SET OFFLINE
GO
-- Dropping an offline database leaves its files.
ALTER DATABASE shop SET OFFLINE
DROP DATABASE shop
SELECT COUNT(*) AS n FROM sys.databases WHERE name = 'shop'
GO
