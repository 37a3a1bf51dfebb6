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

pub use alter::{AlterAdd, AlterDrop, AlterTable, AlterTableAction};
pub use bulk::{BulkColumn, BulkInsert, BulkInsertOptions, BulkOptions, InsertBulk, SingleKind};

pub use cursor::{
    CursorOption, CursorRef, CursorStatement, CursorUpdatability, DeclareCursor, Fetch,
    FetchDirection,
};

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

/// An identifier as written, without its `[...]` or `"..."` delimiters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    /// The name itself (`]]` and `""` escapes already undone).
    pub value: String,
}

impl Ident {
    /// An identifier with the given name.
    pub fn new(value: impl Into<String>) -> Self {
        Self { value: value.into() }
    }
}

/// A name of a database object with up to three prefixes: `server.database.schema.name`.
/// Omitted prefixes are `None`; `master..spt_values` has a database and no schema.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectName {
    /// Linked server (four-part names only).
    pub server: Option<Ident>,
    /// Database prefix.
    pub database: Option<Ident>,
    /// Schema prefix.
    pub schema: Option<Ident>,
    /// The object's own name (`#temp` and `##global` names included).
    pub name: Ident,
}

impl ObjectName {
    /// A name without prefixes.
    pub fn simple(name: Ident) -> Self {
        Self { server: None, database: None, schema: None, name }
    }
}

/// A data type as written: a (possibly schema-qualified) name and its parenthesised
/// parameters, e.g. `DECIMAL(10, 2)`, `VARCHAR(MAX)`, `sysname`. The binder resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataType {
    /// The type name; user-defined types may carry a schema.
    pub name: ObjectName,
    /// Length, precision and scale parameters, in order.
    pub params: Vec<TypeParam>,
}

/// One parameter of a data type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeParam {
    /// A number: a length, precision, scale or fractional-seconds precision.
    Number(u32),
    /// `MAX`, as in `VARCHAR(MAX)`.
    Max,
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

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
        /// `REBUILD`, `REORGANIZE`, `DISABLE` or `SET`, upper-cased; its options are read and
        /// dropped.
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

/// A `DBCC` statement as written: the command and its options are checked when it runs (a
/// command or option Walden does not know is error 2526, as SQL Server reports one).
#[derive(Debug, Clone, PartialEq)]
pub struct Dbcc {
    /// `CHECKDB`, `CHECKTABLE`, `SQLPERF`, ...
    pub command: Ident,
    /// The parenthesized arguments.
    pub arguments: Vec<DbccArgument>,
    /// The `WITH` options (`NO_INFOMSGS`, ...).
    pub options: Vec<Ident>,
}

/// `UPDATE STATISTICS table [name | (name, ...)] [WITH options]`.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateStatistics {
    /// The table.
    pub table: ObjectName,
    /// The statistics (or indexes) named; empty for all of the table's.
    pub names: Vec<Ident>,
    /// The WITH options.
    pub options: StatisticsOptions,
}

/// The WITH options of CREATE and UPDATE STATISTICS that Walden acts on; the others
/// (`MAXDOP`, `INCREMENTAL`, `STATS_STREAM`, ...) are read and dropped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatisticsOptions {
    /// `FULLSCAN`, `SAMPLE n PERCENT`, `SAMPLE n ROWS`; None without one.
    pub sample: Option<StatisticsSample>,
    /// `RESAMPLE`: as the last build sampled.
    pub resample: bool,
    /// `NORECOMPUTE`: no automatic updates.
    pub no_recompute: bool,
    /// `ALL`, `COLUMNS` or `INDEX` (UPDATE STATISTICS): which statistics; None is ALL.
    pub only: Option<String>,
}

/// How much a statistics build reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatisticsSample {
    /// `FULLSCAN` (or `SAMPLE 100 PERCENT`).
    FullScan,
    /// `SAMPLE n PERCENT`.
    Percent(f64),
    /// `SAMPLE n ROWS`.
    Rows(f64),
}

/// One argument of a `DBCC` command.
#[derive(Debug, Clone, PartialEq)]
pub enum DbccArgument {
    /// A bare name: a table (`CHECKTABLE (dbo.t)`), a database, or a keyword (`LOGSPACE`).
    Name(ObjectName),
    /// Anything else: a string (`'dbo.t'`), a number (a database id), a variable.
    Value(Expr),
}

/// A query statement: the query and its `OPTION (...)` hints.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectStatement {
    /// The query.
    pub query: Query,
    /// `OPTION (...)` query hints.
    pub hints: Vec<QueryHint>,
}

/// One query hint from `OPTION (...)`, kept as its source text (`MAXDOP 1`, `RECOMPILE`) for
/// the optimizer to interpret or reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryHint {
    /// The hint's tokens as written.
    pub text: String,
}

/// One variable of a `DECLARE` statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    /// The variable, with its `@`.
    pub name: String,
    /// Scalar or table variable.
    pub kind: DeclarationKind,
}

/// What a `DECLARE` declares.
#[derive(Debug, Clone, PartialEq)]
pub enum DeclarationKind {
    /// `@x type [= value]`.
    Scalar {
        /// The declared type.
        data_type: DataType,
        /// The initial value; `NULL` when absent.
        value: Option<Expr>,
    },
    /// `@t TABLE (columns and constraints)`.
    Table(Vec<TableElement>),
}

/// The compound assignment operators of `SET`, `SELECT @v ...` and `UPDATE ... SET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`
    Assign,
    /// `+=`
    Add,
    /// `-=`
    Subtract,
    /// `*=`
    Multiply,
    /// `/=`
    Divide,
    /// `%=`
    Modulo,
    /// `&=`
    BitAnd,
    /// `|=`
    BitOr,
    /// `^=`
    BitXor,
}

/// The `SET` statements.
#[derive(Debug, Clone, PartialEq)]
pub enum SetStatement {
    /// `SET @v op value`.
    Variable {
        /// The variable, with its `@`.
        name: String,
        /// `=` or a compound operator.
        op: AssignOp,
        /// The value.
        value: Expr,
    },
    /// `SET option [, option ...] ON | OFF` for the boolean session options. Names are
    /// upper-cased and known to SQL Server (`NOCOUNT`, `XACT_ABORT`, `ANSI_NULLS`,
    /// `STATISTICS IO`, ...).
    Options {
        /// The options, upper-cased.
        names: Vec<String>,
        /// `ON` or `OFF`.
        on: bool,
    },
    /// `SET LOCK_TIMEOUT milliseconds` (`-1` waits forever).
    LockTimeout(Expr),
    /// `SET TRANSACTION ISOLATION LEVEL ...`.
    IsolationLevel(IsolationLevel),
    /// `SET IDENTITY_INSERT table ON | OFF`.
    IdentityInsert {
        /// The table.
        table: ObjectName,
        /// `ON` or `OFF`.
        on: bool,
    },
    /// `SET TEXTSIZE`, `DATEFIRST`, `DATEFORMAT` or `DEADLOCK_PRIORITY` with its value, as
    /// written (a number, a word such as `mdy` or `LOW`, or a variable).
    Valued {
        /// The option, upper-cased.
        name: String,
        /// The value's text.
        value: String,
    },
}

/// Transaction isolation levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    /// `READ UNCOMMITTED`
    ReadUncommitted,
    /// `READ COMMITTED`
    ReadCommitted,
    /// `REPEATABLE READ`
    RepeatableRead,
    /// `SNAPSHOT`
    Snapshot,
    /// `SERIALIZABLE`
    Serializable,
}

/// `IF condition then [ELSE otherwise]`.
#[derive(Debug, Clone, PartialEq)]
pub struct If {
    /// The search condition.
    pub condition: Expr,
    /// Runs when the condition is true.
    pub then_branch: Statement,
    /// Runs otherwise.
    pub else_branch: Option<Statement>,
}

/// `WHILE condition body`.
#[derive(Debug, Clone, PartialEq)]
pub struct While {
    /// The search condition.
    pub condition: Expr,
    /// The loop body (usually a block).
    pub body: Statement,
}

