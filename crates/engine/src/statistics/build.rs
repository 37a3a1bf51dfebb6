//! Building a statistics object's histogram and density vector from a table's rows.
//!
//! Both need the rows in the order of the statistics' columns. Where an index's key starts
//! with those columns (always, for an index's own statistics) its entries are read in key
//! order and the histogram is built as they stream past, holding one step at a time: memory
//! does not grow with the table. Otherwise the table's rows are read (with the default
//! sampling, only some leaves of a table of more than [`MIN_SAMPLED_LEAVES`], as SQL Server
//! samples pages), each row's key for the columns is kept (a Bernoulli sample when there
//! would be more than [`MAX_KEPT`], then a reservoir), sorted, and fed to the same builder:
//! memory is bounded by [`MAX_KEPT`] keys.
//!
//! Reads take no locks and may see uncommitted rows, as `Transaction::sample_index` does:
//! statistics decide how a query reads, never what it returns.

use std::sync::Arc;

use walden_storage::btree::EntryBatch;

use crate::catalog::TableDef;
use crate::database::Database;
use crate::error::EngineError;
use crate::table::{decode_stored_row, decode_stored_row_some};
use crate::types::{encode_key_columns, key_prefix_lengths, SqlType, Value};

use super::kept::Kept;
use super::{Histogram, Sampling, Step, MAX_STEPS};

/// The most keys an unordered build keeps in memory for its sort (each a few dozen bytes
/// plus its leading value): beyond it the rows kept are a uniform sample of this size.
pub const MAX_KEPT: usize = 500_000;

/// The fewest leaves the default sampling reads of a table: a table of up to this many
/// (a megabyte) is read whole. SQL Server's floor is 1,024 pages, which it reads in large
/// sequential I/Os; a build here pays for every row it decodes and sorts, and a third of
/// TPC-C's order lines (108,000 rows, each auto-created statistics object rebuilt every
/// few seconds) cost the mix a tenth of its throughput.
pub const MIN_SAMPLED_LEAVES: f64 = 128.0;

/// Leaves a sampled read visits under one hold of a tree's shared latch, which writers of
/// the tree wait for.
const LEAVES_PER_HOLD: usize = 64;

/// What a step's closing row is read back from, to show its value.
enum Locator {
    /// The value itself (an unordered build keeps it with the key).
    Value(Value),
    /// A clustered index entry's stored row.
    Row(Vec<u8>),
    /// A nonclustered index entry's row id, looked up in index 1.
    RowId(Vec<u8>),
}

/// Streams keys in order into steps, the density vector and the key lengths.
struct Builder<'a> {
    db: &'a Database,
    table: &'a TableDef,
    column: usize,
    /// Rows per step aimed at.
    target: f64,
    rows: u64,
    /// Distinct values of each prefix of the columns, and the sum of its key lengths.
    distinct: Vec<u64>,
    length: Vec<u64>,
    previous: Vec<u8>,
    previous_lens: Vec<usize>,
    /// The current value of the leading column: its key bytes, rows and first row.
    group: Option<(Vec<u8>, u64, Locator)>,
    /// Rows and distinct values since the last step closed.
    pending_rows: f64,
    pending_distinct: f64,
    steps: Vec<Step>,
}

impl<'a> Builder<'a> {
    fn new(db: &'a Database, table: &'a TableDef, columns: &[usize], expected: f64) -> Self {
        // One step is kept for NULL, one for the smallest value.
        let target = (expected / (MAX_STEPS - 2) as f64).max(1.0);
        Builder {
            db,
            table,
            column: columns[0],
            target,
            rows: 0,
            distinct: vec![0; columns.len()],
            length: vec![0; columns.len()],
            previous: Vec::new(),
            previous_lens: Vec::new(),
            group: None,
            pending_rows: 0.0,
            pending_distinct: 0.0,
            steps: Vec::new(),
        }
    }

