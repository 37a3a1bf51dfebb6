//! Subqueries in expressions: each uncorrelated one runs once per statement.
//!
//! A subquery that reads no column of an enclosing query has the same rows for every row
//! the statement evaluates it for, so `WHERE x NOT IN (SELECT ...)` over a large table need
//! not run the subquery per row. Whether it is correlated is found by running it once
//! without the enclosing rows in scope: if that succeeds, no name in it resolved outwards,
//! and its rows are kept for the rest of the statement (see [`Run::subquery_rows`]); if it
//! fails (error 207 or 4104, or any other), it is run per row as before, with the rows in
//! scope.
//!
//! # Invariants
//!
//! * The cache is keyed by the address of the subquery's node in the syntax tree, which does
//!   not move or get freed while the statement that holds it runs. It is emptied when a
//!   simple statement starts and when it ends (`Run::statement`), so an entry never outlives
//!   the tree it points into: a function's or dynamic batch's statements empty it too.
//! * An entry remembers how many variable assignments the batch had made when it was
//!   computed, and is not used after another one (`SELECT @v = ... (SELECT ... @v)` reads
//!   the new value on every row, as it must); nor after the session's cache of parsed
//!   batches was emptied, which may free a view's tree while the statement runs.
//!
//! `IN (subquery)` looks its value up in a hash of the subquery's values (by [`group_key`],
//! which equal values of one type family share), checked by the comparison itself.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use walden_engine::types::Value;

use crate::ast::Query;
use crate::exec::eval::{compare_collated, in_values_collated, resolve_collation, Env, Label};
use crate::exec::execute::query::Rows;
use crate::exec::plan::join::{integer_key, GroupedSubquery};
use crate::exec::scalar;
use crate::exec::scalar::collation::{coarse_key, Collation};
use crate::exec::session::Run;
use crate::exec::SqlError;

/// What is known of one subquery in the running statement.
#[derive(Debug)]
pub(crate) enum Cached {
    /// It reads the enclosing rows: run it per row. `grouping_tried` once a scalar one was
    /// checked for `join::GroupedSubquery` (at its second run) and could not be.
    Correlated { grouping_tried: bool },
    /// A correlated scalar aggregate computed for every correlation value at once
    /// (`join::GroupedSubquery`), valid while the [`Stamp`] is the one it was computed under.
    Grouped { grouped: Arc<GroupedSubquery>, stamp: Stamp },
    /// Its rows, valid while the [`Stamp`] is the one they were computed under.
    Rows { rows: Arc<Rows>, members: Option<Arc<Members>>, stamp: Stamp },
}

/// What a cached subquery's rows depend on besides the data: the variable assignments made
/// (`Run::assignments`) and the times the session's cache of parsed batches was emptied
/// (after which a syntax tree's address may be another tree's).
type Stamp = (u64, u64);

/// The first column's values of a subquery's rows, for `IN`.
#[derive(Debug)]
pub(crate) struct Members {
    values: Vec<Value>,
    /// Positions in `values` by [`coarse_key`]; empty when `ints` holds them.
    by_key: HashMap<String, Vec<usize>>,
    /// The values, when every non-NULL one is an integer (a key column's, the common
    /// case): looked up without building text keys.
    ints: Option<HashSet<i64>>,
    /// The one type family of every non-NULL value, if they share one.
    family: Option<u8>,
    has_null: bool,
}

/// A value's type family for hashing (see `join::family`).
fn value_family(v: &Value) -> u8 {
    crate::exec::plan::join::family(scalar::type_of(v))
}

impl Members {
    fn new(rows: &Rows) -> Members {
        let values: Vec<Value> = rows.rows.iter().filter_map(|r| r.first().cloned()).collect();
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
        let mut family = None;
        let mut mixed = false;
        let mut has_null = false;
        let ints: Option<HashSet<i64>> =
            values.iter().filter(|v| !v.is_null()).map(integer_key).collect();
        if let Some(ints) = ints {
            has_null = values.iter().any(Value::is_null);
            let family = (!ints.is_empty()).then_some(1);
            return Members { values, by_key: HashMap::new(), ints: Some(ints), family, has_null };
        }
        for (i, v) in values.iter().enumerate() {
            if v.is_null() {
                has_null = true;
                continue;
            }
            let f = value_family(v);
            mixed |= f == 0 || family.is_some_and(|g| g != f);
            family = Some(f);
            by_key.entry(coarse_key(std::slice::from_ref(v))).or_default().push(i);
        }
        Members { values, by_key, ints: None, family: family.filter(|_| !mixed), has_null }
    }

    /// `v IN (values)`, three-valued, text compared under `collation`.
    fn contains(&self, v: &Value, collation: Option<&Collation>) -> Result<Option<bool>, SqlError> {
        if let (Some(ints), Some(k)) = (&self.ints, integer_key(v)) {
            return Ok(if ints.contains(&k) {
                Some(true)
            } else if self.has_null {
                None
            } else {
                Some(false)
            });
        }
        if v.is_null() || self.ints.is_some() || self.family.is_none_or(|f| f != value_family(v)) {
            return in_values_collated(v, self.values.iter(), collation);
        }
        let candidates = self.by_key.get(&coarse_key(std::slice::from_ref(v)));
        for &i in candidates.into_iter().flatten() {
            if compare_collated(v, &self.values[i], collation)? == Some(std::cmp::Ordering::Equal) {
                return Ok(Some(true));
            }
        }
        Ok(if self.has_null { None } else { Some(false) })
    }
}

