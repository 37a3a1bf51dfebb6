//! The keys an unordered statistics build keeps for one object until it sorts them
//! ([`Kept`]): back to back in one buffer, where a vector of its own per key and a copy of
//! each row's leading value took some 70 bytes a row for an INT's 5-byte key. Builds run
//! inside queries, under a busy workload several at a time on different threads, and the
//! allocator keeps each thread's freed memory for a few seconds: their peak adds to the
//! server's.

use crate::types::{decode_key_columns, key_decodable, SqlType, Value};

/// The keys kept of the rows sampled, in the order they came.
pub(super) struct Kept {
    /// The keys, back to back.
    bytes: Vec<u8>,
    /// Per row, where its key starts and ends in `bytes`. Keys are at most 900 bytes and
    /// at most `MAX_KEPT` (500,000) are live, so with `bytes` compacted past twice its live
    /// bytes every offset fits in 32 bits.
    spans: Vec<(u32, u32)>,
    /// Per row, its leading column's value, kept only where the key cannot be read back
    /// into it (a string's key is its collation's sort key); None otherwise.
    leads: Option<Vec<Value>>,
    /// Bytes of `bytes` that replaced keys left and no span covers.
    garbage: usize,
}

impl Kept {
    /// Nothing kept yet, of keys whose leading column is of type `lead`.
    pub(super) fn new(lead: SqlType) -> Kept {
        let leads = (!key_decodable(lead)).then(Vec::new);
        Kept { bytes: Vec::new(), spans: Vec::new(), leads, garbage: 0 }
    }

    pub(super) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Keeps `key`, whose leading column's value is `lead`.
    pub(super) fn push(&mut self, key: &[u8], lead: &Value) {
        let span = self.append(key);
        self.spans.push(span);
        if let Some(leads) = &mut self.leads {
            leads.push(lead.clone());
        }
    }

    /// Keeps `key` in place of row `slot`'s (a reservoir's replacement).
    pub(super) fn replace(&mut self, slot: usize, key: &[u8], lead: &Value) {
        let (start, end) = self.spans[slot];
        if (end - start) as usize == key.len() {
            self.bytes[start as usize..end as usize].copy_from_slice(key);
        } else {
            self.garbage += (end - start) as usize;
            self.spans[slot] = self.append(key);
            if self.garbage > self.bytes.len() / 2 {
                self.compact();
            }
        }
        if let Some(leads) = &mut self.leads {
            leads[slot] = lead.clone();
        }
    }

    fn append(&mut self, key: &[u8]) -> (u32, u32) {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(key);
        (start, self.bytes.len() as u32)
    }

    /// Copies the live keys to a new buffer, in row order.
    fn compact(&mut self) {
        let mut bytes = Vec::with_capacity(self.bytes.len() - self.garbage);
        for span in &mut self.spans {
            let start = bytes.len() as u32;
            bytes.extend_from_slice(&self.bytes[span.0 as usize..span.1 as usize]);
            *span = (start, bytes.len() as u32);
        }
        self.bytes = bytes;
        self.garbage = 0;
    }

    /// Row `i`'s key.
    pub(super) fn key(&self, i: usize) -> &[u8] {
        let (start, end) = self.spans[i];
        &self.bytes[start as usize..end as usize]
    }

    /// The rows in key order, equal keys in the order they came (so a build is the same
    /// from the same rows).
    pub(super) fn sorted(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.spans.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| {
            self.key(a as usize).cmp(self.key(b as usize)).then(a.cmp(&b))
        });
        order
    }

    /// Row `i`'s leading value, given the key bytes of its leading column (`lead_key`,
    /// marker included) and that column's type; None if the key cannot be read back.
    pub(super) fn lead(&self, i: usize, ty: SqlType, lead_key: &[u8]) -> Option<Value> {
        match &self.leads {
            Some(leads) => Some(leads[i].clone()),
            None => decode_key_columns(&[ty], &[true], lead_key)?.pop(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{encode_key_columns, Len};

    fn key(ty: SqlType, v: &Value) -> Vec<u8> {
        let mut key = Vec::new();
        encode_key_columns([(ty, v)], &mut key).unwrap_or_else(|e| panic!("{e}"));
        key
    }

    /// Keys come back sorted, equal ones in the order they came, with their leading values
    /// read back from the keys; replacements of other lengths leave the live keys intact
    /// through compaction.
    #[test]
    fn kept_keys_sort_and_survive_replacement() {
        let ty = SqlType::VarBinary(Len::N(20));
        let mut kept = Kept::new(ty);
        let values: Vec<Value> =
            [3u8, 1, 2, 1].iter().map(|&n| Value::Binary(vec![n; usize::from(n)])).collect();
        for v in &values {
            kept.push(&key(ty, v), v);
        }
        let order: Vec<u32> = kept.sorted();
        assert_eq!(order, vec![1, 3, 2, 0]);
        for _ in 0..10 {
            // Longer, then shorter: each leaves garbage, and compaction follows.
            let long = Value::Binary(vec![9; 12]);
            kept.replace(2, &key(ty, &long), &long);
            let short = Value::Binary(vec![0; 1]);
            kept.replace(2, &key(ty, &short), &short);
        }
        assert!(
            kept.bytes.len() <= 2 * kept.spans.iter().map(|s| (s.1 - s.0) as usize).sum::<usize>()
        );
        let order = kept.sorted();
        assert_eq!(order, vec![2, 1, 3, 0]);
        let leads: Vec<Value> = order
            .iter()
            .map(|&i| {
                let k = kept.key(i as usize).to_vec();
                kept.lead(i as usize, ty, &k).unwrap_or(Value::Null)
            })
            .collect();
        assert_eq!(
            leads,
            vec![
                Value::Binary(vec![0]),
                Value::Binary(vec![1]),
                Value::Binary(vec![1]),
                Value::Binary(vec![3; 3])
            ]
        );
    }
}