    /// One row's key (the statistics' columns, encoded), in order after the previous.
    fn push(
        &mut self,
        key: &[u8],
        lens: Vec<usize>,
        locator: impl FnOnce() -> Locator,
    ) -> Result<(), EngineError> {
        self.rows += 1;
        for (k, &end) in lens.iter().enumerate() {
            self.length[k] += end as u64;
            let same = self.previous_lens.get(k) == Some(&end)
                && self.previous.get(..end) == key.get(..end);
            if !same {
                self.distinct[k] += 1;
            }
        }
        let lead = &key[..lens.first().copied().unwrap_or(key.len())];
        match &mut self.group {
            Some((k, count, _)) if k.as_slice() == lead => *count += 1,
            _ => {
                self.end_group(false)?;
                self.group = Some((lead.to_vec(), 1, locator()));
            }
        }
        self.previous.clear();
        self.previous.extend_from_slice(key);
        self.previous_lens = lens;
        Ok(())
    }

    /// Ends the current group of equal leading values: it closes a step if it is NULL, the
    /// first, the last, or enough rows have passed since the last step.
    fn end_group(&mut self, last: bool) -> Result<(), EngineError> {
        let Some((key, count, locator)) = self.group.take() else { return Ok(()) };
        let count = count as f64;
        let null = key.first() == Some(&0);
        let close = null
            || self.steps.is_empty()
            || self.steps.len() == 1 && self.steps[0].value.is_null()
            || last
            || self.pending_rows + count >= self.target;
        if !close {
            self.pending_rows += count;
            self.pending_distinct += 1.0;
            return Ok(());
        }
        let value = self.value(locator)?;
        let step = Step {
            value,
            key,
            range_rows: self.pending_rows,
            eq_rows: count,
            distinct_range_rows: self.pending_distinct,
        };
        self.pending_rows = 0.0;
        self.pending_distinct = 0.0;
        if self.steps.len() < MAX_STEPS {
            self.steps.push(step);
        } else if let Some(prev) = self.steps.last_mut() {
            // Too few rows were expected: the last step absorbs this one.
            prev.range_rows += prev.eq_rows + step.range_rows;
            prev.distinct_range_rows += 1.0 + step.distinct_range_rows;
            prev.eq_rows = step.eq_rows;
            prev.value = step.value;
            prev.key = step.key;
        }
        Ok(())
    }

    /// The leading column's value of a step's row.
    fn value(&self, locator: Locator) -> Result<Value, EngineError> {
        let bytes = match locator {
            Locator::Value(v) => return Ok(v),
            Locator::Row(bytes) => bytes,
            Locator::RowId(id) => {
                let primary = self.table.primary()?;
                match self.db.space().tree(primary.root).get(&id)? {
                    Some(bytes) => bytes,
                    None => return Ok(Value::Null),
                }
            }
        };
        let mut values = decode_row(self.db, self.table, &bytes)?;
        Ok(std::mem::replace(&mut values[self.column], Value::Null))
    }

    fn finish(
        mut self,
        key_type: SqlType,
        rows: u64,
        scale: f64,
    ) -> Result<Histogram, EngineError> {
        self.end_group(true)?;
        let sampled = self.rows.max(1) as f64;
        for s in &mut self.steps {
            s.range_rows *= scale;
            s.eq_rows *= scale;
            // Distinct values do not scale with the rows: a sample's are a lower bound.
            s.distinct_range_rows = s.distinct_range_rows.min(s.range_rows);
        }
        Ok(Histogram {
            updated_micros: crate::statistics::now_micros(),
            rows,
            rows_sampled: self.rows,
            key_type,
            density: self
                .distinct
                .iter()
                .map(|&d| if d == 0 { 1.0 } else { 1.0 / d as f64 })
                .collect(),
            avg_length: self.length.iter().map(|&l| l as f64 / sampled).collect(),
            steps: self.steps,
        })
    }
}

fn decode_row(db: &Database, table: &TableDef, bytes: &[u8]) -> Result<Vec<Value>, EngineError> {
    decode_stored_row(db, &table.types(), bytes)
        .map_err(|e| EngineError::Invalid(format!("table '{}': {e}", table.name)))
}

impl Database {
    /// Builds the histogram and density vector of `columns` (positions in `table`) from
    /// the table's rows, reading what `sampling` asks for (see the module's documentation).
    pub fn build_statistics(
        self: &Arc<Self>,
        table: &TableDef,
        columns: &[usize],
        sampling: Sampling,
    ) -> Result<Histogram, EngineError> {
        let mut built = self.build_statistics_together(table, &[columns], sampling)?;
        Ok(built.remove(0))
    }

