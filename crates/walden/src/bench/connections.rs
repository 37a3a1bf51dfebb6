//! `walden bench connections`: what many connections cost a `walden serve`, and whether a
//! real client still gets in (issue 27, item 6).
//!
//! Two phases, each against a fresh server started for it:
//!
//! 1. **The flood.** `--silent` connections that connect and send nothing, then `--half-open`
//!    ones that send part of a PRELOGIN and stall, all held for `--hold-s` seconds.
//! 2. **Idle sessions.** For each figure of `--idle`, that many clients log in (the server is
//!    started with `--max-connections` above it) and then sit between requests; at the end
//!    each of them runs `select 1`, which every one must answer.
//!
//! Throughout each phase a prober logs in every `--probe-ms` with a new connection and runs
//! `select 1`; its latencies (p50, p99, max) and failures are reported, with the server's
//! resident memory (VmRSS, VmHWM) and thread count read from `/proc/<pid>/status`. The
//! figures are printed, not judged, except against the target for the flood: under
//! 1 GB and every probe logged in within 1 s.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::Args;

use super::serve::{random_password, Server};
use crate::client::{Client, ConnectOptions};

/// Options of `walden bench connections`.
#[derive(Debug, Args)]
pub struct ConnectionsArgs {
    /// Connections that connect and send nothing, in the flood phase.
    #[arg(long, default_value_t = 10_000)]
    silent: usize,
    /// Connections that send part of a PRELOGIN and stall, in the flood phase.
    #[arg(long, default_value_t = 2_000)]
    half_open: usize,
    /// Seconds the flood is held once every connection is open.
    #[arg(long, default_value_t = 10)]
    hold_s: u64,
    /// Logged-in idle sessions, one phase per figure (comma-separated; 0 for none).
    #[arg(long, default_value = "1000,5000", value_delimiter = ',')]
    idle: Vec<usize>,
    /// Milliseconds between the prober's logins.
    #[arg(long, default_value_t = 200)]
    probe_ms: u64,
    /// The `walden` executable whose `serve` is measured [default: this one]; another build
    /// (main's, say) to compare with.
    #[arg(long)]
    walden: Option<PathBuf>,
    /// Directory under which to create the servers' data directories [default: the system's
    /// temp dir].
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// The target for the flood: the server's resident memory stays under this (kB).
const TARGET_RSS_KB: u64 = 1024 * 1024;
/// The target for the flood: every probe logs in within this.
const TARGET_LOGIN: Duration = Duration::from_secs(1);

/// What `/proc/<pid>/status` says of the server.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    rss_kb: u64,
    hwm_kb: u64,
    threads: u64,
}

fn usage(pid: u32) -> Usage {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    Usage { rss_kb: field("VmRSS:"), hwm_kb: field("VmHWM:"), threads: field("Threads:") }
}

/// The most of each figure over the samples taken.
fn max_usage(a: Usage, b: Usage) -> Usage {
    Usage {
        rss_kb: a.rss_kb.max(b.rss_kb),
        hwm_kb: a.hwm_kb.max(b.hwm_kb),
        threads: a.threads.max(b.threads),
    }
}

