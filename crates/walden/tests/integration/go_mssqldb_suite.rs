#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! go-mssqldb's own test suite against `walden serve`: the tests of the driver's root package,
//! from its module at [`VERSION`] as the Go module proxy serves it, run with their
//! `SQLSERVER_DSN` pointed at a server this test starts on port 0 (with a self-signed
//! certificate, so the tests that ask for encryption get it) in a fresh data directory.
//!
//! The module is downloaded and its test binary built once (`go test -c`), under
//! `target/drivers/go-mssqldb-suite/`, by [`common::install`]; the test then runs that binary
//! from the module's directory, as `go test` would, with a timeout. Not with `-test.short`:
//! the six tests it would skip (`TestShortTimeout`, `TestDisconnect1` to `5`) take 2 s. Tests of
//! what Walden does not claim are skipped, each for the reason given in
//! `tests/drivers/go-mssqldb-skips.txt` (mirrored in `docs/serve.md`); every other test of the
//! suite must pass.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;

use common::install::{install, run, sources, version, INSTALL_TIMEOUT};
use common::server::Server;
use common::PASSWORD;

const MODULE: &str = "github.com/microsoft/go-mssqldb";
const VERSION: &str = "v1.11.2";
/// The database the suite runs in, as its own CI runs it in a database `test`.
const DATABASE: &str = "gosuite";
/// The suite's own `-test.timeout`: it takes well under a minute against a debug build.
const SUITE_TIMEOUT: &str = "8m";
/// How long the test waits for the suite before killing it.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// The skipped tests and why, from `tests/drivers/go-mssqldb-skips.txt`: one top-level test a
/// line, its name then its reason; `#` starts a comment line.
fn skips() -> Vec<(String, String)> {
    let path = sources().join("go-mssqldb-skips.txt");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (name, reason) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let valid = name.starts_with("Test")
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            assert!(valid, "{}: {name:?} is not a top-level Go test name", path.display());
            assert!(!reason.trim().is_empty(), "{}: {name} has no reason", path.display());
            (name.to_string(), reason.trim().to_string())
        })
        .collect()
}

/// Copies the directory tree `from` to `to`, files writable (the module cache's are not).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target).map_err(|e| format!("{}: {e}", target.display()))?;
            let mut perms = fs::metadata(&target).map_err(|e| e.to_string())?.permissions();
            #[allow(clippy::permissions_set_readonly_false)] // Only the owner runs the tests.
            perms.set_readonly(false);
            fs::set_permissions(&target, perms).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Downloads the module through the Go module proxy, copies its source to `<dir>/src` and
/// builds its test binary `<dir>/mssql.test`.
fn build_suite(dir: &Path) -> Result<(), String> {
    // Modules and build cache under the target directory; the toolchain as installed.
    let go = |args: &[&str], cwd: &Path| {
        let mut cmd = Command::new("go");
        cmd.args(args)
            .current_dir(cwd)
            .env("GOMODCACHE", dir.join("mod"))
            .env("GOCACHE", dir.join("build-cache"))
            .env("GOFLAGS", "-modcacherw")
            .env("GOTOOLCHAIN", "local");
        run(&mut cmd, INSTALL_TIMEOUT)
    };
    let json = go(&["mod", "download", "-json", &format!("{MODULE}@{VERSION}")], dir)?;
    // `"Dir": "<path>",` in the JSON go prints; Go writes no escapes into a plain path.
    let module_dir = json
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"Dir\": \""))
        .and_then(|rest| rest.strip_suffix("\","))
        .ok_or_else(|| format!("go mod download printed no module directory:\n{json}"))?;
    let src = dir.join("src");
    let _ = fs::remove_dir_all(&src);
    copy_tree(Path::new(module_dir), &src)?;
    let binary = dir.join("mssql.test");
    go(&["test", "-c", "-mod=readonly", "-o", binary.to_str().unwrap(), "."], &src)?;
    Ok(())
}

/// The outcome of each top-level test in `go test -v` output: (name, "PASS"/"FAIL"/"SKIP").
fn outcomes(output: &str) -> Vec<(&str, &str)> {
    output
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("--- ")?;
            let (outcome, rest) = rest.split_once(": ")?;
            let name = rest.split_whitespace().next()?;
            Some((name, outcome))
        })
        .collect()
}

