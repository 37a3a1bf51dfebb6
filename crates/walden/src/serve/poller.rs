//! The readiness poller: one thread that accepts connections and watches every connection
//! that is waiting for its client (a new one before its PRELOGIN, one between login steps,
//! a logged-in one between requests) with epoll, through `mio`. When a waiting connection's
//! socket is readable it reads what has arrived without blocking; once a whole message is
//! in, the connection goes to a worker (`workers.rs`) with it. A worker gives the
//! connection back by parking it ([`Shared::park`]).
//!
//! Registration is edge-triggered and stays in place for the connection's life. While a
//! connection is on a worker the poller ignores its events (it is not parked, so there is
//! nothing to read into); parking re-arms the registration, which reports input that arrived
//! meanwhile, so none is lost.
//!
//! The poller also enforces the login limits: the pending cap (the oldest connection that
//! has not finished logging in is closed to make room), the pre-login timeout and the login
//! timeout. Closing is a `shutdown` of the socket: a parked connection then reads the end of
//! the stream and is dropped; one on a worker fails its read or write and ends there.

use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use super::conn::Connection;
use super::{PendingLogin, Shared};

/// The listener's token; connections use their id.
const LISTENER: Token = Token(usize::MAX);

/// How often the poller looks at the shutdown flag and the login timeouts.
const TICK: Duration = Duration::from_millis(50);

/// Readiness events taken per wait.
const EVENTS: usize = 1024;

/// Connections accepted before the poller reads the sockets again. In a flood the backlog
/// holds hundreds; accepting them all at once would let the pending cap close a real client
/// accepted among them before its PRELOGIN, sent at once, was even read.
const ACCEPT_BATCH: usize = 32;

/// What the poller counts for its log lines, which come one per 100 events so that a flood
/// does not flood the log.
#[derive(Debug, Default)]
struct Closed {
    evicted: u64,
    no_prelogin: u64,
    no_login: u64,
    /// Accepts that failed (out of descriptors, most likely).
    accept_failed: u64,
}

/// Accepts and watches connections until `stop` is set, then closes them all.
pub fn run(
    shared: &Arc<Shared>,
    mut poll: Poll,
    listener: TcpListener,
    stop: &AtomicBool,
) -> io::Result<()> {
    let listener_fd = listener.as_raw_fd();
    poll.registry().register(&mut SourceFd(&listener_fd), LISTENER, Interest::READABLE)?;
    let mut events = Events::with_capacity(EVENTS);
    let mut closed = Closed::default();
    let mut next_id = 0u64;
    let mut result = Ok(());
    let mut last_expiry = Instant::now();
    // The backlog is not known to be empty (an accept failed): the listener's edge-triggered
    // registration will not report it again, so accepting is retried every tick.
    let mut backlog = false;
    while !stop.load(Ordering::Relaxed) {
        // With connections still in the backlog, look at the sockets and come straight back.
        let wait = if backlog { Duration::ZERO } else { TICK };
        if let Err(e) = poll.poll(&mut events, Some(wait)) {
            if e.kind() != io::ErrorKind::Interrupted {
                result = Err(e);
                break;
            }
        }
        for event in &events {
            if event.token() == LISTENER {
                backlog = true;
                continue;
            }
            let id = event.token().0 as u64;
            let parked = shared.parked().remove(&id);
            if let Some(connection) = parked {
                readable(shared, connection);
            }
        }
        if backlog {
            backlog = !accept(shared, &listener, &mut next_id, &mut closed);
        }
        if last_expiry.elapsed() >= TICK {
            expire(shared, &mut closed);
            last_expiry = Instant::now();
        }
    }
    let _ = poll.registry().deregister(&mut SourceFd(&listener_fd));
    drop(listener);
    shut_down(shared);
    result
}

/// Reads what a parked connection's client sent; a whole message sends it to a worker.
fn readable(shared: &Arc<Shared>, mut connection: Box<Connection>) {
    match connection.fill() {
        Ok(Some(message)) => shared.workers.submit(shared, connection, message),
        // Edge-triggered: the socket was read dry, so its next input raises a new event.
        Ok(None) => {
            shared.parked().insert(connection.id(), connection);
        }
        Err(e) => connection.ended(&e),
    }
}

/// Accepts up to [`ACCEPT_BATCH`] connections waiting on the listener; whether the backlog
/// was emptied.
fn accept(
    shared: &Arc<Shared>,
    listener: &TcpListener,
    next_id: &mut u64,
    closed: &mut Closed,
) -> bool {
    for _ in 0..ACCEPT_BATCH {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // Out of descriptors, most likely: the waiting connections stay in the
                // backlog, and the next tick tries again.
                closed.accept_failed += 1;
                if closed.accept_failed % 100 == 1 {
                    log_line!(error, "accept: {e} ({} so far)", closed.accept_failed);
                }
                return false;
            }
        };
        if let Err(e) = stream.set_nonblocking(true).and_then(|()| stream.set_nodelay(true)) {
            log_line!(error, "{e}");
            continue;
        }
        *next_id += 1;
        admit(shared, Arc::new(stream), *next_id, closed);
    }
    false
}

