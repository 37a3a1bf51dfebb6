-- Triggers: AFTER INSERT / UPDATE / DELETE with `inserted` and `deleted`, UPDATE(column),
-- COLUMNS_UPDATED(), @@ROWCOUNT and @@TRANCOUNT inside, ROLLBACK in a trigger (3609), an
-- error in a trigger, nesting, ENABLE / DISABLE, MERGE, the catalog views and the errors.
CREATE DATABASE trigdb
GO
USE trigdb
CREATE TABLE dbo.account (id INT PRIMARY KEY, owner VARCHAR(20), balance DECIMAL(10,2))
CREATE TABLE dbo.audit (seq INT IDENTITY PRIMARY KEY, action VARCHAR(10), id INT,
    old_balance DECIMAL(10,2), new_balance DECIMAL(10,2), rows_seen INT, trancount INT)
GO
CREATE TRIGGER dbo.account_audit ON dbo.account AFTER INSERT, UPDATE, DELETE
AS
SET NOCOUNT ON
DECLARE @rows INT = @@ROWCOUNT, @tc INT = @@TRANCOUNT
INSERT audit (action, id, old_balance, new_balance, rows_seen, trancount)
SELECT CASE WHEN d.id IS NULL THEN 'insert' WHEN i.id IS NULL THEN 'delete' ELSE 'update' END,
       COALESCE(i.id, d.id), d.balance, i.balance, @rows, @tc
FROM inserted AS i FULL JOIN deleted AS d ON d.id = i.id
GO
-- An autocommit statement: the trigger sees @@TRANCOUNT 1 and the statement's row count.
INSERT account VALUES (1, 'ann', 100), (2, 'bob', 50)
UPDATE account SET balance = balance + 10 WHERE id = 2
DELETE account WHERE id = 1
-- A statement that changes no row still fires its triggers once.
UPDATE account SET balance = 0 WHERE id = 99
SELECT seq, action, id, old_balance, new_balance, rows_seen, trancount FROM audit ORDER BY seq
GO
-- Inside a user transaction, a rollback undoes the trigger's work with the statement's.
BEGIN TRAN
INSERT account VALUES (3, 'cy', 7)
SELECT COUNT(*) AS audit_rows_in_tran FROM audit
ROLLBACK
SELECT COUNT(*) AS audit_rows_after FROM audit
SELECT COUNT(*) AS accounts FROM account
GO
-- UPDATE(column) and COLUMNS_UPDATED().
CREATE TRIGGER owner_guard ON account AFTER UPDATE
AS
IF UPDATE(owner)
    PRINT 'owner changed, columns mask ' + CONVERT(VARCHAR(10), CONVERT(INT, COLUMNS_UPDATED()))
ELSE
    PRINT 'owner untouched'
GO
UPDATE account SET owner = 'bo' WHERE id = 2
UPDATE account SET balance = 1 WHERE id = 2
GO
-- ROLLBACK in a trigger ends the transaction and the batch (3609); the statement is undone.
CREATE TRIGGER no_negative ON account AFTER INSERT, UPDATE
AS
IF EXISTS (SELECT * FROM inserted WHERE balance < 0)
BEGIN
    RAISERROR('A balance cannot be negative.', 16, 1)
    ROLLBACK TRANSACTION
    RETURN
