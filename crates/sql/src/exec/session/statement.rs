//! The statement dispatcher: runs one statement with SQL Server's rules around it: `NOEXEC`,
//! `FMTONLY` and SHOWPLAN, implicit transactions, the undo mark of a statement that may
//! change data, `STATISTICS IO | TIME`, DDL triggers, and what a failing statement stops
//! (below); then hands the statement to the code for its kind.
//!
//! The statements with nowhere better to live (`PRINT`, `USE`, `CHECKPOINT`, `ALTER INDEX`)
//! are run here too.
//!
//! # Errors and how far they reach
//!
//! SQL Server distinguishes how much of the work an error stops, and so does Walden:
//!
//! * **Statement abort** (the default: duplicate keys, NULL into NOT NULL, divide by zero,
//!   lock timeouts, `RAISERROR`): the failing statement's changes are undone, the error is
//!   reported, and the batch goes on with the next statement; an open transaction stays open.
//! * **Batch abort** (conversion errors 245/8114/241, `THROW` outside `TRY`, unknown objects
//!   and columns, a deadlock victim, any error under `SET XACT_ABORT ON`): the rest of the
//!   batch is skipped, in every procedure on the call stack. A deadlock and `XACT_ABORT` also
//!   roll the transaction back.
//! * Inside `BEGIN TRY`, any error of severity 11 or more goes to the `CATCH` block instead
//!   of being reported.
//!
//! The session itself always survives: the next batch starts clean.

use walden_engine::types::Value;
use walden_engine::Transaction;

use crate::ast::{Expr, ObjectName, SetStatement, Statement, StatementKind, TransactionStatement};
use crate::exec::eval::Env;
use crate::exec::execute::statistics::RunClock;
use crate::exec::scalar;
use crate::exec::sysviews::Command;
use crate::exec::{Counted, SqlError};

use super::{Flow, Halt, Run, Step, CANCELLED};

