//! `walden bench`: benchmarks that report ratios measured side by side in one run, because the
//! machines they run on are shared and noisy.

mod bulk;
mod connections;
mod log;
mod pg_cluster;
mod queries;
mod seed001;
mod seed003;
mod serve;
mod storage;
mod tpcc;

use std::fmt::Write as _;
use std::io::IsTerminal;

use clap::Subcommand;

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Loading 1,000,000 rows three ways, side by side: Walden's bulk copy over TDS, the same
    /// rows as batched INSERTs against the same server, and PostgreSQL's COPY FROM STDIN.
    Bulk(bulk::BulkBenchArgs),
    /// What connections cost the server: 10,000 silent plus 2,000 half-open ones, then
    /// 1,000 and 5,000 idle logged-in sessions; its RSS and threads, and a prober's login
    /// latency throughout.
    Connections(connections::ConnectionsArgs),
    /// The log manager alone: the disk's raw fdatasync rate, then commits/s with 1, 4, 16 and
    /// 64 threads, fully durable and delayed.
    Log(log::LogBenchArgs),
    /// The engine through its Rust API: one big transaction against as many small delayed
    /// ones, and small fully durable ones against the disk's raw fdatasync time.
    Storage(storage::StorageBenchArgs),
    /// Seed 001's test over TDS: N clients each running the article's three-INSERT
    /// transaction against a `walden serve`, fully durable then delayed, then with many
    /// clients; tx/s and log flushes next to the article's.
    Seed001(seed001::Seed001Args),
    /// Seed 003's experiments in T-SQL (small vs big, full vs delayed, tempdb, sequence
    /// caches), printed next to the article's figures.
    Seed003(seed003::Seed003Args),
    /// The same queries (key lookups in a loop, seeks, two- to five-table joins, outer,
    /// semi and anti joins, grouping, top-N, subqueries; TPC-H's 22 with --tpch) over the
    /// same generated data in Walden, SQLite and PostgreSQL: each one's median time, the
    /// ratios, Walden's memory.
    Queries(queries::QueriesArgs),
    /// TPC-C's transaction mix over TDS against a `walden serve` and over PostgreSQL's
    /// protocol against a throwaway PostgreSQL, same clients and scale: tpmC, tx/s and
    /// latencies, fully durable and relaxed, with 4 and 16 clients.
    Tpcc(tpcc::TpccArgs),
}

/// Runs a benchmark.
pub fn run(command: BenchCommand) -> Result<(), String> {
    match command {
        BenchCommand::Bulk(args) => bulk::run(&args),
        BenchCommand::Connections(args) => connections::run(&args),
        BenchCommand::Log(args) => log::run(&args),
        BenchCommand::Storage(args) => storage::run(&args),
        BenchCommand::Seed001(args) => seed001::run(&args),
        BenchCommand::Seed003(args) => seed003::run(&args),
        BenchCommand::Queries(args) => queries::run(&args),
        BenchCommand::Tpcc(args) => tpcc::run(&args),
    }
}

/// A small deterministic generator (SplitMix64): the same seed gives the same rows in every
/// run and on every machine, which a benchmark that compares answers needs.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % u64::from(hi - lo + 1)) as u32
    }
}

/// Shows a progress line on stderr. On a terminal it is redrawn in place; into a file or a
/// pipe only a run's `last` line is written, so that a log of a benchmark is not thousands of
/// redrawn lines.
fn show_progress(line: &str, last: bool) {
    if std::io::stderr().is_terminal() {
        eprint!("\r{line}");
        if last {
            eprintln!();
        }
    } else if last {
        eprintln!("{line}");
    }
}

/// The bar of a progress line: `[#########.....................]  30%` for `done` of `total`.
fn progress_bar(done: u64, total: u64) -> String {
    const WIDTH: u64 = 30;
    let filled = (done * WIDTH / total.max(1)) as usize;
    format!(
        "[{}{}] {:>3}%",
        "#".repeat(filled),
        ".".repeat(WIDTH as usize - filled),
        done * 100 / total.max(1)
    )
}

/// How many times longer the small transactions took than the big one (seed 003's and the
/// storage benchmark's ratio), with a zero-length big run counted as the shortest possible.
fn small_over_big(big_secs: f64, small_secs: f64) -> f64 {
    small_secs / big_secs.max(f64::MIN_POSITIVE)
}

/// Each round's big and small seconds and their ratio, `; `-separated.
fn rounds_text(rounds: &[(f64, f64)]) -> String {
    let each: Vec<String> = rounds
        .iter()
        .map(|&(big, small)| {
            format!("{big:.3} s / {small:.3} s = {:.2}x", small_over_big(big, small))
        })
        .collect();
    each.join("; ")
}

/// `s` as the inside of a JSON string: quotes, backslashes and control characters escaped.
pub(crate) fn json_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}
