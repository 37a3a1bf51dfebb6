//! The slotted record area of a page.
//!
//! Between the 96-byte header and the end of the page, records grow upwards from the header and
//! a slot array grows downwards from the last byte, as in SQL Server. Slot `i` is the 4 bytes at
//! `PAGE_SIZE - 4 * (i + 1)`: the record's offset (u16) then its length (u16), little-endian.
//! Slot order is the order the layer above wants (key order on a B-tree page); the records'
//! physical order is whatever inserts, updates and compactions left, and nothing depends on it.
//!
//! ```text
//!   0        96                    free_offset          PAGE_SIZE - 4n       PAGE_SIZE
//!   | header | rec | hole | rec ... |   contiguous free   | slot n-1 ... slot 0 |
//! ```
//!
//! **Why the slot holds the length.** SQL Server's slots are 2 bytes (offset only) because its
//! record format encodes the length. Here records are opaque bytes to the page layer, so the
//! slot carries the length and the page can be checked, compacted and moved without knowing
//! any record format, at the price of 2 bytes per record.
//!
//! **Deleting removes the slot** and shifts the later ones down, which keeps a B-tree page's
//! slots dense and sorted. A heap that hands out stable row ids (page, slot) will need a
//! tombstone or ghost state on top; that is not this layer's business.
//!
//! # Free space
//!
//! * `free_offset` (SQL Server's `m_freeData`): where the next record goes.
//! * `free_bytes` (`m_freeCnt`): all free bytes, i.e. the contiguous gap between `free_offset`
//!   and the slot array plus the holes that deletes and moving or shrinking updates leave
//!   behind. An insert that fits in `free_bytes` but not in the gap first
//!   [compacts](Page::compact) the page; so an operation fails with [`PageError::PageFull`]
//!   exactly when the page's live bytes would not fit, never because of fragmentation.
//! * Freeing the record at the top of the record area lowers `free_offset` at once, so the
//!   common "delete or shrink the last record" case needs no compaction.
//!
//! # Invariants (checked by [`Page::check`])
//!
//! 1. The slot array fits: `96 <= free_offset <= PAGE_SIZE - 4 * slot_count`.
//! 2. Every record lies in `[96, free_offset)`; zero-length records store offset 96.
//! 3. No two records overlap.
//! 4. `free_bytes == PAGE_SIZE - 96 - 4 * slot_count - sum(record lengths)`.
//!
//! Every operation either succeeds and keeps them, or fails and leaves the page untouched.

use crate::page::{
    Corruption, Page, PageError, HEADER_SIZE, OFF_FREE_BYTES, OFF_FREE_OFFSET, OFF_SLOT_COUNT,
    PAGE_SIZE,
};

/// Bytes per slot: offset (u16) and length (u16).
pub const SLOT_SIZE: usize = 4;

/// The largest record a page holds: the whole record area less its slot.
pub const MAX_RECORD_LEN: usize = PAGE_SIZE - HEADER_SIZE - SLOT_SIZE;

impl Page {
    /// The record in `slot`.
    pub fn get(&self, slot: usize) -> Result<&[u8], PageError> {
        let (off, len) = self.slot_checked(slot)?;
        // Cheap, and it turns a damaged slot into an error instead of a panic.
        self.as_bytes().get(off..off + len).ok_or_else(|| {
            self.records_corrupt(format!("slot {slot} points at {off}+{len}, past the page"))
        })
    }

    /// Inserts a record as slot `slot` (`0..=slot_count`), shifting the later slots up by one.
    pub fn insert(&mut self, slot: usize, record: &[u8]) -> Result<(), PageError> {
        let n = self.slot_count();
        if slot > n {
            return Err(PageError::SlotOutOfRange { slot, slot_count: n });
        }
        check_len(record.len())?;
        let needed = record.len() + SLOT_SIZE;
        if needed > self.free_bytes() {
            return Err(PageError::PageFull { needed, free: self.free_bytes() });
        }
        if needed > self.contiguous_free() {
            self.compact();
        }
        let off = self.append_record(record);
        // Slots slot..n sit at [PAGE_SIZE - 4n, PAGE_SIZE - 4 slot); each moves one slot down.
        let start = PAGE_SIZE - SLOT_SIZE * n;
        let end = PAGE_SIZE - SLOT_SIZE * slot;
        self.as_bytes_mut().copy_within(start..end, start - SLOT_SIZE);
        self.set_count(n + 1);
        self.set_slot(slot, off, record.len());
        self.set_free_bytes(self.free_bytes() - SLOT_SIZE);
        Ok(())
    }

