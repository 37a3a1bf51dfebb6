//! An in-memory file system for fast tests.
//!
//! [`MemFs`] keeps each file as a byte vector behind a mutex and gives it the same semantics
//! as [`OsFs`](crate::OsFs) through the [`Vfs`] and [`File`] traits: positioned reads that fail
//! with `UnexpectedEof` past the end, writes past the end that grow the file with zeros,
//! `preallocate` that zero-fills and never shrinks, and `set_len` that truncates or extends.
//!
//! What is *not* modelled:
//!
//! * Durability. Syncs are no-ops and nothing is ever lost; crash testing is [`SimFs`]'s job.
//! * Directories. A path is only a key: `create_dir_all` and `sync_dir` succeed without doing
//!   anything, `exists` is true for files only, and `list(dir)` returns the files whose parent
//!   is `dir` (an unknown directory lists as empty rather than `NotFound`).
//! * Permissions, timestamps, rename, links.
//!
//! Like POSIX, a file removed while handles are open stays alive for those handles: each handle
//! holds its own reference to the contents, and the name map only holds another.
//!
//! The small range and locking helpers at the bottom are shared with [`SimFs`], so that both
//! file systems agree byte for byte on what a read, write or resize does.
//!
//! [`SimFs`]: crate::SimFs

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::{File, FileRef, OpenMode, Vfs};

/// An in-memory file system. Clones share the same files.
#[derive(Debug, Clone, Default)]
pub struct MemFs {
    files: Arc<Mutex<BTreeMap<PathBuf, Arc<Mutex<Contents>>>>>,
}

impl MemFs {
    /// An empty file system.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A file's bytes. `Debug` prints only the length: a derived one would dump whole files into
/// assertion messages.
#[derive(Default)]
struct Contents(Vec<u8>);

impl fmt::Debug for Contents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contents").field("len", &self.0.len()).finish()
    }
}

impl Vfs for MemFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<FileRef> {
        let mut files = lock(&self.files);
        let contents = match (files.get(path), mode) {
            (Some(_), OpenMode::CreateNew) => return Err(already_exists(path)),
            (Some(contents), _) => Arc::clone(contents),
            (None, OpenMode::Existing) => return Err(not_found(path)),
            (None, OpenMode::CreateNew | OpenMode::OpenOrCreate) => {
                let contents = Arc::new(Mutex::new(Contents::default()));
                files.insert(path.to_path_buf(), Arc::clone(&contents));
                contents
            }
        };
        Ok(Arc::new(MemFile { contents, path: path.to_path_buf() }))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        // Open handles keep their own Arc, so they go on working on the unlinked contents.
        lock(&self.files).remove(path).map(|_| ()).ok_or_else(|| not_found(path))
    }

    fn exists(&self, path: &Path) -> bool {
        lock(&self.files).contains_key(path)
    }

    fn create_dir_all(&self, _path: &Path) -> io::Result<()> {
        Ok(())
    }

    fn sync_dir(&self, _path: &Path) -> io::Result<()> {
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        // The map is ordered by `PathBuf`'s `Ord`, the same order `OsFs` sorts by.
        Ok(lock(&self.files).keys().filter(|p| p.parent() == Some(dir)).cloned().collect())
    }
}

#[derive(Debug)]
struct MemFile {
    contents: Arc<Mutex<Contents>>,
    path: PathBuf,
}

