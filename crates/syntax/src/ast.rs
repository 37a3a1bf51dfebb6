//! The abstract syntax tree produced by [`parse_batch`](crate::parse_batch).
//!
//! The tree is purely syntactic: names are not resolved, types are not checked and built-in
//! function names are not validated; that is the binder's job. A few conventions hold
//! throughout:
//!
//! * Identifiers ([`Ident`]) keep the spelling the user wrote, with brackets or double quotes
//!   removed; comparisons are the binder's business (SQL Server compares names with the
//!   database collation, usually case-insensitively).
//! * Variables (`@x`) and system variables (`@@ROWCOUNT`) keep their `@` prefixes, because that
//!   is how SQL Server names them in `sys.parameters` and in its error messages.
//! * Numeric literals keep their source text, because their T-SQL type depends on the text
//!   (`2147483647` is an `int`, `2147483648` a `numeric(10,0)`, `1.50` a `numeric(3,2)`).
//! * Operators with two spellings are normalised: `!=` is [`BinaryOp::NotEq`] like `<>`,
//!   `!<` is [`BinaryOp::GtEq`] and `!>` is [`BinaryOp::LtEq`]. Parentheses that only group
//!   leave no node; `(SELECT ...)` in an expression is an [`ExprKind::Subquery`].
//! * Statements and expressions carry a [`Span`]; line numbers are 1-based within the batch,
//!   which is what SQL Server reports in `Msg ..., Line n` for errors raised while running.
//!
//! [`Display`](std::fmt::Display) (in `display.rs`) prints any node back as canonical T-SQL
//! that parses to the same tree.

mod alter;
mod bulk;
mod cursor;
mod database;
mod ddl;
mod dml;
mod expr;
mod merge;
mod module;
mod names;
mod query;
mod stmt;
mod variable;

pub use alter::{AlterAdd, AlterDrop, AlterTable, AlterTableAction};
pub use bulk::{BulkColumn, BulkInsert, BulkInsertOptions, BulkOptions, InsertBulk, SingleKind};
pub use cursor::{
    CursorOption, CursorRef, CursorStatement, CursorUpdatability, DeclareCursor, Fetch,
    FetchDirection,
};
pub use database::{
    AlterDatabase, CreateDatabase, DatabaseFileChange, DatabaseOption, DatabaseRef,
    DelayedDurability, FileGrowth, FileSize, FileSpec, MaxSize, RecoveryModel, SizeUnit,
};
pub use ddl::{
    Clustering, ColumnConstraint, ColumnConstraintKind, ColumnDef, ColumnOption, CreateIndex,
    CreateSequence, CreateTable, CreateType, DropIndex, DropKind, DropObjects, ForeignKeyReference,
    IdentitySpec, IndexColumn, IndexRef, InlineIndex, ReferentialAction, SequenceOption,
    TableConstraint, TableConstraintKind, TableElement, TableOption, TypeDefinition,
};
pub use dml::{
    Assignment, AssignmentTarget, Delete, Insert, InsertSource, OutputClause, OutputInto,
    TableTarget, Update,
};
pub use expr::{
    BinaryOp, Case, Cast, Convert, Expr, ExprKind, FrameBound, FrameUnits, FunctionArgs,
    FunctionCall, Literal, NextValueFor, Quantifier, UnaryOp, WhenClause, WindowFrame, WindowSpec,
};
pub use merge::{Merge, MergeAction, MergeClause, MergeWhen};
pub use module::{
    AtomicBlock, AtomicOption, CreateFunction, CreateMode, CreateProcedure, CreateTrigger,
    CreateView, EnableTrigger, FunctionBody, ProcedureParameter, TriggerEvent,
};
pub use names::{DataType, Ident, ObjectName, TypeParam};
pub use query::{
    Cte, ForJson, ForXml, Join, JoinKind, JsonColumn, OffsetFetch, OrderByItem, ParsedId, Pivot,
    Query, QueryBody, QueryHint, Select, SelectItem, SelectStatement, SetOperator, TableHint,
    TableSource, Top, Unpivot, XmlNamespace,
};
pub use stmt::{
    AssignOp, Dbcc, DbccArgument, Declaration, DeclarationKind, ExecArgument, ExecProcedure,
    Execute, If, IsolationLevel, ProcedureRef, Raiserror, RaiserrorOption, SetStatement,
    StatisticsOptions, StatisticsSample, Throw, TransactionName, TransactionStatement, TryCatch,
    UpdateStatistics, Waitfor, WaitforKind, While,
};
pub use variable::VarRef;

