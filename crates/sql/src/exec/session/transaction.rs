//! Transactions: `BEGIN`, `COMMIT`, `ROLLBACK` and `SAVE TRANSACTION`, the autocommit
//! transaction of a statement run outside a user transaction, undoing a failed statement back
//! to its mark, `BEGIN ATOMIC` blocks, and the receipts of commits (`sys.sp_last_commit`,
//! `sys.sp_wait_for_hardened`).
//!
//! Every path that begins, commits or rolls back the session's engine transaction is here, so
//! that `@@TRANCOUNT`, the session's activity and the last outcome stay in step.
//!
//! `@@TRANCOUNT` counts `BEGIN TRAN`s as SQL Server does; only the outermost `COMMIT`
//! commits, and `ROLLBACK` without a savepoint name rolls everything back. Outside a user
//! transaction each statement that touches data runs in an autocommit transaction of its
//! own, committed (or rolled back) when the statement ends. Inside one, a failing statement
//! is undone back to the mark taken when it started (statement-level atomicity).

use std::sync::Arc;
use std::time::Duration;

use walden_engine::lock::{BeforeLockWait, Interrupt};
use walden_engine::types::{SqlType, Value};
use walden_engine::{
    CommitOutcome, Database, DeferredCommits, EngineError, Instance, Isolation, Transaction,
};
use walden_log::policy::CommitOption;

use crate::ast::{
    AtomicBlock, AtomicOption, ExecProcedure, IsolationLevel, TransactionName, TransactionStatement,
};
use crate::exec::plan::plan_cache::PlanCache;
use crate::exec::scalar;
use crate::exec::sysviews::{now_micros, UserTransaction};
use crate::exec::{ColumnInfo, SqlError};

use super::{Flow, Halt, Options, Run, Session, Step};

/// A new transaction of session `spid` with its isolation level and lock timeout, whose lock
/// waits `KILL` and the client's cancel end.
/// With `deferred`, the session's deferred commits are hardened before the transaction
/// waits for a lock.
/// Begins the session's transaction in `slot` (which is empty) and returns it. It is made
/// where it will stay, not returned by value: a `Transaction` is several hundred bytes, and
/// every autocommit statement begins one.
#[inline]
fn begin_transaction<'a>(
    slot: &'a mut Option<Transaction>,
    instance: &Instance,
    spid: u16,
    opts: &Options,
    interrupt: &Arc<dyn Interrupt>,
    deferred: Option<&Arc<DeferredCommits>>,
) -> &'a mut Transaction {
    let tx = slot.insert(instance.begin_in_session(spid, opts.isolation, opts.lock_timeout));
    tx.set_interrupt(Some(Arc::clone(interrupt)));
    if let Some(deferred) = deferred {
        tx.set_before_lock_wait(Some(Arc::clone(deferred) as Arc<dyn BeforeLockWait>));
    }
    tx
}

impl Session {
    /// Has the autocommit transactions of the session's next statements commit without
    /// waiting for their log flush (`on`), or wait again. While it is on, and until the
    /// commits are hardened, whoever sends the session's output to its client must harden
    /// [`Session::deferred_commits`] before anything leaves, and must not report them if that
    /// fails: `walden_engine::deferred_commit` says why this keeps every promise of full
    /// durability.
    pub fn set_defer_commits(&mut self, on: bool) {
        self.defer_commits = on;
    }

    /// The session's deferred commits (see [`Session::set_defer_commits`]).
    pub fn deferred_commits(&self) -> Arc<DeferredCommits> {
        Arc::clone(&self.deferred)
    }

    /// Keeps a commit's receipt if it logged anything (a read-only transaction has none).
    fn note_commit(&mut self, outcome: CommitOutcome) {
        if outcome.lsn != 0 {
            self.last_commit = Some(outcome);
        }
    }
}

