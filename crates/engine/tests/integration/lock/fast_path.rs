//! The fast paths for intent locks on tables and for the first key locks: what they show in
//! the snapshot and stats, strong requests waiting for them, conversions, deadlocks through
//! them, and stress over shared buckets.

use super::*;

/// Intent locks on tables take the fast path (`fast.rs`); these check that it is invisible
/// to everything but the cost: the snapshot shows them, strong requests see them, and a lock
/// moved into the lock table by a strong request is released from there.
#[test]
fn intent_locks_on_the_fast_path_show_in_the_snapshot_and_stats() {
    let m = LockManager::new();
    let [mut o1, mut o2] = owners([1, 2]);
    let t = Resource::Object { db: 5, object: 100 };
    let before = m.stats().requests;
    assert_eq!(m.lock(&mut o1, &t, IS, None), Ok(true));
    assert_eq!(m.lock(&mut o1, &t, IS, None), Ok(false), "already held");
    assert_eq!(m.lock(&mut o1, &t, IX, None), Ok(true), "IS converts to IX in place");
    assert_eq!(m.lock(&mut o2, &t, IX, None), Ok(true));
    assert_eq!(m.stats().requests - before, 4);
    assert!(o1.holds(&t) && o2.holds(&t));
    assert_eq!(granted(&m, 1, &t), Some(IX));
    assert_eq!(granted(&m, 2, &t), Some(IX));
    m.unlock(&mut o2, &t);
    assert!(!o2.holds(&t));
    assert_eq!(granted(&m, 2, &t), None);
    m.release_all(&mut o1);
    assert!(!o1.holds(&t));
    assert!(m.snapshot().is_empty());
}

#[test]
fn a_strong_table_lock_waits_for_fast_path_intent_locks() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2, o3, mut o4] = owners([1, 2, 3, 4]);
        let t = Resource::Object { db: 5, object: 100 };
        m.lock(&mut o1, &t, IX, None).unwrap();
        m.lock(&mut o2, &t, IS, None).unwrap();
        let refused = m.lock(&mut o4, &t, S, Some(Duration::ZERO));
        assert_eq!(refused.map_err(|e| e.number()), Err(1222), "S against a fast IX");
        let waiter = spawn_lock(&m, o3, t.clone(), X);
        wait_until("owner 3 waits", || is_waiting(&m, 3));
        // The waiting X keeps new intent locks off the fast path: they queue behind it.
        let late = m.lock(&mut o4, &t, IS, Some(Duration::ZERO));
        assert_eq!(late.map_err(|e| e.number()), Err(1222), "FIFO behind the waiting X");
        assert_eq!(granted(&m, 1, &t), Some(IX), "moved to the lock table, still granted");
        m.release_all(&mut o1);
        thread::sleep(Duration::from_millis(20));
        assert!(is_waiting(&m, 3), "X still waits for the IS");
        m.unlock(&mut o2, &t);
        let (mut o3, result) = waiter.join().unwrap();
        assert_eq!(result, Ok(true));
        assert_eq!(granted(&m, 3, &t), Some(X));
        assert!(m.lock(&mut o4, &t, IX, Some(Duration::ZERO)).is_err(), "X is held");
        m.release_all(&mut o3);
        assert_eq!(m.lock(&mut o4, &t, IX, Some(Duration::ZERO)), Ok(true), "fast again");
        m.release_all(&mut o4);
        m.release_all(&mut o2);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn a_table_lock_is_given_back_only_in_the_mode_asked() {
    // What a READ COMMITTED statement gives back as it ends: its IS, wherever the lock is
    // (the fast path, moved into the lock table by a strong request, or taken there), and
    // nothing once the owner holds more on the table.
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2, o3] = owners([1, 2, 3]);
        let t = Resource::Object { db: 5, object: 100 };
        let u = Resource::Object { db: 5, object: 101 };
        // On the fast path.
        m.lock(&mut o1, &t, IS, None).unwrap();
        assert!(!m.unlock_table_in(&mut o1, &t, IX), "IS held, not IX");
        assert!(m.unlock_table_in(&mut o1, &t, IS));
        assert!(!o1.holds(&t));
        assert!(!m.unlock_table_in(&mut o1, &t, IS), "nothing left to give back");
        // Converted to IX in its slot: kept.
        m.lock(&mut o1, &t, IS, None).unwrap();
        m.lock(&mut o1, &t, IX, None).unwrap();
        assert!(!m.unlock_table_in(&mut o1, &t, IS));
        assert_eq!(granted(&m, 1, &t), Some(IX));
        m.release_all(&mut o1);
        // Moved into the lock table by a waiting X, which the release then lets in.
        m.lock(&mut o1, &t, IS, None).unwrap();
        let waiter = spawn_lock(&m, o3, t.clone(), X);
        wait_until("owner 3 waits", || is_waiting(&m, 3));
        assert!(m.unlock_table_in(&mut o1, &t, IS));
        let (mut o3, result) = waiter.join().unwrap();
        assert_eq!(result, Ok(true));
        assert!(!o1.holds(&t));
        m.release_all(&mut o3);
        // Taken in the lock table (S, as a TABLOCK read), and converted there.
        m.lock(&mut o2, &u, S, None).unwrap();
        assert!(m.unlock_table_in(&mut o2, &u, S));
        assert!(!o2.holds(&u));
        m.lock(&mut o2, &u, S, None).unwrap();
        m.lock(&mut o2, &u, IX, None).unwrap();
        assert!(!m.unlock_table_in(&mut o2, &u, S), "SIX now");
        assert_eq!(granted(&m, 2, &u), Some(SIX));
        m.release_all(&mut o2);
        assert!(m.snapshot().is_empty());
        assert_eq!(m.lock(&mut o1, &u, X, Some(Duration::ZERO)), Ok(true), "no strong count left");
        m.release_all(&mut o1);
        assert_eq!(m.lock(&mut o3, &u, IS, None), Ok(true));
        assert!(o3.holds(&u));
        m.release_all(&mut o3);
    });
}

