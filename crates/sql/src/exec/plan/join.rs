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
//! * **nested loops**: anything else, the conjuncts checked on each pair.
//!
//! A leaf connected to the joined ones by no conjunct comes last (a cross product). Costs are
//! guesses (`access`), except that the rows joined so far are counted, not guessed: each
//! step is chosen after the previous one ran. The joined row keeps the FROM clause's column
//! order whatever the join order, since `SELECT *` shows them in that order.
//!
//! Outer joins stay where they are written; each is one leaf, computed by
//! [`Run::outer_join`] with the same algorithms (the preserved side's unmatched rows are
//! extended with NULLs).
//!
//! # The contract with the caller
//!
//! [`Run::plan_from`] returns every row of the FROM clause that satisfies the conjuncts it
//! placed, and says whether it placed every conjunct of the WHERE clause; if not, the caller
//! applies the WHERE clause to the rows (as it always did before there was a planner).

use std::sync::Arc;

use walden_engine::types::{SqlType, Value};

use crate::ast::{BinaryOp, Expr, ExprKind, Ident, JoinKind, TableSource};
use crate::exec::bind::demand::Demand;
use crate::exec::eval::{find_column, full_text_refusal, is_aggregate_call, Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::grant::MemoryGrant;
use crate::exec::execute::query::{table_cols, visit_children, Relation, Rows, TableRef, ROWID};
use crate::exec::plan::access::{self, AccessPath, RowFilter, RowSink, TableStats};
use crate::exec::scalar::registry::{self, Determinism};
use crate::exec::session::{Run, SeekSpare};
use crate::exec::SqlError;

pub(crate) use correlated::GroupedSubquery;
pub(crate) use hash_table::integer_key;
use hash_table::HashMatch;
use sought::{pair_into, SoughtPairs};

mod correlated;
mod equivalence;
mod explain;
mod hash_table;
mod order;
mod outer;
mod pipeline;
mod probe;
mod semi;
mod sought;
mod stream;

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
struct Flat<'e> {
    leaves: Vec<Leaf>,
    conjuncts: Vec<Conjunct<'e>>,
}

impl Flat<'_> {
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
    /// cache and the semi-join's seek read them as the table gives them.
    fn narrow(&mut self) {
        if self.leaves.len() < 2 {
            return;
        }
        for leaf in &mut self.leaves {
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
    sink: &'f mut dyn FromSink,
}

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

/// Whether an expression may be evaluated once for many rows of the leaf it probes: no
/// subquery, aggregate, window or value that changes from row to row by itself.
fn stable(e: &Expr) -> bool {
    let mut ok = stable_node(e);
    if ok {
        visit_children(e, &mut |c| ok &= stable(c));
    }
    ok
}

/// Whether `e` itself, apart from its operands, is [`stable`].
fn stable_node(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Subquery(_)
        | ExprKind::Exists(_)
        | ExprKind::InSubquery { .. }
        | ExprKind::Quantified { .. }
        | ExprKind::NextValueFor(_) => false,
        ExprKind::Function(f) => {
            f.over.is_none()
                && !is_aggregate_call(f)
                && registry::lookup(&f.name.name.value)
                    .is_none_or(|b| b.determinism != Determinism::PerCall)
        }
        _ => true,
    }
}

