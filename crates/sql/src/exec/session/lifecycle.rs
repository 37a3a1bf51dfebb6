//! A session's life: made (with its id and its registration in the server's list of sessions),
//! reset by a connection pool (`RESETCONNECTION`, with or without its transaction), closed
//! (its transaction rolled back, its temporary objects dropped), and what the server and
//! the TDS layer ask of it meanwhile (its id, database, `@@TRANCOUNT`, `KILL`, the client).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use walden_engine::lock::Interrupt;
use walden_engine::{DeferredCommits, Instance, Isolation};
use walden_log::policy::CommitOption;

use crate::ast::IsolationLevel;
use crate::exec::execute::cursor::Cursors;
use crate::exec::options::Semantics;
use crate::exec::sysviews::{ClientInfo, ServerCounters, SessionActivity};

use super::cancel::CancelledLockWait;
use super::{Options, Session};

/// Session ids handed out so far; SQL Server's user sessions start at 51.
static NEXT_SPID: AtomicU16 = AtomicU16::new(51);

impl Session {
    /// A session on `master` with its own counters (tests; the server shares one set).
    pub fn new(instance: Arc<Instance>) -> Session {
        Session::with_counters(instance, Arc::new(ServerCounters::default()))
    }

    /// A session on `master` that reports to the server's counters.
    pub fn with_counters(instance: Arc<Instance>, counters: Arc<ServerCounters>) -> Session {
        let spid = NEXT_SPID.fetch_add(1, Ordering::Relaxed);
        let activity = counters.sessions.register(spid);
        Session::fresh(instance, counters, spid, activity)
    }

    /// A new session's state, with id `spid` registered as `activity`.
    fn fresh(
        instance: Arc<Instance>,
        counters: Arc<ServerCounters>,
        spid: u16,
        activity: Arc<SessionActivity>,
    ) -> Session {
        let db = Arc::clone(instance.master());
        // KILL ends a lock wait of any session; a client's cancel joins in `set_cancel`.
        let lock_interrupt: Arc<dyn Interrupt> =
            Arc::new(CancelledLockWait(None, Arc::clone(&activity)));
        Session {
            instance,
            counters,
            activity,
            request_text: (Arc::from(""), [0; 16]),
            pending_stats: Default::default(),
            registered: true,
            spid,
            db,
            opts: Options {
                nocount: false,
                noexec: false,
                fmtonly: false,
                implicit_transactions: false,
                textsize: i64::from(i32::MAX),
                rowcount: 0,
                xact_abort: false,
                lock_timeout: None,
                isolation: Isolation::ReadCommitted,
                isolation_level: IsolationLevel::ReadCommitted,
                statistics_io: false,
                statistics_time: false,
                showplan: None,
                semantics: Semantics::default(),
            },
            tx: None,
            trancount: 0,
            last_outcome: None,
            last_commit: None,
            temp_tables: HashMap::new(),
            global_procedures: Vec::new(),
            temp_seq: 0,
            identity: None,
            identity_insert: None,
            view_depth: 0,
            function_depth: 0,
            checking_module: false,
            running_triggers: Vec::new(),
            trigger_changes: Vec::new(),
            rowcount: 0,
            last_error: 0,
            frames: Vec::new(),
            cursors: Cursors::default(),
            in_insert_exec: false,
            batches: HashMap::default(),
            batch_bytes: 0,
            batch_cache_clears: 0,
            plans: Default::default(),
            table_stats: HashMap::new(),
            statement_io: Vec::new(),
            io_noted: Default::default(),
            explain_ctes: Vec::new(),
            showplan_xml: Vec::new(),
            stored_exprs: HashMap::new(),
            cancel: None,
            app_lock_owner: None,
            session_context: HashMap::new(),
            pending_bulk: None,
            lock_interrupt,
            deferred: DeferredCommits::new(),
            defer_commits: false,
            terminated: false,
        }
    }

    /// RESETCONNECTION (a connection pool's `sp_reset_connection`): the open transaction
    /// rolled back, temporary tables dropped, SET options and the database back to a new
    /// session's, as SQL Server does, keeping the session id and what the login said.
    pub fn reset(&mut self) {
        self.close();
        self.replace_with_fresh();
    }

