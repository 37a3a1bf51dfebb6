//! `walden bench queries`: the same everyday queries over the same generated data in Walden
//! (embedded), SQLite (in-process) and PostgreSQL (a throwaway cluster), in one run, with
//! each query's median time in each engine, the ratios, and Walden's memory (issue 26, part
//! 9). Each query's answer (row count and an order-independent checksum) must be the same in
//! every engine that finished it; a line that differs is marked MISMATCH. With `--tpch` the
//! 22 TPC-H queries follow, on their own tables (see `tpch.rs`).
//!
//! Every query gets one warm-up run and then `--runs` timed runs; one that runs past
//! `--timeout-s` is cancelled and shown as `timeout` (Walden's executor today joins by
//! nested loops over materialized tables, so at the default scale its joins do), one whose
//! Walden worker outgrows `--walden-max-rss-mb` as `oom`. Times are the engine's own: the
//! Walden worker times `execute_batch`, SQLite and PostgreSQL are timed around the client
//! call (for PostgreSQL that includes a loopback round trip).
//!
//! "walden MB" is the Walden worker's peak RSS while the query ran (VmHWM, reset to the
//! current RSS before each query), so it includes what the allocator kept from the queries
//! before; a worker started again after an `oom` starts from its load-time size.

mod data;
mod pg;
mod sqlite;
mod tpch;
mod walden;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;

use data::{Answer, Dataset, Query};

use super::json_escape;

/// Options of `walden bench queries`.
#[derive(Debug, Args)]
pub struct QueriesArgs {
    /// Multiplies every table's rows (1 = 10,000 customers and items, 100,000 orders, about
    /// 300,000 order lines; 0.01 for a quick check).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Timed runs per query and engine, after one warm-up run; the median is reported.
    #[arg(long, default_value_t = 3)]
    runs: u32,
    /// Seconds one run of a query may take in one engine before it is cancelled and reported
    /// as a timeout (its remaining runs are skipped).
    #[arg(long, default_value_t = 30)]
    timeout_s: u64,
    /// Leave PostgreSQL out (otherwise it is started, and installed with apt-get when
    /// missing and running as root).
    #[arg(long)]
    no_postgres: bool,
    /// Leave SQLite out.
    #[arg(long)]
    no_sqlite: bool,
    /// Run only the queries whose names contain this text (may be given more than once).
    #[arg(long, value_name = "TEXT")]
    only: Vec<String>,
    /// Seed of the data generator: the same seed gives the same rows.
    #[arg(long, default_value_t = 26)]
    seed: u64,
    /// The Walden worker's memory limit: a query that takes it past this is ended and
    /// reported as `oom`, and the worker started again.
    #[arg(long, default_value_t = 4096)]
    walden_max_rss_mb: u64,
    /// Directory under which to create the run's directory (default: the system's temp dir).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Keep the run's directory (each engine's data, Walden's in `walden/`) instead of
    /// removing it, to rerun a query by hand; its path is printed at the end.
    #[arg(long)]
    keep: bool,
    /// Also run the 22 TPC-H queries, on data from the `tpchgen` generator.
    #[arg(long)]
    tpch: bool,
    /// TPC-H's scale factor (1 = 6 million lineitem rows; at least 0.01).
    #[arg(long, default_value_t = 0.01)]
    tpch_sf: f64,
    /// Internal: run as the Walden worker on this data directory (see the module docs).
    #[arg(long, hide = true)]
    walden_worker: Option<PathBuf>,
}

/// How one run of a query in one engine ended.
#[derive(Debug, Clone)]
enum Outcome {
    Done(Answer, Duration),
    Timeout,
    OutOfMemory,
    Failed(String),
}

