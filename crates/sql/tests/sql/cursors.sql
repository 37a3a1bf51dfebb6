-- Cursors: DECLARE CURSOR, OPEN, FETCH, CLOSE, DEALLOCATE; @@FETCH_STATUS, @@CURSOR_ROWS and
-- CURSOR_STATUS; LOCAL and GLOBAL scope; SQL Server's error numbers.
SET NOCOUNT ON
CREATE TABLE dbo.fruit (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(5, 2))
INSERT INTO dbo.fruit VALUES (1, 'apple', 0.50), (2, 'banana', 0.25), (3, 'cherry', 3.00), (4, 'date', 2.10)
GO
-- Before any fetch @@FETCH_STATUS is -1 and no cursor was opened (@@CURSOR_ROWS 0).
SELECT @@FETCH_STATUS AS fetch_status, @@CURSOR_ROWS AS cursor_rows
GO
-- The usual loop: FETCH NEXT ... INTO until @@FETCH_STATUS is not 0.
DECLARE @id INT, @name VARCHAR(20), @total DECIMAL(7, 2) = 0
DECLARE fruit_cursor CURSOR STATIC FOR SELECT id, name FROM dbo.fruit ORDER BY id
OPEN fruit_cursor
SELECT @@CURSOR_ROWS AS rows_after_open, CURSOR_STATUS('global', 'fruit_cursor') AS status_open
FETCH NEXT FROM fruit_cursor INTO @id, @name
WHILE @@FETCH_STATUS = 0
BEGIN
  PRINT CAST(@id AS VARCHAR(10)) + ': ' + @name
  FETCH NEXT FROM fruit_cursor INTO @id, @name
END
-- Past the end the status is -1 and the variables keep the last row's values.
SELECT @@FETCH_STATUS AS after_end, @id AS last_id, @name AS last_name
CLOSE fruit_cursor
SELECT CURSOR_STATUS('global', 'fruit_cursor') AS status_closed, @@CURSOR_ROWS AS rows_closed
DEALLOCATE fruit_cursor
SELECT CURSOR_STATUS('global', 'fruit_cursor') AS status_gone
GO
-- A GLOBAL cursor (the default) outlives its batch; a LOCAL one does not.
DECLARE g CURSOR GLOBAL STATIC FOR SELECT name FROM dbo.fruit WHERE id <= 2 ORDER BY id
DECLARE l CURSOR LOCAL FOR SELECT name FROM dbo.fruit
SELECT CURSOR_STATUS('global', 'g') AS g_status, CURSOR_STATUS('local', 'l') AS l_status,
       CURSOR_STATUS('local', 'g') AS g_as_local
OPEN g
GO
SELECT CURSOR_STATUS('global', 'g') AS g_next_batch, CURSOR_STATUS('local', 'l') AS l_next_batch
FETCH NEXT FROM g
FETCH NEXT FROM GLOBAL g
FETCH NEXT FROM g
SELECT @@FETCH_STATUS AS fetch_status
OPEN l
GO
-- A STATIC cursor's rows are read at OPEN: later changes are not seen until it is reopened.
DECLARE @name VARCHAR(20)
CLOSE g
OPEN g
UPDATE dbo.fruit SET name = 'apricot' WHERE id = 1
FETCH g INTO @name
SELECT @name AS still_apple
CLOSE g
OPEN g
FETCH g INTO @name
SELECT @name AS now_apricot
CLOSE g
DEALLOCATE g
UPDATE dbo.fruit SET name = 'apple' WHERE id = 1
GO
-- Variables in the query take their values at DECLARE.
DECLARE @min INT = 3, @n INT
DECLARE v CURSOR LOCAL FOR SELECT COUNT(*) FROM dbo.fruit WHERE id >= @min
SET @min = 1
OPEN v
FETCH v INTO @n
SELECT @n AS counted_from_3
GO
-- A LOCAL cursor and a GLOBAL one may share a name; the name finds the local one first.
DECLARE twin CURSOR GLOBAL FOR SELECT 'global' AS which
DECLARE twin CURSOR LOCAL FOR SELECT 'local' AS which
OPEN twin
OPEN GLOBAL twin
FETCH twin
FETCH GLOBAL twin
DEALLOCATE twin
FETCH twin
DEALLOCATE twin
SELECT CURSOR_STATUS('global', 'twin') AS twin_gone
GO
-- A cursor inside a procedure: LOCAL, deallocated when the procedure returns.
CREATE PROCEDURE dbo.price_list AS
BEGIN
  DECLARE @name VARCHAR(20), @price DECIMAL(5, 2), @list VARCHAR(200) = ''
  DECLARE c CURSOR LOCAL FAST_FORWARD FOR SELECT name, price FROM dbo.fruit ORDER BY price DESC
  OPEN c
  FETCH NEXT FROM c INTO @name, @price
  WHILE @@FETCH_STATUS = 0
  BEGIN
    SET @list += @name + '=' + CAST(@price AS VARCHAR(10)) + ' '
    FETCH NEXT FROM c INTO @name, @price
  END
  CLOSE c
  SELECT RTRIM(@list) AS list, CURSOR_STATUS('local', 'c') AS status_in_proc
