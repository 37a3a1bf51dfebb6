//! Views and derived tables inlined into the block that reads them (`query/inline.rs`): the
//! results must be those of the computed view, which a `TOP` keeps computed (a query with
//! TOP is never inlined), SQL Server's name scoping and errors must hold, and a filter on a
//! view's column must now seek the view's table.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{ok, run, showplan_text};

/// Database `d` with customers and orders (NULLs among them) and views over them.
fn setup() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d; \
         CREATE TABLE dbo.customers (id INT PRIMARY KEY, city VARCHAR(20) NULL, \
           name VARCHAR(20) NOT NULL); \
         CREATE INDEX ix_city ON dbo.customers (city); \
         CREATE TABLE dbo.orders (id INT PRIMARY KEY, customer_id INT NULL, \
           amount DECIMAL(10, 2) NULL, note VARCHAR(10) NULL); \
         CREATE INDEX ix_customer ON dbo.orders (customer_id)",
    );
    let mut customers = Vec::new();
    // Forty cities (and no city), so that one city is few enough of the customers that its
    // index is sought rather than the table scanned.
    for id in 1..=600 {
        let city = match id % 41 {
            0 => "NULL".to_string(),
            k => format!("'c{k}'"),
        };
        customers.push(format!("({id}, {city}, 'n{id}')"));
    }
    let mut orders = Vec::new();
    for id in 1..=400 {
        let customer = if id % 9 == 0 { "NULL".to_string() } else { (id % 70 + 1).to_string() };
        let amount = if id % 13 == 0 { "NULL".to_string() } else { format!("{}.25", id % 50) };
        orders.push(format!("({id}, {customer}, {amount}, 'o{id}')"));
    }
    ok(
        &mut s,
        &format!(
            "INSERT INTO dbo.customers VALUES {}; INSERT INTO dbo.orders VALUES {}",
            customers.join(", "),
            orders.join(", ")
        ),
    );
    ok(
        &mut s,
        "CREATE VIEW dbo.big_orders AS \
           SELECT o.id AS order_id, o.customer_id, o.amount * 2 AS doubled, o.note \
           FROM dbo.orders o WHERE o.amount > 10",
    );
    ok(
        &mut s,
        "CREATE VIEW dbo.customer_orders (customer, city, order_id, amount) AS \
           SELECT c.name, c.city, o.id, o.amount \
           FROM dbo.customers c JOIN dbo.orders o ON o.customer_id = c.id",
    );
    ok(
        &mut s,
        "CREATE VIEW dbo.paris_orders AS SELECT * FROM dbo.customer_orders WHERE city = 'c1'",
    );
    (dir, s)
}

fn rows(out: &Collected) -> Vec<Vec<Value>> {
    out.results.last().unwrap().rows.clone()
}

fn sorted(mut rows: Vec<Vec<Value>>) -> Vec<Vec<String>> {
    let mut text: Vec<Vec<String>> =
        rows.drain(..).map(|r| r.iter().map(|v| format!("{v:?}")).collect()).collect();
    text.sort();
    text
}

/// `inlined` and `computed` return the same rows (in any order) and column names, and some.
fn same(s: &mut Session, inlined: &str, computed: &str) {
    let a = ok(s, inlined);
    let b = ok(s, computed);
    let (ra, rb) = (a.results.last().unwrap(), b.results.last().unwrap());
    let names =
        |r: &walden_sql::exec::RowSet| r.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(ra), names(rb), "{inlined}");
    let types = |r: &walden_sql::exec::RowSet| {
        r.columns.iter().map(|c| format!("{:?}", c.ty)).collect::<Vec<_>>()
    };
    assert_eq!(types(ra), types(rb), "{inlined}");
    assert_eq!(sorted(rows(&a)), sorted(rows(&b)), "{inlined}");
}