    /// Appends a record after the last slot; returns its slot number.
    pub fn push(&mut self, record: &[u8]) -> Result<usize, PageError> {
        let slot = self.slot_count();
        self.insert(slot, record).map(|()| slot)
    }

    /// Replaces the record in `slot`. A record that shrinks or grows at the top of the record
    /// area stays where it is; one that grows elsewhere moves to the free gap, compacting the
    /// page first if the gap is too small.
    pub fn update(&mut self, slot: usize, record: &[u8]) -> Result<(), PageError> {
        let (off, len) = self.slot_checked(slot)?;
        check_len(record.len())?;
        let new = record.len();
        let at_top = len > 0 && off + len == self.free_offset();
        if new <= len {
            self.as_bytes_mut()[off..off + new].copy_from_slice(record);
            self.set_slot(slot, off, new);
            self.set_free_bytes(self.free_bytes() + (len - new));
            if at_top {
                self.set_free_offset(off + new);
            }
            return Ok(());
        }
        let extra = new - len;
        if extra > self.free_bytes() {
            return Err(PageError::PageFull { needed: extra, free: self.free_bytes() });
        }
        if at_top && extra <= self.contiguous_free() {
            self.as_bytes_mut()[off..off + new].copy_from_slice(record);
            self.set_slot(slot, off, new);
            self.set_free_offset(off + new);
            self.set_free_bytes(self.free_bytes() - extra);
            return Ok(());
        }
        // Release the old copy first, so that a compaction can reuse its bytes.
        self.set_slot(slot, 0, 0);
        self.set_free_bytes(self.free_bytes() + len);
        if at_top {
            self.set_free_offset(off);
        }
        if new > self.contiguous_free() {
            self.compact();
        }
        let off = self.append_record(record);
        self.set_slot(slot, off, new);
        Ok(())
    }

    /// Deletes the record in `slot`, shifting the later slots down by one.
    pub fn delete(&mut self, slot: usize) -> Result<(), PageError> {
        let (off, len) = self.slot_checked(slot)?;
        let n = self.slot_count();
        let first = PAGE_SIZE - SLOT_SIZE * n;
        // Slots slot+1..n sit at [PAGE_SIZE - 4n, PAGE_SIZE - 4(slot+1)); each moves one up.
        let bytes = self.as_bytes_mut();
        bytes.copy_within(first..PAGE_SIZE - SLOT_SIZE * (slot + 1), first + SLOT_SIZE);
        bytes[first..first + SLOT_SIZE].fill(0);
        self.set_count(n - 1);
        self.set_free_bytes(self.free_bytes() + len + SLOT_SIZE);
        if len > 0 && off + len == self.free_offset() {
            self.set_free_offset(off);
        }
        Ok(())
    }

    /// Moves the records down against the header, in their physical order, so that all free
    /// space is one gap; zeroes the bytes freed, so old record images do not linger on disk.
    /// Slot numbers and record contents do not change.
    pub fn compact(&mut self) {
        let mut live: Vec<(usize, usize, usize)> = (0..self.slot_count())
            .map(|s| {
                let (off, len) = self.slot(s);
                (off, len, s)
            })
            .filter(|&(_, len, _)| len > 0)
            .collect();
        // Moving in ascending offset order only ever copies downwards onto bytes already moved
        // or free, so no record is overwritten before it is moved.
        live.sort_unstable();
        let mut cursor = HEADER_SIZE;
        for (off, len, s) in live {
            self.as_bytes_mut().copy_within(off..off + len, cursor);
            self.set_slot(s, cursor, len);
            cursor += len;
        }
        let old_top = self.free_offset();
        self.as_bytes_mut()[cursor..old_top].fill(0);
        self.set_free_offset(cursor);
        debug_assert_eq!(self.free_bytes(), self.contiguous_free());
    }

