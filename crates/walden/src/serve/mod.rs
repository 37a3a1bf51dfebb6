//! `walden serve`: the embedded instance behind SQL Server's wire protocol (TDS 7.4), so that
//! unmodified SQL Server drivers connect to it. Connections wait for their clients in one
//! readiness poller (`poller.rs`) and their requests run on a bounded pool of worker threads
//! (`workers.rs`); see `docs/serve.md` for what is implemented.

/// Writes one line to the server's log on stderr, as `<UTC date> <time> <LEVEL> <message>`
/// (level `info`, `warn` or `error`), like SQL Server's errorlog. Unlike `eprintln!`, a write
/// error (stderr closed by whoever started the server) is ignored: losing a log line must not
/// panic a worker and leave its client waiting.
macro_rules! log_line {
    ($level:ident, $($arg:tt)*) => {
        $crate::serve::write_log(stringify!($level), format_args!($($arg)*))
    };
}

mod bulk;
pub(crate) mod code_page;
mod config;
mod conn;
/// Shared with the `walden sql -S` client, which reads result sets with the same conversions.
pub(crate) mod convert;
mod cursor_rpc;
mod output;
mod poller;
mod rpc;
mod tls;
mod workers;

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Token};

use clap::{Args, ValueEnum};
use walden_engine::types::Date;
use walden_engine::{EventLevel, EventLog, Instance, InstanceConfig};
use walden_sql::exec::sysviews::format_lsn;
use walden_sql::exec::sysviews::ServerCounters;
use walden_storage::buffer::{default_max_memory_mb, MIN_MEMORY_MB};

/// The data directory when neither `--data`, `WALDEN_DATA` nor `walden.toml` names one.
const DEFAULT_DATA_DIR: &str = "walden-data";
/// Logged-in connections served at once by default: SQL Server's most (`@@MAX_CONNECTIONS`).
/// A connection between requests holds no thread, only its session and socket, so the
/// machine's open-files limit is the practical bound.
const DEFAULT_MAX_CONNECTIONS: usize = 32_767;
/// How long a client has from connecting to the end of its login (PRELOGIN, the TLS
/// handshake, LOGIN7) by default, so that clients that connect and then send nothing, or
/// trickle bytes, cannot hold a pending slot for ever.
const DEFAULT_LOGIN_TIMEOUT_SECS: u64 = 60;
/// How long a new connection has to send its PRELOGIN by default: a real client sends it at
/// once, so a few seconds are plenty, and a socket that stays silent is closed long before
/// the login timeout.
const DEFAULT_PRELOGIN_TIMEOUT_SECS: u64 = 5;
/// Connections that have not finished logging in, kept at once by default. Past it the oldest
/// of them is closed to make room, so that a flood of half-open sockets can neither hold more
/// sockets (or workers, in a stalled TLS handshake) than this nor keep a real client (which
/// logs in within milliseconds) out.
const DEFAULT_MAX_PENDING_LOGINS: usize = 128;

/// Connections the kernel queues for the poller to accept (capped by `net.core.somaxconn`):
/// enough for a burst of thousands, so that a real client's SYN is not dropped in a flood
/// and left to its one-second retransmission.
const LISTEN_BACKLOG: i32 = 4096;

/// The largest `max_server_memory_mb`: SQL Server's largest `max server memory (MB)`.
const MAX_MEMORY_MB: u64 = 2_147_483_647;

