//! The on-disk form of a statistics object (`docs/format/statistics.md`): its catalog keys
//! and the bytes of its record.

use crate::catalog::{Reader, Writer};
use crate::error::EngineError;
use crate::types::{decode_row, encode_key, encode_row, SqlType, Value};

use super::{Histogram, Sampling, StatisticsDef, Step};

/// The first four bytes of every statistics entry's catalog key: the object id
/// `0xFFFFFFFE`, which no object has, so statistics sort after every object and before the
/// extended properties (`FF FF FF FF`).
pub const STATISTICS_KEY_PREFIX: [u8; 4] = [0xFF, 0xFF, 0xFF, 0xFE];

/// The most bytes of an encoded statistics object one catalog entry holds (a tree value is
/// at most 4,096 bytes).
pub const STATISTICS_CHUNK: usize = 4000;

/// The format version written first in every record.
const VERSION: u8 = 1;

/// Flag bits of a record.
const AUTO_CREATED: u8 = 1;
const USER_CREATED: u8 = 2;
const NO_RECOMPUTE: u8 = 4;

/// The catalog key of chunk `chunk` of statistics `id` of table `table`: the prefix, then
/// the table id, the statistics id and the chunk number, all big-endian so that one table's
/// statistics, and one statistics' chunks, are adjacent and in order. Table 0 and id 0 name
/// the database's statistics options ([`OPTIONS_KEY`]).
pub fn statistics_key(table: u32, id: u32, chunk: u16) -> Vec<u8> {
    let mut key = Vec::with_capacity(14);
    key.extend_from_slice(&STATISTICS_KEY_PREFIX);
    key.extend_from_slice(&table.to_be_bytes());
    key.extend_from_slice(&id.to_be_bytes());
    key.extend_from_slice(&chunk.to_be_bytes());
    key
}

/// The key of the database's statistics options (`AUTO_CREATE_STATISTICS`,
/// `AUTO_UPDATE_STATISTICS`): one byte, bit 0 set when auto-create is OFF, bit 1 when
/// auto-update is OFF. Without the entry both are ON, SQL Server's default.
pub fn options_key() -> Vec<u8> {
    statistics_key(0, 0, 0)
}

/// Whether a catalog key is a statistics entry's (or the options').
pub fn is_statistics_key(key: &[u8]) -> bool {
    key.len() == 14 && key.starts_with(&STATISTICS_KEY_PREFIX)
}

/// The (table, id) a statistics key names.
pub fn statistics_key_ids(key: &[u8]) -> Option<(u32, u32)> {
    let table = u32::from_be_bytes(key.get(4..8)?.try_into().ok()?);
    let id = u32::from_be_bytes(key.get(8..12)?.try_into().ok()?);
    Some((table, id))
}

impl StatisticsDef {
    /// The record: what [`StatisticsDef::decode`] reads back.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(256));
        w.u8(VERSION);
        w.u32(self.table);
        w.u64(self.table_created);
        w.u32(self.id);
        w.str(&self.name);
        w.u16(self.columns.len() as u16);
        for &c in &self.columns {
            w.u16(c);
        }
        let mut flags = 0;
        if self.auto_created {
            flags |= AUTO_CREATED;
        }
        if self.user_created {
            flags |= USER_CREATED;
        }
        if self.no_recompute {
            flags |= NO_RECOMPUTE;
        }
        w.u8(flags);
        match self.sampling {
            Sampling::Default => w.u8(0),
            Sampling::FullScan => w.u8(1),
            Sampling::Percent(p) => {
                w.u8(2);
                w.f64(p);
            }
            Sampling::Rows(n) => {
                w.u8(3);
                w.u64(n);
            }
        }
        let Some(h) = &self.histogram else {
            w.u8(0);
            return w.0;
        };
        w.u8(1);
        w.u64(h.updated_micros);
        w.u64(h.rows);
        w.u64(h.rows_sampled);
        w.0.extend_from_slice(&h.key_type.encode());
        w.u16(h.density.len() as u16);
        for (d, len) in h.density.iter().zip(&h.avg_length) {
            w.f64(*d);
            w.f64(*len);
        }
        w.u16(h.steps.len() as u16);
        for s in &h.steps {
            let mut row = Vec::new();
            // A step's value was read from a column of `key_type`, so it encodes; should it
            // not, the step is written as NULL rather than lose the record.
            if encode_row(&[h.key_type], std::slice::from_ref(&s.value), &mut row).is_err() {
                row.clear();
                let _ = encode_row(&[h.key_type], &[Value::Null], &mut row);
            }
            w.u32(row.len() as u32);
            w.0.extend_from_slice(&row);
            w.f64(s.range_rows);
            w.f64(s.eq_rows);
            w.f64(s.distinct_range_rows);
        }
        w.0
    }

    /// A record written by [`StatisticsDef::encode`], its chunks joined.
    pub fn decode(b: &[u8]) -> Result<StatisticsDef, EngineError> {
        let mut r = Reader(b);
        if r.u8()? != VERSION {
            return Err(corrupt());
        }
        let table = r.u32()?;
        let table_created = r.u64()?;
        let id = r.u32()?;
        let name = r.str()?;
        let columns = (0..r.u16()?).map(|_| r.u16()).collect::<Result<Vec<_>, _>>()?;
        let flags = r.u8()?;
        let sampling = match r.u8()? {
            0 => Sampling::Default,
            1 => Sampling::FullScan,
            2 => Sampling::Percent(r.f64()?),
            3 => Sampling::Rows(r.u64()?),
            _ => return Err(corrupt()),
        };
        let histogram = match r.u8()? {
            0 => None,
            _ => {
                let updated_micros = r.u64()?;
                let rows = r.u64()?;
                let rows_sampled = r.u64()?;
                let key_type = SqlType::decode(r.array()?).ok_or_else(corrupt)?;
                let prefixes = r.u16()?;
                let mut density = Vec::with_capacity(usize::from(prefixes));
                let mut avg_length = Vec::with_capacity(usize::from(prefixes));
                for _ in 0..prefixes {
                    density.push(r.f64()?);
                    avg_length.push(r.f64()?);
                }
                let count = r.u16()?;
                let mut steps = Vec::with_capacity(usize::from(count));
                for _ in 0..count {
                    let len = r.u32()? as usize;
                    let row = r.take(len)?;
                    let value = decode_row(&[key_type], row)
                        .ok()
                        .and_then(|mut v| v.pop())
                        .ok_or_else(corrupt)?;
                    let key = step_key(key_type, &value);
                    steps.push(Step {
                        value,
                        key,
                        range_rows: r.f64()?,
                        eq_rows: r.f64()?,
                        distinct_range_rows: r.f64()?,
                    });
                }
                Some(Histogram {
                    updated_micros,
                    rows,
                    rows_sampled,
                    key_type,
                    density,
                    avg_length,
                    steps,
                })
            }
        };
        Ok(StatisticsDef {
            table,
            table_created,
            id,
            name,
            columns,
            auto_created: flags & AUTO_CREATED != 0,
            user_created: flags & USER_CREATED != 0,
            no_recompute: flags & NO_RECOMPUTE != 0,
            sampling,
            histogram: histogram.map(std::sync::Arc::new),
        })
    }
}

