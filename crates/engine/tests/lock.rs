//! The lock manager: SQL Server's compatibility matrix, conversions, FIFO, timeouts, deadlock
//! detection and victims, key-lock bookkeeping for escalation, and randomized stress with and
//! without ordered acquisition. Every test that can block runs under a watchdog.
// Helpers outside `#[test]` functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use walden_engine::lock::LockMode::{
    RangeIN, RangeIS, RangeIU, RangeIX, RangeSS, RangeSU, RangeXS, RangeXU, RangeXX, IS, IX, S,
    SIX, U, X,
};
use walden_engine::lock::{
    LockError, LockInfo, LockManager, LockMode, LockOwner, LockStatus, OwnerId, Resource,
};

/// Runs `body` on its own thread and fails the test if it does not finish within `limit`,
/// so that a lost wake-up or an undetected deadlock fails instead of hanging the suite.
fn with_watchdog<T: Send + 'static>(
    limit: Duration,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(body());
    });
    match rx.recv_timeout(limit) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("watchdog: test still running after {limit:?}")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("test body panicked"),
    }
}

fn key(n: u64) -> Resource {
    Resource::Key { db: 5, object: 100, index: 1, hash: n }
}

/// Owners with ids `ids`, holding nothing.
fn owners<const N: usize>(ids: [OwnerId; N]) -> [LockOwner; N] {
    ids.map(LockOwner::new)
}

/// Locks `res` for `owner` on a thread of its own, which hands the owner back with the result.
fn spawn_lock(
    m: &Arc<LockManager>,
    mut owner: LockOwner,
    res: Resource,
    mode: LockMode,
) -> JoinHandle<(LockOwner, Result<bool, LockError>)> {
    let m = Arc::clone(m);
    thread::spawn(move || {
        let result = m.lock(&mut owner, &res, mode, None);
        (owner, result)
    })
}

