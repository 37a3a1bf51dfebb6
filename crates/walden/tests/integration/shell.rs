//! `walden sql` end to end: the real binary on a fresh data directory.
//!
//! Some tests check real query results; others use `-e` (which echoes each batch before it
//! runs) to see exactly what the shell hands over to the executor.

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::sql::{assert_code, embedded_sql, stderr, stdout};

/// Runs `walden sql --data <data> <args>` with nothing on standard input.
fn sql(data: &Path, args: &[&str]) -> Output {
    embedded_sql(data, args, None)
}

#[test]
fn help_lists_every_flag() {
    let dir = tempfile::tempdir().unwrap();
    let o = sql(dir.path(), &["--help"]);
    assert_code(&o, 0);
    let help = stdout(&o);
    for flag in [
        "-S", "-U", "-P", "-d", "-Q", "-q", "-i", "-o", "-b", "-h", "-s", "-W", "-v", "-e", "-r",
        "--data", "--format",
    ] {
        let listed = help.lines().any(|line| {
            line.trim_start().strip_prefix(flag).is_some_and(|rest| {
                rest.is_empty() || rest.starts_with(' ') || rest.starts_with(',')
            })
        });
        assert!(listed, "{flag} missing from:\n{help}");
    }
}

#[test]
fn bad_flags_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["--no-such-flag"][..],
        &["-h", "-2"],
        &["-h", "many"],
        &["-r", "2"],
        &["-v", "no_equals_sign"],
        &["--format", "xml"],
        &["-Q", "SELECT 1", "-i", "a.sql"],
    ] {
        let o = sql(dir.path(), args);
        assert_code(&o, 2);
        assert!(stderr(&o).starts_with("error:"), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn s_to_a_closed_port_is_a_connection_error() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = format!("127.0.0.1,{port}");
    let o = Command::new(env!("CARGO_BIN_EXE_walden"))
        .args(["sql", "-S", &server, "-U", "sa", "-P", "x", "-Q", "SELECT 1"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_code(&o, 1);
    assert!(
        stderr(&o).starts_with(&format!("Sqlcmd: Error: TCP Provider: cannot connect to {server}")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn creates_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("a").join("b");
    let o = sql(&data, &["-Q", ":setvar x 1"]);
    assert_code(&o, 0);
    assert!(data.join("master.mdf").exists());
}

/// GETDATE, CURRENT_TIMESTAMP and SYSDATETIME read local time, GETUTCDATE and SYSUTCDATETIME
/// UTC, as in SQL Server: in a zone 5:30 ahead of UTC (a POSIX TZ string, so no time zone
/// database is needed), and in UTC.
#[test]
fn getdate_is_local_time_and_getutcdate_utc() {
    let dir = tempfile::tempdir().unwrap();
    let query = "SET NOCOUNT ON; SELECT DATEDIFF(MINUTE, GETUTCDATE(), GETDATE()), \
                 DATEDIFF(MINUTE, GETUTCDATE(), CURRENT_TIMESTAMP), \
                 DATEDIFF(MINUTE, SYSUTCDATETIME(), SYSDATETIME())";
    for (tz, minutes) in [("IST-5:30", "330"), ("UTC0", "0")] {
        let o = Command::new(env!("CARGO_BIN_EXE_walden"))
            .args(["sql", "-h", "-1", "-W", "-Q", query, "--data"])
            .arg(dir.path())
            .env("TZ", tz)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_code(&o, 0);
        let fields: Vec<String> = stdout(&o).split_whitespace().map(str::to_string).collect();
        assert_eq!(fields, [minutes; 3], "TZ={tz}");
    }
}

#[test]
fn walden_data_names_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("from-env");
    let o = Command::new(env!("CARGO_BIN_EXE_walden"))
        .args(["sql", "-Q", ":setvar x 1"])
        .env("WALDEN_DATA", &data)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(data.join("master.mdf").exists());
}

#[test]
fn command_line_variables_win_over_setvar() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.sql");
    std::fs::write(&script, "-- $(N) rows\n:setvar N 100000\nPRINT '$(N) $(K)'\nGO\n").unwrap();
    let data = dir.path().join("data");
    let o = sql(&data, &["-e", "-i", script.to_str().unwrap(), "-v", "N=1000", "K=7"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("-- 1000 rows\nPRINT '1000 7'\n"), "{}", stdout(&o));
    // Without -v the script's own default applies.
    let o = sql(&data, &["-e", "-i", script.to_str().unwrap(), "-v", "K=7"]);
    assert!(stdout(&o).contains("PRINT '100000 7'"), "{}", stdout(&o));
}

#[test]
fn batches_split_at_go_and_files_run_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.sql");
    let b = dir.path().join("b.sql");
    let c = dir.path().join("c.sql");
    std::fs::write(&a, "PRINT 'a1'\ngo 2 -- twice\nPRINT 'a2'").unwrap();
    std::fs::write(&b, "PRINT 'b'\n").unwrap();
    std::fs::write(&c, "PRINT 'c'\n").unwrap();
    let files = format!("{},{}", b.display(), c.display());
    let o = sql(&dir.path().join("data"), &["-e", "-i", a.to_str().unwrap(), "-i", &files]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let echoed: Vec<&str> = out.lines().filter(|l| l.starts_with("PRINT")).collect();
    assert_eq!(echoed, ["PRINT 'a1'", "PRINT 'a2'", "PRINT 'b'", "PRINT 'c'"], "{out}");
}

#[test]
fn a_scripts_line_endings_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("crlf.sql");
    std::fs::write(
        &script,
        "CREATE PROCEDURE dbo.p AS\r\n-- help\r\nSELECT 1 AS one\r\nGO\r\n\
         SELECT CHARINDEX(CHAR(13) + CHAR(10) + '-- help' + CHAR(13) + CHAR(10), definition) \
         AS at FROM sys.sql_modules WHERE object_id = OBJECT_ID('dbo.p')\nGO\n",
    )
    .unwrap();
    let o = sql(&dir.path().join("data"), &["-h", "-1", "-i", script.to_str().unwrap()]);
    assert_code(&o, 0);
    // The CR that ends the 25-character first line is the 26th character.
    assert_eq!(stdout(&o).split_whitespace().next(), Some("26"), "{}", stdout(&o));
}

#[test]
fn r_includes_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("inner.sql");
    std::fs::write(&inner, "PRINT 'included'\n").unwrap();
    let query = format!(":setvar dir \"{}\"\n:r $(dir)/inner.sql\nGO", dir.path().display());
    let o = sql(&dir.path().join("data"), &["-e", "-Q", &query]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("PRINT 'included'"), "{}", stdout(&o));
}

#[test]
fn script_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let o = embedded_sql(
        &dir.path().join("data"),
        &["-e", "-v", "who=stdin"],
        Some("PRINT '$(who)'\nGO\n:quit\nPRINT 'never'\n"),
    );
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("PRINT 'stdin'") && !out.contains("never"), "{out}");
}

