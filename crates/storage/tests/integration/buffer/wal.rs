//! The WAL rule as the disk sees it, checkpoints that survive a reopen and a crash, the dirty
//! page table, and a change made during a write-out keeping its page dirty.

use super::*;

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
