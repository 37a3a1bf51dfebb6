//! The round-trip property on real scripts and mutations of them: for every batch of the
//! golden scripts (`crates/sql/tests/sql/*.sql`), the acceptance scripts and the sample
//! databases (`shared/acceptance`, `shared/samples`, beside the repository), and for twenty
//! thousand deterministic token-level mutations of those batches, the parser returns without
//! panicking, and whatever parses prints as T-SQL that parses again, to a tree that prints
//! the same and equals the first tree (spans and kept source text aside). The `parse` fuzz
//! target in `fuzz/` checks the same property on arbitrary bytes.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use walden_syntax::lexer::{tokenize, TokenKind};
use walden_syntax::{parse_batch, Batch};

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
}

/// The `.sql` files of `dir`, sorted by name; panics if the directory is missing or empty.
fn scripts_in(dir: &Path) -> Vec<(String, String)> {
    let entries = fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error} (the corpus is missing)", dir.display()));
    let mut scripts: Vec<(String, String)> = entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sql"))
        .map(|path| {
            let bytes = fs::read(&path).unwrap();
            (path.display().to_string(), String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    assert!(!scripts.is_empty(), "no .sql files in {}", dir.display());
    scripts.sort();
    scripts
}

/// Splits a script into batches at `GO` lines (`GO n` too), as `sqlcmd` does.
fn batches(script: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for line in script.lines() {
        let mut words = line.split_whitespace();
        let go = words.next().is_some_and(|word| word.eq_ignore_ascii_case("go"));
        let count = words.next();
        if go && words.next().is_none() && count.is_none_or(|n| n.parse::<u64>().is_ok()) {
            out.push(String::new());
        } else {
            let batch = out.last_mut().unwrap();
            batch.push_str(line);
            batch.push('\n');
        }
    }
    out.retain(|batch| !batch.trim().is_empty());
    out
}

/// Every batch of every corpus script.
fn corpus() -> Vec<String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs: [PathBuf; 3] = [
        manifest.join("../sql/tests/sql"),
        manifest.join("../../../shared/acceptance"),
        manifest.join("../../../shared/samples"),
    ];
    dirs.iter().flat_map(|dir| scripts_in(dir)).flat_map(|(_, script)| batches(&script)).collect()
}

/// The tree's `Debug` form without what legitimately differs between a batch and its print:
/// source positions, the parser's identities of its nodes (each parse makes new ones), and
/// the batch text that procedures and views keep as their definition.
fn shape(batch: &Batch) -> String {
    let debug = format!("{batch:?}");
    let spans = erase_between(&debug, "Span {", '}');
    let ids = erase_between(&spans, "ParsedId(", ')');
    erase_strings_after(&ids, "definition: ")
}

/// `debug` without each run from `start` to the next `end` character, both included.
fn erase_between(debug: &str, start: &str, end: char) -> String {
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find(start) {
        out.push_str(&rest[..at]);
        let close = rest[at..].find(end).unwrap();
        rest = &rest[at + close + 1..];
    }
    out.push_str(rest);
    out
}

/// Replaces the string literal after each `field` with `".."`.
fn erase_strings_after(debug: &str, field: &str) -> String {
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(at) = rest.find(field) {
        let value = at + field.len();
        out.push_str(&rest[..value]);
        rest = &rest[value..];
        if !rest.starts_with('"') {
            continue;
        }
        // Debug escapes quotes and backslashes inside the literal.
        let mut chars = rest.char_indices().skip(1);
        let mut end = rest.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        out.push_str("\"..\"");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// How many mutated batches the property test checks (about two seconds in the test profile).
const MUTATIONS: usize = 20_000;

/// The outcome of checking one input.
enum Outcome {
    Parsed,
    Refused,
}

/// Parses `sql`; if it parses, checks that its print parses to the same tree and prints the
/// same. Returns a description of the first violation.
fn check(sql: &str) -> Result<Outcome, String> {
    let parsed = catch_unwind(AssertUnwindSafe(|| parse_batch(sql)))
        .map_err(|_| format!("parse_batch panicked on {sql:?}"))?;
    let Ok(batch) = parsed else { return Ok(Outcome::Refused) };
    let printed = batch.to_string();
    let reparsed = parse_batch(&printed)
        .map_err(|error| format!("{sql:?}\nprinted as {printed:?}\nwhich fails: {error}"))?;
    let reprinted = reparsed.to_string();
    if reprinted != printed {
        return Err(format!("{sql:?}\nprinted as {printed:?}\nthen as {reprinted:?}"));
    }
    if shape(&batch) != shape(&reparsed) {
        return Err(format!(
            "{sql:?}\nprinted as {printed:?}\nparses to a different tree:\n{}\n{}",
            shape(&batch),
            shape(&reparsed)
        ));
    }
    Ok(Outcome::Parsed)
}

/// A batch with one to four tokens deleted, duplicated, swapped, replaced by a token of
/// another batch, or the batch cut short at a token.
fn mutate(rng: &mut XorShift, batch: &str, donor: &str) -> String {
    let (Ok(tokens), Ok(donors)) = (tokenize(batch), tokenize(donor)) else {
        return batch.to_string();
    };
    let mut pieces: Vec<&str> = tokens
        .iter()
        .filter(|token| token.kind != TokenKind::Eof)
        .map(|token| &batch[token.span.start..token.span.end])
        .collect();
    let donors: Vec<&str> =
        donors.iter().map(|token| token.text).filter(|t| !t.is_empty()).collect();
    if pieces.is_empty() || donors.is_empty() {
        return batch.to_string();
    }
    for _ in 0..=rng.below(4) {
        if pieces.is_empty() {
            break;
        }
        let at = rng.below(pieces.len());
        match rng.below(5) {
            0 => {
                pieces.remove(at);
            }
            1 => pieces.insert(at, pieces[at]),
            2 => {
                let other = rng.below(pieces.len());
                pieces.swap(at, other);
            }
            3 => pieces[at] = donors[rng.below(donors.len())],
            _ => pieces.truncate(at + 1),
        }
    }
    // Line breaks keep `--` comments from swallowing what follows them.
    pieces.join(if rng.below(2) == 0 { " " } else { "\n" })
}

#[test]
fn the_corpus_round_trips() {
    let corpus = corpus();
    let mut parsed = 0;
    let mut failures = Vec::new();
    for batch in &corpus {
        match check(batch) {
            Ok(Outcome::Parsed) => parsed += 1,
            Ok(Outcome::Refused) => {}
            Err(failure) => failures.push(failure),
        }
    }
    assert!(failures.is_empty(), "{} failures; first:\n{}", failures.len(), failures[0]);
    // Most batches are Walden's own test scripts, which parse.
    assert!(parsed * 10 >= corpus.len() * 9, "only {parsed} of {} batches parse", corpus.len());
}

#[test]
fn twenty_thousand_mutations_of_the_corpus_round_trip() {
    let corpus = corpus();
    let mut rng = XorShift(0x5EED_F00D_5A7A_1DEA);
    let (mut parsed, mut failures) = (0, Vec::new());
    for _ in 0..MUTATIONS {
        let batch = &corpus[rng.below(corpus.len())];
        let donor = &corpus[rng.below(corpus.len())];
        let sql = mutate(&mut rng, batch, donor);
        match check(&sql) {
            Ok(Outcome::Parsed) => parsed += 1,
            Ok(Outcome::Refused) => {}
            Err(failure) => failures.push(failure),
        }
    }
    assert!(failures.is_empty(), "{} failures; first:\n{}", failures.len(), failures[0]);
    // Mutations must reach past the first token now and then.
    assert!(parsed * 20 >= MUTATIONS, "only {parsed} of {MUTATIONS} mutations parse");
}

/// Inputs on which the round trip failed when this test was written, each with its print.
#[test]
fn prints_that_once_failed_to_round_trip() {
    let cases = [
        // An inline function's query was wrapped in one more pair of parentheses per print.
        (
            "CREATE FUNCTION f() RETURNS TABLE AS RETURN (SELECT 1 AS a)",
            "CREATE FUNCTION f() RETURNS TABLE AS RETURN (SELECT 1 AS a);\n",
        ),
        (
            "CREATE FUNCTION f() RETURNS TABLE AS RETURN SELECT 1 AS a",
            "CREATE FUNCTION f() RETURNS TABLE AS RETURN SELECT 1 AS a;\n",
        ),
        // A valued SET option given as a string printed bare, which does not lex as one word.
        (
            "SET LANGUAGE N'Fran\u{e7}ais du Qu\u{e9}bec'",
            "SET LANGUAGE N'Fran\u{e7}ais du Qu\u{e9}bec';\n",
        ),
        ("SET DATEFORMAT 'dmy' SET DATEFIRST -1", "SET DATEFORMAT dmy;\nSET DATEFIRST -1;\n"),
        // ALTER INDEX ... SET printed without its (required) option list.
        (
            "ALTER INDEX ix ON t SET (ALLOW_PAGE_LOCKS = ON, ALLOW_ROW_LOCKS=OFF)",
            "ALTER INDEX ix ON t SET (ALLOW_PAGE_LOCKS = ON, ALLOW_ROW_LOCKS = OFF);\n",
        ),
        // An xml method called on a number printed as `1.value(...)`, which lexes as the
        // number `1.` followed by a name.
        ("SELECT 1 . value('(/a)[1]', 'int')", "SELECT (1).value('(/a)[1]', 'int');\n"),
    ];
    for (sql, printed) in cases {
        assert_eq!(parse_batch(sql).unwrap().to_string(), printed);
        assert!(matches!(check(sql), Ok(Outcome::Parsed)), "{sql}");
    }
}
