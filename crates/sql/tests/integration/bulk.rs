//! The bulk load at the session's level: `INSERT BULK`, then `Session::bulk_load` with rows
//! as the server hands them over, on a real instance in a temporary directory. The options'
//! semantics (SQL Server's), the errors, and the transaction a load runs in.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::bulk::{BulkRows, BulkStop};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{errors, ok, run};

fn rows_of(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    ok(s, sql).results.pop().unwrap().rows
}

/// Rows from a vector, or a stop after them.
struct Rows(std::vec::IntoIter<Vec<Value>>, Option<BulkStop>);

impl BulkRows for Rows {
    fn next_row(&mut self, row: &mut Vec<Value>) -> Result<bool, BulkStop> {
        match self.0.next() {
            Some(next) => {
                *row = next;
                Ok(true)
            }
            None => self.1.take().map_or(Ok(false), Err),
        }
    }
}

/// `INSERT BULK statement`, then the rows; the load's output.
fn load(s: &mut Session, statement: &str, rows: Vec<Vec<Value>>) -> Collected {
    ok(s, statement);
    let mut out = Collected::default();
    s.bulk_load(&mut Rows(rows.into_iter(), None), &mut out);
    out
}

fn session() -> (tempfile::TempDir, Arc<Instance>, Session) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d; USE d;
         CREATE TABLE t (id INT IDENTITY(1,1) PRIMARY KEY, name NVARCHAR(5) NULL,
             qty INT NULL DEFAULT 7 CHECK (qty > 0), twice AS qty * 2);
         CREATE TABLE audit (n INT);",
    );
    ok(
        &mut s,
        "CREATE TRIGGER t_ins ON t AFTER INSERT AS
             SET NOCOUNT ON; INSERT INTO audit SELECT COUNT(*) FROM inserted;",
    );
    (dir, instance, s)
}

fn nstr(s: &str) -> Value {
    Value::NStr(s.into())
}

#[test]
fn defaults_identity_constraints_and_triggers_follow_the_options() {
    let (_dir, _instance, mut s) = session();
    // No options: identity values ignored, NULL takes the default, CHECK unchecked, no trigger.
    let out = load(
        &mut s,
        "INSERT BULK t (id INT, name NVARCHAR(5), qty INT)",
        vec![
            vec![Value::Int(100), nstr("a"), Value::Null],
            vec![Value::Int(200), nstr("b"), Value::Int(-1)],
        ],
    );
    assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![2]));
    assert_eq!(
        rows_of(&mut s, "SELECT id, name, qty, twice FROM t ORDER BY id"),
        vec![
            vec![Value::Int(1), nstr("a"), Value::Int(7), Value::Int(14)],
            vec![Value::Int(2), nstr("b"), Value::Int(-1), Value::Int(-2)],
        ]
    );
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM audit"), vec![vec![Value::Int(0)]]);

    // KEEP_IDENTITY, KEEP_NULLS, FIRE_TRIGGERS.
    let out = load(
        &mut s,
        "INSERT BULK t (id INT, name NVARCHAR(5), qty INT) WITH (KEEP_IDENTITY, KEEP_NULLS, FIRE_TRIGGERS, TABLOCK)",
        vec![vec![Value::Int(50), Value::Null, Value::Null], vec![Value::Int(51), nstr("c"), Value::Int(3)]],
    );
    assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![2]));
    assert_eq!(
        rows_of(&mut s, "SELECT id, name, qty FROM t WHERE id >= 50 ORDER BY id"),
        vec![
            vec![Value::Int(50), Value::Null, Value::Null],
            vec![Value::Int(51), nstr("c"), Value::Int(3)]
        ]
    );
    assert_eq!(rows_of(&mut s, "SELECT SUM(n) FROM audit"), vec![vec![Value::Int(2)]]);

    // CHECK_CONSTRAINTS: 547, and nothing of the load stays.
    let out = load(
        &mut s,
        "INSERT BULK t (name NVARCHAR(5), qty INT) WITH (CHECK_CONSTRAINTS)",
        vec![vec![nstr("d"), Value::Int(1)], vec![nstr("e"), Value::Int(0)]],
    );
    assert_eq!(errors(&out), vec![547]);
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM t"), vec![vec![Value::Int(4)]]);
}

