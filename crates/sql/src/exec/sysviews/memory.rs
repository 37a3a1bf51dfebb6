//! Where the instance's memory is: `sys.dm_os_buffer_descriptors` (each cached page) and
//! `sys.dm_os_memory_clerks` (the buffer pool's clerk and the query memory it lent), which
//! read the one frame pool every database shares (`walden_storage::FramePool`), whose budget
//! is the instance's (`docs/memory.md`); and `sys.dm_os_process_memory`, the whole process as
//! the kernel counts it.

use walden_engine::types::{Len, SqlType, Value};
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

/// The process's memory as the kernel counts it, in KB: what `sys.dm_os_process_memory` shows.
#[derive(Debug, Default)]
struct ProcessMemory {
    /// `VmRSS`: resident.
    resident_kb: u64,
    /// `VmSwap`: swapped out.
    swapped_kb: u64,
    /// `VmLck`: locked in memory.
    locked_kb: u64,
    /// `VmSize`: the address space mapped.
    mapped_kb: u64,
    /// Minor and major page faults since the process started.
    page_faults: u64,
    /// The machine's `MemAvailable`.
    available_kb: u64,
}

/// The user address space of a 64-bit Linux process (47 bits with 4-level page tables).
const ADDRESS_SPACE_KB: u64 = 1 << 37;

impl ProcessMemory {
    /// Read from `/proc`; a figure that cannot be read is 0.
    fn read() -> ProcessMemory {
        let text = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let kb = |text: &str, name: &str| -> u64 {
            let line = text.lines().find_map(|l| l.strip_prefix(name));
            line.and_then(|v| v.split_whitespace().next()?.parse().ok()).unwrap_or(0)
        };
        let (status, meminfo, stat) =
            (text("/proc/self/status"), text("/proc/meminfo"), text("/proc/self/stat"));
        // minflt and majflt are fields 10 and 12, counted after the command name's closing
        // parenthesis (the name may hold spaces), where field 3 starts.
        let page_faults = stat.rfind(')').map_or(0, |end| {
            let fields: Vec<&str> = stat[end + 1..].split_whitespace().collect();
            [7, 9].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum()
        });
        ProcessMemory {
            resident_kb: kb(&status, "VmRSS:"),
            swapped_kb: kb(&status, "VmSwap:"),
            locked_kb: kb(&status, "VmLck:"),
            mapped_kb: kb(&status, "VmSize:"),
            page_faults,
            available_kb: kb(&meminfo, "MemAvailable:"),
        }
    }

    /// Resident plus swapped out.
    fn committed_kb(&self) -> u64 {
        self.resident_kb + self.swapped_kb
    }
}

/// `sys.dm_os_process_memory`: the whole process's memory as the kernel counts it, budget or
/// not (the buffer pool and query memory are within `max_server_memory_mb`, the rest is not:
/// `docs/memory.md`). Walden asks for no large pages and does not watch for low-memory
/// signals, so those columns are 0.
pub(super) fn process_memory(_ctx: &ViewContext<'_>) -> RowSet {
    let memory = ProcessMemory::read();
    View::<ProcessMemory>::new()
        .col("physical_memory_in_use_kb", SqlType::BigInt, |m| big(m.resident_kb))
        .col("large_page_allocations_kb", SqlType::BigInt, |_| big(0))
        .col("locked_page_allocations_kb", SqlType::BigInt, |m| big(m.locked_kb))
        .col("total_virtual_address_space_kb", SqlType::BigInt, |_| big(ADDRESS_SPACE_KB))
        .col("virtual_address_space_reserved_kb", SqlType::BigInt, |m| big(m.mapped_kb))
        .col("virtual_address_space_committed_kb", SqlType::BigInt, |m| big(m.committed_kb()))
        .col("virtual_address_space_available_kb", SqlType::BigInt, |m| {
            big(ADDRESS_SPACE_KB.saturating_sub(m.mapped_kb))
        })
        .col("page_fault_count", SqlType::BigInt, |m| big(m.page_faults))
        .col("memory_utilization_percentage", SqlType::Int, |m| {
            int((m.resident_kb * 100).checked_div(m.committed_kb()).unwrap_or(100) as i64)
        })
        .col("available_commit_limit_kb", SqlType::BigInt, |m| big(m.available_kb))
        .col("process_physical_memory_low", SqlType::Bit, |_| bit(false))
        .col("process_virtual_memory_low", SqlType::Bit, |_| bit(false))
        .rows(&[memory])
}

/// `sys.dm_exec_query_memory_grants`: a row per operator holding a memory grant now (a sort,
/// a hash aggregate, a hash join, a join step's output), with what it may take before it
/// spills (`requested_memory_kb` = `granted_memory_kb`, the per-query limit) and what it
/// holds now and at most (`crate::exec::execute::grant`).
pub(super) fn query_memory_grants(ctx: &ViewContext<'_>) -> RowSet {
    let memory = crate::exec::execute::grant::query_memory(ctx.instance);
    let grants = memory.grants();
    View::<std::sync::Arc<crate::exec::execute::grant::GrantState>>::new()
        .col("session_id", SqlType::SmallInt, |g| small(i64::from(g.session_id)))
        .col("request_id", SqlType::Int, |_| int(0))
        .opt("scheduler_id", SqlType::Int, |_| Value::Null)
        .col("dop", SqlType::SmallInt, |_| small(1))
        .col("request_time", SqlType::DateTime, |_| Value::Null)
        .opt("grant_time", SqlType::DateTime, |_| Value::Null)
        .col("requested_memory_kb", SqlType::BigInt, |g| big(kb(g.granted)))
        .opt("granted_memory_kb", SqlType::BigInt, |g| big(kb(g.granted)))
        .col("required_memory_kb", SqlType::BigInt, |_| big(0))
        .opt("used_memory_kb", SqlType::BigInt, |g| big(kb(g.used())))
        .opt("max_used_memory_kb", SqlType::BigInt, |g| big(kb(g.max_used())))
        .opt("query_cost", SqlType::Float, |_| Value::Null)
        .opt("timeout_sec", SqlType::Int, |_| Value::Null)
        .opt("resource_semaphore_id", SqlType::SmallInt, |_| small(0))
        // Grants are never queued: an operator over its share spills instead of waiting.
        .opt("queue_id", SqlType::SmallInt, |_| Value::Null)
        .opt("wait_order", SqlType::Int, |_| Value::Null)
        .opt("is_next_candidate", SqlType::Bit, |_| Value::Null)
        .opt("wait_time_ms", SqlType::BigInt, |_| Value::Null)
        .opt("plan_handle", SqlType::VarBinary(Len::N(64)), |_| Value::Null)
        .opt("sql_handle", SqlType::VarBinary(Len::N(64)), |_| Value::Null)
        .col("group_id", SqlType::Int, |_| int(2))
        .col("pool_id", SqlType::Int, |_| int(2))
        .opt("is_small", SqlType::TinyInt, |_| Value::TinyInt(0))
        .opt("ideal_memory_kb", SqlType::BigInt, |g| big(kb(g.granted)))
        .rows(&grants)
}

/// Bytes in KB, rounded up.
fn kb(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(1024)
}
