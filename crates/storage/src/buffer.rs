//! The buffer pool: the cache of pages between the data file and everything above it.
//!
//! Nothing above this module reads or writes a data page by itself. It asks the pool for the
//! page, gets it *pinned* in a *frame* (an 8 KiB buffer with a latch and some bookkeeping),
//! reads or changes it under the frame's latch, and says which log record made each change.
//! The pool decides when a changed page goes to disk: when its frame is needed for another
//! page (eviction), when the background writer gets ahead of eviction, and at a checkpoint
//! ([`BufferPool::flush_all`]). The pool is usually much smaller than the database, so it is
//! built around eviction, as SQL Server's is.
//!
//! # One pool for the instance
//!
//! The frames belong to a [`FramePool`] (module `frames`), one per instance, sized by
//! `max_server_memory_mb` and allocated as pages first need them; it lends part of that budget
//! to query memory and shrinks to make room ([`FramePool::lend`], `docs/memory.md`). Each
//! database has a [`BufferPool`]: its view of the frames, with what is its own (its data
//! file, its [`WalFlush`], its failure, its counters, its background writer, its growth
//! lock: the `Member`). The page table names a page by (member key, page id), and each frame's `Desc`
//! points at the member whose page it holds, so any database's fetch can evict any
//! database's page and write it out under *that* database's WAL rule. Such a write-out runs
//! on the fetching thread holding the pin it took on the victim and nothing else of the
//! pool: no table lock, and never a latch the victim's database could be waiting on (it
//! only try-latches the victim; see "Pins and latches"), so the victim's log flush needs
//! nothing the evicting thread holds. A [`BufferPool`] built without a shared [`FramePool`]
//! ([`PoolConfig::frame_pool`] `None`) gets one of its own, as tests and tools use it.
//!
//! # Frames and their states
//!
//! A frame is, as seen under the page table lock:
//!
//! * **unallocated**: not yet created (the pool is below its capacity);
//! * **released**: created once, its memory since handed back to the kernel because query
//!   memory needed it (`docs/memory.md`); on the released list, taken back before new frames
//!   are created;
//! * **free**: it holds no page (after a failed read, after [`BufferPool::discard`], after its
//!   database failed), and is on the free list;
//! * **loading**: it is mapped to a page whose image is being read from disk (or formatted, by
//!   [`BufferPool::fetch_new`]) by the thread that mapped it; everyone else who wants the page
//!   waits for the load to end, so a page is read once however many threads ask for it;
//! * **ready**: it holds its page's image, *clean* (equal to the disk's) or *dirty*;
//! * orthogonally, **pinned** (its pin count is above zero: someone holds a [`PinnedPage`],
//!   or a write-out is in flight) and **writing** (one write-out of it is in flight).
//!
//! A ready, unpinned frame can be evicted: at once if clean, after a write-out if dirty.
//!
//! # Locks, and what each protects
//!
//! * `FramePool::table` (the page table lock, one mutex for the instance): the map from
//!   (member, page id) to frame, every frame's `Desc` (owner, page id, loading, pin count,
//!   reference bit, writing), the free list and the clock hand. It is held only for
//!   bookkeeping (and to allocate a segment of 64 frames), never across I/O (reads, writes,
//!   log flushes, growth) and never while waiting for a latch.
//! * `Frame::latch` (a reader-writer lock per frame, SQL Server's page latch): the page image.
//!   Readers share it; a writer ([`PageWriteGuard`]) has it alone. Only a pin holder takes it.
//! * `Frame::dirty` (a small mutex per frame): the frame's `DirtyState`: dirty flag,
//!   recovery LSN (`rec_lsn`) and modification counter. Held for a few instructions.
//! * `Member::grow_lock` (one per database): serializes growing its file, so that two
//!   threads allocating past the end grow it once.
//! * `FramePool::dirty` and `Member::dirty` (atomics): how many frames are dirty, in the pool
//!   and per database, changed with the dirty flag under the frame's dirty lock; the
//!   background writers read them without a lock to decide whether to scan at all.
//!
//! Lock order: latch, then table, then dirty. A thread holding a latch may fetch another page
//! (B-tree descent does), so the table lock is never held while a latch is awaited.
//!
//! # Pins and latches
//!
//! A pin keeps a page in its frame; a latch keeps its image consistent while it is looked at.
//! [`BufferPool::fetch`] pins (briefly under the table lock), [`PinnedPage::read`] and
//! [`PinnedPage::write`] latch (without it), dropping a guard unlatches and dropping the
//! [`PinnedPage`] unpins. A thread may hold latches while it fetches more pages, so the pool
//! never waits for a latch under the table lock, and eviction and the background writer never
//! wait for a latch at all: they pick unpinned frames, and skip one that has been pinned and
//! latched since. [`BufferPool::flush_page`] and [`BufferPool::flush_all`] do wait for the read
//! latch of each page they write, so their callers must hold no latch on a dirty page.
//!
//! # The WAL rule
//!
//! A dirty page whose page LSN is L is written only after [`WalFlush::flush_to`]`(L)`
//! returned `Ok`: the log records of every change in the image are on disk before the image
//! is, so recovery can always redo or undo what the data file holds. The LSN is taken from
//! the very copy that is written, so a change made after the copy cannot slip past the rule.
//!
//! # Write-out
//!
//! A write-out (by eviction, the background writer, [`BufferPool::flush_page`] or
//! [`BufferPool::flush_all`]) marks the frame *writing* and pins it under the table lock, then:
//! copies the image and the modification counter under the read latch (this pool copies
//! rather than holding the latch across the I/O, so that writers of a hot page wait for an
//! 8 KiB copy, not for a log flush and a disk write); flushes the log to the copy's LSN;
//! checks the copy (slotted page types); writes it; and marks the frame clean only if the
//! counter has not moved since the copy. The counter, not the page LSN, decides, because
//! changes under LSN 0 (tempdb, unlogged pages) leave the LSN alone.
//!
//! # The background writer
//!
//! Eviction that has to write before it can read doubles the latency of a miss, so each
//! database has a thread (every `writer_interval_ms`) that writes its dirty unpinned pages,
//! oldest `rec_lsn` first, when more than `dirty_high_percent` of the shared pool's capacity
//! is dirty or less than an eighth of it is clean or unallocated. The pressure is the pool's,
//! read from the dirty counts without a lock; the pages are the writer's own database's, so
//! its WAL rule and its checkpoints stay its own. It holds only a weak reference to the pool
//! and no lock or latch while it sleeps; it stops when the [`BufferPool`] is shut down or
//! dropped.
//!
//! # Invariants
//!
//! 1. A page is in at most one frame: the page table maps it to that frame, and a frame's
//!    `Desc::page` names the page the table maps to it, or nothing.
//! 2. A frame's image changes only under its write latch, which only a pin holder takes; every
//!    change under a write guard is followed by [`PageWriteGuard::mark_dirty`] before the guard
//!    drops, so a change and its modification count are seen together by any reader.
//! 3. A frame is evicted or reused only when unpinned, not loading, not writing, and clean; so
//!    a dirty image is never dropped, except by [`BufferPool::discard`] (also run when a
//!    database's pool is dropped or fails), whose job that is.
//! 4. At most one write-out of a frame is in flight (`Desc::writing`), so two copies of one page
//!    can never reach the disk out of order.
//! 5. A frame becomes clean only when a write of an image containing every change counted so
//!    far has returned: its image then equals the file's (durable after the next sync).
//! 6. `rec_lsn` is at or below the LSN of every change to the image not yet written, so the
//!    minimum over the dirty page table bounds where redo must start.
//! 7. Pages are checked in pairs: a slotted page ([`Page::check`]) before every write and after
//!    every read, besides the checksum that [`DataFile`] seals and verifies.
//! 8. Fail-stop, per database: the first failed log flush, check or write of a write-out (or
//!    failed sync of the file) makes that database's pool failed for good. A failed write is
//!    never retried, nothing of it is written afterwards, and every later fetch and flush
//!    returns [`BufferError::Failed`]: after a failed `fsync` the kernel may have dropped the
//!    dirty pages, so a retry that "succeeds" could let a checkpoint claim what the disk does
//!    not hold. Its pages are discarded (they can never be written) and their frames go back
//!    to the other databases; a fetch of another database that met the failure while
//!    evicting goes on with another frame.
//! 9. Waiting is bounded where it can be: a fetch that finds every frame pinned waits, taking
//!    frames as pins are released, for at most the free-frame wait (5 s) and then returns
//!    [`BufferError::NoFreeFrame`]. Waits for a load or a write-out end when that I/O does.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{
    Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};
