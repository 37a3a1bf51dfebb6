//! Sessions: what a connection has (its database, SET options, variables, temporary tables,
//! open transaction) and the interpreter that runs its batches.
//!
//! This file holds the types: [`Session`] (a connection's state), [`Run`] (a batch being
//! run: the session, where its output goes, and the interpreter's state), the scopes'
//! [`Frame`]s and [`Variable`]s, and [`Flow`] and [`Halt`], which say how a statement ends.
//! `Run` is implemented across the crate, each kind of statement in the file for it
//! (`exec::query`, `exec::dml`, `exec::ddl`, ...); the session's own concerns are in these
//! files, in the order a batch meets them:
//!
//! * `lifecycle`: making, resetting (`RESETCONNECTION`) and closing a session, and what the
//!   server asks of it;
//! * `batch`: running a batch, the entry point, and the parse cache;
//! * `call`: running an RPC call (a parameterized statement or a procedure) from values;
//! * `statement`: the dispatcher that runs one statement under SQL Server's rules, among
//!   them what an error stops ("Errors and how far they reach" there);
//! * `control_flow`: statement lists and `GOTO`, `IF`, `WHILE`, `RETURN`, `TRY ... CATCH`;
//! * `scope`: frames and their variables (`DECLARE`, assignment), and what ends with them;
//! * `variables`: a frame's variables, which a statement finds by a slot it remembers;
//! * `set_options`: `SET`, and how the options are shown to others;
//! * `transaction`: user, autocommit and atomic transactions, and commit receipts;
//! * `execute`: `EXECUTE` of procedures and dynamic SQL, and `INSERT ... EXEC`;
//! * `errors`: making and reporting errors, `THROW` and `RAISERROR`;
//! * `cancel`: the client's cancel, `KILL` and `WAITFOR`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use walden_engine::lock::Interrupt;
use walden_engine::types::{DeclaredType, SqlType, Value};
use walden_engine::{CommitOutcome, Database, DeferredCommits, Instance, Isolation, Transaction};

use crate::ast::{Batch, Expr, IsolationLevel};
use crate::exec::execute::cursor::{Cursors, LocalCursors};
use crate::exec::options::Semantics;
use crate::exec::sysviews::query_stats::{Pending, StatsSource, TextHash};
use crate::exec::sysviews::{ServerCounters, SessionActivity};
use crate::exec::{Output, SqlError};

mod batch;
mod call;
mod cancel;
mod control_flow;
mod errors;
mod execute;
mod lifecycle;
mod scope;
mod set_options;
mod statement;
mod transaction;
mod variables;

pub use call::{CallArgument, CallOutcome, CallTarget, CallValue};
pub use cancel::CancelSignal;
pub(crate) use errors::{int_of, printf};
pub(crate) use scope::{assign_binary, check_declarations};
pub(crate) use variables::Variables;

/// How deep procedures may call each other (SQL Server's limit, error 217).
pub(crate) const MAX_NESTING: usize = 32;

/// The number of the error that a statement interrupted by the client's cancel (in a lock
/// wait or a long scan or join) stops with: SQL Server's internal number for an attention.
/// The client never sees it: the statement turns it into a silent cancel.
pub(crate) const CANCELLED: i32 = 3617;

