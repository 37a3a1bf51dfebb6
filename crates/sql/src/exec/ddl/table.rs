//! CREATE TABLE and the table definitions it shares with table variables and table types:
//! columns (identity, computed, collation), CHECK, PRIMARY KEY, UNIQUE and FOREIGN KEY
//! constraints, inline indexes, and the key types an index can order.

use std::sync::Arc;

use walden_engine::catalog::{CheckDef, ColumnDef, Computed};
use walden_engine::objects::IndexSpec;
use walden_engine::types::{SqlType, Value};

use super::ignore_dup_key_of;
use crate::ast::{
    Clustering, ColumnConstraintKind, ColumnOption, CreateTable, Expr, ExprKind, Ident, ObjectName,
    TableConstraintKind, TableElement, TableOption,
};
use crate::exec::dml::foreign_key::ForeignKeySpec;
use crate::exec::eval::{Col, Env};
use crate::exec::scalar;
use crate::exec::scalar::sequential_guid;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// What made one of a table definition's indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    PrimaryKey,
    /// A UNIQUE constraint.
    Unique,
    /// An inline `INDEX`, unique or not.
    Index {
        unique: bool,
    },
}

/// What a table definition declares.
pub(crate) struct TableParts {
    pub(crate) columns: Vec<ColumnDef>,
    pub(crate) checks: Vec<CheckDef>,
    pub(crate) indexes: Vec<IndexSpec>,
    /// Resolved once the table exists: a table may reference itself.
    pub(crate) foreign_keys: Vec<ForeignKeySpec>,
}

/// An index a table definition asks for, as written: name, what made it, clustering, columns,
/// `IGNORE_DUP_KEY = ON`.
type KeySpec = (Option<Ident>, Origin, Option<Clustering>, Vec<String>, bool);

/// Error 2749 unless `ty` can be an identity column's type (integers, decimal with scale 0).
pub(crate) fn check_identity_type(ty: SqlType, column: &str) -> Result<(), SqlError> {
    if matches!(
        ty,
        SqlType::TinyInt
            | SqlType::SmallInt
            | SqlType::Int
            | SqlType::BigInt
            | SqlType::Decimal { scale: 0, .. }
    ) {
        return Ok(());
    }
    Err(SqlError::new(
        2749,
        format!(
            "Identity column '{column}' must be of data type int, bigint, smallint, tinyint, or \
             decimal or numeric with a scale of 0, and constrained to be nonnullable."
        ),
    ))
}

/// The text a column's DEFAULT is kept as, which `sys.default_constraints.definition` shows in
/// parentheses: as written, except that `NEXT VALUE FOR s` names its sequence as SQL Server
/// keeps it, `[dbo].[s]`, since scripts read the sequence's name back from that text
/// (BenchBase strips `(NEXT VALUE FOR [` and `])` to restart the sequence after a load).
pub(crate) fn default_text(e: &Expr) -> String {
    match &e.kind {
        ExprKind::NextValueFor(next) if next.sequence.database.is_none() && next.over.is_none() => {
            let part = |s: &str| format!("[{}]", s.replace(']', "]]"));
            let schema = next.sequence.schema.as_ref().map_or("dbo", |s| s.value.as_str());
            format!("NEXT VALUE FOR {}.{}", part(schema), part(&next.sequence.name.value))
        }
        _ => e.to_string(),
    }
}

