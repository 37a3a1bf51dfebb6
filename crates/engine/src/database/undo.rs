//! A transaction's undo log: the row changes it may have to undo, a stack that is pushed as
//! the transaction changes rows and popped, newest first, as it rolls back.
//!
//! Entries are packed into blocks of about [`BLOCK_BYTES`], so a transaction changing a
//! million rows allocates nothing per row. A log keeps its newest [`MEMORY_BLOCKS`] blocks in
//! memory; older ones go to an unnamed temporary file next to the database's log (when the
//! log was given a folder, [`UndoLog::spill_to`]), so a transaction's undo takes at most a
//! few megabytes of memory however many rows it changes, as SQL Server's is read back from
//! the log on disk. A rollback reads them back, newest first, one block at a time. The
//! block format is in `docs/format/spill.md`, "Undo blocks".
//!
//! An emptied small log is kept per thread for the next transaction; a big one gives its
//! memory back.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

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

/// What an entry undoes, borrowed from a [`PoppedUndo`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum UndoRef<'a> {
    /// Undo an insert: delete the key.
    Delete,
    /// Undo a delete: insert the key with this value.
    Insert(&'a [u8]),
    /// Undo an update: put this value back.
    Restore(&'a [u8]),
}

/// The entry [`UndoLog::pop_into`] took off the log, in buffers kept across pops.
#[derive(Debug, Default)]
pub(crate) struct PoppedUndo {
    /// Its row record's LSN.
    pub lsn: Lsn,
    /// Its tree.
    pub root: PageId,
    kind: u8,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl PoppedUndo {
    pub(crate) fn key(&self) -> &[u8] {
        &self.key
    }

    pub(crate) fn undo(&self) -> UndoRef<'_> {
        match self.kind {
            KIND_DELETE => UndoRef::Delete,
            KIND_INSERT => UndoRef::Insert(&self.value),
            _ => UndoRef::Restore(&self.value),
        }
    }
}

const KIND_DELETE: u8 = 1;
const KIND_INSERT: u8 = 2;
const KIND_RESTORE: u8 = 3;

/// The fixed part of an entry, written after its key and old value so that the newest entry
/// of a block is read from the block's end: LSN (8 bytes), root (4), value length (4), key
/// length (2), kind (1), all little-endian.
const TRAILER: usize = 19;

/// Bytes a block holds before the next entry starts a new one (1 MiB). A block holds at
/// least one entry, so one larger than this makes a block of its own.
const BLOCK_BYTES: usize = 1 << 20;

/// Blocks a log keeps in memory, newest first; older ones are spilled (about 8 MiB).
const MEMORY_BLOCKS: usize = 8;

/// Bytes of entries an [`UndoLog`] may have room for and still be kept for reuse (see
/// [`UndoLog::recycle`]): a small transaction's log is kept, a big one's memory given back.
const SPARE_UNDO_BYTES: usize = 16 << 10;

thread_local! {
    /// An emptied undo log that each thread keeps for the next transaction it starts, so that
    /// a small transaction's undo allocates nothing.
    static SPARE_UNDO: std::cell::Cell<Option<UndoLog>> = const { std::cell::Cell::new(None) };
}

/// A block of entries: `bytes` holds `entries` whole entries, oldest first.
#[derive(Debug, Clone, Default)]
struct Block {
    bytes: Vec<u8>,
    entries: usize,
}

/// Where a spilled block is in the spill file.
#[derive(Debug, Clone, Copy)]
struct SpilledBlock {
    offset: u64,
    len: usize,
    entries: usize,
}

/// The spilled, oldest blocks of a log. The file is used as a stack: a block read back is
/// the last one written, and the next block spilled overwrites it.
#[derive(Debug)]
struct Spill {
    file: File,
    blocks: Vec<SpilledBlock>,
}

impl Spill {
    fn end(&self) -> u64 {
        self.blocks.last().map_or(0, |b| b.offset + b.len as u64)
    }
}

/// The row changes a transaction may have to undo in one database, oldest first.
///
/// Invariants: `len` is the entries of `spill` plus those of `blocks`; every spilled entry
/// is older than every entry in memory; only the last block in memory may be empty.
#[derive(Debug, Default)]
pub(crate) struct UndoLog {
    /// The newest blocks, oldest first; entries are appended to the last.
    blocks: VecDeque<Block>,
    len: usize,
    spill: Option<Spill>,
    /// The folder the spill file goes in; `None`: the log stays in memory.
    spill_dir: Option<Arc<Path>>,
    /// Spilling failed once (no room, no such folder): the log stays in memory from then on,
    /// so a change the transaction made is never left without its undo.
    spill_failed: bool,
}

impl UndoLog {
    /// An empty log, on the memory of one that a finished transaction of this thread gave
    /// back, if there is one.
    pub(crate) fn reused() -> UndoLog {
        SPARE_UNDO.try_with(std::cell::Cell::take).ok().flatten().unwrap_or_default()
    }

    /// Lets the log spill its older blocks to an unnamed file in `dir`.
    pub(crate) fn spill_to(&mut self, dir: &Arc<Path>) {
        self.spill_dir = Some(Arc::clone(dir));
    }

    /// Empties the log and keeps its memory for this thread's next transaction, unless it
    /// grew past a small transaction's needs.
    pub(crate) fn recycle(mut self) {
        if self.spill.is_some()
            || self.blocks.len() > 1
            || self.blocks.front().is_some_and(|b| b.bytes.capacity() > SPARE_UNDO_BYTES)
        {
            return;
        }
        // One empty block is a valid log: only the last block may be empty.
        if let Some(block) = self.blocks.front_mut() {
            block.bytes.clear();
            block.entries = 0;
        }
        self.len = 0;
        self.spill_dir = None;
        self.spill_failed = false;
        // The thread may be exiting, its spare gone already: then the memory just goes.
        let _ = SPARE_UNDO.try_with(|spare| spare.set(Some(self)));
    }

    /// Appends a row change.
    pub(crate) fn push(&mut self, row: RowUndo<'_>) {
        let (kind, value): (u8, &[u8]) = match &row.undo {
            Undo::Delete => (KIND_DELETE, &[]),
            Undo::Insert(v) => (KIND_INSERT, v),
            Undo::Restore(v) => (KIND_RESTORE, v),
        };
        let need = row.key.len() + value.len() + TRAILER;
        let full = |b: &Block| b.entries > 0 && b.bytes.len() + need > BLOCK_BYTES;
        if self.blocks.back().is_none_or(full) {
            // The first block grows by doubling, so a small transaction allocates little.
            let capacity = if self.blocks.is_empty() { 0 } else { BLOCK_BYTES.max(need) };
            self.blocks.push_back(Block { bytes: Vec::with_capacity(capacity), entries: 0 });
            self.spill_old_blocks();
        }
        let Some(block) = self.blocks.back_mut() else { return };
        let bytes = &mut block.bytes;
        bytes.extend_from_slice(row.key);
        bytes.extend_from_slice(value);
        bytes.extend_from_slice(&row.lsn.to_le_bytes());
        bytes.extend_from_slice(&row.root.to_le_bytes());
        // A tree refuses keys over MAX_KEY_LEN (900) and values over MAX_VALUE_LEN before it
        // logs, so both fit.
        bytes.extend_from_slice(&(value.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&(row.key.len() as u16).to_le_bytes());
        bytes.push(kind);
        block.entries += 1;
        self.len += 1;
    }

    /// Writes the oldest blocks in memory to the spill file while more than
    /// [`MEMORY_BLOCKS`] are.
    fn spill_old_blocks(&mut self) {
        while self.blocks.len() > MEMORY_BLOCKS && !self.spill_failed {
            let Some(dir) = &self.spill_dir else { return };
            if self.spill.is_none() {
                match tempfile::tempfile_in(dir) {
                    Ok(file) => self.spill = Some(Spill { file, blocks: Vec::new() }),
                    Err(_) => {
                        self.spill_failed = true;
                        return;
                    }
                }
            }
            let (Some(spill), Some(block)) = (&mut self.spill, self.blocks.front()) else {
                return;
            };
            let offset = spill.end();
            if spill.file.write_all_at(&block.bytes, offset).is_err() {
                self.spill_failed = true;
                return;
            }
            spill.blocks.push(SpilledBlock {
                offset,
                len: block.bytes.len(),
                entries: block.entries,
            });
            self.blocks.pop_front();
        }
    }

    /// Entries in the log.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The block that holds the newest entry, in memory: the last spilled block is read
    /// back when memory has none; None when the log is empty.
    fn newest_block(&mut self) -> io::Result<Option<&mut Block>> {
        while self.blocks.back().is_some_and(|b| b.entries == 0) {
            self.blocks.pop_back();
        }
        if self.blocks.is_empty() {
            if let Some(spill) = &mut self.spill {
                if let Some(spilled) = spill.blocks.pop() {
                    let mut bytes = vec![0; spilled.len];
                    spill.file.read_exact_at(&mut bytes, spilled.offset)?;
                    self.blocks.push_back(Block { bytes, entries: spilled.entries });
                }
            }
        }
        Ok(self.blocks.back_mut())
    }

    /// The LSN of the newest entry, `None` when the log is empty.
    pub(crate) fn last_lsn(&mut self) -> io::Result<Option<Lsn>> {
        let Some(block) = self.newest_block()? else { return Ok(None) };
        let trailer = trailer_of(&block.bytes)?;
        Ok(Some(u64::from_le_bytes(field(trailer, 0))))
    }

    /// Takes the newest entry off the log into `out`; false when the log is empty.
    pub(crate) fn pop_into(&mut self, out: &mut PoppedUndo) -> io::Result<bool> {
        let Some(block) = self.newest_block()? else { return Ok(false) };
        let trailer = trailer_of(&block.bytes)?;
        out.lsn = u64::from_le_bytes(field(trailer, 0));
        out.root = u32::from_le_bytes(field(trailer, 8));
        let value_len = u32::from_le_bytes(field(trailer, 12)) as usize;
        let key_len = usize::from(u16::from_le_bytes(field(trailer, 16)));
        out.kind = trailer[18];
        let value_end = block.bytes.len() - TRAILER;
        let key_start = value_end.checked_sub(value_len + key_len).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "undo entry past its block")
        })?;
        out.key.clear();
        out.key.extend_from_slice(&block.bytes[key_start..key_start + key_len]);
        out.value.clear();
        out.value.extend_from_slice(&block.bytes[key_start + key_len..value_end]);
        block.bytes.truncate(key_start);
        block.entries -= 1;
        self.len -= 1;
        Ok(true)
    }

    /// Drops entries from the end while their LSN is above `lsn` (what a compensation record
    /// says was undone already).
    pub(crate) fn pop_after(&mut self, lsn: Lsn) -> io::Result<()> {
        let mut scratch = PoppedUndo::default();
        while self.last_lsn()?.is_some_and(|last| last > lsn) {
            self.pop_into(&mut scratch)?;
        }
        Ok(())
    }

    /// Forgets every entry (and closes the spill file, which frees its space).
    pub(crate) fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
        self.spill = None;
    }
}