impl Run<'_> {
    /// Whether `sys.dm_exec_query_stats` counts `st`: a query or DML statement run from a
    /// batch, a parameterized statement, dynamic SQL or a procedure (not from a function or
    /// trigger, whose frames count nothing).
    fn counted(&self, st: &Statement) -> bool {
        let counted = matches!(
            st.kind,
            StatementKind::Select(_)
                | StatementKind::Insert(_)
                | StatementKind::Update(_)
                | StatementKind::Delete(_)
                | StatementKind::Merge(_)
        );
        counted
            && self.s.function_depth == 0
            && self.s.frames.last().is_some_and(|f| f.stats.is_some())
    }

    /// Runs one statement, applying SQL Server's rules for what an error stops.
    pub(super) fn statement(&mut self, st: &Statement) -> Step<Flow> {
        if self.cancelled() {
            return Err(Halt::Cancelled);
        }
        if self.s.opts.noexec && !sets_noexec(&st.kind) {
            return Ok(Flow::Next);
        }
        // Under SHOWPLAN only SET options and declarations run (a plan may name a
        // variable); every other statement describes its plan instead.
        let runs_under_showplan = matches!(&st.kind, StatementKind::Declare(_))
            || matches!(&st.kind, StatementKind::Set(s) if matches!(&**s, SetStatement::Options { .. }));
        if let Some(kind) = self.s.opts.showplan.filter(|_| !runs_under_showplan) {
            self.showplan(st, kind).map_err(|e| e.at_line(st.span.line))?;
            return Ok(Flow::Next);
        }
        // Variables are still declared, as SQL Server compiles them, for the SELECTs
        // described to read; their initial values are assignments, which do not run.
        if self.s.opts.fmtonly {
            if let StatementKind::Declare(declared) = &st.kind {
                if declared.iter().any(|d| {
                    matches!(d.kind, crate::ast::DeclarationKind::Scalar { value: Some(_), .. })
                }) {
                    let mut bare = st.clone();
                    if let StatementKind::Declare(declared) = &mut bare.kind {
                        for d in declared {
                            if let crate::ast::DeclarationKind::Scalar { value, .. } = &mut d.kind {
                                *value = None;
                            }
                        }
                    }
                    return self.statement(&bare);
                }
            } else if !matches!(st.kind, StatementKind::Select(_))
                && !sets_option(&st.kind, &["FMTONLY"])
            {
                return Ok(Flow::Next);
            }
        }
        let compound = matches!(
            st.kind,
            StatementKind::Block(_)
                | StatementKind::If(_)
                | StatementKind::While(_)
                | StatementKind::TryCatch(_)
                | StatementKind::Atomic(_)
                | StatementKind::Execute(_)
        );
        self.s.activity.statement(command_of(&st.kind));
        if self.s.opts.implicit_transactions
            && self.s.function_depth == 0
            && self.s.trancount == 0
            && starts_implicit_transaction(&st.kind)
        {
            self.begin_user_transaction("implicit_transaction".into());
        }
        // Inside a user transaction, a statement that may change data is undone alone if it
        // fails; compound statements leave that to the statements they contain.
        let mark = if compound || !may_change_data(&st.kind) {
            None
        } else {
            self.s.tx.as_ref().filter(|_| self.s.trancount > 0).map(Transaction::undo_mark)
        };
        let outer_line = std::mem::replace(&mut self.line, st.span.line);
        if !compound {
            self.subqueries.clear();
        }
        let statistics = (!compound && self.s.function_depth == 0 && self.statistics_on())
            .then(|| self.statistics_start());
        let counted = self.counted(st).then(RunClock::start);
        scalar::settings::install(self.s.opts.semantics.scalar_settings());
        // The DDL events the statement raises are worked out before it changes the catalog
        // and fire its database's DDL triggers once it has succeeded (`exec::ddl_trigger`).
        let ddl_events = if compound { Vec::new() } else { self.ddl_events(st) };
        // The table hints the statement pushes (`exec::table_hints`) end with it, and so do
        // the table locks it took only to read at READ COMMITTED (`docs/locking.md`).
        let hints_mark = self.s.tx.as_ref().map_or(0, Transaction::table_hints_mark);
        let locks_mark = self.s.tx.as_ref().map(Transaction::statement_locks_mark);
        let result = match self.statement_kind(st) {
            Ok(flow) if !ddl_events.is_empty() => self.fire_ddl_triggers(ddl_events).map(|()| flow),
            other => other,
        };
        // A statement outside a user transaction (nor in a function) is followed at once by
        // its autocommit transaction's end (`finish_autocommit`, on every path below), which
        // gives back every lock: its statement locks need not be given back one by one first.
        let ends_transaction = !compound && self.s.trancount == 0 && self.s.function_depth == 0;
        if let Some(tx) = self.s.tx.as_mut() {
            tx.truncate_table_hints(hints_mark);
            if !ends_transaction {
                tx.end_statement_locks(locks_mark);
            }
        }
        if !compound {
            for warning in scalar::settings::take_warnings() {
                self.out.message(&warning.at_line(st.span.line));
            }
        }
        if let Some(start) = statistics {
            self.statistics_end(start);
        }
        if let (Some(clock), Ok(_)) = (counted, &result) {
            let s = &mut *self.s;
            let sample = clock.sample(s.rowcount);
            if let Some(source) = s.frames.last().and_then(|f| f.stats.as_ref()) {
                let span = (st.span.start, st.span.end);
                s.pending_stats.statement(source, span, s.db.id(), &sample);
                if s.pending_stats.full() {
                    s.pending_stats.flush(&s.counters.query_stats);
                    s.pending_stats.begin();
                }
            }
        }
        if !compound {
            self.subqueries.clear();
        }
        self.line = outer_line;
        let result = match result {
            // Interrupted by the client's cancel while it ran (a lock wait, a long scan or
            // join): the batch stops as it does at any cancellation point, without an error,
            // and no CATCH sees it.
            Err(Halt::Error(e)) if e.number == CANCELLED => Err(Halt::Cancelled),
            Err(Halt::Error(e)) => {
                let mut e = e.at_line(st.span.line);
                if e.procedure.is_none() {
                    e.procedure = self.procedure_name();
                }
                Err(Halt::Error(e))
            }
            other => other,
        };
        // The client sees every statement end but variable declarations, control flow
        // (labels, jumps, compound statements, whose statements it sees) and anything inside
        // a function.
        let seen = !compound
            && self.s.function_depth == 0
            && !matches!(
                st.kind,
                StatementKind::Declare(_)
                    | StatementKind::Label(_)
                    | StatementKind::Goto(_)
                    | StatementKind::Break
                    | StatementKind::Continue
                    | StatementKind::Return(_)
            );
        match result {
            Ok(flow) => {
                if !compound {
                    self.finish_autocommit(true);
                    if !matches!(st.kind, StatementKind::Set(_) | StatementKind::Declare(_)) {
                        self.s.last_error = 0;
                    }
                }
                if seen {
                    self.out.statement_end();
                }
                Ok(flow)
            }
            Err(Halt::Aborted) => {
                self.finish_autocommit(false);
                Err(Halt::Aborted)
            }
            Err(Halt::ScopeEnded) => {
                // The statement's procedure or dynamic SQL ended at an error reported where
                // it happened; what it did before stays, @@ERROR keeps the error, and the
                // batch goes on (as a statement's own error does).
                self.finish_autocommit(true);
                if seen {
                    self.out.statement_end();
                }
                Ok(Flow::Next)
            }
            Err(Halt::Cancelled) => {
                // A statement cancelled while it ran (a lock wait, a scan, a join) is undone
                // alone; the transaction stays open (see `cancel`).
                self.finish_autocommit(false);
                if let Err(undo) = self.undo_statement(mark) {
                    self.report(undo);
                }
                Err(Halt::Cancelled)
            }
            Err(Halt::Error(e)) => {
                // Undo the failed statement's own changes.
                self.finish_autocommit(false);
                if let Err(undo) = self.undo_statement(mark) {
                    self.report(e);
                    self.report(undo);
                    return Err(Halt::Aborted);
                }
                // RAISERROR ignores XACT_ABORT (THROW honours it), as in SQL Server.
                let raised = matches!(st.kind, StatementKind::Raiserror(_));
                let xact_abort = self.s.opts.xact_abort && !raised;
                let dooms = e.number == 1205 || xact_abort;
                if dooms && self.s.trancount > 0 {
                    self.rollback_all();
                }
                if self.try_depth > 0 && e.severity > 10 {
                    return Err(Halt::Error(e));
                }
                // A CREATE that fails in a transaction aborts the batch and rolls the
                // transaction back, as SQL Server does (python-tds' and pymssql's own suites
                // count on it: the table the transaction created before is gone).
                let failed_create = is_create(&st.kind) && self.s.trancount > 0;
                if failed_create {
                    self.rollback_all();
                }
                // THROW ends the batch when no CATCH takes it (unlike RAISERROR).
                let thrown = matches!(st.kind, StatementKind::Throw(_));
                // An error that aborts the batch (a conversion error, ...) also rolls the
                // transaction back, as SQL Server's batch abortion does; one that aborts only
                // a scope (an unknown name) leaves it open.
                if aborts_batch(&e) && !aborts_scope(&e) && self.s.trancount > 0 {
                    self.rollback_all();
                }
                let abort = xact_abort || thrown || failed_create || aborts_batch(&e);
                // An error that aborts a scope ends a procedure or dynamic SQL alone.
                if !xact_abort && !thrown && !failed_create && aborts_scope(&e) {
                    if let Some(frame) = self.s.frames.last_mut().filter(|f| f.ends_alone) {
                        frame.scope_aborted = true;
                    }
                }
                self.report(e);
                if abort {
                    Err(Halt::Aborted)
                } else {
                    if seen {
                        self.out.statement_end();
                    }
                    Ok(Flow::Next)
                }
            }
        }
    }

    /// Runs a statement as its kind says: the table from kinds of statement to the code that
    /// runs them (DDL, the rest, in `exec::ddl`).
    fn statement_kind(&mut self, st: &Statement) -> Step<Flow> {
        match &st.kind {
            StatementKind::Block(list) => self.block(list),
            StatementKind::Atomic(block) => self.atomic_block(block),
            StatementKind::If(i) => self.if_statement(i),
            StatementKind::While(w) => self.while_loop(w),
            StatementKind::Break => Ok(Flow::Break),
            StatementKind::Label(_) => Ok(Flow::Next),
            StatementKind::Goto(label) => {
                Ok(Flow::Goto(label.value.to_ascii_lowercase(), st.span.line))
            }
            StatementKind::Continue => Ok(Flow::Continue),
            StatementKind::Return(v) => self.return_statement(v.as_ref()),
            StatementKind::TryCatch(tc) => self.try_catch(tc, st.span.line),
            StatementKind::Declare(decls) => self.declare(decls, st.span.start),
            StatementKind::Set(set) => {
                self.set(set)?;
                // A simple assignment counts one row in @@ROWCOUNT, as SQL Server documents.
                // A SET of an option leaves it: the documentation says it resets it, but
                // triggers that begin `SET NOCOUNT ON; IF @@ROWCOUNT = 0 RETURN` rely on
                // SQL Server keeping the statement's count there.
                if matches!(&**set, SetStatement::Variable { .. }) {
                    self.s.rowcount = 1;
                }
                Ok(Flow::Next)
            }
            StatementKind::Print(e) => {
                let v = self.value(e)?;
                let text = if v.is_null() { String::new() } else { scalar::to_text(&v) };
                let mut msg = SqlError::with_severity(0, 0, text);
                msg.state = 1;
                msg.line = st.span.line;
                self.out.message(&msg);
                self.s.rowcount = 0;
                Ok(Flow::Next)
            }
            StatementKind::Throw(t) => Err(self.throw(t.as_deref())?.into()),
            StatementKind::Raiserror(r) => {
                self.raiserror(r, st.span.line)?;
                self.s.rowcount = 0;
                Ok(Flow::Next)
            }
            StatementKind::Use(name) => {
                let db =
                    self.s.instance.database(&name.value).map_err(|e| self.s.engine_error(e))?;
                self.s.db = db;
                self.s.activity.database_changed(self.s.db.id());
                let mut msg = SqlError::with_severity(
                    5701,
                    0,
                    format!("Changed database context to '{}'.", self.s.db.name()),
                );
                msg.line = st.span.line;
                self.out.message(&msg);
                self.s.rowcount = 0;
                Ok(Flow::Next)
            }
            StatementKind::Transaction(t) => {
                self.transaction(t)?;
                self.s.rowcount = 0;
                Ok(Flow::Next)
            }
            StatementKind::Execute(e) => {
                self.execute(e)?;
                Ok(Flow::Next)
            }
            StatementKind::Select(sel) => {
                if !self.assign_by_kept_plan(sel)? {
                    self.select_statement(sel)?;
                }
                Ok(Flow::Next)
            }
            StatementKind::InsertBulk(b) => {
                self.insert_bulk(b)?;
                Ok(Flow::Next)
            }
            StatementKind::BulkInsert(b) => {
                let n = self.bulk_insert(b)?;
                self.done(Counted::Insert, n);
                Ok(Flow::Next)
            }
            StatementKind::Insert(i) => {
                let _namespaces = enter_statement_namespaces(&i.xml_namespaces);
                let n = self.insert(i);
                let n = self.after_triggers(n)?;
                self.done(Counted::Insert, n);
                Ok(Flow::Next)
            }
            StatementKind::Update(u) => {
                let _namespaces = enter_statement_namespaces(&u.xml_namespaces);
                let n = self.update(u).map_err(Halt::from);
                let n = self.after_triggers(n)?;
                self.done(Counted::Update, n);
                Ok(Flow::Next)
            }
            StatementKind::Delete(d) => {
                let _namespaces = enter_statement_namespaces(&d.xml_namespaces);
                let n = self.delete(d).map_err(Halt::from);
                let n = self.after_triggers(n)?;
                self.done(Counted::Delete, n);
                Ok(Flow::Next)
            }
            StatementKind::Merge(m) => {
                let _namespaces = enter_statement_namespaces(&m.xml_namespaces);
                let n = self.merge(m).map_err(Halt::from);
                let n = self.after_triggers(n)?;
                self.done(Counted::Merge, n);
                Ok(Flow::Next)
            }
            StatementKind::Checkpoint(_) => {
                self.s.db.checkpoint().map_err(|e| self.s.engine_error(e))?;
                Ok(Flow::Next)
            }
            StatementKind::UpdateStatistics(u) => {
                self.update_statistics(u)?;
                Ok(Flow::Next)
            }
            StatementKind::CreateStatistics { name, table, columns, options } => {
                self.create_statistics(name, table, columns, options)?;
                Ok(Flow::Next)
            }
            StatementKind::AlterIndex { index, table, action } => {
                self.alter_index(index.as_ref(), table, action)?;
                Ok(Flow::Next)
            }
            StatementKind::Reconfigure { .. } => Ok(Flow::Next),
            StatementKind::Dbcc(d) => {
                self.dbcc(d)?;
                Ok(Flow::Next)
            }
            StatementKind::Kill(e) => {
                self.kill(e)?;
                Ok(Flow::Next)
            }
            StatementKind::Cursor(c) => {
                self.cursor_statement(c)?;
                Ok(Flow::Next)
            }
            StatementKind::Waitfor(w) => {
                self.waitfor(w)?;
                Ok(Flow::Next)
            }
            _ => {
                self.ddl(st)?;
                Ok(Flow::Next)
            }
        }
    }

    /// Ends a data-changing statement that returned `result`: if it succeeded, runs the
    /// triggers its changes fire (`exec::trigger`); either way the collected changes go.
    fn after_triggers(&mut self, result: Step<u64>) -> Step<u64> {
        let changes = std::mem::take(&mut self.s.trigger_changes);
        let n = result?;
        for c in changes {
            self.fire_triggers(c)?;
        }
        Ok(n)
    }

    /// A statement that counted `n` rows: `@@ROWCOUNT`, and the count for the client.
    pub(crate) fn done(&mut self, kind: Counted, n: u64) {
        self.s.rowcount = n;
        // Under NOCOUNT the statement still ends as one of its kind, without its count.
        let count = (!self.s.opts.nocount).then_some(n);
        self.out.done_counted(kind, count);
    }

    /// Evaluates an expression outside any row.
    pub(crate) fn value(&mut self, e: &Expr) -> Result<Value, SqlError> {
        self.eval(e, &Env::empty())
    }

    /// `ALTER INDEX`: the index (or table) must exist. REBUILD, REORGANIZE and SET have
    /// nothing to do: Walden's B-trees merge pages as rows go, keep no fill factor, and take
    /// their locks as `docs/locking.md` says whatever the options. DISABLE, which would make an
    /// index (or, for the clustered one, the table) unusable until rebuilt, is refused.
    fn alter_index(
        &mut self,
        index: Option<&crate::ast::Ident>,
        table: &ObjectName,
        action: &str,
    ) -> Result<(), SqlError> {
        let t = self.resolve_table(table, &table.name.value)?;
        if let Some(index) = index {
            if !t.def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&index.value)) {
                return Err(SqlError::new(
                    1088,
                    format!(
                        "Cannot find the object \"{}\" because it does not exist or you do not have permissions.",
                        index.value
                    ),
                ));
            }
        }
        if action == "DISABLE" {
            return Err(SqlError::new(
                50000,
                "ALTER INDEX ... DISABLE is not supported by Walden: its indexes are always usable.",
            ));
        }
        Ok(())
    }
}

