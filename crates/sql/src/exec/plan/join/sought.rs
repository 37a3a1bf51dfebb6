//! An index nested-loop join's pairs, made as each seek reads its rows.

use walden_engine::types::Value;

use super::{JoinOutput, Shape};
use crate::exec::execute::filter::Filter;
use crate::exec::plan::access::RowSink;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Joins each row one seek finds to the left row it was sought for, as the seek reads it:
/// the pairs that pass `checks` go to the step's output at once, so a seek's rows are
/// never collected and each found row's values move into its pair instead of being copied.
/// The last row found is held back (`SoughtPairs::into_held`) for the caller to pair with
/// the left row itself rather than a copy, as `Run::emit_each` does: a seek of a unique
/// key, which finds one row, copies no value of the left side.
/// The seek stops when the output holds all it wants.
pub(super) struct SoughtPairs<'a, 'f, 'c> {
    left: &'a [Value],
    /// The last row found, not yet paired.
    held: Option<Vec<Value>>,
    /// What each found row is cut to before it is paired (`Flat::shape`).
    shape: &'a Shape,
    checks: &'a mut Filter<'c>,
    out: &'a mut JoinOutput<'f>,
}

impl<'a, 'f, 'c> SoughtPairs<'a, 'f, 'c> {
    pub(super) fn new(
        left: &'a [Value],
        shape: &'a Shape,
        checks: &'a mut Filter<'c>,
        out: &'a mut JoinOutput<'f>,
    ) -> Self {
        SoughtPairs { left, held: None, shape, checks, out }
    }

    /// The row held back once the seek has ended: None if it found none, or if the output
    /// was full before it could be paired.
    pub(super) fn into_held(self) -> Option<Vec<Value>> {
        self.held.filter(|_| !self.out.full())
    }
}

/// Appends `found` to `row` and gives the pair to `out` if it passes `checks`.
pub(super) fn pair_into(
    run: &mut Run<'_>,
    checks: &mut Filter<'_>,
    out: &mut JoinOutput<'_>,
    mut row: Vec<Value>,
    mut found: Vec<Value>,
) -> Result<(), SqlError> {
    row.reserve_exact(found.len());
    row.append(&mut found);
    if run.filter_holds(checks, &row)? {
        out.push(run, row)?;
    }
    Ok(())
}

impl RowSink for SoughtPairs<'_, '_, '_> {
    fn push(&mut self, run: &mut Run<'_>, mut found: Vec<Value>) -> Result<bool, SqlError> {
        self.shape.apply(&mut found);
        if let Some(earlier) = self.held.replace(found) {
            let mut row = Vec::with_capacity(self.left.len() + earlier.len());
            row.extend_from_slice(self.left);
            pair_into(run, self.checks, self.out, row, earlier)?;
        }
        Ok(!self.out.full())
    }
}
