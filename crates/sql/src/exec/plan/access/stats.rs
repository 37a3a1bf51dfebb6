//! A session's statistics of a table for the planner: from its statistics objects where
//! they are built, else from a sample of its indexes, kept for a short while per session
//! and looked at again once a fifth of the table's rows have changed.

use super::*;

/// Entries sampled from each index for its statistics.
const STATS_SAMPLE: usize = 512;

/// How long a table's statistics are used before they are looked at again: long enough that
/// a join in a loop samples once, short enough to follow a table's growth. Changes to a
/// fifth of the table's rows end it sooner ([`changes_tolerated`]; a statistics object may
/// have become stale).
const STATS_MAX_AGE: Duration = Duration::from_secs(2);

/// A session's cached statistics of one table: when gathered, its index 1's root page then,
/// the table's modification count then, and what (see [`Run::table_stats`]).
pub(crate) type CachedStats = (Instant, u32, u64, Arc<TableStats>);

/// How many rows of a table of about `rows` rows may change before statistics sampled from
/// it are looked at again (within [`STATS_MAX_AGE`]): a fifth, as SQL Server's automatic
/// update waits for 20% of a table's rows to change. Sampling again at every change would
/// cost a busy table's every query a sample (TPC-C's tables change at every transaction);
/// an empty table's sample is looked at again at its first change, so a table just filled
/// is planned with its rows.
fn changes_tolerated(rows: f64) -> u64 {
    (rows / 5.0) as u64
}

/// At most this many tables' statistics are kept per session.
const STATS_CACHED_TABLES: usize = 1024;

impl Run<'_> {
    /// A table's statistics: from its statistics objects where they are built (stale ones
    /// rebuilt first, `Run::current_statistics`), from a sample of each other index
    /// (`Transaction::sample_index`); looked at again at most every [`STATS_MAX_AGE`] per
    /// session, or when the table was modified. None if a sample failed (the planner then
    /// guesses).
    pub(crate) fn table_stats(&mut self, t: &TableRef) -> Option<Arc<TableStats>> {
        let key = (t.db.id(), t.def.id);
        let root = t.def.primary().ok()?.root;
        let modified = t.db.modifications(t.def.id);
        if let Some((at, r, m, stats)) = self.s.table_stats.get(&key) {
            let changed = modified.saturating_sub(*m);
            if *r == root
                && changed <= changes_tolerated(stats.rows)
                && at.elapsed() < STATS_MAX_AGE
            {
                return Some(Arc::clone(stats));
            }
        }
        let objects = self.current_statistics(t);
        let built = |id: u32| {
            objects
                .iter()
                .find(|s| s.index && s.id == id)
                .and_then(|s| s.object.as_ref()?.histogram.clone())
        };
        let mut stats = TableStats::default();
        for index in &t.def.indexes {
            let per_prefix = match built(u32::from(index.id)) {
                Some(h) => {
                    let rows = h.rows as f64;
                    if index.id == 1 {
                        stats.rows = rows;
                    }
                    let last = index.columns.len();
                    (1..=h.density.len())
                        .map(|k| {
                            if index.unique && k == last {
                                1.0
                            } else {
                                (rows * h.density[k - 1]).max(1.0)
                            }
                        })
                        .collect()
                }
                None => {
                    let sample =
                        self.tx().sample_index(&t.db, &t.def, index.id, STATS_SAMPLE).ok()?;
                    if index.id == 1 {
                        stats.rows = sample.rows;
                    }
                    sample.rows_per_prefix
                }
            };
            stats.indexes.push((index.id, per_prefix));
        }
        for s in &objects {
            if let (Some(&c), Some(h)) =
                (s.columns.first(), s.object.as_ref().and_then(|o| o.histogram.clone()))
            {
                if stats.histogram(c).is_none() {
                    stats.histograms.push((c, h));
                }
            }
        }
        let sample = self.tx().sample_columns(&t.db, &t.def, STATS_SAMPLE).unwrap_or_default();
        stats.distinct = sample.distinct;
        // As values once, so that each estimate matches them without making any.
        stats.text = sample
            .text
            .into_iter()
            .map(|c| c.map(|values| values.into_iter().map(Value::Str).collect()))
            .collect();
        let stats = Arc::new(stats);
        if self.s.table_stats.len() >= STATS_CACHED_TABLES {
            self.s.table_stats.clear();
        }
        self.s.table_stats.insert(key, (Instant::now(), root, modified, Arc::clone(&stats)));
        Some(stats)
    }
}
