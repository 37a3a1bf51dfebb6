//! The declared type (SMALLDATETIME, SMALLMONEY, TEXT, NTEXT, IMAGE) of expressions over
//! columns of those types, as a client is told it (`ColumnInfo::declared`): SQL Server's data
//! type precedence for arithmetic, CASE and COALESCE, ISNULL's first argument, MIN, MAX and
//! DATEADD keeping theirs, SUM and AVG of SMALLMONEY going to MONEY; and through UNION,
//! derived tables, views and SELECT INTO.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use walden_engine::types::{DeclaredType, SqlType};
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::Session;

use crate::support;
use support::ok;

/// A session on a fresh instance with a table of each declared type, one row in it.
fn session(dir: &tempfile::TempDir) -> Session {
    let instance = Instance::open(dir.path(), InstanceConfig::default()).unwrap();
    let mut s = Session::new(Arc::clone(&instance));
    ok(
        &mut s,
        "CREATE TABLE legacy (id INT PRIMARY KEY, sd SMALLDATETIME, sm SMALLMONEY, tx TEXT, \
         nt NTEXT, im IMAGE);
         INSERT INTO legacy VALUES (1, '2024-02-29 13:45', 12.5, 'a', N'b', 0x01);",
    );
    s
}

/// The held and declared type of each column of `sql`'s last result set.
fn types(s: &mut Session, sql: &str) -> Vec<(SqlType, Option<DeclaredType>)> {
    let out = ok(s, sql);
    out.results.last().unwrap().columns.iter().map(|c| (c.ty, c.declared)).collect()
}

fn declared(s: &mut Session, sql: &str) -> Vec<Option<DeclaredType>> {
    types(s, sql).into_iter().map(|(_, d)| d).collect()
}

use DeclaredType::{Image, NText, SmallDateTime, SmallMoney, Text};

#[test]
fn arithmetic_takes_the_operand_type_of_higher_precedence() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(&dir);
    let got = types(
        &mut s,
        "SELECT sd + 1, 1 + sd, sd - 0.5, sd + CAST(1 AS DATETIME), sm * 2, -sm, sm + 1.5, \
         sm + $1, sm + CAST(1 AS FLOAT) FROM legacy",
    );
    // Held as DATETIME and MONEY whatever they are declared as.
    let held: Vec<SqlType> = got.iter().map(|(ty, _)| *ty).collect();
    assert_eq!(held[..4], [SqlType::DateTime; 4]);
    assert_eq!(held[4..6], [SqlType::Money; 2]);
    assert_eq!(
        got.into_iter().map(|(_, d)| d).collect::<Vec<_>>(),
        [
            Some(SmallDateTime),
            Some(SmallDateTime),
            Some(SmallDateTime),
            // DATETIME is above SMALLDATETIME; DECIMAL, MONEY and FLOAT above SMALLMONEY.
            None,
            Some(SmallMoney),
            Some(SmallMoney),
            None,
            None,
            None,
        ]
    );
    // The text types are no arithmetic operands: concatenation is the held type's.
    assert_eq!(declared(&mut s, "SELECT tx + 'x' FROM legacy"), [None]);
}

#[test]
fn conditional_functions_follow_their_rules() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(&dir);
    let got = declared(
        &mut s,
        "SELECT ISNULL(sd, GETDATE()), ISNULL(GETDATE(), sd), ISNULL(NULL, sm), NULLIF(sm, 0), \
         COALESCE(NULL, sd, '2020-01-01'), COALESCE(sd, SYSDATETIME()), \
         CASE WHEN id = 1 THEN sm ELSE 0 END, CASE WHEN id = 1 THEN sm ELSE $0 END, \
         IIF(id = 1, tx, 'x'), COALESCE(nt, N'y'), CASE WHEN id > 0 THEN im END, \
         DATEADD(DAY, 1, sd) FROM legacy",
    );
    assert_eq!(
        got,
        [
            Some(SmallDateTime),
            None,
            Some(SmallMoney),
            Some(SmallMoney),
            Some(SmallDateTime),
            None,
            Some(SmallMoney),
            None,
            Some(Text),
            Some(NText),
            Some(Image),
            Some(SmallDateTime),
        ]
    );
}

#[test]
fn aggregates_keep_or_widen_the_type() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(&dir);
    let got = types(
        &mut s,
        "SELECT MIN(sd), MAX(sm), SUM(sm), AVG(sm), MAX(sd) OVER () FROM legacy GROUP BY sd, sm",
    );
    assert_eq!(
        got,
        [
            (SqlType::DateTime, Some(SmallDateTime)),
            (SqlType::Money, Some(SmallMoney)),
            (SqlType::Money, None),
            (SqlType::Money, None),
            (SqlType::DateTime, Some(SmallDateTime)),
        ]
    );
}

#[test]
fn unions_derived_tables_views_and_select_into_keep_the_type() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session(&dir);
    assert_eq!(
        declared(
            &mut s,
            "SELECT sd FROM legacy UNION ALL SELECT NULL; \
             SELECT sd FROM legacy UNION SELECT GETDATE()"
        ),
        [None],
        "DATETIME is above SMALLDATETIME"
    );
    assert_eq!(
        declared(&mut s, "SELECT sd FROM legacy UNION ALL SELECT NULL"),
        [Some(SmallDateTime)]
    );
    assert_eq!(
        declared(&mut s, "SELECT x.a, x.b FROM (SELECT sd + 1 AS a, sm * 2 AS b FROM legacy) x"),
        [Some(SmallDateTime), Some(SmallMoney)]
    );
    ok(&mut s, "CREATE VIEW legacy_v AS SELECT ISNULL(sd, '2000-01-01') AS d FROM legacy");
    assert_eq!(declared(&mut s, "SELECT d FROM legacy_v"), [Some(SmallDateTime)]);
    ok(&mut s, "SELECT sd + 1 AS d, ISNULL(sm, 0) AS m INTO legacy_copy FROM legacy");
    assert_eq!(
        declared(&mut s, "SELECT d, m FROM legacy_copy"),
        [Some(SmallDateTime), Some(SmallMoney)]
    );
}