/// Registers a new connection and parks it until its PRELOGIN arrives, making room under
/// the pending cap first.
fn admit(shared: &Arc<Shared>, tcp: Arc<TcpStream>, id: u64, closed: &mut Closed) {
    let accepted = Instant::now();
    let peer = tcp.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    shared.open().insert(id, Arc::clone(&tcp));
    // The pending cap: make room by closing the connection that has been logging in the
    // longest, preferring one whose PRELOGIN is not in (a real client sends it at once, a
    // silent or half-open socket never). Logged-in connections are never touched, and a real
    // client is only at risk if `max_pending_logins` newer connections send a whole PRELOGIN
    // during its few milliseconds of login.
    let mut evicted = Vec::new();
    {
        let mut pending = shared.pending();
        pending.insert(
            id,
            PendingLogin { tcp: Arc::clone(&tcp), peer, accepted, prelogin_received: false },
        );
        while pending.len() > shared.max_pending_logins {
            let victim = pending
                .iter()
                .find(|(_, p)| !p.prelogin_received)
                .or_else(|| pending.iter().next())
                .map(|(&id, _)| id);
            let Some((oldest, login)) = victim.and_then(|id| pending.remove_entry(&id)) else {
                break;
            };
            let _ = login.tcp.shutdown(Shutdown::Both);
            evicted.push(oldest);
            closed.evicted += 1;
            if closed.evicted % 100 == 1 {
                log_line!(
                    info,
                    "{} connections are logging in; closing the oldest ({} so far)",
                    shared.max_pending_logins,
                    closed.evicted
                );
            }
        }
    }
    close_parked(shared, &evicted);
    let connection = Box::new(Connection::new(Arc::clone(&tcp), Arc::clone(shared), id, accepted));
    // Registering reports input already there (a client sends its PRELOGIN at once).
    let token = Token(id as usize);
    if let Err(e) =
        shared.registry.register(&mut SourceFd(&tcp.as_raw_fd()), token, Interest::READABLE)
    {
        log_line!(error, "cannot watch connection {id}: {e}");
        return;
    }
    shared.parked().insert(id, connection);
}

/// Closes connections past the pre-login or the login timeout.
fn expire(shared: &Shared, closed: &mut Closed) {
    let now = Instant::now();
    let mut pending = shared.pending();
    let expired: Vec<u64> = pending
        .iter()
        .filter(|(_, p)| {
            let limit =
                if p.prelogin_received { shared.login_timeout } else { shared.prelogin_timeout };
            now.duration_since(p.accepted) >= limit
        })
        .map(|(&id, _)| id)
        .collect();
    for &id in &expired {
        let Some(p) = pending.remove(&id) else { continue };
        let _ = p.tcp.shutdown(Shutdown::Both);
        let (count, what, secs) = if p.prelogin_received {
            closed.no_login += 1;
            (closed.no_login, "login not completed", shared.login_timeout.as_secs())
        } else {
            closed.no_prelogin += 1;
            (closed.no_prelogin, "no PRELOGIN", shared.prelogin_timeout.as_secs())
        };
        if count % 100 == 1 {
            log_line!(
                info,
                "connection {}: {what} within {secs} s; closing ({count} so far)",
                p.peer
            );
        }
    }
    drop(pending);
    close_parked(shared, &expired);
}

/// Drops the connections of `ids` that are parked (their sockets are shut down already);
/// one on a worker ends there when its socket fails. Not called under the pending lock,
/// which dropping a connection takes.
fn close_parked(shared: &Shared, ids: &[u64]) {
    for id in ids {
        let gone = shared.parked().remove(id);
        drop(gone);
    }
}

/// Closes every connection: parked ones are dropped (their sessions roll back), running
/// ones end when their socket fails, and the workers are waited for.
fn shut_down(shared: &Arc<Shared>) {
    shared.closing.store(true, Ordering::SeqCst);
    let open: Vec<Arc<TcpStream>> = shared.open().values().cloned().collect();
    log_line!(info, "shutting down: closing {} connection(s)", open.len());
    for tcp in &open {
        let _ = tcp.shutdown(Shutdown::Both);
    }
    let parked: Vec<Box<Connection>> = shared.parked().drain().map(|(_, c)| c).collect();
    drop(parked);
    shared.workers.close();
    // Whatever a worker parked while the flag was being set.
    let parked: Vec<Box<Connection>> = shared.parked().drain().map(|(_, c)| c).collect();
    drop(parked);
}
