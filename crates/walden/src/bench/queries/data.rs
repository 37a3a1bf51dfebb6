//! The data `walden bench queries` loads into every engine and the queries it runs on it.
//!
//! The rows come from a seeded generator so that every engine gets the same ones and every
//! run the same answers; nothing is read from outside. Values are integers and short ASCII
//! strings in one letter case, so that the three engines' collations and numeric types
//! cannot make equal answers look different (sums are cast to BIGINT because SQL Server's
//! `SUM` of an INT is an INT and overflows).

use std::fmt::Write as _;

use super::super::Rng;

/// Rows of each table at scale 1.
const CUSTOMERS: f64 = 10_000.0;
const ITEMS: f64 = 10_000.0;
const ORDERS: f64 = 100_000.0;
const CATEGORIES: f64 = 100.0;
/// Customers per city: a filter on one city keeps 1% of them at scale 1.
const CUSTOMERS_PER_CITY: u32 = 100;
/// The most distinct cities.
const CITIES: u32 = 100;
/// Lookups of the point-lookup loop, whatever the scale (the figure).
pub const LOOKUPS: u32 = 10_000;

/// One table's rows, each a list of SQL literals in column order, with its DDL.
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    /// `CREATE TABLE` and `CREATE INDEX` statements, valid in all three dialects.
    pub ddl: Vec<String>,
    pub rows: Vec<Vec<Literal>>,
}

/// A value as every engine's loader needs it.
#[derive(Debug, Clone)]
pub enum Literal {
    Int(i64),
    /// A decimal number as written (`21168.23`).
    Num(String),
    /// Text, or a date as `yyyy-mm-dd`.
    Text(String),
}

impl Literal {
    /// The value as an SQL literal.
    pub fn sql(&self) -> String {
        match self {
            Literal::Int(v) => v.to_string(),
            Literal::Num(n) => n.clone(),
            Literal::Text(s) => format!("'{}'", s.replace('\'', "''")),
        }
    }

    /// The value in PostgreSQL's COPY text format (no tabs, newlines or backslashes are
    /// generated).
    pub fn copy_text(&self) -> String {
        match self {
            Literal::Int(v) => v.to_string(),
            Literal::Num(s) | Literal::Text(s) => s.clone(),
        }
    }
}

/// The generated database and the figures the queries are built from.
#[derive(Debug)]
pub struct Dataset {
    pub tables: Vec<Table>,
    pub customers: u32,
    pub items: u32,
    pub orders: u32,
    pub lines: u32,
    pub categories: u32,
    pub cities: u32,
}

/// Generates the tables at `scale` (1 = 10,000 customers and items, 100,000 orders, about
/// 300,000 order lines).
pub fn generate(scale: f64, seed: u64) -> Dataset {
    let count = |base: f64, min: u32| ((base * scale).round() as u32).max(min);
    // The smallest sizes keep a five-table cross product (what today's Walden builds for a
    // comma join) in a few hundred thousand rows, for the smoke test; at least 10 customers
    // so that every tenth can have no orders.
    let customers = count(CUSTOMERS, 10);
    let items = count(ITEMS, 10);
    let orders = count(ORDERS, 10);
    let categories = count(CATEGORIES, 5);
    let cities = (customers / CUSTOMERS_PER_CITY).clamp(1, CITIES);
    let mut rng = Rng(seed);

    let category_rows = (1..=categories)
        .map(|id| vec![Literal::Int(id.into()), Literal::Text(format!("cat_{id}"))])
        .collect();
    let item_rows = (1..=items)
        .map(|id| {
            vec![
                Literal::Int(id.into()),
                Literal::Int(rng.range(1, categories).into()),
                Literal::Int(rng.range(100, 10_000).into()),
                Literal::Text(format!("item_{id}")),
            ]
        })
        .collect();
    let customer_rows = (1..=customers)
        .map(|id| {
            vec![
                Literal::Int(id.into()),
                Literal::Text(format!("name_{}", rng.range(1, customers))),
                Literal::Text(format!("city_{}", rng.range(0, cities - 1))),
            ]
        })
        .collect();
    let mut order_rows = Vec::with_capacity(orders as usize);
    let mut line_rows = Vec::with_capacity(orders as usize * 3);
    for id in 1..=orders {
        // Every tenth customer has no orders, so that NOT EXISTS and NOT IN find some.
        let mut customer = rng.range(1, customers);
        if customer.is_multiple_of(10) {
            customer -= 1;
        }
        let date =
            format!("{}-{:02}-{:02}", rng.range(2020, 2023), rng.range(1, 12), rng.range(1, 28));
        order_rows.push(vec![
            Literal::Int(id.into()),
            Literal::Int(customer.into()),
            Literal::Text(date),
            Literal::Int(rng.range(0, 4).into()),
            Literal::Int(rng.range(100, 100_000).into()),
        ]);
        for line in 1..=rng.range(1, 5) {
            line_rows.push(vec![
                Literal::Int(id.into()),
                Literal::Int(line.into()),
                Literal::Int(rng.range(1, items).into()),
                Literal::Int(rng.range(1, 10).into()),
            ]);
        }
    }
    let lines = line_rows.len() as u32;
    let table = |name, ddl: &[&str], rows| Table {
        name,
        ddl: ddl.iter().map(|s| s.to_string()).collect(),
        rows,
    };
    Dataset {
        tables: vec![
            table(
                "categories",
                &["CREATE TABLE categories (category_id INT NOT NULL PRIMARY KEY, \
                   name VARCHAR(20) NOT NULL)"],
                category_rows,
            ),
            table(
                "items",
                &["CREATE TABLE items (item_id INT NOT NULL PRIMARY KEY, \
                   category_id INT NOT NULL, price INT NOT NULL, name VARCHAR(30) NOT NULL)"],
                item_rows,
            ),
            table(
                "customers",
                &[
                    "CREATE TABLE customers (id INT NOT NULL PRIMARY KEY, \
                     name VARCHAR(30) NOT NULL, city VARCHAR(20) NOT NULL)",
                    "CREATE INDEX ix_customers_city ON customers (city)",
                ],
                customer_rows,
            ),
            table(
                "orders",
                &[
                    "CREATE TABLE orders (order_id INT NOT NULL PRIMARY KEY, \
                     customer_id INT NOT NULL, order_date DATE NOT NULL, status INT NOT NULL, \
                     amount INT NOT NULL)",
                    "CREATE INDEX ix_orders_customer ON orders (customer_id)",
                ],
                order_rows,
            ),
            table(
                "order_lines",
                &["CREATE TABLE order_lines (order_id INT NOT NULL, line_no INT NOT NULL, \
                   item_id INT NOT NULL, qty INT NOT NULL, PRIMARY KEY (order_id, line_no))"],
                line_rows,
            ),
        ],
        customers,
        items,
        orders,
        lines,
        categories,
        cities,
    }
}

