//! The instance's frames: the memory every database's [`BufferPool`](super::BufferPool) caches
//! its pages in, the page table that says which page each frame holds, and the choice of a
//! frame for a page that is not cached (a free frame, a new frame, or a victim of the clock).
//!
//! One [`FramePool`] serves every database of an instance, as SQL Server's buffer pool does:
//! its size is the instance's memory budget (`max_server_memory_mb`), not a number per
//! database. Frames are allocated as they are first needed, a segment of [`SEGMENT`] at a time,
//! so an idle instance with many databases holds only the frames its pages have used.
//!
//! The budget is shared with query memory (`docs/memory.md`): what the pool lends to grants
//! ([`FramePool::lend`]) lowers its *target*, and it shrinks to it by handing frames' memory
//! back to the kernel (*released* frames). It grows past the target only when every frame it
//! holds is pinned (a fetch must not fail for query memory's sake), and takes released frames
//! back first when it may grow again.
//!
//! Which database a frame belongs to is part of its page table entry (a page is named by the
//! database's member key and its page id), and the frame's `Desc::owner` is that database's
//! state: its file, its log (for the WAL rule) and its failure. Eviction may therefore write a
//! page of one database while fetching a page of another; it does so holding no lock of the
//! pool, and only the pins it took itself (see `docs/architecture.md`, "Buffer pool").

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use std::collections::HashMap;

use super::{bump, lock, BufferError, DirtyState, Frame, Member, WriteBy, MIN_FRAMES, WAIT_SLICE};
use crate::hash::FastBuild;
use crate::page::{PageId, PAGE_SIZE};

/// Frames allocated together: 64 frames, 512 KiB of page images. Small enough that an idle
/// database costs little, large enough that the segment table of a large pool stays small.
pub(super) const SEGMENT: usize = 64;

/// A page's name in the shared page table: the member key of its database, and its page id.
pub(super) type PageKey = (u64, PageId);

/// A frame's bookkeeping. Every field is protected by `FramePool::table`.
#[derive(Debug, Default)]
pub(super) struct Desc {
    /// The database whose page the frame holds, or last held while it is pinned after a
    /// discard; `None` once the frame is free.
    pub(super) owner: Option<Arc<Member>>,
    /// The page the frame holds (of `owner`); `None` when free or discarded.
    pub(super) page: Option<PageId>,
    /// The image is being read or formatted by the thread that mapped the page.
    pub(super) loading: bool,
    /// Holders of a [`PinnedPage`](super::PinnedPage) plus an in-flight write-out.
    pub(super) pins: u32,
    /// The clock's second chance: set on every pin, cleared as the hand passes.
    pub(super) referenced: bool,
    /// A write-out of this frame is in flight (invariant 4).
    pub(super) writing: bool,
}

/// The page table: the value inside `FramePool::table`, so every field is protected by it.
#[derive(Debug)]
pub(super) struct Table {
    /// Page to frame index (invariant 1).
    pub(super) map: HashMap<PageKey, usize, FastBuild>,
    /// One per allocated frame, same index; it only grows, up to the pool's capacity.
    pub(super) descs: Vec<Desc>,
    /// Allocated frames that hold no page and are not pinned, their memory held: each such
    /// frame is here or in `released` exactly once, and the clock never hands one out.
    pub(super) free: Vec<usize>,
    /// Allocated frames whose memory was handed back to the kernel to make room for query
    /// memory: no page, no pin. Taken back before new frames are allocated.
    pub(super) released: Vec<usize>,
    /// The clock hand: the next frame the victim search looks at.
    pub(super) hand: usize,
    /// Threads sleeping on `FramePool::changed`, so that an unpin wakes nobody when nobody
    /// waits.
    pub(super) waiters: usize,
}

/// What the frame search found.
pub(super) enum Victim {
    /// A frame that can take a new page now.
    Ready(usize),
    /// No clean frame, but this dirty one (holding this page of this database) can be written
    /// out.
    Dirty(usize, Arc<Member>, PageId),
    /// Every frame is pinned, loading or being written.
    None,
}