impl Flat<'_> {
    /// The leaves an expression's columns belong to; None if it cannot be placed (a
    /// subquery may read any leaf; an ambiguous name is for the caller to report). Names no
    /// leaf has belong to an enclosing query.
    fn leaves_of(&self, e: &Expr) -> Option<u64> {
        match &e.kind {
            ExprKind::Column(parts) => self.leaf_of(parts).map_or(Some(0), |l| l.map(|l| 1 << l)),
            // Each operand is checked by the recursion below: `stable` of the whole would
            // walk every subtree again at each level.
            _ if !stable_node(e) => None,
            _ => {
                let mut mask = Some(0u64);
                visit_children(e, &mut |c| {
                    mask = match (mask, self.leaves_of(c)) {
                        (Some(a), Some(b)) => Some(a | b),
                        _ => None,
                    }
                });
                mask
            }
        }
    }

    /// What the ORs among `parts` imply of single leaves: for `(n1.name = 'FRANCE' AND
    /// n2.name = 'GERMANY') OR (n1.name = 'GERMANY' AND n2.name = 'FRANCE')` (TPC-H Q7),
    /// `n1.name = 'FRANCE' OR n1.name = 'GERMANY'` and the same of `n2`. An OR of several
    /// leaves can only be checked once they are joined; what it implies of one leaf filters
    /// that leaf before it is joined (and may seek it). Each branch of the OR must have a
    /// conjunct of that leaf alone, or the OR implies nothing of it. The OR itself is still
    /// applied: the implied conjuncts only ever drop rows it would drop.
    fn implied_by_ors(&self, parts: &[&Expr]) -> Vec<Expr> {
        let mut implied = Vec::new();
        if self.leaves.len() < 2 || self.leaves.len() > MAX_LEAVES {
            return implied;
        }
        for &p in parts {
            if !matches!(p.kind, ExprKind::Binary { op: BinaryOp::Or, .. }) {
                continue;
            }
            let Some(mask) = self.leaves_of(p) else { continue };
            if mask.count_ones() < 2 {
                continue;
            }
            let branches = or_branches(p);
            for leaf in 0..self.leaves.len() {
                let bit = 1u64 << leaf;
                if mask & bit == 0 {
                    continue;
                }
                let own: Option<Vec<Expr>> = branches
                    .iter()
                    .map(|parts| {
                        parts
                            .iter()
                            .filter(|e| self.leaves_of(e) == Some(bit))
                            .map(|&e| e.clone())
                            .reduce(|a, b| binary(BinaryOp::And, a, b))
                    })
                    .collect();
                if let Some(e) =
                    own.and_then(|o| o.into_iter().reduce(|a, b| binary(BinaryOp::Or, a, b)))
                {
                    implied.push(e);
                }
            }
        }
        implied
    }

    /// What the WHERE conjuncts `parts` and the inner joins' ON conjuncts `on` imply beyond
    /// themselves: of single leaves through ORs ([`Flat::implied_by_ors`]), and equalities
    /// by transitivity (`equivalence.rs`). None with one leaf, or too many to place.
    fn implied(&self, parts: &[&Expr], on: &[&Expr]) -> Vec<Expr> {
        let mut implied = self.implied_by_ors(parts);
        if (2..=MAX_LEAVES).contains(&self.leaves.len()) {
            let all: Vec<&Expr> = parts.iter().chain(on).copied().collect();
            implied.extend(self.implied_equalities(&all));
        }
        implied
    }

    /// Error 7601 if a WHERE conjunct (`parts`) or ON conjunct holds a full-text predicate.
    fn refuse_full_text(&self, parts: &[&Expr], on: &[&Expr]) -> Result<(), SqlError> {
        let sources: Vec<&[Col]> = self.leaves.iter().map(|l| l.cols.as_slice()).collect();
        parts.iter().chain(on).try_for_each(|part| full_text_refusal(part, &sources))
    }

    /// Whether every column `e` names is one of these leaves' (none an enclosing query's),
    /// and `e` can be placed.
    fn owns_all_columns(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Column(parts) => matches!(self.leaf_of(parts), Some(Some(_))),
            _ if !stable_node(e) => false,
            _ => {
                let mut all = true;
                visit_children(e, &mut |c| all &= self.owns_all_columns(c));
                all
            }
        }
    }

    /// Which leaf a column reference names: None if no leaf has it, Some(None) if it is
    /// ambiguous.
    fn leaf_of(&self, parts: &[Ident]) -> Option<Option<usize>> {
        let mut found = None;
        for (i, leaf) in self.leaves.iter().enumerate() {
            match find_column(&leaf.cols, parts) {
                Ok(Some(_)) if found.is_some() => return Some(None),
                Ok(Some(_)) => found = Some(i),
                Ok(None) => {}
                Err(_) => return Some(None),
            }
        }
        found.map(Some)
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
        let mut implied = Vec::new();
        let (FromPlan { mut flat, mut semis }, residual) =
            self.prepare_from(sources, filter, &[], outer, demand, &mut implied)?;
        let cols: Vec<Col> = flat.leaves.iter().flat_map(|l| l.cols.iter().cloned()).collect();
        sink.start(self, &cols)?;
        let mut filtered = Filtered { cols: &cols, exprs: &residual, outer, sink };
        let rest = self.join_leaves(&mut flat, &mut semis, outer, None, Some(&mut filtered))?;
        for (n, row) in rest.rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            if !filtered.push(self, row)? {
                break;
            }
        }
        Ok(())
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
        let mut flat = Flat { leaves: Vec::new(), conjuncts: Vec::new() };
        let mut on = Vec::new();
        let mut parts = Vec::new();
        if let Some(w) = filter {
            conjuncts(w, &mut parts);
        }
        // An outer join among the sources may apply these to its preserved side.
        let mut passed: Vec<&Expr> = parts.clone();
        passed.extend_from_slice(pushed);
        for src in sources {
            self.flatten(src, &mut flat, &mut on, &passed, outer, demand)?;
        }
        if demand.is_some() {
            flat.narrow();
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

    /// Places the conjuncts of a flattened FROM clause: `parts` (the WHERE clause's),
    /// `implied` (what they imply, `Flat::implied`), `on` (the
    /// inner joins' ON conditions) and those of `pushed` (an enclosing WHERE clause's) that
    /// name only these leaves, each tagged with the leaves it needs; WHERE conjuncts with a
    /// subquery that can be decorrelated become semi-joins. Samples the tables' statistics
    /// where there is a join order to choose. Returns the semi-joins and the positions in
    /// `parts` of the WHERE conjuncts it could not place (no leaf set: a subquery it cannot
    /// decorrelate, or too many leaves), which the join does not apply. With
    /// `run_subqueries` (not when the plan is only explained) an uncorrelated `IN
    /// (subquery)` or a comparison with an uncorrelated scalar subquery is run to place it
    /// (`uncorrelated_filter`).
    #[allow(clippy::too_many_arguments)]
    fn place<'e>(
        &mut self,
        flat: &mut Flat<'e>,
        mut parts: Vec<&'e Expr>,
        implied: &'e [Expr],
        on: Vec<&'e Expr>,
        pushed: &[&'e Expr],
        outer: Option<&Env<'_>>,
        run_subqueries: bool,
    ) -> (Vec<(usize, semi::SemiJoin<'e>)>, Vec<usize>) {
        // With one source there is no order to choose, and a seek beats a scan whatever
        // the sizes: only joins pay for statistics.
        if flat.leaves.len() > 1 {
            for leaf in &mut flat.leaves {
                if let Input::Table(t) = &leaf.input {
                    leaf.stats = self.table_stats(t);
                }
            }
        }
        let where_count = parts.len();
        // Implied conjuncts are WHERE conjuncts that are always placed (they name one
        // leaf, or two by an equality): never residual, never a semi-join.
        let not_on = where_count + implied.len();
        parts.extend(implied);
        parts.extend(on);
        for (i, expr) in parts.into_iter().enumerate() {
            let from_on = i >= not_on;
            let leaves = if flat.leaves.len() > MAX_LEAVES { None } else { flat.leaves_of(expr) };
            flat.conjuncts.push(Conjunct { expr, leaves, from_on, semi: false, applied: false });
        }
        if flat.leaves.len() <= MAX_LEAVES {
            for &expr in pushed {
                if flat.owns_all_columns(expr) {
                    let leaves = flat.leaves_of(expr);
                    flat.conjuncts.push(Conjunct {
                        expr,
                        leaves,
                        from_on: false,
                        semi: false,
                        applied: false,
                    });
                }
            }
        }
        let mut semis = Vec::new();
        if flat.leaves.len() <= MAX_LEAVES {
            for i in 0..where_count {
                if flat.conjuncts[i].leaves.is_some() {
                    continue;
                }
                let expr = flat.conjuncts[i].expr;
                if let Some((semi, mask)) = self.semi_join(flat, expr, outer) {
                    flat.conjuncts[i].leaves = Some(mask);
                    flat.conjuncts[i].semi = true;
                    semis.push((i, semi));
                }
            }
        }
        if run_subqueries && flat.leaves.len() <= MAX_LEAVES {
            for i in 0..where_count {
                if flat.conjuncts[i].leaves.is_none() {
                    flat.conjuncts[i].leaves = self.uncorrelated_filter(flat, i);
                }
            }
        }
        let residual = (0..where_count).filter(|&i| flat.conjuncts[i].leaves.is_none()).collect();
        (semis, residual)
    }

    /// The leaves of WHERE conjunct `i` if every subquery in it reads no enclosing row
    /// (each is run once here, its rows kept for the statement as `subquery.rs` keeps
    /// them): it is then placed like any conjunct on the leaves its other columns belong
    /// to, evaluated (a lookup in a subquery's hashed values, a comparison with its cached
    /// value) as soon as they are read, rather than on every joined row at the end. TPC-H
    /// Q18's `o_orderkey IN (SELECT l_orderkey ... GROUP BY l_orderkey HAVING ...)` filters
    /// `orders` before it is joined. The rows of an `IN` subquery also estimate what it
    /// keeps (`own_rows`).
    ///
    /// Only a conjunct that evaluates its subqueries on every row anyway is taken (a
    /// comparison, `[NOT] IN`, `ALL`/`ANY`, `[NOT] EXISTS`): in an OR or a CASE one might
    /// never run, and running it here could cost what the query never would.
    fn uncorrelated_filter(&mut self, flat: &Flat<'_>, i: usize) -> Option<u64> {
        let e = flat.conjuncts[i].expr;
        let test = match &e.kind {
            ExprKind::Unary { op: crate::ast::UnaryOp::Not, operand } => operand,
            _ => e,
        };
        let always = match &test.kind {
            ExprKind::Binary { op, .. } => matches!(
                op,
                BinaryOp::Eq
                    | BinaryOp::NotEq
                    | BinaryOp::Lt
                    | BinaryOp::Gt
                    | BinaryOp::LtEq
                    | BinaryOp::GtEq
            ),
            ExprKind::InSubquery { .. } | ExprKind::Quantified { .. } | ExprKind::Exists(_) => true,
            _ => false,
        };
        if !always {
            return None;
        }
        let mut found = false;
        let mask = self.leaves_beside_subqueries(flat, e, &mut found)?;
        found.then_some(mask)
    }

    /// `Flat::leaves_of`, but taking a subquery that reads no enclosing row as a constant
    /// (None for a correlated one) where operators lead to it; `found` is set where there
    /// is one.
    fn leaves_beside_subqueries(
        &mut self,
        flat: &Flat<'_>,
        e: &Expr,
        found: &mut bool,
    ) -> Option<u64> {
        let mut mask = 0u64;
        match &e.kind {
            ExprKind::Subquery(q) | ExprKind::Exists(q) => {
                self.uncorrelated_rows(q)?;
                *found = true;
                return Some(0);
            }
            ExprKind::InSubquery { expr: x, subquery, .. }
            | ExprKind::Quantified { left: x, subquery, .. } => {
                self.uncorrelated_rows(subquery)?;
                *found = true;
                return self.leaves_beside_subqueries(flat, x, found);
            }
            // Operators evaluate every operand; anything else (CASE, IIF, COALESCE) may not,
            // so a subquery there is not run here.
            ExprKind::Binary { .. } | ExprKind::Unary { .. } => {}
            _ => return flat.leaves_of(e),
        }
        let mut children = Vec::new();
        visit_children(e, &mut |c| children.push(c));
        for c in children {
            mask |= self.leaves_beside_subqueries(flat, c, found)?;
        }
        Some(mask)
    }

    /// Adds `src`'s leaves to `flat`, and the conjuncts of its inner joins' ON conditions to
    /// `on`, each checked to name only the sources written before it. A table leaf decodes
    /// only the columns of `demand`, the block's.
    fn flatten<'e>(
        &mut self,
        src: &'e TableSource,
        flat: &mut Flat<'e>,
        on: &mut Vec<&'e Expr>,
        pushed: &[&Expr],
        outer: Option<&Env<'_>>,
        demand: Option<&Demand>,
    ) -> Result<(), SqlError> {
        if let TableSource::Join(j) = src {
            if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) {
                self.flatten(&j.left, flat, on, pushed, outer, demand)?;
                self.flatten(&j.right, flat, on, pushed, outer, demand)?;
                if let Some(cond) = &j.on {
                    conjuncts(cond, on);
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

    /// Joins every leaf of `flat`, applying the conjuncts as their leaves arrive; the last
    /// step stops at `goal` rows.
    fn join_leaves(
        &mut self,
        flat: &mut Flat<'_>,
        semis: &mut [(usize, semi::SemiJoin<'_>)],
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
        mut sink: Option<&mut dyn RowSink>,
    ) -> Result<Rows, SqlError> {
        let n = flat.leaves.len();
        let mut joined = 0u64;
        let mut order: Vec<usize> = Vec::with_capacity(n);
        let mut acc = Rows { cols: Vec::new(), rows: vec![Vec::new()] };
        let outer_env = Env { cols: &[], row: &[], outer, computed: &[] };
        // Conjuncts of no leaf (constants, the enclosing query's columns) go first.
        for c in flat.conjuncts.iter_mut().filter(|c| c.leaves == Some(0)) {
            c.applied = true;
            if self.predicate(c.expr, &outer_env)? != Some(true) {
                acc.rows.clear();
            }
        }
        // One table and one semi-join: the subquery's keys may seek the table instead.
        if let ([(i, semi)], 1, None, false) = (&mut semis[..], n, goal, acc.rows.is_empty()) {
            if let Some(rows) = self.seek_by_semi_join(flat, semi, outer)? {
                // Every conjunct was placed on the leaf (or applied above): all are done.
                flat.conjuncts[*i].applied = true;
                let cols = flat.leaves[0].cols.clone();
                return Ok(Rows { cols, rows });
            }
        }
        // The order by estimate where the leaves are few enough to search; the greedy
        // choice of each step (with the rows joined so far counted) otherwise.
        let planned = (2..=order::MAX_SEARCHED).contains(&n).then(|| self.join_order(flat));
        // Where the steps after a large one may stream (`pipeline.rs`): a planned order of
        // three leaves or more, every ON conjunct placed. (And no semi-join left to apply,
        // asked at each step.)
        let streamable = planned.as_ref().filter(|p| {
            p.len() >= 3 && flat.conjuncts.iter().all(|c| !c.from_on || c.leaves.is_some())
        });
        let specs = streamable.map(|p| self.stage_specs(flat, p)).unwrap_or_default();
        let full_positions =
            streamable.map(|p| restore_positions(p, &flat.leaves)).unwrap_or_default();
        let tail_goal =
            goal.filter(|g| g.order.is_empty() && semis.is_empty()).map_or(usize::MAX, |g| g.rows);
        // The first leaf read into the second's hash as it is read, where that is the plan
        // (`probe.rs`); not when a semi-join would filter the first leaf by itself.
        if let Some(&[first, second, ..]) = planned.as_deref().filter(|_| !acc.rows.is_empty()) {
            let first_bit = 1u64 << first;
            let first_semi = semis
                .iter()
                .any(|(i, _)| flat.conjuncts[*i].leaves.is_some_and(|m| m & !first_bit == 0));
            if !first_semi {
                let last = n == 2 && semis.is_empty();
                let rows_goal =
                    goal.filter(|g| last && g.order.is_empty()).map_or(usize::MAX, |g| g.rows);
                let positions;
                let streams = semis.is_empty() && specs.len() > 2;
                let (forward, streaming) = match sink.as_deref_mut() {
                    Some(sink)
                        if last
                            && flat.conjuncts.iter().all(|c| !c.from_on || c.leaves.is_some()) =>
                    {
                        positions = restore_positions(&[first, second], &flat.leaves);
                        (Some(Forward { positions: &positions, sink, stopped: false }), None)
                    }
                    sink => (
                        None,
                        streams.then(|| pipeline::Streaming {
                            specs: &specs[2..],
                            sink: sink.map(shorten),
                            positions: &full_positions,
                            goal: tail_goal,
                            outer,
                        }),
                    ),
                };
                let probed = self.first_steps_probing(
                    flat, first, second, outer, rows_goal, forward, streaming,
                )?;
                if let Some((rows, done, streamed)) = probed {
                    acc = rows;
                    order = match (streamed, &planned) {
                        (true, Some(p)) => p.clone(),
                        _ => done,
                    };
                    joined = order.iter().fold(0, |m, &l| m | 1 << l);
                    self.apply_ready_semis(flat, semis, joined, &mut acc, outer)?;
                }
            }
        }
        while order.len() < n {
            // A semi-join applied after the last step filters it: that step cannot stop early.
            let last = order.len() + 1 == n;
            let goal = goal.filter(|_| last && semis.is_empty());
            if n > MAX_LEAVES {
                // Too many leaves for the masks: in the order written, every conjunct left
                // to the end (none could be placed).
                let leaf = order.len();
                acc = self.join_step(flat, acc, leaf, Step::Loops, 0, outer, goal, None, None)?.0;
                order.push(leaf);
                continue;
            }
            let only = planned.as_ref().map(|p| p[order.len()]);
            let (leaf, step) =
                self.next_step(flat, joined, acc.rows.len() as f64, &acc.cols, only)?;
            let mask = joined | 1 << leaf;
            // The last step of two or more gives its rows on at once when nothing is left
            // to apply to them after it: no semi-join, no ON conjunct it cannot place.
            let positions;
            let semis_done = semis.iter().all(|(i, _)| flat.conjuncts[*i].applied);
            // A step before the last, the first leaf joined already, may stream the rest.
            let at = order.len();
            let streams = semis_done && at >= 1 && at + 1 < specs.len();
            let (forward, streaming) = match sink.as_deref_mut() {
                Some(sink)
                    if last
                        && n > 1
                        && semis_done
                        && flat.conjuncts.iter().all(|c| !c.from_on || c.leaves.is_some()) =>
                {
                    let mut full = order.clone();
                    full.push(leaf);
                    positions = restore_positions(&full, &flat.leaves);
                    (Some(Forward { positions: &positions, sink, stopped: false }), None)
                }
                sink => (
                    None,
                    streams.then(|| pipeline::Streaming {
                        specs: &specs[at + 1..],
                        sink: sink.map(shorten),
                        positions: &full_positions,
                        goal: tail_goal,
                        outer,
                    }),
                ),
            };
            let (rows, streamed) =
                self.join_step(flat, acc, leaf, step, mask, outer, goal, forward, streaming)?;
            acc = rows;
            if streamed {
                // The steps after this one ran too: the rows are the last step's.
                if let Some(p) = &planned {
                    order.clone_from(p);
                }
                break;
            }
            joined = mask;
            order.push(leaf);
            self.apply_ready_semis(flat, semis, joined, &mut acc, outer)?;
        }
        // What could not be placed from the ON conditions is applied to the whole row.
        let late: Vec<&Expr> =
            flat.conjuncts.iter().filter(|c| c.from_on && !c.applied).map(|c| c.expr).collect();
        if !late.is_empty() {
            acc.rows = self.filter_rows(&acc.cols, std::mem::take(&mut acc.rows), &late, outer)?;
        }
        Ok(restore_order(acc, &order, &flat.leaves))
    }

    /// Applies to the rows joined so far (`acc`, of the leaves `joined`) each semi-join
    /// not yet applied whose leaves are all joined.
    fn apply_ready_semis(
        &mut self,
        flat: &mut Flat<'_>,
        semis: &mut [(usize, semi::SemiJoin<'_>)],
        joined: u64,
        acc: &mut Rows,
        outer: Option<&Env<'_>>,
    ) -> Result<(), SqlError> {
        for (i, semi) in semis.iter_mut() {
            let c = &flat.conjuncts[*i];
            if !c.applied && c.leaves.is_some_and(|m| m & !joined == 0) {
                acc.rows =
                    self.apply_semi_join(semi, &acc.cols, std::mem::take(&mut acc.rows), outer)?;
                flat.conjuncts[*i].applied = true;
            }
        }
        Ok(())
    }

    /// The next leaf to join and how: the cheapest step among the leaves left (or leaf
    /// `only`), those that a conjunct connects to the joined ones first.
    fn next_step<'e>(
        &mut self,
        flat: &Flat<'e>,
        joined: u64,
        left_rows: f64,
        left_cols: &[Col],
        only: Option<usize>,
    ) -> Result<(usize, Step<'e>), SqlError> {
        let mut best: Option<(bool, f64, usize, Step<'e>)> = None;
        for (i, leaf) in flat.leaves.iter().enumerate() {
            if joined >> i & 1 == 1 || only.is_some_and(|o| o != i) {
                continue;
            }
            let bit = 1u64 << i;
            let placed = |c: &&Conjunct<'e>| {
                c.leaves.is_some_and(|m| m & bit != 0 && m & !(joined | bit) == 0)
            };
            let joining: Vec<&Conjunct<'e>> = flat.conjuncts.iter().filter(placed).collect();
            let connected =
                joined != 0 && joining.iter().any(|c| c.leaves.is_some_and(|m| m & joined != 0));
            let own_rows = self.own_rows(flat, i);
            let mut candidate = (own_rows * left_rows.max(1.0), Step::Loops);
            let exprs: Vec<&'e Expr> = joining.iter().map(|c| c.expr).collect();
            let keys = equi_keys(self, flat, &exprs, joined, bit, left_cols, &leaf.cols);
            if joined != 0 && !keys.is_empty() {
                candidate = (own_rows + left_rows, Step::Hash(keys));
            }
            if let (Input::Table(t), true) = (&leaf.input, joined != 0) {
                let path = self.path(flat, t, &exprs, i, joined);
                let probes_joined =
                    path.any_probe(&mut |e| flat.leaves_of(e).is_some_and(|m| m & joined != 0));
                if probes_joined && path.cost * left_rows < candidate.0 {
                    let exact = path.exact_seek_conjuncts(&t.def, &exprs);
                    let exact = exact.into_iter().map(|k| exprs[k]).collect();
                    candidate = (path.cost * left_rows, Step::IndexLoops(path, exact));
                }
            }
            let better = match &best {
                None => true,
                Some((c, cost, ..)) => (connected, -candidate.0) > (*c, -*cost),
            };
            if better {
                best = Some((connected, candidate.0, i, candidate.1));
            }
        }
        best.map(|(_, _, i, s)| (i, s))
            .ok_or_else(|| SqlError::new(50000, "Walden's planner found no source to join."))
    }

    /// The access path for table leaf `leaf` under `conjuncts`, whose probes may read the
    /// leaves `joined` and the enclosing query.
    fn path<'e>(
        &self,
        flat: &Flat<'e>,
        t: &TableRef,
        conjuncts: &[&'e Expr],
        leaf: usize,
        joined: u64,
    ) -> AccessPath<'e> {
        let cols = flat.leaves[leaf].read_cols();
        let column = |parts: &[Ident]| match flat.leaf_of(parts) {
            Some(Some(l)) if l == leaf => find_column(cols, parts).ok().flatten(),
            _ => None,
        };
        let probe = |e: &Expr| flat.leaves_of(e).is_some_and(|m| m & !joined == 0);
        access::choose(
            &t.def,
            t.wanted.as_deref(),
            conjuncts,
            &column,
            &probe,
            flat.leaves[leaf].stats.as_deref(),
        )
    }

    /// Joins leaf `leaf` to the rows joined so far by `step`, applying every conjunct whose
    /// leaves are then all joined (`mask`; 0 when there are too many leaves to place any),
    /// and stopping at `goal` rows.
    /// With `streaming`, a step holding too many rows streams the steps after it
    /// (`pipeline.rs`): its rows are then the last step's, in join order, and it says so.
    #[allow(clippy::too_many_arguments)]
    fn join_step<'e: 'f, 'f>(
        &mut self,
        flat: &mut Flat<'e>,
        mut acc: Rows,
        leaf: usize,
        step: Step<'_>,
        mask: u64,
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
        forward: Option<Forward<'f>>,
        mut streaming: Option<pipeline::Streaming<'f>>,
    ) -> Result<(Rows, bool), SqlError> {
        let own = if mask == 0 { None } else { Some(1u64 << leaf) };
        let ready =
            |c: &Conjunct<'_>| !c.applied && !c.semi && c.leaves.is_some_and(|m| m & !mask == 0);
        let checks: Vec<usize> =
            (0..flat.conjuncts.len()).filter(|&i| ready(&flat.conjuncts[i])).collect();
        let pick = |local: bool| -> Vec<&Expr> {
            checks
                .iter()
                .filter(|&&i| (flat.conjuncts[i].leaves == own) == local)
                .map(|&i| flat.conjuncts[i].expr)
                .collect()
        };
        let (local, rest) = (pick(true), pick(false));
        let mut cols = acc.cols.clone();
        cols.extend(flat.leaves[leaf].cols.iter().cloned());
        if acc.rows.is_empty() {
            // Nothing joined so far: the inner join is empty whatever the leaf holds, so it
            // is not read (as a hash join with an empty build side stops).
            for i in checks {
                flat.conjuncts[i].applied = true;
            }
            return Ok((Rows { cols, rows: Vec::new() }, false));
        }
        // A SELECT's locators, NULL before any row is copied into its pairs; the leaf's
        // rows cut to what its pairs carry.
        let left_locators =
            if flat.locators_unread() { locator_positions(&acc.cols) } else { Vec::new() };
        let right_shape = flat.shape(leaf);
        if !left_locators.is_empty() {
            for row in &mut acc.rows {
                clear_locators(row, &left_locators);
            }
        }
        // Stopping the join's output keeps its first rows, which are the first in the
        // ORDER BY only where a leaf delivered them in that order (`leaf_rows` decides).
        let rows_goal = goal.filter(|g| g.order.is_empty()).map_or(usize::MAX, |g| g.rows);
        let mut out = JoinOutput {
            rows: Vec::new(),
            forward,
            goal: rows_goal,
            width: cols.len(),
            grant: None,
            pipe: None,
            may_stream: false,
            over: None,
        };
        let left_total = acc.rows.len() as f64;
        if let Step::IndexLoops(path, exact) = step {
            let Input::Table(t) = &flat.leaves[leaf].input else {
                return Err(SqlError::new(
                    50000,
                    "Walden's planner sought a source that is not a table.",
                ));
            };
            let t = clone_ref(t);
            let mut all = local;
            all.extend(rest);
            let mut check = Filter::new(RowFilter { cols: &cols, exprs: &all, outer });
            // What a row the seek found must still pass: not the equalities it sought by
            // exactly (`AccessPath::exact_seek_conjuncts`).
            let inexact: Vec<&Expr> = all
                .iter()
                .copied()
                .filter(|e| !exact.iter().any(|x| std::ptr::eq(*x, *e)))
                .collect();
            let mut check_found = Filter::new(RowFilter { cols: &cols, exprs: &inexact, outer });
            let mut scanned: Option<Vec<Vec<Value>>> = None;
            // The seeks keep one cursor from each to the next; an enclosing step's spare is
            // set aside meanwhile and given back after.
            let enclosing = self.seek_spare.replace(SeekSpare::default());
            out.may_stream = streaming.is_some();
            let mut seeks = || -> Result<(), SqlError> {
                for (n, l) in std::mem::take(&mut acc.rows).into_iter().enumerate() {
                    if out.full() {
                        break;
                    }
                    self.row_interruption_point(n)?;
                    let env = Env::new(&acc.cols, &l, outer);
                    // Each row the seek finds is paired as it is read (`sought.rs`).
                    let mut pairs = SoughtPairs::new(&l, &right_shape, &mut check_found, &mut out);
                    let read = self.read_path_into(&t, &path, &env, None, &mut pairs)?;
                    let held = pairs.into_held();
                    if read {
                        if let Some(found) = held {
                            pair_into(self, &mut check_found, &mut out, l, found)?;
                        }
                    } else {
                        // A probe that does not convert: this row is checked against the
                        // whole table, read once, on every conjunct.
                        if scanned.is_none() {
                            let mut rows =
                                self.read_leaf(&t, &AccessPath::scan(), outer, usize::MAX, None)?;
                            rows.iter_mut().for_each(|r| right_shape.apply(r));
                            scanned = Some(rows);
                        }
                        let found = scanned.as_deref().unwrap_or(&[]);
                        self.emit_each(&mut out, l, found.len(), |k| &found[k], &mut check)?;
                    }
                    let expected = out.rows.len() as f64 * left_total / (n + 1) as f64;
                    self.stream_rest(flat, &mut streaming, &mut out, expected)?;
                }
                Ok(())
            };
            let seeks = seeks();
            self.seek_spare = enclosing;
            seeks?;
        } else {
            // Fewer rows joined so far than the leaf is guessed to hold: they are hashed
            // instead, and the leaf's read probes them (`probe.rs`).
            if let Step::Hash(keys) = &step {
                if (acc.rows.len() as f64) < self.own_rows(flat, leaf) {
                    let streamed = self.hash_joined_probe_leaf(
                        flat, leaf, &local, &acc, keys, &rest, outer, &mut out, streaming,
                    )?;
                    for i in checks {
                        flat.conjuncts[i].applied = true;
                    }
                    return finish_step(self, flat, cols, streamed.unwrap_or(out));
                }
            }
            // A leaf alone (the first, or a cross product's) may stop at the goal itself.
            let leaf_goal = goal.filter(|_| acc.rows.len() == 1 && rest.is_empty());
            let mut right = self.leaf_rows(flat, leaf, &local, outer, leaf_goal)?;
            let right_cols = &flat.leaves[leaf].cols;
            if matches!(step, Step::Loops) && acc.cols.is_empty() && acc.rows.len() == 1 {
                // The first leaf: its rows are the join's, moved rather than copied.
                let mut rows = self.filter_rows(&cols, right, &rest, outer)?;
                rows.truncate(rows_goal);
                for i in checks {
                    flat.conjuncts[i].applied = true;
                }
                return Ok((Rows { cols, rows }, false));
            }
            let mut check = Filter::new(RowFilter { cols: &cols, exprs: &rest, outer });
            // The build side beyond the grant: joined by partitions on disk instead.
            // Held while the hash table below is.
            let _build_grant = match &step {
                Step::Hash(keys) => {
                    let mut left = std::mem::take(&mut acc.rows);
                    let emit = |run: &mut Self, l: &[Value], r: &[Value]| {
                        run.emit(&mut out, l, r, &mut check)
                    };
                    let grant = self.grace_hash_join(
                        keys, &acc.cols, &mut left, right_cols, &mut right, outer, emit,
                    )?;
                    if grant.is_none() {
                        for i in checks {
                            flat.conjuncts[i].applied = true;
                        }
                        return finish_step(self, flat, cols, out);
                    }
                    acc.rows = left;
                    grant
                }
                _ => None,
            };
            let matcher = match &step {
                Step::Hash(keys) => Some((
                    HashMatch::build(self, keys, right_cols, &right, outer)?,
                    HashMatch::probes(keys, &acc.cols),
                )),
                _ => None,
            };
            // A hash of integer keys finds only rows whose key equals the probe's exactly
            // (`HashMatch::lookup`): its one equality need not be checked again.
            let keyed: Vec<&Expr> = match (&step, &matcher) {
                (Step::Hash(keys), Some((m, _))) if m.exact() => {
                    rest.iter().copied().filter(|e| !is_key_of(e, keys)).collect()
                }
                _ => rest.clone(),
            };
            let mut check_keyed = Filter::new(RowFilter { cols: &cols, exprs: &keyed, outer });
            out.may_stream = streaming.is_some();
            for (n, l) in std::mem::take(&mut acc.rows).into_iter().enumerate() {
                self.row_interruption_point(n)?;
                let emitted = match &matcher {
                    Some((m, probes)) => {
                        let env = Env::new(&acc.cols, &l, outer);
                        let found = m.candidates(self, probes, &env)?;
                        let pair = |k: usize| right[found[k]].as_slice();
                        self.emit_each(&mut out, l, found.len(), pair, &mut check_keyed)?
                    }
                    None => {
                        let pair = |k: usize| right[k].as_slice();
                        self.emit_each(&mut out, l, right.len(), pair, &mut check)?
                    }
                };
                if emitted.full {
                    break;
                }
                let expected = out.rows.len() as f64 * left_total / (n + 1) as f64;
                self.stream_rest(flat, &mut streaming, &mut out, expected)?;
            }
        }
        for i in checks {
            flat.conjuncts[i].applied = true;
        }
        finish_step(self, flat, cols, out)
    }

    /// Adds the pair of `left` and `right` to `out` if every predicate of `checks` (prepared
    /// once per step for the joined row's columns) holds for it; says whether `out` is then
    /// full.
    fn emit(
        &mut self,
        out: &mut JoinOutput<'_>,
        left: &[Value],
        right: &[Value],
        checks: &mut Filter<'_>,
    ) -> Result<bool, SqlError> {
        let mut row = Vec::with_capacity(left.len() + right.len());
        row.extend_from_slice(left);
        row.extend_from_slice(right);
        if self.filter_holds(checks, &row)? {
            out.push(self, row)?;
        }
        Ok(out.full())
    }

    /// [`Run::emit`] of `left` paired with each of the `n` rows `right(k)` gives, in turn,
    /// until `out` is full: `left` itself becomes the last pair (and any pair after a
    /// rejected one, whose row gives it back), so a left row with one match, the common
    /// case of a key joined to its foreign keys, is moved, never copied value by value.
    /// Says whether `out` is full, and whether any pair was added.
    fn emit_each<'r>(
        &mut self,
        out: &mut JoinOutput<'_>,
        left: Vec<Value>,
        n: usize,
        right: impl Fn(usize) -> &'r [Value],
        checks: &mut Filter<'_>,
    ) -> Result<Emitted, SqlError> {
        let width = left.len();
        let mut left = left;
        // Whether `left` is in the row being tried (the last pair).
        let mut taken = false;
        let mut emitted = Emitted { full: out.full(), matched: false, left: None };
        for k in 0..n {
            if emitted.full {
                break;
            }
            let r = right(k);
            let mut row = if k + 1 == n {
                taken = true;
                std::mem::take(&mut left)
            } else {
                let mut copy = Vec::with_capacity(width + r.len());
                copy.extend_from_slice(&left);
                copy
            };
            row.reserve_exact(r.len());
            row.extend_from_slice(r);
            if self.filter_holds(checks, &row)? {
                emitted.matched = true;
                out.push(self, row)?;
                emitted.full = out.full();
            } else if taken {
                row.truncate(width);
                left = row;
                taken = false;
            }
        }
        emitted.left = (!taken).then_some(left);
        Ok(emitted)
    }

    /// A leaf's rows that satisfy its own conjuncts `local`: with a `goal`, the first of
    /// them (in its order, when the leaf is read in that order), at least as many as it
    /// asks. Each is cut to its part of a joined row ([`Flat::shape`]).
    fn leaf_rows(
        &mut self,
        flat: &mut Flat<'_>,
        leaf: usize,
        local: &[&Expr],
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let shape = flat.shape(leaf);
        let mut rows = self.leaf_rows_read(flat, leaf, local, outer, goal)?;
        if !matches!(shape, Shape::Whole) {
            rows.iter_mut().for_each(|r| shape.apply(r));
        }
        Ok(rows)
    }

    /// [`Run::leaf_rows`] as the leaf's read gives them, with the table's columns.
    fn leaf_rows_read(
        &mut self,
        flat: &mut Flat<'_>,
        leaf: usize,
        local: &[&Expr],
        outer: Option<&Env<'_>>,
        goal: Option<RowGoal<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let cols = flat.leaves[leaf].read_cols().to_vec();
        let t = match &mut flat.leaves[leaf].input {
            Input::Rows(rows) => {
                let mut rows = std::mem::take(rows);
                if let Some(g) = goal.filter(|g| g.order.is_empty() && local.is_empty()) {
                    rows.truncate(g.rows);
                }
                return self.filter_rows(&cols, rows, local, outer);
            }
            Input::Table(t) => clone_ref(t),
            Input::Estimated(_) => return Err(explained_only()),
        };
        let path = self.path(flat, &t, local, leaf, 0);
        let ordered = |g: &RowGoal<'_>| {
            g.order.is_empty() || {
                let columns: Option<Vec<usize>> = g
                    .order
                    .iter()
                    .map(|o| match &o.expr.kind {
                        ExprKind::Column(parts) if !o.descending => (flat.leaf_of(parts)
                            == Some(Some(leaf)))
                        .then(|| find_column(&cols, parts).ok().flatten())
                        .flatten(),
                        _ => None,
                    })
                    .collect();
                columns.is_some_and(|c| path.delivers_order(&t.def, &c))
            }
        };
        // With an ordered goal the read stops at the goal's count of rows that pass.
        let limit = goal.filter(|g| ordered(g)).map_or(usize::MAX, |g| g.rows);
        let keep = RowFilter { cols: &cols, exprs: local, outer };
        self.read_leaf(&t, &path, outer, limit, Some(keep))
    }

    /// A table's rows, each followed by its hidden row locator: those `filter` may accept,
    /// read by the cheapest access path for it (the caller still applies `filter`).
    pub(crate) fn table_rows(
        &mut self,
        t: &TableRef,
        filter: Option<&Expr>,
    ) -> Result<Rows, SqlError> {
        self.table_rows_upto(t, filter, None)
    }

    /// [`Run::table_rows`], or with `limit` the first `limit` rows, in the access path's
    /// order, that `filter` accepts, checked as they are read: the search of an `UPDATE TOP
    /// (n)` or `DELETE TOP (n)`, which stops at its n-th row instead of reading (and, under
    /// its update locks, holding) every row the filter accepts.
    pub(crate) fn table_rows_upto(
        &mut self,
        t: &TableRef,
        filter: Option<&Expr>,
        limit: Option<usize>,
    ) -> Result<Rows, SqlError> {
        let leaf = table_leaf(clone_ref(t));
        let cols = leaf.cols.clone();
        let flat = Flat { leaves: vec![leaf], conjuncts: Vec::new() };
        let mut parts = Vec::new();
        if let Some(f) = filter {
            conjuncts(f, &mut parts);
        }
        let path = self.path(&flat, t, &parts, 0, 0);
        let rows = match limit {
            Some(limit) => {
                let keep = RowFilter { cols: &cols, exprs: &parts, outer: None };
                self.read_leaf(t, &path, None, limit, Some(keep))?
            }
            None => self.read_leaf(t, &path, None, usize::MAX, None)?,
        };
        Ok(Rows { cols, rows })
    }

    /// A table's rows read by `path` that `keep` accepts (at most `limit`), its probes
    /// evaluated outside any row of this FROM.
    pub(crate) fn read_leaf(
        &mut self,
        t: &TableRef,
        path: &AccessPath<'_>,
        outer: Option<&Env<'_>>,
        limit: usize,
        keep: Option<RowFilter<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        match self.read_path(t, path, &env, limit, keep)? {
            Some(rows) => Ok(rows),
            None => {
                Ok(self.read_path(t, &AccessPath::scan(), &env, limit, keep)?.unwrap_or_default())
            }
        }
    }

    /// The rows for which every predicate of `exprs` holds.
    pub(crate) fn filter_rows(
        &mut self,
        cols: &[Col],
        rows: Vec<Vec<Value>>,
        exprs: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        if exprs.is_empty() {
            return Ok(rows);
        }
        let mut kept = Vec::with_capacity(rows.len());
        for (n, row) in rows.into_iter().enumerate() {
            self.row_interruption_point(n)?;
            if self.all_hold(exprs, cols, &row, outer)? {
                kept.push(row);
            }
        }
        Ok(kept)
    }

    fn all_hold(
        &mut self,
        exprs: &[&Expr],
        cols: &[Col],
        row: &[Value],
        outer: Option<&Env<'_>>,
    ) -> Result<bool, SqlError> {
        self.all_hold_in(exprs, &Env::new(cols, row, outer))
    }

    /// Whether every predicate of `exprs` holds (is TRUE, not UNKNOWN) in `env`.
    pub(crate) fn all_hold_in(&mut self, exprs: &[&Expr], env: &Env<'_>) -> Result<bool, SqlError> {
        for e in exprs {
            if self.predicate(e, env)? != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The positions of `cols` a join of a SELECT carries on, leaving out what nothing after
/// it reads, so that it is not copied into each joined row: the row locators (only a
/// change reads them, and a change has no demand), and, with `after` (the names the block
/// reads after the join), the columns whose names it does not use. Leaving those out
/// changes no result: every reference the block makes is by a name its demand holds, so
/// none could resolve to them (nor be made ambiguous by them), and a block that reads
/// columns by position (`*`) has no demand.
fn kept_columns(cols: &[Col], after: Option<&Demand>) -> Vec<usize> {
    (0..cols.len())
        .filter(|&i| {
            let c = &cols[i];
            if c.hidden {
                c.name != ROWID
            } else {
                after.is_none_or(|d| d.reads(&c.name))
            }
        })
        .collect()
}

/// Collects the rows it is given, cut to the columns at `keep` (see [`kept_columns`])
/// unless it keeps them `whole`.
struct Narrowed<'k> {
    keep: &'k [usize],
    whole: bool,
    rows: Vec<Vec<Value>>,
}

impl RowSink for Narrowed<'_> {
    fn push(&mut self, _: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
        if self.whole {
            self.rows.push(row);
        } else {
            let cut = self.keep.iter().map(|&i| std::mem::replace(&mut row[i], Value::Null));
            self.rows.push(cut.collect());
        }
        Ok(true)
    }
}

/// Sets the row locators among `cols` to NULL in `rows` of a SELECT, which never reads
/// them, so that they are not copied into each joined row.
fn drop_locators(rows: &mut [Vec<Value>], cols: &[Col]) {
    let locators = locator_positions(cols);
    for row in rows {
        clear_locators(row, &locators);
    }
}

/// The positions of the row locators among `cols`.
fn locator_positions(cols: &[Col]) -> Vec<usize> {
    (0..cols.len()).filter(|&i| cols[i].hidden && cols[i].name == ROWID).collect()
}

/// Sets the values of `row` at `locators` (see [`locator_positions`]) to NULL.
fn clear_locators(row: &mut [Value], locators: &[usize]) {
    for &i in locators {
        if let Some(v) = row.get_mut(i) {
            *v = Value::Null;
        }
    }
}

/// The error for a leaf of an explained plan reaching the executor, which never runs one.
fn explained_only() -> SqlError {
    SqlError::new(50000, "Walden's executor was given a plan that is only explained.")
}

/// A table leaf: its columns and the hidden row locator.
/// `t` read for a query block that reads `demand`'s columns.
fn reading(t: TableRef, demand: Option<&Demand>) -> TableRef {
    TableRef { wanted: demand.and_then(|d| d.wanted(&t.def)), ..t }
}

fn table_leaf(t: TableRef) -> Leaf {
    let mut cols = table_cols(&t.def, &t.qual);
    cols.push(Col {
        qual: Some(t.qual.clone()),
        ..Col::hidden(ROWID, SqlType::VarBinary(walden_engine::types::Len::N(900)))
    });
    Leaf { cols, input: Input::Table(t), stats: None, narrow: None }
}

pub(crate) fn clone_ref(t: &TableRef) -> TableRef {
    TableRef {
        db: std::sync::Arc::clone(&t.db),
        def: std::sync::Arc::clone(&t.def),
        qual: t.qual.clone(),
        view_check: None,
        wanted: t.wanted.clone(),
    }
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

/// The conjuncts of a condition (`a AND b AND c`).
pub(crate) fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary { op: BinaryOp::And, left, right } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        ExprKind::Binary { op: BinaryOp::Or, .. } => {
            out.extend(common_factors(e));
            out.push(e);
        }
        _ => out.push(e),
    }
}

/// The operands of a chain of `op` (`a AND b AND c`), left to right.
fn operands<'e>(e: &'e Expr, op: BinaryOp, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary { op: o, left, right } if *o == op => {
            operands(left, op, out);
            operands(right, op, out);
        }
        _ => out.push(e),
    }
}