/// `INSERT` statements of up to 1,000 rows each (SQL Server's limit for one `VALUES`).
pub fn insert_statements(table: &Table) -> Vec<String> {
    table
        .rows
        .chunks(1000)
        .map(|chunk| {
            let mut sql = format!("INSERT INTO {} VALUES ", table.name);
            for (i, row) in chunk.iter().enumerate() {
                if i > 0 {
                    sql.push(',');
                }
                sql.push('(');
                for (j, v) in row.iter().enumerate() {
                    if j > 0 {
                        sql.push(',');
                    }
                    let _ = write!(sql, "{}", v.sql());
                }
                sql.push(')');
            }
            sql
        })
        .collect()
}

/// How a query runs: one statement, or the point-lookup loop, which each engine runs its own
/// way (a T-SQL `WHILE` batch, a PL/pgSQL `DO` block, prepared statement executions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Statement,
    /// `LOOKUPS` lookups of `orders.amount` by primary key, summed: the answer is one row.
    LookupLoop,
}

/// One query in each dialect.
#[derive(Debug)]
pub struct Query {
    pub name: String,
    pub kind: Kind,
    /// T-SQL, for Walden.
    pub tsql: String,
    pub sqlite: String,
    pub postgres: String,
}

/// The order id the lookup loop reads at iteration `i` (0-based): keys spread over the
/// table rather than in order. The loops in every dialect compute the same expression.
pub fn lookup_key(i: u32, orders: u32) -> u32 {
    ((u64::from(i) * 7919) % u64::from(orders)) as u32 + 1
}

