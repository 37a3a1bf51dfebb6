-- GOTO and labels: the error-handling style of older procedures, a backward jump as a
-- loop, and the compile errors for a missing (133) or repeated (132) label.
CREATE TABLE #log (step INT)
GO
CREATE PROCEDURE #transfer @fail BIT AS
BEGIN TRAN
INSERT #log VALUES (1)
IF @fail = 1 GOTO on_error
INSERT #log VALUES (2)
COMMIT
RETURN 0
on_error:
    ROLLBACK
    PRINT 'rolled back'
    RETURN 1
GO
DECLARE @rc INT
EXEC @rc = #transfer 0
SELECT @rc AS ok_status
EXEC @rc = #transfer 1
SELECT @rc AS failed_status, @@TRANCOUNT AS trancount
SELECT step FROM #log ORDER BY step
GO
DECLARE @i INT = 0
again:
SET @i += 1
IF @i < 5 GOTO again
SELECT @i AS counted
GO
-- A GOTO leaves a WHILE loop and a BEGIN...END block.
DECLARE @n INT = 0
WHILE 1 = 1
BEGIN
    SET @n += 1
    IF @n = 3 GOTO done
END
done:
SELECT @n AS left_at
GO
GOTO nowhere
GO
here:
here:
GO
-- A label inside a block the GOTO is not in is refused when the jump is made.
IF 1 = 0 BEGIN inside: PRINT 'inside' END
GOTO inside
GO
