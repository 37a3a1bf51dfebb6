//! The catalog: each database's tables, indexes, sequences and procedures.
//!
//! The catalog lives in the database's own pages, in the B+tree rooted at
//! [`CATALOG_ROOT`](crate::database::CATALOG_ROOT): key the object id (4 bytes, big-endian),
//! value the object's definition encoded as in `docs/format/catalog.md`. It is changed by
//! ordinary logged row changes inside the DDL's transaction, so it is recovered and rolled back
//! like user data; a transaction that changes it always commits fully durably (rule W7).
//!
//! Each open database keeps a decoded copy ([`Catalog`]) for name lookups. DDL updates the
//! copy as it updates the tree; a rollback of a transaction that did DDL reloads the copy
//! from the tree. Sessions that use an object lock it first (IS/IX/S/X on the OBJECT
//! resource), and DDL holds X, so nobody acts on a definition that is not committed.

use std::collections::HashMap;
use std::sync::Arc;

use walden_storage::PageId;

use crate::error::EngineError;
use crate::types::{DeclaredType, SqlType, TextOrder, Value};

mod codec;

pub(crate) use codec::{Reader, Writer};

/// A column.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: SqlType,
    /// Whether NULL is allowed.
    pub nullable: bool,
    /// IDENTITY(seed, increment).
    pub identity: Option<(i64, i64)>,
    /// The DEFAULT expression's SQL text, evaluated by the SQL layer.
    pub default: Option<String>,
    /// A computed column's expression: the SQL layer computes the value from the row's
    /// other columns whenever the row is inserted or updated, and the row stores it.
    pub computed: Option<Computed>,
    /// A `rowversion` (`timestamp`) column: BINARY(8) that every insert and update of the
    /// row sets to the database's next row version (`Database::next_rowversion`).
    pub rowversion: bool,
    /// `COLLATE name` of a text column, as SQL Server spells the name; None for the
    /// database's default (`SQL_Latin1_General_CP1_CI_AS`). Its index keys are encoded by
    /// [`ColumnDef::text_order`].
    pub collation: Option<String>,
    /// The type the column was declared with when Walden holds it as another
    /// (SMALLDATETIME as `ty` DATETIME, ...): values stored are made to fit it, and the
    /// catalog views and the TDS server describe the column as it.
    pub declared: Option<DeclaredType>,
}

impl ColumnDef {
    /// How the column's text compares and is keyed: its collation's order, else the default.
    pub fn text_order(&self) -> TextOrder {
        self.collation.as_deref().map_or(TextOrder::DEFAULT, TextOrder::of_collation)
    }
}

/// A computed column's definition (`name AS (expression) [PERSISTED]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computed {
    /// The expression's SQL text.
    pub text: String,
    /// Declared `PERSISTED` (`sys.computed_columns.is_persisted`). Walden stores every
    /// computed value, so it changes nothing else.
    pub persisted: bool,
}

/// An index of a table. Index 1 is the clustered index, or the heap's row-locator tree when
/// the table has no clustered index; nonclustered indexes are 2 and up, as in SQL Server.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDef {
    /// 1 for the clustered index or heap, 2.. for nonclustered indexes.
    pub id: u16,
    /// Its name (the constraint name for a primary key or unique constraint).
    pub name: String,
    /// Key columns, as indexes into the table's columns (empty for a heap).
    pub columns: Vec<usize>,
    /// Whether keys are unique.
    pub unique: bool,
    /// Whether it is the primary key constraint.
    pub primary_key: bool,
    /// Whether it is a unique constraint (as opposed to a unique index): error 2627 vs 2601.
    pub unique_constraint: bool,
    /// `IGNORE_DUP_KEY = ON`: an INSERT skips a row whose key is already there (message
    /// 3604) instead of failing; UPDATE still fails.
    pub ignore_dup_key: bool,
    /// The root page of its tree.
    pub root: PageId,
}

