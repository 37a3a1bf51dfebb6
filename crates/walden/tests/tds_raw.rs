#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! `walden serve` driven with the codec directly, for what tiberius cannot send: an RPC to a
//! procedure by name with an OUTPUT parameter, transaction-manager requests, the connection
//! limit, and shutdown on SIGTERM.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;

use walden_tds::*;

mod common;

use common::{start_server as start, PASSWORD};

struct Client {
    stream: TcpStream,
    reader: MessageReader,
}

impl Client {
    fn send(&mut self, ty: PacketType, payload: &[u8]) {
        let mut wire = Vec::new();
        PacketWriter::default().write_message(ty, PacketStatus::NONE, payload, &mut wire);
        self.stream.write_all(&wire).unwrap();
    }

    fn response(&mut self) -> Vec<Token> {
        let mut buf = [0u8; 8192];
        loop {
            if let Some(m) = self.reader.next_message().unwrap() {
                return decode_tokens(&m.payload).unwrap();
            }
            let n = self.stream.read(&mut buf).unwrap();
            assert!(n > 0, "server closed the connection");
            self.reader.push(&buf[..n]);
        }
    }

    fn connect(port: u16) -> (Client, Vec<Token>) {
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut c = Client { stream, reader: MessageReader::new() };
        let prelogin =
            Prelogin { encryption: Some(Encryption::NotSupported), ..Prelogin::default() };
        c.send(PacketType::PreLogin, &prelogin.encode().unwrap());
        let answer = c.reader_message();
        assert_eq!(Prelogin::decode(&answer).unwrap().encryption, Some(Encryption::NotSupported));
        let login = Login7 {
            tds_version: TDS_7_4,
            username: "sa".into(),
            password: PASSWORD.into(),
            ..Login7::default()
        };
        c.send(PacketType::Login7, &login.encode().unwrap());
        let tokens = c.response();
        (c, tokens)
    }

    fn reader_message(&mut self) -> Vec<u8> {
        let mut buf = [0u8; 8192];
        loop {
            if let Some(m) = self.reader.next_message().unwrap() {
                return m.payload;
            }
            let n = self.stream.read(&mut buf).unwrap();
            assert!(n > 0);
            self.reader.push(&buf[..n]);
        }
    }

    fn batch(&mut self, text: &str) -> Vec<Token> {
        let batch = SqlBatch { headers: AllHeaders::with_transaction(0), text: text.into() };
        self.send(PacketType::SqlBatch, &batch.encode().unwrap());
        self.response()
    }
}

fn errors(tokens: &[Token]) -> Vec<String> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) => Some(m.message.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn named_procedure_rpc_with_output_and_return_status() {
    let (mut child, port, _data) = start(&[]);
    let (mut c, login) = Client::connect(port);
    assert!(login.iter().any(|t| matches!(t, Token::LoginAck(_))), "{login:?}");
    let created = c.batch(
        "CREATE PROCEDURE add_one @x int, @y int OUTPUT AS BEGIN SET @y = @x + 1; RETURN 7 END",
    );
    assert!(errors(&created).is_empty(), "{created:?}");

    let mut y = RpcParam::input("@y", TdsValue::Null);
    y.ty = TypeInfo::IntN(4);
    y.status = ParamStatus::BY_REF;
    let request = RpcRequest {
        headers: AllHeaders::with_transaction(0),
        calls: vec![RpcCall {
            proc: RpcProc::Name("add_one".into()),
            options: RpcOptions::NONE,
            params: vec![RpcParam::input("@x", TdsValue::Int(41)), y],
        }],
    };
    c.send(PacketType::Rpc, &request.encode().unwrap());
    let tokens = c.response();
    assert!(errors(&tokens).is_empty(), "{tokens:?}");
    assert!(tokens.contains(&Token::ReturnStatus(7)), "{tokens:?}");
    let value = tokens.iter().find_map(|t| match t {
        Token::ReturnValue(v) => Some((v.name.clone(), v.value.clone())),
        _ => None,
    });
    assert_eq!(value, Some(("@y".to_string(), TdsValue::Int(42))));
    assert!(
        matches!(tokens.last(), Some(Token::DoneProc(d)) if !d.status.contains(DoneStatus::MORE))
    );

    // Transaction-manager requests: BEGIN and ROLLBACK with their ENVCHANGEs.
    let begin = TransMgrRequest {
        headers: AllHeaders::with_transaction(0),
        kind: TransMgrKind::Begin(NewTransaction {
            isolation: IsolationLevel::NoChange,
            name: String::new(),
        }),
    };
    c.send(PacketType::TransMgr, &begin.encode().unwrap());
    let tokens = c.response();
    let descriptor = tokens.iter().find_map(|t| match t {
        Token::EnvChange(EnvChange::BeginTransaction { descriptor }) => Some(*descriptor),
        _ => None,
    });
    assert!(descriptor.is_some(), "{tokens:?}");
    c.batch("CREATE TABLE r (id int)");
    let rollback = TransMgrRequest {
        headers: AllHeaders::with_transaction(descriptor.unwrap()),
        kind: TransMgrKind::Rollback { name: String::new(), then_begin: None },
    };
    c.send(PacketType::TransMgr, &rollback.encode().unwrap());
    let tokens = c.response();
    assert!(
        tokens.contains(&Token::EnvChange(EnvChange::RollbackTransaction {
            descriptor: descriptor.unwrap()
        })),
        "{tokens:?}"
    );
    let tokens = c.batch("SELECT * FROM r");
    assert!(tokens.iter().any(|t| matches!(t, Token::Error(m) if m.number == 208)), "{tokens:?}");

    // SIGTERM: the server closes the session, the instance, and exits 0.
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    assert!(child.wait().unwrap().success());
}

#[test]
fn connections_over_the_limit_are_refused() {
    let (mut child, port, _data) = start(&["--max-connections", "1"]);
    let (_first, tokens) = Client::connect(port);
    assert!(tokens.iter().any(|t| matches!(t, Token::LoginAck(_))));
    let (_second, tokens) = Client::connect(port);
    assert!(tokens.iter().any(|t| matches!(t, Token::Error(m) if m.number == 17809)), "{tokens:?}");
    let _ = child.kill();
    let _ = child.wait();
}