END
GO
EXEC dbo.price_list
SELECT CURSOR_STATUS('local', 'c') AS after_proc_local, CURSOR_STATUS('global', 'c') AS after_proc_global
EXEC dbo.price_list
GO
-- SCROLL fetches, each without INTO (a one-row result set; an empty one past either end).
DECLARE s SCROLL CURSOR FOR SELECT id, name FROM dbo.fruit ORDER BY id
OPEN s
FETCH LAST FROM s
FETCH PRIOR FROM s
FETCH FIRST FROM s
FETCH PRIOR FROM s
SELECT @@FETCH_STATUS AS before_first
FETCH NEXT FROM s
FETCH ABSOLUTE 3 FROM s
FETCH ABSOLUTE -1 FROM s
FETCH RELATIVE -2 FROM s
DECLARE @step INT = 1
FETCH RELATIVE @step FROM s
FETCH ABSOLUTE 10 FROM s
SELECT @@FETCH_STATUS AS past_end
FETCH PRIOR FROM s
FETCH ABSOLUTE 0 FROM s
SELECT @@FETCH_STATUS AS absolute_zero
CLOSE s
DEALLOCATE s
GO
-- STATIC and KEYSET cursors scroll by default; FORWARD_ONLY STATIC does not.
DECLARE k CURSOR KEYSET FOR SELECT name FROM dbo.fruit ORDER BY id
DECLARE f CURSOR FORWARD_ONLY STATIC FOR SELECT name FROM dbo.fruit ORDER BY id
OPEN k
OPEN f
FETCH LAST FROM k
FETCH LAST FROM f
FETCH ABSOLUTE 2 FROM f
FETCH NEXT FROM f
DEALLOCATE k
DEALLOCATE f
GO
-- An empty result: CURSOR_STATUS 0, the first fetch -1.
DECLARE e CURSOR FOR SELECT name FROM dbo.fruit WHERE id > 100
OPEN e
SELECT CURSOR_STATUS('global', 'e') AS empty_status, @@CURSOR_ROWS AS empty_rows
FETCH NEXT FROM e
SELECT @@FETCH_STATUS AS empty_fetch
DEALLOCATE e
GO
-- The ISO form: INSENSITIVE, SCROLL, FOR READ ONLY.
DECLARE iso INSENSITIVE SCROLL CURSOR FOR SELECT name FROM dbo.fruit ORDER BY id FOR READ ONLY
OPEN iso
FETCH LAST FROM iso
DEALLOCATE iso
DECLARE upd CURSOR FOR SELECT name FROM dbo.fruit FOR UPDATE OF name
OPEN upd
FETCH upd
DEALLOCATE upd
GO
-- Errors. Declaring an existing cursor: 16915.
DECLARE dup CURSOR FOR SELECT 1
DECLARE dup CURSOR FOR SELECT 2
-- Opening an open cursor: 16905.
OPEN dup
OPEN dup
-- A non-NEXT fetch from a forward-only cursor: 16911.
FETCH PRIOR FROM dup
FETCH ABSOLUTE 1 FROM dup
-- The INTO list must match the columns: 16924.
DECLARE @a INT, @b INT
FETCH NEXT FROM dup INTO @a, @b
-- Fetching from or closing a closed cursor: 16917.
CLOSE dup
FETCH NEXT FROM dup
CLOSE dup
DEALLOCATE dup
-- A cursor that does not exist: 16916.
OPEN nothing
FETCH NEXT FROM nothing
CLOSE nothing
DEALLOCATE nothing
DEALLOCATE dup
SELECT CURSOR_STATUS('global', 'nothing') AS missing, CURSOR_STATUS('variable', '@nothing') AS no_variable
GO
-- FOR UPDATE on a read-only cursor: 16957.
DECLARE ro CURSOR STATIC FOR SELECT name FROM dbo.fruit FOR UPDATE
SELECT CURSOR_STATUS('global', 'ro') AS ro_status
GO
-- FAST_FORWARD cannot SCROLL: 1048, a compile error.
DECLARE ff CURSOR SCROLL FAST_FORWARD FOR SELECT 1
GO
-- An error in a STATIC cursor's query surfaces at OPEN, and the cursor stays closed.
DECLARE bad CURSOR STATIC FOR SELECT 1 / (id - 1) FROM dbo.fruit
OPEN bad
SELECT CURSOR_STATUS('global', 'bad') AS bad_status
DEALLOCATE bad
GO
-- A LOCAL cursor of dynamic SQL ends with it; a GLOBAL one does not.
EXEC ('DECLARE dl CURSOR LOCAL FOR SELECT 1 AS x DECLARE dg CURSOR GLOBAL FOR SELECT 2 AS y')
SELECT CURSOR_STATUS('local', 'dl') AS dynamic_local, CURSOR_STATUS('global', 'dg') AS dynamic_global
DEALLOCATE dg
GO
DROP PROCEDURE dbo.price_list
DROP TABLE dbo.fruit
GO
-- Positioned changes: UPDATE and DELETE WHERE CURRENT OF through an updatable cursor, and
-- the errors for a read-only cursor (16929), another table (16933) and no current row (16930).
CREATE TABLE dbo.stock (sku INT PRIMARY KEY, qty INT NOT NULL, note VARCHAR(20) NULL)
INSERT stock VALUES (1, 10, NULL), (2, 0, NULL), (3, 5, NULL), (4, 0, NULL)
GO
DECLARE @sku INT, @qty INT
DECLARE c CURSOR FOR SELECT sku, qty FROM dbo.stock s ORDER BY sku FOR UPDATE OF note
OPEN c
FETCH NEXT FROM c INTO @sku, @qty
WHILE @@FETCH_STATUS = 0
BEGIN
    IF @qty = 0
        DELETE FROM dbo.stock WHERE CURRENT OF c
    ELSE
        UPDATE dbo.stock SET note = 'in stock: ' + CAST(@qty AS VARCHAR(10)) WHERE CURRENT OF c
    FETCH NEXT FROM c INTO @sku, @qty