/// Logs in every `interval` until stopped, timing each login plus `select 1`.
struct Prober {
    stop: Arc<AtomicBool>,
    results: Arc<Mutex<Vec<Result<Duration, String>>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Prober {
    fn start(options: ConnectOptions, interval: Duration) -> Prober {
        let stop = Arc::new(AtomicBool::new(false));
        let results: Arc<Mutex<Vec<Result<Duration, String>>>> = Arc::default();
        let (flag, sink) = (Arc::clone(&stop), Arc::clone(&results));
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let started = Instant::now();
                let result = Client::connect(&options)
                    .map_err(|e| e.to_string())
                    .and_then(|mut c| c.batch_collect("select 1").map_err(|e| e.to_string()))
                    .and_then(|r| match r.errors().next() {
                        Some(e) => Err(format!("Msg {}: {}", e.number, e.message)),
                        None => Ok(started.elapsed()),
                    });
                sink.lock().unwrap_or_else(PoisonError::into_inner).push(result);
                std::thread::sleep(interval.saturating_sub(started.elapsed()));
            }
        });
        Prober { stop, results, thread: Some(thread) }
    }

    /// Stops probing; the latencies of the logins that succeeded and the failures' reasons.
    fn finish(mut self) -> (Vec<Duration>, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let results = std::mem::take(&mut *self.results.lock().unwrap_or_else(|e| e.into_inner()));
        let mut ok = Vec::new();
        let mut failed = Vec::new();
        for r in results {
            match r {
                Ok(d) => ok.push(d),
                Err(e) => failed.push(e),
            }
        }
        ok.sort();
        (ok, failed)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn mb(kb: u64) -> String {
    format!("{:.0} MB", kb as f64 / 1024.0)
}

/// Prints the prober's figures; whether every login got in within `TARGET_LOGIN`.
fn report_logins(ok: &[Duration], failed: &[String]) -> bool {
    let max = ok.last().copied().unwrap_or_default();
    println!(
        "  logins during the phase: {} ok, {} failed; p50 {}, p99 {}, max {}",
        ok.len(),
        failed.len(),
        ms(percentile(ok, 0.5)),
        ms(percentile(ok, 0.99)),
        ms(max)
    );
    if let Some(first) = failed.first() {
        println!("  first failure: {first}");
    }
    failed.is_empty() && !ok.is_empty() && max <= TARGET_LOGIN
}

pub fn run(args: &ConnectionsArgs) -> Result<(), String> {
    match walden_io::net::raise_open_files_limit() {
        Ok(limit) => println!("open files limit of this process: {limit}"),
        Err(e) => println!("cannot raise the open files limit: {e}"),
    }
    let exe = match &args.walden {
        Some(path) => path.clone(),
        None => std::env::current_exe().map_err(|e| format!("locating walden: {e}"))?,
    };
    let base = match &args.dir {
        Some(dir) => tempfile::tempdir_in(dir),
        None => tempfile::tempdir(),
    }
    .map_err(|e| format!("creating a scratch directory: {e}"))?;
    let password = random_password()?;
    let probe = Duration::from_millis(args.probe_ms.max(1));
    let mut met = true;
    if args.silent + args.half_open > 0 {
        met &= flood(args, &exe, &base.path().join("flood"), &password, probe)?;
    }
    for (i, &count) in args.idle.iter().enumerate().filter(|(_, &count)| count > 0) {
        idle(count, &exe, &base.path().join(format!("idle{i}")), &password, probe)?;
    }
    if args.silent + args.half_open > 0 {
        println!(
            "target (flood: under {} and every login within {} s): {}",
            mb(TARGET_RSS_KB),
            TARGET_LOGIN.as_secs(),
            if met { "met" } else { "NOT met" }
        );
    }
    Ok(())
}

fn options(port: u16, password: &str) -> Result<ConnectOptions, String> {
    let mut options = ConnectOptions::new(&format!("127.0.0.1,{port}"), "sa", password)?;
    options.app_name = "walden bench connections".into();
    Ok(options)
}

/// Samples the server's usage every 100 ms for `period`, keeping the most of each figure.
fn sample_for(pid: u32, period: Duration) -> Usage {
    let until = Instant::now() + period;
    let mut most = usage(pid);
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        most = max_usage(most, usage(pid));
    }
    most
}

