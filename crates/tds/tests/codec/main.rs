//! Integration tests of the TDS codec: the spec's worked examples, round trips of every
//! message, token and value, and a property test of the decoders' robustness.
// Test helpers outside `#[test]` functions unwrap freely, as in the other crates' tests.
#![allow(clippy::unwrap_used)]

mod cases;
mod robustness;
mod roundtrip;
mod spec_examples;
