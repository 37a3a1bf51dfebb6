-- SET ROWCOUNT: SELECT returns, and INSERT, UPDATE and DELETE change, at most n rows; 0 turns
-- it off; TOP still applies when smaller; a procedure's SET ROWCOUNT ends when it returns.
-- The batched-delete idiom of maintenance scripts.
CREATE TABLE #big (id INT PRIMARY KEY, done BIT DEFAULT 0)
INSERT #big (id) SELECT value FROM GENERATE_SERIES(1, 25)
GO
SET ROWCOUNT 10
SELECT id FROM #big ORDER BY id DESC
SELECT @@ROWCOUNT AS selected
UPDATE #big SET done = 1
SELECT COUNT(*) AS done_rows FROM #big WHERE done = 1
SELECT TOP (3) id FROM #big ORDER BY id
SET ROWCOUNT 0
SELECT COUNT(*) AS all_rows FROM #big
GO
DECLARE @batch INT = 10, @deleted INT = 0, @rounds INT = 0
SET ROWCOUNT @batch
WHILE 1 = 1
BEGIN
    DELETE #big
    IF @@ROWCOUNT = 0 BREAK
    SET @rounds += 1
END
SET ROWCOUNT 0
SELECT @rounds AS rounds, COUNT(*) AS left_over FROM #big
GO
CREATE PROCEDURE #limited AS SET ROWCOUNT 1; SELECT value FROM GENERATE_SERIES(1, 5)
GO
EXEC #limited
SELECT COUNT(*) AS after_procedure FROM GENERATE_SERIES(1, 5)
GO
SET ROWCOUNT -1
GO
-- An assignment stops after SET ROWCOUNT's rows too: @v holds the first row's value, in ORDER
-- BY's order, and in a table's key order through the single-table plan.
CREATE TABLE #ordered (k INT PRIMARY KEY, v INT)
INSERT #ordered VALUES (1, 10), (2, 20), (3, 30)
GO
DECLARE @v INT, @w INT
SET ROWCOUNT 1
SELECT @v = v FROM #ordered ORDER BY k
SELECT @@ROWCOUNT AS assigned
SELECT @w = v FROM #ordered WHERE k >= 1
SET ROWCOUNT 0
SELECT @v AS by_order, @w AS by_key
GO
