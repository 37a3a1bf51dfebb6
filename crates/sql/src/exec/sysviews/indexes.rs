//! `sys.indexes`, `sys.index_columns`, `sys.partitions`, `sys.allocation_units` and
//! `sys.dm_db_partition_stats` (one partition per index, as an unpartitioned table has),
//! and the partitioning views Walden has nothing for.

use walden_engine::catalog::{IndexDef, Object};
use walden_engine::types::{Len, SqlType, Value};

use super::{big, bit, int, nstr, small, tiny, View, ViewContext, DESC, SYSNAME};
use crate::exec::RowSet;

/// One index of a table, for `sys.indexes` and `sys.index_columns`.
struct IndexRow {
    object_id: u32,
    index: IndexDef,
}

fn index_rows(ctx: &ViewContext<'_>) -> Vec<IndexRow> {
    ctx.database
        .catalog()
        .objects()
        .iter()
        .filter_map(|o| match &**o {
            Object::Table(t) => Some(t),
            _ => None,
        })
        .flat_map(|t| t.indexes.iter().map(|i| IndexRow { object_id: t.id, index: i.clone() }))
        .collect()
}

/// `sys.indexes`: index 0 is a heap (no name), 1 the clustered index, 2.. nonclustered.
pub(super) fn indexes(ctx: &ViewContext<'_>) -> RowSet {
    let off = |_: &IndexRow| bit(false);
    View::<IndexRow>::new()
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .opt("name", SYSNAME, |r| {
            if r.index.is_heap() {
                Value::Null
            } else {
                nstr(r.index.name.as_str())
            }
        })
        .col("index_id", SqlType::Int, |r| {
            int(if r.index.is_heap() { 0 } else { i64::from(r.index.id) })
        })
        .col("type", SqlType::TinyInt, |r| tiny(index_type(&r.index)))
        .opt("type_desc", DESC, |r| {
            nstr(["HEAP", "CLUSTERED", "NONCLUSTERED"][usize::from(index_type(&r.index))])
        })
        .opt("is_unique", SqlType::Bit, |r| bit(!r.index.is_heap() && r.index.unique))
        .opt("data_space_id", SqlType::Int, |_| int(1))
        .opt("ignore_dup_key", SqlType::Bit, |r| bit(r.index.ignore_dup_key))
        .opt("is_primary_key", SqlType::Bit, |r| bit(r.index.primary_key))
        .opt("is_unique_constraint", SqlType::Bit, |r| bit(r.index.unique_constraint))
        .col("fill_factor", SqlType::TinyInt, |_| tiny(0))
        .opt("is_padded", SqlType::Bit, off)
        .opt("is_disabled", SqlType::Bit, off)
        .opt("is_hypothetical", SqlType::Bit, off)
        .opt("allow_row_locks", SqlType::Bit, |_| bit(true))
        .opt("allow_page_locks", SqlType::Bit, |_| bit(true))
        .opt("has_filter", SqlType::Bit, off)
        .opt("filter_definition", SqlType::NVarChar(Len::Max), |_| Value::Null)
        .rows(&index_rows(ctx))
}

/// An index with what its tree holds now, for `sys.partitions` and `sys.allocation_units`.
struct PartitionRow {
    object_id: u32,
    /// SQL Server's index id: 0 for a heap.
    index_id: u32,
    /// Entries and pages, from a walk of the tree under its shared latch (`None` if a page
    /// failed its checksum: a damaged tree, which `DBCC CHECKTABLE` reports).
    counts: Option<(u64, u64)>,
}

impl PartitionRow {
    /// The partition's (and its heap or B-tree's, and its one allocation unit's) id.
    fn id(&self) -> u64 {
        (u64::from(self.object_id) << 16) | u64::from(self.index_id)
    }
}

