//! Modules: the objects that are their CREATE text in the catalog, parsed again where they
//! are used, as SQL Server's `sys.sql_modules` keeps them: how each is created and altered,
//! and how it runs.
//!
//! * `view`: a view named in a FROM clause runs as a derived table;
//! * `function`: user-defined scalar and table-valued functions;
//! * `trigger`: DML triggers (AFTER and INSTEAD OF);
//! * `ddl_trigger` and `ddl_event_types`: DDL triggers and SQL Server's event hierarchy;
//! * `temp_procedure`: `#p` and `##p`, temporary procedures in tempdb.
//!
//! Stored procedures themselves are run by `session::execute`.

pub(crate) mod ddl_event_types;
pub(crate) mod ddl_trigger;
pub(super) mod function;
pub(super) mod temp_procedure;
pub(crate) mod trigger;
pub(crate) mod view;
