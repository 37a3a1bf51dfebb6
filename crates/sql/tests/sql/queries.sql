SET NOCOUNT ON
CREATE TABLE dbo.dept (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL)
CREATE TABLE dbo.emp (id INT IDENTITY(1, 1) PRIMARY KEY, name NVARCHAR(30) NOT NULL, dept INT NULL,
                      salary DECIMAL(10, 2) NOT NULL DEFAULT 1000, hired DATE NULL,
                      CHECK (salary >= 0))
INSERT INTO dbo.dept VALUES (1, 'eng'), (2, 'ops'), (3, 'empty')
INSERT INTO dbo.emp (name, dept, salary, hired) VALUES (N'ann', 1, 5000, '2020-01-15'), (N'bob', 1, 4000, '2021-03-01'),
  (N'cid', 2, 3000, NULL), (N'dee', NULL, 2500, '2019-07-30')
INSERT INTO dbo.emp (name, dept) VALUES (N'eve', 2)
SELECT SCOPE_IDENTITY() AS scope_id, @@IDENTITY AS ident, IDENT_CURRENT('dbo.emp') AS ident_current
GO
SELECT e.name, d.name AS dept FROM dbo.emp AS e INNER JOIN dbo.dept AS d ON e.dept = d.id ORDER BY e.name
SELECT e.name, d.name AS dept FROM dbo.emp e LEFT JOIN dbo.dept d ON e.dept = d.id ORDER BY e.id
SELECT d.name, e.name FROM dbo.emp e RIGHT JOIN dbo.dept d ON e.dept = d.id ORDER BY d.id, e.name
SELECT * FROM dbo.emp e RIGHT JOIN dbo.dept d ON e.dept = d.id AND e.salary > 2800 WHERE d.id > 1 ORDER BY d.id, e.name
SELECT COUNT(*) AS n FROM dbo.emp e FULL JOIN dbo.dept d ON e.dept = d.id
SELECT COUNT(*) AS n FROM dbo.emp CROSS JOIN dbo.dept
GO
SELECT dept, COUNT(*) AS n, SUM(salary) AS total, MIN(salary) AS lo, MAX(salary) AS hi, AVG(salary) AS mean
FROM dbo.emp GROUP BY dept HAVING COUNT(*) >= 1 ORDER BY dept
SELECT COUNT(*) AS all_rows, COUNT(dept) AS with_dept, COUNT(DISTINCT dept) AS depts FROM dbo.emp
SELECT DISTINCT dept FROM dbo.emp ORDER BY dept DESC
SELECT TOP (2) name FROM dbo.emp ORDER BY salary DESC
SELECT name, ROW_NUMBER() OVER (ORDER BY salary) AS rn FROM dbo.emp ORDER BY rn
GO
SELECT name FROM dbo.emp WHERE dept IN (SELECT id FROM dbo.dept WHERE name = 'eng') ORDER BY name
SELECT name FROM dbo.dept d WHERE EXISTS (SELECT 1 FROM dbo.emp e WHERE e.dept = d.id) ORDER BY name
SELECT name, (SELECT COUNT(*) FROM dbo.emp e WHERE e.dept = d.id) AS staff FROM dbo.dept d ORDER BY id
SELECT x.dept, x.n FROM (SELECT dept, COUNT(*) AS n FROM dbo.emp GROUP BY dept) AS x WHERE x.n > 1
;WITH rich AS (SELECT name, salary FROM dbo.emp WHERE salary > 2800)
SELECT name FROM rich ORDER BY salary
SELECT name FROM dbo.dept UNION SELECT 'eng' ORDER BY name
SELECT 1 AS n UNION ALL SELECT 1
GO
UPDATE dbo.emp SET salary = salary + 100 WHERE id = 1
UPDATE e SET salary = 0 FROM dbo.emp AS e JOIN dbo.dept AS d ON e.dept = d.id WHERE d.name = 'ops'
SELECT @@ROWCOUNT AS updated
DELETE FROM dbo.emp WHERE dept IS NULL
SELECT name, salary FROM dbo.emp ORDER BY id
UPDATE dbo.emp SET salary = -1 WHERE id = 1
GO
SELECT name, salary INTO #rich FROM dbo.emp WHERE salary > 1000
SELECT * FROM #rich ORDER BY name
INSERT INTO #rich SELECT N'zed', 1
SELECT COUNT(*) AS n FROM #rich
DROP TABLE #rich
GO
DECLARE @t TABLE (k INT PRIMARY KEY, v VARCHAR(5))
INSERT INTO @t VALUES (2, 'b'), (1, 'a')
SELECT k, v FROM @t ORDER BY k
GO
CREATE SEQUENCE dbo.s AS INT START WITH 10 INCREMENT BY 5 MINVALUE 10 MAXVALUE 20 CYCLE CACHE 3
SELECT NEXT VALUE FOR dbo.s AS a, NEXT VALUE FOR dbo.s AS b
SELECT NEXT VALUE FOR dbo.s AS c
SELECT NEXT VALUE FOR dbo.s AS d
SELECT NEXT VALUE FOR dbo.s AS wrapped
DROP SEQUENCE dbo.s
DROP SEQUENCE IF EXISTS dbo.s
GO
TRUNCATE TABLE dbo.emp
SELECT COUNT(*) AS n FROM dbo.emp
GO
-- A set operation's column type combines every branch's by precedence and widening: no
-- value is cut to the first branch's length or type.
SELECT 'a' AS x UNION ALL SELECT 'bbb';
SELECT N'x' AS n UNION ALL SELECT 'yy';
SELECT 1 AS n UNION ALL SELECT 2.5;
SELECT CAST(1 AS TINYINT) AS n UNION SELECT 300;
SELECT NULL AS n UNION SELECT 'x';
SELECT 1 AS n UNION SELECT 'x';
GO
