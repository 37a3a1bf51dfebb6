//! One stage's walk over its rows in sort order, partition by partition.
//!
//! Rows come in with their sort keys; a change of the PARTITION BY keys ends a partition,
//! and a change of the ORDER BY keys within one ends a peer group. Each row waits in a
//! buffer until every call of the stage can compute its value, then goes out with those
//! values, and leaves the buffer once no later row needs it. What a call needs of the
//! other rows is its [`Need`]: how many rows after the current one (or the whole
//! partition), whether the end of its peer group, and how many rows before it. ROW_NUMBER
//! over ten million rows of one partition therefore holds one row at a time, a running SUM
//! by RANGE one peer group, LAG(x, 3) three rows; NTILE holds the partition, whose size it
//! needs. The buffer's bytes are held from the stage's grant, so a partition that must be
//! held and does not fit fails the statement with error 701.

use std::cmp::Ordering;
use std::collections::VecDeque;

use walden_engine::types::{SqlType, Value};

use crate::ast::{FrameBound, FrameUnits, WindowFrame};
use crate::exec::execute::grant::{row_bytes, MemoryGrant};
use crate::exec::execute::query::compare_keys;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::functions::{ntile, percentile, percentile_fraction, Accumulator};
use super::{Call, Kind, RowOut, Scope, Stage};

/// Bytes the buffer's holdings change by before they are told to the grant.
const HOLD_CHUNK: usize = 64 << 10;

/// The farthest a constant LAG or LEAD offset, or a ROWS frame's offset, is followed row
/// by row; a farther one holds the partition, as if the offset were not known.
const MAX_REACH: usize = 1 << 20;

/// What a call needs of the rows around row k to compute its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Need {
    /// Rows after k that must have come (None: the partition must have ended).
    ahead: Option<usize>,
    /// Whether k's peer group must have ended.
    peers: bool,
    /// Rows before k that must still be held (None: the whole partition).
    behind: Option<usize>,
    /// Whether k's peer group must still be held from its first row.
    peer_start: bool,
}

impl Need {
    const NOTHING: Need = Need { ahead: Some(0), peers: false, behind: Some(0), peer_start: false };
    const PARTITION: Need = Need { ahead: None, peers: false, behind: None, peer_start: false };

    fn and(self, other: Need) -> Need {
        let most = |a: Option<usize>, b: Option<usize>| Some(a?.max(b?));
        Need {
            ahead: most(self.ahead, other.ahead),
            peers: self.peers || other.peers,
            behind: most(self.behind, other.behind),
            peer_start: self.peer_start || other.peer_start,
        }
    }
}

/// A frame offset as a row count, if it is near enough to follow.
fn reach(m: u64) -> Option<usize> {
    usize::try_from(m).ok().filter(|&m| m <= MAX_REACH)
}

/// What `call` needs (see [`Need`]).
fn need(call: &Call) -> Need {
    let fixed = call.fixed_offset.and_then(reach);
    match call.kind {
        Kind::RowNumber | Kind::Rank | Kind::DenseRank => Need::NOTHING,
        Kind::PercentRank
        | Kind::CumeDist
        | Kind::Ntile
        | Kind::PercentileCont
        | Kind::PercentileDisc => Need::PARTITION,
        Kind::Lag => fixed.map_or(Need::PARTITION, |o| Need { behind: Some(o), ..Need::NOTHING }),
        Kind::Lead => fixed.map_or(Need::PARTITION, |o| Need { ahead: Some(o), ..Need::NOTHING }),
        Kind::FirstValue | Kind::LastValue | Kind::Aggregate(_) => frame_need(call),
    }
}

