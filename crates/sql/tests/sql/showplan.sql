-- SET SHOWPLAN_TEXT and SHOWPLAN_ALL: the plan of each statement instead of its result,
-- with SQL Server's operator names. These are the plans the executor runs for key shapes;
-- a plan that gets worse shows up in this file's diff.
CREATE TABLE customers (id INT CONSTRAINT pk_customers PRIMARY KEY, city VARCHAR(20) NOT NULL);
CREATE TABLE orders (order_id INT CONSTRAINT pk_orders PRIMARY KEY, customer_id INT NOT NULL,
    status TINYINT NOT NULL, amount INT NOT NULL);
CREATE INDEX ix_orders_customer ON orders (customer_id);
CREATE TABLE lines (order_id INT NOT NULL, line_no INT NOT NULL, item INT NOT NULL,
    CONSTRAINT pk_lines PRIMARY KEY (order_id, line_no));
CREATE TABLE heap (a INT, b INT);
INSERT INTO customers SELECT value, CONCAT('city', value % 50) FROM GENERATE_SERIES(1, 2000);
INSERT INTO orders SELECT value, value % 2000 + 1, value % 5, value * 7 % 1000 FROM GENERATE_SERIES(1, 20000);
INSERT INTO lines SELECT value / 3 + 1, value % 3, value % 100 FROM GENERATE_SERIES(0, 59999);
INSERT INTO heap VALUES (1, 2);
GO
SET SHOWPLAN_TEXT ON;
GO
-- Point and range seeks on the clustered key, a nonclustered seek with key lookups, a scan.
SELECT amount FROM orders WHERE order_id = 42;
SELECT order_id FROM orders WHERE order_id BETWEEN 100 AND 120 AND status = 1;
SELECT order_id, amount FROM orders WHERE customer_id = 7;
SELECT a FROM heap WHERE b = 2;
SELECT line_no FROM lines WHERE order_id IN (3, 4, 5);
-- Joins: index nested loops, a hash join, both written as comma joins too.
SELECT c.id, o.order_id FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.city = 'city7';
SELECT c.id, o.order_id FROM customers c, orders o WHERE o.customer_id = c.id AND c.city = 'city7';
SELECT COUNT(*) FROM orders o JOIN lines l ON l.item = o.amount;
SELECT c.id, l.item FROM customers c, orders o, lines l
WHERE o.customer_id = c.id AND l.order_id = o.order_id AND c.id = 5;
-- Outer, semi and anti joins.
SELECT c.id, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.id WHERE c.id < 3;
SELECT c.id, o.order_id FROM orders o RIGHT JOIN customers c ON o.customer_id = c.id WHERE c.id < 3;
SELECT c.id FROM customers c WHERE c.id < 10 AND EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id);
SELECT c.id FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id);
-- Aggregation, DISTINCT, sorting and TOP.
SELECT status, COUNT(*), SUM(amount) FROM orders GROUP BY status HAVING COUNT(*) > 1;
-- Grouped by the clustered key's integer columns, as the scan or seek reads them: a stream.
SELECT order_id, COUNT(*) FROM lines GROUP BY order_id;
SELECT line_no, order_id, MAX(item) FROM lines WHERE order_id < 50 GROUP BY line_no, order_id;
SELECT COUNT(*) FROM orders WHERE status = 2;
SELECT DISTINCT status FROM orders;
SELECT TOP (5) order_id, amount * 2 AS twice FROM orders ORDER BY amount DESC;
SELECT TOP (3) order_id FROM orders;
-- Derived tables, UNION, and changes (which are not run).
SELECT x.n FROM (SELECT customer_id AS n FROM orders WHERE status = 1) AS x WHERE x.n = 3;
SELECT id FROM customers WHERE id = 1 UNION SELECT order_id FROM orders WHERE order_id = 2;
UPDATE orders SET amount = amount + 1 WHERE customer_id = 9;
DELETE FROM lines WHERE order_id = 10;
INSERT INTO heap SELECT order_id, amount FROM orders WHERE order_id < 3;
GO
SET SHOWPLAN_TEXT OFF;
GO
-- Nothing above ran.
SELECT COUNT(*) AS heap_rows FROM heap;
SELECT amount AS unchanged_56 FROM orders WHERE order_id = 8;
SELECT COUNT(*) AS still_3 FROM lines WHERE order_id = 10;
GO
SET SHOWPLAN_ALL ON;
GO
SELECT c.city, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.id = 11;
GO
SET SHOWPLAN_ALL OFF;
GO
