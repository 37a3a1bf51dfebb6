//! A raw TDS client on the codec, for what a driver cannot send or does not show: PRELOGIN
//! without encryption, LOGIN7 as `sa`, then requests and whole response messages.
//!
//! The `try_` methods return socket errors, for tests where the server may die at any moment;
//! the others fail the test on them.

use std::io::{self, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use walden_tds::*;

use super::PASSWORD;

/// How long a client waits for the server before calling it hung: every socket opened here
/// has this read and write timeout, and a timeout fails the test.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A TCP connection to the server on `port`, with [`PATIENCE`] timeouts.
pub fn connect(port: u16) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(PATIENCE))?;
    stream.set_write_timeout(Some(PATIENCE))?;
    Ok(stream)
}

/// Whether `e` is a socket timeout (which of the two kinds depends on the platform).
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// `payload` as one message of type `ty`, in packets.
pub fn frame(ty: PacketType, status: PacketStatus, payload: &[u8]) -> Vec<u8> {
    let mut wire = Vec::new();
    PacketWriter::default().write_message(ty, status, payload, &mut wire);
    wire
}

/// A PRELOGIN payload that declines encryption.
pub fn prelogin() -> Vec<u8> {
    let prelogin = Prelogin { encryption: Some(Encryption::NotSupported), ..Prelogin::default() };
    prelogin.encode().unwrap()
}

/// A LOGIN7 payload for `sa` with `password`, into `database` ("" for sa's default).
pub fn login7(password: &str, database: &str) -> Vec<u8> {
    let login = Login7 {
        tds_version: TDS_7_4,
        username: "sa".into(),
        password: password.into(),
        database: database.into(),
        ..Login7::default()
    };
    login.encode().unwrap()
}

/// A SQL batch payload, outside any transaction the client knows of.
pub fn sql_batch(text: &str) -> Vec<u8> {
    SqlBatch { headers: AllHeaders::with_transaction(0), text: text.into() }.encode().unwrap()
}

/// The value of a socket operation whose failure fails the test.
fn alive<T>(result: io::Result<T>) -> T {
    match result {
        Ok(value) => value,
        Err(e) if is_timeout(&e) => panic!("the server did not answer within {PATIENCE:?}"),
        Err(e) => panic!("server closed the connection: {e}"),
    }
}

/// A connection speaking TDS with the codec: over TCP, or over TLS for the TLS tests.
pub struct Client<S = TcpStream> {
    pub stream: S,
    pub reader: MessageReader,
}

impl Client {
    /// Connects, declines encryption in PRELOGIN (the server must agree), and logs in as `sa`
    /// with `password` into `database` ("" for sa's default); the client and the login
    /// response, whether the login succeeded or not.
    pub fn try_login(
        port: u16,
        password: &str,
        database: &str,
    ) -> io::Result<(Client, Vec<Token>)> {
        let mut c = Client::new(connect(port)?);
        c.try_send(PacketType::PreLogin, PacketStatus::NONE, &prelogin())?;
        let answer = c.try_message()?;
        assert_eq!(Prelogin::decode(&answer).unwrap().encryption, Some(Encryption::NotSupported));
        c.try_send(PacketType::Login7, PacketStatus::NONE, &login7(password, database))?;
        let tokens = decode_tokens(&c.try_message()?).unwrap();
        Ok((c, tokens))
    }

    /// [`Client::try_login`] into sa's default database, the server up.
    pub fn login(port: u16, password: &str) -> (Client, Vec<Token>) {
        alive(Client::try_login(port, password, ""))
    }

    /// A client logged in with the test password into `database`; the login must succeed.
    pub fn try_connect(port: u16, database: &str) -> io::Result<Client> {
        let (c, tokens) = Client::try_login(port, PASSWORD, database)?;
        assert!(tokens.iter().any(|t| matches!(t, Token::LoginAck(_))), "{tokens:?}");
        Ok(c)
    }

    /// A client logged in with the test password; the login must succeed.
    pub fn connect(port: u16) -> Client {
        alive(Client::try_connect(port, ""))
    }
}

impl<S: Read + Write> Client<S> {
    pub fn new(stream: S) -> Client<S> {
        Client { stream, reader: MessageReader::new() }
    }

    pub fn try_send(
        &mut self,
        ty: PacketType,
        status: PacketStatus,
        payload: &[u8],
    ) -> io::Result<()> {
        self.stream.write_all(&frame(ty, status, payload))?;
        self.stream.flush()
    }

