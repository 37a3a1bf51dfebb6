//! Query memory: the instance's workspace and each operator's grant from it.
//!
//! SQL Server gives every memory-consuming operator (sort, hash join, hash aggregate) a
//! *grant* from the *workspace*, a share of `max server memory`; an operator that needs more
//! than its grant spills to tempdb instead of taking more. Walden does the same:
//!
//! * the **workspace** of an instance is what its buffer pool may lend of the one memory
//!   budget, `max_server_memory_mb` (75% of it, as SQL Server's is at most 75% of its target
//!   memory): memory a grant takes is memory the pool gives up first, shrinking and handing
//!   frames back to the kernel before the grant is given (`docs/memory.md`), so the pool's
//!   pages and the grants together stay within the budget;
//! * one **grant** may take at most [`QueryMemory::per_query`] of it (SQL Server's
//!   `REQUEST_MAX_MEMORY_GRANT_PERCENT`, 25% of the workspace by default, or
//!   `max_query_memory_mb` when the server sets it) and is always given at least
//!   [`MIN_GRANT_BYTES`] (SQL Server's `min memory per query (KB)`, 1,024), so a query
//!   starved by others still runs, spilling sooner;
//! * an operator that can spill asks with [`MemoryGrant::try_reserve`] and spills when
//!   refused (the workspace is used up, or the pool cannot shrink because its frames are
//!   pinned); one that cannot (a join step's materialized output) takes what it needs with
//!   [`MemoryGrant::hold`], and fails the statement with error 701 when there is no room
//!   left for it, rather than take the process down.
//!
//! Bytes are rows counted at their in-memory size ([`row_bytes`]), so the figure tracks what
//! the allocator holds to within the allocator's own overhead. A grant gives its bytes back
//! when it is dropped, which is also what an error or a cancel does.
//!
//! Every instance's query memory is found through a process-wide registry keyed by the
//! instance, so that the engine (which knows nothing of queries) needs no field for it; it
//! is created with its defaults the first time a query of the instance asks, unless the
//! server configured it first ([`configure_query_memory`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use walden_engine::types::Value;
use walden_engine::Instance;
use walden_storage::FramePool;

use crate::exec::session::Run;
use crate::exec::SqlError;

/// One grant's default share of the workspace, in percent (SQL Server's
/// `REQUEST_MAX_MEMORY_GRANT_PERCENT`).
pub(crate) const GRANT_PERCENT: usize = 25;

/// What every grant is given, whatever the workspace holds: SQL Server's default
/// `min memory per query (KB)`.
pub(crate) const MIN_GRANT_BYTES: usize = 1 << 20;

/// How much a grant takes from the workspace at a time, so that the shared counter is
/// touched once per this many bytes rather than per row.
const CHUNK_BYTES: usize = 256 << 10;

/// An instance's query memory: the workspace, what is granted from it, and where spills go.
#[derive(Debug)]
pub(crate) struct QueryMemory {
    /// The instance's frames, which lend the workspace's bytes (and count them).
    frames: Arc<FramePool>,
    /// The most one grant may reserve for what it can spill.
    per_query: usize,
    /// The live grants, for `sys.dm_exec_query_memory_grants`.
    grants: Mutex<BTreeMap<u64, Arc<GrantState>>>,
    next_grant: AtomicU64,
    /// Where spill files are made: the data directory's `spill` folder.
    pub(crate) spill_dir: PathBuf,
    /// Bytes written to spill files since the instance opened.
    pub(crate) spilled_bytes: AtomicU64,
    /// Set when [`configure_query_memory`] replaces this entry, so that no thread's cache
    /// keeps it.
    replaced: std::sync::atomic::AtomicBool,
}

/// One grant's figures, shared with the view that shows them.
#[derive(Debug, Default)]
pub(crate) struct GrantState {
    pub(crate) session_id: u16,
    /// Bytes the grant may reserve for what it can spill (its ideal size).
    pub(crate) granted: usize,
    used: AtomicUsize,
    max_used: AtomicUsize,
}

impl GrantState {
    /// Bytes held now.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes held at once.
    pub(crate) fn max_used(&self) -> usize {
        self.max_used.load(Ordering::Relaxed)
    }
}

/// The server's choice of query memory, from `walden.toml`, a flag or `WALDEN_*`.
#[derive(Debug, Clone, Copy, Default)]
pub struct QueryMemoryConfig {
    /// The most one query's operators hold before they spill, in bytes; None for 25% of the
    /// workspace.
    pub max_query_memory_bytes: Option<usize>,
}

type Registry = Vec<(Weak<Instance>, Arc<QueryMemory>)>;