/// The memcomparable key of a step's value (`types::key`), which estimates compare probes
/// with. Empty if the value does not encode (it then sorts first, like NULL).
pub(crate) fn step_key(ty: SqlType, value: &Value) -> Vec<u8> {
    let mut key = Vec::new();
    if encode_key(&[ty], std::slice::from_ref(value), &mut key).is_err() {
        key.clear();
    }
    key
}

fn corrupt() -> EngineError {
    EngineError::Corrupt("malformed statistics record in the catalog".into())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn sample() -> StatisticsDef {
        let step = |v: Value, range: f64, eq: f64, distinct: f64| Step {
            key: step_key(SqlType::Int, &v),
            value: v,
            range_rows: range,
            eq_rows: eq,
            distinct_range_rows: distinct,
        };
        StatisticsDef {
            table: 1000,
            table_created: 5,
            id: 3,
            name: "s".into(),
            columns: vec![0, 2],
            auto_created: false,
            user_created: true,
            no_recompute: true,
            sampling: Sampling::Percent(12.5),
            histogram: Some(Arc::new(Histogram {
                updated_micros: 77,
                rows: 10,
                rows_sampled: 10,
                key_type: SqlType::Int,
                density: vec![0.25, 0.1],
                avg_length: vec![5.0, 9.0],
                steps: vec![
                    step(Value::Null, 0.0, 2.0, 0.0),
                    step(Value::Int(1), 0.0, 3.0, 0.0),
                    step(Value::Int(9), 4.0, 1.0, 2.0),
                ],
            })),
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let s = sample();
        let back = StatisticsDef::decode(&s.encode()).unwrap();
        assert_eq!(back.encode(), s.encode());
        let h = back.histogram.unwrap();
        assert_eq!(h.steps.len(), 3);
        assert_eq!(h.steps[2].value, Value::Int(9));
        assert_eq!(h.steps[2].key, step_key(SqlType::Int, &Value::Int(9)));
        assert!(h.steps[0].key < h.steps[1].key && h.steps[1].key < h.steps[2].key);
        assert_eq!(
            (back.sampling, back.no_recompute, back.columns),
            (Sampling::Percent(12.5), true, vec![0, 2])
        );
    }

    #[test]
    fn a_truncated_record_is_corrupt_not_a_panic() {
        let bytes = sample().encode();
        for len in 0..bytes.len() {
            assert!(StatisticsDef::decode(&bytes[..len]).is_err(), "{len}");
        }
    }

    #[test]
    fn keys_sort_after_objects_and_before_properties() {
        let key = statistics_key(1000, 3, 1);
        assert!(is_statistics_key(&key));
        assert_eq!(statistics_key_ids(&key), Some((1000, 3)));
        assert!(key.as_slice() > crate::catalog::object_key(0xFFFF_FFFD).as_slice());
        assert!(key.as_slice() < crate::catalog::PROPERTY_KEY_PREFIX.as_slice());
        assert!(!crate::catalog::is_property_key(&key));
        assert!(statistics_key(1000, 3, 0) < statistics_key(1000, 3, 1));
        assert!(statistics_key(1000, 3, 9) < statistics_key(1000, 4, 0));
    }
}