#[test]
fn a_fast_intent_lock_converts_to_a_strong_mode() {
    let m = LockManager::new();
    let [mut o1, mut o2] = owners([1, 2]);
    let t = Resource::Object { db: 5, object: 100 };
    m.lock(&mut o1, &t, IX, None).unwrap();
    // What escalation does: X on the table at once, over the owner's own IX.
    assert_eq!(m.lock(&mut o1, &t, X, Some(Duration::ZERO)), Ok(true));
    assert_eq!(rows_of(&m, 1).len(), 1, "one lock, converted");
    assert_eq!(granted(&m, 1, &t), Some(X));
    assert_eq!(m.lock(&mut o1, &t, IX, None), Ok(false), "X covers IX");
    assert!(m.lock(&mut o2, &t, IS, Some(Duration::ZERO)).is_err());
    m.release_all(&mut o1);
    assert_eq!(m.lock(&mut o2, &t, IS, Some(Duration::ZERO)), Ok(true));
    // S over a fast IX joins to SIX, which a second S request then finds covering it.
    m.lock(&mut o1, &t, IX, None).unwrap();
    assert!(m.lock(&mut o1, &t, S, None).is_ok());
    assert_eq!(granted(&m, 1, &t), Some(SIX));
    assert_eq!(m.lock(&mut o1, &t, S, None), Ok(false));
    m.release_all(&mut o1);
    m.release_all(&mut o2);
    assert!(m.snapshot().is_empty());
    // Every strong count was given back: intent locks take the fast path again.
    let before = m.stats().requests;
    m.lock(&mut o1, &t, IX, None).unwrap();
    assert_eq!(m.stats().requests, before + 1);
    m.release_all(&mut o1);
}