/// The SET options of a session.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) nocount: bool,
    pub(crate) xact_abort: bool,
    /// `SET NOEXEC ON` or `SET PARSEONLY ON`: batches are parsed (so their syntax errors are
    /// reported) but no statement runs but the SET that turns this off again.
    pub(crate) noexec: bool,
    /// `SET FMTONLY ON`: a SELECT sends its result set's metadata without rows (mssql-jdbc
    /// asks for a prepared statement's columns so); no other statement runs.
    pub(crate) fmtonly: bool,
    /// `SET IMPLICIT_TRANSACTIONS ON`: the statements `starts_implicit_transaction` lists
    /// open a transaction that stays open until COMMIT or ROLLBACK.
    pub(crate) implicit_transactions: bool,
    /// `SET TEXTSIZE`: the most bytes of a text, ntext or `(max)` value the server sends.
    pub(crate) textsize: i64,
    /// `SET ROWCOUNT`: a SELECT returns, and an INSERT, UPDATE or DELETE changes, at most
    /// this many rows; 0 (the default) for no limit.
    pub(crate) rowcount: usize,
    /// `SET LOCK_TIMEOUT`: None waits for ever (-1, the default).
    pub(crate) lock_timeout: Option<Duration>,
    /// The level the engine's transactions run at (REPEATABLE READ runs as SERIALIZABLE,
    /// SNAPSHOT as READ COMMITTED).
    pub(crate) isolation: Isolation,
    /// The level `SET TRANSACTION ISOLATION LEVEL` named, as the session's views and the
    /// rules of table hints (`READPAST`) see it.
    pub(crate) isolation_level: IsolationLevel,
    /// `SET STATISTICS IO ON`: each statement reports the pages it read per table.
    pub(crate) statistics_io: bool,
    /// `SET STATISTICS TIME ON`: each statement reports its CPU and elapsed time.
    pub(crate) statistics_time: bool,
    /// `SET SHOWPLAN_TEXT | SHOWPLAN_ALL ON`: statements return their plans instead of
    /// running.
    pub(crate) showplan: Option<crate::exec::plan::showplan::Showplan>,
    /// The options that change what statements compute (`options.rs`).
    pub(crate) semantics: Semantics,
}

/// The table whose identity column takes explicit values (`SET IDENTITY_INSERT ... ON`).
#[derive(Debug, Clone)]
pub(crate) struct IdentityInsert {
    db: u32,
    table: u32,
    /// `database.schema.table`, as error 8107 names it.
    name: String,
}

/// A declared variable.
#[derive(Debug, Clone)]
pub(crate) struct Variable {
    pub(crate) name: String,
    pub(crate) ty: SqlType,
    /// The type it was declared with when Walden holds it as `ty` (SMALLDATETIME as
    /// DATETIME, ...): its values are fitted to it, and a client is told it is of it.
    pub(crate) declared: Option<DeclaredType>,
    pub(crate) value: Value,
}

impl Variable {
    /// `v` converted for a variable of type `ty` declared as `declared` (see
    /// [`Variable::declared`]): as an assignment converts, then rounded or range-checked.
    pub(crate) fn convert(
        v: Value,
        ty: SqlType,
        declared: Option<DeclaredType>,
    ) -> Result<Value, SqlError> {
        // The common case in loops: a value of the variable's own plain type needs nothing.
        if declared.is_none()
            && matches!(
                (&v, ty),
                (Value::Null, _)
                    | (Value::Int(_), SqlType::Int)
                    | (Value::BigInt(_), SqlType::BigInt)
                    | (Value::SmallInt(_), SqlType::SmallInt)
                    | (Value::TinyInt(_), SqlType::TinyInt)
                    | (Value::Bit(_), SqlType::Bit)
            )
        {
            return Ok(v);
        }
        let source = v.kind_name();
        let v = crate::exec::scalar::coerce(v, ty, true);
        match declared {
            Some(declared) => crate::exec::scalar::fit_declared(
                declared,
                v.map_err(|e| crate::exec::scalar::declared_conversion_error(declared, e))?,
                source,
            ),
            None => v,
        }
    }
}