#[test]
fn views_and_derived_tables_give_the_computed_results() {
    let (_dir, mut s) = setup();
    let cases = [
        (
            "SELECT * FROM dbo.big_orders WHERE customer_id = 5",
            "SELECT * FROM (SELECT TOP (100000) * FROM dbo.big_orders) v WHERE customer_id = 5",
        ),
        (
            "SELECT b.order_id, b.doubled, c.name FROM dbo.big_orders b \
             JOIN dbo.customers c ON c.id = b.customer_id WHERE c.city = 'c2'",
            "SELECT b.order_id, b.doubled, c.name FROM \
             (SELECT TOP (100000) * FROM dbo.big_orders) b \
             JOIN dbo.customers c ON c.id = b.customer_id WHERE c.city = 'c2'",
        ),
        (
            "SELECT customer, SUM(amount) AS total FROM dbo.customer_orders \
             WHERE city IS NULL GROUP BY customer",
            "SELECT customer, SUM(amount) AS total FROM \
             (SELECT TOP (100000) * FROM dbo.customer_orders) v \
             WHERE city IS NULL GROUP BY customer",
        ),
        (
            "SELECT * FROM dbo.paris_orders WHERE amount < 20",
            "SELECT * FROM (SELECT TOP (100000) * FROM dbo.paris_orders) p WHERE amount < 20",
        ),
        (
            "SELECT d.k, d.a FROM (SELECT o.customer_id AS k, o.amount + 1 AS a \
             FROM dbo.orders o WHERE o.note LIKE 'o1%') d WHERE d.k BETWEEN 3 AND 9",
            "SELECT d.k, d.a FROM (SELECT TOP (100000) o.customer_id AS k, o.amount + 1 AS a \
             FROM dbo.orders o WHERE o.note LIKE 'o1%') d WHERE d.k BETWEEN 3 AND 9",
        ),
        // Outer joins around an inlined view: the view is computed whole on either side.
        (
            "SELECT c.id, b.order_id FROM dbo.customers c \
             LEFT JOIN dbo.big_orders b ON b.customer_id = c.id",
            "SELECT c.id, b.order_id FROM dbo.customers c \
             LEFT JOIN (SELECT TOP (100000) * FROM dbo.big_orders) b ON b.customer_id = c.id",
        ),
        (
            "SELECT x.customer, x.order_id FROM (SELECT * FROM dbo.customer_orders) x \
             RIGHT JOIN dbo.orders o ON o.id = x.order_id WHERE o.id < 30",
            "SELECT x.customer, x.order_id FROM \
             (SELECT TOP (100000) * FROM dbo.customer_orders) x \
             RIGHT JOIN dbo.orders o ON o.id = x.order_id WHERE o.id < 30",
        ),
        // A derived table joined with a view, both inlined, NULLs compared on the way.
        (
            "SELECT v.order_id, d.name FROM dbo.big_orders v, \
             (SELECT id, name, city FROM dbo.customers) d \
             WHERE d.id = v.customer_id AND (d.city = 'c3' OR d.city IS NULL)",
            "SELECT v.order_id, d.name FROM (SELECT TOP (100000) * FROM dbo.big_orders) v, \
             (SELECT TOP (100000) id, name, city FROM dbo.customers) d \
             WHERE d.id = v.customer_id AND (d.city = 'c3' OR d.city IS NULL)",
        ),
        // ORDER BY a view's column, and an alias of the block that shadows one.
        (
            "SELECT TOP (5) order_id, doubled AS customer_id FROM dbo.big_orders \
             ORDER BY customer_id DESC, order_id",
            "SELECT TOP (5) order_id, doubled AS customer_id FROM \
             (SELECT TOP (100000) * FROM dbo.big_orders) v ORDER BY customer_id DESC, order_id",
        ),
        // A column list on a derived table, and a subquery of the block that names none of
        // the view's names.
        (
            "SELECT q.a, q.b FROM (SELECT id, customer_id FROM dbo.orders) q (a, b) \
             WHERE EXISTS (SELECT 1 FROM dbo.customers c WHERE c.id = q.b AND c.name = 'n7')",
            "SELECT q.a, q.b FROM (SELECT TOP (100000) id, customer_id FROM dbo.orders) q (a, b) \
             WHERE EXISTS (SELECT 1 FROM dbo.customers c WHERE c.id = q.b AND c.name = 'n7')",
        ),
    ];
    for (inlined, computed) in cases {
        same(&mut s, inlined, computed);
    }
}

