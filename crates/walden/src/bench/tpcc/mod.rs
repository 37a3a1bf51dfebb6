//! `walden bench tpcc`: TPC-C's transaction mix (issue 26, part 9) over TDS against a
//! `walden serve` the benchmark starts and over PostgreSQL's protocol against a throwaway
//! PostgreSQL cluster, with the same clients, the same scale and the same data, in one run.
//!
//! Both engines get the specification's schema and initial population ([`load`]), then for
//! each mode — fully durable (Walden's `DELAYED_DURABILITY = DISABLED` against PostgreSQL's
//! `synchronous_commit = on`) and relaxed (`FORCED` against `off`) — and each client count,
//! every client (a thread with its own connection, its home warehouse assigned round-robin)
//! runs the mix of [`keys`] for `--duration-s` with no keying or think time, one round trip
//! per transaction ([`txn`]). Deadlock victims and serialization failures are retried and
//! counted apart; any other error is counted and the first few printed. Latencies are the
//! client's, from sending a transaction to its commit, retries included.
//!
//! This is not an audited TPC-C: there are no terminals' think times (so tpmC is not bound
//! by the warehouses), the mix is drawn at random rather than from a deck, and Delivery runs
//! in the foreground like the other four. Its figures compare the two engines, side by side
//! on one machine.

mod engine;
mod keys;
mod load;
mod txn;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};

use super::pg_cluster::Cluster;
use super::serve::{random_password, run_sql, Server};
use super::{json_escape, show_progress, Rng};
use crate::client::{Client, ConnectOptions};
use engine::{Conn, Outcome};
use keys::{Keys, KINDS};

/// Options of `walden bench tpcc`.
#[derive(Debug, Args)]
pub struct TpccArgs {
    /// Warehouses (the scale: each adds 100,000 stock rows, 30,000 customers and orders and
    /// about 300,000 order lines).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    warehouses: u32,
    /// Client counts to run each mode with, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "4,16")]
    clients: Vec<u32>,
    /// Seconds each engine runs the mix for, per mode and client count.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    duration_s: u64,
    /// Isolation level of every transaction, in both engines.
    #[arg(long, value_enum, default_value_t = Isolation::ReadCommitted)]
    isolation: Isolation,
    /// Modes to run, comma-separated: durable (Walden DELAYED_DURABILITY = DISABLED,
    /// PostgreSQL synchronous_commit = on) and relaxed (FORCED, and off).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "durable,relaxed")]
    modes: Vec<Mode>,
    /// Items, and stock rows per warehouse: the specification's 100,000 unless smaller for a
    /// quick check (the figures are then not comparable with TPC-C's).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(100..))]
    items: u32,
    /// Customers (and initial orders) per district: the specification's 3,000 unless smaller
    /// for a quick check.
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u32).range(10..))]
    customers: u32,
    /// Leave PostgreSQL out (otherwise it is started, and installed with apt-get when
    /// missing and running as root).
    #[arg(long)]
    no_postgres: bool,
    /// Seed of the data and of the clients' choices: the same seed gives the same rows and
    /// the same transactions to both engines.
    #[arg(long, default_value_t = 26)]
    seed: u64,
    /// Directory under which to create the run's directory (default: the system's temp dir;
    /// it must be on the disk you want to measure, not tmpfs).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// Transaction isolation level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Isolation {
    ReadCommitted,
    Serializable,
}

impl Isolation {
    fn sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }
}

/// Durability of commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Every commit waits for its log flush.
    Durable,
    /// Commits return before their log reaches the disk.
    Relaxed,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Durable => "durable",
            Mode::Relaxed => "relaxed",
        }
    }
}

/// SQL dialect of an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    TSql,
    Postgres,
}

impl Dialect {
    fn engine(self) -> &'static str {
        match self {
            Dialect::TSql => "Walden",
            Dialect::Postgres => "PostgreSQL",
        }
    }
}

const DATABASE: &str = "tpcc";

/// Errors printed per run, at most.
const ERRORS_SHOWN: usize = 5;

/// How to open a client connection to one engine, set up for a mode.
enum Target {
    Walden(ConnectOptions),
    Postgres(postgres::Config),
}

impl Target {
    fn dialect(&self) -> Dialect {
        match self {
            Target::Walden(_) => Dialect::TSql,
            Target::Postgres(_) => Dialect::Postgres,
        }
    }

