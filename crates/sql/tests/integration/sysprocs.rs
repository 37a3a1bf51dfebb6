//! `sp_help`, `sp_helptext`, `sp_spaceused` and `sp_helpdb`: SQL Server's result sets over the catalog.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::sysviews::ServerCounters;
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::run;

fn names(out: &Collected, i: usize) -> Vec<&str> {
    out.results[i].columns.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn sp_help_and_sp_helptext_describe_objects() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(
        &mut s,
        "CREATE DATABASE h; USE h;
         CREATE TABLE dbo.item (id INT NOT NULL CONSTRAINT pk_item PRIMARY KEY, name VARCHAR(30),
             price DECIMAL(9,2));
         CREATE INDEX ix_name ON dbo.item (name, price);",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let out =
        run(&mut s, "CREATE PROCEDURE dbo.cheap AS\nSELECT name\nFROM dbo.item WHERE price < 1");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);

    let out = run(&mut s, "EXEC sp_help");
    assert_eq!(names(&out, 0), ["Name", "Owner", "Object_type"]);
    let kinds: Vec<(Value, Value)> =
        out.results[0].rows.iter().map(|r| (r[0].clone(), r[2].clone())).collect();
    let text = |s: &str| Value::NStr(s.into());
    let vtext = |s: &str| Value::Str(s.into());
    assert_eq!(
        kinds,
        [(text("cheap"), vtext("stored procedure")), (text("item"), vtext("user table"))]
    );

    let out = run(&mut s, "EXEC sp_help 'dbo.item'");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert_eq!(out.results.len(), 3, "{:?}", out.results);
    assert_eq!(names(&out, 0), ["Name", "Owner", "Type", "Created_datetime"]);
    assert!(matches!(out.results[0].rows[0][3], Value::DateTime(_)), "a real creation time");
    assert_eq!(
        names(&out, 1),
        [
            "Column_name",
            "Type",
            "Computed",
            "Length",
            "Prec",
            "Scale",
            "Nullable",
            "TrimTrailingBlanks",
            "FixedLenNullInSource",
            "Collation"
        ]
    );
    let price = &out.results[1].rows[2];
    assert_eq!(price[0], text("price"));
    assert_eq!(price[1], text("decimal"));
    assert_eq!(
        (&price[4], &price[5], &price[6]),
        (&vtext("9    "), &vtext("2    "), &vtext("yes"))
    );
    let indexes = &out.results[2].rows;
    assert_eq!(indexes.len(), 2, "{indexes:?}");
    assert_eq!(indexes[0][0], text("pk_item"));
    assert_eq!(indexes[1][2], text("name, price"));

    let out = run(&mut s, "EXEC sp_helptext 'dbo.cheap'");
    let lines: Vec<&Value> = out.results[0].rows.iter().map(|r| &r[0]).collect();
    assert_eq!(
        lines,
        [
            &text("CREATE PROCEDURE dbo.cheap AS\n"),
            &text("SELECT name\n"),
            &text("FROM dbo.item WHERE price < 1")
        ]
    );

    let out = run(
        &mut s,
        "INSERT dbo.item VALUES (1, 'a', 0.5), (2, 'b', 2); EXEC sp_spaceused 'dbo.item'",
    );
    let used = &out.results[0];
    assert_eq!(names(&out, 0), ["name", "rows", "reserved", "data", "index_size", "unused"]);
    assert_eq!(used.rows[0][0], text("item"));
    assert_eq!(used.rows[0][1], vtext(&format!("{:<20}", 2)));
    assert_eq!(used.rows[0][2..], [vtext("16 KB"), vtext("8 KB"), vtext("8 KB"), vtext("0 KB")]);
    let out = run(&mut s, "EXEC sp_spaceused");
    assert_eq!(names(&out, 0), ["database_name", "database_size", "unallocated space"]);
    assert_eq!(out.results[0].rows[0][0], text("h"));
    assert_eq!(names(&out, 1), ["reserved", "data", "index_size", "unused"]);

    let out =
        run(&mut s, "EXEC sp_help 'nosuch'; EXEC sp_helptext 'dbo.item'; EXEC sp_spaceused 'no'");
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert_eq!(numbers, [15009, 15197, 15009]);
    s.close();
    instance.close().unwrap();
}

