//! Scalar expressions prepared for a loop over many rows: an aggregate's argument, a
//! grouping key, a side of a scan's conjunct (`filter.rs`), a select list, a HAVING clause
//! and the ORDER BY keys of a SELECT block (`query/select.rs`).
//!
//! Interpreted, `l_extendedprice * (1 - l_discount)` finds two columns by name and rebuilds
//! the constant 1 from its text on every row. [`Scalar::prepare`] resolves what it can once
//! against the rows' columns: a column to its position, a literal to its value, CAST's and
//! CONVERT's type to a type, a built-in function of argument values to its registry entry (so
//! that no row looks its name up), an aggregate or window call of a grouped block to the
//! position of its computed value; arithmetic, CASE, IIF and calls of prepared parts stay
//! prepared, and a CASE's conditions are prepared as [`Condition`]s. Everything else
//! (user-defined and session functions, variables, subqueries, `COLLATE`, outer references)
//! is interpreted as before, so the value (or error) of every row is the interpreter's: the
//! same operations run on the same values, in the same order, and what depends on a session
//! option (ANSI_NULLS, CONCAT_NULL_YIELDS_NULL, ARITHABORT) or on collation precedence is
//! decided per row by the same functions the interpreter calls.

mod condition;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::cmp::Ordering;

use walden_engine::types::{SqlType, Value};

use crate::ast::{BinaryOp, Expr, ExprKind, FunctionArgs, FunctionCall, UnaryOp};
use crate::exec::eval::{bare_word, conversion_overflow, is_comparison, Col, Env};
use crate::exec::execute::filter::{column, constant};
use crate::exec::scalar;
use crate::exec::scalar::registry::{self, Builtin, Form, Kind};
use crate::exec::session::Run;
use crate::exec::SqlError;

pub(crate) use condition::Condition;

