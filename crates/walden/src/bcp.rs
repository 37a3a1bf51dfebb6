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

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};
use walden_engine::types::{SqlType, Value};
use walden_sql::exec::bulk::{BulkRows, BulkStop};
use walden_sql::exec::scalar::coerce;
use walden_sql::exec::{Collected, ColumnInfo, Counted, Message, Output, Session};
use walden_tds::{Column, TdsValue};

use crate::client::{Client, ConnectOptions, Event};
use crate::serve::convert::{from_wire, to_wire, type_info};

/// The data directory when neither `--data` nor `WALDEN_DATA` names one (as `walden sql`).
const DEFAULT_DATA_DIR: &str = "walden-data";

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

/// A bcp terminator with its escapes undone.
fn unescape(text: &str) -> Result<Vec<u8>, String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            other => {
                return Err(format!(
                    "unknown escape \\{} in terminator '{text}'",
                    other.map(String::from).unwrap_or_default()
                ))
            }
        }
    }
    Ok(out.into_bytes())
}

/// Takes one row of a query (the result's column types, the row's values) and writes it.
type RowWriter<'a> = dyn FnMut(&[SqlType], Vec<Value>) -> io::Result<()> + 'a;

/// Where rows go and come from: a server, or an embedded instance.
trait Target {
    /// The names and types of the columns of `table`.
    fn columns(&mut self, table: &str) -> Result<Vec<(String, SqlType)>, String>;
    /// Runs `statement` (an `INSERT BULK`), then loads the rows `next` gives; the number
    /// loaded, or the server's errors as text.
    fn load(
        &mut self,
        statement: &str,
        columns: &[(String, SqlType)],
        next: &mut dyn FnMut() -> Option<Vec<Value>>,
    ) -> Result<u64, String>;
    /// Runs `query`, handing each row to `row`; its column types come first.
    fn query(&mut self, query: &str, row: &mut RowWriter<'_>) -> Result<(), String>;
    fn close(&mut self) -> Result<(), String>;
}

/// The engine type of a result column's wire type (a bare NULL column is INT, as in SQL
/// Server).
fn wire_type(ty: &walden_tds::TypeInfo) -> SqlType {
    crate::serve::convert::sql_type(ty).unwrap_or(SqlType::Int)
}

fn message_text(number: i32, class: u8, state: u8, text: &str) -> String {
    format!("Msg {number}, Level {class}, State {state}: {text}")
}

/// A connection to a server.
struct Remote {
    client: Client,
}

impl Remote {
    fn connect(server: &str, args: &BcpArgs) -> Result<Remote, String> {
        let password = match &args.password {
            Some(p) => p.clone(),
            None => std::env::var("SQLCMDPASSWORD").unwrap_or_default(),
        };
        let mut options =
            ConnectOptions::new(server, args.user.as_deref().unwrap_or("sa"), &password)?;
        options.app_name = "walden bcp".into();
        options.database = args.database.clone().unwrap_or_default();
        let client = Client::connect(&options).map_err(|e| e.to_string())?;
        Ok(Remote { client })
    }
}

impl Target for Remote {
    fn columns(&mut self, table: &str) -> Result<Vec<(String, SqlType)>, String> {
        let answer = self
            .client
            .batch_collect(&format!("SET FMTONLY ON; SELECT * FROM {table}; SET FMTONLY OFF"))
            .map_err(|e| e.to_string())?;
        if let Some(m) = answer.errors().next() {
            return Err(message_text(m.number, m.class, m.state, &m.message));
        }
        let set = answer.result_sets.first().ok_or("the table returned no columns")?;
        Ok(set.columns.iter().map(|c| (c.name.clone(), wire_type(&c.ty))).collect())
    }

    fn load(
        &mut self,
        statement: &str,
        columns: &[(String, SqlType)],
        next: &mut dyn FnMut() -> Option<Vec<Value>>,
    ) -> Result<u64, String> {
        let wire: Vec<Column> =
            columns.iter().map(|(name, ty)| Column::new(name, type_info(*ty), true)).collect();
        let mut load =
            match self.client.bulk_load(statement, wire.clone()).map_err(|e| e.to_string())? {
                Ok(load) => load,
                Err(refused) => {
                    let m = refused
                        .errors()
                        .next()
                        .map(|m| message_text(m.number, m.class, m.state, &m.message));
                    return Err(m.unwrap_or_default());
                }
            };
        let mut values: Vec<TdsValue> = Vec::with_capacity(columns.len());
        while let Some(row) = next() {
            values.clear();
            for ((v, (_, ty)), c) in row.into_iter().zip(columns).zip(&wire) {
                values.push(to_wire(*ty, &c.ty, v)?);
            }
            load.row(&values).map_err(|e| e.to_string())?;
        }
        let answer = load.finish().map_err(|e| e.to_string())?;
        if let Some(m) = answer.errors().next() {
            return Err(message_text(m.number, m.class, m.state, &m.message));
        }
        Ok(answer.counts.iter().sum())
    }

