//! `walden bench bulk`: loading N rows (1,000,000 by default) three ways in one run, side by
//! side: Walden's bulk copy over TDS (`INSERT BULK` and one Bulk Load message, as bcp and
//! the drivers' bulk APIs send it), the same rows as batched INSERTs against the same
//! `walden serve` (`--batch-rows` rows per `INSERT ... VALUES` statement, each statement its
//! own transaction), and PostgreSQL's `COPY FROM STDIN` of the same rows into the same table
//! in a throwaway cluster. Rows/s of each, the ratios against the targets (bulk copy at least
//! 5 times the batched INSERTs and at least PostgreSQL's COPY), and the server's peak RSS.
//!
//! The rows are generated, not read from a file, so that each way sends exactly the same
//! values; each load is checked afterwards (its count and a checksum of the ids).

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Instant;

use clap::Args;
use walden_tds::{Column, Decimal, TdsValue, Time, TypeInfo};

use super::pg_cluster::Cluster;
use super::serve::{random_password, run_sql, scalar, Server};
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

/// One way's figures.
struct Run {
    name: &'static str,
    seconds: f64,
    rows: u64,
}

impl Run {
    fn rate(&self) -> f64 {
        self.rows as f64 / self.seconds.max(1e-9)
    }
}

pub fn run(args: &BulkBenchArgs) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let password = random_password()?;
    let server = Server::start(&dir.path().join("walden"), &password, 8)?;
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
    let n = args.rows;
    let expected_sum: i64 = (0..n).map(|i| i as i64).sum();
    println!("walden bench bulk: {n} rows of (INT, INT, DECIMAL(12,2), DATETIME2(3), NVARCHAR(40)), loaded three ways");

    print!("  Walden, bulk copy over TDS ... ");
    std::io::stdout().flush().ok();
    let started = Instant::now();
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
    let bulk = Run {
        name: "Walden bulk copy (INSERT BULK)",
        seconds: started.elapsed().as_secs_f64(),
        rows: n,
    };
    println!("{:.2} s", bulk.seconds);
    // Before the check, whose query has a memory use of its own.
    let bulk_peak_kb = server.peak_rss_kb();
    check(&mut client, "by_bulk", n, expected_sum)?;

    print!("  Walden, INSERTs of {} rows ... ", args.batch_rows);
    std::io::stdout().flush().ok();
    let started = Instant::now();
    let mut text = String::new();
    let mut i = 0;
    while i < n {
        text.clear();
        let _ = write!(text, "INSERT INTO by_insert ({COLUMNS}) VALUES ");
        let end = (i + args.batch_rows).min(n);
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
        run_sql(&mut client, &text)?;
        i = end;
    }
    let inserts =
        Run { name: "Walden batched INSERTs", seconds: started.elapsed().as_secs_f64(), rows: n };
    println!("{:.2} s", inserts.seconds);
    let peak_kb = server.peak_rss_kb();
    check(&mut client, "by_insert", n, expected_sum)?;

    let postgres = if args.no_postgres {
        None
    } else {
        print!("  PostgreSQL, COPY FROM STDIN ... ");
        std::io::stdout().flush().ok();
        let cluster = Cluster::start(&dir.path().join("postgres"), &[])?;
        let mut pg =
            cluster.config().connect(postgres::NoTls).map_err(|e| format!("PostgreSQL: {e}"))?;
        pg.batch_execute(&format!("CREATE TABLE by_copy {TABLE_PG}")).map_err(|e| e.to_string())?;
        let started = Instant::now();
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
        let run = Run {
            name: "PostgreSQL COPY FROM STDIN",
            seconds: started.elapsed().as_secs_f64(),
            rows: n,
        };
        println!("{:.2} s", run.seconds);
        let got = pg
            .query_one("SELECT COUNT(*), SUM(id)::BIGINT FROM by_copy", &[])
            .map_err(|e| e.to_string())?;
        let (count, sum): (i64, i64) = (got.get(0), got.get(1));
        if count as u64 != n || sum != expected_sum {
            return Err(format!("PostgreSQL loaded {count} rows (id sum {sum})"));
        }
        Some(run)
    };

    println!();
    println!("{:<34} {:>10} {:>12}", "", "seconds", "rows/s");
    for r in [Some(&bulk), Some(&inserts), postgres.as_ref()].into_iter().flatten() {
        println!("{:<34} {:>10.2} {:>12.0}", r.name, r.seconds, r.rate());
    }
    println!();
    let ratio = bulk.rate() / inserts.rate();
    println!(
        "bulk copy / batched INSERTs: {ratio:.1}x (target >= 5x: {})",
        if ratio >= 5.0 { "met" } else { "NOT met" }
    );
    if let Some(pg) = &postgres {
        let ratio = bulk.rate() / pg.rate();
        println!(
            "bulk copy / PostgreSQL COPY: {ratio:.2}x (target >= 1x: {})",
            if ratio >= 1.0 { "met" } else { "NOT met" }
        );
    }
    println!(
        "Walden server peak RSS (VmHWM): {} MB after the bulk copy, {} MB after the INSERTs",
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
    fn dates_count_from_2024() {
        assert_eq!(civil_from_days(FIRST_DAY), (2024, 1, 1));
        assert_eq!(civil_from_days(FIRST_DAY + 59), (2024, 2, 29));
        assert_eq!(civil_from_days(FIRST_DAY + 366), (2025, 1, 1));
        assert_eq!(row(86_400 + 61).created_text(), "2024-01-02 00:01:01.461");
    }
}
