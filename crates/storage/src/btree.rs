//! B+trees over the buffer pool, and the page allocator they share.
//!
//! A [`TreeSpace`] is one data file seen as a set of B+trees (clustered indexes, heaps on an
//! internal row locator, nonclustered indexes, catalog tables) plus the allocator that hands
//! out their pages. Keys and values are bytes; keys compare with `memcmp` (the engine encodes
//! typed keys so that byte order is SQL order).
//!
//! # Pages
//!
//! * A leaf (`BTreeLeaf`, level 0) holds records `u16 key_len, key, value` in key order and is
//!   linked to its neighbours through the header's `prev_page` / `next_page`.
//! * An internal page (`BTreeInternal`, level > 0) holds records `u32 child, key`, in key order.
//!   Entry `i` covers keys from its own key up to entry `i + 1`'s; the first entry's key is
//!   ignored (it covers everything below the second), so a removed first child never forces a
//!   key rewrite.
//! * The **root never moves**: when it splits, its contents move to a new child and the root
//!   becomes an internal page one level higher. So the catalog stores a tree by its root page
//!   id once, and logical undo records can name a tree by it.
//! * The allocator's state is one record on page [`ALLOC_PAGE`]: the first never-used page and
//!   the head of a free list threaded through freed pages' `next_page`.
//!
//! # Logging
//!
//! Every change is described to a [`TreeLog`] before the changed pages are marked dirty, with
//! the LSN it returns. A **row change** (the one leaf insert, update or delete a caller asked
//! for) is one op on one page, or the inserts of a run of ascending keys appended to the
//! rightmost leaf ([`BTree::append_run`]); the engine attaches the transaction's undo
//! information to it.
//! A **structure change** (split, merge, page allocation and release) is one log record
//! holding every page op it makes, so it is atomic under recovery: a crash leaves either all
//! of it or none in the log. Structure changes are never undone (a rollback undoes rows by
//! key, wherever they moved), as with ARIES' nested top actions.
//!
//! # Concurrency
//!
//! Each tree has a latch (a `RwLock`): readers share it, a writer holds it exclusively for one
//! whole operation, split included. Page latches inside are then uncontended except by the
//! background writer. Structure changes also hold the space's allocator mutex for their
//! duration, so allocator changes are logged in the order they are made. Lock order: tree
//! latch, then the allocator mutex, then page latches (each held briefly). Cursors hold no latch between
//! calls: they copy a leaf's entries and re-descend from the last key returned. The engine's
//! table and index cursors copy a batch of entries at a time instead ([`BTree::copy_range`]):
//! one descent, then along the leaf chain, under one hold of the shared latch, into one
//! reused [`EntryBatch`] buffer.
//!
//! # Invariants (checked by [`BTree::check`], the `DBCC CHECKTABLE` of a tree)
//!
//! 1. Keys are strictly increasing within a page and across the leaf chain.
//! 2. Every key in a child lies in the range its parent entry gives it.
//! 3. All leaves are at level 0, and a page at level `l > 0` has children at level `l - 1`.
//! 4. The leaf chain visits exactly the leaves of an in-order walk, with matching back links.
//! 5. No internal page other than the root is empty. A leaf may be: a delete that empties a
//!    leaf logs the row change and then the structure change that releases the leaf, as two
//!    records, and a crash can keep the first and lose the second. For an ordinary delete
//!    that is harmless (the transaction has not committed, so recovery's undo puts the row
//!    back), but a rollback's delete is a compensation record, never undone, so its emptied
//!    leaf stays. Lookups, inserts, cursors (which step over it) and merges (which absorb
//!    it into its left sibling) all accept an empty leaf; it only wastes its page.

use std::cmp::Ordering;
use std::fmt;
use std::ops::Bound;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::buffer::{BufferError, BufferPool, PinnedPage};
use crate::hash::PageMap;
use crate::page::{Lsn, Page, PageError, PageId, PageType, PAGE_SIZE};
use crate::redo::{record_op_header, PageOp, RECORD_OP_HEADER};
use crate::slotted::SLOT_SIZE;

mod append;
pub use append::AppendRun;

/// The page holding the allocator's record.
pub const ALLOC_PAGE: PageId = 1;

/// The first page the allocator hands out; pages 2..FIRST_ALLOCATABLE are the engine's
/// fixed pages (boot page, checkpoint pointers).
pub const FIRST_ALLOCATABLE: PageId = 8;

/// Overflow pages per structure-change record when a large value is stored (about 1 MB).
pub const BLOB_PAGES_PER_RECORD: usize = 120;

/// Bytes of a value each overflow page holds: one record filling the page.
const MAX_RECORD_LEN_FOR_BLOB: usize = crate::slotted::MAX_RECORD_LEN;

/// The longest key a tree accepts (SQL Server's limit for a clustered key is 900 bytes).
pub const MAX_KEY_LEN: usize = 900;

/// The longest leaf value a tree accepts: enough for a key and a 4,000-byte row to share a
/// page with another, so that a split always makes room.
pub const MAX_VALUE_LEN: usize = 4096;

/// Whether a logged change is a row change or a structure change (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The single leaf change an insert, update or delete was asked for.
    Row,
    /// Part of a split, a merge, or an allocation: redo-only, never undone.
    Structure,
}

/// The changes to one page handed to a [`TreeLog`].
#[derive(Debug)]
pub struct Change<'a> {
    /// The page's state after the changes (for a full-page image, if the logger wants one).
    pub after: &'a Page,
    /// The changes: encoded [`PageOp`]s, to be applied in order.
    pub ops: &'a [u8],
    /// The page's LSN before the changes: the logger logs `after` as an image instead of
    /// `ops` if this is not newer than the current checkpoint's redo point.
    pub lsn_before: Lsn,
    /// For a row change that replaces or removes an entry: the value it had, which the
    /// logger needs for the undo. `None` for inserts and structure changes.
    pub old_value: Option<&'a [u8]>,
}

/// Where the trees' changes are logged: implemented by the engine over the log manager.
pub trait TreeLog {
    /// Logs `changes` as one record and returns its LSN. A row change changes one page with
    /// one op, or (from [`BTree::append_run`]) with several inserts, each of a new key.
    fn log(&mut self, kind: ChangeKind, changes: &[Change<'_>]) -> Result<Lsn>;
}

/// What can go wrong in a tree.
#[derive(Debug)]
pub enum TreeError {
    /// The buffer pool failed (I/O, WAL, no free frame).
    Buffer(BufferError),
    /// A page operation failed where the tree's own checks said it would not: corruption.
    Page(PageError),
    /// The log refused the change; the database must go offline.
    Log(String),
    /// An invariant does not hold.
    Corrupt {
        /// The page where it was found.
        page_id: PageId,
        /// What is wrong.
        detail: String,
    },
    /// An insert found the key already present.
    DuplicateKey,
    /// A key or value exceeds [`MAX_KEY_LEN`] / [`MAX_VALUE_LEN`].
    TooLarge {
        /// The key's length.
        key: usize,
        /// The value's length.
        value: usize,
    },
}

impl fmt::Display for TreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeError::Buffer(e) => write!(f, "{e}"),
            TreeError::Page(e) => write!(f, "{e}"),
            TreeError::Log(e) => write!(f, "log: {e}"),
            TreeError::Corrupt { page_id, detail } => {
                write!(f, "B-tree page {page_id} is inconsistent: {detail}")
            }
            TreeError::DuplicateKey => write!(f, "duplicate key"),
            TreeError::TooLarge { key, value } => write!(
                f,
                "a {key}-byte key with a {value}-byte value exceeds the limits \
                 ({MAX_KEY_LEN}-byte keys, {MAX_VALUE_LEN}-byte values)"
            ),
        }
    }
}

impl std::error::Error for TreeError {}

impl From<BufferError> for TreeError {
    fn from(e: BufferError) -> Self {
        TreeError::Buffer(e)
    }
}

impl From<PageError> for TreeError {
    fn from(e: PageError) -> Self {
        TreeError::Page(e)
    }
}