use std::thread::JoinHandle;
use std::time::Duration;

mod frames;
mod pin;
mod writeback;

pub use frames::{default_max_memory_mb, FramePool, PoolMemory, MIN_MEMORY_MB};

use crate::file::{DataFile, FileError};
use crate::page::{Lsn, Page, PageError, PageId, PageType, PAGE_SIZE};
pub use pin::{PageReadGuard, PageWriteGuard, PinnedPage};
use writeback::{writer_main, WriterControl};

/// What the buffer pool calls to enforce the WAL rule: before a dirty page whose page LSN is L
/// is written, the log must be hardened up to L. Implemented by the engine over the log manager.
pub trait WalFlush: Send + Sync + fmt::Debug {
    /// Returns once every log record up to and including `lsn` is durable, or says why not.
    fn flush_to(&self, lsn: Lsn) -> Result<(), String>;
}

/// A [`WalFlush`] that does nothing: for tempdb, whose pages are never recovered, and tests.
#[derive(Debug, Default)]
pub struct NoWal;

impl WalFlush for NoWal {
    fn flush_to(&self, _lsn: Lsn) -> Result<(), String> {
        Ok(())
    }
}

/// How a database's pool is set up.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// The instance's frames, shared by every database whose pool is made with this config;
    /// `None` makes [`BufferPool::new`] give the pool frames of its own (`frames` of them).
    /// Default `None`.
    pub frame_pool: Option<Arc<FramePool>>,
    /// Frames of 8 KiB in a frame pool made for this config: at least 8. Default a quarter of
    /// the machine's memory ([`default_max_memory_mb`]); frames are allocated only as pages
    /// need them, so a large default costs nothing until it is used.
    pub frames: usize,
    /// The background writer's period in milliseconds; 0 runs no background writer. Default 100.
    pub writer_interval_ms: u64,
    /// The background writer writes when more than this percentage of the frame pool is dirty.
    /// Default 50.
    pub dirty_high_percent: u8,
    /// Pages to grow the file by (at least) when a new page lies past its end. Default 128
    /// (1 MiB).
    pub grow_pages: u32,
}

