//! What applications keep in the server for a session: application locks (`sp_getapplock`,
//! `sp_releaseapplock`, `APPLOCK_MODE`, `APPLOCK_TEST`) and the session context
//! (`sp_set_session_context`, `SESSION_CONTEXT`).
//!
//! An application lock is an ordinary lock of the engine's lock manager on an APPLICATION
//! resource of the session's database, named by a hash of the resource name compared as
//! bytes (case-sensitive, as SQL Server's). With `@LockOwner = 'Transaction'` the session's
//! transaction holds it, so it waits, times out and takes part in deadlock detection like a
//! row lock and goes at COMMIT or ROLLBACK; with `'Session'` a lock owner of the session's
//! own holds it until `sp_releaseapplock` or the end of the session. Unlike SQL Server's,
//! Walden's locks are not counted: a lock taken twice goes with one release.

use std::time::Duration;

use walden_engine::lock::{LockError, LockInfo, LockMode, LockOwner, LockStatus, Resource};
use walden_engine::types::{SqlType, Value};

use crate::ast::ExecProcedure;
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Who holds an application lock (`@LockOwner`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holder {
    Transaction,
    Session,
}

fn holder(v: Option<&Value>) -> Option<Holder> {
    match v.map(scalar::to_text) {
        None => Some(Holder::Transaction),
        Some(t) if t.eq_ignore_ascii_case("Transaction") => Some(Holder::Transaction),
        Some(t) if t.eq_ignore_ascii_case("Session") => Some(Holder::Session),
        Some(_) => None,
    }
}

/// `@LockMode`'s names and the lock modes they are.
const MODES: [(&str, LockMode); 6] = [
    ("Shared", LockMode::S),
    ("Update", LockMode::U),
    ("IntentShared", LockMode::IS),
    ("IntentExclusive", LockMode::IX),
    ("Exclusive", LockMode::X),
    ("SharedIntentExclusive", LockMode::SIX),
];

fn mode_named(v: Option<&Value>) -> Option<LockMode> {
    let name = scalar::to_text(v?);
    // SharedIntentExclusive is what APPLOCK_MODE may answer, not a mode one may ask for.
    MODES[..5].iter().find(|(n, _)| n.eq_ignore_ascii_case(&name)).map(|&(_, m)| m)
}

fn mode_name(mode: LockMode) -> &'static str {
    MODES.iter().find(|(_, m)| *m == mode).map_or("NoLock", |(n, _)| n)
}

/// The error for a bad parameter of `procedure`, which then returns -999.
fn invalid(procedure: &str, what: &str, value: Option<&Value>) -> SqlError {
    let shown = value.map_or_else(|| "NULL".to_string(), scalar::to_text);
    SqlError::new(
        50000,
        format!("The parameter {what} of {procedure} has an invalid value: '{shown}'."),
    )
}