/// The branches of an OR, each as its ANDed parts: `(a AND b) OR c` is `[[a, b], [c]]`.
fn or_branches(e: &Expr) -> Vec<Vec<&Expr>> {
    let mut ors = Vec::new();
    operands(e, BinaryOp::Or, &mut ors);
    ors.into_iter()
        .map(|b| {
            let mut parts = Vec::new();
            operands(b, BinaryOp::And, &mut parts);
            parts
        })
        .collect()
}

/// `left op right`, spanning both.
fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    let span = left.span;
    Expr { kind: ExprKind::Binary { op, left: Box::new(left), right: Box::new(right) }, span }
}

/// The conjuncts every branch of an OR has (`a.k = b.k` in `(a.k = b.k AND x) OR (a.k = b.k
/// AND y)`, TPC-H Q19's shape), as written in its first branch. The OR implies each of
/// them, so applying them as well never drops a row it keeps, and lets the plan use them
/// (as a join's hash key, or a seek) where the OR alone would be a filter on a cross
/// product. Branches are compared by their text; an OR with a branch that is a single
/// predicate is left alone (its only factor would be that whole branch).
fn common_factors(e: &Expr) -> Vec<&Expr> {
    let split = or_branches(e);
    // A plain OR of single predicates (`a = 1 OR b = 2`), the common case, has no factor
    // worth the texts: this runs every time the clause is planned.
    if split.iter().any(|parts| parts.len() < 2) {
        return Vec::new();
    }
    let texts: Vec<Vec<String>> =
        split[1..].iter().map(|parts| parts.iter().map(|p| p.to_string()).collect()).collect();
    split[0]
        .iter()
        .copied()
        .filter(|c| {
            let text = c.to_string();
            texts.iter().all(|branch| branch.contains(&text))
        })
        .collect()
}

