#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! TLS in `walden serve`: encryption negotiated in PRELOGIN, the handshake wrapped in
//! PRELOGIN packets, then TDS inside TLS (or, for ENCRYPT_OFF, only the login encrypted).
//! Driven by tiberius with rustls at each encryption level, and by a raw client built on
//! rustls and the codec that verifies the server's certificate for real.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use tiberius::{AuthMethod, Client, Config, EncryptionLevel};
use tokio_util::compat::{Compat, TokioAsyncWriteCompatExt};
use walden_tds::packet::{PacketHeader, HEADER_LEN};
use walden_tds::*;

const PASSWORD: &str = "Walden-tls-1";

/// A `walden serve` process on port 0, with what it wrote on stderr.
struct Server {
    child: Child,
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
    _data: tempfile::TempDir,
}

impl Server {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Server {
        let data = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_walden"))
            .args(["serve", "--port", "0", "--data"])
            .arg(data.path().join("data"))
            .args(args)
            .env("WALDEN_SA_PASSWORD", PASSWORD)
            .envs(env.iter().copied())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Arc::new(Mutex::new(Vec::new()));
        let port = loop {
            let line = lines.next().expect("server exited before listening").unwrap();
            log.lock().unwrap().push(line.clone());
            if let Some(addr) = line.split_once("listening on ").map(|(_, addr)| addr) {
                break addr.rsplit(':').next().unwrap().parse().unwrap();
            }
        };
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Server { child, port, log, _data: data }
    }

    /// The fingerprint the server printed at start.
    fn fingerprint(&self) -> String {
        let log = self.log.lock().unwrap();
        let line = log.iter().find(|l| l.contains(" TLS: ")).expect("no TLS line");
        line.rsplit(' ').next().unwrap().to_string()
    }

