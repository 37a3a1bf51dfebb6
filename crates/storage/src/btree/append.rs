//! Appending a run of ascending keys to the end of a tree: the bulk load's path
//! ([`BTree::append_run`]). Where an insert fetches, latches and logs the rightmost leaf once
//! per key, a run fills the leaf with as many entries as fit under one fetch and one latch,
//! and logs them as one row change of several insert ops (the engine writes it as one
//! record, with every key for its undo: `docs/format/engine-log.md`, kind 6). A full leaf is
//! split as an ascending insert splits it: a new, empty rightmost leaf, nothing moved.

use std::sync::PoisonError;

use super::smo::log_row;
use super::{leaf_key, BTree, Result, TreeError, MAX_KEY_LEN, MAX_VALUE_LEN};
use crate::page::{PageType, PAGE_SIZE};
use crate::redo::PageOp;

/// Entries waiting to be appended, each kept as the leaf record it becomes
/// (`u16 key_len, key, value`), back to back in one buffer that a load refills.
#[derive(Debug, Default)]
pub struct AppendRun {
    bytes: Vec<u8>,
    /// Per entry: where its record starts and ends in `bytes`.
    ends: Vec<(usize, usize)>,
}

impl AppendRun {
    /// An empty run.
    pub fn new() -> AppendRun {
        AppendRun::default()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Bytes of records held.
    pub fn bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Removes every entry, keeping the room they took.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Appends an entry; its key must sort after the previous entry's (checked when the run
    /// is appended). [`TreeError::TooLarge`] for a key or value a tree refuses.
    pub fn push(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if key.len() > MAX_KEY_LEN || value.len() > MAX_VALUE_LEN {
            return Err(TreeError::TooLarge { key: key.len(), value: value.len() });
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(&(key.len() as u16).to_le_bytes());
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        self.ends.push((start, self.bytes.len()));
        Ok(())
    }

    /// Entry `i`'s leaf record.
    ///
    /// # Panics
    ///
    /// If `i` is not below [`AppendRun::len`].
    pub fn record(&self, i: usize) -> &[u8] {
        let (start, end) = self.ends[i];
        &self.bytes[start..end]
    }

    /// Entry `i`'s key.
    ///
    /// # Panics
    ///
    /// If `i` is not below [`AppendRun::len`].
    pub fn key(&self, i: usize) -> &[u8] {
        let record = self.record(i);
        let n = usize::from(u16::from_le_bytes([record[0], record[1]]));
        &record[2..2 + n]
    }
}

impl BTree<'_> {
    /// Appends entries `from..` of `run` to the rightmost leaf, as many as it holds, and
    /// returns how many (at least one unless it returns 0), logged as one row change whose
    /// ops are their inserts. A full leaf is split first (a structure change of its own).
    ///
    /// Returns 0, changing nothing, when entry `from` is not known to sort after every key in
    /// the tree (the rightmost leaf's last key is not below it, or the leaf the key belongs
    /// to is not the rightmost): the caller inserts that entry the ordinary way, which finds
    /// a duplicate. Entries after `from` are taken only while their keys ascend, so a run
    /// that does not ascend stops where it stops ascending and never hides a duplicate.
    pub fn append_run(
        &self,
        log: &mut dyn super::TreeLog,
        run: &AppendRun,
        from: usize,
    ) -> Result<usize> {
        if from >= run.len() {
            return Ok(0);
        }
        let mut state = self.latch.write().unwrap_or_else(PoisonError::into_inner);
        let first = run.key(from);
        // A split leaves a new empty leaf, which the second pass fills.
        for _ in 0..2 {
            let path = self.descend(first)?;
            {
                let pinned = &path.leaf;
                let mut page = pinned.write();
                if page.page_type() != Some(PageType::BTreeLeaf) || page.next_page().is_some() {
                    return Ok(0);
                }
                let n = page.slot_count();
                // An empty rightmost leaf covers every key from its separator up, and the
                // descent put `first` in its range: no other leaf can hold it.
                if n > 0 && leaf_key(page.get(n - 1)?)? >= first {
                    return Ok(0);
                }
                let lsn_before = page.page_lsn();
                // The ops of one leaf's records are at most a page of bytes plus an op header
                // per record: sized once, the buffer is not regrown record by record (each
                // regrowth of a buffer this size took fresh, zeroed pages from the kernel).
                let mut ops = Vec::with_capacity(2 * PAGE_SIZE);
                let mut taken = 0;
                let mut previous: Option<&[u8]> = None;
                for i in from..run.len() {
                    let key = run.key(i);
                    if previous.is_some_and(|p| p >= key) {
                        break;
                    }
                    let record = run.record(i);
                    if !page.fits(record.len()) {
                        break;
                    }
                    let op = PageOp::Insert { slot: (n + taken) as u16, record };
                    op.apply(&mut page)?;
                    op.encode(&mut ops);
                    previous = Some(key);
                    taken += 1;
                }
                if taken > 0 {
                    state.changes += taken as u64;
                    let lsn = log_row(log, &page, &ops, lsn_before, None)?;
                    page.mark_dirty(lsn);
                    (state.leaf, state.lsn) = (pinned.id(), lsn);
                    return Ok(taken);
                }
                if n == 0 {
                    return Err(super::corrupt(
                        pinned.id(),
                        "an empty leaf without room for a record",
                    ));
                }
            }
            self.split_leaf(log, path, first, run.record(from).len())?;
        }
        Err(super::corrupt(self.root, "an append split without making room"))
    }
}