impl File for MemFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        read_at(&lock(&self.contents).0, buf, offset, &self.path)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let data = &mut lock(&self.contents).0;
        let start = prepare_write(data, &self.path, offset, buf.len())?;
        put(data, start, buf);
        Ok(())
    }

    fn write_vectored_all_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        // One write under one lock, so a concurrent reader never sees half of the batch.
        self.write_all_at(&bufs.concat(), offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn sync_all(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(lock(&self.contents).0.len() as u64)
    }

    fn preallocate(&self, len: u64) -> io::Result<()> {
        let data = &mut lock(&self.contents).0;
        if len > data.len() as u64 {
            let len = prepare_len(data, &self.path, len)?;
            data.resize(len, 0);
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let data = &mut lock(&self.contents).0;
        let len = prepare_len(data, &self.path, len)?;
        data.resize(len, 0);
        Ok(())
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// Locks a mutex, recovering it if a thread panicked while holding it: every critical section
/// in this crate leaves the data consistent before anything that can panic, and a test that
/// panicked in one thread should report its own failure rather than a poisoned lock.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Copies `buf.len()` bytes at `offset` out of `data`, or fails with `UnexpectedEof` (and
/// copies nothing) if any of them lies past the end.
pub(crate) fn read_at(data: &[u8], buf: &mut [u8], offset: u64, path: &Path) -> io::Result<()> {
    if buf.is_empty() {
        // As `FileExt::read_exact_at`: an empty read succeeds at any offset.
        return Ok(());
    }
    let range = usize::try_from(offset)
        .ok()
        .and_then(|start| Some(start..start.checked_add(buf.len())?))
        .filter(|range| range.end <= data.len());
    match range {
        Some(range) => {
            buf.copy_from_slice(&data[range]);
            Ok(())
        }
        None => Err(crate::eof_error(path, offset, buf.len())),
    }
}

/// Checks that `len` bytes at `offset` can be held in memory and reserves room for them, so
/// that the [`put`] that follows cannot fail halfway. Returns `offset` as a `usize`.
pub(crate) fn prepare_write(
    data: &mut Vec<u8>,
    path: &Path,
    offset: u64,
    len: usize,
) -> io::Result<usize> {
    let end = offset.checked_add(len as u64).ok_or_else(|| too_large(path, u64::MAX))?;
    prepare_len(data, path, end)?;
    // `end` fits in a usize (prepare_len checked it), so `offset` below it does too.
    usize::try_from(offset).map_err(|_| too_large(path, end))
}

/// Checks that a file of `len` bytes can be held in memory and reserves room for it, so that
/// the resize that follows cannot fail. Returns `len` as a `usize`.
pub(crate) fn prepare_len(data: &mut Vec<u8>, path: &Path, len: u64) -> io::Result<usize> {
    // A Vec holds at most isize::MAX bytes; past that, `resize` would panic.
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= isize::MAX as usize)
        .ok_or_else(|| too_large(path, len))?;
    if let Some(more) = len.checked_sub(data.len()) {
        data.try_reserve(more).map_err(|e| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("{}: cannot hold {len} bytes in memory: {e}", path.display()),
            )
        })?;
    }
    Ok(len)
}

/// Writes `bytes` at `start`, growing `data` with zeros if they end past it. The range must
/// have been checked with [`prepare_write`] (or come from one that was).
pub(crate) fn put(data: &mut Vec<u8>, start: usize, bytes: &[u8]) {
    let end = start + bytes.len();
    if data.len() < end {
        data.resize(end, 0);
    }
    data[start..end].copy_from_slice(bytes);
}

pub(crate) fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{}: no such file", path.display()))
}

pub(crate) fn already_exists(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::AlreadyExists, format!("{}: file exists", path.display()))
}

