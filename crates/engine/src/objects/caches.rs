//! The value caches a database hands out from memory: identity values, row locators,
//! sequence values and row versions, each with its persisted high-water mark (the module docs
//! above). A value is handed out only while it is at or below a mark whose system commit
//! precedes, in the log, every row that uses it, so a crash leaves gaps of at most the cache and
//! never a duplicate; a clean shutdown persists the exact last values.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};

use walden_log::policy::{resolve, CommitOption, Override};
use walden_log::{Durability, Lsn};

use super::{SequenceCache, SystemCommit, IDENTITY_CACHE, ROWVERSION_SEQUENCE, ROWVERSION_START};
use crate::catalog::{IndexDef, Object, SequenceDef, TableDef};
use crate::database::Database;
use crate::error::EngineError;
use crate::types::{SqlType, Value};

impl Database {
    /// The next identity value of `table`.
    pub fn next_identity(&self, table: &TableDef) -> Result<i64, EngineError> {
        let Some((col, _, inc)) = table.identity_column() else {
            return Err(EngineError::Internal(format!("'{}' has no identity", table.name)));
        };
        let mut map = self.identity.lock().unwrap_or_else(PoisonError::into_inner);
        let (current, last, persisted) = self.identity_entry(&mut map, table);
        // A value the column cannot hold is error 8115 and is not handed out: the next insert
        // fails the same way, as in SQL Server (until DBCC CHECKIDENT, which Walden lacks).
        let ty = table.columns[col].ty;
        let next = last
            .checked_add(inc)
            .filter(|&next| identity_fits(ty, next))
            .ok_or_else(|| EngineError::IdentityOverflow(ty.name()))?;
        let beyond = if inc > 0 { next > persisted } else { next < persisted };
        if beyond {
            let high = next.saturating_add(inc.saturating_mul(IDENTITY_CACHE - 1));
            self.persist_identity_high(current.as_deref(), table, high)?;
            map.insert(table.id, (next, high));
        } else {
            map.insert(table.id, (next, persisted));
        }
        Ok(next)
    }

    /// `DBCC CHECKIDENT (table, RESEED, value)`: the last value handed out becomes `value`,
    /// so the next insert gets `value + increment`; if none was handed out since the table
    /// was created or truncated, the next insert gets `value` itself, as in SQL Server. The
    /// new mark is committed fully durably before the cache follows it. A value below rows
    /// already in the table lets later inserts collide with them, as SQL Server warns.
    pub fn reseed_identity(&self, table: &TableDef, value: i64) -> Result<(), EngineError> {
        let Some((col, seed, inc)) = table.identity_column() else {
            return Err(EngineError::Internal(format!("'{}' has no identity", table.name)));
        };
        if !identity_fits(table.columns[col].ty, value) {
            return Err(EngineError::IdentityOverflow(table.columns[col].ty.name()));
        }
        let mut map = self.identity.lock().unwrap_or_else(PoisonError::into_inner);
        let (current, last, _) = self.identity_entry(&mut map, table);
        let last = if last == seed - inc { value - inc } else { value };
        let Some(Object::Table(mut def)) = current.as_deref().cloned() else {
            return Err(EngineError::NoSuchObject(table.name.clone()));
        };
        Arc::make_mut(&mut def).identity_high = last;
        self.system_update(Object::Table(def), Durability::Full)?;
        map.insert(table.id, (last, last));
        Ok(())
    }

    /// An explicit value `v` inserted into `table`'s identity column (`SET IDENTITY_INSERT`
    /// ON): past the last value handed out, it becomes the last one, as in SQL Server, so
    /// that generated values continue above it; past the persisted mark, it is persisted as
    /// the mark first, before the row's own log records, so that a crash that keeps the row
    /// keeps the mark (the log order, as for a new cache range).
    pub(crate) fn note_explicit_identity(
        &self,
        table: &TableDef,
        v: i64,
    ) -> Result<(), EngineError> {
        let Some((_, _, inc)) = table.identity_column() else {
            return Ok(());
        };
        let mut map = self.identity.lock().unwrap_or_else(PoisonError::into_inner);
        let (current, last, persisted) = self.identity_entry(&mut map, table);
        let past = |mark: i64| if inc > 0 { v > mark } else { v < mark };
        if !past(last) {
            return Ok(());
        }
        if past(persisted) {
            self.persist_identity_high(current.as_deref(), table, v)?;
            map.insert(table.id, (v, v));
        } else {
            map.insert(table.id, (v, persisted));
        }
        Ok(())
    }

    /// `table`'s catalog row and its identity cache entry (last value handed out, persisted
    /// mark), the entry made from the row's mark the first time.
    fn identity_entry(
        &self,
        map: &mut HashMap<u32, (i64, i64)>,
        table: &TableDef,
    ) -> (Option<Arc<Object>>, i64, i64) {
        let current = self.catalog.read().unwrap_or_else(PoisonError::into_inner).get(table.id);
        let high = match current.as_deref() {
            Some(Object::Table(t)) => t.identity_high,
            _ => table.identity_high,
        };
        let (last, persisted) = *map.entry(table.id).or_insert((high, high));
        (current, last, persisted)
    }

