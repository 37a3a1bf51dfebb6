//! Conditions prepared for a loop over many rows: a searched CASE's `WHEN`s, IIF's first
//! argument, a grouped block's HAVING.
//!
//! A [`Condition`] is three-valued as `Run::predicate` is, and runs what it runs: the same
//! operands evaluated in the same order, AND stopping at FALSE and OR at TRUE, a comparison
//! of two texts under the collation SQL Server's precedence gives its sides (error 468 for
//! two that conflict, on the rows where both are text), a NULL side under `SET ANSI_NULLS
//! OFF` compared as a value when it is written as a literal or a variable. What is resolved
//! once is each side's collation label (a column's, or a `COLLATE`'s): a side whose label
//! cannot be known against the rows' columns (an outer reference, an unknown collation
//! name) leaves the whole condition to the interpreter.

use std::cmp::Ordering;

use crate::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::exec::eval::{
    cmp_matches, compare_collated, find_column, in_values_collated, is_comparison, is_text,
    operation_name, resolve_collation, Col, Env, Label,
};
use crate::exec::execute::filter::{between, truth_and, truth_or};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::Scalar;

/// A condition, prepared.
pub(crate) enum Condition<'a> {
    /// `left op right`, each side with its collation label and its expression (which says,
    /// under `ANSI_NULLS OFF`, whether its NULL is a value).
    Compare {
        op: BinaryOp,
        left: Side<'a>,
        right: Side<'a>,
    },
    /// `expr [NOT] BETWEEN low AND high`.
    Between {
        expr: Side<'a>,
        low: Side<'a>,
        high: Side<'a>,
        negated: bool,
    },
    /// `expr [NOT] IN (list)`.
    InList {
        expr: Side<'a>,
        list: Vec<Scalar<'a>>,
        negated: bool,
    },
    /// `expr [NOT] LIKE pattern [ESCAPE escape]`.
    Like {
        expr: Side<'a>,
        pattern: Side<'a>,
        escape: Option<Scalar<'a>>,
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        expr: Scalar<'a>,
        negated: bool,
    },
    /// `left IS [NOT] DISTINCT FROM right`.
    IsDistinctFrom {
        left: Scalar<'a>,
        right: Scalar<'a>,
        negated: bool,
    },
    And(Box<(Condition<'a>, Condition<'a>)>),
    Or(Box<(Condition<'a>, Condition<'a>)>),
    Not(Box<Condition<'a>>),
    /// Interpreted.
    Expr(&'a Expr),
}

/// An operand of a comparison, BETWEEN or LIKE.
pub(crate) struct Side<'a> {
    value: Scalar<'a>,
    label: Label,
    written: &'a Expr,
}

/// `e` prepared as an operand whose collation label is known against `cols`.
fn side<'a>(e: &'a Expr, cols: &[Col], computed: &[(usize, usize)]) -> Option<Side<'a>> {
    let label = match &e.kind {
        ExprKind::Collate { collation, .. } => {
            Label::Explicit(scalar::collation::collation_ref(&collation.value).ok()?)
        }
        ExprKind::Column(parts) => {
            let i = find_column(cols, parts).ok().flatten()?;
            cols[i].collation.map_or(Label::Default, Label::Implicit)
        }
        _ => Label::Default,
    };
    Some(Side { value: Scalar::prepare_computed(e, cols, computed), label, written: e })
}

impl<'a> Condition<'a> {
    /// `e` prepared as a condition over rows of `cols`, whose `computed` columns hold
    /// aggregate and window values.
    pub(crate) fn prepare(e: &'a Expr, cols: &[Col], computed: &[(usize, usize)]) -> Condition<'a> {
        Condition::prepare_parts(e, cols, computed).unwrap_or(Condition::Expr(e))
    }

    fn prepare_parts(
        e: &'a Expr,
        cols: &[Col],
        computed: &[(usize, usize)],
    ) -> Option<Condition<'a>> {
        let prepare = |e: &'a Expr| Condition::prepare(e, cols, computed);
        let scalar = |e: &'a Expr| Scalar::prepare_computed(e, cols, computed);
        let side = |e: &'a Expr| side(e, cols, computed);
        Some(match &e.kind {
            ExprKind::Binary { op: BinaryOp::And, left, right } => {
                Condition::And(Box::new((prepare(left), prepare(right))))
            }
            ExprKind::Binary { op: BinaryOp::Or, left, right } => {
                Condition::Or(Box::new((prepare(left), prepare(right))))
            }
            ExprKind::Unary { op: UnaryOp::Not, operand } => {
                Condition::Not(Box::new(prepare(operand)))
            }
            ExprKind::Binary { op, left, right } if is_comparison(*op) => {
                Condition::Compare { op: *op, left: side(left)?, right: side(right)? }
            }
            ExprKind::Between { expr, negated, low, high } => Condition::Between {
                expr: side(expr)?,
                low: side(low)?,
                high: side(high)?,
                negated: *negated,
            },
            ExprKind::InList { expr, negated, list } => Condition::InList {
                expr: side(expr)?,
                list: list.iter().map(scalar).collect(),
                negated: *negated,
            },
            ExprKind::Like { expr, negated, pattern, escape } => Condition::Like {
                expr: side(expr)?,
                pattern: side(pattern)?,
                escape: escape.as_deref().map(scalar),
                negated: *negated,
            },
            ExprKind::IsNull { expr, negated } => {
                Condition::IsNull { expr: scalar(expr), negated: *negated }
            }
            ExprKind::IsDistinctFrom { left, right, negated } => Condition::IsDistinctFrom {
                left: scalar(left),
                right: scalar(right),
                negated: *negated,
            },
            _ => return None,
        })
    }
}

