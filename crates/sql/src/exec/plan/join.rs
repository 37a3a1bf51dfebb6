//! The FROM clause: which sources are read how, in which order, joined by which algorithm.
//!
//! # The plan
//!
//! [`Run::plan_from`] flattens the comma list and every `[INNER] JOIN` and `CROSS JOIN` in
//! it into *leaves* (tables, views, derived tables, functions, outer joins, APPLYs) and a
//! pool of *conjuncts*: the `AND`ed parts of the WHERE clause and of the inner joins' ON
//! conditions. Each conjunct is tagged with the leaves its columns belong to, so it is
//! applied as soon as those leaves are joined, and never to a row it could not see. A
//! conjunct the planner cannot place (it holds a subquery, or a name it cannot resolve) is
//! left to the end.
//!
//! The leaves are then joined one at a time, greedily, as SQLite's and PostgreSQL's planners
//! do for large joins: first the leaf that yields the fewest rows by itself, then, as long as
//! leaves remain, the cheapest next step among
//!
//! * **index nested loops**: a table whose index a conjunct can seek with the values of the
//!   rows joined so far (`o.customer_id = c.id`) is sought once per joined row;
//! * **hash join**: a leaf joined by an equality between the two sides is read once, hashed
//!   on its side of the equalities, and probed with each joined row;
//! * **merge join**: the rows joined so far, in the order of an integer key, walked by a
//!   read of the leaf in the order of its clustered key, which that key is joined to
//!   (`merge.rs`);
//! * **nested loops**: anything else, the conjuncts checked on each pair.
//!
//! A leaf connected to the joined ones by no conjunct comes last (a cross product). Costs are
//! guesses (`access`), except that the rows joined so far are counted, not guessed: each
//! step is chosen after the previous one ran. The joined row keeps the FROM clause's column
//! order whatever the join order, since `SELECT *` shows them in that order.
//!
//! Outer joins stay where they are written; each is one leaf, computed by
//! [`Run::outer_join`] with the same algorithms (the preserved side's unmatched rows are
//! extended with NULLs), unless the block's conditions reject every row it would extend:
//! it is then flattened as the inner join it is (`reduce.rs`).
//!
//! # The contract with the caller
//!
//! [`Run::plan_from`] returns every row of the FROM clause that satisfies the conjuncts it
//! placed, and says whether it placed every conjunct of the WHERE clause; if not, the caller
//! applies the WHERE clause to the rows (as it always did before there was a planner).

use std::sync::Arc;

use walden_engine::types::{SqlType, Value};