/// The equalities between the joined rows (`joined`) and leaf `bit` that a hash join can
/// use: `joined-side expression = leaf-side expression`, both stable, of types in one
/// [`family`].
fn equi_keys<'e>(
    run: &Run<'_>,
    flat: &Flat<'e>,
    exprs: &[&'e Expr],
    joined: u64,
    bit: u64,
    left_cols: &[Col],
    right_cols: &[Col],
) -> Vec<(&'e Expr, &'e Expr)> {
    let mut keys = Vec::new();
    for e in exprs {
        let ExprKind::Binary { op: BinaryOp::Eq, left, right } = &e.kind else { continue };
        let (Some(a), Some(b)) = (flat.leaves_of(left), flat.leaves_of(right)) else { continue };
        let sides = if a != 0 && a & !joined == 0 && b == bit {
            (&**left, &**right)
        } else if b != 0 && b & !joined == 0 && a == bit {
            (&**right, &**left)
        } else {
            continue;
        };
        let (Some(lt), Some(rt)) =
            (run.static_type(sides.0, left_cols), run.static_type(sides.1, right_cols))
        else {
            continue;
        };
        if family(lt) != 0 && family(lt) == family(rt) {
            keys.push(sides);
        }
    }
    keys
}

/// Whether `e` is the equality of one of a hash join's `keys` (either way round).
fn is_key_of(e: &Expr, keys: &[(&Expr, &Expr)]) -> bool {
    let ExprKind::Binary { op: BinaryOp::Eq, left, right } = &e.kind else { return false };
    let (l, r): (&Expr, &Expr) = (left, right);
    keys.iter().any(|&(a, b)| {
        (std::ptr::eq(l, a) && std::ptr::eq(r, b)) || (std::ptr::eq(l, b) && std::ptr::eq(r, a))
    })
}