#[test]
fn sp_helpdb_lists_databases_and_one_databases_files() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out =
        run(&mut s, "CREATE DATABASE hd; ALTER DATABASE hd SET RECOVERY FULL; EXEC sp_helpdb");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert_eq!(
        names(&out, 0),
        ["name", "db_size", "owner", "dbid", "created", "status", "compatibility_level"]
    );
    let listed: Vec<&Value> = out.results[0].rows.iter().map(|r| &r[0]).collect();
    let nstr = |t: &str| Value::NStr(t.into());
    assert_eq!(
        listed,
        [&nstr("hd"), &nstr("master"), &nstr("model"), &nstr("msdb"), &nstr("tempdb")]
    );

    let out = run(&mut s, "EXEC sp_helpdb 'hd'");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let Value::NStr(status) = &out.results[0].rows[0][5] else { panic!("{:?}", out.results) };
    assert!(status.contains("Status=ONLINE") && status.contains("Recovery=FULL"), "{status}");
    assert_eq!(
        names(&out, 1),
        ["name", "fileid", "filename", "filegroup", "size", "maxsize", "growth", "usage"]
    );
    let files = &out.results[1].rows;
    assert_eq!(files.len(), 2);
    assert_eq!(files[0][7], Value::Str("data only".into()));
    assert_eq!(files[1][7], Value::Str("log only".into()));
    assert_eq!(files[1][3], Value::Null, "the log is in no filegroup");

    let out = run(&mut s, "EXEC sp_helpdb 'nosuch'");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), [15010]);
    s.close();
    instance.close().unwrap();
}

#[test]
fn sp_configure_shows_max_server_memory_once_advanced_options_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = InstanceConfig::default();
    // 300 MB: the one buffer pool every database shares.
    config.database.pool.frames = 300 * 128;
    let instance = Instance::open(dir.path(), config).unwrap();
    let counters = Arc::new(ServerCounters::default());
    let mut s = Session::with_counters(Arc::clone(&instance), Arc::clone(&counters));
    // Hidden while 'show advanced options' is 0, as in SQL Server.
    let out = run(&mut s, "EXEC sp_configure 'max server memory (MB)'");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), [15123]);

    let out = run(&mut s, "EXEC sp_configure 'show advanced options', 1; RECONFIGURE");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert!(
        out.messages.iter().any(|m| m.message
            == "Configuration option 'show advanced options' changed from 0 to 1. Run the \
                RECONFIGURE statement to install."),
        "{:?}",
        out.messages
    );
    let out = run(&mut s, "EXEC sp_configure 'max server memory (MB)'");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert_eq!(names(&out, 0), ["name", "minimum", "maximum", "config_value", "run_value"]);
    assert_eq!(
        out.results[0].rows,
        [vec![
            Value::NStr("max server memory (MB)".into()),
            Value::Int(128),
            Value::Int(2_147_483_647),
            Value::Int(300),
            Value::Int(300),
        ]]
    );
    // Every option is listed now, and the setting is the server's: another session sees it.
    let mut other = Session::with_counters(Arc::clone(&instance), counters);
    let out = run(&mut s, "EXEC sp_configure");
    assert_eq!(out.results[0].rows.len(), 12);
    let out = run(&mut other, "SELECT value FROM sys.configurations WHERE configuration_id = 518");
    assert_eq!(out.results[0].rows, [vec![Value::Int(1)]]);

    // Only 0 and 1; the other options stay read-only.
    let out = run(&mut s, "EXEC sp_configure 'show advanced options', 2");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), [15129]);
    let out = run(&mut s, "EXEC sp_configure 'max server memory (MB)', 1024");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), [15247]);
    let out = run(&mut s, "EXEC sp_configure 'show advanced options', 0");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let out = run(&mut s, "EXEC sp_configure 'max server memory (MB)'");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), [15123]);
}

