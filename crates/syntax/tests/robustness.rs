//! The parser never panics and never overflows the stack: deterministic pseudo-random inputs
//! (token soups, byte strings, mutated statements) must give `Ok` or `Err`, and whatever
//! parses must print as T-SQL that parses back to the same print. Deep nesting must fail with
//! error 191, on a thread with the default 2 MiB stack.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread;

use walden_syntax::{parse_batch, ParseError, MAX_DEPTH};

/// Marsaglia's xorshift64: deterministic, so a failure reproduces.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Words and symbols of the token soups, separated by whitespace.
const WORDS: &str = "
    SELECT FROM WHERE GROUP BY HAVING ORDER ASC DESC TOP DISTINCT INTO INSERT VALUES DEFAULT
    UPDATE SET DELETE WITH AS JOIN INNER LEFT RIGHT FULL OUTER CROSS APPLY ON UNION ALL EXCEPT
    INTERSECT AND OR NOT IN IS NULL LIKE ESCAPE BETWEEN EXISTS ANY SOME CASE WHEN THEN ELSE END
    CAST CONVERT TRY_CAST NEXT VALUE FOR OVER PARTITION OFFSET ROWS FETCH ONLY OPTION DECLARE
    TABLE IF WHILE BEGIN TRAN TRANSACTION TRY CATCH COMMIT ROLLBACK SAVE WORK BREAK CONTINUE
    RETURN PRINT THROW RAISERROR NOWAIT USE EXEC EXECUTE OUTPUT CHECKPOINT CREATE ALTER DROP
    TRUNCATE DATABASE PROCEDURE PROC INDEX SEQUENCE UNIQUE CLUSTERED PRIMARY KEY CHECK
    CONSTRAINT IDENTITY CACHE NO CYCLE MINVALUE START INCREMENT NOCOUNT XACT_ABORT LOCK_TIMEOUT
    ISOLATION LEVEL READ COMMITTED DELAYED_DURABILITY ALLOWED FORCED DISABLED RECOVERY SIMPLE
    ATOMIC NATIVE_COMPILATION SCHEMABINDING SNAPSHOT LANGUAGE HASH BUCKET_COUNT MEMORY_OPTIMIZED
    LOG NAME FILENAME SIZE MAXSIZE UNLIMITED FILEGROWTH MB INCLUDE CURRENT CURRENT_TIMESTAMP
    COUNT dbo t x #tmp \"q\" @v @@ROWCOUNT 1 0 42 1.5 .5 1e3 0x1F 'str' N'uni' ''
    ( ) ( ) , , . ; * + - / % & | ^ ~ = <> != < > <= >= !< !> += -= :: :
";

/// Fragments that contain whitespace.
const FRAGMENTS: [&str; 4] = ["[a b]", "-- comment\n", "/* c */", "\n"];

fn vocabulary() -> Vec<&'static str> {
    WORDS.split_whitespace().chain(FRAGMENTS).collect()
}

