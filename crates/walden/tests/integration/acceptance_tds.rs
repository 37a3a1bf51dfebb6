//! `walden sql -S` against `walden serve`: the acceptance scripts of `tests/acceptance/` run
//! over TDS, as `walden sql -S 127.0.0.1,PORT -U sa -P PASSWORD -b -i <script> -v N=<n> K=<k>`
//! on a fresh server, and must exit 0 and print what the embedded shell prints for the same
//! script (timings and counters aside); plus the client's own behaviour: errors, `-b`, a
//! refused login, `-d`, `SQLCMDPASSWORD`, transactions across batches, large results.
//!
//! Sizes are those of `acceptance.rs` (N=2000, K=100 unless `WALDEN_ACCEPTANCE_N` and
//! `WALDEN_ACCEPTANCE_K` say otherwise).

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::process::{Command, Output};

use common::server::Server;
use common::sql::{
    acceptance_dir, acceptance_sizes, assert_code, embedded_sql, run, stderr, stdout,
};
use common::PASSWORD;

// `walden sql -S` against the shared server guard, for this file's tests.
impl Server {
    fn address(&self) -> String {
        format!("127.0.0.1,{}", self.port)
    }

    /// Runs `walden sql -S <this server> <args>`, with `stdin` piped in if given.
    fn sql(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.sql_with(&["-S", &self.address(), "-U", "sa", "-P", PASSWORD], args, stdin, &[])
    }

    fn sql_with(
        &self,
        login: &[&str],
        args: &[&str],
        stdin: Option<&str>,
        env: &[(&str, &str)],
    ) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_walden"));
        command.arg("sql").args(login).args(args).env_remove("SQLCMDPASSWORD");
        command.envs(env.iter().copied());
        run(command, stdin)
    }
}

/// The output's lines with every run of digits made `#` and white space removed: what is
/// left does not depend on timings, flush counts or the widths they are padded to.
fn shape(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            let mut out = String::new();
            for word in line.split_whitespace() {
                // NULL is a value too: a ratio over a count that timing left at zero (seed
                // 004's bytes per write, when no delayed flush fell inside the loop) is NULL
                // in one run and a number in the other.
                if word == "NULL" {
                    if !out.ends_with('#') {
                        out.push('#');
                    }
                    continue;
                }
                for c in word.chars() {
                    if c.is_ascii_digit() {
                        if !out.ends_with('#') {
                            out.push('#');
                        }
                    } else {
                        out.push(c);
                    }
                }
            }
            out
        })
        .collect()
}

/// Runs one script over TDS on a fresh server and embedded on a fresh data directory: both
/// exit 0 and print the same lines, numbers aside.
fn run_script(name: &str) {
    let script = acceptance_dir().join(name);
    assert!(script.exists(), "{} is missing", script.display());
    let script = script.to_str().unwrap();
    let (n, k) = acceptance_sizes();
    let (n, k) = (format!("N={n}"), format!("K={k}"));
    let server = Server::start(&[]);
    let remote = server.sql(&["-b", "-i", script, "-v", &n, &k], None);
    println!("{name} over TDS with {n} {k}:\n{}{}", stdout(&remote), stderr(&remote));
    assert_code(&remote, 0);

    let data = tempfile::tempdir().unwrap();
    let embedded = embedded_sql(data.path(), &["-b", "-i", script, "-v", &n, &k], None);
    assert_code(&embedded, 0);
    assert!(!stdout(&remote).trim().is_empty(), "{name} printed nothing");
    assert_eq!(shape(&stdout(&remote)), shape(&stdout(&embedded)), "{name}");
}

common::acceptance_tests!(run_script);

#[test]
fn an_error_prints_msg_lines_and_b_exits_1() {
    let server = Server::start(&[]);
    let o = server.sql(&["-Q", "SELECT 1/0"], None);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(
        out.contains("Msg 8134, Level 16, State 1, Server walden, Line 1\nDivide by zero error encountered.\n"),
        "{out}"
    );
    let o = server.sql(&["-b", "-Q", "SELECT 1/0"], None);
    assert_code(&o, 1);
    assert!(stdout(&o).contains("Msg 8134"));
}