static REGISTRY: Mutex<Registry> = Mutex::new(Vec::new());

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Sets the query memory of `instance` (the server does so once, before any session) and
/// removes spill files a previous process left in its data directory.
pub fn configure_query_memory(instance: &Arc<Instance>, config: QueryMemoryConfig) {
    let memory = Arc::new(QueryMemory::new(instance, config));
    crate::exec::execute::spill::clear_spill_dir(&memory.spill_dir);
    let mut all = registry();
    all.retain(|(i, m)| {
        let same = std::ptr::eq(i.as_ptr(), Arc::as_ptr(instance));
        if same {
            m.replaced.store(true, Ordering::Relaxed);
        }
        i.strong_count() > 0 && !same
    });
    all.push((Arc::downgrade(instance), memory));
}

/// Bytes the queries of `instance` have written to spill files since it opened.
pub fn spilled_bytes(instance: &Arc<Instance>) -> u64 {
    query_memory(instance).spilled_bytes.load(Ordering::Relaxed)
}

thread_local! {
    /// The last instance this thread asked about and its query memory, so that an operator
    /// does not take the process-wide registry's lock: a session runs on one thread at a
    /// time, and a thread serves one instance in practice.
    static LAST: std::cell::RefCell<Option<(Weak<Instance>, Arc<QueryMemory>)>> =
        const { std::cell::RefCell::new(None) };
}

/// The query memory of `instance`, created with its defaults on first use.
pub(crate) fn query_memory(instance: &Arc<Instance>) -> Arc<QueryMemory> {
    let same = |w: &Weak<Instance>| std::ptr::eq(w.as_ptr(), Arc::as_ptr(instance));
    let cached = LAST.with_borrow(|last| {
        last.as_ref().filter(|(w, m)| same(w) && !m.replaced()).map(|(_, m)| Arc::clone(m))
    });
    if let Some(m) = cached {
        return m;
    }
    let m = registered(instance);
    LAST.with_borrow_mut(|last| *last = Some((Arc::downgrade(instance), Arc::clone(&m))));
    m
}

/// The registry's entry for `instance`, made with the defaults if there is none.
fn registered(instance: &Arc<Instance>) -> Arc<QueryMemory> {
    let mut all = registry();
    if let Some((_, m)) = all.iter().find(|(i, _)| std::ptr::eq(i.as_ptr(), Arc::as_ptr(instance)))
    {
        return Arc::clone(m);
    }
    all.retain(|(i, _)| i.strong_count() > 0);
    let memory = Arc::new(QueryMemory::new(instance, QueryMemoryConfig::default()));
    // The instance holds its data directory's lock, so nothing else uses its spill folder:
    // whatever is in it was left by a process that ended without removing it.
    crate::exec::execute::spill::clear_spill_dir(&memory.spill_dir);
    all.push((Arc::downgrade(instance), Arc::clone(&memory)));
    memory
}

impl QueryMemory {
    fn new(instance: &Instance, config: QueryMemoryConfig) -> QueryMemory {
        QueryMemory::with_frames(Arc::clone(instance.frame_pool()), config, instance.dir())
    }

