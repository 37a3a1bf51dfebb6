//! Prepared expressions and conditions against the interpreter: each expression below is run
//! both ways over rows of edge values (NULLs, zero, the largest INT, text that is no number,
//! texts of two collations, a DATETIME2(3)) under each setting of the session options that
//! change an answer, and must give the same value of the same type, or the same error.

use std::sync::Arc;

use walden_engine::types::{SqlType, Value};
use walden_engine::{Instance, InstanceConfig};

use super::{Condition, Scalar};
use crate::ast::{Expr, QueryBody, SelectItem, StatementKind};
use crate::exec::eval::{Col, Env};
use crate::exec::scalar::collation::collation_ref;
use crate::exec::scalar::{self, settings};
use crate::exec::session::{Run, Session};
use crate::exec::SqlError;

/// The select list of `SELECT <text>`, parsed.
fn exprs(text: &str) -> Vec<Expr> {
    let batch = crate::parse_batch(&format!("SELECT {text}")).expect("parses");
    let statement = batch.statements.into_iter().next().expect("one statement");
    let StatementKind::Select(s) = statement.kind else { panic!("not a SELECT: {text}") };
    let QueryBody::Select(sel) = s.query.body else { panic!("not a plain SELECT: {text}") };
    sel.items
        .into_iter()
        .map(|item| match item {
            SelectItem::Expr { expr, .. } => expr,
            _ => panic!("not an expression: {text}"),
        })
        .collect()
}

/// The columns the expressions read: `a`, `b` INT; `name` of the default collation; `cs` of
/// a case-sensitive one; `d` DECIMAL; `dt` DATETIME2(3).
fn columns() -> Vec<Col> {
    let text = |name: &str, collation: &str| Col {
        collation: Some(collation_ref(collation).expect("known collation")),
        ..Col::new(Some("t"), name, SqlType::VarChar(walden_engine::types::Len::Max))
    };
    vec![
        Col::new(Some("t"), "a", SqlType::Int),
        Col::new(Some("t"), "b", SqlType::Int),
        text("name", "SQL_Latin1_General_CP1_CI_AS"),
        text("cs", "Latin1_General_CS_AS"),
        Col::new(Some("t"), "d", SqlType::Decimal { precision: 10, scale: 2 }),
        Col::new(Some("t"), "dt", SqlType::DateTime2(3)),
    ]
}

/// Rows of edge values for [`columns`].
fn rows() -> Vec<Vec<Value>> {
    let s = |x: &str| Value::Str(x.to_string());
    let dec = |x: &str| scalar::convert(s(x), SqlType::Decimal { precision: 10, scale: 2 }, None);
    let dt = |x: &str| scalar::convert(s(x), SqlType::DateTime2(3), None);
    let dt = dt("2024-02-29 10:11:12.345").expect("datetime2");
    vec![
        vec![Value::Int(1), Value::Int(2), s("abc"), s("abc"), dec("1.50").expect("d"), dt.clone()],
        vec![Value::Int(7), Value::Int(0), s("ABC"), s("ABC"), dec("-3.25").expect("d"), dt],
        vec![Value::Null, Value::Null, Value::Null, Value::Null, Value::Null, Value::Null],
        vec![
            Value::Int(i32::MAX),
            Value::Int(-1),
            s("12x"),
            s("Abc"),
            dec("0").expect("d"),
            Value::Null,
        ],
        vec![Value::Int(0), Value::Int(5), s("42"), s("a%c"), Value::Null, Value::Null],
        vec![
            Value::Int(-5),
            Value::Null,
            s(""),
            s("PROMO X"),
            dec("99.99").expect("d"),
            Value::Null,
        ],
    ]
}

/// A value or an error as a comparable text: the value's kind is in its debug form, so a
/// value of another type does not pass for the same.
fn outcome<T: std::fmt::Debug>(r: Result<T, SqlError>) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("error {}: {}", e.number, e.message),
    }
}

