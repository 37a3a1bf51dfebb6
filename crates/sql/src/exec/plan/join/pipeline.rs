//! The join steps after a large one, streamed.
//!
//! `Run::join_leaves` joins one leaf at a time and holds each step's output, so that the
//! next step's method is chosen with the exact count of rows joined so far. That is right
//! while the rows are few; a step whose output is large (a join on a column of few values,
//! a cross product the later steps narrow) would hold them all, and fail the statement
//! with error 701 past the memory workspace, even when the last step and its consumer
//! stream. So a step before the last holds at most [`PAUSE_ROWS`] rows: past them, at the
//! end of a left row, the steps after it are set up as a pipeline ([`Stage`]), their
//! methods chosen by [`Run::next_step`] as usual for the rows the step is then expected to
//! give (its rows so far scaled by the share of its input it has read, then the planned
//! estimate of each step after it), and every row the step held or makes from then on
//! goes through them in batches: each stage queues the rows it is given, and once it holds
//! [`BATCH_ROWS`] of them joins them to its leaf, in order, its pairs queued at the next
//! stage (which joins its batch as soon as it is full, and so on down to the last step's
//! output: the caller's sink, or the rows the plan returns, held as the last step's are).
//! When the paused step has given its last row, the queues are joined first to last
//! (`Pipeline::finish`). Memory then holds the stages' build sides and at most a batch per
//! stage, not the intermediate result. Each stage takes its rows in the order they come
//! and gives each row's pairs in turn, so the order of the rows is the one the held steps
//! would give. Under a row goal a batch is one row: the rows go depth first, and no stage
//! reads a row past the goal.
//!
//! A stage seeks (index nested loops: a seek per row, from the last seek's cursor, as the
//! held step does), probes a hash of its leaf built when the pipeline is set up, or loops
//! over its leaf's rows read then. A hash stage's build side that the memory grant does not
//! cover cannot be partitioned to disk against rows that come one at a time, so the
//! pipeline is not set up then: the step holds its rows as before (and the usual next
//! step partitions that build side, `hash_spill.rs`). The row goal of a plain `TOP (n)` is
//! the last stage's: once met, every stage and the paused step stop. A stage prepares its
//! checks and probes once, when it is set up, and a seek stage keeps its cursor from one
//! row's seek to the next across its batches.
//!
//! Only a planned order (up to `order::MAX_SEARCHED` leaves) streams: the stages' checks
//! are fixed by the order ([`StageSpec`]). Nothing may be left to apply to the joined rows
//! after the last step: no semi-join still to run, no ON conjunct the plan could not place.

use walden_engine::types::Value;

use super::sought::{pair_into, SoughtPairs};
use super::{
    clone_ref, equi_keys, is_key_of, Flat, Forward, HashMatch, Input, JoinOutput, Shape, Step,
};
use crate::ast::Expr;
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::grant::MemoryGrant;
use crate::exec::execute::hash_spill::hashed_bytes;
use crate::exec::execute::query::TableRef;
use crate::exec::plan::access::{AccessPath, RowFilter, RowSink};
use crate::exec::session::{Run, SeekSpare};
use crate::exec::SqlError;

/// The rows a join step before the last holds before the steps after it stream.
pub(super) const PAUSE_ROWS: usize = 8192;

/// The rows a stage's queue takes before it joins them, where nothing stops the pipeline
/// before its end (no row goal): a stage then runs a batch of rows at a time, its hash
/// table or its index pages hot and its output made without returning to the stages
/// before it, which is what holding the rows gave (a row at a time through every stage
/// cost a third more on a 2,000,000-row intermediate result). A row goal streams a row at
/// a time, so that no stage reads past the goal.
const BATCH_ROWS: usize = 1024;

/// What the step that joins the leaf at one position of a planned order checks, which the
/// order alone decides.
pub(super) struct StageSpec<'e> {
    leaf: usize,
    /// The leaves joined before it, as bits.
    before: u64,
    left_cols: Vec<Col>,
    /// The joined row's columns after it, in join order.
    cols: Vec<Col>,
    /// The conjuncts it checks (positions in `Flat::conjuncts`): those whose leaves are
    /// all joined first at this position.
    checks: Vec<usize>,
    /// Those of the leaf alone, applied as its rows are read; the others.
    local: Vec<&'e Expr>,
    rest: Vec<&'e Expr>,
    /// `rest` without the equalities a hash join on them finds exactly (`HashMatch::exact`).
    keyed: Vec<&'e Expr>,
    /// All it checks, and those a seek of the leaf's chosen path does not make hold
    /// (`AccessPath::exact_seek_conjuncts`).
    all: Vec<&'e Expr>,
    inexact: Vec<&'e Expr>,
}

