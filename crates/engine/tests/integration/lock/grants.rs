//! Granting and waiting: covered and converted requests, conversions waiting for other holders
//! and going ahead of new requests, FIFO order, timeouts (1222) and interrupts, each leaving
//! the queue clean.

use super::*;

#[test]
fn grants_covers_and_conversions_without_waiting() {
    let m = LockManager::new();
    let [mut o1, mut o2, mut o3, mut o4] = owners([1, 2, 3, 4]);
    let k = key(1);
    assert_eq!(m.lock(&mut o1, &k, S, None), Ok(true));
    assert_eq!(m.lock(&mut o1, &k, S, None), Ok(false), "already held");
    assert_eq!(m.lock(&mut o1, &k, IS, None), Ok(false), "S covers IS");
    assert_eq!(m.lock(&mut o2, &k, S, None), Ok(true), "S is compatible with S");
    assert_eq!(m.lock(&mut o3, &k, U, None), Ok(true), "U is compatible with S");
    assert_eq!(m.lock(&mut o4, &k, U, Some(Duration::ZERO)).map_err(|e| e.number()), Err(1222));
    assert_eq!(m.lock(&mut o3, &k, S, None), Ok(false), "U covers S");
    let t = Resource::Object { db: 5, object: 100 };
    assert_eq!(m.lock(&mut o1, &t, IX, None), Ok(true));
    assert_eq!(m.lock(&mut o1, &t, S, None), Ok(true), "conversion to SIX");
    assert_eq!(granted(&m, 1, &t), Some(SIX));
    m.release_all(&mut o1);
    m.release_all(&mut o2);
    m.release_all(&mut o3);
    assert!(m.snapshot().is_empty());
}

#[test]
fn conversion_s_to_x_waits_for_other_s_holders() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2] = owners([1, 2]);
        let k = key(1);
        m.lock(&mut o1, &k, S, None).unwrap();
        m.lock(&mut o2, &k, S, None).unwrap();
        let converter = spawn_lock(&m, o1, k.clone(), X);
        wait_until("owner 1 converts", || is_waiting(&m, 1));
        let rows = rows_of(&m, 1);
        assert!(rows.contains(&LockInfo {
            resource: k.clone(),
            mode: X,
            owner: 1,
            status: LockStatus::Converting,
            waited: Duration::ZERO,
        }));
        assert_eq!(granted(&m, 1, &k), Some(S), "still holds S while converting");
        thread::sleep(Duration::from_millis(30));
        assert!(!converter.is_finished());
        let waited = m.snapshot().iter().map(|r| r.waited).max().unwrap_or_default();
        assert!(waited >= Duration::from_millis(30), "the conversion has waited {waited:?}");
        m.release_all(&mut o2);
        let (mut o1, result) = converter.join().unwrap();
        assert_eq!(result, Ok(true));
        assert_eq!(granted(&m, 1, &k), Some(X));
        assert_eq!(m.snapshot().len(), 1);
        m.release_all(&mut o1);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn fifo_new_shared_waits_behind_waiting_exclusive() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, o2, mut o3] = owners([1, 2, 3]);
        let k = key(1);
        m.lock(&mut o1, &k, S, None).unwrap();
        let writer = spawn_lock(&m, o2, k.clone(), X);
        wait_until("the writer waits", || is_waiting(&m, 2));
        // Compatible with the granted S, but the X waits ahead of it.
        let err = m.lock(&mut o3, &k, S, Some(Duration::ZERO)).unwrap_err();
        assert_eq!(err.number(), 1222);
        let reader = spawn_lock(&m, o3, k.clone(), S);
        wait_until("the second reader waits", || is_waiting(&m, 3));
        let waiting: Vec<OwnerId> = m
            .snapshot()
            .into_iter()
            .filter(|r| r.status == LockStatus::Waiting)
            .map(|r| r.owner)
            .collect();
        assert_eq!(waiting, [2, 3], "queue order");
        m.release_all(&mut o1);
        let (mut o2, result) = writer.join().unwrap();
        assert_eq!(result, Ok(true));
        thread::sleep(Duration::from_millis(20));
        assert!(!reader.is_finished(), "S must wait for the X granted before it");
        m.release_all(&mut o2);
        let (mut o3, result) = reader.join().unwrap();
        assert_eq!(result, Ok(true));
        // Granted by another thread's release, yet listed in the owner: release_all finds it.
        m.release_all(&mut o3);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn conversions_go_ahead_of_waiting_requests() {
    with_watchdog(Duration::from_secs(10), || {
        let m = Arc::new(LockManager::new());
        let [mut o1, mut o2, o3] = owners([1, 2, 3]);
        let k = key(1);
        m.lock(&mut o1, &k, IS, None).unwrap();
        m.lock(&mut o2, &k, S, None).unwrap();
        let writer = spawn_lock(&m, o3, k.clone(), X);
        wait_until("the writer waits", || is_waiting(&m, 3));
        // A conversion compatible with the other holders is granted past the queue.
        assert_eq!(m.lock(&mut o1, &k, S, Some(Duration::ZERO)), Ok(true));
        // One that is not waits, but ahead of the new request queued before it.
        let converter = spawn_lock(&m, o1, k.clone(), X);
        wait_until("owner 1 converts", || is_waiting(&m, 1));
        let queue: Vec<(OwnerId, LockStatus)> = m
            .snapshot()
            .into_iter()
            .filter(|r| r.status != LockStatus::Granted)
            .map(|r| (r.owner, r.status))
            .collect();
        assert_eq!(queue, [(1, LockStatus::Converting), (3, LockStatus::Waiting)]);
        m.release_all(&mut o2);
        let (mut o1, result) = converter.join().unwrap();
        assert_eq!(result, Ok(true));
        assert!(is_waiting(&m, 3));
        m.release_all(&mut o1);
        let (mut o3, result) = writer.join().unwrap();
        assert_eq!(result, Ok(true));
        m.release_all(&mut o3);
        assert!(m.snapshot().is_empty());
    });
}