impl IndexDef {
    /// A heap's index 1: the tree at `root` of its rows by locator, with no key columns.
    pub fn heap(root: PageId) -> IndexDef {
        IndexDef {
            id: 1,
            name: String::new(),
            columns: Vec::new(),
            unique: true,
            primary_key: false,
            unique_constraint: false,
            ignore_dup_key: false,
            root,
        }
    }

    /// Whether this is the heap's locator tree (no key columns).
    pub fn is_heap(&self) -> bool {
        self.id == 1 && self.columns.is_empty()
    }
}

/// A CHECK constraint: its name and SQL text (evaluated by the SQL layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckDef {
    /// The constraint name.
    pub name: String,
    /// The predicate's SQL text.
    pub text: String,
}

/// What a FOREIGN KEY does to the referencing rows when the key they reference is deleted or
/// changed (`ON DELETE` / `ON UPDATE`). The byte is the one stored in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReferentialAction {
    /// Refuse the change while a row references the key (error 547): the default.
    #[default]
    NoAction = 0,
    /// Delete the referencing rows, or change their columns to the new key.
    Cascade = 1,
    /// Set the referencing columns to NULL.
    SetNull = 2,
    /// Set the referencing columns to their defaults (NULL without one).
    SetDefault = 3,
}

impl ReferentialAction {
    fn from_byte(b: u8) -> Result<ReferentialAction, EngineError> {
        Ok(match b {
            0 => ReferentialAction::NoAction,
            1 => ReferentialAction::Cascade,
            2 => ReferentialAction::SetNull,
            3 => ReferentialAction::SetDefault,
            _ => return Err(EngineError::Corrupt(format!("referential action {b}"))),
        })
    }

    /// The name `sys.foreign_keys` and `INFORMATION_SCHEMA` show: `NO_ACTION`, `CASCADE`, ...
    pub fn desc(self) -> &'static str {
        match self {
            ReferentialAction::NoAction => "NO_ACTION",
            ReferentialAction::Cascade => "CASCADE",
            ReferentialAction::SetNull => "SET_NULL",
            ReferentialAction::SetDefault => "SET_DEFAULT",
        }
    }
}

/// A FOREIGN KEY constraint of the table that holds it (the referencing table).
///
/// It references a unique index of `ref_table` (its primary key or a unique constraint or
/// index) by the index's id rather than by column positions: an index keeps its id when
/// the table is rebuilt, and the columns it names cannot be dropped while it is referenced,
/// so the reference never goes stale. `columns[i]` of this table matches the index's i-th
/// key column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKeyDef {
    /// The constraint name.
    pub name: String,
    /// The referencing columns, positions in this table, in the referenced index's order.
    pub columns: Vec<usize>,
    /// The referenced table's object id (in the same database; maybe this table).
    pub ref_table: u32,
    /// The referenced unique index's id.
    pub ref_index: u16,
    /// `ON DELETE`.
    pub on_delete: ReferentialAction,
    /// `ON UPDATE`.
    pub on_update: ReferentialAction,
    /// `NOCHECK CONSTRAINT`: not enforced (and not trusted).
    pub disabled: bool,
}

/// A table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    /// The object id.
    pub id: u32,
    /// The schema (`dbo`).
    pub schema: String,
    /// The name.
    pub name: String,
    /// The columns, in order.
    pub columns: Vec<ColumnDef>,
    /// The indexes; index 1 first.
    pub indexes: Vec<IndexDef>,
    /// CHECK constraints.
    pub checks: Vec<CheckDef>,
    /// FOREIGN KEY constraints this table's rows must satisfy.
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The identity high-water mark: no identity value above it was handed out.
    pub identity_high: i64,
    /// Creation time, microseconds since the Unix epoch; `create_table` sets it when given 0.
    pub created_micros: u64,
}

impl TableDef {
    /// The column types, in order.
    pub fn types(&self) -> Vec<SqlType> {
        self.columns.iter().map(|c| c.ty).collect()
    }