#[test]
fn errors_undo_the_load_and_the_session_goes_on() {
    let (_dir, _instance, mut s) = session();
    let statement = "INSERT BULK t (name NVARCHAR(5), qty INT)";
    // Too long for NVARCHAR(5): 4815 naming the column's place in the load.
    let out = load(
        &mut s,
        statement,
        vec![
            vec![nstr("ok"), Value::Int(1)],
            vec![Value::Null, Value::Int(2)],
            vec![nstr("toolong"), Value::Int(1)],
        ],
    );
    assert_eq!(errors(&out), vec![4815]);
    assert!(out.messages[0].message.contains("colid 1"), "{:?}", out.messages);
    // Not a number.
    let out = load(&mut s, statement, vec![vec![nstr("x"), nstr("many")]]);
    assert_eq!(errors(&out), vec![245]);
    // Rows of the wrong width; and a stop from the row source (a malformed message).
    let out = load(&mut s, statement, vec![vec![nstr("x")]]);
    assert_eq!(errors(&out), vec![4816]);
    ok(&mut s, statement);
    let mut out = Collected::default();
    let stop = walden_sql::exec::SqlError::new(4002, "malformed");
    s.bulk_load(
        &mut Rows(vec![vec![nstr("y"), Value::Int(1)]].into_iter(), Some(BulkStop::Error(stop))),
        &mut out,
    );
    assert_eq!(errors(&out), vec![4002]);
    // A cancelled load reports nothing and leaves nothing.
    ok(&mut s, statement);
    let mut out = Collected::default();
    s.bulk_load(
        &mut Rows(vec![vec![nstr("z"), Value::Int(1)]].into_iter(), Some(BulkStop::Cancelled)),
        &mut out,
    );
    assert_eq!(errors(&out), Vec::<i32>::new());
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM t"), vec![vec![Value::Int(0)]]);

    // At INSERT BULK: unknown table, column, type; a computed column; a bad option.
    assert_eq!(errors(&run(&mut s, "INSERT BULK nope (a INT)")), vec![208]);
    assert_eq!(errors(&run(&mut s, "INSERT BULK t (nope INT)")), vec![207]);
    assert_eq!(errors(&run(&mut s, "INSERT BULK t (qty NOTATYPE)")), vec![2715]);
    assert_eq!(errors(&run(&mut s, "INSERT BULK t (twice INT)")), vec![271]);
    assert_eq!(errors(&run(&mut s, "INSERT BULK t (qty INT) WITH (FAST)")), vec![102]);
    // Rows with no INSERT BULK before them; a batch in between forgets the statement.
    let mut out = Collected::default();
    s.bulk_load(&mut Rows(vec![].into_iter(), None), &mut out);
    assert_eq!(errors(&out), vec![4022]);
    ok(&mut s, statement);
    ok(&mut s, "SELECT 1");
    let mut out = Collected::default();
    s.bulk_load(&mut Rows(vec![].into_iter(), None), &mut out);
    assert_eq!(errors(&out), vec![4022]);
}

