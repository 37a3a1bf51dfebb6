//! The socket calls `std` lacks: waiting, with a timeout, until a socket has input (or room
//! for output), without reading it and without changing the socket's blocking mode (which its
//! descriptor's other users share); and raising the process's open-files limit, which a
//! server with thousands of connections needs. The TDS server uses the first to notice a
//! client's attention while a request runs, and to wait on its non-blocking sockets; and
//! looking whether a client has closed its end, so that the views stop listing it at once.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// Waits up to `timeout` (zero: just looks) until `socket` has input to read, which includes
/// the end of the stream and a pending error: then a read would not block. Returns whether it
/// has; `Ok(false)` when the time ran out first. Interrupted waits are not retried: the caller
/// polls again at its next opportunity.
pub fn wait_readable(socket: &impl AsFd, timeout: Duration) -> io::Result<bool> {
    wait_for(socket, libc::POLLIN, timeout)
}

/// Waits up to `timeout` until `socket` can take output without blocking (or has an error,
/// which the write then reports). Returns whether it can; `Ok(false)` when the time ran out.
pub fn wait_writable(socket: &impl AsFd, timeout: Duration) -> io::Result<bool> {
    wait_for(socket, libc::POLLOUT, timeout)
}

/// Whether the peer has closed its end of `socket` (or the socket has failed), looking
/// without waiting and without reading: true even while input the peer sent before closing
/// (a TLS close_notify, say) is still unread, which a read-based check would take for life.
pub fn peer_has_closed(socket: &impl AsFd) -> io::Result<bool> {
    wait_for(socket, libc::POLLRDHUP, Duration::ZERO)
}

fn wait_for(socket: &impl AsFd, events: libc::c_short, timeout: Duration) -> io::Result<bool> {
    let mut pollfd = libc::pollfd { fd: socket.as_fd().as_raw_fd(), events, revents: 0 };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `pollfd` is a valid, initialized struct that lives across the call, and the
    // count says there is exactly one; poll writes only its `revents`. The descriptor is
    // borrowed from `socket`, which outlives the call.
    let n = unsafe { libc::poll(&mut pollfd, 1, millis) };
    match n {
        0 => Ok(false),
        n if n > 0 => Ok(pollfd.revents & (events | libc::POLLHUP | libc::POLLERR) != 0),
        _ => {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(error)
            }
        }
    }
}

/// Sets the length of `listener`'s queue of connections not yet accepted (Linux caps it at
/// `net.core.somaxconn`). `std` listens with 128, which a burst of connections overflows:
/// the kernel then drops their SYNs, and each waits a second for its retransmission.
pub fn set_listen_backlog(listener: &impl AsFd, backlog: i32) -> io::Result<()> {
    // SAFETY: listen only reads its arguments; the descriptor is borrowed from `listener`,
    // which outlives the call. Listening again on a listening socket changes its backlog.
    if unsafe { libc::listen(listener.as_fd().as_raw_fd(), backlog) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Raises the soft limit on open files (RLIMIT_NOFILE) to the hard limit, so that a process
/// holding a descriptor per connection is bounded by what the administrator allows rather
/// than by the shell's usual soft default of 1,024. Returns the soft limit now in force.
pub fn raise_open_files_limit() -> io::Result<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid, initialized struct that getrlimit fills in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
        // SAFETY: `raised` is a valid struct that setrlimit only reads.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            return Err(io::Error::last_os_error());
        }
        limit = raised;
    }
    Ok(limit.rlim_cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::time::Instant;

    #[test]
    fn readable_once_bytes_arrive_or_the_peer_goes_and_never_before() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();

        assert!(!wait_readable(&server, Duration::ZERO).unwrap());
        assert!(!peer_has_closed(&server).unwrap());
        let started = Instant::now();
        assert!(!wait_readable(&server, Duration::from_millis(30)).unwrap());
        assert!(started.elapsed() >= Duration::from_millis(25), "it waited the timeout");

        client.write_all(&[0x06]).unwrap();
        assert!(wait_readable(&server, Duration::from_secs(5)).unwrap());
        // Looking does not consume: the byte is still there.
        let mut byte = [0u8; 1];
        assert_eq!(server.peek(&mut byte).unwrap(), 1);
        // Input is not the end: the peer is there until it closes, and its close is seen
        // while its last bytes are still unread.
        assert!(!peer_has_closed(&server).unwrap());
        client.shutdown(std::net::Shutdown::Write).unwrap();
        let started = Instant::now();
        while !peer_has_closed(&server).unwrap() {
            assert!(started.elapsed() < Duration::from_secs(5), "the close is seen");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(server.peek(&mut byte).unwrap(), 1);

        let (mut second, _) = {
            let c = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let accepted = listener.accept().unwrap();
            drop(c);
            accepted
        };
        assert!(wait_readable(&second, Duration::from_secs(5)).unwrap(), "EOF is readable");
        assert!(peer_has_closed(&second).unwrap(), "the peer closed");
        assert_eq!(std::io::Read::read(&mut second, &mut byte).unwrap(), 0);
        // An idle socket has room for output at once.
        assert!(wait_writable(&server, Duration::from_secs(5)).unwrap());
    }

    #[test]
    fn a_listener_takes_a_longer_backlog() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        set_listen_backlog(&listener, 4096).unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert_eq!(accepted.peer_addr().unwrap(), client.local_addr().unwrap());
    }

    #[test]
    fn the_open_files_limit_is_raised_to_the_hard_limit() {
        let soft = raise_open_files_limit().unwrap();
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: as in `raise_open_files_limit`.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) }, 0);
        assert_eq!(soft, limit.rlim_cur);
        assert_eq!(limit.rlim_cur, limit.rlim_max);
    }
}
