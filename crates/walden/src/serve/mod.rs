//! `walden serve`: the embedded instance behind SQL Server's wire protocol (TDS 7.4), so that
//! unmodified SQL Server drivers connect to it. One thread per connection; see
//! `docs/serve.md` for what is implemented.

mod conn;
mod convert;
mod output;
mod rpc;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use clap::Args;
use walden_engine::{Instance, InstanceConfig};
use walden_sql::exec::sysviews::ServerCounters;

/// The data directory when neither `--data` nor `WALDEN_DATA` names one.
const DEFAULT_DATA_DIR: &str = "walden-data";
/// How often the accept loop looks at the shutdown flag.
const ACCEPT_POLL: Duration = Duration::from_millis(50);

#[derive(Debug, Args)]
pub struct ServeArgs {
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
    /// Connections served at once; more are refused at login with error 17809.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
}

/// What every connection thread shares.
#[derive(Debug)]
pub struct Shared {
    instance: Arc<Instance>,
    counters: Arc<ServerCounters>,
    sa_password: String,
    max_connections: usize,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

pub fn run(args: ServeArgs) -> Result<(), String> {
    let data = args
        .data
        .or_else(|| env("WALDEN_DATA").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
    let listen = args.listen.or_else(|| env("WALDEN_LISTEN")).unwrap_or_else(|| "127.0.0.1".into());
    let port = match args.port {
        Some(p) => p,
        None => match env("WALDEN_PORT") {
            Some(p) => p.parse().map_err(|_| format!("WALDEN_PORT: not a port: {p}"))?,
            None => 1433,
        },
    };

    eprintln!("Walden {} (TDS 7.4 server)", env!("CARGO_PKG_VERSION"));
    eprintln!("data directory: {}", data.display());
    let instance = Instance::open(&data, InstanceConfig::default())
        .map_err(|e| format!("cannot open {}: {e}", data.display()))?;
    for db in instance.databases() {
        let report = db.recovery_report();
        let (lsn, micros) = db.last_commit();
        eprintln!(
            "database {}: recovered {} log records, {} transactions rolled back, last \
             recovered commit LSN {} (last commit LSN {lsn} at {micros} us since the epoch)",
            db.name(),
            report.records_scanned,
            report.transactions_undone,
            report.last_commit_lsn,
        );
    }
    let sa_password = match args.sa_password.or_else(|| env("WALDEN_SA_PASSWORD")) {
        Some(p) => p,
        None => stored_password(&data)?,
    };

    let listener = TcpListener::bind((listen.as_str(), port))
        .map_err(|e| format!("cannot listen on {listen}:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    // Non-blocking, so that the loop notices a shutdown signal between connections.
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    eprintln!("listening on {addr}");

    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).map_err(|e| e.to_string())?;
    }
    let shared = Arc::new(Shared {
        instance: Arc::clone(&instance),
        counters: Arc::new(ServerCounters::default()),
        sa_password,
        max_connections: args.max_connections,
    });
    let active = Arc::new(AtomicUsize::new(0));
    let open: Arc<Mutex<HashMap<u64, TcpStream>>> = Arc::default();
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
            Err(e) => {
                eprintln!("walden serve: accept: {e}");
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
        };
        threads.retain(|t| !t.is_finished());
        if let Err(e) = stream.set_nonblocking(false).and_then(|()| stream.set_nodelay(true)) {
            eprintln!("walden serve: {e}");
            continue;
        }
        next_id += 1;
        let id = next_id;
        if let Ok(clone) = stream.try_clone() {
            open.lock().unwrap_or_else(PoisonError::into_inner).insert(id, clone);
        }
        let over_limit = active.fetch_add(1, Ordering::SeqCst) >= args.max_connections;
        let (shared, active, open) = (Arc::clone(&shared), Arc::clone(&active), Arc::clone(&open));
        let spawned = std::thread::Builder::new().name(format!("conn-{id}")).spawn(move || {
            conn::serve(stream, shared, over_limit);
            active.fetch_sub(1, Ordering::SeqCst);
            open.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        });
        match spawned {
            Ok(handle) => threads.push(handle),
            Err(e) => eprintln!("walden serve: cannot start a connection thread: {e}"),
        }
    }

    eprintln!("shutting down: closing {} connection(s)", active.load(Ordering::SeqCst));
    drop(listener);
    for stream in open.lock().unwrap_or_else(PoisonError::into_inner).values() {
        // Ends the thread's read: it closes its session (rolling back) and exits.
        let _ = stream.shutdown(Shutdown::Both);
    }
    for thread in threads {
        let _ = thread.join();
    }
    instance.close().map_err(|e| format!("closing the instance: {e}"))?;
    eprintln!("shutdown complete");
    Ok(())
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
    eprintln!("generated the sa password; it is in {}", path.display());
    Ok(password)
}
