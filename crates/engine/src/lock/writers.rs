//! Which trees have changes not yet committed: what lets a READ COMMITTED read skip its row
//! lock (`docs/locking.md`, "Lock avoidance").
//!
//! A READ COMMITTED reader takes S on a row only to wait until the row holds no uncommitted
//! change, and gives it back at once. When it can tell that no other transaction had a
//! change in the tree at any moment while it copied rows out of it, every row it copied was
//! committed, and the lock would have been granted without a wait: it can skip it.
//!
//! [`TreeWriters`] tells it that. Trees are split into [`PARTITIONS`] partitions by a hash of
//! (database, root page); each has one word of two counts: the transactions *in* it now (the
//! low [`ACTIVE_BITS`] bits) and how many have ever entered it (the bits above, wrapping).
//!
//! **The writer's rule.** A transaction enters a tree's partition before its first change of
//! the tree's entries ([`TreeWriters::enter`], from `Transaction::row_change`, through which
//! every change of a tree's entries goes), and leaves only once it is over: after its commit
//! record is appended, or after its rollback has undone every change. So a change that is not
//! committed is in a tree whose partition counts its writer as in it.
//!
//! **The reader's check.** A reader reads the word (`before`), copies entries, and reads the
//! word again (`after`). If `before` counts no transaction in the partition but the reader
//! itself and `after == before`, the copy holds no uncommitted change of another
//! transaction. Why: suppose the copy saw a change of transaction W. W entered before it made
//! that change, and the change was made before the copy read it, so W's entry is in the word's
//! history no later than `after`. Entering adds to the entry count, so an entry after `before`
//! would make `after` differ; so W entered before `before` was read. Then `before`, counting
//! nobody else in, was read after W left; W leaves only when it is over, and everything W did
//! (its commit, or the undo that put the row back) happened before it left, so before the
//! copy: the copy saw W's change committed, or did not see it at all. The atomics are
//! sequentially consistent and the tree's latch orders the change before the copy, so "before"
//! and "after" here are the orders the proof needs. The entry count wraps after 2^40 entries
//! into one partition; a copy that many entries long is not possible.
//!
//! Partitions are shared by trees whose hashes collide: a writer in another tree of the same
//! partition makes a reader take its locks, which costs time, never correctness.

use std::sync::atomic::{AtomicU64, Ordering};

use walden_storage::PageId;

/// Partitions of the trees. A writer touches one word per tree it changes, twice per
/// transaction; a reader reads one per batch of rows or per row it looks up.
pub const PARTITIONS: usize = 1024;

/// Bits of a partition's word that count the transactions in it now.
const ACTIVE_BITS: u32 = 24;
const ACTIVE_MASK: u64 = (1 << ACTIVE_BITS) - 1;
/// What entering adds: one more in, one more entry.
const ENTER: u64 = (1 << ACTIVE_BITS) | 1;

/// A partition's word on a cache line of its own, so that writers of different trees do
/// not take each other's line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Partition(AtomicU64);

/// The transactions with changes in each partition of the trees of one instance.
#[derive(Debug)]
pub struct TreeWriters {
    partitions: Box<[Partition]>,
}

impl Default for TreeWriters {
    fn default() -> Self {
        TreeWriters::new()
    }
}

/// What a reader read of a partition before it copied: compare with
/// [`TreeWriters::unchanged`] after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WritersSeen(u64);

impl TreeWriters {
    pub fn new() -> TreeWriters {
        TreeWriters { partitions: (0..PARTITIONS).map(|_| Partition::default()).collect() }
    }

    /// The partition of the tree with root `root` in database `db`.
    pub fn partition(db: u32, root: PageId) -> u16 {
        let h = (u64::from(db) << 32 | u64::from(root)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The top bits of a multiplicative hash are its best mixed.
        (h >> (64 - PARTITIONS.trailing_zeros())) as u16
    }

    fn word(&self, partition: u16) -> &AtomicU64 {
        &self.partitions[usize::from(partition) % PARTITIONS].0
    }

    /// Counts a transaction in `partition`: before its first change of a tree there.
    pub fn enter(&self, partition: u16) {
        self.word(partition).fetch_add(ENTER, Ordering::SeqCst);
    }

    /// Counts a transaction that entered `partition` out again: once it is over.
    pub fn leave(&self, partition: u16) {
        self.word(partition).fetch_sub(1, Ordering::SeqCst);
    }

    /// Reads `partition` before a copy of entries from one of its trees: `None` if a
    /// transaction other than the reader is in it (`own`: the reader itself entered it),
    /// so that the copy may hold a change that is not committed.
    pub fn quiet(&self, partition: u16, own: bool) -> Option<WritersSeen> {
        let word = self.word(partition).load(Ordering::SeqCst);
        (word & ACTIVE_MASK == u64::from(own)).then_some(WritersSeen(word))
    }

    /// Whether nobody entered `partition` since `seen` was read by [`TreeWriters::quiet`]:
    /// then what was copied in between holds no change of another transaction that is not
    /// committed.
    pub fn unchanged(&self, partition: u16, seen: WritersSeen) -> bool {
        self.word(partition).load(Ordering::SeqCst) == seen.0
    }
}

#[cfg(test)]
mod tests {
    use super::{TreeWriters, PARTITIONS};

    #[test]
    fn a_reader_sees_a_writer_that_is_in_or_came_and_went() {
        let w = TreeWriters::new();
        let p = TreeWriters::partition(5, 42);
        let seen = w.quiet(p, false).unwrap();
        assert!(w.unchanged(p, seen));
        // One that came and went during the copy.
        w.enter(p);
        w.leave(p);
        assert!(!w.unchanged(p, seen));
        // One that is in.
        w.enter(p);
        assert!(w.quiet(p, false).is_none());
        // The reader itself is the one in.
        let seen = w.quiet(p, true).unwrap();
        assert!(w.unchanged(p, seen));
        w.enter(p);
        assert!(w.quiet(p, true).is_none());
        w.leave(p);
        w.leave(p);
        assert!(w.quiet(p, false).is_some());
    }

    #[test]
    fn partitions_spread_roots() {
        let used: std::collections::HashSet<u16> =
            (0..4096).map(|root| TreeWriters::partition(7, root)).collect();
        assert!(used.iter().all(|&p| usize::from(p) < PARTITIONS));
        assert!(used.len() > PARTITIONS / 2, "{} partitions used", used.len());
    }
}
