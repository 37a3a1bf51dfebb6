//! `sys.dm_exec_sessions` and `sys.dm_exec_requests`: who is connected, what each session is
//! running, and, with the lock manager's waiting requests, who blocks whom.
//!
//! Each session publishes its state in a [`SessionActivity`] registered with the server's
//! [`ServerCounters`]. The session updates it with relaxed atomic stores, at each batch's
//! start and end and at each statement (its command), so that the cost on the statement path
//! is a store, with no lock; a view reads the fields one by one, each current but not all
//! from one instant, as SQL Server's DMVs are.

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use walden_engine::lock::{owner_session, LockInfo, LockStatus};
use walden_engine::types::{Len, SqlType, Value};

use super::query_stats::{parse_text_handle, text_handle, TextHash};
use super::{big, datetime, int, int_arg, nstr, small, RowSet, View, ViewContext, DESC};
use crate::exec::SqlError;

/// What a session is running, as `sys.dm_exec_requests.command` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Command {
    /// Between statements (a compound statement, or nothing).
    Awaiting,
    Select,
    Insert,
    Update,
    Delete,
    Execute,
    Waitfor,
    BeginTransaction,
    CommitTransaction,
    RollbackTransaction,
    Declare,
    SetOption,
    Create,
    Drop,
    Dbcc,
    Checkpoint,
    BulkInsert,
}

/// [`Command`]s' names, by discriminant.
const COMMANDS: [&str; 17] = [
    "AWAITING COMMAND",
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "EXECUTE",
    "WAITFOR",
    "BEGIN TRANSACTION",
    "COMMIT TRANSACTION",
    "ROLLBACK TRANSACTION",
    "DECLARE",
    "SET OPTION",
    "CREATE",
    "DROP",
    "DBCC",
    "CHECKPOINT",
    "BULK INSERT",
];

/// Microseconds since the Unix epoch, now.
pub(crate) fn now_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// What a client said about itself at login.
#[derive(Debug, Clone, Default)]
pub struct ClientInfo {
    /// The login name.
    pub login: String,
    /// The client machine's name.
    pub host: String,
    /// The application's name.
    pub program: String,
    /// The driver (`client_interface_name`).
    pub interface: String,
    /// The client's process id (LOGIN7's ClientPID; an embedded session's own process):
    /// `host_process_id`, and `sys.sysprocesses.hostprocess`, which tools such as
    /// sp_WhoIsActive read to tell user sessions (with one) from system sessions.
    pub process_id: Option<u32>,
    /// The network connection, for a session that came over TDS (`None`: an embedded one).
    pub connection: Option<ConnectionInfo>,
}

/// A TDS connection as `sys.dm_exec_connections` shows it.
#[derive(Debug, Clone, Default)]
pub struct ConnectionInfo {
    /// The client's address and port.
    pub client: Option<std::net::SocketAddr>,
    /// The server's address and port the client connected to.
    pub local: Option<std::net::SocketAddr>,
    /// Everything after the login travels in TLS (not only the LOGIN7 message).
    pub encrypted: bool,
    /// The negotiated packet size.
    pub packet_size: u32,
    /// The TDS version the server speaks with the client, as LOGINACK carried it.
    pub protocol_version: u32,
    /// The connection's socket, only looked at (weak: the view never keeps it open).
    pub socket: Option<Weak<TcpStream>>,
}

impl ConnectionInfo {
    /// The client has closed its end, or the server has let the socket go: the connection
    /// is being torn down (its session may still be rolling back on a worker), and
    /// `sys.dm_exec_connections` no longer lists it. A client that closes one connection and
    /// counts the server's connections on the next must not find the one it closed.
    fn client_has_left(&self) -> bool {
        self.socket.as_ref().is_some_and(|socket| {
            socket
                .upgrade()
                .is_none_or(|tcp| walden_io::net::peer_has_closed(&*tcp).unwrap_or(true))
        })
    }
}

/// One session's state as the views show it. Written by the session, read by the views.
#[derive(Debug)]
pub struct SessionActivity {
    spid: u16,
    pub(super) login_micros: u64,
    client: Mutex<ClientInfo>,
    /// A batch is running.
    running: AtomicBool,
    /// The running statement's [`Command`], as its discriminant.
    command: AtomicU8,
    pub(super) database_id: AtomicU32,
    pub(super) open_transactions: AtomicU32,
    request_start_micros: AtomicU64,
    last_request_end_micros: AtomicU64,
    row_count: AtomicU64,
    /// SQL Server's `transaction_isolation_level` code (1 read uncommitted, 2 read committed,
    /// 3 repeatable read, 4 serializable, 5 snapshot).
    isolation: AtomicU8,
    /// Milliseconds; -1 waits for ever.
    lock_timeout_ms: AtomicI64,
    /// `SET TEXTSIZE`'s value (`@@TEXTSIZE`).
    text_size: AtomicI64,
    /// The other SET options, as the session last published them.
    options: Mutex<PublishedOptions>,
    /// `KILL` ended the session: it runs nothing more.
    killed: AtomicBool,
    /// What `KILL` does besides setting `killed`: the server closes the connection, which
    /// wakes a session waiting for its client's next request.
    on_kill: Mutex<Option<KillAction>>,
    /// The user transaction open in the session (`BEGIN TRAN`, or one `IMPLICIT_TRANSACTIONS`
    /// opened), for the `sys.dm_tran_*` views and `DBCC OPENTRAN`. Autocommit transactions
    /// are not recorded here: the views find those that logged anything in the databases'
    /// logs, which name their lock owner.
    user_transaction: Mutex<Option<UserTransaction>>,
    /// The running (or last) batch: its number in the session (0: none yet), its text and
    /// the text's hash, for `sql_handle`, `sys.dm_exec_sql_text` and
    /// `sys.dm_exec_input_buffer`.
    batch: Mutex<(u64, Arc<str>, TextHash)>,
    /// The procedure, trigger or function the running statement is in: its database id in
    /// the high 32 bits and its object id in the low ones; 0 for the batch itself. A
    /// request's `sql_handle` then names the module, as SQL Server's does.
    module: AtomicU64,
}

