//! Schema objects other than modules: tables (columns, constraints, inline indexes), indexes,
//! user-defined types, sequences, and `DROP`.

use super::{DataType, Expr, Ident, ObjectName};

/// `CREATE TABLE name (element, ...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    /// The table name (`#temp` names included).
    pub name: ObjectName,
    /// Columns and table constraints in order.
    pub elements: Vec<TableElement>,
    /// `WITH (MEMORY_OPTIMIZED = ON | OFF, DURABILITY = ...)`.
    pub options: Vec<TableOption>,
}

/// An option of `CREATE TABLE ... WITH (...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOption {
    /// `MEMORY_OPTIMIZED = ON | OFF`.
    MemoryOptimized(bool),
    /// `DURABILITY = SCHEMA_AND_DATA` (`true`) or `SCHEMA_ONLY` (`false`).
    SchemaAndData(bool),
}

/// One element of a table definition.
#[derive(Debug, Clone, PartialEq)]
pub enum TableElement {
    /// A column definition.
    Column(ColumnDef),
    /// A table-level constraint.
    Constraint(TableConstraint),
    /// `INDEX name [UNIQUE] [CLUSTERED | NONCLUSTERED] (columns)`: an index made with the
    /// table (SQL Server 2014's inline index syntax).
    Index(InlineIndex),
}

/// An index declared in a table's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineIndex {
    /// The index name.
    pub name: Ident,
    /// `UNIQUE`.
    pub unique: bool,
    /// Index kind, if given (the default is nonclustered).
    pub clustering: Option<Clustering>,
    /// Key columns; for `INDEX` after a column's type, that column.
    pub columns: Vec<IndexColumn>,
    /// `WITH (IGNORE_DUP_KEY = ON)`.
    pub ignore_dup_key: bool,
}

/// `name type [option ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// The column name.
    pub name: Ident,
    /// The column type.
    pub data_type: DataType,
    /// Nullability, identity, collation and constraints, in source order (the binder rejects
    /// contradictions such as `NULL NOT NULL`).
    pub options: Vec<ColumnOption>,
}

/// Column options.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnOption {
    /// `NULL`
    Null,
    /// `NOT NULL`
    NotNull,
    /// `COLLATE name`
    Collate(Ident),
    /// `IDENTITY [(seed, increment)]`; `None` means `(1, 1)`.
    Identity(Option<IdentitySpec>),
    /// `INDEX name [CLUSTERED | NONCLUSTERED]`: an index on this column alone.
    Index {
        /// The index name.
        name: Ident,
        /// Index kind, if given.
        clustering: Option<Clustering>,
    },
    /// `[CONSTRAINT name] PRIMARY KEY | UNIQUE | DEFAULT | CHECK`.
    Constraint(ColumnConstraint),
    /// `ROWGUIDCOL`: marks a uniqueidentifier column as the table's row GUID (`$ROWGUID`),
    /// which only replication and FILESTREAM use; Walden checks the type and keeps nothing.
    RowGuidCol,
    /// `AS expression [PERSISTED]`: a computed column, which has no declared type (its
    /// `data_type` is left as `sql_variant`; the binder takes the expression's).
    Computed {
        /// The expression.
        expr: Expr,
        /// `PERSISTED`.
        persisted: bool,
    },
}

/// `IDENTITY(seed, increment)`: signed numeric constants.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentitySpec {
    /// The first value.
    pub seed: Expr,
    /// The step.
    pub increment: Expr,
}

/// A column constraint and its optional name.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnConstraint {
    /// `CONSTRAINT name`.
    pub name: Option<Ident>,
    /// The constraint.
    pub kind: ColumnConstraintKind,
}