impl Default for PoolConfig {
    fn default() -> Self {
        let frames = default_max_memory_mb().saturating_mul((1 << 20) / PAGE_SIZE as u64);
        PoolConfig {
            frame_pool: None,
            frames: usize::try_from(frames).unwrap_or(usize::MAX),
            writer_interval_ms: 100,
            dirty_high_percent: 50,
            grow_pages: 128,
        }
    }
}

/// The fewest frames a pool may have: a B-tree split pins a handful of pages at once, and a
/// pool that cannot hold them would fail with [`BufferError::NoFreeFrame`] on ordinary work.
pub const MIN_FRAMES: usize = 8;

/// How long a fetch waits for a frame when every frame is pinned.
pub const FREE_FRAME_WAIT: Duration = Duration::from_secs(5);

/// The longest a thread sleeps on the pool's condition variable before looking again: a
/// missed wake-up, or a failure nobody announced, costs at most this.
const WAIT_SLICE: Duration = Duration::from_millis(50);

impl PoolConfig {
    fn validate(&self) -> Result<(), BufferError> {
        let bad = |why: String| Err(BufferError::Config(why));
        if self.frames < MIN_FRAMES {
            return bad(format!("frames must be at least {MIN_FRAMES}, not {}", self.frames));
        }
        if self.dirty_high_percent > 100 {
            return bad(format!(
                "dirty_high_percent must be at most 100, not {}",
                self.dirty_high_percent
            ));
        }
        if self.grow_pages == 0 {
            return bad("grow_pages must be at least 1".into());
        }
        Ok(())
    }
}