/// The frames of an instance, shared by the buffer pool of every database. See the module
/// documentation.
pub struct FramePool {
    /// The most frames the pool may allocate (at least [`MIN_FRAMES`]): the whole budget.
    capacity: usize,
    /// The frames the pool keeps whatever it lends: a quarter of the capacity, at least
    /// [`MIN_FRAMES`].
    floor: usize,
    /// Bytes of the budget lent to query memory now. Changed only under the table lock, so
    /// that the target a frame search reads there is the one lenders shrank to; read without
    /// it by the background writers.
    lent: AtomicUsize,
    /// `capacity / SEGMENT` (rounded up) segments, each allocated on first use. A frame's
    /// index is handed out only after its segment exists, so a handed-out index always finds
    /// its frame.
    segments: Box<[OnceLock<Box<[Frame]>>]>,
    /// The page table lock.
    pub(super) table: Mutex<Table>,
    /// Waited on with `table`; signalled when a load or write-out ends or a pin count drops
    /// to zero (only if `Table::waiters` says someone waits).
    pub(super) changed: Condvar,
    /// Dirty frames of every database. Changed with each frame's dirty flag, under that
    /// frame's dirty lock; read without a lock by the background writers.
    pub(super) dirty: AtomicUsize,
    /// The next member key: databases attached to the pool are told apart by it, never by
    /// anything a database can reuse (its id or its file).
    next_member: AtomicU64,
}

impl fmt::Debug for FramePool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FramePool")
            .field("capacity", &self.capacity)
            .field("memory", &self.memory())
            .finish_non_exhaustive()
    }
}

/// Where the frame pool's memory is: what `sys.dm_os_memory_clerks` shows of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolMemory {
    /// The most frames the pool may hold: the whole budget.
    pub capacity_frames: usize,
    /// The most frames it may hold now: the budget less what it lent.
    pub target_frames: usize,
    /// Frames whose memory the pool holds.
    pub allocated_frames: usize,
    /// Frames once allocated whose memory was handed back to the kernel for query memory.
    pub released_frames: usize,
    /// Bytes of the budget lent to query memory.
    pub lent_bytes: usize,
    /// Of those, frames holding a page.
    pub cached_frames: usize,
    /// Of those, dirty frames.
    pub dirty_frames: usize,
}

impl PoolMemory {
    /// Bytes of page images allocated.
    pub fn allocated_bytes(&self) -> u64 {
        self.allocated_frames as u64 * PAGE_SIZE as u64
    }
}

impl FramePool {
    /// A pool that may grow to `capacity` frames of 8 KiB; none is allocated yet.
    pub fn new(capacity: usize) -> Result<Arc<FramePool>, BufferError> {
        if capacity < MIN_FRAMES {
            return Err(BufferError::Config(format!(
                "frames must be at least {MIN_FRAMES}, not {capacity}"
            )));
        }
        let segments = (0..capacity.div_ceil(SEGMENT)).map(|_| OnceLock::new()).collect();
        Ok(Arc::new(FramePool {
            capacity,
            floor: (capacity / 4).max(MIN_FRAMES),
            lent: AtomicUsize::new(0),
            segments,
            table: Mutex::new(Table {
                map: HashMap::default(),
                descs: Vec::new(),
                free: Vec::new(),
                released: Vec::new(),
                hand: 0,
                waiters: 0,
            }),
            changed: Condvar::new(),
            dirty: AtomicUsize::new(0),
            next_member: AtomicU64::new(1),
        }))
    }

    /// A pool of `megabytes` MiB of frames (128 frames a MiB).
    pub fn with_megabytes(megabytes: u64) -> Result<Arc<FramePool>, BufferError> {
        let frames = megabytes.saturating_mul((1 << 20) / PAGE_SIZE as u64);
        FramePool::new(usize::try_from(frames).unwrap_or(usize::MAX))
    }

    /// The most frames the pool may hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The frames the pool keeps whatever it lends.
    pub fn floor(&self) -> usize {
        self.floor
    }