/// An expression, prepared.
pub(crate) enum Scalar<'a> {
    /// The row's column at this position (a computed aggregate's too).
    Column(usize),
    /// A literal's value (not NULL).
    Constant(Value),
    /// Arithmetic (or string concatenation) of two prepared operands.
    Binary { op: BinaryOp, left: Box<Scalar<'a>>, right: Box<Scalar<'a>> },
    /// `-x`, `+x`, `~x`.
    Unary { op: UnaryOp, operand: Box<Scalar<'a>> },
    /// `CAST(x AS type)` or `TRY_CAST`, and `CONVERT(type, x [, style])` or `TRY_CONVERT`.
    /// `source` is `x` as written: a TIME, DATETIME2 or DATETIMEOFFSET value's text shows
    /// the fractional digits of `x`'s declared type, which is looked up for those values
    /// only, as the interpreter does.
    Convert {
        expr: Box<Scalar<'a>>,
        ty: SqlType,
        style: Option<Box<Scalar<'a>>>,
        is_try: bool,
        source: &'a Expr,
    },
    /// A built-in function of its arguments' values ([`Kind::Pure`]) with as many arguments
    /// as it takes.
    Call { builtin: &'static Builtin, run: registry::Pure, args: Vec<Scalar<'a>> },
    /// `CASE`, simple or searched.
    Case(Box<Case<'a>>),
    /// `IIF(condition, then, otherwise)`.
    Iif(Box<(Condition<'a>, Scalar<'a>, Scalar<'a>)>),
    /// Interpreted.
    Expr(&'a Expr),
}

/// A prepared `CASE`.
pub(crate) struct Case<'a> {
    /// A simple CASE's operand, and the expression it was prepared from (which decides, with
    /// each branch's, whether `SET ANSI_NULLS OFF` compares a NULL as a value).
    operand: Option<(Scalar<'a>, &'a Expr)>,
    branches: Vec<(When<'a>, Scalar<'a>)>,
    otherwise: Option<Scalar<'a>>,
}

/// A `WHEN` of a prepared `CASE`.
enum When<'a> {
    /// A simple CASE's value, compared with the operand, and its expression.
    Value(Scalar<'a>, &'a Expr),
    /// A searched CASE's condition.
    Condition(Condition<'a>),
}

impl<'a> Scalar<'a> {
    /// `e` prepared against rows of `cols`.
    pub(crate) fn prepare(e: &'a Expr, cols: &[Col]) -> Scalar<'a> {
        Scalar::prepare_computed(e, cols, &[])
    }

    /// `e` prepared against rows of `cols` in which `computed` (as [`Env::computed`] says)
    /// holds the values of aggregate and window calls.
    pub(crate) fn prepare_computed(
        e: &'a Expr,
        cols: &[Col],
        computed: &[(usize, usize)],
    ) -> Scalar<'a> {
        if let Some(i) = column(e, cols) {
            return Scalar::Column(i);
        }
        if let Some(v) = constant(e) {
            return Scalar::Constant(v);
        }
        let prepare = |e: &'a Expr| Scalar::prepare_computed(e, cols, computed);
        match &e.kind {
            ExprKind::Binary { op, left, right }
                if !is_comparison(*op) && !matches!(op, BinaryOp::And | BinaryOp::Or) =>
            {
                let (left, right) = (prepare(left), prepare(right));
                if matches!((&left, &right), (Scalar::Expr(_), Scalar::Expr(_))) {
                    return Scalar::Expr(e);
                }
                Scalar::Binary { op: *op, left: Box::new(left), right: Box::new(right) }
            }
            ExprKind::Unary { op, operand } if *op != UnaryOp::Not => {
                Scalar::Unary { op: *op, operand: Box::new(prepare(operand)) }
            }
            // A cast to a type Walden holds as another (SMALLDATETIME...) also fits the value
            // to it, which the interpreter does (`eval::into_declared`).
            ExprKind::Cast(c)
                if crate::exec::ddl::user_types::declared_as(&c.data_type).is_some() =>
            {
                Scalar::Expr(e)
            }
            ExprKind::Convert(c)
                if crate::exec::ddl::user_types::declared_as(&c.data_type).is_some() =>
            {
                Scalar::Expr(e)
            }
            // A type that does not resolve is refused per row by the interpreter, as before.
            ExprKind::Cast(c) => match scalar::data_type_in_cast(&c.data_type) {
                Ok(ty) => Scalar::Convert {
                    expr: Box::new(prepare(&c.expr)),
                    ty,
                    style: None,
                    is_try: c.is_try,
                    source: &c.expr,
                },
                Err(_) => Scalar::Expr(e),
            },
            ExprKind::Convert(c) => match scalar::data_type_in_cast(&c.data_type) {
                Ok(ty) => Scalar::Convert {
                    expr: Box::new(prepare(&c.expr)),
                    ty,
                    style: c.style.as_ref().map(|s| Box::new(prepare(s))),
                    is_try: c.is_try,
                    source: &c.expr,
                },
                Err(_) => Scalar::Expr(e),
            },
            // The interpreter looks a call up among the computed values first, too.
            ExprKind::Function(f) => match computed_at(e, computed) {
                Some(i) => Scalar::Column(i),
                None => prepare_call(f, cols, computed).unwrap_or(Scalar::Expr(e)),
            },
            ExprKind::Case(c) => {
                let operand = c.operand.as_ref().map(|o| (prepare(o), o));
                let branches = c
                    .branches
                    .iter()
                    .map(|w| {
                        let when = match operand {
                            Some(_) => When::Value(prepare(&w.condition), &w.condition),
                            None => {
                                When::Condition(Condition::prepare(&w.condition, cols, computed))
                            }
                        };
                        (when, prepare(&w.result))
                    })
                    .collect();
                let otherwise = c.else_result.as_ref().map(prepare);
                Scalar::Case(Box::new(Case { operand, branches, otherwise }))
            }
            _ => Scalar::Expr(e),
        }
    }
}

impl Scalar<'_> {
    /// The value of a column or constant, where it lies in `env`'s row or in the
    /// expression; None for anything else, to be evaluated. A reference comes back in a
    /// register: a per-row caller that needs no copy reads its operand this way, not as a
    /// `Cow` ([`Run::operand`]), which went through memory in pieces and stalled.
    pub(crate) fn in_place<'v>(&'v self, env: &'v Env<'_>) -> Option<&'v Value> {
        match self {
            Scalar::Column(i) => Some(env.row.get(*i).unwrap_or(&Value::Null)),
            Scalar::Constant(v) => Some(v),
            _ => None,
        }
    }

    /// The value of a CAST or CONVERT (no style) of an integer column of `row` to an integer
    /// type that holds it, which is the column's value widened ([`widened`]); None for any
    /// other expression or value, to be evaluated.
    fn widened_column(&self, row: &[Value]) -> Option<Value> {
        match self {
            Scalar::Convert { expr, ty, style: None, .. } => match **expr {
                Scalar::Column(i) => row.get(i).and_then(|v| widened(v, *ty)),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Integer `v` as integer type `ty` when `ty` holds every value of `v`'s type (`SUM(CAST(x
/// AS BIGINT))` of an INT column, per row): a conversion that cannot fail, so the general
/// one (a copy of the column, its source type looked up) is skipped. None for any other
/// pair, NULL included, which converts as before.
fn widened(v: &Value, ty: SqlType) -> Option<Value> {
    Some(match (v, ty) {
        (Value::TinyInt(x), SqlType::TinyInt) => Value::TinyInt(*x),
        (Value::TinyInt(x), SqlType::SmallInt) => Value::SmallInt(i16::from(*x)),
        (Value::TinyInt(x), SqlType::Int) => Value::Int(i32::from(*x)),
        (Value::TinyInt(x), SqlType::BigInt) => Value::BigInt(i64::from(*x)),
        (Value::SmallInt(x), SqlType::SmallInt) => Value::SmallInt(*x),
        (Value::SmallInt(x), SqlType::Int) => Value::Int(i32::from(*x)),
        (Value::SmallInt(x), SqlType::BigInt) => Value::BigInt(i64::from(*x)),
        (Value::Int(x), SqlType::Int) => Value::Int(*x),
        (Value::Int(x), SqlType::BigInt) => Value::BigInt(i64::from(*x)),
        (Value::BigInt(x), SqlType::BigInt) => Value::BigInt(*x),
        _ => return None,
    })
}

/// Where `computed` puts the value of the aggregate or window call `e`.
fn computed_at(e: &Expr, computed: &[(usize, usize)]) -> Option<usize> {
    let key = e as *const Expr as usize;
    computed.iter().find(|(k, _)| *k == key).map(|&(_, i)| i)
}

/// A call of a built-in function of argument values, resolved to its registry entry, or of
/// IIF; `None` for any other call, and for one with a wrong number of arguments, which the
/// interpreter then refuses on each row as before.
fn prepare_call<'a>(
    f: &'a FunctionCall,
    cols: &[Col],
    computed: &[(usize, usize)],
) -> Option<Scalar<'a>> {
    if f.name.schema.is_some() || f.over.is_some() || !f.within_group.is_empty() {
        return None;
    }
    let builtin = registry::lookup(&f.name.name.value)?;
    let args: &[Expr] = match &f.args {
        FunctionArgs::List { args, .. } => args,
        FunctionArgs::None | FunctionArgs::Star => &[],
    };
    let run = match builtin.kind {
        Kind::Pure(run) => run,
        Kind::Form(Form::Iif) => {
            let [condition, then, otherwise] = args else { return None };
            let prepare = |e: &'a Expr| Scalar::prepare_computed(e, cols, computed);
            return Some(Scalar::Iif(Box::new((
                Condition::prepare(condition, cols, computed),
                prepare(then),
                prepare(otherwise),
            ))));
        }
        _ => return None,
    };
    builtin.check_arity(args.len()).ok()?;
    let args = args
        .iter()
        .enumerate()
        .map(|(i, a)| match bare_word(a).filter(|_| builtin.bare_word == Some(i)) {
            Some(word) => Scalar::Constant(Value::Str(word.to_string())),
            None => Scalar::prepare_computed(a, cols, computed),
        })
        .collect();
    Some(Scalar::Call { builtin, run, args })
}

impl Run<'_> {
    /// An operand's value: a column or a constant read where it lies (most operands of
    /// arithmetic and comparisons, whose common cases need no copy:
    /// [`scalar::quick_binary`]), anything else evaluated.
    pub(crate) fn operand<'v>(
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

    /// A prepared expression's value for `env`'s row as a reference: a column's or a
    /// constant's where it lies ([`Scalar::in_place`]), anything else evaluated into
    /// `held`. For per-row readers of an operand or a probe key that need no copy.
    #[inline]
    pub(crate) fn value_in<'v>(
        &mut self,
        s: &'v Scalar<'_>,
        env: &'v Env<'_>,
        held: &'v mut Option<Value>,
    ) -> Result<&'v Value, SqlError> {
        Ok(match s.in_place(env) {
            Some(v) => v,
            None => held.insert(self.eval_prepared(s, env)?),
        })
    }

    /// The value of a prepared expression for `env`'s row.
    pub(crate) fn eval_prepared(
        &mut self,
        s: &Scalar<'_>,
        env: &Env<'_>,
    ) -> Result<Value, SqlError> {
        match s {
            // Matched, not `cloned().unwrap_or(..)`: that built the value in an Option on
            // the stack in pieces and read it back whole, a stall on every row.
            Scalar::Column(i) => Ok(match env.row.get(*i) {
                Some(v) => v.clone(),
                None => Value::Null,
            }),
            Scalar::Constant(v) => Ok(v.clone()),
            Scalar::Binary { op, left, right } => {
                // Operands as references, not `Cow`s (`Run::operand`): a `Cow` returned
                // through memory was copied in pieces and read back whole, a stall at every
                // operator of every row (`l_extendedprice * (1 - l_discount)`).
                let (mut held_a, mut held_b) = (None, None);
                let a = self.value_in(left, env, &mut held_a)?;
                let b = self.value_in(right, env, &mut held_b)?;
                if let Some(v) = scalar::quick_binary(*op, a, b) {
                    return Ok(v);
                }
                // The general path takes its operands by value: an evaluated one is moved.
                let leaf = |s: &Scalar<'_>| s.in_place(env).is_some();
                let a = if leaf(left) { a.clone() } else { held_a.take().unwrap_or(Value::Null) };
                let b = if leaf(right) { b.clone() } else { held_b.take().unwrap_or(Value::Null) };
                scalar::binary(*op, a, b)
            }
            Scalar::Unary { op, operand } => {
                let v = self.eval_prepared(operand, env)?;
                scalar::unary(*op, v)
            }
            Scalar::Convert { expr, ty, style, is_try, source } => {
                if let Some(v) = s.widened_column(env.row) {
                    return Ok(v);
                }
                let v = self.eval_prepared(expr, env)?;
                let style = match style {
                    Some(s) => {
                        match scalar::convert(self.eval_prepared(s, env)?, SqlType::Int, None)? {
                            Value::Int(i) => Some(i),
                            _ => None,
                        }
                    }
                    None => None,
                };
                let from = self.fractional_type(source, &v, env);
                if *is_try {
                    scalar::try_convert_from(v, from, *ty, style)
                } else {
                    scalar::convert_from(v, from, *ty, style).or_else(conversion_overflow)
                }
            }
            Scalar::Call { builtin, run, args } => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(self.eval_prepared(a, env)?);
                }
                builtin.apply(*run, values)
            }
            Scalar::Case(c) => self.eval_case(c, env),
            Scalar::Iif(iif) => {
                let (condition, then, otherwise) = &**iif;
                let hit = self.eval_condition(condition, env)? == Some(true);
                self.eval_prepared(if hit { then } else { otherwise }, env)
            }
            Scalar::Expr(e) => self.eval(e, env),
        }
    }

    /// A prepared CASE's value: the first branch that holds gives it, else ELSE (or NULL);
    /// a simple CASE compares its operand with each value as the interpreter does, by
    /// [`scalar::compare`], a NULL side by `ANSI_NULLS` (`Run::null_comparison`).
    fn eval_case(&mut self, c: &Case<'_>, env: &Env<'_>) -> Result<Value, SqlError> {
        let mut held = None;
        let operand = match &c.operand {
            Some((o, e)) => Some((self.value_in(o, env, &mut held)?, *e)),
            None => None,
        };
        for (when, result) in &c.branches {
            let hit = match (when, operand) {
                (When::Value(x, written), Some((v, operand))) => {
                    let mut held_x = None;
                    let x = self.value_in(x, env, &mut held_x)?;
                    match scalar::compare(v, x)? {
                        Some(o) => o == Ordering::Equal,
                        None => {
                            let sides = ((operand, v), (*written, x));
                            self.null_comparison(BinaryOp::Eq, sides.0, sides.1) == Some(true)
                        }
                    }
                }
                (When::Condition(condition), _) => {
                    self.eval_condition(condition, env)? == Some(true)
                }
                // A value WHEN is prepared only with an operand.
                (When::Value(..), None) => false,
            };
            if hit {
                return self.eval_prepared(result, env);
            }
        }
        match &c.otherwise {
            Some(x) => self.eval_prepared(x, env),
            None => Ok(Value::Null),
        }
    }
}

