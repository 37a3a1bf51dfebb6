//! The first two steps of a join, when the second is a hash join: the first leaf's read
//! gives each row straight to the probe of the second leaf's hash table.
//!
//! `Run::join_leaves` joins one leaf at a time, each step holding the rows joined so far,
//! so a plan that starts from a large table (TPC-H Q9's `lineitem`, joined next to the few
//! parts whose name holds 'green') would hold every row of it only to keep a few. Here only
//! the joined rows are held.
//!
//! Which algorithm the second step takes depends on how many rows the first leaf has
//! (`Run::next_step` counts them, it does not guess), so the read starts by holding its
//! rows, asking at each power of two whether that many would make the second step a hash
//! join. Once they would, any more would too (a hash join's cost grows by one per left row,
//! nested loops' and index nested loops' by at least as much), so the second leaf is read
//! and hashed there, the held rows are probed, and the rest are probed as the read finds
//! them. A read that ends before then leaves its rows to the usual second step, which makes
//! the choice it always made; so does a build side beyond the memory grant, which the usual
//! step partitions to disk (`hash_spill.rs`). While the first leaf's rows are fewer than
//! the second is guessed to hold, they are held: the usual step hashes the smaller side.
//!
//! That step, `Run::hash_joined_probe_leaf` below, is the other half of a hash join whose
//! build side is the smaller: where the rows joined so far are fewer than the next leaf's,
//! they are hashed (they are held already) and the leaf's read probes them row by row, so
//! the larger side is never held whole, only its rows that match (TPC-H Q9's `lineitem`,
//! probing the `part`s named 'green'). The pairs are then put in the order the other way
//! would give them, so a result's order does not depend on which side was hashed, unless
//! the step is a streamed SELECT's last and its pairs are more than [`PAUSE_ROWS`]: those
//! go to the client as they are found, so that a large result is not held whole.

use walden_engine::types::{SqlType, Value};

use super::pipeline::{Streaming, PAUSE_ROWS};
use super::{
    clone_ref, equi_keys, finish_step, is_key_of, Conjunct, Flat, Forward, HashMatch, Input,
    JoinOutput, Shape, Step,
};
use crate::ast::{Expr, ExprKind};
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{find_column, Col, Env};
use crate::exec::execute::filter::Filter;
use crate::exec::execute::grant::MemoryGrant;
use crate::exec::execute::hash_spill::hashed_bytes;
use crate::exec::execute::query::Rows;
use crate::exec::plan::access::{RowFilter, RowSink};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The second leaf hashed, and what probing it takes.
struct Built<'e> {
    right: Vec<Vec<Value>>,
    matcher: HashMatch,
    probes: Vec<Scalar<'e>>,
    /// Holds the hash table's memory for as long as it lives.
    _grant: MemoryGrant,
}

/// The read of the first leaf: its rows held until the second step is known to be a hash
/// join, probed from then on.
struct Probing<'s, 'e: 'f, 'o, 'f> {
    flat: &'s mut Flat<'e>,
    first: usize,
    second: usize,
    /// The first leaf's bit and columns.
    first_bit: u64,
    first_cols: &'s [Col],
    /// What each row of the first leaf is cut to as it comes (`Flat::shape`).
    shape: Shape,
    /// The second leaf's own conjuncts, applied as it is read.
    local: &'s [&'e Expr],
    outer: Option<&'o Env<'o>>,
    held: Vec<Vec<Value>>,
    /// The count of held rows at which to ask again.
    ask_at: usize,
    /// A build side was refused its memory: the usual step joins these rows.
    given_up: bool,
    built: Option<Built<'e>>,
    out: JoinOutput<'f>,
    /// The second step's conjuncts, checked on each pair; and those but the hash key's
    /// equality, for a hash whose candidates always equal the probe (`HashMatch::exact`).
    checks: Filter<'s>,
    inexact_checks: Filter<'s>,
    seen: usize,
    /// The steps after the second, to stream once it holds too many rows (`pipeline.rs`).
    streaming: Option<Streaming<'f>>,
}