type Result<T> = std::result::Result<T, TreeError>;

/// The trees of one data file, and their allocator.
#[derive(Debug)]
pub struct TreeSpace {
    pool: Arc<BufferPool>,
    /// Root page id -> the tree's latch. Entries are created on first use and never removed
    /// while the space lives (a dropped tree's root is not reused before a restart... it may
    /// be, and then it simply shares the latch, which is harmless).
    latches: Mutex<PageMap<Arc<RwLock<TreeState>>>>,
    /// Held by every structure change from its first read of the allocator page until its
    /// pages are installed, so that allocator changes are logged in the order they are made.
    alloc_lock: Mutex<()>,
}

/// The allocator's record on [`ALLOC_PAGE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AllocState {
    /// The first page never handed out.
    next_unused: PageId,
    /// The most recently freed page, or 0 for none.
    free_head: PageId,
    /// Pages on the free list.
    free_count: u32,
}

impl AllocState {
    fn encode(&self) -> [u8; 12] {
        let mut b = [0; 12];
        b[0..4].copy_from_slice(&self.next_unused.to_le_bytes());
        b[4..8].copy_from_slice(&self.free_head.to_le_bytes());
        b[8..12].copy_from_slice(&self.free_count.to_le_bytes());
        b
    }

    fn decode(page: &Page) -> Result<AllocState> {
        let b = page.get(0)?;
        let word = |i: usize| -> Result<u32> {
            b.get(i..i + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]])).ok_or_else(|| {
                TreeError::Corrupt { page_id: ALLOC_PAGE, detail: "short record".into() }
            })
        };
        Ok(AllocState { next_unused: word(0)?, free_head: word(4)?, free_count: word(8)? })
    }
}

/// The working set of a structure change: the new state of every page it touches, in the
/// order first touched, and the ops that lead there from each page's old state.
struct Smo<'p> {
    pool: &'p BufferPool,
    pages: Vec<Page>,
    lsn_before: Vec<Lsn>,
    /// Per page: its encoded ops, in application order (an image replaces earlier ops).
    ops: Vec<Vec<u8>>,
    /// Per page: whether it is newly formatted (its old contents are irrelevant).
    fresh: Vec<bool>,
}

impl<'p> Smo<'p> {
    fn new(pool: &'p BufferPool) -> Smo<'p> {
        Smo { pool, pages: Vec::new(), lsn_before: Vec::new(), ops: Vec::new(), fresh: Vec::new() }
    }

    /// The working copy of page `id`, read from the pool the first time.
    fn page(&mut self, id: PageId) -> Result<usize> {
        if let Some(i) = self.pages.iter().position(|p| p.page_id() == id) {
            return Ok(i);
        }
        let pinned = self.pool.fetch(id)?;
        let copy = pinned.read().clone();
        self.lsn_before.push(copy.page_lsn());
        self.pages.push(copy);
        self.ops.push(Vec::new());
        self.fresh.push(false);
        Ok(self.pages.len() - 1)
    }

    /// Adds a freshly formatted page that has no useful old contents.
    fn fresh(&mut self, id: PageId, page: Page) -> usize {
        if let Some(i) = self.pages.iter().position(|p| p.page_id() == id) {
            self.pages[i] = page;
            self.fresh[i] = true;
            return i;
        }
        self.lsn_before.push(0);
        self.pages.push(page);
        self.ops.push(Vec::new());
        self.fresh.push(true);
        self.pages.len() - 1
    }

    /// Applies `op` to the working copy `i` and records it.
    fn apply(&mut self, i: usize, op: PageOp<'_>) -> Result<()> {
        op.apply(&mut self.pages[i])?;
        op.encode(&mut self.ops[i]);
        Ok(())
    }

    /// Records that working copy `i` was rebuilt wholesale.
    fn image(&mut self, i: usize) {
        self.ops[i].clear();
        PageOp::image_of(&self.pages[i]).encode(&mut self.ops[i]);
    }

    fn alloc(&mut self) -> Result<PageId> {
        let a = self.page(ALLOC_PAGE)?;
        let mut state = AllocState::decode(&self.pages[a])?;
        let id = if state.free_head != 0 {
            let id = state.free_head;
            let f = self.page(id)?;
            if self.pages[f].page_type() != Some(PageType::Free) {
                return Err(TreeError::Corrupt {
                    page_id: id,
                    detail: "free list entry is not a free page".into(),
                });
            }
            state.free_head = self.pages[f].next_page().unwrap_or(0);
            state.free_count = state.free_count.saturating_sub(1);
            id
        } else {
            let id = state.next_unused;
            state.next_unused = id.checked_add(1).ok_or(TreeError::Corrupt {
                page_id: ALLOC_PAGE,
                detail: "page ids exhausted".into(),
            })?;
            id
        };
        self.apply(a, PageOp::Update { slot: 0, record: &state.encode() })?;
        Ok(id)
    }

    fn free(&mut self, id: PageId) -> Result<()> {
        let a = self.page(ALLOC_PAGE)?;
        let mut state = AllocState::decode(&self.pages[a])?;
        let mut page = Page::new(id, PageType::Free);
        page.set_next_page((state.free_head != 0).then_some(state.free_head));
        let i = self.fresh(id, page);
        self.image(i);
        state.free_head = id;
        state.free_count += 1;
        self.apply(a, PageOp::Update { slot: 0, record: &state.encode() })
    }

    /// Logs the whole change as one record, then installs every working copy in the pool.
    fn commit(self, log: &mut dyn TreeLog) -> Result<()> {
        let changes: Vec<Change<'_>> = (0..self.pages.len())
            .filter(|&i| !self.ops[i].is_empty())
            .map(|i| Change {
                old_value: None,
                after: &self.pages[i],
                ops: &self.ops[i],
                lsn_before: self.lsn_before[i],
            })
            .collect();
        if changes.is_empty() {
            return Ok(());
        }
        // New pages get their room in the file before the record is logged: once it is, every
        // page below must be installed, and a growth that runs out of space half way through
        // would leave a parent pointing at a page the pool never got.
        for (i, page) in self.pages.iter().enumerate() {
            if self.fresh[i] && !self.ops[i].is_empty() {
                self.pool.reserve(page.page_id())?;
            }
        }
        let lsn = log.log(ChangeKind::Structure, &changes)?;
        for (i, page) in self.pages.iter().enumerate() {
            if self.ops[i].is_empty() {
                continue;
            }
            let pinned = if self.fresh[i] {
                self.pool.fetch_new(page.page_id(), PageType::Free)?
            } else {
                self.pool.fetch(page.page_id())?
            };
            let mut guard = pinned.write();
            guard.as_bytes_mut().copy_from_slice(page.as_bytes());
            guard.mark_dirty(lsn);
        }
        Ok(())
    }
}

/// Logs one row change made to a live page, encoded as `ops`; `old_value` is the value it
/// replaced or removed.
fn log_row(
    log: &mut dyn TreeLog,
    page: &Page,
    ops: &[u8],
    lsn_before: Lsn,
    old_value: Option<&[u8]>,
) -> Result<Lsn> {
    log.log(ChangeKind::Row, &[Change { after: page, ops, lsn_before, old_value }])
}

/// A leaf record (`u16 key_len, key, value`) built behind room for the header of the insert
/// or update that will place it, so that the op's log encoding is this same buffer: a row
/// change allocates and copies its record once.
struct RowRecord(Vec<u8>);

impl RowRecord {
    fn new(key: &[u8], value: &[u8]) -> RowRecord {
        let mut buf = Vec::with_capacity(RECORD_OP_HEADER + 2 + key.len() + value.len());
        buf.extend_from_slice(&[0; RECORD_OP_HEADER]);
        buf.extend_from_slice(&(key.len() as u16).to_le_bytes());
        buf.extend_from_slice(key);
        buf.extend_from_slice(value);
        RowRecord(buf)
    }

    fn record(&self) -> &[u8] {
        &self.0[RECORD_OP_HEADER..]
    }

