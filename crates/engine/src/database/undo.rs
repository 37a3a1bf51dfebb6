//! A transaction's undo log: the row changes it may have to undo, newest last, kept in chunks
//! of entries and of key and old-value bytes that grow by doubling, so a small transaction
//! allocates little and a big one never copies what it already logged. An emptied small log
//! is kept per thread for the next transaction; a big one gives its memory back.

use walden_storage::{Lsn, PageId};

use crate::wal::Undo;

/// One row change a transaction may have to undo, as the logger hands it over.
#[derive(Debug, Clone)]
pub(crate) struct RowUndo<'k> {
    /// The row record's LSN (0 in tempdb).
    pub lsn: Lsn,
    /// The tree.
    pub root: PageId,
    /// The key.
    pub key: &'k [u8],
    /// The inverse.
    pub undo: Undo,
}

/// One entry of an [`UndoLog`]; its key and old value are `bytes[chunk][start..]` of the
/// log, key first.
#[derive(Debug, Clone, Copy)]
struct UndoHead {
    lsn: Lsn,
    chunk: u32,
    start: u32,
    root: PageId,
    value_len: u32,
    /// Keys are at most `MAX_KEY_LEN` (900) bytes.
    key_len: u16,
    kind: UndoKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UndoKind {
    Delete,
    Insert,
    Restore,
}

/// What an entry of an [`UndoLog`] undoes, borrowed from the log.
#[derive(Debug, Clone, Copy)]
pub(crate) enum UndoRef<'a> {
    /// Undo an insert: delete the key.
    Delete,
    /// Undo a delete: insert the key with this value.
    Insert(&'a [u8]),
    /// Undo an update: put this value back.
    Restore(&'a [u8]),
}

/// The row changes a transaction may have to undo in one database, oldest first. Keys and
/// old values share one byte buffer instead of a vector each, so a transaction inserting a
/// million rows allocates nothing per row and keeps a third of the memory. The entries are
/// kept in chunks of [`UNDO_CHUNK`], and their bytes in chunks of [`UNDO_BYTES_CHUNK`], so
/// that a large transaction's log grows without copying (and faulting in) all of it again at
/// every doubling.
#[derive(Debug, Clone, Default)]
pub(crate) struct UndoLog {
    /// Entry `i` is `chunks[i / UNDO_CHUNK][i % UNDO_CHUNK]`; every chunk but the last is
    /// full.
    chunks: Vec<Vec<UndoHead>>,
    len: usize,
    /// Every entry's key and old value, in entry order; an entry's bytes are in one chunk.
    /// Every chunk but the last holds at least [`UNDO_BYTES_CHUNK`] bytes of room.
    bytes: Vec<Vec<u8>>,
}

/// Bytes of room a full chunk of an [`UndoLog`]'s keys and values has (1 MiB). The first
/// chunk grows by doubling up to this, so a small transaction allocates little.
const UNDO_BYTES_CHUNK: usize = 1 << 20;

/// Entries per chunk of an [`UndoLog`] (128 KiB of them). The first chunk grows by doubling
/// up to this, so a small transaction allocates little.
const UNDO_CHUNK: usize = 4096;

/// Entries an [`UndoLog`] may have room for and still be kept for reuse (see
/// [`UndoLog::recycle`]): a small transaction's log is kept, a big one's memory given back.
const SPARE_UNDO_ENTRIES: usize = 64;

/// Bytes of keys and old values an [`UndoLog`] may have room for and still be kept for reuse.
const SPARE_UNDO_BYTES: usize = 16 << 10;

thread_local! {
    /// An emptied undo log that each thread keeps for the next transaction it starts, so that
    /// a small transaction's undo allocates nothing.
    static SPARE_UNDO: std::cell::Cell<Option<UndoLog>> = const { std::cell::Cell::new(None) };
}

impl UndoLog {
    /// An empty log, on the memory of one that a finished transaction of this thread gave
    /// back, if there is one.
    pub(crate) fn reused() -> UndoLog {
        SPARE_UNDO.try_with(std::cell::Cell::take).ok().flatten().unwrap_or_default()
    }

    /// Empties the log and keeps its memory for this thread's next transaction, unless it
    /// grew past a small transaction's needs.
    pub(crate) fn recycle(mut self) {
        let entries = self.chunks.first().map_or(0, Vec::capacity);
        if self.chunks.len() > 1
            || entries > SPARE_UNDO_ENTRIES
            || self.bytes.len() > 1
            || self.bytes.first().map_or(0, Vec::capacity) > SPARE_UNDO_BYTES
        {
            return;
        }
        // One empty chunk is a valid log: every chunk but the last is full.
        if let Some(chunk) = self.chunks.first_mut() {
            chunk.clear();
        }
        self.len = 0;
        if let Some(bytes) = self.bytes.first_mut() {
            bytes.clear();
        }
        // The thread may be exiting, its spare gone already: then the memory just goes.
        let _ = SPARE_UNDO.try_with(|spare| spare.set(Some(self)));
    }

    /// Appends a row change.
    pub(crate) fn push(&mut self, row: RowUndo<'_>) {
        let (kind, value): (UndoKind, &[u8]) = match &row.undo {
            Undo::Delete => (UndoKind::Delete, &[]),
            Undo::Insert(v) => (UndoKind::Insert, v),
            Undo::Restore(v) => (UndoKind::Restore, v),
        };
        let need = row.key.len() + value.len();
        let full = |b: &Vec<u8>| b.len() + need > b.capacity() && b.capacity() >= UNDO_BYTES_CHUNK;
        if self.bytes.last().is_none_or(full) {
            let capacity = if self.bytes.is_empty() { 0 } else { UNDO_BYTES_CHUNK.max(need) };
            self.bytes.push(Vec::with_capacity(capacity));
        }
        let byte_chunk = self.bytes.len() - 1;
        let Some(bytes) = self.bytes.last_mut() else { return };
        // A chunk holds at most about twice UNDO_BYTES_CHUNK, and a chunk index is below
        // the entry count, which a u32 holds (a transaction's log of 4 billion rows aside).
        let start = bytes.len() as u32;
        bytes.extend_from_slice(row.key);
        bytes.extend_from_slice(value);
        if self.chunks.last().is_none_or(|c| c.len() == UNDO_CHUNK) {
            let capacity = if self.chunks.is_empty() { 0 } else { UNDO_CHUNK };
            self.chunks.push(Vec::with_capacity(capacity));
        }
        let Some(chunk) = self.chunks.last_mut() else { return };
        self.len += 1;
        chunk.push(UndoHead {
            lsn: row.lsn,
            chunk: byte_chunk as u32,
            start,
            root: row.root,
            // A tree refuses keys over MAX_KEY_LEN and values over MAX_VALUE_LEN before it
            // logs, so both fit.
            value_len: value.len() as u32,
            key_len: row.key.len() as u16,
            kind,
        });
    }

    /// Entries in the log.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn head(&self, i: usize) -> &UndoHead {
        &self.chunks[i / UNDO_CHUNK][i % UNDO_CHUNK]
    }

    /// The LSN of entry `i`.
    pub(crate) fn lsn(&self, i: usize) -> Lsn {
        self.head(i).lsn
    }

    /// Entry `i`: its tree, key and inverse.
    pub(crate) fn entry(&self, i: usize) -> (PageId, &[u8], UndoRef<'_>) {
        let h = self.head(i);
        let bytes = &self.bytes[h.chunk as usize];
        let start = h.start as usize;
        let key_end = start + usize::from(h.key_len);
        let key = &bytes[start..key_end];
        let value = &bytes[key_end..key_end + h.value_len as usize];
        let undo = match h.kind {
            UndoKind::Delete => UndoRef::Delete,
            UndoKind::Insert => UndoRef::Insert(value),
            UndoKind::Restore => UndoRef::Restore(value),
        };
        (h.root, key, undo)
    }

    /// Keeps the first `keep` entries.
    pub(crate) fn truncate(&mut self, keep: usize) {
        if keep >= self.len {
            return;
        }
        let (chunk, start) = (self.head(keep).chunk as usize, self.head(keep).start as usize);
        self.bytes.truncate(chunk + 1);
        if let Some(bytes) = self.bytes.last_mut() {
            bytes.truncate(start);
        }
        self.chunks.truncate(keep.div_ceil(UNDO_CHUNK));
        if let Some(last) = self.chunks.last_mut() {
            last.truncate(keep - (keep - 1) / UNDO_CHUNK * UNDO_CHUNK);
        }
        self.len = keep;
    }

    /// Drops entries from the end while their LSN is above `lsn` (what a compensation record
    /// says was undone already).
    pub(crate) fn pop_after(&mut self, lsn: Lsn) {
        let mut keep = self.len;
        while keep > 0 && self.lsn(keep - 1) > lsn {
            keep -= 1;
        }
        self.truncate(keep);
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        self.chunks.clear();
        self.len = 0;
        self.bytes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: usize) -> (Vec<u8>, Undo) {
        let undo = match i % 3 {
            0 => Undo::Delete,
            1 => Undo::Insert(vec![i as u8; i % 7]),
            _ => Undo::Restore(vec![!(i as u8); i % 5]),
        };
        ((i as u32).to_be_bytes().to_vec(), undo)
    }

    fn check(log: &UndoLog, n: usize) {
        assert_eq!(log.len(), n);
        for i in 0..n {
            let (key, undo) = row(i);
            let (root, k, u) = log.entry(i);
            assert_eq!((root, k, log.lsn(i)), (i as PageId, &key[..], 10 * i as Lsn));
            let back = match u {
                UndoRef::Delete => Undo::Delete,
                UndoRef::Insert(v) => Undo::Insert(v.to_vec()),
                UndoRef::Restore(v) => Undo::Restore(v.to_vec()),
            };
            assert_eq!(back, undo, "entry {i}");
        }
    }

    fn fill(log: &mut UndoLog, from: usize, to: usize) {
        for i in from..to {
            let (key, undo) = row(i);
            log.push(RowUndo { lsn: 10 * i as Lsn, root: i as PageId, key: &key, undo });
        }
    }

    #[test]
    fn undo_log_keeps_entries_across_chunks_and_truncations() {
        let total = 2 * UNDO_CHUNK + 3;
        let mut log = UndoLog::default();
        fill(&mut log, 0, total);
        check(&log, total);
        for keep in [total, 2 * UNDO_CHUNK + 1, 2 * UNDO_CHUNK, UNDO_CHUNK + 1, UNDO_CHUNK, 7, 0] {
            log.truncate(keep);
            check(&log, keep);
            fill(&mut log, keep, total);
            check(&log, total);
        }
        log.pop_after(10 * UNDO_CHUNK as Lsn);
        check(&log, UNDO_CHUNK + 1);
        log.clear();
        check(&log, 0);
        assert!(log.is_empty());
    }

    #[test]
    fn a_recycled_undo_log_is_empty_and_works_and_a_big_one_is_not_kept() {
        let mut log = UndoLog::reused();
        fill(&mut log, 0, 5);
        let bytes = log.bytes.as_ptr();
        log.recycle();
        let mut log = UndoLog::reused();
        assert_eq!(log.bytes.as_ptr(), bytes, "the memory was reused");
        check(&log, 0);
        fill(&mut log, 0, 9);
        check(&log, 9);
        log.truncate(2);
        check(&log, 2);
        log.recycle();
        // A log past a small transaction's size is dropped, not kept for the next one.
        let mut big = UndoLog::reused();
        fill(&mut big, 0, 2 * SPARE_UNDO_ENTRIES);
        big.recycle();
        assert_eq!(UndoLog::reused().bytes.capacity(), 0);
    }
}
