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
use crate::types::{decode_row, encode_row, DeclaredType, SqlType, TextOrder, Value};

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

    /// Encodes the definition (see `docs/format/catalog.md`).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(128));
        match self {
            Object::Table(t) => {
                w.u8(1);
                w.u32(t.id);
                w.str(&t.schema);
                w.str(&t.name);
                w.u64(t.created_micros);
                w.i64(t.identity_high);
                w.u16(t.columns.len() as u16);
                for c in &t.columns {
                    w.str(&c.name);
                    w.0.extend_from_slice(&c.ty.encode());
                    // Bit 0: nullable; bit 1: a computed column, its text after the default;
                    // bit 2: PERSISTED; bit 3: rowversion; bit 4: a collation, its name after
                    // the computed text; bit 5: a declared type, its system_type_id last.
                    w.u8(u8::from(c.nullable)
                        | u8::from(c.computed.is_some()) << 1
                        | u8::from(c.computed.as_ref().is_some_and(|k| k.persisted)) << 2
                        | u8::from(c.rowversion) << 3
                        | u8::from(c.collation.is_some()) << 4
                        | u8::from(c.declared.is_some()) << 5);
                    match c.identity {
                        Some((seed, inc)) => {
                            w.u8(1);
                            w.i64(seed);
                            w.i64(inc);
                        }
                        None => w.u8(0),
                    }
                    w.opt_str(c.default.as_deref());
                    if let Some(computed) = &c.computed {
                        w.str(&computed.text);
                    }
                    if let Some(collation) = &c.collation {
                        w.str(collation);
                    }
                    if let Some(declared) = c.declared {
                        w.u8(declared.system_type_id());
                    }
                }
                w.u16(t.indexes.len() as u16);
                for i in &t.indexes {
                    w.u16(i.id);
                    w.str(&i.name);
                    w.u16(i.columns.len() as u16);
                    for &c in &i.columns {
                        w.u16(c as u16);
                    }
                    w.u8(u8::from(i.unique)
                        | u8::from(i.primary_key) << 1
                        | u8::from(i.unique_constraint) << 2
                        | u8::from(i.ignore_dup_key) << 3);
                    w.u32(i.root);
                }
                w.u16(t.checks.len() as u16);
                for c in &t.checks {
                    w.str(&c.name);
                    w.str(&c.text);
                }
                w.u16(t.foreign_keys.len() as u16);
                for fk in &t.foreign_keys {
                    w.str(&fk.name);
                    w.u32(fk.ref_table);
                    w.u16(fk.ref_index);
                    w.u16(fk.columns.len() as u16);
                    for &c in &fk.columns {
                        w.u16(c as u16);
                    }
                    w.u8(fk.on_delete as u8);
                    w.u8(fk.on_update as u8);
                    w.u8(u8::from(fk.disabled));
                }
            }
            Object::Sequence(s) => {
                w.u8(2);
                w.u32(s.id);
                w.str(&s.schema);
                w.str(&s.name);
                w.0.extend_from_slice(&s.ty.encode());
                for v in [s.start, s.increment, s.min, s.max] {
                    w.i128(v);
                }
                w.u8(u8::from(s.cycle));
                w.u32(s.cache.map_or(0, |c| c.max(1)));
                match s.high_water {
                    Some(v) => {
                        w.u8(1);
                        w.i128(v);
                    }
                    None => w.u8(0),
                }
            }
            Object::Procedure(p) => {
                w.u8(3);
                w.u32(p.id);
                w.str(&p.schema);
                w.str(&p.name);
                w.str(&p.text);
                w.u8(p.options.byte());
            }
            Object::View(v) => {
                w.u8(4);
                w.u32(v.id);
                w.str(&v.schema);
                w.str(&v.name);
                w.str(&v.text);
            }
            Object::Function(f) => {
                w.u8(5);
                w.u32(f.id);
                w.str(&f.schema);
                w.str(&f.name);
                w.u8(u8::from(f.returns_table) + u8::from(f.multi_statement));
                w.str(&f.text);
            }
            Object::Trigger(t) => {
                w.u8(6);
                w.u32(t.id);
                w.str(&t.schema);
                w.str(&t.name);
                w.u32(t.table);
                w.u8(u8::from(t.disabled));
                w.str(&t.text);
            }
            Object::Schema(s) => {
                w.u8(7);
                w.u32(s.id);
                w.str(&s.name);
            }
            Object::Type(t) => {
                w.u8(9);
                w.u32(t.id);
                w.str(&t.schema);
                w.str(&t.name);
                w.0.extend_from_slice(&t.base.encode());
                w.u8(u8::from(t.nullable));
                w.opt_str(t.table.as_deref());
            }
            Object::Properties(p) => {
                w.u8(8);
                w.u32(p.entries.len() as u32);
                for e in &p.entries {
                    w.property(e);
                }
            }
        }
        w.0
    }

    /// Decodes a definition.
    pub fn decode(b: &[u8]) -> Result<Object, EngineError> {
        let mut r = Reader(b);
        let object = match r.u8()? {
            1 => {
                let id = r.u32()?;
                let schema = r.str()?;
                let name = r.str()?;
                let created_micros = r.u64()?;
                let identity_high = r.i64()?;
                let n = usize::from(r.u16()?);
                let mut columns = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    let name = r.str()?;
                    let ty = r.ty()?;
                    let flags = r.u8()?;
                    let identity = if r.u8()? != 0 { Some((r.i64()?, r.i64()?)) } else { None };
                    let default = r.opt_str()?;
                    let computed = if flags & 2 != 0 {
                        Some(Computed { text: r.str()?, persisted: flags & 4 != 0 })
                    } else {
                        None
                    };
                    // Catalogs written before column collations never set bit 4.
                    let collation = if flags & 16 != 0 { Some(r.str()?) } else { None };
                    // Catalogs written before declared types never set bit 5.
                    let declared = if flags & 32 != 0 {
                        let id = r.u8()?;
                        Some(DeclaredType::of_system_type_id(id).ok_or_else(|| {
                            EngineError::Corrupt(format!("unknown declared type {id}"))
                        })?)
                    } else {
                        None
                    };
                    columns.push(ColumnDef {
                        name,
                        ty,
                        nullable: flags & 1 != 0,
                        identity,
                        default,
                        computed,
                        rowversion: flags & 8 != 0,
                        collation,
                        declared,
                    });
                }
                let n = usize::from(r.u16()?);
                let mut indexes = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    let id = r.u16()?;
                    let name = r.str()?;
                    let k = usize::from(r.u16()?);
                    let mut cols = Vec::with_capacity(k.min(32));
                    for _ in 0..k {
                        cols.push(usize::from(r.u16()?));
                    }
                    let flags = r.u8()?;
                    let root = r.u32()?;
                    indexes.push(IndexDef {
                        id,
                        name,
                        columns: cols,
                        unique: flags & 1 != 0,
                        primary_key: flags & 2 != 0,
                        unique_constraint: flags & 4 != 0,
                        ignore_dup_key: flags & 8 != 0,
                        root,
                    });
                }
                let n = usize::from(r.u16()?);
                let mut checks = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    checks.push(CheckDef { name: r.str()?, text: r.str()? });
                }
                // Tables written before foreign keys existed end here: they have none.
                let n = if r.0.is_empty() { 0 } else { usize::from(r.u16()?) };
                let mut foreign_keys = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    let name = r.str()?;
                    let ref_table = r.u32()?;
                    let ref_index = r.u16()?;
                    let k = usize::from(r.u16()?);
                    let mut columns = Vec::with_capacity(k.min(32));
                    for _ in 0..k {
                        columns.push(usize::from(r.u16()?));
                    }
                    foreign_keys.push(ForeignKeyDef {
                        name,
                        columns,
                        ref_table,
                        ref_index,
                        on_delete: ReferentialAction::from_byte(r.u8()?)?,
                        on_update: ReferentialAction::from_byte(r.u8()?)?,
                        disabled: r.u8()? != 0,
                    });
                }
                Object::Table(Arc::new(TableDef {
                    id,
                    schema,
                    name,
                    columns,
                    indexes,
                    checks,
                    foreign_keys,
                    identity_high,
                    created_micros,
                }))
            }
            2 => {
                let id = r.u32()?;
                let schema = r.str()?;
                let name = r.str()?;
                let ty = r.ty()?;
                let (start, increment, min, max) = (r.i128()?, r.i128()?, r.i128()?, r.i128()?);
                let cycle = r.u8()? != 0;
                let cache = match r.u32()? {
                    0 => None,
                    n => Some(n),
                };
                let high_water = if r.u8()? != 0 { Some(r.i128()?) } else { None };
                Object::Sequence(SequenceDef {
                    id,
                    schema,
                    name,
                    ty,
                    start,
                    increment,
                    min,
                    max,
                    cycle,
                    cache,
                    high_water,
                })
            }
            3 => Object::Procedure(ProcedureDef {
                id: r.u32()?,
                schema: r.str()?,
                name: r.str()?,
                text: r.str()?,
                // Procedures written before the options were kept end here: both ON.
                options: if r.0.is_empty() {
                    ModuleOptions::default()
                } else {
                    ModuleOptions::from_byte(r.u8()?)
                },
            }),
            4 => Object::View(ViewDef {
                id: r.u32()?,
                schema: r.str()?,
                name: r.str()?,
                text: r.str()?,
            }),
            5 => {
                let (id, schema, name) = (r.u32()?, r.str()?, r.str()?);
                let kind = r.u8()?;
                let text = r.str()?;
                Object::Function(FunctionDef {
                    id,
                    schema,
                    name,
                    returns_table: kind != 0,
                    multi_statement: kind == 2,
                    text,
                })
            }
            6 => Object::Trigger(TriggerDef {
                id: r.u32()?,
                schema: r.str()?,
                name: r.str()?,
                table: r.u32()?,
                disabled: r.u8()? != 0,
                text: r.str()?,
            }),
            7 => Object::Schema(SchemaDef { id: r.u32()?, name: r.str()? }),
            8 => {
                let n = r.u32()? as usize;
                let mut entries = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    entries.push(r.property()?);
                }
                Object::Properties(PropertiesDef { entries })
            }
            9 => Object::Type(TypeDef {
                id: r.u32()?,
                schema: r.str()?,
                name: r.str()?,
                base: r.ty()?,
                nullable: r.u8()? != 0,
                table: r.opt_str()?,
            }),
            t => return Err(EngineError::Corrupt(format!("unknown catalog object kind {t}"))),
        };
        if !r.0.is_empty() {
            return Err(EngineError::Corrupt("trailing bytes in a catalog object".into()));
        }
        Ok(object)
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

