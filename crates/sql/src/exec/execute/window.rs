//! Window functions: `f(...) OVER ([PARTITION BY ...] [ORDER BY ...] [ROWS | RANGE frame])`.
//!
//! Each call becomes one hidden column of the rows it runs over. The rows are sorted by
//! partition and order keys once per call; within a partition, *peers* are the rows whose
//! ORDER BY keys are equal, and a row's *frame* is a range `lo..hi` of positions in the
//! partition's order. Both ends of the frame only move forward from one row to the next,
//! so aggregates over frames that start at the partition's first row (or end at its last)
//! are computed incrementally: a running total over n rows costs n additions, not n².
//!
//! SQL Server's rules, enforced here: ranking functions, `LAG`, `LEAD`, `FIRST_VALUE` and
//! `LAST_VALUE` need an ORDER BY (4112); ranking functions, `LAG` and `LEAD` take no frame
//! (10752); a frame needs an ORDER BY (10756); `RANGE` takes only `UNBOUNDED` and
//! `CURRENT ROW` (4194). With an ORDER BY and no frame, the frame is `RANGE BETWEEN
//! UNBOUNDED PRECEDING AND CURRENT ROW`; without an ORDER BY it is the whole partition.

use walden_engine::types::{Decimal, SqlType, Value};

use crate::ast::{
    BinaryOp, Expr, ExprKind, FrameBound, FrameUnits, FunctionArgs, FunctionCall, WindowFrame,
    WindowSpec,
};
use crate::exec::eval::{compare_collated, is_aggregate, label_in, Col, Env};
use crate::exec::execute::grant::row_bytes;
use crate::exec::execute::query::{compare_keys, group_key, sort_by_keys};
use crate::exec::scalar;
use crate::exec::scalar::collation::{self, Collation};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Bytes of a window call's per-row state counted before they are held from its grant.
const HOLD_BYTES: usize = 1 << 20;

/// What a window call holds per row besides its sort key and its partition's key text: that
/// text's string, the row's position in the order and the sort's scratch, its argument and
/// its value.
const PER_ROW_BYTES: usize = std::mem::size_of::<String>()
    + 3 * std::mem::size_of::<usize>()
    + 2 * std::mem::size_of::<Value>();

/// What a window call computes, decided from its name and OVER clause before any row is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    /// `PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x) OVER ([PARTITION BY ...])`.
    PercentileCont,
    /// `PERCENTILE_DISC(p) WITHIN GROUP (ORDER BY x) OVER ([PARTITION BY ...])`.
    PercentileDisc,
    Aggregate(Agg),
}

/// The aggregates SQL Server computes over a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agg {
    Count,
    CountBig,
    Sum,
    Avg,
    Min,
    Max,
}

impl Kind {
    /// Ranking, distribution and offset functions: they need an ORDER BY and take no frame.
    fn is_frameless(self) -> bool {
        !matches!(self, Kind::FirstValue | Kind::LastValue | Kind::Aggregate(_))
    }
}