/// `BEGIN TRY ... END TRY BEGIN CATCH ... END CATCH`.
#[derive(Debug, Clone, PartialEq)]
pub struct TryCatch {
    /// The statements of the `TRY` block (at least one).
    pub try_block: Vec<Statement>,
    /// The statements of the `CATCH` block (possibly none).
    pub catch_block: Vec<Statement>,
}

/// The arguments of `THROW number, message, state`.
#[derive(Debug, Clone, PartialEq)]
pub struct Throw {
    /// Error number (50000 or more).
    pub number: Expr,
    /// Message text.
    pub message: Expr,
    /// State (0 to 255).
    pub state: Expr,
}

/// `WAITFOR DELAY value` or `WAITFOR TIME value`. SQL Server takes only a character string
/// constant or a variable here, not an expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Waitfor {
    /// Whether the value is a duration or a time of day.
    pub kind: WaitforKind,
    /// A string literal or a variable.
    pub value: Expr,
}

/// What `WAITFOR` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitforKind {
    /// `DELAY`: the value is how long to wait (at most 24 hours).
    Delay,
    /// `TIME`: the value is the time of day at which to go on.
    Time,
}

/// `RAISERROR (message, severity, state [, argument ...]) [WITH option, ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Raiserror {
    /// A message string (a `printf`-style format) or a message number.
    pub message: Expr,
    /// Severity (0 to 25).
    pub severity: Expr,
    /// State (0 to 255).
    pub state: Expr,
    /// Substitution arguments for the format.
    pub arguments: Vec<Expr>,
    /// `WITH LOG | NOWAIT | SETERROR`.
    pub options: Vec<RaiserrorOption>,
}

/// `RAISERROR ... WITH` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiserrorOption {
    /// `LOG`
    Log,
    /// `NOWAIT`
    NoWait,
    /// `SETERROR`
    SetError,
}

/// Transaction names are identifiers or variables holding one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransactionName {
    /// `BEGIN TRAN t1`
    Name(Ident),
    /// `BEGIN TRAN @name`
    Variable(String),
}

/// The transaction statements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransactionStatement {
    /// `BEGIN TRAN[SACTION] [name]`.
    Begin {
        /// The transaction's name.
        name: Option<TransactionName>,
    },
    /// `COMMIT [TRAN[SACTION] [name] | WORK] [WITH (DELAYED_DURABILITY = ON | OFF)]`.
    Commit {
        /// The name given after `TRAN` (ignored by SQL Server, but checked for length).
        name: Option<TransactionName>,
        /// The `DELAYED_DURABILITY` commit option, if given.
        delayed_durability: Option<bool>,
    },
    /// `ROLLBACK [TRAN[SACTION] [name | savepoint] | WORK]`.
    Rollback {
        /// The transaction or savepoint name.
        name: Option<TransactionName>,
    },
    /// `SAVE TRAN[SACTION] savepoint`.
    Save {
        /// The savepoint name.
        name: TransactionName,
    },
}

/// `EXEC[UTE]`.
#[derive(Debug, Clone, PartialEq)]
pub enum Execute {
    /// `EXEC [@rc =] procedure [argument, ...]`.
    Procedure(ExecProcedure),
    /// `EXEC ('sql' + @more)`: dynamic SQL; the expression concatenates strings.
    Sql(Expr),
}

/// A procedure call.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecProcedure {
    /// `@rc` in `EXEC @rc = proc`.
    pub return_status: Option<String>,
    /// The procedure.
    pub procedure: ProcedureRef,
    /// The arguments in order.
    pub arguments: Vec<ExecArgument>,
}

/// Which procedure `EXEC` calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcedureRef {
    /// A procedure name.
    Name(ObjectName),
    /// A variable holding the procedure's name.
    Variable(String),
}

/// One argument of a procedure call.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecArgument {
    /// `@param` in `@param = value`; `None` for positional arguments.
    pub name: Option<String>,
    /// The value: an expression, or [`ExprKind::Default`]. A bare word (`EXEC sp_help t`) is
    /// a string literal, as in SQL Server.
    pub value: Expr,
    /// `OUTPUT` / `OUT`.
    pub output: bool,
}

/// `CREATE DATABASE name [ON (file), ...] [LOG ON (file), ...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateDatabase {
    /// The database name.
    pub name: Ident,
    /// Data files (`ON [PRIMARY] (...)`).
    pub files: Vec<FileSpec>,
    /// Log files (`LOG ON (...)`).
    pub log_files: Vec<FileSpec>,
}

/// A database file specification: `(NAME = ..., FILENAME = '...', SIZE = ..., ...)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileSpec {
    /// `NAME`: the logical file name.
    pub logical_name: Option<Ident>,
    /// `FILENAME`: the operating-system path.
    pub filename: Option<String>,
    /// `SIZE`: the initial size.
    pub size: Option<FileSize>,
    /// `MAXSIZE`.
    pub max_size: Option<MaxSize>,
    /// `FILEGROWTH`.
    pub growth: Option<FileGrowth>,
}

/// A file size: an amount and its unit. Without a unit suffix SQL Server means megabytes, so
/// the parser records [`SizeUnit::Megabytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileSize {
    /// The amount.
    pub amount: u64,
    /// The unit.
    pub unit: SizeUnit,
}

/// Size units of file specifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeUnit {
    /// `KB`
    Kilobytes,
    /// `MB` (the default)
    Megabytes,
    /// `GB`
    Gigabytes,
    /// `TB`
    Terabytes,
}

/// `MAXSIZE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxSize {
    /// A limit.
    Size(FileSize),
    /// `UNLIMITED`.
    Unlimited,
}

/// `FILEGROWTH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileGrowth {
    /// A fixed increment.
    Size(FileSize),
    /// A percentage of the current size (`10%`).
    Percent(u64),
}

/// `ALTER DATABASE name | CURRENT SET option, ... [WITH termination]`, or `ALTER DATABASE
/// name MODIFY FILE (...) | ADD [LOG] FILE (...) | REMOVE FILE name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterDatabase {
    /// Which database.
    pub database: DatabaseRef,
    /// The options being set, in order (at least one, unless `file` is given).
    pub options: Vec<DatabaseOption>,
    /// A change to the database's files instead of options.
    pub file: Option<DatabaseFileChange>,
    /// `WITH ROLLBACK IMMEDIATE`, `WITH ROLLBACK AFTER n SECONDS` or `WITH NO_WAIT`, as
    /// written (upper case), for display.
    pub termination: Option<String>,
}

/// A change to a database's files in `ALTER DATABASE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseFileChange {
    /// `MODIFY FILE (NAME = ..., SIZE | MAXSIZE | FILEGROWTH = ...)`.
    Modify(FileSpec),
    /// `ADD FILE (...), ...` or `ADD LOG FILE (...), ...`.
    Add {
        /// `LOG`.
        log: bool,
        /// The files.
        files: Vec<FileSpec>,
    },
    /// `REMOVE FILE name`.
    Remove(Ident),
}

/// A database named in `ALTER DATABASE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseRef {
    /// A name.
    Name(Ident),
    /// `CURRENT`: the session's database.
    Current,
}

/// Database options `ALTER DATABASE ... SET` understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseOption {
    /// `DELAYED_DURABILITY = DISABLED | ALLOWED | FORCED`.
    DelayedDurability(DelayedDurability),
    /// `RECOVERY SIMPLE | FULL | BULK_LOGGED`.
    Recovery(RecoveryModel),
    /// An option Walden accepts and keeps nothing for (`SINGLE_USER`, `AUTO_CLOSE OFF`,
    /// `COMPATIBILITY_LEVEL = 150`...): its text as written, normalized to upper case with
    /// single spaces.
    Accepted(String),
    /// `ONLINE`: open a database that was set OFFLINE, or could not be opened
    /// (RECOVERY_PENDING, SUSPECT), again.
    Online,
    /// `OFFLINE`: close the database; every use is refused (942) until `ONLINE`.
    Offline,
    /// `READ_ONLY` (true) or `READ_WRITE` (false).
    ReadOnly(bool),
}