/// The joined rows with their columns in the FROM clause's order.
/// `sink` as a sink of its own borrow's lifetime, as a `Forward` or `Streaming` holds it.
fn shorten<'a>(sink: &'a mut (dyn RowSink + '_)) -> &'a mut (dyn RowSink + 'a) {
    sink
}

/// A join step's rows once it has run: those it held, or, where it streamed the steps
/// after it (`pipeline.rs`), the last step's, with every conjunct those steps checked
/// marked applied; and whether it streamed. Error 701 if it held more than the workspace
/// has room for while waiting for the steps after it to stream, and they did not.
fn finish_step(
    run: &mut Run<'_>,
    flat: &mut Flat<'_>,
    cols: Vec<Col>,
    mut out: JoinOutput<'_>,
) -> Result<(Rows, bool), SqlError> {
    if let Some(e) = out.over.take() {
        return Err(e);
    }
    Ok(match out.pipe {
        Some(mut pipe) => {
            pipe.finish(run)?;
            for i in pipe.checks() {
                flat.conjuncts[i].applied = true;
            }
            let (cols, rows) = pipe.into_rows();
            (Rows { cols, rows }, true)
        }
        None => (Rows { cols, rows: out.rows }, false),
    })
}

fn restore_order(acc: Rows, order: &[usize], leaves: &[Leaf]) -> Rows {
    let positions = restore_positions(order, leaves);
    if positions.is_empty() {
        return acc;
    }
    let cols = positions.iter().map(|&p| acc.cols[p].clone()).collect();
    let rows = acc.rows.into_iter().map(|r| restore_row(r, &positions)).collect();
    Rows { cols, rows }
}

/// Where each value of a row in the FROM clause's column order is in a row joined in
/// `order`; empty when the orders are the same.
fn restore_positions(order: &[usize], leaves: &[Leaf]) -> Vec<usize> {
    if order.iter().enumerate().all(|(i, &l)| i == l) {
        return Vec::new();
    }
    let widths: Vec<usize> = leaves.iter().map(|l| l.cols.len()).collect();
    // Where each leaf's columns start in the joined row.
    let mut start = vec![0; leaves.len()];
    let mut at = 0;
    for &l in order {
        start[l] = at;
        at += widths[l];
    }
    (0..leaves.len()).flat_map(|l| start[l]..start[l] + widths[l]).collect()
}

/// A joined row put in the FROM clause's column order by `positions`.
fn restore_row(mut row: Vec<Value>, positions: &[usize]) -> Vec<Value> {
    positions.iter().map(|&p| std::mem::replace(&mut row[p], Value::Null)).collect()
}
