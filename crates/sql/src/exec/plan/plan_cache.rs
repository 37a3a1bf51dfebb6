//! The plan cache: what the planner decided for a SELECT block, kept with the session and
//! used again by every later execution of the same block (a loop's iterations, a
//! procedure's calls, a prepared statement's executions), as SQL Server reuses a compiled
//! plan. `docs/query-processing.md` ("Plan cache") says what is kept and what invalidates it.
//!
//! # What a plan is kept for
//!
//! A SELECT block that reads one table (or temporary table) by name, whose WHERE conjuncts
//! the planner places on that table or on no table at all (constants, variables, the
//! enclosing query's columns): a key lookup, a seek or a scan with a filter, the shape of
//! most statements a loop or a procedure repeats. What the planner found for it (the table
//! resolved, the columns it reads, which conjuncts it checks where, the index and the probes
//! of its seek) is kept; the probes' values, the rows and everything after FROM are computed
//! at each execution.
//!
//! # Keys and validity
//!
//! A plan is found by the address of its block's syntax node, and used only if
//!
//! * the block is the parsed node it was made for (the same [`ParsedId`](crate::ast::ParsedId)), or else equal to
//!   it (its syntax tree is compared, so a tree freed and another allocated at its address
//!   can never take its plan). A loop's or a procedure's block is the node parsed once, so
//!   its plan is found without comparing trees; a block a rewrite made is compared;
//! * the session's database is the one whose names it resolved (held weakly: a kept plan
//!   never keeps a dropped database open);
//! * the schema version of the table's database is the one read before the names were
//!   resolved: every change to the catalog's objects bumps it (CREATE, ALTER and DROP of
//!   anything, CREATE and DROP INDEX, sp_rename, a rollback of DDL), so a plan never
//!   outlives a definition it used;
//! * for a temporary table, the session's name still means the same table in tempdb.
//!
//! Otherwise it is made again and replaces the old one. Statistics do not enter a kept plan:
//! a block of one table chooses its path without them (see `join.rs`), so no statistics
//! update can make it stale.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use walden_engine::catalog::TableDef;
use walden_engine::types::{Len, RowDecoder, SqlType, Value};
use walden_engine::Database;
use walden_storage::hash::FastBuild;

use crate::ast::{Expr, OrderByItem, Select, TableSource};
use crate::exec::eval::{Col, Env};
use crate::exec::execute::query::{Rows, TableRef};
use crate::exec::plan::access::{AccessPath, PathShape, RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::{ColumnInfo, RowSet, SqlError};

mod assign;

/// The most plans a session keeps; past it the cache starts over (as the parse cache does),
/// which keeps a session that never repeats a statement cheap.
const MAX_PLANS: usize = 1024;

/// How many times `DBCC FREEPROCCACHE` ran in this process: it empties every session's
/// cache, as SQL Server's empties the instance's, by making the plans made before it
/// invalid (each remembers the count it was made under).
static FREED: AtomicU64 = AtomicU64::new(0);

/// `DBCC FREEPROCCACHE`: every kept plan of every session is made again at its next use.
pub(crate) fn free_proc_cache() {
    FREED.fetch_add(1, Ordering::AcqRel);
}

/// The plan of one SELECT block over one table (see the module's documentation).
pub(crate) struct BlockPlan {
    /// The block it was made for, and its query's ORDER BY (which decides the columns read).
    sel: Select,
    /// The block's [`ParsedId`](crate::ast::ParsedId) when it was a node the parser made.
    parsed: Option<u64>,
    order_by: Vec<OrderByItem>,
    /// The table's database: the session's when the plan was made (names with no
    /// database resolve there), or tempdb. Not held: a kept plan must not keep a dropped
    /// database open (nor make DROP DATABASE see it in use).
    db: Weak<Database>,
    /// The schema version of the table's database, read before the names were resolved.
    version: u64,
    /// For a temporary table: the session's name for it (lower-cased) and its name in
    /// tempdb when the plan was made.
    temp: Option<(String, String)>,
    /// The table's definition, the name its columns are qualified with, and the columns
    /// the block reads (see [`TableRef`]).
    def: Arc<TableDef>,
    qual: String,
    wanted: Option<Arc<[bool]>>,
    /// The columns of its rows: the table's and its row locator.
    cols: Vec<Col>,
    /// Positions among the WHERE clause's conjuncts of those that name no column of the
    /// table, checked once before it is read: if one does not hold, nothing is read.
    constant: Vec<usize>,
    /// Positions of the others, which every row read must satisfy, in their order.
    own: Vec<usize>,
    /// Positions in `own` of those the seek does not already guarantee
    /// (`AccessPath::exact_seek_conjuncts`): what each row the seek finds is checked by. A
    /// read that falls back to a scan checks all of `own`.
    checks: Vec<usize>,
    /// How the table is read, its probes named among the conjuncts of `own`.
    path: PathShape,
    /// Whether its block is a plain assignment (`SELECT @v = expr, ... FROM t WHERE ...`
    /// with no aggregate, window, grouping, DISTINCT, TOP or INTO), which
    /// [`Run::assign_by_kept_plan`] runs without the general SELECT's machinery; worked out
    /// at its first such use (the plan is only ever used for a block equal to its own).
    assigns_only: OnceLock<bool>,
    /// For such a block, the columns its assignments read bare (see `assigned_columns`).
    assigned_columns: OnceLock<Vec<Option<usize>>>,
    /// For such a block that [`Run::assign_by_key`] can run: the table's column its one
    /// probe fixes (see `lookup_key_column`).
    lookup_key: OnceLock<Option<usize>>,
    /// [`FREED`] when it was made.
    freed: u64,
    /// Executions that used the plan, its first included.
    uses: AtomicU64,
}

impl std::fmt::Debug for BlockPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockPlan")
            .field("table", &self.def.name)
            .field("path", &self.path)
            .field("uses", &self.uses)
            .finish_non_exhaustive()
    }
}

