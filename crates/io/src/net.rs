//! The one socket call `std` lacks: waiting, with a timeout, until a socket has input, without
//! reading it and without changing the socket's blocking mode (which its descriptor's other
//! users share). The TDS server uses it to notice a client's attention while a request runs.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// Waits up to `timeout` (zero: just looks) until `socket` has input to read, which includes
/// the end of the stream and a pending error: then a read would not block. Returns whether it
/// has; `Ok(false)` when the time ran out first. Interrupted waits are not retried: the caller
/// polls again at its next opportunity.
pub fn wait_readable(socket: &impl AsFd, timeout: Duration) -> io::Result<bool> {
    let mut pollfd =
        libc::pollfd { fd: socket.as_fd().as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `pollfd` is a valid, initialized struct that lives across the call, and the
    // count says there is exactly one; poll writes only its `revents`. The descriptor is
    // borrowed from `socket`, which outlives the call.
    let n = unsafe { libc::poll(&mut pollfd, 1, millis) };
    match n {
        0 => Ok(false),
        n if n > 0 => Ok(pollfd.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0),
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
        let started = Instant::now();
        assert!(!wait_readable(&server, Duration::from_millis(30)).unwrap());
        assert!(started.elapsed() >= Duration::from_millis(25), "it waited the timeout");

        client.write_all(&[0x06]).unwrap();
        assert!(wait_readable(&server, Duration::from_secs(5)).unwrap());
        // Looking does not consume: the byte is still there.
        let mut byte = [0u8; 1];
        assert_eq!(server.peek(&mut byte).unwrap(), 1);

        let (mut second, _) = {
            let c = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let accepted = listener.accept().unwrap();
            drop(c);
            accepted
        };
        assert!(wait_readable(&second, Duration::from_secs(5)).unwrap(), "EOF is readable");
        assert_eq!(std::io::Read::read(&mut second, &mut byte).unwrap(), 0);
    }
}