#[test]
fn timeout_zero_fails_at_once_with_1222() {
    let m = LockManager::new();
    let [mut o1, mut o2] = owners([1, 2]);
    let k = key(1);
    m.lock(&mut o1, &k, X, None).unwrap();
    let start = Instant::now();
    let err = m.lock(&mut o2, &k, S, Some(Duration::ZERO)).unwrap_err();
    assert!(start.elapsed() < Duration::from_millis(50));
    assert_eq!(err, LockError::Timeout { resource: k.clone(), mode: S });
    assert_eq!(err.number(), 1222);
    let stats = m.stats();
    assert_eq!((stats.requests, stats.waits, stats.timeouts), (2, 0, 1));
    assert!(!is_waiting(&m, 2), "a failed request leaves nothing queued");
}

#[test]
fn timeout_50ms_fails_with_1222_and_leaves_the_queue_clean() {
    with_watchdog(Duration::from_secs(10), || {
        let m = LockManager::new();
        let [mut o1, mut o2] = owners([1, 2]);
        let k = key(1);
        m.lock(&mut o1, &k, X, None).unwrap();
        let start = Instant::now();
        let err = m.lock(&mut o2, &k, U, Some(Duration::from_millis(50))).unwrap_err();
        let waited = start.elapsed();
        assert_eq!(err.number(), 1222);
        assert!(waited >= Duration::from_millis(50), "gave up early: {waited:?}");
        assert!(waited < Duration::from_secs(2), "gave up late: {waited:?}");
        let stats = m.stats();
        assert_eq!((stats.waits, stats.timeouts, stats.deadlocks), (1, 1, 0));
        assert!(stats.wait_time >= Duration::from_millis(50));
        assert_eq!(m.snapshot().len(), 1);
        m.release_all(&mut o1);
        assert!(m.snapshot().is_empty());
        assert_eq!(m.lock(&mut o2, &k, X, Some(Duration::ZERO)), Ok(true));
    });
}

/// An interrupt that says yes once its flag is set (a client's cancel).
#[derive(Debug, Default)]
struct Flag(std::sync::atomic::AtomicBool);

impl walden_engine::lock::Interrupt for Flag {
    fn interrupted(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[test]
fn an_interrupt_ends_an_endless_wait_and_leaves_the_queue_clean() {
    with_watchdog(Duration::from_secs(10), || {
        let m = LockManager::new();
        let [mut o1, mut o2] = owners([1, 2]);
        let k = key(1);
        m.lock(&mut o1, &k, X, None).unwrap();
        let flag = Arc::new(Flag::default());
        o2.set_interrupt(Some(flag.clone()));
        let setter = {
            let flag = Arc::clone(&flag);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                flag.0.store(true, std::sync::atomic::Ordering::Relaxed);
            })
        };
        let start = Instant::now();
        let err = m.lock(&mut o2, &k, S, None).unwrap_err();
        let waited = start.elapsed();
        setter.join().unwrap();
        assert_eq!(err, LockError::Cancelled { resource: k.clone(), mode: S });
        assert_eq!(err.number(), 3617);
        assert!(waited >= Duration::from_millis(100), "gave up early: {waited:?}");
        assert!(waited < Duration::from_secs(2), "gave up late: {waited:?}");
        let stats = m.stats();
        assert_eq!((stats.waits, stats.timeouts, stats.deadlocks), (1, 0, 0));
        assert!(!is_waiting(&m, 2), "a cancelled request leaves nothing queued");
        m.release_all(&mut o1);
        // Granted at once, the request never asks the interrupt.
        assert_eq!(m.lock(&mut o2, &k, X, None), Ok(true));
    });
}
