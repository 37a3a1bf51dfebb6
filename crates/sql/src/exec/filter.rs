//! A read's own conjuncts, prepared once per read rather than interpreted per row.
//!
//! A scan checks the same few conjuncts on every row, and most are a column compared with a
//! constant (`l_shipdate >= '1994-01-01'`, `l_discount BETWEEN 0.05 AND 0.07`, `status IN
//! (1, 2)`). Interpreted, each row finds the column by name and rebuilds the constant from
//! its text, then converts it to the column's type (a date parsed from text per row). A
//! [`Filter`] resolves the column to its position and evaluates the constant once, and the
//! conversion is kept for the next row of the same type (`compare_with_constant`). A
//! comparison, BETWEEN or IN whose sides are more than that but can all be prepared
//! (`YEAR(o_orderdate) = 1995`, `SUBSTRING(c_phone, 1, 2) IN ('13', '31')`, `l_extendedprice *
//! (1 - l_discount) > 100`) has them prepared ([`Scalar`]: columns to positions, built-in
//! functions to their registry entries). `column [NOT] LIKE 'pattern'` (no ESCAPE) keeps its
//! pattern as a value, so that neither the column's name nor the pattern's text is looked
//! at again per row (TPC-H Q13's `o_comment NOT LIKE '%special%requests%'`). Any other
//! conjunct is interpreted as before.
//!
//! The answer is the interpreter's for every row, errors included: conjuncts are checked
//! in the same order and the first that does not hold ends the check; a constant that
//! fails to evaluate, a NULL constant (whose meaning depends on `ANSI_NULLS`) and a name
//! that is not one of the row's columns (an outer reference) stay interpreted; and a
//! conversion that fails fails on each row, as it did. A prepared side is never a literal
//! NULL, a variable or a `COLLATE`, and at most one side of a comparison is a column, whose
//! collation orders as the default: so the comparison needs neither `ANSI_NULLS` nor
//! collation precedence, and is [`scalar::compare`] of the two values, as the interpreter's
//! would be.

use walden_engine::types::{SqlType, Value};

use crate::ast::{BinaryOp, Expr, ExprKind, Ident};
use crate::exec::access::RowFilter;
use crate::exec::eval::{cmp_matches, find_column, in_values, is_comparison, is_text, Col, Env};
use crate::exec::prepared::Scalar;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A conversion of a constant to a column value's type, kept between rows.
type Memo = Option<(SqlType, Value)>;

/// A read's conjuncts, prepared.
pub(crate) struct Filter<'a> {
    cols: &'a [Col],
    outer: Option<&'a Env<'a>>,
    parts: Vec<Part<'a>>,
}

