-- CONVERT styles 130 and 131: the Hijri calendar by SQL Server's Kuwaiti algorithm
-- (scalar/hijri.rs), both ways; SQL Server's documented example first. Style 130 writes the
-- month's Arabic name.
SELECT CONVERT(nvarchar(40), CAST('2000-08-07 12:14:35.727' AS datetime), 131) AS hijri;
SELECT CONVERT(datetime, ' 7/05/1421 12:14:35:727PM', 131) AS gregorian;
SELECT CONVERT(varchar(40), CAST('2024-03-11 20:05:01' AS datetime), 131) AS evening,
       CONVERT(date, '1/09/1445', 131) AS first_of_ramadan,
       CONVERT(varchar(40), CAST('0622-07-18' AS date), 131) AS epoch;
GO
SELECT CONVERT(date, '30/02/1445', 131);
GO
SELECT CONVERT(nvarchar(40), CAST('2000-08-07 12:14:35.727' AS datetime), 130) AS hijri_130,
       CONVERT(datetime, N' 7 جمادى الأولى 1421 12:14:35:727PM', 130) AS gregorian,
       CONVERT(date, N'1 محرم 1446', 130) AS new_year_1446,
       CONVERT(nvarchar(40), CAST('2000-01-01' AS date), 130) AS ramadan;
GO
-- Every month's name, read back.
SELECT m.n, CONVERT(nvarchar(40), d.day, 130) AS text,
       CASE WHEN CONVERT(date, CONVERT(nvarchar(40), d.day, 130), 130) = d.day THEN 'same' END AS back
FROM (VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12)) AS m(n)
CROSS APPLY (SELECT CONVERT(date, '15/' + CAST(m.n AS varchar(2)) + '/1446', 131) AS day) AS d
ORDER BY m.n;
GO
SELECT CONVERT(datetime, N'7 Rajab 1421', 130);
GO
