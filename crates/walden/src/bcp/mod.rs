//! `walden bcp TABLE in|out|queryout FILE`: SQL Server's `bcp` in character mode, for moving
//! rows between a table and a text file. `in` reads the file and sends its rows with the TDS
//! bulk load (`INSERT BULK` and a Bulk Load message, as bcp does) over a connection (`-S`), or
//! hands them to the same bulk load of an embedded instance (`--data`); `out` writes a table's
//! rows, `queryout` a query's.
//!
//! The file format is bcp's `-c`: fields separated by the field terminator (`-t`, default a
//! tab), rows ended by the row terminator (`-r`, default a newline), text in UTF-8. An empty
//! field is NULL; a field holding one NUL character is the empty string; binary values are
//! hexadecimal digits. Fields are converted to the columns' types here, before they are
//! sent, as bcp converts them on the client: a row that does not convert is reported and
//! skipped, and more than `-m` such rows stop the copy. Each batch (`-b` rows, else the whole
//! file) is one bulk load, committed on its own.

mod file;
mod target;

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use walden_engine::types::{SqlType, Value};

use file::{field_text, record_values, unescape, Records};
use target::{Embedded, Remote, Target};

/// Options of `walden bcp` (bcp's letters).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct BcpArgs {
    /// The table ([database.][schema.]table); with queryout, the query.
    table: String,
    /// in: file to table; out: table to file; queryout: query results to file.
    #[arg(value_enum)]
    direction: Direction,
    /// The data file.
    file: PathBuf,
    /// Character mode (text fields). The only mode walden bcp has; accepted for bcp's sake.
    #[arg(short = 'c')]
    character: bool,
    /// Field terminator; \t, \n, \r, \0 and \\ are understood [default: \t].
    #[arg(short = 't', value_name = "TERM", default_value = "\\t")]
    field_terminator: String,
    /// Row terminator, with the same escapes [default: \n].
    #[arg(short = 'r', value_name = "TERM", default_value = "\\n")]
    row_terminator: String,
    /// The first row of the file to copy in, from 1.
    #[arg(short = 'F', value_name = "N", default_value_t = 1)]
    first_row: u64,
    /// The last row of the file to copy in [default: the end of the file].
    #[arg(short = 'L', value_name = "N")]
    last_row: Option<u64>,
    /// Rows per batch for in: each batch is one bulk load, committed on its own [default: all
    /// rows in one].
    #[arg(short = 'b', value_name = "N")]
    batch_size: Option<u64>,
    /// Rows that fail to convert allowed before the copy stops.
    #[arg(short = 'm', value_name = "N", default_value_t = 10)]
    max_errors: u64,
    /// Keep the identity values of the file (KEEP_IDENTITY) instead of numbering afresh.
    #[arg(short = 'E')]
    keep_identity: bool,
    /// Keep NULLs (KEEP_NULLS) instead of giving empty fields the columns' defaults.
    #[arg(short = 'k')]
    keep_nulls: bool,
    /// Bulk load hints, as bcp's -h: "TABLOCK, CHECK_CONSTRAINTS, FIRE_TRIGGERS, ORDER(...)".
    #[arg(short = 'h', value_name = "HINTS")]
    hints: Option<String>,
    /// Server to connect to over TDS: host[,port] [port: 1433]. Without -S the data
    /// directory is opened in this process.
    #[arg(short = 'S', value_name = "SERVER[,PORT]")]
    server: Option<String>,
    /// Login name for -S [default: sa].
    #[arg(short = 'U', value_name = "LOGIN")]
    user: Option<String>,
    /// Password for -S [default: $SQLCMDPASSWORD].
    #[arg(short = 'P', value_name = "PASSWORD")]
    password: Option<String>,
    /// Database to use.
    #[arg(short = 'd', value_name = "DB")]
    database: Option<String>,
    /// Data directory of the embedded instance [default: $WALDEN_DATA, else ./walden-data].
    #[arg(long, value_name = "DIR", conflicts_with = "server")]
    data: Option<PathBuf>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
}

/// `in`, `out` or `queryout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Direction {
    In,
    Out,
    Queryout,
}

/// How often progress is reported without `-b`, in rows, as bcp does.
const PROGRESS_EVERY: u64 = 1000;

