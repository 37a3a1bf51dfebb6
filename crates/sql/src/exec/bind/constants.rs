//! Statement constants: expressions whose value cannot change while one statement reads its
//! rows, so that a read may evaluate them once rather than per row, and the planner may
//! estimate with their values.
//!
//! A driver's statement is parameterized (`WHERE l_quantity < @P4`, `l_shipdate <=
//! DATEADD(dd, -1 * @P0, ...)`): the parameters are variables of the statement's scope. A
//! statement constant is a literal, a variable, or a cast, CONVERT, arithmetic operator or
//! deterministic built-in function whose operands are statement constants. Nothing in it
//! reads a row, a subquery, the clock or a random source, so its value is the same on every
//! row of one read; a statement that assigns a variable while reading (`SELECT @v = a ...`)
//! assigns after its filter, which reads the value the variable had when the read began.
//! `@@` variables are left out: they describe the statement's own progress.
//!
//! Evaluated once, a constant may fail (an overflow, a text that does not convert) or be
//! NULL, whose meaning in a comparison depends on `ANSI_NULLS`: then the caller keeps the
//! expression and the interpreter evaluates it per row as before, raising the error on the
//! rows it reaches. Under `ARITHABORT OFF` with `ANSI_WARNINGS OFF` a failure would instead be
//! a warning, sent once evaluated, even where no row reaches it: nothing is evaluated early
//! then.

use walden_engine::types::Value;

use crate::ast::{BinaryOp, Expr, ExprKind, FunctionArgs, UnaryOp};
use crate::exec::eval::{bare_word, is_comparison, Env};
use crate::exec::execute::query::visit_children;
use crate::exec::scalar::registry::{self, Determinism};
use crate::exec::session::Run;

/// Whether `e` is a statement constant (see the module's comment).
pub(crate) fn is_statement_constant(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Variable(_) => true,
        ExprKind::Unary { op, operand } => *op != UnaryOp::Not && is_statement_constant(operand),
        ExprKind::Binary { op, left, right } => {
            !is_comparison(*op)
                && !matches!(op, BinaryOp::And | BinaryOp::Or)
                && is_statement_constant(left)
                && is_statement_constant(right)
        }
        ExprKind::Cast(_) | ExprKind::Convert(_) => {
            let mut all = true;
            visit_children(e, &mut |c| all &= is_statement_constant(c));
            all
        }
        ExprKind::Function(f) => {
            if f.name.schema.is_some() || f.over.is_some() || !f.within_group.is_empty() {
                return false;
            }
            let Some(builtin) = registry::lookup(&f.name.name.value) else { return false };
            let FunctionArgs::List { distinct: false, args } = &f.args else { return false };
            builtin.determinism == Determinism::Deterministic
                && matches!(builtin.kind, registry::Kind::Pure(_))
                && (builtin.min_args..=builtin.max_args).contains(&args.len())
                && args.iter().enumerate().all(|(i, a)| {
                    (builtin.bare_word == Some(i) && bare_word(a).is_some())
                        || is_statement_constant(a)
                })
        }
        _ => false,
    }
}

impl Run<'_> {
    /// The value of the statement constant `e`, evaluated now; None where `e` is not one,
    /// its value is NULL, or evaluating it fails (left to the interpreter, per row).
    pub(crate) fn statement_constant(&mut self, e: &Expr) -> Option<Value> {
        let options = &self.s.opts.semantics;
        if !(options.arithabort || options.ansi_warnings) || !is_statement_constant(e) {
            return None;
        }
        self.eval(e, &Env::empty()).ok().filter(|v| !v.is_null())
    }
}
