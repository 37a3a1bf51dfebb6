//! `walden bcp` end to end, and the bulk load's protocol edges: the real binary against a
//! `walden serve` on port 0 (and against an embedded data directory), real files in a
//! temporary directory.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::client::Client;
use common::server::Server;
use common::PASSWORD;
use walden_tds::{
    encode_tokens, Column, Done, DoneStatus, EnvChange, PacketStatus, PacketType, TdsValue, Token,
    TypeInfo,
};

/// The rows every round trip copies: NULLs (empty fields), the empty string (a NUL), text
/// beyond Latin-1 and the BMP, dates, times with 7 digits, decimals, binary and floats, with
/// `|` between fields and CRLF after rows. The first line is a header, skipped with -F 2.
const DATA: &str = "id|name|amount|day|at|bin|f\r\n\
    1|Grüße, 日本語 ✓ 😀|12.3456|2024-02-29|2024-02-29 13:45:56.1234567|DEADBEEF|0.1\r\n\
    2||||||\r\n\
    3|\0|-1.5000|1999-12-31|1999-12-31 23:59:59.9999999|00|-2.5\r\n\
    4|tab\there|0.0000|0001-01-01|9999-12-31 23:59:59.9999999|0102030405|123456.789\r\n";

const TABLE: &str = "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, name NVARCHAR(40) NULL, \
    amount DECIMAL(12,4) NULL, day DATE NULL, at DATETIME2 NULL, bin VARBINARY(8) NULL, \
    f FLOAT NULL)";

fn walden(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_walden"));
    command.args(args).env_remove("WALDEN_DATA").env_remove("SQLCMDPASSWORD");
    common::sql::run(command, None)
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "failed: {}", text(&o));
    text(&o)
}

/// `walden bcp` against `server` with the given arguments after TABLE DIRECTION FILE.
fn bcp(server: &Server, table: &str, direction: &str, file: &Path, rest: &[&str]) -> Output {
    let target = format!("127.0.0.1,{}", server.port);
    let mut args = vec!["bcp", table, direction, file.to_str().unwrap(), "-S", &target];
    args.extend(["-U", "sa", "-P", PASSWORD, "-d", "bcp_test"]);
    args.extend(rest);
    walden(&args)
}

/// Runs `query` in `database` with `walden sql -S`; the last line it prints.
fn sql(server: &Server, database: &str, query: &str) -> String {
    let target = format!("127.0.0.1,{}", server.port);
    let query = format!("SET NOCOUNT ON; {query}");
    let args = [
        "sql", "-S", &target, "-U", "sa", "-P", PASSWORD, "-d", database, "-b", "-h", "-1", "-W",
        "-Q", &query,
    ];
    ok(walden(&args)).lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default().trim().to_string()
}

#[test]
fn round_trip_over_tds_with_batches_and_terminators() {
    let server = Server::start(&[]);
    sql(&server, "master", "CREATE DATABASE bcp_test");
    sql(&server, "bcp_test", TABLE);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, DATA).unwrap();
    let terms = ["-c", "-t", "|", "-r", "\\r\\n"];
    let shown =
        ok(bcp(&server, "t", "in", &input, &[&terms[..], &["-F", "2", "-b", "3"]].concat()));
    assert!(shown.contains("3 rows sent to SQL Server. Total sent: 3"), "{shown}");
    assert!(shown.contains("1 rows sent to SQL Server. Total sent: 4"), "{shown}");
    assert!(shown.contains("4 rows copied."), "{shown}");
    assert!(shown.contains("rows per sec."), "{shown}");
    assert_eq!(
        sql(
            &server,
            "bcp_test",
            "SELECT COUNT(*), SUM(CASE WHEN name IS NULL THEN 0 ELSE 1 END), SUM(ISNULL(amount, 0)) FROM t"
        ),
        "4 3 10.8456"
    );

    let output = dir.path().join("out.txt");
    ok(bcp(&server, "t", "out", &output, &terms));
    let expected: String = DATA.split_inclusive("\r\n").skip(1).collect();
    assert_eq!(std::fs::read_to_string(&output).unwrap(), expected);

    // queryout, default terminators; and -L to stop early.
    let query = dir.path().join("query.txt");
    ok(bcp(
        &server,
        "SELECT id, day FROM t WHERE id >= 3 ORDER BY id",
        "queryout",
        &query,
        &["-c"],
    ));
    assert_eq!(std::fs::read_to_string(&query).unwrap(), "3\t1999-12-31\n4\t0001-01-01\n");
    sql(&server, "bcp_test", "CREATE TABLE u (id INT, day DATE)");
    ok(bcp(&server, "u", "in", &query, &["-c", "-L", "1"]));
    assert_eq!(sql(&server, "bcp_test", "SELECT COUNT(*) FROM u"), "1");
}

