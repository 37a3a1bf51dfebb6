//! `walden bench bulk`: loading N rows (1,000,000 by default) three ways in one run, side by
//! side: Walden's bulk copy over TDS (`INSERT BULK` and one Bulk Load message, as bcp and
//! the drivers' bulk APIs send it), the same rows as batched INSERTs against the same
//! `walden serve` (`--batch-rows` rows per `INSERT ... VALUES` statement, each statement its
//! own transaction), and PostgreSQL's `COPY FROM STDIN` of the same rows into the same table
//! in a throwaway cluster. Each way is measured `--rounds` times (3 by default), the rounds
//! interleaved so that the machine's noise falls on all three alike; each round's seconds
//! and ratios are shown, then the medians, the median ratios against the targets (bulk copy
//! at least 5 times the batched INSERTs and at least PostgreSQL's COPY), and the server's
//! peak RSS. Beside the wall-clock seconds, each way's CPU seconds: the server's processes'
//! (Walden's one process, PostgreSQL's postmaster and its children) and this client's,
//! read from `/proc`, which on a shared, noisy machine say more steadily what each way costs.
//! And where the wall-clock time of each load went on the server's side, from the loading
//! thread's scheduler statistics (Walden's session thread, PostgreSQL's backend): its time on
//! a CPU, its time runnable but waiting for a CPU that other processes had, and the rest,
//! blocked (on its disk writes, its log flushes, a lock, or the client's next packet).
//!
//! The rows are generated, not read from a file, so that each way sends exactly the same
//! values; each load is checked afterwards (its count and a checksum of the ids).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use walden_tds::{Column, Decimal, TdsValue, Time, TypeInfo};

use super::pg_cluster::Cluster;
use super::serve::{process_cpu_seconds, random_password, run_sql, scalar, thread_times, Server};
use crate::client::{Client, ConnectOptions};

/// Options of `walden bench bulk`.
#[derive(Debug, Args)]
pub struct BulkBenchArgs {
    /// Rows to load each way.
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    rows: u64,
    /// Rows per INSERT statement in the batched-INSERT run (SQL Server allows 1,000 rows in
    /// one VALUES list).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1000))]
    batch_rows: u64,
    /// Skip PostgreSQL (it is installed with apt-get when missing and run as root).
    #[arg(long)]
    no_postgres: bool,
    /// Times each way is measured; the median ratio is reported, each round shown (the
    /// machines these run on are shared and noisy).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    rounds: u32,
    /// The `walden` executable whose `serve` is measured [default: this one]; another build
    /// (main's, say) to compare with, driven by this one's client.
    #[arg(long)]
    walden: Option<PathBuf>,
}

/// The table every way loads into, in T-SQL and in PostgreSQL's dialect.
const TABLE_TSQL: &str = "(id INT NOT NULL PRIMARY KEY, customer INT NOT NULL, \
    amount DECIMAL(12,2) NOT NULL, created DATETIME2(3) NOT NULL, note NVARCHAR(40) NULL)";
const TABLE_PG: &str = "(id INT NOT NULL PRIMARY KEY, customer INT NOT NULL, \
    amount NUMERIC(12,2) NOT NULL, created TIMESTAMP(3) NOT NULL, note VARCHAR(40) NULL)";
const COLUMNS: &str = "id, customer, amount, created, note";

/// Days from 0001-01-01 to 2024-01-01, the first `created` date.
const FIRST_DAY: i32 = 738_885;

/// Row `i` of the load, as its parts.
struct Row {
    id: i32,
    customer: i32,
    /// Hundredths.
    amount: i64,
    /// Seconds after 2024-01-01 00:00:00, with `millis` more.
    seconds: u64,
    millis: u64,
    note: Option<String>,
}

fn row(i: u64) -> Row {
    let mixed = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33;
    Row {
        id: i as i32,
        customer: (mixed % 50_000) as i32,
        amount: (mixed % 10_000_000) as i64 - 5_000_000,
        seconds: i,
        millis: i % 1000,
        note: (!i.is_multiple_of(10)).then(|| format!("order {i} for customer {}", mixed % 50_000)),
    }
}

