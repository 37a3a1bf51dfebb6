-- The hash aggregate's fast paths (aggregate.rs): integer keys looked up by their integers,
-- CAST of an integer column to a wider integer type taken without the general conversion,
-- and integer sums added in place. Each must give what the general path gives, and leave
-- to it what it does not handle: NULL keys, text keys under their collation, DECIMAL keys
-- equal to integers, and sums that overflow (error 8115).
CREATE TABLE facts (
    id INT NOT NULL PRIMARY KEY, k INT NULL, t TINYINT NULL, sm SMALLINT NULL,
    b BIGINT NULL, v INT NULL, name VARCHAR(10) COLLATE SQL_Latin1_General_CP1_CI_AS NULL,
    cs VARCHAR(10) COLLATE Latin1_General_CS_AS NULL, d DECIMAL(38, 0) NULL
)
INSERT INTO facts VALUES
    (1, 1, 1, 1, 1, 10, 'a', 'a', 1),
    (2, 1, 1, 1, 1, 20, 'A', 'A', 1),
    (3, NULL, NULL, NULL, NULL, 30, 'b ', 'b', NULL),
    (4, 2, 2, 2, 9223372036854775807, NULL, NULL, NULL, 2),
    (5, NULL, 255, -32768, -9223372036854775807, 2147483647, 'B', 'B', 99999999999999999999999999999999999999),
    (6, 2, 2, 2, 1, 2147483647, 'a ', 'a ', 99999999999999999999999999999999999999)
GO
-- NULL keys make one group, as the text key's NULL did.
SELECT k, COUNT(*) AS n, SUM(CAST(v AS BIGINT)) AS total FROM facts GROUP BY k ORDER BY k
GO
-- Each integer type as a key, and two integer keys with a NULL among them.
SELECT t, COUNT(*) AS n FROM facts GROUP BY t ORDER BY t
GO
SELECT sm, k, COUNT(*) AS n FROM facts GROUP BY sm, k ORDER BY sm, k
GO
SELECT b, COUNT(*) AS n FROM facts GROUP BY b ORDER BY b
GO
-- Widening casts of each integer type, and of NULL; a narrowing one is converted as before.
SELECT k, SUM(CAST(t AS INT)) AS t_int, SUM(CAST(sm AS BIGINT)) AS sm_big,
       SUM(CONVERT(BIGINT, k)) AS k_big, SUM(CAST(t AS SMALLINT)) AS t_small
FROM facts GROUP BY k ORDER BY k
GO
SELECT SUM(CAST(b AS INT)) AS narrowed FROM facts WHERE id = 4
GO
-- A case-insensitive key groups 'a' and 'A' (trailing spaces ignored); a case-sensitive
-- one does not; text beside an integer key is keyed by its text.
SELECT UPPER(MIN(name)) AS name, COUNT(*) AS n FROM facts GROUP BY name ORDER BY 1
GO
SELECT cs, COUNT(*) AS n FROM facts GROUP BY cs ORDER BY cs
GO
SELECT k, UPPER(MIN(name)) AS name, COUNT(*) AS n FROM facts GROUP BY k, name ORDER BY k, 2
GO
-- An integer and a DECIMAL that are equal are one group, whichever comes first.
SELECT x, COUNT(*) AS n FROM (
    SELECT CAST(k AS SQL_VARIANT) AS x FROM facts WHERE id IN (1, 2)
    UNION ALL SELECT CAST(CAST(1 AS DECIMAL(5, 1)) AS SQL_VARIANT)
) u GROUP BY x
GO
-- Sums that overflow their type fail with 8115, in place or not.
SELECT SUM(v) AS int_sum FROM facts
GO
SELECT k, SUM(v) AS int_sum FROM facts GROUP BY k ORDER BY k
GO
SELECT SUM(CAST(b AS BIGINT)) AS big_sum FROM facts WHERE id IN (4, 6)
GO
SELECT SUM(b) AS big_sum FROM facts WHERE id IN (4, 5, 6)
GO
SELECT SUM(d) AS dec_sum FROM facts
GO
SELECT k, SUM(d) AS dec_sum FROM facts GROUP BY k ORDER BY k
GO