/// What a step that may stream the steps after it needs to set them up: their specs, and
/// where the last one's rows go.
pub(super) struct Streaming<'f> {
    pub(super) specs: &'f [StageSpec<'f>],
    /// The caller's sink, given the rows in the FROM clause's column order (`positions`).
    pub(super) sink: Option<&'f mut dyn RowSink>,
    pub(super) positions: &'f [usize],
    /// The last step's row goal.
    pub(super) goal: usize,
    pub(super) outer: Option<&'f Env<'f>>,
}

/// The stages set up after a paused step and the last one's output.
pub(super) struct Pipeline<'f> {
    stages: Vec<Stage<'f>>,
    pub(super) tail: JoinOutput<'f>,
    /// The last stage's output said stop (a row goal met, a sink that stops).
    pub(super) stopped: bool,
    /// The rows a stage's queue takes before they are joined (see [`BATCH_ROWS`]).
    batch: usize,
}

/// One step streamed: the leaf it joins and how.
struct Stage<'f> {
    spec: &'f StageSpec<'f>,
    outer: Option<&'f Env<'f>>,
    kind: Kind<'f>,
    seen: usize,
    /// Rows given to the stage, not yet joined.
    queue: Vec<Vec<Value>>,
}

// One per stage, a few per statement, never moved per row: their sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Kind<'f> {
    Seek {
        table: TableRef,
        path: AccessPath<'f>,
        found: Filter<'f>,
        all: Filter<'f>,
        /// What each found row is cut to before it is paired (`Flat::shape`).
        right: Shape,
        /// The stage's own cursor from one seek to the next (`Run::seek_spare`).
        spare: Option<SeekSpare>,
        /// The leaf read whole, for a probe that does not convert to the key's type.
        scanned: Option<Vec<Vec<Value>>>,
    },
    Hash {
        right: Vec<Vec<Value>>,
        matcher: HashMatch,
        probes: Vec<Scalar<'f>>,
        check: Filter<'f>,
        /// Holds the hash table's memory for as long as it lives.
        _grant: MemoryGrant,
    },
    Loops {
        right: Vec<Vec<Value>>,
        check: Filter<'f>,
    },
}

impl Stage<'_> {
    /// Joins the rows waiting in the stage's queue, in order, to its leaf, each pair that
    /// passes given to `out`; stops early once `out` is full. The queue is left empty.
    fn join_queued(&mut self, run: &mut Run<'_>, out: &mut JoinOutput<'_>) -> Result<(), SqlError> {
        let mut rows = std::mem::take(&mut self.queue);
        let joined = self.join_rows(run, &mut rows, out);
        // The queue keeps its allocation for the next batch.
        rows.clear();
        self.queue = rows;
        joined
    }

    /// [`Stage::join_queued`] of `rows`, which it drains.
    fn join_rows(
        &mut self,
        run: &mut Run<'_>,
        rows: &mut Vec<Vec<Value>>,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        let left_cols = &self.spec.left_cols;
        let outer = self.outer;
        let seen = &mut self.seen;
        match &mut self.kind {
            Kind::Seek { table, path, found, all, right, spare, scanned } => {
                // The stage's cursor in place of an enclosing read's while it seeks, kept
                // from one seek to the next as the held step keeps it.
                let enclosing = std::mem::replace(&mut run.seek_spare, spare.take());
                let mut seeks = || -> Result<(), SqlError> {
                    for left in rows.drain(..) {
                        if out.full() {
                            break;
                        }
                        run.row_interruption_point(*seen)?;
                        *seen += 1;
                        let env = Env::new(left_cols, &left, outer);
                        let mut pairs = SoughtPairs::new(&left, right, found, out);
                        let read = run.read_path_into(table, path, &env, None, &mut pairs);
                        let held = pairs.into_held();
                        if read? {
                            if let Some(row) = held {
                                pair_into(run, found, out, left, row)?;
                            }
                            continue;
                        }
                        // A probe that does not convert: this row is checked against the
                        // whole table, read once, on every conjunct (as the held step does).
                        if scanned.is_none() {
                            let mut rows =
                                run.read_leaf(table, &AccessPath::scan(), outer, usize::MAX, None)?;
                            rows.iter_mut().for_each(|r| right.apply(r));
                            *scanned = Some(rows);
                        }
                        let rows = scanned.as_deref().unwrap_or(&[]);
                        run.emit_each(out, left, rows.len(), |k| &rows[k], all)?;
                    }
                    Ok(())
                };
                let sought = seeks();
                *spare = std::mem::replace(&mut run.seek_spare, enclosing);
                sought?;
            }
            Kind::Hash { right, matcher, probes, check, .. } => {
                for left in rows.drain(..) {
                    if out.full() {
                        break;
                    }
                    run.row_interruption_point(*seen)?;
                    *seen += 1;
                    let env = Env::new(left_cols, &left, outer);
                    let found = matcher.candidates(run, probes, &env)?;
                    let pair = |k: usize| right[found[k]].as_slice();
                    run.emit_each(out, left, found.len(), pair, check)?;
                }
            }
            Kind::Loops { right, check } => {
                for left in rows.drain(..) {
                    if out.full() {
                        break;
                    }
                    run.row_interruption_point(*seen)?;
                    *seen += 1;
                    run.emit_each(out, left, right.len(), |k| right[k].as_slice(), check)?;
                }
            }
        }
        Ok(())
    }
}