#[test]
fn a_load_in_a_user_transaction_goes_with_it_and_order_is_checked() {
    let (_dir, _instance, mut s) = session();
    ok(&mut s, "BEGIN TRAN");
    let out =
        load(&mut s, "INSERT BULK t (qty INT)", (1..=3).map(|i| vec![Value::Int(i)]).collect());
    assert_eq!(out.counts, vec![3]);
    // A failed load inside the transaction is undone alone.
    let out = load(
        &mut s,
        "INSERT BULK t (id INT, qty INT) WITH (KEEP_IDENTITY)",
        vec![vec![Value::Int(1), Value::Int(1)]],
    );
    assert_eq!(errors(&out), vec![2627]);
    assert_eq!(
        rows_of(&mut s, "SELECT COUNT(*), @@TRANCOUNT FROM t"),
        vec![vec![Value::Int(3), Value::Int(1)]]
    );
    ok(&mut s, "ROLLBACK");
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM t"), vec![vec![Value::Int(0)]]);

    // ORDER naming the clustered key (t's primary key, id) is a promise the rows must keep:
    // 4819 names the two rows' keys, and nothing of the load stays.
    let ordered = "INSERT BULK t (id INT, qty INT) WITH (KEEP_IDENTITY, ORDER (id ASC))";
    let out = load(
        &mut s,
        ordered,
        vec![vec![Value::Int(8), Value::Int(1)], vec![Value::Int(9), Value::Int(1)]],
    );
    assert_eq!((errors(&out), out.counts), (vec![], vec![2]));
    let out = load(
        &mut s,
        ordered,
        vec![vec![Value::Int(6), Value::Int(1)], vec![Value::Int(5), Value::Int(1)]],
    );
    assert_eq!(errors(&out), vec![4819]);
    assert!(out.messages.iter().any(|m| m.message.ends_with(
        "Sort order incorrect for the following two rows: primary key of first row: (6), \
         primary key of second row: (5)."
    )));
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM t"), vec![vec![Value::Int(2)]]);
    // Any other ORDER (another column, the key descending, a heap) is ignored, as SQL Server
    // ignores it.
    for ordered in [
        "INSERT BULK t (id INT, qty INT) WITH (KEEP_IDENTITY, ORDER (id DESC))",
        "INSERT BULK t (id INT, qty INT) WITH (KEEP_IDENTITY, ORDER (qty))",
        "INSERT BULK audit (n INT) WITH (ORDER (n))",
    ] {
        let rows = vec![vec![Value::Int(21), Value::Int(2)], vec![Value::Int(20), Value::Int(1)]];
        let rows = if ordered.contains("audit") {
            rows.into_iter().map(|r| r[..1].to_vec()).collect()
        } else {
            rows
        };
        let out = load(&mut s, ordered, rows);
        assert_eq!((errors(&out), out.counts), (vec![], vec![2]), "{ordered}");
        ok(&mut s, "DELETE FROM t WHERE id >= 20");
    }
}

#[test]
fn insert_bulk_prints_back_as_it_parses() {
    let text = "INSERT BULK [d].[dbo].[t] ([id] int NOT NULL, [name] nvarchar(5) COLLATE Latin1_General_CI_AS NULL) \
                WITH (CHECK_CONSTRAINTS, KEEP_NULLS, ROWS_PER_BATCH = 10, ORDER ([id] ASC))";
    let batch = walden_sql::parse_batch(text).unwrap();
    let printed = batch.statements[0].to_string();
    assert_eq!(
        walden_sql::parse_batch(&printed).unwrap().statements[0].kind,
        batch.statements[0].kind
    );
    assert!(printed.contains("ROWS_PER_BATCH = 10") && printed.contains("ORDER ("), "{printed}");
}

fn dt2(day: u32, ticks: u64) -> Value {
    use walden_engine::types::{Date, DateTime2, Time};
    Value::DateTime2(DateTime2::new(
        Date::from_days(day).unwrap(),
        Time::from_ticks(ticks).unwrap(),
    ))
}

fn dec(mantissa: i128, scale: u8) -> Value {
    Value::Decimal(walden_engine::types::Decimal::new(mantissa, scale).unwrap())
}

/// A value already of its column's type is stored as it is (rounded to the column's scale); any
/// other converts as an INSERT's would; a value that does not fit is the load's error.
#[test]
fn values_convert_to_their_columns_types_as_an_insert_would() {
    let (_dir, _instance, mut s) = session();
    ok(
        &mut s,
        "CREATE TABLE conv (k INT PRIMARY KEY, big BIGINT, amount DECIMAL(6,2), \
         at DATETIME2(3), name NVARCHAR(4), code VARCHAR(4))",
    );
    let statement = "INSERT BULK conv (k INT, big BIGINT, amount DECIMAL(6,2), at DATETIME2(3), \
                     name NVARCHAR(4), code VARCHAR(4))";
    let out = load(
        &mut s,
        statement,
        vec![
            // Each value of its column's type, at the column's limits.
            vec![
                Value::Int(1),
                Value::BigInt(5),
                dec(12_345, 2),
                dt2(738_885, 12_345_670_000),
                nstr("abcd"),
                Value::Str("wxyz".into()),
            ],
            // Each of another type or scale, or longer in bytes than the column in characters.
            vec![
                Value::Int(2),
                Value::Int(7),
                dec(1_005, 3),
                dt2(738_885, 86_400 * 10_000_000 - 1),
                nstr("éèêë"),
                nstr("ab"),
            ],
        ],
    );
    assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![2]));
    assert_eq!(
        rows_of(&mut s, "SELECT big, amount, at, name, code FROM conv ORDER BY k"),
        vec![
            vec![
                Value::BigInt(5),
                dec(12_345, 2),
                dt2(738_885, 12_345_670_000),
                nstr("abcd"),
                Value::Str("wxyz".into())
            ],
            // 1.005 rounds half up; the last 100 ns of the day round into the next day.
            vec![
                Value::BigInt(7),
                dec(101, 2),
                dt2(738_886, 0),
                nstr("éèêë"),
                Value::Str("ab".into())
            ],
        ]
    );
    // Too long for its column: 4815 naming the column's place in the load; too many digits
    // for its precision: the conversion's overflow. Either leaves nothing of the load.
    let row = |name: &str, amount: Value| {
        vec![Value::Int(3), Value::Null, amount, Value::Null, nstr(name), Value::Null]
    };
    let out = load(&mut s, statement, vec![row("ab", dec(1, 0)), row("abcde", dec(1, 0))]);
    assert_eq!(errors(&out), vec![4815]);
    let out = load(&mut s, statement, vec![row("ab", dec(1_234_567, 2))]);
    assert_eq!(errors(&out), vec![8115]);
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM conv"), vec![vec![Value::Int(2)]]);
}