/// What a call over a frame needs: rows up to the frame's far end, and back to its near end
/// (an aggregate from the partition's first row keeps a running total instead, and
/// FIRST_VALUE from it reads the first row, which is kept apart).
fn frame_need(call: &Call) -> Need {
    let f = &call.frame;
    let range = f.units == FrameUnits::Range;
    let ahead = |b: FrameBound| match b {
        FrameBound::UnboundedFollowing => None,
        FrameBound::Following(m) => reach(m),
        _ => Some(0),
    };
    let behind = |b: FrameBound| match b {
        FrameBound::Preceding(m) => reach(m),
        _ => Some(0),
    };
    // An aggregate from some row to the partition's end is added up backwards once the
    // partition is all there.
    let backwards = f.end == FrameBound::UnboundedFollowing;
    if backwards
        && (matches!(call.kind, Kind::Aggregate(_)) || f.start != FrameBound::UnboundedPreceding)
    {
        return Need::PARTITION;
    }
    let near = match f.start {
        FrameBound::UnboundedPreceding => behind(f.end),
        start => behind(start).and_then(|s| Some(s.max(behind(f.end)?))),
    };
    let Some(near) = near else { return Need::PARTITION };
    let far = match (ahead(f.start), ahead(f.end)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    Need {
        ahead: far,
        peers: range && f.end == FrameBound::CurrentRow,
        behind: Some(near),
        peer_start: range && f.start == FrameBound::CurrentRow,
    }
}

/// A row of the current partition.
struct Entry {
    /// The row, until it goes out.
    row: Option<Vec<Value>>,
    /// Its evaluated arguments ([`Stage::args`]).
    args: Vec<Value>,
    /// Its peer group's first position, and the position past its last once known.
    peer_first: usize,
    peer_end: Option<usize>,
    /// DENSE_RANK's value.
    dense: i64,
    /// What it holds, as held from the grant.
    bytes: usize,
}

/// A call's state across the rows of a partition.
enum State {
    Plain,
    /// An aggregate from the partition's first row: the total of the positions before
    /// `next`.
    Running {
        acc: Accumulator,
        next: usize,
    },
    /// An aggregate over a frame bounded both ways: the last frame and its value, and the
    /// values added since the cancel was last asked.
    Sliding {
        last: Option<((usize, usize), Value)>,
        added: usize,
    },
    /// Values made once the partition has ended, by position: an aggregate to the
    /// partition's end (added up backwards), NTILE's tile count, a percentile.
    Backward(Option<Vec<Value>>),
    Tiles(Option<usize>),
    Picked(Option<Value>),
}

impl State {
    fn of(call: &Call) -> State {
        match call.kind {
            Kind::Ntile => State::Tiles(None),
            Kind::PercentileCont | Kind::PercentileDisc => State::Picked(None),
            Kind::Aggregate(agg) if call.frame.start == FrameBound::UnboundedPreceding => {
                State::Running { acc: Accumulator::new(agg, call.collation), next: 0 }
            }
            Kind::Aggregate(_) if call.frame.end == FrameBound::UnboundedFollowing => {
                State::Backward(None)
            }
            Kind::Aggregate(_) => State::Sliding { last: None, added: 0 },
            _ => State::Plain,
        }
    }
}

/// The rows of the current partition that are held.
struct Held<'b> {
    buf: &'b VecDeque<Entry>,
    /// The position of `buf[0]`.
    base: usize,
    /// The arguments of the partition's first row, kept after it leaves.
    first: &'b [Value],
    /// Rows of the partition so far (all of them once it has ended).
    len: usize,
}

