//! The join steps: the leaves joined one at a time in the planned or greedy order, each by
//! index nested loops, hash join or nested loops (see `join.rs`), and the joined rows put
//! back in the FROM clause's column order.

use walden_engine::types::Value;

use super::sought::{pair_into, SoughtPairs};
use super::{
    clear_locators, clone_ref, family, locator_positions, merge, order, pipeline, semi, Conjunct,
    Emitted, Flat, Forward, HashMatch, Input, JoinOutput, Leaf, RowGoal, Step, MAX_LEAVES,
};
use crate::ast::{BinaryOp, Expr, ExprKind, Ident};
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::query::{Rows, TableRef};
use crate::exec::plan::access::{self, AccessPath, RowFilter, RowSink, SEEK_COST};
use crate::exec::session::{Run, SeekSpare};
use crate::exec::SqlError;

impl Run<'_> {
    /// Joins every leaf of `flat`, applying the conjuncts as their leaves arrive; the last
    /// step stops at `goal` rows.
    pub(super) fn join_leaves(
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
            let ascends = |at: usize| merge::ascending(&acc.rows, at);
            let (leaf, step) =
                self.next_step(flat, joined, acc.rows.len() as f64, &acc.cols, &ascends, only)?;
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
    /// not yet applied whose leaves are all joined (in the order `semi/seek.rs` gives).
    pub(super) fn apply_ready_semis(
        &mut self,
        flat: &mut Flat<'_>,
        semis: &mut [(usize, semi::SemiJoin<'_>)],
        joined: u64,
        acc: &mut Rows,
        outer: Option<&Env<'_>>,
    ) -> Result<(), SqlError> {
        let mut ready = Vec::new();
        for (i, semi) in semis.iter_mut() {
            let c = &mut flat.conjuncts[*i];
            if !c.applied && c.leaves.is_some_and(|m| m & !joined == 0) {
                c.applied = true;
                ready.push(semi);
            }
        }
        if !ready.is_empty() {
            let rows = std::mem::take(&mut acc.rows);
            acc.rows = self.apply_semi_joins(&mut ready, &acc.cols, rows, outer)?;
        }
        Ok(())
    }

    /// The next leaf to join and how: the cheapest step among the leaves left (or leaf
    /// `only`), those that a conjunct connects to the joined ones first.
    pub(super) fn next_step<'e>(
        &mut self,
        flat: &Flat<'e>,
        joined: u64,
        left_rows: f64,
        left_cols: &[Col],
        ascends: &dyn Fn(usize) -> bool,
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
            // A join step reads the leaf whole under its own conjuncts (`read`), unless it
            // seeks it per row; the first leaf is chosen by the rows it keeps.
            let (own_rows, read) = self.own_estimate(flat, i);
            let read = if joined == 0 { 0.0 } else { read };
            let mut candidate = (read + own_rows * left_rows.max(1.0), Step::Loops);
            let exprs: Vec<&'e Expr> = joining.iter().map(|c| c.expr).collect();
            let keys = equi_keys(self, flat, &exprs, joined, bit, left_cols, &leaf.cols);
            if joined != 0 && !keys.is_empty() {
                // A merge reads the leaf as a hash join does, and builds nothing.
                let local: Vec<&'e Expr> =
                    joining.iter().filter(|c| c.leaves == Some(bit)).map(|c| c.expr).collect();
                let merge = self.merge_key(flat, i, &keys, &local, left_cols, ascends);
                candidate = match merge {
                    Some(key) => (read + left_rows, Step::Merge(key)),
                    None => (read + own_rows + left_rows, Step::Hash(keys)),
                };
            }
            if let (Input::Table(t), true) = (&leaf.input, joined != 0) {
                let path = self.path(flat, t, &exprs, i, joined);
                let probes_joined =
                    path.any_probe(&mut |e| flat.leaves_of(e).is_some_and(|m| m & joined != 0));
                let per_row = path.cost + SEEK_COST;
                if probes_joined && per_row * left_rows < candidate.0 {
                    let exact = path.exact_seek_conjuncts(&t.def, &exprs);
                    let exact = exact.into_iter().map(|k| exprs[k]).collect();
                    candidate = (per_row * left_rows, Step::IndexLoops(path, exact));
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
    pub(super) fn path<'e>(
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
            &|e| flat.constant(e),
        )
    }

    /// Joins leaf `leaf` to the rows joined so far by `step`, applying every conjunct whose
    /// leaves are then all joined (`mask`; 0 when there are too many leaves to place any),
    /// and stopping at `goal` rows.
    /// With `streaming`, a step holding too many rows streams the steps after it
    /// (`pipeline.rs`): its rows are then the last step's, in join order, and it says so.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn join_step<'e: 'f, 'f>(
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
            if let Step::Merge(key) = step {
                self.merge_joined_leaf(
                    flat, leaf, &local, &acc, key, &rest, outer, &mut out, streaming,
                )?;
                for i in checks {
                    flat.conjuncts[i].applied = true;
                }
                return finish_step(self, flat, cols, out);
            }
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
    pub(super) fn emit(
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
    pub(super) fn emit_each<'r>(
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
}

/// The equalities between the joined rows (`joined`) and leaf `bit` that a hash join can
/// use: `joined-side expression = leaf-side expression`, both stable, of types in one
/// [`family`].
pub(super) fn equi_keys<'e>(
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
pub(super) fn is_key_of(e: &Expr, keys: &[(&Expr, &Expr)]) -> bool {
    let ExprKind::Binary { op: BinaryOp::Eq, left, right } = &e.kind else { return false };
    let (l, r): (&Expr, &Expr) = (left, right);
    keys.iter().any(|&(a, b)| {
        (std::ptr::eq(l, a) && std::ptr::eq(r, b)) || (std::ptr::eq(l, b) && std::ptr::eq(r, a))
    })
}

/// `sink` as a sink of its own borrow's lifetime, as a `Forward` or `Streaming` holds it.
pub(super) fn shorten<'a>(sink: &'a mut (dyn RowSink + '_)) -> &'a mut (dyn RowSink + 'a) {
    sink
}

/// A join step's rows once it has run: those it held, or, where it streamed the steps
/// after it (`pipeline.rs`), the last step's, with every conjunct those steps checked
/// marked applied; and whether it streamed. Error 701 if it held more than the workspace
/// has room for while waiting for the steps after it to stream, and they did not.
pub(super) fn finish_step(
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

/// The joined rows with their columns in the FROM clause's order.
pub(super) fn restore_order(acc: Rows, order: &[usize], leaves: &[Leaf]) -> Rows {
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
pub(super) fn restore_positions(order: &[usize], leaves: &[Leaf]) -> Vec<usize> {
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
pub(super) fn restore_row(mut row: Vec<Value>, positions: &[usize]) -> Vec<Value> {
    positions.iter().map(|&p| std::mem::replace(&mut row[p], Value::Null)).collect()
}
