//! Inserts and updates, and the leaf splits they cause. A full leaf splits into two; an insert
//! past the last key of the rightmost leaf starts a new, empty leaf instead, so ascending
//! inserts leave full pages behind. The new separator goes up into the parent, splitting it in
//! turn, and a root that splits raises the tree a level without moving (its contents go to a
//! new child). Each split is one structure-change record, made under the allocator mutex.

use std::sync::PoisonError;

use super::node::{
    corrupt, internal_entry, internal_record, leaf_key, leaf_split, search_leaf, Found, Path,
};
use super::smo::{log_row, RowRecord, Smo};
use super::{BTree, Result, TreeError, TreeLog, TreeState, MAX_KEY_LEN, MAX_VALUE_LEN};
use crate::page::{Page, PageId, PageType};
use crate::redo::PageOp;
use crate::slotted::SLOT_SIZE;

impl BTree<'_> {
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

    /// Splits the leaf of `path` so that a record of `len` bytes for `key` fits.
    pub(super) fn split_leaf(
        &self,
        log: &mut dyn TreeLog,
        path: Path,
        key: &[u8],
        len: usize,
    ) -> Result<()> {
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
}