/// The kind of window call `f`, checked against its OVER clause as SQL Server checks it.
fn classify(f: &FunctionCall, spec: &WindowSpec) -> Result<Kind, SqlError> {
    let name = f.name.name.value.to_ascii_uppercase();
    let builtin = f.name.schema.is_none();
    let kind = match name.as_str() {
        "ROW_NUMBER" if builtin => Kind::RowNumber,
        "RANK" if builtin => Kind::Rank,
        "DENSE_RANK" if builtin => Kind::DenseRank,
        "PERCENT_RANK" if builtin => Kind::PercentRank,
        "CUME_DIST" if builtin => Kind::CumeDist,
        "NTILE" if builtin => Kind::Ntile,
        "LAG" if builtin => Kind::Lag,
        "LEAD" if builtin => Kind::Lead,
        "FIRST_VALUE" if builtin => Kind::FirstValue,
        "LAST_VALUE" if builtin => Kind::LastValue,
        "PERCENTILE_CONT" if builtin => Kind::PercentileCont,
        "PERCENTILE_DISC" if builtin => Kind::PercentileDisc,
        "COUNT" if builtin => Kind::Aggregate(Agg::Count),
        "COUNT_BIG" if builtin => Kind::Aggregate(Agg::CountBig),
        "SUM" if builtin => Kind::Aggregate(Agg::Sum),
        "AVG" if builtin => Kind::Aggregate(Agg::Avg),
        "MIN" if builtin => Kind::Aggregate(Agg::Min),
        "MAX" if builtin => Kind::Aggregate(Agg::Max),
        _ if builtin && is_aggregate(&name) => {
            return Err(SqlError::with_severity(
                4113,
                15,
                format!("The function '{name}' is not a valid windowing function, and cannot be used with the OVER clause."),
            ))
        }
        _ => {
            return Err(SqlError::with_severity(
                195,
                15,
                format!("'{}' is not a recognized window function.", f.name.name.value),
            ))
        }
    };
    let args = match &f.args {
        FunctionArgs::List { distinct: true, .. } => {
            return Err(SqlError::with_severity(
                10759,
                15,
                "Use of DISTINCT is not allowed with the OVER clause.",
            ))
        }
        FunctionArgs::List { args, .. } => args.len(),
        FunctionArgs::Star if matches!(kind, Kind::Aggregate(Agg::Count | Agg::CountBig)) => 1,
        FunctionArgs::Star | FunctionArgs::None => 0,
    };
    let (least, most) = match kind {
        Kind::RowNumber | Kind::Rank | Kind::DenseRank | Kind::PercentRank | Kind::CumeDist => {
            (0, 0)
        }
        Kind::Lag | Kind::Lead => (1, 3),
        _ => (1, 1),
    };
    if args < least || args > most {
        let count = if least == most { least.to_string() } else { format!("{least} to {most}") };
        return Err(SqlError::with_severity(
            174,
            15,
            format!("The {} function requires {count} argument(s).", name.to_lowercase()),
        ));
    }
    if matches!(kind, Kind::PercentileCont | Kind::PercentileDisc) {
        // Their order is the WITHIN GROUP's; OVER may only partition.
        if f.within_group.len() != 1 {
            return Err(SqlError::with_severity(
                10751,
                15,
                format!("The function '{name}' must have a WITHIN GROUP clause with one ORDER BY expression."),
            ));
        }
        if !spec.order_by.is_empty() || spec.frame.is_some() {
            return Err(SqlError::with_severity(
                10754,
                15,
                format!("The function '{name}' may not have ORDER BY in OVER clause."),
            ));
        }
        return Ok(kind);
    }
    if spec.order_by.is_empty() && !matches!(kind, Kind::Aggregate(_)) {
        return Err(SqlError::with_severity(
            4112,
            15,
            format!("The function '{name}' must have an OVER clause with ORDER BY."),
        ));
    }
    if let Some(frame) = &spec.frame {
        if kind.is_frameless() {
            return Err(SqlError::with_severity(
                10752,
                15,
                format!("The function '{name}' may not have a window frame."),
            ));
        }
        if spec.order_by.is_empty() {
            return Err(SqlError::with_severity(
                10756,
                15,
                "Window frame with ROWS or RANGE must have an ORDER BY clause.",
            ));
        }
        let offset =
            |b: FrameBound| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_));
        if frame.units == FrameUnits::Range && (offset(frame.start) || offset(frame.end)) {
            return Err(SqlError::new(
                4194,
                "RANGE is only supported with UNBOUNDED and CURRENT ROW window frame delimiters.",
            ));
        }
    }
    Ok(kind)
}

/// The frame a call uses: the written one, else SQL Server's default.
fn effective_frame(spec: &WindowSpec) -> WindowFrame {
    match spec.frame {
        Some(frame) => frame,
        None if spec.order_by.is_empty() => WindowFrame {
            units: FrameUnits::Rows,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::UnboundedFollowing,
        },
        None => WindowFrame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
        },
    }
}

