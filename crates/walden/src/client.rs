//! A blocking TDS 7.4 client over `std::net::TcpStream`, built on the `walden_tds` codec: how
//! `walden sql -S` and `walden bench seed001` talk to a server (Walden's or SQL Server).
//!
//! A connection is PRELOGIN (offering no encryption: ENCRYPT_NOT_SUP), LOGIN7 with a SQL login,
//! then SQL batches, one at a time. A batch's response is handed over as [`Event`]s while its
//! packets arrive, so a large result set is never held whole and a message the server sends
//! before the batch ends (`RAISERROR ... WITH NOWAIT`) is seen at once.
//!
//! Streaming needs token boundaries before a response is complete: a token may span packets,
//! and the codec's [`TokenReader`] decodes whole buffers only (an incomplete token is an error
//! to it). So [`TokenStream`] first *measures* each token from its bytes: fixed sizes, length
//! prefixes, and for rows the value lengths that the current COLMETADATA's types imply. The
//! complete tokens are then decoded by the codec in one pass, given the columns of the result
//! set they continue ([`TokenReader::with_columns`]).
//!
//! Invariants: a response is read to its last packet (EOM) before the next request is sent.
//! After an I/O error or a response the codec cannot read, the position in the stream is
//! unknown, so the client refuses every later request ([`ClientError::Broken`]). The login has
//! a deadline (the connect timeout); batches have none, like sqlcmd's default `-t 0`.

mod bulk;

use std::fmt;
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use walden_tds::packet::{PacketHeader, DEFAULT_PACKET_SIZE, HEADER_LEN, MAX_PACKET_SIZE};
use walden_tds::token::{
    COLMETADATA, DONE, DONEINPROC, DONEPROC, ENVCHANGE, ERROR, INFO, LOGINACK, NBCROW, ORDER,
    RETURNSTATUS, ROW,
};
use walden_tds::{
    AllHeaders, Column, DoneStatus, Encryption, EnvChange, Login7, MessageReader, PacketStatus,
    PacketType, PacketWriter, Prelogin, PreloginVersion, ServerMessage, SqlBatch, TdsError,
    TdsValue, Token, TokenReader, TypeInfo,
};

/// SQL Server's default TCP port.
pub const DEFAULT_PORT: u16 = 1433;

/// The largest PRELOGIN response accepted: the real ones are a few dozen bytes.
const MAX_PRELOGIN_RESPONSE: usize = 64 * 1024;

/// Where and as whom to connect.
#[derive(Clone)]
pub struct ConnectOptions {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// SQL login name.
    pub user: String,
    /// Its password.
    pub password: String,
    /// The database to start in (LOGIN7's Database); empty for the login's default.
    pub database: String,
    /// The application name the server records for the session.
    pub app_name: String,
    /// How long connecting and logging in may take together; zero waits forever.
    pub login_timeout: Duration,
}

impl fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .field("database", &self.database)
            .field("app_name", &self.app_name)
            .field("login_timeout", &self.login_timeout)
            .finish()
    }
}

impl ConnectOptions {
    /// Options for `server` as sqlcmd's `-S` takes it (see [`parse_server`]), with an empty
    /// database, the app name `walden sql` and sqlcmd's 8-second login timeout.
    pub fn new(server: &str, user: &str, password: &str) -> Result<ConnectOptions, String> {
        let (host, port) = parse_server(server)?;
        Ok(ConnectOptions {
            host,
            port,
            user: user.to_string(),
            password: password.to_string(),
            database: String::new(),
            app_name: "walden sql".to_string(),
            login_timeout: Duration::from_secs(8),
        })
    }
}

/// Splits sqlcmd's `-S` argument: `host`, `host,port`, optionally prefixed with `tcp:`. `.`,
/// `(local)` and `localhost` mean this machine. Named instances (`host\name`) need the SQL
/// Browser service, which this client does not query: give the port instead.
pub fn parse_server(server: &str) -> Result<(String, u16), String> {
    let text = server.trim();
    let text = match text.get(..4) {
        Some(prefix) if prefix.eq_ignore_ascii_case("tcp:") => &text[4..],
        _ => text,
    };
    if let Some((protocol, _)) = text.split_once(':') {
        if ["np", "lpc", "admin"].iter().any(|p| protocol.eq_ignore_ascii_case(p)) {
            return Err(format!("the {protocol}: protocol is not supported; use tcp:host,port"));
        }
    }
    let (host, port) = match text.rsplit_once(',') {
        Some((host, port)) => {
            let port = port
                .trim()
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| format!("invalid port '{}' in '{server}'", port.trim()))?;
            (host.trim(), port)
        }
        None => (text, DEFAULT_PORT),
    };
    if host.contains('\\') {
        return Err(format!(
            "named instances are not supported ('{server}'): give the port, as host,port"
        ));
    }
    let host = match host {
        "" => return Err(format!("no host in '{server}'")),
        "." | "(local)" | "(localdb)" => "localhost",
        // [::1] as in URLs: the brackets are not part of the address.
        h => h.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(h),
    };
    Ok((host.to_string(), port))
}

