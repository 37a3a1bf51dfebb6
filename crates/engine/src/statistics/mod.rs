//! Statistics objects: SQL Server's per-index and per-column distribution statistics (a
//! header, a density vector and a histogram of up to [`MAX_STEPS`] steps on the leading
//! column), which the planner estimates row counts with.
//!
//! A statistics object lives in the catalog tree under keys of its own (`format.rs`,
//! `docs/format/statistics.md`), written in the transaction that creates, updates or drops
//! it, so it survives restarts and crash recovery as the catalog does; dropping its table
//! or index deletes its entries in the same transaction. In memory every database keeps its
//! statistics by (table, statistics id), rebuilt from the catalog tree whenever the catalog
//! is reloaded (open, a rollback of DDL).
//!
//! An index's statistics have the index's id and name; they exist as soon as the index does
//! (listed by `sys.stats`) and have an entry once built. Statistics made by `CREATE
//! STATISTICS` take ids from the same space as the table's indexes, so neither reuses the
//! other's.
//!
//! # Modification counters
//!
//! Every row inserted, updated or deleted counts one modification of its table, in memory
//! only ([`Database::count_modification`]). A statistics object's modification counter is
//! the table's count since the object was built in this process, or, for one loaded from
//! disk, since the database opened: the SQL layer adds the difference between the table's
//! rows now and the rows the object saw, which bounds from below what a restart forgot.

mod build;
mod format;
mod kept;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

pub use build::MAX_KEPT;
pub use format::{
    is_statistics_key, options_key, statistics_key, statistics_key_ids, STATISTICS_CHUNK,
    STATISTICS_KEY_PREFIX,
};

use crate::catalog::{Catalog, Object};
use crate::database::{Database, CATALOG_ROOT};
use crate::error::EngineError;
use crate::lock::{LockError, LockMode, Resource};
use crate::txn::Transaction;
use crate::types::{SqlType, Value};

/// The most steps a histogram has, as in SQL Server.
pub const MAX_STEPS: usize = 200;

/// How much of a table a build reads (`WITH FULLSCAN`, `SAMPLE n PERCENT | ROWS`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampling {
    /// No option given: the engine's default.
    Default,
    FullScan,
    Percent(f64),
    Rows(u64),
}

/// One histogram step: the rows equal to its upper bound and those between it and the
/// previous step's bound.
#[derive(Debug, Clone)]
pub struct Step {
    /// `RANGE_HI_KEY`.
    pub value: Value,
    /// Its memcomparable key (`types::key`), what probes are compared with.
    pub key: Vec<u8>,
    /// `RANGE_ROWS`: rows strictly between the previous step's bound and this one.
    pub range_rows: f64,
    /// `EQ_ROWS`: rows equal to the bound.
    pub eq_rows: f64,
    /// `DISTINCT_RANGE_ROWS`: distinct values among the range rows.
    pub distinct_range_rows: f64,
}

/// What a build of a statistics object found.
#[derive(Debug, Clone)]
pub struct Histogram {
    /// When it was built, microseconds since the Unix epoch.
    pub updated_micros: u64,
    /// The table's rows then.
    pub rows: u64,
    /// The rows the build looked at.
    pub rows_sampled: u64,
    /// The leading column's type when it was built.
    pub key_type: SqlType,
    /// `1 / distinct values` of each prefix of the columns.
    pub density: Vec<f64>,
    /// The average bytes of each prefix's key.
    pub avg_length: Vec<f64>,
    /// The steps, in key order (a NULL step first if the column has NULLs).
    pub steps: Vec<Step>,
}

/// A statistics object.
#[derive(Debug, Clone)]
pub struct StatisticsDef {
    pub table: u32,
    /// The table's creation time (`TableDef::created_micros`): an entry left by a table whose
    /// creation was rolled back is not taken for another table given the same id.
    pub table_created: u64,
    /// `stats_id`: the index id for an index's statistics.
    pub id: u32,
    /// The name CREATE STATISTICS gave (an index's statistics are named by the index).
    pub name: String,
    /// Column positions in the table, leading column first.
    pub columns: Vec<u16>,
    pub auto_created: bool,
    pub user_created: bool,
    /// `NORECOMPUTE`: never updated automatically.
    pub no_recompute: bool,
    /// How the last build sampled (`WITH RESAMPLE` reuses it).
    pub sampling: Sampling,
    /// None until it is first built.
    pub histogram: Option<Arc<Histogram>>,
}

/// A database's statistics in memory.
#[derive(Debug, Default)]
pub(crate) struct StatisticsState {
    objects: RwLock<BTreeMap<(u32, u32), Arc<StatisticsDef>>>,
    /// The options' byte ([`options_key`]).
    options: AtomicU8,
    /// Rows modified per table since the database opened.
    modifications: RwLock<HashMap<u32, AtomicU64>>,
    /// The table's modification count when each object was last built in this process.
    baselines: Mutex<HashMap<(u32, u32), u64>>,
}

