//! The hash table of a hash join (and of a semi-join's inner keys): one side's rows by
//! their join key.
//!
//! Built once per join and probed once per row of the other side, so its per-row costs are
//! the join's: the table is laid out so that building it allocates nothing per row. Each
//! distinct key maps to one span of `rows`, the positions of the rows with that key in
//! ascending order (the order a probe's candidates are paired in, so results keep the
//! order the build side was read in); the spans are found by counting, as a counting sort
//! lays out its buckets, rather than by a vector grown per key. The maps are hashed with
//! seeded foldhash, as a grouping's index is (`aggregate.rs`): SipHash's cost showed in
//! every build and probe, and the seed keeps keys an attacker chose from colliding at will.

use std::collections::HashMap;

use walden_engine::types::{SqlType, Value};

use crate::ast::Expr;
use crate::exec::bind::prepared::Scalar;
use crate::exec::eval::{Col, Env};
use crate::exec::scalar;
use crate::exec::session::Run;
use crate::exec::SqlError;

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The hash key of join key values: equal under T-SQL's comparison within a
/// [`family`](super::family) whenever the values are equal, under any collation
/// (`coarse_key`); None if a value is NULL (it matches nothing).
pub(super) fn hash_key(values: &[Value]) -> Option<String> {
    if values.iter().any(Value::is_null) {
        return None;
    }
    Some(crate::exec::scalar::collation::coarse_key(values))
}

/// The integer a key value is, when it is of an integer type.
pub(crate) fn integer_key(v: &Value) -> Option<i64> {
    match v {
        Value::TinyInt(x) => Some(i64::from(*x)),
        Value::SmallInt(x) => Some(i64::from(*x)),
        Value::Int(x) => Some(i64::from(*x)),
        Value::BigInt(x) => Some(*x),
        _ => None,
    }
}

/// A hash table of one side's rows by their join key. A candidate is only a candidate: the
/// caller checks the equalities on it (they are conjuncts of the join, or compared by the
/// semi-join), so the table may hold too many rows per key, never too few.
pub(super) struct HashMatch {
    buckets: Buckets,
    /// Row positions grouped by key; a key's span of them is its bucket's value.
    rows: Vec<usize>,
}

/// Where a key's rows are in [`HashMatch::rows`]: `start..start + len`. `u32` halves the
/// map's entries; a build side is held in memory, where four billion rows cannot fit.
#[derive(Clone, Copy)]
struct Span {
    start: u32,
    len: u32,
}

enum Buckets {
    /// One key whose every value is an integer (a key column of an integer type, the
    /// common case): hashed as the integer, with no text to build per row.
    Ints(FastMap<i64, Span>),
    /// Two to [`MAX_INT_TUPLE`] keys whose every value is an integer (a composite key such
    /// as TPC-H's `(ps_partkey, ps_suppkey)`): hashed as the integers, as [`Buckets::Ints`].
    IntTuples(FastMap<Box<[i64]>, Span>),
    /// Any other key: by [`hash_key`].
    Keys(FastMap<String, Span>),
}

/// The most keys hashed as integers; a probe holds its integers on the stack.
const MAX_INT_TUPLE: usize = 8;

/// The integer a probe's value `v` equals, for a table of integer keys: None if it is NULL
/// or equals no integer. A number of another type equals an integer only if it is one (1.0
/// = 1): the integer it converts to, if they compare equal.
fn probe_integer(v: &Value) -> Result<Option<i64>, SqlError> {
    if let Some(k) = integer_key(v) {
        return Ok(Some(k));
    }
    if v.is_null() {
        return Ok(None);
    }
    Ok(match scalar::convert(v.clone(), SqlType::BigInt, None) {
        Ok(Value::BigInt(n))
            if scalar::compare(v, &Value::BigInt(n))? == Some(std::cmp::Ordering::Equal) =>
        {
            Some(n)
        }
        _ => None,
    })
}

/// The integers of a probe's `n` key values, which `value(i)` gives as [`probe_integer`]
/// does, on the stack, with `n`; None if one is NULL or equals no integer, or if there are
/// more than [`MAX_INT_TUPLE`] (no tuple table holds such a key).
fn probe_tuple(
    n: usize,
    mut value: impl FnMut(usize) -> Result<Option<i64>, SqlError>,
) -> Result<Option<([i64; MAX_INT_TUPLE], usize)>, SqlError> {
    if n > MAX_INT_TUPLE {
        return Ok(None);
    }
    let mut ints = [0i64; MAX_INT_TUPLE];
    for (i, k) in ints.iter_mut().enumerate().take(n) {
        match value(i)? {
            Some(v) => *k = v,
            None => return Ok(None),
        }
    }
    Ok(Some((ints, n)))
}

