//! Window functions: `f(...) OVER ([PARTITION BY ...] [ORDER BY ...] [ROWS | RANGE frame])`,
//! computed as PostgreSQL's WindowAgg computes them: sort, then walk the partitions.
//!
//! Each call becomes one hidden column of the rows it runs over. The calls are grouped into
//! *stages*, one per distinct sort order (their PARTITION BY keys, then their ORDER BY
//! keys); the rows go through the stages in sequence, each an external sort
//! (`external_sort.rs`, spilling sorted runs beyond its grant) whose output is walked in
//! order by a [`partition::Partitioner`], which fills in the stage's columns and hands each
//! finished row to the next stage's sort, or out. So the rows are never held whole by the
//! windows: a sort holds its grant's worth and spills the rest, and the walk holds only what
//! its calls need of the rows around the current one (see `partition.rs`): nothing for
//! ROW_NUMBER, RANK and DENSE_RANK, the peer group for a running aggregate by RANGE, n rows
//! for LAG or LEAD by n, and the whole partition for what depends on its size (NTILE,
//! PERCENT_RANK, CUME_DIST, the percentiles, frames to UNBOUNDED FOLLOWING). What it holds
//! is held from a grant: a single partition past the workspace fails with error 701.
//!
//! Rows come out in the last stage's order, as SQL Server's Sequence Project gives them;
//! a query that wants an order says ORDER BY.
//!
//! Within a partition, *peers* are the rows whose ORDER BY keys are equal, and a row's
//! *frame* is a range `lo..hi` of positions in the partition's order. Both ends only move
//! forward from one row to the next, so aggregates over frames that start at the
//! partition's first row are computed incrementally: a running total over n rows costs n
//! additions, not n².
//!
//! SQL Server's rules, enforced in `rules.rs`: ranking functions, `LAG`, `LEAD`,
//! `FIRST_VALUE` and `LAST_VALUE` need an ORDER BY (4112); ranking functions, `LAG` and
//! `LEAD` take no frame (10752); a frame needs an ORDER BY (10756); `RANGE` takes only
//! `UNBOUNDED` and `CURRENT ROW` (4194). With an ORDER BY and no frame, the frame is `RANGE
//! BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`; without an ORDER BY it is the whole
//! partition.

mod functions;
mod partition;
mod rules;

use walden_engine::types::{SqlType, Value};

use crate::ast::{Expr, ExprKind, FunctionArgs, Literal, WindowFrame};
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{label_in, Col, Env};
use crate::exec::execute::external_sort::ExternalSort;
use crate::exec::scalar::collation::{self, Collation};
use crate::exec::session::Run;
use crate::exec::SqlError;

pub(crate) use functions::{average, sum_seed};
use partition::Partitioner;
use rules::{classify, effective_frame, Agg, Kind};

/// Where finished rows go, one at a time: the next stage's sort, or the block.
pub(crate) type RowOut<'a> = dyn FnMut(&mut Run<'_>, Vec<Value>) -> Result<(), SqlError> + 'a;

/// A stage's sort as [`Stage::shape`] tells it apart.
type Shape = (Vec<(usize, bool)>, usize, bool);

/// One window call, ready to compute.
struct Call {
    kind: Kind,
    frame: WindowFrame,
    /// Where its value goes in the row.
    slot: usize,
    /// Where each of its arguments is among a row's evaluated arguments ([`Stage::args`]):
    /// the value (`1` for `COUNT(*)`, a percentile's WITHIN GROUP expression), LAG's and
    /// LEAD's offset (a percentile's fraction) and their default.
    value: Option<usize>,
    offset: Option<usize>,
    default: Option<usize>,
    /// LAG's and LEAD's offset when it is a constant, which bounds how far they look.
    fixed_offset: Option<u64>,
    /// The type the value has, which LAG's and LEAD's default is converted to.
    value_type: Option<SqlType>,
    /// The collation MIN and MAX of text compare by (None: the default), as the grouped
    /// aggregates do.
    collation: Option<&'static Collation>,
}

/// The calls that share one sort order.
struct Stage<'e> {
    /// The PARTITION BY keys, then the ORDER BY keys (text by its collation, a percentile's
    /// WITHIN GROUP value as it is).
    keys: Vec<(Scalar<'e>, Option<&'static Collation>)>,
    /// How many of `keys` partition.
    partition_keys: usize,
    /// Descending, per key.
    desc: Vec<bool>,
    /// Every call's arguments, evaluated once per row in this order.
    args: Vec<Scalar<'e>>,
    calls: Vec<Call>,
    /// What the sort is, to tell whether a later call shares it: per key, the source
    /// column it reads (an expression of anything else gets a stage of its own) and its
    /// direction; and whether the ORDER BY is a percentile's.
    shape: Option<Shape>,
}

