//! The engine's log records: what goes in the body of a log `Payload` record.
//!
//! The log manager knows begin, commit and abort; everything else the engine logs is a payload
//! whose first byte says what it is. The byte layout is in `docs/format/engine-log.md`.
//!
//! | kind | redo | undo | written by |
//! |---|---|---|---|
//! | `Structure` | page changes | none (never undone) | splits, merges, allocation, tree creation |
//! | `Row` | one page change | a logical inverse on a tree, by key | insert, update, delete |
//! | `Rows` | one page change: inserts | delete each key | a bulk load's run of ascending keys |
//! | `Compensation` | one page change | none; `undo_next` says what is left to undo | rollback |
//! | `Checkpoint` | none | none | a checkpoint: redo point, scan start, next txn id |
//! | `Prepare` | none | none | phase 1 of a commit spanning databases: the global id |
//!
//! A page change is either a list of encoded [`PageOp`]s or a full image of the page after the
//! change (the first change of a page after a checkpoint's redo point is always logged as an
//! image, so that redo can rebuild a page whose last write was torn).

use walden_storage::redo::PageOp;
use walden_storage::{Lsn, PageId};

const KIND_STRUCTURE: u8 = 1;
const KIND_ROW: u8 = 2;
const KIND_COMPENSATION: u8 = 3;
const KIND_CHECKPOINT: u8 = 4;
const KIND_PREPARE: u8 = 5;
const KIND_ROWS: u8 = 6;

const FORM_OPS: u8 = 0;
const FORM_IMAGE: u8 = 1;

/// The logical undo of a row change, applied to the tree rooted at `root` by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// Undo an insert: delete the key.
    Delete,
    /// Undo a delete: insert the key with this value.
    Insert(Vec<u8>),
    /// Undo an update: put this value back.
    Restore(Vec<u8>),
}

/// One page's change inside a record, borrowed from the record body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageChange<'a> {
    /// The page.
    pub page: PageId,
    /// Whether `bytes` is one [`PageOp::Image`] (the page's old contents do not matter).
    pub image: bool,
    /// Encoded [`PageOp`]s, applied in order.
    pub bytes: &'a [u8],
}

impl PageChange<'_> {
    /// The decoded ops.
    pub fn ops(&self) -> Result<Vec<PageOp<'_>>, WalError> {
        let mut rest = self.bytes;
        let mut ops = Vec::new();
        while !rest.is_empty() {
            let (op, tail) = PageOp::decode(rest).map_err(|e| WalError(e.to_string()))?;
            ops.push(op);
            rest = tail;
        }
        Ok(ops)
    }
}

/// A decoded engine record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineRecord<'a> {
    /// A structure change: redo-only.
    Structure {
        /// The pages it changed.
        changes: Vec<PageChange<'a>>,
    },
    /// A row change of a transaction.
    Row {
        /// The tree (by root page) the undo applies to.
        root: PageId,
        /// The key the undo applies to.
        key: &'a [u8],
        /// The undo.
        undo: Undo,
        /// The leaf change.
        change: PageChange<'a>,
    },
    /// Inserts of new keys into one leaf (a bulk load's run): undone by deleting each key.
    Rows {
        /// The tree (by root page) the undo applies to.
        root: PageId,
        /// The keys inserted, in the order inserted.
        keys: Vec<&'a [u8]>,
        /// The leaf change.
        change: PageChange<'a>,
    },
    /// The redo of one undone row change.
    Compensation {
        /// The LSN of the next row change of the transaction still to undo (0: none).
        undo_next: Lsn,
        /// The leaf change the undo made.
        change: PageChange<'a>,
    },
    /// A checkpoint completed its page flush.
    Checkpoint(CheckpointBody),
    /// The transaction is prepared to commit as part of global transaction `gtid`.
    Prepare {
        /// The global transaction id the coordinator records.
        gtid: u64,
    },
}

/// What a checkpoint record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointBody {
    /// Every change logged at or before this LSN was on disk when the checkpoint ended.
    pub redo_point: Lsn,
    /// Recovery reads from here: no older record of a transaction still active is needed.
    pub scan_start: Lsn,
    /// The next transaction id to hand out.
    pub next_txn: u64,
}

/// A malformed engine record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalError(pub String);

impl std::fmt::Display for WalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed engine log record: {}", self.0)
    }
}

impl std::error::Error for WalError {}

/// Starts a structure record; add its pages with [`push_change`].
pub fn begin_structure(out: &mut Vec<u8>, pages: usize) {
    out.push(KIND_STRUCTURE);
    out.extend_from_slice(&(pages as u32).to_le_bytes());
}