    /// The free gap between the records and the slot array: what an insert can use without
    /// compacting.
    pub fn contiguous_free(&self) -> usize {
        (PAGE_SIZE - SLOT_SIZE * self.slot_count()).saturating_sub(self.free_offset())
    }

    /// Whether a record of `len` bytes can be inserted (perhaps after a compaction).
    pub fn fits(&self, len: usize) -> bool {
        len <= MAX_RECORD_LEN && len + SLOT_SIZE <= self.free_bytes()
    }

    /// Checks the invariants of the record area (see the module documentation): the page-level
    /// part of a `DBCC CHECKTABLE`. Costs a sort of the slots; meant for tests, for a consistency
    /// checker, and for debugging, not for every read.
    pub fn check(&self) -> Result<(), PageError> {
        let page_id = self.page_id();
        self.check_header().map_err(|detail| PageError::Corrupt { page_id, detail })?;
        let top = self.free_offset();
        let mut ranges = Vec::with_capacity(self.slot_count());
        let mut used = 0;
        for s in 0..self.slot_count() {
            let (off, len) = self.slot(s);
            if len == 0 {
                if off != HEADER_SIZE {
                    return Err(self.records_corrupt(format!(
                        "empty record in slot {s} has offset {off}, not {HEADER_SIZE}"
                    )));
                }
                continue;
            }
            if off < HEADER_SIZE || off + len > top {
                return Err(self.records_corrupt(format!(
                    "slot {s} record {off}+{len} is outside the record area {HEADER_SIZE}..{top}"
                )));
            }
            used += len;
            ranges.push((off, len, s));
        }
        ranges.sort_unstable();
        for pair in ranges.windows(2) {
            let ((a_off, a_len, a), (b_off, _, b)) = (pair[0], pair[1]);
            if a_off + a_len > b_off {
                return Err(self.records_corrupt(format!(
                    "records of slots {a} ({a_off}+{a_len}) and {b} (at {b_off}) overlap"
                )));
            }
        }
        let expected = PAGE_SIZE - HEADER_SIZE - SLOT_SIZE * self.slot_count() - used;
        if self.free_bytes() != expected {
            return Err(self.records_corrupt(format!(
                "free bytes {} but records and slots leave {expected}",
                self.free_bytes()
            )));
        }
        Ok(())
    }

    /// The header's free-space fields are possible (invariant 1, plus the bounds on
    /// `free_bytes` that follow from it). Cheap enough for every read.
    pub(crate) fn check_header(&self) -> Result<(), Corruption> {
        let n = self.slot_count();
        let area = PAGE_SIZE - HEADER_SIZE;
        if SLOT_SIZE * n > area {
            return Err(Corruption::Header(format!("{n} slots do not fit in a page")));
        }
        let slots_start = PAGE_SIZE - SLOT_SIZE * n;
        let top = self.free_offset();
        if top < HEADER_SIZE || top > slots_start {
            return Err(Corruption::Header(format!(
                "free offset {top} outside {HEADER_SIZE}..={slots_start}"
            )));
        }
        let free = self.free_bytes();
        if free < slots_start - top || free > area - SLOT_SIZE * n {
            return Err(Corruption::Header(format!(
                "free bytes {free} outside {}..={}",
                slots_start - top,
                area - SLOT_SIZE * n
            )));
        }
        Ok(())
    }

    /// Copies a record to `free_offset` and advances it; the caller has made room.
    fn append_record(&mut self, record: &[u8]) -> usize {
        let off = self.free_offset();
        self.as_bytes_mut()[off..off + record.len()].copy_from_slice(record);
        self.set_free_offset(off + record.len());
        self.set_free_bytes(self.free_bytes() - record.len());
        off
    }

