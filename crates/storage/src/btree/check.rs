//! A tree's consistency check ([`BTree::check`], the module's invariants 1 to 5, walked page
//! by page) and its figures: the exact counts of [`BTree::count`] and the one-descent guess of
//! [`BTree::estimate_entries`]. All read under the shared tree latch and change nothing.

use std::sync::PoisonError;

use super::node::{corrupt, internal_entry, leaf_key};
use super::{BTree, Result};
use crate::page::{PageId, PageType};

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
    /// An estimate of the tree's entries from one descent along its first pages: the product
    /// of the slot counts met on the way down. Reads one page a level, under the shared
    /// latch; exact for a tree of one level, a guess of the right magnitude above.
    pub fn estimate_entries(&self) -> Result<f64> {
        Ok(self.first_slot_counts()?.iter().product())
    }

    /// An estimate of the tree's leaves, as [`BTree::estimate_entries`] estimates its
    /// entries: the product of the slot counts of the internal pages on the first descent.
    pub fn estimate_leaves(&self) -> Result<f64> {
        let counts = self.first_slot_counts()?;
        Ok(counts[..counts.len() - 1].iter().product())
    }

    /// The slot counts of the pages along the descent to the first leaf, root first, that
    /// leaf last.
    fn first_slot_counts(&self) -> Result<Vec<f64>> {
        let _shared = self.latch.read().unwrap_or_else(PoisonError::into_inner);
        let mut counts = Vec::new();
        let mut id = self.root;
        for _ in 0..64 {
            let pinned = self.pool().fetch(id)?;
            let page = pinned.read();
            counts.push(page.slot_count() as f64);
            if page.level() == 0 {
                return Ok(counts);
            }
            if page.slot_count() == 0 {
                return Err(corrupt(id, "empty internal page"));
            }
            // Every child but the last is full-ish; the first one stands for them all.
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