impl Row {
    fn amount_text(&self) -> String {
        let sign = if self.amount < 0 { "-" } else { "" };
        let a = self.amount.unsigned_abs();
        format!("{sign}{}.{:02}", a / 100, a % 100)
    }

    fn created_text(&self) -> String {
        let day = self.seconds / 86_400;
        let s = self.seconds % 86_400;
        let (y, m, d) = civil_from_days(FIRST_DAY + day as i32);
        format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03}",
            s / 3600,
            s / 60 % 60,
            s % 60,
            self.millis
        )
    }

    fn wire(&self) -> Vec<TdsValue> {
        vec![
            TdsValue::Int(self.id),
            TdsValue::Int(self.customer),
            TdsValue::Decimal(Decimal { value: i128::from(self.amount), precision: 12, scale: 2 }),
            TdsValue::DateTime2 {
                date: (FIRST_DAY + (self.seconds / 86_400) as i32) as u32,
                time: Time { increments: (self.seconds % 86_400) * 1000 + self.millis, scale: 3 },
            },
            self.note.clone().map_or(TdsValue::Null, TdsValue::NVarChar),
        ]
    }
}

/// The date `days` after 0001-01-01 (Howard Hinnant's civil-from-days, shifted to 0001).
fn civil_from_days(days: i32) -> (i64, u32, u32) {
    // Days since 1970-01-01.
    let z = i64::from(days) - 719_162 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// What one load cost: its wall-clock seconds, and the CPU seconds the server's processes
/// (every thread: the session's, the log writer's, the checkpointer's...) and this client
/// used meanwhile. On a shared machine the CPU time is the steadier figure: another
/// process's work lengthens the wall-clock time but is not counted in it.
#[derive(Debug, Clone, Copy)]
struct Cost {
    seconds: f64,
    server_cpu: f64,
    client_cpu: f64,
    /// The server's loading thread's seconds on a CPU and waiting for one (see [`Loader`]).
    loader: Loader,
    /// Walden's: the seconds its sessions waited for the log meanwhile, for room in its
    /// buffer (LOGBUFFER) or for a flush (WRITELOG), from `sys.dm_os_wait_stats`.
    log_wait: Option<f64>,
}

/// Where the wall-clock time of a load went for the server's thread that did most of it (the
/// one that used the most CPU meanwhile: Walden's session thread, PostgreSQL's backend).
#[derive(Debug, Clone, Copy, Default)]
struct Loader {
    /// On a CPU.
    cpu: f64,
    /// Runnable, waiting on a run queue while other threads had the CPUs.
    queued: f64,
}

impl Loader {
    /// The rest of `seconds`: neither running nor runnable, so blocked, waiting for its
    /// disk writes or log flushes, a lock, or the client's next packet.
    fn blocked(&self, seconds: f64) -> f64 {
        (seconds - self.cpu - self.queued).max(0.0)
    }
}

/// The server's processes, as the meter reads them.
struct Probe<'a> {
    /// The CPU seconds of every process of the server so far.
    cpu: &'a dyn Fn() -> f64,
    /// Each thread's CPU and run-queue nanoseconds so far ([`thread_times`]).
    threads: &'a dyn Fn() -> HashMap<u32, (u64, u64)>,
}

/// Measures a load.
struct Meter<'a> {
    probe: &'a Probe<'a>,
    started: Instant,
    server: f64,
    client: f64,
    threads: HashMap<u32, (u64, u64)>,
}

impl<'a> Meter<'a> {
    fn start(probe: &'a Probe<'a>) -> Self {
        let (server, client) = ((probe.cpu)(), process_cpu_seconds(std::process::id()));
        let threads = (probe.threads)();
        Meter { probe, started: Instant::now(), server, client, threads }
    }

