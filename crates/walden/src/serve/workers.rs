//! The worker threads that run requests. A connection comes here with one complete message
//! (a login step or a request: a batch, an RPC, an attention, a bulk load, a transaction
//! manager request), runs it and whatever complete messages follow, then goes back to the
//! poller to wait. A thread is started when a message is waiting and none is idle, up to
//! `max_worker_threads` (SQL Server's setting of the same name, with its default); a thread
//! idle for [`IDLE_TIMEOUT`] ends, down to [`MIN_WORKERS`]. A request that waits (for a lock,
//! a `WAITFOR`, a client slow to read its results) holds its thread, so the bound is set far
//! above what the machine runs at once; past it, messages wait in the queue in arrival
//! order, as SQL Server's do for a worker.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use walden_tds::Message;

use super::conn::{Connection, Next};
use super::Shared;

/// How long a worker waits for a message before it ends (when more than [`MIN_WORKERS`]
/// are left).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Workers kept however idle the server is: a request after a quiet spell need not start a
/// thread.
pub const MIN_WORKERS: usize = 2;

/// The default `max_worker_threads`: SQL Server's for a 64-bit machine, 512 up to 4 CPUs,
/// 16 more per CPU beyond, 32 more per CPU beyond 4 past 64 CPUs.
pub fn default_max_workers() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let per_cpu = if cpus > 64 { 32 } else { 16 };
    512 + cpus.saturating_sub(4) * per_cpu
}

/// The pool: its queue and its threads.
#[derive(Debug)]
pub struct Pool {
    state: Mutex<State>,
    ready: Condvar,
    max: usize,
}

#[derive(Debug, Default)]
struct State {
    /// Connections with a message to run, oldest first.
    queue: VecDeque<(Box<Connection>, Message)>,
    /// Workers waiting for a message.
    idle: usize,
    /// Workers alive.
    threads: usize,
    /// The most workers alive at once so far.
    peak: usize,
    /// No more messages are taken: the server is shutting down.
    closed: bool,
    handles: Vec<JoinHandle<()>>,
}

impl Pool {
    pub fn new(max: usize) -> Pool {
        Pool { state: Mutex::default(), ready: Condvar::new(), max: max.max(1) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The most workers alive at once so far.
    pub fn peak(&self) -> usize {
        self.lock().peak
    }

    /// Messages waiting for a worker.
    pub fn queued(&self) -> usize {
        self.lock().queue.len()
    }

    /// Queues `message` of `connection` for a worker, starting one if none is idle and the
    /// bound allows.
    pub fn submit(&self, shared: &Arc<Shared>, connection: Box<Connection>, message: Message) {
        let mut state = self.lock();
        if state.closed {
            drop(state);
            // The connection closes.
            drop(connection);
            return;
        }
        state.queue.push_back((connection, message));
        if state.queue.len() > state.idle && state.threads < self.max {
            let worker_shared = Arc::clone(shared);
            let spawned = std::thread::Builder::new()
                .name("worker".into())
                .spawn(move || work(&worker_shared));
            match spawned {
                Ok(handle) => {
                    state.threads += 1;
                    state.peak = state.peak.max(state.threads);
                    state.handles.retain(|h| !h.is_finished());
                    state.handles.push(handle);
                }
                // The message waits for a worker that is already running.
                Err(e) => log_line!(error, "cannot start a worker thread: {e}"),
            }
        }
        drop(state);
        self.ready.notify_one();
    }

    /// Takes the next message; `None` when the worker should end.
    fn next(&self) -> Option<(Box<Connection>, Message)> {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.queue.pop_front() {
                return Some(job);
            }
            if state.closed {
                state.threads -= 1;
                return None;
            }
            state.idle += 1;
            let (guard, waited) = self
                .ready
                .wait_timeout(state, IDLE_TIMEOUT)
                .unwrap_or_else(PoisonError::into_inner);
            state = guard;
            state.idle -= 1;
            if waited.timed_out() && state.queue.is_empty() && state.threads > MIN_WORKERS {
                state.threads -= 1;
                return None;
            }
        }
    }

    /// Stops taking messages, drops those queued (closing their connections) and waits for
    /// the workers to finish what they run.
    pub fn close(&self) {
        let (queued, handles) = {
            let mut state = self.lock();
            state.closed = true;
            (std::mem::take(&mut state.queue), std::mem::take(&mut state.handles))
        };
        self.ready.notify_all();
        drop(queued);
        for handle in handles {
            let _ = handle.join();
        }
    }
}

/// A worker's life: run messages until the pool says to end.
fn work(shared: &Arc<Shared>) {
    while let Some((mut connection, message)) = shared.workers.next() {
        match connection.run(message) {
            Next::Park => shared.park(connection),
            Next::Close => drop(connection),
        }
    }
}
