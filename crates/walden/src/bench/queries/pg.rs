//! PostgreSQL's side of `walden bench queries`: a throwaway cluster in the run's directory
//! ([`Cluster`]), stopped at the end. Queries go through the `postgres` crate's simple query
//! protocol, which returns every value as text: the canonical text [`Answer`] checksums.

use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use postgres::error::SqlState;
use postgres::{Client, NoTls, SimpleQueryMessage};

use super::super::pg_cluster::Cluster;
use super::data::{Answer, Kind, Query, Table};
use super::Outcome;

/// A running throwaway cluster and a connection to it; dropping it stops the cluster.
pub struct Postgres {
    /// Declared before the cluster, so that it is closed before the cluster stops.
    client: Client,
    cluster: Cluster,
    /// The last NOTICE the server sent: how the lookup loop's `DO` block returns its sum.
    notice: Arc<Mutex<Option<String>>>,
    pub version: String,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres").field("cluster", &self.cluster).finish_non_exhaustive()
    }
}

impl Postgres {
    /// Starts a cluster under `dir` (which it creates), installing PostgreSQL first if needed.
    pub fn start(dir: &Path) -> Result<Postgres, String> {
        let cluster = Cluster::start(dir, &[])?;
        let notice = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&notice);
        let client = cluster
            .config()
            .notice_callback(move |n| {
                *sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(n.message().to_string());
            })
            .connect(NoTls)
            .map_err(|e| format!("connecting to PostgreSQL: {e}"))?;
        let mut pg = Postgres { client, cluster, notice, version: String::new() };
        pg.version = pg
            .client
            .query_one("SHOW server_version", &[])
            .map(|r| r.get::<_, String>(0))
            .unwrap_or_default();
        Ok(pg)
    }

    /// Creates the tables and copies the rows in, in `schema` when given (which then stays
    /// first on the search path, for the queries that follow).
    pub fn load(&mut self, tables: &[Table], schema: Option<&str>) -> Result<(), String> {
        let err = |e: postgres::Error| format!("PostgreSQL: {e}");
        if let Some(schema) = schema {
            self.client
                .batch_execute(&format!("CREATE SCHEMA {schema}; SET search_path = {schema}"))
                .map_err(err)?;
        }
        for table in tables {
            for ddl in &table.ddl {
                self.client.batch_execute(ddl).map_err(err)?;
            }
            let mut writer =
                self.client.copy_in(&format!("COPY {} FROM STDIN", table.name)).map_err(err)?;
            let mut text = String::new();
            for row in &table.rows {
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        text.push('\t');
                    }
                    text.push_str(&v.copy_text());
                }
                text.push('\n');
            }
            writer.write_all(text.as_bytes()).map_err(|e| format!("COPY {}: {e}", table.name))?;
            writer.finish().map_err(err)?;
        }
        self.client.batch_execute("VACUUM ANALYZE").map_err(err)?;
        Ok(())
    }

    /// Runs `q`, cancelled by the server after `timeout` (`statement_timeout`).
    pub fn query(&mut self, q: &Query, timeout: Duration) -> Outcome {
        let set = format!("SET statement_timeout = {}", timeout.as_millis().max(1));
        if let Err(e) = self.client.batch_execute(&set) {
            return Outcome::Failed(format!("PostgreSQL: {e}"));
        }
        *self.notice.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let start = Instant::now();
        let result = self.client.simple_query(&q.postgres);
        let took = start.elapsed();
        let messages = match result {
            Ok(m) => m,
            Err(e) if e.code() == Some(&SqlState::QUERY_CANCELED) => return Outcome::Timeout,
            Err(e) => return Outcome::Failed(format!("PostgreSQL: {e}")),
        };
        let mut answer = Answer::default();
        match q.kind {
            Kind::LookupLoop => {
                let mut notice = self.notice.lock().unwrap_or_else(|e| e.into_inner()).take();
                if notice.is_none() {
                    // A notice is handled by the connection beside the query's answer, so it
                    // may land just after it: one more round trip lets it arrive.
                    let _ = self.client.simple_query("SELECT 1");
                    notice = self.notice.lock().unwrap_or_else(|e| e.into_inner()).take();
                }
                answer.add(std::iter::once(notice.as_deref()));
            }
            Kind::Statement => {
                for m in &messages {
                    if let SimpleQueryMessage::Row(row) = m {
                        answer.add((0..row.len()).map(|i| row.get(i)));
                    }
                }
            }
        }
        Outcome::Done(answer, took)
    }
}
