//! Statements that are neither queries, data modification nor DDL: variables (`DECLARE`, `SET`),
//! control flow (`IF`, `WHILE`, `TRY...CATCH`, `THROW`, `RAISERROR`, `WAITFOR`), transactions,
//! `EXECUTE` and `DBCC`.

use super::{DataType, Expr, Ident, ObjectName, Statement, TableElement, VarRef};

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
        /// The variable.
        name: VarRef,
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
    /// The value: an expression, or [`ExprKind::Default`](super::ExprKind::Default). A bare
    /// word (`EXEC sp_help t`) is a string literal, as in SQL Server.
    pub value: Expr,
    /// `OUTPUT` / `OUT`.
    pub output: bool,
}
