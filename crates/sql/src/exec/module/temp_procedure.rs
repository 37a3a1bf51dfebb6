//! Temporary procedures, which live in tempdb as SQL Server keeps them:
//!
//! * `#p` belongs to the session that creates it. It is stored under a name of its own in
//!   tempdb (`#p`, padding and a suffix of the session id and a counter, as temporary tables
//!   are, so that two sessions' `#p` do not collide), which `tempdb.sys.objects` shows; the
//!   session finds it by `#p` from any database, and it is dropped when the session ends
//!   (`Session::close`, which drops the temporary tables the same way).
//! * `##p` is global: stored as `##p`, any session finds it, and it is dropped when the
//!   session that created it ends. A call running in another session at that moment has
//!   already read the procedure's text and finishes; SQL Server waits for such calls before
//!   dropping, Walden does not need to.

use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::Database;

use crate::ast::{CreateMode, ObjectName};
use crate::exec::execute::query::display_name;
use crate::exec::session::Run;
use crate::exec::SqlError;

impl Run<'_> {
    /// The temporary procedure `name` (`#p` or `##p`) as the running session sees it: tempdb
    /// and the object, `None` inside when there is none; `None` for another name.
    pub(crate) fn temp_procedure(
        &self,
        name: &str,
    ) -> Option<(Arc<Database>, Option<Arc<Object>>)> {
        if !name.starts_with('#') {
            return None;
        }
        let tempdb = Arc::clone(self.s.instance.tempdb());
        let stored = if name.starts_with("##") {
            name.to_string()
        } else {
            self.s.temp_tables.get(&name.to_ascii_lowercase())?.clone()
        };
        let object =
            tempdb.find_object("dbo", &stored).filter(|o| matches!(**o, Object::Procedure(_)));
        if object.is_none() && !name.starts_with("##") {
            // `#name` is a temporary table, not a procedure.
            return None;
        }
        Some((tempdb, object))
    }

    /// Where `CREATE | ALTER PROCEDURE #p` puts the procedure: tempdb, and its name there (a
    /// new one for CREATE of `#p`, the existing one for ALTER).
    pub(crate) fn temp_procedure_target(
        &mut self,
        name: &str,
        mode: CreateMode,
    ) -> Result<(Arc<Database>, String), SqlError> {
        let tempdb = Arc::clone(self.s.instance.tempdb());
        if name.starts_with("##") {
            return Ok((tempdb, name.to_string()));
        }
        if name.len() > 116 {
            return Err(SqlError::new(193, format!("The object or column name starting with '{name}' is too long. The maximum length is 116 characters.")));
        }
        // An entry whose object is gone was made by a CREATE that was rolled back.
        let existing = self
            .s
            .temp_tables
            .get(&name.to_ascii_lowercase())
            .filter(|stored| tempdb.find_object("dbo", stored).is_some());
        match existing {
            Some(stored) if mode != CreateMode::Create => Ok((tempdb, stored.clone())),
            Some(_) => Err(SqlError::new(
                2714,
                format!("There is already an object named '{name}' in the database."),
            )),
            None => Ok((tempdb, self.s.temp_internal_name(name))),
        }
    }

    /// Records the temporary procedure `name` just stored as `stored`, for the session to find
    /// it and to drop it when it ends.
    pub(crate) fn temp_procedure_created(&mut self, name: &str, stored: String) {
        if name.starts_with("##") {
            if !self.s.global_procedures.iter().any(|p| p.eq_ignore_ascii_case(&stored)) {
                self.s.global_procedures.push(stored);
            }
        } else {
            self.s.temp_tables.insert(name.to_ascii_lowercase(), stored);
        }
    }

    /// `DROP PROCEDURE #p` / `##p`.
    pub(crate) fn drop_temp_procedure(
        &mut self,
        name: &ObjectName,
        if_exists: bool,
    ) -> Result<(), SqlError> {
        let user = &name.name.value;
        let Some((db, Some(o))) = self.temp_procedure(user) else {
            if if_exists {
                return Ok(());
            }
            return Err(SqlError::new(3701, format!("Cannot drop the procedure '{}', because it does not exist or you do not have permission.", display_name(name))));
        };
        self.tx().drop_object(&db, o.id()).map_err(|e| self.s.engine_error(e))?;
        if user.starts_with("##") {
            self.s.global_procedures.retain(|p| !p.eq_ignore_ascii_case(user));
        } else {
            self.s.temp_tables.remove(&user.to_ascii_lowercase());
        }
        Ok(())
    }
}
