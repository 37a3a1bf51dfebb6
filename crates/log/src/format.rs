//! The on-disk format of a log file: file header, segment headers, blocks and records.
//!
//! The byte layout is documented, with offset tables and a worked example, in
//! [`docs/format/log.md`](../../../docs/format/log.md); this module is its only
//! implementation. All integers are little-endian.
//!
//! Invariants the rest of the crate relies on:
//! 1. A block starts on a sector boundary of the segment's data area, is at most
//!    [`MAX_BLOCK_SIZE`] bytes, never crosses a segment's end, and occupies whole sectors;
//!    the next block starts at the next sector boundary after its last used byte.
//! 2. A block is valid at stream position `p` only if its magic matches, its `lsn` field equals
//!    `p`, its length is sane for `p`, and its CRC32C (which covers the segment's nonce, the
//!    block's file offset and every used byte of the block) matches. So a torn write (CRC), a
//!    stale block from an earlier use of the segment (`lsn`, nonce), a block written to the
//!    wrong place (offset in the CRC) and a block from another log file (the nonce, which the
//!    segment header binds to the log id) are all rejected.
//! 3. Records are packed back to back after the block header; a record larger than the room
//!    left is split into fragments (First, Middle..., Last), each in its own block.

use crate::LogError;

/// Sector size: the unit of atomic writes and of block sizes.
pub const SECTOR: u64 = walden_io::SECTOR_SIZE as u64;
/// The largest log block, as in SQL Server: 60 KB.
pub const MAX_BLOCK_SIZE: usize = 60 * 1024;
/// Bytes reserved at the start of the file for the file header (one page, so segments start
/// page-aligned).
pub const FILE_HEADER_SIZE: u64 = 4096;
/// Size of a block header.
pub const BLOCK_HEADER_SIZE: usize = 32;
/// Size of a record (fragment) header.
pub const RECORD_HEADER_SIZE: usize = 16;
/// Size of a commit record's body.
pub const COMMIT_BODY_SIZE: usize = 16;

const FILE_MAGIC: &[u8; 8] = b"WALDNLOG";
const FORMAT_VERSION: u32 = 1;
const SEGMENT_MAGIC: u32 = u32::from_le_bytes(*b"WSEG");
const BLOCK_MAGIC: u32 = u32::from_le_bytes(*b"WBLK");

/// Rounds `n` up to a whole number of sectors.
pub fn round_up_to_sector(n: u64) -> u64 {
    n.div_ceil(SECTOR) * SECTOR
}

/// The file header, in the first sector of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// Bytes per segment, its header sector included; a multiple of [`SECTOR`].
    pub segment_size: u64,
    /// A random number chosen when the file is created, mixed into every block's checksum.
    pub log_id: u64,
    /// When the file was created, microseconds since the Unix epoch.
    pub created_us: u64,
}

impl FileHeader {
    /// Encodes the header into one sector.
    pub fn encode(&self) -> [u8; SECTOR as usize] {
        let mut s = [0u8; SECTOR as usize];
        s[0..8].copy_from_slice(FILE_MAGIC);
        s[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        s[12..16].copy_from_slice(&(SECTOR as u32).to_le_bytes());
        s[16..24].copy_from_slice(&self.segment_size.to_le_bytes());
        s[24..32].copy_from_slice(&self.log_id.to_le_bytes());
        s[32..40].copy_from_slice(&self.created_us.to_le_bytes());
        let crc = crc32c::crc32c(&s[0..508]);
        s[508..512].copy_from_slice(&crc.to_le_bytes());
        s
    }

    /// Decodes and checks a file header.
    pub fn decode(s: &[u8]) -> Result<FileHeader, LogError> {
        let bad =
            |why: &str| LogError::Corrupt { lsn: 0, detail: format!("log file header: {why}") };
        if s.len() < SECTOR as usize || &s[0..8] != FILE_MAGIC {
            return Err(bad("not a Walden log file (bad magic)"));
        }
        if le_u32(s, 508) != crc32c::crc32c(&s[0..508]) {
            return Err(bad("checksum mismatch"));
        }
        let version = le_u32(s, 8);
        if version != FORMAT_VERSION {
            return Err(bad(&format!(
                "format version {version}, this build reads {FORMAT_VERSION}"
            )));
        }
        let sector = le_u32(s, 12);
        if u64::from(sector) != SECTOR {
            return Err(bad(&format!("sector size {sector}, expected {SECTOR}")));
        }
        let segment_size = le_u64(s, 16);
        if segment_size < 2 * SECTOR || !segment_size.is_multiple_of(SECTOR) {
            return Err(bad(&format!("segment size {segment_size} is not a multiple of {SECTOR}")));
        }
        Ok(FileHeader { segment_size, log_id: le_u64(s, 24), created_us: le_u64(s, 32) })
    }
}

/// A segment header, in the first sector of each segment. A segment whose header does not
/// decode is free (never used, or its header write was lost in a crash).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The segment's sequence number: it holds stream positions
    /// `[sequence * data_size, (sequence + 1) * data_size)`.
    pub sequence: u64,
    /// The slot (position in the file) the header was written for.
    pub slot: u32,
    /// A random number chosen each time a slot is (re)activated and mixed into the checksum of
    /// every block written in it, so blocks left from an earlier use of the slot, even with the
    /// same sequence after a crash lost the earlier activation, never verify.
    pub nonce: u64,
}

