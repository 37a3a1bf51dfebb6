//! Walden's side of `walden bench queries`: an embedded instance run through
//! [`Session::execute_batch`] in a child process (this same binary, started with the hidden
//! `--walden-worker` option), driven over its stdin and stdout.
//!
//! Why a child and not a thread: today's executor builds a comma join's whole cross product
//! in memory without a cancellation point, so a five-table comma join at the default scale
//! would grow until the kernel killed the benchmark (and whatever else shares the machine).
//! A child can be watched and, when a query outgrows `--walden-max-rss-mb` or ignores its
//! cancel, ended and started again on the same data directory; its peak RSS is also Walden's
//! own, without the other engines' memory or the generated rows.
//!
//! Requests, one per line, some followed by SQL text of the given length in bytes:
//!
//! * `exec <len>`: runs a batch; answers `ok` or `err <message>`;
//! * `query <len>`: runs a batch and answers `done <rows> <checksum> <micros> <peak kB>` for
//!   its last result set, `cancelled <peak kB>`, or `err <message>`;
//! * `cancel`: cancels the running batch through the session's cancel signal;
//! * `rss`: answers `rss <VmRSS kB> <VmHWM kB>`.
//!
//! When its memory passes the limit the worker writes `oom <VmRSS kB>` and exits.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{ColumnInfo, Counted, Message, Output, Session};

use super::data::Answer;
use super::Outcome;

/// How long a cancelled query may take to stop before its worker is ended.
const CANCEL_GRACE: Duration = Duration::from_secs(5);
/// How often the worker looks at its own memory.
const WATCH_EVERY: Duration = Duration::from_millis(10);

