//! `walden bench seed001`: the test of seed 001 ("Delayed durability in SQL Server 2014 -
//! performance test"), over TDS against a `walden serve` started for the run.
//!
//! The article ran JMeter with 5 JDBC clients, each running 50,000 times
//! `begin tran; 3 x insert into dbo.test (id, name) values (next value for seq_test, '...');
//! commit` — fully durable, then with `commit with (DELAYED_DURABILITY = ON)` — and measured
//! 3,777.8 and 5,818.1 transactions/s, with far fewer log flushes per second delayed. Here
//! each client is a thread with its own connection (the blocking client of `crate::client`,
//! one SQLBatch round trip per transaction, so the clients are not the bottleneck), the same
//! script, the same table and sequence (CACHE left at SQL Server's default, 50), and the same
//! two runs, then both again with many more clients. Log flushes are the database's
//! `Log Flushes/sec` counter in `sys.dm_os_performance_counters`, read before and after each
//! run; each run must leave exactly 3 x clients x transactions rows, or the benchmark fails.
//! Each pair of runs (full and delayed) is cut into slices that alternate, full, delayed,
//! full, delayed..., and each figure sums its slices, so both modes see the same machine.
//!
//! Targets: delayed at least 3x fully durable at the article's 5 clients (group commit cannot
//! help 5 clients much, so delayed durability should); fully durable at most 0.35 log flushes
//! per transaction at 5 clients (commits share flushes); fully durable at least half of
//! delayed with many clients (group commit makes durability nearly free there).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use super::serve::{random_password, run_sql, scalar, Server};
use super::{progress_bar, show_progress};
use crate::client::{Client, ConnectOptions, Event};
use clap::Args;