    /// [`Database::build_statistics`] of each of `sets` (in their order), with one read of
    /// the table's rows for all those no index leads: the automatic updates of a busy
    /// table's statistics find several stale at once.
    pub fn build_statistics_together(
        self: &Arc<Self>,
        table: &TableDef,
        sets: &[&[usize]],
        sampling: Sampling,
    ) -> Result<Vec<Histogram>, EngineError> {
        self.check_online()?;
        if sets.iter().any(|columns| columns.is_empty()) {
            return Err(EngineError::Invalid("statistics need at least one column".into()));
        }
        let mut built: Vec<Option<Histogram>> = Vec::with_capacity(sets.len());
        let mut unordered = Vec::new();
        for (i, &columns) in sets.iter().enumerate() {
            let types: Vec<SqlType> = columns.iter().map(|&c| table.columns[c].ty).collect();
            let ordered = table
                .indexes
                .iter()
                .filter(|i| !i.is_heap() && i.columns.starts_with(columns))
                .min_by_key(|i| (i.id != 1, i.columns.len()));
            match ordered {
                Some(index) => {
                    built.push(Some(self.build_ordered(table, index.id, columns, &types)?))
                }
                None => {
                    built.push(None);
                    unordered.push(i);
                }
            }
        }
        if !unordered.is_empty() {
            let wanted: Vec<&[usize]> = unordered.iter().map(|&i| sets[i]).collect();
            for (i, h) in unordered.into_iter().zip(self.build_unordered(table, &wanted, sampling)?)
            {
                built[i] = Some(h);
            }
        }
        Ok(built.into_iter().flatten().collect())
    }

    /// From an index whose key starts with `columns`: every entry, in key order.
    fn build_ordered(
        &self,
        table: &TableDef,
        index_id: u16,
        columns: &[usize],
        types: &[SqlType],
    ) -> Result<Histogram, EngineError> {
        let index = table.index(index_id).ok_or_else(|| {
            EngineError::Invalid(format!("no index {index_id} on '{}'", table.name))
        })?;
        let tree = self.space().tree(index.root);
        let mut b = Builder::new(self, table, columns, tree.estimate_entries()?);
        let mut cursor = tree.scan();
        while let Some((key, value)) = cursor.next_entry()? {
            let lens = key_prefix_lengths(types, &key);
            if lens.len() < types.len() {
                return Err(EngineError::Corrupt(format!(
                    "index {index_id} of '{}' has a key shorter than its columns",
                    table.name
                )));
            }
            let end = lens[lens.len() - 1];
            b.push(&key[..end], lens, || {
                if index_id == 1 {
                    Locator::Row(value)
                } else {
                    Locator::RowId(value)
                }
            })?;
        }
        let rows = b.rows;
        b.finish(types[0], rows, 1.0)
    }