impl SegmentHeader {
    /// Encodes the header into one sector.
    pub fn encode(&self, log_id: u64) -> [u8; SECTOR as usize] {
        let mut s = [0u8; SECTOR as usize];
        s[0..4].copy_from_slice(&SEGMENT_MAGIC.to_le_bytes());
        s[4..8].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        s[8..16].copy_from_slice(&log_id.to_le_bytes());
        s[16..20].copy_from_slice(&self.slot.to_le_bytes());
        s[24..32].copy_from_slice(&self.sequence.to_le_bytes());
        s[32..40].copy_from_slice(&self.nonce.to_le_bytes());
        let crc = crc32c::crc32c(&s[0..40]);
        s[40..44].copy_from_slice(&crc.to_le_bytes());
        s
    }

    /// Decodes a segment header read from `slot`; `None` if the sector holds no valid header
    /// for this log and slot.
    pub fn decode(s: &[u8], log_id: u64, slot: u32) -> Option<SegmentHeader> {
        if s.len() < 44
            || le_u32(s, 0) != SEGMENT_MAGIC
            || le_u32(s, 40) != crc32c::crc32c(&s[0..40])
        {
            return None;
        }
        if le_u64(s, 8) != log_id || le_u32(s, 16) != slot {
            return None;
        }
        Some(SegmentHeader { sequence: le_u64(s, 24), slot, nonce: le_u64(s, 32) })
    }
}

/// The fields of a block header (offsets in `docs/format/log.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// Bytes used: header plus records, not the sector padding.
    pub used: u32,
    /// Stream position of the block's first byte.
    pub lsn: u64,
    /// Stream position of the first block of the write (flush) that carried this block: lets
    /// the reader tell a torn tail (damage followed by blocks of the same, unfinished write)
    /// from damage followed by a later write (corruption of hardened log).
    pub flush_lsn: u64,
}

impl BlockHeader {
    /// Writes the header into `block[0..32]` and the checksum over the used bytes, the
    /// segment's nonce (`salt`) and the block's file offset.
    pub fn seal(&self, block: &mut [u8], salt: u64, file_offset: u64) {
        block[0..4].copy_from_slice(&BLOCK_MAGIC.to_le_bytes());
        block[4..8].copy_from_slice(&self.used.to_le_bytes());
        block[8..16].copy_from_slice(&self.lsn.to_le_bytes());
        block[16..24].copy_from_slice(&self.flush_lsn.to_le_bytes());
        block[24..28].copy_from_slice(&0u32.to_le_bytes());
        block[28..32].copy_from_slice(&0u32.to_le_bytes());
        let crc = block_crc(&block[..self.used as usize], salt, file_offset);
        block[24..28].copy_from_slice(&crc.to_le_bytes());
    }

    /// Reads a header if the magic matches; the caller still checks `lsn` and the checksum.
    pub fn peek(block: &[u8]) -> Option<BlockHeader> {
        if block.len() < BLOCK_HEADER_SIZE || le_u32(block, 0) != BLOCK_MAGIC {
            return None;
        }
        Some(BlockHeader {
            used: le_u32(block, 4),
            lsn: le_u64(block, 8),
            flush_lsn: le_u64(block, 16),
        })
    }

    /// Whether `block` (at least `used` bytes) carries a correct checksum.
    pub fn checksum_ok(block: &[u8], salt: u64, file_offset: u64) -> bool {
        let Some(h) = BlockHeader::peek(block) else { return false };
        let used = h.used as usize;
        if used < BLOCK_HEADER_SIZE || used > block.len() {
            return false;
        }
        le_u32(block, 24) == block_crc(&block[..used], salt, file_offset)
    }
}

