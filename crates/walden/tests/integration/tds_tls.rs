#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! TLS in `walden serve`: encryption negotiated in PRELOGIN, the handshake wrapped in
//! PRELOGIN packets, then TDS inside TLS (or, for ENCRYPT_OFF, only the login encrypted).
//! Driven by tiberius with rustls at each encryption level, and by a raw client built on
//! rustls and the codec that verifies the server's certificate for real.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use tiberius::{AuthMethod, Client as Tiberius, Config, EncryptionLevel};
use tokio_util::compat::{Compat, TokioAsyncWriteCompatExt};
use walden_tds::packet::{PacketHeader, HEADER_LEN};
use walden_tds::*;

use crate::common;

use common::client::{connect, frame, login7, Client};
use common::server::{serve_command, Server};
use common::PASSWORD;

/// The fingerprint the server printed at start.
fn fingerprint(server: &Server) -> String {
    let log = server.log();
    let line = log.iter().find(|l| l.contains(" TLS: ")).expect("no TLS line");
    line.rsplit(' ').next().unwrap().to_string()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn tiberius(
    port: u16,
    level: EncryptionLevel,
) -> tiberius::Result<Tiberius<Compat<tokio::net::TcpStream>>> {
    let mut config = Config::new();
    config.host("127.0.0.1");
    config.port(port);
    config.authentication(AuthMethod::sql_server("sa", PASSWORD));
    config.encryption(level);
    config.trust_cert();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    Tiberius::connect(config, tcp.compat_write()).await
}

async fn scalar_i32(client: &mut Tiberius<Compat<tokio::net::TcpStream>>, sql: &str) -> i32 {
    let row = client.simple_query(sql).await.unwrap().into_row().await.unwrap().unwrap();
    row.get::<i32, _>(0).unwrap()
}

/// The session's `sys.dm_exec_connections.encrypt_option`, as a client checks that TLS is on.
async fn encrypt_option(client: &mut Tiberius<Compat<tokio::net::TcpStream>>) -> String {
    let sql = "SELECT encrypt_option FROM sys.dm_exec_connections WHERE session_id = @@SPID";
    let row = client.simple_query(sql).await.unwrap().into_row().await.unwrap().unwrap();
    row.get::<&str, _>(0).unwrap().to_string()
}

#[test]
fn tiberius_with_required_encryption_runs_queries_parameters_and_transactions() {
    let server = Server::start(&["--tls", "self-signed"]);
    let fingerprint = fingerprint(&server);
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
        assert_eq!(encrypt_option(&mut client).await, "TRUE");

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
    let server = Server::start(&["--tls", "self-signed"]);
    runtime().block_on(async {
        let mut client = tiberius(server.port, EncryptionLevel::Off).await.unwrap();
        assert_eq!(scalar_i32(&mut client, "SELECT 6").await, 6);
        assert_eq!(encrypt_option(&mut client).await, "FALSE", "only the login was encrypted");
        let row = client.query("SELECT @P1 * 2", &[&21i32]).await.unwrap();
        assert_eq!(row.into_row().await.unwrap().unwrap().get::<i32, _>(0), Some(42));
        client.close().await.unwrap();
    });
}

#[test]
fn tiberius_without_encryption_still_connects_to_a_tls_server() {
    let server = Server::start(&["--tls", "self-signed"]);
    runtime().block_on(async {
        let mut client = tiberius(server.port, EncryptionLevel::NotSupported).await.unwrap();
        assert_eq!(scalar_i32(&mut client, "SELECT 7").await, 7);
        assert_eq!(encrypt_option(&mut client).await, "FALSE");
        client.close().await.unwrap();
    });
}

#[test]
fn a_client_that_requires_encryption_is_told_why_when_tls_is_off() {
    let server = Server::start(&[]);
    assert!(server.logged("TLS: off"));
    runtime().block_on(async {
        assert!(tiberius(server.port, EncryptionLevel::Required).await.is_err());
    });
    assert!(server.logged("the client requires encryption, but TLS is off"));
}

#[test]
fn tls_flags_are_checked_and_read_from_the_environment() {
    let server = Server::start_with(&[], &[("WALDEN_TLS", "self-signed")]);
    assert!(server.logged("TLS: self-signed certificate for localhost and 127.0.0.1"));
    drop(server);

    let data = tempfile::tempdir().unwrap();
    for args in [
        &["--tls", "self-signed", "--tls-cert", "c.pem", "--tls-key", "k.pem"][..],
        &["--tls-cert", "c.pem"][..],
        &["--tls-cert", "missing.pem", "--tls-key", "missing.pem"][..],
    ] {
        let out = serve_command(&data.path().join("data")).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} started");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("listening on"), "{args:?}: {stderr}");
    }
}

/// A client on rustls and the codec: PRELOGIN asking for ENCRYPT_ON, the handshake wrapped
/// in PRELOGIN packets with the server's certificate verified against `roots`, then TDS
/// inside TLS.
type TlsClient = Client<StreamOwned<ClientConnection, TcpStream>>;

fn tls_connect(
    port: u16,
    roots: RootCertStore,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> TlsClient {
    let mut c = Client::new(handshake(port, roots, versions).unwrap());
    c.send(PacketType::Login7, &login7(PASSWORD, ""));
    let tokens = c.tokens();
    assert!(tokens.iter().any(|t| matches!(t, Token::LoginAck(_))), "{tokens:?}");
    c
}

/// PRELOGIN asking for ENCRYPT_ON, then the TLS handshake wrapped in PRELOGIN packets.
fn handshake(
    port: u16,
    roots: RootCertStore,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Result<StreamOwned<ClientConnection, TcpStream>, String> {
    let mut tcp = connect(port).unwrap();
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

fn write_message(tcp: &mut TcpStream, ty: PacketType, payload: &[u8]) {
    tcp.write_all(&frame(ty, PacketStatus::NONE, payload)).unwrap();
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
    let server =
        Server::start(&["--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()]);
    let digest = ring::digest::digest(&ring::digest::SHA256, generated.cert.der());
    let expected: Vec<String> = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(fingerprint(&server), expected.join(":"));

    let mut roots = RootCertStore::empty();
    roots.add(generated.cert.der().clone()).unwrap();
    // TLS 1.2, as SQL Server speaks it inside TDS 7.x; a client offering only TLS 1.3 is
    // refused during the handshake.
    let mut c = tls_connect(server.port, roots.clone(), rustls::ALL_VERSIONS);
    assert_eq!(c.stream.conn.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_2));
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