impl<'e> Probing<'_, 'e, '_, '_> {
    /// Streams the steps after the second once its output holds too many rows.
    fn stream(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        let due = self.out.rows.len() >= PAUSE_ROWS || self.out.over.is_some();
        if self.streaming.is_none() || self.out.pipe.is_some() || !due {
            return Ok(());
        }
        let seen = self.seen.max(1) as f64;
        let first_rows = run.own_rows(self.flat, self.first).max(seen);
        let expected = self.out.rows.len() as f64 * first_rows / seen;
        run.stream_rest(self.flat, &mut self.streaming, &mut self.out, expected)
    }

    /// Whether the held rows make the second step a hash join; if so, hashes the second
    /// leaf and probes them.
    fn switch(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        let left_rows = self.held.len() as f64;
        // Not a merge: it would hold every row of the first leaf, which a hash join lets
        // stream. Held rows that stay held (fewer than the second leaf's) may still be
        // merged by the usual step.
        let (_, step) = run.next_step(
            self.flat,
            self.first_bit,
            left_rows,
            self.first_cols,
            &|_| false,
            Some(self.second),
        )?;
        let Step::Hash(keys) = step else { return Ok(()) };
        // Fewer rows so far than the second leaf is guessed to hold: the usual step hashes
        // these instead, if the read ends before there are more.
        if left_rows < run.own_rows(self.flat, self.second) {
            return Ok(());
        }
        let right_cols = self.flat.leaves[self.second].cols.clone();
        let right = run.leaf_rows(self.flat, self.second, self.local, self.outer, None)?;
        let mut grant = run.memory_grant();
        if !grant.try_reserve(hashed_bytes(&right)) {
            // Computed rows go back, already filtered by the conjuncts the usual step
            // applies to them again (they keep the same rows).
            if let Input::Rows(rows) = &mut self.flat.leaves[self.second].input {
                *rows = right;
            }
            self.given_up = true;
            return Ok(());
        }
        let matcher = HashMatch::build(run, &keys, &right_cols, &right, self.outer)?;
        let probes = HashMatch::probes(&keys, self.first_cols);
        self.built = Some(Built { right, matcher, probes, _grant: grant });
        for row in std::mem::take(&mut self.held) {
            self.probe(run, row)?;
            if self.out.full() {
                break;
            }
            self.stream(run)?;
        }
        Ok(())
    }

    /// Joins one row of the first leaf to its matches in the hash.
    fn probe(&mut self, run: &mut Run<'_>, row: Vec<Value>) -> Result<(), SqlError> {
        let Some(built) = &self.built else { return Ok(()) };
        let env = Env::new(self.first_cols, &row, self.outer);
        let found = built.matcher.candidates(run, &built.probes, &env)?;
        let right = &built.right;
        let pair = |k: usize| right[found[k]].as_slice();
        let checks =
            if built.matcher.exact() { &mut self.inexact_checks } else { &mut self.checks };
        run.emit_each(&mut self.out, row, found.len(), pair, checks)?;
        Ok(())
    }
}

impl RowSink for Probing<'_, '_, '_, '_> {
    fn push(&mut self, run: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
        run.row_interruption_point(self.seen)?;
        self.seen += 1;
        self.shape.apply(&mut row);
        if let Some(built) = &self.built {
            // An inner join with nothing to match: no row of the first leaf can join, so
            // its read stops (as a hash join with an empty build side does).
            if built.right.is_empty() {
                return Ok(false);
            }
            self.probe(run, row)?;
            self.stream(run)?;
            return Ok(!self.out.full());
        }
        self.held.push(row);
        if !self.given_up && self.held.len() >= self.ask_at {
            self.ask_at = self.ask_at.saturating_mul(2);
            self.switch(run)?;
        }
        Ok(!self.out.full())
    }
}

