//! What the benchmarks that talk TDS to a `walden serve` share: the server as a child
//! process, a password for its `sa`, and running setup SQL through the project's client.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use walden_tds::TdsValue;

use crate::client::{BatchResult, Client};

/// `walden serve` as a child process, killed when dropped (its data directory is scratch).
#[derive(Debug)]
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Server {
    /// Starts `walden serve` on a free port of 127.0.0.1 with `data` as its data directory
    /// and `password` as `sa`'s, and waits until it listens.
    pub fn start(data: &Path, password: &str, max_connections: u32) -> Result<Server, String> {
        let exe = std::env::current_exe().map_err(|e| format!("locating walden: {e}"))?;
        Server::start_exe(
            &exe,
            data,
            password,
            &["--max-connections", &max_connections.to_string()],
        )
    }

    /// Starts `exe serve` as [`Server::start`] does, with `extra` arguments.
    pub fn start_exe(
        exe: &Path,
        data: &Path,
        password: &str,
        extra: &[&str],
    ) -> Result<Server, String> {
        let mut command = Command::new(exe);
        in_own_session(&mut command);
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1", "--port", "0", "--data"])
            .arg(data)
            .args(extra)
            .env("WALDEN_SA_PASSWORD", password)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting walden serve: {e}"))?;
        let Some(stderr) = child.stderr.take() else {
            return Err("walden serve: no stderr".into());
        };
        let mut server = Server { child, port: 0 };
        let mut lines = BufReader::new(stderr).lines();
        let mut said = Vec::new();
        server.port = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(addr) = line.split_once("listening on ").map(|(_, addr)| addr) {
                        let port = addr.rsplit(':').next().and_then(|p| p.parse().ok());
                        break port
                            .ok_or_else(|| format!("walden serve: cannot parse '{line}'"))?;
                    }
                    said.push(line);
                }
                _ => return Err(format!("walden serve exited:\n{}", said.join("\n"))),
            }
        };
        // Shows what the server reports from now on (connection errors), and keeps its pipe
        // from filling up.
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                eprintln!("\nserver: {line}");
            }
        });
        Ok(server)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's peak resident memory so far (VmHWM of its process), in kB; 0 when
    /// `/proc` does not say.
    pub fn peak_rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Server {
    /// The CPU time the server's process has used so far (every thread's, user and system),
    /// in seconds; 0 when `/proc` does not say.
    pub fn cpu_seconds(&self) -> f64 {
        process_cpu_seconds(self.child.id())
    }
}

/// The CPU time process `pid` has used so far (every thread's, user and system), in seconds,
/// from `/proc/PID/stat`; 0 when `/proc` does not say. Its `utime` and `stime` count in the
/// kernel's USER_HZ, which Linux fixes at 100 for every architecture it runs on.
pub fn process_cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command name, field 2, is in parentheses and may hold spaces: count from after it.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
    let ticks: u64 =
        rest.split_whitespace().skip(11).take(2).filter_map(|f| f.parse::<u64>().ok()).sum();
    ticks as f64 / 100.0
}

/// Has `command`'s process start a session of its own (setsid), as `pg_ctl` starts
/// PostgreSQL's postmaster. Linux's scheduler (with autogroup, its default) shares the CPUs
/// between sessions first and between the threads of a session after: in the benchmark's
/// session the server would share one session's part with the benchmark's client, where
/// PostgreSQL has a part of its own, and on a loaded machine wait for a CPU about twice as
/// long for the same work. The server is still killed when [`Server`] is dropped; a
/// benchmark killed outright leaves it running, as it leaves PostgreSQL.
#[allow(unsafe_code)]
fn in_own_session(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before it executes the program, and
    // calls only setsid, which is async-signal-safe and touches no memory.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// What each thread of the processes `pids` has spent so far, by thread id: from
/// `/proc/PID/task/TID/schedstat`, its nanoseconds on a CPU and waiting on a run queue for
/// one (runnable, but another thread had the CPU). Threads `/proc` does not show are left
/// out.
pub fn thread_times(pids: &[u32]) -> std::collections::HashMap<u32, (u64, u64)> {
    let mut times = std::collections::HashMap::new();
    for pid in pids {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten();
        for tid in tasks.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()) {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/schedstat"))
                .unwrap_or_default();
            let mut fields = stat.split_whitespace().map(|f| f.parse::<u64>().ok());
            if let (Some(Some(cpu)), Some(Some(wait))) = (fields.next(), fields.next()) {
                times.insert(tid, (cpu, wait));
            }
        }
    }
    times
}

/// The parent's process id of `pid`, from `/proc/PID/stat`.
pub fn parent_pid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGKILL: nothing in the scratch directory needs a clean shutdown.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A password for this run's `sa`.
pub fn random_password() -> Result<String, String> {
    let mut random = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut random))
        .map_err(|e| format!("generating a password: {e}"))?;
    Ok(random.iter().map(|b| format!("{b:02x}")).collect())
}

/// Runs `sql`, failing on any error it reports.
pub fn run_sql(client: &mut Client, sql: &str) -> Result<BatchResult, String> {
    let result = client.batch_collect(sql).map_err(|e| format!("{e}\nin:\n{sql}"))?;
    if let Some(e) = result.errors().next() {
        return Err(format!("Msg {}: {}\nin:\n{sql}", e.number, e.message));
    }
    Ok(result)
}

/// The first value of `sql`'s last result set, as an integer.
pub fn scalar(client: &mut Client, sql: &str) -> Result<i64, String> {
    match run_sql(client, sql)?.scalar() {
        Some(TdsValue::BigInt(v)) => Ok(*v),
        Some(TdsValue::Int(v)) => Ok(i64::from(*v)),
        other => Err(format!("expected a number from {sql}, got {other:?}")),
    }
}