/// A line of `/proc/self/status` in kB (`VmRSS`, `VmHWM`); 0 where there is none.
pub fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The canonical text of a value for [`Answer`]: what the other engines print for the same
/// integers and strings.
fn canonical(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::TinyInt(i) => Some(i.to_string()),
        Value::SmallInt(i) => Some(i.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::BigInt(i) => Some(i.to_string()),
        Value::Bit(b) => Some(u8::from(*b).to_string()),
        Value::Str(s) | Value::NStr(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Keeps the last result set's row count and checksum, and the errors, without holding the
/// rows: a benchmark of the executor should not measure a client's buffer.
#[derive(Default)]
struct Summary {
    answer: Answer,
    errors: Vec<String>,
}

impl Output for Summary {
    fn result_set(&mut self, _columns: &[ColumnInfo]) {
        self.answer = Answer::default();
    }
    fn row(&mut self, values: &[Value]) {
        let texts: Vec<Option<String>> = values.iter().map(canonical).collect();
        self.answer.add(texts.iter().map(Option::as_deref));
    }
    fn result_end(&mut self, _rows: u64) {}
    fn message(&mut self, message: &Message) {
        if !message.is_info() {
            self.errors.push(message.to_string().replace('\n', " "));
        }
    }
    fn done(&mut self, _rows: Option<u64>) {}
    fn done_counted(&mut self, _kind: Counted, _rows: Option<u64>) {}
}

/// A request the worker's main thread runs.
enum Request {
    Exec(String),
    Query(String),
    Rss,
}

/// Reads one request's SQL text of `len` bytes.
fn read_text(input: &mut impl Read, len: &str) -> Option<String> {
    let len: usize = len.parse().ok()?;
    let mut buf = vec![0; len];
    input.read_exact(&mut buf).ok()?;
    String::from_utf8(buf).ok()
}

/// The worker: runs requests from stdin against an instance in `dir` until stdin closes.
pub fn worker(dir: &Path, max_rss_mb: u64) -> Result<(), String> {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let say = |out: &Mutex<std::io::Stdout>, line: &str| {
        // A poisoned lock only means another thread panicked while writing; the line still
        // goes out.
        let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(o, "{line}");
        let _ = o.flush();
    };
    let watch = Arc::clone(&out);
    std::thread::spawn(move || loop {
        let rss = status_kb("VmRSS");
        if rss > max_rss_mb * 1024 {
            let mut o = watch.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(o, "oom {rss}");
            let _ = o.flush();
            // Exits with the lock held, so that no half answer follows the oom line.
            std::process::exit(3);
        }
        std::thread::sleep(WATCH_EVERY);
    });

    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let reader_cancel = Arc::clone(&cancel);
    // Reads requests on a thread of its own so that a cancel reaches the flag while the main
    // thread runs the query it cancels.
    std::thread::spawn(move || {
        let mut input = BufReader::new(std::io::stdin());
        let mut line = String::new();
        loop {
            line.clear();
            if input.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let mut words = line.split_whitespace();
            let request = match (words.next(), words.next()) {
                (Some("cancel"), _) => {
                    reader_cancel.store(true, Ordering::Relaxed);
                    continue;
                }
                (Some("rss"), _) => Request::Rss,
                (Some("exec"), Some(len)) => match read_text(&mut input, len) {
                    Some(sql) => Request::Exec(sql),
                    None => return,
                },
                (Some("query"), Some(len)) => match read_text(&mut input, len) {
                    Some(sql) => Request::Query(sql),
                    None => return,
                },
                _ => return,
            };
            if tx.send(request).is_err() {
                return;
            }
        }
    });

    let instance = Instance::open(dir, InstanceConfig::default())
        .map_err(|e| format!("opening the instance in {}: {e}", dir.display()))?;
    let mut session = Session::new(Arc::clone(&instance));
    session.set_cancel(Arc::clone(&cancel) as Arc<dyn walden_sql::exec::CancelSignal>);
    for request in rx {
        match request {
            Request::Rss => {
                say(&out, &format!("rss {} {}", status_kb("VmRSS"), status_kb("VmHWM")))
            }
            Request::Exec(sql) => {
                cancel.store(false, Ordering::Relaxed);
                let mut summary = Summary::default();
                session.execute_batch(&sql, &mut summary);
                match summary.errors.first() {
                    Some(e) => say(&out, &format!("err {e}")),
                    None => say(&out, "ok"),
                }
            }
            Request::Query(sql) => {
                cancel.store(false, Ordering::Relaxed);
                // Resets VmHWM to the current RSS (Linux's clear_refs "5"), so the peak read
                // afterwards is this query's.
                let _ = std::fs::write("/proc/self/clear_refs", "5");
                let mut summary = Summary::default();
                let start = Instant::now();
                session.execute_batch(&sql, &mut summary);
                let took = start.elapsed();
                let peak = status_kb("VmHWM");
                if cancel.load(Ordering::Relaxed) {
                    say(&out, &format!("cancelled {peak}"));
                } else if let Some(e) = summary.errors.first() {
                    say(&out, &format!("err {e}"));
                } else {
                    let a = summary.answer;
                    say(
                        &out,
                        &format!("done {} {} {} {peak}", a.rows, a.checksum, took.as_micros()),
                    );
                }
            }
        }
    }
    session.close();
    drop(session);
    instance.close().map_err(|e| format!("closing the instance: {e}"))
}

/// The benchmark's handle on a worker.
pub struct Walden {
    dir: PathBuf,
    max_rss_mb: u64,
    child: Option<(Child, ChildStdin, Receiver<String>)>,
    /// The highest VmHWM any query reached, and the RSS after loading, in kB.
    pub peak_kb: u64,
    pub loaded_rss_kb: u64,
    /// Workers ended (out of memory, or deaf to a cancel) and started again.
    pub restarts: u32,
    /// The batch a new worker runs before the next query (`USE` of the loaded database).
    pub on_restart: Option<String>,
}

impl std::fmt::Debug for Walden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Walden").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl Walden {
    /// Starts a worker on a new data directory `dir`.
    pub fn start(dir: &Path, max_rss_mb: u64) -> Result<Walden, String> {
        let mut w = Walden {
            dir: dir.to_path_buf(),
            max_rss_mb,
            child: None,
            peak_kb: 0,
            loaded_rss_kb: 0,
            restarts: 0,
            on_restart: None,
        };
        w.spawn()?;
        Ok(w)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let exe = std::env::current_exe().map_err(|e| format!("finding walden itself: {e}"))?;
        let mut child = Command::new(exe)
            .args(["bench", "queries", "--walden-worker"])
            .arg(&self.dir)
            .args(["--walden-max-rss-mb", &self.max_rss_mb.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the Walden worker: {e}"))?;
        let stdin = child.stdin.take().ok_or("the worker has no stdin")?;
        let stdout = child.stdout.take().ok_or("the worker has no stdout")?;
        let (tx, rx) = mpsc::channel();
        // Answers arrive on a channel so that the wait for one can time out.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        self.child = Some((child, stdin, rx));
        Ok(())
    }

    /// Ends the worker (if any) and starts another on the same data directory.
    fn restart(&mut self) -> Result<(), String> {
        self.stop_child();
        self.restarts += 1;
        self.spawn()?;
        match self.on_restart.clone() {
            Some(sql) => self.exec(&sql),
            None => Ok(()),
        }
    }

    fn stop_child(&mut self) {
        if let Some((mut child, stdin, _)) = self.child.take() {
            drop(stdin);
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn send(&mut self, head: &str, sql: Option<&str>) -> Result<(), String> {
        let (_, stdin, _) = self.child.as_mut().ok_or("the Walden worker is gone")?;
        let mut msg = head.to_string();
        if let Some(sql) = sql {
            msg = format!("{head} {}\n{sql}", sql.len());
        } else {
            msg.push('\n');
        }
        stdin
            .write_all(msg.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("writing to the Walden worker: {e}"))
    }

    fn answer(&mut self, timeout: Duration) -> Result<Option<String>, String> {
        let (_, _, rx) = self.child.as_mut().ok_or("the Walden worker is gone")?;
        match rx.recv_timeout(timeout) {
            Ok(line) => Ok(Some(line)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err("the Walden worker exited".into()),
        }
    }

    /// Runs a batch that must succeed (DDL, loading), with no time limit.
    pub fn exec(&mut self, sql: &str) -> Result<(), String> {
        self.send("exec", Some(sql))?;
        match self.answer(Duration::MAX)? {
            Some(line) if line == "ok" => Ok(()),
            Some(line) => Err(format!("Walden: {line}\nin: {}", abbreviate(sql))),
            None => Err("no answer from the Walden worker".into()),
        }
    }

    /// The worker's current RSS, in kB.
    pub fn rss_kb(&mut self) -> Result<u64, String> {
        self.send("rss", None)?;
        let line = self.answer(Duration::from_secs(60))?.unwrap_or_default();
        let mut words = line.split_whitespace().skip(1);
        let rss = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        Ok(rss)
    }

    /// Runs a query, cancelling it after `timeout`.
    pub fn query(&mut self, sql: &str, timeout: Duration) -> Outcome {
        match self.query_inner(sql, timeout) {
            Ok(outcome) => outcome,
            Err(e) => {
                // The worker died under the query (or its pipe broke): start a fresh one for
                // the next query.
                let restarted = self.restart();
                Outcome::Failed(match restarted {
                    Ok(()) => e,
                    Err(r) => format!("{e}; restarting: {r}"),
                })
            }
        }
    }

    fn query_inner(&mut self, sql: &str, timeout: Duration) -> Result<Outcome, String> {
        self.send("query", Some(sql))?;
        let line = match self.answer(timeout)? {
            Some(line) => line,
            None => {
                self.send("cancel", None)?;
                match self.answer(CANCEL_GRACE)? {
                    // The answer to the cancel, or the query's own if it ended just then:
                    // either way the run took longer than the timeout.
                    Some(line) if line.starts_with("oom") || line.starts_with("cancelled") => line,
                    Some(_) => return Ok(Outcome::Timeout),
                    None => {
                        // The query did not reach a cancellation point in time (today's
                        // cross products have none): end the worker.
                        self.restart()?;
                        return Ok(Outcome::Timeout);
                    }
                }
            }
        };
        let mut words = line.split_whitespace();
        match words.next() {
            Some("done") => {
                let mut num = || words.next().and_then(|w| w.parse::<u64>().ok()).unwrap_or(0);
                let answer = Answer { rows: num(), checksum: num() };
                let micros = num();
                self.peak_kb = self.peak_kb.max(num());
                Ok(Outcome::Done(answer, Duration::from_micros(micros)))
            }
            Some("cancelled") => {
                let peak: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
                self.peak_kb = self.peak_kb.max(peak);
                Ok(Outcome::Timeout)
            }
            Some("oom") => {
                let rss: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
                self.peak_kb = self.peak_kb.max(rss);
                self.restart()?;
                Ok(Outcome::OutOfMemory)
            }
            _ => Ok(Outcome::Failed(line.trim_start_matches("err ").to_string())),
        }
    }

    /// Closes the worker's instance cleanly.
    pub fn close(&mut self) {
        if let Some((mut child, stdin, _)) = self.child.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

impl Drop for Walden {
    fn drop(&mut self) {
        self.stop_child();
    }
}

/// The first line of `sql`, shortened, for an error message.
pub fn abbreviate(sql: &str) -> String {
    let first = sql.lines().next().unwrap_or_default();
    if first.len() > 120 {
        format!("{}...", &first[..first.char_indices().nth(120).map_or(first.len(), |(i, _)| i)])
    } else {
        first.to_string()
    }
}
