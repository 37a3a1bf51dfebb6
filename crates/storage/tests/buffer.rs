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

#[test]
fn small_pool_evicts_and_reads_back_500_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = DataFile::path_for(dir.path(), "evict");
    let file = create(&OsFs::new(), &path, 1);
    let pool = pool(&file, Arc::new(NoWal), PoolConfig { grow_pages: 128, ..config(12) });
    for id in 1..=500 {
        put(&pool, id, 0, u64::from(id) * 10);
    }
    assert!(file.page_count() > 500);
    for id in 1..=500 {
        assert_eq!(record(&pool, id), payload(id, 0), "page {id}");
    }
    let stats = pool.stats();
    assert_eq!(stats.frames, 12);
    assert!(stats.cached <= 12);
    assert!(stats.evictions >= 2 * 500 - 12 - 12, "{stats:?}");
    assert!(stats.reads >= 500 - 12, "{stats:?}");
    assert!(stats.writes >= 500 - 12, "{stats:?}");
    // The first pass evicted every page it wrote, so the second pass read them all.
    assert_eq!(stats.checkpoint_writes + stats.writer_writes, 0);
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

#[test]
fn every_page_write_comes_after_its_log_flush() {
    let wal = Arc::new(RecordingWal::default());
    let log = Arc::new(Mutex::new(WriteLog::default()));
    let fs = WalCheckFs { inner: MemFs::new(), wal: Arc::clone(&wal), log: Arc::clone(&log) };
    let file = create(&fs, &db_path(), 1);
    // Eviction and the background writer both write; both must obey the rule.
    let cfg = PoolConfig { writer_interval_ms: 1, dirty_high_percent: 25, ..config(8) };
    let pool = pool(&file, wal.clone(), cfg);
    let mut rng = SplitMix64::new(11);
    let mut lsn = 0;
    for id in 1..=150 {
        lsn += 1 + rng.below(50);
        put(&pool, id, 0, lsn);
    }
    for round in 1..=3 {
        for _ in 0..150 {
            let id = 1 + rng.below(150) as PageId;
            lsn += 1 + rng.below(50);
            rewrite(&pool, id, round, lsn);
        }
    }
    pool.flush_all().unwrap();
    pool.shutdown();

    let log = log.lock().unwrap();
    assert!(log.violations.is_empty(), "written before their log: {:?}", log.violations);
    let stats = pool.stats();
    // The create wrote page 0; every other page write is the pool's.
    assert_eq!(log.page_writes, stats.writes + 1, "{stats:?}");
    assert!(stats.evictions > 0 && stats.wal_flushes > 0, "{stats:?}");
    assert_eq!(wal.calls.lock().unwrap().len() as u64, stats.wal_flushes);
    assert!(wal.calls.lock().unwrap().iter().all(|&l| l > 0), "LSN 0 needs no flush");
}

#[test]
fn flush_all_writes_everything_and_the_file_reopens_verified() {
    let dir = tempfile::tempdir().unwrap();
    let path = DataFile::path_for(dir.path(), "ckpt");
    let fs = OsFs::new();
    let file = create(&fs, &path, 1);
    let pool = pool(&file, Arc::new(NoWal), config(64));
    for id in 1..=40 {
        put(&pool, id, 0, u64::from(id));
    }
    for id in (1..=40).step_by(3) {
        rewrite(&pool, id, 1, 100 + u64::from(id));
    }
    assert_eq!(pool.stats().dirty, 40);
    let summary = pool.flush_all().unwrap();
    assert_eq!(summary.pages_written, 40);
    let stats = pool.stats();
    assert_eq!((stats.checkpoint_writes, stats.dirty), (40, 0));
    assert!(pool.dirty_page_table().is_empty());
    assert_eq!(pool.min_rec_lsn(), None);
    // Nothing is dirty, so a second checkpoint writes nothing.
    assert_eq!(pool.flush_all().unwrap().pages_written, 0);
    drop(pool);
    drop(file);

    let file = DataFile::open(&fs, &path).unwrap();
    for id in 1..=40 {
        let page = file.read_page(id).unwrap();
        page.check().unwrap();
        let round = u64::from((id - 1) % 3 == 0);
        assert_eq!(page.get(0).unwrap(), payload(id, round), "page {id}");
        assert_eq!(page.page_lsn(), if round == 1 { 100 + u64::from(id) } else { u64::from(id) });
    }
}

#[test]
fn flush_all_survives_a_crash() {
    let fs = SimFs::new(7);
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), config(16));
    for id in 1..=60 {
        put(&pool, id, 0, u64::from(id));
    }
    pool.flush_all().unwrap();
    // After the checkpoint: may or may not survive.
    rewrite(&pool, 5, 1, 500);
    pool.flush_page(5).unwrap();
    drop(pool);
    drop(file);
    fs.crash();

    let file = DataFile::open(&fs, &db_path()).unwrap();
    for id in 1..=60 {
        let page = file.read_page(id);
        if id == 5 {
            // Written but never synced: the old image, the new one, or a torn one.
            match page {
                Ok(p) => assert!(p.get(0).unwrap() == payload(5, 0) || p.page_lsn() == 500),
                Err(e) => assert!(matches!(e, FileError::Page(PageError::Corrupt { .. }))),
            }
            continue;
        }
        assert_eq!(page.unwrap().get(0).unwrap(), payload(id, 0), "page {id}");
    }
}

