//! `ALTER TABLE` and `sp_rename`.
//!
//! A change of columns (`ADD` column, `DROP COLUMN`, `ALTER COLUMN`) rebuilds the table in the
//! statement's transaction through the engine's [`TableRebuild`]: each existing row is read,
//! converted here (defaults evaluated, values converted with the rules of an assignment, new
//! CHECK constraints tested) and stored in the new shape. A failure anywhere fails the
//! statement, whose rollback leaves the old table as it was. Constraint changes and renames
//! touch only the catalog entry.
//!
//! An added PRIMARY KEY or UNIQUE constraint builds its index as `CREATE INDEX` does (a
//! clustered primary key on a heap rebuilds the table in key order); dropping one rebuilds
//! the table without it (a heap, for the clustered index).
//!
//! Limits: a PRIMARY KEY or UNIQUE constraint declared on a column added by the same `ADD`
//! is refused (declare it as a table constraint in a second `ALTER TABLE`); a DEFAULT's name
//! is the one `sys.default_constraints` generates, not one given in `ADD CONSTRAINT name
//! DEFAULT`.

use std::ops::Bound;
use std::sync::Arc;

use walden_engine::alter::TableRebuild;
use walden_engine::catalog::{CheckDef, ColumnDef, IndexDef, Object, TableDef};
use walden_engine::lock::{LockMode, Resource};
use walden_engine::objects::IndexSpec;
use walden_engine::types::{Len, SqlType, Value};

use crate::ast::{
    AlterAdd, AlterDrop, AlterTable, AlterTableAction, Clustering, ColumnConstraintKind,
    ColumnOption, DataType, ExecProcedure, Expr, Ident, ObjectName, TableConstraintKind,
    TableElement,
};
use crate::exec::ddl::{check_identity_type, generated_name, TableParts};
use crate::exec::dml::foreign_key::ForeignKeySpec;
use crate::exec::execute::query::{display_name, table_cols, TableRef};
use crate::exec::scalar;
use crate::exec::scalar::sequential_guid;
use crate::exec::session::Run;
use crate::exec::sysviews::default_constraint_name;
use crate::exec::SqlError;
use crate::lexer::{tokenize, Token, TokenKind};

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

/// Error 4902 for an `ALTER TABLE` of a table that does not exist.
fn cannot_find(name: &str) -> SqlError {
    SqlError::new(
        4902,
        format!(
            "Cannot find the object \"{name}\" because it does not exist or you do not have \
             permissions."
        ),
    )
}

/// Error 4924 for a column the table does not have (`verb`: `DROP COLUMN`, `ALTER COLUMN`).
fn no_such_column(verb: &str, column: &str, table: &str) -> SqlError {
    SqlError::new(
        4924,
        format!(
            "ALTER TABLE {verb} failed because column '{column}' does not exist in table \
             '{table}'."
        ),
    )
}

/// The error for what Walden's `ALTER TABLE` does not do.
fn unsupported(what: &str) -> SqlError {
    SqlError::new(50000, format!("ALTER TABLE {what} is not supported by Walden."))
}