/// CRC32C over the segment's nonce (the salt), the file offset, and the block with its
/// checksum field as zero.
fn block_crc(block: &[u8], salt: u64, file_offset: u64) -> u32 {
    let mut crc = crc32c::crc32c(&salt.to_le_bytes());
    crc = crc32c::crc32c_append(crc, &file_offset.to_le_bytes());
    crc = crc32c::crc32c_append(crc, &block[0..24]);
    crc = crc32c::crc32c_append(crc, &[0u8; 4]);
    crc32c::crc32c_append(crc, &block[28..])
}

/// What a log record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// A transaction began.
    Begin,
    /// A transaction committed; the body is a [`CommitBody`].
    Commit,
    /// A transaction rolled back; everything it logged is void.
    Abort,
    /// Bytes for the layers above (page changes, checkpoints...), opaque to the log.
    Payload,
}

impl RecordKind {
    pub(crate) fn code(self) -> u8 {
        match self {
            RecordKind::Begin => 1,
            RecordKind::Commit => 2,
            RecordKind::Abort => 3,
            RecordKind::Payload => 4,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<RecordKind> {
        Some(match code {
            1 => RecordKind::Begin,
            2 => RecordKind::Commit,
            3 => RecordKind::Abort,
            4 => RecordKind::Payload,
            _ => return None,
        })
    }

    /// The name `sys.fn_dblog` shows in its `Operation` column.
    pub fn operation_name(self) -> &'static str {
        match self {
            RecordKind::Begin => "LOP_BEGIN_XACT",
            RecordKind::Commit => "LOP_COMMIT_XACT",
            RecordKind::Abort => "LOP_ABORT_XACT",
            RecordKind::Payload => "LOP_PAYLOAD",
        }
    }
}

/// Where a fragment sits in its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fragment {
    /// The whole record.
    Full,
    /// The first piece of a record continued in the next block.
    First,
    /// A middle piece.
    Middle,
    /// The last piece.
    Last,
}

impl Fragment {
    pub(crate) fn code(self) -> u8 {
        match self {
            Fragment::Full => 0,
            Fragment::First => 1,
            Fragment::Middle => 2,
            Fragment::Last => 3,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Fragment> {
        Some(match code {
            0 => Fragment::Full,
            1 => Fragment::First,
            2 => Fragment::Middle,
            3 => Fragment::Last,
            _ => return None,
        })
    }
}

/// Writes a record (fragment) header.
pub fn encode_record_header(
    out: &mut [u8],
    len: u32,
    kind: RecordKind,
    fragment: Fragment,
    txn: u64,
) {
    out[0..4].copy_from_slice(&len.to_le_bytes());
    out[4] = kind.code();
    out[5] = fragment.code();
    out[6..8].copy_from_slice(&[0, 0]);
    out[8..16].copy_from_slice(&txn.to_le_bytes());
}

/// A decoded record (fragment) header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Length of this fragment's body.
    pub len: u32,
    /// The record's kind.
    pub kind: RecordKind,
    /// Which piece of the record this is.
    pub fragment: Fragment,
    /// The transaction that wrote it.
    pub txn: u64,
}

/// Decodes a record header; `None` if it is not one.
pub fn decode_record_header(b: &[u8]) -> Option<RecordHeader> {
    if b.len() < RECORD_HEADER_SIZE || b[6] != 0 || b[7] != 0 {
        return None;
    }
    Some(RecordHeader {
        len: le_u32(b, 0),
        kind: RecordKind::from_code(b[4])?,
        fragment: Fragment::from_code(b[5])?,
        txn: le_u64(b, 8),
    })
}

/// A commit record's durability, as decided by the policy when the transaction committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Durability {
    /// The commit returned only after its commit record was hardened.
    Full,
    /// The commit returned once its commit record was in the log buffer.
    Delayed,
}

/// The body of a commit record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitBody {
    /// Full or delayed.
    pub durability: Durability,
    /// Commit time, microseconds since the Unix epoch.
    pub commit_time_us: u64,
}

impl CommitBody {
    /// Encodes the body (16 bytes).
    pub fn encode(&self) -> [u8; COMMIT_BODY_SIZE] {
        let mut b = [0u8; COMMIT_BODY_SIZE];
        b[0] = match self.durability {
            Durability::Full => 0,
            Durability::Delayed => 1,
        };
        b[8..16].copy_from_slice(&self.commit_time_us.to_le_bytes());
        b
    }

    /// Decodes a commit body.
    pub fn decode(b: &[u8]) -> Option<CommitBody> {
        if b.len() != COMMIT_BODY_SIZE {
            return None;
        }
        let durability = match b[0] {
            0 => Durability::Full,
            1 => Durability::Delayed,
            _ => return None,
        };
        Some(CommitBody { durability, commit_time_us: le_u64(b, 8) })
    }
}

pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