/// The error of a block the log could not read back from its spill file.
pub(crate) fn unreadable_undo(e: io::Error) -> crate::error::EngineError {
    crate::error::EngineError::Io(format!("reading back the undo log: {e}"))
}

/// The trailer of the newest entry of a non-empty block.
fn trailer_of(bytes: &[u8]) -> io::Result<&[u8]> {
    bytes.len().checked_sub(TRAILER).map(|start| &bytes[start..]).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidData, "undo block shorter than an entry")
    })
}

/// `N` bytes of `trailer` from `at`.
fn field<const N: usize>(trailer: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&trailer[at..at + N]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: usize) -> (Vec<u8>, Undo) {
        let undo = match i % 3 {
            0 => Undo::Delete,
            1 => Undo::Insert(vec![i as u8; i % 7]),
            _ => Undo::Restore(vec![!(i as u8); i % 5 + 600]),
        };
        ((i as u32).to_be_bytes().to_vec(), undo)
    }

    fn fill(log: &mut UndoLog, from: usize, to: usize) {
        for i in from..to {
            let (key, undo) = row(i);
            log.push(RowUndo { lsn: 10 * i as Lsn, root: i as PageId, key: &key, undo });
        }
    }

    /// Pops entries down to `to`, checking each is entry `i` as pushed.
    fn drain(log: &mut UndoLog, to: usize) {
        let mut popped = PoppedUndo::default();
        for i in (to..log.len()).rev() {
            assert_eq!(log.last_lsn().unwrap(), Some(10 * i as Lsn));
            assert!(log.pop_into(&mut popped).unwrap());
            let (key, undo) = row(i);
            assert_eq!(
                (popped.root, popped.key(), popped.lsn),
                (i as PageId, &key[..], 10 * i as Lsn)
            );
            let back = match popped.undo() {
                UndoRef::Delete => Undo::Delete,
                UndoRef::Insert(v) => Undo::Insert(v.to_vec()),
                UndoRef::Restore(v) => Undo::Restore(v.to_vec()),
            };
            assert_eq!(back, undo, "entry {i}");
        }
        assert_eq!(log.len(), to);
    }

    /// Entries that fill `blocks` blocks (each about 230 bytes on average).
    fn entries_for(blocks: usize) -> usize {
        blocks * BLOCK_BYTES / 200
    }

    #[test]
    fn undo_log_pops_what_was_pushed_newest_first_and_takes_more_after() {
        let total = entries_for(3);
        let mut log = UndoLog::default();
        fill(&mut log, 0, total);
        assert!(log.spill.is_none(), "no folder: nothing spills");
        for keep in [total, total - 1, total / 2, 7, 0] {
            drain(&mut log, keep);
            fill(&mut log, keep, total);
        }
        log.pop_after(10 * 1000).unwrap();
        assert_eq!(log.len(), 1001);
        drain(&mut log, 0);
        assert!(log.is_empty());
        assert!(!log.pop_into(&mut PoppedUndo::default()).unwrap());
        assert_eq!(log.last_lsn().unwrap(), None);
    }

    #[test]
    fn a_big_undo_log_keeps_its_newest_blocks_in_memory_and_spills_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let dir: Arc<Path> = Arc::from(dir.path());
        let mut log = UndoLog::reused();
        log.spill_to(&dir);
        let total = entries_for(3 * MEMORY_BLOCKS);
        fill(&mut log, 0, total);
        let spilled = log.spill.as_ref().map_or(0, |s| s.blocks.len());
        assert!(spilled >= 2 * MEMORY_BLOCKS - 2, "{spilled} blocks spilled");
        assert_eq!(log.blocks.len(), MEMORY_BLOCKS);
        // The file has no name: the folder stays empty.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

        // A statement's rollback reads back the spilled blocks it reaches, and pushing again
        // spills over what was read back.
        let keep = total / 3 + 5;
        drain(&mut log, keep);
        fill(&mut log, keep, total);
        log.pop_after(10 * (total as Lsn - 100)).unwrap();
        drain(&mut log, 0);
        log.clear();
        assert!(log.spill.is_none());
    }

    #[test]
    fn an_undo_log_that_cannot_spill_keeps_everything_in_memory() {
        let mut log = UndoLog::default();
        log.spill_to(&Arc::from(Path::new("/nonexistent/undo")));
        let total = entries_for(2 * MEMORY_BLOCKS);
        fill(&mut log, 0, total);
        assert!(log.spill_failed);
        assert!(log.blocks.len() > MEMORY_BLOCKS);
        drain(&mut log, 0);
    }

    #[test]
    fn a_recycled_undo_log_is_empty_and_works_and_a_big_one_is_not_kept() {
        let mut log = UndoLog::reused();
        fill(&mut log, 0, 5);
        let bytes = log.blocks[0].bytes.as_ptr();
        log.recycle();
        let mut log = UndoLog::reused();
        assert_eq!(log.blocks[0].bytes.as_ptr(), bytes, "the memory was reused");
        assert!(log.is_empty());
        fill(&mut log, 0, 9);
        drain(&mut log, 0);
        log.recycle();
        // A log past a small transaction's size is dropped, not kept for the next one.
        let mut big = UndoLog::reused();
        fill(&mut big, 0, 200);
        big.recycle();
        assert!(UndoLog::reused().blocks.is_empty());
    }
}
