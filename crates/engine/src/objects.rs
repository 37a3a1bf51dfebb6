//! DDL, and the caches of identity values, row locators and sequence values.
//!
//! # Identity (SQL Server's identity cache)
//!
//! Each table with an identity column has a persisted high-water mark in its catalog entry: no
//! value above it was handed out. Values are handed out from memory; when the next value would
//! pass the mark, the mark moves [`IDENTITY_CACHE`] values ahead in a system transaction that
//! commits with the database's normal durability (no forced flush). That system commit
//! precedes, in the log, every row that uses a value of the new range, so after a crash any
//! surviving row's value is at or below a surviving mark, and the table continues above the
//! mark: a gap of at most the cache, never a duplicate. A clean shutdown persists the exact
//! last value, so it continues without a gap. An explicit value (`SET IDENTITY_INSERT ON`)
//! past the last one handed out becomes the last one, as in SQL Server; past the mark, it is
//! persisted as the mark first, by the same kind of system commit and so with the same
//! argument.
//!
//! # Sequences (CACHE n / NO CACHE)
//!
//! The same scheme with SQL Server's documented rules: allocating a new cache range persists
//! its last value as the high-water mark, and in a user database that commit is always fully
//! durable, even when the database is `FORCED` (rule W7); tempdb never waits. `NO CACHE`
//! persists every value. After a crash a sequence continues after its persisted mark (a gap of
//! at most the cache size); after a clean shutdown, right after the last value handed out.
//!
//! A cached sequence persists its next range ahead of need, so that no session waits for the
//! forced flush under the sequence's lock: when less than a quarter of the range is left, the
//! mark moves to the last value handed out plus the cache size (so a crash still skips at most
//! the cache size) in a fully durable commit whose flush the log starts at once but nobody
//! waits for ([`walden_log::LogManager::append_commit_unwaited`]). A value above the old mark
//! is handed out only once that commit is hardened (usually long since, by then), so a value
//! a client saw is never handed out again after a crash. Under fully durable commits the
//! forced flush usually rides with a committer's.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use walden_log::policy::{resolve, CommitOption, Override};
use walden_log::{Durability, Lsn};

use crate::catalog::{
    object_key, Catalog, ExtendedProperty, IndexDef, Object, PropertiesDef, SequenceDef, TableDef,
    PROPERTIES_ID,
};
use crate::database::{Database, LogMode, RowKind, UndoLog, CATALOG_ROOT};
use crate::error::EngineError;
use crate::lock::{LockMode, Resource};
use crate::table::{duplicate_key, index_key};
use crate::txn::Transaction;
use crate::types::{SqlType, Value};

/// How a system transaction commits.
#[derive(Debug, Clone, Copy)]
enum SystemCommit {
    /// With this durability, waiting as it says.
    Wait(Durability),
    /// Fully durable, its flush started but not waited for (a sequence's mark ahead of need).
    Unwaited,
}

/// Identity values a table hands out per persisted high-water mark.
pub const IDENTITY_CACHE: i64 = 1000;

/// A sequence's in-memory cache.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SequenceCache {
    /// The next value to hand out.
    next: i128,
    /// The last value of the cached range (persisted as the high-water mark, and hardened);
    /// the cache is empty when `next` is past it.
    last: i128,
    /// The last value handed out.
    current: Option<i128>,
    /// The next range's mark, persisted ahead of need by a commit at this LSN that may not
    /// be hardened yet (the module docs).
    ahead: Option<(i128, Lsn)>,
}