/// The database-level delayed durability setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedDurability {
    /// Every commit is fully durable (the default).
    Disabled,
    /// A commit is delayed durable if it says `WITH (DELAYED_DURABILITY = ON)`.
    Allowed,
    /// Every commit that can be delayed durable is.
    Forced,
}

/// Recovery models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryModel {
    /// `SIMPLE`
    Simple,
    /// `FULL`
    Full,
    /// `BULK_LOGGED`
    BulkLogged,
}

/// `CREATE TABLE name (element, ...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    /// The table name (`#temp` names included).
    pub name: ObjectName,
    /// Columns and table constraints in order.
    pub elements: Vec<TableElement>,
    /// `WITH (MEMORY_OPTIMIZED = ON | OFF, DURABILITY = ...)`.
    pub options: Vec<TableOption>,
}

/// An option of `CREATE TABLE ... WITH (...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOption {
    /// `MEMORY_OPTIMIZED = ON | OFF`.
    MemoryOptimized(bool),
    /// `DURABILITY = SCHEMA_AND_DATA` (`true`) or `SCHEMA_ONLY` (`false`).
    SchemaAndData(bool),
}

/// One element of a table definition.
#[derive(Debug, Clone, PartialEq)]
pub enum TableElement {
    /// A column definition.
    Column(ColumnDef),
    /// A table-level constraint.
    Constraint(TableConstraint),
    /// `INDEX name [UNIQUE] [CLUSTERED | NONCLUSTERED] (columns)`: an index made with the
    /// table (SQL Server 2014's inline index syntax).
    Index(InlineIndex),
}

/// An index declared in a table's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineIndex {
    /// The index name.
    pub name: Ident,
    /// `UNIQUE`.
    pub unique: bool,
    /// Index kind, if given (the default is nonclustered).
    pub clustering: Option<Clustering>,
    /// Key columns; for `INDEX` after a column's type, that column.
    pub columns: Vec<IndexColumn>,
    /// `WITH (IGNORE_DUP_KEY = ON)`.
    pub ignore_dup_key: bool,
}

/// `name type [option ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// The column name.
    pub name: Ident,
    /// The column type.
    pub data_type: DataType,
    /// Nullability, identity, collation and constraints, in source order (the binder rejects
    /// contradictions such as `NULL NOT NULL`).
    pub options: Vec<ColumnOption>,
}

/// Column options.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnOption {
    /// `NULL`
    Null,
    /// `NOT NULL`
    NotNull,
    /// `COLLATE name`
    Collate(Ident),
    /// `IDENTITY [(seed, increment)]`; `None` means `(1, 1)`.
    Identity(Option<IdentitySpec>),
    /// `INDEX name [CLUSTERED | NONCLUSTERED]`: an index on this column alone.
    Index {
        /// The index name.
        name: Ident,
        /// Index kind, if given.
        clustering: Option<Clustering>,
    },
    /// `[CONSTRAINT name] PRIMARY KEY | UNIQUE | DEFAULT | CHECK`.
    Constraint(ColumnConstraint),
    /// `ROWGUIDCOL`: marks a uniqueidentifier column as the table's row GUID (`$ROWGUID`),
    /// which only replication and FILESTREAM use; Walden checks the type and keeps nothing.
    RowGuidCol,
    /// `AS expression [PERSISTED]`: a computed column, which has no declared type (its
    /// `data_type` is left as `sql_variant`; the binder takes the expression's).
    Computed {
        /// The expression.
        expr: Expr,
        /// `PERSISTED`.
        persisted: bool,
    },
}

/// `IDENTITY(seed, increment)`: signed numeric constants.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentitySpec {
    /// The first value.
    pub seed: Expr,
    /// The step.
    pub increment: Expr,
}

/// A column constraint and its optional name.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnConstraint {
    /// `CONSTRAINT name`.
    pub name: Option<Ident>,
    /// The constraint.
    pub kind: ColumnConstraintKind,
}

/// Column constraints.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnConstraintKind {
    /// `PRIMARY KEY [CLUSTERED | NONCLUSTERED] [WITH (...)]`
    PrimaryKey {
        /// Index kind, if given.
        clustering: Option<Clustering>,
        /// `WITH (IGNORE_DUP_KEY = ON)`.
        ignore_dup_key: bool,
    },
    /// `UNIQUE [CLUSTERED | NONCLUSTERED] [WITH (...)]`
    Unique {
        /// Index kind, if given.
        clustering: Option<Clustering>,
        /// `WITH (IGNORE_DUP_KEY = ON)`.
        ignore_dup_key: bool,
    },
    /// `DEFAULT expression`
    Default(Expr),
    /// `CHECK (condition)`
    Check(Expr),
    /// `[FOREIGN KEY] REFERENCES table [(column)] ...`
    References(ForeignKeyReference),
}

/// A table-level constraint and its optional name.
#[derive(Debug, Clone, PartialEq)]
pub struct TableConstraint {
    /// `CONSTRAINT name`.
    pub name: Option<Ident>,
    /// The constraint.
    pub kind: TableConstraintKind,
}

/// Table-level constraints.
#[derive(Debug, Clone, PartialEq)]
pub enum TableConstraintKind {
    /// `PRIMARY KEY [CLUSTERED | NONCLUSTERED] (column [ASC | DESC], ...)`
    PrimaryKey {
        /// Index kind, if given.
        clustering: Option<Clustering>,
        /// Key columns.
        columns: Vec<IndexColumn>,
        /// `WITH (IGNORE_DUP_KEY = ON)`.
        ignore_dup_key: bool,
    },
    /// `UNIQUE [CLUSTERED | NONCLUSTERED] (column [ASC | DESC], ...)`
    Unique {
        /// Index kind, if given.
        clustering: Option<Clustering>,
        /// Key columns.
        columns: Vec<IndexColumn>,
        /// `WITH (IGNORE_DUP_KEY = ON)`.
        ignore_dup_key: bool,
    },
    /// `CHECK (condition)`
    Check(Expr),
    /// `FOREIGN KEY (column, ...) REFERENCES table [(column, ...)] [ON DELETE ...] [ON UPDATE ...]`
    ForeignKey {
        /// The referencing columns.
        columns: Vec<Ident>,
        /// What they reference.
        reference: ForeignKeyReference,
    },
}

/// `REFERENCES table [(column, ...)] [ON DELETE action] [ON UPDATE action]`, the referenced
/// side of a FOREIGN KEY.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKeyReference {
    /// The referenced table.
    pub table: ObjectName,
    /// The referenced columns; empty: the table's primary key.
    pub columns: Vec<Ident>,
    /// `ON DELETE`.
    pub on_delete: ReferentialAction,
    /// `ON UPDATE`.
    pub on_update: ReferentialAction,
}

/// `NO ACTION | CASCADE | SET NULL | SET DEFAULT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReferentialAction {
    /// `NO ACTION` (the default).
    #[default]
    NoAction,
    /// `CASCADE`
    Cascade,
    /// `SET NULL`
    SetNull,
    /// `SET DEFAULT`
    SetDefault,
}

/// `CLUSTERED` or `NONCLUSTERED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clustering {
    /// `CLUSTERED`
    Clustered,
    /// `NONCLUSTERED`
    Nonclustered,
}

/// A key column of an index or key constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexColumn {
    /// The column.
    pub name: Ident,
    /// `DESC` (the default is ascending).
    pub descending: bool,
}