/// What goes wrong talking to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientError {
    /// No connection could be made, or the handshake failed or timed out.
    Connect(String),
    /// The server refused the login: its ERROR messages (18456 `Login failed for user '...'.`,
    /// 4060 for a database that cannot be opened...).
    Login(Vec<ServerMessage>),
    /// The connection failed or the server broke the protocol; the client is unusable.
    Broken(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Connect(why) | ClientError::Broken(why) => f.write_str(why),
            ClientError::Login(messages) if messages.is_empty() => {
                f.write_str("the server ended the login without accepting it")
            }
            ClientError::Login(messages) => {
                let texts: Vec<&str> = messages.iter().map(|m| m.message.as_str()).collect();
                f.write_str(&texts.join("\n"))
            }
        }
    }
}

impl std::error::Error for ClientError {}

/// What a batch produces, in order, as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// COLMETADATA: a result set begins with these columns.
    Columns(Vec<Column>),
    /// ROW or NBCROW: a row of the current result set, one value per column.
    Row(Vec<TdsValue>),
    /// DONE, DONEPROC or DONEINPROC: a statement (or a procedure) ended.
    Done {
        /// The rows it affected or returned, when the server counted them (DONE_COUNT).
        count: Option<u64>,
        /// It failed (DONE_ERROR or DONE_SRVERROR).
        error: bool,
    },
    /// INFO (class 10 and below) or ERROR (11 and up).
    Message(ServerMessage),
    /// ENVCHANGE, already applied by the client (packet size, transaction, database).
    EnvChange(EnvChange),
}

/// A result set kept whole by [`Client::batch_collect`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultSet {
    /// The columns.
    pub columns: Vec<Column>,
    /// The rows.
    pub rows: Vec<Vec<TdsValue>>,
}

/// Everything a batch produced, for small responses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchResult {
    /// Result sets, in order.
    pub result_sets: Vec<ResultSet>,
    /// INFO and ERROR messages, in order.
    pub messages: Vec<ServerMessage>,
    /// Row counts of the statements that reported one, in order.
    pub counts: Vec<u64>,
}

impl BatchResult {
    /// The errors (class over 10) among the messages.
    pub fn errors(&self) -> impl Iterator<Item = &ServerMessage> {
        self.messages.iter().filter(|m| m.class > 10)
    }

    /// The first value of the first row of the last result set.
    pub fn scalar(&self) -> Option<&TdsValue> {
        self.result_sets.last()?.rows.first()?.first()
    }
}

/// A connection to a server, logged in.
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    packets: PacketWriter,
    /// The payload of the packet last read.
    payload: Vec<u8>,
    /// The open transaction's descriptor (ENVCHANGE 8), 0 outside one; sent in ALL_HEADERS.
    descriptor: u64,
    /// The current database (ENVCHANGE 1).
    database: String,
    /// During the login: when it must be over.
    deadline: Option<Instant>,
    /// Why the connection is unusable, once it is.
    broken: Option<String>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("database", &self.database)
            .field("descriptor", &self.descriptor)
            .field("broken", &self.broken)
            .finish_non_exhaustive()
    }
}