#[test]
fn errors_are_reported_and_undo_the_batch() {
    let server = Server::start(&[]);
    sql(&server, "master", "CREATE DATABASE bcp_test");
    sql(&server, "bcp_test", "CREATE TABLE k (id INT NOT NULL PRIMARY KEY, n INT NULL)");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.txt");

    // A field that does not convert: the row is reported and skipped, the others load.
    std::fs::write(&file, "1\t10\n2\tten\n3\t30\n").unwrap();
    let shown = ok(bcp(&server, "k", "in", &file, &["-c"]));
    assert!(shown.contains("Error = row 2: column 2"), "{shown}");
    assert!(shown.contains("2 rows copied."), "{shown}");
    // More such rows than -m allows stop the copy.
    std::fs::write(&file, "7\tx\n8\ty\n").unwrap();
    let o = bcp(&server, "k", "in", &file, &["-c", "-m", "1"]);
    assert!(!o.status.success() && text(&o).contains("BCP copy in failed"), "{}", text(&o));

    // A duplicate key: the server's 2627, and nothing of that batch stays.
    std::fs::write(&file, "4\t40\n1\t11\n").unwrap();
    let o = bcp(&server, "k", "in", &file, &["-c"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Msg 2627"), "{}", text(&o));
    assert_eq!(sql(&server, "bcp_test", "SELECT COUNT(*) FROM k"), "2");

    // No such table, no such file.
    let o = bcp(&server, "nope", "in", &file, &["-c"]);
    assert!(!o.status.success() && text(&o).contains("Msg 208"), "{}", text(&o));
    let o = bcp(&server, "k", "in", &dir.path().join("missing.txt"), &["-c"]);
    assert!(!o.status.success() && text(&o).contains("cannot open"), "{}", text(&o));
}

#[test]
fn round_trip_on_an_embedded_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    ok(walden(&[
        "sql",
        "--data",
        data,
        "-b",
        "-Q",
        &format!("CREATE DATABASE bcp_test; USE bcp_test; {TABLE}"),
    ]));
    let input = dir.path().join("in.txt");
    std::fs::write(&input, DATA).unwrap();
    let common = ["--data", data, "-d", "bcp_test", "-c", "-t", "|", "-r", "\\r\\n"];
    ok(walden(&[&["bcp", "t", "in", input.to_str().unwrap(), "-F", "2"], &common[..]].concat()));
    let output = dir.path().join("out.txt");
    ok(walden(&[&["bcp", "t", "out", output.to_str().unwrap()], &common[..]].concat()));
    let expected: String = DATA.split_inclusive("\r\n").skip(1).collect();
    assert_eq!(std::fs::read_to_string(&output).unwrap(), expected);
}

#[test]
fn help_lists_every_flag() {
    let help = ok(walden(&["bcp", "--help"]));
    for flag in [
        "-c", "-t", "-r", "-F", "-L", "-b", "-m", "-E", "-k", "-h", "-S", "-U", "-P", "-d",
        "--data",
    ] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(flag)),
            "{flag} missing from:\n{help}"
        );
    }
}

/// A Bulk Load message: COLMETADATA for one INT column, `rows`, DONE.
fn bulk_message(rows: &[Option<i32>]) -> Vec<u8> {
    let mut tokens = vec![Token::ColMetadata(vec![Column::new("id", TypeInfo::IntN(4), true)])];
    tokens.extend(rows.iter().map(|r| Token::Row(vec![r.map_or(TdsValue::Null, TdsValue::Int)])));
    tokens.push(Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 }));
    encode_tokens(&tokens).unwrap()
}

fn error_numbers(tokens: &[Token]) -> Vec<i32> {
    tokens
        .iter()
        .filter_map(|t| if let Token::Error(m) = t { Some(m.number) } else { None })
        .collect()
}

fn count_of(tokens: &[Token]) -> Option<u64> {
    tokens.iter().find_map(|t| match t {
        Token::Done(d) if d.status.contains(DoneStatus::COUNT) => Some(d.row_count),
        _ => None,
    })
}