/// A partition's rows in window order with their peer groups: `peers[k]` is the range of
/// positions of the rows whose ORDER BY keys equal row `k`'s.
struct Partition<'a> {
    /// Row indexes, in window order.
    rows: &'a [usize],
    /// `(first, end)` positions of each position's peer group.
    peers: Vec<(usize, usize)>,
}

impl Partition<'_> {
    fn len(&self) -> usize {
        self.rows.len()
    }

    /// Row `k`'s frame as positions `lo..hi`, empty when `lo >= hi`.
    fn frame(&self, frame: &WindowFrame, k: usize) -> (usize, usize) {
        let n = self.len();
        let rows = frame.units == FrameUnits::Rows;
        let (first_peer, end_peer) = self.peers[k];
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
        (lo, hi)
    }
}

/// The arguments of one window call, evaluated for every row (indexed like the rows).
struct Args {
    /// The first argument (`Value::Int(1)` for `COUNT(*)`), or nothing for ranking functions.
    value: Vec<Value>,
    /// `LAG`'s and `LEAD`'s offset.
    offset: Vec<Value>,
    /// `LAG`'s and `LEAD`'s default.
    default: Vec<Value>,
    /// The first argument's collation, which MIN and MAX of text compare by (None: the
    /// default), as the grouped aggregates do.
    collation: Option<&'static Collation>,
}