/// One scope of variables: a batch, or a procedure call.
#[derive(Debug, Default)]
pub(crate) struct Frame {
    pub(crate) vars: Variables,
    /// The procedure running in this frame.
    pub(crate) procedure: Option<String>,
    /// `SCOPE_IDENTITY()`.
    pub(crate) scope_identity: Option<i64>,
    /// Temporary tables created in this procedure call, dropped when it returns.
    pub(crate) temp_created: Vec<String>,
    /// The errors being handled by the enclosing `CATCH` blocks, innermost last.
    pub(crate) caught: Vec<SqlError>,
    /// The `LOCAL` cursors declared in this batch or procedure call.
    pub(crate) cursors: LocalCursors,
    /// In a user-defined function's frame: the type it returns.
    pub(crate) returns: Option<SqlType>,
    /// In a user-defined function's frame: the value its `RETURN` gave.
    pub(crate) returned: Option<Value>,
    /// Table variable names this frame took over from its callers: (lower-cased name, the
    /// caller's table the name meant, whether it is a READONLY table-valued parameter). The
    /// frame's end puts the callers' tables back under their names.
    pub(crate) hidden_tables: Vec<(String, Option<String>, bool)>,
    /// The variables the frame's DECLAREs made: (lower-cased name, the byte offset of the
    /// DECLARE statement). A DECLARE met again (in a loop) finds its own entry and keeps the
    /// variable, as SQL Server's does: a declaration is not an executable statement there,
    /// only its `= value` is.
    pub(crate) declared: Vec<(String, usize)>,
    /// The text the frame's statements were parsed from, which their spans index (the
    /// batch, the dynamic SQL, the module's definition): a DDL trigger's event shows its
    /// statement's text from it. `None` where nothing needs it (a procedure or trigger in a
    /// database without DDL triggers); the event then shows the statement as Walden prints
    /// it.
    pub(crate) source: Option<Arc<str>>,
    /// The text `sys.dm_exec_query_stats` counts the frame's statements under; `None` where
    /// they are not counted (triggers, functions, cursors' fetches).
    pub(crate) stats: Option<StatsSource>,
    /// The object id of the procedure, trigger or function running in this frame
    /// (`@@PROCID`); 0 for a batch or dynamic SQL.
    pub(crate) module_id: i32,
    /// A procedure's or dynamic SQL's frame, which an error that aborts its scope (a name
    /// that does not resolve, see `aborts_scope`) ends alone, its caller going on with the
    /// next statement, as SQL Server's compile errors at deferred name resolution do. In the
    /// batch's frame such an error ends the batch; triggers and functions never get here.
    pub(crate) ends_alone: bool,
    /// Set in an `ends_alone` frame when such an error ended it: its body's `Halt::Aborted`
    /// is then `Halt::ScopeEnded` to its caller.
    pub(crate) scope_aborted: bool,
}

/// What a statement tells the statements around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Flow {
    Next,
    Break,
    Continue,
    Return(i32),
    /// `GOTO label` (lower-cased), and the GOTO's line: each enclosing statement list looks
    /// for the label among its own statements and goes on from there, or passes the jump out.
    Goto(String, u32),
}

/// Why execution stops unwinding.
#[derive(Debug)]
pub(crate) enum Halt {
    /// An error not yet reported: a `TRY` block may still catch it.
    Error(SqlError),
    /// The batch is aborted; the error was already reported.
    Aborted,
    /// The client cancelled the batch: it stops without an error (see `cancel`).
    Cancelled,
    /// The procedure or dynamic SQL the statement ran was ended by an error that aborts only
    /// its scope, already reported: the statement failed, and its batch goes on.
    ScopeEnded,
}

impl From<SqlError> for Halt {
    fn from(e: SqlError) -> Halt {
        Halt::Error(e)
    }
}

/// What running a statement or an expression gives: its result, or why execution unwinds.
pub(crate) type Step<T> = Result<T, Halt>;