/// Key values as integers, `width` per row one after another in `values`: the integers
/// (0 in a NULL's place) and whether each row's key has a NULL; None if a value is neither
/// an integer nor NULL.
struct Integers {
    ints: Vec<i64>,
    nulls: Vec<bool>,
}

impl Integers {
    fn with_capacity(rows: usize, width: usize) -> Integers {
        Integers { ints: Vec::with_capacity(rows * width), nulls: Vec::with_capacity(rows) }
    }

    /// Adds one row's key, `values`; false (and nothing added) if a value is neither an
    /// integer nor NULL.
    fn push_row(&mut self, values: &[Value]) -> bool {
        let mut null = false;
        for v in values {
            match integer_key(v) {
                Some(k) => self.ints.push(k),
                None if v.is_null() => {
                    null = true;
                    self.ints.push(0);
                }
                None => {
                    self.ints.truncate(self.nulls.len() * values.len());
                    return false;
                }
            }
        }
        self.nulls.push(null);
        true
    }

    /// The table of these keys, `width` integers each; with `distinct`, a key keeps only
    /// its first row.
    fn table(self, width: usize, distinct: bool) -> HashMatch {
        let Integers { ints, nulls } = self;
        if width == 1 {
            let keys = ints.iter().zip(&nulls).map(|(&k, &null)| (!null).then_some(k));
            let (index, rows) = table_of(keys, distinct);
            return HashMatch { buckets: Buckets::Ints(index), rows };
        }
        let keys =
            ints.chunks(width).zip(&nulls).map(|(k, &null)| (!null).then(|| Box::<[i64]>::from(k)));
        let (index, rows) = table_of(keys, distinct);
        HashMatch { buckets: Buckets::IntTuples(index), rows }
    }
}

/// A key not yet given its span: the count of rows with it, then (by [`lay_out`]) where
/// the next of them goes.
const NO_GROUP: u32 = u32::MAX;

/// Lays out the rows of `group_of` (each row's key number in order of first appearance,
/// [`NO_GROUP`] for a row whose key is NULL) so that each key's rows are together in row
/// order; `spans[g]` holds key g's count and becomes its span.
fn lay_out(group_of: &[u32], spans: &mut [Span]) -> Vec<usize> {
    let mut start = 0u32;
    for s in spans.iter_mut() {
        s.start = start;
        start += s.len;
    }
    // Each key's next free place, starting at its span's start.
    let mut next: Vec<u32> = spans.iter().map(|s| s.start).collect();
    let mut rows = vec![0usize; start as usize];
    for (i, &g) in group_of.iter().enumerate() {
        if g != NO_GROUP {
            let at = &mut next[g as usize];
            rows[*at as usize] = i;
            *at += 1;
        }
    }
    rows
}

/// The number of a key's group in `index`, a new one (counted in `spans`) if it has none.
fn group<K: std::hash::Hash + Eq>(
    index: &mut FastMap<K, Span>,
    spans: &mut Vec<Span>,
    key: K,
) -> u32 {
    let next = spans.len() as u32;
    // Until `lay_out`, a bucket's `start` is its group's number.
    let g = index.entry(key).or_insert(Span { start: next, len: 0 }).start;
    if g == next {
        spans.push(Span { start: 0, len: 0 });
    }
    spans[g as usize].len += 1;
    g
}

/// Gives each bucket of `index` its group's span.
fn settle<K>(index: &mut FastMap<K, Span>, spans: &[Span]) {
    for s in index.values_mut() {
        *s = spans[s.start as usize];
    }
}

/// The table of keys `keys`, one per row (None for a row whose key matches nothing); with
/// `distinct`, a key keeps only its first row.
fn table_of<K: std::hash::Hash + Eq>(
    keys: impl ExactSizeIterator<Item = Option<K>>,
    distinct: bool,
) -> (FastMap<K, Span>, Vec<usize>) {
    let mut index: FastMap<K, Span> = FastMap::default();
    let mut spans = Vec::new();
    let mut group_of = Vec::with_capacity(keys.len());
    for k in keys {
        let g = match k {
            Some(k) => {
                let g = group(&mut index, &mut spans, k);
                if distinct && spans[g as usize].len > 1 {
                    spans[g as usize].len -= 1;
                    NO_GROUP
                } else {
                    g
                }
            }
            None => NO_GROUP,
        };
        group_of.push(g);
    }
    let rows = lay_out(&group_of, &mut spans);
    settle(&mut index, &spans);
    (index, rows)
}