impl Run<'_> {
    /// Computes window functions (ranking, distribution, offset, FIRST_VALUE/LAST_VALUE and
    /// aggregates over frames) into extra hidden columns, one per call, recorded in
    /// `computed` so that evaluating the call reads its column.
    pub(crate) fn windows(
        &mut self,
        cols: &mut Vec<Col>,
        rows: &mut [Vec<Value>],
        computed: &mut Vec<(usize, usize)>,
        windows: &[&Expr],
        outer: Option<&Env<'_>>,
    ) -> Result<(), SqlError> {
        for w in windows {
            let ExprKind::Function(f) = &w.kind else { continue };
            let Some(spec) = &f.over else { continue };
            let kind = classify(f, spec)?;
            let values = self.window_values(f, spec, kind, cols, rows, computed, outer)?;
            let at = cols.len();
            cols.push(Col::hidden("window", SqlType::BigInt));
            for (row, v) in rows.iter_mut().zip(values) {
                row.push(v);
            }
            computed.push((*w as *const Expr as usize, at));
        }
        Ok(())
    }

    /// The values of one window call, indexed like `rows`.
    #[allow(clippy::too_many_arguments)]
    fn window_values(
        &mut self,
        f: &FunctionCall,
        spec: &WindowSpec,
        kind: Kind,
        cols: &[Col],
        rows: &[Vec<Value>],
        computed: &[(usize, usize)],
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Value>, SqlError> {
        let arg_exprs: &[Expr] = match &f.args {
            FunctionArgs::List { args, .. } => args,
            _ => &[],
        };
        let star = matches!(f.args, FunctionArgs::Star);
        // A percentile's rows are ordered by its WITHIN GROUP expression, which is also the
        // value it picks from; its argument (the fraction) waits in `offset`.
        let percentile = matches!(kind, Kind::PercentileCont | Kind::PercentileDisc);
        let ordered_spec;
        let spec = if percentile {
            ordered_spec = WindowSpec { order_by: f.within_group.clone(), ..spec.clone() };
            &ordered_spec
        } else {
            spec
        };
        // LAG's and LEAD's default takes the type of the value it stands in for.
        let value_type = arg_exprs.first().and_then(|e| self.static_type(e, cols));
        let collation = match arg_exprs.first() {
            Some(e) if !star && !percentile => label_in(e, cols)?.collation(),
            _ => None,
        };
        let mut args =
            Args { value: Vec::new(), offset: Vec::new(), default: Vec::new(), collation };
        let mut keyed: Vec<(Vec<Value>, usize)> = Vec::with_capacity(rows.len());
        let mut parts = Vec::with_capacity(rows.len());
        // Text partitions and sorts by its collation; a percentile's sort key is also its
        // value, and stays as it is.
        let mut partition_collations = Vec::with_capacity(spec.partition_by.len());
        for e in &spec.partition_by {
            partition_collations.push(label_in(e, cols)?.collation());
        }
        let mut order_collations = Vec::with_capacity(spec.order_by.len());
        for o in &spec.order_by {
            order_collations.push(if percentile {
                None
            } else {
                label_in(&o.expr, cols)?.collation()
            });
        }
        // The keys, partitions, arguments and values made per row are held against a grant:
        // past the workspace the statement fails with error 701 rather than take the
        // server's memory (they are not spilled).
        let mut grant = self.memory_grant();
        let mut unheld = 0;
        for (i, row) in rows.iter().enumerate() {
            self.row_interruption_point(i)?;
            if unheld >= HOLD_BYTES {
                grant.hold(std::mem::take(&mut unheld))?;
            }
            let env = Env { cols, row, outer, computed };
            let mut key = Vec::with_capacity(spec.partition_by.len() + spec.order_by.len());
            for (e, c) in spec.partition_by.iter().zip(&partition_collations) {
                key.push(collation::sort_value(self.eval(e, &env)?, *c));
            }
            parts.push(group_key(&key));
            for (o, c) in spec.order_by.iter().zip(&order_collations) {
                key.push(collation::sort_value(self.eval(&o.expr, &env)?, *c));
            }
            if percentile {
                // The WITHIN GROUP expression, evaluated just above as the first sort key.
                let by = key.get(spec.partition_by.len()).cloned();
                args.value.push(by.unwrap_or(Value::Null));
                args.offset.push(match arg_exprs.first() {
                    Some(e) => self.eval(e, &env)?,
                    None => Value::Null,
                });
            } else if star {
                args.value.push(Value::Int(1));
            } else if let Some(e) = arg_exprs.first() {
                args.value.push(self.eval(e, &env)?);
            }
            let part = parts.last().map_or(0, String::capacity);
            unheld += row_bytes(&key) + part + PER_ROW_BYTES;
            keyed.push((key, i));
            if matches!(kind, Kind::Lag | Kind::Lead) {
                args.offset.push(match arg_exprs.get(1) {
                    Some(e) => self.eval(e, &env)?,
                    None => Value::BigInt(1),
                });
                let default = match arg_exprs.get(2) {
                    Some(e) => self.eval(e, &env)?,
                    None => Value::Null,
                };
                args.default.push(match value_type {
                    Some(ty) if !default.is_null() => scalar::convert(default, ty, None)?,
                    _ => default,
                });
            }
        }
        grant.hold(unheld)?;
        let mut desc = vec![false; spec.partition_by.len()];
        desc.extend(spec.order_by.iter().map(|o| o.descending));
        sort_by_keys(&mut keyed, &desc)?;
        let order: Vec<usize> = keyed.iter().map(|(_, i)| *i).collect();
        let skip = spec.partition_by.len();
        let same_order = vec![false; spec.order_by.len()];
        let frame = effective_frame(spec);
        let mut values = vec![Value::Null; rows.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && parts[order[end]] == parts[order[start]] {
                end += 1;
            }
            let mut peers = Vec::with_capacity(end - start);
            let mut first = 0;
            for k in 0..end - start {
                if k > 0 {
                    let (a, b) = (&keyed[start + k].0[skip..], &keyed[start + k - 1].0[skip..]);
                    if compare_keys(a, b, &same_order)? != std::cmp::Ordering::Equal {
                        first = k;
                    }
                }
                peers.push((first, 0));
            }
            let mut group_end = end - start;
            for k in (0..end - start).rev() {
                peers[k].1 = group_end;
                if peers[k].0 == k {
                    group_end = k;
                }
            }
            let partition = Partition { rows: &order[start..end], peers };
            let out =
                partition_values(kind, &frame, &partition, &args, &|| self.interruption_point())?;
            for (k, v) in out.into_iter().enumerate() {
                values[partition.rows[k]] = v;
            }
            self.interruption_point()?;
            start = end;
        }
        Ok(values)
    }
}