use crate::ast::{Expr, JoinKind, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::grant::MemoryGrant;
use crate::exec::execute::query::{Relation, Rows, TableRef};
use crate::exec::plan::access::{AccessPath, RowSink, TableStats};
use crate::exec::session::Run;
use crate::exec::SqlError;

pub(crate) use correlated::GroupedSubquery;
pub(crate) use hash_table::integer_key;
use hash_table::HashMatch;
pub(crate) use leaf::clone_ref;
use leaf::{clear_locators, kept_columns, locator_positions, reading, table_leaf, Narrowed};
pub(crate) use place::conjuncts;
use place::stable;
pub(crate) use reduce::exposed_names;
use reduce::Reduced;
use steps::{equi_keys, finish_step, is_key_of, restore_row};
pub(crate) use stream::{joins, Destination};

mod correlated;
mod equivalence;
mod explain;
mod hash_table;
mod leaf;
mod merge;
mod order;
mod outer;
mod pipeline;
mod place;
mod probe;
mod reduce;
mod semi;
mod sought;
mod steps;
mod stream;
mod windowed;

pub(crate) use outer::null_extended;

/// More leaves than this in one FROM clause are joined in the order written.
const MAX_LEAVES: usize = 64;

/// The fraction of rows a conjunct that is not a search argument is guessed to keep.
const FILTER_SELECTIVITY: f64 = 0.3;

/// One source of the flattened FROM clause.
struct Leaf {
    /// The columns of the leaf's values in a joined row.
    cols: Vec<Col>,
    input: Input,
    /// A table's sampled statistics, when the plan has a choice to make with them.
    stats: Option<Arc<TableStats>>,
    /// A table leaf whose joined rows carry only some of its columns ([`Flat::narrow`]).
    narrow: Option<Narrow>,
}

/// How a table leaf's rows, as its reads give them, are cut to the values a joined row
/// carries: a join of a SELECT copies every value of the rows joined so far into each
/// pair, so a value nothing reads (a column the block never names, the row locator) is
/// dropped as the leaf's row comes in rather than copied at every step after it.
struct Narrow {
    /// Every column of the table and its row locator, in the order its reads give them:
    /// what access paths, seeks and a read's own filters are planned with (their column
    /// positions are the table's).
    read_cols: Vec<Col>,
    /// The positions among `read_cols` of the leaf's `cols`, ascending.
    keep: Vec<usize>,
}

impl Leaf {
    /// The columns of the rows the leaf's reads give: the table's, for a narrowed leaf.
    fn read_cols(&self) -> &[Col] {
        self.narrow.as_ref().map_or(&self.cols, |n| &n.read_cols)
    }
}

/// What a join step does to each row of its leaf, as read, before pairing it.
enum Shape {
    /// Nothing: the row is the leaf's part of the joined row as it is.
    Whole,
    /// The row locators at these positions are set to NULL (see
    /// [`Flat::locators_unread`]).
    Locators(Vec<usize>),
    /// Only the values at these positions, ascending, are kept ([`Narrow`]).
    Keep(Vec<usize>),
}

impl Shape {
    fn apply(&self, row: &mut Vec<Value>) {
        match self {
            Shape::Whole => {}
            Shape::Locators(at) => clear_locators(row, at),
            Shape::Keep(keep) => {
                // In place: `keep` ascends, so the value moved to `j` comes from at or after
                // it, and what it displaces is no kept value still to move.
                for (j, &i) in keep.iter().enumerate() {
                    if i != j && i < row.len() {
                        row.swap(j, i);
                    }
                }
                row.truncate(keep.len());
            }
        }
    }
}

/// A leaf's rows: a table read by the path the plan chooses, or rows computed up front.
enum Input {
    Table(TableRef),
    Rows(Vec<Vec<Value>>),
    /// Rows a plan that is only being explained would compute up front: their estimate.
    Estimated(f64),
}

/// A conjunct of the WHERE clause or of an inner join's ON condition.
struct Conjunct<'e> {
    expr: &'e Expr,
    /// The leaves its columns belong to, as bits; None if it cannot be placed.
    leaves: Option<u64>,
    /// From an ON condition: the caller does not apply it, so the plan must.
    from_on: bool,
    /// Run as a semi- or anti-join (`semi`), not evaluated row by row.
    semi: bool,
    applied: bool,
}

/// The leaves and conjuncts of a FROM clause.
#[derive(Default)]
struct Flat<'e> {
    leaves: Vec<Leaf>,
    conjuncts: Vec<Conjunct<'e>>,
    /// The values of the statement constants (`bind/constants.rs`) that its conjuncts
    /// compare columns with, by the address of their expression: what the planner's
    /// estimates read a histogram with, where a driver's statement has `@P0` rather than a
    /// literal. Evaluated once by `place`, only where a leaf has statistics.
    constants: Vec<(usize, Value)>,
    /// Each inner join's ON condition with the leaves of its operands, the only ones it may
    /// name (besides an enclosing query's): see [`Flat::unbound_name`].
    on_scopes: Vec<(std::ops::Range<usize>, &'e Expr)>,
}

