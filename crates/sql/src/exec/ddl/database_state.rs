//! `ALTER DATABASE ... SET OFFLINE | ONLINE | READ_ONLY | READ_WRITE`: the states the engine
//! keeps (`Instance::set_offline`, `Instance::set_read_only`, persisted in master) and what
//! they need from the other sessions.
//!
//! OFFLINE and READ_ONLY need the database to themselves, as in SQL Server: a session whose
//! database it is (other than the one running the ALTER) is ended with `WITH ROLLBACK
//! IMMEDIATE` or `ROLLBACK AFTER n` (its transaction rolled back, as KILL does); without one of
//! them the ALTER fails with 5070 (SQL Server would wait for those sessions without
//! `NO_WAIT`; Walden does not wait). The session running `SET OFFLINE` on its own database is
//! moved to master, whose context a closed database cannot be.

use walden_engine::EngineError;

use crate::exec::session::Run;

impl Run<'_> {
    /// `SET OFFLINE`. Offline already: nothing to do.
    pub(crate) fn take_database_offline(
        &mut self,
        name: &str,
        termination: Option<&str>,
    ) -> Result<(), EngineError> {
        let db = match self.s.instance.database(name) {
            Ok(db) => db,
            Err(EngineError::DatabaseSetOffline(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.end_other_users(db.id(), db.name(), termination)?;
        if self.s.db.id() == db.id() {
            self.s.db = std::sync::Arc::clone(self.s.instance.master());
            self.s.activity.database_changed(self.s.db.id());
        }
        drop(db);
        self.s.instance.set_offline(name)
    }

    /// `SET READ_ONLY` (`on`) or `READ_WRITE`.
    pub(crate) fn set_database_read_only(
        &mut self,
        name: &str,
        on: bool,
        termination: Option<&str>,
    ) -> Result<(), EngineError> {
        let db = self.s.instance.database(name)?;
        if db.is_read_only() != on {
            self.end_other_users(db.id(), db.name(), termination)?;
        }
        self.s.instance.set_read_only(name, on)
    }

    /// Ends the other sessions whose database is `id` if `termination` says to roll them
    /// back, else fails with 5070 when there are any.
    fn end_other_users(
        &mut self,
        id: u32,
        name: &str,
        termination: Option<&str>,
    ) -> Result<(), EngineError> {
        let others: Vec<_> = self
            .s
            .counters
            .sessions
            .all()
            .into_iter()
            .filter(|a| a.spid() != self.s.spid && a.database_id() == id && !a.killed())
            .collect();
        if others.is_empty() {
            return Ok(());
        }
        if !termination.is_some_and(|t| t.starts_with("ROLLBACK")) {
            return Err(EngineError::FileRefused {
                number: 5070,
                message: format!(
                    "Database state cannot be changed while other users are using the database '{name}'"
                ),
            });
        }
        for other in others {
            other.kill();
        }
        Ok(())
    }
}