impl Run<'_> {
    pub(super) fn transaction(&mut self, t: &TransactionStatement) -> Result<(), SqlError> {
        match t {
            TransactionStatement::Begin { name } => {
                if self.s.trancount == 0 {
                    let name = match name {
                        Some(name) => self.transaction_name(name)?,
                        None => "user_transaction".into(),
                    };
                    self.begin_user_transaction(name);
                } else {
                    self.s.trancount += 1;
                }
                Ok(())
            }
            TransactionStatement::Commit { delayed_durability, .. } => {
                if self.s.trancount == 0 {
                    return Err(SqlError::new(
                        3902,
                        "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.",
                    ));
                }
                self.s.trancount -= 1;
                if self.s.trancount > 0 {
                    return Ok(());
                }
                self.commit_user_transaction(commit_option(*delayed_durability))
            }
            TransactionStatement::Rollback { name } => {
                if self.s.trancount == 0 {
                    return Err(SqlError::new(
                        3903,
                        "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.",
                    ));
                }
                if let Some(name) = name {
                    let name = self.transaction_name(name)?;
                    if let Some(tx) = self.s.tx.as_mut() {
                        if tx.has_savepoint(&name) {
                            return tx.rollback_to(&name).map_err(|e| self.s.engine_error(e));
                        }
                    }
                }
                self.rollback_all();
                Ok(())
            }
            TransactionStatement::Save { name } => {
                if self.s.trancount == 0 {
                    return Err(SqlError::new(
                        628,
                        "Cannot issue SAVE TRANSACTION when there is no active transaction.",
                    ));
                }
                let name = self.transaction_name(name)?;
                if let Some(tx) = self.s.tx.as_mut() {
                    tx.save(&name);
                }
                Ok(())
            }
        }
    }

    /// Opens a user transaction (`@@TRANCOUNT` 0 to 1): `BEGIN TRAN`, or a statement under
    /// `SET IMPLICIT_TRANSACTIONS ON`.
    pub(super) fn begin_user_transaction(&mut self, name: String) {
        // An autocommit transaction still open (a procedure call's arguments may have read a
        // table) ends first, as it would at the end of a statement.
        self.finish_autocommit(true);
        let s = &mut *self.s;
        let deferred = s.defer_commits.then_some(&s.deferred);
        let tx =
            begin_transaction(&mut s.tx, &s.instance, s.spid, &s.opts, &s.lock_interrupt, deferred);
        s.activity.transaction_began(UserTransaction {
            id: tx.id(),
            name,
            begin_micros: now_micros(),
        });
        s.trancount = 1;
    }

    /// Commits the user transaction once `@@TRANCOUNT` has come down to 0, with the COMMIT's
    /// (or the atomic block's) `DELAYED_DURABILITY` option.
    fn commit_user_transaction(&mut self, option: CommitOption) -> Result<(), SqlError> {
        self.s.activity.transaction_ended();
        let Some(tx) = self.s.tx.take() else { return Ok(()) };
        // A failed commit has rolled the transaction back.
        self.s.last_outcome = Some(false);
        let outcome = tx.commit(option).map_err(|e| self.s.engine_error(e))?;
        self.s.note_commit(outcome);
        self.s.last_outcome = Some(true);
        self.s.db.count_transaction();
        Ok(())
    }

    pub(crate) fn rollback_all(&mut self) {
        if let Some(tx) = self.s.tx.take() {
            let _ = tx.rollback();
        }
        if self.s.trancount > 0 {
            self.s.last_outcome = Some(false);
            self.s.activity.transaction_ended();
        }
        self.s.trancount = 0;
    }

    fn transaction_name(&mut self, name: &TransactionName) -> Result<String, SqlError> {
        match name {
            TransactionName::Name(i) => Ok(i.value.clone()),
            TransactionName::Variable(v) => Ok(scalar::to_text(&self.variable(v)?.value)),
        }
    }

    /// The transaction the running statement works in: the user's, or a new autocommit one.
    pub(crate) fn tx(&mut self) -> &mut Transaction {
        self.tx_and_plans().0
    }

    /// [`Run::tx`] and the session's plan cache, borrowed together: a key lookup reads
    /// with the row decoder the cache keeps.
    pub(crate) fn tx_and_plans(&mut self) -> (&mut Transaction, &mut PlanCache) {
        let (tx, plans, _) = self.tx_plans_and_db(false);
        (tx, plans)
    }

    /// [`Run::tx_and_plans`] and the session's database (tempdb if `tempdb`), borrowed
    /// together: a kept plan's key lookup reads its table without a reference of its own
    /// to the database.
    pub(crate) fn tx_plans_and_db(
        &mut self,
        tempdb: bool,
    ) -> (&mut Transaction, &mut PlanCache, &Arc<Database>) {
        let s = &mut *self.s;
        let Session {
            tx,
            instance,
            opts,
            lock_interrupt,
            spid,
            deferred,
            defer_commits,
            plans,
            db,
            ..
        } = s;
        let tx = match tx {
            Some(tx) => tx,
            None => {
                let deferred = defer_commits.then_some(&*deferred);
                begin_transaction(tx, instance, *spid, opts, lock_interrupt, deferred)
            }
        };
        let db = if tempdb { instance.tempdb() } else { &*db };
        (tx, plans, db)
    }

    /// Commits (or rolls back) the running statement's autocommit transaction, if any.
    pub(crate) fn finish_autocommit(&mut self, ok: bool) {
        if self.s.trancount > 0 || self.s.function_depth > 0 {
            return;
        }
        if ok {
            // Committed where it lies unless deferred (the deferred list takes it over):
            // moving the transaction out is a copy of several hundred bytes per statement.
            let committed = if self.s.defer_commits {
                let Some(tx) = self.s.tx.take() else { return };
                tx.commit_deferring(CommitOption::Unspecified, &self.s.deferred)
            } else {
                let Some(tx) = self.s.tx.as_mut() else { return };
                let committed = tx.commit_in_place(CommitOption::Unspecified);
                self.s.tx = None;
                committed
            };
            match committed {
                // Read-only transactions included, as SQL Server counts `Transactions/sec`.
                Ok(outcome) => {
                    self.s.note_commit(outcome);
                    self.s.db.count_transaction();
                }
                Err(e) => {
                    let e = self.s.engine_error(e);
                    self.report(e);
                }
            }
        } else if let Some(tx) = self.s.tx.take() {
            let _ = tx.rollback();
        }
    }

    /// Undoes a failed or cancelled statement's own changes, back to the `mark` taken when it
    /// started. If that fails, the whole transaction is rolled back and the undo's error is
    /// returned for reporting.
    pub(crate) fn undo_statement(&mut self, mark: Option<Vec<usize>>) -> Result<(), SqlError> {
        if let (Some(mark), Some(tx)) = (mark, self.s.tx.as_mut()) {
            if let Err(undo) = tx.rollback_to_mark(&mark) {
                let undo = self.s.engine_error(undo);
                self.rollback_all();
                return Err(undo);
            }
        }
        Ok(())
    }

    /// `BEGIN ATOMIC`: the block's statements succeed or fail as one. Without a transaction
    /// the block begins one, with its isolation level, and commits it at its end with its
    /// `DELAYED_DURABILITY` as the commit's option (the database's setting still decides, as
    /// for `COMMIT WITH`); an error the block does not catch rolls it back. Inside a
    /// transaction, the block undoes only its own work when it fails and leaves the commit to
    /// the caller. The settings SQL Server fixes for atomic blocks hold within it: `NOCOUNT`
    /// on, `XACT_ABORT` off; its language and date options are checked as `SET` checks them.
    pub(super) fn atomic_block(&mut self, block: &AtomicBlock) -> Step<Flow> {
        for option in &block.options {
            match option {
                AtomicOption::Language(language) => {
                    self.s.opts.semantics.set_language(language)?;
                }
                AtomicOption::DateFirst(value) => self.set_valued("DATEFIRST", value)?,
                AtomicOption::DateFormat(value) => self.set_valued("DATEFORMAT", value)?,
                AtomicOption::IsolationLevel(_) | AtomicOption::DelayedDurability(_) => {}
            }
        }
        let begins = self.s.trancount == 0;
        let mark = if begins {
            let session_isolation = self.s.opts.isolation;
            if matches!(
                block.isolation(),
                Some(IsolationLevel::Serializable | IsolationLevel::RepeatableRead)
            ) {
                self.s.opts.isolation = Isolation::Serializable;
            }
            self.begin_user_transaction("atomic_block".into());
            self.s.opts.isolation = session_isolation;
            None
        } else {
            self.s.tx.as_ref().map(Transaction::undo_mark)
        };
        let (nocount, xact_abort) = (self.s.opts.nocount, self.s.opts.xact_abort);
        self.s.opts.nocount = true;
        self.s.opts.xact_abort = false;
        // As in a TRY block, an error stops the block instead of being reported and passed.
        self.try_depth += 1;
        let result = self.block(&block.body);
        self.try_depth -= 1;
        self.s.opts.nocount = nocount;
        self.s.opts.xact_abort = xact_abort;
        match result {
            Ok(flow) => {
                if begins && self.s.trancount > 0 {
                    self.s.trancount = 0;
                    self.commit_user_transaction(commit_option(block.delayed_durability()))?;
                }
                Ok(flow)
            }
            Err(halt) => {
                if begins {
                    if self.s.trancount > 0 {
                        self.rollback_all();
                    }
                } else if let Err(undo) = self.undo_statement(mark) {
                    self.report(undo);
                }
                Err(halt)
            }
        }
    }

    /// `sys.sp_last_commit` (Walden's): the receipt of the session's last commit that logged
    /// anything, as one row (none before the first): its database, its commit record's LSN,
    /// whether it was delayed, and whether the log is hardened past it now. An application
    /// that keeps the LSN can tell after a crash whether the commit survived: it did if the
    /// database's last recovered commit (the start-up log, `sys.dm_db_log_stats`) is at or
    /// after it.
    pub(crate) fn sp_last_commit(&mut self) -> Result<(), SqlError> {
        use walden_engine::types::Len;
        let columns = [
            ColumnInfo::new("database_id", SqlType::Int),
            ColumnInfo::new("database_name", SqlType::NVarChar(Len::N(128))),
            ColumnInfo::new("commit_lsn", SqlType::BigInt),
            ColumnInfo::new("is_delayed", SqlType::Bit),
            ColumnInfo::new("is_hardened", SqlType::Bit),
        ];
        self.out.result_set(&columns);
        let mut rows = 0;
        if let Some(commit) = self.s.last_commit {
            let db = self.s.instance.database_by_id(i64::from(commit.database));
            let hardened = db
                .as_ref()
                .and_then(|db| db.log())
                .map_or(commit.hardened, |log| log.hardened_lsn() >= commit.lsn);
            self.out.row(&[
                Value::Int(commit.database as i32),
                db.map_or(Value::Null, |db| Value::NStr(db.name().to_string())),
                Value::BigInt(commit.lsn as i64),
                Value::Bit(commit.delayed),
                Value::Bit(hardened),
            ]);
            rows = 1;
        }
        self.out.result_end(rows);
        Ok(())
    }

    /// `sys.sp_wait_for_hardened [[@lsn =] lsn]` (Walden's): returns once the database's log
    /// is hardened at or past `lsn`, without forcing a flush (`sys.sp_flush_log` forces one):
    /// the flushes other commits cause, a full log block or the time bound (`max_delay_ms`)
    /// harden it. Without an LSN it waits for the session's last commit, in its database;
    /// with one, in the database named (`db.sys.sp_wait_for_hardened`) or the current one.
    /// A client's cancel or KILL ends the wait; a failed log is its error.
    pub(crate) fn sp_wait_for_hardened(
        &mut self,
        p: &ExecProcedure,
        database: Option<&crate::ast::Ident>,
    ) -> Step<()> {
        let lsn = match p.arguments.first() {
            Some(arg) => match self.argument_value(arg)? {
                Some(Value::Null) | None => None,
                Some(v) => match scalar::convert(v, SqlType::BigInt, None)? {
                    Value::BigInt(n) if n >= 0 => Some(n as u64),
                    _ => {
                        return Err(SqlError::new(
                            50000,
                            "sp_wait_for_hardened: @lsn must be a log position of 0 or more.",
                        )
                        .into())
                    }
                },
            },
            None => None,
        };
        let (db, lsn) = match lsn {
            Some(lsn) => (self.database_of(database)?, lsn),
            None => match self.s.last_commit {
                Some(commit) => match self.s.instance.database_by_id(i64::from(commit.database)) {
                    Some(db) => (db, commit.lsn),
                    None => return Ok(()),
                },
                None => return Ok(()),
            },
        };
        let Some(log) = db.log().cloned() else { return Ok(()) };
        while log.hardened_lsn() < lsn.min(log.end_lsn()) {
            if let Some(e) = log.failure() {
                return Err(self.s.engine_error(EngineError::from(e)).into());
            }
            if self.cancelled() {
                return Err(Halt::Cancelled);
            }
            // Polled: a wait is rare and bounded by the time bound, and polling lets a cancel
            // end it without a wake-up path from the log to every session.
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }
}

/// The commit option of `COMMIT WITH (DELAYED_DURABILITY = ...)` or of an atomic block.
fn commit_option(delayed_durability: Option<bool>) -> CommitOption {
    match delayed_durability {
        None => CommitOption::Unspecified,
        Some(true) => CommitOption::On,
        Some(false) => CommitOption::Off,
    }
}