/// What [`BlockPlan::new`] is made of: the block, and what the planner decided for it.
pub(crate) struct Decided<'s> {
    pub(crate) sel: &'s Select,
    pub(crate) order_by: &'s [OrderByItem],
    pub(crate) version: u64,
    pub(crate) temp: Option<(String, String)>,
    pub(crate) table: TableRef,
    pub(crate) cols: Vec<Col>,
    pub(crate) constant: Vec<usize>,
    pub(crate) own: Vec<usize>,
    pub(crate) checks: Vec<usize>,
    pub(crate) path: PathShape,
}

impl BlockPlan {
    /// The columns of the rows it reads: the table's and its row locator.
    pub(crate) fn cols(&self) -> &[Col] {
        &self.cols
    }

    pub(crate) fn new(d: Decided<'_>) -> BlockPlan {
        BlockPlan {
            sel: d.sel.clone(),
            parsed: d.sel.parsed.get(),
            order_by: d.order_by.to_vec(),
            db: Arc::downgrade(&d.table.db),
            version: d.version,
            temp: d.temp,
            def: d.table.def,
            qual: d.table.qual,
            wanted: d.table.wanted,
            cols: d.cols,
            constant: d.constant,
            own: d.own,
            checks: d.checks,
            path: d.path,
            assigns_only: OnceLock::new(),
            assigned_columns: OnceLock::new(),
            lookup_key: OnceLock::new(),
            freed: FREED.load(Ordering::Acquire),
            // The execution that makes a plan uses it.
            uses: AtomicU64::new(1),
        }
    }
}

/// A session's kept plans, by the address of their block's syntax node (found at every
/// execution of a block, so hashed by the engine's quick hasher: an address is no key a
/// client chooses).
#[derive(Debug, Default)]
pub(crate) struct PlanCache {
    blocks: HashMap<usize, Arc<BlockPlan>, FastBuild>,
    /// The row decoder of the last key lookup (`Run::seek_row`).
    point_decoder: Option<PointDecoder>,
    /// The key and the row of the last [`Run::assign_by_key`], whose allocations the next
    /// one reuses: a loop's lookups need none of their own.
    lookup_key: Vec<u8>,
    lookup_row: Vec<Value>,
}