    /// The clustered index or heap.
    pub fn primary(&self) -> Result<&IndexDef, EngineError> {
        self.indexes
            .iter()
            .find(|i| i.id == 1)
            .ok_or_else(|| EngineError::Corrupt(format!("table {} has no index 1", self.name)))
    }

    /// The index with this id.
    pub fn index(&self, id: u16) -> Option<&IndexDef> {
        self.indexes.iter().find(|i| i.id == id)
    }

    /// The identity column, if any.
    pub fn identity_column(&self) -> Option<(usize, i64, i64)> {
        self.columns
            .iter()
            .enumerate()
            .find_map(|(i, c)| c.identity.map(|(seed, inc)| (i, seed, inc)))
    }

    /// The column with this name (case-insensitive).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name.eq_ignore_ascii_case(name))
    }
}

/// A sequence (CREATE SEQUENCE).
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceDef {
    /// The object id.
    pub id: u32,
    /// The schema.
    pub schema: String,
    /// The name.
    pub name: String,
    /// The type (an integer type or DECIMAL(p,0)).
    pub ty: SqlType,
    /// START WITH.
    pub start: i128,
    /// INCREMENT BY (not 0).
    pub increment: i128,
    /// MINVALUE.
    pub min: i128,
    /// MAXVALUE.
    pub max: i128,
    /// CYCLE.
    pub cycle: bool,
    /// CACHE n (None: NO CACHE).
    pub cache: Option<u32>,
    /// The persisted high-water mark: the last value that may have been handed out, or None
    /// before the first.
    pub high_water: Option<i128>,
}

/// A stored procedure: its text, parsed again by the SQL layer when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcedureDef {
    /// The object id.
    pub id: u32,
    /// The schema.
    pub schema: String,
    /// The name.
    pub name: String,
    /// The CREATE PROCEDURE statement's text.
    pub text: String,
    /// The SET options it was created under, which it runs with.
    pub options: ModuleOptions,
}

/// The SET options SQL Server keeps with a module (`sys.sql_modules.uses_ansi_nulls`,
/// `uses_quoted_identifier`): those in force when it was created, not when it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleOptions {
    /// `SET ANSI_NULLS`.
    pub ansi_nulls: bool,
    /// `SET QUOTED_IDENTIFIER`: the text is parsed again under it.
    pub quoted_identifier: bool,
}

impl Default for ModuleOptions {
    /// Both ON, as drivers connect.
    fn default() -> ModuleOptions {
        ModuleOptions { ansi_nulls: true, quoted_identifier: true }
    }
}

impl ModuleOptions {
    /// The stored byte: bit 0 ANSI_NULLS, bit 1 QUOTED_IDENTIFIER, each set when ON.
    fn byte(self) -> u8 {
        u8::from(self.ansi_nulls) | u8::from(self.quoted_identifier) << 1
    }

    fn from_byte(b: u8) -> ModuleOptions {
        ModuleOptions { ansi_nulls: b & 1 != 0, quoted_identifier: b & 2 != 0 }
    }
}

/// A view: its text, parsed again by the SQL layer wherever a query names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDef {
    /// The object id.
    pub id: u32,
    /// The schema.
    pub schema: String,
    /// The name.
    pub name: String,
    /// The CREATE VIEW statement's text.
    pub text: String,
}

/// A user-defined function: its text, parsed again by the SQL layer when it is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionDef {
    /// The object id.
    pub id: u32,
    /// The schema.
    pub schema: String,
    /// The name.
    pub name: String,
    /// A table-valued function (`RETURNS TABLE` or `RETURNS @t TABLE`), rather than a
    /// scalar one.
    pub returns_table: bool,
    /// A multi-statement table-valued function (`RETURNS @t TABLE (...)`), rather than an
    /// inline one; only with `returns_table`.
    pub multi_statement: bool,
    /// The CREATE FUNCTION statement's text.
    pub text: String,
}

