//! Database files sized as SQL Server sizes them: `CREATE DATABASE ... ON (SIZE, MAXSIZE,
//! FILEGROWTH) LOG ON (...)`, `sys.database_files`, `ALTER DATABASE ... MODIFY FILE`, errors
//! 1105 and 9002 when a file may not grow (the statement fails, the database stays readable
//! and is writable again once there is room, without a restart), and `DBCC SHRINKFILE`.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{ok, restart, run};

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(n) => i64::from(*n),
        Value::BigInt(n) => *n,
        Value::SmallInt(n) => i64::from(*n),
        Value::TinyInt(n) => i64::from(*n),
        Value::Bit(b) => i64::from(*b),
        other => panic!("not an integer: {other:?}"),
    }
}

/// (name, size, max_size, growth, is_percent_growth) of the current database's files.
fn files(s: &mut Session) -> Vec<(String, i64, i64, i64, i64)> {
    let out = ok(
        s,
        "SELECT name, size, max_size, growth, is_percent_growth FROM sys.database_files \
         ORDER BY file_id",
    );
    out.results[0]
        .rows
        .iter()
        .map(|r| {
            let name = match &r[0] {
                Value::NStr(n) | Value::Str(n) => n.clone(),
                other => panic!("{other:?}"),
            };
            (name, int(&r[1]), int(&r[2]), int(&r[3]), int(&r[4]))
        })
        .collect()
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn create_database_sizes_the_files_and_sys_database_files_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let (mdf, ldf) = (dir.path().join("f.mdf"), dir.path().join("f_log.ldf"));
    ok(
        &mut s,
        &format!(
            "CREATE DATABASE f ON PRIMARY (NAME = f_data, FILENAME = '{}', SIZE = 2MB, \
             MAXSIZE = 10MB, FILEGROWTH = 1MB) LOG ON (NAME = f_log, FILENAME = '{}', \
             SIZE = 1024KB, MAXSIZE = UNLIMITED, FILEGROWTH = 10%)",
            mdf.display(),
            ldf.display()
        ),
    );
    assert_eq!(len(&mdf), 2 << 20);
    // The log: a 4 KB header, then four segments of 256 KB (SQL Server's four VLFs).
    assert_eq!(len(&ldf), 4096 + (1 << 20));
    ok(&mut s, "USE f");
    let f = files(&mut s);
    assert_eq!(f[0], ("f_data".into(), 256, 1280, 128, 0));
    assert_eq!((f[1].0.as_str(), f[1].2, f[1].3, f[1].4), ("f_log", -1, 10, 1));
    assert_eq!(f[1].1, 129, "1 MB and the header page, in whole pages");

    // The defaults are model's: 8 MB each, 64 MB growths, no maximum.
    ok(&mut s, "CREATE DATABASE g; USE g");
    let g = files(&mut s);
    assert_eq!(g[0], ("g".into(), 1024, -1, 8192, 0));
    assert_eq!((g[1].0.as_str(), g[1].1, g[1].2, g[1].3), ("g_log", 1025, -1, 8192));
    assert_eq!(len(&dir.path().join("g.mdf")), 8 << 20);
    assert_eq!(len(&dir.path().join("g_log.ldf")), 4096 + (8 << 20));

    // MODIFY FILE changes the maximum and growth, and a larger SIZE grows the file now.
    ok(&mut s, "ALTER DATABASE f MODIFY FILE (NAME = f_data, MAXSIZE = 20MB, FILEGROWTH = 25%)");
    ok(&mut s, "ALTER DATABASE f MODIFY FILE (NAME = f_log, SIZE = 2MB)");
    ok(&mut s, "USE f");
    let f = files(&mut s);
    assert_eq!(f[0], ("f_data".into(), 256, 2560, 25, 1));
    assert!(f[1].1 >= 256, "the log grew to 2 MB: {:?}", f[1]);
    let out = ok(&mut s, "EXEC sp_helpfile");
    assert_eq!(out.results[0].rows.len(), 2);
    assert_eq!(out.results[0].rows[0][5], Value::NStr("20480 KB".into()));
    assert_eq!(out.results[0].rows[0][6], Value::NStr("25%".into()));

    // SQL Server's errors for what cannot be done.
    let errors = [
        ("ALTER DATABASE f MODIFY FILE (NAME = nosuch, MAXSIZE = 20MB)", 5041),
        ("ALTER DATABASE f MODIFY FILE (NAME = f_data, SIZE = 1MB)", 5039),
        ("ALTER DATABASE f MODIFY FILE (NAME = f_data, SIZE = 30MB)", 5040),
        ("ALTER DATABASE f ADD FILE (NAME = f2, FILENAME = '/tmp/f2.ndf')", 40514),
        ("ALTER DATABASE f ADD LOG FILE (NAME = f2_log, FILENAME = '/tmp/f2.ldf')", 40514),
        ("ALTER DATABASE f REMOVE FILE f_data", 40514),
        ("CREATE DATABASE h ON (NAME = h, SIZE = 2MB, MAXSIZE = 1MB)", 5040),
        ("CREATE DATABASE h ON (NAME = h1), (NAME = h2)", 40514),
    ];
    for (sql, number) in errors {
        let out = run(&mut s, sql);
        let e = out.errors().next().unwrap_or_else(|| panic!("{sql} succeeded"));
        assert_eq!(e.number, number, "{sql}: {}", e.message);
    }

    // The names, maximum and growth are kept in master across a restart.
    let (_instance, mut s) = restart(dir.path(), s, instance);
    ok(&mut s, "USE f");
    let again = files(&mut s);
    assert_eq!(again[0], ("f_data".into(), 256, 2560, 25, 1));
    assert_eq!((again[1].2, again[1].3, again[1].4), (-1, 10, 1));
}