/// A region of the batch text: where a token, expression or statement starts (1-based line and
/// column, the column counted in characters) and its byte range `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// 1-based line within the batch.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
}

/// One batch: the text a client sends between two `GO` lines, after `sqlcmd` variable
/// substitution.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// The statements in source order. Empty statements (stray semicolons) leave nothing.
    pub statements: Vec<Statement>,
}

/// A statement and where it is in the batch.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// What the statement is.
    pub kind: StatementKind,
    /// From its first to its last token (a terminating `;` is not included).
    pub span: Span,
}

/// Every statement the parser knows.
#[derive(Debug, Clone, PartialEq)]
pub enum StatementKind {
    /// A query, optionally with `INTO` (in its first `SELECT`) and `OPTION (...)`.
    Select(Box<SelectStatement>),
    /// `INSERT`.
    Insert(Box<Insert>),
    /// `INSERT BULK`: announces the rows of a Bulk Load message.
    InsertBulk(Box<InsertBulk>),
    /// `BULK INSERT table FROM 'file'`: rows from a data file on the server's machine.
    BulkInsert(Box<BulkInsert>),
    /// `UPDATE`.
    Update(Box<Update>),
    /// `DELETE`.
    Delete(Box<Delete>),
    /// `MERGE`.
    Merge(Box<Merge>),
    /// `DECLARE @a INT = 1, @t TABLE (...)`.
    Declare(Vec<Declaration>),
    /// `DECLARE name CURSOR`, `OPEN`, `FETCH`, `CLOSE`, `DEALLOCATE`.
    Cursor(Box<CursorStatement>),
    /// The `SET` statements: variables and session options.
    Set(Box<SetStatement>),
    /// `IF condition statement [ELSE statement]`.
    If(Box<If>),
    /// `WHILE condition statement`.
    While(Box<While>),
    /// `BEGIN ... END`.
    Block(Vec<Statement>),
    /// `BEGIN TRY ... END TRY BEGIN CATCH ... END CATCH`.
    TryCatch(Box<TryCatch>),
    /// `BEGIN ATOMIC WITH (...) ... END`: the body of a natively compiled procedure.
    Atomic(Box<AtomicBlock>),
    /// `BREAK`.
    Break,
    /// `label:` a place `GOTO` jumps to.
    Label(Ident),
    /// `GOTO label`.
    Goto(Ident),
    /// `CONTINUE`.
    Continue,
    /// `RETURN [integer_expression]`.
    Return(Option<Expr>),
    /// `PRINT expression`.
    Print(Expr),
    /// `THROW number, message, state`, or a bare `THROW` that re-raises inside `CATCH`.
    Throw(Option<Box<Throw>>),
    /// `RAISERROR (message, severity, state, ...) [WITH ...]`.
    Raiserror(Box<Raiserror>),
    /// `USE database`.
    Use(Ident),
    /// `BEGIN TRAN`, `COMMIT`, `ROLLBACK`, `SAVE TRAN`.
    Transaction(TransactionStatement),
    /// `EXEC procedure ...` or `EXEC ('sql')`; also a bare procedure name that starts a batch.
    Execute(Box<Execute>),
    /// `CHECKPOINT [duration_seconds]`.
    Checkpoint(Option<Expr>),
    /// `UPDATE STATISTICS table [name | (name, ...)] [WITH options]`.
    UpdateStatistics(Box<UpdateStatistics>),
    /// `CREATE STATISTICS name ON table (column, ...) [WHERE filter] [WITH options]` (the
    /// filter is read and not kept).
    CreateStatistics {
        /// The statistics' name.
        name: Ident,
        /// The table.
        table: ObjectName,
        /// Its columns.
        columns: Vec<Ident>,
        /// The WITH options.
        options: StatisticsOptions,
    },
    /// `ALTER INDEX {name | ALL} ON table {REBUILD | REORGANIZE | DISABLE | SET (...)} ...`.
    AlterIndex {
        /// The index; `None` for `ALL`.
        index: Option<Ident>,
        /// Its table.
        table: ObjectName,
        /// `REBUILD`, `REORGANIZE` or `DISABLE`, upper-cased (their options are read and
        /// dropped), or `SET` followed by its option list, which the statement needs to print
        /// back as valid T-SQL: `SET (ALLOW_PAGE_LOCKS = ON)`.
        action: String,
    },
    /// `RECONFIGURE [WITH OVERRIDE]`: installs what `sp_configure` set, which in Walden is
    /// nothing (its options are read-only), so it does nothing, successfully.
    Reconfigure {
        /// `WITH OVERRIDE`.
        with_override: bool,
    },
    /// `DBCC command [(argument, ...)] [WITH option, ...]`.
    Dbcc(Box<Dbcc>),
    /// `KILL session_id`.
    Kill(Expr),
    /// `WAITFOR DELAY 'hh:mm[:ss[.mmm]]'` or `WAITFOR TIME 'hh:mm[:ss[.mmm]]'`.
    Waitfor(Box<Waitfor>),
    /// `CREATE DATABASE`.
    CreateDatabase(Box<CreateDatabase>),
    /// `ALTER DATABASE ... SET ...`.
    AlterDatabase(Box<AlterDatabase>),
    /// `CREATE TABLE`.
    CreateTable(Box<CreateTable>),
    /// `TRUNCATE TABLE name`.
    TruncateTable(ObjectName),
    /// `CREATE INDEX`.
    CreateIndex(Box<CreateIndex>),
    /// `CREATE SEQUENCE`.
    CreateSequence(Box<CreateSequence>),
    /// `ALTER SEQUENCE`: a name and options, as CREATE SEQUENCE has, RESTART among them.
    AlterSequence(Box<CreateSequence>),
    /// `CREATE [OR ALTER] PROCEDURE` or `ALTER PROCEDURE`.
    CreateProcedure(Box<CreateProcedure>),
    /// `CREATE [OR ALTER] VIEW` / `ALTER VIEW`.
    CreateView(Box<CreateView>),
    /// `CREATE [OR ALTER] FUNCTION` / `ALTER FUNCTION` (scalar).
    CreateFunction(Box<CreateFunction>),
    /// `CREATE TYPE`.
    CreateType(Box<CreateType>),
    /// `CREATE SCHEMA name [AUTHORIZATION owner]`.
    CreateSchema {
        /// The schema.
        name: Ident,
        /// `AUTHORIZATION owner`, as written (every session is `sa`; it is not checked).
        authorization: Option<Ident>,
    },
    /// `CREATE [OR ALTER] TRIGGER` / `ALTER TRIGGER`.
    CreateTrigger(Box<CreateTrigger>),
    /// `ENABLE | DISABLE TRIGGER {name, ... | ALL} ON table`.
    EnableTrigger(Box<EnableTrigger>),
    /// `DROP DATABASE | TABLE | SEQUENCE | PROCEDURE [IF EXISTS] name, ...`.
    Drop(Box<DropObjects>),
    /// `DROP INDEX [IF EXISTS] index ON table, ...`.
    DropIndex(Box<DropIndex>),
    /// `ALTER TABLE`.
    AlterTable(Box<AlterTable>),
}
