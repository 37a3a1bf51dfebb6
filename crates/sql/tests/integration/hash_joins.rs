//! Hash joins give the rows their definition gives whichever side the plan hashes and
//! whichever keys it hashes by (docs/query-processing.md). A LEFT JOIN is its inner join's
//! pairs and the preserved rows that have none, NULL-extended: a small preserved side is
//! hashed and the large inner table streamed past it, a large one read and the inner side
//! hashed. Keys that probe with one column are hashed once, the others checked per pair.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use walden_sql::exec::Session;

use crate::support;
use support::{ok, rows_text, session, TEN_THOUSAND_ROWS};

/// Sixty rows to preserve against `dbo.t`'s 10,000: keys that match once, many times or
/// never, NULL keys, and text that equals `t.s` only under the collation.
const SMALL: &str = "
    CREATE TABLE dbo.p (id INT PRIMARY KEY, k INT NULL, s VARCHAR(40) NULL, lim INT NOT NULL);
    WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 60)
    INSERT INTO dbo.p
    SELECT i, CASE WHEN i % 9 = 0 THEN NULL WHEN i % 4 = 0 THEN 5000 + i ELSE i * 23 % 1500 END,
           CASE i % 5 WHEN 0 THEN 'ALPHA' WHEN 1 THEN NULL WHEN 2 THEN 'row number 42'
                      ELSE CONCAT('none ', i) END,
           i % 7
    FROM n;";

/// ON conditions: one integer key, with a conjunct on the inner side alone, on the
/// preserved side alone, one across both sides, a text key, and two keys of mixed types.
const CONDITIONS: [&str; 6] = [
    "p.k = t.k",
    "p.k = t.k AND t.f > 300",
    "p.k = t.k AND p.lim > 3",
    "p.k = t.k AND t.id % 7 < p.lim",
    "p.s = t.s",
    "t.k = p.k AND p.s = t.s",
];

/// The rows of `query` sorted, the test failing on an error.
fn sorted(s: &mut Session, query: &str) -> Vec<Vec<String>> {
    let mut rows = rows_text(s, query);
    rows.sort();
    rows
}

#[test]
fn left_and_right_joins_are_their_pairs_and_the_unmatched_rows_whichever_side_is_hashed() {
    let (_dir, mut s) = session();
    ok(&mut s, TEN_THOUSAND_ROWS);
    ok(&mut s, SMALL);
    for cond in CONDITIONS {
        // The small side preserved (hashed), then the large one (the small side hashed).
        for (preserved, inner) in [("p", "t"), ("t", "p")] {
            let expected = sorted(
                &mut s,
                &format!(
                    "SELECT {preserved}.id, {inner}.id FROM dbo.{preserved} JOIN dbo.{inner} \
                     ON {cond} UNION ALL SELECT {preserved}.id, NULL FROM dbo.{preserved} \
                     WHERE NOT EXISTS (SELECT 1 FROM dbo.{inner} WHERE {cond})"
                ),
            );
            let unmatched = expected.iter().filter(|r| r[1] == "Null").count();
            assert!(unmatched > 0 && unmatched < expected.len(), "{cond}: {expected:?}");
            let left = format!(
                "SELECT {preserved}.id, {inner}.id FROM dbo.{preserved} \
                 LEFT JOIN dbo.{inner} ON {cond}"
            );
            assert_eq!(sorted(&mut s, &left), expected, "{left}");
            let right = format!(
                "SELECT {preserved}.id, {inner}.id FROM dbo.{inner} \
                 RIGHT JOIN dbo.{preserved} ON {cond}"
            );
            assert_eq!(sorted(&mut s, &right), expected, "{right}");
        }
    }
}

#[test]
fn a_count_over_a_left_join_counts_no_inner_row_for_an_unmatched_one() {
    let (_dir, mut s) = session();
    ok(&mut s, TEN_THOUSAND_ROWS);
    ok(&mut s, SMALL);
    // TPC-H Q13's shape: per preserved row, the inner rows it matched (0 for none).
    let counted = sorted(
        &mut s,
        "SELECT p.id, COUNT(t.id) FROM dbo.p LEFT JOIN dbo.t ON p.k = t.k AND t.s NOT LIKE '%a%' \
         GROUP BY p.id",
    );
    let expected = sorted(
        &mut s,
        "SELECT p.id, (SELECT COUNT(*) FROM dbo.t WHERE p.k = t.k AND t.s NOT LIKE '%a%') \
         FROM dbo.p",
    );
    assert_eq!(counted.len(), 60);
    assert_eq!(counted, expected);
}

#[test]
fn keys_probing_with_one_column_find_the_pairs_every_key_finds() {
    let (_dir, mut s) = session();
    ok(&mut s, TEN_THOUSAND_ROWS);
    ok(&mut s, SMALL);
    // `q` pairs each of `p`'s rows with a `y` that equals its `k` only some of the time, so
    // the rows joined so far carry two values that `t.k` must both equal.
    ok(
        &mut s,
        "SELECT id, CASE WHEN id % 3 = 0 THEN k + 1 WHEN id % 3 = 1 THEN k ELSE NULL END AS y \
         INTO dbo.q FROM dbo.p",
    );
    // `q.y + 0`, not a column, implies no `p.k = q.y` that the join of `p` and `q` would
    // apply first: the joined rows reach `t` with the two values unequal in some.
    let query = |probe: &str| {
        format!(
            "SELECT p.id, q.id, t.id FROM dbo.p JOIN dbo.q ON p.id = q.id \
             JOIN dbo.t ON t.k = p.k AND {probe} = q.y + 0"
        )
    };
    // `t.k + 0` is not the column `t.k`: both keys are hashed.
    let expected = sorted(&mut s, &query("t.k + 0"));
    assert!(!expected.is_empty());
    assert_eq!(sorted(&mut s, &query("t.k")), expected);
    let disagreeing = "SELECT COUNT(*) FROM dbo.q JOIN dbo.p ON p.id = q.id WHERE q.y <> p.k";
    assert_ne!(rows_text(&mut s, disagreeing), vec![vec!["Int(0)".to_string()]]);
}

#[test]
fn a_scan_that_probes_a_hash_before_its_own_conjuncts_keeps_the_same_rows() {
    let (_dir, mut s) = session();
    ok(&mut s, TEN_THOUSAND_ROWS);
    ok(&mut s, SMALL);
    // `p`'s keys match one row of `t` in about twenty-five and the conjuncts keep most rows,
    // so after its sample the scan of `t` probes first and decodes `f` and `s` after.
    // `t.k + 0` is no plain column: that probe goes after the conjuncts throughout.
    let query = |probe: &str| {
        format!(
            "SELECT t.id, p.id, t.f, t.s FROM dbo.p JOIN dbo.t ON {probe} = p.k \
             WHERE t.f > 100 AND t.s IS NOT NULL"
        )
    };
    let expected = sorted(&mut s, &query("t.k + 0"));
    assert!(expected.len() > 50, "{}", expected.len());
    assert_eq!(sorted(&mut s, &query("t.k")), expected);
}