/// What can go wrong in the buffer pool.
#[derive(Debug)]
pub enum BufferError {
    /// Reading, writing, growing or syncing the data file failed, or a page read is corrupt
    /// (including [`PageError::NeverWritten`] for a page that was never written).
    File(FileError),
    /// The log could not be flushed for the WAL rule.
    Wal(String),
    /// Every frame stayed pinned for the whole free-frame wait.
    NoFreeFrame {
        /// The pool's size.
        frames: usize,
    },
    /// The pool failed earlier (the message says how) and does no more work.
    Failed(String),
    /// The configuration is invalid, or the pool could not be started.
    Config(String),
}

impl fmt::Display for BufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferError::File(e) => e.fmt(f),
            BufferError::Wal(e) => write!(f, "log flush for the WAL rule failed: {e}"),
            BufferError::NoFreeFrame { frames } => {
                write!(f, "no free buffer frame: all {frames} frames stayed pinned")
            }
            BufferError::Failed(e) => write!(f, "the buffer pool failed earlier: {e}"),
            BufferError::Config(e) => write!(f, "buffer pool configuration: {e}"),
        }
    }
}

impl std::error::Error for BufferError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BufferError::File(e) => Some(e),
            _ => None,
        }
    }
}

impl From<FileError> for BufferError {
    fn from(e: FileError) -> Self {
        BufferError::File(e)
    }
}

impl From<PageError> for BufferError {
    fn from(e: PageError) -> Self {
        BufferError::File(FileError::Page(e))
    }
}

/// What [`BufferPool::flush_all`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlushSummary {
    /// Pages this call wrote (pages another thread wrote meanwhile are not counted).
    pub pages_written: u64,
}

/// Counters and a snapshot of the frames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// The capacity of the frame pool, which other databases may share.
    pub frames: usize,
    /// Frames holding a page of this database (findable, loaded).
    pub cached: usize,
    /// This database's dirty frames.
    pub dirty: usize,
    /// Pages read from the file.
    pub reads: u64,
    /// Pages written to the file, by anyone.
    pub writes: u64,
    /// Frames this database's fetches took from a cached page (of any database).
    pub evictions: u64,
    /// `flush_to` calls made for the WAL rule.
    pub wal_flushes: u64,
    /// Writes by the background writer.
    pub writer_writes: u64,
    /// Writes by [`BufferPool::flush_all`].
    pub checkpoint_writes: u64,
}

/// The page types that hold slotted records, so [`Page::check`] applies to them.
fn is_slotted(page_type: Option<PageType>) -> bool {
    matches!(
        page_type,
        Some(
            PageType::BTreeInternal
                | PageType::BTreeLeaf
                | PageType::Heap
                | PageType::Overflow
                | PageType::Catalog
                | PageType::Boot
        )
    )
}