    /// The encoding of the insert (or, if not `insert`, the update) of the record as `slot`.
    fn op_encoding(&mut self, insert: bool, slot: u16) -> &[u8] {
        let header = record_op_header(insert, slot, self.0.len() - RECORD_OP_HEADER);
        self.0[..RECORD_OP_HEADER].copy_from_slice(&header);
        &self.0
    }
}

impl TreeSpace {
    /// Stores `data` in a chain of new overflow pages (SQL Server's LOB pages) and returns the
    /// 12-byte pointer to it: first page id (`u32`), length (`u64`). The pages are logged as
    /// structure changes of at most [`BLOB_PAGES_PER_RECORD`] pages each, written last page
    /// first, so that every logged page's successor is already logged. A chain is never
    /// changed in place: a new value gets a new chain.
    pub fn write_blob(&self, log: &mut dyn TreeLog, data: &[u8]) -> Result<Vec<u8>> {
        let chunk = MAX_RECORD_LEN_FOR_BLOB;
        let chunks: Vec<&[u8]> =
            if data.is_empty() { vec![&[][..]] } else { data.chunks(chunk).collect() };
        let mut next: Option<PageId> = None;
        for group in chunks.rchunks(BLOB_PAGES_PER_RECORD) {
            let _alloc = self.alloc_lock.lock().unwrap_or_else(PoisonError::into_inner);
            let mut smo = Smo::new(&self.pool);
            for piece in group.iter().rev() {
                let id = smo.alloc()?;
                let mut page = Page::new(id, PageType::Overflow);
                page.push(piece)?;
                page.set_next_page(next);
                let i = smo.fresh(id, page);
                smo.image(i);
                next = Some(id);
            }
            smo.commit(log)?;
        }
        let first = next.ok_or_else(|| corrupt(0, "an empty blob chain"))?;
        let mut pointer = Vec::with_capacity(12);
        pointer.extend_from_slice(&first.to_le_bytes());
        pointer.extend_from_slice(&(data.len() as u64).to_le_bytes());
        Ok(pointer)
    }

    /// Reads back a value stored by [`TreeSpace::write_blob`].
    pub fn read_blob(&self, pointer: &[u8]) -> Result<Vec<u8>> {
        let (Some(first), Some(len)) = (pointer.get(0..4), pointer.get(4..12)) else {
            return Err(corrupt(0, "a malformed overflow pointer"));
        };
        let mut id = u32::from_le_bytes([first[0], first[1], first[2], first[3]]);
        let mut len_bytes = [0; 8];
        len_bytes.copy_from_slice(len);
        let len = u64::from_le_bytes(len_bytes) as usize;
        let mut out = Vec::with_capacity(len.min(1 << 30));
        while out.len() < len {
            let pinned = self.pool.fetch(id)?;
            let page = pinned.read();
            if page.page_type() != Some(PageType::Overflow) {
                return Err(corrupt(id, "an overflow chain reaches a non-overflow page"));
            }
            out.extend_from_slice(page.get(0)?);
            match page.next_page() {
                Some(next) => id = next,
                None => break,
            }
        }
        if out.len() != len {
            return Err(corrupt(id, format!("overflow chain holds {} of {len} bytes", out.len())));
        }
        Ok(out)
    }

    /// The trees of the file behind `pool`.
    pub fn new(pool: Arc<BufferPool>) -> TreeSpace {
        TreeSpace { pool, latches: Mutex::new(PageMap::default()), alloc_lock: Mutex::new(()) }
    }

    /// Formats the allocator page of a new data file.
    pub fn format(&self, log: &mut dyn TreeLog) -> Result<()> {
        let mut smo = Smo::new(&self.pool);
        let mut page = Page::new(ALLOC_PAGE, PageType::Allocation);
        let state = AllocState { next_unused: FIRST_ALLOCATABLE, free_head: 0, free_count: 0 };
        page.push(&state.encode())?;
        let i = smo.fresh(ALLOC_PAGE, page);
        smo.image(i);
        smo.commit(log)
    }

    /// The buffer pool.
    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    /// Pages ever handed out and pages on the free list.
    pub fn allocation(&self) -> Result<(PageId, u32)> {
        let pinned = self.pool.fetch(ALLOC_PAGE)?;
        let state = AllocState::decode(&pinned.read())?;
        Ok((state.next_unused, state.free_count))
    }

    /// Creates an empty tree; returns its root page id, which never changes.
    pub fn create_tree(
        &self,
        log: &mut dyn TreeLog,
        object_id: u32,
        index_id: u16,
    ) -> Result<PageId> {
        let _alloc = self.alloc_lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut smo = Smo::new(&self.pool);
        let id = smo.alloc()?;
        let mut page = Page::new(id, PageType::BTreeLeaf);
        page.set_object_id(object_id);
        page.set_index_id(index_id);
        let i = smo.fresh(id, page);
        smo.image(i);
        smo.commit(log)?;
        Ok(id)
    }

    /// The tree rooted at `root`.
    pub fn tree(&self, root: PageId) -> BTree<'_> {
        let latch = {
            let mut map = self.latches.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(map.entry(root).or_default())
        };
        BTree { space: self, root, latch }
    }
}

/// A handle on one tree.
#[derive(Debug)]
pub struct BTree<'s> {
    space: &'s TreeSpace,
    root: PageId,
    latch: Arc<RwLock<TreeState>>,
}

/// Where the last insert at the end of a tree went, so that ascending inserts skip the
/// descent. Kept under the tree latch. The hint is trusted only while the leaf's page LSN is
/// still the one the insert gave it: any other change to that page (a split, a merge, a
/// release and reuse by another tree) gives it a new LSN, and then the insert descends as
/// usual. Unlogged pages (LSN 0, tempdb) never get a hint.
#[derive(Debug, Default)]
struct TreeState {
    leaf: PageId,
    lsn: Lsn,
    /// Changes of the tree's entries (inserts, updates, deletes, undo included) since the
    /// process started: equal readings of it bracket a time in which no entry changed.
    changes: u64,
}

/// A key and its value, copied out of a leaf.
pub type Entry = (Vec<u8>, Vec<u8>);

/// A leaf a reader's last descent reached, for [`BTree::copy_range_hinted`]: its page, the
/// page's LSN then, its first and last keys then, and the tree's root (a hint is only for
/// the tree that noted it). Held by the reader, not the tree, so readers of one tree do not
/// share (or contend for) it; empty, it is never used.
#[derive(Debug, Default)]
pub struct LeafHint {
    root: PageId,
    leaf: PageId,
    lsn: Lsn,
    first: Vec<u8>,
    last: Vec<u8>,
}

impl LeafHint {
    /// Notes `leaf`, a leaf of the tree rooted at `root` just reached by a descent, under
    /// the tree's latch. A leaf without entries or without a page LSN is not noted (the
    /// hint is emptied): it bounds no keys, or its changes cannot be told.
    fn note(&mut self, root: PageId, leaf: &PinnedPage) -> Result<()> {
        let page = leaf.read();
        let n = page.slot_count();
        self.lsn = 0;
        if n == 0 || page.page_lsn() == 0 {
            return Ok(());
        }
        self.first.clear();
        self.first.extend_from_slice(leaf_key(page.get(0)?)?);
        self.last.clear();
        self.last.extend_from_slice(leaf_key(page.get(n - 1)?)?);
        self.root = root;
        self.leaf = leaf.id();
        self.lsn = page.page_lsn();
        Ok(())
    }
}

/// Entries copied out of a tree's leaves ([`BTree::copy_range`]) into one buffer, back to
/// back, each a leaf record copied whole (one copy for its key and value). A scan refills
/// one batch over and over, so it allocates only when a batch is larger than every one
/// before it, where a copy of each entry as an [`Entry`] costs two allocations and two
/// frees.
#[derive(Debug, Default)]
pub struct EntryBatch {
    bytes: Vec<u8>,
    /// Per entry, where its key starts, where its key ends (and its value starts) and
    /// where its value ends in `bytes`.
    ends: Vec<(usize, usize, usize)>,
}