/// The queries, built for the generated sizes.
pub fn queries(d: &Dataset) -> Vec<Query> {
    let city = format!("'city_{}'", 17 % d.cities);
    let category_limit = (d.categories / 5).max(1);
    let range_lo = d.orders / 3;
    let range_hi = range_lo + (d.orders / 100).max(10);
    let prefix_order = d.orders / 2;
    // A customer that has orders (every tenth has none).
    let mut customer = (d.customers * 7 / 9).max(1);
    if customer.is_multiple_of(10) {
        customer -= 1;
    }
    let in_lo = d.orders / 4;
    let in_hi = in_lo + (d.orders / 1000).max(5);
    let n = d.orders;
    let same = |name: &str, kind, sql: String| Query {
        name: name.into(),
        kind,
        tsql: sql.clone(),
        sqlite: sql.clone(),
        postgres: sql,
    };
    let limit = "SELECT order_id, customer_id FROM orders \
                 ORDER BY order_date DESC, order_id DESC LIMIT 10"
        .to_string();
    let joins3 = "customers c JOIN orders o ON o.customer_id = c.id \
                  JOIN order_lines l ON l.order_id = o.order_id";
    vec![
        Query {
            name: "pk_lookup_loop".into(),
            kind: Kind::LookupLoop,
            tsql: format!(
                "SET NOCOUNT ON; DECLARE @i INT = 0, @s BIGINT = 0, @a INT; \
                 WHILE @i < {LOOKUPS} BEGIN \
                 SELECT @a = amount FROM orders WHERE order_id = (@i * 7919) % {n} + 1; \
                 SET @s += @a; SET @i += 1; END; SELECT @s;"
            ),
            // SQLite runs the loop as prepared statement executions instead.
            sqlite: String::new(),
            postgres: format!(
                "DO $$ DECLARE s BIGINT := 0; a INT; BEGIN \
                 FOR i IN 0..{} LOOP \
                 SELECT amount INTO a FROM orders WHERE order_id = (i * 7919) % {n} + 1; \
                 s := s + a; END LOOP; RAISE NOTICE '%', s; END $$",
                LOOKUPS - 1
            ),
        },
        same(
            "pk_range_between",
            Kind::Statement,
            format!(
                "SELECT order_id, customer_id, amount FROM orders \
                 WHERE order_id BETWEEN {range_lo} AND {range_hi}"
            ),
        ),
        same(
            "pk_prefix_seek",
            Kind::Statement,
            format!(
                "SELECT line_no, item_id, qty FROM order_lines WHERE order_id = {prefix_order}"
            ),
        ),
        same(
            "nc_index_seek",
            Kind::Statement,
            format!("SELECT order_id, amount FROM orders WHERE customer_id = {customer}"),
        ),
        Query {
            name: "top_n_order_by".into(),
            kind: Kind::Statement,
            tsql: "SELECT TOP 10 order_id, customer_id FROM orders \
                   ORDER BY order_date DESC, order_id DESC"
                .into(),
            sqlite: limit.clone(),
            postgres: limit,
        },
        same(
            "scan_group_by",
            Kind::Statement,
            "SELECT status, COUNT(*), SUM(CAST(amount AS BIGINT)) FROM orders GROUP BY status"
                .into(),
        ),
        same(
            "join2_on",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id, o.amount FROM customers c \
                 JOIN orders o ON o.customer_id = c.id WHERE c.city = {city}"
            ),
        ),
        same(
            "join2_comma",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id, o.amount FROM customers c, orders o \
                 WHERE o.customer_id = c.id AND c.city = {city}"
            ),
        ),
        same(
            "join3_on",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id, l.line_no, l.item_id FROM {joins3} \
                 WHERE c.city = {city}"
            ),
        ),
        same(
            "join3_comma",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id, l.line_no, l.item_id \
                 FROM customers c, orders o, order_lines l \
                 WHERE o.customer_id = c.id AND l.order_id = o.order_id AND c.city = {city}"
            ),
        ),
        same(
            "join4_on",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id, l.line_no, i.price FROM {joins3} \
                 JOIN items i ON i.item_id = l.item_id WHERE c.city = {city} AND i.price > 5000"
            ),
        ),
        same(
            "join4_comma",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id, l.line_no, i.price \
                 FROM customers c, orders o, order_lines l, items i \
                 WHERE o.customer_id = c.id AND l.order_id = o.order_id \
                 AND i.item_id = l.item_id AND c.city = {city} AND i.price > 5000"
            ),
        ),
        same(
            "join5_on",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id, l.line_no, k.name FROM {joins3} \
                 JOIN items i ON i.item_id = l.item_id \
                 JOIN categories k ON k.category_id = i.category_id \
                 WHERE c.city = {city} AND k.category_id <= {category_limit}"
            ),
        ),
        same(
            "join5_comma",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id, l.line_no, k.name \
                 FROM customers c, orders o, order_lines l, items i, categories k \
                 WHERE o.customer_id = c.id AND l.order_id = o.order_id \
                 AND i.item_id = l.item_id AND k.category_id = i.category_id \
                 AND c.city = {city} AND k.category_id <= {category_limit}"
            ),
        ),
        same(
            "left_outer_join",
            Kind::Statement,
            format!(
                "SELECT c.id, o.order_id FROM customers c \
                 LEFT JOIN orders o ON o.customer_id = c.id AND o.status = 3 \
                 WHERE c.city = {city}"
            ),
        ),
        same(
            "exists_semi",
            Kind::Statement,
            format!(
                "SELECT c.id FROM customers c WHERE c.city = {city} AND EXISTS \
                 (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.amount > 90000)"
            ),
        ),
        same(
            "not_exists_anti",
            Kind::Statement,
            "SELECT c.id FROM customers c WHERE NOT EXISTS \
             (SELECT 1 FROM orders o WHERE o.customer_id = c.id)"
                .into(),
        ),
        same(
            "in_subquery",
            Kind::Statement,
            format!(
                "SELECT i.item_id, i.price FROM items i WHERE i.item_id IN \
                 (SELECT l.item_id FROM order_lines l WHERE l.order_id BETWEEN {in_lo} AND {in_hi})"
            ),
        ),
        same(
            "not_in_subquery",
            Kind::Statement,
            "SELECT c.id FROM customers c WHERE c.id NOT IN (SELECT o.customer_id FROM orders o)"
                .into(),
        ),
        same(
            "correlated_scalar",
            Kind::Statement,
            format!(
                "SELECT c.id, (SELECT COUNT(*) FROM orders o WHERE o.customer_id = c.id) \
                 FROM customers c WHERE c.city = {city}"
            ),
        ),
        same(
            "distinct",
            Kind::Statement,
            "SELECT DISTINCT customer_id, status FROM orders WHERE amount > 50000".into(),
        ),
        same(
            "count_star_join",
            Kind::Statement,
            "SELECT COUNT(*) FROM orders o JOIN order_lines l ON l.order_id = o.order_id \
             WHERE o.status = 1"
                .into(),
        ),
    ]
}