    fn stop(self) -> Cost {
        let seconds = self.started.elapsed().as_secs_f64();
        // A thread started during the load counts from zero.
        let loader = (self.probe.threads)()
            .into_iter()
            .map(|(tid, (cpu, queued))| {
                let (cpu0, queued0) = self.threads.get(&tid).copied().unwrap_or((0, 0));
                (cpu.saturating_sub(cpu0), queued.saturating_sub(queued0))
            })
            .max_by_key(|&(cpu, _)| cpu)
            .map_or(Loader::default(), |(cpu, queued)| Loader {
                cpu: cpu as f64 / 1e9,
                queued: queued as f64 / 1e9,
            });
        Cost {
            seconds,
            server_cpu: (self.probe.cpu)() - self.server,
            client_cpu: process_cpu_seconds(std::process::id()) - self.client,
            loader,
            log_wait: None,
        }
    }
}

/// The milliseconds Walden's sessions have waited for its log so far.
fn log_wait_ms(client: &mut Client) -> Result<i64, String> {
    scalar(
        client,
        "SELECT SUM(wait_time_ms) FROM sys.dm_os_wait_stats \
         WHERE wait_type IN ('LOGBUFFER', 'WRITELOG')",
    )
}

/// `load`'s cost with the log waits of Walden's sessions meanwhile.
fn with_log_wait(
    client: &mut Client,
    load: impl FnOnce(&mut Client) -> Result<Cost, String>,
) -> Result<Cost, String> {
    let before = log_wait_ms(client)?;
    let cost = load(client)?;
    let waited = log_wait_ms(client)? - before;
    Ok(Cost { log_wait: Some(waited as f64 / 1000.0), ..cost })
}

/// The bulk copy of `n` rows into `by_bulk` (emptied first); its cost.
fn walden_bulk(client: &mut Client, n: u64, probe: &Probe<'_>) -> Result<Cost, String> {
    run_sql(client, "TRUNCATE TABLE by_bulk")?;
    let columns = vec![
        Column::new("id", TypeInfo::Int4, false),
        Column::new("customer", TypeInfo::Int4, false),
        Column::new("amount", TypeInfo::Decimal { precision: 12, scale: 2 }, false),
        Column::new("created", TypeInfo::DateTime2 { scale: 3 }, false),
        Column::new("note", TypeInfo::nvarchar(Some(40)), true),
    ];
    let statement = "INSERT BULK by_bulk (id INT NOT NULL, customer INT NOT NULL, \
        amount DECIMAL(12,2) NOT NULL, created DATETIME2(3) NOT NULL, note NVARCHAR(40) NULL) \
        WITH (TABLOCK)";
    let meter = Meter::start(probe);
    let mut load = client
        .bulk_load(statement, columns)
        .map_err(|e| e.to_string())?
        .map_err(|refused| format!("INSERT BULK refused: {:?}", refused.messages))?;
    for i in 0..n {
        load.row(&row(i).wire()).map_err(|e| e.to_string())?;
    }
    let answer = load.finish().map_err(|e| e.to_string())?;
    if let Some(e) = answer.errors().next() {
        return Err(format!("the bulk load failed: Msg {}: {}", e.number, e.message));
    }
    Ok(meter.stop())
}

/// `n` rows into `by_insert` (emptied first) as INSERTs of `batch` rows, each statement its
/// own transaction; the cost.
fn walden_inserts(
    client: &mut Client,
    n: u64,
    batch: u64,
    probe: &Probe<'_>,
) -> Result<Cost, String> {
    run_sql(client, "TRUNCATE TABLE by_insert")?;
    let meter = Meter::start(probe);
    let mut text = String::new();
    let mut i = 0;
    while i < n {
        text.clear();
        let _ = write!(text, "INSERT INTO by_insert ({COLUMNS}) VALUES ");
        let end = (i + batch).min(n);
        for j in i..end {
            let r = row(j);
            let note = r.note.as_ref().map_or("NULL".to_string(), |s| format!("N'{s}'"));
            let sep = if j + 1 < end { "," } else { "" };
            let _ = write!(
                text,
                "({}, {}, {}, '{}', {note}){sep}",
                r.id,
                r.customer,
                r.amount_text(),
                r.created_text()
            );
        }
        run_sql(client, &text)?;
        i = end;
    }
    Ok(meter.stop())
}

