//! A connection's transport: plain TCP, or TLS negotiated in PRELOGIN as [MS-TDS] 7.x does
//! it; and the probe that notices a client's attention while a request runs.
//!
//! # TLS inside TDS
//!
//! After the PRELOGIN exchange agrees on encryption, the TLS handshake runs with every TLS
//! record wrapped in TDS packets of type PRELOGIN (0x12), in both directions. Once the
//! handshake is over the wrapping stops: TLS records go straight on the TCP stream and carry
//! ordinary TDS packets. With ENCRYPT_OFF ("login only") the client encrypts just its LOGIN7
//! message and both sides then go back to plain TCP ([`SharedTransport::downgrade`]).
//!
//! The version is TLS 1.2, as SQL Server's for TDS 7.x: TLS 1.3 comes with TDS 8.0's strict
//! encryption, and drivers do not all wrap a TLS 1.3 handshake the same way (mssql-jdbc sends
//! its TLS 1.3 Finished unwrapped, for one), so offering it would break them.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use walden_sql::exec::CancelSignal;
use walden_tds::packet::{PacketHeader, HEADER_LEN};
use walden_tds::{PacketStatus, PacketType, PacketWriter};

/// The names the `--tls self-signed` certificate is valid for.
const SELF_SIGNED_NAMES: [&str; 2] = ["localhost", "127.0.0.1"];

/// The server's TLS setup: its rustls configuration and its certificate's fingerprint.
#[derive(Debug, Clone)]
pub struct TlsSetup {
    pub config: Arc<ServerConfig>,
    /// The SHA-256 fingerprint of the certificate, as `AB:CD:...`.
    pub fingerprint: String,
}

impl TlsSetup {
    /// A certificate for localhost and 127.0.0.1, generated now; only its fingerprint
    /// identifies it, so clients must trust it explicitly (or not verify it).
    pub fn self_signed() -> Result<TlsSetup, String> {
        let names: Vec<String> = SELF_SIGNED_NAMES.iter().map(|n| n.to_string()).collect();
        let generated = rcgen::generate_simple_self_signed(names)
            .map_err(|e| format!("cannot generate a certificate: {e}"))?;
        let key = PrivatePkcs8KeyDer::from(generated.key_pair.serialize_der());
        TlsSetup::new(vec![generated.cert.der().clone()], PrivateKeyDer::Pkcs8(key))
    }

    /// The certificate chain in `cert` and the private key in `key`, both PEM files.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<TlsSetup, String> {
        let certs = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("cannot read the certificate {}: {e}", cert.display()))?;
        if certs.is_empty() {
            return Err(format!("{}: no certificate in the file", cert.display()));
        }
        let key = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| format!("cannot read the private key {}: {e}", key.display()))?;
        TlsSetup::new(certs, key)
    }

    fn new(
        certs: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    ) -> Result<Self, String> {
        let leaf = certs.first().ok_or("TLS: no certificate")?;
        let fingerprint = fingerprint(leaf);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS12])
            .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
            .map_err(|e| format!("TLS: {e}"))?;
        Ok(TlsSetup { config: Arc::new(config), fingerprint })
    }
}

/// A certificate's SHA-256 fingerprint, as the hex pairs browsers and `openssl x509
/// -fingerprint -sha256` show.
fn fingerprint(cert: &CertificateDer<'_>) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, cert.as_ref());
    let hex: Vec<String> = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
    hex.join(":")
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}"))
}

/// A connection's socket, which is always non-blocking, so that the poller can read whatever
/// has arrived without waiting. On a worker the connection reads and writes as if it were
/// blocking: in waiting mode a read or write that would block waits for the socket (up to
/// the deadline, if any) and tries again.
#[derive(Debug)]
pub struct Socket {
    /// Shared with the attention probe and the server's bookkeeping: one descriptor per
    /// connection, which is also the one registered with the poller.
    tcp: Arc<TcpStream>,
    /// Wait when the socket is not ready, instead of failing with `WouldBlock`.
    waiting: bool,
    /// When waiting gives up with `TimedOut` (during the login, the login's deadline).
    deadline: Option<Instant>,
}

/// How long one wait lasts when there is no deadline; it is simply repeated.
const UNBOUNDED_WAIT: Duration = Duration::from_secs(3600);

impl Socket {
    fn new(tcp: Arc<TcpStream>) -> Socket {
        Socket { tcp, waiting: true, deadline: None }
    }

    /// Waits until `ready` says the socket is ready, or the deadline passes.
    fn wait(&self, ready: impl Fn(&TcpStream, Duration) -> io::Result<bool>) -> io::Result<()> {
        loop {
            let timeout = match self.deadline {
                Some(deadline) => deadline.saturating_duration_since(Instant::now()),
                None => UNBOUNDED_WAIT,
            };
            if self.deadline.is_some() && timeout.is_zero() {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "the login took too long"));
            }
            if ready(&self.tcp, timeout)? {
                return Ok(());
            }
        }
    }
}