/// A handle as `sys.sysprocesses.sql_handle` (BINARY(20)) holds it, without the zero bytes
/// that pad a module's (12 bytes) handle to 20; any other handle as it is.
fn unpadded(handle: &[u8]) -> &[u8] {
    let natural = match handle.first() {
        Some(0x03) => 12,
        _ => return handle,
    };
    match handle.split_at_checked(natural) {
        Some((h, pad)) if handle.len() == 20 && pad.iter().all(|b| *b == 0) => h,
        _ => handle,
    }
}

/// A module's `sql_handle`: 0x03 (SQL Server's first byte for an object's handle), three
/// zero bytes, then the database id and the object id (4 bytes each, big-endian).
pub(super) fn module_handle(database_id: u32, object_id: u32) -> Vec<u8> {
    let mut handle = vec![0x03, 0, 0, 0];
    handle.extend_from_slice(&database_id.to_be_bytes());
    handle.extend_from_slice(&object_id.to_be_bytes());
    handle
}

/// The (database id, object id) a [`module_handle`] names.
fn parse_module_handle(handle: &[u8]) -> Option<(u32, u32)> {
    match handle {
        [0x03, 0, 0, 0, d0, d1, d2, d3, o0, o1, o2, o3] => Some((
            u32::from_be_bytes([*d0, *d1, *d2, *d3]),
            u32::from_be_bytes([*o0, *o1, *o2, *o3]),
        )),
        _ => None,
    }
}

/// A user transaction as the session recorded it when it began.
#[derive(Debug, Clone)]
pub(crate) struct UserTransaction {
    /// The engine's transaction id (its lock owner).
    pub(crate) id: u64,
    /// `BEGIN TRAN`'s name; `user_transaction` or `implicit_transaction` without one, as in
    /// SQL Server.
    pub(crate) name: String,
    pub(crate) begin_micros: u64,
}

/// The action `KILL` runs on a session's connection.
struct KillAction(Box<dyn Fn() + Send>);

impl std::fmt::Debug for KillAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KillAction")
    }
}

impl SessionActivity {
    fn new(spid: u16) -> SessionActivity {
        SessionActivity {
            spid,
            login_micros: now_micros(),
            // An embedded session (the shell, a benchmark) until a TDS login says otherwise.
            client: Mutex::new(ClientInfo {
                login: "sa".into(),
                host: "localhost".into(),
                program: "walden".into(),
                interface: "walden".into(),
                process_id: Some(std::process::id()),
                connection: None,
            }),
            running: AtomicBool::new(false),
            command: AtomicU8::new(0),
            database_id: AtomicU32::new(1),
            open_transactions: AtomicU32::new(0),
            request_start_micros: AtomicU64::new(0),
            last_request_end_micros: AtomicU64::new(0),
            row_count: AtomicU64::new(0),
            isolation: AtomicU8::new(2),
            lock_timeout_ms: AtomicI64::new(-1),
            text_size: AtomicI64::new(i64::from(i32::MAX)),
            options: Mutex::new(PublishedOptions::default()),
            killed: AtomicBool::new(false),
            on_kill: Mutex::new(None),
            user_transaction: Mutex::new(None),
            batch: Mutex::new((0, Arc::from(""), [0; 16])),
            module: AtomicU64::new(0),
        }
    }

    /// What `KILL` should do besides marking the session (close its connection).
    pub fn set_on_kill(&self, action: Box<dyn Fn() + Send>) {
        *self.on_kill.lock().unwrap_or_else(PoisonError::into_inner) = Some(KillAction(action));
    }

