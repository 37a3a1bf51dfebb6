//! Arithmetic (`+ - * / %`, the bitwise operators, concatenation), and integer arithmetic and
//! comparisons computed without `Value`s: the counters, bounds and key expressions of a loop
//! (`@i < 10000`, `(@i * 7919) % 100000 + 1`, `@i + 1`).
//!
//! [`Run::eval`] returns a `Result<Value, SqlError>` through memory, which its caller reads
//! back at once; the tag written as one byte and read as part of a wider load stalls the
//! processor (store forwarding fails) at every node of an expression. An integer here is
//! returned in registers, so a tree of integer nodes costs no such stall until its one
//! result becomes a `Value`.
//!
//! Only what has no error, no NULL and no other type is computed here; anything else is
//! `None`, and the caller evaluates the expression the general way from the start, which
//! gives the same value or raises the error (these nodes have no side effect to repeat).

use walden_engine::types::Value;

use crate::ast::{BinaryOp, Expr, ExprKind};
use crate::exec::eval::Env;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::{cmp_matches, is_comparison};

/// An INT or BIGINT value.
#[derive(Debug, Clone, Copy)]
pub(super) enum QuickInt {
    Int(i32),
    BigInt(i64),
}

impl QuickInt {
    /// The value as `eval` gives it.
    pub(super) fn value(self) -> Value {
        match self {
            QuickInt::Int(i) => Value::Int(i),
            QuickInt::BigInt(b) => Value::BigInt(b),
        }
    }

    fn wide(self) -> i64 {
        match self {
            QuickInt::Int(i) => i64::from(i),
            QuickInt::BigInt(b) => b,
        }
    }
}

impl Run<'_> {
    /// `left op right` for an arithmetic `op`, its operands evaluated without
    /// [`Run::quick_int`], which has already answered None for the tree they are in.
    pub(super) fn arithmetic(
        &mut self,
        op: BinaryOp,
        left: &Expr,
        right: &Expr,
        env: &Env<'_>,
    ) -> Result<Value, SqlError> {
        let operand = |run: &mut Self, e: &Expr| match &e.kind {
            ExprKind::Binary { op, left, right } if is_arithmetic(*op) => {
                run.arithmetic(*op, left, right, env)
            }
            _ => run.eval(e, env),
        };
        let a = operand(self, left)?;
        let b = operand(self, right)?;
        // The common integer and decimal cases without the general path's dispatch: the
        // same values.
        match scalar::quick_binary(op, &a, &b) {
            Some(v) => Ok(v),
            None => scalar::binary(op, a, b),
        }
    }

    /// `e`'s value when it is made of integer constants of up to nine digits (INT, as
    /// `eval` reads them), INT and BIGINT variables holding a value, and `+ - * / %`, with
    /// no overflow and no zero divisor on the way: the value `eval` computes (INT when both
    /// operands are INT, else BIGINT, as `scalar::quick_binary` does). None for anything
    /// else.
    pub(super) fn quick_int(&self, e: &Expr) -> Option<QuickInt> {
        match &e.kind {
            ExprKind::Literal(l) => scalar::short_int_literal(l).map(QuickInt::Int),
            ExprKind::Variable(r) => match self.variable_at(r).ok()?.value {
                Value::Int(i) => Some(QuickInt::Int(i)),
                Value::BigInt(b) => Some(QuickInt::BigInt(b)),
                _ => None,
            },
            ExprKind::Binary { op, left, right } => {
                let a = self.quick_int(left)?;
                let b = self.quick_int(right)?;
                int_arithmetic(*op, a, b)
            }
            _ => None,
        }
    }

    /// Whether the comparison `left op right` holds, when both sides are integers
    /// [`Run::quick_int`] computes (neither is NULL, so it is true or false).
    pub(super) fn quick_int_comparison(
        &self,
        op: BinaryOp,
        left: &Expr,
        right: &Expr,
    ) -> Option<bool> {
        let a = self.quick_int(left)?;
        let b = self.quick_int(right)?;
        Some(cmp_matches(op, a.wide().cmp(&b.wide())))
    }
}

/// `a op b` for an arithmetic `op`, computed in `i64` (which no product or quotient of INTs
/// overflows) and given back as INT when both are INT; None when the result does not fit
/// its type, for a zero divisor, and for any other operator.
fn int_arithmetic(op: BinaryOp, a: QuickInt, b: QuickInt) -> Option<QuickInt> {
    let r = scalar::checked_int_op(op, a.wide(), b.wide())?;
    match (a, b) {
        (QuickInt::Int(_), QuickInt::Int(_)) => i32::try_from(r).ok().map(QuickInt::Int),
        _ => Some(QuickInt::BigInt(r)),
    }
}

/// Whether `op` is arithmetic (or bitwise, or concatenation): neither a comparison nor AND
/// or OR, the binary operators that make conditions.
pub(super) fn is_arithmetic(op: BinaryOp) -> bool {
    !is_comparison(op) && !matches!(op, BinaryOp::And | BinaryOp::Or)
}
