//! The modes' rules: SQL Server's compatibility matrices (key-range modes included), the
//! lattice of covers and joins, resources and the errors' numbers and texts.

use super::*;

#[test]
fn compatibility_matrix_matches_sql_server() {
    // SQL Server's documented matrix ("Lock compatibility"), requested mode by row, granted
    // mode by column in the documentation's order; docs/locking.md has the same table.
    let columns = [IS, S, U, IX, SIX, X];
    let rows = [
        (IS, "YYYYYN"),
        (S, "YYYNNN"),
        (U, "YYNNNN"),
        (IX, "YNNYNN"),
        (SIX, "YNNNNN"),
        (X, "NNNNNN"),
    ];
    let mut pairs = 0;
    for (requested, line) in rows {
        for (granted, cell) in columns.iter().zip(line.chars()) {
            assert_eq!(
                requested.compatible(*granted),
                cell == 'Y',
                "{requested} requested while {granted} is granted"
            );
            pairs += 1;
        }
    }
    assert_eq!(pairs, 36);
    let names: Vec<&str> = LockMode::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "IS", "IX", "S", "SIX", "U", "X", "RangeS-S", "RangeS-U", "RangeI-N", "RangeI-S",
            "RangeI-U", "RangeI-X", "RangeX-S", "RangeX-U", "RangeX-X"
        ]
    );
}

#[test]
fn key_range_matrix_matches_sql_server() {
    // SQL Server's documented matrix ("Key-Range Locking"): the requested mode by row, the
    // granted mode by column in the documentation's order; docs/locking.md has the same table.
    let columns = [S, U, X, RangeSS, RangeSU, RangeIN, RangeXX];
    let rows = [
        (S, "YYNYYYN"),
        (U, "YNNYNYN"),
        (X, "NNNNNYN"),
        (RangeSS, "YYNYYNN"),
        (RangeSU, "YNNYNNN"),
        (RangeIN, "YYYNNYN"),
        (RangeXX, "NNNNNNN"),
    ];
    let mut pairs = 0;
    for (requested, line) in rows {
        for (granted, cell) in columns.iter().zip(line.chars()) {
            assert_eq!(
                requested.compatible(*granted),
                cell == 'Y',
                "{requested} requested while {granted} is granted"
            );
            pairs += 1;
        }
    }
    assert_eq!(pairs, 49);
    // The conversion modes SQL Server makes of RangeI-N, and what they keep out.
    assert_eq!(RangeIN.join(S), RangeIS);
    assert_eq!(RangeIN.join(U), RangeIU);
    assert_eq!(RangeIN.join(X), RangeIX);
    assert_eq!(RangeIN.join(RangeSS), RangeXS);
    assert_eq!(RangeIN.join(RangeSU), RangeXU);
    assert_eq!(RangeSS.join(X), RangeXX, "no RangeS-X: the next mode up");
    assert_eq!(RangeSS.join(U), RangeSU);
    assert_eq!(S.join(RangeSS), RangeSS);
    assert_eq!(RangeXS.join(RangeIX), RangeXX);
    // RangeI-S: other inserts may go on (RangeI-N), readers of the key too, no range reader.
    assert!(RangeIS.compatible(RangeIN) && RangeIS.compatible(S) && !RangeIS.compatible(X));
    assert!(!RangeIS.compatible(RangeSS));
    // RangeX-S: no insert, no range reader; a plain reader of the key may share it.
    assert!(!RangeXS.compatible(RangeIN) && !RangeXS.compatible(RangeSS));
    assert!(RangeXS.compatible(S) && !RangeXU.compatible(U));
    for m in LockMode::ALL {
        assert_eq!(m.is_range(), m.name().starts_with("Range"), "{m}");
        assert!(RangeXX.covers(m), "RangeX-X is the strongest mode");
    }
}

#[test]
fn covers_and_join_form_the_lattice() {
    for a in LockMode::ALL {
        assert!(a.covers(a) && RangeXX.covers(a));
        if !a.is_range() {
            assert!(a.covers(IS) && X.covers(a));
        }
        for b in LockMode::ALL {
            let j = a.join(b);
            assert_eq!(j, b.join(a));
            assert!(j.covers(a) && j.covers(b), "{a} join {b} = {j}");
            for c in LockMode::ALL {
                if c.covers(a) && c.covers(b) {
                    assert!(c.covers(j), "{a} join {b} = {j} is not below {c}");
                }
                // A stronger mode is compatible with no more than a weaker one: what makes a
                // conversion safe to check owner by owner.
                if a.covers(b) && a.compatible(c) {
                    assert!(b.compatible(c));
                }
            }
        }
    }
    assert_eq!(S.join(IX), SIX);
    assert_eq!(U.join(IX), X);
    assert_eq!(U.join(SIX), X);
    assert_eq!(S.join(U), U);
    assert_eq!(IS.join(X), X);
    assert!(U.covers(S) && !S.covers(U) && !SIX.covers(U) && SIX.covers(IX));
}

#[test]
fn resources_and_errors() {
    // FNV-1a 64: stable, and the published test vector for "a".
    assert_eq!(
        Resource::key(1, 2, 1, b"a"),
        Resource::Key { db: 1, object: 2, index: 1, hash: 0xaf63_dc4c_8601_ec8c }
    );
    assert_ne!(Resource::key(1, 2, 1, b"ab"), Resource::key(1, 2, 1, b"ba"));
    assert_eq!(Resource::Database(1).type_name(), "DATABASE");
    assert_eq!(Resource::Object { db: 1, object: 2 }.type_name(), "OBJECT");
    assert_eq!(key(1).type_name(), "KEY");
    assert_eq!(Resource::Other { db: 1, name: 7 }.type_name(), "METADATA");
    assert_eq!(key(255).to_string(), "KEY: 5:100:1 (00000000000000ff)");

    let timeout = LockError::Timeout { resource: key(1), mode: S };
    let deadlock = LockError::Deadlock { resource: key(1), mode: X };
    assert_eq!(timeout.number(), 1222);
    assert_eq!(deadlock.number(), 1205);
    assert_eq!(timeout.sql_message(52), "Lock request time out period exceeded.");
    assert_eq!(
        deadlock.sql_message(52),
        "Transaction (Process ID 52) was deadlocked on lock resources with another process \
         and has been chosen as the deadlock victim. Rerun the transaction."
    );
    assert!(deadlock.to_string().contains("deadlock victim"));
    assert!(timeout.to_string().contains("KEY: 5:100:1"));
    let boxed: Box<dyn std::error::Error> = Box::new(timeout);
    assert!(boxed.to_string().starts_with("Lock request time out period exceeded."));
}
