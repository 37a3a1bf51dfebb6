//! Deletes, and the structure changes they cause: a leaf left empty is unlinked from the leaf
//! chain and released, and one left underfull absorbs its right sibling under the same parent
//! when both fit in one page (so no separator above the parent changes). A released page's
//! entry leaves its parent, which is released in turn when that empties it; the root is never
//! released (emptied, it becomes an empty leaf).

use std::sync::PoisonError;

use super::node::{internal_entry, leaf_split, search_leaf, Found, Path};
use super::smo::{log_row, Smo};
use super::{BTree, Result, TreeLog};
use crate::page::{Page, PageId, PageType, PAGE_SIZE};
use crate::redo::PageOp;

impl BTree<'_> {
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
}