/// Phase 1; whether the target was met.
fn flood(
    args: &ConnectionsArgs,
    exe: &std::path::Path,
    data: &std::path::Path,
    password: &str,
    probe: Duration,
) -> Result<bool, String> {
    let server = Server::start_exe(exe, data, password, &[])?;
    let pid = server.pid();
    let addr = SocketAddr::from(([127, 0, 0, 1], server.port));
    let at_start = usage(pid);
    println!(
        "flood: {} silent + {} half-open connections, held {} s ({})",
        args.silent,
        args.half_open,
        args.hold_s,
        exe.display()
    );
    println!("  server at start: RSS {}, {} threads", mb(at_start.rss_kb), at_start.threads);
    let prober = Prober::start(options(server.port, password)?, probe);
    let mut most = at_start;
    let mut sockets = Vec::with_capacity(args.silent + args.half_open);
    let mut refused = 0usize;
    let opened = Instant::now();
    for _ in 0..args.silent {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(s) => sockets.push(s),
            Err(_) => refused += 1,
        }
        if sockets.len() % 500 == 0 {
            most = max_usage(most, usage(pid));
        }
    }
    // A PRELOGIN packet header announcing 100 bytes, and 12 of them: the server has a
    // partial message it must wait for (or give up on).
    let mut partial = vec![0x12, 0x01, 0x00, 100, 0x00, 0x00, 0x01, 0x00];
    partial.extend_from_slice(&[0u8; 12]);
    for _ in 0..args.half_open {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(mut s) => {
                if s.write_all(&partial).is_ok() {
                    sockets.push(s);
                } else {
                    refused += 1;
                }
            }
            Err(_) => refused += 1,
        }
        if sockets.len() % 500 == 0 {
            most = max_usage(most, usage(pid));
        }
    }
    println!(
        "  opened {} connections in {:.1} s ({refused} could not connect)",
        sockets.len(),
        opened.elapsed().as_secs_f64()
    );
    most = max_usage(most, sample_for(pid, Duration::from_secs(args.hold_s)));
    // Which sockets the server has closed by now: a read that does not block finds the end.
    let mut closed = 0usize;
    for s in &sockets {
        let _ = s.set_nonblocking(true);
        let mut byte = [0u8; 1];
        match s.peek(&mut byte) {
            Ok(0) => closed += 1,
            Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => closed += 1,
            _ => {}
        }
    }
    let (ok, failed) = prober.finish();
    let end = usage(pid);
    println!(
        "  server during the flood: RSS max {} (peak VmHWM {}), threads max {}; at the end \
         RSS {}, {} threads",
        mb(most.rss_kb),
        mb(most.hwm_kb.max(end.hwm_kb)),
        most.threads,
        mb(end.rss_kb),
        end.threads
    );
    println!("  the server had closed {closed} of the {} connections by the end", sockets.len());
    let logins_ok = report_logins(&ok, &failed);
    drop(sockets);
    Ok(logins_ok && most.rss_kb.max(most.hwm_kb) < TARGET_RSS_KB)
}

/// Phase 2 for `count` idle sessions.
fn idle(
    count: usize,
    exe: &std::path::Path,
    data: &std::path::Path,
    password: &str,
    probe: Duration,
) -> Result<(), String> {
    let max = (count + 64).to_string();
    let server = Server::start_exe(exe, data, password, &["--max-connections", &max])?;
    let pid = server.pid();
    let at_start = usage(pid);
    println!("idle: {count} logged-in sessions between requests ({})", exe.display());
    println!("  server at start: RSS {}, {} threads", mb(at_start.rss_kb), at_start.threads);
    let options = options(server.port, password)?;
    let opened = Instant::now();
    // Four threads log the sessions in, so a thousand take a second or so, not several.
    let clients: Vec<Client> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let options = &options;
                scope.spawn(move || {
                    let mine = count / 4 + usize::from(t < count % 4);
                    (0..mine).map(|_| Client::connect(options)).collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect::<Result<Vec<_>, _>>()
    })
    .map_err(|e| format!("logging in the idle sessions: {e}"))?;
    println!("  logged in {} sessions in {:.1} s", clients.len(), opened.elapsed().as_secs_f64());
    let prober = Prober::start(options, probe);
    let most = sample_for(pid, Duration::from_secs(5));
    let (ok, failed) = prober.finish();
    println!(
        "  server with the sessions idle: RSS max {} (peak VmHWM {}), threads max {}",
        mb(most.rss_kb),
        mb(most.hwm_kb),
        most.threads
    );
    report_logins(&ok, &failed);
    let round = Instant::now();
    let mut answered = 0usize;
    for mut client in clients {
        if client.batch_collect("select 1").is_ok_and(|r| r.errors().next().is_none()) {
            answered += 1;
        }
    }
    println!(
        "  then every session ran select 1: {answered} of {count} answered, in {:.1} s",
        round.elapsed().as_secs_f64()
    );
    if answered != count {
        return Err(format!("only {answered} of {count} idle sessions answered"));
    }
    Ok(())
}