    /// `KILL`: the session stops its running batch at the next cancellation point, and its
    /// connection is closed (rolling its transaction back).
    pub(crate) fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
        if let Some(action) = &*self.on_kill.lock().unwrap_or_else(PoisonError::into_inner) {
            (action.0)();
        }
    }

    /// Whether `KILL` ended the session.
    pub fn killed(&self) -> bool {
        self.killed.load(Ordering::Relaxed)
    }

    /// What the client said at login.
    pub(crate) fn client(&self) -> ClientInfo {
        self.client.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Records what the client said at login.
    pub fn set_client(&self, client: ClientInfo) {
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) = client;
    }

    /// A user transaction began.
    pub(crate) fn transaction_began(&self, transaction: UserTransaction) {
        *self.user_transaction.lock().unwrap_or_else(PoisonError::into_inner) = Some(transaction);
    }

    /// The user transaction (if any) ended.
    pub(crate) fn transaction_ended(&self) {
        *self.user_transaction.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The user transaction open in the session, if any.
    pub(crate) fn user_transaction(&self) -> Option<UserTransaction> {
        self.user_transaction.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The session's id.
    pub(crate) fn spid(&self) -> u16 {
        self.spid
    }

    /// When the session's last (or running) batch started.
    pub(crate) fn request_start_micros(&self) -> u64 {
        self.request_start_micros.load(Ordering::Relaxed)
    }

    /// The running (or last) batch's number in the session and its text; (0, "") before the
    /// first.
    pub(crate) fn batch(&self) -> (u64, Arc<str>, TextHash) {
        self.batch.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The running statement's module (database id, object id), or None in the batch
    /// itself; what [`SessionActivity::enter_module`] last set.
    fn module(&self) -> Option<(u32, u32)> {
        match self.module.load(Ordering::Relaxed) {
            0 => None,
            m => Some(((m >> 32) as u32, m as u32)),
        }
    }

    /// The running statement is now in module `object_id` of database `database_id` (None:
    /// in the batch); returns what it was in, for the module's end to put back.
    pub(crate) fn enter_module(&self, module: Option<(u32, u32)>) -> Option<(u32, u32)> {
        let packed = module.map_or(0, |(db, object)| (u64::from(db) << 32) | u64::from(object));
        match self.module.swap(packed, Ordering::Relaxed) {
            0 => None,
            m => Some(((m >> 32) as u32, m as u32)),
        }
    }

    /// The running request's `sql_handle`: its module's while it runs one, else its batch's.
    pub(super) fn request_handle_value(&self) -> Value {
        match self.module() {
            Some((db, object)) => Value::Binary(module_handle(db, object)),
            None => self.handle_value(),
        }
    }

    /// The running (or last) batch's `sql_handle`, NULL before the first.
    fn handle_value(&self) -> Value {
        match self.batch() {
            (0, ..) => Value::Null,
            (_, _, hash) => Value::Binary(text_handle(&hash)),
        }
    }

    /// The running statement's command, as `sys.dm_exec_requests` names it.
    pub(crate) fn command_name(&self) -> &'static str {
        let code = usize::from(self.command.load(Ordering::Relaxed));
        COMMANDS.get(code).copied().unwrap_or(COMMANDS[0])
    }

    /// A batch of text `text`, whose hash is `hash`, starts in database `database_id`.
    pub(crate) fn batch_started(&self, database_id: u32, text: &Arc<str>, hash: TextHash) {
        {
            let mut batch = self.batch.lock().unwrap_or_else(PoisonError::into_inner);
            *batch = (batch.0 + 1, Arc::clone(text), hash);
        }
        self.request_start_micros.store(now_micros(), Ordering::Relaxed);
        self.database_id.store(database_id, Ordering::Relaxed);
        self.running.store(true, Ordering::Relaxed);
    }

    /// The session's database.
    pub(crate) fn database_id(&self) -> u32 {
        self.database_id.load(Ordering::Relaxed)
    }

    /// `USE` made `database_id` the session's database.
    pub(crate) fn database_changed(&self, database_id: u32) {
        self.database_id.store(database_id, Ordering::Relaxed);
    }

    /// A statement running `command` starts.
    pub(crate) fn statement(&self, command: Command) {
        self.command.store(command as u8, Ordering::Relaxed);
    }

    /// The session's SET options changed (a SET statement, or a batch ended).
    pub(crate) fn options_changed(&self, options: &PublishedOptions) {
        self.text_size.store(options.text_size, Ordering::Relaxed);
        *self.options.lock().unwrap_or_else(PoisonError::into_inner) = *options;
    }

    fn options(&self) -> PublishedOptions {
        *self.options.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The batch ended, leaving the session in this state.
    pub(crate) fn batch_ended(&self, state: &EndState) {
        self.database_id.store(state.database_id, Ordering::Relaxed);
        self.open_transactions.store(state.open_transactions, Ordering::Relaxed);
        self.row_count.store(state.row_count, Ordering::Relaxed);
        self.isolation.store(state.isolation, Ordering::Relaxed);
        self.lock_timeout_ms.store(state.lock_timeout_ms, Ordering::Relaxed);
        self.text_size.store(state.text_size, Ordering::Relaxed);
        self.command.store(Command::Awaiting as u8, Ordering::Relaxed);
        self.last_request_end_micros.store(now_micros(), Ordering::Relaxed);
        self.running.store(false, Ordering::Relaxed);
    }
}

/// A session's SET options, as `sys.dm_exec_sessions` shows them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PublishedOptions {
    /// `@@OPTIONS`.
    pub(crate) bits: i32,
    pub(crate) ansi_defaults: bool,
    pub(crate) date_format: &'static str,
    pub(crate) date_first: u8,
    pub(crate) language: &'static str,
    pub(crate) text_size: i64,
}

impl Default for PublishedOptions {
    /// A new session's: @@OPTIONS 5496 (what drivers set at login), us_english.
    fn default() -> PublishedOptions {
        PublishedOptions {
            bits: 5496,
            ansi_defaults: false,
            date_format: "mdy",
            date_first: 7,
            language: "us_english",
            text_size: i64::from(i32::MAX),
        }
    }
}

/// A session's state when a batch ends.
pub(crate) struct EndState {
    pub(crate) database_id: u32,
    pub(crate) open_transactions: u32,
    pub(crate) row_count: u64,
    pub(crate) isolation: u8,
    pub(crate) lock_timeout_ms: i64,
    pub(crate) text_size: i64,
}

/// The server's sessions, by id.
#[derive(Debug, Default)]
pub(crate) struct SessionRegistry(Mutex<BTreeMap<u16, Arc<SessionActivity>>>);

impl SessionRegistry {
    /// Registers session `spid`; the activity is the session's to update.
    pub(crate) fn register(&self, spid: u16) -> Arc<SessionActivity> {
        let activity = Arc::new(SessionActivity::new(spid));
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(spid, Arc::clone(&activity));
        activity
    }

    /// Session `spid`'s activity, if it is connected.
    pub(crate) fn get(&self, spid: u16) -> Option<Arc<SessionActivity>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get(&spid).cloned()
    }

    /// Session `spid` is gone.
    pub(crate) fn unregister(&self, spid: u16) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(&spid);
    }

    pub(crate) fn all(&self) -> Vec<Arc<SessionActivity>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).values().cloned().collect()
    }
}

