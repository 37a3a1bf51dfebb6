//! Segments: the fixed-size, preallocated pieces of a log file, and the map from stream
//! positions (LSNs) to file offsets.
//!
//! A log file is a 4 KiB file header followed by equal slots. Each slot holds one segment: a
//! header sector naming the segment's sequence number, then `data_size` bytes of blocks. Segment
//! `s` holds stream positions `[s * data_size, (s + 1) * data_size)`, so the position within a
//! segment is arithmetic and only the sequence-to-slot map is state.
//!
//! Slots are created zero-filled (see `walden_io::File::preallocate`), so that a flush only ever
//! overwrites allocated space and `fdatasync` has no metadata to write. A slot is reused for a
//! new sequence (SQL Server's VLF reuse) once the layers above have moved the truncation point
//! past everything it holds: SIMPLE recovery after a checkpoint. Under FULL recovery the layers
//! above keep the truncation point back and the file grows instead.
//!
//! The file grows by the policy's step (`FILEGROWTH`, in whole segments) up to its maximum
//! (`MAXSIZE`, rounded down to whole segments), on the writer thread ahead of need. From the
//! policy, the slots and the truncation point follows [`SegmentMap::room_limit`]: how far the
//! log may run before it is full, which is what turns away new work with error 9002. Only a
//! flush that finds no slot at all (the work admitted before the limit, and rollbacks, outran
//! the reserve kept for them) grows the file past the maximum, by one segment: a log that
//! cannot take the records it already accepted would have to go offline.
//!
//! Invariant: the active sequences are contiguous (`first..=last`); a new sequence is always
//! `last + 1`, and reuse takes the slot of the lowest sequence, so the set stays contiguous.
//! This is what lets the reader rebuild the map from the headers alone.

use std::collections::BTreeMap;

use walden_io::{FileGrowth, FileRef};

use crate::format::{SegmentHeader, FILE_HEADER_SIZE, SECTOR};
use crate::LogError;

/// An active segment's place in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// Which slot of the file.
    pub index: u32,
    /// The nonce its header carries; the checksum salt of its blocks.
    pub nonce: u64,
}

/// The map from segment sequences to slots, and the slots' state.
#[derive(Debug)]
pub(crate) struct SegmentMap {
    /// Bytes per slot, header included.
    pub segment_size: u64,
    /// Stream bytes per segment.
    pub data_size: u64,
    /// Number of slots in the file.
    pub slots: u32,
    /// Active sequences and their slots.
    pub active: BTreeMap<u64, Slot>,
    /// Slots holding no active sequence, lowest first.
    pub free: Vec<u32>,
    /// Stream position below which the layers above need nothing.
    pub truncation_lsn: u64,
    /// How the file grows.
    pub growth: FileGrowth,
    /// The last growth failed for want of disk space: the file is taken as unable to grow
    /// until a growth succeeds.
    pub out_of_disk: bool,
}

impl SegmentMap {
    pub fn new(segment_size: u64, slots: u32) -> SegmentMap {
        SegmentMap {
            segment_size,
            data_size: segment_size - SECTOR,
            slots,
            active: BTreeMap::new(),
            free: (0..slots).rev().collect(),
            truncation_lsn: 0,
            growth: FileGrowth::MODEL,
            out_of_disk: false,
        }
    }

    /// The most slots the file may have: the maximum size's whole segments (at least the
    /// slots it has), or the slots it has if it cannot grow.
    pub fn max_slots(&self) -> u64 {
        let now = u64::from(self.slots);
        if self.out_of_disk || !self.growth.can_grow(now * self.segment_size, self.segment_size) {
            return now;
        }
        self.growth.max_bytes.map_or(u64::MAX, |m| (m / self.segment_size).max(now))
    }

    /// The stream position the log may reach before it is full: with the most slots the file
    /// may have, every segment from the one holding the truncation point on can hold new log
    /// (the older ones are reused). `u64::MAX` when nothing limits it.
    pub fn room_limit(&self) -> u64 {
        let max = self.max_slots();
        if max == u64::MAX {
            return u64::MAX;
        }
        self.sequence_of(self.truncation_lsn).saturating_add(max).saturating_mul(self.data_size)
    }

    /// How many slots one growth ahead adds: the policy's step in whole segments (at least
    /// one), capped at the maximum; 0 if the file may not grow.
    pub fn growth_slots(&self) -> u32 {
        let current = u64::from(self.slots) * self.segment_size;
        match self.growth.target(current, current + self.segment_size, self.segment_size) {
            Some(target) if !self.out_of_disk => {
                u32::try_from(target.saturating_sub(current) / self.segment_size)
                    .unwrap_or(u32::MAX)
            }
            _ => 0,
        }
    }