#[test]
fn o_writes_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.txt");
    let o = sql(&dir.path().join("data"), &["-e", "-o", file.to_str().unwrap(), "-Q", "PRINT 'x'"]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "");
    assert!(std::fs::read_to_string(&file).unwrap().contains("PRINT 'x'"));
}

#[test]
fn b_stops_at_shell_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let o = sql(&data, &["-b", "-e", "-Q", "PRINT '$(undefined_here)'\nGO\nPRINT 'after'"]);
    assert_code(&o, 1);
    assert!(stderr(&o).contains("Sqlcmd: Error: 'undefined_here' scripting variable not defined."));
    assert!(!stdout(&o).contains("after"));

    // Without -b the script goes on and the exit code stays 0.
    let o = sql(&data, &["-e", "-Q", "PRINT '$(undefined_here)'\nGO\nPRINT 'after'"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains("PRINT 'after'"));

    let o = sql(&data, &["-b", "-Q", ":r /no/such/file.sql"]);
    assert_code(&o, 1);
    assert!(stderr(&o).contains("/no/such/file.sql"));

    let o = sql(&data, &["-b", "-Q", ":on error sometimes"]);
    assert_code(&o, 1);
    assert!(stderr(&o).contains("Syntax error at line 1 near command ':on error'."));
}

