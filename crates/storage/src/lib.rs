//! Walden's storage engine, bottom layer first: pages and data files.
//!
//! Like SQL Server, Walden keeps a database in 8 KiB pages. A page is the unit of I/O, of
//! caching (the buffer pool, later) and of physical logging: every change to a page is
//! described by a log record, and the page carries the LSN of the last such record so that
//! the write-ahead rule ("the log is hardened up to a page's LSN before the page is written")
//! and redo ("apply a record only if the page's LSN is older") can be decided from the page
//! alone.
//!
//! * [`page`]: the 96-byte page header, page types, the checksum that is sealed before a write
//!   and verified after a read.
//! * [`slotted`]: the record area of data and index pages: records growing up from the
//!   header, a slot array growing down from the end, and [`Page::check`], the page-level
//!   consistency check.
//! * [`file`](mod@file): a data file (`.mdf`) of pages on a [`walden_io::Vfs`], with its file
//!   header page.
//!
//! The byte layout is specified in `docs/format/page.md`; a test rebuilds that document's
//! worked example and compares it byte for byte, so the document cannot drift from the code.

pub mod btree;
pub mod buffer;
pub mod file;
pub mod hash;
pub mod io_stats;
pub mod page;
pub mod redo;
pub mod slotted;

pub use buffer::{
    BufferError, BufferPool, FlushSummary, FramePool, NoWal, PageDescriptor, PageReadGuard,
    PageWriteGuard, PinnedPage, PoolConfig, PoolMemory, PoolStats, WalFlush,
};
pub use file::{DataFile, FileError, FileHeader};
pub use io_stats::{page_reads, PageReads};
pub use page::{Corruption, Lsn, Page, PageError, PageId, PageType, HEADER_SIZE, PAGE_SIZE};
pub use slotted::{MAX_RECORD_LEN, SLOT_SIZE};
