//! The 8 KiB page and its 96-byte header.
//!
//! Every page Walden writes, whatever it holds, starts with the same header (modelled on SQL
//! Server's `m_pageId`, `m_type`, `m_level`, `m_prevPage`, `m_slotCnt`, `m_freeData`,
//! `m_freeCnt`, `m_lsn`... fields; the byte table is in `docs/format/page.md`). All integers
//! are little-endian at fixed offsets, so a header is read without parsing anything before it.
//!
//! # Why the page carries its own id, LSN and checksum
//!
//! * The **page LSN** is the LSN of the last log record that changed the page. The buffer pool
//!   must not write a page before the log is hardened up to it (the WAL rule), and redo skips a
//!   log record whose LSN is not newer than the page's. Both decisions need only the page.
//! * The **checksum** is a CRC32C of the whole page with the checksum field taken as zero. It
//!   catches bit rot and torn writes: the media model (see `walden_io`) makes only 512-byte
//!   sectors atomic, so a crash during an 8 KiB write can leave a page half old, half new.
//! * The checksum is **seeded with the page id the writer meant**, and the header repeats that
//!   id. A write that the disk or a bug sent to the wrong offset therefore fails
//!   verification at its new place; because the stored checksum does match the id in the
//!   header, [`Page::verify`] can say which page landed there ([`Corruption::Misdirected`])
//!   rather than just "bad checksum".
//!
//! # Invariants
//!
//! * A page is [sealed](Page::seal) immediately before it is written; a page read from disk is
//!   [verified](Page::verify) before anything else looks at it. Between the two the checksum
//!   field is stale and means nothing.
//! * An all-zero page was never written (files grow by zero-filled preallocation). That is not
//!   corruption, and [`PageError::NeverWritten`] keeps it apart: the allocator may hand such a
//!   page out, while a zero page that the allocation maps say is in use is a lost write.
//! * Page 0 of every file is the file header, so no page chain ever points to it: 0 in
//!   `prev_page` / `next_page` means "none".
//! * Reserved bytes are written as zero and ignored on read, so that a later header version can
//!   use them; the header version byte says which layout a page has.

use std::fmt;

/// The size of a page, the unit of I/O and caching.
pub const PAGE_SIZE: usize = 8192;

/// The size of the page header; the record area starts right after it.
pub const HEADER_SIZE: usize = 96;

/// The header layout this code writes, and the only one it reads.
pub const HEADER_VERSION: u8 = 1;

/// A page number within a data file: the page lives at byte `id * PAGE_SIZE`.
pub type PageId = u32;

/// A log sequence number, as `walden_log::Lsn` defines it (a byte position in the log
/// stream). The storage crate does not depend on the log crate; the two agree on `u64`.
pub type Lsn = u64;

// Header field offsets. `docs/format/page.md` has the same table; keep them in step.
const OFF_PAGE_ID: usize = 0; // u32
const OFF_VERSION: usize = 4; // u8
const OFF_TYPE: usize = 5; // u8
const OFF_FLAGS: usize = 6; // u16
const OFF_LEVEL: usize = 8; // u16
const OFF_INDEX_ID: usize = 10; // u16
const OFF_OBJECT_ID: usize = 12; // u32
const OFF_PREV: usize = 16; // u32
const OFF_NEXT: usize = 20; // u32
pub(crate) const OFF_SLOT_COUNT: usize = 24; // u16
pub(crate) const OFF_FREE_OFFSET: usize = 26; // u16
pub(crate) const OFF_FREE_BYTES: usize = 28; // u16
                                             // 30..32 reserved
const OFF_LSN: usize = 32; // u64
const OFF_CHECKSUM: usize = 40; // u32
                                // 44..96 reserved

/// What a page holds. The discriminants are the on-disk type byte; 0 is never a valid type, so
/// that a zeroed header cannot pass for a page of some type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PageType {
    /// Page 0 of every data file: magic, format version, page size, database id.
    FileHeader = 1,
    /// The database boot page (SQL Server's page 9 of the primary file): where the catalog
    /// and the last checkpoint are found.
    Boot = 2,
    /// An allocation bitmap (like SQL Server's GAM): one bit per extent or page of an interval.
    Allocation = 3,
    /// A B-tree page above the leaves (`level` > 0): separator keys and child page ids.
    BTreeInternal = 4,
    /// A B-tree leaf (`level` = 0): index or clustered-table rows in key order.
    BTreeLeaf = 5,
    /// A heap data page: unordered rows.
    Heap = 6,
    /// A large-object page: the overflow part of a row or a LOB value.
    Overflow = 7,
    /// A system catalog page: the metadata of tables, indexes and files.
    Catalog = 8,
    /// An allocated-then-freed page, kept formatted so that its id and LSN stay meaningful.
    Free = 9,
}

