//! The five transactions' SQL (clauses 2.4 to 2.8), each one batch and one round trip: in
//! T-SQL a `BEGIN TRAN ... COMMIT TRAN` script with variables (sessions run with
//! `XACT_ABORT ON`, so that any error rolls the transaction back and ends the batch), in
//! PostgreSQL the same statements in a PL/pgSQL `DO` block, which runs as one transaction.
//!
//! The project's TDS client sends SQL batches only (no RPC parameters), so inputs are
//! inlined as literals; every text literal goes through [`lit`]. Rows a row lock must guard
//! are written before they are read (the district's next order id, a stock row, a
//! customer), so the statements need no `UPDLOCK` or `FOR UPDATE` and are the same in both
//! dialects (Walden accepts `WITH (UPDLOCK)` but, today, a SELECT with it leaves no update
//! lock held, so two New-Orders reading the district first would take the same order id). A New-Order that meets an unused item rolls back and raises an error the client
//! recognizes: 50001 in T-SQL, P0001 (`RAISE EXCEPTION`) in PostgreSQL. Rows the
//! specification has the terminal display are read into variables in both (PostgreSQL's
//! `DO` cannot return rows), except Order-Status's order lines, which T-SQL returns and
//! PL/pgSQL reads with `PERFORM`.

use std::fmt::Write as _;

use super::keys::{Customer, Input};
use super::Dialect;

/// The error number T-SQL's New-Order throws for an unused item.
pub const TSQL_ROLLBACK: i32 = 50001;

/// A text literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn money(cents: u32) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// The statements that set `c_id` (the variable `{v}c_id`) for a customer named by id or
/// by last name: for a name, the one in the middle of those with it, ordered by first name
/// (clause 2.5.2.2).
fn find_customer(dialect: Dialect, w: u32, d: u32, customer: &Customer) -> String {
    let (name, id) = match customer {
        Customer::ById(id) => (None, *id),
        Customer::ByName(name) => (Some(lit(name)), 0),
    };
    match (dialect, name) {
        (Dialect::TSql, None) => format!("SET @c_id = {id};\n"),
        (Dialect::Postgres, None) => format!("v_c_id := {id};\n"),
        (Dialect::TSql, Some(name)) => format!(
            "SELECT @n = COUNT(*) FROM customer \
             WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = {name};\n\
             SELECT @c_id = c_id FROM customer \
             WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = {name} \
             ORDER BY c_first OFFSET (@n - 1) / 2 ROWS FETCH NEXT 1 ROWS ONLY;\n"
        ),
        (Dialect::Postgres, Some(name)) => format!(
            "SELECT COUNT(*) INTO v_n FROM customer \
             WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = {name};\n\
             SELECT c_id INTO v_c_id FROM customer \
             WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = {name} \
             ORDER BY c_first OFFSET (v_n - 1) / 2 LIMIT 1;\n"
        ),
    }
}

/// Wraps a transaction's statements: T-SQL's variables are declared (with `@`) and the
/// body runs in `BEGIN TRAN ... COMMIT TRAN`; PostgreSQL's are declared (with `v_`) in a
/// `DO` block. `vars` are `name type` pairs in T-SQL's types.
fn wrap(dialect: Dialect, vars: &[(&str, &str)], body: &str) -> String {
    match dialect {
        Dialect::TSql => {
            let decls: Vec<String> = vars.iter().map(|(n, t)| format!("@{n} {t}")).collect();
            format!("DECLARE {};\nBEGIN TRAN;\n{body}COMMIT TRAN;", decls.join(", "))
        }
        Dialect::Postgres => {
            let mut text = String::from("DO $tpcc$\nDECLARE\n");
            for (n, t) in vars {
                let t = match *t {
                    "DATETIME" => "TIMESTAMP",
                    t => t,
                };
                let _ = writeln!(text, "v_{n} {t};");
            }
            let _ = write!(text, "BEGIN\n{body}END\n$tpcc$");
            text
        }
    }
}

/// A variable's name in the dialect.
fn var(dialect: Dialect, name: &str) -> String {
    match dialect {
        Dialect::TSql => format!("@{name}"),
        Dialect::Postgres => format!("v_{name}"),
    }
}