/// `r`, or its negation.
fn negate(r: Option<bool>, negated: bool) -> Option<bool> {
    if negated {
        r.map(|b| !b)
    } else {
        r
    }
}

impl Run<'_> {
    /// The truth of a prepared condition for `env`'s row, as `Run::predicate` gives it.
    pub(crate) fn eval_condition(
        &mut self,
        c: &Condition<'_>,
        env: &Env<'_>,
    ) -> Result<Option<bool>, SqlError> {
        Ok(match c {
            Condition::And(both) => {
                let a = self.eval_condition(&both.0, env)?;
                truth_and(a, || self.eval_condition(&both.1, env))?
            }
            Condition::Or(both) => {
                let a = self.eval_condition(&both.0, env)?;
                truth_or(a, || self.eval_condition(&both.1, env))?
            }
            Condition::Not(c) => self.eval_condition(c, env)?.map(|b| !b),
            Condition::Compare { op, left, right } => {
                let (mut held_a, mut held_b) = (None, None);
                let a = self.value_in(&left.value, env, &mut held_a)?;
                let b = self.value_in(&right.value, env, &mut held_b)?;
                // Text compares by the collation SQL Server's precedence gives the sides.
                let c = if is_text(a) && is_text(b) {
                    resolve_collation(left.label, right.label, operation_name(*op))?
                } else {
                    None
                };
                match compare_collated(a, b, c)? {
                    Some(o) => Some(cmp_matches(*op, o)),
                    None => self.null_comparison(*op, (left.written, a), (right.written, b)),
                }
            }
            Condition::Between { expr, low, high, negated } => {
                let (mut held_v, mut held_lo, mut held_hi) = (None, None, None);
                let v = self.value_in(&expr.value, env, &mut held_v)?;
                let lo = self.value_in(&low.value, env, &mut held_lo)?;
                let hi = self.value_in(&high.value, env, &mut held_hi)?;
                let (c_lo, c_hi) = if is_text(v) {
                    (
                        resolve_collation(expr.label, low.label, "greater than or equal to")?,
                        resolve_collation(expr.label, high.label, "less than or equal to")?,
                    )
                } else {
                    (None, None)
                };
                between(compare_collated(v, lo, c_lo)?, compare_collated(v, hi, c_hi)?, *negated)
            }
            Condition::InList { expr, list, negated } => {
                let v = self.operand(&expr.value, env)?;
                let mut items = Vec::with_capacity(list.len());
                for x in list {
                    items.push(self.operand(x, env)?);
                }
                let c = if is_text(&v) { expr.label.collation() } else { None };
                negate(in_values_collated(&v, items.iter().map(|x| &**x), c)?, *negated)
            }
            Condition::Like { expr, pattern, escape, negated } => {
                let (mut held_v, mut held_p) = (None, None);
                let v = self.value_in(&expr.value, env, &mut held_v)?;
                let p = self.value_in(&pattern.value, env, &mut held_p)?;
                let esc = match escape {
                    Some(x) => Some(self.eval_prepared(x, env)?),
                    None => None,
                };
                // A collation that matches as the default does takes the default's faster
                // case folding.
                let r = match resolve_collation(expr.label, pattern.label, "like")? {
                    Some(c) if !c.order().is_default() => {
                        scalar::like_collated(v, p, esc.as_ref(), c)?
                    }
                    _ => scalar::like(v, p, esc.as_ref())?,
                };
                negate(r, *negated)
            }
            Condition::IsNull { expr, negated } => {
                let mut held = None;
                Some(self.value_in(expr, env, &mut held)?.is_null() != *negated)
            }
            // Never unknown: two NULLs are not distinct, a NULL and a value are.
            Condition::IsDistinctFrom { left, right, negated } => {
                let (a, b) = (self.operand(left, env)?, self.operand(right, env)?);
                let distinct = match (a.is_null(), b.is_null()) {
                    (true, true) => false,
                    (true, false) | (false, true) => true,
                    (false, false) => scalar::compare(&a, &b)? != Some(Ordering::Equal),
                };
                Some(distinct != *negated)
            }
            Condition::Expr(e) => self.predicate(e, env)?,
        })
    }
}