impl Run<'_> {
    /// Joins the planned first two leaves, `first` and `second`, as the module's
    /// documentation says: the rows joined so far and the leaves joined, in order (only
    /// `first` if the second step is left to the usual way). None, with nothing read, where
    /// the first leaf is no table or no equality joins the two. The second step's rows stop
    /// at `goal`, and go to `forward` where it is given. With `streaming`, a second step
    /// holding too many rows streams the steps after it (`pipeline.rs`): the rows are then
    /// the last step's, in join order, and it says so.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    pub(super) fn first_steps_probing<'e: 'f, 'f>(
        &mut self,
        flat: &mut Flat<'e>,
        first: usize,
        second: usize,
        outer: Option<&Env<'_>>,
        goal: usize,
        forward: Option<Forward<'f>>,
        streaming: Option<Streaming<'f>>,
    ) -> Result<Option<(Rows, Vec<usize>, bool)>, SqlError> {
        let Input::Table(t) = &flat.leaves[first].input else { return Ok(None) };
        let t = clone_ref(t);
        let (first_bit, second_bit) = (1u64 << first, 1u64 << second);
        let ready = |c: &Conjunct<'_>, mask: u64| {
            !c.applied && !c.semi && c.leaves.is_some_and(|m| m & !mask == 0)
        };
        let both = first_bit | second_bit;
        let first_checks: Vec<usize> =
            (0..flat.conjuncts.len()).filter(|&i| ready(&flat.conjuncts[i], first_bit)).collect();
        let second_checks: Vec<usize> = (0..flat.conjuncts.len())
            .filter(|&i| ready(&flat.conjuncts[i], both) && !first_checks.contains(&i))
            .collect();
        let first_exprs = exprs_of(flat, &first_checks, |_| true);
        let local = exprs_of(flat, &second_checks, |c| c.leaves == Some(second_bit));
        let rest = exprs_of(flat, &second_checks, |c| c.leaves != Some(second_bit));
        let first_cols = flat.leaves[first].cols.clone();
        let right_cols = flat.leaves[second].cols.clone();
        let joining = exprs_of(flat, &second_checks, |_| true);
        let keys = equi_keys(self, flat, &joining, first_bit, second_bit, &first_cols, &right_cols);
        if keys.is_empty() {
            return Ok(None);
        }
        let mut cols = first_cols.clone();
        cols.extend(right_cols.iter().cloned());
        let inexact: Vec<&Expr> = rest.iter().copied().filter(|e| !is_key_of(e, &keys)).collect();
        let path = self.path(flat, &t, &first_exprs, first, 0);
        // The first leaf's own conjuncts filter its rows as read, before they are cut.
        let first_read_cols = flat.leaves[first].read_cols().to_vec();
        let shape = flat.shape(first);
        let mut sink = Probing {
            flat,
            first,
            second,
            first_bit,
            first_cols: &first_cols,
            shape,
            local: &local,
            outer,
            held: Vec::new(),
            ask_at: 1,
            given_up: false,
            built: None,
            out: JoinOutput {
                rows: Vec::new(),
                forward,
                goal,
                width: cols.len(),
                grant: None,
                pipe: None,
                may_stream: false,
                over: None,
            },
            checks: Filter::new(RowFilter { cols: &cols, exprs: &rest, outer }),
            inexact_checks: Filter::new(RowFilter { cols: &cols, exprs: &inexact, outer }),
            seen: 0,
            streaming,
        };
        sink.out.may_stream = sink.streaming.is_some();
        let env = Env { cols: &[], row: &[], outer, computed: &[] };
        let keep = || Some(RowFilter { cols: &first_read_cols, exprs: &first_exprs, outer });
        self.read_path_or_scan_into(&t, &path, &env, keep(), &mut sink)?;
        let Probing { flat, built, held, out, .. } = sink;
        for &i in &first_checks {
            flat.conjuncts[i].applied = true;
        }
        if built.is_none() {
            return Ok(Some((Rows { cols: first_cols, rows: held }, vec![first], false)));
        }
        for &i in &second_checks {
            flat.conjuncts[i].applied = true;
        }
        let (rows, streamed) = finish_step(self, flat, cols.clone(), out)?;
        Ok(Some((rows, vec![first, second], streamed)))
    }
}

