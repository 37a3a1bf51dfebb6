//! An index nested-loop join's pairs, made as each seek reads its rows.

use walden_engine::types::Value;

use super::{clear_locators, JoinOutput};
use crate::exec::access::RowSink;
use crate::exec::filter::Filter;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Joins each row one seek finds to the left row it was sought for, as the seek reads it:
/// the pairs that pass `checks` go to the step's output at once, so a seek's rows are
/// never collected and each found row's values move into its pair instead of being copied.
/// The seek stops when the output holds all it wants.
pub(super) struct SoughtPairs<'a, 'f, 'c> {
    pub(super) left: &'a [Value],
    /// The found row's locators, NULL before the row is paired (as `join_step` clears them).
    pub(super) right_locators: &'a [usize],
    pub(super) checks: &'a mut Filter<'c>,
    pub(super) out: &'a mut JoinOutput<'f>,
}

impl RowSink for SoughtPairs<'_, '_, '_> {
    fn push(&mut self, run: &mut Run<'_>, mut found: Vec<Value>) -> Result<bool, SqlError> {
        clear_locators(&mut found, self.right_locators);
        let mut row = Vec::with_capacity(self.left.len() + found.len());
        row.extend_from_slice(self.left);
        row.append(&mut found);
        if run.filter_holds(self.checks, &row)? {
            self.out.push(run, row)?;
        }
        Ok(!self.out.full())
    }
}
