//! One client connection: PRELOGIN, LOGIN7, then requests until the client leaves. The
//! connection is a state machine driven one complete message at a time: between messages it
//! waits in the poller (`poller.rs`) with no thread of its own, and each message runs on a
//! worker (`workers.rs`). The session is closed (its transaction rolled back) however the
//! connection ends, when it is dropped.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Instant;

use walden_sql::exec::sysviews::{ClientInfo, ConnectionInfo};
use walden_sql::exec::{Collected, Session};
use walden_tds::packet::negotiate_packet_size;
use walden_tds::{
    encode_tokens_for, Collation, Done, DoneStatus, Encryption, EnvChange, FeatureExt,
    IsolationLevel, Login7, LoginAck, Message, MessageReader, PacketStatus, PacketType,
    PacketWriter, Prelogin, PreloginVersion, ReturnValue, ReturnValueStatus, RpcRequest,
    ServerMessage, SqlBatch, TdsVersion, Token, TransMgrKind, TransMgrRequest,
};

use super::bulk;
use super::convert::to_wire;
use super::cursor_rpc;
use super::output::{Mode, PacketSink, TdsOutput, SERVER_NAME};
use super::rpc;
use super::tls::{AttentionProbe, SharedTransport};
use super::Shared;

/// The product version announced in PRELOGIN and LOGINACK (the one `SERVERPROPERTY` reports).
const VERSION_MAJOR: u8 = walden_sql::exec::PRODUCT_VERSION.0;
const VERSION_MINOR: u8 = walden_sql::exec::PRODUCT_VERSION.1;
const VERSION_BUILD: u16 = walden_sql::exec::PRODUCT_VERSION.2;

const LANGUAGE: &str = "us_english";

/// The largest message accepted before the login succeeds: a LOGIN7 record is a few KiB, so
/// an unauthenticated client cannot make the server buffer the 64 MiB a request may have.
const LOGIN_MAX_MESSAGE: usize = 1 << 20;

/// How long a worker waits for a connection's next message before parking it (see
/// `Connection::linger`): longer than a client's turnaround between requests even on a busy
/// machine (1 ms was not: seed 001 at 16 clients lost a sixth of its throughput on a loaded
/// machine), short enough that a worker is not held long for a connection gone quiet.
const LINGER: std::time::Duration = std::time::Duration::from_millis(5);

/// How much one read takes from the socket. The reader asks for the next message after each
/// read, so a message larger than its limit is refused before more of it is buffered.
const READ_CHUNK: usize = 16 * 1024;

fn invalid(e: walden_tds::TdsError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

fn message_token(number: i32, class: u8, message: String) -> ServerMessage {
    ServerMessage {
        number,
        state: 1,
        class,
        message,
        server: SERVER_NAME.to_string(),
        procedure: String::new(),
        line: 1,
    }
}

/// Where a connection is in its life.
enum Phase {
    /// Waiting for the client's PRELOGIN.
    Prelogin,
    /// PRELOGIN answered (and TLS set up if agreed); waiting for LOGIN7.
    Login {
        tls: Option<TlsScope>,
        /// The client requires encryption and TLS is off: it will leave, or start a TLS
        /// handshake anyway, and the log should say why.
        refused: bool,
    },
    /// Logged in: every message is a request of the session.
    Ready(Box<Session>),
}

/// What the poller does with a connection after a worker has run its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Wait for the client's next message.
    Park,
    /// The connection is over (the client left, broke the protocol, or the session ended).
    Close,
}

/// A client connection, wherever it waits or runs. Dropping it closes its session and
/// forgets it everywhere the server keeps track of it.
pub struct Connection {
    id: u64,
    peer: String,
    /// The socket, as registered with the poller.
    tcp: Arc<TcpStream>,
    conn: Conn,
    phase: Phase,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("id", &self.id).field("peer", &self.peer).finish()
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.conn.shared.forget(self.id, &self.tcp);
    }
}

struct Conn {
    /// TCP, or TLS when the login negotiated it.
    stream: SharedTransport,
    reader: MessageReader,
    writer: PacketWriter,
    shared: Arc<Shared>,
    /// The database LOGIN7 asked for, restored by RESETCONNECTION.
    login_database: String,
    /// Who LOGIN7 said the client is, for `sys.dm_exec_sessions`; kept across
    /// RESETCONNECTION.
    client: ClientInfo,
    /// The descriptor of the open transaction (ENVCHANGE 8..10), 0 when none.
    descriptor: u64,
    next_descriptor: u64,
    /// The statements sp_prepare and sp_prepexec prepared, by handle.
    prepared: rpc::Prepared,
    /// The API server cursors the client opened (`sp_cursoropen`...).
    api_cursors: cursor_rpc::ApiCursors,
    /// The session's cancel signal: notices an attention sent during a request. Set up
    /// once the client has logged in.
    attention: Option<Arc<AttentionProbe>>,
    /// The connection's slot under `max_connections`, from LOGIN7 until it ends.
    slot: Option<super::SlotGuard>,
    /// The TDS revision the client logged in with (7.4 until LOGIN7 says).
    version: TdsVersion,
}

