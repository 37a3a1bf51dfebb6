//! Reading ranges of entries: the forward [`Cursor`], which holds no latch between calls and
//! re-descends from the last key it returned, and [`BTree::copy_range`], which copies a batch of
//! entries into a reused [`EntryBatch`] under one hold of the shared latch, optionally starting
//! at the leaf a [`LeafHint`] names when that leaf's page LSN shows it unchanged.

use std::ops::Bound;
use std::sync::PoisonError;

use super::node::{first_slot, leaf_key, leaf_split};
use super::{BTree, Entry, Result};
use crate::buffer::PinnedPage;
use crate::page::{Lsn, PageId, PageType};

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
    pub(super) fn push_record(&mut self, record: &[u8], key_len: usize) {
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

impl BTree<'_> {
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
