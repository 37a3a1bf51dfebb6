//! TPC-C's schema and initial population (specification, clauses 1.3 and 4.3.3.1), as SQL
//! text valid in both T-SQL and PostgreSQL: the same generator with the same seed gives both
//! engines the same rows.
//!
//! Rows are loaded as multi-row `INSERT ... VALUES` statements of [`ROWS_PER_INSERT`] rows
//! (SQL Server's limit is 1,000), a few of them per explicit transaction, so that a load is
//! a few hundred round trips and commits, not a million.

use std::fmt::Write as _;

use super::super::Rng;
use super::keys::{last_name, Keys};
use super::Dialect;

/// Rows of one `INSERT ... VALUES`.
const ROWS_PER_INSERT: usize = 1000;
/// `INSERT`s per transaction (and round trip).
const INSERTS_PER_BATCH: usize = 4;

/// The `CREATE TABLE` and `CREATE INDEX` statements, with the specification's primary keys
/// and the two usual secondary indexes (customers by last name for Payment and
/// Order-Status, a customer's orders for Order-Status).
pub fn schema(dialect: Dialect) -> Vec<String> {
    let ts = match dialect {
        Dialect::TSql => "DATETIME",
        Dialect::Postgres => "TIMESTAMP",
    };
    let address = |p: &str| {
        format!(
            "{p}_street_1 VARCHAR(20) NOT NULL, {p}_street_2 VARCHAR(20) NOT NULL, \
             {p}_city VARCHAR(20) NOT NULL, {p}_state CHAR(2) NOT NULL, {p}_zip CHAR(9) NOT NULL"
        )
    };
    let dists: String = (1..=10).map(|d| format!("s_dist_{d:02} CHAR(24) NOT NULL, ")).collect();
    vec![
        format!(
            "CREATE TABLE warehouse (w_id INT NOT NULL, w_name VARCHAR(10) NOT NULL, {}, \
             w_tax DECIMAL(4,4) NOT NULL, w_ytd DECIMAL(12,2) NOT NULL, PRIMARY KEY (w_id))",
            address("w")
        ),
        format!(
            "CREATE TABLE district (d_id INT NOT NULL, d_w_id INT NOT NULL, \
             d_name VARCHAR(10) NOT NULL, {}, d_tax DECIMAL(4,4) NOT NULL, \
             d_ytd DECIMAL(12,2) NOT NULL, d_next_o_id INT NOT NULL, PRIMARY KEY (d_w_id, d_id))",
            address("d")
        ),
        format!(
            "CREATE TABLE customer (c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, \
             c_first VARCHAR(16) NOT NULL, c_middle CHAR(2) NOT NULL, c_last VARCHAR(16) NOT NULL, \
             {}, c_phone CHAR(16) NOT NULL, c_since {ts} NOT NULL, c_credit CHAR(2) NOT NULL, \
             c_credit_lim DECIMAL(12,2) NOT NULL, c_discount DECIMAL(4,4) NOT NULL, \
             c_balance DECIMAL(12,2) NOT NULL, c_ytd_payment DECIMAL(12,2) NOT NULL, \
             c_payment_cnt INT NOT NULL, c_delivery_cnt INT NOT NULL, \
             c_data VARCHAR(500) NOT NULL, PRIMARY KEY (c_w_id, c_d_id, c_id))",
            address("c")
        ),
        "CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)".into(),
        // No primary key: the specification gives history none.
        format!(
            "CREATE TABLE history (h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT NOT NULL, \
             h_w_id INT NOT NULL, h_date {ts} NOT NULL, h_amount DECIMAL(6,2) NOT NULL, \
             h_data VARCHAR(24) NOT NULL)"
        ),
        "CREATE TABLE new_order (no_o_id INT NOT NULL, no_d_id INT NOT NULL, \
         no_w_id INT NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id))"
            .into(),
        format!(
            "CREATE TABLE orders (o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, \
             o_c_id INT NOT NULL, o_entry_d {ts} NOT NULL, o_carrier_id INT, \
             o_ol_cnt INT NOT NULL, o_all_local INT NOT NULL, PRIMARY KEY (o_w_id, o_d_id, o_id))"
        ),
        "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)".into(),
        format!(
            "CREATE TABLE order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, \
             ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT NOT NULL, \
             ol_supply_w_id INT NOT NULL, ol_delivery_d {ts}, ol_quantity INT NOT NULL, \
             ol_amount DECIMAL(6,2) NOT NULL, ol_dist_info CHAR(24) NOT NULL, \
             PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))"
        ),
        "CREATE TABLE item (i_id INT NOT NULL, i_im_id INT NOT NULL, i_name VARCHAR(24) NOT NULL, \
         i_price DECIMAL(5,2) NOT NULL, i_data VARCHAR(50) NOT NULL, PRIMARY KEY (i_id))"
            .into(),
        format!(
            "CREATE TABLE stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, \
             s_quantity INT NOT NULL, {dists}s_ytd INT NOT NULL, s_order_cnt INT NOT NULL, \
             s_remote_cnt INT NOT NULL, s_data VARCHAR(50) NOT NULL, \
             PRIMARY KEY (s_w_id, s_i_id))"
        ),
    ]
}