impl Database {
    /// Reads the catalog tree into the in-memory catalog.
    pub(crate) fn reload_catalog(&self) -> Result<(), EngineError> {
        let tree = self.space().tree(CATALOG_ROOT);
        let mut objects = Vec::new();
        let mut properties = Vec::new();
        // The chunks of the property being read: its key without the chunk number, and bytes.
        let mut chunks: Option<(Vec<u8>, Vec<u8>)> = None;
        // The object being read, whose encoding may go on in the entries that follow: its id
        // and its bytes so far.
        let mut object: Option<(u32, Vec<u8>)> = None;
        let mut statistics = crate::statistics::StatisticsEntries::default();
        for entry in tree.scan() {
            let (key, value) = entry?;
            if crate::statistics::is_statistics_key(&key) {
                statistics.push(&key, &value)?;
                continue;
            }
            if !crate::catalog::is_property_key(&key) {
                match crate::catalog::object_continued(&key) {
                    Some(id) => match object.as_mut() {
                        Some((first, bytes)) if *first == id => bytes.extend_from_slice(&value),
                        _ => {
                            return Err(EngineError::Corrupt(format!(
                                "a catalog chunk of object {id} without its first entry"
                            )))
                        }
                    },
                    None => {
                        let id = u32::from_be_bytes(key.as_slice().try_into().map_err(|_| {
                            EngineError::Corrupt(format!("a catalog key of {} bytes", key.len()))
                        })?);
                        if let Some((_, bytes)) = object.replace((id, value.to_vec())) {
                            objects.push(Object::decode(&bytes)?);
                        }
                    }
                }
                continue;
            }
            let property = &key[..key.len().saturating_sub(2)];
            match chunks.as_mut() {
                Some((k, bytes)) if k.as_slice() == property => bytes.extend_from_slice(&value),
                _ => {
                    if let Some((_, bytes)) = chunks.replace((property.to_vec(), value.to_vec())) {
                        properties.push(crate::catalog::decode_property(&bytes)?);
                    }
                }
            }
        }
        if let Some((_, bytes)) = chunks {
            properties.push(crate::catalog::decode_property(&bytes)?);
        }
        if let Some((_, bytes)) = object {
            objects.push(Object::decode(&bytes)?);
        }
        if !properties.is_empty() {
            // A database written before per-property entries may have its old list too.
            match objects.iter_mut().find(|o| o.id() == PROPERTIES_ID) {
                Some(Object::Properties(p)) => p.entries.extend(properties),
                _ => objects.push(Object::Properties(PropertiesDef { entries: properties })),
            }
        }
        if let Some(Object::Properties(p)) = objects.iter_mut().find(|o| o.id() == PROPERTIES_ID) {
            p.entries.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        }
        let catalog = Catalog::from_objects(objects);
        // Caches of objects that no longer exist (a rolled-back CREATE) go with them.
        let mut identity = self.identity.lock().unwrap_or_else(PoisonError::into_inner);
        identity.retain(|id, _| catalog.get(*id).is_some());
        // A rolled-back DDL puts back its table's catalog row from before it, and with it an
        // older high-water mark than one a system transaction may have committed meanwhile
        // (the mark and the definition share the row). The cache must not go on handing out
        // values above the mark on disk without persisting a new one.
        for (id, (_, persisted)) in identity.iter_mut() {
            if let Some(Object::Table(t)) = catalog.get(*id).as_deref() {
                let ascending = t.identity_column().is_none_or(|(_, _, inc)| inc > 0);
                *persisted = if ascending {
                    (*persisted).min(t.identity_high)
                } else {
                    (*persisted).max(t.identity_high)
                };
            }
        }
        drop(identity);
        self.sequences
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|id, _| catalog.get(*id).is_some());
        self.locators
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|id, _| catalog.get(*id).is_some());
        let (entries, options) = statistics.finish()?;
        self.load_statistics(entries, options, &catalog);
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = catalog;
        self.schema_changed();
        Ok(())
    }

    /// [`Database::reload_catalog`] after a rollback undid DDL: definitions read before it
    /// may be stale, so it counts as replacing objects. (Loading the catalog when the
    /// database is created or opened replaces nothing: no definition was read before.)
    pub(crate) fn reload_catalog_after_rollback(&self) -> Result<(), EngineError> {
        self.replaced_objects.fetch_add(1, Ordering::Relaxed);
        self.reload_catalog()
    }

    /// Puts back `table`'s identity cache entry as it was before a TRUNCATE TABLE that is
    /// being rolled back (`None`: it had none, so the catalog's restored mark is read again).
    pub(crate) fn restore_identity(&self, table: u32, saved: Option<(i64, i64)>) {
        let mut map = self.identity.lock().unwrap_or_else(PoisonError::into_inner);
        match saved {
            Some(entry) => map.insert(table, entry),
            None => map.remove(&table),
        };
    }

    /// The schema version: it changes after every change to the catalog's objects, so a
    /// caller that read it before resolving names and reads the same value later may keep
    /// what it resolved (see `schema_version` in `database.rs`).
    pub fn schema_version(&self) -> u64 {
        self.schema_version.load(Ordering::Acquire)
    }

    fn schema_changed(&self) {
        self.schema_version.fetch_add(1, Ordering::AcqRel);
    }

    /// A copy of the catalog.
    pub fn catalog(&self) -> Catalog {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Whether `def` is still the catalog's definition of its table (its columns, indexes,
    /// CHECKs and FOREIGN KEYs; not its name or identity high-water mark), and the table exists. A statement
    /// resolves a table before it locks it; a DDL that held the table's X lock meanwhile may
    /// have replaced the definition and its trees, or dropped the table.
    pub(crate) fn check_current(&self, def: &TableDef) -> Result<(), EngineError> {
        self.check_definition(def, false)
    }

    /// [`Database::check_current`], the name and schema included: what ALTER TABLE checks
    /// under its X lock, so that it never rebuilds from a stale definition nor puts back an
    /// old name.
    pub(crate) fn check_current_named(&self, def: &TableDef) -> Result<(), EngineError> {
        self.check_definition(def, true)
    }

    fn check_definition(&self, def: &TableDef, named: bool) -> Result<(), EngineError> {
        // A DDL that replaced the definition counted itself before it released the table's
        // X lock, which the caller has since acquired: a relaxed read sees it.
        if self.replaced_objects.load(Ordering::Relaxed) == 0 {
            return Ok(());
        }
        let catalog = self.catalog.read().unwrap_or_else(PoisonError::into_inner);
        match catalog.object(def.id) {
            Some(Object::Table(t))
                if std::ptr::eq(&**t, def)
                    || ((!named || (t.name == def.name && t.schema == def.schema))
                        && t.indexes == def.indexes
                        && t.columns == def.columns
                        && t.checks == def.checks
                        && t.foreign_keys == def.foreign_keys) =>
            {
                Ok(())
            }
            Some(Object::Table(_)) => Err(EngineError::DefinitionChanged(def.name.clone())),
            _ => Err(EngineError::NoSuchObject(def.name.clone())),
        }
    }

    /// The object named `schema.name`.
    pub fn find_object(&self, schema: &str, name: &str) -> Option<Arc<Object>> {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner).find(schema, name)
    }

    /// Whether any object of the database has a trigger: what every INSERT, UPDATE and
    /// DELETE asks first, so that a database without triggers pays one flag test for them.
    pub fn has_triggers(&self) -> bool {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner).has_triggers()
    }

    /// Whether the database has a DDL trigger: what every DDL statement asks first, so that
    /// a database without one pays one lookup for them.
    pub fn has_database_triggers(&self) -> bool {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner).has_database_triggers()
    }

    /// The object with id `id`.
    pub fn object_by_id(&self, id: u32) -> Option<Arc<Object>> {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner).get(id)
    }

    /// The database's extended properties, in the order they were added.
    pub fn extended_properties(&self) -> Vec<ExtendedProperty> {
        match self.object_by_id(PROPERTIES_ID).as_deref() {
            Some(Object::Properties(p)) => p.entries.clone(),
            _ => Vec::new(),
        }
    }

    /// The tables whose FOREIGN KEYs reference table `table`, in id order.
    pub fn referencing(&self, table: u32) -> Vec<Arc<crate::catalog::TableDef>> {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner).referencing(table)
    }

    /// The triggers on table `table`, in the order they fire.
    pub fn triggers_on(&self, table: u32) -> Vec<crate::catalog::TriggerDef> {
        self.catalog.read().unwrap_or_else(PoisonError::into_inner).triggers_on(table)
    }

    /// The table named `schema.name`, or error 208.
    pub fn table(&self, schema: &str, name: &str) -> Result<Arc<Object>, EngineError> {
        match self.find_object(schema, name) {
            Some(o) if matches!(*o, Object::Table(_)) => Ok(o),
            _ => Err(EngineError::NoSuchObject(name.to_string())),
        }
    }

    /// Rewrites one catalog entry in a system transaction of its own, committed with
    /// `durability`; the in-memory catalog follows.
    fn system_update(&self, object: Object, durability: Durability) -> Result<(), EngineError> {
        self.system_update_with(object, SystemCommit::Wait(durability)).map(|_| ())
    }

    /// [`Database::system_update`], committed as `commit` says; returns the commit's LSN (0
    /// in tempdb, which logs nothing).
    fn system_update_with(&self, object: Object, commit: SystemCommit) -> Result<Lsn, EngineError> {
        self.check_online()?;
        let txn = self.next_txn_id();
        let bytes = object.encode();
        // A system update changes fixed-width fields (a high-water mark, a sequence's cache),
        // so the object keeps the entries it has. The first is always rewritten (it holds
        // those fields unless the names before them are thousands of bytes long); a later one
        // only if its bytes changed, so a wide table's identity mark logs one entry, not all.
        let old = self.object_by_id(object.id()).map(|o| o.encode());
        let old_chunks = old.as_deref().map(crate::catalog::object_chunks).transpose()?;
        let mut undo = UndoLog::default();
        for (i, chunk) in crate::catalog::object_chunks(&bytes)?.into_iter().enumerate() {
            if i > 0 && old_chunks.as_ref().and_then(|o| o.get(i)) == Some(&chunk) {
                continue;
            }
            let key = crate::catalog::object_chunk_key(object.id(), i as u16);
            let mut logger = self
                .logger(txn, LogMode::Row { root: CATALOG_ROOT, key: &key, kind: RowKind::Update });
            let result = self.space().tree(CATALOG_ROOT).update(&mut logger, &key, chunk);
            if let Some(row) = logger.finish() {
                undo.push(row);
            }
            match result {
                Ok(Some(_)) => {}
                Ok(None) => {
                    let _ = crate::txn::undo_entries(self, txn, &undo, 0);
                    self.forget_txn(txn);
                    let id = object.id();
                    return Err(EngineError::Internal(format!("catalog entry {id} vanished")));
                }
                Err(e) => {
                    let err = EngineError::from(e);
                    self.take_offline(err.to_string());
                    return Err(err);
                }
            }
        }
        let committed = match commit {
            SystemCommit::Wait(durability) => self.commit_txn(txn, durability),
            SystemCommit::Unwaited => self.commit_txn_unwaited(txn),
        };
        let receipt = match committed {
            Ok(receipt) => receipt,
            Err(e) => {
                let _ = crate::txn::undo_entries(self, txn, &undo, 0);
                return Err(e);
            }
        };
        // Not a schema change: system updates persist an identity's high-water mark or a
        // sequence's cache, which no plan reads (a plan only reads a table's shape), and an
        // INSERT loop makes them often.
        self.catalog.write().unwrap_or_else(PoisonError::into_inner).put(object);
        Ok(receipt.lsn)
    }

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