/// A session with what it said at login, as the views read it.
pub(super) struct SessionRow {
    pub(super) a: Arc<SessionActivity>,
    pub(super) client: ClientInfo,
    now: u64,
}

/// Bit `bit` of the session's `@@OPTIONS`.
fn option_bit(r: &SessionRow, bit: i32) -> Value {
    Value::Bit(r.a.options().bits & bit != 0)
}

impl SessionRow {
    pub(super) fn running(&self) -> bool {
        self.a.running.load(Ordering::Relaxed)
    }
}

pub(super) fn rows_of(ctx: &ViewContext<'_>) -> Vec<SessionRow> {
    let now = now_micros();
    ctx.counters
        .sessions
        .all()
        .into_iter()
        .map(|a| SessionRow { client: a.client(), a, now })
        .collect()
}

/// `sys.dm_exec_sessions`: one row per connected session. Resource counters Walden does not
/// keep per session (CPU, reads, writes, memory) are NULL.
pub(super) fn exec_sessions(ctx: &ViewContext<'_>) -> RowSet {
    let name = |n: u16| SqlType::NVarChar(Len::N(n));
    let unknown = |_: &SessionRow| Value::Null;
    View::<SessionRow>::new()
        .col("session_id", SqlType::SmallInt, |r| small(r.a.spid.into()))
        .col("login_time", SqlType::DateTime, |r| datetime(r.a.login_micros))
        .opt("host_name", name(128), |r| nstr(r.client.host.as_str()))
        .opt("program_name", name(128), |r| nstr(r.client.program.as_str()))
        .opt("host_process_id", SqlType::Int, |r| {
            r.client.process_id.map_or(Value::Null, |p| int(p.into()))
        })
        .opt("client_version", SqlType::Int, unknown)
        .opt("client_interface_name", name(32), |r| nstr(r.client.interface.as_str()))
        .opt("security_id", SqlType::VarBinary(Len::N(85)), unknown)
        .col("login_name", name(128), |r| nstr(r.client.login.as_str()))
        .opt("nt_domain", name(128), unknown)
        .opt("nt_user_name", name(128), unknown)
        .col("status", name(30), |r| nstr(if r.running() { "running" } else { "sleeping" }))
        .opt("context_info", SqlType::VarBinary(Len::N(128)), unknown)
        .opt("cpu_time", SqlType::Int, unknown)
        .opt("memory_usage", SqlType::Int, unknown)
        .opt("total_scheduled_time", SqlType::Int, unknown)
        .col("total_elapsed_time", SqlType::Int, |r| {
            int(((r.now.saturating_sub(r.a.login_micros)) / 1000) as i64)
        })
        .col("endpoint_id", SqlType::Int, |_| int(0))
        .col("last_request_start_time", SqlType::DateTime, |r| {
            datetime(r.a.request_start_micros().max(r.a.login_micros))
        })
        .opt("last_request_end_time", SqlType::DateTime, |r| {
            match r.a.last_request_end_micros.load(Ordering::Relaxed) {
                0 => Value::Null,
                t => datetime(t),
            }
        })
        .opt("reads", SqlType::BigInt, unknown)
        .opt("writes", SqlType::BigInt, unknown)
        .opt("logical_reads", SqlType::BigInt, unknown)
        .col("is_user_process", SqlType::Bit, |_| Value::Bit(true))
        // The SET options, in SQL Server's columns, as the session last published them (at
        // each SET and at the end of each batch).
        .col("text_size", SqlType::Int, |r| {
            int(r.a.text_size.load(Ordering::Relaxed).min(i64::from(i32::MAX)))
        })
        .col("language", name(128), |r| nstr(r.a.options().language))
        .col("date_format", SqlType::NVarChar(Len::N(3)), |r| nstr(r.a.options().date_format))
        .col("date_first", SqlType::SmallInt, |r| small(r.a.options().date_first.into()))
        .col("quoted_identifier", SqlType::Bit, |r| option_bit(r, 256))
        .col("arithabort", SqlType::Bit, |r| option_bit(r, 64))
        .col("ansi_null_dflt_on", SqlType::Bit, |r| option_bit(r, 1024))
        .col("ansi_defaults", SqlType::Bit, |r| Value::Bit(r.a.options().ansi_defaults))
        .col("ansi_warnings", SqlType::Bit, |r| option_bit(r, 8))
        .col("ansi_padding", SqlType::Bit, |r| option_bit(r, 16))
        .col("ansi_nulls", SqlType::Bit, |r| option_bit(r, 32))
        .col("concat_null_yields_null", SqlType::Bit, |r| option_bit(r, 4096))
        .col("transaction_isolation_level", SqlType::SmallInt, |r| {
            small(r.a.isolation.load(Ordering::Relaxed).into())
        })
        .col("lock_timeout", SqlType::Int, |r| int(r.a.lock_timeout_ms.load(Ordering::Relaxed)))
        .col("deadlock_priority", SqlType::Int, |_| int(0))
        .col("row_count", SqlType::BigInt, |r| big(r.a.row_count.load(Ordering::Relaxed)))
        .opt("original_login_name", name(128), |r| nstr(r.client.login.as_str()))
        .col("database_id", SqlType::SmallInt, |r| {
            small(r.a.database_id.load(Ordering::Relaxed).into())
        })
        .col("open_transaction_count", SqlType::Int, |r| {
            int(r.a.open_transactions.load(Ordering::Relaxed).into())
        })
        // SQL Server 2022's: no session is in a contained availability group here.
        .opt("authenticating_database_id", SqlType::Int, |_| int(1))
        .opt("page_server_reads", SqlType::BigInt, |_| big(0))
        .opt("contained_availability_group_id", SqlType::UniqueIdentifier, unknown)
        .rows(&rows_of(ctx))
}

