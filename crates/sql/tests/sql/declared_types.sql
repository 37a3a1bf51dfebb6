-- SMALLDATETIME, SMALLMONEY, TEXT, NTEXT and IMAGE columns: held as DATETIME, MONEY and the MAX
-- types, values stored into them fit the declared type (rounded to the minute, range-checked),
-- and the catalog views name the declared type.
CREATE TABLE legacy (id INT PRIMARY KEY, sd SMALLDATETIME, sm SMALLMONEY, tx TEXT, nt NTEXT, im IMAGE)
INSERT INTO legacy VALUES (1, '2024-02-29 13:45:29.997', 214748.3647, 'a', N'b', 0x01)
INSERT INTO legacy VALUES (2, '2024-02-29 13:45:30', -214748.3648, NULL, NULL, NULL)
INSERT INTO legacy VALUES (3, '2024-12-31 23:59:30', 0, NULL, NULL, NULL)
GO
SELECT id, sd, sm, tx, nt, im FROM legacy ORDER BY id
GO
UPDATE legacy SET sd = DATEADD(SECOND, 45, sd) WHERE id = 1
SELECT sd FROM legacy WHERE id = 1
GO
INSERT INTO legacy (id, sd) VALUES (4, '1899-12-31 23:59')
GO
INSERT INTO legacy (id, sd) VALUES (5, '2079-06-06 23:59:30')
GO
INSERT INTO legacy (id, sm) VALUES (6, 214748.3648)
GO
-- Text that is no SMALLDATETIME (four digits of fraction): SQL Server's 295, which names the
-- type, where DATETIME's is 241; in a CAST, an INSERT and a variable alike.
INSERT INTO legacy (id, sd) VALUES (7, '2024-01-01 10:00:00.1234')
GO
SELECT CAST('2024-01-01 10:00:00.1234' AS SMALLDATETIME)
GO
DECLARE @sd SMALLDATETIME = 'not a date'
GO
SELECT CAST('2024-01-01 10:00:00.1234' AS DATETIME)
GO
SELECT COUNT(*) AS still_three FROM legacy
GO
SELECT c.name, t.name AS type_name, c.system_type_id, c.max_length, c.precision, c.scale
FROM sys.columns c JOIN sys.types t ON t.user_type_id = c.user_type_id
WHERE c.object_id = OBJECT_ID('legacy') ORDER BY c.column_id
GO
SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'legacy' ORDER BY ORDINAL_POSITION
GO
SELECT name, system_type_id, max_length FROM sys.types WHERE name IN ('smalldatetime', 'smallmoney', 'text', 'ntext', 'image') ORDER BY system_type_id
GO
SELECT * INTO legacy_copy FROM legacy
SELECT c.name, TYPE_NAME(c.user_type_id) AS type_name FROM sys.columns c WHERE c.object_id = OBJECT_ID('legacy_copy') ORDER BY c.column_id
GO