impl PageType {
    /// Every page type, in type-byte order.
    pub const ALL: [PageType; 9] = [
        PageType::FileHeader,
        PageType::Boot,
        PageType::Allocation,
        PageType::BTreeInternal,
        PageType::BTreeLeaf,
        PageType::Heap,
        PageType::Overflow,
        PageType::Catalog,
        PageType::Free,
    ];

    /// The page type with this type byte, if any.
    pub fn from_u8(byte: u8) -> Option<PageType> {
        PageType::ALL.into_iter().find(|t| *t as u8 == byte)
    }
}

/// What verification found wrong with a page that was written once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Corruption {
    /// The stored checksum does not match the contents: bit rot or a torn write.
    ChecksumMismatch {
        /// The checksum in the header.
        stored: u32,
        /// The checksum of the contents, seeded with the expected page id.
        computed: u32,
    },
    /// A well-formed page of another id is where this one should be: a misdirected write (or
    /// a lost write of this page plus a stray write of that one).
    Misdirected {
        /// The page id in the header, which the stored checksum matches.
        found: PageId,
    },
    /// The header layout version is not one this code reads.
    UnsupportedHeaderVersion(u8),
    /// The type byte names no page type.
    UnknownPageType(u8),
    /// The slot count, free-space offset or free-byte count is impossible.
    Header(String),
    /// The record area is inconsistent (found by [`Page::check`]).
    Records(String),
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Corruption::ChecksumMismatch { stored, computed } => {
                write!(f, "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")
            }
            Corruption::Misdirected { found } => {
                write!(f, "misdirected write: found a valid image of page {found}")
            }
            Corruption::UnsupportedHeaderVersion(v) => write!(f, "unsupported header version {v}"),
            Corruption::UnknownPageType(t) => write!(f, "unknown page type {t}"),
            Corruption::Header(detail) => write!(f, "inconsistent header: {detail}"),
            Corruption::Records(detail) => write!(f, "inconsistent record area: {detail}"),
        }
    }
}

/// What can go wrong with a page: on verification, or in a record operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageError {
    /// The page is all zeros: it was allocated in the file but never written.
    NeverWritten {
        /// The page that was read.
        page_id: PageId,
    },
    /// The page was written but is damaged.
    Corrupt {
        /// The page that was expected (the location read, not what the header claims).
        page_id: PageId,
        /// What is wrong.
        detail: Corruption,
    },
    /// A slot number at or past the slot count (or, for insert, past it).
    SlotOutOfRange {
        /// The slot asked for.
        slot: usize,
        /// The page's slot count.
        slot_count: usize,
    },
    /// The record does not fit in the page's free space, even after compaction.
    PageFull {
        /// The bytes the operation needs (record and, for an insert, its slot).
        needed: usize,
        /// The page's free bytes.
        free: usize,
    },
    /// The record is larger than any page can hold.
    RecordTooLarge {
        /// Its length.
        len: usize,
        /// [`MAX_RECORD_LEN`](crate::MAX_RECORD_LEN).
        max: usize,
    },
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageError::NeverWritten { page_id } => write!(f, "page {page_id} was never written"),
            PageError::Corrupt { page_id, detail } => {
                write!(f, "page {page_id} is corrupt: {detail}")
            }
            PageError::SlotOutOfRange { slot, slot_count } => {
                write!(f, "slot {slot} out of range (slot count {slot_count})")
            }
            PageError::PageFull { needed, free } => {
                write!(f, "page full: {needed} bytes needed, {free} free")
            }
            PageError::RecordTooLarge { len, max } => {
                write!(f, "record of {len} bytes exceeds the maximum of {max}")
            }
        }
    }
}

impl std::error::Error for PageError {}

/// One 8 KiB page: its bytes, with typed access to the header.
///
/// The bytes are the on-disk image: there is no decoded copy of the header to keep in step.
#[derive(Clone, PartialEq, Eq)]
pub struct Page {
    bytes: Box<Image>,
}

