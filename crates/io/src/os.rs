//! Real files on the operating system's file systems.

use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{File, FileLock, FileRef, OpenMode, Vfs};

/// Zero-filling writes this many bytes per call.
const ZERO_FILL_CHUNK: usize = 1 << 20;

/// The zeros a zero-fill writes: static, so that they are never allocated (nor their pages
/// faulted in and cleared, as a fresh allocation's are, at each growth); the kernel maps its
/// shared zero page under them.
static ZEROS: [u8; ZERO_FILL_CHUNK] = [0; ZERO_FILL_CHUNK];

/// The operating system's file systems.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsFs;

impl OsFs {
    /// A handle to the operating system's file systems.
    pub fn new() -> Self {
        OsFs
    }
}

impl Vfs for OsFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<FileRef> {
        let mut options = fs::OpenOptions::new();
        options.read(true).write(true);
        match mode {
            OpenMode::Existing => {}
            OpenMode::CreateNew => {
                options.create_new(true);
            }
            OpenMode::OpenOrCreate => {
                options.create(true);
            }
        }
        let file = options.open(path).map_err(|e| with_path(e, path))?;
        Ok(Arc::new(OsFile { file, path: path.to_path_buf() }))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path).map_err(|e| with_path(e, path))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path).map_err(|e| with_path(e, path))
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        fs::File::open(path).and_then(|dir| dir.sync_all()).map_err(|e| with_path(e, path))
    }

    fn lock_exclusive(&self, path: &Path) -> io::Result<FileLock> {
        // flock, on a descriptor of its own: the lock belongs to that open file description,
        // so the handles Walden reads and writes through are independent of it, a second
        // flock in this process conflicts like one in another, and the kernel drops the lock
        // when the process dies (no stale lock after a crash).
        let file = fs::OpenOptions::new().read(true).open(path).map_err(|e| with_path(e, path))?;
        match file.try_lock() {
            Ok(()) => Ok(FileLock::on(file)),
            Err(fs::TryLockError::WouldBlock) => {
                let holder = match lock_holder(&file) {
                    Some(pid) => format!("process {pid}"),
                    None => "another process".to_string(),
                };
                Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "{} is in use by {holder} (another Walden instance holds its lock)",
                        path.display()
                    ),
                ))
            }
            Err(fs::TryLockError::Error(e)) => Err(with_path(e, path)),
        }
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let mut paths = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| with_path(e, dir))? {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                paths.push(entry.path());
            }
        }
        paths.sort();
        Ok(paths)
    }
}

/// Adds the path to an error's message, keeping its kind and OS error code.
fn with_path(error: io::Error, path: &Path) -> io::Error {
    match error.raw_os_error() {
        // Keep the raw code (callers test for EIO/ENOSPC) and say where it happened.
        Some(code) => io::Error::new(
            io::Error::from_raw_os_error(code).kind(),
            format!("{}: {}", path.display(), io::Error::from_raw_os_error(code)),
        ),
        None => io::Error::new(error.kind(), format!("{}: {error}", path.display())),
    }
}

#[derive(Debug)]
struct OsFile {
    file: fs::File,
    path: PathBuf,
}