/// The stages after one and the output after them, as a sink of rows: a row joins the
/// next stage's queue, which is joined once it holds `batch` rows.
struct Rest<'a, 'f> {
    stages: &'a mut [Stage<'f>],
    tail: &'a mut JoinOutput<'f>,
    batch: usize,
}

impl Rest<'_, '_> {
    /// Joins the first stage's queued rows, and, as the later stages' queues fill, theirs.
    fn drain(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        let Some((stage, later)) = self.stages.split_first_mut() else { return Ok(()) };
        let mut next = Rest { stages: later, tail: &mut *self.tail, batch: self.batch };
        let mut out = JoinOutput {
            rows: Vec::new(),
            forward: Some(Forward { positions: &[], sink: &mut next, stopped: false }),
            goal: usize::MAX,
            width: 0,
            grant: None,
            pipe: None,
            may_stream: false,
            over: None,
        };
        stage.join_queued(run, &mut out)
    }

    /// Drains every queue in turn, first to last: the rows still waiting at the end.
    fn drain_all(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        for i in 0..self.stages.len() {
            let mut rest =
                Rest { stages: &mut self.stages[i..], tail: &mut *self.tail, batch: self.batch };
            rest.drain(run)?;
            if self.tail.full() {
                break;
            }
        }
        Ok(())
    }
}

impl RowSink for Rest<'_, '_> {
    fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<bool, SqlError> {
        let Some(stage) = self.stages.first_mut() else {
            if !self.tail.full() {
                self.tail.push(run, row)?;
            }
            return Ok(!self.tail.full());
        };
        stage.queue.push(row);
        if stage.queue.len() >= self.batch {
            self.drain(run)?;
        }
        Ok(!self.tail.full())
    }
}

impl Pipeline<'_> {
    /// Runs `row` through the stages (a batch at a time), unless the last one's output has
    /// stopped.
    pub(super) fn push(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<(), SqlError> {
        if !self.stopped {
            let mut rest =
                Rest { stages: &mut self.stages, tail: &mut self.tail, batch: self.batch };
            self.stopped = !rest.push(run, row)?;
        }
        Ok(())
    }

    /// Runs the rows still queued through the stages: the paused step has given its last.
    pub(super) fn finish(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        if !self.stopped {
            let mut rest =
                Rest { stages: &mut self.stages, tail: &mut self.tail, batch: self.batch };
            rest.drain_all(run)?;
            self.stopped = self.tail.full();
        }
        Ok(())
    }

    /// The conjuncts the stages checked.
    pub(super) fn checks(&self) -> impl Iterator<Item = usize> + '_ {
        self.stages.iter().flat_map(|s| s.spec.checks.iter().copied())
    }

    /// The last stage's columns (every leaf's, in join order) and the rows it holds: none
    /// where they went to the caller's sink.
    pub(super) fn into_rows(self) -> (Vec<Col>, Vec<Vec<Value>>) {
        let cols = self.stages.last().map_or_else(Vec::new, |s| s.spec.cols.clone());
        (cols, self.tail.rows)
    }
}