/// `CREATE [UNIQUE] [CLUSTERED | NONCLUSTERED] INDEX name ON table (columns) [INCLUDE (...)]
/// [WHERE filter]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateIndex {
    /// `UNIQUE`.
    pub unique: bool,
    /// Index kind, if given (SQL Server defaults to nonclustered).
    pub clustering: Option<Clustering>,
    /// The index name.
    pub name: Ident,
    /// The table.
    pub table: ObjectName,
    /// Key columns.
    pub columns: Vec<IndexColumn>,
    /// `INCLUDE` columns.
    pub include: Vec<Ident>,
    /// `WHERE` filter of a filtered index.
    pub filter: Option<Expr>,
    /// `WITH (DROP_EXISTING = ON)`: the index of this name is dropped and built again.
    pub drop_existing: bool,
    /// `WITH (IGNORE_DUP_KEY = ON)`: an INSERT skips a duplicate row of a unique index.
    pub ignore_dup_key: bool,
}

/// `CREATE TYPE name FROM base_type [NULL | NOT NULL]` or `CREATE TYPE name AS TABLE (...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateType {
    /// The type's name.
    pub name: ObjectName,
    /// What it is.
    pub definition: TypeDefinition,
}

/// The two kinds of user-defined type Walden has.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeDefinition {
    /// An alias of a system type, with the nullability its columns default to (`None`: NULL).
    Alias {
        /// The base type.
        data_type: DataType,
        /// `NULL` / `NOT NULL`.
        nullable: Option<bool>,
    },
    /// A table type: the columns and constraints of the table variables declared with it.
    Table(Vec<TableElement>),
}

/// `CREATE SEQUENCE name [option ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateSequence {
    /// The sequence name.
    pub name: ObjectName,
    /// Options in source order (the binder rejects duplicates).
    pub options: Vec<SequenceOption>,
}

/// Sequence options. Values are signed numeric constants.
#[derive(Debug, Clone, PartialEq)]
pub enum SequenceOption {
    /// `AS type`
    DataType(DataType),
    /// `START WITH value`
    StartWith(Expr),
    /// `INCREMENT BY value`
    IncrementBy(Expr),
    /// `MINVALUE value`, or `NO MINVALUE` (`None`).
    MinValue(Option<Expr>),
    /// `MAXVALUE value`, or `NO MAXVALUE` (`None`).
    MaxValue(Option<Expr>),
    /// `CYCLE` (`true`) or `NO CYCLE` (`false`).
    Cycle(bool),
    /// `CACHE [size]`; without a size SQL Server picks one.
    Cache(Option<Expr>),
    /// `NO CACHE`
    NoCache,
}

/// `CREATE`, `ALTER` or `CREATE OR ALTER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    /// `CREATE`: the object must not exist.
    Create,
    /// `ALTER`: the object must exist.
    Alter,
    /// `CREATE OR ALTER`.
    CreateOrAlter,
}

/// `CREATE [OR ALTER] PROCEDURE name [parameters] [WITH option, ...] AS body`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateProcedure {
    /// `CREATE`, `ALTER` or `CREATE OR ALTER`.
    pub mode: CreateMode,
    /// The procedure name.
    pub name: ObjectName,
    /// Parameters in order.
    pub parameters: Vec<ProcedureParameter>,
    /// `WITH` options (`RECOMPILE`, `ENCRYPTION`, `NATIVE_COMPILATION`, ...), as written.
    pub options: Vec<Ident>,
    /// `WITH ... EXECUTE AS OWNER | CALLER | SELF | 'user'`, as written (Walden runs every
    /// procedure as `sa`, its one login).
    pub execute_as: Option<String>,
    /// The body: every statement from `AS` to the end of the batch.
    pub body: Vec<Statement>,
    /// The definition SQL Server stores in `sys.sql_modules`: the whole batch text, including
    /// any comments before `CREATE` (the procedure is necessarily the only statement), so that
    /// line numbers in the stored text match the statements' spans.
    pub definition: String,
}

/// `CREATE [OR ALTER] VIEW name [(columns)] [WITH options] AS query [WITH CHECK OPTION]`, the
/// only statement of its batch.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateView {
    /// `CREATE`, `ALTER` or `CREATE OR ALTER`.
    pub mode: CreateMode,
    /// The view name.
    pub name: ObjectName,
    /// Column names, if given.
    pub columns: Vec<Ident>,
    /// `WITH` options (`SCHEMABINDING`, `VIEW_METADATA`, ...), as written.
    pub options: Vec<Ident>,
    /// The query.
    pub query: Query,
    /// `WITH CHECK OPTION`.
    pub check_option: bool,
    /// The definition SQL Server stores in `sys.sql_modules`: the whole batch text.
    pub definition: String,
}

/// `CREATE [OR ALTER] FUNCTION name ([parameters]) RETURNS ...`: a scalar function or an
/// inline table-valued one, the only statement of its batch.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateFunction {
    /// `CREATE`, `ALTER` or `CREATE OR ALTER`.
    pub mode: CreateMode,
    /// The function name.
    pub name: ObjectName,
    /// Parameters in order.
    pub parameters: Vec<ProcedureParameter>,
    /// `WITH` options (`SCHEMABINDING`, ...), as written.
    pub options: Vec<Ident>,
    /// What it returns and how.
    pub body: FunctionBody,
    /// The definition SQL Server stores in `sys.sql_modules`: the whole batch text.
    pub definition: String,
}

/// `CREATE [OR ALTER] TRIGGER name ON table {AFTER | FOR | INSTEAD OF} events AS statements`,
/// the only statement of its batch.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTrigger {
    /// `CREATE`, `ALTER` or `CREATE OR ALTER`.
    pub mode: CreateMode,
    /// The trigger name.
    pub name: ObjectName,
    /// The table it is on.
    pub table: ObjectName,
    /// `INSTEAD OF` rather than `AFTER` (or its older spelling `FOR`).
    pub instead_of: bool,
    /// The statements that fire it, at least one, each once.
    pub events: Vec<TriggerEvent>,
    /// The statements of its body: the rest of the batch.
    pub body: Vec<Statement>,
    /// The definition SQL Server stores in `sys.sql_modules`: the whole batch text.
    pub definition: String,
}

/// What fires a trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerEvent {
    /// `INSERT`.
    Insert,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
}

/// `ENABLE | DISABLE TRIGGER {name, ... | ALL} ON table`, and `ALTER TABLE table
/// {ENABLE | DISABLE} TRIGGER {name, ... | ALL}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnableTrigger {
    /// `ENABLE` rather than `DISABLE`.
    pub enable: bool,
    /// The triggers; empty for `ALL`.
    pub names: Vec<ObjectName>,
    /// The table.
    pub table: ObjectName,
}

/// A function's result and body.
#[derive(Debug, Clone, PartialEq)]
pub enum FunctionBody {
    /// `RETURNS type [AS] BEGIN statements END`.
    Scalar {
        /// The type it returns.
        returns: DataType,
        /// The statements of its `BEGIN ... END`.
        statements: Vec<Statement>,
    },
    /// `RETURNS TABLE [AS] RETURN [(] query [)]`.
    InlineTable(Query),
    /// `RETURNS @variable TABLE (...) [AS] BEGIN statements END`: a multi-statement
    /// table-valued function, whose body fills the table variable and ends with `RETURN`.
    MultiTable {
        /// The table variable the body fills (`@t`).
        variable: String,
        /// Its columns and constraints, as `DECLARE @t TABLE` takes them.
        elements: Vec<TableElement>,
        /// The statements of its `BEGIN ... END`.
        statements: Vec<Statement>,
    },
}

/// `BEGIN ATOMIC WITH (option, ...) statements END`, the one statement of a natively compiled
/// procedure: its statements succeed or fail as one, in a transaction of their own (whose
/// commit takes the block's `DELAYED_DURABILITY`) or under a savepoint of the caller's.
#[derive(Debug, Clone, PartialEq)]
pub struct AtomicBlock {
    /// The options, as written; `TRANSACTION ISOLATION LEVEL` and `LANGUAGE` among them.
    pub options: Vec<AtomicOption>,
    /// The statements, at least one.
    pub body: Vec<Statement>,
}