#[test]
fn dirty_page_table_keeps_the_first_lsn_since_clean() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), config(16));
    let five = pool.fetch_new(5, PageType::BTreeLeaf).unwrap();
    // Formatted, but not dirty until a change is marked.
    assert!(pool.dirty_page_table().is_empty());
    {
        let mut page = five.write();
        page.push(b"k1").unwrap();
        page.mark_dirty(100);
        page.push(b"k2").unwrap();
        page.mark_dirty(200);
        // An older LSN (records are marked out of order by concurrent writers) never lowers it.
        page.mark_dirty(150);
        assert_eq!(page.page_lsn(), 200);
    }
    assert_eq!(pool.dirty_page_table(), vec![(5, 100)]);
    {
        let six = pool.fetch_new(6, PageType::Heap).unwrap();
        let mut page = six.write();
        page.push(b"unlogged").unwrap();
        page.mark_dirty(0);
        assert_eq!(page.page_lsn(), 0);
    }
    assert_eq!(pool.dirty_page_table(), vec![(5, 100), (6, 0)]);
    assert_eq!(pool.min_rec_lsn(), Some(0));
    assert_eq!(pool.stats().dirty, 2);

    pool.flush_page(6).unwrap();
    assert_eq!(pool.dirty_page_table(), vec![(5, 100)]);
    assert_eq!(pool.min_rec_lsn(), Some(100));
    pool.flush_page(5).unwrap();
    pool.flush_page(77).unwrap(); // not cached: nothing to do
    assert_eq!(pool.min_rec_lsn(), None);
    five.write().mark_dirty(300);
    assert_eq!(pool.dirty_page_table(), vec![(5, 300)]);
    assert_eq!(five.read().page_lsn(), 300);
    let stats = pool.stats();
    assert_eq!((stats.writes, stats.wal_flushes), (2, 1), "{stats:?}");
}

/// A WAL whose flushes wait for the test's go-ahead, to hold a write-out between its copy and
/// its write.
#[derive(Debug)]
struct GateWal {
    entered: Mutex<Sender<Lsn>>,
    go: Mutex<Receiver<()>>,
}

impl WalFlush for GateWal {
    fn flush_to(&self, lsn: Lsn) -> Result<(), String> {
        self.entered.lock().unwrap().send(lsn).map_err(|e| e.to_string())?;
        self.go.lock().unwrap().recv().map_err(|e| e.to_string())
    }
}

#[test]
fn a_change_during_a_write_out_keeps_the_page_dirty() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let (entered_tx, entered) = channel();
    let (go, go_rx) = channel();
    let wal = GateWal { entered: Mutex::new(entered_tx), go: Mutex::new(go_rx) };
    let pool = pool(&file, Arc::new(wal), config(8));
    put(&pool, 3, 0, 10);

    let flusher = {
        let pool = Arc::clone(&pool);
        thread::spawn(move || pool.flush_page(3))
    };
    // The write-out has copied the image (LSN 10) and waits for the log.
    assert_eq!(entered.recv().unwrap(), 10);
    rewrite(&pool, 3, 1, 20);
    go.send(()).unwrap();
    flusher.join().unwrap().unwrap();

    // The image written lacks the change at 20, so the page stays dirty, now from 20.
    assert_eq!(pool.dirty_page_table(), vec![(3, 20)]);
    assert_eq!(file.read_page(3).unwrap().get(0).unwrap(), payload(3, 0));
    let again = thread::spawn(move || entered.recv().unwrap());
    go.send(()).unwrap();
    pool.flush_page(3).unwrap();
    assert_eq!(again.join().unwrap(), 20);
    assert!(pool.dirty_page_table().is_empty());
    assert_eq!(file.read_page(3).unwrap().get(0).unwrap(), payload(3, 1));
}