/// The values of one call for the rows of one partition, in window order.
/// `cancelled` is asked now and then while a wide frame is added up, which can be long work.
fn partition_values(
    kind: Kind,
    frame: &WindowFrame,
    p: &Partition<'_>,
    args: &Args,
    cancelled: &dyn Fn() -> Result<(), SqlError>,
) -> Result<Vec<Value>, SqlError> {
    let n = p.len();
    let value = |k: usize| args.value[p.rows[k]].clone();
    Ok(match kind {
        Kind::RowNumber => (0..n).map(|k| Value::BigInt(k as i64 + 1)).collect(),
        Kind::Rank => p.peers.iter().map(|&(first, _)| Value::BigInt(first as i64 + 1)).collect(),
        Kind::DenseRank => {
            let mut dense = 0i64;
            let mut out = Vec::with_capacity(n);
            for (k, &(first, _)) in p.peers.iter().enumerate() {
                if first == k {
                    dense += 1;
                }
                out.push(Value::BigInt(dense));
            }
            out
        }
        Kind::PercentRank => p
            .peers
            .iter()
            .map(|&(first, _)| {
                Value::Float(if n > 1 { first as f64 / (n - 1) as f64 } else { 0.0 })
            })
            .collect(),
        Kind::CumeDist => {
            p.peers.iter().map(|&(_, end)| Value::Float(end as f64 / n as f64)).collect()
        }
        Kind::Ntile => {
            // The tile count is read from the partition's first row.
            let tiles = match scalar::convert(value(0), SqlType::BigInt, None) {
                Ok(Value::BigInt(t)) if t > 0 => t as usize,
                _ => {
                    return Err(SqlError::with_severity(
                        4116,
                        15,
                        "The function 'ntile' takes only a positive int or bigint expression as its input.",
                    ))
                }
            };
            (0..n).map(|k| Value::BigInt(ntile(k, n, tiles) as i64)).collect()
        }
        Kind::Lag | Kind::Lead => {
            let mut out = Vec::with_capacity(n);
            for k in 0..n {
                let row = p.rows[k];
                let offset = match scalar::convert(args.offset[row].clone(), SqlType::BigInt, None)?
                {
                    Value::BigInt(o) if o < 0 => return Err(SqlError::new(
                        8730,
                        "Offset parameter for Lag and Lead functions cannot be a negative value.",
                    )),
                    Value::BigInt(o) => usize::try_from(o).unwrap_or(usize::MAX),
                    _ => {
                        out.push(Value::Null);
                        continue;
                    }
                };
                let target =
                    if kind == Kind::Lag { k.checked_sub(offset) } else { k.checked_add(offset) };
                out.push(match target.filter(|&t| t < n) {
                    Some(t) => value(t),
                    None => args.default[row].clone(),
                });
            }
            out
        }
        Kind::FirstValue | Kind::LastValue => (0..n)
            .map(|k| {
                let (lo, hi) = p.frame(frame, k);
                match (lo < hi, kind == Kind::FirstValue) {
                    (false, _) => Value::Null,
                    (true, true) => value(lo),
                    (true, false) => value(hi - 1),
                }
            })
            .collect(),
        Kind::PercentileCont | Kind::PercentileDisc => {
            let fraction = match p.rows.first() {
                Some(&row) => percentile_fraction(&args.offset[row], kind)?,
                None => 0.0,
            };
            // NULLs take no part; the rest are in the WITHIN GROUP order.
            let present: Vec<Value> = (0..n).map(value).filter(|v| !v.is_null()).collect();
            let picked = percentile(&present, fraction, kind == Kind::PercentileCont)?;
            vec![picked; n]
        }
        Kind::Aggregate(agg) => frame_aggregates(agg, frame, p, args, cancelled)?,
    })
}