    /// The next whole message's payload (up to and including its EOM packet); a connection
    /// closed before it is an `UnexpectedEof` error.
    pub fn try_message(&mut self) -> io::Result<Vec<u8>> {
        let mut buf = [0u8; 16 * 1024];
        loop {
            if let Some(m) = self.reader.next_message().unwrap() {
                return Ok(m.payload);
            }
            let n = self.stream.read(&mut buf)?;
            if n == 0 {
                return Err(ErrorKind::UnexpectedEof.into());
            }
            self.reader.push(&buf[..n]);
        }
    }

    /// Runs a batch; its tokens once the whole response has arrived.
    pub fn try_batch(&mut self, text: &str) -> io::Result<Vec<Token>> {
        self.try_send(PacketType::SqlBatch, PacketStatus::NONE, &sql_batch(text))?;
        Ok(decode_tokens(&self.try_message()?).unwrap())
    }

    pub fn send(&mut self, ty: PacketType, payload: &[u8]) {
        self.send_with(ty, PacketStatus::NONE, payload);
    }

    pub fn send_with(&mut self, ty: PacketType, status: PacketStatus, payload: &[u8]) {
        alive(self.try_send(ty, status, payload));
    }

    pub fn message(&mut self) -> Vec<u8> {
        alive(self.try_message())
    }

    /// The tokens of the next whole message.
    pub fn tokens(&mut self) -> Vec<Token> {
        decode_tokens(&self.message()).unwrap()
    }

    /// Sends a batch without waiting for its response.
    pub fn send_batch(&mut self, text: &str) {
        self.send(PacketType::SqlBatch, &sql_batch(text));
    }

    pub fn batch(&mut self, text: &str) -> Vec<Token> {
        alive(self.try_batch(text))
    }

    /// One RPC call of `proc` with `options`, outside any transaction the client knows of;
    /// `status` carries RESETCONNECTION when asked for. Its response as the raw payload, for
    /// responses decoded with the columns of an earlier one (NoMetaData).
    pub fn call(
        &mut self,
        status: PacketStatus,
        proc: RpcProc,
        options: RpcOptions,
        params: Vec<RpcParam>,
    ) -> Vec<u8> {
        let request = RpcRequest {
            headers: AllHeaders::with_transaction(0),
            calls: vec![RpcCall { proc, options, params }],
        };
        self.send_with(PacketType::Rpc, status, &request.encode().unwrap());
        self.message()
    }

    /// One RPC call without options; its tokens.
    pub fn rpc_with(
        &mut self,
        status: PacketStatus,
        proc: RpcProc,
        params: Vec<RpcParam>,
    ) -> Vec<Token> {
        decode_tokens(&self.call(status, proc, RpcOptions::NONE, params)).unwrap()
    }

    /// One RPC call of a procedure by its number; its tokens.
    pub fn rpc(&mut self, proc: ProcId, params: Vec<RpcParam>) -> Vec<Token> {
        self.rpc_with(PacketStatus::NONE, RpcProc::Id(proc), params)
    }

    /// The first value of the first row of a batch that must succeed.
    pub fn scalar(&mut self, text: &str) -> TdsValue {
        let tokens = self.batch(text);
        assert!(!tokens.iter().any(|t| matches!(t, Token::Error(_))), "{text}: {tokens:?}");
        tokens
            .iter()
            .find_map(|t| match t {
                Token::Row(values) => values.first().cloned(),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{text}: no row in {tokens:?}"))
    }
}

/// An unnamed int input parameter.
pub fn int(v: i32) -> RpcParam {
    RpcParam::input("", TdsValue::Int(v))
}

/// An unnamed NVARCHAR input parameter.
pub fn text(s: &str) -> RpcParam {
    RpcParam::input("", TdsValue::NVarChar(s.into()))
}

/// The values of each row.
pub fn rows(tokens: &[Token]) -> Vec<Vec<TdsValue>> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Row(r) | Token::NbcRow(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The numbers of the errors.
pub fn error_numbers(tokens: &[Token]) -> Vec<i32> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) => Some(m.number),
            _ => None,
        })
        .collect()
}

/// The numbers of the errors and information messages.
pub fn message_numbers(tokens: &[Token]) -> Vec<i32> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) | Token::Info(m) => Some(m.number),
            _ => None,
        })
        .collect()
}