#[test]
fn bulk_load_protocol_edges() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    c.batch("CREATE TABLE b (id INT NULL, n INT NOT NULL DEFAULT 5)");

    // A Bulk Load message without INSERT BULK before it.
    c.send(PacketType::BulkLoad, &bulk_message(&[Some(1)]));
    assert_eq!(error_numbers(&c.tokens()), vec![4002]);

    // Unknown table and column at INSERT BULK (the batch's own errors).
    assert_eq!(error_numbers(&c.batch("INSERT BULK nope (id INT)")), vec![208]);
    assert_eq!(error_numbers(&c.batch("INSERT BULK b (nope INT)")), vec![207]);
    assert_eq!(error_numbers(&c.batch("INSERT BULK b (id INT) WITH (NO_SUCH_OPTION)")), vec![102]);

    // A load in many small packets.
    assert!(error_numbers(&c.batch("INSERT BULK b (id INT) WITH (ROWS_PER_BATCH = 3)")).is_empty());
    let rows: Vec<Option<i32>> = (0..3000).map(|i| (i % 7 != 0).then_some(i)).collect();
    let message = bulk_message(&rows);
    let mut wire = Vec::new();
    walden_tds::PacketWriter::new(512, 0).unwrap().write_message(
        PacketType::BulkLoad,
        PacketStatus::NONE,
        &message,
        &mut wire,
    );
    std::io::Write::write_all(&mut c.stream, &wire).unwrap();
    let answer = c.tokens();
    assert!(error_numbers(&answer).is_empty(), "{answer:?}");
    assert_eq!(count_of(&answer), Some(3000));
    assert_eq!(c.scalar("SELECT COUNT(*) FROM b WHERE id IS NULL"), TdsValue::Int(429));

    // A message cut short (its last packet has EOM but the rows stop mid-token): the load is
    // undone, the connection goes on.
    c.batch("INSERT BULK b (id INT)");
    let message = bulk_message(&[Some(1), Some(2)]);
    c.send(PacketType::BulkLoad, &message[..message.len() - 16]);
    assert_eq!(error_numbers(&c.tokens()), vec![4002]);
    assert_eq!(c.scalar("SELECT COUNT(*) FROM b"), TdsValue::Int(3000));

    // ORDER naming the clustered key is a promise the rows must keep (4819); the INSERT BULK
    // lasts one message only.
    c.batch("CREATE TABLE bk (id INT NOT NULL PRIMARY KEY)");
    c.batch("INSERT BULK bk (id INT) WITH (ORDER (id ASC))");
    c.send(PacketType::BulkLoad, &bulk_message(&[Some(1), Some(3), Some(2)]));
    assert_eq!(error_numbers(&c.tokens()), vec![4819]);
    c.send(PacketType::BulkLoad, &bulk_message(&[Some(1)]));
    assert_eq!(error_numbers(&c.tokens()), vec![4002]);
    assert_eq!(c.scalar("SELECT COUNT(*) FROM bk"), TdsValue::Int(0));
    // On a heap, ORDER is ignored, as SQL Server ignores it.
    c.batch("INSERT BULK b (id INT) WITH (ORDER (id ASC))");
    c.send(PacketType::BulkLoad, &bulk_message(&[Some(1), Some(3), Some(2)]));
    assert_eq!(count_of(&c.tokens()), Some(3));
    assert_eq!(c.scalar("SELECT COUNT(*) FROM b"), TdsValue::Int(3003));

    // Under XACT_ABORT a failed load ends the transaction, and the client is told.
    c.batch("CREATE TABLE u (id INT PRIMARY KEY)");
    c.batch("SET XACT_ABORT ON; BEGIN TRAN; INSERT BULK u (id INT)");
    c.send(PacketType::BulkLoad, &bulk_message(&[Some(1), Some(1)]));
    let answer = c.tokens();
    assert_eq!(error_numbers(&answer), vec![2627]);
    let rolled_back =
        |t: &Token| matches!(t, Token::EnvChange(EnvChange::RollbackTransaction { .. }));
    assert!(answer.iter().any(rolled_back), "{answer:?}");
    assert_eq!(c.scalar("SELECT @@TRANCOUNT"), TdsValue::Int(0));
}

