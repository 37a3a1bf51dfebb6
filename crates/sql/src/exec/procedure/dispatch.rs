//! The table of system procedures: every name an `EXEC` can run without a stored procedure
//! of that name (`sp_*`, `xp_*`, Walden's own `sys.sp_*`), what runs each, and the return
//! status it leaves. `session::execute`'s `call_procedure` looks a name up here once; a name
//! not here is a stored procedure of a database, or error 2812.
//!
//! A name appears once: the match's arms are literals, so the compiler refuses a name given
//! twice (an unreachable pattern), and nothing else decides between two runners.

use crate::ast::{ExecProcedure, Ident};
use crate::exec::procedure::properties::PropertyChange;
use crate::exec::session::{Run, Step};
use crate::exec::sysviews::msdb;
use crate::exec::SqlError;

/// An `EXEC` of a system procedure, as its runner sees it.
pub(crate) struct Call<'a> {
    /// The procedure's name in lower case (`sp_who`), as the table matched it.
    pub(crate) name: &'a str,
    /// The database the name was qualified with (`db.sys.sp_flush_log`), if any.
    pub(crate) database: Option<&'a Ident>,
    pub(crate) procedure: &'a ExecProcedure,
}

/// What runs a system procedure, and the return status the EXEC gets.
pub(crate) enum Runs {
    /// `sp_executesql`: its statement runs as the body of a procedure of its own
    /// (`db.sys.sp_executesql` in database `db`), which sets the return status as a stored
    /// procedure's does.
    ExecuteSql,
    /// A procedure that returns its own status (`sp_getapplock`'s grant or refusal,
    /// `xp_regread`'s failed read).
    Status(fn(&mut Run<'_>, &Call<'_>) -> Step<i32>),
    /// Status 0. The procedure manages its own transaction state: nothing commits after it
    /// (an application lock, a log flush).
    Session(fn(&mut Run<'_>, &Call<'_>) -> Step<()>),
    /// Status 0, and what the procedure changed commits after it under autocommit (an
    /// `EXEC` is compound, so nothing else would commit `sp_rename`'s change before a later
    /// failing statement of the batch rolled it back).
    Committed(fn(&mut Run<'_>, &Call<'_>) -> Step<()>),
    /// As `Committed`, where the procedure is a query over the system views: the runner
    /// builds it from the arguments and it runs as the procedure's result.
    Query(fn(&mut Run<'_>, &Call<'_>) -> Result<String, SqlError>),
}

