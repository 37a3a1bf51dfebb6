//! ORDER BY beyond the memory grant: an external merge sort.
//!
//! Rows come in with their sort keys and are held until the grant refuses more; then the
//! rows held are sorted (stably, by [`compare_keys`], exactly as the in-memory sort does) and
//! written as one *run* to a spill file, and the grant's bytes are given back. At the end the
//! runs are merged: a heap holds each run's next row, and a tie between runs goes to the
//! earlier run, which holds the earlier input, so the merge is as stable as one sort of every
//! row would be. More runs than [`MAX_FAN_IN`] are first merged in consecutive groups into
//! longer runs (consecutive, so the earlier-run rule still holds), so that the readers'
//! buffers and descriptors stay bounded.
//!
//! A sort that never passes its grant writes nothing and sorts in memory, as before.

use std::cmp::Ordering;
use std::collections::HashSet;

use walden_engine::types::Value;

use crate::exec::execute::grant::{row_bytes, MemoryGrant};
use crate::exec::execute::query::{compare_keys, group_key, sort_by_keys};
use crate::exec::execute::spill::{Keyed, SpillReader, SpillWriter};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The most runs merged at once.
const MAX_FAN_IN: usize = 64;

/// A sort that spills sorted runs when its grant is used up.
pub(crate) struct ExternalSort {
    desc: Vec<bool>,
    /// Only the first of each set of equal rows (DISTINCT) is wanted.
    distinct: bool,
    grant: MemoryGrant,
    held: Vec<Keyed>,
    /// Bytes `held` takes, as reserved from the grant.
    held_bytes: usize,
    runs: Vec<SpillReader>,
}

impl ExternalSort {
    /// A sort by keys compared with `desc` (descending for true), drawing on `grant`; with
    /// `distinct`, of the first of each set of equal rows only.
    pub(crate) fn new(grant: MemoryGrant, desc: &[bool], distinct: bool) -> ExternalSort {
        ExternalSort {
            desc: desc.to_vec(),
            distinct,
            grant,
            held: Vec::new(),
            held_bytes: 0,
            runs: Vec::new(),
        }
    }

    /// Adds a row with its sort keys, spilling what is held first if the grant has no room.
    pub(crate) fn push(
        &mut self,
        run: &Run<'_>,
        keys: Vec<Value>,
        row: Vec<Value>,
    ) -> Result<(), SqlError> {
        let bytes = row_bytes(&keys) + row_bytes(&row);
        if !self.grant.try_reserve(bytes) {
            if !self.held.is_empty() {
                self.spill_run(run)?;
            }
            // A single row larger than the whole grant is held all the same: it is written
            // out with the next run.
            if !self.grant.try_reserve(bytes) {
                self.grant.hold(bytes)?;
            }
        }
        self.held_bytes += bytes;
        self.held.push((keys, row));
        Ok(())
    }

    /// Sorts what is held and writes it as a run.
    fn spill_run(&mut self, run: &Run<'_>) -> Result<(), SqlError> {
        sort_by_keys(&mut self.held, &self.desc)?;
        let mut file = SpillWriter::create(self.grant.memory())?;
        for (i, (keys, row)) in self.held.drain(..).enumerate() {
            run.row_interruption_point(i)?;
            file.write_pair(&keys, &row)?;
        }
        self.runs.push(file.finish()?);
        self.grant.release(self.held_bytes);
        self.held_bytes = 0;
        Ok(())
    }