/// `sys.dm_exec_connections`: one row per session. A session of `walden sql` or of the Rust
/// API has no network connection; it is listed with `Shared memory` as its transport, as SQL
/// Server lists a local connection that does not use the network.
pub(super) fn exec_connections(ctx: &ViewContext<'_>) -> RowSet {
    let connected_rows: Vec<SessionRow> = rows_of(ctx)
        .into_iter()
        .filter(|r| !conn_of(r).is_some_and(ConnectionInfo::client_has_left))
        .collect();
    let name = |n: u16| SqlType::NVarChar(Len::N(n));
    View::<SessionRow>::new()
        .opt("session_id", SqlType::Int, |r| int(r.a.spid.into()))
        .opt("most_recent_session_id", SqlType::Int, |r| int(r.a.spid.into()))
        .col("connect_time", SqlType::DateTime, |r| datetime(r.a.login_micros))
        .col("net_transport", name(40), |r| {
            nstr(if conn_of(r).is_some() { "TCP" } else { "Shared memory" })
        })
        .opt("protocol_type", name(40), |_| nstr("TSQL"))
        .opt("protocol_version", SqlType::Int, |r| {
            // An embedded session has no TDS: it is shown as the newest version.
            let version = conn_of(r).map_or(0x7400_0004, |c| c.protocol_version);
            int(i64::from(version as i32))
        })
        .opt("endpoint_id", SqlType::Int, |_| int(0))
        .opt("encrypt_option", name(40), |r| {
            nstr(if conn_of(r).is_some_and(|c| c.encrypted) { "TRUE" } else { "FALSE" })
        })
        .opt("auth_scheme", name(40), |_| nstr("SQL"))
        .opt("node_affinity", SqlType::SmallInt, |_| small(0))
        .opt("num_reads", SqlType::Int, |_| Value::Null)
        .opt("num_writes", SqlType::Int, |_| Value::Null)
        .opt("last_read", SqlType::DateTime, |r| {
            datetime(r.a.request_start_micros().max(r.a.login_micros))
        })
        .opt("last_write", SqlType::DateTime, |r| {
            match r.a.last_request_end_micros.load(Ordering::Relaxed) {
                0 => datetime(r.a.login_micros),
                t => datetime(t),
            }
        })
        .opt("net_packet_size", SqlType::Int, |r| {
            int(conn_of(r).map_or(4096, |c| c.packet_size).into())
        })
        .opt("client_net_address", name(48), |r| match conn_of(r) {
            Some(c) => address_of(c.client),
            None => nstr("<local machine>"),
        })
        .opt("client_tcp_port", SqlType::Int, |r| port_of(conn_of(r).and_then(|c| c.client)))
        .opt("local_net_address", name(48), |r| address_of(conn_of(r).and_then(|c| c.local)))
        .opt("local_tcp_port", SqlType::Int, |r| port_of(conn_of(r).and_then(|c| c.local)))
        .opt("connection_id", SqlType::UniqueIdentifier, |_| Value::Null)
        .opt("parent_connection_id", SqlType::UniqueIdentifier, |_| Value::Null)
        .opt("most_recent_sql_handle", SqlType::VarBinary(Len::N(64)), |r| r.a.handle_value())
        .rows(&connected_rows)
}