fn too_large(path: &Path, len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("{}: a length of {len} bytes is too large for an in-memory file", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(f: &FileRef, offset: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        f.read_exact_at(&mut buf, offset).unwrap();
        buf
    }

    #[test]
    fn writes_past_the_end_grow_zero_filled() {
        let fs = MemFs::new();
        let f = fs.open(Path::new("d/a"), OpenMode::CreateNew).unwrap();
        f.write_all_at(b"xyz", 5).unwrap();
        assert_eq!(f.len().unwrap(), 8);
        assert_eq!(read(&f, 0, 8), b"\0\0\0\0\0xyz");
        f.write_vectored_all_at(&[b"ab", b"", b"cd"], 1).unwrap();
        assert_eq!(read(&f, 0, 8), b"\0abcdxyz");
        // An empty write does not grow the file, wherever it is.
        f.write_all_at(b"", 100).unwrap();
        f.write_all_at(b"", u64::MAX).unwrap();
        assert_eq!(f.len().unwrap(), 8);
    }

    #[test]
    fn reading_past_the_end_is_unexpected_eof_and_copies_nothing() {
        let fs = MemFs::new();
        let f = fs.open(Path::new("a"), OpenMode::OpenOrCreate).unwrap();
        f.write_all_at(b"xy", 0).unwrap();
        let mut buf = [7u8; 4];
        let e = f.read_exact_at(&mut buf, 0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(buf, [7u8; 4]);
        let e = f.read_exact_at(&mut buf, u64::MAX).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        // A zero-length read succeeds anywhere, as with OsFs.
        f.read_exact_at(&mut [], 2).unwrap();
        f.read_exact_at(&mut [], 100).unwrap();
    }

    #[test]
    fn preallocate_never_shrinks_and_set_len_does() {
        let fs = MemFs::new();
        let f = fs.open(Path::new("a"), OpenMode::CreateNew).unwrap();
        f.write_all_at(b"hello", 0).unwrap();
        f.preallocate(1024).unwrap();
        assert_eq!(f.len().unwrap(), 1024);
        assert_eq!(read(&f, 0, 7), b"hello\0\0");
        f.preallocate(10).unwrap();
        assert_eq!(f.len().unwrap(), 1024);
        f.set_len(3).unwrap();
        assert_eq!(f.len().unwrap(), 3);
        f.set_len(6).unwrap();
        assert_eq!(read(&f, 0, 6), b"hel\0\0\0");
        f.sync_data().unwrap();
        f.sync_all().unwrap();
    }

    #[test]
    fn absurd_offsets_and_lengths_fail_without_effect() {
        let fs = MemFs::new();
        let f = fs.open(Path::new("a"), OpenMode::CreateNew).unwrap();
        f.write_all_at(b"ok", 0).unwrap();
        assert!(f.write_all_at(b"x", u64::MAX).is_err());
        assert!(f.write_all_at(b"x", u64::MAX - 1).is_err());
        assert!(f.set_len(u64::MAX).is_err());
        assert!(f.preallocate(u64::MAX).is_err());
        assert_eq!(read(&f, 0, 2), b"ok");
        assert_eq!(f.len().unwrap(), 2);
    }

    #[test]
    fn handles_share_bytes_and_survive_removal() {
        let fs = MemFs::new();
        let p = Path::new("dir/a");
        let a = fs.open(p, OpenMode::CreateNew).unwrap();
        let b = fs.open(p, OpenMode::Existing).unwrap();
        a.write_all_at(b"shared", 0).unwrap();
        assert_eq!(read(&b, 0, 6), b"shared");
        // Clones of the file system see the same files.
        assert!(fs.clone().exists(p));
        fs.remove(p).unwrap();
        assert!(!fs.exists(p));
        assert_eq!(fs.remove(p).unwrap_err().kind(), io::ErrorKind::NotFound);
        // Like an unlinked POSIX file: the handles still work on the old contents...
        b.write_all_at(b"S", 0).unwrap();
        assert_eq!(read(&a, 0, 6), b"Shared");
        // ...and a new file under the same name starts empty.
        let c = fs.open(p, OpenMode::CreateNew).unwrap();
        assert_eq!(c.len().unwrap(), 0);
        assert_eq!(a.len().unwrap(), 6);
    }

    #[test]
    fn open_modes_and_listing() {
        let fs = MemFs::new();
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let p = dir.join("b");
        assert_eq!(fs.open(&p, OpenMode::Existing).unwrap_err().kind(), io::ErrorKind::NotFound);
        fs.open(&p, OpenMode::CreateNew).unwrap();
        assert_eq!(
            fs.open(&p, OpenMode::CreateNew).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        fs.open(&dir.join("a"), OpenMode::OpenOrCreate).unwrap();
        fs.open(&dir.join("sub/c"), OpenMode::OpenOrCreate).unwrap();
        fs.open(Path::new("/dbx"), OpenMode::OpenOrCreate).unwrap();
        fs.sync_dir(dir).unwrap();
        assert_eq!(fs.list(dir).unwrap(), vec![dir.join("a"), dir.join("b")]);
        assert_eq!(fs.list(&dir.join("sub")).unwrap(), vec![dir.join("sub/c")]);
        assert!(fs.list(Path::new("/nowhere")).unwrap().is_empty());
    }

    #[test]
    fn concurrent_writers_do_not_lose_writes() {
        let fs = MemFs::new();
        let f = fs.open(Path::new("a"), OpenMode::CreateNew).unwrap();
        let threads: Vec<_> = (0..4u8)
            .map(|t| {
                let f = Arc::clone(&f);
                std::thread::spawn(move || {
                    for i in 0..100u64 {
                        f.write_all_at(&[t + 1; 8], (u64::from(t) * 100 + i) * 8).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let all = read(&f, 0, 3200);
        for (i, chunk) in all.chunks(800).enumerate() {
            assert!(chunk.iter().all(|&b| b == i as u8 + 1));
        }
    }
}