#[test]
fn sp_describe_first_result_set_describes_without_running() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(
        &mut s,
        "CREATE TABLE item (id INT NOT NULL PRIMARY KEY, name VARCHAR(30) COLLATE Latin1_General_CS_AS,
             seen SMALLDATETIME, price MONEY);",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let out = run(
        &mut s,
        "EXEC sp_describe_first_result_set N'DECLARE @n INT = 1; UPDATE item SET price = 0;
             IF @n > 0 SELECT id, name, seen + @n AS next_seen, price, @p AS p FROM item
             ELSE SELECT 1', N'@p NVARCHAR(10)'",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let set = &out.results[0];
    assert_eq!(set.columns.len(), 39);
    assert_eq!(set.columns[0].name, "is_hidden");
    assert_eq!(set.columns[38].name, "tds_collation_sort_id");
    let col = |name: &str| set.columns.iter().position(|c| c.name == name).unwrap();
    let described: Vec<Vec<Value>> = set
        .rows
        .iter()
        .map(|r| {
            ["column_ordinal", "name", "is_nullable", "system_type_id", "system_type_name"]
                .iter()
                .chain(&["max_length", "precision", "scale", "collation_name", "is_case_sensitive"])
                .chain(&["tds_type_id", "tds_length"])
                .map(|c| r[col(c)].clone())
                .collect()
        })
        .collect();
    let text = |s: &str| Value::NStr(s.into());
    let row = |ordinal: i32, name: &str, nullable: bool, id: i32, type_name: &str| {
        vec![Value::Int(ordinal), text(name), Value::Bit(nullable), Value::Int(id), text(type_name)]
    };
    let rest = |len: i16, p: u8, sc: u8, coll: Option<&str>, cs: bool, tds: i32, tds_len: i32| {
        vec![
            Value::SmallInt(len),
            Value::TinyInt(p),
            Value::TinyInt(sc),
            coll.map_or(Value::Null, text),
            Value::Bit(cs),
            Value::Int(tds),
            Value::Int(tds_len),
        ]
    };
    let full = |a: Vec<Value>, b: Vec<Value>| a.into_iter().chain(b).collect::<Vec<_>>();
    assert_eq!(
        described,
        [
            full(row(1, "id", false, 56, "int"), rest(4, 10, 0, None, false, 0x26, 4)),
            full(
                row(2, "name", true, 167, "varchar(30)"),
                rest(30, 0, 0, Some("Latin1_General_CS_AS"), true, 0xA7, 30)
            ),
            full(
                row(3, "next_seen", true, 58, "smalldatetime"),
                rest(4, 16, 0, None, false, 0x6F, 4)
            ),
            full(row(4, "price", true, 60, "money"), rest(8, 19, 4, None, false, 0x6E, 8)),
            full(
                row(5, "p", true, 231, "nvarchar(10)"),
                rest(20, 0, 0, Some("SQL_Latin1_General_CP1_CI_AS"), false, 0xE7, 20)
            ),
        ]
    );
    // The UPDATE before the SELECT did not run, nor was the SELECT's result sent.
    assert_eq!(out.results.len(), 1);
    let out = run(&mut s, "INSERT item VALUES (1, 'a', NULL, 5); EXEC sp_describe_first_result_set N'UPDATE item SET price = 0'");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert!(out.results[0].rows.is_empty(), "no result set, no rows");
    let out = run(&mut s, "SELECT price FROM item");
    assert_eq!(out.results[0].rows, [[Value::Money(50_000)]]);

    // Errors as SQL Server gives them: the batch's, then 11501 or 11529.
    let numbers = |sql: &str| {
        let out = run(&mut Session::new(Arc::clone(&instance)), sql);
        out.errors().map(|e| e.number).collect::<Vec<_>>()
    };
    assert_eq!(numbers("EXEC sp_describe_first_result_set N'SELECT FROM'"), [156, 11501]);
    assert_eq!(numbers("EXEC sp_describe_first_result_set N'SELECT * FROM nosuch'"), [208, 11529]);
    assert_eq!(numbers("EXEC sp_describe_first_result_set"), [201]);

    // The table-valued function: the same rows, and an error as a row of its own.
    let out = run(
        &mut s,
        "SELECT name, system_type_name, error_number FROM \
         sys.dm_exec_describe_first_result_set(N'SELECT seen FROM item', NULL, 0);
         SELECT error_number, error_type_desc FROM \
         sys.dm_exec_describe_first_result_set(N'SELECT nope FROM item', NULL, 0)",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert_eq!(out.results[0].rows, [[text("seen"), text("smalldatetime"), Value::Null]]);
    assert_eq!(out.results[1].rows, [[Value::Int(207), text("MISC")]]);
}

