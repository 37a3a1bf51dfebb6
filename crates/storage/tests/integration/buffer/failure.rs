//! Fail-stop and bounded waiting: failed writes, syncs and log flushes stop the pool for good,
//! a fetch waits for a free frame only so long, and corruption on disk or in memory is caught
//! before it is used or written.

use super::*;

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