    fn query(&mut self, query: &str, row: &mut RowWriter<'_>) -> Result<(), String> {
        let mut types = Vec::new();
        let mut failure: Option<String> = None;
        self.client
            .batch(query, &mut |event| match event {
                Event::Columns(columns) => {
                    types = columns.iter().map(|c| wire_type(&c.ty)).collect();
                }
                Event::Row(values) if failure.is_none() => {
                    let values: Result<Vec<Value>, String> =
                        values.into_iter().map(from_wire).collect();
                    let written = values.and_then(|v| row(&types, v).map_err(|e| e.to_string()));
                    if let Err(e) = written {
                        failure = Some(e);
                    }
                }
                Event::Message(m) if m.class > 10 && failure.is_none() => {
                    failure = Some(message_text(m.number, m.class, m.state, &m.message));
                }
                _ => {}
            })
            .map_err(|e| e.to_string())?;
        failure.map_or(Ok(()), Err)
    }

    fn close(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// An instance opened in this process.
struct Embedded {
    instance: Arc<walden_engine::Instance>,
    session: Session,
}

impl Embedded {
    fn open(args: &BcpArgs) -> Result<Embedded, String> {
        let dir = args
            .data
            .clone()
            .or_else(|| {
                std::env::var_os("WALDEN_DATA").filter(|d| !d.is_empty()).map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        let instance =
            walden_engine::Instance::open(&dir, walden_engine::InstanceConfig::default())
                .map_err(|e| format!("cannot open the data directory {}: {e}", dir.display()))?;
        let mut session = Session::new(Arc::clone(&instance));
        if let Some(db) = &args.database {
            let mut out = Collected::default();
            session.execute_batch(&format!("USE [{}]", db.replace(']', "]]")), &mut out);
            first_error(&out)?;
        }
        Ok(Embedded { instance, session })
    }
}

fn first_error(out: &Collected) -> Result<(), String> {
    match out.errors().next() {
        Some(m) => Err(message_text(m.number, m.severity, m.state, &m.message)),
        None => Ok(()),
    }
}

/// The rows of a load from a closure, for the embedded session.
struct FnRows<'a>(&'a mut dyn FnMut() -> Option<Vec<Value>>);

impl BulkRows for FnRows<'_> {
    fn next_row(&mut self) -> Result<Option<Vec<Value>>, BulkStop> {
        Ok((self.0)())
    }
}

/// An [`Output`] that hands rows over as they come, for the embedded session's `out`.
struct RowSink<'a> {
    types: Vec<SqlType>,
    row: &'a mut RowWriter<'a>,
    failure: Option<String>,
}

impl Output for RowSink<'_> {
    fn result_set(&mut self, columns: &[ColumnInfo]) {
        self.types = columns.iter().map(|c| c.ty).collect();
    }

    fn row(&mut self, values: &[Value]) {
        if self.failure.is_none() {
            if let Err(e) = (self.row)(&self.types, values.to_vec()) {
                self.failure = Some(e.to_string());
            }
        }
    }

    fn result_end(&mut self, _rows: u64) {}

    fn message(&mut self, m: &Message) {
        if !m.is_info() && self.failure.is_none() {
            self.failure = Some(message_text(m.number, m.severity, m.state, &m.message));
        }
    }

    fn done(&mut self, _rows: Option<u64>) {}

    fn done_counted(&mut self, _kind: Counted, _rows: Option<u64>) {}
}

impl Target for Embedded {
    fn columns(&mut self, table: &str) -> Result<Vec<(String, SqlType)>, String> {
        let mut out = Collected::default();
        self.session.execute_batch(
            &format!("SET FMTONLY ON; SELECT * FROM {table}; SET FMTONLY OFF"),
            &mut out,
        );
        first_error(&out)?;
        let set = out.results.first().ok_or("the table returned no columns")?;
        Ok(set.columns.iter().map(|c| (c.name.clone(), c.ty)).collect())
    }

    fn load(
        &mut self,
        statement: &str,
        _columns: &[(String, SqlType)],
        next: &mut dyn FnMut() -> Option<Vec<Value>>,
    ) -> Result<u64, String> {
        let mut out = Collected::default();
        self.session.execute_batch(statement, &mut out);
        first_error(&out)?;
        self.session.bulk_load(&mut FnRows(next), &mut out);
        first_error(&out)?;
        Ok(out.counts.iter().sum())
    }

    fn query(&mut self, query: &str, row: &mut RowWriter<'_>) -> Result<(), String> {
        let mut sink = RowSink { types: Vec::new(), row, failure: None };
        self.session.execute_batch(query, &mut sink);
        sink.failure.map_or(Ok(()), Err)
    }