/// The `sys.dm_exec_requests.command` of a statement.
fn command_of(kind: &StatementKind) -> Command {
    match kind {
        StatementKind::Select(_) => Command::Select,
        StatementKind::Insert(_) => Command::Insert,
        StatementKind::BulkInsert(_) => Command::BulkInsert,
        StatementKind::Update(_) => Command::Update,
        StatementKind::Delete(_) => Command::Delete,
        StatementKind::Execute(_) => Command::Execute,
        StatementKind::Waitfor(_) => Command::Waitfor,
        StatementKind::Transaction(TransactionStatement::Begin { .. }) => Command::BeginTransaction,
        StatementKind::Transaction(TransactionStatement::Commit { .. }) => {
            Command::CommitTransaction
        }
        StatementKind::Transaction(_) => Command::RollbackTransaction,
        StatementKind::Declare(_) => Command::Declare,
        StatementKind::Set(_) => Command::SetOption,
        StatementKind::CreateDatabase(_)
        | StatementKind::AlterDatabase(_)
        | StatementKind::CreateTable(_)
        | StatementKind::CreateIndex(_)
        | StatementKind::CreateSequence(_)
        | StatementKind::AlterSequence(_)
        | StatementKind::CreateType(_)
        | StatementKind::CreateProcedure(_)
        | StatementKind::CreateView(_)
        | StatementKind::CreateFunction(_)
        | StatementKind::CreateTrigger(_)
        | StatementKind::EnableTrigger(_)
        | StatementKind::AlterTable(_)
        | StatementKind::TruncateTable(_) => Command::Create,
        StatementKind::Drop(_) | StatementKind::DropIndex(_) => Command::Drop,
        StatementKind::Dbcc(_) => Command::Dbcc,
        StatementKind::Checkpoint(_) => Command::Checkpoint,
        _ => Command::Awaiting,
    }
}