    /// Frees every active segment wholly below the truncation point but the newest, then cuts
    /// free slots off the end of the file while it holds more than `target_slots` (at least
    /// one). Returns the slots left. The freed segments' headers stay on disk until their
    /// slots are reused: at open they are either contiguous with the active ones (and are
    /// read as old, unneeded log) or not (and are free).
    pub fn shrink(&mut self, file: &FileRef, target_slots: u32) -> Result<u32, LogError> {
        let newest = self.active.keys().next_back().copied();
        let reusable: Vec<u64> = self
            .active
            .keys()
            .copied()
            .take_while(|&s| (s + 1) * self.data_size <= self.truncation_lsn && Some(s) != newest)
            .collect();
        for s in reusable {
            if let Some(slot) = self.active.remove(&s) {
                self.free.push(slot.index);
            }
        }
        let target = target_slots.max(1);
        let mut slots = self.slots;
        while slots > target && self.free.contains(&(slots - 1)) {
            slots -= 1;
        }
        if slots < self.slots {
            file.set_len(self.slot_offset(slots)).map_err(|e| LogError::from_io("shrink", e))?;
            file.sync_all().map_err(|e| LogError::from_io("sync", e))?;
            self.free.retain(|&f| f < slots);
            self.slots = slots;
        }
        // Lowest first, as `take_slot` pops from the end.
        self.free.sort_unstable_by(|a, b| b.cmp(a));
        Ok(self.slots)
    }

    /// File offset of a slot's header.
    pub fn slot_offset(&self, slot: u32) -> u64 {
        FILE_HEADER_SIZE + u64::from(slot) * self.segment_size
    }

    /// The segment sequence holding stream position `lsn`.
    pub fn sequence_of(&self, lsn: u64) -> u64 {
        lsn / self.data_size
    }

    /// File offset of stream position `lsn` and its segment's checksum salt, if its segment is
    /// active.
    pub fn locate(&self, lsn: u64) -> Option<(u64, u64)> {
        let slot = self.active.get(&self.sequence_of(lsn))?;
        Some((self.slot_offset(slot.index) + SECTOR + lsn % self.data_size, slot.nonce))
    }

    /// Bytes from `lsn` to the end of its segment.
    pub fn room_in_segment(data_size: u64, lsn: u64) -> u64 {
        data_size - lsn % data_size
    }

    /// The first stream position still held by the file.
    pub fn start_lsn(&self) -> Option<u64> {
        self.active.keys().next().map(|s| s * self.data_size)
    }

    /// Picks a slot for a new sequence: a free one, else the oldest active one that lies wholly
    /// below the truncation point. `None` means the file must grow.
    fn take_slot(&mut self) -> Option<u32> {
        if let Some(slot) = self.free.pop() {
            return Some(slot);
        }
        let (&oldest, &slot) = self.active.iter().next()?;
        if (oldest + 1) * self.data_size <= self.truncation_lsn {
            self.active.remove(&oldest);
            return Some(slot.index);
        }
        None
    }

    /// Slots that could take a new sequence without growing the file.
    pub fn spare_slots(&self) -> usize {
        let reusable = self
            .active
            .keys()
            .take_while(|&&s| (s + 1) * self.data_size <= self.truncation_lsn)
            .count();
        // The newest active segment is never reusable: it holds the log's end.
        self.free.len() + reusable.min(self.active.len().saturating_sub(1))
    }

    /// Makes `sequence` active: writes its header into a slot (growing the file if no slot is
    /// spare) and syncs it before any block goes into the slot. The sync matters when the slot
    /// is reused: if the new header and the new blocks were made durable by one sync, a crash
    /// before it could keep the blocks and drop the header, leaving the old sequence's header
    /// over blocks it cannot read, and the log could not be opened. (Found by the engine's
    /// crash sweep.)
    pub fn activate(
        &mut self,
        file: &FileRef,
        log_id: u64,
        sequence: u64,
        nonce: u64,
    ) -> Result<ActivateOutcome, LogError> {
        debug_assert!(self.active.keys().next_back().is_none_or(|&last| last + 1 == sequence));
        let mut grown = false;
        let slot = match self.take_slot() {
            Some(slot) => slot,
            None => {
                self.grow(file, 1)?;
                grown = true;
                self.free.pop().ok_or_else(|| LogError::io("grow", "no slot after growing"))?
            }
        };
        let header = SegmentHeader { sequence, slot, nonce }.encode(log_id);
        file.write_all_at(&header, self.slot_offset(slot))
            .map_err(|e| LogError::from_io("write", e))?;
        file.sync_data().map_err(|e| LogError::from_io("sync", e))?;
        self.active.insert(sequence, Slot { index: slot, nonce });
        Ok(ActivateOutcome { grown, header_bytes: header.len() as u64 })
    }

