//! `ALTER TABLE ... ADD`: new columns, each existing row given its value for them (NULL,
//! the DEFAULT, a computed or rowversion value) as the table is rebuilt, and new CHECK,
//! PRIMARY KEY, UNIQUE and FOREIGN KEY constraints.

use std::sync::Arc;

use walden_engine::catalog::{CheckDef, IndexDef, Object, TableDef};
use walden_engine::objects::IndexSpec;
use walden_engine::types::{SqlType, Value};

use super::{cannot_find, unsupported};
use crate::ast::{
    AlterAdd, Clustering, ColumnConstraintKind, ColumnOption, DataType, Expr, Ident, ObjectName,
    TableConstraintKind, TableElement,
};
use crate::exec::ddl::{generated_name, TableParts};
use crate::exec::dml::foreign_key::ForeignKeySpec;
use crate::exec::execute::query::TableRef;
use crate::exec::scalar::sequential_guid;
use crate::exec::session::Run;
use crate::exec::SqlError;

/// A PRIMARY KEY or UNIQUE constraint of `ALTER TABLE ... ADD`, as written.
struct KeyConstraint {
    name: Option<Ident>,
    primary_key: bool,
    clustering: Option<Clustering>,
    columns: Vec<Ident>,
    ignore_dup_key: bool,
}

/// How an existing row gets a value for a column added by `ALTER TABLE ... ADD`.
enum Fill {
    /// NULL (or the identity value the engine gives).
    Null,
    /// The column's DEFAULT, evaluated for each row.
    Default(Arc<Expr>),
    /// None: the column is NOT NULL without a default, so the table must be empty (4901).
    EmptyTableOnly,
    /// A computed column: computed from the row once every new column has its value.
    Computed,
    /// A `rowversion` column: the database's next row version for each row.
    RowVersion,
}