enum Part<'a> {
    /// `column op constant`.
    Compare { col: usize, op: BinaryOp, constant: Value, memo: Memo },
    /// `column [NOT] BETWEEN constant AND constant`.
    Between { col: usize, low: Value, high: Value, negated: bool, memo: (Memo, Memo) },
    /// `column [NOT] IN (constant, ...)`.
    InList { col: usize, list: Vec<Value>, negated: bool },
    /// `column [NOT] LIKE constant`, without ESCAPE.
    Like { col: usize, pattern: Value, negated: bool },
    /// `x op y` with both sides prepared, one more than a column or a constant.
    Scalars { op: BinaryOp, left: Scalar<'a>, right: Scalar<'a> },
    /// `column op column` (a join's `o_custkey = c_custkey`): compared as values unless
    /// both are text, which `expr` compares as the interpreter does, by the collation their
    /// precedence gives (or error 468).
    Columns { op: BinaryOp, left: usize, right: usize, expr: &'a Expr },
    /// `x [NOT] BETWEEN y AND z`, likewise.
    ScalarBetween { expr: Scalar<'a>, low: Scalar<'a>, high: Scalar<'a>, negated: bool },
    /// `x [NOT] IN (constant, ...)` with `x` prepared and not a column.
    ScalarIn { expr: Scalar<'a>, list: Vec<Value>, negated: bool },
    /// Anything else, interpreted.
    Expr(&'a Expr),
}

impl<'a> Filter<'a> {
    pub(crate) fn new(f: RowFilter<'a>) -> Filter<'a> {
        let parts = f.exprs.iter().map(|e| prepare(e, f.cols)).collect();
        Filter { cols: f.cols, outer: f.outer, parts }
    }
}

/// The position of the row's column `e` names, if it is a plain reference to one.
pub(crate) fn column(e: &Expr, cols: &[Col]) -> Option<usize> {
    let ExprKind::Column(parts) = &e.kind else { return None };
    let parts: &[Ident] = parts;
    find_column(cols, parts).ok().flatten()
}

/// The value of a literal that is not NULL.
pub(crate) fn constant(e: &Expr) -> Option<Value> {
    let ExprKind::Literal(l) = &e.kind else { return None };
    scalar::literal(l).ok().filter(|v| !v.is_null())
}

fn prepare<'a>(e: &'a Expr, cols: &[Col]) -> Part<'a> {
    // A column whose collation compares otherwise than the default is compared by the
    // interpreter, which knows collations.
    let column = |e: &Expr, cols: &[Col]| {
        column(e, cols).filter(|&i| cols[i].collation.is_none_or(|c| c.order().is_default()))
    };
    let prepared = match &e.kind {
        ExprKind::Binary { op, left, right } if is_comparison(*op) => {
            match (column(left, cols), constant(right)) {
                (Some(col), Some(constant)) => {
                    Some(Part::Compare { col, op: *op, constant, memo: None })
                }
                _ => None,
            }
        }
        ExprKind::Between { expr, negated, low, high } => {
            match (column(expr, cols), constant(low), constant(high)) {
                (Some(col), Some(low), Some(high)) => {
                    Some(Part::Between { col, low, high, negated: *negated, memo: (None, None) })
                }
                _ => None,
            }
        }
        ExprKind::InList { expr, negated, list } => {
            let values: Option<Vec<Value>> = list.iter().map(constant).collect();
            match (column(expr, cols), values) {
                (Some(col), Some(list)) => Some(Part::InList { col, list, negated: *negated }),
                _ => None,
            }
        }
        // The interpreter matches under the default collation's folding here too: the
        // column's collation orders as the default, and a literal brings none of its own.
        ExprKind::Like { expr, negated, pattern, escape: None } => {
            match (column(expr, cols), constant(pattern)) {
                (Some(col), Some(pattern)) => Some(Part::Like { col, pattern, negated: *negated }),
                _ => None,
            }
        }
        _ => None,
    };
    prepared.or_else(|| prepare_scalars(e, cols)).unwrap_or(Part::Expr(e))
}

/// `e` prepared as a side of a comparison that compares as the interpreter's would without
/// knowing collations: nothing of it at the top interpreted, and a column only if its
/// collation orders as the default.
fn side<'a>(e: &'a Expr, cols: &[Col]) -> Option<Scalar<'a>> {
    let s = Scalar::prepare(e, cols);
    match s {
        Scalar::Expr(_) => None,
        Scalar::Column(i) if !cols[i].collation.is_none_or(|c| c.order().is_default()) => None,
        s => Some(s),
    }
}

/// Two sides that may be compared as values: not two columns (whose collations could
/// conflict, error 468).
fn comparable(a: &Scalar<'_>, b: &Scalar<'_>) -> bool {
    !matches!((a, b), (Scalar::Column(_), Scalar::Column(_)))
}