/// Collects rows into `INSERT` statements and those into transactions, handing each
/// finished transaction's text to a sink.
struct Batcher<'a> {
    dialect: Dialect,
    sink: &'a mut dyn FnMut(&str) -> Result<(), String>,
    /// The open transaction's INSERTs.
    inserts: Vec<String>,
    /// The open INSERT: its table's prefix and rows so far.
    current: String,
    table: &'static str,
    rows: usize,
    /// Rows handed over so far.
    pub total: u64,
}

impl Batcher<'_> {
    fn row(&mut self, table: &'static str, values: &str) -> Result<(), String> {
        if self.table != table || self.rows == ROWS_PER_INSERT {
            self.close_insert()?;
            self.table = table;
            let _ = write!(self.current, "INSERT INTO {table} VALUES ");
        } else {
            self.current.push(',');
        }
        self.current.push('(');
        self.current.push_str(values);
        self.current.push(')');
        self.rows += 1;
        self.total += 1;
        Ok(())
    }

    fn close_insert(&mut self) -> Result<(), String> {
        if self.rows > 0 {
            self.inserts.push(std::mem::take(&mut self.current));
            self.rows = 0;
        }
        self.current.clear();
        if self.inserts.len() == INSERTS_PER_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.inserts.is_empty() {
            return Ok(());
        }
        let (begin, commit) = match self.dialect {
            Dialect::TSql => ("BEGIN TRAN;\n", "COMMIT TRAN;"),
            Dialect::Postgres => ("BEGIN;\n", "COMMIT;"),
        };
        let mut text = String::from(begin);
        for insert in self.inserts.drain(..) {
            text.push_str(&insert);
            text.push_str(";\n");
        }
        text.push_str(commit);
        (self.sink)(&text)
    }

    fn finish(&mut self) -> Result<(), String> {
        self.close_insert()?;
        self.flush()
    }
}

/// A random alphanumeric string (the specification's a-string) of `lo..=hi` characters.
fn a_string(rng: &mut Rng, lo: u32, hi: u32) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let len = rng.range(lo, hi);
    (0..len).map(|_| CHARS[rng.range(0, CHARS.len() as u32 - 1) as usize] as char).collect()
}

/// A random numeric string (n-string) of `len` digits.
fn n_string(rng: &mut Rng, len: u32) -> String {
    (0..len).map(|_| char::from(b'0' + rng.range(0, 9) as u8)).collect()
}

/// An i_data or s_data: 26 to 50 characters, 10% of them with "ORIGINAL" somewhere.
fn data_with_original(rng: &mut Rng) -> String {
    let mut data = a_string(rng, 26, 50);
    if rng.range(1, 10) == 1 {
        let at = rng.range(0, data.len() as u32 - 8) as usize;
        data.replace_range(at..at + 8, "ORIGINAL");
    }
    data
}

/// A text literal (the generator makes no quotes, but a literal is escaped all the same).
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// An amount in cents as a decimal literal.
fn money(cents: u32) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A tax or discount in ten-thousandths as a decimal literal.
fn rate(ten_thousandths: u32) -> String {
    format!("0.{ten_thousandths:04}")
}

fn address(rng: &mut Rng) -> String {
    format!(
        "{}, {}, {}, {}, {}",
        lit(&a_string(rng, 10, 20)),
        lit(&a_string(rng, 10, 20)),
        lit(&a_string(rng, 10, 20)),
        lit(&a_string(rng, 2, 2).to_uppercase()),
        lit(&format!("{}11111", n_string(rng, 4)))
    )
}

