//! Modules, as SQL Server calls objects defined by T-SQL text: procedures, views, functions and
//! triggers, their parameters, and natively compiled `BEGIN ATOMIC` blocks.

use super::{DataType, Expr, Ident, IsolationLevel, ObjectName, Query, Statement, TableElement};

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

/// `CREATE [OR ALTER] TRIGGER name ON table {AFTER | FOR | INSTEAD OF} events AS statements`
/// (a DML trigger), or `CREATE [OR ALTER] TRIGGER name ON DATABASE {AFTER | FOR} event_type |
/// event_group, ... AS statements` (a DDL trigger); the only statement of its batch.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTrigger {
    /// `CREATE`, `ALTER` or `CREATE OR ALTER`.
    pub mode: CreateMode,
    /// The trigger name.
    pub name: ObjectName,
    /// The table (or view) a DML trigger is on; `None` for a DDL trigger, `ON DATABASE`.
    pub table: Option<ObjectName>,
    /// `INSTEAD OF` rather than `AFTER` (or its older spelling `FOR`); never for a DDL trigger.
    pub instead_of: bool,
    /// The statements that fire a DML trigger, at least one, each once; empty for a DDL
    /// trigger.
    pub events: Vec<TriggerEvent>,
    /// The DDL event types and event groups that fire a DDL trigger (`CREATE_TABLE`,
    /// `DDL_TABLE_EVENTS`), as written, at least one; empty for a DML trigger. The parser
    /// does not check the names: the executor knows SQL Server's event hierarchy.
    pub ddl_events: Vec<Ident>,
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

/// `ENABLE | DISABLE TRIGGER {name, ... | ALL} ON {table | DATABASE}`, and `ALTER TABLE table
/// {ENABLE | DISABLE} TRIGGER {name, ... | ALL}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnableTrigger {
    /// `ENABLE` rather than `DISABLE`.
    pub enable: bool,
    /// The triggers; empty for `ALL`.
    pub names: Vec<ObjectName>,
    /// The table; `None` for `ON DATABASE` (the database's DDL triggers).
    pub table: Option<ObjectName>,
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
