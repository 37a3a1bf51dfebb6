//! `sys.stats`, `sys.stats_columns` and `sys.dm_db_stats_properties(object_id, stats_id)`:
//! the statistics objects of the database's tables (`exec::statistics_objects`).

use std::sync::Arc;

use walden_engine::catalog::{Object, TableDef};
use walden_engine::statistics::{Histogram, StatisticsDef};
use walden_engine::types::{Len, SqlType, Value};

use super::{big, bit, datetime2_from_unix_micros, int, nstr, View, ViewContext, SYSNAME};
use crate::exec::plan::statistics_objects::{targets, Target};
use crate::exec::{RowSet, SqlError};

/// One statistics object with its table.
struct StatsRow {
    object_id: u32,
    target: Target,
}

impl StatsRow {
    fn object(&self) -> Option<&Arc<StatisticsDef>> {
        self.target.object.as_ref()
    }
}

/// The database's tables.
fn tables(ctx: &ViewContext<'_>) -> Vec<Arc<TableDef>> {
    ctx.database
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::Table(t) => Some(Arc::clone(t)),
            _ => None,
        })
        .collect()
}

fn stats_rows(ctx: &ViewContext<'_>) -> Vec<StatsRow> {
    tables(ctx)
        .iter()
        .flat_map(|t| {
            targets(ctx.database, t).into_iter().map(|target| StatsRow { object_id: t.id, target })
        })
        .collect()
}

/// `sys.stats`: every index's statistics (named and numbered as the index) and those made
/// by CREATE STATISTICS.
pub(super) fn stats(ctx: &ViewContext<'_>) -> RowSet {
    let off = |_: &StatsRow| bit(false);
    View::<StatsRow>::new()
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .opt("name", SYSNAME, |r| nstr(r.target.name.as_str()))
        .col("stats_id", SqlType::Int, |r| int(i64::from(r.target.id)))
        .opt("auto_created", SqlType::Bit, |r| bit(r.object().is_some_and(|o| o.auto_created)))
        .opt("user_created", SqlType::Bit, |r| bit(r.object().is_some_and(|o| o.user_created)))
        .opt("no_recompute", SqlType::Bit, |r| bit(r.object().is_some_and(|o| o.no_recompute)))
        .opt("has_filter", SqlType::Bit, off)
        .opt("filter_definition", SqlType::NVarChar(Len::Max), |_| Value::Null)
        .opt("is_temporary", SqlType::Bit, off)
        .opt("is_incremental", SqlType::Bit, off)
        .opt("has_persisted_sample", SqlType::Bit, off)
        .opt("stats_generation_method", SqlType::Int, |_| int(0))
        .opt("stats_generation_method_desc", SqlType::VarChar(Len::N(80)), |_| {
            Value::Str("Stats from table".into())
        })
        .opt("auto_drop", SqlType::Bit, off)
        .rows(&stats_rows(ctx))
}

/// One column of a statistics object.
struct ColumnRow {
    object_id: u32,
    stats_id: u32,
    ordinal: usize,
    column: usize,
}

/// `sys.stats_columns`: each statistics object's columns, leading column first.
pub(super) fn stats_columns(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<ColumnRow> = stats_rows(ctx)
        .into_iter()
        .flat_map(|r| {
            let (object_id, stats_id) = (r.object_id, r.target.id);
            r.target.columns.into_iter().enumerate().map(move |(i, column)| ColumnRow {
                object_id,
                stats_id,
                ordinal: i + 1,
                column,
            })
        })
        .collect();
    View::<ColumnRow>::new()
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("stats_id", SqlType::Int, |r| int(i64::from(r.stats_id)))
        .col("stats_column_id", SqlType::Int, |r| int(r.ordinal as i64))
        .col("column_id", SqlType::Int, |r| int(r.column as i64 + 1))
        .rows(&rows)
}

/// What `sys.dm_db_stats_properties` shows of one built object.
struct PropertiesRow {
    object_id: u32,
    stats_id: u32,
    histogram: Arc<Histogram>,
    modifications: u64,
}

/// `sys.dm_db_stats_properties(object_id, stats_id)`: the header of one statistics object;
/// no row for one never built or that does not exist, as in SQL Server.
pub(super) fn stats_properties(ctx: &ViewContext<'_>, args: &[Value]) -> Result<RowSet, SqlError> {
    let id = |v: Option<&Value>| match v {
        Some(Value::Int(i)) => u32::try_from(*i).ok(),
        Some(Value::BigInt(i)) => u32::try_from(*i).ok(),
        Some(Value::SmallInt(i)) => u32::try_from(*i).ok(),
        Some(Value::TinyInt(i)) => Some(u32::from(*i)),
        _ => None,
    };
    let mut rows = Vec::new();
    if let (Some(o), Some(s)) = (id(args.first()), id(args.get(1))) {
        let stats = ctx.database.statistics_object(o, s);
        let table = tables(ctx).into_iter().find(|t| t.id == o);
        if let (Some(stats), Some(_)) = (stats, table) {
            if let Some(histogram) = stats.histogram.clone() {
                rows.push(PropertiesRow {
                    object_id: o,
                    stats_id: s,
                    histogram,
                    modifications: ctx.database.modifications_since(&stats),
                });
            }
        }
    }
    Ok(View::<PropertiesRow>::new()
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("stats_id", SqlType::Int, |r| int(i64::from(r.stats_id)))
        .opt("last_updated", SqlType::DateTime2(7), |r| {
            datetime2_from_unix_micros(r.histogram.updated_micros)
                .map_or(Value::Null, Value::DateTime2)
        })
        .opt("rows", SqlType::BigInt, |r| big(r.histogram.rows))
        .opt("rows_sampled", SqlType::BigInt, |r| big(r.histogram.rows_sampled))
        .opt("steps", SqlType::Int, |r| int(r.histogram.steps.len() as i64))
        .opt("unfiltered_rows", SqlType::BigInt, |r| big(r.histogram.rows))
        .opt("modification_counter", SqlType::BigInt, |r| big(r.modifications))
        .opt("persisted_sample_percent", SqlType::Float, |_| Value::Float(0.0))
        .rows(&rows))
}
