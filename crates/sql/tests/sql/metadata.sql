-- Metadata and small scalar functions scripts use before acting.
CREATE DATABASE meta
GO
USE meta
CREATE TABLE dbo.m (id INT PRIMARY KEY, label VARCHAR(10))
GO
SELECT OBJECT_NAME(OBJECT_ID('dbo.m')) AS by_id, OBJECT_NAME(OBJECT_ID('dbo.m'), DB_ID('meta')) AS in_db,
       OBJECT_NAME(OBJECT_ID('dbo.m'), DB_ID('master')) AS elsewhere, OBJECT_NAME(NULL) AS of_null
SELECT COL_NAME(OBJECT_ID('dbo.m'), 1) AS first_col, COL_NAME(OBJECT_ID('dbo.m'), 2) AS second_col,
       COL_NAME(OBJECT_ID('dbo.m'), 3) AS no_col
SELECT DATABASEPROPERTYEX('meta', 'Recovery') AS recovery, DATABASEPROPERTYEX('meta', 'Status') AS status,
       DATABASEPROPERTYEX('meta', 'Updateability') AS updateability, DATABASEPROPERTYEX('nosuch', 'Status') AS none
GO
ALTER DATABASE meta SET RECOVERY FULL
SELECT DATABASEPROPERTYEX('meta', 'Recovery') AS recovery
GO
SELECT CHOOSE(3, 'a', 'b', 'c') AS c3, CHOOSE(4, 'a', 'b', 'c') AS c4, CHOOSE(NULL, 'a') AS c_null,
       TRANSLATE('2*[3+4]/{7-2}', '[]{}', '()()') AS translated
SELECT @@MAX_CONNECTIONS AS max_connections, HOST_NAME() AS host, APP_NAME() AS app
GO
SELECT TRANSLATE('abc', 'ab', 'x')
GO