/// An index to create with a table, or on an existing table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    /// The index or constraint name.
    pub name: String,
    /// Key columns (indexes into the table's columns).
    pub columns: Vec<usize>,
    /// Unique keys.
    pub unique: bool,
    /// The clustered index (at most one).
    pub clustered: bool,
    /// A PRIMARY KEY constraint.
    pub primary_key: bool,
    /// A UNIQUE constraint (2627 rather than 2601 on duplicates).
    pub unique_constraint: bool,
    /// `IGNORE_DUP_KEY = ON` (see [`IndexDef::ignore_dup_key`]).
    pub ignore_dup_key: bool,
}

/// The object id of a database's row-version sequence: below the ids user objects get
/// (`FIRST_OBJECT_ID`), so no user object has it and the catalog views leave it out.
pub const ROWVERSION_SEQUENCE: u32 = 999;

/// The first row version a database hands out (SQL Server's `@@DBTS` starts near it too).
const ROWVERSION_START: i64 = 2001;

impl Transaction {
    /// Makes the row-version sequence of `db` if it has none yet: what a CREATE TABLE or
    /// ALTER TABLE that adds a `rowversion` column does first, in its own transaction.
    pub fn ensure_rowversion_sequence(&mut self, db: &Arc<Database>) -> Result<(), EngineError> {
        if db.object_by_id(ROWVERSION_SEQUENCE).is_some() {
            return Ok(());
        }
        let def = SequenceDef {
            id: ROWVERSION_SEQUENCE,
            schema: "sys".into(),
            name: "@@DBTS".into(),
            ty: crate::types::SqlType::BigInt,
            start: ROWVERSION_START.into(),
            increment: 1,
            min: 1,
            max: i64::MAX.into(),
            cycle: false,
            cache: Some(1000),
            high_water: None,
        };
        self.lock_object(db, ROWVERSION_SEQUENCE, LockMode::X)?;
        // Another transaction may have made it while this one waited for the lock.
        if db.object_by_id(ROWVERSION_SEQUENCE).is_some() {
            return Ok(());
        }
        self.put_catalog(db, Object::Sequence(def), true)
    }