/// A trigger: a DML trigger on a table or view, or a DDL trigger `ON DATABASE` (`table`
/// [`DATABASE_TRIGGER_PARENT`]); its text, parsed again by the SQL layer when a statement
/// fires it, and what the catalog must know without parsing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerDef {
    /// The object id.
    pub id: u32,
    /// The schema (the table's).
    pub schema: String,
    /// The name.
    pub name: String,
    /// The object id of the table it is on: `sys.triggers.parent_id`;
    /// [`DATABASE_TRIGGER_PARENT`] for a DDL trigger.
    pub table: u32,
    /// `DISABLE TRIGGER`: kept but not fired.
    pub disabled: bool,
    /// The CREATE TRIGGER statement's text.
    pub text: String,
}

/// The `table` of a DDL trigger `ON DATABASE` (SQL Server's `parent_id` 0, which no object
/// has). Such a trigger is not a schema-scoped object: its schema is empty and the catalog
/// does not find it by name (a schema's entry is found under the empty schema name), only
/// among [`Catalog::triggers_on`] this id.
pub const DATABASE_TRIGGER_PARENT: u32 = 0;

impl TriggerDef {
    /// Whether this is a DDL trigger `ON DATABASE` rather than a DML trigger.
    pub fn on_database(&self) -> bool {
        self.table == DATABASE_TRIGGER_PARENT
    }
}

/// A schema made with CREATE SCHEMA. Objects name their schema by name, and any name works
/// as one; this records a schema that exists without (or before) objects in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaDef {
    /// The object id.
    pub id: u32,
    /// The schema's name.
    pub name: String,
}

/// A user-defined type (`CREATE TYPE`): an alias of a system type, or a table type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeDef {
    /// The object id, which is also its `user_type_id`.
    pub id: u32,
    /// The schema.
    pub schema: String,
    /// The name.
    pub name: String,
    /// An alias's base type (a table type's is unused: INT).
    pub base: SqlType,
    /// Whether an alias's columns allow NULL unless they say otherwise.
    pub nullable: bool,
    /// A table type's columns and constraints, as the SQL text inside `AS TABLE (...)`.
    pub table: Option<String>,
}

/// The object id of a database's extended properties (below 1000, so no catalog view lists it
/// as an object).
pub const PROPERTIES_ID: u32 = 998;

/// An extended property (`sp_addextendedproperty`): a name and a value attached to the
/// database, a schema, an object, a column or an index.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtendedProperty {
    /// `sys.extended_properties.class`: 0 database, 1 object or column, 3 schema, 7 index.
    pub class: u8,
    /// The object's or schema's id (0 for the database).
    pub major_id: u32,
    /// The column id (from 1) or index id, else 0.
    pub minor_id: u32,
    /// The property's name.
    pub name: String,
    /// Its value, of any type a SQL_VARIANT holds (or NULL).
    pub value: Value,
}

/// Every extended property of a database, held in memory as one catalog object
/// ([`PROPERTIES_ID`]). On disk each property has catalog entries of its own, under keys
/// that no object has ([`property_key`]), so a change writes only the properties it changes
/// and a property of any size fits (split into chunks of [`PROPERTY_CHUNK`] bytes).
/// Databases written before that keep them all in one entry under [`PROPERTIES_ID`] (kind
/// 8), which is still read, and replaced by the per-property entries at the first change.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PropertiesDef {
    /// In key order: class, major id, minor id, name.
    pub entries: Vec<ExtendedProperty>,
}

/// The first four bytes of every extended property's catalog key: the object id `u32::MAX`
/// (big-endian, as [`object_key`] writes ids), which no object has, so the properties sort
/// after every object and no object key is a prefix of theirs.
pub const PROPERTY_KEY_PREFIX: [u8; 4] = [0xFF; 4];

/// The most bytes of an encoded property one catalog entry holds (a tree value is at most
/// 4,096 bytes).
pub const PROPERTY_CHUNK: usize = 4000;

