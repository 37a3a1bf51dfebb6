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
//! at again per row (TPC-H Q13's `o_comment NOT LIKE '%special%requests%'`). An AND, OR or
//! NOT of such parts is prepared as a tree of them (the ORs a join implies of one table,
//! TPC-H Q19's `(l_quantity >= 1 AND l_quantity <= 11) OR ...`, are checked on every row of
//! the scan). Any other conjunct is interpreted as before.
//!
//! The answer is the interpreter's for every row, errors included: conjuncts are checked
//! in the same order and the first that does not hold ends the check; a constant that
//! fails to evaluate, a NULL constant (whose meaning depends on `ANSI_NULLS`) and a name
//! that is not one of the row's columns (an outer reference) stay interpreted; and a
//! conversion that fails fails on each row, as it did. A variable (a driver's parameter) or an
//! expression of variables and literals that cannot change during the read is a constant too
//! (`bind/constants.rs`), evaluated once at the first row the read gives. A prepared side is
//! never NULL or a `COLLATE`, and at most one side of a comparison is a column, whose
//! collation orders as the default: so the comparison needs neither `ANSI_NULLS` nor
//! collation precedence, and is [`scalar::compare`] of the two values, as the interpreter's
//! would be.

use walden_engine::catalog::ColumnDef;
use walden_engine::types::{DayRange, SqlType, Value};
use walden_engine::EngineError;

use crate::ast::{BinaryOp, Expr, ExprKind, Ident, UnaryOp};
use crate::exec::bind::constants::is_statement_constant;
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{cmp_matches, find_column, in_values, is_comparison, is_text, Col, Env};
use crate::exec::plan::access::RowFilter;
use crate::exec::scalar;
use crate::exec::scalar::PercentsPattern;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A conversion of a constant to a column value's type, kept between rows.
type Memo = Option<(SqlType, Value)>;

/// Decodes into a row decoded in steps the columns of step `k` (`RowCursor::decode_step`).
pub(crate) type DecodeStep<'d> = dyn FnMut(usize, &mut [Value]) -> Result<(), EngineError> + 'd;

/// A read's conjuncts, prepared.
pub(crate) struct Filter<'a> {
    cols: &'a [Col],
    outer: Option<&'a Env<'a>>,
    parts: Vec<Part<'a>>,
    exprs: &'a [&'a Expr],
    /// Whether a conjunct holds a statement constant other than a literal: the parts are
    /// then prepared again at the first row, with the statement constants evaluated
    /// (`Run::statement_constant`), which needs the session that `new` does not have.
    variables: bool,
}

