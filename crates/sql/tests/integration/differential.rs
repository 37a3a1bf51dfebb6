//! Differential test: seeded random schemas (primary keys single and composite, nonclustered
//! indexes, NULLs), data and queries (inner joins in ON and comma form, outer joins, EXISTS and
//! IN subqueries with NOT and NULLs, scalar subqueries, grouping, HAVING, DISTINCT, ORDER BY with
//! TOP), run in Walden and in SQLite, whose results must agree.
//!
//! The query processor is being rewritten (index seeks, join algorithms); this is the check that a
//! new plan returns what the old interpreter and an independent engine return.
//!
//! `WALDEN_DIFF_SEEDS=n` runs seeds `0..n` instead of the default; `WALDEN_DIFF_SEED=s` replays
//! the one seed `s`; `WALDEN_DIFF_SHOW=1` prints every query (with `--nocapture`). A mismatch prints the seed, the schema and data, the query in both dialects
//! and both results.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod gen;
mod model;
mod oracle;
mod rng;
mod shrink;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use gen::{Gen, FEATURES};
use model::{Cell, Dialect, Mutation, Schema, Select};
use rng::Rng;
use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

/// Seeds run by default, and queries per seed: sized to keep the test well under a minute at the
/// test profile's opt-level 1 on a small machine.
const DEFAULT_SEEDS: u64 = 50;
const QUERIES_PER_SEED: usize = 40;

/// The most rows a query may visit in a naive nested-loop execution (see `Gen::cost`).
const WORK_BUDGET: u64 = 200_000;

/// A query slower than this in Walden is named on stderr.
const SLOW_MS: u128 = 500;

type Rows = Vec<Vec<Cell>>;

/// One embedded Walden instance on a temporary directory, with one session.
struct Walden {
    _dir: tempfile::TempDir,
    instance: Arc<Instance>,
    session: Session,
}

impl Walden {
    fn open() -> Walden {
        let dir = tempfile::tempdir().unwrap();
        let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
        let session = Session::new(Arc::clone(&instance));
        let mut walden = Walden { _dir: dir, instance, session };
        // One database for every seed, its tables dropped between seeds: creating a database
        // per seed, and flushing the log at each commit of the setup, took most of the test's
        // time. Nothing here needs to survive a crash.
        walden
            .run("CREATE DATABASE diff; ALTER DATABASE diff SET DELAYED_DURABILITY = FORCED; USE diff;")
            .unwrap();
        walden
    }

    /// Runs a batch and returns its last result set's rows, or its errors.
    fn run(&mut self, sql: &str) -> Result<Rows, String> {
        let mut out = Collected::default();
        self.session.execute_batch(sql, &mut out);
        let errors: Vec<String> = out.errors().map(ToString::to_string).collect();
        if !errors.is_empty() {
            return Err(errors.join("; "));
        }
        Ok(out
            .results
            .last()
            .map(|set| set.rows.iter().map(|row| row.iter().map(walden_cell).collect()).collect())
            .unwrap_or_default())
    }

    /// Creates the schema's tables and inserts their data.
    fn create(&mut self, seed: u64, schema: &Schema) {
        let mut script = String::new();
        for statement in schema.setup() {
            script.push_str(&statement);
            script.push_str(";\n");
        }
        self.run(&script)
            .unwrap_or_else(|e| panic!("seed {seed}: Walden setup failed: {e}\n{script}"));
    }

    /// Runs an INSERT, UPDATE or DELETE and returns the rows it changed, or its errors.
    fn change(&mut self, sql: &str) -> Result<u64, String> {
        let mut out = Collected::default();
        self.session.execute_batch(sql, &mut out);
        let errors: Vec<String> = out.errors().map(ToString::to_string).collect();
        if !errors.is_empty() {
            return Err(errors.join("; "));
        }
        Ok(out.counts.last().copied().unwrap_or(0))
    }

    fn drop(&mut self, schema: &Schema) {
        for table in &schema.tables {
            self.run(&format!("DROP TABLE {}", table.name)).unwrap();
        }
    }

    fn close(mut self) {
        self.session.close();
        self.instance.close().unwrap();
    }
}