/// A leaf's read probing a hash of the rows joined so far: the pairs that pass, each with
/// the position of its joined row.
struct ProbeJoined<'s, 'e, 'o, 'f, 'p: 'f, 'g> {
    flat: &'s mut Flat<'p>,
    leaf: usize,
    /// The steps after this one, to stream once it holds too many pairs (`pipeline.rs`).
    streaming: Option<Streaming<'f>>,
    joined: &'s [Vec<Value>],
    /// The columns of the leaf's rows as read, which its probes and keys are prepared for.
    leaf_cols: &'s [Col],
    /// What each row of the leaf is cut to before it is paired (`Flat::shape`).
    shape: Shape,
    matcher: HashMatch,
    probes: Vec<Scalar<'e>>,
    /// The leaf's side of the hash keys, which `probes` evaluate.
    keys: Vec<&'e Expr>,
    /// The candidates `wants` found for the row, and whether they are the next push's.
    found: Vec<usize>,
    found_ready: bool,
    checks: Filter<'s>,
    outer: Option<&'o Env<'o>>,
    /// The pairs, held against the memory workspace as any step's output is.
    pairs: JoinOutput<'f>,
    positions: Vec<usize>,
    /// The leaf's rows read so far, those `wants` turned away included: the pairs per row
    /// read scale the step's expected output when the steps after it stream.
    seen: usize,
    /// The step's own output. When it forwards its rows to the caller's sink (the last
    /// step of a streamed SELECT), the pairs held past [`PAUSE_ROWS`] are put in order and
    /// given to it, and every pair after them goes to it as it is found (`direct`): a
    /// stable order is kept for results that fit in memory, not bought with all of a large
    /// one held (T-SQL defines no order without ORDER BY).
    out: &'s mut JoinOutput<'g>,
    direct: bool,
}

impl ProbeJoined<'_, '_, '_, '_, '_, '_> {
    /// Gives the pairs held so far to the step's output in the order the other way round
    /// would give them (each joined row's matches in the leaf's order), releases their
    /// memory, and sends every later pair straight there.
    fn go_direct(&mut self, run: &mut Run<'_>) -> Result<(), SqlError> {
        let rows = std::mem::take(&mut self.pairs.rows);
        let positions = std::mem::take(&mut self.positions);
        self.pairs.grant = None;
        self.direct = true;
        give_in_order(run, positions, rows, self.out)
    }
}

/// Gives `rows` to `out` stably sorted by their joined rows' `positions`, until it is full.
fn give_in_order(
    run: &mut Run<'_>,
    positions: Vec<usize>,
    rows: Vec<Vec<Value>>,
    out: &mut JoinOutput<'_>,
) -> Result<(), SqlError> {
    let mut pairs: Vec<(usize, Vec<Value>)> = positions.into_iter().zip(rows).collect();
    pairs.sort_by_key(|&(j, _)| j);
    for (_, pair) in pairs {
        out.push(run, pair)?;
        if out.full() {
            break;
        }
    }
    Ok(())
}

impl RowSink for ProbeJoined<'_, '_, '_, '_, '_, '_> {
    /// Only the probe's columns are needed to know whether a row matches: most rows of the
    /// probing side match nothing (TPC-H Q11's `partsupp` rows of other nations' suppliers),
    /// and their other columns are never decoded.
    fn unread(&self, n: usize) -> Option<Vec<bool>> {
        crate::exec::execute::filter::unread_by(&self.keys, self.leaf_cols, n)
    }

    /// A probe of integer columns reads them and looks them up, which cannot fail (a value
    /// of another type might not convert); what it finds is kept only for the push of the
    /// same row.
    fn test_may_go_first(&self) -> bool {
        self.keys.iter().all(|k| {
            let ExprKind::Column(parts) = &k.kind else { return false };
            let Ok(Some(at)) = find_column(self.leaf_cols, parts) else { return false };
            matches!(
                self.leaf_cols[at].ty,
                SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt
            )
        })
    }

