//! Structure changes and row-change logging: the allocator's record on [`ALLOC_PAGE`], the
//! working set of pages a split, merge, allocation or release touches (`Smo`), and the leaf
//! record a row change builds once for both its page and its log op. An `Smo` changes only
//! its working copies until it commits; then it logs every page op it made as one record and
//! only after that installs the pages, so recovery sees all of a structure change or none.

use super::{Change, ChangeKind, Result, TreeError, TreeLog, ALLOC_PAGE};
use crate::buffer::BufferPool;
use crate::page::{Lsn, Page, PageId, PageType};
use crate::redo::{record_op_header, PageOp, RECORD_OP_HEADER};

/// The allocator's record on [`ALLOC_PAGE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AllocState {
    /// The first page never handed out.
    pub(super) next_unused: PageId,
    /// The most recently freed page, or 0 for none.
    pub(super) free_head: PageId,
    /// Pages on the free list.
    pub(super) free_count: u32,
}

impl AllocState {
    pub(super) fn encode(&self) -> [u8; 12] {
        let mut b = [0; 12];
        b[0..4].copy_from_slice(&self.next_unused.to_le_bytes());
        b[4..8].copy_from_slice(&self.free_head.to_le_bytes());
        b[8..12].copy_from_slice(&self.free_count.to_le_bytes());
        b
    }

    pub(super) fn decode(page: &Page) -> Result<AllocState> {
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
pub(super) struct Smo<'p> {
    pool: &'p BufferPool,
    pub(super) pages: Vec<Page>,
    lsn_before: Vec<Lsn>,
    /// Per page: its encoded ops, in application order (an image replaces earlier ops).
    ops: Vec<Vec<u8>>,
    /// Per page: whether it is newly formatted (its old contents are irrelevant).
    fresh: Vec<bool>,
}

impl<'p> Smo<'p> {
    pub(super) fn new(pool: &'p BufferPool) -> Smo<'p> {
        Smo { pool, pages: Vec::new(), lsn_before: Vec::new(), ops: Vec::new(), fresh: Vec::new() }
    }

    /// The working copy of page `id`, read from the pool the first time.
    pub(super) fn page(&mut self, id: PageId) -> Result<usize> {
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
    pub(super) fn fresh(&mut self, id: PageId, page: Page) -> usize {
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
    pub(super) fn apply(&mut self, i: usize, op: PageOp<'_>) -> Result<()> {
        op.apply(&mut self.pages[i])?;
        op.encode(&mut self.ops[i]);
        Ok(())
    }

    /// Records that working copy `i` was rebuilt wholesale.
    pub(super) fn image(&mut self, i: usize) {
        self.ops[i].clear();
        PageOp::image_of(&self.pages[i]).encode(&mut self.ops[i]);
    }

    pub(super) fn alloc(&mut self) -> Result<PageId> {
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

    pub(super) fn free(&mut self, id: PageId) -> Result<()> {
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
    pub(super) fn commit(self, log: &mut dyn TreeLog) -> Result<()> {
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
pub(super) fn log_row(
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
pub(super) struct RowRecord(Vec<u8>);

impl RowRecord {
    pub(super) fn new(key: &[u8], value: &[u8]) -> RowRecord {
        let mut buf = Vec::with_capacity(RECORD_OP_HEADER + 2 + key.len() + value.len());
        buf.extend_from_slice(&[0; RECORD_OP_HEADER]);
        buf.extend_from_slice(&(key.len() as u16).to_le_bytes());
        buf.extend_from_slice(key);
        buf.extend_from_slice(value);
        RowRecord(buf)
    }

    pub(super) fn record(&self) -> &[u8] {
        &self.0[RECORD_OP_HEADER..]
    }

    /// The encoding of the insert (or, if not `insert`, the update) of the record as `slot`.
    pub(super) fn op_encoding(&mut self, insert: bool, slot: u16) -> &[u8] {
        let header = record_op_header(insert, slot, self.0.len() - RECORD_OP_HEADER);
        self.0[..RECORD_OP_HEADER].copy_from_slice(&header);
        &self.0
    }
}
