//! What the end-to-end tests share: the `walden serve` guard ([`server`]), a raw TDS client on
//! the codec ([`client`]), and running `walden sql` ([`sql`]).
//!
//! Every test binary compiles this module on its own and uses only part of it, so what one
//! binary leaves unused is not dead code.
#![allow(dead_code)]

pub mod client;
pub mod server;
pub mod sql;

/// The `sa` password the test servers run with.
pub const PASSWORD: &str = "Walden-test-1";