/// `io::Error` of a read or write that hit the login deadline.
fn timed_out(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

impl Client {
    /// Connects, negotiates and logs in. The login timeout covers all of it.
    pub fn connect(options: &ConnectOptions) -> Result<Client, ClientError> {
        // No deadline for 0, nor for a timeout too long to represent.
        let deadline = (!options.login_timeout.is_zero())
            .then(|| Instant::now().checked_add(options.login_timeout))
            .flatten();
        let stream = open(&options.host, options.port, deadline)?;
        let fail = |e: io::Error| ClientError::Connect(format!("TCP Provider: {e}"));
        stream.set_nodelay(true).map_err(fail)?;
        let writer = stream.try_clone().map_err(fail)?;
        let mut client = Client {
            reader: BufReader::with_capacity(2 * MAX_PACKET_SIZE, stream),
            writer,
            packets: PacketWriter::default(),
            payload: Vec::with_capacity(DEFAULT_PACKET_SIZE),
            descriptor: 0,
            database: String::new(),
            deadline,
            broken: None,
        };
        client.handshake(options).map_err(|e| match e {
            ClientError::Broken(why) => ClientError::Connect(why),
            other => other,
        })?;
        client.deadline = None;
        let unlimited = |c: &Client| {
            c.reader.get_ref().set_read_timeout(None).and(c.writer.set_write_timeout(None))
        };
        unlimited(&client).map_err(fail)?;
        Ok(client)
    }

    /// The current database.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Runs `text` as a SQL batch, handing each event of the response to `on_event` as it
    /// arrives. An `Err` means the connection failed (it is unusable from then on); errors
    /// of the batch itself arrive as [`Event::Message`]s.
    pub fn batch(
        &mut self,
        text: &str,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), ClientError> {
        if let Some(why) = &self.broken {
            return Err(ClientError::Broken(why.clone()));
        }
        let result = self.send_batch(text).and_then(|()| {
            self.read_response(&mut |token| {
                if let Some(event) = event(token) {
                    on_event(event);
                }
            })
        });
        // After a severe error (class 20 and up) SQL Server closes the connection; that shows
        // as a failure of the next request, not assumed here.
        if let Err(e) = &result {
            self.broken = Some(e.to_string());
        }
        result
    }

    /// Runs `text` and keeps everything it returns: for short results (row counts, a scalar).
    pub fn batch_collect(&mut self, text: &str) -> Result<BatchResult, ClientError> {
        let mut out = BatchResult::default();
        self.batch(text, &mut |event| match event {
            Event::Columns(columns) => {
                out.result_sets.push(ResultSet { columns, rows: Vec::new() })
            }
            Event::Row(values) => {
                if let Some(set) = out.result_sets.last_mut() {
                    set.rows.push(values);
                }
            }
            Event::Done { count: Some(n), .. } => out.counts.push(n),
            Event::Message(m) => out.messages.push(m),
            Event::Done { count: None, .. } | Event::EnvChange(_) => {}
        })?;
        Ok(out)
    }

    fn handshake(&mut self, options: &ConnectOptions) -> Result<(), ClientError> {
        let prelogin = Prelogin {
            version: PreloginVersion {
                major: env!("CARGO_PKG_VERSION_MAJOR").parse().unwrap_or(0),
                minor: env!("CARGO_PKG_VERSION_MINOR").parse().unwrap_or(0),
                build: env!("CARGO_PKG_VERSION_PATCH").parse().unwrap_or(0),
                sub_build: 0,
            },
            // TLS is not implemented: a server that requires it refuses, and says so.
            encryption: Some(Encryption::NotSupported),
            instance: Some(vec![0]),
            thread_id: Some(std::process::id()),
            mars: Some(false),
            ..Prelogin::default()
        };
        self.send(PacketType::PreLogin, &prelogin.encode().map_err(protocol)?)?;
        let answer = Prelogin::decode(&self.read_message()?).map_err(protocol)?;
        let refused = match answer.encryption {
            Some(Encryption::On | Encryption::Required) => {
                Some("the server requires encryption (TLS), which walden sql does not support yet")
            }
            Some(Encryption::Other(_)) => {
                Some("the server asked for an encryption mode walden sql does not support")
            }
            _ => None,
        };
        if let Some(why) = refused {
            return Err(ClientError::Connect(why.to_string()));
        }

        let login = Login7 {
            packet_size: DEFAULT_PACKET_SIZE as u32,
            client_pid: std::process::id(),
            hostname: hostname(),
            username: options.user.clone(),
            password: options.password.clone(),
            app_name: options.app_name.clone(),
            server_name: options.host.clone(),
            library_name: "walden".to_string(),
            database: options.database.clone(),
            ..Login7::default()
        };
        self.send(PacketType::Login7, &login.encode().map_err(protocol)?)?;
        let mut accepted = false;
        let mut errors = Vec::new();
        self.read_response(&mut |token| match token {
            Token::LoginAck(_) => accepted = true,
            Token::Error(m) => errors.push(m),
            // Changed database context, language setting...: sqlcmd does not show them.
            _ => {}
        })?;
        if accepted && errors.is_empty() {
            Ok(())
        } else {
            Err(ClientError::Login(errors))
        }
    }

    fn send_batch(&mut self, text: &str) -> Result<(), ClientError> {
        let batch =
            SqlBatch { headers: AllHeaders::with_transaction(self.descriptor), text: text.into() };
        self.send(PacketType::SqlBatch, &batch.encode().map_err(protocol)?)
    }

    fn send(&mut self, ty: PacketType, payload: &[u8]) -> Result<(), ClientError> {
        let mut wire = Vec::with_capacity(payload.len() + 64);
        self.packets.write_message(ty, PacketStatus::NONE, payload, &mut wire);
        self.set_deadline_timeout(|s, t| s.writer.set_write_timeout(t))?;
        self.writer.write_all(&wire).map_err(|e| self.io_error(&e))
    }

    /// With a deadline (the login), bounds the next blocking call by what remains of it.
    fn set_deadline_timeout(
        &self,
        set: impl Fn(&Client, Option<Duration>) -> io::Result<()>,
    ) -> Result<(), ClientError> {
        let Some(deadline) = self.deadline else { return Ok(()) };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ClientError::Connect("Login timeout expired".into()));
        }
        set(self, Some(left)).map_err(|e| self.io_error(&e))
    }

    fn io_error(&self, e: &io::Error) -> ClientError {
        if self.deadline.is_some() && timed_out(e) {
            ClientError::Connect("Login timeout expired".into())
        } else if e.kind() == io::ErrorKind::UnexpectedEof {
            ClientError::Broken("the server closed the connection".into())
        } else {
            ClientError::Broken(format!("TCP Provider: {e}"))
        }
    }

    /// Reads one packet into `self.payload`; returns its header.
    fn read_packet(&mut self) -> Result<PacketHeader, ClientError> {
        self.set_deadline_timeout(|s, t| s.reader.get_ref().set_read_timeout(t))?;
        let mut head = [0u8; HEADER_LEN];
        self.reader.read_exact(&mut head).map_err(|e| self.io_error(&e))?;
        let header = PacketHeader::decode(&head).map_err(protocol)?;
        if header.ty != PacketType::TabularResult {
            return Err(ClientError::Broken(format!(
                "the server sent a {:?} packet where a response was expected",
                header.ty
            )));
        }
        self.payload.resize(usize::from(header.length) - HEADER_LEN, 0);
        let mut payload = std::mem::take(&mut self.payload);
        let read = self.reader.read_exact(&mut payload);
        self.payload = payload;
        read.map_err(|e| self.io_error(&e))?;
        Ok(header)
    }

    /// Reads a whole message that is not a token stream (the PRELOGIN response).
    fn read_message(&mut self) -> Result<Vec<u8>, ClientError> {
        let mut messages =
            MessageReader::with_limits(MAX_PACKET_SIZE, MAX_PRELOGIN_RESPONSE).map_err(protocol)?;
        loop {
            let header = self.read_packet()?;
            messages.push(&header.encode());
            messages.push(&self.payload);
            if let Some(message) = messages.next_message().map_err(protocol)? {
                return Ok(message.payload);
            }
        }
    }

    /// Reads a response to its last packet, applying the ENVCHANGEs and handing every token
    /// to `on_token` as soon as its packet is in.
    fn read_response(&mut self, on_token: &mut dyn FnMut(Token)) -> Result<(), ClientError> {
        let mut stream = TokenStream::default();
        loop {
            let header = self.read_packet()?;
            stream.push(&self.payload);
            for token in stream.drain().map_err(ClientError::Broken)? {
                self.apply(&token)?;
                on_token(token);
            }
            if header.status.contains(PacketStatus::EOM) {
                return stream.finish().map_err(ClientError::Broken);
            }
        }
    }

    /// Keeps the session state the server reports.
    fn apply(&mut self, token: &Token) -> Result<(), ClientError> {
        match token {
            Token::EnvChange(EnvChange::PacketSize { new, .. }) => {
                let size = usize::try_from(*new).unwrap_or(usize::MAX);
                self.packets.set_packet_size(size).map_err(protocol)?;
            }
            Token::EnvChange(EnvChange::BeginTransaction { descriptor }) => {
                self.descriptor = *descriptor
            }
            Token::EnvChange(
                EnvChange::CommitTransaction { .. } | EnvChange::RollbackTransaction { .. },
            ) => self.descriptor = 0,
            Token::EnvChange(EnvChange::Database { new, .. }) => self.database.clone_from(new),
            _ => {}
        }
        Ok(())
    }
}

