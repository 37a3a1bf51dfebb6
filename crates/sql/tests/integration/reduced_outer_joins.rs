//! Outer joins that the block's conditions make inner (docs/query-processing.md, "Outer
//! joins"): the rows are those of the outer join as written, SHOWPLAN shows an inner join,
//! and the columns the outer join would have NULL-extended are still described as nullable.

use crate::support;
use support::{ok, run, showplan_text};

const DATA: &str = "
    CREATE DATABASE d; USE d;
    CREATE TABLE a (id INT PRIMARY KEY, bid INT NULL);
    CREATE TABLE b (id INT PRIMARY KEY, v INT NOT NULL, cid INT NULL);
    CREATE TABLE c (id INT PRIMARY KEY, x INT NOT NULL);
    INSERT INTO a VALUES (1, 10), (2, 20), (3, NULL), (4, 40);
    INSERT INTO b VALUES (10, 5, 100), (20, 7, NULL), (30, 9, 100);
    INSERT INTO c VALUES (100, 1);";

/// The first line of a SHOWPLAN_TEXT `plan` that contains `text` (empty if none does).
fn first_line<'p>(plan: &'p str, text: &str) -> &'p str {
    plan.lines().find(|l| l.contains(text)).unwrap_or_default()
}

/// The rows of `query`'s last result, as `id:value` text sorted.
fn listed(s: &mut walden_sql::exec::Session, query: &str) -> Vec<String> {
    let out = ok(s, query);
    let mut rows: Vec<String> = out
        .results
        .last()
        .unwrap()
        .rows
        .iter()
        .map(|r| r.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(":"))
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_condition_that_rejects_the_null_extended_rows_makes_the_join_inner() {
    let (_dir, mut s) = support::session();
    ok(&mut s, DATA);
    let made_inner = [
        // A WHERE comparison of the inner side's column.
        (
            "SELECT a.id, b.v FROM a LEFT JOIN b ON b.id = a.bid WHERE b.v > 5",
            vec!["Int(2):Int(7)"],
        ),
        // An inner join's ON condition after it.
        (
            "SELECT a.id, c.x FROM a LEFT JOIN b ON b.id = a.bid JOIN c ON c.id = b.cid",
            vec!["Int(1):Int(1)"],
        ),
        // A RIGHT JOIN whose left side an IN list rejects.
        (
            "SELECT a.id, b.id FROM a RIGHT JOIN b ON b.id = a.bid WHERE a.id IN (1, 2)",
            vec!["Int(1):Int(10)", "Int(2):Int(20)"],
        ),
        // A chain: the WHERE makes the second join inner, whose ON makes the first.
        (
            "SELECT a.id, c.x FROM a LEFT JOIN b ON b.id = a.bid LEFT JOIN c ON c.id = b.cid
             WHERE c.x BETWEEN 0 AND 3",
            vec!["Int(1):Int(1)"],
        ),
        ("SELECT a.id FROM a LEFT JOIN b ON b.id = a.bid WHERE b.cid IS NOT NULL", vec!["Int(1)"]),
    ];
    for (query, expected) in made_inner {
        assert_eq!(listed(&mut s, query), expected, "{query}");
        let plan = showplan_text(&mut s, query);
        let first = plan.lines().next().unwrap_or_default();
        let operators = plan.strip_prefix(first).unwrap_or(&plan);
        assert!(!operators.contains("Outer Join"), "{query}\n{plan}");
    }
    let kept = [
        // The anti-join idiom: the NULL-extended rows are the ones kept.
        (
            "SELECT a.id FROM a LEFT JOIN b ON b.id = a.bid WHERE b.id IS NULL",
            vec!["Int(3)", "Int(4)"],
        ),
        (
            "SELECT a.id FROM a LEFT JOIN b ON b.id = a.bid WHERE ISNULL(b.v, 0) = 0",
            vec!["Int(3)", "Int(4)"],
        ),
        (
            "SELECT a.id FROM a LEFT JOIN b ON b.id = a.bid WHERE b.v = 5 OR b.v IS NULL",
            vec!["Int(1)", "Int(3)", "Int(4)"],
        ),
        // A condition on the preserved side only.
        (
            "SELECT a.id, b.v FROM a LEFT JOIN b ON b.id = a.bid WHERE a.id > 2",
            vec!["Int(3):Null", "Int(4):Null"],
        ),
    ];
    for (query, expected) in kept {
        assert_eq!(listed(&mut s, query), expected, "{query}");
        assert!(showplan_text(&mut s, query).contains("Outer Join"), "{query}");
    }
}

#[test]
fn under_ansi_nulls_off_a_comparison_keeps_the_outer_join() {
    let (_dir, mut s) = support::session();
    ok(&mut s, DATA);
    // `= NULL` holds of a NULL with ANSI_NULLS OFF: the NULL-extended rows pass.
    let query = "SET ANSI_NULLS OFF; DECLARE @n INT = NULL;
                 SELECT a.id, b.v FROM a LEFT JOIN b ON b.id = a.bid WHERE b.v = @n";
    assert_eq!(listed(&mut s, query), vec!["Int(3):Null", "Int(4):Null"]);
}

#[test]
fn the_columns_an_outer_join_made_inner_would_have_extended_stay_nullable() {
    let (_dir, mut s) = support::session();
    ok(&mut s, DATA);
    // b.v is NOT NULL in its table; the LEFT JOIN as written describes it nullable.
    ok(&mut s, "SELECT a.id, b.v INTO #r FROM a LEFT JOIN b ON b.id = a.bid WHERE b.v > 0");
    let nullable = listed(
        &mut s,
        "SELECT name, is_nullable FROM tempdb.sys.columns WHERE object_id = OBJECT_ID('tempdb..#r')",
    );
    assert_eq!(nullable, vec!["NStr(\"id\"):Bit(false)", "NStr(\"v\"):Bit(true)"]);
    let out = run(&mut s, "INSERT INTO #r VALUES (9, NULL)");
    assert!(out.errors().next().is_none(), "{:?}", out.messages);
}

#[test]
fn a_left_join_before_inner_joins_that_do_not_read_its_inner_side_is_joined_after_them() {
    let (_dir, mut s) = support::session();
    ok(&mut s, DATA);
    // `c` joins `a`, not `b`: the LEFT JOIN is run last, the inner join its left side.
    let moved =
        "SELECT a.id, b.v, c.x FROM a LEFT JOIN b ON b.id = a.bid JOIN c ON c.id = a.id * 100";
    ok(&mut s, "INSERT INTO c VALUES (200, 2), (300, 3)");
    assert_eq!(
        listed(&mut s, moved),
        vec!["Int(1):Int(5):Int(1)", "Int(2):Int(7):Int(2)", "Int(3):Null:Int(3)"]
    );
    let plan = showplan_text(&mut s, moved);
    assert!(first_line(&plan, "|--").contains("Outer Join"), "{plan}");
    // `SELECT *` is moved too, written out as `a.*, b.*, c.*`: its columns stay in the FROM
    // clause's order.
    let star_query = "SELECT * FROM a LEFT JOIN b ON b.id = a.bid JOIN c ON c.id = a.id * 100";
    let star = ok(&mut s, star_query);
    let names: Vec<&str> =
        star.results.last().unwrap().columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "bid", "id", "v", "cid", "id", "x"]);
    assert_eq!(
        listed(&mut s, star_query),
        vec![
            "Int(1):Int(10):Int(10):Int(5):Int(100):Int(100):Int(1)",
            "Int(2):Int(20):Int(20):Int(7):Null:Int(200):Int(2)",
            "Int(3):Null:Null:Null:Null:Int(300):Int(3)"
        ]
    );
    let plan = showplan_text(&mut s, star_query);
    assert!(first_line(&plan, "|--").contains("Outer Join"), "{plan}");
    // A RIGHT JOIN is moved as the LEFT JOIN of its sides swapped; `*` keeps `b` first.
    let right = "SELECT * FROM b RIGHT JOIN a ON b.id = a.bid JOIN c ON c.id = a.id * 100";
    assert_eq!(
        listed(&mut s, right),
        vec![
            "Int(10):Int(5):Int(100):Int(1):Int(10):Int(100):Int(1)",
            "Int(20):Int(7):Null:Int(2):Int(20):Int(200):Int(2)",
            "Null:Null:Null:Int(3):Null:Int(300):Int(3)"
        ]
    );
    let plan = showplan_text(&mut s, right);
    assert!(first_line(&plan, "|--").contains("Outer Join"), "{plan}");
    // LEFT JOINs between inner joins all move above them, a chain; so does one in the
    // preserved side of an outer join at the top.
    for chain in [
        "SELECT * FROM a LEFT JOIN b ON b.id = a.bid JOIN c ON c.id = a.id * 100
         LEFT JOIN b AS b2 ON b2.id = a.bid JOIN c AS c2 ON c2.id = a.id * 100",
        "SELECT * FROM a LEFT JOIN b ON b.id = a.bid JOIN c ON c.id = a.id * 100
         LEFT JOIN (b AS b2 JOIN c AS c2 ON c2.id = b2.cid) ON b2.id = a.bid",
    ] {
        let plan = showplan_text(&mut s, chain);
        let joins: Vec<&str> = plan
            .lines()
            .filter(|l| {
                l.contains("Join") || l.contains("Nested Loops") || l.contains("Hash Match")
            })
            .collect();
        assert!(joins.len() >= 3 && joins[..2].iter().all(|l| l.contains("Outer Join")), "{plan}");
    }
    assert_eq!(
        listed(
            &mut s,
            "SELECT a.id, b.v, c.x, b2.v, c2.x FROM a LEFT JOIN b ON b.id = a.bid
             JOIN c ON c.id = a.id * 100 LEFT JOIN b AS b2 ON b2.id = a.bid
             JOIN c AS c2 ON c2.id = a.id * 100"
        ),
        vec![
            "Int(1):Int(5):Int(1):Int(5):Int(1)",
            "Int(2):Int(7):Int(2):Int(7):Int(2)",
            "Int(3):Null:Int(3):Null:Int(3)"
        ]
    );
    // An inner join's right operand that is a LEFT JOIN is lifted above it; a RIGHT JOIN
    // operand likewise, its preserved side `b` joined to `a` first, `*` keeping `c` before
    // `b`.
    for (nested, expected) in [
        (
            "SELECT * FROM a JOIN (b LEFT JOIN c ON c.id = b.cid) ON b.id = a.bid",
            [
                "Int(1):Int(10):Int(10):Int(5):Int(100):Int(100):Int(1)",
                "Int(2):Int(20):Int(20):Int(7):Null:Null:Null",
            ],
        ),
        (
            "SELECT * FROM a JOIN (c RIGHT JOIN b ON c.id = b.cid) ON b.id = a.bid",
            [
                "Int(1):Int(10):Int(100):Int(1):Int(10):Int(5):Int(100)",
                "Int(2):Int(20):Null:Null:Int(20):Int(7):Null",
            ],
        ),
    ] {
        assert_eq!(listed(&mut s, nested), expected, "{nested}");
        let plan = showplan_text(&mut s, nested);
        assert!(first_line(&plan, "Join").contains("Outer Join"), "{plan}");
    }
    // FROM items separated by commas: the outer join moves above their cross join, and
    // `*` keeps the written order; an ON naming another item is still an error.
    let comma = "SELECT * FROM c, a LEFT JOIN b ON b.id = a.bid WHERE c.id = a.id * 100";
    assert_eq!(
        listed(&mut s, comma),
        vec![
            "Int(100):Int(1):Int(1):Int(10):Int(10):Int(5):Int(100)",
            "Int(200):Int(2):Int(2):Int(20):Int(20):Int(7):Null",
            "Int(300):Int(3):Int(3):Null:Null:Null:Null"
        ]
    );
    let plan = showplan_text(&mut s, comma);
    // The WHERE clause's filter over it, then the outer join above the inner one.
    assert!(first_line(&plan, "Join").contains("Outer Join"), "{plan}");
    let out = run(&mut s, "SELECT * FROM c, a LEFT JOIN b ON b.id = c.id");
    let numbers: Vec<i32> = out.errors().map(|e| e.number).collect();
    assert!(matches!(numbers[..], [207] | [4104]), "{:?}", out.messages);
    // A `*` over a source with no name of its own (a function without an alias) cannot be
    // written out: the join is not moved.
    let unnamed = "SELECT * FROM a LEFT JOIN b ON b.id = a.bid
                   CROSS JOIN STRING_SPLIT('s', ',') WHERE a.id = 1";
    assert_eq!(listed(&mut s, unnamed), vec!["Int(1):Int(10):Int(10):Int(5):Int(100):Str(\"s\")"]);
    let plan = showplan_text(&mut s, unnamed);
    assert!(!first_line(&plan, "|--").contains("Outer Join"), "{plan}");
    // Not moved where a name might be `b`'s: `x` is unqualified.
    let unqualified =
        "SELECT a.id FROM a LEFT JOIN b ON b.id = a.bid JOIN c ON c.id = a.id * 100 AND x > 1";
    assert_eq!(listed(&mut s, unqualified), vec!["Int(2)", "Int(3)"]);
}
