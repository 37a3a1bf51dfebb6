//! ALTER TABLE and renames: changes of a table's columns, done by rebuilding the table inside
//! the DDL's transaction, and changes of names and constraints, which touch only the catalog.
//!
//! # Rebuild (ADD, DROP and ALTER COLUMN)
//!
//! [`Transaction::begin_rebuild`] creates a new tree for every index of the new definition;
//! the caller feeds each existing row, already in the new shape, to [`TableRebuild::insert`],
//! which stores it with its index entries; [`TableRebuild::finish`] replaces the catalog
//! entry under the same object id, so `OBJECT_ID`, procedures and open sessions keep finding
//! the table. Every step is an ordinary logged change of the DDL's transaction (tree
//! creations, row inserts, the catalog update, with the commit fully durable by rule W7), so
//! a rollback restores the old entry and the old trees are untouched, and crash recovery
//! redoes or undoes the rebuild like any other transaction: no new log record, no new
//! on-disk format. The table is X-locked throughout. The old trees are left unused, as after
//! DROP TABLE (their pages are not reclaimed: a documented limit).
//!
//! Row ids in the new trees: a heap that stays a heap keeps each row's locator, so the
//! table's locator counter stays valid; a clustered table's row id is recomputed from the
//! new key (a changed key column type changes the key's encoding), with fresh uniquifiers
//! for a non-unique clustered index. The locator cache is dropped either way and rebuilt
//! from the new tree on the next insert.
//!
//! Identity: a kept identity column keeps its values and the table's high-water mark; a new
//! identity column numbers the existing rows from its seed, in index 1 order, as SQL Server
//! does, and the mark becomes the last value given.
//!
//! # Catalog-only changes
//!
//! Renaming a table, column or index, and adding or dropping a CHECK constraint or a
//! DEFAULT, change the catalog entry alone ([`Transaction::alter_table_metadata`],
//! [`Transaction::rename_object`]): the stored rows do not depend on names or constraints.

use std::sync::{Arc, PoisonError};

use crate::catalog::{Object, TableDef};
use crate::database::Database;
use crate::error::EngineError;
use crate::lock::LockMode;
use crate::objects::{identity_fits, integer_value};
use crate::table::{duplicate_key, index_key};
use crate::txn::Transaction;
use crate::types::Value;

/// A table being rebuilt in a new shape: created by [`Transaction::begin_rebuild`], fed every
/// row, and installed by [`TableRebuild::finish`]. Dropping it unfinished leaves the catalog
/// entry as it was (the new trees are then unused pages, reclaimed by nothing, or undone by
/// the transaction's rollback).
#[derive(Debug)]
pub struct TableRebuild {
    db: Arc<Database>,
    /// The new definition, with the new trees' roots.
    def: TableDef,
    /// Index 1 is a heap before and after: rows keep their locators.
    keep_locators: bool,
    /// The last locator or uniquifier handed out in the new tree, when not kept.
    counter: u64,
    /// A new identity column to number: (column, next value, increment).
    fill_identity: Option<(usize, i64, i64)>,
    /// The last identity value given to a row of a new identity column.
    identity_last: Option<i64>,
}

/// The identity high-water mark in the committed catalog, which may be ahead of a caller's
/// copy of the definition (the mark moves in system transactions of its own).
fn current_identity_high(db: &Database, table: &TableDef) -> i64 {
    match db.catalog.read().unwrap_or_else(PoisonError::into_inner).get(table.id).as_deref() {
        Some(Object::Table(t)) => t.identity_high,
        _ => table.identity_high,
    }
}

/// Checks what the engine relies on in a table definition: at least one column, index key
/// columns that exist, one index 1, at most one identity column.
fn validate(def: &TableDef) -> Result<(), EngineError> {
    let invalid = |what: String| Err(EngineError::Invalid(format!("table '{}': {what}", def.name)));
    if def.columns.is_empty() {
        return invalid("a table needs at least one column".into());
    }
    if def.columns.iter().filter(|c| c.identity.is_some()).count() > 1 {
        return invalid("more than one identity column".into());
    }
    if def.indexes.iter().filter(|i| i.id == 1).count() != 1 {
        return invalid("index 1 must appear once".into());
    }
    for index in &def.indexes {
        if let Some(&c) = index.columns.iter().find(|&&c| c >= def.columns.len()) {
            return invalid(format!(
                "index '{}' names column {c}, which does not exist",
                index.name
            ));
        }
    }
    Ok(())
}