impl Stage<'_> {
    /// The row's sort keys for this stage.
    fn keys_of(&self, run: &mut Run<'_>, env: &Env<'_>) -> Result<Vec<Value>, SqlError> {
        let mut keys = Vec::with_capacity(self.keys.len());
        for (s, c) in &self.keys {
            keys.push(collation::sort_value(run.eval_prepared(s, env)?, *c));
        }
        Ok(keys)
    }
}

/// The window calls of a SELECT block, grouped into stages by their sort order.
pub(crate) struct WindowPlan<'e> {
    stages: Vec<Stage<'e>>,
    /// Values per row once the calls' columns are added.
    width: usize,
}

impl WindowPlan<'_> {
    /// Values per row once the calls' columns are added.
    pub(crate) fn width(&self) -> usize {
        self.width
    }
}

/// The columns, computed values and enclosing query that a block's rows are evaluated in.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub(crate) cols: &'a [Col],
    pub(crate) computed: &'a [(usize, usize)],
    pub(crate) outer: Option<&'a Env<'a>>,
}

impl Scope<'_> {
    fn env<'r>(&'r self, row: &'r [Value]) -> Env<'r> {
        Env { cols: self.cols, row, outer: self.outer, computed: self.computed }
    }
}

/// The source column a prepared key reads, if it is one.
fn column_of(s: &Scalar<'_>) -> Option<usize> {
    match s {
        Scalar::Column(i) => Some(*i),
        _ => None,
    }
}

impl Run<'_> {
    /// The plan of `windows`, the window calls of a block whose rows have `cols`: each call
    /// gets a hidden column, added to `cols` and recorded in `computed` so that evaluating
    /// the call reads it. Every call is checked against SQL Server's rules before any row is
    /// read.
    pub(crate) fn window_plan<'e>(
        &self,
        cols: &mut Vec<Col>,
        computed: &mut Vec<(usize, usize)>,
        windows: &[&'e Expr],
    ) -> Result<WindowPlan<'e>, SqlError> {
        let mut stages: Vec<Stage<'e>> = Vec::new();
        for w in windows {
            let ExprKind::Function(f) = &w.kind else { continue };
            let Some(spec) = &f.over else { continue };
            let kind = classify(f, spec)?;
            let arg_exprs: &[Expr] = match &f.args {
                FunctionArgs::List { args, .. } => args,
                _ => &[],
            };
            let star = matches!(f.args, FunctionArgs::Star);
            // A percentile's rows are ordered by its WITHIN GROUP expression, which is also
            // the value it picks from; its argument (the fraction) waits in `offset`.
            let percentile = matches!(kind, Kind::PercentileCont | Kind::PercentileDisc);
            let mut keys = Vec::new();
            let mut desc = Vec::new();
            for e in &spec.partition_by {
                keys.push((
                    Scalar::prepare_computed(e, cols, computed),
                    label_in(e, cols)?.collation(),
                ));
                desc.push(false);
            }
            let order = if percentile { &f.within_group } else { &spec.order_by };
            for o in order {
                let c = if percentile { None } else { label_in(&o.expr, cols)?.collation() };
                keys.push((Scalar::prepare_computed(&o.expr, cols, computed), c));
                desc.push(o.descending);
            }
            let shape = keys
                .iter()
                .zip(&desc)
                .map(|((s, _), d)| column_of(s).map(|c| (c, *d)))
                .collect::<Option<Vec<_>>>()
                .map(|k| (k, spec.partition_by.len(), percentile));
            let at = match stages.iter().position(|s| shape.is_some() && s.shape == shape) {
                Some(at) => at,
                None => {
                    stages.push(Stage {
                        keys,
                        partition_keys: spec.partition_by.len(),
                        desc,
                        args: Vec::new(),
                        calls: Vec::new(),
                        shape,
                    });
                    stages.len() - 1
                }
            };
            let stage = &mut stages[at];
            let mut arg = |s: Scalar<'e>| {
                stage.args.push(s);
                Some(stage.args.len() - 1)
            };
            let prepare = |e: &'e Expr| Scalar::prepare_computed(e, cols, computed);
            let (value, offset, default) = if percentile {
                let by = f.within_group.first().map(|o| prepare(&o.expr));
                let fraction = arg_exprs.first().map_or(Scalar::Constant(Value::Null), prepare);
                (by.and_then(&mut arg), arg(fraction), None)
            } else {
                let value = if star {
                    arg(Scalar::Constant(Value::Int(1)))
                } else {
                    arg_exprs.first().map(prepare).and_then(&mut arg)
                };
                if matches!(kind, Kind::Lag | Kind::Lead) {
                    let offset =
                        arg_exprs.get(1).map_or(Scalar::Constant(Value::BigInt(1)), prepare);
                    let default = arg_exprs.get(2).map_or(Scalar::Constant(Value::Null), prepare);
                    (value, arg(offset), arg(default))
                } else {
                    (value, None, None)
                }
            };
            let fixed_offset = match (kind, arg_exprs.get(1).map(|e| &e.kind)) {
                (Kind::Lag | Kind::Lead, None) => Some(1),
                (Kind::Lag | Kind::Lead, Some(ExprKind::Literal(Literal::Integer(digits)))) => {
                    digits.parse().ok()
                }
                _ => None,
            };
            let collation = match arg_exprs.first() {
                Some(e) if !star && !percentile => label_in(e, cols)?.collation(),
                _ => None,
            };
            let value_type = arg_exprs.first().and_then(|e| self.static_type(e, cols));
            let slot = cols.len();
            stage.calls.push(Call {
                kind,
                frame: effective_frame(spec),
                slot,
                value,
                offset,
                default,
                fixed_offset,
                value_type,
                collation,
            });
            cols.push(Col::hidden("window", SqlType::BigInt));
            computed.push((*w as *const Expr as usize, slot));
        }
        Ok(WindowPlan { stages, width: cols.len() })
    }

    /// Computes the window calls of `windows` (ranking, distribution, offset,
    /// FIRST_VALUE/LAST_VALUE and aggregates over frames) over `rows` into extra hidden
    /// columns, one per call, recorded in `computed` so that evaluating the call reads its
    /// column. The rows come back in the last stage's order.
    pub(crate) fn windows(
        &mut self,
        cols: &mut Vec<Col>,
        rows: Vec<Vec<Value>>,
        computed: &mut Vec<(usize, usize)>,
        windows: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let plan = self.window_plan(cols, computed, windows)?;
        let scope = Scope { cols, computed, outer };
        let mut input = WindowInput::new(self, &plan);
        for (i, row) in rows.into_iter().enumerate() {
            self.row_interruption_point(i)?;
            input.push(self, &plan, &scope, row)?;
        }
        let mut out = Vec::new();
        input.finish(self, &plan, &scope, &mut |_, row| {
            out.push(row);
            Ok(())
        })?;
        Ok(out)
    }
}

