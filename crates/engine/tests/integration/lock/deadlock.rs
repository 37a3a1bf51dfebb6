//! Deadlock detection: two- and three-way cycles and conversion deadlocks have one victim
//! (1205) while the others proceed, and DEADLOCK_PRIORITY chooses it.

use super::*;

#[test]
fn two_way_deadlock_has_one_victim_and_the_other_proceeds() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2] = owners([1, 2]);
        let (k1, k2) = (key(1), key(2));
        m.lock(&mut o1, &k1, X, None).unwrap();
        m.lock(&mut o2, &k2, X, None).unwrap();
        let a = deadlock_party(&m, o1, k2.clone(), k1.clone());
        wait_until("A waits", || is_waiting(&m, 1));
        let b = deadlock_party(&m, o2, k1.clone(), k2.clone());
        let (ra, rb) = (a.join().unwrap().1, b.join().unwrap().1);
        // B's request closed the cycle, and priorities are equal: B is the victim.
        assert_eq!(ra, Ok(true));
        assert_eq!(rb, Err(LockError::Deadlock { resource: k1, mode: X }));
        assert_eq!(rb.unwrap_err().number(), 1205);
        assert_eq!(m.stats().deadlocks, 1);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn three_way_deadlock_has_one_victim() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let keys: Vec<Resource> = (1..=3).map(key).collect();
        let mut parties = Vec::new();
        for (i, mut owner) in owners([1, 2, 3]).into_iter().enumerate() {
            m.lock(&mut owner, &keys[i], X, None).unwrap();
            parties.push(owner);
        }
        let parties: Vec<_> = parties
            .into_iter()
            .enumerate()
            .map(|(i, owner)| {
                let id = owner.id();
                let party = deadlock_party(&m, owner, keys[(i + 1) % 3].clone(), keys[i].clone());
                if i < 2 {
                    wait_until("the cycle builds", || is_waiting(&m, id));
                }
                party
            })
            .collect();
        let results: Vec<_> = parties.into_iter().map(|p| p.join().unwrap().1).collect();
        let victims: Vec<usize> = (0..3).filter(|&i| results[i].is_err()).collect();
        assert_eq!(victims, [2], "{results:?}");
        assert_eq!(results[2].as_ref().unwrap_err().number(), 1205);
        assert_eq!(m.stats().deadlocks, 1);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn conversion_deadlock_between_two_shared_holders() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2] = owners([1, 2]);
        let k = key(1);
        m.lock(&mut o1, &k, S, None).unwrap();
        m.lock(&mut o2, &k, S, None).unwrap();
        let first = spawn_lock(&m, o1, k.clone(), X);
        wait_until("owner 1 converts", || is_waiting(&m, 1));
        let err = m.lock(&mut o2, &k, X, None).unwrap_err();
        assert_eq!(err, LockError::Deadlock { resource: k.clone(), mode: X });
        assert_eq!(granted(&m, 2, &k), Some(S), "the victim keeps its S");
        m.release_all(&mut o2);
        let (mut o1, result) = first.join().unwrap();
        assert_eq!(result, Ok(true));
        assert_eq!(granted(&m, 1, &k), Some(X));
        m.release_all(&mut o1);
        // With U instead of S the second reader waits on the first and no cycle forms.
        m.lock(&mut o1, &k, U, None).unwrap();
        assert_eq!(m.lock(&mut o2, &k, U, Some(Duration::ZERO)).map_err(|e| e.number()), Err(1222));
        m.release_all(&mut o1);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn deadlock_priority_chooses_the_victim() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2, mut o3] = owners([1, 2, 3]);
        let (k1, k2) = (key(1), key(2));
        o1.set_priority(-5);
        m.lock(&mut o1, &k1, X, None).unwrap();
        m.lock(&mut o2, &k2, X, None).unwrap();
        let a = deadlock_party(&m, o1, k2.clone(), k1.clone());
        wait_until("A waits", || is_waiting(&m, 1));
        // B closes the cycle, but A's priority is LOW: A is the victim.
        let b = deadlock_party(&m, o2, k1.clone(), k2.clone());
        let (mut o1, ra) = a.join().unwrap();
        assert_eq!(ra.map_err(|e| e.number()), Err(1205));
        assert_eq!(b.join().unwrap().1, Ok(true));
        assert!(m.snapshot().is_empty());
        // The priority went with release_all; with equal priorities the requester, whose
        // request closes the cycle, is the victim.
        assert_eq!(o1.priority(), 0);
        m.lock(&mut o1, &k1, X, None).unwrap();
        m.lock(&mut o3, &k2, X, None).unwrap();
        let c = deadlock_party(&m, o3, k1.clone(), k2.clone());
        wait_until("C waits", || is_waiting(&m, 3));
        let d = deadlock_party(&m, o1, k2.clone(), k1.clone());
        assert_eq!(c.join().unwrap().1, Ok(true), "the requester is chosen");
        assert_eq!(d.join().unwrap().1.map_err(|e| e.number()), Err(1205));
        // HIGH is not chosen, even when it closes the cycle.
        let [mut o4, mut o5] = owners([4, 5]);
        o5.set_priority(5);
        m.lock(&mut o4, &k1, X, None).unwrap();
        m.lock(&mut o5, &k2, X, None).unwrap();
        let e = deadlock_party(&m, o4, k2.clone(), k1.clone());
        wait_until("E waits", || is_waiting(&m, 4));
        let f = deadlock_party(&m, o5, k1.clone(), k2.clone());
        assert_eq!(e.join().unwrap().1.map_err(|e| e.number()), Err(1205));
        assert_eq!(f.join().unwrap().1, Ok(true), "HIGH is not chosen");
        assert!(m.snapshot().is_empty());
    });
}
