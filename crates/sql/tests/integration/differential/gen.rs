//! The generator of schemas, data and queries. Everything it draws comes from one `Rng`, so a
//! seed replays exactly.

use super::model::*;
use super::rng::Rng;

mod expr;
mod query;
mod tables;

pub use query::cost;
pub use tables::schema;

/// What the generator may produce. Each switch exists so that a construct Walden gets wrong can be
/// left out while the bug is open, keeping the test green for everything else; a switch that is
/// off says which bug it avoids, and turning it back on is how the fix is verified.
#[derive(Debug, Clone, Copy)]
pub struct Features {
    pub right_join: bool,
    pub full_join: bool,
    pub comma_join: bool,
    pub exists_subquery: bool,
    pub in_subquery: bool,
    pub not_in_subquery: bool,
    /// Whether the left operand of `IN (subquery)` may be NULL (`NULL IN (empty subquery)`
    /// is FALSE, so `NULL NOT IN (empty)` keeps the row).
    pub nullable_in_operand: bool,
    pub scalar_subquery: bool,
    /// A join inside a subquery's FROM.
    pub subquery_join: bool,
    pub null_in_list: bool,
    pub like: bool,
    /// `(SELECT ...) AS a` in FROM.
    pub derived_table: bool,
    /// `WITH q AS (...)` for some derived tables of the outermost query.
    pub cte: bool,
    pub having: bool,
    pub distinct: bool,
    pub top: bool,
    pub count_distinct: bool,
    pub concat: bool,
    pub case_expr: bool,
}

pub const FEATURES: Features = Features {
    right_join: true,
    full_join: true,
    comma_join: true,
    exists_subquery: true,
    in_subquery: true,
    not_in_subquery: true,
    nullable_in_operand: true,
    scalar_subquery: true,
    subquery_join: true,
    null_in_list: true,
    like: true,
    derived_table: true,
    cte: true,
    having: true,
    distinct: true,
    top: true,
    count_distinct: true,
    concat: true,
    case_expr: true,
};

/// A query and a predicate to split its rows by: see `Gen::partitioned`.
#[derive(Debug, Clone)]
pub struct Partitioned {
    pub base: Select,
    pub predicate: Pred,
    /// COUNT(*), SUM, MIN and MAX, in that order, over the base query's tables.
    pub aggregates: Vec<Expr>,
}

/// A table as a query names it.
#[derive(Debug, Clone)]
struct Bound {
    alias: String,
    table: usize,
    /// Whether an outer join may null-extend this table's rows.
    null_extended: bool,
}

/// What a subquery returns.
#[derive(Debug, Clone, Copy)]
enum SubKind {
    Exists,
    In(Ty),
    Scalar(Ty),
}

pub struct Gen<'a> {
    rng: &'a mut Rng,
    schema: &'a Schema,
    features: Features,
    aliases: usize,
    /// The derived tables of the query being drawn, as `tab` numbers them after the schema's.
    derived: Vec<(Table, Select)>,
}

impl<'a> Gen<'a> {
    pub fn new(rng: &'a mut Rng, schema: &'a Schema, features: Features) -> Gen<'a> {
        Gen { rng, schema, features, aliases: 0, derived: Vec::new() }
    }

    /// A table of the schema, or past them one of the query's derived tables.
    fn tab(&self, table: usize) -> &Table {
        match table.checked_sub(self.schema.tables.len()) {
            Some(d) => &self.derived[d].0,
            None => &self.schema.tables[table],
        }
    }
}