END
GO
INSERT account VALUES (4, 'dee', -5)
PRINT 'not reached'
GO
SELECT COUNT(*) AS negative_rows FROM account WHERE balance < 0
SELECT @@TRANCOUNT AS trancount
GO
BEGIN TRAN
UPDATE account SET balance = -1 WHERE id = 2
PRINT 'not reached either'
GO
SELECT @@TRANCOUNT AS trancount_after, balance FROM account WHERE id = 2
GO
-- A CATCH takes the 3609.
BEGIN TRY
    INSERT account VALUES (5, 'eve', -1)
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS number, XACT_STATE() AS xact_state, @@TRANCOUNT AS trancount
END CATCH
GO
-- An error in a trigger rolls the statement's transaction back and ends the batch.
CREATE TRIGGER divide ON account AFTER DELETE
AS
SELECT 1 / 0 AS never
GO
BEGIN TRAN
INSERT account VALUES (6, 'fay', 60)
DELETE account WHERE id = 6
PRINT 'not reached'
GO
SELECT @@TRANCOUNT AS trancount, COUNT(*) AS fay FROM account WHERE id = 6
GO
-- DISABLE / ENABLE TRIGGER, and ALTER TABLE's spelling.
DISABLE TRIGGER divide ON account
DELETE account WHERE id = 2
SELECT COUNT(*) AS accounts FROM account
GO
ALTER TABLE account ENABLE TRIGGER divide
SELECT name, is_disabled FROM sys.triggers ORDER BY name
ALTER TABLE account DISABLE TRIGGER ALL
SELECT name, is_disabled FROM sys.triggers ORDER BY name
ENABLE TRIGGER ALL ON account
DROP TRIGGER divide, no_negative, owner_guard
GO
-- MERGE fires each action's triggers once.
INSERT account VALUES (7, 'gus', 70), (8, 'hal', 80)
DELETE audit
MERGE account AS t
USING (VALUES (7, 75.00), (9, 90.00)) AS s (id, balance) ON t.id = s.id
WHEN MATCHED THEN UPDATE SET balance = s.balance
WHEN NOT MATCHED BY TARGET THEN INSERT VALUES (s.id, 'new', s.balance)
WHEN NOT MATCHED BY SOURCE THEN DELETE;
SELECT action, id, old_balance, new_balance, rows_seen FROM audit ORDER BY action, id
GO
-- A trigger that changes another table fires that table's triggers (nesting), and a trigger
-- does not fire itself again.
CREATE TABLE dbo.counter (name VARCHAR(10) PRIMARY KEY, n INT)
INSERT counter VALUES ('audit', 0)
GO
CREATE TRIGGER count_audit ON audit AFTER INSERT
AS
UPDATE counter SET n = n + (SELECT COUNT(*) FROM inserted) WHERE name = 'audit'
GO
CREATE TRIGGER counter_self ON counter AFTER UPDATE
AS
SET NOCOUNT ON
PRINT 'counter_self at trigger level ' + CONVERT(VARCHAR(5), TRIGGER_NESTLEVEL())
    + ', @@NESTLEVEL ' + CONVERT(VARCHAR(5), @@NESTLEVEL)
UPDATE counter SET n = n + 1000 WHERE name = 'audit'
GO
UPDATE account SET balance = balance WHERE id IN (7, 8)
SELECT n, TRIGGER_NESTLEVEL() AS outside FROM counter
GO
-- inserted and deleted are tempdb tables while the trigger runs, gone after.
CREATE TRIGGER peek ON counter AFTER UPDATE
AS
SELECT COUNT(*) AS pseudo_tables_in_tempdb FROM tempdb.sys.objects
WHERE name LIKE '#inserted%' OR name LIKE '#deleted%'
GO
UPDATE counter SET n = n WHERE name = 'none'
DROP TRIGGER peek
SELECT COUNT(*) AS pseudo_tables_after FROM tempdb.sys.objects
WHERE name LIKE '#inserted%' OR name LIKE '#deleted%'
GO
-- inserted and deleted can be read, not changed (286); they exist only in triggers.
CREATE TRIGGER touch ON account AFTER INSERT
AS
UPDATE inserted SET balance = 0
GO
INSERT account VALUES (10, 'ivy', 1)
GO
DROP TRIGGER touch
SELECT * FROM inserted
GO
-- The catalog: sys.triggers, sys.objects (type TR, parent), sys.sql_modules,
-- OBJECT_DEFINITION.
SELECT t.name, OBJECT_NAME(t.parent_id) AS parent, t.type, t.type_desc, t.is_instead_of_trigger
FROM sys.triggers AS t ORDER BY t.name
SELECT name, type, OBJECT_NAME(parent_object_id) AS parent FROM sys.objects WHERE type = 'TR'
ORDER BY name
SELECT COUNT(*) AS modules FROM sys.sql_modules AS m JOIN sys.triggers AS t ON t.object_id = m.object_id
SELECT LEFT(OBJECT_DEFINITION(OBJECT_ID('count_audit')), 45) AS definition
GO
-- CREATE OR ALTER and ALTER replace the body; DROP TABLE drops the table's triggers.
CREATE OR ALTER TRIGGER count_audit ON audit AFTER INSERT AS PRINT 'count_audit v2'
GO
ALTER TRIGGER count_audit ON audit FOR INSERT AS PRINT 'count_audit v3'
GO
INSERT audit (action) VALUES ('x')
DROP TABLE audit
SELECT name FROM sys.triggers ORDER BY name
GO
-- RAISERROR does not honour XACT_ABORT (THROW does), in a trigger or anywhere.
SET XACT_ABORT ON
BEGIN TRAN
RAISERROR('raised', 16, 1)
SELECT @@TRANCOUNT AS still_open
ROLLBACK
SET XACT_ABORT OFF
GO
-- INSTEAD OF triggers: the statement changes nothing itself; the trigger gets the rows it
-- would have changed. On a view over a join (not updatable otherwise), and on a table, whose
-- own INSTEAD OF trigger's statements change it directly (firing its AFTER triggers).
CREATE TABLE dbo.dept (id INT PRIMARY KEY, name VARCHAR(20))
CREATE TABLE dbo.emp (id INT PRIMARY KEY, name VARCHAR(20), dept INT, salary INT DEFAULT 100)
INSERT dept VALUES (1, 'ops'), (2, 'dev')
INSERT emp (id, name, dept) VALUES (10, 'ann', 1), (11, 'bob', 2)
GO
CREATE VIEW dbo.staff AS
SELECT e.id, e.name, d.name AS dept_name, e.salary FROM emp AS e JOIN dept AS d ON d.id = e.dept
GO
CREATE TRIGGER staff_insert ON staff INSTEAD OF INSERT
AS
SET NOCOUNT ON
INSERT dept (id, name)
SELECT COALESCE((SELECT MAX(id) FROM dept), 0) + ROW_NUMBER() OVER (ORDER BY i.dept_name), i.dept_name
FROM (SELECT DISTINCT dept_name FROM inserted) AS i
WHERE NOT EXISTS (SELECT * FROM dept WHERE name = i.dept_name)
INSERT emp (id, name, dept, salary)
SELECT i.id, i.name, d.id, COALESCE(i.salary, 100) FROM inserted AS i JOIN dept AS d ON d.name = i.dept_name
GO
CREATE TRIGGER staff_change ON staff INSTEAD OF UPDATE, DELETE
AS
SET NOCOUNT ON
PRINT CONVERT(VARCHAR(5), @@ROWCOUNT) + ' row(s), salary set: '
    + CASE WHEN UPDATE(salary) THEN 'yes' ELSE 'no' END