fn would_block(result: &io::Result<usize>) -> bool {
    matches!(result, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let result = (&*self.tcp).read(buf);
            if !(self.waiting && would_block(&result)) {
                return result;
            }
            self.wait(walden_io::net::wait_readable)?;
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            let result = (&*self.tcp).write(buf);
            if !(self.waiting && would_block(&result)) {
                return result;
            }
            self.wait(walden_io::net::wait_writable)?;
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        (&*self.tcp).flush()
    }
}

/// The byte stream under the TDS packets.
#[derive(Debug)]
pub enum Transport {
    Plain(Socket),
    Tls(Box<StreamOwned<ServerConnection, Socket>>),
}

impl Transport {
    fn socket(&self) -> &Socket {
        match self {
            Transport::Plain(socket) => socket,
            Transport::Tls(tls) => tls.get_ref(),
        }
    }

    fn socket_mut(&mut self) -> &mut Socket {
        match self {
            Transport::Plain(socket) => socket,
            Transport::Tls(tls) => tls.get_mut(),
        }
    }

    /// Whether input has been received and decrypted but not read yet.
    fn has_buffered_input(&mut self) -> bool {
        match self {
            Transport::Plain(_) => false,
            Transport::Tls(tls) => tls
                .conn
                .process_new_packets()
                .is_ok_and(|state| state.plaintext_bytes_to_read() > 0),
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.read(buf),
            Transport::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.write(buf),
            Transport::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(socket) => socket.flush(),
            Transport::Tls(tls) => tls.flush(),
        }
    }
}

/// The connection's handle on its transport. The request loop reads through it and each
/// response's packet sink writes through a clone of it, while the request runs with `&mut`
/// access to the rest of the connection. The connection moves between the poller and the
/// workers, so the handle is `Send`; only one thread uses it at a time, so the lock is never
/// contended (a lock lasts one read or write call).
#[derive(Debug, Clone)]
pub struct SharedTransport(Arc<Mutex<Transport>>);

impl SharedTransport {
    /// `tcp` must be non-blocking.
    pub fn new(tcp: Arc<TcpStream>) -> SharedTransport {
        SharedTransport(Arc::new(Mutex::new(Transport::Plain(Socket::new(tcp)))))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Transport> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The TCP socket under the transport.
    pub fn tcp(&self) -> Arc<TcpStream> {
        Arc::clone(&self.lock().socket().tcp)
    }

    /// Whether input already sits decrypted in the transport, where a peek at the socket
    /// does not see it.
    pub fn has_buffered_input(&self) -> bool {
        self.lock().has_buffered_input()
    }

    /// Reads and writes wait for the socket until `deadline` (`None`: for ever) from now on.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        self.lock().socket_mut().deadline = deadline;
    }

    /// Reads what has arrived (decrypted, with TLS) without waiting: `WouldBlock` when
    /// nothing has. The poller's read.
    pub fn read_now(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut transport = self.lock();
        transport.socket_mut().waiting = false;
        let result = transport.read(buf);
        transport.socket_mut().waiting = true;
        result
    }

    /// Runs the server side of the TLS handshake, its records wrapped in PRELOGIN packets;
    /// everything after it goes through TLS. The caller has read everything the client sent
    /// so far (its PRELOGIN), so the socket holds nothing but the handshake. It waits for the
    /// client up to the socket's deadline.
    pub fn start_tls(&self, config: Arc<ServerConfig>) -> io::Result<()> {
        let deadline = self.lock().socket().deadline;
        let mut socket = Socket { deadline, ..Socket::new(self.tcp()) };
        let mut conn = ServerConnection::new(config).map_err(tls_error)?;
        while conn.is_handshaking() {
            if conn.wants_write() {
                send_wrapped(&mut conn, &mut socket)?;
                continue;
            }
            let mut record: &[u8] = &read_prelogin_packet(&mut socket)?;
            while !record.is_empty() {
                conn.read_tls(&mut record)?;
                if let Err(e) = conn.process_new_packets() {
                    // The alert that says why goes to the client, still wrapped.
                    let _ = send_wrapped(&mut conn, &mut socket);
                    return Err(tls_error(e));
                }
            }
        }
        // The server's last flight (its ChangeCipherSpec and Finished) is still wrapped: the
        // client is handshaking until it has read it.
        if conn.wants_write() {
            send_wrapped(&mut conn, &mut socket)?;
        }
        *self.lock() = Transport::Tls(Box::new(StreamOwned::new(conn, socket)));
        Ok(())
    }

    /// Leaves TLS for plain TCP (after a login-only encrypted LOGIN7). No close_notify is
    /// sent: the client drops its TLS layer the same way.
    pub fn downgrade(&self) -> io::Result<()> {
        let deadline = self.lock().socket().deadline;
        let socket = Socket { deadline, ..Socket::new(self.tcp()) };
        *self.lock() = Transport::Plain(socket);
        Ok(())
    }
}

impl Read for SharedTransport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.lock().read(buf)
    }
}

impl Write for SharedTransport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.lock().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.lock().flush()
    }
}