    /// CREATE TYPE: records `def` under a new object id (its `user_type_id`), which it returns.
    pub fn create_type(
        &mut self,
        db: &Arc<Database>,
        mut def: crate::catalog::TypeDef,
    ) -> Result<u32, EngineError> {
        self.check_new_name(db, &def.schema, &def.name)?;
        def.id = self.allocate_object_id(db);
        self.lock_object(db, def.id, LockMode::X)?;
        let id = def.id;
        self.put_catalog(db, Object::Type(def), true)?;
        Ok(id)
    }

    /// Replaces the database's extended properties with `entries` (`sp_addextendedproperty`
    /// and friends), under an X lock on [`PROPERTIES_ID`]: a DDL change, fully durable. Only
    /// the properties that differ are written (each under its own keys, `PropertiesDef`); a
    /// database's old single list entry is replaced by per-property entries here.
    pub fn set_extended_properties(
        &mut self,
        db: &Arc<Database>,
        mut entries: Vec<ExtendedProperty>,
    ) -> Result<(), EngineError> {
        self.lock_object(db, PROPERTIES_ID, LockMode::X)?;
        self.mark_ddl(db)?;
        entries.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        let old = db.extended_properties();
        let legacy = db.space().tree(CATALOG_ROOT).get(&object_key(PROPERTIES_ID))?.is_some();
        if legacy {
            self.tree_delete(db, CATALOG_ROOT, &object_key(PROPERTIES_ID))?;
        }
        for e in &old {
            if legacy || !entries.iter().any(|n| n == e) {
                self.delete_property_chunks(db, e)?;
            }
        }
        for e in &entries {
            // A changed property's old chunks were deleted above.
            if legacy || !old.iter().any(|o| o == e) {
                let bytes = crate::catalog::encode_property(e);
                for (i, chunk) in bytes.chunks(crate::catalog::PROPERTY_CHUNK).enumerate() {
                    let key = crate::catalog::property_key(e, i as u16);
                    if !self.tree_insert(db, CATALOG_ROOT, &key, chunk)? {
                        return Err(EngineError::Internal(format!(
                            "extended property '{}' stored twice",
                            e.name
                        )));
                    }
                }
            }
        }
        db.catalog
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .put(Object::Properties(PropertiesDef { entries }));
        Ok(())
    }