    /// Commits `high` as `table`'s identity high-water mark (the catalog row `current`).
    fn persist_identity_high(
        &self,
        current: Option<&Object>,
        table: &TableDef,
        high: i64,
    ) -> Result<(), EngineError> {
        let Some(Object::Table(mut def)) = current.cloned() else {
            return Err(EngineError::NoSuchObject(table.name.clone()));
        };
        Arc::make_mut(&mut def).identity_high = high;
        // The mark's commit needs no flush: the log order protects it (module docs).
        let durability = if self.is_temp() {
            Durability::Delayed
        } else {
            resolve(self.delayed_durability(), CommitOption::Unspecified, Override::None)
        };
        self.system_update(Object::Table(def), durability)
    }

    /// The last identity value handed out for a table (IDENT_CURRENT).
    pub fn identity_current(&self, table: &TableDef) -> Option<i64> {
        let (_, seed, inc) = table.identity_column()?;
        let map = self.identity.lock().unwrap_or_else(PoisonError::into_inner);
        let last = map.get(&table.id).map_or(table.identity_high, |s| s.0);
        (last != seed - inc).then_some(last)
    }

    /// The next row locator of a heap, or uniquifier of a non-unique clustered index: one
    /// counter per table, started above the largest one in the tree the first time it is
    /// needed. A heap's tree is ordered by locator, so its last key holds the largest; a
    /// non-unique clustered tree is ordered by key first, so every key's trailing 8 bytes
    /// are read once.
    pub(crate) fn next_locator(&self, table: u32, primary: &IndexDef) -> Result<u64, EngineError> {
        let mut map = self.locators.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(next) = map.get_mut(&table) {
            *next += 1;
            return Ok(*next - 1);
        }
        let tree = self.space().tree(primary.root);
        let trailing = |k: &[u8]| {
            let mut a = [0; 8];
            a.copy_from_slice(&k[k.len().saturating_sub(8)..]);
            u64::from_be_bytes(a)
        };
        let largest = if primary.is_heap() {
            tree.last_key()?.filter(|k| k.len() == 8).map(|k| trailing(&k))
        } else {
            let mut cursor = tree.scan();
            let mut largest = None;
            while let Some((key, _)) = cursor.next_entry()? {
                if key.len() >= 8 {
                    largest = largest.max(Some(trailing(&key)));
                }
            }
            largest
        };
        let next = largest.map_or(1, |l| l + 1);
        map.insert(table, next + 1);
        Ok(next)
    }

    /// NEXT VALUE FOR the sequence with id `seq`.
    pub fn next_sequence_value(&self, seq: u32) -> Result<Value, EngineError> {
        let mut map = self.sequences.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(Object::Sequence(def)) = self
            .catalog
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(seq)
            .as_deref()
            .cloned()
        else {
            return Err(EngineError::NoSuchObject(format!("sequence {seq}")));
        };
        let cache = map.entry(seq).or_insert_with(|| {
            let next = match def.high_water {
                None => def.start,
                Some(h) => h + def.increment,
            };
            SequenceCache { next, last: next - def.increment, current: def.high_water, ahead: None }
        });
        let mut value = cache.next;
        let up = def.increment > 0;
        // Whether `a` lies beyond `b` in the sequence's direction.
        let beyond = |a: i128, b: i128| if up { a > b } else { a < b };
        let clamp = |v: i128| if up { v.min(def.max) } else { v.max(def.min) };
        if (up && value > def.max) || (!up && value < def.min) {
            if !def.cycle {
                return Err(EngineError::SequenceExhausted(def.name.clone()));
            }
            value = if up { def.min } else { def.max };
            cache.last = value - def.increment;
            // A mark persisted ahead belongs to the cycle that just ended.
            cache.ahead = None;
        }
        let n = i128::from(def.cache.unwrap_or(1).max(1));
        if beyond(value, cache.last) {
            match cache.ahead.take() {
                Some((last, lsn)) if !beyond(value, last) => {
                    self.harden_commit(lsn)?;
                    cache.last = last;
                }
                _ => {
                    let last = clamp(value + def.increment * (n - 1));
                    // W7: a high-water mark is always fully durable in a user database.
                    let durability =
                        if self.is_temp() { Durability::Delayed } else { Durability::Full };
                    self.persist_sequence_mark(&def, last, SystemCommit::Wait(durability))?;
                    cache.last = last;
                }
            }
        }
        cache.next = value + def.increment;
        cache.current = Some(value);
        let left = (cache.last - value) / def.increment;
        if cache.ahead.is_none() && n > 1 && left < n / 4 {
            let last = clamp(value + def.increment * n);
            if beyond(last, cache.last) {
                let lsn = self.persist_sequence_mark(&def, last, SystemCommit::Unwaited)?;
                cache.ahead = Some((last, lsn));
            }
        }
        Ok(integer_value(def.ty, value))
    }