impl Held<'_> {
    fn entry(&self, k: usize) -> Result<&Entry, SqlError> {
        k.checked_sub(self.base).and_then(|i| self.buf.get(i)).ok_or_else(lost)
    }

    /// Argument `i` of the row at position `k`.
    fn arg(&self, k: usize, i: usize) -> Result<&Value, SqlError> {
        match k.checked_sub(self.base).and_then(|at| self.buf.get(at)) {
            Some(e) => e.args.get(i).ok_or_else(lost),
            None if k == 0 => self.first.get(i).ok_or_else(lost),
            None => Err(lost()),
        }
    }

    /// Row `k`'s frame as positions `lo..hi`, empty when `lo >= hi`.
    fn frame(&self, frame: &WindowFrame, k: usize) -> Result<(usize, usize), SqlError> {
        let e = self.entry(k)?;
        let n = self.len;
        let rows = frame.units == FrameUnits::Rows;
        let (first_peer, end_peer) = (e.peer_first, e.peer_end.unwrap_or(n));
        let far = |m: u64| usize::try_from(m).unwrap_or(usize::MAX);
        let lo = match frame.start {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::Preceding(m) => k.saturating_sub(far(m)),
            FrameBound::CurrentRow if rows => k,
            FrameBound::CurrentRow => first_peer,
            FrameBound::Following(m) => k.saturating_add(far(m)).min(n),
            FrameBound::UnboundedFollowing => n,
        };
        let hi = match frame.end {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::Preceding(m) => (k + 1).saturating_sub(far(m)),
            FrameBound::CurrentRow if rows => k + 1,
            FrameBound::CurrentRow => end_peer,
            FrameBound::Following(m) => (k + 1).saturating_add(far(m)).min(n),
            FrameBound::UnboundedFollowing => n,
        };
        Ok((lo, hi))
    }
}

/// A row the walk should hold and does not: a fault of the walk's bookkeeping.
fn lost() -> SqlError {
    SqlError::new(50000, "Walden's window walk lost a row it needed.")
}

/// One stage's walk (see the module's comment).
pub(super) struct Partitioner<'p, 'e> {
    stage: &'p Stage<'e>,
    need: Need,
    buf: VecDeque<Entry>,
    base: usize,
    /// Positions before this have gone out.
    emitted: usize,
    len: usize,
    ended: bool,
    /// The latest row's sort keys.
    last: Option<Vec<Value>>,
    /// The current peer group's first position, and DENSE_RANK's value for it.
    peer_first: usize,
    dense: i64,
    first: Vec<Value>,
    states: Vec<State>,
    grant: MemoryGrant,
    /// Bytes the buffer holds, and bytes held from the grant for it.
    bytes: usize,
    held: usize,
}

impl<'p, 'e> Partitioner<'p, 'e> {
    pub(super) fn new(stage: &'p Stage<'e>, grant: MemoryGrant) -> Partitioner<'p, 'e> {
        let need = stage.calls.iter().map(need).fold(Need::NOTHING, Need::and);
        Partitioner {
            stage,
            need,
            buf: VecDeque::new(),
            base: 0,
            emitted: 0,
            len: 0,
            ended: false,
            last: None,
            peer_first: 0,
            dense: 1,
            first: Vec::new(),
            states: stage.calls.iter().map(State::of).collect(),
            grant,
            bytes: 0,
            held: 0,
        }
    }

    /// Takes the next row in the stage's order, and gives `emit` every row that is done.
    pub(super) fn push(
        &mut self,
        run: &mut Run<'_>,
        scope: &Scope<'_>,
        keys: Vec<Value>,
        row: Vec<Value>,
        emit: &mut RowOut<'_>,
    ) -> Result<(), SqlError> {
        if let Some(last) = &self.last {
            let p = self.stage.partition_keys;
            let desc = &self.stage.desc;
            if compare_keys(&keys[..p], &last[..p], &desc[..p])? != Ordering::Equal {
                self.end_partition(run, emit)?;
            } else if compare_keys(&keys[p..], &last[p..], &desc[p..])? != Ordering::Equal {
                self.close_peers();
                self.dense += 1;
            }
        }
        self.last = Some(keys);
        let env = scope.env(&row);
        let mut args = Vec::with_capacity(self.stage.args.len());
        for s in &self.stage.args {
            args.push(run.eval_prepared(s, &env)?);
        }
        // LAG's and LEAD's default takes the type of the value it stands in for.
        for call in &self.stage.calls {
            if let (Some(d), Some(ty)) = (call.default, call.value_type) {
                if let Some(v) = args.get_mut(d).filter(|v| !v.is_null()) {
                    *v = scalar::convert(std::mem::replace(v, Value::Null), ty, None)?;
                }
            }
        }
        if self.len == 0 {
            self.first.clone_from(&args);
        }
        let bytes = row_bytes(&row) + row_bytes(&args) + std::mem::size_of::<Entry>();
        self.buf.push_back(Entry {
            row: Some(row),
            args,
            peer_first: self.peer_first,
            peer_end: None,
            dense: self.dense,
            bytes,
        });
        self.len += 1;
        self.bytes += bytes;
        if self.bytes > self.held {
            let more = (self.bytes - self.held).max(HOLD_CHUNK);
            self.grant.hold(more)?;
            self.held += more;
        }
        self.emit_ready(run, emit)
    }

