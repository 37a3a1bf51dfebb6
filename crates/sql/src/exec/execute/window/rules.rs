//! What SQL Server allows of a window call, and what each kind computes: a call is
//! classified from its name and OVER clause before any row is read, and refused with SQL
//! Server's error where SQL Server refuses it.

use crate::ast::{FrameBound, FrameUnits, FunctionArgs, FunctionCall, WindowFrame, WindowSpec};
use crate::exec::eval::is_aggregate;
use crate::exec::SqlError;

/// What a window call computes, decided from its name and OVER clause before any row is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
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
pub(super) enum Agg {
    Count,
    CountBig,
    Sum,
    Avg,
    Min,
    Max,
}

impl Kind {
    /// Ranking, distribution and offset functions: they need an ORDER BY and take no frame.
    pub(super) fn is_frameless(self) -> bool {
        !matches!(self, Kind::FirstValue | Kind::LastValue | Kind::Aggregate(_))
    }
}

/// The kind of window call `f`, checked against its OVER clause as SQL Server checks it.
pub(super) fn classify(f: &FunctionCall, spec: &WindowSpec) -> Result<Kind, SqlError> {
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
pub(super) fn effective_frame(spec: &WindowSpec) -> WindowFrame {
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