/// The catalog key of chunk `chunk` of the property `e`: [`PROPERTY_KEY_PREFIX`], `u8` class,
/// `u32` major id and `u32` minor id (big-endian, so keys sort by them), the name's UTF-8
/// bytes, a 0 byte, and the `u16` chunk number (big-endian).
pub fn property_key(e: &ExtendedProperty, chunk: u16) -> Vec<u8> {
    let mut key = Vec::with_capacity(16 + e.name.len());
    key.extend_from_slice(&PROPERTY_KEY_PREFIX);
    key.push(e.class);
    key.extend_from_slice(&e.major_id.to_be_bytes());
    key.extend_from_slice(&e.minor_id.to_be_bytes());
    key.extend_from_slice(e.name.as_bytes());
    key.push(0);
    key.extend_from_slice(&chunk.to_be_bytes());
    key
}

/// Whether a catalog key is an extended property's ([`property_key`]) rather than an object's.
pub fn is_property_key(key: &[u8]) -> bool {
    key.len() > PROPERTY_KEY_PREFIX.len() && key.starts_with(&PROPERTY_KEY_PREFIX)
}

/// One property as its chunks store it: class, ids, name and value as in kind 8's list.
pub fn encode_property(e: &ExtendedProperty) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.property(e);
    w.0
}

/// A property from its chunks' bytes, joined.
pub fn decode_property(b: &[u8]) -> Result<ExtendedProperty, EngineError> {
    Reader(b).property()
}

impl ExtendedProperty {
    /// The order of [`PropertiesDef::entries`], the order of their keys.
    pub fn sort_key(&self) -> (u8, u32, u32, &[u8]) {
        (self.class, self.major_id, self.minor_id, self.name.as_bytes())
    }
}

/// A catalog object.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    /// A table. Shared: every statement that resolves the table holds it without copying.
    Table(Arc<TableDef>),
    /// A sequence.
    Sequence(SequenceDef),
    /// A procedure.
    Procedure(ProcedureDef),
    /// A view.
    View(ViewDef),
    /// A function.
    Function(FunctionDef),
    /// A trigger.
    Trigger(TriggerDef),
    /// A schema (found under the empty schema name, by its own name).
    Schema(SchemaDef),
    /// The database's extended properties (id [`PROPERTIES_ID`]).
    Properties(PropertiesDef),
    /// A user-defined type.
    Type(TypeDef),
}

impl Object {
    /// The object id.
    pub fn id(&self) -> u32 {
        match self {
            Object::Table(t) => t.id,
            Object::Sequence(s) => s.id,
            Object::Procedure(p) => p.id,
            Object::View(v) => v.id,
            Object::Function(f) => f.id,
            Object::Trigger(t) => t.id,
            Object::Schema(s) => s.id,
            Object::Properties(_) => PROPERTIES_ID,
            Object::Type(t) => t.id,
        }
    }

    /// (schema, name).
    pub fn name(&self) -> (&str, &str) {
        match self {
            Object::Table(t) => (&t.schema, &t.name),
            Object::Sequence(s) => (&s.schema, &s.name),
            Object::Procedure(p) => (&p.schema, &p.name),
            Object::View(v) => (&v.schema, &v.name),
            Object::Function(f) => (&f.schema, &f.name),
            Object::Trigger(t) => (&t.schema, &t.name),
            Object::Schema(s) => ("", &s.name),
            Object::Properties(_) => ("sys", "extended_properties"),
            Object::Type(t) => (&t.schema, &t.name),
        }
    }