/// Sends what the TLS layer has to say as one PRELOGIN message.
fn send_wrapped(conn: &mut ServerConnection, tcp: &mut Socket) -> io::Result<()> {
    let mut records = Vec::new();
    while conn.wants_write() {
        conn.write_tls(&mut records)?;
    }
    let mut out = Vec::with_capacity(records.len() + 2 * HEADER_LEN);
    PacketWriter::default().write_message(
        PacketType::PreLogin,
        PacketStatus::EOM,
        &records,
        &mut out,
    );
    tcp.write_all(&out)
}

/// The payload of the next packet during the handshake: exactly one packet is read, so that
/// nothing the client sends after its last handshake packet (raw TLS) is consumed here.
fn read_prelogin_packet(tcp: &mut Socket) -> io::Result<Vec<u8>> {
    let mut header = [0u8; HEADER_LEN];
    tcp.read_exact(&mut header)?;
    let header = PacketHeader::decode(&header)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    if header.ty != PacketType::PreLogin {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("expected a PRELOGIN packet carrying the TLS handshake, got {:?}", header.ty),
        ));
    }
    let mut payload = vec![0u8; usize::from(header.length) - HEADER_LEN];
    tcp.read_exact(&mut payload)?;
    Ok(payload)
}

/// How long a request runs before the probe first looks at the socket, and how often it
/// looks again: a batch of short statements makes no extra system call, and a cancel takes
/// effect within this much of the next cancellation point.
const PROBE_INTERVAL: Duration = Duration::from_millis(10);

/// Notices a client's attention while a request runs. Without MARS the only thing a client
/// may send while a request runs is an attention (with TLS, its encrypted records), so input
/// arriving then means cancel; the connection reads the attention itself once the request has
/// stopped (as its next message), and acknowledges it. A client that disconnects cancels too: nobody is
/// left to read the results.
///
/// The batch asks at its cancellation points ([`CancelSignal`]); the probe answers from its
/// flag, and once the request has run for [`PROBE_INTERVAL`], at most that often, by looking
/// at the socket without reading it. No thread watches the socket, so a request costs no
/// extra wake-up (a watcher thread cost two per request: a tenth of the server's CPU under
/// seed 001's load).
#[derive(Debug)]
pub struct AttentionProbe {
    /// The connection's socket, only looked at.
    tcp: Arc<TcpStream>,
    /// The running request is cancelled. Set by this probe, cleared when a request begins.
    cancelled: AtomicBool,
    /// A request is running; between requests, input is the client's next request.
    running: AtomicBool,
    /// When the probe may next look at the socket, in microseconds since `epoch`.
    next_look: AtomicU64,
    epoch: Instant,
}

impl AttentionProbe {
    pub fn new(transport: &SharedTransport) -> AttentionProbe {
        AttentionProbe {
            tcp: transport.tcp(),
            cancelled: AtomicBool::new(false),
            running: AtomicBool::new(false),
            next_look: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    fn now_micros(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// The socket is not looked at again for [`PROBE_INTERVAL`].
    fn put_off_next_look(&self) {
        let interval = PROBE_INTERVAL.as_micros() as u64;
        self.next_look.store(self.now_micros().saturating_add(interval), Ordering::Relaxed);
    }

    /// A request starts (its message has been read whole). `pending`: input is already
    /// buffered on this side of the socket, which can only be an attention sent right behind
    /// the request.
    pub fn begin(&self, pending: bool) {
        self.cancelled.store(pending, Ordering::Relaxed);
        self.put_off_next_look();
        self.running.store(true, Ordering::Relaxed);
    }

    /// The request has stopped. Called before the response's last packet goes out: once the
    /// client has it, it may send its next request, which is no attention.
    pub fn end(&self) {
        self.running.store(false, Ordering::Relaxed);
    }

    /// Looks at the socket for up to `timeout`; input (or the client's going) while the
    /// request runs cancels it.
    fn look(&self, timeout: Duration) -> bool {
        if self.cancelled.load(Ordering::Relaxed) {
            return true;
        }
        if !self.running.load(Ordering::Relaxed) {
            return false;
        }
        self.put_off_next_look();
        // An error on the socket means the client is unreachable: as good as gone.
        if walden_io::net::wait_readable(&*self.tcp, timeout).unwrap_or(true) {
            self.cancelled.store(true, Ordering::Relaxed);
        }
        self.cancelled.load(Ordering::Relaxed)
    }
}

impl CancelSignal for AttentionProbe {
    fn cancelled(&self) -> bool {
        if self.cancelled.load(Ordering::Relaxed) {
            return true;
        }
        if self.now_micros() < self.next_look.load(Ordering::Relaxed) {
            return false;
        }
        self.look(Duration::ZERO)
    }

    /// Waits on the socket itself, so an attention ends a `WAITFOR` at once.
    fn wait(&self, timeout: Duration) -> bool {
        if self.running.load(Ordering::Relaxed) {
            self.look(timeout)
        } else {
            std::thread::sleep(timeout);
            self.cancelled.load(Ordering::Relaxed)
        }
    }
}