/// Temporal values sent as text, as mssql-jdbc sends them from an `ISQLServerBulkData`
/// source (`VARCHAR(50)` in its `INSERT BULK`): converted as an INSERT's strings are, a
/// SMALLDATETIME rounded to the minute, and SQL Server's errors for text that is no
/// SMALLDATETIME (295) or out of its range (242).
#[test]
fn temporal_text_converts_to_each_columns_type() {
    let (_dir, _instance, mut s) = session();
    ok(&mut s, "CREATE TABLE dt (k INT PRIMARY KEY, sd SMALLDATETIME, d DATETIME, d2 DATETIME2)");
    let statement = "INSERT BULK dt (k INT, sd VARCHAR(50), d VARCHAR(50), d2 VARCHAR(27))";
    let text = |t: &str| Value::Str(t.into());
    let out = load(
        &mut s,
        statement,
        vec![
            vec![
                Value::Int(1),
                text("1954-05-22 02:43:37.123"),
                text("2024-02-29 23:59:59.999"),
                text("2026-11-30T12:34:56.1234567"),
            ],
            vec![Value::Int(2), text("2024-02-29 23:59:29.998"), Value::Null, Value::Null],
            vec![Value::Int(3), text("2024-02-29 23:59:29.999"), Value::Null, Value::Null],
        ],
    );
    assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![3]));
    assert_eq!(
        rows_of(
            &mut s,
            "SELECT CONVERT(VARCHAR(23), sd, 121), CONVERT(VARCHAR(23), d, 121), \
             CONVERT(VARCHAR(27), d2, 121) FROM dt ORDER BY k"
        ),
        vec![
            vec![
                text("1954-05-22 02:44:00.000"),
                text("2024-03-01 00:00:00.000"),
                text("2026-11-30 12:34:56.1234567")
            ],
            vec![text("2024-02-29 23:59:00.000"), Value::Null, Value::Null],
            vec![text("2024-03-01 00:00:00.000"), Value::Null, Value::Null],
        ]
    );
    let one = |sd: &str| vec![vec![Value::Int(9), text(sd), Value::Null, Value::Null]];
    let out = load(&mut s, statement, one("1954-05-22 02:43:37.1234"));
    let e = out.errors().next().unwrap();
    assert_eq!(
        (e.number, e.message.as_str()),
        (295, "Conversion failed when converting character string to smalldatetime data type.")
    );
    let out = load(&mut s, statement, one("2080-01-01"));
    let e = out.errors().next().unwrap();
    assert_eq!(
        (e.number, e.message.as_str()),
        (
            242,
            "The conversion of a varchar data type to a smalldatetime data type resulted in an \
             out-of-range value."
        )
    );
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM dt"), vec![vec![Value::Int(3)]]);
}