/// The session's network connection, if it has one.
pub(super) fn conn_of(r: &SessionRow) -> Option<&ConnectionInfo> {
    r.client.connection.as_ref()
}

fn address_of(a: Option<std::net::SocketAddr>) -> Value {
    a.map_or(Value::Null, |a| nstr(a.ip().to_string()))
}

fn port_of(a: Option<std::net::SocketAddr>) -> Value {
    a.map_or(Value::Null, |a| int(a.port().into()))
}

/// The `LCK_M_*` wait type of a request waiting for a lock, NULL otherwise.
fn wait_type_of(r: &RequestRow) -> Value {
    r.wait.as_ref().map_or(Value::Null, |w| nstr(lock_wait_type(w.mode.name())))
}

/// A running request, with the lock it waits for (if any) and who holds that lock.
struct RequestRow {
    session: SessionRow,
    wait: Option<LockInfo>,
    blocker: u16,
}

/// SQL Server's wait type for a lock request of `mode` (`sys.dm_os_wait_stats` too).
pub(super) fn lock_wait_type(mode: &str) -> &'static str {
    match mode {
        "IS" => "LCK_M_IS",
        "IX" => "LCK_M_IX",
        "S" => "LCK_M_S",
        "SIX" => "LCK_M_SIX",
        "U" => "LCK_M_U",
        "RangeS-S" => "LCK_M_RS_S",
        "RangeS-U" => "LCK_M_RS_U",
        "RangeI-N" => "LCK_M_RIn_NL",
        "RangeI-S" => "LCK_M_RIn_S",
        "RangeI-U" => "LCK_M_RIn_U",
        "RangeI-X" => "LCK_M_RIn_X",
        "RangeX-S" => "LCK_M_RX_S",
        "RangeX-U" => "LCK_M_RX_U",
        "RangeX-X" => "LCK_M_RX_X",
        _ => "LCK_M_X",
    }
}

/// The lock request session `spid` waits for (if any), and the session holding a lock that
/// keeps it waiting (0 if none), from a snapshot of the lock manager.
pub(super) fn lock_wait(locks: &[LockInfo], spid: u16) -> (Option<LockInfo>, u16) {
    let wait = locks
        .iter()
        .find(|l| l.status != LockStatus::Granted && owner_session(l.owner) == spid)
        .cloned();
    let blocker = wait.as_ref().map_or(0, |w| {
        locks
            .iter()
            .filter(|l| l.status == LockStatus::Granted && l.resource == w.resource)
            .filter(|l| l.owner != w.owner && !l.mode.compatible(w.mode))
            .map(|l| owner_session(l.owner))
            .next()
            .unwrap_or(0)
    });
    (wait, blocker)
}

/// `sys.dm_exec_requests`: one row per running batch. A request waiting for a lock is
/// `suspended`, with the wait type (`LCK_M_*`), how long it has waited, the resource, and
/// the session holding the lock (`blocking_session_id`, 0 if none).
/// `sys.dm_db_task_space_usage`: the tempdb pages each running task allocated. Walden does
/// not count a task's tempdb pages, so each running request's one task shows none; the rows
/// are there so that monitoring scripts (sp_WhoIsActive) joining them to the requests find
/// one per request.
pub(super) fn task_space_usage(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<SessionRow> = rows_of(ctx).into_iter().filter(SessionRow::running).collect();
    let view = View::<SessionRow>::new()
        .col("session_id", SqlType::SmallInt, |r| small(r.a.spid.into()))
        .col("request_id", SqlType::Int, |_| int(0))
        .col("exec_context_id", SqlType::Int, |_| int(0))
        .col("database_id", SqlType::SmallInt, |_| small(2));
    no_tempdb_pages(view).rows(&rows)
}

/// The tempdb page counters of the space-usage views, all 0: Walden does not count them.
fn no_tempdb_pages(view: View<SessionRow>) -> View<SessionRow> {
    let zero = |_: &SessionRow| big(0);
    view.col("user_objects_alloc_page_count", SqlType::BigInt, zero)
        .col("user_objects_dealloc_page_count", SqlType::BigInt, zero)
        .col("internal_objects_alloc_page_count", SqlType::BigInt, zero)
        .col("internal_objects_dealloc_page_count", SqlType::BigInt, zero)
        .col("user_objects_deferred_dealloc_page_count", SqlType::BigInt, zero)
}

/// `sys.dm_db_session_space_usage`: the tempdb pages each session allocated, as
/// [`task_space_usage`] counts them (none), one row per session.
pub(super) fn session_space_usage(ctx: &ViewContext<'_>) -> RowSet {
    let view = View::<SessionRow>::new()
        .col("session_id", SqlType::SmallInt, |r| small(r.a.spid.into()))
        .col("database_id", SqlType::SmallInt, |_| small(2));
    no_tempdb_pages(view).rows(&rows_of(ctx))
}