/// Whether `kind` is a `SET` of NOEXEC or PARSEONLY: the one statement that runs while they
/// are on.
fn sets_noexec(kind: &StatementKind) -> bool {
    sets_option(kind, &["NOEXEC", "PARSEONLY"])
}

/// Whether `kind` is a `SET` of one of the ON/OFF `options`.
fn sets_option(kind: &StatementKind, options: &[&str]) -> bool {
    matches!(kind, StatementKind::Set(s) if matches!(&**s, SetStatement::Options { names, .. }
        if names.iter().any(|n| options.iter().any(|o| n.eq_ignore_ascii_case(o)))))
}

/// Whether a simple statement may change rows or objects (and so needs an undo mark). The
/// ones that cannot are listed, so that a new statement kind gets a mark by default.
fn may_change_data(kind: &StatementKind) -> bool {
    !matches!(
        kind,
        StatementKind::Set(_)
            | StatementKind::Print(_)
            | StatementKind::Throw(_)
            | StatementKind::Raiserror(_)
            | StatementKind::Use(_)
            | StatementKind::Transaction(_)
            | StatementKind::Break
            | StatementKind::Continue
            | StatementKind::Return(_)
            | StatementKind::Checkpoint(_)
            | StatementKind::UpdateStatistics(_)
            | StatementKind::CreateStatistics { .. }
            | StatementKind::AlterIndex { .. }
            | StatementKind::Reconfigure { .. }
            | StatementKind::Dbcc(_)
            | StatementKind::Kill(_)
            | StatementKind::Waitfor(_)
    )
}