#[test]
fn a_deadlock_through_a_fast_path_intent_lock_is_found() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2] = owners([1, 2]);
        let t = Resource::Object { db: 5, object: 100 };
        let k = key(7);
        m.lock(&mut o1, &t, IX, None).unwrap();
        m.lock(&mut o2, &k, X, None).unwrap();
        // Owner 1 waits for the key; owner 2 then wants the whole table, which waits for
        // owner 1's IX: a cycle only the lock table can show once the IX is moved there.
        let p1 = {
            let m = Arc::clone(&m);
            thread::spawn(move || {
                let result = m.lock(&mut o1, &k, X, None);
                m.release_all(&mut o1);
                result
            })
        };
        wait_until("owner 1 waits", || is_waiting(&m, 1));
        let second = m.lock(&mut o2, &t, X, None);
        m.release_all(&mut o2);
        let first = p1.join().unwrap();
        assert_one_victim(&m, &first, &second);
    });
}

/// Threads take intent locks on two tables (whose partitions may or may not be shared) while
/// others take S and X on them; no moment may see an X next to any other lock on its table,
/// or an S next to an IX. Exercises the fast path's race between an intent request and a
/// strong request's transfer.
/// Holders of each of `N` resources, by mode (each stress test has its three modes).
type Holders<const N: usize> = [[AtomicU32; 3]; N];

/// The skeleton of the stress tests of holders' compatibility: 6 threads each run `round`
/// 1,500 times, thread `t` with the random numbers of `seed(t)`, each round with a new owner
/// (of id `round << 16 | t + 1`) that `round` locks with, counting what it holds in the
/// holders it is given (and checking them against what else is held) and uncounting it again
/// before the owner releases everything. Fails if the rounds do not all end within 30 s or
/// leave anything locked; returns the manager.
fn stress_holders<const N: usize>(
    seed: fn(u64) -> u64,
    round: impl Fn(&LockManager, &Holders<N>, &mut Rng, &mut LockOwner, u64) + Send + Sync + 'static,
) -> Arc<LockManager> {
    with_watchdog(Duration::from_secs(30), move || {
        let m = Arc::new(LockManager::new());
        let counts: Arc<Holders<N>> = Arc::new(std::array::from_fn(|_| Default::default()));
        on_threads(6, {
            let (m, counts) = (Arc::clone(&m), Arc::clone(&counts));
            move |t| {
                let mut rng = Rng(seed(t));
                for n in 0..1500 {
                    let mut owner = LockOwner::new((n << 16) | (t + 1));
                    round(&m, &counts, &mut rng, &mut owner, t);
                    m.release_all(&mut owner);
                }
            }
        });
        assert!(m.snapshot().is_empty(), "everything released");
        m
    })
}

#[test]
fn stress_intent_and_strong_table_locks() {
    // Per table: intent-exclusive holders, shared holders, exclusive holders.
    let m = stress_holders(
        |t| t * 31 + 5,
        |m, counts: &Holders<2>, rng, owner, t| {
            let table = rng.below(2) as usize;
            let res = Resource::Object { db: 5, object: 100 + table as u32 };
            let strong = t < 2 && rng.below(4) == 0;
            let mode = if strong { [S, X][rng.below(2) as usize] } else { IX };
            m.lock(owner, &res, mode, None).unwrap();
            let c = &counts[table];
            let slot = match mode {
                IX => 0,
                S => 1,
                _ => 2,
            };
            c[slot].fetch_add(1, Ordering::SeqCst);
            let (ix, s, x) = (
                c[0].load(Ordering::SeqCst),
                c[1].load(Ordering::SeqCst),
                c[2].load(Ordering::SeqCst),
            );
            match mode {
                IX => assert!(s == 0 && x == 0, "IX with S {s} X {x}"),
                S => assert!(ix == 0 && x == 0, "S with IX {ix} X {x}"),
                _ => assert!(ix == 0 && s == 0 && x == 1, "X with {ix} {s} {x}"),
            }
            thread::yield_now();
            c[slot].fetch_sub(1, Ordering::SeqCst);
        },
    );
    // Once the stress is over, an uncontended request is still counted.
    let before = m.stats().requests;
    let mut owner = LockOwner::new(1);
    m.lock(&mut owner, &Resource::Object { db: 5, object: 100 }, IX, None).unwrap();
    assert_eq!(m.stats().requests, before + 1);
    m.release_all(&mut owner);
}

