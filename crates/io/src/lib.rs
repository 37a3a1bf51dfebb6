//! Walden's file layer: every byte Walden puts on a disk goes through the [`Vfs`] and [`File`]
//! traits defined here, so that the same log and storage code runs on three file systems:
//!
//! * [`OsFs`]: real files, positioned reads and writes (`pread`/`pwrite`/`pwritev`),
//!   `fdatasync`, and preallocation that zero-fills, so that a later overwrite plus
//!   `fdatasync` never has to update file metadata (on the reference machine an `fdatasync`
//!   after an append is about 2.5 times slower than after an overwrite).
//! * [`MemFs`]: an in-memory file system for fast tests. Syncs are no-ops.
//! * [`SimFs`]: a crash simulator. It keeps, per file, the durable image and the list of
//!   writes since the last sync; [`SimFs::crash`] applies, drops or tears (at 512-byte sector
//!   granularity) each unsynced write, chosen by a seeded RNG, and it can fail the Nth write or
//!   sync with `EIO` or `ENOSPC`. The same seed always gives the same outcome.
//!
//! # The media model (what the layers above may assume)
//!
//! 1. A write that returned is visible to later reads of the same file at once.
//! 2. It is durable only after a later `sync_data` (or `sync_all`) of that file returned `Ok`.
//! 3. Until then a crash may keep or lose each 512-byte sector of it independently: writes are
//!    atomic per sector, not per call ("torn" writes).
//! 4. A sync that returned an error leaves the durable state unknown; callers must not retry the
//!    sync and assume success (PostgreSQL's "fsyncgate"): the log fails stop instead.
//! 5. Creating, growing or removing a file is durable after `sync_all` of the file and
//!    `sync_dir` of its directory.
//!
//! `unsafe` is allowed in this crate only, for the system calls `std` does not wrap
//! (`pwritev`, `posix_fallocate`, `poll` on a socket in [`net`], the coarse clock in
//! [`clock`], and `madvise` in [`release_memory`]); each use has a SAFETY note.

pub mod clock;
mod growth;
mod mem;
mod memory;
pub mod net;
mod os;
mod rng;
mod sim;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use growth::{FileGrowth, GrowthStep};
pub use mem::MemFs;
pub use memory::release_memory;
pub use os::OsFs;
pub use rng::SplitMix64;
pub use sim::{CrashReport, FaultKind, SimFs};

/// The sector: the unit of atomic writes in the media model, and the unit of log blocks.
pub const SECTOR_SIZE: usize = 512;

/// A shared, thread-safe handle to an open file.
pub type FileRef = Arc<dyn File>;

/// How [`Vfs::open`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Open an existing file; fail with `NotFound` if there is none.
    Existing,
    /// Create the file, failing with `AlreadyExists` if it exists.
    CreateNew,
    /// Open the file, creating it empty if it does not exist.
    OpenOrCreate,
}

/// A file system: the only way Walden's other crates create, open, list and remove files.
pub trait Vfs: Send + Sync + fmt::Debug {
    /// Opens (or creates) a file for reading and writing.
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<FileRef>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Whether a file exists at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Makes the directory's entries (files created, renamed or removed in it) durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// The files directly in a directory, sorted by name.
    fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>>;
    /// Takes an exclusive lock on the existing file at `path`, held until the returned
    /// [`FileLock`] is dropped, so that no other process (nor another lock in this one) uses
    /// the file meanwhile. Fails at once with `WouldBlock`, naming the file and, where the
    /// system tells, the holder's process id, if someone else holds it. File systems without
    /// such locks (the in-memory ones) lock nothing.
    fn lock_exclusive(&self, path: &Path) -> io::Result<FileLock> {
        let _ = path;
        Ok(FileLock::none())
    }
}

/// An exclusive lock on a file, released when dropped (see [`Vfs::lock_exclusive`]).
#[derive(Debug)]
pub struct FileLock {
    /// The descriptor the lock is on: closing it releases the lock.
    _held: Option<std::fs::File>,
}

impl FileLock {
    /// A lock that locks nothing, for file systems without locks.
    pub fn none() -> Self {
        FileLock { _held: None }
    }

    pub(crate) fn on(file: std::fs::File) -> Self {
        FileLock { _held: Some(file) }
    }
}

/// An open file. All I/O is positioned, so one handle is shared by many threads without a
/// cursor to race on.
pub trait File: Send + Sync + fmt::Debug {
    /// Reads exactly `buf.len()` bytes at `offset`; fails with `UnexpectedEof` past the end.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset`, growing the file if needed.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Writes the buffers back to back starting at `offset`, as one call where the system
    /// allows (`pwritev`). The log writer uses it to write every sealed block of a flush at once.
    fn write_vectored_all_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        let mut at = offset;
        for buf in bufs {
            self.write_all_at(buf, at)?;
            at += buf.len() as u64;
        }
        Ok(())
    }
    /// Makes the file's data durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// Makes the file's data and metadata durable (`fsync`).
    fn sync_all(&self) -> io::Result<()>;
    /// The file's current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Whether the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Grows the file to `len` bytes, allocating the space and filling it with zeros, so that
    /// later writes below `len` overwrite allocated blocks and a `sync_data` after them needs
    /// no metadata update. Never shrinks. Durable after `sync_all`.
    fn preallocate(&self, len: u64) -> io::Result<()>;
    /// Grows the file to `len` bytes of zeros with their space allocated, as
    /// [`File::preallocate`] does, but without writing the zeros where the file system can
    /// allocate the space by itself (`fallocate`): a later write below `len` then cannot fail
    /// for want of space, but the first `sync_data` after it may update the file's metadata
    /// (the extent it wrote becomes a written one). For a file whose writes are synced off the
    /// commit path (the data file's pages, at checkpoints and by the background writer), which
    /// so is not written twice. Never shrinks. Durable after `sync_all`.
    fn reserve(&self, len: u64) -> io::Result<()> {
        self.preallocate(len)
    }
    /// Sets the file's length, truncating or extending with zeros. Durable after `sync_all`.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// The path the file was opened with, for messages.
    fn path(&self) -> &Path;
}

/// An `io::Error` for a short read, with the file and offset in its message.
pub(crate) fn eof_error(path: &Path, offset: u64, len: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("read of {len} bytes at offset {offset} runs past the end of {}", path.display()),
    )
}