UPDATE e SET salary = i.salary FROM emp AS e JOIN inserted AS i ON i.id = e.id
DELETE e FROM emp AS e JOIN deleted AS d ON d.id = e.id
    WHERE NOT EXISTS (SELECT * FROM inserted)
GO
INSERT staff (id, name, dept_name) VALUES (12, 'cy', 'dev'), (13, 'dee', 'sales')
UPDATE staff SET salary = salary + 5 WHERE dept_name = 'dev'
DELETE staff WHERE name = 'ann'
SELECT id, name, dept_name, salary FROM staff ORDER BY id
GO
CREATE TRIGGER emp_no_delete ON emp INSTEAD OF DELETE
AS
SET NOCOUNT ON
UPDATE e SET salary = 0 FROM emp AS e JOIN deleted AS d ON d.id = e.id
GO
DELETE emp WHERE id = 11
SELECT id, salary FROM emp ORDER BY id
MERGE emp USING (VALUES (12)) AS s (id) ON emp.id = s.id WHEN MATCHED THEN DELETE;
SELECT name, is_instead_of_trigger FROM sys.triggers WHERE name LIKE 'staff%' OR name LIKE 'emp%'
ORDER BY name
GO
-- One INSTEAD OF trigger per event and object (2111); AFTER triggers are for tables (8197).
CREATE TRIGGER staff_insert2 ON staff INSTEAD OF INSERT AS PRINT 1
GO
CREATE TRIGGER staff_after ON staff AFTER INSERT AS PRINT 1
GO
DROP VIEW staff
SELECT COUNT(*) AS staff_triggers FROM sys.triggers WHERE name LIKE 'staff%'
GO
-- Errors: OUTPUT without INTO on a table with triggers (334), a missing or temporary table
-- (8197), a trigger in another schema than its table (2108), not first in the
-- batch (111), DROP of a missing trigger (3701), UPDATE() outside a trigger.
UPDATE counter SET n = 0 OUTPUT inserted.n
GO
CREATE TRIGGER t_missing ON nothing AFTER INSERT AS PRINT 1
GO
CREATE TABLE #tmp (a INT)
GO
CREATE TRIGGER t_temp ON #tmp AFTER INSERT AS PRINT 1
GO
CREATE TRIGGER other.t_schema ON dbo.counter AFTER INSERT AS PRINT 1
GO
PRINT 'first'
CREATE TRIGGER t_second ON counter AFTER INSERT AS PRINT 1
GO
DROP TRIGGER t_none
DROP TRIGGER IF EXISTS t_none
GO
IF UPDATE(n) PRINT 'no'
GO
USE master
DROP DATABASE trigdb
