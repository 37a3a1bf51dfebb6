//! Physiological page changes: what a log record says happened to one page.
//!
//! Every change to a data page is described by a [`PageOp`], logged, and then applied by
//! [`PageOp::apply`]; recovery replays the same `apply`. Because the forward path and redo are
//! one function, a replayed page ends byte-for-byte in the state the original change produced,
//! provided the page was in the same state before; the page LSN guarantees that (an op is
//! replayed only on a page whose LSN is older than the op's record, and every older op has
//! been replayed first, in log order).
//!
//! The ops are physical in the page (slot numbers, whole records) and logical inside it
//! (an insert shifts the later slots, wherever the bytes physically go), as ARIES'
//! "physiological" logging. An [`PageOp::Image`] replaces the whole page: it formats new pages,
//! records the pages a split or a merge rewrites, and is the full-page image logged the first
//! time a page changes after a checkpoint began (see `docs/recovery.md`: it repairs a page
//! whose last write was torn by a crash).
//!
//! Encoding (little-endian; one op, inside a log record that may hold several):
//!
//! | size | field |
//! |---|---|
//! | 1 | tag: 1 image, 2 insert, 3 delete, 4 update, 5 truncate, 6 links |
//! | ... | per tag: image `u16 head_len, head, u16 slot_count, slots`; insert and update `u16 slot, u16 len, record`; delete `u16 slot`; truncate `u16 from_slot`; links `u32 prev, u32 next` (`u32::MAX` = none) |
//!
//! An image stores the page's head (header and records, up to `free_offset`) and its slot
//! array, not the free gap between them, so a half-full page costs about half a page.

use crate::page::{Page, PageError, PageId, HEADER_SIZE, PAGE_SIZE};
use crate::slotted::SLOT_SIZE;

const TAG_IMAGE: u8 = 1;
const TAG_INSERT: u8 = 2;
const TAG_DELETE: u8 = 3;
const TAG_UPDATE: u8 = 4;
const TAG_TRUNCATE: u8 = 5;
const TAG_LINKS: u8 = 6;

const NO_PAGE: u32 = u32::MAX;

/// Bytes of an insert's or update's encoding before its record: tag, slot, record length.
pub const RECORD_OP_HEADER: usize = 5;

/// The encoding of `PageOp::Insert { slot, record }` (of `PageOp::Update` if `insert` is
/// false) up to its record, for a `record_len`-byte record. Followed by the record, it is the
/// op's whole encoding, so a caller that builds the record behind room for this header logs
/// the op without copying the record again.
pub fn record_op_header(insert: bool, slot: u16, record_len: usize) -> [u8; RECORD_OP_HEADER] {
    let [s0, s1] = slot.to_le_bytes();
    // Record lengths are bounded by the page size, far below u16::MAX.
    let [l0, l1] = (record_len as u16).to_le_bytes();
    [if insert { TAG_INSERT } else { TAG_UPDATE }, s0, s1, l0, l1]
}

/// One change to one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOp<'a> {
    /// The page becomes this image (head bytes, slot-array bytes), see [`PageOp::image_of`].
    Image { head: &'a [u8], slots: &'a [u8] },
    /// A record is inserted as `slot`.
    Insert { slot: u16, record: &'a [u8] },
    /// The record in `slot` is deleted.
    Delete { slot: u16 },
    /// The record in `slot` is replaced.
    Update { slot: u16, record: &'a [u8] },
    /// Every record from `from_slot` on is deleted (the left half of a split).
    Truncate { from_slot: u16 },
    /// The page's sibling links change.
    Links { prev: Option<PageId>, next: Option<PageId> },
}

/// A malformed op in a log record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpDecodeError(pub String);

impl std::fmt::Display for OpDecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed page operation: {}", self.0)
    }
}

impl std::error::Error for OpDecodeError {}

