//! Fuzz target `parse`: the T-SQL parser of walden-syntax on arbitrary text.
//!
//! The bytes are read as UTF-8 (invalid sequences become U+FFFD) and parsed as one batch.
//! Besides "never panics, never overflows the stack" (what libFuzzer detects), the target
//! checks the printer: a batch that parses prints as T-SQL that parses again and prints the
//! same, and a refused batch's error is a compile error (severity 15, or 16 for the refusals
//! `walden_syntax::error` lists; state 1) on one of the batch's lines. Run with `cargo +nightly fuzz run parse` from the repository root;
//! `crates/syntax/tests/round_trip.rs` checks the same property on a fixed corpus with stable
//! Rust.

#![no_main]

use libfuzzer_sys::fuzz_target;
use walden_syntax::parse_batch;

fuzz_target!(|data: &[u8]| {
    let sql = String::from_utf8_lossy(data);
    match parse_batch(&sql) {
        Ok(batch) => {
            let printed = batch.to_string();
            let reparsed = parse_batch(&printed)
                .unwrap_or_else(|error| panic!("{sql:?} printed as {printed:?}: {error}"));
            assert_eq!(printed, reparsed.to_string(), "the print of {sql:?} prints differently");
        }
        Err(error) => {
            let lines = sql.split('\n').count();
            assert!(
                (1..=lines).contains(&(error.line as usize)),
                "line {} of a {lines}-line batch",
                error.line
            );
            assert!(matches!((error.severity, error.state), (15 | 16, 1)), "{error:?}");
        }
    }
});
