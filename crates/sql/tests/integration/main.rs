//! The SQL layer's integration tests, one module per area, in one test binary: each binary
//! links walden-sql and walden-engine statically, so one binary instead of one per file saves
//! most of what building the tests costs. `support` is what the modules share.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod support;

mod bulk;
mod bulk_insert;
mod checkpoints;
mod collations;
mod database_state;
mod day_ranges;
mod dba_scripts;
mod dbcc;
mod ddl_triggers;
mod deferred_commits;
mod differential;
mod dynamic_cursors;
mod expression_types;
mod extended_properties;
mod files;
mod golden;
mod hash_joins;
mod index_only;
mod inline_views;
mod insert_select;
mod join_pipeline;
mod key_ranges;
mod large_modules;
mod lookup_loop;
mod loop_assignments;
mod merge_joins;
mod narrow_joins;
mod plan_cache;
mod query_stats;
mod read_committed;
mod reduced_outer_joins;
mod sessions;
mod spill;
mod statement_locks;
mod statistics;
mod statistics_objects;
mod sysprocs;
mod table_hints;
mod temp_procedures;
mod user_messages;
mod variable_slots;
mod window_spill;
