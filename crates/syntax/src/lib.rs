//! Walden's T-SQL syntax: the lexer, the parser, the abstract syntax tree and its printer for
//! the subset of SQL Server's dialect that Walden runs. It knows nothing of the engine: the tree
//! carries what was written (a data type as `name(params)`, a number as its text) and the
//! executor, `walden-sql`, binds names and converts types and literals.
//!
//! ```
//! use walden_syntax::parse_batch;
//!
//! let batch = parse_batch("BEGIN TRAN INSERT INTO t VALUES (1) COMMIT TRAN").unwrap();
//! assert_eq!(batch.statements.len(), 3);
//! assert_eq!(batch.to_string(), "BEGIN TRANSACTION;\nINSERT INTO t VALUES (1);\nCOMMIT TRANSACTION;\n");
//!
//! let error = parse_batch("SELECT *\nFROM WHERE").unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "Msg 156, Level 15, State 1, Line 2\nIncorrect syntax near the keyword 'WHERE'."
//! );
//! // A batch cut short names its last token with 102, keyword or not.
//! let error = parse_batch("SELECT *\nFROM").unwrap_err();
//! assert_eq!(error.to_string(), "Msg 102, Level 15, State 1, Line 2\nIncorrect syntax near 'FROM'.");
//! ```
//!
//! # Scope
//!
//! The parser receives one batch: the text a client sends between `GO` lines. `GO`, `GO n`,
//! `:setvar`, `:r` and `$(var)` belong to the client shell, which has already handled them.
//! [`parse_batch`] returns every statement of the batch or the first error, numbered and
//! worded like SQL Server's (see [`ParseError`]); a batch with an error runs nothing.
//!
//! # Guarantees
//!
//! * **No panics.** [`parse_batch`] returns `Ok` or `Err` for every string, however malformed;
//!   nesting deeper than [`MAX_DEPTH`] is an error (191) rather than a stack overflow. The
//!   crate is pure `std` with no dependencies and no `unsafe`, so it is fuzzed on its own (the
//!   `parse` target in `fuzz/`) and `tests/round_trip.rs` checks the same on a corpus.
//! * **SQL Server's errors.** A [`ParseError`] carries SQL Server's number (102, 156, 105,
//!   ...; the [`error`] module lists them all), its severity (15 for syntax errors), state 1,
//!   the line within the batch and SQL Server's wording, so a client sees the message it would see from SQL
//!   Server.
//! * **Round trip.** Every node's `Display` prints canonical T-SQL that parses back to a tree
//!   that prints the same.
//!
//! # Grammar decisions
//!
//! Where T-SQL is ambiguous, or SQL Server's behaviour is surprising, the parser decides as
//! follows (the `parser` submodules give details):
//!
//! * **Statement boundaries.** Semicolons are optional. Each statement extends as far as its
//!   grammar allows and the next token starts the next statement, so
//!   `BEGIN TRAN INSERT INTO t VALUES (1) COMMIT TRAN SET @i += 1` is four statements.
//!   Optional trailing names and values (transaction names, aliases, `RETURN`'s value,
//!   `THROW`'s and `EXEC`'s arguments) are taken only if the next token is not a reserved
//!   keyword and not `THROW`.
//! * **`THROW`** is not reserved in SQL Server, which requires a `;` before it (otherwise it is
//!   read as an alias). Walden is lenient: `SELECT 1 THROW 50000, 'x', 1` is two statements.
//! * **`WITH`**: a common table expression needs no preceding `;` (SQL Server demands one).
//!   After a table name, `WITH (` is a table hint; after `COMMIT`, `WITH (` is the
//!   `DELAYED_DURABILITY` option; otherwise `WITH` starts the next statement.
//! * **`BEGIN`**: `BEGIN TRAN[SACTION]` starts a transaction, `BEGIN TRY` a `TRY...CATCH`,
//!   anything else a block. Blocks and `TRY` blocks must not be empty; `CATCH` blocks may be.
//! * **`IF ... ELSE`**: `ELSE` belongs to the nearest `IF`; semicolons may precede `ELSE`.
//! * **`CREATE PROCEDURE`** must be the first statement of the batch (error 111) and its body
//!   is the rest of the batch. The procedure keeps the whole batch text as its definition.
//! * **`EXEC`**: a batch whose first statement is a bare name calls that procedure. Procedure
//!   arguments are constants, variables, `DEFAULT` or lone names (strings, as in
//!   `EXEC sp_help t`), exactly as SQL Server allows; expressions are syntax errors.
//! * **Select lists**: `name = expr` is an alias and `@v = expr` an assignment; mixing
//!   assignments with returned columns is error 141.
//! * **Expressions**: predicates and values share one expression type, with SQL Server's
//!   precedence; the binder rejects a value where a condition is needed. `!=`, `!<` and `!>`
//!   become `<>`, `>=` and `<=`. Numeric literals keep their text.
//! * **Strings**: `"..."` is always a delimited identifier (`QUOTED_IDENTIFIER ON`).
//!
//! `docs/sql-grammar.md` lists the supported statements.

pub mod ast;
mod display;
pub mod error;
mod keywords;
pub mod lexer;
mod parser;

pub use ast::{Batch, Expr, ExprKind, Query, Statement, StatementKind};
pub use error::ParseError;
pub use keywords::is_reserved;
pub use parser::{parse_batch, parse_batch_with, MAX_DEPTH};