#[test]
fn a_filter_on_a_views_column_seeks_its_table() {
    let (_dir, mut s) = setup();
    let shown =
        showplan_text(&mut s, "SELECT order_id, doubled FROM dbo.big_orders WHERE order_id = 42");
    assert!(shown.contains("Clustered Index Seek"), "{shown}");
    assert!(shown.contains("[d].[dbo].[orders]") && shown.contains("AS [o]"), "{shown}");
    assert!(!shown.contains('\u{1}'), "{shown}");
    let shown = showplan_text(
        &mut s,
        "SELECT customer, amount FROM dbo.customer_orders WHERE city = 'c1' AND amount > 3",
    );
    assert!(shown.contains("Index Seek"), "{shown}");
    assert!(shown.contains("ix_city"), "{shown}");
    // A derived table the same way.
    let shown = showplan_text(
        &mut s,
        "SELECT d.k FROM (SELECT id AS k FROM dbo.customers) d WHERE d.k = 7",
    );
    assert!(shown.contains("Clustered Index Seek"), "{shown}");
    assert_eq!(
        rows(&ok(&mut s, "SELECT d.k FROM (SELECT id AS k FROM dbo.customers) d WHERE d.k = 7")),
        vec![vec![Value::Int(7)]]
    );
}

#[test]
fn the_view_keeps_its_names_to_itself() {
    let (_dir, mut s) = setup();
    let number = |out: &Collected| out.errors().next().map(|e| e.number);
    // The view's inner alias and a column it does not expose are not the block's.
    assert_eq!(number(&run(&mut s, "SELECT o.id FROM dbo.big_orders")), Some(4104));
    assert_eq!(number(&run(&mut s, "SELECT amount FROM dbo.big_orders")), Some(207));
    // The view is in scope, its column is not: 207, as SQL Server reports it.
    assert_eq!(number(&run(&mut s, "SELECT big_orders.amount FROM dbo.big_orders")), Some(207));
    // A name two sources have is ambiguous, inlined or not.
    assert_eq!(
        number(&run(
            &mut s,
            "SELECT customer_id FROM dbo.big_orders b JOIN dbo.orders o ON o.id = b.order_id"
        )),
        Some(209)
    );
    // A derived table's duplicate names: a reference to one is ambiguous.
    assert_eq!(
        number(&run(&mut s, "SELECT d.id FROM (SELECT id, id AS id FROM dbo.orders) d")),
        Some(209)
    );
    // The block's name stays the block's when the view's table has the same column.
    same(
        &mut s,
        "SELECT c.id, name, b.order_id FROM dbo.customers c JOIN dbo.big_orders b \
         ON b.customer_id = c.id WHERE id < 20",
        "SELECT c.id, name, b.order_id FROM dbo.customers c JOIN \
         (SELECT TOP (100000) * FROM dbo.big_orders) b ON b.customer_id = c.id WHERE id < 20",
    );
}

#[test]
fn select_star_through_a_view_after_its_table_gained_a_column() {
    let (_dir, mut s) = setup();
    let before = ok(&mut s, "SELECT * FROM dbo.big_orders WHERE order_id = 11");
    ok(&mut s, "ALTER TABLE dbo.orders ADD extra INT NULL");
    // The view names its columns; its `*`-less list is unchanged by the new column.
    let after = ok(&mut s, "SELECT * FROM dbo.big_orders WHERE order_id = 11");
    assert_eq!(before.results[0].columns.len(), after.results[0].columns.len());
    assert_eq!(rows(&before), rows(&after));
    // A view of `*` shows what the computed view shows.
    ok(&mut s, "CREATE VIEW dbo.all_orders AS SELECT * FROM dbo.orders");
    ok(&mut s, "ALTER TABLE dbo.orders ADD more INT NULL");
    same(
        &mut s,
        "SELECT * FROM dbo.all_orders WHERE id = 12",
        "SELECT * FROM (SELECT TOP (100000) * FROM dbo.all_orders) v WHERE id = 12",
    );
}

