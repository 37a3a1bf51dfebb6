//! Walden's T-SQL executor: runs the batches that `walden-syntax` parses on the storage engine
//! (`walden-engine`), planning each statement as it runs it. [`exec::Session`] is the entry
//! point.
//!
//! The syntax crate's modules and entry points are re-exported here, so the executor names the
//! tree `crate::ast` and the crates above it use `walden_sql::ast` and
//! `walden_sql::parse_batch` without depending on `walden-syntax` themselves.

pub mod exec;

pub use walden_syntax::{ast, error, lexer};
pub use walden_syntax::{
    is_reserved, parse_batch, parse_batch_with, Batch, Expr, ExprKind, ParseError, Query,
    Statement, StatementKind, MAX_DEPTH,
};
