//! Binding: what a statement's text means before any row is read. There is no separate
//! binder pass yet (names are resolved as rows are read, by `eval`), so this stage is the
//! parts that work out types, columns and prepared forms from the text and the catalog:
//!
//! * `static_type`: an expression's type and a query's columns from their text alone;
//! * `constants`: the expressions a statement's read may evaluate once (variables,
//!   parameters and deterministic expressions of them);
//! * `demand`: which columns of its tables a SELECT block reads;
//! * `grouping`: a grouped block's columns are grouped or aggregated (8120, 8121);
//! * `prepared`: expressions with columns resolved to positions, for loops over many rows;
//! * `describe` and `first_result_set`: `sp_describe_undeclared_parameters` and
//!   `sp_describe_first_result_set`, which describe a batch without running it.

pub(super) mod constants;
pub(super) mod demand;
pub(super) mod describe;
pub(super) mod first_result_set;
pub(super) mod grouping;
pub(super) mod prepared;
pub(super) mod static_type;