/// The event a token of a batch response stands for. LOGINACK cannot occur after the login;
/// RETURNSTATUS, RETURNVALUE and ORDER carry nothing sqlcmd shows.
fn event(token: Token) -> Option<Event> {
    let done = |d: walden_tds::Done| Event::Done {
        count: d.status.contains(DoneStatus::COUNT).then_some(d.row_count),
        error: d.status.contains(DoneStatus::ERROR) || d.status.contains(DoneStatus::SRVERROR),
    };
    Some(match token {
        Token::ColMetadata(columns) => Event::Columns(columns),
        Token::Row(values) | Token::NbcRow(values) => Event::Row(values),
        Token::Done(d) | Token::DoneProc(d) | Token::DoneInProc(d) => done(d),
        Token::Info(m) | Token::Error(m) => Event::Message(m),
        Token::EnvChange(change) => Event::EnvChange(change),
        Token::LoginAck(_)
        | Token::ReturnStatus(_)
        | Token::ReturnValue(_)
        | Token::Order(_)
        | Token::TabName(_)
        | Token::ColInfo(_)
        | Token::NoMetadata
        | Token::FeatureExtAck(_) => return None,
    })
}

fn protocol(e: TdsError) -> ClientError {
    ClientError::Broken(format!("the server's response is not valid TDS: {e}"))
}

/// Opens a TCP connection to the first address of `host` that answers.
fn open(host: &str, port: u16, deadline: Option<Instant>) -> Result<TcpStream, ClientError> {
    let shown = format!("{host},{port}");
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| ClientError::Connect(format!("TCP Provider: cannot resolve {shown}: {e}")))?
        .collect();
    let mut last = None;
    for addr in &addrs {
        let attempt = match deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ClientError::Connect("Login timeout expired".into()));
                }
                TcpStream::connect_timeout(addr, left)
            }
            None => TcpStream::connect(addr),
        };
        match attempt {
            Ok(stream) => return Ok(stream),
            Err(e) if timed_out(&e) => {
                return Err(ClientError::Connect("Login timeout expired".into()))
            }
            Err(e) => last = Some(e),
        }
    }
    Err(ClientError::Connect(match last {
        Some(e) => format!("TCP Provider: cannot connect to {shown}: {e}"),
        None => format!("TCP Provider: {host} has no address"),
    }))
}

