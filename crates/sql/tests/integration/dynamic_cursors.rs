//! DYNAMIC cursors re-evaluate their membership at each fetch, as SQL Server's do: rows other
//! sessions commit after OPEN appear, deleted ones vanish (no -2 fetch status), a row whose
//! key changed is met at its new place; FETCH ABSOLUTE is error 16925 and `@@CURSOR_ROWS` is
//! -1. A query a dynamic cursor cannot be built for (ORDER BY, DISTINCT, ...) is converted,
//! with message 16956 under TYPE_WARNING.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::Value;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::{Collected, Session};

use crate::support;
use support::{errors, ok, run, scalar};

/// Two sessions of one new instance (the directory lives while the guard does).
fn two_sessions() -> (tempfile::TempDir, Session, Session) {
    let dir = tempfile::tempdir().unwrap();
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let a = Session::new(Arc::clone(&instance));
    let b = Session::new(instance);
    (dir, a, b)
}

/// The ids a batch of `FETCH ... FROM c` (without INTO) returned, in order: `None` for a
/// fetch that found no row.
fn fetched(out: &Collected) -> Vec<Option<i32>> {
    out.results
        .iter()
        .map(|r| match r.rows.first().map(|row| &row[0]) {
            Some(Value::Int(id)) => Some(*id),
            None => None,
            Some(other) => panic!("id {other:?}"),
        })
        .collect()
}

fn fetch(s: &mut Session, fetches: &str) -> Vec<Option<i32>> {
    fetched(&ok(s, fetches))
}

#[test]
fn a_dynamic_cursor_sees_what_others_commit_after_open() {
    let (_dir, mut a, mut b) = two_sessions();
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v NVARCHAR(10)); INSERT t VALUES (1, N'a'), (3, N'c'), (5, N'e')");
    ok(&mut a, "DECLARE c CURSOR DYNAMIC FOR SELECT id, v FROM t; OPEN c");
    assert_eq!(scalar(&mut a, "SELECT @@CURSOR_ROWS"), Value::Int(-1));
    assert_eq!(scalar(&mut a, "SELECT CURSOR_STATUS('global', 'c')"), Value::SmallInt(1));
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM c"), [Some(1)]);

    // Inserted after OPEN: seen; deleted: not found, and no -2 status.
    ok(&mut b, "INSERT t VALUES (2, N'b'); DELETE t WHERE id = 3");
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM c"), [Some(2)]);
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM c"), [Some(5)]);
    assert_eq!(scalar(&mut a, "SELECT @@FETCH_STATUS"), Value::Int(0));

    // A changed key moves its row: 1 is now 0, before every other.
    ok(&mut b, "UPDATE t SET id = 0 WHERE id = 1; INSERT t VALUES (7, N'g')");
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM c; FETCH NEXT FROM c"), [Some(7), None]);
    assert_eq!(scalar(&mut a, "SELECT @@FETCH_STATUS"), Value::Int(-1));
    assert_eq!(
        fetch(
            &mut a,
            "FETCH PRIOR FROM c; FETCH FIRST FROM c; FETCH PRIOR FROM c; FETCH NEXT FROM c;
             FETCH LAST FROM c; FETCH RELATIVE -2 FROM c; FETCH RELATIVE 1 FROM c;
             FETCH RELATIVE 0 FROM c; FETCH RELATIVE 5 FROM c; FETCH RELATIVE -1 FROM c"
        ),
        [Some(7), Some(0), None, Some(0), Some(7), Some(2), Some(5), Some(5), None, Some(7)]
    );

    // No row numbers in a dynamic cursor: ABSOLUTE is refused, the cursor stays usable.
    let out = run(&mut a, "FETCH ABSOLUTE 1 FROM c");
    assert_eq!(errors(&out), [16925]);
    assert_eq!(
        out.errors().next().unwrap().message,
        "The fetch type Absolute cannot be used with dynamic cursors."
    );
    assert_eq!(fetch(&mut a, "FETCH FIRST FROM c"), [Some(0)]);

    // The INTO form, in a loop, sees a row another session adds ahead of it.
    ok(&mut a, "CLOSE c; OPEN c; CREATE TABLE seen (id INT)");
    let out = ok(
        &mut a,
        "DECLARE @id INT, @v NVARCHAR(10);
         FETCH NEXT FROM c INTO @id, @v;
         WHILE @@FETCH_STATUS = 0
         BEGIN
             INSERT seen VALUES (@id);
             IF @id = 2 INSERT t VALUES (6, N'f');
             FETCH NEXT FROM c INTO @id, @v;
         END;
         SELECT STRING_AGG(CAST(id AS VARCHAR(10)), ',') FROM seen",
    );
    assert_eq!(out.results.last().unwrap().rows[0][0], Value::Str("0,2,5,6,7".into()));
    ok(&mut a, "CLOSE c; DEALLOCATE c");
}

