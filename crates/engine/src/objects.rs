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

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use walden_log::{Durability, Lsn};

use crate::catalog::{Catalog, ExtendedProperty, Object, PropertiesDef, TableDef, PROPERTIES_ID};
use crate::database::{Database, LogMode, RowKind, UndoLog, CATALOG_ROOT};
use crate::error::EngineError;

mod caches;
mod ddl;

pub use caches::identity_integer;
pub(crate) use caches::{identity_fits, integer_value};

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
        let mut sequences = self.sequences.lock().unwrap_or_else(PoisonError::into_inner);
        sequences.retain(|id, _| catalog.get(*id).is_some());
        // The same for a rolled-back ALTER SEQUENCE, which puts back the sequence's older
        // row: the cache goes on where it is, but no further than that row's mark before it
        // persists a new one.
        for (id, cache) in sequences.iter_mut() {
            if let Some(Object::Sequence(s)) = catalog.get(*id).as_deref() {
                let up = s.increment > 0;
                let mark = s.high_water.unwrap_or(cache.next - s.increment);
                if (up && cache.last > mark) || (!up && cache.last < mark) {
                    cache.last = mark;
                    cache.ahead = None;
                }
            }
        }
        drop(sequences);
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
                    let _ = crate::txn::undo_entries(self, txn, &mut undo, 0);
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
                let _ = crate::txn::undo_entries(self, txn, &mut undo, 0);
                return Err(e);
            }
        };
        // Not a schema change: system updates persist an identity's high-water mark or a
        // sequence's cache, which no plan reads (a plan only reads a table's shape), and an
        // INSERT loop makes them often.
        self.catalog.write().unwrap_or_else(PoisonError::into_inner).put(object);
        Ok(receipt.lsn)
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