/// The page-level half of invariant 7: checks a slotted page's record area.
fn check_page(page: &Page) -> Result<(), PageError> {
    if is_slotted(page.page_type()) {
        page.check()
    } else {
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A frame's dirty bookkeeping. Every field is protected by `Frame::dirty`; `version` and
/// the page image change together, under the write latch (invariant 2).
#[derive(Debug, Default)]
struct DirtyState {
    /// The image differs from the file's (or may).
    dirty: bool,
    /// The LSN of the first change since the frame was last clean (meaningful when dirty).
    rec_lsn: Lsn,
    /// Counts changes ([`PageWriteGuard::mark_dirty`], reformatting, reloading).
    version: u64,
    /// While a write-out is in flight: the version it copied.
    copied: Option<u64>,
    /// While a write-out is in flight: the LSN of the first change after its copy, which
    /// becomes `rec_lsn` if the frame stays dirty (invariant 6 without holding back the log).
    redirtied: Option<Lsn>,
}

/// One buffer. Which page it holds is in its `Desc`, under the table lock.
#[derive(Debug)]
struct Frame {
    /// The page latch, and the image it protects.
    latch: RwLock<Page>,
    /// The dirty bookkeeping, behind its own small lock.
    dirty: Mutex<DirtyState>,
}

impl Frame {
    fn new() -> Frame {
        // A zeroed allocation, which the system hands out lazily: a segment's frames take
        // memory only as pages are read into them.
        Frame { latch: RwLock::new(Page::zeroed()), dirty: Mutex::default() }
    }

    fn read_latch(&self) -> RwLockReadGuard<'_, Page> {
        self.latch.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_latch(&self) -> RwLockWriteGuard<'_, Page> {
        self.latch.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn dirty(&self) -> MutexGuard<'_, DirtyState> {
        lock(&self.dirty)
    }
}

/// Monotonic counters, atomics under no lock: a snapshot may mix instants, which statistics
/// can afford.
#[derive(Debug, Default)]
struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    evictions: AtomicU64,
    wal_flushes: AtomicU64,
    writer_writes: AtomicU64,
    checkpoint_writes: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Who is writing a page out, for the counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WriteBy {
    Eviction,
    Writer,
    Checkpoint,
    Single,
}

/// One database's part of the shared frames: its file, its log, its failure and its
/// counters. Every frame holding one of its pages points at it (`Desc::owner`), so that a
/// fetch for any database can write such a page out under this database's WAL rule.
#[derive(Debug)]
struct Member {
    /// Tells this database's pages apart from every other's in the page table.
    key: u64,
    /// Immutable; the file does its own locking.
    file: Arc<DataFile>,
    /// Immutable.
    wal: Arc<dyn WalFlush>,
    /// Immutable; its `frame_pool` is `None` (the member does not own the frames).
    config: PoolConfig,
    /// Serializes growing the file; held across the growth's I/O. Nothing is taken under it
    /// but the table lock, by a failure's discard.
    grow_lock: Mutex<()>,
    /// The first failure of a write-out (invariant 8); set once, then read without a lock.
    failure: OnceLock<String>,
    /// The free-frame wait in milliseconds; an atomic, only tests change it.
    frame_wait_ms: AtomicU64,
    /// Statistics.
    counters: Counters,
    /// This database's dirty frames; kept with `FramePool::dirty`.
    dirty: AtomicUsize,
}

impl Member {
    fn check_failed(&self) -> Result<(), BufferError> {
        match self.failure.get() {
            Some(why) => Err(BufferError::Failed(why.clone())),
            None => Ok(()),
        }
    }
}

/// A database's view of the frames: what [`BufferPool`], every [`PinnedPage`] and (weakly)
/// the database's background writer share.
#[derive(Debug)]
struct Shared {
    frames: Arc<FramePool>,
    member: Arc<Member>,
}

impl Shared {
    fn fail(&self, e: BufferError) -> BufferError {
        self.frames.fail(&self.member, e)
    }
}

/// What `sys.dm_os_buffer_descriptors` shows of one cached page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageDescriptor {
    /// The page.
    pub page_id: PageId,
    /// Its type, from its header (`None` if the byte is not a known type).
    pub page_type: Option<PageType>,
    /// The object and index whose tree or heap it belongs to (0 and 0 for none), and its
    /// level in a B-tree (0 for leaves and other pages), from its header.
    pub object_id: u32,
    /// See `object_id`.
    pub index_id: u16,
    /// See `object_id`.
    pub level: u16,
    /// Slots of a slotted page (records, ghosts included); 0 for other pages.
    pub row_count: usize,
    /// Free bytes of a slotted page; 0 for other pages, whose free space is not tracked.
    pub free_space: usize,
    /// The cached image differs from the file's.
    pub is_modified: bool,
}

/// One database's buffer pool: its pages, cached in the instance's [`FramePool`]. See the
/// module documentation.
pub struct BufferPool {
    shared: Arc<Shared>,
    control: Arc<WriterControl>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferPool")
            .field("file", &self.shared.member.file.path())
            .field("config", &self.shared.member.config)
            .field("stats", &self.stats())
            .field("failure", &self.shared.member.failure.get())
            .finish_non_exhaustive()
    }
}