/// Little-endian fields of a catalog record (objects, properties, statistics).
pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    /// One extended property: class, ids, name and value (kind 8's entries and the
    /// per-property chunks alike).
    fn property(&mut self, e: &ExtendedProperty) {
        self.u8(e.class);
        self.u32(e.major_id);
        self.u32(e.minor_id);
        self.str(&e.name);
        self.value(&e.value);
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i128(&mut self, v: i128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
    /// A value as a one-column SQL_VARIANT row (`docs/format/row.md`), length first. Values
    /// reach here through the SQL layer's conversion to SQL_VARIANT, so they fit one.
    fn value(&mut self, v: &Value) {
        let mut row = Vec::new();
        if encode_row(&[SqlType::Variant], std::slice::from_ref(v), &mut row).is_err() {
            row.clear();
            // A value no variant holds is stored as NULL rather than lose the catalog entry.
            let _ = encode_row(&[SqlType::Variant], &[Value::Null], &mut row);
        }
        self.u32(row.len() as u32);
        self.0.extend_from_slice(&row);
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
}

/// Reads what [`Writer`] wrote; a record cut short is corrupt.
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    /// What [`Writer::property`] wrote.
    fn property(&mut self) -> Result<ExtendedProperty, EngineError> {
        Ok(ExtendedProperty {
            class: self.u8()?,
            major_id: self.u32()?,
            minor_id: self.u32()?,
            name: self.str()?,
            value: self.value()?,
        })
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], EngineError> {
        if self.0.len() < n {
            return Err(EngineError::Corrupt("truncated catalog object".into()));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], EngineError> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, EngineError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, EngineError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, EngineError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, EngineError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub(crate) fn f64(&mut self) -> Result<f64, EngineError> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, EngineError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    fn i128(&mut self) -> Result<i128, EngineError> {
        Ok(i128::from_le_bytes(self.array()?))
    }
    pub(crate) fn str(&mut self) -> Result<String, EngineError> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| EngineError::Corrupt("catalog name is not UTF-8".into()))
    }
    fn value(&mut self) -> Result<Value, EngineError> {
        let n = self.u32()? as usize;
        let row = self.take(n)?;
        let mut values = decode_row(&[SqlType::Variant], row)
            .map_err(|e| EngineError::Corrupt(format!("extended property value: {e}")))?;
        values.pop().ok_or_else(|| EngineError::Corrupt("extended property value".into()))
    }
    fn opt_str(&mut self) -> Result<Option<String>, EngineError> {
        if self.u8()? != 0 {
            Ok(Some(self.str()?))
        } else {
            Ok(None)
        }
    }
    fn ty(&mut self) -> Result<SqlType, EngineError> {
        SqlType::decode(self.array()?)
            .ok_or_else(|| EngineError::Corrupt("unknown column type in the catalog".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Len;

    #[test]
    fn objects_round_trip() {
        let table = Object::Table(Arc::new(TableDef {
            id: 1000,
            schema: "dbo".into(),
            name: "Orders".into(),
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: SqlType::Int,
                    nullable: false,
                    identity: Some((1, 1)),
                    default: None,
                    computed: None,
                    rowversion: false,
                    collation: None,
                    declared: None,
                },
                ColumnDef {
                    name: "note".into(),
                    ty: SqlType::VarChar(Len::N(20)),
                    nullable: true,
                    identity: None,
                    default: Some("'x'".into()),
                    computed: None,
                    rowversion: false,
                    collation: Some("Latin1_General_CS_AS".into()),
                    declared: None,
                },
                ColumnDef {
                    name: "twice".into(),
                    ty: SqlType::Int,
                    nullable: true,
                    identity: None,
                    default: None,
                    computed: Some(Computed { text: "[id] * 2".into(), persisted: true }),
                    rowversion: false,
                    collation: None,
                    declared: None,
                },
                ColumnDef {
                    name: "rv".into(),
                    ty: SqlType::Binary(8),
                    nullable: false,
                    identity: None,
                    default: None,
                    computed: None,
                    rowversion: true,
                    collation: None,
                    declared: None,
                },
                ColumnDef {
                    name: "at".into(),
                    ty: SqlType::DateTime,
                    nullable: true,
                    identity: None,
                    default: None,
                    computed: None,
                    rowversion: false,
                    collation: None,
                    declared: Some(DeclaredType::SmallDateTime),
                },
            ],
            indexes: vec![IndexDef {
                id: 1,
                name: "PK_Orders".into(),
                columns: vec![0],
                unique: true,
                primary_key: true,
                unique_constraint: false,
                ignore_dup_key: true,
                root: 9,
            }],
            checks: vec![CheckDef { name: "CK".into(), text: "id > 0".into() }],
            foreign_keys: vec![ForeignKeyDef {
                name: "FK_Orders_Orders".into(),
                columns: vec![2],
                ref_table: 1000,
                ref_index: 1,
                on_delete: ReferentialAction::Cascade,
                on_update: ReferentialAction::SetNull,
                disabled: true,
            }],
            identity_high: 1000,
            created_micros: 5,
        }));
        assert_eq!(Object::decode(&table.encode()).unwrap(), table);
        let seq = Object::Sequence(SequenceDef {
            id: 1001,
            schema: "dbo".into(),
            name: "s".into(),
            ty: SqlType::BigInt,
            start: 1,
            increment: 1,
            min: i64::MIN.into(),
            max: i64::MAX.into(),
            cycle: false,
            cache: Some(50),
            high_water: Some(50),
        });
        assert_eq!(Object::decode(&seq.encode()).unwrap(), seq);
        let bytes = seq.encode();
        for n in 0..bytes.len() {
            assert!(Object::decode(&bytes[..n]).is_err());
        }
        let view = Object::View(ViewDef {
            id: 1002,
            schema: "dbo".into(),
            name: "v".into(),
            text: "CREATE VIEW v AS SELECT 1 AS x".into(),
        });
        assert_eq!(Object::decode(&view.encode()).unwrap(), view);
        assert_eq!(view.encode()[0], 4);
        let property = |class, major_id, minor_id, name: &str, value| ExtendedProperty {
            class,
            major_id,
            minor_id,
            name: name.into(),
            value,
        };
        let properties = Object::Properties(PropertiesDef {
            entries: vec![
                property(1, 1001, 0, "MS_Description", Value::NStr("a table".into())),
                property(1, 1001, 2, "Caption", Value::Int(7)),
                property(0, 0, 0, "Owner", Value::Null),
            ],
        });
        assert_eq!(Object::decode(&properties.encode()).unwrap(), properties);
        assert_eq!(properties.encode()[0], 8);
        assert_eq!(properties.id(), PROPERTIES_ID);
        let phone = Object::Type(TypeDef {
            id: 1012,
            schema: "dbo".into(),
            name: "Phone".into(),
            base: SqlType::VarChar(crate::types::Len::N(20)),
            nullable: false,
            table: None,
        });
        let hex: Vec<String> = phone.encode().iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(
            hex.join(" "),
            "09 F4 03 00 00 03 00 00 00 64 62 6F 05 00 00 00 50 68 6F 6E 65 A7 14 00 00 00 00"
        );
        let table_type = Object::Type(TypeDef {
            id: 1013,
            schema: "dbo".into(),
            name: "IdList".into(),
            base: SqlType::Int,
            nullable: true,
            table: Some("Id INT PRIMARY KEY".into()),
        });
        assert_eq!(Object::decode(&table_type.encode()).unwrap(), table_type);
        let documented = Object::Properties(PropertiesDef {
            entries: vec![property(1, 1000, 2, "P", Value::Int(42))],
        });
        let hex: Vec<String> = documented.encode().iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(
            hex.join(" "),
            "08 01 00 00 00 01 E8 03 00 00 02 00 00 00 01 00 00 00 50 \
             10 00 00 00 00 01 00 06 00 00 10 00 38 00 00 00 2A 00 00 00"
        );
        let doc = include_str!("../../../docs/format/catalog.md");
        assert!(doc.contains("10 00 00 00 | 00 01 00 06 00 00 10 00 38 00 00 00 2A 00 00 00"));
        let bytes = properties.encode();
        for n in 0..bytes.len() {
            assert!(Object::decode(&bytes[..n]).is_err());
        }
        let function = Object::Function(FunctionDef {
            id: 1003,
            schema: "dbo".into(),
            name: "f".into(),
            returns_table: false,
            multi_statement: false,
            text: "CREATE FUNCTION dbo.f() RETURNS INT AS BEGIN RETURN 1 END".into(),
        });
        assert_eq!(Object::decode(&function.encode()).unwrap(), function);
        assert_eq!(function.encode()[0], 5);
        let multi = Object::Function(FunctionDef {
            id: 1005,
            schema: "dbo".into(),
            name: "tf".into(),
            returns_table: true,
            multi_statement: true,
            text: "CREATE FUNCTION dbo.tf() RETURNS @t TABLE (a INT) AS BEGIN RETURN END".into(),
        });
        assert_eq!(Object::decode(&multi.encode()).unwrap(), multi);
        assert_eq!(multi.type_code(), "TF");
        let trigger = Object::Trigger(TriggerDef {
            id: 1004,
            schema: "dbo".into(),
            name: "t".into(),
            table: 1000,
            disabled: true,
            text: "CREATE TRIGGER t ON Orders AFTER INSERT AS SELECT 1".into(),
        });
        assert_eq!(Object::decode(&trigger.encode()).unwrap(), trigger);
        assert_eq!(trigger.encode()[0], 6);
        let schema = Object::Schema(SchemaDef { id: 1006, name: "sales".into() });
        assert_eq!(Object::decode(&schema.encode()).unwrap(), schema);
        assert_eq!(schema.encode()[0], 7);
    }

    #[test]
    fn ddl_triggers_have_no_name_entry_and_leave_a_schema_of_their_name_alone() {
        let ddl = Object::Trigger(TriggerDef {
            id: 1001,
            schema: String::new(),
            name: "audit".into(),
            table: DATABASE_TRIGGER_PARENT,
            disabled: false,
            text: "CREATE TRIGGER audit ON DATABASE FOR CREATE_TABLE AS PRINT 1".into(),
        });
        let schema = Object::Schema(SchemaDef { id: 1000, name: "audit".into() });
        let mut c = Catalog::from_objects([schema, ddl]);
        assert!(c.has_database_triggers());
        assert_eq!(c.find("", "audit").map(|o| o.id()), Some(1000));
        assert_eq!(c.triggers_on(DATABASE_TRIGGER_PARENT)[0].id, 1001);
        c.remove(1001);
        assert!(!c.has_database_triggers());
        assert_eq!(c.find("", "audit").map(|o| o.id()), Some(1000), "the schema is still found");
    }

    #[test]
    fn triggers_are_found_by_table_in_id_order_and_forgotten_when_dropped() {
        let trigger = |id, table| {
            Object::Trigger(TriggerDef {
                id,
                schema: "dbo".into(),
                name: format!("t{id}"),
                table,
                disabled: false,
                text: String::new(),
            })
        };
        let mut c = Catalog::from_objects([trigger(1012, 7), trigger(1010, 7), trigger(1011, 8)]);
        let ids =
            |c: &Catalog, table| c.triggers_on(table).iter().map(|t| t.id).collect::<Vec<_>>();
        assert_eq!(ids(&c, 7), [1010, 1012]);
        assert_eq!(ids(&c, 8), [1011]);
        c.put(trigger(1010, 7));
        assert_eq!(ids(&c, 7), [1010, 1012], "replacing a trigger keeps one entry");
        c.remove(1012);
        c.remove(1011);
        assert_eq!(ids(&c, 7), [1010]);
        assert!(c.triggers_on(8).is_empty());
        assert!(!c.triggers.contains_key(&8));
    }
}
