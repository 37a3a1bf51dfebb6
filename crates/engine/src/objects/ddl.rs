//! DDL as transaction steps: creating, altering and dropping tables, indexes, sequences,
//! types, schemas, modules and triggers, and extended properties. Each step locks the object it
//! changes, writes the catalog entry in the caller's transaction (so a rollback undoes it), and
//! checks names against the catalog (error 2714 for a name in use).

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use super::{IndexSpec, ModuleKind, ROWVERSION_SEQUENCE, ROWVERSION_START};
use crate::catalog::{
    object_key, ExtendedProperty, IndexDef, Object, PropertiesDef, SequenceDef, TableDef,
    PROPERTIES_ID,
};
use crate::database::{Database, CATALOG_ROOT};
use crate::error::EngineError;
use crate::lock::{LockMode, Resource};
use crate::table::{duplicate_key, index_key};
use crate::txn::Transaction;

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

    /// ALTER SEQUENCE: `def` (an existing sequence's id) replaces its definition in this
    /// transaction. With `restart` the next value is `def.start`; otherwise the sequence goes
    /// on after the last value it handed out, its mark read here under the value caches'
    /// lock, which NEXT VALUE FOR holds while it hands a value out and persists a mark. The
    /// new row's mark is that last value: a crash before this transaction commits puts the
    /// older, higher mark back, and one after finds no value handed out past it. A rollback
    /// puts the old definition back (`Database::reload_catalog`).
    pub fn alter_sequence(
        &mut self,
        db: &Arc<Database>,
        mut def: SequenceDef,
        restart: bool,
    ) -> Result<(), EngineError> {
        self.lock_object(db, def.id, LockMode::X)?;
        let mut caches = db.sequences.lock().unwrap_or_else(PoisonError::into_inner);
        def.high_water = match (restart, db.object_by_id(def.id).as_deref()) {
            (true, Some(Object::Sequence(_))) => None,
            (false, Some(Object::Sequence(current))) => {
                caches.get(&def.id).map_or(current.high_water, |c| c.current)
            }
            _ => return Err(EngineError::NoSuchObject(def.name)),
        };
        self.put_catalog(db, Object::Sequence(def.clone()), false)?;
        caches.remove(&def.id);
        Ok(())
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