/// A page's bytes, aligned to the system's 4 KiB pages so that a buffer frame's image covers
/// exactly two of them and can be handed back to the kernel whole
/// ([`walden_io::release_memory`], `docs/memory.md`).
#[derive(Clone, PartialEq, Eq)]
#[repr(C, align(4096))]
struct Image([u8; PAGE_SIZE]);

impl Page {
    /// A formatted, empty page: header version, id and type set, no records, all of the record
    /// area free, everything else zero.
    pub fn new(page_id: PageId, page_type: PageType) -> Page {
        let mut page = Page::zeroed();
        page.bytes.0[OFF_VERSION] = HEADER_VERSION;
        page.set_page_id(page_id);
        page.set_page_type(page_type);
        page.set_u16(OFF_FREE_OFFSET, HEADER_SIZE as u16);
        page.set_u16(OFF_FREE_BYTES, (PAGE_SIZE - HEADER_SIZE) as u16);
        page
    }

    /// An all-zero buffer, to read a page into. It is not a valid page until written over.
    pub fn zeroed() -> Page {
        Page { bytes: Box::new(Image([0; PAGE_SIZE])) }
    }

    /// A copy of bytes as they were read, unverified: call [`Page::verify`] before trusting
    /// them.
    pub fn from_bytes(bytes: &[u8; PAGE_SIZE]) -> Page {
        Page { bytes: Box::new(Image(*bytes)) }
    }

    /// The page image.
    pub fn as_bytes(&self) -> &[u8; PAGE_SIZE] {
        &self.bytes.0
    }

    /// The page image, for reading into and for tests that damage pages. Changing it bypasses
    /// every invariant this crate keeps.
    pub fn as_bytes_mut(&mut self) -> &mut [u8; PAGE_SIZE] {
        &mut self.bytes.0
    }

    /// Whether every byte is zero (the page was never written).
    pub fn is_zeroed(&self) -> bool {
        self.bytes.0.iter().all(|&b| b == 0)
    }

    /// The page's own id: where it belongs in its file.
    pub fn page_id(&self) -> PageId {
        self.u32_at(OFF_PAGE_ID)
    }

    /// Sets the page id.
    pub fn set_page_id(&mut self, id: PageId) {
        self.set_u32(OFF_PAGE_ID, id);
    }

    /// The header layout version.
    pub fn header_version(&self) -> u8 {
        self.bytes.0[OFF_VERSION]
    }

    /// The page type, or `None` if the type byte is unknown (only on an unverified page).
    pub fn page_type(&self) -> Option<PageType> {
        PageType::from_u8(self.bytes.0[OFF_TYPE])
    }

    /// Sets the page type.
    pub fn set_page_type(&mut self, page_type: PageType) {
        self.bytes.0[OFF_TYPE] = page_type as u8;
    }

    /// Flag bits. The page layer defines none; they belong to the layer that owns the page type.
    pub fn flags(&self) -> u16 {
        self.u16_at(OFF_FLAGS)
    }

    /// Sets the flag bits.
    pub fn set_flags(&mut self, flags: u16) {
        self.set_u16(OFF_FLAGS, flags);
    }

    /// The B-tree level: 0 for leaves, counting up towards the root.
    pub fn level(&self) -> u16 {
        self.u16_at(OFF_LEVEL)
    }

    /// Sets the B-tree level.
    pub fn set_level(&mut self, level: u16) {
        self.set_u16(OFF_LEVEL, level);
    }

    /// The object (table) the page belongs to; 0 for none.
    pub fn object_id(&self) -> u32 {
        self.u32_at(OFF_OBJECT_ID)
    }

    /// Sets the object id.
    pub fn set_object_id(&mut self, id: u32) {
        self.set_u32(OFF_OBJECT_ID, id);
    }

    /// The index of the object the page belongs to (0 heap, 1 clustered, like SQL Server).
    pub fn index_id(&self) -> u16 {
        self.u16_at(OFF_INDEX_ID)
    }

    /// Sets the index id.
    pub fn set_index_id(&mut self, id: u16) {
        self.set_u16(OFF_INDEX_ID, id);
    }

    /// The previous page at the same level of a chain, if any.
    pub fn prev_page(&self) -> Option<PageId> {
        Some(self.u32_at(OFF_PREV)).filter(|&id| id != 0)
    }

    /// Sets the previous page. `Some(0)` is the same as `None`: page 0 is never in a chain.
    pub fn set_prev_page(&mut self, id: Option<PageId>) {
        self.set_u32(OFF_PREV, id.unwrap_or(0));
    }