impl AtomicBlock {
    /// `DELAYED_DURABILITY = ON | OFF`, if given.
    pub fn delayed_durability(&self) -> Option<bool> {
        self.options.iter().find_map(|o| match o {
            AtomicOption::DelayedDurability(on) => Some(*on),
            _ => None,
        })
    }

    /// `TRANSACTION ISOLATION LEVEL = ...` (the parser requires it).
    pub fn isolation(&self) -> Option<IsolationLevel> {
        self.options.iter().find_map(|o| match o {
            AtomicOption::IsolationLevel(level) => Some(*level),
            _ => None,
        })
    }
}

/// One option of `BEGIN ATOMIC WITH (...)`.
#[derive(Debug, Clone, PartialEq)]
pub enum AtomicOption {
    /// `TRANSACTION ISOLATION LEVEL = SNAPSHOT | REPEATABLE READ | SERIALIZABLE`.
    IsolationLevel(IsolationLevel),
    /// `LANGUAGE = 'name'`.
    Language(String),
    /// `DATEFIRST = n`, as written.
    DateFirst(String),
    /// `DATEFORMAT = order`, as written.
    DateFormat(String),
    /// `DELAYED_DURABILITY = ON | OFF`.
    DelayedDurability(bool),
}

/// `@name [AS] type [NOT NULL] [= default] [OUT | OUTPUT]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcedureParameter {
    /// The parameter, with its `@`.
    pub name: String,
    /// Its type.
    pub data_type: DataType,
    /// `NOT NULL` (natively compiled procedures): calling with NULL is an error.
    pub not_null: bool,
    /// The default value, making the parameter optional.
    pub default: Option<Expr>,
    /// `OUTPUT` / `OUT`.
    pub output: bool,
    /// `READONLY`: a table-valued parameter (of a table type), which the body cannot change.
    pub readonly: bool,
}

/// The kinds of object `DROP` removes by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropKind {
    /// `DROP DATABASE` (names have no prefixes).
    Database,
    /// `DROP TABLE`
    Table,
    /// `DROP SEQUENCE`
    Sequence,
    /// `DROP PROC[EDURE]`
    Procedure,
    /// `DROP VIEW`
    View,
    /// `DROP FUNCTION`
    Function,
    /// `DROP TRIGGER`
    Trigger,
    /// `DROP SCHEMA`
    Schema,
    /// `DROP TYPE`
    Type,
    /// `DROP STATISTICS table.name`: each name is the table's name with the statistics'
    /// name as its last part.
    Statistics,
}

/// `DROP kind [IF EXISTS] name, ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropObjects {
    /// What is dropped.
    pub kind: DropKind,
    /// `IF EXISTS`: missing objects are not an error.
    pub if_exists: bool,
    /// The objects, at least one.
    pub names: Vec<ObjectName>,
}

/// `DROP INDEX [IF EXISTS] index ON table, ...` (or the old `table.index` form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropIndex {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The indexes, at least one.
    pub indexes: Vec<IndexRef>,
}

/// An index and its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexRef {
    /// The index name.
    pub name: Ident,
    /// The table it belongs to.
    pub table: ObjectName,
}

// ---------------------------------------------------------------------------------------------
// Data modification
// ---------------------------------------------------------------------------------------------

/// The table a data-modification statement changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableTarget {
    /// A table or view name, or an alias defined in the `FROM` clause.
    Table(ObjectName),
    /// A table variable.
    Variable(String),
}

/// `[WITH ctes] INSERT [TOP (n) [PERCENT]] [INTO] target [(columns)] source`.
#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `TOP (n) [PERCENT]`.
    pub top: Option<Top>,
    /// The target.
    pub target: TableTarget,
    /// `WITH (TABLOCK, ...)` on the target.
    pub table_hints: Vec<TableHint>,
    /// The column list; empty means all columns in order.
    pub columns: Vec<Ident>,
    /// `OUTPUT INSERTED.... [INTO ...]`.
    pub output: Option<Box<OutputClause>>,
    /// Where the rows come from.
    pub source: InsertSource,
    /// `OPTION (...)`.
    pub hints: Vec<QueryHint>,
}

/// The rows of an `INSERT`.
#[derive(Debug, Clone, PartialEq)]
pub enum InsertSource {
    /// `VALUES (...), (...)`; items may be [`ExprKind::Default`].
    Values(Vec<Vec<Expr>>),
    /// `SELECT ...`.
    Query(Box<Query>),
    /// `EXEC ...`.
    Execute(Box<Execute>),
    /// `DEFAULT VALUES`.
    DefaultValues,
}

/// `[WITH ctes] UPDATE [TOP (n)] target SET ... [FROM ...] [WHERE ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `TOP (n) [PERCENT]`.
    pub top: Option<Top>,
    /// The target (possibly an alias from `FROM`).
    pub target: TableTarget,
    /// `WITH (...)` on the target.
    pub table_hints: Vec<TableHint>,
    /// The `SET` list.
    pub assignments: Vec<Assignment>,
    /// `OUTPUT DELETED...., INSERTED.... [INTO ...]`.
    pub output: Option<Box<OutputClause>>,
    /// `FROM` table sources.
    pub from: Vec<TableSource>,
    /// `WHERE`.
    pub where_clause: Option<Expr>,
    /// `OPTION (...)`.
    pub hints: Vec<QueryHint>,
}

/// `OUTPUT item, ... [INTO target [(column, ...)]]` of an INSERT, UPDATE or DELETE: values of
/// each changed row as it is after the change (`INSERTED.column`) or was before it
/// (`DELETED.column`), returned as a result set or inserted into a table.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputClause {
    /// The values, as a select list (`INSERTED.*`, `DELETED.v AS old_v`, expressions).
    pub items: Vec<SelectItem>,
    /// `INTO @table_variable | table [(columns)]`.
    pub into: Option<OutputInto>,
}

/// Where `OUTPUT ... INTO` puts the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputInto {
    /// A table variable, `#temp` or table.
    pub target: TableTarget,
    /// The columns to fill; empty means all columns in order.
    pub columns: Vec<Ident>,
}

/// One item of `UPDATE ... SET`.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// What is assigned.
    pub target: AssignmentTarget,
    /// `=` or a compound operator.
    pub op: AssignOp,
    /// The new value; may be [`ExprKind::Default`].
    pub value: Expr,
}

/// The left-hand side of an `UPDATE ... SET` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssignmentTarget {
    /// `column` or `alias.column`.
    Column(Vec<Ident>),
    /// `@variable`.
    Variable(String),
    /// `@variable = column = value`: both get the value.
    VariableAndColumn {
        /// The variable.
        variable: String,
        /// The column.
        column: Vec<Ident>,
    },
}

/// `[WITH ctes] DELETE [TOP (n)] [FROM] target [FROM ...] [WHERE ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `TOP (n) [PERCENT]`.
    pub top: Option<Top>,
    /// The target (possibly an alias from the second `FROM`).
    pub target: TableTarget,
    /// `WITH (...)` on the target.
    pub table_hints: Vec<TableHint>,
    /// `OUTPUT DELETED.... [INTO ...]`.
    pub output: Option<Box<OutputClause>>,
    /// The second `FROM`: table sources to join with.
    pub from: Vec<TableSource>,
    /// `WHERE`.
    pub where_clause: Option<Expr>,
    /// `OPTION (...)`.
    pub hints: Vec<QueryHint>,
}

/// `[WITH ctes] MERGE [TOP (n)] [INTO] target [WITH (hints)] [[AS] alias] USING source ON
/// condition WHEN ... [OUTPUT ...] [OPTION (...)];`.
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `TOP (n) [PERCENT]`: how many rows the statement changes at most.
    pub top: Option<Top>,
    /// The table changed.
    pub target: TableTarget,
    /// `WITH (HOLDLOCK, ...)` on the target.
    pub table_hints: Vec<TableHint>,
    /// The target's alias.
    pub alias: Option<Ident>,
    /// `USING`: a table, derived table, `VALUES` table or CTE, with its alias.
    pub source: TableSource,
    /// `ON`: which source rows match which target rows.
    pub on: Expr,
    /// The `WHEN` clauses, in the order written.
    pub clauses: Vec<MergeClause>,
    /// `OUTPUT $action, INSERTED...., DELETED.... [INTO ...]`.
    pub output: Option<Box<OutputClause>>,
    /// `OPTION (...)`.
    pub hints: Vec<QueryHint>,
}

