//! Microsoft's Northwind and pubs install scripts, run unchanged by the real `walden sql -b -i`
//! on a fresh data directory, twice in a row as they are meant to be rerun, and a few of the
//! procedures they install checked against what SQL Server returns for their data.
//!
//! The scripts are test data kept outside the repository, in `../shared/samples/` next to it
//! (`<repo>/../shared/samples/instnwnd.sql`); a missing file fails the test, it is not skipped.

// The helpers below unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::sql::{embedded_sql, stderr, stdout};

/// `<repo>/../shared/samples/<name>`, which must exist.
fn sample(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/samples").join(name);
    assert!(
        path.is_file(),
        "sample script {} is missing: the samples test reads Microsoft's install scripts from \
         ../shared/samples/ beside the repository (they are not part of it)",
        path.display()
    );
    path
}

/// Runs `walden sql --data <data> <args>` and shows its output if it failed.
fn run(data: &Path, args: &[&str]) -> Output {
    embedded_sql(data, args, None)
}

/// Runs `script` with `-b -i` twice on `data` (fresh the first time): every batch must
/// succeed both times, so the exit code is 0 and no error message is printed.
fn install_twice(data: &Path, script: &str) {
    let path = sample(script);
    let path = path.to_str().unwrap();
    for round in ["first", "second"] {
        let o = run(data, &["-b", "-i", path]);
        let out = stdout(&o);
        let err = stderr(&o);
        assert!(
            o.status.code() == Some(0) && !out.contains("Msg ") && !err.contains("Msg "),
            "{script}, {round} run: exit {:?}\n--- stdout\n{out}\n--- stderr\n{err}",
            o.status.code()
        );
    }
}

/// The rows `query` prints with `-W -h -1` (no headers, no padding), blank lines and the row
/// count left out.
fn rows(data: &Path, db: &str, query: &str) -> Vec<String> {
    let o = run(data, &["-d", db, "-W", "-h", "-1", "-s", "|", "-Q", query]);
    assert_eq!(o.status.code(), Some(0), "{query}: {}{}", stdout(&o), stderr(&o));
    stdout(&o)
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('('))
        .map(str::to_string)
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn northwind_installs_twice_and_its_procedures_return_sql_servers_rows() {
    let dir = tempfile::tempdir().unwrap();
    // The script creates no database: it installs into the current one, as with sqlcmd.
    install_twice(dir.path(), "instnwnd.sql");
    let data = dir.path();
    // CustOrderHist has no ORDER BY: compare as sets.
    assert_eq!(
        sorted(rows(data, "master", "SET NOCOUNT ON; EXEC CustOrderHist 'ALFKI'")),
        [
            "Aniseed Syrup|6",
            "Chartreuse verte|21",
            "Escargots de Bourgogne|40",
            "Flotemysost|20",
            "Grandma's Boysenberry Spread|16",
            "Lakkalikööri|15",
            "Original Frankfurter grüne Soße|2",
            "Raclette Courdavault|15",
            "Rössle Sauerkraut|17",
            "Spegesild|2",
            "Vegie-spread|20",
        ]
    );
    assert_eq!(
        rows(data, "master", "SET NOCOUNT ON; EXEC [Ten Most Expensive Products]"),
        [
            "Côte de Blaye|263.5000",
            "Thüringer Rostbratwurst|123.7900",
            "Mishi Kobe Niku|97.0000",
            "Sir Rodney's Marmalade|81.0000",
            "Carnarvon Tigers|62.5000",
            "Raclette Courdavault|55.0000",
            "Manjimup Dried Apples|53.0000",
            "Tarte au sucre|49.3000",
            "Ipoh Coffee|46.0000",
            "Rössle Sauerkraut|45.6000",
        ]
    );
}

#[test]
fn pubs_installs_twice_and_its_procedures_return_sql_servers_rows() {
    let dir = tempfile::tempdir().unwrap();
    install_twice(dir.path(), "instpubs.sql");
    let data = dir.path();
    assert_eq!(
        sorted(rows(data, "pubs", "SET NOCOUNT ON; EXEC byroyalty 40")),
        ["213-46-8915", "267-41-2394", "672-71-3249"]
    );
    // reptq1 orders by its pub_id column, the CASE that shows the ROLLUP row as ALL.
    assert_eq!(
        rows(data, "pubs", "SET NOCOUNT ON; EXEC reptq1"),
        ["0736|9.7840", "0877|15.4100", "1389|18.9760", "ALL|14.7663"]
    );
}