    /// Ends the last partition.
    pub(super) fn finish(
        mut self,
        run: &mut Run<'_>,
        emit: &mut RowOut<'_>,
    ) -> Result<(), SqlError> {
        self.end_partition(run, emit)
    }

    /// Sends out what is left of the partition and starts the next.
    fn end_partition(&mut self, run: &mut Run<'_>, emit: &mut RowOut<'_>) -> Result<(), SqlError> {
        self.ended = true;
        self.close_peers();
        self.emit_ready(run, emit)?;
        while let Some(e) = self.buf.pop_front() {
            self.bytes -= e.bytes;
        }
        self.give_back();
        self.base = 0;
        self.emitted = 0;
        self.len = 0;
        self.ended = false;
        self.peer_first = 0;
        self.dense = 1;
        self.states = self.stage.calls.iter().map(State::of).collect();
        run.interruption_point()
    }

    /// Ends the current peer group at the latest row.
    fn close_peers(&mut self) {
        for e in self.buf.iter_mut().rev() {
            if e.peer_first != self.peer_first {
                break;
            }
            e.peer_end = Some(self.len);
        }
        self.peer_first = self.len;
    }

    /// Whether the row at position `k` has what its calls need.
    fn ready(&self, k: usize) -> bool {
        if self.ended {
            return true;
        }
        let Some(ahead) = self.need.ahead else { return false };
        let peers_known = !self.need.peers
            || k.checked_sub(self.base)
                .and_then(|i| self.buf.get(i))
                .is_some_and(|e| e.peer_end.is_some());
        k.saturating_add(ahead) < self.len && peers_known
    }

    fn emit_ready(&mut self, run: &mut Run<'_>, emit: &mut RowOut<'_>) -> Result<(), SqlError> {
        while self.emitted < self.len && self.ready(self.emitted) {
            let k = self.emitted;
            let i = k.checked_sub(self.base).ok_or_else(lost)?;
            let mut row = self.buf.get_mut(i).and_then(|e| e.row.take()).ok_or_else(lost)?;
            let held = Held { buf: &self.buf, base: self.base, first: &self.first, len: self.len };
            for (call, state) in self.stage.calls.iter().zip(&mut self.states) {
                let v = value(run, call, state, &held, k)?;
                if let Some(slot) = row.get_mut(call.slot) {
                    *slot = v;
                }
            }
            self.emitted += 1;
            self.trim();
            emit(run, row)?;
        }
        Ok(())
    }

    /// Lets go of the rows no later row of the partition needs.
    fn trim(&mut self) {
        let Some(behind) = self.need.behind else { return };
        let mut keep = self.emitted.saturating_sub(behind);
        if self.need.peer_start {
            let next = self.emitted.checked_sub(self.base).and_then(|i| self.buf.get(i));
            keep = keep.min(next.map_or(self.peer_first, |e| e.peer_first));
        }
        for state in &self.states {
            if let State::Running { next, .. } = state {
                keep = keep.min(*next);
            }
        }
        while self.base < keep {
            let Some(e) = self.buf.pop_front() else { break };
            self.bytes -= e.bytes;
            self.base += 1;
        }
        if self.held > self.bytes + 2 * HOLD_CHUNK {
            self.give_back();
        }
    }

