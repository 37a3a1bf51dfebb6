-- The SET options that change what statements compute, and where they show.
SELECT @@OPTIONS AS options, SESSIONPROPERTY('ANSI_NULLS') AS ansi_nulls, SESSIONPROPERTY('QUOTED_IDENTIFIER') AS qi, SESSIONPROPERTY('nonsense') AS unknown
DBCC USEROPTIONS
GO
CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10), n INT)
CREATE INDEX ix_c ON t (c)
INSERT INTO t VALUES (1, 'a', 1), (2, NULL, NULL), (3, 'b', 0)
GO
-- ANSI_NULLS: `= NULL` holds for no row; OFF compares a literal or variable NULL as a value.
SELECT id FROM t WHERE c = NULL
SET ANSI_NULLS OFF
SELECT id AS eq_null FROM t WHERE c = NULL
SELECT id AS ne_null FROM t WHERE c <> NULL ORDER BY id
DECLARE @v VARCHAR(10) = NULL
SELECT id AS eq_variable FROM t WHERE c = @v
SELECT id AS columns_still_unknown FROM t a WHERE a.c = (SELECT c FROM t b WHERE b.id = 2)
SELECT CASE WHEN NULL = NULL THEN 'equal' ELSE 'unknown' END AS searched, CASE @v WHEN NULL THEN 'matched' ELSE 'no' END AS simple
SELECT @@OPTIONS & 32 AS ansi_nulls_bit, SESSIONPROPERTY('ANSI_NULLS') AS prop
SET ANSI_NULLS ON
SELECT id AS back_on FROM t WHERE c = @v
GO
-- CONCAT_NULL_YIELDS_NULL
SELECT 'a' + NULL AS on_null
SET CONCAT_NULL_YIELDS_NULL OFF
SELECT 'a' + NULL AS off_null, NULL + N'b' AS off_null_n, 1 + NULL AS number_null, c + '!' AS col FROM t ORDER BY id
SET CONCAT_NULL_YIELDS_NULL ON
GO
-- ARITHABORT and ANSI_WARNINGS OFF: NULL with a warning; ARITHIGNORE ON: silently.
SELECT 1 / 0 AS raised
GO
SET ARITHABORT OFF
SELECT 1 / 0 AS still_raised_under_ansi_warnings
GO
SET ARITHABORT OFF
SET ANSI_WARNINGS OFF
SELECT 1 / 0 AS divide_by_zero, 5 % 0 AS modulo_zero
SELECT CAST(256 AS TINYINT) AS overflow, 2147483647 + 1 AS int_overflow
SELECT id, 10 / n AS ratio FROM t ORDER BY id
SET ARITHIGNORE ON
SELECT 1 / 0 AS ignored
SELECT @@OPTIONS & (8 | 64 | 128) AS bits
SET ARITHIGNORE OFF
SET ANSI_WARNINGS ON
SET ARITHABORT ON
GO
-- DATEFORMAT, DATEFIRST, LANGUAGE
SET DATEFORMAT dmy
SELECT CAST('13/02/2024' AS DATE) AS dmy, CAST('2024-02-13' AS DATE) AS iso, CONVERT(DATE, '02/13/2024', 101) AS style_101
SET DATEFORMAT ymd
SELECT CAST('24/02/13' AS DATE) AS ymd
SET DATEFORMAT ydm
SELECT CAST('24/13/02' AS DATE) AS ydm
SET DATEFORMAT myd
SELECT CAST('02/2024/13' AS DATE) AS myd
SET DATEFORMAT dym
SELECT CAST('13/2024/02' AS DATE) AS dym
SET DATEFORMAT mdy
SELECT CAST('02/13/2024' AS DATE) AS mdy
GO
SET DATEFORMAT xyz
GO
DECLARE @f VARCHAR(3) = 'DMY'
SET DATEFORMAT @f
SELECT CAST('01/02/2024' AS DATE) AS from_variable
SET DATEFORMAT mdy
GO
-- 2024-01-07 is a Sunday.
SELECT DATEPART(weekday, '2024-01-07') AS sunday_default, @@DATEFIRST AS datefirst
SET DATEFIRST 1
SELECT DATEPART(weekday, '2024-01-07') AS sunday_monday_first, DATEPART(weekday, '2024-01-08') AS monday, DATEPART(week, '2024-01-07') AS week, @@DATEFIRST AS datefirst
SET DATEFIRST 7
GO
SET DATEFIRST 8
GO
SET LANGUAGE Deutsch
SELECT @@LANGUAGE AS language, @@LANGID AS langid, @@DATEFIRST AS datefirst, DATENAME(month, '2024-03-01') AS month, DATENAME(weekday, '2024-03-01') AS weekday, CAST('01.03.2024' AS DATE) AS dmy, CAST('5 März 2024' AS DATE) AS named_month
DBCC USEROPTIONS
SET LANGUAGE British
SELECT @@LANGUAGE AS language, CAST('13/02/2024' AS DATE) AS dmy, DATEPART(weekday, '2024-01-08') AS monday
SET LANGUAGE N'Français'
SELECT DATENAME(month, '2024-08-01') AS month, DATENAME(weekday, '2024-08-01') AS weekday
SET LANGUAGE us_english
SELECT @@LANGUAGE AS language, @@DATEFIRST AS datefirst
GO
SET LANGUAGE Klingon
GO
SELECT langid, name, alias, dateformat, datefirst, msglangid FROM sys.syslanguages ORDER BY langid
GO
-- QUOTED_IDENTIFIER: OFF makes "text" a string in the batches after it.
SELECT "id" FROM t WHERE id = 1
SET QUOTED_IDENTIFIER OFF
GO
SELECT "a string" AS s, @@OPTIONS & 256 AS qi_bit
GO
SET QUOTED_IDENTIFIER ON
GO
SELECT "id" AS quoted FROM t WHERE id = 1
GO
-- The session view and ANSI_DEFAULTS.
SET ANSI_DEFAULTS ON
SELECT @@OPTIONS AS options
SELECT ansi_defaults, implicit_transactions_visible = @@OPTIONS & 2 FROM sys.dm_exec_sessions WHERE session_id = @@SPID
SET ANSI_DEFAULTS OFF
SELECT @@OPTIONS AS options
SET ANSI_DEFAULTS ON
SET IMPLICIT_TRANSACTIONS OFF
SET CURSOR_CLOSE_ON_COMMIT OFF
SELECT @@OPTIONS AS options
GO
SET DATEFORMAT ydm
SET TEXTSIZE 10
SET ANSI_PADDING OFF
SELECT text_size, language, date_format, date_first, quoted_identifier, arithabort, ansi_null_dflt_on, ansi_defaults, ansi_warnings, ansi_padding, ansi_nulls, concat_null_yields_null FROM sys.dm_exec_sessions WHERE session_id = @@SPID
DBCC USEROPTIONS
GO
-- ANSI_WARNINGS OFF: a string too long for its column is cut silently.
SET ANSI_PADDING ON
SET TEXTSIZE 0
SET DATEFORMAT mdy
CREATE TABLE short_text (s VARCHAR(3))
INSERT INTO short_text VALUES ('abcdef')
SET ANSI_WARNINGS OFF
INSERT INTO short_text VALUES ('abcdef')
UPDATE short_text SET s = 'uvwxyz'
SET ANSI_WARNINGS ON
SELECT s FROM short_text
GO
-- ANSI_NULL_DFLT_ON / OFF: a column without NULL or NOT NULL.
SET ANSI_NULL_DFLT_OFF ON
CREATE TABLE dflt_off (a INT, b INT NULL)
SET ANSI_NULL_DFLT_ON ON
CREATE TABLE dflt_on (a INT, b INT NOT NULL)
SELECT OBJECT_NAME(object_id) AS t, name, is_nullable FROM sys.columns WHERE object_id IN (OBJECT_ID('dflt_off'), OBJECT_ID('dflt_on')) ORDER BY t, name
SELECT @@OPTIONS & (1024 | 2048) AS dflt_bits
GO
INSERT INTO dflt_off (b) VALUES (1)
GO
-- A procedure keeps the ANSI_NULLS and QUOTED_IDENTIFIER it was created under.
SET ANSI_NULLS OFF
SET QUOTED_IDENTIFIER OFF
GO
CREATE PROCEDURE legacy AS SELECT id, "legacy text" AS s FROM t WHERE c = NULL
GO
SET ANSI_NULLS ON
SET QUOTED_IDENTIFIER ON
GO
CREATE PROCEDURE modern AS SELECT id FROM t WHERE c = NULL
GO
EXEC legacy
EXEC modern
SELECT OBJECT_NAME(object_id) AS name, uses_ansi_nulls, uses_quoted_identifier FROM sys.sql_modules WHERE object_id IN (OBJECT_ID('legacy'), OBJECT_ID('modern')) ORDER BY name
GO
SELECT name, alias, dateformat, datefirst, lcid, months FROM sys.syslanguages WHERE langid IN (0, 1)
SELECT COUNT(*) AS languages FROM syslanguages
GO