    fn close(&mut self) -> Result<(), String> {
        self.session.close();
        self.instance.close().map_err(|e| format!("closing the instance: {e}"))
    }
}

/// Reads records ended by a terminator from a file, without holding more than one.
struct Records<R: BufRead> {
    input: R,
    terminator: Vec<u8>,
    buf: Vec<u8>,
}

impl<R: BufRead> Records<R> {
    /// The next record without its terminator; the file's last record may lack one.
    fn next_record(&mut self) -> io::Result<Option<Vec<u8>>> {
        self.buf.clear();
        let last = *self.terminator.last().unwrap_or(&b'\n');
        loop {
            let n = self.input.read_until(last, &mut self.buf)?;
            if n == 0 {
                return Ok((!self.buf.is_empty()).then(|| std::mem::take(&mut self.buf)));
            }
            if self.buf.ends_with(&self.terminator) {
                self.buf.truncate(self.buf.len() - self.terminator.len());
                return Ok(Some(std::mem::take(&mut self.buf)));
            }
        }
    }
}

/// `text` split at every occurrence of `separator`.
fn split<'t>(text: &'t [u8], separator: &[u8]) -> Vec<&'t [u8]> {
    let mut fields = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + separator.len() <= text.len() {
        if &text[i..i + separator.len()] == separator {
            fields.push(&text[start..i]);
            i += separator.len();
            start = i;
        } else {
            i += 1;
        }
    }
    fields.push(&text[start..]);
    fields
}

/// A field of the file as a value of type `ty` (see the module documentation).
fn field_value(field: &[u8], ty: SqlType) -> Result<Value, String> {
    if field.is_empty() {
        return Ok(Value::Null);
    }
    let text = std::str::from_utf8(field).map_err(|_| "the field is not UTF-8".to_string())?;
    let text = if text == "\0" { "" } else { text };
    let value = match ty {
        SqlType::Binary(_) | SqlType::VarBinary(_) => Value::Binary(from_hex(text)?),
        _ => Value::NStr(text.to_string()),
    };
    coerce(value, ty, false).map_err(|e| e.message)
}

fn from_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    if !digits.len().is_multiple_of(2) {
        return Err(format!("'{text}' is not hexadecimal binary data"));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&digits[i..i + 2], 16)
                .map_err(|_| format!("'{text}' is not hexadecimal binary data"))
        })
        .collect()
}

/// `value` as a field of the file.
fn field_text(value: &Value, ty: SqlType) -> String {
    match (value, ty) {
        (Value::Null, _) => String::new(),
        (Value::Str(s) | Value::NStr(s), _) if s.is_empty() => "\0".into(),
        (Value::Binary(b), _) => b.iter().map(|x| format!("{x:02X}")).collect(),
        (Value::Time(t), SqlType::Time(s)) => t.display(s).to_string(),
        (Value::DateTime2(t), SqlType::DateTime2(s)) => t.display(s).to_string(),
        (Value::DateTimeOffset(t), SqlType::DateTimeOffset(s)) => t.display(s).to_string(),
        (v, _) => v.to_string(),
    }
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

/// The values of one record, a field per column.
fn record_values(record: &[u8], field: &[u8], types: &[SqlType]) -> Result<Vec<Value>, String> {
    let fields = split(record, field);
    if fields.len() != types.len() {
        return Err(format!("{} fields where the table has {} columns", fields.len(), types.len()));
    }
    fields
        .iter()
        .zip(types)
        .enumerate()
        .map(|(i, (f, ty))| field_value(f, *ty).map_err(|e| format!("column {}: {e}", i + 1)))
        .collect()
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn terminators_and_fields() {
        assert_eq!(unescape("\\t").unwrap(), b"\t");
        assert_eq!(unescape("|\\r\\n").unwrap(), b"|\r\n");
        assert!(unescape("\\q").is_err());
        assert_eq!(split(b"a||b||", b"||"), vec![&b"a"[..], b"b", b""]);
        let mut r = Records {
            input: &b"1,x\r\n2,y\r\n3"[..],
            terminator: b"\r\n".to_vec(),
            buf: Vec::new(),
        };
        let mut got = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            got.push(rec);
        }
        assert_eq!(got, vec![b"1,x".to_vec(), b"2,y".to_vec(), b"3".to_vec()]);
    }

    #[test]
    fn fields_round_trip_through_text() {
        let cases = [
            (Value::Null, SqlType::Int),
            (Value::NStr(String::new()), SqlType::NVarChar(walden_engine::types::Len::N(5))),
            (Value::Binary(vec![0xde, 0xad]), SqlType::VarBinary(walden_engine::types::Len::N(5))),
            (Value::Int(-7), SqlType::Int),
        ];
        for (v, ty) in cases {
            let text = field_text(&v, ty);
            assert_eq!(field_value(text.as_bytes(), ty).unwrap(), v, "{text:?}");
        }
        assert!(field_value(b"abc", SqlType::Int).is_err());
    }
}