impl EntryBatch {
    /// An empty batch.
    pub fn new() -> EntryBatch {
        EntryBatch::default()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Removes every entry, keeping the room they took.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Makes room for `entries` more entries of `record_len` bytes each.
    fn reserve(&mut self, record_len: usize, entries: usize) {
        self.bytes.reserve(record_len * entries);
        self.ends.reserve(entries);
    }

    /// Appends an entry.
    pub fn push(&mut self, key: &[u8], value: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        self.ends.push((start, start + key.len(), self.bytes.len()));
    }

    /// Appends the entry of a leaf record (`u16 key_len, key, value`, its key checked to be
    /// within it by [`leaf_key`]) whose key is `key_len` bytes long.
    fn push_record(&mut self, record: &[u8], key_len: usize) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(record);
        self.ends.push((start + 2, start + 2 + key_len, self.bytes.len()));
    }

    /// Entry `i`'s key and value.
    ///
    /// # Panics
    ///
    /// If `i` is not below [`EntryBatch::len`].
    pub fn get(&self, i: usize) -> (&[u8], &[u8]) {
        let (start, key_end, end) = self.ends[i];
        (&self.bytes[start..key_end], &self.bytes[key_end..end])
    }

    /// The last entry's key, if any.
    pub fn last_key(&self) -> Option<&[u8]> {
        self.len().checked_sub(1).map(|i| self.get(i).0)
    }
}

/// Where a descent went: (page, slot of the child taken) from the root down, then the leaf.
struct Path {
    internal: Vec<(PageId, usize)>,
    leaf: PinnedPage,
}

/// The outcome of searching a leaf.
enum Found {
    At(usize),
    Before(usize),
}

fn leaf_key(record: &[u8]) -> Result<&[u8]> {
    let n = record
        .get(0..2)
        .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
        .ok_or_else(|| TreeError::Corrupt { page_id: 0, detail: "short leaf record".into() })?;
    record
        .get(2..2 + n)
        .ok_or_else(|| TreeError::Corrupt { page_id: 0, detail: "leaf key past record".into() })
}

fn leaf_split(record: &[u8]) -> Result<(&[u8], &[u8])> {
    let key = leaf_key(record)?;
    Ok((key, &record[2 + key.len()..]))
}

fn internal_entry(record: &[u8]) -> Result<(PageId, &[u8])> {
    let child = record
        .get(0..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| TreeError::Corrupt { page_id: 0, detail: "short internal record".into() })?;
    Ok((child, &record[4..]))
}

fn internal_key(record: &[u8]) -> Result<&[u8]> {
    Ok(internal_entry(record)?.1)
}

fn internal_record(child: PageId, key: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(4 + key.len());
    r.extend_from_slice(&child.to_le_bytes());
    r.extend_from_slice(key);
    r
}

/// Fewest slots a page must have before its search guesses where the key is (below it, a
/// plain binary search is as quick).
const GUESS_MIN_SLOTS: usize = 16;

/// Search of a leaf for `key`: the slot holding it, or the slot of the first greater key.
fn search_leaf(page: &Page, key: &[u8]) -> Result<Found> {
    search_slots(page, key, 0, leaf_key)
}

/// The first slot of leaf `page` at or past the lower bound `from`.
fn first_slot(page: &Page, from: &Bound<Vec<u8>>) -> Result<usize> {
    Ok(match from {
        Bound::Unbounded => 0,
        Bound::Included(k) => match search_leaf(page, k)? {
            Found::At(s) | Found::Before(s) => s,
        },
        Bound::Excluded(k) => match search_leaf(page, k)? {
            Found::At(s) => s + 1,
            Found::Before(s) => s,
        },
    })
}

/// The slot of the child of an internal page that covers `key`: the last entry whose key is
/// at or below it, entry 0 (whose key is not used) if none is.
fn search_internal(page: &Page, key: &[u8]) -> Result<usize> {
    Ok(match search_slots(page, key, 1, internal_key)? {
        Found::At(slot) => slot,
        // `slot` is at least 1: the search starts there.
        Found::Before(slot) => slot - 1,
    })
}

/// Search of the slots from `base` on of a page, whose records `key_of` reads the keys of,
/// in order, for `key`: the slot holding it, or the slot of the first greater key.
///
/// A page read by a point lookup is often not in the CPU's caches, and each probe of a
/// binary search costs two cache misses (the slot, then the record). So the search first
/// reads the first and last keys and guesses where `key` lies between them, as if keys
/// were spread evenly (they are, for the dense integer keys of most tables: then the guess
/// is exact), then gallops from the guess to bracket the key and binary-searches the
/// bracket. The guess only decides where probing starts: the answer is the binary search's
/// whatever the keys are, as long as they are in order.
fn search_slots(
    page: &Page,
    key: &[u8],
    base: usize,
    key_of: impl Fn(&[u8]) -> Result<&[u8]>,
) -> Result<Found> {
    let n = page.slot_count();
    let probe = |slot: usize| -> Result<Ordering> { Ok(key_of(page.get(slot)?)?.cmp(key)) };
    if n < base + GUESS_MIN_SLOTS {
        return bisect(probe, base, n);
    }
    match probe(base)? {
        Ordering::Greater => return Ok(Found::Before(base)),
        Ordering::Equal => return Ok(Found::At(base)),
        Ordering::Less => {}
    }
    match probe(n - 1)? {
        Ordering::Less => return Ok(Found::Before(n)),
        Ordering::Equal => return Ok(Found::At(n - 1)),
        Ordering::Greater => {}
    }
    // Invariant from here: every slot below `lo` holds a smaller key, every slot from `hi`
    // on a greater one.
    let (mut lo, mut hi) = (base + 1, n - 1);
    let first = key_of(page.get(base)?)?;
    let last = key_of(page.get(n - 1)?)?;
    let guess = (base + guess_slot(first, last, key, n - 1 - base)).clamp(lo, hi - 1);
    match probe(guess)? {
        Ordering::Equal => return Ok(Found::At(guess)),
        Ordering::Less => {
            lo = guess + 1;
            let mut step = 1;
            while lo < hi {
                let at = (guess + step).min(hi - 1);
                match probe(at)? {
                    Ordering::Equal => return Ok(Found::At(at)),
                    Ordering::Less => lo = at + 1,
                    Ordering::Greater => {
                        hi = at;
                        break;
                    }
                }
                step *= 2;
            }
        }
        Ordering::Greater => {
            hi = guess;
            let mut step = 1;
            while lo < hi {
                let at = guess.saturating_sub(step).max(lo);
                match probe(at)? {
                    Ordering::Equal => return Ok(Found::At(at)),
                    Ordering::Greater => hi = at,
                    Ordering::Less => {
                        lo = at + 1;
                        break;
                    }
                }
                step *= 2;
            }
        }
    }
    bisect(probe, lo, hi)
}

/// Binary search of the slots `lo..hi`, every slot below `lo` holding a smaller key than the
/// one sought and every slot from `hi` on a greater one; `probe` compares a slot's key with
/// it.
fn bisect(
    probe: impl Fn(usize) -> Result<Ordering>,
    mut lo: usize,
    mut hi: usize,
) -> Result<Found> {
    while lo < hi {
        let mid = (lo + hi) / 2;
        match probe(mid)? {
            Ordering::Less => lo = mid + 1,
            Ordering::Greater => hi = mid,
            Ordering::Equal => return Ok(Found::At(mid)),
        }
    }
    Ok(Found::Before(lo))
}