pub(crate) fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_header_round_trips_and_rejects_damage() {
        let h = FileHeader { segment_size: 1 << 20, log_id: 0xfeed, created_us: 7 };
        let mut s = h.encode();
        assert_eq!(FileHeader::decode(&s).unwrap(), h);
        s[20] ^= 1;
        assert!(FileHeader::decode(&s).is_err());
        assert!(FileHeader::decode(&[0u8; 512]).is_err());
    }

    #[test]
    fn segment_header_is_bound_to_log_and_slot() {
        let h = SegmentHeader { sequence: 9, slot: 3, nonce: 77 };
        let s = h.encode(42);
        assert_eq!(SegmentHeader::decode(&s, 42, 3), Some(h));
        assert_eq!(SegmentHeader::decode(&s, 43, 3), None);
        assert_eq!(SegmentHeader::decode(&s, 42, 4), None);
        assert_eq!(SegmentHeader::decode(&[0u8; 512], 42, 3), None);
    }

    #[test]
    fn block_checksum_binds_salt_offset_and_content() {
        let mut block = vec![0u8; 512];
        encode_record_header(&mut block[32..48], 0, RecordKind::Begin, Fragment::Full, 5);
        let h = BlockHeader { used: 48, lsn: 4096, flush_lsn: 4096 };
        h.seal(&mut block, 1, 8192);
        assert!(BlockHeader::checksum_ok(&block, 1, 8192));
        assert!(!BlockHeader::checksum_ok(&block, 2, 8192), "another segment activation's block");
        assert!(!BlockHeader::checksum_ok(&block, 1, 8704), "misdirected write");
        let mut torn = block.clone();
        torn[40] ^= 0x80;
        assert!(!BlockHeader::checksum_ok(&torn, 1, 8192), "torn write");
        let mut padded = block.clone();
        padded[300] = 0xff;
        assert!(BlockHeader::checksum_ok(&padded, 1, 8192), "padding is outside the checksum");
        assert_eq!(BlockHeader::peek(&block), Some(h));
    }

    #[test]
    fn record_header_and_commit_body_round_trip() {
        let mut b = [0u8; 16];
        encode_record_header(&mut b, 100, RecordKind::Payload, Fragment::Middle, u64::MAX);
        let h = decode_record_header(&b).unwrap();
        assert_eq!(
            (h.len, h.kind, h.fragment, h.txn),
            (100, RecordKind::Payload, Fragment::Middle, u64::MAX)
        );
        b[4] = 0;
        assert_eq!(decode_record_header(&b), None, "kind 0 is not a record");
        let c = CommitBody { durability: Durability::Delayed, commit_time_us: 123 };
        assert_eq!(CommitBody::decode(&c.encode()), Some(c));
        assert_eq!(CommitBody::decode(&[9u8; 16]), None);
    }
}

#[cfg(test)]
mod worked_example {
    use super::*;

    /// The block of `docs/format/log.md`'s worked example: a fresh log's first block, holding
    /// transaction 1's begin, a 5-byte payload and its fully durable commit.
    pub(super) fn example_block() -> Vec<u8> {
        let mut b = vec![0u8; 512];
        encode_record_header(&mut b[32..48], 0, RecordKind::Begin, Fragment::Full, 1);
        encode_record_header(&mut b[48..64], 5, RecordKind::Payload, Fragment::Full, 1);
        b[64..69].copy_from_slice(b"hello");
        encode_record_header(&mut b[69..85], 16, RecordKind::Commit, Fragment::Full, 1);
        let commit =
            CommitBody { durability: Durability::Full, commit_time_us: 1_795_000_000_000_000 };
        b[85..101].copy_from_slice(&commit.encode());
        BlockHeader { used: 101, lsn: 0, flush_lsn: 0 }.seal(&mut b, 0x1122_3344_5566_7788, 4608);
        b
    }

    /// The hex shown in `docs/format/log.md`; if the format changes, so must the document.
    const EXAMPLE_HEX: &str = "\
        57424c4b650000000000000000000000\
        0000000000000000b4dc3c5300000000\
        00000000010000000100000000000000\
        05000000040000000100000000000000\
        68656c6c6f1000000002000000010000\
        0000000000000000000000000000305f\
        018b600600";

    #[test]
    fn worked_example_matches_the_document() {
        let b = example_block();
        let hex: String = b[..101].iter().map(|x| format!("{x:02x}")).collect();
        assert_eq!(hex, EXAMPLE_HEX.replace(' ', ""));
        assert!(b[101..].iter().all(|&x| x == 0), "padding is zero");
        assert!(BlockHeader::checksum_ok(&b, 0x1122_3344_5566_7788, 4608));
    }
}