/// `n` rows into PostgreSQL's `by_copy` (emptied first) with one `COPY FROM STDIN` in text
/// format; the cost. Checks the load.
fn postgres_copy(
    pg: &mut postgres::Client,
    n: u64,
    sum: i64,
    probe: &Probe<'_>,
) -> Result<Cost, String> {
    pg.batch_execute("TRUNCATE by_copy").map_err(|e| e.to_string())?;
    let meter = Meter::start(probe);
    let mut writer = pg
        .copy_in(&format!("COPY by_copy ({COLUMNS}) FROM STDIN"))
        .map_err(|e| format!("COPY: {e}"))?;
    let mut line = String::new();
    for i in 0..n {
        let r = row(i);
        line.clear();
        let _ = writeln!(
            line,
            "{}\t{}\t{}\t{}\t{}",
            r.id,
            r.customer,
            r.amount_text(),
            r.created_text(),
            r.note.as_deref().unwrap_or("\\N")
        );
        writer.write_all(line.as_bytes()).map_err(|e| format!("COPY: {e}"))?;
    }
    writer.finish().map_err(|e| format!("COPY: {e}"))?;
    let cost = meter.stop();
    let got = pg
        .query_one("SELECT COUNT(*), SUM(id)::BIGINT FROM by_copy", &[])
        .map_err(|e| e.to_string())?;
    let (count, got_sum): (i64, i64) = (got.get(0), got.get(1));
    if count as u64 != n || got_sum != sum {
        return Err(format!("PostgreSQL loaded {count} rows (id sum {got_sum})"));
    }
    Ok(cost)
}

/// The median of `values`: of an even count, the mean of the two middle ones (the upper
/// one alone would report the better of two rounds' ratios as their median).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if !n.is_multiple_of(2) => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