#[test]
fn views_over_views_and_nesting_errors_behave_as_before() {
    let (_dir, mut s) = setup();
    same(
        &mut s,
        "SELECT customer, order_id FROM dbo.paris_orders WHERE order_id > 100",
        "SELECT customer, order_id FROM \
         (SELECT TOP (100000) * FROM dbo.paris_orders) p WHERE order_id > 100",
    );
    // A view that names a dropped table reports the missing table, as the computed one did.
    ok(&mut s, "CREATE TABLE dbo.gone (a INT)");
    ok(&mut s, "CREATE VIEW dbo.over_gone AS SELECT a FROM dbo.gone");
    ok(&mut s, "DROP TABLE dbo.gone");
    let out = run(&mut s, "SELECT * FROM dbo.over_gone");
    assert_eq!(out.errors().next().map(|e| e.number), Some(208));
    // Views changed through: the DML path is unchanged.
    ok(&mut s, "CREATE VIEW dbo.notes AS SELECT id, note FROM dbo.orders WHERE id < 50");
    ok(&mut s, "UPDATE dbo.notes SET note = 'x' WHERE id = 20");
    let note = rows(&ok(&mut s, "SELECT note FROM dbo.orders WHERE id = 20"));
    assert_eq!(note, vec![vec![Value::Str("x".into())]]);
}

#[test]
fn a_grouped_derived_table_feeds_its_block_group_by_group() {
    let (_dir, mut s) = setup();
    let cases = [
        (
            "SELECT d.k, d.c FROM (SELECT customer_id AS k, COUNT(*) AS c FROM dbo.orders \
             GROUP BY customer_id) d WHERE d.c > 5",
            "SELECT d.k, d.c FROM (SELECT TOP (100000) customer_id AS k, COUNT(*) AS c \
             FROM dbo.orders GROUP BY customer_id) d WHERE d.c > 5",
        ),
        (
            "SELECT * FROM (SELECT note, COUNT_BIG(amount) FROM dbo.orders \
             WHERE id < 200 GROUP BY note HAVING COUNT(*) = 1) d (n, c) WHERE n LIKE 'o1%'",
            "SELECT * FROM (SELECT TOP (100000) note, COUNT_BIG(amount) FROM dbo.orders \
             WHERE id < 200 GROUP BY note HAVING COUNT(*) = 1) d (n, c) WHERE n LIKE 'o1%'",
        ),
        (
            "SELECT TOP (3) k, c FROM (SELECT c.city AS k, COUNT(*) AS c \
             FROM dbo.customers c JOIN dbo.orders o ON o.customer_id = c.id GROUP BY c.city) d",
            "SELECT TOP (3) k, c FROM (SELECT TOP (100000) c.city AS k, COUNT(*) AS c \
             FROM dbo.customers c JOIN dbo.orders o ON o.customer_id = c.id GROUP BY c.city) d",
        ),
        // The block grouped again over the groups.
        (
            "SELECT c, COUNT(*) AS n FROM (SELECT customer_id AS k, COUNT(*) AS c \
             FROM dbo.orders GROUP BY customer_id) d GROUP BY c",
            "SELECT c, COUNT(*) AS n FROM (SELECT TOP (100000) customer_id AS k, COUNT(*) AS c \
             FROM dbo.orders GROUP BY customer_id) d GROUP BY c",
        ),
    ];
    for (streamed, computed) in cases {
        same(&mut s, streamed, computed);
    }
    // A count without a name is still error 8155.
    let out = run(
        &mut s,
        "SELECT * FROM (SELECT customer_id, COUNT(*) FROM dbo.orders GROUP BY customer_id) d",
    );
    assert_eq!(out.errors().next().map(|e| e.number), Some(8155));
}

