//! Reading a sample of a tree's leaves ([`BTree::copy_leaf_sample`]): what a statistics
//! build reads when it samples a table by pages, as SQL Server's default sampling does,
//! instead of reading every row.

use std::ops::Bound;
use std::sync::PoisonError;

use super::node::{corrupt, first_slot, leaf_key};
use super::{BTree, EntryBatch, Result};
use crate::page::PageType;

/// What one call of [`BTree::copy_leaf_sample`] passed over.
#[derive(Debug, Default)]
pub struct LeafSample {
    /// Entries of the leaves visited, copied or not.
    pub entries: u64,
    /// Leaves visited that hold entries after the starting key.
    pub leaves: u64,
    /// The last key of the last leaf visited, for the next call to start after; None once
    /// the leaf chain has ended.
    pub resume: Option<Vec<u8>>,
}

impl BTree<'_> {
    /// Visits up to `max_leaves` leaves in key order, from the one holding the first key
    /// after `after` (the first leaf without it), and appends to `batch` the entries after
    /// `after` of each leaf `pick` chooses; a leaf not chosen costs a page pin and its
    /// header. All under one hold of the shared latch, so writers wait for at most
    /// `max_leaves` leaves; between calls the tree may change, and a leaf split since may be
    /// offered to `pick` again in part, which a sample can bear.
    pub fn copy_leaf_sample(
        &self,
        after: Option<&[u8]>,
        max_leaves: usize,
        pick: &mut dyn FnMut() -> bool,
        batch: &mut EntryBatch,
    ) -> Result<LeafSample> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let from = match after {
            Some(k) => Bound::Excluded(k.to_vec()),
            None => Bound::Unbounded,
        };
        let mut pinned = self.descend_recording(after.unwrap_or(&[]), |_, _| {})?;
        let mut first_leaf = true;
        let mut seen = LeafSample::default();
        loop {
            let next = {
                let page = pinned.read();
                if page.page_type() != Some(PageType::BTreeLeaf) {
                    return Err(corrupt(pinned.id(), "leaf chain left the leaves"));
                }
                // Only the first leaf holds keys at or below `after`; a leaf with no entry
                // past it is passed over uncounted, so every leaf counted moves `resume` on.
                let first = if first_leaf { first_slot(&page, &from)? } else { 0 };
                let n = page.slot_count();
                if first < n {
                    seen.leaves += 1;
                    seen.entries += (n - first) as u64;
                    if pick() {
                        for s in first..n {
                            let record = page.get(s)?;
                            batch.push_record(record, leaf_key(record)?.len());
                        }
                    }
                    seen.resume = Some(leaf_key(page.get(n - 1)?)?.to_vec());
                }
                page.next_page()
            };
            match next {
                None => {
                    seen.resume = None;
                    return Ok(seen);
                }
                Some(_) if seen.leaves as usize >= max_leaves.max(1) => return Ok(seen),
                Some(next) => {
                    pinned = self.pool().fetch(next)?;
                    first_leaf = false;
                }
            }
        }
    }
}
