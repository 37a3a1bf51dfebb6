//! Page reads counted per thread, for `SET STATISTICS IO ON`.
//!
//! A statement runs on one thread from start to end, so what this thread's counters gained
//! while a statement read one table is what that read cost: *logical* reads are pages the
//! buffer pool was asked for, *physical* reads those it had to read from the file first.
//! Counting per thread costs an uncontended increment and needs no lock, and other sessions'
//! reads, or the background writer's, are never mixed in.

use std::cell::Cell;

/// A thread's page reads so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageReads {
    pub logical: u64,
    pub physical: u64,
}

impl PageReads {
    /// The reads made between `earlier` and `self`.
    pub fn since(self, earlier: PageReads) -> PageReads {
        PageReads {
            logical: self.logical.wrapping_sub(earlier.logical),
            physical: self.physical.wrapping_sub(earlier.physical),
        }
    }
}

thread_local! {
    static READS: Cell<PageReads> = const { Cell::new(PageReads { logical: 0, physical: 0 }) };
}

/// This thread's page reads so far.
pub fn page_reads() -> PageReads {
    READS.with(Cell::get)
}

pub(crate) fn count_logical_read() {
    READS.with(|r| {
        let mut v = r.get();
        v.logical = v.logical.wrapping_add(1);
        r.set(v);
    });
}

pub(crate) fn count_physical_read() {
    READS.with(|r| {
        let mut v = r.get();
        v.physical = v.physical.wrapping_add(1);
        r.set(v);
    });
}