impl File for OsFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                crate::eof_error(&self.path, offset, buf.len())
            } else {
                with_path(e, &self.path)
            }
        })
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset).map_err(|e| with_path(e, &self.path))
    }

    fn write_vectored_all_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        // pwritev takes at most IOV_MAX (1024 on Linux) buffers; the log writes at most a few
        // hundred blocks per flush, but stay correct for any count by writing in batches.
        const IOV_MAX: usize = 1024;
        let mut at = offset;
        for batch in bufs.chunks(IOV_MAX) {
            let total: usize = batch.iter().map(|b| b.len()).sum();
            let mut written =
                pwritev(&self.file, batch, at).map_err(|e| with_path(e, &self.path))?;
            if written < total {
                // A short write (rare: signals, quotas): finish the rest one buffer at a time.
                let mut skip = written;
                for buf in batch {
                    if skip >= buf.len() {
                        skip -= buf.len();
                        continue;
                    }
                    self.write_all_at(&buf[skip..], at + written as u64)?;
                    written += buf.len() - skip;
                    skip = 0;
                }
            }
            at += total as u64;
        }
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data().map_err(|e| with_path(e, &self.path))
    }

    fn sync_all(&self) -> io::Result<()> {
        self.file.sync_all().map_err(|e| with_path(e, &self.path))
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata().map_err(|e| with_path(e, &self.path))?.len())
    }

    fn preallocate(&self, len: u64) -> io::Result<()> {
        let current = self.len()?;
        if len <= current {
            return Ok(());
        }
        // posix_fallocate alone leaves "unwritten" extents on ext4 and XFS, whose first
        // overwrite still converts the extent (a metadata update) at fdatasync time. Writing
        // real zeros makes every later overwrite a pure data write; fallocate first asks for
        // contiguous space, and its failure (e.g. on tmpfs) is harmless.
        fallocate(&self.file, current, len - current);
        let mut at = current;
        while at < len {
            let n = ZERO_FILL_CHUNK.min((len - at) as usize);
            if let Err(e) = self.write_all_at(&ZEROS[..n], at) {
                // ENOSPC (or EIO) part way leaves the file at whatever length the writes that
                // did land reached, and fallocate may have extended it too; give back what
                // this call added, so that a failed growth leaves the length the caller knew.
                // Best effort: the callers above cope with a partial tail after a crash anyway.
                let _ = self.file.set_len(current);
                return Err(e);
            }
            at += n as u64;
        }
        Ok(())
    }

    fn reserve(&self, len: u64) -> io::Result<()> {
        let current = self.len()?;
        if len <= current {
            return Ok(());
        }
        if reserve_space(&self.file, current, len - current) {
            return Ok(());
        }
        self.preallocate(len)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len).map_err(|e| with_path(e, &self.path))
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// The process holding a flock on `file`, from Linux's `/proc/locks` (whose lines read
/// `1: FLOCK  ADVISORY  WRITE 4242 08:01:1234567 0 EOF`: the pid, then the device as hex
/// major:minor and the inode). `None` where there is no such file or no line matches.
fn lock_holder(file: &fs::File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().ok()?;
    let dev = meta.dev();
    // The kernel's encoding of a dev_t's major and minor numbers.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let id = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    let locks = fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // "->" marks a waiter, not a holder.
        if fields.get(1) != Some(&"FLOCK") || fields.contains(&"->") {
            return None;
        }
        (fields.get(5) == Some(&id.as_str())).then(|| fields.get(4)?.parse().ok()).flatten()
    })
}