impl HashMatch {
    /// The table of `rows` (of columns `cols`) by the build side of `keys`.
    pub(super) fn build(
        run: &mut Run<'_>,
        keys: &[(&Expr, &Expr)],
        cols: &[Col],
        rows: &[Vec<Value>],
        outer: Option<&Env<'_>>,
    ) -> Result<HashMatch, SqlError> {
        let prepared: Vec<Scalar<'_>> =
            keys.iter().map(|(_, e)| Scalar::prepare(e, cols)).collect();
        let width = prepared.len();
        let mut values = Vec::with_capacity(width);
        if width <= MAX_INT_TUPLE {
            let mut integers = Integers::with_capacity(rows.len(), width);
            let mut all_integers = true;
            for (i, row) in rows.iter().enumerate() {
                run.row_interruption_point(i)?;
                let env = Env::new(cols, row, outer);
                values.clear();
                for key in &prepared {
                    values.push(run.eval_prepared(key, &env)?);
                }
                if !integers.push_row(&values) {
                    all_integers = false;
                    break;
                }
            }
            if all_integers {
                return Ok(integers.table(width, false));
            }
        }
        let mut texts = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            run.row_interruption_point(i)?;
            let env = Env::new(cols, row, outer);
            values.clear();
            for key in &prepared {
                values.push(run.eval_prepared(key, &env)?);
            }
            texts.push(hash_key(&values));
        }
        let (index, rows) = table_of(texts.into_iter(), false);
        Ok(HashMatch { buckets: Buckets::Keys(index), rows })
    }

    /// A hash of key tuples already computed, `width` values each one after another in
    /// `keys` (candidate i's are `keys[i * width..][..width]`; one with a NULL matches
    /// nothing and is left out). With `distinct`, an integer key keeps only its first
    /// candidate: for a semi-join, whose question is whether any matches (a text key's
    /// candidates are only hashed alike, so each is kept for the caller to compare).
    pub(super) fn from_keys(keys: &[Value], width: usize, distinct: bool) -> HashMatch {
        let width = width.max(1);
        if width <= MAX_INT_TUPLE {
            let mut integers = Integers::with_capacity(keys.len() / width, width);
            if keys.chunks(width).all(|key| integers.push_row(key)) {
                return integers.table(width, distinct);
            }
        }
        let texts: Vec<Option<String>> = keys.chunks(width).map(hash_key).collect();
        let (index, rows) = table_of(texts.into_iter(), false);
        HashMatch { buckets: Buckets::Keys(index), rows }
    }

    /// Whether a candidate's key is always equal to the probe's under T-SQL's comparison,
    /// not just hashed alike: keys of integers (a probe of another numeric type is looked
    /// up as the integer it equals, or not at all).
    pub(super) fn exact(&self) -> bool {
        matches!(self.buckets, Buckets::Ints(_) | Buckets::IntTuples(_))
    }

    /// The probe side of `keys`, prepared once for rows of columns `cols`.
    pub(super) fn probes<'e>(keys: &[(&'e Expr, &Expr)], cols: &[Col]) -> Vec<Scalar<'e>> {
        keys.iter().map(|(e, _)| Scalar::prepare(e, cols)).collect()
    }

    /// The rows whose key equals the key of the row in `env` (of the other side), whose
    /// values `probes` ([`HashMatch::probes`]) compute.
    pub(super) fn candidates(
        &self,
        run: &mut Run<'_>,
        probes: &[Scalar<'_>],
        env: &Env<'_>,
    ) -> Result<&[usize], SqlError> {
        // One key, the common case: no vector per probe. A column is read where it lies
        // (`Run::value_in`), not cloned: a probe per row of the scanned side.
        if let [p] = probes {
            let mut held = None;
            let v = run.value_in(p, env, &mut held)?;
            return self.lookup(std::slice::from_ref(v));
        }
        // Integers on the stack: no vector per probe either.
        if let Buckets::IntTuples(tuples) = &self.buckets {
            let key = probe_tuple(probes.len(), |i| {
                probe_integer(run.value_in(&probes[i], env, &mut None)?)
            })?;
            return Ok(self.span(key.and_then(|(ints, n)| tuples.get(&ints[..n]))));
        }
        let mut values = Vec::with_capacity(probes.len());
        for p in probes {
            values.push(run.eval_prepared(p, env)?);
        }
        self.lookup(&values)
    }

    /// The rows whose key equals `values`, the probe side's values of the keys.
    pub(super) fn lookup(&self, values: &[Value]) -> Result<&[usize], SqlError> {
        let found = match (&self.buckets, values) {
            (Buckets::Ints(ints), [v]) => probe_integer(v)?.and_then(|k| ints.get(&k)),
            (Buckets::Ints(_), _) => None,
            (Buckets::IntTuples(tuples), _) => {
                probe_tuple(values.len(), |i| probe_integer(&values[i]))?
                    .and_then(|(ints, n)| tuples.get(&ints[..n]))
            }
            (Buckets::Keys(buckets), _) => hash_key(values).and_then(|k| buckets.get(&k)),
        };
        Ok(self.span(found))
    }

    /// The rows of a key's span, none if the key has none.
    fn span(&self, found: Option<&Span>) -> &[usize] {
        found.map_or(&[], |s| &self.rows[s.start as usize..][..s.len as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use walden_engine::types::Decimal;

    #[test]
    fn hash_keys_of_equal_numbers_are_equal() {
        let a = hash_key(&[Value::Int(3)]);
        let b = hash_key(&[Value::BigInt(3)]);
        assert_eq!(a, b);
        assert_eq!(hash_key(&[Value::Null]), None);
    }

    #[test]
    fn candidates_keep_row_order_and_skip_nulls() {
        let keys = [Value::Int(5), Value::Null, Value::Int(7), Value::Int(5), Value::Int(5)];
        let all = HashMatch::from_keys(&keys, 1, false);
        assert_eq!(all.lookup(&[Value::BigInt(5)]).unwrap(), &[0, 3, 4]);
        assert_eq!(all.lookup(&[Value::Int(7)]).unwrap(), &[2]);
        assert!(all.lookup(&[Value::Int(6)]).unwrap().is_empty());
        assert!(all.lookup(&[Value::Null]).unwrap().is_empty());
        let first = HashMatch::from_keys(&keys, 1, true);
        assert_eq!(first.lookup(&[Value::Int(5)]).unwrap(), &[0]);
    }

    #[test]
    fn integer_tuples_match_exactly_and_skip_nulls() {
        let keys = [
            Value::Int(1),
            Value::BigInt(2),
            Value::Int(1),
            Value::Null,
            Value::SmallInt(1),
            Value::Int(2),
            Value::Int(2),
            Value::Int(1),
        ];
        let table = HashMatch::from_keys(&keys, 2, false);
        assert!(table.exact());
        assert_eq!(table.lookup(&[Value::BigInt(1), Value::Int(2)]).unwrap(), &[0, 2]);
        assert_eq!(table.lookup(&[Value::Int(2), Value::Int(1)]).unwrap(), &[3]);
        // A decimal that equals an integer finds it; one that does not finds nothing.
        let one = Value::Decimal(Decimal::parse("1.0").unwrap());
        let half = Value::Decimal(Decimal::parse("1.5").unwrap());
        assert_eq!(table.lookup(&[one, Value::Int(2)]).unwrap(), &[0, 2]);
        assert!(table.lookup(&[half, Value::Int(2)]).unwrap().is_empty());
        assert!(table.lookup(&[Value::Null, Value::Int(2)]).unwrap().is_empty());
        let first = HashMatch::from_keys(&keys, 2, true);
        assert_eq!(first.lookup(&[Value::Int(1), Value::Int(2)]).unwrap(), &[0]);
    }

    #[test]
    fn text_keys_group_by_coarse_key() {
        let keys = [
            Value::Str("a".into()),
            Value::Int(1),
            Value::Str("b".into()),
            Value::Int(2),
            Value::Str("a".into()),
            Value::Int(1),
        ];
        let table = HashMatch::from_keys(&keys, 2, false);
        let probe = [Value::Str("a".into()), Value::BigInt(1)];
        assert_eq!(table.lookup(&probe).unwrap(), &[0, 2]);
    }
}