#[test]
fn key_locks_on_the_fast_path_show_in_the_snapshot_and_stats() {
    let m = LockManager::new();
    let [mut o1, mut o2] = owners([1, 2]);
    let before = m.stats().requests;
    assert_eq!(m.lock(&mut o1, &key(1), S, None), Ok(true));
    assert_eq!(m.lock(&mut o1, &key(1), S, None), Ok(false), "already held");
    assert_eq!(m.lock(&mut o1, &key(1), X, None), Ok(true), "S converts to X in place");
    assert_eq!(m.lock(&mut o1, &key(1), U, None), Ok(false), "X covers U");
    assert_eq!(m.lock(&mut o2, &key(2), X, None), Ok(true));
    assert_eq!(m.stats().requests - before, 5);
    assert!(o1.holds(&key(1)) && o2.holds(&key(2)) && !o1.holds(&key(2)));
    assert_eq!(granted(&m, 1, &key(1)), Some(X));
    assert_eq!(granted(&m, 2, &key(2)), Some(X));
    assert_eq!(o1.key_lock_count(5, 100), 1);
    m.unlock(&mut o2, &key(2));
    assert!(!o2.holds(&key(2)));
    assert_eq!(granted(&m, 2, &key(2)), None);
    assert_eq!(o2.key_lock_count(5, 100), 0);
    // Escalation gives back fast key locks with the others.
    for n in 10..20 {
        m.lock(&mut o1, &key(n), X, None).unwrap();
    }
    assert_eq!(o1.key_lock_count(5, 100), 11);
    m.release_keys(&mut o1, 5, 100);
    assert_eq!(o1.key_lock_count(5, 100), 0);
    assert!(m.snapshot().is_empty(), "{:?}", m.snapshot());
    assert_eq!(m.lock(&mut o2, &key(1), X, Some(Duration::ZERO)), Ok(true));
    m.release_all(&mut o1);
    m.release_all(&mut o2);
    assert!(m.snapshot().is_empty());
}

#[test]
fn a_key_request_waits_for_a_fast_key_lock() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2, o3] = owners([1, 2, 3]);
        let k = key(7);
        m.lock(&mut o1, &k, X, None).unwrap();
        let refused = m.lock(&mut o2, &k, S, Some(Duration::ZERO));
        assert_eq!(refused.map_err(|e| e.number()), Err(1222), "S against a fast X");
        assert!(!o2.holds(&k));
        let waiter = spawn_lock(&m, o3, k.clone(), X);
        wait_until("owner 3 waits", || is_waiting(&m, 3));
        assert_eq!(granted(&m, 1, &k), Some(X), "published, still granted");
        assert_eq!(m.lock(&mut o1, &k, X, None), Ok(false), "its owner still holds it");
        m.release_all(&mut o1);
        let (mut o3, result) = waiter.join().unwrap();
        assert_eq!(result, Ok(true));
        assert_eq!(granted(&m, 3, &k), Some(X));
        m.release_all(&mut o3);
        assert!(m.snapshot().is_empty());
        // The bucket is free again: another owner takes the key at once.
        assert_eq!(m.lock(&mut o2, &k, X, Some(Duration::ZERO)), Ok(true));
        m.release_all(&mut o2);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn a_fast_key_lock_converts_in_place_and_in_the_table() {
    let m = LockManager::new();
    let [mut o1, mut o2] = owners([1, 2]);
    let k = key(9);
    m.lock(&mut o1, &k, S, None).unwrap();
    // A second reader publishes the first one's S; both hold S in the lock table.
    assert_eq!(m.lock(&mut o2, &k, S, Some(Duration::ZERO)), Ok(true));
    assert_eq!(granted(&m, 1, &k), Some(S));
    assert_eq!(granted(&m, 2, &k), Some(S));
    let refused = m.lock(&mut o1, &k, X, Some(Duration::ZERO));
    assert_eq!(refused.map_err(|e| e.number()), Err(1222), "X waits for the other S");
    assert_eq!(granted(&m, 1, &k), Some(S), "the failed conversion keeps the S");
    m.unlock(&mut o2, &k);
    assert_eq!(m.lock(&mut o1, &k, X, Some(Duration::ZERO)), Ok(true), "converted in the table");
    assert_eq!(rows_of(&m, 1).len(), 1);
    assert_eq!(granted(&m, 1, &k), Some(X));
    m.unlock(&mut o1, &k);
    assert!(m.snapshot().is_empty());
    assert_eq!(o1.key_lock_count(5, 100), 0);
    // Table and key at once, as a first write takes them, and released together.
    let t = Resource::Object { db: 5, object: 100 };
    assert_eq!(m.lock_table_and_key(&mut o1, (5, 100), IX, &k, X, None), Ok((true, true)));
    assert_eq!(
        m.lock_table_and_key(&mut o2, (5, 100), IX, &k, X, Some(Duration::ZERO))
            .map_err(|e| e.number()),
        Err(1222)
    );
    assert_eq!(granted(&m, 2, &t), Some(IX), "the table lock stays, as two calls would leave it");
    assert_eq!(granted(&m, 1, &t), Some(IX));
    assert_eq!(granted(&m, 1, &k), Some(X));
    m.release_all(&mut o1);
    m.release_all(&mut o2);
    assert!(m.snapshot().is_empty());
}

