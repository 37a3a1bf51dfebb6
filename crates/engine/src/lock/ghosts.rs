//! Keys that a transaction not yet over has deleted: what lets a reader wait for an
//! uncommitted delete, as SQL Server's readers wait on its ghost records (`docs/locking.md`,
//! "Uncommitted deletes").
//!
//! A delete takes the key out of its tree at once, so a reader that copies the range after it
//! does not find the key, and would miss a row that is still committed: if the deleter rolls
//! back, the row was never gone. SQL Server leaves a ghost record in the page, which the
//! reader finds and locks. Walden keeps the ghost beside the tree instead, in [`Ghosts`]:
//!
//! **The deleter's rule.** Before it takes a key out of a tree, a transaction notes the key
//! here with the row id it belongs to (`Transaction::note_ghost`), while it holds the X lock
//! on that row; it takes the note away only when it is over (committed, or rolled back with
//! the key put back), before it gives back its locks. A transaction that holds its table in
//! X notes nothing: a reader waits for that lock on the table first.
//!
//! **The reader's check.** A READ COMMITTED or SERIALIZABLE reader that meets writers in the
//! tree (its copy of a batch is not known to be committed) asks, before it gives out an entry,
//! for a ghost between the last entry it gave out and this one (and at the end of its range,
//! up to the range's end): it reads that key as if it had copied it, under its row's lock,
//! which waits for the deleter, and then finds the row there again (a rollback) or not. The
//! note is made before the key leaves the tree and the check is made after the copy, so a key
//! the copy missed because it was deleted is noted by then; a note taken away before the check
//! means the deleter is over, and a rollback that put the key back changed the tree, which the
//! reader looks at again (`Entries::ghost_before`).
//!
//! The notes are few: at most a transaction's key locks on each table before it escalates.
//! With no note anywhere a reader's check is one atomic load.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use walden_storage::PageId;

use super::OwnerId;

/// A key deleted by a transaction not yet over.
#[derive(Debug, Clone)]
struct Ghost {
    /// The row the key belonged to: the one whose lock the deleter holds.
    row_id: Vec<u8>,
    owner: OwnerId,
}

/// Each tree's (database, root page) noted keys, in key order.
type Trees = HashMap<(u32, PageId), BTreeMap<Vec<u8>, Ghost>>;

/// The uncommitted deletes of every tree of an instance.
#[derive(Debug, Default)]
pub struct Ghosts {
    /// How many notes there are: a reader with nothing to look for takes no mutex.
    live: AtomicUsize,
    trees: Mutex<Trees>,
}

impl Ghosts {
    pub fn new() -> Ghosts {
        Ghosts::default()
    }

    fn trees(&self) -> std::sync::MutexGuard<'_, Trees> {
        // The map holds no invariant a panicking thread could break half-way.
        self.trees.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes that `owner` is deleting `key` (of row `row_id`) from tree `root` of `db`.
    pub fn add(&self, db: u32, root: PageId, key: &[u8], row_id: &[u8], owner: OwnerId) {
        let ghost = Ghost { row_id: row_id.to_vec(), owner };
        let mut trees = self.trees();
        if trees.entry((db, root)).or_default().insert(key.to_vec(), ghost).is_none() {
            self.live.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Takes away `owner`'s note of `key` in tree `root` of `db`, if there is one.
    pub fn remove(&self, db: u32, root: PageId, key: &[u8], owner: OwnerId) {
        let mut trees = self.trees();
        let Some(tree) = trees.get_mut(&(db, root)) else { return };
        if tree.get(key).is_some_and(|g| g.owner == owner) {
            tree.remove(key);
            self.live.fetch_sub(1, Ordering::SeqCst);
            if tree.is_empty() {
                trees.remove(&(db, root));
            }
        }
    }

    /// The first key (and its row id) in `lower..upper` of tree `root` of `db` that a
    /// transaction other than `reader` has deleted and not yet committed.
    pub fn first_between(
        &self,
        db: u32,
        root: PageId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        reader: OwnerId,
    ) -> Option<(Vec<u8>, Vec<u8>)> {
        if self.live.load(Ordering::SeqCst) == 0 {
            return None;
        }
        if let (Bound::Included(l) | Bound::Excluded(l), Bound::Included(u) | Bound::Excluded(u)) =
            (lower, upper)
        {
            // An empty stretch (BTreeMap::range refuses a reversed one).
            if l > u
                || (l == u && !matches!((lower, upper), (Bound::Included(_), Bound::Included(_))))
            {
                return None;
            }
        }
        let trees = self.trees();
        let tree = trees.get(&(db, root))?;
        tree.range::<[u8], _>((lower, upper))
            .find(|(_, g)| g.owner != reader)
            .map(|(k, g)| (k.clone(), g.row_id.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_finds_the_first_ghost_of_another_owner_in_its_stretch() {
        let ghosts = Ghosts::new();
        let none = |g: &Ghosts| g.first_between(1, 7, Bound::Unbounded, Bound::Unbounded, 9);
        assert_eq!(none(&ghosts), None);
        ghosts.add(1, 7, b"b", b"rb", 5);
        ghosts.add(1, 7, b"d", b"rd", 9);
        ghosts.add(1, 8, b"a", b"ra", 5);
        let found = ghosts.first_between(1, 7, Bound::Excluded(b"a"), Bound::Excluded(b"z"), 9);
        assert_eq!(found, Some((b"b".to_vec(), b"rb".to_vec())));
        // The reader's own delete is no ghost to it; a stretch past the key finds nothing.
        assert_eq!(ghosts.first_between(1, 7, Bound::Excluded(b"b"), Bound::Unbounded, 9), None);
        assert_eq!(
            ghosts.first_between(1, 7, Bound::Excluded(b"c"), Bound::Excluded(b"a"), 1),
            None
        );
        assert_eq!(
            ghosts.first_between(1, 7, Bound::Excluded(b"b"), Bound::Excluded(b"b"), 1),
            None
        );
        ghosts.remove(1, 7, b"b", 6);
        assert!(none(&ghosts).is_some(), "only its owner takes a note away");
        ghosts.remove(1, 7, b"b", 5);
        ghosts.remove(1, 7, b"d", 9);
        ghosts.remove(1, 8, b"a", 5);
        assert_eq!(ghosts.live.load(Ordering::SeqCst), 0);
        assert!(ghosts.trees().is_empty());
    }
}