impl Run<'_> {
    /// `ALTER TABLE ... ADD`: columns, CHECK constraints and DEFAULTs.
    pub(super) fn alter_add(
        &mut self,
        t: &TableRef,
        shown: &str,
        nocheck: bool,
        items: &[AlterAdd],
        line: u32,
    ) -> Result<(), SqlError> {
        let mut new = TableDef::clone(&t.def);
        let mut fills: Vec<Fill> = Vec::new();
        let mut added_checks: Vec<CheckDef> = Vec::new();
        let mut keys: Vec<KeyConstraint> = Vec::new();
        let mut fks: Vec<ForeignKeySpec> = Vec::new();
        for item in items {
            match item {
                AlterAdd::Element { element: TableElement::Column(c), with_values } => {
                    if new.column(&c.name.value).is_some() {
                        return Err(SqlError::new(
                            2705,
                            format!(
                                "Column names in each table must be unique. Column name '{}' in \
                                 table '{shown}' is specified more than once.",
                                c.name.value
                            ),
                        ));
                    }
                    // A computed column is typed over the table's columns, not alone.
                    let computed = c.options.iter().find_map(|o| match o {
                        ColumnOption::Computed { expr, persisted } => Some((expr, *persisted)),
                        _ => None,
                    });
                    let mut plain = c.clone();
                    if computed.is_some() {
                        plain.options.retain(|o| !matches!(o, ColumnOption::Computed { .. }));
                        plain.data_type = DataType {
                            name: ObjectName::simple(Ident::new("int".to_string())),
                            params: Vec::new(),
                        };
                    }
                    let TableParts { mut columns, checks, indexes, foreign_keys } =
                        self.table_elements(shown, &[TableElement::Column(plain)])?;
                    if let Some((expr, persisted)) = computed {
                        let Some(col) = columns.pop() else { continue };
                        let mut all = new.columns.clone();
                        all.push(col);
                        let at = all.len() - 1;
                        self.type_computed_columns(shown, &mut all, &[(at, expr, persisted)])?;
                        columns.extend(all.pop());
                    }
                    fks.extend(foreign_keys);
                    if !indexes.is_empty() {
                        return Err(unsupported(
                            "ADD of a column with a PRIMARY KEY or UNIQUE constraint",
                        ));
                    }
                    let Some(col) = columns.pop() else { continue };
                    if col.identity.is_some() && new.identity_column().is_some() {
                        return Err(SqlError::new(
                            2744,
                            format!(
                                "Multiple identity columns specified for table '{shown}'. Only \
                                 one identity column per table is allowed."
                            ),
                        ));
                    }
                    if col.rowversion && new.columns.iter().any(|c| c.rowversion) {
                        return Err(SqlError::new(
                            2738,
                            format!("A table can only have one timestamp column. Because table '{shown}' already has one, the column '{}' cannot be added.", col.name),
                        ));
                    }
                    if col.rowversion {
                        let db = Arc::clone(&t.db);
                        self.tx()
                            .ensure_rowversion_sequence(&db)
                            .map_err(|e| self.s.engine_error(e))?;
                    }
                    let fill = match &col.default {
                        _ if col.rowversion => Fill::RowVersion,
                        _ if col.computed.is_some() => Fill::Computed,
                        _ if col.identity.is_some() => Fill::Null,
                        Some(text) if !col.nullable || *with_values => {
                            Fill::Default(self.stored_expr(text)?)
                        }
                        _ if col.nullable => Fill::Null,
                        _ => Fill::EmptyTableOnly,
                    };
                    // A column's CHECK keeps its name if written, else gets a free one.
                    let written: Vec<&Ident> = c
                        .options
                        .iter()
                        .filter_map(|o| match o {
                            ColumnOption::Constraint(cc)
                                if matches!(cc.kind, ColumnConstraintKind::Check(_)) =>
                            {
                                cc.name.as_ref()
                            }
                            _ => None,
                        })
                        .collect();
                    new.columns.push(col);
                    fills.push(fill);
                    for check in checks {
                        let named = written.iter().copied().find(|n| n.value == check.name);
                        let name = self.check_name(&new, named, &check.name, line)?;
                        let check = CheckDef { name, text: check.text };
                        new.checks.push(check.clone());
                        added_checks.push(check);
                    }
                }
                // T-SQL adds indexes with CREATE INDEX, not ALTER TABLE ADD.
                AlterAdd::Element { element: TableElement::Index(_), .. } => {
                    return Err(SqlError::with_severity(
                        156,
                        15,
                        "Incorrect syntax near the keyword 'INDEX'.",
                    ));
                }
                AlterAdd::Element { element: TableElement::Constraint(tc), .. } => {
                    let e = match &tc.kind {
                        TableConstraintKind::Check(e) => e,
                        TableConstraintKind::PrimaryKey { clustering, columns, ignore_dup_key }
                        | TableConstraintKind::Unique { clustering, columns, ignore_dup_key } => {
                            let pk = matches!(tc.kind, TableConstraintKind::PrimaryKey { .. });
                            let columns = columns.iter().map(|c| c.name.clone()).collect();
                            keys.push(KeyConstraint {
                                name: tc.name.clone(),
                                primary_key: pk,
                                clustering: *clustering,
                                columns,
                                ignore_dup_key: *ignore_dup_key,
                            });
                            continue;
                        }
                        TableConstraintKind::ForeignKey { columns, reference } => {
                            fks.push(ForeignKeySpec {
                                name: tc.name.as_ref().map(|n| n.value.clone()),
                                columns: columns.iter().map(|c| c.value.clone()).collect(),
                                reference: reference.clone(),
                            });
                            continue;
                        }
                    };
                    let db = self.s.db.name().to_string();
                    let generated =
                        generated_name("CK", &db, &new.name, new.checks.len() as u64 + 1);
                    let name = self.check_name(&new, tc.name.as_ref(), &generated, line)?;
                    let check = CheckDef { name, text: e.to_string() };
                    new.checks.push(check.clone());
                    added_checks.push(check);
                }
                AlterAdd::DefaultFor { value, column, .. } => {
                    let Some(c) = new.column(&column.value) else {
                        return Err(SqlError::new(
                            1752,
                            format!(
                                "Column '{}' in table '{shown}' is invalid for creating a \
                                 default constraint.",
                                column.value
                            ),
                        ));
                    };
                    if new.columns[c].default.is_some() {
                        let bound =
                            SqlError::new(1781, "Column already has a DEFAULT bound to it.");
                        self.report_all(vec![bound], line);
                        return Err(SqlError::new(
                            1750,
                            "Could not create constraint or index. See previous errors.",
                        ));
                    }
                    if new.columns[c].identity.is_some() {
                        return Err(SqlError::new(
                            1754,
                            format!(
                                "Defaults cannot be created on columns with an IDENTITY \
                                 attribute. Table '{shown}', column '{}'.",
                                new.columns[c].name
                            ),
                        ));
                    }
                    sequential_guid::check_default(
                        value,
                        new.columns[c].ty == SqlType::UniqueIdentifier,
                    )?;
                    new.columns[c].default = Some(crate::exec::ddl::table::default_text(value));
                }
            }
        }
        let checks: Vec<(String, Arc<Expr>)> = if nocheck {
            Vec::new()
        } else {
            added_checks
                .iter()
                .map(|c| Ok((c.name.clone(), self.stored_expr(&c.text)?)))
                .collect::<Result<_, SqlError>>()?
        };
        if fills.is_empty() {
            self.check_existing_rows(t, &checks)?;
            let db = Arc::clone(&t.db);
            self.tx().alter_table_metadata(&db, &t.def, new).map_err(|e| self.s.engine_error(e))?;
            self.add_keys(t, shown, keys, line)?;
            return self.add_altered_foreign_keys(t, &fks, nocheck, line);
        }
        let first_added = t.def.columns.len();
        let table_name = shown.to_string();
        let def = new.clone();
        self.rebuild(t, new, &checks, |run, mut row| {
            for (i, fill) in fills.iter().enumerate() {
                let c = first_added + i;
                let v = match fill {
                    Fill::Null => Value::Null,
                    Fill::Default(e) => {
                        let v = run.default_value(e)?;
                        run.store(&def, c, v)?
                    }
                    Fill::EmptyTableOnly => {
                        return Err(SqlError::new(
                            4901,
                            format!(
                                "ALTER TABLE only allows columns to be added that can contain \
                                 nulls, or have a DEFAULT definition specified, or the column \
                                 being added is an identity or timestamp column, or \
                                 alternatively if none of the previous conditions are \
                                 satisfied the table must be empty to allow addition of this \
                                 column. Column '{}' cannot be added to non-empty table '{}' \
                                 because it does not satisfy these conditions.",
                                def.columns[c].name, table_name
                            ),
                        ))
                    }
                    Fill::Computed => Value::Null,
                    Fill::RowVersion => run.next_rowversion(&t.db)?,
                };
                row.push(v);
            }
            if fills.iter().any(|f| matches!(f, Fill::Computed)) {
                run.compute_columns(&def, &mut row)?;
            }
            Ok(row)
        })?;
        self.add_keys(t, shown, keys, line)?;
        self.add_altered_foreign_keys(t, &fks, nocheck, line)
    }

    /// The FOREIGN KEYs of an `ALTER TABLE ... ADD`, added to the table as the statement's
    /// other changes left it. A refused definition is its error then 1750; rows that break
    /// the new key are error 547 alone, as in SQL Server.
    fn add_altered_foreign_keys(
        &mut self,
        t: &TableRef,
        fks: &[ForeignKeySpec],
        nocheck: bool,
        line: u32,
    ) -> Result<(), SqlError> {
        if fks.is_empty() {
            return Ok(());
        }
        let def = match t.db.object_by_id(t.def.id).as_deref() {
            Some(Object::Table(def)) => Arc::clone(def),
            _ => return Err(cannot_find(&t.def.name)),
        };
        let now = TableRef {
            db: Arc::clone(&t.db),
            def,
            qual: t.qual.clone(),
            view_check: None,
            wanted: None,
        };
        match self.add_foreign_keys(&now, fks, nocheck) {
            Err(e) if e.number != 547 => Err(self.constraint_failed(e, line)),
            other => other,
        }
    }

    /// Adds PRIMARY KEY and UNIQUE constraints to `t` (as it is after the statement's other
    /// changes), each by building its index: clustered on a heap for a primary key unless
    /// it says NONCLUSTERED, nonclustered otherwise. Failures are SQL Server's error
    /// followed by 1750.
    fn add_keys(
        &mut self,
        t: &TableRef,
        shown: &str,
        keys: Vec<KeyConstraint>,
        line: u32,
    ) -> Result<(), SqlError> {
        let db = Arc::clone(&t.db);
        for key in keys {
            let def = match db.catalog().get(t.def.id).as_deref() {
                Some(Object::Table(def)) => Arc::clone(def),
                _ => return Err(cannot_find(shown)),
            };
            let spec = match self.key_spec(&def, shown, &key) {
                Ok(spec) => spec,
                Err(e) => return Err(self.constraint_failed(e, line)),
            };
            let built = if spec.clustered {
                self.tx().create_clustered_index(&db, &def, &spec)
            } else {
                self.tx().create_index(&db, &def, &spec)
            };
            if let Err(e) = built {
                let e = self.s.engine_error(e);
                return Err(if e.number == 1505 { self.constraint_failed(e, line) } else { e });
            }
        }
        Ok(())
    }

    /// Error 1750 after `cause`.
    pub(crate) fn constraint_failed(&mut self, cause: SqlError, line: u32) -> SqlError {
        self.report_all(vec![cause], line);
        SqlError::new(1750, "Could not create constraint or index. See previous errors.")
    }

    /// The index of a PRIMARY KEY or UNIQUE constraint on `def`, or the error that refuses
    /// it (1911, 8111, 1779, 1902, 2714).
    fn key_spec(
        &mut self,
        def: &TableDef,
        shown: &str,
        key: &KeyConstraint,
    ) -> Result<IndexSpec, SqlError> {
        let mut columns = Vec::with_capacity(key.columns.len());
        for c in &key.columns {
            let at = def.column(&c.value).ok_or_else(|| {
                SqlError::new(
                    1911,
                    format!(
                        "Column name '{}' does not exist in the target table or view.",
                        c.value
                    ),
                )
            })?;
            if key.primary_key && def.columns[at].nullable {
                return Err(SqlError::new(
                    8111,
                    format!(
                        "Cannot define PRIMARY KEY constraint on nullable column in table \
                         '{shown}'."
                    ),
                ));
            }
            columns.push(at);
        }
        if key.primary_key && def.indexes.iter().any(|i| i.primary_key) {
            return Err(SqlError::new(
                1779,
                format!("Table '{shown}' already has a primary key defined on it."),
            ));
        }
        let primary = def.indexes.iter().find(|i| i.id == 1);
        let heap = primary.is_none_or(IndexDef::is_heap);
        let clustered = match key.clustering {
            Some(Clustering::Clustered) => true,
            Some(Clustering::Nonclustered) => false,
            None => key.primary_key && heap,
        };
        if clustered && !heap {
            let existing = primary.map_or("", |i| i.name.as_str());
            return Err(SqlError::new(
                1902,
                format!(
                    "Cannot create more than one clustered index on table '{shown}'. Drop the \
                     existing clustered index '{existing}' before creating another."
                ),
            ));
        }
        let taken = |n: &str| {
            def.checks.iter().any(|c| c.name.eq_ignore_ascii_case(n))
                || def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
        };
        let name = match &key.name {
            Some(name) if taken(&name.value) => {
                return Err(SqlError::new(
                    2714,
                    format!("There is already an object named '{}' in the database.", name.value),
                ))
            }
            Some(name) => name.value.clone(),
            None => {
                let prefix = if key.primary_key { "PK" } else { "UQ" };
                let db = self.s.db.name().to_string();
                let mut seq = def.indexes.len() as u64 + def.checks.len() as u64 + 1;
                let mut name = generated_name(prefix, &db, &def.name, seq);
                while taken(&name) {
                    seq += 1;
                    name = generated_name(prefix, &db, &def.name, seq);
                }
                name
            }
        };
        crate::exec::ddl::check_key_types(&def.name, &def.columns, &columns)?;
        Ok(IndexSpec {
            name,
            columns,
            unique: true,
            clustered,
            primary_key: key.primary_key,
            unique_constraint: !key.primary_key,
            ignore_dup_key: key.ignore_dup_key,
        })
    }
}