#[test]
fn a_wrong_password_exits_1_with_the_servers_message() {
    let server = Server::start(&[]);
    let o = server.sql_with(
        &["-S", &server.address(), "-U", "sa", "-P", "not the password"],
        &["-Q", "SELECT 1"],
        None,
        &[],
    );
    assert_code(&o, 1);
    assert!(stderr(&o).contains("Sqlcmd: Error: Login failed for user 'sa'."), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
}

#[test]
fn sa_and_sqlcmdpassword_are_the_defaults() {
    let server = Server::start(&[]);
    let address = format!("tcp:127.0.0.1,{}", server.port);
    let query = ["-W", "-h", "-1", "-Q", "SELECT 'logged in'"];
    let o = server.sql_with(&["-S", &address], &query, None, &[("SQLCMDPASSWORD", PASSWORD)]);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "logged in\n\n(1 row affected)\n");
    // Without -P or SQLCMDPASSWORD the password is empty, and sa's is not.
    let o = server.sql_with(&["-S", &address], &query, None, &[]);
    assert_code(&o, 1);
    assert!(stderr(&o).contains("Login failed for user 'sa'."), "{}", stderr(&o));
}

#[test]
fn d_is_the_login_database() {
    let server = Server::start(&[]);
    let o = server.sql(&["-d", "tempdb", "-W", "-h", "-1", "-Q", "SELECT DB_NAME()"], None);
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "tempdb\n\n(1 row affected)\n");
    let o = server.sql(&["-d", "nodb", "-Q", "SELECT 1"], None);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(err.contains("Cannot open database \"nodb\" requested by the login."), "{err}");
    assert!(err.contains("Login failed for user 'sa'."), "{err}");
}

#[test]
fn a_transaction_spans_batches() {
    let server = Server::start(&[]);
    let script = "SET NOCOUNT ON\nCREATE TABLE t (i INT)\nGO\nBEGIN TRAN\nGO\n\
                  INSERT t VALUES (1)\nSELECT @@TRANCOUNT AS open_in_batch\nGO\n\
                  COMMIT\nSELECT @@TRANCOUNT AS after, COUNT(*) AS n FROM t\nGO\n";
    let o = server.sql(&["-b", "-W", "-h", "-1"], Some(script));
    assert_code(&o, 0);
    assert_eq!(stdout(&o), "1\n\n0 1\n\n");
}

#[test]
fn large_results_stream_whole() {
    let server = Server::start(&[]);
    let o = server.sql(&["-Q", "SELECT value FROM GENERATE_SERIES(1, 100000)"], None);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert_eq!(out.lines().filter(|l| l.trim().parse::<u32>().is_ok()).count(), 100_000);
    assert!(out.ends_with("\n(100000 rows affected)\n"), "{}", &out[out.len() - 100..]);

    let query = "SELECT REPLICATE(CAST(N'xy' AS NVARCHAR(MAX)), 20000) AS big, NULL AS n";
    let o = server.sql(&["-W", "-h", "-1", "-Q", query], None);
    assert_code(&o, 0);
    let first = stdout(&o).lines().next().unwrap().to_string();
    assert_eq!(first, format!("{} NULL", "xy".repeat(20_000)));
}

#[test]
fn output_is_the_embedded_shells() {
    let query = "SELECT 1 AS x, N'héllo' AS s, CAST(-1.5 AS DECIMAL(5,2)) AS d, \
                 CAST('2024-02-29 10:11:12.1234567' AS DATETIME2(3)) AS t, CAST(NULL AS BIT) AS b, \
                 0x0A0B AS bin, CAST('ab' AS CHAR(3)) AS c;\n\
                 SELECT value FROM GENERATE_SERIES(1, 3);\nPRINT 'hello';\n\
                 SELECT * FROM nope;\nSELECT 2 AS after;";
    let server = Server::start(&[]);
    let data = tempfile::tempdir().unwrap();
    for flags in [&[][..], &["-W"], &["--format", "csv"], &["-h", "-1", "-s", "|"]] {
        let mut args = flags.to_vec();
        args.extend(["-Q", query]);
        let remote = server.sql(&args, None);
        let embedded = embedded_sql(data.path(), &args, None);
        assert_code(&remote, 0);
        assert_eq!(stdout(&remote), stdout(&embedded), "{flags:?}");
        assert_eq!(stderr(&remote), stderr(&embedded), "{flags:?}");
    }
}

#[test]
fn data_and_server_are_exclusive() {
    let server = Server::start(&[]);
    let o = server.sql(&["--data", "x", "-Q", "SELECT 1"], None);
    assert_code(&o, 2);
}