/// Rows in no particular order, into a table with a clustered key and two nonclustered
/// indexes: every index holds every row, in order, and the integrity check passes.
#[test]
fn an_out_of_order_load_builds_correct_indexes() {
    let (_dir, _instance, mut s) = session();
    ok(
        &mut s,
        "CREATE TABLE o (k INT PRIMARY KEY, u INT NOT NULL UNIQUE, g INT NOT NULL); \
         CREATE INDEX o_g ON o (g)",
    );
    let n = 20_000i32;
    // A permutation of 0..n: 7919 is prime to n.
    let rows: Vec<Vec<Value>> = (0..n)
        .map(|i| {
            let k = (i * 7919) % n;
            vec![Value::Int(k), Value::Int(n - k), Value::Int(k % 97)]
        })
        .collect();
    let out = load(&mut s, "INSERT BULK o (k INT, u INT, g INT) WITH (TABLOCK)", rows);
    assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![n as u64]));
    let checked = run(&mut s, "DBCC CHECKTABLE ('o')");
    assert_eq!(errors(&checked), Vec::<i32>::new());
    assert_eq!(
        rows_of(&mut s, "SELECT COUNT(*), MIN(k), MAX(k), SUM(CAST(u AS BIGINT)) FROM o"),
        vec![vec![Value::Int(n), Value::Int(0), Value::Int(n - 1), Value::BigInt(200_010_000)]]
    );
    // Each key found by each index.
    for k in [0, 1, 4_321, n - 1] {
        assert_eq!(
            rows_of(&mut s, &format!("SELECT k FROM o WHERE u = {}", n - k)),
            vec![vec![Value::Int(k)]]
        );
        assert_eq!(
            rows_of(&mut s, &format!("SELECT COUNT(*) FROM o WHERE g = {} AND k = {k}", k % 97)),
            vec![vec![Value::Int(1)]]
        );
    }
    assert_eq!(
        rows_of(&mut s, "SELECT COUNT(*) FROM o WHERE g = 5"),
        vec![vec![Value::Int((0..n).filter(|k| k % 97 == 5).count() as i32)]]
    );
    // A duplicate of the unique column, however late, undoes the whole load.
    let mut rows: Vec<Vec<Value>> =
        (n..n + 500).map(|k| vec![Value::Int(k), Value::Int(-k), Value::Int(0)]).collect();
    rows.push(vec![Value::Int(n + 1000), Value::Int(1), Value::Int(0)]);
    let out = load(&mut s, "INSERT BULK o (k INT, u INT, g INT)", rows);
    assert_eq!(errors(&out), vec![2627]);
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM o"), vec![vec![Value::Int(n)]]);
}

/// A committed bulk load is in the log: after the process stops without a checkpoint or a
/// clean shutdown, recovery brings back every row, and a load that had not finished leaves
/// nothing.
#[test]
fn a_bulk_load_survives_a_restart_without_a_clean_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let n = 30_000i32;
    let rows = |from: i32| -> Vec<Vec<Value>> {
        (from..from + n).map(|k| vec![Value::Int(k), nstr(&format!("row {k}"))]).collect()
    };
    {
        let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
        let mut s = Session::new(Arc::clone(&instance));
        ok(&mut s, "CREATE DATABASE d; USE d; CREATE TABLE r (k INT PRIMARY KEY, v NVARCHAR(20))");
        let out = load(&mut s, "INSERT BULK r (k INT, v NVARCHAR(20)) WITH (TABLOCK)", rows(0));
        assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![n as u64]));
        // A second load the client abandons part way: undone, and never committed.
        ok(&mut s, "INSERT BULK r (k INT, v NVARCHAR(20))");
        let mut out = Collected::default();
        s.bulk_load(&mut Rows(rows(n).into_iter(), Some(BulkStop::Cancelled)), &mut out);
        assert_eq!(out.counts, Vec::<u64>::new());
        // Dropped without `close`: no checkpoint, no clean shutdown.
    }
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(&mut s, "USE d");
    assert_eq!(
        rows_of(&mut s, "SELECT COUNT(*), MIN(k), MAX(k) FROM r"),
        vec![vec![Value::Int(n), Value::Int(0), Value::Int(n - 1)]]
    );
    assert_eq!(rows_of(&mut s, "SELECT v FROM r WHERE k = 12345"), vec![vec![nstr("row 12345")]]);
    assert_eq!(errors(&run(&mut s, "DBCC CHECKTABLE ('r')")), Vec::<i32>::new());
    drop(s);
    instance.close().unwrap();
}