/// A SELECT block's output columns prepared once for all its rows: each a copy of a source
/// column (`*`) or a prepared expression.
pub(crate) struct Projection<'a> {
    items: Vec<Item<'a>>,
}

enum Item<'a> {
    Star(usize),
    Value(Scalar<'a>),
    Null,
}

impl<'a> Projection<'a> {
    /// The select list of `exprs` and `stars` (as `query::SelectList` holds them) over rows
    /// of `cols`, whose `computed` columns hold aggregate and window values.
    pub(crate) fn new(
        exprs: &[Option<&'a Expr>],
        stars: &[Option<usize>],
        cols: &[Col],
        computed: &[(usize, usize)],
    ) -> Projection<'a> {
        let items = exprs
            .iter()
            .zip(stars)
            .map(|(e, star)| match (e, star) {
                (Some(e), _) => Item::Value(Scalar::prepare_computed(e, cols, computed)),
                (None, Some(i)) => Item::Star(*i),
                (None, None) => Item::Null,
            })
            .collect();
        Projection { items }
    }
}

impl Run<'_> {
    /// The output row of `projection` for the row of `env` (what `Run::project` gives).
    pub(crate) fn project_prepared(
        &mut self,
        projection: &Projection<'_>,
        env: &Env<'_>,
    ) -> Result<Vec<Value>, SqlError> {
        // Every NEXT VALUE FOR of one sequence in one row gets the same value, as in SQL
        // Server; the row's values are forgotten when it is done, error or not.
        let saved = self.row_sequences.replace(Vec::new());
        let projected = (|| {
            let mut out = Vec::with_capacity(projection.items.len());
            for item in &projection.items {
                out.push(match item {
                    Item::Value(s) => self.eval_prepared(s, env)?,
                    Item::Star(i) => env.row[*i].clone(),
                    Item::Null => Value::Null,
                });
            }
            Ok::<_, SqlError>(out)
        })();
        self.row_sequences = saved;
        projected
    }
}