    /// SQL Server's `sys.objects.type`: `U`, `SO`, `P`, `V`, `FN`, `IF`, `TF`, `TR` (and an
    /// empty code for a schema, which `sys.objects` does not list).
    pub fn type_code(&self) -> &'static str {
        match self {
            Object::Table(_) => "U",
            Object::Sequence(_) => "SO",
            Object::Procedure(_) => "P",
            Object::View(_) => "V",
            Object::Function(f) if f.multi_statement => "TF",
            Object::Function(f) if f.returns_table => "IF",
            Object::Function(_) => "FN",
            Object::Trigger(_) => "TR",
            Object::Schema(_) | Object::Properties(_) | Object::Type(_) => "",
        }
    }

    /// The SQL text a module (procedure, view, function, trigger) was created with; `None`
    /// for tables and sequences, which have none.
    pub fn module_text(&self) -> Option<&str> {
        match self {
            Object::Procedure(p) => Some(&p.text),
            Object::View(v) => Some(&v.text),
            Object::Function(f) => Some(&f.text),
            Object::Trigger(t) => Some(&t.text),
            Object::Table(_)
            | Object::Sequence(_)
            | Object::Schema(_)
            | Object::Properties(_)
            | Object::Type(_) => None,
        }
    }
}

/// The catalog key of an object id.
pub fn object_key(id: u32) -> [u8; 4] {
    id.to_be_bytes()
}

/// The most bytes of an encoded object one catalog entry holds (a tree value is at most
/// 4,096 bytes). A longer object (a procedure's text, a table of many columns) goes on in
/// entries keyed by [`object_chunk_key`].
pub const OBJECT_CHUNK: usize = 4000;

/// An object's encoding cut into the values of its catalog entries, in chunk order: one
/// entry even when empty, and at most `u16::MAX + 1` of them.
pub fn object_chunks(bytes: &[u8]) -> Result<Vec<&[u8]>, EngineError> {
    let chunks: Vec<&[u8]> =
        if bytes.is_empty() { vec![bytes] } else { bytes.chunks(OBJECT_CHUNK).collect() };
    if chunks.len() > usize::from(u16::MAX) + 1 {
        return Err(EngineError::Internal(format!(
            "a catalog object of {} bytes is larger than the catalog holds",
            bytes.len()
        )));
    }
    Ok(chunks)
}

/// The catalog key of chunk `chunk` of object `id`'s encoding: [`object_key`] for the first,
/// and for the others the id followed by the `u16` chunk number (both big-endian), so that
/// an object's chunks follow its first entry in key order and come before the next object.
pub fn object_chunk_key(id: u32, chunk: u16) -> Vec<u8> {
    let mut key = object_key(id).to_vec();
    if chunk > 0 {
        key.extend_from_slice(&chunk.to_be_bytes());
    }
    key
}

/// The object whose encoding a catalog key continues ([`object_chunk_key`] of a chunk after
/// the first), if it is such a key.
pub fn object_continued(key: &[u8]) -> Option<u32> {
    match key {
        [a, b, c, d, _, _] => Some(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => None,
    }
}

/// The decoded catalog of one database.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    by_id: HashMap<u32, Arc<Object>>,
    by_name: HashMap<(String, String), u32>,
    /// The triggers on each table that has any, by table id, in id order: what every
    /// INSERT, UPDATE and DELETE asks, so it is one lookup, not a walk of the catalog.
    triggers: HashMap<u32, Vec<u32>>,
    /// The tables whose FOREIGN KEYs reference each referenced table, by its id: what every
    /// DELETE and UPDATE asks, so a table nobody references costs one lookup.
    referenced_by: HashMap<u32, Vec<u32>>,
    next_id: u32,
}

/// The first object id handed out to user objects (SQL Server's are large numbers too).
pub const FIRST_OBJECT_ID: u32 = 1000;

/// Whether `object` is a DDL trigger, which has no entry in the catalog's names.
fn is_database_trigger(object: &Object) -> bool {
    matches!(object, Object::Trigger(t) if t.on_database())
}

fn name_key(schema: &str, name: &str) -> (String, String) {
    (schema.to_lowercase(), name.to_lowercase())
}

impl Catalog {
    /// A catalog holding `objects`.
    pub fn from_objects(objects: impl IntoIterator<Item = Object>) -> Catalog {
        let mut c = Catalog { next_id: FIRST_OBJECT_ID, ..Catalog::default() };
        for o in objects {
            c.put(o);
        }
        c
    }

