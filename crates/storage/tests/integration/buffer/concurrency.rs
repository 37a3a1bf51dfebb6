//! Concurrency: counters that add up, latch-coupled updates that evict without deadlock, and
//! concurrent fetches of one page reading it once.

use super::*;

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