/// Microseconds since the Unix epoch, now.
pub(crate) fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// The lock resource that serializes changes to one statistics object.
fn resource(db: &Database, table: u32, id: u32) -> Resource {
    let name = 0x8000_0000_0000_0000 | u64::from(table) << 24 | u64::from(id & 0xFF_FFFF);
    Resource::Other { db: db.id(), name }
}

impl Database {
    fn stats(&self) -> &StatisticsState {
        &self.statistics
    }

    /// The statistics objects of `table` that have entries, by id.
    pub fn statistics_of(&self, table: u32) -> Vec<Arc<StatisticsDef>> {
        let objects = self.stats().objects.read().unwrap_or_else(PoisonError::into_inner);
        objects.range((table, 0)..=(table, u32::MAX)).map(|(_, s)| Arc::clone(s)).collect()
    }

    /// Statistics `id` of `table`, if it has an entry.
    pub fn statistics_object(&self, table: u32, id: u32) -> Option<Arc<StatisticsDef>> {
        let objects = self.stats().objects.read().unwrap_or_else(PoisonError::into_inner);
        objects.get(&(table, id)).cloned()
    }

    /// `AUTO_CREATE_STATISTICS`: ON unless set OFF.
    pub fn auto_create_statistics(&self) -> bool {
        self.stats().options.load(Ordering::Relaxed) & 1 == 0
    }

    /// `AUTO_UPDATE_STATISTICS`: ON unless set OFF.
    pub fn auto_update_statistics(&self) -> bool {
        self.stats().options.load(Ordering::Relaxed) & 2 == 0
    }

    /// Counts `rows` modified rows of `table`.
    pub(crate) fn count_modification(&self, table: u32, rows: u64) {
        let state = self.stats();
        {
            let map = state.modifications.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(c) = map.get(&table) {
                c.fetch_add(rows, Ordering::Relaxed);
                return;
            }
        }
        let mut map = state.modifications.write().unwrap_or_else(PoisonError::into_inner);
        map.entry(table).or_default().fetch_add(rows, Ordering::Relaxed);
    }