pub fn run(args: &BulkBenchArgs) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let password = random_password()?;
    let this = std::env::current_exe().map_err(|e| format!("locating walden: {e}"))?;
    let exe = args.walden.as_deref().unwrap_or(&this);
    let server =
        Server::start_exe(exe, &dir.path().join("walden"), &password, &["--max-connections", "8"])?;
    let options = ConnectOptions {
        database: String::new(),
        app_name: "walden bench bulk".into(),
        ..ConnectOptions::new(&format!("127.0.0.1,{}", server.port), "sa", &password)?
    };
    let mut client = Client::connect(&options).map_err(|e| format!("logging in: {e}"))?;
    run_sql(&mut client, "CREATE DATABASE bulk_bench")?;
    run_sql(&mut client, "USE bulk_bench")?;
    run_sql(&mut client, &format!("CREATE TABLE by_bulk {TABLE_TSQL}"))?;
    run_sql(&mut client, &format!("CREATE TABLE by_insert {TABLE_TSQL}"))?;
    let (cluster, mut pg) = if args.no_postgres {
        (None, None)
    } else {
        let cluster = Cluster::start(&dir.path().join("postgres"), &[])?;
        let mut pg =
            cluster.config().connect(postgres::NoTls).map_err(|e| format!("PostgreSQL: {e}"))?;
        pg.batch_execute(&format!("CREATE TABLE by_copy {TABLE_PG}")).map_err(|e| e.to_string())?;
        (Some(cluster), Some(pg))
    };
    let n = args.rows;
    let sum: i64 = (0..n).map(|i| i as i64).sum();
    println!(
        "walden bench bulk: {n} rows of (INT, INT, DECIMAL(12,2), DATETIME2(3), NVARCHAR(40)) \
         loaded three ways, {} rounds; seconds per round:",
        args.rounds
    );
    println!(
        "{:>6} {:>12} {:>12} {:>12} {:>10} {:>10}   server CPU s: {:>5} {:>8} {:>8}",
        "round",
        "bulk copy",
        "INSERTs",
        "PG COPY",
        "vs INSERT",
        "vs COPY",
        "bulk",
        "INSERTs",
        "PG COPY"
    );
    let server_cpu = || server.cpu_seconds();
    let server_threads = || thread_times(&[server.pid()]);
    let walden = Probe { cpu: &server_cpu, threads: &server_threads };
    let cluster_cpu = || cluster.as_ref().map_or(0.0, Cluster::cpu_seconds);
    let cluster_threads = || thread_times(&cluster.as_ref().map(Cluster::pids).unwrap_or_default());
    let postgres = Probe { cpu: &cluster_cpu, threads: &cluster_threads };
    let (mut bulk, mut inserts, mut copy) = (Vec::new(), Vec::new(), Vec::new());
    let mut bulk_peak_kb = 0;
    for round in 1..=args.rounds {
        let b = with_log_wait(&mut client, |c| walden_bulk(c, n, &walden))?;
        // The first load's, before any INSERT and before the check, whose query has a memory
        // use of its own: what the bulk copy alone needed.
        if round == 1 {
            bulk_peak_kb = server.peak_rss_kb();
        }
        check(&mut client, "by_bulk", n, sum)?;
        let i = with_log_wait(&mut client, |c| walden_inserts(c, n, args.batch_rows, &walden))?;
        check(&mut client, "by_insert", n, sum)?;
        let c = match pg.as_mut() {
            Some(pg) => Some(postgres_copy(pg, n, sum, &postgres)?),
            None => None,
        };
        let show =
            |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
        println!(
            "{round:>6} {:>12.2} {:>12.2} {:>12} {:>9.1}x {:>9}                 {:>5.2} {:>8.2} {:>8}",
            b.seconds,
            i.seconds,
            show(c.map(|c| c.seconds), 2),
            i.seconds / b.seconds,
            show(c.map(|c| c.seconds / b.seconds), 2) + if c.is_some() { "x" } else { "" },
            b.server_cpu,
            i.server_cpu,
            show(c.map(|c| c.server_cpu), 2),
        );
        bulk.push(b);
        inserts.push(i);
        copy.extend(c);
    }
    let peak_kb = server.peak_rss_kb();
    drop(pg);
    drop(cluster);
    let rate = |seconds: f64| n as f64 / seconds.max(1e-9);
    let of = |costs: &[Cost], f: fn(&Cost) -> f64| median(&costs.iter().map(f).collect::<Vec<_>>());
    println!();
    println!(
        "{:<34} {:>8} {:>10} {:>12} {:>12}",
        "median of the rounds", "seconds", "rows/s", "server CPU s", "client CPU s"
    );
    let mut ways = vec![
        ("Walden bulk copy (INSERT BULK)".to_string(), &bulk),
        (format!("Walden INSERTs of {} rows", args.batch_rows), &inserts),
    ];
    if !copy.is_empty() {
        ways.push(("PostgreSQL COPY FROM STDIN".to_string(), &copy));
    }
    for (name, costs) in &ways {
        let seconds = of(costs, |c| c.seconds);
        println!(
            "{name:<34} {seconds:>8.2} {:>10.0} {:>12.2} {:>12.2}",
            rate(seconds),
            of(costs, |c| c.server_cpu),
            of(costs, |c| c.client_cpu)
        );
    }
    println!();
    println!(
        "{:<34} {:>8} {:>10} {:>12} {:>10} {:>10}",
        "the server's loading thread", "seconds", "on a CPU", "CPU queue", "blocked", "log waits"
    );
    for (name, costs) in &ways {
        let seconds = of(costs, |c| c.seconds);
        let log_waits: Vec<f64> = costs.iter().filter_map(|c| c.log_wait).collect();
        println!(
            "{name:<34} {seconds:>8.2} {:>10.2} {:>12.2} {:>10.2} {:>10}",
            of(costs, |c| c.loader.cpu),
            of(costs, |c| c.loader.queued),
            of(costs, |c| c.loader.blocked(c.seconds)),
            if log_waits.is_empty() {
                "-".to_string()
            } else {
                format!("{:.2}", median(&log_waits))
            },
        );
    }
    println!(
        "(medians of the rounds; CPU queue: runnable while other processes had the CPUs; \
         blocked: on disk writes and flushes, locks or the client; log waits: Walden's \
         sessions' LOGBUFFER and WRITELOG waits, part of blocked)"
    );
    println!();
    // Each round's ratio is of two loads run one after the other, under much the same load
    // of the machine: the median of those is steadier than a ratio of medians.
    let ratios = |other: &[Cost], f: fn(&Cost) -> f64| {
        median(&other.iter().zip(&bulk).map(|(o, b)| f(o) / f(b).max(1e-9)).collect::<Vec<_>>())
    };
    let met = |ratio: f64, target: f64| if ratio >= target { "met" } else { "NOT met" };
    let ratio = ratios(&inserts, |c| c.seconds);
    println!(
        "bulk copy / batched INSERTs, median of the rounds' ratios: {ratio:.1}x (target >= 5x: {}); \
         in server CPU: {:.1}x",
        met(ratio, 5.0),
        ratios(&inserts, |c| c.server_cpu)
    );
    if !copy.is_empty() {
        let ratio = ratios(&copy, |c| c.seconds);
        println!(
            "bulk copy / PostgreSQL COPY, median of the rounds' ratios: {ratio:.2}x (target >= 1x: {}); \
             in server CPU: {:.2}x",
            met(ratio, 1.0),
            ratios(&copy, |c| c.server_cpu)
        );
    }
    println!(
        "Walden server peak RSS (VmHWM): {} MB after the first bulk copy, {} MB at the end",
        bulk_peak_kb / 1024,
        peak_kb / 1024
    );
    Ok(())
}

