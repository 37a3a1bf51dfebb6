-- GREATEST / LEAST, the FROMPARTS constructors, DATETRUNC, STRING_ESCAPE, FORMATMESSAGE,
-- SOUNDEX / DIFFERENCE, OBJECTPROPERTY and COLUMNPROPERTY.
SELECT GREATEST(3, NULL, 4.5, -1) AS greatest, LEAST('pear', 'apple', NULL) AS least,
       GREATEST(NULL, NULL) AS none
SELECT DATETIMEFROMPARTS(2026, 11, 27, 3, 45, 10, 123) AS dt,
       DATETIME2FROMPARTS(2026, 11, 27, 3, 45, 10, 5, 2) AS dt2,
       TIMEFROMPARTS(23, 59, 59, 1234567, 7) AS t, DATETIMEFROMPARTS(2026, 1, NULL, 0, 0, 0, 0) AS n
SELECT DATETRUNC(month, CONVERT(DATETIME2(3), '2026-11-27 03:45:10.123')) AS month_start,
       DATETRUNC(hour, CONVERT(DATETIME, '2026-11-27 03:45:10.123')) AS hour_start,
       DATETRUNC(week, CONVERT(DATE, '2026-11-27')) AS week_start,
       DATETRUNC(quarter, CONVERT(DATE, '2026-11-27')) AS quarter_start
SELECT STRING_ESCAPE(N'say "hi"' + CHAR(10) + N'\ok', 'json') AS escaped,
       FORMATMESSAGE('%s has %d rows', 'orders', 42) AS message
SELECT SOUNDEX('Robert') AS r, SOUNDEX('Rupert') AS r2, DIFFERENCE('Smith', 'Smythe') AS d
GO
SELECT DATETIMEFROMPARTS(2026, 2, 30, 0, 0, 0, 0)
GO
SELECT DATETRUNC(nanosecond, CONVERT(DATE, '2026-11-27'))
GO
CREATE TABLE dbo.props (id INT IDENTITY PRIMARY KEY, name VARCHAR(20) NULL, amount DECIMAL(9,2) NOT NULL)
GO
CREATE VIEW dbo.props_v AS SELECT id FROM dbo.props
GO
SELECT OBJECTPROPERTY(OBJECT_ID('dbo.props'), 'IsUserTable') AS is_table,
       OBJECTPROPERTY(OBJECT_ID('dbo.props'), 'TableHasIdentity') AS has_identity,
       OBJECTPROPERTY(OBJECT_ID('dbo.props'), 'TableHasPrimaryKey') AS has_pk,
       OBJECTPROPERTY(OBJECT_ID('dbo.props_v'), 'IsView') AS is_view,
       OBJECTPROPERTY(OBJECT_ID('dbo.props_v'), 'IsProcedure') AS is_proc,
       OBJECTPROPERTY(OBJECT_ID('dbo.props'), 'NoSuchProperty') AS unknown,
       OBJECTPROPERTY(NULL, 'IsView') AS no_object
SELECT COLUMNPROPERTY(OBJECT_ID('dbo.props'), 'name', 'AllowsNull') AS name_nulls,
       COLUMNPROPERTY(OBJECT_ID('dbo.props'), 'name', 'Precision') AS name_length,
       COLUMNPROPERTY(OBJECT_ID('dbo.props'), 'amount', 'Precision') AS amount_precision,
       COLUMNPROPERTY(OBJECT_ID('dbo.props'), 'amount', 'Scale') AS amount_scale,
       COLUMNPROPERTY(OBJECT_ID('dbo.props'), 'id', 'IsIdentity') AS id_identity,
       COLUMNPROPERTY(OBJECT_ID('dbo.props'), 'amount', 'ColumnId') AS amount_id
DROP VIEW dbo.props_v
DROP TABLE dbo.props
GO
-- TRIM's FROM forms, APPROX_COUNT_DISTINCT (an exact count), CURRENT_TRANSACTION_ID.
SELECT '[' + TRIM('x' FROM 'xxhixx') + ']' AS both_x, '[' + TRIM(FROM '  hi  ') + ']' AS blanks,
       '[' + TRIM(LEADING '.' FROM '..a..') + ']' AS leading,
       '[' + TRIM(TRAILING '.' FROM '..a..') + ']' AS trailing, '[' + TRIM('  t  ') + ']' AS plain
SELECT APPROX_COUNT_DISTINCT(v) AS approx FROM (VALUES (1), (2), (2), (NULL)) AS x (v)
BEGIN TRAN
SELECT CASE WHEN CURRENT_TRANSACTION_ID() = (SELECT transaction_id FROM sys.dm_tran_current_transaction)
            THEN 'same' ELSE 'different' END AS current_id
ROLLBACK
GO
-- PATINDEX: a LIKE pattern's first match; money constants; PARSE and TRY_PARSE.
SELECT PATINDEX('%b%', 'abc') AS a, PATINDEX('%ing', 'interesting') AS b, PATINDEX('ab%', 'abc') AS c,
       PATINDEX('%z%', 'abc') AS d, PATINDEX('%[0-9]%', 'ab12') AS e, PATINDEX('%B%', 'abc') AS f,
       PATINDEX(NULL, 'a') AS g
SELECT $1.50 AS m, $2 + 1 AS m2, -$3.25 AS neg, $.5 AS half, $12 * 2 AS doubled
SELECT PARSE('12' AS int) AS p, TRY_PARSE('a' AS int) AS tp, PARSE('2024-01-02' AS date USING 'en-US') AS d
GO
SELECT PARSE('x' AS int)
GO
-- CHECKSUM folds case and trailing spaces as the collation compares; BINARY_CHECKSUM does not.
SELECT IIF(CHECKSUM('abc') = CHECKSUM('ABC '), 'same', 'different') AS ci,
       IIF(BINARY_CHECKSUM('abc') = BINARY_CHECKSUM('ABC'), 'same', 'different') AS bi,
       IIF(CHECKSUM(1, 'x') = CHECKSUM(1, 'x'), 'stable', 'unstable') AS st,
       IIF(CHECKSUM(1, NULL) = CHECKSUM(NULL, 1), 'same', 'different') AS ordered
GO
-- DATE_BUCKET (SQL Server 2022): the start of the bucket of n dateparts, counted from the origin
-- (1900-01-01, a Monday, by default), that holds the date, in the date's type.
DECLARE @d DATETIME2 = '2020-04-30 21:21:21'
SELECT DATE_BUCKET(WEEK, 1, @d) AS w1, DATE_BUCKET(DAY, 1, @d) AS d1,
       DATE_BUCKET(MONTH, 1, @d) AS m1, DATE_BUCKET(YEAR, 1, @d) AS y1,
       DATE_BUCKET(HOUR, 1, @d) AS h1, DATE_BUCKET(MINUTE, 15, @d) AS mi15
SELECT DATE_BUCKET(WEEK, 5, CAST('2020-06-15' AS DATE)) AS w5,
       DATE_BUCKET(DAY, 3, CAST('2020-06-15' AS DATE), CAST('2020-06-01' AS DATE)) AS d3,
       DATE_BUCKET(QUARTER, 1, CAST('2020-05-15' AS DATE)) AS q1,
       DATE_BUCKET(MONTH, 2, CAST('1899-12-15' AS DATE)) AS before_origin,
       DATE_BUCKET(DAY, 1, CAST(NULL AS DATE)) AS null_date
GO
SELECT DATE_BUCKET(HOUR, 1, CAST('2020-06-15' AS DATE))
GO
SELECT DATE_BUCKET(DAY, 0, CAST('2020-06-15' AS DATE))
GO
