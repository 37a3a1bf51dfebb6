//! An outer join's inner side past its memory grant: its rows partitioned to spill files by
//! the hash of their key, each left row after them partitioned the same way, and the
//! partitions joined one at a time, each in memory as a held inner side is
//! (`read_inner.rs`). Equal keys land in the same partition (`coarse_key`, as the inner
//! join's grace hash join partitions), so a left row meets every inner row it can match.
//!
//! A key with a NULL matches nothing: such a left row is given NULL-extended at once (where
//! the join keeps it), such an inner row is dropped, or, for a FULL JOIN, kept in a file of
//! its own and given NULL-extended last. The pairs come partition by partition, not in the
//! left rows' order, which T-SQL leaves undefined.

use std::sync::Arc;

use walden_engine::types::Value;

use super::super::{Emitted, JoinOutput};
use super::pairs::Joined;
use crate::ast::{Expr, JoinKind};
use crate::exec::eval::Col;
use crate::exec::execute::filter::Filter;
use crate::exec::execute::grant::QueryMemory;
use crate::exec::execute::hash_spill::{hashed_bytes, read_all, Partitions, STREAMED_PARTITIONS};
use crate::exec::execute::spill::{SpillReader, SpillWriter};
use crate::exec::plan::access::RowFilter;
use crate::exec::scalar::collation::coarse_key;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// The inner side being partitioned as it is read.
pub(super) struct Spilling {
    memory: Arc<QueryMemory>,
    parts: Partitions,
    /// A FULL JOIN's inner rows whose key has a NULL; None for a join that drops them.
    nulls: Option<SpillWriter>,
}

/// The inner side partitioned, and the left rows being partitioned as they come.
pub(super) struct Spilled {
    inner: Vec<SpillReader>,
    nulls: Option<SpillReader>,
    left: Partitions,
}

impl Spilling {
    pub(super) fn new(memory: &Arc<QueryMemory>, kind: JoinKind) -> Result<Spilling, SqlError> {
        let nulls =
            if kind == JoinKind::FullOuter { Some(SpillWriter::create(memory)?) } else { None };
        let parts = Partitions::new(memory, STREAMED_PARTITIONS)?;
        Ok(Spilling { memory: Arc::clone(memory), parts, nulls })
    }

    /// Writes inner row `row` (of columns `cols`) to the partition of its key, the
    /// equalities' inner sides `keys`.
    pub(super) fn write_inner(
        &mut self,
        run: &mut Run<'_>,
        keys: &[&Expr],
        cols: &[Col],
        join: &Joined<'_, '_>,
        row: &[Value],
    ) -> Result<(), SqlError> {
        let key = run.key_values(keys, cols, row, join.outer)?;
        if key.iter().any(Value::is_null) {
            if let Some(nulls) = &mut self.nulls {
                nulls.write(row)?;
            }
            return Ok(());
        }
        self.parts.write(&coarse_key(&key), row)
    }

    /// The inner side's last row is written: the left rows are partitioned next.
    pub(super) fn inner_done(self) -> Result<Spilled, SqlError> {
        Ok(Spilled {
            inner: self.parts.finish()?,
            nulls: self.nulls.map(SpillWriter::finish).transpose()?,
            left: Partitions::new(&self.memory, STREAMED_PARTITIONS)?,
        })
    }
}

impl Spilled {
    /// Writes left row `lrow` to the partition of its key, or gives it NULL-extended when
    /// its key has a NULL (and the join keeps it).
    pub(super) fn write_left(
        &mut self,
        run: &mut Run<'_>,
        join: &Joined<'_, '_>,
        lrow: Vec<Value>,
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        let key = run.key_values(join.left_keys, join.left_cols, &lrow, join.outer)?;
        if key.iter().any(Value::is_null) {
            let emitted = Emitted { full: false, matched: false, left: Some(lrow) };
            return run.keep_unmatched(out, emitted, join.keeps_left(), join.kept.len());
        }
        self.left.write(&coarse_key(&key), &lrow)
    }

    /// Joins the partitions one at a time, each partition's inner rows (of columns `cols`)
    /// held and hashed within the grant (against the workspace past it, error 701 past
    /// that), then a FULL JOIN's inner rows of NULL keys; until `out` is full.
    pub(super) fn join(
        self,
        run: &mut Run<'_>,
        join: &Joined<'_, '_>,
        cols: &[Col],
        out: &mut JoinOutput<'_>,
    ) -> Result<(), SqlError> {
        let mut grant = run.memory_grant();
        let lw = join.left_cols.len();
        for (inner, mut left) in self.inner.into_iter().zip(self.left.finish()?) {
            run.interruption_point()?;
            let rows = read_all(inner)?;
            let bytes = hashed_bytes(&rows);
            if !grant.try_reserve(bytes) {
                grant.hold(bytes)?;
            }
            let mut held = run.hold_inner(rows, cols, join)?;
            let exprs = if held.exact() { join.unkeyed } else { join.unpushed };
            let mut check =
                Filter::new(RowFilter { cols: join.run_cols, exprs, outer: join.outer });
            let mut n = 0;
            while let Some(lrow) = left.next()? {
                run.row_interruption_point(n)?;
                n += 1;
                if out.full() {
                    return Ok(());
                }
                run.pair_held(&mut held, lrow, join, &mut check, out)?;
            }
            run.finish_held(held, lw, out)?;
            grant.release(bytes);
        }
        if let Some(mut nulls) = self.nulls {
            let mut n = 0;
            while let Some(r) = nulls.next()? {
                run.row_interruption_point(n)?;
                n += 1;
                if out.full() {
                    break;
                }
                let mut row: Vec<Value> = vec![Value::Null; lw];
                row.extend(r);
                out.push(run, row)?;
            }
        }
        Ok(())
    }
}
