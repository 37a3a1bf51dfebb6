//! Reading the log back: finding its end at open, and scanning records for recovery.
//!
//! Finding the end (`find_end`) walks blocks from the oldest active segment: the block at
//! position `p` must be valid *for `p`* (see `format`), and the next one starts at the next
//! sector boundary after it. The first position without a valid block is the end. Then it
//! looks at every sector after the end, in every active segment, for a block that is valid
//! for its own position:
//!
//! * none: the end is clean, or a torn tail of the last write;
//! * only blocks whose `flush_lsn` is at or before the end: they were carried by the same,
//!   unfinished write as the damage, so it is a torn tail; they are zeroed (and synced) so
//!   that no later write can ever line up with them;
//! * a block whose `flush_lsn` is after the end: a later write completed after the damaged one,
//!   so hardened log is damaged: the log refuses to open ([`LogError::Corrupt`]).

use std::collections::BTreeMap;

use walden_io::FileRef;

use crate::format::{
    decode_record_header, round_up_to_sector, BlockHeader, CommitBody, Fragment, RecordKind,
    BLOCK_HEADER_SIZE, MAX_BLOCK_SIZE, RECORD_HEADER_SIZE, SECTOR,
};
use crate::segment::{SegmentMap, Slot};
use crate::{LogError, Lsn};

/// Reads the block at stream position `p` into `buf` if one is valid there.
pub(crate) fn read_block(
    file: &FileRef,
    map: &SegmentMap,
    p: Lsn,
    buf: &mut Vec<u8>,
) -> Result<Option<BlockHeader>, LogError> {
    let Some((offset, salt)) = map.locate(p) else { return Ok(None) };
    let room = (MAX_BLOCK_SIZE as u64).min(SegmentMap::room_in_segment(map.data_size, p));
    buf.resize(SECTOR as usize, 0);
    file.read_exact_at(&mut buf[..SECTOR as usize], offset)
        .map_err(|e| LogError::from_io("read", e))?;
    let Some(h) = BlockHeader::peek(buf) else { return Ok(None) };
    let used = u64::from(h.used);
    if h.lsn != p || used < BLOCK_HEADER_SIZE as u64 || round_up_to_sector(used) > room {
        return Ok(None);
    }
    if used > SECTOR {
        buf.resize(used as usize, 0);
        file.read_exact_at(&mut buf[SECTOR as usize..], offset + SECTOR)
            .map_err(|e| LogError::from_io("read", e))?;
    }
    Ok(BlockHeader::checksum_ok(&buf[..used as usize], salt, offset).then_some(h))
}

/// The result of finding the log's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EndScan {
    /// Where the log ends: the next block goes here.
    pub end: Lsn,
    /// Blocks read.
    pub blocks: u64,
    /// The exclusive end of the furthest torn-tail remnant found after `end` (zeroed before
    /// the log accepts writes), if any.
    pub remnants_end: Option<Lsn>,
}

/// Walks the blocks from the oldest active segment to the end, then checks what lies after.
pub(crate) fn find_end(file: &FileRef, map: &SegmentMap) -> Result<EndScan, LogError> {
    let Some(start) = map.start_lsn() else {
        return Ok(EndScan { end: 0, blocks: 0, remnants_end: None });
    };
    let mut buf = Vec::with_capacity(MAX_BLOCK_SIZE);
    let mut p = start;
    let mut blocks = 0;
    while let Some(h) = read_block(file, map, p, &mut buf)? {
        blocks += 1;
        p += round_up_to_sector(u64::from(h.used));
    }
    let remnants_end = check_after_end(file, map, p, &mut buf)?;
    Ok(EndScan { end: p, blocks, remnants_end })
}

/// Looks for valid blocks after the end `p`; see the module docs.
fn check_after_end(
    file: &FileRef,
    map: &SegmentMap,
    end: Lsn,
    buf: &mut Vec<u8>,
) -> Result<Option<Lsn>, LogError> {
    let mut remnants_end = None;
    let last_position = map.active.keys().next_back().map_or(0, |s| (s + 1) * map.data_size);
    let mut q = end + SECTOR;
    while q < last_position {
        if q.is_multiple_of(map.data_size) && map.locate(q).is_none() {
            q += map.data_size;
            continue;
        }
        match read_block(file, map, q, buf)? {
            Some(h) if h.flush_lsn > end => {
                return Err(LogError::Corrupt {
                    lsn: end,
                    detail: format!(
                        "no valid log block at LSN {end}, but a later write's block is valid at \
                         LSN {q}: hardened log is damaged"
                    ),
                });
            }
            Some(h) => {
                let next = q + round_up_to_sector(u64::from(h.used));
                remnants_end = Some(next);
                q = next;
            }
            None => q += SECTOR,
        }
    }
    Ok(remnants_end)
}

/// One log record, as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// The record's LSN: the stream position just past its last byte.
    pub lsn: Lsn,
    /// What it is.
    pub kind: RecordKind,
    /// The transaction that wrote it.
    pub txn: u64,
    /// Its body (for a commit, the encoded [`CommitBody`]).
    pub body: Vec<u8>,
}

impl LogRecord {
    /// The commit details, if this is a commit record.
    pub fn commit(&self) -> Option<CommitBody> {
        if self.kind == RecordKind::Commit {
            CommitBody::decode(&self.body)
        } else {
            None
        }
    }