    /// From the table's rows in any order, for each of `sets`: their keys kept (a sample
    /// beyond [`MAX_KEPT`]), sorted, then built as from an index. The default sampling reads
    /// some of the leaves of a large table ([`default_leaf_fraction`]); the others read
    /// every leaf and, asked for a percentage or a number of rows, keep that share of its
    /// rows. Only the sets' columns are decoded, once per row for all of them; every set
    /// keeps the same rows.
    fn build_unordered(
        &self,
        table: &TableDef,
        sets: &[&[usize]],
        sampling: Sampling,
    ) -> Result<Vec<Histogram>, EngineError> {
        let primary = table.primary()?;
        let tree = self.space().tree(primary.root);
        let expected = tree.estimate_entries()?.max(1.0);
        let (leaf_fraction, asked) = match sampling {
            Sampling::Default => (default_leaf_fraction(expected, tree.estimate_leaves()?), 1.0),
            Sampling::FullScan => (1.0, 1.0),
            Sampling::Percent(p) => (1.0, (p / 100.0).clamp(0.0, 1.0)),
            Sampling::Rows(n) => (1.0, (n as f64 / expected).min(1.0)),
        };
        let fraction = asked.min(MAX_KEPT as f64 / (expected * leaf_fraction));
        let table_types = table.types();
        let wanted: Vec<bool> =
            (0..table.columns.len()).map(|c| sets.iter().any(|s| s.contains(&c))).collect();
        let invalid = |e: &dyn std::fmt::Display| {
            EngineError::Invalid(format!("table '{}': {e}", table.name))
        };
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ u64::from(table.id));
        let mut kept: Vec<Kept> =
            sets.iter().map(|columns| Kept::new(table.columns[columns[0]].ty)).collect();
        let mut key = Vec::new();
        let mut rows = 0u64;
        let mut offered = 0u64;
        let mut batch = EntryBatch::new();
        let mut after: Option<Vec<u8>> = None;
        loop {
            batch.clear();
            let mut pick = || leaf_fraction >= 1.0 || rng.unit() < leaf_fraction;
            let seen =
                tree.copy_leaf_sample(after.as_deref(), LEAVES_PER_HOLD, &mut pick, &mut batch)?;
            rows += seen.entries;
            for i in 0..batch.len() {
                if fraction < 1.0 && rng.unit() >= fraction {
                    continue;
                }
                let (_, bytes) = batch.get(i);
                let values = decode_stored_row_some(self, &table_types, bytes, Some(&wanted))
                    .map_err(|e| invalid(&e))?;
                offered += 1;
                // A reservoir past MAX_KEPT: each row offered so far is kept with the same
                // chance, in the same slot of every set.
                let slot = if kept[0].len() < MAX_KEPT {
                    None
                } else {
                    match (rng.next() % offered) as usize {
                        slot if slot < MAX_KEPT => Some(slot),
                        _ => continue,
                    }
                };
                for (columns, kept) in sets.iter().zip(&mut kept) {
                    key.clear();
                    let cols = columns.iter().map(|&c| (table.columns[c].ty, &values[c]));
                    encode_key_columns(cols, &mut key).map_err(|e| invalid(&e))?;
                    let lead = &values[columns[0]];
                    match slot {
                        None => kept.push(&key, lead),
                        Some(slot) => kept.replace(slot, &key, lead),
                    }
                }
            }
            match seen.resume {
                Some(key) => after = Some(key),
                None => break,
            }
        }
        let mut built = Vec::with_capacity(sets.len());
        for (columns, kept) in sets.iter().zip(kept) {
            let types: Vec<SqlType> = columns.iter().map(|&c| table.columns[c].ty).collect();
            let n = kept.len();
            let scale = if n == 0 { 1.0 } else { rows as f64 / n as f64 };
            let mut b = Builder::new(self, table, columns, n as f64);
            for i in kept.sorted() {
                let key = kept.key(i as usize);
                let lens = key_prefix_lengths(&types, key);
                let lead_key = &key[..lens.first().copied().unwrap_or(key.len())];
                // A key of a type it can be read back from, just encoded, reads back.
                let lead = || kept.lead(i as usize, types[0], lead_key).unwrap_or(Value::Null);
                b.push(key, lens, || Locator::Value(lead()))?;
            }
            built.push(b.finish(types[0], rows, scale)?);
        }
        Ok(built)
    }
}

/// The share of a table's leaves the default sampling reads: every leaf of a table of up
/// to [`MIN_SAMPLED_LEAVES`], and of a larger one that many leaves plus those holding `15
/// rows^0.55` of its rows (15,400 of 300,000 rows, 30,000 of a million), SQL Server's
/// formula for its default sample with a smaller floor (see [`MIN_SAMPLED_LEAVES`]). The
/// build's cost then grows far slower than the table: an automatic creation or update runs
/// inside the query that asked for it, and a busy table's statistics go stale, and are
/// rebuilt, every few seconds (TPC-C's order lines and stock).
pub fn default_leaf_fraction(rows: f64, leaves: f64) -> f64 {
    if leaves <= MIN_SAMPLED_LEAVES || rows <= 0.0 {
        return 1.0;
    }
    (15.0 * rows.powf(0.55) / rows + MIN_SAMPLED_LEAVES / leaves).min(1.0)
}

/// A small deterministic generator for sampling (Marsaglia's xorshift64).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