/// Runs `body(t)` on `threads` threads of its own, t = 0..threads, and waits for them all.
fn on_threads(threads: u64, body: impl Fn(u64) + Send + Sync + 'static) {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let body = Arc::clone(&body);
            thread::spawn(move || body(t))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// Polls until `cond` holds (tests only: the manager itself never polls).
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(5), "timed out waiting until {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

fn rows_of(m: &LockManager, owner: OwnerId) -> Vec<LockInfo> {
    timeless(m.snapshot()).into_iter().filter(|r| r.owner == owner).collect()
}

/// The snapshot's rows with their wait times zeroed (so that rows compare), after checking
/// that only waiting and converting requests have one.
fn timeless(rows: Vec<LockInfo>) -> Vec<LockInfo> {
    rows.into_iter()
        .map(|mut r| {
            if r.status == LockStatus::Granted {
                assert_eq!(r.waited, Duration::ZERO, "{r:?}");
            }
            r.waited = Duration::ZERO;
            r
        })
        .collect()
}

fn is_waiting(m: &LockManager, owner: OwnerId) -> bool {
    rows_of(m, owner).iter().any(|r| r.status != LockStatus::Granted)
}

fn granted(m: &LockManager, owner: OwnerId, res: &Resource) -> Option<LockMode> {
    rows_of(m, owner)
        .into_iter()
        .find(|r| &r.resource == res && r.status == LockStatus::Granted)
        .map(|r| r.mode)
}

/// Thread `owner` of a deadlock test: lock `res`; on success release everything, on failure
/// check that the victim still holds `kept`, then release everything (the caller's rollback).
/// Hands the owner back with the result.
fn deadlock_party(
    m: &Arc<LockManager>,
    mut owner: LockOwner,
    res: Resource,
    kept: Resource,
) -> JoinHandle<(LockOwner, Result<bool, LockError>)> {
    let m = Arc::clone(m);
    thread::spawn(move || {
        let result = m.lock(&mut owner, &res, X, None);
        if result.is_err() {
            let id = owner.id();
            assert_eq!(granted(&m, id, &kept), Some(X), "a victim keeps its granted locks");
        }
        m.release_all(&mut owner);
        (owner, result)
    })
}

/// The end of a two-way deadlock whose owners have released everything: exactly one of the
/// two requests failed (the victim), and nothing is left locked.
fn assert_one_victim(
    m: &LockManager,
    first: &Result<bool, LockError>,
    second: &Result<bool, LockError>,
) {
    let victims = [first, second].iter().filter(|r| r.is_err()).count();
    assert_eq!(victims, 1, "one victim: {first:?} {second:?}");
    assert!(m.snapshot().is_empty());
}

#[test]
fn compatibility_matrix_matches_sql_server() {
    // SQL Server's documented matrix ("Lock compatibility"), requested mode by row, granted
    // mode by column in the documentation's order; docs/locking.md has the same table.
    let columns = [IS, S, U, IX, SIX, X];
    let rows = [
        (IS, "YYYYYN"),
        (S, "YYYNNN"),
        (U, "YYNNNN"),
        (IX, "YNNYNN"),
        (SIX, "YNNNNN"),
        (X, "NNNNNN"),
    ];
    let mut pairs = 0;
    for (requested, line) in rows {
        for (granted, cell) in columns.iter().zip(line.chars()) {
            assert_eq!(
                requested.compatible(*granted),
                cell == 'Y',
                "{requested} requested while {granted} is granted"
            );
            pairs += 1;
        }
    }
    assert_eq!(pairs, 36);
    let names: Vec<&str> = LockMode::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(
        names,
        [
            "IS", "IX", "S", "SIX", "U", "X", "RangeS-S", "RangeS-U", "RangeI-N", "RangeI-S",
            "RangeI-U", "RangeI-X", "RangeX-S", "RangeX-U", "RangeX-X"
        ]
    );
}

#[test]
fn key_range_matrix_matches_sql_server() {
    // SQL Server's documented matrix ("Key-Range Locking"): the requested mode by row, the
    // granted mode by column in the documentation's order; docs/locking.md has the same table.
    let columns = [S, U, X, RangeSS, RangeSU, RangeIN, RangeXX];
    let rows = [
        (S, "YYNYYYN"),
        (U, "YNNYNYN"),
        (X, "NNNNNYN"),
        (RangeSS, "YYNYYNN"),
        (RangeSU, "YNNYNNN"),
        (RangeIN, "YYYNNYN"),
        (RangeXX, "NNNNNNN"),
    ];
    let mut pairs = 0;
    for (requested, line) in rows {
        for (granted, cell) in columns.iter().zip(line.chars()) {
            assert_eq!(
                requested.compatible(*granted),
                cell == 'Y',
                "{requested} requested while {granted} is granted"
            );
            pairs += 1;
        }
    }
    assert_eq!(pairs, 49);
    // The conversion modes SQL Server makes of RangeI-N, and what they keep out.
    assert_eq!(RangeIN.join(S), RangeIS);
    assert_eq!(RangeIN.join(U), RangeIU);
    assert_eq!(RangeIN.join(X), RangeIX);
    assert_eq!(RangeIN.join(RangeSS), RangeXS);
    assert_eq!(RangeIN.join(RangeSU), RangeXU);
    assert_eq!(RangeSS.join(X), RangeXX, "no RangeS-X: the next mode up");
    assert_eq!(RangeSS.join(U), RangeSU);
    assert_eq!(S.join(RangeSS), RangeSS);
    assert_eq!(RangeXS.join(RangeIX), RangeXX);
    // RangeI-S: other inserts may go on (RangeI-N), readers of the key too, no range reader.
    assert!(RangeIS.compatible(RangeIN) && RangeIS.compatible(S) && !RangeIS.compatible(X));
    assert!(!RangeIS.compatible(RangeSS));
    // RangeX-S: no insert, no range reader; a plain reader of the key may share it.
    assert!(!RangeXS.compatible(RangeIN) && !RangeXS.compatible(RangeSS));
    assert!(RangeXS.compatible(S) && !RangeXU.compatible(U));
    for m in LockMode::ALL {
        assert_eq!(m.is_range(), m.name().starts_with("Range"), "{m}");
        assert!(RangeXX.covers(m), "RangeX-X is the strongest mode");
    }
}

#[test]
fn covers_and_join_form_the_lattice() {
    for a in LockMode::ALL {
        assert!(a.covers(a) && RangeXX.covers(a));
        if !a.is_range() {
            assert!(a.covers(IS) && X.covers(a));
        }
        for b in LockMode::ALL {
            let j = a.join(b);
            assert_eq!(j, b.join(a));
            assert!(j.covers(a) && j.covers(b), "{a} join {b} = {j}");
            for c in LockMode::ALL {
                if c.covers(a) && c.covers(b) {
                    assert!(c.covers(j), "{a} join {b} = {j} is not below {c}");
                }
                // A stronger mode is compatible with no more than a weaker one: what makes a
                // conversion safe to check owner by owner.
                if a.covers(b) && a.compatible(c) {
                    assert!(b.compatible(c));
                }
            }
        }
    }
    assert_eq!(S.join(IX), SIX);
    assert_eq!(U.join(IX), X);
    assert_eq!(U.join(SIX), X);
    assert_eq!(S.join(U), U);
    assert_eq!(IS.join(X), X);
    assert!(U.covers(S) && !S.covers(U) && !SIX.covers(U) && SIX.covers(IX));
}

#[test]
fn resources_and_errors() {
    // FNV-1a 64: stable, and the published test vector for "a".
    assert_eq!(
        Resource::key(1, 2, 1, b"a"),
        Resource::Key { db: 1, object: 2, index: 1, hash: 0xaf63_dc4c_8601_ec8c }
    );
    assert_ne!(Resource::key(1, 2, 1, b"ab"), Resource::key(1, 2, 1, b"ba"));
    assert_eq!(Resource::Database(1).type_name(), "DATABASE");
    assert_eq!(Resource::Object { db: 1, object: 2 }.type_name(), "OBJECT");
    assert_eq!(key(1).type_name(), "KEY");
    assert_eq!(Resource::Other { db: 1, name: 7 }.type_name(), "METADATA");
    assert_eq!(key(255).to_string(), "KEY: 5:100:1 (00000000000000ff)");

    let timeout = LockError::Timeout { resource: key(1), mode: S };
    let deadlock = LockError::Deadlock { resource: key(1), mode: X };
    assert_eq!(timeout.number(), 1222);
    assert_eq!(deadlock.number(), 1205);
    assert_eq!(timeout.sql_message(52), "Lock request time out period exceeded.");
    assert_eq!(
        deadlock.sql_message(52),
        "Transaction (Process ID 52) was deadlocked on lock resources with another process \
         and has been chosen as the deadlock victim. Rerun the transaction."
    );
    assert!(deadlock.to_string().contains("deadlock victim"));
    assert!(timeout.to_string().contains("KEY: 5:100:1"));
    let boxed: Box<dyn std::error::Error> = Box::new(timeout);
    assert!(boxed.to_string().starts_with("Lock request time out period exceeded."));
}

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

#[test]
fn misuse_never_panics() {
    let m = LockManager::new();
    let [mut o1, mut o2, mut o7, mut o42] = owners([1, 2, 7, 42]);
    let k = key(1);
    m.unlock(&mut o1, &k);
    m.release_all(&mut o42);
    m.release_keys(&mut o42, 1, 2);
    assert_eq!(o42.key_lock_count(1, 2), 0);
    m.lock(&mut o1, &k, X, None).unwrap();
    m.unlock(&mut o2, &k);
    assert_eq!(granted(&m, 1, &k), Some(X), "another owner's unlock releases nothing");
    m.unlock(&mut o1, &k);
    m.unlock(&mut o1, &k);
    m.release_all(&mut o1);
    m.release_all(&mut o1);
    o7.set_priority(3);
    m.release_all(&mut o7);
    assert!(m.snapshot().is_empty());
    // Two owners with one id are one owner to the lock table: the second is told the lock is
    // held, and only the one that took it releases it.
    let mut twin = LockOwner::new(1);
    m.lock(&mut o1, &k, X, None).unwrap();
    assert_eq!(m.lock(&mut twin, &k, S, None), Ok(false));
    m.release_all(&mut twin);
    assert_eq!(granted(&m, 1, &k), Some(X));
    m.release_all(&mut o1);
    // A timeout too long to represent is a wait without end, not an overflow.
    assert_eq!(m.lock(&mut o1, &k, X, Some(Duration::MAX)), Ok(true));
    m.release_all(&mut o1);
    assert!(m.snapshot().is_empty());
}

/// A tiny deterministic generator, so that a failing run can be repeated.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Granted modes per key as the stress threads see them: counted after a grant returns and
/// uncounted before the release, so what is counted is always really granted and any
/// incompatibility seen is a real one.
struct Held {
    counts: Vec<[AtomicU32; LockMode::ALL.len()]>,
}

impl Held {
    fn new(keys: usize) -> Held {
        Held { counts: (0..keys).map(|_| Default::default()).collect() }
    }

    fn slot(mode: LockMode) -> usize {
        mode.index()
    }

    fn acquire(&self, k: usize, old: Option<LockMode>, new: LockMode) {
        let counts = &self.counts[k];
        if let Some(old) = old {
            counts[Held::slot(old)].fetch_sub(1, Ordering::SeqCst);
        }
        counts[Held::slot(new)].fetch_add(1, Ordering::SeqCst);
        for other in LockMode::ALL {
            let mut n = counts[Held::slot(other)].load(Ordering::SeqCst);
            if other == new {
                n -= 1;
            }
            assert!(n == 0 || new.compatible(other), "key {k}: {new} granted beside {other}");
        }
    }

    fn release(&self, held: &HashMap<usize, LockMode>) {
        for (&k, &mode) in held {
            self.counts[k][Held::slot(mode)].fetch_sub(1, Ordering::SeqCst);
        }
    }
}

struct StressReport {
    transactions: u64,
    deadlocks: u64,
}

/// The key modes the stress tests ask for: the plain ones and SQL Server's key-range ones.
const KEY_MODES: [LockMode; 7] = [S, U, X, RangeSS, RangeSU, RangeIN, RangeXX];

/// `threads` threads run `transactions` each over `keys` keys of one table: IX or IS on the
/// table, then `per_txn` key locks in one of [`KEY_MODES`], in ascending key order (`ordered`, one lock
/// per key) or in any order with repeats (conversions). A deadlock victim releases everything
/// and goes on with its next transaction.
fn stress(
    ordered: bool,
    threads: u64,
    transactions: u64,
    keys: usize,
    per_txn: usize,
) -> StressReport {
    let m = Arc::new(LockManager::new());
    let held = Arc::new(Held::new(keys));
    let deadlocks = Arc::new(AtomicU64::new(0));
    let table = Resource::Object { db: 5, object: 100 };
    on_threads(threads, {
        let (m, held, deadlocks, table) =
            (Arc::clone(&m), Arc::clone(&held), Arc::clone(&deadlocks), table.clone());
        move |t| {
            let mut rng = Rng(t * 7919 + if ordered { 1 } else { 2 });
            for txn in 0..transactions {
                let mut owner = LockOwner::new(t * 1_000_000 + txn + 1);
                let mut plan: Vec<(usize, LockMode)> = (0..per_txn)
                    .map(|_| (rng.below(keys as u64) as usize, KEY_MODES[rng.below(7) as usize]))
                    .collect();
                if ordered {
                    plan.sort_by_key(|p| p.0);
                    plan.dedup_by_key(|p| p.0);
                }
                let reads = |m: LockMode| matches!(m, S | RangeSS);
                let intent = if plan.iter().all(|p| reads(p.1)) { IS } else { IX };
                assert_eq!(m.lock(&mut owner, &table, intent, None), Ok(true));
                let mut mine: HashMap<usize, LockMode> = HashMap::new();
                for (k, mode) in plan {
                    match m.lock(&mut owner, &key(k as u64), mode, None) {
                        Ok(_) => {
                            let old = mine.get(&k).copied();
                            let new = old.map_or(mode, |o| o.join(mode));
                            held.acquire(k, old, new);
                            mine.insert(k, new);
                            thread::yield_now();
                        }
                        Err(e) => {
                            assert!(!ordered, "ordered acquisition reported {e}");
                            assert_eq!(e.number(), 1205, "{e}");
                            deadlocks.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                    }
                }
                held.release(&mine);
                m.release_all(&mut owner);
            }
        }
    });
    assert!(m.snapshot().is_empty(), "everything released");
    let stats = m.stats();
    let reported = deadlocks.load(Ordering::SeqCst);
    assert_eq!(stats.deadlocks, reported, "every victim saw its 1205");
    assert_eq!(stats.timeouts, 0);
    StressReport { transactions: threads * transactions, deadlocks: reported }
}

#[test]
fn stress_ordered_acquisition_never_deadlocks() {
    let report = with_watchdog(Duration::from_secs(20), || stress(true, 8, 2000, 6, 4));
    println!("ordered: {} transactions, {} deadlocks", report.transactions, report.deadlocks);
    assert_eq!(report.deadlocks, 0);
    assert_eq!(report.transactions, 16_000);
}

#[test]
fn stress_unordered_acquisition_reports_deadlocks_and_finishes() {
    let report = with_watchdog(Duration::from_secs(20), || stress(false, 8, 2000, 4, 3));
    println!("unordered: {} transactions, {} deadlocks", report.transactions, report.deadlocks);
    assert!(report.deadlocks > 0, "random orders over four keys should deadlock");
    assert!(report.deadlocks < report.transactions);
}

/// The cost of an uncontended `lock(Key) + release_all`, and of a table IX plus a key X, on
/// one thread and on 1 to 8 threads with keys of their own, and of IX on one shared table plus
/// X on a key of their own on 1 to 4 threads. Reports, asserts nothing; run with
/// `cargo test --release -p walden-engine --test lock -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_uncontended_lock_and_release_all() {
    const N: u64 = 2_000_000;
    let m = LockManager::new();
    for round in 0..2 {
        let start = Instant::now();
        for i in 0..N {
            let mut owner = LockOwner::new(i);
            m.lock(&mut owner, &key(i), X, None).unwrap();
            m.release_all(&mut owner);
        }
        let key_only = start.elapsed().as_nanos() as f64 / N as f64;
        let table = Resource::Object { db: 5, object: 100 };
        let start = Instant::now();
        for i in 0..N {
            let mut owner = LockOwner::new(i);
            m.lock(&mut owner, &table, IX, None).unwrap();
            m.lock(&mut owner, &key(i), X, None).unwrap();
            m.release_all(&mut owner);
        }
        let with_table = start.elapsed().as_nanos() as f64 / N as f64;
        println!("round {round}: lock(Key)+release_all {key_only:.0} ns; lock(Object IX)+lock(Key X)+release_all {with_table:.0} ns");
    }
    let m = Arc::new(LockManager::new());
    for threads in [1u64, 2, 4, 8] {
        let start = Instant::now();
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let m = Arc::clone(&m);
                thread::spawn(move || {
                    for i in 0..N / 4 {
                        let mut owner = LockOwner::new(t << 40 | i);
                        let k = key(owner.id());
                        m.lock(&mut owner, &k, X, None).unwrap();
                        m.release_all(&mut owner);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let total = threads * (N / 4);
        let elapsed = start.elapsed();
        println!(
            "{threads} threads: {:.1} M lock+release_all/s ({:.0} ns per pair per thread)",
            total as f64 / elapsed.as_secs_f64() / 1e6,
            elapsed.as_nanos() as f64 / (N / 4) as f64
        );
    }
    // Sessions inserting into one table: IX on the same table, X on keys of their own.
    let table = Resource::Object { db: 5, object: 100 };
    for threads in [1u64, 2, 4] {
        let start = Instant::now();
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (m, table) = (Arc::clone(&m), table.clone());
                thread::spawn(move || {
                    for i in 0..N / 4 {
                        let mut owner = LockOwner::new(i << 16 | (t + 1));
                        m.lock(&mut owner, &table, IX, None).unwrap();
                        let k = key(owner.id());
                        m.lock(&mut owner, &k, X, None).unwrap();
                        m.release_all(&mut owner);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let elapsed = start.elapsed();
        println!(
            "{threads} sessions on one table: {:.1} M IX+X+release_all/s ({:.0} ns per \
             transaction per thread)",
            (threads * (N / 4)) as f64 / elapsed.as_secs_f64() / 1e6,
            elapsed.as_nanos() as f64 / (N / 4) as f64
        );
    }
}

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
