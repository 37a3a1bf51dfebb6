#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! `walden serve` against real SQL Server drivers: python-tds, pymssql, go-mssqldb,
//! mssql-jdbc (plain and TLS), tedious and FreeTDS's tsql. Each test installs its driver if
//! needed, starts the real server on port 0 with a fresh data directory, and runs the driver's
//! client program from `tests/drivers/` (see its README), which checks types, parameters,
//! procedures, transactions and errors and exits non-zero on any failed check.
//!
//! Drivers are installed by [`common::install`], at pinned versions, once.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;

use common::install::{digest, install, run, sources, version, INSTALL_TIMEOUT};
use common::server::Server;
use common::PASSWORD;

const PYTHON_TDS: &str = "python-tds==1.17.1";
const PYMSSQL: &str = "pymssql==2.4.6";
const MSSQL_JDBC_VERSION: &str = "12.10.2.jre11";
/// The SHA-256 of mssql-jdbc-12.10.2.jre11.jar as Maven Central serves it.
const MSSQL_JDBC_SHA256: &str = "dbf27d0d7ff85f133bbc80b0282ec2cd4d1fa1f0954033dd6bbd68612a1c0a6e";

/// How long one client program may take against the server.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);
/// The database each client program creates.
const DATABASE: &str = "walden_drivers";

/// Runs a client program against `server`, with HOST PORT PASSWORD DATABASE (and `extra`)
/// as arguments; fails the test with the program's output unless it exits 0.
fn check(name: &str, mut cmd: Command, server: &Server, extra: &[&str]) {
    cmd.args(["127.0.0.1", &server.port.to_string(), PASSWORD, DATABASE]).args(extra);
    let started = Instant::now();
    match run(&mut cmd, RUN_TIMEOUT) {
        Ok(output) => {
            println!("{output}");
            eprintln!("{name}: passed in {:.1} s", started.elapsed().as_secs_f64());
        }
        Err(e) => panic!("the {name} client found problems:\n{e}"),
    }
}

/// A virtual environment with one pinned package.
fn python_driver(name: &str, requirement: &str) -> PathBuf {
    let python = version("python3", "--version");
    let dir = install(name, &format!("{requirement}\n{python}\n"), &["venv/bin/python"], |dir| {
        let venv = dir.join("venv");
        let _ = fs::remove_dir_all(&venv);
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv), INSTALL_TIMEOUT)?;
        run(
            Command::new(venv.join("bin/pip"))
                .args(["install", "--disable-pip-version-check", "--no-cache-dir", "--quiet"])
                .arg(requirement),
            INSTALL_TIMEOUT,
        )?;
        Ok(())
    });
    dir.join("venv/bin/python")
}

#[test]
fn python_tds() {
    let python = python_driver("pytds", PYTHON_TDS);
    let server = Server::start(&[]);
    let mut cmd = Command::new(python);
    cmd.arg(sources().join("python/pytds_test.py")).env("PYTHONDONTWRITEBYTECODE", "1");
    check("python-tds", cmd, &server, &[]);
}

#[test]
fn pymssql() {
    let python = python_driver("pymssql", PYMSSQL);
    let server = Server::start(&[]);
    let mut cmd = Command::new(python);
    cmd.arg(sources().join("python/pymssql_test.py")).env("PYTHONDONTWRITEBYTECODE", "1");
    check("pymssql", cmd, &server, &[]);
}

#[test]
fn go_mssqldb() {
    let src = sources().join("go");
    let files = ["go.mod", "go.sum", "main.go", "bulk.go"].map(|f| src.join(f));
    let stamp = format!("{}\n{}\n", digest(&files), version("go", "version"));
    let dir = install("go", &stamp, &["go-driver-test"], |dir| {
        // Modules and build cache under the target directory; the toolchain as installed.
        run(
            Command::new("go")
                .args(["build", "-mod=readonly", "-o"])
                .arg(dir.join("go-driver-test"))
                .arg(".")
                .current_dir(&src)
                .env("GOMODCACHE", dir.join("mod"))
                .env("GOCACHE", dir.join("build-cache"))
                .env("GOFLAGS", "-modcacherw")
                .env("GOTOOLCHAIN", "local"),
            INSTALL_TIMEOUT,
        )?;
        Ok(())
    });
    let server = Server::start(&[]);
    check("go-mssqldb", Command::new(dir.join("go-driver-test")), &server, &[]);
}