/// Appends one page change (ops or an image) to a record being built.
pub fn push_change(out: &mut Vec<u8>, page: PageId, image: bool, bytes: &[u8]) {
    out.extend_from_slice(&page.to_le_bytes());
    out.push(if image { FORM_IMAGE } else { FORM_OPS });
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Starts a row record; finish it with one [`push_change`].
pub fn begin_row(out: &mut Vec<u8>, root: PageId, key: &[u8], undo: &Undo) {
    out.push(KIND_ROW);
    out.extend_from_slice(&root.to_le_bytes());
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    let (tag, value): (u8, &[u8]) = match undo {
        Undo::Delete => (1, &[]),
        Undo::Insert(v) => (2, v),
        Undo::Restore(v) => (3, v),
    };
    out.push(tag);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

/// Starts a rows record for `ops`, the encoded inserts of one leaf change, listing the key
/// of each; finish it with one [`push_change`]. An op other than an insert is an error.
pub fn begin_rows(out: &mut Vec<u8>, root: PageId, ops: &[u8]) -> Result<(), WalError> {
    out.push(KIND_ROWS);
    out.extend_from_slice(&root.to_le_bytes());
    let count_at = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    let mut count = 0u32;
    let mut rest = ops;
    while !rest.is_empty() {
        let (op, tail) = PageOp::decode(rest).map_err(|e| WalError(e.to_string()))?;
        let PageOp::Insert { record, .. } = op else {
            return Err(WalError("a rows record of an op other than an insert".into()));
        };
        let key_len = record
            .get(..2)
            .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))
            .filter(|&n| record.len() >= 2 + n)
            .ok_or_else(|| WalError("a leaf record shorter than its key".into()))?;
        out.extend_from_slice(&record[..2 + key_len]);
        count += 1;
        rest = tail;
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    Ok(())
}

/// Starts a compensation record; finish it with one [`push_change`].
pub fn begin_compensation(out: &mut Vec<u8>, undo_next: Lsn) {
    out.push(KIND_COMPENSATION);
    out.extend_from_slice(&undo_next.to_le_bytes());
}

/// Encodes a checkpoint record.
pub fn checkpoint(body: &CheckpointBody) -> Vec<u8> {
    let mut out = Vec::with_capacity(25);
    out.push(KIND_CHECKPOINT);
    out.extend_from_slice(&body.redo_point.to_le_bytes());
    out.extend_from_slice(&body.scan_start.to_le_bytes());
    out.extend_from_slice(&body.next_txn.to_le_bytes());
    out
}

/// Encodes a prepare record.
pub fn prepare(gtid: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(9);
    out.push(KIND_PREPARE);
    out.extend_from_slice(&gtid.to_le_bytes());
    out
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WalError> {
        if self.0.len() < n {
            return Err(WalError(format!("{n} bytes wanted, {} left", self.0.len())));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, WalError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, WalError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, WalError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, WalError> {
        let b = self.take(8)?;
        let mut a = [0; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn change(&mut self) -> Result<PageChange<'a>, WalError> {
        let page = self.u32()?;
        let image = match self.u8()? {
            FORM_OPS => false,
            FORM_IMAGE => true,
            f => return Err(WalError(format!("unknown page change form {f}"))),
        };
        let len = self.u32()? as usize;
        Ok(PageChange { page, image, bytes: self.take(len)? })
    }
}

impl<'a> EngineRecord<'a> {
    /// Decodes a payload body.
    pub fn decode(body: &'a [u8]) -> Result<EngineRecord<'a>, WalError> {
        let mut r = Reader(body);
        let record = match r.u8()? {
            KIND_STRUCTURE => {
                let n = r.u32()? as usize;
                // Each change takes at least 9 bytes: a bound that keeps a damaged count from
                // asking for a huge allocation.
                let mut changes = Vec::with_capacity(n.min(body.len() / 9));
                for _ in 0..n {
                    changes.push(r.change()?);
                }
                EngineRecord::Structure { changes }
            }
            KIND_ROW => {
                let root = r.u32()?;
                let key_len = usize::from(r.u16()?);
                let key = r.take(key_len)?;
                let tag = r.u8()?;
                let len = r.u32()? as usize;
                let value = r.take(len)?.to_vec();
                let undo = match tag {
                    1 => Undo::Delete,
                    2 => Undo::Insert(value),
                    3 => Undo::Restore(value),
                    t => return Err(WalError(format!("unknown undo kind {t}"))),
                };
                EngineRecord::Row { root, key, undo, change: r.change()? }
            }
            KIND_ROWS => {
                let root = r.u32()?;
                let n = r.u32()? as usize;
                // Each key takes at least 2 bytes: a bound for a damaged count.
                let mut keys = Vec::with_capacity(n.min(body.len() / 2));
                for _ in 0..n {
                    let len = usize::from(r.u16()?);
                    keys.push(r.take(len)?);
                }
                EngineRecord::Rows { root, keys, change: r.change()? }
            }
            KIND_COMPENSATION => {
                let undo_next = r.u64()?;
                EngineRecord::Compensation { undo_next, change: r.change()? }
            }
            KIND_CHECKPOINT => EngineRecord::Checkpoint(CheckpointBody {
                redo_point: r.u64()?,
                scan_start: r.u64()?,
                next_txn: r.u64()?,
            }),
            KIND_PREPARE => EngineRecord::Prepare { gtid: r.u64()? },
            k => return Err(WalError(format!("unknown record kind {k}"))),
        };
        if !r.0.is_empty() {
            return Err(WalError(format!("{} trailing bytes", r.0.len())));
        }
        Ok(record)
    }

    /// The page changes the record carries, for redo.
    pub fn changes(&self) -> Vec<&PageChange<'a>> {
        match self {
            EngineRecord::Structure { changes } => changes.iter().collect(),
            EngineRecord::Row { change, .. }
            | EngineRecord::Rows { change, .. }
            | EngineRecord::Compensation { change, .. } => {
                vec![change]
            }
            EngineRecord::Checkpoint(_) | EngineRecord::Prepare { .. } => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut ops = Vec::new();
        PageOp::Delete { slot: 3 }.encode(&mut ops);

        let mut b = Vec::new();
        begin_structure(&mut b, 2);
        push_change(&mut b, 9, false, &ops);
        push_change(&mut b, 10, true, &ops);
        let EngineRecord::Structure { changes } = EngineRecord::decode(&b).unwrap() else {
            panic!("not a structure record")
        };
        assert_eq!(changes.len(), 2);
        assert_eq!(changes[1].page, 10);
        assert!(changes[1].image);
        assert_eq!(changes[0].ops().unwrap(), vec![PageOp::Delete { slot: 3 }]);

        let mut b = Vec::new();
        begin_row(&mut b, 8, b"key", &Undo::Restore(b"old".to_vec()));
        push_change(&mut b, 12, false, &ops);
        let rec = EngineRecord::decode(&b).unwrap();
        assert_eq!(
            rec,
            EngineRecord::Row {
                root: 8,
                key: b"key",
                undo: Undo::Restore(b"old".to_vec()),
                change: PageChange { page: 12, image: false, bytes: &ops },
            }
        );

        let mut inserts = Vec::new();
        PageOp::Insert { slot: 4, record: &[2, 0, b'k', b'1', 9] }.encode(&mut inserts);
        PageOp::Insert { slot: 5, record: &[1, 0, b'm'] }.encode(&mut inserts);
        let mut b = Vec::new();
        begin_rows(&mut b, 8, &inserts).unwrap();
        push_change(&mut b, 12, false, &inserts);
        assert_eq!(
            EngineRecord::decode(&b).unwrap(),
            EngineRecord::Rows {
                root: 8,
                keys: vec![b"k1", b"m"],
                change: PageChange { page: 12, image: false, bytes: &inserts },
            }
        );
        assert!(begin_rows(&mut Vec::new(), 8, &ops).is_err(), "a delete is no rows record");

        let mut b = Vec::new();
        begin_compensation(&mut b, 77);
        push_change(&mut b, 12, false, &ops);
        assert!(matches!(
            EngineRecord::decode(&b).unwrap(),
            EngineRecord::Compensation { undo_next: 77, .. }
        ));

        let body = CheckpointBody { redo_point: 1, scan_start: 2, next_txn: 3 };
        assert_eq!(
            EngineRecord::decode(&checkpoint(&body)).unwrap(),
            EngineRecord::Checkpoint(body)
        );
    }

    #[test]
    fn damaged_records_are_errors() {
        let mut b = Vec::new();
        begin_row(&mut b, 8, b"key", &Undo::Delete);
        push_change(&mut b, 12, false, &[3, 1, 0]);
        for n in 0..b.len() {
            assert!(EngineRecord::decode(&b[..n]).is_err(), "prefix of {n} bytes accepted");
        }
        b.push(0);
        assert!(EngineRecord::decode(&b).is_err());
    }
}