enum Part<'a> {
    /// `column op constant`.
    Compare {
        col: usize,
        op: BinaryOp,
        constant: Value,
        memo: Memo,
    },
    /// `column [NOT] BETWEEN constant AND constant`.
    Between {
        col: usize,
        low: Value,
        high: Value,
        negated: bool,
        memo: (Memo, Memo),
    },
    /// `column [NOT] IN (constant, ...)`.
    InList {
        col: usize,
        list: Vec<Value>,
        negated: bool,
    },
    /// `column [NOT] LIKE constant`, without ESCAPE; `percents` the pattern analysed once
    /// where it is literal ASCII and `%` only.
    Like {
        col: usize,
        pattern: Value,
        negated: bool,
        percents: Option<PercentsPattern>,
    },
    /// `x op y` with both sides prepared, one more than a column or a constant.
    Scalars {
        op: BinaryOp,
        left: Scalar<'a>,
        right: Scalar<'a>,
    },
    /// `column op column` (a join's `o_custkey = c_custkey`): compared as values unless
    /// both are text, which `expr` compares as the interpreter does, by the collation their
    /// precedence gives (or error 468).
    Columns {
        op: BinaryOp,
        left: usize,
        right: usize,
        expr: &'a Expr,
    },
    /// `x [NOT] BETWEEN y AND z`, likewise.
    ScalarBetween {
        expr: Scalar<'a>,
        low: Scalar<'a>,
        high: Scalar<'a>,
        negated: bool,
    },
    /// `x [NOT] IN (constant, ...)` with `x` prepared and not a column.
    ScalarIn {
        expr: Scalar<'a>,
        list: Vec<Value>,
        negated: bool,
    },
    /// `a AND b AND ...`, `a OR b OR ...` and `NOT a` of parts of which at least one is
    /// prepared (TPC-H Q19's `(l_quantity >= 1 AND l_quantity <= 11) OR ...`): evaluated
    /// left to right with the interpreter's short cuts (AND stops at FALSE, OR at TRUE), so
    /// the same operands run, and fail, as in `Run::predicate`.
    And(Vec<Part<'a>>),
    Or(Vec<Part<'a>>),
    Not(Box<Part<'a>>),
    /// Anything else, interpreted.
    Expr(&'a Expr),
}

impl<'a> Filter<'a> {
    pub(crate) fn new(f: RowFilter<'a>) -> Filter<'a> {
        let parts = f.exprs.iter().map(|e| prepare(e, f.cols, &mut |_| None)).collect();
        let variables = f.exprs.iter().any(|e| has_statement_constant(e));
        Filter { cols: f.cols, outer: f.outer, parts, exprs: f.exprs, variables }
    }

    /// The columns among the row's first `n` that each conjunct reads (true), in the order
    /// the conjuncts are checked, so that a read may decode a column only for the rows that
    /// reach the first conjunct reading it (`RowCursor::stage`); None where that is not
    /// known: a conjunct with a subquery (which may read any column of the row) or a
    /// construct this walk does not look inside.
    pub(crate) fn reads(&self, n: usize) -> Option<Vec<Vec<bool>>> {
        self.exprs.iter().map(|e| read_by(std::slice::from_ref(e), self.cols, n)).collect()
    }
}

/// Which of the first `n` columns of `cols` some of `exprs` reads (true); None where that is
/// not known (see [`Filter::reads`]).
pub(crate) fn read_by(exprs: &[&Expr], cols: &[Col], n: usize) -> Option<Vec<bool>> {
    Some(unread_by(exprs, cols, n)?.into_iter().map(|u| !u).collect())
}

/// Which of the first `n` columns of `cols` none of `exprs` reads (true); None where that
/// is not known (see [`Filter::reads`]).
pub(crate) fn unread_by(exprs: &[&Expr], cols: &[Col], n: usize) -> Option<Vec<bool>> {
    let mut unread = vec![true; n];
    for e in exprs {
        if !mark_read(e, cols, &mut unread) {
            return None;
        }
    }
    Some(unread)
}

/// Marks in `unread` (as false) the columns of `cols` that `e` names; false if `e` holds
/// anything whose columns the walk cannot be sure to see (only the constructs listed are
/// looked inside) or a name it cannot place.
fn mark_read(e: &Expr, cols: &[Col], unread: &mut [bool]) -> bool {
    match &e.kind {
        ExprKind::Column(parts) => {
            match find_column(cols, parts) {
                Ok(Some(i)) => {
                    if let Some(u) = unread.get_mut(i) {
                        *u = false;
                    }
                }
                // An enclosing query's column.
                Ok(None) => {}
                Err(_) => return false,
            }
            return true;
        }
        ExprKind::Literal(_) | ExprKind::Variable(_) => return true,
        ExprKind::Unary { .. }
        | ExprKind::Binary { .. }
        | ExprKind::Between { .. }
        | ExprKind::InList { .. }
        | ExprKind::Like { .. }
        | ExprKind::IsNull { .. }
        | ExprKind::Collate { .. }
        | ExprKind::Case(_)
        | ExprKind::Cast(_)
        | ExprKind::Convert(_) => {}
        ExprKind::Function(call)
            if call.over.is_none()
                && matches!(call.args, crate::ast::FunctionArgs::List { .. }) => {}
        _ => return false,
    }
    let mut ok = true;
    crate::exec::execute::query::visit_children(e, &mut |c| ok &= mark_read(c, cols, unread));
    ok
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

/// What a part may take as a constant side, besides literals: a statement constant's
/// value, where the session has evaluated it (None before the first row).
type Known<'k> = &'k mut dyn FnMut(&Expr) -> Option<Value>;

/// A literal's value, or a statement constant's as `known` gives it; never NULL.
fn constant_or_known(e: &Expr, known: Known<'_>) -> Option<Value> {
    match &e.kind {
        ExprKind::Literal(_) => constant(e),
        _ => known(e),
    }
}

/// Whether `e` holds a statement constant that is not a bare literal: a variable (a
/// parameter of a driver's statement) or an expression of literals and variables
/// (`DATEADD(yy, 1, CAST('1994-01-01' AS DATETIME))`).
fn has_statement_constant(e: &Expr) -> bool {
    if !matches!(e.kind, ExprKind::Literal(_)) && is_statement_constant(e) {
        return true;
    }
    let mut found = false;
    crate::exec::execute::query::visit_children(e, &mut |c| found |= has_statement_constant(c));
    found
}

fn prepare<'a>(e: &'a Expr, cols: &[Col], known: Known<'_>) -> Part<'a> {
    if let Some(p) = prepare_logical(e, cols, known) {
        return p;
    }
    // A column whose collation compares otherwise than the default is compared by the
    // interpreter, which knows collations.
    let column = |e: &Expr, cols: &[Col]| {
        column(e, cols).filter(|&i| cols[i].collation.is_none_or(|c| c.order().is_default()))
    };
    let prepared = match &e.kind {
        ExprKind::Binary { op, left, right } if is_comparison(*op) => {
            match (column(left, cols), constant_or_known(right, known)) {
                (Some(col), Some(constant)) => {
                    Some(Part::Compare { col, op: *op, constant, memo: None })
                }
                _ => None,
            }
        }
        ExprKind::Between { expr, negated, low, high } => {
            match (
                column(expr, cols),
                constant_or_known(low, known),
                constant_or_known(high, known),
            ) {
                (Some(col), Some(low), Some(high)) => {
                    Some(Part::Between { col, low, high, negated: *negated, memo: (None, None) })
                }
                _ => None,
            }
        }
        ExprKind::InList { expr, negated, list } => {
            let values: Option<Vec<Value>> =
                list.iter().map(|e| constant_or_known(e, known)).collect();
            match (column(expr, cols), values) {
                (Some(col), Some(list)) => Some(Part::InList { col, list, negated: *negated }),
                _ => None,
            }
        }
        // The interpreter matches under the default collation's folding here too: the
        // column's collation orders as the default, and a literal brings none of its own.
        ExprKind::Like { expr, negated, pattern, escape: None } => {
            match (column(expr, cols), constant_or_known(pattern, known)) {
                (Some(col), Some(pattern)) => {
                    let percents = match &pattern {
                        Value::Str(p) | Value::NStr(p) => PercentsPattern::new(p.as_bytes()),
                        _ => None,
                    };
                    Some(Part::Like { col, pattern, negated: *negated, percents })
                }
                _ => None,
            }
        }
        _ => None,
    };
    match prepared {
        Some(p) => p,
        None => prepare_scalars(e, cols, known).unwrap_or(Part::Expr(e)),
    }
}

/// An AND, OR or NOT whose operands are prepared (a chain of one operator as one part),
/// unless none of them is: interpreting the whole is then as fast.
fn prepare_logical<'a>(e: &'a Expr, cols: &[Col], known: Known<'_>) -> Option<Part<'a>> {
    let op = match &e.kind {
        ExprKind::Binary { op: op @ (BinaryOp::And | BinaryOp::Or), .. } => *op,
        ExprKind::Unary { op: UnaryOp::Not, operand } => {
            return match prepare(operand, cols, known) {
                Part::Expr(_) => None,
                p => Some(Part::Not(Box::new(p))),
            };
        }
        _ => return None,
    };
    let mut operands = Vec::new();
    chain(e, op, &mut operands);
    let parts: Vec<Part<'a>> = operands.into_iter().map(|o| prepare(o, cols, known)).collect();
    if parts.iter().all(|p| matches!(p, Part::Expr(_))) {
        return None;
    }
    Some(if op == BinaryOp::And { Part::And(parts) } else { Part::Or(parts) })
}

/// The operands of a chain of `op` (`a AND b AND c`), left to right: evaluating them in
/// that order, stopping where the interpreter's nested evaluation stops, gives its answer.
fn chain<'a>(e: &'a Expr, op: BinaryOp, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Binary { op: o, left, right } if *o == op => {
            chain(left, op, out);
            chain(right, op, out);
        }
        _ => out.push(e),
    }
}

/// `e` prepared as a side of a comparison that compares as the interpreter's would without
/// knowing collations: nothing of it at the top interpreted, and a column only if its
/// collation orders as the default.
fn side<'a>(e: &'a Expr, cols: &[Col], known: Known<'_>) -> Option<Scalar<'a>> {
    if !matches!(e.kind, ExprKind::Literal(_)) {
        if let Some(v) = known(e) {
            return Some(Scalar::Constant(v));
        }
    }
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
fn prepare_scalars<'a>(e: &'a Expr, cols: &[Col], known: Known<'_>) -> Option<Part<'a>> {
    match &e.kind {
        ExprKind::Binary { op, left: l, right: r } if is_comparison(*op) => {
            if let (Some(left), Some(right)) = (column(l, cols), column(r, cols)) {
                return Some(Part::Columns { op: *op, left, right, expr: e });
            }
            let (left, right) = (side(l, cols, known)?, side(r, cols, known)?);
            comparable(&left, &right).then_some(Part::Scalars { op: *op, left, right })
        }
        ExprKind::Between { expr, negated, low, high } => {
            let expr = side(expr, cols, known)?;
            let (low, high) = (side(low, cols, known)?, side(high, cols, known)?);
            (comparable(&expr, &low) && comparable(&expr, &high)).then_some(Part::ScalarBetween {
                expr,
                low,
                high,
                negated: *negated,
            })
        }
        ExprKind::InList { expr, negated, list } => {
            let expr = side(expr, cols, known).filter(|s| !matches!(s, Scalar::Column(_)))?;
            let list =
                list.iter().map(|e| constant_or_known(e, known)).collect::<Option<Vec<Value>>>()?;
            Some(Part::ScalarIn { expr, list, negated: *negated })
        }
        _ => None,
    }
}

/// The inclusive day range that `part` keeps of a DATE column of `columns` (its
/// position, first and last day), if it compares one with a constant date (`=`, `<`, `<=`,
/// `>`, `>=`) or puts it BETWEEN two.
fn day_range(part: &Part<'_>, columns: &[ColumnDef]) -> Option<(usize, u32, u32)> {
    let (col, low, high) = match part {
        Part::Compare { col, op, constant, .. } => {
            let day = scalar::date_operand(constant)?.days();
            let (low, high) = match op {
                BinaryOp::Eq => (day, day),
                BinaryOp::GtEq => (day, u32::MAX),
                BinaryOp::Gt => (day.saturating_add(1), u32::MAX),
                BinaryOp::LtEq => (0, day),
                // Below day 0 nothing is: an empty range.
                BinaryOp::Lt => match day.checked_sub(1) {
                    Some(high) => (0, high),
                    None => (1, 0),
                },
                _ => return None,
            };
            (*col, low, high)
        }
        Part::Between { col, low, high, negated: false, .. } => {
            (*col, scalar::date_operand(low)?.days(), scalar::date_operand(high)?.days())
        }
        _ => return None,
    };
    (columns.get(col)?.ty == SqlType::Date).then_some((col, low, high))
}

/// Whether checking `part` raises no error for any row of a table with `columns`: a
/// column compared with, or IN a list of, constants that [`scalar::compare`] compares with
/// its values as they are (`scalar::compares_directly`: one family, numbers with numbers,
/// text with text, ...), or two columns of one family compared but text (two text columns
/// may meet in collations that conflict, 468).
fn cannot_fail(part: &Part<'_>, columns: &[ColumnDef]) -> bool {
    let ty = |c: usize| columns.get(c).map(|c| c.ty);
    match part {
        Part::Compare { col, constant, .. } => {
            ty(*col).is_some_and(|t| scalar::compares_directly(t, constant))
        }
        Part::InList { col, list, .. } => {
            ty(*col).is_some_and(|t| list.iter().all(|v| scalar::compares_directly(t, v)))
        }
        Part::Columns { left, right, .. } => match (ty(*left), ty(*right)) {
            (Some(a), Some(b)) => !a.is_text() && scalar::types_compare_directly(a, b),
            _ => false,
        },
        _ => false,
    }
}

impl Run<'_> {
    /// Whether every conjunct of `f` holds for `row` (UNKNOWN does not).
    pub(crate) fn filter_holds(
        &mut self,
        f: &mut Filter<'_>,
        row: &[Value],
    ) -> Result<bool, SqlError> {
        self.prepare_constants(f);
        let (cols, outer) = (f.cols, f.outer);
        for part in &mut f.parts {
            if self.part_value(part, cols, outer, row)? != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The day ranges of DATE columns that `f`'s leading conjuncts ask for, each one of
    /// `columns` (the scanned table's) compared with a constant date (`l_shipdate >=
    /// '1994-01-01' AND l_shipdate < '1995-01-01'`), or BETWEEN two: a row outside them is
    /// rejected by those conjuncts, before any other is checked, so a cursor may pass over
    /// it undecoded (`RowCursor::reject_days`) and nothing else changes, errors included.
    /// The leading run passes over conjuncts that cannot raise an error
    /// ([`cannot_fail`]: TPC-H Q12's `l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate <
    /// l_receiptdate` before its dates), since a row a later range rejects is rejected
    /// whatever they answer, and ends at the first conjunct of another shape.
    pub(crate) fn day_ranges(
        &mut self,
        f: &mut Filter<'_>,
        columns: &[ColumnDef],
    ) -> Vec<DayRange> {
        self.prepare_constants(f);
        let mut ranges: Vec<DayRange> = Vec::new();
        for part in &f.parts {
            let Some((col, low, high)) = day_range(part, columns) else {
                if cannot_fail(part, columns) {
                    continue;
                }
                break;
            };
            match ranges.iter_mut().find(|r| r.column == col) {
                Some(r) => {
                    r.low = r.low.max(low);
                    r.high = r.high.min(high);
                }
                None => ranges.push(DayRange { column: col, low, high }),
            }
        }
        ranges
    }

    /// [`Run::filter_holds`] for a row decoded in steps: `decode(k, row)` is called before
    /// the `k`-th conjunct is checked, to decode the columns it reads (see
    /// [`Filter::reads`]), so a row the first conjuncts reject is decoded no further.
    pub(crate) fn filter_holds_stepwise(
        &mut self,
        f: &mut Filter<'_>,
        row: &mut [Value],
        decode: &mut DecodeStep<'_>,
    ) -> Result<bool, SqlError> {
        self.prepare_constants(f);
        let (cols, outer) = (f.cols, f.outer);
        for (k, part) in f.parts.iter_mut().enumerate() {
            if k > 0 {
                decode(k, row).map_err(|e| self.s.engine_error(e))?;
            }
            if self.part_value(part, cols, outer, row)? != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Prepares again, at the first row, the parts of a filter that holds statement
    /// constants, with their values.
    fn prepare_constants(&mut self, f: &mut Filter<'_>) {
        if std::mem::take(&mut f.variables) {
            let mut known = |e: &Expr| self.statement_constant(e);
            f.parts = f.exprs.iter().map(|e| prepare(e, f.cols, &mut known)).collect();
        }
    }

    /// The three-valued answer of one prepared part for `row`, as `Run::predicate` gives it.
    fn part_value(
        &mut self,
        part: &mut Part<'_>,
        cols: &[Col],
        outer: Option<&Env<'_>>,
        row: &[Value],
    ) -> Result<Option<bool>, SqlError> {
        let value = |col: usize| row.get(col).unwrap_or(&Value::Null);
        Ok(match part {
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
            Part::Like { col, pattern, negated, percents } => {
                let v = value(*col);
                let matched = match percents.as_ref().and_then(|p| p.like(v)) {
                    Some(matched) => matched,
                    None => scalar::like(v, pattern, None)?,
                };
                matched.map(|m| m != *negated)
            }
            Part::Scalars { op, left, right } => {
                let env = Env::new(cols, row, outer);
                let a = self.eval_prepared(left, &env)?;
                let b = self.eval_prepared(right, &env)?;
                scalar::compare(&a, &b)?.map(|o| cmp_matches(*op, o))
            }
            Part::Columns { op, left, right, expr } => {
                let (a, b) = (value(*left), value(*right));
                if is_text(a) && is_text(b) {
                    self.predicate(expr, &Env::new(cols, row, outer))?
                } else {
                    // A NULL column compares as UNKNOWN whatever ANSI_NULLS says.
                    scalar::compare(a, b)?.map(|o| cmp_matches(*op, o))
                }
            }
            Part::ScalarBetween { expr, low, high, negated } => {
                let env = Env::new(cols, row, outer);
                let v = self.eval_prepared(expr, &env)?;
                let low = self.eval_prepared(low, &env)?;
                let high = self.eval_prepared(high, &env)?;
                between(scalar::compare(&v, &low)?, scalar::compare(&v, &high)?, *negated)
            }
            Part::ScalarIn { expr, list, negated } => {
                let env = Env::new(cols, row, outer);
                let r = in_values(&self.eval_prepared(expr, &env)?, list.iter())?;
                if *negated {
                    r.map(|b| !b)
                } else {
                    r
                }
            }
            // Kleene's AND and OR, stopping where the interpreter's nested evaluation
            // stops: `(a AND b) AND c` reads c only if neither a nor b is FALSE.
            // A chain folds left to right as the interpreter's nested AND and OR do: once
            // one operand decides, the rest are not evaluated.
            Part::And(parts) => {
                let mut all = Some(true);
                for p in parts {
                    all = truth_and(all, || self.part_value(p, cols, outer, row))?;
                }
                all
            }
            Part::Or(parts) => {
                let mut any = Some(false);
                for p in parts {
                    any = truth_or(any, || self.part_value(p, cols, outer, row))?;
                }
                any
            }
            Part::Not(p) => self.part_value(p, cols, outer, row)?.map(|b| !b),
            Part::Expr(e) => {
                let env = Env::new(cols, row, outer);
                self.predicate(e, &env)?
            }
        })
    }
}

/// `left AND right` in three-valued logic, short-circuit: `right` (and any error it raises)
/// is evaluated only when `left` is not FALSE. `Run::predicate`, `Run::eval_condition` and
/// a read's prepared chains (`Part::And`) decide AND by this.
pub(crate) fn truth_and<E>(
    left: Option<bool>,
    right: impl FnOnce() -> Result<Option<bool>, E>,
) -> Result<Option<bool>, E> {
    connective(false, left, right)
}

/// `left OR right` in three-valued logic, short-circuit: `right` (and any error it raises)
/// is evaluated only when `left` is not TRUE.
pub(crate) fn truth_or<E>(
    left: Option<bool>,
    right: impl FnOnce() -> Result<Option<bool>, E>,
) -> Result<Option<bool>, E> {
    connective(true, left, right)
}

/// AND (`decisive` FALSE) or OR (`decisive` TRUE): either side equal to `decisive` is the
/// answer, both sides the other value is that value, and an UNKNOWN side otherwise makes the
/// answer UNKNOWN.
fn connective<E>(
    decisive: bool,
    left: Option<bool>,
    right: impl FnOnce() -> Result<Option<bool>, E>,
) -> Result<Option<bool>, E> {
    if left == Some(decisive) {
        return Ok(left);
    }
    Ok(match (left, right()?) {
        (_, Some(r)) if r == decisive => Some(decisive),
        (Some(_), Some(_)) => Some(!decisive),
        _ => None,
    })
}

/// `v [NOT] BETWEEN low AND high` in three-valued logic, from `v`'s comparisons with the
/// bounds (None where one is UNKNOWN): false as soon as either bound excludes it.
pub(crate) fn between(
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