/// mssql-jdbc's jar, checked against its SHA-256, and the Java tests compiled against it.
fn jdbc_driver() -> (PathBuf, PathBuf) {
    let jar_name = format!("mssql-jdbc-{MSSQL_JDBC_VERSION}.jar");
    // DriverTest and SuiteCasesTest extend Checks, their shared harness.
    let java_sources = ["Checks", "DriverTest", "BulkCopyTest", "SuiteCasesTest"]
        .map(|class| sources().join(format!("java/{class}.java")));
    let stamp = format!(
        "{MSSQL_JDBC_VERSION} {MSSQL_JDBC_SHA256}\n{}\n{}\n",
        digest(&java_sources),
        version("javac", "-version"),
    );
    let artifacts = [
        jar_name.as_str(),
        "classes/Checks.class",
        "classes/DriverTest.class",
        "classes/BulkCopyTest.class",
        "classes/SuiteCasesTest.class",
    ];
    let dir = install("java", &stamp, &artifacts, |dir| {
        let jar = dir.join(&jar_name);
        let sha = |path: &Path| -> Result<String, String> {
            let out = run(Command::new("sha256sum").arg(path), INSTALL_TIMEOUT)?;
            Ok(out.split_whitespace().next().unwrap_or_default().to_string())
        };
        if !jar.exists() || sha(&jar)? != MSSQL_JDBC_SHA256 {
            let url = format!(
                "https://repo1.maven.org/maven2/com/microsoft/sqlserver/mssql-jdbc/\
                 {MSSQL_JDBC_VERSION}/{jar_name}"
            );
            let part = dir.join(format!("{jar_name}.part"));
            run(
                Command::new("curl").args(["-fsSL", "--retry", "3", "-o"]).arg(&part).arg(&url),
                INSTALL_TIMEOUT,
            )?;
            let got = sha(&part)?;
            if got != MSSQL_JDBC_SHA256 {
                return Err(format!("{url}: SHA-256 {got}, expected {MSSQL_JDBC_SHA256}"));
            }
            fs::rename(&part, &jar).map_err(|e| e.to_string())?;
        }
        let classes = dir.join("classes");
        let _ = fs::remove_dir_all(&classes);
        run(
            Command::new("javac").arg("-d").arg(&classes).arg("-cp").arg(&jar).args(&java_sources),
            INSTALL_TIMEOUT,
        )?;
        Ok(())
    });
    (dir.join(jar_name), dir.join("classes"))
}

fn jdbc(server: &Server, mode: &str) {
    let (jar, classes) = jdbc_driver();
    // DriverTest creates the database the other two then use.
    for class in ["DriverTest", "BulkCopyTest", "SuiteCasesTest"] {
        let mut cmd = Command::new("java");
        cmd.arg("-cp").arg(format!("{}:{}", jar.display(), classes.display())).arg(class);
        check(&format!("mssql-jdbc {class} ({mode})"), cmd, server, &[mode]);
    }
}

#[test]
fn mssql_jdbc() {
    jdbc(&Server::start(&[]), "plain");
}

#[test]
fn mssql_jdbc_tls() {
    jdbc(&Server::start(&["--tls", "self-signed"]), "tls");
}

#[test]
fn tedious() {
    let src = sources().join("node");
    let files = ["package.json", "package-lock.json"].map(|f| src.join(f));
    let stamp = format!("{}\n{}\n", digest(&files), version("node", "--version"));
    let dir = install("node", &stamp, &["node_modules/tedious/package.json"], |dir| {
        for f in &files {
            fs::copy(f, dir.join(f.file_name().unwrap())).map_err(|e| e.to_string())?;
        }
        run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--cache"])
                .arg(dir.join("npm-cache"))
                .current_dir(dir),
            INSTALL_TIMEOUT,
        )?;
        Ok(())
    });
    let server = Server::start(&[]);
    let mut cmd = Command::new("node");
    cmd.arg(src.join("tedious_test.js")).env("NODE_PATH", dir.join("node_modules"));
    check("tedious", cmd, &server, &[]);
}

/// Whether `program` is on PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

#[test]
fn freetds_tsql() {
    if !on_path("tsql") {
        // Debian's package; its index may be missing on a fresh machine, hence the update.
        let apt = |args: &[&str]| {
            run(
                Command::new("apt-get")
                    .args(["-o", "DPkg::Lock::Timeout=300", "-q"])
                    .args(args)
                    .env("DEBIAN_FRONTEND", "noninteractive"),
                INSTALL_TIMEOUT,
            )
        };
        let started = Instant::now();
        if let Err(first) = apt(&["install", "-y", "freetds-bin"]) {
            let retry = apt(&["update"]).and_then(|_| apt(&["install", "-y", "freetds-bin"]));
            if let Err(e) = retry {
                panic!("installing freetds-bin (for tsql) failed:\n{first}\nafter apt-get update:\n{e}");
            }
        }
        eprintln!("installed freetds-bin in {:.1} s", started.elapsed().as_secs_f64());
    }
    let server = Server::start(&[]);
    check("tsql", Command::new(sources().join("freetds/tsql_test.sh")), &server, &[]);
    // The same session in each older TDS version FreeTDS speaks, against a fresh server each
    // (the script creates its database): the server answers in the client's version.
    for version in ["7.3", "7.2", "7.1", "7.0"] {
        let server = Server::start(&[]);
        let mut cmd = Command::new(sources().join("freetds/tsql_test.sh"));
        cmd.env("TDSVER", version);
        check(&format!("tsql (TDS {version})"), cmd, &server, &[]);
    }
    // TDS 4.2 and 5.0 (Sybase's login packet, without PRELOGIN) are refused by closing the
    // connection, as SQL Server 2012 and later refuse them; the server goes on serving.
    let server = Server::start(&[]);
    for version in ["4.2", "5.0"] {
        let output = Command::new("tsql")
            .args(["-H", "127.0.0.1", "-p", &server.port.to_string(), "-U", "sa", "-P", PASSWORD])
            .env("TDSVER", version)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("tsql runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains("Adaptive Server connection failed"),
            "a TDS {version} login was not refused: {stderr}"
        );
    }
    let cmd = Command::new(sources().join("freetds/tsql_test.sh"));
    check("tsql after refused TDS 4.2 and 5.0 logins", cmd, &server, &[]);
}