impl Connection {
    /// Connection `id` on `tcp` (non-blocking), accepted at `accepted`: its login must be over
    /// by `accepted` + the login timeout.
    pub fn new(tcp: Arc<TcpStream>, shared: Arc<Shared>, id: u64, accepted: Instant) -> Self {
        let (peer_addr, local_addr) = (tcp.peer_addr().ok(), tcp.local_addr().ok());
        let peer = peer_addr.map(|a| a.to_string()).unwrap_or_default();
        let stream = SharedTransport::new(Arc::clone(&tcp));
        // Whatever the login waits for on a worker (the TLS handshake, a slow write) gives
        // up at the login's deadline; the poller closes a connection idle past it.
        stream.set_deadline(Some(accepted + shared.login_timeout));
        let mut reader = MessageReader::new();
        reader.set_max_message_size(LOGIN_MAX_MESSAGE);
        let conn = Conn {
            stream,
            reader,
            writer: PacketWriter::default(),
            shared,
            login_database: String::new(),
            client: ClientInfo {
                connection: Some(ConnectionInfo {
                    client: peer_addr,
                    local: local_addr,
                    socket: Some(Arc::downgrade(&tcp)),
                    ..ConnectionInfo::default()
                }),
                ..ClientInfo::default()
            },
            descriptor: 0,
            next_descriptor: 0,
            prepared: rpc::Prepared::default(),
            api_cursors: cursor_rpc::ApiCursors::default(),
            attention: None,
            slot: None,
            version: TdsVersion::V7_4,
        };
        Connection { id, peer, tcp, conn, phase: Phase::Prelogin }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// The socket, as registered with the poller.
    pub fn tcp(&self) -> &Arc<TcpStream> {
        &self.tcp
    }

    /// Reads whatever has arrived, without waiting; the next complete message if there is
    /// one. `UnexpectedEof` when the client has gone. Called by the poller when the socket is
    /// readable.
    pub fn fill(&mut self) -> io::Result<Option<Message>> {
        let mut buf = [0u8; READ_CHUNK];
        loop {
            if let Some(m) = self.conn.reader.next_message().map_err(invalid)? {
                if matches!(self.phase, Phase::Prelogin) {
                    // Marked here, on the poller, not when a worker gets to it: the pending
                    // cap spares such a connection from now on.
                    self.conn.shared.prelogin_received(self.id);
                }
                return Ok(Some(m));
            }
            match self.conn.stream.read_now(&mut buf) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.conn.reader.push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Runs `message`, then every complete message already received behind it. On a
    /// worker.
    pub fn run(&mut self, message: Message) -> Next {
        let mut message = message;
        loop {
            match self.handle(message) {
                Ok(Next::Park) => {}
                Ok(Next::Close) => return Next::Close,
                Err(e) => {
                    self.ended(&e);
                    return Next::Close;
                }
            }
            match self.received().and_then(|m| match m {
                Some(m) => Ok(Some(m)),
                None => self.linger(),
            }) {
                Ok(Some(next)) => message = next,
                Ok(None) => return Next::Park,
                Err(e) => {
                    self.ended(&e);
                    return Next::Close;
                }
            }
        }
    }

    /// Waits up to [`LINGER`] for the client's next message, on the worker. A client in a
    /// loop sends it within microseconds of reading the response; taking it here, where the
    /// kernel wakes this thread directly, saves the hand-over through the poller (an epoll
    /// wake-up, a queue and a worker wake-up), which cost a third of seed 001's delayed
    /// throughput at 5 clients. A message that is not whole by then is left to the poller.
    /// No lingering while other connections' messages wait for a worker.
    fn linger(&mut self) -> io::Result<Option<Message>> {
        // Other connections' messages are waiting for a worker: this one is needed there.
        if self.conn.shared.workers.queued() > 0 {
            return Ok(None);
        }
        if !walden_io::net::wait_readable(&*self.tcp, LINGER)? {
            return Ok(None);
        }
        self.fill()
    }

    /// A complete message already received behind the last one (pipelined, or decrypted by
    /// TLS), which no readiness event would announce. Input still in the socket needs no
    /// look: parking re-arms the poller's registration, which reports it.
    fn received(&mut self) -> io::Result<Option<Message>> {
        if let Some(m) = self.conn.reader.next_message().map_err(invalid)? {
            return Ok(Some(m));
        }
        if self.conn.stream.has_buffered_input() {
            return self.fill();
        }
        Ok(None)
    }

    /// Logs why the connection ended, when that is worth a line: a client that leaves
    /// between requests, or before it logged in (it left, or the pending cap or a timeout
    /// closed it, which the poller logs), is not, or a flood would flood the log.
    pub fn ended(&self, e: &io::Error) {
        let eof = e.kind() == io::ErrorKind::UnexpectedEof;
        match &self.phase {
            Phase::Login { refused: true, .. } => {
                log_line!(info, "connection {}: login: {}", self.peer, refusal())
            }
            Phase::Prelogin | Phase::Login { .. } if !eof => {
                log_line!(info, "connection {}: login: {e}", self.peer)
            }
            // A client that breaks the protocol or drops the connection: its problem.
            Phase::Ready(_) if !eof => log_line!(info, "connection {}: {e}", self.peer),
            _ => {}
        }
    }

    fn handle(&mut self, message: Message) -> io::Result<Next> {
        let Connection { conn, phase, id, .. } = self;
        match phase {
            // A TDS 7.0 client (FreeTDS's `TDSVER=7.0`) logs in without PRELOGIN, which SQL
            // Server accepts: without encryption, as nothing negotiated it.
            Phase::Prelogin if message.ty == PacketType::Login7 => {
                *phase = Phase::Login { tls: None, refused: false };
                self.handle(message)
            }
            Phase::Prelogin => {
                let (tls, refused) = conn.prelogin(&message)?;
                *phase = Phase::Login { tls, refused };
                Ok(Next::Park)
            }
            Phase::Login { tls, refused } => {
                if message.ty != PacketType::Login7 {
                    if *refused {
                        return Err(refusal());
                    }
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "expected LOGIN7"));
                }
                let login = conn.login7(&message, *tls);
                // Logged in, refused or failed: the connection no longer counts as pending.
                conn.shared.login_done(*id);
                let Some(mut session) = login? else { return Ok(Next::Close) };
                conn.start_requests(&mut session);
                *phase = Phase::Ready(Box::new(session));
                Ok(Next::Park)
            }
            Phase::Ready(session) => conn.request(session, message),
        }
    }
}

fn refusal() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "the client requires encryption, but TLS is off (start walden serve with --tls \
         self-signed or --tls-cert and --tls-key)",
    )
}