/// An order-independent checksum of result rows: the wrapping sum of each row's FNV-1a hash
/// over its values' text (NULL spelled apart from any text), so engines that return the same
/// rows in different orders agree. Numbers are hashed as whole cents (see [`cents`]): the
/// engines write the same DECIMAL with different scales (`0.050000`, `0.05`), and SQLite
/// computes with floating point.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub rows: u64,
    pub checksum: u64,
}

impl Answer {
    /// Adds a row given as its values' canonical text (`None` for NULL).
    pub fn add<'a>(&mut self, values: impl Iterator<Item = Option<&'a str>>) {
        let mut h: u64 = 0xCBF2_9CE4_8422_2325;
        let mut feed = |bytes: &[u8]| {
            for b in bytes {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0000_0100_0000_01B3);
            }
        };
        for v in values {
            match v {
                Some(text) => {
                    feed(b"v");
                    match number(text) {
                        Some(n) => feed(cents(n).to_string().as_bytes()),
                        None => feed(text.as_bytes()),
                    }
                }
                None => feed(b"n"),
            }
            feed(&[0x1F]);
        }
        self.rows += 1;
        self.checksum = self.checksum.wrapping_add(h);
    }
}

/// `text` as a number, if it is written as one (digits, an optional sign and decimal point):
/// not `inf` or `1e5`, which no engine writes for these queries' numbers but a string might
/// hold.
fn number(text: &str) -> Option<f64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && digits.bytes().filter(|&b| b == b'.').count() <= 1
        && digits.bytes().any(|b| b.is_ascii_digit());
    if plain {
        text.parse().ok()
    } else {
        None
    }
}

/// `n` rounded to whole cents, with the halfway point moved a little off the decimal grid:
/// an exact DECIMAL of 319564.2750 and SQLite's 319564.27499999997 for the same sum would
/// round apart at .xx5, but both lie well below .xx5 + 0.0000037.
fn cents(n: f64) -> i64 {
    let cents = (n.abs() * 100.0 - 0.000_37).round().max(0.0);
    (cents * n.signum()) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(rows: &[&[Option<&str>]]) -> Answer {
        let mut a = Answer::default();
        for row in rows {
            a.add(row.iter().copied());
        }
        a
    }

    #[test]
    fn answers_ignore_row_order_decimal_scale_and_float_noise() {
        let a = answer(&[&[Some("1"), Some("0.050000")], &[Some("2"), None]]);
        let b = answer(&[&[Some("2"), None], &[Some("1"), Some("0.05")]]);
        assert_eq!(a, b);
        assert_eq!(answer(&[&[Some("319564.2750")]]), answer(&[&[Some("319564.27499999997")]]));
        assert_eq!(answer(&[&[Some("-0.001")]]), answer(&[&[Some("0")]]));
        assert_ne!(answer(&[&[Some("1")]]), answer(&[&[Some("2")]]));
        assert_ne!(answer(&[&[None]]), answer(&[&[Some("")]]));
        // Text that only looks numeric in part stays text.
        assert_ne!(answer(&[&[Some("12-34")]]), answer(&[&[Some("1234")]]));
    }

    #[test]
    fn the_data_is_the_same_for_the_same_seed() {
        let a = generate(0.001, 7);
        let b = generate(0.001, 7);
        let text =
            |d: &Dataset| format!("{:?}", d.tables.iter().map(|t| &t.rows).collect::<Vec<_>>());
        assert_eq!(text(&a), text(&b));
        assert_eq!(a.lines as usize, a.tables[4].rows.len());
    }
}
