//! Helpers shared by the log's integration tests.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use walden_io::{File, FileRef, MemFs, OpenMode, Vfs};
use walden_io::{FileGrowth, GrowthStep};
use walden_log::{LogConfig, LogManager, LogRecord, RecordKind};

pub fn log_path() -> PathBuf {
    PathBuf::from("/db/test.ldf")
}

/// A small configuration: tiny segments so tests cross segment ends, no time bound unless set.
pub fn small_config() -> LogConfig {
    LogConfig {
        buffer_blocks: 8,
        max_delay_ms: 0,
        segment_size: 64 * 1024,
        initial_segments: 2,
        spare_segments: 1,
        // One segment per growth, so that tests meet growth often.
        growth: FileGrowth { step: GrowthStep::Bytes(64 * 1024), max_bytes: None },
    }
}

pub fn open(vfs: &Arc<dyn Vfs>, config: LogConfig) -> LogManager {
    LogManager::open(Arc::clone(vfs), &log_path(), config).unwrap().0
}

pub fn mem() -> Arc<dyn Vfs> {
    Arc::new(MemFs::new())
}

pub fn records(log: &LogManager) -> Vec<LogRecord> {
    log.scan(0).collect::<Result<Vec<_>, _>>().unwrap()
}

/// Transaction ids of the commit records, in log order.
pub fn committed(log: &LogManager) -> Vec<u64> {
    records(log).iter().filter(|r| r.kind == RecordKind::Commit).map(|r| r.txn).collect()
}

/// A file system whose syncs take `delay`: a slow disk, so the buffer can fill.
#[derive(Debug)]
pub struct SlowFs<V: Vfs = MemFs> {
    pub inner: V,
    pub delay: Duration,
}

#[derive(Debug)]
struct SlowFile {
    inner: FileRef,
    delay: Duration,
}

impl<V: Vfs> Vfs for SlowFs<V> {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<FileRef> {
        Ok(Arc::new(SlowFile { inner: self.inner.open(path, mode)?, delay: self.delay }))
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

impl File for SlowFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.inner.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        std::thread::sleep(self.delay);
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