/// Whether token `at` of `tokens` names column `column`: a word or delimited identifier
/// of that name that is not a function's (followed by `(`: `YEAR(d)` does not name a
/// column `year`).
fn is_column(tokens: &[Token<'_>], at: usize, column: &str) -> bool {
    let named = match &tokens[at].kind {
        TokenKind::Word => tokens[at].text.eq_ignore_ascii_case(column),
        TokenKind::QuotedIdent(name) => name.eq_ignore_ascii_case(column),
        _ => false,
    };
    named && tokens.get(at + 1).is_none_or(|next| next.kind != TokenKind::LParen)
}

/// Whether the SQL text `text` (a CHECK constraint) names column `column`.
pub(crate) fn names_column(text: &str, column: &str) -> bool {
    tokenize(text).is_ok_and(|tokens| (0..tokens.len()).any(|at| is_column(&tokens, at, column)))
}

/// `text` with every mention of column `old` renamed to `new` (bracketed), so that a CHECK
/// constraint keeps meaning the same column after `sp_rename`. Text that does not lex is
/// returned as it is.
fn rename_in_text(text: &str, old: &str, new: &str) -> String {
    let Ok(tokens) = tokenize(text) else { return text.to_string() };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (i, t) in tokens.iter().enumerate() {
        if is_column(&tokens, i, old) {
            out.push_str(&text[at..t.span.start]);
            out.push_str(&format!("[{}]", new.replace(']', "]]")));
            at = t.span.end;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// Whether a change of a column from `old` to `new` only lengthens a variable-length type:
/// the one change SQL Server allows on a column an index or CHECK constraint depends on.
fn only_widens(old: SqlType, new: SqlType) -> bool {
    let wider = |a: Len, b: Len| match (a, b) {
        (_, Len::Max) => true,
        (Len::N(a), Len::N(b)) => b >= a,
        (Len::Max, Len::N(_)) => false,
    };
    match (old, new) {
        (SqlType::VarChar(a), SqlType::VarChar(b))
        | (SqlType::NVarChar(a), SqlType::NVarChar(b))
        | (SqlType::VarBinary(a), SqlType::VarBinary(b)) => wider(a, b),
        _ => false,
    }
}

/// The objects of `def` that depend on column `c`, as error 5074 names them.
/// What `ALTER COLUMN` changes a column to.
struct ColumnChange<'a> {
    data_type: &'a DataType,
    nullable: Option<bool>,
    /// `COLLATE name`; without it the column takes the default collation.
    collation: &'a Option<Ident>,
}

fn dependents(def: &TableDef, c: usize) -> Vec<SqlError> {
    let column = &def.columns[c].name;
    let mut found = Vec::new();
    let mut indexes: Vec<&IndexDef> =
        def.indexes.iter().filter(|i| i.columns.contains(&c)).collect();
    indexes.sort_by_key(|i| i.id);
    for index in indexes {
        let kind = if index.primary_key || index.unique_constraint { "object" } else { "index" };
        found.push(SqlError::new(
            5074,
            format!("The {kind} '{}' is dependent on column '{column}'.", index.name),
        ));
    }
    if def.columns[c].default.is_some() {
        let name = default_constraint_name(def, c);
        found.push(SqlError::new(
            5074,
            format!("The object '{name}' is dependent on column '{column}'."),
        ));
    }
    for check in def.checks.iter().filter(|k| names_column(&k.text, column)) {
        found.push(SqlError::new(
            5074,
            format!("The object '{}' is dependent on column '{column}'.", check.name),
        ));
    }
    for other in def.columns.iter().filter(|o| {
        o.computed.as_ref().is_some_and(|k| o.name != *column && names_column(&k.text, column))
    }) {
        found.push(SqlError::new(
            5074,
            format!("The column '{}' is dependent on column '{column}'.", other.name),
        ));
    }
    for fk in def.foreign_keys.iter().filter(|fk| fk.columns.contains(&c)) {
        found.push(SqlError::new(
            5074,
            format!("The object '{}' is dependent on column '{column}'.", fk.name),
        ));
    }
    found
}

impl Run<'_> {
    /// `ALTER TABLE`, the statement at `line`.
    pub(crate) fn alter_table(&mut self, a: &AlterTable, line: u32) -> Result<(), SqlError> {
        let shown = a.table.name.value.clone();
        let t = self
            .resolve_table(&a.table, &shown)
            .map_err(|_| cannot_find(&display_name(&a.table)))?;
        // The definition the change starts from must be the one in force under the table's X
        // lock: resolved again once the lock is held.
        let object = Resource::Object { db: t.db.id(), object: t.def.id };
        self.tx().lock(&object, LockMode::X).map_err(|e| self.s.engine_error(e))?;
        let t = self
            .resolve_table(&a.table, &shown)
            .map_err(|_| cannot_find(&display_name(&a.table)))?;
        match &a.action {
            AlterTableAction::Add { nocheck, items } => {
                self.alter_add(&t, &shown, *nocheck, items, line)
            }
            AlterTableAction::AlterColumn { column, data_type, nullable, collation } => {
                let change = ColumnChange { data_type, nullable: *nullable, collation };
                self.alter_column(&t, &shown, column, change, line)
            }
            AlterTableAction::Drop(items) => self.alter_drop(&t, &shown, items, line),
            AlterTableAction::CheckConstraints { with_check, enable, names } => {
                self.toggle_constraints(&t, *with_check, *enable, names.as_deref())
            }
        }
    }

    /// `{CHECK | NOCHECK} CONSTRAINT {ALL | name, ...}`: enables or disables FOREIGN KEY
    /// constraints; `WITH CHECK` checks the existing rows against those it enables. CHECK
    /// constraints are always enforced: naming one is refused rather than ignored, and ALL
    /// leaves them on.
    fn toggle_constraints(
        &mut self,
        t: &TableRef,
        with_check: bool,
        enable: bool,
        names: Option<&[Ident]>,
    ) -> Result<(), SqlError> {
        let mut new = TableDef::clone(&t.def);
        let mut chosen = Vec::new();
        match names {
            None => chosen.extend(0..new.foreign_keys.len()),
            Some(names) => {
                for name in names {
                    let name = &name.value;
                    if let Some(k) =
                        new.foreign_keys.iter().position(|f| f.name.eq_ignore_ascii_case(name))
                    {
                        chosen.push(k);
                    } else if new.checks.iter().any(|c| c.name.eq_ignore_ascii_case(name)) {
                        return Err(unsupported("NOCHECK of a CHECK constraint"));
                    } else {
                        return Err(SqlError::new(
                            4917,
                            format!("Constraint '{name}' does not exist."),
                        ));
                    }
                }
            }
        }
        for &k in &chosen {
            new.foreign_keys[k].disabled = !enable;
        }
        let db = Arc::clone(&t.db);
        self.tx()
            .alter_table_metadata(&db, &t.def, new.clone())
            .map_err(|e| self.s.engine_error(e))?;
        if enable && with_check {
            let fks: Vec<_> = chosen.iter().map(|&k| new.foreign_keys[k].clone()).collect();
            let now = TableRef {
                db,
                def: Arc::new(new),
                qual: t.qual.clone(),
                view_check: None,
                wanted: None,
            };
            self.check_table_keys(&now, &fks)?;
        }
        Ok(())
    }

    /// Sends errors that precede the one a statement at `line` fails with (5074 before
    /// 4922, 1781 before 1750), as SQL Server sends several for one failure.
    fn report_all(&mut self, errors: Vec<SqlError>, line: u32) {
        for e in errors {
            self.report(e.at_line(line));
        }
    }

    /// Rebuilds `t` as `new`: every row through `convert`, then the CHECK constraints
    /// `checks`, then into the new trees.
    fn rebuild(
        &mut self,
        t: &TableRef,
        new: TableDef,
        checks: &[(String, Arc<Expr>)],
        mut convert: impl FnMut(&mut Self, Vec<Value>) -> Result<Vec<Value>, SqlError>,
    ) -> Result<(), SqlError> {
        let db = Arc::clone(&t.db);
        let mut rebuild: TableRebuild =
            self.tx().begin_rebuild(&db, &t.def, new).map_err(|e| self.s.engine_error(e))?;
        let def = rebuild.def().clone();
        let cols = if checks.is_empty() { Vec::new() } else { table_cols(&def, &def.name) };
        let mut cursor = self
            .tx()
            .scan_table(&db, &t.def, Bound::Unbounded, Bound::Unbounded)
            .map_err(|e| self.s.engine_error(e))?;
        while let Some((row_id, values)) =
            cursor.next_row(self.tx()).map_err(|e| self.s.engine_error(e))?
        {
            let values = convert(self, values)?;
            self.check_row(&def, &cols, checks, &values, "ALTER TABLE")?;
            rebuild.insert(self.tx(), &row_id, values).map_err(|e| self.s.engine_error(e))?;
        }
        rebuild.finish(self.tx()).map_err(|e| self.s.engine_error(e))?;
        Ok(())
    }

    /// Tests `checks` on every row of `t` (error 547), for constraints added without a
    /// change of columns.
    fn check_existing_rows(
        &mut self,
        t: &TableRef,
        checks: &[(String, Arc<Expr>)],
    ) -> Result<(), SqlError> {
        let db = Arc::clone(&t.db);
        let cols = table_cols(&t.def, &t.def.name);
        self.for_each_row(&db, &t.def, |run, _, values| {
            run.check_row(&t.def, &cols, checks, &values, "ALTER TABLE")
        })
    }

    /// A constraint name not yet taken in `def`: `name` as written (error 2714 and 1750 when
    /// taken), or a generated `CK__` name.
    fn check_name(
        &mut self,
        def: &TableDef,
        written: Option<&Ident>,
        generated: &str,
        line: u32,
    ) -> Result<String, SqlError> {
        let taken = |n: &str| {
            def.checks.iter().any(|c| c.name.eq_ignore_ascii_case(n))
                || def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
        };
        if let Some(name) = written {
            if taken(&name.value) {
                let taken =
                    format!("There is already an object named '{}' in the database.", name.value);
                self.report_all(vec![SqlError::new(2714, taken)], line);
                return Err(SqlError::new(
                    1750,
                    "Could not create constraint or index. See previous errors.",
                ));
            }
            return Ok(name.value.clone());
        }
        let db = self.s.db.name().to_string();
        let mut name = generated.to_string();
        let mut seq = def.checks.len() as u64 + 1;
        while taken(&name) {
            seq += 1;
            name = generated_name("CK", &db, &def.name, seq);
        }
        Ok(name)
    }

    /// `ALTER TABLE ... ADD`: columns, CHECK constraints and DEFAULTs.
    fn alter_add(
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
                    new.columns[c].default = Some(value.to_string());
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

    /// `ALTER TABLE ... ALTER COLUMN`: a new type and nullability; existing values are
    /// converted as by an assignment.
    fn alter_column(
        &mut self,
        t: &TableRef,
        shown: &str,
        column: &Ident,
        change: ColumnChange<'_>,
        line: u32,
    ) -> Result<(), SqlError> {
        let ColumnChange { data_type, nullable, collation } = change;
        let Some(c) = t.def.column(&column.value) else {
            return Err(no_such_column("ALTER COLUMN", &column.value, shown));
        };
        let ty = self.resolve_type(data_type)?;
        // Without COLLATE a text column takes the database's default, as in SQL Server.
        let collation = match collation {
            Some(name) => crate::exec::ddl::column_collation(&name.value, ty)?,
            None => None,
        };
        let old = &t.def.columns[c];
        // Index keys (and what CHECK constraints and computed columns compare) follow the
        // collation: SQL Server refuses the change while they depend on the column.
        let collation_changed = ty.is_text()
            && old.ty.is_text()
            && !collation
                .as_deref()
                .unwrap_or_default()
                .eq_ignore_ascii_case(old.collation.as_deref().unwrap_or_default());
        if old.computed.is_some() {
            return Err(SqlError::new(
                4928,
                format!("Cannot alter column '{}' because it is 'COMPUTED'.", old.name),
            ));
        }
        let identity = old.identity.is_some();
        if identity {
            check_identity_type(ty, &old.name)?;
        }
        // Without NULL or NOT NULL the session's ANSI_NULL_DFLT_ON / _OFF decide, as in SQL
        // Server; an identity column stays NOT NULL.
        let nullable = !identity && nullable.unwrap_or(self.s.opts.semantics.new_column_nullable());
        let in_primary_key = t.def.indexes.iter().any(|i| i.primary_key && i.columns.contains(&c));
        let mut depended = dependents(&t.def, c);
        depended.extend(self.statistics_on_column(&t.db, &t.def, c));
        let default_only = depended.len() == 1 && old.default.is_some();
        let allowed = depended.is_empty()
            || default_only
            || (!in_primary_key
                && !collation_changed
                && nullable == old.nullable
                && only_widens(old.ty, ty));
        if !allowed {
            let name = old.name.clone();
            self.report_all(depended, line);
            return Err(SqlError::new(
                4922,
                format!(
                    "ALTER TABLE ALTER COLUMN {name} failed because one or more objects access \
                     this column."
                ),
            ));
        }
        let mut new = TableDef::clone(&t.def);
        let declared = crate::exec::ddl::user_types::declared_as(data_type);
        new.columns[c] = ColumnDef { ty, nullable, collation, declared, ..old.clone() };
        let def = new.clone();
        let table = format!("{}.{}.{}", self.s.db.name(), t.def.schema, shown);
        self.rebuild(t, new, &[], |run, mut row| {
            let v = std::mem::replace(&mut row[c], Value::Null);
            let v = if v.is_null() { v } else { run.store(&def, c, v)? };
            if v.is_null() && !nullable {
                return Err(SqlError::new(
                    515,
                    format!(
                        "Cannot insert the value NULL into column '{}', table '{table}'; column \
                         does not allow nulls. UPDATE fails.",
                        def.columns[c].name
                    ),
                ));
            }
            row[c] = v;
            Ok(row)
        })
    }

    /// `ALTER TABLE ... DROP`: columns and PRIMARY KEY or UNIQUE constraints (rebuilding the
    /// table), CHECK and DEFAULT constraints (in the catalog only).
    fn alter_drop(
        &mut self,
        t: &TableRef,
        shown: &str,
        items: &[AlterDrop],
        line: u32,
    ) -> Result<(), SqlError> {
        let mut new = TableDef::clone(&t.def);
        let mut dropped: Vec<String> = Vec::new();
        let mut indexes_changed = false;
        for item in items.iter().filter(|i| !i.column) {
            let name = &item.name.value;
            if let Some(k) = new.checks.iter().position(|c| c.name.eq_ignore_ascii_case(name)) {
                new.checks.remove(k);
            } else if let Some(k) =
                new.foreign_keys.iter().position(|f| f.name.eq_ignore_ascii_case(name))
            {
                new.foreign_keys.remove(k);
            } else if let Some(c) = (0..new.columns.len()).find(|&c| {
                new.columns[c].default.is_some()
                    && default_constraint_name(&t.def, c).eq_ignore_ascii_case(name)
            }) {
                new.columns[c].default = None;
            } else if let Some(k) = new.indexes.iter().position(|i| {
                (i.primary_key || i.unique_constraint) && i.name.eq_ignore_ascii_case(name)
            }) {
                let index_id = new.indexes[k].id;
                let referencing = t.db.referencing(t.def.id).into_iter().find_map(|other| {
                    let fk = other.foreign_keys.iter().find(|fk| {
                        fk.ref_table == t.def.id && fk.ref_index == index_id && other.id != t.def.id
                    })?;
                    Some((other.name.clone(), fk.name.clone()))
                });
                if let Some((table, fk)) = referencing {
                    let cause = SqlError::new(
                        3725,
                        format!("The constraint '{}' is being referenced by table '{table}', foreign key constraint '{fk}'.", new.indexes[k].name),
                    );
                    self.report_all(vec![cause], line);
                    return Err(SqlError::new(
                        3727,
                        "Could not drop constraint. See previous errors.",
                    ));
                }
                // The index goes with its constraint; without its clustered index the table
                // becomes a heap (the rebuild below gives the rows locators).
                if new.indexes[k].id == 1 {
                    new.indexes[k] = IndexDef::heap(new.indexes[k].root);
                } else {
                    new.indexes.remove(k);
                }
                indexes_changed = true;
            } else if !item.if_exists {
                let missing = SqlError::new(3728, format!("'{name}' is not a constraint."));
                self.report_all(vec![missing], line);
                return Err(SqlError::new(3727, "Could not drop constraint. See previous errors."));
            }
        }
        for item in items.iter().filter(|i| i.column) {
            let name = &item.name.value;
            let Some(c) = new.column(name) else {
                if item.if_exists {
                    continue;
                }
                return Err(no_such_column("DROP COLUMN", name, shown));
            };
            let mut depended = dependents(&new, c);
            // Statistics name the columns' positions before this statement.
            let before = t.def.column(name).unwrap_or(c);
            depended.extend(self.statistics_on_column(&t.db, &t.def, before));
            if !depended.is_empty() {
                let column = new.columns[c].name.clone();
                self.report_all(depended, line);
                return Err(SqlError::new(
                    4922,
                    format!(
                        "ALTER TABLE DROP COLUMN {column} failed because one or more objects \
                         access this column."
                    ),
                ));
            }
            if new.columns.len() == 1 {
                return Err(SqlError::new(
                    4923,
                    format!(
                        "ALTER TABLE DROP COLUMN failed because '{}' is the only data column in \
                         table '{shown}'. A table must have at least one data column.",
                        new.columns[c].name
                    ),
                ));
            }
            dropped.push(new.columns[c].name.clone());
            new.columns.remove(c);
            let key_columns = new.indexes.iter_mut().map(|i| &mut i.columns);
            for columns in key_columns.chain(new.foreign_keys.iter_mut().map(|f| &mut f.columns)) {
                for k in columns {
                    if *k > c {
                        *k -= 1;
                    }
                }
            }
        }
        let db = Arc::clone(&t.db);
        self.statistics_indexes_dropped(&db, &t.def, &new)?;
        if dropped.is_empty() && !indexes_changed {
            self.tx().alter_table_metadata(&db, &t.def, new).map_err(|e| self.s.engine_error(e))?;
            return Ok(());
        }
        // The old row's values, less the dropped columns, in order.
        let keep: Vec<bool> = t
            .def
            .columns
            .iter()
            .map(|col| !dropped.iter().any(|d| d.eq_ignore_ascii_case(&col.name)))
            .collect();
        self.rebuild(t, new, &[], |_, row| {
            Ok(row.into_iter().zip(&keep).filter(|(_, k)| **k).map(|(v, _)| v).collect())
        })?;
        let gone: Vec<u32> = (1..).zip(&keep).filter(|(_, k)| !**k).map(|(c, _)| c).collect();
        let positions: Vec<usize> = gone.iter().map(|&c| c as usize - 1).collect();
        self.statistics_columns_dropped(&db, t.def.id, &positions)?;
        self.columns_dropped(&db, t.def.id, &gone)
    }

    /// `sp_rename 'object', 'new name' [, 'OBJECT' | 'COLUMN' | 'INDEX']`, which raises the
    /// RENAME event for the database's DDL triggers.
    pub(crate) fn sp_rename(&mut self, p: &ExecProcedure) -> crate::exec::session::Step<()> {
        let args =
            self.procedure_arguments("sp_rename", p, &["@objname", "@newname", "@objtype"])?;
        let text = |i: usize| args[i].as_ref().map(scalar::to_text);
        let missing = |param: &str| {
            SqlError::new(
                201,
                format!(
                    "Procedure or function 'sp_rename' expects parameter '{param}', which was \
                     not supplied."
                ),
            )
        };
        let objname = text(0).ok_or_else(|| missing("@objname"))?;
        let newname = text(1).ok_or_else(|| missing("@newname"))?;
        let objtype = text(2).map(|t| t.to_ascii_uppercase());
        let ambiguous = || {
            SqlError::with_severity(
                15248,
                11,
                format!(
                    "Either the parameter @objname is ambiguous or the claimed @objtype ({}) is \
                     wrong.",
                    objtype.as_deref().unwrap_or("(null)")
                ),
            )
        };
        let in_use = |kind: &str| {
            SqlError::with_severity(
                15335,
                11,
                format!(
                    "Error: The new name '{newname}' is already in use as a {kind} name and \
                     would cause a duplicate that is not permitted."
                ),
            )
        };
        let parts = name_parts(&objname).ok_or_else(ambiguous)?;
        let db = Arc::clone(&self.s.db);
        let table_of = |parts: &[String]| -> Option<Arc<TableDef>> {
            let (schema, table) = match parts {
                [table] => ("dbo", table.as_str()),
                [schema, table] => (schema.as_str(), table.as_str()),
                _ => return None,
            };
            match db.find_object(schema, table).as_deref() {
                Some(Object::Table(t)) => Some(Arc::clone(t)),
                _ => None,
            }
        };
        // What RENAME's EVENTDATA() says: ObjectType, SchemaName, ObjectName and the table of
        // a column or index.
        let renamed: (&'static str, String, String, Option<(String, &'static str)>);
        match objtype.as_deref() {
            None | Some("OBJECT") => {
                let (schema, name) = match parts.as_slice() {
                    [name] => ("dbo", name.as_str()),
                    [schema, name] => (schema.as_str(), name.as_str()),
                    _ => return Err(ambiguous().into()),
                };
                let object = db.find_object(schema, name).ok_or_else(ambiguous)?;
                if db.find_object(schema, &newname).is_some_and(|o| o.id() != object.id()) {
                    return Err(in_use("object").into());
                }
                self.tx()
                    .rename_object(&db, object.id(), &newname)
                    .map_err(|e| self.s.engine_error(e))?;
                let object_type = match *object {
                    Object::Table(_) => "TABLE",
                    Object::View(_) => "VIEW",
                    Object::Procedure(_) => "PROCEDURE",
                    Object::Function(_) => "FUNCTION",
                    Object::Trigger(_) => "TRIGGER",
                    Object::Sequence(_) => "SEQUENCE",
                    Object::Type(_) => "TYPE",
                    Object::Schema(_) | Object::Properties(_) => "OBJECT",
                };
                renamed = (object_type, schema.to_string(), name.to_string(), None);
            }
            Some("COLUMN") => {
                let (column, table) = parts.split_last().ok_or_else(ambiguous)?;
                let t = table_of(table).ok_or_else(ambiguous)?;
                let c = t.column(column).ok_or_else(ambiguous)?;
                if t.column(&newname).is_some_and(|other| other != c) {
                    return Err(in_use("COLUMN").into());
                }
                let mut new = TableDef::clone(&t);
                let old = std::mem::replace(&mut new.columns[c].name, newname.clone());
                for check in &mut new.checks {
                    check.text = rename_in_text(&check.text, &old, &newname);
                }
                self.tx().alter_table_metadata(&db, &t, new).map_err(|e| self.s.engine_error(e))?;
                renamed = ("COLUMN", t.schema.clone(), old, Some((t.name.clone(), "TABLE")));
            }
            Some("INDEX") => {
                let (index, table) = parts.split_last().ok_or_else(ambiguous)?;
                let t = table_of(table).ok_or_else(ambiguous)?;
                let at = t
                    .indexes
                    .iter()
                    .position(|i| !i.is_heap() && i.name.eq_ignore_ascii_case(index))
                    .ok_or_else(ambiguous)?;
                if t.indexes
                    .iter()
                    .enumerate()
                    .any(|(k, i)| k != at && i.name.eq_ignore_ascii_case(&newname))
                {
                    return Err(in_use("INDEX").into());
                }
                let mut new = TableDef::clone(&t);
                let old = std::mem::replace(&mut new.indexes[at].name, newname.clone());
                self.tx().alter_table_metadata(&db, &t, new).map_err(|e| self.s.engine_error(e))?;
                renamed = ("INDEX", t.schema.clone(), old, Some((t.name.clone(), "TABLE")));
            }
            Some(other) => {
                return Err(SqlError::with_severity(
                    15249,
                    11,
                    format!("Error: Explicit @objtype '{other}' is unrecognized."),
                )
                .into())
            }
        }
        self.report(SqlError::with_severity(
            15477,
            10,
            "Caution: Changing any part of an object name could break scripts and stored \
             procedures.",
        ));
        let (object_type, schema, object, target) = renamed;
        let command = crate::ast::Execute::Procedure(p.clone()).to_string();
        self.rename_event(&db, object_type, &schema, &object, target, &newname, command)
    }
}

/// The parts of a dotted name as `sp_rename` takes it (`dbo.t.c`, `[my table].c`); `None`
/// for text that is not such a name.
fn name_parts(text: &str) -> Option<Vec<String>> {
    let tokens = tokenize(text).ok()?;
    let mut parts = Vec::new();
    let mut want_name = true;
    for t in &tokens {
        match (&t.kind, want_name) {
            (TokenKind::Word, true) => parts.push(t.text.to_string()),
            (TokenKind::QuotedIdent(name), true) => parts.push(name.clone()),
            (TokenKind::Dot, false) => {}
            (TokenKind::Eof, false) => return Some(parts),
            _ => return None,
        }
        want_name = !want_name;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_texts_find_and_rename_their_columns() {
        assert!(names_column("([qty] >= 0 AND b < 1)", "QTY"));
        assert!(!names_column("'qty' <> name", "qty"));
        assert_eq!(
            rename_in_text("qty >= 0 AND [qty] < t.qty2", "qty", "n]"),
            "[n]]] >= 0 AND [n]]] < t.qty2"
        );
        assert_eq!(rename_in_text("'unterminated", "a", "b"), "'unterminated");
    }

    #[test]
    fn sp_rename_names_split_into_parts() {
        assert_eq!(name_parts("dbo.t").unwrap(), ["dbo", "t"]);
        assert_eq!(name_parts("[my table].[a.b]").unwrap(), ["my table", "a.b"]);
        assert!(name_parts("t.").is_none());
        assert!(name_parts("t..c").is_none());
        assert!(name_parts("").is_none());
    }

    #[test]
    fn only_a_longer_variable_length_type_is_a_widening() {
        let vc = |n| SqlType::VarChar(Len::N(n));
        assert!(only_widens(vc(10), vc(20)));
        assert!(only_widens(vc(10), SqlType::VarChar(Len::Max)));
        assert!(!only_widens(vc(20), vc(10)));
        assert!(!only_widens(vc(10), SqlType::NVarChar(Len::N(20))));
        assert!(!only_widens(SqlType::Int, SqlType::BigInt));
    }
}