impl Flat<'_> {
    /// The value `place` evaluated for the statement constant `e`, if any.
    fn constant(&self, e: &Expr) -> Option<Value> {
        let key = e as *const Expr as usize;
        self.constants.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone())
    }

    /// Whether the block is a SELECT's: a table leaf reads only its demand's columns, and
    /// only a SELECT block has a demand. Nothing reads its rows' locators then (see
    /// [`kept_columns`]), so the join steps set them to NULL as rows come in, rather than
    /// copy a locator (an allocation) into every joined row. A SELECT whose tables are all
    /// read whole keeps them, which costs only the copies.
    fn locators_unread(&self) -> bool {
        self.leaves.iter().any(|l| {
            l.narrow.is_some() || matches!(&l.input, Input::Table(t) if t.wanted.is_some())
        })
    }

    /// Cuts each table leaf's columns to those the block reads, for a SELECT block whose
    /// references are all by a name in its demand (`demand.rs`): its table leaves decode
    /// only those columns, and now its joined rows carry only those. No reference can
    /// resolve to a column left out, or be made ambiguous by one, since every name a
    /// reference uses keeps every column of that name; nothing reads a SELECT's row
    /// locators. A single leaf keeps its rows whole: nothing copies them, and the plan
    /// cache and the semi-join's seek read them as the table gives them. A leaf of rows
    /// computed before the join (a system view, a derived table, a CTE) is cut once, in
    /// place, by the same rule: a numbers-table script's `FROM sys.all_columns c1 CROSS
    /// JOIN sys.all_columns c2` would otherwise copy both views' 22 columns into each of
    /// its million pairs.
    fn narrow(&mut self, demand: &Demand) {
        if self.leaves.len() < 2 {
            return;
        }
        for leaf in &mut self.leaves {
            if let Input::Rows(rows) = &mut leaf.input {
                let keep: Vec<usize> = (0..leaf.cols.len())
                    .filter(|&i| leaf.cols[i].hidden || demand.reads(&leaf.cols[i].name))
                    .collect();
                if keep.len() < leaf.cols.len() {
                    leaf.cols = keep.iter().map(|&i| leaf.cols[i].clone()).collect();
                    for row in rows.iter_mut() {
                        let values =
                            keep.iter().map(|&i| std::mem::replace(&mut row[i], Value::Null));
                        *row = values.collect();
                    }
                }
                continue;
            }
            let Input::Table(t) = &leaf.input else { continue };
            let read = |i: usize| t.wanted.as_deref().is_none_or(|w| w.get(i) == Some(&true));
            let keep: Vec<usize> =
                (0..leaf.cols.len()).filter(|&i| !leaf.cols[i].hidden && read(i)).collect();
            let cols = keep.iter().map(|&i| leaf.cols[i].clone()).collect();
            let read_cols = std::mem::replace(&mut leaf.cols, cols);
            leaf.narrow = Some(Narrow { read_cols, keep });
        }
    }

    /// How each row of leaf `leaf`, as read, becomes its part of a joined row.
    fn shape(&self, leaf: usize) -> Shape {
        let l = &self.leaves[leaf];
        match &l.narrow {
            Some(n) => Shape::Keep(n.keep.clone()),
            None if self.locators_unread() => Shape::Locators(locator_positions(&l.cols)),
            None => Shape::Whole,
        }
    }
}

/// The rows a join step has produced, and when it stops.
struct JoinOutput<'f> {
    rows: Vec<Vec<Value>>,
    /// Where the rows go instead of `rows`, for the last step of a plan that allows it.
    forward: Option<Forward<'f>>,
    /// Stop at this many rows.
    goal: usize,
    /// Values per row.
    width: usize,
    /// The memory the rows hold: they cannot be spilled, so past the workspace's room the
    /// statement fails with error 701 rather than take the server's memory (a cross product
    /// the conjuncts do not narrow). Made with the first rows to hold.
    grant: Option<MemoryGrant>,
    /// The steps after this one, streamed, once it has held too many rows
    /// (`pipeline.rs`): every row goes through them instead.
    pipe: Option<Box<pipeline::Pipeline<'f>>>,
    /// The steps after this one may stream: past the workspace, the rows wait for them
    /// (`over`) instead of failing the statement at once.
    may_stream: bool,
    /// The workspace's refusal of the rows held, when the steps after may still stream.
    over: Option<SqlError>,
}

/// Output rows counted against the grant at a time.
const OUTPUT_ROWS_PER_CHECK: usize = 4096;

/// What [`Run::emit_each`] did with one left row.
struct Emitted {
    /// The output holds all it wants.
    full: bool,
    /// A pair passed the checks.
    matched: bool,
    /// The left row, when no pair took it.
    left: Option<Vec<Value>>,
}