/// Every setting comes from its flag, else its `WALDEN_*` variable, else `walden.toml`, else
/// the default (docs/serve.md, "Configuration").
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The configuration file [default: $WALDEN_CONFIG, else ./walden.toml if it exists].
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on [default: $WALDEN_LISTEN, else 127.0.0.1].
    #[arg(long)]
    listen: Option<String>,
    /// TCP port; 0 picks a free one [default: $WALDEN_PORT, else 1433].
    #[arg(long)]
    port: Option<u16>,
    /// Data directory, created if missing [default: $WALDEN_DATA, else ./walden-data].
    #[arg(long)]
    data: Option<PathBuf>,
    /// The `sa` login's password [default: $WALDEN_SA_PASSWORD, else <data>/sa-password,
    /// generated on first start].
    #[arg(long)]
    sa_password: Option<String>,
    /// Logged-in connections served at once; more are refused at login with error 17809
    /// (connections still logging in do not count) [default: $WALDEN_MAX_CONNECTIONS, else
    /// 32767].
    #[arg(long)]
    max_connections: Option<usize>,
    /// Seconds a new connection may take to log in before it is closed [default:
    /// $WALDEN_LOGIN_TIMEOUT, else 60].
    #[arg(long)]
    login_timeout: Option<u64>,
    /// Seconds a new connection may take to send its PRELOGIN before it is closed [default:
    /// $WALDEN_PRELOGIN_TIMEOUT, else 5].
    #[arg(long)]
    prelogin_timeout: Option<u64>,
    /// Connections that have not finished logging in kept at once; past it the oldest is
    /// closed [default: $WALDEN_MAX_PENDING_LOGINS, else 128].
    #[arg(long)]
    max_pending_logins: Option<usize>,
    /// Threads that run requests, at most; started as requests need them and ended after a
    /// minute idle. Connections between requests hold none [default:
    /// $WALDEN_MAX_WORKER_THREADS, else 512, plus 16 per CPU beyond 4].
    #[arg(long)]
    max_worker_threads: Option<usize>,
    /// The memory budget in MB of the buffer pool every database shares and of query memory
    /// together (SQL Server's `max server memory`); frames are allocated as pages need them,
    /// and given back when queries need the room [default: $WALDEN_MAX_SERVER_MEMORY_MB, else
    /// a quarter of the machine's memory].
    #[arg(long)]
    max_server_memory_mb: Option<u64>,
    /// The memory in MB one query's sort, hash aggregate or hash join may hold before it
    /// spills to files in <data>/spill (SQL Server's memory grant) [default:
    /// $WALDEN_MAX_QUERY_MEMORY_MB, else a quarter of the query workspace, the 75% of
    /// max_server_memory_mb the buffer pool may lend].
    #[arg(long)]
    max_query_memory_mb: Option<u64>,
    /// TLS, negotiated in PRELOGIN: `off`, or `self-signed` (a certificate for localhost and
    /// 127.0.0.1 generated at start) [default: $WALDEN_TLS, else on with --tls-cert if
    /// given, else off].
    #[arg(long, value_enum)]
    tls: Option<TlsMode>,
    /// The server certificate (chain) for TLS, a PEM file [default: $WALDEN_TLS_CERT].
    #[arg(long)]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key, a PEM file [default: $WALDEN_TLS_KEY].
    #[arg(long)]
    tls_key: Option<PathBuf>,
}

/// `--tls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TlsMode {
    Off,
    SelfSigned,
}

/// A connection that has not finished logging in.
#[derive(Debug)]
struct PendingLogin {
    tcp: Arc<TcpStream>,
    peer: String,
    accepted: Instant,
    /// Its PRELOGIN is in: the login timeout applies, no longer the pre-login one.
    prelogin_received: bool,
}