#[test]
fn concurrent_counters_add_up() {
    const PAGES: u32 = 200;
    const THREADS: u64 = 4;
    const OPS: u64 = 2500;
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let cfg = PoolConfig { writer_interval_ms: 1, ..config(16) };
    let pool = pool(&file, Arc::new(NoWal), cfg);
    let lsn = Arc::new(AtomicU64::new(1));
    for id in 1..=PAGES {
        let pinned = pool.fetch_new(id, PageType::BTreeLeaf).unwrap();
        let mut page = pinned.write();
        page.push(&0u64.to_le_bytes()).unwrap();
        page.mark_dirty(lsn.fetch_add(1, Ordering::SeqCst));
    }

    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (pool, lsn) = (Arc::clone(&pool), Arc::clone(&lsn));
            thread::spawn(move || {
                let mut rng = SplitMix64::new(1000 + t);
                let mut added = vec![0u64; PAGES as usize + 1];
                for _ in 0..OPS {
                    let id = 1 + rng.below(u64::from(PAGES)) as PageId;
                    let pinned = pool.fetch(id).unwrap();
                    if rng.chance(1, 4) {
                        let page = pinned.read();
                        assert_eq!(page.page_id(), id);
                        assert_eq!(page.get(0).unwrap().len(), 8);
                        continue;
                    }
                    let mut page = pinned.write();
                    let n = u64::from_le_bytes(page.get(0).unwrap().try_into().unwrap());
                    page.update(0, &(n + 1).to_le_bytes()).unwrap();
                    page.mark_dirty(lsn.fetch_add(1, Ordering::SeqCst));
                    added[id as usize] += 1;
                }
                added
            })
        })
        .collect();
    let mut expected = vec![0u64; PAGES as usize + 1];
    for worker in workers {
        for (total, n) in expected.iter_mut().zip(worker.join().unwrap()) {
            *total += n;
        }
    }
    let counter = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().unwrap());
    for id in 1..=PAGES {
        assert_eq!(counter(&record(&pool, id)), expected[id as usize], "page {id}");
    }
    // A quarter of the operations only read; the rest added one each.
    let added: u64 = expected.iter().sum();
    assert!((THREADS * OPS * 6 / 10..THREADS * OPS * 9 / 10).contains(&added), "{added}");
    pool.flush_all().unwrap();
    let stats = pool.stats();
    assert!(stats.evictions > 1000 && stats.reads > 1000, "{stats:?}");
    assert_eq!(pool.failure(), None);
    let reopened = DataFile::open(&fs, &db_path()).unwrap();
    for id in 1..=PAGES {
        let page = reopened.read_page(id).unwrap();
        assert_eq!(counter(page.get(0).unwrap()), expected[id as usize], "page {id} on disk");
    }
}

#[test]
fn latch_coupled_updates_evict_without_deadlock() {
    // Each operation holds the write latch of one page while it fetches and latches a second
    // (in page order, as a B-tree descent would): evictions then happen under a held latch,
    // and the pool must never wait for a latch a fetching thread holds.
    const PAGES: u32 = 120;
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let cfg = PoolConfig { writer_interval_ms: 1, ..config(16) };
    let pool = pool(&file, Arc::new(NoWal), cfg);
    for id in 1..=PAGES {
        let pinned = pool.fetch_new(id, PageType::Heap).unwrap();
        let mut page = pinned.write();
        page.push(&0u64.to_le_bytes()).unwrap();
        page.mark_dirty(0);
    }
    let bump = |page: &mut walden_storage::PageWriteGuard<'_>, lsn: Lsn| {
        let n = u64::from_le_bytes(page.get(0).unwrap().try_into().unwrap());
        page.update(0, &(n + 1).to_le_bytes()).unwrap();
        page.mark_dirty(lsn);
    };
    let lsn = Arc::new(AtomicU64::new(1));
    let workers: Vec<_> = (0..4u64)
        .map(|t| {
            let (pool, lsn) = (Arc::clone(&pool), Arc::clone(&lsn));
            thread::spawn(move || {
                let mut rng = SplitMix64::new(77 + t);
                let mut added = vec![0u64; PAGES as usize + 1];
                for _ in 0..1500 {
                    let a = 1 + rng.below(u64::from(PAGES) - 1) as PageId;
                    let b = a + 1 + rng.below(u64::from(PAGES - a)) as PageId;
                    let first = pool.fetch(a).unwrap();
                    let mut first_page = first.write();
                    let second = pool.fetch(b).unwrap();
                    let mut second_page = second.write();
                    bump(&mut first_page, lsn.fetch_add(1, Ordering::SeqCst));
                    bump(&mut second_page, lsn.fetch_add(1, Ordering::SeqCst));
                    added[a as usize] += 1;
                    added[b as usize] += 1;
                }
                added
            })
        })
        .collect();
    let mut expected = vec![0u64; PAGES as usize + 1];
    for worker in workers {
        for (total, n) in expected.iter_mut().zip(worker.join().unwrap()) {
            *total += n;
        }
    }
    for id in 1..=PAGES {
        let n = u64::from_le_bytes(record(&pool, id).try_into().unwrap());
        assert_eq!(n, expected[id as usize], "page {id}");
    }
    assert_eq!(pool.failure(), None);
    assert!(pool.stats().evictions > 1000, "{:?}", pool.stats());
}