/// Options of `walden bench seed001`.
#[derive(Debug, Args)]
pub struct Seed001Args {
    /// Client connections in the article's runs.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    clients: u32,
    /// Transactions per client in every run.
    #[arg(long, default_value_t = 50_000, value_parser = clap::value_parser!(u64).range(1..))]
    transactions: u64,
    /// Client connections in the high-concurrency runs.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1000))]
    high_clients: u32,
    /// Directory under which to create the server's data directory (default: the system's
    /// temp dir; it must be on the disk you want to measure, not tmpfs).
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// The article's throughputs (JMeter's Summary Report), transactions/s.
const ARTICLE_FULL: f64 = 3777.8;
const ARTICLE_DELAYED: f64 = 5818.1;

const DATABASE: &str = "Seed001";

/// Slices each pair of full and delayed runs alternates in.
const ROUNDS: u64 = 4;

/// The article's three INSERTs.
const INSERTS: &str = "begin tran;\n\
    insert into dbo.test (id, name) values (next value for seq_test, 'test test test, absolute test');\n\
    insert into dbo.test (id, name) values (next value for seq_test, 'another sample name');\n\
    insert into dbo.test (id, name) values (next value for seq_test, 'third not so long text');\n";

/// The whole transaction, one batch.
fn script(delayed: bool) -> String {
    let commit = if delayed { "commit with (DELAYED_DURABILITY = ON);" } else { "commit;" };
    format!("{INSERTS}{commit}")
}

fn log_flushes(admin: &mut Client) -> Result<i64, String> {
    scalar(
        admin,
        &format!(
            "SELECT cntr_value FROM sys.dm_os_performance_counters \
             WHERE counter_name = 'Log Flushes/sec' AND instance_name = '{DATABASE}'"
        ),
    )
}

/// One run's figures.
#[derive(Debug)]
struct Run {
    clients: u32,
    delayed: bool,
    transactions: u64,
    elapsed: Duration,
    flushes: i64,
    /// The article's throughput for this run, if it made one like it.
    article: Option<f64>,
}

impl Run {
    fn per_second(&self) -> f64 {
        self.transactions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn flushes_per_transaction(&self) -> f64 {
        self.flushes as f64 / self.transactions.max(1) as f64
    }
}

/// The progress line: `secs` into the run, `done` of `total` transactions; `last` at its end.
fn progress(what: &str, done: u64, total: u64, secs: f64, last: bool) {
    let line = format!(
        "{what:<22} {} {:>7.1} s {:>9.0} tx/s",
        progress_bar(done, total),
        secs,
        done as f64 / secs.max(1e-9)
    );
    show_progress(&line, last);
}

/// One client's loop: `count` transactions, unless another client failed.
fn client_loop(
    mut client: Client,
    script: &str,
    count: u64,
    start: &Barrier,
    done: &AtomicU64,
    stop: &AtomicBool,
) -> Result<Instant, String> {
    start.wait();
    for _ in 0..count {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut error = None;
        let sent = client.batch(script, &mut |event| {
            if let Event::Message(m) = event {
                if m.class > 10 && error.is_none() {
                    error = Some(format!("Msg {}: {}", m.number, m.message));
                }
            }
        });
        if let Some(e) = sent.err().map(|e| e.to_string()).or(error) {
            stop.store(true, Ordering::Relaxed);
            return Err(e);
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(Instant::now())
}

/// Runs the workload with `clients` connections and checks the rows it left.
fn run_workload(
    options: &ConnectOptions,
    admin: &mut Client,
    clients: u32,
    per_client: u64,
    delayed: bool,
) -> Result<Run, String> {
    let what = format!("{clients} clients {}", if delayed { "delayed" } else { "full" });
    let connections = (0..clients)
        .map(|_| Client::connect(options))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what}: connecting: {e}"))?;
    let total = u64::from(clients) * per_client;
    let before = log_flushes(admin)?;
    let script = script(delayed);
    let start = Arc::new(Barrier::new(connections.len() + 1));
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = connections
        .into_iter()
        .map(|client| {
            let (script, start, done, stop) =
                (script.clone(), Arc::clone(&start), Arc::clone(&done), Arc::clone(&stop));
            std::thread::spawn(move || {
                client_loop(client, &script, per_client, &start, &done, &stop)
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    while !threads.iter().all(|t| t.is_finished()) {
        progress(&what, done.load(Ordering::Relaxed), total, began.elapsed().as_secs_f64(), false);
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut ended = began;
    let mut failure = None;
    for thread in threads {
        match thread.join() {
            Ok(Ok(finished)) => ended = ended.max(finished),
            Ok(Err(e)) => failure = failure.or(Some(e)),
            Err(_) => failure = failure.or(Some("a client thread panicked".to_string())),
        }
    }
    let elapsed = ended - began;
    progress(&what, done.load(Ordering::Relaxed), total, elapsed.as_secs_f64(), true);
    if let Some(e) = failure {
        return Err(format!("{what}: {e}"));
    }
    let after = log_flushes(admin)?;

    let rows = scalar(admin, "SELECT COUNT(*) FROM dbo.test")?;
    let expected = 3 * total;
    if u64::try_from(rows).ok() != Some(expected) {
        return Err(format!("{what}: dbo.test has {rows} rows, expected {expected}"));
    }
    run_sql(admin, "TRUNCATE TABLE dbo.test")?;
    Ok(Run {
        clients,
        delayed,
        transactions: total,
        elapsed,
        flushes: after - before,
        article: None,
    })
}

fn print_table(runs: &[Run]) {
    println!(
        "{:>7}  {:<8} {:>12} {:>10} {:>10} {:>12} {:>10} | {:>12}",
        "clients",
        "mode",
        "transactions",
        "seconds",
        "tx/s",
        "log flushes",
        "flushes/tx",
        "article tx/s"
    );
    for r in runs {
        let article = r.article.map_or_else(|| "-".to_string(), |a| format!("{a:.1}"));
        println!(
            "{:>7}  {:<8} {:>12} {:>10.3} {:>10.1} {:>12} {:>10.3} | {:>12}",
            r.clients,
            if r.delayed { "delayed" } else { "full" },
            r.transactions,
            r.elapsed.as_secs_f64(),
            r.per_second(),
            r.flushes,
            r.flushes_per_transaction(),
            article
        );
    }
}

/// Runs the benchmark and prints its table and targets.
pub fn run(args: &Seed001Args) -> Result<(), String> {
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new()
        .prefix("walden-bench-seed001-")
        .tempdir_in(&parent)
        .map_err(|e| format!("temporary directory in {}: {e}", parent.display()))?;
    let password = random_password()?;
    let max_connections = args.clients.max(args.high_clients) + 8;
    let server = Server::start(&tmp.path().join("data"), &password, max_connections.max(256))?;
    eprintln!("walden serve on 127.0.0.1:{} (data in {})", server.port, tmp.path().display());

    let mut options = ConnectOptions::new(&format!("127.0.0.1,{}", server.port), "sa", &password)?;
    options.app_name = "walden bench seed001".into();
    let mut admin = Client::connect(&options).map_err(|e| format!("logging in: {e}"))?;
    run_sql(&mut admin, &format!("CREATE DATABASE {DATABASE};"))?;
    run_sql(
        &mut admin,
        &format!(
            "USE {DATABASE}; ALTER DATABASE {DATABASE} SET DELAYED_DURABILITY = ALLOWED; \
             CREATE TABLE dbo.test (id INT PRIMARY KEY, name VARCHAR(100)); \
             CREATE SEQUENCE dbo.seq_test AS INT START WITH 1 INCREMENT BY 1;"
        ),
    )?;
    if admin.database() != DATABASE {
        return Err(format!("USE {DATABASE} left the session in {}", admin.database()));
    }
    options.database = DATABASE.into();

    let n = args.transactions;
    let mut runs = Vec::new();
    for (clients, articles) in [
        (args.clients, [Some(ARTICLE_FULL), Some(ARTICLE_DELAYED)]),
        (args.high_clients, [None; 2]),
    ] {
        // Full and delayed alternate in slices of the run, so that both see the same
        // machine: on a shared one the disk's flush rate and the CPUs' load drift within a
        // minute by more than the ratios measured here.
        let [full, delayed] = articles;
        let mut pair = [(false, full), (true, delayed)].map(|(delayed, article)| Run {
            clients,
            delayed,
            transactions: 0,
            elapsed: Duration::ZERO,
            flushes: 0,
            article,
        });
        let slices = ROUNDS.min(n);
        for slice in 0..slices {
            let per_client = n / slices + u64::from(slice < n % slices);
            for run in &mut pair {
                let part = run_workload(&options, &mut admin, clients, per_client, run.delayed)?;
                run.transactions += part.transactions;
                run.elapsed += part.elapsed;
                run.flushes += part.flushes;
            }
        }
        runs.extend(pair);
    }
    drop(admin);
    drop(server);

    println!(
        "seed 001: {} and {} clients x {n} transactions of 3 INSERTs, one SQLBatch each \
         (Walden over TDS, this machine), next to the article (SQL Server 2014, JMeter over \
         JDBC, 5 clients x 50,000)",
        args.clients, args.high_clients
    );
    println!();
    print_table(&runs);
    let (full, delayed, high_full, high_delayed) = (&runs[0], &runs[1], &runs[2], &runs[3]);
    let speedup = delayed.per_second() / full.per_second();
    let full_flushes = full.flushes_per_transaction();
    let high_ratio = high_full.per_second() / high_delayed.per_second();
    let verdict = |ok: bool| if ok { "PASS" } else { "MISS" };
    println!();
    println!(
        "delayed / full tx/s at {} clients:        {speedup:>6.2}x (target >= 3; article {:.2}x)  {}",
        args.clients,
        ARTICLE_DELAYED / ARTICLE_FULL,
        verdict(speedup >= 3.0)
    );
    println!(
        "full log flushes per transaction at {} clients: {full_flushes:>6.3} (target <= 0.35)  {}",
        args.clients,
        verdict(full_flushes <= 0.35)
    );
    println!(
        "full / delayed tx/s at {} clients:       {high_ratio:>6.2}x (target >= 0.5)  {}",
        args.high_clients,
        verdict(high_ratio >= 0.5)
    );
    Ok(())
}