impl Transaction {
    /// Starts rebuilding `table` as `new` (same object id; its index roots are replaced by new
    /// trees). The caller then inserts every row of `table`, converted, and finishes.
    pub fn begin_rebuild(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        mut new: TableDef,
    ) -> Result<TableRebuild, EngineError> {
        if new.id != table.id {
            return Err(EngineError::Invalid(format!(
                "a rebuild of table '{}' must keep its object id",
                table.name
            )));
        }
        validate(&new)?;
        self.lock_object(db, table.id, LockMode::X)?;
        db.check_current_named(table)?;
        let old_identity = table.identity_column().map(|(c, _, _)| &table.columns[c].name);
        let fill_identity = match new.identity_column() {
            Some((c, _, _))
                if old_identity.is_some_and(|n| n.eq_ignore_ascii_case(&new.columns[c].name)) =>
            {
                new.identity_high = current_identity_high(db, table);
                None
            }
            Some((c, seed, inc)) => Some((c, seed, inc)),
            None => None,
        };
        for index in &mut new.indexes {
            index.root = self.create_tree(db, new.id, index.id)?;
        }
        let keep_locators = table.primary()?.is_heap() && new.primary()?.is_heap();
        Ok(TableRebuild {
            db: Arc::clone(db),
            def: new,
            keep_locators,
            counter: 0,
            fill_identity,
            identity_last: None,
        })
    }

    /// Replaces `table`'s catalog entry by `new`, which may differ only in names, defaults
    /// and CHECK constraints: the stored rows and trees stay as they are.
    pub fn alter_table_metadata(
        &mut self,
        db: &Arc<Database>,
        table: &TableDef,
        mut new: TableDef,
    ) -> Result<TableDef, EngineError> {
        let same_columns =
            new.columns.len() == table.columns.len()
                && new.columns.iter().zip(&table.columns).all(|(a, b)| {
                    a.ty == b.ty && a.nullable == b.nullable && a.identity == b.identity
                });
        let same_indexes = new.indexes.len() == table.indexes.len()
            && new.indexes.iter().zip(&table.indexes).all(|(a, b)| {
                a.id == b.id
                    && a.columns == b.columns
                    && a.unique == b.unique
                    && a.primary_key == b.primary_key
                    && a.unique_constraint == b.unique_constraint
                    && a.ignore_dup_key == b.ignore_dup_key
                    && a.root == b.root
            });
        let same_name = new.name == table.name && new.schema == table.schema;
        if new.id != table.id || !same_name || !same_columns || !same_indexes {
            return Err(EngineError::Invalid(format!(
                "a catalog-only change of table '{}' cannot change its name, columns or indexes",
                table.name
            )));
        }
        self.lock_object(db, table.id, LockMode::X)?;
        db.check_current_named(table)?;
        new.identity_high = current_identity_high(db, table);
        self.put_catalog(db, Object::Table(Arc::new(new.clone())), false)?;
        Ok(new)
    }

    /// Renames the object with id `object` (a table, sequence or procedure) within its schema:
    /// error 2714 when the schema has an object of that name.
    pub fn rename_object(
        &mut self,
        db: &Arc<Database>,
        object: u32,
        new_name: &str,
    ) -> Result<(), EngineError> {
        self.lock_object(db, object, LockMode::X)?;
        let current = db.catalog.read().unwrap_or_else(PoisonError::into_inner).get(object);
        let Some(current) = current else {
            return Err(EngineError::NoSuchObject(format!("object {object}")));
        };
        let schema = current.name().0.to_string();
        if db.find_object(&schema, new_name).is_some_and(|o| o.id() != object) {
            return Err(EngineError::ObjectExists(new_name.to_string()));
        }
        let renamed = match &*current {
            Object::Table(t) => {
                let mut t = TableDef::clone(t);
                t.name = new_name.to_string();
                Object::Table(Arc::new(t))
            }
            Object::Sequence(s) => {
                let mut s = s.clone();
                s.name = new_name.to_string();
                Object::Sequence(s)
            }
            Object::Procedure(p) => {
                let mut p = p.clone();
                p.name = new_name.to_string();
                Object::Procedure(p)
            }
            Object::View(v) => {
                let mut v = v.clone();
                v.name = new_name.to_string();
                Object::View(v)
            }
            Object::Trigger(t) => {
                let mut t = t.clone();
                t.name = new_name.to_string();
                Object::Trigger(t)
            }
            Object::Schema(s) => {
                Object::Schema(crate::catalog::SchemaDef { id: s.id, name: new_name.to_string() })
            }
            Object::Function(f) => {
                let mut f = f.clone();
                f.name = new_name.to_string();
                Object::Function(f)
            }
            Object::Type(t) => {
                let mut t = t.clone();
                t.name = new_name.to_string();
                Object::Type(t)
            }
            Object::Properties(_) => {
                return Err(EngineError::Invalid("extended properties have no name".into()))
            }
        };
        self.put_catalog(db, renamed, false)
    }
}