/// Issue 28: sp_describe_first_result_set reads the catalog, not the rows: a row another
/// session's transaction holds does not block it (the SELECT itself waits, 1222), an unknown
/// column of an empty table is 207 (4104 with a wrong qualifier), and the columns say which are
/// identity, computed and updatable, and with browse mode 1 their source and which key
/// column the SELECT leaves out, added hidden.
#[test]
fn sp_describe_first_result_set_reads_the_catalog_not_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let out = run(
        &mut s,
        "CREATE TABLE gadget (id INT IDENTITY PRIMARY KEY, code VARCHAR(10) NOT NULL UNIQUE,
             twice AS id * 2, note NVARCHAR(20));
         CREATE TABLE empty_t (a INT); INSERT gadget (code) VALUES ('a')",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let numbers = |sql: &str| {
        let out = run(&mut Session::new(Arc::clone(&instance)), sql);
        out.errors().map(|e| e.number).collect::<Vec<_>>()
    };
    assert_eq!(
        numbers("EXEC sp_describe_first_result_set N'SELECT nope FROM empty_t'"),
        [207, 11529]
    );
    assert_eq!(
        numbers("EXEC sp_describe_first_result_set N'SELECT x.a FROM empty_t'"),
        [4104, 11529]
    );
    assert_eq!(
        numbers("EXEC sp_describe_first_result_set N'SELECT a FROM empty_t WHERE nope = 1'"),
        [207, 11529]
    );

    let text = |s: &str| Value::NStr(s.into());
    let bit = Value::Bit;
    let out = run(
        &mut s,
        "SELECT name, is_hidden, is_identity_column, is_computed_column, is_updateable,
             is_part_of_unique_key, source_database, source_schema, source_table, source_column
         FROM sys.dm_exec_describe_first_result_set(
             N'SELECT note, twice, DATEADD(day, 1, GETDATE()) AS e FROM gadget', NULL, 1)",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let source = |column: &str| vec![text("master"), text("dbo"), text("gadget"), text(column)];
    let mut note = vec![text("note"), bit(false), bit(false), bit(false), bit(true), bit(false)];
    note.extend(source("note"));
    let mut twice = vec![text("twice"), bit(false), bit(false), bit(true), bit(false), bit(false)];
    twice.extend(source("twice"));
    let mut e = vec![text("e"), bit(false), bit(false), bit(false), bit(false), bit(false)];
    e.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
    let mut id = vec![text("id"), bit(true), bit(true), bit(false), bit(false), bit(true)];
    id.extend(source("id"));
    assert_eq!(out.results[0].rows, [note, twice, e, id]);
    // Mode 0: no source, no unique key, no hidden column.
    let out = run(
        &mut s,
        "SELECT name, is_identity_column, is_part_of_unique_key, source_table
         FROM sys.dm_exec_describe_first_result_set(N'SELECT code FROM gadget', NULL, 0)",
    );
    assert_eq!(out.results[0].rows, [[text("code"), bit(false), Value::Null, Value::Null]]);

    let mut holder = Session::new(Arc::clone(&instance));
    let out = run(&mut holder, "BEGIN TRAN; UPDATE gadget SET note = N'x'");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let out = run(
        &mut s,
        "SET LOCK_TIMEOUT 200; EXEC sp_describe_first_result_set N'SELECT id, note FROM gadget'",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    assert_eq!(out.results[0].rows.len(), 2);
    let out = run(&mut s, "SELECT id, note FROM gadget");
    assert_eq!(out.errors().map(|e| e.number).collect::<Vec<_>>(), [1222]);
    run(&mut holder, "ROLLBACK");
}

/// `sp_statistics` (JDBC's getIndexInfo) reports a table's rows and pages from its tree, as
/// SQL Server does from its metadata: under SERIALIZABLE, beside another session's open
/// insert, it neither waits for the writer nor locks the table against it.
#[test]
fn sp_statistics_counts_without_locking_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut writer = Session::new(Arc::clone(&instance));
    let mut reader = Session::new(Arc::clone(&instance));
    let out = run(
        &mut writer,
        "CREATE TABLE dbo.s (id INT PRIMARY KEY, v VARCHAR(200));
         INSERT dbo.s SELECT value, REPLICATE('x', 200) FROM GENERATE_SERIES(1, 500);
         BEGIN TRAN; INSERT dbo.s VALUES (1000, 'open');",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let out = run(
        &mut reader,
        "SET LOCK_TIMEOUT 0; SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
         BEGIN TRAN; EXEC sp_statistics 's';",
    );
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    let table = &out.results[0].rows[0];
    // The open insert's row is in the tree, as SQL Server's metadata counts it too.
    assert_eq!(table[10], Value::Int(501), "CARDINALITY");
    let Value::Int(pages) = table[11] else { panic!("PAGES {:?}", table[11]) };
    assert!(pages > 1, "{pages} pages for 501 rows of 200 bytes");
    // The reader holds nothing that stops the writer going on.
    let out = run(&mut writer, "SET LOCK_TIMEOUT 0; INSERT dbo.s VALUES (1001, 'more'); COMMIT");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
    run(&mut reader, "COMMIT");
}
