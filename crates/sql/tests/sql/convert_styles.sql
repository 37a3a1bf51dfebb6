-- Every date and time style the T-SQL reference documents (0-14, 20-25, 100-114, 120, 121,
-- 126, 127, 130, 131), value by value for a datetime, and each style's text read back with
-- the same style; the other numbers are 281.
DECLARE @d datetime = '2024-01-05 13:04:05.123';
SELECT s.style, CONVERT(nvarchar(40), @d, s.style) AS text,
       CONVERT(datetime, CONVERT(nvarchar(40), @d, s.style), s.style) AS read_back
FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14),
             (20), (21), (22), (23), (24), (25),
             (100), (101), (102), (103), (104), (105), (106), (107), (108), (109), (110),
             (111), (112), (113), (114), (120), (121), (126), (127), (130), (131)) AS s(style)
ORDER BY s.style;
GO
-- Mornings, single-digit days and hours, and midnight.
DECLARE @m datetime = '2009-07-01 00:05:09.007';
SELECT CONVERT(varchar(30), @m, 0) AS s0, CONVERT(varchar(30), @m, 9) AS s9,
       CONVERT(varchar(30), @m, 22) AS s22, CONVERT(varchar(30), @m, 13) AS s13,
       CONVERT(varchar(30), @m, 14) AS s14, CONVERT(varchar(30), @m, 126) AS s126,
       CONVERT(nvarchar(40), @m, 131) AS s131;
GO
-- 126 and 127 leave out a zero fraction; 127 writes Z for a datetimeoffset at UTC.
SELECT CONVERT(varchar(30), CAST('2012-11-07 18:26:20.000' AS datetime), 126) AS s126,
       CONVERT(varchar(40), CAST('2012-11-07 18:26:20 +00:00' AS datetimeoffset(0)), 127) AS s127_utc,
       CONVERT(varchar(40), CAST('2012-11-07 18:26:20 -08:00' AS datetimeoffset(0)), 127) AS s127_offset;
GO
-- Two-digit years read back by the 2049 cut-off.
SELECT CONVERT(datetime, '01/05/49', 1) AS y2049, CONVERT(datetime, '01/05/50', 1) AS y1950;
GO
-- Numbers that are no date style.
SELECT CONVERT(varchar(30), CAST('2024-01-05' AS datetime), 15);
GO
SELECT CONVERT(varchar(30), CAST('2024-01-05' AS datetime), 26);
GO
SELECT CONVERT(varchar(30), CAST('2024-01-05' AS datetime), 115);
GO
SELECT CONVERT(varchar(30), CAST('2024-01-05' AS datetime), 122);
GO
SELECT CONVERT(varchar(30), CAST('2024-01-05' AS datetime), 129);
GO
SELECT CONVERT(varchar(30), CAST('2024-01-05' AS datetime), 132);
GO