/// Where `key` would be among `span + 1` keys running evenly from `first` (slot 0) to `last`
/// (slot `span`), with `first < key < last`: each key read as the number its eight bytes
/// after the prefix `first` and `last` share make (missing bytes as zeros), which keeps
/// their order. Only a starting point for [`search_slots`].
fn guess_slot(first: &[u8], last: &[u8], key: &[u8], span: usize) -> usize {
    let shared = first.iter().zip(last).take_while(|(a, b)| a == b).count();
    let number = |k: &[u8]| {
        let mut bytes = [0u8; 8];
        let tail = k.get(shared..).unwrap_or_default();
        let n = tail.len().min(8);
        bytes[..n].copy_from_slice(&tail[..n]);
        u64::from_be_bytes(bytes)
    };
    let (low, high) = (number(first), number(last));
    if high <= low {
        return span / 2;
    }
    let at = number(key).clamp(low, high) - low;
    // At most `span`: `at <= high - low`.
    (u128::from(at) * span as u128 / u128::from(high - low)) as usize
}

fn corrupt(page_id: PageId, detail: impl Into<String>) -> TreeError {
    TreeError::Corrupt { page_id, detail: detail.into() }
}

/// What [`BTree::check`] found in a healthy tree, or [`BTree::count`] counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeCheck {
    /// Levels, leaves included.
    pub depth: u16,
    /// Pages in the tree.
    pub pages: u64,
    /// Leaf entries.
    pub rows: u64,
}

