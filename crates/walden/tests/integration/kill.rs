#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! The kill test: `walden serve` is SIGKILLed under a commit workload and restarted on the same
//! data directory, three times, and what survives is checked against what it acknowledged.
//!
//! Two databases: `k1` with the default durability (DELAYED_DURABILITY = DISABLED, so a
//! `COMMIT WITH (DELAYED_DURABILITY = ON)` is fully durable there anyway) and `k2` with
//! DELAYED_DURABILITY = ALLOWED. Client threads loop: pick a database, and in one transaction
//! take the next number from a per-database counter row, insert `(client, seq, durable, n)`
//! into `t`, and commit fully durable or with delayed durability. The counter's exclusive row
//! lock, taken by `UPDATE c SET n = n + 1` before it reads `n` and held to the commit,
//! serialises the transactions of a database, so the counter numbers them in commit order.
//! A commit counts as acknowledged when its batch's whole response arrived without
//! an ERROR token. After the restart, per database:
//!
//! * every acknowledged fully durable commit is present, with its number;
//! * the surviving numbers are exactly 1..m (no gaps): the survivors are a prefix of the commit
//!   order, whatever delayed commits the kill lost; the counter row says m too;
//! * every acknowledged commit numbered m or less is present (it is in the prefix).
//!
//! The restart's stderr must report recovery of both databases.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use walden_tds::*;

use crate::common;

use common::client::Client;
use common::server::{serve_command, Server};

const DATABASES: [&str; 2] = ["k1", "k2"];
const CLIENTS: usize = 6;
const ROUNDS: usize = 3;
/// How long the workload runs before the kill.
const WORKLOAD: Duration = Duration::from_millis(2000);

// On the shared raw client: the server is up while these run.
impl Client {
    /// Runs a batch that must succeed.
    fn run(&mut self, text: &str) -> Vec<Token> {
        let tokens = self.batch(text);
        assert!(!tokens.iter().any(|t| matches!(t, Token::Error(_))), "{text}: {tokens:?}");
        tokens
    }
}

fn int(v: &TdsValue) -> i64 {
    match v {
        TdsValue::TinyInt(n) => i64::from(*n),
        TdsValue::SmallInt(n) => i64::from(*n),
        TdsValue::Int(n) => i64::from(*n),
        TdsValue::BigInt(n) => *n,
        TdsValue::Bit(b) => i64::from(*b),
        other => panic!("not an integer: {other:?}"),
    }
}

fn rows(tokens: &[Token]) -> Vec<Vec<i64>> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Row(v) | Token::NbcRow(v) => Some(v.iter().map(int).collect()),
            _ => None,
        })
        .collect()
}

/// A commit the server acknowledged.
#[derive(Debug, Clone, Copy)]
struct Ack {
    db: usize,
    client: i64,
    seq: i64,
    /// Asked for delayed durability.
    delayed: bool,
    /// The commit's number in its database's commit order.
    n: i64,
}

impl Ack {
    /// Whether the commit was fully durable: `k1` does not allow delayed durability.
    fn durable(&self) -> bool {
        !self.delayed || DATABASES[self.db] == "k1"
    }
}

/// One client: loops committing until the server dies or `stop` is set; its acknowledged
/// commits.
fn client(port: u16, client: i64, stop: Arc<AtomicBool>) -> Vec<Ack> {
    let mut acks = Vec::new();
    let Ok(mut conns) = DATABASES
        .iter()
        .map(|db| Client::try_connect(port, db))
        .collect::<std::io::Result<Vec<Client>>>()
    else {
        return acks;
    };
    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ (client as u64).wrapping_mul(0x2545_F491);
    let mut seq = 0;
    while !stop.load(Ordering::Relaxed) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let db = (rng % 2) as usize;
        let delayed = (rng >> 8) % 3 < 2; // two commits in three ask for delayed durability
        seq += 1;
        let commit = if delayed { "COMMIT WITH (DELAYED_DURABILITY = ON)" } else { "COMMIT" };
        let text = format!(
            "BEGIN TRAN; \
             UPDATE c SET n = n + 1 WHERE id = 1; \
             DECLARE @n INT; SELECT @n = n FROM c WHERE id = 1; \
             INSERT INTO t (client, seq, durable, n) VALUES ({client}, {seq}, {}, @n); \
             SELECT @n AS n; \
             {commit}",
            u8::from(!delayed)
        );
        let Ok(tokens) = conns[db].try_batch(&text) else { break };
        let failed = tokens.iter().any(|t| matches!(t, Token::Error(_)))
            || tokens
                .iter()
                .any(|t| matches!(t, Token::Done(d) if d.status.contains(DoneStatus::ERROR)));
        assert!(!failed, "a commit failed while the server was up: {tokens:?}");
        let n = rows(&tokens)[0][0];
        acks.push(Ack { db, client, seq, delayed, n });
    }
    acks
}

