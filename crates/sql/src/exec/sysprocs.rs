//! The system procedures DBAs use to see who is connected and what blocks what: `sp_who`,
//! `sp_who2` and `sp_lock`, written as queries over `sys.dm_exec_sessions`,
//! `sys.dm_exec_requests` and `sys.dm_tran_locks`, with SQL Server's result columns.

use walden_engine::types::Value;

use crate::ast::{ExecProcedure, ExprKind};
use crate::exec::scalar;
use crate::exec::session::{Frame, Run, Step};
use crate::exec::SqlError;

/// `sp_who`'s and `sp_who2`'s sessions joined with their running requests.
const SESSIONS: &str = "FROM sys.dm_exec_sessions s \
     LEFT JOIN sys.dm_exec_requests r ON r.session_id = s.session_id";

/// `sp_who`: SQL Server's columns and types.
const SP_WHO: &str = "SELECT CAST(s.session_id AS SMALLINT) AS spid, CAST(0 AS SMALLINT) AS ecid, \
     CAST(CASE WHEN r.session_id IS NULL THEN 'sleeping' WHEN r.status = 'suspended' \
     THEN 'suspended' ELSE 'runnable' END AS NCHAR(30)) AS status, \
     CAST(s.login_name AS NCHAR(128)) AS loginame, CAST(s.host_name AS NCHAR(128)) AS hostname, \
     CAST(ISNULL(r.blocking_session_id, 0) AS CHAR(5)) AS blk, \
     CAST(DB_NAME(s.database_id) AS NVARCHAR(128)) AS dbname, \
     CAST(ISNULL(r.command, 'AWAITING COMMAND') AS NCHAR(16)) AS cmd, \
     ISNULL(r.request_id, 0) AS request_id ";

/// `sp_who2`: its text columns (CPU and disk I/O are not kept per session: NULL).
const SP_WHO2: &str = "SELECT CAST(s.session_id AS CHAR(5)) AS SPID, \
     CASE WHEN r.session_id IS NULL THEN 'sleeping' WHEN r.status = 'suspended' \
     THEN 'SUSPENDED' ELSE 'RUNNABLE' END AS Status, \
     s.login_name AS Login, ISNULL(NULLIF(s.host_name, ''), '  .') AS HostName, \
     CASE WHEN ISNULL(r.blocking_session_id, 0) = 0 THEN '  .' \
     ELSE CAST(r.blocking_session_id AS CHAR(5)) END AS BlkBy, \
     DB_NAME(s.database_id) AS DBName, ISNULL(r.command, 'AWAITING COMMAND') AS Command, \
     CAST(NULL AS INT) AS CPUTime, CAST(NULL AS INT) AS DiskIO, \
     LEFT(CONVERT(VARCHAR(10), s.last_request_start_time, 101), 5) + ' ' + \
     CONVERT(VARCHAR(8), s.last_request_start_time, 108) AS LastBatch, \
     s.program_name AS ProgramName, CAST(s.session_id AS CHAR(5)) AS SPID, \
     ISNULL(r.request_id, 0) AS REQUESTID ";

/// `sp_lock`: one row per lock, from `sys.dm_tran_locks`.
const SP_LOCK: &str = "SELECT CAST(request_session_id AS SMALLINT) AS spid, \
     CAST(resource_database_id AS SMALLINT) AS dbid, \
     CAST(CASE WHEN resource_type = 'DATABASE' THEN 0 \
     ELSE resource_associated_entity_id END AS INT) AS ObjId, \
     CAST(CASE WHEN resource_type = 'KEY' THEN 1 ELSE 0 END AS SMALLINT) AS IndId, \
     CAST(CASE resource_type WHEN 'OBJECT' THEN 'TAB' WHEN 'DATABASE' THEN 'DB' \
     ELSE resource_type END AS NCHAR(4)) AS Type, \
     CAST(resource_description AS NCHAR(32)) AS Resource, \
     CAST(request_mode AS NVARCHAR(8)) AS Mode, CAST(request_status AS NVARCHAR(5)) AS Status \
     FROM sys.dm_tran_locks";

/// A string literal for `text`.
fn quoted(text: &str) -> String {
    format!("N'{}'", text.replace('\'', "''"))
}

impl Run<'_> {
    /// Runs `sp_who`, `sp_who2` or `sp_lock` if `name` (lower case) is one; `None` otherwise.
    pub(crate) fn system_procedure(&mut self, name: &str, p: &ExecProcedure) -> Option<Step<()>> {
        let query = match name {
            "sp_who" | "sp_who2" => {
                let select = if name == "sp_who" { SP_WHO } else { SP_WHO2 };
                match self.sp_who_filter(p) {
                    Ok(filter) => format!("{select}{SESSIONS}{filter} ORDER BY s.session_id"),
                    Err(e) => return Some(Err(e.into())),
                }
            }
            "sp_lock" => match self.first_argument(p) {
                Ok(None) => format!("{SP_LOCK} ORDER BY spid"),
                Ok(Some(v)) => match integer(&v) {
                    Some(spid) => {
                        format!("{SP_LOCK} WHERE request_session_id = {spid} ORDER BY spid")
                    }
                    None => return Some(Err(bad_argument("sp_lock", &v).into())),
                },
                Err(e) => return Some(Err(e.into())),
            },
            _ => return None,
        };
        Some(self.run_system_query(&query))
    }

    /// `sp_who`'s argument: a session id, `'active'` (running sessions only), or a login.
    fn sp_who_filter(&mut self, p: &ExecProcedure) -> Result<String, SqlError> {
        Ok(match self.first_argument(p)? {
            None => String::new(),
            Some(v) => match integer(&v) {
                Some(spid) => format!(" WHERE s.session_id = {spid}"),
                None => {
                    let text = scalar::to_text(&v);
                    if text.eq_ignore_ascii_case("active") {
                        " WHERE r.session_id IS NOT NULL".to_string()
                    } else {
                        format!(" WHERE s.login_name = {}", quoted(&text))
                    }
                }
            },
        })
    }

    /// The first argument's value; `None` when there is none or it is NULL or DEFAULT.
    fn first_argument(&mut self, p: &ExecProcedure) -> Result<Option<Value>, SqlError> {
        let Some(arg) = p.arguments.first() else { return Ok(None) };
        if matches!(arg.value.kind, ExprKind::Default) {
            return Ok(None);
        }
        let v = self.value(&arg.value)?;
        Ok(if v.is_null() { None } else { Some(v) })
    }

    fn run_system_query(&mut self, query: &str) -> Step<()> {
        let batch = self.s.parsed(query)?;
        self.s.frames.push(Frame::default());
        let r = self.block(&batch.statements);
        self.pop_frame();
        r.map(|_| ())
    }
}

/// A whole number given as a number or as digits in a string.
fn integer(v: &Value) -> Option<i64> {
    match scalar::convert(v.clone(), walden_engine::types::SqlType::BigInt, None) {
        Ok(Value::BigInt(n)) => Some(n),
        _ => None,
    }
}

/// The error for an argument a procedure cannot use.
fn bad_argument(procedure: &str, v: &Value) -> SqlError {
    SqlError::new(
        8114,
        format!("Error converting data type {} to int in {procedure}.", v.kind_name()),
    )
}