#[test]
fn concurrent_fetches_of_one_page_read_it_once() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    {
        let writer = pool(&file, Arc::new(NoWal), config(8));
        put(&writer, 9, 0, 1);
        writer.flush_all().unwrap();
    }
    let pool = pool(&file, Arc::new(NoWal), config(8));
    let barrier = Arc::new(Barrier::new(8));
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let (pool, barrier) = (Arc::clone(&pool), Arc::clone(&barrier));
            thread::spawn(move || {
                barrier.wait();
                record(&pool, 9)
            })
        })
        .collect();
    for reader in readers {
        assert_eq!(reader.join().unwrap(), payload(9, 0));
    }
    let stats = pool.stats();
    assert_eq!((stats.reads, stats.cached), (1, 1), "{stats:?}");
}

#[test]
fn a_failed_write_makes_the_pool_fail_stop() {
    let fs = SimFs::new(1);
    // Big enough from the start: no growth, so the injected fault hits a page write.
    let file = create(&fs, &db_path(), 64);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    for id in 1..=8 {
        put(&pool, id, 0, u64::from(id));
    }
    fs.fail_nth_write(1, FaultKind::Eio);
    // A ninth page needs a frame, and every frame is dirty.
    match pool.fetch_new(9, PageType::Heap) {
        Err(BufferError::File(FileError::Io { op: "write", .. })) => {}
        other => panic!("{other:?}"),
    }
    let why = pool.failure().unwrap();
    assert!(why.contains("write"), "{why}");
    let writes = fs.writes();
    assert!(matches!(pool.fetch(1), Err(BufferError::Failed(_))));
    assert!(matches!(pool.fetch_new(10, PageType::Heap), Err(BufferError::Failed(_))));
    assert!(matches!(pool.flush_page(2), Err(BufferError::Failed(_))));
    assert!(matches!(pool.flush_all(), Err(BufferError::Failed(_))));
    // Never retried, nothing else written.
    assert_eq!(fs.writes(), writes);
    // What a failed pool can never write is forgotten, and its frames go back to the frame
    // pool for the databases that still work.
    let stats = pool.stats();
    assert_eq!((stats.dirty, stats.cached), (0, 0), "{stats:?}");
    assert_eq!(pool.frame_pool().memory().dirty_frames, 0);
}

#[test]
fn a_failed_sync_in_a_checkpoint_is_sticky() {
    let fs = SimFs::new(2);
    let file = create(&fs, &db_path(), 16);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    put(&pool, 1, 0, 1);
    fs.fail_nth_sync(1, FaultKind::Eio);
    assert!(matches!(pool.flush_all(), Err(BufferError::File(FileError::Io { op: "sync", .. }))));
    put_fails(&pool);
    // A retried sync would "succeed" without the lost writes: the pool does not offer one.
    assert!(matches!(pool.flush_all(), Err(BufferError::Failed(_))));
}

fn put_fails(pool: &BufferPool) {
    assert!(matches!(pool.fetch_new(2, PageType::Heap), Err(BufferError::Failed(_))));
}

#[derive(Debug)]
struct BrokenWal;

impl WalFlush for BrokenWal {
    fn flush_to(&self, _lsn: Lsn) -> Result<(), String> {
        Err("log disk gone".into())
    }
}

#[test]
fn a_failed_log_flush_makes_the_pool_fail_stop_without_writing() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 16);
    let pool = pool(&file, Arc::new(BrokenWal), config(8));
    put(&pool, 4, 0, 42);
    match pool.flush_page(4) {
        Err(BufferError::Wal(why)) => assert!(why.contains("log disk gone")),
        other => panic!("{other:?}"),
    }
    assert!(pool.failure().unwrap().contains("log disk gone"));
    assert_eq!(pool.stats().writes, 0);
    assert!(matches!(file.read_page(4), Err(FileError::Page(PageError::NeverWritten { .. }))));
    assert!(matches!(pool.fetch(4), Err(BufferError::Failed(_))));
}

#[test]
fn all_frames_pinned_gives_no_free_frame_within_the_wait() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    pool.set_free_frame_wait(Duration::from_millis(300));
    let pins: Vec<_> = (1..=8).map(|id| pool.fetch_new(id, PageType::Heap).unwrap()).collect();
    let start = Instant::now();
    match pool.fetch_new(9, PageType::Heap) {
        Err(BufferError::NoFreeFrame { frames: 8 }) => {}
        other => panic!("{other:?}"),
    }
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(3), "{waited:?}");
    // Cached pages are still served; the pool is not failed.
    assert_eq!(pool.fetch(3).unwrap().id(), 3);
    assert_eq!(pool.failure(), None);
    drop(pins);
    assert_eq!(pool.fetch_new(9, PageType::Heap).unwrap().id(), 9);
}

#[test]
fn a_waiting_fetch_takes_the_frame_a_released_pin_frees() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    let mut pins: Vec<_> = (1..=8).map(|id| pool.fetch_new(id, PageType::Heap).unwrap()).collect();
    let last = pins.pop().unwrap();
    let releaser = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        drop(last);
    });
    let start = Instant::now();
    assert_eq!(pool.fetch_new(9, PageType::Heap).unwrap().id(), 9);
    assert!(start.elapsed() < Duration::from_secs(4));
    releaser.join().unwrap();
}

