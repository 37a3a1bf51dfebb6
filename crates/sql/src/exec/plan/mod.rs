//! Planning: how a statement's tables are read and joined, and what shows or keeps the plan.
//!
//! * `join`: the FROM clause's plan (join order and algorithms) and its execution;
//! * `access`: one table's access path (seek or scan, on which index);
//! * `statistics_objects`: the statistics the planner estimates from, and their upkeep;
//! * `plan_cache`: the plans of SELECT blocks kept with the session;
//! * `table_hints`: the `WITH (...)` hints that change how a table is read and locked;
//! * `showplan` and `showplan_xml`: `SET SHOWPLAN_TEXT | ALL | XML`, the estimated plan.

pub(super) mod access;
pub(crate) mod join;
pub(crate) mod plan_cache;
pub(super) mod showplan;
pub(super) mod showplan_xml;
pub(crate) mod statistics_objects;
pub(super) mod table_hints;