/// Whether a statement opens a transaction under `SET IMPLICIT_TRANSACTIONS ON` when none is
/// open: SQL Server's list (ALTER, BEGIN TRANSACTION, CREATE, DELETE, DROP, INSERT, SELECT
/// from a table, TRUNCATE TABLE, UPDATE).
fn starts_implicit_transaction(kind: &StatementKind) -> bool {
    match kind {
        StatementKind::Select(s) => query_reads_table(&s.query.body),
        StatementKind::Insert(_)
        | StatementKind::BulkInsert(_)
        | StatementKind::Update(_)
        | StatementKind::Delete(_)
        | StatementKind::Merge(_)
        | StatementKind::AlterDatabase(_)
        | StatementKind::CreateTable(_)
        | StatementKind::TruncateTable(_)
        | StatementKind::CreateIndex(_)
        | StatementKind::CreateSequence(_)
        | StatementKind::AlterSequence(_)
        | StatementKind::CreateType(_)
        | StatementKind::CreateProcedure(_)
        | StatementKind::CreateView(_)
        | StatementKind::CreateFunction(_)
        | StatementKind::CreateTrigger(_)
        | StatementKind::EnableTrigger(_)
        | StatementKind::Drop(_)
        | StatementKind::DropIndex(_)
        | StatementKind::AlterTable(_) => true,
        StatementKind::Transaction(t) => matches!(t, TransactionStatement::Begin { .. }),
        _ => false,
    }
}