    /// Rows of `table` modified since the database opened.
    pub fn modifications(&self, table: u32) -> u64 {
        let map = self.stats().modifications.read().unwrap_or_else(PoisonError::into_inner);
        map.get(&table).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Rows of the table modified since `s` was built (in this process; since the database
    /// opened for an object built before: see the module's documentation).
    pub fn modifications_since(&self, s: &StatisticsDef) -> u64 {
        let now = self.modifications(s.table);
        let baselines = self.stats().baselines.lock().unwrap_or_else(PoisonError::into_inner);
        now.saturating_sub(baselines.get(&(s.table, s.id)).copied().unwrap_or(0))
    }

    /// The id the next statistics object or index of `table` takes: above every index's
    /// and every statistics object's.
    pub fn next_statistics_id(&self, table: &crate::catalog::TableDef) -> u32 {
        let index = table.indexes.iter().map(|i| u32::from(i.id)).max().unwrap_or(1);
        let stats = self.statistics_of(table.id).iter().map(|s| s.id).max().unwrap_or(0);
        index.max(stats) + 1
    }

    /// Replaces the in-memory statistics with `entries` (decoded from the catalog tree),
    /// less those whose table no longer exists or is another table given the same id.
    pub(crate) fn load_statistics(
        &self,
        entries: Vec<StatisticsDef>,
        options: u8,
        catalog: &Catalog,
    ) {
        let mut map = BTreeMap::new();
        for s in entries {
            let current = match catalog.get(s.table).as_deref() {
                Some(Object::Table(t)) => t.created_micros == s.table_created,
                _ => false,
            };
            if current {
                map.insert((s.table, s.id), Arc::new(s));
            }
        }
        let state = self.stats();
        *state.objects.write().unwrap_or_else(PoisonError::into_inner) = map;
        state.options.store(options, Ordering::Relaxed);
    }
}

/// The statistics entries of a scan of the catalog tree, their chunks joined.
#[derive(Debug, Default)]
pub(crate) struct StatisticsEntries {
    /// The object being read: its (table, id) and bytes so far.
    current: Option<((u32, u32), Vec<u8>)>,
    done: Vec<StatisticsDef>,
    options: u8,
}

impl StatisticsEntries {
    /// One entry, in key order.
    pub(crate) fn push(&mut self, key: &[u8], value: &[u8]) -> Result<(), EngineError> {
        let ids = statistics_key_ids(key).unwrap_or_default();
        if ids == (0, 0) {
            self.options = value.first().copied().unwrap_or(0);
            return Ok(());
        }
        match &mut self.current {
            Some((at, bytes)) if *at == ids => bytes.extend_from_slice(value),
            _ => {
                if let Some((_, bytes)) = self.current.replace((ids, value.to_vec())) {
                    self.done.push(StatisticsDef::decode(&bytes)?);
                }
            }
        }
        Ok(())
    }

    /// The objects read, and the options' byte.
    pub(crate) fn finish(mut self) -> Result<(Vec<StatisticsDef>, u8), EngineError> {
        if let Some((_, bytes)) = self.current.take() {
            self.done.push(StatisticsDef::decode(&bytes)?);
        }
        Ok((self.done, self.options))
    }
}

impl Transaction {
    /// Takes the X lock that changes to statistics `id` of `table` hold, failing at once
    /// (a [`LockError`]) rather than wait: an automatic update skips an object someone else
    /// is changing.
    pub fn try_lock_statistics(
        &mut self,
        db: &Database,
        table: u32,
        id: u32,
    ) -> Result<(), LockError> {
        self.lock_within(&resource(db, table, id), LockMode::X, Some(Duration::ZERO)).map(|_| ())
    }

    /// Writes statistics object `def` (new or replacing its entry) in this transaction,
    /// under its X lock.
    pub fn put_statistics(
        &mut self,
        db: &Arc<Database>,
        def: StatisticsDef,
    ) -> Result<(), EngineError> {
        self.lock(&resource(db, def.table, def.id), LockMode::X)?;
        self.mark_ddl(db)?;
        self.delete_statistics_chunks(db, def.table, def.id)?;
        let bytes = def.encode();
        for (i, chunk) in bytes.chunks(STATISTICS_CHUNK).enumerate() {
            let key = statistics_key(def.table, def.id, i as u16);
            if !self.tree_insert(db, CATALOG_ROOT, &key, chunk)? {
                return Err(EngineError::Internal(format!(
                    "statistics '{}' stored twice",
                    def.name
                )));
            }
        }
        let state = db.stats();
        if def.histogram.is_some() {
            let count = db.modifications(def.table);
            let mut baselines = state.baselines.lock().unwrap_or_else(PoisonError::into_inner);
            baselines.insert((def.table, def.id), count);
        }
        let mut objects = state.objects.write().unwrap_or_else(PoisonError::into_inner);
        objects.insert((def.table, def.id), Arc::new(def));
        Ok(())
    }

    /// Deletes statistics `id` of `table`; false if it had no entry.
    pub fn drop_statistics(
        &mut self,
        db: &Arc<Database>,
        table: u32,
        id: u32,
    ) -> Result<bool, EngineError> {
        self.lock(&resource(db, table, id), LockMode::X)?;
        self.mark_ddl(db)?;
        let found = self.delete_statistics_chunks(db, table, id)?;
        db.stats().objects.write().unwrap_or_else(PoisonError::into_inner).remove(&(table, id));
        Ok(found)
    }

    /// Deletes every statistics object of `table` (DROP TABLE).
    pub(crate) fn drop_table_statistics(
        &mut self,
        db: &Arc<Database>,
        table: u32,
    ) -> Result<(), EngineError> {
        for s in db.statistics_of(table) {
            self.drop_statistics(db, table, s.id)?;
        }
        Ok(())
    }

    /// Sets `AUTO_CREATE_STATISTICS` and `AUTO_UPDATE_STATISTICS` for `db`, in this
    /// transaction.
    pub fn set_statistics_options(
        &mut self,
        db: &Arc<Database>,
        auto_create: bool,
        auto_update: bool,
    ) -> Result<(), EngineError> {
        self.mark_ddl(db)?;
        let byte = u8::from(!auto_create) | u8::from(!auto_update) << 1;
        let key = options_key();
        self.tree_delete(db, CATALOG_ROOT, &key)?;
        if byte != 0 && !self.tree_insert(db, CATALOG_ROOT, &key, &[byte])? {
            return Err(EngineError::Internal("statistics options stored twice".into()));
        }
        db.stats().options.store(byte, Ordering::Relaxed);
        Ok(())
    }

    /// Deletes the chunks of statistics `id` of `table`; whether there were any.
    fn delete_statistics_chunks(
        &mut self,
        db: &Arc<Database>,
        table: u32,
        id: u32,
    ) -> Result<bool, EngineError> {
        let mut chunk = 0u16;
        while self.tree_delete(db, CATALOG_ROOT, &statistics_key(table, id, chunk))?.is_some() {
            chunk += 1;
        }
        Ok(chunk > 0)
    }
}
