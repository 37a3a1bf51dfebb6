//! The pool's own lifecycle: eviction with a pool much smaller than the data, discarding dirty
//! pages, growing the file, the background writer, a prompt shutdown, configuration checks,
//! and handles used across threads.

use super::*;

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
fn dropping_clean_pages_keeps_dirty_and_pinned_ones_and_rereads_the_rest() {
    let fs = MemFs::new();
    let file = create(&fs, &db_path(), 1);
    let pool = pool(&file, Arc::new(NoWal), config(8));
    for id in 1..=4 {
        put(&pool, id, 0, u64::from(id));
    }
    pool.flush_all().unwrap();
    rewrite(&pool, 1, 1, 5);
    let held = pool.fetch(2).unwrap();
    let (reads, writes) = (pool.stats().reads, pool.stats().writes);
    // Pages 3 and 4: clean and unpinned. Page 1 is dirty, page 2 pinned.
    assert_eq!(pool.frame_pool().drop_clean_pages(), 2);
    assert_eq!(pool.stats().cached, 2);
    assert_eq!(pool.stats().writes, writes);
    assert_eq!(pool.dirty_page_table(), vec![(1, 5)]);
    assert_eq!(held.read().get(0).unwrap(), payload(2, 0));
    drop(held);
    assert_eq!(record(&pool, 1), payload(1, 1));
    assert_eq!(record(&pool, 3), payload(3, 0));
    assert_eq!(record(&pool, 4), payload(4, 0));
    assert_eq!(pool.stats().reads, reads + 2, "only the dropped pages are read again");
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
