//! Walden's T-SQL executor: binds and runs the batches that `walden-syntax` parses, on the
//! storage engine (`walden-engine`). [`exec::Session`] is the entry point.
//!
//! The syntax crate's modules and entry points are re-exported here so that the executor (and
//! the crates above it) name the tree as `walden_sql::ast` / `crate::ast`, as they did when the
//! parser lived in this crate.

pub mod exec;

pub use walden_syntax::{ast, error, lexer};
pub use walden_syntax::{
    is_reserved, parse_batch, parse_batch_with, Batch, Expr, ExprKind, ParseError, Query,
    Statement, StatementKind, MAX_DEPTH,
};
