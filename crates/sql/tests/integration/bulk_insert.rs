//! BULK INSERT's error file, with files in a temporary directory (the golden tests read the
//! fixed data files in `tests/data/bulk`).

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::{errors, run};

#[test]
fn rejected_rows_go_to_the_error_file_and_an_existing_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(&dir.path().join("data"), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    let data = dir.path().join("in.csv");
    std::fs::write(&data, "1,a\r\nx,b\r\n3,c\r\n4,d,extra\r\n").unwrap();
    let errors_path = dir.path().join("rejects.txt");
    let out = run(&mut s, "CREATE TABLE t (id INT, v VARCHAR(5))");
    assert!(errors(&out).is_empty());
    let statement = format!(
        "BULK INSERT t FROM '{}' WITH (FIELDTERMINATOR = ',', ROWTERMINATOR = '\\n', ERRORFILE = '{}')",
        data.display(),
        errors_path.display()
    );
    let out = run(&mut s, &statement);
    assert_eq!(errors(&out), vec![4864, 4863], "{:?}", out.messages);
    let out = run(&mut s, "SELECT COUNT(*) FROM t");
    assert_eq!(out.results[0].rows[0][0], Value::Int(2));
    let rejected = std::fs::read_to_string(&errors_path).unwrap();
    assert_eq!(rejected, "x,b\r\n4,d,extra\r\n");
    let why = std::fs::read_to_string(dir.path().join("rejects.txt.Error.Txt")).unwrap();
    assert!(why.contains("Msg 4864") && why.contains("row 2, column 1 (id)"), "{why}");
    assert!(why.contains("Msg 4863") && why.contains("row 4, column 2 (v)"), "{why}");
    // The error file is there now: the next load is refused before it reads anything.
    let out = run(&mut s, &statement);
    assert_eq!(errors(&out), vec![4861]);
    let out = run(&mut s, "SELECT COUNT(*) FROM t");
    assert_eq!(out.results[0].rows[0][0], Value::Int(2));
}