    /// The next page at the same level of a chain, if any.
    pub fn next_page(&self) -> Option<PageId> {
        Some(self.u32_at(OFF_NEXT)).filter(|&id| id != 0)
    }

    /// Sets the next page. `Some(0)` is the same as `None`.
    pub fn set_next_page(&mut self, id: Option<PageId>) {
        self.set_u32(OFF_NEXT, id.unwrap_or(0));
    }

    /// The number of slots in the slot array.
    pub fn slot_count(&self) -> usize {
        usize::from(self.u16_at(OFF_SLOT_COUNT))
    }

    /// Where the next record goes: one past the highest byte of the record area in use.
    pub fn free_offset(&self) -> usize {
        usize::from(self.u16_at(OFF_FREE_OFFSET))
    }

    /// All free bytes of the page: the contiguous gap between the records and the slot array,
    /// plus the holes left by deletes and shrinking updates.
    pub fn free_bytes(&self) -> usize {
        usize::from(self.u16_at(OFF_FREE_BYTES))
    }

    /// The LSN of the last log record that changed the page.
    pub fn page_lsn(&self) -> Lsn {
        let mut b = [0; 8];
        b.copy_from_slice(&self.bytes.0[OFF_LSN..OFF_LSN + 8]);
        Lsn::from_le_bytes(b)
    }

    /// Sets the page LSN. Whoever changes the page under a log record sets it to that record's
    /// LSN; it never goes backwards, except when a page is formatted anew.
    pub fn set_page_lsn(&mut self, lsn: Lsn) {
        self.bytes.0[OFF_LSN..OFF_LSN + 8].copy_from_slice(&lsn.to_le_bytes());
    }

    /// The checksum field as stored (meaningful only right after [`Page::seal`] or a read).
    pub fn stored_checksum(&self) -> u32 {
        self.u32_at(OFF_CHECKSUM)
    }

    /// The checksum of the page as if it lived at `page_id`: CRC32C of the id (4 bytes,
    /// little-endian) followed by the whole page with the checksum field read as zeros.
    pub fn compute_checksum(&self, page_id: PageId) -> u32 {
        let seed = crc32c::crc32c(&page_id.to_le_bytes());
        let crc = crc32c::crc32c_append(seed, &self.bytes.0[..OFF_CHECKSUM]);
        let crc = crc32c::crc32c_append(crc, &[0; 4]);
        crc32c::crc32c_append(crc, &self.bytes.0[OFF_CHECKSUM + 4..])
    }

    /// Writes the checksum, seeded with the page's own id. Call it last before writing the page:
    /// any change after it makes the page fail verification.
    pub fn seal(&mut self) {
        let crc = self.compute_checksum(self.page_id());
        self.set_u32(OFF_CHECKSUM, crc);
    }

    /// Checks a page read from the location of `page_id`: not all zeros, checksum, page id,
    /// header version, page type and the free-space fields. The record area itself is not
    /// walked (that is [`Page::check`], which costs a sort); its consistency rests on the
    /// checksum and on every writer going through the record operations.
    pub fn verify(&self, page_id: PageId) -> Result<(), PageError> {
        let corrupt = |detail| PageError::Corrupt { page_id, detail };
        if self.is_zeroed() {
            return Err(PageError::NeverWritten { page_id });
        }
        let stored = self.stored_checksum();
        let computed = self.compute_checksum(page_id);
        let found = self.page_id();
        if stored != computed {
            // A valid image of another page: tell the misdirected write apart from damage.
            if found != page_id && self.compute_checksum(found) == stored {
                return Err(corrupt(Corruption::Misdirected { found }));
            }
            return Err(corrupt(Corruption::ChecksumMismatch { stored, computed }));
        }
        if found != page_id {
            // Only reachable if a page was sealed with an id other than its own: still wrong.
            return Err(corrupt(Corruption::Misdirected { found }));
        }
        if self.header_version() != HEADER_VERSION {
            return Err(corrupt(Corruption::UnsupportedHeaderVersion(self.header_version())));
        }
        if self.page_type().is_none() {
            return Err(corrupt(Corruption::UnknownPageType(self.bytes.0[OFF_TYPE])));
        }
        self.check_header().map_err(corrupt)
    }

    pub(crate) fn u16_at(&self, off: usize) -> u16 {
        u16::from_le_bytes([self.bytes.0[off], self.bytes.0[off + 1]])
    }