    /// Gives the grant back all but a chunk above what the buffer holds.
    fn give_back(&mut self) {
        let keep = self.bytes + HOLD_CHUNK;
        if self.held > keep {
            self.grant.release(self.held - keep);
            self.held = keep;
        }
    }
}

/// The value of `call` for the row at position `k`, which has what the call needs.
fn value(
    run: &mut Run<'_>,
    call: &Call,
    state: &mut State,
    held: &Held<'_>,
    k: usize,
) -> Result<Value, SqlError> {
    let n = held.len;
    let arg = |pos: usize, i: Option<usize>| -> Result<Value, SqlError> {
        match i {
            Some(i) => held.arg(pos, i).cloned(),
            None => Ok(Value::Null),
        }
    };
    Ok(match call.kind {
        Kind::RowNumber => Value::BigInt(k as i64 + 1),
        Kind::Rank => Value::BigInt(held.entry(k)?.peer_first as i64 + 1),
        Kind::DenseRank => Value::BigInt(held.entry(k)?.dense),
        Kind::PercentRank => {
            let first = held.entry(k)?.peer_first;
            Value::Float(if n > 1 { first as f64 / (n - 1) as f64 } else { 0.0 })
        }
        Kind::CumeDist => {
            let end = held.entry(k)?.peer_end.unwrap_or(n);
            Value::Float(end as f64 / n as f64)
        }
        Kind::Ntile => {
            let State::Tiles(tiles) = state else { return Err(lost()) };
            let tiles = match tiles {
                Some(t) => *t,
                // The tile count is read from the partition's first row.
                None => match scalar::convert(arg(0, call.value)?, SqlType::BigInt, None) {
                    Ok(Value::BigInt(t)) if t > 0 => *tiles.insert(t as usize),
                    _ => {
                        return Err(SqlError::with_severity(
                            4116,
                            15,
                            "The function 'ntile' takes only a positive int or bigint expression as its input.",
                        ))
                    }
                },
            };
            Value::BigInt(ntile(k, n, tiles) as i64)
        }
        Kind::Lag | Kind::Lead => {
            let offset =
                match scalar::convert(arg(k, call.offset)?, SqlType::BigInt, None)? {
                    Value::BigInt(o) if o < 0 => return Err(SqlError::new(
                        8730,
                        "Offset parameter for Lag and Lead functions cannot be a negative value.",
                    )),
                    Value::BigInt(o) => usize::try_from(o).unwrap_or(usize::MAX),
                    _ => return Ok(Value::Null),
                };
            let target =
                if call.kind == Kind::Lag { k.checked_sub(offset) } else { k.checked_add(offset) };
            match target.filter(|&t| t < n) {
                Some(t) => arg(t, call.value)?,
                None => arg(k, call.default)?,
            }
        }
        Kind::FirstValue | Kind::LastValue => {
            let (lo, hi) = held.frame(&call.frame, k)?;
            match (lo < hi, call.kind == Kind::FirstValue) {
                (false, _) => Value::Null,
                (true, true) => arg(lo, call.value)?,
                (true, false) => arg(hi - 1, call.value)?,
            }
        }
        Kind::PercentileCont | Kind::PercentileDisc => {
            let State::Picked(picked) = state else { return Err(lost()) };
            if let Some(v) = picked {
                return Ok(v.clone());
            }
            let fraction = percentile_fraction(&arg(0, call.offset)?, call.kind)?;
            // NULLs take no part; the rest are in the WITHIN GROUP order.
            let mut present = Vec::with_capacity(n);
            for pos in 0..n {
                let v = arg(pos, call.value)?;
                if !v.is_null() {
                    present.push(v);
                }
            }
            let v = percentile(&present, fraction, call.kind == Kind::PercentileCont)?;
            picked.insert(v).clone()
        }
        Kind::Aggregate(agg) => match state {
            State::Running { acc, next } => {
                let (_, hi) = held.frame(&call.frame, k)?;
                while *next < hi {
                    if let Some(i) = call.value {
                        acc.add(held.arg(*next, i)?)?;
                    }
                    *next += 1;
                }
                acc.result()?
            }
            State::Backward(values) => {
                if values.is_none() {
                    let mut acc = Accumulator::new(agg, call.collation);
                    let mut out = vec![Value::Null; n];
                    let mut first = n;
                    for pos in (0..n).rev() {
                        let (lo, _) = held.frame(&call.frame, pos)?;
                        while first > lo {
                            first -= 1;
                            acc.add(&arg(first, call.value)?)?;
                        }
                        out[pos] = acc.result()?;
                    }
                    *values = Some(out);
                }
                values.as_ref().and_then(|v| v.get(k)).cloned().ok_or_else(lost)?
            }
            State::Sliding { last, added } => {
                let bounds = held.frame(&call.frame, k)?;
                if let Some((b, v)) = last {
                    if *b == bounds {
                        return Ok(v.clone());
                    }
                }
                let mut acc = Accumulator::new(agg, call.collation);
                for pos in bounds.0..bounds.1.max(bounds.0) {
                    acc.add(&arg(pos, call.value)?)?;
                }
                // A frame of n rows each way costs about 2n additions per row: the cancel
                // is asked now and then.
                *added += bounds.1.saturating_sub(bounds.0);
                if *added >= 1 << 16 {
                    run.interruption_point()?;
                    *added = 0;
                }
                let v = acc.result()?;
                *last = Some((bounds, v.clone()));
                v
            }
            _ => return Err(lost()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(kind: Kind, frame: WindowFrame, fixed_offset: Option<u64>) -> Call {
        Call {
            kind,
            frame,
            slot: 0,
            value: Some(0),
            offset: None,
            default: None,
            fixed_offset,
            value_type: None,
            collation: None,
        }
    }

    fn rows(start: FrameBound, end: FrameBound) -> WindowFrame {
        WindowFrame { units: FrameUnits::Rows, start, end }
    }

    #[test]
    fn forward_calls_need_a_bounded_window_and_the_rest_the_partition() {
        let running = rows(FrameBound::UnboundedPreceding, FrameBound::CurrentRow);
        assert_eq!(need(&call(Kind::RowNumber, running, None)), Need::NOTHING);
        let sum = Kind::Aggregate(super::super::Agg::Sum);
        assert_eq!(need(&call(sum, running, None)), Need::NOTHING);
        let by_range = WindowFrame { units: FrameUnits::Range, ..running };
        assert_eq!(need(&call(sum, by_range, None)), Need { peers: true, ..Need::NOTHING });
        assert_eq!(
            need(&call(Kind::Lag, running, Some(3))),
            Need { behind: Some(3), ..Need::NOTHING }
        );
        assert_eq!(
            need(&call(Kind::Lead, running, Some(2))),
            Need { ahead: Some(2), ..Need::NOTHING }
        );
        assert_eq!(need(&call(Kind::Lead, running, None)), Need::PARTITION);
        let sliding = rows(FrameBound::Preceding(2), FrameBound::Following(1));
        assert_eq!(
            need(&call(sum, sliding, None)),
            Need { ahead: Some(1), behind: Some(2), ..Need::NOTHING }
        );
        let rest = rows(FrameBound::CurrentRow, FrameBound::UnboundedFollowing);
        assert_eq!(need(&call(sum, rest, None)), Need::PARTITION);
        assert_eq!(need(&call(Kind::Ntile, running, None)), Need::PARTITION);
    }
}