    /// Adds or replaces an object.
    pub fn put(&mut self, object: Object) {
        let id = object.id();
        self.remove(id);
        if !is_database_trigger(&object) {
            let (s, n) = object.name();
            self.by_name.insert(name_key(s, n), id);
        }
        if let Object::Trigger(t) = &object {
            let on = self.triggers.entry(t.table).or_default();
            let at = on.partition_point(|&other| other < id);
            on.insert(at, id);
        }
        if let Object::Table(t) = &object {
            for fk in &t.foreign_keys {
                let by = self.referenced_by.entry(fk.ref_table).or_default();
                if !by.contains(&id) {
                    by.push(id);
                }
            }
        }
        self.next_id = self.next_id.max(id + 1);
        self.by_id.insert(id, Arc::new(object));
    }

    /// Removes an object.
    pub fn remove(&mut self, id: u32) {
        if let Some(old) = self.by_id.remove(&id) {
            if !is_database_trigger(&old) {
                let (s, n) = old.name();
                self.by_name.remove(&name_key(s, n));
            }
            if let Object::Trigger(t) = &*old {
                if let Some(on) = self.triggers.get_mut(&t.table) {
                    on.retain(|&other| other != id);
                    if on.is_empty() {
                        self.triggers.remove(&t.table);
                    }
                }
            }
            if let Object::Table(t) = &*old {
                for fk in &t.foreign_keys {
                    if let Some(by) = self.referenced_by.get_mut(&fk.ref_table) {
                        by.retain(|&other| other != id);
                        if by.is_empty() {
                            self.referenced_by.remove(&fk.ref_table);
                        }
                    }
                }
            }
        }
    }

    /// Whether any object of the database has a trigger.
    pub fn has_triggers(&self) -> bool {
        !self.triggers.is_empty()
    }

    /// Whether the database has a DDL trigger: what every DDL statement asks first.
    pub fn has_database_triggers(&self) -> bool {
        self.triggers.contains_key(&DATABASE_TRIGGER_PARENT)
    }

    /// The triggers on table `table`, in id order (the order they fire in).
    pub fn triggers_on(&self, table: u32) -> Vec<TriggerDef> {
        let Some(ids) = self.triggers.get(&table) else { return Vec::new() };
        ids.iter()
            .filter_map(|id| match self.by_id.get(id).map(|o| &**o) {
                Some(Object::Trigger(t)) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    /// The tables with a FOREIGN KEY that references table `table` (itself included when it
    /// references itself), in id order.
    pub fn referencing(&self, table: u32) -> Vec<Arc<TableDef>> {
        let Some(ids) = self.referenced_by.get(&table) else { return Vec::new() };
        let mut tables: Vec<Arc<TableDef>> = ids
            .iter()
            .filter_map(|id| match self.by_id.get(id).map(|o| &**o) {
                Some(Object::Table(t)) => Some(Arc::clone(t)),
                _ => None,
            })
            .collect();
        tables.sort_by_key(|t| t.id);
        tables
    }

    /// A new object id.
    pub fn allocate_id(&mut self) -> u32 {
        let id = self.next_id.max(FIRST_OBJECT_ID);
        self.next_id = id + 1;
        id
    }

    /// The object named `schema.name` (case-insensitive).
    pub fn find(&self, schema: &str, name: &str) -> Option<Arc<Object>> {
        self.by_name.get(&name_key(schema, name)).and_then(|id| self.by_id.get(id)).cloned()
    }

    /// The object with this id.
    pub fn get(&self, id: u32) -> Option<Arc<Object>> {
        self.by_id.get(&id).cloned()
    }

    /// The object with id `id`, borrowed.
    pub(crate) fn object(&self, id: u32) -> Option<&Object> {
        self.by_id.get(&id).map(|o| &**o)
    }

    /// Every object, by id.
    pub fn objects(&self) -> Vec<Arc<Object>> {
        let mut all: Vec<Arc<Object>> = self.by_id.values().cloned().collect();
        all.sort_by_key(|o| o.id());
        all
    }
}

#[cfg(test)]
mod tests;