/// A percentile's fraction, which must be a number from 0 to 1 (error 4124).
fn percentile_fraction(v: &Value, kind: Kind) -> Result<f64, SqlError> {
    let name = if kind == Kind::PercentileCont { "PERCENTILE_CONT" } else { "PERCENTILE_DISC" };
    match scalar::convert(v.clone(), SqlType::Float, None) {
        Ok(Value::Float(x)) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(SqlError::new(
            4124,
            format!("The {name} function's first argument must be between 0.0 and 1.0 inclusive."),
        )),
    }
}

/// The `fraction` percentile of `sorted` (no NULLs): PERCENTILE_CONT interpolates between the
/// two rows around position 1 + fraction * (n - 1), as a FLOAT; PERCENTILE_DISC takes the
/// first value whose cumulative distribution reaches the fraction, in its own type.
fn percentile(sorted: &[Value], fraction: f64, continuous: bool) -> Result<Value, SqlError> {
    let n = sorted.len();
    if n == 0 {
        return Ok(Value::Null);
    }
    if !continuous {
        let at = (0..n).find(|&k| (k + 1) as f64 / n as f64 >= fraction).unwrap_or(n - 1);
        return Ok(sorted[at].clone());
    }
    let float = |k: usize| -> Result<f64, SqlError> {
        match scalar::convert(sorted[k].clone(), SqlType::Float, None)? {
            Value::Float(x) => Ok(x),
            _ => Ok(0.0),
        }
    };
    let position = fraction * (n - 1) as f64;
    let (below, above) = (position.floor() as usize, position.ceil() as usize);
    let low = float(below)?;
    Ok(Value::Float(if below == above {
        low
    } else {
        low + (position - below as f64) * (float(above)? - low)
    }))
}

/// The 1-based tile of position `k` of `n` rows cut into `tiles` tiles whose sizes differ by
/// at most one, the larger ones first.
fn ntile(k: usize, n: usize, tiles: usize) -> usize {
    let size = n / tiles;
    let larger = n % tiles;
    let in_larger = larger * (size + 1);
    if k < in_larger {
        k / (size + 1) + 1
    } else {
        larger + (k - in_larger) / size + 1
    }
}

/// An aggregate over every row's frame. Frames that start at the partition's first row
/// grow forward and frames that end at its last row grow backward, so one accumulator
/// serves the whole partition; other frames are bounded by their offsets (or are peer
/// groups), and each distinct one is computed once.
fn frame_aggregates(
    agg: Agg,
    frame: &WindowFrame,
    p: &Partition<'_>,
    args: &Args,
    cancelled: &dyn Fn() -> Result<(), SqlError>,
) -> Result<Vec<Value>, SqlError> {
    let n = p.len();
    let value = |k: usize| &args.value[p.rows[k]];
    let mut out = vec![Value::Null; n];
    if frame.start == FrameBound::UnboundedPreceding {
        let mut acc = Accumulator::new(agg, args.collation);
        let mut next = 0;
        for (k, slot) in out.iter_mut().enumerate() {
            let (_, hi) = p.frame(frame, k);
            while next < hi {
                acc.add(value(next))?;
                next += 1;
            }
            *slot = acc.result()?;
        }
    } else if frame.end == FrameBound::UnboundedFollowing {
        let mut acc = Accumulator::new(agg, args.collation);
        let mut first = n;
        for k in (0..n).rev() {
            let (lo, _) = p.frame(frame, k);
            while first > lo {
                first -= 1;
                acc.add(value(first))?;
            }
            out[k] = acc.result()?;
        }
    } else {
        let mut last: Option<((usize, usize), Value)> = None;
        // Values added since `cancelled` was last asked: a frame of n rows each way costs
        // about 2n additions per row.
        let mut added = 0usize;
        for (k, slot) in out.iter_mut().enumerate() {
            let bounds = p.frame(frame, k);
            if let Some((b, v)) = &last {
                if *b == bounds {
                    *slot = v.clone();
                    continue;
                }
            }
            let mut acc = Accumulator::new(agg, args.collation);
            for j in bounds.0..bounds.1.max(bounds.0) {
                acc.add(value(j))?;
            }
            added += bounds.1.saturating_sub(bounds.0);
            if added >= 1 << 16 {
                cancelled()?;
                added = 0;
            }
            let v = acc.result()?;
            *slot = v.clone();
            last = Some((bounds, v));
        }
    }
    Ok(out)
}