fn walden_cell(value: &Value) -> Cell {
    match value {
        Value::Null => Cell::Null,
        Value::TinyInt(n) => Cell::Int(i64::from(*n)),
        Value::SmallInt(n) => Cell::Int(i64::from(*n)),
        Value::Int(n) => Cell::Int(i64::from(*n)),
        Value::BigInt(n) => Cell::Int(*n),
        Value::Str(s) | Value::NStr(s) => Cell::Str(s.clone()),
        // Nothing the generator writes has another type; show it rather than guess.
        other => Cell::Str(format!("<unexpected {other:?}>")),
    }
}

fn sqlite_open(schema: &Schema) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    for statement in schema.setup() {
        conn.execute_batch(&statement).unwrap_or_else(|e| panic!("SQLite: {e}\n{statement}"));
    }
    conn
}

fn sqlite_run(conn: &rusqlite::Connection, sql: &str) -> Result<Rows, String> {
    let mut statement = conn.prepare(sql).map_err(|e| e.to_string())?;
    let width = statement.column_count();
    let mut rows = statement.query([]).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        let mut cells = Vec::with_capacity(width);
        for i in 0..width {
            use rusqlite::types::ValueRef;
            cells.push(match row.get_ref(i).map_err(|e| e.to_string())? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(n) => Cell::Int(n),
                ValueRef::Text(t) => Cell::Str(String::from_utf8_lossy(t).into_owned()),
                other => Cell::Str(format!("<unexpected {other:?}>")),
            });
        }
        out.push(cells);
    }
    Ok(out)
}

/// How many simpler variants of a failing query to try in reducing it.
const SHRINK_BUDGET: usize = 400;

/// Changes per seed before the queries run.
const MUTATIONS_PER_SEED: usize = 4;

/// A seed's schema and data, the changes to make to the data, and the generator's state after
/// drawing them, from which the queries are drawn.
fn prepare(seed: u64) -> (Schema, Vec<Mutation>, Rng) {
    let mut rng = Rng::new(seed);
    let schema = gen::schema(&mut rng);
    let mutations =
        (0..MUTATIONS_PER_SEED).map(|_| Gen::new(&mut rng, &schema, FEATURES).mutation()).collect();
    (schema, mutations, rng)
}

/// Whether to print each query with its row count (`WALDEN_DIFF_SHOW=1`, with `--nocapture`), to
/// see what the generator draws.
fn show_queries() -> bool {
    std::env::var_os("WALDEN_DIFF_SHOW").is_some()
}

/// Which seeds to run, from the environment.
fn seeds() -> Vec<u64> {
    let var = |name: &str| {
        std::env::var(name).ok().map(|v| {
            v.trim().parse::<u64>().unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        })
    };
    if let Some(seed) = var("WALDEN_DIFF_SEED") {
        return vec![seed];
    }
    (0..var("WALDEN_DIFF_SEEDS").unwrap_or(DEFAULT_SEEDS)).collect()
}

fn format_rows(rows: &Result<Rows, String>) -> String {
    match rows {
        Err(e) => format!("error: {e}\n"),
        Ok(rows) => {
            let mut out = format!("{} rows\n", rows.len());
            for row in rows.iter().take(60) {
                let cells: Vec<String> = row.iter().map(ToString::to_string).collect();
                let _ = writeln!(out, "  {}", cells.join(" | "));
            }
            if rows.len() > 60 {
                out.push_str("  ...\n");
            }
            out
        }
    }
}

/// Both results as they should compare: in order if the query fixes the order, else sorted.
fn comparable(mut rows: Result<Rows, String>, ordered: bool) -> Result<Rows, String> {
    if let (Ok(rows), false) = (&mut rows, ordered) {
        rows.sort();
    }
    rows
}

struct Failure {
    seed: u64,
    /// Which statement of the seed: "query 3", "change 1", ...
    what: String,
    text: String,
}

/// What the differential test ran, for its summary line: a test that compares empty results
/// proves little, so it says how many rows it compared.
#[derive(Default)]
struct Stats {
    queries: usize,
    rows: usize,
    mutations: usize,
    changed: u64,
}