impl BTree<'_> {
    /// The root page id.
    pub fn root(&self) -> PageId {
        self.root
    }

    fn pool(&self) -> &BufferPool {
        &self.space.pool
    }

    /// Descends to the leaf that covers `key`.
    fn descend(&self, key: &[u8]) -> Result<Path> {
        let mut internal = Vec::new();
        let leaf = self.descend_recording(key, |id, slot| internal.push((id, slot)))?;
        Ok(Path { internal, leaf })
    }

    /// Descends to the leaf that covers `key`, telling `step` each internal page passed and
    /// the slot of the child taken (a read that changes nothing need not keep them).
    fn descend_recording(
        &self,
        key: &[u8],
        mut step: impl FnMut(PageId, usize),
    ) -> Result<PinnedPage> {
        let mut depth = 0;
        let mut pinned = self.pool().fetch(self.root)?;
        loop {
            let id = pinned.id();
            let next = {
                let page = pinned.read();
                match page.page_type() {
                    Some(PageType::BTreeLeaf) => None,
                    Some(PageType::BTreeInternal) => {
                        if page.slot_count() == 0 {
                            return Err(corrupt(id, "empty internal page"));
                        }
                        let slot = search_internal(&page, key)?;
                        Some((slot, internal_entry(page.get(slot)?)?.0))
                    }
                    other => return Err(corrupt(id, format!("{other:?} page in a B-tree"))),
                }
            };
            match next {
                None => return Ok(pinned),
                Some((slot, child)) => {
                    step(id, slot);
                    depth += 1;
                    if depth > 64 {
                        return Err(corrupt(id, "tree deeper than 64 levels: a cycle"));
                    }
                    // The parent is done with: the tree latch keeps the structure, so its
                    // pin need not outlast the step to the child.
                    pinned = pinned.step_to(child)?;
                }
            }
        }
    }

    /// How many times the tree's entries have changed (see `TreeState::changes`): a reader
    /// that copied entries after one reading and finds the same count later knows its copies
    /// are still what the tree holds.
    pub fn changes(&self) -> u64 {
        self.latch.read().unwrap_or_else(PoisonError::into_inner).changes
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let leaf = self.descend_recording(key, |_, _| {})?;
        let page = leaf.read();
        match search_leaf(&page, key)? {
            Found::At(slot) => Ok(Some(leaf_split(page.get(slot)?)?.1.to_vec())),
            Found::Before(_) => Ok(None),
        }
    }

    /// The last key in the tree, if any (used to continue a row locator or identity after a
    /// restart).
    pub fn last_key(&self) -> Result<Option<Vec<u8>>> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let mut id = self.root;
        for _ in 0..64 {
            let pinned = self.pool().fetch(id)?;
            let page = pinned.read();
            if page.page_type() == Some(PageType::BTreeLeaf) {
                if page.slot_count() > 0 {
                    return Ok(Some(leaf_key(page.get(page.slot_count() - 1)?)?.to_vec()));
                }
                // Only the root may be empty, and then the tree is.
                return Ok(None);
            }
            if page.slot_count() == 0 {
                return Err(corrupt(id, "empty internal page"));
            }
            id = internal_entry(page.get(page.slot_count() - 1)?)?.0;
        }
        Err(corrupt(self.root, "tree deeper than 64 levels: a cycle"))
    }

    /// Inserts `key` -> `value`; fails with [`TreeError::DuplicateKey`] if `key` is present.
    pub fn insert(&self, log: &mut dyn TreeLog, key: &[u8], value: &[u8]) -> Result<()> {
        self.put(log, key, value, false).map(|_| ())
    }

    /// Replaces the value under `key`; returns the old value, or `None` (and changes nothing)
    /// if the key is absent.
    pub fn update(
        &self,
        log: &mut dyn TreeLog,
        key: &[u8],
        value: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        self.put(log, key, value, true)
    }

    fn put(
        &self,
        log: &mut dyn TreeLog,
        key: &[u8],
        value: &[u8],
        replace: bool,
    ) -> Result<Option<Vec<u8>>> {
        if key.len() > MAX_KEY_LEN || value.len() > MAX_VALUE_LEN {
            return Err(TreeError::TooLarge { key: key.len(), value: value.len() });
        }
        let mut hint = self.latch.write().unwrap_or_else(PoisonError::into_inner);
        hint.changes += 1;
        let mut row = RowRecord::new(key, value);
        if !replace && self.append_at_hint(&mut hint, log, key, &mut row)? {
            return Ok(None);
        }
        // Each split makes the target leaf strictly smaller or new and empty, so this ends;
        // the bound turns a bug into an error instead of a hang.
        for _ in 0..32 {
            let path = self.descend(key)?;
            {
                let mut page = path.leaf.write();
                let lsn_before = page.page_lsn();
                match search_leaf(&page, key)? {
                    Found::At(slot) => {
                        if !replace {
                            return Err(TreeError::DuplicateKey);
                        }
                        let old = page.get(slot)?.to_vec();
                        let grows = row.record().len().saturating_sub(old.len());
                        if grows == 0 || grows <= page.free_bytes() {
                            let old_value = leaf_split(&old)?.1;
                            let slot = slot as u16;
                            PageOp::Update { slot, record: row.record() }.apply(&mut page)?;
                            let ops = row.op_encoding(false, slot);
                            let lsn = log_row(log, &page, ops, lsn_before, Some(old_value))?;
                            page.mark_dirty(lsn);
                            return Ok(Some(old_value.to_vec()));
                        }
                    }
                    Found::Before(slot) => {
                        if replace {
                            return Ok(None);
                        }
                        if page.fits(row.record().len()) {
                            let at = slot as u16;
                            PageOp::Insert { slot: at, record: row.record() }.apply(&mut page)?;
                            let ops = row.op_encoding(true, at);
                            let lsn = log_row(log, &page, ops, lsn_before, None)?;
                            page.mark_dirty(lsn);
                            if page.next_page().is_none() && slot + 1 == page.slot_count() {
                                (hint.leaf, hint.lsn) = (path.leaf.id(), lsn);
                            }
                            return Ok(None);
                        }
                    }
                }
            }
            self.split_leaf(log, path, key, row.record().len())?;
        }
        Err(corrupt(self.root, "an insert split 32 times without making room"))
    }

    /// Inserts at the end of the rightmost leaf without a descent, if the hint still holds and
    /// the key sorts after every key there; returns whether it did.
    fn append_at_hint(
        &self,
        hint: &mut TreeState,
        log: &mut dyn TreeLog,
        key: &[u8],
        row: &mut RowRecord,
    ) -> Result<bool> {
        if hint.lsn == 0 {
            return Ok(false);
        }
        let pinned = self.pool().fetch(hint.leaf)?;
        let mut page = pinned.write();
        let n = page.slot_count();
        let usable = page.page_lsn() == hint.lsn
            && page.page_type() == Some(PageType::BTreeLeaf)
            && page.next_page().is_none()
            && n > 0
            && leaf_key(page.get(n - 1)?)? < key
            && page.fits(row.record().len());
        if !usable {
            hint.lsn = 0;
            return Ok(false);
        }
        let lsn_before = page.page_lsn();
        let slot = n as u16;
        PageOp::Insert { slot, record: row.record() }.apply(&mut page)?;
        let ops = row.op_encoding(true, slot);
        let lsn = log_row(log, &page, ops, lsn_before, None)?;
        page.mark_dirty(lsn);
        hint.lsn = lsn;
        Ok(true)
    }

    /// Deletes `key`; returns its old value, or `None` if it was absent. A leaf left empty is
    /// released, and one left less than a quarter full merges with its right sibling when
    /// both fit in one page.
    pub fn delete(&self, log: &mut dyn TreeLog, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut state = self.latch.write().unwrap_or_else(PoisonError::into_inner);
        state.changes += 1;
        let path = self.descend(key)?;
        let (old, underfull) = {
            let mut page = path.leaf.write();
            let lsn_before = page.page_lsn();
            let Found::At(slot) = search_leaf(&page, key)? else {
                return Ok(None);
            };
            let old = leaf_split(page.get(slot)?)?.1.to_vec();
            let op = PageOp::Delete { slot: slot as u16 };
            op.apply(&mut page)?;
            let mut ops = Vec::with_capacity(op.encoded_len());
            op.encode(&mut ops);
            let lsn = log_row(log, &page, &ops, lsn_before, Some(&old))?;
            page.mark_dirty(lsn);
            let used = PAGE_SIZE - page.free_bytes();
            (old, used < PAGE_SIZE / 4)
        };
        if underfull && !path.internal.is_empty() {
            self.merge_leaf(log, path)?;
        }
        Ok(Some(old))
    }

    /// Splits the leaf of `path` so that a record of `len` bytes for `key` fits.
    fn split_leaf(&self, log: &mut dyn TreeLog, path: Path, key: &[u8], len: usize) -> Result<()> {
        let pool = self.pool();
        // Held for the whole change: see "Concurrency" in the module docs.
        let _alloc = self.space.alloc_lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut smo = Smo::new(pool);
        let mut parents = path.internal;
        let mut leaf_id = path.leaf.id();
        drop(path.leaf);
        if leaf_id == self.root {
            leaf_id = self.raise_root(&mut smo)?;
            parents = vec![(self.root, 0)];
        }
        let l = smo.page(leaf_id)?;
        let n = smo.pages[l].slot_count();
        let pos = match search_leaf(&smo.pages[l], key)? {
            Found::At(s) | Found::Before(s) => s,
        };
        // Appending past the last key of the rightmost leaf: start a new, empty leaf, as
        // SQL Server does, so that ascending inserts leave full pages behind.
        let k = if pos == n && smo.pages[l].next_page().is_none() {
            n
        } else {
            let sizes: Vec<usize> = (0..n)
                .map(|s| smo.pages[l].get(s).map(|r| r.len() + SLOT_SIZE))
                .collect::<std::result::Result<_, _>>()?;
            let total: usize = sizes.iter().sum::<usize>() + len + SLOT_SIZE;
            let mut acc = 0;
            let mut k = n;
            for (s, size) in sizes.iter().enumerate() {
                acc += size + if s == pos { len + SLOT_SIZE } else { 0 };
                if acc >= total / 2 {
                    k = s + 1;
                    break;
                }
            }
            if pos < n {
                // Slots `pos..n` sort after `key`: at least the last must move right, so that
                // the separator is a key that moved. Keeping them all (k == n) with `key` as
                // the separator would leave them left of a separator they sort after.
                k.min(n - 1)
            } else {
                k.clamp(1, n.max(1))
            }
        };
        // k == n only when `key` sorts after every slot: the right page starts empty, and
        // `key` (above the left page's keys, below the old upper bound) divides them.
        let separator =
            if k == n { key.to_vec() } else { leaf_key(smo.pages[l].get(k)?)?.to_vec() };
        let new_id = smo.alloc()?;
        let mut right = Page::new(new_id, PageType::BTreeLeaf);
        right.set_object_id(smo.pages[l].object_id());
        right.set_index_id(smo.pages[l].index_id());
        for s in k..n {
            right.push(smo.pages[l].get(s)?)?;
        }
        let old_next = smo.pages[l].next_page();
        right.set_prev_page(Some(leaf_id));
        right.set_next_page(old_next);
        let r = smo.fresh(new_id, right);
        smo.image(r);
        let prev = smo.pages[l].prev_page();
        smo.apply(l, PageOp::Truncate { from_slot: k as u16 })?;
        smo.apply(l, PageOp::Links { prev, next: Some(new_id) })?;
        if let Some(next) = old_next {
            let x = smo.page(next)?;
            let next_next = smo.pages[x].next_page();
            smo.apply(x, PageOp::Links { prev: Some(new_id), next: next_next })?;
        }
        self.insert_into_parent(&mut smo, &mut parents, &separator, new_id)?;
        smo.commit(log)
    }

    /// Moves the root's contents to a new child and makes the root an internal page above
    /// it; returns the child.
    fn raise_root(&self, smo: &mut Smo<'_>) -> Result<PageId> {
        let child_id = smo.alloc()?;
        let root = smo.page(self.root)?;
        let mut child = smo.pages[root].clone();
        child.set_page_id(child_id);
        child.set_page_lsn(0);
        let c = smo.fresh(child_id, child);
        smo.image(c);
        let old = &smo.pages[root];
        let mut new_root = Page::new(self.root, PageType::BTreeInternal);
        new_root.set_object_id(old.object_id());
        new_root.set_index_id(old.index_id());
        new_root.set_level(old.level() + 1);
        new_root.push(&internal_record(child_id, &[]))?;
        new_root.set_page_lsn(old.page_lsn());
        smo.pages[root] = new_root;
        smo.image(root);
        Ok(child_id)
    }

    /// Inserts the entry (`key`, `child`) after the entry that led to the page just split,
    /// splitting the parent in turn when it is full.
    fn insert_into_parent(
        &self,
        smo: &mut Smo<'_>,
        parents: &mut Vec<(PageId, usize)>,
        key: &[u8],
        child: PageId,
    ) -> Result<()> {
        let Some((parent_id, slot)) = parents.pop() else {
            return Err(corrupt(self.root, "split below a missing parent"));
        };
        let p = smo.page(parent_id)?;
        let record = internal_record(child, key);
        if smo.pages[p].fits(record.len()) {
            return smo.apply(p, PageOp::Insert { slot: (slot + 1) as u16, record: &record });
        }
        // Split the parent: entries k.. move to a new right sibling at the same level.
        let mut p = p;
        if parent_id == self.root {
            let child_id = self.raise_root(smo)?;
            parents.push((self.root, 0));
            p = smo.page(child_id)?;
        }
        let n = smo.pages[p].slot_count();
        let k = (n / 2).max(1);
        let new_id = smo.alloc()?;
        let mut right = Page::new(new_id, PageType::BTreeInternal);
        right.set_level(smo.pages[p].level());
        right.set_object_id(smo.pages[p].object_id());
        right.set_index_id(smo.pages[p].index_id());
        for s in k..n {
            right.push(smo.pages[p].get(s)?)?;
        }
        let up_key = internal_entry(smo.pages[p].get(k)?)?.1.to_vec();
        let r = smo.fresh(new_id, right);
        smo.apply(p, PageOp::Truncate { from_slot: k as u16 })?;
        // The new entry goes after `slot`: in the left half if slot < k, else in the right.
        if slot < k {
            smo.apply(p, PageOp::Insert { slot: (slot + 1) as u16, record: &record })?;
        } else {
            smo.pages[r].insert(slot + 1 - k, &record)?;
        }
        smo.image(r);
        self.insert_into_parent(smo, parents, &up_key, new_id)
    }

    /// Merges an underfull leaf with its right sibling, or releases it when empty.
    fn merge_leaf(&self, log: &mut dyn TreeLog, path: Path) -> Result<()> {
        let pool = self.pool();
        let _alloc = self.space.alloc_lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut smo = Smo::new(pool);
        let leaf_id = path.leaf.id();
        drop(path.leaf);
        let mut parents = path.internal;
        let Some(&(parent_id, slot)) = parents.last() else {
            return Ok(());
        };
        let l = smo.page(leaf_id)?;
        let p = smo.page(parent_id)?;
        if smo.pages[l].slot_count() == 0 {
            self.unlink_leaf(&mut smo, l)?;
            smo.free(leaf_id)?;
            self.remove_from_parent(&mut smo, &mut parents)?;
            return smo.commit(log);
        }
        // Merge only with a right sibling under the same parent, so no separator above the
        // parent changes.
        if slot + 1 >= smo.pages[p].slot_count() {
            return Ok(());
        }
        let right_id = internal_entry(smo.pages[p].get(slot + 1)?)?.0;
        let r = smo.page(right_id)?;
        let right_used = PAGE_SIZE - smo.pages[r].free_bytes();
        let left_free = smo.pages[l].free_bytes();
        if right_used + PAGE_SIZE / 8 > left_free {
            return Ok(());
        }
        for s in 0..smo.pages[r].slot_count() {
            let rec = smo.pages[r].get(s)?.to_vec();
            smo.pages[l].push(&rec)?;
        }
        let right_next = smo.pages[r].next_page();
        smo.pages[l].set_next_page(right_next);
        smo.pages[l].compact();
        smo.image(l);
        if let Some(next) = right_next {
            let x = smo.page(next)?;
            let nn = smo.pages[x].next_page();
            smo.apply(x, PageOp::Links { prev: Some(leaf_id), next: nn })?;
        }
        smo.free(right_id)?;
        smo.apply(p, PageOp::Delete { slot: (slot + 1) as u16 })?;
        smo.commit(log)
    }

    /// Takes working copy `l`, a leaf about to be released, out of the leaf chain.
    fn unlink_leaf(&self, smo: &mut Smo<'_>, l: usize) -> Result<()> {
        let (prev, next) = (smo.pages[l].prev_page(), smo.pages[l].next_page());
        if let Some(prev) = prev {
            let x = smo.page(prev)?;
            let pp = smo.pages[x].prev_page();
            smo.apply(x, PageOp::Links { prev: pp, next })?;
        }
        if let Some(next) = next {
            let x = smo.page(next)?;
            let nn = smo.pages[x].next_page();
            smo.apply(x, PageOp::Links { prev, next: nn })?;
        }
        Ok(())
    }

    /// Removes the entry that led to a released page from its parent, releasing the parent
    /// too when that leaves it empty (never the root: an empty root becomes an empty leaf).
    fn remove_from_parent(
        &self,
        smo: &mut Smo<'_>,
        parents: &mut Vec<(PageId, usize)>,
    ) -> Result<()> {
        let Some((parent_id, slot)) = parents.pop() else {
            return Ok(());
        };
        let p = smo.page(parent_id)?;
        smo.apply(p, PageOp::Delete { slot: slot as u16 })?;
        if smo.pages[p].slot_count() > 0 {
            return Ok(());
        }
        if parent_id == self.root {
            let old = &smo.pages[p];
            let mut leaf = Page::new(self.root, PageType::BTreeLeaf);
            leaf.set_object_id(old.object_id());
            leaf.set_index_id(old.index_id());
            leaf.set_page_lsn(old.page_lsn());
            smo.pages[p] = leaf;
            smo.image(p);
            return Ok(());
        }
        smo.free(parent_id)?;
        self.remove_from_parent(smo, parents)
    }

    /// Entries with keys in `(lower, upper)` bounds, in key order, through a cursor.
    pub fn range(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> Cursor<'_> {
        Cursor { tree: self, next: lower, upper, buffered: Vec::new(), pos: 0, done: false }
    }

    /// Every entry, in key order.
    pub fn scan(&self) -> Cursor<'_> {
        self.range(Bound::Unbounded, Bound::Unbounded)
    }

    /// Appends to `batch` up to `max` entries with keys in `from..upper`, in key order; says
    /// whether the range holds nothing past them. It descends once to `from` and then
    /// follows the leaf chain, all under one hold of the shared latch, so the batch shows the
    /// tree at one moment (no writer changes it meanwhile) however many leaves it spans.
    pub fn copy_range(
        &self,
        from: &Bound<Vec<u8>>,
        upper: &Bound<Vec<u8>>,
        max: usize,
        batch: &mut EntryBatch,
    ) -> Result<bool> {
        self.copy_range_hinted(from, upper, max, batch, None)
    }

    /// [`BTree::copy_range`] that starts without a descent when `from` lies within the keys
    /// the leaf `hint` names held when it was noted, and that leaf is unchanged; after a
    /// descent, `hint` names the leaf it reached. A cursor that seeks again and again in key
    /// order (an index nested-loop join's inner side, reseeked per outer row) mostly lands
    /// in the leaf its last seek started in. The hint keeps that leaf's first and last keys,
    /// so a seek that lies outside them descends without reading the hinted leaf at all.
    pub fn copy_range_hinted(
        &self,
        from: &Bound<Vec<u8>>,
        upper: &Bound<Vec<u8>>,
        max: usize,
        batch: &mut EntryBatch,
        hint: Option<&mut LeafHint>,
    ) -> Result<bool> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let start: &[u8] = match from {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let mut pinned = match hint {
            None => self.descend_recording(start, |_, _| {})?,
            Some(hint) => match self.hinted_leaf(hint, start)? {
                Some(leaf) => leaf,
                None => {
                    let leaf = self.descend_recording(start, |_, _| {})?;
                    hint.note(self.root, &leaf)?;
                    leaf
                }
            },
        };
        let mut first_leaf = true;
        let mut copied = 0;
        loop {
            let next = {
                let page = pinned.read();
                // Only the first leaf holds keys below `from`; the ones after it start past it.
                let first = if first_leaf { first_slot(&page, from)? } else { 0 };
                for s in first..page.slot_count() {
                    if copied == max {
                        return Ok(false);
                    }
                    let record = page.get(s)?;
                    if s == first {
                        // Room for the rest of the leaf as if its records were this one's
                        // size, rather than doubling from nothing for a short seek's batch.
                        batch.reserve(record.len(), (page.slot_count() - first).min(max - copied));
                    }
                    let k = leaf_key(record)?;
                    let beyond = match upper {
                        Bound::Unbounded => false,
                        Bound::Included(u) => k > u.as_slice(),
                        Bound::Excluded(u) => k >= u.as_slice(),
                    };
                    if beyond {
                        return Ok(true);
                    }
                    batch.push_record(record, k.len());
                    copied += 1;
                }
                page.next_page()
            };
            match next {
                None => return Ok(true),
                Some(next) => {
                    pinned = self.pool().fetch(next)?;
                    first_leaf = false;
                }
            }
        }
    }

    /// The leaf `hint` names, if `start` lies within the keys it held when noted and it is
    /// still that leaf of this tree as it was then. Its page LSN unchanged says so: every
    /// logged change of a page (an entry put in or taken out, a split, a merge, a release and
    /// reuse by any tree) gives it a new LSN, and unlogged pages (LSN 0) are never noted.
    /// Then its first key at or below `start` means every key of the leaves before it is
    /// below `start`, and its last key at or above means the first key at or after `start`
    /// is in it: a copy from there finds what a descent would. Called under the tree's
    /// shared latch, so no writer changes the tree meanwhile.
    fn hinted_leaf(&self, hint: &LeafHint, start: &[u8]) -> Result<Option<PinnedPage>> {
        let usable = hint.root == self.root
            && hint.lsn != 0
            && !start.is_empty()
            && hint.first.as_slice() <= start
            && start <= hint.last.as_slice();
        if !usable {
            return Ok(None);
        }
        // A page that cannot be read now (released, and its file shrunk since) is no leaf
        // of this tree: the descent finds the way, and reports any error of its own.
        let Ok(pinned) = self.pool().fetch(hint.leaf) else { return Ok(None) };
        let same = {
            let page = pinned.read();
            page.page_lsn() == hint.lsn && page.page_type() == Some(PageType::BTreeLeaf)
        };
        Ok(same.then_some(pinned))
    }

    /// Copies the entries of the leaf covering `from` that lie at or after it.
    fn fetch_batch(&self, from: &Bound<Vec<u8>>) -> Result<(Vec<Entry>, bool)> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let start: &[u8] = match from {
            Bound::Included(k) | Bound::Excluded(k) => k,
            Bound::Unbounded => &[],
        };
        let path = self.descend(start)?;
        let mut pinned = path.leaf;
        loop {
            let (entries, next) = {
                let page = pinned.read();
                let first = first_slot(&page, from)?;
                let mut entries = Vec::with_capacity(page.slot_count().saturating_sub(first));
                for s in first..page.slot_count() {
                    let (k, v) = leaf_split(page.get(s)?)?;
                    entries.push((k.to_vec(), v.to_vec()));
                }
                (entries, page.next_page())
            };
            match (entries.is_empty(), next) {
                (false, _) => return Ok((entries, next.is_none())),
                (true, None) => return Ok((entries, true)),
                (true, Some(next)) => pinned = self.pool().fetch(next)?,
            }
        }
    }

    /// An estimate of the tree's entries from one descent along its first pages: the product
    /// of the slot counts met on the way down. Reads one page a level, under the shared
    /// latch; exact for a tree of one level, a guess of the right magnitude above.
    pub fn estimate_entries(&self) -> Result<f64> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let mut estimate = 1.0;
        let mut id = self.root;
        for _ in 0..64 {
            let pinned = self.pool().fetch(id)?;
            let page = pinned.read();
            if page.level() == 0 {
                return Ok(estimate * page.slot_count() as f64);
            }
            if page.slot_count() == 0 {
                return Err(corrupt(id, "empty internal page"));
            }
            // Every child but the last is full-ish; the first one stands for them all.
            estimate *= page.slot_count() as f64;
            id = internal_entry(page.get(0)?)?.0;
        }
        Err(corrupt(self.root, "tree deeper than 64 levels: a cycle"))
    }

    /// Counts the tree's entries, pages and levels, level by level, reading only each page's
    /// header and child pointers (no copies and none of [`BTree::check`]'s checks), under the
    /// shared latch: the figures metadata views show.
    pub fn count(&self) -> Result<TreeCheck> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let mut report = TreeCheck::default();
        let mut level = vec![self.root];
        while !level.is_empty() {
            report.depth += 1;
            let mut below = Vec::new();
            for &id in &level {
                let pinned = self.pool().fetch(id)?;
                let page = pinned.read();
                report.pages += 1;
                if page.level() == 0 {
                    report.rows += page.slot_count() as u64;
                } else {
                    for s in 0..page.slot_count() {
                        below.push(internal_entry(page.get(s)?)?.0);
                    }
                }
            }
            level = below;
        }
        Ok(report)
    }

    /// Checks the tree's invariants (see the module docs) and counts it.
    pub fn check(&self) -> Result<TreeCheck> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let mut report = TreeCheck::default();
        let mut leaves = Vec::new();
        let root_level = {
            let pinned = self.pool().fetch(self.root)?;
            let level = pinned.read().level();
            level
        };
        report.depth = root_level + 1;
        self.check_page(self.root, root_level, None, None, &mut report, &mut leaves)?;
        // Invariant 4: the chain links the leaves in order, both ways.
        for (i, &id) in leaves.iter().enumerate() {
            let pinned = self.pool().fetch(id)?;
            let page = pinned.read();
            let want_prev = i.checked_sub(1).map(|j| leaves[j]);
            let want_next = leaves.get(i + 1).copied();
            if page.prev_page() != want_prev || page.next_page() != want_next {
                return Err(corrupt(
                    id,
                    format!(
                        "leaf links {:?}/{:?}, expected {want_prev:?}/{want_next:?}",
                        page.prev_page(),
                        page.next_page()
                    ),
                ));
            }
        }
        Ok(report)
    }

    fn check_page(
        &self,
        id: PageId,
        level: u16,
        low: Option<&[u8]>,
        high: Option<&[u8]>,
        report: &mut TreeCheck,
        leaves: &mut Vec<PageId>,
    ) -> Result<()> {
        let pinned = self.pool().fetch(id)?;
        let page = pinned.read().clone();
        drop(pinned);
        page.check()?;
        report.pages += 1;
        if page.level() != level {
            return Err(corrupt(id, format!("level {} where {level} was expected", page.level())));
        }
        if id != self.root && level > 0 && page.slot_count() == 0 {
            return Err(corrupt(id, "empty internal page"));
        }
        let in_range = |k: &[u8]| low.is_none_or(|l| k >= l) && high.is_none_or(|h| k < h);
        if level == 0 {
            if page.page_type() != Some(PageType::BTreeLeaf) {
                return Err(corrupt(id, "level 0 page is not a leaf"));
            }
            let mut last: Option<Vec<u8>> = None;
            for s in 0..page.slot_count() {
                let key = leaf_key(page.get(s)?)?;
                if last.as_deref().is_some_and(|l| l >= key) || !in_range(key) {
                    return Err(corrupt(id, format!("key in slot {s} out of order or range")));
                }
                last = Some(key.to_vec());
            }
            report.rows += page.slot_count() as u64;
            leaves.push(id);
            return Ok(());
        }
        if page.page_type() != Some(PageType::BTreeInternal) {
            return Err(corrupt(id, "page above level 0 is not internal"));
        }
        let n = page.slot_count();
        let mut entries = Vec::with_capacity(n);
        for s in 0..n {
            let (child, key) = internal_entry(page.get(s)?)?;
            entries.push((child, key.to_vec()));
        }
        for s in 0..n {
            if s >= 1 {
                let key = &entries[s].1;
                if (s >= 2 && entries[s - 1].1 >= *key) || !in_range(key) {
                    return Err(corrupt(
                        id,
                        format!("separator in slot {s} out of order or range"),
                    ));
                }
            }
            let child_low = if s == 0 { low } else { Some(entries[s].1.as_slice()) };
            let child_high = entries.get(s + 1).map(|e| e.1.as_slice()).or(high);
            self.check_page(entries[s].0, level - 1, child_low, child_high, report, leaves)?;
        }
        Ok(())
    }
}