/// A query's figure in one engine: the median of its timed runs, or why there is none.
#[derive(Debug, Clone)]
enum Cell {
    Time(Answer, Duration),
    Timeout,
    OutOfMemory,
    Failed(String),
    Skipped,
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Time(_, d) => format!("{:.2}", d.as_secs_f64() * 1e3),
            Cell::Timeout => "timeout".into(),
            Cell::OutOfMemory => "oom".into(),
            Cell::Failed(_) => "error".into(),
            Cell::Skipped => "-".into(),
        }
    }

    fn millis(&self) -> Option<f64> {
        match self {
            Cell::Time(_, d) => Some(d.as_secs_f64() * 1e3),
            _ => None,
        }
    }

    fn json(&self) -> String {
        match self {
            Cell::Time(a, d) => format!(
                "{{\"ms\": {:.3}, \"rows\": {}, \"checksum\": \"{:016x}\"}}",
                d.as_secs_f64() * 1e3,
                a.rows,
                a.checksum
            ),
            Cell::Failed(e) => format!("{{\"error\": \"{}\"}}", json_escape(e)),
            other => format!("\"{}\"", other.text()),
        }
    }
}

/// Runs a query once for warm-up and then `runs` times; the median time, or why not.
fn measure(runs: u32, mut run: impl FnMut() -> Outcome) -> Cell {
    let mut times = Vec::new();
    let mut answer = Answer::default();
    for _ in 0..=runs {
        match run() {
            Outcome::Done(a, d) => {
                answer = a;
                times.push(d);
            }
            Outcome::Timeout => return Cell::Timeout,
            Outcome::OutOfMemory => return Cell::OutOfMemory,
            Outcome::Failed(e) => return Cell::Failed(e),
        }
    }
    // The first run warmed the caches up; it is not counted.
    let mut timed = times.split_off(1);
    timed.sort();
    Cell::Time(answer, timed[timed.len() / 2])
}

/// One line of the table.
#[derive(Debug)]
struct Line {
    name: String,
    walden: Cell,
    sqlite: Cell,
    postgres: Cell,
    /// Walden's peak RSS while the query ran (its worker's VmHWM), in kB.
    walden_peak_kb: u64,
}

impl Line {
    /// Whether the engines that answered disagree.
    fn mismatch(&self) -> bool {
        let answers: Vec<&Answer> = [&self.walden, &self.sqlite, &self.postgres]
            .into_iter()
            .filter_map(|c| match c {
                Cell::Time(a, _) => Some(a),
                _ => None,
            })
            .collect();
        answers.windows(2).any(|w| w[0] != w[1])
    }

    fn check(&self) -> &'static str {
        if self.mismatch() {
            "MISMATCH"
        } else if [&self.walden, &self.sqlite, &self.postgres]
            .iter()
            .filter(|c| matches!(c, Cell::Time(..)))
            .count()
            < 2
        {
            "-"
        } else {
            "ok"
        }
    }
}

fn ratio(a: &Cell, b: &Cell) -> Option<f64> {
    Some(a.millis()? / b.millis()?.max(1e-6))
}

fn ratio_text(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}x"))
}

const HEADER: &str = "query                 walden ms   sqlite ms  postgres ms   walden/pg  walden/sqlite  walden MB  check";

fn print_line(l: &Line) {
    println!(
        "{:<20} {:>11} {:>11} {:>12} {:>11} {:>14} {:>10}  {}",
        l.name,
        l.walden.text(),
        l.sqlite.text(),
        l.postgres.text(),
        ratio_text(ratio(&l.walden, &l.postgres)),
        ratio_text(ratio(&l.walden, &l.sqlite)),
        if l.walden_peak_kb > 0 { format!("{}", l.walden_peak_kb / 1024) } else { "-".into() },
        l.check()
    );
    for (engine, cell) in [("walden", &l.walden), ("sqlite", &l.sqlite), ("postgres", &l.postgres)]
    {
        if let Cell::Failed(e) = cell {
            println!("    {engine} error: {e}");
        }
    }
    if l.mismatch() {
        for (engine, cell) in
            [("walden", &l.walden), ("sqlite", &l.sqlite), ("postgres", &l.postgres)]
        {
            if let Cell::Time(a, _) = cell {
                println!("    {engine}: {} rows, checksum {:016x}", a.rows, a.checksum);
            }
        }
    }
}