#[test]
fn ctes_named_only_in_the_from_clause_are_inlined() {
    let (_dir, mut s) = setup();
    let cases = [
        (
            "WITH b AS (SELECT o.id, o.customer_id FROM dbo.orders o WHERE o.amount > 5) \
             SELECT * FROM b WHERE customer_id = 4",
            "WITH b AS (SELECT TOP (100000) o.id, o.customer_id FROM dbo.orders o \
             WHERE o.amount > 5) SELECT * FROM b WHERE customer_id = 4",
        ),
        // Named twice: each reference is its own copy of the query.
        (
            "WITH b (i, k) AS (SELECT id, customer_id FROM dbo.orders) \
             SELECT x.i, y.i FROM b x JOIN b y ON y.k = x.k WHERE x.i < 40 AND y.i > x.i",
            "WITH b (i, k) AS (SELECT TOP (100000) id, customer_id FROM dbo.orders) \
             SELECT x.i, y.i FROM b x JOIN b y ON y.k = x.k WHERE x.i < 40 AND y.i > x.i",
        ),
        // Named in a subquery too: computed once, as before.
        (
            "WITH b AS (SELECT id, customer_id FROM dbo.orders) \
             SELECT id FROM b WHERE customer_id = (SELECT MAX(customer_id) FROM b)",
            "WITH b AS (SELECT TOP (100000) id, customer_id FROM dbo.orders) \
             SELECT id FROM b WHERE customer_id = (SELECT MAX(customer_id) FROM b)",
        ),
        // One CTE over another.
        (
            "WITH a AS (SELECT id, city FROM dbo.customers), \
             c AS (SELECT id FROM a WHERE city = 'c2') SELECT * FROM c WHERE id > 10",
            "WITH a AS (SELECT TOP (100000) id, city FROM dbo.customers), \
             c AS (SELECT TOP (100000) id FROM a WHERE city = 'c2') SELECT * FROM c WHERE id > 10",
        ),
    ];
    for (inlined, computed) in cases {
        same(&mut s, inlined, computed);
    }
    let shown = showplan_text(
        &mut s,
        "WITH b AS (SELECT id, customer_id FROM dbo.orders) SELECT id FROM b WHERE customer_id = 9",
    );
    assert!(shown.contains("Index Seek") && shown.contains("ix_customer"), "{shown}");
    // A recursive CTE is still computed.
    let out = ok(
        &mut s,
        "WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT SUM(i) FROM n",
    );
    assert_eq!(rows(&out), vec![vec![Value::Int(15)]]);
}

#[test]
fn schemabound_and_check_option_views_read_inlined_and_change_as_before() {
    let (_dir, mut s) = setup();
    ok(
        &mut s,
        "CREATE VIEW dbo.bound WITH SCHEMABINDING AS \
         SELECT o.id, o.customer_id FROM dbo.orders o WHERE o.customer_id < 10",
    );
    ok(
        &mut s,
        "CREATE VIEW dbo.checked AS SELECT id, customer_id, note FROM dbo.orders \
         WHERE customer_id = 3 WITH CHECK OPTION",
    );
    same(
        &mut s,
        "SELECT b.id, c.note FROM dbo.bound b JOIN dbo.checked c ON c.id = b.id",
        "SELECT b.id, c.note FROM (SELECT TOP (100000) * FROM dbo.bound) b \
         JOIN (SELECT TOP (100000) * FROM dbo.checked) c ON c.id = b.id",
    );
    let shown = showplan_text(&mut s, "SELECT id FROM dbo.bound WHERE id = 5");
    assert!(shown.contains("Clustered Index Seek"), "{shown}");
    // The check option still refuses a row the view would not show (550).
    let out = run(&mut s, "INSERT INTO dbo.checked (id, customer_id, note) VALUES (9001, 4, 'n')");
    assert_eq!(out.errors().next().map(|e| e.number), Some(550));
    ok(&mut s, "INSERT INTO dbo.checked (id, customer_id, note) VALUES (9002, 3, 'n')");
    let n = rows(&ok(&mut s, "SELECT COUNT(*) FROM dbo.checked WHERE id = 9002"));
    assert_eq!(n, vec![vec![Value::Int(1)]]);
}

