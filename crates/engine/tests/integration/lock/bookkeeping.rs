//! What an owner's locks add up to: key lock counts for escalation and releases by table,
//! keys granted after a wait among them, and the snapshot of granted, waiting and converting
//! requests.

use super::*;

#[test]
fn release_keys_and_key_lock_count() {
    let m = LockManager::new();
    let [mut o1, mut o2] = owners([1, 2]);
    let t2 = Resource::Object { db: 5, object: 2 };
    m.lock(&mut o1, &t2, IX, None).unwrap();
    for n in 0..10 {
        m.lock(&mut o1, &Resource::key(5, 2, 1, &[n]), X, None).unwrap();
    }
    for n in 0..3 {
        m.lock(&mut o1, &Resource::key(5, 3, 1, &[n]), S, None).unwrap();
    }
    m.lock(&mut o1, &Resource::key(5, 2, 1, &[0]), S, None).unwrap();
    assert_eq!(o1.key_lock_count(5, 2), 10, "a covered request is not a new lock");
    assert_eq!(o1.key_lock_count(5, 3), 3);
    assert_eq!(o1.key_lock_count(6, 2), 0);
    assert_eq!(o2.key_lock_count(5, 2), 0);
    m.unlock(&mut o1, &Resource::key(5, 3, 1, &[0]));
    assert_eq!(o1.key_lock_count(5, 3), 2);

    // Escalation: the table lock first, then the keys go.
    m.lock(&mut o1, &t2, X, None).unwrap();
    m.release_keys(&mut o1, 5, 2);
    assert_eq!(o1.key_lock_count(5, 2), 0);
    assert_eq!(o1.key_lock_count(5, 3), 2);
    assert_eq!(rows_of(&m, 1).len(), 3, "the table lock and table 3's two keys");
    assert_eq!(m.lock(&mut o2, &Resource::key(5, 2, 1, &[4]), X, Some(Duration::ZERO)), Ok(true));
    assert!(m.lock(&mut o2, &t2, IX, Some(Duration::ZERO)).is_err(), "the table X stays");
    m.release_all(&mut o1);
    m.release_all(&mut o2);
    assert_eq!(o1.key_lock_count(5, 3), 0);
    assert!(m.snapshot().is_empty());
}

#[test]
fn a_key_lock_granted_after_a_wait_is_counted_and_released() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, o2] = owners([1, 2]);
        let k = Resource::key(5, 2, 1, b"row");
        m.lock(&mut o1, &k, X, None).unwrap();
        let waiter = spawn_lock(&m, o2, k.clone(), X);
        wait_until("owner 2 waits", || is_waiting(&m, 2));
        m.release_all(&mut o1);
        let (mut o2, result) = waiter.join().unwrap();
        assert_eq!(result, Ok(true));
        assert_eq!(o2.key_lock_count(5, 2), 1);
        m.release_keys(&mut o2, 5, 2);
        assert_eq!(o2.key_lock_count(5, 2), 0);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn snapshot_shows_granted_waiting_and_converting() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, o2, mut o3, mut o4] = owners([1, 2, 3, 4]);
        let (k1, k2) = (key(1), key(2));
        m.lock(&mut o1, &k1, X, None).unwrap();
        m.lock(&mut o3, &k2, S, None).unwrap();
        m.lock(&mut o4, &k2, S, None).unwrap();
        let waiter = spawn_lock(&m, o2, k1.clone(), S);
        let converter = spawn_lock(&m, o3, k2.clone(), X);
        wait_until("both wait", || is_waiting(&m, 2) && is_waiting(&m, 3));
        let mut rows = timeless(m.snapshot());
        rows.sort_by_key(|r| (r.owner, r.status.name()));
        let expect = |resource: &Resource, mode, owner, status| LockInfo {
            resource: resource.clone(),
            mode,
            owner,
            status,
            waited: Duration::ZERO,
        };
        assert_eq!(
            rows,
            [
                expect(&k1, X, 1, LockStatus::Granted),
                expect(&k1, S, 2, LockStatus::Waiting),
                expect(&k2, X, 3, LockStatus::Converting),
                expect(&k2, S, 3, LockStatus::Granted),
                expect(&k2, S, 4, LockStatus::Granted),
            ]
        );
        assert_eq!(
            [LockStatus::Granted, LockStatus::Waiting, LockStatus::Converting].map(|s| s.name()),
            ["GRANT", "WAIT", "CONVERT"]
        );
        assert_eq!(m.stats().waits, 2);
        m.release_all(&mut o1);
        m.release_all(&mut o4);
        assert_eq!(waiter.join().unwrap().1, Ok(true));
        assert_eq!(converter.join().unwrap().1, Ok(true));
        assert_eq!(granted(&m, 2, &k1), Some(S));
        assert_eq!(granted(&m, 3, &k2), Some(X));
    });
}