/// Inserts 3000-byte rows from `first` in autocommit until one fails; returns the error's
/// number and message and the rows inserted.
fn insert_until_error(s: &mut Session, first: i32) -> (i32, String, i64) {
    let out = ok(
        s,
        &format!(
            "DECLARE @i INT = {first}, @n INT = 0;
             BEGIN TRY
                 WHILE @n < 100000 BEGIN
                     INSERT INTO dbo.t VALUES (@i, REPLICATE('x', 3000));
                     SET @i += 1; SET @n += 1;
                 END
             END TRY
             BEGIN CATCH
                 SELECT ERROR_NUMBER(), ERROR_MESSAGE(), @n;
             END CATCH"
        ),
    );
    let row = &out.results.first().expect("the inserts never failed").rows[0];
    let text = match &row[1] {
        Value::NStr(t) | Value::Str(t) => t.clone(),
        other => panic!("{other:?}"),
    };
    (int(&row[0]) as i32, text, int(&row[2]))
}

fn count(s: &mut Session) -> i64 {
    int(&ok(s, "SELECT COUNT(*) FROM dbo.t").results[0].rows[0][0])
}

#[test]
fn a_data_file_at_maxsize_is_1105_and_writable_again_once_maxsize_is_raised() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE d1 ON (NAME = d1, SIZE = 1MB, MAXSIZE = 2MB, FILEGROWTH = 512KB);
         USE d1;
         CREATE TABLE dbo.t (k INT CONSTRAINT pk_t PRIMARY KEY, v CHAR(3000));",
    );
    let (number, message, n) = insert_until_error(&mut s, 0);
    assert_eq!(number, 1105, "{message}");
    assert_eq!(
        message,
        "Could not allocate space for object 'dbo.t'.'pk_t' in database 'd1' because the \
         'PRIMARY' filegroup is full. Create disk space by deleting unneeded files, dropping \
         objects in the filegroup, adding additional files to the filegroup, or setting \
         autogrowth on for existing files in the filegroup."
    );
    assert!(n > 100, "2 MB held {n} rows");
    // The failed statement rolled back; the database is readable and consistent.
    assert_eq!(count(&mut s), n);
    ok(&mut s, "DBCC CHECKDB WITH NO_INFOMSGS");
    assert_eq!(files(&mut s)[0].1, 256, "the file stopped at MAXSIZE");
    // Raising MAXSIZE makes room without a restart.
    ok(&mut s, "ALTER DATABASE d1 MODIFY FILE (NAME = d1, MAXSIZE = 4MB)");
    let (number, _, more) = insert_until_error(&mut s, 1_000_000);
    assert_eq!(number, 1105);
    assert!(more > 100, "{more} more rows");
    assert_eq!(count(&mut s), n + more);
}