/// The engines of a run.
struct Engines {
    walden: walden::Walden,
    sqlite: Option<sqlite::Sqlite>,
    postgres: Option<pg::Postgres>,
}

/// A set of tables and the queries over them: the everyday queries, or TPC-H. Each is loaded
/// in a database (Walden), file (SQLite) or schema (PostgreSQL) of its own, since both have
/// an `orders` table.
struct Suite {
    name: &'static str,
    tables: Vec<data::Table>,
    queries: Vec<Query>,
    /// The lookup loop's key range (the everyday suite's orders).
    orders: u32,
}

/// Seconds each engine took to load a suite (`None` for an engine left out).
type Loads = [Option<Duration>; 3];

/// Loads `suite` into every engine.
fn load_suite(
    engines: &mut Engines,
    suite: &Suite,
    dir: &std::path::Path,
    first: bool,
    with_sqlite: bool,
) -> Result<Loads, String> {
    let w = &mut engines.walden;
    let load_walden = timed(|| load_walden(w, suite.name, &suite.tables))?;
    if first {
        w.loaded_rss_kb = w.rss_kb()?;
    }
    eprintln!("{}: Walden loaded in {:.1} s", suite.name, load_walden.as_secs_f64());
    let mut load_sqlite = None;
    if with_sqlite {
        let start = Instant::now();
        let path = dir.join(format!("{}.sqlite", suite.name));
        engines.sqlite = Some(sqlite::Sqlite::load(&path, &suite.tables, suite.orders)?);
        load_sqlite = Some(start.elapsed());
        eprintln!("{}: SQLite loaded in {:.1} s", suite.name, start.elapsed().as_secs_f64());
    }
    let mut load_postgres = None;
    if let Some(pg) = engines.postgres.as_mut() {
        let start = Instant::now();
        pg.load(&suite.tables, if first { None } else { Some(suite.name) })?;
        load_postgres = Some(start.elapsed());
        eprintln!(
            "{}: PostgreSQL {} loaded in {:.1} s",
            suite.name,
            pg.version,
            start.elapsed().as_secs_f64()
        );
    }
    Ok([Some(load_walden), load_sqlite, load_postgres])
}

/// Runs every query of a suite in every engine, printing each line as it is measured.
fn run_suite(engines: &mut Engines, queries: &[Query], args: &QueriesArgs) -> Vec<Line> {
    let timeout = Duration::from_secs(args.timeout_s);
    let mut lines = Vec::new();
    for q in queries {
        eprintln!("running {}", q.name);
        let walden = &mut engines.walden;
        let before = walden.peak_kb;
        walden.peak_kb = 0;
        let walden_cell = measure(args.runs, || walden.query(&q.tsql, timeout));
        let walden_peak_kb = walden.peak_kb;
        walden.peak_kb = walden.peak_kb.max(before);
        let sqlite_cell = match engines.sqlite.as_mut() {
            Some(s) => measure(args.runs, || s.query(q, timeout)),
            None => Cell::Skipped,
        };
        let postgres_cell = match engines.postgres.as_mut() {
            Some(p) => measure(args.runs, || p.query(q, timeout)),
            None => Cell::Skipped,
        };
        let line = Line {
            name: q.name.clone(),
            walden: walden_cell,
            sqlite: sqlite_cell,
            postgres: postgres_cell,
            walden_peak_kb,
        };
        if !args.json {
            print_line(&line);
        }
        lines.push(line);
    }
    lines
}

/// Whether `--only` selects the query named `name`.
fn selected(args: &QueriesArgs, name: &str) -> bool {
    args.only.is_empty() || args.only.iter().any(|o| name.contains(o.as_str()))
}