    /// Every row in order, through `each` (key and row); stops at the first error.
    ///
    /// DISTINCT in memory keeps the first of equal rows in input order and then sorts, as
    /// it always did. Spilled, it keeps the first of equal rows within each stretch of equal
    /// sort keys of the merged output: rows equal in their select list have equal keys
    /// (ORDER BY of a DISTINCT query names its select list), so they meet within one
    /// stretch, and the first of them there is the first in the input, as the stable sort
    /// and the merge keep them.
    pub(crate) fn finish(
        mut self,
        run: &mut Run<'_>,
        mut each: impl FnMut(&mut Run<'_>, Vec<Value>, Vec<Value>) -> Result<(), SqlError>,
    ) -> Result<(), SqlError> {
        if self.runs.is_empty() {
            if self.distinct {
                let mut seen = HashSet::new();
                self.held.retain(|(_, r)| seen.insert(group_key(r)));
            }
            sort_by_keys(&mut self.held, &self.desc)?;
            for (i, (keys, row)) in std::mem::take(&mut self.held).into_iter().enumerate() {
                run.row_interruption_point(i)?;
                each(run, keys, row)?;
            }
            return Ok(());
        }
        if !self.held.is_empty() {
            self.spill_run(run)?;
        }
        while self.runs.len() > MAX_FAN_IN {
            let mut merged = Vec::with_capacity(self.runs.len().div_ceil(MAX_FAN_IN));
            let mut runs = std::mem::take(&mut self.runs).into_iter().peekable();
            while runs.peek().is_some() {
                let group: Vec<SpillReader> = runs.by_ref().take(MAX_FAN_IN).collect();
                let mut file = SpillWriter::create(self.grant.memory())?;
                merge(run, group, &self.desc, |_, k, r| file.write_pair(&k, &r))?;
                merged.push(file.finish()?);
            }
            self.runs = merged;
        }
        let runs = std::mem::take(&mut self.runs);
        if !self.distinct {
            return merge(run, runs, &self.desc, each);
        }
        let mut stretch: Option<Vec<Value>> = None;
        let mut seen = HashSet::new();
        let desc = &self.desc;
        merge(run, runs, desc, |run, keys, row| {
            let same = match &stretch {
                Some(s) => compare_keys(s, &keys, desc)? == Ordering::Equal,
                None => false,
            };
            if !same {
                seen.clear();
                stretch = Some(keys.clone());
            }
            if seen.insert(group_key(&row)) {
                each(run, keys, row)?;
            }
            Ok(())
        })
    }
}

/// Merges sorted runs into `each`; of equal keys, the earlier run's row comes first.
fn merge(
    run: &mut Run<'_>,
    mut runs: Vec<SpillReader>,
    desc: &[bool],
    mut each: impl FnMut(&mut Run<'_>, Vec<Value>, Vec<Value>) -> Result<(), SqlError>,
) -> Result<(), SqlError> {
    // A binary min-heap of (run index, its next row), by key then run index, kept by hand
    // because the comparison can fail (a conversion error), which `BinaryHeap` cannot say.
    let mut heap: Vec<(usize, Keyed)> = Vec::with_capacity(runs.len());
    for (i, r) in runs.iter_mut().enumerate() {
        if let Some(head) = r.next_pair()? {
            heap.push((i, head));
        }
    }
    let less = |a: &(usize, Keyed), b: &(usize, Keyed)| -> Result<bool, SqlError> {
        Ok(match compare_keys(&a.1 .0, &b.1 .0, desc)? {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => a.0 < b.0,
        })
    };
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, &less)?;
    }
    let mut n = 0usize;
    while !heap.is_empty() {
        run.row_interruption_point(n)?;
        n += 1;
        let from = heap[0].0;
        let (keys, row) = match runs[from].next_pair()? {
            Some(next) => std::mem::replace(&mut heap[0].1, next),
            None => {
                let last = heap.len() - 1;
                heap.swap(0, last);
                heap.pop().map(|(_, kr)| kr).unwrap_or_default()
            }
        };
        sift_down(&mut heap, 0, &less)?;
        each(run, keys, row)?;
    }
    Ok(())
}

fn sift_down<T>(
    heap: &mut [T],
    mut i: usize,
    less: &impl Fn(&T, &T) -> Result<bool, SqlError>,
) -> Result<(), SqlError> {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut least = i;
        if l < heap.len() && less(&heap[l], &heap[least])? {
            least = l;
        }
        if r < heap.len() && less(&heap[r], &heap[least])? {
            least = r;
        }
        if least == i {
            return Ok(());
        }
        heap.swap(i, least);
        i = least;
    }
}

impl Run<'_> {
    /// The rows of `sorter`, in order.
    pub(crate) fn sorted_rows(
        &mut self,
        sorter: ExternalSort,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut out = Vec::new();
        sorter.finish(self, |_, _, row| {
            out.push(row);
            Ok(())
        })?;
        Ok(out)
    }

    /// `TOP (n) WITH TIES`: the first `limit(rows sorted)` rows of the sort, and every
    /// later row whose keys equal the last of them (compared with `desc`, as sorted).
    pub(crate) fn sorted_with_ties(
        &mut self,
        sorter: ExternalSort,
        desc: &[bool],
        limit: impl Fn(usize) -> usize,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut keyed = Vec::new();
        sorter.finish(self, |_, keys, row| {
            keyed.push((keys, row));
            Ok(())
        })?;
        let n = limit(keyed.len()).min(keyed.len());
        let mut end = n;
        if let Some(last) = n.checked_sub(1).map(|i| &keyed[i].0) {
            while end < keyed.len() && compare_keys(&keyed[end].0, last, desc)? == Ordering::Equal {
                end += 1;
            }
        }
        keyed.truncate(end);
        Ok(keyed.into_iter().map(|(_, row)| row).collect())
    }
}