    fn wants(&mut self, run: &mut Run<'_>, row: &[Value]) -> Result<bool, SqlError> {
        run.row_interruption_point(self.seen)?;
        self.seen += 1;
        let env = Env::new(self.leaf_cols, row, self.outer);
        let found = self.matcher.candidates(run, &self.probes, &env)?;
        // Kept for the push of this row that follows: a key of several columns is hashed
        // as text, which costs more than the copy.
        self.found.clear();
        self.found.extend_from_slice(found);
        self.found_ready = !found.is_empty();
        Ok(self.found_ready)
    }

    fn push(&mut self, run: &mut Run<'_>, mut row: Vec<Value>) -> Result<bool, SqlError> {
        let env = Env::new(self.leaf_cols, &row, self.outer);
        let kept = std::mem::take(&mut self.found);
        let found = if std::mem::take(&mut self.found_ready) {
            kept.as_slice()
        } else {
            // A read that does not ask `wants` first: the row is counted here.
            run.row_interruption_point(self.seen)?;
            self.seen += 1;
            self.matcher.candidates(run, &self.probes, &env)?
        };
        // Found with the row as read; paired as the joined row carries it.
        self.shape.apply(&mut row);
        for &j in found {
            let left = &self.joined[j];
            let mut pair = Vec::with_capacity(left.len() + row.len());
            pair.extend_from_slice(left);
            pair.extend_from_slice(&row);
            if !run.filter_holds(&mut self.checks, &pair)? {
                continue;
            }
            if self.direct {
                self.out.push(run, pair)?;
                if self.out.full() {
                    break;
                }
                continue;
            }
            self.pairs.push(run, pair)?;
            if self.pairs.pipe.is_none() {
                self.positions.push(j);
            }
        }
        self.found = kept;
        if self.direct {
            return Ok(!self.out.full());
        }
        let due = self.pairs.rows.len() >= PAUSE_ROWS || self.pairs.over.is_some();
        if due && self.streaming.is_none() && self.out.forward.is_some() {
            self.go_direct(run)?;
            return Ok(!self.out.full());
        }
        if due && self.streaming.is_some() && self.pairs.pipe.is_none() {
            // The pairs stream in the leaf's order from here: T-SQL defines no order.
            let seen = self.seen as f64;
            let expected =
                self.pairs.rows.len() as f64 * run.own_rows(self.flat, self.leaf).max(seen) / seen;
            run.stream_rest(self.flat, &mut self.streaming, &mut self.pairs, expected)?;
        }
        Ok(!self.pairs.full())
    }
}

