-- DATETIMEOFFSET: a moment in UTC with the offset it was written at. Values compare, sort and
-- index by their UTC moment; dateparts and conversions to other date types use the local time.
CREATE DATABASE dtodb
GO
USE dtodb
CREATE TABLE dbo.meeting (at DATETIMEOFFSET(3) PRIMARY KEY, city VARCHAR(20) NOT NULL, held DATETIMEOFFSET NULL)
INSERT meeting (at, city) VALUES ('2024-03-01 09:00:00 +01:00', 'Paris')
INSERT meeting (at, city) VALUES ('2024-03-01T07:30:00Z', 'London')
INSERT meeting (at, city) VALUES ('2024-03-01 02:45:00.1234 -05:00', 'New York')
INSERT meeting (at, city) VALUES ('2024-03-01 14:00 +05:30', 'Delhi')
SELECT at, city FROM meeting ORDER BY at
GO
-- 10:00 +02:00 is 08:00 UTC, the Paris row's moment: a duplicate key.
INSERT meeting (at, city) VALUES ('2024-03-01 10:00:00 +02:00', 'Athens')
GO
SELECT city FROM meeting WHERE at = '2024-03-01 03:00:00 -05:00'
SELECT city FROM meeting WHERE at > CAST('2024-03-01 07:45' AS DATETIME2) ORDER BY at
SELECT COUNT(*) AS same_moment FROM meeting a JOIN meeting b ON a.at = SWITCHOFFSET(b.at, '+09:00')
GO
-- Conversions: to the other types the local time, from them the same local time at +00:00.
DECLARE @d DATETIMEOFFSET(7) = '2024-12-31 23:30:00.1234567 -08:00'
SELECT CAST(@d AS DATETIME2) AS dt2, CAST(@d AS DATE) AS d, CAST(@d AS TIME(0)) AS t, CAST(@d AS DATETIME) AS dt
SELECT CAST(CAST('2024-05-06 07:08:09' AS DATETIME2(0)) AS DATETIMEOFFSET(0)) AS from_dt2
SELECT CONVERT(VARCHAR(40), @d) AS style0, CONVERT(VARCHAR(40), @d, 126) AS style126, CONVERT(VARCHAR(40), @d, 127) AS style127, CONVERT(VARCHAR(20), @d, 23) AS style23
SELECT CONVERT(VARCHAR(40), CAST('2024-01-01 10:00 +00:00' AS DATETIMEOFFSET(0)), 127) AS utc127
SELECT CAST(@d AS DATETIMEOFFSET(0)) AS rounded, DATALENGTH(@d) AS bytes
GO
-- Dateparts are local; DATEDIFF measures between UTC moments.
DECLARE @d DATETIMEOFFSET = '2024-12-31 23:30:00 -08:00'
SELECT DATEPART(year, @d) AS y, DATEPART(hour, @d) AS h, DATEPART(tzoffset, @d) AS tz, DATENAME(tzoffset, @d) AS tzname, DATENAME(month, @d) AS m
SELECT DATEADD(hour, 1, @d) AS plus_hour, DATEADD(month, 2, @d) AS plus_months
SELECT DATEDIFF(hour, '2024-01-01 00:00 +00:00', CAST('2024-01-01 00:00 +01:00' AS DATETIMEOFFSET)) AS across_zones
SELECT DATEPART(tz, SYSDATETIME()) AS dt2_offset
SELECT DATETRUNC(hour, CAST('2024-03-01 08:30:45 -05:00' AS DATETIMEOFFSET)) AS truncated
SELECT FORMAT(CAST('2024-03-01 08:30:00 -05:30' AS DATETIMEOFFSET), 'yyyy-MM-dd HH:mm zzz') AS formatted, FORMAT(CAST('2024-03-01 08:30:00 -05:30' AS DATETIMEOFFSET), 'o') AS round_trip
GO
SELECT TODATETIMEOFFSET(CAST('2024-06-01 12:00' AS DATETIME2), '-07:00') AS to_dto, TODATETIMEOFFSET('2024-06-01 12:00', 120) AS minutes
SELECT SWITCHOFFSET(CAST('2024-06-01 12:00 +00:00' AS DATETIMEOFFSET(0)), '+05:45') AS switched
SELECT DATETIMEOFFSETFROMPARTS(2024, 2, 29, 13, 14, 15, 5, -3, -30, 1) AS from_parts
SELECT CASE WHEN SYSDATETIMEOFFSET() > DATEADD(second, -5, CAST(SYSUTCDATETIME() AS DATETIMEOFFSET)) THEN 'now' END AS clock
SELECT ISDATE('2024-01-01') AS isdate_text
GO
-- AT TIME ZONE, with Windows zone names: local times take the zone's offset then (a skipped
-- hour moves forward, a repeated one takes the earlier offset); offset values keep their moment.
SELECT CAST('2024-07-01 10:00' AS DATETIME2) AT TIME ZONE 'Pacific Standard Time' AS la_summer
SELECT CAST('2024-01-15 10:00' AS DATETIME2) AT TIME ZONE 'Pacific Standard Time' AS la_winter
SELECT CAST('2024-03-10 02:30' AS DATETIME2) AT TIME ZONE 'Pacific Standard Time' AS skipped
SELECT CAST('2024-11-03 01:30' AS DATETIME2) AT TIME ZONE 'Pacific Standard Time' AS repeated
SELECT CAST('2024-07-01 10:00 +00:00' AS DATETIMEOFFSET) AT TIME ZONE 'Tokyo Standard Time' AS tokyo
SELECT CAST('2024-07-01 10:00' AS DATETIME) AT TIME ZONE 'UTC' AT TIME ZONE 'Central European Standard Time' AS warsaw
DECLARE @zone SYSNAME = 'Nepal Standard Time'
SELECT CAST('2024-07-01 00:00 +00:00' AS DATETIMEOFFSET) AT TIME ZONE @zone AS kathmandu, CAST(NULL AS DATETIME2) AT TIME ZONE 'UTC' AS null_moment
SELECT name, current_utc_offset FROM sys.time_zone_info WHERE name IN ('UTC', 'India Standard Time', 'Nepal Standard Time') ORDER BY name
GO
SELECT SYSDATETIME() AT TIME ZONE 'Mars Standard Time'
GO
-- Errors.
SELECT TODATETIMEOFFSET(SYSDATETIME(), '+15:00')
GO
SELECT SWITCHOFFSET(SYSDATETIMEOFFSET(), 'nowhere')
GO
SELECT CAST('2024-01-01 10:00 +14:30' AS DATETIMEOFFSET)
GO
SELECT CAST('not a date' AS DATETIMEOFFSET)
GO
SELECT DATEPART(tzoffset, CAST('2024-01-01' AS DATE))
GO
SELECT DATEADD(tzoffset, 1, SYSDATETIMEOFFSET())
GO
SELECT SYSDATETIMEOFFSET() + 1
GO
-- Metadata.
SELECT c.name, TYPE_NAME(c.system_type_id) AS type, c.max_length, c.precision, c.scale
FROM sys.columns c WHERE c.object_id = OBJECT_ID('dbo.meeting') ORDER BY c.column_id
SELECT COLUMN_NAME, DATA_TYPE, DATETIME_PRECISION FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'meeting' ORDER BY ORDINAL_POSITION
UPDATE meeting SET held = SWITCHOFFSET(at, '+00:00') WHERE city = 'Delhi'
SELECT city, held FROM meeting WHERE held IS NOT NULL
GO
USE master
DROP DATABASE dtodb
GO