/// Runs the benchmark (or, with `--walden-worker`, is the Walden worker).
pub fn run(args: &QueriesArgs) -> Result<(), String> {
    if let Some(dir) = &args.walden_worker {
        return walden::worker(dir, args.walden_max_rss_mb);
    }
    let positive = |x: f64| !x.is_nan() && x > 0.0;
    if !positive(args.scale) || !positive(args.tpch_sf) || args.runs == 0 || args.timeout_s == 0 {
        return Err("--scale, --tpch-sf, --runs and --timeout-s must be positive".into());
    }
    if args.tpch && args.tpch_sf < 0.01 {
        // Below it the generator's supplier count is so small that PARTSUPP repeats keys.
        return Err("--tpch-sf must be at least 0.01".into());
    }
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new()
        .prefix("walden-bench-queries-")
        .tempdir_in(&parent)
        .map_err(|e| format!("temporary directory in {}: {e}", parent.display()))?;

    let run_start = Instant::now();
    let mut data = data::generate(args.scale, args.seed);
    eprintln!(
        "generated {} customers, {} items, {} orders, {} order lines in {:.1} s",
        data.customers,
        data.items,
        data.orders,
        data.lines,
        run_start.elapsed().as_secs_f64()
    );
    let mut suites = vec![Suite {
        name: "bench",
        queries: data::queries(&data).into_iter().filter(|q| selected(args, &q.name)).collect(),
        tables: std::mem::take(&mut data.tables),
        orders: data.orders,
    }];
    if args.tpch {
        let start = Instant::now();
        let tables = tpch::generate(args.tpch_sf);
        eprintln!(
            "generated TPC-H at SF {} ({} lineitem rows) in {:.1} s",
            args.tpch_sf,
            tables.last().map_or(0, |t| t.rows.len()),
            start.elapsed().as_secs_f64()
        );
        suites.push(Suite {
            name: "tpch",
            queries: tpch::queries(args.tpch_sf)
                .into_iter()
                .filter(|q| selected(args, &q.name))
                .collect(),
            tables,
            orders: data.orders,
        });
    }

    let mut engines = Engines {
        walden: walden::Walden::start(&tmp.path().join("walden"), args.walden_max_rss_mb)?,
        sqlite: None,
        postgres: None,
    };
    if !args.no_postgres {
        engines.postgres = Some(pg::Postgres::start(&tmp.path().join("postgres"))?);
    }

    let mut loads = Vec::new();
    let mut lines = Vec::new();
    for (i, suite) in suites.iter().enumerate() {
        loads.push(load_suite(&mut engines, suite, tmp.path(), i == 0, !args.no_sqlite)?);
        if !args.json {
            if i == 0 {
                println!(
                    "walden bench queries: scale {} ({} customers, {} items, {} orders, {} \
                     order lines), median of {} runs after a warm-up, timeout {} s",
                    args.scale,
                    data.customers,
                    data.items,
                    data.orders,
                    data.lines,
                    args.runs,
                    args.timeout_s
                );
            } else {
                println!();
                println!("TPC-H at scale factor {} (tpchgen)", args.tpch_sf);
            }
            println!();
            println!("{HEADER}");
        }
        lines.extend(run_suite(&mut engines, &suite.queries, args));
    }
    let Engines { mut walden, sqlite, postgres } = engines;
    let restarts = walden.restarts;
    let peak_kb = walden.peak_kb;
    let loaded_kb = walden.loaded_rss_kb;
    walden.close();
    drop(postgres);
    drop(sqlite);

    if args.json {
        print_json(args, &data, &lines, &loads, loaded_kb, peak_kb, restarts);
    } else {
        println!();
        for (suite, load) in suites.iter().zip(&loads) {
            let load_text: Vec<String> = ["walden", "sqlite", "postgres"]
                .iter()
                .zip(load)
                .filter_map(|(name, d)| Some(format!("{name} {:.1} s", d.as_ref()?.as_secs_f64())))
                .collect();
            println!("load {}: {}", suite.name, load_text.join(", "));
        }
        println!(
            "Walden RSS after loading: {} MB; peak RSS over the queries: {} MB (VmHWM){}",
            loaded_kb / 1024,
            peak_kb / 1024,
            if restarts > 0 {
                format!("; worker restarted {restarts} time(s) after oom or an ignored cancel")
            } else {
                String::new()
            }
        );
        println!("whole run: {:.0} s", run_start.elapsed().as_secs_f64());
        let mismatches = lines.iter().filter(|l| l.mismatch()).count();
        if mismatches > 0 {
            println!("{mismatches} MISMATCH(ES): the engines' answers differ");
        }
    }
    if args.keep {
        eprintln!("kept the run's directory: {}", tmp.keep().display());
    }
    Ok(())
}