    /// Adds `count` zero-filled slots at the end of the file and makes the growth durable. A
    /// growth that fails gives back what it added (best effort), so the file stays whole
    /// slots.
    pub fn grow(&mut self, file: &FileRef, count: u32) -> Result<(), LogError> {
        let new_slots = self.slots + count;
        let len = self.slot_offset(new_slots);
        if let Err(e) = file.preallocate(len) {
            let _ = file.set_len(self.slot_offset(self.slots));
            return Err(LogError::from_io("grow", e));
        }
        file.sync_all().map_err(|e| LogError::from_io("sync", e))?;
        for slot in (self.slots..new_slots).rev() {
            self.free.insert(0, slot);
        }
        self.slots = new_slots;
        Ok(())
    }

    /// Rebuilds the map from a file's slot headers: the active sequences are the longest run
    /// of consecutive sequences ending at the highest one found; every other slot is free.
    pub fn recover(file: &FileRef, segment_size: u64, log_id: u64) -> Result<SegmentMap, LogError> {
        let len = file.len().map_err(|e| LogError::from_io("read", e))?;
        let slots = u32::try_from(len.saturating_sub(FILE_HEADER_SIZE) / segment_size)
            .map_err(|_| LogError::Corrupt { lsn: 0, detail: "log file too large".into() })?;
        let mut map = SegmentMap::new(segment_size, slots);
        let mut found: BTreeMap<u64, Slot> = BTreeMap::new();
        let mut sector = [0u8; SECTOR as usize];
        for slot in 0..slots {
            file.read_exact_at(&mut sector, map.slot_offset(slot))
                .map_err(|e| LogError::from_io("read", e))?;
            if let Some(h) = SegmentHeader::decode(&sector, log_id, slot) {
                let entry = Slot { index: slot, nonce: h.nonce };
                if let Some(other) = found.insert(h.sequence, entry) {
                    return Err(LogError::Corrupt {
                        lsn: h.sequence * map.data_size,
                        detail: format!(
                            "segment sequence {} claimed by slots {} and {slot}",
                            h.sequence, other.index
                        ),
                    });
                }
            }
        }
        if let Some((&last, _)) = found.iter().next_back() {
            let mut first = last;
            while first > 0 && found.contains_key(&(first - 1)) {
                first -= 1;
            }
            for (&seq, &slot) in found.range(first..=last) {
                map.active.insert(seq, slot);
            }
        }
        let used: Vec<u32> = map.active.values().map(|s| s.index).collect();
        map.free = (0..slots).rev().filter(|s| !used.contains(s)).collect();
        Ok(map)
    }
}

/// What activating a segment did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ActivateOutcome {
    /// Whether the file had to grow on the flush path (no spare slot was ready).
    pub grown: bool,
    /// Bytes of the header written.
    pub header_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_map_to_offsets_within_active_segments() {
        let mut m = SegmentMap::new(4096, 4);
        m.active.insert(0, Slot { index: 0, nonce: 10 });
        m.active.insert(1, Slot { index: 2, nonce: 11 });
        assert_eq!(m.data_size, 3584);
        assert_eq!(m.locate(0), Some((FILE_HEADER_SIZE + 512, 10)));
        assert_eq!(m.locate(3584), Some((FILE_HEADER_SIZE + 2 * 4096 + 512, 11)));
        assert_eq!(m.locate(2 * 3584), None);
        assert_eq!(SegmentMap::room_in_segment(3584, 3584 + 512), 3072);
    }

    #[test]
    fn reuse_takes_the_oldest_segment_only_below_the_truncation_point() {
        let mut m = SegmentMap::new(4096, 2);
        m.free.clear();
        m.active.insert(5, Slot { index: 1, nonce: 1 });
        m.active.insert(6, Slot { index: 0, nonce: 2 });
        assert_eq!(m.spare_slots(), 0);
        assert_eq!(m.take_slot(), None);
        m.truncation_lsn = 6 * m.data_size;
        assert_eq!(m.spare_slots(), 1);
        assert_eq!(m.take_slot(), Some(1));
        assert_eq!(m.active.keys().copied().collect::<Vec<_>>(), vec![6]);
    }
}
