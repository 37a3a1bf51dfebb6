//! Scalar expressions prepared for a loop over many rows: an aggregate's argument, a
//! grouping key, a side of a scan's conjunct (`filter.rs`).
//!
//! Interpreted, `l_extendedprice * (1 - l_discount)` finds two columns by name and rebuilds
//! the constant 1 from its text on every row. [`Scalar::prepare`] resolves what it can once
//! against the rows' columns: a column to its position, a literal to its value, CAST's type
//! to a type, a built-in function of argument values to its registry entry (so that no row
//! looks its name up); arithmetic and calls of prepared parts stay prepared. Everything else
//! (user-defined and session functions, variables, subqueries, CASE, outer references) is
//! interpreted as before, so the value (or error) of every row is the interpreter's: the same
//! operations run on the same values.

use std::borrow::Cow;

use walden_engine::types::{SqlType, Value};

use crate::ast::{BinaryOp, Expr, ExprKind, FunctionArgs, FunctionCall, UnaryOp};
use crate::exec::eval::{bare_word, conversion_overflow, is_comparison, Col, Env};
use crate::exec::filter::{column, constant};
use crate::exec::scalar;
use crate::exec::scalar::registry::{self, Builtin, Kind};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// An expression, prepared.
pub(crate) enum Scalar<'a> {
    /// The row's column at this position.
    Column(usize),
    /// A literal's value (not NULL).
    Constant(Value),
    /// Arithmetic (or string concatenation) of two prepared operands.
    Binary { op: BinaryOp, left: Box<Scalar<'a>>, right: Box<Scalar<'a>> },
    /// `-x`, `+x`, `~x`.
    Unary { op: UnaryOp, operand: Box<Scalar<'a>> },
    /// `CAST(x AS type)` or `TRY_CAST`.
    Cast { expr: Box<Scalar<'a>>, ty: SqlType, is_try: bool },
    /// A built-in function of its arguments' values ([`Kind::Pure`]) with as many arguments
    /// as it takes.
    Call { builtin: &'static Builtin, run: registry::Pure, args: Vec<Scalar<'a>> },
    /// Interpreted.
    Expr(&'a Expr),
}

impl<'a> Scalar<'a> {
    /// `e` prepared against rows of `cols`.
    pub(crate) fn prepare(e: &'a Expr, cols: &[Col]) -> Scalar<'a> {
        if let Some(i) = column(e, cols) {
            return Scalar::Column(i);
        }
        if let Some(v) = constant(e) {
            return Scalar::Constant(v);
        }
        match &e.kind {
            ExprKind::Binary { op, left, right }
                if !is_comparison(*op) && !matches!(op, BinaryOp::And | BinaryOp::Or) =>
            {
                let (left, right) = (Scalar::prepare(left, cols), Scalar::prepare(right, cols));
                if matches!((&left, &right), (Scalar::Expr(_), Scalar::Expr(_))) {
                    return Scalar::Expr(e);
                }
                Scalar::Binary { op: *op, left: Box::new(left), right: Box::new(right) }
            }
            ExprKind::Unary { op, operand } if *op != UnaryOp::Not => {
                Scalar::Unary { op: *op, operand: Box::new(Scalar::prepare(operand, cols)) }
            }
            // A cast to a type Walden holds as another (SMALLDATETIME...) also fits the value
            // to it, which the interpreter does (`eval::into_declared`).
            ExprKind::Cast(c) if crate::exec::user_types::declared_as(&c.data_type).is_some() => {
                Scalar::Expr(e)
            }
            ExprKind::Cast(c) => match scalar::data_type_in_cast(&c.data_type) {
                Ok(ty) => Scalar::Cast {
                    expr: Box::new(Scalar::prepare(&c.expr, cols)),
                    ty,
                    is_try: c.is_try,
                },
                Err(_) => Scalar::Expr(e),
            },
            ExprKind::Function(f) => prepare_call(f, cols).unwrap_or(Scalar::Expr(e)),
            _ => Scalar::Expr(e),
        }
    }
}

/// A call of a built-in function of argument values, resolved to its registry entry; `None`
/// for any other call, and for one with a wrong number of arguments, which the interpreter
/// then refuses on each row as before.
fn prepare_call<'a>(f: &'a FunctionCall, cols: &[Col]) -> Option<Scalar<'a>> {
    if f.name.schema.is_some() || f.over.is_some() || !f.within_group.is_empty() {
        return None;
    }
    let builtin = registry::lookup(&f.name.name.value)?;
    let Kind::Pure(run) = builtin.kind else { return None };
    let args: &[Expr] = match &f.args {
        FunctionArgs::List { args, .. } => args,
        FunctionArgs::None | FunctionArgs::Star => &[],
    };
    builtin.check_arity(args.len()).ok()?;
    let args = args
        .iter()
        .enumerate()
        .map(|(i, a)| match bare_word(a).filter(|_| builtin.bare_word == Some(i)) {
            Some(word) => Scalar::Constant(Value::Str(word.to_string())),
            None => Scalar::prepare(a, cols),
        })
        .collect();
    Some(Scalar::Call { builtin, run, args })
}

impl Run<'_> {
    /// An operand's value: a column or a constant read where it lies (most operands of
    /// arithmetic, whose common cases need no copy: [`scalar::quick_binary`]), anything
    /// else evaluated.
    fn operand<'v>(
        &mut self,
        s: &'v Scalar<'_>,
        env: &'v Env<'_>,
    ) -> Result<Cow<'v, Value>, SqlError> {
        Ok(match s {
            Scalar::Column(i) => Cow::Borrowed(env.row.get(*i).unwrap_or(&Value::Null)),
            Scalar::Constant(v) => Cow::Borrowed(v),
            s => Cow::Owned(self.eval_prepared(s, env)?),
        })
    }

    /// The value of a prepared expression for `env`'s row.
    pub(crate) fn eval_prepared(
        &mut self,
        s: &Scalar<'_>,
        env: &Env<'_>,
    ) -> Result<Value, SqlError> {
        match s {
            Scalar::Column(i) => Ok(env.row.get(*i).cloned().unwrap_or(Value::Null)),
            Scalar::Constant(v) => Ok(v.clone()),
            Scalar::Binary { op, left, right } => {
                let a = self.operand(left, env)?;
                let b = self.operand(right, env)?;
                match scalar::quick_binary(*op, &a, &b) {
                    Some(v) => Ok(v),
                    None => scalar::binary(*op, a.into_owned(), b.into_owned()),
                }
            }
            Scalar::Unary { op, operand } => {
                let v = self.eval_prepared(operand, env)?;
                scalar::unary(*op, v)
            }
            Scalar::Cast { expr, ty, is_try } => {
                let v = self.eval_prepared(expr, env)?;
                if *is_try {
                    scalar::try_convert(v, *ty, None)
                } else {
                    scalar::convert(v, *ty, None).or_else(conversion_overflow)
                }
            }
            Scalar::Call { builtin, run, args } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval_prepared(a, env)?);
                }
                builtin.apply(*run, values)
            }
            Scalar::Expr(e) => self.eval(e, env),
        }
    }
}
