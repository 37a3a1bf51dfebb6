//! Hashing beyond the memory grant: GROUP BY, DISTINCT and the hash join's build side,
//! partitioned to spill files by the hash of their key and done one partition at a time.
//!
//! Each of them first asks its grant for what the in-memory way would hold (the input rows
//! it hashes, counted by [`row_bytes`], plus a key per row); granted, it runs in memory
//! exactly as before. Refused, the rows are written to [`partitions`] spill files by the
//! hash of their [`group_key`] (the key under which T-SQL calls values equal: case- and
//! trailing-space-insensitive, `1 = 1.0`), or for grouping and joins, where a column's
//! collation may call more values equal, of their `coarse_key`, so rows that are equal land
//! in the same partition, and each partition is then grouped, deduplicated or joined by itself with the
//! in-memory code. The results are the same rows; only their order, which T-SQL leaves
//! undefined without ORDER BY, is by partition. A partition that is itself larger than the
//! grant (one key holding most rows) is done in memory all the same, with its bytes held
//! against the workspace (error 701 past it).

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use walden_engine::types::Value;

use crate::ast::Expr;
use crate::exec::eval::{Col, Env};
use crate::exec::execute::grant::{row_bytes, MemoryGrant, QueryMemory};
use crate::exec::execute::query::{group_key, push_group_key};
use crate::exec::execute::spill::{Keyed, SpillReader, SpillWriter};
use crate::exec::scalar::collation::coarse_key;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// Bytes a hash table spends per row beyond the row: the key text and the table's slot.
pub(crate) const KEY_BYTES: usize = 64;

/// The most partitions one operator writes at once.
const MAX_PARTITIONS: usize = 128;

/// The partitions of an operator that learns its input's size only as it reads it (the
/// hash aggregate, `aggregate.rs`): enough for an input of 64 times its grant.
pub(crate) const STREAMED_PARTITIONS: usize = 64;

/// How many partitions `bytes` of input need for each to fit in half of `memory`'s grant.
fn partition_count(memory: &QueryMemory, bytes: usize) -> usize {
    let share = (memory.per_query() / 2).max(1);
    bytes.div_ceil(share).clamp(2, MAX_PARTITIONS)
}

/// Which of `n` partitions a key goes to. SipHash with fixed keys: the same in every run,
/// and a key's partition does not depend on the others.
fn partition_of(key: &str, n: usize) -> usize {
    let mut h = std::hash::DefaultHasher::new();
    key.hash(&mut h);
    (h.finish() % n as u64) as usize
}

/// Spill files, one per partition.
pub(crate) struct Partitions {
    files: Vec<SpillWriter>,
}

impl Partitions {
    pub(crate) fn new(
        memory: &std::sync::Arc<QueryMemory>,
        n: usize,
    ) -> Result<Partitions, SqlError> {
        let files = (0..n).map(|_| SpillWriter::create(memory)).collect::<Result<_, _>>()?;
        Ok(Partitions { files })
    }

    pub(crate) fn write(&mut self, key: &str, row: &[Value]) -> Result<(), SqlError> {
        let n = self.files.len();
        self.files[partition_of(key, n)].write(row)
    }

    pub(crate) fn finish(self) -> Result<Vec<SpillReader>, SqlError> {
        self.files.into_iter().map(SpillWriter::finish).collect()
    }
}

/// Every row of a partition.
pub(crate) fn read_all(mut file: SpillReader) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut rows = Vec::new();
    while let Some(row) = file.next()? {
        rows.push(row);
    }
    Ok(rows)
}

/// What hashing `rows` in memory holds.
pub(crate) fn hashed_bytes(rows: &[Vec<Value>]) -> usize {
    rows.iter().map(|r| row_bytes(r) + KEY_BYTES).sum()
}

