//! Execution: the operators a query's rows go through once its FROM clause is planned.
//!
//! * `query`: everything after FROM (grouping, windows, select list, set operations,
//!   ORDER BY, TOP), a directory by stage;
//! * `filter`: a read's conjuncts, prepared once per read;
//! * `aggregate` and `window`: the hash aggregate and window functions;
//! * `subquery` and `recursive`: subqueries run once per statement, recursive CTEs;
//! * `grant`, `spill`, `external_sort`, `hash_spill`, `row_queue`: query memory, and what an
//!   operator does beyond its grant;
//! * `cursor`: Transact-SQL cursors, which run their query at OPEN or at each FETCH;
//! * `statistics`: `SET STATISTICS IO | TIME`, what each statement read and how long it took.

pub(super) mod aggregate;
pub(super) mod cursor;
pub(super) mod external_sort;
pub(super) mod filter;
pub(super) mod grant;
pub(super) mod hash_spill;
pub(super) mod query;
pub(super) mod recursive;
pub(super) mod row_queue;
pub(super) mod spill;
pub(super) mod statistics;
pub(super) mod subquery;
pub(super) mod window;
