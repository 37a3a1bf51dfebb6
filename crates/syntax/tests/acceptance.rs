//! Every batch of every acceptance script (`shared/acceptance/*.sql`, beside the repository)
//! parses, and prints as canonical T-SQL that parses back to the same text.

use std::fs;
use std::path::{Path, PathBuf};

use walden_syntax::{parse_batch, StatementKind};

fn acceptance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/acceptance")
}

/// A batch and the script line it starts on.
struct ScriptBatch {
    first_line: usize,
    text: String,
}

/// Splits a `sqlcmd` script the way the shell does: `GO` and `GO n` lines end batches,
/// `:setvar` and `:r` lines are shell commands, and `$(var)` is replaced (here by 1000).
fn split_script(script: &str) -> Vec<ScriptBatch> {
    let mut batches = Vec::new();
    let mut text = String::new();
    let mut first_line = 1;
    for (index, line) in script.lines().enumerate() {
        if is_go_line(line) {
            batches.push(ScriptBatch { first_line, text: std::mem::take(&mut text) });
            first_line = index + 2;
            continue;
        }
        let command = line.trim_start().to_ascii_lowercase();
        if command.starts_with(":setvar") || command.starts_with(":r ") {
            text.push('\n');
            continue;
        }
        text.push_str(&substitute_variables(line));
        text.push('\n');
    }
    batches.push(ScriptBatch { first_line, text });
    batches.retain(|batch| !batch.text.trim().is_empty());
    batches
}

fn is_go_line(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let go = words.next().is_some_and(|word| word.eq_ignore_ascii_case("go"));
    let count = words.next();
    go && words.next().is_none() && count.is_none_or(|n| n.parse::<u64>().is_ok())
}

fn substitute_variables(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("$(") {
        let Some(len) = rest[start..].find(')') else { break };
        out.push_str(&rest[..start]);
        out.push_str("1000");
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

fn scripts() -> Option<Vec<(String, String)>> {
    let dir = acceptance_dir();
    let Ok(entries) = fs::read_dir(&dir) else {
        println!("note: {} is missing; acceptance scripts not checked", dir.display());
        return None;
    };
    let mut scripts: Vec<(String, String)> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sql"))
        .map(|path| {
            let name = path.file_name().expect("a file").to_string_lossy().into_owned();
            (name, fs::read_to_string(&path).expect("a readable script"))
        })
        .collect();
    scripts.sort();
    Some(scripts)
}

#[test]
fn every_batch_of_every_acceptance_script_parses_and_round_trips() {
    let Some(scripts) = scripts() else { return };
    assert!(!scripts.is_empty(), "no acceptance scripts found");
    let mut batch_count = 0;
    for (name, script) in &scripts {
        for batch in split_script(script) {
            let parsed = parse_batch(&batch.text).unwrap_or_else(|error| {
                panic!("{name}, batch at line {}:\n{error}\n{}", batch.first_line, batch.text)
            });
            assert!(!parsed.statements.is_empty(), "{name}: empty batch at {}", batch.first_line);
            let printed = parsed.to_string();
            let reparsed = parse_batch(&printed).unwrap_or_else(|error| {
                panic!("{name}, batch at line {} reprinted:\n{error}\n{printed}", batch.first_line)
            });
            assert_eq!(printed, reparsed.to_string(), "{name}, batch at {}", batch.first_line);
            batch_count += 1;
        }
    }
    assert!(batch_count >= 50, "only {batch_count} batches found");
}

#[test]
fn procedures_in_the_scripts_keep_their_batch_as_definition() {
    let Some(scripts) = scripts() else { return };
    let mut procedures = 0;
    for (_, script) in &scripts {
        for batch in split_script(script) {
            let parsed = parse_batch(&batch.text).unwrap();
            for statement in &parsed.statements {
                if let StatementKind::CreateProcedure(procedure) = &statement.kind {
                    assert_eq!(procedure.definition, batch.text);
                    assert_eq!(parsed.statements.len(), 1);
                    procedures += 1;
                }
            }
        }
    }
    assert_eq!(procedures, 5, "002 has two, 003_sequence_cache two, precedence one");
}

#[test]
fn script_splitting_follows_sqlcmd() {
    let script = ":setvar N 5\nSELECT $(N)\ngo\nSELECT 2\nGO 10\n:r other.sql\nSELECT $(K) + 1\n";
    let batches = split_script(script);
    let texts: Vec<&str> = batches.iter().map(|batch| batch.text.as_str()).collect();
    assert_eq!(texts, ["\nSELECT 1000\n", "SELECT 2\n", "\nSELECT 1000 + 1\n"]);
    assert_eq!(batches[2].first_line, 6);
    assert!(!is_go_line("GO TO"));
    assert!(!is_go_line("good"));
}