/// `WHEN [NOT] MATCHED [BY TARGET | BY SOURCE] [AND condition] THEN action`.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeClause {
    /// Which rows the clause is for.
    pub when: MergeWhen,
    /// `AND condition`.
    pub condition: Option<Expr>,
    /// What it does to them.
    pub action: MergeAction,
}

/// The rows a `WHEN` clause of a MERGE acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeWhen {
    /// `WHEN MATCHED`: a target row and the source row that matches it.
    Matched,
    /// `WHEN NOT MATCHED [BY TARGET]`: a source row no target row matches.
    NotMatchedByTarget,
    /// `WHEN NOT MATCHED BY SOURCE`: a target row no source row matches.
    NotMatchedBySource,
}

/// The action of a `WHEN` clause of a MERGE.
#[derive(Debug, Clone, PartialEq)]
pub enum MergeAction {
    /// `UPDATE SET ...`.
    Update(Vec<Assignment>),
    /// `DELETE`.
    Delete,
    /// `INSERT [(columns)] VALUES (...)`, or `DEFAULT VALUES` when `values` is `None`.
    Insert {
        /// The column list; empty means all columns in order.
        columns: Vec<Ident>,
        /// The values; items may be [`ExprKind::Default`].
        values: Option<Vec<Expr>>,
    },
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

/// A query expression: `[WITH ctes] body [ORDER BY ...] [OFFSET ... FETCH ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// Common table expressions.
    pub ctes: Vec<Cte>,
    /// `SELECT`s combined with set operators.
    pub body: QueryBody,
    /// `ORDER BY`.
    pub order_by: Vec<OrderByItem>,
    /// `OFFSET n ROWS [FETCH NEXT m ROWS ONLY]`.
    pub offset: Option<OffsetFetch>,
    /// `FOR JSON PATH | AUTO [, ...]`: the rows become one JSON text.
    pub for_json: Option<ForJson>,
    /// `FOR XML PATH [('row')] [, ...]`: the rows become one XML text.
    pub for_xml: Option<ForXml>,
    /// `WITH XMLNAMESPACES (...)` before the statement: prefixes its xml methods and FOR XML
    /// names may use.
    pub xml_namespaces: Vec<XmlNamespace>,
}

/// One declaration of `WITH XMLNAMESPACES ('uri' AS prefix, DEFAULT 'uri')`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlNamespace {
    /// The prefix; `None` for `DEFAULT`.
    pub prefix: Option<Ident>,
    /// The namespace URI.
    pub uri: String,
}

/// `FOR XML PATH [('element')] [, ROOT [('name')]] [, TYPE]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForXml {
    /// `RAW` rather than `PATH`: a row's columns are attributes of its element (unless
    /// `ELEMENTS`), and no column name is a path.
    pub raw: bool,
    /// `AUTO`: as RAW, each row's element named after the table it comes from.
    pub auto: bool,
    /// `ELEMENTS` (RAW, AUTO): columns are child elements, as PATH makes them.
    pub elements: bool,
    /// The element each row is wrapped in (`row` by default; empty for none).
    pub element: String,
    /// `ROOT [('name')]`: the element the whole text is wrapped in.
    pub root: Option<String>,
    /// `TYPE`: SQL Server returns the `xml` type; Walden returns the text either way.
    pub typed: bool,
}

/// `FOR JSON {PATH | AUTO} [, ROOT [('name')]] [, INCLUDE_NULL_VALUES]
/// [, WITHOUT_ARRAY_WRAPPER]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForJson {
    /// `PATH` (dotted column names nest objects) rather than `AUTO`.
    pub path: bool,
    /// `ROOT [('name')]`: the array goes in an object under this name (`root` by default).
    pub root: Option<String>,
    /// `INCLUDE_NULL_VALUES`: NULLs are written as `null` rather than left out.
    pub include_null_values: bool,
    /// `WITHOUT_ARRAY_WRAPPER`: the objects without the enclosing `[...]`.
    pub without_array_wrapper: bool,
}

/// `name [(columns)] AS (query)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cte {
    /// The CTE's name.
    pub name: Ident,
    /// Column names, if given.
    pub columns: Vec<Ident>,
    /// Its query.
    pub query: Query,
    /// The statement's `OPTION (MAXRECURSION n)`, which the parser copies to each CTE of the
    /// statement because it limits their recursion: `None` when absent (SQL Server's default
    /// of 100 levels applies), `Some(0)` for no limit.
    pub max_recursion: Option<u16>,
}

/// The body of a query.
#[derive(Debug, Clone, PartialEq)]
pub enum QueryBody {
    /// One `SELECT`.
    Select(Box<Select>),
    /// `left UNION [ALL] | EXCEPT | INTERSECT right`; `INTERSECT` binds tighter.
    SetOperation {
        /// The operator.
        op: SetOperator,
        /// Left operand.
        left: Box<QueryBody>,
        /// Right operand.
        right: Box<QueryBody>,
    },
    /// `(query)`, which may have its own `ORDER BY` (with `TOP`).
    Parenthesized(Box<Query>),
}

/// Set operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOperator {
    /// `UNION`
    Union,
    /// `UNION ALL`
    UnionAll,
    /// `EXCEPT`
    Except,
    /// `INTERSECT`
    Intersect,
}

/// `SELECT [DISTINCT] [TOP ...] items [INTO t] [FROM ...] [WHERE ...] [GROUP BY ...]
/// [HAVING ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    /// `DISTINCT` (`ALL` is the default).
    pub distinct: bool,
    /// `TOP`.
    pub top: Option<Top>,
    /// The select list.
    pub items: Vec<SelectItem>,
    /// `INTO table`: creates the table from the result.
    pub into: Option<ObjectName>,
    /// `FROM` table sources (comma-separated ones are cross joined).
    pub from: Vec<TableSource>,
    /// `WHERE`.
    pub where_clause: Option<Expr>,
    /// `GROUP BY`: its items; for `GROUP BY GROUPING SETS (...)`, every item of every set.
    pub group_by: Vec<Expr>,
    /// `GROUP BY GROUPING SETS ((a, b), (a), ())`: the sets, each a list of items of
    /// `group_by`.
    pub grouping_sets: Option<Vec<Vec<Expr>>>,
    /// `HAVING`.
    pub having: Option<Expr>,
}

/// `TOP (n) [PERCENT] [WITH TIES]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Top {
    /// Row count or percentage.
    pub quantity: Expr,
    /// `PERCENT`.
    pub percent: bool,
    /// `WITH TIES`.
    pub with_ties: bool,
}

/// One item of a select list.
#[derive(Debug, Clone, PartialEq)]
pub enum SelectItem {
    /// `*` (no qualifier) or `t.*`.
    Wildcard(Option<Vec<Ident>>),
    /// `expr [[AS] alias]` or `alias = expr`.
    Expr {
        /// The value.
        expr: Expr,
        /// The column name, if given.
        alias: Option<Ident>,
    },
    /// `@v = expr` or `@v += expr`: the statement assigns instead of returning rows.
    Assign {
        /// The variable, with its `@`.
        variable: String,
        /// `=` or a compound operator.
        op: AssignOp,
        /// The value.
        value: Expr,
    },
}

/// `ORDER BY` item.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderByItem {
    /// The sort key.
    pub expr: Expr,
    /// `DESC`.
    pub descending: bool,
}

/// `OFFSET n ROWS [FETCH NEXT m ROWS ONLY]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetch {
    /// Rows to skip.
    pub offset: Expr,
    /// Rows to return.
    pub fetch: Option<Expr>,
}