    /// Waits up to a few seconds for a stderr line containing `text`.
    fn logged(&self, text: &str) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if self.log.lock().unwrap().iter().any(|l| l.contains(text)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn tiberius(
    port: u16,
    level: EncryptionLevel,
) -> tiberius::Result<Client<Compat<tokio::net::TcpStream>>> {
    let mut config = Config::new();
    config.host("127.0.0.1");
    config.port(port);
    config.authentication(AuthMethod::sql_server("sa", PASSWORD));
    config.encryption(level);
    config.trust_cert();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    Client::connect(config, tcp.compat_write()).await
}

async fn scalar_i32(client: &mut Client<Compat<tokio::net::TcpStream>>, sql: &str) -> i32 {
    let row = client.simple_query(sql).await.unwrap().into_row().await.unwrap().unwrap();
    row.get::<i32, _>(0).unwrap()
}

#[test]
fn tiberius_with_required_encryption_runs_queries_parameters_and_transactions() {
    let server = Server::start(&["--tls", "self-signed"], &[]);
    let fingerprint = server.fingerprint();
    assert_eq!(fingerprint.len(), 32 * 3 - 1, "{fingerprint}");
    runtime().block_on(async {
        let mut client = tiberius(server.port, EncryptionLevel::Required).await.unwrap();
        let row = client
            .simple_query("SELECT N'héllo' AS greeting, CAST(42 AS int) AS answer")
            .await
            .unwrap()
            .into_row()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.get::<&str, _>("greeting"), Some("héllo"));
        assert_eq!(row.get::<i32, _>("answer"), Some(42));

        // Parameters: sp_executesql through TLS.
        let row = client.query("SELECT @P1 + 1, @P2", &[&41i32, &"text"]).await.unwrap();
        let row = row.into_row().await.unwrap().unwrap();
        assert_eq!(row.get::<i32, _>(0), Some(42));
        assert_eq!(row.get::<&str, _>(1), Some("text"));

        // A result of many packets, so many TLS records.
        let rows = client
            .simple_query("SELECT value, REPLICATE('x', 100) AS pad FROM GENERATE_SERIES(1, 20000)")
            .await
            .unwrap()
            .into_first_result()
            .await
            .unwrap();
        assert_eq!(rows.len(), 20000);
        assert_eq!(rows[19999].get::<i32, _>(0), Some(20000));

        // A transaction across requests, rolled back.
        client.simple_query("CREATE TABLE dbo.t (id INT PRIMARY KEY)").await.unwrap();
        client.simple_query("BEGIN TRAN").await.unwrap();
        client.execute("INSERT INTO dbo.t VALUES (@P1), (@P2)", &[&1i32, &2i32]).await.unwrap();
        assert_eq!(scalar_i32(&mut client, "SELECT @@TRANCOUNT").await, 1);
        assert_eq!(scalar_i32(&mut client, "SELECT COUNT(*) FROM dbo.t").await, 2);
        client.simple_query("ROLLBACK").await.unwrap();
        assert_eq!(scalar_i32(&mut client, "SELECT COUNT(*) FROM dbo.t").await, 0);

        // Errors travel encrypted too, and the connection goes on.
        let error = client.simple_query("SELECT * FROM nowhere").await.err();
        assert!(matches!(&error, Some(tiberius::error::Error::Server(e)) if e.code() == 208));
        assert_eq!(scalar_i32(&mut client, "SELECT 5").await, 5);
        client.close().await.unwrap();
    });
}

#[test]
fn tiberius_with_encryption_off_encrypts_only_the_login() {
    let server = Server::start(&["--tls", "self-signed"], &[]);
    runtime().block_on(async {
        let mut client = tiberius(server.port, EncryptionLevel::Off).await.unwrap();
        assert_eq!(scalar_i32(&mut client, "SELECT 6").await, 6);
        let row = client.query("SELECT @P1 * 2", &[&21i32]).await.unwrap();
        assert_eq!(row.into_row().await.unwrap().unwrap().get::<i32, _>(0), Some(42));
        client.close().await.unwrap();
    });
}

#[test]
fn tiberius_without_encryption_still_connects_to_a_tls_server() {
    let server = Server::start(&["--tls", "self-signed"], &[]);
    runtime().block_on(async {
        let mut client = tiberius(server.port, EncryptionLevel::NotSupported).await.unwrap();
        assert_eq!(scalar_i32(&mut client, "SELECT 7").await, 7);
        client.close().await.unwrap();
    });
}

#[test]
fn a_client_that_requires_encryption_is_told_why_when_tls_is_off() {
    let server = Server::start(&[], &[]);
    assert!(server.logged("TLS: off"));
    runtime().block_on(async {
        assert!(tiberius(server.port, EncryptionLevel::Required).await.is_err());
    });
    assert!(server.logged("the client requires encryption, but TLS is off"));
}

#[test]
fn tls_flags_are_checked_and_read_from_the_environment() {
    let server = Server::start(&[], &[("WALDEN_TLS", "self-signed")]);
    assert!(server.logged("TLS: self-signed certificate for localhost and 127.0.0.1"));
    drop(server);

    let data = tempfile::tempdir().unwrap();
    for args in [
        &["--tls", "self-signed", "--tls-cert", "c.pem", "--tls-key", "k.pem"][..],
        &["--tls-cert", "c.pem"][..],
        &["--tls-cert", "missing.pem", "--tls-key", "missing.pem"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_walden"))
            .args(["serve", "--port", "0", "--data"])
            .arg(data.path().join("data"))
            .args(args)
            .env("WALDEN_SA_PASSWORD", PASSWORD)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} started");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("listening on"), "{args:?}: {stderr}");
    }
}

/// A client on rustls and the codec: PRELOGIN asking for ENCRYPT_ON, the handshake wrapped
/// in PRELOGIN packets with the server's certificate verified against `roots`, then TDS
/// inside TLS.
struct TlsClient {
    tls: StreamOwned<ClientConnection, TcpStream>,
    reader: MessageReader,
}

impl TlsClient {
    fn connect(
        port: u16,
        roots: RootCertStore,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> TlsClient {
        let tls = handshake(port, roots, versions).unwrap();
        let mut c = TlsClient { tls, reader: MessageReader::new() };
        let login = Login7 {
            tds_version: TDS_7_4,
            username: "sa".into(),
            password: PASSWORD.into(),
            ..Login7::default()
        };
        c.send(PacketType::Login7, &login.encode().unwrap());
        let tokens = c.tokens();
        assert!(tokens.iter().any(|t| matches!(t, Token::LoginAck(_))), "{tokens:?}");
        c
    }

    fn send(&mut self, ty: PacketType, payload: &[u8]) {
        write_message(&mut self.tls, ty, payload);
    }

    fn tokens(&mut self) -> Vec<Token> {
        let mut buf = [0u8; 8192];
        loop {
            if let Some(m) = self.reader.next_message().unwrap() {
                return decode_tokens(&m.payload).unwrap();
            }
            let n = self.tls.read(&mut buf).unwrap();
            assert!(n > 0, "server closed the connection");
            self.reader.push(&buf[..n]);
        }
    }

    fn send_batch(&mut self, text: &str) {
        let batch = SqlBatch { headers: AllHeaders::with_transaction(0), text: text.into() };
        self.send(PacketType::SqlBatch, &batch.encode().unwrap());
    }

    fn scalar(&mut self, text: &str) -> TdsValue {
        self.send_batch(text);
        let tokens = self.tokens();
        tokens
            .iter()
            .find_map(|t| match t {
                Token::Row(values) => values.first().cloned(),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{text}: {tokens:?}"))
    }
}

/// PRELOGIN asking for ENCRYPT_ON, then the TLS handshake wrapped in PRELOGIN packets.
fn handshake(
    port: u16,
    roots: RootCertStore,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Result<StreamOwned<ClientConnection, TcpStream>, String> {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let prelogin = Prelogin { encryption: Some(Encryption::On), ..Prelogin::default() };
    write_message(&mut tcp, PacketType::PreLogin, &prelogin.encode().unwrap());
    let answer = read_packet(&mut tcp, PacketType::TabularResult).map_err(|e| e.to_string())?;
    assert_eq!(Prelogin::decode(&answer).unwrap().encryption, Some(Encryption::On));

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from("localhost").unwrap();
    let mut conn = ClientConnection::new(Arc::new(config), name).unwrap();
    while conn.is_handshaking() {
        if conn.wants_write() {
            flush_wrapped(&mut conn, &mut tcp);
            continue;
        }
        let packet = read_packet(&mut tcp, PacketType::PreLogin).map_err(|e| e.to_string())?;
        let mut records: &[u8] = &packet;
        while !records.is_empty() {
            conn.read_tls(&mut records).map_err(|e| e.to_string())?;
            conn.process_new_packets().map_err(|e| e.to_string())?;
        }
    }
    flush_wrapped(&mut conn, &mut tcp);
    Ok(StreamOwned::new(conn, tcp))
}

fn write_message(out: &mut impl Write, ty: PacketType, payload: &[u8]) {
    let mut wire = Vec::new();
    PacketWriter::default().write_message(ty, PacketStatus::NONE, payload, &mut wire);
    out.write_all(&wire).unwrap();
    out.flush().unwrap();
}

/// One packet of type `ty`, read exactly (nothing after it is consumed).
fn read_packet(tcp: &mut TcpStream, ty: PacketType) -> std::io::Result<Vec<u8>> {
    let mut header = [0u8; HEADER_LEN];
    tcp.read_exact(&mut header)?;
    let header = PacketHeader::decode(&header).unwrap();
    assert_eq!(header.ty, ty);
    let mut payload = vec![0u8; usize::from(header.length) - HEADER_LEN];
    tcp.read_exact(&mut payload)?;
    Ok(payload)
}

fn flush_wrapped(conn: &mut ClientConnection, tcp: &mut TcpStream) {
    let mut records = Vec::new();
    while conn.wants_write() {
        conn.write_tls(&mut records).unwrap();
    }
    if !records.is_empty() {
        write_message(tcp, PacketType::PreLogin, &records);
    }
}

#[test]
fn a_configured_certificate_is_served_verified_and_carries_an_attention() {
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, generated.cert.pem()).unwrap();
    std::fs::write(&key, generated.key_pair.serialize_pem()).unwrap();
    let server = Server::start(
        &["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()],
        &[],
    );
    let digest = ring::digest::digest(&ring::digest::SHA256, generated.cert.der());
    let expected: Vec<String> = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(server.fingerprint(), expected.join(":"));

    let mut roots = RootCertStore::empty();
    roots.add(generated.cert.der().clone()).unwrap();
    // TLS 1.2, as SQL Server speaks it inside TDS 7.x; a client offering only TLS 1.3 is
    // refused during the handshake.
    let mut c = TlsClient::connect(server.port, roots.clone(), rustls::ALL_VERSIONS);
    assert_eq!(c.tls.conn.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_2));
    assert_eq!(c.scalar("SELECT 8"), TdsValue::Int(8));
    let refused = handshake(server.port, roots, &[&rustls::version::TLS13]).err();
    assert!(
        refused.is_some_and(|e| e.contains("alert") || e.contains("failure")),
        "handshake passed"
    );

    // With everything encrypted, the attention arrives as TLS records during the request.
    c.send_batch("WAITFOR DELAY '00:00:30'");
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    c.send(PacketType::Attention, &[]);
    let response = c.tokens();
    assert!(
        matches!(response.last(), Some(Token::Done(d)) if !d.status.contains(DoneStatus::ATTN))
    );
    let ack = c.tokens();
    assert!(
        matches!(ack.as_slice(), [Token::Done(d)] if d.status.contains(DoneStatus::ATTN)),
        "{ack:?}"
    );
    assert!(sent.elapsed() < Duration::from_secs(3), "{:?}", sent.elapsed());
    assert_eq!(c.scalar("SELECT 9"), TdsValue::Int(9));
}