const VALUES: &str = "\
    CASE WHEN a > b THEN a ELSE b END, \
    CASE WHEN a > 1 THEN 'big' WHEN a = 1 THEN 'one' END, \
    CASE a WHEN 1 THEN 'one' WHEN NULL THEN 'null' ELSE 'other' END, \
    CASE name WHEN 'abc' THEN 1 WHEN 'ABC' THEN 2 END, \
    CASE WHEN a = NULL THEN 'null' ELSE 'not' END, \
    CASE WHEN NULL <> a THEN 1 ELSE 0 END, \
    CASE WHEN name = 'ABC' THEN 1 WHEN cs = 'ABC' THEN 2 ELSE 0 END, \
    CASE WHEN cs = 'abc' THEN 1 ELSE 0 END, \
    CASE WHEN name = cs THEN 1 ELSE 0 END, \
    CASE WHEN cs COLLATE SQL_Latin1_General_CP1_CI_AS = 'abc' THEN 1 ELSE 0 END, \
    CASE WHEN name LIKE 'A%' THEN 1 WHEN cs LIKE 'a%' THEN 2 WHEN name IS NULL THEN 3 ELSE 0 END, \
    CASE WHEN cs LIKE 'a!%c' ESCAPE '!' THEN 1 WHEN cs NOT LIKE 'P%' THEN 2 END, \
    CASE WHEN a BETWEEN 1 AND 7 THEN 1 WHEN a NOT BETWEEN b AND 10 THEN 2 END, \
    CASE WHEN cs BETWEEN 'a' AND 'b' THEN 1 ELSE 0 END, \
    CASE WHEN a IN (1, 2, NULL) THEN 1 WHEN a NOT IN (7, b) THEN 2 ELSE 3 END, \
    CASE WHEN cs IN ('abc', 'Abc') THEN 1 ELSE 0 END, \
    CASE WHEN NOT (a > 1 AND b < 2) OR a IS NULL THEN 1 ELSE 0 END, \
    CASE WHEN a > 0 AND b / 0 = 1 THEN 1 ELSE 0 END, \
    CASE WHEN a < 0 OR a / b > 1 THEN 1 ELSE 0 END, \
    CASE WHEN a IS DISTINCT FROM b THEN 1 ELSE 0 END, \
    CASE WHEN a > 0 THEN CASE b WHEN 0 THEN a / b ELSE d * b END END, \
    CASE WHEN b = 0 THEN 0 ELSE a / b END, \
    CASE WHEN a > 5 THEN d ELSE a END, \
    CASE WHEN a > 5 THEN name ELSE a END, \
    IIF(a > 0, 'pos', 'not'), IIF(name = 'abc', d, 1.5), \
    a / b, a * 2 + b, a + 1, -a, d * a, d / b, name + 'x', name + NULL, cs + name, \
    CAST(name AS INT), TRY_CAST(name AS INT), CAST(a AS TINYINT), CAST(d AS INT), \
    CAST(dt AS VARCHAR(40)), CONVERT(VARCHAR(30), dt, 121), TRY_CONVERT(INT, name), \
    CONVERT(VARCHAR(10), a), CONVERT(DECIMAL(5, 1), d), \
    COALESCE(b, a, 0), COALESCE(name, 'z'), ISNULL(name, cs), ISNULL(b, 1.5), NULLIF(a, 1), \
    UPPER(name), LOWER(cs), LEN(name), SUBSTRING(cs, 2, 2), LEFT(name, 1) + RIGHT(cs, 1), \
    CONCAT(name, a, NULL), REPLACE(cs, 'b', 'x'), DATEADD(day, a, dt), YEAR(dt), \
    ABS(a), ROUND(d, 1)";

/// Conditions, separated by `;`.
const CONDITIONS: &str = "\
    a > b; a = NULL; NULL = a; a <> NULL; name = 'ABC'; cs = 'ABC'; name = cs; \
    cs COLLATE Latin1_General_CS_AS = name; name LIKE '%b%'; cs LIKE 'a_c'; \
    a BETWEEN b AND 10; name NOT BETWEEN 'a' AND 'b'; a IN (1, b, NULL); a NOT IN (1, 2); \
    name IS NULL; b IS NOT NULL; a IS NOT DISTINCT FROM b; NOT (a > 1 OR b < 2); \
    a > 1 AND b / 0 = 1; a < 0 OR a / b = 1; CAST(name AS INT) > 1; \
    CASE WHEN a > 1 THEN name END = 'ABC'";