#[test]
fn a_page_corrupted_on_disk_fails_fetch() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    put(&pool, 3, 0, 1);
    put(&pool, 4, 0, 2);
    pool.flush_all().unwrap();
    pool.discard();
    let raw = fs.open(&db_path(), OpenMode::Existing).unwrap();
    let at = 3 * PAGE_SIZE as u64 + 200;
    let mut b = [0];
    raw.read_exact_at(&mut b, at).unwrap();
    raw.write_all_at(&[b[0] ^ 0x40], at).unwrap();
    match pool.fetch(3) {
        Err(BufferError::File(FileError::Page(PageError::Corrupt {
            page_id: 3,
            detail: Corruption::ChecksumMismatch { .. },
        }))) => {}
        other => panic!("{other:?}"),
    }
    // A bad page is that page's problem, not the pool's.
    assert_eq!(pool.failure(), None);
    assert_eq!(record(&pool, 4), payload(4, 0));
    assert!(matches!(pool.fetch(3), Err(BufferError::File(_))));
    assert_eq!(pool.stats().cached, 1);
}

#[test]
fn a_never_written_page_fails_fetch() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 8);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    match pool.fetch(5) {
        Err(BufferError::File(FileError::Page(PageError::NeverWritten { page_id: 5 }))) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        pool.fetch(8),
        Err(BufferError::File(FileError::PageOutOfRange { page_id: 8, .. }))
    ));
}

/// A heap page whose one record claims more bytes than the record area holds.
fn damage_slot(page: &mut Page) {
    let len_at = PAGE_SIZE - 2;
    page.as_bytes_mut()[len_at..].copy_from_slice(&4000u16.to_le_bytes());
}

#[test]
fn a_record_area_that_fails_its_check_fails_fetch_despite_a_good_checksum() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 8);
    let mut bad = Page::new(2, PageType::Heap);
    bad.push(b"short").unwrap();
    damage_slot(&mut bad);
    file.write_page(&mut bad).unwrap(); // sealed: the checksum is right
    let pool = pool(&file, Arc::new(NoWal), config(8));
    match pool.fetch(2) {
        Err(BufferError::File(FileError::Page(PageError::Corrupt {
            page_id: 2,
            detail: Corruption::Records(_),
        }))) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_page_damaged_in_memory_is_never_written() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 8);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    put(&pool, 2, 0, 5);
    pool.flush_page(2).unwrap();
    {
        let pinned = pool.fetch(2).unwrap();
        let mut page = pinned.write();
        damage_slot(&mut page);
        page.mark_dirty(6);
    }
    assert!(matches!(
        pool.flush_page(2),
        Err(BufferError::File(FileError::Page(PageError::Corrupt { page_id: 2, .. })))
    ));
    assert!(pool.failure().is_some());
    assert_eq!(file.read_page(2).unwrap().get(0).unwrap(), payload(2, 0));
}

#[test]
fn discard_drops_dirty_pages_without_writing() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    put(&pool, 1, 0, 1);
    put(&pool, 2, 0, 2);
    pool.flush_all().unwrap();
    rewrite(&pool, 1, 1, 3);
    let held = pool.fetch(2).unwrap();
    let writes = pool.stats().writes;
    pool.discard();
    assert!(pool.dirty_page_table().is_empty());
    assert_eq!(pool.stats().cached, 0);
    assert_eq!(pool.stats().writes, writes);
    // The pinned page is still readable by its holder...
    assert_eq!(held.read().get(0).unwrap(), payload(2, 0));
    // ...and the discarded change is gone: the disk's image comes back.
    assert_eq!(record(&pool, 1), payload(1, 0));
    assert_eq!(record(&pool, 2), payload(2, 0));
    drop(held);
    assert_eq!(pool.stats().cached, 2);
}

#[test]
fn fetch_new_grows_the_file_and_replaces_a_cached_image() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), PoolConfig { grow_pages: 32, ..config(8) });
    put(&pool, 5, 0, 1);
    assert_eq!(file.page_count(), 33);
    put(&pool, 100, 0, 2);
    assert_eq!(file.page_count(), 101);
    pool.flush_all().unwrap();
    let pinned = pool.fetch_new(5, PageType::BTreeLeaf).unwrap();
    {
        let page = pinned.read();
        assert_eq!((page.page_type(), page.slot_count()), (Some(PageType::BTreeLeaf), 0));
    }
    // Reformatted, but not dirty until marked.
    assert!(pool.dirty_page_table().is_empty());
    pinned.write().mark_dirty(9);
    assert_eq!(pool.dirty_page_table(), vec![(5, 9)]);
}