/// Generates the initial database of `warehouses` warehouses and hands it to `sink` as
/// transactions of INSERTs; the number of rows.
pub fn populate(
    dialect: Dialect,
    keys: &Keys,
    warehouses: u32,
    seed: u64,
    sink: &mut dyn FnMut(&str) -> Result<(), String>,
) -> Result<u64, String> {
    let mut rng = Rng(seed);
    let mut out = Batcher {
        dialect,
        sink,
        inserts: Vec::new(),
        current: String::new(),
        table: "",
        rows: 0,
        total: 0,
    };
    let now = "CURRENT_TIMESTAMP";
    for i in 1..=keys.items {
        let row = format!(
            "{i}, {}, {}, {}, {}",
            rng.range(1, 10_000),
            lit(&a_string(&mut rng, 14, 24)),
            money(rng.range(100, 10_000)),
            lit(&data_with_original(&mut rng))
        );
        out.row("item", &row)?;
    }
    let customers = keys.customers;
    // Orders below this id were delivered at load time; those from it on are new orders
    // (2,101 of 3,000 in the specification).
    let undelivered = customers * 7 / 10 + 1;
    for w in 1..=warehouses {
        let row = format!(
            "{w}, {}, {}, {}, 300000.00",
            lit(&a_string(&mut rng, 6, 10)),
            address(&mut rng),
            rate(rng.range(0, 2000))
        );
        out.row("warehouse", &row)?;
        for i in 1..=keys.items {
            let mut row = format!("{i}, {w}, {}", rng.range(10, 100));
            for _ in 0..10 {
                let _ = write!(row, ", {}", lit(&a_string(&mut rng, 24, 24)));
            }
            let _ = write!(row, ", 0, 0, 0, {}", lit(&data_with_original(&mut rng)));
            out.row("stock", &row)?;
        }
        for d in 1..=10 {
            let row = format!(
                "{d}, {w}, {}, {}, {}, 30000.00, {}",
                lit(&a_string(&mut rng, 6, 10)),
                address(&mut rng),
                rate(rng.range(0, 2000)),
                customers + 1
            );
            out.row("district", &row)?;
            for c in 1..=customers {
                // The first thousand customers take the thousand last names in order, the
                // others a non-uniform random one (clause 4.3.2.3).
                let name = if c <= 1000 { c - 1 } else { keys.nurand(&mut rng, 255, 0, 999) };
                let credit = if rng.range(1, 10) == 1 { "BC" } else { "GC" };
                let row = format!(
                    "{c}, {d}, {w}, {}, 'OE', {}, {}, {}, {now}, '{credit}', 50000.00, {}, \
                     -10.00, 10.00, 1, 0, {}",
                    lit(&a_string(&mut rng, 8, 16)),
                    lit(&last_name(name)),
                    address(&mut rng),
                    lit(&n_string(&mut rng, 16)),
                    rate(rng.range(0, 5000)),
                    lit(&a_string(&mut rng, 300, 500))
                );
                out.row("customer", &row)?;
            }
            for c in 1..=customers {
                let row = format!(
                    "{c}, {d}, {w}, {d}, {w}, {now}, 10.00, {}",
                    lit(&a_string(&mut rng, 12, 24))
                );
                out.row("history", &row)?;
            }
            // Each order's customer: a random permutation of the customers.
            let mut owners: Vec<u32> = (1..=customers).collect();
            for i in (1..owners.len()).rev() {
                owners.swap(i, rng.range(0, i as u32) as usize);
            }
            let mut lines = Vec::with_capacity(customers as usize);
            for o in 1..=customers {
                let count = rng.range(5, 15);
                let carrier =
                    if o < undelivered { rng.range(1, 10).to_string() } else { "NULL".into() };
                let row = format!(
                    "{o}, {d}, {w}, {}, {now}, {carrier}, {count}, 1",
                    owners[o as usize - 1]
                );
                out.row("orders", &row)?;
                lines.push(count);
            }
            for (o, &count) in (1..=customers).zip(&lines) {
                for n in 1..=count {
                    let (delivered, amount) = if o < undelivered {
                        (now, "0.00".to_string())
                    } else {
                        ("NULL", money(rng.range(1, 999_999)))
                    };
                    let row = format!(
                        "{o}, {d}, {w}, {n}, {}, {w}, {delivered}, 5, {amount}, {}",
                        rng.range(1, keys.items),
                        lit(&a_string(&mut rng, 24, 24))
                    );
                    out.row("order_line", &row)?;
                }
            }
            for o in undelivered..=customers {
                out.row("new_order", &format!("{o}, {d}, {w}"))?;
            }
        }
    }
    out.finish()?;
    Ok(out.total)
}