#[test]
fn positioned_changes_go_through_a_dynamic_cursor() {
    let (_dir, mut a, _b) = two_sessions();
    ok(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v NVARCHAR(10)); INSERT t VALUES (1, N'a'), (2, N'b'), (3, N'c')");
    ok(&mut a, "DECLARE c CURSOR DYNAMIC FOR SELECT id, v FROM t; OPEN c");
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM c"), [Some(1)]);
    ok(&mut a, "UPDATE t SET v = N'x' WHERE CURRENT OF c");
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM c"), [Some(2)]);
    ok(&mut a, "DELETE t WHERE CURRENT OF c");
    // From a deleted row the cursor goes on to the next key.
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM c; FETCH NEXT FROM c"), [Some(3), None]);
    assert_eq!(errors(&run(&mut a, "UPDATE t SET v = N'y' WHERE CURRENT OF c")), [16930]);
    let rows = ok(&mut a, "SELECT id, v FROM t ORDER BY id").results.pop().unwrap().rows;
    assert_eq!(
        rows,
        [
            vec![Value::Int(1), Value::NStr("x".into())],
            vec![Value::Int(3), Value::NStr("c".into())]
        ]
    );

    // A READ_ONLY dynamic cursor is dynamic still, and refuses changes.
    ok(&mut a, "DECLARE r CURSOR DYNAMIC READ_ONLY FOR SELECT id FROM t; OPEN r");
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM r"), [Some(1)]);
    ok(&mut a, "INSERT t VALUES (2, N'b')");
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM r"), [Some(2)]);
    assert_eq!(errors(&run(&mut a, "DELETE t WHERE CURRENT OF r")), [16929]);
}

#[test]
fn heaps_and_joins_are_dynamic_by_their_row_keys() {
    let (_dir, mut a, mut b) = two_sessions();
    ok(
        &mut a,
        "CREATE TABLE h (id INT, v INT); INSERT h VALUES (10, 1), (10, 2);
         CREATE TABLE p (id INT PRIMARY KEY, name NVARCHAR(10)); INSERT p VALUES (1, N'one'), (2, N'two')",
    );
    // Rows alike in a heap are told apart by their locators; a new row comes after them.
    ok(&mut a, "DECLARE hc CURSOR DYNAMIC FOR SELECT id, v FROM h; OPEN hc");
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM hc; FETCH NEXT FROM hc"), [Some(10), Some(10)]);
    ok(&mut b, "INSERT h VALUES (30, 3)");
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM hc; FETCH NEXT FROM hc"), [Some(30), None]);
    assert_eq!(fetch(&mut a, "FETCH PRIOR FROM hc; FETCH PRIOR FROM hc"), [Some(30), Some(10)]);
    ok(&mut a, "UPDATE h SET id = 11 WHERE CURRENT OF hc");
    assert_eq!(scalar(&mut a, "SELECT SUM(id) FROM h"), Value::Int(51));

    // A join's rows are keyed by both tables' keys.
    ok(
        &mut a,
        "DECLARE jc CURSOR DYNAMIC FOR SELECT p.id, h.v FROM p JOIN h ON h.v = p.id; OPEN jc",
    );
    assert_eq!(fetch(&mut a, "FETCH NEXT FROM jc"), [Some(1)]);
    ok(&mut b, "UPDATE h SET v = 1 WHERE v = 3");
    assert_eq!(
        fetch(&mut a, "FETCH NEXT FROM jc; FETCH NEXT FROM jc; FETCH NEXT FROM jc"),
        [Some(1), Some(2), None]
    );
}