/// This machine's name, for LOGIN7's HostName (shown by the server in its session lists).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// The total length of a NULL PLP value.
const PLP_NULL: u64 = u64::MAX;
/// The two-byte length of a NULL USHORTLEN value.
const USHORT_NULL: u16 = u16::MAX;

/// How much of a buffer a token or value takes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Size {
    /// It is all there and takes this many bytes.
    Whole(usize),
    /// It is not all there; the buffer must hold at least this many bytes before it can be.
    Need(usize),
}

/// A token measured: its size, and the columns when it is a COLMETADATA.
#[derive(Debug)]
struct Measured {
    size: Size,
    columns: Option<Vec<Column>>,
}

fn le_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The size of the fixed-length types' values.
fn fixed_size(ty: &TypeInfo) -> Option<usize> {
    Some(match ty {
        TypeInfo::Null => 0,
        TypeInfo::Int1 | TypeInfo::Bit => 1,
        TypeInfo::Int2 => 2,
        TypeInfo::Int4 | TypeInfo::Flt4 | TypeInfo::Money4 | TypeInfo::DateTime4 => 4,
        TypeInfo::Int8 | TypeInfo::Flt8 | TypeInfo::Money | TypeInfo::DateTime => 8,
        _ => return None,
    })
}

/// The size of a value of type `ty` at the start of `b` (2.2.5.2: fixed, BYTELEN, USHORTLEN,
/// PLP). The lengths are not checked against the type here; the codec does that when it
/// decodes the token.
fn value_size(ty: &TypeInfo, b: &[u8]) -> Result<Size, String> {
    let have = |n: usize| if b.len() >= n { Size::Whole(n) } else { Size::Need(n) };
    if let Some(n) = fixed_size(ty) {
        return Ok(have(n));
    }
    if ty.is_plp() {
        // A total length (or PLP_NULL), then chunks of a 4-byte length and data, ended by a
        // zero-length chunk.
        let Some(total) = le_u64(b, 0) else { return Ok(Size::Need(8)) };
        if total == PLP_NULL {
            return Ok(Size::Whole(8));
        }
        let mut at = 8;
        loop {
            let Some(chunk) = le_u32(b, at) else { return Ok(Size::Need(at + 4)) };
            at += 4;
            if chunk == 0 {
                return Ok(Size::Whole(at));
            }
            at = at
                .checked_add(usize::try_from(chunk).map_err(|_| "PLP chunk too long".to_string())?)
                .ok_or("PLP chunk too long")?;
            if at > b.len() {
                return Ok(Size::Need(at + 4));
            }
        }
    }
    Ok(match ty {
        TypeInfo::BigVarChar { .. }
        | TypeInfo::BigChar { .. }
        | TypeInfo::NVarChar { .. }
        | TypeInfo::NChar { .. }
        | TypeInfo::BigVarBinary { .. }
        | TypeInfo::BigBinary { .. } => match le_u16(b, 0) {
            None => Size::Need(2),
            Some(USHORT_NULL) => Size::Whole(2),
            Some(len) => have(2 + usize::from(len)),
        },
        TypeInfo::Text { .. } | TypeInfo::NText { .. } | TypeInfo::Image { .. } => {
            return Err(format!("the server sent a {} column, which is not supported", ty.name()))
        }
        // The BYTELEN types: one length byte (0 for NULL), then the value.
        _ => match b.first() {
            None => Size::Need(1),
            Some(&len) => have(1 + usize::from(len)),
        },
    })
}

/// Measures the token at the start of `b` (not empty) under the result set's `columns`.
fn measure_token(b: &[u8], columns: &[Column]) -> Result<Measured, String> {
    let have = |n: usize| if b.len() >= n { Size::Whole(n) } else { Size::Need(n) };
    let size = match b[0] {
        DONE | DONEPROC | DONEINPROC => have(13),
        RETURNSTATUS => have(5),
        LOGINACK | ENVCHANGE | INFO | ERROR | ORDER => match le_u16(b, 1) {
            None => Size::Need(3),
            Some(len) => have(3 + usize::from(len)),
        },
        COLMETADATA => return measure_metadata(b),
        ROW | NBCROW => {
            if columns.is_empty() {
                return Err("the server sent a row before its COLMETADATA".into());
            }
            let mut at = 1;
            let nulls = if b[0] == NBCROW {
                let len = columns.len().div_ceil(8);
                match b.get(at..at + len) {
                    Some(bitmap) => {
                        at += len;
                        bitmap
                    }
                    None => return Ok(Measured { size: Size::Need(at + len), columns: None }),
                }
            } else {
                &[]
            };
            for (i, column) in columns.iter().enumerate() {
                if nulls.get(i / 8).is_some_and(|byte| byte & (1 << (i % 8)) != 0) {
                    continue;
                }
                match value_size(&column.ty, &b[at..])? {
                    Size::Whole(n) => at += n,
                    Size::Need(n) => {
                        return Ok(Measured { size: Size::Need(at + n), columns: None })
                    }
                }
            }
            Size::Whole(at)
        }
        other => {
            return Err(format!("the server sent token 0x{other:02X}, which is not supported"))
        }
    };
    Ok(Measured { size, columns: None })
}