impl JoinOutput<'_> {
    /// Adds a joined row that passed the step's checks: to the sink when the step forwards
    /// its rows, else to those it holds.
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<(), SqlError> {
        if let Some(pipe) = &mut self.pipe {
            return pipe.push(run, row);
        }
        match &mut self.forward {
            Some(f) => {
                let row = match f.positions {
                    [] => row,
                    positions => restore_row(row, positions),
                };
                f.stopped = !f.sink.push(run, row)?;
            }
            None => {
                self.rows.push(row);
                if let Err(e) = self.check_memory(run) {
                    if !self.may_stream {
                        return Err(e);
                    }
                    self.over = Some(e);
                }
            }
        }
        Ok(())
    }

    fn full(&self) -> bool {
        self.rows.len() >= self.goal
            || self.forward.as_ref().is_some_and(|f| f.stopped)
            || self.pipe.as_ref().is_some_and(|p| p.stopped)
    }

    /// Holds the memory of each [`OUTPUT_ROWS_PER_CHECK`] more rows (their values at their
    /// in-memory size, without what strings hold elsewhere): error 701 past the workspace.
    fn check_memory(&mut self, run: &Run<'_>) -> Result<(), SqlError> {
        if self.rows.len().is_multiple_of(OUTPUT_ROWS_PER_CHECK) {
            let row = (self.width + 3) * std::mem::size_of::<Value>();
            let grant = self.grant.get_or_insert_with(|| run.memory_grant());
            grant.hold(OUTPUT_ROWS_PER_CHECK.saturating_mul(row))?;
        }
        Ok(())
    }
}

/// What a plain `TOP (n)` asks of a FROM clause: its first `rows` rows, in `order` (the
/// query's ORDER BY) if there is one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowGoal<'o> {
    pub(crate) rows: usize,
    pub(crate) order: &'o [crate::ast::OrderByItem],
}

/// A FROM clause flattened and its conjuncts placed, not yet read.
struct FromPlan<'p> {
    flat: Flat<'p>,
    semis: Vec<(usize, semi::SemiJoin<'p>)>,
}

/// Where [`Run::plan_from_into`] puts a FROM clause's rows: told their columns first,
/// then given them one at a time.
pub(crate) trait FromSink: RowSink {
    fn start(&mut self, run: &mut Run<'_>, cols: &[Col]) -> Result<(), SqlError>;
}

/// Passes on to `sink` the rows for which every predicate of `exprs` holds.
struct Filtered<'f, 'o> {
    cols: &'f [Col],
    exprs: &'f [&'f Expr],
    outer: Option<&'o Env<'o>>,
    sink: &'f mut dyn RowSink,
}

/// What [`Run::plan_from_feeding`] hands its caller: given a sink, gives it the FROM
/// clause's rows until it says stop.
pub(crate) type Feed<'f> = dyn FnMut(&mut Run<'_>, &mut dyn RowSink) -> Result<(), SqlError> + 'f;

impl RowSink for Filtered<'_, '_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        if self.exprs.is_empty() || run.all_hold(self.exprs, self.cols, &row, self.outer)? {
            return self.sink.push(run, row);
        }
        Ok(true)
    }
}

/// The last join step's rows going on at once rather than collected: each is put back in
/// the FROM clause's column order (`positions`, see [`restore_positions`]) and given to
/// `sink`.
struct Forward<'f> {
    positions: &'f [usize],
    sink: &'f mut dyn RowSink,
    /// The sink said stop.
    stopped: bool,
}

/// How the next leaf is joined.
enum Step<'e> {
    /// Sought by the path; the conjuncts its seek makes hold of every row it finds.
    IndexLoops(AccessPath<'e>, Vec<&'e Expr>),
    Hash(Vec<(&'e Expr, &'e Expr)>),
    /// Read in key order and merged with the rows joined so far, which ascend on the key.
    Merge(merge::MergeKey<'e>),
    Loops,
}

/// The type families within which T-SQL equality is equality of hash keys
/// ([`group_key`](crate::exec::execute::query::group_key)): numbers with numbers, text with text,
/// otherwise the same type.
pub(crate) fn family(ty: SqlType) -> u8 {
    match ty {
        SqlType::TinyInt
        | SqlType::SmallInt
        | SqlType::Int
        | SqlType::BigInt
        | SqlType::Bit
        | SqlType::Decimal { .. }
        | SqlType::Money => 1,
        SqlType::Char(_) | SqlType::VarChar(_) | SqlType::NChar(_) | SqlType::NVarChar(_) => 2,
        SqlType::Binary(_) | SqlType::VarBinary(_) => 3,
        SqlType::UniqueIdentifier => 4,
        SqlType::Date => 5,
        SqlType::DateTime | SqlType::DateTime2(_) => 6,
        _ => 0,
    }
}

