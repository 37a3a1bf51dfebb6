//! Oracles that need no second engine (after SQLancer's): a query's rows must equal the rows of
//! the same query split three ways by any predicate (ternary logic partitioning), and a filter
//! must count the same rows as the predicate evaluated row by row in the select list, where no
//! optimization can use it (NoREC). A planner that seeks on an index for `WHERE p` but evaluates
//! the same `p` correctly as an expression shows up here.

use super::gen::Partitioned;
use super::model::{AggFunc, Cell, Dialect, Expr, Item, Pred, Select};

pub type Rows = Vec<Vec<Cell>>;

/// Runs one T-SQL query and returns its rows or its error.
pub type Run<'a> = dyn FnMut(&str) -> Result<Rows, String> + 'a;

fn filtered(base: &Select, predicate: Pred) -> Select {
    let mut q = base.clone();
    q.filter = Some(match q.filter {
        Some(f) => f.and(predicate),
        None => predicate,
    });
    q
}

/// The three queries that split `base` by `p`: where it is true, false and unknown.
fn partitions(base: &Select, p: &Pred) -> [Select; 3] {
    [
        filtered(base, p.clone()),
        filtered(base, p.clone().not()),
        filtered(base, p.clone().unknown()),
    ]
}

/// Runs `queries`, returning their rows, or a report naming the query that failed.
fn run_all(run: &mut Run<'_>, queries: &[&Select]) -> Result<Vec<Rows>, String> {
    queries
        .iter()
        .map(|q| {
            let sql = q.render(Dialect::TSql);
            run(&sql).map_err(|e| format!("{sql}\nfails in Walden: {e}"))
        })
        .collect()
}

fn show(queries: &[&Select], results: &[Rows]) -> String {
    let mut out = String::new();
    for (q, rows) in queries.iter().zip(results) {
        let mut rows = rows.clone();
        rows.sort();
        let shown: Vec<String> = rows
            .iter()
            .take(40)
            .map(|r| r.iter().map(ToString::to_string).collect::<Vec<_>>().join(" | "))
            .collect();
        out.push_str(&format!(
            "{}\n  -> {} rows: [{}]\n",
            q.render(Dialect::TSql),
            rows.len(),
            shown.join("; ")
        ));
    }
    out
}

/// TLP on the rows: the whole query's rows, as a multiset (or a set with DISTINCT), equal the
/// union of its three partitions'.
pub fn ternary_partition(
    run: &mut Run<'_>,
    case: &Partitioned,
    distinct: bool,
) -> Result<(), String> {
    let mut whole = case.base.clone();
    whole.distinct = distinct;
    let [t, f, u] = partitions(&whole, &case.predicate);
    let queries = [&whole, &t, &f, &u];
    let results = run_all(run, &queries)?;
    let mut expected = results[0].clone();
    let mut combined: Rows = results[1..].concat();
    expected.sort();
    combined.sort();
    if distinct {
        combined.dedup();
    }
    if expected == combined {
        Ok(())
    } else {
        Err(format!(
            "TLP: the partitions' rows differ from the whole query's\n{}",
            show(&queries, &results)
        ))
    }
}

/// TLP on aggregates: COUNT(*), SUM, MIN and MAX over the whole input combine from the three
/// partitions' (sum of counts and sums, least of minimums, greatest of maximums).
pub fn aggregate_partition(run: &mut Run<'_>, case: &Partitioned) -> Result<(), String> {
    let mut whole = case.base.clone();
    whole.items = case
        .aggregates
        .iter()
        .enumerate()
        .map(|(i, expr)| Item { expr: expr.clone(), alias: format!("x{i}") })
        .collect();
    let [t, f, u] = partitions(&whole, &case.predicate);
    let queries = [&whole, &t, &f, &u];
    let results = run_all(run, &queries)?;
    let single = |rows: &Rows| -> Result<Vec<Cell>, String> {
        match rows.as_slice() {
            [row] if row.len() == case.aggregates.len() => Ok(row.clone()),
            _ => Err(format!("an aggregate without GROUP BY returned {rows:?}")),
        }
    };
    let expected = single(&results[0])?;
    let parts: Vec<Vec<Cell>> = results[1..].iter().map(single).collect::<Result<_, _>>()?;
    let mut combined = Vec::new();
    for (i, expr) in case.aggregates.iter().enumerate() {
        let values = parts.iter().map(|p| p[i].clone()).filter(|c| *c != Cell::Null);
        let Expr::Agg { func, .. } = expr else { unreachable!("aggregates only") };
        combined.push(match func {
            AggFunc::Count | AggFunc::Sum => {
                let mut sum = None;
                for v in values {
                    let Cell::Int(n) = v else { return Err(format!("a sum or count of {v}")) };
                    sum = Some(sum.unwrap_or(0) + n);
                }
                match (func, sum) {
                    (AggFunc::Count, None) => Cell::Int(0),
                    (_, None) => Cell::Null,
                    (_, Some(n)) => Cell::Int(n),
                }
            }
            AggFunc::Min => values.min().unwrap_or(Cell::Null),
            AggFunc::Max => values.max().unwrap_or(Cell::Null),
        });
    }
    if expected == combined {
        Ok(())
    } else {
        Err(format!(
            "TLP: aggregates of the partitions combine to {combined:?}, the whole query gives {expected:?}\n{}",
            show(&queries, &results)
        ))
    }
}

/// NoREC: `COUNT(*) ... WHERE p` equals the number of rows for which `CASE WHEN p THEN 1 ELSE 0
/// END` is 1 in the same query without the filter. (The CASE is counted here, not summed in SQL:
/// T-SQL refuses an aggregate over a subquery, and `p` may have one.)
pub fn non_optimizing(run: &mut Run<'_>, case: &Partitioned) -> Result<(), String> {
    let mut counted = filtered(&case.base, case.predicate.clone());
    counted.items = vec![Item {
        expr: Expr::Agg { func: AggFunc::Count, distinct: false, arg: None },
        alias: "x0".into(),
    }];
    let mut flagged = case.base.clone();
    let flag = Expr::Case(
        Box::new(case.predicate.clone()),
        Box::new(Expr::Literal(Cell::Int(1))),
        Box::new(Expr::Literal(Cell::Int(0))),
    );
    flagged.items = vec![Item { expr: flag, alias: "x0".into() }];
    let queries = [&counted, &flagged];
    let results = run_all(run, &queries)?;
    let count = match results[0].as_slice() {
        [row] => row.first().cloned().unwrap_or(Cell::Null),
        _ => Cell::Null,
    };
    let flags = results[1].iter().filter(|r| r.first() == Some(&Cell::Int(1))).count();
    if count == Cell::Int(flags as i64) {
        Ok(())
    } else {
        Err(format!(
            "NoREC: WHERE counts {count}, the predicate is true in {flags} rows\n{}",
            show(&queries, &results)
        ))
    }
}