#[test]
fn a_dynamic_cursor_that_cannot_be_is_converted() {
    let (_dir, mut a, mut b) = two_sessions();
    ok(
        &mut a,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT t VALUES (1, 30), (2, 20), (3, 10)",
    );
    // ORDER BY another column: converted (rows fixed at OPEN), said under TYPE_WARNING.
    let out =
        ok(&mut a, "DECLARE c CURSOR DYNAMIC TYPE_WARNING FOR SELECT id FROM t ORDER BY v; OPEN c");
    let notes: Vec<(i32, &str)> =
        out.messages.iter().map(|m| (m.number, m.message.as_str())).collect();
    assert_eq!(notes, [(16956, "The created cursor is not of the requested type.")]);
    assert_eq!(scalar(&mut a, "SELECT @@CURSOR_ROWS"), Value::Int(3));
    ok(&mut b, "INSERT t VALUES (4, 0)");
    assert_eq!(fetch(&mut a, "FETCH ABSOLUTE 1 FROM c; FETCH LAST FROM c"), [Some(3), Some(1)]);
    // Without TYPE_WARNING the conversion is silent; DISTINCT has no keys at all.
    let out = ok(&mut a, "DECLARE d CURSOR DYNAMIC FOR SELECT DISTINCT v % 2 AS id FROM t; OPEN d");
    assert!(out.messages.is_empty(), "{:?}", out.messages);
    assert_eq!(scalar(&mut a, "SELECT @@CURSOR_ROWS"), Value::Int(1));
    assert_eq!(errors(&run(&mut a, "FETCH NEXT FROM d; DELETE t WHERE CURRENT OF d")), [16929]);
    // A nullable unique key cannot order a dynamic cursor either.
    ok(&mut a, "CREATE TABLE u (k INT NULL UNIQUE); INSERT u VALUES (NULL), (1)");
    ok(&mut a, "DECLARE e CURSOR DYNAMIC FOR SELECT k AS id FROM u; OPEN e");
    assert_eq!(scalar(&mut a, "SELECT @@CURSOR_ROWS"), Value::Int(2));
    // A query that fails fails at OPEN, and leaves the cursor closed.
    ok(&mut a, "DECLARE f CURSOR DYNAMIC FOR SELECT id / 0 AS id FROM t");
    assert_eq!(errors(&run(&mut a, "OPEN f")), [8134]);
    assert_eq!(scalar(&mut a, "SELECT CURSOR_STATUS('global', 'f')"), Value::SmallInt(-1));
}

/// The logical reads of table `table` in a batch's `SET STATISTICS IO` messages (3615).
fn logical_reads(out: &Collected, table: &str) -> u64 {
    out.messages
        .iter()
        .filter(|m| m.number == 3615 && m.message.contains(&format!("'{table}'")))
        .map(|m| {
            let at = m.message.find("logical reads ").unwrap() + "logical reads ".len();
            m.message[at..].split(',').next().unwrap().trim().parse::<u64>().unwrap()
        })
        .sum()
}

#[test]
fn a_heap_row_is_read_again_by_its_locator_not_by_a_scan() {
    let (_dir, mut a, _b) = two_sessions();
    ok(
        &mut a,
        "CREATE TABLE h (id INT, pad CHAR(200));
         INSERT h SELECT value, 'x' FROM GENERATE_SERIES(1, 2000)",
    );
    let scan = ok(&mut a, "SET STATISTICS IO ON; SELECT COUNT(*) FROM h; SET STATISTICS IO OFF");
    let whole = logical_reads(&scan, "h");
    assert!(whole > 40, "a scan of the heap reads its pages: {whole}");
    // An OPTIMISTIC positioned change reads its row again (to compare it) and then changes
    // it, both by the row's locator.
    ok(&mut a, "DECLARE c CURSOR KEYSET OPTIMISTIC FOR SELECT id, pad FROM h; OPEN c");
    assert_eq!(fetch(&mut a, "FETCH ABSOLUTE 1500 FROM c"), [Some(1500)]);
    let change = ok(
        &mut a,
        "SET STATISTICS IO ON; UPDATE h SET id = -1 WHERE CURRENT OF c; SET STATISTICS IO OFF",
    );
    let reads = logical_reads(&change, "h");
    assert!(reads * 10 < whole, "{reads} logical reads, a scan's {whole}: {:?}", change.messages);
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM h WHERE id = -1"), Value::Int(1));
    assert_eq!(scalar(&mut a, "SELECT COUNT(*) FROM h WHERE id = 1500"), Value::Int(0));
}