fn pwritev(file: &fs::File, bufs: &[&[u8]], offset: u64) -> io::Result<usize> {
    let iovecs: Vec<libc::iovec> = bufs
        .iter()
        .map(|b| libc::iovec { iov_base: b.as_ptr() as *mut libc::c_void, iov_len: b.len() })
        .collect();
    let offset = libc::off_t::try_from(offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
    let count = libc::c_int::try_from(iovecs.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "too many buffers"))?;
    loop {
        // SAFETY: `iovecs` points at `count` valid iovec structs, each describing a live,
        // initialized slice borrowed from `bufs` for the duration of the call; pwritev only
        // reads from them. The descriptor is owned by `file`, which outlives the call.
        let n = unsafe { libc::pwritev(file.as_raw_fd(), iovecs.as_ptr(), count, offset) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Asks the file system for contiguous space; a hint only, so failure is ignored.
fn fallocate(file: &fs::File, offset: u64, len: u64) {
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return;
    };
    // SAFETY: posix_fallocate takes a descriptor and two integers and touches no memory of
    // ours; the descriptor is owned by `file`, which outlives the call.
    let _ = unsafe { libc::posix_fallocate(file.as_raw_fd(), offset, len) };
}

/// Allocates `len` bytes of `file` from `offset` with the file system's own `fallocate`
/// (mode 0: the length grows, the new range reads as zeros); false where the file system
/// cannot (glibc's `posix_fallocate` would then write a byte per block instead).
fn reserve_space(file: &fs::File, offset: u64, len: u64) -> bool {
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return false;
    };
    // SAFETY: fallocate takes a descriptor and three integers and touches no memory of ours;
    // the descriptor is owned by `file`, which outlives the call.
    unsafe { libc::fallocate(file.as_raw_fd(), 0, offset, len) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preallocate_zero_fills_and_overwrites_stay_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let fs = OsFs::new();
        let f = fs.open(&dir.path().join("a"), OpenMode::CreateNew).unwrap();
        f.preallocate(3 * ZERO_FILL_CHUNK as u64 + 512).unwrap();
        assert_eq!(f.len().unwrap(), 3 * ZERO_FILL_CHUNK as u64 + 512);
        let mut buf = vec![1u8; 4096];
        f.read_exact_at(&mut buf, 2 * ZERO_FILL_CHUNK as u64).unwrap();
        assert!(buf.iter().all(|&b| b == 0));
        f.write_vectored_all_at(&[b"abc", b"de"], 10).unwrap();
        f.sync_data().unwrap();
        let mut five = [0u8; 5];
        f.read_exact_at(&mut five, 10).unwrap();
        assert_eq!(&five, b"abcde");
        assert_eq!(f.len().unwrap(), 3 * ZERO_FILL_CHUNK as u64 + 512);
    }

    #[test]
    fn reserve_grows_with_zeros_and_overwrites_stay_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let f = OsFs::new().open(&dir.path().join("r"), OpenMode::CreateNew).unwrap();
        f.write_all_at(b"head", 0).unwrap();
        f.reserve(2 * ZERO_FILL_CHUNK as u64 + 8192).unwrap();
        assert_eq!(f.len().unwrap(), 2 * ZERO_FILL_CHUNK as u64 + 8192);
        let mut buf = vec![1u8; 8192];
        f.read_exact_at(&mut buf, ZERO_FILL_CHUNK as u64).unwrap();
        assert!(buf.iter().all(|&b| b == 0));
        f.write_all_at(b"page", 8192).unwrap();
        f.sync_data().unwrap();
        let mut four = [0u8; 4];
        f.read_exact_at(&mut four, 0).unwrap();
        assert_eq!(&four, b"head");
        f.read_exact_at(&mut four, 8192).unwrap();
        assert_eq!(&four, b"page");
        // Never shrinks.
        f.reserve(10).unwrap();
        assert_eq!(f.len().unwrap(), 2 * ZERO_FILL_CHUNK as u64 + 8192);
    }

    #[test]
    fn reading_past_the_end_is_unexpected_eof() {
        let dir = tempfile::tempdir().unwrap();
        let f = OsFs::new().open(&dir.path().join("b"), OpenMode::OpenOrCreate).unwrap();
        f.write_all_at(b"xy", 0).unwrap();
        let mut buf = [0u8; 4];
        let e = f.read_exact_at(&mut buf, 0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn a_locked_file_names_itself_and_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let fs = OsFs::new();
        let p = dir.path().join("x.mdf");
        fs.open(&p, OpenMode::CreateNew).unwrap();
        let held = fs.lock_exclusive(&p).unwrap();
        let e = fs.lock_exclusive(&p).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        let text = e.to_string();
        assert!(text.contains(&p.display().to_string()), "{text}");
        if Path::new("/proc/locks").exists() {
            assert!(text.contains(&format!("process {}", std::process::id())), "{text}");
        }
        // Other handles on the file are unaffected, and dropping the lock releases it.
        fs.open(&p, OpenMode::Existing).unwrap().write_all_at(b"ok", 0).unwrap();
        drop(held);
        fs.lock_exclusive(&p).unwrap();
        assert!(fs.lock_exclusive(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn open_modes() {
        let dir = tempfile::tempdir().unwrap();
        let fs = OsFs::new();
        let p = dir.path().join("c");
        assert_eq!(fs.open(&p, OpenMode::Existing).unwrap_err().kind(), io::ErrorKind::NotFound);
        fs.open(&p, OpenMode::CreateNew).unwrap();
        assert_eq!(
            fs.open(&p, OpenMode::CreateNew).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert!(fs.exists(&p));
        assert_eq!(fs.list(dir.path()).unwrap(), vec![p.clone()]);
        fs.remove(&p).unwrap();
        assert!(!fs.exists(&p));
    }
}
