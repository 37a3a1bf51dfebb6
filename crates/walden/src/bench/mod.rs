//! `walden bench`: benchmarks that report ratios measured side by side in one run, because the
//! machines they run on are shared and noisy.

mod log;
mod storage;

use clap::Subcommand;

/// The benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// The log manager alone: the disk's raw fdatasync rate, then commits/s with 1, 4, 16 and
    /// 64 threads, fully durable and delayed.
    Log(log::LogBenchArgs),
    /// The engine through its Rust API: one big transaction against as many small delayed
    /// ones, and small fully durable ones against the disk's raw fdatasync time.
    Storage(storage::StorageBenchArgs),
}

/// Runs a benchmark.
pub fn run(command: BenchCommand) -> Result<(), String> {
    match command {
        BenchCommand::Log(args) => log::run(&args),
        BenchCommand::Storage(args) => storage::run(&args),
    }
}