    /// Deletes the catalog entries of property `e` (as many chunks as it has).
    fn delete_property_chunks(
        &mut self,
        db: &Arc<Database>,
        e: &ExtendedProperty,
    ) -> Result<(), EngineError> {
        let mut chunk = 0u16;
        while self.tree_delete(db, CATALOG_ROOT, &crate::catalog::property_key(e, chunk))?.is_some()
        {
            chunk += 1;
        }
        Ok(())
    }

    /// Drops the extended properties of object `object` (on it, its columns and its indexes),
    /// which go with it, as in SQL Server.
    fn drop_properties_of(&mut self, db: &Arc<Database>, object: u32) -> Result<(), EngineError> {
        let mut entries = db.extended_properties();
        let before = entries.len();
        // Class 3 too: a schema made with CREATE SCHEMA keys its properties by its object id.
        entries.retain(|e| !(matches!(e.class, 1 | 3 | 7) && e.major_id == object));
        if entries.len() == before {
            return Ok(());
        }
        self.set_extended_properties(db, entries)
    }

    pub(crate) fn lock_object(
        &mut self,
        db: &Database,
        object: u32,
        mode: LockMode,
    ) -> Result<(), EngineError> {
        self.lock(&Resource::Object { db: db.id(), object }, mode).map(|_| ())
    }

    pub(crate) fn put_catalog(
        &mut self,
        db: &Arc<Database>,
        object: Object,
        new: bool,
    ) -> Result<(), EngineError> {
        self.mark_ddl(db)?;
        let (id, bytes) = (object.id(), object.encode());
        let chunks = crate::catalog::object_chunks(&bytes)?;
        for (i, chunk) in chunks.iter().enumerate() {
            let key = crate::catalog::object_chunk_key(id, i as u16);
            // A replaced object may have fewer entries than it now needs.
            let updated = !new && self.tree_update(db, CATALOG_ROOT, &key, chunk)?.is_some();
            if !updated && !self.tree_insert(db, CATALOG_ROOT, &key, chunk)? {
                return Err(EngineError::Internal(format!("object id {id} reused")));
            }
        }
        if !new {
            // Or more: the ones it no longer needs go.
            self.delete_object_entries(db, id, chunks.len())?;
            db.replaced_objects.fetch_add(1, Ordering::Relaxed);
        }
        db.catalog.write().unwrap_or_else(PoisonError::into_inner).put(object);
        db.schema_changed();
        Ok(())
    }

    /// Deletes object `id`'s catalog entries from chunk `from` on (all of them from 0).
    fn delete_object_entries(
        &mut self,
        db: &Arc<Database>,
        id: u32,
        from: usize,
    ) -> Result<(), EngineError> {
        let mut chunk = from;
        while chunk <= usize::from(u16::MAX)
            && self
                .tree_delete(db, CATALOG_ROOT, &crate::catalog::object_chunk_key(id, chunk as u16))?
                .is_some()
        {
            chunk += 1;
        }
        Ok(())
    }

    fn check_new_name(&self, db: &Database, schema: &str, name: &str) -> Result<(), EngineError> {
        if db.find_object(schema, name).is_some() {
            return Err(EngineError::ObjectExists(name.to_string()));
        }
        Ok(())
    }

    fn allocate_object_id(&self, db: &Database) -> u32 {
        db.catalog.write().unwrap_or_else(PoisonError::into_inner).allocate_id()
    }