impl Conn {
    /// The next message, waiting for it (a bulk load's rows); `UnexpectedEof` when the client
    /// has gone.
    fn read(&mut self) -> io::Result<Message> {
        let mut buf = [0u8; READ_CHUNK];
        loop {
            if let Some(m) = self.reader.next_message().map_err(invalid)? {
                return Ok(m);
            }
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.reader.push(&buf[..n]);
        }
    }

    fn send(&mut self, payload: &[u8]) -> io::Result<()> {
        let mut out = Vec::new();
        self.writer.write_message(PacketType::TabularResult, PacketStatus::NONE, payload, &mut out);
        self.stream.write_all(&out)?;
        self.stream.flush()
    }

    fn send_tokens(&mut self, tokens: &[Token]) -> io::Result<()> {
        let payload = encode_tokens_for(tokens, self.version).map_err(invalid)?;
        self.send(&payload)
    }

    /// Refuses the login with `errors` and a DONE_ERROR.
    fn refuse(&mut self, errors: Vec<ServerMessage>) -> io::Result<Option<Session>> {
        let mut tokens: Vec<Token> = errors.into_iter().map(Token::Error).collect();
        tokens.push(Token::Done(Done { status: DoneStatus::ERROR, cur_cmd: 0, row_count: 0 }));
        self.send_tokens(&tokens)?;
        Ok(None)
    }