/// Fails unless `table` holds `n` rows whose ids add up to `sum`.
fn check(client: &mut Client, table: &str, n: u64, sum: i64) -> Result<(), String> {
    let count = scalar(client, &format!("SELECT COUNT_BIG(*) FROM {table}"))?;
    let got = scalar(client, &format!("SELECT SUM(CAST(id AS BIGINT)) FROM {table}"))?;
    if count as u64 != n || got != sum {
        return Err(format!("{table} holds {count} rows (id sum {got}), expected {n} ({sum})"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_even_count_has_the_mean_of_its_middle_values_as_median() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    /// This process's threads are found with their times; the thread running this test has
    /// been on a CPU to get here.
    #[test]
    fn the_threads_scheduler_statistics_are_read() {
        let times = thread_times(&[std::process::id()]);
        assert!(times.values().any(|&(cpu, _)| cpu > 0), "{times:?}");
        assert!(thread_times(&[u32::MAX]).is_empty(), "no such process");
    }

    #[test]
    fn blocked_is_the_time_neither_running_nor_queued() {
        let loader = Loader { cpu: 1.0, queued: 2.5 };
        assert_eq!(loader.blocked(4.0), 0.5);
        // The statistics and the clock are read at slightly different moments.
        assert_eq!(loader.blocked(3.0), 0.0);
    }

    #[test]
    fn dates_count_from_2024() {
        assert_eq!(civil_from_days(FIRST_DAY), (2024, 1, 1));
        assert_eq!(civil_from_days(FIRST_DAY + 59), (2024, 2, 29));
        assert_eq!(civil_from_days(FIRST_DAY + 366), (2025, 1, 1));
        assert_eq!(row(86_400 + 61).created_text(), "2024-01-02 00:01:01.461");
    }
}
