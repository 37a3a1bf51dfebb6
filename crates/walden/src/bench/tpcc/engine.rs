//! One client connection to either engine, running a transaction's text and sorting how it
//! ended: committed, rolled back as New-Order's unused item requires, a deadlock or
//! serialization failure to retry, or any other error.

use postgres::error::SqlState;
use postgres::SimpleQueryMessage;
use walden_tds::TdsValue;

use super::txn::TSQL_ROLLBACK;
use crate::client::{Client, Event};

/// How one attempt of a transaction ended.
#[derive(Debug)]
pub enum Outcome {
    Committed,
    /// The New-Order rolled back on its unused item, as it should.
    RolledBack,
    /// Chosen as a deadlock victim (1205) or failed to serialize (40001, 40P01): retried.
    Retry,
    /// Anything else; the connection is still usable.
    Error(String),
    /// The connection is gone.
    Broken(String),
}

/// A connection to Walden (TDS) or PostgreSQL.
pub enum Conn {
    Walden(Box<Client>),
    Postgres(Box<postgres::Client>),
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Conn::Walden(_) => "Conn::Walden",
            Conn::Postgres(_) => "Conn::Postgres",
        })
    }
}

impl Conn {
    /// Runs a setup statement, failing on any error.
    pub fn setup(&mut self, sql: &str) -> Result<(), String> {
        match self.run(sql) {
            Outcome::Committed => Ok(()),
            Outcome::Error(e) | Outcome::Broken(e) => Err(format!("{e}\nin:\n{sql}")),
            other => Err(format!("{other:?}\nin:\n{sql}")),
        }
    }

    /// The first row of `sql`'s result, every column a BIGINT (or NULL, read as 0).
    pub fn numbers(&mut self, sql: &str) -> Result<Vec<i64>, String> {
        match self {
            Conn::Walden(client) => {
                let result = client.batch_collect(sql).map_err(|e| e.to_string())?;
                if let Some(e) = result.errors().next() {
                    return Err(format!("Msg {}: {}\nin:\n{sql}", e.number, e.message));
                }
                let row = result.result_sets.last().and_then(|s| s.rows.first());
                row.ok_or_else(|| format!("no row from {sql}"))?
                    .iter()
                    .map(|v| match v {
                        TdsValue::BigInt(n) => Ok(*n),
                        TdsValue::Null => Ok(0),
                        other => Err(format!("expected a BIGINT from {sql}, got {other:?}")),
                    })
                    .collect()
            }
            Conn::Postgres(client) => {
                let messages = client.simple_query(sql).map_err(|e| e.to_string())?;
                let row = messages
                    .iter()
                    .find_map(|m| match m {
                        SimpleQueryMessage::Row(row) => Some(row),
                        _ => None,
                    })
                    .ok_or_else(|| format!("no row from {sql}"))?;
                (0..row.len())
                    .map(|i| {
                        row.get(i).map_or(Ok(0), |v| {
                            v.parse().map_err(|_| format!("expected a number from {sql}, got {v}"))
                        })
                    })
                    .collect()
            }
        }
    }

    /// Runs one batch (T-SQL) or simple query (PostgreSQL).
    pub fn run(&mut self, sql: &str) -> Outcome {
        match self {
            Conn::Walden(client) => {
                let mut first: Option<(i32, String)> = None;
                let sent = client.batch(sql, &mut |event| {
                    if let Event::Message(m) = event {
                        if m.class > 10 && first.is_none() {
                            first = Some((m.number, m.message));
                        }
                    }
                });
                if let Err(e) = sent {
                    return Outcome::Broken(e.to_string());
                }
                let Some((number, message)) = first else {
                    return Outcome::Committed;
                };
                // XACT_ABORT has rolled the transaction back already; this makes sure of it
                // for errors that do not doom a transaction.
                let _ = client.batch("IF @@TRANCOUNT > 0 ROLLBACK TRAN", &mut |_| {});
                match number {
                    TSQL_ROLLBACK => Outcome::RolledBack,
                    1205 => Outcome::Retry,
                    _ => Outcome::Error(format!("Msg {number}: {message}")),
                }
            }
            Conn::Postgres(client) => match client.batch_execute(sql) {
                Ok(()) => Outcome::Committed,
                Err(e) if client.is_closed() => Outcome::Broken(e.to_string()),
                Err(e) => match e.code() {
                    Some(&SqlState::T_R_SERIALIZATION_FAILURE)
                    | Some(&SqlState::T_R_DEADLOCK_DETECTED) => Outcome::Retry,
                    Some(&SqlState::RAISE_EXCEPTION) => Outcome::RolledBack,
                    _ => {
                        let text = e.as_db_error().map_or_else(
                            || e.to_string(),
                            |db| format!("{}: {}", db.code().code(), db.message()),
                        );
                        Outcome::Error(text)
                    }
                },
            },
        }
    }
}