    /// The most the pool lends to query memory, in bytes, beyond forced minimums: the budget
    /// less the floor.
    pub fn lendable_bytes(&self) -> usize {
        (self.capacity - self.floor).saturating_mul(PAGE_SIZE)
    }

    /// The most frames the pool may hold now: the budget less what it lent, never below the
    /// floor.
    pub(super) fn target(&self) -> usize {
        let lent = self.lent.load(Ordering::Relaxed).div_ceil(PAGE_SIZE);
        self.capacity.saturating_sub(lent).max(self.floor)
    }

    /// Frames whose memory the pool holds.
    fn resident(table: &Table) -> usize {
        table.descs.len() - table.released.len()
    }

    /// How much of the pool is allocated, cached and dirty now, and what it lent.
    pub fn memory(&self) -> PoolMemory {
        let table = self.table();
        let cached = table.descs.iter().filter(|d| d.page.is_some() && !d.loading).count();
        PoolMemory {
            capacity_frames: self.capacity,
            target_frames: self.target(),
            allocated_frames: FramePool::resident(&table),
            released_frames: table.released.len(),
            lent_bytes: self.lent.load(Ordering::Relaxed),
            cached_frames: cached,
            dirty_frames: self.dirty.load(Ordering::Relaxed),
        }
    }

    /// Lends `bytes` of the budget to query memory: lowers the pool's target by as much and
    /// shrinks the pool to it, writing dirty pages out as eviction does, before returning
    /// (`docs/memory.md`). Refused (false, nothing lent) past [`FramePool::lendable_bytes`],
    /// or when pinned, loading or written frames keep the pool above its target. A `force`d
    /// loan (a grant's minimum) is never refused: the pool shrinks as far as it can and the
    /// loan stands. Never waits for a frame.
    pub fn lend(&self, bytes: usize, force: bool) -> bool {
        {
            let _table = self.table();
            let lent = self.lent.load(Ordering::Relaxed).saturating_add(bytes);
            if lent > self.lendable_bytes() && !force {
                return false;
            }
            self.lent.store(lent, Ordering::Relaxed);
        }
        if self.shrink() || force {
            return true;
        }
        self.repay(bytes);
        false
    }

    /// Takes back `bytes` lent by [`FramePool::lend`]: the target rises, and the pool grows
    /// again as pages need frames.
    pub fn repay(&self, bytes: usize) {
        let table = self.table();
        let lent = self.lent.load(Ordering::Relaxed).saturating_sub(bytes);
        self.lent.store(lent, Ordering::Relaxed);
        // A fetch waiting for a frame may now take one.
        self.notify(&table);
    }

    /// Hands frames' memory back until the pool holds no more than its target: free frames
    /// first, then the clock's victims, a dirty one written out first (under its database's
    /// WAL rule, by the write-out every path uses). False when frames that are pinned,
    /// loading or being written keep it above, or when pages stay dirty through a bounded
    /// number of write-outs; never waits for a frame or a latch.
    fn shrink(&self) -> bool {
        let mut write_outs: Option<usize> = None;
        loop {
            let mut table = self.table();
            let excess = FramePool::resident(&table).saturating_sub(self.target());
            if excess == 0 {
                return true;
            }
            // Pages re-dirtied as fast as they are written must not keep a grant here.
            let write_outs = write_outs.get_or_insert(2 * excess + SEGMENT);
            let mut batch = Vec::new();
            let mut dirty = None;
            while batch.len() < excess {
                let f = match table.free.pop() {
                    Some(f) => f,
                    None => match self.clock(&mut table) {
                        Victim::Ready(f) => {
                            FramePool::unmap(&mut table, f);
                            f
                        }
                        Victim::Dirty(f, owner, page) => {
                            dirty = Some((f, owner, page));
                            break;
                        }
                        Victim::None => break,
                    },
                };
                // Held until its memory is handed back, so that nothing maps a page into it
                // meanwhile (docs/memory.md, invariant 3).
                table.descs[f].pins = 1;
                batch.push(f);
            }
            if batch.is_empty() {
                let Some((f, owner, page)) = dirty else {
                    return false;
                };
                if *write_outs == 0 {
                    return false;
                }
                *write_outs -= 1;
                let desc = &mut table.descs[f];
                desc.writing = true;
                desc.pins += 1;
                drop(table);
                // A failed write-out is its database's failure, not the loan's: that
                // database's frames are discarded, and the next pass releases them.
                let _ = self.write_out(&owner, f, page, WriteBy::Eviction);
                continue;
            }
            drop(table);
            self.release_batch(&batch);
        }
    }