impl<'a> PageOp<'a> {
    /// The image op of `page`, which should be compacted first so the head holds no holes.
    pub fn image_of(page: &'a Page) -> PageOp<'a> {
        let bytes = page.as_bytes();
        let slots = SLOT_SIZE * page.slot_count();
        PageOp::Image { head: &bytes[..page.free_offset()], slots: &bytes[PAGE_SIZE - slots..] }
    }

    /// Whether this op rewrites the whole page (so the page's old contents do not matter).
    pub fn is_image(&self) -> bool {
        matches!(self, PageOp::Image { .. })
    }

    /// The length of the op's encoding, so that a buffer can be sized once.
    pub fn encoded_len(&self) -> usize {
        match self {
            PageOp::Image { head, slots } => 5 + head.len() + slots.len(),
            PageOp::Insert { record, .. } | PageOp::Update { record, .. } => {
                RECORD_OP_HEADER + record.len()
            }
            PageOp::Delete { .. } | PageOp::Truncate { .. } => 3,
            PageOp::Links { .. } => 9,
        }
    }

    /// Appends the op's encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let u16le = |out: &mut Vec<u8>, v: usize| {
            // Lengths and slots are bounded by the page size, far below u16::MAX.
            out.extend_from_slice(&(v as u16).to_le_bytes());
        };
        match self {
            PageOp::Image { head, slots } => {
                out.push(TAG_IMAGE);
                u16le(out, head.len());
                out.extend_from_slice(head);
                u16le(out, slots.len() / SLOT_SIZE);
                out.extend_from_slice(slots);
            }
            PageOp::Insert { slot, record } | PageOp::Update { slot, record } => {
                let insert = matches!(self, PageOp::Insert { .. });
                out.extend_from_slice(&record_op_header(insert, *slot, record.len()));
                out.extend_from_slice(record);
            }
            PageOp::Delete { slot } => {
                out.push(TAG_DELETE);
                out.extend_from_slice(&slot.to_le_bytes());
            }
            PageOp::Truncate { from_slot } => {
                out.push(TAG_TRUNCATE);
                out.extend_from_slice(&from_slot.to_le_bytes());
            }
            PageOp::Links { prev, next } => {
                out.push(TAG_LINKS);
                out.extend_from_slice(&prev.unwrap_or(NO_PAGE).to_le_bytes());
                out.extend_from_slice(&next.unwrap_or(NO_PAGE).to_le_bytes());
            }
        }
    }

    /// Decodes one op from the front of `b`; returns it and the bytes after it.
    pub fn decode(b: &'a [u8]) -> Result<(PageOp<'a>, &'a [u8]), OpDecodeError> {
        let mut r = Reader(b);
        let op = match r.u8()? {
            TAG_IMAGE => {
                let head_len = r.u16()? as usize;
                let head = r.bytes(head_len)?;
                let slot_count = r.u16()? as usize;
                let slots = r.bytes(slot_count * SLOT_SIZE)?;
                if head.len() < HEADER_SIZE || head.len() + slots.len() > PAGE_SIZE {
                    return Err(OpDecodeError(format!(
                        "image of {} head and {} slot bytes",
                        head.len(),
                        slots.len()
                    )));
                }
                PageOp::Image { head, slots }
            }
            tag @ (TAG_INSERT | TAG_UPDATE) => {
                let slot = r.u16()?;
                let len = r.u16()? as usize;
                let record = r.bytes(len)?;
                if tag == TAG_INSERT {
                    PageOp::Insert { slot, record }
                } else {
                    PageOp::Update { slot, record }
                }
            }
            TAG_DELETE => PageOp::Delete { slot: r.u16()? },
            TAG_TRUNCATE => PageOp::Truncate { from_slot: r.u16()? },
            TAG_LINKS => {
                let page = |v: u32| (v != NO_PAGE).then_some(v);
                let prev = page(r.u32()?);
                let next = page(r.u32()?);
                PageOp::Links { prev, next }
            }
            tag => return Err(OpDecodeError(format!("unknown tag {tag}"))),
        };
        Ok((op, r.0))
    }

    /// Applies the op to `page` (whose id is kept). The caller sets the page LSN.
    pub fn apply(&self, page: &mut Page) -> Result<(), PageError> {
        match *self {
            PageOp::Image { head, slots } => {
                let id = page.page_id();
                let bytes = page.as_bytes_mut();
                bytes.fill(0);
                bytes[..head.len()].copy_from_slice(head);
                bytes[PAGE_SIZE - slots.len()..].copy_from_slice(slots);
                page.set_page_id(id);
                page.check()
            }
            PageOp::Insert { slot, record } => page.insert(usize::from(slot), record),
            PageOp::Delete { slot } => page.delete(usize::from(slot)),
            PageOp::Update { slot, record } => page.update(usize::from(slot), record),
            PageOp::Truncate { from_slot } => {
                for slot in (usize::from(from_slot)..page.slot_count()).rev() {
                    page.delete(slot)?;
                }
                Ok(())
            }
            PageOp::Links { prev, next } => {
                page.set_prev_page(prev);
                page.set_next_page(next);
                Ok(())
            }
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], OpDecodeError> {
        if self.0.len() < n {
            return Err(OpDecodeError(format!("{n} bytes wanted, {} left", self.0.len())));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, OpDecodeError> {
        Ok(self.bytes(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, OpDecodeError> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, OpDecodeError> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::PageType;

    fn roundtrip(op: &PageOp<'_>) {
        let mut buf = Vec::new();
        op.encode(&mut buf);
        assert_eq!(buf.len(), op.encoded_len());
        buf.push(0xAA);
        let (back, rest) = PageOp::decode(&buf).unwrap();
        assert_eq!(&back, op);
        assert_eq!(rest, &[0xAA]);
    }

    #[test]
    fn every_op_round_trips() {
        let mut page = Page::new(7, PageType::BTreeLeaf);
        page.push(b"alpha").unwrap();
        roundtrip(&PageOp::image_of(&page));
        roundtrip(&PageOp::Insert { slot: 3, record: b"xyz" });
        roundtrip(&PageOp::Update { slot: 1, record: b"" });
        roundtrip(&PageOp::Delete { slot: 9 });
        roundtrip(&PageOp::Truncate { from_slot: 4 });
        roundtrip(&PageOp::Links { prev: None, next: Some(12) });
    }

    #[test]
    fn a_record_header_and_its_record_are_the_encoding() {
        for (insert, op) in [
            (true, PageOp::Insert { slot: 300, record: b"a record" }),
            (false, PageOp::Update { slot: 2, record: b"" }),
        ] {
            let (PageOp::Insert { slot, record } | PageOp::Update { slot, record }) = op else {
                unreachable!()
            };
            let mut built = record_op_header(insert, slot, record.len()).to_vec();
            built.extend_from_slice(record);
            let mut encoded = Vec::new();
            op.encode(&mut encoded);
            assert_eq!(built, encoded);
        }
    }

    #[test]
    fn an_image_rebuilds_the_page_elsewhere() {
        let mut page = Page::new(7, PageType::BTreeLeaf);
        for r in [&b"one"[..], b"two", b"three"] {
            page.push(r).unwrap();
        }
        page.delete(1).unwrap();
        page.compact();
        let mut copy = Page::new(7, PageType::Free);
        PageOp::image_of(&page).apply(&mut copy).unwrap();
        assert_eq!(copy.as_bytes()[..], page.as_bytes()[..]);
    }

    #[test]
    fn truncated_or_unknown_input_is_an_error_not_a_panic() {
        let mut buf = Vec::new();
        PageOp::Insert { slot: 1, record: b"hello" }.encode(&mut buf);
        for n in 0..buf.len() {
            assert!(PageOp::decode(&buf[..n]).is_err());
        }
        assert!(PageOp::decode(&[99]).is_err());
    }
}