#[test]
fn a_deadlock_through_fast_key_locks_is_found() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [o1, mut o2] = owners([1, 2]);
        let (k1, k2) = (key(1), key(2));
        let mut o1 = o1;
        m.lock(&mut o1, &k1, X, None).unwrap();
        m.lock(&mut o2, &k2, X, None).unwrap();
        let p1 = deadlock_party(&m, o1, k2.clone(), k1.clone());
        wait_until("owner 1 waits", || is_waiting(&m, 1));
        let second = m.lock(&mut o2, &k1, X, None);
        if second.is_err() {
            assert_eq!(granted(&m, 2, &k2), Some(X), "a victim keeps its granted locks");
        }
        m.release_all(&mut o2);
        let (_, first) = p1.join().unwrap();
        assert_one_victim(&m, &first, &second);
    });
}

/// Threads lock one to six of eight keys, in ascending order (so that nothing deadlocks), in
/// S, U or X: the first keys of each owner on the fast path when their bucket is free, the
/// rest, and every key another owner meets, in the lock table. No moment may see an X next to
/// any other lock on its key, or a U next to another U. Exercises the race between a fast key
/// request and a publication.
#[test]
fn stress_key_locks_on_shared_buckets() {
    // Per key: shared, update and exclusive holders.
    stress_holders(
        |t| t * 131 + 7,
        |m, counts: &Holders<8>, rng, owner, _| {
            let mut held = Vec::new();
            for k in 0..8u64 {
                if held.len() == 6 || rng.below(3) != 0 {
                    continue;
                }
                let mode = [S, U, X][rng.below(3) as usize];
                m.lock(owner, &key(k), mode, None).unwrap();
                let c = &counts[k as usize];
                let at = [S, U, X].iter().position(|&x| x == mode).unwrap();
                c[at].fetch_add(1, Ordering::SeqCst);
                let [s, u, x] = [0, 1, 2].map(|i| c[i].load(Ordering::SeqCst));
                match mode {
                    X => assert!(s == 0 && u == 0 && x == 1, "X with {s} {u} {x}"),
                    U => assert!(u == 1 && x == 0, "U with {s} {u} {x}"),
                    _ => assert!(x == 0, "S with {s} {u} {x}"),
                }
                held.push((k as usize, at));
            }
            thread::yield_now();
            for (k, at) in held {
                counts[k][at].fetch_sub(1, Ordering::SeqCst);
            }
        },
    );
}