    /// A connection with the run's isolation (and for PostgreSQL the mode's durability,
    /// which is a session setting there; Walden's is the database's).
    fn connect(&self, isolation: Isolation, mode: Mode) -> Result<Conn, String> {
        let mut conn = match self {
            Target::Walden(options) => Conn::Walden(Box::new(
                Client::connect(options).map_err(|e| format!("connecting to Walden: {e}"))?,
            )),
            Target::Postgres(config) => Conn::Postgres(Box::new(
                config
                    .connect(postgres::NoTls)
                    .map_err(|e| format!("connecting to PostgreSQL: {e}"))?,
            )),
        };
        match self {
            Target::Walden(_) => conn.setup(&format!(
                "SET XACT_ABORT ON; SET NOCOUNT ON; SET TRANSACTION ISOLATION LEVEL {};",
                isolation.sql()
            ))?,
            Target::Postgres(_) => conn.setup(&format!(
                "SET synchronous_commit = {}; SET default_transaction_isolation = '{}'",
                if mode == Mode::Durable { "on" } else { "off" },
                isolation.sql().to_lowercase()
            ))?,
        }
        Ok(conn)
    }
}

/// What one engine did in one mode with one client count.
#[derive(Debug)]
struct Run {
    engine: &'static str,
    mode: Mode,
    clients: u32,
    elapsed: Duration,
    /// Every client's counts added up, latencies sorted.
    counts: Tally,
}

