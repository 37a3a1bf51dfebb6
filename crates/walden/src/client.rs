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
mod stream;

use std::fmt;
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use stream::TokenStream;
use walden_tds::packet::{PacketHeader, DEFAULT_PACKET_SIZE, HEADER_LEN, MAX_PACKET_SIZE};
use walden_tds::{
    AllHeaders, Column, DoneStatus, Encryption, EnvChange, Login7, MessageReader, PacketStatus,
    PacketType, PacketWriter, Prelogin, PreloginVersion, ServerMessage, SqlBatch, TdsError,
    TdsValue, Token,
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

#[cfg(test)]
mod tests;