/// Checks what survived in database `db` against the acknowledged commits; returns m.
fn check(c: &mut Client, db: usize, acks: &[Ack]) -> i64 {
    let name = DATABASES[db];
    let survivors = rows(&c.run(&format!("SELECT n, client, seq FROM {name}.dbo.t ORDER BY n")));
    let m = survivors.len() as i64;
    for (expected, row) in (1..).zip(&survivors) {
        assert_eq!(row[0], expected, "{name}: commit {expected} is missing or doubled (m = {m})");
    }
    let counter = rows(&c.run(&format!("SELECT n FROM {name}.dbo.c WHERE id = 1")));
    assert_eq!(counter, vec![vec![m]], "{name}: the counter disagrees with the table");
    for ack in acks.iter().filter(|a| a.db == db) {
        if ack.durable() {
            assert!(ack.n <= m, "{name}: durable commit {ack:?} lost (m = {m})");
        }
        if ack.n <= m {
            let row = &survivors[(ack.n - 1) as usize];
            assert_eq!((row[1], row[2]), (ack.client, ack.seq), "{name}: commit {ack:?}");
        }
    }
    m
}

#[test]
fn sigkill_loses_no_durable_commit_and_keeps_a_prefix_of_the_commit_order() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut server = Server::spawn(serve_command(&data), None);
    {
        let mut setup = Client::connect(server.port);
        setup.run("CREATE DATABASE k1; CREATE DATABASE k2");
        setup.run("ALTER DATABASE k2 SET DELAYED_DURABILITY = ALLOWED");
        for db in DATABASES {
            setup.run(&format!(
                "USE {db}; \
                 CREATE TABLE t (client INT NOT NULL, seq INT NOT NULL, durable BIT NOT NULL, \
                 n INT NOT NULL, PRIMARY KEY (client, seq)); \
                 CREATE TABLE c (id INT PRIMARY KEY, n INT NOT NULL); \
                 INSERT INTO c VALUES (1, 0)"
            ));
        }
    }

    let mut acks: Vec<Ack> = Vec::new();
    for round in 0..ROUNDS {
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<JoinHandle<Vec<Ack>>> = (0..CLIENTS)
            .map(|i| {
                let stop = Arc::clone(&stop);
                let id = (round * 100 + i) as i64;
                let port = server.port;
                std::thread::spawn(move || client(port, id, stop))
            })
            .collect();
        std::thread::sleep(WORKLOAD);
        server.child.kill().unwrap(); // SIGKILL
        server.child.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        let round_acks: Vec<Ack> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();

        let per_db = |f: &dyn Fn(&Ack) -> bool| {
            DATABASES
                .map(|name| round_acks.iter().filter(|a| DATABASES[a.db] == name && f(a)).count())
        };
        let durable = per_db(&|a| a.durable());
        let delayed = per_db(&|a| !a.durable());
        assert!(durable[0] > 0 && durable[1] > 0, "round {round}: too few durable commits");
        assert!(delayed[1] > 0, "round {round}: no delayed commit in k2");
        // k1 is DISABLED: its commits that asked for delayed durability are fully durable,
        // and the check after the restart holds them to that.
        let asked_delayed = per_db(&|a| a.delayed);
        assert!(asked_delayed[0] > 0, "round {round}: no k1 commit asked for delayed durability");
        acks.extend(round_acks);

        server = Server::spawn(serve_command(&data), None);
        let report = server.startup();
        for db in DATABASES {
            let prefix = format!("database {db}: recovered ");
            assert!(report.iter().any(|l| l.contains(&prefix)), "no recovery of {db}: {report:?}");
        }
        let mut c = Client::connect(server.port);
        let survived = [check(&mut c, 0, &acks), check(&mut c, 1, &acks)];
        let lost = acks.iter().filter(|a| a.n > survived[a.db]).count();
        eprintln!(
            "round {round}: acknowledged durable {durable:?}, delayed {delayed:?}; \
             surviving commits {survived:?}; acknowledged delayed commits lost: {lost}"
        );
        // Delayed commits the kill lost are forgotten: their numbers are reused from now on.
        acks.retain(|a| a.n <= survived[a.db]);
    }
}