impl BufferPool {
    /// A pool over `file`, caching its pages in `config.frame_pool` (shared with the other
    /// databases attached to it) or, if that is `None`, in a frame pool of its own of
    /// `config.frames` frames; with its background writer started (unless
    /// `writer_interval_ms` is 0).
    pub fn new(
        file: Arc<DataFile>,
        wal: Arc<dyn WalFlush>,
        config: PoolConfig,
    ) -> Result<Arc<BufferPool>, BufferError> {
        config.validate()?;
        let mut config = config;
        let frames = match config.frame_pool.take() {
            Some(frames) => frames,
            None => FramePool::new(config.frames)?,
        };
        let period = Duration::from_millis(config.writer_interval_ms);
        let member = Arc::new(Member {
            key: frames.member_key(),
            file,
            wal,
            config,
            grow_lock: Mutex::new(()),
            failure: OnceLock::new(),
            frame_wait_ms: AtomicU64::new(FREE_FRAME_WAIT.as_millis() as u64),
            counters: Counters::default(),
            dirty: AtomicUsize::new(0),
        });
        let shared = Arc::new(Shared { frames, member });
        let control = Arc::new(WriterControl::default());
        let writer = if period.is_zero() {
            None
        } else {
            let (pool, ctl) = (Arc::downgrade(&shared), Arc::clone(&control));
            let handle = std::thread::Builder::new()
                .name("walden-buffer-writer".into())
                .spawn(move || writer_main(pool, ctl, period))
                .map_err(|e| BufferError::Config(format!("cannot start the writer: {e}")))?;
            Some(handle)
        };
        Ok(Arc::new(BufferPool { shared, control, writer: Mutex::new(writer) }))
    }

    /// Page `id`, pinned; read from the file (checksum verified, slotted pages checked) if not
    /// cached. A page that was never written is an error
    /// ([`PageError::NeverWritten`] inside [`BufferError::File`]).
    pub fn fetch(&self, id: PageId) -> Result<PinnedPage, BufferError> {
        crate::io_stats::count_logical_read();
        self.shared.pin(id, None)
    }

    /// Page `id`, which the caller has just allocated, pinned as a freshly formatted
    /// `Page::new(id, page_type)` without reading the disk; a cached image is replaced. Grows
    /// the file if `id` lies past its end. The page is not dirty until the caller's write guard
    /// calls [`PageWriteGuard::mark_dirty`] (the allocation is logged, and so is the format).
    pub fn fetch_new(&self, id: PageId, page_type: PageType) -> Result<PinnedPage, BufferError> {
        self.shared.member.check_failed()?;
        self.shared.ensure_in_file(id)?;
        self.shared.pin(id, Some(page_type))
    }

    /// Makes sure page `id` lies inside the file, growing it if not, without pinning anything.
    /// A caller that logs a change to new pages first calls this for each of them, so that a
    /// growth that fails (out of space) fails before the log says the change happened, and
    /// the pages already in memory never disagree with the log.
    pub fn reserve(&self, id: PageId) -> Result<(), BufferError> {
        self.shared.member.check_failed()?;
        self.shared.ensure_in_file(id)
    }

    /// The checkpoint's write: writes every page that is dirty when the call starts (log first),
    /// then syncs the file. Pages may be changed meanwhile; those changed again stay dirty.
    /// The caller must not hold a latch on a dirty page (the write-out takes its read latch).
    pub fn flush_all(&self) -> Result<FlushSummary, BufferError> {
        let shared = &self.shared;
        shared.member.check_failed()?;
        let mut pages_written = 0;
        for (f, id, _) in shared.dirty_frames() {
            if shared.flush_frame(f, id, WriteBy::Checkpoint)? {
                pages_written += 1;
            }
        }
        shared.member.file.sync().map_err(|e| shared.fail(e.into()))?;
        Ok(FlushSummary { pages_written })
    }

    /// Writes page `id` if it is cached and dirty (log first); does not sync the file. The
    /// caller must not hold the page's latch.
    pub fn flush_page(&self, id: PageId) -> Result<(), BufferError> {
        let shared = &self.shared;
        shared.member.check_failed()?;
        let frame = shared.frames.table().map.get(&(shared.member.key, id)).copied();
        match frame {
            Some(f) => shared.flush_frame(f, id, WriteBy::Single).map(|_| ()),
            None => Ok(()),
        }
    }

    /// The dirty page table: `(page, rec_lsn)` for every dirty cached page, by page id.
    pub fn dirty_page_table(&self) -> Vec<(PageId, Lsn)> {
        let mut pages: Vec<(PageId, Lsn)> =
            self.shared.dirty_frames().into_iter().map(|(_, id, rec_lsn)| (id, rec_lsn)).collect();
        pages.sort_unstable();
        pages
    }