/// A constraint name in SQL Server's shape, `PK__table__hex`. The hex part is a hash of the
/// database, table and constraint number, so that names are unique and repeatable.
pub(crate) fn generated_name(prefix: &str, db: &str, table: &str, seq: u64) -> String {
    let short: String = table.trim_start_matches('#').chars().take(8).collect();
    // FNV-1a.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in db
        .bytes()
        .chain([0])
        .chain(table.bytes())
        .chain([0])
        .chain(prefix.bytes())
        .chain(seq.to_le_bytes())
    {
        h = (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{prefix}__{short}__{h:016X}")
}

/// Error 1919 for a key column of a type Walden cannot order in an index: SQL_VARIANT (SQL
/// Server orders variants by type family first; Walden's key encoding does not) and XML, which
/// is not comparable at all.
pub(crate) fn check_key_types(
    table: &str,
    columns: &[ColumnDef],
    keys: &[usize],
) -> Result<(), SqlError> {
    match keys
        .iter()
        .filter_map(|&k| columns.get(k))
        .find(|c| matches!(c.ty, SqlType::Variant | SqlType::Xml))
    {
        Some(c) => Err(SqlError::new(
            1919,
            format!(
                "Column '{}' in table '{table}' is of a type that is invalid for use as a key \
                 column in an index.",
                c.name
            ),
        )),
        None => Ok(()),
    }
}

/// What the catalog keeps of a column's `COLLATE name`: error 448 for a name SQL Server
/// does not have, 447 for a column whose type is not text; None for the default
/// (`DATABASE_DEFAULT`, or the default's own name), else the name as Walden spells it.
pub(crate) fn column_collation(name: &str, ty: SqlType) -> Result<Option<String>, SqlError> {
    let collation = crate::exec::scalar::collation::collation_ref(name)?;
    if !ty.is_text() {
        return Err(SqlError::new(
            447,
            format!(
                "Expression type {} is invalid for COLLATE clause.",
                ty.name().split('(').next().unwrap_or_default()
            ),
        ));
    }
    Ok(crate::exec::scalar::collation::stored(Some(collation), ty))
}

impl Run<'_> {
    /// `CREATE TABLE`. `MEMORY_OPTIMIZED = ON` makes an ordinary table (Walden has no
    /// In-Memory OLTP engine; its B+trees, locks and log serve instead), which keeps its rows
    /// as `DURABILITY = SCHEMA_AND_DATA` does; `SCHEMA_ONLY`, whose rows would be gone after a
    /// restart, is refused rather than silently made durable.
    pub(super) fn create_table(&mut self, c: &CreateTable, line: u32) -> Result<(), SqlError> {
        if c.options.contains(&TableOption::SchemaAndData(false)) {
            return Err(SqlError::new(
                50000,
                format!(
                    "Cannot create table '{}': DURABILITY = SCHEMA_ONLY is not supported by \
                     Walden, whose tables all keep their rows (use SCHEMA_AND_DATA, or a \
                     #temporary table).",
                    c.name.name.value
                ),
            ));
        }
        self.check_schema_exists(&c.name)?;
        let TableParts { columns, checks, indexes, foreign_keys } =
            self.table_elements(&c.name.name.value, &c.elements)?;
        if columns.iter().any(|c| c.rowversion) {
            let db = if c.name.name.value.starts_with('#') {
                Arc::clone(self.s.instance.tempdb())
            } else {
                self.database_of(c.name.database.as_ref())?
            };
            self.tx().ensure_rowversion_sequence(&db).map_err(|e| self.s.engine_error(e))?;
        }
        let t = self.create_table_def(&c.name, columns, checks, &indexes)?;
        self.add_foreign_keys(&t, &foreign_keys, true).map_err(|e| {
            let cause = e.at_line(line);
            self.constraint_failed(cause, line)
        })
    }

    /// Error 2760 for a table named in a schema its database does not have: not a fixed
    /// schema, not made by CREATE SCHEMA, and (Walden having once recorded schemas only as
    /// its objects' schema names) not the schema of any object already there.
    fn check_schema_exists(&mut self, name: &ObjectName) -> Result<(), SqlError> {
        let Some(schema) = &name.schema else { return Ok(()) };
        if name.name.value.starts_with('#') {
            return Ok(());
        }
        let db = self.database_of(name.database.as_ref())?;
        let known = crate::exec::sysviews::schema_list(&db.catalog().objects());
        if known.iter().any(|(n, _, _)| n.eq_ignore_ascii_case(&schema.value)) {
            return Ok(());
        }
        Err(SqlError::new(
            2760,
            format!(
                "The specified schema name \"{}\" either does not exist or you do not have \
                 permission to use it.",
                schema.value
            ),
        ))
    }

    /// Columns, CHECK constraints and indexes of a table definition.
    pub(crate) fn table_elements(
        &mut self,
        table: &str,
        elements: &[TableElement],
    ) -> Result<TableParts, SqlError> {
        let mut columns: Vec<ColumnDef> = Vec::new();
        let mut checks = Vec::new();
        let mut foreign_keys = Vec::new();
        // Computed columns: their position and expression, typed once every column is known.
        let mut computed: Vec<(usize, &crate::ast::Expr, bool)> = Vec::new();
        let mut keys: Vec<KeySpec> = Vec::new();
        // Columns declared NULL in so many words: a PRIMARY KEY on one is 8111, where a column
        // that says nothing becomes NOT NULL.
        let mut declared_null: Vec<String> = Vec::new();
        let mut seq = 0u64;
        let db = self.s.db.name().to_string();
        for e in elements {
            match e {
                TableElement::Column(col) => {
                    if columns.iter().any(|x| x.name.eq_ignore_ascii_case(&col.name.value)) {
                        return Err(SqlError::new(2705, format!("Column names in each table must be unique. Column name '{}' in table '{table}' is specified more than once.", col.name.value)));
                    }
                    // A computed column's type is its expression's (`type_computed_columns`).
                    let is_computed =
                        col.options.iter().any(|o| matches!(o, ColumnOption::Computed { .. }));
                    let ty =
                        if is_computed { SqlType::Int } else { self.resolve_type(&col.data_type)? };
                    // An alias type's NOT NULL is the column's default nullability; else the
                    // session's ANSI_NULL_DFLT_ON / _OFF decide.
                    let type_nullable = match self.user_type(&col.data_type) {
                        Some(t) => t.nullable,
                        None => self.s.opts.semantics.new_column_nullable(),
                    };
                    let mut def = ColumnDef {
                        name: col.name.value.clone(),
                        ty,
                        nullable: type_nullable,
                        identity: None,
                        default: None,
                        computed: None,
                        rowversion: false,
                        collation: None,
                        declared: crate::exec::ddl::user_types::declared_as(&col.data_type),
                    };
                    let type_name = col.data_type.name.name.value.to_ascii_lowercase();
                    if col.data_type.name.schema.is_none()
                        && (type_name == "rowversion" || type_name == "timestamp")
                    {
                        if columns.iter().any(|c| c.rowversion) {
                            return Err(SqlError::new(
                                2738,
                                format!("A table can only have one timestamp column. Because table '{table}' already has one, the column '{}' cannot be added.", col.name.value),
                            ));
                        }
                        def.rowversion = true;
                        def.nullable = false;
                    }
                    let mut explicit_null = false;
                    for o in &col.options {
                        match o {
                            ColumnOption::Null => {
                                explicit_null = true;
                                def.nullable = true;
                            }
                            ColumnOption::NotNull => def.nullable = false,
                            ColumnOption::Collate(name) if !is_computed => {
                                def.collation = column_collation(&name.value, ty)?;
                            }
                            ColumnOption::Collate(_) => {}
                            ColumnOption::RowGuidCol if ty != SqlType::UniqueIdentifier => {
                                return Err(SqlError::new(
                                    2761,
                                    "The ROWGUIDCOL property can only be specified on the \
                                     uniqueidentifier data type.",
                                ));
                            }
                            ColumnOption::RowGuidCol => {}
                            ColumnOption::Index { name, clustering } => keys.push((
                                Some(name.clone()),
                                Origin::Index { unique: false },
                                *clustering,
                                vec![col.name.value.clone()],
                                false,
                            )),
                            ColumnOption::Computed { expr, persisted } => {
                                computed.push((columns.len(), expr, *persisted));
                            }
                            ColumnOption::Identity(spec) => {
                                let (seed, inc) = match spec {
                                    Some(s) => (
                                        self.int_constant(&s.seed)?,
                                        self.int_constant(&s.increment)?,
                                    ),
                                    None => (1, 1),
                                };
                                check_identity_type(ty, &col.name.value)?;
                                def.identity = Some((seed, inc));
                                def.nullable = false;
                            }
                            ColumnOption::Constraint(cc) => match &cc.kind {
                                ColumnConstraintKind::PrimaryKey { clustering, ignore_dup_key } => {
                                    def.nullable = false;
                                    keys.push((
                                        cc.name.clone(),
                                        Origin::PrimaryKey,
                                        *clustering,
                                        vec![col.name.value.clone()],
                                        *ignore_dup_key,
                                    ));
                                }
                                ColumnConstraintKind::Unique { clustering, ignore_dup_key } => {
                                    keys.push((
                                        cc.name.clone(),
                                        Origin::Unique,
                                        *clustering,
                                        vec![col.name.value.clone()],
                                        *ignore_dup_key,
                                    ));
                                }
                                ColumnConstraintKind::Default(e) => {
                                    sequential_guid::check_default(
                                        e,
                                        ty == SqlType::UniqueIdentifier,
                                    )?;
                                    def.default = Some(default_text(e))
                                }
                                ColumnConstraintKind::Check(e) => {
                                    seq += 1;
                                    let name = cc.name.as_ref().map_or_else(
                                        || generated_name("CK", &db, table, seq),
                                        |n| n.value.clone(),
                                    );
                                    checks.push(CheckDef { name, text: e.to_string() });
                                }
                                ColumnConstraintKind::References(reference) => {
                                    foreign_keys.push(ForeignKeySpec {
                                        name: cc.name.as_ref().map(|n| n.value.clone()),
                                        columns: vec![col.name.value.clone()],
                                        reference: reference.clone(),
                                    });
                                }
                            },
                        }
                    }
                    if explicit_null && def.identity.is_some() {
                        def.nullable = false;
                    } else if explicit_null {
                        declared_null.push(def.name.clone());
                    }
                    columns.push(def);
                }
                TableElement::Index(index) => keys.push((
                    Some(index.name.clone()),
                    Origin::Index { unique: index.unique },
                    index.clustering,
                    index.columns.iter().map(|c| c.name.value.clone()).collect(),
                    index.ignore_dup_key,
                )),
                TableElement::Constraint(tc) => match &tc.kind {
                    TableConstraintKind::PrimaryKey {
                        clustering,
                        columns: cols,
                        ignore_dup_key,
                    } => {
                        keys.push((
                            tc.name.clone(),
                            Origin::PrimaryKey,
                            *clustering,
                            cols.iter().map(|c| c.name.value.clone()).collect(),
                            *ignore_dup_key,
                        ));
                    }
                    TableConstraintKind::Unique { clustering, columns: cols, ignore_dup_key } => {
                        keys.push((
                            tc.name.clone(),
                            Origin::Unique,
                            *clustering,
                            cols.iter().map(|c| c.name.value.clone()).collect(),
                            *ignore_dup_key,
                        ));
                    }
                    TableConstraintKind::Check(e) => {
                        seq += 1;
                        let name = tc.name.as_ref().map_or_else(
                            || generated_name("CK", &db, table, seq),
                            |n| n.value.clone(),
                        );
                        checks.push(CheckDef { name, text: e.to_string() });
                    }
                    TableConstraintKind::ForeignKey { columns: cols, reference } => {
                        foreign_keys.push(ForeignKeySpec {
                            name: tc.name.as_ref().map(|n| n.value.clone()),
                            columns: cols.iter().map(|c| c.value.clone()).collect(),
                            reference: reference.clone(),
                        });
                    }
                },
            }
        }
        self.type_computed_columns(table, &mut columns, &computed)?;
        if keys.iter().filter(|k| k.1 == Origin::PrimaryKey).count() > 1 {
            return Err(SqlError::new(
                8110,
                format!("Cannot add multiple PRIMARY KEY constraints to table '{table}'."),
            ));
        }
        let mut indexes = Vec::new();
        if keys.iter().filter(|k| k.2 == Some(Clustering::Clustered)).count() > 1 {
            return Err(SqlError::new(
                8112,
                format!(
                    "Cannot add more than one clustered index for constraints on table '{table}'."
                ),
            ));
        }
        let mut clustered_taken = keys.iter().any(|k| k.2 == Some(Clustering::Clustered));
        for (name, key, clustering, cols, ignore_dup_key) in keys {
            let pk = key == Origin::PrimaryKey;
            let mut idx = Vec::with_capacity(cols.len());
            for c in &cols {
                let Some(at) = columns.iter().position(|x| x.name.eq_ignore_ascii_case(c)) else {
                    // 1911, then 1750, as SQL Server sends both (tedious' tests expect them).
                    let cause = SqlError::new(
                        1911,
                        format!("Column name '{c}' does not exist in the target table or view."),
                    );
                    return Err(self.constraint_failed(cause, 0));
                };
                if pk && declared_null.iter().any(|n| n.eq_ignore_ascii_case(c)) {
                    let cause = SqlError::new(
                        8111,
                        format!(
                            "Cannot define PRIMARY KEY constraint on nullable column in table \
                             '{table}'."
                        ),
                    );
                    // Line 0: the report takes the running statement's line.
                    return Err(self.constraint_failed(cause, 0));
                }
                if pk {
                    columns[at].nullable = false;
                }
                idx.push(at);
            }
            // A primary key is clustered unless it says otherwise or another index is.
            let clustered = match clustering {
                Some(Clustering::Clustered) => true,
                Some(Clustering::Nonclustered) => false,
                None => pk && !clustered_taken,
            };
            if clustered {
                clustered_taken = true;
            }
            seq += 1;
            let name = name.map_or_else(
                || generated_name(if pk { "PK" } else { "UQ" }, &db, table, seq),
                |n| n.value,
            );
            check_key_types(table, &columns, &idx)?;
            indexes.push(IndexSpec {
                name,
                columns: idx,
                unique: !matches!(key, Origin::Index { unique: false }),
                clustered,
                primary_key: pk,
                unique_constraint: key == Origin::Unique,
                ignore_dup_key: ignore_dup_key_of(
                    ignore_dup_key,
                    key != Origin::Index { unique: false },
                )?,
            });
        }
        Ok(TableParts { columns, checks, indexes, foreign_keys })
    }

    /// Gives each computed column of `columns` its expression and type: the type the
    /// expression has over the table's columns, else the type of its value over a row of
    /// NULLs (which also refuses a column name the table does not have, 207). A computed
    /// column may not use another (1759), nor have a DEFAULT or IDENTITY, and a PERSISTED one
    /// may call no nondeterministic built-in function (4936), as in SQL Server.
    pub(crate) fn type_computed_columns(
        &mut self,
        table: &str,
        columns: &mut [ColumnDef],
        computed: &[(usize, &crate::ast::Expr, bool)],
    ) -> Result<(), SqlError> {
        if computed.is_empty() {
            return Ok(());
        }
        let cols: Vec<Col> = columns.iter().map(|c| Col::new(None, &c.name, c.ty)).collect();
        for &(at, expr, persisted) in computed {
            let text = expr.to_string();
            for &(other, _, _) in computed {
                let name = &columns[other].name;
                if other != at && crate::exec::ddl::alter::names_column(&text, name) {
                    return Err(SqlError::new(
                        1759,
                        format!("Computed column '{}' in table cannot be used in another computed-column definition.", name),
                    ));
                }
            }
            if persisted && !scalar::registry::is_deterministic(expr) {
                return Err(SqlError::new(
                    4936,
                    format!(
                        "Computed column '{}' in table '{table}' cannot be persisted because the column is non-deterministic.",
                        columns[at].name
                    ),
                ));
            }
            let nulls = vec![Value::Null; cols.len()];
            let value = self.eval(expr, &Env::new(&cols, &nulls, None))?;
            let ty = self.static_type(expr, &cols).unwrap_or_else(|| scalar::type_of(&value));
            let column = &mut columns[at];
            if column.default.is_some() || column.identity.is_some() {
                return Err(SqlError::new(
                    1752,
                    format!(
                        "Column '{}' is a computed column: it cannot have a DEFAULT or IDENTITY.",
                        column.name
                    ),
                ));
            }
            column.ty = ty;
            column.computed = Some(Computed { text, persisted });
        }
        Ok(())
    }

    /// DECLARE @t TABLE (...): a table in tempdb that lives as long as the batch (or the
    /// procedure call) that declared it.
    pub(crate) fn declare_table_variable(
        &mut self,
        name: &str,
        elements: &[TableElement],
    ) -> Result<(), SqlError> {
        let TableParts { columns, checks, indexes, .. } = self.table_elements(name, elements)?;
        let key = name.to_ascii_lowercase();
        if let Some(outer) = self.s.temp_tables.get(&key).cloned() {
            let frame = self.frame();
            let here = frame.temp_created.contains(&key)
                || frame.hidden_tables.iter().any(|(n, _, _)| *n == key);
            if here {
                return Err(SqlError::with_severity(134, 15, format!("The variable name '{name}' has already been declared. Variable names must be unique within a query batch or stored procedure.")));
            }
            // A caller's table variable of that name: hidden until this frame ends.
            frame.hidden_tables.push((key.clone(), Some(outer), false));
        }
        let internal = self.s.temp_internal_name(&format!("#{}", name.trim_start_matches('@')));
        let tempdb = Arc::clone(self.s.instance.tempdb());
        let def = walden_engine::catalog::TableDef {
            id: 0,
            schema: "dbo".to_string(),
            name: internal.clone(),
            columns,
            indexes: Vec::new(),
            checks,
            foreign_keys: Vec::new(),
            identity_high: 0,
            created_micros: 0,
        };
        self.tx().create_table(&tempdb, def, &indexes).map_err(|e| self.s.engine_error(e))?;
        self.s.temp_tables.insert(key.clone(), internal);
        self.note_table_variable(&key);
        Ok(())
    }
}