    /// CREATE TABLE: `table.id`, `indexes` and the identity mark are filled in here. Without
    /// a clustered index among `indexes` the table is a heap.
    pub fn create_table(
        &mut self,
        db: &Arc<Database>,
        mut table: TableDef,
        indexes: &[IndexSpec],
    ) -> Result<TableDef, EngineError> {
        self.check_new_name(db, &table.schema, &table.name)?;
        table.id = self.allocate_object_id(db);
        if table.created_micros == 0 {
            // sys.objects.create_date: the caller leaves it to the engine.
            table.created_micros = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as u64);
        }
        self.lock_object(db, table.id, LockMode::X)?;
        if let Some((_, seed, inc)) = table.identity_column() {
            table.identity_high = seed - inc;
        }
        table.indexes.clear();
        let clustered = indexes.iter().find(|i| i.clustered);
        let root = self.create_tree(db, table.id, 1)?;
        table.indexes.push(match clustered {
            Some(spec) => IndexDef {
                id: 1,
                name: spec.name.clone(),
                columns: spec.columns.clone(),
                unique: true,
                primary_key: spec.primary_key,
                unique_constraint: spec.unique_constraint,
                ignore_dup_key: spec.ignore_dup_key,
                root,
            },
            None => IndexDef::heap(root),
        });
        for spec in indexes.iter().filter(|i| !i.clustered) {
            let id = table.indexes.len() as u16 + 1;
            let root = self.create_tree(db, table.id, id)?;
            table.indexes.push(IndexDef {
                id,
                name: spec.name.clone(),
                columns: spec.columns.clone(),
                unique: spec.unique,
                primary_key: spec.primary_key,
                unique_constraint: spec.unique_constraint,
                ignore_dup_key: spec.ignore_dup_key,
                root,
            });
        }
        self.put_catalog(db, Object::Table(Arc::new(table.clone())), true)?;
        Ok(table)
    }

    /// DROP TABLE / DROP SEQUENCE / DROP PROCEDURE: removes the catalog entry. The dropped
    /// table's pages are not reused before the database's pages are reorganized (a known
    /// limit, see `docs/architecture.md`).
    pub fn drop_object(&mut self, db: &Arc<Database>, object: u32) -> Result<(), EngineError> {
        self.lock_object(db, object, LockMode::X)?;
        self.mark_ddl(db)?;
        // A table's triggers go with it, as in SQL Server (none on other objects).
        for trigger in db.triggers_on(object) {
            self.delete_object_entries(db, trigger.id, 0)?;
            db.catalog.write().unwrap_or_else(PoisonError::into_inner).remove(trigger.id);
            db.schema_changed();
        }
        self.delete_object_entries(db, object, 0)?;
        db.replaced_objects.fetch_add(1, Ordering::Relaxed);
        db.catalog.write().unwrap_or_else(PoisonError::into_inner).remove(object);
        db.schema_changed();
        self.drop_table_statistics(db, object)?;
        self.drop_properties_of(db, object)
    }

    /// TRUNCATE TABLE: every index gets a new, empty tree.
    pub fn truncate_table(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
    ) -> Result<TableDef, EngineError> {
        self.lock_object(db, table.id, LockMode::X)?;
        let mut def = table.clone();
        for index in &mut def.indexes {
            index.root = self.create_tree(db, def.id, index.id)?;
        }
        // Every row removed counts as a modification, as a DELETE's would (the statistics
        // know how many there were).
        let rows =
            db.statistics_of(def.id).iter().filter_map(|s| Some(s.histogram.as_ref()?.rows)).max();
        db.count_modification(def.id, rows.unwrap_or(0));
        db.locators.lock().unwrap_or_else(PoisonError::into_inner).remove(&def.id);
        // TRUNCATE restarts the identity at its seed, as in SQL Server.
        if let Some((_, seed, inc)) = def.identity_column() {
            def.identity_high = seed - inc;
        }
        self.put_catalog(db, Object::Table(Arc::new(def.clone())), false)?;
        // The cache entry goes too, so the next value is the seed; a rollback puts it back.
        let saved = db.identity.lock().unwrap_or_else(PoisonError::into_inner).remove(&def.id);
        self.note_identity_reset(db, def.id, saved)?;
        Ok(def)
    }

    /// CREATE INDEX on an existing table: builds the index from its rows.
    pub fn create_index(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        spec: &IndexSpec,
    ) -> Result<TableDef, EngineError> {
        if table.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&spec.name)) {
            return Err(EngineError::ObjectExists(spec.name.clone()));
        }
        if spec.clustered {
            return Err(EngineError::Invalid(format!(
                "Cannot create more than one clustered index on table '{}'.",
                table.name
            )));
        }
        self.lock_object(db, table.id, LockMode::X)?;
        let mut def = table.clone();
        // Statistics objects share the ids of the table's indexes.
        let id = u16::try_from(db.next_statistics_id(&def)).map_err(|_| {
            EngineError::Invalid(format!("table '{}' has too many indexes", def.name))
        })?;
        let root = self.create_tree(db, def.id, id)?;
        let index = IndexDef {
            id,
            name: spec.name.clone(),
            columns: spec.columns.clone(),
            unique: spec.unique,
            primary_key: spec.primary_key,
            unique_constraint: spec.unique_constraint,
            ignore_dup_key: spec.ignore_dup_key,
            root,
        };
        let mut cursor =
            self.scan_table(db, table, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)?;
        while let Some((row_id, values)) = cursor.next_row(self)? {
            let key = index_key(&def, &index, &values, &row_id)?;
            if !self.tree_insert(db, root, &key, &row_id)? {
                return Err(duplicate_key(&def, &index, &values, 1505));
            }
        }
        def.indexes.push(index);
        self.put_catalog(db, Object::Table(Arc::new(def.clone())), false)?;
        Ok(def)
    }

    /// DROP INDEX of a nonclustered index: the catalog forgets it, under the table's X lock.
    /// Its pages are left unused, as after DROP TABLE. The clustered index (or the heap) is
    /// the table itself and is not dropped here.
    pub fn drop_index(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        index_id: u16,
    ) -> Result<TableDef, EngineError> {
        if index_id == 1 {
            return Err(EngineError::Invalid(format!(
                "The clustered index of table '{}' cannot be dropped by Walden yet.",
                table.name
            )));
        }
        self.lock_object(db, table.id, LockMode::X)?;
        let mut def = table.clone();
        let before = def.indexes.len();
        def.indexes.retain(|i| i.id != index_id);
        if def.indexes.len() == before {
            return Err(EngineError::Invalid(format!(
                "Table '{}' has no index {index_id}.",
                table.name
            )));
        }
        self.put_catalog(db, Object::Table(Arc::new(def.clone())), false)?;
        self.drop_statistics(db, table.id, u32::from(index_id))?;
        // The index's extended properties go with it, so a later index given its id starts
        // without them.
        let mut entries = db.extended_properties();
        let count = entries.len();
        entries.retain(|e| {
            !(e.class == 7 && e.major_id == table.id && e.minor_id == u32::from(index_id))
        });
        if entries.len() != count {
            self.set_extended_properties(db, entries)?;
        }
        Ok(def)
    }

    /// CREATE [UNIQUE] CLUSTERED INDEX on a heap: the table is rebuilt in key order under a
    /// new index 1, and every nonclustered index is rebuilt because its entries point at the
    /// rows' new ids. The old trees' pages are left unused, as after DROP TABLE.
    pub fn create_clustered_index(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        spec: &IndexSpec,
    ) -> Result<TableDef, EngineError> {
        let old_primary = table.primary()?;
        if !old_primary.is_heap() {
            return Err(EngineError::Invalid(format!(
                "Cannot create more than one clustered index on table '{}'. Drop the existing \
                 clustered index '{}' before creating another.",
                table.name, old_primary.name
            )));
        }
        if table.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&spec.name)) {
            return Err(EngineError::ObjectExists(spec.name.clone()));
        }
        self.lock_object(db, table.id, LockMode::X)?;
        let mut def = table.clone();
        for index in &mut def.indexes {
            index.root = self.create_tree(db, def.id, index.id)?;
            if index.id == 1 {
                index.name = spec.name.clone();
                index.columns = spec.columns.clone();
                index.unique = spec.unique;
                index.primary_key = spec.primary_key;
                index.unique_constraint = spec.unique_constraint;
                index.ignore_dup_key = spec.ignore_dup_key;
            }
        }
        let primary = def.primary()?.clone();
        let mut uniquifier = 0u64;
        let mut cursor =
            self.scan_table(db, table, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)?;
        while let Some((_, values)) = cursor.next_row(self)? {
            let mut row_id = index_key(&def, &primary, &values, &[])?;
            if !primary.unique {
                uniquifier += 1;
                row_id.extend_from_slice(&uniquifier.to_be_bytes());
            }
            let mut row = Vec::with_capacity(64);
            self.encode_stored_row(db, &def, &values, &mut row)?;
            let mut inserted = self.tree_insert(db, primary.root, &row_id, &row)?;
            let mut index = &primary;
            for secondary in def.indexes.iter().filter(|i| i.id != 1) {
                if !inserted {
                    break;
                }
                let key = index_key(&def, secondary, &values, &row_id)?;
                inserted = self.tree_insert(db, secondary.root, &key, &row_id)?;
                index = secondary;
            }
            if !inserted {
                return Err(duplicate_key(&def, index, &values, 1505));
            }
        }
        // The heap's locator counter must not serve as the uniquifier counter: forget it,
        // so that the next insert starts above the largest uniquifier in the new tree.
        db.locators.lock().unwrap_or_else(PoisonError::into_inner).remove(&def.id);
        self.put_catalog(db, Object::Table(Arc::new(def.clone())), false)?;
        Ok(def)
    }

    /// CREATE SEQUENCE (`def.id` is filled in).
    pub fn create_sequence(
        &mut self,
        db: &Arc<Database>,
        mut def: SequenceDef,
    ) -> Result<SequenceDef, EngineError> {
        self.check_new_name(db, &def.schema, &def.name)?;
        def.id = self.allocate_object_id(db);
        def.high_water = None;
        self.lock_object(db, def.id, LockMode::X)?;
        self.put_catalog(db, Object::Sequence(def.clone()), true)?;
        Ok(def)
    }

    /// CREATE [OR ALTER] PROCEDURE | VIEW | FUNCTION (and ALTER): stores the module's text.
    /// With `or_alter`, an existing module of that kind and name is replaced, its id kept;
    /// any other object of that name is error 2714.
    pub fn put_module(
        &mut self,
        db: &Arc<Database>,
        kind: ModuleKind,
        schema: &str,
        name: &str,
        text: &str,
        or_alter: bool,
    ) -> Result<(), EngineError> {
        let existing = db.find_object(schema, name);
        let same_kind = |o: &Object| match kind {
            ModuleKind::Procedure(_) => matches!(o, Object::Procedure(_)),
            ModuleKind::View => matches!(o, Object::View(_)),
            ModuleKind::Function | ModuleKind::TableFunction | ModuleKind::MultiTableFunction => {
                matches!(o, Object::Function(_))
            }
        };
        let (id, new) = match existing.as_deref() {
            Some(o) if or_alter && same_kind(o) => (o.id(), false),
            Some(_) => return Err(EngineError::ObjectExists(name.to_string())),
            None => (self.allocate_object_id(db), true),
        };
        self.lock_object(db, id, LockMode::X)?;
        let (schema, name, text) = (schema.to_string(), name.to_string(), text.to_string());
        let object = match kind {
            ModuleKind::Procedure(options) => {
                Object::Procedure(crate::catalog::ProcedureDef { id, schema, name, text, options })
            }
            ModuleKind::View => Object::View(crate::catalog::ViewDef { id, schema, name, text }),
            ModuleKind::Function | ModuleKind::TableFunction | ModuleKind::MultiTableFunction => {
                Object::Function(crate::catalog::FunctionDef {
                    id,
                    schema,
                    name,
                    returns_table: kind != ModuleKind::Function,
                    multi_statement: kind == ModuleKind::MultiTableFunction,
                    text,
                })
            }
        };
        self.put_catalog(db, object, new)
    }
}