impl TableRebuild {
    /// The new definition (its roots are the new trees).
    pub fn def(&self) -> &TableDef {
        &self.def
    }

    /// Stores one row of the old table, in the new shape. `old_row_id` is its id in the old
    /// table (kept by a heap). A new identity column's value is given here, whatever
    /// `values` holds for it. Errors: 515 for NULL in a NOT NULL column, 8152 for a value
    /// too long, 1505 for a duplicate key in a unique index, 8115 for an identity value the
    /// column cannot hold.
    pub fn insert(
        &mut self,
        tx: &mut Transaction,
        old_row_id: &[u8],
        mut values: Vec<Value>,
    ) -> Result<(), EngineError> {
        let def = &self.def;
        if values.len() != def.columns.len() {
            return Err(EngineError::Invalid(format!(
                "a row of {} values for table '{}' of {} columns",
                values.len(),
                def.name,
                def.columns.len()
            )));
        }
        if let Some((c, next, inc)) = &mut self.fill_identity {
            let ty = def.columns[*c].ty;
            if !identity_fits(ty, *next) {
                return Err(EngineError::IdentityOverflow(ty.name()));
            }
            values[*c] = integer_value(ty, i128::from(*next));
            self.identity_last = Some(*next);
            *next =
                next.checked_add(*inc).ok_or_else(|| EngineError::IdentityOverflow(ty.name()))?;
        }
        if let Some(col) = def
            .columns
            .iter()
            .zip(&values)
            .find_map(|(c, v)| (v.is_null() && !c.nullable).then_some(c))
        {
            return Err(EngineError::NullNotAllowed {
                column: col.name.clone(),
                table: format!("{}.{}.{}", self.db.name(), def.schema, def.name),
            });
        }
        let primary = def.primary()?;
        let row_id = if self.keep_locators {
            old_row_id.to_vec()
        } else if primary.is_heap() {
            self.counter += 1;
            self.counter.to_be_bytes().to_vec()
        } else {
            let mut key = index_key(def, primary, &values, &[])?;
            if !primary.unique {
                self.counter += 1;
                key.extend_from_slice(&self.counter.to_be_bytes());
            }
            key
        };
        let mut row = Vec::with_capacity(64);
        tx.encode_stored_row(&self.db, def, &values, &mut row)?;
        if !tx.tree_insert(&self.db, primary.root, &row_id, &row)? {
            return Err(duplicate_key(def, primary, &values, 1505));
        }
        for index in def.indexes.iter().filter(|i| i.id != 1) {
            let key = index_key(def, index, &values, &row_id)?;
            if !tx.tree_insert(&self.db, index.root, &key, &row_id)? {
                return Err(duplicate_key(def, index, &values, 1505));
            }
        }
        Ok(())
    }

    /// Installs the new definition in the catalog; returns it.
    pub fn finish(mut self, tx: &mut Transaction) -> Result<TableDef, EngineError> {
        let db = Arc::clone(&self.db);
        if let Some((c, _, inc)) = self.fill_identity {
            let seed = self.def.columns[c].identity.map_or(1, |(seed, _)| seed);
            self.def.identity_high = self.identity_last.unwrap_or(seed - inc);
        }
        if self.fill_identity.is_some() || self.def.identity_column().is_none() {
            // The cached identity range belonged to a column that is gone or numbered anew.
            db.identity.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.def.id);
        }
        db.locators.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.def.id);
        tx.put_catalog(&db, Object::Table(Arc::new(self.def.clone())), false)?;
        Ok(self.def)
    }
}