/// Statements to mutate: mutations of valid input reach deep into the grammar.
const SEEDS: &[&str] = &[
    "SELECT a, b = c + 1, 'x' AS y FROM dbo.t AS t JOIN s ON s.id = t.id WHERE a IN (1, 2) GROUP BY a HAVING COUNT(*) > 1 ORDER BY a DESC OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY",
    "WITH c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT * FROM c OPTION (MAXRECURSION 10)",
    "BEGIN TRAN INSERT INTO t (a) VALUES (1), (DEFAULT) COMMIT TRAN WITH (DELAYED_DURABILITY = ON)",
    "DECLARE @i INT = 1 WHILE @i <= 10 BEGIN SET @i += 1 IF @i = 5 CONTINUE ELSE BREAK END",
    "CREATE PROCEDURE p @a INT = 1, @b VARCHAR(10) OUTPUT AS BEGIN SET NOCOUNT ON RETURN @a END",
    "BEGIN TRY EXEC @rc = dbo.p 1, @b = @x OUTPUT END TRY BEGIN CATCH THROW END CATCH",
    "CREATE TABLE t (id INT IDENTITY(1, 1) PRIMARY KEY, v DECIMAL(10, 2) NOT NULL DEFAULT 0 CHECK (v >= 0), CONSTRAINT u UNIQUE (v DESC))",
    "CREATE SEQUENCE s AS BIGINT START WITH 1 INCREMENT BY -1 MINVALUE -10 NO MAXVALUE CYCLE CACHE 50",
    "UPDATE TOP (5) t SET @v = a = a + 1, b = DEFAULT FROM t JOIN u ON u.x = t.x WHERE NOT EXISTS (SELECT 1 FROM v)",
    "SELECT CASE WHEN a BETWEEN 1 AND 2 THEN CAST(a AS INT) ELSE CONVERT(VARCHAR(10), a, 112) END, ROW_NUMBER() OVER (PARTITION BY a ORDER BY b), NEXT VALUE FOR s FROM (VALUES (1), (2)) AS v(a)",
    "CREATE DATABASE d ON (NAME = d, FILENAME = '/x', SIZE = 10MB, FILEGROWTH = 10%) LOG ON (NAME = l, FILENAME = '/y') ALTER DATABASE d SET RECOVERY FULL",
    "RAISERROR('x %d', 16, 1, @i) WITH NOWAIT DROP INDEX IF EXISTS ix ON t DELETE TOP (1) FROM t WHERE a LIKE 'x%' ESCAPE '!'",
    "CREATE PROCEDURE n @a INT NOT NULL WITH NATIVE_COMPILATION, SCHEMABINDING, EXECUTE AS OWNER AS BEGIN ATOMIC WITH (TRANSACTION ISOLATION LEVEL = SNAPSHOT, LANGUAGE = N'us_english', DATEFIRST = 7, DELAYED_DURABILITY = ON) INSERT t VALUES (@a) IF @a > 1 BEGIN TRY THROW 50000, 'x', 1 END TRY BEGIN CATCH THROW END CATCH END",
    "CREATE TABLE m (id INT NOT NULL PRIMARY KEY NONCLUSTERED HASH WITH (BUCKET_COUNT = 8), v INT, CONSTRAINT u UNIQUE NONCLUSTERED HASH (v) WITH (BUCKET_COUNT = 8)) WITH (MEMORY_OPTIMIZED = ON, DURABILITY = SCHEMA_AND_DATA)",
];

/// Parses `sql`, reporting the input if the parser panics; what parses must round-trip.
fn check(sql: &str) {
    let result = catch_unwind(AssertUnwindSafe(|| parse_batch(sql)));
    let parsed = result.unwrap_or_else(|_| panic!("parse_batch panicked on {sql:?}"));
    match parsed {
        Ok(batch) => {
            let printed = batch.to_string();
            let reparsed = parse_batch(&printed)
                .unwrap_or_else(|error| panic!("{sql:?} printed as {printed:?}: {error}"));
            assert_eq!(printed, reparsed.to_string(), "round trip of {sql:?}");
        }
        Err(error) => check_error(sql, &error),
    }
}

fn check_error(sql: &str, error: &ParseError) {
    let lines = sql.split('\n').count() as u32;
    assert!((1..=lines).contains(&error.line), "line {} of {sql:?}: {error}", error.line);
    assert_eq!((error.severity, error.state), (15, 1), "{sql:?}");
    assert!(!error.message.is_empty());
}

fn token_soup(rng: &mut XorShift, vocabulary: &[&str]) -> String {
    let length = rng.below(40);
    let mut sql = String::new();
    for _ in 0..length {
        sql.push_str(rng.pick(vocabulary));
        sql.push_str(if rng.below(4) == 0 { "" } else { " " });
    }
    sql
}