/// A decoder of a table's rows for the columns a lookup wants: a loop's lookups of one
/// table find where their columns are once, not at every row.
#[derive(Debug)]
pub(crate) struct PointDecoder {
    /// The definition it was made for: a change of the table's columns makes a new one, so
    /// the same definition means the same columns.
    def: Arc<TableDef>,
    wanted: Option<Arc<[bool]>>,
    decoder: RowDecoder,
}

/// The key of a block's plan.
fn key(sel: &Select) -> usize {
    std::ptr::from_ref(sel) as usize
}

impl PlanCache {
    /// Forgets every plan (`DBCC FREEPROCCACHE`).
    pub(crate) fn clear(&mut self) {
        self.blocks.clear();
        self.point_decoder = None;
    }

    /// A decoder of `t`'s rows for the columns it wants: the kept one, if made for the same
    /// definition and columns; else a new one, kept in its place. Lent where it lies, not
    /// moved out and back, as a loop of lookups asks for it at every iteration.
    pub(crate) fn point_decoder(&mut self, t: &TableRef) -> &RowDecoder {
        self.point_decoder_of(&t.def, t.wanted.as_ref())
    }

    /// [`PlanCache::point_decoder`] of the table `def` defines, for the columns `wanted`
    /// flags (all without).
    fn point_decoder_of(
        &mut self,
        def: &Arc<TableDef>,
        wanted: Option<&Arc<[bool]>>,
    ) -> &RowDecoder {
        let fits = self.point_decoder.as_ref().is_some_and(|kept| {
            Arc::ptr_eq(&kept.def, def) && kept.wanted.as_deref() == wanted.map(|w| &**w)
        });
        if !fits {
            self.point_decoder = None;
        }
        let kept = self.point_decoder.get_or_insert_with(|| PointDecoder {
            def: Arc::clone(def),
            wanted: wanted.cloned(),
            decoder: RowDecoder::of_columns(def.columns.iter().map(|c| c.ty), wanted.map(|w| &**w)),
        });
        &kept.decoder
    }

    /// Keeps `plan` for its block, in place of any older one.
    pub(crate) fn insert(&mut self, sel: &Select, plan: Arc<BlockPlan>) {
        if self.blocks.len() >= MAX_PLANS {
            self.blocks.clear();
        }
        self.blocks.insert(key(sel), plan);
    }

    /// `sys.dm_exec_cached_plans`, of this session's plans: a row per kept plan (valid or
    /// not yet found stale), with SQL Server's columns. `usecounts` counts the executions
    /// that used it; `plan_handle` is Walden's key of the block; `objtype` is `Adhoc`
    /// whatever ran the block (a batch, a procedure, `sp_executesql`), and `objectid`,
    /// Walden's addition, is the id of the table it reads.
    pub(crate) fn view(&self) -> RowSet {
        let column = ColumnInfo::not_null;
        let columns = vec![
            column("bucketid", SqlType::Int),
            column("refcounts", SqlType::Int),
            column("usecounts", SqlType::Int),
            column("size_in_bytes", SqlType::Int),
            column("cacheobjtype", SqlType::NVarChar(Len::N(50))),
            column("objtype", SqlType::NVarChar(Len::N(20))),
            column("plan_handle", SqlType::VarBinary(Len::N(64))),
            column("objectid", SqlType::Int),
        ];
        let mut plans: Vec<(&usize, &Arc<BlockPlan>)> = self.blocks.iter().collect();
        plans.sort_by_key(|(k, _)| **k);
        let int = |n: u64| Value::Int(i32::try_from(n).unwrap_or(i32::MAX));
        let rows = plans
            .into_iter()
            .enumerate()
            .map(|(bucket, (key, plan))| {
                vec![
                    int(bucket as u64),
                    int(Arc::strong_count(plan) as u64),
                    int(plan.uses.load(Ordering::Relaxed)),
                    int(std::mem::size_of::<BlockPlan>() as u64),
                    Value::NStr("Compiled Plan".into()),
                    Value::NStr("Adhoc".into()),
                    Value::Binary(key.to_be_bytes().to_vec()),
                    int(u64::from(plan.def.id)),
                ]
            })
            .collect();
        RowSet { columns, rows }
    }
}