fn query_reads_table(body: &crate::ast::QueryBody) -> bool {
    match body {
        crate::ast::QueryBody::Select(s) => !s.from.is_empty(),
        crate::ast::QueryBody::SetOperation { left, right, .. } => {
            query_reads_table(left) || query_reads_table(right)
        }
        _ => false,
    }
}

/// Whether `kind` creates an object (a table, index, view, module, type, schema or
/// sequence).
fn is_create(kind: &StatementKind) -> bool {
    matches!(
        kind,
        StatementKind::CreateTable(_)
            | StatementKind::CreateIndex(_)
            | StatementKind::CreateSequence(_)
            | StatementKind::CreateProcedure(_)
            | StatementKind::CreateView(_)
            | StatementKind::CreateFunction(_)
            | StatementKind::CreateType(_)
            | StatementKind::CreateSchema { .. }
            | StatementKind::CreateTrigger(_)
    )
}

/// Errors that abort the batch rather than only the statement.
fn aborts_batch(e: &SqlError) -> bool {
    aborts_scope(e)
        || matches!(e.number, 245 | 8114 | 241 | 242 | 257 | 529 | 1205 | 148 | 3609)
        || e.severity >= 20
}

/// Errors SQL Server raises when it compiles a statement (a name that does not resolve, at
/// deferred name resolution): they abort the scope, which in a procedure or dynamic SQL is
/// the module alone (see `Frame::ends_alone`) and at the top of a batch is the batch.
fn aborts_scope(e: &SqlError) -> bool {
    matches!(e.number, 208 | 207 | 209 | 137 | 2715)
}

/// Brings a data modification's `WITH XMLNAMESPACES` into scope for the xml methods of its
/// expressions (SET, WHERE, OUTPUT) and queries; a query that declares its own replaces them
/// while it runs.
fn enter_statement_namespaces(
    declarations: &[walden_syntax::ast::XmlNamespace],
) -> Option<crate::exec::scalar::xml_methods::NamespaceScope> {
    (!declarations.is_empty())
        .then(|| crate::exec::scalar::xml_methods::enter_namespaces(declarations))
}