END
UPDATE dbo.stock SET note = 'after' WHERE CURRENT OF c
CLOSE c
DEALLOCATE c
SELECT * FROM stock
GO
DECLARE r CURSOR STATIC FOR SELECT sku FROM stock
OPEN r
FETCH NEXT FROM r
UPDATE stock SET qty = 1 WHERE CURRENT OF r
CLOSE r
DEALLOCATE r
GO
CREATE TABLE other (id INT PRIMARY KEY)
DECLARE o CURSOR FOR SELECT sku FROM stock
OPEN o
FETCH NEXT FROM o
DELETE other WHERE CURRENT OF o
CLOSE o
DEALLOCATE o
DROP TABLE other
DROP TABLE stock
GO
-- A FOR UPDATE OF list names the only columns a positioned UPDATE may set (16932).
CREATE TABLE dbo.lim (id INT PRIMARY KEY, a INT, b INT)
INSERT lim VALUES (1, 0, 0)
DECLARE l CURSOR FOR SELECT id FROM dbo.lim FOR UPDATE OF a
OPEN l
FETCH NEXT FROM l
UPDATE dbo.lim SET a = 1 WHERE CURRENT OF l
UPDATE dbo.lim SET b = 1 WHERE CURRENT OF l
SELECT a, b FROM lim
CLOSE l
DEALLOCATE l
DROP TABLE dbo.lim
GO