#[test]
fn the_background_writer_cleans_dirty_frames() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let cfg = PoolConfig { writer_interval_ms: 2, dirty_high_percent: 25, ..config(16) };
    let pool = pool(&file, Arc::new(NoWal), cfg);
    for id in 1..=16 {
        put(&pool, id, 0, u64::from(id));
    }
    let start = Instant::now();
    while pool.stats().dirty > 4 && start.elapsed() < Duration::from_secs(3) {
        thread::sleep(Duration::from_millis(2));
    }
    let stats = pool.stats();
    assert!(stats.dirty <= 4 && stats.writer_writes >= 12, "{stats:?}");
    // Oldest first: the pages left dirty are the newest.
    assert!(pool.dirty_page_table().iter().all(|&(id, _)| id > 12));
    pool.shutdown();
    let writes = pool.stats().writer_writes;
    for id in 1..=16 {
        rewrite(&pool, id, 1, 100 + u64::from(id));
    }
    thread::sleep(Duration::from_millis(20));
    assert_eq!(pool.stats().writer_writes, writes, "stopped writers do not write");
}

#[test]
fn shutdown_and_drop_are_prompt_with_a_long_writer_period() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let start = Instant::now();
    let pool = pool(&file, Arc::new(NoWal), PoolConfig { writer_interval_ms: 60_000, ..config(8) });
    put(&pool, 1, 0, 1);
    let held = pool.fetch(1).unwrap();
    drop(pool);
    // The page outlives the pool handle; the writer does not.
    assert_eq!(held.read().get(0).unwrap(), payload(1, 0));
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn config_is_validated() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let bad = [
        config(7),
        PoolConfig { dirty_high_percent: 101, ..config(8) },
        PoolConfig { grow_pages: 0, ..config(8) },
    ];
    for cfg in bad {
        match BufferPool::new(Arc::clone(&file), Arc::new(NoWal), cfg) {
            Err(e @ BufferError::Config(_)) => assert!(e.to_string().contains("configuration")),
            other => panic!("{other:?}"),
        }
    }
    let d = PoolConfig::default();
    assert_eq!(
        (d.frames, d.writer_interval_ms, d.dirty_high_percent, d.grow_pages),
        (default_max_memory_mb() as usize * 128, 100, 50, 128)
    );
    assert!(d.frame_pool.is_none());
}

#[test]
fn handles_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<BufferPool>();
    send::<walden_storage::PinnedPage>();
}

/// A pool attached to `frames`, the frame pool other databases share.
fn attached(
    frames: &Arc<FramePool>,
    file: &Arc<DataFile>,
    wal: Arc<dyn WalFlush>,
) -> Arc<BufferPool> {
    let cfg = PoolConfig { frame_pool: Some(Arc::clone(frames)), ..config(8) };
    pool(file, wal, cfg)
}

#[test]
fn databases_sharing_frames_evict_each_other_under_their_own_wal_rule() {
    let frames = FramePool::new(16).unwrap();
    let mut dbs = Vec::new();
    for _ in 0..3 {
        let wal = Arc::new(RecordingWal::default());
        let log = Arc::new(Mutex::new(WriteLog::default()));
        let fs = WalCheckFs { inner: MemFs::new(), wal: Arc::clone(&wal), log: Arc::clone(&log) };
        let file = create(&fs, &db_path(), 1);
        let pool = attached(&frames, &file, wal.clone());
        dbs.push((pool, wal, log));
    }
    // Interleaved, so that each database's fetches evict the others' dirty pages; each
    // database's LSNs run on its own (its log is its own), and all of them far past the others'.
    let mut rng = SplitMix64::new(27);
    let mut lsns = [0u64, 1 << 40, 2 << 40];
    for id in 1..=100 {
        for (d, (pool, _, _)) in dbs.iter().enumerate() {
            lsns[d] += 1 + rng.below(20);
            put(pool, id, d as u64, lsns[d]);
        }
    }
    for (d, (pool, _, _)) in dbs.iter().enumerate() {
        for id in 1..=100 {
            assert_eq!(record(pool, id), payload(id, d as u64), "database {d} page {id}");
        }
    }
    let memory = frames.memory();
    assert_eq!((memory.capacity_frames, memory.allocated_frames), (16, 16), "{memory:?}");
    let cached: usize = dbs.iter().map(|(pool, _, _)| pool.stats().cached).sum();
    assert_eq!(cached, memory.cached_frames);
    assert!(cached <= 16);
    for (pool, wal, log) in &dbs {
        let log = log.lock().unwrap();
        assert!(log.violations.is_empty(), "written before their log: {:?}", log.violations);
        let stats = pool.stats();
        assert!(stats.writes >= 100 - 16 && stats.evictions > 0, "{stats:?}");
        // Only this database's log was asked to flush for its pages, whoever evicted them.
        assert_eq!(wal.calls.lock().unwrap().len() as u64, stats.wal_flushes);
    }
}