/// A forward cursor over a key range. It holds no latch between calls; each refill copies the
/// rest of one leaf and remembers the last key returned.
#[derive(Debug)]
pub struct Cursor<'t> {
    tree: &'t BTree<'t>,
    next: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    buffered: Vec<Entry>,
    pos: usize,
    done: bool,
}

impl Cursor<'_> {
    /// The next entry, or `None` at the end of the range.
    pub fn next_entry(&mut self) -> Result<Option<Entry>> {
        loop {
            if self.pos < self.buffered.len() {
                let (k, v) = std::mem::take(&mut self.buffered[self.pos]);
                self.pos += 1;
                let beyond = match &self.upper {
                    Bound::Unbounded => false,
                    Bound::Included(u) => k > *u,
                    Bound::Excluded(u) => k >= *u,
                };
                if beyond {
                    self.done = true;
                    self.buffered.clear();
                    return Ok(None);
                }
                // Only a refill reads `next`, and only once the batch is used up: copy just
                // the batch's last key, not every key returned.
                if self.pos == self.buffered.len() {
                    self.next = Bound::Excluded(k.clone());
                }
                return Ok(Some((k, v)));
            }
            if self.done {
                return Ok(None);
            }
            let (entries, last) = self.tree.fetch_batch(&self.next)?;
            self.done = last || entries.is_empty();
            self.buffered = entries;
            self.pos = 0;
            if self.buffered.is_empty() {
                return Ok(None);
            }
        }
    }
}

impl Iterator for Cursor<'_> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_entry().transpose()
    }
}