    fn slot_checked(&self, slot: usize) -> Result<(usize, usize), PageError> {
        let n = self.slot_count();
        if slot >= n {
            return Err(PageError::SlotOutOfRange { slot, slot_count: n });
        }
        Ok(self.slot(slot))
    }

    fn slot(&self, slot: usize) -> (usize, usize) {
        let pos = slot_pos(slot);
        (usize::from(self.u16_at(pos)), usize::from(self.u16_at(pos + 2)))
    }

    /// Writes a slot. Offsets and lengths are below `PAGE_SIZE`, so they fit a u16. An empty
    /// record gets offset `HEADER_SIZE`, which is inside the record area whatever happens to
    /// `free_offset` later, so no other operation has to care about empty records.
    fn set_slot(&mut self, slot: usize, off: usize, len: usize) {
        let off = if len == 0 { HEADER_SIZE } else { off };
        let pos = slot_pos(slot);
        self.set_u16(pos, off as u16);
        self.set_u16(pos + 2, len as u16);
    }

    fn set_count(&mut self, n: usize) {
        self.set_u16(OFF_SLOT_COUNT, n as u16);
    }

    fn set_free_offset(&mut self, off: usize) {
        self.set_u16(OFF_FREE_OFFSET, off as u16);
    }

    fn set_free_bytes(&mut self, free: usize) {
        self.set_u16(OFF_FREE_BYTES, free as u16);
    }

    fn records_corrupt(&self, detail: String) -> PageError {
        PageError::Corrupt { page_id: self.page_id(), detail: Corruption::Records(detail) }
    }
}

/// Where slot `slot` starts.
fn slot_pos(slot: usize) -> usize {
    PAGE_SIZE - SLOT_SIZE * (slot + 1)
}