#[test]
fn frames_are_allocated_as_pages_need_them_and_given_back_when_a_database_goes() {
    let frames = FramePool::new(10_000).unwrap();
    assert_eq!(frames.memory().allocated_frames, 0);
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let first = attached(&frames, &file, Arc::new(NoWal));
    for id in 1..=3 {
        put(&first, id, 0, u64::from(id));
    }
    let memory = frames.memory();
    assert_eq!((memory.allocated_frames, memory.cached_frames, memory.dirty_frames), (3, 3, 3));
    assert_eq!(first.stats().frames, 10_000);
    // A dropped pool's frames go back, dirty or not, and the next database reuses them.
    drop(first);
    let memory = frames.memory();
    assert_eq!((memory.allocated_frames, memory.cached_frames, memory.dirty_frames), (3, 0, 0));
    let other = create(&fs, Path::new("/db/other.mdf"), 1);
    let second = attached(&frames, &other, Arc::new(NoWal));
    for id in 1..=3 {
        put(&second, id, 1, u64::from(id));
    }
    assert_eq!(frames.memory().allocated_frames, 3);
    assert_eq!(second.dirty_page_table().len(), 3);
}

#[test]
fn a_failed_database_gives_its_frames_back_and_the_others_go_on() {
    let frames = FramePool::new(8).unwrap();
    let sim = SimFs::new(3);
    let failing = attached(&frames, &create(&sim, &db_path(), 64), Arc::new(NoWal));
    for id in 1..=8 {
        put(&failing, id, 0, u64::from(id));
    }
    let fs = MemFs::new();
    let healthy = attached(&frames, &create(&fs, &db_path(), 1), Arc::new(NoWal));
    sim.fail_nth_write(1, FaultKind::Eio);
    // Every frame holds a dirty page of the failing database: the healthy one's fetch evicts
    // one, the write fails, and the healthy fetch goes on with the frames given back.
    for id in 1..=20 {
        put(&healthy, id, 5, u64::from(id));
    }
    assert!(failing.failure().unwrap().contains("write"));
    assert!(healthy.failure().is_none());
    assert!(matches!(failing.fetch(1), Err(BufferError::Failed(_))));
    for id in 1..=20 {
        assert_eq!(record(&healthy, id), payload(id, 5));
    }
    assert_eq!(failing.stats().cached, 0);
}

#[test]
fn descriptors_show_each_cached_page() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    for id in 1..=3 {
        put(&pool, id, 0, u64::from(id));
    }
    pool.flush_page(2).unwrap();
    let found = pool.descriptors();
    let ids: Vec<PageId> = found.iter().map(|d| d.page_id).collect();
    assert_eq!(ids, [1, 2, 3]);
    for d in &found {
        assert_eq!(d.page_type, Some(PageType::Heap));
        assert_eq!(d.row_count, 1);
        let record = payload(d.page_id, 0).len() + walden_storage::SLOT_SIZE;
        assert_eq!(d.free_space, PAGE_SIZE - walden_storage::HEADER_SIZE - record);
        assert_eq!(d.is_modified, d.page_id != 2, "{d:?}");
    }
}

/// A database attached to `frames` whose file records every page write against its log's
/// hardened LSN, with pages 1 to `pages` put dirty at rising LSNs.
fn filled(frames: &Arc<FramePool>, pages: u32) -> (Arc<BufferPool>, Arc<Mutex<WriteLog>>) {
    let wal = Arc::new(RecordingWal::default());
    let log = Arc::new(Mutex::new(WriteLog::default()));
    let fs = WalCheckFs { inner: MemFs::new(), wal: Arc::clone(&wal), log: Arc::clone(&log) };
    let pool = attached(frames, &create(&fs, &db_path(), 1), wal);
    for id in 1..=pages {
        put(&pool, id, 0, u64::from(id) * 10);
    }
    (pool, log)
}

#[test]
fn lending_to_query_memory_shrinks_the_pool_under_the_wal_rule_and_repaying_lets_it_grow() {
    // 2 MB of frames: a floor of 64 frames, 1.5 MB lendable.
    let frames = FramePool::new(256).unwrap();
    assert_eq!((frames.floor(), frames.lendable_bytes()), (64, 192 * PAGE_SIZE));
    let (pool, log) = filled(&frames, 256);
    let memory = frames.memory();
    assert_eq!((memory.allocated_frames, memory.dirty_frames), (256, 256));
    // 1 MB lent: before the loan is made the pool gives back 128 frames' memory, writing
    // their dirty pages out first.
    assert!(frames.lend(1 << 20, false));
    let memory = frames.memory();
    assert_eq!((memory.target_frames, memory.lent_bytes), (128, 1 << 20));
    assert!(memory.allocated_frames <= 128, "{memory:?}");
    assert_eq!(memory.allocated_frames + memory.released_frames, 256, "{memory:?}");
    assert!(log.lock().unwrap().page_writes >= 128);
    // Every page reads back, through no more frames than the pool may hold now.
    for id in 1..=256 {
        assert_eq!(record(&pool, id), payload(id, 0), "page {id}");
    }
    assert!(frames.memory().allocated_frames <= 128, "{:?}", frames.memory());
    // Past the lendable share a loan is refused, and changes nothing.
    assert!(!frames.lend(1 << 20, false));
    assert_eq!(frames.memory().lent_bytes, 1 << 20);
    // Repaid, the pool grows again as pages need frames, the released ones first.
    frames.repay(1 << 20);
    for id in 1..=256 {
        rewrite(&pool, id, 1, 10_000 + u64::from(id));
    }
    let memory = frames.memory();
    assert_eq!(
        (memory.target_frames, memory.allocated_frames, memory.released_frames),
        (256, 256, 0),
        "{memory:?}"
    );
    for id in 1..=256 {
        assert_eq!(record(&pool, id), payload(id, 1), "page {id}");
    }
    let log = log.lock().unwrap();
    assert!(log.violations.is_empty(), "written before their log: {:?}", log.violations);
}