impl Run<'_> {
    /// The rows of subquery `q` for the row in `env`: computed once per statement if it is
    /// uncorrelated.
    pub(crate) fn subquery_rows(
        &mut self,
        q: &Query,
        env: &Env<'_>,
    ) -> Result<Arc<Rows>, SqlError> {
        Ok(self.cached_subquery(q, env, false)?.0)
    }

    /// The value of scalar subquery `q` for the row in `env` (error 512 if it has more than
    /// one row): a correlated aggregate is computed for every correlation value at once
    /// when it runs a second time and can be (`join::GroupedSubquery`).
    pub(crate) fn scalar_subquery(&mut self, q: &Query, env: &Env<'_>) -> Result<Value, SqlError> {
        let key = q as *const Query as usize;
        let stamp = (self.assignments, self.s.batch_cache_clears);
        let grouped = match self.subqueries.get(&key) {
            Some(Cached::Grouped { grouped, stamp: s }) if *s == stamp => Some(Arc::clone(grouped)),
            Some(Cached::Grouped { .. }) => {
                self.subqueries.insert(key, Cached::Correlated { grouping_tried: false });
                None
            }
            Some(Cached::Correlated { grouping_tried: false }) => {
                let grouped = self.group_correlated(q).map(Arc::new);
                let entry = match &grouped {
                    Some(g) => Cached::Grouped { grouped: Arc::clone(g), stamp },
                    None => Cached::Correlated { grouping_tried: true },
                };
                self.subqueries.insert(key, entry);
                grouped
            }
            _ => None,
        };
        if let Some(value) = grouped.map(|g| g.value(self, env)).transpose()?.flatten() {
            return Ok(value);
        }
        let rows = self.subquery_rows(q, env)?;
        if rows.rows.len() > 1 {
            return Err(SqlError::new(
                512,
                "Subquery returned more than 1 value. This is not permitted when the subquery follows =, !=, <, <= , >, >= or when the subquery is used as an expression.",
            ));
        }
        Ok(rows.rows.first().and_then(|r| r.first()).cloned().unwrap_or(Value::Null))
    }

    /// `v IN (q)` for the row in `env`, where `v`'s expression has the collation `label`
    /// (which meets the subquery's column's by SQL Server's precedence).
    pub(crate) fn in_subquery(
        &mut self,
        v: &Value,
        label: Label,
        q: &Query,
        env: &Env<'_>,
    ) -> Result<Option<bool>, SqlError> {
        let (rows, members) = self.cached_subquery(q, env, true)?;
        let column = rows.cols.first().and_then(|c| c.collation);
        let collation = if matches!(v, Value::Str(_) | Value::NStr(_)) {
            resolve_collation(label, column.map_or(Label::Default, Label::Implicit), "equal to")?
        } else {
            None
        };
        match members {
            Some(members) => members.contains(v, collation),
            None => in_values_collated(v, rows.rows.iter().filter_map(|r| r.first()), collation),
        }
    }

    /// The number of rows of subquery `q` if it reads no enclosing row, found as
    /// `cached_subquery` finds it (by running it once, its rows then kept for the rest of
    /// the statement); None if it is correlated or fails (it is then run per row, which
    /// reports the failure where SQL Server would).
    pub(crate) fn uncorrelated_rows(&mut self, q: &Query) -> Option<usize> {
        let key = q as *const Query as usize;
        let stamp = (self.assignments, self.s.batch_cache_clears);
        match self.subqueries.get(&key) {
            Some(Cached::Correlated { .. } | Cached::Grouped { .. }) => return None,
            Some(Cached::Rows { rows, stamp: s, .. }) if *s == stamp => {
                return Some(rows.rows.len())
            }
            _ => {}
        }
        match self.query(q, None) {
            Ok(rows) => {
                let n = rows.rows.len();
                let rows = Arc::new(rows);
                self.subqueries.insert(key, Cached::Rows { rows, members: None, stamp });
                Some(n)
            }
            Err(_) => {
                self.subqueries.insert(key, Cached::Correlated { grouping_tried: false });
                None
            }
        }
    }

    /// The number of rows of uncorrelated subquery `q`, if they were computed in this
    /// statement.
    pub(crate) fn cached_row_count(&self, q: &Query) -> Option<usize> {
        let stamp = (self.assignments, self.s.batch_cache_clears);
        match self.subqueries.get(&(q as *const Query as usize)) {
            Some(Cached::Rows { rows, stamp: s, .. }) if *s == stamp => Some(rows.rows.len()),
            _ => None,
        }
    }

    fn cached_subquery(
        &mut self,
        q: &Query,
        env: &Env<'_>,
        members: bool,
    ) -> Result<(Arc<Rows>, Option<Arc<Members>>), SqlError> {
        let key = q as *const Query as usize;
        let stamp = (self.assignments, self.s.batch_cache_clears);
        match self.subqueries.get_mut(&key) {
            Some(Cached::Correlated { .. } | Cached::Grouped { .. }) => {
                return Ok((Arc::new(self.query(q, Some(env))?), None));
            }
            Some(Cached::Rows { rows, members: m, stamp: s }) if *s == stamp => {
                if members && m.is_none() {
                    *m = Some(Arc::new(Members::new(rows)));
                }
                return Ok((Arc::clone(rows), m.clone()));
            }
            _ => {}
        }
        match self.query(q, None) {
            Ok(rows) => {
                let rows = Arc::new(rows);
                let m = members.then(|| Arc::new(Members::new(&rows)));
                self.subqueries.insert(
                    key,
                    Cached::Rows { rows: Arc::clone(&rows), members: m.clone(), stamp },
                );
                Ok((rows, m))
            }
            Err(_) => {
                self.subqueries.insert(key, Cached::Correlated { grouping_tried: false });
                Ok((Arc::new(self.query(q, Some(env))?), None))
            }
        }
    }
}
