-- Warning 8153: an aggregate other than COUNT(*) that skips a NULL says so, once per
-- statement, while ANSI_WARNINGS is ON (the default).
CREATE TABLE readings (grp INT, v INT, s VARCHAR(5))
INSERT INTO readings VALUES (1, 10, 'a'), (1, NULL, NULL), (2, 5, 'b'), (2, 7, 'c')
GO
SELECT COUNT(*) AS all_rows FROM readings
GO
SELECT COUNT(v) AS counted, SUM(v) AS total, MIN(v) AS low, MAX(v) AS high, AVG(v) AS mean FROM readings
GO
SELECT grp, SUM(v) AS total FROM readings GROUP BY grp ORDER BY grp
GO
SELECT SUM(v) AS no_nulls FROM readings WHERE v IS NOT NULL
GO
SELECT COUNT(DISTINCT s) AS distinct_s FROM readings
GO
SELECT STRING_AGG(s, ',') WITHIN GROUP (ORDER BY s) AS joined FROM readings
GO
SELECT grp, SUM(v) OVER (PARTITION BY grp) AS windowed FROM readings ORDER BY grp, windowed
GO
SET ANSI_WARNINGS OFF
SELECT SUM(v) AS quiet FROM readings
SET ANSI_WARNINGS ON
GO
DECLARE @m INT
SELECT @m = MAX(v) FROM readings
SELECT @m AS assigned
GO