    pub(crate) fn set_u16(&mut self, off: usize, v: u16) {
        self.bytes.0[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }

    fn u32_at(&self, off: usize) -> u32 {
        let b = &self.bytes.0;
        u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
    }

    fn set_u32(&mut self, off: usize, v: u32) {
        self.bytes.0[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// Prints the header, not 8 KiB of bytes.
impl fmt::Debug for Page {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Page")
            .field("page_id", &self.page_id())
            .field("type", &self.page_type())
            .field("level", &self.level())
            .field("object_id", &self.object_id())
            .field("index_id", &self.index_id())
            .field("prev", &self.prev_page())
            .field("next", &self.next_page())
            .field("slot_count", &self.slot_count())
            .field("free_offset", &self.free_offset())
            .field("free_bytes", &self.free_bytes())
            .field("lsn", &self.page_lsn())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Page {
        let mut p = Page::new(42, PageType::BTreeLeaf);
        p.set_level(0);
        p.set_object_id(7);
        p.set_index_id(1);
        p.set_prev_page(Some(41));
        p.set_next_page(None);
        p.set_page_lsn(0x0102_0304_0506_0708);
        p.seal();
        p
    }

    #[test]
    fn header_fields_round_trip() {
        let mut p = sample();
        assert_eq!(p.page_id(), 42);
        assert_eq!(p.page_type(), Some(PageType::BTreeLeaf));
        assert_eq!(p.object_id(), 7);
        assert_eq!(p.index_id(), 1);
        assert_eq!(p.prev_page(), Some(41));
        assert_eq!(p.next_page(), None);
        assert_eq!(p.page_lsn(), 0x0102_0304_0506_0708);
        assert_eq!(p.free_offset(), HEADER_SIZE);
        assert_eq!(p.free_bytes(), PAGE_SIZE - HEADER_SIZE);
        p.set_flags(0xBEEF);
        p.set_level(3);
        assert_eq!((p.flags(), p.level()), (0xBEEF, 3));
        // Fixed offsets, little-endian: the LSN's low byte comes first at 32.
        assert_eq!(&p.as_bytes()[32..40], &[8, 7, 6, 5, 4, 3, 2, 1]);
    }

    #[test]
    fn type_bytes_round_trip_and_zero_is_invalid() {
        for t in PageType::ALL {
            assert_eq!(PageType::from_u8(t as u8), Some(t));
        }
        assert_eq!(PageType::from_u8(0), None);
        assert_eq!(PageType::from_u8(10), None);
    }

    #[test]
    fn sealed_page_verifies() {
        assert_eq!(sample().verify(42), Ok(()));
    }

    #[test]
    fn any_change_after_seal_is_caught() {
        // Every byte, including reserved ones: the checksum covers the whole page.
        for off in [0, 5, 30, 39, 40, 43, 44, 95, 96, 4000, PAGE_SIZE - 1] {
            let mut p = sample();
            p.as_bytes_mut()[off] ^= 0x10;
            match p.verify(42) {
                Err(PageError::Corrupt { page_id: 42, .. }) => {}
                other => panic!("flip at {off}: {other:?}"),
            }
        }
    }

    #[test]
    fn misdirected_page_is_named() {
        let p = sample();
        assert_eq!(
            p.verify(43),
            Err(PageError::Corrupt { page_id: 43, detail: Corruption::Misdirected { found: 42 } })
        );
    }

    #[test]
    fn zero_page_is_never_written_not_corrupt() {
        assert_eq!(Page::zeroed().verify(5), Err(PageError::NeverWritten { page_id: 5 }));
    }

    #[test]
    fn unknown_type_and_version_are_reported() {
        let mut p = sample();
        p.as_bytes_mut()[OFF_TYPE] = 200;
        p.seal();
        assert_eq!(
            p.verify(42),
            Err(PageError::Corrupt { page_id: 42, detail: Corruption::UnknownPageType(200) })
        );
        let mut p = sample();
        p.as_bytes_mut()[OFF_VERSION] = 9;
        p.seal();
        assert!(matches!(
            p.verify(42),
            Err(PageError::Corrupt { detail: Corruption::UnsupportedHeaderVersion(9), .. })
        ));
    }

    #[test]
    fn impossible_free_space_fields_are_reported() {
        let mut p = sample();
        p.set_u16(OFF_FREE_OFFSET, 10); // inside the header
        p.seal();
        assert!(matches!(
            p.verify(42),
            Err(PageError::Corrupt { detail: Corruption::Header(_), .. })
        ));
    }
}
