//! SQLite's side of `walden bench queries`: in-process, in a file in the run's directory.

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode};

use super::data::{insert_statements, lookup_key, Answer, Kind, Query, Table, LOOKUPS};
use super::Outcome;

/// The SQLite database of a run.
#[derive(Debug)]
pub struct Sqlite {
    conn: Connection,
    orders: u32,
}

fn err(e: rusqlite::Error) -> String {
    format!("SQLite: {e}")
}

impl Sqlite {
    /// Creates `path` and loads `tables` into it; `orders` is the lookup loop's key range.
    pub fn load(path: &Path, tables: &[Table], orders: u32) -> Result<Sqlite, String> {
        let conn = Connection::open(path).map_err(err)?;
        // A page cache that holds the whole database (its default is 2 MB), as Walden's and
        // PostgreSQL's buffers do, so reads are not measured through the file system.
        conn.execute_batch("PRAGMA cache_size = -262144;").map_err(err)?;
        conn.execute_batch("BEGIN").map_err(err)?;
        for table in tables {
            for ddl in &table.ddl {
                conn.execute_batch(ddl).map_err(err)?;
            }
            for insert in insert_statements(table) {
                conn.execute_batch(&insert).map_err(err)?;
            }
        }
        conn.execute_batch("COMMIT; ANALYZE;").map_err(err)?;
        Ok(Sqlite { conn, orders })
    }

    /// Runs `q`, interrupted after `timeout`.
    pub fn query(&mut self, q: &Query, timeout: Duration) -> Outcome {
        let handle = self.conn.get_interrupt_handle();
        let (done, wait) = mpsc::channel::<()>();
        // Interrupts the query if it is still running at the deadline; the query's end (the
        // sender dropped) ends the wait early.
        let watchdog = std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(timeout) {
                handle.interrupt();
            }
        });
        let start = Instant::now();
        let result = match q.kind {
            Kind::LookupLoop => self.lookup_loop(),
            Kind::Statement => self.statement(&q.sqlite),
        };
        let took = start.elapsed();
        drop(done);
        let _ = watchdog.join();
        match result {
            Ok(answer) => Outcome::Done(answer, took),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == ErrorCode::OperationInterrupted =>
            {
                Outcome::Timeout
            }
            Err(e) => Outcome::Failed(err(e)),
        }
    }

    /// The lookup loop as prepared statement executions, one per key.
    fn lookup_loop(&self) -> Result<Answer, rusqlite::Error> {
        let mut stmt = self.conn.prepare_cached("SELECT amount FROM orders WHERE order_id = ?1")?;
        let mut sum: i64 = 0;
        for i in 0..LOOKUPS {
            let amount: i64 = stmt.query_row([lookup_key(i, self.orders)], |r| r.get(0))?;
            sum += amount;
        }
        let mut answer = Answer::default();
        answer.add(std::iter::once(Some(sum.to_string().as_str())));
        Ok(answer)
    }

    fn statement(&self, sql: &str) -> Result<Answer, rusqlite::Error> {
        let mut stmt = self.conn.prepare(sql)?;
        let width = stmt.column_count();
        let mut rows = stmt.query([])?;
        let mut answer = Answer::default();
        let mut texts: Vec<Option<String>> = Vec::with_capacity(width);
        while let Some(row) = rows.next()? {
            texts.clear();
            for i in 0..width {
                texts.push(match row.get_ref(i)? {
                    ValueRef::Null => None,
                    ValueRef::Integer(v) => Some(v.to_string()),
                    ValueRef::Real(v) => Some(v.to_string()),
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        Some(String::from_utf8_lossy(t).into_owned())
                    }
                });
            }
            answer.add(texts.iter().map(Option::as_deref));
        }
        Ok(answer)
    }
}