/// A bulk load into SMALLDATETIME and SMALLMONEY columns whose client sends DATETIME and
/// MONEY values fits them as an INSERT does: to the minute, and 298 / 8115 out of range
/// (the load undone). `ALTER COLUMN` to those types does the same to the rows it converts.
#[test]
fn bulk_load_and_alter_column_round_into_smalldatetime_and_smallmoney() {
    let server = Server::start(&[]);
    let mut c = Client::connect(server.port);
    c.batch("CREATE TABLE s (d SMALLDATETIME NULL, m SMALLMONEY NULL)");
    let message = |rows: &[(TdsValue, TdsValue)]| {
        let mut tokens = vec![Token::ColMetadata(vec![
            Column::new("d", TypeInfo::DateTimeN(8), true),
            Column::new("m", TypeInfo::MoneyN(8), true),
        ])];
        tokens.extend(rows.iter().map(|(d, m)| Token::Row(vec![d.clone(), m.clone()])));
        tokens.push(Token::Done(Done { status: DoneStatus::NONE, cur_cmd: 0, row_count: 0 }));
        encode_tokens(&tokens).unwrap()
    };
    // 2020-01-01 (day 43,829) at 10:00:30 rounds up, 10:00:29.997 down.
    let at = |seconds: u32, ticks: u32| TdsValue::DateTime {
        days: 43_829,
        ticks: (10 * 3600 + seconds) * 300 + ticks,
    };
    let load = |c: &mut Client, rows: &[(TdsValue, TdsValue)]| {
        assert!(error_numbers(&c.batch("INSERT BULK s (d DATETIME, m MONEY)")).is_empty());
        c.send(PacketType::BulkLoad, &message(rows));
        c.tokens()
    };
    let answer = load(
        &mut c,
        &[(at(30, 0), TdsValue::Money(12_345)), (at(29, 299), TdsValue::Money(-2_147_483_648))],
    );
    assert!(error_numbers(&answer).is_empty(), "{answer:?}");
    assert_eq!(count_of(&answer), Some(2));
    assert_eq!(
        c.scalar(
            "SELECT STRING_AGG(CONVERT(VARCHAR(30), d, 121) + ' ' + CONVERT(VARCHAR(30), m, 2), \
             ', ') WITHIN GROUP (ORDER BY m DESC) FROM s"
        ),
        TdsValue::VarChar(
            b"2020-01-01 10:01:00.000 1.2345, 2020-01-01 10:00:00.000 -214748.3648".to_vec()
        )
    );
    let past_2079 = TdsValue::DateTime { days: 65_536, ticks: 0 };
    let answer = load(&mut c, &[(at(0, 0), TdsValue::Null), (past_2079, TdsValue::Null)]);
    assert_eq!(error_numbers(&answer), vec![298]);
    let answer = load(&mut c, &[(TdsValue::Null, TdsValue::Money(2_147_483_648))]);
    assert_eq!(error_numbers(&answer), vec![8115]);
    assert_eq!(c.scalar("SELECT COUNT(*) FROM s"), TdsValue::Int(2));

    // ALTER COLUMN: rounded, or refused with the table unchanged.
    c.batch(
        "CREATE TABLE a (d DATETIME, m MONEY); \
         INSERT a VALUES ('2020-01-01 10:00:40', 1.23456)",
    );
    let answer = c.batch(
        "ALTER TABLE a ALTER COLUMN d SMALLDATETIME; ALTER TABLE a ALTER COLUMN m SMALLMONEY",
    );
    assert!(error_numbers(&answer).is_empty(), "{answer:?}");
    assert_eq!(
        c.scalar("SELECT CONVERT(VARCHAR(30), d, 121) + ' ' + CONVERT(VARCHAR(30), m, 2) FROM a"),
        TdsValue::VarChar(b"2020-01-01 10:01:00.000 1.2346".to_vec())
    );
    c.batch("CREATE TABLE b2 (d DATETIME, m MONEY); INSERT b2 VALUES ('2090-01-01', 300000)");
    assert_eq!(error_numbers(&c.batch("ALTER TABLE b2 ALTER COLUMN d SMALLDATETIME")), [298]);
    assert_eq!(error_numbers(&c.batch("ALTER TABLE b2 ALTER COLUMN m SMALLMONEY")), [8115]);
    assert_eq!(
        c.scalar("SELECT TYPE_NAME(system_type_id) FROM sys.columns WHERE name = 'd' AND object_id = OBJECT_ID('b2')"),
        TdsValue::NVarChar("datetime".into())
    );
}