    /// Puts a new session's state in place of this one's, keeping the session id, and gives
    /// back the old state.
    fn replace_with_fresh(&mut self) -> Session {
        let mut fresh = Session::fresh(
            Arc::clone(&self.instance),
            Arc::clone(&self.counters),
            self.spid,
            Arc::clone(&self.activity),
        );
        // The commits deferred before the reset, and after it, are hardened through the one
        // handle whoever sends the session's output took (`deferred_commits`) before the
        // reset ran: a reset at the start of a request must not hide the request's commits
        // from it.
        fresh.deferred = Arc::clone(&self.deferred);
        let mut old = std::mem::replace(self, fresh);
        // The session id lives on in `self`: dropping the old state must not unregister it.
        old.registered = false;
        old
    }

    /// RESETCONNECTIONSKIPTRAN: [`reset`](Self::reset), except that an open user transaction
    /// stays open, with what is bound to it: the temporary tables (which its locks may cover)
    /// and the session's application locks.
    pub fn reset_keeping_transaction(&mut self) {
        if self.trancount == 0 {
            self.reset();
            return;
        }
        let tx = self.tx.take();
        let temp_tables = std::mem::take(&mut self.temp_tables);
        let global_procedures = std::mem::take(&mut self.global_procedures);
        let app_lock_owner = self.app_lock_owner.take();
        let old = self.replace_with_fresh();
        self.trancount = old.trancount;
        self.temp_seq = old.temp_seq;
        // Nothing is left in `old` for its close to roll back, release or drop, but the close
        // tells the activity that the transaction ended: the kept one has not, so it is
        // recorded again after.
        let user_transaction = self.activity.user_transaction();
        drop(old);
        if let Some(t) = user_transaction {
            self.activity.transaction_began(t);
        }
        self.tx = tx;
        self.temp_tables = temp_tables;
        self.global_procedures = global_procedures;
        self.app_lock_owner = app_lock_owner;
    }

    /// Ends the session: rolls back its transaction and drops its temporary tables.
    pub fn close(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.rollback();
        }
        if let Some(mut owner) = self.app_lock_owner.take() {
            self.instance.locks().release_all(&mut owner);
        }
        self.trancount = 0;
        self.activity.transaction_ended();
        let mut names: Vec<String> = self.temp_tables.drain().map(|(_, v)| v).collect();
        names.append(&mut self.global_procedures);
        if names.is_empty() {
            return;
        }
        let tempdb = Arc::clone(self.instance.tempdb());
        let mut tx = self.instance.begin(Isolation::ReadCommitted, None);
        for name in names {
            if let Some(o) = tempdb.find_object("dbo", &name) {
                let _ = tx.drop_object(&tempdb, o.id());
            }
        }
        let _ = tx.commit(CommitOption::Unspecified);
    }

    /// The current database's name.
    pub fn current_database(&self) -> &str {
        self.db.name()
    }

    /// `@@SPID`.
    pub fn id(&self) -> u16 {
        self.spid
    }

    /// `@@TRANCOUNT`.
    pub fn transaction_count(&self) -> u32 {
        self.trancount
    }

    /// How the last user transaction ended: `Some(true)` committed, `Some(false)` rolled back
    /// (by ROLLBACK, a deadlock, XACT_ABORT or a failed commit). The TDS server reports it to
    /// the client as a commit or rollback ENVCHANGE.
    pub fn last_transaction_committed(&self) -> Option<bool> {
        self.last_outcome
    }

    /// Whether a severity 20+ error ended the session: the connection must be closed, and
    /// the session runs nothing more.
    pub fn terminated(&self) -> bool {
        self.terminated
    }

    /// What the login said of the client, for `sys.dm_exec_sessions`.
    pub fn set_client(&self, client: ClientInfo) {
        self.activity.set_client(client);
    }

    /// Who the client is (`HOST_NAME()`, `APP_NAME()`): what its login said.
    pub(crate) fn client(&self) -> ClientInfo {
        self.activity.client()
    }

    /// What `KILL` of this session should do besides stopping its batch: the server closes the
    /// connection.
    pub fn set_on_kill(&self, action: Box<dyn Fn() + Send>) {
        self.activity.set_on_kill(action);
    }

    /// Whether `KILL` ended the session: whoever owns it closes it.
    pub fn killed(&self) -> bool {
        self.activity.killed()
    }

    /// A fresh name in tempdb for the session's temporary table `#name`.
    pub(crate) fn temp_internal_name(&mut self, name: &str) -> String {
        self.temp_seq += 1;
        let suffix = format!("{:04X}{:08X}", self.spid, self.temp_seq);
        let pad = 116usize.saturating_sub(name.len() + suffix.len()).min(12);
        format!("{name}{}{suffix}", "_".repeat(pad.max(2)))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close();
        if self.registered {
            self.counters.sessions.unregister(self.spid);
        }
    }
}