    /// Answers the client's PRELOGIN and runs the TLS handshake if one was agreed. Returns
    /// what TLS covers and whether the client requires an encryption the server lacks.
    fn prelogin(&mut self, first: &Message) -> io::Result<(Option<TlsScope>, bool)> {
        if first.ty != PacketType::PreLogin {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "expected PRELOGIN"));
        }
        let client = Prelogin::decode(&first.payload).map_err(invalid)?;
        let (encryption, tls) = negotiate_encryption(client.encryption, self.shared.tls.is_some());
        let answer = Prelogin {
            version: PreloginVersion {
                major: VERSION_MAJOR,
                minor: VERSION_MINOR,
                build: VERSION_BUILD,
                sub_build: 0,
            },
            encryption: Some(encryption),
            instance: Some(vec![0]),
            thread_id: None,
            mars: Some(false),
            ..Prelogin::default()
        };
        self.send(&answer.encode().map_err(invalid)?)?;
        if let (Some(setup), Some(_)) = (&self.shared.tls, tls) {
            if self.reader.buffered() > 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the client sent more than its PRELOGIN before the TLS handshake",
                ));
            }
            self.stream.start_tls(Arc::clone(&setup.config))?;
        }
        // Such a client either closes the connection or starts a TLS handshake anyway.
        let refused = self.shared.tls.is_none()
            && matches!(client.encryption, Some(Encryption::On | Encryption::Required));
        Ok((tls, refused))
    }

    /// LOGIN7: the session, or `None` when the login was refused (and the client told why).
    fn login7(&mut self, message: &Message, tls: Option<TlsScope>) -> io::Result<Option<Session>> {
        // ENCRYPT_OFF: only the LOGIN7 message was encrypted; the rest travels in the clear.
        if tls == Some(TlsScope::Login) {
            self.stream.downgrade()?;
        }
        let login = Login7::decode(&message.payload).map_err(invalid)?;
        // SQL Server answers a 7.x client in its own revision, and a newer one in 7.4.
        self.version = TdsVersion::from_login(login.tds_version).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("LOGIN7 asks for TDS version {:#010x}, before 7.0", login.tds_version),
            )
        })?;
        self.slot = self.shared.take_slot();
        if self.slot.is_none() {
            let max = self.shared.max_connections;
            return self.refuse(vec![message_token(
                17809,
                20,
                format!(
                    "Could not connect because the maximum number of '{max}' user connections \
                     has already been reached."
                ),
            )]);
        }
        let authenticated = !login.integrated_security()
            && login.username.eq_ignore_ascii_case("sa")
            && login.password == self.shared.sa_password;
        if !authenticated {
            log_line!(warn, "Login failed for user '{}'.", login.username);
            return self.refuse(vec![message_token(
                18456,
                14,
                format!("Login failed for user '{}'.", login.username),
            )]);
        }

        let mut session = Session::with_counters(
            Arc::clone(&self.shared.instance),
            Arc::clone(&self.shared.counters),
        );
        if let Some(error) = use_database(&mut session, &login.database) {
            session.close();
            return self.refuse(vec![
                message_token(
                    4060,
                    11,
                    format!(
                        "Cannot open database \"{}\" requested by the login. The login \
                         failed. ({error})",
                        login.database
                    ),
                ),
                message_token(18456, 14, format!("Login failed for user '{}'.", login.username)),
            ]);
        }
        self.login_database = login.database.clone();
        let packet_size = negotiate_packet_size(login.packet_size);
        let connection = self.client.connection.take().map(|c| ConnectionInfo {
            encrypted: tls == Some(TlsScope::All),
            packet_size: u32::try_from(packet_size).unwrap_or(u32::MAX),
            protocol_version: self.version.login_ack(),
            ..c
        });
        self.client = ClientInfo {
            login: login.username.clone(),
            host: login.hostname.clone(),
            program: login.app_name.clone(),
            interface: login.library_name.clone(),
            process_id: Some(login.client_pid),
            connection,
        };
        session.set_client(self.client.clone());

        let database = session.current_database().to_string();
        let tokens = [
            Token::EnvChange(EnvChange::Database { new: database.clone(), old: "master".into() }),
            Token::Info(message_token(
                5701,
                0,
                format!("Changed database context to '{database}'."),
            )),
            Token::EnvChange(EnvChange::SqlCollation {
                new: Some(Collation::SQL_LATIN1_GENERAL_CP1_CI_AS),
                old: None,
            }),
            Token::EnvChange(EnvChange::Language { new: LANGUAGE.into(), old: String::new() }),
            Token::Info(message_token(5703, 0, format!("Changed language setting to {LANGUAGE}."))),
            Token::LoginAck(LoginAck {
                interface: 1,
                tds_version: self.version.login_ack(),
                prog_name: "Walden".into(),
                major: VERSION_MAJOR,
                minor: VERSION_MINOR,
                build: VERSION_BUILD,
            }),
            // UTF8_SUPPORT is acknowledged (1: the server sends VARCHAR data of a `_UTF8`
            // collation as UTF-8, which the column's collation says), and only when asked:
            // a client MUST drop a connection that acknowledges a feature it did not ask for.
            Token::FeatureExtAck(
                login
                    .features
                    .iter()
                    .filter(|f| f.id == FeatureExt::UTF8_SUPPORT)
                    .take(1)
                    .map(|f| (f.id, vec![1]))
                    .collect(),
            ),
            Token::EnvChange(EnvChange::PacketSize {
                // packet_size <= 32767.
                new: packet_size as u32,
                old: walden_tds::packet::DEFAULT_PACKET_SIZE as u32,
            }),
            Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 }),
        ];
        // No FEATUREEXTACK without a feature to acknowledge.
        let tokens: Vec<Token> = tokens
            .into_iter()
            .filter(|t| !matches!(t, Token::FeatureExtAck(f) if f.is_empty()))
            .collect();
        self.writer = PacketWriter::new(packet_size, session.id()).map_err(invalid)?;
        self.send_tokens(&tokens)?;
        self.reader.set_packet_size(packet_size).map_err(invalid)?;
        Ok(Some(session))
    }

    /// Sets the logged-in session up for requests: its cancel signal and KILL's action.
    fn start_requests(&mut self, session: &mut Session) {
        let attention = Arc::new(AttentionProbe::new(&self.stream));
        session.set_cancel(attention.clone());
        // KILL closes the connection: a session waiting for its client's next request wakes
        // to a closed socket (the poller sees it), ends, and rolls its transaction back.
        let socket = self.stream.tcp();
        session.set_on_kill(Box::new(move || {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }));
        self.attention = Some(attention);
        // A bulk load's rows are read as they arrive, however many there are (`bulk`).
        self.reader.set_streamed(Some(PacketType::BulkLoad));
        self.reader.set_max_message_size(walden_tds::packet::DEFAULT_MAX_MESSAGE_SIZE);
        // Requests have no deadline: a bulk load waits for its rows, a response for the
        // client to read it, as long as the connection is up.
        self.stream.set_deadline(None);
    }

    /// Runs one request and sends its response.
    fn request(&mut self, session: &mut Session, message: Message) -> io::Result<Next> {
        let Some(attention) = self.attention.clone() else {
            return Err(io::Error::other("a request before the session was set up"));
        };
        // One buffer for the response: it ends with a flush, so nothing is left in it after.
        let mut transport = io::BufWriter::new(self.stream.clone());
        // Input already buffered behind the request can only be an attention.
        attention.begin(self.reader.buffered() > 0 || self.stream.has_buffered_input());
        let sink = PacketSink::new(&mut transport, self.writer.packet_size(), session.id())
            .hardening(session.deferred_commits());
        let mut out = TdsOutput::new(sink, Mode::Batch).speaking(self.version);
        if message.ignored() {
            // The client abandoned the request while sending it (IGNORE, [MS-TDS]
            // 2.2.3.1.2): nothing runs, not even its RESETCONNECTION, and the answer is
            // the one an attention gets, a DONE with DONE_ATTN, which the client reads as
            // the end of the cancelled request (tedious waits for it).
            out.end_batch(DoneStatus::ATTN);
            attention.end();
            out.finish()?;
            return Ok(Next::Park);
        }
        if message.reset_connection() {
            self.reset(session, message.reset_keeps_transaction(), &mut out);
            out.token(&Token::EnvChange(EnvChange::ResetConnectionAck));
        }
        match message.ty {
            PacketType::SqlBatch => match SqlBatch::decode_for(&message.payload, self.version) {
                Ok(batch) => self.batch(session, &batch.text, &mut out),
                Err(e) => protocol_error(&mut out, &e.to_string()),
            },
            PacketType::Rpc => match RpcRequest::decode_for(&message.payload, self.version) {
                Ok(request) => self.rpc(session, &request, &mut out),
                Err(e) => protocol_error(&mut out, &e.to_string()),
            },
            PacketType::TransMgr => match TransMgrRequest::decode(&message.payload) {
                Ok(request) => self.trans_mgr(session, request.kind, &mut out),
                Err(e) => protocol_error(&mut out, &e.to_string()),
            },
            PacketType::BulkLoad => {
                // The rest of the message is still arriving: input is no attention until its
                // last packet is in.
                attention.begin(false);
                attention.end();
                let trancount = session.transaction_count();
                let all_read = || attention.begin(false);
                let cancelled =
                    bulk::load(session, message, &mut || self.read(), &all_read, &mut out)?;
                // A failed load under XACT_ABORT (or a deadlock) ends the transaction.
                if trancount > 0 && session.transaction_count() == 0 {
                    self.end_descriptor(&mut out, true);
                }
                let status = if cancelled { DoneStatus::ATTN } else { DoneStatus::NONE };
                out.end_batch(status);
            }
            // The attention that cancelled the previous request (whose response ended
            // normally, with EOM), or one that came after it had finished anyway: this
            // DONE_ATTN is the acknowledgement the client reads up to ([MS-TDS] 2.2.1.7).
            PacketType::Attention => out.end_batch(DoneStatus::ATTN),
            other => protocol_error(&mut out, &format!("unsupported request {other:?}")),
        }
        attention.end();
        out.finish()?;
        // A severity 20+ error or a KILL ended the session: close the connection, as SQL
        // Server does.
        if session.terminated() || session.killed() {
            return Ok(Next::Close);
        }
        Ok(Next::Park)
    }

    /// RESETCONNECTION (or the `sp_reset_connection` RPC): the session as new (same id), in
    /// the login's database. The transaction it rolls back is reported with the rollback
    /// ENVCHANGE, and a change of database with its ENVCHANGE, as the client must forget
    /// both. `keep_transaction` (RESETCONNECTIONSKIPTRAN) leaves an open transaction open.
    fn reset<W: Write>(
        &mut self,
        session: &mut Session,
        keep_transaction: bool,
        out: &mut TdsOutput<W>,
    ) {
        let database = session.current_database().to_string();
        if keep_transaction {
            session.reset_keeping_transaction();
        } else {
            session.reset();
            if self.descriptor != 0 {
                self.end_descriptor(out, true);
            }
        }
        if let Some(attention) = &self.attention {
            session.set_cancel(attention.clone());
        }
        self.prepared.clear();
        self.api_cursors.clear();
        let login_database = self.login_database.clone();
        if let Some(e) = use_database(session, &login_database) {
            // The client's mistake (its login database is gone, say), which the client is told
            // about on its next request: information for the operator, not an error.
            log_line!(info, "RESETCONNECTION: {e}");
        }
        if session.current_database() != database {
            out.token(&Token::EnvChange(EnvChange::Database {
                new: session.current_database().to_string(),
                old: database,
            }));
        }
    }

    /// Runs a request (`work`: a batch, a call), then reports the database and transaction
    /// changes it made.
    fn run<W: Write, T>(
        &mut self,
        session: &mut Session,
        out: &mut TdsOutput<W>,
        work: impl FnOnce(&mut Session, &mut TdsOutput<W>) -> T,
    ) -> T {
        let database = session.current_database().to_string();
        let trancount = session.transaction_count();
        let result = work(session, out);
        if session.current_database() != database {
            out.token_before_done(&Token::EnvChange(EnvChange::Database {
                new: session.current_database().to_string(),
                old: database,
            }));
        }
        let now = session.transaction_count();
        if trancount == 0 && now > 0 {
            self.begin_descriptor(out);
        } else if trancount > 0 && now == 0 {
            let rolled_back = session.last_transaction_committed() != Some(true);
            self.end_descriptor(out, rolled_back);
        }
        result
    }

    /// Runs the batch `text` as [`run`](Self::run) runs a request.
    fn run_text<W: Write>(&mut self, session: &mut Session, text: &str, out: &mut TdsOutput<W>) {
        self.run(session, out, |session, out| session.execute_batch(text, out));
    }

    fn begin_descriptor<W: Write>(&mut self, out: &mut TdsOutput<W>) {
        self.next_descriptor += 1;
        self.descriptor = self.next_descriptor;
        out.token_before_done(&Token::EnvChange(EnvChange::BeginTransaction {
            descriptor: self.descriptor,
        }));
    }

    fn end_descriptor<W: Write>(&mut self, out: &mut TdsOutput<W>, rolled_back: bool) {
        let descriptor = std::mem::take(&mut self.descriptor);
        let change = if rolled_back {
            EnvChange::RollbackTransaction { descriptor }
        } else {
            EnvChange::CommitTransaction { descriptor }
        };
        out.token_before_done(&Token::EnvChange(change));
    }

    fn batch<W: Write>(&mut self, session: &mut Session, text: &str, out: &mut TdsOutput<W>) {
        self.run_text(session, text, out);
        out.end_batch(DoneStatus::NONE);
    }

    fn rpc<W: Write>(
        &mut self,
        session: &mut Session,
        request: &RpcRequest,
        out: &mut TdsOutput<W>,
    ) {
        let count = request.calls.len();
        // The calls' autocommit transactions share log flushes: none waits for its own, and
        // the sink hardens them all before the response (which reports them) leaves.
        session.set_defer_commits(count > 1);
        for (index, call) in request.calls.iter().enumerate() {
            out.set_mode(Mode::Rpc);
            out.any_error = false;
            if rpc::is_reset_connection(&call.proc) {
                self.reset_rpc(session, call, more(index, count), out);
                continue;
            }
            if let Some(id) = cursor_rpc::cursor_proc(&call.proc) {
                // Taken out while the call runs, which may run text through `self.run`.
                let mut cursors = std::mem::take(&mut self.api_cursors);
                let more = more(index, count);
                let mut run = |s: &mut Session, work, o: &mut TdsOutput<W>| match work {
                    cursor_rpc::CursorWork::Text(text) => self.run_text(s, &text, o),
                    cursor_rpc::CursorWork::Bound { shown, target, arguments } => {
                        self.run(s, o, |s, o| s.execute_call(&shown, &target, arguments, o));
                    }
                };
                cursor_rpc::call(&mut cursors, session, id, call, more, out, &mut run);
                self.api_cursors = cursors;
                continue;
            }
            let plan = match rpc::plan(call, &mut self.prepared) {
                Ok(plan) => plan,
                Err(e) => {
                    out.token(&Token::Error(e.to_message()));
                    out.any_error = true;
                    let _ = out.end_statements();
                    out.token(&Token::DoneProc(Done {
                        status: DoneStatus::ERROR | more(index, count),
                        cur_cmd: 0,
                        row_count: 0,
                    }));
                    continue;
                }
            };
            let outcome = match plan.work {
                rpc::Work::Nothing => None,
                rpc::Work::Describe(text) => {
                    self.run_text(session, &text, out);
                    session.execute_batch("SET FMTONLY OFF", &mut Collected::default());
                    None
                }
                rpc::Work::Call { shown, target, arguments } => {
                    self.run(session, out, |s, out| s.execute_call(&shown, &target, arguments, out))
                }
            };
            let failed = out.end_statements();
            // A call an error ended returns no status, and NULL for its OUTPUT parameters.
            let (status, values) = outcome.map_or((0, Vec::new()), |o| (o.status, o.outputs));
            let mut values = values.into_iter();
            out.token(&Token::ReturnStatus(status));
            // Parameters come back in order: a prepared handle (parameter 0) first.
            let handle = plan
                .handle
                .as_ref()
                .map(|(param, h)| (param, walden_engine::types::Value::Int(*h)));
            let outputs = plan
                .outputs
                .iter()
                .map(|param| (param, values.next().unwrap_or(walden_engine::types::Value::Null)));
            for (param, value) in handle.into_iter().chain(outputs) {
                let value = match to_wire(param.sql, &param.wire, value) {
                    Ok(v) => v,
                    Err(e) => {
                        out.token(&Token::Error(message_token(e.number, 16, e.message)));
                        walden_tds::TdsValue::Null
                    }
                };
                out.token(&Token::ReturnValue(ReturnValue {
                    ordinal: param.ordinal,
                    name: param.name.clone(),
                    status: ReturnValueStatus::OUTPUT_PARAM,
                    user_type: 0,
                    flags: walden_tds::ColumnFlags::NULLABLE,
                    ty: param.wire,
                    value,
                }));
            }
            let mut status = more(index, count);
            if failed {
                status |= DoneStatus::ERROR;
            }
            out.token(&Token::DoneProc(Done { status, cur_cmd: 0, row_count: 0 }));
        }
        session.set_defer_commits(false);
        if count == 0 {
            out.end_batch(DoneStatus::NONE);
        }
    }

    /// `sp_reset_connection` called as an RPC, as pytds' pool and others do between uses of
    /// a pooled connection: the reset RESETCONNECTION does, with a return status of 0.
    fn reset_rpc<W: Write>(
        &mut self,
        session: &mut Session,
        call: &walden_tds::RpcCall,
        more: DoneStatus,
        out: &mut TdsOutput<W>,
    ) {
        if !call.params.is_empty() {
            out.token(&Token::Error(message_token(
                8144,
                16,
                "Procedure or function sp_reset_connection has too many arguments specified."
                    .into(),
            )));
            out.token(&Token::DoneProc(Done {
                status: DoneStatus::ERROR | more,
                cur_cmd: 0,
                row_count: 0,
            }));
            return;
        }
        self.reset(session, false, out);
        out.token(&Token::ReturnStatus(0));
        out.token(&Token::DoneProc(Done { status: more, cur_cmd: 0, row_count: 0 }));
    }

    fn trans_mgr<W: Write>(
        &mut self,
        session: &mut Session,
        kind: TransMgrKind,
        out: &mut TdsOutput<W>,
    ) {
        let quote = |name: &str| format!("[{}]", name.replace(']', "]]"));
        let named = |verb: &str, name: &str| {
            if name.is_empty() {
                verb.to_string()
            } else {
                format!("{verb} {}", quote(name))
            }
        };
        let (text, then_begin) = match kind {
            TransMgrKind::Begin(t) => {
                set_isolation(session, t.isolation);
                (named("BEGIN TRAN", &t.name), None)
            }
            TransMgrKind::Commit { name, then_begin } => (named("COMMIT TRAN", &name), then_begin),
            TransMgrKind::Rollback { name, then_begin } => {
                (named("ROLLBACK TRAN", &name), then_begin)
            }
            TransMgrKind::Save { name } => (named("SAVE TRAN", &name), None),
            TransMgrKind::Unsupported { request_type, .. } => {
                protocol_error(
                    out,
                    &format!(
                        "distributed transactions (request type {request_type}) are not supported"
                    ),
                );
                return;
            }
        };
        self.run_text(session, &text, out);
        if let Some(t) = then_begin {
            set_isolation(session, t.isolation);
            self.run_text(session, &named("BEGIN TRAN", &t.name), out);
        }
        out.end_batch(DoneStatus::NONE);
    }
}