impl Run<'_> {
    /// Whether a plan of `sel` may be kept or used: a block of one source named by a table
    /// name, with no row goal (TOP), and no common table expression in scope (which could
    /// take the name).
    pub(crate) fn may_cache_block(&self, sel: &Select) -> bool {
        // A table with hints is planned each time: resolving it is what applies its hints
        // to the statement (`exec::table_hints`).
        matches!(sel.from.as_slice(), [TableSource::Table { hints, .. }] if hints.is_empty())
            && sel.top.is_none()
            && self.ctes.is_empty()
    }

    /// The valid kept plan of `sel`, if it may have one ([`Run::may_cache_block`]), with its
    /// table.
    pub(crate) fn block_plan_of(
        &self,
        sel: &Select,
        order_by: &[OrderByItem],
    ) -> Option<(Arc<BlockPlan>, TableRef)> {
        if self.may_cache_block(sel) {
            self.cached_block(sel, order_by, true)
        } else {
            None
        }
    }

    /// The kept plan of `sel` (with its query's `order_by`), if there is one and it is still
    /// valid (see the module's documentation), with its table.
    ///
    /// Without `with_qual` the table's qualifier is left empty (no copy of it is made): for
    /// a caller that only reads the table by the plan's path, which names no column by it
    /// (the rows' columns are the plan's own).
    fn cached_block(
        &self,
        sel: &Select,
        order_by: &[OrderByItem],
        with_qual: bool,
    ) -> Option<(Arc<BlockPlan>, TableRef)> {
        let plan = self.kept_block(sel, order_by)?;
        let table = self.kept_table(plan, with_qual);
        Some((Arc::clone(plan), table))
    }

    /// The kept plan of `sel` (with its query's `order_by`), if there is one and it is still
    /// valid, counted as used. Borrowed where it lies: a loop's lookup takes no reference
    /// to its plan's table or database unless it needs a [`TableRef`] (`kept_table`).
    fn kept_block(&self, sel: &Select, order_by: &[OrderByItem]) -> Option<&Arc<BlockPlan>> {
        let plan = self.s.plans.blocks.get(&key(sel))?;
        // The plan's database is the one it was made for if it is at the same address: its
        // weak reference keeps that allocation, so no other database can be there.
        if plan.db.as_ptr() != Arc::as_ptr(self.plan_db(plan))
            || self.plan_db(plan).schema_version() != plan.version
            || plan.freed != FREED.load(Ordering::Acquire)
        {
            return None;
        }
        if let Some((user, internal)) = &plan.temp {
            // Where a temporary table is an error (4508) the planner says so, not the cache.
            if self.s.checking_module || self.s.function_depth > 0 {
                return None;
            }
            if self.s.temp_tables.get(user) != Some(internal) {
                return None;
            }
        }
        let same_node = plan.parsed.is_some() && plan.parsed == sel.parsed.get();
        if (!same_node && plan.sel != *sel) || plan.order_by.as_slice() != order_by {
            return None;
        }
        // Only this session's thread changes the count (its plans are its own), so a load
        // and a store count every use, without a locked read-modify-write.
        plan.uses.store(plan.uses.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        Some(plan)
    }

    /// The database a plan's names resolve in, for this session: tempdb for a temporary
    /// table's, else the session's.
    fn plan_db(&self, plan: &BlockPlan) -> &Arc<Database> {
        match plan.temp {
            Some(_) => self.s.instance.tempdb(),
            None => &self.s.db,
        }
    }

    /// The table a valid kept plan reads (see [`Run::cached_block`] for `with_qual`).
    fn kept_table(&self, plan: &BlockPlan, with_qual: bool) -> TableRef {
        TableRef {
            db: Arc::clone(self.plan_db(plan)),
            def: Arc::clone(&plan.def),
            qual: if with_qual { plan.qual.clone() } else { String::new() },
            view_check: None,
            wanted: plan.wanted.clone(),
        }
    }

    /// A kept plan bound to `conjuncts` (its block's WHERE clause's) for a read of one source
    /// (`join/stream.rs`): the columns of its rows, the conjuncts each row is checked by
    /// (all of the table's own: a read that falls back to a scan needs every one), and the
    /// table and its path; no path when a constant conjunct does not hold (nothing is read).
    #[allow(clippy::type_complexity)]
    pub(crate) fn bind_block_plan<'e>(
        &mut self,
        (plan, table): (Arc<BlockPlan>, TableRef),
        conjuncts: &[&'e Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<(Vec<Col>, Vec<&'e Expr>, Option<(TableRef, AccessPath<'e>)>), SqlError> {
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        let own: Vec<&'e Expr> = plan.own.iter().map(|&i| conjuncts[i]).collect();
        for &i in &plan.constant {
            if self.predicate(conjuncts[i], &env)? != Some(true) {
                return Ok((plan.cols.clone(), own, None));
            }
        }
        let Some(path) = plan.path.path(&own) else {
            return Err(misfit());
        };
        Ok((plan.cols.clone(), own, Some((table, path))))
    }

    /// Runs a kept plan for `sel`, whose WHERE clause's conjuncts are `conjuncts`: the rows of
    /// its table that satisfy them, with their columns, as the planner's own read of that
    /// one leaf gives them (`join.rs`: the constant conjuncts first, then the path and each
    /// row checked).
    pub(crate) fn run_block_plan(
        &mut self,
        plan: &BlockPlan,
        table: &TableRef,
        conjuncts: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Rows, SqlError> {
        let rows = self.run_block_plan_rows(plan, table, conjuncts, outer)?;
        Ok(Rows { cols: plan.cols.clone(), rows })
    }

    /// [`Run::run_block_plan`]'s rows alone, under the plan's columns ([`BlockPlan::cols`]).
    pub(crate) fn run_block_plan_rows(
        &mut self,
        plan: &BlockPlan,
        table: &TableRef,
        conjuncts: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut rows = EveryRow(Vec::new());
        self.run_block_plan_into(plan, table, conjuncts, outer, &mut rows)?;
        Ok(rows.0)
    }

    /// Runs a kept plan as [`Run::run_block_plan`] does, giving each row to `sink` until it
    /// says stop.
    fn run_block_plan_into(
        &mut self,
        plan: &BlockPlan,
        table: &TableRef,
        conjuncts: &[&Expr],
        outer: Option<&Env<'_>>,
        sink: &mut dyn RowSink,
    ) -> Result<(), SqlError> {
        let cols = &plan.cols;
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        for &i in &plan.constant {
            if self.predicate(conjuncts[i], &env)? != Some(true) {
                return Ok(());
            }
        }
        // `own` lists positions in ascending order, each once: as many as there are
        // conjuncts means every one (a loop's key lookup), which needs no list of its own.
        let own: Cow<'_, [&Expr]> = if plan.own.len() == conjuncts.len() {
            Cow::Borrowed(conjuncts)
        } else {
            Cow::Owned(plan.own.iter().map(|&i| conjuncts[i]).collect())
        };
        let Some(path) = plan.path.path(&own) else {
            return Err(misfit());
        };
        let checks: Vec<&Expr> = plan.checks.iter().map(|&i| own[i]).collect();
        let keep = (!checks.is_empty()).then_some(RowFilter { cols, exprs: &checks, outer });
        // False (no row given) for a probe that does not convert to its key column: a scan,
        // checking everything, as the planner's own read does (`Run::read_leaf`).
        if !self.read_path_into(table, &path, &env, keep, sink)? {
            let all = Some(RowFilter { cols, exprs: &own, outer });
            self.read_path_into(table, &AccessPath::scan(), &env, all, sink)?;
        }
        Ok(())
    }
}

/// The sink that keeps every row a plan gives, in order.
struct EveryRow(Vec<Vec<Value>>);

impl RowSink for EveryRow {
    fn push(&mut self, _: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        self.0.push(row);
        Ok(true)
    }
}

/// A kept plan whose probes are not where it says among its block's conjuncts: never, since
/// a plan is used only for a block equal to its own.
fn misfit() -> SqlError {
    SqlError::new(50000, "Walden's plan cache kept a plan that does not fit its statement.")
}
