//! A throwaway PostgreSQL cluster for the benchmarks that compare with PostgreSQL: created
//! in a directory of the run, on a free port of 127.0.0.1 and a socket beside its data,
//! started with the machine's PostgreSQL (installed with apt-get when there is none and we
//! are root) and stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

/// A running cluster; dropping it stops it.
#[derive(Debug)]
pub struct Cluster {
    pg_ctl: PathBuf,
    data: PathBuf,
    user: Option<&'static str>,
    /// The TCP port it listens on, on 127.0.0.1.
    pub port: u16,
}

impl Cluster {
    /// Creates and starts a cluster under `dir` (which it creates), installing PostgreSQL
    /// first if needed; `settings` are extra `-c name=value` server options.
    pub fn start(dir: &Path, settings: &[&str]) -> Result<Cluster, String> {
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
        let mut options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c shared_buffers=256MB",
            text(dir)
        );
        for setting in settings {
            options.push_str(" -c ");
            options.push_str(setting);
        }
        let pg_ctl = bin.join("pg_ctl");
        run_as(
            user,
            &pg_ctl,
            &["-D", &text(&data), "-o", &options, "-l", &text(&dir.join("log")), "-w", "start"],
        )?;
        Ok(Cluster { pg_ctl, data, user, port })
    }

    /// The CPU time the cluster's processes have used so far (the postmaster's and its live
    /// children's: backends, WAL writer, checkpointer...), in seconds; 0 when `/proc` does
    /// not say. A child that has exited no longer counts, so a difference of two readings
    /// is the work of processes that live across both (a connection's backend does).
    pub fn cpu_seconds(&self) -> f64 {
        self.pids().into_iter().map(super::serve::process_cpu_seconds).sum()
    }

    /// The postmaster's process id and its children's (the backends and the background
    /// processes); none when `postmaster.pid` cannot be read.
    pub fn pids(&self) -> Vec<u32> {
        let pid_file =
            std::fs::read_to_string(self.data.join("postmaster.pid")).unwrap_or_default();
        let Some(postmaster) = pid_file.lines().next().and_then(|l| l.trim().parse::<u32>().ok())
        else {
            return Vec::new();
        };
        let children = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| super::serve::parent_pid(pid) == Some(postmaster));
        std::iter::once(postmaster).chain(children).collect()
    }

    /// Connection settings for the `postgres` superuser and database.
    pub fn config(&self) -> postgres::Config {
        let mut config = postgres::Config::new();
        config.host("127.0.0.1").port(self.port).user("postgres").dbname("postgres");
        config
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data.to_string_lossy().into_owned();
        if let Err(e) = run_as(self.user, &self.pg_ctl, &["-D", &data, "-m", "fast", "stop"]) {
            eprintln!("stopping PostgreSQL: {e}");
        }
    }
}
