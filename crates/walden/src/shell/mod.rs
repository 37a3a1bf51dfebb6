//! `walden sql`: a T-SQL shell with sqlcmd's flags, commands and output, on an instance
//! opened in this process (`--data DIR`) or on a server over TDS (`-S`).
//!
//! `docs/sqlcmd.md` describes every flag and command and where Walden differs from sqlcmd.

mod backend;
mod print;
mod remote;
mod script;
mod vars;

use std::fs::File;
use std::io::{self, BufRead, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use rustyline::error::ReadlineError;

use crate::client::{ClientError, ConnectOptions};
use backend::{Backend, Embedded};
use print::{Format, Printer, Redirect, Style};
use remote::Remote;
use script::{Runner, Step};
use vars::Variables;

/// The data directory when neither `--data` nor `WALDEN_DATA` names one.
const DEFAULT_DATA_DIR: &str = "walden-data";

/// Options of `walden sql` (sqlcmd's letters; `-h` is the header option, so help is
/// `--help` only).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct SqlArgs {
    /// Server to connect to over TDS: host[,port] or tcp:host[,port] [port: 1433]. Without
    /// -S the data directory is opened in this process.
    #[arg(short = 'S', value_name = "SERVER[,PORT]")]
    server: Option<String>,
    /// Login name for -S [default: sa] (the embedded instance has no logins).
    #[arg(short = 'U', value_name = "LOGIN")]
    user: Option<String>,
    /// Password for -S [default: $SQLCMDPASSWORD] (the embedded instance has no logins).
    #[arg(short = 'P', value_name = "PASSWORD")]
    password: Option<String>,
    /// Database to use first: with -S the login's initial database, else USE [db]; exits
    /// with 1 if that fails.
    #[arg(short = 'd', value_name = "DB")]
    database: Option<String>,
    /// Trust the server certificate (-S). Accepted and ignored: the client has no TLS yet.
    #[arg(short = 'C')]
    trust_server_certificate: bool,
    /// Seconds -S may take to connect and log in; 0 waits forever.
    #[arg(short = 'l', value_name = "SECONDS", default_value_t = 8)]
    login_timeout: u64,
    /// Run this query, then exit.
    #[arg(short = 'Q', value_name = "QUERY", conflicts_with_all = ["query", "input"])]
    query_and_exit: Option<String>,
    /// Run this query, then go on interactively.
    #[arg(short = 'q', value_name = "QUERY", conflicts_with = "input")]
    query: Option<String>,
    /// Script files to run in order, then exit (-i a.sql b.sql, -i a.sql,b.sql or several -i).
    #[arg(short = 'i', value_name = "FILE", value_delimiter = ',', num_args = 1..)]
    input: Vec<PathBuf>,
    /// Write results and messages to this file instead of standard output.
    #[arg(short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Stop at the first error (severity over 10) and exit with code 1.
    #[arg(short = 'b')]
    stop_on_error: bool,
    /// Rows per header: -1 prints no headers, n repeats them every n rows [default: one
    /// header per result set].
    #[arg(
        short = 'h',
        value_name = "ROWS",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i64).range(-1..=i64::from(i32::MAX))
    )]
    headers: Option<i64>,
    /// Column separator [default: a space; a comma with --format csv].
    #[arg(short = 's', value_name = "SEP", allow_hyphen_values = true)]
    separator: Option<String>,
    /// Remove trailing spaces and padding: print each value as it is.
    #[arg(short = 'W')]
    trim: bool,
    /// Scripting variables for $(name): -v N=1000 K=100 (they win over :setvar).
    #[arg(short = 'v', value_name = "NAME=VALUE", num_args = 1.., value_parser = vars::parse_assignment)]
    variables: Vec<(String, String)>,
    /// Echo each batch before running it.
    #[arg(short = 'e')]
    echo: bool,
    /// Send errors (-r 0, or -r alone) or every message (-r 1) to standard error.
    #[arg(
        short = 'r',
        value_name = "0|1",
        num_args = 0..=1,
        default_missing_value = "0",
        value_parser = ["0", "1"]
    )]
    redirect: Option<String>,
    /// Data directory of the embedded instance, created if missing [default: $WALDEN_DATA,
    /// else ./walden-data].
    #[arg(long, value_name = "DIR", conflicts_with = "server")]
    data: Option<PathBuf>,
    /// Output format: sqlcmd's text, CSV, or one JSON object per result set.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// Runs `walden sql`; the exit code is 0, or 1 after an error that stops the run.