/// A comparison, BETWEEN or IN list whose sides are all prepared.
fn prepare_scalars<'a>(e: &'a Expr, cols: &[Col]) -> Option<Part<'a>> {
    match &e.kind {
        ExprKind::Binary { op, left: l, right: r } if is_comparison(*op) => {
            if let (Some(left), Some(right)) = (column(l, cols), column(r, cols)) {
                return Some(Part::Columns { op: *op, left, right, expr: e });
            }
            let (left, right) = (side(l, cols)?, side(r, cols)?);
            comparable(&left, &right).then_some(Part::Scalars { op: *op, left, right })
        }
        ExprKind::Between { expr, negated, low, high } => {
            let (expr, low, high) = (side(expr, cols)?, side(low, cols)?, side(high, cols)?);
            (comparable(&expr, &low) && comparable(&expr, &high)).then_some(Part::ScalarBetween {
                expr,
                low,
                high,
                negated: *negated,
            })
        }
        ExprKind::InList { expr, negated, list } => {
            let expr = side(expr, cols).filter(|s| !matches!(s, Scalar::Column(_)))?;
            let list = list.iter().map(constant).collect::<Option<Vec<Value>>>()?;
            Some(Part::ScalarIn { expr, list, negated: *negated })
        }
        _ => None,
    }
}

impl Run<'_> {
    /// Whether every conjunct of `f` holds for `row` (UNKNOWN does not).
    pub(crate) fn filter_holds(
        &mut self,
        f: &mut Filter<'_>,
        row: &[Value],
    ) -> Result<bool, SqlError> {
        let value = |col: usize| row.get(col).unwrap_or(&Value::Null);
        for part in &mut f.parts {
            let holds = match part {
                Part::Compare { col, op, constant, memo } => {
                    scalar::compare_with_constant(value(*col), constant, memo)?
                        .map(|o| cmp_matches(*op, o))
                }
                Part::Between { col, low, high, negated, memo } => {
                    let v = value(*col);
                    let above = scalar::compare_with_constant(v, low, &mut memo.0)?;
                    let below = scalar::compare_with_constant(v, high, &mut memo.1)?;
                    between(above, below, *negated)
                }
                Part::InList { col, list, negated } => {
                    let r = in_values(value(*col), list.iter())?;
                    if *negated {
                        r.map(|b| !b)
                    } else {
                        r
                    }
                }
                Part::Like { col, pattern, negated } => {
                    scalar::like(value(*col), pattern, None)?.map(|m| m != *negated)
                }
                Part::Scalars { op, left, right } => {
                    let env = Env::new(f.cols, row, f.outer);
                    let a = self.eval_prepared(left, &env)?;
                    let b = self.eval_prepared(right, &env)?;
                    scalar::compare(&a, &b)?.map(|o| cmp_matches(*op, o))
                }
                Part::Columns { op, left, right, expr } => {
                    let (a, b) = (value(*left), value(*right));
                    if is_text(a) && is_text(b) {
                        self.predicate(expr, &Env::new(f.cols, row, f.outer))?
                    } else {
                        // A NULL column compares as UNKNOWN whatever ANSI_NULLS says.
                        scalar::compare(a, b)?.map(|o| cmp_matches(*op, o))
                    }
                }
                Part::ScalarBetween { expr, low, high, negated } => {
                    let env = Env::new(f.cols, row, f.outer);
                    let v = self.eval_prepared(expr, &env)?;
                    let low = self.eval_prepared(low, &env)?;
                    let high = self.eval_prepared(high, &env)?;
                    between(scalar::compare(&v, &low)?, scalar::compare(&v, &high)?, *negated)
                }
                Part::ScalarIn { expr, list, negated } => {
                    let env = Env::new(f.cols, row, f.outer);
                    let r = in_values(&self.eval_prepared(expr, &env)?, list.iter())?;
                    if *negated {
                        r.map(|b| !b)
                    } else {
                        r
                    }
                }
                Part::Expr(e) => {
                    let env = Env::new(f.cols, row, f.outer);
                    self.predicate(e, &env)?
                }
            };
            if holds != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// `v [NOT] BETWEEN low AND high` in three-valued logic, from `v`'s comparisons with the
/// bounds (None where one is UNKNOWN): false as soon as either bound excludes it.
fn between(
    with_low: Option<std::cmp::Ordering>,
    with_high: Option<std::cmp::Ordering>,
    negated: bool,
) -> Option<bool> {
    let above = with_low.map(|o| o != std::cmp::Ordering::Less);
    let below = with_high.map(|o| o != std::cmp::Ordering::Greater);
    let r = match (above, below) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    };
    if negated {
        r.map(|b| !b)
    } else {
        r
    }
}