/// The conditions of `text` (see [`CONDITIONS`]), each parsed as a WHERE clause.
fn conditions(text: &str) -> Vec<Expr> {
    text.split(';')
        .map(|c| {
            let batch = crate::parse_batch(&format!("SELECT 1 WHERE {c}")).expect("parses");
            let statement = batch.statements.into_iter().next().expect("one statement");
            let StatementKind::Select(s) = statement.kind else { panic!("not a SELECT: {c}") };
            let QueryBody::Select(sel) = s.query.body else { panic!("not a plain SELECT: {c}") };
            sel.where_clause.expect("a WHERE clause")
        })
        .collect()
}

/// The option settings tried: each turns one of what depends on the session off.
const SETTINGS: [&str; 4] = [
    "SET ANSI_NULLS ON",
    "SET ANSI_NULLS OFF",
    "SET CONCAT_NULL_YIELDS_NULL OFF",
    "SET ARITHABORT OFF SET ANSI_WARNINGS OFF",
];

/// Runs `check` with a run of a fresh session after `setup`, the session's scalar settings
/// installed as a statement installs them.
fn with_run(setup: &str, check: impl FnOnce(&mut Run<'_>)) {
    let dir = tempfile::tempdir().expect("temp dir");
    let instance = Instance::open(dir.path(), InstanceConfig::default()).expect("open");
    let mut session = Session::new(Arc::clone(&instance));
    let mut out = crate::exec::Collected::default();
    session.execute_batch(setup, &mut out);
    assert!(out.errors().next().is_none(), "{setup}: {:?}", out.messages);
    settings::install(session.opts.semantics.scalar_settings());
    {
        let mut run = Run::new(&mut session, &mut out);
        check(&mut run);
    }
    settings::install(settings::Settings::DEFAULT);
    session.close();
    drop(session);
    assert!(instance.close().is_ok());
}

#[test]
fn prepared_values_are_the_interpreters() {
    let (cols, rows, exprs) = (columns(), rows(), exprs(VALUES));
    for setup in SETTINGS {
        with_run(setup, |run| {
            for e in &exprs {
                let prepared = Scalar::prepare(e, &cols);
                assert!(!matches!(prepared, Scalar::Expr(_)), "not prepared: {e}");
                for row in &rows {
                    let env = Env::new(&cols, row, None);
                    let interpreted = outcome(run.eval(e, &env));
                    let prepared = outcome(run.eval_prepared(&prepared, &env));
                    assert_eq!(prepared, interpreted, "{setup}: {e} over {row:?}");
                }
            }
        });
    }
}

#[test]
fn prepared_conditions_are_the_interpreters() {
    let (cols, rows, exprs) = (columns(), rows(), conditions(CONDITIONS));
    for setup in SETTINGS {
        with_run(setup, |run| {
            for e in &exprs {
                let prepared = Condition::prepare(e, &cols, &[]);
                assert!(!matches!(prepared, Condition::Expr(_)), "not prepared: {e}");
                for row in &rows {
                    let env = Env::new(&cols, row, None);
                    let interpreted = outcome(run.predicate(e, &env));
                    let prepared = outcome(run.eval_condition(&prepared, &env));
                    assert_eq!(prepared, interpreted, "{setup}: {e} over {row:?}");
                }
            }
        });
    }
}

/// What cannot be resolved against the row's columns (a name of an enclosing query's row,
/// a name no row has, an unknown collation) is left to the interpreter, which finds it or
/// refuses it per row as before.
#[test]
fn what_the_rows_do_not_resolve_is_interpreted() {
    let cols = columns();
    let outer_cols = vec![Col::new(Some("o"), "x", SqlType::Int)];
    let outer_row = vec![Value::Int(3)];
    let exprs = exprs(
        "CASE WHEN x > a THEN 1 ELSE 0 END, CASE WHEN nope = 1 THEN 1 END, \
         CASE WHEN name COLLATE No_Such_Collation = 'a' THEN 1 END, x + a",
    );
    with_run("SET ANSI_NULLS ON", |run| {
        let outer = Env::new(&outer_cols, &outer_row, None);
        for e in &exprs {
            let prepared = Scalar::prepare(e, &cols);
            for row in &rows() {
                let env = Env::new(&cols, row, Some(&outer));
                let interpreted = outcome(run.eval(e, &env));
                assert_eq!(outcome(run.eval_prepared(&prepared, &env)), interpreted, "{e}");
            }
        }
    });
    for c in &conditions("x > a; nope = 1; name COLLATE No_Such_Collation = 'a'") {
        assert!(matches!(Condition::prepare(c, &cols, &[]), Condition::Expr(_)), "{c}");
    }
}