pub fn run(args: SqlArgs) -> ExitCode {
    if args.server.is_none() && (args.user.is_some() || args.password.is_some()) {
        eprintln!("walden sql: -U and -P are ignored by the embedded instance");
    }
    let mut vars = Variables::new(true);
    for (name, value) in &args.variables {
        if let Err(e) = vars.set_command_line(name, value) {
            eprintln!("walden sql: -v: {e}");
            return ExitCode::from(2);
        }
    }
    let out: Box<dyn Write> = match &args.output {
        Some(path) => match File::create(path) {
            Ok(file) => Box::new(BufWriter::new(file)),
            Err(e) => {
                eprintln!("walden sql: cannot create {}: {e}", path.display());
                return ExitCode::from(1);
            }
        },
        None => Box::new(BufWriter::new(io::stdout())),
    };
    let style = Style {
        format: args.format,
        headers: match args.headers {
            Some(-1) => None,
            Some(n) => Some(u32::try_from(n).unwrap_or(0)),
            None => Some(0),
        },
        separator: args.separator.clone(),
        trim: args.trim,
        redirect: match args.redirect.as_deref() {
            None => Redirect::Nothing,
            Some("1") => Redirect::AllMessages,
            Some(_) => Redirect::Errors,
        },
    };
    let printer = Printer::new(style, out, Box::new(io::stderr()));

    let backend: Box<dyn Backend> = match &args.server {
        Some(server) => match connect(server, &args) {
            Ok(remote) => Box::new(remote),
            Err(lines) => {
                for line in lines {
                    eprintln!("Sqlcmd: Error: {line}");
                }
                return ExitCode::from(1);
            }
        },
        None => {
            let dir = embedded_data_dir(args.data.as_deref());
            match Embedded::open(&dir) {
                Ok(backend) => Box::new(backend),
                Err(e) => {
                    eprintln!("walden sql: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    };
    let mut runner = Runner::new(backend, printer, vars, args.stop_on_error, args.echo);
    let code = drive(&mut runner, &args);
    // Every path ends here, so the instance always hardens its log and checkpoints.
    match runner.close() {
        Ok(()) => ExitCode::from(code),
        Err(e) => {
            eprintln!("walden sql: {e}");
            ExitCode::from(1)
        }
    }
}

/// The embedded instance's data directory: the `--data` flag, else `$WALDEN_DATA`, else
/// `./walden-data`.
pub(crate) fn embedded_data_dir(flag: Option<&std::path::Path>) -> PathBuf {
    flag.map(std::path::Path::to_path_buf)
        .or_else(|| std::env::var_os("WALDEN_DATA").filter(|d| !d.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR))
}

/// The password a login with -S uses: the -P flag, else `$SQLCMDPASSWORD`, as sqlcmd takes it.
pub(crate) fn login_password(flag: Option<&str>) -> String {
    flag.map_or_else(|| std::env::var("SQLCMDPASSWORD").unwrap_or_default(), str::to_string)
}

/// Logs in to `server` with -U (else `sa`), -P (else `$SQLCMDPASSWORD`) and -d; on failure,
/// the lines to print after `Sqlcmd: Error: `: the server's own messages for a refused login
/// (18456 `Login failed for user '...'.`).
fn connect(server: &str, args: &SqlArgs) -> Result<Remote, Vec<String>> {
    let user = args.user.as_deref().unwrap_or("sa");
    let password = login_password(args.password.as_deref());
    let mut options = ConnectOptions::new(server, user, &password).map_err(|e| vec![e])?;
    options.database = args.database.clone().unwrap_or_default();
    options.login_timeout = Duration::from_secs(args.login_timeout);
    Remote::connect(&options).map_err(|e| match e {
        ClientError::Login(messages) if !messages.is_empty() => {
            messages.into_iter().map(|m| m.message).collect()
        }
        other => vec![other.to_string()],
    })
}

/// Runs what the flags ask for; returns the exit code.
fn drive(runner: &mut Runner, args: &SqlArgs) -> u8 {
    // With -S the database was the login's.
    if let (Some(db), None) = (&args.database, &args.server) {
        if !runner.execute_now(&format!("USE [{}]", db.replace(']', "]]"))) {
            return 1;
        }
    }
    if let Some(query) = &args.query_and_exit {
        let step = runner.feed_text(query);
        return to_code(end_input(runner, step));
    }
    if !args.input.is_empty() {
        for path in &args.input {
            // Each file ends its own last batch, as if it ended with GO.
            let step = runner.feed_file(path);
            if let Step::Exit(code) = end_input(runner, step) {
                return code;
            }
        }
        return 0;
    }
    if let Some(query) = &args.query {
        let step = runner.feed_text(query);
        if let Step::Exit(code) = end_input(runner, step) {
            return code;
        }
    }
    if io::stdin().is_terminal() {
        interactive(runner)
    } else {
        let step = read_stdin(runner);
        to_code(end_input(runner, step))
    }
}

/// After input that did not stop the run, runs its last batch.
fn end_input(runner: &mut Runner, step: Step) -> Step {
    match step {
        Step::Continue => runner.finish(),
        exit => exit,
    }
}

fn to_code(step: Step) -> u8 {
    match step {
        Step::Continue => 0,
        Step::Exit(code) => code,
    }
}

/// A script piped into standard input.
fn read_stdin(runner: &mut Runner) -> Step {
    for (i, line) in io::stdin().lock().lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                eprintln!("walden sql: reading standard input: {e}");
                return Step::Exit(1);
            }
        };
        let line = if i == 0 { line.trim_start_matches('\u{feff}') } else { &line };
        if let Step::Exit(code) = runner.feed_line(line) {
            return Step::Exit(code);
        }
    }
    Step::Continue
}

/// The prompt: `1> `, `2> `... with line editing and history. Ctrl-C drops the line being
/// typed; end of input (Ctrl-D) leaves like `QUIT`, without running an unfinished batch.
fn interactive(runner: &mut Runner) -> u8 {
    let mut editor = match rustyline::DefaultEditor::new() {
        Ok(editor) => editor,
        Err(e) => {
            eprintln!("walden sql: cannot set up the terminal: {e}");
            return 1;
        }
    };
    runner.set_interactive();
    loop {
        let prompt = format!("{}> ", runner.prompt_number());
        match editor.readline(&prompt) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    // History is a convenience: a line that cannot be added still runs.
                    let _ = editor.add_history_entry(line.as_str());
                }
                if let Step::Exit(code) = runner.feed_line(&line) {
                    return code;
                }
            }
            Err(ReadlineError::Interrupted) => {}
            Err(ReadlineError::Eof) => return 0,
            Err(e) => {
                eprintln!("walden sql: reading the terminal: {e}");
                return 1;
            }
        }
    }
}