impl Run<'_> {
    /// A grant for one operator of the running statement.
    pub(crate) fn memory_grant(&self) -> MemoryGrant {
        MemoryGrant::new(crate::exec::execute::grant::query_memory(&self.s.instance), self.s.spid)
    }

    /// The values of `exprs` for `row`, refusing xml as GROUP BY does.
    pub(crate) fn key_values(
        &mut self,
        exprs: &[&Expr],
        cols: &[Col],
        row: &[Value],
        outer: Option<&Env<'_>>,
    ) -> Result<Vec<Value>, SqlError> {
        let env = Env::new(cols, row, outer);
        let mut key = Vec::with_capacity(exprs.len());
        for e in exprs {
            match self.eval(e, &env)? {
                Value::Xml(_) => return Err(crate::exec::scalar::xml::not_comparable()),
                v => key.push(v),
            }
        }
        Ok(key)
    }

    /// DISTINCT of whole rows (with a sort key beside each, which follows its row) within
    /// the memory grant: the first of each set of equal rows, in input order if the grant
    /// covers them all, else partition by partition.
    pub(crate) fn distinct_within_grant(
        &mut self,
        keyed: Vec<Keyed>,
    ) -> Result<Vec<Keyed>, SqlError> {
        let mut grant = self.memory_grant();
        let bytes: usize = keyed.iter().map(|(_, r)| KEY_BYTES + row_bytes(r)).sum();
        if grant.try_reserve(bytes) {
            // Seeded foldhash, as a grouping's index is hashed (`aggregate.rs`).
            let mut seen: HashSet<String, foldhash::fast::RandomState> = HashSet::default();
            let mut keyed = keyed;
            // One buffer for every row's key; only a row not seen before keeps a copy.
            let mut key = String::new();
            keyed.retain(|(_, r)| {
                key.clear();
                r.iter().for_each(|v| push_group_key(v, &mut key));
                !seen.contains(key.as_str()) && seen.insert(key.clone())
            });
            return Ok(keyed);
        }
        let n = partition_count(grant.memory(), bytes);
        let mut parts = Partitions::new(grant.memory(), n)?;
        let mut pair = Vec::new();
        for (i, (keys, row)) in keyed.into_iter().enumerate() {
            self.row_interruption_point(i)?;
            // The sort keys travel after the row's values: [row..., keys..., row length].
            pair.clear();
            let width = row.len();
            pair.extend(row);
            pair.extend(keys);
            pair.push(Value::BigInt(width as i64));
            parts.write(&group_key(&pair[..width]), &pair)?;
        }
        let mut out = Vec::new();
        for file in parts.finish()? {
            self.interruption_point()?;
            let mut seen = HashSet::new();
            for mut pair in read_all(file)? {
                let width = match pair.pop() {
                    Some(Value::BigInt(w)) => w as usize,
                    _ => 0,
                };
                if seen.insert(group_key(&pair[..width])) {
                    let keys = pair.split_off(width);
                    out.push((keys, pair));
                }
            }
        }
        Ok(out)
    }

    /// An inner hash join whose build side `right` the grant does not cover: both sides
    /// partitioned by the hash of their join key and joined partition by partition. `keys`
    /// pairs each probe-side expression (over `left_cols`) with its build-side one (over
    /// `right_cols`); `emit` gets each pair of rows whose keys are equal and says whether
    /// the output is full. When the grant covers `right` this reads nothing and returns the
    /// grant, which the caller holds while it joins in memory; else it returns None, done.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn grace_hash_join(
        &mut self,
        keys: &[(&Expr, &Expr)],
        left_cols: &[Col],
        left: &mut Vec<Vec<Value>>,
        right_cols: &[Col],
        right: &mut Vec<Vec<Value>>,
        outer: Option<&Env<'_>>,
        mut emit: impl FnMut(&mut Self, &[Value], &[Value]) -> Result<bool, SqlError>,
    ) -> Result<Option<MemoryGrant>, SqlError> {
        let mut grant = self.memory_grant();
        let bytes = hashed_bytes(right);
        if grant.try_reserve(bytes) {
            return Ok(Some(grant));
        }
        let probe: Vec<&Expr> = keys.iter().map(|k| k.0).collect();
        let build: Vec<&Expr> = keys.iter().map(|k| k.1).collect();
        let n = partition_count(grant.memory(), bytes);
        let mut right_parts = Partitions::new(grant.memory(), n)?;
        for (i, row) in std::mem::take(right).into_iter().enumerate() {
            self.row_interruption_point(i)?;
            let key = self.key_values(&build, right_cols, &row, outer)?;
            // A NULL key matches nothing in an inner join.
            if !key.iter().any(Value::is_null) {
                right_parts.write(&coarse_key(&key), &row)?;
            }
        }
        let mut left_parts = Partitions::new(grant.memory(), n)?;
        for (i, row) in std::mem::take(left).into_iter().enumerate() {
            self.row_interruption_point(i)?;
            let key = self.key_values(&probe, left_cols, &row, outer)?;
            if !key.iter().any(Value::is_null) {
                left_parts.write(&coarse_key(&key), &row)?;
            }
        }
        for (r, mut l) in right_parts.finish()?.into_iter().zip(left_parts.finish()?) {
            self.interruption_point()?;
            let built = read_all(r)?;
            let part_bytes = hashed_bytes(&built);
            if !grant.try_reserve(part_bytes) {
                grant.hold(part_bytes)?;
            }
            let mut table: HashMap<String, Vec<usize>> = HashMap::new();
            for (i, row) in built.iter().enumerate() {
                self.row_interruption_point(i)?;
                let key = self.key_values(&build, right_cols, row, outer)?;
                table.entry(coarse_key(&key)).or_default().push(i);
            }
            let mut i = 0;
            while let Some(row) = l.next()? {
                self.row_interruption_point(i)?;
                i += 1;
                let key = self.key_values(&probe, left_cols, &row, outer)?;
                for &m in table.get(&coarse_key(&key)).into_iter().flatten() {
                    if emit(self, &row, &built[m])? {
                        return Ok(None);
                    }
                }
            }
            grant.release(part_bytes);
        }
        Ok(None)
    }
}
