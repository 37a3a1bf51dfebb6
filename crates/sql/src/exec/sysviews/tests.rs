//! The views on a real instance: counters move with commits and flushes, catalogs list what
//! DDL created, `fn_dblog` decodes what the engine logged.

// Test code unwraps: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use tempfile::TempDir;
use walden_engine::catalog::{ColumnDef, Object, SequenceDef, TableDef};
use walden_engine::lock::{LockMode, LockOwner, Resource};
use walden_engine::objects::{IndexSpec, ModuleKind};
use walden_engine::types::{Decimal, Len, SqlType, Value};
use walden_engine::{Database, Instance, InstanceConfig, Isolation};
use walden_log::policy::{CommitOption, DatabaseDurability};

use super::*;

struct Fixture {
    // Dropped last: the instance closes its files first.
    instance: Arc<Instance>,
    db: Arc<Database>,
    counters: ServerCounters,
    _dir: TempDir,
}

impl Fixture {
    /// An instance with database `d` holding table `dbo.t` (id INT IDENTITY PRIMARY KEY,
    /// name VARCHAR(50), note NVARCHAR(MAX), price DECIMAL(10,2)).
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut config = InstanceConfig::default();
        config.database.pool.frames = 64;
        config.database.pool.writer_interval_ms = 0;
        config.database.log.segment_size = 1 << 20;
        config.database.log.initial_segments = 2;
        // No time bound: a delayed commit stays unhardened until something flushes.
        config.database.log.max_delay_ms = 0;
        config.checkpoint_poll_ms = 0;
        let instance = Instance::open(dir.path(), config).unwrap();
        let db = instance.create_database("d", None).unwrap();
        let col = |name: &str, ty, nullable| ColumnDef {
            name: name.into(),
            ty,
            nullable,
            identity: None,
            default: None,
            computed: None,
            rowversion: false,
            collation: None,
            declared: None,
        };
        let table = TableDef {
            id: 0,
            schema: "dbo".into(),
            name: "t".into(),
            columns: vec![
                ColumnDef { identity: Some((1, 1)), ..col("id", SqlType::Int, false) },
                col("name", SqlType::VarChar(Len::N(50)), true),
                col("note", SqlType::NVarChar(Len::Max), true),
                col("price", SqlType::Decimal { precision: 10, scale: 2 }, true),
            ],
            indexes: Vec::new(),
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            identity_high: 0,
            created_micros: 1_700_000_000_000_000,
        };
        let pk = IndexSpec {
            name: "PK_t".into(),
            columns: vec![0],
            unique: true,
            clustered: true,
            primary_key: true,
            unique_constraint: false,
            ignore_dup_key: false,
        };
        let mut tx = instance.begin(Isolation::ReadCommitted, None);
        tx.create_table(&db, table, &[pk]).unwrap();
        tx.commit(CommitOption::Unspecified).unwrap();
        Fixture { instance, db, counters: ServerCounters::default(), _dir: dir }
    }

    fn ctx(&self) -> ViewContext<'_> {
        ViewContext {
            instance: &self.instance,
            database: &self.db,
            counters: &self.counters,
            session_id: 51,
            view_columns: &[],
            current_transaction: None,
        }
    }

    fn view(&self, name: &str, args: &[Value]) -> RowSet {
        system_view(&self.ctx(), name, args).unwrap().unwrap()
    }

    fn error(&self, name: &str, args: &[Value]) -> SqlError {
        system_view(&self.ctx(), name, args).unwrap().unwrap_err()
    }

    /// Inserts one row into `dbo.t` and commits with `option`.
    fn insert(&self, option: CommitOption) {
        let t = match &*self.db.table("dbo", "t").unwrap() {
            Object::Table(t) => t.clone(),
            _ => unreachable!(),
        };
        let mut tx = self.instance.begin(Isolation::ReadCommitted, None);
        let mut values = vec![Value::Null, Value::Str("x".into()), Value::Null, Value::Null];
        tx.insert_row(&self.db, &t, &mut values).unwrap();
        tx.commit(option).unwrap();
    }

    /// `cntr_value` of a counter of any object.
    fn counter(&self, name: &str, instance: &str) -> i64 {
        let rs = self.view("dm_os_performance_counters", &[]);
        let row = find(&rs, |r| {
            get(&rs, r, "counter_name") == &nstr(name)
                && get(&rs, r, "instance_name") == &nstr(instance)
        });
        bigint(get(&rs, row, "cntr_value"))
    }

    /// (log_hardened_lsn, last_commit_lsn, unhardened_commit_count) of `d`.
    fn log_state(&self) -> (i64, i64, i64) {
        let rs = self.view("dm_db_log_stats", &[Value::Int(self.db.id() as i32)]);
        assert_eq!(rs.rows.len(), 1);
        (
            bigint(get(&rs, &rs.rows[0], "log_hardened_lsn")),
            bigint(get(&rs, &rs.rows[0], "last_commit_lsn")),
            bigint(get(&rs, &rs.rows[0], "unhardened_commit_count")),
        )
    }

    /// num_of_writes of `d`'s file `file_id`.
    fn file_writes(&self, file_id: i16) -> i64 {
        let rs = self.view(
            "dm_io_virtual_file_stats",
            &[Value::Int(self.db.id() as i32), Value::SmallInt(file_id)],
        );
        assert_eq!(rs.rows.len(), 1);
        assert_eq!(get(&rs, &rs.rows[0], "file_id"), &Value::SmallInt(file_id));
        bigint(get(&rs, &rs.rows[0], "num_of_writes"))
    }
}