impl Run<'_> {
    /// The [`StageSpec`] of each position of the planned `order` of `flat`'s leaves.
    pub(super) fn stage_specs<'e>(&self, flat: &Flat<'e>, order: &[usize]) -> Vec<StageSpec<'e>> {
        let mut specs = Vec::with_capacity(order.len());
        let mut before = 0u64;
        let mut left_cols: Vec<Col> = Vec::new();
        for &leaf in order {
            let bit = 1u64 << leaf;
            let mask = before | bit;
            let checks: Vec<usize> = (0..flat.conjuncts.len())
                .filter(|&i| {
                    let c = &flat.conjuncts[i];
                    !c.semi && c.leaves.is_some_and(|m| m & !before != 0 && m & !mask == 0)
                })
                .collect();
            let pick = |local: bool| -> Vec<&'e Expr> {
                let of = checks.iter().map(|&i| &flat.conjuncts[i]);
                of.filter(|c| (c.leaves == Some(bit)) == local).map(|c| c.expr).collect()
            };
            let (local, rest) = (pick(true), pick(false));
            let mut all = local.clone();
            all.extend(rest.iter().copied());
            let right_cols = &flat.leaves[leaf].cols;
            let mut cols = left_cols.clone();
            cols.extend(right_cols.iter().cloned());
            // What `next_step` weighs for the leaf: its keys and its path are these.
            let joining: Vec<&'e Expr> = flat
                .conjuncts
                .iter()
                .filter(|c| c.leaves.is_some_and(|m| m & bit != 0 && m & !mask == 0))
                .map(|c| c.expr)
                .collect();
            let keys = equi_keys(self, flat, &joining, before, bit, &left_cols, right_cols);
            let keyed = rest.iter().copied().filter(|e| !is_key_of(e, &keys)).collect();
            let inexact = match &flat.leaves[leaf].input {
                Input::Table(t) if before != 0 => {
                    let path = self.path(flat, t, &joining, leaf, before);
                    let exact = path.exact_seek_conjuncts(&t.def, &joining);
                    let exact: Vec<&Expr> = exact.into_iter().map(|k| joining[k]).collect();
                    all.iter()
                        .copied()
                        .filter(|e| !exact.iter().any(|x| std::ptr::eq(*x, *e)))
                        .collect()
                }
                _ => all.clone(),
            };
            specs.push(StageSpec {
                leaf,
                before,
                left_cols: left_cols.clone(),
                cols: cols.clone(),
                checks,
                local,
                rest,
                keyed,
                all,
                inexact,
            });
            before = mask;
            left_cols = cols;
        }
        specs
    }

    /// Sets up the steps after a paused one (see the module's documentation) once `out`
    /// holds [`PAUSE_ROWS`] rows, if `streaming` allows it, and gives them the rows held;
    /// from then on `out` gives each row to them. `expected` is how many rows the paused
    /// step is expected to give in all. A hash stage whose build side the grant does not
    /// cover leaves the step holding its rows, and `streaming` spent so that it is not
    /// tried again.
    pub(super) fn stream_rest<'e: 'f, 'f>(
        &mut self,
        flat: &mut Flat<'e>,
        streaming: &mut Option<Streaming<'f>>,
        out: &mut JoinOutput<'f>,
        expected: f64,
    ) -> Result<(), SqlError> {
        let due = out.rows.len() >= PAUSE_ROWS || out.over.is_some();
        if out.pipe.is_some() || !due {
            return Ok(());
        }
        let Some(s) = streaming.take() else { return Ok(()) };
        // The held rows (no more than the workspace had room for, at most `PAUSE_ROWS`) are
        // fed to the stages and gone: their hold ends, to give the stages' hashes room.
        out.grant = None;
        let Some(stages) = self.stages(flat, s.specs, expected, s.outer)? else {
            // The rows are held as before, and past the workspace that is error 701.
            out.may_stream = false;
            return out.over.take().map_or(Ok(()), Err);
        };
        out.over = None;
        let width = s.specs.last().map_or(0, |spec| spec.cols.len());
        let forward = s.sink.map(|sink| Forward { positions: s.positions, sink, stopped: false });
        let tail = JoinOutput {
            rows: Vec::new(),
            forward,
            goal: s.goal,
            width,
            grant: None,
            pipe: None,
            may_stream: false,
            over: None,
        };
        let batch = if s.goal == usize::MAX { BATCH_ROWS } else { 1 };
        let mut pipe = Box::new(Pipeline { stages, tail, stopped: false, batch });
        for (n, row) in std::mem::take(&mut out.rows).into_iter().enumerate() {
            self.row_interruption_point(n)?;
            pipe.push(self, row)?;
            if pipe.stopped {
                break;
            }
        }
        out.pipe = Some(pipe);
        Ok(())
    }

    /// The stages of `specs`, the first given about `rows` rows; None if a hash stage's
    /// build side is beyond the memory grant, with the computed rows of the stages read so
    /// far given back to their leaves.
    fn stages<'e: 'f, 'f>(
        &mut self,
        flat: &mut Flat<'e>,
        specs: &'f [StageSpec<'f>],
        mut rows: f64,
        outer: Option<&'f Env<'f>>,
    ) -> Result<Option<Vec<Stage<'f>>>, SqlError> {
        let (own, reads) = self.leaf_estimates(flat);
        let mut stages: Vec<Stage<'f>> = Vec::with_capacity(specs.len());
        for spec in specs {
            // A stage is given its rows a batch at a time, not held to be walked: no merge.
            let (_, step) = self.next_step(
                flat,
                spec.before,
                rows,
                &spec.left_cols,
                &|_| false,
                Some(spec.leaf),
            )?;
            rows = self.estimate_step(flat, spec.before, rows, spec.leaf, &own, &reads).1;
            let right_cols = flat.leaves[spec.leaf].cols.clone();
            let filter =
                |exprs: &'f [&'f Expr]| Filter::new(RowFilter { cols: &spec.cols, exprs, outer });
            let kind = match step {
                Step::IndexLoops(path, _) => {
                    let Input::Table(t) = &flat.leaves[spec.leaf].input else {
                        return Err(SqlError::new(
                            50000,
                            "Walden's planner sought a source that is not a table.",
                        ));
                    };
                    Kind::Seek {
                        table: clone_ref(t),
                        path,
                        found: filter(&spec.inexact),
                        all: filter(&spec.all),
                        right: flat.shape(spec.leaf),
                        spare: Some(SeekSpare::default()),
                        scanned: None,
                    }
                }
                Step::Hash(keys) => {
                    let right = self.leaf_rows(flat, spec.leaf, &spec.local, outer, None)?;
                    let mut grant = self.memory_grant();
                    if !grant.try_reserve(hashed_bytes(&right)) {
                        give_back(flat, spec.leaf, right);
                        for stage in stages {
                            if let Kind::Hash { right, .. } | Kind::Loops { right, .. } = stage.kind
                            {
                                give_back(flat, stage.spec.leaf, right);
                            }
                        }
                        return Ok(None);
                    }
                    let matcher = HashMatch::build(self, &keys, &right_cols, &right, outer)?;
                    let probes = HashMatch::probes(&keys, &spec.left_cols);
                    let check = filter(if matcher.exact() { &spec.keyed } else { &spec.rest });
                    Kind::Hash { right, matcher, probes, check, _grant: grant }
                }
                Step::Merge(_) => {
                    return Err(SqlError::new(50000, "Walden's planner merged a streamed stage."));
                }
                Step::Loops => {
                    let right = self.leaf_rows(flat, spec.leaf, &spec.local, outer, None)?;
                    Kind::Loops { right, check: filter(&spec.rest) }
                }
            };
            stages.push(Stage { spec, outer, kind, seen: 0, queue: Vec::new() });
        }
        Ok(Some(stages))
    }
}

/// Rows of a computed leaf taken for a stage that is not set up, back in the leaf: they
/// are filtered by the leaf's own conjuncts already, which the usual step applies again
/// (they keep the same rows). A table leaf is read again.
fn give_back(flat: &mut Flat<'_>, leaf: usize, rows: Vec<Vec<Value>>) {
    if let Input::Rows(held) = &mut flat.leaves[leaf].input {
        *held = rows;
    }
}
