//! The system procedures and the server functions they go with, each a query over the
//! system views or a call into the engine, with SQL Server's parameters, result columns and
//! errors. `dispatch::system_procedure` is the one table of their names: for each, what runs
//! it and the return status it leaves. `session::execute`'s `call_procedure` looks an `EXEC`'s
//! name up there once, before it looks for a stored procedure.
//!
//! * `dispatch`: the table of names;
//! * `sysprocs`: `sp_who`, `sp_help`, `sp_helptext`, `sp_spaceused`, `sp_configure`, ...;
//! * `catalog_procs` and `catalog_privileges`: the ODBC catalog procedures (`sp_tables`,
//!   `sp_columns`, ..., `sp_server_info`);
//! * `extended_procs`: `xp_regread`, `xp_fixeddrives`, `sp_MSgetalertinfo`;
//! * `dbcc`, `dbcc_info` and `statistics_show`: `DBCC` and its result sets;
//! * `user_messages`: `sp_addmessage`, `sp_dropmessage` and the messages they keep;
//! * `properties`: extended properties (`sp_addextendedproperty`, ...);
//! * `app_state`: application locks (`sp_getapplock`) and the session context
//!   (`sp_set_session_context`);
//! * `my_permissions`: `fn_my_permissions`.

pub(super) mod app_state;
pub(super) mod catalog_privileges;
pub(super) mod catalog_procs;
pub(crate) mod dbcc;
pub(super) mod dbcc_info;
pub(super) mod dispatch;
pub(super) mod extended_procs;
pub(super) mod my_permissions;
pub(super) mod properties;
pub(super) mod statistics_show;
pub(super) mod sysprocs;
pub(super) mod user_messages;