/// A table source of a `FROM` clause.
#[derive(Debug, Clone, PartialEq)]
pub enum TableSource {
    /// A table or view.
    Table {
        /// Its name.
        name: ObjectName,
        /// `[AS] alias`.
        alias: Option<Ident>,
        /// `WITH (NOLOCK, ...)`.
        hints: Vec<TableHint>,
    },
    /// A table variable.
    Variable {
        /// The variable, with its `@`.
        name: String,
        /// `[AS] alias`.
        alias: Option<Ident>,
    },
    /// A table-valued function: `GENERATE_SERIES(1, 10) AS n`,
    /// `sys.dm_io_virtual_file_stats(NULL, NULL)`.
    Function {
        /// The function.
        name: ObjectName,
        /// Its arguments (may be [`ExprKind::Default`]).
        args: Vec<Expr>,
        /// `[AS] alias`.
        alias: Option<Ident>,
        /// `alias (columns)`.
        columns: Vec<Ident>,
    },
    /// `(query) [AS] alias [(columns)]`.
    Derived {
        /// The query.
        query: Box<Query>,
        /// The alias (required).
        alias: Ident,
        /// Column names.
        columns: Vec<Ident>,
    },
    /// `(VALUES (...), ...) [AS] alias [(columns)]`.
    Values {
        /// The rows.
        rows: Vec<Vec<Expr>>,
        /// The alias (required).
        alias: Ident,
        /// Column names.
        columns: Vec<Ident>,
    },
    /// `OPENJSON(text [, path]) WITH (column type ['path'] [AS JSON], ...) [[AS] alias]`.
    OpenJson {
        /// The JSON text and the optional path.
        args: Vec<Expr>,
        /// The columns of the `WITH` schema.
        schema: Vec<JsonColumn>,
        /// `[AS] alias`.
        alias: Option<Ident>,
    },
    /// `OPENROWSET(BULK 'file', SINGLE_BLOB | SINGLE_CLOB | SINGLE_NCLOB) [AS] alias
    /// [(column)]`: the whole file as one row of one column, `BulkColumn`.
    OpenRowsetBulk {
        /// The file's path, relative to the server's working directory or absolute.
        file: String,
        /// What the file is read as.
        kind: SingleKind,
        /// `[AS] alias` (SQL Server requires one: error 491).
        alias: Option<Ident>,
        /// Column name.
        columns: Vec<Ident>,
    },
    /// `source PIVOT (aggregate(column) FOR pivot_column IN ([v1], ...)) [AS] alias`.
    Pivot(Box<Pivot>),
    /// `source UNPIVOT (value FOR name IN (c1, ...)) [AS] alias`.
    Unpivot(Box<Unpivot>),
    /// `x.nodes('xquery') [AS] alias(column)`: one row per node the query selects, its one
    /// column an xml value standing for the node.
    XmlNodes {
        /// The xml value.
        target: Box<Expr>,
        /// The XQuery, as written (a string literal).
        xquery: Box<Expr>,
        /// The alias (required).
        alias: Ident,
        /// The column's name (required).
        column: Ident,
    },
    /// Two sources joined.
    Join(Box<Join>),
}

/// `PIVOT`: one row per combination of the source's other columns, and one column per listed
/// value of `pivot_column`, holding `aggregate` over the rows with that value.
#[derive(Debug, Clone, PartialEq)]
pub struct Pivot {
    /// The source.
    pub source: TableSource,
    /// The aggregate call over the value column (`SUM(qty)`).
    pub aggregate: Expr,
    /// The column whose values become columns.
    pub pivot_column: Ident,
    /// Those values, as column names.
    pub values: Vec<Ident>,
    /// The alias (required).
    pub alias: Ident,
}

/// `UNPIVOT`: one row per source row and listed column whose value is not NULL, with the
/// column's name in `name` and its value in `value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Unpivot {
    /// The source.
    pub source: TableSource,
    /// The new column that holds the values.
    pub value: Ident,
    /// The new column that holds the column names.
    pub name: Ident,
    /// The columns turned into rows.
    pub columns: Vec<Ident>,
    /// The alias (required).
    pub alias: Ident,
}

/// One column of `OPENJSON`'s `WITH` schema.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonColumn {
    /// The column's name.
    pub name: Ident,
    /// Its type.
    pub data_type: DataType,
    /// Where its value is in each element (`$.name` when not given).
    pub path: Option<String>,
    /// `AS JSON`: the object or array there, as JSON text (the type is NVARCHAR(MAX)).
    pub as_json: bool,
}

/// `left kind JOIN right [ON condition]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    /// Left input.
    pub left: TableSource,
    /// Right input.
    pub right: TableSource,
    /// The join kind.
    pub kind: JoinKind,
    /// The `ON` condition (absent for `CROSS JOIN` and `APPLY`).
    pub on: Option<Expr>,
}

/// Join kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    /// `[INNER] JOIN`
    Inner,
    /// `LEFT [OUTER] JOIN`
    LeftOuter,
    /// `RIGHT [OUTER] JOIN`
    RightOuter,
    /// `FULL [OUTER] JOIN`
    FullOuter,
    /// `CROSS JOIN`
    Cross,
    /// `CROSS APPLY`
    CrossApply,
    /// `OUTER APPLY`
    OuterApply,
}

/// A table hint: `NOLOCK`, `INDEX(ix)`, `INDEX = ix`.
#[derive(Debug, Clone, PartialEq)]
pub struct TableHint {
    /// The hint name as written.
    pub name: Ident,
    /// Its arguments, if any.
    pub args: Vec<Expr>,
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

/// An expression and where it is. Search conditions are expressions too: the parser does not
/// separate predicates from values (the binder does, with SQL Server's error 4145).
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// From its first to its last token.
    pub span: Span,
}