/// What the poller and the workers share.
#[derive(Debug)]
pub struct Shared {
    instance: Arc<Instance>,
    counters: Arc<ServerCounters>,
    sa_password: String,
    max_connections: usize,
    /// The TLS configuration, when encryption is offered.
    tls: Option<tls::TlsSetup>,
    /// How long a connection may take to log in.
    login_timeout: Duration,
    /// How long a connection may take to send its PRELOGIN.
    prelogin_timeout: Duration,
    /// Connections logged in (or being admitted at LOGIN7) now, against `max_connections`.
    logged_in: AtomicUsize,
    /// Connections that have not finished logging in kept at once.
    max_pending_logins: usize,
    /// Connections that have not finished logging in, by connection id (oldest first), with
    /// a handle to close them by.
    pending: Mutex<BTreeMap<u64, PendingLogin>>,
    /// Every open connection's socket, by id, to close them all at shutdown.
    open: Mutex<HashMap<u64, Arc<TcpStream>>>,
    /// Connections waiting for their client, by id (the poller's token).
    parked: Mutex<HashMap<u64, Box<conn::Connection>>>,
    /// The poller's registrations.
    registry: mio::Registry,
    /// The server is shutting down: a connection a worker finishes with is closed, not
    /// parked.
    closing: AtomicBool,
    workers: workers::Pool,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, BTreeMap<u64, PendingLogin>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open(&self) -> MutexGuard<'_, HashMap<u64, Arc<TcpStream>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn parked(&self) -> MutexGuard<'_, HashMap<u64, Box<conn::Connection>>> {
        self.parked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The connection is past its login (in, refused or failed): it no longer counts
    /// against the pending cap, and can no longer be evicted.
    fn login_done(&self, id: u64) {
        self.pending().remove(&id);
    }

    /// The connection's PRELOGIN is in: from now on the login timeout applies to it.
    fn prelogin_received(&self, id: u64) {
        if let Some(p) = self.pending().get_mut(&id) {
            p.prelogin_received = true;
        }
    }

    /// A connection is being dropped: it is forgotten everywhere, and no longer watched.
    fn forget(&self, id: u64, tcp: &TcpStream) {
        self.login_done(id);
        self.open().remove(&id);
        let _ = self.registry.deregister(&mut SourceFd(&tcp.as_raw_fd()));
    }

    /// A worker gives a connection back to wait for its client's next message.
    fn park(&self, connection: Box<conn::Connection>) {
        if self.closing.load(Ordering::SeqCst) {
            return;
        }
        let (id, tcp) = (connection.id(), Arc::clone(connection.tcp()));
        self.parked().insert(id, connection);
        // Re-arms the edge-triggered registration: input that arrived while the connection
        // was on the worker (whose event the poller ignored) is reported now.
        let token = Token(id as usize);
        if let Err(e) =
            self.registry.reregister(&mut SourceFd(&tcp.as_raw_fd()), token, Interest::READABLE)
        {
            log_line!(error, "cannot watch connection {id}: {e}");
            let lost = self.parked().remove(&id);
            drop(lost);
        }
    }

    /// Takes a slot under `max_connections` for a connection at LOGIN7; `None` if all are
    /// taken. The slot is given back when the guard drops.
    fn take_slot(self: &Arc<Self>) -> Option<SlotGuard> {
        if self.logged_in.fetch_add(1, Ordering::SeqCst) >= self.max_connections {
            self.logged_in.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(SlotGuard(Arc::clone(self)))
    }
}

/// A logged-in connection's slot under `max_connections`.
struct SlotGuard(Arc<Shared>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.0.logged_in.fetch_sub(1, Ordering::SeqCst);
    }
}

/// See `log_line!`.
pub(crate) fn write_log(level: &str, message: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let since_epoch =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let now = utc_datetime(since_epoch.as_micros() as u64);
    // Milliseconds are enough for a log line: the last three of the six digits go.
    let now = &now[..now.len().saturating_sub(3)];
    let _ = writeln!(std::io::stderr(), "{now} {:<5} {message}", level.to_ascii_uppercase());
}

/// A moment, in microseconds since the Unix epoch, as `YYYY-MM-DD hh:mm:ss.ffffff` in UTC.
fn utc_datetime(micros: u64) -> String {
    let secs = micros / 1_000_000;
    let epoch = Date::from_ymd(1970, 1, 1).map_or(0, Date::days);
    let date = u32::try_from(secs / 86_400)
        .ok()
        .and_then(|d| Date::from_days(epoch + d))
        .map_or_else(String::new, |d| d.to_string());
    let t = secs % 86_400;
    format!("{date} {:02}:{:02}:{:02}.{:06}", t / 3600, t / 60 % 60, t % 60, micros % 1_000_000)
}

/// What the start-up summary says of a database's last recovered commit: its LSN as SQL
/// Server writes one (as `sys.dm_db_log_stats` shows it) and its commit time, so that an
/// application can tell which of its delayed commits survived.
fn last_commit_text(lsn: u64, commit_micros: u64) -> String {
    if lsn == 0 {
        return "no commit in the log".to_string();
    }
    format!("last recovered commit LSN {} at {} UTC", format_lsn(lsn), utc_datetime(commit_micros))
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A setting: the flag, else the environment variable (parsed), else the file's value.
fn setting<T>(
    flag: Option<T>,
    variable: &str,
    file: Option<T>,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, String> {
    if flag.is_some() {
        return Ok(flag);
    }
    if let Some(text) = env(variable) {
        return parse(&text).map(Some).ok_or_else(|| format!("{variable}: cannot use {text:?}"));
    }
    Ok(file)
}

/// `max_server_memory_mb` if it is one the pool can be built with.
fn checked_memory_mb(mb: u64) -> Result<u64, String> {
    if (MIN_MEMORY_MB..=MAX_MEMORY_MB).contains(&mb) {
        Ok(mb)
    } else {
        Err(format!(
            "max_server_memory_mb must be from {MIN_MEMORY_MB} to {MAX_MEMORY_MB}, not {mb}"
        ))
    }
}

/// `max_query_memory_mb` if it is at least 1 and at most `max_server_memory_mb`.
fn checked_query_memory_mb(mb: u64, server_mb: u64) -> Result<u64, String> {
    if (1..=server_mb).contains(&mb) {
        Ok(mb)
    } else {
        Err(format!(
            "max_query_memory_mb must be from 1 to max_server_memory_mb ({server_mb}), not {mb}"
        ))
    }
}

/// The frames of 8 KiB in `mb` MiB.
fn memory_frames(mb: u64) -> usize {
    usize::try_from(mb.saturating_mul(128)).unwrap_or(usize::MAX)
}

pub fn run(args: ServeArgs) -> Result<(), String> {
    let explicit = args.config.clone().or_else(|| env("WALDEN_CONFIG").map(PathBuf::from));
    let (file, file_path) = config::FileConfig::load(explicit.as_deref())?;
    let data = setting(args.data, "WALDEN_DATA", file.data, |t| Some(PathBuf::from(t)))?
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
    let listen = setting(args.listen, "WALDEN_LISTEN", file.listen, |t| Some(t.to_string()))?
        .unwrap_or_else(|| "127.0.0.1".into());
    let port = setting(args.port, "WALDEN_PORT", file.port, |t| t.parse().ok())?.unwrap_or(1433);
    let max_connections =
        setting(args.max_connections, "WALDEN_MAX_CONNECTIONS", file.max_connections, |t| {
            t.parse().ok()
        })?
        .unwrap_or(DEFAULT_MAX_CONNECTIONS);
    let login_timeout =
        setting(args.login_timeout, "WALDEN_LOGIN_TIMEOUT", file.login_timeout_secs, |t| {
            t.parse().ok().filter(|&s: &u64| s > 0)
        })?
        .unwrap_or(DEFAULT_LOGIN_TIMEOUT_SECS);
    let prelogin_timeout = setting(
        args.prelogin_timeout,
        "WALDEN_PRELOGIN_TIMEOUT",
        file.prelogin_timeout_secs,
        |t| t.parse().ok().filter(|&s: &u64| s > 0),
    )?
    .unwrap_or(DEFAULT_PRELOGIN_TIMEOUT_SECS);
    let max_pending_logins = setting(
        args.max_pending_logins,
        "WALDEN_MAX_PENDING_LOGINS",
        file.max_pending_logins,
        |t| t.parse().ok().filter(|&n: &usize| n > 0),
    )?
    .unwrap_or(DEFAULT_MAX_PENDING_LOGINS)
    .max(1);
    let max_worker_threads = setting(
        args.max_worker_threads,
        "WALDEN_MAX_WORKER_THREADS",
        file.max_worker_threads,
        |t| t.parse().ok().filter(|&n: &usize| n > 0),
    )?
    .unwrap_or_else(workers::default_max_workers)
    .max(1);
    let max_server_memory_mb = setting(
        args.max_server_memory_mb,
        "WALDEN_MAX_SERVER_MEMORY_MB",
        file.max_server_memory_mb,
        |t| t.parse().ok(),
    )?
    .map(checked_memory_mb)
    .transpose()?
    .unwrap_or_else(default_max_memory_mb);
    let max_query_memory_mb = setting(
        args.max_query_memory_mb,
        "WALDEN_MAX_QUERY_MEMORY_MB",
        file.max_query_memory_mb,
        |t| t.parse().ok(),
    )?
    .map(|mb| checked_query_memory_mb(mb, max_server_memory_mb))
    .transpose()?;
    let tls_mode =
        match file.tls.as_deref() {
            Some(text) => Some(TlsMode::from_str(text, true).map_err(|_| {
                format!("walden.toml: tls: expected off or self-signed, not {text}")
            })?),
            None => None,
        };
    let tls_mode = setting(args.tls, "WALDEN_TLS", tls_mode, |t| TlsMode::from_str(t, true).ok())?;
    let tls_cert =
        setting(args.tls_cert, "WALDEN_TLS_CERT", file.tls_cert, |t| Some(PathBuf::from(t)))?;
    let tls_key =
        setting(args.tls_key, "WALDEN_TLS_KEY", file.tls_key, |t| Some(PathBuf::from(t)))?;

    log_line!(info, "Walden {} (TDS 7.4 server)", env!("CARGO_PKG_VERSION"));
    if let Some(path) = &file_path {
        log_line!(info, "configuration: {}", path.display());
    }
    log_line!(info, "data directory: {}", data.display());
    // A descriptor per connection: the soft limit (often 1,024) would cap connections far
    // below max_connections.
    match walden_io::net::raise_open_files_limit() {
        Ok(limit) => log_line!(info, "open files limit: {limit}"),
        Err(e) => log_line!(warn, "cannot raise the open files limit: {e}"),
    }
    log_line!(info, "buffer pool: max_server_memory_mb = {max_server_memory_mb}");
    let mut config = InstanceConfig::default();
    config.database.pool.frames = memory_frames(max_server_memory_mb);
    // The engine's state changes (online, offline with the cause, recovery pending or suspect
    // with the reason) go to this log, timestamped like every other line.
    config.database.events = EventLog::new(|level, message| {
        let level = match level {
            EventLevel::Info => "info",
            EventLevel::Warn => "warn",
            EventLevel::Error => "error",
        };
        write_log(level, format_args!("{message}"));
    });
    let instance = Instance::open(&data, config)
        .map_err(|e| format!("cannot open {}: {e}", data.display()))?;
    let query_memory = walden_sql::exec::QueryMemoryConfig {
        max_query_memory_bytes: max_query_memory_mb.map(|mb| (mb as usize) << 20),
    };
    walden_sql::exec::configure_query_memory(&instance, query_memory);
    if let Some(mb) = max_query_memory_mb {
        log_line!(info, "query memory: max_query_memory_mb = {mb}");
    }
    for db in instance.databases() {
        let report = db.recovery_report();
        let (lsn, micros) = db.last_commit();
        log_line!(
            info,
            "database {}: recovered {} log records, {} transactions rolled back, {}",
            db.name(),
            report.records_scanned,
            report.transactions_undone,
            last_commit_text(lsn, micros),
        );
    }
    let tls = tls_setup(tls_mode, tls_cert, tls_key)?;
    let sa_password =
        match setting(args.sa_password, "WALDEN_SA_PASSWORD", file.sa_password, |t| {
            Some(t.to_string())
        })? {
            Some(p) => p,
            None => stored_password(&data)?,
        };

    let listener = TcpListener::bind((listen.as_str(), port))
        .map_err(|e| format!("cannot listen on {listen}:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    // Non-blocking: the poller accepts until the backlog is empty.
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    if let Err(e) = walden_io::net::set_listen_backlog(&listener, LISTEN_BACKLOG) {
        log_line!(warn, "cannot lengthen the listen backlog: {e}");
    }
    let poll = mio::Poll::new().map_err(|e| format!("cannot start the poller: {e}"))?;
    let registry = poll.registry().try_clone().map_err(|e| e.to_string())?;
    log_line!(
        info,
        "max_connections = {max_connections}, max_worker_threads = {max_worker_threads}"
    );
    log_line!(info, "listening on {addr}");

    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).map_err(|e| e.to_string())?;
    }
    let shared = Arc::new(Shared {
        instance: Arc::clone(&instance),
        counters: Arc::new(ServerCounters::default()),
        sa_password,
        max_connections,
        tls,
        login_timeout: Duration::from_secs(login_timeout),
        prelogin_timeout: Duration::from_secs(prelogin_timeout),
        logged_in: AtomicUsize::new(0),
        max_pending_logins,
        pending: Mutex::default(),
        open: Mutex::default(),
        parked: Mutex::default(),
        registry,
        closing: AtomicBool::new(false),
        workers: workers::Pool::new(max_worker_threads),
    });
    let polled = poller::run(&shared, poll, listener, &stop);
    let peak = shared.workers.peak();
    log_line!(info, "connections closed; at most {peak} worker thread(s) ran at once");
    polled.map_err(|e| format!("the poller failed: {e}"))?;
    // Fails only if the shutdown itself failed (an online database could not be checkpointed
    // and closed); a database that was already offline or never opened does not change the
    // exit status (docs/serve.md).
    instance.close().map_err(|e| format!("closing the instance: {e}"))?;
    for db in instance.databases() {
        if let Err(e) = db.check_online() {
            log_line!(warn, "database {} was offline at shutdown: {e}", db.name());
        }
    }
    for db in instance.unavailable_databases() {
        log_line!(warn, "database {} was {} at shutdown", db.entry.name, db.state_desc());
    }
    log_line!(info, "shutdown complete");
    Ok(())
}

/// The TLS setup the flags and their environment variables ask for, announced on stderr.
fn tls_setup(
    mode: Option<TlsMode>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
) -> Result<Option<tls::TlsSetup>, String> {
    let files = match (cert, key) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        (Some(_), None) => return Err("--tls-cert needs --tls-key (or WALDEN_TLS_KEY)".into()),
        (None, Some(_)) => return Err("--tls-key needs --tls-cert (or WALDEN_TLS_CERT)".into()),
    };
    let setup = match (mode, files) {
        (Some(TlsMode::Off), _) | (None, None) => None,
        (Some(TlsMode::SelfSigned), Some(_)) => {
            return Err("--tls self-signed and a certificate file exclude each other".into())
        }
        (Some(TlsMode::SelfSigned), None) => {
            let setup = tls::TlsSetup::self_signed()?;
            log_line!(
                info,
                "TLS: self-signed certificate for localhost and 127.0.0.1, SHA-256 fingerprint {}",
                setup.fingerprint
            );
            Some(setup)
        }
        (None, Some((cert, key))) => {
            let setup = tls::TlsSetup::from_pem_files(&cert, &key)?;
            log_line!(
                info,
                "TLS: certificate {}, SHA-256 fingerprint {}",
                cert.display(),
                setup.fingerprint
            );
            Some(setup)
        }
    };
    if setup.is_none() {
        log_line!(info, "TLS: off (clients that require encryption cannot connect)");
    }
    Ok(setup)
}

/// The password stored in `<data>/sa-password`, generated (and stored, mode 0600) if absent.
fn stored_password(data: &Path) -> Result<String, String> {
    let path = data.join("sa-password");
    if let Ok(text) = std::fs::read_to_string(&path) {
        return Ok(text.trim().to_string());
    }
    let mut random = [0u8; 18];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut random))
        .map_err(|e| format!("cannot generate the sa password: {e}"))?;
    let password: String = random.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| f.write_all(password.as_bytes()))
        .map_err(|e| format!("cannot store the sa password in {}: {e}", path.display()))?;
    log_line!(info, "generated the sa password; it is in {}", path.display());
    Ok(password)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_query_memory_mb_is_at_least_1_and_at_most_max_server_memory_mb() {
        assert_eq!(checked_query_memory_mb(64, 256), Ok(64));
        assert_eq!(checked_query_memory_mb(256, 256), Ok(256));
        let error = checked_query_memory_mb(0, 256).expect_err("zero");
        assert!(error.contains("max_query_memory_mb must be from 1"), "{error}");
        assert!(checked_query_memory_mb(257, 256).is_err());
    }

    #[test]
    fn utc_datetime_counts_days_and_microseconds_from_the_epoch() {
        assert_eq!(utc_datetime(0), "1970-01-01 00:00:00.000000");
        // 2026-11-26 17:14:50.751963 UTC: 20,783 days after the epoch.
        let micros = (20_783 * 86_400 + 17 * 3600 + 14 * 60 + 50) * 1_000_000 + 751_963;
        assert_eq!(utc_datetime(micros), "2026-11-26 17:14:50.751963");
    }

    #[test]
    fn last_commit_text_names_the_lsn_as_sql_server_writes_it() {
        assert_eq!(last_commit_text(0, 0), "no commit in the log");
        assert_eq!(
            last_commit_text(0x1517, 0),
            "last recovered commit LSN 00000000:00001517:0001 at 1970-01-01 00:00:00.000000 UTC"
        );
    }

    #[test]
    fn max_server_memory_mb_is_checked_and_counted_in_frames() {
        assert_eq!(checked_memory_mb(1), Ok(1));
        assert_eq!(checked_memory_mb(4096), Ok(4096));
        let error = checked_memory_mb(0).expect_err("zero");
        assert!(error.contains("max_server_memory_mb must be from 1"), "{error}");
        assert!(checked_memory_mb(MAX_MEMORY_MB + 1).is_err());
        assert_eq!(memory_frames(1), 128);
        assert_eq!(memory_frames(1024), 131_072);
        assert!(default_max_memory_mb() >= MIN_MEMORY_MB);
    }
}
