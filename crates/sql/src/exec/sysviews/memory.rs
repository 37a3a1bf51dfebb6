//! Where the instance's memory is: `sys.dm_os_buffer_descriptors` (each cached page) and
//! `sys.dm_os_memory_clerks` (the buffer pool's clerk and the query memory it lent). Both read
//! the one frame pool every database shares (`walden_storage::FramePool`), whose budget is
//! the instance's (`docs/memory.md`).

use walden_engine::types::{Len, SqlType};
use walden_storage::{PageDescriptor, PageType, PAGE_SIZE};

use super::{big, bit, int, nstr, small, View, ViewContext, DESC};
use crate::exec::RowSet;

/// One row of `sys.dm_os_buffer_descriptors`: a cached page and its database.
struct BufferRow {
    database_id: u32,
    page: PageDescriptor,
}

/// SQL Server's name for a page of `page_type` (`index_id` tells a nonclustered index's
/// leaves, INDEX_PAGE, from a clustered index's, DATA_PAGE).
fn page_type_name(page_type: Option<PageType>, index_id: u16) -> &'static str {
    match page_type {
        Some(PageType::FileHeader) => "FILEHEADER_PAGE",
        Some(PageType::Boot) => "BOOT_PAGE",
        Some(PageType::Allocation) => "GAM_PAGE",
        Some(PageType::BTreeInternal) => "INDEX_PAGE",
        Some(PageType::BTreeLeaf) if index_id > 1 => "INDEX_PAGE",
        Some(PageType::BTreeLeaf | PageType::Heap | PageType::Catalog) => "DATA_PAGE",
        Some(PageType::Overflow) => "TEXT_MIX_PAGE",
        // Walden keeps freed pages formatted; SQL Server has no type for them.
        Some(PageType::Free) => "FREE_PAGE",
        None => "UNKNOWN",
    }
}

/// `sys.dm_os_buffer_descriptors`: every page cached in the buffer pool, of every online
/// database, by database and page.
pub(super) fn buffer_descriptors(ctx: &ViewContext<'_>) -> RowSet {
    let mut databases = ctx.instance.databases();
    databases.sort_by_key(|db| db.id());
    let rows: Vec<BufferRow> = databases
        .iter()
        .flat_map(|db| {
            let database_id = db.id();
            db.space()
                .pool()
                .descriptors()
                .into_iter()
                .map(move |page| BufferRow { database_id, page })
        })
        .collect();
    View::<BufferRow>::new()
        .col("database_id", SqlType::Int, |r| int(i64::from(r.database_id)))
        // Every database has one data file, file 1.
        .col("file_id", SqlType::Int, |_| int(1))
        .col("page_id", SqlType::Int, |r| int(i64::from(r.page.page_id)))
        .col("page_level", SqlType::Int, |r| int(i64::from(r.page.level)))
        // sys.allocation_units' id for the page's object and index (0 for pages of none).
        .col("allocation_unit_id", SqlType::BigInt, |r| {
            big((u64::from(r.page.object_id) << 16) | u64::from(r.page.index_id))
        })
        .col("page_type", DESC, |r| nstr(page_type_name(r.page.page_type, r.page.index_id)))
        .col("row_count", SqlType::Int, |r| int(r.page.row_count as i64))
        .col("free_space_in_bytes", SqlType::Int, |r| int(r.page.free_space as i64))
        .col("is_modified", SqlType::Bit, |r| bit(r.page.is_modified))
        // Memory is not placed by NUMA node: every frame counts as node 0's.
        .col("numa_node", SqlType::Int, |_| int(0))
        .col("is_in_bpool_extension", SqlType::Bit, |_| bit(false))
        .rows(&rows)
}

/// One row of `sys.dm_os_memory_clerks`.
struct ClerkRow {
    clerk_type: &'static str,
    name: &'static str,
    pages_kb: u64,
    reserved_kb: u64,
}

/// `sys.dm_os_memory_clerks`: the buffer pool's clerk, `MEMORYCLERK_SQLBUFFERPOOL`, with the
/// frames it holds (`pages_kb`) and the whole budget (`virtual_memory_reserved_kb`,
/// `max_server_memory_mb`); and `MEMORYCLERK_SQLQERESERVATIONS`, the memory the pool lent to
/// query memory grants (`pages_kb`) and the most it may lend. The two `pages_kb` sum to at
/// most the budget. Walden keeps no other clerks: the rest of its memory (sessions, log
/// buffers, rows between operators) is not accounted by clerk.
pub(super) fn memory_clerks(ctx: &ViewContext<'_>) -> RowSet {
    let pool = ctx.instance.frame_pool();
    let memory = pool.memory();
    let kb = |bytes: usize| (bytes as u64).div_ceil(1024);
    let rows = [
        ClerkRow {
            clerk_type: "MEMORYCLERK_SQLBUFFERPOOL",
            name: "Default",
            pages_kb: kb(memory.allocated_frames * PAGE_SIZE),
            reserved_kb: kb(memory.capacity_frames * PAGE_SIZE),
        },
        ClerkRow {
            clerk_type: "MEMORYCLERK_SQLQERESERVATIONS",
            name: "Default",
            pages_kb: kb(memory.lent_bytes),
            reserved_kb: kb(pool.lendable_bytes()),
        },
    ];
    View::<ClerkRow>::new()
        .col("type", DESC, |r| nstr(r.clerk_type))
        .col("name", SqlType::NVarChar(Len::N(256)), |r| nstr(r.name))
        .col("memory_node_id", SqlType::SmallInt, |_| small(0))
        .col("pages_kb", SqlType::BigInt, |r| big(r.pages_kb))
        .col("virtual_memory_reserved_kb", SqlType::BigInt, |r| big(r.reserved_kb))
        .col("virtual_memory_committed_kb", SqlType::BigInt, |r| big(r.pages_kb))
        .col("awe_allocated_kb", SqlType::BigInt, |_| big(0))
        .col("shared_memory_reserved_kb", SqlType::BigInt, |_| big(0))
        .col("shared_memory_committed_kb", SqlType::BigInt, |_| big(0))
        .col("page_size_in_bytes", SqlType::BigInt, |_| big(PAGE_SIZE as u64))
        .rows(&rows)
}

/// `sys.dm_exec_query_memory_grants`: a row per operator holding a memory grant now (a sort,
/// a hash aggregate, a hash join, a join step's output), with what it may take before it
/// spills (`requested_memory_kb` = `granted_memory_kb`, the per-query limit) and what it
/// holds now and at most (`crate::exec::grant`).
pub(super) fn query_memory_grants(ctx: &ViewContext<'_>) -> RowSet {
    let memory = crate::exec::grant::query_memory(ctx.instance);
    let grants = memory.grants();
    View::<std::sync::Arc<crate::exec::grant::GrantState>>::new()
        .col("session_id", SqlType::SmallInt, |g| small(i64::from(g.session_id)))
        .col("request_id", SqlType::Int, |_| int(0))
        .col("requested_memory_kb", SqlType::BigInt, |g| big(kb(g.granted)))
        .col("granted_memory_kb", SqlType::BigInt, |g| big(kb(g.granted)))
        .col("used_memory_kb", SqlType::BigInt, |g| big(kb(g.used())))
        .col("max_used_memory_kb", SqlType::BigInt, |g| big(kb(g.max_used())))
        .rows(&grants)
}

/// Bytes in KB, rounded up.
fn kb(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(1024)
}