pub(super) fn exec_requests(ctx: &ViewContext<'_>) -> RowSet {
    let locks = ctx.instance.locks().snapshot();
    let rows: Vec<RequestRow> = rows_of(ctx)
        .into_iter()
        .filter(SessionRow::running)
        .map(|session| {
            let (wait, blocker) = lock_wait(&locks, session.a.spid);
            RequestRow { session, wait, blocker }
        })
        .collect();
    View::<RequestRow>::new()
        .col("session_id", SqlType::SmallInt, |r| small(r.session.a.spid.into()))
        .col("request_id", SqlType::Int, |_| int(0))
        .col("start_time", SqlType::DateTime, |r| datetime(r.session.a.request_start_micros()))
        .col("status", SqlType::NVarChar(Len::N(30)), |r| {
            nstr(if r.wait.is_some() { "suspended" } else { "running" })
        })
        .col("command", SqlType::NVarChar(Len::N(32)), |r| nstr(r.session.a.command_name()))
        .opt("sql_handle", SqlType::VarBinary(Len::N(64)), |r| r.session.a.request_handle_value())
        .opt("statement_start_offset", SqlType::Int, |_| Value::Null)
        .opt("statement_end_offset", SqlType::Int, |_| Value::Null)
        .opt("plan_handle", SqlType::VarBinary(Len::N(64)), |_| Value::Null)
        .col("database_id", SqlType::SmallInt, |r| {
            small(r.session.a.database_id.load(Ordering::Relaxed).into())
        })
        .col("user_id", SqlType::Int, |_| int(1))
        .opt("connection_id", SqlType::UniqueIdentifier, |_| Value::Null)
        .opt("blocking_session_id", SqlType::SmallInt, |r| small(r.blocker.into()))
        .opt("wait_type", DESC, wait_type_of)
        .col("wait_time", SqlType::Int, |r| {
            int(r.wait.as_ref().map_or(0, |w| w.waited.as_millis() as i64))
        })
        .opt("last_wait_type", DESC, wait_type_of)
        .col("wait_resource", SqlType::NVarChar(Len::N(256)), |r| {
            nstr(r.wait.as_ref().map_or_else(String::new, wait_resource))
        })
        .col("open_transaction_count", SqlType::Int, |r| {
            int(r.session.a.open_transactions.load(Ordering::Relaxed).into())
        })
        .col("open_resultset_count", SqlType::Int, |_| int(1))
        .col("transaction_id", SqlType::BigInt, |_| big(0))
        .opt("context_info", SqlType::VarBinary(Len::N(128)), |_| Value::Null)
        .col("percent_complete", SqlType::Real, |_| Value::Real(0.0))
        .col("estimated_completion_time", SqlType::BigInt, |_| big(0))
        // Counters Walden does not keep per request (CPU, I/O, memory) are 0, as SQL Server
        // shows them for a request that has used none.
        .col("cpu_time", SqlType::Int, |_| int(0))
        .col("total_elapsed_time", SqlType::Int, |r| {
            int((r.session.now.saturating_sub(r.session.a.request_start_micros()) / 1000) as i64)
        })
        .opt("scheduler_id", SqlType::Int, |_| int(0))
        .opt("task_address", SqlType::VarBinary(Len::N(8)), |_| Value::Null)
        .col("reads", SqlType::BigInt, |_| big(0))
        .col("writes", SqlType::BigInt, |_| big(0))
        .col("logical_reads", SqlType::BigInt, |_| big(0))
        // The session's SET options, as for `sys.dm_exec_sessions`.
        .col("text_size", SqlType::Int, |r| {
            int(r.session.a.text_size.load(Ordering::Relaxed).min(i64::from(i32::MAX)))
        })
        .opt("language", SqlType::NVarChar(Len::N(128)), |r| nstr(r.session.a.options().language))
        .opt("date_format", SqlType::NVarChar(Len::N(3)), |r| {
            nstr(r.session.a.options().date_format)
        })
        .col("date_first", SqlType::SmallInt, |r| small(r.session.a.options().date_first.into()))
        .col("quoted_identifier", SqlType::Bit, |r| option_bit(&r.session, 256))
        .col("arithabort", SqlType::Bit, |r| option_bit(&r.session, 64))
        .col("ansi_null_dflt_on", SqlType::Bit, |r| option_bit(&r.session, 1024))
        .col("ansi_defaults", SqlType::Bit, |r| Value::Bit(r.session.a.options().ansi_defaults))
        .col("ansi_warnings", SqlType::Bit, |r| option_bit(&r.session, 8))
        .col("ansi_padding", SqlType::Bit, |r| option_bit(&r.session, 16))
        .col("ansi_nulls", SqlType::Bit, |r| option_bit(&r.session, 32))
        .col("concat_null_yields_null", SqlType::Bit, |r| option_bit(&r.session, 4096))
        .col("transaction_isolation_level", SqlType::SmallInt, |r| {
            small(r.session.a.isolation.load(Ordering::Relaxed).into())
        })
        .col("lock_timeout", SqlType::Int, |r| {
            int(r.session.a.lock_timeout_ms.load(Ordering::Relaxed))
        })
        .col("deadlock_priority", SqlType::Int, |_| int(0))
        .col("row_count", SqlType::BigInt, |r| big(r.session.a.row_count.load(Ordering::Relaxed)))
        .col("prev_error", SqlType::Int, |_| int(0))
        .col("nest_level", SqlType::Int, |_| int(1))
        .col("granted_query_memory", SqlType::Int, |_| int(0))
        .col("executing_managed_code", SqlType::Bit, |_| Value::Bit(false))
        .col("group_id", SqlType::Int, |_| int(2))
        .opt("query_hash", SqlType::Binary(8), |_| Value::Null)
        .opt("query_plan_hash", SqlType::Binary(8), |_| Value::Null)
        .opt("statement_sql_handle", SqlType::VarBinary(Len::N(64)), |_| Value::Null)
        .opt("statement_context_id", SqlType::BigInt, |_| Value::Null)
        .col("dop", SqlType::Int, |_| int(1))
        .opt("parallel_worker_count", SqlType::Int, |_| Value::Null)
        .opt("external_script_request_id", SqlType::UniqueIdentifier, |_| Value::Null)
        .col("is_resumable", SqlType::Bit, |_| Value::Bit(false))
        .opt("page_resource", SqlType::Binary(8), |_| Value::Null)
        .col("page_server_reads", SqlType::BigInt, |_| big(0))
        .rows(&rows)
}