/// The rows of a block going into its windows: the first stage's sort.
pub(crate) struct WindowInput {
    /// None when the block has no window call.
    sorter: Option<ExternalSort>,
}

impl WindowInput {
    pub(crate) fn new(run: &Run<'_>, plan: &WindowPlan<'_>) -> WindowInput {
        let sorter =
            plan.stages.first().map(|s| ExternalSort::new(run.memory_grant(), &s.desc, false));
        WindowInput { sorter }
    }

    /// Takes one row of the block (its own columns; the calls' are added here).
    pub(crate) fn push(
        &mut self,
        run: &mut Run<'_>,
        plan: &WindowPlan<'_>,
        scope: &Scope<'_>,
        mut row: Vec<Value>,
    ) -> Result<(), SqlError> {
        row.resize(plan.width, Value::Null);
        match (&mut self.sorter, plan.stages.first()) {
            (Some(sorter), Some(stage)) => {
                let keys = stage.keys_of(run, &scope.env(&row))?;
                sorter.push(run, keys, row)
            }
            _ => Ok(()),
        }
    }

    /// Runs the stages in sequence, each walking its sort's output into the next one's
    /// sort, the last into `each`.
    pub(crate) fn finish(
        self,
        run: &mut Run<'_>,
        plan: &WindowPlan<'_>,
        scope: &Scope<'_>,
        each: &mut RowOut<'_>,
    ) -> Result<(), SqlError> {
        let stages = &plan.stages;
        let Some(mut sorter) = self.sorter else { return Ok(()) };
        for (i, stage) in stages.iter().enumerate() {
            let next_stage = stages.get(i + 1);
            let mut next =
                next_stage.map(|s| ExternalSort::new(run.memory_grant(), &s.desc, false));
            let mut walk = Partitioner::new(stage, run.memory_grant());
            let mut emit = |run: &mut Run<'_>, row: Vec<Value>| match (&mut next, next_stage) {
                (Some(sorter), Some(s)) => {
                    let keys = s.keys_of(run, &scope.env(&row))?;
                    sorter.push(run, keys, row)
                }
                _ => each(run, row),
            };
            sorter.finish(run, |run, keys, row| walk.push(run, scope, keys, row, &mut emit))?;
            walk.finish(run, &mut emit)?;
            match next {
                Some(n) => sorter = n,
                None => break,
            }
        }
        Ok(())
    }
}
