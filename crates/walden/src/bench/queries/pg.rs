//! PostgreSQL's side of `walden bench queries`: a throwaway cluster in the run's directory,
//! on a free port of 127.0.0.1 and a socket beside its data, started with the machine's
//! PostgreSQL (installed with apt-get when there is none and we are root) and stopped at the
//! end. Queries go through the `postgres` crate's simple query protocol, which returns every
//! value as text: the canonical text [`Answer`] checksums.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use postgres::error::SqlState;
use postgres::{Client, NoTls, SimpleQueryMessage};

use super::data::{Answer, Kind, Query, Table};
use super::Outcome;

/// Whether this process runs as root (initdb refuses to, so the cluster then runs as the
/// `postgres` user).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A directory holding `initdb` and `pg_ctl`: Debian's versioned directories first (the
/// highest version), then `PATH`.
fn find_bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse().ok()?;
            Some((version, e.path().join("bin")))
        })
        .collect();
    versions.sort();
    let path = std::env::var_os("PATH").unwrap_or_default();
    versions
        .into_iter()
        .rev()
        .map(|(_, dir)| dir)
        .chain(std::env::split_paths(&path))
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
}

fn apt_install() -> bool {
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "postgresql"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if install() {
        return true;
    }
    // An install fails on a machine whose package lists were never fetched.
    let _ = Command::new("apt-get").arg("update").stdout(Stdio::null()).status();
    install()
}

/// Runs a PostgreSQL program, as `user` when given.
fn run_as(user: Option<&str>, program: &Path, args: &[&str]) -> Result<(), String> {
    let mut cmd = match user {
        Some(user) => {
            let mut c = Command::new("runuser");
            c.args(["-u", user, "--"]).arg(program);
            c
        }
        None => Command::new(program),
    };
    let output = cmd.args(args).output().map_err(|e| format!("{}: {e}", program.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} {}: {}\n{}",
            program.display(),
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// A running throwaway cluster and a connection to it; dropping it stops the cluster.
pub struct Postgres {
    client: Client,
    pg_ctl: PathBuf,
    data: PathBuf,
    user: Option<&'static str>,
    /// The last NOTICE the server sent: how the lookup loop's `DO` block returns its sum.
    notice: Arc<Mutex<Option<String>>>,
    pub version: String,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres").field("data", &self.data).finish_non_exhaustive()
    }
}

impl Postgres {
    /// Starts a cluster under `dir` (which it creates), installing PostgreSQL first if needed.
    pub fn start(dir: &Path) -> Result<Postgres, String> {
        let root = is_root();
        let bin = match find_bin_dir() {
            Some(bin) => bin,
            None if root => {
                eprintln!("PostgreSQL not found: installing it with apt-get");
                if !apt_install() {
                    return Err("apt-get install -y postgresql failed".into());
                }
                find_bin_dir().ok_or("no initdb/pg_ctl after installing postgresql")?
            }
            None => {
                return Err("no PostgreSQL (initdb, pg_ctl) found, and not root to install it; \
                                use --no-postgres"
                    .into())
            }
        };
        let user = if root { Some("postgres") } else { None };
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if let Some(user) = user {
            // The cluster's directory must belong to the user that runs it; the run's
            // directory above it must be reachable by that user.
            let status = Command::new("chown").args(["-R", user]).arg(dir).status();
            if !status.is_ok_and(|s| s.success()) {
                return Err(format!("chown {user} {}", dir.display()));
            }
            if let Some(parent) = dir.parent() {
                let _ = Command::new("chmod").arg("755").arg(parent).status();
            }
        }
        let data = dir.join("data");
        let text = |p: &Path| p.to_string_lossy().into_owned();
        run_as(
            user,
            &bin.join("initdb"),
            &["-D", &text(&data), "-U", "postgres", "--auth=trust", "--locale=C", "-E", "UTF8"],
        )?;
        // A free port: the kernel picks one for a listener we close at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("finding a free port: {e}"))?
            .port();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c shared_buffers=256MB",
            text(dir)
        );
        let pg_ctl = bin.join("pg_ctl");
        run_as(
            user,
            &pg_ctl,
            &["-D", &text(&data), "-o", &options, "-l", &text(&dir.join("log")), "-w", "start"],
        )?;
        let notice = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&notice);
        let connected = postgres::Config::new()
            .host("127.0.0.1")
            .port(port)
            .user("postgres")
            .dbname("postgres")
            .notice_callback(move |n| {
                *sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(n.message().to_string());
            })
            .connect(NoTls);
        let mut pg = match connected {
            Ok(client) => Postgres { client, pg_ctl, data, user, notice, version: String::new() },
            Err(e) => {
                let _ = run_as(user, &pg_ctl, &["-D", &text(&data), "-m", "immediate", "stop"]);
                return Err(format!("connecting to PostgreSQL: {e}"));
            }
        };
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

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data.to_string_lossy().into_owned();
        if let Err(e) = run_as(self.user, &self.pg_ctl, &["-D", &data, "-m", "fast", "stop"]) {
            eprintln!("stopping PostgreSQL: {e}");
        }
    }
}
