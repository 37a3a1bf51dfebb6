//! The client against fake servers over TCP and against token streams cut at every byte:
//! tokens come out whole and in order, events arrive before the response ends, and a refused
//! login, a hang-up or a silent server each end in the error a user should see.

#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::sync::mpsc;

use walden_tds::{encode_tokens, Collation, Decimal, Done, LoginAck, TDS_7_4};

use super::*;
use walden_tds::token::ROW;
use walden_tds::TypeInfo;

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
        let answer = Prelogin { encryption: Some(Encryption::NotSupported), ..Prelogin::default() };
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