    /// Drops every clean page that no one has pinned, of every database, from its frame and
    /// hands the frame's memory back (SQL Server's `DBCC DROPCLEANBUFFERS`, for measuring a
    /// query with a cold cache): the next read of such a page goes to its file. Dirty pages
    /// stay, as they do in SQL Server, where a CHECKPOINT first makes them clean; so do
    /// pages pinned, loading or being written. Returns how many pages were dropped.
    pub fn drop_clean_pages(&self) -> usize {
        let mut table = self.table();
        let mut batch = Vec::new();
        for f in 0..table.descs.len() {
            let desc = &table.descs[f];
            if desc.page.is_none() || desc.pins > 0 || desc.loading || desc.writing {
                continue;
            }
            // Clean stays true while the table lock is held: pins are only taken under it.
            if self.frame(f).dirty().dirty {
                continue;
            }
            FramePool::unmap(&mut table, f);
            // Held until its memory is handed back, as `shrink` holds its batch.
            table.descs[f].pins = 1;
            batch.push(f);
        }
        drop(table);
        self.release_batch(&batch);
        batch.len()
    }

    /// Hands back the memory of `batch`, frames holding no page that the caller pinned, and
    /// puts them on the released list (or, if one's latch is taken after all, the free list).
    fn release_batch(&self, batch: &[usize]) {
        // Outside the table lock: a system call per frame should not stall every fetch.
        let released: Vec<bool> = batch
            .iter()
            .map(|&f| match self.frame(f).latch.try_write() {
                Ok(mut image) => {
                    walden_io::release_memory(image.as_bytes_mut());
                    true
                }
                // Only pin holders latch, and the pin is ours: not expected, but never waited.
                Err(_) => false,
            })
            .collect();
        let mut table = self.table();
        for (&f, released) in batch.iter().zip(released) {
            table.descs[f].pins = 0;
            if released {
                table.released.push(f);
            } else {
                table.free.push(f);
            }
        }
        self.notify(&table);
    }

    /// Drops frame `f`'s page (clean, unpinned) from the page table, leaving the frame empty.
    fn unmap(table: &mut Table, f: usize) {
        let desc = &mut table.descs[f];
        if let (Some(page), Some(owner)) = (desc.page.take(), desc.owner.take()) {
            table.map.remove(&(owner.key, page));
        }
        desc.referenced = false;
    }

    pub(super) fn member_key(&self) -> u64 {
        self.next_member.fetch_add(1, Ordering::Relaxed)
    }

    /// Frame `f`, which the page table handed out.
    pub(super) fn frame(&self, f: usize) -> &Frame {
        let segment = self.segments[f / SEGMENT]
            .get()
            .expect("a frame index is handed out only once its segment is allocated");
        &segment[f % SEGMENT]
    }

