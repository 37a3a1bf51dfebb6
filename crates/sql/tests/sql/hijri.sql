-- CONVERT style 131: the Hijri calendar by SQL Server's Kuwaiti algorithm (scalar/hijri.rs),
-- both ways; SQL Server's documented example first. Style 130 (Arabic month names) is
-- still refused with 281.
SELECT CONVERT(nvarchar(40), CAST('2000-08-07 12:14:35.727' AS datetime), 131) AS hijri;
SELECT CONVERT(datetime, ' 7/05/1421 12:14:35:727PM', 131) AS gregorian;
SELECT CONVERT(varchar(40), CAST('2024-03-11 20:05:01' AS datetime), 131) AS evening,
       CONVERT(date, '1/09/1445', 131) AS first_of_ramadan,
       CONVERT(varchar(40), CAST('0622-07-18' AS date), 131) AS epoch;
GO
SELECT CONVERT(date, '30/02/1445', 131);
GO
SELECT CONVERT(varchar(40), GETDATE(), 130);
GO
