//! Frames shared by several databases: eviction under each database's own WAL rule, frames
//! allocated as pages need them and given back, a failed database leaving the others going,
//! the descriptors view, and loans to query memory and their repayment.

use super::*;

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