impl Transaction {
    /// CREATE [OR ALTER] TRIGGER (and ALTER): stores `def` (its id filled in). With
    /// `or_alter`, an existing trigger of that name is replaced, its id kept (and it must be on
    /// the same table); any other object of that name is error 2714. The table is locked
    /// exclusively, as SQL Server's schema modification lock would: no statement changes it
    /// while its triggers change. A DDL trigger's name is looked for among the database's
    /// DDL triggers only (they are not schema-scoped), and "its table" is the lock resource
    /// [`crate::catalog::DATABASE_TRIGGER_PARENT`], which the DDL statements that fire them
    /// do not take: a DDL trigger's change is serialized with other trigger changes only.
    pub fn put_trigger(
        &mut self,
        db: &Arc<Database>,
        mut def: crate::catalog::TriggerDef,
        or_alter: bool,
    ) -> Result<(), EngineError> {
        let existing = if def.on_database() {
            db.triggers_on(def.table)
                .into_iter()
                .find(|t| t.name.eq_ignore_ascii_case(&def.name))
                .map(|t| Arc::new(Object::Trigger(t)))
        } else {
            db.find_object(&def.schema, &def.name)
        };
        let (id, new) = match existing.as_deref() {
            Some(Object::Trigger(old)) if or_alter && old.table == def.table => (old.id, false),
            Some(_) => return Err(EngineError::ObjectExists(def.name)),
            None => (self.allocate_object_id(db), true),
        };
        self.lock_object(db, def.table, LockMode::X)?;
        self.lock_object(db, id, LockMode::X)?;
        def.id = id;
        self.put_catalog(db, Object::Trigger(def), new)
    }