/// Inline table-valued functions over `d`'s tables: one with a default, one calling another.
fn with_functions(s: &mut Session) {
    ok(
        s,
        "CREATE FUNCTION dbo.orders_of (@customer INT, @min DECIMAL(10, 2) = 0) RETURNS TABLE AS \
         RETURN SELECT o.id, o.amount, o.note FROM dbo.orders o \
         WHERE o.customer_id = @customer AND o.amount >= @min",
    );
    ok(
        s,
        "CREATE FUNCTION dbo.city_orders (@city VARCHAR(3)) RETURNS TABLE AS \
         RETURN SELECT c.name, f.id, f.amount FROM dbo.customers c \
         CROSS JOIN dbo.orders_of(7, 5) f WHERE c.city = @city",
    );
}

#[test]
fn inline_table_functions_give_the_computed_results_and_seek() {
    let (_dir, mut s) = setup();
    with_functions(&mut s);
    // `TOP` keeps the function's query computed: the reference results.
    let cases = [
        (
            "SELECT * FROM dbo.orders_of(5, 10) WHERE amount < 40",
            "SELECT * FROM (SELECT TOP (100000) o.id, o.amount, o.note FROM dbo.orders o \
             WHERE o.customer_id = 5 AND o.amount >= 10) f WHERE amount < 40",
        ),
        (
            "DECLARE @c INT = 12; SELECT f.id, c.name FROM dbo.orders_of(@c, DEFAULT) f \
             JOIN dbo.customers c ON c.id = @c",
            "SELECT f.id, c.name FROM (SELECT TOP (100000) o.id FROM dbo.orders o \
             WHERE o.customer_id = 12 AND o.amount >= 0) f JOIN dbo.customers c ON c.id = 12",
        ),
        // The argument is cast to the parameter's type: '2x' would not be a number, but a
        // VARCHAR(3) parameter keeps 'c2x' whole and '3' is converted to INT.
        (
            "SELECT name, id FROM dbo.city_orders('c2x')",
            "SELECT TOP (0) c.name, o.id FROM dbo.customers c CROSS JOIN dbo.orders o",
        ),
        (
            "SELECT name, id, amount FROM dbo.city_orders('c2')",
            "SELECT c.name, o.id, o.amount FROM (SELECT TOP (100000) * FROM dbo.customers) c \
             CROSS JOIN dbo.orders o WHERE c.city = 'c2' AND o.customer_id = 7 AND o.amount >= 5",
        ),
        (
            "SELECT q.a FROM dbo.orders_of('3', 0) q (a, b, n)",
            "SELECT TOP (100000) o.id AS a FROM dbo.orders o WHERE o.customer_id = 3 \
             AND o.amount >= 0",
        ),
    ];
    for (inlined, computed) in cases {
        same(&mut s, inlined, computed);
    }
    let shown = showplan_text(&mut s, "SELECT id FROM dbo.orders_of(5, 1)");
    assert!(shown.contains("Index Seek") && shown.contains("ix_customer"), "{shown}");
    assert!(!shown.contains("Table-valued function"), "{shown}");
    // A function inside a function, and the block's filter on a function's column, reach
    // the tables: the customers' city index and the orders' key.
    let shown = showplan_text(&mut s, "SELECT name FROM dbo.city_orders('c1') WHERE id = 97");
    assert!(shown.contains("ix_city") && shown.contains("Clustered Index Seek"), "{shown}");
    assert!(!shown.contains("Table-valued function"), "{shown}");
    let shown = showplan_text(&mut s, "SELECT COUNT(*) FROM dbo.orders_of(ABS(-5), 10)");
    assert!(shown.contains("Table-valued function"), "{shown}");
    // An argument that is not constants and variables keeps the call computed, with the
    // same results.
    let computed = ok(&mut s, "SELECT COUNT(*) FROM dbo.orders_of(ABS(-5), 10)");
    let inlined = ok(&mut s, "SELECT COUNT(*) FROM dbo.orders_of(5, 10)");
    assert_eq!(rows(&computed), rows(&inlined));
    // Errors of the call are those of the computed call.
    let number = |out: &Collected| out.errors().next().map(|e| e.number);
    assert_eq!(number(&run(&mut s, "SELECT * FROM dbo.orders_of(1, 2, 3)")), Some(8144));
    assert_eq!(number(&run(&mut s, "SELECT * FROM dbo.orders_of()")), Some(313));
}
