//! The `walden` command: the benchmarks and the SQL shell today; the server and the log dump
//! as the layers above the log land.

mod allocator;
mod bcp;
mod bench;
mod client;
mod serve;
mod shell;

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
    /// Copy rows between a table and a text file, like SQL Server's bcp in character mode.
    Bcp(Box<bcp::BcpArgs>),
    /// Run a benchmark and print its figures side by side.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Run T-SQL like sqlcmd: a query (-Q), scripts (-i) or an interactive prompt.
    Sql(Box<shell::SqlArgs>),
    /// Serve the instance over SQL Server's wire protocol (TDS 7.4).
    Serve(serve::ServeArgs),
}

fn main() -> ExitCode {
    allocator::keep_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Bcp(args) => bcp::run(*args),
        Command::Bench(command) => bench::run(command),
        Command::Sql(args) => return shell::run(*args),
        Command::Serve(args) => serve::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("walden: {message}");
            ExitCode::FAILURE
        }
    }
}
