//! The buffer pool against real and simulated files: eviction with a pool much smaller than
//! the data, the WAL rule as seen from the disk, checkpoints that survive a reopen and a crash,
//! the dirty page table, concurrency, fail-stop, bounded waiting and corruption.
#![allow(clippy::unwrap_used)]

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use walden_io::{FaultKind, File, FileRef, MemFs, OpenMode, OsFs, SimFs, SplitMix64, Vfs};
use walden_storage::buffer::default_max_memory_mb;
use walden_storage::{
    BufferError, BufferPool, Corruption, DataFile, FileError, FramePool, Lsn, NoWal, Page,
    PageError, PageId, PageType, PoolConfig, WalFlush, PAGE_SIZE,
};

mod concurrency;
mod failure;
mod pool;
mod shared;
mod wal;

fn config(frames: usize) -> PoolConfig {
    PoolConfig {
        frame_pool: None,
        frames,
        writer_interval_ms: 0,
        dirty_high_percent: 50,
        grow_pages: 64,
    }
}

fn db_path() -> PathBuf {
    DataFile::path_for(Path::new("/db"), "test")
}

fn create(vfs: &dyn Vfs, path: &Path, pages: u32) -> Arc<DataFile> {
    Arc::new(DataFile::create(vfs, path, 1, pages).unwrap())
}

fn pool(file: &Arc<DataFile>, wal: Arc<dyn WalFlush>, config: PoolConfig) -> Arc<BufferPool> {
    BufferPool::new(Arc::clone(file), wal, config).unwrap()
}

/// A record that names its page and a round, of a length that varies with both.
fn payload(id: PageId, round: u64) -> Vec<u8> {
    let mut r = format!("page {id} round {round} ").into_bytes();
    r.resize(100 + (id as usize * 37 + round as usize) % 900, b'a' + (id % 26) as u8);
    r
}

/// Formats page `id` as a heap page holding `payload(id, round)` and marks it dirty at `lsn`.
fn put(pool: &BufferPool, id: PageId, round: u64, lsn: Lsn) {
    let pinned = pool.fetch_new(id, PageType::Heap).unwrap();
    let mut page = pinned.write();
    page.push(&payload(id, round)).unwrap();
    page.mark_dirty(lsn);
}

/// Replaces page `id`'s record with `payload(id, round)` and marks it dirty at `lsn`.
fn rewrite(pool: &BufferPool, id: PageId, round: u64, lsn: Lsn) {
    let pinned = pool.fetch(id).unwrap();
    let mut page = pinned.write();
    page.update(0, &payload(id, round)).unwrap();
    page.mark_dirty(lsn);
}

fn record(pool: &BufferPool, id: PageId) -> Vec<u8> {
    let pinned = pool.fetch(id).unwrap();
    let page = pinned.read();
    assert_eq!(page.page_id(), id);
    page.get(0).unwrap().to_vec()
}

/// Records each `flush_to` and the highest LSN hardened so far.
#[derive(Debug, Default)]
struct RecordingWal {
    calls: Mutex<Vec<Lsn>>,
    hardened: AtomicU64,
}

impl WalFlush for RecordingWal {
    fn flush_to(&self, lsn: Lsn) -> Result<(), String> {
        self.calls.lock().unwrap().push(lsn);
        self.hardened.fetch_max(lsn, Ordering::SeqCst);
        Ok(())
    }
}

/// What the disk saw: page writes, and those whose LSN was not hardened when they arrived.
#[derive(Debug, Default)]
struct WriteLog {
    page_writes: u64,
    violations: Vec<(PageId, Lsn, Lsn)>,
}

/// A file system that checks the WAL rule at the disk: every page image written must carry an
/// LSN the log has already hardened.
#[derive(Debug)]
struct WalCheckFs {
    inner: MemFs,
    wal: Arc<RecordingWal>,
    log: Arc<Mutex<WriteLog>>,
}

#[derive(Debug)]
struct WalCheckFile {
    inner: FileRef,
    wal: Arc<RecordingWal>,
    log: Arc<Mutex<WriteLog>>,
}

impl Vfs for WalCheckFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<FileRef> {
        Ok(Arc::new(WalCheckFile {
            inner: self.inner.open(path, mode)?,
            wal: Arc::clone(&self.wal),
            log: Arc::clone(&self.log),
        }))
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.inner.remove(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        self.inner.list(dir)
    }
}

impl File for WalCheckFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        if buf.len() == PAGE_SIZE {
            let hardened = self.wal.hardened.load(Ordering::SeqCst);
            let page = Page::from_bytes(buf.try_into().unwrap());
            let mut log = self.log.lock().unwrap();
            log.page_writes += 1;
            if page.page_lsn() > hardened {
                log.violations.push((page.page_id(), page.page_lsn(), hardened));
            }
        }
        self.inner.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_data()
    }
    fn sync_all(&self) -> io::Result<()> {
        self.inner.sync_all()
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn preallocate(&self, len: u64) -> io::Result<()> {
        self.inner.preallocate(len)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
}
