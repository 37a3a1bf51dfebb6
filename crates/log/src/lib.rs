//! Walden's transaction log manager.
//!
//! A database's log is one ordered stream of records appended by many sessions and hardened
//! (written and synced) by group commit. Its positions are LSNs: byte offsets in the stream,
//! and a record's LSN is the position just past its end, so "LSN `L` is hardened" means every
//! byte before `L` is on disk.
//!
//! * [`format`]: the on-disk layout (documented in `docs/format/log.md`).
//! * [`policy`]: which commits wait for the flush (the delayed-durability table).
//! * [`LogManager`]: appends, the bounded log buffer, the flush triggers, fail-stop, receipts.
//! * [`LogScanner`]: reads the hardened log back for recovery.
//! * [`LogStats`]: the counters.
//!
//! The log knows nothing of pages or SQL: the layers above log opaque payload records and
//! decide, through [`policy::resolve`], each commit's durability.

pub mod format;
mod manager;
pub mod policy;
mod reader;
mod segment;
mod stats;

use std::fmt;
use std::io;
use std::sync::Arc;

pub use format::{CommitBody, Durability, RecordKind};
pub use manager::{
    CommitReceipt, LogConfig, LogManager, OpenReport, OpenTransaction, SegmentInfo, MAX_RECORD_LEN,
};
pub use reader::{LogRecord, LogScanner};
pub use stats::{FlushReason, LogStats, WaitStat, COMMITS_PER_FLUSH_BUCKETS};

/// A log sequence number: a byte position in the log stream.
pub type Lsn = u64;

/// What can go wrong in the log.
#[derive(Debug, Clone)]
pub enum LogError {
    /// A write or sync failed: the log is offline until reopened (fail-stop).
    Io {
        /// What was being done: "write", "sync", "read", ...
        op: &'static str,
        /// The raw OS error code, if any (EIO, ENOSPC...).
        os_code: Option<i32>,
        /// The error's text.
        message: Arc<str>,
    },
    /// The log is damaged in a way recovery must not paper over.
    Corrupt {
        /// Where.
        lsn: Lsn,
        /// What was found.
        detail: String,
    },
    /// A record longer than the log accepts.
    RecordTooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A bad configuration value.
    Config(String),
    /// The log may not grow as far as new work needs (its maximum size reached, or the disk
    /// full) and nothing in it can be reused yet: SQL Server's error 9002. Not sticky.
    Full,
    /// The log was closed.
    Closed,
}

impl LogError {
    pub(crate) fn from_io(op: &'static str, e: io::Error) -> LogError {
        LogError::Io { op, os_code: e.raw_os_error(), message: e.to_string().into() }
    }

    pub(crate) fn io(op: &'static str, message: &str) -> LogError {
        LogError::Io { op, os_code: None, message: message.into() }
    }
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogError::Io { op, message, .. } => {
                write!(f, "log {op} failed: {message}; the log is offline until restart")
            }
            LogError::Corrupt { lsn, detail } => write!(f, "log damaged at LSN {lsn}: {detail}"),
            LogError::RecordTooLarge { len, max } => {
                write!(f, "log record of {len} bytes exceeds the limit of {max}")
            }
            LogError::Config(why) => write!(f, "bad log configuration: {why}"),
            LogError::Full => write!(f, "the log is full"),
            LogError::Closed => write!(f, "the log is closed"),
        }
    }
}

impl std::error::Error for LogError {}
