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

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::buffer::{BufferError, BufferPool, PinnedPage};
use crate::hash::PageMap;
use crate::page::{Lsn, Page, PageError, PageId, PageType};
use node::{
    corrupt, internal_entry, leaf_key, leaf_split, search_internal, search_leaf, Found, Path,
};
use smo::{AllocState, Smo};

mod append;
mod check;
mod cursor;
mod delete;
mod insert;
mod node;
mod sample;
mod smo;

pub use append::AppendRun;
pub use check::TreeCheck;
pub use cursor::{Cursor, EntryBatch, LeafHint};
pub use sample::LeafSample;

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
    /// The changes: encoded [`PageOp`](crate::redo::PageOp)s, to be applied in order.
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

/// Where a descent toward `key` goes from page `id`: None at a leaf, else the slot of the
/// internal page's entry taken and its child.
fn child_toward(page: &Page, id: PageId, key: &[u8]) -> Result<Option<(usize, PageId)>> {
    match page.page_type() {
        Some(PageType::BTreeLeaf) => Ok(None),
        Some(PageType::BTreeInternal) => {
            if page.slot_count() == 0 {
                return Err(corrupt(id, "empty internal page"));
            }
            let slot = search_internal(page, key)?;
            Ok(Some((slot, internal_entry(page.get(slot)?)?.0)))
        }
        other => Err(corrupt(id, format!("{other:?} page in a B-tree"))),
    }
}

/// A key and its value, copied out of a leaf.
pub type Entry = (Vec<u8>, Vec<u8>);

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
            let next = child_toward(&pinned.read(), id, key)?;
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
        self.get_with(key, <[u8]>::to_vec)
    }

    /// What `read` makes of the value stored under `key`, read where it lies in its leaf
    /// (a point lookup that decodes the value need not copy it out first). `read` runs
    /// under the tree's shared latch with the leaf pinned and latched for reading: it must
    /// not touch the tree or fix other pages.
    pub fn get_with<R>(&self, key: &[u8], read: impl FnOnce(&[u8]) -> R) -> Result<Option<R>> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        // `descend_recording`'s walk, except that the leaf is searched under the latch that
        // found it to be the leaf: one latch per page rather than two for the leaf.
        let mut depth = 0;
        let mut pinned = self.pool().fetch(self.root)?;
        loop {
            let id = pinned.id();
            let child = {
                let page = pinned.read();
                match child_toward(&page, id, key)? {
                    Some((_, child)) => child,
                    None => {
                        return match search_leaf(&page, key)? {
                            Found::At(slot) => Ok(Some(read(leaf_split(page.get(slot)?)?.1))),
                            Found::Before(_) => Ok(None),
                        };
                    }
                }
            };
            depth += 1;
            if depth > 64 {
                return Err(corrupt(id, "tree deeper than 64 levels: a cycle"));
            }
            pinned = pinned.step_to(child)?;
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
}