fn get<'a>(rs: &RowSet, row: &'a [Value], column: &str) -> &'a Value {
    let i = rs.columns.iter().position(|c| c.name == column).unwrap_or_else(|| {
        panic!("no column {column}");
    });
    &row[i]
}

fn find(rs: &RowSet, pred: impl Fn(&[Value]) -> bool) -> &[Value] {
    rs.rows.iter().find(|r| pred(r)).expect("no matching row")
}

fn bigint(v: &Value) -> i64 {
    match v {
        Value::BigInt(v) => *v,
        other => panic!("not a BIGINT: {other:?}"),
    }
}

fn names(rs: &RowSet) -> Vec<&str> {
    rs.columns.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn log_flushes_count_full_commits_not_delayed_ones() {
    let f = Fixture::new();
    // The first insert also persists the identity cache's high-water mark, in a commit of
    // its own: take the baseline after it.
    f.insert(CommitOption::Unspecified);
    let flushes = f.counter("Log Flushes/sec", "d");
    let writes = f.counter("Write Transactions/sec", "d");
    let log_writes = f.file_writes(2);
    f.insert(CommitOption::Unspecified);
    assert_eq!(f.counter("Log Flushes/sec", "d"), flushes + 1, "a full commit flushes once");
    assert_eq!(f.counter("Write Transactions/sec", "d"), writes + 1);
    assert!(f.file_writes(2) > log_writes, "the flush wrote the log file");
    let (hardened, last_commit, unhardened) = f.log_state();
    assert!(hardened >= last_commit && last_commit > 0);
    assert_eq!(unhardened, 0);

    f.instance.set_delayed_durability("d", DatabaseDurability::Allowed).unwrap();
    f.insert(CommitOption::On);
    assert_eq!(f.counter("Log Flushes/sec", "d"), flushes + 1, "a delayed commit does not");
    assert_eq!(f.counter("Write Transactions/sec", "d"), writes + 2);
    let (hardened, delayed_commit, unhardened) = f.log_state();
    assert!(delayed_commit > last_commit);
    assert!(hardened < delayed_commit, "the delayed commit is not hardened yet");
    assert_eq!(unhardened, 1);

    // sys.sp_flush_log.
    f.db.flush_log().unwrap();
    assert_eq!(f.counter("Log Flushes/sec", "d"), flushes + 2);
    let (hardened, last_commit, unhardened) = f.log_state();
    assert_eq!(last_commit, delayed_commit);
    assert!(hardened >= last_commit);
    assert_eq!(unhardened, 0);

    // Two delayed commits, then a full one hardens all three with one flush.
    f.insert(CommitOption::On);
    f.insert(CommitOption::On);
    f.insert(CommitOption::Unspecified);
    assert_eq!(f.counter("Log Flushes/sec", "d"), flushes + 3);
    let (hardened, last_commit, unhardened) = f.log_state();
    assert!(hardened >= last_commit && last_commit > delayed_commit);
    assert_eq!(unhardened, 0);
    let rs = f.view("dm_db_log_stats", &[Value::Null]);
    let avg = match get(&rs, &rs.rows[0], "avg_commits_per_flush") {
        Value::Float(v) => *v,
        other => panic!("{other:?}"),
    };
    assert!(avg > 1.0, "one flush hardened three commits: {avg}");

    // Counters that move with the log.
    assert!(f.counter("Log Bytes Flushed/sec", "d") > 0);
    assert!(f.counter("Log Flush Waits/sec", "d") >= 3);
    assert!(f.counter("Log File(s) Size (KB)", "d") >= 2 * 1024);
    let used = f.counter("Log File(s) Used Size (KB)", "d");
    let percent = f.counter("Percent Log Used", "d");
    assert!(used > 0 && (0..=100).contains(&percent), "{used} KB, {percent}%");
    assert!(f.counter("Log Flushes/sec", "_Total") >= flushes + 3);
    assert_eq!(f.counter("Log Flushes/sec", "tempdb"), 0, "tempdb has no log");
}

#[test]
fn performance_counters_have_sql_servers_shape() {
    let f = Fixture::new();
    let rs = f.view("DM_OS_PERFORMANCE_COUNTERS", &[]);
    assert_eq!(
        names(&rs),
        ["object_name", "counter_name", "instance_name", "cntr_value", "cntr_type"]
    );
    assert_eq!(rs.columns[3].ty, SqlType::BigInt);
    let row = find(&rs, |r| r[1] == nstr("Log Flushes/sec") && r[2] == nstr("d"));
    assert_eq!(row[0], nstr("SQLServer:Databases"));
    assert_eq!(row[4], Value::Int(272_696_576));
    let row = find(&rs, |r| r[1] == nstr("Percent Log Used") && r[2] == nstr("d"));
    assert_eq!(row[4], Value::Int(65_792));

    f.counters.record_batch();
    f.counters.record_batch();
    f.db.count_transaction();
    f.db.count_transaction();
    f.instance.database("master").unwrap().count_transaction();
    assert_eq!(f.counter("Batch Requests/sec", ""), 2);
    assert_eq!(f.counter("Transactions/sec", "d"), 2);
    assert_eq!(f.counter("Transactions/sec", "master"), 1);
    assert_eq!(f.counter("Transactions/sec", "_Total"), 3);
}

#[test]
fn file_stats_cover_data_and_log_files() {
    let f = Fixture::new();
    let all = f.view("dm_io_virtual_file_stats", &[Value::Null, Value::Null]);
    assert_eq!(all.rows.len(), 10, "two files for each of master, tempdb, model, msdb and d");
    assert_eq!(
        names(&all),
        [
            "database_id",
            "file_id",
            "sample_ms",
            "num_of_reads",
            "num_of_bytes_read",
            "io_stall_read_ms",
            "io_stall_queued_read_ms",
            "num_of_writes",
            "num_of_bytes_written",
            "io_stall_write_ms",
            "io_stall_queued_write_ms",
            "io_stall",
            "size_on_disk_bytes",
            "file_handle"
        ]
    );
    let mine =
        f.view("dm_io_virtual_file_stats", &[Value::Decimal(Decimal::from_i64(5)), Value::Null]);
    assert_eq!(mine.rows.len(), 2);
    let log = find(&mine, |r| r[1] == Value::SmallInt(2));
    assert!(bigint(get(&mine, log, "num_of_bytes_written")) > 0);
    assert!(bigint(get(&mine, log, "size_on_disk_bytes")) >= 2 << 20);
    // The data file is written by checkpoints and the buffer pool's writer.
    let data_writes = f.file_writes(1);
    f.insert(CommitOption::Unspecified);
    f.db.checkpoint().unwrap();
    assert!(f.file_writes(1) > data_writes);
    let none = f.view("dm_io_virtual_file_stats", &[Value::Int(999), Value::Null]);
    assert!(none.rows.is_empty());
    assert_eq!(none.columns.len(), 14);
}

#[test]
fn databases_and_their_files() {
    let f = Fixture::new();
    f.instance.set_delayed_durability("d", DatabaseDurability::Forced).unwrap();
    let rs = f.view("databases", &[]);
    let listed: Vec<(Value, Value)> =
        rs.rows.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
    assert_eq!(
        listed,
        [
            (nstr("master"), Value::Int(1)),
            (nstr("tempdb"), Value::Int(2)),
            (nstr("model"), Value::Int(3)),
            (nstr("msdb"), Value::Int(4)),
            (nstr("d"), Value::Int(5))
        ]
    );
    let d = &rs.rows[4];
    assert_eq!(get(&rs, d, "delayed_durability"), &Value::Int(2));
    assert_eq!(get(&rs, d, "delayed_durability_desc"), &nstr("FORCED"));
    assert_eq!(get(&rs, &rs.rows[0], "delayed_durability_desc"), &nstr("DISABLED"));
    assert_eq!(get(&rs, d, "state_desc"), &nstr("ONLINE"));
    assert_eq!(get(&rs, d, "recovery_model_desc"), &nstr(f.db.recovery_model().name()));
    assert_eq!(get(&rs, d, "compatibility_level"), &Value::TinyInt(160));
    assert!(matches!(get(&rs, d, "create_date"), Value::DateTime(_)));
    f.instance.set_delayed_durability("d", DatabaseDurability::Allowed).unwrap();
    let rs = f.view("databases", &[]);
    assert_eq!(get(&rs, &rs.rows[4], "delayed_durability_desc"), &nstr("ALLOWED"));

    let files = f.view("master_files", &[]);
    assert_eq!(files.rows.len(), 10);
    let log = find(&files, |r| r[0] == Value::Int(5) && r[1] == Value::Int(2));
    assert_eq!(get(&files, log, "type"), &Value::TinyInt(1));
    assert_eq!(get(&files, log, "type_desc"), &nstr("LOG"));
    assert_eq!(get(&files, log, "name"), &nstr("d_log"));
    let Value::NStr(path) = get(&files, log, "physical_name") else { panic!() };
    assert!(path.ends_with("d_log.ldf"), "{path}");
    let Value::Int(pages) = get(&files, log, "size") else { panic!() };
    assert!(*pages >= 256, "a 2 MB log is at least 256 pages: {pages}");
    let master = find(&files, |r| r[0] == Value::Int(1) && r[1] == Value::Int(2));
    assert_eq!(get(&files, master, "name"), &nstr("mastlog"));
    let mine = f.view("database_files", &[]);
    assert_eq!(mine.rows.len(), 2);
    assert_eq!(mine.columns[0].name, "file_id");
    assert_eq!(get(&mine, &mine.rows[0], "name"), &nstr("d"));
}

#[test]
fn catalog_views_list_the_databases_objects() {
    let f = Fixture::new();
    let mut tx = f.instance.begin(Isolation::ReadCommitted, None);
    let seq = SequenceDef {
        id: 0,
        schema: "dbo".into(),
        name: "s".into(),
        ty: SqlType::BigInt,
        start: 10,
        increment: 5,
        min: 1,
        max: 1000,
        cycle: false,
        cache: Some(50),
        high_water: None,
    };
    let seq = tx.create_sequence(&f.db, seq).unwrap();
    let p = "CREATE PROCEDURE p AS SELECT 1";
    tx.put_module(&f.db, ModuleKind::Procedure(Default::default()), "dbo", "p", p, false).unwrap();
    tx.commit(CommitOption::Unspecified).unwrap();

    let objects = f.view("objects", &[]);
    let kinds: Vec<(Value, Value, Value)> =
        objects.rows.iter().map(|r| (r[0].clone(), r[5].clone(), r[6].clone())).collect();
    assert_eq!(
        kinds,
        [
            (nstr("t"), Value::Str("U ".into()), nstr("USER_TABLE")),
            (nstr("s"), Value::Str("SO".into()), nstr("SEQUENCE_OBJECT")),
            (nstr("p"), Value::Str("P ".into()), nstr("SQL_STORED_PROCEDURE")),
        ]
    );
    assert_eq!(get(&objects, &objects.rows[0], "schema_id"), &Value::Int(1));
    // 2023-11-14 22:13:20 UTC, the table's recorded creation time, shown in local time.
    let created = get(&objects, &objects.rows[0], "create_date");
    let local = super::utc_micros_to_datetime2(super::local_micros(1_700_000_000_000_000));
    assert_eq!(created, &Value::DateTime(DateTime::from_datetime2(local.unwrap()).unwrap()));
    if super::local_micros(0) == 0 {
        assert_eq!(created, &Value::DateTime(DateTime::parse("2023-11-14 22:13:20").unwrap()));
    }

    let tables = f.view("tables", &[]);
    assert_eq!(tables.rows.len(), 1);
    assert_eq!(get(&tables, &tables.rows[0], "lob_data_space_id"), &Value::Int(1));
    assert_eq!(get(&tables, &tables.rows[0], "max_column_id_used"), &Value::Int(4));
    assert_eq!(f.view("procedures", &[]).rows.len(), 1);

    let columns = f.view("columns", &[]);
    let shape: Vec<(Value, Value, Value, Value, Value, Value)> = columns
        .rows
        .iter()
        .map(|r| {
            let g = |c| get(&columns, r, c).clone();
            (
                g("name"),
                g("system_type_id"),
                g("max_length"),
                g("precision"),
                g("scale"),
                g("is_nullable"),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (
                nstr("id"),
                Value::TinyInt(56),
                Value::SmallInt(4),
                Value::TinyInt(10),
                Value::TinyInt(0),
                Value::Bit(false)
            ),
            (
                nstr("name"),
                Value::TinyInt(167),
                Value::SmallInt(50),
                Value::TinyInt(0),
                Value::TinyInt(0),
                Value::Bit(true)
            ),
            (
                nstr("note"),
                Value::TinyInt(231),
                Value::SmallInt(-1),
                Value::TinyInt(0),
                Value::TinyInt(0),
                Value::Bit(true)
            ),
            (
                nstr("price"),
                Value::TinyInt(106),
                Value::SmallInt(9),
                Value::TinyInt(10),
                Value::TinyInt(2),
                Value::Bit(true)
            ),
        ]
    );
    assert_eq!(get(&columns, &columns.rows[0], "is_identity"), &Value::Bit(true));
    assert_eq!(get(&columns, &columns.rows[1], "collation_name"), &nstr(COLLATION));
    assert_eq!(get(&columns, &columns.rows[0], "collation_name"), &Value::Null);

    let dec = |v| Value::Decimal(Decimal::from_i64(v));
    let sequences = f.view("sequences", &[]);
    let s = &sequences.rows[0];
    assert_eq!(get(&sequences, s, "current_value"), &dec(10), "START WITH before first use");
    assert_eq!(get(&sequences, s, "last_used_value"), &Value::Null);
    assert_eq!(get(&sequences, s, "cache_size"), &Value::Int(50));
    assert_eq!(get(&sequences, s, "is_cached"), &Value::Bit(true));
    assert_eq!(get(&sequences, s, "system_type_id"), &Value::TinyInt(127));
    assert_eq!(get(&sequences, s, "precision"), &Value::TinyInt(19));
    for _ in 0..3 {
        f.db.next_sequence_value(seq.id).unwrap();
    }
    let sequences = f.view("sequences", &[]);
    let s = &sequences.rows[0];
    assert_eq!(get(&sequences, s, "current_value"), &dec(20));
    assert_eq!(get(&sequences, s, "last_used_value"), &dec(20));
    assert_eq!(get(&sequences, s, "is_exhausted"), &Value::Bit(false));

    let schemas = f.view("schemas", &[]);
    assert_eq!(schemas.rows[0], [nstr("dbo"), Value::Int(1), Value::Int(1)]);
    assert!(schemas.rows.iter().any(|r| r[0] == nstr("sys") && r[1] == Value::Int(4)));

    // Another database's catalog views are empty.
    let master = Arc::clone(f.instance.master());
    let ctx = ViewContext { database: &master, ..f.ctx() };
    assert!(system_view(&ctx, "objects", &[]).unwrap().unwrap().rows.is_empty());
}

#[test]
fn fn_dblog_decodes_the_engines_records() {
    let f = Fixture::new();
    f.instance.set_delayed_durability("d", DatabaseDurability::Allowed).unwrap();
    f.insert(CommitOption::Unspecified);
    f.insert(CommitOption::On);
    // A rolled-back insert: the row change, its compensation, the abort.
    let t = match &*f.db.table("dbo", "t").unwrap() {
        Object::Table(t) => t.clone(),
        _ => unreachable!(),
    };
    let mut tx = f.instance.begin(Isolation::ReadCommitted, None);
    tx.insert_row(&f.db, &t, &mut [Value::Null, Value::Null, Value::Null, Value::Null]).unwrap();
    tx.rollback().unwrap();
    f.db.flush_log().unwrap();

    let rs = f.view("fn_dblog", &[Value::Null, Value::Null]);
    assert_eq!(
        &names(&rs)[..6],
        [
            "Current LSN",
            "Operation",
            "Context",
            "Transaction ID",
            "Log Record Length",
            "Previous LSN"
        ]
    );
    let op = |r: &[Value]| get(&rs, r, "Operation").clone();
    let commits: Vec<Value> = rs
        .rows
        .iter()
        .filter(|r| op(r) == nstr("LOP_COMMIT_XACT"))
        .map(|r| get(&rs, r, "Description").clone())
        .collect();
    assert!(commits.ends_with(&[nstr("full"), nstr("delayed")]), "{commits:?}");

    // The last full commit's transaction: its insert, then its commit pointing back at it.
    let at = rs.rows.iter().rposition(|r| get(&rs, r, "Description") == &nstr("full")).unwrap();
    let commit = &rs.rows[at];
    let txn = get(&rs, commit, "Transaction ID").clone();
    let insert = rs
        .rows
        .iter()
        .rfind(|r| get(&rs, r, "Transaction ID") == &txn && op(r) == nstr("LOP_INSERT_ROWS"))
        .unwrap();
    assert_eq!(get(&rs, commit, "Previous LSN"), get(&rs, insert, "Current LSN"));
    assert_eq!(get(&rs, insert, "AllocUnitName"), &nstr("dbo.t.PK_t"));
    assert_eq!(get(&rs, insert, "Context"), &nstr("LCX_CLUSTERED"));
    assert!(matches!(get(&rs, insert, "Page ID"), Value::NStr(p) if p.starts_with("0001:")));
    assert!(matches!(get(&rs, commit, "End Time"), Value::NStr(t) if t.len() == 23));

    // The rollback: a compensation deleting the row, then the abort.
    let last = rs.rows.len() - 1;
    assert_eq!(op(&rs.rows[last]), nstr("LOP_ABORT_XACT"));
    let compensation = &rs.rows[last - 1];
    assert_eq!(op(compensation), nstr("LOP_DELETE_ROWS"));
    assert_eq!(get(&rs, compensation, "Description"), &nstr("COMPENSATION"));
    assert_eq!(get(&rs, compensation, "AllocUnitName"), &nstr("dbo.t.PK_t"));

    // From an LSN on, in the form Current LSN shows with 0x in front.
    let Value::NStr(lsn) = get(&rs, commit, "Current LSN") else { panic!() };
    let tail = f.view("fn_dblog", &[nstr(format!("0x{lsn}")), Value::Null]);
    assert_eq!(tail.rows.len(), rs.rows.len() - at);
    assert_eq!(tail.rows[0], rs.rows[at].clone());
    let one = f.view("fn_dblog", &[nstr(format!("0x{lsn}")), nstr(format!("0x{lsn}"))]);
    assert_eq!(one.rows.len(), 1);
    assert_eq!(f.error("fn_dblog", &[nstr("nonsense"), Value::Null]).number, 9005);

    // tempdb logs nothing.
    let tempdb = Arc::clone(f.instance.tempdb());
    let ctx = ViewContext { database: &tempdb, ..f.ctx() };
    let rs = system_view(&ctx, "fn_dblog", &[Value::Null, Value::Null]).unwrap().unwrap();
    assert!(rs.rows.is_empty());
}

#[test]
fn wait_stats_show_log_and_lock_waits() {
    let f = Fixture::new();
    f.insert(CommitOption::Unspecified);
    let res = Resource::Other { db: f.db.id(), name: 7 };
    let locks = f.instance.locks();
    let (mut holder, mut waiter) = (LockOwner::new(1_000_001), LockOwner::new(1_000_002));
    locks.lock(&mut holder, &res, LockMode::X, None).unwrap();
    let err = locks.lock(&mut waiter, &res, LockMode::S, Some(Duration::from_millis(30)));
    assert_eq!(err.unwrap_err().number(), 1222);
    locks.release_all(&mut holder);

    let rs = f.view("dm_os_wait_stats", &[]);
    let row = |t: &str| find(&rs, |r| r[0] == nstr(t)).to_vec();
    let s = row("LCK_M_S");
    assert_eq!(bigint(&s[1]), 1);
    assert!(bigint(&s[2]) >= 30 && bigint(&s[3]) >= 30, "{s:?}");
    assert_eq!(bigint(&row("LCK_M_X")[1]), 0);
    assert!(bigint(&row("WRITELOG")[1]) >= 1, "a full commit waited for its flush");
    assert_eq!(bigint(&row("LOGBUFFER")[1]), 0);
    assert_eq!(f.counter("Lock Timeouts/sec", "_Total"), 1);
}

#[test]
fn log_stats_follow_sql_servers_columns() {
    let f = Fixture::new();
    let rs = f.view("dm_db_log_stats", &[Value::Null]);
    assert_eq!(
        &names(&rs)[..5],
        [
            "database_id",
            "recovery_model",
            "log_min_lsn",
            "log_end_lsn",
            "current_vlf_sequence_number"
        ]
    );
    let row = &rs.rows[0];
    assert_eq!(get(&rs, row, "database_id"), &Value::Int(5));
    let Value::NStr(end) = get(&rs, row, "log_end_lsn") else { panic!() };
    assert_eq!(end.len(), 22);
    assert_eq!(get(&rs, row, "log_truncation_holdup_reason"), &nstr(f.db.log_reuse_wait()));
    assert!(matches!(get(&rs, row, "total_log_size_mb"), Value::Float(mb) if *mb >= 2.0));
    assert!(matches!(get(&rs, row, "log_checkpoint_lsn"), Value::NStr(_)));
    // tempdb: a row, without a log.
    let rs = f.view("dm_db_log_stats", &[Value::Int(2)]);
    assert_eq!(get(&rs, &rs.rows[0], "log_end_lsn"), &Value::Null);
    assert_eq!(get(&rs, &rs.rows[0], "log_hardened_lsn"), &Value::BigInt(0));
    assert!(f.view("dm_db_log_stats", &[Value::Int(77)]).rows.is_empty());
}

#[test]
fn names_and_arguments_are_checked_as_sql_server_does() {
    let f = Fixture::new();
    assert!(system_view(&f.ctx(), "no_such_view", &[]).is_none());
    assert!(system_view(&f.ctx(), "Databases", &[]).is_some());
    assert_eq!(f.error("databases", &[Value::Int(1)]).number, 215);
    let e = f.error("dm_db_log_stats", &[]);
    assert_eq!(e.number, 216);
    assert_eq!(e.message, "Parameters were not supplied for the function 'sys.dm_db_log_stats'.");
    assert_eq!(f.error("fn_dblog", &[Value::Null]).number, 313);
    assert_eq!(f.error("dm_db_log_stats", &[Value::Null, Value::Null]).number, 8144);
    assert_eq!(f.error("dm_db_log_stats", &[nstr("abc")]).number, 245);
    assert_eq!(f.view("dm_db_log_stats", &[nstr(" 5 ")]).rows.len(), 1);
}

#[test]
fn lsns_and_times_are_formatted_as_sql_server_does() {
    assert_eq!(format_lsn(0), "00000000:00000000:0000");
    assert_eq!(format_lsn(0x1_0000_0020), "00000001:00000020:0001");
    assert_eq!(dblog::parse_lsn("0x00000001:00000020:0001"), Some(0x1_0000_0020));
    assert_eq!(dblog::parse_lsn("1:32:1"), Some(0x1_0000_0020));
    assert_eq!(dblog::parse_lsn("4096"), Some(4096));
    assert_eq!(dblog::parse_lsn("0x1:100000000:1"), None);
    let utc = |us| {
        super::utc_micros_to_datetime2(us)
            .and_then(DateTime::from_datetime2)
            .map_or(Value::Null, Value::DateTime)
    };
    assert_eq!(utc(0), Value::DateTime(DateTime::parse("1970-01-01").unwrap()));
    // 1/300 s rounding: 2 ms is nearer .003 than .000.
    assert_eq!(utc(2_000), Value::DateTime(DateTime::parse("1970-01-01 00:00:00.003").unwrap()));
    assert_eq!(datetime(86_400_000_000), utc(super::local_micros(86_400_000_000)));
}

#[test]
fn information_schema_describes_the_tables_columns_and_keys() {
    let f = Fixture::new();
    let view = |name: &str| information_schema_view(&f.ctx(), name, &[]).unwrap().unwrap();
    let tables = view("tables");
    assert_eq!(
        tables.rows,
        vec![vec![nstr("d"), nstr("dbo"), nstr("t"), Value::Str("BASE TABLE".into())]]
    );

    let columns = view("COLUMNS");
    let col = |name: &str| columns.columns.iter().position(|c| c.name == name).unwrap();
    let names: Vec<&Value> = columns.rows.iter().map(|r| &r[col("COLUMN_NAME")]).collect();
    assert_eq!(names, [&nstr("id"), &nstr("name"), &nstr("note"), &nstr("price")]);
    let row = |i: usize, c: &str| columns.rows[i][col(c)].clone();
    assert_eq!(row(0, "DATA_TYPE"), nstr("int"));
    assert_eq!(row(0, "IS_NULLABLE"), Value::Str("NO".into()));
    assert_eq!(row(0, "NUMERIC_PRECISION"), Value::TinyInt(10));
    assert_eq!(row(1, "DATA_TYPE"), nstr("varchar"));
    assert_eq!(row(1, "CHARACTER_MAXIMUM_LENGTH"), Value::Int(50));
    assert_eq!(row(2, "CHARACTER_MAXIMUM_LENGTH"), Value::Int(-1), "nvarchar(max)");
    assert_eq!(row(2, "CHARACTER_SET_NAME"), nstr("UNICODE"));
    assert_eq!(row(3, "NUMERIC_SCALE"), Value::Int(2));
    assert_eq!(row(3, "ORDINAL_POSITION"), Value::Int(4));

    let constraints = view("TABLE_CONSTRAINTS");
    assert_eq!(constraints.rows.len(), 1);
    assert_eq!(constraints.rows[0][2], nstr("PK_t"));
    assert_eq!(constraints.rows[0][6], Value::Str("PRIMARY KEY".into()));
    let keys = view("KEY_COLUMN_USAGE");
    assert_eq!(keys.rows.len(), 1);
    assert_eq!((&keys.rows[0][6], &keys.rows[0][7]), (&nstr("id"), &Value::Int(1)));

    assert!(view("VIEWS").rows.is_empty());
    assert!(view("ROUTINES").rows.is_empty());
    assert!(view("SCHEMATA").rows.iter().any(|r| r[1] == nstr("INFORMATION_SCHEMA")));
    assert!(information_schema_view(&f.ctx(), "NO_SUCH", &[]).is_none());
}

#[test]
fn log_space_usage_and_log_info_describe_the_log_file() {
    let f = Fixture::new();
    f.insert(CommitOption::Unspecified);
    let rs = f.view("dm_db_log_space_usage", &[]);
    let row = &rs.rows[0];
    let (Value::BigInt(total), Value::BigInt(used)) = (&row[1], &row[2]) else { panic!("{row:?}") };
    assert!(*used > 0 && used < total, "{row:?}");
    assert_eq!(row[4], row[2], "no log backups: everything in use is since the last one");

    let rs = f.view("dm_db_log_info", &[Value::Null]);
    let size_mb = (1u64 << 20) as f64 / (1024.0 * 1024.0);
    assert_eq!(rs.rows.len(), 2, "two segments of 1 MB: {:?}", rs.rows);
    let first = &rs.rows[0];
    assert_eq!(first[2], Value::BigInt(4096), "the first slot follows the file header");
    assert_eq!(first[3], Value::Float(size_mb));
    assert_eq!(first[4], Value::BigInt(1));
    assert_eq!((&first[5], &first[6]), (&Value::Bit(true), &Value::Int(2)));
    let last = &rs.rows[1];
    assert_eq!(
        (&last[4], &last[5], &last[6]),
        (&Value::BigInt(0), &Value::Bit(false), &Value::Int(0))
    );
    let rs = f.view("dm_db_log_stats", &[Value::Null]);
    assert_eq!(get(&rs, &rs.rows[0], "current_vlf_sequence_number"), &Value::BigInt(1));
    assert!(f.view("dm_db_log_info", &[Value::Int(2)]).rows.is_empty(), "tempdb keeps no log");
}

#[test]
fn buffer_descriptors_list_the_cached_pages_of_every_database() {
    let f = Fixture::new();
    f.insert(CommitOption::Unspecified);
    let rs = f.view("dm_os_buffer_descriptors", &[]);
    assert_eq!(
        names(&rs),
        [
            "database_id",
            "file_id",
            "page_id",
            "page_level",
            "allocation_unit_id",
            "page_type",
            "row_count",
            "free_space_in_bytes",
            "is_modified",
            "numa_node",
            "is_in_bpool_extension",
        ]
    );
    let of = |id: u32| -> Vec<&Vec<Value>> {
        rs.rows.iter().filter(|r| get(&rs, r, "database_id") == &Value::Int(id as i32)).collect()
    };
    // Each database's cached pages, once each; master's are there too.
    let mine = of(f.db.id());
    assert_eq!(mine.len(), f.db.space().pool().stats().cached);
    assert!(!of(1).is_empty());
    assert!(rs.rows.len() <= 64, "more pages than frames: {}", rs.rows.len());
    // The table's leaf holds the row just inserted, not yet written.
    let table = match &*f.db.table("dbo", "t").unwrap() {
        Object::Table(t) => t.id,
        _ => unreachable!(),
    };
    let unit = Value::BigInt((i64::from(table) << 16) | 1);
    let leaf = mine
        .iter()
        .find(|r| get(&rs, r, "allocation_unit_id") == &unit)
        .unwrap_or_else(|| panic!("the table's leaf is not cached: {mine:?}"));
    assert_eq!(get(&rs, leaf, "page_type"), &nstr("DATA_PAGE"));
    assert_eq!(get(&rs, leaf, "page_level"), &Value::Int(0));
    assert_eq!(get(&rs, leaf, "row_count"), &Value::Int(1));
    assert!(
        matches!(get(&rs, leaf, "free_space_in_bytes"), Value::Int(n) if *n > 7000 && *n < 8096)
    );
    assert_eq!(get(&rs, leaf, "is_modified"), &Value::Bit(true));
    // A checkpoint writes every dirty page of the database.
    f.db.checkpoint().unwrap();
    let rs = f.view("dm_os_buffer_descriptors", &[]);
    let dirty = rs.rows.iter().filter(|r| {
        get(&rs, r, "database_id") == &Value::Int(f.db.id() as i32)
            && get(&rs, r, "is_modified") == &Value::Bit(true)
    });
    assert_eq!(dirty.count(), 0);
}

#[test]
fn process_memory_shows_the_resident_memory_the_kernel_counts() {
    let f = Fixture::new();
    let rs = f.view("dm_os_process_memory", &[]);
    assert_eq!(rs.rows.len(), 1);
    let row = &rs.rows[0];
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_hwm: i64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    let resident = bigint(get(&rs, row, "physical_memory_in_use_kb"));
    assert!(resident > 1024 && resident <= vm_hwm, "{resident} KB resident, peak {vm_hwm} KB");
    let reserved = bigint(get(&rs, row, "virtual_address_space_reserved_kb"));
    assert!(reserved >= resident, "{reserved} KB mapped");
    assert_eq!(
        bigint(get(&rs, row, "virtual_address_space_available_kb")),
        bigint(get(&rs, row, "total_virtual_address_space_kb")) - reserved
    );
    assert!(bigint(get(&rs, row, "page_fault_count")) > 0);
    assert_eq!(get(&rs, row, "process_physical_memory_low"), &Value::Bit(false));
}

#[test]
fn memory_clerks_and_sys_info_show_the_one_buffer_pool() {
    let f = Fixture::new();
    let rs = f.view("dm_os_memory_clerks", &[]);
    assert_eq!(rs.rows.len(), 2);
    let clerk = &rs.rows[0];
    assert_eq!(get(&rs, clerk, "type"), &nstr("MEMORYCLERK_SQLBUFFERPOOL"));
    let memory = f.instance.frame_pool().memory();
    assert!(memory.allocated_frames > 0);
    assert_eq!(bigint(get(&rs, clerk, "pages_kb")), memory.allocated_frames as i64 * 8);
    // 64 frames for the instance, whatever the number of databases.
    assert_eq!(bigint(get(&rs, clerk, "virtual_memory_reserved_kb")), 64 * 8);
    assert_eq!(bigint(get(&rs, clerk, "page_size_in_bytes")), 8192);
    // Query memory is lent from the same budget: nothing now, at most 75% of it.
    let grants = &rs.rows[1];
    assert_eq!(get(&rs, grants, "type"), &nstr("MEMORYCLERK_SQLQERESERVATIONS"));
    assert_eq!(bigint(get(&rs, grants, "pages_kb")), 0);
    assert_eq!(bigint(get(&rs, grants, "virtual_memory_reserved_kb")), 48 * 8);
    let info = f.view("dm_os_sys_info", &[]);
    assert_eq!(bigint(get(&info, &info.rows[0], "committed_target_kb")), 64 * 8);
    assert_eq!(
        bigint(get(&info, &info.rows[0], "committed_kb")),
        memory.allocated_frames as i64 * 8
    );
}