fn check_len(len: usize) -> Result<(), PageError> {
    if len > MAX_RECORD_LEN {
        return Err(PageError::RecordTooLarge { len, max: MAX_RECORD_LEN });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::PageType;

    fn page() -> Page {
        Page::new(3, PageType::Heap)
    }

    #[test]
    fn insert_get_in_slot_order() {
        let mut p = page();
        p.insert(0, b"bbb").unwrap();
        p.insert(0, b"a").unwrap();
        p.insert(2, b"cc").unwrap();
        p.insert(1, b"").unwrap();
        let got: Vec<&[u8]> = (0..4).map(|s| p.get(s).unwrap()).collect();
        assert_eq!(got, [&b"a"[..], b"", b"bbb", b"cc"]);
        assert_eq!(p.free_bytes(), PAGE_SIZE - HEADER_SIZE - 6 - 4 * SLOT_SIZE);
        p.check().unwrap();
        assert_eq!(p.get(4), Err(PageError::SlotOutOfRange { slot: 4, slot_count: 4 }));
        assert_eq!(p.insert(9, b"x"), Err(PageError::SlotOutOfRange { slot: 9, slot_count: 4 }));
    }

    #[test]
    fn fills_up_exactly_and_reports_full() {
        let mut p = page();
        let rec = [7u8; 96]; // 100 bytes per record with its slot
        let mut n = 0;
        while p.fits(rec.len()) {
            p.push(&rec).unwrap();
            n += 1;
        }
        assert_eq!(n, (PAGE_SIZE - HEADER_SIZE) / 100);
        let free = p.free_bytes();
        assert_eq!(p.push(&rec), Err(PageError::PageFull { needed: 100, free }));
        p.check().unwrap();
        // A full page still takes a record that fits the remainder.
        p.push(&vec![1; free - SLOT_SIZE]).unwrap();
        assert_eq!(p.free_bytes(), 0);
        p.check().unwrap();
    }

    #[test]
    fn largest_record_fits_an_empty_page_only() {
        let mut p = page();
        let big = vec![0xAB; MAX_RECORD_LEN];
        p.push(&big).unwrap();
        assert_eq!(p.free_bytes(), 0);
        p.check().unwrap();
        let err = page().push(&vec![0; MAX_RECORD_LEN + 1]);
        assert_eq!(
            err,
            Err(PageError::RecordTooLarge { len: MAX_RECORD_LEN + 1, max: MAX_RECORD_LEN })
        );
    }

    #[test]
    fn growing_update_compacts_when_fragmented() {
        let mut p = page();
        for i in 0..8u8 {
            p.push(&[i; 1000]).unwrap();
        }
        // Free space is now 8096 - 8 * 1004 = 64 bytes; punch holes, then grow slot 0 past
        // what the gap alone could hold.
        p.delete(1).unwrap();
        p.delete(2).unwrap(); // was slot 3
        assert!(p.contiguous_free() < 1500);
        p.update(0, &[9; 2500]).unwrap();
        p.check().unwrap();
        assert_eq!(p.get(0).unwrap(), &[9; 2500][..]);
        assert_eq!(p.get(1).unwrap(), &[2; 1000][..]);
        assert_eq!(p.get(5).unwrap(), &[7; 1000][..]);
    }

    #[test]
    fn top_record_frees_its_space_without_compaction() {
        let mut p = page();
        p.push(b"first").unwrap();
        p.push(b"second").unwrap();
        p.update(1, b"2").unwrap();
        assert_eq!(p.free_offset(), HEADER_SIZE + 6);
        p.update(1, b"second, longer").unwrap(); // grows in place at the top
        assert_eq!(p.free_offset(), HEADER_SIZE + 5 + 14);
        p.delete(1).unwrap();
        assert_eq!(p.free_offset(), HEADER_SIZE + 5);
        p.delete(0).unwrap();
        assert_eq!(p.free_offset(), HEADER_SIZE);
        assert_eq!(p.free_bytes(), PAGE_SIZE - HEADER_SIZE);
        p.check().unwrap();
    }

    #[test]
    fn compact_zeroes_freed_bytes() {
        let mut p = page();
        p.push(b"secret").unwrap();
        p.push(b"kept").unwrap();
        p.delete(0).unwrap();
        p.compact();
        assert_eq!(p.get(0).unwrap(), b"kept");
        assert!(p.as_bytes()[HEADER_SIZE + 4..PAGE_SIZE - SLOT_SIZE].iter().all(|&b| b == 0));
    }

    #[test]
    fn failed_operations_leave_the_page_untouched() {
        let mut p = page();
        p.push(&vec![1; 5000]).unwrap();
        p.push(&vec![2; 3000]).unwrap();
        let before = p.clone();
        assert!(matches!(p.push(&[3; 100]), Err(PageError::PageFull { .. })));
        assert!(matches!(p.update(1, &[4; 3200]), Err(PageError::PageFull { .. })));
        assert!(matches!(p.delete(2), Err(PageError::SlotOutOfRange { .. })));
        assert_eq!(p, before);
    }

    #[test]
    fn check_finds_overlap_bounds_and_counter_damage() {
        let mut good = page();
        good.push(b"aaaa").unwrap();
        good.push(b"bbbb").unwrap();
        let records_err = |p: &Page| match p.check() {
            Err(PageError::Corrupt { page_id: 3, detail: Corruption::Records(d) }) => d,
            other => panic!("{other:?}"),
        };

        let mut p = good.clone();
        p.set_slot(1, HEADER_SIZE + 2, 4); // overlaps slot 0
        assert!(records_err(&p).contains("overlap"));

        let mut p = good.clone();
        p.set_slot(0, HEADER_SIZE + 6, 4); // runs past free_offset
        assert!(records_err(&p).contains("outside"));

        let mut p = good.clone();
        p.set_free_bytes(p.free_bytes() + 1); // within header bounds, wrong by one
        assert!(records_err(&p).contains("free bytes"));

        let mut p = good;
        p.set_free_offset(PAGE_SIZE - 4);
        assert!(matches!(p.check(), Err(PageError::Corrupt { detail: Corruption::Header(_), .. })));
    }

    /// A number in `0..n` from the project's deterministic generator.
    fn below(rng: &mut walden_io::SplitMix64, n: usize) -> usize {
        rng.below(n as u64) as usize
    }

    /// Random inserts, updates, deletes and compactions against a `Vec<Vec<u8>>` model. The
    /// model predicts success or `PageFull` from the byte count alone (fragmentation must never
    /// matter), and after every step the page passes `check()` and holds the model's records.
    #[test]
    fn random_operations_match_model() {
        for seed in 1..=8u64 {
            let mut rng = walden_io::SplitMix64::new(seed);
            let mut p = page();
            let mut model: Vec<Vec<u8>> = Vec::new();
            for step in 0..4000 {
                let used: usize = model.iter().map(|r| r.len() + SLOT_SIZE).sum();
                let free = PAGE_SIZE - HEADER_SIZE - used;
                assert_eq!(p.free_bytes(), free);
                // Mostly small records, sometimes large ones, so pages fill and fragment.
                let len = match below(&mut rng, 10) {
                    0 => below(&mut rng, 3000),
                    1 => 0,
                    _ => below(&mut rng, 120),
                };
                let fill = (step % 251) as u8;
                let rec = vec![fill; len];
                match below(&mut rng, 10) {
                    0..=3 => {
                        let at = below(&mut rng, model.len() + 1);
                        let res = p.insert(at, &rec);
                        if len + SLOT_SIZE <= free {
                            res.unwrap();
                            model.insert(at, rec);
                        } else {
                            assert_eq!(
                                res,
                                Err(PageError::PageFull { needed: len + SLOT_SIZE, free })
                            );
                        }
                    }
                    4..=6 if !model.is_empty() => {
                        let at = below(&mut rng, model.len());
                        let res = p.update(at, &rec);
                        if len <= model[at].len() + free {
                            res.unwrap();
                            model[at] = rec;
                        } else {
                            assert!(matches!(res, Err(PageError::PageFull { .. })));
                        }
                    }
                    7..=8 if !model.is_empty() => {
                        let at = below(&mut rng, model.len());
                        p.delete(at).unwrap();
                        model.remove(at);
                    }
                    _ => p.compact(),
                }
                if let Err(e) = p.check() {
                    panic!("seed {seed} step {step}: {e}");
                }
                assert_eq!(p.slot_count(), model.len());
                for (s, r) in model.iter().enumerate() {
                    assert_eq!(p.get(s).unwrap(), &r[..], "seed {seed} step {step} slot {s}");
                }
            }
        }
    }
}

/// The worked example of `docs/format/page.md`, rebuilt and compared byte for byte, so the
/// document and the code cannot disagree.
#[cfg(test)]
mod doc_example {
    use crate::page::{Page, PageType, PAGE_SIZE};

    /// `offset: 16 hex bytes` lines, as in the document.
    fn hex_lines(bytes: &[u8], base: usize) -> String {
        bytes
            .chunks(16)
            .enumerate()
            .map(|(i, chunk)| {
                let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
                format!("{:04x}: {}\n", base + 16 * i, hex.join(" "))
            })
            .collect()
    }

    #[test]
    fn worked_example_matches_the_document() {
        let mut p = Page::new(7, PageType::Heap);
        p.set_object_id(100);
        p.set_next_page(Some(8));
        p.set_page_lsn(0x1f40);
        p.push(b"hello").unwrap();
        p.push(b"walden!").unwrap();
        p.seal();
        p.verify(7).unwrap();
        let b = p.as_bytes();
        let dump = hex_lines(&b[..112], 0) + &hex_lines(&b[PAGE_SIZE - 8..], PAGE_SIZE - 8);
        assert_eq!(dump, EXPECTED);
    }

    const EXPECTED: &str = "\
0000: 07 00 00 00 01 06 00 00 00 00 00 00 64 00 00 00
0010: 00 00 00 00 08 00 00 00 02 00 6c 00 8c 1f 00 00
0020: 40 1f 00 00 00 00 00 00 0f 4e b9 a6 00 00 00 00
0030: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
0040: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
0050: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
0060: 68 65 6c 6c 6f 77 61 6c 64 65 6e 21 00 00 00 00
1ff8: 65 00 07 00 60 00 05 00
";
}