/// Ascending rows under `TABLOCK` are appended a leaf at a time even with `CHECK_CONSTRAINTS`
/// and nonclustered indexes: each index holds every row, a CHECK constraint or a unique
/// index refuses its row (undoing the load, or skipping the row under IGNORE_DUP_KEY), and a
/// CHECK constraint whose function reads the table sees every row before its own.
#[test]
fn an_ascending_load_with_checks_and_nonclustered_indexes() {
    let (_dir, _instance, mut s) = session();
    ok(
        &mut s,
        "CREATE TABLE a (k INT PRIMARY KEY, u INT NOT NULL, g INT NOT NULL, CHECK (g >= 0)); \
         CREATE UNIQUE INDEX a_u ON a (u); CREATE INDEX a_g ON a (g)",
    );
    let n = 20_000i32;
    let statement = "INSERT BULK a (k INT, u INT, g INT) WITH (TABLOCK, CHECK_CONSTRAINTS)";
    let rows = |keys: std::ops::Range<i32>| -> Vec<Vec<Value>> {
        keys.map(|k| vec![Value::Int(k), Value::Int(n - k), Value::Int(k % 97)]).collect()
    };
    let out = load(&mut s, statement, rows(0..n));
    assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![n as u64]));
    assert_eq!(errors(&run(&mut s, "DBCC CHECKTABLE ('a')")), Vec::<i32>::new());
    for k in [0, 1, 4_321, n - 1] {
        assert_eq!(
            rows_of(&mut s, &format!("SELECT k FROM a WITH (INDEX (a_u)) WHERE u = {}", n - k)),
            vec![vec![Value::Int(k)]]
        );
    }
    assert_eq!(
        rows_of(&mut s, "SELECT COUNT(*) FROM a WITH (INDEX (a_g)) WHERE g = 5"),
        vec![vec![Value::Int((0..n).filter(|k| k % 97 == 5).count() as i32)]]
    );
    // A row breaking the CHECK constraint, or taking a unique index's key, undoes the load.
    let mut bad = rows(n..n + 3000);
    bad[2500][2] = Value::Int(-1);
    assert_eq!(errors(&load(&mut s, statement, bad)), vec![547]);
    let mut bad = rows(n..n + 3000);
    bad[2500][1] = Value::Int(7);
    assert_eq!(errors(&load(&mut s, statement, bad)), vec![2601]);
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM a"), vec![vec![Value::Int(n)]]);
    assert_eq!(errors(&run(&mut s, "DBCC CHECKTABLE ('a')")), Vec::<i32>::new());
    // Under IGNORE_DUP_KEY the row alone is skipped, with nothing of it in any index.
    ok(&mut s, "DROP INDEX a_u ON a; CREATE UNIQUE INDEX a_u ON a (u) WITH (IGNORE_DUP_KEY = ON)");
    let mut dup = rows(n..n + 3000);
    dup[2500][1] = Value::Int(7);
    let out = load(&mut s, statement, dup);
    assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![2999]));
    assert_eq!(
        rows_of(&mut s, "SELECT COUNT(*), SUM(CAST(g AS BIGINT)) FROM a WITH (INDEX (a_g))"),
        rows_of(&mut s, "SELECT COUNT(*), SUM(CAST(g AS BIGINT)) FROM a WITH (INDEX (a_u))"),
    );
    assert_eq!(rows_of(&mut s, "SELECT COUNT(*) FROM a"), vec![vec![Value::Int(n + 2999)]]);
    assert_eq!(errors(&run(&mut s, "DBCC CHECKTABLE ('a')")), Vec::<i32>::new());

    ok(&mut s, "CREATE TABLE c (k INT PRIMARY KEY)");
    ok(
        &mut s,
        "CREATE FUNCTION dbo.c_rows() RETURNS INT AS BEGIN RETURN (SELECT COUNT(*) FROM c) END",
    );
    ok(&mut s, "ALTER TABLE c ADD CONSTRAINT c_few CHECK (dbo.c_rows() < 100)");
    let statement = "INSERT BULK c (k INT) WITH (TABLOCK, CHECK_CONSTRAINTS)";
    let keys = |n: i32| (0..n).map(|k| vec![Value::Int(k)]).collect::<Vec<_>>();
    assert_eq!(errors(&load(&mut s, statement, keys(150))), vec![547]);
    let out = load(&mut s, statement, keys(100));
    assert_eq!((errors(&out), out.counts.clone()), (vec![], vec![100]));
}
