//! Sampling for the planner's statistics: an index's size estimated from one descent and how
//! many of its first entries share each key prefix; a table's first rows' distinct values
//! and character values per column. Takes no locks: statistics only decide how a query
//! reads, never what it returns.

use std::sync::Arc;

use super::{decode_stored_row_some, row_error};
use crate::catalog::TableDef;
use crate::database::Database;
use crate::error::EngineError;
use crate::txn::Transaction;
use crate::types::{encode_key_columns_ordered, SqlType, Value};

/// What a look at an index's first entries says of its keys: the statistics the planner
/// costs seeks with.
#[derive(Debug, Clone, Default)]
pub struct IndexSample {
    /// The index's entries (for index 1, the table's rows), estimated from one descent.
    pub rows: f64,
    /// Entry k: how many of the sampled entries share a value of the first k + 1 key
    /// columns, on average (1 for a unique key).
    pub rows_per_prefix: Vec<f64>,
}

impl Transaction {
    /// Samples index `index_id` of `table`: its size, and how many entries share each key
    /// prefix among its first `sample` entries. Takes no locks: statistics may be stale or
    /// read uncommitted keys, and only decide how a query reads, never what it returns.
    pub fn sample_index(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        index_id: u16,
        sample: usize,
    ) -> Result<IndexSample, EngineError> {
        db.check_online()?;
        let index = table.index(index_id).ok_or_else(|| {
            EngineError::Invalid(format!("no index {index_id} on '{}'", table.name))
        })?;
        let tree = db.space().tree(index.root);
        let types: Vec<SqlType> = index.columns.iter().map(|&c| table.columns[c].ty).collect();
        let mut cursor = tree.scan();
        let mut sampled = 0usize;
        let mut distinct = vec![0usize; types.len()];
        let mut previous: Option<(Vec<u8>, Vec<usize>)> = None;
        while sampled < sample {
            let Some((key, _)) = cursor.next_entry()? else { break };
            sampled += 1;
            let lens = crate::types::key_prefix_lengths(&types, &key);
            for (k, count) in distinct.iter_mut().enumerate() {
                let same = match (&previous, lens.get(k)) {
                    (Some((p, plens)), Some(&end)) => {
                        plens.get(k) == Some(&end) && p[..end] == key[..end]
                    }
                    _ => false,
                };
                if !same {
                    *count += 1;
                }
            }
            previous = Some((key, lens));
        }
        let rows = tree.estimate_entries()?.max(sampled as f64);
        let truncated = sampled == sample;
        let rows_per_prefix = distinct
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let d = d.max(1) as f64;
                if index.unique && k + 1 == types.len() {
                    1.0
                } else if truncated && d < 4.0 {
                    // A sample of a few long runs says little of the rest: assume those few
                    // values spread over the whole index, the pessimistic reading.
                    rows / d
                } else {
                    sampled as f64 / d
                }
            })
            .collect();
        Ok(IndexSample { rows, rows_per_prefix })
    }

    /// Samples the columns of `table` from its first `sample` rows (in the clustered
    /// index's order): see [`ColumnSample`]. Takes no locks, as [`Transaction::sample_index`].
    pub fn sample_columns(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        sample: usize,
    ) -> Result<ColumnSample, EngineError> {
        db.check_online()?;
        let primary = table.primary()?;
        let tree = db.space().tree(primary.root);
        let types = table.types();
        let keyed: Vec<bool> = types
            .iter()
            .map(|t| !matches!(t, SqlType::Variant | SqlType::Xml) && t.max_len_bytes() <= 8000)
            .collect();
        let mut seen: Vec<std::collections::HashMap<Vec<u8>, u32>> =
            vec![std::collections::HashMap::new(); types.len()];
        let mut text: Vec<Option<Vec<String>>> = types
            .iter()
            .zip(&keyed)
            .map(|(t, &k)| {
                (k && t.is_text() && t.max_len_bytes() <= MAX_TEXT_SAMPLED).then(Vec::new)
            })
            .collect();
        let mut cursor = tree.scan();
        let mut sampled = 0usize;
        while sampled < sample {
            let Some((_, bytes)) = cursor.next_entry()? else { break };
            sampled += 1;
            let values = decode_stored_row_some(db, &types, &bytes, Some(&keyed))
                .map_err(|e| row_error(table, e))?;
            for (c, v) in values.iter().enumerate() {
                if let (Some(kept), Value::Str(s) | Value::NStr(s)) = (&mut text[c], v) {
                    kept.push(s.to_string());
                }
            }
            for (c, v) in values.iter().enumerate().filter(|(c, _)| keyed[*c]) {
                let column = &table.columns[c];
                let mut key = Vec::new();
                if encode_key_columns_ordered([(column.ty, column.text_order(), v)], &mut key)
                    .is_ok()
                {
                    *seen[c].entry(key).or_insert(0) += 1;
                }
            }
        }
        let rows = tree.estimate_entries()?.max(sampled as f64);
        let n = sampled as f64;
        let distinct = seen
            .iter()
            .zip(&keyed)
            .map(|(values, &k)| {
                if !k || sampled == 0 {
                    return None;
                }
                let d = values.len() as f64;
                if sampled < sample {
                    return Some(d.max(1.0));
                }
                let f1 = values.values().filter(|&&count| count == 1).count() as f64;
                Some((n * d / (n - f1 + f1 * n / rows)).clamp(1.0, rows))
            })
            .collect();
        Ok(ColumnSample { distinct, text })
    }
}

/// The longest character column (in bytes, as declared) whose sampled values
/// [`ColumnSample::text`] keeps: a planner caches the sample per table, so a table of long
/// text columns would otherwise hold up to 8,000 bytes a value for each of its rows sampled.
const MAX_TEXT_SAMPLED: usize = 1024;

/// What [`Transaction::sample_columns`] saw of a table's columns, by column ordinal.
#[derive(Debug, Default)]
pub struct ColumnSample {
    /// How many distinct values each column holds: exact where the sample is the whole
    /// table, otherwise scaled up by the values seen once (the Duj1 estimator of Haas and
    /// Stokes: `n d / (n - f1 + f1 n / N)` for `d` distinct values in `n` sampled rows, `f1`
    /// of them seen once, `N` rows). None for a column of a type no key holds (the MAX
    /// types). Values are compared by their key encoding, so under their column's
    /// collation.
    pub distinct: Vec<Option<f64>>,
    /// The sampled rows' values of each character column of at most `MAX_TEXT_SAMPLED`
    /// bytes (NULLs left out), for estimates no key statistics give (`LIKE '%green%'`);
    /// None for the others.
    pub text: Vec<Option<Vec<String>>>,
}