    pub(super) fn table(&self) -> MutexGuard<'_, Table> {
        lock(&self.table)
    }

    pub(super) fn notify(&self, table: &Table) {
        if table.waiters > 0 {
            self.changed.notify_all();
        }
    }

    /// Sleeps until something changes, `deadline`, or one wait slice, whichever comes first.
    pub(super) fn wait<'a>(
        &'a self,
        mut table: MutexGuard<'a, Table>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, Table> {
        let slice = match deadline {
            Some(d) => WAIT_SLICE.min(d.saturating_duration_since(Instant::now())),
            None => WAIT_SLICE,
        };
        table.waiters += 1;
        let (mut table, _) =
            self.changed.wait_timeout(table, slice).unwrap_or_else(PoisonError::into_inner);
        table.waiters -= 1;
        table
    }

    /// Records that frame `f`'s dirty flag changed to `now_dirty` (the caller holds its dirty
    /// lock and changed the flag), in the pool's count and its database's.
    pub(super) fn count_dirty(&self, owner: &Member, now_dirty: bool) {
        if now_dirty {
            self.dirty.fetch_add(1, Ordering::Relaxed);
            owner.dirty.fetch_add(1, Ordering::Relaxed);
        } else {
            self.dirty.fetch_sub(1, Ordering::Relaxed);
            owner.dirty.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// A frame for a new page: a free one, else while the pool holds fewer frames than its
    /// target a released one or a newly allocated one, else the clock's victim. When the
    /// clock finds every frame pinned, loading or being written, a frame past the target (but
    /// within the capacity) rather than a wait: the pins hold what the pool would have had to
    /// give back, and a fetch must not fail for query memory's sake (`docs/memory.md`).
    pub(super) fn find_victim(&self, table: &mut Table) -> Victim {
        if let Some(f) = table.free.pop() {
            return Victim::Ready(f);
        }
        if FramePool::resident(table) < self.target() {
            if let Some(f) = self.grow(table) {
                return Victim::Ready(f);
            }
        }
        match self.clock(table) {
            Victim::None => self.grow(table).map_or(Victim::None, Victim::Ready),
            victim => victim,
        }
    }

    /// One more resident frame, if the capacity allows: a released one (its memory comes back
    /// as zeros when a page is read or formatted into it), else a new one.
    fn grow(&self, table: &mut Table) -> Option<usize> {
        if let Some(f) = table.released.pop() {
            return Some(f);
        }
        if table.descs.len() >= self.capacity {
            return None;
        }
        let f = table.descs.len();
        // Allocating a segment under the table lock stalls other fetches for the time of a
        // 512 KiB zeroed allocation, once per 64 frames the pool ever grows by.
        self.segments[f / SEGMENT].get_or_init(|| {
            (0..SEGMENT).map(|_| Frame::new()).collect::<Vec<_>>().into_boxed_slice()
        });
        table.descs.push(Desc::default());
        Some(f)
    }

    /// The clock: sweeps at most twice around the frames for an unpinned frame that is clean
    /// and not recently used; remembers the first dirty one it could write out instead. A
    /// dirty frame of a failed database is no candidate: it can never be written.
    fn clock(&self, table: &mut Table) -> Victim {
        let n = table.descs.len();
        let mut dirty = None;
        for _ in 0..2 * n {
            let f = table.hand;
            table.hand = (f + 1) % n;
            let desc = &mut table.descs[f];
            if desc.pins > 0 || desc.loading || desc.writing {
                continue;
            }
            // Unpinned frames without a page are on the free or the released list.
            let (Some(page), Some(owner)) = (desc.page, desc.owner.as_ref()) else {
                continue;
            };
            if desc.referenced {
                desc.referenced = false;
                continue;
            }
            // Nobody can dirty an unpinned frame while we hold the table lock (pins are only
            // taken under it), so "clean" stays true until the frame is remapped.
            if !self.frame(f).dirty().dirty {
                return Victim::Ready(f);
            }
            if dirty.is_none() && owner.failure.get().is_none() {
                dirty = Some((f, Arc::clone(owner), page));
            }
        }
        match dirty {
            Some((f, owner, page)) => Victim::Dirty(f, owner, page),
            None => Victim::None,
        }
    }

    /// Maps page `id` of `owner` to frame `f` (free or clean, unpinned), loading and pinned
    /// once.
    pub(super) fn install(&self, table: &mut Table, f: usize, owner: &Arc<Member>, id: PageId) {
        let desc = &mut table.descs[f];
        if let (Some(old), Some(old_owner)) = (desc.page.take(), desc.owner.as_ref()) {
            let key = (old_owner.key, old);
            table.map.remove(&key);
            bump(&owner.counters.evictions);
        }
        table.descs[f] = Desc {
            owner: Some(Arc::clone(owner)),
            page: Some(id),
            loading: true,
            pins: 1,
            referenced: true,
            writing: false,
        };
        table.map.insert((owner.key, id), f);
        let mut state = self.frame(f).dirty();
        *state = DirtyState { version: state.version + 1, ..DirtyState::default() };
    }

    /// Drops one pin of frame `f`; a frame left unpinned without a page becomes free.
    pub(super) fn unpin(&self, table: &mut Table, f: usize) {
        let desc = &mut table.descs[f];
        desc.pins = desc.pins.saturating_sub(1);
        if desc.pins == 0 {
            if desc.page.is_none() {
                self.make_free(table, f);
            }
            self.notify(table);
        }
    }

    /// Puts frame `f` (unpinned, without a page) on the free list. A dirty image left by a
    /// discard is forgotten here, and its database's dirty count with it.
    fn make_free(&self, table: &mut Table, f: usize) {
        let desc = &mut table.descs[f];
        if let Some(owner) = desc.owner.take() {
            let mut state = self.frame(f).dirty();
            if state.dirty {
                state.dirty = false;
                self.count_dirty(&owner, false);
            }
        }
        desc.referenced = false;
        table.free.push(f);
    }

    /// Forgets every page of `member` without writing it. Pinned frames stay with their
    /// holders until unpinned, but can no longer be found; a write-out in flight completes.
    pub(super) fn discard(&self, member: &Member) {
        let mut table = self.table();
        for f in 0..table.descs.len() {
            let desc = &mut table.descs[f];
            let Some(page) = desc.page else { continue };
            if desc.owner.as_ref().is_none_or(|o| o.key != member.key) {
                continue;
            }
            desc.page = None;
            desc.referenced = false;
            let free = desc.pins == 0;
            table.map.remove(&(member.key, page));
            if free {
                self.make_free(&mut table, f);
            }
        }
        self.notify(&table);
    }

    /// The frames holding a loaded page of `member`, as `(frame, page)`.
    pub(super) fn frames_of(&self, member: &Member) -> Vec<(usize, PageId)> {
        let table = self.table();
        table
            .descs
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.loading && d.owner.as_ref().is_some_and(|o| o.key == member.key))
            .filter_map(|(f, d)| Some((f, d.page?)))
            .collect()
    }
}