impl Run<'_> {
    /// The rows of a FROM clause that satisfy the conjuncts the plan placed, and the
    /// conjuncts of `filter` (the WHERE clause) it could not place, which the caller applies
    /// to them (only those: a placed one, such as an anti-join, is not run again per row).
    /// See the module's documentation. With a `goal` (a TOP that nothing after FROM can
    /// filter), the plan stops once it has that many rows, if it placed every conjunct.
    pub(crate) fn plan_from<'e>(
        &mut self,
        sources: &'e [TableSource],
        filter: Option<&'e Expr>,
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
    ) -> Result<(Rows, Vec<&'e Expr>), SqlError> {
        self.plan_pushed(sources, filter, &[], outer, goal, None)
    }

    /// [`Run::plan_from`] for a SELECT block whose tables' columns it reads are `demand`'s
    /// (`demand.rs`): its table leaves decode only those.
    pub(crate) fn plan_from_reading<'e>(
        &mut self,
        sources: &'e [TableSource],
        filter: Option<&'e Expr>,
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
        demand: Option<&Demand>,
    ) -> Result<(Rows, Vec<&'e Expr>), SqlError> {
        self.plan_pushed(sources, filter, &[], outer, goal, demand)
    }

    /// [`Run::plan_from`], also applying those of the `pushed` conjuncts (from an enclosing
    /// WHERE clause) whose every column is one of these sources': the rows then still
    /// satisfy the enclosing clause, which its own plan applies again.
    fn plan_pushed<'e>(
        &mut self,
        sources: &'e [TableSource],
        filter: Option<&'e Expr>,
        pushed: &[&'e Expr],
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
        demand: Option<&Demand>,
    ) -> Result<(Rows, Vec<&'e Expr>), SqlError> {
        let mut implied = Vec::new();
        let (FromPlan { mut flat, mut semis }, residual) =
            self.prepare_from(sources, filter, pushed, outer, demand, &mut implied)?;
        let placed = residual.is_empty() && flat.conjuncts.iter().all(|c| c.leaves.is_some());
        // An ordered goal holds only for one source read in that order (`leaf_rows`).
        let goal = goal.filter(|g| placed && (g.order.is_empty() || flat.leaves.len() == 1));
        let rows = self.join_leaves(&mut flat, &mut semis, outer, goal, None)?;
        Ok((rows, residual))
    }

    /// [`Run::plan_from_reading`] for the block `sel` (with its query's `order_by`, and
    /// no row goal), keeping the plan in the session's plan cache (`exec::plan_cache`) when
    /// it is one the cache holds: one table leaf, and every WHERE conjunct placed on it or
    /// on no leaf. The caller has found no valid kept plan.
    pub(crate) fn plan_from_caching<'e>(
        &mut self,
        sel: &'e crate::ast::Select,
        order_by: &'e [crate::ast::OrderByItem],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
    ) -> Result<(Rows, Vec<&'e Expr>), SqlError> {
        // Read before the names are resolved: a change after this makes the plan stale at
        // once, however the resolution raced with it.
        let versions = (self.s.db.schema_version(), self.s.instance.tempdb().schema_version());
        let filter = sel.where_clause.as_ref();
        let mut implied = Vec::new();
        let (FromPlan { mut flat, mut semis }, residual) =
            self.prepare_from(&sel.from, filter, &[], outer, demand, &mut implied)?;
        let mut parts = Vec::new();
        if let Some(w) = filter {
            conjuncts(w, &mut parts);
        }
        // Nothing an OR implied or an ON condition added, nothing left to the caller.
        let only_where = flat.conjuncts.len() == parts.len() && residual.is_empty();
        let kept = self.block_plan(sel, order_by, &flat, versions).filter(|_| only_where);
        if let (Some(plan), [Leaf { input: Input::Table(t), .. }]) = (kept, flat.leaves.as_slice())
        {
            let plan = Arc::new(plan);
            self.s.plans.insert(sel, Arc::clone(&plan));
            let rows = self.run_block_plan(&plan, &clone_ref(t), &parts, outer)?;
            return Ok((rows, Vec::new()));
        }
        let rows = self.join_leaves(&mut flat, &mut semis, outer, None, None)?;
        Ok((rows, residual))
    }

    /// The plan the cache can keep for `sel`, whose FROM clause is flattened into `flat`
    /// (one leaf, still holding its input), if it is of the kind the cache holds: a table
    /// named by its name, every WHERE conjunct on it or on no leaf (see
    /// [`Run::plan_from_caching`]). `versions` are the schema versions of the session's
    /// database and of tempdb read before its names were resolved.
    fn block_plan(
        &self,
        sel: &crate::ast::Select,
        order_by: &[crate::ast::OrderByItem],
        flat: &Flat<'_>,
        versions: (u64, u64),
    ) -> Option<crate::exec::plan::plan_cache::BlockPlan> {
        let [TableSource::Table { name, .. }] = sel.from.as_slice() else { return None };
        let [leaf] = flat.leaves.as_slice() else { return None };
        let Input::Table(t) = &leaf.input else { return None };
        let mut parts = Vec::new();
        if let Some(w) = &sel.where_clause {
            conjuncts(w, &mut parts);
        }
        let leaves: Vec<u64> = parts.iter().map(|p| flat.leaves_of(p)).collect::<Option<_>>()?;
        if leaves.iter().any(|&m| m > 1) {
            return None;
        }
        let user = &name.name.value;
        // A trigger's `inserted` and `deleted` name other rows at each firing.
        if crate::exec::module::trigger::PSEUDO_TABLES.iter().any(|p| p.eq_ignore_ascii_case(user))
        {
            return None;
        }
        let temp = if user.starts_with('#') {
            let lower = user.to_ascii_lowercase();
            let internal = self.s.temp_tables.get(&lower)?.clone();
            Some((lower, internal))
        } else {
            None
        };
        let version = if temp.is_some() {
            versions.1
        } else if name.database.is_none() && Arc::ptr_eq(&t.db, &self.s.db) {
            versions.0
        } else {
            return None;
        };
        let split =
            |on: u64| -> Vec<usize> { (0..parts.len()).filter(|&i| leaves[i] == on).collect() };
        let (constant, own) = (split(0), split(1));
        let own_exprs: Vec<&Expr> = own.iter().map(|&i| parts[i]).collect();
        let chosen = self.path(flat, t, &own_exprs, 0, 0);
        let exact = chosen.exact_seek_conjuncts(&t.def, &own_exprs);
        let checks = (0..own.len()).filter(|i| !exact.contains(i)).collect();
        let path = chosen.shape(&own_exprs)?;
        Some(crate::exec::plan::plan_cache::BlockPlan::new(
            crate::exec::plan::plan_cache::Decided {
                sel,
                order_by,
                version,
                temp,
                table: clone_ref(t),
                cols: leaf.cols.clone(),
                constant,
                own,
                checks,
                path,
            },
        ))
    }

    /// The rows of a FROM clause and its WHERE clause `filter` (as [`Run::plan_from`]),
    /// each given to `sink` as the last join step makes it where the plan allows (see
    /// `join_leaves`), so that they are not all held; the columns of the rows are `cols`,
    /// those of the sources in the FROM clause's order, as `sink` is told before any row.
    pub(crate) fn plan_from_into(
        &mut self,
        sources: &[TableSource],
        filter: Option<&Expr>,
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        sink: &mut dyn FromSink,
    ) -> Result<(), SqlError> {
        self.plan_from_feeding(sources, filter, outer, demand, None, |run, cols, feed| {
            sink.start(run, cols)?;
            feed(run, sink)
        })
    }

    /// [`Run::plan_from_into`] for a caller that makes its sink from the rows' columns:
    /// `consume` is given them (those of the sources in the FROM clause's order) once the
    /// FROM clause is planned, and a feed that gives a sink the rows, as the last join step
    /// makes them where the plan allows. With a `goal` (a plain TOP), the plan stops once it
    /// has that many rows where [`Run::plan_from`]'s would.
    pub(crate) fn plan_from_feeding<T>(
        &mut self,
        sources: &[TableSource],
        filter: Option<&Expr>,
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        goal: Option<RowGoal<'_>>,
        consume: impl FnOnce(&mut Run<'_>, &[Col], &mut Feed<'_>) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        let mut implied = Vec::new();
        if let Some((join, parts)) =
            self.one_outer_join(sources, filter, outer, demand, &mut implied)?
        {
            return self.feed_outer_join(join, &parts, outer, consume);
        }
        let (FromPlan { mut flat, mut semis }, residual) =
            self.prepare_from(sources, filter, &[], outer, demand, &mut implied)?;
        let placed = residual.is_empty() && flat.conjuncts.iter().all(|c| c.leaves.is_some());
        // As in `plan_pushed`: an ordered goal holds only for one source read in that order.
        let goal = goal.filter(|g| placed && (g.order.is_empty() || flat.leaves.len() == 1));
        let cols: Vec<Col> = flat.leaves.iter().flat_map(|l| l.cols.iter().cloned()).collect();
        let mut feed = |run: &mut Run<'_>, sink: &mut dyn RowSink| -> Result<(), SqlError> {
            let mut filtered = Filtered { cols: &cols, exprs: &residual, outer, sink };
            let rest = run.join_leaves(&mut flat, &mut semis, outer, goal, Some(&mut filtered))?;
            for (n, row) in rest.rows.into_iter().enumerate() {
                run.row_interruption_point(n)?;
                if !filtered.push(run, row)? {
                    break;
                }
            }
            Ok(())
        };
        consume(self, &cols, &mut feed)
    }

    /// The FROM clause `sources` planned as the one outer join it is, and the conjuncts of
    /// its WHERE clause `filter`, where that clause neither makes the join inner
    /// (`reduce.rs`) nor has a subquery (which a flattened plan runs as a semi-join): None
    /// otherwise. Its pairs can then be given to a sink as they are made, where as a leaf
    /// of [`Run::prepare_from`] they are held.
    #[allow(clippy::type_complexity)]
    fn one_outer_join<'e: 'p, 'p>(
        &mut self,
        sources: &'e [TableSource],
        filter: Option<&'e Expr>,
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        implied: &'p mut Vec<Expr>,
    ) -> Result<Option<(outer::OuterJoin<'p>, Vec<&'e Expr>)>, SqlError> {
        let [src] = sources else { return Ok(None) };
        let Some(j) = outer::outer_join_of(src) else { return Ok(None) };
        let mut parts = Vec::new();
        if let Some(w) = filter {
            if crate::exec::execute::query::has_subquery(w) {
                return Ok(None);
            }
            conjuncts(w, &mut parts);
        }
        if self.reduced_outer_joins(sources, &parts, &[]).inner(j) {
            return Ok(None);
        }
        let (left, right, on) = (&j.left, &j.right, j.on.as_ref());
        let join = self.plan_outer_join(left, right, j.kind, on, &parts, outer, demand, implied)?;
        Ok(Some((join, parts)))
    }

    /// [`Run::plan_from_feeding`]'s `consume` given the pairs of `join` as they are made,
    /// those every conjunct of `parts` accepts.
    fn feed_outer_join<T>(
        &mut self,
        join: outer::OuterJoin<'_>,
        parts: &[&Expr],
        outer: Option<&Env<'_>>,
        consume: impl FnOnce(&mut Run<'_>, &[Col], &mut Feed<'_>) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        let cols = join.cols.clone();
        let mut join = Some(join);
        let mut feed = |run: &mut Run<'_>, sink: &mut dyn RowSink| -> Result<(), SqlError> {
            let Some(join) = join.take() else { return Ok(()) };
            let mut filtered = Filtered { cols: &cols, exprs: parts, outer, sink };
            run.run_outer_join(join, outer, Some(&mut filtered))?;
            Ok(())
        };
        consume(self, &cols, &mut feed)
    }

    /// Flattens a FROM clause and places its conjuncts (and those of `filter`, its WHERE
    /// clause, and of `pushed`): nothing is read but what must be computed up front. Also
    /// the WHERE conjuncts it could not place, which the plan does not apply.
    #[allow(clippy::type_complexity)]
    fn prepare_from<'e: 'p, 'p>(
        &mut self,
        sources: &'e [TableSource],
        filter: Option<&'e Expr>,
        pushed: &[&'e Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        implied: &'p mut Vec<Expr>,
    ) -> Result<(FromPlan<'p>, Vec<&'e Expr>), SqlError> {
        let mut flat = Flat::default();
        let mut on = Vec::new();
        let mut parts = Vec::new();
        if let Some(w) = filter {
            conjuncts(w, &mut parts);
        }
        // An outer join among the sources may apply these to its preserved side.
        let mut passed: Vec<&Expr> = parts.clone();
        passed.extend_from_slice(pushed);
        let reduced = self.reduced_outer_joins(sources, &parts, pushed);
        for src in sources {
            self.flatten(src, &mut flat, &mut on, &passed, outer, demand, &reduced)?;
        }
        if let Some(refused) = flat.unbound_name(&parts, outer) {
            return Err(refused);
        }
        if let Some(demand) = demand {
            flat.narrow(demand);
        }
        flat.refuse_full_text(&parts, &on)?;
        let written = parts.clone();
        // Kept by the caller: the placed conjuncts borrow them for as long as the plan lives.
        implied.extend(flat.implied(&parts, &on));
        let implied: &'p Vec<Expr> = implied;
        let (semis, unplaced) = self.place(&mut flat, parts, implied, on, pushed, outer, true);
        let residual: Vec<&'e Expr> = unplaced.into_iter().map(|i| written[i]).collect();
        Ok((FromPlan { flat, semis }, residual))
    }

    /// Adds `src`'s leaves to `flat`, and the conjuncts of its inner joins' ON conditions to
    /// `on`, each checked to name only the sources written before it. A table leaf decodes
    /// only the columns of `demand`, the block's. The outer joins of `reduced` are flattened
    /// as inner joins (`reduce.rs`), the columns of the side they would have NULL-extended
    /// described as nullable all the same.
    #[allow(clippy::too_many_arguments)]
    fn flatten<'e>(
        &mut self,
        src: &'e TableSource,
        flat: &mut Flat<'e>,
        on: &mut Vec<&'e Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
        reduced: &Reduced<'_>,
    ) -> Result<(), SqlError> {
        if let TableSource::Join(j) = src {
            let inner = matches!(j.kind, JoinKind::Inner | JoinKind::Cross);
            if inner || reduced.inner(j) {
                let first = flat.leaves.len();
                self.flatten(&j.left, flat, on, pushed, outer, demand, reduced)?;
                let middle = flat.leaves.len();
                self.flatten(&j.right, flat, on, pushed, outer, demand, reduced)?;
                let extended = match j.kind {
                    JoinKind::LeftOuter => middle..flat.leaves.len(),
                    JoinKind::RightOuter => first..middle,
                    _ => first..first,
                };
                for leaf in &mut flat.leaves[extended] {
                    leaf.cols.iter_mut().for_each(|c| c.nullable = true);
                }
                if let Some(cond) = &j.on {
                    conjuncts(cond, on);
                    flat.on_scopes.push((first..flat.leaves.len(), cond));
                }
                return Ok(());
            }
        }
        let leaf = match src {
            TableSource::Table { name, alias, hints } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                match self.named_rowset(name, &qual)? {
                    Some(rows) => Leaf {
                        cols: rows.cols,
                        input: Input::Rows(rows.rows),
                        stats: None,
                        narrow: None,
                    },
                    None => match self.resolve_relation(name, &qual)? {
                        Relation::Table(t) => {
                            self.apply_table_hints(&t, hints, false)?;
                            table_leaf(reading(t, demand))
                        }
                        Relation::View(db, view) => {
                            let rows = self.view_rows(db, &view, &qual)?;
                            Leaf {
                                cols: rows.cols,
                                input: Input::Rows(rows.rows),
                                stats: None,
                                narrow: None,
                            }
                        }
                    },
                }
            }
            TableSource::Variable { name, alias } => {
                let qual = alias.as_ref().map_or(name.clone(), |a| a.value.clone());
                table_leaf(reading(self.resolve_table_variable(name, &qual)?, demand))
            }
            TableSource::Join(j)
                if j.kind != JoinKind::CrossApply && j.kind != JoinKind::OuterApply =>
            {
                let rows = self.outer_join(
                    &j.left,
                    &j.right,
                    j.kind,
                    j.on.as_ref(),
                    pushed,
                    outer,
                    demand,
                )?;
                Leaf { cols: rows.cols, input: Input::Rows(rows.rows), stats: None, narrow: None }
            }
            _ => {
                let rows = self.source(src, None, outer)?;
                Leaf { cols: rows.cols, input: Input::Rows(rows.rows), stats: None, narrow: None }
            }
        };
        flat.leaves.push(leaf);
        Ok(())
    }
}

/// The error for a leaf of an explained plan reaching the executor, which never runs one.
fn explained_only() -> SqlError {
    SqlError::new(50000, "Walden's executor was given a plan that is only explained.")
}

/// A subquery's one SELECT, when it is nothing more: no CTE, set operator, ORDER BY, OFFSET
/// or FOR JSON/XML around it.
fn lone_select(q: &crate::ast::Query) -> Option<&crate::ast::Select> {
    if !q.ctes.is_empty()
        || !q.order_by.is_empty()
        || q.offset.is_some()
        || q.for_json.is_some()
        || q.for_xml.is_some()
    {
        return None;
    }
    match &q.body {
        crate::ast::QueryBody::Select(sel) => Some(sel),
        _ => None,
    }
}