#[test]
fn d_with_a_missing_database_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let o = sql(&dir.path().join("data"), &["-d", "no_such_database", "-Q", "PRINT 'x'"]);
    assert_code(&o, 1);
}

#[test]
fn select_prints_sqlcmds_layout() {
    let dir = tempfile::tempdir().unwrap();
    let o = sql(dir.path(), &["-Q", "SELECT 1 AS x"]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "x          \n-----------\n          1\n\n(1 row affected)\n");
}

#[test]
fn b_exits_1_on_a_run_time_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = sql(dir.path(), &["-b", "-Q", "SELECT 1/0\nGO\nPRINT 'after'"]);
    assert_code(&o, 1);
    let out = stdout(&o);
    assert!(out.contains("Msg 8134, Level 16, State 1, Server walden, Line 1"), "{out}");
    assert!(out.contains("Divide by zero error encountered."));
    assert!(!out.contains("after"));
}

#[test]
fn errors_without_b_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let o = sql(dir.path(), &["-Q", "SELECT 1/0\nGO\nPRINT 'after'"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("Msg 8134") && out.ends_with("after\n"), "{out}");
}

#[test]
fn r_sends_errors_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let o = sql(dir.path(), &["-r", "0", "-Q", "PRINT 'shown'; SELECT 1/0"]);
    assert_eq!(stdout(&o), "shown\n");
    assert!(stderr(&o).contains("Msg 8134"));
}

#[test]
fn print_row_counts_and_go_count() {
    let dir = tempfile::tempdir().unwrap();
    let script = "CREATE TABLE t(id INT IDENTITY, v VARCHAR(10))\nGO\n\
                  INSERT INTO t(v) VALUES ('a')\nGO 3\n\
                  PRINT 'hello'\nSELECT COUNT(*) AS n FROM t";
    let o = sql(dir.path(), &["-W", "-Q", script]);
    assert_code(&o, 0);
    assert_eq!(
        stdout(&o),
        "\n(1 row affected)\n\n(1 row affected)\n\n(1 row affected)\nhello\nn\n-\n3\n\n(1 row affected)\n"
    );
}

#[test]
fn trimmed_separated_headerless() {
    let dir = tempfile::tempdir().unwrap();
    let query = "SET NOCOUNT ON; SELECT 1 AS a, 'x' AS b UNION ALL SELECT 22, NULL";
    let o = sql(dir.path(), &["-W", "-s", ",", "-Q", query]);
    assert_eq!(stdout(&o), "a,b\n-,-\n1,x\n22,NULL\n\n");
    let o = sql(dir.path(), &["-W", "-h", "-1", "-Q", query]);
    assert_eq!(stdout(&o), "1 x\n22 NULL\n\n");
}

#[test]
fn csv_and_json_formats() {
    let dir = tempfile::tempdir().unwrap();
    let query = "SELECT 1 AS id, 'a,\"b' AS s, NULL AS n; PRINT 'note'";
    let o = sql(dir.path(), &["--format", "csv", "-Q", query]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "id,s,n\r\n1,\"a,\"\"b\",\r\n");
    assert_eq!(stderr(&o), "note\n");
    let o = sql(dir.path(), &["--format", "json", "-Q", query]);
    assert_eq!(stdout(&o), "{\"columns\":[\"id\",\"s\",\"n\"],\"rows\":[[1,\"a,\\\"b\",null]]}\n");
}

#[test]
fn data_survives_a_restart_and_d_picks_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let o = sql(
        dir.path(),
        &[
            "-b",
            "-Q",
            "CREATE DATABASE shop\nGO\nUSE shop\nCREATE TABLE t(x INT)\nINSERT INTO t VALUES (42)",
        ],
    );
    assert_code(&o, 0);
    let o = sql(dir.path(), &["-b", "-d", "shop", "-W", "-h", "-1", "-Q", "SELECT x FROM t"]);
    assert_code(&o, 0);
    assert!(stdout(&o).starts_with("42\n"), "{}", stdout(&o));
}

#[test]
fn exit_with_a_query_sets_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let o = embedded_sql(dir.path(), &[], Some("EXIT(SELECT 3)\n"));
    assert_code(&o, 3);
}