/// An aggregate's state over the non-NULL values added so far.
struct Accumulator {
    agg: Agg,
    /// The collation MIN and MAX compare text by.
    collation: Option<&'static Collation>,
    count: i64,
    /// The sum (SUM, AVG) or the best value (MIN, MAX) so far.
    value: Option<Value>,
}

impl Accumulator {
    fn new(agg: Agg, collation: Option<&'static Collation>) -> Self {
        Accumulator { agg, collation, count: 0, value: None }
    }

    fn add(&mut self, v: &Value) -> Result<(), SqlError> {
        if v.is_null() {
            scalar::settings::null_eliminated();
            return Ok(());
        }
        self.count += 1;
        self.value = match (self.agg, self.value.take()) {
            (Agg::Count | Agg::CountBig, _) => None,
            (Agg::Sum, None) => Some(sum_seed("SUM", v.clone())?),
            (Agg::Avg, None) => Some(sum_seed("AVG", v.clone())?),
            (Agg::Sum | Agg::Avg, Some(sum)) => {
                Some(scalar::binary(BinaryOp::Add, sum, v.clone())?)
            }
            (Agg::Min | Agg::Max, None) => Some(v.clone()),
            (Agg::Min | Agg::Max, Some(best)) => {
                let o = compare_collated(v, &best, self.collation)?
                    .unwrap_or(std::cmp::Ordering::Equal);
                let better = if self.agg == Agg::Min {
                    o == std::cmp::Ordering::Less
                } else {
                    o == std::cmp::Ordering::Greater
                };
                Some(if better { v.clone() } else { best })
            }
        };
        Ok(())
    }

    fn result(&self) -> Result<Value, SqlError> {
        match (self.agg, &self.value) {
            (Agg::Count, _) => {
                Ok(Value::Int(i32::try_from(self.count).map_err(|_| SqlError::overflow("int"))?))
            }
            (Agg::CountBig, _) => Ok(Value::BigInt(self.count)),
            (_, None) => Ok(Value::Null),
            (Agg::Avg, Some(sum)) => average(sum.clone(), self.count),
            (_, Some(v)) => Ok(v.clone()),
        }
    }
}

/// The running sum SUM and AVG start from, given their first non-NULL value: SQL Server
/// widens tinyint, smallint and bit to int, decimal to decimal(38, s) and real to float,
/// and keeps the other numeric types; character data is error 8117.
pub(crate) fn sum_seed(name: &str, first: Value) -> Result<Value, SqlError> {
    Ok(match first {
        Value::TinyInt(_) | Value::SmallInt(_) | Value::Bit(_) => {
            scalar::convert(first, SqlType::Int, None)?
        }
        Value::Decimal(d) => scalar::convert(
            Value::Decimal(d),
            SqlType::Decimal { precision: 38, scale: d.scale() },
            None,
        )?,
        Value::Real(_) => scalar::convert(first, SqlType::Float, None)?,
        Value::Str(_) | Value::NStr(_) => {
            return Err(SqlError::new(
                8117,
                format!(
                    "Operand data type varchar is invalid for {} operator.",
                    name.to_lowercase()
                ),
            ))
        }
        other => other,
    })
}