impl Run<'_> {
    /// A hash join step with the rows joined so far (`acc`) as its build side: they are
    /// hashed on their side of `keys` (joined side, leaf side), and each row of leaf `leaf`
    /// that its own conjuncts `local` keep probes them, as its read finds it; a pair goes to
    /// `out` if the step's other conjuncts `rest` hold (the equality of an exact hash is
    /// not checked again). With `streaming`, pairs beyond what the step may hold go
    /// through the steps after it (`pipeline.rs`) in the order the leaf's read finds
    /// them: the pairs' output, whose rows are then the last step's, is returned.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hash_joined_probe_leaf<'p: 'f, 'f>(
        &mut self,
        flat: &mut Flat<'p>,
        leaf: usize,
        local: &[&Expr],
        acc: &Rows,
        keys: &[(&Expr, &Expr)],
        rest: &[&Expr],
        outer: Option<&Env<'_>>,
        out: &mut JoinOutput<'_>,
        streaming: Option<Streaming<'f>>,
    ) -> Result<Option<JoinOutput<'f>>, SqlError> {
        let leaf_cols = flat.leaves[leaf].read_cols().to_vec();
        let mut cols = acc.cols.clone();
        cols.extend(flat.leaves[leaf].cols.iter().cloned());
        let keys = &distinct_probes(keys);
        let swapped: Vec<(&Expr, &Expr)> = keys.iter().map(|&(j, l)| (l, j)).collect();
        let matcher = HashMatch::build(self, &swapped, &acc.cols, &acc.rows, outer)?;
        let probes = HashMatch::probes(&swapped, &leaf_cols);
        // The keys not hashed stay checks on each pair.
        let checks: Vec<&Expr> = if matcher.exact() {
            rest.iter().copied().filter(|e| !is_key_of(e, keys)).collect()
        } else {
            rest.to_vec()
        };
        let width = cols.len();
        let shape = flat.shape(leaf);
        let read = match &mut flat.leaves[leaf].input {
            Input::Table(t) => {
                let t = clone_ref(t);
                let path = self.path(flat, &t, local, leaf, 0);
                Ok((t, path))
            }
            Input::Rows(rows) => Err(std::mem::take(rows)),
            Input::Estimated(_) => return Err(super::explained_only()),
        };
        let may_stream = streaming.is_some();
        let mut sink = ProbeJoined {
            flat,
            leaf,
            streaming,
            joined: &acc.rows,
            leaf_cols: &leaf_cols,
            shape,
            matcher,
            probes,
            keys: keys.iter().map(|&(_, l)| l).collect(),
            found: Vec::new(),
            found_ready: false,
            checks: Filter::new(RowFilter { cols: &cols, exprs: &checks, outer }),
            outer,
            pairs: JoinOutput {
                rows: Vec::new(),
                forward: None,
                goal: usize::MAX,
                width,
                grant: None,
                pipe: None,
                may_stream,
                over: None,
            },
            positions: Vec::new(),
            seen: 0,
            out,
            direct: false,
        };
        match read {
            Ok((t, path)) => {
                let env = Env { cols: &[], row: &[], outer, computed: &[] };
                let keep = || Some(RowFilter { cols: &leaf_cols, exprs: local, outer });
                self.read_path_or_scan_into(&t, &path, &env, keep(), &mut sink)?;
            }
            Err(rows) => {
                for row in self.filter_rows(&leaf_cols, rows, local, outer)? {
                    if !sink.push(self, row)? {
                        break;
                    }
                }
            }
        }
        if sink.pairs.pipe.is_some() {
            return Ok(Some(sink.pairs));
        }
        // The pairs in the order the other way round gives them (each joined row's matches
        // in the leaf's order): a stable sort by joined row. The same query gives its rows
        // in the same order whichever side is hashed.
        // `out` holds the pairs' memory as it takes them: this hold ends first.
        let ProbeJoined { positions, pairs: JoinOutput { rows, grant, over, .. }, out, .. } = sink;
        if let Some(e) = over {
            return Err(e);
        }
        drop(grant);
        give_in_order(self, positions, rows, out)?;
        Ok(None)
    }
}

/// The expressions of the conjuncts at positions `of` that `keep` accepts.
fn exprs_of<'e>(
    flat: &Flat<'e>,
    of: &[usize],
    keep: impl Fn(&Conjunct<'e>) -> bool,
) -> Vec<&'e Expr> {
    of.iter().map(|&i| &flat.conjuncts[i]).filter(|c| keep(c)).map(|c| c.expr).collect()
}

/// `keys` (joined side, leaf side) without those whose leaf side is a column an earlier key
/// already probes with: TPC-H Q9 equates `l_suppkey` with both `s_suppkey` and `ps_suppkey`,
/// and a joined row whose two differ matches no leaf row, so hashing `s_suppkey` alone and
/// checking `ps_suppkey = l_suppkey` on each pair finds the same pairs with half the probe.
pub(super) fn distinct_probes<'e>(keys: &[(&'e Expr, &'e Expr)]) -> Vec<(&'e Expr, &'e Expr)> {
    let mut distinct: Vec<(&Expr, &Expr)> = Vec::with_capacity(keys.len());
    for &(joined, leaf) in keys {
        let repeated = matches!(leaf.kind, ExprKind::Column(_))
            && distinct.iter().any(|(_, earlier)| earlier.kind == leaf.kind);
        if !repeated {
            distinct.push((joined, leaf));
        }
    }
    distinct
}