/// A connection's state: its database, options, variables' scopes and open transaction.
#[derive(Debug)]
pub struct Session {
    pub(crate) instance: Arc<Instance>,
    pub(crate) counters: Arc<ServerCounters>,
    /// What `sys.dm_exec_sessions` and `sys.dm_exec_requests` show of this session.
    pub(crate) activity: Arc<SessionActivity>,
    /// The running (or last) request's text and its hash, which its `sql_handle` carries.
    pub(crate) request_text: (Arc<str>, TextHash),
    /// The runs this session counted for `sys.dm_exec_query_stats` that its request has not
    /// yet given to the server's store.
    pub(crate) pending_stats: Pending,
    /// This state owns the session's registration (and unregisters it when dropped); false
    /// for the state a RESETCONNECTION replaced.
    registered: bool,
    pub(crate) spid: u16,
    pub(crate) db: Arc<Database>,
    pub(crate) opts: Options,
    /// The open transaction: a user transaction when `trancount > 0`, else an autocommit
    /// transaction of the running statement.
    pub(crate) tx: Option<Transaction>,
    pub(crate) trancount: u32,
    /// How the last user transaction ended: committed (true) or rolled back (false).
    last_outcome: Option<bool>,
    /// The session's last commit that logged anything: its receipt, which
    /// `sys.sp_last_commit` shows and `sys.sp_wait_for_hardened` waits for.
    pub(crate) last_commit: Option<CommitOutcome>,
    /// Temporary tables and procedures: the name the session uses (lower-cased, `#t`) -> the
    /// name in tempdb. Dropped when the session ends.
    pub(crate) temp_tables: HashMap<String, String>,
    /// The global temporary procedures (`##p`) this session created, by their name in
    /// tempdb (the same name): dropped when the session ends (`exec::temp_procedure`).
    pub(crate) global_procedures: Vec<String>,
    temp_seq: u32,
    /// `@@IDENTITY`.
    pub(crate) identity: Option<i64>,
    /// The table `SET IDENTITY_INSERT ... ON` names, if any: at most one per session.
    pub(crate) identity_insert: Option<IdentityInsert>,
    /// How many views the running query is inside (`exec::view`).
    pub(crate) view_depth: usize,
    /// How many user-defined functions are running (`exec::function`): their statements run
    /// inside the calling statement's transaction, which they neither commit nor begin.
    pub(crate) function_depth: usize,
    /// While CREATE VIEW or CREATE FUNCTION runs its query to check it: a temporary table
    /// named there is error 4508, as it is in a running function (`function_depth`).
    pub(crate) checking_module: bool,
    /// The triggers running, innermost last (`exec::trigger`).
    pub(crate) running_triggers: Vec<crate::exec::module::trigger::RunningTrigger>,
    /// The rows the running INSERT, UPDATE, DELETE or MERGE changed in tables whose triggers
    /// it fires, collected while it runs and taken when it ends.
    pub(crate) trigger_changes: Vec<crate::exec::module::trigger::TriggerChanges>,
    /// `@@ROWCOUNT`.
    pub(crate) rowcount: u64,
    /// `@@ERROR`.
    pub(crate) last_error: i32,
    pub(crate) frames: Vec<Frame>,
    /// The `GLOBAL` cursors, `@@FETCH_STATUS` and `@@CURSOR_ROWS`.
    pub(crate) cursors: Cursors,
    /// An `INSERT ... EXEC` is running its procedure: another one inside it is error 8164.
    in_insert_exec: bool,
    /// DEFAULT and CHECK expressions by their stored text, parsed once.
    pub(crate) stored_exprs: HashMap<String, Arc<Expr>>,
    /// Batches by their text, parsed once: clients repeat the same batch text (a driver's
    /// prepared statement, a benchmark's transaction), as SQL Server's plan cache expects.
    /// Stored procedures, `sp_executesql` and `EXEC (string)` are parsed through it too.
    batches: HashMap<String, Arc<Batch>, foldhash::fast::RandomState>,
    /// The text bytes `batches` holds.
    batch_bytes: usize,
    /// How many times `batches` was emptied: a syntax tree parsed before may be gone, and
    /// its address taken by another (see `subquery`).
    pub(crate) batch_cache_clears: u64,
    /// The plans of SELECT blocks kept for their next execution (`exec::plan_cache`).
    pub(crate) plans: crate::exec::plan::plan_cache::PlanCache,
    /// Tables' statistics by (database id, table id): when read, from which root page (a
    /// table dropped and created again has another), at which count of the table's
    /// modifications, and what (see `access`).
    pub(crate) table_stats: HashMap<(u32, u32), crate::exec::plan::access::CachedStats>,
    /// The running statement's reads per table, for `SET STATISTICS IO ON`.
    pub(crate) statement_io: Vec<crate::exec::execute::statistics::TableIo>,
    /// The page reads already counted to some table (`Run::io_note`), so that a read made
    /// while another is under way (a streamed join's seek per row of a scan) is not
    /// counted to both.
    pub(crate) io_noted: walden_storage::PageReads,
    /// The common table expressions in scope of the statement SHOWPLAN is explaining, and
    /// whether each is being explained (a recursive one names itself).
    pub(crate) explain_ctes: Vec<(crate::ast::Cte, bool)>,
    /// The statements of the running batch described under SHOWPLAN_XML, sent as one
    /// document when it ends.
    pub(crate) showplan_xml: Vec<crate::exec::plan::showplan_xml::PlannedStatement>,
    /// Says whether the client has cancelled the running batch (see `cancel`).
    cancel: Option<Arc<dyn CancelSignal>>,
    /// What ends the lock waits of the session's transactions: `KILL`, and that signal.
    lock_interrupt: Arc<dyn Interrupt>,
    /// The session's committed transactions whose log flush is not waited for yet, while
    /// `defer_commits` is on (see `walden_engine::deferred_commit`).
    deferred: Arc<DeferredCommits>,
    /// Whether autocommit transactions commit without waiting for their flush, into
    /// `deferred`: the server turns it on for a request of many calls, and hardens `deferred`
    /// before any of the response leaves.
    defer_commits: bool,
    /// Set by `RAISERROR ... WITH LOG` of severity 20 or more: as in SQL Server, the session
    /// is over (its transaction rolled back) and whoever owns it must close the connection.
    terminated: bool,
    /// Holds the application locks taken with `@LockOwner = 'Session'` (see `app_state`),
    /// made at the first one; released when the session closes.
    pub(crate) app_lock_owner: Option<walden_engine::lock::LockOwner>,
    /// `sp_set_session_context`'s keys: each value and whether it is read-only.
    pub(crate) session_context: HashMap<String, (Value, bool)>,
    /// The `INSERT BULK` the next request's Bulk Load rows are for (`exec::bulk`): set by
    /// the statement, cleared when the next batch starts.
    pub(crate) pending_bulk: Option<crate::exec::dml::bulk::BulkPlan>,
}