/// COLMETADATA's size: the codec decodes it (an incomplete one is `Truncated`: COLMETADATA
/// has no length of its own that could run short of its fields) and says where it ended.
fn measure_metadata(b: &[u8]) -> Result<Measured, String> {
    let mut reader = TokenReader::new(b);
    match reader.next() {
        Some(Ok(Token::ColMetadata(columns))) => {
            Ok(Measured { size: Size::Whole(reader.position()), columns: Some(columns) })
        }
        Some(Err(TdsError::Truncated { .. })) | None => {
            Ok(Measured { size: Size::Need(b.len() + 1), columns: None })
        }
        Some(Err(e)) => Err(format!("the server's COLMETADATA is not valid TDS: {e}")),
        Some(Ok(other)) => Err(format!("expected COLMETADATA, decoded {other:?}")),
    }
}

/// A response's bytes as they arrive, turned into whole tokens (see the module documentation).
/// `pending` holds at most the bytes of one incomplete token plus the packet last pushed.
#[derive(Debug, Default)]
struct TokenStream {
    /// Bytes received and not yet decoded; they start at a token boundary.
    pending: Vec<u8>,
    /// The columns in effect at the start of `pending` (none before the first COLMETADATA).
    columns: Vec<Column>,
    /// `pending` must be this long before the next token can be whole.
    need: usize,
}