fn byte_string(rng: &mut XorShift) -> String {
    const INTERESTING: &[u8] = b"'\"[]()@#$-*/;.,=<>!N0x \n\t\r";
    let length = rng.below(120);
    let bytes: Vec<u8> = (0..length)
        .map(|_| match rng.below(4) {
            0 => INTERESTING[rng.below(INTERESTING.len())],
            1 => rng.next() as u8,
            _ => b' ' + rng.below(95) as u8,
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A seed statement with a few tokens deleted, duplicated, swapped or replaced.
fn mutation(rng: &mut XorShift, vocabulary: &[&str]) -> String {
    let seed = SEEDS[rng.below(SEEDS.len())];
    let mut words: Vec<&str> = seed.split(' ').collect();
    for _ in 0..=rng.below(3) {
        let at = rng.below(words.len());
        match rng.below(4) {
            0 if words.len() > 1 => {
                words.remove(at);
            }
            1 => words.insert(at, words[at]),
            2 => {
                let other = rng.below(words.len());
                words.swap(at, other);
            }
            _ => words[at] = rng.pick(vocabulary),
        }
    }
    words.join(" ")
}

#[test]
fn twenty_thousand_random_inputs_never_panic() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let vocabulary = vocabulary();
    let mut parsed = 0;
    for i in 0..20_000 {
        let sql = match i % 4 {
            0 | 1 => token_soup(&mut rng, &vocabulary),
            2 => byte_string(&mut rng),
            _ => mutation(&mut rng, &vocabulary),
        };
        check(&sql);
        parsed += usize::from(parse_batch(&sql).is_ok());
    }
    // The mutations and soups must reach past the first token now and then.
    assert!(parsed > 500, "only {parsed} inputs parsed");
}

#[test]
fn the_seed_statements_parse() {
    for seed in SEEDS {
        parse_batch(seed).unwrap_or_else(|error| panic!("{seed}\n{error}"));
    }
}

/// `open` repeated `depth` times, then `middle`, then `close` repeated.
fn nest(open: &str, middle: &str, close: &str, depth: usize) -> String {
    format!("{}{middle}{}", open.repeat(depth), close.repeat(depth))
}

/// The most deeply recursing constructs, nested `depth` times.
fn deep_inputs(depth: usize) -> Vec<String> {
    vec![
        format!("SELECT {}", nest("(", "1", ")", depth)),
        format!("SELECT {}", nest("(SELECT ", "1", ")", depth)),
        format!("SELECT 1 WHERE {}", nest("EXISTS (SELECT 1 WHERE ", "1 = 1", ")", depth)),
        format!("SELECT {}", nest("CASE WHEN 1 = 1 THEN ", "1", " END", depth)),
        format!("SELECT {}", nest("CAST(", "1", " AS INT)", depth)),
        format!("SELECT {}", nest("f(", "1", ")", depth)),
        format!("SELECT {}1", "- ".repeat(depth)),
        format!("SELECT 1 WHERE {}1 = 1", "NOT ".repeat(depth)),
        format!("SELECT * FROM {}", nest("(SELECT * FROM ", "t", ") AS x", depth)),
        format!("SELECT * FROM {}", nest("(", "t", ")", depth)),
        format!("SELECT * FROM t{}", " JOIN t".repeat(depth) + &" ON 1 = 1".repeat(depth)),
        nest("(", "SELECT 1", ")", depth),
        nest("BEGIN ", "SELECT 1", " END", depth),
        nest("BEGIN TRY ", "SELECT 1", " END TRY BEGIN CATCH END CATCH", depth),
        format!("{}SELECT 1", "IF 1 = 1 ".repeat(depth)),
        format!("{}SELECT 1", "WHILE 1 = 1 ".repeat(depth)),
        format!("CREATE PROC p AS {}", nest("BEGIN ", "RETURN", " END", depth)),
    ]
}

/// Runs `check` on a thread with the default stack size of spawned threads.
fn on_default_thread(check: impl FnOnce() + Send + 'static) {
    let handle = thread::Builder::new().stack_size(2 << 20).spawn(check).expect("a thread");
    handle.join().expect("the check passes");
}

#[test]
fn ten_thousand_nested_parentheses_are_error_191() {
    on_default_thread(|| {
        let sql = format!("SELECT {}", nest("(", "1", ")", 10_000));
        let error = parse_batch(&sql).unwrap_err();
        assert_eq!(error.number, 191);
        assert_eq!(
            error.to_string(),
            "Msg 191, Level 15, State 1, Line 1\nSome part of your SQL statement is nested too \
             deeply. Rewrite the query or break it up into smaller queries."
        );
    });
}

#[test]
fn every_kind_of_deep_nesting_is_error_191() {
    on_default_thread(|| {
        for sql in deep_inputs(10_000).into_iter().chain(deep_inputs(MAX_DEPTH + 1)) {
            let error = parse_batch(&sql).unwrap_err();
            assert_eq!(error.number, 191, "{}...", &sql[..60]);
        }
    });
}

#[test]
fn moderate_nesting_parses() {
    on_default_thread(|| {
        for sql in deep_inputs(30) {
            parse_batch(&sql).unwrap_or_else(|error| panic!("{}...\n{error}", &sql[..60]));
        }
    });
}