/// Column constraints.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnConstraintKind {
    /// `PRIMARY KEY [CLUSTERED | NONCLUSTERED] [WITH (...)]`
    PrimaryKey {
        /// Index kind, if given.
        clustering: Option<Clustering>,
        /// `WITH (IGNORE_DUP_KEY = ON)`.
        ignore_dup_key: bool,
    },
    /// `UNIQUE [CLUSTERED | NONCLUSTERED] [WITH (...)]`
    Unique {
        /// Index kind, if given.
        clustering: Option<Clustering>,
        /// `WITH (IGNORE_DUP_KEY = ON)`.
        ignore_dup_key: bool,
    },
    /// `DEFAULT expression`
    Default(Expr),
    /// `CHECK (condition)`
    Check(Expr),
    /// `[FOREIGN KEY] REFERENCES table [(column)] ...`
    References(ForeignKeyReference),
}

/// A table-level constraint and its optional name.
#[derive(Debug, Clone, PartialEq)]
pub struct TableConstraint {
    /// `CONSTRAINT name`.
    pub name: Option<Ident>,
    /// The constraint.
    pub kind: TableConstraintKind,
}

/// Table-level constraints.
#[derive(Debug, Clone, PartialEq)]
pub enum TableConstraintKind {
    /// `PRIMARY KEY [CLUSTERED | NONCLUSTERED] (column [ASC | DESC], ...)`
    PrimaryKey {
        /// Index kind, if given.
        clustering: Option<Clustering>,
        /// Key columns.
        columns: Vec<IndexColumn>,
        /// `WITH (IGNORE_DUP_KEY = ON)`.
        ignore_dup_key: bool,
    },
    /// `UNIQUE [CLUSTERED | NONCLUSTERED] (column [ASC | DESC], ...)`
    Unique {
        /// Index kind, if given.
        clustering: Option<Clustering>,
        /// Key columns.
        columns: Vec<IndexColumn>,
        /// `WITH (IGNORE_DUP_KEY = ON)`.
        ignore_dup_key: bool,
    },
    /// `CHECK (condition)`
    Check(Expr),
    /// `FOREIGN KEY (column, ...) REFERENCES table [(column, ...)] [ON DELETE ...] [ON UPDATE ...]`
    ForeignKey {
        /// The referencing columns.
        columns: Vec<Ident>,
        /// What they reference.
        reference: ForeignKeyReference,
    },
}

/// `REFERENCES table [(column, ...)] [ON DELETE action] [ON UPDATE action]`, the referenced
/// side of a FOREIGN KEY.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignKeyReference {
    /// The referenced table.
    pub table: ObjectName,
    /// The referenced columns; empty: the table's primary key.
    pub columns: Vec<Ident>,
    /// `ON DELETE`.
    pub on_delete: ReferentialAction,
    /// `ON UPDATE`.
    pub on_update: ReferentialAction,
}

/// `NO ACTION | CASCADE | SET NULL | SET DEFAULT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReferentialAction {
    /// `NO ACTION` (the default).
    #[default]
    NoAction,
    /// `CASCADE`
    Cascade,
    /// `SET NULL`
    SetNull,
    /// `SET DEFAULT`
    SetDefault,
}

/// `CLUSTERED` or `NONCLUSTERED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clustering {
    /// `CLUSTERED`
    Clustered,
    /// `NONCLUSTERED`
    Nonclustered,
}

/// A key column of an index or key constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexColumn {
    /// The column.
    pub name: Ident,
    /// `DESC` (the default is ascending).
    pub descending: bool,
}

/// `CREATE [UNIQUE] [CLUSTERED | NONCLUSTERED] INDEX name ON table (columns) [INCLUDE (...)]
/// [WHERE filter]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateIndex {
    /// `UNIQUE`.
    pub unique: bool,
    /// Index kind, if given (SQL Server defaults to nonclustered).
    pub clustering: Option<Clustering>,
    /// The index name.
    pub name: Ident,
    /// The table.
    pub table: ObjectName,
    /// Key columns.
    pub columns: Vec<IndexColumn>,
    /// `INCLUDE` columns.
    pub include: Vec<Ident>,
    /// `WHERE` filter of a filtered index.
    pub filter: Option<Expr>,
    /// `WITH (DROP_EXISTING = ON)`: the index of this name is dropped and built again.
    pub drop_existing: bool,
    /// `WITH (IGNORE_DUP_KEY = ON)`: an INSERT skips a duplicate row of a unique index.
    pub ignore_dup_key: bool,
}