/// A lock wait's `wait_resource`: the resource type, the database, the table and a key's hash.
pub(super) fn wait_resource(w: &LockInfo) -> String {
    format!("{}: {} {}", w.resource.type_name(), w.resource.database(), resource_detail(w))
}

/// The part of `wait_resource` after the database: the table, and a key's hash.
fn resource_detail(w: &LockInfo) -> String {
    use walden_engine::lock::Resource;
    match w.resource {
        Resource::Object { object, .. } => object.to_string(),
        Resource::Key { object, hash, .. } => {
            format!("{object} ({:012x})", hash & 0xffff_ffff_ffff)
        }
        _ => String::new(),
    }
}

/// `sys.dm_exec_sql_text(handle)`: the text a `sql_handle` names: a module's definition, a
/// text `sys.dm_exec_query_stats` counts statements of, or a session's running or last
/// batch (SQL Server keeps texts as long as their plans are cached). No row for NULL or a
/// handle of anything else.
pub(super) fn exec_sql_text(ctx: &ViewContext<'_>, args: &[Value]) -> Result<RowSet, SqlError> {
    // (database id, object id: both for a module's handle) and the text.
    type Text = (Option<(u32, u32)>, Arc<str>);
    let text: Option<Text> = match args.first() {
        Some(Value::Binary(handle)) => match parse_module_handle(unpadded(handle)) {
            Some((db, object)) => ctx
                .instance
                .database_by_id(i64::from(db))
                .and_then(|d| d.object_by_id(object))
                .and_then(|o| o.module_text().map(Arc::from))
                .map(|text| (Some((db, object)), text)),
            None => parse_text_handle(unpadded(handle)).and_then(|hash| {
                let text = ctx.counters.query_stats.text(&hash).or_else(|| {
                    rows_of(ctx).into_iter().find_map(|r| {
                        let (number, text, of) = r.a.batch();
                        (number != 0 && of == hash).then_some(text)
                    })
                })?;
                Some((None, text))
            }),
        },
        _ => None,
    };
    Ok(View::<Text>::new()
        .col("dbid", SqlType::SmallInt, |(m, _)| {
            m.map_or(Value::Null, |(db, _)| Value::SmallInt(db as i16))
        })
        .col("objectid", SqlType::Int, |(m, _)| {
            m.map_or(Value::Null, |(_, object)| Value::Int(object as i32))
        })
        .col("number", SqlType::SmallInt, |(m, _)| m.map_or(Value::Null, |_| Value::SmallInt(1)))
        .col("encrypted", SqlType::Bit, |_| Value::Bit(false))
        .col("text", SqlType::NVarChar(Len::Max), |(_, t)| nstr(&**t))
        .rows(&text.into_iter().collect::<Vec<_>>()))
}

/// `sys.dm_exec_input_buffer(session_id, request_id)`: the last batch a session sent, as
/// `DBCC INPUTBUFFER` shows it. No row for a session that does not exist.
pub(super) fn exec_input_buffer(ctx: &ViewContext<'_>, args: &[Value]) -> Result<RowSet, SqlError> {
    let spid = int_arg(&args[0])?.and_then(|n| u16::try_from(n).ok());
    let text = spid
        .and_then(|spid| rows_of(ctx).into_iter().find(|r| r.a.spid == spid))
        .map(|r| r.a.batch().1);
    Ok(input_buffer_rows(text, "event_type", "parameters", "event_info"))
}

/// The input-buffer row of a session's last batch under the given column names (those of
/// `sys.dm_exec_input_buffer`, or `DBCC INPUTBUFFER`'s `EventType`, `Parameters`,
/// `EventInfo`).
pub(crate) fn input_buffer_rows(
    text: Option<Arc<str>>,
    event_type: &'static str,
    parameters: &'static str,
    event_info: &'static str,
) -> RowSet {
    View::<Arc<str>>::new()
        .col(event_type, SqlType::NVarChar(Len::N(30)), |_| nstr("Language Event"))
        .col(parameters, SqlType::SmallInt, |_| small(0))
        .col(event_info, SqlType::NVarChar(Len::Max), |t| nstr(&**t))
        .rows(&text.into_iter().collect::<Vec<_>>())
}