/// Expressions.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A constant.
    Literal(Literal),
    /// `@x`.
    Variable(String),
    /// `@@ROWCOUNT`, `@@TRANCOUNT`, ...
    SystemVariable(String),
    /// A column reference of one to four parts: `c`, `t.c`, `s.t.c`, `db.s.t.c`.
    Column(Vec<Ident>),
    /// `-x`, `+x`, `~x`, `NOT x`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// Arithmetic, bitwise, comparison and logical operators.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `x [NOT] BETWEEN low AND high`.
    Between {
        /// The tested value.
        expr: Box<Expr>,
        /// `NOT BETWEEN`.
        negated: bool,
        /// Lower bound.
        low: Box<Expr>,
        /// Upper bound.
        high: Box<Expr>,
    },
    /// `x [NOT] IN (a, b, ...)`.
    InList {
        /// The tested value.
        expr: Box<Expr>,
        /// `NOT IN`.
        negated: bool,
        /// The values.
        list: Vec<Expr>,
    },
    /// `x [NOT] IN (SELECT ...)`.
    InSubquery {
        /// The tested value.
        expr: Box<Expr>,
        /// `NOT IN`.
        negated: bool,
        /// The subquery.
        subquery: Box<Query>,
    },
    /// `x [NOT] LIKE pattern [ESCAPE c]`.
    Like {
        /// The tested value.
        expr: Box<Expr>,
        /// `NOT LIKE`.
        negated: bool,
        /// The pattern.
        pattern: Box<Expr>,
        /// The escape character.
        escape: Option<Box<Expr>>,
    },
    /// `x IS [NOT] DISTINCT FROM y`: inequality that treats NULLs as equal to each other.
    IsDistinctFrom {
        /// The left value.
        left: Box<Expr>,
        /// The right value.
        right: Box<Expr>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// `x COLLATE name`: Walden compares text one way (case-insensitively and
    /// accent-sensitively, as SQL Server's default collation does), so such a collation
    /// changes nothing; another is refused when the expression is evaluated.
    Collate {
        /// The value.
        expr: Box<Expr>,
        /// The collation named.
        collation: Ident,
    },
    /// `CURRENT OF cursor`, the whole WHERE clause of a positioned UPDATE or DELETE: the row
    /// the cursor is on.
    CurrentOf(crate::ast::cursor::CursorRef),
    /// `JSON_OBJECT(key : value, ... [NULL | ABSENT ON NULL])` (SQL Server 2022).
    JsonObject {
        /// The members, in order.
        pairs: Vec<(Expr, Expr)>,
        /// `ABSENT ON NULL`: a member whose value is NULL is left out (the default is
        /// `NULL ON NULL`).
        absent_on_null: bool,
    },
    /// `JSON_ARRAY(value, ... [NULL | ABSENT ON NULL])` (SQL Server 2022).
    JsonArray {
        /// The elements, in order.
        values: Vec<Expr>,
        /// `ABSENT ON NULL` (the default): NULL elements are left out.
        absent_on_null: bool,
    },
    /// `x.value('xquery', 'type')`, `x.query('xquery')`, `x.exist('xquery')`,
    /// `x.modify('dml')`: an xml data type method (names are case-sensitive, as in SQL Server).
    XmlMethod {
        /// The xml value the method is called on.
        target: Box<Expr>,
        /// `value`, `query`, `exist` or `modify`.
        method: String,
        /// The arguments as written (SQL Server requires string literals).
        args: Vec<Expr>,
    },
    /// `x AT TIME ZONE zone`: a date and time at a Windows-named time zone.
    AtTimeZone {
        /// The date and time.
        expr: Box<Expr>,
        /// The zone's name.
        zone: Box<Expr>,
    },
    /// `x IS [NOT] NULL`.
    IsNull {
        /// The tested value.
        expr: Box<Expr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `x op ALL | ANY | SOME (SELECT ...)`.
    Quantified {
        /// The tested value.
        left: Box<Expr>,
        /// A comparison operator.
        op: BinaryOp,
        /// `ALL` or `ANY` (`SOME` is `ANY`).
        quantifier: Quantifier,
        /// The subquery.
        subquery: Box<Query>,
    },
    /// `EXISTS (SELECT ...)`.
    Exists(Box<Query>),
    /// A scalar subquery `(SELECT ...)`.
    Subquery(Box<Query>),
    /// `CASE ... END`.
    Case(Box<Case>),
    /// `CAST(x AS type)` or `TRY_CAST(...)`.
    Cast(Box<Cast>),
    /// `CONVERT(type, x [, style])` or `TRY_CONVERT(...)`.
    Convert(Box<Convert>),
    /// A function call, aggregate or window function.
    Function(Box<FunctionCall>),
    /// `NEXT VALUE FOR sequence [OVER (ORDER BY ...)]`.
    NextValueFor(Box<NextValueFor>),
    /// The keyword `DEFAULT` where a value may be defaulted: `VALUES`, `UPDATE ... SET`,
    /// procedure and function arguments.
    Default,
}

/// Constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    /// `NULL`
    Null,
    /// `'text'` (`national: false`) or `N'text'`, with `''` escapes undone.
    String {
        /// The characters.
        value: String,
        /// `N'...'`: `nvarchar` rather than `varchar`.
        national: bool,
    },
    /// Digits only, as written: `int` if it fits, otherwise `numeric`.
    Integer(String),
    /// Digits with a decimal point, as written: `numeric(p, s)`.
    Decimal(String),
    /// A number with an exponent, as written: `float`.
    Float(String),
    /// `$` and digits with an optional decimal point, the `$` dropped: `money`.
    Money(String),
    /// `0x...`: `varbinary`. An odd number of hex digits gets a leading zero.
    Binary(Vec<u8>),
}

/// `ALL` or `ANY`/`SOME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantifier {
    /// `ALL`
    All,
    /// `ANY` / `SOME`
    Any,
}

/// Prefix operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `+x`
    Plus,
    /// `-x`
    Minus,
    /// `~x` (bitwise not)
    BitNot,
    /// `NOT x`
    Not,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Modulo,
    /// `+` (also string concatenation)
    Add,
    /// `-`
    Subtract,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=` or `!>`
    LtEq,
    /// `>=` or `!<`
    GtEq,
    /// `AND`
    And,
    /// `OR`
    Or,
}

/// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The operand of a simple `CASE`; `None` for a searched `CASE`.
    pub operand: Option<Expr>,
    /// The `WHEN` branches, at least one.
    pub branches: Vec<WhenClause>,
    /// `ELSE`; `NULL` when absent.
    pub else_result: Option<Expr>,
}

/// `WHEN condition_or_value THEN result`.
#[derive(Debug, Clone, PartialEq)]
pub struct WhenClause {
    /// A condition (searched `CASE`) or a value compared with the operand (simple `CASE`).
    pub condition: Expr,
    /// The result.
    pub result: Expr,
}

/// `NEXT VALUE FOR sequence [OVER (ORDER BY ...)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct NextValueFor {
    /// The sequence.
    pub sequence: ObjectName,
    /// `OVER (ORDER BY ...)`: the order in which rows get their values.
    pub over: Option<WindowSpec>,
}

/// `CAST(expr AS type)` / `TRY_CAST(...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cast {
    /// The value.
    pub expr: Expr,
    /// The target type.
    pub data_type: DataType,
    /// `TRY_CAST`: `NULL` instead of an error when the conversion fails.
    pub is_try: bool,
}

/// `CONVERT(type, expr [, style])` / `TRY_CONVERT(...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Convert {
    /// The target type.
    pub data_type: DataType,
    /// The value.
    pub expr: Expr,
    /// The style number.
    pub style: Option<Expr>,
    /// `TRY_CONVERT`.
    pub is_try: bool,
}

/// A call: `f(x)`, `dbo.f(x)`, `COUNT(*)`, `COUNT(DISTINCT x)`, `ROW_NUMBER() OVER (...)`,
/// or a parenthesis-free built-in such as `CURRENT_TIMESTAMP`.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall {
    /// The function, possibly schema-qualified.
    pub name: ObjectName,
    /// The arguments.
    pub args: FunctionArgs,
    /// `OVER (...)` for window functions.
    pub over: Option<WindowSpec>,
    /// `WITHIN GROUP (ORDER BY ...)`: the order `STRING_AGG` joins its values in (empty when
    /// not given).
    pub within_group: Vec<OrderByItem>,
}

/// A call's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum FunctionArgs {
    /// No parentheses at all: `CURRENT_TIMESTAMP`, `CURRENT_USER`, `SESSION_USER`,
    /// `SYSTEM_USER`, `USER`.
    None,
    /// `(*)`, as in `COUNT(*)`.
    Star,
    /// `([DISTINCT] a, b, ...)`; items may be [`ExprKind::Default`].
    List {
        /// `DISTINCT` (aggregates).
        distinct: bool,
        /// The arguments.
        args: Vec<Expr>,
    },
}

/// `OVER ([PARTITION BY ...] [ORDER BY ...] [ROWS | RANGE frame])`.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowSpec {
    /// `PARTITION BY`.
    pub partition_by: Vec<Expr>,
    /// `ORDER BY`.
    pub order_by: Vec<OrderByItem>,
    /// The window frame, if one is written.
    pub frame: Option<WindowFrame>,
}

/// `ROWS | RANGE BETWEEN start AND end`; the short form `ROWS start` is stored with `end`
/// [`FrameBound::CurrentRow`], which is what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowFrame {
    /// `ROWS` (physical offsets) or `RANGE` (peers of the current row count as current).
    pub units: FrameUnits,
    /// Where the frame starts.
    pub start: FrameBound,
    /// Where the frame ends.
    pub end: FrameBound,
}

/// The unit of a window frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    /// `ROWS`
    Rows,
    /// `RANGE`
    Range,
}

/// One end of a window frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameBound {
    /// `UNBOUNDED PRECEDING`
    UnboundedPreceding,
    /// `n PRECEDING`
    Preceding(u64),
    /// `CURRENT ROW`
    CurrentRow,
    /// `n FOLLOWING`
    Following(u64),
    /// `UNBOUNDED FOLLOWING`
    UnboundedFollowing,
}