    fn with_frames(
        frames: Arc<FramePool>,
        config: QueryMemoryConfig,
        dir: &std::path::Path,
    ) -> QueryMemory {
        let workspace = frames.lendable_bytes();
        let per_query = config.max_query_memory_bytes.unwrap_or(workspace / 100 * GRANT_PERCENT);
        QueryMemory {
            frames,
            per_query,
            grants: Mutex::new(BTreeMap::new()),
            next_grant: AtomicU64::new(1),
            spill_dir: dir.join("spill"),
            spilled_bytes: AtomicU64::new(0),
            replaced: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn replaced(&self) -> bool {
        self.replaced.load(Ordering::Relaxed)
    }

    /// The most one grant reserves for what it can spill.
    pub(crate) fn per_query(&self) -> usize {
        self.per_query
    }

    /// The live grants' figures.
    pub(crate) fn grants(&self) -> Vec<Arc<GrantState>> {
        let grants = self.grants.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        grants.values().cloned().collect()
    }

    /// Takes `bytes` from the workspace if the buffer pool can lend them (or `force`); says
    /// whether it did. The pool has made room for them in the budget when this returns true
    /// (as far as it could, for a forced take).
    fn take(&self, bytes: usize, force: bool) -> bool {
        self.frames.lend(bytes, force)
    }

    fn give_back(&self, bytes: usize) {
        self.frames.repay(bytes);
    }
}

/// One operator's memory: what it holds, and what it has taken from the workspace to cover
/// that. Dropping it gives everything back.
#[derive(Debug)]
pub(crate) struct MemoryGrant {
    memory: Arc<QueryMemory>,
    session_id: u16,
    /// Its entry in the view (made by `set_used`, so always there once made).
    shown: Option<(u64, Arc<GrantState>)>,
    /// The most it reserves for what it can spill.
    limit: usize,
    /// Bytes taken from the workspace (a multiple of [`CHUNK_BYTES`], beyond the minimum).
    taken: usize,
    /// Bytes the operator says it holds.
    used: usize,
}

impl MemoryGrant {
    /// A new grant for session `session_id`'s operator.
    pub(crate) fn new(memory: Arc<QueryMemory>, session_id: u16) -> MemoryGrant {
        let limit = memory.per_query;
        let mut grant = MemoryGrant { memory, session_id, shown: None, limit, taken: 0, used: 0 };
        grant.set_used(0);
        grant
    }

    /// The query memory the grant is drawn from (for its spill folder and counters).
    pub(crate) fn memory(&self) -> &Arc<QueryMemory> {
        &self.memory
    }

    /// Reserves `bytes` more for something the operator could spill instead; false (and
    /// nothing reserved) when that would pass the grant's limit or the workspace's room,
    /// except that the first [`MIN_GRANT_BYTES`] (or the limit, if smaller) are always given.
    pub(crate) fn try_reserve(&mut self, bytes: usize) -> bool {
        let want = self.used.saturating_add(bytes);
        if want > self.limit {
            return false;
        }
        if !self.cover(want, want <= MIN_GRANT_BYTES) {
            return false;
        }
        self.set_used(want);
        true
    }

    /// Holds `bytes` more for something that cannot be spilled: error 701 when the
    /// workspace has no room left for it (whatever the per-query limit).
    pub(crate) fn hold(&mut self, bytes: usize) -> Result<(), SqlError> {
        let want = self.used.saturating_add(bytes);
        if !self.cover(want, want <= MIN_GRANT_BYTES) {
            return Err(insufficient_memory());
        }
        self.set_used(want);
        Ok(())
    }

    /// Gives back `bytes` the operator no longer holds (it spilled or dropped them).
    pub(crate) fn release(&mut self, bytes: usize) {
        let used = self.used.saturating_sub(bytes);
        self.set_used(used);
        // Keep one chunk of slack so that a loop that spills and refills does not hit the
        // shared counter every time.
        let keep = used.div_ceil(CHUNK_BYTES).saturating_add(1).saturating_mul(CHUNK_BYTES);
        if self.taken > keep {
            self.memory.give_back(self.taken - keep);
            self.taken = keep;
        }
    }

    /// Makes the bytes taken from the workspace cover `want`; false if the workspace has no
    /// room (and not `force`).
    fn cover(&mut self, want: usize, force: bool) -> bool {
        if want <= self.taken {
            return true;
        }
        let more = (want - self.taken).div_ceil(CHUNK_BYTES).saturating_mul(CHUNK_BYTES);
        if !self.memory.take(more, force) {
            return false;
        }
        self.taken += more;
        true
    }

    fn set_used(&mut self, used: usize) {
        self.used = used;
        let memory = &self.memory;
        let (session_id, granted) = (self.session_id, self.limit);
        let (_, state) = self.shown.get_or_insert_with(|| {
            let id = memory.next_grant.fetch_add(1, Ordering::Relaxed);
            let state = Arc::new(GrantState { session_id, granted, ..GrantState::default() });
            memory
                .grants
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(id, Arc::clone(&state));
            (id, state)
        });
        state.used.store(used, Ordering::Relaxed);
        state.max_used.fetch_max(used, Ordering::Relaxed);
    }
}

impl Drop for MemoryGrant {
    fn drop(&mut self) {
        self.memory.give_back(self.taken);
        if let Some((id, _)) = &self.shown {
            self.memory.grants.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
        }
    }
}

/// SQL Server's error 701.
pub(crate) fn insufficient_memory() -> SqlError {
    SqlError::with_severity(
        701,
        17,
        "There is insufficient system memory in resource pool 'default' to run this query.",
    )
}

/// Bytes an operator may hold before it takes a grant: one that holds little (the rows of
/// most OLTP statements) registers no grant at all, and below this any grant of the sizes
/// Walden configures would give the bytes anyway.
const UNGRANTED_BYTES: usize = 64 << 10;

/// The rows an operator holds, counted against a memory grant taken once they pass
/// [`UNGRANTED_BYTES`]: what an operator that can do something else with its rows (spill
/// them, stream them) asks before it holds one more.
#[derive(Debug, Default)]
pub(crate) struct HeldBytes {
    bytes: usize,
    /// Of `bytes`, those the grant has reserved.
    reserved: usize,
    grant: Option<MemoryGrant>,
}

impl HeldBytes {
    /// Counts `bytes` more held if the grant has room for them; false (and nothing counted)
    /// when it refuses them.
    pub(crate) fn try_hold(&mut self, run: &Run<'_>, bytes: usize) -> bool {
        let want = self.bytes + bytes;
        if want > UNGRANTED_BYTES {
            let grant = self.grant.get_or_insert_with(|| run.memory_grant());
            if !grant.try_reserve(want - self.reserved) {
                return false;
            }
            self.reserved = want;
        }
        self.bytes = want;
        true
    }

    /// Counts `bytes` more held that cannot go elsewhere: error 701 when the workspace has
    /// no room left for them.
    pub(crate) fn hold(&mut self, run: &Run<'_>, bytes: usize) -> Result<(), SqlError> {
        let grant = self.grant.get_or_insert_with(|| run.memory_grant());
        grant.hold(self.bytes + bytes - self.reserved)?;
        self.bytes += bytes;
        self.reserved = self.bytes;
        Ok(())
    }

    /// The bytes counted held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The rows held are gone (spilled, streamed on): their bytes are given back.
    pub(crate) fn release_all(&mut self) {
        if let Some(grant) = &mut self.grant {
            grant.release(self.reserved);
        }
        (self.bytes, self.reserved) = (0, 0);
    }

    /// The query memory the operator draws on, for its spill files.
    pub(crate) fn memory(&mut self, run: &Run<'_>) -> &Arc<QueryMemory> {
        self.grant.get_or_insert_with(|| run.memory_grant()).memory()
    }
}

/// The bytes a row takes in memory: its values, the vector that holds them, and what its
/// strings and binaries hold on the heap.
pub(crate) fn row_bytes(row: &[Value]) -> usize {
    let mut bytes = std::mem::size_of::<Vec<Value>>() + std::mem::size_of_val(row);
    for v in row {
        bytes += value_heap_bytes(v);
    }
    bytes
}

/// What a value holds outside itself.
pub(crate) fn value_heap_bytes(v: &Value) -> usize {
    match v {
        Value::Str(s) | Value::NStr(s) => s.capacity(),
        Value::Binary(b) => b.capacity(),
        // Shared with every value of the same document: counted once per value anyway, as
        // the spill file would write it.
        Value::Xml(x) => x.text().len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Query memory lent by a pool of `frames` frames (its workspace is 75% of them), with
    /// grants of at most `per_query` bytes.
    fn memory(frames: usize, per_query: usize) -> Arc<QueryMemory> {
        let frames = FramePool::new(frames).expect("a frame pool");
        let config = QueryMemoryConfig { max_query_memory_bytes: Some(per_query) };
        Arc::new(QueryMemory::with_frames(frames, config, &std::env::temp_dir()))
    }

    #[test]
    fn a_grant_reserves_up_to_its_limit_and_gives_back_on_drop() {
        // 64 MB of frames: a 48 MB workspace.
        let m = memory(8192, 4 << 20);
        let mut g = MemoryGrant::new(Arc::clone(&m), 51);
        assert!(g.try_reserve(3 << 20));
        assert!(!g.try_reserve(2 << 20), "past the per-query limit");
        assert_eq!(m.grants().len(), 1);
        assert_eq!(m.grants()[0].max_used(), 3 << 20);
        g.release(3 << 20);
        assert!(g.try_reserve(4 << 20));
        drop(g);
        assert_eq!(m.frames.memory().lent_bytes, 0);
        assert!(m.grants().is_empty());
    }

    #[test]
    fn held_memory_fails_with_701_when_the_workspace_is_full() {
        // 1,365 frames keep a floor of 341 and lend 1,024: an 8 MB workspace.
        let m = memory(1365, 1 << 20);
        assert_eq!(m.frames.lendable_bytes(), 8 << 20);
        let mut a = MemoryGrant::new(Arc::clone(&m), 51);
        a.hold(6 << 20).expect("room for it");
        let mut b = MemoryGrant::new(Arc::clone(&m), 52);
        // The minimum is given even with the workspace nearly full.
        assert!(b.try_reserve(512 << 10));
        let e = a.hold(4 << 20).expect_err("no room");
        assert_eq!(e.number, 701);
        drop(a);
        assert!(b.hold(4 << 20).is_ok());
    }
}