    /// Bytes the record takes in the log: one record header and the body (a fragmented
    /// record's further fragment headers are not counted).
    pub fn len(&self) -> usize {
        RECORD_HEADER_SIZE + self.body.len()
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.body.is_empty()
    }
}

/// Iterates over the records of the hardened log, in log order.
///
/// It reads through a snapshot of the segment map taken when it was made, up to the hardened
/// LSN of that moment; the caller must not let segments it still reads be reused (truncation
/// is the caller's decision, so this is the caller's invariant).
#[derive(Debug)]
pub struct LogScanner {
    file: FileRef,
    map: SegmentMap,
    /// Only records whose LSN is greater than this are returned.
    after: Lsn,
    /// The position of the next block to read.
    next_block: Lsn,
    /// Where reading stops.
    end: Lsn,
    block: Vec<u8>,
    /// Where in `block` the next record header is; `None` when a new block must be read.
    cursor: Option<(Lsn, usize, usize)>,
    /// A fragmented record being put together: kind, txn, body so far.
    partial: Option<(RecordKind, u64, Vec<u8>)>,
    failed: bool,
}

impl LogScanner {
    pub(crate) fn new(
        file: FileRef,
        active: BTreeMap<u64, Slot>,
        segment_size: u64,
        after: Lsn,
        end: Lsn,
        max_record_span: u64,
    ) -> LogScanner {
        let mut map = SegmentMap::new(segment_size, 0);
        map.active = active;
        map.free.clear();
        let data_size = map.data_size;
        // Start a whole record's span before `after`, at a segment start (where a block always
        // begins), so a record ending after `after` is read from its first fragment.
        let first = map.start_lsn().unwrap_or(0);
        let from = after.saturating_sub(max_record_span).max(first);
        let next_block = from - from % data_size;
        LogScanner {
            file,
            map,
            after,
            next_block: next_block.max(first),
            end,
            block: Vec::with_capacity(MAX_BLOCK_SIZE),
            cursor: None,
            partial: None,
            failed: false,
        }
    }

    fn corrupt(&mut self, lsn: Lsn, detail: &str) -> Option<Result<LogRecord, LogError>> {
        self.failed = true;
        Some(Err(LogError::Corrupt { lsn, detail: detail.to_string() }))
    }
}

impl Iterator for LogScanner {
    type Item = Result<LogRecord, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.failed {
                return None;
            }
            let Some((block_lsn, at, used)) = self.cursor else {
                if self.next_block >= self.end {
                    return None;
                }
                let p = self.next_block;
                match read_block(&self.file, &self.map, p, &mut self.block) {
                    Ok(Some(h)) => {
                        self.cursor = Some((p, BLOCK_HEADER_SIZE, h.used as usize));
                        self.next_block = p + round_up_to_sector(u64::from(h.used));
                    }
                    Ok(None) => return self.corrupt(p, "no valid block below the hardened LSN"),
                    Err(e) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                }
                continue;
            };
            if at + RECORD_HEADER_SIZE > used {
                self.cursor = None;
                continue;
            }
            let Some(h) = decode_record_header(&self.block[at..]) else {
                return self.corrupt(block_lsn + at as u64, "bad record header in a valid block");
            };
            let body_end = at + RECORD_HEADER_SIZE + h.len as usize;
            if body_end > used {
                return self.corrupt(block_lsn + at as u64, "record runs past its block");
            }
            let body = &self.block[at + RECORD_HEADER_SIZE..body_end];
            self.cursor = Some((block_lsn, body_end, used));
            let lsn = block_lsn + body_end as u64;
            let whole = match (h.fragment, self.partial.take()) {
                (Fragment::Full, None) => Some((h.kind, h.txn, body.to_vec())),
                (Fragment::First, None) => {
                    self.partial = Some((h.kind, h.txn, body.to_vec()));
                    None
                }
                (Fragment::Middle | Fragment::Last, Some((kind, txn, mut so_far))) => {
                    if kind != h.kind || txn != h.txn {
                        return self.corrupt(lsn, "fragment does not continue its record");
                    }
                    so_far.extend_from_slice(body);
                    if h.fragment == Fragment::Last {
                        Some((kind, txn, so_far))
                    } else {
                        self.partial = Some((kind, txn, so_far));
                        None
                    }
                }
                // A continuation whose start lies before where reading began: skip it.
                (Fragment::Middle | Fragment::Last, None) => None,
                // A record that starts a block while an earlier one is unfinished: the writer
                // abandoned that record, which happens only when a crash lost the blocks that
                // continued it (they were never hardened, so neither was the record) and the
                // log was reopened and written after it. Every block passed its checksum for
                // its position, so this is the writer's doing, not damage.
                (Fragment::Full, Some(_)) if at == BLOCK_HEADER_SIZE => {
                    Some((h.kind, h.txn, body.to_vec()))
                }
                (Fragment::First, Some(_)) if at == BLOCK_HEADER_SIZE => {
                    self.partial = Some((h.kind, h.txn, body.to_vec()));
                    None
                }
                (Fragment::Full | Fragment::First, Some(_)) => {
                    return self.corrupt(lsn, "record starts inside an unfinished record");
                }
            };
            if let Some((kind, txn, body)) = whole {
                if lsn > self.after {
                    return Some(Ok(LogRecord { lsn, kind, txn, body }));
                }
            }
        }
    }
}