/// `SELECT cols INTO vars FROM rest` in the dialect; `pairs` are (variable, expression).
fn select_into(dialect: Dialect, pairs: &[(&str, &str)], rest: &str) -> String {
    match dialect {
        Dialect::TSql => {
            let list: Vec<String> = pairs.iter().map(|(v, e)| format!("@{v} = {e}")).collect();
            format!("SELECT {} {rest};\n", list.join(", "))
        }
        Dialect::Postgres => {
            let exprs: Vec<&str> = pairs.iter().map(|(_, e)| *e).collect();
            let vars: Vec<String> = pairs.iter().map(|(v, _)| format!("v_{v}")).collect();
            format!("SELECT {} INTO {} {rest};\n", exprs.join(", "), vars.join(", "))
        }
    }
}

/// `SET v = expr` in the dialect.
fn set(dialect: Dialect, name: &str, expr: &str) -> String {
    match dialect {
        Dialect::TSql => format!("SET @{name} = {expr};\n"),
        Dialect::Postgres => format!("v_{name} := {expr};\n"),
    }
}

/// The transaction's text in the dialect.
pub fn text(dialect: Dialect, input: &Input) -> String {
    let t = dialect == Dialect::TSql;
    match input {
        Input::NewOrder { w, d, c, lines } => {
            let all_local = u8::from(lines.iter().all(|l| l.supply == *w));
            let (o_id, price) = (var(dialect, "o_id"), var(dialect, "i_price"));
            let mut body = String::new();
            body += &select_into(
                dialect,
                &[("w_tax", "w_tax")],
                &format!("FROM warehouse WHERE w_id = {w}"),
            );
            let _ = writeln!(
                body,
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = {w} AND d_id = {d};"
            );
            body += &select_into(
                dialect,
                &[("d_tax", "d_tax"), ("o_id", "d_next_o_id - 1")],
                &format!("FROM district WHERE d_w_id = {w} AND d_id = {d}"),
            );
            body += &select_into(
                dialect,
                &[("c_discount", "c_discount"), ("c_last", "c_last"), ("c_credit", "c_credit")],
                &format!("FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c}"),
            );
            let _ = writeln!(
                body,
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, \
                 o_ol_cnt, o_all_local) VALUES ({o_id}, {d}, {w}, {c}, CURRENT_TIMESTAMP, NULL, \
                 {}, {all_local});",
                lines.len()
            );
            let _ = writeln!(
                body,
                "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ({o_id}, {d}, {w});"
            );
            body += &set(dialect, "total", "0");
            for (n, line) in lines.iter().enumerate() {
                let (i, s, q) = (line.item, line.supply, line.quantity);
                body += &select_into(
                    dialect,
                    &[("i_price", "i_price"), ("i_name", "i_name"), ("i_data", "i_data")],
                    &format!("FROM item WHERE i_id = {i}"),
                );
                body += if t {
                    "IF @@ROWCOUNT = 0 BEGIN ROLLBACK TRAN; \
                     THROW 50001, 'Item number is not valid', 1; END;\n"
                } else {
                    "IF NOT FOUND THEN RAISE EXCEPTION 'Item number is not valid'; END IF;\n"
                };
                let remote = u8::from(s != *w);
                let _ = writeln!(
                    body,
                    "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= {q} + 10 \
                     THEN s_quantity - {q} ELSE s_quantity - {q} + 91 END, \
                     s_ytd = s_ytd + {q}, s_order_cnt = s_order_cnt + 1, \
                     s_remote_cnt = s_remote_cnt + {remote} WHERE s_w_id = {s} AND s_i_id = {i};"
                );
                body += &select_into(
                    dialect,
                    &[("s_dist", &format!("s_dist_{d:02}")), ("s_data", "s_data")],
                    &format!("FROM stock WHERE s_w_id = {s} AND s_i_id = {i}"),
                );
                let _ = writeln!(
                    body,
                    "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, \
                     ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) \
                     VALUES ({o_id}, {d}, {w}, {}, {i}, {s}, NULL, {q}, {q} * {price}, {});",
                    n + 1,
                    var(dialect, "s_dist")
                );
                body +=
                    &set(dialect, "total", &format!("{} + {q} * {price}", var(dialect, "total")));
            }
            body += &set(
                dialect,
                "total",
                &format!(
                    "{} * (1 - {}) * (1 + {} + {})",
                    var(dialect, "total"),
                    var(dialect, "c_discount"),
                    var(dialect, "w_tax"),
                    var(dialect, "d_tax")
                ),
            );
            wrap(
                dialect,
                &[
                    ("w_tax", "DECIMAL(4,4)"),
                    ("d_tax", "DECIMAL(4,4)"),
                    ("o_id", "INT"),
                    ("c_discount", "DECIMAL(4,4)"),
                    ("c_last", "VARCHAR(16)"),
                    ("c_credit", "CHAR(2)"),
                    ("i_price", "DECIMAL(5,2)"),
                    ("i_name", "VARCHAR(24)"),
                    ("i_data", "VARCHAR(50)"),
                    ("s_dist", "CHAR(24)"),
                    ("s_data", "VARCHAR(50)"),
                    ("total", "DECIMAL(12,2)"),
                ],
                &body,
            )
        }
        Input::Payment { w, d, c_w, c_d, customer, cents } => {
            let amount = money(*cents);
            let c_id = var(dialect, "c_id");
            let mut body = String::new();
            let _ =
                writeln!(body, "UPDATE warehouse SET w_ytd = w_ytd + {amount} WHERE w_id = {w};");
            body += &select_into(
                dialect,
                &[("w_name", "w_name"), ("w_city", "w_city")],
                &format!("FROM warehouse WHERE w_id = {w}"),
            );
            let _ = writeln!(
                body,
                "UPDATE district SET d_ytd = d_ytd + {amount} WHERE d_w_id = {w} AND d_id = {d};"
            );
            body += &select_into(
                dialect,
                &[("d_name", "d_name"), ("d_city", "d_city")],
                &format!("FROM district WHERE d_w_id = {w} AND d_id = {d}"),
            );
            body += &find_customer(dialect, *c_w, *c_d, customer);
            let key = format!("c_w_id = {c_w} AND c_d_id = {c_d} AND c_id = {c_id}");
            let _ = writeln!(
                body,
                "UPDATE customer SET c_balance = c_balance - {amount}, \
                 c_ytd_payment = c_ytd_payment + {amount}, c_payment_cnt = c_payment_cnt + 1 \
                 WHERE {key};"
            );
            body += &select_into(
                dialect,
                &[("c_credit", "c_credit"), ("c_balance", "c_balance")],
                &format!("FROM customer WHERE {key}"),
            );
            // A customer with bad credit gets the payment's details in front of c_data, which
            // keeps its 500 characters (clause 2.5.2.2).
            let bad_credit = format!(
                "UPDATE customer SET c_data = SUBSTRING(CONCAT({c_id}, ' ', {c_d}, ' ', {c_w}, \
                 ' ', {d}, ' ', {w}, ' ', {amount}, ' | ', c_data), 1, 500) WHERE {key};"
            );
            let credit = var(dialect, "c_credit");
            if t {
                let _ = writeln!(body, "IF {credit} = 'BC' {bad_credit}");
            } else {
                let _ = writeln!(body, "IF {credit} = 'BC' THEN {bad_credit} END IF;");
            }
            let _ = writeln!(
                body,
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, \
                 h_amount, h_data) VALUES ({c_id}, {c_d}, {c_w}, {d}, {w}, CURRENT_TIMESTAMP, \
                 {amount}, CONCAT({}, '    ', {}));",
                var(dialect, "w_name"),
                var(dialect, "d_name")
            );
            wrap(
                dialect,
                &[
                    ("w_name", "VARCHAR(10)"),
                    ("w_city", "VARCHAR(20)"),
                    ("d_name", "VARCHAR(10)"),
                    ("d_city", "VARCHAR(20)"),
                    ("n", "INT"),
                    ("c_id", "INT"),
                    ("c_credit", "CHAR(2)"),
                    ("c_balance", "DECIMAL(12,2)"),
                ],
                &body,
            )
        }
        Input::OrderStatus { w, d, customer } => {
            let c_id = var(dialect, "c_id");
            let mut body = find_customer(dialect, *w, *d, customer);
            body += &select_into(
                dialect,
                &[("c_balance", "c_balance"), ("c_first", "c_first"), ("c_last", "c_last")],
                &format!("FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c_id}"),
            );
            let last_order = format!(
                "FROM orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_c_id = {c_id} \
                 ORDER BY o_id DESC"
            );
            let pairs =
                [("o_id", "o_id"), ("o_entry_d", "o_entry_d"), ("o_carrier_id", "o_carrier_id")];
            if t {
                body += &select_into(dialect, &pairs, &last_order).replacen(
                    "SELECT ",
                    "SELECT TOP 1 ",
                    1,
                );
            } else {
                body += &select_into(dialect, &pairs, &format!("{last_order} LIMIT 1"));
            }
            let lines = format!(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d \
                 FROM order_line WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {};\n",
                var(dialect, "o_id")
            );
            body += &if t { lines } else { lines.replacen("SELECT", "PERFORM", 1) };
            wrap(
                dialect,
                &[
                    ("n", "INT"),
                    ("c_id", "INT"),
                    ("c_balance", "DECIMAL(12,2)"),
                    ("c_first", "VARCHAR(16)"),
                    ("c_last", "VARCHAR(16)"),
                    ("o_id", "INT"),
                    ("o_entry_d", "DATETIME"),
                    ("o_carrier_id", "INT"),
                ],
                &body,
            )
        }
        Input::Delivery { w, carrier } => {
            // Each district's oldest new order, if any: one whose row another Delivery
            // deleted first (DELETE finds nothing) is skipped like an empty district.
            let (o_id, c_id, total) =
                (var(dialect, "o_id"), var(dialect, "c_id"), var(dialect, "total"));
            let mut body = String::new();
            for d in 1..=10 {
                body += &set(dialect, "o_id", "NULL");
                // The first key of the district's range, as the usual SQL Server kits write
                // it (TOP 1 ... ORDER BY the key), which reads one row of the index.
                body += &match dialect {
                    Dialect::TSql => format!(
                        "SELECT TOP 1 @o_id = no_o_id FROM new_order \
                         WHERE no_w_id = {w} AND no_d_id = {d} ORDER BY no_o_id;\n"
                    ),
                    Dialect::Postgres => format!(
                        "SELECT no_o_id INTO v_o_id FROM new_order \
                         WHERE no_w_id = {w} AND no_d_id = {d} ORDER BY no_o_id LIMIT 1;\n"
                    ),
                };
                let delete = format!(
                    "DELETE FROM new_order WHERE no_w_id = {w} AND no_d_id = {d} AND no_o_id = {o_id};"
                );
                let mut deliver = format!(
                    "UPDATE orders SET o_carrier_id = {carrier} \
                     WHERE o_w_id = {w} AND o_d_id = {d} AND o_id = {o_id};\n"
                );
                deliver += &select_into(
                    dialect,
                    &[("c_id", "o_c_id")],
                    &format!("FROM orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_id = {o_id}"),
                );
                let _ = writeln!(
                    deliver,
                    "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP \
                     WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o_id};"
                );
                deliver += &select_into(
                    dialect,
                    &[("total", "SUM(ol_amount)")],
                    &format!(
                        "FROM order_line WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o_id}"
                    ),
                );
                let _ = writeln!(
                    deliver,
                    "UPDATE customer SET c_balance = c_balance + {total}, \
                     c_delivery_cnt = c_delivery_cnt + 1 \
                     WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {c_id};"
                );
                if t {
                    let _ = writeln!(
                        body,
                        "IF {o_id} IS NOT NULL BEGIN\n{delete}\n\
                         IF @@ROWCOUNT > 0 BEGIN\n{deliver}END\nEND"
                    );
                } else {
                    let _ = writeln!(
                        body,
                        "IF {o_id} IS NOT NULL THEN\n{delete}\n\
                         IF FOUND THEN\n{deliver}END IF;\nEND IF;"
                    );
                }
            }
            wrap(dialect, &[("o_id", "INT"), ("c_id", "INT"), ("total", "DECIMAL(12,2)")], &body)
        }
        Input::StockLevel { w, d, threshold } => {
            let next = var(dialect, "next_o_id");
            let mut body = select_into(
                dialect,
                &[("next_o_id", "d_next_o_id")],
                &format!("FROM district WHERE d_w_id = {w} AND d_id = {d}"),
            );
            body += &select_into(
                dialect,
                &[("low_stock", "COUNT(DISTINCT s_i_id)")],
                &format!(
                    "FROM order_line, stock WHERE ol_w_id = {w} AND ol_d_id = {d} \
                     AND ol_o_id < {next} AND ol_o_id >= {next} - 20 \
                     AND s_w_id = {w} AND s_i_id = ol_i_id AND s_quantity < {threshold}"
                ),
            );
            wrap(dialect, &[("next_o_id", "INT"), ("low_stock", "INT")], &body)
        }
    }
}