/// Every index of every table of the view's database, with its rows and pages. Like SQL
/// Server's metadata, the counts take no locks (only each tree's latch, shared, while its
/// pages are counted): they include changes not yet committed.
fn partition_rows(ctx: &ViewContext<'_>) -> Vec<PartitionRow> {
    index_rows(ctx)
        .into_iter()
        .map(|r| PartitionRow {
            object_id: r.object_id,
            index_id: if r.index.is_heap() { 0 } else { u32::from(r.index.id) },
            counts: ctx.database.space().tree(r.index.root).count().ok().map(|c| (c.rows, c.pages)),
        })
        .collect()
}

/// `sys.partitions`: one partition per index (Walden does not partition tables).
pub(super) fn partitions(ctx: &ViewContext<'_>) -> RowSet {
    View::<PartitionRow>::new()
        .col("partition_id", SqlType::BigInt, |r| big(r.id()))
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("index_id", SqlType::Int, |r| int(i64::from(r.index_id)))
        .col("partition_number", SqlType::Int, |_| int(1))
        .opt("hobt_id", SqlType::BigInt, |r| big(r.id()))
        .opt("rows", SqlType::BigInt, |r| r.counts.map_or(Value::Null, |(rows, _)| big(rows)))
        .col("filestream_filegroup_id", SqlType::SmallInt, |_| small(0))
        .col("data_compression", SqlType::TinyInt, |_| tiny(0))
        .opt("data_compression_desc", DESC, |_| nstr("NONE"))
        .rows(&partition_rows(ctx))
}

/// `sys.allocation_units`: each partition's one in-row data unit, with its tree's pages.
pub(super) fn allocation_units(ctx: &ViewContext<'_>) -> RowSet {
    let pages = |r: &PartitionRow| r.counts.map_or(Value::Null, |(_, pages)| big(pages));
    View::<PartitionRow>::new()
        .col("allocation_unit_id", SqlType::BigInt, |r| big(r.id()))
        .col("type", SqlType::TinyInt, |_| tiny(1))
        .opt("type_desc", DESC, |_| nstr("IN_ROW_DATA"))
        .col("container_id", SqlType::BigInt, |r| big(r.id()))
        .opt("data_space_id", SqlType::Int, |_| int(1))
        .col("total_pages", SqlType::BigInt, pages)
        .col("used_pages", SqlType::BigInt, pages)
        .col("data_pages", SqlType::BigInt, pages)
        .rows(&partition_rows(ctx))
}

/// SQL Server's index type: 0 heap, 1 clustered, 2 nonclustered.
fn index_type(index: &IndexDef) -> u8 {
    match (index.is_heap(), index.id) {
        (true, _) => 0,
        (false, 1) => 1,
        _ => 2,
    }
}

/// One key column of an index, for `sys.index_columns`.
struct IndexColumnRow {
    object_id: u32,
    index_id: u16,
    ordinal: usize,
    column: usize,
}

/// The key columns of the indexes `index_rows` gives, in key order.
fn index_column_rows(indexes: Vec<IndexRow>) -> Vec<IndexColumnRow> {
    indexes
        .into_iter()
        .flat_map(|r| {
            r.index.columns.clone().into_iter().enumerate().map(move |(i, c)| IndexColumnRow {
                object_id: r.object_id,
                index_id: r.index.id,
                ordinal: i + 1,
                column: c,
            })
        })
        .collect()
}

/// `sys.index_columns`: the key columns of every index, in key order (all ascending).
pub(super) fn index_columns(ctx: &ViewContext<'_>) -> RowSet {
    let rows = index_column_rows(index_rows(ctx));
    View::<IndexColumnRow>::new()
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("index_id", SqlType::Int, |r| int(i64::from(r.index_id)))
        .col("index_column_id", SqlType::Int, |r| int(r.ordinal as i64))
        .col("column_id", SqlType::Int, |r| int(r.column as i64 + 1))
        .col("key_ordinal", SqlType::TinyInt, |r| tiny(r.ordinal as u8))
        .col("partition_ordinal", SqlType::TinyInt, |_| tiny(0))
        .opt("is_descending_key", SqlType::Bit, |_| bit(false))
        .opt("is_included_column", SqlType::Bit, |_| bit(false))
        // SQL Server 2022's: no columnstore indexes here, so never part of one's order.
        .col("column_store_order_ordinal", SqlType::TinyInt, |_| tiny(0))
        .rows(&rows)
}