/// Runs `walden bcp`.
pub fn run(args: BcpArgs) -> Result<(), String> {
    let field = unescape(&args.field_terminator)?;
    let row = unescape(&args.row_terminator)?;
    if field.is_empty() || row.is_empty() {
        return Err("the field and row terminators must not be empty".into());
    }
    if args.first_row == 0 || args.batch_size == Some(0) {
        return Err("-F and -b count from 1".into());
    }
    if !args.character {
        eprintln!("walden bcp: only character mode (-c) is supported; using it");
    }
    let mut target: Box<dyn Target> = match &args.server {
        Some(server) => Box::new(Remote::connect(server, &args)?),
        None => Box::new(Embedded::open(&args)?),
    };
    let started = Instant::now();
    let result = match args.direction {
        Direction::In => copy_in(&args, target.as_mut(), &field, &row),
        Direction::Out => {
            copy_out(&format!("SELECT * FROM {}", args.table), &args, target.as_mut(), &field, &row)
        }
        Direction::Queryout => copy_out(&args.table, &args, target.as_mut(), &field, &row),
    };
    let closed = target.close();
    let rows = result?;
    closed?;
    let ms = started.elapsed().as_millis().max(1);
    println!("\n{rows} rows copied.");
    println!("Network packet size (bytes): {}", walden_tds::packet::DEFAULT_PACKET_SIZE);
    println!(
        "Clock Time (ms.) Total     : {ms}     Average : ({:.2} rows per sec.)",
        rows as f64 * 1000.0 / ms as f64
    );
    Ok(())
}

fn copy_in(
    args: &BcpArgs,
    target: &mut dyn Target,
    field: &[u8],
    row: &[u8],
) -> Result<u64, String> {
    let columns = target.columns(&args.table)?;
    let file =
        File::open(&args.file).map_err(|e| format!("cannot open {}: {e}", args.file.display()))?;
    let mut records = Records {
        input: BufReader::with_capacity(1 << 16, file),
        terminator: row.to_vec(),
        buf: Vec::new(),
    };
    let mut options = Vec::new();
    if args.keep_identity {
        options.push("KEEP_IDENTITY".to_string());
    }
    if args.keep_nulls {
        options.push("KEEP_NULLS".to_string());
    }
    if let Some(hints) = &args.hints {
        options.push(hints.clone());
    }
    let list: Vec<String> =
        columns.iter().map(|(name, ty)| format!("[{}] {ty}", name.replace(']', "]]"))).collect();
    let mut statement = format!("INSERT BULK {} ({})", args.table, list.join(", "));
    if !options.is_empty() {
        statement.push_str(&format!(" WITH ({})", options.join(", ")));
    }
    let types: Vec<SqlType> = columns.iter().map(|(_, ty)| *ty).collect();
    let mut line = 0u64;
    let mut errors = 0u64;
    let mut total = 0u64;
    let mut failure: Option<String> = None;
    let mut at_end = false;
    while !at_end && failure.is_none() {
        let mut in_batch = 0u64;
        let mut next = || -> Option<Vec<Value>> {
            if args.batch_size.is_some_and(|b| in_batch >= b) {
                return None;
            }
            loop {
                if args.last_row.is_some_and(|last| line >= last) {
                    at_end = true;
                    return None;
                }
                let record = match records.next_record() {
                    Ok(Some(r)) => r,
                    Ok(None) => {
                        at_end = true;
                        return None;
                    }
                    Err(e) => {
                        failure = Some(format!("reading {}: {e}", args.file.display()));
                        at_end = true;
                        return None;
                    }
                };
                line += 1;
                if line < args.first_row {
                    continue;
                }
                match record_values(&record, field, &types) {
                    Ok(values) => {
                        in_batch += 1;
                        if args.batch_size.is_none()
                            && (total + in_batch).is_multiple_of(PROGRESS_EVERY)
                        {
                            println!(
                                "{PROGRESS_EVERY} rows sent to SQL Server. Total sent: {}",
                                total + in_batch
                            );
                        }
                        return Some(values);
                    }
                    Err(e) => {
                        eprintln!("Error = row {line}: {e}");
                        errors += 1;
                        if errors > args.max_errors {
                            failure = Some(format!(
                                "more than {} rows failed to convert",
                                args.max_errors
                            ));
                            at_end = true;
                            return None;
                        }
                    }
                }
            }
        };
        let loaded = target.load(&statement, &columns, &mut next)?;
        total += loaded;
        if args.batch_size.is_some() && loaded > 0 {
            println!("{loaded} rows sent to SQL Server. Total sent: {total}");
        }
    }
    if let Some(f) = failure {
        return Err(format!("{f}\nBCP copy in failed ({total} rows copied before)"));
    }
    Ok(total)
}

fn copy_out(
    query: &str,
    args: &BcpArgs,
    target: &mut dyn Target,
    field: &[u8],
    row: &[u8],
) -> Result<u64, String> {
    let file = File::create(&args.file)
        .map_err(|e| format!("cannot create {}: {e}", args.file.display()))?;
    let mut out = BufWriter::new(file);
    let mut n = 0u64;
    target.query(query, &mut |types, values| {
        for (i, (v, ty)) in values.iter().zip(types).enumerate() {
            if i > 0 {
                out.write_all(field)?;
            }
            out.write_all(field_text(v, *ty).as_bytes())?;
        }
        out.write_all(row)?;
        n += 1;
        if n.is_multiple_of(PROGRESS_EVERY) {
            println!(
                "{PROGRESS_EVERY} rows successfully bulk-copied to host-file. Total received: {n}"
            );
        }
        Ok(())
    })?;
    out.flush().map_err(|e| format!("writing {}: {e}", args.file.display()))?;
    Ok(n)
}