/// The system procedure `name` (lower case), if it is one.
pub(crate) fn system_procedure(name: &str) -> Option<Runs> {
    use Runs::{Committed, ExecuteSql, Query, Session, Status};
    Some(match name {
        "sp_executesql" => ExecuteSql,

        // Procedures with a status of their own (`extended_procs`, `app_state`).
        "xp_fixeddrives" => Status(|r, c| r.xp_fixeddrives(c.procedure)),
        "xp_regread" => Status(|r, c| r.xp_regread(c.procedure)),
        "sp_msgetalertinfo" => Status(|r, c| r.sp_msgetalertinfo(c.procedure)),
        "sp_getapplock" => Status(|r, c| Ok(r.sp_getapplock(c.procedure)?)),
        "sp_releaseapplock" => Status(|r, c| Ok(r.sp_releaseapplock(c.procedure)?)),

        // The session's own state and its log (`app_state`, `session::transaction`).
        "sp_set_session_context" => Session(|r, c| Ok(r.sp_set_session_context(c.procedure)?)),
        "sp_flush_log" => Session(|r, c| Ok(r.sp_flush_log(c.database)?)),
        "sp_last_commit" => Session(|r, _| Ok(r.sp_last_commit()?)),
        "sp_wait_for_hardened" => Session(|r, c| r.sp_wait_for_hardened(c.procedure, c.database)),

        // Server and database administration (`sysprocs`).
        "sp_who" => Query(|r, c| r.sp_who(c.procedure, false)),
        "sp_who2" => Query(|r, c| r.sp_who(c.procedure, true)),
        "sp_lock" => Query(|r, c| r.sp_lock(c.procedure)),
        "sp_help" => Query(|r, c| r.sp_help(c.procedure)),
        "sp_helptext" => Committed(|r, c| Ok(r.sp_helptext(c.procedure)?)),
        "sp_helpindex" => Committed(|r, c| r.sp_helpindex(c.procedure)),
        "sp_spaceused" => Committed(|r, c| Ok(r.sp_spaceused(c.procedure)?)),
        "sp_helpdb" => Query(|r, c| r.sp_helpdb(c.procedure)),
        "sp_helpfile" => Query(|r, c| r.sp_helpfile(c.procedure)),
        "sp_databases" => Query(|r, c| r.sp_databases(c.procedure)),
        "sp_configure" => Query(|r, c| r.sp_configure(c.procedure)),
        "sp_validatelogins" => Query(|r, c| r.sp_validatelogins(c.procedure)),
        "sp_msforeachdb" => Query(|r, c| r.sp_msforeachdb(c.procedure)),
        "sp_rename" => Committed(|r, c| r.sp_rename(c.procedure)),
        "sp_addtype" => Query(|r, c| r.sp_addtype(c.procedure)),
        "sp_droptype" => Query(|r, c| r.sp_droptype(c.procedure)),
        "sp_updatestats" => Committed(|r, _| Ok(r.sp_updatestats()?)),
        "sp_createstats" => Committed(|r, _| Ok(r.sp_createstats()?)),
        "sp_describe_first_result_set" => {
            Committed(|r, c| r.sp_describe_first_result_set(c.procedure))
        }
        "sp_describe_undeclared_parameters" => {
            Committed(|r, c| Ok(r.sp_describe_undeclared_parameters(c.procedure)?))
        }

        // User-defined messages (`user_messages`) and extended properties (`properties`).
        "sp_addmessage" => Committed(|r, c| Ok(r.sp_addmessage(c.procedure)?)),
        "sp_dropmessage" => Committed(|r, c| Ok(r.sp_dropmessage(c.procedure)?)),
        "sp_addextendedproperty" => {
            Committed(|r, c| Ok(r.change_extended_property(PropertyChange::Add, c.procedure)?))
        }
        "sp_updateextendedproperty" => {
            Committed(|r, c| Ok(r.change_extended_property(PropertyChange::Update, c.procedure)?))
        }
        "sp_dropextendedproperty" => {
            Committed(|r, c| Ok(r.change_extended_property(PropertyChange::Drop, c.procedure)?))
        }

        // The ODBC catalog procedures (`catalog_procs`, `catalog_privileges`).
        "sp_tables" => Query(|r, c| r.sp_tables(c.procedure)),
        "sp_columns" => Query(|r, c| r.sp_columns(c.procedure, false)),
        "sp_columns_100" => Query(|r, c| r.sp_columns(c.procedure, true)),
        "sp_sproc_columns" => Committed(|r, c| Ok(r.sp_sproc_columns(c.procedure, false)?)),
        "sp_sproc_columns_100" => Committed(|r, c| Ok(r.sp_sproc_columns(c.procedure, true)?)),
        "sp_statistics" | "sp_statistics_100" => Query(|r, c| r.sp_statistics(c.procedure)),
        "sp_stored_procedures" => Query(|r, c| r.sp_stored_procedures(c.procedure)),
        "sp_datatype_info" | "sp_datatype_info_100" => {
            Query(|r, c| r.sp_datatype_info(c.procedure))
        }
        "sp_special_columns" | "sp_special_columns_100" => {
            Query(|r, c| r.sp_special_columns(c.procedure))
        }
        "sp_pkeys" => Query(|r, c| r.sp_pkeys(c.procedure)),
        "sp_fkeys" => Query(|r, c| r.sp_fkeys(c.procedure)),
        "sp_table_privileges" => Query(|r, c| r.sp_table_privileges(c.procedure)),
        "sp_column_privileges" => Query(|r, c| r.sp_column_privileges(c.procedure)),
        "sp_server_info" => Query(|r, c| r.sp_server_info(c.procedure)),

        // SQL Server Agent's (`sysviews::msdb`): refused, Walden has no Agent.
        name if msdb::is_agent_procedure(name) => {
            Committed(|_, c| Err(msdb::agent_refusal(c.name).into()))
        }
        _ => return None,
    })
}