impl Run {
    fn tpmc(&self) -> f64 {
        self.counts.done[0] as f64 * 60.0 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn tx_per_s(&self) -> f64 {
        self.counts.done.iter().sum::<u64>() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `p`th percentile latency of a kind, in milliseconds.
    fn percentile_ms(&self, kind: usize, p: f64) -> Option<f64> {
        let l = &self.counts.latencies[kind];
        if l.is_empty() {
            return None;
        }
        let at = ((l.len() - 1) as f64 * p).round() as usize;
        Some(f64::from(l[at]) / 1e3)
    }
}

/// One client's counts, or a run's.
#[derive(Debug, Default)]
struct Tally {
    /// Per transaction kind: committed (for New-Order with the rolled back ones).
    done: [u64; 5],
    /// New-Orders rolled back on their unused item, as 1% should.
    rolled_back: u64,
    retries: u64,
    /// Transactions still being retried when the run ended.
    abandoned: u64,
    errors: u64,
    /// Per transaction kind: each one's latency in microseconds.
    latencies: [Vec<u32>; 5],
}

impl Tally {
    /// Adds another client's counts to these.
    fn add(&mut self, other: &Tally) {
        for k in 0..5 {
            self.done[k] += other.done[k];
            self.latencies[k].extend(&other.latencies[k]);
        }
        self.rolled_back += other.rolled_back;
        self.retries += other.retries;
        self.abandoned += other.abandoned;
        self.errors += other.errors;
    }
}

/// Shared between a run's clients.
#[derive(Debug, Default)]
struct Shared {
    transactions: AtomicU64,
    stop: AtomicBool,
    /// The first errors, as `engine: text`.
    errors: Mutex<Vec<String>>,
}

impl Shared {
    fn error(&self, text: String) {
        let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
        if errors.len() < ERRORS_SHOWN {
            errors.push(text);
        }
    }
}

/// One client's loop until `end`.
fn client_loop(
    mut conn: Conn,
    dialect: Dialect,
    keys: Keys,
    mut rng: Rng,
    home: u32,
    end: Instant,
    shared: &Shared,
) -> Tally {
    let mut tally = Tally::default();
    // Its own generator, so that retries do not change the transactions that follow.
    let mut backoff = Rng(rng.0 ^ 0x5DEE_CE66_D1CE_4E5B);
    while Instant::now() < end && !shared.stop.load(Ordering::Relaxed) {
        let input = keys.next(&mut rng, home);
        let kind = input.kind();
        let sql = txn::text(dialect, &input);
        let began = Instant::now();
        let mut attempts: u32 = 0;
        let ok = loop {
            attempts += 1;
            match conn.run(&sql) {
                Outcome::Committed if !input.rolls_back(&keys) => break true,
                Outcome::RolledBack if input.rolls_back(&keys) => {
                    tally.rolled_back += 1;
                    break true;
                }
                Outcome::Committed | Outcome::RolledBack => {
                    tally.errors += 1;
                    shared.error(format!(
                        "{}: {} {} where the input said otherwise:\n{sql}",
                        dialect.engine(),
                        KINDS[kind],
                        if input.rolls_back(&keys) { "committed" } else { "rolled back" }
                    ));
                    break false;
                }
                // A victim is retried until the run ends; one still failing then is left out
                // (a cap on the attempts made errors of PostgreSQL's busiest SERIALIZABLE
                // runs, where a New-Order can fail to serialize a hundred times in a row).
                Outcome::Retry if Instant::now() < end => {
                    tally.retries += 1;
                    // A random pause growing with the attempts: retried at once, the same
                    // transactions meet again and fail again (at SERIALIZABLE on a small
                    // database, a hundred times in a row).
                    let most = 200 * u64::from(attempts.min(25));
                    let pause = backoff.next() % most;
                    std::thread::sleep(Duration::from_micros(pause));
                }
                Outcome::Retry => {
                    tally.abandoned += 1;
                    break false;
                }
                Outcome::Error(e) => {
                    tally.errors += 1;
                    shared.error(format!("{}: {}: {e}\nin:\n{sql}", dialect.engine(), KINDS[kind]));
                    break false;
                }
                Outcome::Broken(e) => {
                    tally.errors += 1;
                    shared.error(format!("{}: connection lost: {e}", dialect.engine()));
                    shared.stop.store(true, Ordering::Relaxed);
                    return tally;
                }
            }
        };
        if ok {
            tally.done[kind] += 1;
            let micros = began.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
            tally.latencies[kind].push(micros);
        }
        shared.transactions.fetch_add(1, Ordering::Relaxed);
    }
    tally
}

/// Runs the mix against one engine with `clients` clients for `duration`.
fn run_mix(
    target: &Target,
    args: &TpccArgs,
    keys: Keys,
    mode: Mode,
    clients: u32,
    salt: u64,
) -> Result<(Run, Vec<String>), String> {
    let dialect = target.dialect();
    let what = format!("{} {} {clients} clients", dialect.engine(), mode.name());
    let conns = (0..clients)
        .map(|_| target.connect(args.isolation, mode))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{what}: {e}"))?;
    let shared = Arc::new(Shared::default());
    let start = Arc::new(Barrier::new(conns.len() + 1));
    let duration = Duration::from_secs(args.duration_s);
    let threads: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, conn)| {
            let (shared, start) = (Arc::clone(&shared), Arc::clone(&start));
            // Each client its own stream of choices, the same in both engines.
            let rng = Rng(args.seed ^ salt.wrapping_mul(0x1000_0001) ^ (i as u64 + 1) << 32);
            let home = i as u32 % args.warehouses + 1;
            std::thread::spawn(move || {
                start.wait();
                let end = Instant::now() + duration;
                client_loop(conn, dialect, keys, rng, home, end, &shared)
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    while !threads.iter().all(|t| t.is_finished()) {
        let secs = began.elapsed().as_secs_f64();
        let done = shared.transactions.load(Ordering::Relaxed);
        let line = format!("{what:<32} {secs:>6.1} s {:>9.0} tx/s", done as f64 / secs.max(1e-9));
        show_progress(&line, false);
        std::thread::sleep(Duration::from_millis(200));
    }
    let elapsed = began.elapsed();
    let mut run =
        Run { engine: dialect.engine(), mode, clients, elapsed, counts: Tally::default() };
    for thread in threads {
        let tally = thread.join().map_err(|_| format!("{what}: a client thread panicked"))?;
        run.counts.add(&tally);
    }
    for l in &mut run.counts.latencies {
        l.sort_unstable();
    }
    let line = format!(
        "{what:<32} {:>6.1} s {:>9.0} tx/s, tpmC {:.0}",
        elapsed.as_secs_f64(),
        run.tx_per_s(),
        run.tpmc()
    );
    show_progress(&line, true);
    let errors = std::mem::take(&mut *shared.errors.lock().unwrap_or_else(|e| e.into_inner()));
    Ok((run, errors))
}

/// Creates the schema and loads the initial database through `conn`; the load's time.
fn load_engine(
    conn: &mut Conn,
    dialect: Dialect,
    keys: &Keys,
    seed: u64,
) -> Result<Duration, String> {
    for ddl in load::schema(dialect) {
        conn.setup(&ddl)?;
    }
    let began = Instant::now();
    let mut batches = 0u64;
    let rows = load::populate(dialect, keys, keys.warehouses, seed, &mut |batch| {
        batches += 1;
        if batches.is_multiple_of(16) {
            let line =
                format!("loading {}: {:.0} s", dialect.engine(), began.elapsed().as_secs_f64());
            show_progress(&line, false);
        }
        conn.setup(batch).map_err(|e| format!("{} load: {}", dialect.engine(), first_lines(&e)))
    })?;
    let took = began.elapsed();
    show_progress(
        &format!("loaded {}: {rows} rows in {:.1} s", dialect.engine(), took.as_secs_f64()),
        true,
    );
    Ok(took)
}

/// Checks what the runs left against what the clients counted, with TPC-C's consistency
/// conditions 1 and 2 (clause 3.3.2): every warehouse's YTD is its districts' sum, every
/// district's next order id follows its last order; and one order per committed New-Order
/// and one history row per Payment beyond the initial ones, each with its customer (a
/// lookup by last name that found none would leave it NULL). The problems, if any.
fn check_consistency(conn: &mut Conn, keys: &Keys, runs: &[&Run]) -> Result<Vec<String>, String> {
    let figures = conn.numbers(
        "SELECT CAST((SELECT COUNT(*) FROM warehouse WHERE w_ytd <> \
         (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id)) AS BIGINT), \
         CAST((SELECT COUNT(*) FROM district WHERE d_next_o_id - 1 <> \
         (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id)) AS BIGINT), \
         CAST((SELECT COUNT(*) FROM orders) AS BIGINT), \
         CAST((SELECT COUNT(*) FROM history) AS BIGINT), \
         CAST((SELECT COUNT(*) FROM history WHERE h_c_id IS NULL) AS BIGINT)",
    )?;
    let [bad_ytd, bad_next, orders, history, lost] = figures[..] else {
        return Err(format!("expected five figures, got {figures:?}"));
    };
    let initial = i64::from(keys.warehouses) * 10 * i64::from(keys.customers);
    let sum = |k: usize| runs.iter().map(|r| r.counts.done[k]).sum::<u64>() as i64;
    let rolled_back = runs.iter().map(|r| r.counts.rolled_back).sum::<u64>() as i64;
    let mut problems = Vec::new();
    if bad_ytd != 0 {
        problems.push(format!("{bad_ytd} warehouse(s) whose w_ytd is not the sum of d_ytd"));
    }
    if bad_next != 0 {
        problems.push(format!("{bad_next} district(s) whose d_next_o_id - 1 is not MAX(o_id)"));
    }
    if lost != 0 {
        problems.push(format!("{lost} payment(s) whose customer was not found"));
    }
    let expected_orders = initial + sum(0) - rolled_back;
    if orders != expected_orders {
        problems.push(format!("{orders} orders, expected {expected_orders}"));
    }
    if history != initial + sum(1) {
        problems.push(format!("{history} history rows, expected {}", initial + sum(1)));
    }
    Ok(problems)
}

/// An error's first lines: a failed load batch would print a megabyte of INSERT.
fn first_lines(text: &str) -> String {
    let mut out: String = text.lines().take(3).collect::<Vec<_>>().join("\n");
    if out.len() > 600 {
        out.truncate(600);
        out.push_str("...");
    }
    out
}

/// Runs the benchmark and prints its table.
pub fn run(args: &TpccArgs) -> Result<(), String> {
    if args.clients.is_empty() || args.clients.iter().any(|&c| c == 0 || c > 1000) {
        return Err("--clients: give client counts from 1 to 1000".into());
    }
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new()
        .prefix("walden-bench-tpcc-")
        .tempdir_in(&parent)
        .map_err(|e| format!("temporary directory in {}: {e}", parent.display()))?;
    let mut rng = Rng(args.seed);
    let keys = Keys::new(&mut rng, args.warehouses, args.items, args.customers);
    let data_seed = rng.next();

    // Walden.
    let password = random_password()?;
    let max_clients = args.clients.iter().copied().max().unwrap_or(1);
    let server = Server::start(&tmp.path().join("walden"), &password, (max_clients + 8).max(256))?;
    eprintln!("walden serve on 127.0.0.1:{} (data in {})", server.port, tmp.path().display());
    let mut options = ConnectOptions::new(&format!("127.0.0.1,{}", server.port), "sa", &password)?;
    options.app_name = "walden bench tpcc".into();
    let mut admin = Client::connect(&options).map_err(|e| format!("logging in: {e}"))?;
    run_sql(&mut admin, &format!("CREATE DATABASE {DATABASE}"))?;
    run_sql(&mut admin, &format!("USE {DATABASE}"))?;
    options.database = DATABASE.into();
    let walden = Target::Walden(options);
    let mut loads = Vec::new();
    {
        let mut conn = walden.connect(Isolation::ReadCommitted, Mode::Durable)?;
        loads.push(("Walden", load_engine(&mut conn, Dialect::TSql, &keys, data_seed)?));
    }

    // PostgreSQL.
    let cluster = if args.no_postgres {
        None
    } else {
        let cluster = Cluster::start(&tmp.path().join("postgres"), &["max_connections=1100"])?;
        let target = Target::Postgres(cluster.config());
        let mut conn = target.connect(Isolation::ReadCommitted, Mode::Durable)?;
        loads.push(("PostgreSQL", load_engine(&mut conn, Dialect::Postgres, &keys, data_seed)?));
        // The planner's statistics, which a freshly loaded PostgreSQL has none of.
        conn.setup("VACUUM ANALYZE")?;
        Some((cluster, target))
    };

    let mut runs = Vec::new();
    let mut errors = Vec::new();
    let mut salt = 0;
    for &mode in &args.modes {
        let setting = if mode == Mode::Durable { "DISABLED" } else { "FORCED" };
        run_sql(
            &mut admin,
            &format!("ALTER DATABASE {DATABASE} SET DELAYED_DURABILITY = {setting}"),
        )?;
        for &clients in &args.clients {
            salt += 1;
            let mut targets = vec![&walden];
            if let Some((_, target)) = &cluster {
                targets.push(target);
            }
            for target in targets {
                let (run, said) = run_mix(target, args, keys, mode, clients, salt)?;
                errors.extend(said);
                runs.push(run);
            }
        }
    }
    // What the runs left must match what the clients counted.
    let mut checks =
        vec![(Dialect::TSql, walden.connect(Isolation::ReadCommitted, Mode::Durable)?)];
    if let Some((_, target)) = &cluster {
        checks.push((Dialect::Postgres, target.connect(Isolation::ReadCommitted, Mode::Durable)?));
    }
    for (dialect, mut conn) in checks {
        let engine = dialect.engine();
        let mine: Vec<&Run> = runs.iter().filter(|r| r.engine == engine).collect();
        for problem in check_consistency(&mut conn, &keys, &mine)? {
            errors.push(format!("{engine}: inconsistent after the runs: {problem}"));
        }
    }
    let peak_kb = server.peak_rss_kb();
    drop(admin);
    drop(server);
    drop(cluster);

    if args.json {
        println!("{}", json(args, &runs, &loads, peak_kb, &errors));
    } else {
        print_report(args, &runs, &loads, peak_kb, &errors);
    }
    Ok(())
}

/// Walden's run next to PostgreSQL's with the same mode and clients.
fn pairs(runs: &[Run]) -> Vec<(&Run, &Run)> {
    runs.iter()
        .filter(|r| r.engine == "Walden")
        .filter_map(|w| {
            let pg = runs
                .iter()
                .find(|p| p.engine == "PostgreSQL" && p.mode == w.mode && p.clients == w.clients)?;
            Some((w, pg))
        })
        .collect()
}

fn print_report(
    args: &TpccArgs,
    runs: &[Run],
    loads: &[(&str, Duration)],
    peak_kb: u64,
    errors: &[String],
) {
    println!(
        "TPC-C mix: {} warehouse(s), {} items, {} customers per district, {} s per run, {}",
        args.warehouses,
        args.items,
        args.customers,
        args.duration_s,
        args.isolation.sql()
    );
    for (engine, took) in loads {
        println!("load {engine}: {:.1} s", took.as_secs_f64());
    }
    println!();
    let mut header =
        format!("{:<10} {:<8} {:>7} {:>9} {:>8}", "engine", "mode", "clients", "tpmC", "tx/s");
    for kind in ["NO", "P", "OS", "D", "SL"] {
        let _ = write!(header, " {:>13}", format!("{kind} p50/p95"));
    }
    let _ = write!(header, " {:>7} {:>7} {:>6}", "retries", "errors", "rbk");
    println!("{header}");
    for r in runs {
        let mut line = format!(
            "{:<10} {:<8} {:>7} {:>9.0} {:>8.1}",
            r.engine,
            r.mode.name(),
            r.clients,
            r.tpmc(),
            r.tx_per_s()
        );
        for k in 0..5 {
            let cell = match (r.percentile_ms(k, 0.5), r.percentile_ms(k, 0.95)) {
                (Some(p50), Some(p95)) => format!("{p50:.1}/{p95:.1}"),
                _ => "-".into(),
            };
            let _ = write!(line, " {cell:>13}");
        }
        let _ = write!(
            line,
            " {:>7} {:>7} {:>6}",
            r.counts.retries, r.counts.errors, r.counts.rolled_back
        );
        println!("{line}");
    }
    println!(
        "(latencies in ms, retries included; NO New-Order, P Payment, OS Order-Status, \
         D Delivery, SL Stock-Level; rbk: New-Orders rolled back on their unused item)"
    );
    for r in runs.iter().filter(|r| r.counts.abandoned > 0) {
        println!(
            "{} {} {} clients: {} transaction(s) still being retried when the run ended, \
             not counted",
            r.engine,
            r.mode.name(),
            r.clients,
            r.counts.abandoned
        );
    }
    let pairs = pairs(runs);
    if !pairs.is_empty() {
        println!();
        for (w, pg) in pairs {
            let ratio = w.tpmc() / pg.tpmc().max(1e-9);
            let (target, name) = if w.mode == Mode::Durable {
                (0.5, "PostgreSQL synchronous_commit = on")
            } else {
                (1.0, "PostgreSQL synchronous_commit = off")
            };
            println!(
                "Walden / PostgreSQL, {} {} clients: tpmC {ratio:.2}x, tx/s {:.2}x (target >= {target} of {name}) {}",
                w.mode.name(),
                w.clients,
                w.tx_per_s() / pg.tx_per_s().max(1e-9),
                if ratio >= target { "PASS" } else { "MISS" }
            );
        }
    }
    println!();
    println!("Walden server peak RSS: {} MB (VmHWM)", peak_kb / 1024);
    if !errors.is_empty() {
        println!();
        println!("first errors:");
        for e in errors {
            println!("  {}", e.replace('\n', "\n    "));
        }
    }
}

fn json(
    args: &TpccArgs,
    runs: &[Run],
    loads: &[(&str, Duration)],
    peak_kb: u64,
    errors: &[String],
) -> String {
    let mut out = format!(
        "{{\"warehouses\": {}, \"items\": {}, \"customers\": {}, \"duration_s\": {}, \
         \"isolation\": \"{}\", \"walden_peak_rss_kb\": {peak_kb}, \"load_s\": {{",
        args.warehouses,
        args.items,
        args.customers,
        args.duration_s,
        args.isolation.sql()
    );
    let load: Vec<String> =
        loads.iter().map(|(e, d)| format!("\"{e}\": {:.3}", d.as_secs_f64())).collect();
    out += &load.join(", ");
    out += "}, \"runs\": [";
    let mut each = Vec::new();
    for r in runs {
        let mut text = format!(
            "{{\"engine\": \"{}\", \"mode\": \"{}\", \"clients\": {}, \"seconds\": {:.3}, \
             \"tpmc\": {:.1}, \"tx_per_s\": {:.2}, \"retries\": {}, \"abandoned\": {}, \"errors\": {}, \
             \"new_orders_rolled_back\": {}, \"transactions\": {{",
            r.engine,
            r.mode.name(),
            r.clients,
            r.elapsed.as_secs_f64(),
            r.tpmc(),
            r.tx_per_s(),
            r.counts.retries,
            r.counts.abandoned,
            r.counts.errors,
            r.counts.rolled_back
        );
        let kinds: Vec<String> = (0..5)
            .map(|k| {
                let ms = |p| r.percentile_ms(k, p).map_or("null".into(), |v| format!("{v:.3}"));
                format!(
                    "\"{}\": {{\"count\": {}, \"p50_ms\": {}, \"p95_ms\": {}}}",
                    KINDS[k],
                    r.counts.done[k],
                    ms(0.5),
                    ms(0.95)
                )
            })
            .collect();
        text += &kinds.join(", ");
        text += "}}";
        each.push(text);
    }
    out += &each.join(", ");
    out += "], \"ratios\": [";
    let ratios: Vec<String> = pairs(runs)
        .into_iter()
        .map(|(w, pg)| {
            format!(
                "{{\"mode\": \"{}\", \"clients\": {}, \"tpmc\": {:.3}, \"tx_per_s\": {:.3}}}",
                w.mode.name(),
                w.clients,
                w.tpmc() / pg.tpmc().max(1e-9),
                w.tx_per_s() / pg.tx_per_s().max(1e-9)
            )
        })
        .collect();
    out += &ratios.join(", ");
    out += "], \"errors\": [";
    let errs: Vec<String> = errors.iter().map(|e| format!("\"{}\"", json_escape(e))).collect();
    out += &errs.join(", ");
    out += "]}";
    out
}