    /// The oldest `rec_lsn` of the dirty pages: where redo would start. `None` if all clean.
    pub fn min_rec_lsn(&self) -> Option<Lsn> {
        self.dirty_page_table().into_iter().map(|(_, lsn)| lsn).min()
    }

    /// Counters, and how many frames hold this database's pages and how many of those are
    /// dirty now. `frames` is the shared pool's capacity.
    pub fn stats(&self) -> PoolStats {
        let Shared { frames, member } = &*self.shared;
        let cached = frames.frames_of(member).len();
        let c = &member.counters;
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        PoolStats {
            frames: frames.capacity(),
            cached,
            dirty: member.dirty.load(Ordering::Relaxed),
            reads: get(&c.reads),
            writes: get(&c.writes),
            evictions: get(&c.evictions),
            wal_flushes: get(&c.wal_flushes),
            writer_writes: get(&c.writer_writes),
            checkpoint_writes: get(&c.checkpoint_writes),
        }
    }

    /// Every cached page of this database, by page id, as `sys.dm_os_buffer_descriptors`
    /// shows it. Each page is pinned and read-latched in turn, so the caller must hold no
    /// write latch of this database.
    pub fn descriptors(&self) -> Vec<PageDescriptor> {
        let Shared { frames, member } = &*self.shared;
        let mut out = Vec::new();
        for (f, id) in frames.frames_of(member) {
            let pinned = {
                let mut table = frames.table();
                let desc = &mut table.descs[f];
                if !desc.holds(member, id) || desc.loading {
                    continue;
                }
                desc.pins += 1;
                PinnedPage { shared: Arc::clone(&self.shared), frame: f, id }
            };
            let is_modified = frames.frame(f).dirty().dirty;
            let image = pinned.read();
            let slotted = is_slotted(image.page_type());
            out.push(PageDescriptor {
                page_id: id,
                page_type: image.page_type(),
                object_id: image.object_id(),
                index_id: image.index_id(),
                level: image.level(),
                row_count: if slotted { image.slot_count() } else { 0 },
                free_space: if slotted { image.free_bytes() } else { 0 },
                is_modified,
            });
        }
        out.sort_unstable_by_key(|d| d.page_id);
        out
    }

    /// The instance's frames this pool caches its pages in.
    pub fn frame_pool(&self) -> &Arc<FramePool> {
        &self.shared.frames
    }

    /// Why the pool failed, if it did.
    pub fn failure(&self) -> Option<String> {
        self.shared.member.failure.get().cloned()
    }

    /// Stops the background writer and waits for it to finish its round. Writes nothing:
    /// callers flush first. Fetches keep working.
    pub fn shutdown(&self) {
        *lock(&self.control.stop) = true;
        self.control.wake.notify_all();
        if let Some(handle) = lock(&self.writer).take() {
            // The writer does not panic; if it did, there is nothing left to stop.
            let _ = handle.join();
        }
    }

    /// Forgets every cached page of this database without writing it (the database is
    /// dropped or taken offline). Pinned pages stay in their frames for their holders until
    /// unpinned, but can no longer be found; a write-out in flight completes.
    pub fn discard(&self) {
        self.shared.frames.discard(&self.shared.member);
    }

    /// The data file.
    pub fn file(&self) -> &Arc<DataFile> {
        &self.shared.member.file
    }

    /// Sets how long a fetch waits for a frame when all are pinned (default
    /// [`FREE_FRAME_WAIT`], at most an hour). For tests that exercise
    /// [`BufferError::NoFreeFrame`] quickly.
    #[doc(hidden)]
    pub fn set_free_frame_wait(&self, wait: Duration) {
        let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).min(3_600_000);
        self.shared.member.frame_wait_ms.store(ms, Ordering::Relaxed);
    }
}

impl Drop for BufferPool {
    /// Stops the writer and gives the database's frames back to the shared pool: what is
    /// still dirty is lost, as it was when each database had a pool of its own (callers
    /// flush first), and the frames no longer keep the data file open.
    fn drop(&mut self) {
        self.shutdown();
        self.discard();
    }
}