#[test]
fn a_log_at_maxsize_is_9002_and_writable_again_after_a_checkpoint_or_a_larger_maxsize() {
    let dir = tempfile::tempdir().unwrap();
    // The test checkpoints itself.
    let config = InstanceConfig { checkpoint_poll_ms: 0, ..InstanceConfig::default() };
    let instance = Instance::open(dir.path(), config).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE DATABASE l ON (NAME = l, SIZE = 8MB, MAXSIZE = UNLIMITED)
             LOG ON (NAME = l_log, SIZE = 1MB, MAXSIZE = 2MB, FILEGROWTH = 512KB);
         USE l;
         CREATE TABLE dbo.t (k INT PRIMARY KEY, v CHAR(3000));",
    );
    // One transaction that keeps the whole log: new work is refused with room left for its
    // rollback.
    ok(&mut s, "BEGIN TRANSACTION");
    let (number, message, n) = insert_until_error(&mut s, 0);
    assert_eq!(number, 9002, "{message}");
    assert!(
        message.starts_with(
            "The transaction log for database 'l' is full due to 'ACTIVE_TRANSACTION'."
        ),
        "{message}"
    );
    assert!(n > 20, "{n} rows before the log filled");
    ok(&mut s, "ROLLBACK");
    assert_eq!(count(&mut s), 0);
    let log_size = files(&mut s)[1].1;
    assert!(log_size <= 256 + 1, "the log stayed within MAXSIZE: {log_size} pages");

    // In autocommit the log fills with committed work until a checkpoint truncates it.
    let (number, message, first) = insert_until_error(&mut s, 0);
    assert_eq!(number, 9002, "{message}");
    assert!(message.contains("is full due to 'CHECKPOINT'"), "{message}");
    ok(&mut s, "CHECKPOINT");
    let (number, _, second) = insert_until_error(&mut s, 100_000);
    assert_eq!(number, 9002);
    assert!(second > 20, "a checkpoint made room for {second} rows");
    // A larger maximum makes room too.
    ok(&mut s, "ALTER DATABASE l MODIFY FILE (NAME = l_log, MAXSIZE = 4MB)");
    let (number, _, third) = insert_until_error(&mut s, 200_000);
    assert_eq!(number, 9002);
    assert!(third > 20);
    assert_eq!(count(&mut s), first + second + third);
    ok(&mut s, "DBCC CHECKDB WITH NO_INFOMSGS");

    // DBCC SHRINKFILE cuts the log back once it is truncated and its end has moved on into a
    // slot at the front of the file (as SQL Server's active VLF holds a shrink, an operator
    // runs it again after more log and a checkpoint).
    ok(&mut s, "CHECKPOINT");
    let before = files(&mut s)[1].1;
    let mut after = before;
    for round in 0..100 {
        ok(
            &mut s,
            &format!(
                "DECLARE @i INT = 0; WHILE @i < 20 BEGIN
                     INSERT INTO dbo.t VALUES (-1 - {round} * 20 - @i, 'x'); SET @i += 1;
                 END;
                 CHECKPOINT"
            ),
        );
        let out = ok(&mut s, "DBCC SHRINKFILE (l_log, 1)");
        assert_eq!(out.results[0].columns.len(), 6);
        after = files(&mut s)[1].1;
        assert_eq!(int(&out.results[0].rows[0][2]), after);
        if after < before {
            break;
        }
    }
    assert!(after < before, "{after} < {before}");
    let out = run(&mut s, "DBCC SHRINKFILE (nosuch)");
    assert_eq!(out.errors().next().map(|e| e.number), Some(8985));
}