/// How much of the connection TLS protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TlsScope {
    /// Only the LOGIN7 message (the client said ENCRYPT_OFF).
    Login,
    /// Everything after the handshake.
    All,
}

/// The PRELOGIN answer to the client's ENCRYPTION option, and what TLS then covers, as SQL
/// Server negotiates when it has a certificate but does not force encryption: the client's
/// OFF gets OFF (login-only encryption), ON or REQ gets ON, and NOT_SUP gets NOT_SUP and no
/// TLS. A client that leaves the option out is taken as NOT_SUP. Without TLS the answer is
/// always NOT_SUP, and a client that requires encryption ends the connection itself.
fn negotiate_encryption(
    client: Option<Encryption>,
    tls_available: bool,
) -> (Encryption, Option<TlsScope>) {
    if !tls_available {
        return (Encryption::NotSupported, None);
    }
    match client {
        Some(Encryption::Off) => (Encryption::Off, Some(TlsScope::Login)),
        Some(Encryption::On | Encryption::Required | Encryption::Other(_)) => {
            (Encryption::On, Some(TlsScope::All))
        }
        Some(Encryption::NotSupported) | None => (Encryption::NotSupported, None),
    }
}

fn more(index: usize, count: usize) -> DoneStatus {
    if index + 1 < count {
        DoneStatus::MORE
    } else {
        DoneStatus::NONE
    }
}