impl TokenStream {
    fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The tokens now whole, in order.
    fn drain(&mut self) -> Result<Vec<Token>, String> {
        if self.pending.len() < self.need {
            return Ok(Vec::new());
        }
        let mut end = 0;
        // The columns of the last COLMETADATA measured, in effect from there on.
        let mut metadata: Option<Vec<Column>> = None;
        self.need = 0;
        while end < self.pending.len() {
            let columns = metadata.as_deref().unwrap_or(&self.columns);
            let measured = measure_token(&self.pending[end..], columns)?;
            match measured.size {
                Size::Whole(len) => {
                    if measured.columns.is_some() {
                        metadata = measured.columns;
                    }
                    end += len;
                }
                Size::Need(len) => {
                    self.need = end + len;
                    break;
                }
            }
        }
        if end == 0 {
            return Ok(Vec::new());
        }
        let tokens: Vec<Token> = TokenReader::with_columns(&self.pending[..end], &self.columns)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("the server's response is not valid TDS: {e}"))?;
        if let Some(columns) = metadata {
            self.columns = columns;
        }
        self.pending.drain(..end);
        self.need = self.need.saturating_sub(end);
        Ok(tokens)
    }

    /// The response ended: nothing may be left over.
    fn finish(&self) -> Result<(), String> {
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the server's response ended inside a token ({} bytes)",
                self.pending.len()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::net::TcpListener;
    use std::sync::mpsc;

    use walden_tds::{encode_tokens, Collation, Decimal, Done, LoginAck, TDS_7_4};

    use super::*;

    fn message(number: i32, class: u8, text: &str) -> ServerMessage {
        ServerMessage {
            number,
            state: 1,
            class,
            message: text.into(),
            server: "TEST".into(),
            procedure: String::new(),
            line: 1,
        }
    }

    /// A response with every kind of token and value the stream measures.
    fn sample() -> Vec<Token> {
        let collation = Collation::SQL_LATIN1_GENERAL_CP1_CI_AS;
        let columns = vec![
            Column::new("i", TypeInfo::IntN(4), true),
            Column::new("f", TypeInfo::Int8, false),
            Column::new("s", TypeInfo::BigVarChar { max_len: 20, collation }, true),
            Column::new("n", TypeInfo::nvarchar(None), true),
            Column::new("d", TypeInfo::Decimal { precision: 20, scale: 2 }, true),
            Column::new("b", TypeInfo::varbinary(None), true),
        ];
        let long = "x".repeat(20_000);
        let d = |v| TdsValue::Decimal(Decimal { value: v, precision: 20, scale: 2 });
        vec![
            Token::EnvChange(EnvChange::Database { new: "db".into(), old: "master".into() }),
            Token::Info(message(5701, 0, "Changed database context to 'db'.")),
            Token::ColMetadata(columns),
            Token::Row(vec![
                TdsValue::Int(1),
                TdsValue::BigInt(-2),
                TdsValue::VarChar(b"abc".to_vec()),
                TdsValue::NVarChar(long),
                d(12345),
                TdsValue::Binary(vec![1, 2, 3]),
            ]),
            Token::NbcRow(vec![
                TdsValue::Null,
                TdsValue::BigInt(7),
                TdsValue::Null,
                TdsValue::Null,
                d(-1),
                TdsValue::Null,
            ]),
            Token::Row(vec![
                TdsValue::Null,
                TdsValue::BigInt(8),
                TdsValue::Null,
                TdsValue::NVarChar(String::new()),
                TdsValue::Null,
                TdsValue::Binary(Vec::new()),
            ]),
            Token::Done(Done {
                status: DoneStatus::COUNT | DoneStatus::MORE,
                cur_cmd: 0xC1,
                row_count: 3,
            }),
            Token::ColMetadata(vec![Column::new("x", TypeInfo::Date, true)]),
            Token::Row(vec![TdsValue::Date(738_000)]),
            Token::Error(message(8134, 16, "Divide by zero error encountered.")),
            Token::Done(Done { status: DoneStatus::ERROR, cur_cmd: 0, row_count: 0 }),
        ]
    }

    /// Feeds `wire` in pieces of `step` bytes; returns every token drained.
    fn stream_in_pieces(wire: &[u8], step: usize) -> Vec<Token> {
        let mut stream = TokenStream::default();
        let mut got = Vec::new();
        for piece in wire.chunks(step) {
            stream.push(piece);
            got.extend(stream.drain().unwrap());
        }
        stream.finish().unwrap();
        got
    }

    #[test]
    fn tokens_split_anywhere_come_out_whole_and_in_order() {
        let tokens = sample();
        let wire = encode_tokens(&tokens).unwrap();
        for step in [1, 2, 3, 7, 100, 504, 4088, wire.len()] {
            assert_eq!(stream_in_pieces(&wire, step), tokens, "pieces of {step} bytes");
        }
    }

    #[test]
    fn a_response_cut_inside_a_token_is_an_error() {
        let wire = encode_tokens(&sample()).unwrap();
        let mut stream = TokenStream::default();
        stream.push(&wire[..wire.len() - 3]);
        stream.drain().unwrap();
        assert!(stream.finish().is_err());
        let mut stream = TokenStream::default();
        stream.push(&[ROW, 0, 0]);
        assert!(stream.drain().is_err(), "a row before any COLMETADATA");
        let mut stream = TokenStream::default();
        stream.push(&[0x42]);
        assert!(stream.drain().is_err(), "an unknown token");
    }

    #[test]
    fn server_names_parse_like_sqlcmd() {
        let ok = |s: &str| parse_server(s).unwrap();
        assert_eq!(ok("127.0.0.1,14330"), ("127.0.0.1".to_string(), 14330));
        assert_eq!(ok("tcp:db.example,1500"), ("db.example".to_string(), 1500));
        assert_eq!(ok("TCP:host"), ("host".to_string(), DEFAULT_PORT));
        assert_eq!(ok("."), ("localhost".to_string(), DEFAULT_PORT));
        assert_eq!(ok("[::1],1433"), ("::1".to_string(), 1433));
        for bad in ["host,0", "host,x", "", "host\\SQLEXPRESS", "np:\\\\.\\pipe\\sql"] {
            assert!(parse_server(bad).is_err(), "{bad}");
        }
    }

    /// A scripted server on a loopback port: answers PRELOGIN and LOGIN7 (with `login`), then
    /// runs `script` on the connection.
    fn fake_server(
        login: Vec<Token>,
        script: impl FnOnce(&mut TcpStream, &mut MessageReader) + Send + 'static,
    ) -> (u16, std::thread::JoinHandle<Login7>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = MessageReader::new();
            let prelogin = read(&mut stream, &mut reader);
            assert_eq!(prelogin.ty, PacketType::PreLogin);
            let client = Prelogin::decode(&prelogin.payload).unwrap();
            assert_eq!(client.encryption, Some(Encryption::NotSupported));
            let answer =
                Prelogin { encryption: Some(Encryption::NotSupported), ..Prelogin::default() };
            send(&mut stream, &answer.encode().unwrap(), 4096);
            let login7 = read(&mut stream, &mut reader);
            assert_eq!(login7.ty, PacketType::Login7);
            let login7 = Login7::decode(&login7.payload).unwrap();
            send(&mut stream, &encode_tokens(&login).unwrap(), 4096);
            script(&mut stream, &mut reader);
            login7
        });
        (port, handle)
    }

    fn read(stream: &mut TcpStream, reader: &mut MessageReader) -> walden_tds::Message {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(m) = reader.next_message().unwrap() {
                return m;
            }
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0, "the client hung up");
            reader.push(&buf[..n]);
        }
    }

    /// Sends `payload` as one response in packets of `size` bytes.
    fn send(stream: &mut TcpStream, payload: &[u8], size: usize) {
        let mut wire = Vec::new();
        PacketWriter::new(size, 51).unwrap().write_message(
            PacketType::TabularResult,
            PacketStatus::NONE,
            payload,
            &mut wire,
        );
        stream.write_all(&wire).unwrap();
    }

    fn accepted() -> Vec<Token> {
        vec![
            Token::EnvChange(EnvChange::Database { new: "sales".into(), old: "master".into() }),
            Token::Info(message(5701, 0, "Changed database context to 'sales'.")),
            Token::LoginAck(LoginAck {
                interface: 1,
                tds_version: TDS_7_4,
                prog_name: "Test".into(),
                major: 16,
                minor: 0,
                build: 1,
            }),
            Token::EnvChange(EnvChange::PacketSize { new: 512, old: 4096 }),
            Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 }),
        ]
    }

    fn options(port: u16) -> ConnectOptions {
        let mut options = ConnectOptions::new(&format!("127.0.0.1,{port}"), "sa", "pw").unwrap();
        options.database = "sales".into();
        options.login_timeout = Duration::from_secs(5);
        options
    }

    #[test]
    fn events_arrive_before_the_response_ends() {
        let (tx, rx) = mpsc::channel::<()>();
        let (port, server) = fake_server(accepted(), move |stream, reader| {
            let batch = read(stream, reader);
            assert_eq!(batch.ty, PacketType::SqlBatch);
            // The negotiated 512-byte packets.
            assert!(batch.payload.len() > 504, "a long batch spans packets");
            let text = SqlBatch::decode(&batch.payload).unwrap().text;
            assert!(text.starts_with("RAISERROR"));
            // One packet without EOM holding a message, then nothing until the client has
            // shown it: a client that waited for the whole response would never signal.
            let info = encode_tokens(&[Token::Info(message(50000, 0, "step 1"))]).unwrap();
            let mut wire = PacketHeader {
                ty: PacketType::TabularResult,
                status: PacketStatus::NONE,
                length: (info.len() + HEADER_LEN) as u16,
                spid: 51,
                packet_id: 1,
                window: 0,
            }
            .encode()
            .to_vec();
            wire.extend_from_slice(&info);
            stream.write_all(&wire).unwrap();
            rx.recv_timeout(Duration::from_secs(10)).expect("the client saw the message early");
            let rest = encode_tokens(&[
                Token::EnvChange(EnvChange::BeginTransaction { descriptor: 9 }),
                Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 }),
            ])
            .unwrap();
            send(stream, &rest, 512);
            let second = read(stream, reader);
            let headers = SqlBatch::decode(&second.payload).unwrap().headers;
            assert_eq!(headers.transaction.map(|t| t.descriptor), Some(9));
            send(stream, &encode_tokens(&sample()).unwrap(), 512);
        });
        let mut client = Client::connect(&options(port)).unwrap();
        assert_eq!(client.database(), "sales");
        let text = format!("RAISERROR('step 1', 0, 1) WITH NOWAIT; -- {}", "x".repeat(600));
        let mut events = Vec::new();
        client
            .batch(&text, &mut |e| {
                if matches!(&e, Event::Message(m) if m.message == "step 1") {
                    tx.send(()).unwrap();
                }
                events.push(e);
            })
            .unwrap();
        assert_eq!(events.len(), 3);
        assert_eq!(events[2], Event::Done { count: None, error: false });
        let result = client.batch_collect("SELECT 1").unwrap();
        assert_eq!(result.result_sets.len(), 2);
        assert_eq!(result.result_sets[0].rows.len(), 3);
        assert_eq!(result.counts, vec![3]);
        assert_eq!(result.scalar(), Some(&TdsValue::Date(738_000)));
        assert_eq!(result.errors().map(|m| m.number).collect::<Vec<_>>(), vec![8134]);
        let login = server.join().unwrap();
        assert_eq!(login.app_name, "walden sql");
        assert_eq!((login.username.as_str(), login.password.as_str()), ("sa", "pw"));
        assert_eq!(login.database, "sales");
        assert_eq!(login.packet_size, 4096);
    }

    #[test]
    fn a_refused_login_returns_the_server_messages() {
        let refusal = vec![
            Token::Error(message(18456, 14, "Login failed for user 'sa'.")),
            Token::Done(Done { status: DoneStatus::ERROR, cur_cmd: 0, row_count: 0 }),
        ];
        let (port, server) = fake_server(refusal, |_, _| {});
        let err = Client::connect(&options(port)).unwrap_err();
        assert!(matches!(&err, ClientError::Login(m) if m[0].number == 18456));
        assert_eq!(err.to_string(), "Login failed for user 'sa'.");
        server.join().unwrap();
    }

    #[test]
    fn a_server_that_hangs_up_breaks_the_client() {
        let (port, server) = fake_server(accepted(), |stream, reader| {
            read(stream, reader);
            stream.shutdown(std::net::Shutdown::Both).unwrap();
        });
        let mut client = Client::connect(&options(port)).unwrap();
        let first = client.batch("SELECT 1", &mut |_| {}).unwrap_err();
        assert_eq!(first, ClientError::Broken("the server closed the connection".into()));
        assert!(matches!(client.batch("SELECT 1", &mut |_| {}), Err(ClientError::Broken(_))));
        server.join().unwrap();
    }

    #[test]
    fn a_silent_server_hits_the_login_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut options = options(listener.local_addr().unwrap().port());
        options.login_timeout = Duration::from_millis(300);
        let start = Instant::now();
        let err = Client::connect(&options).unwrap_err();
        assert_eq!(err, ClientError::Connect("Login timeout expired".into()));
        assert!(start.elapsed() < Duration::from_secs(5));
        drop(listener);
    }
}