/// AVG from the sum of `n` values, in the sum's type (integer division for integers; MONEY
/// stays MONEY, as SQL Server types AVG of the money category, rounded to its four places).
pub(crate) fn average(sum: Value, n: i64) -> Result<Value, SqlError> {
    let divisor = match &sum {
        Value::Money(_) => Value::BigInt(n),
        Value::Decimal(_) => Value::Decimal(Decimal::from_i64(n)),
        Value::Float(_) => Value::Float(n as f64),
        Value::BigInt(_) => Value::BigInt(n),
        _ => Value::Int(i32::try_from(n).unwrap_or(i32::MAX)),
    };
    scalar::binary(BinaryOp::Divide, sum, divisor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntile_puts_the_larger_tiles_first() {
        let tiles = |n, t| (0..n).map(|k| ntile(k, n, t)).collect::<Vec<_>>();
        assert_eq!(tiles(10, 4), [1, 1, 1, 2, 2, 2, 3, 3, 4, 4]);
        assert_eq!(tiles(4, 4), [1, 2, 3, 4]);
        assert_eq!(tiles(2, 5), [1, 2]);
        assert_eq!(tiles(3, 1), [1, 1, 1]);
    }

    fn partition(keys: &[i32]) -> (Vec<usize>, Vec<(usize, usize)>) {
        let rows = (0..keys.len()).collect();
        let mut peers = Vec::new();
        for (k, key) in keys.iter().enumerate() {
            let first = keys.iter().position(|x| x == key).unwrap_or(k);
            let end = keys.iter().rposition(|x| x == key).map_or(k + 1, |e| e + 1);
            peers.push((first, end));
        }
        (rows, peers)
    }

    #[test]
    fn frames_follow_rows_or_peers() {
        let (rows, peers) = partition(&[1, 2, 2, 3]);
        let p = Partition { rows: &rows, peers };
        let frame = |units, start, end| WindowFrame { units, start, end };
        let range =
            frame(FrameUnits::Range, FrameBound::UnboundedPreceding, FrameBound::CurrentRow);
        assert_eq!(
            (0..4).map(|k| p.frame(&range, k)).collect::<Vec<_>>(),
            [(0, 1), (0, 3), (0, 3), (0, 4)]
        );
        let rows2 = frame(FrameUnits::Rows, FrameBound::Preceding(1), FrameBound::CurrentRow);
        assert_eq!(
            (0..4).map(|k| p.frame(&rows2, k)).collect::<Vec<_>>(),
            [(0, 1), (0, 2), (1, 3), (2, 4)]
        );
        let ahead = frame(FrameUnits::Rows, FrameBound::Following(1), FrameBound::Following(2));
        assert_eq!(
            (0..4).map(|k| p.frame(&ahead, k)).collect::<Vec<_>>(),
            [(1, 3), (2, 4), (3, 4), (4, 4)]
        );
    }

    #[test]
    fn aggregates_over_growing_and_shrinking_frames() -> Result<(), SqlError> {
        let (rows, peers) = partition(&[1, 2, 2, 3]);
        let p = Partition { rows: &rows, peers };
        let args = Args {
            value: vec![Value::Int(1), Value::Int(2), Value::Null, Value::Int(4)],
            offset: Vec::new(),
            default: Vec::new(),
            collation: None,
        };
        let frame = |start, end| WindowFrame { units: FrameUnits::Rows, start, end };
        let running = frame(FrameBound::UnboundedPreceding, FrameBound::CurrentRow);
        let ints = |v: Vec<i32>| v.into_iter().map(Value::Int).collect::<Vec<_>>();
        assert_eq!(
            frame_aggregates(Agg::Sum, &running, &p, &args, &|| Ok(()))?,
            ints(vec![1, 3, 3, 7])
        );
        assert_eq!(
            frame_aggregates(Agg::Count, &running, &p, &args, &|| Ok(()))?,
            ints(vec![1, 2, 2, 3])
        );
        let rest = frame(FrameBound::CurrentRow, FrameBound::UnboundedFollowing);
        assert_eq!(
            frame_aggregates(Agg::Max, &rest, &p, &args, &|| Ok(()))?,
            ints(vec![4, 4, 4, 4])
        );
        assert_eq!(
            frame_aggregates(Agg::Min, &rest, &p, &args, &|| Ok(()))?,
            ints(vec![1, 2, 4, 4])
        );
        let pair = frame(FrameBound::Preceding(1), FrameBound::CurrentRow);
        assert_eq!(
            frame_aggregates(Agg::Avg, &pair, &p, &args, &|| Ok(()))?,
            ints(vec![1, 1, 2, 4])
        );
        Ok(())
    }
}