/// A batch being run: the session, where its output goes, and the interpreter's state.
pub(crate) struct Run<'a> {
    pub(crate) s: &'a mut Session,
    pub(crate) out: &'a mut dyn Output,
    /// How many `TRY` blocks enclose the running statement.
    try_depth: usize,
    /// Common table expressions in scope, innermost last, each already materialized.
    pub(crate) ctes: Vec<(String, Arc<crate::exec::RowSet>)>,
    /// While a select list's row is evaluated: the sequence values it has drawn, as
    /// (database id, sequence id, value).
    pub(crate) row_sequences: Option<Vec<(u32, u32, Value)>>,
    /// The line of the statement running, which a message reported without one is given.
    line: u32,
    /// The uncorrelated subqueries' rows, for the running simple statement only (see
    /// `subquery`).
    pub(crate) subqueries: HashMap<usize, crate::exec::execute::subquery::Cached>,
    /// Variable assignments made so far: a cached subquery computed before the latest one
    /// may have read an older value.
    pub(crate) assignments: u64,
    /// While an index nested-loop join seeks its inner table once per outer row: the
    /// cursor of the last seek, made again for the next (`Transaction::reseek_table_only`),
    /// so that the seeks keep its buffers and start at its leaf. `None` otherwise.
    pub(crate) seek_spare: Option<SeekSpare>,
    /// While a column's stored DEFAULT is evaluated (`Run::default_value`): the one place
    /// NEWSEQUENTIALID() runs.
    pub(crate) in_default: bool,
}

/// [`Run::seek_spare`]: whether seeks keep their cursor for the next, and the one kept.
#[derive(Default)]
pub(crate) struct SeekSpare {
    pub(crate) cursor: Option<walden_engine::RowCursor>,
}

impl<'a> Run<'a> {
    /// A run of a batch (or of a bulk load's rows) on `s`, reporting to `out`.
    pub(crate) fn new(s: &'a mut Session, out: &'a mut dyn Output) -> Run<'a> {
        Run {
            s,
            out,
            try_depth: 0,
            ctes: Vec::new(),
            row_sequences: None,
            line: 0,
            subqueries: HashMap::new(),
            assignments: 0,
            seek_spare: None,
            in_default: false,
        }
    }
}