/// `sys.dm_db_partition_stats`: each partition's rows and pages, as `sys.partitions` and
/// `sys.allocation_units` count them (every page is in-row data, used and reserved alike).
pub(super) fn partition_stats(ctx: &ViewContext<'_>) -> RowSet {
    let pages = |r: &PartitionRow| r.counts.map_or(Value::Null, |(_, pages)| big(pages));
    let zero = |_: &PartitionRow| big(0);
    View::<PartitionRow>::new()
        .col("partition_id", SqlType::BigInt, |r| big(r.id()))
        .col("object_id", SqlType::Int, |r| int(i64::from(r.object_id)))
        .col("index_id", SqlType::Int, |r| int(i64::from(r.index_id)))
        .col("partition_number", SqlType::Int, |_| int(1))
        .opt("in_row_data_page_count", SqlType::BigInt, pages)
        .opt("in_row_used_page_count", SqlType::BigInt, pages)
        .opt("in_row_reserved_page_count", SqlType::BigInt, pages)
        .opt("lob_used_page_count", SqlType::BigInt, zero)
        .opt("lob_reserved_page_count", SqlType::BigInt, zero)
        .opt("row_overflow_used_page_count", SqlType::BigInt, zero)
        .opt("row_overflow_reserved_page_count", SqlType::BigInt, zero)
        .opt("used_page_count", SqlType::BigInt, pages)
        .opt("reserved_page_count", SqlType::BigInt, pages)
        .opt("row_count", SqlType::BigInt, |r| r.counts.map_or(Value::Null, |(rows, _)| big(rows)))
        .rows(&partition_rows(ctx))
}

/// `sys.partition_schemes` and `sys.partition_functions`: Walden has no partitioning (every
/// table and index is on the one filegroup), so there are none; maintenance scripts join
/// them to tell partitioned indexes apart.
pub(super) fn partition_schemes() -> RowSet {
    let none = |_: &()| Value::Null;
    View::<()>::new()
        .col("name", SYSNAME, none)
        .col("data_space_id", SqlType::Int, none)
        .col("type", SqlType::NVarChar(Len::N(2)), none)
        .opt("type_desc", DESC, none)
        .col("is_default", SqlType::Bit, none)
        .col("is_system", SqlType::Bit, none)
        .col("function_id", SqlType::Int, none)
        .rows(&[])
}

/// `sys.index_resumable_operations`: index builds paused to resume later. Walden's index
/// builds are not resumable, so there are none (IndexOptimize looks for them first).
pub(super) fn index_resumable_operations() -> RowSet {
    let none = |_: &()| Value::Null;
    View::<()>::new()
        .col("object_id", SqlType::Int, none)
        .col("index_id", SqlType::Int, none)
        .col("name", SYSNAME, none)
        .col("sql_text", SqlType::NVarChar(Len::Max), none)
        .col("last_max_dop_used", SqlType::SmallInt, none)
        .col("partition_number", SqlType::Int, none)
        .col("state", SqlType::TinyInt, none)
        .col("state_desc", DESC, none)
        .col("start_time", SqlType::DateTime, none)
        .col("last_pause_time", SqlType::DateTime, none)
        .col("total_execution_time", SqlType::Int, none)
        .col("percent_complete", SqlType::Float, none)
        .col("page_count", SqlType::BigInt, none)
        .rows(&[])
}

/// See [`partition_schemes`].
pub(super) fn partition_functions() -> RowSet {
    let none = |_: &()| Value::Null;
    View::<()>::new()
        .col("name", SYSNAME, none)
        .col("function_id", SqlType::Int, none)
        .col("type", SqlType::NVarChar(Len::N(2)), none)
        .opt("type_desc", DESC, none)
        .col("fanout", SqlType::Int, none)
        .col("boundary_value_on_right", SqlType::Bit, none)
        .col("is_system", SqlType::Bit, none)
        .col("create_date", SqlType::DateTime, none)
        .col("modify_date", SqlType::DateTime, none)
        .rows(&[])
}
