//! Key-range locks on inserts: an insert test waits for a range reader and leaves nothing
//! behind, keeps the join on a key its owner holds, and range-lock deadlocks are found.

use super::*;

#[test]
fn an_insert_test_waits_for_a_range_reader_and_leaves_nothing_behind() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut reader, mut other_reader, mut inserter] = owners([1, 2, 3]);
        let next = Resource::key(5, 2, 1, b"k25");
        let end = Resource::key_end(5, 2, 1);
        assert_eq!(end, Resource::Key { db: 5, object: 2, index: 1, hash: u64::MAX });
        assert_eq!(m.range_holders(), 0);
        m.lock(&mut reader, &next, RangeSS, None).unwrap();
        assert_eq!(m.range_holders(), 1, "a range reader is counted");
        // Range readers share; an insert into another range (the end of the index) goes on
        // and leaves nothing behind.
        assert_eq!(m.lock(&mut other_reader, &next, RangeSS, Some(Duration::ZERO)), Ok(true));
        assert_eq!(m.range_holders(), 2);
        assert_eq!(m.lock_fresh(&mut inserter, &end, RangeIN, None), Ok(true));
        m.unlock(&mut inserter, &end);
        assert!(rows_of(&m, 3).is_empty());
        // An insert into the readers' range waits for both, shown as a RangeI-N WAIT.
        let waiter = {
            let m = Arc::clone(&m);
            let next = next.clone();
            thread::spawn(move || {
                let fresh = m.lock_fresh(&mut inserter, &next, RangeIN, None);
                (inserter, fresh)
            })
        };
        wait_until("the insert waits", || is_waiting(&m, 3));
        let waiting: Vec<LockInfo> = rows_of(&m, 3);
        assert_eq!(waiting.len(), 1);
        assert_eq!((waiting[0].mode, waiting[0].status), (RangeIN, LockStatus::Waiting));
        assert_eq!(granted(&m, 1, &next), Some(RangeSS));
        m.release_all(&mut reader);
        assert!(is_waiting(&m, 3), "the other reader's range still holds it");
        m.release_all(&mut other_reader);
        assert_eq!(m.range_holders(), 0, "release_all uncounts the readers");
        let (mut inserter, fresh) = waiter.join().unwrap();
        assert_eq!(fresh, Ok(true));
        m.unlock(&mut inserter, &next);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn an_insert_test_on_a_key_the_owner_holds_keeps_the_join() {
    let m = LockManager::new();
    let [mut o1, mut o2] = owners([1, 2]);
    let k = Resource::key(5, 2, 1, b"mine");
    // Its own inserted row: RangeI-N converts X to RangeI-X, kept (nothing fresh to give back).
    m.lock(&mut o1, &k, X, None).unwrap();
    assert_eq!(m.lock_fresh(&mut o1, &k, RangeIN, None), Ok(false));
    assert_eq!(granted(&m, 1, &k), Some(RangeIX));
    // Its own range: RangeS-S converts to RangeX-S, which keeps other inserts out.
    let r = Resource::key(5, 2, 1, b"range");
    m.lock(&mut o1, &r, RangeSS, None).unwrap();
    assert_eq!(m.lock_fresh(&mut o1, &r, RangeIN, None), Ok(false));
    assert_eq!(granted(&m, 1, &r), Some(RangeXS));
    assert!(m.lock(&mut o2, &r, RangeIN, Some(Duration::ZERO)).is_err());
    assert_eq!(m.lock(&mut o2, &r, S, Some(Duration::ZERO)), Ok(true), "S shares RangeX-S");
    m.release_all(&mut o1);
    m.release_all(&mut o2);
    assert!(m.snapshot().is_empty());
}

#[test]
fn a_deadlock_between_range_locks_is_found() {
    with_watchdog(Duration::from_secs(10), || {
        // Two SERIALIZABLE readers of two ranges, each inserting into the other's.
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2] = owners([1, 2]);
        let (k1, k2) = (Resource::key(5, 2, 1, b"k1"), Resource::key(5, 2, 1, b"k2"));
        m.lock(&mut o1, &k1, RangeSS, None).unwrap();
        m.lock(&mut o2, &k2, RangeSS, None).unwrap();
        let first = {
            let m = Arc::clone(&m);
            let k2 = k2.clone();
            thread::spawn(move || {
                let result = m.lock_fresh(&mut o1, &k2, RangeIN, None);
                m.release_all(&mut o1);
                result
            })
        };
        wait_until("owner 1 waits", || is_waiting(&m, 1));
        let second = m.lock_fresh(&mut o2, &k1, RangeIN, None);
        m.release_all(&mut o2);
        let first = first.join().unwrap();
        assert_one_victim(&m, &first, &second);
        let err = if let Err(e) = &second { e.clone() } else { first.clone().unwrap_err() };
        assert_eq!(err.number(), 1205);
        assert_eq!(m.stats().deadlocks, 1);
    });
}
