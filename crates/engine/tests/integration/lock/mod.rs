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

mod bookkeeping;
mod deadlock;
mod fast_path;
mod grants;
mod modes;
mod ranges;
mod stress;

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