/// Runs one seed's schema, changes and queries in both engines, adding the mismatches to
/// `failures`.
fn run_seed(walden: &mut Walden, seed: u64, failures: &mut Vec<Failure>, stats: &mut Stats) {
    let (schema, mutations, mut rng) = prepare(seed);
    walden.create(seed, &schema);
    let sqlite = sqlite_open(&schema);
    for (number, mutation) in mutations.iter().enumerate() {
        let tsql = mutation.render(Dialect::TSql);
        let lite = mutation.render(Dialect::Sqlite);
        let expected = sqlite.execute(&lite, []).map(|n| n as u64).map_err(|e| e.to_string());
        stats.mutations += 1;
        stats.changed += expected.as_ref().copied().unwrap_or(0);
        let actual = walden.change(&tsql);
        // Both engines may refuse a change (a NOT NULL column set from a NULL), not only one.
        if expected.is_ok() != actual.is_ok() || (expected.is_ok() && expected != actual) {
            let text = format!(
                "T-SQL:  {tsql}\nSQLite: {lite}\nWalden: {actual:?}\nSQLite: {expected:?}\n"
            );
            failures.push(Failure { seed, what: format!("change {number}"), text });
        }
    }
    for table in &schema.tables {
        // The data after the changes, compared whole before any query reads it.
        let sql = format!("SELECT * FROM {}", table.name);
        let (expected, actual) =
            (comparable(sqlite_run(&sqlite, &sql), false), comparable(walden.run(&sql), false));
        if expected != actual {
            let text = format!(
                "{sql}\nWalden: {}SQLite: {}",
                format_rows(&actual),
                format_rows(&expected)
            );
            failures.push(Failure {
                seed,
                what: format!("{} after the changes", table.name),
                text,
            });
        }
    }
    for number in 0..QUERIES_PER_SEED {
        let query: Select = Gen::new(&mut rng, &schema, FEATURES).query(WORK_BUDGET);
        let tsql = query.render(Dialect::TSql);
        let lite = query.render(Dialect::Sqlite);
        let expected = sqlite_run(&sqlite, &lite);
        if let Err(e) = &expected {
            // SQLite rejecting a query is the generator's fault, not Walden's.
            panic!("seed {seed} query {number}: SQLite rejects the generated query: {e}\n{lite}");
        }
        let started = Instant::now();
        let actual = walden.run(&tsql);
        let took = started.elapsed();
        if took.as_millis() >= SLOW_MS {
            // Not a failure: a hint for keeping the test fast, seen with --nocapture.
            eprintln!("differential: seed {seed} query {number} took {took:.1?} in Walden: {tsql}");
        }
        if show_queries() {
            eprintln!(
                "seed {seed} query {number} ({}): {tsql}",
                format_rows(&expected).lines().next().unwrap_or("")
            );
        }
        stats.queries += 1;
        stats.rows += expected.as_ref().map_or(0, Vec::len);
        let ordered = query.fully_ordered();
        let (expected, actual) = (comparable(expected, ordered), comparable(actual, ordered));
        if expected != actual {
            let mut text = format!(
                "T-SQL:  {tsql}\nSQLite: {lite}\nWalden: {}SQLite: {}",
                format_rows(&actual),
                format_rows(&expected)
            );
            let mut still_differs = |q: &Select| {
                if gen::cost(&schema, q) > WORK_BUDGET {
                    return false;
                }
                let Ok(expected) = sqlite_run(&sqlite, &q.render(Dialect::Sqlite)) else {
                    return false;
                };
                let actual = walden.run(&q.render(Dialect::TSql));
                let ordered = q.fully_ordered();
                comparable(Ok(expected), ordered) != comparable(actual, ordered)
            };
            let small = shrink::shrink(&query, SHRINK_BUDGET, &mut still_differs);
            let (tsql, lite) = (small.render(Dialect::TSql), small.render(Dialect::Sqlite));
            let ordered = small.fully_ordered();
            let _ = write!(
                text,
                "reduced:\nT-SQL:  {tsql}\nSQLite: {lite}\nWalden: {}SQLite: {}",
                format_rows(&comparable(walden.run(&tsql), ordered)),
                format_rows(&comparable(sqlite_run(&sqlite, &lite), ordered))
            );
            failures.push(Failure { seed, what: format!("query {number}"), text });
        }
    }
    walden.drop(&schema);
}