    /// CREATE SCHEMA: records schema `name` (error 2714 if a schema of that name exists,
    /// made by CREATE SCHEMA or named by an object).
    pub fn create_schema(&mut self, db: &Arc<Database>, name: &str) -> Result<(), EngineError> {
        let taken = db.find_object("", name).is_some()
            || db.catalog().objects().iter().any(|o| o.name().0.eq_ignore_ascii_case(name));
        if taken {
            return Err(EngineError::ObjectExists(name.to_string()));
        }
        let id = self.allocate_object_id(db);
        self.lock_object(db, id, LockMode::X)?;
        let def = crate::catalog::SchemaDef { id, name: name.to_string() };
        self.put_catalog(db, Object::Schema(def), true)
    }

    /// ENABLE / DISABLE TRIGGER.
    pub fn set_trigger_disabled(
        &mut self,
        db: &Arc<Database>,
        trigger: &crate::catalog::TriggerDef,
        disabled: bool,
    ) -> Result<(), EngineError> {
        self.lock_object(db, trigger.table, LockMode::X)?;
        self.lock_object(db, trigger.id, LockMode::X)?;
        let def = crate::catalog::TriggerDef { disabled, ..trigger.clone() };
        self.put_catalog(db, Object::Trigger(def), false)
    }
}

/// The kinds of module [`Transaction::put_module`] stores: objects that are their SQL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleKind {
    /// A stored procedure, with the options it was created under.
    Procedure(crate::catalog::ModuleOptions),
    /// A view.
    View,
    /// A scalar function.
    Function,
    /// An inline table-valued function.
    TableFunction,
    /// A multi-statement table-valued function.
    MultiTableFunction,
}