    /// Commits `last` as the high-water mark of sequence `def`; returns the commit's LSN.
    fn persist_sequence_mark(
        &self,
        def: &SequenceDef,
        last: i128,
        commit: SystemCommit,
    ) -> Result<Lsn, EngineError> {
        let mut persisted = def.clone();
        persisted.high_water = Some(last);
        self.system_update_with(Object::Sequence(persisted), commit)
    }

    /// The last value a sequence handed out (`sys.sequences.current_value`).
    pub fn sequence_current(&self, def: &SequenceDef) -> Option<i128> {
        let map = self.sequences.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(&def.id).map_or(def.high_water, |c| c.current)
    }

    /// The next row version of the database (`@@DBTS` + 1), for a `rowversion` column. The
    /// values come from the database's internal sequence [`ROWVERSION_SEQUENCE`], so they are
    /// cached, and a crash never hands one out twice (the sequence's high-water rule).
    pub fn next_rowversion(&self) -> Result<i64, EngineError> {
        match self.next_sequence_value(ROWVERSION_SEQUENCE)? {
            Value::BigInt(v) => Ok(v),
            other => Err(EngineError::Internal(format!("row version {other:?}"))),
        }
    }

    /// `@@DBTS`: the last row version handed out in the database (before the first, the
    /// sequence's start less one).
    pub fn rowversion_current(&self) -> i64 {
        let def = match self.object_by_id(ROWVERSION_SEQUENCE).as_deref() {
            Some(Object::Sequence(def)) => def.clone(),
            _ => return ROWVERSION_START - 1,
        };
        self.sequence_current(&def)
            .and_then(|v| i64::try_from(v).ok())
            .unwrap_or(ROWVERSION_START - 1)
    }

    /// At a clean shutdown: persists the exact last identity and sequence values, so that
    /// they continue without a gap.
    pub(crate) fn persist_caches(&self) -> Result<(), EngineError> {
        let catalog = self.catalog();
        let identity: Vec<(u32, (i64, i64))> = self
            .identity
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect();
        for (id, (last, persisted)) in identity {
            if last == persisted {
                continue;
            }
            if let Some(Object::Table(mut def)) = catalog.get(id).as_deref().cloned() {
                Arc::make_mut(&mut def).identity_high = last;
                self.system_update(Object::Table(def), Durability::Full)?;
            }
        }
        let sequences: Vec<(u32, SequenceCache)> = self
            .sequences
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect();
        for (id, cache) in sequences {
            if let (Some(Object::Sequence(mut def)), Some(current)) =
                (catalog.get(id).as_deref().cloned(), cache.current)
            {
                if def.high_water != Some(current) {
                    def.high_water = Some(current);
                    self.system_update(Object::Sequence(def), Durability::Full)?;
                }
            }
        }
        Ok(())
    }
}

/// An integer as a value of `ty`, a sequence's or an identity column's type: an integer type
/// or DECIMAL(p,s). `v` is not range-checked here: an integer type keeps its low bits.
/// Whether an identity column of type `ty` can hold `v`.
pub(crate) fn identity_fits(ty: SqlType, v: i64) -> bool {
    match ty {
        SqlType::TinyInt => u8::try_from(v).is_ok(),
        SqlType::SmallInt => i16::try_from(v).is_ok(),
        SqlType::Int => i32::try_from(v).is_ok(),
        SqlType::Decimal { precision, scale } => {
            let digits = u32::from(precision.saturating_sub(scale));
            10i128.checked_pow(digits).is_none_or(|limit| i128::from(v).abs() < limit)
        }
        _ => true,
    }
}

/// The integer an identity column holds (an integer type or a DECIMAL of scale 0).
pub fn identity_integer(v: &Value) -> Option<i64> {
    match v {
        Value::TinyInt(x) => Some(i64::from(*x)),
        Value::SmallInt(x) => Some(i64::from(*x)),
        Value::Int(x) => Some(i64::from(*x)),
        Value::BigInt(x) => Some(*x),
        Value::Decimal(d) if d.scale() == 0 => i64::try_from(d.mantissa()).ok(),
        _ => None,
    }
}

pub(crate) fn integer_value(ty: SqlType, v: i128) -> Value {
    match ty {
        SqlType::TinyInt => Value::TinyInt(v as u8),
        SqlType::SmallInt => Value::SmallInt(v as i16),
        SqlType::Int => Value::Int(v as i32),
        SqlType::Decimal { scale, .. } => {
            crate::types::Decimal::new(v * 10i128.pow(u32::from(scale)), scale)
                .map_or(Value::BigInt(v as i64), Value::Decimal)
        }
        _ => Value::BigInt(v as i64),
    }
}