/// A quarter of the memory this process may use (the machine's, or its control group's limit
/// if that is lower), in MiB: the default size of the instance's buffer pool, as the issue
/// tracker and SQL Server's own guidance for a shared host suggest. 1 GiB when the memory
/// cannot be read.
pub fn default_max_memory_mb() -> u64 {
    let machine = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    });
    // cgroup v2's limit is "max" or a number of bytes.
    let limit = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok());
    let bytes = match (machine, limit) {
        (Some(m), Some(l)) => m.min(l),
        (Some(m), None) => m,
        (None, Some(l)) => l,
        (None, None) => 4 << 30,
    };
    ((bytes / 4) >> 20).max(MIN_MEMORY_MB)
}

/// The smallest `max_server_memory_mb`: enough frames for a few databases' concurrent pins.
pub const MIN_MEMORY_MB: u64 = 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_allocated_as_they_are_needed() {
        let pool = FramePool::new(1000).expect("a pool");
        assert_eq!(pool.memory().allocated_frames, 0);
        assert_eq!(pool.segments.iter().filter(|s| s.get().is_some()).count(), 0);
        let mut table = pool.table();
        assert!(matches!(pool.find_victim(&mut table), Victim::Ready(0)));
        assert!(matches!(pool.find_victim(&mut table), Victim::Ready(1)));
        drop(table);
        assert_eq!(pool.memory().allocated_frames, 2);
        assert_eq!(pool.segments.iter().filter(|s| s.get().is_some()).count(), 1);
    }

    #[test]
    fn the_default_is_a_quarter_of_memory_and_never_below_the_minimum() {
        let mb = default_max_memory_mb();
        assert!(mb >= MIN_MEMORY_MB, "{mb}");
        assert!(FramePool::new(MIN_FRAMES - 1).is_err());
        assert_eq!(FramePool::with_megabytes(3).expect("a pool").capacity(), 384);
    }
}