#[test]
fn a_loan_the_pool_cannot_make_room_for_is_refused_at_once_and_a_forced_one_stands() {
    // 512 KB of frames: a floor of 16, 384 KB lendable.
    let frames = FramePool::new(64).unwrap();
    let (pool, log) = filled(&frames, 64);
    // 56 frames pinned (pages queries are using): the pool gives back the 8 others but cannot
    // reach the target, so the loan is refused without waiting, and nothing is lent.
    let pins: Vec<_> = (1..=56).map(|id| pool.fetch(id).unwrap()).collect();
    assert!(!frames.lend(256 << 10, false));
    let memory = frames.memory();
    assert_eq!((memory.lent_bytes, memory.allocated_frames), (0, 56), "{memory:?}");
    // A grant's minimum is forced: it stands though the pool could not shrink.
    assert!(frames.lend(256 << 10, true));
    let memory = frames.memory();
    assert_eq!((memory.lent_bytes, memory.target_frames), (256 << 10, 32), "{memory:?}");
    assert_eq!(memory.allocated_frames, 56, "{memory:?}");
    // A fetch that finds every frame pinned takes one past the target rather than wait or
    // fail: the pins hold what the pool would have given back.
    let started = Instant::now();
    assert_eq!(record(&pool, 60), payload(60, 0));
    assert!(started.elapsed() < Duration::from_secs(1), "it did not wait for a frame");
    assert_eq!(frames.memory().allocated_frames, 57);
    // Once the pins are gone the next loan finds the room, for itself and the forced one.
    drop(pins);
    assert!(frames.lend(64 << 10, false));
    let memory = frames.memory();
    assert_eq!((memory.lent_bytes, memory.target_frames), (320 << 10, 24), "{memory:?}");
    assert!(memory.allocated_frames <= 24, "{memory:?}");
    // Forced loans past the lendable share never take the pool below its floor.
    assert!(frames.lend(4 << 20, true));
    let memory = frames.memory();
    assert_eq!(memory.target_frames, 16, "{memory:?}");
    assert!(memory.allocated_frames <= 16, "{memory:?}");
    for id in 1..=64 {
        assert_eq!(record(&pool, id), payload(id, 0), "page {id}");
    }
    frames.repay((4 << 20) + (320 << 10));
    assert_eq!(frames.memory().target_frames, 64);
    assert!(log.lock().unwrap().violations.is_empty());
}

#[test]
fn loans_and_repayments_while_threads_change_pages_lose_nothing() {
    // 1 MB of frames, four threads each rewriting 60 pages of their own, and a lender taking
    // and giving back 256 KB at a time, as grants do.
    let frames = FramePool::new(128).unwrap();
    let (pool, log) = filled(&frames, 240);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let lender = {
        let (frames, stop) = (Arc::clone(&frames), Arc::clone(&stop));
        thread::spawn(move || {
            // The lendable share is 768 KB: three loans, then all of it back.
            let mut loans = 0;
            while !stop.load(Ordering::Relaxed) {
                if frames.lend(256 << 10, false) {
                    loans += 1;
                }
                if loans == 3 {
                    frames.repay(loans << 18);
                    loans = 0;
                }
            }
            frames.repay(loans << 18);
        })
    };
    let lsn = Arc::new(AtomicU64::new(1_000_000));
    let workers: Vec<_> = (0..4u32)
        .map(|t| {
            let (pool, lsn) = (Arc::clone(&pool), Arc::clone(&lsn));
            thread::spawn(move || {
                for round in 1..=20 {
                    for id in t * 60 + 1..=t * 60 + 60 {
                        rewrite(&pool, id, round, lsn.fetch_add(1, Ordering::Relaxed));
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    lender.join().unwrap();
    for id in 1..=240 {
        assert_eq!(record(&pool, id), payload(id, 20), "page {id}");
    }
    let memory = frames.memory();
    assert_eq!(memory.lent_bytes, 0);
    assert!(memory.allocated_frames <= 128, "{memory:?}");
    let log = log.lock().unwrap();
    assert!(log.violations.is_empty(), "written before their log: {:?}", log.violations);
}
