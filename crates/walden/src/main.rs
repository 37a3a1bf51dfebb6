//! The `walden` command: the benchmarks today; the server, the SQL shell and the log dump as
//! the layers above the log land.

mod bench;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Walden: a transactional database engine with SQL Server's write-ahead log and delayed
/// durability.
#[derive(Debug, Parser)]
#[command(name = "walden", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a benchmark and print its figures side by side.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bench(command) => bench::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("walden: {message}");
            ExitCode::FAILURE
        }
    }
}