/// The lines `go test -v` wrote for top-level test `name`, from its `=== RUN` to its result,
/// at most a few hundred.
fn section<'a>(output: &'a str, name: &str) -> Vec<&'a str> {
    let start = format!("=== RUN   {name}");
    let end = format!("--- FAIL: {name} ");
    output
        .lines()
        .skip_while(|l| *l != start)
        .take_while(|l| !l.starts_with(&end))
        // The driver's own protocol log (one line per packet) drowns the assertions.
        .filter(|l| !l.contains(" UTC m=+"))
        .take(300)
        .collect()
}

#[test]
fn go_mssqldb_own_test_suite() {
    let skips = skips();
    let stamp = format!("{MODULE}@{VERSION}\n{}\n", version("go", "version"));
    let dir = install("go-mssqldb-suite", &stamp, &["mssql.test", "src/go.mod"], build_suite);
    let binary = dir.join("mssql.test");

    // A name on the list that the suite no longer has is a stale entry.
    let listed = run(Command::new(&binary).args(["-test.list", "^Test"]), INSTALL_TIMEOUT).unwrap();
    let names: Vec<&str> = listed.lines().map(str::trim).collect();
    for (name, _) in &skips {
        assert!(names.contains(&name.as_str()), "skipped test {name} is not in the suite");
    }

    let server = Server::start(&["--tls", "self-signed"]);
    let create = common::sql::run(
        {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_walden"));
            cmd.args(["sql", "-S", &format!("127.0.0.1,{}", server.port), "-U", "sa", "-P"]);
            cmd.args([PASSWORD, "-Q", &format!("CREATE DATABASE {DATABASE}")]);
            cmd
        },
        None,
    );
    assert!(create.status.success(), "CREATE DATABASE failed: {create:?}");

    // Encryption off by default, as the project's own driver test connects; the tests that
    // want TLS ask for it in their DSN.
    let dsn = format!(
        "sqlserver://sa:{PASSWORD}@127.0.0.1:{}?database={DATABASE}&encrypt=disable",
        server.port
    );
    let skip_pattern = format!(
        "^({})$",
        skips.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join("|")
    );
    let started = Instant::now();
    let result = run(
        Command::new(&binary)
            .args(["-test.v", "-test.count=1"])
            .arg(format!("-test.timeout={SUITE_TIMEOUT}"))
            .arg(format!("-test.skip={skip_pattern}"))
            // The tests read their `testdata/` from the package directory, as under `go test`.
            .current_dir(dir.join("src"))
            .env("SQLSERVER_DSN", &dsn),
        RUN_TIMEOUT,
    );
    let elapsed = started.elapsed().as_secs_f64();
    let output = match &result {
        Ok(output) | Err(output) => output.as_str(),
    };
    // Without a usable DSN every test that needs a server skips itself and the run passes.
    assert!(
        !output.contains("no database connection string"),
        "the suite did not see SQLSERVER_DSN"
    );
    let top_level: Vec<(&str, &str)> =
        outcomes(output).into_iter().filter(|(name, _)| !name.contains('/')).collect();
    let count = |outcome: &str| top_level.iter().filter(|(_, o)| *o == outcome).count();
    let failed: Vec<&str> =
        top_level.iter().filter(|(_, o)| *o == "FAIL").map(|(name, _)| *name).collect();
    // `-test.skip` leaves the listed tests out without a line; a SKIP line is a test that
    // skipped itself (no Azure AD, Kerberos or named pipes setting, not on Windows).
    println!(
        "go-mssqldb {VERSION}: {} tests and examples ran in {elapsed:.1} s: {} passed, {} failed, \
         {} skipped by the suite itself; {} not run (tests/drivers/go-mssqldb-skips.txt)",
        top_level.len(),
        count("PASS"),
        failed.len(),
        count("SKIP"),
        skips.len(),
    );
    for (name, reason) in &skips {
        println!("  skipped {name}: {reason}");
    }
    if !failed.is_empty() || result.is_err() {
        let mut report = String::new();
        for name in &failed {
            report.push_str(&section(output, name).join("\n"));
            report.push('\n');
        }
        if failed.is_empty() {
            // The binary failed without a failed test: a panic, a timeout, a build problem.
            let tail: Vec<&str> = output.lines().rev().take(60).collect();
            report.extend(tail.into_iter().rev().map(|l| format!("{l}\n")));
        }
        panic!("go-mssqldb's tests failed against walden serve: {failed:?}\n{report}");
    }
}