impl Run<'_> {
    /// The APPLICATION resource of `name` in the session's database.
    fn application_resource(&self, name: &str) -> Resource {
        // Only the first 255 characters name the lock, as in SQL Server.
        let name: String = name.chars().take(255).collect();
        Resource::application(self.s.db.id(), &name)
    }

    /// `sp_getapplock @Resource, @LockMode [, @LockOwner] [, @LockTimeout] [, @DbPrincipal]`:
    /// 0 granted at once, 1 granted after a wait, -1 timed out, -2 cancelled, -999 a bad
    /// parameter (with its error). A deadlock victim fails with error 1205, as any lock
    /// request of its transaction would.
    pub(crate) fn sp_getapplock(&mut self, p: &ExecProcedure) -> Result<i32, SqlError> {
        let args = self.procedure_arguments(
            "sp_getapplock",
            p,
            &["@Resource", "@LockMode", "@LockOwner", "@LockTimeout", "@DbPrincipal"],
        )?;
        let Some(resource) = args[0].as_ref().map(scalar::to_text) else {
            self.report(invalid("sp_getapplock", "@Resource", None));
            return Ok(-999);
        };
        let Some(mode) = mode_named(args[1].as_ref()) else {
            self.report(invalid("sp_getapplock", "@LockMode", args[1].as_ref()));
            return Ok(-999);
        };
        let Some(holder) = holder(args[2].as_ref()) else {
            self.report(invalid("sp_getapplock", "@LockOwner", args[2].as_ref()));
            return Ok(-999);
        };
        let timeout = match &args[3] {
            None => self.s.opts.lock_timeout,
            Some(v) => match scalar::convert(v.clone(), SqlType::BigInt, None)? {
                Value::BigInt(ms) if ms < 0 => None,
                Value::BigInt(ms) => Some(Duration::from_millis(ms.unsigned_abs())),
                _ => None,
            },
        };
        if holder == Holder::Transaction && self.s.trancount == 0 {
            self.report(SqlError::new(
                50000,
                "You attempted to acquire a transactional application lock without an active \
                 transaction.",
            ));
            return Ok(-999);
        }
        let res = self.application_resource(&resource);
        // First without waiting, to tell "granted at once" (0) from "after a wait" (1).
        let at_once = self.take_app_lock(holder, &res, mode, Some(Duration::ZERO));
        let outcome = match at_once {
            Err(LockError::Timeout { .. }) if timeout != Some(Duration::ZERO) => {
                self.take_app_lock(holder, &res, mode, timeout).map(|_| 1)
            }
            other => other.map(|_| 0),
        };
        match outcome {
            Ok(status) => Ok(status),
            Err(LockError::Timeout { .. }) => Ok(-1),
            Err(LockError::Cancelled { .. }) => Ok(-2),
            Err(e) => Err(self.s.engine_error(e.into())),
        }
    }

    fn take_app_lock(
        &mut self,
        holder: Holder,
        res: &Resource,
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<bool, LockError> {
        match holder {
            Holder::Transaction => self.tx().lock_within(res, mode, timeout),
            Holder::Session => {
                let spid = self.s.spid;
                let instance = std::sync::Arc::clone(&self.s.instance);
                let owner =
                    self.s.app_lock_owner.get_or_insert_with(|| instance.session_lock_owner(spid));
                instance.locks().lock(owner, res, mode, timeout)
            }
        }
    }

    /// `sp_releaseapplock @Resource [, @LockOwner] [, @DbPrincipal]`: 0, or -999 with error
    /// 1223 when the lock is not held.
    pub(crate) fn sp_releaseapplock(&mut self, p: &ExecProcedure) -> Result<i32, SqlError> {
        let args = self.procedure_arguments(
            "sp_releaseapplock",
            p,
            &["@Resource", "@LockOwner", "@DbPrincipal"],
        )?;
        let Some(resource) = args[0].as_ref().map(scalar::to_text) else {
            self.report(invalid("sp_releaseapplock", "@Resource", None));
            return Ok(-999);
        };
        let Some(holder) = holder(args[1].as_ref()) else {
            self.report(invalid("sp_releaseapplock", "@LockOwner", args[1].as_ref()));
            return Ok(-999);
        };
        let res = self.application_resource(&resource);
        let released = match holder {
            Holder::Transaction if self.s.trancount > 0 && self.tx().holds_lock(&res) => {
                self.tx().unlock(&res);
                true
            }
            Holder::Transaction => false,
            Holder::Session => {
                let instance = std::sync::Arc::clone(&self.s.instance);
                match self.s.app_lock_owner.as_mut().filter(|o| o.holds(&res)) {
                    Some(owner) => {
                        instance.locks().unlock(owner, &res);
                        true
                    }
                    None => false,
                }
            }
        };
        if released {
            return Ok(0);
        }
        let principal = args[2].as_ref().map_or_else(|| "public".to_string(), scalar::to_text);
        self.report(SqlError::new(
            1223,
            format!(
                "Cannot release the application lock (Database Principal: '{principal}', \
                 Resource: '{resource}') because it is not currently held."
            ),
        ));
        Ok(-999)
    }

    /// The lock owner `holder` names for this session, if it has one now.
    fn app_lock_owner_id(&mut self, holder: Holder) -> Option<u64> {
        match holder {
            Holder::Transaction if self.s.trancount > 0 => Some(self.tx().id()),
            Holder::Transaction => None,
            Holder::Session => self.s.app_lock_owner.as_ref().map(LockOwner::id),
        }
    }

    /// The locks granted or asked for on `res`, as the lock manager lists them.
    fn locks_on(&self, res: &Resource) -> Vec<LockInfo> {
        let mut locks = self.s.instance.locks().snapshot();
        locks.retain(|l| l.resource == *res);
        locks
    }

    /// `APPLOCK_MODE(principal, resource, owner)`: the mode the session's transaction or
    /// session holds on the application resource, `NoLock` if none.
    pub(crate) fn applock_mode(&mut self, args: &[Value]) -> Result<Value, SqlError> {
        let (Some(resource), Some(holder)) = (args.get(1), holder(args.get(2))) else {
            return Err(invalid("APPLOCK_MODE", "@LockOwner", args.get(2)));
        };
        let res = self.application_resource(&scalar::to_text(resource));
        let owner = self.app_lock_owner_id(holder);
        let held = self
            .locks_on(&res)
            .into_iter()
            .find(|l| Some(l.owner) == owner && l.status == LockStatus::Granted)
            .map(|l| l.mode);
        Ok(Value::NStr(held.map_or("NoLock", mode_name).to_string()))
    }

    /// `APPLOCK_TEST(principal, resource, mode, owner)`: 1 if the lock could be granted now
    /// (no other owner holds an incompatible mode), else 0.
    pub(crate) fn applock_test(&mut self, args: &[Value]) -> Result<Value, SqlError> {
        let Some(mode) = mode_named(args.get(2)) else {
            return Err(invalid("APPLOCK_TEST", "@LockMode", args.get(2)));
        };
        let (Some(resource), Some(holder)) = (args.get(1), holder(args.get(3))) else {
            return Err(invalid("APPLOCK_TEST", "@LockOwner", args.get(3)));
        };
        let res = self.application_resource(&scalar::to_text(resource));
        let owner = self.app_lock_owner_id(holder);
        let free = self
            .locks_on(&res)
            .into_iter()
            .all(|l| Some(l.owner) == owner || mode.compatible(l.mode));
        Ok(Value::Int(i32::from(free)))
    }

    /// `sp_set_session_context @key, @value [, @read_only]`: sets a value the session's later
    /// batches read with `SESSION_CONTEXT(key)`; a read-only key cannot be set again (15664).
    pub(crate) fn sp_set_session_context(&mut self, p: &ExecProcedure) -> Result<(), SqlError> {
        let args = self.procedure_arguments(
            "sp_set_session_context",
            p,
            &["@key", "@value", "@read_only"],
        )?;
        let Some(key) = args[0].as_ref().map(scalar::to_text) else {
            return Err(invalid("sp_set_session_context", "@key", None));
        };
        if key.chars().count() > 128 {
            return Err(invalid("sp_set_session_context", "@key", args[0].as_ref()));
        }
        let read_only = match &args[2] {
            Some(v) => matches!(scalar::convert(v.clone(), SqlType::Bit, None)?, Value::Bit(true)),
            None => false,
        };
        if self.s.session_context.get(&key).is_some_and(|(_, locked)| *locked) {
            return Err(SqlError::new(
                15664,
                format!(
                    "Cannot set key '{key}' in the session context. The key has been set as \
                     read_only for this session."
                ),
            ));
        }
        let value = args[1].clone().unwrap_or(Value::Null);
        self.s.session_context.insert(key, (value, read_only));
        Ok(())
    }

    /// `SESSION_CONTEXT(key)`: the value set for `key`, NULL if none. Keys are compared as
    /// SQL Server compares them, exactly.
    pub(crate) fn session_context(&self, key: &Value) -> Value {
        if key.is_null() {
            return Value::Null;
        }
        let key = scalar::to_text(key);
        self.s.session_context.get(&key).map_or(Value::Null, |(v, _)| v.clone())
    }
}