/// `CREATE TYPE name FROM base_type [NULL | NOT NULL]` or `CREATE TYPE name AS TABLE (...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateType {
    /// The type's name.
    pub name: ObjectName,
    /// What it is.
    pub definition: TypeDefinition,
}

/// The two kinds of user-defined type Walden has.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeDefinition {
    /// An alias of a system type, with the nullability its columns default to (`None`: NULL).
    Alias {
        /// The base type.
        data_type: DataType,
        /// `NULL` / `NOT NULL`.
        nullable: Option<bool>,
    },
    /// A table type: the columns and constraints of the table variables declared with it.
    Table(Vec<TableElement>),
}

/// `CREATE SEQUENCE name [option ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateSequence {
    /// The sequence name.
    pub name: ObjectName,
    /// Options in source order (the binder rejects duplicates).
    pub options: Vec<SequenceOption>,
}

/// Sequence options. Values are signed numeric constants.
#[derive(Debug, Clone, PartialEq)]
pub enum SequenceOption {
    /// `AS type`
    DataType(DataType),
    /// `START WITH value`
    StartWith(Expr),
    /// `INCREMENT BY value`
    IncrementBy(Expr),
    /// `MINVALUE value`, or `NO MINVALUE` (`None`).
    MinValue(Option<Expr>),
    /// `MAXVALUE value`, or `NO MAXVALUE` (`None`).
    MaxValue(Option<Expr>),
    /// `CYCLE` (`true`) or `NO CYCLE` (`false`).
    Cycle(bool),
    /// `CACHE [size]`; without a size SQL Server picks one.
    Cache(Option<Expr>),
    /// `RESTART [WITH value]` (ALTER SEQUENCE's; 11709 in CREATE): the next value, or the
    /// start value.
    Restart(Option<Expr>),
    /// `NO CACHE`
    NoCache,
}

/// The kinds of object `DROP` removes by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropKind {
    /// `DROP DATABASE` (names have no prefixes).
    Database,
    /// `DROP TABLE`
    Table,
    /// `DROP SEQUENCE`
    Sequence,
    /// `DROP PROC[EDURE]`
    Procedure,
    /// `DROP VIEW`
    View,
    /// `DROP FUNCTION`
    Function,
    /// `DROP TRIGGER`
    Trigger,
    /// `DROP TRIGGER name, ... ON DATABASE`: DDL triggers (names have no prefixes).
    DatabaseTrigger,
    /// `DROP TRIGGER name, ... ON ALL SERVER`: server-level DDL triggers, which Walden does
    /// not have.
    ServerTrigger,
    /// `DROP SCHEMA`
    Schema,
    /// `DROP TYPE`
    Type,
    /// `DROP STATISTICS table.name`: each name is the table's name with the statistics'
    /// name as its last part.
    Statistics,
    /// `DROP SYNONYM`: Walden has no synonyms (`CREATE SYNONYM` is not parsed), so none is
    /// ever found.
    Synonym,
}

/// `DROP kind [IF EXISTS] name, ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropObjects {
    /// What is dropped.
    pub kind: DropKind,
    /// `IF EXISTS`: missing objects are not an error.
    pub if_exists: bool,
    /// The objects, at least one.
    pub names: Vec<ObjectName>,
}

/// `DROP INDEX [IF EXISTS] index ON table, ...` (or the old `table.index` form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropIndex {
    /// `IF EXISTS`.
    pub if_exists: bool,
    /// The indexes, at least one.
    pub indexes: Vec<IndexRef>,
}

/// An index and its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexRef {
    /// The index name.
    pub name: Ident,
    /// The table it belongs to.
    pub table: ObjectName,
}