fn timed(f: impl FnOnce() -> Result<(), String>) -> Result<Duration, String> {
    let start = Instant::now();
    f()?;
    Ok(start.elapsed())
}

/// Creates Walden's database `db` with `tables` and inserts the rows, a few thousand per
/// batch and transaction; the session stays in `db` for the queries that follow.
fn load_walden(
    walden: &mut walden::Walden,
    db: &str,
    tables: &[data::Table],
) -> Result<(), String> {
    walden.exec(&format!(
        "CREATE DATABASE {db}; ALTER DATABASE {db} SET DELAYED_DURABILITY = Forced;"
    ))?;
    walden.exec(&format!("USE {db};"))?;
    walden.on_restart = Some(format!("USE {db};"));
    for table in tables {
        walden.exec(&table.ddl.join(";\n"))?;
        let inserts = data::insert_statements(table);
        for chunk in inserts.chunks(5) {
            walden.exec(&format!("BEGIN TRAN;\n{};\nCOMMIT;", chunk.join(";\n")))?;
        }
    }
    // Delayed durability only sped the load up: the queries read, and a worker started
    // again after an oom must find every row, so the log is hardened here.
    walden.exec(&format!(
        "EXEC sys.sp_flush_log; ALTER DATABASE {db} SET DELAYED_DURABILITY = Disabled;"
    ))
}

#[allow(clippy::too_many_arguments)]
fn print_json(
    args: &QueriesArgs,
    data: &Dataset,
    lines: &[Line],
    loads: &[Loads],
    loaded_kb: u64,
    peak_kb: u64,
    restarts: u32,
) {
    let mut out = String::from("{");
    let _ = write!(
        out,
        "\"scale\": {}, \"runs\": {}, \"timeout_s\": {}, \"customers\": {}, \"items\": {}, \
         \"orders\": {}, \"order_lines\": {}, ",
        args.scale, args.runs, args.timeout_s, data.customers, data.items, data.orders, data.lines
    );
    let load = |d: Option<Duration>| d.map_or("null".into(), |d| format!("{:.3}", d.as_secs_f64()));
    out.push_str("\"load_s\": [");
    for (i, l) in loads.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(
            out,
            "{{\"walden\": {}, \"sqlite\": {}, \"postgres\": {}}}",
            load(l[0]),
            load(l[1]),
            load(l[2])
        );
    }
    out.push_str("], ");
    let _ = write!(
        out,
        "\"walden_rss_loaded_kb\": {loaded_kb}, \"walden_peak_rss_kb\": {peak_kb}, \
         \"walden_restarts\": {restarts}, \"queries\": ["
    );
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let r = |r: Option<f64>| r.map_or("null".into(), |r| format!("{r:.3}"));
        let _ = write!(
            out,
            "{{\"name\": \"{}\", \"walden\": {}, \"sqlite\": {}, \"postgres\": {}, \
             \"walden_over_postgres\": {}, \"walden_over_sqlite\": {}, \
             \"walden_peak_rss_kb\": {}, \"match\": {}}}",
            l.name,
            l.walden.json(),
            l.sqlite.json(),
            l.postgres.json(),
            r(ratio(&l.walden, &l.postgres)),
            r(ratio(&l.walden, &l.sqlite)),
            l.walden_peak_kb,
            !l.mismatch()
        );
    }
    out.push_str("]}");
    println!("{out}");
}