fn protocol_error<W: Write>(out: &mut TdsOutput<W>, what: &str) {
    out.token(&Token::Error(message_token(
        4002,
        16,
        format!("The incoming request is not supported: {what}"),
    )));
    out.any_error = true;
    out.end_batch(DoneStatus::ERROR);
}

/// Applies the isolation level a Transaction Manager BEGIN carries to the session, as SET
/// TRANSACTION ISOLATION LEVEL does ([MS-TDS] 2.2.6.9: it stays the session's); 0 keeps the
/// session's. The SET cannot fail and reports nothing, so the client sees only the BEGIN.
fn set_isolation(session: &mut Session, isolation: IsolationLevel) {
    let level = match isolation {
        IsolationLevel::NoChange => return,
        IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
        IsolationLevel::ReadCommitted => "READ COMMITTED",
        IsolationLevel::RepeatableRead => "REPEATABLE READ",
        IsolationLevel::Serializable => "SERIALIZABLE",
        IsolationLevel::Snapshot => "SNAPSHOT",
    };
    let mut collected = Collected::default();
    session.execute_batch(&format!("SET TRANSACTION ISOLATION LEVEL {level}"), &mut collected);
    for e in collected.errors() {
        log_line!(info, "Transaction Manager isolation level {level}: {}", e.message);
    }
}

/// Switches the session to `database` (nothing for an empty name); the error, if any.
fn use_database(session: &mut Session, database: &str) -> Option<String> {
    if database.is_empty() {
        return None;
    }
    let mut collected = Collected::default();
    session.execute_batch(&format!("USE [{}]", database.replace(']', "]]")), &mut collected);
    collected.messages.into_iter().find(|m| !m.is_info()).map(|m| m.message)
}