#[test]
fn walden_agrees_with_sqlite_on_generated_queries() {
    let started = Instant::now();
    let mut walden = Walden::open();
    let mut failures = Vec::new();
    let mut stats = Stats::default();
    let seeds = seeds();
    for &seed in &seeds {
        run_seed(&mut walden, seed, &mut failures, &mut stats);
    }
    walden.close();
    eprintln!(
        "differential: {} queries ({} rows) and {} changes ({} rows) over {} seeds in {:.1?}, {} mismatches",
        stats.queries,
        stats.rows,
        stats.mutations,
        stats.changed,
        seeds.len(),
        started.elapsed(),
        failures.len()
    );
    assert!(stats.queries > 0 && stats.rows > 0, "no query ran or none returned a row");
    if !failures.is_empty() {
        panic!(
            "{} of {} statements differ between Walden and SQLite:\n{}",
            stats.queries + stats.mutations,
            failures.len(),
            report(&failures)
        );
    }
}

/// Partitioned queries per seed for the oracles on Walden alone; each runs two to four queries.
const PARTITIONS_PER_SEED: usize = 12;

/// The oracles that need no SQLite (TLP and NoREC, see `differential/oracle.rs`) on the same
/// schemas, so that they keep working on constructs SQLite cannot check.
#[test]
fn walden_agrees_with_itself_on_partitioned_queries() {
    let started = Instant::now();
    let mut walden = Walden::open();
    let mut failures = Vec::new();
    let mut checked = 0;
    let seeds = seeds();
    for &seed in &seeds {
        let (schema, mutations, _) = prepare(seed);
        walden.create(seed, &schema);
        for mutation in &mutations {
            // The differential test compares the changes; here they only need to happen.
            let _ = walden.change(&mutation.render(Dialect::TSql));
        }
        // The oracles draw from their own stream, so that changing how many queries the
        // differential test draws does not change these.
        let mut rng = Rng::new(seed ^ 0x0a5c_1e00);
        for number in 0..PARTITIONS_PER_SEED {
            let case = Gen::new(&mut rng, &schema, FEATURES).partitioned(WORK_BUDGET);
            let mut run = |sql: &str| walden.run(sql);
            let outcome = match number % 4 {
                0 => oracle::ternary_partition(&mut run, &case, false),
                1 => oracle::ternary_partition(&mut run, &case, true),
                2 => oracle::aggregate_partition(&mut run, &case),
                _ => oracle::non_optimizing(&mut run, &case),
            };
            checked += 1;
            if let Err(text) = outcome {
                failures.push(Failure { seed, what: format!("partitioned query {number}"), text });
            }
        }
        walden.drop(&schema);
    }
    walden.close();
    eprintln!(
        "oracles: {checked} partitioned queries over {} seeds in {:.1?}, {} failures",
        seeds.len(),
        started.elapsed(),
        failures.len()
    );
    assert!(checked > 0, "no query ran");
    if !failures.is_empty() {
        panic!("{} of {checked} partitioned queries fail:\n{}", failures.len(), report(&failures));
    }
}

/// The failures, each with its seed and, once per seed, the schema and data to reproduce it.
fn report(failures: &[Failure]) -> String {
    let mut report = String::new();
    let mut shown_schemas = Vec::new();
    for f in failures.iter().take(20) {
        let _ = writeln!(
            report,
            "=== seed {} {} (replay: WALDEN_DIFF_SEED={})",
            f.seed, f.what, f.seed
        );
        if !shown_schemas.contains(&f.seed) {
            shown_schemas.push(f.seed);
            let (schema, mutations, _) = prepare(f.seed);
            let _ = writeln!(report, "schema and data:\n{};", schema.setup().join(";\n"));
            for mutation in &mutations {
                let _ = writeln!(report, "{};", mutation.render(Dialect::TSql));
            }
        }
        report.push_str(&f.text);
    }
    report
}
